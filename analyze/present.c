/* SPDX-License-Identifier: MIT */
/*
 * present.c: presentation (format 1.5): a frame's presents and shown
 * times copied into its model, and over a run the time from one present
 * to the next on each swapchain, with the v-syncs they missed, as
 * analyze.h's "Presentation over a run" defines them.
 */
#include "analyze_internal.h"

#include <stdlib.h>
#include <string.h>

bool present_frame_build(const struct raw_frame *raw, struct frame *f, struct arena *arena)
{
	f->presents = NULL;
	f->present_count = 0;
	f->shown = NULL;
	f->shown_count = 0;
	if (raw->present_count) {
		struct frame_present *p = arena_alloc_uninit(arena, sizeof(*p) * raw->present_count);
		if (!p)
			return false;
		memcpy(p, raw->presents, sizeof(*p) * raw->present_count);
		f->presents = p;
		f->present_count = (uint32_t)raw->present_count;
	}
	if (raw->shown_count) {
		struct frame_shown *s = arena_alloc_uninit(arena, sizeof(*s) * raw->shown_count);
		if (!s)
			return false;
		memcpy(s, raw->shown, sizeof(*s) * raw->shown_count);
		f->shown = s;
		f->shown_count = (uint32_t)raw->shown_count;
	}
	return true;
}

/* A present of the run, with the frame it was made in and, once the run
 * is finished, when it was shown on each source (INT64_MIN: not known). */
struct run_present {
	struct frame_present p;
	uint64_t frame;
	uint64_t order;        /* its position in the run */
	int64_t shown_ns[3];   /* by enum crumbs_present_source */
};

struct run_shown {
	struct frame_shown s;
	uint64_t order;        /* its position among the run's shown times */
};

struct present_run {
	struct vec presents;   /* struct run_present, in the order given */
	struct vec shown;      /* struct run_shown */
	struct vec intervals;  /* struct present_interval, after finishing */
	struct present_summary summary;
};

present_run *present_run_create(void)
{
	return calloc(1, sizeof(struct present_run));
}

void present_run_free(present_run *r)
{
	if (!r)
		return;
	vec_release(&r->presents);
	vec_release(&r->shown);
	vec_release(&r->intervals);
	free(r);
}

enum crumbs_result present_run_add(present_run *r, const struct frame *f)
{
	for (uint32_t i = 0; i < f->present_count; i++) {
		struct run_present *p = vec_push(&r->presents, sizeof(*p));
		if (!p)
			return CRUMBS_ERROR_OUT_OF_MEMORY;
		*p = (struct run_present){ .p = f->presents[i], .frame = f->number,
					   .order = r->presents.len - 1,
					   .shown_ns = { INT64_MIN, INT64_MIN, INT64_MIN } };
	}
	for (uint32_t i = 0; i < f->shown_count; i++) {
		struct run_shown *s = vec_push(&r->shown, sizeof(*s));
		if (!s)
			return CRUMBS_ERROR_OUT_OF_MEMORY;
		*s = (struct run_shown){ f->shown[i], r->shown.len - 1 };
	}
	return CRUMBS_OK;
}

/* Appends from's `size`-byte elements to to's, renumbering their order
 * (the first field after `offset` bytes) after to's. */
static bool vec_append(struct vec *to, struct vec *from, size_t size, size_t offset)
{
	size_t base = to->len;
	if (from->len && !array_room(&to->data, &to->cap, to->len + from->len, size))
		return false;
	for (size_t i = 0; i < from->len; i++) {
		unsigned char *e = (unsigned char *)to->data + size * (to->len + i);
		uint64_t order = base + i;
		memcpy(e, (const unsigned char *)from->data + size * i, size);
		memcpy(e + offset, &order, sizeof(order));
	}
	to->len += from->len;
	from->len = 0;
	return true;
}

enum crumbs_result present_run_append(present_run *r, present_run *from)
{
	if (!vec_append(&r->presents, &from->presents, sizeof(struct run_present),
			offsetof(struct run_present, order)) ||
	    !vec_append(&r->shown, &from->shown, sizeof(struct run_shown),
			offsetof(struct run_shown, order)))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	return CRUMBS_OK;
}

/* Presents by swapchain, then id, then order. */
static int present_cmp(const void *a, const void *b)
{
	const struct run_present *x = a, *y = b;
	if (x->p.swapchain != y->p.swapchain)
		return x->p.swapchain < y->p.swapchain ? -1 : 1;
	if (x->p.id != y->p.id)
		return x->p.id < y->p.id ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* By swapchain, then order: each swapchain's presents as they were made. */
static int swapchain_order_cmp(const void *a, const void *b)
{
	const struct run_present *x = a, *y = b;
	if (x->p.swapchain != y->p.swapchain)
		return x->p.swapchain < y->p.swapchain ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int interval_order_cmp(const void *a, const void *b)
{
	const struct present_interval *x = a, *y = b;
	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	return x->swapchain < y->swapchain ? -1 : x->swapchain > y->swapchain;
}

static int ns_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The present of `swapchain` with `id`, the first made, in presents
 * sorted by present_cmp; NULL when none. */
static struct run_present *find_present(struct run_present *p, size_t n, uint64_t swapchain,
					uint64_t id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p[mid].p.swapchain < swapchain ||
		    (p[mid].p.swapchain == swapchain && p[mid].p.id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && p[lo].p.swapchain == swapchain && p[lo].p.id == id ? &p[lo] : NULL;
}

/* Whether a present asked for a v-sync of its own. */
static bool asks_vsync(uint8_t mode)
{
	return mode == CRUMBS_PRESENT_MODE_FIFO || mode == CRUMBS_PRESENT_MODE_FIFO_RELAXED;
}

/* The nearest-rank percentile p of n sorted values. */
static int64_t percentile(const int64_t *sorted, size_t n, unsigned p)
{
	size_t rank = (size_t)(((uint64_t)p * n + 99) / 100);
	return sorted[rank ? rank - 1 : 0];
}

static bool push_interval(present_run *r, const struct present_interval *iv)
{
	struct present_interval *out = vec_push(&r->intervals, sizeof(*out));
	if (!out)
		return false;
	*out = *iv;
	return true;
}

/* The intervals of one swapchain's presents p[0..n), in order. */
static bool swapchain_intervals(present_run *r, const struct run_present *p, size_t n)
{
	struct present_summary *s = &r->summary;
	/* The source most of them were shown by; display timing where as
	 * many, since its times are the display's own. */
	size_t by[3] = { 0, 0, 0 };
	for (size_t i = 0; i < n; i++)
		for (int k = 1; k <= 2; k++)
			by[k] += p[i].shown_ns[k] != INT64_MIN;
	int source = by[2] && by[2] >= by[1] ? 2 : by[1] ? 1 : 0;
	const struct run_present *last = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct run_present *cur = &p[i];
		if (cur->p.refresh_ns)
			s->refresh_ns = cur->p.refresh_ns;
		if (source && cur->shown_ns[source] == INT64_MIN)
			continue; /* not shown, or not known to be: no interval ends there */
		if (last) {
			struct present_interval iv = { .frame = cur->frame,
						       .swapchain = cur->p.swapchain,
						       .shown = source != 0 };
			if (source) {
				iv.ns = cur->shown_ns[source] - last->shown_ns[source];
				int64_t refresh = cur->p.refresh_ns ? cur->p.refresh_ns : last->p.refresh_ns;
				if (!asks_vsync(cur->p.mode)) {
					s->no_vsync++;
				} else if (refresh <= 0) {
					s->no_refresh++;
				} else {
					int64_t spans = iv.ns > 0 ? (iv.ns + refresh / 2) / refresh : 0;
					iv.counted = true;
					iv.missed = spans > 1 ? (spans - 1 > UINT32_MAX ? UINT32_MAX :
								  (uint32_t)(spans - 1)) : 0;
				}
			} else {
				iv.ns = cur->p.cpu_ns - last->p.cpu_ns;
			}
			if (iv.ns < 0)
				iv.ns = 0; /* a clock that went back: none does, but files lie */
			if (!push_interval(r, &iv))
				return false;
		}
		last = cur;
	}
	return true;
}

enum crumbs_result present_run_finish(present_run *r)
{
	struct present_summary *s = &r->summary;
	struct run_present *p = r->presents.data;
	size_t n = r->presents.len;
	memset(s, 0, sizeof(*s));
	r->intervals.len = 0;

	/* Failed presents showed nothing: they are counted, then left out. */
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i].p.flags & CRUMBS_PRESENT_FAILED)
			s->failed++;
		else
			p[kept++] = p[i];
	}
	n = r->presents.len = kept;
	s->presents = n;

	/* Each shown time to its present: the first of each source holds. */
	if (n)
		qsort(p, n, sizeof(*p), present_cmp);
	const struct run_shown *sh = r->shown.data;
	for (size_t i = 0; i < r->shown.len; i++) {
		struct run_present *m = find_present(p, n, sh[i].s.swapchain, sh[i].s.id);
		unsigned src = sh[i].s.source;
		if (!m || src < 1 || src > 2 || m->shown_ns[src] != INT64_MIN)
			continue;
		m->shown_ns[src] = sh[i].s.shown_ns;
		s->sources |= 1u << src;
	}
	for (size_t i = 0; i < n; i++)
		s->shown += p[i].shown_ns[1] != INT64_MIN || p[i].shown_ns[2] != INT64_MIN;

	if (n)
		qsort(p, n, sizeof(*p), swapchain_order_cmp);
	bool any_shown = false, any_cpu = false;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && p[j].p.swapchain == p[i].p.swapchain)
			j++;
		s->swapchains++;
		size_t before = r->intervals.len;
		if (!swapchain_intervals(r, p + i, j - i))
			return CRUMBS_ERROR_OUT_OF_MEMORY;
		const struct present_interval *iv = r->intervals.data;
		if (r->intervals.len > before) {
			any_shown |= iv[before].shown;
			any_cpu |= !iv[before].shown;
		}
		i = j;
	}
	struct present_interval *iv = r->intervals.data;
	size_t count = r->intervals.len;
	if (count)
		qsort(iv, count, sizeof(*iv), interval_order_cmp);
	s->intervals = count;
	s->clock = !count ? PRESENT_CLOCK_NONE : any_shown && any_cpu ? PRESENT_CLOCK_MIXED :
		   any_shown ? PRESENT_CLOCK_SHOWN : PRESENT_CLOCK_CPU;

	int64_t *sorted = malloc(sizeof(*sorted) * (count > n ? count : n) + 1);
	if (!sorted)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	s->max_ns = -1;
	for (size_t i = 0; i < count; i++) {
		sorted[i] = iv[i].ns;
		if (iv[i].ns > s->max_ns) {
			s->max_ns = iv[i].ns;
			s->max_frame = iv[i].frame;
		}
		if (iv[i].counted) {
			s->counted++;
			s->missed_vsyncs += iv[i].missed;
			s->late += iv[i].missed > 0;
		}
	}
	if (count) {
		qsort(sorted, count, sizeof(*sorted), ns_cmp);
		s->median_ns = percentile(sorted, count, 50);
		s->p99_ns = percentile(sorted, count, 99);
	} else {
		s->max_ns = 0;
	}
	for (size_t i = 0; i < n; i++)
		sorted[i] = p[i].p.duration_ns;
	if (n) {
		qsort(sorted, n, sizeof(*sorted), ns_cmp);
		s->call_median_ns = percentile(sorted, n, 50);
	}
	free(sorted);
	return CRUMBS_OK;
}

const struct present_summary *present_run_summary(const present_run *r)
{
	return &r->summary;
}

const struct present_interval *present_run_intervals(const present_run *r, size_t *count)
{
	*count = r->intervals.len;
	return r->intervals.data;
}

int64_t present_run_frame_max(const present_run *r, uint64_t number, size_t *cursor)
{
	const struct present_interval *iv = r->intervals.data;
	size_t i = *cursor;
	int64_t best = -1;
	while (i < r->intervals.len && iv[i].frame < number)
		i++;
	for (; i < r->intervals.len && iv[i].frame == number; i++)
		if (iv[i].ns > best)
			best = iv[i].ns;
	*cursor = i;
	return best;
}
