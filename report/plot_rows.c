/* SPDX-License-Identifier: MIT */
/*
 * plot_rows.c: below a run's frame-time graph, the times of its top
 * scopes frame by frame (which ones, and how they are drawn), the spikes
 * marked across them, and each frame's numbers in a <title>, so that the
 * pass behind a spike can be seen. Memory follows the picture's width.
 */
#include "report_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Layout, in pixels. */
#define ROWS_HEAD_H 22.0
#define STRIP_H 38.0
#define STRIP_GAP 6.0
#define ROWS_AXIS_H 30.0
#define NONE_H 8.0
#define LEGEND_GAP 6.0     /* from the graph's right edge */
/* Names in a <title>: a few words are enough to tell rows apart, and a
 * title is written per frame. */
#define TITLE_NAME_PX 320.0
/* data-path and a legend's title keep a path whole up to this many
 * bytes. */
#define DATA_PATH_MAX 1024

/* ------------------------------------------------------------------------ */
/* Which rows                                                               */
/* ------------------------------------------------------------------------ */

uint64_t plot_row_total_ns(const stats *s, uint32_t row)
{
	const struct stats_row *r = stats_row(s, row);
	if (!r || !r->time.frames)
		return 0;
	/* The mean is the exact sum over the frames; sums below 2^53 ns
	 * (104 days) come back whole. */
	return (uint64_t)llround(r->time.mean_ns * (double)r->time.frames);
}

struct ranking {
	const stats *s;
	uint32_t *out;
	uint64_t *total;
	size_t count, max;
};

/* Keeps the max rows of the most time: an insertion into a list of at
 * most PLOT_MAX_ROWS, so thousands of scopes cost a pass over them. */
static void offer(struct ranking *k, uint32_t row)
{
	uint64_t t = plot_row_total_ns(k->s, row);
	if (!t)
		return;
	size_t at = k->count;
	/* Rows come in order of creation, which is the order they appeared:
	 * a row of equal time goes after those before it. */
	while (at > 0 && k->total[at - 1] < t)
		at--;
	if (at >= k->max)
		return;
	size_t end = k->count < k->max ? k->count : k->max - 1;
	memmove(&k->out[at + 1], &k->out[at], (end - at) * sizeof(k->out[0]));
	memmove(&k->total[at + 1], &k->total[at], (end - at) * sizeof(k->total[0]));
	k->out[at] = row;
	k->total[at] = t;
	if (k->count < k->max)
		k->count++;
}

static uint32_t next_named(const stats *s, uint32_t row)
{
	while (row != STATS_NONE && !stats_kind_named(stats_row(s, row)->kind))
		row = stats_row(s, row)->next_sibling;
	return row;
}

/* The scopes (tasks, states) below root that offer themselves: the
 * first level with more than one, or with one that has none below it.
 * A scope alone on its level holds all the time of the level; its row
 * would say what the frame time says, and the ones below tell apart
 * what moved. */
static void offer_below(struct ranking *k, uint32_t root)
{
	const stats *s = k->s;
	uint32_t at = root;
	for (unsigned depth = 0; depth <= STATS_PATH_MAX; depth++) {
		uint32_t c = next_named(s, stats_row(s, at)->first_child);
		if (c == STATS_NONE)
			return;
		bool alone = next_named(s, stats_row(s, c)->next_sibling) == STATS_NONE;
		if (alone && next_named(s, stats_row(s, c)->first_child) != STATS_NONE) {
			at = c;
			continue;
		}
		for (; c != STATS_NONE; c = next_named(s, stats_row(s, c)->next_sibling))
			offer(k, c);
		return;
	}
}

size_t plot_top_rows(const stats *s, const struct capture_meta *meta,
		     const struct report_settings *rs, uint32_t panel, uint32_t *out, size_t max)
{
	uint64_t total[PLOT_MAX_ROWS];
	struct ranking k = { s, out, total, 0, max < PLOT_MAX_ROWS ? max : PLOT_MAX_ROWS };
	const struct stats_row *p = stats_row(s, panel);
	if (!p || !k.max || !stats_kind_frame_time(p->kind))
		return 0;
	bool cpu = p->kind == STATS_CPU;
	if (cpu && panel != stats_cpu_row(s))
		return 0; /* a timeline's frames of another kind: no rows of its own */
	for (size_t i = 0; i < stats_row_count(s); i++) {
		const struct stats_row *r = stats_row(s, i);
		bool root;
		if (cpu)
			root = r->kind == STATS_THREAD || r->kind == STATS_TIMELINE;
		else
			root = r->kind == STATS_BUSY && r->gpu == p->gpu && r->queue < meta->queue_count &&
			       report_selects_queue(rs, meta->queues[r->queue].name);
		if (root)
			offer_below(&k, (uint32_t)i);
	}
	return k.count;
}

/* ------------------------------------------------------------------------ */
/* Drawing                                                                  */
/* ------------------------------------------------------------------------ */

double plot_rows_height(size_t count)
{
	if (!count)
		return ROWS_HEAD_H + NONE_H;
	return ROWS_HEAD_H + (double)count * (STRIP_H + STRIP_GAP) + ROWS_AXIS_H;
}

/* What a row's titles say of it, made once: names may be long, and the
 * titles repeat them per frame. */
struct row_text {
	struct sbuf title_name; /* escaped, cut to TITLE_NAME_PX */
};

struct rows {
	const stats *s;
	uint32_t panel;
	const uint32_t *rows;
	size_t count;
	const struct plot_frames *a;
	double top;          /* of the strips */
	double bottom;       /* of the strips, or of the heading with none */
	double top_ms;       /* the scale of every strip */
	struct row_text text[PLOT_MAX_ROWS];
	struct sbuf *out;
};

static double strip_top(const struct rows *w, size_t k)
{
	return w->top + (double)k * (STRIP_H + STRIP_GAP);
}

static double strip_y(const struct rows *w, size_t k, uint32_t v)
{
	double base = strip_top(w, k) + STRIP_H;
	if (v == STATS_ABSENT)
		return base;
	double y = base - v / 1e6 / w->top_ms * (STRIP_H - 2);
	return y < strip_top(w, k) ? strip_top(w, k) : y;
}

/* The bytes of s to keep for at most max: whole characters (a byte of
 * invalid UTF-8 counts as one). */
static size_t cut_len(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	size_t at = 0;
	while (at < len) {
		size_t n = utf8_sequence((const unsigned char *)s + at, len - at);
		if (!n)
			n = 1;
		if (at + n > max)
			break;
		at += n;
	}
	return at;
}

/* The panel's name in titles: "GPU 0" or "CPU". */
static void panel_name(struct sbuf *b, const stats *s, uint32_t panel)
{
	const struct stats_row *p = stats_row(s, panel);
	if (p->kind == STATS_CPU)
		sbuf_adds(b, "CPU");
	else
		sbuf_addf(b, "GPU %u", p->gpu);
}

/* Where a row is, between the panel and its name: "Graphics 0 / Frame #",
 * "Render Thread", "Tasks / Jobs". */
static void row_context(struct sbuf *b, const stats *s, uint32_t row)
{
	uint32_t chain[STATS_PATH_MAX];
	size_t n = 0;
	for (uint32_t r = stats_row(s, row)->parent; r != STATS_NONE && n < STATS_PATH_MAX;
	     r = stats_row(s, r)->parent) {
		enum stats_kind kind = stats_row(s, r)->kind;
		if (kind == STATS_GPU || kind == STATS_CPU)
			break;
		chain[n++] = r;
	}
	for (size_t i = n; i-- > 0;) {
		const struct stats_row *r = stats_row(s, chain[i]);
		/* Dozens of levels of long names: a line is cut anyway. */
		if (b->len > 4096)
			break;
		sbuf_add(b, r->name, r->name_len);
		if (i)
			sbuf_adds(b, " / ");
	}
}

/* Row k's name in titles, and where it is when another row has its name
 * ("Render (Main Thread / Frame)"), cut to TITLE_NAME_PX. */
static void title_name(struct rows *w, size_t k)
{
	const struct stats_row *r = stats_row(w->s, w->rows[k]);
	struct sbuf name = { 0 };
	sbuf_add(&name, r->name, r->name_len);
	for (size_t o = 0; o < w->count; o++) {
		const struct stats_row *other = stats_row(w->s, w->rows[o]);
		if (o != k && other->name_len == r->name_len &&
		    memcmp(other->name, r->name, r->name_len) == 0) {
			sbuf_adds(&name, " (");
			row_context(&name, w->s, w->rows[k]);
			sbuf_adds(&name, ")");
			break;
		}
	}
	struct sbuf *out = &w->text[k].title_name;
	if (!svg_text_fit(out, name.data ? name.data : "", name.len, 10, TITLE_NAME_PX))
		sbuf_adds(out, "\xe2\x80\xa6");
	if (name.failed)
		out->failed = true;
	sbuf_release(&name);
}

/* A value in a title: "3.862 ms", or that the row was not there. */
static void title_value(struct sbuf *b, uint32_t v)
{
	if (v == STATS_ABSENT)
		sbuf_adds(b, ": not in this frame");
	else
		sbuf_addf(b, " %.3f ms", v / 1e6);
}

/* The line of the panel's time in a frame's title. */
static void title_panel(struct rows *w, size_t i)
{
	struct sbuf *b = w->out;
	const struct stats_row *p = stats_row(w->s, w->panel);
	uint32_t v = stats_value(w->s, w->panel, i, false);
	panel_name(b, w->s, w->panel);
	if (v == STATS_ABSENT) {
		sbuf_adds(b, p->kind == STATS_CPU ? ": no frame time" : ": no work in this frame");
		return;
	}
	sbuf_addf(b, " frame time %.3f ms", v / 1e6);
	if (stats_spike(w->s, w->panel, i))
		sbuf_addf(b, ", a spike (above %.3f ms)", p->spikes.threshold_ns / 1e6);
}

/* Each row's value in the i-th frame, a line each, in the order of the
 * rows. */
static void title_rows(struct rows *w, size_t i)
{
	for (size_t k = 0; k < w->count; k++) {
		sbuf_adds(w->out, "\n");
		sbuf_add(w->out, w->text[k].title_name.data ? w->text[k].title_name.data : "",
			 w->text[k].title_name.len);
		title_value(w->out, stats_value(w->s, w->rows[k], i, false));
	}
}

static void hover(struct rows *w, double x0, double x1, double y0)
{
	sbuf_addf(w->out, "<rect class=\"hover\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"",
		  x0, y0, x1 - x0 > 0.1 ? x1 - x0 : 0.1, w->bottom - y0);
}

static void legend(struct rows *w, size_t k)
{
	struct sbuf *b = w->out;
	const struct stats_row *r = stats_row(w->s, w->rows[k]);
	double x = w->a->x1 + LEGEND_GAP, y = strip_top(w, k);
	double room = PLOT_RUN_RIGHT_W - LEGEND_GAP - 18;
	struct sbuf about = { 0 }, ctx = { 0 };

	stats_row_path(w->s, w->rows[k], &about);
	about.len = cut_len(about.data ? about.data : "", about.len, DATA_PATH_MAX);
	sbuf_addf(&about, "\nmean %.3f ms \xc2\xb7 p95 %.3f ms \xc2\xb7 max %.3f ms (frame %llu)"
			  "\n%.3f ms over the run, in %llu frame%s",
		  r->time.mean_ns / 1e6, r->time.p95_ns / 1e6, r->time.max_ns / 1e6,
		  (unsigned long long)r->time.max_frame, plot_row_total_ns(w->s, w->rows[k]) / 1e6,
		  (unsigned long long)r->time.frames, r->time.frames == 1 ? "" : "s");
	sbuf_addf(b, "<g data-legend=\"%zu\"><title>", k);
	/* The title's lines are its own; the rest of it is text for XML. */
	for (size_t at = 0; about.data && at < about.len;) {
		const char *nl = memchr(about.data + at, '\n', about.len - at);
		size_t end = nl ? (size_t)(nl - about.data) : about.len;
		svg_text(b, about.data + at, end - at);
		if (nl)
			sbuf_adds(b, "\n");
		at = end + (nl ? 1 : 0);
	}
	sbuf_addf(b, "</title>\n<rect class=\"c%zu blk\" x=\"%.1f\" y=\"%.1f\" width=\"12\" "
		     "height=\"12\"/>\n", k, x, y + 3);
	sbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\">", x + 18, y + 13);
	svg_text_fit(b, r->name, r->name_len, 11, room);
	sbuf_adds(b, "</text>\n");
	row_context(&ctx, w->s, w->rows[k]);
	if (ctx.len) {
		sbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\">", x + 18, y + 27);
		svg_text_fit(b, ctx.data, ctx.len, 10, room);
		sbuf_adds(b, "</text>\n");
	}
	sbuf_adds(b, "</g>\n");
	if (about.failed || ctx.failed)
		b->failed = true;
	sbuf_release(&about);
	sbuf_release(&ctx);
}

/* A strip's background, its scale and its row's group, which says which
 * stats row it draws (data-path, whole up to DATA_PATH_MAX bytes). */
static void strip_begin(struct rows *w, size_t k)
{
	struct sbuf *b = w->out;
	struct sbuf path = { 0 };
	const struct stats_row *r = stats_row(w->s, w->rows[k]);
	double y = strip_top(w, k);

	stats_row_path(w->s, w->rows[k], &path);
	size_t keep = cut_len(path.data ? path.data : "", path.len, DATA_PATH_MAX);
	sbuf_addf(b, "<g data-row=\"%zu\" data-kind=\"%s\" data-total-ns=\"%llu\" data-path=\"", k,
		  stats_kind_name(r->kind), (unsigned long long)plot_row_total_ns(w->s, w->rows[k]));
	svg_text(b, path.data ? path.data : "", keep);
	if (keep < path.len)
		sbuf_adds(b, "\xe2\x80\xa6");
	sbuf_adds(b, "\">\n");
	if (path.failed)
		b->failed = true;
	sbuf_release(&path);
	sbuf_addf(b, "<rect class=\"strip\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
		  w->a->x0, y, w->a->x1 - w->a->x0, STRIP_H);
	sbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"small end\">", w->a->x0 - 6, y + 8);
	svg_number(b, w->top_ms, w->top_ms);
	sbuf_adds(b, " ms</text>\n");
}

/*
 * Each row is a strip of its own, its time as an area over its baseline,
 * all on one scale: a pass that grew by 2 ms rises 2 ms' height whatever
 * its size, so the strip that rises at a spike is the pass behind it.
 * Stacked areas would say the rows add up to the frame time, which
 * scopes of several queues (or threads) running at once do not, and a
 * band's rise would move every band above it; lines on one axis cross
 * and hide each other at hundreds of frames.
 *
 * One point per frame where the frames fit the pixel columns.
 */
static void strips_by_frame(struct rows *w)
{
	struct sbuf *b = w->out;
	size_t frames = stats_frame_count(w->s);
	for (size_t k = 0; k < w->count; k++) {
		strip_begin(w, k);
		double base = strip_top(w, k) + STRIP_H;
		sbuf_addf(b, "<path class=\"c%zu blk\" d=\"", k);
		if (frames == 1) {
			/* A lone frame is a bar. */
			double x = plot_frame_x(w->a, stats_frame_number(w->s, 0));
			sbuf_addf(b, "M%.1f %.1fV%.1fH%.1fV%.1fZ", x - 4, base,
				  strip_y(w, k, stats_value(w->s, w->rows[k], 0, false)), x + 4, base);
		} else {
			for (size_t i = 0; i < frames; i++) {
				double x = plot_frame_x(w->a, stats_frame_number(w->s, i));
				if (i == 0)
					sbuf_addf(b, "M%.1f %.1f", x, base);
				sbuf_addf(b, "L%.1f %.1f", x,
					  strip_y(w, k, stats_value(w->s, w->rows[k], i, false)));
				if (i + 1 == frames)
					sbuf_addf(b, "L%.1f %.1fZ", x, base);
			}
		}
		sbuf_adds(b, "\"/>\n</g>\n");
		legend(w, k);
	}
	if (w->count) {
		for (size_t i = 0; i < frames; i++) {
			if (!stats_spike(w->s, w->panel, i))
				continue;
			uint64_t n = stats_frame_number(w->s, i);
			sbuf_addf(b, "<path class=\"spikemark\" data-frame=\"%llu\" d=\"M%.1f %.1fV%.1f\"/>\n",
				  (unsigned long long)n, plot_frame_x(w->a, n), w->top, w->bottom);
		}
	}
}

/* The hover column of each frame: from halfway to the frame before to
 * halfway to the one after. */
static void hovers_by_frame(struct rows *w, double hover_top)
{
	struct sbuf *b = w->out;
	size_t frames = stats_frame_count(w->s);
	for (size_t i = 0; i < frames; i++) {
		uint64_t n = stats_frame_number(w->s, i);
		double x = plot_frame_x(w->a, n);
		double left = i ? (plot_frame_x(w->a, stats_frame_number(w->s, i - 1)) + x) / 2 : w->a->x0;
		double right = i + 1 < frames ?
				       (plot_frame_x(w->a, stats_frame_number(w->s, i + 1)) + x) / 2 :
				       w->a->x1;
		hover(w, left, right, hover_top);
		sbuf_addf(b, " data-frame=\"%llu\"><title>frame %llu\n", (unsigned long long)n,
			  (unsigned long long)n);
		title_panel(w, i);
		title_rows(w, i);
		sbuf_adds(b, "</title></rect>\n");
	}
}

/* A pixel column's frames, when they outnumber the columns. */
struct column {
	uint64_t first, last;  /* frame numbers; count 0: none */
	size_t count;
	size_t longest;        /* the frame of the panel's highest time, else the first */
	uint32_t lo, hi;       /* the panel's times; lo STATS_ABSENT: none */
	uint32_t spikes;
};

/*
 * Each pixel column's highest time of each row, so that a spike inside
 * a column is never averaged away; its hover says which frame the panel's
 * longest was and each row's time in it. false when out of memory.
 */
static bool by_column(struct rows *w, double hover_top)
{
	struct sbuf *b = w->out;
	size_t frames = stats_frame_count(w->s);
	size_t columns = (size_t)(w->a->x1 - w->a->x0) + 1;
	struct column *col = calloc(columns, sizeof(*col));
	uint32_t *peak = calloc(columns * (w->count ? w->count : 1), sizeof(*peak));
	if (!col || !peak) {
		free(col);
		free(peak);
		return false;
	}
	for (size_t i = 0; i < frames; i++) {
		uint64_t n = stats_frame_number(w->s, i);
		size_t c = (size_t)(plot_frame_x(w->a, n) - w->a->x0);
		if (c >= columns)
			c = columns - 1;
		struct column *k = &col[c];
		if (!k->count++) {
			k->first = n;
			k->longest = i;
			k->lo = STATS_ABSENT;
		}
		k->last = n;
		uint32_t v = stats_value(w->s, w->panel, i, false);
		if (v != STATS_ABSENT) {
			if (k->lo == STATS_ABSENT || v > k->hi) {
				k->hi = v;
				k->longest = i;
			}
			if (k->lo == STATS_ABSENT || v < k->lo)
				k->lo = v;
		}
		if (stats_spike(w->s, w->panel, i))
			k->spikes++;
		for (size_t r = 0; r < w->count; r++) {
			uint32_t rv = stats_value(w->s, w->rows[r], i, false);
			if (rv != STATS_ABSENT && rv > peak[c * w->count + r])
				peak[c * w->count + r] = rv;
		}
	}
	size_t c0 = 0, c1 = columns;
	while (c0 < columns && !col[c0].count)
		c0++;
	while (c1 > c0 && !col[c1 - 1].count)
		c1--;
	for (size_t r = 0; r < w->count; r++) {
		strip_begin(w, r);
		double base = strip_top(w, r) + STRIP_H;
		sbuf_addf(b, "<path class=\"c%zu blk\" d=\"M%.1f %.1f", r, w->a->x0 + (double)c0 + 0.5,
			  base);
		for (size_t c = c0; c < c1; c++)
			sbuf_addf(b, "L%.1f %.1f", w->a->x0 + (double)c + 0.5,
				  peak[c * w->count + r] ? strip_y(w, r, peak[c * w->count + r]) : base);
		sbuf_addf(b, "L%.1f %.1fZ\"/>\n</g>\n", w->a->x0 + (double)(c1 ? c1 - 1 : 0) + 0.5,
			  base);
		legend(w, r);
	}
	for (size_t c = 0; c < columns && w->count; c++) {
		if (!col[c].spikes)
			continue;
		sbuf_addf(b, "<path class=\"spikemark\" data-first=\"%llu\" data-last=\"%llu\" "
			     "data-spikes=\"%u\" d=\"M%.1f %.1fV%.1f\"/>\n",
			  (unsigned long long)col[c].first, (unsigned long long)col[c].last,
			  col[c].spikes, w->a->x0 + (double)c + 0.5, w->top, w->bottom);
	}
	const struct stats_row *p = stats_row(w->s, w->panel);
	for (size_t c = 0; c < columns; c++) {
		const struct column *k = &col[c];
		if (!k->count)
			continue;
		uint64_t longest = stats_frame_number(w->s, k->longest);
		hover(w, w->a->x0 + (double)c, w->a->x0 + (double)c + 1, hover_top);
		sbuf_addf(b, " data-first=\"%llu\" data-last=\"%llu\" data-frame=\"%llu\"><title>",
			  (unsigned long long)k->first, (unsigned long long)k->last,
			  (unsigned long long)longest);
		if (k->count == 1) {
			sbuf_addf(b, "frame %llu\n", (unsigned long long)longest);
			title_panel(w, k->longest);
		} else {
			sbuf_addf(b, "frames %llu to %llu (%zu), the longest frame %llu\n",
				  (unsigned long long)k->first, (unsigned long long)k->last, k->count,
				  (unsigned long long)longest);
			panel_name(b, w->s, w->panel);
			if (k->lo == STATS_ABSENT)
				sbuf_adds(b, p->kind == STATS_CPU ? ": no frame time" :
					  ": no work in these frames");
			else
				sbuf_addf(b, " frame time %.3f to %.3f ms", k->lo / 1e6, k->hi / 1e6);
			if (k->spikes)
				sbuf_addf(b, ", %u spike%s (above %.3f ms)", k->spikes,
					  k->spikes == 1 ? "" : "s", p->spikes.threshold_ns / 1e6);
		}
		title_rows(w, k->longest);
		sbuf_adds(b, "</title></rect>\n");
	}
	free(col);
	free(peak);
	return true;
}

bool plot_rows(struct sbuf *b, const stats *s, uint32_t panel, const uint32_t *rows, size_t count,
	       const struct plot_frames *a, double top, double hover_top)
{
	struct rows w = { .s = s, .panel = panel, .rows = rows, .a = a, .out = b,
			  .count = count < PLOT_MAX_ROWS ? count : PLOT_MAX_ROWS };
	size_t frames = stats_frame_count(s);
	bool ok = true;

	w.top = top + ROWS_HEAD_H;
	w.bottom = w.count ? w.top + (double)w.count * (STRIP_H + STRIP_GAP) - STRIP_GAP :
			     top + ROWS_HEAD_H + NONE_H - 4;
	uint32_t highest = 0;
	for (size_t k = 0; k < w.count; k++)
		if (stats_row(s, rows[k])->time.max_ns > highest)
			highest = stats_row(s, rows[k])->time.max_ns;
	double step = svg_nice_step(highest / 1e6, 5);
	w.top_ms = ceil(highest / 1e6 / step) * step;
	if (!(w.top_ms > 0))
		w.top_ms = 1;

	struct sbuf head = { 0 };
	const struct stats_row *p = stats_row(s, panel);
	bool cpu = p->kind == STATS_CPU;
	if (w.count)
		sbuf_addf(&head, "%s %zu %s of the most time over the run, one scale for all: "
				 "0 to ", w.count == 1 ? "the" : "the top", w.count,
			  cpu ? (w.count == 1 ? "CPU scope or task" : "CPU scopes and tasks") :
				(w.count == 1 ? "scope" : "scopes"));
	else
		sbuf_addf(&head, "no %s in these frames", cpu ? "CPU scopes or tasks" : "scopes");
	sbuf_addf(b, "<g data-rows=\"%zu\">\n<text x=\"8\" y=\"%.1f\">", w.count, top + 15);
	svg_text(b, head.data ? head.data : "", head.len);
	if (w.count) {
		svg_number(b, w.top_ms, w.top_ms);
		sbuf_adds(b, " ms");
	}
	sbuf_adds(b, "</text>\n");
	ok = !head.failed;
	sbuf_release(&head);

	for (size_t k = 0; k < w.count; k++)
		title_name(&w, k);
	size_t columns = (size_t)(a->x1 - a->x0) + 1;
	if (frames <= columns) {
		strips_by_frame(&w);
		if (w.count)
			plot_frame_ticks(b, a, w.bottom);
		/* Last, above the graph and the strips: they take the pointer. */
		hovers_by_frame(&w, hover_top);
	} else {
		if (!by_column(&w, hover_top))
			ok = false;
		else if (w.count)
			plot_frame_ticks(b, a, w.bottom);
	}
	sbuf_adds(b, "</g>\n");
	for (size_t k = 0; k < w.count; k++) {
		ok = ok && !w.text[k].title_name.failed;
		sbuf_release(&w.text[k].title_name);
	}
	return ok;
}
