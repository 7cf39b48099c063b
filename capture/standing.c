/* SPDX-License-Identifier: MIT */
/*
 * standing.c: recordings that stay valid across frames, for command
 * buffers a program records once and submits every frame (the layer makes
 * one for each primary command buffer recorded without
 * VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT). Such a recording writes its
 * timestamps into its own range of a per-device query pool, which it
 * resets first thing, so each execution of it is timed; its events, names
 * and counts are kept on the heap. A submission of it in a capture frame
 * adopts it: its events are copied into the capture with slots taken from
 * the queue's pool, and right after the batch the GPU copies its results
 * into the queue's copy buffer where those slots are read. A later
 * execution's reset is ordered after that copy, as vkCmdResetQueryPool
 * orders every earlier command that references the same queries. Its
 * events, names, counts and slots are kept here too.
 *
 * A recording sized from its command buffer's last one can run out of
 * its range: one begun in the pre-roll with ONE_TIME_SUBMIT, as Zink
 * records each frame during the frame before, has had no last one. Such
 * a command buffer runs once, so once its range is used up during a
 * capture frame, its timestamps go on in that frame's share of its
 * queue's pool, as those of a command buffer begun in the frame do: reset
 * before any of the frame's work, and read with the frame's results when
 * the frame submits it.
 *
 * A recording counts pipeline statistics as a capture's command buffer
 * does, in stretches between its scope boundaries, where the device
 * counts them and the capture would: into ranges of its queue family's
 * own pool, reset first thing with its timestamps, and copied after the
 * batch of a capture frame that adopts it into the queue's stats_copy at
 * queries of the frame's share, which counters.c then reads from there.
 * A recording that found no range free counts nothing, and its stretches
 * are unknown.
 *
 * In a run, the layer gives every primary command buffer a standing
 * recording at the run's detail: its slots stay its own until it is
 * recorded again, reset or freed, so whichever frame submits it reads
 * them, however many frames after its recording, and no later frame is
 * handed them while it is pending. A run's sets are never lent to it.
 */
#include "capture_internal.h"

#include <string.h>

static pthread_mutex_t standing_lock = PTHREAD_MUTEX_INITIALIZER;

/* The statistics queries of q's family for its standing recordings, and
 * the buffer their copies land in: q's own, as each queue reads its
 * own share. Without either, its recordings count nothing. */
static void stats_setup(crumbs_context *ctx, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	for (uint32_t i = 0; i < ctx->queue_count && !q->standing_stats; i++)
		if (&ctx->queues[i] != q && ctx->queues[i].owns_standing_stats &&
		    queue_same_family(&ctx->queues[i], q))
			q->standing_stats = ctx->queues[i].standing_stats;
	if (!q->standing_stats) {
		struct standing_stats *p = ctx_alloc(ctx, sizeof(*p));
		VkQueryPoolCreateInfo qi = { VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, NULL, 0,
					     VK_QUERY_TYPE_PIPELINE_STATISTICS,
					     STATS_RANGE * STATS_RANGES, q->stats_bits };
		if (!p)
			return;
		memset(p, 0, sizeof(*p));
		if (d->fn.CreateQueryPool(d->device, &qi, ctx_vk_allocator(ctx), &p->pool) !=
		    VK_SUCCESS) {
			ctx_free(ctx, p);
			return;
		}
		q->standing_stats = p;
		q->owns_standing_stats = true;
	}
	q->stats_adopted = ctx_alloc(ctx, q->stats_count);
	if (q->stats_adopted)
		memset(q->stats_adopted, ADOPTED_NOT, q->stats_count);
	if (!q->stats_adopted ||
	    !pools_host_buffer(ctx, d, sizeof(uint64_t) * q->stats_words * q->stats_count,
			       &q->stats_copy)) {
		ctx_free(ctx, q->stats_adopted);
		q->stats_adopted = NULL;
		if (!q->owns_standing_stats)
			q->standing_stats = NULL;
	}
}

bool standing_setup(crumbs_context *ctx, struct crumbs_cmd *(*lookup)(void *, VkCommandBuffer),
		    void *user)
{
	const VkAllocationCallbacks *alloc = ctx_vk_allocator(ctx);
	bool any = false;

	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct device_state *d = &ctx->devices[q->device];
		if (!q->copy_cb[0] || !q->valid_bits || !q->can_reset_in_cmd)
			continue;
		if (!d->standing) {
			struct standing_pool *p = ctx_alloc(ctx, sizeof(*p));
			VkQueryPoolCreateInfo qi = { VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, NULL, 0,
						     VK_QUERY_TYPE_TIMESTAMP,
						     STANDING_RANGE * STANDING_RANGES, 0 };
			if (!p || d->fn.CreateQueryPool(d->device, &qi, alloc, &p->pool) != VK_SUCCESS) {
				ctx_free(ctx, p);
				continue;
			}
			d->standing = p;
		}
		VkCommandPoolCreateInfo pi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
					       VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
					       q->family };
		q->standing_cbs = ctx_alloc(ctx, sizeof(VkCommandBuffer) * ctx->max_submissions);
		VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
						   VK_NULL_HANDLE, VK_COMMAND_BUFFER_LEVEL_PRIMARY,
						   ctx->max_submissions };
		if (!q->standing_cbs ||
		    d->fn.CreateCommandPool(d->device, &pi, alloc, &q->standing_cmd_pool) != VK_SUCCESS)
			goto no_queue;
		ai.commandPool = q->standing_cmd_pool;
		if (d->fn.AllocateCommandBuffers(d->device, &ai, q->standing_cbs) != VK_SUCCESS)
			goto no_queue;
		ctx_new_cbs(ctx, d, q->standing_cbs, ctx->max_submissions);
		if (q->stats_pool)
			stats_setup(ctx, q);
		any = true;
		continue;
no_queue:
		if (q->standing_cmd_pool)
			d->fn.DestroyCommandPool(d->device, q->standing_cmd_pool, alloc);
		q->standing_cmd_pool = VK_NULL_HANDLE;
		ctx_free(ctx, q->standing_cbs);
		q->standing_cbs = NULL;
	}
	ctx->standing_of = lookup;
	ctx->standing_user = user;
	return any;
}

/* Takes n ranges of owner (`total` of them, `held` by capture sets), or
 * fewer, halving, down to `least`, for h; the first, or total. */
static uint32_t take_ranges(struct crumbs_cmd **owner, const uint8_t *held, uint32_t total,
			    uint32_t *n, uint32_t least, struct crumbs_cmd *h)
{
	uint32_t first = total;
	while (*n >= least) {
		for (uint32_t i = 0, run = 0; first == total && i < total; i++) {
			run = owner[i] || held[i] ? 0 : run + 1;
			if (run == *n)
				first = i + 1 - *n;
		}
		if (first < total || *n == 1)
			break;
		*n /= 2;
	}
	if (first < total)
		for (uint32_t i = first; i < first + *n; i++)
			owner[i] = h;
	return first;
}

/* Whether a standing recording of q's counts pipeline statistics: as the
 * capture that may adopt it would, a run's (run_detail >= 0) when runs
 * are told to, any other unless the program said never. */
static bool stats_wanted(const crumbs_context *ctx, const struct queue_state *q, int run_detail)
{
	if (!q->standing_stats || !q->stats_adopted || !counters_device(&ctx->devices[q->device]))
		return false;
	return run_detail >= 0 ? counters_in_run(ctx) : ctx->counters >= 0;
}

bool standing_queue(crumbs_context *ctx, VkQueue queue)
{
	struct queue_state *q = queue_find(ctx, queue);
	return q && q->standing_cbs;
}

struct crumbs_cmd *standing_begin(crumbs_context *ctx, VkCommandBuffer cb, VkQueue queue,
				  uint32_t hint, bool once, int run_detail)
{
	struct queue_state *q = queue_find(ctx, queue);
	if (!q || !q->standing_cbs)
		return NULL;
	struct device_state *d = &ctx->devices[q->device];
	struct standing_pool *p = d->standing;
	uint32_t n = (hint + hint / 4 + STANDING_RANGE - 1) / STANDING_RANGE;
	/* With nothing to size it, a run's (which has no capture share to go
	 * on in, standing_slots) takes a few ranges, or what is free; so
	 * does one begun in a capture's pre-roll, for what it records there
	 * before the capture frame. */
	bool ahead = once && atomic_load(&ctx->state) == STATE_PREROLL;
	if (n == 0 && (run_detail >= CRUMBS_DETAIL_MAX || (run_detail < 0 && ahead)))
		n = STANDING_RUN_RANGES;
	else if (n == 0)
		n = run_detail >= 0 ? STANDING_RUN_SCOPE_RANGES : 1;
	if (n > STANDING_MAX_RANGES)
		n = STANDING_MAX_RANGES;
	uint32_t least = hint ? n : 1;

	struct crumbs_cmd *h = ctx_alloc(ctx, sizeof(*h));
	struct standing *st = ctx_alloc(ctx, sizeof(*st));
	if (!h || !st) {
		ctx_free(ctx, h);
		ctx_free(ctx, st);
		return NULL;
	}
	pthread_mutex_lock(&standing_lock);
	if (!hint && n > 1) {
		/* A program that begins many command buffers at once, none
		 * with an earlier recording to size it, gets the pool shared
		 * out among them rather than taken by the first few. */
		uint32_t unused = 0;
		for (uint32_t i = 0; i < STANDING_RANGES; i++)
			unused += !p->owner[i] && !p->held[i];
		if (unused < STANDING_RANGES / 8)
			n = 1;
		else if (unused < STANDING_RANGES / 2 && n > 2)
			n = 2;
	}
	uint32_t first = take_ranges(p->owner, p->held, STANDING_RANGES, &n, least, h);
	/* As many statistics queries as timestamps, about: one a boundary. */
	uint32_t sn = 0, sfirst = STATS_RANGES;
	bool counts = first < STANDING_RANGES && stats_wanted(ctx, q, run_detail);
	if (counts) {
		sn = (n * STANDING_RANGE + STATS_RANGE - 1) / STATS_RANGE;
		/* Shared out as the timestamps are, once they run short. */
		uint32_t unused = 0;
		for (uint32_t i = 0; i < STATS_RANGES; i++)
			unused += !q->standing_stats->owner[i] && !q->standing_stats->held[i];
		if (unused < STATS_RANGES / 8)
			sn = 1;
		else if (unused < STATS_RANGES / 2 && sn > 2)
			sn = 2;
		else if (sn > STATS_RANGES / 4)
			sn = STATS_RANGES / 4;
		sfirst = take_ranges(q->standing_stats->owner, q->standing_stats->held,
				     STATS_RANGES, &sn, 1, h);
		if (sfirst == STATS_RANGES)
			sn = 0;
	}
	pthread_mutex_unlock(&standing_lock);
	if (first == STANDING_RANGES) {
		ctx_free(ctx, h);
		ctx_free(ctx, st);
		return NULL;
	}
	st->device = q->device;
	st->first_range = first;
	st->range_count = n;
	st->slot_first = st->slot_next = first * STANDING_RANGE;
	st->slot_end = (first + n) * STANDING_RANGE;
	st->once = once;
	st->stats_first_range = sfirst;
	st->stats_range_count = sn;
	st->stats_first = st->stats_next = sfirst * STATS_RANGE;
	st->stats_end = (sfirst + sn) * STATS_RANGE;
	h->state.detail = run_detail >= 0 ? run_detail : CRUMBS_DETAIL_MAX;
	h->ctx = ctx;
	h->kind = HANDLE_STANDING;
	h->cb = cb;
	h->queue = (uint32_t)(q - ctx->queues);
	h->standing = st;
	d->fn.CmdResetQueryPool(cb, p->pool, st->slot_first, st->slot_end - st->slot_first);
	if (sn)
		d->fn.CmdResetQueryPool(cb, q->standing_stats->pool, st->stats_first,
					st->stats_end - st->stats_first);
	/* Where it could not have a range, its work is unknown. Its first
	 * stretch begins in record_count(). */
	h->counting = counts;
	return h;
}

uint32_t standing_used(const struct crumbs_cmd *h)
{
	return h->standing->wanted;
}

void standing_free(crumbs_context *ctx, struct crumbs_cmd *h)
{
	if (!h)
		return;
	struct standing *st = h->standing;
	struct standing_pool *p = ctx->devices[st->device].standing;
	pthread_mutex_lock(&standing_lock);
	for (uint32_t i = st->first_range; i < st->first_range + st->range_count; i++)
		if (p->owner[i] == h)
			p->owner[i] = NULL;
	struct standing_stats *sp = ctx->queues[h->queue].standing_stats;
	for (uint32_t i = st->stats_first_range;
	     sp && i < st->stats_first_range + st->stats_range_count; i++)
		if (sp->owner[i] == h)
			sp->owner[i] = NULL;
	pthread_mutex_unlock(&standing_lock);
	ctx_free(ctx, st->events);
	ctx_free(ctx, st->names);
	ctx_free(ctx, st->counts);
	ctx_free(ctx, st);
	ctx_free(ctx, h);
}

/* ------------------------------------------------------------------------ */
/* A recording's storage                                                    */
/* ------------------------------------------------------------------------ */

/* Grows an array of a standing recording to hold `need` items of `size`. */
static bool grow(crumbs_context *ctx, void **items, uint32_t *cap, uint32_t need, size_t size)
{
	return ctx_grow(ctx, items, cap, need, size, 16);
}

struct event *standing_event(crumbs_context *ctx, struct standing *st)
{
	if (!grow(ctx, (void **)&st->events, &st->event_cap, st->event_count + 1,
		  sizeof(*st->events)))
		return NULL;
	return &st->events[st->event_count++];
}

void standing_name(crumbs_context *ctx, struct standing *st, struct name_ref *ref,
		   const char *name, size_t len)
{
	if (len > 4096)
		len = 4096;
	*ref = (struct name_ref){ st->name_len, 0 };
	if (!grow(ctx, (void **)&st->names, &st->name_cap, st->name_len + (uint32_t)len, 1))
		return; /* the name is lost, not the scope */
	memcpy(st->names + st->name_len, name, len);
	st->name_len += (uint32_t)len;
	ref->len = (uint32_t)len;
}

uint32_t standing_counts(crumbs_context *ctx, struct standing *st, const struct counts_record *c)
{
	if (!grow(ctx, (void **)&st->counts, &st->count_cap, st->count_len + 1,
		  sizeof(*st->counts)))
		return UINT32_MAX;
	st->counts[st->count_len] = *c;
	return st->count_len++;
}

/*
 * The capture frame's set, whose share a recording past its range may
 * take queries of, or NULL. Only the frame that took the first of them
 * can read them: a later one's share is another, reset again since. Not
 * in a run: its sets come round again every few frames, and a command
 * buffer submitted after that would write queries handed to a later
 * frame.
 */
static struct capture_set *spill_set(crumbs_context *ctx, const struct standing *st)
{
	struct capture_set *set = st->once && ctx->set_count == 1 ? atomic_load(&ctx->cur) : NULL;
	if (!set || (st->set && (st->set != set || st->set_frame != set->frame)))
		return NULL;
	return set;
}

/* One thread records it: no atomics but the set's. */
RECORD_PATH
uint32_t standing_slots(crumbs_context *ctx, struct crumbs_cmd *h, uint32_t depth, uint32_t count)
{
	struct standing *st = h->standing;
	st->wanted += count;
	if (st->slot_next + count <= st->slot_end) {
		uint32_t s = st->slot_next;
		st->slot_next += count;
		return s;
	}
	struct capture_set *set = spill_set(ctx, st);
	uint32_t s = set ? pools_take_slots(&set->queues[h->queue], depth, count) : NO_SLOT;
	if (s == NO_SLOT)
		return NO_SLOT;
	st->set = set;
	st->set_frame = set->frame;
	return s | SLOT_IN_SET;
}

uint32_t standing_stats_spill(crumbs_context *ctx, struct crumbs_cmd *h)
{
	struct standing *st = h->standing;
	struct capture_set *set = spill_set(ctx, st);
	if (!set || !set->counters)
		return COUNTER_UNKNOWN;
	uint32_t i = counters_take(&set->queues[h->queue]);
	if (i == COUNTER_UNKNOWN)
		return COUNTER_UNKNOWN;
	st->set = set;
	st->set_frame = set->frame;
	return i | STATS_IN_SET;
}

/* ------------------------------------------------------------------------ */
/* Adoption by a capture                                                    */
/* ------------------------------------------------------------------------ */

/* Whether event e of a standing recording is left out of a frame
 * captured at `detail`: leaf events, render passes and counts but at full
 * detail, and scopes of a higher level with everything inside them, as
 * crumbs_scope_begin leaves them out, with their ends. `out` and `drops`
 * keep, for each scope open in the recording, whether it was left out and
 * whether what is inside it is, as bits. */
struct detail_filter {
	uint64_t out, drops;
	uint32_t depth;
};

static bool left_out(const struct event *e, int detail, struct detail_filter *f)
{
	if (detail >= CRUMBS_DETAIL_MAX)
		return false;
	switch (e->type) {
	case EVENT_LEAF:
	case EVENT_COUNTS:
		return true;
	case EVENT_BEGIN:
	case EVENT_PASS: {
		bool inside = f->depth && (f->drops & 1);
		bool drops = inside || (e->type == EVENT_BEGIN && e->level > detail);
		bool out = drops || e->type == EVENT_PASS;
		f->out = (f->out << 1) | out;
		f->drops = (f->drops << 1) | drops;
		f->depth++;
		return out;
	}
	case EVENT_END: {
		if (!f->depth)
			return false; /* ends a scope of an earlier command buffer */
		bool out = f->out & 1;
		f->out >>= 1;
		f->drops >>= 1;
		f->depth--;
		return out;
	}
	default:
		return false;
	}
}

/*
 * The queries of set's share of q that take the statistics of h's
 * stretches, in order, which `copy` copies into q's stats_copy; the
 * first, or COUNTER_UNKNOWN when they cannot be read: none was counted,
 * the frame counts none, q is of another family (whose pool counts other
 * statistics) or has no room.
 */
static uint32_t adopt_stats(crumbs_context *ctx, struct capture_set *set, struct queue_state *q,
			    struct crumbs_cmd *h, VkCommandBuffer copy)
{
	struct standing *st = h->standing;
	const struct queue_state *from = &ctx->queues[h->queue];
	uint32_t used = st->stats_next - st->stats_first;
	if (!used || !copy || !set->counters || !q->stats_adopted ||
	    !queue_same_family(q, from) || !from->standing_stats)
		return COUNTER_UNKNOWN;
	uint32_t first = counters_take_n(&set->queues[q - ctx->queues], used);
	if (first == COUNTER_UNKNOWN)
		return COUNTER_UNKNOWN;
	/* Each of them was begun and ended in the command buffer this batch
	 * ran, so waiting for them ends. */
	const struct device_state *d = &ctx->devices[q->device];
	VkDeviceSize stride = sizeof(uint64_t) * q->stats_words;
	d->fn.CmdCopyQueryPoolResults(copy, from->standing_stats->pool, st->stats_first, used,
				      q->stats_copy.buffer, stride * first, stride,
				      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT |
				      VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
	memset(q->stats_adopted + first, ADOPTED_COPIED, used);
	/* Vendor counters are not counted in standing recordings. */
	perfquery_forgo(q, first, used);
	pthread_mutex_lock(&standing_lock);
	for (uint32_t r = st->stats_first_range; r < st->stats_first_range + st->stats_range_count;
	     r++)
		from->standing_stats->held[r] |= (uint8_t)(1u << set->index);
	set->holds = true;
	pthread_mutex_unlock(&standing_lock);
	return first;
}

struct crumbs_cmd *standing_adopt(crumbs_context *ctx, struct capture_set *set,
				  struct queue_state *q, struct crumbs_cmd *h, VkCommandBuffer copy)
{
	const struct standing *st = h->standing;
	struct crumbs_cmd *a = store_handle(ctx, set, q);
	if (!a)
		return NULL;
	a->cb = h->cb;
	a->adopted = true;
	/* Its stretches say what it counted, or that it is unknown. */
	a->counting = h->counting && set->counters;
	if (st->unrecorded)
		atomic_fetch_add(&set->dropped, st->unrecorded);

	/* Its slots, in the same order, from the set's share of the queue's
	 * pool: the range's results are copied as they lie. */
	uint32_t used = st->slot_next - st->slot_first;
	uint32_t base = NO_SLOT;
	if (used && q->valid_bits && q->written && q->device == st->device)
		base = pools_take_slots(&set->queues[q - ctx->queues], 0, used);
	uint8_t marks[STANDING_RANGE * STANDING_MAX_RANGES];
	uint8_t *read = base != NO_SLOT ? marks : NULL; /* the slots its events wrote */
	if (read)
		memset(read, 0, used);
	/* The slots it took in this frame's share are read where they lie,
	 * by the copy of the queue it was recorded for. */
	bool in_set = st->set == set && st->set_frame == set->frame && q == &ctx->queues[h->queue];
	uint32_t stats = adopt_stats(ctx, set, q, h, copy);
	struct detail_filter filter = { 0, 0, 0 };
	bool full = false;
	for (uint32_t k = 0; k < st->event_count; k++) {
		const struct event *e = &st->events[k];
		if (left_out(e, set->detail, &filter))
			continue;
		bool stretch = e->type == EVENT_STRETCH || e->type == EVENT_LEAF_STRETCH;
		/* A frame that counts nothing has no stretches; one of less
		 * than full detail no render areas, and a leaf's work
		 * counts in the scope around it. */
		if ((stretch || e->type == EVENT_AREA) &&
		    (!set->counters || (e->type == EVENT_AREA && set->detail < CRUMBS_DETAIL_MAX)))
			continue;
		struct event *c = full ? NULL : store_event(a);
		if (!c) {
			/* The set is full: each scope and event left is lost. */
			full = true;
			if (e->type == EVENT_BEGIN || e->type == EVENT_PASS || e->type == EVENT_LEAF)
				atomic_fetch_add(&set->dropped, 1);
			continue;
		}
		store_copy_event(set, c, e, st->names, st->counts);
		c->slot = NO_SLOT;
		if (stretch) {
			uint32_t i = e->u.counts;
			if (set->detail < CRUMBS_DETAIL_MAX)
				c->type = EVENT_STRETCH;
			if (i == COUNTER_UNKNOWN)
				c->u.counts = COUNTER_UNKNOWN;
			else if (i & STATS_IN_SET) /* read where it lies, as slots are */
				c->u.counts = in_set ? i & ~STATS_IN_SET : COUNTER_UNKNOWN;
			else
				c->u.counts = stats != COUNTER_UNKNOWN ? stats + (i - st->stats_first) :
									 COUNTER_UNKNOWN;
			continue;
		}
		if (e->slot == NO_SLOT)
			continue;
		/* A slot it cannot read here loses its timestamp. */
		if (!(e->slot & SLOT_IN_SET)) {
			if (read) {
				c->slot = base + (e->slot - st->slot_first);
				read[e->slot - st->slot_first] = 1;
				if (e->type == EVENT_LEAF)
					read[e->slot + 1 - st->slot_first] = 1;
			} else {
				c->flags |= EVENT_LOST;
			}
		} else if (in_set) {
			c->slot = e->slot & ~SLOT_IN_SET;
			c->flags |= EVENT_POOL_SLOT;
		} else {
			c->flags |= EVENT_LOST;
		}
	}
	if (!read)
		return a;
	/* The slots of the events left out are not read: they are written
	 * all the same, but nothing waits for them. */

	/* Only the slots its events wrote: a copy that waits on one never
	 * written would wait forever. */
	struct device_state *d = &ctx->devices[q->device];
	pools_copy_marked(d, copy, d->standing->pool, st->slot_first, read, 1, used, q->copy_buffer,
			  base);
	pthread_mutex_lock(&standing_lock);
	for (uint32_t r = st->first_range; r < st->first_range + st->range_count; r++)
		d->standing->held[r] |= (uint8_t)(1u << set->index);
	set->holds = true;
	pthread_mutex_unlock(&standing_lock);
	return a;
}

FRAME_PATH
void standing_unhold(crumbs_context *ctx, struct capture_set *set)
{
	if (!set->holds)
		return; /* read without the lock: only its frame's submissions set it */
	pthread_mutex_lock(&standing_lock);
	set->holds = false;
	uint8_t keep = (uint8_t)~(1u << set->index);
	for (uint32_t i = 0; i < ctx->device_count; i++)
		for (uint32_t r = 0; ctx->devices[i].standing && r < STANDING_RANGES; r++)
			ctx->devices[i].standing->held[r] &= keep;
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		for (uint32_t r = 0; ctx->queues[i].owns_standing_stats && r < STATS_RANGES; r++)
			ctx->queues[i].standing_stats->held[r] &= keep;
	pthread_mutex_unlock(&standing_lock);
}

void standing_destroy(crumbs_context *ctx)
{
	const VkAllocationCallbacks *alloc = ctx_vk_allocator(ctx);
	for (uint32_t i = 0; ctx->queues && i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		if (q->standing_cmd_pool)
			ctx->devices[q->device].fn.DestroyCommandPool(ctx->devices[q->device].device,
								      q->standing_cmd_pool, alloc);
		ctx_free(ctx, q->standing_cbs);
	}
	/* Every recording has ranges of its device's pool: freed from there,
	 * its statistics ranges too. */
	for (uint32_t i = 0; ctx->devices && i < ctx->device_count; i++) {
		struct device_state *d = &ctx->devices[i];
		struct standing_pool *p = d->standing;
		if (!p)
			continue;
		for (uint32_t r = 0; r < STANDING_RANGES; r++) {
			struct crumbs_cmd *h = p->owner[r];
			if (h)
				standing_free(ctx, h); /* clears its other ranges */
		}
		d->fn.DestroyQueryPool(d->device, p->pool, alloc);
		ctx_free(ctx, p);
		d->standing = NULL;
	}
	for (uint32_t i = 0; ctx->queues && i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct device_state *d = &ctx->devices[q->device];
		if (q->owns_standing_stats) {
			d->fn.DestroyQueryPool(d->device, q->standing_stats->pool, alloc);
			ctx_free(ctx, q->standing_stats);
		}
		q->standing_stats = NULL;
		q->owns_standing_stats = false;
		pools_host_buffer_release(ctx, d, &q->stats_copy);
		ctx_free(ctx, q->stats_adopted);
		q->stats_adopted = NULL;
	}
}
