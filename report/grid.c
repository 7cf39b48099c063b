/* SPDX-License-Identifier: MIT */
/*
 * grid.c: what the tables of report/ are drawn with (cells sized by
 * display width, borders in Unicode or ASCII, bars, indented names,
 * columns fitted to a width) and the fields of CSV and JSON output.
 */
#include "report_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define BAR_CELLS 8

#define UNICODE_GLYPHS(escape)                                                        \
	{ "─", "│", "┌", "┬", "┐", "├", "┼", "┤", "└", "┴", "┘", "┬", " · ",           \
	  { " ", "▏", "▎", "▍", "▌", "▋", "▊", "▉" }, "█", "\xEF\xBF\xBD", "…", escape }
#define ASCII_GLYPHS(escape)                                                          \
	{ "-", "|", "+", "+", "+", "+", "+", "+", "+", "+", "+", "+", " | ",           \
	  { " ", "-", "-", "-", "=", "=", "=", "=" }, "#", "?", "...", escape }

const struct glyphs grid_unicode = UNICODE_GLYPHS(false);
const struct glyphs grid_ascii = ASCII_GLYPHS(false);
/* For a locale whose character set is not UTF-8. */
static const struct glyphs unicode_escaped = UNICODE_GLYPHS(true);
static const struct glyphs ascii_escaped = ASCII_GLYPHS(true);

const struct glyphs *grid_glyphs(const struct report_settings *s)
{
	if (s->ascii_names)
		return s->ascii ? &ascii_escaped : &unicode_escaped;
	return s->ascii ? &grid_ascii : &grid_unicode;
}

void grid_cell(struct grid *gr, const char *text, size_t len)
{
	if (!array_room((void **)&gr->cells, &gr->cell_cap, gr->cell_count + 1,
			sizeof(*gr->cells))) {
		gr->failed = true;
		return;
	}
	gr->cells[gr->cell_count++] = gr->text.len;
	sbuf_add(&gr->text, text, len);
	sbuf_add(&gr->text, "", 1);
}

/* A number with `decimals` decimals (3 for ms). */
void grid_fixed(struct grid *gr, int decimals, double v)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	grid_cell(gr, buf, n > 0 ? (size_t)n : 0);
}

void grid_ms(struct grid *gr, double ns)
{
	grid_fixed(gr, 3, ns / 1e6);
}

void grid_count(struct grid *gr, uint64_t v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	grid_cell(gr, buf, (size_t)n);
}

void grid_repeat(struct sbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbuf_adds(b, s);
}

/* A border line over the columns at[0 .. n). */
static void grid_border(struct sbuf *out, const struct grid *gr, const size_t *at, size_t n,
			const char *left, const char *inner, const char *outer, const char *right,
			bool spans)
{
	const struct glyphs *g = gr->g;
	sbuf_adds(out, left);
	for (size_t k = 0; k < n; k++) {
		grid_repeat(out, g->h, gr->width[at[k]] + 2);
		if (k + 1 == n)
			break;
		bool same = gr->group[at[k + 1]] == gr->group[at[k]];
		sbuf_adds(out, same ? (spans ? g->h : inner) : outer);
	}
	sbuf_adds(out, right);
	sbuf_adds(out, "\n");
}

void grid_pad(struct sbuf *out, const char *text, size_t len, size_t width, bool right)
{
	size_t w = text_cells(text, len);
	size_t pad = width > w ? width - w : 0;
	sbuf_adds(out, " ");
	if (right)
		grid_repeat(out, " ", pad);
	sbuf_add(out, text, len);
	if (!right)
		grid_repeat(out, " ", pad);
	sbuf_adds(out, " ");
}

void grid_centre(struct sbuf *out, const char *title, size_t width)
{
	size_t tw = strlen(title);
	size_t left = width > tw ? (width - tw) / 2 : 0;
	grid_repeat(out, " ", left);
	sbuf_adds(out, title);
	grid_repeat(out, " ", width > tw + left ? width - tw - left : 0);
}

/* The widths of the shown columns with their group titles' room; the
 * line's width. */
static size_t fit_total(const size_t *width, const int *group, const bool *shown, size_t n,
			const char *const *titles, size_t title_count, size_t *out)
{
	size_t total = 1;
	memcpy(out, width, n * sizeof(*out));
	for (size_t t = 0; titles && t < title_count; t++) {
		if (!titles[t])
			continue;
		size_t span = 0, last = SIZE_MAX;
		for (size_t i = 0; i < n; i++)
			if (shown[i] && group[i] == (int)t) {
				span += out[i] + 3;
				last = i;
			}
		size_t need = strlen(titles[t]);
		if (last != SIZE_MAX && span - 3 < need)
			out[last] += need - (span - 3);
	}
	for (size_t i = 0; i < n; i++)
		if (shown[i])
			total += out[i] + 3;
	return total;
}

void grid_fit(size_t *width, const int *group, const uint8_t *drop, bool *shown, size_t n,
	      const char *const *titles, size_t title_count, size_t name_min, size_t limit)
{
	size_t w[MAX_COLS];
	for (size_t i = 0; i < n; i++)
		shown[i] = true;
	if (n == 0 || n > MAX_COLS)
		return;
	size_t total = fit_total(width, group, shown, n, titles, title_count, w);
	while (limit && total > limit) {
		size_t pick = n;
		for (size_t i = 0; i + 1 < n; i++)
			if (shown[i] && drop[i] && (pick == n || drop[i] < drop[pick]))
				pick = i;
		if (pick == n)
			break;
		shown[pick] = false;
		total = fit_total(width, group, shown, n, titles, title_count, w);
	}
	if (limit && total > limit && width[n - 1] > name_min) {
		size_t excess = total - limit;
		width[n - 1] = width[n - 1] > name_min + excess ? width[n - 1] - excess : name_min;
		fit_total(width, group, shown, n, titles, title_count, w);
	}
	memcpy(width, w, n * sizeof(*w));
}

void grid_render(struct grid *gr, struct sbuf *out, const struct report_sink *sink)
{
	const struct glyphs *g = gr->g;
	size_t n = gr->cols;
	size_t rows = n ? gr->cell_count / n : 0;
	size_t at[MAX_COLS], shown_count = 0;
	bool shown[MAX_COLS];
	struct sbuf cut = { 0 };

	if (gr->failed || gr->text.failed || n > MAX_COLS) {
		out->failed = true;
		return;
	}
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++)
		gr->width[i] = text_cells(gr->titles[i], strlen(gr->titles[i]));
	size_t name_min = gr->width[n - 1];
	for (size_t r = 0; r < rows; r++)
		for (size_t i = 0; i < n; i++) {
			const char *t = gr->text.data + gr->cells[r * n + i];
			size_t len = strlen(t);
			size_t w = text_cells(t, len);
			if (w > gr->width[i])
				gr->width[i] = w;
			if (i + 1 == n && gr->max_width) {
				size_t m = text_cut_min(t, len, g->ellipsis);
				name_min = m > name_min ? m : name_min;
			}
		}
	size_t names = gr->width[n - 1];
	grid_fit(gr->width, gr->group, gr->drop, shown, n, gr->grouped ? gr->group_titles : NULL,
		 4, name_min, gr->max_width);
	/* Names cut where their column narrowed (a group title may widen it
	 * again, which they then fill). */
	bool cutting = gr->width[n - 1] < names;
	for (size_t i = 0; i < n; i++)
		if (shown[i])
			at[shown_count++] = i;

	if (gr->grouped) {
		grid_border(out, gr, at, shown_count, g->tl, g->h, g->tm, g->tr, true);
		sbuf_adds(out, g->v);
		for (int group = 0; group < 4; group++) {
			size_t span = 0;
			bool present = false;
			for (size_t k = 0; k < shown_count; k++)
				if (gr->group[at[k]] == group) {
					span += gr->width[at[k]] + 3;
					present = true;
				}
			if (!present)
				continue;
			span -= 1;
			grid_centre(out, gr->group_titles[group] ? gr->group_titles[group] : "", span);
			sbuf_adds(out, g->v);
		}
		sbuf_adds(out, "\n");
		grid_border(out, gr, at, shown_count, g->ml, g->mt, g->mm, g->mr, false);
	} else {
		grid_border(out, gr, at, shown_count, g->tl, g->tm, g->tm, g->tr, false);
	}
	sbuf_adds(out, g->v);
	for (size_t k = 0; k < shown_count; k++) {
		size_t i = at[k];
		grid_pad(out, gr->titles[i], strlen(gr->titles[i]), gr->width[i], i + 1 < n);
		sbuf_adds(out, g->v);
	}
	sbuf_adds(out, "\n");
	grid_border(out, gr, at, shown_count, g->ml, g->mm, g->mm, g->mr, false);
	for (size_t r = 0; r < rows; r++) {
		sbuf_adds(out, g->v);
		for (size_t k = 0; k < shown_count; k++) {
			size_t i = at[k];
			const char *t = gr->text.data + gr->cells[r * n + i];
			size_t len = strlen(t);
			if (i + 1 == n && cutting) {
				cut.len = 0;
				text_cut(&cut, t, len, gr->width[i], g->ellipsis);
				t = cut.data ? cut.data : "";
				len = cut.len;
			}
			grid_pad(out, t, len, gr->width[i], i + 1 < n);
			sbuf_adds(out, g->v);
		}
		sbuf_adds(out, "\n");
		sbuf_emit_some(sink, out);
	}
	grid_border(out, gr, at, shown_count, g->bl, g->bm, g->bm, g->br, false);
	if (cut.failed)
		out->failed = true;
	sbuf_release(&cut);
}

void grid_release(struct grid *gr)
{
	sbuf_release(&gr->text);
	free(gr->cells);
}

void grid_bar(struct grid *gr, double pct)
{
	struct sbuf b = { 0 };
	double p = pct < 0 ? 0 : pct > 100 ? 100 : pct;
	int eighths = (int)(p / 100.0 * BAR_CELLS * 8 + 0.5);
	if (gr->color)
		sbuf_adds(&b, SGR_BAR);
	for (int i = 0; i < BAR_CELLS; i++) {
		int e = eighths - i * 8;
		sbuf_adds(&b, e >= 8 ? gr->g->full : gr->g->partial[e > 0 ? e : 0]);
	}
	if (gr->color)
		sbuf_adds(&b, SGR_RESET);
	sbuf_addf(&b, " %5.1f%%", pct);
	if (b.failed)
		gr->failed = true;
	grid_cell(gr, b.data ? b.data : "", b.len);
	sbuf_release(&b);
}

/* A name, indented, escaped (text_add_name). */
void grid_name(struct grid *gr, uint32_t level, const char *name, size_t len,
		      const char *suffix)
{
	struct sbuf b = { 0 };
	for (uint32_t i = 0; i < level; i++)
		sbuf_adds(&b, "   ");
	text_add_name(&b, gr->g, name, len);
	if (suffix)
		sbuf_adds(&b, suffix);
	if (b.failed)
		gr->failed = true;
	grid_cell(gr, b.data ? b.data : "", b.len);
	sbuf_release(&b);
}

void csv_field(struct sbuf *b, const char *s, size_t len)
{
	bool quote = false;
	for (size_t i = 0; i < len; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
			quote = true;
	if (!quote) {
		sbuf_add(b, s, len);
		return;
	}
	sbuf_adds(b, "\"");
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"')
			sbuf_adds(b, "\"");
		sbuf_add(b, s + i, 1);
	}
	sbuf_adds(b, "\"");
}

/* A JSON string: valid UTF-8 passes, invalid bytes become U+FFFD. */
void json_string(struct sbuf *b, const char *s, size_t len)
{
	const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
	sbuf_adds(b, "\"");
	while (len > 0) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t n = utf8proc_iterate(p, (utf8proc_ssize_t)len, &cp);
		if (n <= 0) {
			sbuf_adds(b, "\\ufffd");
			n = 1;
		} else if (cp == '"' || cp == '\\') {
			sbuf_addf(b, "\\%c", (char)cp);
		} else if (cp < 0x20) {
			sbuf_addf(b, "\\u%04x", (unsigned)cp);
		} else {
			sbuf_add(b, (const char *)p, (size_t)n);
		}
		p += n;
		len -= (size_t)n;
	}
	sbuf_adds(b, "\"");
}
