/* SPDX-License-Identifier: MIT */
/*
 * cpu_links.c: what ties a frame's CPU side to itself and to its GPU work,
 * for the exports and the pictures: the CPU scope that made each
 * submission, the lane each overlapping task is drawn in, the state a
 * task dependency held back.
 */
#include "report_internal.h"

#include <stdlib.h>
#include <string.h>

/* The node after n in preorder below root, or NULL. */
static const struct node *preorder_next(const struct node *root, const struct node *n)
{
	if (n->child)
		return n->child;
	while (n != root && !n->next)
		n = n->parent;
	return n == root ? NULL : n->next;
}

static int by_cpu_ns(const void *pa, const void *pb)
{
	const struct cpu_link_order *a = pa, *b = pb;
	if (a->cpu_ns != b->cpu_ns)
		return a->cpu_ns < b->cpu_ns ? -1 : 1;
	return (a->submission > b->submission) - (a->submission < b->submission);
}

/*
 * One thread's innermost scopes around the submissions (l->order, sorted
 * by cpu_ns) that have none yet: a sweep of its scopes in preorder, which
 * is the order they began in, with the scopes open at each time on a
 * stack. Scopes nest, so an ancestor ends no earlier than the scopes
 * above it on the stack.
 */
static bool sweep_thread(struct cpu_links *l, const struct frame *f, uint32_t t)
{
	const struct node *root = f->cpu_threads[t].root;
	const struct node *n = root->child;
	size_t depth = 0;
	for (uint32_t k = 0; k < f->submission_count; k++) {
		uint32_t i = l->order[k].submission;
		int64_t at = l->order[k].cpu_ns;
		if (at == INT64_MIN)
			continue;
		while (n && n->begin_ns <= at) {
			while (depth > 0 && l->stack[depth - 1] != n->parent)
				depth--;
			if (!array_room((void **)&l->stack, &l->stack_cap, depth + 1, sizeof(*l->stack)))
				return false;
			l->stack[depth++] = n;
			n = preorder_next(root, n);
		}
		while (depth > 0 && l->stack[depth - 1]->end_ns < at)
			depth--;
		if (depth > 0 && !l->submitter[i]) {
			l->submitter[i] = l->stack[depth - 1];
			l->submitter_thread[i] = t;
		}
	}
	return true;
}

bool cpu_links_build(struct cpu_links *l, const struct frame *f)
{
	size_t n = f->submission_count;
	if (!array_room((void **)&l->submitter, &l->submitter_cap, n + 1, sizeof(*l->submitter)) ||
	    !array_room((void **)&l->submitter_thread, &l->thread_cap, n + 1,
			sizeof(*l->submitter_thread)) ||
	    !array_room((void **)&l->order, &l->order_cap, n + 1, sizeof(*l->order)))
		return false;
	memset(l->submitter, 0, (n + 1) * sizeof(*l->submitter));
	if (n == 0 || f->cpu_thread_count == 0)
		return true;
	for (uint32_t i = 0; i < n; i++)
		l->order[i] = (struct cpu_link_order){ f->submissions[i].cpu_ns, i };
	qsort(l->order, n, sizeof(*l->order), by_cpu_ns);
	/* The frame's thread first: the submissions it made are its own. */
	int32_t first = f->frame_thread;
	if (first >= 0 && (uint32_t)first < f->cpu_thread_count &&
	    f->cpu_threads[first].kind == FRAME_CPU_THREAD &&
	    !sweep_thread(l, f, (uint32_t)first))
		return false;
	for (uint32_t t = 0; t < f->cpu_thread_count; t++) {
		if ((int32_t)t == first || f->cpu_threads[t].kind != FRAME_CPU_THREAD)
			continue;
		if (!sweep_thread(l, f, t))
			return false;
	}
	return true;
}

void cpu_links_release(struct cpu_links *l)
{
	free(l->submitter);
	free(l->submitter_thread);
	free(l->order);
	free(l->stack);
	memset(l, 0, sizeof(*l));
}

const struct node *task_dep_state(const struct frame_task_dep *d)
{
	if (!d->task || d->entered_ns == INT64_MIN)
		return NULL;
	const struct node *later = NULL;
	for (const struct node *s = d->task->child; s; s = s->next) {
		if (s->name_len != d->state_len || memcmp(s->name, d->state, d->state_len) != 0)
			continue;
		if (s->begin_ns == d->entered_ns)
			return s;
		if (!later && s->begin_ns > d->entered_ns)
			later = s;
	}
	return later;
}

uint32_t task_lane(int64_t *lane_ends, uint32_t *lanes, uint32_t max, int64_t begin,
		   int64_t end)
{
	uint32_t k = 0;
	while (k < *lanes && lane_ends[k] > begin)
		k++;
	if (k == *lanes) {
		if (k == max)
			return max;
		(*lanes)++;
	}
	lane_ends[k] = end > begin ? end : begin;
	return k;
}
