/* SPDX-License-Identifier: MIT */
/*
 * vkt.c: the Vulkan tests' shared setup (see vkt.h). Everything runs under
 * VK_LAYER_KHRONOS_validation; a test fails on any message it prints.
 */
#define _GNU_SOURCE /* dl_iterate_phdr, RTLD_NOLOAD, RTLD_NODELETE */
#include "vkt.h"

#include <dlfcn.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

unsigned vkt_validation_messages;
bool vkt_expect_out_of_memory;
bool vkt_validation = true;
bool vkt_counters;
PFN_vkVoidFunction (*vkt_override)(const char *name);

/*
 * Keeps a Vulkan driver or layer the loader opened loaded until the test
 * exits. Some keep allocations made once per load in their globals; once
 * vkDestroyInstance unloads them, LeakSanitizer no longer sees those
 * globals and reports the allocations as crumbs' leaks would be. Pinned,
 * they stay reachable, and a leak of crumbs' own is still reported.
 */
static int pin_module(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libvulkan_", 10) == 0 || strncmp(base, "libVkLayer_", 11) == 0)
		dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	return 0;
}

#define CHECK(call)                                                             \
	do {                                                                    \
		VkResult r_ = (call);                                           \
		if (r_ != VK_SUCCESS)                                           \
			fail_msg("%s failed: VkResult %d", #call, (int)r_);     \
	} while (0)

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
						 VkDebugUtilsMessageTypeFlagsEXT types,
						 const VkDebugUtilsMessengerCallbackDataEXT *data,
						 void *user)
{
	(void)types, (void)user;
	if (vkt_expect_out_of_memory && data->pMessage &&
	    strcmp(data->pMessage, "VK_ERROR_OUT_OF_HOST_MEMORY") == 0)
		return VK_FALSE;
	if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
		vkt_validation_messages++;
		fprintf(stderr, "validation: %s\n", data->pMessage);
	}
	return VK_FALSE;
}

static VKAPI_ATTR void VKAPI_CALL no_timestamp(VkCommandBuffer cb, VkPipelineStageFlagBits stage,
					       VkQueryPool pool, uint32_t query)
{
	(void)cb, (void)stage, (void)pool, (void)query;
}

static VKAPI_ATTR void VKAPI_CALL fill_results(VkCommandBuffer cb, VkQueryPool pool,
					       uint32_t first, uint32_t count, VkBuffer buffer,
					       VkDeviceSize offset, VkDeviceSize stride,
					       VkQueryResultFlags flags)
{
	(void)pool, (void)first;
	VkDeviceSize element = (flags & VK_QUERY_RESULT_64_BIT) ? 8 : 4;
	if (flags & VK_QUERY_RESULT_WITH_AVAILABILITY_BIT)
		element *= 2;
	if (count)
		vkCmdFillBuffer(cb, buffer, offset, stride * (count - 1) + element, 1);
}

PFN_vkVoidFunction vkt_no_timestamps(const char *name)
{
	if (strcmp(name, "vkCmdWriteTimestamp") == 0)
		return (PFN_vkVoidFunction)no_timestamp;
	if (strcmp(name, "vkCmdCopyQueryPoolResults") == 0)
		return (PFN_vkVoidFunction)fill_results;
	return NULL;
}

static PFN_vkVoidFunction VKAPI_CALL vkt_gdpa(VkDevice device, const char *name)
{
	PFN_vkVoidFunction f = vkt_override ? vkt_override(name) : NULL;
	return f ? f : vkGetDeviceProcAddr(device, name);
}

PFN_vkVoidFunction VKAPI_CALL vkt_gipa(VkInstance instance, const char *name)
{
	PFN_vkVoidFunction f = vkt_override ? vkt_override(name) : NULL;
	if (f)
		return f;
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)vkt_gdpa;
	return vkGetInstanceProcAddr(instance, name);
}

static void on_log(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user;
	if (level != CRUMBS_LOG_INFO)
		fprintf(stderr, "crumbs: %s\n", message);
}

static bool has_extension(VkPhysicalDevice p, const char *name)
{
	VkExtensionProperties props[512];
	uint32_t n = 512;
	vkEnumerateDeviceExtensionProperties(p, NULL, &n, props);
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(props[i].extensionName, name) == 0)
			return true;
	return false;
}

void vkt_init(struct vkt *t, const struct crumbs_desc *wanted)
{
	memset(t, 0, sizeof(*t));

	/* The validation layer is part of the test setup: without it the
	 * tests would pass without checking what they claim. */
	VkLayerProperties layers[64];
	uint32_t nl = 64;
	bool validation = false;
	vkEnumerateInstanceLayerProperties(&nl, layers);
	for (uint32_t i = 0; i < nl; i++)
		validation |= strcmp(layers[i].layerName, "VK_LAYER_KHRONOS_validation") == 0;
	if (!validation && vkt_validation)
		fail_msg("VK_LAYER_KHRONOS_validation is not installed (vulkan-validationlayers)");

	const char *layer = "VK_LAYER_KHRONOS_validation";
	const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
	VkDebugUtilsMessengerCreateInfoEXT mi = {
		VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT, NULL, 0,
		VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
		VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		on_message, NULL
	};
	VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "crumbs tests", 1,
				  "crumbs", 1, VK_API_VERSION_1_2 };
	VkInstanceCreateInfo ii = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, &mi, 0, &app,
				    vkt_validation ? 1 : 0, &layer, 1, &ext };
	CHECK(vkCreateInstance(&ii, NULL, &t->instance));
	dl_iterate_phdr(pin_module, NULL);
	PFN_vkCreateDebugUtilsMessengerEXT create_messenger = (PFN_vkCreateDebugUtilsMessengerEXT)
		vkGetInstanceProcAddr(t->instance, "vkCreateDebugUtilsMessengerEXT");
	assert_non_null(create_messenger);
	CHECK(create_messenger(t->instance, &mi, NULL, &t->messenger));

	VkPhysicalDevice devices[8];
	uint32_t nd = 8;
	VkResult er = vkEnumeratePhysicalDevices(t->instance, &nd, devices);
	if (er != VK_SUCCESS && er != VK_INCOMPLETE)
		fail_msg("vkEnumeratePhysicalDevices failed: VkResult %d", (int)er);
	if (nd == 0)
		fail_msg("no Vulkan device (mesa-vulkan-drivers provides lavapipe)");
	const char *pick = getenv("CRUMBS_TEST_DEVICE");
	t->physical = devices[pick ? (uint32_t)atoi(pick) % nd : 0];

	VkQueueFamilyProperties families[16];
	uint32_t nf = 16;
	vkGetPhysicalDeviceQueueFamilyProperties(t->physical, &nf, families);
	t->family = UINT32_MAX;
	for (uint32_t i = 0; i < nf && t->family == UINT32_MAX; i++)
		if (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)
			t->family = i;
	assert_true(t->family != UINT32_MAX);
	t->valid_bits = families[t->family].timestampValidBits;
	VkPhysicalDeviceProperties props;
	vkGetPhysicalDeviceProperties(t->physical, &props);
	t->period = props.limits.timestampPeriod;

	float priority = 1.0f;
	VkDeviceQueueCreateInfo qi = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, t->family,
				       1, &priority };
	VkPhysicalDeviceVulkan12Features f12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES };
	f12.hostQueryReset = VK_TRUE;
	f12.timelineSemaphore = VK_TRUE;
	VkPhysicalDeviceFeatures supported, enabled = { 0 };
	vkGetPhysicalDeviceFeatures(t->physical, &supported);
	if (vkt_counters && !supported.pipelineStatisticsQuery)
		fail_msg("the device has no pipelineStatisticsQuery");
	enabled.pipelineStatisticsQuery = vkt_counters;
	const char *dev_ext[1];
	uint32_t ne = 0;
	t->calibrated = has_extension(t->physical, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
	if (t->calibrated)
		dev_ext[ne++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
	VkDeviceCreateInfo di = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f12, 0, 1, &qi, 0, NULL, ne,
				  dev_ext, &enabled };
	CHECK(vkCreateDevice(t->physical, &di, NULL, &t->device));
	vkGetDeviceQueue(t->device, t->family, 0, &t->queue);

	VkCommandPoolCreateInfo pi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
				       VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, t->family };
	CHECK(vkCreateCommandPool(t->device, &pi, NULL, &t->pool));

	t->buffer_size = 64u << 20;
	VkBufferCreateInfo bi = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, t->buffer_size,
				  VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_SHARING_MODE_EXCLUSIVE, 0, NULL };
	CHECK(vkCreateBuffer(t->device, &bi, NULL, &t->buffer));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(t->device, t->buffer, &req);
	uint32_t type = 0;
	while (!(req.memoryTypeBits & (1u << type)))
		type++;
	VkMemoryAllocateInfo ai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type };
	CHECK(vkAllocateMemory(t->device, &ai, NULL, &t->memory));
	CHECK(vkBindBufferMemory(t->device, t->buffer, t->memory, 0));

	/* lavapipe compiles its fill shader the first time: warm it up, so
	 * that the fills the tests time take what they take afterwards. */
	VkCommandBuffer warm = vkt_begin(t);
	vkt_fill(t, warm, 1 << 20);
	CHECK(vkEndCommandBuffer(warm));
	VkSubmitInfo wi = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &warm, 0, NULL };
	CHECK(vkQueueSubmit(t->queue, 1, &wi, VK_NULL_HANDLE));
	CHECK(vkQueueWaitIdle(t->queue));

	snprintf(t->capture_dir, sizeof(t->capture_dir), "/tmp/crumbs-test-XXXXXX");
	assert_non_null(mkdtemp(t->capture_dir));

	struct crumbs_desc desc = { 0 };
	if (wanted)
		desc = *wanted;
	struct crumbs_vk_device dev = { t->physical, t->device,
					CRUMBS_FEATURE_HOST_QUERY_RESET | CRUMBS_FEATURE_DEBUG_UTILS |
					(t->calibrated ? CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS : 0) |
					(vkt_counters ? CRUMBS_FEATURE_PIPELINE_STATISTICS : 0) };
	struct crumbs_vk_queue queue = { t->queue, 0, t->family, 0 };
	desc.instance = t->instance;
	desc.get_instance_proc_addr = vkt_gipa;
	desc.devices = &dev;
	desc.device_count = 1;
	desc.queues = &queue;
	desc.queue_count = 1;
	if (!desc.log)
		desc.log = on_log;
	desc.capture_dir = t->capture_dir;
	desc.program_name = "test";
	desc.no_trigger = 1;
	assert_int_equal(crumbs_create(&desc, &t->crumbs), CRUMBS_OK);
}

void vkt_destroy(struct vkt *t)
{
	vkDeviceWaitIdle(t->device);
	crumbs_destroy(t->crumbs);
	vkDestroyBuffer(t->device, t->buffer, NULL);
	vkFreeMemory(t->device, t->memory, NULL);
	vkDestroyCommandPool(t->device, t->pool, NULL);
	vkDestroyDevice(t->device, NULL);
	PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger = (PFN_vkDestroyDebugUtilsMessengerEXT)
		vkGetInstanceProcAddr(t->instance, "vkDestroyDebugUtilsMessengerEXT");
	destroy_messenger(t->instance, t->messenger, NULL);
	vkDestroyInstance(t->instance, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->capture_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", t->capture_dir);
}

VkCommandBuffer vkt_begin(struct vkt *t)
{
	VkCommandBuffer cb;
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   t->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
	CHECK(vkAllocateCommandBuffers(t->device, &ai, &cb));
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
	CHECK(vkBeginCommandBuffer(cb, &bi));
	return cb;
}

void vkt_fill(struct vkt *t, VkCommandBuffer cb, VkDeviceSize bytes)
{
	if (bytes > t->buffer_size)
		bytes = t->buffer_size;
	vkCmdFillBuffer(cb, t->buffer, 0, bytes & ~(VkDeviceSize)3, 0x5a5a5a5au);
	/* The next fill must not overlap this one in time. */
	VkMemoryBarrier mb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_TRANSFER_WRITE_BIT,
			       VK_ACCESS_TRANSFER_WRITE_BIT };
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
			     &mb, 0, NULL, 0, NULL);
}

void vkt_submit(struct vkt *t, VkCommandBuffer cb, VkSemaphore wait, uint64_t wait_value,
		VkSemaphore signal, uint64_t signal_value)
{
	VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	VkTimelineSemaphoreSubmitInfo ti = { VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, NULL,
					     wait ? 1 : 0, &wait_value, signal ? 1 : 0, &signal_value };
	VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, &ti, wait ? 1 : 0, &wait, &stage,
			    cb ? 1 : 0, &cb, signal ? 1 : 0, &signal };
	CHECK(crumbs_queue_submit(t->crumbs, t->queue, 1, &si, VK_NULL_HANDLE));
}

void vkt_sleep_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (double)(long)(ms / 1000) * 1000) * 1e6) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

double vkt_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *vkt_finish_capture(struct vkt *t, const char *previous)
{
	/* By time: under the sanitizers everything is slower. crumbs itself
	 * gives up on results after 10 s. */
	double until = vkt_now_ms() + 20000;
	while (vkt_now_ms() < until) {
		crumbs_frame(t->crumbs);
		const char *now = crumbs_last_capture(t->crumbs);
		if (now && (!previous || strcmp(now, previous) != 0))
			return now;
		vkt_sleep_ms(1);
	}
	fail_msg("no capture was written in 20 s");
	return NULL;
}

const struct frame *vkt_read(const char *path, reader **c)
{
	struct analyze_error e;
	const struct frame *f = NULL;
	if (reader_open_file(path, c, &e) != CRUMBS_OK)
		fail_msg("cannot read '%s': %s", path, e.text);
	if (reader_next_frame(*c, &f, &e) != CRUMBS_OK || !f)
		fail_msg("no frame in '%s': %s", path, e.text);
	return f;
}

const struct node *vkt_find(const struct node *n, const char *name)
{
	if (n->name_len == strlen(name) && memcmp(n->name, name, n->name_len) == 0)
		return n;
	for (const struct node *c = n->child; c; c = c->next) {
		const struct node *hit = vkt_find(c, name);
		if (hit)
			return hit;
	}
	return NULL;
}
