/* SPDX-License-Identifier: MIT */
/*
 * stats.c: `crumbs stats` as text: its settings, the rows the filters
 * select, in tree order, drawn as tables (Unicode or ASCII, sized by
 * display width), CSV or JSON; and budget files, checked against the rows.
 */
#include "report_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* Scope, pipeline, CPU scope, task and state rows: named by their own
 * names, with calls, an exclusive time and a share. */
static bool named_kind(enum stats_kind kind)
{
	return stats_kind_named(kind);
}

/* A queue's busy, wait and idle rows, whose labels add the kind. */
static bool queue_kind(enum stats_kind kind)
{
	return kind == STATS_BUSY || kind == STATS_WAIT || kind == STATS_IDLE;
}

/* Rows whose children are scopes (or tasks, or states) below them. */
static bool scope_parent(enum stats_kind kind)
{
	return kind == STATS_SCOPE || kind == STATS_CPU_SCOPE || kind == STATS_TASK ||
	       kind == STATS_STATE;
}

/* Whether the CPU's rows are shown: where the run held CPU data and no
 * GPU, queue or pipelines are chosen (as `crumbs report` leaves its CPU
 * blocks out then). */
static bool shows_cpu(const struct stats_settings *st, const stats *s)
{
	return stats_has_cpu(s) && report_cpu_chosen(&st->report) && !st->no_cpu;
}

/* ------------------------------------------------------------------------ */
/* Settings                                                                 */
/* ------------------------------------------------------------------------ */

#define STATS_SETTINGS(t) ((struct stats_settings *)(t))

void stats_settings_init(struct stats_settings *st)
{
	memset(st, 0, sizeof(*st));
	report_settings_init(&st->report);
	st->format = STATS_FORMAT_TABLE;
	st->sort = STATS_SORT_CHRONO;
	st->spike.median_factor = 1.5;
	st->last_frame = UINT64_MAX;
}

void stats_settings_release(struct stats_settings *st)
{
	report_settings_release(&st->report);
	free(st->budget_path);
	memset(st, 0, sizeof(*st));
}

#define AT(field) offsetof(struct stats_settings, field)

/* A time in milliseconds, "20" or "20ms", as nanoseconds from 0 to
 * STATS_NS_MAX. */
static int parse_ms(const char *v, uint32_t *out)
{
	double ms;
	if (parse_double(v, "ms", 0, INFINITY, &ms) != 0 || ms * 1e6 > STATS_NS_MAX)
		return -1;
	*out = (uint32_t)llround(ms * 1e6);
	return 0;
}

/* --spike MS, a time in milliseconds above 0, or Fx, a factor of the
 * median. */
static int set_spike(void *t, const char *v, char *err, size_t n)
{
	struct stats_settings *st = STATS_SETTINGS(t);
	size_t len = strlen(v);
	if (len > 1 && (v[len - 1] == 'x' || v[len - 1] == 'X')) {
		double f;
		if (read_double(v, &f) == v + len - 1 && f > 0 && f <= 1e6) {
			st->spike.median_factor = f;
			st->spike.threshold_ns = 0;
			return 0;
		}
	} else if (parse_ms(v, &st->spike.threshold_ns) == 0 && st->spike.threshold_ns > 0) {
		return 0;
	}
	snprintf(err, n, "'%s' is neither a time in ms (20) nor a factor of the median (1.5x)", v);
	return -1;
}

static const char *const format_names[] = { "table", "csv", "json", "markdown", NULL };
static const char *const sort_names[] = { "chrono", "time", "p95", "max", NULL };

const struct option_spec stats_options[] = {
	{ "frames", 0, "A:B", "only frames numbered A to B, inclusive (A: to the end, :B from the start)",
	  OPT_FRAMES, .offset = AT(first_frame), .last_offset = AT(last_frame), .set_offset = AT(frames_set) },
	{ "spike", 0, "MS|Fx", "a GPU frame above MS milliseconds (20) or F times the median (1.5x, the default) is a spike",
	  OPT_CALLBACK, .callback = set_spike },
	{ "sort", 's', "ORDER", "order siblings by chrono (first appearance, default), time (mean inclusive), p95 or max, largest first",
	  OPT_CHOICE, .offset = AT(sort), .names = sort_names },
	{ "format", 0, "FORMAT", "table (default), csv, json or markdown",
	  OPT_CHOICE, .offset = AT(format), .names = format_names },
	{ "per-frame", 0, NULL, "with --format json: every row's value in every frame, in frame order",
	  OPT_FLAG, .offset = AT(per_frame) },
	{ "budget", 'b', "FILE", "check the limits of FILE (lines of PATTERN STATISTIC LIMIT_MS); exit 1 if one fails",
	  OPT_STRING, .offset = AT(budget_path) },
	{ "cpu", 0, NULL, "only the CPU's rows: its frame times, threads, scopes and tasks",
	  OPT_FLAG, .offset = AT(cpu_only) },
	{ "no-cpu", 0, NULL, "only the GPUs' rows (as --gpu, --queue and --by pipeline do)",
	  OPT_FLAG, .offset = AT(no_cpu) },
};
const size_t stats_option_count = sizeof(stats_options) / sizeof(stats_options[0]);

size_t stats_report_options(struct option_spec *out)
{
	static const struct option_borrowed shared[] = {
		{ "root", "show only the scopes whose name matches (*, ?, [...]) and the scopes below; repeatable" },
		{ "ignore-case", "match --root, --queue and budget patterns ignoring case" },
		{ "threshold", "hide scope rows whose share of their queue is below PCT percent" },
		{ "max-depth", "show N levels of scopes below the queue (or below a --root match)" },
		{ "by", "rows of scope (default) or pipeline: draws and dispatches by the pipeline they ran, in runs recorded at detail 3, in place of scopes" },
		{ "ascii", NULL },
		{ "unicode", NULL },
		{ "gpu", NULL },
		{ "queue", NULL },
		{ "counters", "also each scope's pipeline statistics and vendor counters, their medians per frame" },
	};
	return options_borrow(report_options, report_option_count, shared,
			      sizeof(shared) / sizeof(shared[0]), out);
}

/* ------------------------------------------------------------------------ */
/* Selection and order                                                      */
/* ------------------------------------------------------------------------ */

/* The rows to show, in order, with the level of each in the table. */
struct selection {
	uint32_t *rows;
	uint32_t *levels;
	size_t len;
	size_t hidden;    /* scope rows under --threshold */
	bool failed;
	/* per row of the stats: */
	uint8_t *selected;   /* by every filter but --threshold */
	uint32_t *level;     /* level below the queue, or below the --root match */
};

static double sort_key(enum stats_sort sort, const struct stats_row *r)
{
	switch (sort) {
	case STATS_SORT_TIME:
		return r->time.mean_ns;
	case STATS_SORT_P95:
		return r->time.p95_ns;
	case STATS_SORT_MAX:
		return r->time.max_ns;
	case STATS_SORT_CHRONO:
		break;
	}
	return 0;
}

struct keyed {
	double key;
	uint32_t row;
};

static int keyed_cmp(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? 1 : -1;
	return (a->row > b->row) - (a->row < b->row);
}

/* Marks the rows that --gpu, --queue, --root and --max-depth select, and
 * the level of each scope in its table: below the queue, from 0, or below
 * the outermost --root match it is in, from 0. */
static bool select_rows(const struct stats_settings *st, const stats *s, struct selection *sel)
{
	const struct report_settings *rs = &st->report;
	size_t n = stats_row_count(s);
	uint8_t *in_queue = calloc(n ? n : 1, 1);
	bool cpu = shows_cpu(st, s);

	sel->selected = calloc(n ? n : 1, 1);
	sel->level = calloc(n ? n : 1, sizeof(*sel->level));
	if (!in_queue || !sel->selected || !sel->level) {
		free(in_queue);
		return false;
	}
	/* A parent comes before its children. */
	for (size_t i = 0; i < n; i++) {
		const struct stats_row *r = stats_row(s, i);
		sel->level[i] = UINT32_MAX;
		if (stats_kind_cpu(r->kind) ? !cpu :
		    st->cpu_only || (rs->gpu >= 0 && r->gpu != (uint32_t)rs->gpu))
			continue;
		if (r->kind == STATS_GPU || r->kind == STATS_CPU) {
			sel->selected[i] = 1;
			continue;
		}
		if (r->kind == STATS_TASKS) {
			in_queue[i] = 1; /* no value of its own: never a row shown */
			continue;
		}
		if (r->kind == STATS_THREAD || r->kind == STATS_TIMELINE) {
			sel->selected[i] = in_queue[i] = 1;
			continue;
		}
		if (r->kind == STATS_PIPELINE) {
			/* Right below its queue; --root and --max-depth choose
			 * scopes, which pipeline rows replace. */
			sel->selected[i] = in_queue[i] = in_queue[r->parent];
			sel->level[i] = 0;
			continue;
		}
		if (queue_kind(r->kind)) {
			sel->selected[i] = in_queue[i] = filter_match_queue(rs->filter, r->name);
			continue;
		}
		in_queue[i] = in_queue[r->parent];
		if (!in_queue[i])
			continue;
		const struct stats_row *p = stats_row(s, r->parent);
		uint32_t level;
		if (rs->root_count == 0)
			level = r->depth - 1;
		else if (scope_parent(p->kind) && sel->level[r->parent] != UINT32_MAX)
			level = sel->level[r->parent] + 1;
		else if (filter_match_root(rs->filter, r->name, r->name_len))
			level = 0;
		else
			continue;
		sel->level[i] = level;
		/* --max-depth counts levels below the top row: the queue
		 * (a scope of depth d is d below it) or the match. */
		uint32_t below = rs->root_count ? level : r->depth;
		sel->selected[i] = rs->max_depth < 0 || below <= (uint32_t)rs->max_depth;
	}
	free(in_queue);
	return true;
}

uint8_t *stats_select(const struct stats_settings *st, const stats *s)
{
	struct selection sel = { 0 };
	bool ok = select_rows(st, s, &sel);
	free(sel.level);
	if (!ok) {
		free(sel.selected);
		return NULL;
	}
	return sel.selected;
}

static void push_row(struct selection *sel, size_t *cap, uint32_t row, uint32_t level)
{
	/* Two arrays of one length: each grows from *cap, and *cap is
	 * theirs once both have grown. */
	size_t rows_cap = *cap, levels_cap = *cap;
	if (!array_room((void **)&sel->rows, &rows_cap, sel->len + 1, sizeof(*sel->rows)) ||
	    !array_room((void **)&sel->levels, &levels_cap, sel->len + 1, sizeof(*sel->levels))) {
		sel->failed = true;
		return;
	}
	*cap = rows_cap;
	sel->rows[sel->len] = row;
	sel->levels[sel->len++] = level;
}

/* The children of row r in the settings' order. */
static struct keyed *children(const struct stats_settings *st, const stats *s, uint32_t r,
			      size_t *count, bool *failed)
{
	size_t n = 0;
	for (uint32_t c = stats_row(s, r)->first_child; c != STATS_NONE; c = stats_row(s, c)->next_sibling)
		n++;
	*count = n;
	if (n == 0)
		return NULL;
	struct keyed *k = malloc(n * sizeof(*k));
	if (!k) {
		*failed = true;
		*count = 0;
		return NULL;
	}
	n = 0;
	for (uint32_t c = stats_row(s, r)->first_child; c != STATS_NONE; c = stats_row(s, c)->next_sibling)
		k[n++] = (struct keyed){ sort_key(st->sort, stats_row(s, c)), c };
	if (st->sort != STATS_SORT_CHRONO)
		qsort(k, n, sizeof(*k), keyed_cmp);
	return k;
}

/* Scope rows below r, depth first (nesting is at most the format's 255). */
static void add_scopes(const struct stats_settings *st, const stats *s, struct selection *sel,
		       size_t *cap, uint32_t r, bool thresholds)
{
	size_t n;
	struct keyed *k = children(st, s, r, &n, &sel->failed);
	for (size_t i = 0; i < n; i++) {
		uint32_t c = k[i].row;
		const struct stats_row *row = stats_row(s, c);
		if (sel->selected[c]) {
			if (thresholds && st->report.threshold_pct > 0 &&
			    row->share_pct < st->report.threshold_pct) {
				sel->hidden++;
				continue; /* and its subtree: its share is no larger */
			}
			push_row(sel, cap, c, sel->level[c] + 1);
		}
		add_scopes(st, s, sel, cap, c, thresholds);
	}
	free(k);
}

static void selection_release(struct selection *sel)
{
	free(sel->rows);
	free(sel->levels);
	free(sel->selected);
	free(sel->level);
	memset(sel, 0, sizeof(*sel));
}

/* The CPU's rows of a table: its frame-time rows ("CPU" first, then the
 * other kinds' in order), its threads, and the timelines. */
static void push_cpu_rows(const stats *s, struct selection *sel, size_t *cap)
{
	size_t n = stats_row_count(s);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			const struct stats_row *r = stats_row(s, i);
			bool first = strcmp(r->name, "CPU") == 0;
			if (r->kind == STATS_CPU && sel->selected[i] && first == (pass == 0))
				push_row(sel, cap, (uint32_t)i, 0);
		}
	static const enum stats_kind below[] = { STATS_THREAD, STATS_TIMELINE };
	for (size_t k = 0; k < sizeof(below) / sizeof(below[0]); k++)
		for (size_t i = 0; i < n; i++)
			if (stats_row(s, i)->kind == below[k] && sel->selected[i])
				push_row(sel, cap, (uint32_t)i, 0);
}

/* Every shown row: per GPU its row and its queues' rows, then per queue
 * its busy row followed by its scopes (levels from 1); then the CPU's
 * rows, and the scopes of each thread and the tasks of each timeline. */
static bool selection_build(const struct stats_settings *st, const stats *s,
			    struct selection *sel, bool thresholds)
{
	size_t cap = 0;
	if (!select_rows(st, s, sel))
		return false;
	bool cpu = shows_cpu(st, s);
	for (uint32_t g = 0; g < 1u << 16; g++) {
		uint32_t gr = stats_gpu_row(s, g);
		if (gr == STATS_NONE) {
			if (g >= stats_row_count(s))
				break;
			continue;
		}
		if (!sel->selected[gr])
			continue;
		push_row(sel, &cap, gr, 0);
		for (uint32_t q = stats_row(s, gr)->first_child; q != STATS_NONE;
		     q = stats_row(s, q)->next_sibling)
			if (sel->selected[q])
				push_row(sel, &cap, q, 0);
		for (uint32_t q = stats_row(s, gr)->first_child; q != STATS_NONE;
		     q = stats_row(s, q)->next_sibling)
			if (sel->selected[q] && stats_row(s, q)->kind == STATS_BUSY)
				add_scopes(st, s, sel, &cap, q, thresholds);
	}
	if (cpu) {
		size_t from = sel->len;
		push_cpu_rows(s, sel, &cap);
		for (size_t i = from, end = sel->len; i < end && !sel->failed; i++)
			if (stats_row(s, sel->rows[i])->kind != STATS_CPU)
				add_scopes(st, s, sel, &cap, sel->rows[i], thresholds);
	}
	return !sel->failed;
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                   */
/* ------------------------------------------------------------------------ */

static const char *const kind_words[] = { "frame", "busy", "wait", "idle", "scope", "pipeline",
					   "frame", "thread", "scope", "tasks", "tasks", "task",
					   "state" };

/* A grid drawn as the settings say: in their width and colours. */
static void grid_for(struct grid *gr, const struct report_settings *rs,
		     const struct glyphs *g, size_t cols, const char *const *titles,
		     const uint8_t *drop)
{
	gr->g = g;
	gr->cols = cols;
	gr->max_width = rs->width;
	gr->color = rs->color;
	for (size_t i = 0; i < cols; i++) {
		gr->titles[i] = titles[i];
		gr->drop[i] = drop[i];
	}
}

/*
 * When the columns are left out to fit the width (grid_fit): the spread
 * first (Stddev, Max frame), then the exclusive times, the counts, the
 * share; the mean, median and p95 of the time never.
 */
static const uint8_t gpu_drop[] = { 6, 0, 0, 3, 0, 4, 5, 7, 1, 2, 0 };
static const uint8_t scope_drop[] = { 8, 7, 0, 0, 0, 10, 3, 2, 9, 11, 6, 4, 5, 1, 0 };
static const uint8_t pipeline_drop[] = { 4, 3, 0, 0, 0, 6, 2, 1, 5, 0 };

/* The table of a GPU's frame time and its queues' busy, wait and idle. */
static void gpu_table(struct sbuf *out, const struct report_settings *rs,
		      const struct glyphs *g, const stats *s, const struct selection *sel,
		      size_t from, size_t to, const struct report_sink *sink)
{
	static const char *const titles[] = { "Frames", "Mean", "Median", "P90", "P95", "P99",
					       "Min", "Max", "Max frame", "Stddev", "Time" };
	struct grid gr = { 0 };
	grid_for(&gr, rs, g, 11, titles, gpu_drop);
	for (size_t i = from; i < to; i++) {
		const struct stats_row *r = stats_row(s, sel->rows[i]);
		const struct stats_summary *t = &r->time;
		grid_count(&gr, t->frames);
		grid_ms(&gr, t->mean_ns);
		grid_ms(&gr, t->median_ns);
		grid_ms(&gr, t->p90_ns);
		grid_ms(&gr, t->p95_ns);
		grid_ms(&gr, t->p99_ns);
		grid_ms(&gr, t->min_ns);
		grid_ms(&gr, t->max_ns);
		grid_count(&gr, t->max_frame);
		grid_ms(&gr, t->stddev_ns);
		struct sbuf label = { 0 };
		if (r->kind == STATS_GPU || r->kind == STATS_CPU) {
			sbuf_adds(&label, r->kind == STATS_GPU ? "GPU frame" : "CPU frame");
			/* "CPU (Game)": frames of another kind. */
			if (r->kind == STATS_CPU && r->name_len > 3)
				sbuf_add(&label, r->name + 3, r->name_len - 3);
		} else if (r->kind == STATS_THREAD) {
			sbuf_add(&label, r->name, r->name_len);
		} else {
			sbuf_addf(&label, "%s %s", r->name, kind_words[r->kind]);
		}
		if (label.failed)
			gr.failed = true;
		grid_name(&gr, stats_kind_frame_time(r->kind) ? 0 : 1, label.data ? label.data : "",
			  label.len, NULL);
		sbuf_release(&label);
	}
	grid_render(&gr, out, sink);
	grid_release(&gr);
}

/* A scope's or a pipeline's row up to its share: frames, calls a frame
 * and its time's statistics. */
static void time_cells(struct grid *gr, const struct stats_row *r)
{
	const struct stats_summary *t = &r->time;
	grid_count(gr, t->frames);
	grid_fixed(gr, 2, t->frames ? (double)r->calls / (double)t->frames : 0);
	grid_ms(gr, t->mean_ns);
	grid_ms(gr, t->median_ns);
	grid_ms(gr, t->p95_ns);
	grid_ms(gr, t->max_ns);
	grid_count(gr, t->max_frame);
	grid_ms(gr, t->stddev_ns);
	grid_bar(gr, r->share_pct);
}

/* The table of one queue's scopes, a thread's, or a timeline's tasks
 * (`what` titles the names' column). */
static void scope_table(struct sbuf *out, const struct report_settings *rs,
			const struct glyphs *g, const stats *s, const struct selection *sel,
			size_t from, size_t to, const char *what, const struct report_sink *sink)
{
	const char *const titles[] = { "Frames", "Calls", "Mean", "Median", "P95", "Max",
				       "Max frame", "Stddev", "Percent", "Mean", "Median",
				       "P95", "Max", "Stddev", what };
	static const int groups[] = { 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3 };
	struct grid gr = { .grouped = true,
			   .group_titles = { NULL, "Inclusive", "Exclusive", NULL } };
	grid_for(&gr, rs, g, 15, titles, scope_drop);
	for (size_t i = 0; i < gr.cols; i++)
		gr.group[i] = groups[i];
	for (size_t i = from; i < to; i++) {
		const struct stats_row *r = stats_row(s, sel->rows[i]);
		const struct stats_summary *e = &r->exclusive;
		time_cells(&gr, r);
		grid_ms(&gr, e->mean_ns);
		grid_ms(&gr, e->median_ns);
		grid_ms(&gr, e->p95_ns);
		grid_ms(&gr, e->max_ns);
		grid_ms(&gr, e->stddev_ns);
		grid_name(&gr, sel->levels[i] - 1, r->name, r->name_len, NULL);
	}
	grid_render(&gr, out, sink);
	grid_release(&gr);
}

/* The table of one queue's pipelines: their time is their events'
 * exclusive time. */
static void pipeline_table(struct sbuf *out, const struct report_settings *rs,
			   const struct glyphs *g, const stats *s, const struct selection *sel,
			   size_t from, size_t to, const struct report_sink *sink)
{
	static const char *const titles[] = { "Frames", "Calls", "Mean", "Median", "P95", "Max",
					       "Max frame", "Stddev", "Percent", "Pipeline" };
	struct grid gr = { 0 };
	grid_for(&gr, rs, g, 10, titles, pipeline_drop);
	for (size_t i = from; i < to; i++) {
		const struct stats_row *r = stats_row(s, sel->rows[i]);
		time_cells(&gr, r);
		grid_name(&gr, 0, r->name, r->name_len, NULL);
	}
	grid_render(&gr, out, sink);
	grid_release(&gr);
}

static void quote_list(struct sbuf *b, char *const *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbuf_addf(b, "%s'%s'", i ? ", " : "", items[i]);
}

static void spike_rule_text(struct sbuf *b, const struct stats_settings *st)
{
	if (st->spike.threshold_ns)
		sbuf_addf(b, "%.3f ms", st->spike.threshold_ns / 1e6);
	else
		sbuf_addf(b, "%gx the median", st->spike.median_factor);
}

/* "spikes: 3 frames above 18.000 ms (1.5x the median) | longest run 2
 * frames, from frame 40". */
static void spikes_line(struct sbuf *out, const struct stats_settings *st, const struct glyphs *g,
			const char *what, const struct stats_spikes *sp)
{
	sbuf_addf(out, "%s: %llu frame%s above %.3f ms", what, (unsigned long long)sp->count,
		  sp->count == 1 ? "" : "s", sp->threshold_ns / 1e6);
	if (!st->spike.threshold_ns)
		sbuf_addf(out, " (%gx the median)", st->spike.median_factor);
	if (sp->count)
		sbuf_addf(out, "%slongest run %llu frame%s, from frame %llu", g->sep,
			  (unsigned long long)sp->longest_run, sp->longest_run == 1 ? "" : "s",
			  (unsigned long long)sp->longest_run_first);
	sbuf_adds(out, "\n");
}

/*
 * The CPU's block after the GPUs': its frame times' spikes, a table of
 * them with its threads and timelines, then a table of each thread's
 * scopes and of each timeline's tasks. sel's list holds one table's rows
 * at a time. Returns as print_tables.
 */
static int print_cpu_tables(const struct stats_settings *st, const stats *s,
			    struct selection *sel, const struct glyphs *g, struct sbuf *out,
			    const struct report_sink *sink)
{
	const struct report_settings *rs = &st->report;
	size_t cap = 0;
	int result = 0;

	sel->len = 0;
	push_cpu_rows(s, sel, &cap);
	if (sel->failed || sel->len == 0)
		return sel->failed ? -1 : 0;
	size_t top = sel->len;
	uint32_t *tops = malloc(top * sizeof(*tops));
	if (!tops)
		return -1;
	memcpy(tops, sel->rows, top * sizeof(*tops));
	double cpu_mean = 0;
	sbuf_adds(out, "\nCPU\n");
	for (size_t i = 0; i < top; i++) {
		const struct stats_row *r = stats_row(s, tops[i]);
		if (r->kind != STATS_CPU)
			continue;
		if (r->name_len == 3)
			cpu_mean = r->time.mean_ns;
		if (!r->time.frames)
			continue;
		struct sbuf what = { 0 };
		sbuf_adds(&what, "spikes");
		if (r->name_len > 6) { /* "CPU (Game)" */
			sbuf_adds(&what, " of ");
			sbuf_add(&what, r->name + 5, r->name_len - 6);
			sbuf_adds(&what, " frames");
		}
		spikes_line(out, st, g, what.data ? what.data : "spikes", &r->spikes);
		sbuf_release(&what);
	}
	gpu_table(out, rs, g, s, sel, 0, sel->len, sink);
	result = sbuf_emit(sink, out);

	for (size_t i = 0; i < top && result == 0; i++) {
		const struct stats_row *r = stats_row(s, tops[i]);
		if (r->kind == STATS_CPU)
			continue;
		bool timeline = r->kind == STATS_TIMELINE;
		sel->len = 0;
		sel->hidden = 0;
		add_scopes(st, s, sel, &cap, tops[i], true);
		if (sel->failed)
			break;
		sbuf_addf(out, "\n%s%s", timeline ? "Tasks" : "CPU", g->sep);
		text_add_name(out, g, r->name, r->name_len);
		sbuf_addf(out, "\npercent of the CPU frame time over the run (mean %.3f ms a frame)",
			  cpu_mean / 1e6);
		if (rs->threshold_pct > 0)
			sbuf_addf(out, "%sthreshold %g%% (%zu row%s hidden)", g->sep, rs->threshold_pct,
				  sel->hidden, sel->hidden == 1 ? "" : "s");
		sbuf_adds(out, "\n");
		if (sel->len == 0 && rs->root_count)
			sbuf_addf(out, "No %s matches the root filter.\n",
				  timeline ? "task on this timeline" : "scope on this thread");
		else if (sel->len == 0)
			sbuf_addf(out, "No %s.\n", timeline ? "task on this timeline" : "scope on this thread");
		else
			scope_table(out, rs, g, s, sel, 0, sel->len, timeline ? "Task" : "Scope",
				    sink);
		result = sbuf_emit(sink, out);
	}
	free(tops);
	return sel->failed ? -1 : result;
}

static int print_tables(const struct stats_settings *st, const struct capture_meta *meta,
			const stats *s, const char *file, struct selection *sel,
			const struct report_sink *sink)
{
	const struct report_settings *rs = &st->report;
	const struct glyphs *g = grid_glyphs(rs);
	struct sbuf out = { 0 };
	size_t frames = stats_frame_count(s);
	int result = 0;

	sbuf_addf(&out, "Statistics of %zu frame%s", frames, frames == 1 ? "" : "s");
	if (frames)
		sbuf_addf(&out, " (%llu to %llu)", (unsigned long long)stats_frame_number(s, 0),
			  (unsigned long long)stats_frame_number(s, frames - 1));
	sbuf_addf(&out, " of '%s'%stimes in ms%sspikes above ", file, g->sep, g->sep);
	spike_rule_text(&out, st);
	if (rs->root_count) {
		sbuf_addf(&out, "%sroot ", g->sep);
		quote_list(&out, rs->roots, rs->root_count);
		if (rs->ignore_case)
			sbuf_adds(&out, " ignoring case");
	}
	if (rs->max_depth >= 0)
		sbuf_addf(&out, "%smax depth %d", g->sep, rs->max_depth);
	if (st->sort != STATS_SORT_CHRONO) {
		static const char *const sorts[] = { "chrono", "time", "p95", "max" };
		sbuf_addf(&out, "%ssorted by %s", g->sep, sorts[st->sort]);
	}
	if (rs->by == BY_PIPELINE)
		sbuf_addf(&out, "%sby pipeline", g->sep);
	sbuf_adds(&out, "\n");
	vitals_text(&out, st, meta, s, g);

	/* Per GPU: its frame time and its queues, then each queue's scopes.
	 * sel's list holds one table's rows at a time. */
	for (uint32_t gi = 0; gi < meta->gpu_count && result == 0; gi++) {
		uint32_t gr = stats_gpu_row(s, gi);
		if (gr == STATS_NONE || !sel->selected[gr])
			continue;
		const struct stats_row *r = stats_row(s, gr);
		const struct capture_gpu *cg = &meta->gpus[gi];
		size_t cap = sel->len = 0;
		sbuf_addf(&out, "\nGPU %u (", gi);
		text_add_name(&out, g, cg->name, strlen(cg->name));
		sbuf_adds(&out, ")\n");
		if (r->time.frames)
			spikes_line(&out, st, g, "spikes", &r->spikes);
		else
			sbuf_adds(&out, "no busy time in any frame\n");
		push_row(sel, &cap, gr, 0);
		for (uint32_t q = r->first_child; q != STATS_NONE; q = stats_row(s, q)->next_sibling)
			if (sel->selected[q])
				push_row(sel, &cap, q, 0);
		if (sel->failed)
			break;
		gpu_table(&out, rs, g, s, sel, 0, sel->len, sink);
		result = sbuf_emit(sink, &out);

		for (uint32_t q = r->first_child; q != STATS_NONE && result == 0;
		     q = stats_row(s, q)->next_sibling) {
			const struct stats_row *busy = stats_row(s, q);
			if (!sel->selected[q] || busy->kind != STATS_BUSY)
				continue;
			sel->len = 0;
			sel->hidden = 0;
			add_scopes(st, s, sel, &cap, q, true);
			if (sel->failed)
				break;
			sbuf_addf(&out, "\nGPU %u (", gi);
			text_add_name(&out, g, cg->name, strlen(cg->name));
			sbuf_addf(&out, ")%s", g->sep);
			text_add_name(&out, g, busy->name, busy->name_len);
			sbuf_adds(&out, "\n");
			sbuf_addf(&out, "percent of busy + wait over the run (mean %.3f ms a frame)",
				  (busy->time.mean_ns + stats_row(s, q + 1)->time.mean_ns) / 1e6);
			if (rs->threshold_pct > 0)
				sbuf_addf(&out, "%sthreshold %g%% (%zu row%s hidden)", g->sep,
					  rs->threshold_pct, sel->hidden, sel->hidden == 1 ? "" : "s");
			sbuf_adds(&out, "\n");
			if (rs->by == BY_PIPELINE && sel->len)
				pipeline_table(&out, rs, g, s, sel, 0, sel->len, sink);
			else if (rs->by == BY_PIPELINE && !busy->events)
				sbuf_adds(&out, "No event on this queue: draws and dispatches are "
					  "recorded in runs at detail 3.\n");
			else if (rs->by == BY_PIPELINE)
				sbuf_adds(&out, "No draw or dispatch on this queue to show.\n");
			else if (sel->len == 0 && rs->root_count)
				sbuf_adds(&out, "No scope on this queue matches the root filter.\n");
			else if (sel->len == 0 && busy->events)
				/* A program without debug labels, through the
				 * layer at detail 3: its draws are all there is. */
				sbuf_addf(&out, "No scope on this queue: only %llu events over the "
					  "run (draws, dispatches, copies, render passes), which "
					  "statistics do not break out; `crumbs report --frame N` "
					  "shows them.\n", (unsigned long long)busy->events);
			else if (sel->len == 0)
				sbuf_adds(&out, "No scope on this queue.\n");
			else
				scope_table(&out, rs, g, s, sel, 0, sel->len, "Scope", sink);
			result = sbuf_emit(sink, &out);
		}
	}
	if (result == 0 && !sel->failed && shows_cpu(st, s))
		result = print_cpu_tables(st, s, sel, g, &out, sink);
	else if (st->cpu_only && frames)
		sbuf_adds(&out, "\nNo CPU thread, task or frame of another kind in these frames.\n");
	if (sel->failed)
		result = -1;
	if (frames == 0)
		sbuf_adds(&out, "\nNo frames.\n");
	if (result == 0)
		result = sbuf_emit(sink, &out);
	sbuf_release(&out);
	return result;
}

/* ------------------------------------------------------------------------ */
/* CSV and JSON                                                             */
/* ------------------------------------------------------------------------ */

static void csv_ms(struct sbuf *b, double ns)
{
	sbuf_addf(b, ",%.6f", ns / 1e6);
}

static void csv_summary(struct sbuf *b, const struct stats_summary *t, bool all)
{
	csv_ms(b, t->mean_ns);
	csv_ms(b, t->median_ns);
	csv_ms(b, t->p90_ns);
	csv_ms(b, t->p95_ns);
	csv_ms(b, t->p99_ns);
	csv_ms(b, t->min_ns);
	csv_ms(b, t->max_ns);
	if (all)
		sbuf_addf(b, ",%llu", (unsigned long long)t->max_frame);
	csv_ms(b, t->stddev_ns);
}

/* The lines of b from `from` on, each ended by `tail` (more empty
 * fields). */
static void csv_lines_tail(struct sbuf *b, size_t from, const char *tail)
{
	struct sbuf t = { 0 };
	if (from >= b->len)
		return;
	for (size_t i = from; i < b->len; i++) {
		if (b->data[i] == '\n')
			sbuf_adds(&t, tail);
		sbuf_add(&t, b->data + i, 1);
	}
	b->len = from;
	sbuf_add(b, t.data ? t.data : "", t.len);
	if (t.failed)
		b->failed = true;
	sbuf_release(&t);
}

static int print_csv(const struct stats_settings *st, const stats *s,
		     const struct capture_meta *meta, const struct selection *sel,
		     struct counter_runs *counters, const struct report_sink *sink)
{
	struct sbuf b = { 0 }, path = { 0 };
	int result = 0;
	/* --counters: four columns more, which the rows of times leave
	 * empty. */
	const char *tail = counters ? stats_counters_csv_empty : "";
	char present_tail[32];
	snprintf(present_tail, sizeof(present_tail), "%s%s", vitals_csv_empty, tail);

	sbuf_adds(&b, "kind,gpu,queue,path,depth,frames,calls_per_frame,"
		      "mean_ms,median_ms,p90_ms,p95_ms,p99_ms,min_ms,max_ms,max_frame,stddev_ms,"
		      "excl_mean_ms,excl_median_ms,excl_p90_ms,excl_p95_ms,excl_p99_ms,excl_min_ms,"
		      "excl_max_ms,excl_stddev_ms,share_pct,"
		      "spike_threshold_ms,spikes,longest_spike_run,longest_spike_run_first");
	sbuf_adds(&b, vitals_csv_columns);
	if (counters)
		sbuf_adds(&b, stats_counters_csv_columns);
	sbuf_adds(&b, "\n");
	for (size_t i = 0; i < sel->len && result == 0; i++) {
		const struct stats_row *r = stats_row(s, sel->rows[i]);
		sbuf_addf(&b, "%s,", stats_kind_name(r->kind));
		if (r->gpu != STATS_NONE)
			sbuf_addf(&b, "%u", r->gpu);
		sbuf_adds(&b, ",");
		if (r->queue != STATS_NONE && r->queue < meta->queue_count)
			csv_field(&b, meta->queues[r->queue].name, strlen(meta->queues[r->queue].name));
		sbuf_adds(&b, ",");
		path.len = 0;
		stats_row_path(s, sel->rows[i], &path);
		if (path.failed)
			b.failed = true;
		csv_field(&b, path.data ? path.data : "", path.len);
		sbuf_addf(&b, ",%u,%llu,", r->depth, (unsigned long long)r->time.frames);
		if (named_kind(r->kind) && r->time.frames)
			sbuf_addf(&b, "%.6f", (double)r->calls / (double)r->time.frames);
		csv_summary(&b, &r->time, true);
		if (named_kind(r->kind)) {
			csv_summary(&b, &r->exclusive, false);
			sbuf_addf(&b, ",%.6f", r->share_pct);
		} else {
			sbuf_adds(&b, ",,,,,,,,,");
		}
		if (stats_kind_frame_time(r->kind))
			sbuf_addf(&b, ",%.6f,%llu,%llu,%llu", r->spikes.threshold_ns / 1e6,
				  (unsigned long long)r->spikes.count,
				  (unsigned long long)r->spikes.longest_run,
				  (unsigned long long)r->spikes.longest_run_first);
		else
			sbuf_adds(&b, ",,,,");
		sbuf_adds(&b, vitals_csv_empty);
		sbuf_adds(&b, tail);
		sbuf_adds(&b, "\n");
		if (b.len > 60000)
			result = sbuf_emit(sink, &b);
	}
	stats_present_csv(&b, stats_presents(s), present_tail);
	if (result == 0) {
		size_t from = b.len;
		vitals_csv(&b, st, s);
		if (counters)
			csv_lines_tail(&b, from, tail);
	}
	if (result == 0 && counters)
		result = stats_counters_csv(&b, &st->report, meta, counters, sink);
	if (result == 0)
		result = sbuf_emit(sink, &b);
	sbuf_release(&b);
	sbuf_release(&path);
	return result;
}

static void json_summary(struct sbuf *b, const char *key, const struct stats_summary *t)
{
	sbuf_addf(b, ",\"%s\":{\"mean_ns\":%.3f,\"median_ns\":%u,\"p90_ns\":%u,\"p95_ns\":%u,"
		     "\"p99_ns\":%u,\"min_ns\":%u,\"min_frame\":%llu,\"max_ns\":%u,\"max_frame\":%llu,"
		     "\"stddev_ns\":%.3f}",
		  key, t->mean_ns, t->median_ns, t->p90_ns, t->p95_ns, t->p99_ns, t->min_ns,
		  (unsigned long long)t->min_frame, t->max_ns, (unsigned long long)t->max_frame,
		  t->stddev_ns);
}

static void json_values(struct sbuf *b, const char *key, const stats *s, uint32_t row,
			bool exclusive)
{
	size_t n = stats_frame_count(s);
	sbuf_addf(b, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++) {
		uint32_t v = stats_value(s, row, i, exclusive);
		if (v == STATS_ABSENT)
			sbuf_addf(b, "%snull", i ? "," : "");
		else
			sbuf_addf(b, "%s%u", i ? "," : "", v);
	}
	sbuf_adds(b, "]");
}

static const char *const stat_names[] = { "mean", "median", "p90", "p95", "p99", "max" };

static void json_budgets(struct sbuf *b, const struct stats_budget *bu, const stats *s);

static int print_json(const struct stats_settings *st, const struct capture_meta *meta,
		      const stats *s, const char *file, const struct selection *sel,
		      const struct stats_budget *bu, struct counter_runs *counters,
		      const struct report_sink *sink)
{
	struct sbuf b = { 0 }, path = { 0 };
	size_t frames = stats_frame_count(s);
	int result = 0;

	sbuf_adds(&b, "{\"schema\":1,\"file\":");
	json_string(&b, file, strlen(file));
	sbuf_addf(&b, ",\"frames\":{\"count\":%zu", frames);
	if (frames)
		sbuf_addf(&b, ",\"first\":%llu,\"last\":%llu",
			  (unsigned long long)stats_frame_number(s, 0),
			  (unsigned long long)stats_frame_number(s, frames - 1));
	if (st->per_frame) {
		sbuf_adds(&b, ",\"numbers\":[");
		for (size_t i = 0; i < frames; i++) {
			sbuf_addf(&b, "%s%llu", i ? "," : "", (unsigned long long)stats_frame_number(s, i));
			if (b.len > 60000 && (result = sbuf_emit(sink, &b)) != 0)
				goto out;
		}
		sbuf_adds(&b, "]");
	}
	sbuf_adds(&b, "},\"spike\":");
	if (st->spike.threshold_ns)
		sbuf_addf(&b, "{\"threshold_ns\":%u}", st->spike.threshold_ns);
	else
		sbuf_addf(&b, "{\"median_factor\":%g}", st->spike.median_factor);
	sbuf_adds(&b, ",\"gpus\":[");
	for (uint32_t g = 0; g < meta->gpu_count; g++) {
		sbuf_addf(&b, "%s{\"gpu\":%u,\"name\":", g ? "," : "", g);
		json_string(&b, meta->gpus[g].name, strlen(meta->gpus[g].name));
		sbuf_adds(&b, "}");
	}
	sbuf_adds(&b, "]");
	vitals_json(&b, st, meta, s);
	stats_present_json(&b, stats_presents(s));
	sbuf_adds(&b, ",\"rows\":[");
	for (size_t i = 0; i < sel->len; i++) {
		const struct stats_row *r = stats_row(s, sel->rows[i]);
		sbuf_addf(&b, "%s\n{\"kind\":\"%s\",\"gpu\":", i ? "," : "",
			  stats_kind_name(r->kind));
		if (r->gpu != STATS_NONE)
			sbuf_addf(&b, "%u", r->gpu);
		else
			sbuf_adds(&b, "null");
		sbuf_adds(&b, ",\"queue\":");
		if (r->queue != STATS_NONE && r->queue < meta->queue_count)
			json_string(&b, meta->queues[r->queue].name, strlen(meta->queues[r->queue].name));
		else
			sbuf_adds(&b, "null");
		sbuf_adds(&b, ",\"path\":");
		path.len = 0;
		stats_row_path(s, sel->rows[i], &path);
		if (path.failed)
			b.failed = true;
		json_string(&b, path.data ? path.data : "", path.len);
		sbuf_adds(&b, ",\"name\":");
		json_string(&b, r->name, r->name_len);
		sbuf_addf(&b, ",\"depth\":%u,\"frames\":%llu", r->depth, (unsigned long long)r->time.frames);
		if (named_kind(r->kind))
			sbuf_addf(&b, ",\"calls\":%llu,\"calls_per_frame\":%.6f",
				  (unsigned long long)r->calls,
				  r->time.frames ? (double)r->calls / (double)r->time.frames : 0);
		json_summary(&b, "time", &r->time);
		if (named_kind(r->kind)) {
			json_summary(&b, "exclusive", &r->exclusive);
			sbuf_addf(&b, ",\"share_pct\":%.6f", r->share_pct);
		}
		if (stats_kind_frame_time(r->kind))
			sbuf_addf(&b, ",\"spikes\":{\"threshold_ns\":%u,\"count\":%llu,"
				      "\"longest_run\":%llu,\"longest_run_first\":%llu}",
				  r->spikes.threshold_ns, (unsigned long long)r->spikes.count,
				  (unsigned long long)r->spikes.longest_run,
				  (unsigned long long)r->spikes.longest_run_first);
		if (st->per_frame) {
			json_values(&b, "values_ns", s, sel->rows[i], false);
			if (named_kind(r->kind))
				json_values(&b, "exclusive_values_ns", s, sel->rows[i], true);
		}
		sbuf_adds(&b, "}");
		if (b.len > 60000 && (result = sbuf_emit(sink, &b)) != 0)
			goto out;
	}
	sbuf_adds(&b, "\n]");
	if (bu)
		json_budgets(&b, bu, s);
	if (counters && (result = stats_counters_json(&b, &st->report, meta, counters, sink)) != 0)
		goto out;
	sbuf_adds(&b, "}\n");
	result = sbuf_emit(sink, &b);
out:
	sbuf_release(&b);
	sbuf_release(&path);
	return result;
}

int stats_print(const struct stats_settings *st, const struct capture_meta *meta,
		const stats *s, const char *file, const struct stats_budget *b,
		const struct report_sink *sink)
{
	return stats_print_with_counters(st, meta, s, file, b, NULL, sink);
}

int stats_print_with_counters(const struct stats_settings *st, const struct capture_meta *meta,
			      const stats *s, const char *file, const struct stats_budget *b,
			      struct counter_runs *counters, const struct report_sink *sink)
{
	struct selection sel = { 0 };
	int result = -1;

	if (st->format == STATS_FORMAT_MARKDOWN)
		return stats_print_markdown(st, meta, s, file, counters, sink);
	if (st->format == STATS_FORMAT_TABLE) {
		if (select_rows(st, s, &sel))
			result = print_tables(st, meta, s, file, &sel, sink);
	} else if (selection_build(st, s, &sel, true)) {
		if (st->format == STATS_FORMAT_CSV)
			result = print_csv(st, s, meta, &sel, counters, sink);
		else
			result = print_json(st, meta, s, file, &sel, b, counters, sink);
	}
	selection_release(&sel);
	return result;
}

/* ------------------------------------------------------------------------ */
/* Budgets                                                                  */
/* ------------------------------------------------------------------------ */

struct budget_match {
	uint32_t row;
	uint32_t value_ns;
};

struct budget_line {
	unsigned line;
	char *pattern;
	unsigned stat;          /* index into stat_names */
	uint32_t limit_ns;
	struct report_settings match; /* the pattern, compiled as a root */
	/* A pattern without *, ? or [...] names rows exactly: its hash,
	 * of the name folded when case is ignored, finds them. */
	bool literal;
	uint64_t hash;
	struct budget_match *matches;
	size_t match_count;
	bool exceeded;
	/* A line of the presentation (stats_present_budget): 1 with its
	 * value, -1 when the run has none, 0 for a line of rows. */
	int present;
	uint32_t present_value;
};

/* A line of video memory: PATTERN high|growth LIMIT with a unit of
 * bytes, matched against each heap's name, "GPU 0 heap 1". */
struct memory_budget_match {
	uint32_t heap;          /* in stats_memory's heaps */
	int64_t value;          /* bytes */
};
struct memory_budget_line {
	unsigned line;
	char *pattern;
	bool growth;            /* else the high-water */
	int64_t limit;          /* bytes */
	struct report_settings match;
	struct memory_budget_match *matches;
	size_t match_count;
	bool exceeded;
};

struct stats_budget {
	char *name;
	struct budget_line *lines;
	size_t count;
	bool ignore_case;
	struct memory_budget_line *memory; /* apart: bytes, not times */
	size_t memory_count;
};

/* Lines with wildcards are matched against every row, so few are taken:
 * the rest of a file names its rows exactly, which costs no more for a
 * thousand lines than for one. */
#define BUDGET_MAX_WILDCARDS 256

void stats_budget_free(struct stats_budget *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->count; i++) {
		report_settings_release(&b->lines[i].match);
		free(b->lines[i].matches);
	}
	free(b->lines);
	for (size_t i = 0; i < b->memory_count; i++) {
		report_settings_release(&b->memory[i].match);
		free(b->memory[i].matches);
	}
	free(b->memory);
	free(b->name);
	free(b);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The last whitespace-separated word of line[0..*len), which shrinks to
 * what is before it. */
static const char *last_word(const char *line, size_t *len, size_t *word_len)
{
	size_t end = *len;
	while (end > 0 && is_blank(line[end - 1]))
		end--;
	size_t start = end;
	while (start > 0 && !is_blank(line[start - 1]))
		start--;
	*word_len = end - start;
	*len = start;
	return line + start;
}

/* The hash of a label or name as budgets look rows up: over its bytes,
 * folded when case is ignored, continuing from `h` so that a path's is
 * its parent's continued. */
#define BUDGET_HASH_START 0x84222325cbf29ce4ull

static uint64_t budget_hash(uint64_t h, const char *s, size_t len, bool ignore_case)
{
	struct sbuf folded = { 0 };
	if (ignore_case) {
		text_fold_case(&folded, s, len);
		if (!folded.failed) {
			s = folded.data ? folded.data : "";
			len = folded.len;
		}
	}
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	sbuf_release(&folded);
	return h;
}

/* ------------------------------------------------------------------------ */
/* Budgets of video memory                                                  */
/* ------------------------------------------------------------------------ */

/* 1 for growth, 0 for high, -1 for a word that is neither. */
static int memory_statistic(const char *w, size_t len)
{
	if (len == 6 && memcmp(w, "growth", 6) == 0)
		return 1;
	return len == 4 && memcmp(w, "high", 4) == 0 ? 0 : -1;
}

/* "512MiB", "1.5 GiB" (one word: "1.5GiB"), "0B": bytes, from 0 to 2^62. */
static int parse_bytes(const char *v, int64_t *out)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "B", 1 }, { "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
		{ "TiB", 1099511627776.0 },
	};
	double x;
	const char *end = read_double(v, &x);
	if (!end || !isfinite(x) || x < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0 && x * units[i].scale <= 4611686018427387904.0) {
			*out = (int64_t)llround(x * units[i].scale);
			return 0;
		}
	return -1;
}

static enum crumbs_result memory_line_parse(struct stats_budget *b, const char *name,
					    unsigned number, const char *pattern,
					    size_t pattern_len, const char *stat, size_t stat_len,
					    const char *limit, size_t limit_len, char *err,
					    size_t err_size)
{
	char limit_text[64];
	int64_t bytes;
	snprintf(limit_text, sizeof(limit_text), "%.*s", (int)(limit_len < 63 ? limit_len : 63), limit);
	if (limit_len > 63 || parse_bytes(limit_text, &bytes) != 0) {
		snprintf(err, err_size, "%s:%u: '%s' is not a size in bytes (B, KiB, MiB, GiB or TiB "
			 "right after the number: 512MiB)", name, number, limit_text);
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	}
	struct memory_budget_line *all = realloc(b->memory, (b->memory_count + 1) * sizeof(*all));
	if (!all)
		goto oom;
	b->memory = all;
	struct memory_budget_line *ml = &b->memory[b->memory_count++];
	memset(ml, 0, sizeof(*ml));
	report_settings_init(&ml->match);
	ml->line = number;
	ml->growth = memory_statistic(stat, stat_len) == 1;
	ml->limit = bytes;
	ml->match.ignore_case = b->ignore_case;
	if (!(ml->match.roots = malloc(sizeof(char *))) || !(ml->pattern = malloc(pattern_len + 1)))
		goto oom;
	memcpy(ml->pattern, pattern, pattern_len);
	ml->pattern[pattern_len] = '\0';
	ml->match.roots[0] = ml->pattern;
	ml->match.root_count = 1;
	char why[200];
	if (report_settings_prepare(&ml->match, why, sizeof(why)) != CRUMBS_OK) {
		snprintf(err, err_size, "%s:%u: %s", name, number, why);
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	}
	return CRUMBS_OK;
oom:
	snprintf(err, err_size, "out of memory");
	return CRUMBS_ERROR_OUT_OF_MEMORY;
}

/* The heap's name as budget lines match it: "GPU 0 heap 1". */
static void memory_heap_name(struct sbuf *b, const struct memory_heap_stats *h)
{
	b->len = 0;
	sbuf_addf(b, "GPU %u heap %u", h->gpu, h->heap);
}

/* Each memory line's heaps (those --gpu shows), and how many lines are
 * exceeded or match none; or SIZE_MAX when out of memory. */
static size_t memory_budget_check(struct stats_budget *b, const struct stats_settings *st,
				  const stats *s)
{
	const struct memory_stats *m = stats_memory(s);
	struct sbuf label = { 0 };
	size_t failed = 0;
	bool ok = true;
	for (size_t i = 0; i < b->memory_count; i++) {
		struct memory_budget_line *ml = &b->memory[i];
		free(ml->matches);
		ml->matches = NULL;
		ml->match_count = 0;
		ml->exceeded = false;
		for (uint32_t k = 0; ok && k < m->count; k++) {
			const struct memory_heap_stats *h = &m->heaps[k];
			const struct memory_series *se = memory_heap_series(h);
			if (!se || (st->report.gpu >= 0 && (uint32_t)st->report.gpu != h->gpu))
				continue;
			memory_heap_name(&label, h);
			if (!label.data || !filter_match_root(ml->match.filter, label.data, label.len))
				continue;
			struct memory_budget_match *more =
				realloc(ml->matches, (ml->match_count + 1) * sizeof(*more));
			if (!more) {
				ok = false;
				break;
			}
			ml->matches = more;
			int64_t v = ml->growth ? memory_series_growth(se)
					       : (int64_t)(se->high > INT64_MAX ? INT64_MAX : se->high);
			ml->matches[ml->match_count++] = (struct memory_budget_match){ k, v };
			if (v > ml->limit)
				ml->exceeded = true;
		}
		if (ml->exceeded || ml->match_count == 0)
			failed++;
	}
	ok = ok && !label.failed;
	sbuf_release(&label);
	return ok ? failed : SIZE_MAX;
}

/* The memory lines of b from *next on that come before file line
 * `before` (UINT_MAX: all the rest), in the text of stats_budget_print. */
static void memory_budget_print(const struct stats_budget *b, const struct stats_settings *st,
				const stats *s, struct sbuf *out, size_t *next, unsigned before,
				size_t *exceeded, size_t *unmatched)
{
	const struct memory_stats *m = stats_memory(s);
	bool color = st->report.color;
	struct sbuf label = { 0 };
	for (; *next < b->memory_count && b->memory[*next].line < before; (*next)++) {
		const struct memory_budget_line *ml = &b->memory[*next];
		sbuf_addf(out, "line %u: %s %s <= ", ml->line, ml->pattern, ml->growth ? "growth" : "high");
		text_bytes(out, (uint64_t)ml->limit);
		sbuf_adds(out, "\n");
		if (ml->match_count == 0) {
			sbuf_adds(out, "  ");
			text_colored(out, color, SGR_BAD, "FAILED", 6);
			sbuf_adds(out, "    matches no heap\n");
			(*unmatched)++;
		}
		for (size_t k = 0; k < ml->match_count; k++) {
			bool over = ml->matches[k].value > ml->limit;
			sbuf_adds(out, "  ");
			text_colored(out, color, over ? SGR_BAD : SGR_GOOD, over ? "EXCEEDED" : "ok",
				     over ? 8 : 2);
			sbuf_addf(out, "%*s  ", over ? 0 : 6, "");
			if (ml->growth)
				vitals_signed_bytes(out, (double)ml->matches[k].value);
			else
				text_bytes(out, (uint64_t)ml->matches[k].value);
			memory_heap_name(&label, &m->heaps[ml->matches[k].heap]);
			sbuf_addf(out, "  %s\n", label.data ? label.data : "");
		}
		if (ml->exceeded)
			(*exceeded)++;
	}
	if (label.failed)
		out->failed = true;
	sbuf_release(&label);
}

/* As memory_budget_print, in the JSON of json_budgets; *first: no line
 * written yet. */
static void memory_budget_json(struct sbuf *b, const struct stats_budget *bu, const stats *s,
			       size_t *next, unsigned before, bool *first)
{
	const struct memory_stats *m = stats_memory(s);
	struct sbuf label = { 0 };
	for (; *next < bu->memory_count && bu->memory[*next].line < before; (*next)++) {
		const struct memory_budget_line *ml = &bu->memory[*next];
		sbuf_addf(b, "%s\n{\"line\":%u,\"pattern\":", *first ? "" : ",", ml->line);
		*first = false;
		json_string(b, ml->pattern, strlen(ml->pattern));
		sbuf_addf(b, ",\"statistic\":\"%s\",\"limit_bytes\":%lld,\"result\":\"%s\",\"matches\":[",
			  ml->growth ? "growth" : "high", (long long)ml->limit,
			  ml->match_count == 0 ? "unmatched" : ml->exceeded ? "exceeded" : "ok");
		for (size_t k = 0; k < ml->match_count; k++) {
			memory_heap_name(&label, &m->heaps[ml->matches[k].heap]);
			sbuf_addf(b, "%s{\"kind\":\"memory\",\"path\":", k ? "," : "");
			json_string(b, label.data ? label.data : "", label.len);
			sbuf_addf(b, ",\"value_bytes\":%lld,\"ok\":%s}", (long long)ml->matches[k].value,
				  ml->matches[k].value > ml->limit ? "false" : "true");
		}
		sbuf_adds(b, "]}");
	}
	if (label.failed)
		b->failed = true;
	sbuf_release(&label);
}

enum crumbs_result stats_budget_parse(const char *name, const char *text, size_t len,
				      bool ignore_case, struct stats_budget **out,
				      char *err, size_t err_size)
{
	struct stats_budget *b = calloc(1, sizeof(*b));
	size_t cap = 0;
	unsigned number = 0;
	enum crumbs_result r = CRUMBS_OK;

	size_t wildcards = 0;
	struct sbuf literal = { 0 };

	if (!b || !(b->name = malloc(strlen(name) + 1)))
		goto oom;
	memcpy(b->name, name, strlen(name) + 1);
	b->ignore_case = ignore_case;
	for (size_t pos = 0; pos < len;) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - line) : len - pos;
		pos += line_len + (nl ? 1 : 0);
		number++;

		size_t start = 0;
		while (start < line_len && is_blank(line[start]))
			start++;
		if (start == line_len || line[start] == '#')
			continue;
		if (memchr(line, '\0', line_len)) {
			snprintf(err, err_size, "%s:%u: a NUL byte", name, number);
			r = CRUMBS_ERROR_INVALID_ARGUMENT;
			goto fail;
		}
		size_t rest = line_len, limit_len, stat_len;
		const char *limit = last_word(line, &rest, &limit_len);
		const char *stat = last_word(line, &rest, &stat_len);
		while (rest > start && is_blank(line[rest - 1]))
			rest--;
		if (rest <= start || stat_len == 0) {
			snprintf(err, err_size, "%s:%u: expected PATTERN STATISTIC LIMIT_MS", name, number);
			r = CRUMBS_ERROR_INVALID_ARGUMENT;
			goto fail;
		}
		if (memory_statistic(stat, stat_len) >= 0) {
			r = memory_line_parse(b, name, number, line + start, rest - start, stat, stat_len,
					      limit, limit_len, err, err_size);
			if (r != CRUMBS_OK)
				goto fail;
			continue;
		}
		unsigned which = 0;
		while (which < 6 && !(strlen(stat_names[which]) == stat_len &&
				      memcmp(stat, stat_names[which], stat_len) == 0))
			which++;
		unsigned last = 0;
		while (last < 6 && !(strlen(stat_names[last]) == limit_len &&
				     memcmp(limit, stat_names[last], limit_len) == 0))
			last++;
		if (which == 6 && last < 6) {
			snprintf(err, err_size, "%s:%u: no limit after '%s' (expected PATTERN STATISTIC "
				 "LIMIT_MS)", name, number, stat_names[last]);
			r = CRUMBS_ERROR_INVALID_ARGUMENT;
			goto fail;
		}
		if (which == 6) {
			snprintf(err, err_size, "%s:%u: '%.*s' is not a statistic (mean, median, p90, p95, "
				 "p99 or max; high or growth for memory)", name, number,
				 (int)(stat_len < 40 ? stat_len : 40), stat);
			r = CRUMBS_ERROR_INVALID_ARGUMENT;
			goto fail;
		}
		char limit_text[64];
		uint32_t limit_ns;
		snprintf(limit_text, sizeof(limit_text), "%.*s", (int)(limit_len < 63 ? limit_len : 63), limit);
		if (limit_len > 63 || parse_ms(limit_text, &limit_ns) != 0) {
			snprintf(err, err_size, "%s:%u: '%s' is not a time in ms from 0 to 4294",
				 name, number, limit_text);
			r = CRUMBS_ERROR_INVALID_ARGUMENT;
			goto fail;
		}
		if (!array_room((void **)&b->lines, &cap, b->count + 1, sizeof(*b->lines)))
			goto oom;
		struct budget_line *bl = &b->lines[b->count];
		memset(bl, 0, sizeof(*bl));
		report_settings_init(&bl->match);
		b->count++;
		bl->line = number;
		bl->stat = which;
		bl->limit_ns = limit_ns;
		bl->match.ignore_case = ignore_case;
		if (!(bl->match.roots = malloc(sizeof(char *))) ||
		    !(bl->pattern = malloc(rest - start + 1)))
			goto oom;
		memcpy(bl->pattern, line + start, rest - start);
		bl->pattern[rest - start] = '\0';
		bl->match.roots[0] = bl->pattern;
		bl->match.root_count = 1;
		char why[200];
		if ((r = report_settings_prepare(&bl->match, why, sizeof(why))) != CRUMBS_OK) {
			snprintf(err, err_size, "%s:%u: %s", name, number, why);
			goto fail;
		}
		literal.len = 0;
		bl->literal = wildcard_literal(bl->pattern, &literal);
		if (bl->literal) {
			bl->hash = budget_hash(BUDGET_HASH_START, literal.data, literal.len,
					       ignore_case);
		} else if (++wildcards > BUDGET_MAX_WILDCARDS) {
			snprintf(err, err_size, "%s:%u: more than %u lines with wildcards (*, ? or "
				 "[...]); name rows exactly, or match several with one pattern",
				 name, number, BUDGET_MAX_WILDCARDS);
			r = CRUMBS_ERROR_INVALID_ARGUMENT;
			goto fail;
		} else {
			filter_compile_fast(bl->match.filter);
		}
		if (literal.failed)
			goto oom;
	}
	sbuf_release(&literal);
	*out = b;
	return CRUMBS_OK;
oom:
	snprintf(err, err_size, "out of memory");
	r = CRUMBS_ERROR_OUT_OF_MEMORY;
fail:
	sbuf_release(&literal);
	stats_budget_free(b);
	*out = NULL;
	return r;
}

static uint32_t stat_value(const struct stats_summary *t, unsigned stat)
{
	switch (stat) {
	case 0:
		return t->mean_ns >= STATS_NS_MAX ? STATS_NS_MAX : (uint32_t)llround(t->mean_ns);
	case 1:
		return t->median_ns;
	case 2:
		return t->p90_ns;
	case 3:
		return t->p95_ns;
	case 4:
		return t->p99_ns;
	default:
		return t->max_ns;
	}
}

/* The name a budget pattern sees for a row, besides a scope's own name:
 * "GPU 0", "GPU 0 / Graphics 0 busy", or a scope's full path. */
static void row_label(struct sbuf *b, const stats *s, uint32_t row)
{
	const struct stats_row *r = stats_row(s, row);
	b->len = 0;
	stats_row_path(s, row, b);
	if (queue_kind(r->kind))
		sbuf_addf(b, " %s", kind_words[r->kind]);
}

/* A row that a budget line may name, by the hash of its label or name,
 * and where it is among the rows shown. */
struct keyed_label {
	uint64_t hash;
	uint32_t at;
};

static int keyed_label_cmp(const void *pa, const void *pb)
{
	const struct keyed_label *a = pa, *b = pb;
	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	return (a->at > b->at) - (a->at < b->at);
}

/* The first of the n keys whose hash is h, or n. */
static size_t keyed_label_find(const struct keyed_label *k, size_t n, uint64_t h)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k[mid].hash < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int match_cmp(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return (a > b) - (a < b);
}

/* The positions among the shown rows that a line matches, appended. */
struct hits {
	uint32_t *at;
	size_t len;
	size_t cap;
};

static bool hits_add(struct hits *h, uint32_t at)
{
	if (!array_room((void **)&h->at, &h->cap, h->len + 1, sizeof(*h->at)))
		return false;
	h->at[h->len++] = at;
	return true;
}

/*
 * Whether line bl names the row shown at position `at`: its label ("GPU
 * 0", "GPU 0 / Graphics 0 busy", a scope's path) or a scope's own name
 * matches the line's pattern.
 */
static bool line_hits(const struct budget_line *bl, const stats *s, uint32_t row,
		      struct sbuf *label)
{
	const struct stats_row *r = stats_row(s, row);
	row_label(label, s, row);
	return (label->data && filter_match_root(bl->match.filter, label->data, label->len)) ||
	       (named_kind(r->kind) && filter_match_root(bl->match.filter, r->name, r->name_len));
}

/*
 * The rows each line matches, in time that grows with lines plus rows: a
 * line that names a row exactly finds its candidates by hash among the
 * rows' labels and names (each label's hash its parent's continued), and
 * its pattern decides; the few lines with wildcards are tried on every
 * row, whose label is made once for all of them.
 */
static bool budget_hits(struct stats_budget *b, const stats *s, const struct selection *sel,
			struct hits *hits)
{
	size_t n = stats_row_count(s);
	uint64_t *path_hash = malloc((n ? n : 1) * sizeof(*path_hash));
	struct keyed_label *keys = malloc((sel->len ? sel->len : 1) * 2 * sizeof(*keys));
	struct sbuf label = { 0 };
	size_t nk = 0;
	bool ok = path_hash && keys;

	/* Rows come parent first. */
	for (size_t i = 0; ok && i < n; i++) {
		const struct stats_row *r = stats_row(s, i);
		uint64_t h = BUDGET_HASH_START;
		if (r->parent != STATS_NONE)
			h = budget_hash(path_hash[r->parent], " / ", 3, false);
		path_hash[i] = budget_hash(h, r->name, r->name_len, b->ignore_case);
	}
	for (size_t k = 0; ok && k < sel->len; k++) {
		const struct stats_row *r = stats_row(s, sel->rows[k]);
		if (r->time.frames == 0)
			continue;
		uint64_t h = path_hash[sel->rows[k]];
		if (queue_kind(r->kind)) {
			h = budget_hash(h, " ", 1, false);
			h = budget_hash(h, kind_words[r->kind], strlen(kind_words[r->kind]),
					b->ignore_case);
		}
		keys[nk++] = (struct keyed_label){ h, (uint32_t)k };
		if (named_kind(r->kind))
			keys[nk++] = (struct keyed_label){
				budget_hash(BUDGET_HASH_START, r->name, r->name_len, b->ignore_case),
				(uint32_t)k };
	}
	if (ok && nk > 1)
		qsort(keys, nk, sizeof(*keys), keyed_label_cmp);

	for (size_t i = 0; ok && i < b->count; i++) {
		const struct budget_line *bl = &b->lines[i];
		if (!bl->literal)
			continue;
		for (size_t j = keyed_label_find(keys, nk, bl->hash);
		     ok && j < nk && keys[j].hash == bl->hash; j++)
			if (line_hits(bl, s, sel->rows[keys[j].at], &label))
				ok = hits_add(&hits[i], keys[j].at);
	}
	for (size_t k = 0; ok && k < sel->len; k++) {
		const struct stats_row *r = stats_row(s, sel->rows[k]);
		bool made = false;
		if (r->time.frames == 0)
			continue;
		for (size_t i = 0; ok && i < b->count; i++) {
			const struct budget_line *bl = &b->lines[i];
			if (bl->literal)
				continue;
			if (!made) {
				row_label(&label, s, sel->rows[k]);
				made = true;
			}
			if ((label.data && filter_match_root(bl->match.filter, label.data, label.len)) ||
			    (named_kind(r->kind) &&
			     filter_match_root(bl->match.filter, r->name, r->name_len)))
				ok = hits_add(&hits[i], (uint32_t)k);
		}
	}
	/* In the order of the rows shown, each once. */
	for (size_t i = 0; ok && i < b->count; i++) {
		struct hits *h = &hits[i];
		if (h->len < 2)
			continue; /* and qsort must not be given a NULL */
		qsort(h->at, h->len, sizeof(*h->at), match_cmp);
		size_t w = 0;
		for (size_t j = 0; j < h->len; j++)
			if (w == 0 || h->at[w - 1] != h->at[j])
				h->at[w++] = h->at[j];
		h->len = w;
	}
	ok = ok && !label.failed;
	sbuf_release(&label);
	free(path_hash);
	free(keys);
	return ok;
}

size_t stats_budget_check(struct stats_budget *b, const struct stats_settings *st,
			  const stats *s)
{
	struct selection sel = { 0 };
	size_t failed = 0;
	struct hits *hits = calloc(b->count ? b->count : 1, sizeof(*hits));
	bool ok = hits && selection_build(st, s, &sel, false) && budget_hits(b, s, &sel, hits);

	for (size_t i = 0; i < b->count; i++) {
		struct budget_line *bl = &b->lines[i];
		free(bl->matches);
		bl->matches = NULL;
		bl->match_count = 0;
		bl->exceeded = false;
		bl->present = stats_present_budget(stats_presents(s), bl->pattern, b->ignore_case,
						   bl->stat, bl->limit_ns, &bl->present_value,
						   &bl->exceeded);
		if (bl->present == -2)
			ok = false;
		if (bl->present) {
			failed += bl->present != 1 || bl->exceeded;
			continue;
		}
		if (ok && hits[i].len &&
		    !(bl->matches = malloc(hits[i].len * sizeof(*bl->matches))))
			ok = false;
		for (size_t k = 0; ok && k < hits[i].len; k++) {
			uint32_t row = sel.rows[hits[i].at[k]];
			uint32_t v = stat_value(&stats_row(s, row)->time, bl->stat);
			bl->matches[bl->match_count++] = (struct budget_match){ row, v };
			if (v > bl->limit_ns)
				bl->exceeded = true;
		}
		if (bl->exceeded || bl->match_count == 0)
			failed++;
	}
	size_t memory_failed = memory_budget_check(b, st, s);
	if (memory_failed == SIZE_MAX)
		ok = false;
	else
		failed += memory_failed;
	if (!ok)
		failed = b->count + b->memory_count ? b->count + b->memory_count : 1; /* out of memory: nothing passes unchecked */
	for (size_t i = 0; hits && i < b->count; i++)
		free(hits[i].at);
	free(hits);
	selection_release(&sel);
	return failed;
}

bool stats_budget_line(const struct stats_budget *b, size_t i, uint32_t row,
		       struct stats_budget_line *out)
{
	if (!b || i >= b->count)
		return false;
	const struct budget_line *bl = &b->lines[i];
	*out = (struct stats_budget_line){ bl->line, bl->pattern, stat_names[bl->stat],
					   bl->limit_ns, false, 0 };
	for (size_t k = 0; k < bl->match_count; k++)
		if (bl->matches[k].row == row) {
			out->matched = true;
			out->value_ns = bl->matches[k].value_ns;
		}
	return true;
}

int stats_budget_print(const struct stats_budget *b, const struct stats_settings *st,
		       const stats *s, const struct report_sink *sink)
{
	struct sbuf out = { 0 };
	struct sbuf label = { 0 };
	size_t exceeded = 0, unmatched = 0;
	const struct glyphs *g = grid_glyphs(&st->report);
	bool color = st->report.color;

	size_t memory_next = 0;
	sbuf_addf(&out, "\nBudgets of '%s':\n", b->name);
	for (size_t i = 0; i < b->count; i++) {
		const struct budget_line *bl = &b->lines[i];
		memory_budget_print(b, st, s, &out, &memory_next, bl->line, &exceeded, &unmatched);
		bool vsyncs = bl->present && strchr(bl->pattern, '-');
		if (vsyncs)
			sbuf_addf(&out, "line %u: %s <= %g\n", bl->line, bl->pattern,
				  bl->limit_ns / 1e6);
		else
			sbuf_addf(&out, "line %u: %s %s <= %.3f ms\n", bl->line, bl->pattern,
				  stat_names[bl->stat], bl->limit_ns / 1e6);
		if (bl->present) {
			/* The presentation's: its value, or why it has none. */
			sbuf_adds(&out, "  ");
			if (bl->present != 1) {
				text_colored(&out, color, SGR_BAD, "FAILED", 6);
				sbuf_addf(&out, "    not known: %s\n", vsyncs ?
					  "no v-sync was counted (when frames were shown, or the "
					  "refresh period, is not known)" : "no present interval");
				unmatched++;
				continue;
			}
			text_colored(&out, color, bl->exceeded ? SGR_BAD : SGR_GOOD,
				     bl->exceeded ? "EXCEEDED" : "ok", bl->exceeded ? 8 : 2);
			if (vsyncs)
				sbuf_addf(&out, "%*s  %10.0f     %s\n", bl->exceeded ? 0 : 6, "",
					  bl->present_value / 1e6, bl->pattern);
			else
				sbuf_addf(&out, "%*s  %10.3f ms  %s\n", bl->exceeded ? 0 : 6, "",
					  bl->present_value / 1e6, bl->pattern);
			if (bl->exceeded)
				exceeded++;
			continue;
		}
		if (bl->match_count == 0) {
			sbuf_adds(&out, "  ");
			text_colored(&out, color, SGR_BAD, "FAILED", 6);
			sbuf_adds(&out, "    matches no row\n");
			unmatched++;
		}
		for (size_t k = 0; k < bl->match_count; k++) {
			row_label(&label, s, bl->matches[k].row);
			bool over = bl->matches[k].value_ns > bl->limit_ns;
			sbuf_adds(&out, "  ");
			text_colored(&out, color, over ? SGR_BAD : SGR_GOOD, over ? "EXCEEDED" : "ok",
				     over ? 8 : 2);
			sbuf_addf(&out, "%*s  %10.3f ms  ", over ? 0 : 6, "",
				  bl->matches[k].value_ns / 1e6);
			text_add_name(&out, g, label.data ? label.data : "", label.len);
			sbuf_adds(&out, "\n");
		}
		if (bl->exceeded)
			exceeded++;
	}
	memory_budget_print(b, st, s, &out, &memory_next, UINT_MAX, &exceeded, &unmatched);
	size_t lines = b->count + b->memory_count;
	sbuf_addf(&out, "%zu budget line%s: %zu exceeded, %zu matching no row\n", lines,
		  lines == 1 ? "" : "s", exceeded, unmatched);
	if (label.failed)
		out.failed = true;
	int result = sbuf_emit(sink, &out);
	sbuf_release(&out);
	sbuf_release(&label);
	return result;
}

static void json_budgets(struct sbuf *b, const struct stats_budget *bu, const stats *s)
{
	size_t memory_next = 0;
	bool first = true;
	sbuf_adds(b, ",\"budgets\":[");
	for (size_t i = 0; i < bu->count; i++) {
		const struct budget_line *bl = &bu->lines[i];
		memory_budget_json(b, bu, s, &memory_next, bl->line, &first);
		sbuf_addf(b, "%s\n{\"line\":%u,\"pattern\":", first ? "" : ",", bl->line);
		first = false;
		json_string(b, bl->pattern, strlen(bl->pattern));
		if (bl->present) {
			sbuf_addf(b, ",\"statistic\":\"%s\",\"limit_ns\":%u,\"result\":\"%s\","
				      "\"matches\":[",
				  stat_names[bl->stat], bl->limit_ns,
				  bl->present != 1 ? "unmatched" : bl->exceeded ? "exceeded" : "ok");
			if (bl->present == 1)
				sbuf_addf(b, "{\"kind\":\"present\",\"path\":\"%s\",\"value_ns\":%u,"
					      "\"ok\":%s}",
					  strchr(bl->pattern, '-') ? STATS_MISSED_VSYNCS :
								     STATS_PRESENT_INTERVAL,
					  bl->present_value, bl->exceeded ? "false" : "true");
			sbuf_adds(b, "]}");
			continue;
		}
		sbuf_addf(b, ",\"statistic\":\"%s\",\"limit_ns\":%u,\"result\":\"%s\",\"matches\":[",
			  stat_names[bl->stat], bl->limit_ns,
			  bl->match_count == 0 ? "unmatched" : bl->exceeded ? "exceeded" : "ok");
		for (size_t k = 0; k < bl->match_count; k++) {
			const struct stats_row *r = stats_row(s, bl->matches[k].row);
			sbuf_addf(b, "%s{\"kind\":\"%s\",\"path\":", k ? "," : "", stats_kind_name(r->kind));
			struct sbuf path = { 0 };
			stats_row_path(s, bl->matches[k].row, &path);
			if (path.failed)
				b->failed = true;
			json_string(b, path.data ? path.data : "", path.len);
			sbuf_release(&path);
			sbuf_addf(b, ",\"value_ns\":%u,\"ok\":%s}", bl->matches[k].value_ns,
				  bl->matches[k].value_ns > bl->limit_ns ? "false" : "true");
		}
		sbuf_adds(b, "]}");
	}
	memory_budget_json(b, bu, s, &memory_next, UINT_MAX, &first);
	sbuf_adds(b, "\n]");
}
