/* SPDX-License-Identifier: MIT */
/*
 * test_functions.c: the Vulkan functions crumbs_create loads, from the one
 * list of each table: a required one that is missing fails creation and
 * is named, an optional one falls back to its alias, a feature's are
 * asked for only where the program enabled it, and with everything there
 * a frame is still captured.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vkt.h"

/* Names the test's loader says it does not have. */
static const char *hidden[4];
/* Every name crumbs asked for, with a count, in order. */
static char asked[256][64];
static unsigned asked_count;
static char last_error[1024];

static bool is_hidden(const char *name)
{
	for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		if (hidden[i] && strcmp(hidden[i], name) == 0)
			return true;
	return false;
}

static void note(const char *name)
{
	if (asked_count < sizeof(asked) / sizeof(asked[0]))
		snprintf(asked[asked_count++], sizeof(asked[0]), "%s", name);
}

static bool was_asked(const char *name)
{
	for (unsigned i = 0; i < asked_count; i++)
		if (strcmp(asked[i], name) == 0)
			return true;
	return false;
}

static PFN_vkGetDeviceProcAddr real_gdpa;

static PFN_vkVoidFunction VKAPI_CALL test_gdpa(VkDevice device, const char *name)
{
	note(name);
	return is_hidden(name) ? NULL : real_gdpa(device, name);
}

static PFN_vkVoidFunction VKAPI_CALL test_gipa(VkInstance instance, const char *name)
{
	note(name);
	if (is_hidden(name))
		return NULL;
	if (strcmp(name, "vkGetDeviceProcAddr") == 0) {
		real_gdpa = (PFN_vkGetDeviceProcAddr)vkt_gipa(instance, name);
		return (PFN_vkVoidFunction)test_gdpa;
	}
	return vkt_gipa(instance, name);
}

static void keep_error(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user;
	if (level == CRUMBS_LOG_ERROR)
		snprintf(last_error, sizeof(last_error), "%s", message);
}

/* A context of the test's device through test_gipa, hiding up to two
 * names; its result. */
static enum crumbs_result create(struct vkt *t, uint32_t features, const char *hide,
				 const char *hide2, crumbs_context **out)
{
	memset(hidden, 0, sizeof(hidden));
	hidden[0] = hide;
	hidden[1] = hide2;
	asked_count = 0;
	last_error[0] = '\0';
	struct crumbs_vk_device dev = { t->physical, t->device, features };
	struct crumbs_vk_queue queue = { t->queue, 0, t->family, 0 };
	struct crumbs_desc desc = { 0 };
	desc.instance = t->instance;
	desc.get_instance_proc_addr = test_gipa;
	desc.devices = &dev;
	desc.device_count = 1;
	desc.queues = &queue;
	desc.queue_count = 1;
	desc.log = keep_error;
	desc.capture_dir = t->capture_dir;
	desc.program_name = "test";
	desc.no_trigger = 1;
	return crumbs_create(&desc, out);
}

static void setup_device(struct vkt *t)
{
	vkt_validation_messages = 0;
	vkt_init(t, NULL);
	crumbs_destroy(t->crumbs);
	t->crumbs = NULL;
}

static void finish(struct vkt *t)
{
	vkt_destroy(t);
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

static void missing_device_function_is_named(void **state)
{
	(void)state;
	struct vkt t;
	crumbs_context *ctx = (crumbs_context *)&t; /* must come back NULL */
	setup_device(&t);
	assert_int_equal(create(&t, 0, "vkCmdWriteTimestamp", NULL, &ctx),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_null(ctx);
	assert_non_null(strstr(last_error, "lacks core Vulkan 1.0 functions"));
	assert_non_null(strstr(last_error, "vkCmdWriteTimestamp"));
	finish(&t);
}

static void missing_instance_function_is_named(void **state)
{
	(void)state;
	struct vkt t;
	crumbs_context *ctx;
	setup_device(&t);
	assert_int_equal(create(&t, 0, "vkGetPhysicalDeviceMemoryProperties", NULL, &ctx),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_null(ctx);
	assert_non_null(strstr(last_error, "vkGetPhysicalDeviceMemoryProperties"));
	finish(&t);
}

/* vkQueueSubmit2 missing under its core name: its KHR name is tried; both
 * missing: the context is made all the same, and submit2 says so. */
static void optional_function_falls_back_to_its_alias(void **state)
{
	(void)state;
	struct vkt t;
	crumbs_context *ctx;
	setup_device(&t);
	assert_int_equal(create(&t, 0, "vkQueueSubmit2", NULL, &ctx), CRUMBS_OK);
	assert_true(was_asked("vkQueueSubmit2"));
	assert_true(was_asked("vkQueueSubmit2KHR"));
	crumbs_destroy(ctx);
	assert_int_equal(create(&t, 0, "vkQueueSubmit2", "vkQueueSubmit2KHR", &ctx), CRUMBS_OK);
	assert_int_equal(crumbs_queue_submit2(ctx, t.queue, 0, NULL, VK_NULL_HANDLE),
			 VK_ERROR_EXTENSION_NOT_PRESENT);
	crumbs_destroy(ctx);
	finish(&t);
}

/* A feature's functions are asked for only where it is enabled. */
static void feature_functions_only_with_the_feature(void **state)
{
	(void)state;
	struct vkt t;
	crumbs_context *ctx;
	setup_device(&t);
	assert_int_equal(create(&t, 0, NULL, NULL, &ctx), CRUMBS_OK);
	assert_false(was_asked("vkGetCalibratedTimestampsEXT"));
	assert_false(was_asked("vkGetCalibratedTimestampsKHR"));
	crumbs_destroy(ctx);
	if (t.calibrated) {
		assert_int_equal(create(&t, CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS, NULL, NULL, &ctx),
				 CRUMBS_OK);
		assert_true(was_asked("vkGetCalibratedTimestampsEXT"));
		crumbs_destroy(ctx);
	}
	finish(&t);
}

/* Every function of both lists is asked for, each by its own name, and a
 * context made through them captures a frame. */
static void every_function_loaded_and_used(void **state)
{
	(void)state;
	static const char *const names[] = {
		"vkGetDeviceProcAddr", "vkGetPhysicalDeviceProperties",
		"vkGetPhysicalDeviceMemoryProperties", "vkGetPhysicalDeviceQueueFamilyProperties",
		"vkGetPhysicalDeviceCalibrateableTimeDomainsEXT", "vkCmdBeginDebugUtilsLabelEXT",
		"vkCmdEndDebugUtilsLabelEXT", "vkCreateQueryPool", "vkDestroyQueryPool",
		"vkResetQueryPool", "vkGetQueryPoolResults", "vkCreateCommandPool",
		"vkDestroyCommandPool", "vkAllocateCommandBuffers", "vkBeginCommandBuffer",
		"vkEndCommandBuffer", "vkCmdWriteTimestamp", "vkCmdResetQueryPool",
		"vkCmdExecuteCommands", "vkQueueSubmit", "vkQueueSubmit2", "vkSignalSemaphore",
		"vkCreateFence", "vkDestroyFence", "vkWaitForFences", "vkGetFenceStatus",
		"vkResetFences", "vkCreateBuffer", "vkDestroyBuffer",
		"vkGetBufferMemoryRequirements", "vkAllocateMemory", "vkFreeMemory",
		"vkBindBufferMemory", "vkMapMemory", "vkInvalidateMappedMemoryRanges",
		"vkCmdCopyQueryPoolResults", "vkCmdPipelineBarrier",
	};
	struct vkt t;
	setup_device(&t);
	assert_int_equal(create(&t, CRUMBS_FEATURE_HOST_QUERY_RESET, NULL, NULL, &t.crumbs),
			 CRUMBS_OK);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!was_asked(names[i]))
			fail_msg("crumbs_create did not load %s", names[i]);
	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	VkCommandBuffer cb = vkt_begin(&t);
	crumbs_cmd *h = crumbs_cmd_begin(t.crumbs, cb, t.queue);
	crumbs_scope_begin(h, 0, "Loaded");
	vkt_fill(&t, cb, 1 << 16);
	crumbs_scope_end(h);
	crumbs_cmd_end(h);
	vkEndCommandBuffer(cb);
	vkt_submit(&t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
	const char *path = vkt_finish_capture(&t, NULL);
	assert_non_null(path);
	reader *c;
	const struct frame *f = vkt_read(path, &c);
	assert_non_null(f);
	assert_non_null(vkt_find(f->queues[0].root, "Loaded"));
	reader_free(c);
	finish(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_device_function_is_named),
		cmocka_unit_test(missing_instance_function_is_named),
		cmocka_unit_test(optional_function_falls_back_to_its_alias),
		cmocka_unit_test(feature_functions_only_with_the_feature),
		cmocka_unit_test(every_function_loaded_and_used),
	};
	return cmocka_run_group_tests_name("the Vulkan functions crumbs loads", tests, NULL,
					   NULL);
}
