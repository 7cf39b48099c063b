/* SPDX-License-Identifier: MIT */
/*
 * counters.c: pipeline statistics queries. Each graphics or compute queue
 * of a device with CRUMBS_FEATURE_PIPELINE_STATISTICS has a pool of them,
 * shared out to the capture sets as the timestamp slots are, reset on the
 * host and read back without waiting. Where the queries are begun and
 * ended (the stretches between scope boundaries) is record.c's.
 */
#include "capture_internal.h"

#include <string.h>

/* The statistics a queue of these flags may count: a pool counting
 * graphics statistics may only be used on a graphics queue, one counting
 * compute invocations only on a compute queue. */
static VkQueryPipelineStatisticFlags bits_for(VkQueueFlags flags)
{
	VkQueryPipelineStatisticFlags bits = 0;
	if (flags & VK_QUEUE_GRAPHICS_BIT)
		bits |= (((VkQueryPipelineStatisticFlags)1 << CRUMBS_PIPELINE_COUNTERS) - 1) &
			~(VkQueryPipelineStatisticFlags)VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT;
	if (flags & VK_QUEUE_COMPUTE_BIT)
		bits |= VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT;
	return bits;
}

bool counters_device(const struct device_state *d)
{
	const uint32_t need = CRUMBS_FEATURE_PIPELINE_STATISTICS | CRUMBS_FEATURE_HOST_QUERY_RESET;
	return (d->features & need) == need;
}

enum crumbs_result counters_setup_queue(crumbs_context *ctx, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	VkQueueFamilyProperties families[64];
	uint32_t nf = 64;

	if (!counters_device(d) || ctx->counters < 0)
		return CRUMBS_OK;
	ctx->ifn.GetPhysicalDeviceQueueFamilyProperties(d->physical, &nf, families);
	if (q->family >= nf || !(q->stats_bits = bits_for(families[q->family].queueFlags)))
		return CRUMBS_OK;
	/* About two stretches a scope: one after its begin, one after its end. */
	q->stats_count = 2 * ctx->max_scopes;
	q->stats_words = (uint32_t)__builtin_popcount(q->stats_bits) + 1;
	q->stats_results = ctx_alloc(ctx, sizeof(uint64_t) * q->stats_words * q->stats_count);
	if (!q->stats_results)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	memset(q->stats_results, 0, sizeof(uint64_t) * q->stats_words * q->stats_count);
	VkQueryPoolCreateInfo qi = { VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, NULL, 0,
				     VK_QUERY_TYPE_PIPELINE_STATISTICS, q->stats_count,
				     q->stats_bits };
	VkResult r = d->fn.CreateQueryPool(d->device, &qi, ctx_vk_allocator(ctx), &q->stats_pool);
	if (r != VK_SUCCESS) {
		/* Captures go on without statistics. */
		ctx_log(ctx, CRUMBS_LOG_WARNING, "vkCreateQueryPool of %u pipeline statistics "
			"queries failed (%s): captures count none", q->stats_count, vk_result_str(r));
		q->stats_pool = VK_NULL_HANDLE;
		q->stats_bits = 0;
		return CRUMBS_OK;
	}
	d->fn.ResetQueryPool(d->device, q->stats_pool, 0, q->stats_count);
	return perfquery_setup_queue(ctx, q);
}

void counters_release_queue(crumbs_context *ctx, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	if (q->stats_pool)
		d->fn.DestroyQueryPool(d->device, q->stats_pool, ctx_vk_allocator(ctx));
	ctx_free(ctx, q->stats_results);
	perfquery_release_queue(ctx, q);
}

bool counters_in_run(const crumbs_context *ctx)
{
	return ctx->counters > 0 || (ctx->run_counters && ctx->counters == 0);
}

/* Whether a capture of set_count sets counts: a one-frame capture unless
 * the program said never, a run when asked to (counters_in_run). */
static bool counting(const crumbs_context *ctx, uint32_t set_count)
{
	return set_count == 1 ? ctx->counters >= 0 : counters_in_run(ctx);
}

void counters_preroll(crumbs_context *ctx, uint32_t set_count)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		if (!q->stats_pool)
			continue;
		/* Every query the last layout's sets may have used. */
		ctx->devices[q->device].fn.ResetQueryPool(ctx->devices[q->device].device,
							  q->stats_pool, 0, q->stats_count);
		uint32_t share = q->stats_count / (set_count ? set_count : 1);
		for (uint32_t k = 0; k < CAPTURE_SETS; k++) {
			struct capture_set *set = &ctx->sets[k];
			if (!set->queues)
				continue;
			struct set_queue *sq = &set->queues[i];
			sq->stats_first = k < set_count ? k * share : 0;
			sq->stats_end = k < set_count ? sq->stats_first + share : 0;
			atomic_store(&sq->stats_next, sq->stats_first);
		}
		memset(q->stats_results, 0, sizeof(uint64_t) * q->stats_words * q->stats_count);
		if (q->stats_adopted)
			memset(q->stats_adopted, ADOPTED_NOT, q->stats_count);
	}
	for (uint32_t k = 0; k < CAPTURE_SETS; k++)
		ctx->sets[k].counters = counting(ctx, set_count);
	perfquery_preroll(ctx, set_count);
}

void counters_set_reuse(crumbs_context *ctx, struct capture_set *set)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct set_queue *sq = &set->queues[i];
		uint32_t next = atomic_load(&sq->stats_next);
		if (next > sq->stats_end)
			next = sq->stats_end;
		if (q->stats_pool && next > sq->stats_first) {
			ctx->devices[q->device].fn.ResetQueryPool(ctx->devices[q->device].device,
								  q->stats_pool, sq->stats_first,
								  next - sq->stats_first);
			memset(q->stats_results + (size_t)q->stats_words * sq->stats_first, 0,
			       sizeof(uint64_t) * q->stats_words * (next - sq->stats_first));
			if (q->stats_adopted)
				memset(q->stats_adopted + sq->stats_first, ADOPTED_NOT,
				       next - sq->stats_first);
			perfquery_set_reuse(ctx, i, sq->stats_first, next - sq->stats_first);
		}
		atomic_store(&sq->stats_next, sq->stats_first);
	}
}

RECORD_PATH
uint32_t counters_take(struct set_queue *sq)
{
	if (atomic_load_explicit(&sq->stats_next, memory_order_relaxed) >= sq->stats_end)
		return COUNTER_UNKNOWN;
	uint32_t at = atomic_fetch_add(&sq->stats_next, 1);
	return at < sq->stats_end ? at : COUNTER_UNKNOWN;
}

RECORD_PATH
uint32_t counters_take_n(struct set_queue *sq, uint32_t n)
{
	if (!n || atomic_load_explicit(&sq->stats_next, memory_order_relaxed) + n > sq->stats_end)
		return COUNTER_UNKNOWN;
	uint32_t at = atomic_fetch_add(&sq->stats_next, n);
	return at + n <= sq->stats_end ? at : COUNTER_UNKNOWN;
}

/* Whether query i of q was read available. */
static bool read_available(const struct queue_state *q, uint32_t i)
{
	return q->stats_results[(size_t)q->stats_words * i + q->stats_words - 1] != 0;
}

/* Whether query i of q holds a standing recording's copied values: its
 * own query in q's pool was never begun, and is not read there. */
static bool adopted(const struct queue_state *q, uint32_t i)
{
	return q->stats_adopted && q->stats_adopted[i] != ADOPTED_NOT;
}

void counters_adopted_read(crumbs_context *ctx, struct capture_set *set, struct queue_state *q,
			   bool copied)
{
	struct set_queue *sq = &set->queues[q - ctx->queues];
	uint32_t next = atomic_load(&sq->stats_next);
	if (next > sq->stats_end)
		next = sq->stats_end;
	if (!q->stats_adopted || !set->counters)
		return;
	const struct device_state *d = &ctx->devices[q->device];
	bool invalidated = q->stats_copy.coherent;
	for (uint32_t i = sq->stats_first; i < next; i++) {
		if (q->stats_adopted[i] != ADOPTED_COPIED)
			continue;
		if (!copied) {
			q->stats_adopted[i] = ADOPTED_NEVER;
			continue;
		}
		if (!invalidated) {
			VkMappedMemoryRange range = { VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, NULL,
						      q->stats_copy.memory, 0, VK_WHOLE_SIZE };
			d->fn.InvalidateMappedMemoryRanges(d->device, 1, &range);
			invalidated = true;
		}
		size_t at = (size_t)q->stats_words * i;
		memcpy(q->stats_results + at, (const uint64_t *)q->stats_copy.mapped + at,
		       sizeof(uint64_t) * q->stats_words);
		q->stats_adopted[i] = read_available(q, i) ? ADOPTED_READ : ADOPTED_NEVER;
	}
}

bool counters_settled(const struct queue_state *q, uint32_t i)
{
	if (i == COUNTER_UNKNOWN || i >= q->stats_count || !q->stats_results)
		return true;
	return read_available(q, i) || (q->stats_adopted && q->stats_adopted[i] == ADOPTED_NEVER);
}

/* Reads queries [first, first + n) of q without waiting: those not
 * ended yet read unavailable. false when they cannot be read (the device
 * lost): they stay unavailable, and their stretches are written as
 * unknown. */
static bool read_run(const crumbs_context *ctx, struct queue_state *q, uint32_t first, uint32_t n)
{
	const struct device_state *d = &ctx->devices[q->device];
	size_t stride = sizeof(uint64_t) * q->stats_words;
	uint64_t *out = q->stats_results + (size_t)q->stats_words * first;
	VkResult r = d->fn.GetQueryPoolResults(d->device, q->stats_pool, first, n, stride * n, out,
					       stride, VK_QUERY_RESULT_64_BIT |
					       VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
	if (r == VK_SUCCESS || r == VK_NOT_READY)
		return true;
	memset(out, 0, stride * n);
	return false;
}

bool counters_poll(crumbs_context *ctx, struct capture_set *set)
{
	bool all = true;
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct set_queue *sq = &set->queues[i];
		uint32_t next = atomic_load(&sq->stats_next);
		if (next > sq->stats_end)
			next = sq->stats_end;
		if (!q->stats_pool)
			continue;
		/* Each query is read once it is available, and never again:
		 * lavapipe adds to a statistics query's result each time it
		 * is read. So only the runs still unavailable are read. */
		for (uint32_t k = sq->stats_first; k < next;) {
			if (read_available(q, k) || adopted(q, k)) {
				all = all && counters_settled(q, k);
				k++;
				continue;
			}
			uint32_t end = k + 1;
			while (end < next && !read_available(q, end) && !adopted(q, end))
				end++;
			if (!read_run(ctx, q, k, end - k))
				return true;
			for (; k < end; k++)
				all = all && read_available(q, k);
		}
	}
	return perfquery_poll(ctx, set) && all;
}

bool counters_values(const struct queue_state *q, uint32_t i,
		     uint64_t values[CRUMBS_PIPELINE_COUNTERS], uint32_t *mask)
{
	if (i == COUNTER_UNKNOWN || i >= q->stats_count || !q->stats_results)
		return false;
	const uint64_t *r = q->stats_results + (size_t)q->stats_words * i;
	if (!r[q->stats_words - 1])
		return false;
	uint32_t k = 0;
	for (uint32_t b = 0; b < CRUMBS_PIPELINE_COUNTERS; b++)
		if (q->stats_bits & (1u << b)) {
			/* A hostile or broken driver's value past the format's
			 * range is not a count. */
			if (r[k] > (uint64_t)INT64_MAX)
				return false;
			values[b] = r[k++];
		} else {
			values[b] = 0;
		}
	*mask = q->stats_bits;
	return true;
}
