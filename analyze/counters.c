/* SPDX-License-Identifier: MIT */
/*
 * counters.c: pipeline statistics in the model. A node's counters are
 * what the records gave it (exclusive) and its subtree's sum (inclusive),
 * marked unknown where some of the work went uncounted; and the numbers
 * derived from them that the tables show.
 */
#include "analyze_internal.h"

#include <string.h>

static const char *const names[CRUMBS_PIPELINE_COUNTERS][2] = {
	[CRUMBS_COUNTER_IA_VERTICES] = { "input-assembly vertices", "IA Verts" },
	[CRUMBS_COUNTER_IA_PRIMITIVES] = { "input-assembly primitives", "IA Prims" },
	[CRUMBS_COUNTER_VS_INVOCATIONS] = { "vertex shader invocations", "VS Inv" },
	[CRUMBS_COUNTER_GS_INVOCATIONS] = { "geometry shader invocations", "GS Inv" },
	[CRUMBS_COUNTER_GS_PRIMITIVES] = { "geometry shader primitives", "GS Prims" },
	[CRUMBS_COUNTER_CLIP_INVOCATIONS] = { "clipping invocations", "Clip Inv" },
	[CRUMBS_COUNTER_CLIP_PRIMITIVES] = { "clipping primitives", "Clip Prims" },
	[CRUMBS_COUNTER_FS_INVOCATIONS] = { "fragment shader invocations", "FS Inv" },
	[CRUMBS_COUNTER_TCS_PATCHES] = { "tessellation control patches", "TCS Patches" },
	[CRUMBS_COUNTER_TES_INVOCATIONS] = { "tessellation evaluation invocations", "TES Inv" },
	[CRUMBS_COUNTER_CS_INVOCATIONS] = { "compute shader invocations", "CS Inv" },
};

const char *counter_name(enum crumbs_pipeline_counter c)
{
	return (unsigned)c < CRUMBS_PIPELINE_COUNTERS ? names[c][0] : "counter";
}

const char *counter_short_name(enum crumbs_pipeline_counter c)
{
	return (unsigned)c < CRUMBS_PIPELINE_COUNTERS ? names[c][1] : "counter";
}

/* ------------------------------------------------------------------------ */
/* Building (model.c)                                                       */
/* ------------------------------------------------------------------------ */

/* n's counters, made on first use: most nodes of most frames have none. */
static struct node_counters *of(struct arena *arena, struct node *n)
{
	if (!n->counters)
		n->counters = arena_alloc(arena, sizeof(*n->counters));
	return n->counters;
}

/* Sums saturate: a hostile file may give values that add past 2^64. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

bool counters_add(struct arena *arena, struct node *n, uint32_t counter, uint64_t v)
{
	struct node_counters *c = of(arena, n);
	if (!c)
		return false;
	if (counter < CRUMBS_PIPELINE_COUNTERS) {
		c->exclusive[counter] = sat_add(c->exclusive[counter], v);
		c->exclusive_mask |= 1u << counter;
	}
	return true;
}

bool counters_set_unknown(struct arena *arena, struct node *n)
{
	struct node_counters *c = of(arena, n);
	if (!c)
		return false;
	c->exclusive_unknown = true;
	return true;
}

bool counters_set_area(struct arena *arena, struct node *n, uint32_t width, uint32_t height)
{
	struct node_counters *c = of(arena, n);
	if (!c)
		return false;
	c->area_pixels = sat_add(c->area_pixels, (uint64_t)width * height);
	return true;
}

/* Adds what `from` holds inclusive into to's inclusive. */
static void add_inclusive(struct node_counters *to, const struct node_counters *from)
{
	for (uint32_t i = 0; i < CRUMBS_PIPELINE_COUNTERS; i++)
		if (from->inclusive_mask & (1u << i))
			to->inclusive[i] = sat_add(to->inclusive[i], from->inclusive[i]);
	to->inclusive_mask |= from->inclusive_mask;
	to->inclusive_unknown |= from->inclusive_unknown;
}

bool counters_close(struct arena *arena, struct node *n, struct node *p)
{
	struct node_counters *c = n->counters;
	if (!c)
		return true;
	for (uint32_t i = 0; i < CRUMBS_PIPELINE_COUNTERS; i++)
		if (c->exclusive_mask & (1u << i))
			c->inclusive[i] = sat_add(c->inclusive[i], c->exclusive[i]);
	c->inclusive_mask |= c->exclusive_mask;
	c->inclusive_unknown |= c->exclusive_unknown;
	if (!p || (!c->inclusive_mask && !c->inclusive_unknown))
		return true;
	struct node_counters *pc = of(arena, p);
	if (!pc)
		return false;
	add_inclusive(pc, c);
	return true;
}

/* A leaf is closed when its counters come (they follow its record): they
 * go into its own exclusive and inclusive, and into its parent's
 * inclusive, which its parent's close carries up. */
bool counters_add_closed(struct arena *arena, struct node *leaf, uint32_t counter, uint64_t v)
{
	struct node_counters *c = of(arena, leaf);
	struct node_counters *pc = leaf->parent ? of(arena, leaf->parent) : NULL;
	if (!c || (leaf->parent && !pc))
		return false;
	if (counter >= CRUMBS_PIPELINE_COUNTERS)
		return true;
	c->exclusive[counter] = sat_add(c->exclusive[counter], v);
	c->inclusive[counter] = sat_add(c->inclusive[counter], v);
	c->exclusive_mask |= 1u << counter;
	c->inclusive_mask |= 1u << counter;
	if (pc) {
		pc->inclusive[counter] = sat_add(pc->inclusive[counter], v);
		pc->inclusive_mask |= 1u << counter;
	}
	return true;
}

bool counters_unknown_closed(struct arena *arena, struct node *leaf)
{
	struct node_counters *c = of(arena, leaf);
	struct node_counters *pc = leaf->parent ? of(arena, leaf->parent) : NULL;
	if (!c || (leaf->parent && !pc))
		return false;
	c->exclusive_unknown = c->inclusive_unknown = true;
	if (pc)
		pc->inclusive_unknown = true;
	return true;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

bool node_counters_unknown(const struct node *n, bool inclusive)
{
	const struct node_counters *c = n->counters;
	return c && (inclusive ? c->inclusive_unknown : c->exclusive_unknown);
}

bool node_counter(const struct node *n, bool inclusive, enum crumbs_pipeline_counter k,
		  uint64_t *v)
{
	const struct node_counters *c = n->counters;
	if (!c || (unsigned)k >= CRUMBS_PIPELINE_COUNTERS || node_counters_unknown(n, inclusive))
		return false;
	uint32_t mask = inclusive ? c->inclusive_mask : c->exclusive_mask;
	if (!(mask & (1u << k)))
		return false;
	*v = inclusive ? c->inclusive[k] : c->exclusive[k];
	return true;
}

bool node_culled_primitives(const struct node *n, bool inclusive, uint64_t *v)
{
	uint64_t in, out;
	if (!node_counter(n, inclusive, CRUMBS_COUNTER_CLIP_INVOCATIONS, &in) ||
	    !node_counter(n, inclusive, CRUMBS_COUNTER_CLIP_PRIMITIVES, &out))
		return false;
	*v = in > out ? in - out : 0;
	return true;
}

/* The pixels of the render area n has, or of the innermost node around
 * it that has one (the render pass, or the scope a program gave it to). */
static uint64_t area_pixels(const struct node *n)
{
	for (; n; n = n->parent)
		if (n->counters && n->counters->area_pixels)
			return n->counters->area_pixels;
	return 0;
}

bool node_fragments_per_pixel(const struct node *n, bool inclusive, double *v)
{
	uint64_t fs, px = area_pixels(n);
	if (!px || !node_counter(n, inclusive, CRUMBS_COUNTER_FS_INVOCATIONS, &fs))
		return false;
	*v = (double)fs / (double)px;
	return true;
}

bool node_vertex_reuse(const struct node *n, bool inclusive, double *v)
{
	uint64_t vs, ia;
	if (!node_counter(n, inclusive, CRUMBS_COUNTER_VS_INVOCATIONS, &vs) ||
	    !node_counter(n, inclusive, CRUMBS_COUNTER_IA_VERTICES, &ia) || !ia)
		return false;
	*v = (double)vs / (double)ia;
	return true;
}

bool node_invocations_per_dispatch(const struct node *n, bool inclusive, double *v)
{
	uint64_t cs;
	const struct counts *k = inclusive ? &n->inclusive : &n->exclusive;
	if (!k->dispatches || (k->unknown & COUNT_DISPATCHES) ||
	    !node_counter(n, inclusive, CRUMBS_COUNTER_CS_INVOCATIONS, &cs))
		return false;
	*v = (double)cs / (double)k->dispatches;
	return true;
}
