/* SPDX-License-Identifier: MIT */
/*
 * vitals.c: the vital signs `crumbs stats` opens with, one line each, read
 * like an electrocardiogram: each GPU's frame time, the CPU's, each heap's
 * video memory high-water and growth, each GPU's allocations a frame; as
 * text, JSON, CSV rows and Markdown.
 */
#include "report_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* "+1.0 MiB", "-512 B", "0 B". */
void vitals_signed_bytes(struct sbuf *b, double v)
{
	if (v >= 0.5)
		sbuf_adds(b, "+");
	else if (v <= -0.5)
		sbuf_adds(b, "-");
	double a = fabs(v);
	text_bytes(b, a >= (double)UINT64_MAX ? UINT64_MAX : (uint64_t)llround(a));
}

/* "median 11.034 ms · p99 25.840 ms · high-water 25.840 ms (frame 10) · 2
 * spikes, longest run 1 frame from frame 2". */
static void frame_time_text(struct sbuf *out, const struct glyphs *g, const struct stats_row *r)
{
	const struct stats_summary *t = &r->time;
	if (!t->frames) {
		sbuf_adds(out, "no busy time in any frame\n");
		return;
	}
	sbuf_addf(out, "median %.3f ms%sp99 %.3f ms%shigh-water %.3f ms (frame %" PRIu64 ")%s",
		  t->median_ns / 1e6, g->sep, t->p99_ns / 1e6, g->sep, t->max_ns / 1e6,
		  t->max_frame, g->sep);
	sbuf_addf(out, "%" PRIu64 " spike%s", r->spikes.count, r->spikes.count == 1 ? "" : "s");
	if (r->spikes.count)
		sbuf_addf(out, ", longest run %" PRIu64 " frame%s from frame %" PRIu64,
			  r->spikes.longest_run, r->spikes.longest_run == 1 ? "" : "s",
			  r->spikes.longest_run_first);
	sbuf_adds(out, "\n");
}

/* The presentation's vital signs (present-to-present interval and missed
 * v-syncs), between the frame times and the memory (stats_present.c). */
static void present_text(struct sbuf *out, const struct stats_settings *st,
			 const struct capture_meta *meta, const stats *s, const struct glyphs *g)
{
	(void)st;
	(void)meta;
	stats_present_line(out, g, stats_presents(s));
}

/* Whether GPU gpu's rows are shown (--gpu). */
static bool gpu_shown(const struct stats_settings *st, uint32_t gpu)
{
	return st->report.gpu < 0 || (uint32_t)st->report.gpu == gpu;
}

/* The CPU frame time's row where it is shown (as the CPU's tables are:
 * the run held CPU threads, and --no-cpu, a GPU or a queue does not leave
 * them out), else STATS_NONE. */
static uint32_t cpu_shown(const struct stats_settings *st, const stats *s)
{
	uint32_t cpu = stats_cpu_row(s);
	if (cpu == STATS_NONE || !stats_has_cpu(s) || st->no_cpu ||
	    !report_cpu_chosen(&st->report) || !stats_row(s, cpu)->time.frames)
		return STATS_NONE;
	return cpu;
}

/* "GPU 0 heap 1 memory: high-water 104.0 MiB (frame 11) · growth +9.0 MiB
 * over 10 frames, +1.0 MiB a frame · 4.0 GiB device-local". */
static void heap_text(struct sbuf *out, const struct glyphs *g, const struct memory_heap_stats *h)
{
	const struct memory_series *se = memory_heap_series(h);
	if (!se)
		return;
	bool driver = se == &h->usage;
	sbuf_addf(out, "GPU %" PRIu32 " heap %" PRIu32 " memory: %s", h->gpu, h->heap,
		  driver ? "the driver's usage, high-water " : "high-water ");
	text_bytes(out, se->high);
	sbuf_addf(out, " (frame %" PRIu64 ")%sgrowth ", se->high_frame, g->sep);
	vitals_signed_bytes(out, (double)memory_series_growth(se));
	sbuf_addf(out, " over %" PRIu64 " frame%s", se->frames, se->frames == 1 ? "" : "s");
	if (se->frames >= 2) {
		sbuf_adds(out, ", ");
		vitals_signed_bytes(out, memory_series_slope(se));
		sbuf_adds(out, " a frame");
	}
	sbuf_adds(out, g->sep);
	text_bytes(out, h->size);
	sbuf_adds(out, h->flags & CRUMBS_MEMORY_HEAP_DEVICE_LOCAL ? " device-local" : " host");
	if (h->budget_frames) {
		sbuf_addf(out, "%sbudget at least ", g->sep);
		text_bytes(out, h->least_budget);
	}
	sbuf_adds(out, "\n");
}

void vitals_text(struct sbuf *out, const struct stats_settings *st,
		 const struct capture_meta *meta, const stats *s, const struct glyphs *g)
{
	if (!stats_frame_count(s))
		return;
	sbuf_adds(out, "\nVital signs\n");
	for (uint32_t gi = 0; gi < meta->gpu_count; gi++) {
		uint32_t row = stats_gpu_row(s, gi);
		if (row == STATS_NONE || !gpu_shown(st, gi))
			continue;
		sbuf_addf(out, "GPU %" PRIu32 " frame time: ", gi);
		frame_time_text(out, g, stats_row(s, row));
	}
	uint32_t cpu = cpu_shown(st, s);
	if (cpu != STATS_NONE) {
		sbuf_adds(out, "CPU frame time: ");
		frame_time_text(out, g, stats_row(s, cpu));
	}
	present_text(out, st, meta, s, g);
	const struct memory_stats *m = stats_memory(s);
	for (uint32_t i = 0; i < m->count; i++)
		if (gpu_shown(st, m->heaps[i].gpu))
			heap_text(out, g, &m->heaps[i]);
	for (uint32_t i = 0; i < m->gpu_count; i++) {
		const struct memory_gpu_stats *gs = &m->gpus[i];
		if (!gs->frames || !gpu_shown(st, gs->gpu))
			continue;
		if (!gs->allocations && !gs->frees) {
			sbuf_addf(out, "GPU %" PRIu32 " allocations: none in these frames\n", gs->gpu);
			continue;
		}
		sbuf_addf(out, "GPU %" PRIu32 " allocations: %.1f a frame (most %" PRIu64
			       ", frame %" PRIu64 ")%s%.1f frees a frame\n",
			  gs->gpu, (double)gs->allocations / (double)gs->frames, gs->most_allocations,
			  gs->most_allocations_frame, g->sep, (double)gs->frees / (double)gs->frames);
	}
	if (!m->count)
		sbuf_adds(out, "video memory: not in these frames\n");
}

/* ------------------------------------------------------------------------ */
/* JSON, CSV, Markdown                                                      */
/* ------------------------------------------------------------------------ */

static void json_frame_time(struct sbuf *b, const struct stats_row *r)
{
	const struct stats_summary *t = &r->time;
	sbuf_addf(b, "{\"frames\":%" PRIu64 ",\"median_ns\":%" PRIu32 ",\"p99_ns\":%" PRIu32
		     ",\"high_ns\":%" PRIu32 ",\"high_frame\":%" PRIu64 ",\"spikes\":%" PRIu64
		     ",\"longest_run\":%" PRIu64 ",\"longest_run_first\":%" PRIu64 "}",
		  t->frames, t->median_ns, t->p99_ns, t->max_ns, t->max_frame, r->spikes.count,
		  r->spikes.longest_run, r->spikes.longest_run_first);
}

void vitals_json(struct sbuf *b, const struct stats_settings *st,
		 const struct capture_meta *meta, const stats *s)
{
	sbuf_adds(b, ",\"vital_signs\":{\"gpu_frame_time\":[");
	bool first = true;
	for (uint32_t gi = 0; gi < meta->gpu_count; gi++) {
		uint32_t row = stats_gpu_row(s, gi);
		if (row == STATS_NONE || !gpu_shown(st, gi))
			continue;
		sbuf_addf(b, "%s{\"gpu\":%" PRIu32 ",\"time\":", first ? "" : ",", gi);
		json_frame_time(b, stats_row(s, row));
		sbuf_adds(b, "}");
		first = false;
	}
	sbuf_adds(b, "],\"cpu_frame_time\":");
	uint32_t cpu = cpu_shown(st, s);
	if (cpu != STATS_NONE)
		json_frame_time(b, stats_row(s, cpu));
	else
		sbuf_adds(b, "null");
	sbuf_adds(b, ",\"memory\":[");
	const struct memory_stats *m = stats_memory(s);
	first = true;
	for (uint32_t i = 0; i < m->count; i++) {
		const struct memory_heap_stats *h = &m->heaps[i];
		const struct memory_series *se = memory_heap_series(h);
		if (!se || !gpu_shown(st, h->gpu))
			continue;
		sbuf_addf(b, "%s{\"gpu\":%" PRIu32 ",\"heap\":%" PRIu32 ",\"device_local\":%s,"
			     "\"size_bytes\":%" PRIu64 ",\"source\":\"%s\",\"frames\":%" PRIu64
			     ",\"high_bytes\":%" PRIu64 ",\"high_frame\":%" PRIu64
			     ",\"first_bytes\":%" PRIu64 ",\"last_bytes\":%" PRIu64
			     ",\"growth_bytes\":%" PRId64 ",\"slope_bytes_per_frame\":%.3f",
			  first ? "" : ",", h->gpu, h->heap,
			  h->flags & CRUMBS_MEMORY_HEAP_DEVICE_LOCAL ? "true" : "false", h->size,
			  se == &h->usage ? "budget" : "allocations", se->frames, se->high,
			  se->high_frame, se->first, se->last, memory_series_growth(se),
			  memory_series_slope(se));
		if (se == &h->use)
			sbuf_addf(b, ",\"allocations\":%" PRIu64 ",\"frees\":%" PRIu64
				     ",\"allocated_bytes\":%" PRIu64 ",\"freed_bytes\":%" PRIu64,
				  h->allocations, h->frees, h->allocated, h->freed);
		if (h->budget_frames)
			sbuf_addf(b, ",\"usage_high_bytes\":%" PRIu64 ",\"least_budget_bytes\":%" PRIu64,
				  h->usage.high, h->least_budget);
		sbuf_adds(b, "}");
		first = false;
	}
	sbuf_adds(b, "],\"allocations\":[");
	first = true;
	for (uint32_t i = 0; i < m->gpu_count; i++) {
		const struct memory_gpu_stats *gs = &m->gpus[i];
		if (!gs->frames || !gpu_shown(st, gs->gpu))
			continue;
		sbuf_addf(b, "%s{\"gpu\":%" PRIu32 ",\"frames\":%" PRIu64 ",\"allocations\":%" PRIu64
			     ",\"frees\":%" PRIu64 ",\"per_frame\":%.6f,\"most\":%" PRIu64
			     ",\"most_frame\":%" PRIu64 "}",
			  first ? "" : ",", gs->gpu, gs->frames, gs->allocations, gs->frees,
			  (double)gs->allocations / (double)gs->frames, gs->most_allocations,
			  gs->most_allocations_frame);
		first = false;
	}
	sbuf_adds(b, "]}");
}

const char vitals_csv_columns[] = ",heap,heap_bytes,device_local,high_bytes,high_frame,"
				  "growth_bytes,slope_bytes_per_frame,allocations_per_frame";
const char vitals_csv_empty[] = ",,,,,,,,";

void vitals_csv(struct sbuf *b, const struct stats_settings *st, const stats *s)
{
	const struct memory_stats *m = stats_memory(s);
	for (uint32_t i = 0; i < m->count; i++) {
		const struct memory_heap_stats *h = &m->heaps[i];
		const struct memory_series *se = memory_heap_series(h);
		if (!se || !gpu_shown(st, h->gpu))
			continue;
		/* The 29 columns of a row of times: its kind, GPU, path,
		 * depth and frames, max_frame the high-water's frame, the
		 * rest empty; then the memory's own. */
		sbuf_addf(b, "memory,%" PRIu32 ",,GPU %" PRIu32 " / heap %" PRIu32 ",0,%" PRIu64
			     ",,,,,,,,,%" PRIu64 ",,,,,,,,,,,,,,",
			  h->gpu, h->gpu, h->heap, se->frames, se->high_frame);
		sbuf_addf(b, ",%" PRIu32 ",%" PRIu64 ",%d,%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%.3f,",
			  h->heap, h->size, (h->flags & CRUMBS_MEMORY_HEAP_DEVICE_LOCAL) != 0, se->high,
			  se->high_frame, memory_series_growth(se), memory_series_slope(se));
		if (se == &h->use && h->use.frames)
			sbuf_addf(b, "%.6f", (double)h->allocations / (double)h->use.frames);
		sbuf_adds(b, "\n");
	}
}

void vitals_markdown_head(struct sbuf *b, const struct stats_settings *st, const stats *s)
{
	static const struct glyphs plain = { .sep = ", " };
	if (!stats_frame_count(s))
		return;
	sbuf_adds(b, "Vital signs:\n\n");
	/* The GPUs by their rows: Markdown is written without the capture's
	 * description. */
	for (uint32_t gi = 0; gi < 64; gi++) {
		uint32_t row = stats_gpu_row(s, gi);
		if (row == STATS_NONE || !gpu_shown(st, gi))
			continue;
		sbuf_addf(b, "- GPU %" PRIu32 " frame time: ", gi);
		frame_time_text(b, &plain, stats_row(s, row));
	}
	uint32_t cpu = cpu_shown(st, s);
	if (cpu != STATS_NONE) {
		sbuf_adds(b, "- CPU frame time: ");
		frame_time_text(b, &plain, stats_row(s, cpu));
	}
	const struct memory_stats *m = stats_memory(s);
	for (uint32_t i = 0; i < m->gpu_count; i++) {
		const struct memory_gpu_stats *gs = &m->gpus[i];
		if (!gs->frames || !gpu_shown(st, gs->gpu))
			continue;
		if (!gs->allocations && !gs->frees) {
			sbuf_addf(b, "- GPU %" PRIu32 " allocations: none in these frames\n", gs->gpu);
			continue;
		}
		sbuf_addf(b, "- GPU %" PRIu32 " allocations: %.1f a frame (most %" PRIu64 ", frame %" PRIu64
			     "), %.1f frees a frame\n",
			  gs->gpu, (double)gs->allocations / (double)gs->frames, gs->most_allocations,
			  gs->most_allocations_frame, (double)gs->frees / (double)gs->frames);
	}
	sbuf_adds(b, "\n");
}

void vitals_markdown(struct sbuf *b, const struct stats_settings *st, const stats *s)
{
	const struct memory_stats *m = stats_memory(s);
	bool any = false;
	for (uint32_t i = 0; i < m->count; i++) {
		const struct memory_heap_stats *h = &m->heaps[i];
		const struct memory_series *se = memory_heap_series(h);
		if (!se || !gpu_shown(st, h->gpu))
			continue;
		if (!any)
			sbuf_adds(b, "\n| Video memory | High-water | Growth | A frame | Allocations a frame |\n"
				     "|---|--:|--:|--:|--:|\n");
		any = true;
		sbuf_addf(b, "| GPU %" PRIu32 " heap %" PRIu32 "%s | ", h->gpu, h->heap,
			  se == &h->usage ? " (driver's usage)" : "");
		text_bytes(b, se->high);
		sbuf_adds(b, " | ");
		vitals_signed_bytes(b, (double)memory_series_growth(se));
		sbuf_adds(b, " | ");
		vitals_signed_bytes(b, memory_series_slope(se));
		sbuf_adds(b, " | ");
		if (se == &h->use && h->use.frames)
			sbuf_addf(b, "%.1f", (double)h->allocations / (double)h->use.frames);
		sbuf_adds(b, " |\n");
	}
}
