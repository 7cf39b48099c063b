/* SPDX-License-Identifier: MIT */
/*
 * test_runs.c: runs of frames recorded by libcrumbs on a real Vulkan
 * device (lavapipe in CI), under the validation layer: every frame from
 * A to B at a coarse detail level in one file, each way of asking for one
 * (the API, its stop, the console, the environment) and refusing bad
 * requests, and a GPU that never lets crumbs read its results, which must
 * not stall the program, or copies them without a timestamp; the copies of the results recorded again only
 * when the slots a frame wrote change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vkt.h"

static void check_no_validation_messages(void)
{
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/* Submits a frame's command buffer, waits for the queue, and ends the
 * frame. */
static void submit_frame(struct vkt *t, VkCommandBuffer cb)
{
	vkt_submit(t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	assert_int_equal(vkQueueWaitIdle(t->queue), VK_SUCCESS);
	crumbs_frame(t->crumbs);
}

/* One frame's work: a scope of each level, nested, with counts in the
 * finest, each around a fill; then the frame boundary. The queue is
 * waited for, like a program that keeps a frame or two in flight: the
 * copies of the results are never sets behind. */
static void frame(struct vkt *t, int n)
{
	VkCommandBuffer cb = vkt_begin(t);
	crumbs_cmd *h = crumbs_cmd_begin(t->crumbs, cb, t->queue);
	crumbs_scope_beginf(h, 0, "Frame %d", n);
	crumbs_scope_begin(h, 1, "Pass");
	vkt_fill(t, cb, 4096);
	crumbs_scope_begin(h, 2, "Subpass");
	vkt_fill(t, cb, 4096);
	crumbs_scope_begin(h, 3, "Batch");
	crumbs_draws(h, 1, 2, 6);
	vkt_fill(t, cb, 4096);
	crumbs_scope_end(h);
	crumbs_scope_end(h);
	crumbs_scope_end(h);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	submit_frame(t, cb);
}

/* Records frame n's command buffer: the frame scope around a pass with a
 * fill, and with `second` a second pass beside it. A program that records
 * the next frame's work before it ends this one, as Zink does, records it
 * ahead. */
static VkCommandBuffer record_passes(struct vkt *t, int n, bool second)
{
	VkCommandBuffer cb = vkt_begin(t);
	crumbs_cmd *h = crumbs_cmd_begin(t->crumbs, cb, t->queue);
	crumbs_scope_beginf(h, 0, "Frame %d", n);
	crumbs_scope_begin(h, 1, "Pass");
	vkt_fill(t, cb, 4096);
	crumbs_scope_end(h);
	if (second) {
		crumbs_scope_begin(h, 1, "Second pass");
		vkt_fill(t, cb, 4096);
		crumbs_scope_end(h);
	}
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	return cb;
}

/* The deepest level of the scopes under n. */
static int deepest(const struct node *n)
{
	int d = -1;
	for (const struct node *c = n->child; c; c = c->next) {
		int below = deepest(c);
		if (c->level > d)
			d = c->level;
		if (below > d)
			d = below;
	}
	return d;
}

/*
 * Checks the run in path: `count` frames from `first` (ANY: whichever
 * comes first) in order, each with the
 * scopes of levels up to `detail` and none finer, no counts below full
 * detail, each told when its queue was last busy (but a frame 0 that
 * began with the program). Returns how many frames carry `flag` (0: none
 * is asked for).
 */
#define ANY UINT64_MAX

static unsigned check_run(const char *path, uint64_t first, uint64_t count, int detail,
			  uint32_t flag)
{
	reader *c;
	struct analyze_error err;
	const struct frame *f;
	uint64_t want = first;
	unsigned flagged = 0;
	assert_int_equal(reader_open_file(path, &c, &err), CRUMBS_OK);
	while (reader_next_frame(c, &f, &err) == CRUMBS_OK && f) {
		if (want == ANY)
			want = first = f->number;
		assert_int_equal(f->number, want);
		want++;
		flagged += (f->flags & flag) != 0;
		if (flag)
			continue;
		assert_false(f->flags & (CRUMBS_FRAME_INCOMPLETE | CRUMBS_FRAME_SCOPES_DROPPED));
		assert_int_equal((f->flags & CRUMBS_FRAME_FULL_DETAIL) != 0, detail == CRUMBS_DETAIL_MAX);
		const struct node *root = f->queues[0].root;
		const struct node *top = root->child;
		assert_non_null(top);
		assert_null(top->next);
		assert_true(top->name_len > 6 && memcmp(top->name, "Frame ", 6) == 0);
		assert_int_equal(deepest(root), detail);
		assert_true(top->inclusive_ns > 0);
		assert_int_equal(root->inclusive.draws, detail == CRUMBS_DETAIL_MAX ? 1 : 0);
		assert_int_equal((f->queues[0].flags & FRAME_QUEUE_NO_READY) != 0, f->number == 0);
	}
	assert_int_equal(want - first, count);
	reader_free(c);
	return flagged;
}

/*
 * A run's frames on the CPU clock: each calibrated where the device is,
 * most by the sample they start with alone. Clocks drift by parts per
 * million, so a run samples again only once RUN_CALIBRATE_NS (50 ms) has
 * passed, not at the end of each of these frames of a few milliseconds.
 */
static void check_run_calibration(const char *path, bool calibrated)
{
	reader *c;
	struct analyze_error err;
	const struct frame *f;
	unsigned frames = 0, sampled_twice = 0;
	assert_int_equal(reader_open_file(path, &c, &err), CRUMBS_OK);
	while (reader_next_frame(c, &f, &err) == CRUMBS_OK && f) {
		assert_int_equal(f->gpu_count, 1);
		assert_int_equal(f->gpus[0].calibrated, calibrated);
		if (calibrated)
			assert_in_range(f->gpus[0].calibration_samples, 1, 2);
		sampled_twice += f->gpus[0].calibration_samples == 2;
		frames++;
	}
	reader_free(c);
	assert_true(frames > 10);
	if (calibrated && sampled_twice >= frames / 2)
		fail_msg("%u of %u frames took a calibration sample of their own", sampled_twice,
			 frames);
}

/* crumbs_record: frames 2 to 21 at detail 1 of 26, and crumbs_detail()
 * says which level each frame records. */
static void run_by_api(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_record(t.crumbs, 2, 21, 1), CRUMBS_OK);
	assert_int_equal(crumbs_record(t.crumbs, 30, 40, 1), CRUMBS_ERROR_BAD_STATE);
	for (int n = 0; n < 26; n++) {
		assert_int_equal(crumbs_detail(t.crumbs), n >= 2 && n <= 21 ? 1 : -1);
		frame(&t, n);
	}
	const char *path = vkt_finish_capture(&t, NULL);
	assert_non_null(strstr(path, "/test-run-2.crumbs"));
	check_run(path, 2, 20, 1, 0);
	check_run_calibration(path, t.calibrated);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/* A program that records each frame's command buffer in the frame
 * before it, and submits it in its own: every frame of the run has its
 * scopes, named for it. (The run's first frame records its own, as a
 * one-frame capture's must: before it, nothing is recorded.) */
static void recorded_a_frame_ahead(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_record(t.crumbs, 3, 22, 1), CRUMBS_OK);
	VkCommandBuffer next = VK_NULL_HANDLE;
	for (int n = 0; n < 26; n++) {
		VkCommandBuffer cb = next ? next : record_passes(&t, n, false);
		vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
		next = n >= 3 ? record_passes(&t, n + 1, false) : VK_NULL_HANDLE;
		assert_int_equal(vkQueueWaitIdle(t.queue), VK_SUCCESS);
		crumbs_frame(t.crumbs);
	}
	const char *path = vkt_finish_capture(&t, NULL);
	check_run(path, 3, 20, 1, 0);
	reader *c;
	struct analyze_error err;
	const struct frame *f;
	assert_int_equal(reader_open_file(path, &c, &err), CRUMBS_OK);
	while (reader_next_frame(c, &f, &err) == CRUMBS_OK && f) {
		char want[32];
		snprintf(want, sizeof(want), "Frame %llu", (unsigned long long)f->number);
		const struct node *top = f->queues[0].root->child;
		assert_int_equal(top->name_len, strlen(want));
		assert_memory_equal(top->name, want, top->name_len);
	}
	reader_free(c);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/* An open run from frame 0, stopped after its seventh frame; then the
 * console's run of the next 5 frames at detail 2; then a one-frame
 * capture, at full detail as before. */
static void run_stopped_then_console(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_record_stop(t.crumbs), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_record(t.crumbs, 0, CRUMBS_RECORD_OPEN, 0), CRUMBS_OK);
	int n = 0;
	for (; n < 7; n++)
		frame(&t, n);
	assert_int_equal(crumbs_record_stop(t.crumbs), CRUMBS_OK);
	for (; n < 12; n++)
		frame(&t, n);
	char first[4096];
	snprintf(first, sizeof(first), "%s", vkt_finish_capture(&t, NULL));
	check_run(first, 0, 8, 0, 0); /* the stop ends the run after the current frame, 7 */

	assert_int_equal(crumbs_command(t.crumbs, "profilegpu --detail 2"),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_command(t.crumbs, "profilegpu --frames 0"),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_command(t.crumbs, "profilegpu --frames 3 --detail 4"),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_command(t.crumbs, "profilegpu --ascii --frames=5 --detail 2"),
			 CRUMBS_OK);
	for (int k = 0; k < 12; k++, n++)
		frame(&t, n);
	char second[4096];
	snprintf(second, sizeof(second), "%s", vkt_finish_capture(&t, first));
	check_run(second, ANY, 5, 2, 0);

	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	for (int k = 0; k < 3; k++, n++)
		frame(&t, n);
	check_run(vkt_finish_capture(&t, second), ANY, 1, CRUMBS_DETAIL_MAX, 0);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/* Requests that cannot be: refused, and nothing starts. */
static void bad_requests(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	frame(&t, 0);
	frame(&t, 1);
	assert_int_equal(crumbs_record(t.crumbs, 1, 5, 1), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_record(t.crumbs, 9, 5, 1), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_record(t.crumbs, 5, 9, 4), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_record(t.crumbs, 5, 9, -1), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_record(NULL, 5, 9, 1), CRUMBS_ERROR_INVALID_ARGUMENT);
	for (int n = 2; n < 8; n++) {
		assert_int_equal(crumbs_detail(t.crumbs), -1);
		frame(&t, n);
	}
	assert_null(crumbs_last_capture(t.crumbs));
	/* A run asked for ahead can be called off before it begins. */
	assert_int_equal(crumbs_record(t.crumbs, 20, 25, 1), CRUMBS_OK);
	assert_int_equal(crumbs_record_stop(t.crumbs), CRUMBS_OK);
	for (int n = 8; n < 30; n++)
		frame(&t, n);
	assert_null(crumbs_last_capture(t.crumbs));
	vkt_destroy(&t);
	check_no_validation_messages();
}

/* CRUMBS_RECORD=A:B:D asks for a run at creation; bad values are warned
 * about and ignored. */
static void run_from_environment(void **state)
{
	(void)state;
	static const char *bad[] = { "3:1", "x:4", "1:2:9", "12", "1:2:3:4", ":5" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vkt t;
		setenv("CRUMBS_RECORD", bad[i], 1);
		vkt_init(&t, NULL);
		unsetenv("CRUMBS_RECORD");
		for (int n = 0; n < 8; n++)
			frame(&t, n);
		if (crumbs_last_capture(t.crumbs))
			fail_msg("CRUMBS_RECORD=%s recorded '%s'", bad[i], crumbs_last_capture(t.crumbs));
		vkt_destroy(&t);
	}
	struct vkt t;
	setenv("CRUMBS_RECORD", "1:3:3", 1);
	vkt_init(&t, NULL);
	unsetenv("CRUMBS_RECORD");
	for (int n = 0; n < 5; n++)
		frame(&t, n);
	check_run(vkt_finish_capture(&t, NULL), 1, 3, 3, 0);
	vkt_destroy(&t);
	check_no_validation_messages();
}

static unsigned copies_recorded;

static VKAPI_ATTR void VKAPI_CALL counting_copy(VkCommandBuffer cb, VkQueryPool pool,
						uint32_t first, uint32_t count, VkBuffer buffer,
						VkDeviceSize offset, VkDeviceSize stride,
						VkQueryResultFlags flags)
{
	copies_recorded++;
	vkCmdCopyQueryPoolResults(cb, pool, first, count, buffer, offset, stride, flags);
}

static PFN_vkVoidFunction count_copies(const char *name)
{
	return strcmp(name, "vkCmdCopyQueryPoolResults") == 0 ?
	       (PFN_vkVoidFunction)counting_copy : NULL;
}

/* Reads the run in path, frames from 1 on: each complete, its frame
 * scope and the passes in it timed, one pass in frames before
 * `second_from`, two from it on. Returns how many frames it holds. */
static unsigned timed_frames(const char *path, uint64_t second_from)
{
	reader *c;
	struct analyze_error err;
	const struct frame *f;
	unsigned frames = 0;
	assert_int_equal(reader_open_file(path, &c, &err), CRUMBS_OK);
	while (reader_next_frame(c, &f, &err) == CRUMBS_OK && f) {
		assert_int_equal(f->number, 1 + frames);
		assert_false(f->flags & (CRUMBS_FRAME_INCOMPLETE | CRUMBS_FRAME_SCOPES_DROPPED));
		const struct node *top = f->queues[0].root->child;
		assert_non_null(top);
		assert_false(top->flags & NODE_UNTIMED);
		unsigned passes = 0;
		for (const struct node *p = top->child; p; p = p->next, passes++)
			assert_false(p->flags & NODE_UNTIMED);
		assert_int_equal(passes, f->number < second_from ? 1 : 2);
		frames++;
	}
	assert_int_equal(err.code, CRUMBS_OK);
	reader_free(c);
	return frames;
}

/*
 * A run's frames that write the same slots as the last frame of their
 * set submit that set's copy as it was recorded; a frame that writes
 * others records it again, and reads its own results: frames 1 to 39,
 * the second pass from frame 20 on, every scope timed.
 */
static void copies_recorded_again_only_when_changed(void **state)
{
	(void)state;
	struct vkt t;
	vkt_override = count_copies;
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_record(t.crumbs, 1, 39, 1), CRUMBS_OK);
	unsigned at_8 = 0, at_20 = 0;
	for (int n = 0; n < 42; n++) {
		if (n == 8)
			at_8 = copies_recorded;
		if (n == 20)
			at_20 = copies_recorded;
		if (n < 20)
			frame(&t, n);
		else
			submit_frame(&t, record_passes(&t, n, true));
	}
	/* Every set was used by frame 8; its frames after wrote the same. */
	assert_true(at_8 > 0);
	assert_int_equal(at_20, at_8);
	assert_true(copies_recorded > at_20);
	assert_int_equal(timed_frames(vkt_finish_capture(&t, NULL), 20), 39);
	vkt_destroy(&t);
	vkt_override = NULL;
	check_no_validation_messages();
}

/* What the log said, warnings and errors, one line each. */
static char said[8192];

static void keep_said(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user;
	size_t len = strlen(said);
	if (level != CRUMBS_LOG_INFO && len < sizeof(said) - 1)
		snprintf(said + len, sizeof(said) - len, "%s\n", message);
}

/* While set, crumbs' fences never signal. */
static bool fences_stuck;

static VKAPI_ATTR VkResult VKAPI_CALL never_done(VkDevice device, VkFence fence)
{
	return fences_stuck ? VK_NOT_READY : vkGetFenceStatus(device, fence);
}

/* crumbs' copies of the results never seem to finish. */
static PFN_vkVoidFunction stuck_copies(const char *name)
{
	if (strcmp(name, "vkGetFenceStatus") == 0)
		return (PFN_vkVoidFunction)never_done;
	return NULL;
}

/*
 * The GPU never lets crumbs read a run's results: each set's frame is
 * written incomplete when its set is needed again, the frames whose set
 * is still copying are not recorded, and the program never waits.
 */
static void results_never_ready(void **state)
{
	(void)state;
	struct vkt t;
	struct crumbs_desc desc = { 0 };
	desc.log = keep_said;
	said[0] = '\0';
	vkt_override = stuck_copies;
	fences_stuck = true;
	vkt_init(&t, &desc);
	assert_int_equal(crumbs_record(t.crumbs, 1, 16, 1), CRUMBS_OK);
	double start = vkt_now_ms();
	for (int n = 0; n < 18; n++)
		frame(&t, n);
	/* Frames 1 to 6, the first use of each of crumbs' six sets, were
	 * written incomplete five frames later (at frames 6 to 11); the
	 * rest, whose sets were still being copied, were not recorded, and
	 * the file was closed after frame 16 (by the output thread, which
	 * a loaded machine may let finish a frame or two later). */
	/* Lavapipe runs each frame in well under a second; a wait for the
	 * results would take crumbs' ten-second limit per frame. */
	assert_true(vkt_now_ms() - start < 9000.0);
	const char *path = vkt_finish_capture(&t, NULL);
	assert_int_equal(check_run(path, 1, 6, 1, CRUMBS_FRAME_INCOMPLETE), 6);
	/* The log says which were not, and how far behind the GPU was when
	 * each was dropped: frames 7 to 12 found the copies of frames 1 to
	 * 6 running, 6 frames behind; frames 13 to 16 found them still
	 * running, 12 behind. */
	if (!strstr(said, "10 frames of the run from frame 1, between frames 7 and 16, were not "
			  "recorded: the GPU was up to 12 frames behind (crumbs drops a frame when the "
			  "GPU is 6 behind, rather than wait)"))
		fail_msg("the log said: %s", said);
	/* Their copies still seem to run: another capture would reset the
	 * slots they read, and is refused until they are done. */
	char run_path[512];
	snprintf(run_path, sizeof(run_path), "%s", path);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_ERROR_BAD_STATE);
	fences_stuck = false;
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	frame(&t, 18);
	frame(&t, 19);
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, run_path), &c);
	assert_int_equal(f->flags, CRUMBS_FRAME_FULL_DETAIL); /* whole, not given up */
	assert_non_null(vkt_find(f->queues[0].root, "Pass"));
	reader_free(c);
	vkt_destroy(&t);
	vkt_override = NULL;
	check_no_validation_messages();
}

/* crumbs' copies of the results leave out the first slot of each range:
 * they finish, but one timestamp of each frame never comes. */
static VKAPI_ATTR void VKAPI_CALL copy_all_but_first(VkCommandBuffer cb, VkQueryPool pool,
						     uint32_t first, uint32_t count,
						     VkBuffer buffer, VkDeviceSize offset,
						     VkDeviceSize stride, VkQueryResultFlags flags)
{
	vkCmdFillBuffer(cb, buffer, offset, stride, 0);
	if (count > 1)
		vkCmdCopyQueryPoolResults(cb, pool, first + 1, count - 1, buffer, offset + stride,
					  stride, flags);
}

static PFN_vkVoidFunction short_copies(const char *name)
{
	if (strcmp(name, "vkCmdCopyQueryPoolResults") == 0)
		return (PFN_vkVoidFunction)copy_all_but_first;
	return NULL;
}

/*
 * A run's frame whose copies are done but lack a timestamp is written
 * incomplete as soon as its copies are read: waiting brings nothing more.
 * Its set is not held until it is needed again (five frames on), so the
 * file of a run of frames 1 to 4 is closed two frames after its last.
 */
static void results_copied_short(void **state)
{
	(void)state;
	struct vkt t;
	char path[512];
	vkt_override = short_copies;
	vkt_init(&t, NULL);
	snprintf(path, sizeof(path), "%s/test-run-1.crumbs", t.capture_dir);
	assert_int_equal(crumbs_record(t.crumbs, 1, 4, 1), CRUMBS_OK);
	/* Frame 0 is the pre-roll; frame 4's copy is read at the end of
	 * frame 5, when the run's file is closed by the output thread. */
	for (int n = 0; n <= 5; n++)
		frame(&t, n);
	bool closed = false;
	for (double until = vkt_now_ms() + 20000; !closed && vkt_now_ms() < until;) {
		reader *c;
		struct analyze_error err;
		if (reader_open_file(path, &c, &err) == CRUMBS_OK) {
			closed = reader_meta(c)->has_index;
			reader_free(c);
		}
		if (!closed)
			vkt_sleep_ms(5);
	}
	assert_true(closed);
	assert_int_equal(check_run(path, 1, 4, 1, CRUMBS_FRAME_INCOMPLETE), 4);
	assert_string_equal(vkt_finish_capture(&t, NULL), path);
	vkt_destroy(&t);
	vkt_override = NULL;
	check_no_validation_messages();
}

/* A GPU that runs three frames behind: crumbs' copy of a frame's results
 * reads done three frames after the frame that submitted it, not before.
 * Every vkGetFenceStatus crumbs calls is counted. */
#define BEHIND 3
#define MAX_FENCES 64
static unsigned frame_now, fence_polls, fence_count;
static VkFence fences_seen[MAX_FENCES];
static unsigned fences_frame[MAX_FENCES];

static VKAPI_ATTR VkResult VKAPI_CALL behind_submit(VkQueue queue, uint32_t count,
						    const VkSubmitInfo *submits, VkFence fence)
{
	unsigned i = 0;
	while (fence && i < fence_count && fences_seen[i] != fence)
		i++;
	if (fence && i < MAX_FENCES) {
		fences_seen[i] = fence;
		fences_frame[i] = frame_now;
		fence_count += i == fence_count;
	}
	return vkQueueSubmit(queue, count, submits, fence);
}

static VKAPI_ATTR VkResult VKAPI_CALL behind_status(VkDevice device, VkFence fence)
{
	fence_polls++;
	for (unsigned i = 0; i < fence_count; i++)
		if (fences_seen[i] == fence && frame_now - fences_frame[i] < BEHIND)
			return VK_NOT_READY;
	return vkGetFenceStatus(device, fence);
}

static PFN_vkVoidFunction gpu_behind(const char *name)
{
	if (strcmp(name, "vkQueueSubmit") == 0)
		return (PFN_vkVoidFunction)behind_submit;
	if (strcmp(name, "vkGetFenceStatus") == 0)
		return (PFN_vkVoidFunction)behind_status;
	return NULL;
}

/*
 * When the GPU runs three frames behind, a run's frames are looked at
 * three frames after they end, once each, not first at two frames, where
 * each look found nothing: from frame 10 on, one look at a copy's fence a
 * frame (and one more every 64 frames, to find out whether the GPU caught
 * up). Every frame is still whole.
 */
static void looks_follow_the_gpu(void **state)
{
	(void)state;
	struct vkt t;
	vkt_override = gpu_behind;
	frame_now = fence_polls = fence_count = 0;
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_record(t.crumbs, 1, 60, 1), CRUMBS_OK);
	unsigned polls_before = 0;
	for (frame_now = 0; frame_now <= 60; frame_now++) {
		if (frame_now == 10)
			polls_before = fence_polls;
		frame(&t, (int)frame_now);
	}
	unsigned polls = fence_polls - polls_before;
	if (polls > 51 + 2)
		fail_msg("%u looks at copy fences in 51 frames", polls);
	assert_true(polls >= 51 - 2);
	/* The GPU's time goes on with the program's frames. */
	for (; frame_now <= 70; frame_now++)
		frame(&t, (int)frame_now);
	const char *path = vkt_finish_capture(&t, NULL);
	assert_int_equal(check_run(path, 1, 60, 1, 0), 0);
	vkt_destroy(&t);
	vkt_override = NULL;
	check_no_validation_messages();
}

/* The whole frames in path, which may be cut where a chunk is being
 * written. */
static unsigned frames_on_disk(const char *path)
{
	reader *c;
	struct analyze_error err;
	const struct frame *f;
	unsigned frames = 0;
	if (reader_open_file(path, &c, &err) != CRUMBS_OK)
		return 0;
	while (reader_next_frame(c, &f, &err) == CRUMBS_OK && f)
		frames++;
	reader_free(c);
	return frames;
}

static unsigned host_resets;

static VKAPI_ATTR void VKAPI_CALL counting_reset(VkDevice device, VkQueryPool pool, uint32_t first,
						 uint32_t count)
{
	host_resets++;
	vkResetQueryPool(device, pool, first, count);
}

static PFN_vkVoidFunction count_host_resets(const char *name)
{
	return strcmp(name, "vkResetQueryPool") == 0 ? (PFN_vkVoidFunction)counting_reset : NULL;
}

/* Frame n in two command buffers, its scope begun in the first and ended
 * in the second, as the sample renderer's; with `stray`, a third that
 * takes slots and is never submitted. */
static void frame_in_two(struct vkt *t, int n, bool stray)
{
	VkCommandBuffer a = vkt_begin(t), b;
	crumbs_cmd *h = crumbs_cmd_begin(t->crumbs, a, t->queue);
	crumbs_scope_beginf(h, 0, "Frame %d", n);
	crumbs_scope_begin(h, 1, "Pass");
	vkt_fill(t, a, 4096);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(a), VK_SUCCESS);
	if (stray) {
		VkCommandBuffer s = vkt_begin(t);
		h = crumbs_cmd_begin(t->crumbs, s, t->queue);
		crumbs_scope_begin(h, 1, "Never submitted");
		crumbs_scope_end(h);
		crumbs_cmd_end(h);
		assert_int_equal(vkEndCommandBuffer(s), VK_SUCCESS);
	}
	b = vkt_begin(t);
	h = crumbs_cmd_begin(t->crumbs, b, t->queue);
	crumbs_scope_begin(h, 1, "Second pass");
	vkt_fill(t, b, 4096);
	crumbs_scope_end(h);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(b), VK_SUCCESS);
	vkt_submit(t, a, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	submit_frame(t, b);
}

/*
 * A run's copy of a frame's results resets what it copied, on the GPU,
 * so the set's next frame resets nothing on the host: not even the end
 * slot that the frame scope's first command buffer reserved, since the
 * second, which ends the scope, writes it. A command buffer that takes
 * slots and is never submitted leaves them to the host. The validation
 * layer sees every timestamp written to a query reset since its last.
 */
static void resets_left_to_the_copies(void **state)
{
	(void)state;
	struct vkt t;
	vkt_override = count_host_resets;
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_record(t.crumbs, 1, 40, 1), CRUMBS_OK);
	unsigned at_8 = 0, at_20 = 0;
	for (int n = 0; n < 42; n++) {
		if (n == 8)
			at_8 = host_resets;
		if (n == 20)
			at_20 = host_resets;
		frame_in_two(&t, n, n >= 20 && n < 30);
	}
	/* Frames 1 to 6 took each set once; their reuses from frame 7 on. */
	assert_int_equal(at_20, at_8);
	assert_true(host_resets > at_20);
	assert_int_equal(timed_frames(vkt_finish_capture(&t, NULL), 0), 40);
	vkt_destroy(&t);
	vkt_override = NULL;
	check_no_validation_messages();
}

/* A program that stops ending frames in the middle of a run, as one with
 * nothing to draw does, and may be killed while it waits: the frames
 * crumbs has written by then reach the file within RUN_FLUSH_NS (1 s) of
 * the last flush, not at a frame that never comes. */
static void idle_run_flushed(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	assert_int_equal(crumbs_record(t.crumbs, 1, 1000, 1), CRUMBS_OK);
	for (int n = 0; n < 12; n++)
		frame(&t, n);
	char path[128];
	snprintf(path, sizeof(path), "%s/test-run-1.crumbs", t.capture_dir);
	/* The frames resolved so far, all but the last few: by time, since
	 * under the sanitizers everything is slower. */
	unsigned on_disk = 0;
	for (double until = vkt_now_ms() + 10000; !on_disk && vkt_now_ms() < until;) {
		vkt_sleep_ms(50);
		on_disk = frames_on_disk(path);
	}
	if (!on_disk)
		fail_msg("no frame of the run reached '%s' in the 10 s the program ended none", path);
	assert_in_range(on_disk, 1, 11);
	/* The stop ends the run after the current frame, 12. */
	assert_int_equal(crumbs_record_stop(t.crumbs), CRUMBS_OK);
	frame(&t, 12);
	const char *done = vkt_finish_capture(&t, NULL);
	assert_string_equal(done, path);
	check_run(path, 1, 12, 1, 0);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/*
 * A run's file is made as the run begins, at its pre-roll, with the
 * device and its queue, so that a program killed before its first frame
 * is written leaves a file that reads and says what ran. A run stopped
 * before its first frame leaves none: its log says no frame was recorded.
 */
static void file_made_as_the_run_begins(void **state)
{
	(void)state;
	struct vkt t;
	struct crumbs_desc desc = { 0 };
	desc.log = keep_said;
	said[0] = '\0';
	vkt_init(&t, &desc);
	char path[128];
	snprintf(path, sizeof(path), "%s/test-run-2.crumbs", t.capture_dir);
	frame(&t, 0);
	/* Frame 1 is its pre-roll: the output thread makes the file. */
	assert_int_equal(crumbs_record(t.crumbs, 2, 9, 1), CRUMBS_OK);
	reader *c = NULL;
	struct analyze_error err;
	for (double until = vkt_now_ms() + 10000; vkt_now_ms() < until; vkt_sleep_ms(5)) {
		if (reader_open_file(path, &c, &err) != CRUMBS_OK)
			continue;
		const struct frame *f = NULL;
		if (reader_next_frame(c, &f, &err) == CRUMBS_ERROR_TRUNCATED &&
		    reader_meta(c)->queue_count == 1)
			break;
		reader_free(c);
		c = NULL;
	}
	if (!c)
		fail_msg("'%s' did not read with its device and queue in 10 s of the run's pre-roll",
			 path);
	assert_int_equal(reader_meta(c)->gpu_count, 1);
	assert_int_equal(reader_meta(c)->frame_count, 0);
	reader_free(c);

	assert_int_equal(crumbs_record_stop(t.crumbs), CRUMBS_OK);
	frame(&t, 1);
	const char *none = "no frame of the run from frame 2 was recorded";
	for (double until = vkt_now_ms() + 10000; !strstr(said, none) && vkt_now_ms() < until;) {
		vkt_sleep_ms(5);
		crumbs_frame(t.crumbs);
	}
	assert_non_null(strstr(said, none));
	assert_null(crumbs_last_capture(t.crumbs));
	assert_int_equal(access(path, F_OK), -1);
	vkt_destroy(&t);
	check_no_validation_messages();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(run_by_api),
		cmocka_unit_test(recorded_a_frame_ahead),
		cmocka_unit_test(run_stopped_then_console),
		cmocka_unit_test(bad_requests),
		cmocka_unit_test(run_from_environment),
		cmocka_unit_test(results_never_ready),
		cmocka_unit_test(results_copied_short),
		cmocka_unit_test(looks_follow_the_gpu),
		cmocka_unit_test(copies_recorded_again_only_when_changed),
		cmocka_unit_test(idle_run_flushed),
		cmocka_unit_test(file_made_as_the_run_begins),
		cmocka_unit_test(resets_left_to_the_copies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
