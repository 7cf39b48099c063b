/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c: statistics over frames, on frames built by hand so that
 * every expectation can be worked out in the comments: nearest-rank
 * percentiles, the population standard deviation, spikes and their
 * longest run, scope paths summed within a frame, rows absent from frames.
 */
#include <math.h>
#include <pthread.h>

#include "helpers.h"

/* ------------------------------------------------------------------------ */
/* Frames by hand                                                           */
/* ------------------------------------------------------------------------ */

static struct capture_gpu gpus[2] = { { .name = "GPU A" }, { .name = "GPU B" } };
static struct capture_queue queues[2] = {
	{ .gpu = 0, .name = "Graphics 0", .timestamp_valid_bits = 64 },
	{ .gpu = 0, .name = "Compute 0", .timestamp_valid_bits = 64 },
};
static const struct capture_meta meta = {
	.gpus = gpus, .gpu_count = 2, .queues = queues, .queue_count = 2,
};

#define MAX_NODES 32

/* One frame: GPU 0 and queue 0 (Graphics 0), with a tree of nodes; and
 * CPU threads, timelines and marks when a test adds them. */
struct built {
	struct frame f;
	struct frame_gpu gpu;
	struct frame_queue queue;
	struct node nodes[MAX_NODES];
	int count;
	struct frame_cpu_thread threads[4];
	struct frame_mark marks[4];
};

static void build(struct built *b, uint64_t number, int64_t frame_ns)
{
	memset(b, 0, sizeof(*b));
	b->f.number = number;
	b->gpu.frame_ns = frame_ns;
	b->f.gpus = &b->gpu;
	b->f.gpu_count = 1;
	b->queue.submissions = 1;
	b->queue.busy_ns = frame_ns;
	b->queue.wait_ns = 0;
	b->queue.idle_ns = 1000;
	b->f.queues = &b->queue;
	b->f.queue_count = 1;
	struct node *root = &b->nodes[b->count++];
	root->name = "Graphics 0";
	root->name_len = 10;
	root->flags = NODE_QUEUE_ROOT;
	root->inclusive_ns = frame_ns;
	b->queue.root = root;
}

/* A node below parent (NULL: the queue root), after its other children. */
static struct node *add(struct built *b, struct node *parent, const char *name, int kind,
			int64_t inclusive_ns, int64_t exclusive_ns)
{
	assert_true(b->count < MAX_NODES);
	struct node *n = &b->nodes[b->count++];
	if (!parent)
		parent = &b->nodes[0];
	n->name = name;
	n->name_len = (uint32_t)strlen(name);
	n->kind = (uint8_t)kind;
	n->parent = parent;
	n->depth = parent->depth + 1;
	n->inclusive_ns = inclusive_ns;
	n->exclusive_ns = exclusive_ns;
	struct node **link = &parent->child;
	while (*link)
		link = &(*link)->next;
	*link = n;
	parent->child_count++;
	if (kind == CRUMBS_EVENT_SCOPE)
		b->queue.scopes++;
	else
		b->queue.events++; /* as the model counts them */
	return n;
}

/* A CPU thread (or, of kind FRAME_CPU_TIMELINE, a task timeline) of the
 * frame; its root is returned, its scopes (or tasks) added below it with
 * add_cpu_node. */
static struct node *add_thread(struct built *b, uint32_t kind, uint32_t tid, const char *name)
{
	assert_true(b->f.cpu_thread_count < 4 && b->count < MAX_NODES);
	struct frame_cpu_thread *t = &b->threads[b->f.cpu_thread_count++];
	struct node *root = &b->nodes[b->count++];
	b->f.cpu_threads = b->threads;
	t->kind = kind;
	t->tid = tid;
	t->name = name;
	t->name_len = (uint32_t)strlen(name);
	t->root = root;
	root->name = t->name;
	root->name_len = t->name_len;
	root->flags = NODE_QUEUE_ROOT;
	return root;
}

/* A CPU scope, task or state below parent; its inclusive time is added
 * to the root's when parent is the root, as the model sums them. */
static struct node *add_cpu_node(struct built *b, struct node *parent, const char *name,
				 int64_t inclusive_ns, int64_t exclusive_ns)
{
	assert_true(b->count < MAX_NODES);
	struct node *n = &b->nodes[b->count++];
	n->name = name;
	n->name_len = (uint32_t)strlen(name);
	n->kind = CRUMBS_EVENT_SCOPE;
	n->parent = parent;
	n->depth = parent->depth + 1;
	n->inclusive_ns = inclusive_ns;
	n->exclusive_ns = exclusive_ns;
	struct node **link = &parent->child;
	while (*link)
		link = &(*link)->next;
	*link = n;
	parent->child_count++;
	if (parent->flags & NODE_QUEUE_ROOT)
		parent->inclusive_ns += inclusive_ns;
	return n;
}

static void add_mark(struct built *b, const char *timeline, int64_t ns)
{
	assert_true(b->f.mark_count < 4);
	b->marks[b->f.mark_count++] = (struct frame_mark){ timeline, (uint32_t)strlen(timeline), ns };
	b->f.marks = b->marks;
}

static uint32_t must_row(const stats *s, enum stats_kind kind, const char *path)
{
	uint32_t r = stats_find(s, kind, path);
	if (r == STATS_NONE)
		fail_msg("no row '%s'", path);
	return r;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

/* Nearest rank on 1..100: rank ceil(p/100 * 100) = p, so pP is P; p0 is
 * rank 1. On 1..10, p95 is rank ceil(9.5) = 10 and p50 rank 5. */
static void percentile_nearest_rank(void **state)
{
	(void)state;
	uint32_t v[100];
	for (uint32_t i = 0; i < 100; i++)
		v[i] = i + 1;
	assert_int_equal(stats_percentile(v, 100, 95), 95);
	assert_int_equal(stats_percentile(v, 100, 90), 90);
	assert_int_equal(stats_percentile(v, 100, 50), 50);
	assert_int_equal(stats_percentile(v, 100, 99), 99);
	assert_int_equal(stats_percentile(v, 100, 100), 100);
	assert_int_equal(stats_percentile(v, 100, 0), 1);
	assert_int_equal(stats_percentile(v, 10, 95), 10);
	assert_int_equal(stats_percentile(v, 10, 50), 5);
	assert_int_equal(stats_percentile(v, 1, 99), 1);
}

/*
 * GPU frame times 1..100 ns in a shuffled order (i * 37 mod 100, plus 1,
 * visits every value once), frames numbered from 1000. Mean 50.5; the
 * population variance of 1..n is (n^2 - 1) / 12 = 833.25, so the standard
 * deviation is 28.8661 (the sample's would be 29.0115). The maximum, 100,
 * is at i = 27 (27 * 37 = 999 = 99 mod 100), frame 1027; the minimum, 1,
 * at i = 0.
 */
static void one_to_hundred(void **state)
{
	(void)state;
	stats *s = stats_create();
	struct built b;
	assert_non_null(s);
	for (uint32_t i = 0; i < 100; i++) {
		build(&b, 1000 + i, (int64_t)(i * 37 % 100) + 1);
		assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
	}
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
	const struct stats_row *r = stats_row(s, must_row(s, STATS_GPU, "GPU 0"));
	assert_int_equal(r->time.frames, 100);
	assert_int_equal(r->time.median_ns, 50);
	assert_int_equal(r->time.p90_ns, 90);
	assert_int_equal(r->time.p95_ns, 95);
	assert_int_equal(r->time.p99_ns, 99);
	assert_int_equal(r->time.min_ns, 1);
	assert_int_equal(r->time.min_frame, 1000);
	assert_int_equal(r->time.max_ns, 100);
	assert_int_equal(r->time.max_frame, 1027);
	assert_true(fabs(r->time.mean_ns - 50.5) < 1e-9);
	assert_true(fabs(r->time.stddev_ns - sqrt(833.25)) < 1e-9);
	/* Per-frame values stay in frame order; sorted on request. */
	assert_int_equal(stats_value(s, must_row(s, STATS_GPU, "GPU 0"), 27, false), 100);
	int64_t sorted[100];
	assert_int_equal(stats_row_values(s, must_row(s, STATS_GPU, "GPU 0"), false, true, sorted), 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(sorted[i], i + 1);
	stats_free(s);
}

/*
 * GPU frame times in ms, frames 100 to 111, frame 110 without work:
 *   10 10 30 31 10 40 41 42 10 50 -- 50
 * Above 20 ms: 30 31 40 41 42 50 50, 7 spikes; the longest run is 40 41
 * 42, 3 frames from frame 105; the frame without work breaks the 50s.
 * The median of the 11 values (10 10 10 10 30 31 40 41 42 50 50) is at
 * rank 6: 31 ms; 1.5x is 46.5 ms: 2 spikes, runs of 1, from frame 109.
 */
static void spikes_and_longest_run(void **state)
{
	(void)state;
	static const int ms[12] = { 10, 10, 30, 31, 10, 40, 41, 42, 10, 50, 0, 50 };
	stats *s = stats_create();
	stats *t = stats_create();
	struct built b;
	for (int i = 0; i < 12; i++) {
		build(&b, 100 + (uint64_t)i, (int64_t)ms[i] * 1000000);
		assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
		assert_int_equal(stats_add_frame(t, &meta, &b.f), CRUMBS_OK);
	}
	struct stats_spike_rule above_20 = { .threshold_ns = 20000000 };
	assert_int_equal(stats_finish(s, &above_20), CRUMBS_OK);
	const struct stats_row *r = stats_row(s, must_row(s, STATS_GPU, "GPU 0"));
	assert_int_equal(r->time.frames, 11);
	assert_int_equal(r->spikes.count, 7);
	assert_int_equal(r->spikes.longest_run, 3);
	assert_int_equal(r->spikes.longest_run_first, 105);
	assert_int_equal(stats_value(s, must_row(s, STATS_GPU, "GPU 0"), 10, false), STATS_ABSENT);

	struct stats_spike_rule factor = { .median_factor = 1.5 };
	assert_int_equal(stats_finish(t, &factor), CRUMBS_OK);
	r = stats_row(t, must_row(t, STATS_GPU, "GPU 0"));
	assert_int_equal(r->time.median_ns, 31000000);
	assert_int_equal(r->spikes.threshold_ns, 46500000);
	assert_int_equal(r->spikes.count, 2);
	assert_int_equal(r->spikes.longest_run, 1);
	assert_int_equal(r->spikes.longest_run_first, 109);
	stats_free(s);
	stats_free(t);
}

/*
 * Frame 7: "Frame 7" (its number becomes '#') holds "Pass" twice, 10 and
 * 5 ns inclusive, 4 and 5 exclusive, the first with "Inner" (6) and a
 * draw (exclusive 2, which is the scope's, as `report --no-leaf` shows
 * it); "Shadow View 7" below it keeps its 7: only right below the queue
 * is the frame's number replaced. One row "Pass": 2 calls, 15 inclusive,
 * 4 + 2 + 5 = 11 exclusive.
 */
static void same_path_summed(void **state)
{
	(void)state;
	stats *s = stats_create();
	struct built b;
	build(&b, 7, 100);
	struct node *frame = add(&b, NULL, "Frame 7", CRUMBS_EVENT_SCOPE, 30, 8);
	struct node *pass = add(&b, frame, "Pass", CRUMBS_EVENT_SCOPE, 10, 2);
	add(&b, pass, "Inner", CRUMBS_EVENT_SCOPE, 6, 6);
	add(&b, pass, "Draw", CRUMBS_EVENT_DRAW, 2, 2);
	add(&b, frame, "Pass", CRUMBS_EVENT_SCOPE, 5, 5);
	add(&b, frame, "Shadow View 7", CRUMBS_EVENT_SCOPE, 7, 7);
	assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);

	uint32_t p = must_row(s, STATS_SCOPE, "GPU 0 / Graphics 0 / Frame # / Pass");
	const struct stats_row *r = stats_row(s, p);
	assert_int_equal(r->calls, 2);
	assert_int_equal(r->time.frames, 1);
	assert_int_equal(r->time.mean_ns, 15);
	assert_int_equal(r->exclusive.max_ns, 2 + 2 + 5);
	assert_int_equal(r->depth, 2);
	assert_string_equal(r->name, "Pass");
	assert_int_equal(stats_row(s, r->parent)->time.max_ns, 30);
	must_row(s, STATS_SCOPE, "GPU 0 / Graphics 0 / Frame # / Pass / Inner");
	must_row(s, STATS_SCOPE, "GPU 0 / Graphics 0 / Frame # / Shadow View 7");
	assert_int_equal(stats_find(s, STATS_SCOPE, "GPU 0 / Graphics 0 / Frame # / Pass / Draw"),
			 STATS_NONE);
	/* Share: 15 of the queue's busy + wait, 100. */
	assert_true(fabs(r->share_pct - 15.0) < 1e-9);
	/* The draw is no row, but its queue counts it. */
	assert_int_equal(stats_row(s, must_row(s, STATS_BUSY, "GPU 0 / Graphics 0"))->events, 1);
	stats_free(s);
}

/*
 * "Late" appears in frames 2 and 4 of 0..4 (values 20 and 40): it counts
 * 2 frames, mean 30, and reads absent in the frames without it, those
 * before its first included. A time above 4.29 s saturates.
 */
static void row_absent_from_frames(void **state)
{
	(void)state;
	stats *s = stats_create();
	struct built b;
	for (int i = 0; i < 5; i++) {
		build(&b, (uint64_t)i, 5000000000ll);
		add(&b, NULL, "Always", CRUMBS_EVENT_SCOPE, 100, 100);
		if (i == 2 || i == 4)
			add(&b, NULL, "Late", CRUMBS_EVENT_SCOPE, 10 * i, 10 * i);
		assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
	}
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
	uint32_t late = must_row(s, STATS_SCOPE, "GPU 0 / Graphics 0 / Late");
	const struct stats_row *r = stats_row(s, late);
	assert_int_equal(r->time.frames, 2);
	assert_true(fabs(r->time.mean_ns - 30) < 1e-9);
	assert_int_equal(r->time.median_ns, 20);
	assert_int_equal(r->time.max_frame, 4);
	assert_int_equal(stats_value(s, late, 0, false), STATS_ABSENT);
	assert_int_equal(stats_value(s, late, 1, false), STATS_ABSENT);
	assert_int_equal(stats_value(s, late, 2, false), 20);
	assert_int_equal(stats_value(s, late, 3, true), STATS_ABSENT);
	assert_int_equal(stats_value(s, late, 4, true), 40);
	assert_int_equal(stats_row(s, must_row(s, STATS_SCOPE, "GPU 0 / Graphics 0 / Always"))->time.frames, 5);
	assert_int_equal(stats_row(s, must_row(s, STATS_GPU, "GPU 0"))->time.max_ns, STATS_NS_MAX);
	assert_int_equal(stats_row(s, must_row(s, STATS_IDLE, "GPU 0 / Graphics 0"))->time.mean_ns, 1000);
	assert_int_equal(stats_frame_count(s), 5);
	assert_int_equal(stats_frame_number(s, 4), 4);
	stats_free(s);
}

/*
 * A scope's exclusive time equals its time until its children come: frames
 * 0 and 2 have "Pass" alone (10 and 30, nothing in frame 1); frame 3 has
 * it twice, the first time alone (40) and the second with a 5 ns child
 * (20, 15 exclusive): 60 and 55; frame 4 has a draw below it, whose 3 ns
 * go to its exclusive time (50 and 47 + 3 = 50); frame 5 a child of 8
 * (70, 62). Every value reads back, and the exclusive summary is of 10,
 * 30, 55, 50, 62: median 50, max 62 in frame 5, min 10.
 */
static void exclusive_split_from_time(void **state)
{
	(void)state;
	stats *s = stats_create();
	struct built b;
	assert_non_null(s);
	for (int i = 0; i < 6; i++) {
		build(&b, (uint64_t)i, 1000);
		if (i == 0 || i == 2)
			add(&b, NULL, "Pass", CRUMBS_EVENT_SCOPE, 10 * (i + 1), 10 * (i + 1));
		if (i == 3) {
			add(&b, NULL, "Pass", CRUMBS_EVENT_SCOPE, 40, 40);
			struct node *p = add(&b, NULL, "Pass", CRUMBS_EVENT_SCOPE, 20, 15);
			add(&b, p, "Child", CRUMBS_EVENT_SCOPE, 5, 5);
		}
		if (i == 4) {
			struct node *p = add(&b, NULL, "Pass", CRUMBS_EVENT_SCOPE, 50, 47);
			add(&b, p, "Draw", CRUMBS_EVENT_DRAW, 3, 3);
		}
		if (i == 5) {
			struct node *p = add(&b, NULL, "Pass", CRUMBS_EVENT_SCOPE, 70, 62);
			add(&b, p, "Child", CRUMBS_EVENT_SCOPE, 8, 8);
		}
		assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
	}
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
	uint32_t pass = must_row(s, STATS_SCOPE, "GPU 0 / Graphics 0 / Pass");
	static const uint32_t time[6] = { 10, STATS_ABSENT, 30, 60, 50, 70 };
	static const uint32_t exclusive[6] = { 10, STATS_ABSENT, 30, 55, 50, 62 };
	for (int i = 0; i < 6; i++) {
		assert_int_equal(stats_value(s, pass, (size_t)i, false), time[i]);
		assert_int_equal(stats_value(s, pass, (size_t)i, true), exclusive[i]);
	}
	const struct stats_row *r = stats_row(s, pass);
	assert_int_equal(r->calls, 6);
	assert_int_equal(r->exclusive.frames, 5);
	assert_int_equal(r->exclusive.median_ns, 50);
	assert_int_equal(r->exclusive.max_ns, 62);
	assert_int_equal(r->exclusive.max_frame, 5);
	assert_int_equal(r->exclusive.min_ns, 10);
	assert_int_equal(r->time.max_ns, 70);
	/* Its share: its time over the run, 10 + 30 + 60 + 50 + 70, of the
	 * queue's, 6 frames of 1000 ns; not its mean over its 5 frames over
	 * the queue's over 6. */
	assert_true(fabs(r->share_pct - 100.0 * 220 / 6000) < 1e-9);
	int64_t v[6];
	assert_int_equal(stats_row_values(s, pass, true, true, v), 5);
	assert_int_equal(v[0], 10);
	assert_int_equal(v[4], 62);
	/* A child alone: its exclusive summary is its time's. */
	const struct stats_row *c = stats_row(s, must_row(s, STATS_SCOPE, "GPU 0 / Graphics 0 / Pass / Child"));
	assert_memory_equal(&c->exclusive, &c->time, sizeof(c->time));
	assert_int_equal(c->exclusive.max_ns, 8);
	stats_free(s);
}

/* A summary worked out the plain way from a row's values (absent ones
 * skipped): sums in 128 bits, extremes at their first frame, percentiles
 * by sorting. */
struct reference {
	uint64_t n;
	double mean, stddev;
	uint32_t lo, hi, p50, p90, p95, p99;
	uint64_t lo_frame, hi_frame;
};

__extension__ typedef unsigned __int128 u128;

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static struct reference reference_of(const uint32_t *v, size_t count, uint64_t first_number)
{
	struct reference r = { 0 };
	uint32_t *sorted = malloc(count * sizeof(*sorted));
	u128 sum = 0, squares = 0;
	assert_non_null(sorted);
	for (size_t i = 0; i < count; i++) {
		if (v[i] == STATS_ABSENT)
			continue;
		if (r.n == 0 || v[i] < r.lo) {
			r.lo = v[i];
			r.lo_frame = first_number + i;
		}
		if (r.n == 0 || v[i] > r.hi) {
			r.hi = v[i];
			r.hi_frame = first_number + i;
		}
		sum += v[i];
		squares += (u128)v[i] * v[i];
		sorted[r.n++] = v[i];
	}
	qsort(sorted, r.n, sizeof(*sorted), cmp_u32);
	r.mean = (double)sum / (double)r.n;
	r.stddev = sqrt((double)(r.n * squares - sum * sum) / ((double)r.n * (double)r.n));
	r.p50 = stats_percentile(sorted, r.n, 50);
	r.p90 = stats_percentile(sorted, r.n, 90);
	r.p95 = stats_percentile(sorted, r.n, 95);
	r.p99 = stats_percentile(sorted, r.n, 99);
	free(sorted);
	return r;
}

static void check_reference(const struct stats_summary *t, const struct reference *r)
{
	assert_int_equal(t->frames, r->n);
	assert_int_equal(t->min_ns, r->lo);
	assert_int_equal(t->min_frame, r->lo_frame);
	assert_int_equal(t->max_ns, r->hi);
	assert_int_equal(t->max_frame, r->hi_frame);
	assert_int_equal(t->median_ns, r->p50);
	assert_int_equal(t->p90_ns, r->p90);
	assert_int_equal(t->p95_ns, r->p95);
	assert_int_equal(t->p99_ns, r->p99);
	assert_true(fabs(t->mean_ns - r->mean) <= 1e-9 * r->mean);
	assert_true(fabs(t->stddev_ns - r->stddev) <= 1e-9 * r->stddev + 1e-9);
}

/*
 * Summaries of series over many chunks, checked against reference_of:
 * 5000 frames from 300, GPU frame times over the whole range a value
 * holds (up to 4.29 s, whose squares overflow 64 bits, and 0), and a
 * scope absent from every seventh frame, with times whose low and high
 * 16 bits both vary. Each series' minimum and maximum come again in later
 * chunks: the first frame of each is the one reported.
 */
static void summaries_match_reference(void **state)
{
	(void)state;
	enum { FRAMES = 5000, FIRST = 300 };
	static uint32_t gpu_v[FRAMES], scope_v[FRAMES];
	stats *s = stats_create();
	struct built b;
	uint64_t x = 88172645463325252ull;
	assert_non_null(s);
	for (uint32_t i = 0; i < FRAMES; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		gpu_v[i] = 1 + (uint32_t)(x % (STATS_NS_MAX - 1));
		scope_v[i] = i % 7 == 3 ? STATS_ABSENT : 1000 + (uint32_t)((x >> 20) % 9000000);
	}
	/* Extremes, and the same again later. */
	gpu_v[1500] = gpu_v[4900] = STATS_NS_MAX;
	gpu_v[2100] = gpu_v[3100] = 1;
	scope_v[1201] = scope_v[4001] = 9999999;
	scope_v[2501] = scope_v[4444] = 17;
	for (uint32_t i = 0; i < FRAMES; i++) {
		build(&b, FIRST + i, gpu_v[i]);
		if (scope_v[i] != STATS_ABSENT)
			add(&b, NULL, "Pass", CRUMBS_EVENT_SCOPE, scope_v[i], scope_v[i]);
		assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
	}
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);

	struct reference gpu = reference_of(gpu_v, FRAMES, FIRST);
	assert_int_equal(gpu.hi_frame, FIRST + 1500);
	assert_int_equal(gpu.lo_frame, FIRST + 2100);
	check_reference(&stats_row(s, must_row(s, STATS_GPU, "GPU 0"))->time, &gpu);
	struct reference scope = reference_of(scope_v, FRAMES, FIRST);
	assert_int_equal(scope.n, FRAMES - FRAMES / 7);
	assert_int_equal(scope.hi_frame, FIRST + 1201);
	assert_int_equal(scope.lo_frame, FIRST + 2501);
	const struct stats_row *r = stats_row(s, must_row(s, STATS_SCOPE, "GPU 0 / Graphics 0 / Pass"));
	check_reference(&r->time, &scope);
	check_reference(&r->exclusive, &scope);
	stats_free(s);
}

/*
 * stats_append: statistics taken of frames 0 to 4999 and of 5000 to
 * 13999 apart, joined, are those of all 14000 frames added one by one.
 * The series are longer than the 1024 values a chunk holds, and the
 * second starts inside the first's last chunk, so the join copies across
 * chunks on both sides. A scope in every third frame has absent values;
 * its exclusive time differs from its time from frame 7000 on.
 *
 * a: 5,000 frames, the Pass without children; b: 9,000, with a Child
 * from its 2,001st frame on (exclusive values split in b, not in a); c:
 * 300, without (its values too few for a full chunk, and its exclusive
 * values are its times); d: 4,700, without again. The long series are
 * taken, the short ones copied.
 */
static const uint32_t part_ends[] = { 5000, 14000, 14300, 19000 };

/* Adds frames [from, to) of the scenario above to s: false when one
 * was refused (no assertion, which a thread beside the test's cannot
 * make). */
static bool add_scenario(stats *s, uint32_t from, uint32_t to)
{
	struct built f;
	for (uint32_t i = from; i < to; i++) {
		build(&f, 20 + i, 1000 + (int64_t)(i * 7919 % 5003));
		bool child = i >= 7000 && i < 14000;
		if (i % 3 == 0) {
			struct node *p = add(&f, NULL, "Pass", CRUMBS_EVENT_SCOPE, 100 + i % 17,
					     100 + i % 17);
			if (child)
				add(&f, p, "Child", CRUMBS_EVENT_SCOPE, 5, 5);
		}
		if (child && i % 3 == 0)
			f.nodes[1].exclusive_ns -= 5;
		if (i % 5 == 0) /* an event: no row, counted on the queue's */
			add(&f, NULL, "Draw", CRUMBS_EVENT_DRAW, 3, 3);
		if (stats_add_frame(s, &meta, &f.f) != CRUMBS_OK)
			return false;
	}
	return true;
}

struct part_job {
	stats *s;
	uint32_t from, to;
	bool added;
};

static void *add_part(void *arg)
{
	struct part_job *j = arg;
	j->added = add_scenario(j->s, j->from, j->to);
	return NULL;
}

/* The parts after the first made by stats_create, or sharing the first's
 * memory (stats_create_sharing) and filled on threads of their own at
 * once, as `crumbs stats` reads a run. */
enum parts_made { PARTS_APART, PARTS_SHARING_ON_THREADS };

static void check_append(enum parts_made made)
{
	stats *all = stats_create(), *part[4];
	assert_non_null(all);
	assert_non_null(part[0] = stats_create());
	for (int k = 1; k < 4; k++)
		assert_non_null(part[k] = made == PARTS_APART ? stats_create()
							       : stats_create_sharing(part[0]));
	assert_true(add_scenario(all, 0, part_ends[3]));
	if (made == PARTS_APART) {
		for (int k = 0; k < 4; k++)
			assert_true(add_scenario(part[k], k ? part_ends[k - 1] : 0, part_ends[k]));
	} else {
		pthread_t tids[3];
		struct part_job jobs[3];
		for (int k = 1; k < 4; k++) {
			jobs[k - 1] = (struct part_job){ part[k], part_ends[k - 1], part_ends[k], false };
			assert_int_equal(pthread_create(&tids[k - 1], NULL, add_part, &jobs[k - 1]), 0);
		}
		assert_true(add_scenario(part[0], 0, part_ends[0]));
		/* The first joined while the others are still read. */
		pthread_join(tids[0], NULL);
		assert_true(jobs[0].added);
		assert_int_equal(stats_append(part[0], part[1]), CRUMBS_OK);
		for (int k = 1; k < 3; k++) {
			pthread_join(tids[k], NULL);
			assert_true(jobs[k].added);
		}
	}
	for (int k = made == PARTS_APART ? 1 : 2; k < 4; k++)
		assert_int_equal(stats_append(part[0], part[k]), CRUMBS_OK);
	assert_int_equal(stats_finish(all, NULL), CRUMBS_OK);
	assert_int_equal(stats_finish(part[0], NULL), CRUMBS_OK);
	assert_int_equal(stats_frame_count(part[0]), part_ends[3]);
	assert_same_stats(all, part[0]);
	assert_int_equal(stats_row(part[0], must_row(part[0], STATS_BUSY, "GPU 0 / Graphics 0"))->events,
			 (part_ends[3] + 4) / 5);
	assert_int_equal(stats_row(part[0], must_row(part[0], STATS_SCOPE, "GPU 0 / Graphics 0 / Pass"))
				 ->time.frames,
			 6334);
	stats_free(all);
	for (int k = 0; k < 4; k++)
		stats_free(part[k]);
}

static void append_joins_long_series(void **state)
{
	(void)state;
	check_append(PARTS_APART);
}

static void append_joins_sharing_parts_filled_at_once(void **state)
{
	(void)state;
	check_append(PARTS_SHARING_ON_THREADS);
}

/*
 * By pipeline: a frame's draws and dispatches grouped by what their names
 * say after " · ", right below the queue, in place of scopes. Frame i
 * has a "Post" scope holding two Tonemap draws (3 and 4 ns) and, in even
 * frames, a gblur dispatch (10 ns); an unnamed draw (1 ns) and a copy
 * (which runs no pipeline) beside it. Tonemap: 2 calls a frame, 7 ns;
 * gblur: in half the frames; "(no pipeline named)": 1 ns. Joined from
 * two parts, the rows are those of all frames added at once.
 */
static void add_pipeline_frames(stats *s, uint32_t from, uint32_t to)
{
	struct built b;
	for (uint32_t i = from; i < to; i++) {
		build(&b, i, 100);
		struct node *post = add(&b, NULL, "Post", CRUMBS_EVENT_SCOPE, 30, 5);
		add(&b, post, "Draw 3 vertices \u00b7 Tonemap", CRUMBS_EVENT_DRAW, 3, 3);
		add(&b, post, "Draw 6 vertices \u00b7 Tonemap", CRUMBS_EVENT_DRAW, 4, 4);
		if (i % 2 == 0)
			add(&b, post, "Dispatch 8x8x1 \u00b7 gblur 9c41", CRUMBS_EVENT_DISPATCH, 10, 10);
		add(&b, NULL, "Draw 3 vertices", CRUMBS_EVENT_DRAW, 1, 1);
		add(&b, NULL, "Copy buffer 4 KiB \u00b7 Staging", CRUMBS_EVENT_COPY, 9, 9);
		assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
	}
}

static void pipeline_rows(void **state)
{
	(void)state;
	stats *s = stats_create(), *a = stats_create();
	stats_by_pipeline(s);
	stats_by_pipeline(a);
	stats *b = stats_create_sharing(a);
	add_pipeline_frames(s, 0, 10);
	add_pipeline_frames(a, 0, 3);
	add_pipeline_frames(b, 3, 10);
	assert_int_equal(stats_append(a, b), CRUMBS_OK);
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
	assert_int_equal(stats_finish(a, NULL), CRUMBS_OK);
	assert_same_stats(s, a);

	const struct stats_row *r = stats_row(s, must_row(s, STATS_PIPELINE, "GPU 0 / Graphics 0 / Tonemap"));
	assert_int_equal(r->calls, 20);
	assert_int_equal(r->time.frames, 10);
	assert_int_equal(r->time.median_ns, 7);
	assert_int_equal(r->exclusive.median_ns, 7);
	assert_int_equal(r->depth, 1);
	assert_true(fabs(r->share_pct - 7.0) < 1e-9);
	uint32_t g = must_row(s, STATS_PIPELINE, "GPU 0 / Graphics 0 / gblur 9c41");
	assert_int_equal(stats_row(s, g)->time.frames, 5);
	assert_int_equal(stats_value(s, g, 1, false), STATS_ABSENT);
	assert_int_equal(stats_value(s, g, 2, true), 10);
	r = stats_row(s, must_row(s, STATS_PIPELINE, "GPU 0 / Graphics 0 / " PIPELINE_NONE_NAME));
	assert_int_equal(r->time.max_ns, 1);
	/* No scope rows, no row of the copy. */
	for (size_t i = 0; i < stats_row_count(s); i++)
		assert_true(stats_row(s, i)->kind != STATS_SCOPE);
	assert_int_equal(stats_find(s, STATS_PIPELINE, "GPU 0 / Graphics 0 / Staging"), STATS_NONE);
	assert_string_equal(stats_kind_name(STATS_PIPELINE), "pipeline");
	/* Found by kind and name below the queue, as diff matches rows. */
	uint32_t busy = must_row(s, STATS_BUSY, "GPU 0 / Graphics 0");
	assert_int_equal(stats_child(s, busy, STATS_PIPELINE, "gblur 9c41", 10), g);
	assert_int_equal(stats_child(s, busy, STATS_SCOPE, "gblur 9c41", 10), STATS_NONE);
	stats_free(s);
	stats_free(b);
	stats_free(a);
}


/*
 * The CPU frame time, cpu_end_ns - cpu_begin_ns, of frames 50 to 56: 10,
 * 10, 30, 30, 10, 30, 10 ns. Sorted, 10 10 10 10 30 30 30: the median
 * (rank 4) is 10, so spikes are above 15: three, the longest run two
 * frames from frame 52. The maximum, 30, is first at frame 52. Its rows
 * are the CPU's once a frame holds a thread; without one, the time is
 * kept but stats_has_cpu says it is not the CPU's to show.
 */
static void cpu_frame_time_and_spikes(void **state)
{
	(void)state;
	static const int64_t times[] = { 10, 10, 30, 30, 10, 30, 10 };
	for (int threads = 0; threads < 2; threads++) {
		stats *s = stats_create();
		struct built b;
		assert_non_null(s);
		for (int i = 0; i < 7; i++) {
			build(&b, 50 + (uint64_t)i, 5);
			b.f.cpu_begin_ns = 1000;
			b.f.cpu_end_ns = 1000 + times[i];
			if (threads)
				add_cpu_node(&b, add_thread(&b, FRAME_CPU_THREAD, 7, "Main"), "Work", 4, 4);
			assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
		}
		assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
		assert_int_equal(stats_has_cpu(s), threads == 1);
		uint32_t cpu = must_row(s, STATS_CPU, "CPU");
		const struct stats_row *r = stats_row(s, cpu);
		assert_int_equal(r->gpu, STATS_NONE);
		assert_int_equal(r->parent, STATS_NONE);
		assert_int_equal(r->time.frames, 7);
		assert_int_equal(r->time.median_ns, 10);
		assert_int_equal(r->time.max_ns, 30);
		assert_int_equal(r->time.max_frame, 52);
		assert_int_equal(r->spikes.threshold_ns, 15);
		assert_int_equal(r->spikes.count, 3);
		assert_int_equal(r->spikes.longest_run, 2);
		assert_int_equal(r->spikes.longest_run_first, 52);
		assert_true(stats_kind_frame_time(STATS_CPU) && stats_kind_cpu(STATS_CPU));
		assert_false(stats_kind_cpu(STATS_GPU));
		assert_string_equal(stats_kind_name(STATS_CPU), "cpu");
		if (threads) {
			/* Work: 4 ns in each of 7 frames, of 130 ns of CPU frame
			 * time over the run. */
			r = stats_row(s, must_row(s, STATS_CPU_SCOPE, "CPU / Main / Work"));
			assert_true(fabs(r->share_pct - 2800.0 / 130.0) < 1e-9);
			assert_int_equal(stats_child(s, STATS_NONE, STATS_CPU, "CPU", 3), cpu);
		}
		stats_free(s);
	}
}

/*
 * Threads by name. Frame 7: two threads named "Worker" (tids 1 and 2),
 * each with a scope "Job 7" (100 and 50 ns, of which a child "Sort" of 30
 * ns in the first), and an unnamed thread, "thread 99" as the model names
 * it, with a scope "Idle 3" (20 ns). Frame 8: "Worker" (tid 5) with "Job
 * 8" (40 ns), and "thread 123" with "Idle 3" (10 ns). The workers are one
 * row, their scopes "Job #" (the frame's number, at depth 1) summed in a
 * frame: 150 then 40, three calls; the unnamed threads are one row,
 * "thread #", whose "Idle 3" keeps its number (not the frame's).
 */
static void cpu_threads_by_name(void **state)
{
	(void)state;
	stats *s = stats_create();
	struct built b;
	assert_non_null(s);
	build(&b, 7, 5);
	b.f.cpu_end_ns = 200;
	struct node *job = add_cpu_node(&b, add_thread(&b, FRAME_CPU_THREAD, 1, "Worker"), "Job 7", 100, 70);
	add_cpu_node(&b, job, "Sort", 30, 30);
	add_cpu_node(&b, add_thread(&b, FRAME_CPU_THREAD, 2, "Worker"), "Job 7", 50, 50);
	add_cpu_node(&b, add_thread(&b, FRAME_CPU_THREAD, 99, "thread 99"), "Idle 3", 20, 20);
	assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
	build(&b, 8, 5);
	b.f.cpu_end_ns = 200;
	add_cpu_node(&b, add_thread(&b, FRAME_CPU_THREAD, 5, "Worker"), "Job 8", 40, 40);
	add_cpu_node(&b, add_thread(&b, FRAME_CPU_THREAD, 123, "thread 123"), "Idle 3", 10, 10);
	assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);

	uint32_t worker = must_row(s, STATS_THREAD, "CPU / Worker");
	const struct stats_row *r = stats_row(s, worker);
	assert_int_equal(r->calls, 3);
	assert_int_equal(stats_value(s, worker, 0, false), 150);
	assert_int_equal(stats_value(s, worker, 1, false), 40);
	uint32_t j = must_row(s, STATS_CPU_SCOPE, "CPU / Worker / Job #");
	r = stats_row(s, j);
	assert_int_equal(r->calls, 3);
	assert_int_equal(r->depth, 1);
	assert_int_equal(stats_value(s, j, 0, false), 150);
	assert_int_equal(stats_value(s, j, 0, true), 120);
	assert_int_equal(stats_value(s, j, 1, true), 40);
	assert_int_equal(stats_row(s, must_row(s, STATS_CPU_SCOPE, "CPU / Worker / Job # / Sort"))->depth, 2);
	r = stats_row(s, must_row(s, STATS_THREAD, "CPU / thread #"));
	assert_int_equal(r->time.frames, 2);
	r = stats_row(s, must_row(s, STATS_CPU_SCOPE, "CPU / thread # / Idle 3"));
	assert_int_equal(r->time.max_ns, 20);
	assert_int_equal(stats_find(s, STATS_THREAD, "CPU / thread 99"), STATS_NONE);
	/* Matched as diff matches rows: by kind and name below the parent. */
	assert_int_equal(stats_child(s, worker, STATS_CPU_SCOPE, "Job #", 5), j);
	assert_int_equal(stats_child(s, worker, STATS_SCOPE, "Job #", 5), STATS_NONE);
	stats_free(s);
}

/*
 * A timeline "Streaming" in frames 0 to 2: in each, two tasks "Load"
 * (30 and 10 ns), the first in states "Read" (20 ns) and "Decode" (10
 * ns), and in frame 1 a task "Bake" (5 ns). "Load" is 40 ns in each
 * frame, two calls; its state "Decode" 10; the timeline's row the sum of
 * its tasks; "Tasks", their parent, has no value.
 */
static void tasks_and_states(void **state)
{
	(void)state;
	stats *s = stats_create();
	struct built b;
	assert_non_null(s);
	for (uint64_t i = 0; i < 3; i++) {
		build(&b, i, 5);
		b.f.cpu_end_ns = 100;
		struct node *tl = add_thread(&b, FRAME_CPU_TIMELINE, 0, "Streaming");
		struct node *load = add_cpu_node(&b, tl, "Load", 30, 0);
		add_cpu_node(&b, load, "Read", 20, 20);
		add_cpu_node(&b, load, "Decode", 10, 10);
		add_cpu_node(&b, tl, "Load", 10, 0);
		if (i == 1)
			add_cpu_node(&b, tl, "Bake", 5, 0);
		assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
	}
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
	const struct stats_row *r = stats_row(s, must_row(s, STATS_TASK, "Tasks / Streaming / Load"));
	assert_int_equal(r->calls, 6);
	assert_int_equal(r->time.median_ns, 40);
	assert_int_equal(r->exclusive.max_ns, 0);
	assert_true(fabs(r->share_pct - 40.0) < 1e-9);
	r = stats_row(s, must_row(s, STATS_STATE, "Tasks / Streaming / Load / Decode"));
	assert_int_equal(r->time.frames, 3);
	assert_int_equal(r->time.max_ns, 10);
	assert_int_equal(stats_row(s, must_row(s, STATS_TASK, "Tasks / Streaming / Bake"))->time.frames, 1);
	uint32_t tl = must_row(s, STATS_TIMELINE, "Tasks / Streaming");
	assert_int_equal(stats_value(s, tl, 1, false), 45);
	assert_int_equal(stats_row(s, must_row(s, STATS_TASKS, "Tasks"))->time.frames, 0);
	assert_int_equal(stats_find(s, STATS_THREAD, "CPU / Streaming"), STATS_NONE);
	stats_free(s);
}

/*
 * Marks of a timeline "Game" in frames 0 to 7 (ns): frame 0 at 100, frame
 * 2 at 300 and 350, frame 3 at 600, frame 5 at 1000, frame 7 at 1400.
 * Game frames, each ended in the frame of its later mark: 200 and 50 in
 * frame 2, 250 in frame 3, 400 in 5 and 400 in 7; the first mark ends
 * none. Sorted 50 200 250 400 400: the median (rank 3) is 250, the
 * minimum 50 (in frame 2), spikes above 375: the last two, one run of
 * two Game frames from frame 5, though frame 6 has none. Frame 2's value
 * (--per-frame) is its longest, 200. Read whole, or in two parts cut at
 * any frame and joined, the statistics are the same.
 */
static void add_game_frames(stats *s, uint64_t from, uint64_t to)
{
	static const int64_t marks[8][2] = { { 100, 0 }, { 0, 0 }, { 300, 350 }, { 600, 0 },
					     { 0, 0 }, { 1000, 0 }, { 0, 0 }, { 1400, 0 } };
	struct built b;
	for (uint64_t i = from; i < to; i++) {
		build(&b, i, 5);
		b.f.cpu_begin_ns = 200 * (int64_t)i;
		b.f.cpu_end_ns = 200 * (int64_t)i + 200;
		for (int k = 0; k < 2; k++)
			if (marks[i][k])
				add_mark(&b, "Game", marks[i][k]);
		assert_int_equal(stats_add_frame(s, &meta, &b.f), CRUMBS_OK);
	}
}

static void marks_frames_of_another_kind(void **state)
{
	(void)state;
	stats *whole = stats_create();
	assert_non_null(whole);
	add_game_frames(whole, 0, 8);
	assert_int_equal(stats_finish(whole, NULL), CRUMBS_OK);
	assert_true(stats_has_cpu(whole));
	uint32_t game = must_row(whole, STATS_CPU, "CPU (Game)");
	const struct stats_row *r = stats_row(whole, game);
	assert_int_equal(r->parent, STATS_NONE);
	assert_int_equal(r->time.frames, 5);
	assert_int_equal(r->calls, 5);
	assert_int_equal(r->time.min_ns, 50);
	assert_int_equal(r->time.min_frame, 2);
	assert_int_equal(r->time.median_ns, 250);
	assert_int_equal(r->time.max_frame, 5);
	assert_int_equal(stats_value(whole, game, 0, false), STATS_ABSENT);
	assert_int_equal(stats_value(whole, game, 2, false), 200);
	assert_int_equal(stats_value(whole, game, 3, false), 250);
	assert_int_equal(stats_value(whole, game, 6, false), STATS_ABSENT);
	int64_t values[5];
	assert_int_equal(stats_row_values(whole, game, false, false, values), 5);
	assert_int_equal(values[0], 200);
	assert_int_equal(values[1], 50);
	assert_int_equal(r->spikes.count, 2);
	assert_int_equal(r->spikes.longest_run, 2);
	assert_int_equal(r->spikes.longest_run_first, 5);
	assert_int_equal(stats_row(whole, must_row(whole, STATS_CPU, "CPU"))->time.frames, 8);

	for (uint64_t cut = 1; cut < 8; cut++) {
		stats *a = stats_create();
		assert_non_null(a);
		stats *b = stats_create_sharing(a);
		assert_non_null(b);
		add_game_frames(a, 0, cut);
		add_game_frames(b, cut, 8);
		assert_int_equal(stats_append(a, b), CRUMBS_OK);
		assert_int_equal(stats_finish(a, NULL), CRUMBS_OK);
		assert_same_stats(whole, a);
		assert_memory_equal(&stats_row(a, game)->spikes, &r->spikes, sizeof(r->spikes));
		stats_free(b);
		stats_free(a);
	}
	stats_free(whole);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(percentile_nearest_rank),
		cmocka_unit_test(one_to_hundred),
		cmocka_unit_test(spikes_and_longest_run),
		cmocka_unit_test(same_path_summed),
		cmocka_unit_test(row_absent_from_frames),
		cmocka_unit_test(summaries_match_reference),
		cmocka_unit_test(exclusive_split_from_time),
		cmocka_unit_test(append_joins_long_series),
		cmocka_unit_test(append_joins_sharing_parts_filled_at_once),
		cmocka_unit_test(pipeline_rows),
		cmocka_unit_test(cpu_frame_time_and_spikes),
		cmocka_unit_test(cpu_threads_by_name),
		cmocka_unit_test(tasks_and_states),
		cmocka_unit_test(marks_frames_of_another_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
