/* SPDX-License-Identifier: MIT */
/*
 * cpu.c: a frame's CPU threads and the trees of their scopes, its task
 * timelines and their tasks' states, their dependencies and the frames of
 * other kinds, built from its CPU and task records as records.c decoded
 * and checked them. The CPU's times need no clock fit, so this is apart
 * from the queues' walk in model.c.
 */
#include "analyze_internal.h"

#include <stdio.h>
#include <string.h>

/* A thread being built. A node's children are linked in the order they
 * began; the one that closed last is the last child of its parent, which
 * keeps adding a sibling from walking the list. */
struct cpu_walk {
	struct node *open;   /* the innermost open node; the root when none is */
	struct node *tail;   /* the node closed last, or NULL */
	uint32_t depth;      /* scopes open */
	int64_t last_ns;     /* the latest begin or end so far */
	/* Which open scopes wait, a bit per depth, and since when one
	 * has been open: wait_ns is the union of their times. */
	uint64_t waits[(FORMAT_MAX_DEPTH + 64) / 64];
	uint32_t waits_open;
	int64_t wait_begin_ns;
};

/*
 * A time of the thread, taken as its latest before it if it is earlier.
 * A thread's clock does not go back, so this changes nothing a program
 * records; a file that says otherwise still nests children inside their
 * parents and siblings one after another, so that no sum of times below
 * a node passes the node's own, nor overflows.
 */
static int64_t cpu_time(struct cpu_walk *t, int64_t ns)
{
	if (ns < t->last_ns)
		ns = t->last_ns;
	t->last_ns = ns;
	return ns;
}

static struct node *cpu_node_new(struct arena *arena, const char *name, uint32_t len)
{
	struct node *n = arena_alloc(arena, sizeof(*n));
	if (!n)
		return NULL;
	n->name = name;
	n->name_len = len;
	n->kind = CRUMBS_EVENT_SCOPE;
	n->begin_ns = n->end_ns = INT64_MIN;
	return n;
}

/* A scope of t opens at depth t->depth, waiting or not, at begin_ns. */
static void cpu_wait_open(struct cpu_walk *t, bool wait, int64_t begin_ns)
{
	uint64_t bit = (uint64_t)1 << (t->depth % 64);
	if (!wait) {
		t->waits[t->depth / 64] &= ~bit;
		return;
	}
	t->waits[t->depth / 64] |= bit;
	if (t->waits_open++ == 0)
		t->wait_begin_ns = begin_ns;
}

/* The scope of t at depth t->depth (just closed) ends at end_ns. */
static void cpu_wait_close(struct frame_cpu_thread *ft, struct cpu_walk *t, int64_t end_ns)
{
	if ((t->waits[t->depth / 64] >> (t->depth % 64) & 1) && --t->waits_open == 0)
		ft->wait_ns += end_ns - t->wait_begin_ns;
}

/* Closes the innermost open scope of t at end_ns: its times are
 * complete. */
static void cpu_close(struct frame_cpu_thread *ft, struct cpu_walk *t, int64_t end_ns,
		      bool skip_scopes)
{
	end_ns = cpu_time(t, end_ns);
	t->depth--;
	cpu_wait_close(ft, t, end_ns);
	if (skip_scopes)
		return;
	struct node *n = t->open;
	n->end_ns = end_ns;
	n->inclusive_ns = end_ns - n->begin_ns;
	n->exclusive_ns += n->inclusive_ns;
	struct node *p = n->parent;
	p->exclusive_ns -= n->inclusive_ns;
	t->tail = n;
	t->open = p;
}

/* What a thread is called when it has no name: its id. */
static const char *cpu_unnamed(struct arena *arena, uint32_t tid, uint32_t *len)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "thread %u", tid);
	*len = (uint32_t)n;
	return arena_copy_string(arena, (const unsigned char *)buf, (size_t)n);
}

/* Opens a scope on thread t; false when out of memory. */
static bool cpu_open(const struct raw_frame *raw, const struct raw_cpu *c, struct frame *f,
		     struct frame_cpu_thread *ft, struct cpu_walk *t, struct arena *arena,
		     bool skip_scopes)
{
	int64_t begin_ns = cpu_time(t, c->cpu_ns);
	ft->scopes++;
	f->cpu_scopes++;
	cpu_wait_open(t, c->wait, begin_ns);
	if (skip_scopes) {
		t->depth++;
		return true;
	}
	struct node *n = cpu_node_new(arena, (const char *)raw->names[c->a], raw->name_lens[c->a]);
	if (!n)
		return false;
	struct node *p = t->open;
	n->level = c->level;
	n->flags = c->wait ? NODE_WAIT : 0;
	n->depth = t->depth + 1;
	n->order = ft->scopes - 1;
	n->parent = p;
	n->begin_ns = begin_ns;
	struct node *tail = t->tail && t->tail->parent == p ? t->tail : NULL;
	if (!tail)
		for (tail = p->child; tail && tail->next; tail = tail->next)
			;
	if (tail)
		tail->next = n;
	else
		p->child = n;
	p->child_count++;
	t->open = n;
	t->tail = NULL;
	t->depth++;
	return true;
}

/* The root holds its top-level nodes only: time between them is not known
 * to be the program's. A timeline's tasks overlap, so their sum may pass
 * any clock's span: it stops at INT64_MAX. */
static void root_sum(struct node *root)
{
	root->exclusive_ns = 0;
	root->inclusive_ns = 0;
	for (const struct node *n = root->child; n; n = n->next) {
		root->inclusive_ns = n->inclusive_ns > INT64_MAX - root->inclusive_ns ?
				     INT64_MAX : root->inclusive_ns + n->inclusive_ns;
		if (root->begin_ns == INT64_MIN || n->begin_ns < root->begin_ns)
			root->begin_ns = n->begin_ns;
		if (n->end_ns > root->end_ns)
			root->end_ns = n->end_ns;
	}
}

/* The threads, f->cpu_threads[0] to raw->cpu_threads - 1. */
static bool threads_build(const struct raw_frame *raw, struct frame *f, struct arena *arena,
			  bool skip_scopes)
{
	uint32_t count = raw->cpu_threads;
	struct cpu_walk *walks = arena_alloc(arena, sizeof(*walks) * (count + 1));
	if (!walks)
		return false;

	for (size_t i = 0; i < raw->cpu_count; i++) {
		const struct raw_cpu *c = &raw->cpu[i];
		struct frame_cpu_thread *ft = &f->cpu_threads[c->thread];
		struct cpu_walk *t = &walks[c->thread];
		switch (c->type) {
		case RAW_CPU_THREAD:
			if (!ft->root) {
				ft->tid = c->a;
				if (!(ft->root = cpu_node_new(arena, NULL, 0)))
					return false;
				ft->root->flags = NODE_QUEUE_ROOT;
				t->open = ft->root;
			}
			/* A name given again replaces the one before. */
			if (raw->name_lens[c->b]) {
				ft->name = (const char *)raw->names[c->b];
				ft->name_len = raw->name_lens[c->b];
			}
			break;
		case RAW_CPU_BEGIN:
			if (!cpu_open(raw, c, f, ft, t, arena, skip_scopes))
				return false;
			break;
		case RAW_CPU_END:
			if (!t->depth)
				ft->unmatched_ends++;
			else
				cpu_close(ft, t, c->cpu_ns, skip_scopes);
			break;
		}
	}

	for (uint32_t i = 0; i < count; i++) {
		struct frame_cpu_thread *ft = &f->cpu_threads[i];
		struct cpu_walk *t = &walks[i];
		ft->kind = FRAME_CPU_THREAD;
		if (!ft->name_len && !(ft->name = cpu_unnamed(arena, ft->tid, &ft->name_len)))
			return false;
		ft->root->name = ft->name;
		ft->root->name_len = ft->name_len;
		for (; t->depth > 0; ft->open_scopes++) {
			if (!skip_scopes)
				t->open->flags |= NODE_OPEN;
			cpu_close(ft, t, raw->cpu_end_ns, skip_scopes);
		}
		root_sum(ft->root);
		if (raw->has_frame_thread && ft->tid == raw->frame_thread_tid)
			f->frame_thread = (int32_t)i;
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* Tasks                                                                    */
/* ------------------------------------------------------------------------ */

/* A task being built, found by its id in a table of them. */
struct task_walk {
	uint64_t id;
	struct node *node;
	struct node *state;   /* the state it is in; NULL once ended */
	int64_t last_ns;      /* its latest time so far */
};

struct task_table {
	struct task_walk *tasks;
	uint32_t count;
	uint32_t *slots;      /* index + 1 into tasks; 0: empty */
	uint32_t mask;
};

static uint32_t task_hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xFF51AFD7ED558CCDull;
	id ^= id >> 33;
	return (uint32_t)id;
}

/* The slot of task id: its own, or the empty one it would take. */
static uint32_t *task_slot(const struct task_table *tt, uint64_t id)
{
	for (uint32_t h = task_hash(id);; h++) {
		uint32_t *s = &tt->slots[h & tt->mask];
		if (!*s || tt->tasks[*s - 1].id == id)
			return s;
	}
}

/* The task of that id, if it has begun and not ended. */
static struct task_walk *task_live(const struct task_table *tt, uint64_t id)
{
	uint32_t *s = task_slot(tt, id);
	struct task_walk *t = *s ? &tt->tasks[*s - 1] : NULL;
	return t && t->state ? t : NULL;
}

static const struct node *task_node(const struct task_table *tt, uint64_t id)
{
	uint32_t *s = task_slot(tt, id);
	return *s ? tt->tasks[*s - 1].node : NULL;
}

/* A state node of task t, entered at ns, after the one it was in. */
static bool task_enter(struct task_walk *t, struct arena *arena, const struct raw_frame *raw,
		       uint32_t state, int64_t ns)
{
	struct node *n = cpu_node_new(arena, (const char *)raw->names[state], raw->name_lens[state]);
	if (!n)
		return false;
	n->depth = 2;
	n->parent = t->node;
	n->begin_ns = ns;
	n->order = t->node->child_count;
	if (t->state)
		t->state->next = n;
	else
		t->node->child = n;
	t->node->child_count++;
	t->state = n;
	return true;
}

/* Task t leaves its state at ns (its latest time if earlier). */
static void task_leave(struct task_walk *t, int64_t ns)
{
	struct node *s = t->state;
	if (ns < t->last_ns)
		ns = t->last_ns;
	t->last_ns = ns;
	s->end_ns = ns;
	s->inclusive_ns = s->exclusive_ns = ns - s->begin_ns;
}

/* Ends task t at ns, its state with it. */
static void task_close(struct task_walk *t, int64_t ns)
{
	task_leave(t, ns);
	t->node->end_ns = t->last_ns;
	t->node->inclusive_ns = t->last_ns - t->node->begin_ns;
	t->state = NULL;
}

/* When task n first entered the state of that name at or after ns, or
 * INT64_MIN. */
static int64_t task_entered(const struct node *n, const char *state, uint32_t len, int64_t ns)
{
	for (const struct node *s = n->child; s; s = s->next)
		if (s->begin_ns >= ns && s->name_len == len &&
		    (len == 0 || memcmp(s->name, state, len) == 0))
			return s->begin_ns;
	return INT64_MIN;
}

/* The timelines, from f->cpu_threads[raw->cpu_threads] on, the frame's
 * dependencies and marks. */
static bool tasks_build(const struct raw_frame *raw, struct frame *f, struct arena *arena,
			bool skip_scopes)
{
	struct frame_cpu_thread *timelines = f->cpu_threads + raw->cpu_threads;
	struct node **tails = arena_alloc(arena, sizeof(*tails) * (raw->task_timelines + 1));
	struct task_table tt = { 0 };
	uint32_t begins = 0, deps = 0, marks = 0;

	if (!tails)
		return false;
	for (size_t i = 0; i < raw->task_count; i++) {
		begins += raw->tasks[i].type == RAW_TASK_BEGIN;
		deps += raw->tasks[i].type == RAW_TASK_DEPEND;
		marks += raw->tasks[i].type == RAW_MARK;
	}
	for (tt.mask = 1; tt.mask < begins * 2; tt.mask <<= 1)
		;
	tt.tasks = arena_alloc_uninit(arena, sizeof(*tt.tasks) * (begins + 1));
	tt.slots = arena_alloc(arena, sizeof(*tt.slots) * tt.mask);
	f->task_deps = arena_alloc(arena, sizeof(*f->task_deps) * (deps + 1));
	f->marks = arena_alloc(arena, sizeof(*f->marks) * (marks + 1));
	if (!tt.tasks || !tt.slots || !f->task_deps || !f->marks)
		return false;
	tt.mask--;

	for (size_t i = 0; i < raw->task_count; i++) {
		const struct raw_task *r = &raw->tasks[i];
		struct task_walk *t;
		switch (r->type) {
		case RAW_TASK_BEGIN: {
			uint32_t *slot = task_slot(&tt, r->task);
			struct frame_cpu_thread *ft = &timelines[r->timeline_index];
			if (!ft->root) {
				ft->name = (const char *)raw->names[r->timeline];
				ft->name_len = raw->name_lens[r->timeline];
				if (!(ft->root = cpu_node_new(arena, ft->name, ft->name_len)))
					return false;
				ft->root->flags = NODE_QUEUE_ROOT;
			}
			if (*slot) {
				f->task_misuses++;
				break;
			}
			struct node *n = cpu_node_new(arena, (const char *)raw->names[r->name],
						      raw->name_lens[r->name]);
			if (!n)
				return false;
			int64_t ns = r->cpu_ns;
			if (r->earlier) {
				n->flags |= NODE_BEGUN_EARLIER;
				if (ns < f->cpu_begin_ns)
					ns = f->cpu_begin_ns;
			}
			n->depth = 1;
			n->order = ft->scopes++;
			n->parent = ft->root;
			n->begin_ns = ns;
			if (tails[r->timeline_index])
				tails[r->timeline_index]->next = n;
			else
				ft->root->child = n;
			tails[r->timeline_index] = n;
			ft->root->child_count++;
			t = &tt.tasks[tt.count];
			*t = (struct task_walk){ r->task, n, NULL, ns };
			*slot = ++tt.count;
			if (!task_enter(t, arena, raw, r->state, ns))
				return false;
			break;
		}
		case RAW_TASK_STATE:
			if (!(t = task_live(&tt, r->task))) {
				f->task_misuses++;
				break;
			}
			task_leave(t, r->cpu_ns);
			if (!task_enter(t, arena, raw, r->state, t->last_ns))
				return false;
			break;
		case RAW_TASK_END:
			if (!(t = task_live(&tt, r->task)))
				f->task_misuses++;
			else
				task_close(t, r->cpu_ns);
			break;
		case RAW_TASK_DEPEND: {
			struct frame_task_dep *d = &f->task_deps[f->task_dep_count++];
			d->task_id = r->task;
			d->blocking_id = r->blocking;
			d->state = (const char *)raw->names[r->state];
			d->state_len = raw->name_lens[r->state];
			/* Resolved once every task has ended. */
			d->entered_ns = r->cpu_ns;
			break;
		}
		case RAW_MARK: {
			struct frame_mark *m = &f->marks[f->mark_count++];
			m->timeline = (const char *)raw->names[r->timeline];
			m->timeline_len = raw->name_lens[r->timeline];
			m->ns = r->cpu_ns;
			break;
		}
		}
	}

	for (uint32_t i = 0; i < tt.count; i++) {
		struct task_walk *t = &tt.tasks[i];
		if (!t->state)
			continue;
		t->node->flags |= NODE_OPEN;
		t->state->flags |= NODE_OPEN;
		task_close(t, raw->cpu_end_ns);
	}
	for (uint32_t i = 0; i < raw->task_timelines; i++) {
		struct frame_cpu_thread *ft = &timelines[i];
		ft->kind = FRAME_CPU_TIMELINE;
		for (const struct node *n = ft->root->child; n; n = n->next)
			ft->open_scopes += (n->flags & NODE_OPEN) != 0;
		root_sum(ft->root);
		if (skip_scopes) {
			ft->root->child = NULL;
			ft->root->child_count = 0;
		}
	}

	for (uint32_t i = 0; i < f->task_dep_count; i++) {
		struct frame_task_dep *d = &f->task_deps[i];
		int64_t given_ns = d->entered_ns;
		d->task = task_node(&tt, d->task_id);
		d->blocking = task_node(&tt, d->blocking_id);
		d->entered_ns = d->task ? task_entered(d->task, d->state, d->state_len, given_ns) :
					  INT64_MIN;
		d->blocking_end_ns = d->blocking && !(d->blocking->flags & NODE_OPEN) ?
				     d->blocking->end_ns : INT64_MIN;
		d->violated = d->entered_ns != INT64_MIN && d->blocking &&
			      (d->blocking_end_ns == INT64_MIN || d->entered_ns < d->blocking_end_ns);
	}
	return true;
}

bool cpu_threads_build(const struct raw_frame *raw, struct frame *f, struct arena *arena,
		       bool skip_scopes)
{
	uint32_t count = raw->cpu_threads + raw->task_timelines;

	f->cpu_threads = NULL;
	f->cpu_thread_count = 0;
	f->cpu_scopes = 0;
	f->frame_thread = -1;
	f->frame_thread_tid = raw->has_frame_thread ? raw->frame_thread_tid : 0;
	f->task_deps = NULL;
	f->task_dep_count = 0;
	f->task_misuses = 0;
	f->marks = NULL;
	f->mark_count = 0;
	if (count == 0 && raw->task_count == 0)
		return true;
	f->cpu_threads = arena_alloc(arena, sizeof(*f->cpu_threads) * (count + 1));
	if (!f->cpu_threads)
		return false;
	f->cpu_thread_count = count;
	return threads_build(raw, f, arena, skip_scopes) &&
	       tasks_build(raw, f, arena, skip_scopes);
}
