/* SPDX-License-Identifier: MIT */
/*
 * grid.c: what the tables of report/ are drawn with (cells sized by
 * display width, borders in Unicode or ASCII, bars, indented names) and
 * the fields of CSV and JSON output.
 */
#include "report_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define BAR_CELLS 8

const struct glyphs grid_unicode = {
	"─", "│", "┌", "┬", "┐", "├", "┼", "┤", "└", "┴", "┘", "┬", " · ",
	{ " ", "▏", "▎", "▍", "▌", "▋", "▊", "▉" }, "█", "\xEF\xBF\xBD",
};

const struct glyphs grid_ascii = {
	"-", "|", "+", "+", "+", "+", "+", "+", "+", "+", "+", "+", " | ",
	{ " ", "-", "-", "-", "=", "=", "=", "=" }, "#", "?",
};

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

static void grid_border(struct sbuf *out, const struct grid *gr, const char *left,
			const char *inner, const char *outer, const char *right, bool spans)
{
	const struct glyphs *g = gr->g;
	sbuf_adds(out, left);
	for (size_t i = 0; i < gr->cols; i++) {
		grid_repeat(out, g->h, gr->width[i] + 2);
		if (i + 1 == gr->cols)
			break;
		bool same = gr->group[i + 1] == gr->group[i];
		sbuf_adds(out, same ? (spans ? g->h : inner) : outer);
	}
	sbuf_adds(out, right);
	sbuf_adds(out, "\n");
}

void grid_pad(struct sbuf *out, const char *text, size_t len, size_t width, bool right)
{
	size_t w = text_width(text, len);
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

void grid_render(struct grid *gr, struct sbuf *out, const struct report_sink *sink)
{
	const struct glyphs *g = gr->g;
	size_t n = gr->cols;
	size_t rows = n ? gr->cell_count / n : 0;

	if (gr->failed || gr->text.failed) {
		out->failed = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		gr->width[i] = text_width(gr->titles[i], strlen(gr->titles[i]));
	for (size_t r = 0; r < rows; r++)
		for (size_t i = 0; i < n; i++) {
			const char *t = gr->text.data + gr->cells[r * n + i];
			size_t w = text_width(t, strlen(t));
			if (w > gr->width[i])
				gr->width[i] = w;
		}
	if (gr->grouped) {
		/* A group's title must fit the span of its columns. */
		for (int group = 0; group < 4; group++) {
			size_t span = 0, last = SIZE_MAX;
			for (size_t i = 0; i < n; i++)
				if (gr->group[i] == group) {
					span += gr->width[i] + 3;
					last = i;
				}
			if (last == SIZE_MAX || !gr->group_titles[group])
				continue;
			span -= 3;
			size_t need = strlen(gr->group_titles[group]);
			if (span < need)
				gr->width[last] += need - span;
		}
		grid_border(out, gr, g->tl, g->h, g->tm, g->tr, true);
		sbuf_adds(out, g->v);
		for (int group = 0; group < 4; group++) {
			size_t span = 0;
			bool present = false;
			for (size_t i = 0; i < n; i++)
				if (gr->group[i] == group) {
					span += gr->width[i] + 3;
					present = true;
				}
			if (!present)
				continue;
			span -= 1;
			grid_centre(out, gr->group_titles[group] ? gr->group_titles[group] : "", span);
			sbuf_adds(out, g->v);
		}
		sbuf_adds(out, "\n");
		grid_border(out, gr, g->ml, g->mt, g->mm, g->mr, false);
	} else {
		grid_border(out, gr, g->tl, g->tm, g->tm, g->tr, false);
	}
	sbuf_adds(out, g->v);
	for (size_t i = 0; i < n; i++) {
		grid_pad(out, gr->titles[i], strlen(gr->titles[i]), gr->width[i], i + 1 < n);
		sbuf_adds(out, g->v);
	}
	sbuf_adds(out, "\n");
	grid_border(out, gr, g->ml, g->mm, g->mm, g->mr, false);
	for (size_t r = 0; r < rows; r++) {
		sbuf_adds(out, g->v);
		for (size_t i = 0; i < n; i++) {
			const char *t = gr->text.data + gr->cells[r * n + i];
			grid_pad(out, t, strlen(t), gr->width[i], i + 1 < n);
			sbuf_adds(out, g->v);
		}
		sbuf_adds(out, "\n");
		sbuf_emit_some(sink, out);
	}
	grid_border(out, gr, g->bl, g->bm, g->bm, g->br, false);
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
	for (int i = 0; i < BAR_CELLS; i++) {
		int e = eighths - i * 8;
		sbuf_adds(&b, e >= 8 ? gr->g->full : gr->g->partial[e > 0 ? e : 0]);
	}
	sbuf_addf(&b, " %5.1f%%", pct);
	if (b.failed)
		gr->failed = true;
	grid_cell(gr, b.data ? b.data : "", b.len);
	sbuf_release(&b);
}

/* A name, indented, with control characters shown as replacements. */
void grid_name(struct grid *gr, uint32_t level, const char *name, size_t len,
		      const char *suffix)
{
	struct sbuf b = { 0 };
	for (uint32_t i = 0; i < level; i++)
		sbuf_adds(&b, "   ");
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)name[i];
		bool c1 = ch == 0xC2 && i + 1 < len && (unsigned char)name[i + 1] >= 0x80 &&
			  (unsigned char)name[i + 1] <= 0x9F;
		if (ch < 0x20 || ch == 0x7F || c1) {
			sbuf_adds(&b, gr->g->replacement);
			i += c1;
		} else {
			sbuf_add(&b, (const char *)&ch, 1);
		}
	}
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
