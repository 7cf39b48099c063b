/* SPDX-License-Identifier: MIT */
/*
 * plot_run.c: a run's GPU frame times as an SVG graph: per GPU every
 * frame's time by frame number, its median and p95, its spikes marked and
 * the budget limits that apply to it, its top scopes below it
 * (plot_rows.c). Memory follows the picture's width, not the run's
 * length.
 */
#include "report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Layout, in pixels. */
#define TITLE_H 52.0
#define PANEL_HEAD_H 28.0
#define PLOT_H 220.0
#define X_AXIS_H 30.0
#define PANEL_GAP 14.0
#define LEFT_W PLOT_RUN_LEFT_W
#define RIGHT_W PLOT_RUN_RIGHT_W
#define LABEL_GAP 12.0   /* between labels at the right */
#define MAX_RIGHT_LABELS 24

struct right_label {
	double y;
	const char *cls;
	char text[96];
};

struct graph {
	const struct plot_settings *p;
	const stats *s;
	uint32_t row;
	double x0, x1, y0, y1;    /* the plot area: y0 at the top */
	double top_ms;            /* the value at y0 */
	uint64_t first, last;     /* frame numbers at x0 and x1 */
	struct right_label labels[MAX_RIGHT_LABELS];
	size_t label_count;
	struct sbuf out;
};

double plot_frame_x(const struct plot_frames *a, uint64_t number)
{
	if (a->last == a->first)
		return (a->x0 + a->x1) / 2;
	return a->x0 + (double)(number - a->first) / (double)(a->last - a->first) * (a->x1 - a->x0);
}

static struct plot_frames frames_of(const struct graph *g)
{
	return (struct plot_frames){ g->x0, g->x1, g->first, g->last };
}

static double gx(const struct graph *g, uint64_t number)
{
	struct plot_frames a = frames_of(g);
	return plot_frame_x(&a, number);
}

static double gy(const struct graph *g, double ms)
{
	double y = g->y1 - ms / g->top_ms * (g->y1 - g->y0);
	return y < g->y0 ? g->y0 : y;
}

static void right_label(struct graph *g, double y, const char *cls, const char *text)
{
	if (g->label_count == MAX_RIGHT_LABELS)
		return;
	struct right_label *l = &g->labels[g->label_count++];
	l->y = y;
	l->cls = cls;
	size_t n = strlen(text);
	if (n >= sizeof(l->text))
		n = sizeof(l->text) - 1; /* labels are short: a statistic and a time */
	memcpy(l->text, text, n);
	l->text[n] = '\0';
}

static int label_cmp(const void *a, const void *b)
{
	const struct right_label *x = a, *y = b;
	return (x->y > y->y) - (x->y < y->y);
}

/* The labels at the right of the lines, moved apart where they meet. */
static void right_labels(struct graph *g)
{
	qsort(g->labels, g->label_count, sizeof(g->labels[0]), label_cmp);
	for (size_t i = 1; i < g->label_count; i++)
		if (g->labels[i].y < g->labels[i - 1].y + LABEL_GAP)
			g->labels[i].y = g->labels[i - 1].y + LABEL_GAP;
	for (size_t i = 0; i < g->label_count; i++) {
		const struct right_label *l = &g->labels[i];
		sbuf_addf(&g->out, "<path class=\"%s\" d=\"M%.1f %.1fh10\"/>\n", l->cls, g->x1 + 6,
			  l->y);
		sbuf_addf(&g->out, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\">", g->x1 + 20, l->y + 3.5);
		svg_text_fit(&g->out, l->text, strlen(l->text), 10, RIGHT_W - 24);
		sbuf_adds(&g->out, "</text>\n");
	}
}

/* The legend of what the panels draw: budget limits only where some
 * budget line applies to a panel's GPU. */
static void legend(struct sbuf *b, bool budgets, bool rows)
{
	static const struct {
		const char *cls;
		const char *text;
	} lines[] = {
		{ "series", "frame time" },
		{ "median", "median" },
		{ "p95", "p95" },
		{ "threshold", "spike threshold" },
		{ "budget", "budget limit" },
	};
	double x = 8, y = 38;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (!budgets && strcmp(lines[i].cls, "budget") == 0)
			continue;
		sbuf_addf(b, "<path class=\"%s\" d=\"M%.1f %.1fh20\"/>\n", lines[i].cls, x, y - 4);
		svg_label(b, x + 26, y, "small", lines[i].text, strlen(lines[i].text));
		x += 26 + svg_text_px(lines[i].text, strlen(lines[i].text), 10) + 16;
	}
	sbuf_addf(b, "<circle class=\"spike\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"/>\n", x + 4, y - 4);
	svg_label(b, x + 12, y, "small", "spike", 5);
	if (rows) {
		const char *text = "a spike's frame, in the rows of scopes";
		x += 12 + svg_text_px("spike", 5, 10) + 16;
		sbuf_addf(b, "<path class=\"spikemark\" d=\"M%.1f %.1fv12\"/>\n", x + 4, y - 10);
		svg_label(b, x + 12, y, "small", text, strlen(text));
	}
}

static void axes(struct graph *g)
{
	struct sbuf *b = &g->out;
	double step = svg_nice_step(g->top_ms, 5);
	for (unsigned k = 0; k * step <= g->top_ms * (1 + 1e-9) && k < 100; k++) {
		double y = gy(g, k * step);
		sbuf_addf(b, "<path class=\"grid\" d=\"M%.1f %.1fH%.1f\"/>\n", g->x0, y, g->x1);
		sbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"small end\">", g->x0 - 6, y + 3.5);
		svg_number(b, k * step, step);
		sbuf_adds(b, " ms</text>\n");
	}
	sbuf_addf(b, "<path class=\"axis\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n", g->x0, g->y0, g->y1, g->x1);
	struct plot_frames a = frames_of(g);
	plot_frame_ticks(b, &a, g->y1);
}

void plot_frame_ticks(struct sbuf *b, const struct plot_frames *a, double y)
{
	/* Frame numbers: whole steps, about one label per 100 pixels. */
	double span = (double)(a->last - a->first);
	double fstep = svg_nice_step(span > 0 ? span : 1, (a->x1 - a->x0) / 100);
	if (fstep < 1)
		fstep = 1;
	uint64_t ustep = (uint64_t)fstep;
	uint64_t k0 = (a->first + ustep - 1) / ustep;
	for (uint64_t k = k0; k * ustep <= a->last && k - k0 < 1000; k++) {
		uint64_t n = k * ustep;
		double x = plot_frame_x(a, n);
		sbuf_addf(b, "<path class=\"axis\" d=\"M%.1f %.1fv4\"/>\n", x, y);
		sbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"small mid\">%llu</text>\n", x, y + 15,
			  (unsigned long long)n);
	}
	const char *label = "frame";
	svg_label(b, a->x1, y + 27, "small end", label, strlen(label));
}

/* The frame times: a line through every frame when they fit in the
 * pixel columns, else each column's lowest to highest. Absent frames (the
 * GPU did no work) break the line. Then the spikes. false when out of
 * memory. */
static bool series(struct graph *g, const struct stats_row *r)
{
	struct sbuf *b = &g->out;
	size_t frames = stats_frame_count(g->s);
	size_t columns = (size_t)(g->x1 - g->x0) + 1;
	uint32_t threshold = r->spikes.threshold_ns;

	sbuf_adds(b, "<path class=\"series\" d=\"");
	if (frames <= columns) {
		bool drawing = false;
		size_t points = 0;
		for (size_t i = 0; i < frames; i++) {
			uint32_t v = stats_value(g->s, g->row, i, false);
			if (v == STATS_ABSENT) {
				drawing = false;
				continue;
			}
			sbuf_addf(b, "%s%.1f %.1f", drawing ? "L" : "M", gx(g, stats_frame_number(g->s, i)),
				  gy(g, v / 1e6));
			drawing = true;
			points++;
		}
		/* A lone frame is a dot. */
		if (points == 1)
			sbuf_adds(b, "h0.1");
		sbuf_adds(b, "\"/>\n");
		for (size_t i = 0; i < frames; i++) {
			uint32_t v = stats_value(g->s, g->row, i, false);
			if (!stats_spike(g->s, g->row, i))
				continue;
			uint64_t number = stats_frame_number(g->s, i);
			sbuf_addf(b, "<circle class=\"spike\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"><title>"
				     "frame %llu: %.3f ms, a spike (above %.3f ms)</title></circle>\n",
				  gx(g, number), gy(g, v / 1e6), (unsigned long long)number, v / 1e6,
				  threshold / 1e6);
		}
		return true;
	}

	struct column {
		uint32_t lo, hi;
		uint32_t spikes;
		uint64_t hi_frame;
		uint64_t first, last;
	} *col = malloc(columns * sizeof(*col));
	if (!col)
		return false;
	for (size_t c = 0; c < columns; c++)
		col[c] = (struct column){ STATS_ABSENT, 0, 0, 0, 0, 0 };
	for (size_t i = 0; i < frames; i++) {
		uint32_t v = stats_value(g->s, g->row, i, false);
		if (v == STATS_ABSENT)
			continue;
		uint64_t number = stats_frame_number(g->s, i);
		size_t c = (size_t)(gx(g, number) - g->x0);
		if (c >= columns)
			c = columns - 1;
		struct column *k = &col[c];
		if (k->lo == STATS_ABSENT) {
			k->lo = k->hi = v;
			k->hi_frame = k->first = number;
		} else if (v < k->lo) {
			k->lo = v;
		}
		if (v > k->hi) {
			k->hi = v;
			k->hi_frame = number;
		}
		k->last = number;
		if (stats_spike(g->s, g->row, i))
			k->spikes++;
	}
	for (size_t c = 0; c < columns; c++) {
		if (col[c].lo == STATS_ABSENT)
			continue;
		double x = g->x0 + (double)c + 0.5;
		sbuf_addf(b, "M%.1f %.1fV%.1f", x, gy(g, col[c].lo / 1e6),
			  gy(g, col[c].hi / 1e6) - (col[c].hi == col[c].lo ? 0.8 : 0));
	}
	sbuf_adds(b, "\"/>\n");
	for (size_t c = 0; c < columns; c++) {
		if (!col[c].spikes)
			continue;
		sbuf_addf(b, "<circle class=\"spike\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"><title>frames %llu "
			     "to %llu: %u spike%s (above %.3f ms), the highest %.3f ms in frame %llu"
			     "</title></circle>\n", g->x0 + (double)c + 0.5, gy(g, col[c].hi / 1e6),
			  (unsigned long long)col[c].first, (unsigned long long)col[c].last, col[c].spikes,
			  col[c].spikes == 1 ? "" : "s", threshold / 1e6, col[c].hi / 1e6,
			  (unsigned long long)col[c].hi_frame);
	}
	free(col);
	return true;
}

static void hline(struct graph *g, const char *cls, double ms, const char *title)
{
	double y = gy(g, ms);
	sbuf_addf(&g->out, "<path class=\"%s\" d=\"M%.1f %.1fH%.1f\"><title>", cls, g->x0, y, g->x1);
	svg_text(&g->out, title, strlen(title));
	sbuf_adds(&g->out, "</title></path>\n");
}

/* The top scopes of a panel, below its graph. */
struct panel_rows {
	bool drawn;       /* --rows is not 0 */
	uint32_t rows[PLOT_MAX_ROWS];
	size_t count;
};

static double panel_height(const struct panel_rows *pr)
{
	return PANEL_HEAD_H + PLOT_H + X_AXIS_H + (pr->drawn ? plot_rows_height(pr->count) : 0) +
	       PANEL_GAP;
}

static bool panel(struct graph *g, const struct capture_meta *meta, const struct stats_row *r,
		  const struct stats_budget *bu, const struct panel_rows *pr, double top)
{
	struct sbuf *b = &g->out;
	const char *name = r->gpu < meta->gpu_count && meta->gpus[r->gpu].name ?
				   meta->gpus[r->gpu].name : "";
	const struct stats_summary *t = &r->time;
	char text[200];

	struct sbuf head = { 0 };
	bool cpu = r->kind == STATS_CPU;
	if (cpu)
		sbuf_adds(&head, "CPU frame time (frame start to frame start)");
	else
		sbuf_addf(&head, "GPU %u \xc2\xb7 %s", r->gpu, name);
	sbuf_addf(&head, " \xc2\xb7 %llu frame%s \xc2\xb7 median %.3f ms \xc2\xb7 "
			 "p95 %.3f ms \xc2\xb7 max %.3f ms (frame %llu) \xc2\xb7 %llu spike%s",
		  (unsigned long long)t->frames, t->frames == 1 ? "" : "s", t->median_ns / 1e6,
		  t->p95_ns / 1e6, t->max_ns / 1e6, (unsigned long long)t->max_frame,
		  (unsigned long long)r->spikes.count, r->spikes.count == 1 ? "" : "s");
	if (cpu)
		sbuf_addf(b, "<g data-cpu=\"frame\">\n<text x=\"8\" y=\"%.1f\" class=\"h2\">",
			  top + 16);
	else
		sbuf_addf(b, "<g data-gpu=\"%u\">\n<text x=\"8\" y=\"%.1f\" class=\"h2\">", r->gpu,
			  top + 16);
	svg_text_fit(b, head.data ? head.data : "", head.len, 12.5, g->p->width - 16.0);
	sbuf_adds(b, "</text>\n");
	bool ok = !head.failed;
	sbuf_release(&head);

	g->y0 = top + PANEL_HEAD_H;
	g->y1 = g->y0 + PLOT_H;
	g->label_count = 0;

	/* The scale: the highest frame and every budget limit in view. */
	uint32_t highest = t->max_ns;
	struct stats_budget_line bl;
	for (size_t i = 0; stats_budget_line(bu, i, g->row, &bl); i++)
		if (bl.matched && bl.limit_ns > highest)
			highest = bl.limit_ns;
	double step = svg_nice_step(highest / 1e6, 5);
	g->top_ms = ceil(highest / 1e6 / step * 1.04) * step;
	if (!(g->top_ms > 0))
		g->top_ms = 1;

	sbuf_addf(b, "<rect class=\"lane\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
		  g->x0, g->y0, g->x1 - g->x0, PLOT_H);
	axes(g);
	if (!series(g, r))
		return false;

	snprintf(text, sizeof(text), "median %.3f ms", t->median_ns / 1e6);
	hline(g, "median", t->median_ns / 1e6, text);
	right_label(g, gy(g, t->median_ns / 1e6), "median", text);
	snprintf(text, sizeof(text), "p95 %.3f ms", t->p95_ns / 1e6);
	hline(g, "p95", t->p95_ns / 1e6, text);
	right_label(g, gy(g, t->p95_ns / 1e6), "p95", text);
	if (r->spikes.threshold_ns / 1e6 <= g->top_ms) {
		snprintf(text, sizeof(text), "spikes above %.3f ms", r->spikes.threshold_ns / 1e6);
		hline(g, "threshold", r->spikes.threshold_ns / 1e6, text);
		right_label(g, gy(g, r->spikes.threshold_ns / 1e6), "threshold", text);
	}
	for (size_t i = 0; stats_budget_line(bu, i, g->row, &bl); i++) {
		if (!bl.matched)
			continue;
		bool over = bl.value_ns > bl.limit_ns;
		struct sbuf about = { 0 };
		sbuf_addf(&about, "budget line %u: %s %s at most %.3f ms; it is %.3f ms, %s", bl.line,
			  bl.pattern, bl.statistic, bl.limit_ns / 1e6, bl.value_ns / 1e6,
			  over ? "EXCEEDED" : "ok");
		hline(g, "budget", bl.limit_ns / 1e6, about.data ? about.data : "");
		ok = ok && !about.failed;
		sbuf_release(&about);
		snprintf(text, sizeof(text), "%s \xe2\x89\xa4 %.3f ms: %s", bl.statistic,
			 bl.limit_ns / 1e6, over ? "EXCEEDED" : "ok");
		right_label(g, gy(g, bl.limit_ns / 1e6), "budget", text);
	}
	right_labels(g);
	if (pr->drawn) {
		struct plot_frames a = frames_of(g);
		ok = plot_rows(b, g->s, g->row, pr->rows, pr->count, &a, g->y1 + X_AXIS_H, g->y0) &&
		     ok;
	}
	sbuf_adds(b, "</g>\n");
	return ok;
}

/* Under a GPU's frame times, its video memory (plot_memory.c). */
static double memory_height(const stats *s, uint32_t row)
{
	const struct stats_row *r = stats_row(s, row);
	return r->kind == STATS_GPU ? plot_memory_height(s, r->gpu) : 0;
}

static bool memory_panel(struct graph *g, uint32_t row, double top)
{
	const struct stats_row *r = stats_row(g->s, row);
	if (r->kind != STATS_GPU)
		return true;
	struct plot_frames a = frames_of(g);
	return plot_memory(&g->out, g->s, r->gpu, &a, g->p->width, top);
}

int plot_run(const struct plot_settings *p, const struct capture_meta *meta, const stats *s,
	     const struct stats_budget *b, const char *file, const struct report_sink *sink)
{
	struct graph g = { .p = p, .s = s };
	struct sbuf title = { 0 };
	uint32_t rows[64];
	struct panel_rows *tops = NULL;
	size_t row_count = 0;
	int result = -1;

	/* The CPU's frame time above the GPUs', as its lanes are above
	 * theirs in a frame's picture; not where a GPU is chosen. */
	uint32_t cpu = stats_cpu_row(s);
	bool with_cpu = cpu != STATS_NONE && report_cpu_chosen(&p->stats.report) &&
			!p->stats.no_cpu && stats_row(s, cpu)->time.frames > 0;
	if (with_cpu)
		rows[row_count++] = cpu;
	for (uint32_t gpu = 0; gpu < meta->gpu_count && row_count < 64; gpu++) {
		uint32_t row = stats_gpu_row(s, gpu);
		if (p->stats.report.gpu >= 0 && gpu != (uint32_t)p->stats.report.gpu)
			continue;
		if (row != STATS_NONE && stats_row(s, row)->time.frames > 0)
			rows[row_count++] = row;
	}
	size_t frames = stats_frame_count(s);
	g.first = frames ? stats_frame_number(s, 0) : 0;
	g.last = frames ? stats_frame_number(s, frames - 1) : 0;
	g.x0 = LEFT_W;
	g.x1 = p->width - RIGHT_W;
	if (!(tops = calloc(row_count ? row_count : 1, sizeof(*tops))))
		goto out;
	double height = TITLE_H + (row_count ? 0 : 24);
	bool any_rows = false;
	for (size_t i = 0; i < row_count; i++) {
		tops[i].drawn = p->rows > 0;
		tops[i].count = plot_top_rows(s, meta, &p->stats.report, rows[i], tops[i].rows,
					      p->rows);
		any_rows = any_rows || tops[i].count > 0;
		height += panel_height(&tops[i]) + memory_height(s, rows[i]);
	}
	/* Present intervals under the frame times. */
	height += plot_present_height(s);

	sbuf_addf(&title, "crumbs plot: %s frame times of %s", with_cpu ? "CPU and GPU" : "GPU", file);
	svg_begin(&g.out, p->width, height, title.data ? title.data : "", title.len);
	title.len = 0;
	sbuf_addf(&title, "%s frame time \xc2\xb7 %s \xc2\xb7 frames %llu to %llu (%zu)",
		  with_cpu ? "CPU and GPU" : "GPU", file,
		  (unsigned long long)g.first, (unsigned long long)g.last, frames);
	sbuf_addf(&g.out, "<text x=\"8\" y=\"20\" class=\"h1\">");
	svg_text_fit(&g.out, title.data ? title.data : "", title.len, 15, p->width - 16.0);
	sbuf_adds(&g.out, "</text>\n");
	bool budgets = false;
	for (size_t i = 0; i < row_count && !budgets; i++) {
		struct stats_budget_line bl;
		for (size_t k = 0; !budgets && stats_budget_line(b, k, rows[i], &bl); k++)
			budgets = bl.matched;
	}
	legend(&g.out, budgets, any_rows);
	if (row_count == 0) {
		const char *none = "no GPU did work in these frames";
		svg_label(&g.out, 8, TITLE_H + 14, NULL, none, strlen(none));
	}
	double top = TITLE_H;
	for (size_t i = 0; i < row_count; i++) {
		g.row = rows[i];
		if (!panel(&g, meta, stats_row(s, rows[i]), b, &tops[i], top) || title.failed ||
		    sbuf_emit(sink, &g.out) != 0)
			goto out;
		top += panel_height(&tops[i]);
		if (!memory_panel(&g, rows[i], top))
			goto out;
		top += memory_height(s, rows[i]);
	}
	struct plot_frames axis = frames_of(&g);
	if (!plot_present_panel(&g.out, s, &axis, p->width, top))
		goto out;
	svg_end(&g.out);
	result = title.failed ? -1 : sbuf_emit(sink, &g.out);
out:
	free(tops);
	sbuf_release(&title);
	sbuf_release(&g.out);
	return result;
}
