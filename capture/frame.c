/*
 * frame.c: frames and the capture's state machine: crumbs_frame moves a
 * capture from its request through the pre-roll, the capture frame, the
 * read-back and the output back to idle. Requests come from the API, the
 * console command and `crumbs trigger`.
 */
#include "capture_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rest of this frame is the pre-roll: the query slots are reset, and
 * each submission's end is timed so the capture knows when each queue was
 * last busy. */
static void begin_preroll(crumbs_context *ctx)
{
	pools_preroll(ctx);
	store_reset(ctx);
	submit_reset(ctx);
	ctx->has_peer = false;
	ctx->device_lost = false;
	atomic_store(&ctx->state, STATE_PREROLL);
}

/* The current frame, begun at `now`, is the capture frame. */
static void start_capture(crumbs_context *ctx, int64_t now)
{
	ctx->capture_frame = ctx->frame;
	ctx->capture_begin_ns = now;
	calibrate(ctx, true);
	atomic_store(&ctx->state, STATE_CAPTURING);
}

/*
 * Reads back what is available; when everything is (or time is up, or the
 * device is lost, or `force`), starts writing the capture and printing its
 * tables, and returns true: the capture is then STATE_WRITING. With
 * `force` the writing is done before it returns.
 */
static bool resolve(crumbs_context *ctx, bool force)
{
	bool lost;
	bool ready = readback_poll(ctx, &lost);
	/* By time, not frames: a program may run many fast frames while the
	 * GPU still works through a long one. */
	bool late = now_ns() - ctx->capture_end_ns >= RESOLVE_NS;
	if (!ready && !force && !lost && !late)
		return false;
	standing_unhold(ctx);

	uint32_t flags = 0;
	if (lost) {
		flags |= CRUMBS_FRAME_DEVICE_LOST;
		ctx_log(ctx, CRUMBS_LOG_ERROR, "the device was lost during the capture of frame %llu; "
			"writing what was resolved", (unsigned long long)ctx->capture_frame);
	} else if (!ready) {
		flags |= CRUMBS_FRAME_INCOMPLETE;
		ctx_log(ctx, CRUMBS_LOG_WARNING, "some timestamps of frame %llu never became available "
			"(a command buffer recorded but not submitted?); writing the rest",
			(unsigned long long)ctx->capture_frame);
	}
	output_start(ctx, flags, force);
	return true;
}

/* A capture request from any source; `err` gets what went wrong. */
#define UNDER_LAYER "the crumbs layer records this program: capture with `crumbs trigger PID` " \
	"or `crumbs capture`"

static enum crumbs_result request(crumbs_context *ctx, const char *settings, char *err, size_t n)
{
	if (ctx->under_layer) {
		snprintf(err, n, UNDER_LAYER);
		return CRUMBS_ERROR_BAD_STATE;
	}
	if (atomic_load(&ctx->state) != STATE_IDLE) {
		snprintf(err, n, "a capture (of frame %llu) is already under way",
			 (unsigned long long)(ctx->state == STATE_PREROLL ? ctx->frame + 1 :
					      ctx->capture_frame));
		return CRUMBS_ERROR_BAD_STATE;
	}
	if (output_settings(ctx, settings, err, n) != 0)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	begin_preroll(ctx);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_capture_at(crumbs_context *ctx, uint64_t frame, const char *settings)
{
	char err[300];
	enum crumbs_result r = CRUMBS_OK;

	if (ctx->under_layer) {
		snprintf(err, sizeof(err), UNDER_LAYER);
		r = CRUMBS_ERROR_BAD_STATE;
	} else if (atomic_load(&ctx->state) != STATE_IDLE || ctx->capture_at != UINT64_MAX) {
		snprintf(err, sizeof(err), "a capture is already asked for or under way");
		r = CRUMBS_ERROR_BAD_STATE;
	} else if (frame == 0 && ctx->frame == 0 && !ctx->submitted) {
		/* Nothing of frame 0 has run: it can still be captured whole,
		 * without a pre-roll. */
		if (output_settings(ctx, settings, err, sizeof(err)) != 0) {
			r = CRUMBS_ERROR_INVALID_ARGUMENT;
		} else {
			begin_preroll(ctx);
			start_capture(ctx, ctx->frame_begin_ns);
		}
	} else if (frame <= ctx->frame) {
		snprintf(err, sizeof(err), "frame %llu has begun (this is frame %llu)",
			 (unsigned long long)frame, (unsigned long long)ctx->frame);
		r = CRUMBS_ERROR_INVALID_ARGUMENT;
	} else if (output_settings(ctx, settings, err, sizeof(err)) != 0) {
		r = CRUMBS_ERROR_INVALID_ARGUMENT;
	} else if (frame == ctx->frame + 1) {
		begin_preroll(ctx);
	} else {
		ctx->capture_at = frame;
	}
	if (r != CRUMBS_OK)
		ctx_log(ctx, CRUMBS_LOG_WARNING, "profilegpu: %s", err);
	return r;
}

enum crumbs_result crumbs_capture(crumbs_context *ctx, const char *settings)
{
	char err[300];
	enum crumbs_result r = request(ctx, settings, err, sizeof(err));
	if (r != CRUMBS_OK)
		ctx_log(ctx, CRUMBS_LOG_WARNING, "profilegpu: %s", err);
	return r;
}

/* Runs a console command line; `err` gets a failure's message. */
static enum crumbs_result command(crumbs_context *ctx, const char *line, char *err, size_t n)
{
	const char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t word = strcspn(p, " \t");
	const char *rest = p + word;
	while (*rest == ' ' || *rest == '\t')
		rest++;
	if (word == 10 && strncmp(p, "profilegpu", 10) == 0)
		return request(ctx, rest, err, n);
	if (word == 4 && strncmp(p, "help", 4) == 0 && !*rest) {
		output_help(ctx);
		return CRUMBS_OK;
	}
	snprintf(err, n, "unknown command '%.*s' (try 'help')", (int)(word < 64 ? word : 64), p);
	return CRUMBS_ERROR_INVALID_ARGUMENT;
}

enum crumbs_result crumbs_command(crumbs_context *ctx, const char *command_line)
{
	char err[300];
	enum crumbs_result r = command(ctx, command_line ? command_line : "", err, sizeof(err));
	if (r != CRUMBS_OK)
		ctx_log(ctx, CRUMBS_LOG_WARNING, "%s", err);
	return r;
}

/* Requests that came through `crumbs trigger`. */
static void poll_trigger(crumbs_context *ctx)
{
	char line[TRIGGER_MAX_COMMAND];
	struct trigger_peer peer;

	if (ctx->trigger.fd < 0)
		return;
	/* A few a frame: a sender that never stops cannot stall the frame. */
	for (int i = 0; i < 4 && trigger_poll(&ctx->trigger, line, sizeof(line), &peer) == 1; i++) {
		char err[300], reply[400];
		enum crumbs_result r = command(ctx, line, err, sizeof(err));
		if (r == CRUMBS_OK && atomic_load(&ctx->state) == STATE_PREROLL) {
			snprintf(reply, sizeof(reply), "queued frame %llu",
				 (unsigned long long)(ctx->frame + 1));
			ctx->peer = peer;
			ctx->has_peer = true;
		} else if (r == CRUMBS_OK) {
			snprintf(reply, sizeof(reply), "error not a capture request");
		} else {
			snprintf(reply, sizeof(reply), "error %s", err);
		}
		trigger_reply(&ctx->trigger, &peer, reply);
	}
}

void crumbs_frame(crumbs_context *ctx)
{
	if (!ctx)
		return;
	int64_t now = now_ns();
	int state = atomic_load(&ctx->state);

	if (state == STATE_CAPTURING) {
		ctx->capture_end_ns = now;
		calibrate(ctx, false);
		atomic_store(&ctx->state, STATE_RESOLVING);
		readback_start(ctx);
	}
	ctx->frame++;
	ctx->frame_begin_ns = now;
	ctx->submitted = false;
	if (state == STATE_PREROLL)
		start_capture(ctx, now);

	if (atomic_load(&ctx->state) == STATE_RESOLVING && resolve(ctx, false))
		atomic_store(&ctx->state, STATE_WRITING);
	if (atomic_load(&ctx->state) == STATE_WRITING && output_done(ctx, false))
		atomic_store(&ctx->state, STATE_IDLE);
	poll_trigger(ctx);
	/* A capture asked for frame N: frame N-1 is its pre-roll. The settings
	 * were taken when it was asked for. */
	if (ctx->capture_at != UINT64_MAX && ctx->frame + 1 >= ctx->capture_at) {
		if (ctx->frame + 1 == ctx->capture_at && atomic_load(&ctx->state) == STATE_IDLE)
			begin_preroll(ctx);
		else
			ctx_log(ctx, CRUMBS_LOG_WARNING, "the capture of frame %llu could not start: "
				"another was under way", (unsigned long long)ctx->capture_at);
		ctx->capture_at = UINT64_MAX;
	}
}

int crumbs_detail(const crumbs_context *ctx)
{
	if (!ctx)
		return -1;
	if (atomic_load(&((crumbs_context *)(uintptr_t)ctx)->state) == STATE_CAPTURING)
		return CRUMBS_DETAIL_MAX;
	return ctx->mirror_labels - 1;
}

const char *crumbs_last_capture(const crumbs_context *ctx)
{
	return ctx ? ctx->last_capture : NULL;
}

void frame_init(crumbs_context *ctx)
{
	/* A scripted run asks for its capture in the environment. */
	const char *at = ctx->under_layer ? NULL : getenv("CRUMBS_CAPTURE_FRAME");
	if (at && *at) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(at, &end, 10);
		if (*end || errno || at[0] == '-')
			ctx_log(ctx, CRUMBS_LOG_WARNING, "CRUMBS_CAPTURE_FRAME='%s' is not a frame number",
				at);
		else
			ctx->capture_at = n;
	}
	if (ctx->capture_at == 0) {
		/* Frame 0 begins now: no pre-roll to learn when the queues
		 * were last busy, which they were not. */
		ctx->capture_at = UINT64_MAX;
		begin_preroll(ctx);
		start_capture(ctx, ctx->frame_begin_ns);
	} else if (ctx->capture_at == 1) {
		ctx->capture_at = UINT64_MAX;
		begin_preroll(ctx);
	}
}

void frame_finish(crumbs_context *ctx)
{
	int state = atomic_load(&ctx->state);
	if (!ctx->output)
		return; /* a creation that failed: no capture was begun */
	if (state == STATE_CAPTURING) {
		ctx->capture_end_ns = now_ns();
		calibrate(ctx, false);
		state = STATE_RESOLVING;
		readback_start(ctx);
	}
	if (state == STATE_RESOLVING && ctx->queues && ctx->handles) {
		/* The program is done with the device, and what it submitted is
		 * done: the copies of the results (submitted just above when
		 * the capture frame ends here) may be waited for, so that a
		 * capture of the program's last frame is whole. */
		if (!ctx->device_lost)
			readback_wait(ctx);
		resolve(ctx, true);
		state = STATE_WRITING;
	}
	if (state == STATE_WRITING)
		output_done(ctx, true);
}
