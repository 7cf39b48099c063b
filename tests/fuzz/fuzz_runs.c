/*
 * fuzz_runs.c: libFuzzer target for what `crumbs stats` and `crumbs diff`
 * do with a run. Any bytes are opened as a capture and its frames taken
 * into statistics twice: whole, and a part at a time on readers of their
 * own (reader_clone, reader_read_parts) joined in order (stats_append), as
 * crumbs stats' threads take them. Each is printed in the three formats,
 * with every frame's values in the JSON, and the two are compared as
 * crumbs diff compares runs, and printed so. When both readings end
 * without damage, the joined statistics must hold the whole's frames,
 * rows and values, and their comparison find no change: aborts otherwise.
 */
#include "../../analyze/analyze.h"
#include "../../report/report.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Frames taken at most, so that a long run of tiny frames stays quick. */
#define MAX_FRAMES 4096

static int discard(void *user, const char *text, size_t len)
{
	(void)user, (void)text, (void)len;
	return 0;
}

/* Adds the frames c reads to s, *taken counting them. Whether the reading
 * ended at the end, without damage. */
static bool take_frames(reader *c, stats *s, size_t *taken)
{
	struct analyze_error e;
	const struct frame *f;
	for (;;) {
		if (reader_next_frame(c, &f, &e) != CRUMBS_OK)
			return false;
		if (!f)
			return true;
		if (*taken >= MAX_FRAMES || stats_add_frame(s, reader_meta(c), f) != CRUMBS_OK)
			return false;
		++*taken;
	}
}

/* The statistics of c read a part at a time, into joined. */
static bool take_parts(const reader *c, stats *joined)
{
	size_t taken = 0;
	for (size_t k = 0; k < reader_part_count(c); k++) {
		struct analyze_error e;
		reader *part = NULL;
		stats *piece = stats_create_sharing(joined);
		bool ok = piece && reader_clone(c, &part, &e) == CRUMBS_OK;
		if (ok) {
			reader_prefetch(part, false);
			ok = reader_read_parts(part, k, k + 1, &e) == CRUMBS_OK &&
			     take_frames(part, piece, &taken) && stats_append(joined, piece) == CRUMBS_OK;
		}
		reader_free(part);
		stats_free(piece);
		if (!ok)
			return false;
	}
	return true;
}

static void print_all(stats *s, const struct capture_meta *meta)
{
	struct report_sink sink = { discard, NULL };
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

static bool same_stats(const stats *a, const stats *b)
{
	if (stats_frame_count(a) != stats_frame_count(b) || stats_row_count(a) != stats_row_count(b))
		return false;
	for (size_t r = 0; r < stats_row_count(a); r++) {
		const struct stats_row *x = stats_row(a, r), *y = stats_row(b, r);
		if (x->kind != y->kind || strcmp(x->path, y->path) != 0)
			return false;
		for (size_t i = 0; i < stats_frame_count(a); i++)
			if (stats_value(a, r, i, false) != stats_value(b, r, i, false) ||
			    stats_value(a, r, i, true) != stats_value(b, r, i, true))
				return false;
	}
	return true;
}

/* The two compared and printed as crumbs diff does; whether any row
 * changed. */
static bool diff_changed(const stats *base, const stats *cand)
{
	struct report_sink sink = { discard, NULL };
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct analyze_error e;
	reader *c = NULL;

	if (reader_open_memory(data, size, &c, &e) != CRUMBS_OK)
		return 0;
	reader_flat_scopes(c, true); /* and the clones */
	stats *whole = stats_create(), *joined = stats_create();
	size_t taken = 0;
	bool whole_ok = whole && joined && take_frames(c, whole, &taken);
	bool parts_ok = whole && joined && take_parts(c, joined);
	if (whole && joined && stats_finish(whole, NULL) == CRUMBS_OK &&
	    stats_finish(joined, NULL) == CRUMBS_OK) {
		print_all(whole, reader_meta(c));
		print_all(joined, reader_meta(c));
		bool changed = diff_changed(whole, joined);
		if (whole_ok && parts_ok && reader_damage(c)->code == CRUMBS_OK &&
		    (!same_stats(whole, joined) || changed))
			abort();
	}
	stats_free(joined);
	stats_free(whole);
	reader_free(c);
	return 0;
}
