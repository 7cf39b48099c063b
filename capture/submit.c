/* SPDX-License-Identifier: MIT */
/*
 * submit.c: the submission wrappers. In a capture frame every batch is
 * bracketed by crumbs' own pre-recorded timestamp command buffers and
 * recorded with its CPU time, its command buffers' scopes and its
 * semaphores; in the pre-roll, each submission's end is timed. Otherwise
 * the call passes straight through.
 */
#include "capture_internal.h"

#include <string.h>

/* Binary waits whose signal came before the capture: an id no signal
 * has, so the analyzer resolves them when the work starts. */
#define UNSIGNALLED_SEMAPHORE UINT32_MAX

enum crumbs_result submit_set_init(crumbs_context *ctx, struct capture_set *set)
{
	set->submit_cmd_cap = ctx->max_command_buffers * 2;
	set->op_cap = 4096;
	set->ops = ctx_alloc(ctx, sizeof(*set->ops) * set->op_cap);
	set->semaphore_cap = 1024;
	set->semaphores = ctx_alloc(ctx, sizeof(*set->semaphores) * set->semaphore_cap);
	set->host_signal_cap = 1024;
	set->host_signals = ctx_alloc(ctx, sizeof(*set->host_signals) * set->host_signal_cap);
	struct crumbs_cmd **cmds = ctx_alloc(ctx, sizeof(*cmds) * set->submit_cmd_cap);
	if (!cmds || !set->ops || !set->semaphores || !set->host_signals) {
		ctx_free(ctx, cmds);
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	set->submit_cmds = cmds; /* last: the set is ready */
	return CRUMBS_OK;
}

enum crumbs_result submit_init(crumbs_context *ctx)
{
	if (pthread_mutex_init(&ctx->submit_lock, NULL) != 0)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	ctx->submit_lock_ready = true;
	return submit_set_init(ctx, &ctx->sets[0]);
}

/* Whatever submit_init and submit_set_init reached. */
void submit_release(crumbs_context *ctx)
{
	if (ctx->submit_lock_ready)
		pthread_mutex_destroy(&ctx->submit_lock);
	for (uint32_t i = 0; i < CAPTURE_SETS; i++) {
		struct capture_set *set = &ctx->sets[i];
		ctx_free(ctx, set->submit_cmds);
		ctx_free(ctx, set->ops);
		ctx_free(ctx, set->semaphores);
		ctx_free(ctx, set->host_signals);
	}
}

FRAME_PATH
void submit_reset(crumbs_context *ctx, struct capture_set *set)
{
	set->submit_cmd_count = 0;
	set->op_count = 0;
	set->semaphore_count = 0;
	set->host_signal_count = 0;
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		set->queues[i].labels = NULL;
}

/*
 * Queue labels (vkQueueBeginDebugUtilsLabelEXT and its end) wrap
 * submissions. Their events wait in a handle of their own and go in front
 * of the next batch on the queue, timed by that batch's begin timestamp:
 * a label begins when the work after it does, and one that ends between
 * submissions ends when the next starts, which adds no busy time to it.
 * The program synchronises its use of a queue, so no lock is needed.
 */
void submit_queue_label(crumbs_context *ctx, VkQueue queue, const char *name)
{
	struct queue_state *q = queue_find(ctx, queue);
	struct capture_set *set = atomic_load(&ctx->cur);
	if (!q || !set)
		return;
	struct set_queue *sq = &set->queues[q - ctx->queues];
	if (!sq->labels && !(sq->labels = store_handle(ctx, set, q)))
		return;
	struct event *e = store_event(sq->labels);
	if (!e) {
		atomic_fetch_add(&set->dropped, 1);
		return;
	}
	e->type = name ? EVENT_BEGIN : EVENT_END;
	e->level = 0;
	e->flags = 0;
	e->slot = NO_SLOT;
	if (name)
		store_name(set, &e->u.name, name, strlen(name));
}

/* One batch of either submit call, read the same way. */
struct batch_view {
	uint32_t cb_count;
	const VkCommandBuffer *cbs;                /* vkQueueSubmit */
	const VkCommandBufferSubmitInfo *cbinfos;  /* vkQueueSubmit2 */
	uint32_t wait_count;
	uint32_t signal_count;
	const VkSemaphore *waits;
	const VkSemaphore *signals;
	const VkTimelineSemaphoreSubmitInfo *timeline;
	const VkSemaphoreSubmitInfo *wait_infos;
	const VkSemaphoreSubmitInfo *signal_infos;
};

FRAME_PATH
static void view_v1(const VkSubmitInfo *s, struct batch_view *v)
{
	memset(v, 0, sizeof(*v));
	v->cb_count = s->commandBufferCount;
	v->cbs = s->pCommandBuffers;
	v->wait_count = s->waitSemaphoreCount;
	v->waits = s->pWaitSemaphores;
	v->signal_count = s->signalSemaphoreCount;
	v->signals = s->pSignalSemaphores;
	for (const VkBaseInStructure *p = s->pNext; p; p = p->pNext)
		if (p->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO)
			v->timeline = (const VkTimelineSemaphoreSubmitInfo *)(const void *)p;
}

FRAME_PATH
static void view_v2(const VkSubmitInfo2 *s, struct batch_view *v)
{
	memset(v, 0, sizeof(*v));
	v->cb_count = s->commandBufferInfoCount;
	v->cbinfos = s->pCommandBufferInfos;
	v->wait_count = s->waitSemaphoreInfoCount;
	v->wait_infos = s->pWaitSemaphoreInfos;
	v->signal_count = s->signalSemaphoreInfoCount;
	v->signal_infos = s->pSignalSemaphoreInfos;
}

FRAME_PATH
static VkCommandBuffer view_cb(const struct batch_view *v, uint32_t i)
{
	return v->cbs ? v->cbs[i] : v->cbinfos[i].commandBuffer;
}

/* A semaphore of the batch and its value: 0 when binary (a timeline value
 * of 0 is never waited for or signalled usefully). */
FRAME_PATH
static VkSemaphore view_semaphore(const struct batch_view *v, bool signal, uint32_t i,
				  uint64_t *value)
{
	*value = 0;
	if (v->wait_infos || v->signal_infos) {
		const VkSemaphoreSubmitInfo *info = signal ? &v->signal_infos[i] : &v->wait_infos[i];
		*value = info->value;
		return info->semaphore;
	}
	if (v->timeline) {
		uint32_t n = signal ? v->timeline->signalSemaphoreValueCount :
				      v->timeline->waitSemaphoreValueCount;
		const uint64_t *values = signal ? v->timeline->pSignalSemaphoreValues :
						  v->timeline->pWaitSemaphoreValues;
		if (i < n && values)
			*value = values[i];
	}
	return signal ? v->signals[i] : v->waits[i];
}

FRAME_PATH
static struct semaphore_entry *semaphore_find(struct capture_set *set, VkSemaphore s)
{
	for (uint32_t i = 0; i < set->semaphore_count; i++)
		if (set->semaphores[i].semaphore == s)
			return &set->semaphores[i];
	if (set->semaphore_count == set->semaphore_cap)
		return NULL;
	struct semaphore_entry *e = &set->semaphores[set->semaphore_count];
	*e = (struct semaphore_entry){ s, set->semaphore_count, 0 };
	set->semaphore_count++;
	return e;
}

/* The semaphore operation as the capture file numbers it: timeline
 * values as they are; binary signals counted 1, 2, ..., and a binary wait
 * naming the latest signal. */
FRAME_PATH
static bool op_add(struct capture_set *set, VkSemaphore s, uint64_t value, bool signal)
{
	struct semaphore_entry *e = semaphore_find(set, s);
	if (!e || set->op_count == set->op_cap)
		return false;
	struct crumbs_semaphore_op *op = &set->ops[set->op_count++];
	op->semaphore = e->id;
	op->value = value;
	if (value == 0) {
		if (signal) {
			op->value = ++e->signals;
		} else if (e->signals == 0) {
			op->semaphore = UNSIGNALLED_SEMAPHORE;
		} else {
			op->value = e->signals;
		}
	}
	return true;
}

/* Begins the command buffer that copies the results of the standing
 * recordings batch k of q runs. */
static bool copy_begin(crumbs_context *ctx, struct queue_state *q, uint32_t k)
{
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
	return ctx->devices[q->device].fn.BeginCommandBuffer(q->standing_cbs[k], &bi) == VK_SUCCESS;
}

/* Records one batch of set's frame as submission k of the queue in the
 * set, which is submission n of the queue's own. Returns the command
 * buffer that copies the results of the standing recordings it runs, to
 * go after it, or VK_NULL_HANDLE. */
FRAME_PATH
static VkCommandBuffer record_batch(crumbs_context *ctx, struct capture_set *set,
				    struct queue_state *q, const struct batch_view *v, uint32_t k,
				    int64_t cpu_ns)
{
	struct set_queue *sq = &set->queues[q - ctx->queues];
	uint32_t n = sq->submit_first + k;
	struct submit_record *rec = &q->submits[n];
	rec->cpu_ns = cpu_ns;
	rec->begin_slot = q->valid_bits ? q->submit_base + 2 * n : NO_SLOT;
	rec->end_slot = q->valid_bits ? q->submit_base + 2 * n + 1 : NO_SLOT;
	VkCommandBuffer copy = VK_NULL_HANDLE;

	pthread_mutex_lock(&ctx->submit_lock);
	rec->first_cmd = set->submit_cmd_count;
	rec->cmd_count = 0;
	rec->unrecorded = 0;
	if (sq->labels && set->submit_cmd_count < set->submit_cmd_cap) {
		for (struct event_block *b = sq->labels->first; b; b = b->next)
			for (uint32_t i = 0; i < b->count; i++)
				b->events[i].slot = rec->begin_slot;
		set->submit_cmds[set->submit_cmd_count++] = sq->labels;
		rec->cmd_count++;
	}
	sq->labels = NULL;
	for (uint32_t i = 0; i < v->cb_count; i++) {
		VkCommandBuffer cb = view_cb(v, i);
		struct crumbs_cmd *cmd = store_map_find(set, cb), *st;
		if (!cmd && ctx->standing_of && (st = ctx->standing_of(ctx->standing_user, cb))) {
			if (q->standing_cbs && !copy && copy_begin(ctx, q, n))
				copy = q->standing_cbs[n];
			cmd = standing_adopt(ctx, set, q, st, copy);
		}
		if (!cmd && ctx->set_count > 1 && set->frame > 0) {
			/* Recorded in the run's frame before this one. */
			struct capture_set *from = set_of(ctx, set->frame - 1);
			const struct crumbs_cmd *c;
			if (from != set && from->frame + 1 == set->frame &&
			    atomic_load(&from->phase) == SET_RESOLVING &&
			    (c = store_map_find(from, cb)) != NULL && (cmd = store_borrow(ctx, set, from, c, 0)))
				store_map_put(set, cmd);
		}
		if (cmd && set->submit_cmd_count < set->submit_cmd_cap) {
			set->submit_cmds[set->submit_cmd_count++] = cmd;
			rec->cmd_count++;
		} else if (!cmd && ctx->set_loader_data) {
			/* The layer's: it sees every command buffer recorded,
			 * and this one was begun where nothing could record
			 * it for this frame (before the pre-roll, or frames
			 * before this one in a run), or found no room. A
			 * program's own may simply have no scopes. */
			rec->unrecorded++;
		}
	}
	rec->first_op = set->op_count;
	rec->wait_count = rec->signal_count = 0;
	for (uint32_t i = 0; i < v->wait_count; i++) {
		uint64_t value;
		VkSemaphore s = view_semaphore(v, false, i, &value);
		rec->wait_count += op_add(set, s, value, false);
	}
	for (uint32_t i = 0; i < v->signal_count; i++) {
		uint64_t value;
		VkSemaphore s = view_semaphore(v, true, i, &value);
		rec->signal_count += op_add(set, s, value, true);
	}
	pthread_mutex_unlock(&ctx->submit_lock);
	if (copy && ctx->devices[q->device].fn.EndCommandBuffer(copy) != VK_SUCCESS)
		copy = VK_NULL_HANDLE;
	return copy;
}

/*
 * Copies the batches with crumbs' command buffers around the program's:
 * the pool resets in front of the first batch when they are due, a begin
 * and an end timestamp around each batch of a captured frame (set), an end
 * timestamp after the last batch of the pre-roll. Returns false when the
 * copy does not fit the room set aside, and the call then goes through
 * unrecorded.
 */
FRAME_PATH
static bool rebuild(crumbs_context *ctx, struct queue_state *q, bool v2, const void *submits,
		    uint32_t count, struct capture_set *set, int64_t cpu_ns, uint32_t *recorded)
{
	struct set_queue *sq = set ? &set->queues[q - ctx->queues] : NULL;
	uint32_t used = 0;
	*recorded = 0;
	q->scope_resets_taken = q->resets_taken = 0;
	if (count > q->scratch_submit_cap)
		return false;
	for (uint32_t b = 0; b < count; b++) {
		struct batch_view v;
		if (v2)
			view_v2(&((const VkSubmitInfo2 *)submits)[b], &v);
		else
			view_v1(&((const VkSubmitInfo *)submits)[b], &v);
		/* Untimed queues have no resets, and their batches are
		 * submitted as they are. */
		uint32_t reset = b == 0 && q->valid_bits ? pools_resets_due(ctx, q) : 0;
		bool timed = sq && sq->submit_count + *recorded < sq->submit_cap;
		bool ready = !set && atomic_load(&ctx->state) == STATE_PREROLL && b + 1 == count &&
			     q->ready_next < READY_RING;
		uint32_t k = sq ? sq->submit_count + *recorded : 0, m = 0;
		if (used + v.cb_count + reset + 3 * timed + ready > q->scratch_cb_cap) {
			pools_resets_return(ctx, q);
			return false;
		}
		VkCommandBuffer copy = timed ? record_batch(ctx, set, q, &v, k, cpu_ns) : VK_NULL_HANDLE;
		VkCommandBuffer *out = q->scratch_cbs + used;
		if (reset)
			/* At the front: pools_resets_return() finds them there. */
			reset = m = pools_resets_take(ctx, q, out);
		if (timed)
			out[m++] = q->begin_cbs[sq->submit_first + k];
		for (uint32_t i = 0; i < v.cb_count; i++)
			out[m++] = view_cb(&v, i);
		if (timed)
			out[m++] = q->end_cbs[sq->submit_first + k];
		if (copy)
			out[m++] = copy;
		if (ready)
			out[m++] = q->ready_cbs[q->ready_next];
		if (v2) {
			VkCommandBufferSubmitInfo *infos = q->scratch_cbinfos + used;
			for (uint32_t i = 0; i < m; i++) {
				/* The program's own entries keep their device masks. */
				bool own = i >= reset + timed && i < reset + timed + v.cb_count;
				infos[i] = own ? v.cbinfos[i - reset - timed] :
					  (VkCommandBufferSubmitInfo){
						  VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, NULL, out[i], 0 };
			}
			VkSubmitInfo2 *s = &((VkSubmitInfo2 *)q->scratch_submits)[b];
			*s = ((const VkSubmitInfo2 *)submits)[b];
			s->commandBufferInfoCount = m;
			s->pCommandBufferInfos = infos;
		} else {
			VkSubmitInfo *s = &((VkSubmitInfo *)q->scratch_submits)[b];
			*s = ((const VkSubmitInfo *)submits)[b];
			s->commandBufferCount = m;
			s->pCommandBuffers = out;
		}
		used += m;
		if (timed) {
			(*recorded)++;
		} else if (set) {
			atomic_fetch_add(&set->dropped, 1);
		}
	}
	return true;
}

FRAME_PATH
static VkResult submit(crumbs_context *ctx, VkQueue queue, uint32_t count, const void *submits,
		       VkFence fence, bool v2)
{
	struct queue_state *q = queue_find(ctx, queue);
	if (!q) {
		ctx_log(ctx, CRUMBS_LOG_ERROR, "a submission to a queue crumbs_create was not given");
		return VK_ERROR_INITIALIZATION_FAILED;
	}
	struct device_fns *fn = &ctx->devices[q->device].fn;
	if (v2 && !fn->QueueSubmit2)
		return VK_ERROR_EXTENSION_NOT_PRESENT;
#define PASS_THROUGH(subs)                                                                    \
	(v2 ? fn->QueueSubmit2(queue, count, (const VkSubmitInfo2 *)(subs), fence) :          \
	      fn->QueueSubmit(queue, count, (const VkSubmitInfo *)(subs), fence))

	ctx->submitted = true;
	/* crumbs_frame does not run during a submission: the set stays. */
	struct capture_set *set = atomic_load(&ctx->cur);
	if (set)
		path_warm(set, PATH_FRAME);
	bool preroll = !set && atomic_load(&ctx->state) == STATE_PREROLL;
	bool resets = q->valid_bits && pools_resets_due(ctx, q);
	if (!(set || (preroll && q->valid_bits) || resets) || count == 0)
		return PASS_THROUGH(submits);

	uint32_t saved_cmds = set ? set->submit_cmd_count : 0, saved_ops = set ? set->op_count : 0;
	struct set_queue *sq = set ? &set->queues[q - ctx->queues] : NULL;
	uint32_t recorded;
	int64_t cpu_ns = now_ns();
	if (!q->valid_bits) {
		/* Untimed queue: record the batches, change nothing. */
		if (!rebuild(ctx, q, v2, submits, count, set, cpu_ns, &recorded)) {
			atomic_fetch_add(&set->dropped, count);
			return PASS_THROUGH(submits);
		}
		VkResult r = PASS_THROUGH(submits);
		if (r == VK_SUCCESS)
			sq->submit_count += recorded;
		return r;
	}
	if (!rebuild(ctx, q, v2, submits, count, set, cpu_ns, &recorded)) {
		ctx_log(ctx, CRUMBS_LOG_WARNING, "a submission of %u batches is too large to time", count);
		if (set) {
			set->submit_cmd_count = saved_cmds;
			set->op_count = saved_ops;
		}
		return PASS_THROUGH(submits);
	}
	VkResult r = PASS_THROUGH(q->scratch_submits);
	if (r != VK_SUCCESS) {
		/* Nothing was submitted: forget what was recorded of it. */
		pools_resets_return(ctx, q);
		if (set) {
			set->submit_cmd_count = saved_cmds;
			set->op_count = saved_ops;
		}
		if (r == VK_ERROR_DEVICE_LOST)
			ctx->device_lost = true;
		return r;
	}
	pools_resets_done(ctx, q);
	if (set) {
		sq->submit_count += recorded;
	} else if (preroll && q->ready_next < READY_RING) {
		q->ready_slot = q->ready_base + q->ready_next;
		q->ready_next++;
	}
	return r;
#undef PASS_THROUGH
}

FRAME_PATH
VkResult crumbs_queue_submit(crumbs_context *ctx, VkQueue queue, uint32_t count,
			     const VkSubmitInfo *submits, VkFence fence)
{
	return submit(ctx, queue, count, submits, fence, false);
}

FRAME_PATH
VkResult crumbs_queue_submit2(crumbs_context *ctx, VkQueue queue, uint32_t count,
			      const VkSubmitInfo2 *submits, VkFence fence)
{
	return submit(ctx, queue, count, submits, fence, true);
}

VkResult crumbs_signal_semaphore(crumbs_context *ctx, VkDevice device,
				 const VkSemaphoreSignalInfo *info)
{
	struct device_state *d = NULL;
	for (uint32_t i = 0; i < ctx->device_count; i++)
		if (ctx->devices[i].device == device)
			d = &ctx->devices[i];
	if (!d || !d->fn.SignalSemaphore) {
		ctx_log(ctx, CRUMBS_LOG_ERROR, "vkSignalSemaphore on a device crumbs_create was not given");
		return VK_ERROR_INITIALIZATION_FAILED;
	}
	/* The time is taken before the call: the signal happens during it. */
	int64_t cpu_ns = now_ns();
	VkResult r = d->fn.SignalSemaphore(device, info);
	struct capture_set *set = atomic_load(&ctx->cur);
	if (r != VK_SUCCESS || !set)
		return r;
	pthread_mutex_lock(&ctx->submit_lock);
	struct semaphore_entry *e = semaphore_find(set, info->semaphore);
	if (e && set->host_signal_count < set->host_signal_cap)
		set->host_signals[set->host_signal_count++] =
			(struct host_signal){ e->id, info->value, cpu_ns };
	pthread_mutex_unlock(&ctx->submit_lock);
	return r;
}
