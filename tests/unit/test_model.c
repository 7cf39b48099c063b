/* SPDX-License-Identifier: MIT */
/*
 * test_model.c: the numbers of docs/DESIGN.md, one rule per test, each
 * with expectations computed by hand in its comments. Captures are written
 * with the real writer and read back with the real reader.
 *
 * Unless a test says otherwise, GPU ticks are nanoseconds (period 1) and a
 * calibration sample maps tick T to CPU time T, so a timestamp t is at CPU
 * time t.
 */
#include "helpers.h"

#define T 1000000000ull /* a base time */

/* One GPU, identity calibration, queues as asked. */
static crumbs_writer *setup(struct membuf *m, uint32_t *gfx, uint32_t *compute)
{
	crumbs_writer *w = mem_writer(m, 0);
	uint32_t g = add_gpu(w, "GPU A");
	*gfx = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS | CRUMBS_QUEUE_COMPUTE, 1.0f, 64);
	if (compute)
		*compute = add_queue(w, g, CRUMBS_QUEUE_COMPUTE, 1.0f, 64);
	assert_int_equal(crumbs_writer_calibration(w, g, T, T, 0), CRUMBS_OK);
	return w;
}

static void check_inclusive_is_sum(const struct node *n)
{
	int64_t sum = n->exclusive_ns;
	for (const struct node *c = n->child; c; c = c->next) {
		sum += c->inclusive_ns;
		check_inclusive_is_sum(c);
	}
	assert_int_equal(n->inclusive_ns, sum);
}

/* A 36-bit counter wraps inside the frame: 2^36 - 1000 to 500 is 1500 ticks. */
static void counter_wrap_36_bits(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU A");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 36);
	const uint64_t wrap = 1ull << 36;
	/* Tick wrap - 5000 is CPU time 1 000 000. */
	assert_int_equal(crumbs_writer_calibration(w, g, wrap - 5000, 1000000, 0), CRUMBS_OK);
	crumbs_writer_frame_begin(w, 1, 1000000);
	crumbs_writer_queue_ready(w, q, wrap - 5000);              /* 1 000 000 */
	submit(w, q, 1000000, wrap - 2000, NULL, NULL);            /* 1 003 000 */
	crumbs_writer_scope_begin(w, "Wrap", 0, wrap - 1000);      /* 1 004 000 */
	crumbs_writer_scope_end(w, 500);                           /* 1 005 500 */
	crumbs_writer_submit_end(w, 1000);                         /* 1 006 000 */
	crumbs_writer_frame_end(w, 1010000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	const struct frame_queue *fq = &f->queues[q];
	const struct node *n = must_find(fq->root, "Wrap");

	assert_int_equal(n->begin_ns, 1004000);
	assert_int_equal(n->end_ns, 1005500);
	assert_int_equal(n->inclusive_ns, 1500);
	/* 3000 of start-up, 1000 before the scope, 1500 in it, 500 after. */
	assert_int_equal(fq->busy_ns, 6000);
	assert_int_equal(fq->root->exclusive_ns, 4500);
	assert_int_equal(fq->idle_ns, 0);
	assert_int_equal(f->gpus[g].frame_ns, 6000);
	reader_free(c);
	free(m.data);
}

/* 19.2 MHz counter: 1920 ticks of 52.083332 ns are 100 000 ns. */
static void period_conversion(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU B");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 52.083332f, 48);
	/* Tick 1000 is CPU time 5 000 000; tick t is then at
	 * 5 000 000 + round((t - 1000) * 52.083332). */
	crumbs_writer_calibration(w, g, 1000, 5000000, 0);
	crumbs_writer_frame_begin(w, 1, 5000000);
	crumbs_writer_queue_ready(w, q, 1000);
	submit(w, q, 5000000, 2000, NULL, NULL);              /* 5 052 083 */
	crumbs_writer_scope_begin(w, "Pass", 0, 2000);        /* 5 052 083 */
	crumbs_writer_scope_end(w, 3920);                     /* 5 152 083 */
	crumbs_writer_submit_end(w, 3920);
	crumbs_writer_frame_end(w, 5200000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	const struct node *n = must_find(f->queues[q].root, "Pass");

	assert_int_equal(n->begin_ns, 5052083);
	assert_int_equal(n->inclusive_ns, 100000);
	assert_int_equal(f->queues[q].busy_ns, 152083);
	reader_free(c);
	free(m.data);
}

/*
 * Drift: the GPU's counter runs 50 ppm slow against the CPU clock. Tick 0
 * is CPU T (setup), tick 10^9 is CPU T + 1 000 050 000 (in the frame): the
 * slope is 1.00005, so 100 000 ticks last 100 005 ns.
 */
static void calibration_fit_drift(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU A");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	crumbs_writer_calibration(w, g, 0, T, 0);
	crumbs_writer_frame_begin(w, 1, T + 500000000);
	crumbs_writer_calibration(w, g, 1000000000, T + 1000050000, 0);
	crumbs_writer_queue_ready(w, q, 500000000);
	submit(w, q, T + 500000000, 500000000, NULL, NULL);
	crumbs_writer_scope_begin(w, "Drift", 0, 500000000);
	crumbs_writer_scope_end(w, 500100000);
	crumbs_writer_submit_end(w, 500100000);
	crumbs_writer_frame_end(w, T + 600000000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	const struct node *n = must_find(f->queues[q].root, "Drift");

	assert_true(f->gpus[g].calibrated);
	assert_int_equal(f->gpus[g].calibration_samples, 2);
	/* The GPU's clock runs slow: 10^9 of its ns take 1.00005 * 10^9 of the
	 * CPU's, a drift of 1/1.00005 - 1 = -49.9975 ppm. */
	assert_true(f->gpus[g].drift_ppm > -49.999 && f->gpus[g].drift_ppm < -49.996);
	/* Tick 5*10^8 maps to T + 5*10^8 * 1.00005 = T + 500 025 000. */
	assert_int_equal(n->begin_ns, (int64_t)T + 500025000);
	assert_int_equal(n->inclusive_ns, 100005);
	reader_free(c);
	free(m.data);
}

/*
 * Two samples 10 ms apart, the second read 110 us late (a slope of 1.011):
 * no clock drifts by 1.1%, so the period's word stands and the offset is
 * fitted alone; 100 000 ticks last 100 000 ns, not 101 100.
 */
static void calibration_fit_bad_samples(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU A");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	crumbs_writer_calibration(w, g, 0, T, 0);
	crumbs_writer_frame_begin(w, 1, T + 1000000);
	crumbs_writer_calibration(w, g, 10000000, T + 10110000, 0);
	crumbs_writer_queue_ready(w, q, 1000000);
	submit(w, q, T + 1000000, 1000000, NULL, NULL);
	crumbs_writer_scope_begin(w, "Stretched", 0, 1000000);
	crumbs_writer_scope_end(w, 1100000);
	crumbs_writer_submit_end(w, 1100000);
	crumbs_writer_frame_end(w, T + 2000000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	const struct node *n = must_find(f->queues[q].root, "Stretched");
	assert_true(f->gpus[g].calibrated);
	assert_true(f->gpus[g].drift_ppm > -0.001 && f->gpus[g].drift_ppm < 0.001);
	assert_int_equal(n->inclusive_ns, 100000);
	reader_free(c);
	free(m.data);
}

/*
 * Least squares over three samples that do not lie on one line: CPU times
 * T, T + 10^9 + 100, T + 2*10^9 for ticks 0, 10^9, 2*10^9. The slope is 1
 * and the line passes 33.3 ns above the first sample, so tick 100 is at
 * T + 133.
 */
static void calibration_fit_least_squares(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU A");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	crumbs_writer_calibration(w, g, 0, T, 5);
	crumbs_writer_calibration(w, g, 1000000000, T + 1000000100, 5);
	crumbs_writer_calibration(w, g, 2000000000, T + 2000000000, 5);
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T, 100, NULL, NULL);
	crumbs_writer_submit_end(w, 200);
	crumbs_writer_frame_end(w, T + 1000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);

	assert_int_equal(f->gpus[g].calibration_samples, 3);
	assert_true(f->gpus[g].drift_ppm > -0.001 && f->gpus[g].drift_ppm < 0.001);
	assert_int_equal(f->gpus[g].begin_ns, (int64_t)T + 133);
	assert_int_equal(f->gpus[g].end_ns, (int64_t)T + 233);
	reader_free(c);
	free(m.data);
}

/*
 * The CPU submits the second batch 2000 ns after the GPU finished the
 * first: that is idle. The 100 ns from the late submit to the start of the
 * work are busy.
 */
static void idle_from_late_submit(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T, NULL, NULL);
	crumbs_writer_scope_begin(w, "First", 0, T);
	crumbs_writer_scope_end(w, T + 1000);
	crumbs_writer_submit_end(w, T + 1000);
	submit(w, q, T + 3000, T + 3100, NULL, NULL);
	crumbs_writer_scope_begin(w, "Second", 0, T + 3100);
	crumbs_writer_scope_end(w, T + 4100);
	crumbs_writer_submit_end(w, T + 4100);
	crumbs_writer_frame_end(w, T + 5000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame_queue *fq = &next_frame(c)->queues[q];

	assert_int_equal(fq->idle_ns, 2000);
	assert_int_equal(fq->wait_ns, 0);
	assert_int_equal(fq->busy_ns, 2100);
	assert_int_equal(fq->root->exclusive_ns, 100);
	assert_int_equal(must_find(fq->root, "Second")->inclusive_ns, 1000);
	assert_int_equal(fq->submissions, 2);
	reader_free(c);
	free(m.data);
}

/* Idle before the frame's first submission counts from QUEUE_READY. */
static void idle_before_first_submission(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T - 700);
	submit(w, q, T, T + 50, NULL, NULL);
	crumbs_writer_submit_end(w, T + 1050);
	crumbs_writer_frame_end(w, T + 5000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame_queue *fq = &next_frame(c)->queues[q];
	assert_int_equal(fq->idle_ns, 700);
	assert_int_equal(fq->busy_ns, 1050);
	assert_false(fq->flags & FRAME_QUEUE_NO_READY);
	reader_free(c);
	free(m.data);
}

/*
 * Async compute waits for a semaphore that graphics signals at T + 5000.
 * Compute was submitted at T + 100 (idle 100 from its ready time T), then
 * waited until T + 5000 (wait 4900), started work at T + 5200 (200 busy
 * start-up) and ran "Async" for 1000. The signalling submission comes
 * after the wait in the file, as timeline semaphores allow.
 */
static void wait_for_other_queue(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t gfx, comp;
	crumbs_writer *w = setup(&m, &gfx, &comp);
	struct crumbs_semaphore_op op = { 1, 7 };
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, comp, T);
	crumbs_writer_queue_ready(w, gfx, T);
	submit(w, comp, T + 100, T + 5200, &op, NULL);
	crumbs_writer_scope_begin(w, "Async", 0, T + 5200);
	crumbs_writer_scope_end(w, T + 6200);
	crumbs_writer_submit_end(w, T + 6200);
	submit(w, gfx, T + 200, T + 200, NULL, &op);
	crumbs_writer_scope_begin(w, "Producer", 0, T + 200);
	crumbs_writer_scope_end(w, T + 5000);
	crumbs_writer_submit_end(w, T + 5000);
	crumbs_writer_frame_end(w, T + 10000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	const struct frame_queue *cq = &f->queues[comp];
	const struct frame_queue *gq = &f->queues[gfx];

	assert_int_equal(cq->idle_ns, 100);
	assert_int_equal(cq->wait_ns, 4900);
	assert_int_equal(cq->busy_ns, 1200);
	assert_int_equal(must_find(cq->root, "Async")->inclusive_ns, 1000);
	assert_int_equal(gq->idle_ns, 200);
	assert_int_equal(gq->busy_ns, 4800);
	assert_int_equal(gq->wait_ns, 0);
	/* Union: graphics T+200..T+5000, compute T+5000..T+6200. */
	assert_int_equal(f->gpus[0].frame_ns, 6000);

	/* The submissions in file order, with their idle and wait; the wait
	 * was released by graphics' submission, which ended at T+5000. */
	assert_int_equal(f->submission_count, 2);
	const struct submission *cs = &f->submissions[0], *gs = &f->submissions[1];
	assert_int_equal(cs->queue, comp);
	assert_int_equal(cs->index, 0);
	assert_int_equal(cs->cpu_ns, T + 100);
	assert_int_equal(cs->begin_ns, T + 5200);
	assert_int_equal(cs->end_ns, T + 6200);
	assert_int_equal(cs->idle_begin_ns, T);
	assert_int_equal(cs->idle_ns, 100);
	assert_int_equal(cs->wait_begin_ns, T + 100);
	assert_int_equal(cs->wait_ns, 4900);
	assert_int_equal(cs->waits, 1);
	assert_int_equal(gs->queue, gfx);
	assert_int_equal(gs->signals, 1);
	assert_int_equal(gs->idle_begin_ns, T);
	assert_int_equal(gs->idle_ns, 200);
	assert_int_equal(gs->wait_ns, 0);
	assert_int_equal(f->release_count, 1);
	assert_int_equal(f->releases[0].waiter, 0);
	assert_int_equal(f->releases[0].signaller, 1);
	assert_int_equal(f->releases[0].signal_ns, T + 5000);
	reader_free(c);
	free(m.data);
}

/* A timeline value signalled by the host: the wait resolves then. */
static void wait_for_host_signal(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	struct crumbs_semaphore_op op = { 9, 3 };
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T + 1000, T + 5020, &op, NULL);
	crumbs_writer_submit_end(w, T + 6020);
	/* Signalling value 4 satisfies a wait for 3. */
	crumbs_writer_host_signal(w, 9, 4, T + 5000);
	crumbs_writer_frame_end(w, T + 10000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	const struct frame_queue *fq = &f->queues[q];
	assert_int_equal(fq->idle_ns, 1000);
	assert_int_equal(fq->wait_ns, 4000);
	assert_int_equal(fq->busy_ns, 1020);
	assert_int_equal(f->release_count, 1);
	assert_int_equal(f->releases[0].signaller, RELEASE_HOST);
	assert_int_equal(f->releases[0].signal_ns, T + 5000);
	assert_int_equal(f->submissions[0].wait_begin_ns, T + 1000);
	assert_int_equal(f->submissions[0].wait_ns, 4000);
	reader_free(c);
	free(m.data);
}

/*
 * Clocks disagree: the host signal's CPU time lies after the GPU started
 * the waiting work. Work cannot start before its wait resolves, so the
 * wait ends at the start (T + 4000): wait 3000, busy 1000, never negative.
 */
static void wait_clamped_to_start(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	struct crumbs_semaphore_op op = { 9, 1 };
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T + 1000, T + 4000, &op, NULL);
	crumbs_writer_submit_end(w, T + 5000);
	crumbs_writer_host_signal(w, 9, 1, T + 4500);
	crumbs_writer_frame_end(w, T + 10000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame_queue *fq = &next_frame(c)->queues[q];
	assert_int_equal(fq->wait_ns, 3000);
	assert_int_equal(fq->busy_ns, 1000);
	reader_free(c);
	free(m.data);
}

/*
 * Nothing says when the queue finished earlier work, and the frame's first
 * submission waits for a host signal 5000 ns after its submit: that is
 * wait, counted from the submit; no idle is counted before it.
 */
static void first_submission_waits_without_ready(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	struct crumbs_semaphore_op op = { 9, 1 };
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T + 1000, T + 6100, &op, NULL);
	crumbs_writer_submit_end(w, T + 7100);
	crumbs_writer_host_signal(w, 9, 1, T + 6000);
	crumbs_writer_frame_end(w, T + 10000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame_queue *fq = &next_frame(c)->queues[q];
	assert_true(fq->flags & FRAME_QUEUE_NO_READY);
	assert_int_equal(fq->idle_ns, 0);
	assert_int_equal(fq->wait_ns, 5000);
	assert_int_equal(fq->busy_ns, 1100);
	reader_free(c);
	free(m.data);
}

/* A wait whose signal is not in the capture resolves when the work
 * starts: the gap before is wait, not busy. */
static void wait_for_unknown_signal(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	struct crumbs_semaphore_op op = { 4, 1 };
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T + 3000, &op, NULL);
	crumbs_writer_submit_end(w, T + 4000);
	crumbs_writer_frame_end(w, T + 10000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	const struct frame_queue *fq = &f->queues[q];
	assert_int_equal(fq->wait_ns, 3000);
	assert_int_equal(fq->busy_ns, 1000);
	assert_int_equal(f->release_count, 1);
	assert_int_equal(f->releases[0].signaller, RELEASE_UNKNOWN);
	assert_true(f->releases[0].signal_ns == INT64_MIN);
	reader_free(c);
	free(m.data);
}

/*
 * "Span" begins in one submission and ends in the next; the 4000 ns the
 * queue stood idle between them are not in it: 900 + 400.
 */
static void scope_spanning_submissions(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T, NULL, NULL);
	crumbs_writer_scope_begin(w, "Span", 0, T + 100);
	crumbs_writer_submit_end(w, T + 1000);
	submit(w, q, T + 5000, T + 5000, NULL, NULL);
	crumbs_writer_scope_end(w, T + 5400);
	crumbs_writer_submit_end(w, T + 5500);
	crumbs_writer_frame_end(w, T + 6000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame_queue *fq = &next_frame(c)->queues[q];
	const struct node *n = must_find(fq->root, "Span");

	assert_int_equal(n->inclusive_ns, 1300);
	assert_int_equal(n->begin_ns, (int64_t)T + 100);
	assert_int_equal(n->end_ns, (int64_t)T + 5400);
	assert_int_equal(fq->idle_ns, 4000);
	assert_int_equal(fq->busy_ns, 1500);
	assert_int_equal(fq->open_scopes, 0);
	reader_free(c);
	free(m.data);
}

/*
 * Graphics busy T..T+1000 and T+2000..T+3000, compute T+500..T+2500:
 * 4000 of busy time in all, but the GPU frame time is their union, 3000.
 */
static void overlapping_queues_union(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t gfx, comp;
	crumbs_writer *w = setup(&m, &gfx, &comp);
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, gfx, T);
	crumbs_writer_queue_ready(w, comp, T + 500);
	submit(w, gfx, T, T, NULL, NULL);
	crumbs_writer_submit_end(w, T + 1000);
	submit(w, comp, T + 500, T + 500, NULL, NULL);
	crumbs_writer_submit_end(w, T + 2500);
	submit(w, gfx, T + 2000, T + 2000, NULL, NULL);
	crumbs_writer_submit_end(w, T + 3000);
	crumbs_writer_frame_end(w, T + 4000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);

	assert_int_equal(f->queues[gfx].busy_ns, 2000);
	assert_int_equal(f->queues[gfx].idle_ns, 1000);
	assert_int_equal(f->queues[comp].busy_ns, 2000);
	assert_int_equal(f->gpus[0].frame_ns, 3000);
	assert_int_equal(f->gpus[0].begin_ns, (int64_t)T);
	assert_int_equal(f->gpus[0].end_ns, (int64_t)T + 3000);
	/* The union, as intervals: gfx's two and compute's one overlap. */
	assert_int_equal(f->busy_count, 1);
	assert_int_equal(f->busy[0].begin_ns, (int64_t)T);
	assert_int_equal(f->busy[0].end_ns, (int64_t)T + 3000);
	reader_free(c);
	free(m.data);
}

/* Two GPUs keep separate frame times. */
static void two_gpus(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g0 = add_gpu(w, "GPU A"), g1 = add_gpu(w, "GPU B");
	uint32_t q0 = add_queue(w, g0, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	uint32_t q1 = add_queue(w, g1, CRUMBS_QUEUE_GRAPHICS, 2.0f, 64);
	crumbs_writer_calibration(w, g0, T, T, 0);
	crumbs_writer_calibration(w, g1, 0, T, 0); /* tick t of GPU B: T + 2t */
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q0, T, T, NULL, NULL);
	crumbs_writer_submit_end(w, T + 1000);
	submit(w, q1, T, 0, NULL, NULL);
	crumbs_writer_submit_end(w, 3000);
	crumbs_writer_frame_end(w, T + 9000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_int_equal(f->gpu_count, 2);
	assert_int_equal(f->gpus[g0].frame_ns, 1000);
	assert_int_equal(f->gpus[g1].frame_ns, 6000);
	assert_string_equal(reader_meta(c)->queues[q1].name, "Graphics 0");
	reader_free(c);
	free(m.data);
}

/* A scope left open is closed at the frame end and flagged; an end with
 * nothing open is counted, not matched to anything. */
static void scope_left_open(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T, NULL, NULL);
	crumbs_writer_scope_end(w, T + 50); /* stray: nothing open */
	crumbs_writer_scope_begin(w, "Outer", 0, T + 100);
	crumbs_writer_scope_begin(w, "Inner", 1, T + 200);
	crumbs_writer_scope_end(w, T + 300);
	crumbs_writer_submit_end(w, T + 1000);
	crumbs_writer_frame_end(w, T + 2000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame_queue *fq = &next_frame(c)->queues[q];
	const struct node *outer = must_find(fq->root, "Outer");
	const struct node *inner = must_find(fq->root, "Inner");

	assert_true(outer->flags & NODE_OPEN);
	assert_false(inner->flags & NODE_OPEN);
	assert_int_equal(fq->open_scopes, 1);
	assert_int_equal(fq->unmatched_ends, 1);
	/* 100 + 700 own, 100 of Inner. */
	assert_int_equal(outer->inclusive_ns, 900);
	assert_int_equal(outer->exclusive_ns, 800);
	assert_int_equal(fq->root->exclusive_ns, 100);
	assert_int_equal(fq->busy_ns, 1000);
	check_inclusive_is_sum(fq->root);
	reader_free(c);
	free(m.data);
}

/*
 * Leaves: exclusive counts are the node's own, inclusive the subtree's; an
 * indirect draw makes prims unknown, so its ancestors' prims are lower
 * bounds. The leaf's own time is between its two timestamps.
 */
static void leaf_counts(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	struct crumbs_leaf_desc draw = { CRUMBS_EVENT_DRAW, "Draw A", 1, 0, 100, 300, T + 110, T + 150 };
	struct crumbs_leaf_desc indirect = { CRUMBS_EVENT_DRAW, NULL, 1, 0, CRUMBS_COUNT_UNKNOWN,
					     CRUMBS_COUNT_UNKNOWN, T + 160, T + 200 };
	struct crumbs_leaf_desc dispatch = { CRUMBS_EVENT_DISPATCH, NULL, 0, 4, 0, 0,
					     CRUMBS_NO_TICKS, CRUMBS_NO_TICKS };
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T, NULL, NULL);
	crumbs_writer_scope_begin(w, "Pass", 0, T + 100);
	crumbs_writer_event_begin(w, CRUMBS_EVENT_RENDER_PASS, "RP", T + 105);
	crumbs_writer_leaf(w, &draw);
	crumbs_writer_leaf(w, &indirect);
	crumbs_writer_scope_end(w, T + 210);
	crumbs_writer_leaf(w, &dispatch);
	crumbs_writer_scope_end(w, T + 300);
	crumbs_writer_submit_end(w, T + 300);
	crumbs_writer_frame_end(w, T + 400, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	const struct frame_queue *fq = &f->queues[q];
	const struct node *pass = must_find(fq->root, "Pass");
	const struct node *rp = must_find(fq->root, "RP");
	const struct node *a = must_find(fq->root, "Draw A");
	const struct node *d = must_find(fq->root, "Draw");
	const struct node *x = must_find(fq->root, "Dispatch");

	assert_int_equal(a->exclusive.draws, 1);
	assert_int_equal(a->exclusive.prims, 100);
	assert_int_equal(a->inclusive_ns, 40);
	assert_int_equal(d->exclusive.unknown, COUNT_PRIMS | COUNT_VERTS);
	assert_int_equal(rp->kind, CRUMBS_EVENT_RENDER_PASS);
	assert_int_equal(rp->exclusive.draws, 0);
	assert_int_equal(rp->inclusive.draws, 2);
	assert_int_equal(rp->inclusive.prims, 100);
	assert_int_equal(rp->inclusive.unknown, COUNT_PRIMS | COUNT_VERTS);
	/* 105..110, 150..160, 200..210 */
	assert_int_equal(rp->exclusive_ns, 25);
	assert_int_equal(rp->inclusive_ns, 105);
	assert_int_equal(x->exclusive.dispatches, 4);
	assert_int_equal(x->inclusive_ns, 0);
	assert_true(x->flags & NODE_UNTIMED);
	assert_int_equal(pass->inclusive.draws, 2);
	assert_int_equal(pass->inclusive.dispatches, 4);
	assert_int_equal(pass->exclusive_ns, 5 + 90);
	assert_int_equal(pass->inclusive_ns, 200);
	assert_int_equal(fq->scopes, 1);
	assert_int_equal(fq->events, 4);
	assert_int_equal(f->events, 4);
	check_inclusive_is_sum(fq->root);
	reader_free(c);
	free(m.data);
}

/* Counts without leaf events belong to the innermost open scope (the
 * queue's own outside any), exclusive there and inclusive above. */
static void counts_of_scopes(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T, T, NULL, NULL);
	assert_int_equal(crumbs_writer_counts(w, 0, 2, 0, 0), CRUMBS_OK);
	crumbs_writer_scope_begin(w, "Pass", 0, T + 10);
	crumbs_writer_counts(w, 3, 0, 300, 900);
	crumbs_writer_scope_begin(w, "Inner", 1, T + 20);
	crumbs_writer_counts(w, 1, 0, CRUMBS_COUNT_UNKNOWN, 0);
	crumbs_writer_scope_end(w, T + 30);
	crumbs_writer_scope_end(w, T + 40);
	crumbs_writer_submit_end(w, T + 50);
	crumbs_writer_frame_end(w, T + 100, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame_queue *fq = &next_frame(c)->queues[q];
	const struct node *pass = must_find(fq->root, "Pass");
	const struct node *inner = must_find(fq->root, "Inner");
	assert_int_equal(fq->root->exclusive.dispatches, 2);
	assert_int_equal(pass->exclusive.draws, 3);
	assert_int_equal(pass->exclusive.verts, 900);
	assert_int_equal(inner->exclusive.draws, 1);
	assert_int_equal(inner->exclusive.unknown, COUNT_PRIMS);
	assert_int_equal(pass->inclusive.draws, 4);
	assert_int_equal(pass->inclusive.prims, 300);
	assert_int_equal(pass->inclusive.unknown, COUNT_PRIMS);
	assert_int_equal(fq->root->inclusive.draws, 4);
	assert_int_equal(fq->events, 0);
	reader_free(c);
	free(m.data);
}

/*
 * Pipeline statistics (format 1.5): stretches add to the innermost open
 * scope, exclusive there and inclusive above; a leaf's follow it; an
 * unknown stretch makes its scope's and its ancestors' inclusive unknown,
 * not their siblings'; a render pass's area gives fragments per pixel.
 */
static void pipeline_counters(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	uint64_t v[CRUMBS_PIPELINE_COUNTERS] = { 0 };
	const uint32_t ia = 1u << CRUMBS_COUNTER_IA_PRIMITIVES;
	const uint32_t fs = 1u << CRUMBS_COUNTER_FS_INVOCATIONS;
	const uint32_t clip = 1u << CRUMBS_COUNTER_CLIP_INVOCATIONS |
			      1u << CRUMBS_COUNTER_CLIP_PRIMITIVES;
	struct crumbs_leaf_desc draw = { CRUMBS_EVENT_DRAW, "Draw", 1, 0, 10, 30, CRUMBS_NO_TICKS,
					 CRUMBS_NO_TICKS };
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T, T, NULL, NULL);
	crumbs_writer_scope_begin(w, "Frame", 0, T + 10);
	v[CRUMBS_COUNTER_IA_PRIMITIVES] = 5;
	assert_int_equal(crumbs_writer_counters(w, 0, ia, v), CRUMBS_OK);
	crumbs_writer_event_begin(w, CRUMBS_EVENT_RENDER_PASS, "RP", T + 20);
	assert_int_equal(crumbs_writer_render_area(w, 10, 20), CRUMBS_OK);
	v[CRUMBS_COUNTER_FS_INVOCATIONS] = 400;
	assert_int_equal(crumbs_writer_counters(w, 0, fs, v), CRUMBS_OK);
	crumbs_writer_leaf(w, &draw);
	v[CRUMBS_COUNTER_IA_PRIMITIVES] = 10;
	v[CRUMBS_COUNTER_CLIP_INVOCATIONS] = 10;
	v[CRUMBS_COUNTER_CLIP_PRIMITIVES] = 7;
	assert_int_equal(crumbs_writer_counters(w, 1, ia | clip, v), CRUMBS_OK);
	crumbs_writer_scope_end(w, T + 30);
	/* A scope of two passes: their fragments over both areas. */
	crumbs_writer_scope_begin(w, "Two Passes", 1, T + 35);
	assert_int_equal(crumbs_writer_render_area(w, 10, 10), CRUMBS_OK);
	assert_int_equal(crumbs_writer_render_area(w, 10, 10), CRUMBS_OK);
	v[CRUMBS_COUNTER_FS_INVOCATIONS] = 400;
	assert_int_equal(crumbs_writer_counters(w, 0, fs, v), CRUMBS_OK);
	crumbs_writer_scope_end(w, T + 38);
	crumbs_writer_scope_begin(w, "Lost", 1, T + 40);
	assert_int_equal(crumbs_writer_counters_unknown(w, 0), CRUMBS_OK);
	crumbs_writer_scope_end(w, T + 50);
	crumbs_writer_scope_end(w, T + 60);
	crumbs_writer_submit_end(w, T + 70);
	/* What a writer refuses: values past 2^63, bits past the set's. */
	v[0] = UINT64_MAX;
	assert_int_equal(crumbs_writer_counters(w, 0, 1, v), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_counters(w, 0, 1u << CRUMBS_PIPELINE_COUNTERS, v),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_render_area(w, 0, 1), CRUMBS_ERROR_INVALID_ARGUMENT);
	crumbs_writer_frame_end(w, T + 100, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame_queue *fq = &next_frame(c)->queues[q];
	const struct node *frame = must_find(fq->root, "Frame");
	const struct node *rp = must_find(fq->root, "RP");
	const struct node *d = must_find(fq->root, "Draw");
	const struct node *lost = must_find(fq->root, "Lost");
	uint64_t x = 0;
	double r = 0;
	assert_true(node_counter(frame, false, CRUMBS_COUNTER_IA_PRIMITIVES, &x));
	assert_int_equal(x, 5);
	assert_true(node_counters_unknown(frame, true));
	assert_false(node_counter(frame, true, CRUMBS_COUNTER_IA_PRIMITIVES, &x));
	assert_false(node_counters_unknown(rp, true));
	assert_false(node_counter(rp, false, CRUMBS_COUNTER_IA_PRIMITIVES, &x));
	assert_true(node_counter(rp, true, CRUMBS_COUNTER_IA_PRIMITIVES, &x));
	assert_int_equal(x, 10);
	assert_true(node_counter(d, false, CRUMBS_COUNTER_IA_PRIMITIVES, &x));
	assert_int_equal(x, 10);
	assert_true(node_culled_primitives(d, true, &x));
	assert_int_equal(x, 3);
	assert_true(node_fragments_per_pixel(rp, true, &r));
	assert_true(r == 2.0);
	/* The draw's fragments per pixel are over its pass's area. */
	assert_false(node_fragments_per_pixel(d, true, &r));
	assert_true(node_fragments_per_pixel(must_find(fq->root, "Two Passes"), false, &r));
	assert_true(r == 2.0);
	assert_true(node_counters_unknown(lost, false));
	/* The root holds what is outside every scope: nothing. */
	assert_true(node_counters_unknown(fq->root, true));
	reader_free(c);
	free(m.data);
}

/* A queue label (no timestamps, outside submissions) gets only the busy
 * time of the submissions inside it. */
static void queue_label(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	crumbs_writer_select_queue(w, q);
	crumbs_writer_scope_begin(w, "Queue Label", 0, CRUMBS_NO_TICKS);
	submit(w, q, T + 1000, T + 1000, NULL, NULL);
	crumbs_writer_submit_end(w, T + 1500);
	submit(w, q, T + 3000, T + 3000, NULL, NULL);
	crumbs_writer_submit_end(w, T + 3250);
	crumbs_writer_scope_end(w, CRUMBS_NO_TICKS);
	crumbs_writer_frame_end(w, T + 4000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame_queue *fq = &next_frame(c)->queues[q];
	const struct node *n = must_find(fq->root, "Queue Label");
	assert_int_equal(n->inclusive_ns, 750);
	assert_true(n->flags & NODE_UNTIMED);
	assert_int_equal(fq->idle_ns, 2500);
	reader_free(c);
	free(m.data);
}

/* Command buffers a submission ran that the capture holds nothing of
 * are counted on the submission and its queue; their time is in the
 * submission's, in the row that holds it: here the queue's own, 500 of
 * the first submission's 1000 outside "Known". */
static void unrecorded_command_buffers(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T, NULL, NULL);
	assert_int_equal(crumbs_writer_unrecorded(w, 1), CRUMBS_OK);
	crumbs_writer_scope_begin(w, "Known", 0, T + 500);
	crumbs_writer_scope_end(w, T + 1000);
	assert_int_equal(crumbs_writer_unrecorded(w, 2), CRUMBS_OK);
	crumbs_writer_submit_end(w, T + 1000);
	submit(w, q, T + 2000, T + 2000, NULL, NULL);
	crumbs_writer_submit_end(w, T + 2100);
	crumbs_writer_frame_end(w, T + 3000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	const struct frame_queue *fq = &f->queues[q];
	assert_int_equal(fq->unrecorded, 3);
	assert_int_equal(f->submission_count, 2);
	assert_int_equal(f->submissions[0].unrecorded, 3);
	assert_int_equal(f->submissions[1].unrecorded, 0);
	assert_int_equal(fq->busy_ns, 1100);
	assert_int_equal(fq->root->exclusive_ns, 600);
	assert_int_equal(must_find(fq->root, "Known")->inclusive_ns, 500);
	reader_free(c);
	free(m.data);
}

/* A queue whose family has no timestamps: counts, no times. */
static void queue_without_timestamps(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU A");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_TRANSFER, 1.0f, 0);
	struct crumbs_leaf_desc copy = { CRUMBS_EVENT_COPY, NULL, 0, 0, 0, 0, 5, 6 };
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T, 77, NULL, NULL); /* ticks are dropped */
	crumbs_writer_scope_begin(w, "Upload", 0, 88);
	crumbs_writer_leaf(w, &copy);
	crumbs_writer_scope_end(w, 99);
	crumbs_writer_submit_end(w, 100);
	crumbs_writer_frame_end(w, T + 10, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame_queue *fq = &next_frame(c)->queues[q];
	assert_true(fq->flags & FRAME_QUEUE_NO_TIMESTAMPS);
	assert_int_equal(fq->busy_ns, 0);
	assert_int_equal(fq->idle_ns, 0);
	assert_int_equal(fq->submissions, 1);
	const struct node *n = must_find(fq->root, "Upload");
	assert_int_equal(n->child_count, 1);
	assert_int_equal(n->inclusive_ns, 0);
	reader_free(c);
	free(m.data);
}

/* Without calibration the first submission's start is taken to be its
 * CPU submit time. */
static void uncalibrated(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU A");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T + 10, 123456, NULL, NULL);
	crumbs_writer_submit_end(w, 124456);
	crumbs_writer_frame_end(w, T + 5000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_false(f->gpus[g].calibrated);
	assert_int_equal(f->gpus[g].begin_ns, (int64_t)T + 10);
	assert_int_equal(f->gpus[g].frame_ns, 1000);
	assert_true(f->queues[q].flags & FRAME_QUEUE_NO_READY);
	reader_free(c);
	free(m.data);
}

/* Frames in many chunks: sequential reading, seeking into the middle of a
 * chunk, the last frame, rewinding, and a device added mid-run. */
static void frames_seek_and_setup(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = mem_writer(&m, 256); /* a few frames a chunk */
	uint32_t g = add_gpu(w, "GPU A");
	q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	crumbs_writer_calibration(w, g, T, T, 0);
	for (uint64_t i = 0; i < 100; i++) {
		uint64_t t = T + i * 100000;
		if (i == 60) {
			uint32_t g2 = add_gpu(w, "GPU late");
			add_queue(w, g2, CRUMBS_QUEUE_COMPUTE, 1.0f, 64);
		}
		crumbs_writer_frame_begin(w, 10 + 2 * i, t);
		crumbs_writer_queue_ready(w, q, t);
		submit(w, q, t, t, NULL, NULL);
		crumbs_writer_scope_begin(w, i % 2 ? "Odd" : "Even", 0, t);
		crumbs_writer_scope_end(w, t + 1000 + i);
		crumbs_writer_submit_end(w, t + 1000 + i);
		crumbs_writer_frame_end(w, t + 50000, 0, 0);
	}
	reader *c = mem_read(&m, w);
	const struct capture_meta *meta = reader_meta(c);
	struct analyze_error e;
	const struct frame *f;

	assert_true(meta->has_index);
	assert_int_equal(meta->frame_count, 100);
	assert_int_equal(meta->first_frame, 10);
	assert_int_equal(meta->last_frame, 208);
	assert_true(meta->chunk_count > 10);
	for (uint64_t i = 0; i < 100; i++) {
		f = next_frame(c);
		assert_int_equal(f->number, 10 + 2 * i);
		assert_int_equal(f->queues[q].busy_ns, 1000 + (int64_t)i);
		assert_int_equal(f->gpu_count, i < 60 ? 1 : 2);
	}
	assert_int_equal(reader_next_frame(c, &f, &e), CRUMBS_OK);
	assert_null(f);

	assert_int_equal(reader_seek_frame(c, 10 + 2 * 37, &e), CRUMBS_OK);
	assert_int_equal(next_frame(c)->number, 84);
	assert_int_equal(next_frame(c)->number, 86);
	assert_int_equal(reader_seek_frame(c, 11, &e), CRUMBS_ERROR_NOT_FOUND);
	assert_non_null(strstr(e.text, "holds frames 10 to 208"));
	assert_int_equal(reader_seek_frame(c, 9999, &e), CRUMBS_ERROR_NOT_FOUND);
	assert_int_equal(reader_seek_frame(c, 10 + 2 * 70, &e), CRUMBS_OK);
	f = next_frame(c);
	assert_int_equal(f->gpu_count, 2);
	/* Back before the device was added: it is not known there. */
	assert_int_equal(reader_seek_frame(c, 10 + 2 * 59, &e), CRUMBS_OK);
	f = next_frame(c);
	assert_int_equal(f->gpu_count, 1);
	assert_int_equal(reader_seek_last(c, &e), CRUMBS_OK);
	assert_int_equal(next_frame(c)->number, 208);
	assert_int_equal(reader_rewind(c, &e), CRUMBS_OK);
	assert_int_equal(next_frame(c)->number, 10);
	reader_free(c);
	free(m.data);
}

/* Reads the frames of m as they are and with a reader setting on
 * (reader_skip_scopes, reader_flat_scopes). */
static void read_both(struct membuf *m, crumbs_writer *w, reader **full, reader **other,
		      void (*setting)(reader *, bool))
{
	struct analyze_error e;
	*full = mem_read(m, w);
	assert_int_equal(reader_open_memory(m->data, m->len, other, &e), CRUMBS_OK);
	setting(*other, true);
}

/*
 * reader_skip_scopes: the same frame without its trees. Every number but
 * the nodes' is the same; each queue's root holds all of its busy time and
 * counts. Leaves, a render pass, counts, a scope left open, a stray end,
 * and a second queue that waits for the first.
 */
static void skipped_scopes(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q, q2;
	crumbs_writer *w = setup(&m, &q, &q2);
	struct crumbs_semaphore_op sem = { 7, 1 };
	struct crumbs_leaf_desc draw = { CRUMBS_EVENT_DRAW, "Draw A", 1, 0, 100, 300, T + 110, T + 150 };
	struct crumbs_leaf_desc dispatch = { CRUMBS_EVENT_DISPATCH, NULL, 0, 4, 0, 0,
					     CRUMBS_NO_TICKS, CRUMBS_NO_TICKS };
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T + 20, NULL, &sem);
	crumbs_writer_scope_end(w, T + 50); /* stray */
	crumbs_writer_counts(w, 0, 2, 0, 0);
	crumbs_writer_scope_begin(w, "Pass", 0, T + 100);
	crumbs_writer_event_begin(w, CRUMBS_EVENT_RENDER_PASS, "RP", T + 105);
	crumbs_writer_leaf(w, &draw);
	crumbs_writer_scope_end(w, T + 210);
	crumbs_writer_leaf(w, &dispatch);
	crumbs_writer_scope_end(w, T + 300);
	crumbs_writer_scope_begin(w, "Open", 0, T + 400);
	crumbs_writer_submit_end(w, T + 500);
	crumbs_writer_queue_ready(w, q2, T + 10);
	submit(w, q2, T + 30, T + 600, &sem, NULL);
	crumbs_writer_scope_begin(w, "Late", 0, T + 620);
	crumbs_writer_scope_end(w, T + 700);
	crumbs_writer_submit_end(w, T + 710);
	crumbs_writer_frame_end(w, T + 1000, 0, 0);
	reader *full, *skipped;
	read_both(&m, w, &full, &skipped, reader_skip_scopes);
	const struct frame *a = next_frame(full), *b = next_frame(skipped);

	assert_int_equal(b->scopes, a->scopes);
	assert_int_equal(b->scopes, 3);
	assert_int_equal(b->events, a->events);
	assert_int_equal(b->events, 3);
	assert_int_equal(b->timestamps, a->timestamps);
	assert_int_equal(b->gpus[0].frame_ns, a->gpus[0].frame_ns);
	assert_int_equal(b->gpus[0].begin_ns, a->gpus[0].begin_ns);
	assert_int_equal(b->gpus[0].end_ns, a->gpus[0].end_ns);
	assert_int_equal(b->submission_count, a->submission_count);
	assert_memory_equal(b->submissions, a->submissions,
			    a->submission_count * sizeof(*a->submissions));
	assert_int_equal(b->release_count, a->release_count);
	assert_memory_equal(b->releases, a->releases, a->release_count * sizeof(*a->releases));
	for (uint32_t i = 0; i < 2; i++) {
		const struct frame_queue *x = &a->queues[i], *y = &b->queues[i];
		assert_int_equal(y->busy_ns, x->busy_ns);
		assert_int_equal(y->wait_ns, x->wait_ns);
		assert_int_equal(y->idle_ns, x->idle_ns);
		assert_int_equal(y->scopes, x->scopes);
		assert_int_equal(y->events, x->events);
		assert_int_equal(y->open_scopes, x->open_scopes);
		assert_int_equal(y->unmatched_ends, x->unmatched_ends);
		assert_null(y->root->child);
		assert_int_equal(y->root->inclusive_ns, x->root->inclusive_ns);
		assert_int_equal(y->root->exclusive_ns, y->busy_ns);
		assert_memory_equal(&y->root->inclusive, &x->root->inclusive,
				    sizeof(x->root->inclusive));
	}
	assert_int_equal(b->queues[q].open_scopes, 1);
	assert_int_equal(b->queues[q].unmatched_ends, 1);
	assert_int_equal(b->queues[q].root->inclusive.draws, 1);
	assert_int_equal(b->queues[q].root->inclusive.dispatches, 6);
	assert_true(b->queues[q2].wait_ns > 0);
	struct analyze_error e;
	assert_int_equal(reader_next_frame(skipped, &b, &e), CRUMBS_OK);
	assert_null(b);
	reader_free(full);
	reader_free(skipped);
	free(m.data);
}

/* A record of reader_flat_scopes, as expected. */
static void check_flat(const struct flat_scope *r, const char *name, uint32_t parent,
		       uint32_t depth, int64_t exclusive_ns, int64_t inclusive_ns)
{
	assert_int_equal(r->name_len, strlen(name));
	assert_memory_equal(r->name, name, r->name_len);
	assert_int_equal(r->parent, parent);
	assert_int_equal(r->depth, depth);
	assert_int_equal(r->exclusive_ns, exclusive_ns);
	assert_int_equal(r->inclusive_ns, inclusive_ns);
}

/* The statistics of every frame of m, read with or without
 * reader_flat_scopes. */
static stats *stats_of(struct membuf *m, bool flat)
{
	struct analyze_error e;
	reader *c;
	const struct frame *f;
	stats *s = stats_create();
	assert_non_null(s);
	assert_int_equal(reader_open_memory(m->data, m->len, &c, &e), CRUMBS_OK);
	reader_flat_scopes(c, flat);
	while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f)
		assert_int_equal(stats_add_frame(s, reader_meta(c), f), CRUMBS_OK);
	assert_int_equal(e.code, CRUMBS_OK);
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
	reader_free(c);
	return s;
}

/*
 * reader_flat_scopes: a queue's scopes as records in preorder. A render
 * pass and the leaves in it are no records: their time is the scope's
 * around them (Pass: 5 before RP, 5 in RP before the draw, 40 of the
 * draw, 10 and 40 in RP around Inner, 90 after RP: 190 of 200), and a
 * scope inside them is that scope's child, at its depth in the tree
 * (Inner, 3). A scope left
 * open is closed at the frame end; a stray end changes nothing. The rest
 * of the frame is as the tree's, and so are the statistics: a second frame
 * has 70 scopes inside one, more than the records first made room for.
 */
static void flat_scopes(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q, q2;
	crumbs_writer *w = setup(&m, &q, &q2);
	struct crumbs_semaphore_op sem = { 7, 1 };
	struct crumbs_leaf_desc draw = { CRUMBS_EVENT_DRAW, "Draw A", 1, 0, 100, 300, T + 110, T + 150 };
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T + 20, NULL, &sem);
	crumbs_writer_scope_end(w, T + 50); /* stray */
	crumbs_writer_scope_begin(w, "Pass", 0, T + 100);
	crumbs_writer_event_begin(w, CRUMBS_EVENT_RENDER_PASS, "RP", T + 105);
	crumbs_writer_leaf(w, &draw);
	crumbs_writer_scope_begin(w, "Inner", 0, T + 160);
	crumbs_writer_scope_end(w, T + 170);
	crumbs_writer_scope_end(w, T + 210);
	crumbs_writer_scope_end(w, T + 300);
	crumbs_writer_scope_begin(w, "Open", 0, T + 400);
	crumbs_writer_submit_end(w, T + 500);
	crumbs_writer_queue_ready(w, q2, T + 10);
	submit(w, q2, T + 30, T + 600, &sem, NULL);
	crumbs_writer_scope_begin(w, "Late", 0, T + 620);
	crumbs_writer_scope_end(w, T + 700);
	crumbs_writer_submit_end(w, T + 710);
	crumbs_writer_frame_end(w, T + 1000, 0, 0);
	crumbs_writer_frame_begin(w, 2, T + 1000);
	submit(w, q, T + 1000, T + 1000, NULL, NULL);
	crumbs_writer_scope_begin(w, "Outer", 0, T + 1000);
	for (int i = 0; i < 70; i++) {
		crumbs_writer_scope_begin(w, "S", 1, T + 1010 + 10 * (uint64_t)i);
		crumbs_writer_scope_end(w, T + 1015 + 10 * (uint64_t)i);
	}
	crumbs_writer_scope_end(w, T + 1800);
	crumbs_writer_submit_end(w, T + 1800);
	crumbs_writer_frame_end(w, T + 2000, 0, 0);
	reader *full, *flat;
	read_both(&m, w, &full, &flat, reader_flat_scopes);
	const struct frame *a = next_frame(full), *b = next_frame(flat);

	const struct frame_queue *fq = &b->queues[q];
	assert_null(fq->root->child);
	assert_null(a->queues[q].flat);
	assert_int_equal(fq->flat_count, 3);
	check_flat(&fq->flat[0], "Pass", FLAT_NONE, 1, 190, 200);
	check_flat(&fq->flat[1], "Inner", 0, 3, 10, 10);
	check_flat(&fq->flat[2], "Open", FLAT_NONE, 1, 100, 100);
	assert_int_equal(b->queues[q2].flat_count, 1);
	check_flat(&b->queues[q2].flat[0], "Late", FLAT_NONE, 1, 80, 80);
	assert_int_equal(b->scopes, a->scopes);
	assert_int_equal(b->events, a->events);
	assert_int_equal(b->gpus[0].frame_ns, a->gpus[0].frame_ns);
	assert_memory_equal(b->submissions, a->submissions,
			    a->submission_count * sizeof(*a->submissions));
	for (uint32_t i = 0; i < 2; i++) {
		const struct frame_queue *x = &a->queues[i], *y = &b->queues[i];
		assert_int_equal(y->busy_ns, x->busy_ns);
		assert_int_equal(y->wait_ns, x->wait_ns);
		assert_int_equal(y->idle_ns, x->idle_ns);
		assert_int_equal(y->open_scopes, x->open_scopes);
		assert_int_equal(y->unmatched_ends, x->unmatched_ends);
		assert_int_equal(y->root->exclusive_ns, x->root->exclusive_ns);
		assert_int_equal(y->root->inclusive_ns, x->root->inclusive_ns);
	}
	assert_int_equal(fq->open_scopes, 1);
	assert_int_equal(fq->unmatched_ends, 1);

	b = next_frame(flat);
	fq = &b->queues[q];
	assert_int_equal(fq->flat_count, 71);
	check_flat(&fq->flat[0], "Outer", FLAT_NONE, 1, 800 - 70 * 5, 800);
	for (uint32_t i = 1; i <= 70; i++)
		check_flat(&fq->flat[i], "S", 0, 2, 5, 5);
	reader_free(full);
	reader_free(flat);

	stats *x = stats_of(&m, false), *y = stats_of(&m, true);
	assert_true(stats_row_count(x) > 9);
	assert_same_stats(x, y);
	stats_free(x);
	stats_free(y);
	free(m.data);
}

/*
 * Format 1.4's CPU records, frame T to T + 10000. Thread 1 ends frames and
 * waits twice at the top (1000 to 3000, with a wait and a scope inside,
 * and 5000 to 6000): 3000 ns of waiting; thread 2 waits from 8000 and is
 * still waiting at the frame end: 2000.
 *
 * Tasks on "Jobs": Cull (1) waits 200 to 500, executes to 1500; Shade (2)
 * waits from 300, executes from 1000 (before Cull ended: violated), ends
 * at 2500; Skin (3) waits from 400, executes from 1600 (after: kept),
 * ends at 2000. On "IO": Stream (4) begun at T - 5000, shown from T,
 * ends at 700; Open (5) from 800, still executing at the frame end.
 * Cull may not execute before Open ends, given at 100: it executed at
 * 500, and Open never ended: violated. Open never enters "Done"; task 6
 * does not exist. Four misuses: a state of task 9, a second begin of 2,
 * an end and a state of Cull once it ended.
 */
static crumbs_writer *tasks_frame(struct membuf *m)
{
	uint32_t q;
	crumbs_writer *w = setup(m, &q, NULL);
	crumbs_writer_frame_begin(w, 1, T);
	assert_int_equal(crumbs_writer_cpu_thread(w, 1, "Main"), CRUMBS_OK);
	assert_int_equal(crumbs_writer_frame_thread(w, 1), CRUMBS_OK);
	crumbs_writer_cpu_begin(w, "Frame", 0, T + 100);
	assert_int_equal(crumbs_writer_cpu_wait_begin(w, "Present", 0, T + 1000), CRUMBS_OK);
	crumbs_writer_cpu_wait_begin(w, "Fence", 1, T + 1500);
	crumbs_writer_cpu_end(w, T + 2000);
	crumbs_writer_cpu_begin(w, "Inner", 1, T + 2500);
	crumbs_writer_cpu_end(w, T + 2600);
	crumbs_writer_cpu_end(w, T + 3000);
	crumbs_writer_cpu_wait_begin(w, "Acquire", 0, T + 5000);
	crumbs_writer_cpu_end(w, T + 6000);
	crumbs_writer_cpu_end(w, T + 9000);
	crumbs_writer_cpu_thread(w, 2, "Worker");
	crumbs_writer_cpu_wait_begin(w, "Wait open", 0, T + 8000);

	assert_int_equal(crumbs_writer_timeline_frame(w, "Game", T + 100), CRUMBS_OK);
	crumbs_writer_timeline_frame(w, "Physics", T + 200);
	assert_int_equal(crumbs_writer_task_depend(w, 1, "Executing", 5, T + 100), CRUMBS_OK);
	assert_int_equal(crumbs_writer_task_begin(w, 1, "Jobs", "Cull", "Waiting", 0, T + 200),
			 CRUMBS_OK);
	crumbs_writer_task_begin(w, 2, "Jobs", "Shade", "Waiting", 0, T + 300);
	crumbs_writer_task_depend(w, 2, "Executing", 1, T + 300);
	crumbs_writer_task_begin(w, 3, "Jobs", "Skin", "Waiting", 0, T + 400);
	crumbs_writer_task_depend(w, 3, "Executing", 1, T + 400);
	assert_int_equal(crumbs_writer_task_state(w, 1, "Executing", T + 500), CRUMBS_OK);
	crumbs_writer_task_begin(w, 4, "IO", "Stream", NULL, 1, T - 5000);
	crumbs_writer_task_end(w, 4, T + 700);
	crumbs_writer_task_begin(w, 5, "IO", "Open", NULL, 0, T + 800);
	crumbs_writer_task_depend(w, 5, "Done", 4, T + 800);
	crumbs_writer_task_depend(w, 6, "Executing", 1, T + 800);
	crumbs_writer_task_state(w, 2, "Executing", T + 1000);
	assert_int_equal(crumbs_writer_task_end(w, 1, T + 1500), CRUMBS_OK);
	crumbs_writer_task_state(w, 3, "Executing", T + 1600);
	crumbs_writer_task_end(w, 3, T + 2000);
	crumbs_writer_task_end(w, 2, T + 2500);
	crumbs_writer_timeline_frame(w, "Game", T + 5000);
	/* Misuses. */
	crumbs_writer_task_state(w, 9, "Executing", T + 3000);
	crumbs_writer_task_begin(w, 2, "Jobs", "Again", NULL, 0, T + 3000);
	crumbs_writer_task_end(w, 1, T + 3000);
	crumbs_writer_task_state(w, 1, "Executing", T + 3000);
	crumbs_writer_frame_end(w, T + 10000, 0, 0);
	return w;
}

static void check_state(const struct node *n, const char *name, int64_t begin, int64_t end)
{
	assert_non_null(n);
	assert_int_equal(n->name_len, strlen(name));
	assert_memory_equal(n->name, name, n->name_len);
	assert_int_equal(n->begin_ns, (int64_t)T + begin);
	assert_int_equal(n->end_ns, (int64_t)T + end);
	assert_int_equal(n->inclusive_ns, end - begin);
}

static void check_tasks_frame(const struct frame *f, bool trees)
{
	assert_int_equal(f->cpu_thread_count, 4);
	assert_int_equal(f->frame_thread, 0);
	assert_int_equal(f->frame_thread_tid, 1);
	const struct frame_cpu_thread *main = &f->cpu_threads[0], *worker = &f->cpu_threads[1];
	const struct frame_cpu_thread *jobs = &f->cpu_threads[2], *io = &f->cpu_threads[3];
	assert_int_equal(main->kind, FRAME_CPU_THREAD);
	assert_int_equal(main->wait_ns, 3000);
	assert_int_equal(worker->wait_ns, 2000);
	assert_int_equal(f->cpu_scopes, 6);
	assert_int_equal(jobs->kind, FRAME_CPU_TIMELINE);
	assert_int_equal(jobs->tid, 0);
	assert_memory_equal(jobs->name, "Jobs", jobs->name_len);
	assert_int_equal(jobs->scopes, 3);
	assert_int_equal(jobs->open_scopes, 0);
	assert_int_equal(jobs->root->inclusive_ns, 1300 + 2200 + 1600);
	assert_int_equal(jobs->root->exclusive_ns, 0);
	assert_int_equal(io->kind, FRAME_CPU_TIMELINE);
	assert_int_equal(io->scopes, 2);
	assert_int_equal(io->open_scopes, 1);
	assert_int_equal(io->root->inclusive_ns, 700 + 9200);
	assert_int_equal(f->task_misuses, 4);

	assert_int_equal(f->mark_count, 3);
	assert_memory_equal(f->marks[0].timeline, "Game", 4);
	assert_memory_equal(f->marks[1].timeline, "Physics", 7);
	assert_int_equal(f->marks[1].ns, (int64_t)T + 200);
	assert_int_equal(f->marks[2].ns, (int64_t)T + 5000);

	assert_int_equal(f->task_dep_count, 5);
	const struct frame_task_dep *d = f->task_deps;
	/* Cull after Open, which never ended. */
	assert_int_equal(d[0].task_id, 1);
	assert_int_equal(d[0].entered_ns, (int64_t)T + 500);
	assert_int_equal(d[0].blocking_end_ns, INT64_MIN);
	assert_true(d[0].violated);
	/* Shade before Cull ended; Skin after. */
	assert_memory_equal(d[1].state, "Executing", d[1].state_len);
	assert_int_equal(d[1].entered_ns, (int64_t)T + 1000);
	assert_int_equal(d[1].blocking_end_ns, (int64_t)T + 1500);
	assert_true(d[1].violated);
	assert_int_equal(d[2].entered_ns, (int64_t)T + 1600);
	assert_false(d[2].violated);
	/* Open never entered Done; there is no task 6. */
	assert_non_null(d[3].task);
	assert_int_equal(d[3].entered_ns, INT64_MIN);
	assert_int_equal(d[3].blocking_end_ns, (int64_t)T + 700);
	assert_false(d[3].violated);
	assert_null(d[4].task);
	assert_non_null(d[4].blocking);
	assert_int_equal(d[4].task_id, 6);
	assert_false(d[4].violated);
	assert_memory_equal(d[1].task->name, "Shade", 5);
	assert_memory_equal(d[1].blocking->name, "Cull", 4);

	if (!trees) {
		assert_null(jobs->root->child);
		assert_null(main->root->child);
		return;
	}
	check_inclusive_is_sum(jobs->root);
	check_inclusive_is_sum(io->root);
	const struct node *cull = jobs->root->child, *shade = cull->next, *skin = shade->next;
	assert_null(skin->next);
	check_state(cull, "Cull", 200, 1500);
	assert_int_equal(cull->exclusive_ns, 0);
	assert_int_equal(cull->child_count, 2);
	check_state(cull->child, "Waiting", 200, 500);
	check_state(cull->child->next, "Executing", 500, 1500);
	check_state(shade, "Shade", 300, 2500);
	check_state(shade->child->next, "Executing", 1000, 2500);
	check_state(skin, "Skin", 400, 2000);
	const struct node *stream = io->root->child, *open = stream->next;
	check_state(stream, "Stream", 0, 700);
	assert_int_equal(stream->flags, NODE_BEGUN_EARLIER);
	check_state(stream->child, "Executing", 0, 700);
	check_state(open, "Open", 800, 10000);
	assert_true(open->flags & NODE_OPEN);
	assert_true(open->child->flags & NODE_OPEN);

	const struct node *present = must_find(main->root, "Present");
	assert_true(present->flags & NODE_WAIT);
	assert_true(must_find(main->root, "Fence")->flags & NODE_WAIT);
	assert_false(must_find(main->root, "Inner")->flags & NODE_WAIT);
	assert_false(must_find(main->root, "Frame")->flags & NODE_WAIT);
	assert_int_equal(must_find(worker->root, "Wait open")->flags, NODE_WAIT | NODE_OPEN);
}

/* Format 1.4's records come back as the model's threads, waits,
 * timelines, dependencies and marks; reader_skip_scopes keeps every
 * number but the trees. */
static void tasks_and_waits(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = tasks_frame(&m);
	reader *full, *skipped;
	read_both(&m, w, &full, &skipped, reader_skip_scopes);
	check_tasks_frame(next_frame(full), true);
	check_tasks_frame(next_frame(skipped), false);
	reader_free(skipped);
	reader_free(full);
	free(m.data);
}

/* Without a FRAME_THREAD the frame has none; with one whose thread has
 * no scopes, its tid alone. */
static void frame_thread_without_scopes(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = setup(&m, &q, NULL);
	crumbs_writer_frame_begin(w, 1, T);
	crumbs_writer_cpu_thread(w, 1, "Main");
	crumbs_writer_frame_end(w, T + 1000, 0, 0);
	crumbs_writer_frame_begin(w, 2, T + 1000);
	crumbs_writer_cpu_thread(w, 1, "Main");
	crumbs_writer_frame_thread(w, 3);
	crumbs_writer_frame_thread(w, 77); /* replaces it */
	crumbs_writer_frame_end(w, T + 2000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_int_equal(f->frame_thread, -1);
	assert_int_equal(f->frame_thread_tid, 0);
	assert_int_equal(f->task_dep_count, 0);
	assert_int_equal(f->mark_count, 0);
	f = next_frame(c);
	assert_int_equal(f->frame_thread, -1);
	assert_int_equal(f->frame_thread_tid, 77);
	assert_int_equal(f->cpu_thread_count, 1);
	reader_free(c);
	free(m.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counter_wrap_36_bits),
		cmocka_unit_test(period_conversion),
		cmocka_unit_test(calibration_fit_drift),
		cmocka_unit_test(calibration_fit_bad_samples),
		cmocka_unit_test(calibration_fit_least_squares),
		cmocka_unit_test(idle_from_late_submit),
		cmocka_unit_test(idle_before_first_submission),
		cmocka_unit_test(wait_for_other_queue),
		cmocka_unit_test(wait_for_host_signal),
		cmocka_unit_test(wait_for_unknown_signal),
		cmocka_unit_test(wait_clamped_to_start),
		cmocka_unit_test(first_submission_waits_without_ready),
		cmocka_unit_test(scope_spanning_submissions),
		cmocka_unit_test(overlapping_queues_union),
		cmocka_unit_test(two_gpus),
		cmocka_unit_test(scope_left_open),
		cmocka_unit_test(leaf_counts),
		cmocka_unit_test(counts_of_scopes),
		cmocka_unit_test(pipeline_counters),
		cmocka_unit_test(queue_label),
		cmocka_unit_test(unrecorded_command_buffers),
		cmocka_unit_test(queue_without_timestamps),
		cmocka_unit_test(uncalibrated),
		cmocka_unit_test(frames_seek_and_setup),
		cmocka_unit_test(skipped_scopes),
		cmocka_unit_test(tasks_and_waits),
		cmocka_unit_test(frame_thread_without_scopes),
		cmocka_unit_test(flat_scopes),
	};
	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
