/* SPDX-License-Identifier: MIT */
/*
 * plot_memory.c: a run's video memory under a GPU's frame times in `crumbs
 * plot`: a line a memory heap, its bytes in use frame by frame (the
 * driver's usage where the allocations were not counted), on the frames'
 * axis of the graph above it.
 */
#include "report_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define HEAD_H 24.0
#define GRAPH_H 120.0
#define AXIS_H 26.0
#define GAP 14.0

/* The heaps' lines, told apart by the classes of the frame-time graph's
 * lines (a fifth heap is drawn as the first). */
static const char *const heap_class[] = { "series", "median", "p95", "budget" };

/* Whether the run's heaps of GPU gpu have points to draw. */
static bool gpu_has_memory(const stats *s, uint32_t gpu)
{
	const struct memory_stats *m = stats_memory(s);
	for (uint32_t i = 0; i < m->count; i++)
		if (m->heaps[i].gpu == gpu && memory_heap_points(&m->heaps[i])->count)
			return true;
	return false;
}

double plot_memory_height(const stats *s, uint32_t gpu)
{
	return gpu_has_memory(s, gpu) ? HEAD_H + GRAPH_H + AXIS_H + GAP : 0;
}

static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };

/* The unit of an axis up to `bytes`: its index in units, its size. */
static size_t unit_of(double bytes, double *scale)
{
	size_t u = 0;
	*scale = 1;
	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes >= *scale * 1024) {
		*scale *= 1024;
		u++;
	}
	return u;
}

bool plot_memory(struct sbuf *b, const stats *s, uint32_t gpu, const struct plot_frames *a,
		 double width, double top)
{
	if (!gpu_has_memory(s, gpu))
		return true;
	const struct memory_stats *m = stats_memory(s);
	struct sbuf head = { 0 };
	uint64_t highest = 0;
	sbuf_addf(&head, "GPU %" PRIu32 " \xc2\xb7 video memory in use at each frame's end", gpu);
	for (uint32_t i = 0; i < m->count; i++) {
		const struct memory_heap_stats *h = &m->heaps[i];
		const struct memory_series *se = memory_heap_series(h);
		const struct memory_points *pts = memory_heap_points(h);
		if (h->gpu != gpu || !se || !pts->count)
			continue;
		for (uint32_t k = 0; k < pts->count; k++)
			highest = pts->p[k].value > highest ? pts->p[k].value : highest;
		sbuf_addf(&head, " \xc2\xb7 heap %" PRIu32 "%s: high-water ", h->heap,
			  se == &h->usage ? " (driver's usage)" : "");
		text_bytes(&head, se->high);
		sbuf_adds(&head, ", growth ");
		vitals_signed_bytes(&head, (double)memory_series_growth(se));
	}
	sbuf_addf(b, "<g data-memory-gpu=\"%" PRIu32 "\">\n<text x=\"8\" y=\"%.1f\" class=\"h2\">", gpu,
		  top + 16);
	svg_text_fit(b, head.data ? head.data : "", head.len, 12.5, width - 16.0);
	sbuf_adds(b, "</text>\n");
	bool ok = !head.failed;
	sbuf_release(&head);

	double y0 = top + HEAD_H, y1 = y0 + GRAPH_H;
	/* Steps of whole numbers of the unit the highest value is read in:
	 * 20 MiB, not 19.1. */
	double scale;
	size_t unit = unit_of(highest > 0 ? (double)highest : 1, &scale);
	double step = svg_nice_step((highest > 0 ? (double)highest : 1) / scale, 4) * scale;
	double top_bytes = ceil((highest > 0 ? (double)highest : 1) / step * 1.04) * step;
	sbuf_addf(b, "<rect class=\"lane\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
		  a->x0, y0, a->x1 - a->x0, GRAPH_H);
	for (unsigned k = 0; k * step <= top_bytes * (1 + 1e-9) && k < 100; k++) {
		double y = y1 - k * step / top_bytes * GRAPH_H;
		sbuf_addf(b, "<path class=\"grid\" d=\"M%.1f %.1fH%.1f\"/>\n", a->x0, y, a->x1);
		sbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"small end\">", a->x0 - 6, y + 3.5);
		svg_number(b, k * step / scale, step / scale);
		sbuf_addf(b, " %s</text>\n", units[unit]);
	}
	sbuf_addf(b, "<path class=\"axis\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n", a->x0, y0, y1, a->x1);
	plot_frame_ticks(b, a, y1);

	/* A heap's line through its points (each the most in use in its
	 * group of frames, so that a peak is never smoothed away), named
	 * with its figures for a reader of the picture. */
	size_t drawn = 0;
	for (uint32_t i = 0; i < m->count; i++) {
		const struct memory_heap_stats *h = &m->heaps[i];
		const struct memory_series *se = memory_heap_series(h);
		const struct memory_points *pts = memory_heap_points(h);
		if (h->gpu != gpu || !se || !pts->count)
			continue;
		sbuf_addf(b, "<g data-heap=\"%" PRIu32 "\" data-source=\"%s\" data-high-bytes=\"%" PRIu64
			     "\" data-growth-bytes=\"%" PRId64 "\" data-points=\"%" PRIu32 "\">\n",
			  h->heap, se == &h->usage ? "budget" : "allocations", se->high,
			  memory_series_growth(se), pts->count);
		sbuf_addf(b, "<path class=\"%s\" d=\"",
			  heap_class[drawn++ % (sizeof(heap_class) / sizeof(heap_class[0]))]);
		for (uint32_t k = 0; k < pts->count; k++) {
			double x = plot_frame_x(a, pts->p[k].frame);
			double y = y1 - (double)pts->p[k].value / top_bytes * GRAPH_H;
			sbuf_addf(b, "%s%.1f %.1f", k ? "L" : "M", x, y);
		}
		if (pts->count == 1)
			sbuf_adds(b, "h1");
		sbuf_addf(b, "\"><title>heap %" PRIu32 ": ", h->heap);
		text_bytes(b, pts->p[pts->count - 1].value);
		sbuf_adds(b, " at the last frame, high-water ");
		text_bytes(b, se->high);
		sbuf_addf(b, " (frame %" PRIu64 ")</title></path>\n", se->high_frame);
		char label[64];
		int n = snprintf(label, sizeof(label), "heap %" PRIu32, h->heap);
		double ly = y1 - (double)pts->p[pts->count - 1].value / top_bytes * GRAPH_H;
		svg_label(b, a->x1 + 6, ly + 3.5, "small", label, n > 0 ? (size_t)n : 0);
		sbuf_adds(b, "</g>\n");
	}
	sbuf_adds(b, "</g>\n");
	return ok && !b->failed;
}
