/* SPDX-License-Identifier: MIT */
/*
 * model.c: turns a decoded frame into its timing model: GPU ticks mapped to
 * the CPU clock, then each queue walked in submission order to split its
 * time into busy, wait and idle, and to give every busy moment to the
 * innermost open scope ("The timing model" in docs/DESIGN.md).
 */
#include "analyze_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STACK 258 /* 255 scopes, an event, a leaf, and room to spare */

/* ------------------------------------------------------------------------ */
/* Clock fit                                                                */
/* ------------------------------------------------------------------------ */

/* double to int64 without undefined behaviour for absurd inputs. */
static int64_t clamp_i64(double v)
{
	if (!(v == v))
		return 0;
	if (v >= 9.2e18)
		return INT64_MAX / 2;
	if (v <= -9.2e18)
		return INT64_MIN / 2;
	return (int64_t)llround(v);
}

void clock_fit_samples(struct clock_fit *fit, const struct raw_calibration *samples,
		       uint32_t count, double period, unsigned valid_bits)
{
	memset(fit, 0, sizeof(*fit));
	fit->slope = 1.0;
	fit->period = period > 0 ? period : 1.0;
	fit->valid_bits = valid_bits ? valid_bits : 64;
	fit->samples = count;
	if (count == 0)
		return;
	fit->calibrated = true;

	/* The earliest sample is the reference: the others are placed
	 * relative to it, each unwrapped near where its CPU time says the
	 * counter must have been. */
	const struct raw_calibration *ref = &samples[0];
	for (uint32_t i = 1; i < count; i++)
		if (samples[i].cpu_ns < ref->cpu_ns)
			ref = &samples[i];
	fit->ref_ticks = ref->gpu_ticks & bits_mask(fit->valid_bits);
	fit->ref_cpu_ns = ref->cpu_ns;
	if (count == 1)
		return;

	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (uint32_t i = 0; i < count; i++) {
		double y = (double)(samples[i].cpu_ns - ref->cpu_ns);
		int64_t expect = clamp_i64(y / fit->period);
		uint64_t anchor = (fit->ref_ticks + (uint64_t)expect) & bits_mask(fit->valid_bits);
		double x = ((double)expect + (double)crumbs_ticks_delta(samples[i].gpu_ticks,
						anchor, fit->valid_bits)) * fit->period;
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
	}
	double n = count;
	double var = sxx - sx * sx / n;
	double slope = var > 0 ? (sxy - sx * sy / n) / var : 1.0;
	/* Real clocks drift by parts per million. A slope more than 0.1%
	 * from 1 comes from samples too close together for their error (a
	 * read delayed between its two clocks, which a driver may not count
	 * in its deviation), and would stretch every time of the frame by
	 * as much: keep the period's word and fit the offset only. */
	if (!(slope > 0.999 && slope < 1.001))
		slope = 1.0;
	fit->slope = slope;
	fit->offset_ns = (sy - slope * sx) / n;
}

int64_t clock_fit_position(const struct clock_fit *fit, uint64_t ticks, double period,
			   unsigned valid_bits, int64_t near_ns)
{
	if (period <= 0)
		period = fit->period;
	double near = ((double)(near_ns - fit->ref_cpu_ns) - fit->offset_ns) / fit->slope / period;
	int64_t r = clamp_i64(near);
	uint64_t mask = bits_mask(valid_bits);
	uint64_t anchor = (fit->ref_ticks + (uint64_t)r) & mask;
	/* Unsigned, so that absurd inputs wrap instead of overflowing. */
	return (int64_t)((uint64_t)r + (uint64_t)crumbs_ticks_delta(ticks & mask, anchor, valid_bits));
}

/*
 * A queue's timestamps in order. The first of a frame is placed near the
 * frame's begin (which picks the counter's wrap); each later one steps from
 * the one before by their difference modulo the counter's width: exact,
 * and without dividing, which matters at one call per timestamp.
 */
struct queue_clock {
	const struct capture_queue *queue;
	const struct clock_fit *fit;
	double ns_per_tick;  /* the fit's slope times the queue's period */
	double offset_ns;    /* the fit's, and its ref_cpu_ns: */
	int64_t ref_cpu_ns;  /* read here, not through `fit`, in the loop */
	int64_t near_ns;
	bool placed;
	uint64_t raw;
	int64_t position;
	uint64_t mask;       /* of the valid bits, and their top bit: */
	uint64_t sign;       /* crumbs_ticks_delta without working them out */
};

/* crumbs_ticks_delta of a difference of ticks: modulo the counter's width
 * (mask), as a signed number (sign is the width's top bit), without a
 * branch: x ^ sign - sign is x below sign, else x - 2 sign. */
static inline uint64_t ticks_step(uint64_t difference, uint64_t mask, uint64_t sign)
{
	return ((difference & mask) ^ sign) - sign;
}

/* ref_ns plus v rounded to the nearest ns, halves away from 0, as llround
 * would (a library call), without a branch; v beyond the range of int64
 * is clamped. Unsigned, so that absurd inputs wrap instead of
 * overflowing. */
static inline int64_t clock_ns_at(double v, int64_t ref_ns)
{
	if (!(fabs(v) < 9.2e18))
		return ref_ns + clamp_i64(v);
	return (int64_t)((uint64_t)ref_ns + (uint64_t)(int64_t)(v + copysign(0.5, v)));
}

static inline int64_t queue_clock_ns(struct queue_clock *c, uint64_t ticks)
{
	if (__builtin_expect(!c->placed, 0)) {
		unsigned bits = c->queue->timestamp_valid_bits;
		c->position = clock_fit_position(c->fit, ticks, c->queue->timestamp_period, bits,
						 c->near_ns);
		c->placed = true;
		c->mask = bits ? bits_mask(bits) : 0;
		c->sign = (c->mask >> 1) + 1;
	} else {
		c->position = (int64_t)((uint64_t)c->position + ticks_step(ticks - c->raw, c->mask,
									   c->sign));
	}
	c->raw = ticks;
	return clock_ns_at(c->offset_ns + c->ns_per_tick * (double)c->position, c->ref_cpu_ns);
}

/* A queue's clock while a run of its items is converted: what changes,
 * and what each timestamp reads, as scalars. */
struct clock_run {
	struct queue_clock *c;
	bool placed;
	int64_t position;
	uint64_t raw;
	uint64_t mask, sign;
	double ns_per_tick, offset_ns;
	int64_t ref_cpu_ns;
};

static inline __attribute__((always_inline)) void clock_run_begin(struct clock_run *r,
								   struct queue_clock *c)
{
	r->c = c;
	r->placed = c->placed;
	r->position = c->position;
	r->raw = c->raw;
	r->mask = c->mask;
	r->sign = c->sign;
	r->ns_per_tick = c->ns_per_tick;
	r->offset_ns = c->offset_ns;
	r->ref_cpu_ns = c->ref_cpu_ns;
}

static inline __attribute__((always_inline)) void clock_run_end(struct clock_run *r)
{
	r->c->placed = r->placed;
	r->c->position = r->position;
	r->c->raw = r->raw;
}

/* queue_clock_ns of the run's clock, with the same arithmetic. */
static inline __attribute__((always_inline)) int64_t clock_run_ns(struct clock_run *r,
								   uint64_t ticks)
{
	if (__builtin_expect(!r->placed, 0)) {
		clock_run_end(r);
		int64_t ns = queue_clock_ns(r->c, ticks);
		clock_run_begin(r, r->c);
		return ns;
	}
	r->position = (int64_t)((uint64_t)r->position + ticks_step(ticks - r->raw, r->mask, r->sign));
	r->raw = ticks;
	return clock_ns_at(r->offset_ns + r->ns_per_tick * (double)r->position, r->ref_cpu_ns);
}

/* ------------------------------------------------------------------------ */
/* Semaphores                                                               */
/* ------------------------------------------------------------------------ */

struct signal {
	uint32_t semaphore;
	uint64_t value;
	int64_t ns;
	int64_t earliest; /* the earliest ns from here to the end of its run */
	uint32_t source;  /* the signalling submission, or RELEASE_HOST */
	uint32_t earliest_source; /* the source of `earliest` */
};

static int signal_cmp(const void *a, const void *b)
{
	const struct signal *x = a, *y = b;
	if (x->semaphore != y->semaphore)
		return x->semaphore < y->semaphore ? -1 : 1;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return (x->ns > y->ns) - (x->ns < y->ns);
}

/* When (semaphore, value) was reached: the earliest signal of that
 * semaphore with a value at least as high, and its source. false when
 * none is known. */
static bool signal_time(const struct signal *s, size_t n, uint32_t semaphore,
			uint64_t value, int64_t *ns, uint32_t *source)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].semaphore < semaphore ||
		    (s[mid].semaphore == semaphore && s[mid].value < value))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || s[lo].semaphore != semaphore)
		return false;
	*ns = s[lo].earliest;
	*source = s[lo].earliest_source;
	return true;
}

/* ------------------------------------------------------------------------ */
/* The walk                                                                 */
/* ------------------------------------------------------------------------ */

struct level {
	struct node *node;
	struct node *tail; /* its last child */
};

/* One queue's state in the walk over a frame's items. */
struct queue_walk {
	bool started;
	bool timed;          /* the queue has timestamps */
	int64_t last;        /* latest GPU time accounted for */
	int64_t ready_ns;
	bool has_ready;
	uint32_t gpu;
	struct level *stack; /* [0] is the root */
	uint32_t depth;      /* levels above the root */
	/* With flat_scopes, the stack: the innermost scope at each level,
	 * FLAT_NONE at the root's. */
	uint32_t *scopes;
	uint32_t flat_cap;   /* records frame_queue.flat has room for */
	/* The exclusive_ns of the innermost node or scope, kept here while
	 * it is the innermost (an add through a pointer that changes would
	 * wait on the stores before it) and stored when it stops being. */
	int64_t excl;
	uint32_t skipped;    /* scopes open, with skip_scopes */
	struct frame_queue *fq;
	/* The busy interval being extended. */
	int64_t busy_begin;
	int64_t busy_end;
	bool busy_open;
	/* Pipeline statistics: the arena their nodes' counters come from,
	 * whether that ran out, and the last leaf since a scope began or
	 * ended, which LEAF_COUNTERS records belong to. */
	struct arena *arena;
	bool counters_failed;
	struct node *leaf;
};

/* A frame's model as it is built. */
struct walk {
	const struct model_context *ctx;
	const struct raw_frame *raw;
	struct arena *arena;
	struct frame *f;
	struct queue_walk *qs;   /* per queue */
	struct signal *signals;  /* sorted by semaphore and value */
	size_t signal_count;
	/* Busy intervals: at most one per timestamp. Not zeroed: only those
	 * written are read. */
	struct busy_interval *intervals;
	size_t interval_count;
	size_t interval_cap;
};

static void add_counts(struct counts *to, const struct counts *from)
{
	to->draws += from->draws;
	to->dispatches += from->dispatches;
	to->prims += from->prims;
	to->verts += from->verts;
	to->unknown |= from->unknown;
}

static void flush_busy(struct walk *w, struct queue_walk *q)
{
	if (q->busy_open && w->interval_count < w->interval_cap)
		w->intervals[w->interval_count++] =
			(struct busy_interval){ q->busy_begin, q->busy_end, q->gpu };
	q->busy_open = false;
}

/* A timestamp t: the time since `last` was busy, and belongs to the
 * innermost open node. */
static inline __attribute__((always_inline)) void tick(struct walk *w, struct queue_walk *q, int64_t t)
{
	if (t <= q->last)
		return;
	int64_t d = t - q->last;
	q->fq->busy_ns += d;
	q->excl += d;
	if (q->busy_open && q->busy_end == q->last) {
		q->busy_end = t;
	} else {
		flush_busy(w, q);
		q->busy_begin = q->last;
		q->busy_end = t;
		q->busy_open = true;
	}
	q->last = t;
}

static const struct counts no_counts;
static const struct node no_node;

/* Counts a node of the queue, in its tree or left out of it (by
 * reader_skip_scopes, or as an event by reader_flat_scopes). */
static void count_node(struct queue_walk *q, uint8_t kind)
{
	if (kind == CRUMBS_EVENT_SCOPE)
		q->fq->scopes++;
	else
		q->fq->events++;
}

static inline __attribute__((always_inline)) struct node *open_node(struct walk *w, struct queue_walk *q, const struct item *it,
			      const struct raw_frame *raw)
{
	struct level *parent = &q->stack[q->depth];
	struct node *n = arena_alloc_uninit(w->arena, sizeof(*n));
	if (!n)
		return NULL;
	/* Field by field: a compound literal is zeroed whole first. */
	n->name = (const char *)raw->names[it->a];
	n->name_len = raw->name_lens[it->a];
	n->kind = it->kind;
	n->level = it->level;
	n->flags = 0;
	n->depth = q->depth + 1;
	n->order = q->fq->scopes + q->fq->events;
	n->child_count = 0;
	n->parent = parent->node;
	n->child = n->next = NULL;
	n->exclusive = no_counts;
	n->inclusive = no_counts;
	n->exclusive_ns = n->inclusive_ns = 0;
	n->begin_ns = n->end_ns = INT64_MIN;
	n->counters = NULL;
	parent->node->exclusive_ns = q->excl;
	q->excl = 0;
	if (parent->tail)
		parent->tail->next = n;
	else
		parent->node->child = n;
	parent->tail = n;
	parent->node->child_count++;
	q->depth++;
	q->stack[q->depth] = (struct level){ n, NULL };
	count_node(q, it->kind);
	return n;
}

/* Closes the innermost node: its inclusive totals are complete. */
static inline __attribute__((always_inline)) void close_node(struct queue_walk *q)
{
	struct node *n = q->stack[q->depth].node;
	n->exclusive_ns = q->excl;
	n->inclusive_ns += q->excl;
	add_counts(&n->inclusive, &n->exclusive);
	q->depth--;
	struct node *p = q->stack[q->depth].node;
	p->inclusive_ns += n->inclusive_ns;
	add_counts(&p->inclusive, &n->inclusive);
	q->excl = p->exclusive_ns;
	if (n->counters && !counters_close(q->arena, n, p))
		q->counters_failed = true;
}

/* Room for twice the records a queue's flat has, or 64 at first. */
static bool flat_grow(struct queue_walk *q, struct arena *arena)
{
	struct frame_queue *fq = q->fq;
	uint32_t cap = q->flat_cap ? q->flat_cap * 2 : 64;
	if (cap < q->flat_cap)
		return false;
	struct flat_scope *d = arena_alloc_uninit(arena, sizeof(*d) * cap);
	if (!d)
		return false;
	if (fq->flat_count)
		memcpy(d, fq->flat, sizeof(*d) * fq->flat_count);
	fq->flat = d;
	q->flat_cap = cap;
	return true;
}

/* Record `at` of a queue's flat scopes opens, inside record `outer` (or
 * the root), whose exclusive time so far, `excl`, is kept in it. */
static inline __attribute__((always_inline)) void
flat_record_open(struct flat_scope *flat, struct node *root, uint32_t at, uint32_t outer,
		 uint32_t depth, const char *name, uint32_t name_len, int64_t excl)
{
	struct flat_scope *r = &flat[at];
	r->name = name;
	r->name_len = name_len;
	r->parent = outer;
	r->depth = depth;
	r->exclusive_ns = r->inclusive_ns = 0;
	*(outer == FLAT_NONE ? &root->exclusive_ns : &flat[outer].exclusive_ns) = excl;
}

/* Record `at` closes with its exclusive time `excl`, adding its inclusive
 * time to `outer` (or the root); returns the exclusive time of `outer` so
 * far, the innermost now. */
static inline __attribute__((always_inline)) int64_t
flat_record_close(struct flat_scope *flat, struct node *root, uint32_t at, uint32_t outer,
		  int64_t excl)
{
	struct flat_scope *r = &flat[at];
	r->exclusive_ns = excl;
	r->inclusive_ns += excl;
	if (outer == FLAT_NONE) {
		root->inclusive_ns += r->inclusive_ns;
		return root->exclusive_ns;
	}
	flat[outer].inclusive_ns += r->inclusive_ns;
	return flat[outer].exclusive_ns;
}

/* With flat_scopes: a scope or event begins. An event is no record, and
 * the scope around it stays the innermost. */
static inline bool flat_open(struct queue_walk *q, const struct item *it,
			     const struct raw_frame *raw, struct arena *arena)
{
	struct frame_queue *fq = q->fq;
	if (fq->flat_count == q->flat_cap && !flat_grow(q, arena))
		return false;
	uint32_t scope = q->scopes[q->depth];
	q->depth++;
	count_node(q, it->kind);
	if (it->kind == CRUMBS_EVENT_SCOPE) {
		flat_record_open(fq->flat, fq->root, fq->flat_count, scope, q->depth,
				 (const char *)raw->names[it->a], raw->name_lens[it->a], q->excl);
		q->excl = 0;
		scope = fq->flat_count++;
	}
	q->scopes[q->depth] = scope;
	return true;
}

/* With flat_scopes: the innermost scope or event ends. */
static inline void flat_close(struct queue_walk *q)
{
	struct frame_queue *fq = q->fq;
	uint32_t scope = q->scopes[q->depth], outer = q->scopes[q->depth - 1];
	q->depth--;
	if (scope == outer)
		return; /* an event */
	q->excl = flat_record_close(fq->flat, fq->root, scope, outer, q->excl);
}

/*
 * With flat_scopes: the walk of the timed scope begins and ends of queue q
 * from items[i] on, as tick, flat_open and flat_close walk them, until an
 * item of another kind or queue, an end with nothing open, or a begin the
 * records have no room for. The queue's state is in locals while the run
 * lasts, which the compiler keeps in registers, where through q it loads
 * and stores each field at each item: the stores into the records might
 * be to the same memory. Returns the index of the first item left.
 */
static size_t flat_run(struct walk *w, struct queue_walk *q, const struct item *items, size_t i,
		       size_t n, const struct raw_frame *raw)
{
	struct frame_queue *fq = q->fq;
	struct flat_scope *flat = fq->flat;
	struct node *root = fq->root;
	uint32_t *scopes = q->scopes;
	const uint32_t queue = items[i].queue;
	const unsigned char *const *names = raw->names;
	const uint32_t *name_lens = raw->name_lens;
	uint32_t depth = q->depth, count = fq->flat_count, cap = q->flat_cap;
	const uint32_t count_before = count;
	const int64_t last_before = q->last;
	int64_t last = last_before, excl = q->excl;
	int64_t busy_begin = q->busy_begin, busy_end = q->busy_end;
	bool busy_open = q->busy_open;
	/* Whether the open busy interval ends at `last`, so that a tick
	 * extends it: true after the first tick, where tick would compare. */
	bool joined = busy_open && busy_end == last;

	for (; i < n; i++) {
		const struct item *it = &items[i];
		if (it->queue != queue || !(it->flags & ITEM_HAS_T1))
			break;
		bool begin = it->type == ITEM_BEGIN;
		if (begin ? it->kind != CRUMBS_EVENT_SCOPE || count == cap :
			    it->type != ITEM_END || depth == 0)
			break;
		int64_t t = it->t1;
		if (t > last) {
			excl += t - last;
			if (__builtin_expect(!joined, 0)) {
				if (busy_open && w->interval_count < w->interval_cap)
					w->intervals[w->interval_count++] =
						(struct busy_interval){ busy_begin, busy_end, q->gpu };
				busy_begin = last;
				busy_open = joined = true;
			}
			last = t;
		}
		if (begin) {
			uint32_t outer = scopes[depth++];
			flat_record_open(flat, root, count, outer, depth, (const char *)names[it->a],
					 name_lens[it->a], excl);
			excl = 0;
			scopes[depth] = count++;
		} else {
			uint32_t scope = scopes[depth], outer = scopes[depth - 1];
			depth--;
			if (scope == outer)
				continue; /* an event */
			excl = flat_record_close(flat, root, scope, outer, excl);
		}
	}
	q->depth = depth;
	q->last = last;
	q->excl = excl;
	q->busy_begin = busy_begin;
	q->busy_end = joined ? last : busy_end;
	q->busy_open = busy_open;
	/* Every tick moved `last` on by what it added to busy, and every
	 * scope opened took a record. */
	fq->busy_ns += last - last_before;
	fq->flat_count = count;
	fq->scopes += count - count_before;
	return i;
}

static void mark_time(struct node *n, int64_t t)
{
	if (n->begin_ns == INT64_MIN)
		n->begin_ns = t;
	n->end_ns = t;
}

/*
 * Sorts n elements of `size` bytes (at most 64). The arrays sorted per
 * frame are short and nearly in order, where an insertion sort does about
 * n comparisons and qsort n log n calls through its pointer. Inlined at
 * each call, with its size and comparison known: called, its copies of
 * an unknown size and its calls through cmp cost more than the sort of a
 * few elements itself (docs/BENCHMARKS.md, reading).
 */
static inline __attribute__((always_inline)) void
sort_nearly_sorted(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	unsigned char tmp[64], *v = base;
	if (n > 256 || size > sizeof(tmp)) {
		qsort(base, n, size, cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		size_t j = i;
		if (cmp(v + (j - 1) * size, v + j * size) <= 0)
			continue;
		memcpy(tmp, v + i * size, size);
		for (; j > 0 && cmp(v + (j - 1) * size, tmp) > 0; j--)
			memcpy(v + j * size, v + (j - 1) * size, size);
		memcpy(v + j * size, tmp, size);
	}
}

static int interval_cmp(const void *a, const void *b)
{
	const struct busy_interval *x = a, *y = b;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return (x->begin_ns > y->begin_ns) - (x->begin_ns < y->begin_ns);
}

/* The frame's clock fits, one per GPU from the setup samples and the
 * frame's own, into fits; out[g] keeps what the model reports of GPU g's
 * fit. false when out of memory. */
static bool fit_clocks(const struct model_context *ctx, const struct raw_frame *raw,
		       struct arena *arena, struct clock_fit *fits, struct raw_fit *out)
{
	const struct raw_calibration *frame_samples = raw->calibrations;
	struct raw_calibration *samples = arena_alloc_uninit(arena, sizeof(*samples) *
		(ctx->setup_sample_count + raw->calibration_count + 1));
	if (!samples)
		return false;
	for (uint32_t g = 0; g < ctx->gpu_count; g++) {
		uint32_t n = 0;
		double period = 0;
		unsigned bits = 0;
		for (uint32_t i = 0; i < ctx->setup_sample_count; i++)
			if (ctx->setup_samples[i].gpu == g)
				samples[n++] = ctx->setup_samples[i];
		for (size_t i = 0; i < raw->calibration_count; i++)
			if (frame_samples[i].gpu == g)
				samples[n++] = frame_samples[i];
		for (uint32_t i = 0; i < ctx->queue_count; i++) {
			const struct capture_queue *cq = &ctx->queues[i];
			if (cq->gpu != g || !cq->timestamp_valid_bits)
				continue;
			if (period == 0)
				period = cq->timestamp_period;
			if (cq->timestamp_valid_bits > bits)
				bits = cq->timestamp_valid_bits;
		}
		clock_fit_samples(&fits[g], samples, n, period, bits);
		if (!fits[g].calibrated) {
			/* Without samples, align the GPU's first submission
			 * with the CPU time it was submitted. */
			for (size_t i = 0; i < raw->item_count; i++) {
				const struct item *it = &raw->items[i];
				if (it->type == ITEM_SUBMIT && (it->flags & ITEM_HAS_T1) &&
				    ctx->queues[it->queue].gpu == g) {
					fits[g].ref_ticks = (uint64_t)it->t1;
					fits[g].ref_cpu_ns = raw->submits[it->a].cpu_ns;
					break;
				}
			}
		}
		out[g] = (struct raw_fit){ fits[g].calibrated, n, fits[g].slope };
	}
	return true;
}

/*
 * The frame's clocks fitted, and its ticks mapped to CPU-clock ns with
 * them, queue by queue in order; out[g] keeps what the model reports of
 * GPU g's fit. Scratch goes to `arena`. false when out of memory.
 */
static bool place_times(const struct model_context *ctx, struct raw_frame *raw,
			struct arena *arena, struct raw_fit *out, size_t *timestamps_out)
{
	struct item *items = raw->items;
	size_t item_count = raw->item_count;
	struct raw_submit *submits = raw->submits;
	struct clock_fit *fits = arena_alloc(arena, sizeof(*fits) * (ctx->gpu_count + 1));
	if (!fits || !fit_clocks(ctx, raw, arena, fits, out))
		return false;

	/* Ticks to CPU-clock ns, queue by queue in order. */
	struct queue_clock *clocks = arena_alloc(arena, sizeof(*clocks) * (ctx->queue_count + 1));
	uint32_t *current = arena_alloc(arena, sizeof(*current) * (ctx->queue_count + 1));
	if (!clocks || !current)
		return false;
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		clocks[i].queue = &ctx->queues[i];
		clocks[i].fit = &fits[ctx->queues[i].gpu];
		clocks[i].near_ns = raw->cpu_begin_ns;
		clocks[i].offset_ns = clocks[i].fit->offset_ns;
		clocks[i].ref_cpu_ns = clocks[i].fit->ref_cpu_ns;
		clocks[i].ns_per_tick = fits[ctx->queues[i].gpu].slope *
					(ctx->queues[i].timestamp_period > 0 ?
					 ctx->queues[i].timestamp_period : fits[ctx->queues[i].gpu].period);
	}
	struct raw_ready *readies = raw->readies;
	for (size_t i = 0; i < raw->ready_count; i++) {
		readies[i].ns = queue_clock_ns(&clocks[readies[i].queue], readies[i].ticks);
	}
	size_t timestamps = raw->ready_count;
	/* Items come in runs of one queue (a submission's): its clock is in
	 * the locals of clock_run while the run lasts, which the compiler
	 * keeps in registers, where a clock in memory waits on its last
	 * store. (A copy of the struct was kept packed in vector registers by
	 * GCC 12 and unpacked at every item.) */
	struct clock_run r = { 0 };
	uint32_t on = UINT32_MAX;
	for (size_t i = 0; i < item_count; i++) {
		struct item *it = &items[i];
		if (it->queue != on) {
			if (on != UINT32_MAX)
				clock_run_end(&r);
			on = it->queue;
			clock_run_begin(&r, &clocks[on]);
		}
		if (it->type == ITEM_SUBMIT)
			current[it->queue] = it->a;
		if (it->flags & ITEM_HAS_T1) {
			it->t1 = clock_run_ns(&r, (uint64_t)it->t1);
			timestamps++;
		}
		if (it->flags & ITEM_HAS_T2) {
			it->t2 = clock_run_ns(&r, (uint64_t)it->t2);
			timestamps++;
		}
		if (it->type == ITEM_SUBMIT_END && (it->flags & ITEM_HAS_T1)) {
			submits[current[it->queue]].end_ns = it->t1;
			submits[current[it->queue]].has_end = 1;
		}
	}
	if (on != UINT32_MAX)
		clock_run_end(&r);
	*timestamps_out = timestamps;
	return true;
}

bool model_place(const struct model_context *ctx, struct raw_frames *frames, size_t i,
		 struct arena *scratch)
{
	struct raw_span *span = (struct raw_span *)frames->spans.data + i;
	size_t before = frames->fits.len;
	struct raw_frame raw;

	for (uint32_t g = 0; g < ctx->gpu_count; g++)
		if (!vec_push(&frames->fits, sizeof(struct raw_fit))) {
			frames->fits.len = before;
			return false;
		}
	raw_frames_get(frames, i, NULL, NULL, &raw);
	if (!place_times(ctx, &raw, scratch, raw.fits, &span->timestamps)) {
		frames->fits.len = before;
		return false;
	}
	span->placed = true;
	return true;
}

/* The walk's stacks of a queue at its first item. */
static bool prepare_queue(const struct model_context *ctx, struct queue_walk *q,
			  struct arena *arena)
{
	/* Only the levels up to depth are ever read. */
	q->stack = arena_alloc_uninit(arena, sizeof(*q->stack) * MAX_STACK);
	if (!q->stack)
		return false;
	q->stack[0] = (struct level){ q->fq->root, NULL };
	q->arena = arena;
	if (!ctx->flat_scopes || ctx->skip_scopes)
		return true;
	q->scopes = arena_alloc_uninit(arena, sizeof(*q->scopes) * MAX_STACK);
	if (!q->scopes)
		return false;
	q->scopes[0] = FLAT_NONE;
	return true;
}

/* The frame, its arrays and the walk's state of each queue, whose roots
 * it makes. */
static bool frame_new(struct walk *w)
{
	const struct model_context *ctx = w->ctx;
	const struct raw_frame *raw = w->raw;
	struct frame *f = w->f = arena_alloc(w->arena, sizeof(*f));
	w->qs = arena_alloc(w->arena, sizeof(*w->qs) * (ctx->queue_count + 1));
	if (!f || !w->qs)
		return false;
	f->number = raw->number;
	f->cpu_begin_ns = raw->cpu_begin_ns;
	f->cpu_end_ns = raw->cpu_end_ns;
	f->flags = raw->flags;
	f->dropped_scopes = raw->dropped_scopes;
	f->gpu_count = ctx->gpu_count;
	f->queue_count = ctx->queue_count;
	f->gpus = arena_alloc(w->arena, sizeof(*f->gpus) * (ctx->gpu_count + 1));
	f->queues = arena_alloc(w->arena, sizeof(*f->queues) * (ctx->queue_count + 1));
	if (!f->gpus || !f->queues)
		return false;
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		const struct capture_queue *cq = &ctx->queues[i];
		struct frame_queue *fq = &f->queues[i];
		struct node *root = arena_alloc_uninit(w->arena, sizeof(*root));
		if (!root)
			return false;
		/* Copied from a zeroed node: zeroing it where it lies took a
		 * `rep stos`, a twentieth of the build of a small frame. */
		*root = no_node;
		root->name = cq->name;
		root->name_len = (uint32_t)strlen(cq->name);
		root->flags = NODE_QUEUE_ROOT;
		root->begin_ns = root->end_ns = INT64_MIN;
		fq->queue = i;
		fq->root = root;
		fq->flags = cq->timestamp_valid_bits ? 0 : FRAME_QUEUE_NO_TIMESTAMPS;
		w->qs[i].fq = fq;
		w->qs[i].gpu = cq->gpu;
		w->qs[i].timed = cq->timestamp_valid_bits != 0;
	}
	return true;
}

/* The frame's times on the CPU clock, unless the prefetch thread has
 * placed them, and what the model says of each GPU's clock. */
static bool frame_times(struct walk *w, struct raw_frame *raw, size_t *timestamps)
{
	const struct model_context *ctx = w->ctx;
	struct raw_fit *gpu_fits = raw->fits;
	*timestamps = raw->timestamps;
	if (!raw->placed) {
		gpu_fits = arena_alloc(w->arena, sizeof(*gpu_fits) * (ctx->gpu_count + 1));
		if (!gpu_fits || !place_times(ctx, raw, w->arena, gpu_fits, timestamps))
			return false;
	}
	for (uint32_t g = 0; g < ctx->gpu_count; g++)
		w->f->gpus[g] = (struct frame_gpu){
			.gpu = g,
			.calibrated = gpu_fits[g].calibrated,
			.calibration_samples = gpu_fits[g].samples,
			.drift_ppm = (1.0 / gpu_fits[g].slope - 1.0) * 1e6,
			.begin_ns = INT64_MIN,
			.end_ns = INT64_MIN,
		};
	for (size_t i = 0; i < raw->ready_count; i++) {
		w->qs[raw->readies[i].queue].ready_ns = raw->readies[i].ns;
		w->qs[raw->readies[i].queue].has_ready = true;
	}
	return true;
}

/* Every signal whose time is known, sorted for the waits, each with the
 * earliest of its semaphore's at its value or above. */
static bool collect_signals(struct walk *w)
{
	const struct raw_frame *raw = w->raw;
	size_t cap = raw->host_signal_count + raw->op_count + 1, n = 0;
	struct signal *signals = arena_alloc_uninit(w->arena, sizeof(*signals) * cap);
	if (!signals)
		return false;
	for (size_t i = 0; i < raw->submit_count; i++) {
		const struct raw_submit *s = &raw->submits[i];
		if (!s->has_end)
			continue;
		for (uint32_t k = 0; k < s->signal_count; k++) {
			const struct raw_op *op = &raw->ops[s->first_op + s->wait_count + k];
			signals[n++] = (struct signal){ op->semaphore, op->value, s->end_ns,
							0, (uint32_t)i, 0 };
		}
	}
	const struct raw_host_signal *hs = raw->host_signals;
	for (size_t i = 0; i < raw->host_signal_count; i++)
		signals[n++] = (struct signal){ hs[i].semaphore, hs[i].value, hs[i].cpu_ns,
						0, RELEASE_HOST, 0 };
	sort_nearly_sorted(signals, n, sizeof(*signals), signal_cmp);
	for (size_t i = n; i-- > 0;) {
		signals[i].earliest = signals[i].ns;
		signals[i].earliest_source = signals[i].source;
		if (i + 1 < n && signals[i + 1].semaphore == signals[i].semaphore &&
		    signals[i + 1].earliest < signals[i].earliest) {
			signals[i].earliest = signals[i + 1].earliest;
			signals[i].earliest_source = signals[i + 1].earliest_source;
		}
	}
	w->signals = signals;
	w->signal_count = n;
	return true;
}

/* The submissions and their waits, filled in by the walk, and room for
 * the busy intervals of `timestamps`. */
static bool walk_prepare(struct walk *w, size_t timestamps)
{
	const struct raw_frame *raw = w->raw;
	struct frame *f = w->f;
	size_t wait_total = 0;
	for (size_t i = 0; i < raw->submit_count; i++)
		wait_total += raw->submits[i].wait_count;
	f->submissions = arena_alloc(w->arena, sizeof(*f->submissions) * (raw->submit_count + 1));
	f->releases = arena_alloc(w->arena, sizeof(*f->releases) * (wait_total + 1));
	if (!f->submissions || !f->releases)
		return false;
	f->submission_count = (uint32_t)raw->submit_count;
	f->timestamps = timestamps;
	w->interval_cap = timestamps + raw->submit_count + 1;
	w->intervals = arena_alloc_uninit(w->arena, sizeof(*w->intervals) * w->interval_cap);
	return w->intervals != NULL;
}

/* The first submission of a timed queue: where its count starts. Without
 * the time the queue finished earlier work, nothing before this
 * submission is counted: no idle, and a wait from the submit on (the work
 * could not start before its signal), else the count starts at its first
 * timestamp. */
static void queue_start(struct queue_walk *q, const struct raw_submit *s, const struct item *it)
{
	bool t1 = (it->flags & ITEM_HAS_T1) != 0;
	q->started = true;
	if (q->has_ready)
		q->last = q->ready_ns;
	else
		q->last = s->wait_count || !t1 ? s->cpu_ns : it->t1;
	if (!q->has_ready)
		q->fq->flags |= FRAME_QUEUE_NO_READY;
}

/* A timed submission's waits, each resolved at its signal, and the time
 * the queue waited for them. */
static void submit_waits(struct walk *w, struct queue_walk *q, const struct raw_submit *s,
			 const struct item *it, struct submission *sub)
{
	struct frame *f = w->f;
	bool t1 = (it->flags & ITEM_HAS_T1) != 0;
	int64_t resolve = q->last;
	for (uint32_t k = 0; k < s->wait_count; k++) {
		const struct raw_op *op = &w->raw->ops[s->first_op + k];
		struct release *rel = &f->releases[f->release_count++];
		int64_t at;
		*rel = (struct release){ it->a, RELEASE_UNKNOWN, INT64_MIN };
		/* A signal outside the capture (the presentation engine, an
		 * earlier frame) is taken to resolve when the work started. */
		if (signal_time(w->signals, w->signal_count, op->semaphore, op->value, &at,
				&rel->signaller))
			rel->signal_ns = at;
		else
			at = t1 ? it->t1 : q->last;
		if (at > resolve)
			resolve = at;
	}
	/* Work cannot start before its waits resolve. */
	if (t1 && resolve > it->t1)
		resolve = it->t1 > q->last ? it->t1 : q->last;
	sub->wait_ns = resolve - q->last;
	q->fq->wait_ns += resolve - q->last;
	q->last = resolve;
}

/* A submission begins: the queue's idle time before it, its waits, and
 * its first timestamp. */
static void walk_submit(struct walk *w, struct queue_walk *q, const struct item *it)
{
	struct frame *f = w->f;
	const struct raw_submit *s = &w->raw->submits[it->a];
	struct submission *sub = &f->submissions[it->a];
	bool t1 = (it->flags & ITEM_HAS_T1) != 0;
	*sub = (struct submission){
		.queue = it->queue,
		.index = q->fq->submissions,
		.waits = s->wait_count,
		.signals = s->signal_count,
		.unrecorded = s->unrecorded,
		.cpu_ns = s->cpu_ns,
		.begin_ns = t1 ? it->t1 : INT64_MIN,
		.end_ns = s->has_end ? s->end_ns : INT64_MIN,
	};
	q->fq->submissions++;
	q->fq->unrecorded = s->unrecorded > UINT32_MAX - q->fq->unrecorded ?
			    UINT32_MAX : q->fq->unrecorded + s->unrecorded;
	if (!q->timed) {
		for (uint32_t k = 0; k < s->wait_count; k++)
			f->releases[f->release_count++] =
				(struct release){ it->a, RELEASE_UNKNOWN, INT64_MIN };
		return;
	}
	if (!q->started)
		queue_start(q, s, it);
	/* The GPU ran out of work before the CPU gave it more. */
	if (s->cpu_ns > q->last) {
		sub->idle_begin_ns = q->last;
		sub->idle_ns = s->cpu_ns - q->last;
		q->fq->idle_ns += s->cpu_ns - q->last;
		q->last = s->cpu_ns;
	}
	sub->wait_begin_ns = q->last;
	if (s->wait_count)
		submit_waits(w, q, s, it, sub);
	if (t1)
		tick(w, q, it->t1);
}

/* A scope or event begins. */
static inline bool walk_begin(struct walk *w, struct queue_walk *q, const struct item *it)
{
	bool t1 = (it->flags & ITEM_HAS_T1) != 0;
	if (t1)
		tick(w, q, it->t1);
	if (w->ctx->skip_scopes) {
		count_node(q, it->kind);
		q->skipped++;
		return true;
	}
	if (q->scopes)
		return flat_open(q, it, w->raw, w->arena);
	struct node *n = open_node(w, q, it, w->raw);
	if (!n)
		return false;
	if (t1)
		mark_time(n, it->t1);
	else if (q->timed)
		n->flags |= NODE_UNTIMED;
	return true;
}

/* The innermost scope or event ends. */
static inline void walk_end(struct walk *w, struct queue_walk *q, const struct item *it)
{
	bool t1 = (it->flags & ITEM_HAS_T1) != 0;
	if (t1)
		tick(w, q, it->t1);
	if (w->ctx->skip_scopes) {
		if (q->skipped)
			q->skipped--;
		else
			q->fq->unmatched_ends++;
		return;
	}
	if (q->depth == 0) {
		q->fq->unmatched_ends++;
		return;
	}
	if (q->scopes) {
		flat_close(q);
		return;
	}
	if (t1)
		mark_time(q->stack[q->depth].node, it->t1);
	else if (q->timed)
		q->stack[q->depth].node->flags |= NODE_UNTIMED;
	close_node(q);
}

/* A leaf event: a node of its own, or its counts to the queue. */
static inline bool walk_leaf(struct walk *w, struct queue_walk *q, const struct item *it)
{
	const struct counts *counts = &w->raw->counts[it->b];
	bool t1 = (it->flags & ITEM_HAS_T1) != 0;
	if (t1)
		tick(w, q, it->t1);
	if (w->ctx->skip_scopes || q->scopes) {
		count_node(q, it->kind);
		add_counts(&q->fq->root->exclusive, counts);
		if (t1)
			tick(w, q, it->t2);
		return true;
	}
	struct node *n = open_node(w, q, it, w->raw);
	if (!n)
		return false;
	n->exclusive = *counts;
	if (t1) {
		mark_time(n, it->t1);
		tick(w, q, it->t2);
		mark_time(n, it->t2);
	} else if (q->timed) {
		n->flags |= NODE_UNTIMED;
	}
	close_node(q);
	q->leaf = n;
	return true;
}

/* COUNTERS, COUNTERS_UNKNOWN and RENDER_AREA (since 1.5): of the
 * innermost open node (the queue's root where the tree is not built); the
 * LEAF_ forms of the queue's last leaf, or as the others without one.
 * false when out of memory. */
static bool walk_counter(struct walk *w, struct queue_walk *q, const struct item *it)
{
	struct node *leaf = it->b && it->type != ITEM_RENDER_AREA ? q->leaf : NULL;
	if (w->ctx->skip_scopes || q->scopes)
		leaf = NULL;
	struct node *n = w->ctx->skip_scopes || q->scopes ? q->fq->root :
			 leaf ? leaf : q->stack[q->depth].node;
	switch (it->type) {
	case ITEM_COUNTER:
		return leaf ? counters_add_closed(w->arena, leaf, it->a, (uint64_t)it->t1) :
			      counters_add(w->arena, n, it->a, (uint64_t)it->t1);
	case ITEM_COUNTERS_UNKNOWN:
		return leaf ? counters_unknown_closed(w->arena, leaf) :
			      counters_set_unknown(w->arena, n);
	default:
		return counters_set_area(w->arena, n, it->a, it->b);
	}
}

/* The items in file order, which is submission order per queue. false
 * when out of memory. */
static bool walk_items(struct walk *w)
{
	const struct item *items = w->raw->items;
	size_t item_count = w->raw->item_count;

	for (size_t i = 0; i < item_count; i++) {
		const struct item *it = &items[i];
		struct queue_walk *q = &w->qs[it->queue];
		bool ok = true;

		if (!q->stack && !prepare_queue(w->ctx, q, w->arena))
			return false;
		if (q->scopes && (it->type == ITEM_BEGIN || it->type == ITEM_END)) {
			size_t next = flat_run(w, q, items, i, item_count, w->raw);
			if (next != i) {
				i = next - 1;
				continue;
			}
		}
		switch (it->type) {
		case ITEM_COUNTER:
		case ITEM_COUNTERS_UNKNOWN:
		case ITEM_RENDER_AREA:
			ok = walk_counter(w, q, it);
			break;
		case ITEM_SUBMIT:
			walk_submit(w, q, it);
			break;
		case ITEM_SUBMIT_END:
			if (it->flags & ITEM_HAS_T1)
				tick(w, q, it->t1);
			break;
		case ITEM_BEGIN:
			q->leaf = NULL;
			ok = walk_begin(w, q, it);
			break;
		case ITEM_END:
			q->leaf = NULL;
			walk_end(w, q, it);
			break;
		case ITEM_COUNTS:
			add_counts(q->scopes ? &q->fq->root->exclusive :
				   &q->stack[q->depth].node->exclusive, &w->raw->counts[it->b]);
			break;
		case ITEM_LEAF:
			ok = walk_leaf(w, q, it);
			break;
		}
		if (!ok || q->counters_failed)
			return false;
	}
	return true;
}

/* Closes what is still open on each queue, then its root. */
static void close_queues(struct walk *w)
{
	for (uint32_t i = 0; i < w->ctx->queue_count; i++) {
		struct queue_walk *q = &w->qs[i];
		struct node *root = q->fq->root;
		q->fq->open_scopes += q->skipped;
		for (; q->scopes && q->depth > 0; q->fq->open_scopes++)
			flat_close(q);
		for (; q->stack && q->depth > 0; q->fq->open_scopes++) {
			q->stack[q->depth].node->flags |= NODE_OPEN;
			close_node(q);
		}
		root->exclusive_ns = q->excl;
		root->inclusive_ns += root->exclusive_ns;
		add_counts(&root->inclusive, &root->exclusive);
		/* A root has no parent: this only sums its own in. */
		(void)counters_close(w->arena, root, NULL);
		flush_busy(w, q);
		w->f->scopes += q->fq->scopes;
		w->f->events += q->fq->events;
	}
}

/* Each GPU's frame time: the union of its queues' busy intervals, which
 * are merged in place into the frame's. */
static void gpu_busy_union(struct walk *w)
{
	struct busy_interval *iv = w->intervals;
	size_t n = w->interval_count, merged = 0;
	sort_nearly_sorted(iv, n, sizeof(*iv), interval_cmp);
	for (size_t i = 0; i < n;) {
		struct frame_gpu *g = &w->f->gpus[iv[i].gpu];
		int64_t begin = iv[i].begin_ns, end = iv[i].end_ns;
		if (g->begin_ns == INT64_MIN || begin < g->begin_ns)
			g->begin_ns = begin;
		for (i++; i < n && iv[i].gpu == g->gpu && iv[i].begin_ns <= end; i++)
			if (iv[i].end_ns > end)
				end = iv[i].end_ns;
		g->frame_ns += end - begin;
		if (end > g->end_ns)
			g->end_ns = end;
		iv[merged++] = (struct busy_interval){ begin, end, g->gpu };
	}
	w->f->busy = iv;
	w->f->busy_count = (uint32_t)merged;
}

enum crumbs_result model_build(const struct model_context *ctx, struct raw_frame *raw,
			       struct arena *arena, struct frame **out)
{
	struct walk w = { .ctx = ctx, .raw = raw, .arena = arena };
	size_t timestamps;

	if (!frame_new(&w) || !frame_times(&w, raw, &timestamps) || !collect_signals(&w) ||
	    !walk_prepare(&w, timestamps) || !walk_items(&w))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	close_queues(&w);
	gpu_busy_union(&w);
	if (!cpu_threads_build(raw, w.f, arena, ctx->skip_scopes) ||
	    !memory_build(raw, w.f, arena) ||
	    !present_frame_build(raw, w.f, arena))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	*out = w.f;
	return CRUMBS_OK;
}
