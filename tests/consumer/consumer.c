/* SPDX-License-Identifier: MIT */
/*
 * consumer.c: a program that links an installed libcrumbs as any engine
 * would (tests/cli/library-consumer.sh), with functions of its own named like
 * crumbs' internals. It captures one frame on the first Vulkan device and
 * checks that the file begins as a capture does.
 * Usage: consumer CAPTURE-DIR; prints the capture's path.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <crumbs.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The program's own, named like crumbs' internals: with those exported,
 * the static link would fail on a duplicate and the shared library would
 * call these instead of its own (now_ns counts its callers). */
unsigned long long now_ns(void);
int calibrate(int x);
int event_add(int a, int b);
const char *map_find(const char *key);
void *arena_alloc(size_t n);
int options_parse(int argc);
int writer_init(int fd);

static int now_ns_calls;
unsigned long long now_ns(void) { return now_ns_calls++, 42; }
int calibrate(int x) { return x * 2; }
int event_add(int a, int b) { return a + b; }
const char *map_find(const char *key) { return key; }
static int arena;
void *arena_alloc(size_t n) { return n ? NULL : &arena; }
int options_parse(int argc) { return -argc; }
int writer_init(int fd) { return fd + 1; }

static int fail(const char *what, int code)
{
	fprintf(stderr, "consumer: %s failed (%d)\n", what, code);
	exit(1);
}

#define CHECK(call)                                      \
	do {                                             \
		VkResult r_ = (call);                    \
		if (r_ != VK_SUCCESS)                    \
			fail(#call, (int)r_);            \
	} while (0)

static void on_log(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user;
	if (level != CRUMBS_LOG_INFO)
		fprintf(stderr, "crumbs: %s\n", message);
}

static int is_capture(const char *path)
{
	unsigned char head[16];
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	size_t n = fread(head, 1, sizeof(head), f);
	fclose(f);
	/* A zstd skippable frame of magic 0x184D2A50, then the signature. */
	static const unsigned char magic[4] = { 0x50, 0x2a, 0x4d, 0x18 };
	return n == sizeof(head) && memcmp(head, magic, 4) == 0 &&
	       memcmp(head + 8, "CRUMBS\x1a\n", 8) == 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: consumer CAPTURE-DIR\n");
		return 2;
	}
	if (now_ns() != 42 || calibrate(2) != 4 || event_add(1, 2) != 3 ||
	    strcmp(map_find("k"), "k") != 0 || arena_alloc(0) != &arena ||
	    options_parse(3) != -3 || writer_init(1) != 2)
		fail("the program's own functions", 0);

	VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "consumer", 1, NULL, 0,
				  VK_API_VERSION_1_2 };
	VkInstanceCreateInfo ii = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app,
				    0, NULL, 0, NULL };
	VkInstance instance;
	CHECK(vkCreateInstance(&ii, NULL, &instance));
	VkPhysicalDevice physical;
	uint32_t nd = 1;
	VkResult er = vkEnumeratePhysicalDevices(instance, &nd, &physical);
	if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || nd == 0)
		fail("vkEnumeratePhysicalDevices", (int)er);
	VkQueueFamilyProperties families[16];
	uint32_t nf = 16, family = UINT32_MAX;
	vkGetPhysicalDeviceQueueFamilyProperties(physical, &nf, families);
	for (uint32_t i = 0; i < nf && family == UINT32_MAX; i++)
		if (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)
			family = i;
	if (family == UINT32_MAX)
		fail("a graphics queue", 0);

	float priority = 1.0f;
	VkDeviceQueueCreateInfo qi = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, family,
				       1, &priority };
	VkPhysicalDeviceVulkan12Features f12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES };
	f12.hostQueryReset = VK_TRUE;
	VkDeviceCreateInfo di = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f12, 0, 1, &qi, 0, NULL, 0,
				  NULL, NULL };
	VkDevice device;
	CHECK(vkCreateDevice(physical, &di, NULL, &device));
	VkQueue queue;
	vkGetDeviceQueue(device, family, 0, &queue);
	VkCommandPoolCreateInfo pi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
				       VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, family };
	VkCommandPool pool;
	CHECK(vkCreateCommandPool(device, &pi, NULL, &pool));
	VkCommandBuffer cb;
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, pool,
					   VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
	CHECK(vkAllocateCommandBuffers(device, &ai, &cb));
	VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
	VkFence fence;
	CHECK(vkCreateFence(device, &fi, NULL, &fence));

	struct crumbs_vk_device dev = { physical, device, CRUMBS_FEATURE_HOST_QUERY_RESET };
	struct crumbs_vk_queue q = { queue, 0, family, 0 };
	struct crumbs_desc desc = { 0 };
	desc.instance = instance;
	desc.get_instance_proc_addr = vkGetInstanceProcAddr;
	desc.devices = &dev;
	desc.device_count = 1;
	desc.queues = &q;
	desc.queue_count = 1;
	desc.log = on_log;
	desc.capture_dir = argv[1];
	desc.program_name = "consumer";
	desc.no_trigger = 1;
	crumbs_context *crumbs;
	enum crumbs_result r = crumbs_create(&desc, &crumbs);
	if (r != CRUMBS_OK)
		fail(crumbs_result_str(r), (int)r);
	r = crumbs_capture(crumbs, NULL);
	if (r != CRUMBS_OK)
		fail(crumbs_result_str(r), (int)r);

	/* Frames until the capture is written: its results are read back a
	 * few frames later, and the file is written on crumbs' own thread. */
	const char *path = NULL;
	for (int frame = 0; frame < 20000 && !path; frame++) {
		VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
						VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
		crumbs_cpu_beginf(crumbs, 0, "Consumer CPU %d", 1);
		CHECK(vkBeginCommandBuffer(cb, &bi));
		crumbs_cmd *cmd = crumbs_cmd_begin(crumbs, cb, queue);
		crumbs_scope_begin(cmd, 0, "Consumer Frame");
		crumbs_scope_beginf(cmd, 1, "Consumer Pass %d", 1);
		crumbs_draws(cmd, 1, 2, 6);
		crumbs_scope_end(cmd);
		crumbs_scope_end(cmd);
		crumbs_cmd_end(cmd);
		CHECK(vkEndCommandBuffer(cb));
		VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
		crumbs_task task = crumbs_task_begin(crumbs, "Consumer Jobs", NULL, "Job %d", frame);
		CHECK(crumbs_queue_submit(crumbs, queue, 1, &si, fence));
		crumbs_task_state(crumbs, task, "Waiting");
		crumbs_cpu_wait_begin(crumbs, 0, "Consumer Fence");
		CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
		crumbs_cpu_end(crumbs);
		crumbs_task_end(crumbs, task);
		crumbs_timeline_frame(crumbs, "Consumer Game");
		CHECK(vkResetFences(device, 1, &fence));
		crumbs_cpu_end(crumbs);
		crumbs_frame(crumbs);
		path = crumbs_last_capture(crumbs);
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	if (!path)
		fail("a capture", 0);
	if (now_ns_calls != 1)
		fail("now_ns called once, by this program alone", now_ns_calls);
	if (!is_capture(path))
		fail("the capture's signature", 0);
	printf("%s\n", path);

	CHECK(vkDeviceWaitIdle(device));
	crumbs_destroy(crumbs);
	vkDestroyFence(device, fence, NULL);
	vkDestroyCommandPool(device, pool, NULL);
	vkDestroyDevice(device, NULL);
	vkDestroyInstance(instance, NULL);
	return 0;
}
