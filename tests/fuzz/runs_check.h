/* SPDX-License-Identifier: MIT */
/*
 * runs_check.h: what the fuzz targets do with a run's finished statistics,
 * as crumbs stats and crumbs diff would: print them in each format, and
 * compare two of them and print that. Included by fuzz_runs.c and
 * fuzz_records.c.
 */
#ifndef CRUMBS_FUZZ_RUNS_CHECK_H
#define CRUMBS_FUZZ_RUNS_CHECK_H

#include "../../analyze/analyze.h"
#include "../../report/report.h"

#include <stdbool.h>

static int runs_discard(void *user, const char *text, size_t len)
{
	(void)user, (void)text, (void)len;
	return 0;
}

/* s as a table, CSV and JSON with every frame's values. */
static inline void runs_print(const stats *s, const struct capture_meta *meta)
{
	struct report_sink sink = { runs_discard, NULL };
	struct stats_settings st;
	char err[200];

	stats_settings_init(&st);
	st.per_frame = true;
	if (report_settings_prepare(&st.report, err, sizeof(err)) == CRUMBS_OK)
		for (int format = STATS_FORMAT_TABLE; format <= STATS_FORMAT_JSON; format++) {
			st.format = (enum stats_format)format;
			stats_print(&st, meta, s, "fuzz", NULL, &sink);
		}
	stats_settings_release(&st);
}

/* The two compared as crumbs diff does, and printed in each format;
 * whether any row regressed, improved, is new or is gone. */
static inline bool runs_diff_changed(const stats *base, const stats *cand)
{
	struct report_sink sink = { runs_discard, NULL };
	struct diff_settings d;
	struct compare_runs runs = { 0 };
	char err[200];
	bool changed = false;

	diff_settings_init(&d);
	if (report_settings_prepare(&d.stats.report, err, sizeof(err)) == CRUMBS_OK &&
	    compare_runs(base, NULL, cand, NULL, d.stat, &d.rule, &runs) == 0) {
		changed = runs.verdicts[VERDICT_REGRESSED] || runs.verdicts[VERDICT_IMPROVED] ||
			  runs.verdicts[VERDICT_NEW] || runs.verdicts[VERDICT_GONE];
		for (int format = STATS_FORMAT_TABLE; format <= STATS_FORMAT_JSON; format++) {
			d.stats.format = (enum stats_format)format;
			diff_print(&d, &runs, base, cand, "base", "candidate", &sink);
		}
	}
	compare_runs_release(&runs);
	diff_settings_release(&d);
	return changed;
}

#endif
