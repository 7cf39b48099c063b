/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reader.c: libFuzzer target for the capture reader. Any bytes are
 * opened, every frame is read and modelled, and each is drawn as a table
 * in both modes and by pipeline, so names and trees from hostile input
 * reach the report; then read again without the trees.
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
	reader *c = NULL;
	struct analyze_error e;
	const struct frame *f;
	struct report_sink sink = { discard, NULL };
	struct report_settings plain, filtered, pipelines;
	char err[200];

	if (reader_open_memory(data, size, &c, &e) != CRUMBS_OK)
		return 0;
	report_settings_init(&plain);
	report_settings_init(&filtered);
	report_settings_init(&pipelines);
	pipelines.by = BY_PIPELINE;
	pipelines.threshold_pct = 5;
	pipelines.sort = SORT_PRIMS;
	filtered.ascii = true;
	filtered.leaf = false;
	filtered.threshold_pct = 5;
	filtered.sort = SORT_TIME;
	filtered.max_depth = 3;
	filtered.roots = NULL;
	if (report_settings_prepare(&plain, err, sizeof(err)) == CRUMBS_OK &&
	    report_settings_prepare(&filtered, err, sizeof(err)) == CRUMBS_OK &&
	    report_settings_prepare(&pipelines, err, sizeof(err)) == CRUMBS_OK) {
		unsigned frames = 0;
		while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f && frames++ < 64) {
			report_frame(&plain, reader_meta(c), f, &sink);
			report_frame(&filtered, reader_meta(c), f, &sink);
			report_frame(&pipelines, reader_meta(c), f, &sink);
		}
		if (reader_seek_last(c, &e) == CRUMBS_OK)
			reader_next_frame(c, &f, &e);
		/* Again without the trees, as crumbs info reads. */
		reader_skip_scopes(c, true);
		frames = 0;
		if (reader_rewind(c, &e) == CRUMBS_OK)
			while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f && frames++ < 64)
				report_frame(&plain, reader_meta(c), f, &sink);
		/* And as flat records, as crumbs stats reads. */
		stats *s = stats_create();
		reader_skip_scopes(c, false);
		reader_flat_scopes(c, true);
		frames = 0;
		if (s && reader_rewind(c, &e) == CRUMBS_OK)
			while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f && frames++ < 64 &&
			       stats_add_frame(s, reader_meta(c), f) == CRUMBS_OK)
				;
		if (s)
			stats_finish(s, NULL);
		stats_free(s);
	}
	report_settings_release(&plain);
	report_settings_release(&filtered);
	report_settings_release(&pipelines);
	reader_free(c);
	return 0;
}
