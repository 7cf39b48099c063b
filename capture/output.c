/*
 * output.c: what becomes of a resolved capture: the capture file, written
 * with the file writer (writer.c), read back for its profilegpu tables,
 * and the messages for the program's log, all on the output thread, off
 * the program's; and the settings of those tables. The only file of the
 * recorder that uses analyze/ and report/.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "capture_internal.h"
#include "../analyze/analyze.h"
#include "../report/report.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Compressing, writing and reading the capture back for its tables take a
 * millisecond or more: on the program's thread that would be a hitch a
 * few frames after every capture. The output thread reads only what the
 * capture left, which nothing changes until the capture is back to
 * STATE_IDLE. It waits from crumbs_create on, since starting a thread
 * costs the caller about 0.1 ms.
 */
struct output {
	crumbs_context *ctx;
	struct report_settings settings; /* of the next capture's tables */
	pthread_t thread;
	bool in_place;          /* no thread: captures are written in place */
	pthread_mutex_t lock;   /* job, quit */
	pthread_cond_t wake;    /* either changed */
	bool job;               /* a capture to write or being written */
	bool quit;
	struct output *next;    /* the list of outputs with a thread */
	enum crumbs_result result;
	uint32_t flags;
	char *path;             /* the capture file's */
	struct sbuf log;        /* messages: a level byte, the text, a NUL */
};

/* ------------------------------------------------------------------------ */
/* The capture file                                                         */
/* ------------------------------------------------------------------------ */

static enum crumbs_result write_events(crumbs_context *ctx, crumbs_writer *w,
				       const struct crumbs_cmd *cmd, int depth)
{
	const struct queue_state *q = &ctx->queues[cmd->queue];
	char name[4097];
	enum crumbs_result r = CRUMBS_OK;

	for (const struct event_block *b = cmd->first; b; b = b->next) {
		for (uint32_t i = 0; i < b->count && r == CRUMBS_OK; i++) {
			const struct event *e = &b->events[i];
			switch (e->type) {
			case EVENT_BEGIN:
				snprintf(name, sizeof(name), "%.*s", (int)e->u.name.len,
					 ctx->names + e->u.name.offset);
				r = crumbs_writer_scope_begin(w, name, e->level, readback_ticks(q, e->slot));
				break;
			case EVENT_PASS:
				snprintf(name, sizeof(name), "%.*s", (int)e->u.name.len,
					 ctx->names + e->u.name.offset);
				r = crumbs_writer_event_begin(w, (enum crumbs_event_kind)e->level,
							      name[0] ? name : NULL,
							      readback_ticks(q, e->slot));
				break;
			case EVENT_LEAF: {
				const struct counts_record *c = &ctx->counts[e->u.counts];
				snprintf(name, sizeof(name), "%.*s", (int)c->name.len,
					 ctx->names + c->name.offset);
				struct crumbs_leaf_desc leaf = {
					(enum crumbs_event_kind)e->level, name[0] ? name : NULL, c->draws,
					c->dispatches, c->prims, c->verts, readback_ticks(q, e->slot),
					e->slot == NO_SLOT ? CRUMBS_NO_TICKS : readback_ticks(q, e->slot + 1)
				};
				r = crumbs_writer_leaf(w, &leaf);
				break;
			}
			case EVENT_END:
				r = crumbs_writer_scope_end(w, readback_ticks(q, e->slot));
				break;
			case EVENT_COUNTS: {
				const struct counts_record *c = &ctx->counts[e->u.counts];
				r = crumbs_writer_counts(w, c->draws, c->dispatches, c->prims,
							 c->verts);
				break;
			}
			case EVENT_EXECUTE: {
				const struct crumbs_cmd *s = store_map_find(ctx, e->u.secondary);
				if (s && depth < MAX_EXECUTE_DEPTH)
					r = write_events(ctx, w, s, depth + 1);
				break;
			}
			}
			/* Scopes nested past the format's limit are dropped by
			 * the writer, which counts them; nothing else fails. */
			if (r == CRUMBS_ERROR_LIMIT)
				r = CRUMBS_OK;
		}
	}
	return r;
}

static enum crumbs_result write_capture(crumbs_context *ctx, const char *path, uint32_t flags)
{
	char producer[128];
	crumbs_writer *w;
	enum crumbs_result r;
	uint32_t lost_ops = 0; /* submissions written without their semaphores */

	snprintf(producer, sizeof(producer), "libcrumbs 1.0 (%s)", ctx->program_name);
	struct crumbs_writer_desc desc = { 0 };
	desc.path = path;
	desc.producer = producer;
	if ((r = crumbs_writer_open(&desc, &w)) != CRUMBS_OK)
		return r;

	for (uint32_t i = 0; i < ctx->device_count && r == CRUMBS_OK; i++) {
		const struct device_state *d = &ctx->devices[i];
		struct crumbs_gpu_desc g = { d->props.deviceName, "", d->props.vendorID,
					     d->props.deviceID, d->props.driverVersion,
					     d->props.apiVersion };
		r = crumbs_writer_add_gpu(w, &g, NULL);
		if (r == CRUMBS_OK && d->bracketed.valid)
			r = crumbs_writer_calibration(w, i, d->bracketed.ticks,
						      (uint64_t)d->bracketed.cpu_ns,
						      d->bracketed.deviation_ns);
	}
	for (uint32_t i = 0; i < ctx->queue_count && r == CRUMBS_OK; i++) {
		const struct queue_state *q = &ctx->queues[i];
		struct crumbs_queue_desc qd = { q->device, q->family, q->index, q->flags,
						ctx->devices[q->device].props.limits.timestampPeriod,
						q->valid_bits };
		if (!(qd.timestamp_period > 0.0f))
			qd.timestamp_period = 1.0f;
		r = crumbs_writer_add_queue(w, &qd, NULL);
	}
	if (r == CRUMBS_OK)
		r = crumbs_writer_frame_begin(w, ctx->capture_frame, (uint64_t)ctx->capture_begin_ns);
	for (uint32_t i = 0; i < ctx->device_count && r == CRUMBS_OK; i++) {
		const struct device_state *d = &ctx->devices[i];
		const struct calibration_sample *samples[2] = { &d->start, &d->end };
		for (int k = 0; k < 2 && r == CRUMBS_OK; k++)
			if (samples[k]->valid)
				r = crumbs_writer_calibration(w, i, samples[k]->ticks,
							      (uint64_t)samples[k]->cpu_ns,
							      samples[k]->deviation_ns);
	}
	for (uint32_t i = 0; i < ctx->queue_count && r == CRUMBS_OK; i++) {
		const struct queue_state *q = &ctx->queues[i];
		if (q->valid_bits && q->ready_slot != NO_SLOT)
			r = crumbs_writer_queue_ready(w, i, readback_ticks(q, q->ready_slot));
	}
	for (uint32_t i = 0; i < ctx->queue_count && r == CRUMBS_OK; i++) {
		const struct queue_state *q = &ctx->queues[i];
		for (uint32_t k = 0; k < q->submit_count && r == CRUMBS_OK; k++) {
			const struct submit_record *s = &q->submits[k];
			const struct crumbs_semaphore_op *ops = ctx->ops + s->first_op;
			struct crumbs_submit_desc sd = { i, (uint64_t)s->cpu_ns, readback_ticks(q, s->begin_slot),
							 ops, s->wait_count, ops + s->wait_count,
							 s->signal_count };
			r = crumbs_writer_submit_begin(w, &sd);
			if (r == CRUMBS_ERROR_LIMIT) {
				/* More semaphore operations than the format
				 * holds: the work is kept, its waits and
				 * signals are not, and the frame says so. */
				sd.wait_count = sd.signal_count = 0;
				lost_ops++;
				r = crumbs_writer_submit_begin(w, &sd);
			}
			for (uint32_t c = 0; c < s->cmd_count && r == CRUMBS_OK; c++)
				r = write_events(ctx, w, ctx->submit_cmds[s->first_cmd + c], 0);
			if (r == CRUMBS_OK)
				r = crumbs_writer_submit_end(w, readback_ticks(q, s->end_slot));
		}
	}
	for (uint32_t i = 0; i < ctx->host_signal_count && r == CRUMBS_OK; i++) {
		const struct host_signal *h = &ctx->host_signals[i];
		r = crumbs_writer_host_signal(w, h->semaphore, h->value, (uint64_t)h->cpu_ns);
	}
	uint32_t dropped = atomic_load(&ctx->dropped) + lost_ops;
	if (dropped)
		flags |= CRUMBS_FRAME_SCOPES_DROPPED;
	if (r == CRUMBS_OK)
		r = crumbs_writer_frame_end(w, (uint64_t)ctx->capture_end_ns,
					    flags | CRUMBS_FRAME_FULL_DETAIL, dropped);
	if (r != CRUMBS_OK) {
		crumbs_writer_free(w);
		return r;
	}
	return crumbs_writer_close(w);
}

/* ------------------------------------------------------------------------ */
/* The tables                                                               */
/* ------------------------------------------------------------------------ */

/* A message for the program's log, handed over when the output is done. */
static void log_later(struct output *o, enum crumbs_log_level level, const char *text, size_t len)
{
	char byte = (char)level;
	sbuf_add(&o->log, &byte, 1);
	sbuf_add(&o->log, text, len);
	sbuf_add(&o->log, "", 1);
}

static int table_sink(void *user, const char *text, size_t len)
{
	/* One message per block, without its last line break. */
	while (len > 0 && text[len - 1] == '\n')
		len--;
	log_later(user, CRUMBS_LOG_INFO, text, len);
	return 0;
}

static void print_table(struct output *o, const char *path)
{
	reader *c = NULL;
	struct analyze_error err;
	const struct frame *f;
	struct report_sink sink = { table_sink, o };
	char msg[PATH_MAX + 400];

	if (reader_open_file(path, &c, &err) != CRUMBS_OK ||
	    reader_next_frame(c, &f, &err) != CRUMBS_OK || !f) {
		snprintf(msg, sizeof(msg), "cannot read back '%s': %s", path, err.text);
		log_later(o, CRUMBS_LOG_ERROR, msg, strlen(msg));
	} else if (report_frame(&o->settings, reader_meta(c), f, &sink) != 0) {
		snprintf(msg, sizeof(msg), "cannot print the tables of '%s'", path);
		log_later(o, CRUMBS_LOG_ERROR, msg, strlen(msg));
	}
	reader_free(c);
}

int output_settings(crumbs_context *ctx, const char *settings, char *err, size_t n)
{
	char line[TRIGGER_MAX_COMMAND];
	char *argv[256], *positional[256];
	int argc = 0, np = 0;
	struct report_settings s;

	report_settings_init(&s);
	if (settings) {
		if (strlen(settings) >= sizeof(line)) {
			snprintf(err, n, "the settings are longer than %d bytes", TRIGGER_MAX_COMMAND - 1);
			return -1;
		}
		snprintf(line, sizeof(line), "%s", settings);
		argc = trigger_split(line, argv, 256);
		if (argc < 0) {
			snprintf(err, n, "cannot split '%s': unbalanced quotes or over 255 arguments",
				 settings);
			return -1;
		}
	}
	struct option_table t = { report_options, report_option_count, &s };
	if (options_parse(&t, 1, argc, argv, false, positional, &np, err, n) != 0 ||
	    (np > 0 && snprintf(err, n, "unexpected argument '%s'", positional[0]) > 0) ||
	    report_settings_prepare(&s, err, n) != CRUMBS_OK) {
		report_settings_release(&s);
		return -1;
	}
	report_settings_release(&ctx->output->settings);
	ctx->output->settings = s;
	return 0;
}

void output_help(crumbs_context *ctx)
{
	struct sbuf b = { 0 };
	struct option_table t = { report_options, report_option_count, NULL };
	sbuf_adds(&b, "profilegpu [settings]: capture the next frame and print its tables; "
		      "settings:\n");
	options_help(&t, 1, &b);
	ctx_log(ctx, CRUMBS_LOG_INFO, "%s", b.data ? b.data : "");
	sbuf_release(&b);
}

/* ------------------------------------------------------------------------ */
/* The output thread                                                        */
/* ------------------------------------------------------------------------ */

/* Writes the capture named by o->path and prints its tables. */
static void run_job(struct output *o)
{
	o->result = write_capture(o->ctx, o->path, o->flags);
	if (o->result == CRUMBS_OK)
		print_table(o, o->path);
}

static void *output_main(void *arg)
{
	struct output *o = arg;
	pthread_mutex_lock(&o->lock);
	for (;;) {
		while (!o->job && !o->quit)
			pthread_cond_wait(&o->wake, &o->lock);
		if (!o->job)
			break;
		pthread_mutex_unlock(&o->lock);
		run_job(o);
		pthread_mutex_lock(&o->lock);
		o->job = false;
		pthread_cond_broadcast(&o->wake);
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

/*
 * A program that exits without crumbs_destroy (many never destroy their
 * Vulkan device) would lose a capture its output thread is still writing:
 * at exit, each thread still at work is waited for, so the file lands.
 * Its tables are not printed then; the program's log may be gone.
 */
static pthread_mutex_t outputs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct output *outputs;   /* those with a thread */
static pthread_once_t outputs_once = PTHREAD_ONCE_INIT;

static void outputs_finish(void)
{
	pthread_mutex_lock(&outputs_lock);
	for (struct output *o = outputs; o; o = o->next) {
		pthread_mutex_lock(&o->lock);
		while (o->job)
			pthread_cond_wait(&o->wake, &o->lock);
		pthread_mutex_unlock(&o->lock);
	}
	pthread_mutex_unlock(&outputs_lock);
}

static void outputs_at_exit(void)
{
	atexit(outputs_finish);
}

bool output_init(crumbs_context *ctx)
{
	sigset_t all, old;
	struct output *o = ctx_alloc(ctx, sizeof(*o));
	if (!o)
		return false;
	if (pthread_mutex_init(&o->lock, NULL) != 0) {
		ctx_free(ctx, o);
		return false;
	}
	if (pthread_cond_init(&o->wake, NULL) != 0) {
		pthread_mutex_destroy(&o->lock);
		ctx_free(ctx, o);
		return false;
	}
	o->ctx = ctx;
	report_settings_init(&o->settings);
	o->in_place = true;
	/* Every signal blocked, so that the program's handlers run on its
	 * own threads. Without a thread, captures are written in place. */
	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old) == 0) {
		o->in_place = pthread_create(&o->thread, NULL, output_main, o) != 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (!o->in_place) {
		pthread_once(&outputs_once, outputs_at_exit);
		pthread_mutex_lock(&outputs_lock);
		o->next = outputs;
		outputs = o;
		pthread_mutex_unlock(&outputs_lock);
	}
	ctx->output = o;
	return true;
}

void output_release(crumbs_context *ctx)
{
	struct output *o = ctx->output;
	if (!o)
		return;
	if (!o->in_place) {
		pthread_mutex_lock(&outputs_lock);
		for (struct output **p = &outputs; *p; p = &(*p)->next)
			if (*p == o) {
				*p = o->next;
				break;
			}
		pthread_mutex_unlock(&outputs_lock);
		pthread_mutex_lock(&o->lock);
		o->quit = true;
		pthread_cond_broadcast(&o->wake);
		pthread_mutex_unlock(&o->lock);
		pthread_join(o->thread, NULL);
	}
	pthread_cond_destroy(&o->wake);
	pthread_mutex_destroy(&o->lock);
	report_settings_release(&o->settings);
	ctx_free(ctx, o->path);
	sbuf_release(&o->log);
	ctx_free(ctx, o);
	ctx->output = NULL;
}

void output_start(crumbs_context *ctx, uint32_t flags, bool now)
{
	struct output *o = ctx->output;
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s-frame-%llu.crumbs", ctx->capture_dir,
			 ctx->program_name, (unsigned long long)ctx->capture_frame);
	size_t len = strlen(path);
	ctx_free(ctx, o->path);
	if ((o->path = ctx_alloc(ctx, len + 1)))
		memcpy(o->path, path, len + 1);
	o->flags = flags;
	if (!o->path || n <= 0 || (size_t)n >= sizeof(path)) {
		o->result = o->path ? CRUMBS_ERROR_INVALID_ARGUMENT : CRUMBS_ERROR_OUT_OF_MEMORY;
	} else if (now || o->in_place) {
		run_job(o);
	} else {
		pthread_mutex_lock(&o->lock);
		o->job = true;
		pthread_cond_broadcast(&o->wake);
		pthread_mutex_unlock(&o->lock);
	}
}

bool output_done(crumbs_context *ctx, bool wait)
{
	struct output *o = ctx->output;
	if (!o->in_place) {
		pthread_mutex_lock(&o->lock);
		while (wait && o->job)
			pthread_cond_wait(&o->wake, &o->lock);
		bool busy = o->job;
		pthread_mutex_unlock(&o->lock);
		if (busy)
			return false;
	}

	const char *path = o->path ? o->path : "";
	for (size_t at = 0; at < o->log.len;) {
		const char *text = o->log.data + at + 1;
		ctx_log_text(ctx, (enum crumbs_log_level)o->log.data[at], text);
		at += 1 + strlen(text) + 1;
	}
	if (o->log.failed)
		ctx_log(ctx, CRUMBS_LOG_ERROR, "out of memory for the tables of '%s'", path);
	sbuf_release(&o->log);

	enum crumbs_result r = o->result;
	if (r != CRUMBS_OK) {
		ctx_log(ctx, CRUMBS_LOG_ERROR, "cannot write '%s': %s", path, crumbs_result_str(r));
		if (ctx->has_peer) {
			char reply[PATH_MAX + 64];
			snprintf(reply, sizeof(reply), "error cannot write '%s': %s", path,
				 crumbs_result_str(r));
			trigger_reply(&ctx->trigger, &ctx->peer, reply);
		}
		ctx->has_peer = false;
		return true;
	}

	char full[PATH_MAX];
	const char *shown = realpath(path, full) ? full : path;
	ctx_free(ctx, ctx->last_capture);
	ctx->last_capture = ctx_alloc(ctx, strlen(shown) + 1);
	if (ctx->last_capture)
		memcpy(ctx->last_capture, shown, strlen(shown) + 1);
	ctx_log(ctx, CRUMBS_LOG_INFO, "frame %llu captured to '%s'",
		(unsigned long long)ctx->capture_frame, shown);
	if (ctx->has_peer) {
		char reply[PATH_MAX + 16];
		snprintf(reply, sizeof(reply), "captured %s", shown);
		trigger_reply(&ctx->trigger, &ctx->peer, reply);
		ctx->has_peer = false;
	}
	return true;
}
