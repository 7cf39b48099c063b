/* SPDX-License-Identifier: MIT */
/*
 * memory.c: video memory per device and heap: the allocations and frees the
 * program (or the layer on its behalf) tells of, counted from any thread as
 * they happen, and each recorded frame's figures of them, with the driver's
 * usage and budget (VK_EXT_memory_budget) read at the frame's end.
 */
#include "capture_internal.h"

#include <string.h>

/* One heap's counts since the context's creation. `high` is the most in
 * use since the recorded frame under way began (memory_frame_begin sets
 * it to what is in use then). */
struct heap_counts {
	_Atomic uint64_t allocated, freed;
	_Atomic uint64_t allocations, frees;
	_Atomic int64_t in_use; /* below 0 only when a program frees what it never told of */
	_Atomic int64_t high;
};

struct memory_device {
	uint32_t heap_count;
	uint32_t type_count;
	uint32_t type_heap[VK_MAX_MEMORY_TYPES];
	uint32_t heap_flags[VK_MAX_MEMORY_HEAPS]; /* enum crumbs_memory_heap_flags */
	uint64_t heap_size[VK_MAX_MEMORY_HEAPS];
	bool budget;                              /* its usage and budget can be read */
	struct heap_counts heaps[VK_MAX_MEMORY_HEAPS];
};

/* A heap's figures in a recorded frame: the counts when it began, then
 * its own. */
struct memory_row {
	uint64_t base_allocated, base_freed, base_allocations, base_frees;
	struct crumbs_memory_desc out;
};

struct memory_state {
	/* Whether any allocation or free was told of: until then, only the
	 * budget says anything. */
	_Atomic bool tracked;
	struct memory_device *devices;             /* [device_count] */
	struct memory_row *rows[CAPTURE_SETS];     /* [device_count][VK_MAX_MEMORY_HEAPS] */
	bool written[CAPTURE_SETS];                /* its rows hold figures to write */
};

static uint32_t heap_flags_of(VkMemoryHeapFlags f)
{
	uint32_t out = 0;
	if (f & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
		out |= CRUMBS_MEMORY_HEAP_DEVICE_LOCAL;
	if (f & VK_MEMORY_HEAP_MULTI_INSTANCE_BIT)
		out |= CRUMBS_MEMORY_HEAP_MULTI_INSTANCE;
	return out;
}

bool memory_init(crumbs_context *ctx)
{
	uint32_t n = ctx->device_count;
	struct memory_state *m = ctx_alloc(ctx, sizeof(*m));
	if (!m)
		return false;
	ctx->memory = m;
	if (!n)
		return true;
	m->devices = ctx_alloc(ctx, sizeof(*m->devices) * n);
	m->rows[0] = ctx_alloc(ctx, sizeof(*m->rows[0]) * n * VK_MAX_MEMORY_HEAPS * CAPTURE_SETS);
	if (!m->devices || !m->rows[0])
		return false;
	for (uint32_t k = 1; k < CAPTURE_SETS; k++)
		m->rows[k] = m->rows[0] + (size_t)k * n * VK_MAX_MEMORY_HEAPS;
	for (uint32_t i = 0; i < n; i++) {
		struct device_state *d = &ctx->devices[i];
		struct memory_device *md = &m->devices[i];
		VkPhysicalDeviceMemoryProperties props;
		memset(&props, 0, sizeof(props));
		ctx->ifn.GetPhysicalDeviceMemoryProperties(d->physical, &props);
		md->heap_count = props.memoryHeapCount < VK_MAX_MEMORY_HEAPS ? props.memoryHeapCount
									     : VK_MAX_MEMORY_HEAPS;
		md->type_count = props.memoryTypeCount < VK_MAX_MEMORY_TYPES ? props.memoryTypeCount
									     : VK_MAX_MEMORY_TYPES;
		for (uint32_t h = 0; h < md->heap_count; h++) {
			md->heap_flags[h] = heap_flags_of(props.memoryHeaps[h].flags);
			md->heap_size[h] = props.memoryHeaps[h].size;
		}
		/* A type naming a heap the device does not have is the
		 * driver's mistake: its allocations are not counted. */
		for (uint32_t t = 0; t < md->type_count; t++)
			md->type_heap[t] = props.memoryTypes[t].heapIndex < md->heap_count
						   ? props.memoryTypes[t].heapIndex
						   : UINT32_MAX;
		md->budget = (d->features & CRUMBS_FEATURE_MEMORY_BUDGET) &&
			     ctx->ifn.GetPhysicalDeviceMemoryProperties2;
	}
	return true;
}

void memory_release(crumbs_context *ctx)
{
	struct memory_state *m = ctx->memory;
	if (!m)
		return;
	ctx_free(ctx, m->rows[0]);
	ctx_free(ctx, m->devices);
	ctx_free(ctx, m);
	ctx->memory = NULL;
}

/* The heap's counts of memory type `type` of device `device`, or NULL. */
static struct heap_counts *counts_of(crumbs_context *ctx, uint32_t device, uint32_t type)
{
	if (!ctx || ctx->under_layer || !ctx->memory || device >= ctx->device_count)
		return NULL;
	struct memory_device *md = &ctx->memory->devices[device];
	if (type >= md->type_count || md->type_heap[type] == UINT32_MAX)
		return NULL;
	if (!atomic_load_explicit(&ctx->memory->tracked, memory_order_relaxed))
		atomic_store(&ctx->memory->tracked, true);
	return &md->heaps[md->type_heap[type]];
}

void crumbs_memory_allocated(crumbs_context *ctx, uint32_t device, uint32_t memory_type,
			     uint64_t bytes)
{
	struct heap_counts *c = counts_of(ctx, device, memory_type);
	if (!c)
		return;
	int64_t b = bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes;
	atomic_fetch_add_explicit(&c->allocated, bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->allocations, 1, memory_order_relaxed);
	int64_t now = atomic_fetch_add_explicit(&c->in_use, b, memory_order_relaxed) + b;
	int64_t high = atomic_load_explicit(&c->high, memory_order_relaxed);
	while (now > high && !atomic_compare_exchange_weak_explicit(&c->high, &high, now,
								    memory_order_relaxed,
								    memory_order_relaxed))
		;
}

void crumbs_memory_freed(crumbs_context *ctx, uint32_t device, uint32_t memory_type,
			 uint64_t bytes)
{
	struct heap_counts *c = counts_of(ctx, device, memory_type);
	if (!c)
		return;
	int64_t b = bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes;
	atomic_fetch_add_explicit(&c->freed, bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->frees, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&c->in_use, b, memory_order_relaxed);
}

void memory_frame_begin(crumbs_context *ctx, struct capture_set *set)
{
	struct memory_state *m = ctx->memory;
	if (!m || !ctx->device_count)
		return;
	struct memory_row *rows = m->rows[set->index];
	m->written[set->index] = false;
	for (uint32_t i = 0; i < ctx->device_count; i++) {
		struct memory_device *md = &m->devices[i];
		for (uint32_t h = 0; h < md->heap_count; h++) {
			struct heap_counts *c = &md->heaps[h];
			struct memory_row *r = &rows[i * VK_MAX_MEMORY_HEAPS + h];
			r->base_allocated = atomic_load_explicit(&c->allocated, memory_order_relaxed);
			r->base_freed = atomic_load_explicit(&c->freed, memory_order_relaxed);
			r->base_allocations = atomic_load_explicit(&c->allocations, memory_order_relaxed);
			r->base_frees = atomic_load_explicit(&c->frees, memory_order_relaxed);
			atomic_store_explicit(&c->high,
					      atomic_load_explicit(&c->in_use, memory_order_relaxed),
					      memory_order_relaxed);
		}
	}
}

/* The driver's usage and budget of each of d's heaps, into the rows. */
static void read_budget(crumbs_context *ctx, uint32_t device, struct memory_row *rows)
{
	VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT,
	};
	VkPhysicalDeviceMemoryProperties2 props = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
		.pNext = &budget,
	};
	ctx->ifn.GetPhysicalDeviceMemoryProperties2(ctx->devices[device].physical, &props);
	const struct memory_device *md = &ctx->memory->devices[device];
	for (uint32_t h = 0; h < md->heap_count; h++) {
		rows[h].out.budgeted = 1;
		rows[h].out.usage_bytes = budget.heapUsage[h];
		rows[h].out.budget_bytes = budget.heapBudget[h];
	}
}

void memory_frame_end(crumbs_context *ctx, struct capture_set *set)
{
	struct memory_state *m = ctx->memory;
	if (!m || !ctx->device_count)
		return;
	struct memory_row *rows = m->rows[set->index];
	bool tracked = atomic_load_explicit(&m->tracked, memory_order_relaxed);
	bool any = false;
	for (uint32_t i = 0; i < ctx->device_count; i++) {
		struct memory_device *md = &m->devices[i];
		struct memory_row *dr = &rows[i * VK_MAX_MEMORY_HEAPS];
		for (uint32_t h = 0; h < md->heap_count; h++) {
			struct heap_counts *c = &md->heaps[h];
			struct memory_row *r = &dr[h];
			int64_t in_use = atomic_load_explicit(&c->in_use, memory_order_relaxed);
			int64_t high = atomic_load_explicit(&c->high, memory_order_relaxed);
			if (in_use < 0)
				in_use = 0;
			if (high < in_use)
				high = in_use;
			r->out = (struct crumbs_memory_desc){
				.gpu = i,
				.heap = h,
				.flags = md->heap_flags[h],
				.size_bytes = md->heap_size[h],
				.tracked = tracked,
				.allocated_bytes = atomic_load_explicit(&c->allocated, memory_order_relaxed) -
						   r->base_allocated,
				.freed_bytes = atomic_load_explicit(&c->freed, memory_order_relaxed) -
					       r->base_freed,
				.allocations = atomic_load_explicit(&c->allocations, memory_order_relaxed) -
					       r->base_allocations,
				.frees = atomic_load_explicit(&c->frees, memory_order_relaxed) -
					 r->base_frees,
				.in_use_bytes = (uint64_t)in_use,
				.high_bytes = (uint64_t)high,
			};
		}
		if (md->budget)
			read_budget(ctx, i, dr);
		any |= tracked || md->budget;
	}
	m->written[set->index] = any;
}

enum crumbs_result memory_write(crumbs_context *ctx, const struct capture_set *set,
				crumbs_writer *w)
{
	struct memory_state *m = ctx->memory;
	enum crumbs_result r = CRUMBS_OK;
	if (!m || !m->written[set->index])
		return CRUMBS_OK;
	const struct memory_row *rows = m->rows[set->index];
	for (uint32_t i = 0; i < ctx->device_count && r == CRUMBS_OK; i++) {
		const struct memory_device *md = &m->devices[i];
		for (uint32_t h = 0; h < md->heap_count && r == CRUMBS_OK; h++) {
			const struct memory_row *row = &rows[i * VK_MAX_MEMORY_HEAPS + h];
			if (row->out.tracked || row->out.budgeted)
				r = crumbs_writer_memory(w, &row->out);
		}
	}
	return r;
}
