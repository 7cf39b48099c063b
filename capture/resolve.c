/*
 * resolve.c: the end of a capture. Each frame after it, the query results
 * are read without waiting; once every timestamp the capture wrote is
 * available (or time is up, or the device is lost) the frame is written
 * to a capture file, read back, and its tables are printed.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "capture_internal.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXECUTE_DEPTH 4 /* secondaries inside secondaries, bounded */

/* ------------------------------------------------------------------------ */
/* Results                                                                  */
/* ------------------------------------------------------------------------ */

static bool available(const struct queue_state *q, uint32_t slot)
{
	return slot != NO_SLOT && slot < q->slot_count && q->results[2 * slot + 1] != 0;
}

static uint64_t ticks_of(const struct queue_state *q, uint32_t slot)
{
	if (!available(q, slot))
		return CRUMBS_NO_TICKS;
	uint64_t mask = q->valid_bits >= 64 ? UINT64_MAX : ((uint64_t)1 << q->valid_bits) - 1;
	return q->results[2 * slot] & mask;
}

/*
 * Marks, in `written` of each pool, the slots the capture wrote. A slot is
 * marked WRITTEN for the copy of the queue that wrote it, which is being
 * recorded, and COPIED once that copy is submitted (a standing
 * recording's slots are COPIED already: the batch that ran it copied
 * them). Poll reads the COPIED ones.
 */
enum { WRITTEN = 1, COPIED = 2 };

/* Marks the slots the events of cmd (and of the secondaries it executed)
 * wrote, in the pools they were recorded for. */
static void mark_events(crumbs_context *ctx, const struct crumbs_cmd *cmd, int depth)
{
	struct queue_state *q = &ctx->queues[cmd->queue];
	uint8_t mark = cmd->adopted ? COPIED : WRITTEN;
	for (const struct event_block *b = cmd->first; b; b = b->next)
		for (uint32_t i = 0; i < b->count; i++) {
			const struct event *e = &b->events[i];
			if (e->type == EVENT_EXECUTE) {
				const struct crumbs_cmd *s = map_find(ctx, e->u.secondary);
				if (s && depth < MAX_EXECUTE_DEPTH)
					mark_events(ctx, s, depth + 1);
			} else if (e->slot != NO_SLOT && q->written && e->slot < q->slot_count) {
				q->written[e->slot] = mark;
				if (e->type == EVENT_LEAF && e->slot + 1 < q->slot_count)
					q->written[e->slot + 1] = mark;
				q->marked = true;
			}
		}
}

uint32_t capture_runs(const struct queue_state *q, struct slot_run runs[3])
{
	uint32_t n = 0, scopes = atomic_load(&q->scope_next);
	if (scopes > q->scope_slots)
		scopes = q->scope_slots; /* takes past the end were refused */
	if (scopes)
		runs[n++] = (struct slot_run){ 0, scopes };
	if (q->submit_count)
		runs[n++] = (struct slot_run){ q->submit_base, 2 * q->submit_count };
	if (q->ready_slot != NO_SLOT)
		runs[n++] = (struct slot_run){ q->ready_slot, 1 };
	return n;
}

void copy_marked(const struct device_state *d, VkCommandBuffer cb, VkQueryPool pool,
		 uint32_t first_query, const uint8_t *marks, uint8_t mark, uint32_t count,
		 VkBuffer buffer, uint32_t first_slot)
{
	for (uint32_t first = 0; first < count;) {
		if (marks[first] != mark) {
			first++;
			continue;
		}
		uint32_t end = first;
		while (end < count && marks[end] == mark)
			end++;
		d->fn.CmdCopyQueryPoolResults(cb, pool, first_query + first, end - first, buffer,
					      sizeof(uint64_t) * 2 * (first_slot + first),
					      sizeof(uint64_t) * 2,
					      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT |
					      VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
		first = end;
	}
}

/* Whether a queue of q's family is still copying an earlier capture's
 * results: into any buffer of the family, the ones this capture reads. */
static bool family_stale(const crumbs_context *ctx, const struct queue_state *q)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		if (ctx->queues[i].copy_stale && queue_same_family(&ctx->queues[i], q))
			return true;
	return false;
}

/* In q's capture runs, marks `from` become `to`. */
static void marks_change(struct queue_state *q, uint8_t from, uint8_t to)
{
	struct slot_run runs[3];
	for (uint32_t k = 0, n = capture_runs(q, runs); k < n; k++)
		for (uint32_t i = runs[k].first; i < runs[k].first + runs[k].count; i++)
			if (q->written[i] == from)
				q->written[i] = to;
}

/*
 * Records the copy of the slots s wrote, marked WRITTEN in the pools of
 * its family, each into its pool's buffer: after everything before it on
 * s, waiting for each to be available (some drivers report a written
 * timestamp unavailable otherwise; only slots that are written are
 * copied, since a slot that never is would stall the queue), then made
 * visible to the host. The copy runs on s because a query's result is
 * only sure to be seen by a later command of the queue that wrote it.
 */
static VkResult record_copy(crumbs_context *ctx, struct queue_state *s)
{
	struct device_state *d = &ctx->devices[s->device];
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
	VkMemoryBarrier before = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, 0, 0 };
	VkMemoryBarrier after = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
				  VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT };
	VkResult r = d->fn.BeginCommandBuffer(s->copy_cb, &bi);
	if (r != VK_SUCCESS)
		return r;
	d->fn.CmdPipelineBarrier(s->copy_cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
				 VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *p = &ctx->queues[i];
		if (!p->marked || !queue_same_family(p, s))
			continue;
		struct slot_run runs[3];
		for (uint32_t k = 0, n = capture_runs(p, runs); k < n; k++)
			copy_marked(d, s->copy_cb, p->pool, runs[k].first, p->written + runs[k].first,
				    WRITTEN, runs[k].count, p->copy_buffer, runs[k].first);
	}
	d->fn.CmdPipelineBarrier(s->copy_cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
				 VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, NULL, 0, NULL);
	return d->fn.EndCommandBuffer(s->copy_cb);
}

/* Forgets what was read of the capture's slots: those of an earlier
 * capture are stale, and a lost device leaves them undefined. The capture
 * reads no other slot. */
static void results_clear(struct queue_state *q)
{
	struct slot_run runs[3];
	for (uint32_t k = 0, n = capture_runs(q, runs); k < n; k++)
		memset(q->results + 2 * runs[k].first, 0, sizeof(uint64_t) * 2 * runs[k].count);
}

/*
 * Marks what queue s wrote in the capture (its submissions' and pre-roll's
 * timestamps, and the scopes of the command buffers it ran, whichever
 * queue's pool they were recorded for: the layer records a family's
 * command buffers for its first queue, and a program may submit on
 * another queue of the family than it named) and submits its copy on s,
 * after its capture-frame work. crumbs_frame() runs while no submission
 * does, so s is free to submit on.
 */
static void copy_queue(crumbs_context *ctx, struct queue_state *s)
{
	struct device_state *d = &ctx->devices[s->device];
	if (s->written && (s->submit_count || s->ready_slot != NO_SLOT)) {
		for (uint32_t k = 0; k < s->submit_count; k++) {
			s->written[s->submits[k].begin_slot] = WRITTEN;
			s->written[s->submits[k].end_slot] = WRITTEN;
		}
		if (s->ready_slot != NO_SLOT)
			s->written[s->ready_slot] = WRITTEN;
		s->marked = true;
	}
	for (uint32_t k = 0; k < s->submit_count; k++)
		for (uint32_t c = 0; c < s->submits[k].cmd_count; c++)
			mark_events(ctx, ctx->submit_cmds[s->submits[k].first_cmd + c], 0);

	bool can_copy = s->copy_cb && !family_stale(ctx, s), any = false;
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		any |= ctx->queues[i].marked && queue_same_family(&ctx->queues[i], s);
	VkResult r = VK_INCOMPLETE;
	if (can_copy && any) {
		VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &s->copy_cb,
				    0, NULL };
		r = record_copy(ctx, s);
		if (r == VK_SUCCESS)
			r = d->fn.ResetFences(d->device, 1, &s->copy_fence);
		if (r == VK_SUCCESS)
			r = d->fn.QueueSubmit(s->queue, 1, &si, s->copy_fence);
		if (r == VK_SUCCESS)
			s->copy_pending = true;
		else if (r == VK_ERROR_DEVICE_LOST)
			ctx->device_lost = true;
	}

	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *p = &ctx->queues[i];
		if (!p->marked)
			continue;
		p->marked = false;
		if (r == VK_SUCCESS && queue_same_family(p, s)) {
			marks_change(p, WRITTEN, COPIED);
			p->copy_unread = true;
			continue;
		}
		marks_change(p, WRITTEN, 0);
		/* A standing recording's copy ran in s's batches: without
		 * s's fence nothing says when it is done. */
		if (p == s)
			marks_change(p, COPIED, 0);
		/* Written by a queue that cannot copy into p's buffer (one
		 * without the GPU copy, or of another family): p is read
		 * with vkGetQueryPoolResults, which sees every queue's. */
		if (!s->copy_cb || !queue_same_family(p, s))
			p->read_pool = true;
	}
}

void resolve_start(crumbs_context *ctx)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct device_state *d = &ctx->devices[q->device];
		if (q->results)
			results_clear(q);
		q->copy_unread = q->read_pool = q->marked = false;
		/* The copy of a capture that gave up waiting may still be
		 * queued: its buffers and fence stay its own until it is done,
		 * and no copy of its family's is read in this capture. */
		q->copy_stale = q->copy_pending &&
				d->fn.GetFenceStatus(d->device, q->copy_fence) == VK_NOT_READY;
		if (q->copy_stale)
			ctx_log(ctx, CRUMBS_LOG_WARNING, "the results of an earlier capture are still "
				"being copied on queue family %u; this capture's there are not read",
				q->family);
		else
			q->copy_pending = false;
		if (!q->written)
			continue;
		struct slot_run runs[3];
		for (uint32_t k = 0, n = capture_runs(q, runs); k < n; k++)
			memset(q->written + runs[k].first, 0, runs[k].count);
	}
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		copy_queue(ctx, &ctx->queues[i]);
}

/* Whether every copy into q's buffer is done: this capture's copies on the
 * queues of q's family. -1 when the device is lost. */
static int copies_done(crumbs_context *ctx, const struct queue_state *q)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *s = &ctx->queues[i];
		if (!s->copy_pending || !queue_same_family(s, q))
			continue;
		struct device_state *d = &ctx->devices[s->device];
		VkResult r = d->fn.GetFenceStatus(d->device, s->copy_fence);
		if (r == VK_NOT_READY)
			return 0;
		if (r != VK_SUCCESS)
			return -1;
		s->copy_pending = false;
	}
	return 1;
}

/* Reads a queue's results. Returns false when the device is lost. */
static bool poll_queue(crumbs_context *ctx, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	struct slot_run runs[3];
	uint32_t run_count = capture_runs(q, runs);
	if (q->copy_cb && !q->read_pool) {
		if (!q->copy_unread)
			return true;
		int done = copies_done(ctx, q);
		if (done == 0)
			return true;
		if (done < 0) {
			results_clear(q);
			return false;
		}
		if (!q->copy_coherent) {
			VkMappedMemoryRange range = { VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, NULL,
						      q->copy_memory, 0, VK_WHOLE_SIZE };
			d->fn.InvalidateMappedMemoryRanges(d->device, 1, &range);
		}
		/* Only the copied slots: the rest of the buffer is stale. */
		for (uint32_t k = 0; k < run_count; k++)
			for (uint32_t i = runs[k].first; i < runs[k].first + runs[k].count; i++) {
				bool copied = q->written[i] == COPIED;
				q->results[2 * i] = copied ? q->copy_mapped[2 * i] : 0;
				q->results[2 * i + 1] = copied ? q->copy_mapped[2 * i + 1] : 0;
			}
		q->copy_unread = false;
		return true;
	}
	/* Without VK_QUERY_RESULT_WAIT_BIT: slots not written yet report
	 * unavailable, and the call returns VK_NOT_READY. */
	VkResult r = VK_SUCCESS;
	for (uint32_t k = 0; k < run_count && (r == VK_SUCCESS || r == VK_NOT_READY); k++)
		r = d->fn.GetQueryPoolResults(d->device, q->pool, runs[k].first, runs[k].count,
					      sizeof(uint64_t) * 2 * runs[k].count,
					      q->results + 2 * runs[k].first, sizeof(uint64_t) * 2,
					      VK_QUERY_RESULT_64_BIT |
					      VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
	if (r == VK_SUCCESS || r == VK_NOT_READY)
		return true;
	if (r != VK_ERROR_DEVICE_LOST)
		ctx_log(ctx, CRUMBS_LOG_ERROR, "vkGetQueryPoolResults failed (%d)", (int)r);
	/* What was read before is undefined now; nothing of it is kept. */
	results_clear(q);
	return false;
}

/* Whether every slot the events of cmd (and its secondaries) wrote is
 * available. */
static bool events_ready(crumbs_context *ctx, const struct crumbs_cmd *cmd, int depth)
{
	const struct queue_state *q = &ctx->queues[cmd->queue];
	for (const struct event_block *b = cmd->first; b; b = b->next)
		for (uint32_t i = 0; i < b->count; i++) {
			const struct event *e = &b->events[i];
			if (e->type == EVENT_EXECUTE) {
				const struct crumbs_cmd *s = map_find(ctx, e->u.secondary);
				if (s && depth < MAX_EXECUTE_DEPTH && !events_ready(ctx, s, depth + 1))
					return false;
			} else if (e->slot != NO_SLOT && (!available(q, e->slot) ||
				   (e->type == EVENT_LEAF && !available(q, e->slot + 1)))) {
				return false;
			}
		}
	return true;
}

static bool all_ready(crumbs_context *ctx)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		const struct queue_state *q = &ctx->queues[i];
		if (!q->valid_bits)
			continue;
		if (q->ready_slot != NO_SLOT && !available(q, q->ready_slot))
			return false;
		for (uint32_t k = 0; k < q->submit_count; k++) {
			const struct submit_record *s = &q->submits[k];
			if (!available(q, s->begin_slot) || !available(q, s->end_slot))
				return false;
			for (uint32_t c = 0; c < s->cmd_count; c++)
				if (!events_ready(ctx, ctx->submit_cmds[s->first_cmd + c], 0))
					return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
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
				r = crumbs_writer_scope_begin(w, name, e->level, ticks_of(q, e->slot));
				break;
			case EVENT_PASS:
				snprintf(name, sizeof(name), "%.*s", (int)e->u.name.len,
					 ctx->names + e->u.name.offset);
				r = crumbs_writer_event_begin(w, (enum crumbs_event_kind)e->level,
							      name[0] ? name : NULL,
							      ticks_of(q, e->slot));
				break;
			case EVENT_LEAF: {
				const struct counts_record *c = &ctx->counts[e->u.counts];
				snprintf(name, sizeof(name), "%.*s", (int)c->name.len,
					 ctx->names + c->name.offset);
				struct crumbs_leaf_desc leaf = {
					(enum crumbs_event_kind)e->level, name[0] ? name : NULL, c->draws,
					c->dispatches, c->prims, c->verts, ticks_of(q, e->slot),
					e->slot == NO_SLOT ? CRUMBS_NO_TICKS : ticks_of(q, e->slot + 1)
				};
				r = crumbs_writer_leaf(w, &leaf);
				break;
			}
			case EVENT_END:
				r = crumbs_writer_scope_end(w, ticks_of(q, e->slot));
				break;
			case EVENT_COUNTS: {
				const struct counts_record *c = &ctx->counts[e->u.counts];
				r = crumbs_writer_counts(w, c->draws, c->dispatches, c->prims,
							 c->verts);
				break;
			}
			case EVENT_EXECUTE: {
				const struct crumbs_cmd *s = map_find(ctx, e->u.secondary);
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
			r = crumbs_writer_queue_ready(w, i, ticks_of(q, q->ready_slot));
	}
	for (uint32_t i = 0; i < ctx->queue_count && r == CRUMBS_OK; i++) {
		const struct queue_state *q = &ctx->queues[i];
		for (uint32_t k = 0; k < q->submit_count && r == CRUMBS_OK; k++) {
			const struct submit_record *s = &q->submits[k];
			const struct crumbs_semaphore_op *ops = ctx->ops + s->first_op;
			struct crumbs_submit_desc sd = { i, (uint64_t)s->cpu_ns, ticks_of(q, s->begin_slot),
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
				r = crumbs_writer_submit_end(w, ticks_of(q, s->end_slot));
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
/* The writer thread                                                        */
/* ------------------------------------------------------------------------ */

/* A message for the program's log, handed over when the writer is done. */
static void log_later(crumbs_context *ctx, enum crumbs_log_level level, const char *text,
		      size_t len)
{
	char byte = (char)level;
	sbuf_add(&ctx->writer_log, &byte, 1);
	sbuf_add(&ctx->writer_log, text, len);
	sbuf_add(&ctx->writer_log, "", 1);
}

static int table_sink(void *user, const char *text, size_t len)
{
	/* One message per block, without its last line break. */
	while (len > 0 && text[len - 1] == '\n')
		len--;
	log_later(user, CRUMBS_LOG_INFO, text, len);
	return 0;
}

static void print_table(crumbs_context *ctx, const char *path)
{
	reader *c = NULL;
	struct analyze_error err;
	const struct frame *f;
	struct report_sink sink = { table_sink, ctx };
	char msg[PATH_MAX + 400];

	if (reader_open_file(path, &c, &err) != CRUMBS_OK ||
	    reader_next_frame(c, &f, &err) != CRUMBS_OK || !f) {
		snprintf(msg, sizeof(msg), "cannot read back '%s': %s", path, err.text);
		log_later(ctx, CRUMBS_LOG_ERROR, msg, strlen(msg));
	} else if (report_frame(&ctx->settings, reader_meta(c), f, &sink) != 0) {
		snprintf(msg, sizeof(msg), "cannot print the tables of '%s'", path);
		log_later(ctx, CRUMBS_LOG_ERROR, msg, strlen(msg));
	}
	reader_free(c);
}

/* Writes the capture named by writer_path and prints its tables. */
static void write_job(crumbs_context *ctx)
{
	ctx->writer_result = write_capture(ctx, ctx->writer_path, ctx->writer_flags);
	if (ctx->writer_result == CRUMBS_OK)
		print_table(ctx, ctx->writer_path);
}

/*
 * Compressing, writing and reading the capture back for its tables take a
 * millisecond or more: on the program's thread that would be a hitch a
 * few frames after every capture. The writer reads only what the capture
 * left, which nothing changes until the capture is back to STATE_IDLE. It
 * waits from crumbs_create on, since starting a thread costs the caller
 * about 0.1 ms.
 */
static void *writer_main(void *arg)
{
	crumbs_context *ctx = arg;
	pthread_mutex_lock(&ctx->writer_lock);
	for (;;) {
		while (!ctx->writer_job && !ctx->writer_quit)
			pthread_cond_wait(&ctx->writer_wake, &ctx->writer_lock);
		if (!ctx->writer_job)
			break;
		pthread_mutex_unlock(&ctx->writer_lock);
		write_job(ctx);
		pthread_mutex_lock(&ctx->writer_lock);
		ctx->writer_job = false;
		pthread_cond_broadcast(&ctx->writer_wake);
	}
	pthread_mutex_unlock(&ctx->writer_lock);
	return NULL;
}

/*
 * A program that exits without crumbs_destroy (many never destroy their
 * Vulkan device) would lose a capture its writer is still writing: at
 * exit, each writer still at work is waited for, so the file lands. Its
 * tables are not printed then; the program's log may be gone.
 */
static pthread_mutex_t writers_lock = PTHREAD_MUTEX_INITIALIZER;
static crumbs_context *writers;   /* contexts with a writer thread */
static pthread_once_t writers_once = PTHREAD_ONCE_INIT;

static void writers_finish(void)
{
	pthread_mutex_lock(&writers_lock);
	for (crumbs_context *ctx = writers; ctx; ctx = ctx->writer_next) {
		pthread_mutex_lock(&ctx->writer_lock);
		while (ctx->writer_job)
			pthread_cond_wait(&ctx->writer_wake, &ctx->writer_lock);
		pthread_mutex_unlock(&ctx->writer_lock);
	}
	pthread_mutex_unlock(&writers_lock);
}

static void writers_at_exit(void)
{
	atexit(writers_finish);
}

bool writer_init(crumbs_context *ctx)
{
	sigset_t all, old;
	if (pthread_mutex_init(&ctx->writer_lock, NULL) != 0)
		return false;
	if (pthread_cond_init(&ctx->writer_wake, NULL) != 0) {
		pthread_mutex_destroy(&ctx->writer_lock);
		return false;
	}
	ctx->writer_sync = true;
	/* Every signal blocked, so that the program's handlers run on its
	 * own threads. Without a thread, captures are written in place. */
	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old) == 0) {
		ctx->writer_sync = pthread_create(&ctx->writer, NULL, writer_main, ctx) != 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (!ctx->writer_sync) {
		pthread_once(&writers_once, writers_at_exit);
		pthread_mutex_lock(&writers_lock);
		ctx->writer_next = writers;
		writers = ctx;
		pthread_mutex_unlock(&writers_lock);
	}
	return true;
}

void writer_release(crumbs_context *ctx)
{
	if (!ctx->writer_sync) {
		pthread_mutex_lock(&writers_lock);
		for (crumbs_context **p = &writers; *p; p = &(*p)->writer_next)
			if (*p == ctx) {
				*p = ctx->writer_next;
				break;
			}
		pthread_mutex_unlock(&writers_lock);
		pthread_mutex_lock(&ctx->writer_lock);
		ctx->writer_quit = true;
		pthread_cond_broadcast(&ctx->writer_wake);
		pthread_mutex_unlock(&ctx->writer_lock);
		pthread_join(ctx->writer, NULL);
	}
	pthread_cond_destroy(&ctx->writer_wake);
	pthread_mutex_destroy(&ctx->writer_lock);
}

void resolve_wait(crumbs_context *ctx)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		if (!q->copy_pending || !q->copy_fence)
			continue;
		struct device_state *d = &ctx->devices[q->device];
		/* What it returns is read by copies_done() next. */
		(void)d->fn.WaitForFences(d->device, 1, &q->copy_fence, VK_TRUE,
					  (uint64_t)RESOLVE_NS);
	}
}

bool resolve_try(crumbs_context *ctx, bool force)
{
	bool lost = ctx->device_lost;
	for (uint32_t i = 0; i < ctx->queue_count && !lost; i++)
		if (ctx->queues[i].valid_bits && !poll_queue(ctx, &ctx->queues[i]))
			lost = true;
	bool ready = !lost && all_ready(ctx);
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

	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s-frame-%llu.crumbs", ctx->capture_dir,
			 ctx->program_name, (unsigned long long)ctx->capture_frame);
	size_t len = strlen(path);
	ctx_free(ctx, ctx->writer_path);
	if ((ctx->writer_path = ctx_alloc(ctx, len + 1)))
		memcpy(ctx->writer_path, path, len + 1);
	ctx->writer_flags = flags;
	if (!ctx->writer_path || n <= 0 || (size_t)n >= sizeof(path)) {
		ctx->writer_result = ctx->writer_path ? CRUMBS_ERROR_INVALID_ARGUMENT :
			CRUMBS_ERROR_OUT_OF_MEMORY;
	} else if (force || ctx->writer_sync) {
		write_job(ctx);
	} else {
		pthread_mutex_lock(&ctx->writer_lock);
		ctx->writer_job = true;
		pthread_cond_broadcast(&ctx->writer_wake);
		pthread_mutex_unlock(&ctx->writer_lock);
	}
	return true;
}

bool resolve_written(crumbs_context *ctx, bool wait)
{
	if (!ctx->writer_sync) {
		pthread_mutex_lock(&ctx->writer_lock);
		while (wait && ctx->writer_job)
			pthread_cond_wait(&ctx->writer_wake, &ctx->writer_lock);
		bool busy = ctx->writer_job;
		pthread_mutex_unlock(&ctx->writer_lock);
		if (busy)
			return false;
	}

	const char *path = ctx->writer_path ? ctx->writer_path : "";
	for (size_t at = 0; at < ctx->writer_log.len;) {
		const char *text = ctx->writer_log.data + at + 1;
		ctx_log_text(ctx, (enum crumbs_log_level)ctx->writer_log.data[at], text);
		at += 1 + strlen(text) + 1;
	}
	if (ctx->writer_log.failed)
		ctx_log(ctx, CRUMBS_LOG_ERROR, "out of memory for the tables of '%s'", path);
	sbuf_release(&ctx->writer_log);

	enum crumbs_result r = ctx->writer_result;
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
