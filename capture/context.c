/*
 * context.c: a crumbs context: its creation from the program's Vulkan
 * handles (functions, query pools, pre-recorded timestamp command
 * buffers, calibration), the frame boundary and the capture's state
 * machine, and capture requests from the API, the console and the trigger.
 */
#include "capture_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Memory, logging, time                                                    */
/* ------------------------------------------------------------------------ */

void *ctx_alloc(crumbs_context *ctx, size_t size)
{
	void *p;
	if (size == 0)
		size = 1;
	if (ctx->has_allocator)
		p = ctx->allocator.pfnAllocation(ctx->allocator.pUserData, size, 16,
						 VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
	else
		p = malloc(size);
	if (p)
		memset(p, 0, size);
	return p;
}

/* Unlike ctx_alloc, the bytes past the old size are not cleared. */
void *ctx_realloc(crumbs_context *ctx, void *p, size_t size)
{
	if (size == 0)
		size = 1;
	if (!p)
		return ctx_alloc(ctx, size);
	if (ctx->has_allocator)
		return ctx->allocator.pfnReallocation(ctx->allocator.pUserData, p, size, 16,
						      VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
	return realloc(p, size);
}

void ctx_free(crumbs_context *ctx, void *p)
{
	if (!p)
		return;
	if (ctx->has_allocator)
		ctx->allocator.pfnFree(ctx->allocator.pUserData, p);
	else
		free(p);
}

static char *ctx_strdup(crumbs_context *ctx, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = ctx_alloc(ctx, n);
	if (d)
		memcpy(d, s, n);
	return d;
}

void ctx_log(crumbs_context *ctx, enum crumbs_log_level level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ctx_log_text(ctx, level, buf);
}

void ctx_log_text(crumbs_context *ctx, enum crumbs_log_level level, const char *text)
{
	if (ctx->log)
		ctx->log(ctx->log_user, level, text);
	else
		fprintf(stderr, "%s%s\n", level == CRUMBS_LOG_INFO ? "" : "crumbs: ", text);
}

int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct queue_state *queue_find(crumbs_context *ctx, VkQueue queue)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		if (ctx->queues[i].queue == queue)
			return &ctx->queues[i];
	return NULL;
}

bool queue_same_family(const struct queue_state *a, const struct queue_state *b)
{
	return a->device == b->device && a->family == b->family;
}

static const char *vk_result_str(VkResult r)
{
	switch (r) {
	case VK_SUCCESS: return "VK_SUCCESS";
	case VK_NOT_READY: return "VK_NOT_READY";
	case VK_TIMEOUT: return "VK_TIMEOUT";
	case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
	case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
	case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
	case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
	default: return "an error";
	}
}

/* ------------------------------------------------------------------------ */
/* Calibration                                                              */
/* ------------------------------------------------------------------------ */

/* Calibrated timestamps: several tries, the one with the smallest
 * deviation kept, since a read can be delayed by preemption. */
static bool calibrated_sample(crumbs_context *ctx, struct device_state *d,
			      struct calibration_sample *out)
{
	VkCalibratedTimestampInfoEXT infos[2] = {
		{ VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL, VK_TIME_DOMAIN_DEVICE_EXT },
		{ VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL,
		  VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT },
	};
	out->valid = false;
	for (int attempt = 0; attempt < 8; attempt++) {
		uint64_t ts[2], deviation = 0;
		VkResult r = d->fn.GetCalibratedTimestamps(d->device, 2, infos, ts, &deviation);
		if (r != VK_SUCCESS) {
			ctx_log(ctx, CRUMBS_LOG_WARNING,
				"vkGetCalibratedTimestampsEXT failed (%s); GPU '%s' is not calibrated",
				vk_result_str(r), d->props.deviceName);
			d->calibrated = false;
			return false;
		}
		if (!out->valid || deviation < out->deviation_ns) {
			out->ticks = ts[0];
			out->cpu_ns = (int64_t)ts[1];
			out->deviation_ns = deviation;
			out->valid = true;
		}
	}
	return true;
}

void calibrate(crumbs_context *ctx, bool at_start)
{
	for (uint32_t i = 0; i < ctx->device_count; i++) {
		struct device_state *d = &ctx->devices[i];
		if (d->calibrated)
			calibrated_sample(ctx, d, at_start ? &d->start : &d->end);
	}
}

/*
 * Without calibrated timestamps: a timestamp written on an idle queue,
 * between two CPU clock reads. Done once at creation, where waiting on a
 * fence costs the program nothing; the narrowest of a few brackets is kept.
 */
void ctx_new_cbs(crumbs_context *ctx, const struct device_state *d, VkCommandBuffer *cbs,
		 uint32_t count)
{
	/* Under a layer, objects made below it need the loader's dispatch
	 * table set by hand. */
	if (ctx->set_loader_data)
		for (uint32_t i = 0; i < count; i++)
			ctx->set_loader_data(d->device, cbs[i]);
}

static void bracketed_sample(crumbs_context *ctx, struct device_state *d, struct queue_state *q)
{
	struct device_fns *fn = &d->fn;
	VkCommandBuffer cb;
	VkFence fence;
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   q->cmd_pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
	VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
	const VkAllocationCallbacks *alloc = ctx->has_allocator ? &ctx->allocator : NULL;
	uint32_t slot = q->ready_base + READY_RING;

	if (fn->AllocateCommandBuffers(d->device, &ai, &cb) != VK_SUCCESS)
		return;
	ctx_new_cbs(ctx, d, &cb, 1);
	if (fn->CreateFence(d->device, &fi, alloc, &fence) != VK_SUCCESS)
		return;
	for (int attempt = 0; attempt < 5; attempt++) {
		VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
						VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
		uint64_t result[2] = { 0, 0 };
		if (d->features & CRUMBS_FEATURE_HOST_QUERY_RESET)
			fn->ResetQueryPool(d->device, q->pool, slot, 1);
		if (fn->BeginCommandBuffer(cb, &bi) != VK_SUCCESS)
			break;
		if (!(d->features & CRUMBS_FEATURE_HOST_QUERY_RESET))
			fn->CmdResetQueryPool(cb, q->pool, slot, 1);
		fn->CmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, q->pool, slot);
		if (fn->EndCommandBuffer(cb) != VK_SUCCESS)
			break;
		VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
		int64_t t0 = now_ns();
		if (fn->QueueSubmit(q->queue, 1, &si, fence) != VK_SUCCESS)
			break;
		VkResult r = fn->WaitForFences(d->device, 1, &fence, VK_TRUE, 1000000000ull);
		int64_t t1 = now_ns();
		if (r != VK_SUCCESS)
			break;
		r = fn->GetQueryPoolResults(d->device, q->pool, slot, 1, sizeof(result), result,
					    sizeof(result),
					    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
		if (r == VK_SUCCESS && result[1] &&
		    (!d->bracketed.valid || (uint64_t)(t1 - t0) / 2 < d->bracketed.deviation_ns)) {
			d->bracketed.ticks = result[0];
			d->bracketed.cpu_ns = t0 + (t1 - t0) / 2;
			d->bracketed.deviation_ns = (uint64_t)(t1 - t0) / 2;
			d->bracketed.valid = true;
		}
		/* Reset the fence for the next try. */
		fn->DestroyFence(d->device, fence, alloc);
		if (fn->CreateFence(d->device, &fi, alloc, &fence) != VK_SUCCESS)
			return;
	}
	fn->DestroyFence(d->device, fence, alloc);
	/* The command buffer goes with the pool. */
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

/* PFN_vkVoidFunction cast to the function's own type, as ISO C allows
 * between function pointer types. */
#define LOAD_DEVICE(d, field, name)                                                  \
	((d)->fn.field = (PFN_vk##field)ctx->ifn.GetDeviceProcAddr((d)->device, name))

static enum crumbs_result load_device(crumbs_context *ctx, struct device_state *d)
{
	LOAD_DEVICE(d, CreateQueryPool, "vkCreateQueryPool");
	LOAD_DEVICE(d, DestroyQueryPool, "vkDestroyQueryPool");
	LOAD_DEVICE(d, ResetQueryPool, "vkResetQueryPool");
	if (!d->fn.ResetQueryPool)
		d->fn.ResetQueryPool = (PFN_vkResetQueryPool)ctx->ifn.GetDeviceProcAddr(d->device, "vkResetQueryPoolEXT");
	LOAD_DEVICE(d, GetQueryPoolResults, "vkGetQueryPoolResults");
	LOAD_DEVICE(d, CreateCommandPool, "vkCreateCommandPool");
	LOAD_DEVICE(d, DestroyCommandPool, "vkDestroyCommandPool");
	LOAD_DEVICE(d, AllocateCommandBuffers, "vkAllocateCommandBuffers");
	LOAD_DEVICE(d, BeginCommandBuffer, "vkBeginCommandBuffer");
	LOAD_DEVICE(d, EndCommandBuffer, "vkEndCommandBuffer");
	LOAD_DEVICE(d, CmdWriteTimestamp, "vkCmdWriteTimestamp");
	LOAD_DEVICE(d, CmdResetQueryPool, "vkCmdResetQueryPool");
	LOAD_DEVICE(d, CmdExecuteCommands, "vkCmdExecuteCommands");
	LOAD_DEVICE(d, QueueSubmit, "vkQueueSubmit");
	LOAD_DEVICE(d, QueueSubmit2, "vkQueueSubmit2");
	if (!d->fn.QueueSubmit2)
		d->fn.QueueSubmit2 = (PFN_vkQueueSubmit2)ctx->ifn.GetDeviceProcAddr(d->device, "vkQueueSubmit2KHR");
	LOAD_DEVICE(d, SignalSemaphore, "vkSignalSemaphore");
	if (!d->fn.SignalSemaphore)
		d->fn.SignalSemaphore = (PFN_vkSignalSemaphore)ctx->ifn.GetDeviceProcAddr(d->device, "vkSignalSemaphoreKHR");
	LOAD_DEVICE(d, CreateFence, "vkCreateFence");
	LOAD_DEVICE(d, DestroyFence, "vkDestroyFence");
	LOAD_DEVICE(d, WaitForFences, "vkWaitForFences");
	LOAD_DEVICE(d, GetFenceStatus, "vkGetFenceStatus");
	LOAD_DEVICE(d, ResetFences, "vkResetFences");
	LOAD_DEVICE(d, CreateBuffer, "vkCreateBuffer");
	LOAD_DEVICE(d, DestroyBuffer, "vkDestroyBuffer");
	LOAD_DEVICE(d, GetBufferMemoryRequirements, "vkGetBufferMemoryRequirements");
	LOAD_DEVICE(d, AllocateMemory, "vkAllocateMemory");
	LOAD_DEVICE(d, FreeMemory, "vkFreeMemory");
	LOAD_DEVICE(d, BindBufferMemory, "vkBindBufferMemory");
	LOAD_DEVICE(d, MapMemory, "vkMapMemory");
	LOAD_DEVICE(d, InvalidateMappedMemoryRanges, "vkInvalidateMappedMemoryRanges");
	LOAD_DEVICE(d, CmdCopyQueryPoolResults, "vkCmdCopyQueryPoolResults");
	LOAD_DEVICE(d, CmdPipelineBarrier, "vkCmdPipelineBarrier");
	if (d->features & CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS) {
		/* The KHR function has the EXT one's signature. */
		PFN_vkVoidFunction f = ctx->ifn.GetDeviceProcAddr(d->device, "vkGetCalibratedTimestampsEXT");
		if (!f)
			f = ctx->ifn.GetDeviceProcAddr(d->device, "vkGetCalibratedTimestampsKHR");
		d->fn.GetCalibratedTimestamps = (PFN_vkGetCalibratedTimestampsEXT)f;
	}
	if (!d->fn.CreateQueryPool || !d->fn.DestroyQueryPool || !d->fn.GetQueryPoolResults ||
	    !d->fn.CreateCommandPool || !d->fn.DestroyCommandPool || !d->fn.AllocateCommandBuffers ||
	    !d->fn.BeginCommandBuffer || !d->fn.EndCommandBuffer || !d->fn.CmdWriteTimestamp ||
	    !d->fn.CmdResetQueryPool || !d->fn.CmdExecuteCommands || !d->fn.QueueSubmit ||
	    !d->fn.CreateFence || !d->fn.DestroyFence || !d->fn.WaitForFences ||
	    !d->fn.GetFenceStatus || !d->fn.ResetFences || !d->fn.CreateBuffer ||
	    !d->fn.DestroyBuffer || !d->fn.GetBufferMemoryRequirements || !d->fn.AllocateMemory ||
	    !d->fn.FreeMemory || !d->fn.BindBufferMemory || !d->fn.MapMemory ||
	    !d->fn.InvalidateMappedMemoryRanges || !d->fn.CmdCopyQueryPoolResults ||
	    !d->fn.CmdPipelineBarrier) {
		ctx_log(ctx, CRUMBS_LOG_ERROR, "device '%s' lacks core Vulkan 1.0 functions",
			d->props.deviceName);
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	}
	if ((d->features & CRUMBS_FEATURE_HOST_QUERY_RESET) && !d->fn.ResetQueryPool) {
		ctx_log(ctx, CRUMBS_LOG_WARNING, "host query reset was said to be enabled on '%s', "
			"but vkResetQueryPool is missing; resetting in command buffers",
			d->props.deviceName);
		d->features &= ~(uint32_t)CRUMBS_FEATURE_HOST_QUERY_RESET;
	}
	return CRUMBS_OK;
}

/* Whether the device can calibrate its clock against CLOCK_MONOTONIC. */
static bool can_calibrate(crumbs_context *ctx, struct device_state *d)
{
	VkTimeDomainEXT domains[16];
	uint32_t n = 16;
	bool device = false, monotonic = false;

	if (!d->fn.GetCalibratedTimestamps || !ctx->ifn.GetPhysicalDeviceCalibrateableTimeDomains)
		return false;
	VkResult r = ctx->ifn.GetPhysicalDeviceCalibrateableTimeDomains(d->physical, &n, domains);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		device |= domains[i] == VK_TIME_DOMAIN_DEVICE_EXT;
		monotonic |= domains[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
	}
	return device && monotonic;
}

static uint32_t queue_flags(VkQueueFlags f)
{
	uint32_t flags = 0;
	if (f & VK_QUEUE_GRAPHICS_BIT)
		flags |= CRUMBS_QUEUE_GRAPHICS;
	if (f & VK_QUEUE_COMPUTE_BIT)
		flags |= CRUMBS_QUEUE_COMPUTE;
	if (f & VK_QUEUE_TRANSFER_BIT)
		flags |= CRUMBS_QUEUE_TRANSFER;
	if (f & 0x20) /* VK_QUEUE_VIDEO_DECODE_BIT_KHR */
		flags |= CRUMBS_QUEUE_VIDEO_DECODE;
	if (f & 0x40) /* VK_QUEUE_VIDEO_ENCODE_BIT_KHR */
		flags |= CRUMBS_QUEUE_VIDEO_ENCODE;
	if (f & 0x100) /* VK_QUEUE_OPTICAL_FLOW_BIT_NV */
		flags |= CRUMBS_QUEUE_OPTICAL_FLOW;
	return flags;
}

/* Records a command buffer that writes one timestamp into slot (or, with
 * `reset`, resets that many slots from it). Pre-recorded once: submitted
 * again in every capture. */
static VkResult record_fixed(struct device_state *d, struct queue_state *q, VkCommandBuffer cb,
			     uint32_t slot, uint32_t reset)
{
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT, NULL };
	VkResult r = d->fn.BeginCommandBuffer(cb, &bi);
	if (r != VK_SUCCESS)
		return r;
	if (reset)
		d->fn.CmdResetQueryPool(cb, q->pool, slot, reset);
	else
		/* Bottom of pipe: written once all earlier work on the queue
		 * is done, like every timestamp crumbs writes. */
		d->fn.CmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, q->pool, slot);
	return d->fn.EndCommandBuffer(cb);
}

/*
 * A host-visible buffer the queue's results are copied into, and a command
 * buffer for the copy, recorded when a capture ends (see resolve_start).
 * When any of it fails, results are read with vkGetQueryPoolResults.
 */
static void setup_copy(crumbs_context *ctx, struct device_state *d, struct queue_state *q)
{
	const VkAllocationCallbacks *alloc = ctx->has_allocator ? &ctx->allocator : NULL;
	VkDeviceSize size = sizeof(uint64_t) * 2 * q->slot_count;
	VkBufferCreateInfo bi = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, size,
				  VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_SHARING_MODE_EXCLUSIVE, 0, NULL };
	VkPhysicalDeviceMemoryProperties mp;
	VkMemoryRequirements req;
	uint32_t type = UINT32_MAX;
	void *mapped;

	if (d->fn.CreateBuffer(d->device, &bi, alloc, &q->copy_buffer) != VK_SUCCESS) {
		q->copy_buffer = VK_NULL_HANDLE;
		return;
	}
	d->fn.GetBufferMemoryRequirements(d->device, q->copy_buffer, &req);
	ctx->ifn.GetPhysicalDeviceMemoryProperties(d->physical, &mp);
	/* Host-visible; cached for reading on the CPU when there is such. */
	for (int pass = 0; pass < 2 && type == UINT32_MAX; pass++)
		for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
			VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
				(pass == 0 ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : 0);
			if ((req.memoryTypeBits & (1u << i)) &&
			    (mp.memoryTypes[i].propertyFlags & want) == want) {
				type = i;
				break;
			}
		}
	VkMemoryAllocateInfo ai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type };
	VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
	VkCommandBufferAllocateInfo ci = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   q->cmd_pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
	if (type == UINT32_MAX ||
	    d->fn.AllocateMemory(d->device, &ai, alloc, &q->copy_memory) != VK_SUCCESS)
		goto fail;
	if (d->fn.BindBufferMemory(d->device, q->copy_buffer, q->copy_memory, 0) != VK_SUCCESS ||
	    d->fn.MapMemory(d->device, q->copy_memory, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS ||
	    d->fn.CreateFence(d->device, &fi, alloc, &q->copy_fence) != VK_SUCCESS)
		goto fail;
	q->copy_mapped = mapped;
	q->copy_coherent = (mp.memoryTypes[type].propertyFlags &
			    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
	q->written = ctx_alloc(ctx, q->slot_count);
	if (!q->written || d->fn.AllocateCommandBuffers(d->device, &ci, &q->copy_cb) != VK_SUCCESS)
		goto fail;
	ctx_new_cbs(ctx, d, &q->copy_cb, 1);
	return;
fail:
	ctx_log(ctx, CRUMBS_LOG_WARNING, "cannot set up reading results on the GPU; "
		"reading them with vkGetQueryPoolResults");
	if (q->copy_fence)
		d->fn.DestroyFence(d->device, q->copy_fence, alloc);
	if (q->copy_memory)
		d->fn.FreeMemory(d->device, q->copy_memory, alloc);
	d->fn.DestroyBuffer(d->device, q->copy_buffer, alloc);
	q->copy_fence = VK_NULL_HANDLE;
	q->copy_memory = VK_NULL_HANDLE;
	q->copy_buffer = VK_NULL_HANDLE;
	q->copy_mapped = NULL;
	q->copy_cb = VK_NULL_HANDLE;
	ctx_free(ctx, q->written);
	q->written = NULL;
}

static enum crumbs_result setup_queue(crumbs_context *ctx, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	const VkAllocationCallbacks *alloc = ctx->has_allocator ? &ctx->allocator : NULL;
	VkQueueFamilyProperties families[64];
	uint32_t nf = 64;
	VkResult r;

	ctx->ifn.GetPhysicalDeviceQueueFamilyProperties(d->physical, &nf, families);
	if (q->family >= nf) {
		ctx_log(ctx, CRUMBS_LOG_ERROR, "queue family %u is not on device '%s'", q->family,
			d->props.deviceName);
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	}
	q->flags = queue_flags(families[q->family].queueFlags);
	q->valid_bits = families[q->family].timestampValidBits;
	q->can_reset_in_cmd = (families[q->family].queueFlags &
			       (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) != 0;
	if (q->valid_bits && !q->can_reset_in_cmd &&
	    !(d->features & CRUMBS_FEATURE_HOST_QUERY_RESET)) {
		ctx_log(ctx, CRUMBS_LOG_WARNING, "queue family %u of '%s' can reset queries only "
			"with hostQueryReset, which is not enabled: its work is recorded untimed",
			q->family, d->props.deviceName);
		q->valid_bits = 0;
	}
	q->scope_slots = 2 * ctx->max_scopes;
	q->submit_base = q->scope_slots;
	q->ready_base = q->submit_base + 2 * ctx->max_submissions;
	q->slot_count = q->ready_base + READY_RING + 1; /* + the bracketed sample's */
	q->ready_slot = NO_SLOT;

	q->submits = ctx_alloc(ctx, sizeof(*q->submits) * ctx->max_submissions);
	q->begin_cbs = ctx_alloc(ctx, sizeof(VkCommandBuffer) * ctx->max_submissions * 2);
	q->scratch_cb_cap = 256;
	q->scratch_submit_cap = 64;
	q->scratch_cbs = ctx_alloc(ctx, sizeof(VkCommandBuffer) * q->scratch_cb_cap);
	q->scratch_cbinfos = ctx_alloc(ctx, sizeof(VkCommandBufferSubmitInfo) * q->scratch_cb_cap);
	q->scratch_submits = ctx_alloc(ctx, (sizeof(VkSubmitInfo2) > sizeof(VkSubmitInfo) ?
					     sizeof(VkSubmitInfo2) : sizeof(VkSubmitInfo)) *
					    q->scratch_submit_cap);
	if (!q->submits || !q->begin_cbs || !q->scratch_cbs || !q->scratch_cbinfos ||
	    !q->scratch_submits)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	q->end_cbs = q->begin_cbs + ctx->max_submissions;

	/* Resettable: the bracketed calibration records one buffer again. */
	VkCommandPoolCreateInfo pi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
				       VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, q->family };
	if ((r = d->fn.CreateCommandPool(d->device, &pi, alloc, &q->cmd_pool)) != VK_SUCCESS) {
		ctx_log(ctx, CRUMBS_LOG_ERROR, "vkCreateCommandPool failed (%s)", vk_result_str(r));
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	if (!q->valid_bits)
		return CRUMBS_OK;

	q->results = ctx_alloc(ctx, sizeof(uint64_t) * 2 * q->slot_count);
	if (!q->results)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	VkQueryPoolCreateInfo qi = { VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, NULL, 0,
				     VK_QUERY_TYPE_TIMESTAMP, q->slot_count, 0 };
	if ((r = d->fn.CreateQueryPool(d->device, &qi, alloc, &q->pool)) != VK_SUCCESS) {
		ctx_log(ctx, CRUMBS_LOG_ERROR, "vkCreateQueryPool of %u queries failed (%s)",
			q->slot_count, vk_result_str(r));
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	if (d->features & CRUMBS_FEATURE_HOST_QUERY_RESET)
		d->fn.ResetQueryPool(d->device, q->pool, 0, q->slot_count);

	uint32_t count = 2 * ctx->max_submissions + READY_RING + 2;
	VkCommandBuffer *cbs = ctx_alloc(ctx, sizeof(*cbs) * count);
	if (!cbs)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   q->cmd_pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, count };
	if ((r = d->fn.AllocateCommandBuffers(d->device, &ai, cbs)) != VK_SUCCESS) {
		ctx_free(ctx, cbs);
		ctx_log(ctx, CRUMBS_LOG_ERROR, "vkAllocateCommandBuffers failed (%s)", vk_result_str(r));
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	ctx_new_cbs(ctx, d, cbs, count);
	for (uint32_t i = 0; i < ctx->max_submissions && r == VK_SUCCESS; i++) {
		q->begin_cbs[i] = cbs[2 * i];
		q->end_cbs[i] = cbs[2 * i + 1];
		r = record_fixed(d, q, q->begin_cbs[i], q->submit_base + 2 * i, 0);
		if (r == VK_SUCCESS)
			r = record_fixed(d, q, q->end_cbs[i], q->submit_base + 2 * i + 1, 0);
	}
	for (uint32_t i = 0; i < READY_RING && r == VK_SUCCESS; i++) {
		q->ready_cbs[i] = cbs[2 * ctx->max_submissions + i];
		r = record_fixed(d, q, q->ready_cbs[i], q->ready_base + i, 0);
	}
	if (q->can_reset_in_cmd) {
		q->reset_cb = cbs[count - 2];
		q->scope_reset_cb = cbs[count - 1];
		if (r == VK_SUCCESS)
			r = record_fixed(d, q, q->reset_cb, q->scope_slots,
					 q->slot_count - q->scope_slots);
		if (r == VK_SUCCESS)
			r = record_fixed(d, q, q->scope_reset_cb, 0, q->scope_slots);
	}
	ctx_free(ctx, cbs);
	if (r == VK_SUCCESS && q->can_reset_in_cmd)
		setup_copy(ctx, d, q);
	if (r != VK_SUCCESS) {
		ctx_log(ctx, CRUMBS_LOG_ERROR, "recording crumbs' command buffers failed (%s)",
			vk_result_str(r));
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	return CRUMBS_OK;
}

void default_program_name(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/comm", "r");
	snprintf(buf, size, "program");
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	/* Keep it a safe file name. */
	for (char *p = buf; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	if (!buf[0])
		snprintf(buf, size, "program");
}

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

	/* Instance-level functions. */
	PFN_vkGetInstanceProcAddr gipa = desc->get_instance_proc_addr;
	if (!ctx->ifn.GetDeviceProcAddr) /* a layer gives the next layer's */
		ctx->ifn.GetDeviceProcAddr = (PFN_vkGetDeviceProcAddr)
			gipa(desc->instance, "vkGetDeviceProcAddr");
	ctx->ifn.GetPhysicalDeviceProperties = (PFN_vkGetPhysicalDeviceProperties)
		gipa(desc->instance, "vkGetPhysicalDeviceProperties");
	ctx->ifn.GetPhysicalDeviceMemoryProperties = (PFN_vkGetPhysicalDeviceMemoryProperties)
		gipa(desc->instance, "vkGetPhysicalDeviceMemoryProperties");
	ctx->ifn.GetPhysicalDeviceQueueFamilyProperties = (PFN_vkGetPhysicalDeviceQueueFamilyProperties)
		gipa(desc->instance, "vkGetPhysicalDeviceQueueFamilyProperties");
	ctx->ifn.GetPhysicalDeviceCalibrateableTimeDomains = (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)
		gipa(desc->instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
	if (!ctx->ifn.GetPhysicalDeviceCalibrateableTimeDomains)
		ctx->ifn.GetPhysicalDeviceCalibrateableTimeDomains = (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)
			gipa(desc->instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR");
	ctx->ifn.CmdBeginDebugUtilsLabel = (PFN_vkCmdBeginDebugUtilsLabelEXT)
		gipa(desc->instance, "vkCmdBeginDebugUtilsLabelEXT");
	ctx->ifn.CmdEndDebugUtilsLabel = (PFN_vkCmdEndDebugUtilsLabelEXT)
		gipa(desc->instance, "vkCmdEndDebugUtilsLabelEXT");
	if (!ctx->ifn.GetDeviceProcAddr || !ctx->ifn.GetPhysicalDeviceProperties ||
	    !ctx->ifn.GetPhysicalDeviceQueueFamilyProperties ||
	    !ctx->ifn.GetPhysicalDeviceMemoryProperties) {
		ctx_log(ctx, CRUMBS_LOG_ERROR, "vkGetInstanceProcAddr does not give core functions");
		return CRUMBS_ERROR_INVALID_ARGUMENT;
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
		if ((r = load_device(ctx, d)) != CRUMBS_OK)
			return r;
		d->calibrated = desc->calibration != CRUMBS_CALIBRATION_BRACKETED && can_calibrate(ctx, d);
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
		if ((r = setup_queue(ctx, q)) != CRUMBS_OK)
			return r;
	}
	/* The fallback calibration, on each device's first timed queue. */
	for (uint32_t i = 0; i < ctx->device_count; i++) {
		if (ctx->devices[i].calibrated)
			continue;
		for (uint32_t k = 0; k < ctx->queue_count; k++)
			if (ctx->queues[k].device == i && ctx->queues[k].valid_bits) {
				bracketed_sample(ctx, &ctx->devices[i], &ctx->queues[k]);
				break;
			}
	}

	/* Handles, events, names and the tables of a capture. */
	ctx->handles = ctx_alloc(ctx, sizeof(*ctx->handles) * ctx->max_command_buffers);
	ctx->label_handles = ctx->mirror_labels ?
		ctx_alloc(ctx, sizeof(*ctx->label_handles) * ctx->max_command_buffers) : NULL;
	uint64_t events = (uint64_t)ctx->max_scopes * 2 * (ctx->queue_count ? ctx->queue_count : 1);
	ctx->block_count = (uint32_t)(events / EVENTS_PER_BLOCK) + ctx->max_command_buffers;
	ctx->blocks = ctx_alloc(ctx, sizeof(*ctx->blocks) * ctx->block_count);
	ctx->names = ctx_alloc(ctx, ctx->name_bytes);
	ctx->counts_cap = ctx->max_scopes * 2;
	ctx->counts = ctx_alloc(ctx, sizeof(*ctx->counts) * ctx->counts_cap);
	ctx->map_cap = 1;
	while (ctx->map_cap < ctx->max_command_buffers * 2)
		ctx->map_cap *= 2;
	ctx->map_keys = ctx_alloc(ctx, sizeof(*ctx->map_keys) * ctx->map_cap);
	ctx->map_values = ctx_alloc(ctx, sizeof(*ctx->map_values) * ctx->map_cap);
	ctx->submit_cmd_cap = ctx->max_command_buffers * 2;
	ctx->submit_cmds = ctx_alloc(ctx, sizeof(*ctx->submit_cmds) * ctx->submit_cmd_cap);
	ctx->op_cap = 4096;
	ctx->ops = ctx_alloc(ctx, sizeof(*ctx->ops) * ctx->op_cap);
	ctx->semaphore_cap = 1024;
	ctx->semaphores = ctx_alloc(ctx, sizeof(*ctx->semaphores) * ctx->semaphore_cap);
	ctx->host_signal_cap = 1024;
	ctx->host_signals = ctx_alloc(ctx, sizeof(*ctx->host_signals) * ctx->host_signal_cap);
	if (!ctx->handles || (ctx->mirror_labels && !ctx->label_handles) || !ctx->blocks ||
	    !ctx->names || !ctx->counts || !ctx->map_keys || !ctx->map_values ||
	    !ctx->submit_cmds || !ctx->ops || !ctx->semaphores || !ctx->host_signals)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	if (pthread_mutex_init(&ctx->map_lock, NULL) != 0)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	if (pthread_mutex_init(&ctx->submit_lock, NULL) != 0) {
		pthread_mutex_destroy(&ctx->map_lock);
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	ctx->locks_ready = true;
	report_settings_init(&ctx->settings);
	if (!(ctx->writer_ready = writer_init(ctx)))
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

static void begin_preroll(crumbs_context *ctx);
static void start_capture(crumbs_context *ctx, int64_t now);

enum crumbs_result crumbs_create(const struct crumbs_desc *desc, crumbs_context **out)
{
	return crumbs_create_layered(desc, NULL, NULL, out);
}

enum crumbs_result crumbs_create_layered(const struct crumbs_desc *desc,
					 PFN_vkSetDeviceLoaderData set_loader_data,
					 PFN_vkGetDeviceProcAddr next_gdpa, crumbs_context **out)
{
	crumbs_context *ctx;
	enum crumbs_result r;

	*out = NULL;
	if (!desc || !desc->instance || !desc->get_instance_proc_addr || !desc->device_count ||
	    !desc->devices || (desc->queue_count && !desc->queues))
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
	ctx->trigger.fd = -1;
	ctx->set_loader_data = set_loader_data;
	ctx->ifn.GetDeviceProcAddr = next_gdpa;
	if ((r = create(desc, ctx)) != CRUMBS_OK) {
		if (r == CRUMBS_ERROR_OUT_OF_MEMORY)
			ctx_log(ctx, CRUMBS_LOG_ERROR, "cannot create the context: out of memory");
		crumbs_destroy(ctx);
		return r;
	}

	/* A scripted run asks for its capture in the environment. */
	const char *at = ctx->under_layer ? NULL : getenv("CRUMBS_CAPTURE_FRAME");
	if (at && *at) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(at, &end, 10);
		if (*end || errno || at[0] == '-')
			ctx_log(ctx, CRUMBS_LOG_WARNING, "CRUMBS_CAPTURE_FRAME='%s' is not a frame number",
				at);
		else
			ctx->capture_at = n;
	}
	if (ctx->capture_at == 0) {
		/* Frame 0 begins now: no pre-roll to learn when the queues
		 * were last busy, which they were not. */
		ctx->capture_at = UINT64_MAX;
		begin_preroll(ctx);
		start_capture(ctx, ctx->frame_begin_ns);
	} else if (ctx->capture_at == 1) {
		ctx->capture_at = UINT64_MAX;
		begin_preroll(ctx);
	}
	*out = ctx;
	return CRUMBS_OK;
}

void crumbs_destroy(crumbs_context *ctx)
{
	if (!ctx)
		return;
	int state = atomic_load(&ctx->state);
	if (state == STATE_CAPTURING) {
		ctx->capture_end_ns = now_ns();
		calibrate(ctx, false);
		state = STATE_RESOLVING;
		resolve_start(ctx);
	}
	if (state == STATE_RESOLVING && ctx->queues && ctx->handles) {
		/* The program is done with the device, and what it submitted is
		 * done: the copies of the results (submitted just above when
		 * the capture frame ends here) may be waited for, so that a
		 * capture of the program's last frame is whole. */
		if (!ctx->device_lost)
			resolve_wait(ctx);
		resolve_try(ctx, true);
		state = STATE_WRITING;
	}
	if (state == STATE_WRITING)
		resolve_written(ctx, true);
	if (ctx->writer_ready)
		writer_release(ctx);
	const VkAllocationCallbacks *alloc = ctx->has_allocator ? &ctx->allocator : NULL;
	standing_destroy(ctx);
	for (uint32_t i = 0; ctx->queues && i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct device_state *d = &ctx->devices[q->device];
		if (q->pool)
			d->fn.DestroyQueryPool(d->device, q->pool, alloc);
		if (q->copy_fence)
			d->fn.DestroyFence(d->device, q->copy_fence, alloc);
		if (q->copy_buffer)
			d->fn.DestroyBuffer(d->device, q->copy_buffer, alloc);
		if (q->copy_memory)
			d->fn.FreeMemory(d->device, q->copy_memory, alloc);
		if (q->cmd_pool)
			d->fn.DestroyCommandPool(d->device, q->cmd_pool, alloc);
		ctx_free(ctx, q->submits);
		ctx_free(ctx, q->begin_cbs);
		ctx_free(ctx, q->results);
		ctx_free(ctx, q->scratch_cbs);
		ctx_free(ctx, q->scratch_cbinfos);
		ctx_free(ctx, q->scratch_submits);
		ctx_free(ctx, q->written);
	}
	/* A creation that failed part-way may have allocated the tables
	 * without reaching the locks. */
	if (ctx->locks_ready) {
		pthread_mutex_destroy(&ctx->map_lock);
		pthread_mutex_destroy(&ctx->submit_lock);
	}
	trigger_close(&ctx->trigger);
	report_settings_release(&ctx->settings);
	ctx_free(ctx, ctx->queues);
	ctx_free(ctx, ctx->devices);
	ctx_free(ctx, ctx->handles);
	ctx_free(ctx, ctx->label_handles);
	ctx_free(ctx, ctx->blocks);
	ctx_free(ctx, ctx->names);
	ctx_free(ctx, ctx->counts);
	ctx_free(ctx, ctx->map_keys);
	ctx_free(ctx, ctx->map_values);
	ctx_free(ctx, ctx->submit_cmds);
	ctx_free(ctx, ctx->ops);
	ctx_free(ctx, ctx->semaphores);
	ctx_free(ctx, ctx->host_signals);
	ctx_free(ctx, ctx->capture_dir);
	ctx_free(ctx, ctx->program_name);
	ctx_free(ctx, ctx->last_capture);
	ctx_free(ctx, ctx->writer_path);
	sbuf_release(&ctx->writer_log);
	if (ctx->has_allocator) {
		VkAllocationCallbacks a = ctx->allocator;
		a.pfnFree(a.pUserData, ctx);
	} else {
		free(ctx);
	}
}

/* ------------------------------------------------------------------------ */
/* Frames and requests                                                      */
/* ------------------------------------------------------------------------ */

/* The rest of this frame is the pre-roll: the query slots are reset, and
 * each submission's end is timed so the capture knows when each queue was
 * last busy. */
static void begin_preroll(crumbs_context *ctx)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct device_state *d = &ctx->devices[q->device];
		bool host_reset = (d->features & CRUMBS_FEATURE_HOST_QUERY_RESET) != 0;
		if (q->valid_bits && host_reset) {
			/* What the last capture and its pre-roll wrote: every
			 * other slot is still reset, since creation. */
			struct slot_run runs[3];
			for (uint32_t k = 0, n = capture_runs(q, runs); k < n; k++)
				d->fn.ResetQueryPool(d->device, q->pool, runs[k].first, runs[k].count);
			if (q->ready_next)
				d->fn.ResetQueryPool(d->device, q->pool, q->ready_base, q->ready_next);
		} else if (q->valid_bits) {
			q->reset_pending = true;
			atomic_store(&q->scope_reset_pending, true);
		}
		q->ready_next = 0;
		q->ready_slot = NO_SLOT;
		q->submit_count = 0;
		atomic_store(&q->scope_next, 0);
	}
	record_reset(ctx);
	submit_reset(ctx);
	ctx->device_lost = false;
	atomic_store(&ctx->state, STATE_PREROLL);
}

/* The current frame, begun at `now`, is the capture frame. */
static void start_capture(crumbs_context *ctx, int64_t now)
{
	ctx->capture_frame = ctx->frame;
	ctx->capture_begin_ns = now;
	calibrate(ctx, true);
	atomic_store(&ctx->state, STATE_CAPTURING);
}

/* Splits a settings string and prepares them; a message in err when bad. */
static int parse_settings(crumbs_context *ctx, const char *settings, char *err, size_t n)
{
	char line[TRIGGER_MAX_COMMAND];
	char *argv[256], *positional[256];
	int argc = 0, np = 0;
	struct report_settings s;

	report_settings_init(&s);
	if (settings) {
		if (strlen(settings) >= sizeof(line)) {
			snprintf(err, n, "the settings are longer than %d bytes", TRIGGER_MAX_COMMAND - 1);
			return -1;
		}
		snprintf(line, sizeof(line), "%s", settings);
		argc = trigger_split(line, argv, 256);
		if (argc < 0) {
			snprintf(err, n, "cannot split '%s': unbalanced quotes or over 255 arguments",
				 settings);
			return -1;
		}
	}
	struct option_table t = { report_options, report_option_count, &s };
	if (options_parse(&t, 1, argc, argv, false, positional, &np, err, n) != 0 ||
	    (np > 0 && snprintf(err, n, "unexpected argument '%s'", positional[0]) > 0) ||
	    report_settings_prepare(&s, err, n) != CRUMBS_OK) {
		report_settings_release(&s);
		return -1;
	}
	report_settings_release(&ctx->settings);
	ctx->settings = s;
	ctx->have_settings = true;
	return 0;
}

/* A capture request from any source; `err` gets what went wrong. */
#define UNDER_LAYER "the crumbs layer records this program: capture with `crumbs trigger PID` " \
	"or `crumbs capture`"

static enum crumbs_result request(crumbs_context *ctx, const char *settings, char *err, size_t n)
{
	if (ctx->under_layer) {
		snprintf(err, n, UNDER_LAYER);
		return CRUMBS_ERROR_BAD_STATE;
	}
	if (atomic_load(&ctx->state) != STATE_IDLE) {
		snprintf(err, n, "a capture (of frame %llu) is already under way",
			 (unsigned long long)(ctx->state == STATE_PREROLL ? ctx->frame + 1 :
					      ctx->capture_frame));
		return CRUMBS_ERROR_BAD_STATE;
	}
	if (parse_settings(ctx, settings, err, n) != 0)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	begin_preroll(ctx);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_capture_at(crumbs_context *ctx, uint64_t frame, const char *settings)
{
	char err[300];
	enum crumbs_result r = CRUMBS_OK;

	if (ctx->under_layer) {
		snprintf(err, sizeof(err), UNDER_LAYER);
		r = CRUMBS_ERROR_BAD_STATE;
	} else if (atomic_load(&ctx->state) != STATE_IDLE || ctx->capture_at != UINT64_MAX) {
		snprintf(err, sizeof(err), "a capture is already asked for or under way");
		r = CRUMBS_ERROR_BAD_STATE;
	} else if (frame == 0 && ctx->frame == 0 && !ctx->submitted) {
		/* Nothing of frame 0 has run: it can still be captured whole,
		 * without a pre-roll. */
		if (parse_settings(ctx, settings, err, sizeof(err)) != 0) {
			r = CRUMBS_ERROR_INVALID_ARGUMENT;
		} else {
			begin_preroll(ctx);
			start_capture(ctx, ctx->frame_begin_ns);
		}
	} else if (frame <= ctx->frame) {
		snprintf(err, sizeof(err), "frame %llu has begun (this is frame %llu)",
			 (unsigned long long)frame, (unsigned long long)ctx->frame);
		r = CRUMBS_ERROR_INVALID_ARGUMENT;
	} else if (parse_settings(ctx, settings, err, sizeof(err)) != 0) {
		r = CRUMBS_ERROR_INVALID_ARGUMENT;
	} else if (frame == ctx->frame + 1) {
		begin_preroll(ctx);
	} else {
		ctx->capture_at = frame;
	}
	if (r != CRUMBS_OK)
		ctx_log(ctx, CRUMBS_LOG_WARNING, "profilegpu: %s", err);
	return r;
}

enum crumbs_result crumbs_capture(crumbs_context *ctx, const char *settings)
{
	char err[300];
	enum crumbs_result r = request(ctx, settings, err, sizeof(err));
	if (r != CRUMBS_OK)
		ctx_log(ctx, CRUMBS_LOG_WARNING, "profilegpu: %s", err);
	return r;
}

/* Runs a console command line; `err` gets a failure's message. */
static enum crumbs_result command(crumbs_context *ctx, const char *line, char *err, size_t n)
{
	const char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t word = strcspn(p, " \t");
	const char *rest = p + word;
	while (*rest == ' ' || *rest == '\t')
		rest++;
	if (word == 10 && strncmp(p, "profilegpu", 10) == 0)
		return request(ctx, rest, err, n);
	if (word == 4 && strncmp(p, "help", 4) == 0 && !*rest) {
		struct sbuf b = { 0 };
		struct option_table t = { report_options, report_option_count, NULL };
		sbuf_adds(&b, "profilegpu [settings]: capture the next frame and print its tables; "
			      "settings:\n");
		options_help(&t, 1, &b);
		ctx_log(ctx, CRUMBS_LOG_INFO, "%s", b.data ? b.data : "");
		sbuf_release(&b);
		return CRUMBS_OK;
	}
	snprintf(err, n, "unknown command '%.*s' (try 'help')", (int)(word < 64 ? word : 64), p);
	return CRUMBS_ERROR_INVALID_ARGUMENT;
}

enum crumbs_result crumbs_command(crumbs_context *ctx, const char *command_line)
{
	char err[300];
	enum crumbs_result r = command(ctx, command_line ? command_line : "", err, sizeof(err));
	if (r != CRUMBS_OK)
		ctx_log(ctx, CRUMBS_LOG_WARNING, "%s", err);
	return r;
}

/* Requests that came through `crumbs trigger`. */
static void poll_trigger(crumbs_context *ctx)
{
	char line[TRIGGER_MAX_COMMAND];
	struct trigger_peer peer;

	if (ctx->trigger.fd < 0)
		return;
	/* A few a frame: a sender that never stops cannot stall the frame. */
	for (int i = 0; i < 4 && trigger_poll(&ctx->trigger, line, sizeof(line), &peer) == 1; i++) {
		char err[300], reply[400];
		enum crumbs_result r = command(ctx, line, err, sizeof(err));
		if (r == CRUMBS_OK && atomic_load(&ctx->state) == STATE_PREROLL) {
			snprintf(reply, sizeof(reply), "queued frame %llu",
				 (unsigned long long)(ctx->frame + 1));
			ctx->peer = peer;
			ctx->has_peer = true;
		} else if (r == CRUMBS_OK) {
			snprintf(reply, sizeof(reply), "error not a capture request");
		} else {
			snprintf(reply, sizeof(reply), "error %s", err);
		}
		trigger_reply(&ctx->trigger, &peer, reply);
	}
}

void crumbs_frame(crumbs_context *ctx)
{
	if (!ctx)
		return;
	int64_t now = now_ns();
	int state = atomic_load(&ctx->state);

	if (state == STATE_CAPTURING) {
		ctx->capture_end_ns = now;
		calibrate(ctx, false);
		atomic_store(&ctx->state, STATE_RESOLVING);
		resolve_start(ctx);
	}
	ctx->frame++;
	ctx->frame_begin_ns = now;
	ctx->submitted = false;
	if (state == STATE_PREROLL)
		start_capture(ctx, now);

	if (atomic_load(&ctx->state) == STATE_RESOLVING && resolve_try(ctx, false))
		atomic_store(&ctx->state, STATE_WRITING);
	if (atomic_load(&ctx->state) == STATE_WRITING && resolve_written(ctx, false))
		atomic_store(&ctx->state, STATE_IDLE);
	poll_trigger(ctx);
	/* A capture asked for frame N: frame N-1 is its pre-roll. The settings
	 * were taken when it was asked for. */
	if (ctx->capture_at != UINT64_MAX && ctx->frame + 1 >= ctx->capture_at) {
		if (ctx->frame + 1 == ctx->capture_at && atomic_load(&ctx->state) == STATE_IDLE)
			begin_preroll(ctx);
		else
			ctx_log(ctx, CRUMBS_LOG_WARNING, "the capture of frame %llu could not start: "
				"another was under way", (unsigned long long)ctx->capture_at);
		ctx->capture_at = UINT64_MAX;
	}
}

int crumbs_detail(const crumbs_context *ctx)
{
	if (!ctx)
		return -1;
	if (atomic_load(&((crumbs_context *)(uintptr_t)ctx)->state) == STATE_CAPTURING)
		return CRUMBS_DETAIL_MAX;
	return ctx->mirror_labels - 1;
}

const char *crumbs_last_capture(const crumbs_context *ctx)
{
	return ctx ? ctx->last_capture : NULL;
}
