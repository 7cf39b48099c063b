/* SPDX-License-Identifier: MIT */
/*
 * cpu.c: scopes on the program's CPU threads (crumbs_cpu_*). Each thread
 * that records one gets buffers of its own, two rings it alone writes: its
 * events (a begin or an end and its time) and their names. The thread
 * that calls crumbs_frame takes what each ring holds up to the end of a
 * captured frame into the frame's set, so a scope costs its thread no
 * lock, no allocation after its first and no system call. Its time is
 * the CPU's time-stamp counter where it is invariant (x86-64: one
 * instruction, where CLOCK_MONOTONIC costs a call into the vDSO that
 * reads it and scales it), taken to CLOCK_MONOTONIC, the clock of
 * submissions and of the GPU's calibrated timestamps, when the frame
 * thread takes the events: by the counter's rate measured since the
 * context began, from a pair of readings of both taken then.
 *
 * A thread's buffers belong to the context: the frame thread frees those
 * of a thread that has exited, once it has taken what they held, and the
 * context frees the rest. No destructor runs at a thread's exit: the
 * library may be unloaded before the threads that used it end (the
 * loader unloads a layer with the instance), and a destructor of an
 * unloaded library would be called all the same. A thread finds its
 * buffers for a context by the context's serial number, never by its
 * address, which a later context may reuse.
 */
/* gettid() and pthread_getname_np(), once per thread. */
#define _GNU_SOURCE
#include "capture_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

/* A thread's rings hold a frame's scopes until crumbs_frame takes them:
 * 16384 scopes (768 KiB), with 256 KiB of names; past that, scopes are
 * counted lost. */
#define CPU_EVENTS 32768u
#define CPU_NAME_RING 262144u
#define CPU_TLS_ENTRIES 8       /* contexts a thread keeps its buffers for at once */

struct cpu_event {
	uint64_t ticks;     /* cpu_ticks() */
	uint64_t name_end; /* where its name ends in the name ring, counted from the start */
	uint16_t name_len;
	uint8_t type;       /* CPU_RECORD_BEGIN or CPU_RECORD_END */
	uint8_t level;
};

/* Frames a thread's buffers may go unused before the frame thread looks
 * whether the thread is still there. */
#define CPU_IDLE_FRAMES 64

struct cpu_thread {
	struct cpu_thread *next;        /* the context's list, under cpu_lock */
	uint32_t idle;                  /* the frame thread's: frames taken with nothing */
	uint32_t tid;
	char name[64];                  /* under the context's cpu_lock */
	/* The rings, made at its first recorded scope. Only the thread
	 * writes events and names and moves the heads; only the frame
	 * thread moves the tails. */
	struct cpu_event *events;
	char *names;
	_Atomic uint64_t head, tail;
	_Atomic uint64_t name_head, name_tail;
	_Atomic uint32_t lost;          /* events that found no room */
	/* The thread's own. */
	uint32_t epoch;                 /* the capture its counts are of */
	uint32_t skipped;               /* open scopes not recorded */
};

/* A thread's buffers, by context serial. */
struct cpu_tls {
	uint32_t count;
	struct {
		uint64_t serial;
		struct cpu_thread *t;
	} e[CPU_TLS_ENTRIES];
};

/* Whether cpu_ticks() reads the time-stamp counter (1) or the clock (0). */
static int use_tsc = -1;
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;

static void tsc_init(void)
{
	use_tsc = 0;
#if defined(__x86_64__)
	/* Invariant: the same rate in every power state, on every core. */
	unsigned a, b, c, d;
	if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)))
		use_tsc = 1;
#endif
}

static inline uint64_t cpu_ticks(void)
{
#if defined(__x86_64__)
	if (use_tsc)
		return __rdtsc();
#endif
	return (uint64_t)now_ns();
}

/* A reading of both clocks at once: the counter's around the clock's,
 * the closest pair of three. */
FRAME_PATH
static void tick_sample(int64_t *ns, uint64_t *ticks)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		uint64_t a = cpu_ticks();
		int64_t n = now_ns();
		uint64_t b = cpu_ticks();
		if (b - a < best) {
			best = b - a;
			*ns = n;
			*ticks = a + (b - a) / 2;
		}
	}
}

/* Takes ctx's time line from a new reading: ns per tick since the first. */
FRAME_PATH
static void tick_anchor(crumbs_context *ctx)
{
	tick_sample(&ctx->cpu_anchor_ns, &ctx->cpu_anchor_ticks);
	uint64_t dt = ctx->cpu_anchor_ticks - ctx->cpu_base_ticks;
	int64_t dn = ctx->cpu_anchor_ns - ctx->cpu_base_ns;
	if (use_tsc && dt > 0 && dn > 10000)
		ctx->cpu_ns_per_tick = (double)dn / (double)dt;
}

/* ticks, as CLOCK_MONOTONIC ns. */
FRAME_PATH
static int64_t tick_ns(const crumbs_context *ctx, uint64_t ticks)
{
	if (!use_tsc)
		return (int64_t)ticks;
	double d = (double)(int64_t)(ticks - ctx->cpu_anchor_ticks) * ctx->cpu_ns_per_tick;
	return ctx->cpu_anchor_ns + (int64_t)d;
}

static _Thread_local struct cpu_tls tls;
static _Atomic uint64_t next_serial = 1;

static void thread_free(struct cpu_thread *t)
{
	free(t->events);
	free(t->names);
	free(t);
}

void cpu_init(crumbs_context *ctx)
{
	__atomic_store_n(&ctx->state_.cpu_detail, -1, __ATOMIC_RELAXED);
	pthread_once(&tsc_once, tsc_init);
	tick_sample(&ctx->cpu_base_ns, &ctx->cpu_base_ticks);
	ctx->cpu_anchor_ns = ctx->cpu_base_ns;
	ctx->cpu_anchor_ticks = ctx->cpu_base_ticks;
	/* Measured at the first frame taken 10 us or more after this; the
	 * counter's nominal rate is not known here. */
	ctx->cpu_ns_per_tick = 1.0;
	ctx->cpu_serial = atomic_fetch_add(&next_serial, 1);
	ctx->cpu_lock_ready = pthread_mutex_init(&ctx->cpu_lock, NULL) == 0;
}

/* The calling thread's buffers for ctx, made when `make` and it has none;
 * NULL without. */
RECORD_PATH
static struct cpu_thread *self(crumbs_context *ctx, bool make)
{
	struct cpu_tls *b = &tls;
	for (uint32_t i = 0; i < b->count; i++)
		if (b->e[i].serial == ctx->cpu_serial)
			return b->e[i].t;
	if (!make || !ctx->cpu_lock_ready)
		return NULL;
	struct cpu_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = (uint32_t)syscall(SYS_gettid);
	if (pthread_getname_np(pthread_self(), t->name, sizeof(t->name)) != 0)
		t->name[0] = '\0';
	if (b->count == CPU_TLS_ENTRIES) {
		/* The oldest context it used is forgotten here; its buffers
		 * stay with that context, which frees them. */
		memmove(b->e, b->e + 1, sizeof(b->e[0]) * (CPU_TLS_ENTRIES - 1));
		b->count--;
	}
	b->e[b->count].serial = ctx->cpu_serial;
	b->e[b->count].t = t;
	b->count++;
	pthread_mutex_lock(&ctx->cpu_lock);
	t->next = ctx->cpu_threads;
	ctx->cpu_threads = t;
	pthread_mutex_unlock(&ctx->cpu_lock);
	return t;
}

void crumbs_thread_name(crumbs_context *ctx, const char *name)
{
	struct cpu_thread *t;
	if (!ctx || !name || !(t = self(ctx, true)))
		return;
	pthread_mutex_lock(&ctx->cpu_lock);
	snprintf(t->name, sizeof(t->name), "%s", name);
	pthread_mutex_unlock(&ctx->cpu_lock);
}

/* Puts an event in t's ring, or counts it lost. */
RECORD_PATH
static void push(struct cpu_thread *t, uint8_t type, unsigned level, const char *name, size_t len)
{
	if (!t->events) {
		t->events = malloc(sizeof(*t->events) * CPU_EVENTS);
		t->names = malloc(CPU_NAME_RING);
		if (!t->events || !t->names) {
			free(t->events);
			free(t->names);
			t->events = NULL;
			t->names = NULL;
			atomic_fetch_add(&t->lost, 1);
			return;
		}
	}
	uint64_t ticks = cpu_ticks();
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	uint64_t nh = atomic_load_explicit(&t->name_head, memory_order_relaxed);
	if (len > CPU_RECORD_NAME_MAX)
		len = CPU_RECORD_NAME_MAX;
	/* A name never wraps: one that would is put at the ring's start. */
	uint64_t at = nh % CPU_NAME_RING;
	uint64_t skip = at + len > CPU_NAME_RING ? CPU_NAME_RING - at : 0;
	if (head - atomic_load_explicit(&t->tail, memory_order_acquire) >= CPU_EVENTS ||
	    nh + skip + len - atomic_load_explicit(&t->name_tail, memory_order_acquire) >
		    CPU_NAME_RING) {
		atomic_fetch_add_explicit(&t->lost, 1, memory_order_relaxed);
		return;
	}
	if (len)
		memcpy(t->names + (skip ? 0 : at), name, len);
	nh += skip + len;
	struct cpu_event *e = &t->events[head % CPU_EVENTS];
	e->ticks = ticks;
	e->name_end = nh;
	e->name_len = (uint16_t)len;
	e->type = type;
	e->level = (uint8_t)level;
	atomic_store_explicit(&t->name_head, nh, memory_order_release);
	atomic_store_explicit(&t->head, head + 1, memory_order_release);
}

/* The thread's buffers while a frame is recorded, their counts those of
 * this capture. */
RECORD_PATH
static struct cpu_thread *recording(crumbs_context *ctx, bool make)
{
	struct cpu_thread *t = self(ctx, make);
	if (!t)
		return NULL;
	uint32_t epoch = atomic_load_explicit(&ctx->cpu_epoch, memory_order_relaxed);
	if (t->epoch != epoch) {
		t->epoch = epoch;
		t->skipped = 0;
	}
	return t;
}

RECORD_PATH
void crumbs_cpu_record_(crumbs_context *ctx, unsigned level, const char *name)
{
	int detail = __atomic_load_n(&ctx->state_.cpu_detail, __ATOMIC_RELAXED);
	struct cpu_thread *t;
	if (detail < 0 || !(t = recording(ctx, true)))
		return;
	if (level > CRUMBS_DETAIL_MAX)
		level = CRUMBS_DETAIL_MAX;
	if ((int)level > detail || t->skipped) {
		t->skipped++;
		return;
	}
	push(t, CPU_RECORD_BEGIN, level, name ? name : "", name ? strlen(name) : 0);
}

RECORD_PATH
void crumbs_cpu_recordf_(crumbs_context *ctx, unsigned level, const char *fmt, ...)
{
	char buf[CPU_RECORD_NAME_MAX + 1];
	va_list ap;
	va_start(ap, fmt);
	name_vformat(buf, sizeof(buf), fmt ? fmt : "", ap);
	va_end(ap);
	crumbs_cpu_record_(ctx, level, buf);
}

RECORD_PATH
void crumbs_cpu_close_(crumbs_context *ctx)
{
	struct cpu_thread *t = recording(ctx, true);
	if (!t)
		return;
	if (t->skipped) {
		t->skipped--;
		return;
	}
	push(t, CPU_RECORD_END, 0, NULL, 0);
}

/* ------------------------------------------------------------------------ */
/* The frame thread's side                                                  */
/* ------------------------------------------------------------------------ */

void cpu_start(crumbs_context *ctx)
{
	atomic_fetch_add(&ctx->cpu_epoch, 1);
	if (!ctx->cpu_lock_ready)
		return;
	/* What threads left in their rings after the last capture's frames
	 * is not of this one. */
	pthread_mutex_lock(&ctx->cpu_lock);
	for (struct cpu_thread *t = ctx->cpu_threads; t; t = t->next) {
		atomic_store_explicit(&t->name_tail, atomic_load(&t->name_head), memory_order_release);
		atomic_store_explicit(&t->tail, atomic_load(&t->head), memory_order_release);
		atomic_store(&t->lost, 0);
	}
	pthread_mutex_unlock(&ctx->cpu_lock);
}

/* Room for one more of each in set; false when out of memory. */
FRAME_PATH
static bool set_room(crumbs_context *ctx, struct capture_set *set, uint32_t name_len)
{
	if (!ctx_grow(ctx, (void **)&set->cpu_records, &set->cpu_record_cap,
		      set->cpu_record_count + 1, sizeof(*set->cpu_records), 256))
		return false;
	if (set->cpu_name_len > UINT32_MAX - name_len)
		return false;
	return ctx_grow(ctx, (void **)&set->cpu_names, &set->cpu_name_cap,
			set->cpu_name_len + name_len, 1, 4096);
}

/* Takes t's events of set's frame (those before its end) into set, as
 * its thread `index`. */
FRAME_PATH
static void take(crumbs_context *ctx, struct capture_set *set, struct cpu_thread *t,
		 uint32_t index)
{
	uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
	uint64_t i = atomic_load_explicit(&t->tail, memory_order_relaxed);
	uint64_t name_tail = atomic_load_explicit(&t->name_tail, memory_order_relaxed);
	for (; i < head; i++) {
		const struct cpu_event *e = &t->events[i % CPU_EVENTS];
		int64_t ns = tick_ns(ctx, e->ticks);
		if (ns >= set->end_ns)
			break; /* of the next frame */
		if (!set_room(ctx, set, e->name_len)) {
			atomic_fetch_add(&set->dropped, 1);
		} else {
			struct cpu_record *r = &set->cpu_records[set->cpu_record_count++];
			r->ns = ns;
			r->thread = index;
			r->type = e->type;
			r->level = e->level;
			r->name_off = set->cpu_name_len;
			r->name_len = e->name_len;
			if (e->name_len)
				memcpy(set->cpu_names + set->cpu_name_len,
				       t->names + (e->name_end - e->name_len) % CPU_NAME_RING,
				       e->name_len);
			set->cpu_name_len += e->name_len;
		}
		name_tail = e->name_end;
	}
	atomic_store_explicit(&t->name_tail, name_tail, memory_order_release);
	atomic_store_explicit(&t->tail, i, memory_order_release);
}

FRAME_PATH
void cpu_collect(crumbs_context *ctx, struct capture_set *set)
{
	set->cpu_thread_count = set->cpu_record_count = set->cpu_name_len = 0;
	if (!ctx->cpu_lock_ready)
		return;
	tick_anchor(ctx);
	pthread_mutex_lock(&ctx->cpu_lock);
	for (struct cpu_thread **p = &ctx->cpu_threads; *p;) {
		struct cpu_thread *t = *p;
		bool pending = atomic_load(&t->head) != atomic_load(&t->tail);
		t->idle = pending ? 0 : t->idle + 1;
		if (pending && t->events &&
		    ctx_grow(ctx, (void **)&set->cpu_threads, &set->cpu_thread_cap,
			     set->cpu_thread_count + 1, sizeof(*set->cpu_threads), 8)) {
			uint32_t index = set->cpu_thread_count, before = set->cpu_record_count;
			set->cpu_threads[index].tid = t->tid;
			memcpy(set->cpu_threads[index].name, t->name, sizeof(t->name));
			take(ctx, set, t, index);
			if (set->cpu_record_count > before)
				set->cpu_thread_count++;
		}
		uint32_t lost = atomic_exchange(&t->lost, 0);
		if (lost)
			atomic_fetch_add(&set->dropped, lost);
		/* Buffers long unused whose thread has exited are freed: a
		 * program may make and end threads all along. (A thread id
		 * taken again by a new thread keeps them; the new thread
		 * makes its own.) */
		if (t->idle && t->idle % CPU_IDLE_FRAMES == 0 &&
		    atomic_load(&t->head) == atomic_load(&t->tail) &&
		    syscall(SYS_tgkill, getpid(), (pid_t)t->tid, 0) != 0) {
			*p = t->next;
			thread_free(t);
			continue;
		}
		p = &t->next;
	}
	pthread_mutex_unlock(&ctx->cpu_lock);
}

void cpu_release(crumbs_context *ctx)
{
	for (struct cpu_thread *t = ctx->cpu_threads, *next; t; t = next) {
		next = t->next;
		thread_free(t);
	}
	ctx->cpu_threads = NULL;
	if (ctx->cpu_lock_ready)
		pthread_mutex_destroy(&ctx->cpu_lock);
	ctx->cpu_lock_ready = false;
	for (uint32_t k = 0; k < CAPTURE_SETS; k++) {
		ctx_free(ctx, ctx->sets[k].cpu_threads);
		ctx_free(ctx, ctx->sets[k].cpu_records);
		ctx_free(ctx, ctx->sets[k].cpu_names);
	}
}
