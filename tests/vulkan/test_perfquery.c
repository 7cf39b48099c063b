/* SPDX-License-Identifier: MIT */
/*
 * test_perfquery.c: vendor counters through VK_KHR_performance_query.
 * lavapipe lacks the extension, so the test gives crumbs functions of its
 * own: a queue family that offers eight counters (six crumbs can take,
 * one in percent, one of render pass scope), two counters a pass, a
 * profiling lock that can be made to fail, and performance query pools
 * that are the test's handles. Their queries count the "work" the test
 * says it did while they were open, each counter its own multiple of it,
 * so that each scope's values are known. Everything else reaches
 * lavapipe through the validation layer, which must say nothing.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vkt.h"

#define CHECK(call) assert_int_equal((call), VK_SUCCESS)

/* ------------------------------------------------------------------------ */
/* The device's counters                                                    */
/* ------------------------------------------------------------------------ */

#define OFFERED 8
static const struct {
	const char *name;
	VkPerformanceCounterUnitKHR unit;
	VkPerformanceCounterStorageKHR storage;
	VkPerformanceCounterScopeKHR scope;
} offered[OFFERED] = {
	{ "Vertices Shaded", VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR,
	  VK_PERFORMANCE_COUNTER_STORAGE_INT32_KHR, VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR },
	{ "Shader Time", VK_PERFORMANCE_COUNTER_UNIT_NANOSECONDS_KHR,
	  VK_PERFORMANCE_COUNTER_STORAGE_INT64_KHR, VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR },
	{ "Bytes Read", VK_PERFORMANCE_COUNTER_UNIT_BYTES_KHR,
	  VK_PERFORMANCE_COUNTER_STORAGE_UINT32_KHR, VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR },
	{ "Busy Cycles", VK_PERFORMANCE_COUNTER_UNIT_CYCLES_KHR,
	  VK_PERFORMANCE_COUNTER_STORAGE_UINT64_KHR, VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR },
	{ "Warps Launched", VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR,
	  VK_PERFORMANCE_COUNTER_STORAGE_FLOAT32_KHR, VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR },
	{ "Memory Traffic", VK_PERFORMANCE_COUNTER_UNIT_BYTES_KHR,
	  VK_PERFORMANCE_COUNTER_STORAGE_FLOAT64_KHR, VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR },
	{ "Utilization", VK_PERFORMANCE_COUNTER_UNIT_PERCENTAGE_KHR,
	  VK_PERFORMANCE_COUNTER_STORAGE_FLOAT32_KHR, VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR },
	{ "Pass Samples", VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR,
	  VK_PERFORMANCE_COUNTER_STORAGE_UINT64_KHR,
	  VK_PERFORMANCE_COUNTER_SCOPE_RENDER_PASS_KHR },
};

/* The six crumbs takes, in another case and spacing, an unknown name, and
 * the two it refuses. */
#define LIST "vertices shaded, SHADER TIME,Bytes Read,busy cycles,,Warps Launched," \
	     "Memory Traffic,No Such Counter,Utilization,Pass Samples"

/* ------------------------------------------------------------------------ */
/* The substituted functions                                                */
/* ------------------------------------------------------------------------ */

#define POOLS 8
struct fake_pool {
	bool used;
	uint32_t count;
	uint32_t n;
	uint32_t counters[OFFERED];
	uint64_t *work;  /* [count]: what the test did inside query i */
	uint8_t *state;  /* [count]: 0 reset, 1 begun, 2 ended */
};

static struct fake_pool pools[POOLS];
static VkResult lock_result;
static bool negative; /* the int32 counter reads -1 where work was done */
static unsigned locks, unlocks, pools_made, broken_rules;
/* The performance query open, and on which command buffer. */
static struct fake_pool *open_pool;
static uint32_t open_query;
static VkCommandBuffer open_cb;

static struct fake_pool *fake(VkQueryPool pool)
{
	for (uint32_t i = 0; i < POOLS; i++)
		if (pool == (VkQueryPool)(void *)&pools[i])
			return &pools[i];
	return NULL;
}

static void broke(const char *rule)
{
	fprintf(stderr, "broken: %s\n", rule);
	broken_rules++;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_enumerate(VkPhysicalDevice physical, uint32_t family,
						     uint32_t *count, VkPerformanceCounterKHR *c,
						     VkPerformanceCounterDescriptionKHR *d)
{
	(void)physical, (void)family;
	if (!c) {
		*count = OFFERED;
		return VK_SUCCESS;
	}
	uint32_t n = *count < OFFERED ? *count : OFFERED;
	for (uint32_t i = 0; i < n; i++) {
		c[i].unit = offered[i].unit;
		c[i].scope = offered[i].scope;
		c[i].storage = offered[i].storage;
		memset(c[i].uuid, (int)i, sizeof(c[i].uuid));
		if (d) {
			d[i].flags = 0;
			snprintf(d[i].name, sizeof(d[i].name), "%s", offered[i].name);
			snprintf(d[i].category, sizeof(d[i].category), "Test");
			snprintf(d[i].description, sizeof(d[i].description), "a test counter");
		}
	}
	*count = n;
	return n < OFFERED ? VK_INCOMPLETE : VK_SUCCESS;
}

/* Two counters a pass. */
static VKAPI_ATTR void VKAPI_CALL fake_passes(VkPhysicalDevice physical,
					      const VkQueryPoolPerformanceCreateInfoKHR *info,
					      uint32_t *passes)
{
	(void)physical;
	*passes = info->counterIndexCount ? (info->counterIndexCount + 1) / 2 : 1;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_lock(VkDevice device,
						const VkAcquireProfilingLockInfoKHR *info)
{
	(void)device;
	if (info->timeout != 0)
		broke("the profiling lock is waited for");
	if (lock_result == VK_SUCCESS)
		locks++;
	return lock_result;
}

static VKAPI_ATTR void VKAPI_CALL fake_unlock(VkDevice device)
{
	(void)device;
	unlocks++;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_create_pool(VkDevice device,
						       const VkQueryPoolCreateInfo *info,
						       const VkAllocationCallbacks *alloc,
						       VkQueryPool *out)
{
	if (info->queryType != VK_QUERY_TYPE_PERFORMANCE_QUERY_KHR)
		return vkCreateQueryPool(device, info, alloc, out);
	const VkQueryPoolPerformanceCreateInfoKHR *perf = info->pNext;
	if (!perf || perf->sType != VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR ||
	    !perf->counterIndexCount || perf->counterIndexCount > 2)
		broke("a performance pool that needs other than one pass");
	if (locks == unlocks)
		broke("a performance pool made without the profiling lock");
	for (uint32_t i = 0; i < POOLS; i++) {
		struct fake_pool *p = &pools[i];
		if (p->used)
			continue;
		p->used = true;
		p->count = info->queryCount;
		p->n = perf->counterIndexCount;
		memcpy(p->counters, perf->pCounterIndices, sizeof(uint32_t) * p->n);
		p->work = calloc(p->count, sizeof(*p->work));
		p->state = calloc(p->count, 1);
		/* A pool is reset before use. */
		memset(p->state, 3, p->count);
		pools_made++;
		*out = (VkQueryPool)(void *)p;
		return VK_SUCCESS;
	}
	return VK_ERROR_OUT_OF_HOST_MEMORY;
}

static VKAPI_ATTR void VKAPI_CALL fake_destroy_pool(VkDevice device, VkQueryPool pool,
						   const VkAllocationCallbacks *alloc)
{
	struct fake_pool *p = fake(pool);
	if (!p) {
		vkDestroyQueryPool(device, pool, alloc);
		return;
	}
	free(p->work);
	free(p->state);
	memset(p, 0, sizeof(*p));
}

static VKAPI_ATTR void VKAPI_CALL fake_reset(VkDevice device, VkQueryPool pool, uint32_t first,
					    uint32_t n)
{
	struct fake_pool *p = fake(pool);
	if (!p) {
		vkResetQueryPool(device, pool, first, n);
		return;
	}
	if (first > p->count || n > p->count - first)
		broke("a reset past the pool");
	else
		for (uint32_t i = first; i < first + n; i++)
			p->work[i] = 0, p->state[i] = 0;
}

static VKAPI_ATTR void VKAPI_CALL fake_cmd_reset(VkCommandBuffer cb, VkQueryPool pool,
						uint32_t first, uint32_t n)
{
	if (fake(pool))
		broke("a performance pool reset in a command buffer");
	else
		vkCmdResetQueryPool(cb, pool, first, n);
}

static VKAPI_ATTR void VKAPI_CALL fake_begin(VkCommandBuffer cb, VkQueryPool pool, uint32_t q,
					    VkQueryControlFlags flags)
{
	struct fake_pool *p = fake(pool);
	if (!p) {
		vkCmdBeginQuery(cb, pool, q, flags);
		return;
	}
	if (q >= p->count || p->state[q] != 0)
		broke("a performance query begun that is not reset");
	else if (open_pool)
		broke("two performance queries open at once");
	else if (locks == unlocks)
		broke("a performance query without the profiling lock");
	else {
		p->state[q] = 1;
		open_pool = p;
		open_query = q;
		open_cb = cb;
	}
}

static VKAPI_ATTR void VKAPI_CALL fake_end(VkCommandBuffer cb, VkQueryPool pool, uint32_t q)
{
	struct fake_pool *p = fake(pool);
	if (!p) {
		vkCmdEndQuery(cb, pool, q);
		return;
	}
	if (p != open_pool || q != open_query || cb != open_cb)
		broke("a performance query ended that is not open");
	else
		p->state[q] = 2;
	open_pool = NULL;
}

/* Counter c's value over `work`: its own multiple, one and a half times
 * it in floats, so that a float's scaled value is exact. */
static VkPerformanceCounterResultKHR value(uint32_t c, uint64_t work)
{
	VkPerformanceCounterResultKHR r;
	uint64_t v = work * (c + 1);
	switch (offered[c].storage) {
	case VK_PERFORMANCE_COUNTER_STORAGE_INT32_KHR:
		r.int32 = negative && v ? -1 : (int32_t)v;
		break;
	case VK_PERFORMANCE_COUNTER_STORAGE_INT64_KHR:
		r.int64 = (int64_t)v;
		break;
	case VK_PERFORMANCE_COUNTER_STORAGE_UINT32_KHR:
		r.uint32 = (uint32_t)v;
		break;
	case VK_PERFORMANCE_COUNTER_STORAGE_UINT64_KHR:
		r.uint64 = v;
		break;
	case VK_PERFORMANCE_COUNTER_STORAGE_FLOAT32_KHR:
		r.float32 = 1.5f * (float)v;
		break;
	default:
		r.float64 = 1.5 * (double)v;
		break;
	}
	return r;
}

/* What crumbs reads a counter's value as: thousandths for floats. */
static uint64_t expected(uint32_t c, uint64_t work)
{
	uint64_t v = work * (c + 1);
	return offered[c].storage >= VK_PERFORMANCE_COUNTER_STORAGE_FLOAT32_KHR ? v * 1500 : v;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_results(VkDevice device, VkQueryPool pool,
						   uint32_t first, uint32_t n, size_t size,
						   void *data, VkDeviceSize stride,
						   VkQueryResultFlags flags)
{
	struct fake_pool *p = fake(pool);
	if (!p)
		return vkGetQueryPoolResults(device, pool, first, n, size, data, stride, flags);
	if (flags)
		broke("performance results read with flags");
	if (stride != sizeof(VkPerformanceCounterResultKHR) * p->n || size < stride * n ||
	    first > p->count || n > p->count - first) {
		broke("performance results read past their room");
		return VK_ERROR_UNKNOWN;
	}
	VkResult r = VK_SUCCESS;
	for (uint32_t i = 0; i < n; i++) {
		if (p->state[first + i] != 2) {
			r = VK_NOT_READY;
			continue;
		}
		VkPerformanceCounterResultKHR *out =
			(VkPerformanceCounterResultKHR *)((char *)data + stride * i);
		for (uint32_t k = 0; k < p->n; k++)
			out[k] = value(p->counters[k], p->work[first + i]);
	}
	return r;
}

static PFN_vkVoidFunction substitute(const char *name)
{
	static const struct {
		const char *name;
		PFN_vkVoidFunction fn;
	} table[] = {
		{ "vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR",
		  (PFN_vkVoidFunction)fake_enumerate },
		{ "vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR",
		  (PFN_vkVoidFunction)fake_passes },
		{ "vkAcquireProfilingLockKHR", (PFN_vkVoidFunction)fake_lock },
		{ "vkReleaseProfilingLockKHR", (PFN_vkVoidFunction)fake_unlock },
		{ "vkCreateQueryPool", (PFN_vkVoidFunction)fake_create_pool },
		{ "vkDestroyQueryPool", (PFN_vkVoidFunction)fake_destroy_pool },
		{ "vkResetQueryPool", (PFN_vkVoidFunction)fake_reset },
		{ "vkCmdResetQueryPool", (PFN_vkVoidFunction)fake_cmd_reset },
		{ "vkCmdBeginQuery", (PFN_vkVoidFunction)fake_begin },
		{ "vkCmdEndQuery", (PFN_vkVoidFunction)fake_end },
		{ "vkGetQueryPoolResults", (PFN_vkVoidFunction)fake_results },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(name, table[i].name) == 0)
			return table[i].fn;
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* The test's program                                                       */
/* ------------------------------------------------------------------------ */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logged[16384];

static void on_log(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user, (void)level;
	pthread_mutex_lock(&log_lock);
	size_t at = strlen(logged);
	snprintf(logged + at, sizeof(logged) - at, "%s\n", message);
	pthread_mutex_unlock(&log_lock);
}

static bool said(const char *text)
{
	pthread_mutex_lock(&log_lock);
	bool found = strstr(logged, text) != NULL;
	pthread_mutex_unlock(&log_lock);
	if (!found)
		fprintf(stderr, "the log does not say \"%s\":\n%s", text, logged);
	return found;
}

/* The test's device, with a context made again to count the counters
 * `list` names (or the environment's). */
static void init(struct vkt *t, const char *list)
{
	vkt_validation_messages = 0;
	vkt_counters = true;
	vkt_init(t, NULL);
	crumbs_destroy(t->crumbs);
	t->crumbs = NULL;
	memset(pools, 0, sizeof(pools));
	locks = unlocks = pools_made = broken_rules = 0;
	open_pool = NULL;
	logged[0] = '\0';
	vkt_override = substitute;

	struct crumbs_vk_device dev = { t->physical, t->device,
					CRUMBS_FEATURE_HOST_QUERY_RESET |
					CRUMBS_FEATURE_PIPELINE_STATISTICS |
					CRUMBS_FEATURE_PERFORMANCE_QUERY |
					(t->calibrated ? CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS : 0) };
	struct crumbs_vk_queue queue = { t->queue, 0, t->family, 0 };
	struct crumbs_desc desc = { 0 };
	desc.instance = t->instance;
	desc.get_instance_proc_addr = vkt_gipa;
	desc.devices = &dev;
	desc.device_count = 1;
	desc.queues = &queue;
	desc.queue_count = 1;
	desc.log = on_log;
	desc.capture_dir = t->capture_dir;
	desc.program_name = "test";
	desc.no_trigger = 1;
	desc.perf_counters = list;
	assert_int_equal(crumbs_create(&desc, &t->crumbs), CRUMBS_OK);
}

/* Fails on a validation message or a broken rule; checks that every pool
 * was destroyed and the lock given back. */
static void destroy(struct vkt *t)
{
	vkt_destroy(t);
	vkt_override = NULL;
	vkt_counters = false;
	for (uint32_t i = 0; i < POOLS; i++)
		assert_false(pools[i].used);
	assert_int_equal(locks, unlocks);
	assert_int_equal(broken_rules, 0);
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/* Work the open performance query counts. */
static void work(VkCommandBuffer cb, uint64_t units)
{
	if (open_pool && open_cb == cb)
		open_pool->work[open_query] += units;
}

/*
 * A frame: Frame { 1; A { 2; B { 3 } }; 4; C { 5 } }, the numbers work
 * done, scopes of detail 0 and 1 (as a run records).
 */
static void frame(struct vkt *t)
{
	VkCommandBuffer cb = vkt_begin(t);
	crumbs_cmd *h = crumbs_cmd_begin(t->crumbs, cb, t->queue);
	crumbs_scope_begin(h, 0, "Frame");
	work(cb, 1);
	crumbs_scope_begin(h, 1, "A");
	work(cb, 2);
	crumbs_scope_begin(h, 1, "B");
	work(cb, 3);
	crumbs_scope_end(h);
	crumbs_scope_end(h);
	work(cb, 4);
	crumbs_scope_begin(h, 1, "C");
	work(cb, 5);
	crumbs_scope_end(h);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	CHECK(vkEndCommandBuffer(cb));
	vkt_submit(t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	CHECK(vkQueueWaitIdle(t->queue));
}

/* Counter k of the capture's set (the six taken, in the list's order,
 * are offered[k]). */
static void check_set(const struct capture_meta *meta, bool round_robin)
{
	assert_int_equal(meta->counter_set_count, 1);
	const struct capture_counter_set *s = &meta->counter_sets[0];
	assert_int_equal(s->set, 1);
	assert_int_equal(s->count, 6);
	assert_int_equal(s->groups, 3);
	assert_int_equal(s->round_robin, round_robin);
	for (uint32_t k = 0; k < 6; k++) {
		assert_string_equal(s->counters[k].name, offered[k].name);
		assert_string_equal(s->counters[k].category, "Test");
		assert_int_equal(s->counters[k].unit, offered[k].unit);
		assert_int_equal(s->counters[k].storage, offered[k].storage);
		assert_int_equal(s->counters[k].group, k / 2);
		assert_int_equal(s->counters[k].scale, k >= 4 ? 3 : 0);
	}
	assert_int_equal(meta->offered_counter_count, OFFERED);
	assert_string_equal(meta->offered_counters[7].name, "Pass Samples");
	assert_int_equal(meta->offered_counters[7].scope, VK_PERFORMANCE_COUNTER_SCOPE_RENDER_PASS_KHR);
}

static uint64_t vendor(const struct node *n, bool inclusive, uint32_t k)
{
	uint64_t v = 0;
	if (!node_vendor_counter(n, inclusive, k, &v))
		fail_msg("'%.*s' has no vendor counter %u", (int)n->name_len, n->name, k);
	return v;
}

/* The frame's counters of group g are the work each scope did, and the
 * others were not taken. */
static void check_frame(const struct frame *f, uint32_t g)
{
	const struct node *root = f->queues[0].root;
	static const struct {
		const char *name;
		uint64_t exclusive, inclusive;
	} want[] = { { "Frame", 5, 15 }, { "A", 2, 5 }, { "B", 3, 3 }, { "C", 5, 5 } };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct node *n = vkt_find(root, want[i].name);
		assert_non_null(n);
		assert_int_equal(node_vendor_set(n), 1);
		assert_false(node_vendor_unknown(n, true));
		for (uint32_t k = 0; k < 6; k++) {
			uint64_t v;
			if (k / 2 != g) {
				assert_false(node_vendor_counter(n, true, k, &v));
				continue;
			}
			assert_int_equal(vendor(n, false, k), expected(k, want[i].exclusive));
			assert_int_equal(vendor(n, true, k), expected(k, want[i].inclusive));
		}
	}
}

/* A one-frame capture takes the first pass: each scope's values are the
 * scripted ones; the log names what it left out, and why. */
static void one_frame(void **state)
{
	(void)state;
	struct vkt t;
	/* The environment wins over the program's list. */
	setenv("CRUMBS_PERF_COUNTERS", LIST, 1);
	init(&t, "Nothing Of The Kind");
	unsetenv("CRUMBS_PERF_COUNTERS");
	assert_int_equal(locks, 1);
	assert_int_equal(pools_made, 3);
	assert_true(said("has no counter 'No Such Counter' on queue family"));
	assert_true(said("counter 'Utilization' is in percentage"));
	assert_true(said("counter 'Pass Samples' counts whole render passes"));
	assert_false(strstr(logged, "Nothing Of The Kind"));
	assert_true(said("counts 6 vendor counters in 3 passes"));

	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	assert_true(said("leaves out 'Bytes Read', 'Busy Cycles', 'Warps Launched', "
			 "'Memory Traffic'"));
	frame(&t);
	crumbs_frame(t.crumbs);
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	check_set(reader_meta(c), false);
	check_frame(f, 0);
	reader_free(c);
	destroy(&t);
}

/* A run takes pass (frame mod 3) in each frame. */
static void run(void **state)
{
	(void)state;
	struct vkt t;
	init(&t, LIST);
	assert_int_equal(crumbs_record(t.crumbs, 2, 9, 1), CRUMBS_OK);
	for (int n = 0; n < 12; n++) {
		frame(&t);
		crumbs_frame(t.crumbs);
	}
	const char *path = vkt_finish_capture(&t, NULL);
	reader *c;
	struct analyze_error err;
	const struct frame *f;
	assert_int_equal(reader_open_file(path, &c, &err), CRUMBS_OK);
	unsigned frames = 0, taken[3] = { 0 };
	while (reader_next_frame(c, &f, &err) == CRUMBS_OK && f) {
		check_frame(f, (uint32_t)(f->number % 3));
		taken[f->number % 3]++;
		frames++;
	}
	assert_int_equal(frames, 8);
	assert_int_equal(taken[0], 3); /* 3, 6, 9 */
	assert_int_equal(taken[1], 2); /* 4, 7 */
	assert_int_equal(taken[2], 3); /* 2, 5, 8 */
	check_set(reader_meta(c), true);
	reader_free(c);
	destroy(&t);
}

/* Without the profiling lock, captures go on without vendor counters,
 * and the log says why; the pipeline statistics are still counted. */
static void no_lock(void **state)
{
	(void)state;
	struct vkt t;
	lock_result = VK_TIMEOUT;
	init(&t, LIST);
	lock_result = VK_SUCCESS;
	assert_int_equal(pools_made, 0);
	assert_true(said("vkAcquireProfilingLockKHR on '"));
	assert_true(said("captures count no vendor counters"));
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	frame(&t);
	crumbs_frame(t.crumbs);
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	const struct capture_meta *meta = reader_meta(c);
	assert_int_equal(meta->counter_set_count, 0);
	assert_int_equal(meta->offered_counter_count, OFFERED);
	const struct node *a = vkt_find(f->queues[0].root, "A");
	assert_non_null(a);
	assert_int_equal(node_vendor_set(a), 0);
	uint64_t v;
	assert_true(node_counter(a, true, CRUMBS_COUNTER_IA_VERTICES, &v));
	reader_free(c);
	destroy(&t);
}

/* A value that is no count (a negative int32 here) makes its stretch's
 * vendor counters unknown, never wrong; the stretches without work stay
 * known. */
static void not_a_count(void **state)
{
	(void)state;
	struct vkt t;
	init(&t, LIST);
	negative = true;
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	frame(&t);
	crumbs_frame(t.crumbs);
	reader *c;
	const struct frame *f = vkt_read(vkt_finish_capture(&t, NULL), &c);
	negative = false;
	const struct node *root = f->queues[0].root;
	uint64_t v;
	for (const char *const *name = (const char *const[]){ "Frame", "A", "B", "C", NULL };
	     *name; name++) {
		const struct node *n = vkt_find(root, *name);
		assert_non_null(n);
		assert_true(node_vendor_unknown(n, false));
		assert_false(node_vendor_counter(n, true, 1, &v));
	}
	/* The queue's own stretch, before Frame, did no work. */
	assert_false(node_vendor_unknown(root, false));
	assert_true(node_vendor_unknown(root, true));
	reader_free(c);
	destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_frame),
		cmocka_unit_test(run),
		cmocka_unit_test(no_lock),
		cmocka_unit_test(not_a_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
