/* SPDX-License-Identifier: MIT */
/*
 * test_capture.c: libcrumbs on a real Vulkan device (lavapipe in CI),
 * under the validation layer: timing accuracy against the test's own
 * timestamps, idle and wait measured against known sleeps, scopes across
 * command buffers, submissions and secondaries, running out of query
 * slots, a lost device, calibration without the extension, labels, and
 * each way of asking for a capture.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vkt.h"

#define MS 1000000.0

static void check_no_validation_messages(void)
{
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/* Records a command buffer with one scope around a fill, submits it. */
static void scoped_fill(struct vkt *t, const char *name, VkDeviceSize bytes)
{
	VkCommandBuffer cb = vkt_begin(t);
	crumbs_cmd *h = crumbs_cmd_begin(t->crumbs, cb, t->queue);
	crumbs_scope_begin(h, 0, name);
	vkt_fill(t, cb, bytes);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	vkt_submit(t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
}

/*
 * The test writes its own timestamps around the same work in the same
 * command buffer; crumbs' inclusive time must agree within 1% plus 5 us.
 */
static void accuracy(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	VkQueryPool own;
	VkQueryPoolCreateInfo qi = { VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, NULL, 0,
				     VK_QUERY_TYPE_TIMESTAMP, 2, 0 };
	assert_int_equal(vkCreateQueryPool(t.device, &qi, NULL, &own), VK_SUCCESS);
	vkResetQueryPool(t.device, own, 0, 2);

	assert_int_equal(crumbs_detail(t.crumbs), -1);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	assert_int_equal(crumbs_detail(t.crumbs), CRUMBS_DETAIL_MAX);

	VkCommandBuffer cb = vkt_begin(&t);
	crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cb, t.queue);
	vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, own, 0);
	crumbs_scope_begin(h, 0, "Work");
	for (int i = 0; i < 4; i++)
		vkt_fill(&t, cb, t.buffer_size);
	crumbs_scope_end(h);
	vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, own, 1);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	crumbs_frame(t.crumbs);
	const char *path = vkt_finish_capture(&t, NULL);

	uint64_t ts[2];
	assert_int_equal(vkGetQueryPoolResults(t.device, own, 0, 2, sizeof(ts), ts, sizeof(ts[0]),
					       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
			 VK_SUCCESS);
	double reference = (double)(ts[1] - ts[0]) * t.period;
	reader *c;
	const struct frame *f = vkt_read(path, &c);
	const struct node *work = vkt_find(f->queues[0].root, "Work");
	assert_non_null(work);
	double measured = (double)work->inclusive_ns;
	fprintf(stderr, "# accuracy: own timestamps %.1f us, crumbs %.1f us\n", reference / 1e3,
		measured / 1e3);
	assert_true(reference > 100e3); /* the work is long enough to mean something */
	if (!(measured >= reference - (reference * 0.01 + 5000) &&
	      measured <= reference + (reference * 0.01 + 5000)))
		fail_msg("crumbs says %.0f ns, the test's own timestamps %.0f ns", measured, reference);
	assert_true(f->flags & CRUMBS_FRAME_FULL_DETAIL);
	assert_int_equal(f->gpus[0].calibrated, true);
	reader_free(c);
	vkDestroyQueryPool(t.device, own, NULL);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/*
 * A CPU sleep of 5 ms between two submissions is about 5 ms of idle: at
 * least the sleep, as the queue is idle all through it, and at most the
 * time from the first submission to the second, which the sleep is most
 * of on a quiet machine (a loaded one stretches both ends, and the test
 * with them).
 */
static void idle_from_sleep(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	double span = vkt_now_ms();
	scoped_fill(&t, "Before", 1 << 20);
	/* The queue is idle from here: the sleep is all the idle there is,
	 * however long the machine lets it be. */
	assert_int_equal(vkQueueWaitIdle(t.queue), VK_SUCCESS);
	double slept = vkt_now_ms();
	vkt_sleep_ms(5);
	slept = vkt_now_ms() - slept;
	scoped_fill(&t, "After", 1 << 20);
	span = vkt_now_ms() - span;
	crumbs_frame(t.crumbs);
	reader *c;
	const char *path = vkt_finish_capture(&t, NULL);
	const struct frame *f = vkt_read(path, &c);
	double idle = (double)f->queues[0].idle_ns / MS;
	if (getenv("CRUMBS_TEST_KEEP")) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "cp '%s' /tmp/idle.crumbs", path);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot keep the capture\n");
	}
	fprintf(stderr, "# idle around a sleep of %.3f ms, submissions %.3f ms apart: %.3f ms\n",
		slept, span, idle);
	assert_true(slept >= 5.0);
	if (!(idle >= slept - 0.1 && idle <= span + 0.1))
		fail_msg("idle %.3f ms, outside the sleep's %.3f ms to the %.3f ms of the "
			 "submissions", idle, slept, span);
	assert_int_equal(f->queues[0].submissions, 2);
	reader_free(c);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/* A submission waiting on a timeline value the host signals 5 ms later
 * waits about 5 ms. */
static void wait_for_host(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	VkSemaphoreTypeCreateInfo ti = { VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, NULL,
					 VK_SEMAPHORE_TYPE_TIMELINE, 0 };
	VkSemaphoreCreateInfo si = { VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti, 0 };
	VkSemaphore sem;
	assert_int_equal(vkCreateSemaphore(t.device, &si, NULL, &sem), VK_SUCCESS);

	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	VkCommandBuffer cb = vkt_begin(&t);
	crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cb, t.queue);
	crumbs_scope_begin(h, 0, "Waiting Work");
	vkt_fill(&t, cb, 1 << 20);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	double waited = vkt_now_ms();
	vkt_submit(&t, cb, sem, 1, VK_NULL_HANDLE, 0);
	vkt_sleep_ms(5);
	VkSemaphoreSignalInfo sig = { VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, NULL, sem, 1 };
	waited = vkt_now_ms() - waited;
	assert_int_equal(crumbs_signal_semaphore(t.crumbs, t.device, &sig), VK_SUCCESS);
	crumbs_frame(t.crumbs);
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	double wait = (double)f->queues[0].wait_ns / MS;
	fprintf(stderr, "# wait on a timeline value signalled %.3f ms later: %.3f ms\n", waited, wait);
	assert_true(waited >= 5.0);
	/* From the submit to the signal, both taken inside the interval. */
	assert_true(wait > waited - 1.0 && wait <= waited + 0.1);
	reader_free(c);
	vkDestroySemaphore(t.device, sem, NULL);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/* A submission waiting on 65 timeline semaphores, which the host signals
 * 5 ms later: it is in the capture with its scope, and its waits count. */
static void many_waits(void **state)
{
	(void)state;
	enum { WAITS = 65 };
	struct vkt t;
	vkt_init(&t, NULL);
	VkSemaphoreTypeCreateInfo ti = { VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, NULL,
					 VK_SEMAPHORE_TYPE_TIMELINE, 0 };
	VkSemaphoreCreateInfo si = { VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti, 0 };
	VkSemaphore sems[WAITS];
	uint64_t values[WAITS];
	VkPipelineStageFlags stages[WAITS];
	for (int i = 0; i < WAITS; i++) {
		assert_int_equal(vkCreateSemaphore(t.device, &si, NULL, &sems[i]), VK_SUCCESS);
		values[i] = 1;
		stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	}

	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	VkCommandBuffer cb = vkt_begin(&t);
	crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cb, t.queue);
	crumbs_scope_begin(h, 0, "Many Waits");
	vkt_fill(&t, cb, 1 << 20);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	VkTimelineSemaphoreSubmitInfo tsi = { VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
					      NULL, WAITS, values, 0, NULL };
	VkSubmitInfo submit = { VK_STRUCTURE_TYPE_SUBMIT_INFO, &tsi, WAITS, sems, stages, 1, &cb,
				0, NULL };
	assert_int_equal(crumbs_queue_submit(t.crumbs, t.queue, 1, &submit, VK_NULL_HANDLE),
			 VK_SUCCESS);
	vkt_sleep_ms(5);
	for (int i = 0; i < WAITS; i++) {
		VkSemaphoreSignalInfo sig = { VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, NULL, sems[i],
					      1 };
		assert_int_equal(crumbs_signal_semaphore(t.crumbs, t.device, &sig), VK_SUCCESS);
	}
	crumbs_frame(t.crumbs);
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	assert_int_equal(f->queues[0].submissions, 1);
	assert_non_null(vkt_find(f->queues[0].root, "Many Waits"));
	assert_int_equal(f->dropped_scopes, 0);
	assert_true((double)f->queues[0].wait_ns / MS > 4.0);
	reader_free(c);
	for (int i = 0; i < WAITS; i++)
		vkDestroySemaphore(t.device, sems[i], NULL);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/* A scope that begins in one command buffer and ends in a later
 * submission; a secondary's scopes placed where it is executed. */
static void across_command_buffers(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);

	VkCommandBuffer cb1 = vkt_begin(&t);
	crumbs_cmd *h1 = crumbs_cmd_begin(t.crumbs, cb1, t.queue);
	crumbs_scope_begin(h1, 0, "Outer");
	crumbs_scope_begin(h1, 1, "A");
	vkt_fill(&t, cb1, 1 << 20);
	crumbs_scope_end(h1);
	crumbs_cmd_end(h1);
	assert_int_equal(vkEndCommandBuffer(cb1), VK_SUCCESS);
	vkt_submit(&t, cb1, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);

	VkCommandBuffer sec;
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   t.pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 1 };
	assert_int_equal(vkAllocateCommandBuffers(t.device, &ai, &sec), VK_SUCCESS);
	VkCommandBufferInheritanceInfo inherit = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO };
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, &inherit };
	assert_int_equal(vkBeginCommandBuffer(sec, &bi), VK_SUCCESS);
	crumbs_cmd *hs = crumbs_cmd_begin(t.crumbs, sec, t.queue);
	crumbs_scope_begin(hs, 2, "In Secondary");
	vkt_fill(&t, sec, 1 << 20);
	crumbs_scope_end(hs);
	crumbs_cmd_end(hs);
	assert_int_equal(vkEndCommandBuffer(sec), VK_SUCCESS);

	VkCommandBuffer cb2 = vkt_begin(&t);
	crumbs_cmd *h2 = crumbs_cmd_begin(t.crumbs, cb2, t.queue);
	crumbs_scope_begin(h2, 1, "B");
	vkCmdExecuteCommands(cb2, 1, &sec);
	crumbs_cmd_execute(h2, 1, &sec);
	crumbs_scope_end(h2);
	crumbs_scope_end(h2); /* ends "Outer", begun on cb1 */
	crumbs_cmd_end(h2);
	assert_int_equal(vkEndCommandBuffer(cb2), VK_SUCCESS);
	/* The first submission has finished before the sleep (a slow run,
	 * under the sanitizers, may still be on it), so the gap is idle. */
	assert_int_equal(vkQueueWaitIdle(t.queue), VK_SUCCESS);
	vkt_sleep_ms(2);
	vkt_submit(&t, cb2, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	crumbs_frame(t.crumbs);

	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	const struct frame_queue *fq = &f->queues[0];
	const struct node *outer = vkt_find(fq->root, "Outer");
	assert_non_null(outer);
	assert_ptr_equal(vkt_find(outer, "A")->parent, outer);
	const struct node *b = vkt_find(outer, "B");
	assert_non_null(b);
	assert_ptr_equal(b->parent, outer);
	assert_ptr_equal(vkt_find(outer, "In Secondary")->parent, b);
	assert_false(outer->flags & NODE_OPEN);
	assert_int_equal(fq->unmatched_ends, 0);
	assert_int_equal(fq->submissions, 2);
	/* The 2 ms between the submissions are idle, not in "Outer". */
	assert_true(fq->idle_ns > 1000000);
	assert_true(outer->inclusive_ns < fq->busy_ns);
	assert_true(outer->inclusive_ns >= vkt_find(outer, "A")->inclusive_ns +
					   b->inclusive_ns);
	reader_free(c);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/* With 64 scopes' worth of slots and 300 scopes three deep, the deepest
 * lose their timestamps first; nothing is lost from the tree. */
static void out_of_query_slots(void **state)
{
	(void)state;
	struct vkt t;
	struct crumbs_desc d = { 0 };
	d.max_scopes = 64;
	vkt_init(&t, &d);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	VkCommandBuffer cb = vkt_begin(&t);
	crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cb, t.queue);
	for (int i = 0; i < 100; i++) {
		crumbs_scope_beginf(h, 0, "Top %d", i);
		crumbs_scope_begin(h, 1, "Mid");
		crumbs_scope_begin(h, 2, "Deep");
		vkt_fill(&t, cb, 4096);
		crumbs_scope_end(h);
		crumbs_scope_end(h);
		crumbs_scope_end(h);
	}
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	crumbs_frame(t.crumbs);
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	unsigned timed[3] = { 0, 0, 0 }, total = 0;
	for (const struct node *top = f->queues[0].root->child; top; top = top->next) {
		const struct node *levels[3] = { top, top->child, top->child ? top->child->child : NULL };
		for (int k = 0; k < 3; k++) {
			assert_non_null(levels[k]);
			total++;
			timed[k] += !(levels[k]->flags & NODE_UNTIMED);
		}
	}
	fprintf(stderr, "# timed scopes by depth: %u %u %u of 100 each\n", timed[0], timed[1], timed[2]);
	assert_int_equal(total, 300);
	assert_true(timed[0] > timed[1] && timed[1] > timed[2] && timed[2] > 0);
	assert_true(timed[0] + timed[1] + timed[2] <= 64);
	assert_true(f->flags & CRUMBS_FRAME_SCOPES_DROPPED);
	assert_int_equal(f->dropped_scopes, 300 - (timed[0] + timed[1] + timed[2]));
	reader_free(c);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/*
 * Captures one after another in one context, each with a different number
 * of scopes and submissions: each resets only the query slots the one
 * before wrote, and every scope of each is timed (the validation layer
 * reports any slot written without a reset). Each also submits a command
 * buffer the one before recorded with scopes, recorded again since
 * without: it must bring none of the old scopes along.
 */
static void captures_in_a_row(void **state)
{
	(void)state;
	static const int scopes[] = { 3, 40, 2, 25 }, submissions[] = { 1, 3, 1, 2 };
	struct vkt t;
	char previous[4096] = "";
	VkCommandBuffer reused = VK_NULL_HANDLE;
	vkt_init(&t, NULL);
	for (int k = 0; k < 4; k++) {
		if (reused) {
			VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
							NULL, 0, NULL };
			assert_int_equal(vkQueueWaitIdle(t.queue), VK_SUCCESS);
			assert_int_equal(vkBeginCommandBuffer(reused, &bi), VK_SUCCESS);
			vkt_fill(&t, reused, 4096);
			assert_int_equal(vkEndCommandBuffer(reused), VK_SUCCESS);
		}
		assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
		crumbs_frame(t.crumbs);
		if (reused)
			vkt_submit(&t, reused, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
		for (int s = 0; s < submissions[k]; s++) {
			VkCommandBuffer cb = vkt_begin(&t);
			if (s == 0)
				reused = cb;
			crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cb, t.queue);
			for (int i = s; i < scopes[k]; i += submissions[k]) {
				crumbs_scope_beginf(h, 0, "Capture %d pass %d", k, i);
				vkt_fill(&t, cb, 4096);
				crumbs_scope_end(h);
			}
			crumbs_cmd_end(h);
			assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
			vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
		}
		crumbs_frame(t.crumbs);
		const char *path = vkt_finish_capture(&t, previous[0] ? previous : NULL);
		snprintf(previous, sizeof(previous), "%s", path);
		reader *c;
		const struct frame *f = vkt_read(path, &c);
		int found = 0;
		for (const struct node *n = f->queues[0].root->child; n; n = n->next) {
			char want[64];
			snprintf(want, sizeof(want), "Capture %d pass ", k);
			assert_true(n->name_len > strlen(want));
			assert_memory_equal(n->name, want, strlen(want));
			assert_false(n->flags & NODE_UNTIMED);
			assert_true(n->inclusive_ns > 0);
			found++;
		}
		assert_int_equal(found, scopes[k]);
		assert_int_equal(f->queues[0].submissions, (unsigned)submissions[k] + (k > 0));
		assert_false(f->flags & CRUMBS_FRAME_SCOPES_DROPPED);
		reader_free(c);
	}
	vkt_destroy(&t);
	check_no_validation_messages();
}

static VKAPI_ATTR VkResult VKAPI_CALL lost_results(VkDevice device, VkQueryPool pool, uint32_t first,
						   uint32_t count, size_t size, void *data,
						   VkDeviceSize stride, VkQueryResultFlags flags)
{
	(void)device, (void)pool, (void)first, (void)count, (void)size, (void)data, (void)stride,
		(void)flags;
	return VK_ERROR_DEVICE_LOST;
}

static VKAPI_ATTR VkResult VKAPI_CALL lost_fence(VkDevice device, VkFence fence)
{
	(void)device, (void)fence;
	return VK_ERROR_DEVICE_LOST;
}

/* Every way crumbs learns about its results says the device is lost. */
static PFN_vkVoidFunction lose_device(const char *name)
{
	if (strcmp(name, "vkGetQueryPoolResults") == 0)
		return (PFN_vkVoidFunction)lost_results;
	if (strcmp(name, "vkGetFenceStatus") == 0)
		return (PFN_vkVoidFunction)lost_fence;
	return NULL;
}

/* The device is lost while the capture waits for its results: what is
 * known is written, the frame says so, and the program goes on. */
static void device_lost(void **state)
{
	(void)state;
	struct vkt t;
	vkt_override = lose_device;
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_capture(t.crumbs, "--ascii"), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	scoped_fill(&t, "Doomed", 1 << 20);
	crumbs_frame(t.crumbs);
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	assert_true(f->flags & CRUMBS_FRAME_DEVICE_LOST);
	assert_non_null(vkt_find(f->queues[0].root, "Doomed"));
	reader_free(c);
	/* The program goes on, and can ask again. A device really lost
	 * runs nothing; this one is not, and its work (crumbs' copy among
	 * it) is let finish first: a capture asked while that copy runs
	 * would reset the query slots it reads. */
	assert_int_equal(vkDeviceWaitIdle(t.device), VK_SUCCESS);
	crumbs_frame(t.crumbs);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	vkt_destroy(&t);
	vkt_override = NULL;
	check_no_validation_messages();
}

/* Without calibrated timestamps, a bracketed sample from creation. */
static void bracketed_calibration(void **state)
{
	(void)state;
	struct vkt t;
	struct crumbs_desc d = { 0 };
	d.calibration = CRUMBS_CALIBRATION_BRACKETED;
	vkt_init(&t, &d);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	scoped_fill(&t, "Work", 8 << 20);
	/* Done before the frame ends: else, on a loaded machine (the
	 * sanitizers' run in CI), the work could end on the GPU any time
	 * after the frame's end on the CPU. */
	assert_int_equal(vkQueueWaitIdle(t.queue), VK_SUCCESS);
	crumbs_frame(t.crumbs);
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	assert_true(f->gpus[0].calibrated);
	assert_int_equal(f->gpus[0].calibration_samples, 1);
	/* The work lies inside the frame on the CPU clock, to within the
	 * bracket's width. */
	const struct node *work = vkt_find(f->queues[0].root, "Work");
	assert_true(work->begin_ns > f->cpu_begin_ns - 5000000);
	assert_true(work->end_ns < f->cpu_end_ns + 50000000);
	reader_free(c);
	vkt_destroy(&t);
	check_no_validation_messages();
}

static unsigned labels_begun;
static PFN_vkCmdBeginDebugUtilsLabelEXT real_begin_label;

static VKAPI_ATTR void VKAPI_CALL counting_begin_label(VkCommandBuffer cb,
							const VkDebugUtilsLabelEXT *label)
{
	labels_begun++;
	real_begin_label(cb, label);
}

static PFN_vkVoidFunction count_labels(const char *name)
{
	return strcmp(name, "vkCmdBeginDebugUtilsLabelEXT") == 0 ?
	       (PFN_vkVoidFunction)counting_begin_label : NULL;
}

/* mirror_labels 2: outside captures, scopes of levels 0 and 1 become
 * labels; during a capture every recorded scope does. */
static void labels(void **state)
{
	(void)state;
	struct vkt t;
	struct crumbs_desc d = { 0 };
	d.mirror_labels = 2;
	vkt_override = count_labels;
	vkt_init(&t, &d);
	real_begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetInstanceProcAddr(
		t.instance, "vkCmdBeginDebugUtilsLabelEXT");
	assert_int_equal(crumbs_detail(t.crumbs), 1);

	for (int frame = 0; frame < 2; frame++) {
		VkCommandBuffer cb = vkt_begin(&t);
		crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cb, t.queue);
		crumbs_scope_begin(h, 0, "Coarse");
		crumbs_scope_begin(h, 1, "Medium");
		crumbs_scope_begin(h, 3, "Fine");
		crumbs_scope_begin(h, 1, "Medium inside Fine");
		vkt_fill(&t, cb, 4096);
		crumbs_scope_end(h);
		crumbs_scope_end(h);
		crumbs_scope_end(h);
		crumbs_scope_end(h);
		crumbs_cmd_end(h);
		assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
		vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
		if (frame == 0) {
			/* Outside: Coarse and Medium; Fine is above the level,
			 * and what is inside it goes with it. */
			assert_int_equal(labels_begun, 2);
			assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
		} else {
			assert_int_equal(labels_begun, 2 + 4);
		}
		crumbs_frame(t.crumbs);
	}
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	assert_non_null(vkt_find(f->queues[0].root, "Medium inside Fine"));
	reader_free(c);
	vkt_destroy(&t);
	vkt_override = NULL;
	check_no_validation_messages();
}

/* The console command, a request while one is under way, bad settings,
 * and scopes outside the capture frame left out of it. */
static void commands(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	scoped_fill(&t, "Before the capture", 4096);
	assert_int_equal(crumbs_command(t.crumbs, "help"), CRUMBS_OK);
	assert_int_equal(crumbs_command(t.crumbs, "frobnicate"), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_command(t.crumbs, "profilegpu --threshold 200"),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_command(t.crumbs, "profilegpu --root '[z-a]'"),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_command(t.crumbs, "profilegpu --root 'Bloom *' --ascii"), CRUMBS_OK);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_ERROR_BAD_STATE);
	crumbs_frame(t.crumbs);
	VkCommandBuffer cb = vkt_begin(&t);
	crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cb, t.queue);
	crumbs_scope_beginf(h, 3, "Bloom %s %d", "Down", 3);
	vkt_fill(&t, cb, 4096);
	crumbs_dispatches(h, 1);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	crumbs_frame(t.crumbs);
	scoped_fill(&t, "After the capture", 4096);
	reader *c;
	const char *path = vkt_finish_capture(&t, NULL);
	assert_non_null(strstr(path, "/test-frame-1.crumbs"));
	const struct frame *f = vkt_read(path, &c);
	assert_int_equal(f->number, 1);
	const struct node *bloom = vkt_find(f->queues[0].root, "Bloom Down 3");
	assert_non_null(bloom);
	assert_int_equal(bloom->inclusive.dispatches, 1);
	assert_null(vkt_find(f->queues[0].root, "Before the capture"));
	assert_null(vkt_find(f->queues[0].root, "After the capture"));
	reader_free(c);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/* CRUMBS_CAPTURE_FRAME=3: the fourth frame is captured. */
static void capture_frame_from_environment(void **state)
{
	(void)state;
	struct vkt t;
	setenv("CRUMBS_CAPTURE_FRAME", "3", 1);
	vkt_init(&t, NULL);
	unsetenv("CRUMBS_CAPTURE_FRAME");
	for (int frame = 0; frame < 5; frame++) {
		char name[32];
		snprintf(name, sizeof(name), "Frame %d", frame);
		scoped_fill(&t, name, 4096);
		crumbs_frame(t.crumbs);
	}
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	assert_int_equal(f->number, 3);
	assert_non_null(vkt_find(f->queues[0].root, "Frame 3"));
	assert_null(vkt_find(f->queues[0].root, "Frame 2"));
	/* The pre-roll (frame 2) told when the queue was last busy. */
	assert_false(f->queues[0].flags & FRAME_QUEUE_NO_READY);
	reader_free(c);
	vkt_destroy(&t);
	check_no_validation_messages();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accuracy),
		cmocka_unit_test(idle_from_sleep),
		cmocka_unit_test(wait_for_host),
		cmocka_unit_test(many_waits),
		cmocka_unit_test(across_command_buffers),
		cmocka_unit_test(out_of_query_slots),
		cmocka_unit_test(captures_in_a_row),
		cmocka_unit_test(device_lost),
		cmocka_unit_test(bracketed_calibration),
		cmocka_unit_test(labels),
		cmocka_unit_test(commands),
		cmocka_unit_test(capture_frame_from_environment),
	};
	return cmocka_run_group_tests_name("capture on Vulkan", tests, NULL, NULL);
}
