/* SPDX-License-Identifier: MIT */
/*
 * markdown.c: `crumbs stats` and `crumbs diff` as Markdown, a pipe table
 * for a pull request's comment: a line on what was read, then a row per
 * statistic's row, times in ms; with --counters, their table after.
 */
#include "report_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text for a table's cell: '|' and '\' escaped, a line break or other
 * control character as a space, backticks and the characters Markdown
 * reads as markup (*, _, [, ], <, >) escaped, so a scope's name shows as
 * it is and never ends its cell. */
void md_text(struct sbuf *b, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			sbuf_adds(b, " ");
		else if (strchr("|\\`*_[]<>#", c))
			sbuf_addf(b, "\\%c", c);
		else
			sbuf_add(b, s + i, 1);
	}
}

static void md_ms(struct sbuf *b, double ns)
{
	sbuf_addf(b, " %.3f |", ns / 1e6);
}

/* A row of the statistics and the rows below it that are selected, in
 * the order of first appearance. */
static void stats_subtree(struct sbuf *b, const stats *s, const uint8_t *selected, uint32_t row,
			  struct sbuf *path, const struct report_sink *sink, int *result)
{
	const struct stats_row *r = stats_row(s, row);
	if (selected[row]) {
		path->len = 0;
		stats_row_path(s, row, path);
		if (path->failed)
			b->failed = true;
		sbuf_addf(b, "| %s | ", stats_kind_name(r->kind));
		md_text(b, path->data ? path->data : "", path->len);
		sbuf_addf(b, " | %llu |", (unsigned long long)r->time.frames);
		md_ms(b, r->time.mean_ns);
		md_ms(b, r->time.median_ns);
		md_ms(b, r->time.p95_ns);
		md_ms(b, r->time.max_ns);
		if (stats_kind_named(r->kind))
			sbuf_addf(b, " %.1f |\n", r->share_pct);
		else
			sbuf_adds(b, " |\n");
		if (b->len > 60000 && *result == 0)
			*result = sbuf_emit(sink, b);
	}
	for (uint32_t c = r->first_child; c != STATS_NONE && *result == 0;
	     c = stats_row(s, c)->next_sibling)
		stats_subtree(b, s, selected, c, path, sink, result);
}

int stats_print_markdown(const struct stats_settings *st, const struct capture_meta *meta,
			 const stats *s, const char *file, struct counter_runs *counters,
			 const struct report_sink *sink)
{
	struct sbuf b = { 0 }, path = { 0 };
	int result = 0;
	uint8_t *selected = stats_select(st, s);
	if (!selected)
		return -1;
	sbuf_adds(&b, "**crumbs stats** ");
	md_text(&b, file, strlen(file));
	sbuf_addf(&b, ": %zu frame%s, times in ms\n\n", stats_frame_count(s),
		  stats_frame_count(s) == 1 ? "" : "s");
	vitals_markdown_head(&b, st, s);
	sbuf_adds(&b, "| Kind | Row | Frames | Mean | Median | p95 | Max | Share % |\n"
		      "|---|---|--:|--:|--:|--:|--:|--:|\n");
	for (uint32_t i = 0; i < stats_row_count(s) && result == 0; i++)
		if (stats_row(s, i)->parent == STATS_NONE)
			stats_subtree(&b, s, selected, i, &path, sink, &result);
	stats_present_markdown(&b, stats_presents(s));
	if (path.failed)
		b.failed = true;
	if (result == 0)
		vitals_markdown(&b, st, s);
	if (result == 0 && counters)
		result = stats_counters_markdown(&b, &st->report, meta, counters, sink);
	if (result == 0)
		result = sbuf_emit(sink, &b);
	free(selected);
	sbuf_release(&b);
	sbuf_release(&path);
	return result;
}

int diff_print_markdown(const struct diff_settings *d, const struct compare_runs *r,
			const stats *base, const stats *cand, const char *base_path,
			const char *cand_path, const struct diff_counters *dc,
			const struct report_sink *sink)
{
	static const enum compare_verdict order[] = { VERDICT_REGRESSED, VERDICT_IMPROVED,
						      VERDICT_UNCHANGED, VERDICT_NEW, VERDICT_GONE,
						      VERDICT_TOO_FEW };
	static const char *const stat_names[] = { "median", "mean", "p95" };
	struct sbuf b = { 0 }, path = { 0 };
	int result = 0;

	sbuf_adds(&b, "**crumbs diff** ");
	md_text(&b, base_path, strlen(base_path));
	sbuf_addf(&b, " (%zu frame%s) to ", stats_frame_count(base),
		  stats_frame_count(base) == 1 ? "" : "s");
	md_text(&b, cand_path, strlen(cand_path));
	sbuf_addf(&b, " (%zu frame%s): ", stats_frame_count(cand),
		  stats_frame_count(cand) == 1 ? "" : "s");
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		sbuf_addf(&b, "%s%s%zu %s%s", i ? ", " : "",
			  order[i] == VERDICT_REGRESSED && r->verdicts[order[i]] ? "**" : "",
			  r->verdicts[order[i]], compare_verdict_name(order[i]),
			  order[i] == VERDICT_REGRESSED && r->verdicts[order[i]] ? "**" : "");
	sbuf_addf(&b, "\n\nThe %s of each row's time in ms; a change counts above %g%% and "
		  "%.3f ms.\n\n", (unsigned)d->stat < 3 ? stat_names[d->stat] : "?",
		  d->rule.threshold_pct, d->rule.min_ms);
	sbuf_adds(&b, "| Verdict | Row | Base | Candidate | Change | Change % | p |\n"
		      "|---|---|--:|--:|--:|--:|--:|\n");
	for (size_t i = 0; i < r->count && result == 0; i++) {
		const struct compare_row *row = &r->rows[i];
		const struct compare_result *res = &row->result;
		sbuf_addf(&b, "| %s | ", compare_verdict_name(res->verdict));
		path.len = 0;
		if (row->base_row != STATS_NONE)
			stats_row_path(base, row->base_row, &path);
		else
			stats_row_path(cand, row->cand_row, &path);
		if (path.failed)
			b.failed = true;
		md_text(&b, path.data ? path.data : "", path.len);
		if (stats_kind_frame_time(row->kind))
			sbuf_adds(&b, " frame time");
		else if (row->kind == STATS_BUSY || row->kind == STATS_WAIT || row->kind == STATS_IDLE)
			sbuf_addf(&b, " %s", stats_kind_name(row->kind));
		sbuf_adds(&b, " |");
		if (row->base_frames)
			md_ms(&b, (double)row->base_ns);
		else
			sbuf_adds(&b, " - |");
		if (row->cand_frames)
			md_ms(&b, (double)row->cand_ns);
		else
			sbuf_adds(&b, " - |");
		if (row->base_frames && row->cand_frames)
			sbuf_addf(&b, " %+.3f | %+.1f |", (double)res->change_ns / 1e6, res->change_pct);
		else
			sbuf_adds(&b, " - | - |");
		if (res->tested)
			sbuf_addf(&b, " %.3g |\n", res->p);
		else
			sbuf_adds(&b, " - |\n");
		if (b.len > 60000)
			result = sbuf_emit(sink, &b);
	}
	if (result == 0)
		diff_memory_markdown(&b, r);
	if (result == 0 && dc)
		result = diff_counters_markdown(d, dc, &b, sink);
	if (result == 0)
		result = sbuf_emit(sink, &b);
	sbuf_release(&b);
	sbuf_release(&path);
	return result;
}
