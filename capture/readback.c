/* SPDX-License-Identifier: MIT */
/*
 * readback.c: a captured frame's timestamps back on the CPU. At the end of
 * the frame each queue copies the slots its set wrote into a host-visible
 * buffer, on the GPU, after its work, with the set's command buffer and
 * fence; each frame after it the copies' fences are polled and the
 * results read, never waiting, until every timestamp the frame wrote is
 * available. The sets' slots do not overlap, so neither do their copies.
 */
#include "capture_internal.h"

#include <string.h>

FRAME_PATH
static bool available(const struct queue_state *q, uint32_t slot)
{
	return slot != NO_SLOT && slot < q->slot_count && q->results[2 * slot + 1] != 0;
}

FRAME_PATH
uint64_t readback_ticks(const struct queue_state *q, uint32_t slot)
{
	if (!available(q, slot))
		return CRUMBS_NO_TICKS;
	uint64_t mask = q->valid_bits >= 64 ? UINT64_MAX : ((uint64_t)1 << q->valid_bits) - 1;
	return q->results[2 * slot] & mask;
}

/* The runs of q's pool that set's frame reads: its share, then the share
 * of the set it borrowed from. */
FRAME_PATH
static uint32_t read_runs(const crumbs_context *ctx, const struct capture_set *set,
			  const struct queue_state *q, struct slot_run runs[6], uint32_t *own)
{
	uint32_t i = (uint32_t)(q - ctx->queues);
	uint32_t n = pools_set_runs(q, &set->queues[i], runs);
	*own = n;
	if (set->borrows)
		n += pools_set_runs(q, &set->borrows->queues[i], runs + n);
	return n;
}

/* Marks the slots the events of cmd (and of the secondaries it executed)
 * wrote, in the pools they were recorded for. */
FRAME_PATH
static void mark_events(crumbs_context *ctx, struct capture_set *set, const struct crumbs_cmd *cmd,
			int depth)
{
	struct queue_state *q = &ctx->queues[cmd->queue];
	uint8_t mark = cmd->adopted ? SLOT_COPIED : cmd->borrowed ? SLOT_LENT : SLOT_WRITTEN;
	for (const struct event_block *b = cmd->first; b; b = b->next)
		for (uint32_t i = 0; i < b->count; i++) {
			const struct event *e = &b->events[i];
			if (e->type == EVENT_EXECUTE) {
				const struct crumbs_cmd *s = store_map_find(set, e->u.secondary);
				if (s && depth < MAX_EXECUTE_DEPTH)
					mark_events(ctx, set, s, depth + 1);
			} else if (e->slot != NO_SLOT && q->written && e->slot < q->slot_count) {
				/* An adopted recording's slot it wrote in the
				 * set's share itself is read as a capture's. */
				uint8_t m = e->flags & EVENT_POOL_SLOT ? SLOT_WRITTEN : mark;
				q->written[e->slot] = m;
				if (e->type == EVENT_LEAF && e->slot + 1 < q->slot_count)
					q->written[e->slot + 1] = m;
				set->queues[cmd->queue].marked = true;
			}
		}
}

/* Whether a queue of q's family is still copying an earlier frame's
 * results with set's command buffer. */
FRAME_PATH
static bool family_stale(const crumbs_context *ctx, const struct capture_set *set,
			 const struct queue_state *q)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		if (set->queues[i].copy_stale && queue_same_family(&ctx->queues[i], q))
			return true;
	return false;
}

/* In q's runs of the set (and of the set it borrowed from), marks `from`
 * become `to`. */
FRAME_PATH
static void marks_change(crumbs_context *ctx, const struct capture_set *set, struct queue_state *q,
			 uint8_t from, uint8_t to)
{
	struct slot_run runs[6];
	uint32_t own;
	for (uint32_t k = 0, n = read_runs(ctx, set, q, runs, &own); k < n; k++)
		for (uint32_t i = runs[k].first; i < runs[k].first + runs[k].count; i++)
			if (q->written[i] == from)
				q->written[i] = to;
}

/*
 * Records the copy of the slots s wrote, marked SLOT_WRITTEN in the pools of
 * its family, each into its pool's buffer: after everything before it on
 * s, waiting for each to be available (some drivers report a written
 * timestamp unavailable otherwise; only slots that are written are
 * copied, since a slot that never is would stall the queue), then made
 * visible to the host. The copy runs on s because a query's result is
 * only sure to be seen by a later command of the queue that wrote it.
 * When the set's command buffer already holds exactly these copies (a
 * run's frames mostly write the same slots), it is left as it is: it is
 * not pending (its fence said so), and recording it cost microseconds.
 */
FRAME_PATH
static VkResult record_copy(crumbs_context *ctx, struct capture_set *set, struct queue_state *s)
{
	struct device_state *d = &ctx->devices[s->device];
	VkCommandBuffer cb = s->copy_cb[set->index];
	struct copy_plan *held = &s->copy_held[set->index], *next = &s->copy_next;
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, 0, NULL };
	VkMemoryBarrier before = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, 0, 0 };
	VkMemoryBarrier after = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
				  VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT };

	next->count = 0;
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *p = &ctx->queues[i];
		if (!set->queues[i].marked || !queue_same_family(p, s))
			continue;
		struct slot_run runs[6];
		uint32_t own;
		for (uint32_t k = 0, n = read_runs(ctx, set, p, runs, &own); k < n; k++)
			if (!pools_plan_copies(ctx, next, p->pool, runs[k].first,
					       p->written + runs[k].first,
					       k < own ? SLOT_WRITTEN : SLOT_LENT,
					       runs[k].count, p->copy_buffer, runs[k].first))
				return VK_ERROR_OUT_OF_HOST_MEMORY;
	}
	if (held->valid && held->count == next->count &&
	    (next->count == 0 || memcmp(held->ops, next->ops, sizeof(*next->ops) * next->count) == 0))
		return VK_SUCCESS;
	held->valid = false;
	VkResult r = d->fn.BeginCommandBuffer(cb, &bi);
	if (r != VK_SUCCESS)
		return r;
	d->fn.CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
				 VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
	pools_record_plan(d, cb, next);
	d->fn.CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
				 VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, NULL, 0, NULL);
	/* Ordered after the copies of the same queries. The command buffer
	 * is mostly submitted again as it is, where the host's reset of the
	 * same slots costs microseconds of driver calls every frame. */
	if (d->features & CRUMBS_FEATURE_HOST_QUERY_RESET)
		pools_record_plan_resets(d, cb, next);
	if ((r = d->fn.EndCommandBuffer(cb)) != VK_SUCCESS)
		return r;
	struct copy_plan t = *held;
	*held = *next;
	*next = t;
	held->valid = true;
	return VK_SUCCESS;
}

/* Forgets what was read of the set's slots: those of an earlier frame
 * are stale, and a lost device leaves them undefined. The frame reads no
 * other slot. */
FRAME_PATH
static void results_clear(struct queue_state *q, const struct set_queue *sq)
{
	struct slot_run runs[3];
	for (uint32_t k = 0, n = pools_set_runs(q, sq, runs); k < n; k++)
		memset(q->results + 2 * runs[k].first, 0, sizeof(uint64_t) * 2 * runs[k].count);
}

/*
 * Marks what queue s wrote in the capture (its submissions' and pre-roll's
 * timestamps, and the scopes of the command buffers it ran, whichever
 * queue's pool they were recorded for: the layer records a family's
 * command buffers for its first queue, and a program may submit on
 * another queue of the family than it named) and submits its copy on s,
 * after its capture-frame work. crumbs_frame() runs while no submission
 * does, so s is free to submit on.
 */
FRAME_PATH
static void copy_queue(crumbs_context *ctx, struct capture_set *set, struct queue_state *s)
{
	struct device_state *d = &ctx->devices[s->device];
	struct set_queue *ss = &set->queues[s - ctx->queues];
	if (s->written && (ss->submit_count || ss->ready_slot != NO_SLOT)) {
		for (uint32_t k = 0; k < ss->submit_count; k++) {
			const struct submit_record *rec = &s->submits[ss->submit_first + k];
			s->written[rec->begin_slot] = SLOT_WRITTEN;
			s->written[rec->end_slot] = SLOT_WRITTEN;
		}
		if (ss->ready_slot != NO_SLOT)
			s->written[ss->ready_slot] = SLOT_WRITTEN;
		ss->marked = true;
	}
	for (uint32_t k = 0; k < ss->submit_count; k++) {
		const struct submit_record *rec = &s->submits[ss->submit_first + k];
		for (uint32_t c = 0; c < rec->cmd_count; c++)
			mark_events(ctx, set, set->submit_cmds[rec->first_cmd + c], 0);
	}

	VkCommandBuffer cb = s->copy_cb[set->index];
	bool can_copy = cb && !family_stale(ctx, set, s), any = false;
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		any |= set->queues[i].marked && queue_same_family(&ctx->queues[i], s);
	VkResult r = VK_INCOMPLETE;
	if (can_copy && any) {
		VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
		VkFence fence = s->copy_fence[set->index];
		r = record_copy(ctx, set, s);
		if (r == VK_SUCCESS && !ss->fence_clean)
			r = d->fn.ResetFences(d->device, 1, &fence);
		if (r == VK_SUCCESS) {
			ss->fence_clean = ss->fence_signalled = false;
			r = d->fn.QueueSubmit(s->queue, 1, &si, fence);
		}
		if (r == VK_SUCCESS)
			ss->copy_pending = true;
		else if (r == VK_ERROR_DEVICE_LOST)
			set->device_lost = true;
	}

	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *p = &ctx->queues[i];
		struct set_queue *sp = &set->queues[i];
		if (!sp->marked)
			continue;
		sp->marked = false;
		if (r == VK_SUCCESS && queue_same_family(p, s)) {
			marks_change(ctx, set, p, SLOT_WRITTEN, SLOT_COPIED);
			marks_change(ctx, set, p, SLOT_LENT, SLOT_LENT_COPIED);
			sp->copy_unread = true;
			continue;
		}
		/* SLOT_LENT slots stay so: without the copy, poll reads each. */
		marks_change(ctx, set, p, SLOT_WRITTEN, 0);
		/* A standing recording's copy ran in s's batches: without
		 * s's fence nothing says when it is done. */
		if (p == s)
			marks_change(ctx, set, p, SLOT_COPIED, 0);
		/* Written by a queue that cannot copy into p's buffer (one
		 * without the GPU copy, or of another family): p is read
		 * with vkGetQueryPoolResults, which sees every queue's. */
		if (!cb || !queue_same_family(p, s))
			sp->read_pool = true;
	}
}

FRAME_PATH
void readback_start(crumbs_context *ctx, struct capture_set *set)
{
	set->device_lost = ctx->device_lost;
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct set_queue *sq = &set->queues[i];
		struct device_state *d = &ctx->devices[q->device];
		if (q->results)
			results_clear(q, sq);
		sq->copy_unread = sq->read_pool = sq->marked = false;
		/* The copy of a frame that gave up waiting may still be
		 * queued: its command buffer and fence stay its own until it
		 * is done, and no copy of its family's is read in this frame. */
		sq->copy_stale = sq->copy_pending &&
				 d->fn.GetFenceStatus(d->device, q->copy_fence[set->index]) == VK_NOT_READY;
		if (sq->copy_stale)
			ctx_log(ctx, CRUMBS_LOG_WARNING, "the results of an earlier frame are still "
				"being copied on queue family %u; those of frame %llu there are not read",
				q->family, (unsigned long long)set->frame);
		else
			sq->copy_pending = false;
		if (!q->written)
			continue;
		struct slot_run runs[3];
		for (uint32_t k = 0, n = pools_set_runs(q, sq, runs); k < n; k++)
			memset(q->written + runs[k].first, 0, runs[k].count);
	}
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		copy_queue(ctx, set, &ctx->queues[i]);
	/* Whether the set's reuse resets slots on the host: those the
	 * copies did not reset. The frame that borrows from it may copy and
	 * reset more of them. */
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		set->queues[i].host_reset = pools_left_to_host(&ctx->queues[i], &set->queues[i]);
}

/* Whether every copy into q's buffer is done: the set's copies on the
 * queues of q's family. -1 when the device is lost. */
FRAME_PATH
static int copies_done(crumbs_context *ctx, struct capture_set *set, const struct queue_state *q)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *s = &ctx->queues[i];
		struct set_queue *ss = &set->queues[i];
		if (!ss->copy_pending || !queue_same_family(s, q))
			continue;
		struct device_state *d = &ctx->devices[s->device];
		VkResult r = d->fn.GetFenceStatus(d->device, s->copy_fence[set->index]);
		if (r == VK_NOT_READY)
			return 0;
		if (r != VK_SUCCESS)
			return -1;
		ss->copy_pending = false;
		ss->fence_signalled = true;
	}
	return 1;
}

FRAME_PATH
bool readback_copy_busy(crumbs_context *ctx, struct capture_set *set)
{
	for (uint32_t i = 0; set->queues && i < ctx->queue_count; i++) {
		struct set_queue *sq = &set->queues[i];
		struct device_state *d = &ctx->devices[ctx->queues[i].device];
		if (!sq->copy_pending)
			continue;
		VkResult r = d->fn.GetFenceStatus(d->device, ctx->queues[i].copy_fence[set->index]);
		if (r == VK_NOT_READY)
			return true;
		sq->copy_pending = false; /* done, or the device is lost: nothing runs */
		sq->fence_signalled = r == VK_SUCCESS;
	}
	return false;
}

void readback_recycle(crumbs_context *ctx, struct capture_set *set)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct set_queue *sq = &set->queues[i];
		struct device_state *d = &ctx->devices[q->device];
		if (sq->fence_signalled) /* and so not pending */
			sq->fence_clean = d->fn.ResetFences(d->device, 1,
							    &q->copy_fence[set->index]) == VK_SUCCESS;
		sq->fence_signalled = false;
	}
	store_reset(set);
	set->recycled = true;
}

/* Slots [first, first + count) of q's pool into its results, without
 * waiting: those not written yet read unavailable (VK_NOT_READY). */
FRAME_PATH
static VkResult read_pool(const struct device_state *d, struct queue_state *q, uint32_t first,
			  uint32_t count)
{
	return d->fn.GetQueryPoolResults(d->device, q->pool, first, count,
					 sizeof(uint64_t) * 2 * count, q->results + 2 * first,
					 sizeof(uint64_t) * 2,
					 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
}

/* Whether q's results of set come through its copy buffer, not from its
 * pool. */
FRAME_PATH
static bool through_copy(const struct queue_state *q, const struct set_queue *sq,
			 const struct capture_set *set)
{
	return q->copy_cb[set->index] && !sq->read_pool;
}

/* Reads a queue's results of the set. Returns false when the device is
 * lost. */
FRAME_PATH
static bool poll_queue(crumbs_context *ctx, struct capture_set *set, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	struct set_queue *sq = &set->queues[q - ctx->queues];
	struct slot_run runs[6];
	uint32_t own_count;
	uint32_t run_count = read_runs(ctx, set, q, runs, &own_count);
	if (through_copy(q, sq, set)) {
		if (!sq->copy_unread)
			return true;
		int done = copies_done(ctx, set, q);
		if (done == 0)
			return true;
		if (done < 0) {
			results_clear(q, sq);
			return false;
		}
		if (!q->copy_coherent) {
			VkMappedMemoryRange range = { VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, NULL,
						      q->copy_memory, 0, VK_WHOLE_SIZE };
			d->fn.InvalidateMappedMemoryRanges(d->device, 1, &range);
		}
		/* Only the copied slots: the rest of the buffer is stale. In
		 * the share borrowed from, only the lent ones: the rest are
		 * that frame's. Read here, on the program's thread, not where
		 * they lie by the output thread: a layer below may track the
		 * mapped memory with protected pages and a fault handler
		 * (GFXReconstruct's page guard), and the output thread, which
		 * blocks every signal, would be killed by the fault. */
		for (uint32_t k = 0; k < run_count; k++)
			for (uint32_t i = runs[k].first; i < runs[k].first + runs[k].count; i++) {
				bool copied = q->written[i] ==
					      (k < own_count ? SLOT_COPIED : SLOT_LENT_COPIED);
				if (k >= own_count && !copied)
					continue;
				q->results[2 * i] = copied ? q->copy_mapped[2 * i] : 0;
				q->results[2 * i + 1] = copied ? q->copy_mapped[2 * i + 1] : 0;
			}
		counters_adopted_read(ctx, set, q, true);
		sq->copy_unread = false;
		return true;
	}
	/* The standing recordings' statistics were copied, but nothing says
	 * when: they are unknown. */
	counters_adopted_read(ctx, set, q, false);
	/* Without VK_QUERY_RESULT_WAIT_BIT: slots not written yet report
	 * unavailable, and the call returns VK_NOT_READY. Of the share
	 * borrowed from, the lent slots one by one. */
	VkResult r = VK_SUCCESS;
	for (uint32_t k = 0; k < run_count && (r == VK_SUCCESS || r == VK_NOT_READY); k++) {
		uint32_t first = runs[k].first, end = first + runs[k].count;
		if (k < own_count) {
			r = read_pool(d, q, first, end - first);
			continue;
		}
		for (uint32_t i = first; i < end && (r == VK_SUCCESS || r == VK_NOT_READY); i++)
			if (q->written[i] == SLOT_LENT)
				r = read_pool(d, q, i, 1);
	}
	if (r == VK_SUCCESS || r == VK_NOT_READY)
		return true;
	if (r != VK_ERROR_DEVICE_LOST)
		ctx_log(ctx, CRUMBS_LOG_ERROR, "vkGetQueryPoolResults failed (%d)", (int)r);
	/* What was read before is undefined now; nothing of it is kept. */
	results_clear(q, sq);
	return false;
}

/* Whether every slot the events of cmd (and its secondaries) wrote is
 * available. */
FRAME_PATH
static bool events_ready(crumbs_context *ctx, struct capture_set *set, const struct crumbs_cmd *cmd,
			 int depth)
{
	const struct queue_state *q = &ctx->queues[cmd->queue];
	for (const struct event_block *b = cmd->first; b; b = b->next)
		for (uint32_t i = 0; i < b->count; i++) {
			const struct event *e = &b->events[i];
			if (e->type == EVENT_EXECUTE) {
				const struct crumbs_cmd *s = store_map_find(set, e->u.secondary);
				if (s && depth < MAX_EXECUTE_DEPTH &&
				    !events_ready(ctx, set, s, depth + 1))
					return false;
			} else if ((e->type == EVENT_STRETCH || e->type == EVENT_LEAF_STRETCH) &&
				   e->u.counts != COUNTER_UNKNOWN) {
				if (!counters_settled(q, e->u.counts) ||
				    !perfquery_ready(q, e->u.counts))
					return false;
			} else if (e->slot != NO_SLOT && (!available(q, e->slot) ||
				   (e->type == EVENT_LEAF && !available(q, e->slot + 1)))) {
				return false;
			}
		}
	return true;
}

static bool all_ready(crumbs_context *ctx, struct capture_set *set)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		const struct queue_state *q = &ctx->queues[i];
		const struct set_queue *sq = &set->queues[i];
		if (!q->valid_bits)
			continue;
		if (sq->ready_slot != NO_SLOT && !available(q, sq->ready_slot))
			return false;
		for (uint32_t k = 0; k < sq->submit_count; k++) {
			const struct submit_record *s = &q->submits[sq->submit_first + k];
			if (!available(q, s->begin_slot) || !available(q, s->end_slot))
				return false;
			for (uint32_t c = 0; c < s->cmd_count; c++)
				if (!events_ready(ctx, set, set->submit_cmds[s->first_cmd + c], 0))
					return false;
		}
	}
	return true;
}

void readback_wait(crumbs_context *ctx, struct capture_set *set)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		if (!set->queues[i].copy_pending || !q->copy_fence[set->index])
			continue;
		struct device_state *d = &ctx->devices[q->device];
		/* What it returns is read by copies_done() next. */
		(void)d->fn.WaitForFences(d->device, 1, &q->copy_fence[set->index], VK_TRUE,
					  (uint64_t)RESOLVE_NS);
	}
}

/* Whether a run's frame has every result it can get: each timed queue's
 * came with its copies, which are read. Waiting longer brings nothing,
 * and the output thread, which reads every timestamp to write it, finds
 * those missing at no cost to the program's thread. */
FRAME_PATH
static bool copies_read(crumbs_context *ctx, const struct capture_set *set)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		const struct set_queue *sq = &set->queues[i];
		if (ctx->queues[i].valid_bits &&
		    (!through_copy(&ctx->queues[i], sq, set) || sq->copy_unread))
			return false;
	}
	return true;
}

FRAME_PATH
bool readback_poll(crumbs_context *ctx, struct capture_set *set, bool *lost)
{
	*lost = set->device_lost || ctx->device_lost;
	set->unchecked = false;
	for (uint32_t i = 0; i < ctx->queue_count && !*lost; i++)
		if (ctx->queues[i].valid_bits && !poll_queue(ctx, set, &ctx->queues[i]))
			*lost = true;
	if (*lost)
		return false;
	/* Read before the events are looked at: they wait for their
	 * stretches too. */
	if (set->counters)
		(void)counters_poll(ctx, set);
	set->unchecked = ctx->set_count > 1 && copies_read(ctx, set);
	return set->unchecked || all_ready(ctx, set);
}
