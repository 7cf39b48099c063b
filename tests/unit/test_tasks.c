/* SPDX-License-Identifier: MIT */
/*
 * test_tasks.c: tasks, wait scopes, timeline frames and the frame thread,
 * in contexts made with no Vulkan instance or device (a program of CPU
 * threads alone). What crumbs hands its capture writer is seen through
 * the linker's --wrap of the writer's functions (the Makefile links this
 * test so); the files are read back too. Built and run again whole under
 * ThreadSanitizer.
 */
#define _GNU_SOURCE /* gettid() */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../analyze/analyze.h"
#include "../../capture/capture_internal.h"
#include "../../include/crumbs.h"

/* ------------------------------------------------------------------------ */
/* What the writer was given                                                */
/* ------------------------------------------------------------------------ */

enum kind { K_FRAME, K_FRAME_THREAD, K_WAIT, K_BEGIN, K_STATE, K_END, K_DEPEND, K_MARK };

struct rec {
	enum kind kind;
	uint64_t frame;        /* K_FRAME: its number */
	uint64_t task, blocking;
	uint32_t tid;
	int earlier;
	uint64_t ns;
	char timeline[64], name[64], state[64];
};

#define RECS_MAX 200000
static struct rec *recs;
static uint32_t rec_count;
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;

static struct rec *rec_add(enum kind kind, uint64_t ns)
{
	pthread_mutex_lock(&rec_lock);
	struct rec *r = rec_count < RECS_MAX ? &recs[rec_count++] : NULL;
	if (r) {
		memset(r, 0, sizeof(*r));
		r->kind = kind;
		r->ns = ns;
	}
	pthread_mutex_unlock(&rec_lock);
	return r;
}

static void copy(char *to, const char *s)
{
	snprintf(to, 64, "%s", s ? s : "(null)");
}

enum crumbs_result __real_crumbs_writer_frame_begin(crumbs_writer *w, uint64_t frame,
						    uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_frame_begin(crumbs_writer *w, uint64_t frame,
						    uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_frame_begin(crumbs_writer *w, uint64_t frame,
						    uint64_t cpu_ns)
{
	struct rec *r = rec_add(K_FRAME, cpu_ns);
	if (r)
		r->frame = frame;
	return __real_crumbs_writer_frame_begin(w, frame, cpu_ns);
}

enum crumbs_result __real_crumbs_writer_frame_thread(crumbs_writer *w, uint32_t tid);
enum crumbs_result __wrap_crumbs_writer_frame_thread(crumbs_writer *w, uint32_t tid);
enum crumbs_result __wrap_crumbs_writer_frame_thread(crumbs_writer *w, uint32_t tid)
{
	struct rec *r = rec_add(K_FRAME_THREAD, 0);
	if (r)
		r->tid = tid;
	return __real_crumbs_writer_frame_thread(w, tid);
}

enum crumbs_result __real_crumbs_writer_cpu_wait_begin(crumbs_writer *w, const char *name,
						       unsigned level, uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_cpu_wait_begin(crumbs_writer *w, const char *name,
						       unsigned level, uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_cpu_wait_begin(crumbs_writer *w, const char *name,
						       unsigned level, uint64_t cpu_ns)
{
	struct rec *r = rec_add(K_WAIT, cpu_ns);
	if (r)
		copy(r->name, name);
	return __real_crumbs_writer_cpu_wait_begin(w, name, level, cpu_ns);
}

enum crumbs_result __real_crumbs_writer_task_begin(crumbs_writer *w, uint64_t task,
						   const char *timeline, const char *name,
						   const char *state, int earlier, uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_task_begin(crumbs_writer *w, uint64_t task,
						   const char *timeline, const char *name,
						   const char *state, int earlier, uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_task_begin(crumbs_writer *w, uint64_t task,
						   const char *timeline, const char *name,
						   const char *state, int earlier, uint64_t cpu_ns)
{
	struct rec *r = rec_add(K_BEGIN, cpu_ns);
	if (r) {
		r->task = task;
		r->earlier = earlier;
		copy(r->timeline, timeline);
		copy(r->name, name);
		copy(r->state, state);
	}
	return __real_crumbs_writer_task_begin(w, task, timeline, name, state, earlier, cpu_ns);
}

enum crumbs_result __real_crumbs_writer_task_state(crumbs_writer *w, uint64_t task,
						   const char *state, uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_task_state(crumbs_writer *w, uint64_t task,
						   const char *state, uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_task_state(crumbs_writer *w, uint64_t task,
						   const char *state, uint64_t cpu_ns)
{
	struct rec *r = rec_add(K_STATE, cpu_ns);
	if (r) {
		r->task = task;
		copy(r->state, state);
	}
	return __real_crumbs_writer_task_state(w, task, state, cpu_ns);
}

enum crumbs_result __real_crumbs_writer_task_end(crumbs_writer *w, uint64_t task,
						 uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_task_end(crumbs_writer *w, uint64_t task,
						 uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_task_end(crumbs_writer *w, uint64_t task, uint64_t cpu_ns)
{
	struct rec *r = rec_add(K_END, cpu_ns);
	if (r)
		r->task = task;
	return __real_crumbs_writer_task_end(w, task, cpu_ns);
}

enum crumbs_result __real_crumbs_writer_task_depend(crumbs_writer *w, uint64_t task,
						    const char *blocked_state, uint64_t blocking,
						    uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_task_depend(crumbs_writer *w, uint64_t task,
						    const char *blocked_state, uint64_t blocking,
						    uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_task_depend(crumbs_writer *w, uint64_t task,
						    const char *blocked_state, uint64_t blocking,
						    uint64_t cpu_ns)
{
	struct rec *r = rec_add(K_DEPEND, cpu_ns);
	if (r) {
		r->task = task;
		r->blocking = blocking;
		copy(r->state, blocked_state);
	}
	return __real_crumbs_writer_task_depend(w, task, blocked_state, blocking, cpu_ns);
}

enum crumbs_result __real_crumbs_writer_timeline_frame(crumbs_writer *w, const char *timeline,
						       uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_timeline_frame(crumbs_writer *w, const char *timeline,
						       uint64_t cpu_ns);
enum crumbs_result __wrap_crumbs_writer_timeline_frame(crumbs_writer *w, const char *timeline,
						       uint64_t cpu_ns)
{
	struct rec *r = rec_add(K_MARK, cpu_ns);
	if (r)
		copy(r->timeline, timeline);
	return __real_crumbs_writer_timeline_frame(w, timeline, cpu_ns);
}

/* The records of frame `frame` (from its FRAME to the next), or NULL. */
static struct rec *frame_recs(uint64_t frame, uint32_t *count)
{
	for (uint32_t i = 0; i < rec_count; i++)
		if (recs[i].kind == K_FRAME && recs[i].frame == frame) {
			uint32_t n = 1;
			while (i + n < rec_count && recs[i + n].kind != K_FRAME)
				n++;
			*count = n;
			return &recs[i];
		}
	*count = 0;
	return NULL;
}

/* The first record of `kind` of task `task` among n, or NULL. */
static const struct rec *find(const struct rec *r, uint32_t n, enum kind kind, uint64_t task)
{
	for (uint32_t i = 0; i < n; i++)
		if (r[i].kind == kind && (!task || r[i].task == task))
			return &r[i];
	return NULL;
}

static uint32_t count_of(const struct rec *r, uint32_t n, enum kind kind, uint64_t task)
{
	uint32_t c = 0;
	for (uint32_t i = 0; i < n; i++)
		c += r[i].kind == kind && (!task || r[i].task == task);
	return c;
}

/* The timeline or thread named `name` of frame f, or NULL. */
static const struct frame_cpu_thread *cpu_named(const struct frame *f, const char *name)
{
	for (uint32_t i = 0; i < f->cpu_thread_count; i++)
		if (f->cpu_threads[i].name_len == strlen(name) &&
		    memcmp(f->cpu_threads[i].name, name, strlen(name)) == 0)
			return &f->cpu_threads[i];
	return NULL;
}

static bool node_is(const struct node *n, const char *name)
{
	return n && n->name_len == strlen(name) && memcmp(n->name, name, n->name_len) == 0;
}

/* The first frame of the capture at path, read back with *c to free. */
static const struct frame *read_first(const char *path, reader **c)
{
	struct analyze_error e;
	const struct frame *f = NULL;
	if (reader_open_file(path, c, &e) != CRUMBS_OK)
		fail_msg("cannot read '%s': %s", path, e.text);
	if (reader_next_frame(*c, &f, &e) != CRUMBS_OK || !f)
		fail_msg("no frame in '%s': %s", path, e.text);
	return f;
}

/* ------------------------------------------------------------------------ */
/* Contexts of CPU threads alone                                            */
/* ------------------------------------------------------------------------ */

static char dir[256];
static _Atomic unsigned logged_errors;

static void quiet_log(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user;
	if (getenv("TASKS_DEBUG"))
		fprintf(stderr, "# log %d: %.300s\n", (int)level, message);
	if (level == CRUMBS_LOG_ERROR) {
		fprintf(stderr, "# crumbs: %s\n", message);
		atomic_fetch_add(&logged_errors, 1);
	}
}

static crumbs_context *cpu_context(void)
{
	struct crumbs_desc d = { 0 };
	crumbs_context *ctx = NULL;
	d.capture_dir = dir;
	d.program_name = "tasks";
	d.no_trigger = 1;
	d.log = quiet_log;
	assert_int_equal(crumbs_create(&d, &ctx), CRUMBS_OK);
	assert_non_null(ctx);
	return ctx;
}

static void sleep_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

/* Ends frames until a capture other than `previous` is written. */
static const char *finish(crumbs_context *ctx, const char *previous)
{
	for (int i = 0; i < 20000; i++) {
		crumbs_frame(ctx);
		const char *now = crumbs_last_capture(ctx);
		if (now && (!previous || strcmp(now, previous) != 0))
			return now;
		sleep_us(1000);
	}
	fail_msg("no capture was written in 20 s");
	return NULL;
}

static int setup(void **state)
{
	(void)state;
	rec_count = 0;
	return 0;
}

static uint32_t my_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* A context with no instance and no device is valid; one with devices
 * but no instance is not. Outside captures nothing is recorded. */
static void cpu_only_context(void **state)
{
	(void)state;
	struct crumbs_desc d = { 0 };
	crumbs_context *ctx = (crumbs_context *)1;
	struct crumbs_vk_device dev = { 0 };
	d.devices = &dev;
	d.device_count = 1;
	assert_int_equal(crumbs_create(&d, &ctx), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_null(ctx);
	assert_int_equal(crumbs_create(NULL, &ctx), CRUMBS_ERROR_INVALID_ARGUMENT);

	ctx = cpu_context();
	assert_int_equal(crumbs_detail(ctx), -1);
	assert_int_equal(crumbs_task_begin(ctx, "Jobs", NULL, "Outside"), 0);
	crumbs_cpu_begin(ctx, 0, "Outside");
	crumbs_cpu_end(ctx);
	for (int i = 0; i < 3; i++)
		crumbs_frame(ctx);
	assert_null(crumbs_last_capture(ctx));
	crumbs_destroy(ctx);
	assert_int_equal(rec_count, 0);
}

struct handoff {
	crumbs_context *ctx;
	crumbs_task task;
};

static int key_cmp(const void *a, const void *b)
{
	const struct cpu_task_key *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->record > y->record) - (x->record < y->record);
}

/* The frame thread's merge of task records: runs in order, each
 * thread's, and keys of one time ranked, in the order a plain sort
 * gives, whatever the runs' number and lengths. */
static void keys_in_order(void **state)
{
	(void)state;
	crumbs_context *ctx = cpu_context();
	unsigned seed = 7;
	for (int round = 0; round < 200; round++) {
		uint32_t n = (uint32_t)(rand_r(&seed) % 300), runs = 1 + (uint32_t)(rand_r(&seed) % 9);
		struct cpu_frame f = { 0 };
		f.tasks = malloc(sizeof(*f.tasks) * (n + 1));
		struct cpu_task_key *want = malloc(sizeof(*want) * (n + 1));
		assert_non_null(f.tasks);
		assert_non_null(want);
		f.task_cap = n + 1;
		/* `runs` stretches, each rising in time, with times that meet
		 * (a coarse clock) and every rank. */
		int64_t ns = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (i % (n / runs + 1) == 0)
				ns = rand_r(&seed) % 50;
			ns += rand_r(&seed) % 3;
			f.tasks[i] = (struct cpu_task_key){ ns, i, (uint32_t)(rand_r(&seed) % 5) };
		}
		f.task_count = n;
		memcpy(want, f.tasks, sizeof(*want) * n);
		qsort(want, n, sizeof(*want), key_cmp);
		cpu_keys_sort(ctx, &f);
		assert_int_equal(f.task_count, n);
		for (uint32_t i = 0; i < n; i++) {
			assert_int_equal(f.tasks[i].ns, want[i].ns);
			assert_int_equal(f.tasks[i].rank, want[i].rank);
			assert_int_equal(f.tasks[i].record, want[i].record);
		}
		free(f.tasks);
		free(f.merge);
		free(want);
	}
	crumbs_destroy(ctx);
}

/* A run whose names fill the threads' name rings several times over:
 * every task's name reaches the writer whole, wherever the ring wrapped
 * (the frame thread copies each thread's names at once, as they lie). */
static void names_across_the_ring(void **state)
{
	(void)state;
	crumbs_context *ctx = cpu_context();
	char pad[480], name[512];
	memset(pad, 'a', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	assert_int_equal(crumbs_record(ctx, 1, 60, CRUMBS_DETAIL_MAX), CRUMBS_OK);
	for (int f = 0; f < 62; f++) {
		for (int i = 0; i < 12; i++) {
			/* Scopes of odd lengths between them, so that names start
			 * anywhere in the ring. */
			snprintf(name, sizeof(name), "Scope %d %.*s", i, 37 * i + f % 29, pad);
			crumbs_cpu_begin(ctx, 0, name);
			crumbs_task t = crumbs_task_begin(ctx, "Ring", NULL, "Task %03d.%02d %s", f, i, pad);
			crumbs_cpu_end(ctx);
			crumbs_task_end(ctx, t);
		}
		crumbs_frame(ctx);
	}
	finish(ctx, NULL);
	crumbs_destroy(ctx);

	uint32_t begun = 0;
	for (uint32_t k = 0; k < rec_count; k++) {
		if (recs[k].kind != K_BEGIN || strcmp(recs[k].timeline, "Ring") != 0)
			continue;
		int f, i;
		char want[600];
		assert_int_equal(sscanf(recs[k].name, "Task %d.%d ", &f, &i), 2);
		snprintf(want, sizeof(want), "Task %03d.%02d %s", f, i, pad);
		want[sizeof(recs[k].name) - 1] = '\0'; /* what the test keeps of it */
		assert_string_equal(recs[k].name, want);
		begun++;
	}
	/* Past 256 KiB of names: the rings wrapped. */
	assert_true(begun >= 40 * 12);
}

static void *end_task(void *arg)
{
	struct handoff *h = arg;
	crumbs_thread_name(h->ctx, "Ender");
	crumbs_task_state(h->ctx, h->task, "Finishing");
	crumbs_task_end(h->ctx, h->task);
	return NULL;
}

static void *begin_task(void *arg)
{
	struct handoff *h = arg;
	h->task = crumbs_task_begin(h->ctx, "Jobs", "Queued", "Job %d", 7);
	return NULL;
}

/* A capture frame's tasks, one begun on a thread and ended on another,
 * its wait scope, timeline frames and the thread that ended it. */
static void capture_of_tasks(void **state)
{
	(void)state;
	crumbs_context *ctx = cpu_context();
	assert_int_equal(crumbs_capture(ctx, NULL), CRUMBS_OK);
	crumbs_frame(ctx);
	uint64_t frame = 1;
	assert_int_equal(crumbs_detail(ctx), CRUMBS_DETAIL_MAX);

	crumbs_task a = crumbs_task_begin(ctx, NULL, NULL, "Load %s", "textures");
	assert_true(a != 0);
	struct handoff h = { ctx, 0 };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, begin_task, &h), 0);
	pthread_join(t, NULL);
	assert_true(h.task != 0 && h.task != a);
	crumbs_task_depend(ctx, h.task, "Executing", a);
	crumbs_task_state(ctx, h.task, "Executing");
	assert_int_equal(pthread_create(&t, NULL, end_task, &h), 0);
	pthread_join(t, NULL);
	crumbs_cpu_wait_begin(ctx, 0, "Fence");
	sleep_us(200);
	crumbs_cpu_end(ctx);
	crumbs_timeline_frame(ctx, "Game");
	crumbs_timeline_frame(ctx, NULL);
	crumbs_task_end(ctx, a);
	crumbs_task_end(ctx, a); /* twice: ignored */
	crumbs_task_state(ctx, a, "After its end"); /* ignored */
	const char *path = finish(ctx, NULL);
	assert_non_null(path);

	/* As the reader shows it: h's states fill it, its dependency was
	 * not respected, the main thread waited. */
	reader *c;
	const struct frame *f = read_first(path, &c);
	assert_int_equal(f->frame_thread_tid, my_tid());
	assert_true(f->frame_thread >= 0);
	assert_true(f->cpu_threads[f->frame_thread].wait_ns >= 200000);
	const struct frame_cpu_thread *jobs = cpu_named(f, "Jobs");
	assert_non_null(jobs);
	assert_int_equal(jobs->kind, FRAME_CPU_TIMELINE);
	const struct node *job = jobs->root->child;
	assert_true(node_is(job, "Job 7"));
	assert_int_equal(job->child_count, 3);
	assert_true(node_is(job->child, "Queued"));
	assert_true(node_is(job->child->next->next, "Finishing"));
	assert_false(job->flags & (NODE_OPEN | NODE_BEGUN_EARLIER));
	assert_non_null(cpu_named(f, "Tasks"));
	assert_int_equal(f->task_dep_count, 1);
	assert_true(f->task_deps[0].violated);
	assert_int_equal(f->task_misuses, 0);
	assert_int_equal(f->mark_count, 2);
	reader_free(c);
	crumbs_destroy(ctx);

	uint32_t n;
	const struct rec *r = frame_recs(frame, &n);
	assert_non_null(r);
	const struct rec *x = find(r, n, K_FRAME_THREAD, 0);
	assert_non_null(x);
	assert_int_equal(x->tid, my_tid());
	x = find(r, n, K_WAIT, 0);
	assert_non_null(x);
	assert_string_equal(x->name, "Fence");

	const struct rec *ba = find(r, n, K_BEGIN, a), *bh = find(r, n, K_BEGIN, h.task);
	assert_non_null(ba);
	assert_non_null(bh);
	assert_string_equal(ba->timeline, "Tasks");
	assert_string_equal(ba->name, "Load textures");
	assert_string_equal(ba->state, "(null)");
	assert_false(ba->earlier);
	assert_string_equal(bh->timeline, "Jobs");
	assert_string_equal(bh->name, "Job 7");
	assert_string_equal(bh->state, "Queued");
	/* Merged by time: h's begin, its dependency, its states, its end. */
	assert_true(bh < find(r, n, K_STATE, h.task));
	assert_true(find(r, n, K_DEPEND, h.task) < find(r, n, K_STATE, h.task));
	assert_int_equal(count_of(r, n, K_STATE, h.task), 2);
	const struct rec *dep = find(r, n, K_DEPEND, h.task);
	assert_non_null(dep);
	assert_int_equal(dep->blocking, a);
	assert_string_equal(dep->state, "Executing");
	const struct rec *eh = find(r, n, K_END, h.task);
	assert_non_null(eh);
	assert_true(dep < eh && eh->ns >= bh->ns);
	for (const struct rec *p = r + 1; p < r + n; p++)
		if (p->kind >= K_BEGIN && p > find(r, n, K_BEGIN, 0))
			assert_true(p->ns >= p[-1].ns || p[-1].kind < K_BEGIN);
	assert_int_equal(count_of(r, n, K_END, a), 1);
	assert_int_equal(count_of(r, n, K_STATE, a), 0);
	assert_int_equal(count_of(r, n, K_MARK, 0), 2);
	assert_string_equal(find(r, n, K_MARK, 0)->timeline, "Game");
	assert_int_equal(atomic_load(&logged_errors), 0);
}

/* A task begun after the capture was asked for, before its frame, and
 * ended in it, is written as begun earlier with its state then; one
 * begun before the request has id 0. A run's tasks that span frames are
 * written in each. */
static void begun_earlier(void **state)
{
	(void)state;
	crumbs_context *ctx = cpu_context();
	crumbs_frame(ctx);
	crumbs_task before = crumbs_task_begin(ctx, "Jobs", NULL, "Before the request");
	assert_int_equal(before, 0);
	assert_int_equal(crumbs_capture(ctx, NULL), CRUMBS_OK);
	crumbs_task x = crumbs_task_begin(ctx, "Streaming", "Reading", "Level 3");
	assert_true(x != 0);
	crumbs_task y = crumbs_task_begin(ctx, "Streaming", NULL, "Short");
	crumbs_task_end(ctx, y);
	crumbs_task_state(ctx, x, "Decoding");
	crumbs_task_depend(ctx, x, "Uploading", 12345);
	crumbs_cpu_begin(ctx, 0, "Not recorded");
	crumbs_cpu_end(ctx);
	crumbs_frame(ctx); /* frame 2 is captured */
	crumbs_task_state(ctx, x, "Uploading");
	crumbs_task_end(ctx, x);
	crumbs_task_end(ctx, before);
	reader *c;
	const struct frame *f = read_first(finish(ctx, NULL), &c);
	const struct frame_cpu_thread *streaming = cpu_named(f, "Streaming");
	assert_non_null(streaming);
	assert_int_equal(streaming->root->child_count, 1);
	const struct node *level = streaming->root->child;
	assert_true(node_is(level, "Level 3"));
	assert_true(level->flags & NODE_BEGUN_EARLIER);
	assert_int_equal(level->begin_ns, f->cpu_begin_ns);
	assert_true(node_is(level->child, "Decoding"));
	assert_true(node_is(level->child->next, "Uploading"));
	assert_int_equal(f->task_dep_count, 1);
	assert_int_equal(f->task_misuses, 0);
	reader_free(c);

	uint32_t n;
	const struct rec *r = frame_recs(2, &n);
	assert_non_null(r);
	const struct rec *b = find(r, n, K_BEGIN, x);
	assert_non_null(b);
	assert_true(b->earlier);
	assert_true(b->ns < r->ns);
	assert_string_equal(b->name, "Level 3");
	assert_string_equal(b->state, "Decoding");
	const struct rec *d = find(r, n, K_DEPEND, x);
	assert_non_null(d);
	assert_int_equal(d->blocking, 12345);
	assert_string_equal(d->state, "Uploading");
	assert_null(find(r, n, K_BEGIN, y));
	assert_non_null(find(r, n, K_END, x));
	assert_int_equal(count_of(r, n, K_BEGIN, 0), 1);
	assert_int_equal(count_of(r, n, K_END, 0), 1);

	/* A run of three frames; a task through all of them, begun in its
	 * pre-roll. */
	rec_count = 0;
	char previous[512];
	snprintf(previous, sizeof(previous), "%s", crumbs_last_capture(ctx));
	assert_int_equal(crumbs_record(ctx, 0, 0, 0), CRUMBS_ERROR_INVALID_ARGUMENT);
	crumbs_task long_task = 0;
	assert_int_equal(crumbs_command(ctx, "profilegpu --frames 3 --detail 0"), CRUMBS_OK);
	long_task = crumbs_task_begin(ctx, "Physics", NULL, "Long");
	assert_true(long_task != 0);
	crumbs_frame(ctx); /* f0 begins */
	crumbs_task_state(ctx, long_task, "Stepping");
	crumbs_timeline_frame(ctx, "Physics");
	crumbs_frame(ctx);
	crumbs_task_state(ctx, long_task, "Solving");
	crumbs_frame(ctx);
	crumbs_task_end(ctx, long_task);
	finish(ctx, previous);
	crumbs_destroy(ctx);

	uint64_t f0 = recs[0].frame;
	assert_int_equal(recs[0].kind, K_FRAME);
	for (uint64_t fr = f0; fr <= f0 + 2; fr++) {
		r = frame_recs(fr, &n);
		assert_non_null(r);
		b = find(r, n, K_BEGIN, long_task);
		assert_non_null(b);
		assert_true(b->earlier);
		assert_int_equal(count_of(r, n, K_END, long_task), fr == f0 + 2);
		if (fr == f0 + 1)
			assert_string_equal(b->state, "Stepping");
		if (fr == f0 + 2)
			assert_string_equal(b->state, "Solving");
	}
}

static void *scope_left_open(void *arg)
{
	crumbs_cpu_begin(arg, 0, "Left open at exit");
	crumbs_task_begin(arg, "Jobs", NULL, "Left open at exit");
	return NULL;
}

static void *end_only(void *arg)
{
	crumbs_cpu_end(arg);
	crumbs_cpu_end(arg);
	return NULL;
}

static void *task_for_next(void *arg)
{
	crumbs_context **ctxs = arg;
	crumbs_task t = crumbs_task_begin(ctxs[0], "Jobs", NULL, "First context");
	crumbs_task_end(ctxs[0], t);
	return NULL;
}

/* What a program may get wrong, none of it fatal. */
static void misuse(void **state)
{
	(void)state;
	char long_name[2000];
	memset(long_name, 'y', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';

	assert_int_equal(crumbs_task_begin(NULL, "Jobs", NULL, "No context"), 0);
	assert_int_equal((crumbs_task_begin)(NULL, NULL, NULL, NULL), 0);
	crumbs_task_state(NULL, 1, NULL);
	crumbs_task_end(NULL, 1);
	crumbs_task_depend(NULL, 1, NULL, 2);
	crumbs_timeline_frame(NULL, NULL);
	crumbs_cpu_wait_begin(NULL, 0, NULL);

	crumbs_context *ctx = cpu_context();
	assert_int_equal(crumbs_capture(ctx, NULL), CRUMBS_OK);
	crumbs_frame(ctx);
	crumbs_task t0 = (crumbs_task_begin)(ctx, NULL, NULL, NULL);
	assert_true(t0 != 0);
	crumbs_task t1 = crumbs_task_begin(ctx, long_name, long_name, "%s", long_name);
	crumbs_task_state(ctx, 0, "No task");
	crumbs_task_end(ctx, 0);
	crumbs_task_depend(ctx, 0, NULL, t0);
	crumbs_task_depend(ctx, t0, NULL, 0);
	crumbs_task_depend(ctx, t1, NULL, t0); /* not respected: t1 runs now */
	crumbs_task_state(ctx, t1, NULL);
	crumbs_task_state(ctx, 0xdead00000001ull, "Unknown");
	crumbs_task_end(ctx, 0xdead00000001ull);
	crumbs_task_end(ctx, t1);
	crumbs_task_end(ctx, t1);
	crumbs_task_state(ctx, t1, "Ended");
	crumbs_cpu_wait_begin(ctx, 99, NULL);
	crumbs_cpu_end(ctx);
	crumbs_cpu_end(ctx);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, scope_left_open, ctx), 0);
	pthread_join(t, NULL);
	assert_int_equal(pthread_create(&t, NULL, end_only, ctx), 0);
	pthread_join(t, NULL);

	/* A child forked mid-frame records, ends frames, destroys the
	 * context and exits through exit(): nothing waits for the parent's
	 * threads. */
	pid_t child = fork();
	if (child == 0) {
		crumbs_task c = crumbs_task_begin(ctx, "Jobs", NULL, "In the child");
		crumbs_task_end(ctx, c);
		crumbs_cpu_begin(ctx, 0, "In the child");
		crumbs_cpu_end(ctx);
#ifndef __SANITIZE_THREAD__ /* which cannot start threads after such a fork */
		pthread_t ct;
		if (pthread_create(&ct, NULL, scope_left_open, ctx) == 0)
			pthread_join(ct, NULL);
#endif
		crumbs_frame(ctx);
		crumbs_capture(ctx, NULL);
		crumbs_frame(ctx);
		crumbs_destroy(ctx);
#ifdef __SANITIZE_ADDRESS__
		/* The child frees only the context's own block: the rest is
		 * its parent's (threads, locks, devices), which LeakSanitizer
		 * at exit() would count as lost. */
		_exit(0);
#else
		exit(0);
#endif
	}
	assert_true(child > 0);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	crumbs_task_end(ctx, t0);
	finish(ctx, NULL);

	uint32_t n;
	const struct rec *r = frame_recs(1, &n);
	assert_non_null(r);
	const struct rec *b = find(r, n, K_BEGIN, t1);
	assert_non_null(b);
	assert_int_equal(strlen(b->timeline), 63); /* the test's copy */
	assert_string_equal(find(r, n, K_BEGIN, t0)->name, "");
	assert_int_equal(count_of(r, n, K_DEPEND, 0), 1);
	assert_int_equal(find(r, n, K_DEPEND, 0)->task, t1);
	assert_int_equal(count_of(r, n, K_STATE, t1), 1);
	assert_int_equal(count_of(r, n, K_STATE, 0), 1);
	assert_int_equal(count_of(r, n, K_END, t1), 1);
	assert_int_equal(count_of(r, n, K_END, 0), 2);
	assert_int_equal(count_of(r, n, K_BEGIN, 0), 3);
	assert_non_null(find(r, n, K_WAIT, 0));

	/* The thread recorded for a context destroyed since: a new one
	 * (maybe at the same address) gets its own buffers and ids. */
	crumbs_destroy(ctx);
	crumbs_context *ctxs[1] = { cpu_context() };
	assert_int_equal(crumbs_task_begin(ctxs[0], "Jobs", NULL, "Off"), 0);
	assert_int_equal(crumbs_capture(ctxs[0], NULL), CRUMBS_OK);
	crumbs_frame(ctxs[0]);
	assert_int_equal(pthread_create(&t, NULL, task_for_next, ctxs), 0);
	pthread_join(t, NULL);
	crumbs_task again = crumbs_task_begin(ctxs[0], "Jobs", NULL, "Second context");
	assert_true(again != 0);
	crumbs_task_end(ctxs[0], again);
	rec_count = 0;
	finish(ctxs[0], NULL);
	crumbs_destroy(ctxs[0]);
	r = frame_recs(1, &n);
	assert_non_null(r);
	assert_int_equal(count_of(r, n, K_BEGIN, 0), 2);
	assert_int_equal(count_of(r, n, K_END, 0), 2);
	assert_int_equal(atomic_load(&logged_errors), 0);
}

/* ------------------------------------------------------------------------ */
/* Eight threads                                                            */
/* ------------------------------------------------------------------------ */

#define WORKERS 8
#define JOBS 10

struct pool {
	crumbs_context *ctx;
	_Atomic int stop;
	_Atomic crumbs_task handed[WORKERS];
	_Atomic uint64_t begun, ended;
	_Atomic uint64_t frames; /* begun by the main thread: a round of jobs each */
	_Atomic uint64_t rounds; /* rounds the workers have done */
};

struct worker {
	struct pool *p;
	int id;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;
	char name[32];
	snprintf(name, sizeof(name), "Worker %d", w->id);
	crumbs_thread_name(p->ctx, name);
	uint64_t seen = 0;
	while (!atomic_load(&p->stop)) {
		/* A round of jobs a frame, however slow the frames are. */
		if (atomic_load(&p->frames) == seen) {
			sleep_us(100);
			continue;
		}
		seen = atomic_load(&p->frames);
		for (int j = 0; j < JOBS; j++) {
			crumbs_cpu_beginf(p->ctx, 1, "Job %d", j);
			crumbs_task t = crumbs_task_begin(p->ctx, "Jobs", "Queued", "Job %d.%d",
							  w->id, j);
			if (t)
				atomic_fetch_add(&p->begun, 1);
			crumbs_task_state(p->ctx, t, NULL);
			crumbs_cpu_begin(p->ctx, 2, "Inner");
			crumbs_cpu_end(p->ctx);
			/* Handed to the next worker, which ends it. */
			crumbs_task old = atomic_exchange(&p->handed[(w->id + 1) % WORKERS], t);
			if (old) {
				crumbs_task_end(p->ctx, old);
				atomic_fetch_add(&p->ended, 1);
			}
			crumbs_cpu_end(p->ctx);
		}
		atomic_fetch_add(&p->rounds, 1);
	}
	return NULL;
}

/* A frame of the main thread: the workers' round of jobs, waited for,
 * then its end. */
static void main_frame(struct pool *p, bool wait)
{
	uint64_t round = atomic_fetch_add(&p->frames, 1) + 1;
	crumbs_cpu_begin(p->ctx, 0, "Frame");
	crumbs_timeline_frame(p->ctx, "Game");
	for (int i = 0; i < 20000 && atomic_load(&p->rounds) < round * WORKERS; i++)
		sleep_us(100);
	if (wait) {
		crumbs_cpu_wait_begin(p->ctx, 0, "Present");
		sleep_us(500);
		crumbs_cpu_end(p->ctx);
	}
	crumbs_cpu_end(p->ctx);
	crumbs_frame(p->ctx);
}

/* Eight threads at once with scopes and tasks, through a capture and a
 * run; the files are read back, and left in $CRUMBS_TEST_KEEP when set
 * (for `crumbs report` and `crumbs info`: tests/cli/cpu-only.sh). */
static void eight_threads(void **state)
{
	(void)state;
	struct pool p = { 0 };
	struct worker ws[WORKERS];
	pthread_t th[WORKERS];
	p.ctx = cpu_context();
	crumbs_thread_name(p.ctx, "Main");
	for (int i = 0; i < WORKERS; i++) {
		ws[i].p = &p;
		ws[i].id = i;
		assert_int_equal(pthread_create(&th[i], NULL, work, &ws[i]), 0);
	}
	for (int f = 0; f < 3; f++)
		main_frame(&p, false);
	assert_int_equal(crumbs_capture(p.ctx, NULL), CRUMBS_OK);
	for (int f = 0; f < 3; f++)
		main_frame(&p, true);
	const char *one = finish(p.ctx, NULL);
	char capture[512];
	snprintf(capture, sizeof(capture), "%s", one);
	assert_int_equal(crumbs_command(p.ctx, "profilegpu --frames 10 --detail 1"), CRUMBS_OK);
	for (int f = 0; f < 14; f++)
		main_frame(&p, f % 2);
	atomic_store(&p.stop, 1);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	const char *run = finish(p.ctx, capture);
	char run_path[512];
	snprintf(run_path, sizeof(run_path), "%s", run);
	crumbs_destroy(p.ctx);
	assert_true(atomic_load(&p.begun) > 0);

	/* Every frame of the capture and the run went to the writer with
	 * tasks of every worker, and tasks ended on other threads. */
	uint32_t frames = 0;
	for (uint32_t i = 0; i < rec_count; i++) {
		if (recs[i].kind != K_FRAME)
			continue;
		uint32_t n;
		const struct rec *r = frame_recs(recs[i].frame, &n);
		frames++;
		if (getenv("TASKS_DEBUG"))
			fprintf(stderr, "frame %llu: %u begins %u ends %u marks\n",
				(unsigned long long)recs[i].frame, count_of(r, n, K_BEGIN, 0),
				count_of(r, n, K_END, 0), count_of(r, n, K_MARK, 0));
		assert_true(count_of(r, n, K_BEGIN, 0) > WORKERS);
		assert_true(count_of(r, n, K_END, 0) > 0);
		assert_int_equal(count_of(r, n, K_MARK, 0), 1);
		assert_int_equal(find(r, n, K_FRAME_THREAD, 0)->tid, my_tid());
	}
	assert_int_equal(frames, 1 + 10);

	/* The files read back, every frame with the eight workers. */
	const char *paths[2] = { capture, run_path };
	for (int k = 0; k < 2; k++) {
		struct analyze_error e;
		reader *c;
		const struct frame *f;
		uint32_t read = 0, tids[64], tid_count = 0, timelines = 0;
		assert_int_equal(reader_open_file(paths[k], &c, &e), CRUMBS_OK);
		while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f) {
			/* Threads a frame was too short to run are in others. */
			for (uint32_t i = 0; i < f->cpu_thread_count; i++) {
				const struct frame_cpu_thread *ct = &f->cpu_threads[i];
				uint32_t j = 0;
				timelines += ct->kind == FRAME_CPU_TIMELINE;
				if (ct->kind != FRAME_CPU_THREAD)
					continue;
				while (j < tid_count && tids[j] != ct->tid)
					j++;
				if (j == tid_count && tid_count < 64)
					tids[tid_count++] = ct->tid;
			}
			assert_int_equal(f->frame_thread_tid, my_tid());
			assert_int_equal(f->mark_count, 1);
			assert_int_equal(f->task_misuses, 0);
			read++;
		}
		assert_int_equal(e.code, CRUMBS_OK);
		assert_int_equal(read, k ? 10 : 1);
		assert_int_equal(tid_count, 1 + WORKERS);
		assert_int_equal(timelines, read);
		reader_free(c);
	}
	const char *keep = getenv("CRUMBS_TEST_KEEP");
	if (keep && *keep) {
		char to[600];
		snprintf(to, sizeof(to), "%s/cpu-capture.crumbs", keep);
		assert_int_equal(rename(capture, to), 0);
		snprintf(to, sizeof(to), "%s/cpu-run.crumbs", keep);
		assert_int_equal(rename(run_path, to), 0);
	}
	assert_int_equal(atomic_load(&logged_errors), 0);
}

static int remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[600];
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(cpu_only_context, setup),
		cmocka_unit_test_setup(capture_of_tasks, setup),
		cmocka_unit_test_setup(begun_earlier, setup),
		cmocka_unit_test_setup(misuse, setup),
		cmocka_unit_test_setup(eight_threads, setup),
		cmocka_unit_test_setup(keys_in_order, setup),
		cmocka_unit_test_setup(names_across_the_ring, setup),
	};
	recs = calloc(RECS_MAX, sizeof(*recs));
	snprintf(dir, sizeof(dir), "%s/crumbs-tasks-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!recs || !mkdtemp(dir))
		return 1;
	int failed = cmocka_run_group_tests_name("tasks and CPU-only contexts", tests, NULL, NULL);
	remove_dir();
	free(recs);
	return failed;
}
