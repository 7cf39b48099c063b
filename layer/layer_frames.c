/* SPDX-License-Identifier: MIT */
/*
 * layer_frames.c: where the layer ends a device's frames: at each
 * vkQueuePresentKHR; on a device that has never presented, at each
 * submission that signals a fence; or, with CRUMBS_LAYER_WINDOW_MS, every
 * so many milliseconds from the first submission.
 */
#include "layer_internal.h"

/* Under the write lock, held by the caller or taken here: crumbs_frame
 * submits on the device's queues, which no other thread may use then. */
static void frame_end_locked(struct layer_device *d)
{
	crumbs_frame(d->ctx);
	atomic_fetch_add(&d->frames, 1);
}

void layer_frame_end(struct layer_device *d)
{
	if (d->window_lock_ready)
		pthread_rwlock_wrlock(&d->window_lock);
	frame_end_locked(d);
	if (d->window_lock_ready)
		pthread_rwlock_unlock(&d->window_lock);
}

/* The first captured frame of a run last said to end at a fence: devices
 * that capture the same frame say it once. */
static _Atomic uint64_t fence_rule_said = UINT64_MAX;

/* A frame ended by a fenced submission. When it is the first captured
 * frame of a run, says which rule made it, once a run: a compute job's or a video filter's
 * fenced submission may be a small part of what its user calls a frame. */
void layer_fenced_frame_end(struct layer_device *d)
{
	uint64_t frame = atomic_load(&d->frames);
	if (recorder_first_frame(d->ctx) &&
	    atomic_exchange(&fence_rule_said, frame) != frame) {
		char program[64];
		default_program_name(program, sizeof(program));
		say("frames of '%s' ended at fenced submissions (it never presented); use --window MS "
		    "(CRUMBS_LAYER_WINDOW_MS=MS) for frames of fixed length", program);
	}
	layer_frame_end(d);
}

/*
 * With a window: ends the frame of every window that has passed since the
 * first submission (which starts window 0), so that frame N is the Nth
 * window. Windows without a submission end one frame each, so that the
 * numbers hold: an idle crumbs_frame is cheap enough that even thousands
 * of idle windows cost the next submission little (docs/BENCHMARKS.md,
 * the layer). Frames end under the write lock, since crumbs_frame must not run during another
 * queue's submission.
 */
void window_advance(struct layer_device *d)
{
	int64_t now = now_ns(), start = 0;
	if (atomic_compare_exchange_strong(&d->window_start_ns, &start, now))
		start = now;
	uint64_t due = now > start ? (uint64_t)((now - start) / d->window_ns) : 0;
	if (atomic_load(&d->frames) < due) {
		pthread_rwlock_wrlock(&d->window_lock);
		while (atomic_load(&d->frames) < due)
			frame_end_locked(d);
		pthread_rwlock_unlock(&d->window_lock);
	}
}

/* Before the layer records a submission: it lands in the frame of its
 * own window, so the capture of window N completes at the first
 * submission after it. The read lock is held until window_leave. */
void window_enter(struct layer_device *d)
{
	if (d->window_ns)
		window_advance(d);
	frames_hold(d);
}

void window_leave(struct layer_device *d)
{
	frames_release(d);
}

void frames_hold(struct layer_device *d)
{
	if (d->window_lock_ready)
		pthread_rwlock_rdlock(&d->window_lock);
}

void frames_release(struct layer_device *d)
{
	if (d->window_lock_ready)
		pthread_rwlock_unlock(&d->window_lock);
}
