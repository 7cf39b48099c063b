/* SPDX-License-Identifier: MIT */
/*
 * memory.c: video memory per frame and over a run: a frame's heaps in
 * order (MEMORY records, format 1.5), and a run's high-water, growth and
 * allocations per heap, kept so that runs read in pieces join in order.
 */
#include "analyze_internal.h"

#include <stdlib.h>
#include <string.h>

static int memory_cmp(const void *a, const void *b)
{
	const struct frame_memory *x = a, *y = b;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return x->heap < y->heap ? -1 : x->heap > y->heap;
}

bool memory_build(const struct raw_frame *raw, struct frame *f, struct arena *arena)
{
	f->memory = NULL;
	f->memory_count = 0;
	if (!raw->memory_count)
		return true;
	f->memory = arena_alloc_uninit(arena, sizeof(*f->memory) * raw->memory_count);
	if (!f->memory)
		return false;
	memcpy(f->memory, raw->memory, sizeof(*f->memory) * raw->memory_count);
	f->memory_count = (uint32_t)raw->memory_count;
	qsort(f->memory, f->memory_count, sizeof(*f->memory), memory_cmp);
	return true;
}

const struct frame_memory *frame_memory_find(const struct frame *f, uint32_t gpu, uint32_t heap)
{
	for (uint32_t i = 0; i < f->memory_count; i++)
		if (f->memory[i].gpu == gpu && f->memory[i].heap == heap)
			return &f->memory[i];
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Over a run                                                               */
/* ------------------------------------------------------------------------ */

/* One value more in a series: y of frame x. The fit keeps exact sums
 * rather than running means: a run read in pieces on threads then has
 * the very slope it has read whole. */
static void series_add(struct memory_series *s, uint64_t x, uint64_t y, uint64_t high)
{
	if (s->frames == 0) {
		s->first = y;
		s->first_frame = x;
		s->high = high;
		s->high_frame = x;
	} else if (high > s->high) {
		s->high = high;
		s->high_frame = x;
	}
	s->last = y;
	s->last_frame = x;
	s->frames++;
	s->sx += x;
	s->sy += y;
	s->sxy += (memory_sum)x * y;
	s->sxx += (memory_sum)x * x;
}

/* b's frames, which follow a's, joined into a. */
static void series_join(struct memory_series *a, const struct memory_series *b)
{
	if (b->frames == 0)
		return;
	if (a->frames == 0) {
		*a = *b;
		return;
	}
	if (b->high > a->high) {
		a->high = b->high;
		a->high_frame = b->high_frame;
	}
	a->last = b->last;
	a->last_frame = b->last_frame;
	a->frames += b->frames;
	a->sx += b->sx;
	a->sy += b->sy;
	a->sxy += b->sxy;
	a->sxx += b->sxx;
}

/* A wrapped 128-bit value as the signed one it stands for. */
static double sum_signed(memory_sum v)
{
	if (v >> 127)
		return -(double)(memory_sum)(~v + 1);
	return (double)v;
}

double memory_series_slope(const struct memory_series *s)
{
	if (s->frames < 2)
		return 0;
	memory_sum n = s->frames;
	double den = sum_signed(n * s->sxx - s->sx * s->sx);
	if (den <= 0)
		return 0;
	return sum_signed(n * s->sxy - s->sx * s->sy) / den;
}

int64_t memory_series_growth(const struct memory_series *s)
{
	if (s->frames == 0)
		return 0;
	return s->last >= s->first ? (int64_t)(s->last - s->first > INT64_MAX ? INT64_MAX : s->last - s->first)
				   : -(int64_t)(s->first - s->last > INT64_MAX ? INT64_MAX : s->first - s->last);
}

/* ------------------------------------------------------------------------ */
/* Points for a picture                                                     */
/* ------------------------------------------------------------------------ */

/* Whether a point of value v at frame f replaces the point kept: the
 * larger value, and of equal ones the earlier frame. */
static bool point_wins(const struct memory_point *kept, uint64_t f, uint64_t v)
{
	return v > kept->value || (v == kept->value && f < kept->frame);
}

/* The points regrouped by frame >> shift (shift at least theirs). */
static void points_regroup(struct memory_points *pts, unsigned shift)
{
	if (shift <= pts->shift)
		return;
	pts->shift = shift;
	uint32_t w = 0;
	for (uint32_t i = 0; i < pts->count; i++) {
		struct memory_point q = pts->p[i];
		if (w && (pts->p[w - 1].frame >> shift) == (q.frame >> shift)) {
			if (point_wins(&pts->p[w - 1], q.frame, q.value))
				pts->p[w - 1] = q;
		} else {
			pts->p[w++] = q;
		}
	}
	pts->count = w;
}

/* A value of frame f, which follows those taken. false when out of memory. */
static bool points_add(struct memory_points *pts, uint64_t f, uint64_t v)
{
	if (pts->count && (pts->p[pts->count - 1].frame >> pts->shift) == (f >> pts->shift)) {
		if (point_wins(&pts->p[pts->count - 1], f, v))
			pts->p[pts->count - 1] = (struct memory_point){ f, v };
		return true;
	}
	if (pts->count == pts->cap) {
		uint32_t cap = pts->cap ? pts->cap * 2 : 16;
		if (cap > MEMORY_POINTS + 1)
			cap = MEMORY_POINTS + 1;
		struct memory_point *p = realloc(pts->p, sizeof(*p) * cap);
		if (!p)
			return false;
		pts->p = p;
		pts->cap = cap;
	}
	pts->p[pts->count++] = (struct memory_point){ f, v };
	while (pts->count > MEMORY_POINTS && pts->shift < 63)
		points_regroup(pts, pts->shift + 1);
	return true;
}

/* b's points, of frames after a's, joined to a's. */
static bool points_join(struct memory_points *a, struct memory_points *b)
{
	unsigned shift = a->shift > b->shift ? a->shift : b->shift;
	points_regroup(a, shift);
	points_regroup(b, shift);
	for (uint32_t i = 0; i < b->count; i++)
		if (!points_add(a, b->p[i].frame, b->p[i].value))
			return false;
	return true;
}

/* The heap's place in s, added (in order of GPU and heap) when new; NULL
 * when out of memory. */
static struct memory_heap_stats *heap_of(struct memory_stats *s, uint32_t gpu, uint32_t heap)
{
	/* By halves: a frame may hold a thousand heaps, each looked up. */
	uint32_t lo = 0, hi = s->count;
	uint64_t key = (uint64_t)gpu << 32 | heap;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t at = (uint64_t)s->heaps[mid].gpu << 32 | s->heaps[mid].heap;
		if (at < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint32_t i = lo;
	if (i < s->count && s->heaps[i].gpu == gpu && s->heaps[i].heap == heap)
		return &s->heaps[i];
	if (s->count == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 4;
		struct memory_heap_stats *h = realloc(s->heaps, sizeof(*h) * cap);
		if (!h)
			return NULL;
		s->heaps = h;
		s->cap = cap;
	}
	memmove(&s->heaps[i + 1], &s->heaps[i], sizeof(*s->heaps) * (s->count - i));
	s->count++;
	memset(&s->heaps[i], 0, sizeof(s->heaps[i]));
	s->heaps[i].gpu = gpu;
	s->heaps[i].heap = heap;
	return &s->heaps[i];
}

/* GPU gpu's place in s, added in order when new; NULL when out of memory. */
static struct memory_gpu_stats *gpu_of(struct memory_stats *s, uint32_t gpu)
{
	uint32_t i = 0;
	while (i < s->gpu_count && s->gpus[i].gpu < gpu)
		i++;
	if (i < s->gpu_count && s->gpus[i].gpu == gpu)
		return &s->gpus[i];
	if (s->gpu_count == s->gpu_cap) {
		uint32_t cap = s->gpu_cap ? s->gpu_cap * 2 : 2;
		struct memory_gpu_stats *g = realloc(s->gpus, sizeof(*g) * cap);
		if (!g)
			return NULL;
		s->gpus = g;
		s->gpu_cap = cap;
	}
	memmove(&s->gpus[i + 1], &s->gpus[i], sizeof(*s->gpus) * (s->gpu_count - i));
	s->gpu_count++;
	memset(&s->gpus[i], 0, sizeof(s->gpus[i]));
	s->gpus[i].gpu = gpu;
	return &s->gpus[i];
}

/* A GPU's allocations in one frame, or a run's part, joined into g. */
static void gpu_add(struct memory_gpu_stats *g, const struct memory_gpu_stats *more)
{
	g->frames += more->frames;
	g->allocations += more->allocations;
	g->frees += more->frees;
	if (more->most_allocations > g->most_allocations ||
	    (g->frames == more->frames && more->frames)) {
		g->most_allocations = more->most_allocations;
		g->most_allocations_frame = more->most_allocations_frame;
	}
}

bool memory_stats_add(struct memory_stats *s, const struct frame *f)
{
	/* The frame's heaps are in order of GPU: each GPU's sums at once. */
	for (uint32_t i = 0; i < f->memory_count;) {
		struct memory_gpu_stats one = { .gpu = f->memory[i].gpu,
						.most_allocations_frame = f->number };
		bool tracked = false;
		for (; i < f->memory_count && f->memory[i].gpu == one.gpu; i++) {
			tracked |= f->memory[i].tracked;
			one.allocations += f->memory[i].allocations;
			one.frees += f->memory[i].frees;
		}
		if (!tracked)
			continue;
		one.frames = 1;
		one.most_allocations = one.allocations;
		struct memory_gpu_stats *g = gpu_of(s, one.gpu);
		if (!g)
			return false;
		gpu_add(g, &one);
	}
	for (uint32_t i = 0; i < f->memory_count; i++) {
		const struct frame_memory *m = &f->memory[i];
		struct memory_heap_stats *h = heap_of(s, m->gpu, m->heap);
		if (!h)
			return false;
		h->flags = m->flags;
		h->size = m->size;
		if (m->tracked) {
			series_add(&h->use, f->number, m->in_use, m->high);
			if (!points_add(&h->use_points, f->number, m->in_use))
				return false;
			h->allocations += m->allocations;
			h->frees += m->frees;
			h->allocated += m->allocated;
			h->freed += m->freed;
			if (m->allocations > h->most_allocations) {
				h->most_allocations = m->allocations;
				h->most_allocations_frame = f->number;
			}
		}
		if (m->budgeted) {
			series_add(&h->usage, f->number, m->usage, m->usage);
			if (!points_add(&h->usage_points, f->number, m->usage))
				return false;
			if (h->budget_frames == 0 || m->budget < h->least_budget)
				h->least_budget = m->budget;
			h->budget_frames++;
		}
	}
	return true;
}

bool memory_stats_append(struct memory_stats *s, const struct memory_stats *from)
{
	for (uint32_t i = 0; i < from->gpu_count; i++) {
		struct memory_gpu_stats *g = gpu_of(s, from->gpus[i].gpu);
		if (!g)
			return false;
		gpu_add(g, &from->gpus[i]);
	}
	for (uint32_t i = 0; i < from->count; i++) {
		const struct memory_heap_stats *b = &from->heaps[i];
		struct memory_heap_stats *a = heap_of(s, b->gpu, b->heap);
		if (!a)
			return false;
		a->flags = b->flags;
		a->size = b->size;
		series_join(&a->use, &b->use);
		series_join(&a->usage, &b->usage);
		struct memory_heap_stats *bm = (struct memory_heap_stats *)&from->heaps[i];
		if (!points_join(&a->use_points, &bm->use_points) ||
		    !points_join(&a->usage_points, &bm->usage_points))
			return false;
		a->allocations += b->allocations;
		a->frees += b->frees;
		a->allocated += b->allocated;
		a->freed += b->freed;
		if (b->most_allocations > a->most_allocations) {
			a->most_allocations = b->most_allocations;
			a->most_allocations_frame = b->most_allocations_frame;
		}
		if (b->budget_frames && (a->budget_frames == 0 || b->least_budget < a->least_budget))
			a->least_budget = b->least_budget;
		a->budget_frames += b->budget_frames;
	}
	return true;
}

void memory_stats_release(struct memory_stats *s)
{
	for (uint32_t i = 0; i < s->count; i++) {
		free(s->heaps[i].use_points.p);
		free(s->heaps[i].usage_points.p);
	}
	free(s->heaps);
	free(s->gpus);
	memset(s, 0, sizeof(*s));
}

const struct memory_series *memory_heap_series(const struct memory_heap_stats *h)
{
	if (h->use.frames)
		return &h->use;
	return h->usage.frames ? &h->usage : NULL;
}

const struct memory_points *memory_heap_points(const struct memory_heap_stats *h)
{
	return h->use.frames ? &h->use_points : &h->usage_points;
}
