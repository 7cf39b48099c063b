/* SPDX-License-Identifier: MIT */
/*
 * cpu.c: a frame's CPU threads and the trees of their scopes, built from
 * its CPU records as records.c decoded and checked them. The CPU's times
 * need no clock fit, so this is apart from the queues' walk in model.c.
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

/* Closes the innermost open node of t at end_ns: its times are
 * complete. */
static void cpu_close(struct cpu_walk *t, int64_t end_ns)
{
	struct node *n = t->open;
	n->end_ns = end_ns = cpu_time(t, end_ns);
	n->inclusive_ns = end_ns - n->begin_ns;
	n->exclusive_ns += n->inclusive_ns;
	struct node *p = n->parent;
	p->exclusive_ns -= n->inclusive_ns;
	t->tail = n;
	t->open = p;
	t->depth--;
}

/* What a thread is called when it has no name: its id. */
static const char *cpu_unnamed(struct arena *arena, uint32_t tid, uint32_t *len)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "thread %u", tid);
	*len = (uint32_t)n;
	return arena_copy_string(arena, (const unsigned char *)buf, (size_t)n);
}

bool cpu_threads_build(const struct raw_frame *raw, struct frame *f, struct arena *arena,
		       bool skip_scopes)
{
	uint32_t count = raw->cpu_threads;
	struct cpu_walk *walks;

	f->cpu_threads = NULL;
	f->cpu_thread_count = 0;
	f->cpu_scopes = 0;
	if (count == 0)
		return true;
	f->cpu_threads = arena_alloc(arena, sizeof(*f->cpu_threads) * count);
	walks = arena_alloc(arena, sizeof(*walks) * count);
	if (!f->cpu_threads || !walks)
		return false;
	f->cpu_thread_count = count;

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
		case RAW_CPU_BEGIN: {
			ft->scopes++;
			f->cpu_scopes++;
			if (skip_scopes) {
				t->depth++;
				break;
			}
			struct node *n = cpu_node_new(arena, (const char *)raw->names[c->a],
						      raw->name_lens[c->a]);
			if (!n)
				return false;
			struct node *p = t->open;
			n->level = c->level;
			n->depth = t->depth + 1;
			n->order = ft->scopes - 1;
			n->parent = p;
			n->begin_ns = cpu_time(t, c->cpu_ns);
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
			break;
		}
		case RAW_CPU_END:
			if (!t->depth)
				ft->unmatched_ends++;
			else if (skip_scopes)
				t->depth--;
			else
				cpu_close(t, c->cpu_ns);
			break;
		}
	}

	for (uint32_t i = 0; i < count; i++) {
		struct frame_cpu_thread *ft = &f->cpu_threads[i];
		struct cpu_walk *t = &walks[i];
		if (!ft->name_len && !(ft->name = cpu_unnamed(arena, ft->tid, &ft->name_len)))
			return false;
		ft->root->name = ft->name;
		ft->root->name_len = ft->name_len;
		for (; t->depth > 0; ft->open_scopes++) {
			if (!skip_scopes) {
				t->open->flags |= NODE_OPEN;
				cpu_close(t, raw->cpu_end_ns);
			} else {
				t->depth--;
			}
		}
		/* The root holds its scopes only: time on the thread between
		 * them is not known to be the program's. */
		struct node *root = ft->root;
		root->exclusive_ns = 0;
		root->inclusive_ns = 0;
		for (const struct node *n = root->child; n; n = n->next) {
			root->inclusive_ns += n->inclusive_ns;
			if (root->begin_ns == INT64_MIN || n->begin_ns < root->begin_ns)
				root->begin_ns = n->begin_ns;
			if (n->end_ns > root->end_ns)
				root->end_ns = n->end_ns;
		}
	}
	return true;
}
