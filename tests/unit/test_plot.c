/* SPDX-License-Identifier: MIT */
/*
 * test_plot.c: the SVG of crumbs plot: names escaped for XML whatever
 * bytes they hold, text cut to its room, axis steps, a frame with
 * hostile names drawn without a byte of them raw, an arrow for each
 * semaphore wait, the CPU scope that made each submission, and the lanes
 * of overlapping tasks.
 */
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
