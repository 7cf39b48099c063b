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
 *
 * Tasks go through the same rings: a task's record keeps its ids and
 * strings where a scope keeps its name. The frame thread merges every
 * thread's by time and follows which tasks are open (the task table),
 * from the request of a capture or run on, so that a recorded frame can
 * show the tasks open when it began.
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
	uint8_t type;       /* CPU_RECORD_* */
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
	uint32_t serial;                /* the high half of its tasks' ids */
	uint32_t task_next;             /* ... and the low half's last */
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

/* Counts the forks this process came from: a context made before one
 * records nothing in the child, where its other threads (the output
 * thread, a thread that held a lock) are gone. */
static _Atomic uint32_t fork_generation;

static void forked_child(void)
{
	atomic_fetch_add(&fork_generation, 1);
}

static void tsc_init(void)
{
	pthread_atfork(NULL, NULL, forked_child);
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
	ctx->fork_generation = atomic_load(&fork_generation);
}

/* The calling thread's id, asked of the system once per thread (and
 * again in a forked child, where the thread that forked has another). */
static _Thread_local uint32_t tid_cached, tid_generation;

static uint32_t self_tid(void)
{
	uint32_t generation = atomic_load_explicit(&fork_generation, memory_order_relaxed);
	if (!tid_cached || tid_generation != generation) {
		tid_cached = (uint32_t)syscall(SYS_gettid);
		tid_generation = generation;
	}
	return tid_cached;
}

uint32_t cpu_fork_generation(void)
{
	return atomic_load_explicit(&fork_generation, memory_order_relaxed);
}

bool cpu_forked(crumbs_context *ctx)
{
	if (ctx->forked)
		return true;
	if (ctx->fork_generation == atomic_load_explicit(&fork_generation, memory_order_relaxed))
		return false;
	ctx->forked = true;
	__atomic_store_n(&ctx->state_.cpu_detail, -1, __ATOMIC_RELAXED);
	__atomic_store_n(&ctx->state_.tasks, 0, __ATOMIC_RELAXED);
	return true;
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
	/* In a forked child the list's lock may have been held by a thread
	 * that is gone. */
	if (!make || !ctx->cpu_lock_ready || cpu_forked(ctx))
		return NULL;
	struct cpu_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->serial = atomic_fetch_add(&ctx->cpu_thread_serial, 1) + 1;
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
	if (!ctx || !name || !(t = self(ctx, true)) || cpu_forked(ctx))
		return;
	pthread_mutex_lock(&ctx->cpu_lock);
	snprintf(t->name, sizeof(t->name), "%s", name);
	pthread_mutex_unlock(&ctx->cpu_lock);
}

/* A piece of an event's name: a scope's name, or a part of a task
 * record's (below, "Tasks"). */
struct part {
	const void *p;
	size_t len;
};

/* Puts an event in t's ring, its name made of `n` parts, or counts it
 * lost. */
RECORD_PATH
static inline __attribute__((always_inline)) void push_parts(struct cpu_thread *t, uint8_t type,
							      unsigned level,
							      const struct part *parts,
							      unsigned n)
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
	size_t len = 0;
	for (unsigned i = 0; i < n; i++)
		len += parts[i].len;
	/* A name never wraps: one that would is put at the ring's start. */
	uint64_t at = nh % CPU_NAME_RING;
	uint64_t skip = at + len > CPU_NAME_RING ? CPU_NAME_RING - at : 0;
	if (head - atomic_load_explicit(&t->tail, memory_order_acquire) >= CPU_EVENTS ||
	    nh + skip + len - atomic_load_explicit(&t->name_tail, memory_order_acquire) >
		    CPU_NAME_RING) {
		atomic_fetch_add_explicit(&t->lost, 1, memory_order_relaxed);
		return;
	}
	char *to = t->names + (skip ? 0 : at);
	for (unsigned i = 0; i < n; i++) {
		if (parts[i].len)
			memcpy(to, parts[i].p, parts[i].len);
		to += parts[i].len;
	}
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

RECORD_PATH
static void push(struct cpu_thread *t, uint8_t type, unsigned level, const char *name, size_t len)
{
	struct part part = { name, len > CPU_RECORD_NAME_MAX ? CPU_RECORD_NAME_MAX : len };
	push_parts(t, type, level, &part, 1);
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
static void scope_begin(crumbs_context *ctx, unsigned level, const char *name, uint8_t type)
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
	push(t, type, level, name ? name : "", name ? strlen(name) : 0);
}

RECORD_PATH
void crumbs_cpu_record_(crumbs_context *ctx, unsigned level, const char *name)
{
	scope_begin(ctx, level, name, CPU_RECORD_BEGIN);
}

RECORD_PATH
void crumbs_cpu_wait_record_(crumbs_context *ctx, unsigned level, const char *name)
{
	scope_begin(ctx, level, name, CPU_RECORD_WAIT_BEGIN);
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
/* Tasks                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * A task record's name: the task's id (8 bytes), then
 *   TASK_BEGIN, EARLIER: the timeline's and the state's lengths (2 bytes
 *     each), the timeline, the state (empty: the default), the name;
 *   TASK_STATE: the state;  TASK_END: nothing;
 *   TASK_DEPEND: the blocking task's id (8 bytes), the blocked state;
 *   TIMELINE_FRAME: the timeline alone, with no id before it.
 * Each string is cut at CPU_RECORD_NAME_MAX bytes.
 */
static size_t cut(const char *s)
{
	if (!s)
		return 0;
	size_t n = strlen(s);
	return n > CPU_RECORD_NAME_MAX ? CPU_RECORD_NAME_MAX : n;
}

RECORD_PATH
crumbs_task (crumbs_task_begin)(crumbs_context *ctx, const char *timeline, const char *state,
				const char *fmt, ...)
{
	struct cpu_thread *t;
	if (!crumbs_tasks_on_(ctx) || !(t = self(ctx, true)))
		return 0;
	char buf[CPU_RECORD_NAME_MAX + 1];
	const char *name = fmt ? fmt : "";
	size_t name_len;
	/* Most names are plain text: copied into the ring as they are. */
	if (!strchr(name, '%')) {
		name_len = cut(name);
	} else {
		va_list ap;
		va_start(ap, fmt);
		name_len = name_vformat(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		name = buf;
	}
	/* Ids of one thread's tasks wrap after 2^32 of them, past 0. */
	if (++t->task_next == 0)
		t->task_next = 1;
	crumbs_task task = (uint64_t)t->serial << 32 | t->task_next;
	if (!timeline)
		timeline = "Tasks";
	uint16_t lens[2] = { (uint16_t)cut(timeline), (uint16_t)cut(state) };
	struct part parts[5] = { { &task, sizeof(task) }, { lens, sizeof(lens) },
				 { timeline, lens[0] }, { state, lens[1] }, { name, name_len } };
	push_parts(t, CPU_RECORD_TASK_BEGIN, 0, parts, 5);
	return task;
}

RECORD_PATH
void crumbs_task_state_(crumbs_context *ctx, crumbs_task task, const char *state)
{
	struct cpu_thread *t;
	if (!task || !(t = self(ctx, true)))
		return;
	struct part parts[2] = { { &task, sizeof(task) }, { state, cut(state) } };
	push_parts(t, CPU_RECORD_TASK_STATE, 0, parts, 2);
}

RECORD_PATH
void crumbs_task_end_(crumbs_context *ctx, crumbs_task task)
{
	struct cpu_thread *t;
	if (!task || !(t = self(ctx, true)))
		return;
	struct part part = { &task, sizeof(task) };
	push_parts(t, CPU_RECORD_TASK_END, 0, &part, 1);
}

RECORD_PATH
void crumbs_task_depend_(crumbs_context *ctx, crumbs_task task, const char *blocked_state,
			 crumbs_task blocking)
{
	struct cpu_thread *t;
	if (!task || !blocking || !(t = self(ctx, true)))
		return;
	struct part parts[3] = { { &task, sizeof(task) }, { &blocking, sizeof(blocking) },
				 { blocked_state, cut(blocked_state) } };
	push_parts(t, CPU_RECORD_TASK_DEPEND, 0, parts, 3);
}

RECORD_PATH
void crumbs_timeline_frame_(crumbs_context *ctx, const char *timeline)
{
	struct cpu_thread *t;
	if (!(t = self(ctx, true)))
		return;
	if (!timeline)
		timeline = "Frames";
	push(t, CPU_RECORD_TIMELINE_FRAME, 0, timeline, strlen(timeline));
}

bool cpu_task_read(const struct cpu_frame *f, const struct cpu_record *r,
		   struct cpu_task_view *v, char *buf)
{
	const char *p = f->names + r->name_off;
	uint32_t n = r->name_len;
	uint16_t lens[2] = { 0, 0 };
	memset(v, 0, sizeof(*v));
	/* Copies `len` bytes of p into buf as a string. */
#define TAKE(field, len)                                   \
	do {                                               \
		memcpy(buf, p, (len));                     \
		buf[(len)] = '\0';                         \
		v->field = buf;                            \
		v->field##_len = (uint16_t)(len);          \
		buf += (len) + 1;                          \
		p += (len);                                \
		n -= (uint32_t)(len);                      \
	} while (0)
	if (r->type == CPU_RECORD_TIMELINE_FRAME) {
		uint32_t len = n > CPU_RECORD_NAME_MAX ? CPU_RECORD_NAME_MAX : n;
		TAKE(timeline, len);
		return true;
	}
	if (r->type < CPU_RECORD_TASK_BEGIN || r->type > CPU_RECORD_EARLIER ||
	    n < sizeof(v->task))
		return false;
	memcpy(&v->task, p, sizeof(v->task));
	p += sizeof(v->task);
	n -= sizeof(v->task);
	switch (r->type) {
	case CPU_RECORD_TASK_BEGIN:
	case CPU_RECORD_EARLIER:
		if (n < sizeof(lens))
			return false;
		memcpy(lens, p, sizeof(lens));
		p += sizeof(lens);
		n -= sizeof(lens);
		if (lens[0] > CPU_RECORD_NAME_MAX || lens[1] > CPU_RECORD_NAME_MAX ||
		    (uint32_t)lens[0] + lens[1] > n ||
		    n - lens[0] - lens[1] > CPU_RECORD_NAME_MAX)
			return false;
		TAKE(timeline, lens[0]);
		if (lens[1])
			TAKE(state, lens[1]);
		TAKE(name, n);
		return true;
	case CPU_RECORD_TASK_DEPEND:
		if (n < sizeof(v->blocking))
			return false;
		memcpy(&v->blocking, p, sizeof(v->blocking));
		p += sizeof(v->blocking);
		n -= sizeof(v->blocking);
		/* fall through */
	case CPU_RECORD_TASK_STATE:
		if (n > CPU_RECORD_NAME_MAX)
			return false;
		if (n)
			TAKE(state, n);
		return true;
	default:
		return n == 0;
	}
#undef TAKE
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
	 * is not of this one. With tasks on, cpu_drain() has just taken
	 * what came before the frame: what is left is of the frame. */
	bool keep = __atomic_load_n(&ctx->state_.tasks, __ATOMIC_RELAXED);
	pthread_mutex_lock(&ctx->cpu_lock);
	for (struct cpu_thread *t = ctx->cpu_threads; t; t = t->next) {
		if (!keep) {
			atomic_store_explicit(&t->name_tail, atomic_load(&t->name_head),
					      memory_order_release);
			atomic_store_explicit(&t->tail, atomic_load(&t->head), memory_order_release);
		}
		atomic_store(&t->lost, 0);
	}
	pthread_mutex_unlock(&ctx->cpu_lock);
}

/* Room for `records` more records with `name_len` bytes of names in f,
 * `tasks` of them tasks; false when out of memory. */
FRAME_PATH
static bool frame_reserve(crumbs_context *ctx, struct cpu_frame *f, uint32_t records,
			  uint64_t name_len, uint32_t tasks)
{
	if (records > UINT32_MAX - f->record_count || tasks > UINT32_MAX - f->task_count ||
	    name_len > UINT32_MAX - f->name_len)
		return false;
	return ctx_grow(ctx, (void **)&f->records, &f->record_cap, f->record_count + records,
			sizeof(*f->records), 256) &&
	       ctx_grow(ctx, (void **)&f->names, &f->name_cap, f->name_len + (uint32_t)name_len,
			1, 4096) &&
	       ctx_grow(ctx, (void **)&f->tasks, &f->task_cap, f->task_count + tasks,
			sizeof(*f->tasks), 64);
}

static bool is_task(uint8_t type)
{
	return type >= CPU_RECORD_TASK_BEGIN && type <= CPU_RECORD_EARLIER;
}

/* Where a record of `type` goes among records of the same time. */
static uint32_t task_rank(uint8_t type)
{
	switch (type) {
	case CPU_RECORD_EARLIER:
		return 0;
	case CPU_RECORD_TASK_BEGIN:
		return 1;
	case CPU_RECORD_TASK_END:
		return 4;
	case CPU_RECORD_TASK_STATE:
		return 3;
	default:
		return 2;
	}
}

/* A record at the end of f, its name made of `n` parts; false (counted
 * in *dropped, when given) without room. */
FRAME_PATH
static struct cpu_record *frame_add(crumbs_context *ctx, struct cpu_frame *f, int64_t ns,
				    uint8_t type, uint8_t level, uint32_t thread,
				    const struct part *parts, unsigned n, _Atomic uint32_t *dropped)
{
	uint32_t len = 0;
	for (unsigned i = 0; i < n; i++)
		len += (uint32_t)parts[i].len;
	/* Mostly take() has made the room already. */
	if ((f->record_count >= f->record_cap || len > f->name_cap - f->name_len ||
	     (is_task(type) && f->task_count >= f->task_cap)) &&
	    !frame_reserve(ctx, f, 1, len, is_task(type))) {
		if (dropped)
			atomic_fetch_add(dropped, 1);
		return NULL;
	}
	struct cpu_record *r = &f->records[f->record_count];
	r->ns = ns;
	r->thread = thread;
	r->type = type;
	r->level = level;
	r->name_off = f->name_len;
	r->name_len = len;
	for (unsigned i = 0; i < n; i++) {
		if (parts[i].len)
			memcpy(f->names + f->name_len, parts[i].p, parts[i].len);
		f->name_len += (uint32_t)parts[i].len;
	}
	if (is_task(type))
		f->tasks[f->task_count++] = (struct cpu_task_key){ ns, f->record_count, task_rank(type) };
	f->record_count++;
	return r;
}

/* Takes t's events before end_ns into f, as its thread `index`: all of
 * them, or (tasks_only) its tasks' since `since`, the rest dropped. */
FRAME_PATH
static void take(crumbs_context *ctx, struct cpu_frame *f, struct cpu_thread *t, uint32_t index,
		 int64_t end_ns, bool tasks_only, int64_t since, _Atomic uint32_t *dropped)
{
	uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
	uint64_t i = atomic_load_explicit(&t->tail, memory_order_relaxed);
	uint64_t name_tail = atomic_load_explicit(&t->name_tail, memory_order_relaxed);
	/* Room for all of them at once, as if all were tasks, rather than a
	 * record's at a time; without it, frame_add() tries for each. */
	uint64_t names = atomic_load_explicit(&t->name_head, memory_order_acquire) - name_tail;
	bool room = head - i <= CPU_EVENTS && names <= CPU_NAME_RING &&
		    frame_reserve(ctx, f, (uint32_t)(head - i), names, (uint32_t)(head - i));
	/* All of them, with room made: their names are copied at once after,
	 * as they lie in the ring (with the ends a name that would have
	 * wrapped skipped), each record placed by its name's start. */
	bool at_once = room && !tasks_only;
	uint64_t first = name_tail;
	uint32_t base = f->name_len;
	for (; i < head; i++) {
		const struct cpu_event *e = &t->events[i % CPU_EVENTS];
		int64_t ns = tick_ns(ctx, e->ticks);
		if (ns >= end_ns)
			break; /* of the next frame */
		name_tail = e->name_end;
		if (at_once) {
			struct cpu_record *r = &f->records[f->record_count];
			r->ns = ns;
			r->thread = index;
			r->type = e->type;
			r->level = e->level;
			r->name_off = base + (uint32_t)(e->name_end - e->name_len - first);
			r->name_len = e->name_len;
			if (is_task(e->type))
				f->tasks[f->task_count++] =
					(struct cpu_task_key){ ns, f->record_count, task_rank(e->type) };
			f->record_count++;
			continue;
		}
		if (tasks_only && (!is_task(e->type) || e->type == CPU_RECORD_TIMELINE_FRAME ||
				   ns < since))
			continue;
		struct part part = { t->names + (e->name_end - e->name_len) % CPU_NAME_RING,
				     e->name_len };
		frame_add(ctx, f, ns, e->type, e->level, index, &part, 1, dropped);
	}
	if (at_once) {
		uint64_t len = name_tail - first, at = first % CPU_NAME_RING;
		uint64_t part = len < CPU_NAME_RING - at ? len : CPU_NAME_RING - at;
		if (part)
			memcpy(f->names + base, t->names + at, part);
		if (len > part)
			memcpy(f->names + base + part, t->names, len - part);
		f->name_len += (uint32_t)len;
	}
	atomic_store_explicit(&t->name_tail, name_tail, memory_order_release);
	atomic_store_explicit(&t->tail, i, memory_order_release);
}

static inline bool key_before(const struct cpu_task_key *x, const struct cpu_task_key *y)
{
	if (x->ns != y->ns)
		return x->ns < y->ns;
	if (x->rank != y->rank)
		return x->rank < y->rank;
	return x->record < y->record;
}

static int key_order(const void *a, const void *b)
{
	const struct cpu_task_key *x = a, *y = b;
	return key_before(x, y) ? -1 : key_before(y, x);
}

/*
 * f's task keys in time order. They come as a few runs already in order
 * (the tasks open when the frame began, then each thread's in the order
 * it recorded them), so runs next to each other are merged, pass after
 * pass, into f->merge and back: a few passes where a sort of every key
 * would take one a doubling. The order is key_order's either way.
 */
FRAME_PATH
void cpu_keys_sort(crumbs_context *ctx, struct cpu_frame *f)
{
	uint32_t n = f->task_count;
	if (n < 2)
		return;
	if (!ctx_grow(ctx, (void **)&f->merge, &f->merge_cap, n, sizeof(*f->merge), 64)) {
		qsort(f->tasks, n, sizeof(*f->tasks), key_order);
		return;
	}
	struct cpu_task_key *from = f->tasks, *to = f->merge;
	/* Until one run is left. */
	for (uint32_t first = 1;; first = 1) {
		while (first < n && !key_before(&from[first], &from[first - 1]))
			first++;
		if (first == n)
			break;
		for (uint32_t i = 0; i < n;) {
			/* The run at i, and the one after it, merged into to. */
			uint32_t mid = i ? i + 1 : first;
			while (mid < n && !key_before(&from[mid], &from[mid - 1]))
				mid++;
			uint32_t end = mid < n ? mid + 1 : n;
			while (end < n && !key_before(&from[end], &from[end - 1]))
				end++;
			uint32_t x = i, y = mid, k = i;
			while (x < mid && y < end)
				to[k++] = key_before(&from[y], &from[x]) ? from[y++] : from[x++];
			while (x < mid)
				to[k++] = from[x++];
			while (y < end)
				to[k++] = from[y++];
			i = end;
		}
		struct cpu_task_key *swap = from;
		from = to;
		to = swap;
	}
	if (from != f->tasks) {
		/* The sorted keys are f's; its old room is the next sort's. */
		uint32_t cap = f->task_cap;
		f->merge = f->tasks;
		f->tasks = from;
		f->task_cap = f->merge_cap;
		f->merge_cap = cap;
	}
}

/*
 * The task table: the tasks open as the records followed so far say,
 * each with its timeline, name and state, and the dependencies given on
 * them, their strings in one pool that is packed again when mostly
 * unused. Open addressing by id; removals shift back the entries after.
 */
#define TASKS_OPEN_MAX 65536u /* tasks followed at once; past them, a begin is not */
#define TASK_DEPS_MAX 65536u

struct open_task {
	uint64_t task;             /* 0: an empty slot */
	int64_t begin_ns;
	uint32_t timeline, name, state; /* in the pool */
	uint16_t timeline_len, name_len, state_len;
};

struct open_dep {
	uint64_t task, blocking;
	uint32_t state;
	uint16_t state_len;
};

struct task_table {
	const struct open_task **order; /* open_tasks()'s room */
	uint32_t order_cap;
	struct open_task *slots;
	uint32_t cap, count;       /* cap: a power of two, or 0 */
	struct open_dep *deps;
	uint32_t dep_count, dep_cap;
	char *pool;
	uint32_t pool_len, pool_cap;
};

static uint32_t slot_of(const struct task_table *tt, uint64_t task)
{
	return (uint32_t)((task * 0x9E3779B97F4A7C15ull) >> 32) & (tt->cap - 1);
}

static struct open_task *task_find(struct task_table *tt, uint64_t task)
{
	if (!tt->cap)
		return NULL;
	for (uint32_t i = slot_of(tt, task);; i = (i + 1) & (tt->cap - 1)) {
		if (tt->slots[i].task == task)
			return &tt->slots[i];
		if (!tt->slots[i].task)
			return NULL;
	}
}

static void task_remove(struct task_table *tt, struct open_task *o)
{
	uint32_t i = (uint32_t)(o - tt->slots), j = i;
	tt->slots[i].task = 0;
	tt->count--;
	for (;;) {
		j = (j + 1) & (tt->cap - 1);
		if (!tt->slots[j].task)
			return;
		uint32_t home = slot_of(tt, tt->slots[j].task);
		/* j's entry may move to i when its home is not in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			tt->slots[i] = tt->slots[j];
			tt->slots[j].task = 0;
			i = j;
		}
	}
}

/* A string in the pool; UINT32_MAX when out of memory. */
static uint32_t pool_put(crumbs_context *ctx, struct task_table *tt, const char *s, size_t len)
{
	if (tt->pool_len > UINT32_MAX / 2 ||
	    !ctx_grow(ctx, (void **)&tt->pool, &tt->pool_cap, tt->pool_len + (uint32_t)len + 1, 1,
		      4096))
		return UINT32_MAX;
	uint32_t at = tt->pool_len;
	memcpy(tt->pool + at, s, len);
	tt->pool_len += (uint32_t)len;
	return at;
}

static struct open_task *task_add(crumbs_context *ctx, struct task_table *tt, uint64_t task)
{
	if (tt->count >= TASKS_OPEN_MAX)
		return NULL;
	if ((tt->count + 1) * 2 > tt->cap) {
		uint32_t cap = tt->cap ? tt->cap * 2 : 64;
		struct open_task *slots = ctx_alloc(ctx, sizeof(*slots) * cap);
		if (!slots)
			return NULL;
		struct task_table old = *tt;
		tt->slots = slots;
		tt->cap = cap;
		tt->count = 0;
		for (uint32_t i = 0; i < old.cap; i++)
			if (old.slots[i].task) {
				uint32_t k = slot_of(tt, old.slots[i].task);
				while (tt->slots[k].task)
					k = (k + 1) & (cap - 1);
				tt->slots[k] = old.slots[i];
				tt->count++;
			}
		ctx_free(ctx, old.slots);
	}
	uint32_t k = slot_of(tt, task);
	while (tt->slots[k].task)
		k = (k + 1) & (tt->cap - 1);
	tt->count++;
	tt->slots[k].task = task;
	return &tt->slots[k];
}

/* The pool again, with only what the open tasks and dependencies use,
 * once that is less than a quarter of it. */
static void pool_pack(crumbs_context *ctx, struct task_table *tt)
{
	uint64_t used = 0;
	for (uint32_t i = 0; i < tt->cap; i++)
		if (tt->slots[i].task)
			used += (uint64_t)tt->slots[i].timeline_len + tt->slots[i].name_len +
				tt->slots[i].state_len;
	for (uint32_t i = 0; i < tt->dep_count; i++)
		used += tt->deps[i].state_len;
	if (tt->pool_len < 65536 || used * 4 > tt->pool_len)
		return;
	struct task_table fresh = { 0 };
	if (!ctx_grow(ctx, (void **)&fresh.pool, &fresh.pool_cap, (uint32_t)used + 1, 1, 4096))
		return;
#define MOVE(off, len) ((off) = pool_put(ctx, &fresh, tt->pool + (off), (len)))
	for (uint32_t i = 0; i < tt->cap; i++) {
		struct open_task *o = &tt->slots[i];
		if (o->task) {
			MOVE(o->timeline, o->timeline_len);
			MOVE(o->name, o->name_len);
			MOVE(o->state, o->state_len);
		}
	}
	for (uint32_t i = 0; i < tt->dep_count; i++)
		MOVE(tt->deps[i].state, tt->deps[i].state_len);
#undef MOVE
	ctx_free(ctx, tt->pool);
	tt->pool = fresh.pool;
	tt->pool_len = fresh.pool_len;
	tt->pool_cap = fresh.pool_cap;
}

/* Follows f's task records, but those of the frame's beginning, in time
 * order: the table learns the tasks begun, their states, dependencies
 * and ends; a record of a task it does not know becomes
 * CPU_RECORD_IGNORED. */
FRAME_PATH
static void follow(crumbs_context *ctx, struct cpu_frame *f)
{
	struct task_table *tt = ctx->tasks;
	char buf[CPU_TASK_STRINGS];
	bool ended = false;
	if (!tt)
		return;
	for (uint32_t k = 0; k < f->task_count; k++) {
		if (f->tasks[k].rank == 0)
			continue;
		struct cpu_record *r = &f->records[f->tasks[k].record];
		struct cpu_task_view v;
		if (!cpu_task_read(f, r, &v, buf)) {
			r->type = CPU_RECORD_IGNORED;
			continue;
		}
		if (r->type == CPU_RECORD_TIMELINE_FRAME)
			continue;
		struct open_task *o = task_find(tt, v.task);
		if (r->type == CPU_RECORD_TASK_BEGIN) {
			if (o || !(o = task_add(ctx, tt, v.task)))
				continue; /* written; not followed */
			o->begin_ns = r->ns;
			o->timeline_len = v.timeline_len;
			o->name_len = v.name_len;
			o->state_len = v.state_len;
			o->timeline = pool_put(ctx, tt, v.timeline, o->timeline_len);
			o->name = pool_put(ctx, tt, v.name, o->name_len);
			o->state = pool_put(ctx, tt, v.state ? v.state : "", o->state_len);
			if (o->timeline == UINT32_MAX || o->name == UINT32_MAX ||
			    o->state == UINT32_MAX)
				task_remove(tt, o);
			continue;
		}
		if (!o) {
			r->type = CPU_RECORD_IGNORED;
			continue;
		}
		if (r->type == CPU_RECORD_TASK_STATE) {
			uint16_t len = v.state_len;
			uint32_t at = pool_put(ctx, tt, v.state ? v.state : "", len);
			if (at != UINT32_MAX) {
				o->state = at;
				o->state_len = len;
			}
		} else if (r->type == CPU_RECORD_TASK_END) {
			task_remove(tt, o);
			ended = true;
		} else if (r->type == CPU_RECORD_TASK_DEPEND && tt->dep_count < TASK_DEPS_MAX &&
			   ctx_grow(ctx, (void **)&tt->deps, &tt->dep_cap, tt->dep_count + 1,
				    sizeof(*tt->deps), 64)) {
			struct open_dep *d = &tt->deps[tt->dep_count];
			d->task = v.task;
			d->blocking = v.blocking;
			d->state_len = v.state_len;
			d->state = pool_put(ctx, tt, v.state ? v.state : "", d->state_len);
			if (d->state != UINT32_MAX)
				tt->dep_count++;
		}
	}
	/* The dependencies of ended tasks go. */
	if (ended) {
		uint32_t kept = 0;
		for (uint32_t i = 0; i < tt->dep_count; i++)
			if (task_find(tt, tt->deps[i].task))
				tt->deps[kept++] = tt->deps[i];
		tt->dep_count = kept;
	}
	pool_pack(ctx, tt);
}

static int open_order(const void *a, const void *b)
{
	const struct open_task *x = *(const struct open_task *const *)a;
	const struct open_task *y = *(const struct open_task *const *)b;
	if (x->begin_ns != y->begin_ns)
		return x->begin_ns < y->begin_ns ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

/* Puts in f the tasks open when its frame began at begin_ns, in the
 * order they began, then the dependencies given on them. */
FRAME_PATH
static void open_tasks(crumbs_context *ctx, struct cpu_frame *f, int64_t begin_ns,
		       _Atomic uint32_t *dropped)
{
	struct task_table *tt = ctx->tasks;
	if (!tt || !tt->count)
		return;
	if (!ctx_grow(ctx, (void **)&tt->order, &tt->order_cap, tt->count, sizeof(*tt->order), 64)) {
		atomic_fetch_add(dropped, tt->count);
		return;
	}
	const struct open_task **order = tt->order;
	uint32_t n = 0;
	for (uint32_t i = 0; i < tt->cap; i++)
		if (tt->slots[i].task)
			order[n++] = &tt->slots[i];
	qsort(order, n, sizeof(*order), open_order);
	for (uint32_t i = 0; i < n; i++) {
		const struct open_task *o = order[i];
		uint16_t lens[2] = { o->timeline_len, o->state_len };
		struct part parts[5] = { { &o->task, sizeof(o->task) }, { lens, sizeof(lens) },
					 { tt->pool + o->timeline, o->timeline_len },
					 { tt->pool + o->state, o->state_len },
					 { tt->pool + o->name, o->name_len } };
		frame_add(ctx, f, o->begin_ns, CPU_RECORD_EARLIER, 0, UINT32_MAX, parts, 5, dropped);
	}
	for (uint32_t i = 0; i < tt->dep_count; i++) {
		const struct open_dep *d = &tt->deps[i];
		struct part parts[3] = { { &d->task, sizeof(d->task) },
					 { &d->blocking, sizeof(d->blocking) },
					 { tt->pool + d->state, d->state_len } };
		if (frame_add(ctx, f, begin_ns, CPU_RECORD_TASK_DEPEND, 0, UINT32_MAX, parts, 3,
			      dropped))
			f->tasks[f->task_count - 1].rank = 0; /* of the frame's beginning */
	}
}

/* The task records of f in time order, then followed. */
FRAME_PATH
static void merge_tasks(crumbs_context *ctx, struct cpu_frame *f)
{
	cpu_keys_sort(ctx, f);
	follow(ctx, f);
}

FRAME_PATH
void cpu_collect(crumbs_context *ctx, struct capture_set *set)
{
	struct cpu_frame *f = &set->cpu;
	f->thread_count = f->record_count = f->name_len = f->task_count = 0;
	f->frame_tid = self_tid();
	if (!ctx->cpu_lock_ready)
		return;
	tick_anchor(ctx);
	open_tasks(ctx, f, set->begin_ns, &set->dropped);
	pthread_mutex_lock(&ctx->cpu_lock);
	for (struct cpu_thread **p = &ctx->cpu_threads; *p;) {
		struct cpu_thread *t = *p;
		bool pending = atomic_load(&t->head) != atomic_load(&t->tail);
		t->idle = pending ? 0 : t->idle + 1;
		if (pending && t->events &&
		    ctx_grow(ctx, (void **)&f->threads, &f->thread_cap, f->thread_count + 1,
			     sizeof(*f->threads), 8)) {
			uint32_t index = f->thread_count, before = f->record_count;
			f->threads[index].tid = t->tid;
			memcpy(f->threads[index].name, t->name, sizeof(t->name));
			take(ctx, f, t, index, set->end_ns, false, 0, &set->dropped);
			if (f->record_count > before)
				f->thread_count++;
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
	merge_tasks(ctx, f);
}

FRAME_PATH
void cpu_drain(crumbs_context *ctx, int64_t now)
{
	struct cpu_frame *f = &ctx->drain;
	if (!ctx->cpu_lock_ready)
		return;
	f->record_count = f->name_len = f->task_count = 0;
	tick_anchor(ctx);
	pthread_mutex_lock(&ctx->cpu_lock);
	for (struct cpu_thread *t = ctx->cpu_threads; t; t = t->next)
		/* Its head, then its buffers: a thread sets them up before it
		 * moves its head. */
		if (atomic_load(&t->head) != atomic_load(&t->tail) && t->events)
			take(ctx, f, t, 0, now, true, ctx->task_since_ns, NULL);
	pthread_mutex_unlock(&ctx->cpu_lock);
	merge_tasks(ctx, f);
}

static void table_free(crumbs_context *ctx, struct task_table *tt)
{
	if (!tt)
		return;
	ctx_free(ctx, tt->order);
	ctx_free(ctx, tt->slots);
	ctx_free(ctx, tt->deps);
	ctx_free(ctx, tt->pool);
	ctx_free(ctx, tt);
}

void cpu_tasks_on(crumbs_context *ctx)
{
	table_free(ctx, ctx->tasks);
	/* Without a table, tasks are written as they come, unfollowed. */
	ctx->tasks = ctx_alloc(ctx, sizeof(*ctx->tasks));
	ctx->task_since_ns = now_ns();
	if (!cpu_forked(ctx))
		__atomic_store_n(&ctx->state_.tasks, 1, __ATOMIC_RELAXED);
}

void cpu_tasks_off(crumbs_context *ctx)
{
	__atomic_store_n(&ctx->state_.tasks, 0, __ATOMIC_RELAXED);
	table_free(ctx, ctx->tasks);
	ctx->tasks = NULL;
}

static void frame_free(crumbs_context *ctx, struct cpu_frame *f)
{
	ctx_free(ctx, f->threads);
	ctx_free(ctx, f->records);
	ctx_free(ctx, f->names);
	ctx_free(ctx, f->tasks);
	ctx_free(ctx, f->merge);
	memset(f, 0, sizeof(*f));
}

void cpu_release(crumbs_context *ctx)
{
	for (struct cpu_thread *t = ctx->cpu_threads, *next; t; t = next) {
		next = t->next;
		thread_free(t);
	}
	ctx->cpu_threads = NULL;
	if (ctx->cpu_lock_ready && !cpu_forked(ctx))
		pthread_mutex_destroy(&ctx->cpu_lock);
	ctx->cpu_lock_ready = false;
	table_free(ctx, ctx->tasks);
	ctx->tasks = NULL;
	frame_free(ctx, &ctx->drain);
	for (uint32_t k = 0; k < CAPTURE_SETS; k++)
		frame_free(ctx, &ctx->sets[k].cpu);
}
