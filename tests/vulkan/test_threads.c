/* SPDX-License-Identifier: MIT */
/*
 * test_threads.c: command buffers recorded with scopes on several threads
 * at once during a capture frame, as engines record passes in parallel.
 * Built and run under ThreadSanitizer by `make test`; every scope must
 * reach the capture, under its own command buffer's submission. And a
 * run's frames, handed to the output thread, which also keeps the run's
 * calibration samples fresh.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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
	};
	return cmocka_run_group_tests_name("recording on threads", tests, NULL, NULL);
}
