/* SPDX-License-Identifier: MIT */
/*
 * record.c: scopes on command buffers, and the layer's leaf events and
 * render passes. Outside captures a scope costs a branch (or a label); in
 * a capture frame it writes a timestamp and an event into the capture's
 * store, and in a standing recording into the recording's own.
 */
#include "capture_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Every handle outside captures: detail -1, so the inline functions
 * return before they touch it, and threads can share it. */
static struct crumbs_cmd off_handle = { .state = { -1, 0 }, .kind = HANDLE_OFF };

static struct event *event_add(struct crumbs_cmd *cmd);
static void lost(struct crumbs_cmd *cmd);

/* ------------------------------------------------------------------------ */
/* Stretches: pipeline statistics between scope boundaries                  */
/* ------------------------------------------------------------------------ */

/*
 * Vulkan allows one pipeline statistics query open at a time, so a scope
 * cannot have one of its own around its children's. Instead a query runs
 * from each boundary (a scope's begin or end, a render pass edge, a leaf)
 * to the next, and the analyzer sums each into the scope open where it
 * began; a scope's own stretches are its exclusive counts.
 */

/* The pool cmd's queries are in: a standing recording's family's own,
 * but for those it took of a capture set's share (STATS_IN_SET), which
 * are the queue's. */
RECORD_PATH
static VkQueryPool stats_pool_of(const struct crumbs_cmd *cmd, uint32_t i)
{
	const struct queue_state *q = &cmd->ctx->queues[cmd->queue];
	if (cmd->standing && !(i & STATS_IN_SET))
		return q->standing_stats ? q->standing_stats->pool : VK_NULL_HANDLE;
	return q->stats_pool;
}

/* A query for cmd, or COUNTER_UNKNOWN when none is left: of its set's
 * share, or of a standing recording's ranges. */
RECORD_PATH
static uint32_t stats_take(struct crumbs_cmd *cmd)
{
	if (cmd->untimed || !stats_pool_of(cmd, 0))
		return COUNTER_UNKNOWN;
	if (!cmd->standing)
		return counters_take(&cmd->set->queues[cmd->queue]);
	struct standing *st = cmd->standing;
	if (st->stats_next < st->stats_end)
		return st->stats_next++;
	return standing_stats_spill(cmd->ctx, cmd);
}

/* Ends cmd's open query. */
RECORD_PATH
static void stretch_stop(struct crumbs_cmd *cmd)
{
	if (!cmd->stretch_open)
		return;
	const struct queue_state *q = &cmd->ctx->queues[cmd->queue];
	cmd->ctx->devices[q->device].fn.CmdEndQuery(cmd->cb, stats_pool_of(cmd, cmd->stretch),
						    cmd->stretch & ~STATS_IN_SET);
	perfquery_end(cmd, cmd->stretch);
	cmd->stretch_open = false;
}

/* An event of `type` for query i (or COUNTER_UNKNOWN). */
RECORD_PATH
static void stretch_event(struct crumbs_cmd *cmd, uint8_t type, uint32_t i)
{
	struct event *e = event_add(cmd);
	if (!e) {
		lost(cmd);
		return;
	}
	e->type = type;
	e->level = 0;
	e->flags = 0;
	e->slot = NO_SLOT;
	e->u.counts = i;
}

/* Begins a query for what cmd records next, where one may be: its work is
 * unknown where none can (a multiview pass, no query left, a queue whose
 * family counts nothing), and there is none in a pass of secondaries,
 * whose own count theirs. */
RECORD_PATH
static void stretch_start(struct crumbs_cmd *cmd)
{
	if (!cmd->counting || cmd->no_stretch)
		return;
	stretch_stop(cmd);
	const struct queue_state *q = &cmd->ctx->queues[cmd->queue];
	uint32_t i = stats_take(cmd);
	stretch_event(cmd, EVENT_STRETCH, i);
	if (i == COUNTER_UNKNOWN)
		return;
	cmd->ctx->devices[q->device].fn.CmdBeginQuery(cmd->cb, stats_pool_of(cmd, i),
						      i & ~STATS_IN_SET, 0);
	perfquery_begin(cmd, i);
	cmd->stretch = i;
	cmd->stretch_open = true;
}

void crumbs_pass_edge(crumbs_cmd *cmd, enum crumbs_pass_edge edge, uint32_t width,
		      uint32_t height)
{
	if (!cmd->counting)
		return;
	switch (edge) {
	case CRUMBS_PASS_BEGINNING:
		stretch_stop(cmd);
		if (width && height && width <= (1u << 20) && height <= (1u << 20)) {
			struct event *e = event_add(cmd);
			if (e) {
				e->type = EVENT_AREA;
				e->level = 0;
				e->flags = 0;
				e->slot = NO_SLOT;
				e->u.name = (struct name_ref){ width, height };
			}
		}
		cmd->no_stretch = true;
		break;
	case CRUMBS_PASS_BEGUN:
		cmd->no_stretch = false;
		stretch_start(cmd);
		break;
	case CRUMBS_PASS_BEGUN_SECONDARY:
		cmd->no_stretch = true;
		break;
	case CRUMBS_PASS_BEGUN_MULTIVIEW:
		/* A query inside a multiview pass counts each view, and
		 * needs as many queries as views: not placed. */
		cmd->no_stretch = true;
		stretch_event(cmd, EVENT_STRETCH, COUNTER_UNKNOWN);
		break;
	case CRUMBS_PASS_ENDING:
		stretch_stop(cmd);
		cmd->no_stretch = true;
		break;
	case CRUMBS_PASS_ENDED:
		cmd->no_stretch = false;
		stretch_start(cmd);
		break;
	}
}

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

RECORD_PATH
crumbs_cmd *crumbs_cmd_begin(crumbs_context *ctx, VkCommandBuffer cb, VkQueue queue)
{
	if (!ctx || !cb)
		return &off_handle;
	struct capture_set *set = atomic_load(&ctx->cur);
	struct queue_state *q = queue_find(ctx, queue);
	struct crumbs_cmd *h;

	if (set && q) {
		path_warm(set, PATH_RECORD);
		if (!(h = store_handle(ctx, set, q)))
			return &off_handle;
		store_warm(ctx, set, q, cb);
	} else if (ctx->mirror_labels && q && (ctx->devices[q->device].features & CRUMBS_FEATURE_DEBUG_UTILS)) {
		h = store_label_handle(ctx, q);
	} else {
		return &off_handle;
	}
	h->cb = cb;
	if (h->kind == HANDLE_CAPTURE && set->counters && counters_device(&ctx->devices[q->device])) {
		h->counting = true;
		stretch_start(h);
	}
	return h;
}

void record_count(struct crumbs_cmd *cmd)
{
	if (cmd->counting)
		stretch_start(cmd);
}

RECORD_PATH
void crumbs_cmd_end(crumbs_cmd *cmd)
{
	if (cmd->kind == HANDLE_STANDING)
		stretch_stop(cmd);
	if (cmd->kind != HANDLE_CAPTURE)
		return;
	stretch_stop(cmd);
	store_map_put(cmd->set, cmd);
	/* The scopes it leaves open end on a later command buffer, which
	 * can write their reserved end slots: this one never will. */
	for (uint32_t d = 0; d < cmd->depth && d < END_STACK; d++)
		if (cmd->end_slots[d] != NO_SLOT)
			pools_spare_put(&cmd->set->queues[cmd->queue], cmd->end_slots[d]);
}

/* ------------------------------------------------------------------------ */
/* Events                                                                   */
/* ------------------------------------------------------------------------ */

/* An event of cmd, in the capture's store or its standing recording's. */
RECORD_PATH
static struct event *event_add(struct crumbs_cmd *cmd)
{
	return cmd->standing ? standing_event(cmd->ctx, cmd->standing) : store_event(cmd);
}

RECORD_PATH
static void name_keep(struct crumbs_cmd *cmd, struct name_ref *ref, const char *name, size_t len)
{
	if (cmd->standing)
		standing_name(cmd->ctx, cmd->standing, ref, name, len);
	else
		store_name(cmd->set, ref, name, len);
}

/* The counts record of an event of cmd, or UINT32_MAX. */
static uint32_t counts_keep(struct crumbs_cmd *cmd, const struct counts_record *c)
{
	if (cmd->standing)
		return standing_counts(cmd->ctx, cmd->standing, c);
	return store_counts(cmd->set, c);
}

/* Whether cmd times what it records now: its queue has timestamps and
 * it is outside a multiview pass. */
RECORD_PATH
static bool timed(const struct crumbs_cmd *cmd)
{
	return cmd->ctx->queues[cmd->queue].valid_bits && !cmd->untimed;
}

/* Slots for cmd: from its queue's pool in a capture, for a standing
 * recording from its own range first (standing_slots). NO_SLOT when it
 * is not timed now or the slots ran out: an event then lost its
 * timestamps where timed(cmd) holds. */
RECORD_PATH
static uint32_t slots_for(struct crumbs_cmd *cmd, uint32_t depth, uint32_t count)
{
	if (!timed(cmd))
		return NO_SLOT;
	if (cmd->standing)
		return standing_slots(cmd->ctx, cmd, depth, count);
	return pools_take_slots(&cmd->set->queues[cmd->queue], depth, count);
}

/* The flags of an event of cmd whose slot is `slot`: lost when it has
 * none but cmd times what it records. */
RECORD_PATH
static uint8_t slot_flags(const struct crumbs_cmd *cmd, uint32_t slot)
{
	return slot == NO_SLOT && timed(cmd) ? EVENT_LOST : 0;
}

/* A timestamp into slot of cmd's pool: a standing recording's own, but
 * for its slots in a capture set's share (SLOT_IN_SET). */
RECORD_PATH
static void stamp(struct crumbs_cmd *cmd, uint32_t slot)
{
	crumbs_context *ctx = cmd->ctx;
	struct queue_state *q = &ctx->queues[cmd->queue];
	struct device_state *d = &ctx->devices[q->device];
	VkQueryPool pool = cmd->standing && !(slot & SLOT_IN_SET) ? d->standing->pool : q->pool;
	d->fn.CmdWriteTimestamp(cmd->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool,
				slot & ~SLOT_IN_SET);
}

static void label_begin(crumbs_context *ctx, VkCommandBuffer cb, const char *name, size_t len)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 255 ? len : 255), name);
	VkDebugUtilsLabelEXT label = { VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, NULL, buf,
				       { 0, 0, 0, 0 } };
	ctx->ifn.CmdBeginDebugUtilsLabel(cb, &label);
}

/* A scope or event not kept for want of room: counted in the capture,
 * or with the standing recording until a capture adopts it. */
static void lost(struct crumbs_cmd *cmd)
{
	if (cmd->standing)
		cmd->standing->unrecorded++;
	else
		atomic_fetch_add(&cmd->set->dropped, 1);
}

RECORD_PATH
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
	name_keep(cmd, &e->u.name, name, len);
	uint32_t end_slot = NO_SLOT;
	uint32_t s = slots_for(cmd, cmd->depth, 2);
	e->slot = s;
	e->flags = slot_flags(cmd, s);
	if (s != NO_SLOT) {
		end_slot = s + 1;
		stamp(cmd, s);
	}
	if (cmd->depth < END_STACK)
		cmd->end_slots[cmd->depth] = end_slot;
	cmd->depth++;
	if (ctx->mirror_labels)
		label_begin(ctx, cmd->cb, name, len);
	stretch_start(cmd);
}

RECORD_PATH
void crumbs_scope_record_(crumbs_cmd *cmd, unsigned level, const char *name)
{
	if (level > CRUMBS_DETAIL_MAX)
		level = CRUMBS_DETAIL_MAX;
	record_begin(cmd, EVENT_BEGIN, level, name ? name : "", name ? strlen(name) : 0);
}

RECORD_PATH
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

RECORD_PATH
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
	/* An end whose scope's begin reserved its slot is lost with the
	 * begin, which counts for both. */
	bool reserved = false;
	if (cmd->depth > 0) {
		cmd->depth--;
		reserved = cmd->depth < END_STACK;
		if (reserved)
			slot = cmd->end_slots[cmd->depth];
		else
			slot = slots_for(cmd, cmd->depth, 1);
	} else {
		/* The scope began on an earlier command buffer: the end slot it
		 * reserved there, when that one has ended, or a new one. */
		slot = NO_SLOT;
		if (!cmd->standing && !cmd->untimed)
			slot = pools_spare_take(&cmd->set->queues[cmd->queue]);
		if (slot == NO_SLOT)
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
		e->flags = reserved ? 0 : slot_flags(cmd, slot);
		if (slot != NO_SLOT)
			stamp(cmd, slot);
	}
	if (ctx->mirror_labels)
		ctx->ifn.CmdEndDebugUtilsLabel(cmd->cb);
	if (e)
		stretch_start(cmd);
}

/* Whether cmd keeps events: in a capture or a standing recording. */
RECORD_PATH
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
	e->flags = 0;
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
		e->flags = 0;
		e->slot = NO_SLOT;
		e->u.secondary = secondaries[i];
	}
	/* Outside a pass the program executes them next, and no query of
	 * ours may be open then: its own work after them goes uncounted
	 * until the next boundary. */
	if (cmd->stretch_open) {
		stretch_stop(cmd);
		stretch_event(cmd, EVENT_STRETCH, COUNTER_UNKNOWN);
	}
}

/* ------------------------------------------------------------------------ */
/* Leaf events and render passes (the layer)                                */
/* ------------------------------------------------------------------------ */

RECORD_PATH
bool record_keeps(const struct crumbs_cmd *cmd)
{
	return keeps_events(cmd) && !cmd->state.skipped;
}

RECORD_PATH
bool record_full_detail(const struct crumbs_cmd *cmd)
{
	return record_keeps(cmd) && cmd->state.detail >= CRUMBS_DETAIL_MAX;
}

void record_untimed(struct crumbs_cmd *cmd, bool untimed)
{
	if (keeps_events(cmd))
		cmd->untimed = untimed;
}

RECORD_PATH
void record_pass_begin(struct crumbs_cmd *cmd, enum crumbs_event_kind kind, const char *name,
		       size_t len)
{
	if (!len) {
		name = crumbs_event_kind_name(kind);
		len = strlen(name);
	}
	record_begin(cmd, EVENT_PASS, (unsigned)kind, name, len);
}

/* A leaf's own query: the stretch before it ends and one for the leaf
 * alone begins, its index in leaf_stretch (COUNTER_UNKNOWN where none
 * can be placed). */
static void leaf_stretch_begin(struct crumbs_cmd *cmd)
{
	stretch_stop(cmd);
	cmd->leaf_stretch = COUNTER_UNKNOWN;
	const struct queue_state *q = &cmd->ctx->queues[cmd->queue];
	if (cmd->no_stretch)
		return;
	uint32_t i = stats_take(cmd);
	if (i == COUNTER_UNKNOWN)
		return;
	cmd->ctx->devices[q->device].fn.CmdBeginQuery(cmd->cb, stats_pool_of(cmd, i),
						      i & ~STATS_IN_SET, 0);
	cmd->stretch = cmd->leaf_stretch = i;
	cmd->stretch_open = true;
}

RECORD_PATH
uint32_t record_leaf_begin(struct crumbs_cmd *cmd)
{
	/* A leaf is one level deeper than the scopes around it. */
	uint32_t s = slots_for(cmd, cmd->depth + 1, 2);
	if (s != NO_SLOT)
		stamp(cmd, s);
	if (cmd->counting)
		leaf_stretch_begin(cmd);
	return s;
}

RECORD_PATH
void record_leaf_end(struct crumbs_cmd *cmd, uint32_t slot, enum crumbs_event_kind kind,
		     const char *name, size_t len, uint64_t draws, uint64_t dispatches,
		     uint64_t prims, uint64_t verts)
{
	if (slot != NO_SLOT)
		stamp(cmd, slot + 1);
	if (cmd->counting)
		stretch_stop(cmd);
	struct counts_record c = { draws, dispatches, prims, verts, { 0, 0 } };
	name_keep(cmd, &c.name, name, len);
	uint32_t i = counts_keep(cmd, &c);
	struct event *e = i != UINT32_MAX ? event_add(cmd) : NULL;
	if (!e) {
		/* Its slots stay written but unread: the leaf is lost, its
		 * time stays with its parent. Its counts are lost too: the
		 * parent's are unknown, not low. */
		lost(cmd);
		if (cmd->counting) {
			stretch_event(cmd, EVENT_STRETCH, COUNTER_UNKNOWN);
			stretch_start(cmd);
		}
		return;
	}
	e->type = EVENT_LEAF;
	e->level = (uint8_t)kind;
	e->flags = slot_flags(cmd, slot);
	e->slot = slot;
	e->u.counts = i;
	if (cmd->counting) {
		/* A pass of secondaries records no leaf of its own. */
		if (!cmd->no_stretch || cmd->untimed)
			stretch_event(cmd, EVENT_LEAF_STRETCH, cmd->leaf_stretch);
		stretch_start(cmd);
	}
}

void record_execute_edge(struct crumbs_cmd *cmd, bool before)
{
	if (!cmd->counting)
		return;
	/* A secondary may not run inside a query of its primary's; its own
	 * count its work, so the stretch after it begins right after. */
	if (before)
		stretch_stop(cmd);
	else
		stretch_start(cmd);
}
