/* SPDX-License-Identifier: MIT */
/*
 * test_queues.c: a queue family with two queues, where command buffers
 * are recorded for one queue and submitted on the other, as the layer
 * does (it times a family's command buffers in its first queue's pool) and
 * as a program may. lavapipe has one queue per family, so the second queue
 * is a handle of the test's own, whose submissions the test's vkQueueSubmit
 * runs on the one real queue.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vkt.h"

/* Well under the 10 s after which crumbs gives up on results and writes
 * the capture incomplete, and well over what resolving a capture takes,
 * even under the sanitizers. */
#define PROMPT_MS 5000.0

static VkQueue real_queue;
static char second_queue_object;
static int buffers_left = -1; /* crumbs' vkCreateBuffer calls that succeed; -1: all */

/* Queue 1 of the family, as crumbs is told: not a queue the driver knows. */
static VkQueue second_queue(void)
{
	return (VkQueue)(void *)&second_queue_object;
}

static VkQueue real_of(VkQueue queue)
{
	return queue == second_queue() ? real_queue : queue;
}

static VKAPI_ATTR VkResult VKAPI_CALL two_submit(VkQueue queue, uint32_t count,
						 const VkSubmitInfo *submits, VkFence fence)
{
	return vkQueueSubmit(real_of(queue), count, submits, fence);
}

/* Without a buffer to copy a queue's results into, crumbs reads them
 * with vkGetQueryPoolResults. crumbs makes one per queue, in order. */
static VKAPI_ATTR VkResult VKAPI_CALL few_buffers(VkDevice device, const VkBufferCreateInfo *info,
						  const VkAllocationCallbacks *alloc, VkBuffer *buffer)
{
	if (buffers_left == 0)
		return VK_ERROR_OUT_OF_DEVICE_MEMORY;
	if (buffers_left > 0)
		buffers_left--;
	return vkCreateBuffer(device, info, alloc, buffer);
}

static PFN_vkVoidFunction two_queues(const char *name)
{
	if (strcmp(name, "vkQueueSubmit") == 0)
		return (PFN_vkVoidFunction)two_submit;
	if (strcmp(name, "vkCreateBuffer") == 0)
		return (PFN_vkVoidFunction)few_buffers;
	return NULL;
}

static void quiet_log(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user;
	if (level != CRUMBS_LOG_INFO)
		fprintf(stderr, "crumbs: %s\n", message);
}

/*
 * The test's device, with its context made again: one family, queue 0 the
 * real queue and queue 1 the test's handle. The first `copies` queues
 * have the GPU copy of their results (-1: both). Without `host_reset`,
 * crumbs resets its queries in command buffers.
 */
static void init_two_queues(struct vkt *t, int copies, bool host_reset)
{
	/* Each test is charged with its own messages only, when one before
	 * it failed without counting its own. */
	vkt_validation_messages = 0;
	vkt_init(t, NULL);
	crumbs_destroy(t->crumbs);
	t->crumbs = NULL;
	real_queue = t->queue;
	buffers_left = copies;
	vkt_override = two_queues;

	struct crumbs_vk_device dev = { t->physical, t->device,
					(host_reset ? CRUMBS_FEATURE_HOST_QUERY_RESET : 0) |
					CRUMBS_FEATURE_DEBUG_UTILS |
					(t->calibrated ? CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS : 0) };
	struct crumbs_vk_queue queues[2] = {
		{ t->queue, 0, t->family, 0 },
		{ second_queue(), 0, t->family, 1 },
	};
	struct crumbs_desc desc = { 0 };
	desc.instance = t->instance;
	desc.get_instance_proc_addr = vkt_gipa;
	desc.devices = &dev;
	desc.device_count = 1;
	desc.queues = queues;
	desc.queue_count = 2;
	desc.log = quiet_log;
	desc.capture_dir = t->capture_dir;
	desc.program_name = "test";
	desc.no_trigger = 1;
	assert_int_equal(crumbs_create(&desc, &t->crumbs), CRUMBS_OK);
}

/* Fails on any validation message since init_two_queues(). */
static void destroy_two_queues(struct vkt *t)
{
	vkt_destroy(t);
	vkt_override = NULL;
	buffers_left = -1;
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/* A command buffer with "NAME" around "NAME inner", recorded for `queue`. */
static VkCommandBuffer record(struct vkt *t, VkQueue queue, const char *name)
{
	char inner[64];
	VkCommandBuffer cb = vkt_begin(t);
	crumbs_cmd *h = crumbs_cmd_begin(t->crumbs, cb, queue);
	snprintf(inner, sizeof(inner), "%s inner", name);
	crumbs_scope_begin(h, 0, name);
	vkt_fill(t, cb, 1 << 20);
	crumbs_scope_begin(h, 1, inner);
	vkt_fill(t, cb, 1 << 20);
	crumbs_scope_end(h);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	return cb;
}

static void submit(struct vkt *t, VkQueue queue, VkCommandBuffer cb)
{
	VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
	assert_int_equal(crumbs_queue_submit(t->crumbs, queue, 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
}

/* Runs frames until a capture other than `previous` is written; fails
 * unless that was prompt and complete. Its path goes to `path`. */
static const struct frame *finish(struct vkt *t, reader **c, char path[4096])
{
	double start = vkt_now_ms();
	snprintf(path, 4096, "%s", vkt_finish_capture(t, path[0] ? path : NULL));
	double took = vkt_now_ms() - start;
	fprintf(stderr, "# the capture was written %.1f ms after the capture frame\n", took);
	const struct frame *f = vkt_read(path, c);
	if (took > PROMPT_MS || (f->flags & CRUMBS_FRAME_INCOMPLETE))
		fail_msg("the capture took %.0f ms and is %s", took,
			 f->flags & CRUMBS_FRAME_INCOMPLETE ? "incomplete" : "complete");
	return f;
}

/* Both scopes of `name` are on queue i's tree and timed. */
static void check_timed(const struct frame *f, uint32_t i, const char *name)
{
	char inner[64];
	snprintf(inner, sizeof(inner), "%s inner", name);
	const struct node *outer = vkt_find(f->queues[i].root, name);
	if (!outer)
		fail_msg("no scope '%s' on queue %u", name, i);
	const struct node *in = vkt_find(outer, inner);
	assert_non_null(in);
	assert_ptr_equal(in->parent, outer);
	if ((outer->flags & NODE_UNTIMED) || (in->flags & NODE_UNTIMED))
		fail_msg("'%s' is untimed", name);
	assert_true(outer->inclusive_ns > 0);
	assert_true(in->inclusive_ns > 0 && in->inclusive_ns <= outer->inclusive_ns);
}

/*
 * Every command buffer is recorded for queue 0 and submitted on queue 1;
 * queue 0 submits nothing, in the capture frame or the one before. The
 * timestamps lie in queue 0's query pool, written by queue 1's work.
 * Without host resets, queue 1 resets queue 0's scope slots too.
 */
static void on_another_queue(bool host_reset)
{
	struct vkt t;
	init_two_queues(&t, -1, host_reset);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	submit(&t, second_queue(), record(&t, t.queue, "Recorded for 0"));
	submit(&t, second_queue(), record(&t, t.queue, "Also for 0"));
	crumbs_frame(t.crumbs);

	reader *c;
	char path[4096] = "";
	const struct frame *f = finish(&t, &c, path);
	assert_int_equal(f->queue_count, 2);
	assert_int_equal(f->queues[0].submissions, 0);
	assert_int_equal(f->queues[1].submissions, 2);
	check_timed(f, 1, "Recorded for 0");
	check_timed(f, 1, "Also for 0");
	assert_false(f->flags & CRUMBS_FRAME_SCOPES_DROPPED);
	reader_free(c);
	destroy_two_queues(&t);
}

static void submitted_on_another_queue(void **state)
{
	(void)state;
	on_another_queue(true);
}

static void submitted_on_another_queue_without_host_reset(void **state)
{
	(void)state;
	on_another_queue(false);
}

/*
 * Both queues submit, each command buffers recorded for the other one
 * and for itself, in two captures one after another (the second one's
 * results land where the first one's were). Without host resets, queue 1's
 * first submission comes after queue 0 ran a command buffer recorded for
 * it: its slots must not be reset then.
 */
static void both_submit(bool host_reset)
{
	struct vkt t;
	char path[4096] = "";
	init_two_queues(&t, -1, host_reset);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
		crumbs_frame(t.crumbs);
		submit(&t, t.queue, record(&t, second_queue(), "1 on 0"));
		submit(&t, second_queue(), record(&t, t.queue, "0 on 1"));
		submit(&t, t.queue, record(&t, t.queue, "0 on 0"));
		submit(&t, second_queue(), record(&t, second_queue(), "1 on 1"));
		crumbs_frame(t.crumbs);
		reader *c;
		const struct frame *f = finish(&t, &c, path);
		check_timed(f, 0, "1 on 0");
		check_timed(f, 0, "0 on 0");
		check_timed(f, 1, "0 on 1");
		check_timed(f, 1, "1 on 1");
		reader_free(c);
	}
	destroy_two_queues(&t);
}

static void both_queues_submit(void **state)
{
	(void)state;
	both_submit(true);
}

static void both_queues_submit_without_host_reset(void **state)
{
	(void)state;
	both_submit(false);
}

/*
 * Without the GPU copy, results are read with vkGetQueryPoolResults: with
 * none, queue 0's slots are read though queue 0 submitted nothing; with
 * queue 0's copy only, queue 1, which wrote its slots, cannot copy them,
 * so they are read that way too.
 */
static void without_copy(int copies)
{
	struct vkt t;
	init_two_queues(&t, copies, true);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	submit(&t, second_queue(), record(&t, t.queue, "Recorded for 0"));
	crumbs_frame(t.crumbs);
	reader *c;
	char path[4096] = "";
	const struct frame *f = finish(&t, &c, path);
	assert_int_equal(f->queues[0].submissions, 0);
	check_timed(f, 1, "Recorded for 0");
	reader_free(c);
	destroy_two_queues(&t);
}

static void submitted_on_another_queue_no_copy(void **state)
{
	(void)state;
	without_copy(0);
}

static void submitted_on_a_queue_without_copy(void **state)
{
	(void)state;
	without_copy(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(submitted_on_another_queue),
		cmocka_unit_test(submitted_on_another_queue_without_host_reset),
		cmocka_unit_test(both_queues_submit),
		cmocka_unit_test(both_queues_submit_without_host_reset),
		cmocka_unit_test(submitted_on_another_queue_no_copy),
		cmocka_unit_test(submitted_on_a_queue_without_copy),
	};
	return cmocka_run_group_tests_name("two queues of one family", tests, NULL, NULL);
}
