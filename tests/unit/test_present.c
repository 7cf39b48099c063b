/* SPDX-License-Identifier: MIT */
/*
 * test_present.c: presentation (format 1.5) written, read back, and its
 * model over a run: the intervals from shown time to shown time, the
 * v-syncs they missed, counted by hand; CPU intervals where nothing says
 * when frames were shown; what is left out and why; a run taken in two
 * parts as in one; and a program's presents given to libcrumbs
 * (crumbs_present, crumbs_present_shown) recorded in its run.
 */
#include "helpers.h"
#include "../../include/crumbs.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ll
#define REFRESH 16666667ll

struct script {
	uint32_t frames;
	uint8_t mode;
	int64_t refresh_ns;
	const int *vsyncs;       /* v-syncs from the present before to each, [0] unused */
	uint32_t shown_upto;     /* presents 1..shown_upto are shown */
	unsigned source;
	uint32_t failed_at;      /* a present that fails (its frame's), 0: none */
	int64_t step_ns;         /* the v-sync the shown times are at; 0: refresh_ns */
};

/* A run of script->frames frames, present i+1 in frame i at 10 ms
 * apart, the time present j was shown written in frame j. */
static void write_run(struct membuf *m, crumbs_writer **out, const struct script *sc)
{
	crumbs_writer *w = mem_writer(m, 0);
	uint32_t g = add_gpu(w, "GPU");
	add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	int64_t shown = 1000 * MS;
	int64_t shown_at[64] = { 0 };
	for (uint32_t j = 1; j <= sc->shown_upto && j < 64; j++) {
		if (j > 1)
			shown += sc->vsyncs[j] * (sc->step_ns ? sc->step_ns : sc->refresh_ns);
		shown_at[j] = shown;
	}
	for (uint32_t i = 0; i < sc->frames; i++) {
		uint64_t t = 100 * MS + i * 10 * MS;
		assert_int_equal(crumbs_writer_frame_begin(w, i, t), CRUMBS_OK);
		struct crumbs_present_desc p = {
			.swapchain = 7, .cpu_ns = t + 5 * MS, .duration_ns = 100000 + i,
			.present_id = i + 1, .mode = sc->mode,
			.flags = i + 1 == sc->failed_at ? CRUMBS_PRESENT_FAILED : 0,
			.refresh_ns = (uint64_t)sc->refresh_ns };
		assert_int_equal(crumbs_writer_present(w, &p), CRUMBS_OK);
		if (i >= 1 && i <= sc->shown_upto && i < 64)
			assert_int_equal(crumbs_writer_present_shown(w, 7, i, sc->source,
								     (uint64_t)shown_at[i]),
					 CRUMBS_OK);
		assert_int_equal(crumbs_writer_frame_end(w, t + 10 * MS, 0, 0), CRUMBS_OK);
	}
	*out = w;
}

/* The run's presentation, from frames [first, end) of the capture in m
 * fed to `r`. */
static void feed(reader *c, present_run *r, uint32_t first, uint32_t end)
{
	struct analyze_error e;
	assert_int_equal(reader_seek_frame(c, first, &e), CRUMBS_OK);
	for (uint32_t i = first; i < end; i++) {
		const struct frame *f = next_frame(c);
		assert_int_equal(present_run_add(r, f), CRUMBS_OK);
	}
}

static const struct present_summary *run_of(struct membuf *m, crumbs_writer *w,
					    const struct script *sc, present_run **out)
{
	reader *c = mem_read(m, w);
	present_run *r = present_run_create();
	assert_non_null(r);
	feed(c, r, 0, sc->frames);
	reader_free(c);
	assert_int_equal(present_run_finish(r), CRUMBS_OK);
	*out = r;
	return present_run_summary(r);
}

/* Shown by display timing at 1, 2, 1, 3, 1, 1 refresh periods apart:
 * 0 + 1 + 0 + 2 + 0 + 0 = 3 v-syncs missed, 2 frames shown late. */
static const int script_vsyncs[] = { 0, 0, 1, 2, 1, 3, 1, 1 };

static void missed_vsyncs_shown(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w;
	present_run *r;
	struct script sc = { .frames = 8, .mode = CRUMBS_PRESENT_MODE_FIFO, .refresh_ns = REFRESH,
			     .vsyncs = script_vsyncs, .shown_upto = 7,
			     .source = CRUMBS_SHOWN_DISPLAY_TIMING };
	write_run(&m, &w, &sc);
	const struct present_summary *p = run_of(&m, w, &sc, &r);
	assert_int_equal(p->presents, 8);
	assert_int_equal(p->shown, 7);
	assert_int_equal(p->swapchains, 1);
	assert_int_equal(p->clock, PRESENT_CLOCK_SHOWN);
	assert_int_equal(p->sources, 1u << CRUMBS_SHOWN_DISPLAY_TIMING);
	/* Present 8 was never shown: no interval ends there. */
	assert_int_equal(p->intervals, 6);
	assert_int_equal(p->counted, 6);
	assert_int_equal(p->missed_vsyncs, 3);
	assert_int_equal(p->late, 2);
	assert_int_equal(p->refresh_ns, REFRESH);
	/* Sorted: R R R R 2R 3R; the median is the 3rd, p99 the 6th. */
	assert_int_equal(p->median_ns, REFRESH);
	assert_int_equal(p->p99_ns, 3 * REFRESH);
	assert_int_equal(p->max_ns, 3 * REFRESH);
	assert_int_equal(p->max_frame, 4); /* present 5, made in frame 4 */
	assert_int_equal(p->call_median_ns, 100003); /* the 4th of 8 */
	size_t n;
	const struct present_interval *iv = present_run_intervals(r, &n);
	assert_int_equal(n, 6);
	assert_int_equal(iv[0].frame, 1);
	assert_int_equal(iv[1].missed, 1);
	assert_int_equal(iv[3].missed, 2);
	assert_true(iv[3].shown && iv[3].counted);
	size_t cursor = 0;
	assert_int_equal(present_run_frame_max(r, 0, &cursor), -1);
	assert_int_equal(present_run_frame_max(r, 4, &cursor), 3 * REFRESH);
	assert_int_equal(present_run_frame_max(r, 7, &cursor), -1);
	present_run_free(r);
	free(m.data);
}

/* The same shown by present wait: the same count, another source. */
static void missed_vsyncs_present_wait(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w;
	present_run *r;
	struct script sc = { .frames = 8, .mode = CRUMBS_PRESENT_MODE_FIFO_RELAXED,
			     .refresh_ns = 40 * MS, .vsyncs = script_vsyncs, .shown_upto = 7,
			     .source = CRUMBS_SHOWN_PRESENT_WAIT };
	write_run(&m, &w, &sc);
	const struct present_summary *p = run_of(&m, w, &sc, &r);
	assert_int_equal(p->sources, 1u << CRUMBS_SHOWN_PRESENT_WAIT);
	assert_int_equal(p->missed_vsyncs, 3);
	assert_int_equal(p->late, 2);
	present_run_free(r);
	free(m.data);
}

/* Nothing says when frames were shown: CPU intervals, no v-sync counted. */
static void cpu_intervals_only(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w;
	present_run *r;
	struct script sc = { .frames = 5, .mode = CRUMBS_PRESENT_MODE_FIFO, .refresh_ns = REFRESH,
			     .vsyncs = script_vsyncs };
	write_run(&m, &w, &sc);
	const struct present_summary *p = run_of(&m, w, &sc, &r);
	assert_int_equal(p->clock, PRESENT_CLOCK_CPU);
	assert_int_equal(p->shown, 0);
	assert_int_equal(p->intervals, 4);
	assert_int_equal(p->median_ns, 10 * MS);
	assert_int_equal(p->counted, 0);
	assert_int_equal(p->missed_vsyncs, 0);
	size_t n;
	const struct present_interval *iv = present_run_intervals(r, &n);
	assert_false(iv[0].shown);
	present_run_free(r);
	free(m.data);
}

/* Mailbox asks for no v-sync; without a refresh period none is known;
 * a failed present is left out and counted. */
static void what_is_not_counted(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w;
	present_run *r;
	struct script sc = { .frames = 8, .mode = CRUMBS_PRESENT_MODE_MAILBOX, .refresh_ns = REFRESH,
			     .vsyncs = script_vsyncs, .shown_upto = 7,
			     .source = CRUMBS_SHOWN_DISPLAY_TIMING };
	write_run(&m, &w, &sc);
	const struct present_summary *p = run_of(&m, w, &sc, &r);
	assert_int_equal(p->counted, 0);
	assert_int_equal(p->no_vsync, 6);
	present_run_free(r);
	free(m.data);

	sc.mode = CRUMBS_PRESENT_MODE_FIFO;
	sc.refresh_ns = 0;
	sc.step_ns = REFRESH;
	sc.failed_at = 8;
	write_run(&m, &w, &sc);
	p = run_of(&m, w, &sc, &r);
	assert_int_equal(p->failed, 1);
	assert_int_equal(p->presents, 7);
	assert_int_equal(p->counted, 0);
	assert_int_equal(p->no_refresh, 6);
	assert_int_equal(p->intervals, 6);
	present_run_free(r);
	free(m.data);
}

/* Frames taken in two parts, joined in order, as in one. */
static void two_parts(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w;
	struct script sc = { .frames = 8, .mode = CRUMBS_PRESENT_MODE_FIFO, .refresh_ns = REFRESH,
			     .vsyncs = script_vsyncs, .shown_upto = 7,
			     .source = CRUMBS_SHOWN_DISPLAY_TIMING };
	write_run(&m, &w, &sc);
	reader *c = mem_read(&m, w);
	present_run *a = present_run_create(), *b = present_run_create();
	/* Present 4's shown time comes in frame 4, the second part's. */
	feed(c, a, 0, 4);
	feed(c, b, 4, 8);
	assert_int_equal(present_run_append(a, b), CRUMBS_OK);
	assert_int_equal(present_run_finish(a), CRUMBS_OK);
	const struct present_summary *p = present_run_summary(a);
	assert_int_equal(p->intervals, 6);
	assert_int_equal(p->missed_vsyncs, 3);
	assert_int_equal(p->late, 2);
	present_run_free(a);
	present_run_free(b);
	reader_free(c);
	free(m.data);
}

/* What the writer refuses, and a shown time of no present of the run. */
static void refused_and_unknown(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU");
	add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	struct crumbs_present_desc p = { .swapchain = 1, .cpu_ns = 5, .present_id = 1,
					 .mode = CRUMBS_PRESENT_MODE_FIFO };
	assert_int_equal(crumbs_writer_present(w, &p), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_frame_begin(w, 0, 1), CRUMBS_OK);
	p.mode = 6;
	assert_int_equal(crumbs_writer_present(w, &p), CRUMBS_ERROR_INVALID_ARGUMENT);
	p.mode = CRUMBS_PRESENT_MODE_FIFO;
	p.flags = 4;
	assert_int_equal(crumbs_writer_present(w, &p), CRUMBS_ERROR_INVALID_ARGUMENT);
	p.flags = 0;
	assert_int_equal(crumbs_writer_present_shown(w, 1, 0, CRUMBS_SHOWN_PRESENT_WAIT, 9),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_present_shown(w, 1, 1, 3, 9), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_present(w, &p), CRUMBS_OK);
	assert_int_equal(crumbs_writer_present_shown(w, 1, 1, CRUMBS_SHOWN_PRESENT_WAIT, 50),
			 CRUMBS_OK);
	/* Again: the first holds. Of a present the file lacks: ignored. */
	assert_int_equal(crumbs_writer_present_shown(w, 1, 1, CRUMBS_SHOWN_PRESENT_WAIT, 70),
			 CRUMBS_OK);
	assert_int_equal(crumbs_writer_present_shown(w, 9, 3, CRUMBS_SHOWN_PRESENT_WAIT, 70),
			 CRUMBS_OK);
	p.cpu_ns = 8;
	p.present_id = 2;
	assert_int_equal(crumbs_writer_present(w, &p), CRUMBS_OK);
	assert_int_equal(crumbs_writer_present_shown(w, 1, 2, CRUMBS_SHOWN_PRESENT_WAIT, 80),
			 CRUMBS_OK);
	assert_int_equal(crumbs_writer_frame_end(w, 10, 0, 0), CRUMBS_OK);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_int_equal(f->present_count, 2);
	assert_int_equal(f->shown_count, 4);
	assert_int_equal(f->presents[0].cpu_ns, 5);
	assert_int_equal(f->presents[1].id, 2);
	present_run *r = present_run_create();
	assert_int_equal(present_run_add(r, f), CRUMBS_OK);
	assert_int_equal(present_run_finish(r), CRUMBS_OK);
	const struct present_summary *s = present_run_summary(r);
	assert_int_equal(s->intervals, 1);
	assert_int_equal(s->median_ns, 30);
	present_run_free(r);
	reader_free(c);
	free(m.data);
}

static char dir[256];

static void quiet_log(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user;
	(void)level;
	(void)message;
}

struct shown_arg {
	crumbs_context *ctx;
	uint64_t id;
	int64_t ns;
};

/* A shown time from a thread of the program's own. */
static void *shown_later(void *arg)
{
	const struct shown_arg *a = arg;
	crumbs_present_shown(a->ctx, 7, a->id, CRUMBS_SHOWN_PRESENT_WAIT, a->ns);
	return NULL;
}

/* A program that links libcrumbs reports 25 presents, each shown one
 * refresh after the one before but every 5th two, while it records
 * frames 2 to 20: the run holds that run's presents and their shown
 * times, and its missed v-syncs are the script's. Calls that cannot be
 * recorded are harmless. */
static void library_presents(void **state)
{
	(void)state;
	struct crumbs_desc d = { 0 };
	crumbs_context *ctx = NULL;
	d.capture_dir = dir;
	d.program_name = "presents";
	d.no_trigger = 1;
	d.log = quiet_log;
	assert_int_equal(crumbs_create(&d, &ctx), CRUMBS_OK);
	crumbs_present(NULL, NULL);
	crumbs_present(ctx, NULL);
	crumbs_present_shown(NULL, 7, 1, CRUMBS_SHOWN_PRESENT_WAIT, 1);
	assert_int_equal(crumbs_record(ctx, 2, 20, 1), CRUMBS_OK);
	int64_t shown = 1000 * MS;
	for (uint64_t f = 0; f < 25; f++) {
		uint64_t id = f + 1;
		struct crumbs_present_info p = { .swapchain = 7, .begin_ns = 0, .end_ns = 0,
						 .present_id = id, .mode = CRUMBS_PRESENT_MODE_FIFO,
						 .refresh_ns = REFRESH, .result = VK_SUCCESS };
		crumbs_present(ctx, &p);
		if (id > 1)
			shown += (id % 5 == 0 ? 2 : 1) * REFRESH;
		if (f % 2) {
			struct shown_arg a = { ctx, id, shown };
			pthread_t t;
			assert_int_equal(pthread_create(&t, NULL, shown_later, &a), 0);
			pthread_join(t, NULL);
		} else {
			crumbs_present_shown(ctx, 7, id, CRUMBS_SHOWN_PRESENT_WAIT, shown);
		}
		crumbs_present_shown(ctx, 7, 0, CRUMBS_SHOWN_PRESENT_WAIT, shown); /* no id */
		crumbs_present_shown(ctx, 7, id, (enum crumbs_present_source)9, shown);
		crumbs_frame(ctx);
	}
	const char *path = NULL;
	for (int i = 0; i < 20000 && !path; i++) {
		crumbs_frame(ctx);
		path = crumbs_last_capture(ctx);
		if (!path) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
	assert_non_null(path);
	char file[512];
	snprintf(file, sizeof(file), "%s", path);
	crumbs_destroy(ctx);

	reader *c = NULL;
	struct analyze_error e;
	assert_int_equal(reader_open_file(file, &c, &e), CRUMBS_OK);
	present_run *r = present_run_create();
	const struct frame *f;
	uint64_t frames = 0;
	while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f) {
		assert_int_equal(present_run_add(r, f), CRUMBS_OK);
		frames++;
	}
	reader_free(c);
	assert_int_equal(frames, 19);
	assert_int_equal(present_run_finish(r), CRUMBS_OK);
	const struct present_summary *p = present_run_summary(r);
	/* Presents 3 to 21 end frames 2 to 20, each shown in its frame. */
	assert_int_equal(p->presents, 19);
	assert_int_equal(p->shown, 19);
	assert_int_equal(p->intervals, 18);
	assert_int_equal(p->clock, PRESENT_CLOCK_SHOWN);
	/* Presents 5, 10, 15 and 20 missed one each. */
	assert_int_equal(p->missed_vsyncs, 4);
	assert_int_equal(p->late, 4);
	present_run_free(r);
	unlink(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missed_vsyncs_shown),
		cmocka_unit_test(missed_vsyncs_present_wait),
		cmocka_unit_test(cpu_intervals_only),
		cmocka_unit_test(what_is_not_counted),
		cmocka_unit_test(two_parts),
		cmocka_unit_test(refused_and_unknown),
		cmocka_unit_test(library_presents),
	};
	snprintf(dir, sizeof(dir), "%s/crumbs-present-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	int failed = cmocka_run_group_tests_name("present", tests, NULL, NULL);
	rmdir(dir);
	return failed;
}
