/* SPDX-License-Identifier: MIT */
/*
 * test_memory.c: video memory recorded by libcrumbs, under validation: the
 * allocations and frees a program tells of (crumbs_memory_allocated and
 * crumbs_memory_freed), counted per heap into each frame of a run; and,
 * with CRUMBS_FEATURE_MEMORY_BUDGET, the driver's usage and budget read
 * at each recorded frame's end, through a vkGetPhysicalDeviceMemoryProperties2
 * of the test's own (lavapipe has no VK_EXT_memory_budget).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "vkt.h"

#define USAGE_BASE 1000000ull
#define BUDGET (8ull << 30)

static unsigned budget_reads;

/* The driver's answer, as one with VK_EXT_memory_budget gives it: each
 * heap's usage a megabyte a heap and the reads so far, its budget 8 GiB. */
static VKAPI_ATTR void VKAPI_CALL fake_properties2(VkPhysicalDevice physical,
						   VkPhysicalDeviceMemoryProperties2 *p)
{
	vkGetPhysicalDeviceMemoryProperties(physical, &p->memoryProperties);
	for (VkBaseOutStructure *s = p->pNext; s; s = s->pNext) {
		if (s->sType != VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT)
			continue;
		VkPhysicalDeviceMemoryBudgetPropertiesEXT *b = (void *)s;
		for (uint32_t h = 0; h < VK_MAX_MEMORY_HEAPS; h++) {
			b->heapUsage[h] = (h + 1) * USAGE_BASE + budget_reads;
			b->heapBudget[h] = BUDGET;
		}
	}
	budget_reads++;
}

static PFN_vkVoidFunction budget_override(const char *name)
{
	if (strcmp(name, "vkGetPhysicalDeviceMemoryProperties2") == 0 ||
	    strcmp(name, "vkGetPhysicalDeviceMemoryProperties2KHR") == 0)
		return (PFN_vkVoidFunction)fake_properties2;
	return NULL;
}

/* The test's context, in place of vkt_init's: with the budget feature. */
static void own_context(struct vkt *t, uint32_t features)
{
	crumbs_destroy(t->crumbs);
	struct crumbs_vk_device dev = { t->physical, t->device,
					CRUMBS_FEATURE_HOST_QUERY_RESET | features };
	struct crumbs_vk_queue queue = { t->queue, 0, t->family, 0 };
	struct crumbs_desc desc = {
		.instance = t->instance, .get_instance_proc_addr = vkt_gipa,
		.devices = &dev, .device_count = 1, .queues = &queue, .queue_count = 1,
		.capture_dir = t->capture_dir, .program_name = "test", .no_trigger = 1,
	};
	assert_int_equal(crumbs_create(&desc, &t->crumbs), CRUMBS_OK);
}

/* Frame n: 2000 bytes allocated in two, 1000 freed, and calls that name
 * no device or memory type crumbs knows, which count nothing. */
static void frame(struct vkt *t, int n, uint32_t type)
{
	(void)n;
	crumbs_memory_allocated(t->crumbs, 0, type, 1000);
	crumbs_memory_allocated(t->crumbs, 0, type, 1000);
	crumbs_memory_freed(t->crumbs, 0, type, 1000);
	crumbs_memory_allocated(t->crumbs, 3, type, 777);
	crumbs_memory_allocated(t->crumbs, 0, 99, 777);
	crumbs_memory_freed(NULL, 0, type, 777);
	VkCommandBuffer cb = vkt_begin(t);
	vkt_fill(t, cb, 4096);
	assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
	vkt_submit(t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	crumbs_frame(t->crumbs);
}

static void check_frames(const char *path, uint32_t heap, uint32_t heaps, bool budget)
{
	reader *c = NULL;
	const struct frame *f = vkt_read(path, &c);
	struct analyze_error e;
	unsigned frames = 0;
	while (f) {
		uint64_t n = f->number;
		assert_int_equal(f->memory_count, heaps);
		const struct frame_memory *m = frame_memory_find(f, 0, heap);
		assert_non_null(m);
		assert_true(m->tracked);
		assert_int_equal(m->allocated, 2000);
		assert_int_equal(m->freed, 1000);
		assert_int_equal(m->allocations, 2);
		assert_int_equal(m->frees, 1);
		/* Frames 0 to n each left 1000 bytes. */
		assert_int_equal(m->in_use, (n + 1) * 1000);
		assert_int_equal(m->high, n * 1000 + 2000);
		assert_int_equal(m->budgeted, budget);
		if (budget) {
			assert_true(m->usage >= (heap + 1) * USAGE_BASE &&
				    m->usage < (heap + 1) * USAGE_BASE + budget_reads);
			assert_int_equal(m->budget, BUDGET);
		}
		frames++;
		assert_int_equal(reader_next_frame(c, &f, &e), CRUMBS_OK);
	}
	assert_int_equal(frames, 5);
	reader_free(c);
}

static void run_with(bool budget)
{
	struct vkt t;
	vkt_override = budget ? budget_override : NULL;
	vkt_init(&t, NULL);
	own_context(&t, budget ? CRUMBS_FEATURE_MEMORY_BUDGET : 0);
	VkPhysicalDeviceMemoryProperties mp;
	vkGetPhysicalDeviceMemoryProperties(t.physical, &mp);
	assert_int_equal(crumbs_record(t.crumbs, 2, 6, 0), CRUMBS_OK);
	budget_reads = 0;
	for (int n = 0; n < 9; n++)
		frame(&t, n, 0);
	const char *path = vkt_finish_capture(&t, NULL);
	check_frames(path, mp.memoryTypes[0].heapIndex, mp.memoryHeapCount, budget);
	/* Read at the end of each recorded frame, and then only. */
	if (budget)
		assert_int_equal(budget_reads, 5);
	vkt_destroy(&t);
	vkt_override = NULL;
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/* The program's allocations, per frame of a run at detail 0. */
static void allocations_in_a_run(void **state)
{
	(void)state;
	run_with(false);
}

/* With the budget feature, the driver's usage and budget of every heap. */
static void budget_in_a_run(void **state)
{
	(void)state;
	run_with(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allocations_in_a_run),
		cmocka_unit_test(budget_in_a_run),
	};
	return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
