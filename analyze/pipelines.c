/* SPDX-License-Identifier: MIT */
/*
 * pipelines.c: the events of a frame grouped by the pipeline they ran, as
 * their names say it: the layer names a draw, dispatch or ray tracing
 * event "COMMAND PARAMETERS · PIPELINE", PIPELINE being the program's
 * name for it or its identity ("pipeline 3f2a", "gblur 9c41").
 */
#include "analyze_internal.h"

#include <stdlib.h>
#include <string.h>

#define SEPARATOR " \u00b7 "
#define SEPARATOR_LEN (sizeof(SEPARATOR) - 1)

bool node_pipeline(const struct node *n, const char **name, uint32_t *len)
{
	*name = "";
	*len = 0;
	if (n->kind != CRUMBS_EVENT_DRAW && n->kind != CRUMBS_EVENT_DISPATCH &&
	    n->kind != CRUMBS_EVENT_TRACE_RAYS)
		return false;
	for (uint32_t i = 0; i + SEPARATOR_LEN <= n->name_len; i++)
		if (memcmp(n->name + i, SEPARATOR, SEPARATOR_LEN) == 0) {
			*name = n->name + i + SEPARATOR_LEN;
			*len = n->name_len - i - (uint32_t)SEPARATOR_LEN;
			break;
		}
	return true;
}

static uint64_t group_hash(const char *name, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* The group of that name, made when new; NULL when out of memory. */
static struct pipeline_group *group_of(struct pipeline_groups *g, const char *name, uint32_t len)
{
	if ((g->len + 1) * 2 > g->slot_cap) {
		size_t cap = g->slot_cap ? g->slot_cap * 2 : 64;
		uint32_t *slots = malloc(cap * sizeof(*slots));
		if (!slots)
			return NULL;
		for (size_t i = 0; i < cap; i++)
			slots[i] = UINT32_MAX;
		for (size_t k = 0; k < g->len; k++) {
			size_t j = group_hash(g->data[k].name, g->data[k].name_len) & (cap - 1);
			while (slots[j] != UINT32_MAX)
				j = (j + 1) & (cap - 1);
			slots[j] = (uint32_t)k;
		}
		free(g->slots);
		g->slots = slots;
		g->slot_cap = cap;
	}
	size_t mask = g->slot_cap - 1, j = group_hash(name, len) & mask;
	for (; g->slots[j] != UINT32_MAX; j = (j + 1) & mask) {
		struct pipeline_group *p = &g->data[g->slots[j]];
		if (p->name_len == len && memcmp(p->name, name, len) == 0)
			return p;
	}
	if (g->len >= UINT32_MAX - 1 ||
	    !array_room((void **)&g->data, &g->cap, g->len + 1, sizeof(*g->data)))
		return NULL;
	g->slots[j] = (uint32_t)g->len;
	struct pipeline_group *p = &g->data[g->len];
	*p = (struct pipeline_group){ .name = name, .name_len = len, .first = (uint32_t)g->len };
	g->len++;
	return p;
}

void pipeline_groups_add(struct pipeline_groups *g, const struct node *top)
{
	/* Preorder without recursion: trees nest up to the format's limit. */
	const struct node *n = top;
	while (n && !g->failed) {
		const char *name;
		uint32_t len;
		if (node_pipeline(n, &name, &len)) {
			struct pipeline_group *p = group_of(g, name, len);
			if (!p) {
				g->failed = true;
				return;
			}
			p->calls++;
			p->counts.draws += n->exclusive.draws;
			p->counts.dispatches += n->exclusive.dispatches;
			p->counts.prims += n->exclusive.prims;
			p->counts.verts += n->exclusive.verts;
			p->counts.unknown |= n->exclusive.unknown;
			p->exclusive_ns += n->exclusive_ns;
			p->untimed |= (n->flags & NODE_UNTIMED) != 0;
			g->events++;
			g->exclusive_ns += n->exclusive_ns;
		}
		if (n->child) {
			n = n->child;
			continue;
		}
		while (n != top && !n->next)
			n = n->parent;
		n = n == top ? NULL : n->next;
	}
}

void pipeline_groups_clear(struct pipeline_groups *g)
{
	g->len = 0;
	g->events = 0;
	g->exclusive_ns = 0;
	g->failed = false;
	for (size_t i = 0; i < g->slot_cap; i++)
		g->slots[i] = UINT32_MAX;
}

void pipeline_groups_release(struct pipeline_groups *g)
{
	free(g->data);
	free(g->slots);
	memset(g, 0, sizeof(*g));
}
