/* SPDX-License-Identifier: MIT */
/*
 * test_threads.c: command buffers recorded with scopes on several threads
 * at once during a capture frame, as engines record passes in parallel.
 * Built and run under ThreadSanitizer by `make test`; every scope must
 * reach the capture, under its own command buffer's submission. And a
 * run's frames, handed to the output thread, which also keeps the run's
 * calibration samples fresh. And scopes on CPU threads, eight at once.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "vkt.h"

#define THREADS 4
#define BUFFERS 8   /* command buffers per thread */
#define SCOPES 50   /* top-level scopes per command buffer */
#define RUN_FRAMES 60
#define FRAMES_IN_FLIGHT 2

/*
 * lavapipe is not built with ThreadSanitizer: the atomics of its
 * reference counts are invisible to it. A fence that the program's thread
 * waited on (holding a reference) and that lavapipe's queue thread frees
 * afterwards (dropping the last, with a query that crumbs' copy resets)
 * looks like a race between the wait and the free. Reports whose stacks
 * run through lavapipe are left out; crumbs' own code is instrumented.
 */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
	return "race:libvulkan_lvp.so\n";
}

struct worker {
	struct vkt *t;
	int id;
	VkCommandPool pool;
	VkCommandBuffer cbs[BUFFERS];
	const char *error;
};

static void *record(void *arg)
{
	struct worker *w = arg;
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   w->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, BUFFERS };
	if (vkAllocateCommandBuffers(w->t->device, &ai, w->cbs) != VK_SUCCESS) {
		w->error = "vkAllocateCommandBuffers failed";
		return NULL;
	}
	for (int b = 0; b < BUFFERS; b++) {
		VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
						VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
		if (vkBeginCommandBuffer(w->cbs[b], &bi) != VK_SUCCESS) {
			w->error = "vkBeginCommandBuffer failed";
			return NULL;
		}
		crumbs_cmd *h = crumbs_cmd_begin(w->t->crumbs, w->cbs[b], w->t->queue);
		crumbs_scope_beginf(h, 0, "Thread %d Buffer %d", w->id, b);
		for (int s = 0; s < SCOPES; s++) {
			crumbs_scope_beginf(h, 1, "Pass %d", s);
			crumbs_scope_begin(h, 2, "Inner");
			crumbs_draws(h, 1, 12, 36);
			crumbs_scope_end(h);
			crumbs_scope_end(h);
		}
		crumbs_scope_end(h);
		crumbs_cmd_end(h);
		if (vkEndCommandBuffer(w->cbs[b]) != VK_SUCCESS) {
			w->error = "vkEndCommandBuffer failed";
			return NULL;
		}
	}
	return NULL;
}

static void parallel_recording(void **state)
{
	(void)state;
	struct vkt t;
	struct worker workers[THREADS];
	pthread_t threads[THREADS];

	vkt_init(&t, NULL);
	for (int i = 0; i < THREADS; i++) {
		VkCommandPoolCreateInfo pi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, t.family };
		workers[i] = (struct worker){ &t, i, VK_NULL_HANDLE, { 0 }, NULL };
		assert_int_equal(vkCreateCommandPool(t.device, &pi, NULL, &workers[i].pool), VK_SUCCESS);
	}
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&threads[i], NULL, record, &workers[i]), 0);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(threads[i], NULL);
		if (workers[i].error)
			fail_msg("thread %d: %s", i, workers[i].error);
	}
	/* One submission per thread, in thread order. */
	for (int i = 0; i < THREADS; i++) {
		VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, BUFFERS,
				    workers[i].cbs, 0, NULL };
		assert_int_equal(crumbs_queue_submit(t.crumbs, t.queue, 1, &si, VK_NULL_HANDLE),
				 VK_SUCCESS);
	}
	crumbs_frame(t.crumbs);
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	const struct frame_queue *fq = &f->queues[0];
	assert_int_equal(fq->submissions, THREADS);
	assert_int_equal(fq->scopes, THREADS * BUFFERS * (1 + 2 * SCOPES));
	assert_int_equal(fq->root->inclusive.draws, THREADS * BUFFERS * SCOPES);
	const struct node *n = fq->root->child;
	for (int i = 0; i < THREADS; i++)
		for (int b = 0; b < BUFFERS; b++, n = n->next) {
			char name[64];
			snprintf(name, sizeof(name), "Thread %d Buffer %d", i, b);
			assert_non_null(n);
			assert_int_equal(n->name_len, strlen(name));
			assert_memory_equal(n->name, name, n->name_len);
			assert_int_equal(n->child_count, SCOPES);
			assert_false(n->flags & NODE_UNTIMED);
		}
	assert_int_equal(f->dropped_scopes, 0);
	reader_free(c);
	vkDeviceWaitIdle(t.device);
	for (int i = 0; i < THREADS; i++)
		vkDestroyCommandPool(t.device, workers[i].pool, NULL);
	vkt_destroy(&t);
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/*
 * A run hands each frame to the output thread without a lock: every frame
 * reaches the file, in order, whatever the two threads interleave. No
 * frame waits for the GPU, so the sets come back while the thread still
 * writes some.
 */
static void run_handed_over(void **state)
{
	(void)state;
	struct vkt t;
	VkCommandBuffer cbs[FRAMES_IN_FLIGHT];
	VkFence fences[FRAMES_IN_FLIGHT];

	vkt_init(&t, NULL);
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   t.pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, FRAMES_IN_FLIGHT };
	assert_int_equal(vkAllocateCommandBuffers(t.device, &ai, cbs), VK_SUCCESS);
	for (int i = 0; i < FRAMES_IN_FLIGHT; i++) {
		VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL,
					 VK_FENCE_CREATE_SIGNALED_BIT };
		assert_int_equal(vkCreateFence(t.device, &fi, NULL, &fences[i]), VK_SUCCESS);
	}
	assert_int_equal(crumbs_record(t.crumbs, 1, RUN_FRAMES, 1), CRUMBS_OK);
	for (int n = 0; n <= RUN_FRAMES; n++) {
		int k = n % FRAMES_IN_FLIGHT;
		assert_int_equal(vkWaitForFences(t.device, 1, &fences[k], VK_TRUE, UINT64_MAX),
				 VK_SUCCESS);
		assert_int_equal(vkResetFences(t.device, 1, &fences[k]), VK_SUCCESS);
		VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
						VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
		assert_int_equal(vkBeginCommandBuffer(cbs[k], &bi), VK_SUCCESS);
		crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cbs[k], t.queue);
		crumbs_scope_beginf(h, 0, "Frame %d", n);
		crumbs_scope_begin(h, 1, "Pass");
		vkt_fill(&t, cbs[k], 4096);
		crumbs_scope_end(h);
		crumbs_scope_end(h);
		crumbs_cmd_end(h);
		assert_int_equal(vkEndCommandBuffer(cbs[k]), VK_SUCCESS);
		VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cbs[k],
				    0, NULL };
		assert_int_equal(crumbs_queue_submit(t.crumbs, t.queue, 1, &si, fences[k]),
				 VK_SUCCESS);
		crumbs_frame(t.crumbs);
		/* A program slower than the thread's look for frames (at
		 * most every 20 ms) posts one frame at a time, with no lock
		 * between the two threads: some frames here are. The pause
		 * also stretches the thread's wait, timed by the frames. */
		if (n % 8 == 4)
			nanosleep(&(struct timespec){ 0, 30000000 }, NULL);
	}
	reader *c;
	struct analyze_error err;
	const struct frame *f;
	unsigned frames = 0;
	assert_int_equal(reader_open_file(vkt_finish_capture(&t, NULL), &c, &err), CRUMBS_OK);
	while (reader_next_frame(c, &f, &err) == CRUMBS_OK && f) {
		assert_int_equal(f->number, 1 + frames);
		assert_int_equal(f->queues[0].scopes, 2);
		frames++;
	}
	assert_int_equal(err.code, CRUMBS_OK);
	reader_free(c);
	/* Frames whose set was still being copied are not recorded; on
	 * lavapipe, and under the sanitizer, hardly any. */
	assert_true(frames >= RUN_FRAMES / 2);
	vkDeviceWaitIdle(t.device);
	for (int i = 0; i < FRAMES_IN_FLIGHT; i++)
		vkDestroyFence(t.device, fences[i], NULL);
	vkt_destroy(&t);
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/* vkGetCalibratedTimestampsEXT's calls, on the program's thread and on
 * others, passed on to the driver's. */
static pthread_t program_thread;
static atomic_uint samples_program, samples_other;

static VKAPI_ATTR VkResult VKAPI_CALL counting_sample(VkDevice device, uint32_t count,
						       const VkCalibratedTimestampInfoEXT *infos,
						       uint64_t *timestamps, uint64_t *deviation)
{
	if (pthread_equal(pthread_self(), program_thread))
		atomic_fetch_add(&samples_program, 1);
	else
		atomic_fetch_add(&samples_other, 1);
	PFN_vkGetCalibratedTimestampsEXT f = (PFN_vkGetCalibratedTimestampsEXT)
		vkGetDeviceProcAddr(device, "vkGetCalibratedTimestampsEXT");
	return f(device, count, infos, timestamps, deviation);
}

static PFN_vkVoidFunction count_samples(const char *name)
{
	return strcmp(name, "vkGetCalibratedTimestampsEXT") == 0 ?
	       (PFN_vkVoidFunction)counting_sample : NULL;
}

/*
 * A run's frames 60 ms apart, longer than RUN_CALIBRATE_NS (50 ms), after
 * which a frame would take a sample of its own: the output thread takes
 * them instead, and the program's thread none once the thread looks for
 * frames (from the run's third or so). Every frame is calibrated.
 */
static void run_calibrated_off_thread(void **state)
{
	(void)state;
	struct vkt t;
	program_thread = pthread_self();
	vkt_override = count_samples;
	vkt_init(&t, NULL);
	vkt_override = NULL;
	if (!t.calibrated) {
		vkt_destroy(&t);
		skip();
	}
	enum { FIRST = 1, LAST = 16, COUNTED = 6 };
	unsigned program_before = 0, other_before = 0;
	assert_int_equal(crumbs_record(t.crumbs, FIRST, LAST, 1), CRUMBS_OK);
	for (int n = 0; n <= LAST; n++) {
		VkCommandBuffer cb = vkt_begin(&t);
		crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cb, t.queue);
		crumbs_scope_beginf(h, 0, "Frame %d", n);
		vkt_fill(&t, cb, 4096);
		crumbs_scope_end(h);
		crumbs_cmd_end(h);
		assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
		vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
		assert_int_equal(vkQueueWaitIdle(t.queue), VK_SUCCESS);
		if (n == COUNTED) {
			program_before = atomic_load(&samples_program);
			other_before = atomic_load(&samples_other);
		}
		crumbs_frame(t.crumbs);
		nanosleep(&(struct timespec){ 0, 60000000 }, NULL);
	}
	unsigned program = atomic_load(&samples_program) - program_before;
	unsigned other = atomic_load(&samples_other) - other_before;
	unsigned frames = LAST + 1 - COUNTED;
	/* Taken on the program's thread, each of these frames would read
	 * twice (a sample is two reads, unless the first is delayed). An
	 * output thread held off the cores for 25 ms leaves the program's
	 * thread a sample now and then. */
	if (program >= frames)
		fail_msg("the program's thread read the clocks %u times in %u frames", program,
			 frames);
	if (other < frames)
		fail_msg("the output thread read the clocks %u times in %u frames", other, frames);

	reader *c;
	struct analyze_error err;
	const struct frame *f;
	unsigned recorded = 0;
	assert_int_equal(reader_open_file(vkt_finish_capture(&t, NULL), &c, &err), CRUMBS_OK);
	while (reader_next_frame(c, &f, &err) == CRUMBS_OK && f) {
		assert_int_equal(f->gpus[0].calibrated, true);
		assert_in_range(f->gpus[0].calibration_samples, 1, 2);
		recorded++;
	}
	assert_int_equal(err.code, CRUMBS_OK);
	reader_free(c);
	assert_int_equal(recorded, LAST - FIRST + 1);
	vkt_destroy(&t);
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/* CPU scopes on eight threads at once in a capture frame: each thread's
 * reach the capture under its own name, nested as recorded; one left open
 * by a thread that exits is closed at the frame's end, an end with nothing
 * open is counted, and a scope above the frame's detail is not kept. */
#define CPU_THREADS 8
#define CPU_JOBS 40

struct cpu_worker {
	crumbs_context *ctx;
	int id;
};

static void *cpu_work(void *arg)
{
	struct cpu_worker *w = arg;
	char name[32];
	snprintf(name, sizeof(name), "Worker %d", w->id);
	crumbs_thread_name(w->ctx, name);
	for (int j = 0; j < CPU_JOBS; j++) {
		crumbs_cpu_beginf(w->ctx, 0, "Job %d", j);
		crumbs_cpu_begin(w->ctx, 1, "Step");
		crumbs_cpu_begin(w->ctx, 3, "Detail");
		crumbs_cpu_end(w->ctx);
		crumbs_cpu_end(w->ctx);
		/* Worker 0 leaves its last job open as it exits. */
		if (w->id != 0 || j != CPU_JOBS - 1)
			crumbs_cpu_end(w->ctx);
	}
	return NULL;
}

/* The CPU thread of f named `name`, or NULL. */
static const struct frame_cpu_thread *cpu_thread_named(const struct frame *f, const char *name)
{
	for (uint32_t i = 0; i < f->cpu_thread_count; i++) {
		const struct frame_cpu_thread *t = &f->cpu_threads[i];
		if (t->name_len == strlen(name) && memcmp(t->name, name, t->name_len) == 0)
			return t;
	}
	return NULL;
}

static void cpu_scopes_on_threads(void **state)
{
	(void)state;
	struct vkt t;
	struct cpu_worker workers[CPU_THREADS];
	pthread_t threads[CPU_THREADS];

	vkt_init(&t, NULL);
	/* Outside captures nothing is kept, and nothing is open after. */
	crumbs_cpu_begin(t.crumbs, 0, "Not captured");
	crumbs_cpu_end(t.crumbs);
	crumbs_thread_name(t.crumbs, "Main Thread");
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	crumbs_cpu_begin(t.crumbs, 0, "Frame");
	/* 20 ms, which must lie where CLOCK_MONOTONIC says it does: the
	 * capture's time line is that clock's. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t sleep_from = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	crumbs_cpu_begin(t.crumbs, 1, "Sleep");
	nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	crumbs_cpu_end(t.crumbs);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t sleep_to = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	for (int i = 0; i < CPU_THREADS; i++) {
		workers[i] = (struct cpu_worker){ t.crumbs, i };
		assert_int_equal(pthread_create(&threads[i], NULL, cpu_work, &workers[i]), 0);
	}
	for (int i = 0; i < CPU_THREADS; i++)
		pthread_join(threads[i], NULL);
	VkCommandBuffer cb = vkt_begin(&t);
	vkt_fill(&t, cb, 4096);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	crumbs_cpu_end(t.crumbs);
	crumbs_cpu_end(t.crumbs); /* nothing open: counted as unmatched */
	crumbs_frame(t.crumbs);

	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	assert_int_equal(f->cpu_thread_count, 1 + CPU_THREADS);
	const struct frame_cpu_thread *main_thread = cpu_thread_named(f, "Main Thread");
	assert_non_null(main_thread);
	assert_int_equal(main_thread->scopes, 2);
	assert_int_equal(main_thread->unmatched_ends, 1);
	const struct node *frame = main_thread->root->child;
	assert_non_null(frame);
	assert_int_equal(frame->name_len, 5);
	assert_memory_equal(frame->name, "Frame", 5);
	assert_true(frame->begin_ns >= f->cpu_begin_ns && frame->end_ns <= f->cpu_end_ns);
	const struct node *sleep = frame->child;
	assert_non_null(sleep);
	assert_int_equal(sleep->name_len, 5);
	assert_memory_equal(sleep->name, "Sleep", 5);
	/* A microsecond either way for the readings that map the clocks. */
	if (sleep->begin_ns < sleep_from - 1000 || sleep->end_ns > sleep_to + 1000 ||
	    sleep->inclusive_ns < 20000000 - 1000)
		fail_msg("a 20 ms sleep between %lld and %lld ns lies from %lld to %lld ns",
			 (long long)sleep_from, (long long)sleep_to, (long long)sleep->begin_ns,
			 (long long)sleep->end_ns);
	for (int i = 0; i < CPU_THREADS; i++) {
		char name[32];
		snprintf(name, sizeof(name), "Worker %d", i);
		const struct frame_cpu_thread *w = cpu_thread_named(f, name);
		assert_non_null(w);
		assert_int_not_equal(w->tid, main_thread->tid);
		assert_int_equal(w->scopes, 3 * CPU_JOBS);
		assert_int_equal(w->open_scopes, i == 0 ? 1 : 0);
		assert_int_equal(w->unmatched_ends, 0);
		const struct node *job = w->root->child;
		assert_true(job->begin_ns >= sleep->end_ns && job->begin_ns <= frame->end_ns);
		for (int j = 0; j < CPU_JOBS; j++, job = job->next) {
			snprintf(name, sizeof(name), "Job %d", j);
			assert_non_null(job);
			assert_int_equal(job->name_len, strlen(name));
			assert_memory_equal(job->name, name, job->name_len);
			assert_int_equal(job->child_count, 1);
			assert_int_equal(job->child->child_count, 1);
			assert_int_equal((job->flags & NODE_OPEN) != 0, i == 0 && j == CPU_JOBS - 1);
		}
		assert_null(job);
	}
	assert_int_equal(f->dropped_scopes, 0);
	reader_free(c);
	vkt_destroy(&t);
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/* A run at detail 1 keeps the CPU scopes of levels 0 and 1, in each of
 * its frames, and not those of the frames around it. */
static void cpu_scopes_in_a_run(void **state)
{
	(void)state;
	struct vkt t;
	enum { FIRST = 2, LAST = 9 };

	vkt_init(&t, NULL);
	assert_int_equal(crumbs_record(t.crumbs, FIRST, LAST, 1), CRUMBS_OK);
	for (int n = 0; n <= LAST + 2; n++) {
		crumbs_cpu_beginf(t.crumbs, 0, "Frame %d", n);
		crumbs_cpu_begin(t.crumbs, 1, "Record");
		crumbs_cpu_begin(t.crumbs, 2, "Too fine");
		VkCommandBuffer cb = vkt_begin(&t);
		vkt_fill(&t, cb, 4096);
		assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
		crumbs_cpu_end(t.crumbs);
		crumbs_cpu_end(t.crumbs);
		vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
		assert_int_equal(vkQueueWaitIdle(t.queue), VK_SUCCESS);
		crumbs_cpu_end(t.crumbs);
		crumbs_frame(t.crumbs);
	}
	reader *c;
	struct analyze_error err;
	const struct frame *f;
	unsigned frames = 0;
	assert_int_equal(reader_open_file(vkt_finish_capture(&t, NULL), &c, &err), CRUMBS_OK);
	while (reader_next_frame(c, &f, &err) == CRUMBS_OK && f) {
		char name[32];
		snprintf(name, sizeof(name), "Frame %llu", (unsigned long long)f->number);
		assert_int_equal(f->cpu_thread_count, 1);
		const struct frame_cpu_thread *th = &f->cpu_threads[0];
		assert_int_equal(th->scopes, 2);
		assert_int_equal(th->open_scopes + th->unmatched_ends, 0);
		const struct node *n = th->root->child;
		assert_non_null(n);
		assert_int_equal(n->name_len, strlen(name));
		assert_memory_equal(n->name, name, n->name_len);
		assert_int_equal(n->child_count, 1);
		assert_int_equal(n->child->child_count, 0);
		frames++;
	}
	assert_int_equal(err.code, CRUMBS_OK);
	reader_free(c);
	assert_int_equal(frames, LAST - FIRST + 1);
	vkt_destroy(&t);
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

static void *end_elsewhere(void *arg)
{
	crumbs_cpu_end(arg);
	return NULL;
}

static void *record_once(void *arg)
{
	crumbs_cpu_begin(arg, 0, "Other context");
	crumbs_cpu_end(arg);
	return NULL;
}

/*
 * What a program may get wrong, none of it fatal: NULL contexts and names,
 * a scope ended on another thread than its own (an end with nothing open
 * there, and a scope left open here), a name longer than kept, a level
 * past the finest, a child forked mid-frame that records and exits, and a
 * thread that recorded for a context destroyed since, recording for the
 * next one (which may have the same address).
 */
static void cpu_misuse(void **state)
{
	(void)state;
	struct vkt t;
	char long_name[2000];
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';

	crumbs_cpu_begin(NULL, 0, "nothing");
	crumbs_cpu_end(NULL);
	crumbs_thread_name(NULL, "nothing");
	vkt_init(&t, NULL);
	crumbs_thread_name(t.crumbs, NULL);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	crumbs_cpu_begin(t.crumbs, 0, "Ended elsewhere");
	pthread_t other;
	assert_int_equal(pthread_create(&other, NULL, end_elsewhere, t.crumbs), 0);
	pthread_join(other, NULL);
	crumbs_cpu_begin(t.crumbs, 99, NULL);
	crumbs_cpu_end(t.crumbs);
	crumbs_cpu_begin(t.crumbs, 0, long_name);
	crumbs_cpu_end(t.crumbs);
	pid_t child = fork();
	if (child == 0) {
		crumbs_cpu_begin(t.crumbs, 0, "In the child");
		crumbs_cpu_end(t.crumbs);
		_exit(0);
	}
	assert_true(child > 0);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	VkCommandBuffer cb = vkt_begin(&t);
	vkt_fill(&t, cb, 4096);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	crumbs_frame(t.crumbs);

	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	assert_int_equal(f->cpu_thread_count, 2);
	const struct frame_cpu_thread *mine = &f->cpu_threads[0], *theirs = &f->cpu_threads[1];
	if (theirs->scopes)
		mine = &f->cpu_threads[1], theirs = &f->cpu_threads[0];
	assert_int_equal(mine->scopes, 3);
	assert_int_equal(mine->open_scopes, 1);
	assert_int_equal(theirs->scopes, 0);
	assert_int_equal(theirs->unmatched_ends, 1);
	const struct node *n = mine->root->child;
	assert_true(n->flags & NODE_OPEN);
	assert_int_equal(n->child_count, 2);
	assert_int_equal(n->child->name_len, 0);
	assert_int_equal(n->child->level, CRUMBS_DETAIL_MAX);
	assert_in_range(n->child->next->name_len, 100, sizeof(long_name) - 1);
	reader_free(c);

	/* Another context after this one: the thread's buffers for the first
	 * are never taken for the second. */
	crumbs_thread_name(t.crumbs, "Before");
	vkt_destroy(&t);
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	crumbs_cpu_begin(t.crumbs, 0, "Second context");
	crumbs_cpu_end(t.crumbs);
	assert_int_equal(pthread_create(&other, NULL, record_once, t.crumbs), 0);
	pthread_join(other, NULL);
	cb = vkt_begin(&t);
	vkt_fill(&t, cb, 4096);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	crumbs_frame(t.crumbs);
	f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	assert_int_equal(f->cpu_thread_count, 2);
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(f->cpu_threads[i].scopes, 1);
		assert_false(f->cpu_threads[i].name_len == 6 &&
			     memcmp(f->cpu_threads[i].name, "Before", 6) == 0);
	}
	reader_free(c);
	vkt_destroy(&t);
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
	/* The validation layer's own threads (one per queue, retiring
	 * submissions) race with its teardown of the device: ThreadSanitizer
	 * reports it now and then, in the layer's code alone. This build looks
	 * for races in crumbs; vk_test_threads runs these tests again under
	 * the validation layer. */
	vkt_validation = false;
#endif
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parallel_recording),
		cmocka_unit_test(run_handed_over),
		cmocka_unit_test(run_calibrated_off_thread),
		cmocka_unit_test(cpu_scopes_on_threads),
		cmocka_unit_test(cpu_scopes_in_a_run),
		cmocka_unit_test(cpu_misuse),
	};
	return cmocka_run_group_tests_name("recording on threads", tests, NULL, NULL);
}
