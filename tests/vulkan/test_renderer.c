/* SPDX-License-Identifier: MIT */
/*
 * test_renderer.c: the sample renderer, end to end: run under the
 * validation layer (it exits 1 on any message), capture one frame, and
 * check the capture's tree: names, nesting, scopes of all four detail
 * levels, counts, and what the pre-roll told about the queues; and its
 * CPU side: the render thread's stages, the jobs on the job threads and
 * as tasks with their dependencies, the physics' frames.
 */
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "vkt.h"

extern char **environ;

static const char *renderer_path(void)
{
	const char *p = getenv("CRUMBS_RENDERER");
	return p ? p : "build/sample-renderer";
}

/* Runs the renderer with arguments; returns its exit status. Under the
 * sanitizers it gets the options tests/run-tests chose for it. */
static int run(char *const argv[])
{
	pid_t pid;
	int status;
	const char *asan = getenv("CRUMBS_RENDERER_ASAN_OPTIONS");
	if (asan)
		setenv("ASAN_OPTIONS", asan, 1);
	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		fail_msg("cannot run %s", argv[0]);
	if (waitpid(pid, &status, 0) != pid)
		fail_msg("cannot wait for %s", argv[0]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* One of the batches of draws the renderer's passes record. */
static bool is_batch(const struct node *n)
{
	return n->name_len > 11 && memcmp(n->name, "Mesh Batch ", 11) == 0;
}

static unsigned count_levels(const struct node *n, unsigned *levels, unsigned *batches)
{
	unsigned scopes = 0;
	for (const struct node *c = n->child; c; c = c->next) {
		if (c->kind == CRUMBS_EVENT_SCOPE) {
			scopes++;
			levels[c->level & 3]++;
			if (is_batch(c)) {
				(*batches)++;
				assert_int_equal(c->level, 3);
			}
		}
		scopes += count_levels(c, levels, batches);
	}
	return scopes;
}

static void capture_under_validation(void **state)
{
	(void)state;
	char dir[] = "/tmp/crumbs-renderer-XXXXXX";
	assert_non_null(mkdtemp(dir));
	/* One queue, as on lavapipe: a GPU with a compute-only family would
	 * take the lighting to a queue of its own, and the order checked
	 * below is the graphics queue's. */
	char *argv[] = { (char *)(uintptr_t)renderer_path(), (char[]){ "--validate" },
			 (char[]){ "--quiet" }, (char[]){ "--frames" }, (char[]){ "4" },
			 (char[]){ "--capture-frame" }, (char[]){ "2" }, (char[]){ "--capture-dir" },
			 dir, (char[]){ "--async-compute" }, (char[]){ "off" }, NULL };
	assert_int_equal(run(argv), 0);

	char path[128];
	snprintf(path, sizeof(path), "%s/sample-renderer-frame-2.crumbs", dir);
	reader *c;
	const struct frame *f = vkt_read(path, &c);
	assert_int_equal(f->number, 2);
	assert_true(f->flags & CRUMBS_FRAME_FULL_DETAIL);
	assert_false(f->flags & (CRUMBS_FRAME_SCOPES_DROPPED | CRUMBS_FRAME_INCOMPLETE));

	const struct frame_queue *gfx = &f->queues[0];
	const struct node *frame = vkt_find(gfx->root, "Frame 2");
	assert_non_null(frame);
	assert_int_equal(frame->level, 0);
	/* The deferred frame, in order. */
	static const char *const passes[] = { "Shadow Depths", "Base Pass", "Lighting",
					      "Post Processing" };
	const struct node *n = frame->child;
	for (size_t i = 0; i < 4; i++, n = n ? n->next : NULL) {
		assert_non_null(n);
		assert_int_equal(n->name_len, strlen(passes[i]));
		assert_memory_equal(n->name, passes[i], n->name_len);
		assert_int_equal(n->level, 1);
	}
	const struct node *shadows = vkt_find(frame, "Shadow Depths");
	for (int v = 0; v < 4; v++) {
		char name[32];
		snprintf(name, sizeof(name), "Shadow View %d", v);
		const struct node *view = vkt_find(shadows, name);
		assert_non_null(view);
		assert_ptr_equal(view->parent, shadows);
	}
	const struct node *post = vkt_find(frame, "Post Processing");
	for (int k = 0; k < 5; k++) {
		char name[32];
		snprintf(name, sizeof(name), "Bloom Down %d", k);
		assert_non_null(vkt_find(post, name));
		snprintf(name, sizeof(name), "Bloom Up %d", k);
		assert_non_null(vkt_find(post, name));
	}
	assert_non_null(vkt_find(post, "Tonemap"));
	assert_non_null(vkt_find(frame, "Tiled Deferred Lighting"));

	/* Scopes of every level; the finest are the base pass's batches. */
	unsigned levels[4] = { 0, 0, 0, 0 }, batches = 0, scopes = 0;
	for (uint32_t q = 0; q < f->queue_count; q++)
		scopes += count_levels(f->queues[q].root, levels, &batches);
	for (int l = 0; l < 4; l++)
		assert_true(levels[l] > 0);
	assert_true(batches > 0);
	assert_int_equal(scopes, f->scopes);
	/* Counts of the draws and the lighting dispatch. */
	assert_true(vkt_find(frame, "Base Pass")->inclusive.draws >= 100);
	assert_true(vkt_find(f->queues[f->queue_count - 1].root, "Tiled Deferred Lighting")
			    ->inclusive.dispatches >= 1);
	/* The pre-roll said when each queue that worked last finished. */
	for (uint32_t q = 0; q < f->queue_count; q++)
		if (f->queues[q].submissions)
			assert_false(f->queues[q].flags & FRAME_QUEUE_NO_READY);
	assert_true(gfx->submissions >= 2);
	assert_true(f->gpus[0].calibrated);
	reader_free(c);

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static bool named(const char *name, uint32_t len, const char *want)
{
	return len == strlen(want) && memcmp(name, want, len) == 0;
}

/* The CPU thread or timeline of that name; NULL: none. */
static const struct frame_cpu_thread *cpu_thread(const struct frame *f, const char *name)
{
	for (uint32_t i = 0; i < f->cpu_thread_count; i++)
		if (named(f->cpu_threads[i].name, f->cpu_threads[i].name_len, name))
			return &f->cpu_threads[i];
	return NULL;
}

/* The renderer's frame on the CPU: the render thread's stages, the
 * frame's jobs on the job threads, each once, and as tasks on the Jobs
 * timeline whose dependencies were all respected, and one or two steps
 * of the physics, each a frame of its kind. */
static void cpu_side(void **state)
{
	(void)state;
	char dir[] = "/tmp/crumbs-renderer-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *argv[] = { (char *)(uintptr_t)renderer_path(), (char[]){ "--validate" },
			 (char[]){ "--quiet" }, (char[]){ "--frames" }, (char[]){ "4" },
			 (char[]){ "--capture-frame" }, (char[]){ "2" }, (char[]){ "--capture-dir" },
			 dir, NULL };
	assert_int_equal(run(argv), 0);
	char path[128];
	snprintf(path, sizeof(path), "%s/sample-renderer-frame-2.crumbs", dir);
	reader *c;
	const struct frame *f = vkt_read(path, &c);

	const struct frame_cpu_thread *render = cpu_thread(f, "Render Thread");
	assert_non_null(render);
	assert_int_equal(render->kind, FRAME_CPU_THREAD);
	assert_int_equal(render->open_scopes, 0);
	assert_int_equal(render->unmatched_ends, 0);
	assert_true(f->frame_thread >= 0);
	assert_ptr_equal(&f->cpu_threads[f->frame_thread], render);
	const struct node *frame = vkt_find(render->root, "Frame");
	assert_non_null(frame);
	static const char *const stages[] = { "Wait for GPU", "Start Jobs", "Record Geometry",
					      "Wait for Jobs", "Submit" };
	const struct node *n = frame->child;
	for (size_t i = 0; i < 5; i++, n = n ? n->next : NULL) {
		assert_non_null(n);
		assert_true(named(n->name, n->name_len, stages[i]));
	}
	assert_true(frame->child->flags & NODE_WAIT);
	assert_true(render->wait_ns > 0);
	assert_non_null(vkt_find(frame, "Wait for Draw List"));

	static const char *const jobs[] = { "Physics", "Animate", "Cull", "Build Draw List",
					    "Upload", "Record Lighting", "Record Post Processing" };
	unsigned found[7] = { 0 };
	for (uint32_t t = 0; t < f->cpu_thread_count; t++) {
		const struct frame_cpu_thread *th = &f->cpu_threads[t];
		if (th->kind != FRAME_CPU_THREAD || th->name_len < 7 ||
		    memcmp(th->name, "Worker ", 7) != 0)
			continue;
		for (const struct node *j = th->root->child; j; j = j->next)
			for (size_t i = 0; i < 7; i++)
				found[i] += named(j->name, j->name_len, jobs[i]);
	}
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(found[i], 1);

	const struct frame_cpu_thread *timeline = cpu_thread(f, "Jobs");
	assert_non_null(timeline);
	assert_int_equal(timeline->kind, FRAME_CPU_TIMELINE);
	n = timeline->root->child;
	for (size_t i = 0; i < 7; i++, n = n ? n->next : NULL) {
		assert_non_null(n);
		assert_true(named(n->name, n->name_len, jobs[i]));
		assert_non_null(vkt_find(n, "Executing"));
		assert_false(n->flags & (NODE_OPEN | NODE_BEGUN_EARLIER));
	}
	assert_null(n);
	/* Animate after Physics, Cull and Upload after Animate, Build Draw
	 * List after Cull. */
	assert_int_equal(f->task_dep_count, 4);
	for (uint32_t d = 0; d < f->task_dep_count; d++) {
		assert_non_null(f->task_deps[d].task);
		assert_non_null(f->task_deps[d].blocking);
		assert_false(f->task_deps[d].violated);
	}
	assert_int_equal(f->task_misuses, 0);

	/* Three physics steps every two frames: frame 2 holds the third. */
	assert_int_equal(f->mark_count, 1);
	assert_true(named(f->marks[0].timeline, f->marks[0].timeline_len, "Physics"));
	reader_free(c);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

/* The shadow views recorded in secondary command buffers, which
 * crumbs_cmd_execute places: under the validation layer, each view holds
 * the same batches and draws as when it is recorded inline. */
static void capture_views(const char *mode, char *dir, unsigned batches[4], uint64_t draws[4])
{
	char *argv[] = { (char *)(uintptr_t)renderer_path(), (char[]){ "--validate" },
			 (char[]){ "--quiet" }, (char[]){ "--frames" }, (char[]){ "3" },
			 (char[]){ "--capture-frame" }, (char[]){ "1" }, (char[]){ "--capture-dir" },
			 dir, (char[]){ "--shadow-secondaries" }, (char *)(uintptr_t)mode, NULL };
	assert_int_equal(run(argv), 0);
	char path[128];
	snprintf(path, sizeof(path), "%s/sample-renderer-frame-1.crumbs", dir);
	reader *c;
	const struct frame *f = vkt_read(path, &c);
	assert_false(f->flags & (CRUMBS_FRAME_SCOPES_DROPPED | CRUMBS_FRAME_INCOMPLETE));
	const struct node *shadows = vkt_find(f->queues[0].root, "Shadow Depths");
	assert_non_null(shadows);
	for (int v = 0; v < 4; v++) {
		char name[32];
		snprintf(name, sizeof(name), "Shadow View %d", v);
		const struct node *view = vkt_find(shadows, name);
		assert_non_null(view);
		batches[v] = 0;
		for (const struct node *b = view->child; b; b = b->next)
			if (is_batch(b) && b->kind == CRUMBS_EVENT_SCOPE)
				batches[v]++;
		draws[v] = view->inclusive.draws;
	}
	reader_free(c);
	unlink(path);
}

static void secondaries_match_inline(void **state)
{
	(void)state;
	char dir[] = "/tmp/crumbs-renderer-XXXXXX";
	assert_non_null(mkdtemp(dir));
	unsigned inline_batches[4], secondary_batches[4];
	uint64_t inline_draws[4], secondary_draws[4];
	capture_views("off", dir, inline_batches, inline_draws);
	capture_views("on", dir, secondary_batches, secondary_draws);
	for (int v = 0; v < 4; v++) {
		assert_true(inline_batches[v] > 0);
		assert_true(inline_draws[v] > 0);
		assert_int_equal(secondary_batches[v], inline_batches[v]);
		assert_int_equal(secondary_draws[v], inline_draws[v]);
	}
	assert_int_equal(rmdir(dir), 0);
}

/* Same options, same image, byte for byte. */
static void deterministic_image(void **state)
{
	(void)state;
	char *a[] = { (char *)(uintptr_t)renderer_path(), (char[]){ "--quiet" },
		      (char[]){ "--frames" }, (char[]){ "2" }, (char[]){ "--output" },
		      (char[]){ "/tmp/crumbs-renderer-a.ppm" }, NULL };
	char *b[] = { (char *)(uintptr_t)renderer_path(), (char[]){ "--quiet" },
		      (char[]){ "--frames" }, (char[]){ "2" }, (char[]){ "--output" },
		      (char[]){ "/tmp/crumbs-renderer-b.ppm" }, NULL };
	assert_int_equal(run(a), 0);
	assert_int_equal(run(b), 0);
	assert_int_equal(system("cmp -s /tmp/crumbs-renderer-a.ppm /tmp/crumbs-renderer-b.ppm"), 0);
	unlink("/tmp/crumbs-renderer-a.ppm");
	unlink("/tmp/crumbs-renderer-b.ppm");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(capture_under_validation),
		cmocka_unit_test(cpu_side),
		cmocka_unit_test(secondaries_match_inline),
		cmocka_unit_test(deterministic_image),
	};
	return cmocka_run_group_tests_name("sample renderer", tests, NULL, NULL);
}
