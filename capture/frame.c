/* SPDX-License-Identifier: MIT */
/*
 * frame.c: frames and the state machine of runs: crumbs_frame moves a run
 * (a one-frame capture is a run of one frame) from its request through the
 * pre-roll and its frames, each in a capture set that is recorded, copied,
 * read back and handed to the output thread while later frames are
 * recorded in the next sets, and back to idle once the file is written.
 * Requests come from the API, the environment, the console command and
 * `crumbs trigger`.
 */
#include "capture_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A run's frame looked at `age` frames after it ended was not ready: the
 * GPU runs that far behind, and frames are looked at a frame later from
 * now on (up to CAPTURE_SETS - 2, where they would be taken whatever
 * they hold a frame after), saving each frame a look that finds nothing.
 * Every LOOK_PROBE frames, a frame earlier is tried again.
 */
#define LOOK_MIN 2
#define LOOK_PROBE 64

FRAME_PATH
static void look_later(crumbs_context *ctx, uint64_t age)
{
	if (ctx->set_count > 1 && age == ctx->look_age && ctx->look_age < CAPTURE_SETS - 2) {
		ctx->look_age++;
		ctx->looked = 0;
	}
}

FRAME_PATH
static void looked(crumbs_context *ctx)
{
	if (++ctx->looked >= LOOK_PROBE && ctx->look_age > LOOK_MIN) {
		ctx->look_age--;
		ctx->looked = 0;
	}
}

/* The sets a run of `count` needs, with their memory. */
static enum crumbs_result sets_ready(crumbs_context *ctx, uint32_t count)
{
	for (uint32_t k = 0; k < count; k++) {
		struct capture_set *set = &ctx->sets[k];
		enum crumbs_result r = CRUMBS_OK;
		if (!set->handles)
			r = store_set_init(ctx, set);
		if (r == CRUMBS_OK && !set->submit_cmds)
			r = submit_set_init(ctx, set);
		if (r != CRUMBS_OK)
			return r;
	}
	return CRUMBS_OK;
}

/* The rest of this frame is the pre-roll of a run of frames first to last
 * at `detail` in `sets` sets: the query slots are reset, and each
 * submission's end is timed so the first frame knows when each queue was
 * last busy. */
static void begin_preroll(crumbs_context *ctx, uint64_t first, uint64_t last, int detail,
			  uint32_t sets)
{
	ctx->run_first = first;
	ctx->run_last = last;
	ctx->run_detail = detail;
	ctx->set_count = sets;
	ctx->run_stop = false;
	ctx->run_skipped = 0;
	ctx->run_lag = 0;
	ctx->order_count = 0;
	ctx->look_age = LOOK_MIN;
	ctx->looked = 0;
	pools_preroll(ctx, sets);
	calibrate_forget(ctx);
	for (uint32_t k = 0; k < sets; k++) {
		atomic_store(&ctx->sets[k].phase, SET_FREE);
		ctx->sets[k].used = false;
	}
	ctx->has_peer = false;
	ctx->device_lost = false;
	output_begin(ctx);
	atomic_store(&ctx->state, STATE_PREROLL);
}

/*
 * Reads back what is available of set's (the oldest resolving); when all
 * is (or time is up, or the device is lost, or `force`), hands it to the
 * output thread, with `now` written before it returns, and returns true.
 */
FRAME_PATH
static bool resolve(crumbs_context *ctx, struct capture_set *set, bool force, bool now)
{
	bool lost;
	bool ready = readback_poll(ctx, set, &lost);
	/* By time, not frames: a program may run many fast frames while the
	 * GPU still works through a long one. A run's frame is given up
	 * when its set is needed again (force). */
	bool late = now_ns() - set->end_ns >= RESOLVE_NS;
	if (!ready && !force && !lost && !late)
		return false;
	standing_unhold(ctx, set);

	set->flags = 0;
	if (lost) {
		set->flags |= CRUMBS_FRAME_DEVICE_LOST;
		if (!ctx->device_lost || ctx->set_count == 1)
			ctx_log(ctx, CRUMBS_LOG_ERROR, "the device was lost during the capture of frame "
				"%llu; writing what was resolved", (unsigned long long)set->frame);
		ctx->device_lost = true;
	} else if (!ready) {
		set->flags |= CRUMBS_FRAME_INCOMPLETE;
		/* A run counts them in its last message. */
		if (ctx->set_count == 1)
			ctx_log(ctx, CRUMBS_LOG_WARNING, "some timestamps of frame %llu never became "
				"available (a command buffer recorded but not submitted?); writing "
				"the rest", (unsigned long long)set->frame);
	}
	ctx->order_count--;
	memmove(ctx->order, ctx->order + 1, sizeof(ctx->order[0]) * ctx->order_count);
	output_write(ctx, set, now);
	return true;
}

/* Resolves the sets in frame order while they are ready; those up to
 * `upto` (when it is resolving) whatever they hold, and so a run's set
 * whose frame began CAPTURE_SETS - 1 frames ago: it is needed again next
 * frame, and the output thread then has a frame to write it. */
FRAME_PATH
static void resolve_ready(crumbs_context *ctx, struct capture_set *upto)
{
	uint32_t force = 0;
	for (uint32_t i = 0; upto && i < ctx->order_count; i++)
		if (ctx->order[i] == upto)
			force = i + 1;
	while (ctx->order_count) {
		uint64_t age = ctx->frame - ctx->order[0]->frame;
		bool forced = force > 0 || (ctx->set_count > 1 && age >= CAPTURE_SETS - 1);
		/* A run's frame that has just ended is not looked at yet: its
		 * results are hardly ever back, and each look costs microseconds
		 * of driver calls. */
		if (!forced && ctx->set_count > 1 && age < ctx->look_age)
			break;
		if (!resolve(ctx, ctx->order[0], forced, false)) {
			look_later(ctx, age);
			break;
		}
		looked(ctx);
		if (force)
			force--;
	}
}

/* The current frame, begun at `now`, is captured in its set; the run's
 * first frame, just after the pre-roll, with `first`. */
FRAME_PATH
static void start_frame(crumbs_context *ctx, int64_t now, bool first)
{
	if (ctx->frame > ctx->run_last || ctx->run_stop || output_stopped(ctx)) {
		atomic_store(&ctx->state, STATE_DRAINING);
		return;
	}
	struct capture_set *set = set_of(ctx, ctx->frame);
	if (atomic_load(&set->phase) == SET_RESOLVING)
		resolve_ready(ctx, set);
	if (atomic_load(&set->phase) == SET_WRITING)
		output_wait_set(ctx, set); /* the CPU's work, bounded: a frame's records */
	/* The frame after this set's last may have read slots of its share
	 * (store_borrow): it is read and written before they are reset. */
	struct capture_set *next = set_of(ctx, set->frame + 1);
	bool lent = set->used && next != set && next->borrows == set &&
		    next->frame == set->frame + 1;
	if (lent && atomic_load(&next->phase) == SET_RESOLVING)
		resolve_ready(ctx, next);
	if (lent && atomic_load(&next->phase) == SET_WRITING)
		output_wait_set(ctx, next);
	bool busy = readback_copy_busy(ctx, set);
	if (busy || (lent && readback_copy_busy(ctx, next))) {
		/* The GPU is a whole set of frames behind: its slots cannot
		 * be reset yet, and crumbs does not wait for it. It has not
		 * finished the frame whose results it still copies: that far
		 * behind, at least. */
		uint64_t lag = ctx->frame - (busy ? set->frame : next->frame);
		if (lag > ctx->run_lag)
			ctx->run_lag = lag;
		if (!ctx->run_skipped++)
			ctx->run_skip_first = ctx->frame;
		ctx->run_skip_last = ctx->frame;
		return;
	}
	/* The pre-roll reset the slots of every set for its first frame. */
	if (set->used)
		pools_set_reuse(ctx, set);
	set->used = true;
	set->borrows = NULL;
	if (!set->recycled)
		store_reset(set);
	set->recycled = false;
	submit_reset(ctx, set);
	set->frame = ctx->frame;
	set->begin_ns = now;
	set->detail = ctx->run_detail;
	set->first = first;
	set->flags = 0;
	set->device_lost = false;
	for (uint32_t i = 0; first && i < ctx->queue_count; i++)
		set->queues[i].ready_slot = ctx->queues[i].ready_slot;
	/* A run's frame starts with the sample that ended the last. */
	calibrate(ctx, set, true, now);
	memory_frame_begin(ctx, set);
	atomic_store(&set->warm, 0);
	atomic_store(&set->phase, SET_RECORDING);
	atomic_store(&ctx->cur, set);
}

/* The current frame ends at `now`: its set's results are copied. */
FRAME_PATH
static void end_frame(crumbs_context *ctx, int64_t now)
{
	struct capture_set *set = atomic_exchange(&ctx->cur, NULL);
	set->end_ns = now;
	__atomic_store_n(&ctx->state_.cpu_detail, -1, __ATOMIC_RELAXED);
	cpu_collect(ctx, set);
	present_collect(ctx, set);
	calibrate(ctx, set, false, now);
	memory_frame_end(ctx, set);
	atomic_store(&set->phase, SET_RESOLVING);
	readback_start(ctx, set);
	ctx->order[ctx->order_count++] = set;
}

/* After the run's frames: once every set is written, the file is closed;
 * once it is, the run is over. */
FRAME_PATH
static void finish_run(crumbs_context *ctx, bool wait)
{
	if (atomic_load(&ctx->state) == STATE_DRAINING && !ctx->order_count) {
		output_end(ctx, wait);
		atomic_store(&ctx->state, STATE_CLOSING);
	}
	if (atomic_load(&ctx->state) != STATE_CLOSING || !output_done(ctx, wait))
		return;
	if (ctx->run_skipped == 1)
		ctx_log(ctx, CRUMBS_LOG_WARNING, "1 frame of the run from frame %llu, frame %llu, was "
			"not recorded: the GPU was %llu frames behind (crumbs drops a frame when the "
			"GPU is %u behind, rather than wait)", (unsigned long long)ctx->run_first,
			(unsigned long long)ctx->run_skip_first, (unsigned long long)ctx->run_lag,
			CAPTURE_SETS);
	else if (ctx->run_skipped)
		ctx_log(ctx, CRUMBS_LOG_WARNING, "%u frames of the run from frame %llu, between "
			"frames %llu and %llu, were not recorded: the GPU was up to %llu frames behind "
			"(crumbs drops a frame when the GPU is %u behind, rather than wait)",
			ctx->run_skipped, (unsigned long long)ctx->run_first,
			(unsigned long long)ctx->run_skip_first, (unsigned long long)ctx->run_skip_last,
			(unsigned long long)ctx->run_lag, CAPTURE_SETS);
	atomic_store(&ctx->state, STATE_IDLE);
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                 */
/* ------------------------------------------------------------------------ */

#define UNDER_LAYER "the crumbs layer records this program: capture with `crumbs trigger PID` " \
	"or `crumbs capture`"

/* What is asked for or under way, in err, for a request that comes
 * meanwhile: its frame, or its run's frames. */
static void say_busy(const crumbs_context *ctx, char *err, size_t n)
{
	bool asked = ctx->capture_at != UINT64_MAX;
	uint64_t first = asked ? ctx->capture_at : ctx->run_first;
	uint64_t last = asked ? ctx->ask_last : ctx->run_last;
	const char *what = asked ? "asked for" : "under way";
	if ((asked ? ctx->ask_sets : ctx->set_count) == 1)
		snprintf(err, n, "a capture is already %s (frame %llu)", what,
			 (unsigned long long)first);
	else if (last == CRUMBS_RECORD_OPEN)
		snprintf(err, n, "a run is already %s (frames %llu to the end)", what,
			 (unsigned long long)first);
	else
		snprintf(err, n, "a run is already %s (frames %llu to %llu)", what,
			 (unsigned long long)first, (unsigned long long)last);
}

/*
 * Asks for a run of frames first to last at `detail` in `sets` sets, with
 * the tables' settings; `err` gets what went wrong. Frame first - 1 is its
 * pre-roll: a later one waits in capture_at.
 */
static enum crumbs_result ask(crumbs_context *ctx, uint64_t first, uint64_t last, int detail,
			      uint32_t sets, const char *settings, char *err, size_t n)
{
	if (ctx->under_layer) {
		snprintf(err, n, UNDER_LAYER);
		return CRUMBS_ERROR_BAD_STATE;
	}
	if (cpu_forked(ctx)) {
		snprintf(err, n, "this process was forked from the one that made the context: "
			 "it records nothing");
		return CRUMBS_ERROR_BAD_STATE;
	}
	if (atomic_load(&ctx->state) != STATE_IDLE || ctx->capture_at != UINT64_MAX) {
		say_busy(ctx, err, n);
		return CRUMBS_ERROR_BAD_STATE;
	}
	/* A frame given up on (its results late, or its device said to be
	 * lost) may have left its copy on the GPU, reading query slots the
	 * pre-roll resets: resetting a query that pending work uses is
	 * undefined, and crashes some drivers. */
	for (uint32_t k = 0; k < CAPTURE_SETS; k++)
		if (readback_copy_busy(ctx, &ctx->sets[k])) {
			snprintf(err, n, "the results of an earlier capture are still being copied "
				 "on the GPU: ask again once it is done");
			return CRUMBS_ERROR_BAD_STATE;
		}
	if (detail < 0 || detail > CRUMBS_DETAIL_MAX || last < first) {
		snprintf(err, n, "no such run: frames %llu to %llu at detail %d",
			 (unsigned long long)first, (unsigned long long)last, detail);
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	}
	bool now = first == 0 && ctx->frame == 0 && !ctx->submitted;
	if (!now && first <= ctx->frame) {
		snprintf(err, n, "frame %llu has begun (this is frame %llu)",
			 (unsigned long long)first, (unsigned long long)ctx->frame);
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	}
	if (output_settings(ctx, settings, err, n) != 0)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	/* A run asked for with --counters (crumbs trigger PID --frames N
	 * --counters, profilegpu --frames N --counters) counts. */
	ctx->run_counters = sets > 1 && output_counters(ctx);
	if (sets_ready(ctx, sets) != CRUMBS_OK) {
		snprintf(err, n, "out of memory for a run's frames");
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	/* From now on, so that a frame can show the tasks begun before it. */
	cpu_tasks_on(ctx);
	if (now) {
		/* Nothing of frame 0 has run: it can still be captured whole,
		 * without a pre-roll to learn when the queues were last busy,
		 * which they were not. */
		begin_preroll(ctx, first, last, detail, sets);
		atomic_store(&ctx->state, STATE_RUNNING);
		start_frame(ctx, ctx->frame_begin_ns, true);
		struct capture_set *cur = atomic_load(&ctx->cur);
		if (cur)
			__atomic_store_n(&ctx->state_.cpu_detail, cur->detail, __ATOMIC_RELAXED);
	} else if (first == ctx->frame + 1) {
		begin_preroll(ctx, first, last, detail, sets);
	} else {
		ctx->capture_at = first;
		ctx->ask_last = last;
		ctx->ask_detail = detail;
		ctx->ask_sets = sets;
	}
	return CRUMBS_OK;
}

static enum crumbs_result logged(crumbs_context *ctx, enum crumbs_result r, const char *what,
				 const char *err)
{
	if (r != CRUMBS_OK)
		ctx_log(ctx, CRUMBS_LOG_WARNING, "%s: %s", what, err);
	return r;
}

enum crumbs_result crumbs_capture_at(crumbs_context *ctx, uint64_t frame, const char *settings)
{
	char err[300];
	return logged(ctx, ask(ctx, frame, frame, CRUMBS_DETAIL_MAX, 1, settings, err, sizeof(err)),
		      "profilegpu", err);
}

enum crumbs_result crumbs_capture(crumbs_context *ctx, const char *settings)
{
	char err[300];
	return logged(ctx, ask(ctx, ctx->frame + 1, ctx->frame + 1, CRUMBS_DETAIL_MAX, 1, settings,
			       err, sizeof(err)), "profilegpu", err);
}

enum crumbs_result crumbs_record(crumbs_context *ctx, uint64_t first, uint64_t last, int detail)
{
	char err[300];
	if (!ctx)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	return logged(ctx, ask(ctx, first, last, detail, CAPTURE_SETS, NULL, err, sizeof(err)),
		      "crumbs_record", err);
}

enum crumbs_result crumbs_record_stop(crumbs_context *ctx)
{
	if (!ctx)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	int state = atomic_load(&ctx->state);
	if (ctx->capture_at != UINT64_MAX && state == STATE_IDLE) {
		ctx->capture_at = UINT64_MAX; /* asked for, not begun */
		return CRUMBS_OK;
	}
	if (state != STATE_PREROLL && state != STATE_RUNNING) {
		ctx_log(ctx, CRUMBS_LOG_WARNING, "crumbs_record_stop: no run is under way");
		return CRUMBS_ERROR_BAD_STATE;
	}
	ctx->run_stop = true;
	return CRUMBS_OK;
}

/*
 * Takes the run's options out of a console command's settings: `--frames
 * N` and `--detail D` (or `--frames=N`, `--detail=D`), where an argument
 * begins by the rule trigger_split() reads them with (trigger/TRIGGER.md:
 * single quotes, and a backslash outside them); the rest stays for the
 * tables. Returns -1 with a message in err when a value is bad.
 */
static int run_options(char *line, uint64_t *frames, int *detail, char *err, size_t n)
{
	bool quoted = false, at_word = true;
	for (char *p = line; *p;) {
		if (quoted) {
			quoted = *p++ != '\'';
			continue;
		}
		if (*p == ' ' || *p == '\t') {
			at_word = true;
			p++;
			continue;
		}
		bool word_start = at_word;
		at_word = false;
		if (*p == '\'') {
			quoted = true;
			p++;
			continue;
		}
		if (*p == '\\') {
			p += p[1] ? 2 : 1;
			continue;
		}
		size_t len = strncmp(p, "--frames", 8) == 0 ? 8 : strncmp(p, "--detail", 8) == 0 ? 8 : 0;
		if (!word_start || !len ||
		    (p[len] != '=' && p[len] != ' ' && p[len] != '\t' && p[len])) {
			p++;
			continue;
		}
		bool is_frames = p[2] == 'f';
		char *start = p, *v = p + len;
		while (*v == '=' || *v == ' ' || *v == '\t')
			v++;
		uint64_t x;
		const char *end = read_u64(v, is_frames ? TRIGGER_MAX_RUN_FRAMES : CRUMBS_DETAIL_MAX,
					   &x);
		if (!end || (*end && *end != ' ' && *end != '\t') || (is_frames && x < 1)) {
			snprintf(err, n, "%s takes %s", is_frames ? "--frames" : "--detail",
				 is_frames ? "a number of frames from 1 to "
					     TRIGGER_TEXT(TRIGGER_MAX_RUN_FRAMES) :
				 "a detail level from 0 to 3");
			return -1;
		}
		if (is_frames)
			*frames = x;
		else
			*detail = (int)x;
		memset(start, ' ', (size_t)(end - start));
		p = v + (end - v);
	}
	return 0;
}

int console_parse(const char *line, struct console_request *req, char *err, size_t n)
{
	const char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t word = strcspn(p, " \t");
	const char *rest = p + word;
	while (*rest == ' ' || *rest == '\t')
		rest++;
	req->help = false;
	req->frames = 0;
	req->detail = -1;
	req->settings[0] = '\0';
	if (word == 10 && strncmp(p, "profilegpu", 10) == 0) {
		if (strlen(rest) >= sizeof(req->settings)) {
			snprintf(err, n, "the settings are longer than %d bytes", TRIGGER_MAX_COMMAND - 1);
			return -1;
		}
		snprintf(req->settings, sizeof(req->settings), "%s", rest);
		if (run_options(req->settings, &req->frames, &req->detail, err, n) != 0)
			return -1;
		if (!req->frames && req->detail >= 0) {
			snprintf(err, n, "--detail is for runs: give --frames N too");
			return -1;
		}
		return 0;
	}
	if (word == 4 && strncmp(p, "help", 4) == 0 && !*rest) {
		req->help = true;
		return 0;
	}
	snprintf(err, n, "unknown command '%.*s' (try 'help')", (int)(word < 64 ? word : 64), p);
	return -1;
}

/* Runs a console command line; `err` gets a failure's message. */
static enum crumbs_result command(crumbs_context *ctx, const char *line, char *err, size_t n)
{
	struct console_request req;
	if (console_parse(line, &req, err, n) != 0)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (req.help) {
		profilegpu_help(ctx);
		return CRUMBS_OK;
	}
	uint64_t first = ctx->frame + 1;
	if (!req.frames)
		return ask(ctx, first, first, CRUMBS_DETAIL_MAX, 1, req.settings, err, n);
	return ask(ctx, first, first + req.frames - 1, req.detail < 0 ? 1 : req.detail,
		   CAPTURE_SETS, req.settings, err, n);
}

enum crumbs_result crumbs_command(crumbs_context *ctx, const char *command_line)
{
	char err[300];
	enum crumbs_result r = command(ctx, command_line ? command_line : "", err, sizeof(err));
	if (r != CRUMBS_OK)
		ctx_log(ctx, CRUMBS_LOG_WARNING, "%s", err);
	return r;
}

/* Requests that came through `crumbs trigger`, looked for at most every
 * TRIGGER_POLL_NS: a read of the socket costs several microseconds,
 * which every frame would pay. */
#define TRIGGER_POLL_NS 100000000ll
/* Requests served in one look: a sender that never stops cannot stall a
 * frame. */
#define TRIGGER_LOOK_REQUESTS 4

static void poll_trigger(crumbs_context *ctx, int64_t now)
{
	char line[TRIGGER_MAX_COMMAND];
	struct trigger_peer peer;
	int served = 0;

	if (ctx->trigger.fd < 0 || now - ctx->trigger_polled_ns < TRIGGER_POLL_NS)
		return;
	ctx->trigger_polled_ns = now;
	for (; served < TRIGGER_LOOK_REQUESTS &&
	       trigger_poll(&ctx->trigger, line, sizeof(line), &peer) == 1; served++) {
		char err[300];
		enum crumbs_result r = command(ctx, line, err, sizeof(err));
		if (r == CRUMBS_OK && atomic_load(&ctx->state) == STATE_PREROLL) {
			trigger_answer_queued(&ctx->trigger, &peer, ctx->set_count != 1,
					      ctx->run_first, ctx->run_last);
			ctx->peer = peer;
			ctx->has_peer = true;
		} else if (r == CRUMBS_OK) {
			trigger_answer_error(&ctx->trigger, &peer, "not a capture request");
		} else {
			trigger_answer_error(&ctx->trigger, &peer, "%s", err);
		}
	}
	/* More may wait (many requesters at once, each sending once the
	 * socket has room): the next frame looks again, so every one is
	 * answered within its timeout, a few a frame. */
	if (served == TRIGGER_LOOK_REQUESTS)
		ctx->trigger_polled_ns = now - TRIGGER_POLL_NS;
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

FRAME_PATH
void crumbs_frame(crumbs_context *ctx)
{
	if (!ctx)
		return;
	int64_t now = now_ns();
	int state = atomic_load(&ctx->state);

	if (cpu_forked(ctx))
		return; /* its output thread, and its devices, are the parent's */
	struct capture_set *cur = atomic_load(&ctx->cur);
	if (cur) {
		path_warm(cur, PATH_FRAME);
		end_frame(ctx, now);
	} else if (__atomic_load_n(&ctx->state_.tasks, __ATOMIC_RELAXED)) {
		cpu_drain(ctx, now);
	}
	ctx->frame++;
	ctx->frame_begin_ns = now;
	ctx->submitted = false;
	if (state == STATE_PREROLL) {
		atomic_store(&ctx->state, STATE_RUNNING);
		cpu_start(ctx);
		start_frame(ctx, now, true);
	} else if (state == STATE_RUNNING) {
		start_frame(ctx, now, false);
	}
	if ((cur = atomic_load(&ctx->cur)) != NULL)
		__atomic_store_n(&ctx->state_.cpu_detail, cur->detail, __ATOMIC_RELAXED);
	resolve_ready(ctx, NULL);
	finish_run(ctx, false);
	poll_trigger(ctx, now);
	/* A run asked for from frame N: frame N-1 is its pre-roll. Its
	 * settings were taken when it was asked for. */
	if (ctx->capture_at != UINT64_MAX && ctx->frame + 1 >= ctx->capture_at) {
		if (ctx->frame + 1 == ctx->capture_at && atomic_load(&ctx->state) == STATE_IDLE)
			begin_preroll(ctx, ctx->capture_at, ctx->ask_last, ctx->ask_detail,
				      ctx->ask_sets);
		else
			ctx_log(ctx, CRUMBS_LOG_WARNING, "the capture of frame %llu could not start: "
				"another was under way", (unsigned long long)ctx->capture_at);
		ctx->capture_at = UINT64_MAX;
	}
	state = atomic_load(&ctx->state);
	if (__atomic_load_n(&ctx->state_.tasks, __ATOMIC_RELAXED) && state != STATE_PREROLL &&
	    state != STATE_RUNNING && ctx->capture_at == UINT64_MAX)
		cpu_tasks_off(ctx);
}

int crumbs_detail(const crumbs_context *ctx)
{
	if (!ctx)
		return -1;
	struct capture_set *set = atomic_load(&((crumbs_context *)(uintptr_t)ctx)->cur);
	if (set)
		return set->detail;
	return ctx->mirror_labels - 1;
}

const char *crumbs_last_capture(const crumbs_context *ctx)
{
	return ctx ? ctx->last_capture : NULL;
}

/* A frame number of the environment's variable `name`: 0, or -1 with why
 * not in err. */
static int env_frame(const char *name, const char *v, uint64_t *out, char *err, size_t n)
{
	uint64_t x;
	const char *end = read_u64(v, UINT64_MAX, &x);
	if (!end || *end) {
		snprintf(err, n, "%s: '%s' is not a frame number", name, v);
		return -1;
	}
	*out = x;
	return 0;
}

int env_capture_frame(const char *v, uint64_t *frame, char *err, size_t n)
{
	return env_frame("CRUMBS_CAPTURE_FRAME", v, frame, err, n);
}

int env_record(const char *v, uint64_t *first, uint64_t *last, int *detail, char *err,
	       size_t n)
{
	char buf[96], *colon, *second;
	snprintf(buf, sizeof(buf), "%s", v);
	if (strlen(v) >= sizeof(buf) || !(colon = strchr(buf, ':'))) {
		snprintf(err, n, "CRUMBS_RECORD='%s' is not FIRST:LAST[:DETAIL] (LAST empty: until "
			 "the program ends)", v);
		return -1;
	}
	*colon = '\0';
	second = colon + 1;
	char *third = strchr(second, ':');
	if (third)
		*third++ = '\0';
	if (third && strchr(third, ':')) {
		snprintf(err, n, "CRUMBS_RECORD='%s' is not FIRST:LAST[:DETAIL]", v);
		return -1;
	}
	uint64_t a, b = CRUMBS_RECORD_OPEN, d = 1;
	if (env_frame("CRUMBS_RECORD", buf, &a, err, n) != 0 ||
	    (*second && env_frame("CRUMBS_RECORD", second, &b, err, n) != 0) ||
	    (third && env_frame("CRUMBS_RECORD", third, &d, err, n) != 0))
		return -1;
	if (d > CRUMBS_DETAIL_MAX || b < a) {
		snprintf(err, n, "CRUMBS_RECORD='%s': %s", v, d > CRUMBS_DETAIL_MAX ?
			 "the detail level goes from 0 to 3" : "the last frame comes before the first");
		return -1;
	}
	*first = a;
	*last = b;
	*detail = (int)d;
	return 0;
}

void frame_init(crumbs_context *ctx)
{
	char err[1024]; /* room for the value quoted, as the log has */
	uint64_t first, last;
	int detail;
	/* A scripted run asks in the environment. */
	const char *at = ctx->under_layer ? NULL : getenv("CRUMBS_CAPTURE_FRAME");
	const char *run = ctx->under_layer ? NULL : getenv("CRUMBS_RECORD");
	if (run && *run) {
		if (at && *at)
			ctx_log(ctx, CRUMBS_LOG_WARNING, "CRUMBS_RECORD and CRUMBS_CAPTURE_FRAME are both "
				"set; recording the run");
		if (env_record(run, &first, &last, &detail, err, sizeof(err)) != 0)
			ctx_log(ctx, CRUMBS_LOG_WARNING, "%s", err);
		else
			logged(ctx, ask(ctx, first, last, detail, CAPTURE_SETS, NULL, err, sizeof(err)),
			       "CRUMBS_RECORD", err);
	} else if (at && *at) {
		if (env_capture_frame(at, &first, err, sizeof(err)) != 0)
			ctx_log(ctx, CRUMBS_LOG_WARNING, "%s", err);
		else
			logged(ctx, ask(ctx, first, first, CRUMBS_DETAIL_MAX, 1, NULL, err, sizeof(err)),
			       "CRUMBS_CAPTURE_FRAME", err);
	}
}

void frame_finish(crumbs_context *ctx)
{
	if (!ctx->output)
		return; /* a creation that failed: no capture was begun */
	int state = atomic_load(&ctx->state);
	if (state == STATE_IDLE || state == STATE_PREROLL)
		return;
	if (atomic_load(&ctx->cur))
		end_frame(ctx, now_ns());
	if (state == STATE_RUNNING)
		atomic_store(&ctx->state, STATE_DRAINING);
	/* The program is done with the device, and what it submitted is
	 * done: the copies of the results (submitted just above when a frame
	 * ends here) may be waited for, so that a capture of the program's
	 * last frame is whole. */
	while (ctx->order_count) {
		if (!ctx->device_lost)
			readback_wait(ctx, ctx->order[0]);
		resolve(ctx, ctx->order[0], true, true);
	}
	finish_run(ctx, true);
}

bool recorder_in_preroll(const crumbs_context *ctx)
{
	return atomic_load(&ctx->state) == STATE_PREROLL;
}

int recorder_run_detail(const crumbs_context *ctx)
{
	int state = atomic_load(&ctx->state);
	if ((state != STATE_PREROLL && state != STATE_RUNNING) || ctx->set_count < 2)
		return -1;
	return ctx->run_detail;
}

bool recorder_first_frame(const crumbs_context *ctx)
{
	struct capture_set *set = atomic_load(&ctx->cur);
	return set && set->first;
}
