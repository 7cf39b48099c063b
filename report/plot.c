/* SPDX-License-Identifier: MIT */
/*
 * plot.c: what the pictures of `crumbs plot` share: their settings and
 * options, and the SVG they are written in: text escaped for XML and cut
 * to fit, the style that reads on a light or a dark page, axes.
 */
#include "report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ------------------------------------------------------------------------ */
/* Settings                                                                 */
/* ------------------------------------------------------------------------ */

void plot_settings_init(struct plot_settings *p)
{
	memset(p, 0, sizeof(*p));
	stats_settings_init(&p->stats);
	/* No --frame: the run graph, or the timeline of a capture's one frame. */
	p->stats.report.frames = FRAMES_ALL;
	p->width = PLOT_DEFAULT_WIDTH;
	p->rows = PLOT_DEFAULT_ROWS;
}

void plot_settings_release(struct plot_settings *p)
{
	stats_settings_release(&p->stats);
	free(p->output);
	memset(p, 0, sizeof(*p));
}

#define AT(field) offsetof(struct plot_settings, field)
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

const struct option_spec plot_options[] = {
	{ "output", 'o', "FILE", "write the SVG to FILE (default: standard output)",
	  OPT_STRING, .offset = AT(output) },
	{ "width", 'w', "PX", "the picture's width in pixels (default 1200)",
	  OPT_UINT, .offset = AT(width), .min = PLOT_MIN_WIDTH, .max = PLOT_MAX_WIDTH,
	  .what = "a width in pixels from " TEXT(PLOT_MIN_WIDTH) " to " TEXT(PLOT_MAX_WIDTH) },
	{ "rows", 0, "N", "below each graph, the N scopes of most time over the run (6; 0: none)",
	  OPT_UINT, .offset = AT(rows), .max = PLOT_MAX_ROWS,
	  .what = "a number of rows from 0 to " TEXT(PLOT_MAX_ROWS) },
};
const size_t plot_option_count = sizeof(plot_options) / sizeof(plot_options[0]);

size_t plot_stats_options(struct option_spec *out)
{
	static const struct option_borrowed which[] = {
		{ "frames", "the run graph of frames numbered A to B, inclusive (A: to the end, :B from the start)" },
		{ "spike", "mark GPU frames above MS milliseconds (20) or F times the median (1.5x, the default)" },
		{ "budget", "draw the GPU frame-time limits of FILE (crumbs stats' budget lines that match 'GPU N')" },
		{ "no-cpu", "the timeline draws the GPUs alone: no CPU lanes" },
	};
	return options_borrow(stats_options, stats_option_count, which,
			      sizeof(which) / sizeof(which[0]), out);
}

size_t plot_report_options(struct option_spec *out)
{
	static const struct option_borrowed which[] = {
		{ "frame", "draw the timeline of frame N (or the first or last); all: the frame times (the default)" },
		{ "gpu", "only GPU N (no CPU lanes)" },
		{ "queue", "only queues whose name matches, e.g. 'Graphics 0' or 'Compute*' (no CPU lanes)" },
		{ "ignore-case", "match --queue and budget patterns ignoring case" },
		{ "max-depth", "the timeline shows N levels of scopes below each queue" },
		{ "leaf", "the timeline shows leaf events: draws, dispatches, copies (default)" },
		{ "no-leaf", "the timeline hides leaf events" },
	};
	return options_borrow(report_options, report_option_count, which,
			      sizeof(which) / sizeof(which[0]), out);
}

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

/* Width estimates: generic sans-serif fonts average about half an em a
 * character; 0.6 leaves room for wide letters and bold. */
#define EM_PER_CELL 0.6

/* The next code point of s, or U+FFFD for a byte that does not start one
 * that XML may hold (invalid UTF-8, control characters, non-characters).
 * Returns the bytes it took. */
static size_t next_char(const char *s, size_t len, int32_t *cp)
{
	utf8proc_int32_t c;
	utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &c);
	if (n <= 0) {
		*cp = 0xfffd;
		return 1;
	}
	if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0xfffe || c == 0xffff)
		c = 0xfffd;
	*cp = c;
	return (size_t)n;
}

static void add_char(struct sbuf *b, int32_t cp)
{
	switch (cp) {
	case '&':
		sbuf_adds(b, "&amp;");
		return;
	case '<':
		sbuf_adds(b, "&lt;");
		return;
	case '>':
		sbuf_adds(b, "&gt;");
		return;
	case '"':
		sbuf_adds(b, "&quot;");
		return;
	case '\'':
		sbuf_adds(b, "&apos;");
		return;
	}
	utf8proc_uint8_t enc[4];
	utf8proc_ssize_t n = utf8proc_encode_char(cp, enc);
	sbuf_add(b, (const char *)enc, (size_t)n);
}

void svg_text(struct sbuf *b, const char *s, size_t len)
{
	while (len > 0) {
		int32_t cp;
		size_t n = next_char(s, len, &cp);
		add_char(b, cp);
		s += n;
		len -= n;
	}
}

static double char_px(int32_t cp, double font_px)
{
	int w = utf8proc_charwidth(cp);
	return (w > 0 ? w : 0) * EM_PER_CELL * font_px;
}

double svg_text_px(const char *s, size_t len, double font_px)
{
	double px = 0;
	while (len > 0) {
		int32_t cp;
		size_t n = next_char(s, len, &cp);
		px += char_px(cp, font_px);
		s += n;
		len -= n;
	}
	return px;
}

bool svg_text_fit(struct sbuf *b, const char *s, size_t len, double font_px, double max_px)
{
	if (svg_text_px(s, len, font_px) <= max_px) {
		svg_text(b, s, len);
		return true;
	}
	/* Cut: the longest start that leaves room for the ellipsis, and at
	 * least two characters of it, or nothing. */
	double room = max_px - char_px(0x2026, font_px);
	double px = 0;
	size_t keep = 0, chars = 0;
	for (size_t at = 0; at < len;) {
		int32_t cp;
		size_t n = next_char(s + at, len - at, &cp);
		if (px + char_px(cp, font_px) > room)
			break;
		px += char_px(cp, font_px);
		at += n;
		keep = at;
		chars++;
	}
	if (chars < 2)
		return false;
	svg_text(b, s, keep);
	sbuf_adds(b, "\xe2\x80\xa6");
	return true;
}

/* ------------------------------------------------------------------------ */
/* The document                                                             */
/* ------------------------------------------------------------------------ */

/*
 * Colours. Blocks are mid-tone fills with near-black text and a thin dark
 * edge, which read the same on white and on black; the rest of the text is
 * dark with a light halo, or light with a dark halo when the reader asks
 * for a dark scheme, so that either reads on either page. Lines and
 * shading are grey at part opacity, which shows on both.
 */
static const char style[] =
	"<style>\n"
	"text{font-family:sans-serif;font-size:11px;fill:#1d1d1d;stroke:#fff;stroke-opacity:.7;"
	"stroke-width:2.5px;stroke-linejoin:round;paint-order:stroke}\n"
	"@media (prefers-color-scheme:dark){text{fill:#e8e8e8;stroke:#111}}\n"
	"text.h1{font-size:15px;font-weight:bold}\n"
	"text.h2{font-size:12.5px;font-weight:bold}\n"
	"text.small{font-size:10px}\n"
	"text.blk{font-size:10.5px;fill:#111;stroke:none}\n"
	"text.end{text-anchor:end}\n"
	"text.mid{text-anchor:middle}\n"
	".grid,.axis,.median,.p95,.threshold,.budget{fill:none}\n"
	".grid{stroke:#8c8c8c;stroke-opacity:.3;stroke-width:1}\n"
	".axis{stroke:#8c8c8c;stroke-width:1}\n"
	".lane{fill:#8c8c8c;fill-opacity:.08;stroke:#8c8c8c;stroke-opacity:.35}\n"
	".blk{stroke:#000;stroke-opacity:.45;stroke-width:.6}\n"
	".leaf{fill:#a9a9a9}\n"
	".busy{fill:#4e9f5d}\n"
	".wait{fill:#e05a47}\n"
	".idle{fill:url(#idle)}\n"
	".submit{fill:#8c8c8c}\n"
	".signal{fill:none;stroke:#e05a47;stroke-width:1.3;marker-end:url(#arrow)}\n"
	".submitted{fill:none;stroke:#4f8fd6;stroke-width:1.1;stroke-opacity:.8;"
	"marker-end:url(#arrow-submit)}\n"
	".dep{fill:none;stroke:#b05fc4;stroke-width:1.3;marker-end:url(#arrow-dep)}\n"
	".dep.violated{stroke:#e05a47;stroke-dasharray:4 2;marker-end:url(#arrow)}\n"
	".mark{fill:none;stroke:#b05fc4;stroke-width:1.5}\n"
	".cwait{fill:url(#cwait)}\n"
	".series{fill:none;stroke:#4f8fd6;stroke-width:1.4;stroke-linejoin:round}\n"
	".median{stroke:#4e9f5d;stroke-width:1.5;stroke-dasharray:6 3}\n"
	".p95{stroke:#e0a030;stroke-width:1.5;stroke-dasharray:2 2}\n"
	".threshold{stroke:#e05a47;stroke-width:1;stroke-opacity:.6;stroke-dasharray:1 3}\n"
	".spike{fill:#e05a47;stroke:#000;stroke-opacity:.5;stroke-width:.6}\n"
	".budget{stroke:#b05fc4;stroke-width:2}\n"
	".spikemark{fill:none;stroke:#e05a47;stroke-width:1;stroke-opacity:.75;stroke-dasharray:3 2}\n"
	".strip{fill:#8c8c8c;fill-opacity:.06;stroke:#8c8c8c;stroke-opacity:.3}\n"
	/* A frame's hover column: seen only under the pointer, where it
	 * shades the frame across its graph and rows. */
	".hover{fill:#8c8c8c;fill-opacity:0}.hover:hover{fill-opacity:.18}\n"
	".c0{fill:#7eb0d5}.c1{fill:#fd7f6f}.c2{fill:#b2e061}.c3{fill:#bd7ebe}.c4{fill:#ffb55a}\n"
	".c5{fill:#ffee65}.c6{fill:#beb9db}.c7{fill:#fdcce5}.c8{fill:#8bd3c7}.c9{fill:#d5b895}\n"
	"</style>\n"
	"<defs>\n"
	"<pattern id=\"idle\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\" "
	"patternTransform=\"rotate(45)\"><rect width=\"4\" height=\"4\" fill=\"#8c8c8c\" "
	"fill-opacity=\".15\"/><rect width=\"1.6\" height=\"4\" fill=\"#8c8c8c\" "
	"fill-opacity=\".8\"/></pattern>\n"
	"<marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"7\" "
	"markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0L8 4L0 8z\" fill=\"#e05a47\"/></marker>\n"
	"<marker id=\"arrow-submit\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"7\" "
	"markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0L8 4L0 8z\" fill=\"#4f8fd6\"/></marker>\n"
	"<marker id=\"arrow-dep\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"7\" "
	"markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0L8 4L0 8z\" fill=\"#b05fc4\"/></marker>\n"
	"<pattern id=\"cwait\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\" "
	"patternTransform=\"rotate(45)\"><rect width=\"4\" height=\"4\" fill=\"#e05a47\" "
	"fill-opacity=\".35\"/><rect width=\"1.6\" height=\"4\" fill=\"#e05a47\"/></pattern>\n"
	"</defs>\n";

void svg_begin(struct sbuf *b, double width, double height, const char *title, size_t title_len)
{
	sbuf_addf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		     "viewBox=\"0 0 %.0f %.0f\">\n<title>", width, height, width, height);
	svg_text(b, title, title_len);
	sbuf_adds(b, "</title>\n");
	sbuf_adds(b, style);
}

void svg_end(struct sbuf *b)
{
	sbuf_adds(b, "</svg>\n");
}

void svg_label(struct sbuf *b, double x, double y, const char *cls, const char *s, size_t len)
{
	sbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\"%s%s%s>", x, y, cls ? " class=\"" : "",
		  cls ? cls : "", cls ? "\"" : "");
	svg_text(b, s, len);
	sbuf_adds(b, "</text>\n");
}

/* ------------------------------------------------------------------------ */
/* Axes                                                                     */
/* ------------------------------------------------------------------------ */

double svg_nice_step(double span, double count)
{
	if (!(span > 0) || !(count >= 1))
		return 1;
	double raw = span / count;
	double p = pow(10, floor(log10(raw)));
	double f = raw / p;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

void svg_number(struct sbuf *b, double v, double step)
{
	int decimals = 0;
	while (decimals < 6 && step * pow(10, decimals) < 0.999)
		decimals++;
	/* Steps of 0.25 and the like need one more. */
	double scaled = step * pow(10, decimals);
	if (decimals < 6 && fabs(scaled - round(scaled)) > 1e-6)
		decimals++;
	if (fabs(v) < step * 1e-9)
		v = 0; /* no "-0" */
	sbuf_addf(b, "%.*f", decimals, v);
}
