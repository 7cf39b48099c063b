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

static bool vendor_add(struct arena *arena, struct node *n, uint32_t counter, uint64_t v,
		       bool closed);
static bool vendor_close(struct arena *arena, struct node_vendor *c, struct node *p);

bool counters_add(struct arena *arena, struct node *n, uint32_t counter, uint64_t v)
{
	if (counter >= COUNTER_ITEM_VENDOR(1, 0))
		return vendor_add(arena, n, counter, v, false);
	struct node_counters *c = of(arena, n);
	if (!c)
		return false;
	if (counter < CRUMBS_PIPELINE_COUNTERS) {
		c->exclusive[counter] = sat_add(c->exclusive[counter], v);
		c->exclusive_mask |= 1u << counter;
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* Vendor counters (since 1.5)                                              */
/* ------------------------------------------------------------------------ */

/*
 * A node's vendor counters are those of one set, its queue's: a file
 * that gives one node two sets' is hostile, and the second's are left
 * out. Sums over stretches and children as the pipeline statistics'.
 */
struct node_vendor {
	uint32_t set;
	uint64_t exclusive_mask, inclusive_mask;
	bool exclusive_unknown, inclusive_unknown;
	uint64_t exclusive[CRUMBS_MAX_SET_COUNTERS];
	uint64_t inclusive[CRUMBS_MAX_SET_COUNTERS];
};

/* n's vendor counters of `set`, made on first use; NULL when out of
 * memory, or *other when n has another set's. */
static struct node_vendor *vendor_of(struct arena *arena, struct node *n, uint32_t set,
				     bool *other)
{
	struct node_counters *c = of(arena, n);
	*other = false;
	if (!c)
		return NULL;
	if (!c->vendor) {
		if (!(c->vendor = arena_alloc(arena, sizeof(*c->vendor))))
			return NULL;
		c->vendor->set = set;
	}
	*other = c->vendor->set != set;
	return c->vendor;
}

static void vendor_sum(struct node_vendor *to, uint32_t k, uint64_t v, bool inclusive)
{
	if (inclusive) {
		to->inclusive[k] = sat_add(to->inclusive[k], v);
		to->inclusive_mask |= (uint64_t)1 << k;
	} else {
		to->exclusive[k] = sat_add(to->exclusive[k], v);
		to->exclusive_mask |= (uint64_t)1 << k;
	}
}

static bool vendor_add(struct arena *arena, struct node *n, uint32_t counter, uint64_t v,
		       bool closed)
{
	uint32_t set = counter / 0x100, k = counter % 0x100;
	bool other;
	struct node_vendor *c = vendor_of(arena, n, set, &other);
	if (!c)
		return false;
	if (other || (k != COUNTER_ITEM_UNKNOWN && k >= CRUMBS_MAX_SET_COUNTERS))
		return true;
	/* A leaf is closed when its counters come: into its parent's
	 * inclusive too, which the parent's close carries up. */
	struct node_vendor *pc = NULL;
	if (closed && n->parent) {
		if (!(pc = vendor_of(arena, n->parent, set, &other)))
			return false;
		if (other)
			pc = NULL;
	}
	if (k == COUNTER_ITEM_UNKNOWN) {
		c->exclusive_unknown = true;
		if (closed)
			c->inclusive_unknown = true;
		if (pc)
			pc->inclusive_unknown = true;
		return true;
	}
	vendor_sum(c, k, v, false);
	if (closed)
		vendor_sum(c, k, v, true);
	if (pc)
		vendor_sum(pc, k, v, true);
	return true;
}

/* n closes into p (NULL for a root): its own into its inclusive, and
 * its inclusive into p's. */
static bool vendor_close(struct arena *arena, struct node_vendor *c, struct node *p)
{
	for (uint32_t k = 0; k < CRUMBS_MAX_SET_COUNTERS; k++)
		if (c->exclusive_mask >> k & 1)
			vendor_sum(c, k, c->exclusive[k], true);
	c->inclusive_unknown |= c->exclusive_unknown;
	if (!p || (!c->inclusive_mask && !c->inclusive_unknown))
		return true;
	bool other;
	struct node_vendor *pc = vendor_of(arena, p, c->set, &other);
	if (!pc)
		return false;
	if (other)
		return true;
	for (uint32_t k = 0; k < CRUMBS_MAX_SET_COUNTERS; k++)
		if (c->inclusive_mask >> k & 1)
			vendor_sum(pc, k, c->inclusive[k], true);
	pc->inclusive_unknown |= c->inclusive_unknown;
	return true;
}

uint32_t node_vendor_set(const struct node *n)
{
	return n->counters && n->counters->vendor ? n->counters->vendor->set : 0;
}

bool node_vendor_unknown(const struct node *n, bool inclusive)
{
	const struct node_vendor *c = n->counters ? n->counters->vendor : NULL;
	return c && (inclusive ? c->inclusive_unknown : c->exclusive_unknown);
}

bool node_vendor_counter(const struct node *n, bool inclusive, uint32_t k, uint64_t *v)
{
	const struct node_vendor *c = n->counters ? n->counters->vendor : NULL;
	if (!c || k >= CRUMBS_MAX_SET_COUNTERS || node_vendor_unknown(n, inclusive))
		return false;
	if (!((inclusive ? c->inclusive_mask : c->exclusive_mask) >> k & 1))
		return false;
	*v = inclusive ? c->inclusive[k] : c->exclusive[k];
	return true;
}

const struct capture_counter_set *meta_counter_set(const struct capture_meta *meta, uint32_t set)
{
	for (uint32_t i = 0; i < meta->counter_set_count; i++)
		if (meta->counter_sets[i].set == set)
			return &meta->counter_sets[i];
	return NULL;
}

const char *counter_unit_name(uint32_t unit)
{
	static const char *const units[] = { "generic", "percentage", "nanoseconds", "bytes",
					     "bytes per second", "kelvin", "watts", "volts",
					     "amps", "hertz", "cycles" };
	return unit < sizeof(units) / sizeof(units[0]) ? units[unit] : "unknown";
}

const char *counter_storage_name(uint32_t storage)
{
	static const char *const storages[] = { "int32", "int64", "uint32", "uint64", "float32",
						"float64" };
	return storage < sizeof(storages) / sizeof(storages[0]) ? storages[storage] : "unknown";
}

const char *counter_scope_name(uint32_t scope)
{
	static const char *const scopes[] = { "command buffer", "render pass", "command" };
	return scope < sizeof(scopes) / sizeof(scopes[0]) ? scopes[scope] : "unknown";
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
	if (c->vendor && !vendor_close(arena, c->vendor, p))
		return false;
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
	if (counter >= COUNTER_ITEM_VENDOR(1, 0))
		return vendor_add(arena, leaf, counter, v, true);
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
