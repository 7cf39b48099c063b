/* SPDX-License-Identifier: MIT */
/*
 * fuzz_records.c: libFuzzer target for the record parser, the model, and
 * the statistics a run takes of its frames (crumbs stats and diff).
 * Checksums stop random mutations of a file at the chunk boundary, so this
 * target builds a valid file around the input instead (records_input.h).
 *
 * The frames are drawn as tables, then read again as crumbs stats reads
 * them; the statistics are printed in each format, and compared with
 * themselves as crumbs diff compares runs, which must find no change.
 */
#include "../../analyze/analyze.h"
#include "../../format/format.h"
#include "../../report/report.h"
#include "records_input.h"
#include "runs_check.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* c's frames as crumbs stats takes them, printed, and compared with
 * themselves as crumbs diff does: aborts if that finds a change. */
static void run_statistics(reader *c)
{
	struct analyze_error e;
	const struct frame *f;
	stats *s = stats_create();

	reader_flat_scopes(c, true);
	if (s && reader_rewind(c, &e) == CRUMBS_OK) {
		while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f &&
		       stats_add_frame(s, reader_meta(c), f) == CRUMBS_OK)
			;
		if (stats_finish(s, NULL) == CRUMBS_OK) {
			runs_print(s, reader_meta(c));
			if (runs_diff_changed(s, s))
				abort();
		}
	}
	stats_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct records_file o;

	if (!records_build(data, size, &o))
		return 0;
	reader *c = NULL;
	struct analyze_error e;
	const struct frame *f;
	if (reader_open_memory(o.p, o.len, &c, &e) == CRUMBS_OK) {
		struct report_settings s;
		struct report_sink sink = { runs_discard, NULL };
		char err[200];
		report_settings_init(&s);
		s.leaf = data[0] & 1;
		s.threshold_pct = data[0] & 2 ? 3 : 0;
		s.sort = (enum report_sort)(data[0] % 5);
		if (report_settings_prepare(&s, err, sizeof(err)) == CRUMBS_OK)
			while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f)
				report_frame(&s, reader_meta(c), f, &sink);
		report_settings_release(&s);
		run_statistics(c);
	}
	reader_free(c);
	free(o.p);
	return 0;
}
