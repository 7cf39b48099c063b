/* SPDX-License-Identifier: MIT */
/*
 * diff.c: `crumbs diff` as text: its settings, and the rows of two runs
 * compared (compare_runs) as a table, CSV or JSON.
 */
#include "report_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Settings                                                                 */
/* ------------------------------------------------------------------------ */

void diff_settings_init(struct diff_settings *d)
{
	memset(d, 0, sizeof(*d));
	stats_settings_init(&d->stats);
	d->stat = COMPARE_MEDIAN;
	d->rule = (struct compare_rule){ 5.0, 0.05, 0.01, 8 };
}

void diff_settings_release(struct diff_settings *d)
{
	stats_settings_release(&d->stats);
}

#define AT(field) offsetof(struct diff_settings, field)

/* By enum compare_stat: --stat's values, and the statistic's name in the
 * output. */
static const char *const stat_names[] = { "median", "mean", "p95", NULL };

const struct option_spec diff_options[] = {
	{ "stat", 0, "STAT", "compare each row's median (default), mean or p95",
	  OPT_CHOICE, .offset = AT(stat), .names = stat_names },
	{ "threshold", 0, "PCT", "a change must exceed PCT percent (default 5)",
	  OPT_DOUBLE, .offset = AT(rule.threshold_pct), .min = 0, .max = 1e6,
	  .what = "a percentage of 0 or more" },
	{ "min-ms", 0, "MS", "and MS milliseconds (default 0.05)",
	  OPT_DOUBLE, .offset = AT(rule.min_ms), .min = 0, .max = 1e9, .what = "a time in ms of 0 or more" },
	{ "alpha", 0, "A", "and, with 8 frames or more a side, the Mann-Whitney test's p-value must "
			   "be below A (default 0.01)",
	  OPT_DOUBLE, .offset = AT(rule.alpha), .min = 0, .above_min = true, .max = 1,
	  .what = "a probability above 0 and at most 1" },
	{ "force", 0, NULL, "compare captures of different GPUs or queues",
	  OPT_FLAG, .offset = AT(force) },
};
const size_t diff_option_count = sizeof(diff_options) / sizeof(diff_options[0]);

size_t diff_stats_options(struct option_spec *out)
{
	static const struct option_borrowed which[] = { { "frames", NULL }, { "format", NULL },
							{ "cpu", NULL }, { "no-cpu", NULL } };
	return options_borrow(stats_options, stats_option_count, which,
			      sizeof(which) / sizeof(which[0]), out);
}

size_t diff_report_options(struct option_spec *out)
{
	/* --threshold is diff's own: the size of a change, not a share;
	 * diff takes no budget, whose patterns stats' --ignore-case names. */
	struct option_spec all[16];
	size_t n = stats_report_options(all), k = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(all[i].name, "threshold") == 0)
			continue;
		out[k] = all[i];
		if (strcmp(all[i].name, "ignore-case") == 0)
			out[k].help = "match --root and --queue patterns ignoring case";
		k++;
	}
	return k;
}

/* ------------------------------------------------------------------------ */
/* Rows                                                                     */
/* ------------------------------------------------------------------------ */

/* A row's path: its base's row's where it has one. */
static void row_path(struct sbuf *b, const struct compare_row *r, const stats *base,
		     const stats *cand)
{
	if (r->base_row != STATS_NONE)
		stats_row_path(base, r->base_row, b);
	else
		stats_row_path(cand, r->cand_row, b);
}

/* "GPU 0 frame time", "GPU 0 / Graphics 0 busy", or a scope's path. */
static void row_label(struct sbuf *b, const struct compare_row *r, const stats *base,
		      const stats *cand)
{
	row_path(b, r, base, cand);
	if (stats_kind_frame_time(r->kind))
		sbuf_adds(b, " frame time");
	else if (r->kind == STATS_BUSY || r->kind == STATS_WAIT || r->kind == STATS_IDLE)
		sbuf_addf(b, " %s", stats_kind_name(r->kind));
}

/*
 * The table's rows are paths, which nesting 255 deep in names of 4096
 * bytes makes a megabyte long: a label past LABEL_MAX bytes keeps its
 * first LABEL_HEAD and last LABEL_TAIL, cut at characters, with an
 * ellipsis between. CSV and JSON give the paths whole.
 */
#define LABEL_MAX 160
#define LABEL_HEAD 64
#define LABEL_TAIL 92

static bool utf8_continuation(char c)
{
	return ((unsigned char)c & 0xC0) == 0x80;
}

static void shorten_label(struct sbuf *b, bool ascii)
{
	if (b->failed || b->len <= LABEL_MAX)
		return;
	size_t head = LABEL_HEAD, tail = b->len - LABEL_TAIL;
	while (head > 0 && utf8_continuation(b->data[head]))
		head--;
	while (tail < b->len && utf8_continuation(b->data[tail]))
		tail++;
	const char *dots = ascii ? "..." : "\xe2\x80\xa6";
	size_t n = strlen(dots);
	memcpy(b->data + head, dots, n);
	memmove(b->data + head + n, b->data + tail, b->len - tail);
	b->len = head + n + (b->len - tail);
	b->data[b->len] = '\0';
}

/* A verdict as CSV and JSON name it, a key without spaces:
 * "too_few_frames" for the table's "too few frames". */
static void verdict_key(struct sbuf *b, enum compare_verdict v, bool quoted)
{
	const char *name = compare_verdict_name(v);
	if (quoted)
		sbuf_adds(b, "\"");
	for (const char *c = name; *c; c++)
		sbuf_add(b, *c == ' ' ? "_" : c, 1);
	if (quoted)
		sbuf_adds(b, "\"");
}

static void p_text(char *buf, size_t n, const struct compare_result *res)
{
	if (!res->tested)
		snprintf(buf, n, "-");
	else if (res->p < 0.001)
		snprintf(buf, n, "<0.001");
	else
		snprintf(buf, n, "%.3f", res->p);
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

/* The colour of a verdict; NULL: none. */
static const char *verdict_color(enum compare_verdict v)
{
	return v == VERDICT_REGRESSED ? SGR_BAD : v == VERDICT_IMPROVED ? SGR_GOOD : NULL;
}

static void counts_line(struct sbuf *b, const struct compare_runs *r, bool color)
{
	static const enum compare_verdict order[] = { VERDICT_REGRESSED, VERDICT_IMPROVED,
						      VERDICT_UNCHANGED, VERDICT_NEW, VERDICT_GONE,
						      VERDICT_TOO_FEW };
	const char *sep = "";
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		size_t n = r->verdicts[order[i]];
		if (!n && order[i] != VERDICT_REGRESSED && order[i] != VERDICT_IMPROVED &&
		    order[i] != VERDICT_UNCHANGED)
			continue;
		char text[64];
		int len = snprintf(text, sizeof(text), "%zu %s", n, compare_verdict_name(order[i]));
		const char *sgr = verdict_color(order[i]);
		sbuf_adds(b, sep);
		text_colored(b, color && sgr && n, sgr ? sgr : "", text, len > 0 ? (size_t)len : 0);
		sep = ", ";
	}
	sbuf_adds(b, "\n");
}

static void memory_text(const struct diff_settings *d, const struct compare_runs *r,
			struct sbuf *out);
static void memory_json(const struct compare_runs *r, struct sbuf *out);
/* The presentation's rows of the table, after the others': the present
 * interval, in ms, and the missed v-syncs, counts. */
static void present_rows(struct grid *gr, const struct compare_runs *r, bool color)
{
	const struct compare_present *cp = &r->present;
	for (int k = 0; k < 2; k++) {
		if (k == 0 ? !cp->interval : !cp->vsyncs)
			continue;
		const struct compare_result *res = k == 0 ? &cp->interval_result : &cp->vsync_result;
		char buf[48];
		int n;
		if (k == 0) {
			grid_ms(gr, (double)cp->base_ns);
			grid_ms(gr, (double)cp->cand_ns);
			n = snprintf(buf, sizeof(buf), "%+.3f", (double)res->change_ns / 1e6);
		} else {
			n = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)cp->base_missed);
			grid_cell(gr, buf, (size_t)n);
			n = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)cp->cand_missed);
			grid_cell(gr, buf, (size_t)n);
			n = snprintf(buf, sizeof(buf), "%+lld", (long long)res->change_ns);
		}
		grid_cell(gr, buf, (size_t)n);
		n = snprintf(buf, sizeof(buf), "%+.1f%%", res->change_pct);
		grid_cell(gr, buf, (size_t)n);
		p_text(buf, sizeof(buf), res);
		grid_cell(gr, buf, strlen(buf));
		const char *v = compare_verdict_name(res->verdict);
		const char *sgr = verdict_color(res->verdict);
		struct sbuf cell = { 0 };
		text_colored(&cell, color && sgr, sgr ? sgr : "", v, strlen(v));
		if (cell.failed)
			gr->failed = true;
		grid_cell(gr, cell.data ? cell.data : "", cell.len);
		sbuf_release(&cell);
		const char *name = k == 0 ? "Present interval" : "Missed v-syncs (count, scaled)";
		grid_name(gr, 0, name, strlen(name), NULL);
	}
}

static void print_table(const struct diff_settings *d, const struct compare_runs *r,
			const stats *base, const stats *cand, const char *base_path,
			const char *cand_path, struct sbuf *out, const struct report_sink *sink)
{
	const struct glyphs *g = grid_glyphs(&d->stats.report);
	const struct compare_rule *rule = &d->rule;

	sbuf_addf(out, "crumbs diff%s'%s' (%zu frame%s)%s'%s' (%zu frame%s)\n", g->sep, base_path,
		  stats_frame_count(base), stats_frame_count(base) == 1 ? "" : "s",
		  d->stats.report.ascii ? " -> " : " → ", cand_path, stats_frame_count(cand),
		  stats_frame_count(cand) == 1 ? "" : "s");
	sbuf_addf(out, "%s of each row's time over its frames%sa change counts above %g%% and "
		  "%.3f ms", stat_names[d->stat], g->sep, rule->threshold_pct, rule->min_ms);
	if (r->single)
		sbuf_adds(out, " (both captures hold one frame: compared by these thresholds "
			       "alone)\n");
	else
		sbuf_addf(out, ", with p < %g in the Mann-Whitney test where both sides have "
			  "%llu frames or more\n", rule->alpha, (unsigned long long)rule->min_frames);
	bool color = d->stats.report.color;
	counts_line(out, r, color);

	struct grid gr = { .g = g, .cols = 7, .max_width = d->stats.report.width, .color = color };
	static const char *const titles[] = { "Base", "Candidate", "Change", "%", "p",
					      "Verdict", "Row" };
	/* To fit the width, p goes first, then the change in ms, then in
	 * percent; both times and the verdict stay. */
	static const uint8_t drop[] = { 0, 0, 2, 3, 1, 0, 0 };
	memcpy(gr.titles, titles, sizeof(titles));
	memcpy(gr.drop, drop, sizeof(drop));
	for (size_t i = 0; i < r->count; i++) {
		const struct compare_row *row = &r->rows[i];
		const struct compare_result *res = &row->result;
		char buf[32];
		if (row->base_frames)
			grid_ms(&gr, (double)row->base_ns);
		else
			grid_cell(&gr, "-", 1);
		if (row->cand_frames)
			grid_ms(&gr, (double)row->cand_ns);
		else
			grid_cell(&gr, "-", 1);
		if (row->base_frames && row->cand_frames) {
			int n = snprintf(buf, sizeof(buf), "%+.3f", (double)res->change_ns / 1e6);
			grid_cell(&gr, buf, (size_t)n);
			n = snprintf(buf, sizeof(buf), "%+.1f%%", res->change_pct);
			grid_cell(&gr, buf, (size_t)n);
		} else {
			grid_cell(&gr, "-", 1);
			grid_cell(&gr, "-", 1);
		}
		p_text(buf, sizeof(buf), res);
		grid_cell(&gr, buf, strlen(buf));
		const char *v = compare_verdict_name(res->verdict);
		const char *sgr = verdict_color(res->verdict);
		if (color && sgr) {
			struct sbuf cell = { 0 };
			text_colored(&cell, true, sgr, v, strlen(v));
			if (cell.failed)
				gr.failed = true;
			grid_cell(&gr, cell.data ? cell.data : "", cell.len);
			sbuf_release(&cell);
		} else {
			grid_cell(&gr, v, strlen(v));
		}
		struct sbuf label = { 0 };
		row_label(&label, row, base, cand);
		shorten_label(&label, d->stats.report.ascii);
		if (label.failed)
			gr.failed = true;
		grid_name(&gr, 0, label.data ? label.data : "", label.len, NULL);
		sbuf_release(&label);
	}
	present_rows(&gr, r, color);
	grid_render(&gr, out, sink);
	grid_release(&gr);
	memory_text(d, r, out);
}

/* Hands what out holds to the sink once it holds enough: CSV and JSON
 * are written as they are made. */
static void emit_some(struct sbuf *out, const struct report_sink *sink, int *result)
{
	if (out->len > 60000 && *result == 0)
		*result = sbuf_emit(sink, out);
}

static void print_csv(const struct diff_settings *d, const struct compare_runs *r,
		      const stats *base, const stats *cand, const struct diff_counters *dc,
		      struct sbuf *out, const struct report_sink *sink, int *result)
{
	struct sbuf path = { 0 };
	/* --counters: four columns more, which the rows of times leave
	 * empty, and the counters' rows after. */
	const char *tail = dc ? diff_counters_csv_empty : "";
	sbuf_adds(out, "kind,gpu,path,base_frames,candidate_frames,base_ms,candidate_ms,change_ms,"
		       "change_pct,p,verdict");
	sbuf_addf(out, "%s\n", dc ? diff_counters_csv_columns : "");
	for (size_t i = 0; i < r->count && *result == 0; i++) {
		const struct compare_row *row = &r->rows[i];
		const struct compare_result *res = &row->result;
		sbuf_addf(out, "%s,", stats_kind_name(row->kind));
		if (row->gpu != STATS_NONE)
			sbuf_addf(out, "%u", row->gpu);
		sbuf_adds(out, ",");
		path.len = 0;
		row_path(&path, row, base, cand);
		if (path.failed)
			out->failed = true;
		csv_field(out, path.data ? path.data : "", path.len);
		sbuf_addf(out, ",%llu,%llu,", (unsigned long long)row->base_frames,
			  (unsigned long long)row->cand_frames);
		if (row->base_frames)
			sbuf_addf(out, "%.6f", (double)row->base_ns / 1e6);
		sbuf_adds(out, ",");
		if (row->cand_frames)
			sbuf_addf(out, "%.6f", (double)row->cand_ns / 1e6);
		sbuf_adds(out, ",");
		if (row->base_frames && row->cand_frames)
			sbuf_addf(out, "%.6f,%.6f", (double)res->change_ns / 1e6, res->change_pct);
		else
			sbuf_adds(out, ",");
		sbuf_adds(out, ",");
		if (res->tested)
			sbuf_addf(out, "%.6g", res->p);
		sbuf_adds(out, ",");
		verdict_key(out, res->verdict, false);
		sbuf_addf(out, "%s\n", tail);
		emit_some(out, sink, result);
	}
	const struct compare_present *cp = &r->present;
	if (cp->interval) {
		/* The present interval's row: its "frames" are intervals. */
		const struct compare_result *res = &cp->interval_result;
		sbuf_addf(out, "present,,Present interval,%llu,%llu,%.6f,%.6f,%.6f,%.6f,",
			  (unsigned long long)cp->base_intervals,
			  (unsigned long long)cp->cand_intervals, (double)cp->base_ns / 1e6,
			  (double)cp->cand_ns / 1e6, (double)res->change_ns / 1e6, res->change_pct);
		if (res->tested)
			sbuf_addf(out, "%.6g", res->p);
		sbuf_adds(out, ",");
		verdict_key(out, res->verdict, false);
		sbuf_addf(out, "%s\n", tail);
	}
	if (dc && *result == 0)
		*result = diff_counters_csv(d, dc, out, sink);
	sbuf_release(&path);
}

static void print_json(const struct diff_settings *d, const struct compare_runs *r,
		       const stats *base, const stats *cand, const char *base_path,
		       const char *cand_path, const struct diff_counters *dc, struct sbuf *out,
		       const struct report_sink *sink, int *result)
{
	const struct compare_rule *rule = &d->rule;
	struct sbuf path = { 0 };
	sbuf_adds(out, "{\"schema\": 2, \"base\": {\"file\": ");
	json_string(out, base_path, strlen(base_path));
	sbuf_addf(out, ", \"frames\": %zu}, \"candidate\": {\"file\": ", stats_frame_count(base));
	json_string(out, cand_path, strlen(cand_path));
	sbuf_addf(out, ", \"frames\": %zu},\n", stats_frame_count(cand));
	/* Every time in ns, --min-ms's too. */
	sbuf_addf(out, " \"stat\": \"%s\", \"threshold_pct\": %.17g, \"min_change_ns\": %.17g, "
		  "\"alpha\": %.17g, \"min_frames\": %llu, \"single_frame\": %s,\n",
		  stat_names[d->stat], rule->threshold_pct, rule->min_ms * 1e6, rule->alpha,
		  (unsigned long long)rule->min_frames, r->single ? "true" : "false");
	sbuf_adds(out, " \"counts\": {");
	for (int v = VERDICT_UNCHANGED; v <= VERDICT_TOO_FEW; v++) {
		sbuf_addf(out, "%s", v ? ", " : "");
		verdict_key(out, (enum compare_verdict)v, true);
		sbuf_addf(out, ": %zu", r->verdicts[v]);
	}
	sbuf_adds(out, "},\n");
	memory_json(r, out);
	sbuf_adds(out, " \"rows\": [");
	for (size_t i = 0; i < r->count && *result == 0; i++) {
		const struct compare_row *row = &r->rows[i];
		const struct compare_result *res = &row->result;
		sbuf_addf(out, "%s\n  {\"kind\": \"%s\", \"gpu\": ", i ? "," : "",
			  stats_kind_name(row->kind));
		if (row->gpu != STATS_NONE)
			sbuf_addf(out, "%u", row->gpu);
		else
			sbuf_adds(out, "null");
		sbuf_adds(out, ", \"path\": ");
		path.len = 0;
		row_path(&path, row, base, cand);
		if (path.failed)
			out->failed = true;
		json_string(out, path.data ? path.data : "", path.len);
		sbuf_addf(out, ", \"base_frames\": %llu, \"candidate_frames\": %llu",
			  (unsigned long long)row->base_frames, (unsigned long long)row->cand_frames);
		if (row->base_frames)
			sbuf_addf(out, ", \"base_ns\": %lld", (long long)row->base_ns);
		if (row->cand_frames)
			sbuf_addf(out, ", \"candidate_ns\": %lld", (long long)row->cand_ns);
		if (row->base_frames && row->cand_frames)
			sbuf_addf(out, ", \"change_ns\": %lld, \"change_pct\": %.17g",
				  (long long)res->change_ns, res->change_pct);
		if (res->tested)
			sbuf_addf(out, ", \"p\": %.17g", res->p);
		else
			sbuf_adds(out, ", \"p\": null");
		sbuf_adds(out, ", \"verdict\": ");
		verdict_key(out, res->verdict, true);
		sbuf_adds(out, "}");
		emit_some(out, sink, result);
	}
	sbuf_adds(out, "\n]");
	const struct compare_present *cp = &r->present;
	sbuf_adds(out, ",\n \"presentation\": {\"present_interval\": ");
	if (cp->interval) {
		const struct compare_result *res = &cp->interval_result;
		sbuf_addf(out, "{\"base_intervals\": %llu, \"candidate_intervals\": %llu, "
			       "\"base_ns\": %lld, \"candidate_ns\": %lld, \"change_ns\": %lld, "
			       "\"change_pct\": %.17g, \"p\": ",
			  (unsigned long long)cp->base_intervals, (unsigned long long)cp->cand_intervals,
			  (long long)cp->base_ns, (long long)cp->cand_ns, (long long)res->change_ns,
			  res->change_pct);
		if (res->tested)
			sbuf_addf(out, "%.17g", res->p);
		else
			sbuf_adds(out, "null");
		sbuf_adds(out, ", \"verdict\": ");
		verdict_key(out, res->verdict, true);
		sbuf_adds(out, "}");
	} else {
		sbuf_adds(out, "null");
	}
	sbuf_adds(out, ", \"missed_vsyncs\": ");
	if (cp->vsyncs) {
		sbuf_addf(out, "{\"base\": %llu, \"candidate\": %llu, \"base_intervals\": %llu, "
			       "\"candidate_intervals\": %llu, \"scaled_change\": %lld, \"verdict\": ",
			  (unsigned long long)cp->base_missed, (unsigned long long)cp->cand_missed,
			  (unsigned long long)cp->base_counted, (unsigned long long)cp->cand_counted,
			  (long long)cp->vsync_result.change_ns);
		verdict_key(out, cp->vsync_result.verdict, true);
		sbuf_adds(out, "}");
	} else {
		sbuf_adds(out, "null");
	}
	sbuf_adds(out, "}");
	if (dc && *result == 0)
		*result = diff_counters_json(d, dc, out, sink);
	sbuf_adds(out, "}\n");
	sbuf_release(&path);
}

/* ------------------------------------------------------------------------ */
/* Video memory, heap by heap                                               */
/* ------------------------------------------------------------------------ */

/* After the rows, where either run recorded video memory: a line a heap,
 * its high-water on each side and the verdict, and its growth. */
static void memory_text(const struct diff_settings *d, const struct compare_runs *r,
			struct sbuf *out)
{
	if (!r->memory_count)
		return;
	const struct glyphs *g = grid_glyphs(&d->stats.report);
	const char *arrow = d->stats.report.ascii ? " -> " : " → ";
	bool color = d->stats.report.color;
	sbuf_addf(out, "\nVideo memory%shigh-water over the run%sa change counts above %g%% and ",
		  g->sep, g->sep, d->rule.threshold_pct);
	text_bytes(out, COMPARE_MEMORY_MIN_BYTES);
	sbuf_adds(out, "\n");
	for (size_t i = 0; i < r->memory_count; i++) {
		const struct compare_memory_row *m = &r->memory[i];
		sbuf_addf(out, "GPU %u heap %u: ", m->gpu, m->heap);
		if (m->in_base)
			text_bytes(out, m->base_high);
		else
			sbuf_adds(out, "-");
		sbuf_adds(out, arrow);
		if (m->in_cand)
			text_bytes(out, m->cand_high);
		else
			sbuf_adds(out, "-");
		if (m->in_base && m->in_cand) {
			sbuf_adds(out, " (");
			vitals_signed_bytes(out, (double)m->change);
			sbuf_addf(out, ", %+.1f%%)", m->change_pct);
		}
		sbuf_adds(out, " ");
		const char *v = compare_verdict_name(m->verdict);
		const char *sgr = verdict_color(m->verdict);
		text_colored(out, color && sgr, sgr ? sgr : "", v, strlen(v));
		sbuf_addf(out, "%sgrowth ", g->sep);
		if (m->in_base)
			vitals_signed_bytes(out, (double)m->base_growth);
		else
			sbuf_adds(out, "-");
		sbuf_adds(out, arrow);
		if (m->in_cand)
			vitals_signed_bytes(out, (double)m->cand_growth);
		else
			sbuf_adds(out, "-");
		sbuf_adds(out, "\n");
	}
}

/* ,"memory":[...] before the rows, where either run recorded video
 * memory, in bytes. */
static void memory_json(const struct compare_runs *r, struct sbuf *out)
{
	if (!r->memory_count)
		return;
	sbuf_addf(out, " \"memory_min_change_bytes\": %u, \"memory\": [", COMPARE_MEMORY_MIN_BYTES);
	for (size_t i = 0; i < r->memory_count; i++) {
		const struct compare_memory_row *m = &r->memory[i];
		sbuf_addf(out, "%s\n  {\"gpu\": %u, \"heap\": %u", i ? "," : "", m->gpu, m->heap);
		if (m->in_base)
			sbuf_addf(out, ", \"base_high_bytes\": %llu, \"base_growth_bytes\": %lld",
				  (unsigned long long)m->base_high, (long long)m->base_growth);
		if (m->in_cand)
			sbuf_addf(out, ", \"candidate_high_bytes\": %llu, \"candidate_growth_bytes\": %lld",
				  (unsigned long long)m->cand_high, (long long)m->cand_growth);
		if (m->in_base && m->in_cand)
			sbuf_addf(out, ", \"change_bytes\": %lld, \"change_pct\": %.17g",
				  (long long)m->change, m->change_pct);
		sbuf_adds(out, ", \"verdict\": ");
		verdict_key(out, m->verdict, true);
		sbuf_adds(out, "}");
	}
	sbuf_adds(out, "\n ],\n");
}

void diff_memory_markdown(struct sbuf *b, const struct compare_runs *r)
{
	if (!r->memory_count)
		return;
	sbuf_addf(b, "\nVideo memory: each heap's high-water; a change counts above the same "
		     "percent and %u MiB.\n\n", COMPARE_MEMORY_MIN_BYTES >> 20);
	sbuf_adds(b, "| Verdict | Heap | Base | Candidate | Change | Change % | Growth, base | "
		     "Growth, candidate |\n|---|---|--:|--:|--:|--:|--:|--:|\n");
	for (size_t i = 0; i < r->memory_count; i++) {
		const struct compare_memory_row *m = &r->memory[i];
		sbuf_addf(b, "| %s | GPU %u heap %u | ", compare_verdict_name(m->verdict), m->gpu,
			  m->heap);
		if (m->in_base)
			text_bytes(b, m->base_high);
		else
			sbuf_adds(b, "-");
		sbuf_adds(b, " | ");
		if (m->in_cand)
			text_bytes(b, m->cand_high);
		else
			sbuf_adds(b, "-");
		sbuf_adds(b, " | ");
		if (m->in_base && m->in_cand) {
			vitals_signed_bytes(b, (double)m->change);
			sbuf_addf(b, " | %+.1f | ", m->change_pct);
		} else {
			sbuf_adds(b, "- | - | ");
		}
		if (m->in_base)
			vitals_signed_bytes(b, (double)m->base_growth);
		else
			sbuf_adds(b, "-");
		sbuf_adds(b, " | ");
		if (m->in_cand)
			vitals_signed_bytes(b, (double)m->cand_growth);
		else
			sbuf_adds(b, "-");
		sbuf_adds(b, " |\n");
	}
}

int diff_print(const struct diff_settings *d, const struct compare_runs *r, const stats *base,
	       const stats *cand, const char *base_path, const char *cand_path,
	       const struct report_sink *sink)
{
	return diff_print_with_counters(d, r, base, cand, base_path, cand_path, NULL, sink);
}

int diff_print_with_counters(const struct diff_settings *d, const struct compare_runs *r,
			     const stats *base, const stats *cand, const char *base_path,
			     const char *cand_path, const struct diff_counters *dc,
			     const struct report_sink *sink)
{
	struct sbuf b = { 0 };
	int result = 0;
	switch (d->stats.format) {
	case STATS_FORMAT_CSV:
		print_csv(d, r, base, cand, dc, &b, sink, &result);
		break;
	case STATS_FORMAT_JSON:
		print_json(d, r, base, cand, base_path, cand_path, dc, &b, sink, &result);
		break;
	case STATS_FORMAT_TABLE:
		print_table(d, r, base, cand, base_path, cand_path, &b, sink);
		break;
	case STATS_FORMAT_MARKDOWN:
		result = diff_print_markdown(d, r, base, cand, base_path, cand_path, dc, sink);
		break;
	}
	if (result == 0)
		result = sbuf_emit(sink, &b);
	sbuf_release(&b);
	return result;
}
