/* SPDX-License-Identifier: MIT */
/*
 * pools.c: each queue's timestamp query pool and its layout in slots (the
 * scopes', two per submission, the pre-roll's ring, the bracketed
 * calibration's) and its shares for the capture sets, the command
 * buffers crumbs records once for it, the resets of what a set wrote, and
 * the copy of its written runs.
 */
#include "capture_internal.h"

#include <string.h>

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

/* A host-visible buffer of `size` bytes that the GPU copies query results
 * into, bound and mapped; cached for reading on the CPU when there is
 * such. false, with nothing made, when any of it fails. */
bool pools_host_buffer(crumbs_context *ctx, const struct device_state *d, VkDeviceSize size,
		       struct host_buffer *out)
{
	const VkAllocationCallbacks *alloc = ctx_vk_allocator(ctx);
	VkBufferCreateInfo bi = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, size,
				  VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_SHARING_MODE_EXCLUSIVE, 0, NULL };
	VkPhysicalDeviceMemoryProperties mp;
	VkMemoryRequirements req;
	uint32_t type = UINT32_MAX;
	void *mapped;

	memset(out, 0, sizeof(*out));
	if (d->fn.CreateBuffer(d->device, &bi, alloc, &out->buffer) != VK_SUCCESS) {
		out->buffer = VK_NULL_HANDLE;
		return false;
	}
	d->fn.GetBufferMemoryRequirements(d->device, out->buffer, &req);
	ctx->ifn.GetPhysicalDeviceMemoryProperties(d->physical, &mp);
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
	if (type == UINT32_MAX ||
	    d->fn.AllocateMemory(d->device, &ai, alloc, &out->memory) != VK_SUCCESS) {
		out->memory = VK_NULL_HANDLE;
		pools_host_buffer_release(ctx, d, out);
		return false;
	}
	if (d->fn.BindBufferMemory(d->device, out->buffer, out->memory, 0) != VK_SUCCESS ||
	    d->fn.MapMemory(d->device, out->memory, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS) {
		pools_host_buffer_release(ctx, d, out);
		return false;
	}
	out->mapped = mapped;
	out->coherent = (mp.memoryTypes[type].propertyFlags &
			 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
	return true;
}

void pools_host_buffer_release(crumbs_context *ctx, const struct device_state *d,
			       struct host_buffer *b)
{
	const VkAllocationCallbacks *alloc = ctx_vk_allocator(ctx);
	if (b->memory)
		d->fn.FreeMemory(d->device, b->memory, alloc);
	if (b->buffer)
		d->fn.DestroyBuffer(d->device, b->buffer, alloc);
	memset(b, 0, sizeof(*b));
}

/*
 * A host-visible buffer the queue's results are copied into, and for each
 * capture set a command buffer for the copy, recorded when its frame ends
 * (readback.c), and its fence.
 * When any of it fails, results are read with vkGetQueryPoolResults.
 */
static void setup_copy(crumbs_context *ctx, struct device_state *d, struct queue_state *q)
{
	const VkAllocationCallbacks *alloc = ctx_vk_allocator(ctx);
	struct host_buffer b;
	VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
	VkCommandBufferAllocateInfo ci = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   q->cmd_pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, CAPTURE_SETS };

	if (!pools_host_buffer(ctx, d, sizeof(uint64_t) * 2 * q->slot_count, &b))
		goto fail;
	q->copy_buffer = b.buffer;
	q->copy_memory = b.memory;
	for (uint32_t k = 0; k < CAPTURE_SETS; k++)
		if (d->fn.CreateFence(d->device, &fi, alloc, &q->copy_fence[k]) != VK_SUCCESS) {
			q->copy_fence[k] = VK_NULL_HANDLE;
			goto fail;
		}
	q->copy_mapped = b.mapped;
	q->copy_coherent = b.coherent;
	q->written = ctx_alloc(ctx, q->slot_count);
	if (!q->written || d->fn.AllocateCommandBuffers(d->device, &ci, q->copy_cb) != VK_SUCCESS)
		goto fail;
	ctx_new_cbs(ctx, d, q->copy_cb, CAPTURE_SETS);
	return;
fail:
	ctx_log(ctx, CRUMBS_LOG_WARNING, "cannot set up reading results on the GPU; "
		"reading them with vkGetQueryPoolResults");
	for (uint32_t k = 0; k < CAPTURE_SETS; k++) {
		if (q->copy_fence[k])
			d->fn.DestroyFence(d->device, q->copy_fence[k], alloc);
		q->copy_fence[k] = VK_NULL_HANDLE;
		q->copy_cb[k] = VK_NULL_HANDLE;
	}
	b = (struct host_buffer){ q->copy_buffer, q->copy_memory, NULL, false };
	pools_host_buffer_release(ctx, d, &b);
	q->copy_memory = VK_NULL_HANDLE;
	q->copy_buffer = VK_NULL_HANDLE;
	q->copy_mapped = NULL;
	ctx_free(ctx, q->written);
	q->written = NULL;
}

/* Set k of `sets` (1 or CAPTURE_SETS): its scope slots and submissions,
 * and its reset command buffers' index in q->reset_cbs. */
struct share {
	uint32_t scope_first, scope_end, submit_first, submit_end, resets;
};

static struct share share_of(const crumbs_context *ctx, const struct queue_state *q,
			     uint32_t sets, uint32_t k)
{
	uint32_t m = ctx->max_submissions;
	return (struct share){ (uint32_t)((uint64_t)q->scope_slots * k / sets),
			       (uint32_t)((uint64_t)q->scope_slots * (k + 1) / sets),
			       m * k / sets, m * (k + 1) / sets, sets == 1 ? 0 : 1 + k };
}

enum crumbs_result pools_setup_queue(crumbs_context *ctx, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	const VkAllocationCallbacks *alloc = ctx_vk_allocator(ctx);
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
	/* Pipeline statistics need no timestamps. */
	enum crumbs_result cr = counters_setup_queue(ctx, q);
	if (cr != CRUMBS_OK || !q->valid_bits)
		return cr;

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

	uint32_t count = 2 * ctx->max_submissions + READY_RING + 2 * (1 + CAPTURE_SETS);
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
	/* Each layout's resets of each set's slots: its scope slots, and its
	 * submissions' (the last set's also the pre-roll's and the
	 * bracketed sample's, up to the end of the pool). */
	for (uint32_t i = 0; i < 1 + CAPTURE_SETS && q->can_reset_in_cmd; i++) {
		struct share sh = share_of(ctx, q, i ? CAPTURE_SETS : 1, i ? i - 1 : 0);
		uint32_t first = q->submit_base + 2 * sh.submit_first;
		uint32_t end = sh.submit_end == ctx->max_submissions ? q->slot_count :
			       q->submit_base + 2 * sh.submit_end;
		VkCommandBuffer *mine = cbs + 2 * ctx->max_submissions + READY_RING + 2 * i;
		if (r == VK_SUCCESS && end > first) {
			q->reset_cbs[i] = mine[0];
			r = record_fixed(d, q, mine[0], first, end - first);
		}
		if (r == VK_SUCCESS && sh.scope_end > sh.scope_first) {
			q->scope_reset_cbs[i] = mine[1];
			r = record_fixed(d, q, mine[1], sh.scope_first, sh.scope_end - sh.scope_first);
		}
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

void pools_release_queue(crumbs_context *ctx, struct queue_state *q)
{
	const VkAllocationCallbacks *alloc = ctx_vk_allocator(ctx);
	struct device_state *d = &ctx->devices[q->device];
	if (q->pool)
		d->fn.DestroyQueryPool(d->device, q->pool, alloc);
	counters_release_queue(ctx, q);
	for (uint32_t k = 0; k < CAPTURE_SETS; k++)
		if (q->copy_fence[k])
			d->fn.DestroyFence(d->device, q->copy_fence[k], alloc);
	if (q->copy_buffer)
		d->fn.DestroyBuffer(d->device, q->copy_buffer, alloc);
	if (q->copy_memory)
		d->fn.FreeMemory(d->device, q->copy_memory, alloc);
	if (q->cmd_pool)
		d->fn.DestroyCommandPool(d->device, q->cmd_pool, alloc);
	for (uint32_t k = 0; k < CAPTURE_SETS; k++)
		ctx_free(ctx, q->copy_held[k].ops);
	ctx_free(ctx, q->copy_next.ops);
	ctx_free(ctx, q->submits);
	ctx_free(ctx, q->begin_cbs);
	ctx_free(ctx, q->results);
	ctx_free(ctx, q->scratch_cbs);
	ctx_free(ctx, q->scratch_cbinfos);
	ctx_free(ctx, q->scratch_submits);
	ctx_free(ctx, q->written);
}

/* Whether a slot so marked was reset by the copy that copied it (with
 * host query reset; enum slot_mark). */
static inline bool reset_by_copy(uint8_t mark)
{
	return mark == SLOT_COPIED || mark == SLOT_LENT_COPIED;
}

FRAME_PATH
bool pools_left_to_host(const struct queue_state *q, const struct set_queue *sq)
{
	struct slot_run runs[3];
	if (!q->written)
		return true;
	for (uint32_t k = 0, n = pools_set_runs(q, sq, runs); k < n; k++)
		for (uint32_t i = runs[k].first; i < runs[k].first + runs[k].count; i++)
			if (!reset_by_copy(q->written[i]))
				return true;
	return false;
}

/* Resets slots [run.first, run.first + run.count) of q's pool on the
 * host; with `all` false, but for those a copy that is done has reset. */
FRAME_PATH
static void host_reset(const struct device_state *d, const struct queue_state *q,
		       struct slot_run run, bool all)
{
	uint32_t end = run.first + run.count;
	if (all || !q->written) {
		d->fn.ResetQueryPool(d->device, q->pool, run.first, run.count);
		return;
	}
	for (uint32_t i = run.first; i < end;) {
		while (i < end && reset_by_copy(q->written[i]))
			i++;
		uint32_t j = i;
		while (j < end && !reset_by_copy(q->written[j]))
			j++;
		if (j > i)
			d->fn.ResetQueryPool(d->device, q->pool, i, j - i);
		i = j;
	}
}

/* Resets on the host what the set wrote last (`all`, or only what its
 * copies did not reset); or, without host resets, has its resets put in
 * front of the next submissions, with command buffers recorded once.
 * Those reset the set's whole share of the pool, which takes the GPU
 * milliseconds on some drivers in front of the frame's first submission:
 * the resets of the runs written cost a few microseconds instead. */
FRAME_PATH
static void set_reset(crumbs_context *ctx, struct capture_set *set, bool all)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct set_queue *sq = &set->queues[i];
		struct device_state *d = &ctx->devices[q->device];
		if (!q->valid_bits)
			continue;
		if (d->features & CRUMBS_FEATURE_HOST_QUERY_RESET) {
			if (!all && !sq->host_reset)
				continue;
			struct slot_run runs[3];
			for (uint32_t k = 0, n = pools_set_runs(q, sq, runs); k < n; k++)
				host_reset(d, q, runs[k], all);
		} else {
			sq->reset_pending = sq->reset_cb != VK_NULL_HANDLE;
			atomic_store(&sq->scope_reset_pending, sq->scope_reset_cb != VK_NULL_HANDLE);
			atomic_fetch_add(&ctx->resets_posted, 1);
		}
	}
}

/* The set's counts start again. */
FRAME_PATH
static void set_restart(crumbs_context *ctx, struct capture_set *set)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct set_queue *sq = &set->queues[i];
		atomic_store(&sq->scope_next, sq->scope_first);
		sq->submit_count = 0;
		sq->ready_slot = NO_SLOT;
		sq->host_reset = true;
		for (uint32_t k = 0; k < SPARE_SLOTS; k++)
			atomic_store_explicit(&sq->spare[k], NO_SLOT, memory_order_relaxed);
	}
}

void pools_preroll(crumbs_context *ctx, uint32_t set_count)
{
	/* What the sets wrote, as they were laid out: every other slot is
	 * still reset, since creation. */
	for (uint32_t k = 0; k < CAPTURE_SETS; k++) {
		struct capture_set *set = &ctx->sets[k];
		if (!set->queues)
			continue;
		for (uint32_t i = 0; i < ctx->queue_count; i++) {
			set->queues[i].reset_pending = false;
			atomic_store(&set->queues[i].scope_reset_pending, false);
		}
		set_reset(ctx, set, true);
	}
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct device_state *d = &ctx->devices[q->device];
		if (q->valid_bits && q->ready_next && (d->features & CRUMBS_FEATURE_HOST_QUERY_RESET))
			d->fn.ResetQueryPool(d->device, q->pool, q->ready_base, q->ready_next);
		q->ready_next = 0;
		q->ready_slot = NO_SLOT;
	}
	/* The new layout. Without host resets, its sets' resets cover the
	 * whole pool, whatever the last layout wrote. */
	for (uint32_t k = 0; k < CAPTURE_SETS; k++) {
		struct capture_set *set = &ctx->sets[k];
		if (!set->queues)
			continue;
		for (uint32_t i = 0; i < ctx->queue_count; i++) {
			struct queue_state *q = &ctx->queues[i];
			struct set_queue *sq = &set->queues[i];
			bool used = k < set_count;
			struct share sh = share_of(ctx, q, set_count, used ? k : 0);
			sq->scope_first = sh.scope_first;
			sq->scope_end = used ? sh.scope_end : sh.scope_first;
			sq->submit_first = sh.submit_first;
			sq->submit_cap = used ? sh.submit_end - sh.submit_first : 0;
			sq->reset_cb = used ? q->reset_cbs[sh.resets] : VK_NULL_HANDLE;
			sq->scope_reset_cb = used ? q->scope_reset_cbs[sh.resets] : VK_NULL_HANDLE;
			bool cmd_reset = q->valid_bits &&
				!(ctx->devices[q->device].features & CRUMBS_FEATURE_HOST_QUERY_RESET);
			sq->reset_pending = cmd_reset && sq->reset_cb;
			atomic_store(&sq->scope_reset_pending, cmd_reset && sq->scope_reset_cb);
		}
		set_restart(ctx, set);
	}
	counters_preroll(ctx, set_count);
	atomic_fetch_add(&ctx->resets_posted, 1);
}

FRAME_PATH
void pools_set_reuse(crumbs_context *ctx, struct capture_set *set)
{
	set_reset(ctx, set, false);
	set_restart(ctx, set);
	counters_set_reuse(ctx, set);
}

FRAME_PATH
uint32_t pools_set_runs(const struct queue_state *q, const struct set_queue *sq,
			struct slot_run runs[3])
{
	uint32_t n = 0, next = atomic_load(&sq->scope_next);
	if (next > sq->scope_end)
		next = sq->scope_end; /* takes past the end were refused */
	if (next > sq->scope_first)
		runs[n++] = (struct slot_run){ sq->scope_first, next - sq->scope_first };
	if (sq->submit_count)
		runs[n++] = (struct slot_run){ q->submit_base + 2 * sq->submit_first,
					       2 * sq->submit_count };
	if (sq->ready_slot != NO_SLOT)
		runs[n++] = (struct slot_run){ sq->ready_slot, 1 };
	return n;
}

/*
 * Two query slots, for the scope's begin and end, so that a scope that
 * began timed can always end timed. As the set's slots fill, deeper
 * scopes need more free slots to get any: when slots run out, the deepest
 * scopes are the ones recorded untimed.
 */
RECORD_PATH
uint32_t pools_take_slots(struct set_queue *sq, uint32_t depth, uint32_t count)
{
	uint32_t size = sq->scope_end - sq->scope_first;
	uint32_t reserve = (size / 64) * depth;
	uint32_t used = atomic_load(&sq->scope_next) - sq->scope_first;
	if (used + count + reserve > size)
		return NO_SLOT;
	uint32_t at = atomic_fetch_add(&sq->scope_next, count);
	if (at + count > sq->scope_end)
		return NO_SLOT;
	return at;
}

RECORD_PATH
void pools_spare_put(struct set_queue *sq, uint32_t slot)
{
	for (uint32_t k = 0; k < SPARE_SLOTS; k++) {
		uint32_t none = NO_SLOT;
		if (atomic_compare_exchange_strong(&sq->spare[k], &none, slot))
			return;
	}
}

RECORD_PATH
uint32_t pools_spare_take(struct set_queue *sq)
{
	for (uint32_t k = 0; k < SPARE_SLOTS; k++)
		if (atomic_load_explicit(&sq->spare[k], memory_order_relaxed) != NO_SLOT) {
			uint32_t slot = atomic_exchange(&sq->spare[k], NO_SLOT);
			if (slot != NO_SLOT)
				return slot;
		}
	return NO_SLOT;
}

/* The next run of marks[i] == mark at or after *first, as [*first, *end);
 * false when there is none before count. */
FRAME_PATH
static bool next_marked_run(const uint8_t *marks, uint8_t mark, uint32_t count, uint32_t *first,
			    uint32_t *end)
{
	uint32_t i = *first;
	while (i < count && marks[i] != mark)
		i++;
	if (i == count)
		return false;
	uint32_t e = i;
	while (e < count && marks[e] == mark)
		e++;
	*first = i;
	*end = e;
	return true;
}

static void record_one_copy(const struct device_state *d, VkCommandBuffer cb, VkQueryPool pool,
			    uint32_t first_query, uint32_t count, VkBuffer buffer,
			    uint32_t first_slot)
{
	d->fn.CmdCopyQueryPoolResults(cb, pool, first_query, count, buffer,
				      sizeof(uint64_t) * 2 * first_slot, sizeof(uint64_t) * 2,
				      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT |
				      VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
}

void pools_copy_marked(const struct device_state *d, VkCommandBuffer cb, VkQueryPool pool,
		       uint32_t first_query, const uint8_t *marks, uint8_t mark, uint32_t count,
		       VkBuffer buffer, uint32_t first_slot)
{
	for (uint32_t first = 0, end; next_marked_run(marks, mark, count, &first, &end); first = end)
		record_one_copy(d, cb, pool, first_query + first, end - first, buffer,
				first_slot + first);
}

FRAME_PATH
bool pools_plan_copies(crumbs_context *ctx, struct copy_plan *plan, VkQueryPool pool,
		       uint32_t first_query, const uint8_t *marks, uint8_t mark, uint32_t count,
		       VkBuffer buffer, uint32_t first_slot)
{
	for (uint32_t first = 0, end; next_marked_run(marks, mark, count, &first, &end); first = end) {
		/* Tested here: the frame's path calls nothing outside it for a
		 * plan that has room, as it almost always has. */
		if (plan->count == plan->cap &&
		    !ctx_grow(ctx, (void **)&plan->ops, &plan->cap, plan->count + 1,
			      sizeof(*plan->ops), 16))
			return false;
		/* Field by field: the list is compared with memcmp. */
		struct copy_op *op = &plan->ops[plan->count++];
		memset(op, 0, sizeof(*op));
		op->pool = pool;
		op->buffer = buffer;
		op->first_query = first_query + first;
		op->count = end - first;
		op->first_slot = first_slot + first;
	}
	return true;
}

void pools_record_plan(const struct device_state *d, VkCommandBuffer cb,
		       const struct copy_plan *plan)
{
	for (uint32_t i = 0; i < plan->count; i++) {
		const struct copy_op *op = &plan->ops[i];
		record_one_copy(d, cb, op->pool, op->first_query, op->count, op->buffer,
				op->first_slot);
	}
}

void pools_record_plan_resets(const struct device_state *d, VkCommandBuffer cb,
			      const struct copy_plan *plan)
{
	for (uint32_t i = 0; i < plan->count; i++)
		d->fn.CmdResetQueryPool(cb, plan->ops[i].pool, plan->ops[i].first_query,
					plan->ops[i].count);
}

/*
 * Without host query resets, a set's scope slots in a pool are reset in
 * front of the first submission after the set is taken (again) on any
 * queue of its family, which takes the resets of every pool of the family:
 * command buffers recorded for one queue may run on another queue of the
 * family (the layer records a family's for its first queue), so a reset in
 * front of the pool's own queue's first submission could come after they
 * wrote their timestamps, erase them, and leave the copy that waits for
 * them waiting. Taking them atomically has each done once when queues
 * submit on several threads. A reset on one queue comes before work on
 * another only by the program's own ordering of the two, as in a frame
 * that follows the pre-roll. The set's other slots, which only q writes,
 * are reset in front of q's own next submission. Returns how many were put
 * in out: the scope resets first.
 */
uint32_t pools_resets_take(crumbs_context *ctx, struct queue_state *q, VkCommandBuffer *out)
{
	uint32_t n = 0, qi = (uint32_t)(q - ctx->queues);
	for (uint32_t k = 0; k < CAPTURE_SETS; k++) {
		struct capture_set *set = &ctx->sets[k];
		for (uint32_t i = 0; set->queues && i < ctx->queue_count; i++) {
			struct set_queue *sp = &set->queues[i];
			if (sp->scope_reset_cb && queue_same_family(&ctx->queues[i], q) &&
			    atomic_exchange(&sp->scope_reset_pending, false))
				out[n++] = sp->scope_reset_cb;
		}
	}
	q->scope_resets_taken = n;
	for (uint32_t k = 0; k < CAPTURE_SETS; k++) {
		struct capture_set *set = &ctx->sets[k];
		if (set->queues && set->queues[qi].reset_pending)
			out[n++] = set->queues[qi].reset_cb;
	}
	q->resets_taken = n;
	return n;
}

/*
 * The most pools_resets_take() can take now. Each submission asks, so the
 * sets are looked at only when resets were posted since q's submissions
 * last found none (where the host resets the slots, once a run: only the
 * pre-roll posts). A reset is marked pending before its post is counted,
 * and the count is read before the marks: a post during the look is found
 * by the next.
 */
FRAME_PATH
uint32_t pools_resets_due(crumbs_context *ctx, struct queue_state *q)
{
	uint32_t posted = atomic_load(&ctx->resets_posted);
	if (posted == q->resets_none_at)
		return 0;
	uint32_t n = 0, qi = (uint32_t)(q - ctx->queues);
	for (uint32_t k = 0; k < CAPTURE_SETS; k++) {
		struct capture_set *set = &ctx->sets[k];
		for (uint32_t i = 0; set->queues && i < ctx->queue_count; i++)
			n += queue_same_family(&ctx->queues[i], q) &&
			     atomic_load(&set->queues[i].scope_reset_pending);
		n += set->queues && set->queues[qi].reset_pending;
	}
	if (n == 0)
		q->resets_none_at = posted;
	return n;
}

/* The resets taken for a submission that was not made, for the next. The
 * scope resets lie at the front of q's scratch command buffers; q's own
 * stay pending until a submission with them is made (pools_resets_done). */
void pools_resets_return(crumbs_context *ctx, struct queue_state *q)
{
	for (uint32_t t = 0; t < q->scope_resets_taken; t++)
		for (uint32_t k = 0; k < CAPTURE_SETS; k++)
			for (uint32_t i = 0; ctx->sets[k].queues && i < ctx->queue_count; i++)
				if (ctx->sets[k].queues[i].scope_reset_cb == q->scratch_cbs[t])
					atomic_store(&ctx->sets[k].queues[i].scope_reset_pending, true);
	if (q->resets_taken)
		atomic_fetch_add(&ctx->resets_posted, 1);
	q->scope_resets_taken = q->resets_taken = 0;
}

/* A submission with the resets taken was made. */
FRAME_PATH
void pools_resets_done(crumbs_context *ctx, struct queue_state *q)
{
	uint32_t qi = (uint32_t)(q - ctx->queues);
	if (q->resets_taken > q->scope_resets_taken)
		for (uint32_t k = 0; k < CAPTURE_SETS; k++)
			if (ctx->sets[k].queues)
				ctx->sets[k].queues[qi].reset_pending = false;
	q->scope_resets_taken = q->resets_taken = 0;
}
