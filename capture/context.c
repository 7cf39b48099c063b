/* SPDX-License-Identifier: MIT */
/*
 * context.c: a crumbs context: its creation from the program's Vulkan
 * handles, in the order its parts need (functions, devices, queues and
 * their pools, calibration, the capture's store, submissions, output, the
 * trigger), and its destruction.
 */
#include "capture_internal.h"

#include <stdlib.h>
#include <string.h>

static enum crumbs_result create(const struct crumbs_desc *desc, crumbs_context *ctx)
{
	enum crumbs_result r;
	char name[64];

	ctx->log = desc->log;
	ctx->log_user = desc->log_user;
	ctx->mirror_labels = desc->mirror_labels < 0 ? 0 :
			     desc->mirror_labels > CRUMBS_DETAIL_MAX + 1 ? CRUMBS_DETAIL_MAX + 1 :
			     desc->mirror_labels;
	ctx->max_scopes = desc->max_scopes ? desc->max_scopes : 16384;
	ctx->max_submissions = desc->max_submissions ? desc->max_submissions : 128;
	ctx->max_command_buffers = desc->max_command_buffers ? desc->max_command_buffers : 4096;
	ctx->name_bytes = desc->name_bytes ? desc->name_bytes : 1u << 20;
	/* Pipeline statistics: CRUMBS_COUNTERS says whether runs count, but
	 * a program's "never" stands. */
	ctx->counters = desc->counters < 0 ? -1 : desc->counters > 0;
	const char *counters = getenv("CRUMBS_COUNTERS");
	if (counters && ctx->counters >= 0) {
		if (!strcmp(counters, "0") || !strcmp(counters, "1"))
			ctx->counters = counters[0] - '0';
		else if (*counters)
			ctx_log(ctx, CRUMBS_LOG_WARNING, "CRUMBS_COUNTERS is neither 0 nor 1: "
				"ignored");
	}
	enum crumbs_result pr = perfquery_init(ctx, desc->perf_counters);
	if (pr != CRUMBS_OK)
		return pr;
	ctx->capture_at = UINT64_MAX;
	ctx->frame_begin_ns = now_ns();
	if (ctx->max_scopes > (1u << 24) || ctx->max_submissions > 65536 ||
	    ctx->max_command_buffers > (1u << 20) || ctx->name_bytes > (1u << 30)) {
		ctx_log(ctx, CRUMBS_LOG_ERROR, "crumbs_desc limits are out of range");
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	}

	const char *dir = desc->capture_dir ? desc->capture_dir : getenv("CRUMBS_CAPTURE_DIR");
	default_program_name(name, sizeof(name));
	ctx->capture_dir = ctx_strdup(ctx, dir && *dir ? dir : ".");
	ctx->program_name = ctx_strdup(ctx, desc->program_name ? desc->program_name : name);
	if (!ctx->capture_dir || !ctx->program_name)
		return CRUMBS_ERROR_OUT_OF_MEMORY;

	/* The layer's were taken when the instance was created: asked now,
	 * the loader may answer with those of the layers above. A context
	 * of CPU threads alone has no instance to ask. */
	if (desc->instance) {
		r = functions_load_instance(ctx, ctx->set_loader_data ? NULL :
						 desc->get_instance_proc_addr, desc->instance);
		if (r != CRUMBS_OK)
			return r;
	}

	ctx->device_count = desc->device_count;
	ctx->devices = ctx_alloc(ctx, sizeof(*ctx->devices) * desc->device_count);
	if (!ctx->devices)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	bool any_labels = false;
	for (uint32_t i = 0; i < desc->device_count; i++) {
		struct device_state *d = &ctx->devices[i];
		d->physical = desc->devices[i].physical_device;
		d->device = desc->devices[i].device;
		d->features = desc->devices[i].features;
		ctx->ifn.GetPhysicalDeviceProperties(d->physical, &d->props);
		if ((r = functions_load_device(ctx, d)) != CRUMBS_OK)
			return r;
		d->calibrated = desc->calibration != CRUMBS_CALIBRATION_BRACKETED &&
				calibrate_supported(ctx, d);
		any_labels |= (d->features & CRUMBS_FEATURE_DEBUG_UTILS) != 0;
	}
	/* Under the crumbs layer, the layer records: every scope becomes a
	 * label for it, and it alone captures, so nothing is counted twice. */
	for (uint32_t i = 0; i < desc->device_count && !ctx->set_loader_data; i++)
		if (ctx->ifn.GetDeviceProcAddr(ctx->devices[i].device, "vkCrumbsLayerCRUMBS"))
			ctx->under_layer = true;
	if (ctx->under_layer && any_labels && ctx->ifn.CmdBeginDebugUtilsLabel) {
		ctx->mirror_labels = CRUMBS_DETAIL_MAX + 1;
		ctx_log(ctx, CRUMBS_LOG_INFO, "the crumbs layer records this program; "
			"libcrumbs hands it every scope as a label");
	} else if (ctx->under_layer) {
		ctx->mirror_labels = 0;
		ctx_log(ctx, CRUMBS_LOG_WARNING, "the crumbs layer records this program, but "
			"without VK_EXT_debug_utils it cannot see libcrumbs' scopes");
	}
	if (ctx->mirror_labels && (!any_labels || !ctx->ifn.CmdBeginDebugUtilsLabel)) {
		ctx_log(ctx, CRUMBS_LOG_WARNING, "labels need VK_EXT_debug_utils; not mirroring scopes");
		ctx->mirror_labels = 0;
	}

	ctx->queue_count = desc->queue_count;
	ctx->queues = ctx_alloc(ctx, sizeof(*ctx->queues) * desc->queue_count);
	if (!ctx->queues)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < desc->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		q->queue = desc->queues[i].queue;
		q->device = desc->queues[i].device;
		q->family = desc->queues[i].family;
		q->index = desc->queues[i].index;
		if (q->device >= ctx->device_count) {
			ctx_log(ctx, CRUMBS_LOG_ERROR, "queue %u names device %u of %u", i, q->device,
				ctx->device_count);
			return CRUMBS_ERROR_INVALID_ARGUMENT;
		}
		if ((r = pools_setup_queue(ctx, q)) != CRUMBS_OK)
			return r;
	}
	calibrate_bracketed(ctx);

	if ((r = store_init(ctx)) != CRUMBS_OK || (r = submit_init(ctx)) != CRUMBS_OK ||
	    (r = calibrate_init(ctx)) != CRUMBS_OK)
		return r;
	if (!memory_init(ctx) || !output_init(ctx))
		return CRUMBS_ERROR_OUT_OF_MEMORY;

	ctx->trigger.fd = -1;
	if (!desc->no_trigger && !ctx->under_layer) {
		char err[256];
		if (trigger_open(&ctx->trigger, err, sizeof(err)) != 0)
			ctx_log(ctx, CRUMBS_LOG_WARNING, "`crumbs trigger` will not reach this process: %s",
				err);
	}
	return CRUMBS_OK;
}

enum crumbs_result crumbs_create(const struct crumbs_desc *desc, crumbs_context **out)
{
	return crumbs_create_layered(desc, NULL, NULL, NULL, out);
}

enum crumbs_result crumbs_create_layered(const struct crumbs_desc *desc,
					 PFN_vkSetDeviceLoaderData set_loader_data,
					 PFN_vkGetDeviceProcAddr next_gdpa,
					 const struct instance_fns *next_ifn, crumbs_context **out)
{
	crumbs_context *ctx;
	enum crumbs_result r;

	if (!out)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	*out = NULL;
	/* With no instance, no devices: a context of CPU threads alone. */
	bool cpu_only = desc && !desc->instance && !desc->device_count && !desc->queue_count;
	if (!desc || (!cpu_only && (!desc->instance || !desc->get_instance_proc_addr ||
				    !desc->device_count || !desc->devices)) ||
	    (desc->queue_count && !desc->queues))
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (desc->allocator) {
		ctx = desc->allocator->pfnAllocation(desc->allocator->pUserData, sizeof(*ctx), 16,
						     VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
		if (ctx) {
			memset(ctx, 0, sizeof(*ctx));
			ctx->allocator = *desc->allocator;
			ctx->has_allocator = true;
		}
	} else {
		ctx = calloc(1, sizeof(*ctx));
	}
	if (!ctx)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	cpu_init(ctx);
	present_init(ctx);
	ctx->trigger.fd = -1;
	ctx->set_loader_data = set_loader_data;
	if (next_ifn)
		ctx->ifn = *next_ifn;
	ctx->ifn.GetDeviceProcAddr = next_gdpa;
	if ((r = create(desc, ctx)) != CRUMBS_OK) {
		if (r == CRUMBS_ERROR_OUT_OF_MEMORY)
			ctx_log(ctx, CRUMBS_LOG_ERROR, "cannot create the context: out of memory");
		crumbs_destroy(ctx);
		return r;
	}

	frame_init(ctx);
	*out = ctx;
	return CRUMBS_OK;
}

void crumbs_destroy(crumbs_context *ctx)
{
	if (!ctx)
		return;
	if (cpu_forked(ctx)) {
		/* A child forked from the process that made it: its output
		 * thread and devices are the parent's, and a lock may have
		 * been held by a thread the child does not have. Only the
		 * context's own block is freed. */
		if (ctx->has_allocator) {
			VkAllocationCallbacks a = ctx->allocator;
			a.pfnFree(a.pUserData, ctx);
		} else {
			free(ctx);
		}
		return;
	}
	frame_finish(ctx);
	output_release(ctx);
	cpu_release(ctx);
	present_release(ctx);
	standing_destroy(ctx);
	for (uint32_t i = 0; ctx->queues && i < ctx->queue_count; i++)
		pools_release_queue(ctx, &ctx->queues[i]);
	store_release(ctx);
	submit_release(ctx);
	calibrate_release(ctx);
	memory_release(ctx);
	trigger_close(&ctx->trigger);
	ctx_free(ctx, ctx->queues);
	ctx_free(ctx, ctx->devices);
	ctx_free(ctx, ctx->capture_dir);
	ctx_free(ctx, ctx->program_name);
	ctx_free(ctx, ctx->last_capture);
	perfquery_release(ctx);
	if (ctx->has_allocator) {
		VkAllocationCallbacks a = ctx->allocator;
		a.pfnFree(a.pUserData, ctx);
	} else {
		free(ctx);
	}
}

int crumbs_trigger_path(long pid, char *buf, size_t size)
{
	return trigger_path(pid, buf, size);
}
