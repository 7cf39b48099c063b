/* SPDX-License-Identifier: MIT */
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
 * The same again by pipeline. Frames are read with their trees, which
 * hold the CPU threads' scopes, as crumbs stats reads them.
 */
#include "runs_check.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Frames taken at most, so that a long run of tiny frames stays quick. */
#define MAX_FRAMES 4096

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

static bool same_stats(const stats *a, const stats *b)
{
	if (stats_frame_count(a) != stats_frame_count(b) || stats_row_count(a) != stats_row_count(b))
		return false;
	for (size_t r = 0; r < stats_row_count(a); r++) {
		const struct stats_row *x = stats_row(a, r), *y = stats_row(b, r);
		if (x->kind != y->kind || x->parent != y->parent || x->name_len != y->name_len ||
		    memcmp(x->name, y->name, x->name_len) != 0)
			return false;
		for (size_t i = 0; i < stats_frame_count(a); i++)
			if (stats_value(a, r, i, false) != stats_value(b, r, i, false) ||
			    stats_value(a, r, i, true) != stats_value(b, r, i, true))
				return false;
	}
	return true;
}

/* The run's statistics by scope, or by pipeline (its frames' trees). */
static void check_run(const uint8_t *data, size_t size, bool by_pipeline)
{
	struct analyze_error e;
	reader *c = NULL;

	if (reader_open_memory(data, size, &c, &e) != CRUMBS_OK)
		return;
	/* With their trees, as crumbs stats reads them: the model builds
	 * CPU threads' trees only then. */
	stats *whole = stats_create(), *joined = stats_create();
	if (by_pipeline && whole && joined) {
		stats_by_pipeline(whole);
		stats_by_pipeline(joined);
	}
	size_t taken = 0;
	bool whole_ok = whole && joined && take_frames(c, whole, &taken);
	bool parts_ok = whole && joined && take_parts(c, joined);
	if (whole && joined && stats_finish(whole, NULL) == CRUMBS_OK &&
	    stats_finish(joined, NULL) == CRUMBS_OK) {
		runs_print(whole, reader_meta(c));
		runs_print(joined, reader_meta(c));
		bool changed = runs_diff_changed(whole, joined);
		if (whole_ok && parts_ok && reader_damage(c)->code == CRUMBS_OK &&
		    (!same_stats(whole, joined) || changed))
			abort();
	}
	stats_free(joined);
	stats_free(whole);
	reader_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_run(data, size, false);
	check_run(data, size, true);
	return 0;
}
