/* SPDX-License-Identifier: MIT */
/*
 * perfquery.c: vendor counters through VK_KHR_performance_query. The
 * counters the program asks for are looked up in what each queue's family
 * offers, split into groups that each take one pass, and counted with a
 * performance query pool per group over the very stretches the pipeline
 * statistics count (record.c): query i of a group's pool runs where
 * statistics query i runs. A one-frame capture takes group 0, a run
 * group (frame mod groups) in each frame. The device's profiling lock is
 * taken at creation, without waiting, and held until destruction.
 */
#include "capture_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PERF_MAX_NAMES 64
#define PERF_MAX_OFFERED 1024
#define FLOAT_SCALE 3

struct perf_counter {
	char name[VK_MAX_DESCRIPTION_SIZE];
	char category[VK_MAX_DESCRIPTION_SIZE];
	uint32_t index;   /* in the family's enumeration */
	uint32_t unit, storage, scope, group;
	uint32_t slot;    /* in its group's results */
};

struct perf_queue {
	uint32_t set;                  /* its counter set's number in files */
	uint32_t count;
	struct perf_counter counters[CRUMBS_MAX_SET_COUNTERS];
	uint32_t groups;
	uint32_t group_size[CRUMBS_MAX_COUNTER_GROUPS];
	VkQueryPool pools[CRUMBS_MAX_COUNTER_GROUPS];
	uint32_t queries;              /* in each pool: the statistics pool's */
	uint32_t stride;               /* results a query: the largest group's */
	VkPerformanceCounterResultKHR *results; /* [queries][stride] */
	uint8_t *read;                 /* [queries]: READ_* */
	/* What the family offers, for the files' setup. */
	uint32_t offered_count;
	struct perf_counter *offered;
};

enum { READ_NOT = 0, READ_OK = 1, READ_FAILED = 2 };

/* ------------------------------------------------------------------------ */
/* The list asked for                                                       */
/* ------------------------------------------------------------------------ */

enum crumbs_result perfquery_init(crumbs_context *ctx, const char *list)
{
	const char *env = getenv("CRUMBS_PERF_COUNTERS");
	if (env)
		list = env;
	if (!list || !*list)
		return CRUMBS_OK;
	size_t len = strlen(list);
	if (len > 65536) {
		ctx_log(ctx, CRUMBS_LOG_WARNING, "the list of vendor counters is over 64 KiB: "
			"ignored");
		return CRUMBS_OK;
	}
	if (!(ctx->perf_list = ctx_alloc(ctx, len + 1)))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	memcpy(ctx->perf_list, list, len + 1);
	/* A run with counters asked for counts them, and they ride on the
	 * pipeline statistics' stretches. */
	if (ctx->counters == 0)
		ctx->counters = 1;
	return CRUMBS_OK;
}

void perfquery_release(crumbs_context *ctx)
{
	ctx_free(ctx, ctx->perf_list);
	ctx->perf_list = NULL;
}

/* The next name of the list at *p, trimmed, into name; false at its end. */
static bool next_name(const char **p, char name[VK_MAX_DESCRIPTION_SIZE])
{
	for (;;) {
		const char *s = *p;
		if (!*s)
			return false;
		const char *e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		*p = *e ? e + 1 : e;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (s == e)
			continue;
		size_t n = (size_t)(e - s);
		if (n >= VK_MAX_DESCRIPTION_SIZE)
			n = VK_MAX_DESCRIPTION_SIZE - 1;
		memcpy(name, s, n);
		name[n] = '\0';
		return true;
	}
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */
/* ------------------------------------------------------------------------ */

static const char *unit_name(uint32_t unit)
{
	static const char *const names[] = { "generic", "percentage", "nanoseconds", "bytes",
					     "bytes per second", "kelvin", "watts", "volts",
					     "amps", "hertz", "cycles" };
	return unit < sizeof(names) / sizeof(names[0]) ? names[unit] : "unknown";
}

/* Units whose values over two stretches add up to the value over both. */
static bool additive(uint32_t unit)
{
	return unit == VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR ||
	       unit == VK_PERFORMANCE_COUNTER_UNIT_NANOSECONDS_KHR ||
	       unit == VK_PERFORMANCE_COUNTER_UNIT_BYTES_KHR ||
	       unit == VK_PERFORMANCE_COUNTER_UNIT_CYCLES_KHR;
}

/* What q's family offers, into q->perf->offered. false when it offers
 * nothing (or says nothing). */
static bool enumerate(crumbs_context *ctx, struct queue_state *q, struct perf_queue *p)
{
	const struct device_state *d = &ctx->devices[q->device];
	uint32_t n = 0;
	if (ctx->ifn.EnumerateQueueFamilyPerformanceQueryCounters(d->physical, q->family, &n, NULL,
								  NULL) != VK_SUCCESS || !n)
		return false;
	if (n > PERF_MAX_OFFERED)
		n = PERF_MAX_OFFERED;
	VkPerformanceCounterKHR *c = ctx_alloc(ctx, sizeof(*c) * n);
	VkPerformanceCounterDescriptionKHR *desc = ctx_alloc(ctx, sizeof(*desc) * n);
	p->offered = ctx_alloc(ctx, sizeof(*p->offered) * n);
	bool ok = c && desc && p->offered;
	for (uint32_t i = 0; ok && i < n; i++) {
		c[i] = (VkPerformanceCounterKHR){ .sType = VK_STRUCTURE_TYPE_PERFORMANCE_COUNTER_KHR };
		desc[i] = (VkPerformanceCounterDescriptionKHR){
			.sType = VK_STRUCTURE_TYPE_PERFORMANCE_COUNTER_DESCRIPTION_KHR };
	}
	VkResult r = ok ? ctx->ifn.EnumerateQueueFamilyPerformanceQueryCounters(d->physical,
										  q->family, &n, c,
										  desc) :
			  VK_ERROR_OUT_OF_HOST_MEMORY;
	ok = (r == VK_SUCCESS || r == VK_INCOMPLETE) && n <= PERF_MAX_OFFERED;
	for (uint32_t i = 0; ok && i < n; i++) {
		struct perf_counter *o = &p->offered[i];
		/* A driver's strings are not trusted to end. */
		snprintf(o->name, sizeof(o->name), "%.*s", (int)sizeof(desc[i].name),
			 desc[i].name);
		snprintf(o->category, sizeof(o->category), "%.*s", (int)sizeof(desc[i].category),
			 desc[i].category);
		o->index = i;
		o->unit = (uint32_t)c[i].unit;
		o->storage = (uint32_t)c[i].storage;
		o->scope = (uint32_t)c[i].scope;
	}
	ctx_free(ctx, c);
	ctx_free(ctx, desc);
	if (!ok) {
		ctx_free(ctx, p->offered);
		p->offered = NULL;
		return false;
	}
	p->offered_count = n;
	return true;
}

/* The passes a pool of these counters needs; UINT32_MAX when unknown. */
static uint32_t passes(crumbs_context *ctx, const struct queue_state *q, const uint32_t *indices,
		       uint32_t n)
{
	VkQueryPoolPerformanceCreateInfoKHR info = {
		VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR, NULL, q->family, n, indices
	};
	uint32_t count = UINT32_MAX;
	ctx->ifn.GetQueueFamilyPerformanceQueryPasses(ctx->devices[q->device].physical, &info,
						       &count);
	return count;
}

/* Takes the listed counters q's family offers, refusing (with a log
 * message) those unknown, of render pass or command buffer scope (their
 * queries cannot begin and end at a scope's boundaries), those whose unit
 * does not add up over a scope's stretches, and those that need a pass of
 * their own and more; groups them, greedily, in passes of one. */
static void choose(crumbs_context *ctx, struct queue_state *q, struct perf_queue *p)
{
	const char *name = ctx->devices[q->device].props.deviceName;
	const char *list = ctx->perf_list;
	char want[VK_MAX_DESCRIPTION_SIZE];
	uint32_t names = 0;
	uint32_t group[CRUMBS_MAX_SET_COUNTERS];
	uint32_t in_group = 0;

	while (next_name(&list, want)) {
		if (names++ == PERF_MAX_NAMES) {
			ctx_log(ctx, CRUMBS_LOG_WARNING, "more than %u vendor counters asked for: "
				"the rest are left out", PERF_MAX_NAMES);
			break;
		}
		const struct perf_counter *o = NULL;
		for (uint32_t i = 0; i < p->offered_count && !o; i++)
			if (!strcasecmp(p->offered[i].name, want))
				o = &p->offered[i];
		if (!o) {
			ctx_log(ctx, CRUMBS_LOG_WARNING, "'%s' has no counter '%s' on queue family "
				"%u: left out (`crumbs info` on a capture lists those it offers)",
				name, want, q->family);
			continue;
		}
		bool twice = false;
		for (uint32_t i = 0; i < p->count; i++)
			twice = twice || p->counters[i].index == o->index;
		if (twice)
			continue;
		if (o->scope != VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR) {
			ctx_log(ctx, CRUMBS_LOG_WARNING, "counter '%s' counts whole %s, not the "
				"commands between scope boundaries: left out", o->name,
				o->scope == VK_PERFORMANCE_COUNTER_SCOPE_RENDER_PASS_KHR ?
				"render passes" : "command buffers");
			continue;
		}
		if (!additive(o->unit)) {
			ctx_log(ctx, CRUMBS_LOG_WARNING, "counter '%s' is in %s, which do not add up "
				"over a scope's stretches: left out", o->name, unit_name(o->unit));
			continue;
		}
		uint32_t idx = o->index;
		if (passes(ctx, q, &idx, 1) != 1) {
			ctx_log(ctx, CRUMBS_LOG_WARNING, "counter '%s' needs more than one pass of "
				"its own: left out", o->name);
			continue;
		}
		if (in_group) {
			group[in_group] = idx;
			if (passes(ctx, q, group, in_group + 1) != 1)
				in_group = 0;
		}
		if (!in_group && p->groups == CRUMBS_MAX_COUNTER_GROUPS) {
			ctx_log(ctx, CRUMBS_LOG_WARNING, "counter '%s' would need more than %u "
				"passes: left out", o->name, CRUMBS_MAX_COUNTER_GROUPS);
			continue;
		}
		if (!in_group)
			p->groups++;
		group[in_group++] = idx;
		struct perf_counter *c = &p->counters[p->count++];
		*c = *o;
		c->group = p->groups - 1;
		c->slot = p->group_size[c->group]++;
	}
}

/* Takes d's profiling lock once, without waiting; false without it. */
static bool lock(crumbs_context *ctx, struct device_state *d)
{
	if (d->profiling_lock_tried)
		return d->profiling_lock;
	d->profiling_lock_tried = true;
	VkAcquireProfilingLockInfoKHR info = { VK_STRUCTURE_TYPE_ACQUIRE_PROFILING_LOCK_INFO_KHR,
					       NULL, 0, 0 };
	VkResult r = d->fn.AcquireProfilingLock ? d->fn.AcquireProfilingLock(d->device, &info) :
						  VK_ERROR_EXTENSION_NOT_PRESENT;
	if (r != VK_SUCCESS) {
		ctx_log(ctx, CRUMBS_LOG_WARNING, "vkAcquireProfilingLockKHR on '%s' failed (%s): "
			"captures count no vendor counters", d->props.deviceName, vk_result_str(r));
		return false;
	}
	d->profiling_lock = true;
	return true;
}

static void release_pools(crumbs_context *ctx, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	struct perf_queue *p = q->perf;
	for (uint32_t g = 0; g < p->groups; g++)
		if (p->pools[g])
			d->fn.DestroyQueryPool(d->device, p->pools[g], ctx_vk_allocator(ctx));
	memset(p->pools, 0, sizeof(p->pools));
	ctx_free(ctx, p->results);
	ctx_free(ctx, p->read);
	p->results = NULL;
	p->read = NULL;
	p->count = p->groups = 0;
}

static enum crumbs_result make_pools(crumbs_context *ctx, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	struct perf_queue *p = q->perf;
	p->queries = q->stats_count;
	for (uint32_t g = 0; g < p->groups; g++)
		if (p->group_size[g] > p->stride)
			p->stride = p->group_size[g];
	p->results = ctx_alloc(ctx, sizeof(*p->results) * p->stride * p->queries);
	p->read = ctx_alloc(ctx, p->queries);
	if (!p->results || !p->read)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	for (uint32_t g = 0; g < p->groups; g++) {
		uint32_t indices[CRUMBS_MAX_SET_COUNTERS], n = 0;
		for (uint32_t i = 0; i < p->count; i++)
			if (p->counters[i].group == g)
				indices[n++] = p->counters[i].index;
		VkQueryPoolPerformanceCreateInfoKHR perf = {
			VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR, NULL, q->family, n,
			indices
		};
		VkQueryPoolCreateInfo qi = { VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, &perf, 0,
					     VK_QUERY_TYPE_PERFORMANCE_QUERY_KHR, p->queries, 0 };
		VkResult r = d->fn.CreateQueryPool(d->device, &qi, ctx_vk_allocator(ctx),
						   &p->pools[g]);
		if (r != VK_SUCCESS) {
			p->pools[g] = VK_NULL_HANDLE;
			ctx_log(ctx, CRUMBS_LOG_WARNING, "vkCreateQueryPool of %u performance "
				"queries failed (%s): captures count no vendor counters",
				p->queries, vk_result_str(r));
			release_pools(ctx, q);
			return CRUMBS_OK;
		}
		d->fn.ResetQueryPool(d->device, p->pools[g], 0, p->queries);
	}
	return CRUMBS_OK;
}

enum crumbs_result perfquery_setup_queue(crumbs_context *ctx, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	if (!(d->features & CRUMBS_FEATURE_PERFORMANCE_QUERY) || !q->stats_pool ||
	    !ctx->ifn.EnumerateQueueFamilyPerformanceQueryCounters ||
	    !ctx->ifn.GetQueueFamilyPerformanceQueryPasses)
		return CRUMBS_OK;
	if (!(q->perf = ctx_alloc(ctx, sizeof(*q->perf))))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	/* What the family offers goes in the files even when nothing is
	 * counted, for `crumbs info` to list. */
	if (!enumerate(ctx, q, q->perf) || !ctx->perf_list)
		return CRUMBS_OK;
	choose(ctx, q, q->perf);
	if (!q->perf->count || !lock(ctx, d)) {
		q->perf->count = q->perf->groups = 0;
		return CRUMBS_OK;
	}
	q->perf->set = ++ctx->perf_sets;
	char taken[1024];
	size_t at = 0;
	taken[0] = '\0';
	for (uint32_t i = 0; i < q->perf->count && at < sizeof(taken); i++) {
		int n = snprintf(taken + at, sizeof(taken) - at, "%s'%s' (pass %u)", i ? ", " : "",
				 q->perf->counters[i].name, q->perf->counters[i].group + 1);
		at += n > 0 ? (size_t)n : 0;
	}
	ctx_log(ctx, CRUMBS_LOG_INFO, "'%s' queue family %u counts %u vendor counter%s in %u "
		"pass%s: %s", d->props.deviceName, q->family, q->perf->count,
		q->perf->count == 1 ? "" : "s", q->perf->groups, q->perf->groups == 1 ? "" : "es",
		taken);
	return make_pools(ctx, q);
}

void perfquery_release_queue(crumbs_context *ctx, struct queue_state *q)
{
	struct device_state *d = &ctx->devices[q->device];
	if (q->perf) {
		release_pools(ctx, q);
		ctx_free(ctx, q->perf->offered);
		ctx_free(ctx, q->perf);
		q->perf = NULL;
	}
	if (d->profiling_lock && d->fn.ReleaseProfilingLock) {
		d->fn.ReleaseProfilingLock(d->device);
		d->profiling_lock = false;
	}
}

/* ------------------------------------------------------------------------ */
/* Captures                                                                 */
/* ------------------------------------------------------------------------ */

/* The group set's frame takes on q: 0 in a one-frame capture. */
static uint32_t group_of(const crumbs_context *ctx, const struct perf_queue *p,
			 const struct capture_set *set)
{
	return ctx->set_count == 1 || p->groups < 2 ? 0 : (uint32_t)(set->frame % p->groups);
}

void perfquery_preroll(crumbs_context *ctx, uint32_t set_count)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct perf_queue *p = q->perf;
		if (!p || !p->groups)
			continue;
		struct device_state *d = &ctx->devices[q->device];
		for (uint32_t g = 0; g < p->groups; g++)
			d->fn.ResetQueryPool(d->device, p->pools[g], 0, p->queries);
		memset(p->read, 0, p->queries);
		if (set_count != 1 || p->groups < 2)
			continue;
		char left[1024];
		size_t at = 0;
		left[0] = '\0';
		for (uint32_t k = 0; k < p->count && at < sizeof(left); k++) {
			if (!p->counters[k].group)
				continue;
			int n = snprintf(left + at, sizeof(left) - at, "%s'%s'", at ? ", " : "",
					 p->counters[k].name);
			at += n > 0 ? (size_t)n : 0;
		}
		ctx_log(ctx, CRUMBS_LOG_INFO, "a one-frame capture takes pass 1 of the %u the "
			"vendor counters need, and leaves out %s (a run takes each pass in turn)",
			p->groups, left);
	}
}

void perfquery_set_reuse(crumbs_context *ctx, uint32_t queue, uint32_t first, uint32_t n)
{
	struct queue_state *q = &ctx->queues[queue];
	struct perf_queue *p = q->perf;
	if (!p || !p->groups || !n || first >= p->queries || n > p->queries - first)
		return;
	struct device_state *d = &ctx->devices[q->device];
	/* The frame it last held took one of them; resetting each is as
	 * cheap as finding which. */
	for (uint32_t g = 0; g < p->groups; g++)
		d->fn.ResetQueryPool(d->device, p->pools[g], first, n);
	memset(p->read + first, 0, n);
}

RECORD_PATH
void perfquery_begin(struct crumbs_cmd *cmd, uint32_t i)
{
	const struct queue_state *q = &cmd->ctx->queues[cmd->queue];
	const struct perf_queue *p = q->perf;
	/* A standing recording counts none: no frame's group is known when
	 * it is recorded. */
	if (!p || !p->groups || i >= p->queries || cmd->standing)
		return;
	cmd->ctx->devices[q->device].fn.CmdBeginQuery(cmd->cb,
						      p->pools[group_of(cmd->ctx, p, cmd->set)], i,
						      0);
}

RECORD_PATH
void perfquery_end(struct crumbs_cmd *cmd, uint32_t i)
{
	const struct queue_state *q = &cmd->ctx->queues[cmd->queue];
	const struct perf_queue *p = q->perf;
	if (!p || !p->groups || i >= p->queries || cmd->standing)
		return;
	cmd->ctx->devices[q->device].fn.CmdEndQuery(cmd->cb,
						    p->pools[group_of(cmd->ctx, p, cmd->set)], i);
}

/* Reads n queries from `first` of q's group g without waiting: false
 * when they are not all available yet. A performance query has no
 * availability word, so a run that is not ready is read no further. */
static bool read_range(const crumbs_context *ctx, const struct queue_state *q, uint32_t g,
		       uint32_t first, uint32_t n)
{
	const struct device_state *d = &ctx->devices[q->device];
	struct perf_queue *p = q->perf;
	size_t stride = sizeof(VkPerformanceCounterResultKHR) * p->group_size[g];
	VkResult r = d->fn.GetQueryPoolResults(d->device, p->pools[g], first, n, stride * n,
					       p->results + (size_t)p->stride * first, stride, 0);
	if (r == VK_NOT_READY)
		return false;
	/* A lost device's queries never come: their stretches are unknown. */
	memset(p->read + first, r == VK_SUCCESS ? READ_OK : READ_FAILED, n);
	return true;
}

bool perfquery_poll(crumbs_context *ctx, struct capture_set *set)
{
	bool all = true;
	for (uint32_t i = 0; i < ctx->queue_count; i++) {
		struct queue_state *q = &ctx->queues[i];
		struct perf_queue *p = q->perf;
		if (!p || !p->groups)
			continue;
		struct set_queue *sq = &set->queues[i];
		uint32_t next = atomic_load(&sq->stats_next), end = sq->stats_end;
		if (next > end)
			next = end;
		if (next > p->queries)
			next = p->queries;
		uint32_t g = group_of(ctx, p, set);
		uint32_t k = sq->stats_first;
		while (k < next && p->read[k])
			k++;
		if (k == next || read_range(ctx, q, g, k, next - k))
			continue;
		/* One at a time then, in the order they were recorded. */
		for (; k < next && (p->read[k] || read_range(ctx, q, g, k, 1)); k++)
			;
		all = all && k == next;
	}
	return all;
}

void perfquery_forgo(struct queue_state *q, uint32_t first, uint32_t n)
{
	struct perf_queue *p = q->perf;
	if (!p || !p->groups || first >= p->queries)
		return;
	if (n > p->queries - first)
		n = p->queries - first;
	memset(p->read + first, READ_FAILED, n);
}

bool perfquery_ready(const struct queue_state *q, uint32_t i)
{
	const struct perf_queue *p = q->perf;
	return !p || !p->groups || i >= p->queries || p->read[i] != READ_NOT;
}

/* A result as a count of 10^-scale units; false when it is no count (a
 * negative, a NaN, one past 2^63). */
static bool value_of(const struct perf_counter *c, const VkPerformanceCounterResultKHR *r,
		     uint64_t *v)
{
	double f;
	switch (c->storage) {
	case VK_PERFORMANCE_COUNTER_STORAGE_INT32_KHR:
		if (r->int32 < 0)
			return false;
		*v = (uint64_t)r->int32;
		return true;
	case VK_PERFORMANCE_COUNTER_STORAGE_INT64_KHR:
		if (r->int64 < 0)
			return false;
		*v = (uint64_t)r->int64;
		return true;
	case VK_PERFORMANCE_COUNTER_STORAGE_UINT32_KHR:
		*v = r->uint32;
		return true;
	case VK_PERFORMANCE_COUNTER_STORAGE_UINT64_KHR:
		*v = r->uint64;
		return *v <= (uint64_t)INT64_MAX;
	case VK_PERFORMANCE_COUNTER_STORAGE_FLOAT32_KHR:
		f = r->float32;
		break;
	case VK_PERFORMANCE_COUNTER_STORAGE_FLOAT64_KHR:
		f = r->float64;
		break;
	default:
		return false;
	}
	f = round(f * 1e3);
	if (!(f >= 0.0 && f < 9.2e18))
		return false;
	*v = (uint64_t)f;
	return true;
}

static uint32_t scale_of(const struct perf_counter *c)
{
	return c->storage == VK_PERFORMANCE_COUNTER_STORAGE_FLOAT32_KHR ||
	       c->storage == VK_PERFORMANCE_COUNTER_STORAGE_FLOAT64_KHR ? FLOAT_SCALE : 0;
}

enum crumbs_result perfquery_write(const crumbs_context *ctx, crumbs_writer *w,
				   const struct capture_set *set, const struct queue_state *q,
				   uint32_t i, int leaf)
{
	const struct perf_queue *p = q->perf;
	if (!p || !p->groups)
		return CRUMBS_OK;
	if (i >= p->queries || p->read[i] != READ_OK)
		return crumbs_writer_set_counters_unknown(w, leaf, p->set);
	uint32_t g = group_of(ctx, p, set);
	const VkPerformanceCounterResultKHR *r = p->results + (size_t)p->stride * i;
	uint64_t values[CRUMBS_MAX_SET_COUNTERS], mask = 0;
	for (uint32_t k = 0; k < p->count; k++) {
		const struct perf_counter *c = &p->counters[k];
		if (c->group != g)
			continue;
		if (!value_of(c, &r[c->slot], &values[k]))
			return crumbs_writer_set_counters_unknown(w, leaf, p->set);
		mask |= (uint64_t)1 << k;
	}
	return crumbs_writer_set_counters(w, leaf, p->set, mask, values);
}

static struct crumbs_counter_desc desc_of(const struct perf_counter *c)
{
	return (struct crumbs_counter_desc){ c->name, c->category, c->unit, c->storage,
					     c->scope, c->group, scale_of(c) };
}

enum crumbs_result perfquery_write_setup(const crumbs_context *ctx, crumbs_writer *w)
{
	enum crumbs_result r = CRUMBS_OK;
	for (uint32_t i = 0; i < ctx->queue_count && r == CRUMBS_OK; i++) {
		const struct queue_state *q = &ctx->queues[i];
		const struct perf_queue *p = q->perf;
		if (!p)
			continue;
		/* A family's offer once a device. */
		bool seen = false;
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = ctx->queues[j].perf && ctx->queues[j].device == q->device &&
			       ctx->queues[j].family == q->family;
		for (uint32_t k = 0; !seen && k < p->offered_count && r == CRUMBS_OK; k++) {
			struct crumbs_counter_desc c = desc_of(&p->offered[k]);
			r = crumbs_writer_offered_counter(w, q->device, q->family, &c);
		}
		if (!p->groups || r != CRUMBS_OK)
			continue;
		struct crumbs_counter_desc c[CRUMBS_MAX_SET_COUNTERS];
		for (uint32_t k = 0; k < p->count; k++)
			c[k] = desc_of(&p->counters[k]);
		r = crumbs_writer_counter_set(w, p->set, q->device, q->family, p->groups,
					      ctx->set_count != 1, p->count, c);
	}
	return r;
}
