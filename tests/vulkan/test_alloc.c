/* SPDX-License-Identifier: MIT */
/*
 * test_alloc.c: libcrumbs with the program's VkAllocationCallbacks: every
 * allocation of crumbs_create failed in turn leaves nothing behind and
 * destroys only what was set up, and what a capture keeps is allocated
 * through the callbacks.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "vkt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ------------------------------------------------------------------------ */
/* Counting allocation callbacks                                            */
/* ------------------------------------------------------------------------ */

/* The blocks the callbacks handed out and that are not freed yet. */
#define MAX_BLOCKS 65536
struct block {
	char *p;
	size_t size;
};
static struct block blocks[MAX_BLOCKS];
static size_t block_count;
static unsigned long allocations; /* since the test last set it to 0 */
static unsigned long fail_at;     /* this allocation returns NULL; 0: none */
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;

/* Mutexes initialised inside live blocks, and destructions of ones that
 * were not (pthread_mutex_destroy of an uninitialised mutex is undefined). */
#define MAX_MUTEXES 4096
static const void *mutexes[MAX_MUTEXES];
static size_t mutex_count;
static unsigned bad_destroys;

static bool in_block(const void *p)
{
	for (size_t i = 0; i < block_count; i++)
		if ((const char *)p >= blocks[i].p && (const char *)p < blocks[i].p + blocks[i].size)
			return true;
	return false;
}

/* Under blocks_lock. */
static void forget_block(size_t i)
{
	for (size_t k = 0; k < mutex_count;)
		if ((const char *)mutexes[k] >= blocks[i].p &&
		    (const char *)mutexes[k] < blocks[i].p + blocks[i].size)
			mutexes[k] = mutexes[--mutex_count];
		else
			k++;
	blocks[i] = blocks[--block_count];
}

static void *VKAPI_PTR on_alloc(void *user, size_t size, size_t align,
				VkSystemAllocationScope scope)
{
	(void)user, (void)scope;
	void *p = NULL;
	pthread_mutex_lock(&blocks_lock);
	if (++allocations != fail_at && block_count < MAX_BLOCKS &&
	    posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1) == 0)
		blocks[block_count++] = (struct block){ p, size };
	pthread_mutex_unlock(&blocks_lock);
	return p;
}

static void VKAPI_PTR on_free(void *user, void *p)
{
	(void)user;
	if (!p)
		return;
	pthread_mutex_lock(&blocks_lock);
	size_t i = 0;
	while (i < block_count && blocks[i].p != p)
		i++;
	if (i == block_count)
		fail_msg("freeing %p, which the callbacks did not allocate", p);
	forget_block(i);
	pthread_mutex_unlock(&blocks_lock);
	free(p);
}

static void *VKAPI_PTR on_realloc(void *user, void *orig, size_t size, size_t align,
				  VkSystemAllocationScope scope)
{
	if (!orig)
		return on_alloc(user, size, align, scope);
	if (size == 0) {
		on_free(user, orig);
		return NULL;
	}
	size_t old = 0;
	pthread_mutex_lock(&blocks_lock);
	for (size_t i = 0; i < block_count; i++)
		if (blocks[i].p == orig)
			old = blocks[i].size;
	pthread_mutex_unlock(&blocks_lock);
	void *p = on_alloc(user, size, align, scope);
	if (!p)
		return NULL;
	memcpy(p, orig, old < size ? old : size);
	on_free(user, orig);
	return p;
}

static const VkAllocationCallbacks counting = { NULL, on_alloc, on_realloc, on_free, NULL, NULL };

/* ------------------------------------------------------------------------ */
/* Mutexes, watched                                                         */
/* ------------------------------------------------------------------------ */

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	static int (*next)(pthread_mutex_t *, const pthread_mutexattr_t *);
	if (!next)
		*(void **)&next = dlsym(RTLD_NEXT, "pthread_mutex_init");
	int r = next(m, attr);
	pthread_mutex_lock(&blocks_lock);
	if (r == 0 && in_block(m) && mutex_count < MAX_MUTEXES)
		mutexes[mutex_count++] = m;
	pthread_mutex_unlock(&blocks_lock);
	return r;
}

int pthread_mutex_destroy(pthread_mutex_t *m)
{
	static int (*next)(pthread_mutex_t *);
	if (!next)
		*(void **)&next = dlsym(RTLD_NEXT, "pthread_mutex_destroy");
	pthread_mutex_lock(&blocks_lock);
	if (in_block(m)) {
		size_t k = 0;
		while (k < mutex_count && mutexes[k] != m)
			k++;
		if (k == mutex_count)
			bad_destroys++;
		else
			mutexes[k] = mutexes[--mutex_count];
	}
	pthread_mutex_unlock(&blocks_lock);
	return next(m);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

static unsigned errors_logged;

static void quiet_log(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user, (void)message;
	if (level == CRUMBS_LOG_ERROR)
		errors_logged++;
}

static void check_no_validation_messages(void)
{
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/* A context of t's device and queue with the counting callbacks. */
static enum crumbs_result create(struct vkt *t, crumbs_context **out)
{
	struct crumbs_vk_device dev = { t->physical, t->device,
					CRUMBS_FEATURE_HOST_QUERY_RESET | CRUMBS_FEATURE_DEBUG_UTILS |
					(t->calibrated ? CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS : 0) };
	struct crumbs_vk_queue queue = { t->queue, 0, t->family, 0 };
	struct crumbs_desc desc = { 0 };
	desc.instance = t->instance;
	desc.get_instance_proc_addr = vkt_gipa;
	desc.devices = &dev;
	desc.device_count = 1;
	desc.queues = &queue;
	desc.queue_count = 1;
	desc.allocator = &counting;
	desc.log = quiet_log;
	desc.capture_dir = t->capture_dir;
	desc.program_name = "test";
	desc.no_trigger = 1;
	desc.mirror_labels = 1;
	return crumbs_create(&desc, out);
}

/*
 * Each allocation of a successful crumbs_create is failed in turn: the
 * creation fails (or carries on without what it can do without), and
 * nothing stays allocated or is destroyed without having been set up.
 */
static void create_fails_at_each_allocation(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	crumbs_destroy(t.crumbs);
	t.crumbs = NULL;

	crumbs_context *ctx;
	allocations = 0;
	fail_at = 0;
	assert_int_equal(create(&t, &ctx), CRUMBS_OK);
	unsigned long total = allocations;
	crumbs_destroy(ctx);
	assert_int_equal(block_count, 0);
	assert_true(total > 10);

	unsigned failed = 0;
	vkt_expect_out_of_memory = true;
	for (unsigned long k = 1; k <= total; k++) {
		allocations = 0;
		fail_at = k;
		enum crumbs_result r = create(&t, &ctx);
		fail_at = 0;
		if (r == CRUMBS_OK) {
			crumbs_destroy(ctx);
		} else {
			assert_int_equal(r, CRUMBS_ERROR_OUT_OF_MEMORY);
			assert_null(ctx);
			failed++;
		}
		if (block_count)
			fail_msg("failing allocation %lu of %lu leaves %zu blocks allocated", k, total,
				 block_count);
		if (bad_destroys)
			fail_msg("failing allocation %lu of %lu destroys %u mutexes never initialised",
				 k, total, bad_destroys);
	}
	vkt_expect_out_of_memory = false;
	/* Most allocations are needed; a few (reading results on the GPU)
	 * have a fallback. */
	assert_true(failed > total / 2);
	assert_true(errors_logged >= failed);
	vkt_destroy(&t);
	check_no_validation_messages();
}

/*
 * A capture with the counting callbacks: what crumbs keeps of it (the
 * path it reports) lies in memory they handed out, and at destruction
 * everything they handed out is back.
 */
static void capture_allocates_through_callbacks(void **state)
{
	(void)state;
	struct vkt t;
	vkt_init(&t, NULL);
	crumbs_destroy(t.crumbs);
	assert_int_equal(create(&t, &t.crumbs), CRUMBS_OK);

	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	VkCommandBuffer cb = vkt_begin(&t);
	crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cb, t.queue);
	crumbs_scope_begin(h, 0, "Work");
	vkt_fill(&t, cb, 1 << 20);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	crumbs_frame(t.crumbs);
	const char *path = vkt_finish_capture(&t, NULL);
	pthread_mutex_lock(&blocks_lock);
	bool ours = in_block(path);
	pthread_mutex_unlock(&blocks_lock);
	if (!ours)
		fail_msg("crumbs_last_capture() is not in memory of the allocation callbacks");

	assert_int_equal(vkDeviceWaitIdle(t.device), VK_SUCCESS);
	crumbs_destroy(t.crumbs);
	t.crumbs = NULL;
	assert_int_equal(block_count, 0);
	vkt_destroy(&t);
	check_no_validation_messages();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(create_fails_at_each_allocation),
		cmocka_unit_test(capture_allocates_through_callbacks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
