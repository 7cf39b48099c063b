/*
 * test_threads.c: command buffers recorded with scopes on several threads
 * at once during a capture frame, as engines record passes in parallel.
 * Built and run under ThreadSanitizer by `make test`; every scope must
 * reach the capture, under its own command buffer's submission. And a
 * run's frames, handed to the output thread.
 */
#include <pthread.h>
#include <setjmp.h>
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
	};
	return cmocka_run_group_tests_name("recording on threads", tests, NULL, NULL);
}
