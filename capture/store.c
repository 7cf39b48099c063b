/* SPDX-License-Identifier: MIT */
/*
 * store.c: a capture's handles, events, names and counts, taken from
 * memory set aside at creation so that many threads can record at once
 * without allocating or locking per scope, and the map from a command
 * buffer to the handle that recorded it in the capture.
 */
#include "capture_internal.h"

#include <string.h>

enum crumbs_result store_set_init(crumbs_context *ctx, struct capture_set *set)
{
	struct crumbs_cmd *handles = ctx_alloc(ctx, sizeof(*handles) * ctx->max_command_buffers);
	uint64_t events = (uint64_t)ctx->max_scopes * 2 * (ctx->queue_count ? ctx->queue_count : 1);
	set->block_count = (uint32_t)(events / EVENTS_PER_BLOCK) + ctx->max_command_buffers;
	set->blocks = ctx_alloc(ctx, sizeof(*set->blocks) * set->block_count);
	set->name_bytes = ctx->name_bytes;
	set->names = ctx_alloc(ctx, ctx->name_bytes);
	set->counts_cap = ctx->max_scopes * 2;
	set->counts = ctx_alloc(ctx, sizeof(*set->counts) * set->counts_cap);
	set->map_cap = 1;
	while (set->map_cap < ctx->max_command_buffers * 2)
		set->map_cap *= 2;
	set->map = ctx_alloc(ctx, sizeof(*set->map) * set->map_cap);
	set->queues = ctx_alloc(ctx, sizeof(*set->queues) * (ctx->queue_count ? ctx->queue_count : 1));
	set->calibration = ctx_alloc(ctx, sizeof(*set->calibration) *
					  (ctx->device_count ? ctx->device_count : 1));
	if (!handles || !set->blocks || !set->names || !set->counts || !set->map ||
	    !set->queues || !set->calibration ||
	    (!set->map_lock_ready && pthread_mutex_init(&set->map_lock, NULL) != 0)) {
		ctx_free(ctx, handles);
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	set->map_lock_ready = true;
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		set->queues[i].ready_slot = NO_SLOT;
	set->handles = handles; /* last: the set is ready */
	return CRUMBS_OK;
}

enum crumbs_result store_init(crumbs_context *ctx)
{
	for (uint32_t i = 0; i < CAPTURE_SETS; i++)
		ctx->sets[i].index = i;
	ctx->label_handles = ctx->mirror_labels ?
		ctx_alloc(ctx, sizeof(*ctx->label_handles) * ctx->max_command_buffers) : NULL;
	if (ctx->mirror_labels && !ctx->label_handles)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	return store_set_init(ctx, &ctx->sets[0]);
}

/* Whatever store_init and store_set_init reached. */
void store_release(crumbs_context *ctx)
{
	for (uint32_t i = 0; i < CAPTURE_SETS; i++) {
		struct capture_set *set = &ctx->sets[i];
		if (set->map_lock_ready)
			pthread_mutex_destroy(&set->map_lock);
		ctx_free(ctx, set->handles);
		ctx_free(ctx, set->blocks);
		ctx_free(ctx, set->names);
		ctx_free(ctx, set->counts);
		ctx_free(ctx, set->map);
		ctx_free(ctx, set->queues);
		ctx_free(ctx, set->calibration);
	}
	ctx_free(ctx, ctx->label_handles);
}

void store_reset(struct capture_set *set)
{
	atomic_store(&set->block_next, 0);
	atomic_store(&set->name_next, 0);
	atomic_store(&set->counts_next, 0);
	atomic_store(&set->dropped, 0);
	/* Only the entries the last frame's handles made: the rest of the
	 * map (tens of KiB) is empty already. */
	uint32_t used = atomic_exchange(&set->handle_next, 0);
	uint32_t cap = set->map_cap / 2; /* max_command_buffers */
	if (used > cap)
		used = cap;
	pthread_mutex_lock(&set->map_lock);
	for (uint32_t i = 0; i < used; i++)
		if (set->handles[i].map_slot)
			set->map[set->handles[i].map_slot - 1].cb = VK_NULL_HANDLE;
	pthread_mutex_unlock(&set->map_lock);
}

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

RECORD_PATH
struct crumbs_cmd *store_handle(crumbs_context *ctx, struct capture_set *set,
				struct queue_state *q)
{
	uint32_t i = atomic_fetch_add(&set->handle_next, 1);
	if (i >= ctx->max_command_buffers) {
		atomic_fetch_add(&set->dropped, 1);
		return NULL;
	}
	struct crumbs_cmd *h = &set->handles[i];
	memset(h, 0, HANDLE_CLEARED);
	h->state.detail = set->detail;
	h->ctx = ctx;
	h->kind = HANDLE_CAPTURE;
	h->queue = (uint32_t)(q - ctx->queues);
	h->set = set;
	return h;
}

struct crumbs_cmd *store_label_handle(crumbs_context *ctx, struct queue_state *q)
{
	/* A ring: a label handle is only needed while its command buffer
	 * is recorded, long before the ring comes round. */
	uint32_t i = atomic_fetch_add(&ctx->label_next, 1) % ctx->max_command_buffers;
	struct crumbs_cmd *h = &ctx->label_handles[i];
	memset(h, 0, sizeof(*h));
	h->kind = HANDLE_LABELS;
	h->state.detail = ctx->mirror_labels - 1;
	h->ctx = ctx;
	h->queue = (uint32_t)(q - ctx->queues);
	return h;
}

/* ------------------------------------------------------------------------ */
/* Events, names, counts                                                    */
/* ------------------------------------------------------------------------ */

RECORD_PATH
struct event *store_event(struct crumbs_cmd *cmd)
{
	struct capture_set *set = cmd->set;
	struct event_block *b = cmd->last;
	if (!b || b->count == EVENTS_PER_BLOCK) {
		uint32_t i = atomic_fetch_add(&set->block_next, 1);
		if (i >= set->block_count)
			return NULL;
		struct event_block *nb = &set->blocks[i];
		nb->next = NULL;
		nb->count = 0;
		if (b)
			b->next = nb;
		else
			cmd->first = nb;
		cmd->last = b = nb;
	}
	return &b->events[b->count++];
}

RECORD_PATH
void store_name(struct capture_set *set, struct name_ref *ref, const char *name, size_t len)
{
	if (len > 4096)
		len = 4096;
	if (!len) {
		*ref = (struct name_ref){ 0, 0 };
		return;
	}
	uint32_t at = atomic_fetch_add(&set->name_next, (uint32_t)len);
	if ((uint64_t)at + len > set->name_bytes) {
		*ref = (struct name_ref){ 0, 0 }; /* out of room: the name is lost, not the scope */
		return;
	}
	memcpy(set->names + at, name, len);
	*ref = (struct name_ref){ at, (uint32_t)len };
}

uint32_t store_counts(struct capture_set *set, const struct counts_record *c)
{
	uint32_t i = atomic_fetch_add(&set->counts_next, 1);
	if (i >= set->counts_cap)
		return UINT32_MAX;
	set->counts[i] = *c;
	return i;
}

/* ------------------------------------------------------------------------ */
/* Command buffer -> handle                                                 */
/* ------------------------------------------------------------------------ */

RECORD_PATH
static uint32_t map_hash(VkCommandBuffer cb, uint32_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)cb;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x & (cap - 1);
}

void store_copy_event(struct capture_set *set, struct event *c, const struct event *e,
		      const char *names, const struct counts_record *counts)
{
	*c = *e;
	if (e->type == EVENT_BEGIN || e->type == EVENT_PASS) {
		store_name(set, &c->u.name, names + e->u.name.offset, e->u.name.len);
	} else if (e->type == EVENT_LEAF || e->type == EVENT_COUNTS) {
		struct counts_record r = counts[e->u.counts];
		store_name(set, &r.name, names + r.name.offset, r.name.len);
		if ((c->u.counts = store_counts(set, &r)) == UINT32_MAX) {
			c->type = EVENT_NONE;
			atomic_fetch_add(&set->dropped, 1);
		}
	} else if (e->type == EVENT_STRETCH || e->type == EVENT_LEAF_STRETCH) {
		/* Its query lies in another set's share, which this one
		 * does not read. */
		c->u.counts = COUNTER_UNKNOWN;
	}
}

/*
 * A copy, in set, of cmd: a command buffer that `from`, the frame before,
 * recorded and set's frame submits (Zink, and many engines, record the
 * next frame's work before they present). Its events, names and counts
 * are copied, since `from` is reused before set is written; its slots
 * stay where it wrote them, in from's share, and set's copy reads them
 * (readback.c). The secondaries it executes come along. NULL when set has
 * no room.
 */
struct crumbs_cmd *store_borrow(crumbs_context *ctx, struct capture_set *set,
				struct capture_set *from, const struct crumbs_cmd *cmd, int depth)
{
	struct queue_state *q = &ctx->queues[cmd->queue];
	struct crumbs_cmd *a = store_handle(ctx, set, q);
	if (!a)
		return NULL;
	a->cb = cmd->cb;
	a->untimed = cmd->untimed;
	a->borrowed = true;
	bool full = false;
	for (const struct event_block *b = cmd->first; b; b = b->next)
		for (uint32_t i = 0; i < b->count; i++) {
			const struct event *e = &b->events[i];
			struct event *c = full ? NULL : store_event(a);
			if (!c) {
				/* The set is full: each scope and event left is lost. */
				full = true;
				if (e->type == EVENT_BEGIN || e->type == EVENT_PASS ||
				    e->type == EVENT_LEAF)
					atomic_fetch_add(&set->dropped, 1);
				continue;
			}
			store_copy_event(set, c, e, from->names, from->counts);
			if (e->type == EVENT_EXECUTE && depth < MAX_EXECUTE_DEPTH &&
			    !store_map_find(set, e->u.secondary)) {
				const struct crumbs_cmd *s = store_map_find(from, e->u.secondary);
				struct crumbs_cmd *sa = s ? store_borrow(ctx, set, from, s, depth + 1) : NULL;
				if (sa)
					store_map_put(set, sa);
			}
			if (c->slot != NO_SLOT && q->results && c->slot < q->slot_count) {
				/* Read afresh by set's copy: what the slot held is stale. */
				uint32_t n = e->type == EVENT_LEAF && c->slot + 1 < q->slot_count ? 2 : 1;
				memset(q->results + 2 * c->slot, 0, sizeof(uint64_t) * 2 * n);
			}
		}
	set->borrows = from;
	return a;
}

/* A command buffer recorded again in the same frame keeps its latest
 * recording: a submission took what it needed when it was made. */
RECORD_PATH
void store_map_put(struct capture_set *set, struct crumbs_cmd *cmd)
{
	pthread_mutex_lock(&set->map_lock);
	uint32_t i = map_hash(cmd->cb, set->map_cap);
	for (uint32_t n = 0; n < set->map_cap; n++, i = (i + 1) & (set->map_cap - 1)) {
		if (set->map[i].cb == VK_NULL_HANDLE || set->map[i].cb == cmd->cb) {
			set->map[i] = (struct map_entry){ cmd->cb, cmd };
			cmd->map_slot = i + 1;
			break;
		}
	}
	pthread_mutex_unlock(&set->map_lock);
}

/*
 * What q's next command buffer, cb, will most likely write, asked for at
 * crumbs_cmd_begin: the map entry store_map_put writes for it (the first
 * it probes) and the map's lock, the event block and names its first scope
 * takes, the queue's slot counter and the driver's function it calls. The
 * set was last touched frames ago, and each of these lines would
 * otherwise be waited for in turn, by crumbs_cmd_end and by the first
 * scope (docs/BENCHMARKS.md, runs).
 */
RECORD_PATH
void store_warm(crumbs_context *ctx, struct capture_set *set, const struct queue_state *q,
		VkCommandBuffer cb)
{
	__builtin_prefetch(&set->map[map_hash(cb, set->map_cap)], 1, 2);
	__builtin_prefetch(&set->map_lock, 1, 2);
	uint32_t b = atomic_load_explicit(&set->block_next, memory_order_relaxed);
	if (b < set->block_count)
		__builtin_prefetch(&set->blocks[b], 1, 2);
	uint32_t n = atomic_load_explicit(&set->name_next, memory_order_relaxed);
	if (n < set->name_bytes)
		__builtin_prefetch(set->names + n, 1, 2);
	__builtin_prefetch(&set->queues[q - ctx->queues], 1, 2);
	__builtin_prefetch(&ctx->devices[q->device].fn.CmdWriteTimestamp, 0, 2);
}

RECORD_PATH
struct crumbs_cmd *store_map_find(struct capture_set *set, VkCommandBuffer cb)
{
	struct crumbs_cmd *found = NULL;
	pthread_mutex_lock(&set->map_lock);
	uint32_t i = map_hash(cb, set->map_cap);
	for (uint32_t n = 0; n < set->map_cap; n++, i = (i + 1) & (set->map_cap - 1)) {
		if (set->map[i].cb == VK_NULL_HANDLE)
			break;
		if (set->map[i].cb == cb) {
			found = set->map[i].cmd;
			break;
		}
	}
	pthread_mutex_unlock(&set->map_lock);
	return found;
}
