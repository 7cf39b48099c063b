/* SPDX-License-Identifier: MIT */
/*
 * test_plot.c: the SVG of crumbs plot: names escaped for XML whatever
 * bytes they hold, text cut to its room, axis steps, a frame with
 * hostile names drawn without a byte of them raw, an arrow for each
 * semaphore wait, the CPU scope that made each submission, and the lanes
 * of overlapping tasks.
 */
#include <math.h>
#include <stdio.h>

#include "helpers.h"

#include "../../report/report_internal.h"

#define T 1000000000ull

static char *text_of(const char *s, size_t len)
{
	struct sbuf b = { 0 };
	svg_text(&b, s, len);
	assert_false(b.failed);
	return b.data ? b.data : calloc(1, 1);
}

static void escapes_markup(void **state)
{
	(void)state;
	char *t = text_of("a<b>&\"c'", 8);
	assert_string_equal(t, "a&lt;b&gt;&amp;&quot;c&apos;");
	free(t);
}

/* Invalid UTF-8, control characters and U+FFFE cannot be in XML: each
 * becomes U+FFFD; valid text in any script passes as it is. */
static void replaces_what_xml_cannot_hold(void **state)
{
	(void)state;
	const char bad[] = "x\xff" "y\x01" "z\x7f" "\xef\xbf\xbe" "\xc3";
	char *t = text_of(bad, sizeof(bad) - 1);
	assert_string_equal(t, "x\xef\xbf\xbdy\xef\xbf\xbdz\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(t);
	t = text_of("Ocв\xc3\xa9 \xe6\xb8\xb2\xe6\x9f\x93", 13);
	assert_string_equal(t, "Ocв\xc3\xa9 \xe6\xb8\xb2\xe6\x9f\x93");
	free(t);
}

/* A name cut to its room ends in an ellipsis and is never wider than the
 * room; under two characters, nothing. */
static void fits_text(void **state)
{
	(void)state;
	const char *name = "Tiled Deferred Lighting";
	double full = svg_text_px(name, strlen(name), 10);
	struct sbuf b = { 0 };

	assert_true(svg_text_fit(&b, name, strlen(name), 10, full));
	assert_string_equal(b.data, name);
	b.len = 0;
	assert_true(svg_text_fit(&b, name, strlen(name), 10, full / 2));
	assert_true(b.len > 3 && strcmp(b.data + b.len - 3, "\xe2\x80\xa6") == 0);
	assert_true(svg_text_px(b.data, b.len, 10) <= full / 2);
	b.len = 0;
	assert_false(svg_text_fit(&b, name, strlen(name), 10, 12));
	assert_int_equal(b.len, 0);
	/* Wide characters count two cells, and are never cut in half. */
	const char *wide = "\xe6\xb8\xb2\xe6\x9f\x93\xe6\xb8\xb2\xe6\x9f\x93";
	b.len = 0;
	assert_true(svg_text_fit(&b, wide, strlen(wide), 10, 2 * 12 + 6 + 5));
	assert_string_equal(b.data, "\xe6\xb8\xb2\xe6\x9f\x93\xe2\x80\xa6");
	sbuf_release(&b);
}

static void nice_steps(void **state)
{
	(void)state;
	assert_true(svg_nice_step(12, 6) == 2);
	assert_true(svg_nice_step(52.5, 10) == 10);
	assert_true(svg_nice_step(0.8, 4) == 0.2);
	assert_true(svg_nice_step(3, 10) > 0.49 && svg_nice_step(3, 10) < 0.51);
	struct sbuf b = { 0 };
	svg_number(&b, 0.5, 0.5);
	sbuf_adds(&b, " ");
	svg_number(&b, 0.75, 0.25);
	sbuf_adds(&b, " ");
	svg_number(&b, 20, 10);
	assert_string_equal(b.data, "0.5 0.75 20");
	sbuf_release(&b);
}

static int sink_to_sbuf(void *user, const char *text, size_t len)
{
	sbuf_add(user, text, len);
	return 0;
}

/* A frame's timeline with the default settings, as a string to free. */
static char *draw_frame(reader *c, const struct frame *f, const char *file)
{
	struct plot_settings p;
	struct sbuf out = { 0 };
	struct report_sink sink = { sink_to_sbuf, &out };
	plot_settings_init(&p);
	assert_int_equal(plot_frame(&p, reader_meta(c), f, file, &sink), 0);
	assert_false(out.failed);
	assert_true(out.len > 7 && strcmp(out.data + out.len - 7, "</svg>\n") == 0);
	plot_settings_release(&p);
	return out.data;
}

/* Two queues, a wait between them, names that are markup: every name is
 * in a <title>, escaped, and no raw '<' of a name gets through. */
static void frame_with_hostile_names(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU <&>");
	uint32_t gfx = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	uint32_t comp = add_queue(w, g, CRUMBS_QUEUE_COMPUTE, 1.0f, 64);
	struct crumbs_semaphore_op op = { 1, 1 };
	assert_int_equal(crumbs_writer_calibration(w, g, T, T, 0), CRUMBS_OK);
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, gfx, T, T + 300000, NULL, &op);
	crumbs_writer_scope_begin(w, "<script>alert(1)</script>", 0, T + 300000);
	crumbs_writer_scope_begin(w, "A & \"B\"", 0, T + 300000);
	crumbs_writer_scope_end(w, T + 900000);
	crumbs_writer_scope_end(w, T + 1000000);
	crumbs_writer_submit_end(w, T + 1000000);
	submit(w, comp, T + 50000, T + 1000100, &op, NULL);
	crumbs_writer_scope_begin(w, "bad \xff byte", 0, T + 1000100);
	crumbs_writer_scope_end(w, T + 2000000);
	crumbs_writer_submit_end(w, T + 2000000);
	crumbs_writer_frame_end(w, T + 3000000, 0, 0);
	reader *c = mem_read(&m, w);
	char *svg = draw_frame(c, next_frame(c), "a<b>.crumbs");
	assert_non_null(strstr(svg, "<title>&lt;script&gt;alert(1)&lt;/script&gt;\ninclusive 0.700 ms"));
	assert_non_null(strstr(svg, "<title>A &amp; &quot;B&quot;\ninclusive 0.600 ms"));
	assert_non_null(strstr(svg, "<title>bad \xef\xbf\xbd byte\n"));
	assert_null(strstr(svg, "<script"));
	assert_null(strstr(svg, "a<b>"));
	assert_non_null(strstr(svg, "GPU 0 \xc2\xb7 GPU &lt;&amp;&gt;"));
	/* A lane per queue, and the arrow of the wait from graphics. */
	assert_non_null(strstr(svg, "data-queue=\"Graphics 0\""));
	assert_non_null(strstr(svg, "data-queue=\"Compute 0\""));
	assert_non_null(strstr(svg, "<path class=\"signal\""));
	/* The picture starts at compute's submit, which waited; graphics'
	 * submit, 0.3 ms ahead of its work, is before it. */
	assert_non_null(strstr(svg, "submission 1 by the CPU at -0.050 ms, before the picture starts"));
	assert_non_null(strstr(svg, "Compute 0 waited 0.950 ms for a signal from Graphics 0"));

	free(svg);
	reader_free(c);
	free(m.data);
}

/* A submission waiting on three semaphores, signalled by two queues and
 * the host: an arrow for each wait, not only the one that came last. */
static void an_arrow_for_each_wait(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU");
	uint32_t gfx = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	uint32_t comp = add_queue(w, g, CRUMBS_QUEUE_COMPUTE, 1.0f, 64);
	uint32_t copy = add_queue(w, g, CRUMBS_QUEUE_TRANSFER, 1.0f, 64);
	const struct crumbs_semaphore_op waits[] = { { 1, 1 }, { 2, 1 }, { 3, 1 } };
	assert_int_equal(crumbs_writer_calibration(w, g, T, T, 0), CRUMBS_OK);
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, gfx, T, T + 100000, NULL, &waits[0]);
	crumbs_writer_submit_end(w, T + 500000);
	submit(w, copy, T, T + 100000, NULL, &waits[1]);
	crumbs_writer_submit_end(w, T + 300000);
	struct crumbs_submit_desc d = { .queue = comp, .cpu_ns = T + 50000, .gpu_ticks = T + 500100,
					.waits = waits, .wait_count = 3 };
	assert_int_equal(crumbs_writer_submit_begin(w, &d), CRUMBS_OK);
	crumbs_writer_submit_end(w, T + 900000);
	crumbs_writer_host_signal(w, 3, 1, T + 400000);
	crumbs_writer_frame_end(w, T + 1000000, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_int_equal(f->release_count, 3);
	char *svg = draw_frame(c, f, "waits.crumbs");
	/* The picture starts at compute's submit, 0.05 ms in; its wait ends
	 * with graphics' signal. Each arrow says how long its wait held. */
	assert_non_null(strstr(svg, "wait 0.450 ms of submission 1 on 3 semaphores"));
	assert_non_null(strstr(svg, "Compute 0 waited 0.450 ms for a signal from Graphics 0 at 0.450 ms"));
	assert_non_null(strstr(svg, "Compute 0 waited 0.250 ms for a signal from Transfer 0 at 0.250 ms"));
	assert_non_null(strstr(svg, "Compute 0 waited 0.350 ms for a signal from the host at 0.350 ms"));
	size_t arrows = 0;
	for (const char *at = svg; (at = strstr(at, "for a signal from")); at++)
		arrows++;
	assert_int_equal(arrows, 3);

	free(svg);
	reader_free(c);
	free(m.data);
}

/* A scope of a hand-made CPU tree, named n, from b to e, below parent. */
static struct node *cpu_node(struct node *pool, size_t *used, struct node *parent,
			     const char *name, int64_t b, int64_t e)
{
	struct node *n = &pool[(*used)++];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->name_len = (uint32_t)strlen(name);
	n->kind = CRUMBS_EVENT_SCOPE;
	n->parent = parent;
	n->depth = parent ? parent->depth + 1 : 0;
	n->begin_ns = b;
	n->end_ns = e;
	if (parent) {
		struct node **at = &parent->child;
		while (*at)
			at = &(*at)->next;
		*at = n;
		parent->child_count++;
	}
	return n;
}

/* The scope that made each submission: the innermost around its CPU time,
 * ends included, on the frame's thread first, else on the first thread
 * that has one, never on a timeline; none outside every scope. */
static void the_scope_that_submitted(void **state)
{
	(void)state;
	struct node pool[16];
	size_t used = 0;
	struct frame_cpu_thread threads[3] = { 0 };
	struct node *main_root = cpu_node(pool, &used, NULL, "Main", 0, 0);
	struct node *frame = cpu_node(pool, &used, main_root, "Frame", 100, 900);
	struct node *update = cpu_node(pool, &used, frame, "Update", 200, 300);
	struct node *render = cpu_node(pool, &used, frame, "Render", 300, 800);
	struct node *worker_root = cpu_node(pool, &used, NULL, "Worker", 0, 0);
	struct node *job = cpu_node(pool, &used, worker_root, "Job", 250, 600);
	struct node *tasks_root = cpu_node(pool, &used, NULL, "Jobs", 0, 0);
	cpu_node(pool, &used, tasks_root, "Task", 0, 2000);
	threads[0] = (struct frame_cpu_thread){ .kind = FRAME_CPU_THREAD, .tid = 1, .root = main_root };
	threads[1] = (struct frame_cpu_thread){ .kind = FRAME_CPU_THREAD, .tid = 2, .root = worker_root };
	threads[2] = (struct frame_cpu_thread){ .kind = FRAME_CPU_TIMELINE, .root = tasks_root };
	/* Out of time order, as submissions of several queues are. */
	struct submission subs[6] = {
		{ .cpu_ns = 300 }, { .cpu_ns = 250 }, { .cpu_ns = 950 },
		{ .cpu_ns = 1500 }, { .cpu_ns = 900 }, { .cpu_ns = 150 },
	};
	struct frame f = { .submissions = subs, .submission_count = 6, .cpu_threads = threads,
			   .cpu_thread_count = 3, .frame_thread = -1 };
	struct cpu_links l = { 0 };

	assert_true(cpu_links_build(&l, &f));
	/* At 300 Update ends and Render begins: the one begun last. */
	assert_ptr_equal(l.submitter[0], render);
	assert_ptr_equal(l.submitter[1], update);
	assert_null(l.submitter[2]);
	assert_null(l.submitter[3]); /* the timeline's task is no scope */
	assert_ptr_equal(l.submitter[4], frame);
	assert_ptr_equal(l.submitter[5], frame);
	assert_int_equal(l.submitter_thread[1], 0);

	/* The frame's thread first. */
	f.frame_thread = 1;
	assert_true(cpu_links_build(&l, &f));
	assert_ptr_equal(l.submitter[0], job);
	assert_ptr_equal(l.submitter[1], job);
	assert_int_equal(l.submitter_thread[1], 1);
	assert_ptr_equal(l.submitter[5], frame);
	cpu_links_release(&l);
}

/* Tasks in the first lane free when they begin; past the most lanes,
 * none. */
static void tasks_take_the_first_free_lane(void **state)
{
	(void)state;
	int64_t ends[2];
	uint32_t lanes = 0;
	assert_int_equal(task_lane(ends, &lanes, 2, 0, 10), 0);
	assert_int_equal(task_lane(ends, &lanes, 2, 5, 20), 1);
	assert_int_equal(task_lane(ends, &lanes, 2, 6, 8), 2); /* both busy: none */
	assert_int_equal(task_lane(ends, &lanes, 2, 10, 12), 0);
	assert_int_equal(lanes, 2);
}

/* ------------------------------------------------------------------------ */
/* A run's rows of top scopes                                               */
/* ------------------------------------------------------------------------ */

static struct capture_gpu run_gpus[1] = { { .name = "GPU A" } };
static struct capture_queue run_queues[2] = {
	{ .gpu = 0, .name = "Graphics 0", .timestamp_valid_bits = 64 },
	{ .gpu = 0, .name = "Compute 0", .timestamp_valid_bits = 64 },
};
static const struct capture_meta run_meta = {
	.gpus = run_gpus, .gpu_count = 1, .queues = run_queues, .queue_count = 2,
};

/* One frame built by hand: GPU 0 with two queues, trees of nodes below
 * them, and CPU threads and timelines when a test adds them. */
struct hand_frame {
	struct frame f;
	struct frame_gpu gpu;
	struct frame_queue queues[2];
	struct node *nodes;
	size_t count, cap;
	struct frame_cpu_thread threads[4];
};

static void hand_begin(struct hand_frame *h, uint64_t number, int64_t frame_ns, size_t cap)
{
	memset(h, 0, sizeof(*h));
	h->nodes = calloc(cap, sizeof(*h->nodes));
	assert_non_null(h->nodes);
	h->cap = cap;
	h->f.number = number;
	h->gpu.frame_ns = frame_ns;
	h->f.gpus = &h->gpu;
	h->f.gpu_count = 1;
	h->f.queues = h->queues;
	h->f.queue_count = 2;
	for (uint32_t q = 0; q < 2; q++) {
		struct node *root = &h->nodes[h->count++];
		root->name = run_queues[q].name;
		root->name_len = (uint32_t)strlen(root->name);
		root->flags = NODE_QUEUE_ROOT;
		h->queues[q].queue = q;
		h->queues[q].root = root;
		h->queues[q].busy_ns = frame_ns;
	}
}

/* A scope (or a CPU scope, task or state) below parent: 0 and 1 are the
 * queues' roots. */
static struct node *hand_node(struct hand_frame *h, struct node *parent, const char *name,
			      int64_t ns)
{
	assert_true(h->count < h->cap);
	struct node *n = &h->nodes[h->count++];
	n->name = name;
	n->name_len = (uint32_t)strlen(name);
	n->kind = CRUMBS_EVENT_SCOPE;
	n->parent = parent;
	n->depth = parent->depth + 1;
	n->inclusive_ns = ns;
	n->exclusive_ns = ns;
	struct node **link = &parent->child;
	while (*link)
		link = &(*link)->next;
	*link = n;
	parent->child_count++;
	if (parent->flags & NODE_QUEUE_ROOT)
		parent->inclusive_ns += ns;
	return n;
}

static struct node *queue_root(struct hand_frame *h, uint32_t q)
{
	h->queues[q].submissions = 1;
	h->queues[q].scopes = 1;
	return h->queues[q].root;
}

static struct node *hand_thread(struct hand_frame *h, uint32_t kind, uint32_t tid, const char *name)
{
	assert_true(h->f.cpu_thread_count < 4 && h->count < h->cap);
	struct frame_cpu_thread *t = &h->threads[h->f.cpu_thread_count++];
	struct node *root = &h->nodes[h->count++];
	h->f.cpu_threads = h->threads;
	h->f.cpu_end_ns = 1000000;
	t->kind = kind;
	t->tid = tid;
	t->name = name;
	t->name_len = (uint32_t)strlen(name);
	t->root = root;
	root->name = name;
	root->name_len = t->name_len;
	root->flags = NODE_QUEUE_ROOT;
	return root;
}

static void hand_add(stats *s, struct hand_frame *h)
{
	assert_int_equal(stats_add_frame(s, &run_meta, &h->f), CRUMBS_OK);
	free(h->nodes);
	h->nodes = NULL;
}

#define US 1000 /* ns */

/*
 * Frames 0 to 3: on Graphics 0 a scope "Frame" around all of the work,
 * holding "Shadows" 30 us, "Base" 50, "Post" 20 (with "Bloom" 15 in it)
 * and "Tie" 20; on Compute 0 "Async" 40 alone, with nothing below it.
 * Summed over the 4 frames: Base 200, Async 160, Shadows 120, Post 80 and
 * Tie 80 (Post first: it came first). "Frame" gives way to the scopes in
 * it; Bloom is below a level that holds more than one; Async, alone, has
 * none below it and stays. Frame 2's GPU time, 3x the others', is the
 * run's one spike.
 */
static stats *passes_run(uint64_t frames)
{
	stats *s = stats_create();
	assert_non_null(s);
	for (uint64_t i = 0; i < frames; i++) {
		struct hand_frame h;
		hand_begin(&h, i, i == 2 ? 600 * US : 200 * US, 16);
		struct node *frame = hand_node(&h, queue_root(&h, 0), "Frame", 120 * US);
		hand_node(&h, frame, "Shadows", 30 * US);
		hand_node(&h, frame, "Base", 50 * US);
		hand_node(&h, hand_node(&h, frame, "Post", 20 * US), "Bloom", 15 * US);
		hand_node(&h, frame, "Tie", 20 * US);
		hand_node(&h, queue_root(&h, 1), "Async", 40 * US);
		hand_add(s, &h);
	}
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
	return s;
}

static const char *row_name(const stats *s, uint32_t row)
{
	return stats_row(s, row)->name;
}

static void top_rows_by_time_below_a_frame_scope(void **state)
{
	(void)state;
	stats *s = passes_run(4);
	struct report_settings rs;
	char err[128];
	uint32_t top[PLOT_MAX_ROWS];
	report_settings_init(&rs);
	assert_int_equal(report_settings_prepare(&rs, err, sizeof(err)), CRUMBS_OK);

	uint32_t gpu = stats_gpu_row(s, 0);
	size_t n = plot_top_rows(s, &run_meta, &rs, gpu, top, 6);
	const char *want[] = { "Base", "Async", "Shadows", "Post", "Tie" };
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(row_name(s, top[i]), want[i]);
	assert_int_equal(plot_row_total_ns(s, top[0]), 200 * US);
	assert_int_equal(plot_row_total_ns(s, top[1]), 160 * US);

	/* The top 2; none for 0. */
	assert_int_equal(plot_top_rows(s, &run_meta, &rs, gpu, top, 2), 2);
	assert_string_equal(row_name(s, top[1]), "Async");
	assert_int_equal(plot_top_rows(s, &run_meta, &rs, gpu, top, 0), 0);
	/* No CPU threads: the CPU has no rows; a row that is no frame time
	 * has none either. */
	assert_int_equal(plot_top_rows(s, &run_meta, &rs, stats_cpu_row(s), top, 6), 0);
	assert_int_equal(plot_top_rows(s, &run_meta, &rs, top[0], top, 6), 0);
	report_settings_release(&rs);

	/* --queue: the scopes of the queues it matches. */
	report_settings_init(&rs);
	rs.queue = strdup("Compute*");
	assert_int_equal(report_settings_prepare(&rs, err, sizeof(err)), CRUMBS_OK);
	assert_int_equal(plot_top_rows(s, &run_meta, &rs, gpu, top, 6), 1);
	assert_string_equal(row_name(s, top[0]), "Async");
	report_settings_release(&rs);
	stats_free(s);
}

/*
 * The CPU's rows: thread "Main" with "Frame" around "Game" (60 us) and
 * "Render" (30); thread "Worker" with "Job" (10) alone; timeline "Jobs"
 * with tasks "Cull" (50, a state "Wait" of 5 in it) and "Skin" (20).
 * Ranked: Game, Cull, Render, Skin, Job.
 */
static void top_rows_of_the_cpu(void **state)
{
	(void)state;
	stats *s = stats_create();
	assert_non_null(s);
	for (uint64_t i = 0; i < 3; i++) {
		struct hand_frame h;
		hand_begin(&h, i, 100 * US, 24);
		struct node *frame = hand_node(&h, hand_thread(&h, FRAME_CPU_THREAD, 1, "Main"), "Frame",
					       90 * US);
		hand_node(&h, frame, "Game", 60 * US);
		hand_node(&h, frame, "Render", 30 * US);
		hand_node(&h, hand_thread(&h, FRAME_CPU_THREAD, 2, "Worker"), "Job", 10 * US);
		struct node *tl = hand_thread(&h, FRAME_CPU_TIMELINE, 0, "Jobs");
		hand_node(&h, hand_node(&h, tl, "Cull", 50 * US), "Wait", 5 * US);
		hand_node(&h, tl, "Skin", 20 * US);
		hand_add(s, &h);
	}
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
	struct report_settings rs;
	char err[128];
	uint32_t top[PLOT_MAX_ROWS];
	report_settings_init(&rs);
	assert_int_equal(report_settings_prepare(&rs, err, sizeof(err)), CRUMBS_OK);
	assert_int_not_equal(stats_cpu_row(s), STATS_NONE);
	size_t n = plot_top_rows(s, &run_meta, &rs, stats_cpu_row(s), top, PLOT_MAX_ROWS + 5);
	const char *want[] = { "Game", "Cull", "Render", "Skin", "Job" };
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(row_name(s, top[i]), want[i]);
	assert_int_equal(stats_row(s, top[1])->kind, STATS_TASK);
	report_settings_release(&rs);
	stats_free(s);
}

/* A run's picture, as a string to free. */
static char *draw_run(const stats *s, unsigned rows, unsigned width)
{
	struct plot_settings p;
	struct sbuf out = { 0 };
	struct report_sink sink = { sink_to_sbuf, &out };
	char err[128];
	plot_settings_init(&p);
	p.rows = rows;
	p.width = width;
	assert_int_equal(report_settings_prepare(&p.stats.report, err, sizeof(err)), CRUMBS_OK);
	assert_int_equal(plot_run(&p, &run_meta, s, NULL, "run.crumbs", &sink), 0);
	assert_false(out.failed);
	assert_true(out.len > 7 && strcmp(out.data + out.len - 7, "</svg>\n") == 0);
	plot_settings_release(&p);
	return out.data;
}

static size_t count_of(const char *svg, const char *what)
{
	size_t n = 0;
	for (const char *at = svg; (at = strstr(at, what)); at++)
		n++;
	return n;
}

/*
 * The rows below the graph: a strip each, of one height, one after the
 * other, taller with each row; each frame's numbers in the <title> of
 * its hover column; the spike (frame 2) marked across them; nothing of
 * it with --rows 0.
 */
static void rows_layout_and_titles(void **state)
{
	(void)state;
	assert_true(plot_rows_height(0) > 0);
	assert_true(plot_rows_height(1) > plot_rows_height(0));
	double strip = plot_rows_height(2) - plot_rows_height(1);
	assert_true(strip >= 30);
	assert_true(fabs(plot_rows_height(PLOT_MAX_ROWS) - plot_rows_height(1) -
			 (PLOT_MAX_ROWS - 1) * strip) < 1e-9);

	stats *s = passes_run(4);
	char *svg = draw_run(s, 3, 1200);
	assert_non_null(strstr(svg, "<g data-rows=\"3\">"));
	assert_non_null(strstr(svg, "data-row=\"0\" data-kind=\"scope\" data-total-ns=\"200000\" "
				    "data-path=\"GPU 0 / Graphics 0 / Frame / Base\""));
	assert_non_null(strstr(svg, "data-path=\"GPU 0 / Compute 0 / Async\""));
	assert_non_null(strstr(svg, "data-path=\"GPU 0 / Graphics 0 / Frame / Shadows\""));
	assert_null(strstr(svg, "data-path=\"GPU 0 / Graphics 0 / Frame / Post\""));
	assert_non_null(strstr(svg, "data-frame=\"2\"><title>frame 2\nGPU 0 frame time 0.600 ms, "
				    "a spike (above 0.300 ms)\nBase 0.050 ms\nAsync 0.040 ms\n"
				    "Shadows 0.030 ms</title>"));
	assert_non_null(strstr(svg, "data-frame=\"3\"><title>frame 3\nGPU 0 frame time 0.200 ms\n"));
	assert_int_equal(count_of(svg, "class=\"hover\""), 4);
	assert_int_equal(count_of(svg, "<path class=\"spikemark\" data-frame="), 1);
	assert_non_null(strstr(svg, "<path class=\"spikemark\" data-frame=\"2\""));
	/* The legend names each row's colour. */
	assert_non_null(strstr(svg, "<rect class=\"c0 blk\""));
	assert_non_null(strstr(svg, "<rect class=\"c2 blk\""));
	assert_null(strstr(svg, "class=\"c3 blk\""));
	assert_non_null(strstr(svg, ">Shadows</text>"));
	/* The picture is as tall as its graph and rows. */
	char *none = draw_run(s, 0, 1200);
	assert_null(strstr(none, "data-rows"));
	assert_null(strstr(none, "class=\"hover\""));
	assert_null(strstr(none, "class=\"spikemark\""));
	double h3 = 0, h0 = 0;
	assert_int_equal(sscanf(strstr(svg, "height=\""), "height=\"%lf\"", &h3), 1);
	assert_int_equal(sscanf(strstr(none, "height=\""), "height=\"%lf\"", &h0), 1);
	assert_true(fabs(h3 - h0 - plot_rows_height(3)) < 0.5);
	free(none);
	free(svg);
	stats_free(s);

	/* One frame: a bar, and its hover column the whole width. */
	s = passes_run(1);
	svg = draw_run(s, 6, 400);
	assert_int_equal(count_of(svg, "class=\"hover\""), 1);
	assert_non_null(strstr(svg, "<rect class=\"hover\" x=\"70.0\" y=\"80.0\" width=\"130.0\""));
	free(svg);
	stats_free(s);
}

/*
 * Hostile rows: no scope at all; 3000 scopes of their own names; a name
 * of 6000 bytes of markup. No crash, a line that says there are none, the
 * top rows alone drawn, names cut in legends and titles, nothing raw.
 */
static void rows_of_hostile_runs(void **state)
{
	(void)state;
	stats *s = stats_create();
	for (uint64_t i = 0; i < 3; i++) {
		struct hand_frame h;
		hand_begin(&h, i, 100 * US, 4);
		hand_add(s, &h);
	}
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
	char *svg = draw_run(s, 6, 1200);
	assert_non_null(strstr(svg, "<g data-rows=\"0\">"));
	assert_non_null(strstr(svg, "no scopes in these frames"));
	assert_int_equal(count_of(svg, "class=\"hover\""), 3);
	free(svg);
	stats_free(s);

	enum { SCOPES = 3000, LONG = 6000 };
	char (*names)[16] = calloc(SCOPES, sizeof(*names));
	char *long_name = malloc(LONG + 1);
	assert_non_null(names);
	assert_non_null(long_name);
	for (size_t i = 0; i < LONG; i++)
		long_name[i] = "<&>\""[i % 4];
	long_name[LONG] = '\0';
	s = stats_create();
	for (uint64_t f = 0; f < 2; f++) {
		struct hand_frame h;
		hand_begin(&h, f, 100 * US, SCOPES + 8);
		struct node *q = queue_root(&h, 0);
		hand_node(&h, q, long_name, 200 * US);
		for (size_t i = 0; i < SCOPES; i++) {
			snprintf(names[i], sizeof(names[i]), "Scope %zu", i);
			hand_node(&h, q, names[i], (int64_t)(i % 97) * US);
		}
		hand_add(s, &h);
	}
	assert_int_equal(stats_finish(s, NULL), CRUMBS_OK);
	svg = draw_run(s, PLOT_MAX_ROWS, 400);
	assert_non_null(strstr(svg, "<g data-rows=\"10\">"));
	assert_int_equal(count_of(svg, "data-row=\""), PLOT_MAX_ROWS);
	/* The long name first; then the scopes of 96 us, first come first. */
	assert_non_null(strstr(svg, "data-row=\"1\" data-kind=\"scope\" data-total-ns=\"192000\" "
				    "data-path=\"GPU 0 / Graphics 0 / Scope 96\""));
	assert_non_null(strstr(svg, "data-path=\"GPU 0 / Graphics 0 / Scope 193\""));
	assert_null(strstr(svg, "<&"));
	/* Every title and text short: the long name is cut everywhere but
	 * in data-path and the legend's title, which keep 1024 bytes. */
	for (const char *at = svg; (at = strstr(at, "<title>frame ")); at++) {
		const char *end = strstr(at, "</title>");
		assert_non_null(end);
		assert_true(end - at < 1200);
	}
	for (const char *at = svg; (at = strstr(at, "<text")); at++)
		assert_true(strstr(at, "</text>") - at < 400);
	assert_true(strlen(svg) < 200000);
	free(svg);
	stats_free(s);
	free(names);
	free(long_name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escapes_markup),
		cmocka_unit_test(replaces_what_xml_cannot_hold),
		cmocka_unit_test(fits_text),
		cmocka_unit_test(nice_steps),
		cmocka_unit_test(frame_with_hostile_names),
		cmocka_unit_test(an_arrow_for_each_wait),
		cmocka_unit_test(the_scope_that_submitted),
		cmocka_unit_test(tasks_take_the_first_free_lane),
		cmocka_unit_test(top_rows_by_time_below_a_frame_scope),
		cmocka_unit_test(top_rows_of_the_cpu),
		cmocka_unit_test(rows_layout_and_titles),
		cmocka_unit_test(rows_of_hostile_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
