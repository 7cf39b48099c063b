/*
 * record.c: scopes on command buffers. Outside captures a scope costs a
 * branch (or a label); in a capture frame it writes a timestamp and an
 * event into memory taken at creation, so many threads can record at once
 * without allocating or locking per scope.
 */
#include "capture_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every handle outside captures: detail -1, so the inline functions
 * return before they touch it, and threads can share it. */
static struct crumbs_cmd off_handle = { .state = { -1, 0 }, .kind = HANDLE_OFF };

/* Forgets the events, names and handles of the last capture. */
void record_reset(crumbs_context *ctx)
{
	atomic_store(&ctx->block_next, 0);
	atomic_store(&ctx->name_next, 0);
	atomic_store(&ctx->counts_next, 0);
	atomic_store(&ctx->dropped, 0);
	/* Only the entries the last capture's handles made: the rest of
	 * the map (tens of KiB) is empty already. */
	uint32_t used = atomic_exchange(&ctx->handle_next, 0);
	if (used > ctx->max_command_buffers)
		used = ctx->max_command_buffers;
	pthread_mutex_lock(&ctx->map_lock);
	for (uint32_t i = 0; i < used; i++)
		if (ctx->handles[i].map_slot)
			ctx->map_keys[ctx->handles[i].map_slot - 1] = VK_NULL_HANDLE;
	pthread_mutex_unlock(&ctx->map_lock);
}

/* ------------------------------------------------------------------------ */
/* Command buffer -> handle                                                 */
/* ------------------------------------------------------------------------ */

static uint32_t map_hash(VkCommandBuffer cb, uint32_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)cb;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x & (cap - 1);
}

/* A command buffer recorded again in the same capture keeps its latest
 * recording: a submission took what it needed when it was made. */
static void map_put(crumbs_context *ctx, struct crumbs_cmd *cmd)
{
	pthread_mutex_lock(&ctx->map_lock);
	uint32_t i = map_hash(cmd->cb, ctx->map_cap);
	for (uint32_t n = 0; n < ctx->map_cap; n++, i = (i + 1) & (ctx->map_cap - 1)) {
		if (ctx->map_keys[i] == VK_NULL_HANDLE || ctx->map_keys[i] == cmd->cb) {
			ctx->map_keys[i] = cmd->cb;
			ctx->map_values[i] = cmd;
			cmd->map_slot = i + 1;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->map_lock);
}

struct crumbs_cmd *map_find(crumbs_context *ctx, VkCommandBuffer cb)
{
	struct crumbs_cmd *found = NULL;
	pthread_mutex_lock(&ctx->map_lock);
	uint32_t i = map_hash(cb, ctx->map_cap);
	for (uint32_t n = 0; n < ctx->map_cap; n++, i = (i + 1) & (ctx->map_cap - 1)) {
		if (ctx->map_keys[i] == VK_NULL_HANDLE)
			break;
		if (ctx->map_keys[i] == cb) {
			found = ctx->map_values[i];
			break;
		}
	}
	pthread_mutex_unlock(&ctx->map_lock);
	return found;
}

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

crumbs_cmd *crumbs_cmd_begin(crumbs_context *ctx, VkCommandBuffer cb, VkQueue queue)
{
	if (!ctx || !cb)
		return &off_handle;
	int state = atomic_load(&ctx->state);
	struct queue_state *q = queue_find(ctx, queue);
	struct crumbs_cmd *h;

	if (state == STATE_CAPTURING && q) {
		if (!(h = record_handle(ctx, q)))
			return &off_handle;
	} else if (ctx->mirror_labels && q && (ctx->devices[q->device].features & CRUMBS_FEATURE_DEBUG_UTILS)) {
		/* A ring: a label handle is only needed while its command
		 * buffer is recorded, long before the ring comes round. */
		uint32_t i = atomic_fetch_add(&ctx->label_next, 1) % ctx->max_command_buffers;
		h = &ctx->label_handles[i];
		memset(h, 0, sizeof(*h));
		h->kind = HANDLE_LABELS;
		h->state.detail = ctx->mirror_labels - 1;
		h->ctx = ctx;
		h->queue = (uint32_t)(q - ctx->queues);
	} else {
		return &off_handle;
	}
	h->cb = cb;
	return h;
}

struct crumbs_cmd *record_handle(crumbs_context *ctx, struct queue_state *q)
{
	uint32_t i = atomic_fetch_add(&ctx->handle_next, 1);
	if (i >= ctx->max_command_buffers) {
		atomic_fetch_add(&ctx->dropped, 1);
		return NULL;
	}
	struct crumbs_cmd *h = &ctx->handles[i];
	memset(h, 0, sizeof(*h));
	h->state.detail = CRUMBS_DETAIL_MAX;
	h->ctx = ctx;
	h->kind = HANDLE_CAPTURE;
	h->queue = (uint32_t)(q - ctx->queues);
	return h;
}

void crumbs_cmd_end(crumbs_cmd *cmd)
{
	if (cmd->kind == HANDLE_CAPTURE)
		map_put(cmd->ctx, cmd);
}

/* ------------------------------------------------------------------------ */
/* Events                                                                   */
/* ------------------------------------------------------------------------ */

/* Grows a standing recording's array to hold `need` items of `size`. */
static bool standing_grow(crumbs_context *ctx, void **items, uint32_t *cap, uint32_t need,
			  size_t size)
{
	if (need <= *cap)
		return true;
	uint32_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	void *p = ctx_realloc(ctx, *items, size * n);
	if (!p)
		return false;
	*items = p;
	*cap = n;
	return true;
}

struct event *event_add(struct crumbs_cmd *cmd)
{
	crumbs_context *ctx = cmd->ctx;
	if (cmd->standing) {
		struct standing *st = cmd->standing;
		if (!standing_grow(ctx, (void **)&st->events, &st->event_cap, st->event_count + 1,
				   sizeof(*st->events))) {
			st->lost = true;
			return NULL;
		}
		return &st->events[st->event_count++];
	}
	struct event_block *b = cmd->last;
	if (!b || b->count == EVENTS_PER_BLOCK) {
		uint32_t i = atomic_fetch_add(&ctx->block_next, 1);
		if (i >= ctx->block_count)
			return NULL;
		struct event_block *nb = &ctx->blocks[i];
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

/* A copy of the name in the capture's arena. */
void name_store(crumbs_context *ctx, struct name_ref *ref, const char *name, size_t len)
{
	if (len > 4096)
		len = 4096;
	if (!len) {
		*ref = (struct name_ref){ 0, 0 };
		return;
	}
	uint32_t at = atomic_fetch_add(&ctx->name_next, (uint32_t)len);
	if ((uint64_t)at + len > ctx->name_bytes) {
		*ref = (struct name_ref){ 0, 0 }; /* out of room: the name is lost, not the scope */
		return;
	}
	memcpy(ctx->names + at, name, len);
	*ref = (struct name_ref){ at, (uint32_t)len };
}

/* The name in the capture's arena or, for a standing recording, its own. */
static void name_keep(struct crumbs_cmd *cmd, struct name_ref *ref, const char *name, size_t len)
{
	struct standing *st = cmd->standing;
	if (!st) {
		name_store(cmd->ctx, ref, name, len);
		return;
	}
	if (len > 4096)
		len = 4096;
	*ref = (struct name_ref){ st->name_len, 0 };
	if (!standing_grow(cmd->ctx, (void **)&st->names, &st->name_cap, st->name_len + (uint32_t)len, 1)) {
		st->lost = true;
		return;
	}
	memcpy(st->names + st->name_len, name, len);
	st->name_len += (uint32_t)len;
	ref->len = (uint32_t)len;
}

uint32_t counts_add(crumbs_context *ctx, const struct counts_record *c)
{
	uint32_t i = atomic_fetch_add(&ctx->counts_next, 1);
	if (i >= ctx->counts_cap)
		return UINT32_MAX;
	ctx->counts[i] = *c;
	return i;
}

/* The counts record of an event of cmd, or UINT32_MAX. */
static uint32_t counts_keep(struct crumbs_cmd *cmd, const struct counts_record *c)
{
	struct standing *st = cmd->standing;
	if (!st)
		return counts_add(cmd->ctx, c);
	if (!standing_grow(cmd->ctx, (void **)&st->counts, &st->count_cap, st->count_len + 1,
			   sizeof(*st->counts))) {
		st->lost = true;
		return UINT32_MAX;
	}
	st->counts[st->count_len] = *c;
	return st->count_len++;
}

/*
 * Two query slots, for the scope's begin and end, so that a scope that
 * began timed can always end timed. As the pool fills, deeper scopes need
 * more free slots to get any: when slots run out, the deepest scopes are
 * the ones recorded untimed.
 */
uint32_t slots_take(struct queue_state *q, uint32_t depth, uint32_t count)
{
	uint32_t reserve = (q->scope_slots / 64) * depth;
	uint32_t used = atomic_load(&q->scope_next);
	if (used + count + reserve > q->scope_slots)
		return NO_SLOT;
	uint32_t at = atomic_fetch_add(&q->scope_next, count);
	if (at + count > q->scope_slots)
		return NO_SLOT;
	return at;
}

/* Slots for cmd: from its queue's pool in a capture, from its own range
 * for a standing recording (one thread records it: no atomics). NO_SLOT
 * when its queue has no timestamps or the slots ran out. */
static uint32_t slots_for(struct crumbs_cmd *cmd, uint32_t depth, uint32_t count)
{
	struct queue_state *q = &cmd->ctx->queues[cmd->queue];
	if (!q->valid_bits || cmd->untimed)
		return NO_SLOT;
	uint32_t s;
	struct standing *st = cmd->standing;
	if (st) {
		s = st->slot_next + count <= st->slot_end ? st->slot_next : NO_SLOT;
		if (s == NO_SLOT)
			st->lost = true;
		else
			st->slot_next += count;
		return s;
	}
	s = slots_take(q, depth, count);
	if (s == NO_SLOT)
		atomic_fetch_add(&cmd->ctx->dropped, 1);
	return s;
}

/* A timestamp into slot of cmd's pool. */
static void stamp(struct crumbs_cmd *cmd, uint32_t slot)
{
	crumbs_context *ctx = cmd->ctx;
	struct queue_state *q = &ctx->queues[cmd->queue];
	struct device_state *d = &ctx->devices[q->device];
	VkQueryPool pool = cmd->standing ? d->standing->pool : q->pool;
	d->fn.CmdWriteTimestamp(cmd->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, slot);
}

static void label_begin(crumbs_context *ctx, VkCommandBuffer cb, const char *name, size_t len)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 255 ? len : 255), name);
	VkDebugUtilsLabelEXT label = { VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, NULL, buf,
				       { 0, 0, 0, 0 } };
	ctx->ifn.CmdBeginDebugUtilsLabel(cb, &label);
}

/* A scope's events lost for want of room: counted in the capture, or
 * kept with the standing recording until a capture adopts it. */
static void lost(struct crumbs_cmd *cmd)
{
	if (cmd->standing)
		cmd->standing->lost = true;
	else
		atomic_fetch_add(&cmd->ctx->dropped, 1);
}

static void record_begin(struct crumbs_cmd *cmd, uint8_t type, unsigned level, const char *name,
			 size_t len)
{
	crumbs_context *ctx = cmd->ctx;

	if (cmd->kind == HANDLE_LABELS) {
		label_begin(ctx, cmd->cb, name, len);
		cmd->depth++;
		return;
	}
	struct event *e = event_add(cmd);
	if (!e) {
		/* No room for events: this scope and its end are skipped. */
		lost(cmd);
		cmd->state.skipped++;
		return;
	}
	e->type = type;
	e->level = (uint8_t)level;
	e->slot = NO_SLOT;
	name_keep(cmd, &e->u.name, name, len);
	uint32_t end_slot = NO_SLOT;
	uint32_t s = slots_for(cmd, cmd->depth, 2);
	if (s != NO_SLOT) {
		e->slot = s;
		end_slot = s + 1;
		stamp(cmd, s);
	}
	if (cmd->depth < END_STACK)
		cmd->end_slots[cmd->depth] = end_slot;
	cmd->depth++;
	if (ctx->mirror_labels)
		label_begin(ctx, cmd->cb, name, len);
}

void crumbs_scope_record_(crumbs_cmd *cmd, unsigned level, const char *name)
{
	if (level > CRUMBS_DETAIL_MAX)
		level = CRUMBS_DETAIL_MAX;
	record_begin(cmd, EVENT_BEGIN, level, name ? name : "", name ? strlen(name) : 0);
}

void crumbs_scope_recordf_(crumbs_cmd *cmd, unsigned level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	size_t n = name_vformat(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (level > CRUMBS_DETAIL_MAX)
		level = CRUMBS_DETAIL_MAX;
	record_begin(cmd, EVENT_BEGIN, level, buf, n);
}

void crumbs_scope_close_(crumbs_cmd *cmd)
{
	crumbs_context *ctx = cmd->ctx;

	if (cmd->kind == HANDLE_LABELS) {
		/* An end with nothing open here closes a label of an earlier
		 * command buffer, which debug utils allows on one queue. */
		ctx->ifn.CmdEndDebugUtilsLabel(cmd->cb);
		if (cmd->depth)
			cmd->depth--;
		return;
	}
	struct event *e = event_add(cmd);
	uint32_t slot = NO_SLOT;
	if (cmd->depth > 0) {
		cmd->depth--;
		if (cmd->depth < END_STACK)
			slot = cmd->end_slots[cmd->depth];
		else
			slot = slots_for(cmd, cmd->depth, 1);
	} else {
		/* The scope began on an earlier command buffer. */
		slot = slots_for(cmd, 0, 1);
	}
	if (cmd->untimed)
		slot = NO_SLOT; /* its reserved slot stays unwritten, and unread */
	if (!e) {
		/* The end is lost; its scope is closed at the frame end. The
		 * reserved slot stays unwritten, and unread. */
		lost(cmd);
	} else {
		e->type = EVENT_END;
		e->slot = slot;
		if (slot != NO_SLOT)
			stamp(cmd, slot);
	}
	if (ctx->mirror_labels)
		ctx->ifn.CmdEndDebugUtilsLabel(cmd->cb);
}

/* Whether cmd keeps events: in a capture or a standing recording. */
static bool keeps_events(const struct crumbs_cmd *cmd)
{
	return cmd->kind == HANDLE_CAPTURE || cmd->kind == HANDLE_STANDING;
}

void crumbs_count_(crumbs_cmd *cmd, uint64_t draws, uint64_t dispatches, uint64_t prims,
		   uint64_t verts)
{
	if (!keeps_events(cmd))
		return;
	struct counts_record c = { draws, dispatches, prims, verts, { 0, 0 } };
	uint32_t i = counts_keep(cmd, &c);
	struct event *e = i != UINT32_MAX ? event_add(cmd) : NULL;
	if (!e)
		return;
	e->type = EVENT_COUNTS;
	e->slot = NO_SLOT;
	e->u.counts = i;
}

void crumbs_cmd_execute(crumbs_cmd *cmd, uint32_t count, const VkCommandBuffer *secondaries)
{
	if (!keeps_events(cmd))
		return;
	for (uint32_t i = 0; i < count; i++) {
		struct event *e = event_add(cmd);
		if (!e) {
			lost(cmd);
			return;
		}
		e->type = EVENT_EXECUTE;
		e->slot = NO_SLOT;
		e->u.secondary = secondaries[i];
	}
}

/* ------------------------------------------------------------------------ */
/* Leaf events and render passes (the layer)                                */
/* ------------------------------------------------------------------------ */

bool record_full_detail(const struct crumbs_cmd *cmd)
{
	return keeps_events(cmd) && !cmd->state.skipped;
}

void record_untimed(struct crumbs_cmd *cmd, bool untimed)
{
	if (keeps_events(cmd))
		cmd->untimed = untimed;
}

void record_pass_begin(struct crumbs_cmd *cmd, enum crumbs_event_kind kind, const char *name,
		       size_t len)
{
	if (!len) {
		name = crumbs_event_kind_name(kind);
		len = strlen(name);
	}
	record_begin(cmd, EVENT_PASS, (unsigned)kind, name, len);
}

uint32_t record_leaf_begin(struct crumbs_cmd *cmd)
{
	/* A leaf is one level deeper than the scopes around it. */
	uint32_t s = slots_for(cmd, cmd->depth + 1, 2);
	if (s != NO_SLOT)
		stamp(cmd, s);
	return s;
}

void record_leaf_end(struct crumbs_cmd *cmd, uint32_t slot, enum crumbs_event_kind kind,
		     const char *name, size_t len, uint64_t draws, uint64_t dispatches,
		     uint64_t prims, uint64_t verts)
{
	if (slot != NO_SLOT)
		stamp(cmd, slot + 1);
	struct counts_record c = { draws, dispatches, prims, verts, { 0, 0 } };
	name_keep(cmd, &c.name, name, len);
	uint32_t i = counts_keep(cmd, &c);
	struct event *e = i != UINT32_MAX ? event_add(cmd) : NULL;
	if (!e) {
		/* Its slots stay written but unread: the leaf is lost, its
		 * time stays with its parent. */
		lost(cmd);
		return;
	}
	e->type = EVENT_LEAF;
	e->level = (uint8_t)kind;
	e->slot = slot;
	e->u.counts = i;
}
