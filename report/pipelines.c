/* SPDX-License-Identifier: MIT */
/*
 * pipelines.c: `--by pipeline`, the table of a queue's draws, dispatches
 * and ray tracing grouped by the pipeline they ran (analyze/pipelines.c):
 * per pipeline its calls, draws, dispatches, primitives, exclusive time
 * and share, the top pipelines first.
 */
#include "report_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The subtrees of the outermost --root matches. */
static void add_matches(struct pipeline_groups *g, const struct report_settings *s,
			const struct node *n)
{
	for (const struct node *c = n->child; c && !g->failed; c = c->next) {
		if (filter_match_root(s->filter, c->name, c->name_len))
			pipeline_groups_add(g, c);
		else
			add_matches(g, s, c);
	}
}

static uint64_t sort_key(enum report_sort sort, const struct pipeline_group *p)
{
	switch (sort) {
	case SORT_DRAWS:
		return p->counts.draws;
	case SORT_PRIMS:
		return p->counts.prims;
	case SORT_VERTS:
		return p->counts.verts;
	case SORT_CHRONO:
	case SORT_TIME:
		break;
	}
	return p->exclusive_ns > 0 ? (uint64_t)p->exclusive_ns : 0;
}

struct keyed {
	uint64_t key;
	uint32_t first;
	uint32_t index;
};

/* Larger keys first; equal keys in order of first appearance. */
static int keyed_cmp(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? 1 : -1;
	return (a->first > b->first) - (a->first < b->first);
}

static double share_of(const struct pipeline_rows *r, int64_t ns)
{
	if (r->denominator_ns <= 0 || !r->timed)
		return 0;
	return 100.0 * (double)ns / (double)r->denominator_ns;
}

static bool below_threshold(const struct pipeline_rows *r, const struct report_settings *s,
			    int64_t ns)
{
	return s->threshold_pct > 0 && r->timed && share_of(r, ns) < s->threshold_pct;
}

void pipeline_rows_build(struct pipeline_rows *r, const struct report_settings *s,
			 const struct frame_queue *fq, int64_t denominator_ns, bool timed)
{
	struct pipeline_groups *g = &r->groups;
	pipeline_groups_clear(g);
	r->shown = r->hidden = 0;
	r->folded = (struct pipeline_group){ .name = NULL };
	r->denominator_ns = denominator_ns;
	r->timed = timed;
	if (s->root_count)
		add_matches(g, s, fq->root);
	else
		pipeline_groups_add(g, fq->root);
	if (g->failed) {
		r->failed = true;
		return;
	}
	struct keyed *k = malloc((g->len ? g->len : 1) * sizeof(*k));
	uint32_t *order = realloc(r->order, (g->len ? g->len : 1) * sizeof(*order));
	if (!k || !order) {
		free(k);
		if (order)
			r->order = order;
		r->failed = true;
		return;
	}
	r->order = order;
	for (size_t i = 0; i < g->len; i++)
		k[i] = (struct keyed){ sort_key(s->sort, &g->data[i]), g->data[i].first, (uint32_t)i };
	qsort(k, g->len, sizeof(*k), keyed_cmp);
	for (size_t i = 0; i < g->len; i++) {
		const struct pipeline_group *p = &g->data[k[i].index];
		if (!below_threshold(r, s, p->exclusive_ns)) {
			r->order[r->shown++] = k[i].index;
			continue;
		}
		/* Hidden rows that together pass the threshold show as one. */
		r->hidden++;
		r->folded.calls += p->calls;
		r->folded.counts.draws += p->counts.draws;
		r->folded.counts.dispatches += p->counts.dispatches;
		r->folded.counts.prims += p->counts.prims;
		r->folded.counts.verts += p->counts.verts;
		r->folded.counts.unknown |= p->counts.unknown;
		r->folded.exclusive_ns += p->exclusive_ns;
	}
	free(k);
	if (r->hidden && below_threshold(r, s, r->folded.exclusive_ns))
		r->folded.calls = 0;
}

void pipeline_rows_release(struct pipeline_rows *r)
{
	pipeline_groups_release(&r->groups);
	free(r->order);
	memset(r, 0, sizeof(*r));
}

/* A count as the profilegpu table writes it: `+` a lower bound, `?`
 * unknown. */
static void count_cell(struct grid *gr, uint64_t value, bool unknown)
{
	char buf[32];
	int n = unknown && value == 0 ?
			snprintf(buf, sizeof(buf), "?") :
			snprintf(buf, sizeof(buf), "%llu%s", (unsigned long long)value, unknown ? "+" : "");
	grid_cell(gr, buf, n > 0 ? (size_t)n : 0);
}

static void add_row(struct grid *gr, const struct report_settings *s, const struct pipeline_rows *r,
		    const struct pipeline_group *p, const char *name, size_t len)
{
	grid_count(gr, p->calls);
	if (s->stats) {
		count_cell(gr, p->counts.draws, p->counts.unknown & COUNT_DRAWS);
		count_cell(gr, p->counts.dispatches, p->counts.unknown & COUNT_DISPATCHES);
		count_cell(gr, p->counts.prims, p->counts.unknown & COUNT_PRIMS);
	}
	if (s->percent) {
		if (r->timed)
			grid_bar(gr, share_of(r, p->exclusive_ns));
		else
			grid_cell(gr, "-", 1);
	}
	if (r->timed) {
		char buf[48];
		int n = snprintf(buf, sizeof(buf), "%.3f ms", (double)p->exclusive_ns / 1e6);
		grid_cell(gr, buf, n > 0 ? (size_t)n : 0);
	} else {
		grid_cell(gr, "-", 1);
	}
	grid_name(gr, 0, name, len, p->untimed ? " [untimed]" : NULL);
}

void pipeline_rows_render(struct sbuf *out, const struct report_settings *s,
			  const struct glyphs *g, const struct pipeline_rows *r,
			  const struct report_sink *sink)
{
	struct grid gr = { .g = g, .max_width = s->width, .color = s->color };
	gr.titles[gr.cols++] = "Calls";
	if (s->stats) {
		gr.titles[gr.cols++] = "Draws";
		gr.titles[gr.cols++] = "Dispatches";
		gr.titles[gr.cols++] = "Prims";
	}
	if (s->percent)
		gr.titles[gr.cols++] = "Percent";
	gr.titles[gr.cols++] = "Time";
	gr.titles[gr.cols++] = "Pipeline";
	/* To fit the width (grid_fit): the counts go first, then the bar. */
	static const char *const drop[] = { "Prims", "Dispatches", "Draws", "Calls", "Percent" };
	for (size_t i = 0; i < gr.cols; i++)
		for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]); k++)
			if (strcmp(gr.titles[i], drop[k]) == 0)
				gr.drop[i] = (uint8_t)(k + 1);
	for (size_t i = 0; i < r->shown; i++) {
		const struct pipeline_group *p = &r->groups.data[r->order[i]];
		if (p->name_len)
			add_row(&gr, s, r, p, p->name, p->name_len);
		else
			add_row(&gr, s, r, p, PIPELINE_NONE_NAME, strlen(PIPELINE_NONE_NAME));
	}
	if (r->hidden && r->folded.calls) {
		char label[64];
		int n = snprintf(label, sizeof(label), "%zu other pipeline%s", r->hidden,
				 r->hidden == 1 ? "" : "s");
		add_row(&gr, s, r, &r->folded, label, n > 0 ? (size_t)n : 0);
	}
	grid_render(&gr, out, sink);
	grid_release(&gr);
}
