/* SPDX-License-Identifier: MIT */
/*
 * verdict.c: what bounded a frame. Its CPU frame time beside its GPUs'
 * frame times, and whether the CPU waited on the GPU, the GPU idled for
 * want of work, or neither, as the lines that end a frame's report.
 */
#include "report_internal.h"

#include <stdlib.h>
#include <string.h>

/* A wait scope's name and the time of the outermost scopes of that name. */
struct wait_name {
	const char *name;
	uint32_t len;
	uint32_t first;   /* order of first appearance */
	int64_t ns;
};

struct wait_names {
	struct wait_name *data;
	size_t len;
	size_t cap;
	bool failed;
};

/* The outermost wait scopes below n, summed by name. */
static void collect_waits(struct wait_names *w, const struct node *n)
{
	for (const struct node *c = n->child; c && !w->failed; c = c->next) {
		if (!(c->flags & NODE_WAIT)) {
			collect_waits(w, c);
			continue;
		}
		size_t i;
		for (i = 0; i < w->len; i++)
			if (w->data[i].len == c->name_len &&
			    memcmp(w->data[i].name, c->name, c->name_len) == 0)
				break;
		if (i == w->len) {
			if (!array_room((void **)&w->data, &w->cap, w->len + 1, sizeof(*w->data))) {
				w->failed = true;
				return;
			}
			w->data[w->len++] = (struct wait_name){ c->name, c->name_len, (uint32_t)i, 0 };
		}
		w->data[i].ns += c->inclusive_ns;
	}
}

/* Longest first; equal ones in order of appearance. */
static int wait_name_cmp(const void *pa, const void *pb)
{
	const struct wait_name *a = pa, *b = pb;
	if (a->ns != b->ns)
		return a->ns < b->ns ? 1 : -1;
	return (a->first > b->first) - (a->first < b->first);
}

static int busy_cmp(const void *pa, const void *pb)
{
	const struct busy_interval *a = pa, *b = pb;
	return (a->begin_ns > b->begin_ns) - (a->begin_ns < b->begin_ns);
}

/* The time from begin to end when no GPU was busy, or -1 when out of
 * memory. */
static int64_t gpu_idle(const struct frame *f, int64_t begin, int64_t end)
{
	struct busy_interval *iv = NULL;
	int64_t busy = 0, at = begin;

	if (f->busy_count) {
		iv = malloc(sizeof(*iv) * f->busy_count);
		if (!iv)
			return -1;
		memcpy(iv, f->busy, sizeof(*iv) * f->busy_count);
		qsort(iv, f->busy_count, sizeof(*iv), busy_cmp);
	}
	for (uint32_t i = 0; i < f->busy_count; i++) {
		int64_t b = iv[i].begin_ns > at ? iv[i].begin_ns : at;
		int64_t e = iv[i].end_ns < end ? iv[i].end_ns : end;
		if (e > b) {
			busy += e - b;
			at = e;
		}
	}
	free(iv);
	return end - begin - busy;
}

int frame_bound_find(const struct frame *f, struct frame_bound *out)
{
	memset(out, 0, sizeof(*out));
	out->frame_ns = f->cpu_end_ns - f->cpu_begin_ns;
	out->thread = -1;
	for (uint32_t i = 0; i < f->cpu_thread_count; i++) {
		const struct frame_cpu_thread *t = &f->cpu_threads[i];
		if (t->kind != FRAME_CPU_THREAD)
			continue;
		if ((int32_t)i == f->frame_thread ||
		    (f->frame_thread < 0 && (out->thread < 0 || t->wait_ns > out->wait_ns))) {
			out->thread = (int32_t)i;
			out->wait_ns = t->wait_ns;
		}
	}
	if (out->thread < 0 || out->frame_ns <= 0) {
		out->kind = BOUND_UNKNOWN;
		return 0;
	}
	if ((out->idle_ns = gpu_idle(f, f->cpu_begin_ns, f->cpu_end_ns)) < 0)
		return -1;
	/* At least a tenth of the frame: less is noise of the frame's own
	 * pacing. */
	int64_t tenth = out->frame_ns / 10 + (out->frame_ns % 10 != 0);
	if (out->wait_ns >= tenth)
		out->kind = BOUND_GPU;
	else if (out->idle_ns >= tenth)
		out->kind = BOUND_CPU;
	else
		out->kind = BOUND_BALANCED;
	return 0;
}

static void add_ms(struct sbuf *b, int64_t ns)
{
	sbuf_addf(b, "%.3f ms", (double)ns / 1e6);
}

/* The longest wait scopes of thread t, at most three, quoted. */
static int add_wait_names(struct sbuf *out, const struct glyphs *g,
			  const struct frame_cpu_thread *t)
{
	struct wait_names w = { 0 };
	if (t->root)
		collect_waits(&w, t->root);
	if (w.failed) {
		free(w.data);
		return -1;
	}
	if (w.len) {
		qsort(w.data, w.len, sizeof(*w.data), wait_name_cmp);
		sbuf_adds(out, " (");
		for (size_t i = 0; i < w.len && i < 3; i++) {
			sbuf_adds(out, i ? ", '" : "'");
			text_add_name(out, g, w.data[i].name, w.data[i].len);
			sbuf_adds(out, "'");
		}
		if (w.len > 3)
			sbuf_addf(out, " and %zu more", w.len - 3);
		sbuf_adds(out, ")");
	}
	free(w.data);
	return 0;
}

/* Frames of other kinds, a line per kind in order of first appearance:
 * when each began, from the frame's begin. */
static void add_marks(struct sbuf *out, const struct glyphs *g, const struct frame *f)
{
	for (uint32_t i = 0; i < f->mark_count; i++) {
		const struct frame_mark *m = &f->marks[i];
		uint32_t j = 0, shown = 0, more = 0;
		while (j < i && (f->marks[j].timeline_len != m->timeline_len ||
				 memcmp(f->marks[j].timeline, m->timeline, m->timeline_len) != 0))
			j++;
		if (j < i)
			continue;
		sbuf_adds(out, "frames of kind '");
		text_add_name(out, g, m->timeline, m->timeline_len);
		sbuf_adds(out, "' began at");
		for (j = i; j < f->mark_count; j++) {
			const struct frame_mark *k = &f->marks[j];
			if (k->timeline_len != m->timeline_len ||
			    memcmp(k->timeline, m->timeline, m->timeline_len) != 0)
				continue;
			if (shown == 8) {
				more++;
				continue;
			}
			sbuf_addf(out, "%s %+.3f ms", shown++ ? "," : "",
				  (double)(k->ns - f->cpu_begin_ns) / 1e6);
		}
		if (more)
			sbuf_addf(out, " and %u more", more);
		sbuf_adds(out, " into the frame\n");
	}
}

int frame_bound_print(struct sbuf *out, const struct glyphs *g, const struct frame *f)
{
	struct frame_bound b;
	if (frame_bound_find(f, &b) != 0)
		return -1;

	sbuf_addf(out, "Frame %llu%sCPU frame ", (unsigned long long)f->number, g->sep);
	add_ms(out, b.frame_ns);
	uint32_t busy_gpus = 0;
	for (uint32_t i = 0; i < f->gpu_count; i++)
		busy_gpus += f->gpus[i].begin_ns != INT64_MIN;
	for (uint32_t i = 0; i < f->gpu_count; i++) {
		if (f->gpus[i].begin_ns == INT64_MIN)
			continue;
		if (busy_gpus == 1)
			sbuf_addf(out, "%sGPU frame ", g->sep);
		else
			sbuf_addf(out, "%sGPU %u frame ", g->sep, f->gpus[i].gpu);
		add_ms(out, f->gpus[i].frame_ns);
	}
	if (!busy_gpus)
		sbuf_addf(out, "%sno GPU work", g->sep);
	sbuf_adds(out, "\n");

	switch (b.kind) {
	case BOUND_UNKNOWN:
		break;
	case BOUND_GPU:
		sbuf_adds(out, "GPU-bound: the CPU waited ");
		add_ms(out, b.wait_ns);
		sbuf_adds(out, " of ");
		add_ms(out, b.frame_ns);
		sbuf_adds(out, " on the GPU");
		if (f->frame_thread < 0) {
			const struct frame_cpu_thread *t = &f->cpu_threads[b.thread];
			sbuf_adds(out, " on thread '");
			text_add_name(out, g, t->name, t->name_len);
			sbuf_adds(out, "'");
		}
		if (add_wait_names(out, g, &f->cpu_threads[b.thread]) != 0)
			return -1;
		sbuf_adds(out, "\n");
		break;
	case BOUND_CPU:
		sbuf_adds(out, "CPU-bound: the GPU idled ");
		add_ms(out, b.idle_ns);
		sbuf_adds(out, " of ");
		add_ms(out, b.frame_ns);
		sbuf_adds(out, " waiting for submissions\n");
		break;
	case BOUND_BALANCED:
		sbuf_adds(out, "balanced: the CPU waited ");
		add_ms(out, b.wait_ns);
		sbuf_adds(out, " on the GPU and the GPU idled ");
		add_ms(out, b.idle_ns);
		sbuf_adds(out, ", each less than a tenth of ");
		add_ms(out, b.frame_ns);
		sbuf_adds(out, "\n");
		break;
	}
	add_marks(out, g, f);
	if (f->task_misuses)
		sbuf_addf(out, "note: %u task record%s named a task that was not running, or began "
			       "one again; %s left out\n", f->task_misuses,
			  f->task_misuses == 1 ? "" : "s", f->task_misuses == 1 ? "it was" : "they were");
	sbuf_adds(out, "\n");
	return 0;
}
