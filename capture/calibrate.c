/* SPDX-License-Identifier: MIT */
/*
 * calibrate.c: the GPU clocks against the CPU's. With calibrated
 * timestamps, samples at the start and the end of each captured frame
 * (a run's frames share a recent one, which crumbs' output thread keeps
 * fresh); without, one bracketed sample per device at creation.
 */
#include "capture_internal.h"

/*
 * Calibrated timestamps: up to `tries` reads, the one with the smallest
 * deviation kept, since a read can be delayed by preemption. A read that
 * does not narrow the best deviation by a tenth ends them: the driver's
 * own bound is reached. Some drivers report the same deviation at every
 * read, and each read costs microseconds of the caller's thread, so more
 * tries would buy nothing (docs/BENCHMARKS.md).
 */
static VkResult read_sample(struct device_state *d, struct calibration_sample *out, int tries)
{
	VkCalibratedTimestampInfoEXT infos[2] = {
		{ VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL, VK_TIME_DOMAIN_DEVICE_EXT },
		{ VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL,
		  VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT },
	};
	out->valid = false;
	for (int attempt = 0; attempt < tries; attempt++) {
		uint64_t ts[2], deviation = 0;
		VkResult r = d->fn.GetCalibratedTimestamps(d->device, 2, infos, ts, &deviation);
		if (r != VK_SUCCESS) {
			out->valid = false;
			return r;
		}
		bool narrower = !out->valid || deviation < out->deviation_ns - out->deviation_ns / 10;
		if (!out->valid || deviation < out->deviation_ns) {
			out->ticks = ts[0];
			out->cpu_ns = (int64_t)ts[1];
			out->deviation_ns = deviation;
			out->valid = true;
		}
		if (!narrower)
			break;
	}
	return VK_SUCCESS;
}

/* A sample on the program's thread: a device whose read fails is not
 * calibrated from then on. */
static void calibrated_sample(crumbs_context *ctx, struct device_state *d,
			      struct calibration_sample *out, int tries)
{
	VkResult r = read_sample(d, out, tries);
	if (r != VK_SUCCESS) {
		ctx_log(ctx, CRUMBS_LOG_WARNING,
			"vkGetCalibratedTimestampsEXT failed (%s); GPU '%s' is not calibrated",
			vk_result_str(r), d->props.deviceName);
		d->calibrated = false;
	}
}

/* d->recent, which both threads read and write. */
static struct calibration_sample recent_get(crumbs_context *ctx, const struct device_state *d)
{
	pthread_mutex_lock(&ctx->recent_lock);
	struct calibration_sample s = d->recent;
	pthread_mutex_unlock(&ctx->recent_lock);
	return s;
}

static void recent_put(crumbs_context *ctx, struct device_state *d,
		       const struct calibration_sample *s)
{
	pthread_mutex_lock(&ctx->recent_lock);
	d->recent = *s;
	pthread_mutex_unlock(&ctx->recent_lock);
}

enum crumbs_result calibrate_init(crumbs_context *ctx)
{
	if (pthread_mutex_init(&ctx->recent_lock, NULL) != 0)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	ctx->recent_lock_ready = true;
	return CRUMBS_OK;
}

void calibrate_release(crumbs_context *ctx)
{
	if (ctx->recent_lock_ready)
		pthread_mutex_destroy(&ctx->recent_lock);
	ctx->recent_lock_ready = false;
}

FRAME_PATH
void calibrate(crumbs_context *ctx, struct capture_set *set, bool at_start, int64_t now)
{
	bool run = ctx->set_count > 1;
	for (uint32_t i = 0; i < ctx->device_count; i++) {
		struct device_state *d = &ctx->devices[i];
		struct calibration_sample *out = &set->calibration[i][at_start ? 0 : 1];
		out->valid = false;
		if (!d->calibrated)
			continue;
		/* A run's frame starts with the latest sample while that is
		 * young, and ends without one: clocks drift by parts per
		 * million, a few nanoseconds over RUN_CALIBRATE_NS, far less
		 * than a sample's deviation, and a sample costs the program
		 * microseconds. The output thread takes them (see
		 * calibrate_refresh); this thread only when that one has
		 * not, as at a run's first frame. */
		if (run) {
			struct calibration_sample recent = recent_get(ctx, d);
			if (recent.valid && now - recent.cpu_ns < RUN_CALIBRATE_NS) {
				if (at_start)
					*out = recent;
				continue;
			}
		}
		calibrated_sample(ctx, d, out, run ? 2 : 8);
		/* A failed read leaves it invalid: no thread samples d again. */
		if (run)
			recent_put(ctx, d, out);
	}
}

/*
 * On the output thread during a run: a device's sample older than
 * RUN_REFRESH_NS is taken again, so that the program's thread finds one
 * younger than RUN_CALIBRATE_NS at each frame (the output thread looks at
 * least every RUN_COLLECT_NS) and never pays for a read. Only a device
 * the program's thread has sampled in this run: one whose read failed is
 * left to it. vkGetCalibratedTimestampsEXT needs no external
 * synchronization.
 */
void calibrate_refresh(crumbs_context *ctx)
{
	for (uint32_t i = 0; i < ctx->device_count; i++) {
		struct device_state *d = &ctx->devices[i];
		struct calibration_sample recent = recent_get(ctx, d), fresh;
		if (!recent.valid || now_ns() - recent.cpu_ns < RUN_REFRESH_NS)
			continue;
		if (read_sample(d, &fresh, 2) != VK_SUCCESS || !fresh.valid)
			continue;
		pthread_mutex_lock(&ctx->recent_lock);
		/* Not over a forgotten one (a new run began) or a newer one. */
		if (d->recent.valid && fresh.cpu_ns > d->recent.cpu_ns)
			d->recent = fresh;
		pthread_mutex_unlock(&ctx->recent_lock);
	}
}

void calibrate_forget(crumbs_context *ctx)
{
	static const struct calibration_sample none = { 0, 0, 0, false };
	for (uint32_t i = 0; i < ctx->device_count; i++)
		recent_put(ctx, &ctx->devices[i], &none);
}

/*
 * Without calibrated timestamps: a timestamp written on an idle queue,
 * between two CPU clock reads. Done once at creation, where waiting on a
 * fence costs the program nothing; the narrowest of a few brackets is kept.
 */
static void bracketed_sample(crumbs_context *ctx, struct device_state *d, struct queue_state *q)
{
	struct device_fns *fn = &d->fn;
	VkCommandBuffer cb;
	VkFence fence;
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   q->cmd_pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
	VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
	const VkAllocationCallbacks *alloc = ctx_vk_allocator(ctx);
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

void calibrate_bracketed(crumbs_context *ctx)
{
	for (uint32_t i = 0; i < ctx->device_count; i++) {
		if (ctx->devices[i].calibrated)
			continue;
		for (uint32_t k = 0; k < ctx->queue_count; k++)
			if (ctx->queues[k].device == i && ctx->queues[k].valid_bits) {
				bracketed_sample(ctx, &ctx->devices[i], &ctx->queues[k]);
				break;
			}
	}
}

bool calibrate_supported(crumbs_context *ctx, struct device_state *d)
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
