/* SPDX-License-Identifier: MIT */
/*
 * fuzz_budget.c: libFuzzer target for `crumbs stats --budget` files. Any
 * bytes are parsed as a budget file, with and without --ignore-case, and
 * what parses is checked against a run of no frames and printed.
 */
#include "../../analyze/analyze.h"
#include "../../report/report.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int discard(void *user, const char *text, size_t len)
{
	(void)user, (void)text, (void)len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_sink sink = { discard, NULL };
	char err[300];

	for (int ignore_case = 0; ignore_case < 2; ignore_case++) {
		struct stats_budget *b = NULL;
		if (stats_budget_parse("fuzz", (const char *)data, size, ignore_case, &b, err,
				       sizeof(err)) != CRUMBS_OK)
			continue;
		struct stats_settings st;
		stats_settings_init(&st);
		st.report.ignore_case = ignore_case;
		stats *s = stats_create();
		if (s && stats_finish(s, &st.spike) == CRUMBS_OK &&
		    report_settings_prepare(&st.report, err, sizeof(err)) == CRUMBS_OK) {
			stats_budget_check(b, &st, s);
			stats_budget_print(b, &st, s, &sink);
		}
		stats_free(s);
		stats_settings_release(&st);
		stats_budget_free(b);
	}
	return 0;
}
