/* SPDX-License-Identifier: MIT */
/*
 * test_counters_runs.c: pipeline statistics and vendor counters over a
 * run's frames (crumbs stats and diff --counters), on runs written with
 * the writer: scopes of one path summed in a frame, unknown frames left
 * out, each vendor counter over the frames of its pass, two runs' vendor
 * counters compared by name, names escaped, paths' bytes bounded, and a
 * queue's own row.
 */
#include "helpers.h"
#include "../../report/report.h"

#include <stdio.h>

#define T 1000000000ull

/* Two vendor counters, one a pass, the second with 3 decimals. */
static const struct crumbs_counter_desc set_counters[2] = {
	{ "Vertices", "Geometry", 0, 2, 2, 0, 0 },
	{ "Warps", "Compute", 0, 4, 2, 1, 3 },
};

/*
 * A run of `frames` frames: Frame { Blur, Blur } each frame, the two
 * Blurs' fragment shader invocations 10 and 20 times (frame + 1), and
 * from frame `unknown_from` on the second's unknown; the set's counters
 * of the frame's pass on Frame, counter k being `vendor[k]` times
 * (frame + 1).
 */
static reader *run_named(struct membuf *m, uint32_t frames, uint32_t unknown_from,
			 const uint64_t vendor[2], const char *blur)
{
	crumbs_writer *w = mem_writer_with(m, 0, 1);
	uint32_t g = add_gpu(w, "GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	assert_int_equal(crumbs_writer_counter_set(w, 1, g, 0, 2, 1, 2, set_counters), CRUMBS_OK);
	for (uint32_t i = 0; i < frames; i++) {
		uint64_t t = T * (i + 1), v[CRUMBS_PIPELINE_COUNTERS] = { 0 }, s[2] = { 0 };
		crumbs_writer_frame_begin(w, i, t);
		crumbs_writer_queue_ready(w, q, t);
		submit(w, q, t, t + 10, NULL, NULL);
		crumbs_writer_scope_begin(w, "Frame", 0, t + 10);
		s[i % 2] = vendor[i % 2] * (i + 1);
		assert_int_equal(crumbs_writer_set_counters(w, 0, 1, 1u << (i % 2), s), CRUMBS_OK);
		for (uint32_t b = 0; b < 2; b++) {
			crumbs_writer_scope_begin(w, blur, 1, t + 20 + 10 * b);
			v[CRUMBS_COUNTER_FS_INVOCATIONS] = (b ? 20 : 10) * (uint64_t)(i + 1);
			assert_int_equal(crumbs_writer_counters(w, 0, 1u << CRUMBS_COUNTER_FS_INVOCATIONS,
								v), CRUMBS_OK);
			if (b && i >= unknown_from)
				assert_int_equal(crumbs_writer_counters_unknown(w, 0), CRUMBS_OK);
			crumbs_writer_scope_end(w, t + 25 + 10 * b);
		}
		crumbs_writer_scope_end(w, t + 60);
		crumbs_writer_submit_end(w, t + 100);
		crumbs_writer_frame_end(w, t + 200, 0, 0);
	}
	return mem_read(m, w);
}

static reader *run(struct membuf *m, uint32_t frames, uint32_t unknown_from,
		   const uint64_t vendor[2])
{
	return run_named(m, frames, unknown_from, vendor, "Blur");
}

static void load(reader *c, struct counter_runs *r)
{
	const struct frame *f;
	struct analyze_error e;
	while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f)
		assert_true(counter_runs_add_frame(r, f));
}

static struct counter_series *row(struct counter_runs *r, const char *path)
{
	const struct counter_series *s = counter_runs_find(r, 0, path, strlen(path));
	assert_non_null(s);
	return &r->rows[s - r->rows];
}

static void one_path_summed(void **state)
{
	(void)state;
	struct membuf m;
	const uint64_t vendor[2] = { 7, 1500 };
	reader *c = run(&m, 6, 4, vendor);
	struct counter_runs r = { 0 };
	load(c, &r);
	struct counter_series *blur = row(&r, "Frame / Blur");
	/* Frames 0 to 3 known, 30 (frame + 1) each; 4 and 5 unknown. */
	assert_int_equal(blur->frames, 4);
	assert_int_equal(blur->unknown_frames, 2);
	assert_int_equal(counter_series_median(blur, CRUMBS_COUNTER_FS_INVOCATIONS), 90);
	struct counter_series *frame = row(&r, "Frame");
	assert_int_equal(frame->frames, 4);
	assert_int_equal(frame->unknown_frames, 2);
	reader_free(c);
	free(m.data);
	counter_runs_release(&r);
}

static void vendor_passes(void **state)
{
	(void)state;
	struct membuf m;
	const uint64_t vendor[2] = { 7, 1500 };
	reader *c = run(&m, 7, 7, vendor);
	struct counter_runs r = { 0 };
	load(c, &r);
	struct counter_series *frame = row(&r, "Frame");
	assert_int_equal(frame->vendor_set, 1);
	assert_int_equal(frame->vendor_len, 2);
	/* Counter 0 in frames 0, 2, 4, 6; counter 1 in 1, 3, 5. */
	assert_int_equal(frame->vendor[0].frames, 4);
	assert_int_equal(frame->vendor[1].frames, 3);
	int64_t median;
	assert_true(counter_series_vendor_median(frame, 0, &median));
	assert_int_equal(median, 7 * 5);
	assert_true(counter_series_vendor_median(frame, 1, &median));
	assert_int_equal(median, 1500 * 4);
	assert_false(counter_series_vendor_median(frame, 2, &median));
	/* No vendor counters below Frame. */
	assert_int_equal(row(&r, "Frame / Blur")->vendor_set, 0);
	reader_free(c);
	free(m.data);
	counter_runs_release(&r);
}

static int sink_write(void *user, const char *text, size_t len)
{
	return membuf_write(user, text, len);
}

static void vendor_compared(void **state)
{
	(void)state;
	struct membuf ma, mb, out = { 0 };
	const uint64_t base[2] = { 7, 1500 }, cand[2] = { 7, 3000 };
	reader *a = run(&ma, 7, 7, base), *b = run(&mb, 7, 7, cand);
	struct counter_runs ra = { 0 }, rb = { 0 };
	load(a, &ra);
	load(b, &rb);
	struct diff_settings d;
	diff_settings_init(&d);
	assert_int_equal(report_settings_prepare(&d.stats.report, NULL, 0), CRUMBS_OK);
	struct diff_counters dc = { &ra, &rb, reader_meta(a), reader_meta(b) };
	struct report_sink sink = { sink_write, &out };
	assert_int_equal(diff_counters_print(&d, &dc, &sink), 0);
	assert_int_equal(membuf_write(&out, "", 1), 0);
	const char *text = (const char *)out.data;
	/* Warps doubled, over 3 frames a side: the threshold alone. */
	assert_non_null(strstr(text, "Graphics 0 / Frame: Warps 6.000 -> 12.000 (+100.0%) more\n"));
	assert_null(strstr(text, "Vertices"));
	assert_null(strstr(text, "Blur"));
	diff_settings_release(&d);
	counter_runs_release(&ra);
	counter_runs_release(&rb);
	reader_free(a);
	reader_free(b);
	free(ma.data);
	free(mb.data);
	free(out.data);
}

/* A scope's name from the capture reaches a terminal escaped. */
static void names_escaped(void **state)
{
	(void)state;
	struct membuf m, out = { 0 };
	const uint64_t vendor[2] = { 7, 1500 };
	reader *c = run_named(&m, 2, 2, vendor, "Blur\x1b[2J");
	struct counter_runs r = { 0 };
	load(c, &r);
	struct report_settings rs;
	report_settings_init(&rs);
	assert_int_equal(report_settings_prepare(&rs, NULL, 0), CRUMBS_OK);
	struct report_sink sink = { sink_write, &out };
	assert_int_equal(stats_counters_print(&rs, &r, reader_meta(c), &sink), 0);
	assert_int_equal(membuf_write(&out, "", 1), 0);
	assert_null(memchr(out.data, 0x1b, out.len));
	assert_non_null(strstr((const char *)out.data, "Graphics 0 / Frame / Blur\\x1b[2J\n"));
	report_settings_release(&rs);
	counter_runs_release(&r);
	reader_free(c);
	free(m.data);
	free(out.data);
}

/* A chain of 255 scopes of 4096-byte names: paths of 130 MiB in all, of
 * which the rows keep 64 MiB and count the rest left out. */
static void paths_bounded(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer_with(&m, 0, 1);
	uint32_t g = add_gpu(w, "GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	static char name[4097];
	uint64_t v[CRUMBS_PIPELINE_COUNTERS] = { 1 };
	crumbs_writer_frame_begin(w, 0, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T + 10, NULL, NULL);
	for (uint32_t d = 0; d < 255; d++) {
		memset(name, 'a' + d % 26, 4096);
		assert_int_equal(crumbs_writer_scope_begin(w, name, 0, T + 10 + d), CRUMBS_OK);
		assert_int_equal(crumbs_writer_counters(w, 0, 1, v), CRUMBS_OK);
	}
	for (uint32_t d = 0; d < 255; d++)
		crumbs_writer_scope_end(w, T + 1000 - d);
	crumbs_writer_submit_end(w, T + 2000);
	crumbs_writer_frame_end(w, T + 3000, 0, 0);
	reader *c = mem_read(&m, w);
	struct counter_runs r = { 0 };
	load(c, &r);
	/* The queue's own row, then a row a scope. */
	assert_true(r.len > 100 && r.len < 256);
	assert_int_equal(r.left_out, 256 - r.len);
	assert_true(r.path_bytes <= (size_t)64 << 20);
	assert_false(r.failed);
	counter_runs_release(&r);
	reader_free(c);
	free(m.data);
}

/* A frame of no scopes (a program nobody changed, recorded by the layer
 * at a run's detail): its queue's own row, path "", holds its work. */
static void queue_row(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer_with(&m, 0, 1);
	uint32_t g = add_gpu(w, "GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	for (uint32_t i = 0; i < 3; i++) {
		uint64_t t = T * (i + 1), v[CRUMBS_PIPELINE_COUNTERS] = { 0 };
		v[CRUMBS_COUNTER_IA_VERTICES] = 1200 + i;
		crumbs_writer_frame_begin(w, i, t);
		crumbs_writer_queue_ready(w, q, t);
		submit(w, q, t, t + 10, NULL, NULL);
		assert_int_equal(crumbs_writer_counters(w, 0, 1u << CRUMBS_COUNTER_IA_VERTICES, v),
				 CRUMBS_OK);
		crumbs_writer_submit_end(w, t + 100);
		crumbs_writer_frame_end(w, t + 200, 0, 0);
	}
	reader *c = mem_read(&m, w);
	struct counter_runs r = { 0 };
	load(c, &r);
	assert_int_equal(r.len, 1);
	struct counter_series *s = row(&r, "");
	assert_int_equal(s->frames, 3);
	assert_int_equal(counter_series_median(s, CRUMBS_COUNTER_IA_VERTICES), 1201);
	counter_runs_release(&r);
	reader_free(c);
	free(m.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_path_summed),
		cmocka_unit_test(vendor_passes),
		cmocka_unit_test(vendor_compared),
		cmocka_unit_test(names_escaped),
		cmocka_unit_test(paths_bounded),
		cmocka_unit_test(queue_row),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
