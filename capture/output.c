/* SPDX-License-Identifier: MIT */
/*
 * output.c: what becomes of a resolved capture: the capture file, written
 * with the file writer (format/writer.c), its profilegpu tables
 * (profilegpu.c), and the messages for the program's log, all on the
 * output thread, off the program's.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "capture_internal.h"
#include "version.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Compressing, writing and reading the capture back for its tables take a
 * millisecond or more: on the program's thread that would be a hitch a
 * few frames after every capture. The output thread reads only what a set
 * handed to it holds, which nothing changes until it frees the set; it
 * keeps the run's file open and appends each frame to it, a chunk at
 * least every RUN_FLUSH_NS. It waits from crumbs_create on, since starting
 * a thread for each capture would itself be a hitch in the frame that
 * resolves it (docs/BENCHMARKS.md).
 */
#define RUN_FLUSH_NS 1000000000ll
/*
 * During a run the output thread looks for frames by itself, about every
 * one and a half of the program's frames (it times the frames it writes),
 * at least every RUN_COLLECT_MIN_NS and at most every RUN_COLLECT_NS:
 * waking it from the program's thread is a system call, and the thread
 * then takes a core from the program: woken every other frame, it made a
 * run's fast frames cost the program's thread several times what looking
 * by itself does (docs/BENCHMARKS.md, runs). Frames come back for reuse
 * CAPTURE_SETS frames after they began, so the program's thread wakes it
 * only when the oldest frame not written yet is needed again within
 * RUN_WAKE_FRAMES frames (a GPU far behind, a thread that was not
 * scheduled): on a fast GPU the program's thread otherwise waits for the
 * set, every few frames. Not more often than every
 * RUN_COLLECT_MIN_NS, and a look that finds nothing doubles the wait: a
 * thread that wakes every 2 ms for nothing takes the program's cores
 * from it at 60 frames a second.
 */
#define RUN_COLLECT_NS 20000000ll
#define RUN_COLLECT_MIN_NS 1000000ll
#define RUN_WAKE_FRAMES 2
/* At least CAPTURE_SETS, a power of two: its index wraps with the count. */
#define HANDED_RING 8

struct output {
	uint32_t fork_generation;  /* cpu_fork_generation() when it was made */
	crumbs_context *ctx;
	struct profilegpu_settings *settings; /* of the next capture's tables;
					      * NULL: the defaults */
	pthread_t thread;
	bool in_place;          /* no thread: frames are written in place */
	pthread_mutex_t lock;   /* the jobs, quit, the sets' phases it frees */
	pthread_cond_t wake;    /* any of them changed */
	struct capture_set *jobs[CAPTURE_SETS]; /* sets to write, oldest first */
	uint32_t job_head, job_count;
	/* A run's frames are handed over without the lock, which would cost
	 * the program's thread a microsecond a frame: put at
	 * posts[post_tail % CAPTURE_SETS], then counted in post_tail; the
	 * thread moves them to the jobs, under the lock, each time it looks
	 * (post_head). `handed` counts the sets output_write handed over
	 * (the program's thread's), `written` those the thread wrote. */
	struct capture_set *posts[CAPTURE_SETS];
	_Atomic uint32_t post_tail;
	uint32_t post_head;
	uint32_t handed;
	_Atomic uint32_t written;
	bool busy;              /* the thread writes jobs[job_head] */
	bool end;               /* close the file after the jobs */
	bool closed;            /* ... done: output_done reports */
	bool collecting;        /* a run: the thread looks for frames by itself */
	bool open_due;          /* ... and creates its file when it next looks */
	/* The output thread's: how long it waits between looks, and the
	 * frame it wrote last, to time the program's frames. */
	int64_t collect_ns;
	int64_t frame_ns;       /* the program's frame, smoothed; 0 not known */
	uint64_t seen_frame;
	int64_t seen_begin_ns;
	bool seen;
	/* The program's thread's: the frame number of each set handed, at
	 * handed % HANDED_RING. */
	uint64_t handed_frame[HANDED_RING];
	bool quit;
	struct output *next;    /* the list of outputs with a thread */

	/* The run's file; the output thread's while the run is under way. */
	char *path;             /* the name asked for, in the folder's real path */
	bool one_frame;         /* a capture: PROGRAM-frame-N, with its tables */
	/* A run's is written in place, so that a process killed mid-run
	 * leaves its chunks; a capture's under a temporary name, then given
	 * its own. Neither replaces a file (util/file.c). */
	struct file_out file;
	bool file_open;
	bool created;           /* file.path names what this run created */
	bool warned_dir;        /* the folder's danger was said */
	char lost[64];          /* why the run's file is gone, "" while it is not */
	bool moved;             /* ... somewhere else, not removed */
	_Atomic bool stopped;   /* ... and the run is to stop */
	crumbs_writer *w;
	enum crumbs_result result;
	int error;              /* with CRUMBS_ERROR_IO, its errno, or 0 */
	uint64_t first, last;   /* the frames written */
	uint32_t frames, incomplete;
	uint32_t missing;       /* timestamps of the frame being written that never came */
	uint32_t untimed;       /* its scopes and events written without their timestamps
				 * for want of slots (EVENT_LOST) */
	uint64_t *last_end;     /* [queue_count]: each queue's last end, in ticks */
	int64_t flushed_ns;
	uint32_t flushed_frames; /* o->frames at the last flush */
	struct sbuf log;        /* messages: a level byte, the text, a NUL */
};

/* ------------------------------------------------------------------------ */
/* The capture file                                                         */
/* ------------------------------------------------------------------------ */

/* r, with the errno of an input or output failure kept for the message. */
static enum crumbs_result io_result(struct output *o, enum crumbs_result r)
{
	if (r == CRUMBS_ERROR_IO && !o->error)
		o->error = errno ? errno : EIO;
	return r;
}

/* The ticks of a slot the frame wrote (or NO_SLOT), counting those that
 * never came. */
static uint64_t ticks_of(struct output *o, const struct queue_state *q, uint32_t slot)
{
	uint64_t t = readback_ticks(q, slot);
	if (t == CRUMBS_NO_TICKS && slot != NO_SLOT && q->valid_bits)
		o->missing++;
	return t;
}

/* A pipeline statistics event (EVENT_STRETCH, EVENT_LEAF_STRETCH,
 * EVENT_AREA) of q: its query's values, or unknown when they never came. */
static enum crumbs_result write_counters(crumbs_writer *w, const struct queue_state *q,
					 const struct event *e)
{
	if (e->type == EVENT_AREA)
		return crumbs_writer_render_area(w, e->u.name.offset, e->u.name.len);
	int leaf = e->type == EVENT_LEAF_STRETCH;
	uint64_t values[CRUMBS_PIPELINE_COUNTERS];
	uint32_t mask;
	if (!counters_values(q, e->u.counts, values, &mask))
		return crumbs_writer_counters_unknown(w, leaf);
	return crumbs_writer_counters(w, leaf, mask, values);
}

static enum crumbs_result write_events(struct output *o, struct capture_set *set,
				       const struct crumbs_cmd *cmd, int depth)
{
	crumbs_context *ctx = o->ctx;
	crumbs_writer *w = o->w;
	const struct queue_state *q = &ctx->queues[cmd->queue];
	char name[4097];
	enum crumbs_result r = CRUMBS_OK;

	/* A command buffer recorded without queries (before the frame, as
	 * programs that record once or a frame ahead do) in a frame that
	 * counts: what holds it has work nobody counted. */
	if (depth == 0 && set->counters && !cmd->counting && counters_device(&ctx->devices[q->device]))
		r = crumbs_writer_counters_unknown(w, 0);

	for (const struct event_block *b = cmd->first; b; b = b->next) {
		for (uint32_t i = 0; i < b->count && r == CRUMBS_OK; i++) {
			const struct event *e = &b->events[i];
			if ((e->flags & EVENT_LOST) && e->type != EVENT_NONE)
				o->untimed++;
			switch (e->type) {
			case EVENT_BEGIN:
				snprintf(name, sizeof(name), "%.*s", (int)e->u.name.len,
					 set->names + e->u.name.offset);
				r = crumbs_writer_scope_begin(w, name, e->level, ticks_of(o, q, e->slot));
				break;
			case EVENT_PASS:
				snprintf(name, sizeof(name), "%.*s", (int)e->u.name.len,
					 set->names + e->u.name.offset);
				r = crumbs_writer_event_begin(w, (enum crumbs_event_kind)e->level,
							      name[0] ? name : NULL,
							      ticks_of(o, q, e->slot));
				break;
			case EVENT_LEAF: {
				const struct counts_record *c = &set->counts[e->u.counts];
				snprintf(name, sizeof(name), "%.*s", (int)c->name.len,
					 set->names + c->name.offset);
				struct crumbs_leaf_desc leaf = {
					(enum crumbs_event_kind)e->level, name[0] ? name : NULL, c->draws,
					c->dispatches, c->prims, c->verts, ticks_of(o, q, e->slot),
					e->slot == NO_SLOT ? CRUMBS_NO_TICKS : ticks_of(o, q, e->slot + 1)
				};
				r = crumbs_writer_leaf(w, &leaf);
				break;
			}
			case EVENT_END:
				r = crumbs_writer_scope_end(w, ticks_of(o, q, e->slot));
				break;
			case EVENT_COUNTS: {
				const struct counts_record *c = &set->counts[e->u.counts];
				r = crumbs_writer_counts(w, c->draws, c->dispatches, c->prims,
							 c->verts);
				break;
			}
			case EVENT_EXECUTE: {
				const struct crumbs_cmd *s = store_map_find(set, e->u.secondary);
				if (s && depth < MAX_EXECUTE_DEPTH)
					r = write_events(o, set, s, depth + 1);
				else if (cmd->counting)
					/* Work no stretch counted. */
					r = crumbs_writer_counters_unknown(w, 0);
				break;
			}
			case EVENT_STRETCH:
			case EVENT_LEAF_STRETCH:
			case EVENT_AREA:
				r = write_counters(w, q, e);
				if (r == CRUMBS_OK && e->type != EVENT_AREA)
					r = perfquery_write(ctx, w, set, q, e->u.counts,
							    e->type == EVENT_LEAF_STRETCH);
				break;
			}
			/* Scopes nested past the format's limit are dropped by
			 * the writer, which counts them; nothing else fails. */
			if (r == CRUMBS_ERROR_LIMIT)
				r = CRUMBS_OK;
		}
	}
	return r;
}

static int write_file(void *user, const void *data, size_t size)
{
	return file_write(user, data, size);
}

static void log_later(struct output *o, enum crumbs_log_level level, const char *text, size_t len);

/* log_later, formatted. */
__attribute__((format(printf, 3, 4)))
static void log_laterf(struct output *o, enum crumbs_log_level level, const char *fmt, ...)
{
	char text[2 * PATH_MAX + 160];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n >= 0)
		log_later(o, level, text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

/* Opens the run's file and writes its devices and queues. */
static enum crumbs_result open_file(struct output *o)
{
	crumbs_context *ctx = o->ctx;
	char producer[128];
	enum crumbs_result r;

	snprintf(producer, sizeof(producer), "libcrumbs " CRUMBS_VERSION_SHORT " (%s)",
		 ctx->program_name);
	struct crumbs_writer_desc desc = { 0 };
	desc.producer = producer;
	errno = 0;
	if (file_create(&o->file, o->path, o->one_frame ? FILE_NEW : FILE_IN_PLACE) != 0)
		return io_result(o, CRUMBS_ERROR_IO);
	o->file_open = o->created = true;
	if (!o->warned_dir && dir_open_to_others(o->file.dir_fd)) {
		/* Anyone may then remove or replace the file once written. */
		char dir[PATH_MAX];
		size_t len = o->file.name_at > 1 ? o->file.name_at - 1 : o->file.name_at;
		snprintf(dir, sizeof(dir), "%.*s", (int)len, o->file.path);
		log_laterf(o, CRUMBS_LOG_WARNING, "the capture folder '%s' is writable by every user "
			   "and has no sticky bit: others can remove or replace its captures (chmod "
			   "+t it, or capture into another)", dir);
		o->warned_dir = true;
	}
	if (!o->one_frame && o->file.renamed)
		log_laterf(o, CRUMBS_LOG_WARNING, "'%s' exists: the run goes to '%s'", o->path,
			   o->file.path);
	desc.write = write_file;
	desc.user = &o->file;
	if (!o->one_frame)
		desc.chunk_bytes = 256u << 10;
	errno = 0;
	if ((r = crumbs_writer_open(&desc, &o->w)) != CRUMBS_OK) {
		o->w = NULL;
		return io_result(o, r);
	}
	crumbs_writer *w = o->w;
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
		r = perfquery_write_setup(ctx, w);
	o->flushed_ns = now_ns();
	o->flushed_frames = 0;
	return r;
}

/*
 * A run's file is created as the run begins, at its name, and its devices
 * and queues are written at once: a program killed at any point of the
 * run then leaves a file that reads, and says what ran, with every frame
 * written by then (the first is flushed as soon as it is written, the
 * others at least every RUN_FLUSH_NS). Waiting for the first frame, whose
 * results come back frames later, left a program killed before then
 * without a file. On the output thread, or the program's without one.
 */
static void open_run(struct output *o)
{
	if (o->one_frame || o->w || o->file_open || o->result != CRUMBS_OK)
		return;
	if ((o->result = open_file(o)) != CRUMBS_OK)
		return;
	errno = 0;
	o->result = io_result(o, crumbs_writer_flush(o->w));
}

/* When each queue was last busy before set's frame: the pre-roll's last
 * end for a run's first frame, the last end of the frame before for the
 * others. */
static enum crumbs_result write_ready(struct output *o, const struct capture_set *set)
{
	crumbs_context *ctx = o->ctx;
	enum crumbs_result r = CRUMBS_OK;
	bool follows = o->frames > 0 && o->last + 1 == set->frame;
	for (uint32_t i = 0; i < ctx->queue_count && r == CRUMBS_OK; i++) {
		const struct queue_state *q = &ctx->queues[i];
		uint32_t slot = set->queues[i].ready_slot;
		if (!q->valid_bits)
			continue;
		if (set->first && slot != NO_SLOT)
			r = crumbs_writer_queue_ready(o->w, i, ticks_of(o, q, slot));
		else if (!set->first && follows && o->last_end[i] != CRUMBS_NO_TICKS)
			r = crumbs_writer_queue_ready(o->w, i, o->last_end[i]);
	}
	return r;
}


/* The CPU threads' scopes of set's frame, each thread's in its order. A
 * scope past the format's limits is dropped by the writer, which counts
 * it. */
static enum crumbs_result write_cpu(crumbs_writer *w, const struct capture_set *set)
{
	const struct cpu_frame *f = &set->cpu;
	enum crumbs_result r = CRUMBS_OK;
	uint32_t current = UINT32_MAX;
	char name[CPU_RECORD_NAME_MAX + 1];
	if (f->frame_tid)
		r = crumbs_writer_frame_thread(w, f->frame_tid);
	for (uint32_t i = 0; i < f->record_count && r == CRUMBS_OK; i++) {
		const struct cpu_record *c = &f->records[i];
		if (c->type != CPU_RECORD_BEGIN && c->type != CPU_RECORD_WAIT_BEGIN &&
		    c->type != CPU_RECORD_END)
			continue; /* a task's: write_tasks() */
		if (c->thread != current) {
			current = c->thread;
			r = crumbs_writer_cpu_thread(w, f->threads[current].tid,
						     f->threads[current].name);
			if (r == CRUMBS_ERROR_LIMIT) {
				/* Past the threads a frame holds: this one's
				 * scopes are left out, and counted. */
				r = CRUMBS_OK;
				while (i + 1 < f->record_count && f->records[i + 1].thread == current)
					i++;
				continue;
			}
		}
		if (r != CRUMBS_OK)
			break;
		if (c->type != CPU_RECORD_END) {
			uint32_t len = c->name_len < CPU_RECORD_NAME_MAX ? c->name_len : CPU_RECORD_NAME_MAX;
			if (len)
				memcpy(name, f->names + c->name_off, len);
			name[len] = '\0';
			r = c->type == CPU_RECORD_WAIT_BEGIN ?
				    crumbs_writer_cpu_wait_begin(w, name, c->level, (uint64_t)c->ns) :
				    crumbs_writer_cpu_begin(w, name, c->level, (uint64_t)c->ns);
		} else {
			r = crumbs_writer_cpu_end(w, (uint64_t)c->ns);
		}
		if (r == CRUMBS_ERROR_LIMIT)
			r = CRUMBS_OK; /* dropped and counted by the writer */
	}
	return r;
}

/* The frame's tasks and timeline frames, every thread's merged by time,
 * those open when it began first. */
static enum crumbs_result write_tasks(crumbs_writer *w, const struct capture_set *set)
{
	const struct cpu_frame *f = &set->cpu;
	enum crumbs_result r = CRUMBS_OK;
	char buf[CPU_TASK_STRINGS];
	for (uint32_t k = 0; k < f->task_count && r == CRUMBS_OK; k++) {
		const struct cpu_record *c = &f->records[f->tasks[k].record];
		struct cpu_task_view v;
		uint64_t ns = (uint64_t)c->ns;
		if (c->type == CPU_RECORD_IGNORED || !cpu_task_read(f, c, &v, buf))
			continue;
		switch (c->type) {
		case CPU_RECORD_TASK_BEGIN:
		case CPU_RECORD_EARLIER:
			r = crumbs_writer_task_begin(w, v.task, v.timeline, v.name, v.state,
						     c->type == CPU_RECORD_EARLIER, ns);
			break;
		case CPU_RECORD_TASK_STATE:
			r = crumbs_writer_task_state(w, v.task, v.state, ns);
			break;
		case CPU_RECORD_TASK_END:
			r = crumbs_writer_task_end(w, v.task, ns);
			break;
		case CPU_RECORD_TASK_DEPEND:
			r = crumbs_writer_task_depend(w, v.task, v.state, v.blocking, ns);
			break;
		case CPU_RECORD_TIMELINE_FRAME:
			r = crumbs_writer_timeline_frame(w, v.timeline, ns);
			break;
		}
		/* Past the format's limits: dropped and counted by the writer;
		 * an argument it refuses (a time before 0): left out. */
		if (r == CRUMBS_ERROR_LIMIT || r == CRUMBS_ERROR_INVALID_ARGUMENT)
			r = CRUMBS_OK;
	}
	return r;
}

/* Appends set's frame to the file. */
static enum crumbs_result write_frame(struct output *o, struct capture_set *set)
{
	crumbs_context *ctx = o->ctx;
	crumbs_writer *w = o->w;
	uint32_t lost_ops = 0; /* submissions written without their semaphores */
	o->missing = 0;
	o->untimed = 0;
	enum crumbs_result r = crumbs_writer_frame_begin(w, set->frame, (uint64_t)set->begin_ns);

	for (uint32_t i = 0; i < ctx->device_count && r == CRUMBS_OK; i++) {
		for (int k = 0; k < 2 && r == CRUMBS_OK; k++) {
			const struct calibration_sample *c = &set->calibration[i][k];
			if (c->valid)
				r = crumbs_writer_calibration(w, i, c->ticks, (uint64_t)c->cpu_ns,
							      c->deviation_ns);
		}
	}
	if (r == CRUMBS_OK)
		r = write_ready(o, set);
	for (uint32_t i = 0; i < ctx->queue_count && r == CRUMBS_OK; i++) {
		const struct queue_state *q = &ctx->queues[i];
		const struct set_queue *sq = &set->queues[i];
		for (uint32_t k = 0; k < sq->submit_count && r == CRUMBS_OK; k++) {
			const struct submit_record *s = &q->submits[sq->submit_first + k];
			const struct crumbs_semaphore_op *ops = set->ops + s->first_op;
			struct crumbs_submit_desc sd = { i, (uint64_t)s->cpu_ns, ticks_of(o, q, s->begin_slot),
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
			if (r == CRUMBS_OK)
				r = crumbs_writer_unrecorded(w, s->unrecorded);
			for (uint32_t c = 0; c < s->cmd_count && r == CRUMBS_OK; c++)
				r = write_events(o, set, set->submit_cmds[s->first_cmd + c], 0);
			uint64_t end = ticks_of(o, q, s->end_slot);
			if (r == CRUMBS_OK)
				r = crumbs_writer_submit_end(w, end);
			if (end != CRUMBS_NO_TICKS)
				o->last_end[i] = end;
		}
	}
	for (uint32_t i = 0; i < set->host_signal_count && r == CRUMBS_OK; i++) {
		const struct host_signal *h = &set->host_signals[i];
		r = crumbs_writer_host_signal(w, h->semaphore, h->value, (uint64_t)h->cpu_ns);
	}
	if (r == CRUMBS_OK)
		r = write_cpu(w, set);
	if (r == CRUMBS_OK)
		r = write_tasks(w, set);
	if (r == CRUMBS_OK)
		r = memory_write(ctx, set, w);
	if (r == CRUMBS_OK)
		r = present_write(ctx, set, w);
	uint64_t dropped = (uint64_t)atomic_load(&set->dropped) + lost_ops + o->untimed;
	if (dropped > UINT32_MAX)
		dropped = UINT32_MAX;
	if (set->unchecked && o->missing)
		set->flags |= CRUMBS_FRAME_INCOMPLETE;
	uint32_t flags = set->flags;
	if (dropped)
		flags |= CRUMBS_FRAME_SCOPES_DROPPED;
	if (set->detail >= CRUMBS_DETAIL_MAX)
		flags |= CRUMBS_FRAME_FULL_DETAIL;
	if (r == CRUMBS_OK)
		r = crumbs_writer_frame_end(w, (uint64_t)set->end_ns, flags, (uint32_t)dropped);
	if (r == CRUMBS_ERROR_LIMIT)
		r = CRUMBS_OK; /* a frame too large for the format: dropped, the run goes on */
	return r;
}

static void flush_due(struct output *o);

/* Whether the run's file is still where its name says. A file removed
 * (or its folder) takes the frames written with it, and one moved is no
 * longer where the run would say: either way the run stops, since its
 * frames have nowhere to go, and its last message says so. */
static void check_file(struct output *o)
{
	if (o->result != CRUMBS_OK || !o->file_open || o->one_frame)
		return;
	int where = file_check(&o->file, o->lost, sizeof(o->lost));
	if (where == 0)
		return;
	o->moved = where > 0;
	o->result = CRUMBS_ERROR_NOT_FOUND;
	atomic_store(&o->stopped, true);
}

/* Writes set's frame into the run's file, opened at its first. */
static void write_set(struct output *o, struct capture_set *set)
{
	if (o->result != CRUMBS_OK)
		return;
	if (!o->w && (o->result = open_file(o)) != CRUMBS_OK)
		return;
	if (o->frames == 0)
		for (uint32_t i = 0; i < o->ctx->queue_count; i++)
			o->last_end[i] = CRUMBS_NO_TICKS;
	errno = 0;
	if ((o->result = io_result(o, write_frame(o, set))) != CRUMBS_OK)
		return;
	if (o->frames == 0)
		o->first = set->frame;
	o->last = set->frame;
	o->frames++;
	o->incomplete += (set->flags & (CRUMBS_FRAME_INCOMPLETE | CRUMBS_FRAME_DEVICE_LOST)) != 0;
	flush_due(o);
}

/* Flushes a run's frames written since the last flush: the first frame
 * at once, the others once RUN_FLUSH_NS has passed since the last flush,
 * at each frame written and while the thread waits for frames, so that a
 * program that stops ending frames mid-run (with nothing to draw) and is
 * then killed leaves those it ended. On the output thread; the writer is
 * its own. */
static void flush_due(struct output *o)
{
	if (!o->w || o->one_frame || o->result != CRUMBS_OK || o->frames == o->flushed_frames)
		return;
	int64_t now = now_ns();
	if (o->flushed_frames && now - o->flushed_ns < RUN_FLUSH_NS)
		return;
	errno = 0;
	o->result = io_result(o, crumbs_writer_flush(o->w));
	o->flushed_ns = now;
	o->flushed_frames = o->frames;
	check_file(o);
}

/* Closes the run's file (and prints a capture's tables). */

/* A message for the program's log, handed over when the output is done. */
static void log_later(struct output *o, enum crumbs_log_level level, const char *text, size_t len)
{
	char byte = (char)level;
	sbuf_add(&o->log, &byte, 1);
	sbuf_add(&o->log, text, len);
	sbuf_add(&o->log, "", 1);
}

static void log_message(void *user, enum crumbs_log_level level, const char *text, size_t len)
{
	log_later(user, level, text, len);
}

static void close_file(struct output *o)
{
	errno = 0;
	if (!o->one_frame && o->frames == 0 && o->result == CRUMBS_OK) {
		/* A run that ends before its first frame is written (stopped
		 * in its pre-roll, every frame skipped) leaves no file: the
		 * log says no frame was recorded. */
		crumbs_writer_free(o->w);
		o->w = NULL;
		if (o->file_open)
			file_discard(&o->file);
		o->file_open = false;
		return;
	}
	if (o->w) {
		/* A run whose file went in its last second says so too. */
		if (o->result == CRUMBS_OK)
			check_file(o);
		enum crumbs_result r = o->result == CRUMBS_OK ? crumbs_writer_close(o->w) :
				       (crumbs_writer_free(o->w), o->result);
		if (o->result == CRUMBS_OK)
			o->result = io_result(o, r);
		o->w = NULL;
	}
	if (o->file_open) {
		errno = 0;
		if (o->result == CRUMBS_OK && file_finish(&o->file) != 0)
			o->result = io_result(o, CRUMBS_ERROR_IO);
		file_close(&o->file);
		o->file_open = false;
	}
	if (o->result == CRUMBS_OK && o->one_frame && o->frames) {
		if (o->file.renamed)
			log_laterf(o, CRUMBS_LOG_WARNING, "'%s' exists: the capture goes to '%s'",
				   o->path, o->file.path);
		profilegpu_print(o->settings, o->file.path, log_message, o);
	}
}

/* ------------------------------------------------------------------------ */
/* The tables                                                               */
/* ------------------------------------------------------------------------ */



int output_settings(crumbs_context *ctx, const char *settings, char *err, size_t n)
{
	struct profilegpu_settings *s;
	if (profilegpu_settings_parse(settings, &s, err, n) != 0)
		return -1;
	profilegpu_settings_free(ctx->output->settings);
	ctx->output->settings = s;
	return 0;
}

bool output_counters(const crumbs_context *ctx)
{
	return ctx->output && profilegpu_settings_counters(ctx->output->settings);
}

/* ------------------------------------------------------------------------ */
/* The output thread                                                        */
/* ------------------------------------------------------------------------ */

/* The set written is free again (o->lock held). */
static void set_written(struct output *o, struct capture_set *set)
{
	readback_recycle(o->ctx, set);
	atomic_fetch_add(&o->written, 1);
	atomic_store(&set->phase, SET_FREE);
	pthread_cond_broadcast(&o->wake);
}

/* The program's frame, timed by the begin of each frame written, sets how
 * long the thread waits between looks during a run. Under the lock. */
static void time_frames(struct output *o, const struct capture_set *set)
{
	if (o->seen && set->frame > o->seen_frame && set->begin_ns > o->seen_begin_ns) {
		int64_t per = (set->begin_ns - o->seen_begin_ns) / (int64_t)(set->frame - o->seen_frame);
		o->frame_ns = o->frame_ns ? o->frame_ns - o->frame_ns / 4 + per / 4 : per;
		int64_t c = o->frame_ns / 2 * 3;
		o->collect_ns = c < RUN_COLLECT_MIN_NS ? RUN_COLLECT_MIN_NS :
				c > RUN_COLLECT_NS ? RUN_COLLECT_NS : c;
	}
	o->seen = true;
	o->seen_frame = set->frame;
	o->seen_begin_ns = set->begin_ns;
}

/* A set to write after the others. Under the lock. */
static void push_job(struct output *o, struct capture_set *set)
{
	o->jobs[(o->job_head + o->job_count++) % CAPTURE_SETS] = set;
}

/* The frames posted since the thread last looked become its jobs. Under
 * the lock. */
static void take_posts(struct output *o)
{
	uint32_t tail = atomic_load(&o->post_tail);
	for (; o->post_head != tail; o->post_head++)
		push_job(o, o->posts[o->post_head % CAPTURE_SETS]);
}

static void *output_main(void *arg)
{
	struct output *o = arg;
	pthread_mutex_lock(&o->lock);
	for (;;) {
		for (take_posts(o); !o->job_count && !o->end && !o->quit; take_posts(o)) {
			if (!o->collecting) {
				pthread_cond_wait(&o->wake, &o->lock);
				continue;
			}
			/* The run's file as it begins, then the clocks'
			 * samples, off the program's thread; what came
			 * meanwhile is looked at before waiting. */
			bool open = o->open_due;
			o->open_due = false;
			pthread_mutex_unlock(&o->lock);
			if (open)
				open_run(o);
			calibrate_refresh(o->ctx);
			flush_due(o);
			pthread_mutex_lock(&o->lock);
			take_posts(o);
			if (o->job_count || o->end || o->quit)
				break;
			int64_t wait = o->collect_ns, at = now_ns() + wait;
			struct timespec until = { (time_t)(at / 1000000000), (long)(at % 1000000000) };
			if (pthread_cond_timedwait(&o->wake, &o->lock, &until) == ETIMEDOUT &&
			    o->post_head == atomic_load(&o->post_tail))
				o->collect_ns = wait < RUN_COLLECT_NS / 2 ? 2 * wait : RUN_COLLECT_NS;
		}
		if (o->job_count) {
			struct capture_set *set = o->jobs[o->job_head];
			o->busy = true;
			pthread_mutex_unlock(&o->lock);
			write_set(o, set);
			pthread_mutex_lock(&o->lock);
			o->busy = false;
			o->job_head = (o->job_head + 1) % CAPTURE_SETS;
			o->job_count--;
			time_frames(o, set);
			set_written(o, set);
		} else if (o->end) {
			o->busy = true;
			pthread_mutex_unlock(&o->lock);
			close_file(o);
			pthread_mutex_lock(&o->lock);
			o->busy = false;
			o->end = false;
			o->closed = true;
			pthread_cond_broadcast(&o->wake);
		} else {
			break;
		}
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

/*
 * A program that exits without crumbs_destroy (many never destroy their
 * Vulkan device) would lose a capture its output thread is still writing:
 * at exit, each thread still at work is waited for, so the file lands.
 * Its tables are not printed then; the program's log may be gone. A run
 * still under way keeps what its chunks hold.
 */
static pthread_mutex_t outputs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct output *outputs;   /* those with a thread */
static pthread_once_t outputs_once = PTHREAD_ONCE_INIT;

static void outputs_finish(void)
{
	/* A child forked without exec has none of its parent's threads, and
	 * a lock may have been held by one of them: its exit waits only for
	 * its own, and takes no lock without them. (A process never forked
	 * from another, the parent, has generation 0.) */
	if (cpu_fork_generation() != 0) {
		bool own = false;
		for (struct output *o = outputs; o; o = o->next)
			own |= o->fork_generation == cpu_fork_generation();
		if (!own)
			return;
	}
	pthread_mutex_lock(&outputs_lock);
	for (struct output *o = outputs; o; o = o->next) {
		/* (Its context may be freed: a child destroys only that.) */
		if (o->fork_generation != cpu_fork_generation())
			continue;
		pthread_mutex_lock(&o->lock);
		pthread_cond_broadcast(&o->wake);
		while (o->job_count || o->end || o->post_head != atomic_load(&o->post_tail))
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
	o->last_end = ctx_alloc(ctx, sizeof(*o->last_end) * (ctx->queue_count ? ctx->queue_count : 1));
	if (!o->last_end) {
		ctx_free(ctx, o);
		return false;
	}
	if (pthread_mutex_init(&o->lock, NULL) != 0) {
		ctx_free(ctx, o->last_end);
		ctx_free(ctx, o);
		return false;
	}
	pthread_condattr_t attr;
	bool cond_ok = pthread_condattr_init(&attr) == 0;
	if (cond_ok) {
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		cond_ok = pthread_cond_init(&o->wake, &attr) == 0;
		pthread_condattr_destroy(&attr);
	}
	if (!cond_ok) {
		pthread_mutex_destroy(&o->lock);
		ctx_free(ctx, o->last_end);
		ctx_free(ctx, o);
		return false;
	}
	o->ctx = ctx;
	o->fork_generation = ctx->fork_generation;
	o->file.fd = o->file.dir_fd = -1;
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
	if (o->w || o->file_open)
		close_file(o);
	pthread_cond_destroy(&o->wake);
	pthread_mutex_destroy(&o->lock);
	profilegpu_settings_free(o->settings);
	ctx_free(ctx, o->path);
	ctx_free(ctx, o->last_end);
	sbuf_release(&o->log);
	ctx_free(ctx, o);
	ctx->output = NULL;
}

void output_begin(crumbs_context *ctx)
{
	struct output *o = ctx->output;
	bool one = ctx->set_count == 1;
	/* The folder's real path: the file is shown by it, and looked for
	 * by it during a run, wherever the program moves its current one. */
	char real[PATH_MAX];
	const char *dir = realpath(ctx->capture_dir, real) ? real : ctx->capture_dir;
	const char *sep = *dir && dir[strlen(dir) - 1] == '/' ? "" : "/";
	const char *kind = one ? "frame" : "run";
	unsigned long long first = (unsigned long long)ctx->run_first;
	/* Any length: one too long for the system is refused by it, and
	 * said so. */
	int n = snprintf(NULL, 0, "%s%s%s-%s-%llu.crumbs", dir, sep, ctx->program_name, kind, first);
	ctx_free(ctx, o->path);
	o->path = n > 0 ? ctx_alloc(ctx, (size_t)n + 1) : NULL;
	if (o->path)
		snprintf(o->path, (size_t)n + 1, "%s%s%s-%s-%llu.crumbs", dir, sep, ctx->program_name,
			 kind, first);
	o->one_frame = one;
	o->frames = o->incomplete = 0;
	o->created = false;
	o->lost[0] = '\0';
	o->moved = false;
	atomic_store(&o->stopped, false);
	o->result = o->path ? CRUMBS_OK : CRUMBS_ERROR_OUT_OF_MEMORY;
	o->error = 0;
	pthread_mutex_lock(&o->lock);
	o->closed = false;
	o->collecting = !one;
	o->open_due = !one && !o->in_place;
	o->collect_ns = RUN_COLLECT_NS;
	o->frame_ns = 0;
	o->seen = false;
	/* The thread is woken to create a run's file: a system call, once
	 * a run. */
	if (o->open_due)
		pthread_cond_broadcast(&o->wake);
	pthread_mutex_unlock(&o->lock);
	if (o->in_place)
		open_run(o);
}

bool output_stopped(const crumbs_context *ctx)
{
	return atomic_load_explicit(&ctx->output->stopped, memory_order_relaxed);
}

FRAME_PATH
void output_write(crumbs_context *ctx, struct capture_set *set, bool now)
{
	struct output *o = ctx->output;
	atomic_store(&set->phase, SET_WRITING);
	if (o->in_place) {
		write_set(o, set);
		readback_recycle(ctx, set);
		atomic_store(&set->phase, SET_FREE);
		return;
	}
	/* Waking the thread is a system call: in a run it looks for frames
	 * by itself, and is woken only when the oldest set it has not
	 * written is needed again within RUN_WAKE_FRAMES frames. Sets are
	 * written in the order they are handed. `collecting` changes on this
	 * thread only. */
	uint32_t written = atomic_load(&o->written);
	o->handed_frame[o->handed++ % HANDED_RING] = set->frame;
	if (!now && o->collecting) {
		uint32_t tail = atomic_load(&o->post_tail);
		o->posts[tail % CAPTURE_SETS] = set;
		atomic_store(&o->post_tail, tail + 1);
		if (o->handed_frame[written % HANDED_RING] + CAPTURE_SETS >
		    ctx->frame + RUN_WAKE_FRAMES)
			return;
		pthread_mutex_lock(&o->lock);
		pthread_cond_broadcast(&o->wake);
		pthread_mutex_unlock(&o->lock);
		return;
	}
	pthread_mutex_lock(&o->lock);
	take_posts(o); /* ahead of this one */
	push_job(o, set);
	pthread_cond_broadcast(&o->wake);
	while (now && atomic_load(&set->phase) != SET_FREE)
		pthread_cond_wait(&o->wake, &o->lock);
	pthread_mutex_unlock(&o->lock);
}

void output_wait_set(crumbs_context *ctx, struct capture_set *set)
{
	struct output *o = ctx->output;
	if (o->in_place)
		return;
	pthread_mutex_lock(&o->lock);
	pthread_cond_broadcast(&o->wake);
	while (atomic_load(&set->phase) == SET_WRITING)
		pthread_cond_wait(&o->wake, &o->lock);
	pthread_mutex_unlock(&o->lock);
}

void output_end(crumbs_context *ctx, bool now)
{
	struct output *o = ctx->output;
	if (o->in_place) {
		close_file(o);
		o->closed = true;
		return;
	}
	pthread_mutex_lock(&o->lock);
	o->end = true;
	o->collecting = false;
	o->open_due = false;
	pthread_cond_broadcast(&o->wake);
	while (now && !o->closed)
		pthread_cond_wait(&o->wake, &o->lock);
	pthread_mutex_unlock(&o->lock);
}

/* `crumbs trigger`'s peer, if any, to answer once: NULL when none. */
static const struct trigger_peer *peer_to_answer(crumbs_context *ctx)
{
	bool has = ctx->has_peer;
	ctx->has_peer = false;
	return has ? &ctx->peer : NULL;
}

bool output_done(crumbs_context *ctx, bool wait)
{
	struct output *o = ctx->output;
	if (!o->in_place) {
		pthread_mutex_lock(&o->lock);
		while (wait && !o->closed)
			pthread_cond_wait(&o->wake, &o->lock);
		bool closed = o->closed;
		pthread_mutex_unlock(&o->lock);
		if (!closed)
			return false;
	}
	o->closed = false;

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
	if (r == CRUMBS_OK && o->frames == 0) {
		ctx_log(ctx, CRUMBS_LOG_WARNING, "no frame of the run from frame %llu was recorded",
			(unsigned long long)ctx->run_first);
		trigger_answer_error(&ctx->trigger, peer_to_answer(ctx), "no frame was recorded");
		return true;
	}
	/* Where the file went, not where it was asked to go. */
	const char *shown = o->created ? o->file.path : path;
	if (o->lost[0]) {
		char what[96];
		if (o->frames == 1)
			snprintf(what, sizeof(what), "frame %llu is", (unsigned long long)o->first);
		else
			snprintf(what, sizeof(what), "frames %llu to %llu are",
				 (unsigned long long)o->first, (unsigned long long)o->last);
		const char *fate = o->moved ? "not at" : "lost: gone from";
		ctx_log(ctx, CRUMBS_LOG_ERROR, "%s %s '%s' (%s during the run); recording stopped",
			what, fate, shown, o->lost);
		trigger_answer_error(&ctx->trigger, peer_to_answer(ctx), "%s %s '%s' (%s during the "
				     "run)", what, fate, shown, o->lost);
		return true;
	}
	if (r != CRUMBS_OK) {
		char why[128];
		if (r == CRUMBS_ERROR_IO && o->error == ENAMETOOLONG) {
			/* Named by its start: the whole would fill the log. */
			size_t len = strlen(path);
			ctx_log(ctx, CRUMBS_LOG_ERROR, "cannot write '%.48s%s' (%zu bytes): the path is "
				"too long (at most %d; choose a shorter capture folder)", path,
				len > 48 ? "..." : "", len, PATH_MAX - 1);
			trigger_answer_error(&ctx->trigger, peer_to_answer(ctx), "cannot write "
					     "'%.48s%s' (%zu bytes): the path is too long", path,
					     len > 48 ? "..." : "", len);
			return true;
		}
		if (r == CRUMBS_ERROR_IO && o->error)
			errno_text(o->error, why, sizeof(why));
		else
			snprintf(why, sizeof(why), "%s", crumbs_result_str(r));
		ctx_log(ctx, CRUMBS_LOG_ERROR, "cannot write '%s': %s", shown, why);
		trigger_answer_error(&ctx->trigger, peer_to_answer(ctx), "cannot write '%s': %s",
				     shown, why);
		return true;
	}

	ctx_free(ctx, ctx->last_capture);
	ctx->last_capture = ctx_strdup(ctx, shown);
	if (o->one_frame)
		ctx_log(ctx, CRUMBS_LOG_INFO, "frame %llu captured to '%s'",
			(unsigned long long)o->first, shown);
	else if (o->first == o->last)
		ctx_log(ctx, CRUMBS_LOG_INFO, "frame %llu recorded to '%s' (%u %s, %u incomplete)",
			(unsigned long long)o->first, shown, o->frames,
			o->frames == 1 ? "frame" : "frames", o->incomplete);
	else
		ctx_log(ctx, CRUMBS_LOG_INFO, "frames %llu to %llu recorded to '%s' (%u %s, "
			"%u incomplete)", (unsigned long long)o->first, (unsigned long long)o->last,
			shown, o->frames, o->frames == 1 ? "frame" : "frames", o->incomplete);
	trigger_answer_captured(&ctx->trigger, peer_to_answer(ctx), shown);
	return true;
}
