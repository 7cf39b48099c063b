/* SPDX-License-Identifier: MIT */
/*
 * present.c: the program's presents (crumbs_present) and when they were
 * shown (crumbs_present_shown), kept for the frame being recorded and
 * written with it (format 1.5's PRESENT and PRESENT_SHOWN).
 */
#include "capture_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * A frame holds at most this many presents, and as many shown times: far
 * more than a program makes (one a swapchain a frame), few enough to set
 * aside at creation. Those past it are left out of the frame.
 */
#define PRESENT_FRAME_MAX 64

struct present_shown_record {
	uint64_t swapchain, id;
	int64_t shown_ns;
	unsigned source;
};

struct present_frame {
	struct crumbs_present_desc presents[PRESENT_FRAME_MAX];
	uint32_t present_count;
	struct present_shown_record shown[PRESENT_FRAME_MAX];
	uint32_t shown_count;
};

/*
 * Presents and shown times come from any thread (the layer's waits for
 * presents have one of their own) at any moment, a frame's end included:
 * they wait in `pending`, under the lock, until the thread that ends
 * frames takes them into the frame that ends, which is its set's to
 * write. A present costs a lock: presents are one a frame.
 */
struct present_state {
	pthread_mutex_t lock;
	struct present_frame pending;
	struct present_frame sets[CAPTURE_SETS];
};

void present_init(crumbs_context *ctx)
{
	struct present_state *s = ctx_alloc(ctx, sizeof(*s));
	if (!s)
		return; /* presents are not recorded: nothing else is lost */
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		ctx_free(ctx, s);
		return;
	}
	ctx->present = s;
}

void present_release(crumbs_context *ctx)
{
	if (!ctx->present)
		return;
	pthread_mutex_destroy(&ctx->present->lock);
	ctx_free(ctx, ctx->present);
	ctx->present = NULL;
}

bool recorder_recording(const crumbs_context *ctx)
{
	return ctx && atomic_load(&((crumbs_context *)(uintptr_t)ctx)->cur) != NULL;
}

static unsigned present_mode(enum crumbs_present_mode mode)
{
	return (unsigned)mode <= CRUMBS_PRESENT_MODE_OTHER ? (unsigned)mode :
							     CRUMBS_PRESENT_MODE_OTHER;
}

void crumbs_present(crumbs_context *ctx, const struct crumbs_present_info *info)
{
	if (!ctx || !info || !ctx->present || !atomic_load(&ctx->cur) || cpu_forked(ctx))
		return;
	int64_t begin = info->begin_ns, end = info->end_ns;
	if (begin <= 0 && end <= 0)
		begin = end = now_ns();
	else if (begin <= 0)
		begin = end;
	else if (end < begin)
		end = begin;
	uint64_t duration = (uint64_t)(end - begin);
	struct crumbs_present_desc d = {
		.swapchain = info->swapchain,
		.cpu_ns = (uint64_t)begin,
		.duration_ns = duration > (1ull << 40) ? 1ull << 40 : duration,
		.present_id = info->present_id,
		.mode = present_mode(info->mode),
		.flags = info->result < 0 ? CRUMBS_PRESENT_FAILED :
			 info->result == VK_SUBOPTIMAL_KHR ? CRUMBS_PRESENT_SUBOPTIMAL : 0,
		.refresh_ns = info->refresh_ns <= 10000000000ull ? info->refresh_ns : 0,
	};
	struct present_state *s = ctx->present;
	pthread_mutex_lock(&s->lock);
	if (s->pending.present_count < PRESENT_FRAME_MAX)
		s->pending.presents[s->pending.present_count++] = d;
	pthread_mutex_unlock(&s->lock);
}

void crumbs_present_shown(crumbs_context *ctx, uint64_t swapchain, uint64_t present_id,
			  enum crumbs_present_source source, int64_t shown_ns)
{
	if (!ctx || !ctx->present || present_id == 0 || shown_ns < 0 ||
	    (source != CRUMBS_SHOWN_PRESENT_WAIT && source != CRUMBS_SHOWN_DISPLAY_TIMING) ||
	    cpu_forked(ctx))
		return;
	/* Not ctx->cur alone: a wait for a present often ends while the
	 * frame that present ended is being ended, between two sets. The
	 * next frame recorded takes it. */
	int state = atomic_load(&ctx->state);
	if (state != STATE_PREROLL && state != STATE_RUNNING && !atomic_load(&ctx->cur))
		return;
	struct present_state *s = ctx->present;
	pthread_mutex_lock(&s->lock);
	if (s->pending.shown_count < PRESENT_FRAME_MAX)
		s->pending.shown[s->pending.shown_count++] =
			(struct present_shown_record){ swapchain, present_id, shown_ns, source };
	pthread_mutex_unlock(&s->lock);
}

void present_collect(crumbs_context *ctx, struct capture_set *set)
{
	struct present_state *s = ctx->present;
	if (!s)
		return;
	struct present_frame *f = &s->sets[set->index % CAPTURE_SETS];
	pthread_mutex_lock(&s->lock);
	f->present_count = s->pending.present_count;
	memcpy(f->presents, s->pending.presents, sizeof(f->presents[0]) * f->present_count);
	f->shown_count = s->pending.shown_count;
	memcpy(f->shown, s->pending.shown, sizeof(f->shown[0]) * f->shown_count);
	s->pending.present_count = s->pending.shown_count = 0;
	pthread_mutex_unlock(&s->lock);
}

enum crumbs_result present_write(crumbs_context *ctx, const struct capture_set *set,
				 crumbs_writer *w)
{
	struct present_state *s = ctx->present;
	enum crumbs_result r = CRUMBS_OK;
	if (!s)
		return r;
	const struct present_frame *f = &s->sets[set->index % CAPTURE_SETS];
	for (uint32_t i = 0; i < f->present_count && r == CRUMBS_OK; i++) {
		r = crumbs_writer_present(w, &f->presents[i]);
		/* Past the frame's limits, or a time the writer refuses:
		 * left out, as the frame's other records would be. */
		if (r == CRUMBS_ERROR_LIMIT || r == CRUMBS_ERROR_INVALID_ARGUMENT)
			r = CRUMBS_OK;
	}
	for (uint32_t i = 0; i < f->shown_count && r == CRUMBS_OK; i++) {
		const struct present_shown_record *h = &f->shown[i];
		r = crumbs_writer_present_shown(w, h->swapchain, h->id, h->source,
						(uint64_t)h->shown_ns);
		if (r == CRUMBS_ERROR_LIMIT || r == CRUMBS_ERROR_INVALID_ARGUMENT)
			r = CRUMBS_OK;
	}
	return r;
}
