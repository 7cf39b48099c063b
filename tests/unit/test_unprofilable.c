/* SPDX-License-Identifier: MIT */
/*
 * test_unprofilable.c: which devices the layer leaves alone, and the reason
 * it logs: extensions whose GPU work it cannot see, those CRUMBS_LAYER_SKIP
 * names, device groups of several GPUs, and devices without timestamps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../layer/layer_internal.h"

#include <stdio.h>
#include <string.h>

/* Family 0 graphics with timestamps, family 1 transfer without. */
static const VkQueueFamilyProperties families[2] = {
	{ VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT, 1, 64, { 1, 1, 1 } },
	{ VK_QUEUE_TRANSFER_BIT, 1, 0, { 1, 1, 1 } },
};

static const float priority = 1.0f;

/* A device with one queue of `family` and the extensions `exts`. */
static VkDeviceCreateInfo device(VkDeviceQueueCreateInfo *qi, uint32_t family, const char **exts,
				 uint32_t ext_count)
{
	*qi = (VkDeviceQueueCreateInfo){ VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0,
					 family, 1, &priority };
	return (VkDeviceCreateInfo){ VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, qi, 0, NULL,
				     ext_count, exts, NULL };
}

static bool check(const VkDeviceCreateInfo *ci, float period, const char *skip, char *why)
{
	snprintf(why, 256, "untouched");
	return layer_unprofilable(ci, families, 2, period, skip, why, 256);
}

static void profiled(void **state)
{
	(void)state;
	const char *exts[] = { "VK_KHR_swapchain", "VK_EXT_multi_draw" };
	VkDeviceQueueCreateInfo qi;
	VkDeviceCreateInfo ci = device(&qi, 0, exts, 2);
	char why[256];
	assert_false(check(&ci, 1.0f, NULL, why));
	assert_string_equal(why, "untouched");
	/* A name in the list must match whole. */
	assert_false(check(&ci, 1.0f, "VK_KHR_swap,VK_EXT_multi_draw_more", why));
}

static void generated_commands(void **state)
{
	(void)state;
	const char *exts[] = { "VK_KHR_swapchain", "VK_EXT_device_generated_commands" };
	VkDeviceQueueCreateInfo qi;
	VkDeviceCreateInfo ci = device(&qi, 0, exts, 2);
	char why[256];
	assert_true(check(&ci, 1.0f, NULL, why));
	assert_non_null(strstr(why, "VK_EXT_device_generated_commands"));
	exts[1] = "VK_NV_device_generated_commands";
	assert_true(check(&ci, 1.0f, NULL, why));
	assert_non_null(strstr(why, "VK_NV_device_generated_commands"));
}

static void skip_list(void **state)
{
	(void)state;
	const char *exts[] = { "VK_KHR_swapchain", "VK_EXT_multi_draw" };
	VkDeviceQueueCreateInfo qi;
	VkDeviceCreateInfo ci = device(&qi, 0, exts, 2);
	char why[256];
	assert_true(check(&ci, 1.0f, "VK_FOO, VK_EXT_multi_draw", why));
	assert_string_equal(why, "it enables VK_EXT_multi_draw, which CRUMBS_LAYER_SKIP names");
	assert_true(check(&ci, 1.0f, "VK_KHR_swapchain", why));
	assert_string_equal(why, "it enables VK_KHR_swapchain, which CRUMBS_LAYER_SKIP names");
	assert_false(check(&ci, 1.0f, "", why));
}

static void device_groups(void **state)
{
	(void)state;
	VkPhysicalDevice gpus[2] = { (VkPhysicalDevice)(uintptr_t)0x10,
				     (VkPhysicalDevice)(uintptr_t)0x20 };
	VkDeviceGroupDeviceCreateInfo group = { VK_STRUCTURE_TYPE_DEVICE_GROUP_DEVICE_CREATE_INFO,
						NULL, 2, gpus };
	VkPhysicalDeviceFeatures2 features = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &group,
					       { 0 } };
	VkDeviceQueueCreateInfo qi;
	VkDeviceCreateInfo ci = device(&qi, 0, NULL, 0);
	ci.pNext = &features; /* found anywhere in the chain */
	char why[256];
	assert_true(check(&ci, 1.0f, NULL, why));
	assert_string_equal(why, "it is a device group of 2 GPUs, and the layer times one GPU per "
			    "device");
	group.physicalDeviceCount = 1;
	assert_false(check(&ci, 1.0f, NULL, why));
}

static void no_timestamps(void **state)
{
	(void)state;
	VkDeviceQueueCreateInfo qi;
	VkDeviceCreateInfo ci = device(&qi, 1, NULL, 0);
	char why[256];
	assert_true(check(&ci, 1.0f, NULL, why));
	assert_string_equal(why, "none of the queues it creates can write timestamps");
	qi.queueFamilyIndex = 7; /* not a family of this device: not timed */
	assert_true(check(&ci, 1.0f, NULL, why));
	qi.queueFamilyIndex = 0;
	assert_false(check(&ci, 1.0f, NULL, why));
	assert_true(check(&ci, 0.0f, NULL, why));
	assert_string_equal(why, "none of the queues it creates can write timestamps (its "
			    "timestampPeriod is 0)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profiled),
		cmocka_unit_test(generated_commands),
		cmocka_unit_test(skip_list),
		cmocka_unit_test(device_groups),
		cmocka_unit_test(no_timestamps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
