/* SPDX-License-Identifier: MIT */
/*
 * plot_present.c: a run's present intervals as a panel of its picture,
 * under the frame times: each interval at the frame of its later
 * present, the refresh period and its multiples where known, the
 * intervals that missed v-syncs marked. Memory follows the picture's
 * width, not the run's length.
 */
#include "report_internal.h"

#include <math.h>
#include <stdlib.h>

#define HEAD_H 28.0
#define PLOT_H 160.0
#define AXIS_H 30.0
#define GAP 14.0

double plot_present_height(const stats *s)
{
	const struct present_summary *p = present_run_summary(stats_presents(s));
	return p->intervals ? HEAD_H + PLOT_H + AXIS_H + GAP : 0;
}

/* One pixel column's intervals: the longest, and those that missed. */
struct column {
	int64_t hi;              /* -1: none */
	uint64_t hi_frame;
	uint32_t missed;         /* v-syncs missed by its intervals */
	uint32_t late;           /* its intervals that missed one or more */
};

bool plot_present_panel(struct sbuf *b, const stats *s, const struct plot_frames *a,
			double width, double top)
{
	const present_run *run = stats_presents(s);
	const struct present_summary *p = present_run_summary(run);
	size_t n = 0;
	const struct present_interval *iv = present_run_intervals(run, &n);
	if (!n)
		return true;
	double y0 = top + HEAD_H, y1 = y0 + PLOT_H;
	double top_ms = p->max_ns / 1e6;
	if (p->refresh_ns && p->refresh_ns / 1e6 > top_ms)
		top_ms = p->refresh_ns / 1e6;
	double step = svg_nice_step(top_ms, 5);
	top_ms = ceil(top_ms / step * 1.04) * step;
	if (!(top_ms > 0))
		top_ms = 1;
#define Y(ms) (y1 - (ms) / top_ms * (y1 - y0))

	struct sbuf head = { 0 };
	sbuf_addf(&head, "Present interval (%s) \xc2\xb7 %llu interval%s \xc2\xb7 median %.3f ms "
			 "\xc2\xb7 p99 %.3f ms \xc2\xb7 max %.3f ms (frame %llu)",
		  p->clock == PRESENT_CLOCK_SHOWN ? "shown to shown" :
		  p->clock == PRESENT_CLOCK_MIXED ? "shown to shown where known" :
						    "present call to present call: when frames were "
						    "shown is not known",
		  (unsigned long long)p->intervals, p->intervals == 1 ? "" : "s",
		  p->median_ns / 1e6, p->p99_ns / 1e6, p->max_ns / 1e6,
		  (unsigned long long)p->max_frame);
	if (p->counted)
		sbuf_addf(&head, " \xc2\xb7 %llu missed v-sync%s, %llu frame%s shown late",
			  (unsigned long long)p->missed_vsyncs, p->missed_vsyncs == 1 ? "" : "s",
			  (unsigned long long)p->late, p->late == 1 ? "" : "s");
	sbuf_addf(b, "<g data-present=\"interval\">\n<text x=\"8\" y=\"%.1f\" class=\"h2\">", top + 16);
	svg_text_fit(b, head.data ? head.data : "", head.len, 12.5, width - 16.0);
	sbuf_adds(b, "</text>\n");
	bool ok = !head.failed;
	sbuf_release(&head);

	sbuf_addf(b, "<rect class=\"lane\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
		  a->x0, y0, a->x1 - a->x0, PLOT_H);
	for (unsigned k = 0; k * step <= top_ms * (1 + 1e-9) && k < 100; k++) {
		double y = Y(k * step);
		sbuf_addf(b, "<path class=\"grid\" d=\"M%.1f %.1fH%.1f\"/>\n", a->x0, y, a->x1);
		sbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"small end\">", a->x0 - 6, y + 3.5);
		svg_number(b, k * step, step);
		sbuf_adds(b, " ms</text>\n");
	}
	sbuf_addf(b, "<path class=\"axis\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n", a->x0, y0, y1, a->x1);
	plot_frame_ticks(b, a, y1);
	/* The refresh period and its multiples: where intervals that kept
	 * pace, and those that missed one v-sync or more, lie. */
	for (int k = 1; p->refresh_ns && k <= 8 && k * p->refresh_ns / 1e6 <= top_ms; k++)
		sbuf_addf(b, "<path class=\"median\" d=\"M%.1f %.1fH%.1f\"><title>%d refresh "
			     "period%s, %.3f ms</title></path>\n", a->x0, Y(k * p->refresh_ns / 1e6),
			  a->x1, k, k == 1 ? "" : "s", k * p->refresh_ns / 1e6);

	size_t columns = (size_t)(a->x1 - a->x0) + 1;
	struct column *col = malloc(columns * sizeof(*col));
	if (!col)
		return false;
	for (size_t c = 0; c < columns; c++)
		col[c] = (struct column){ -1, 0, 0, 0 };
	for (size_t i = 0; i < n; i++) {
		double x = plot_frame_x(a, iv[i].frame) - a->x0;
		size_t c = x <= 0 ? 0 : (size_t)x >= columns ? columns - 1 : (size_t)x;
		if (iv[i].ns > col[c].hi) {
			col[c].hi = iv[i].ns;
			col[c].hi_frame = iv[i].frame;
		}
		col[c].missed += iv[i].missed;
		col[c].late += iv[i].missed > 0;
	}
	sbuf_adds(b, "<path class=\"series\" d=\"");
	bool drawing = false;
	for (size_t c = 0; c < columns; c++) {
		if (col[c].hi < 0)
			continue;
		sbuf_addf(b, "%s%.1f %.1f", drawing ? "L" : "M", a->x0 + (double)c + 0.5,
			  Y(col[c].hi / 1e6));
		drawing = true;
	}
	sbuf_adds(b, "\"/>\n");
	for (size_t c = 0; c < columns; c++) {
		if (!col[c].late)
			continue;
		sbuf_addf(b, "<circle class=\"spike\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"><title>frame "
			     "%llu: %.3f ms; %u v-sync%s missed</title></circle>\n",
			  a->x0 + (double)c + 0.5, Y(col[c].hi / 1e6),
			  (unsigned long long)col[c].hi_frame, col[c].hi / 1e6, col[c].missed,
			  col[c].missed == 1 ? "" : "s");
	}
	free(col);
	sbuf_adds(b, "</g>\n");
	return ok;
#undef Y
}
