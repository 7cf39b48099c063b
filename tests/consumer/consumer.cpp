/* SPDX-License-Identifier: MIT */
// consumer.cpp: the C++ side of tests/cli/library-consumer.sh. crumbs.h in a
// C++ program, built with -Wall -Wextra -Werror against an installed
// libcrumbs, beside functions of its own named like crumbs' internals. It
// captures one frame on the first Vulkan device and prints the path.
// Usage: consumer-cpp CAPTURE-DIR
#include <crumbs.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

// With crumbs' internals exported, these would clash with them (C names,
// as an engine's C files would define them; now_ns counts its callers).
extern "C" {
unsigned long long now_ns();
double calibrate(double x);
int event_add(int a, int b);
const char *map_find(const char *key);
void *arena_alloc(std::size_t n);
int options_parse(int argc, char **argv);
bool writer_init();
}

static int now_ns_calls;
unsigned long long now_ns() { return now_ns_calls++, 7; }
double calibrate(double x) { return x / 2; }
int event_add(int a, int b) { return a * b; }
const char *map_find(const char *key) { return key + 1; }
void *arena_alloc(std::size_t n) { return std::malloc(n); }
int options_parse(int argc, char **argv) { return argv ? argc : 0; }
bool writer_init() { return true; }

[[noreturn]] static void fail(const std::string &what, int code)
{
	std::fprintf(stderr, "consumer-cpp: %s failed (%d)\n", what.c_str(), code);
	std::exit(1);
}

static void check(VkResult r, const char *what)
{
	if (r != VK_SUCCESS)
		fail(what, static_cast<int>(r));
}

static bool is_capture(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	char head[16] = {};
	if (!in.read(head, sizeof(head)))
		return false;
	// A zstd skippable frame of magic 0x184D2A50, then the signature.
	return std::memcmp(head, "\x50\x2a\x4d\x18", 4) == 0 &&
	       std::memcmp(head + 8, "CRUMBS\x1a\n", 8) == 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: consumer-cpp CAPTURE-DIR\n");
		return 2;
	}
	void *block = arena_alloc(16);
	if (now_ns() != 7 || calibrate(4) != 2 || event_add(2, 3) != 6 || std::string(map_find("ok")) != "k" ||
	    !block || options_parse(argc, argv) != 2 || !writer_init())
		fail("the program's own functions", 0);
	std::free(block);

	VkApplicationInfo app{};
	app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
	app.pApplicationName = "consumer-cpp";
	app.apiVersion = VK_API_VERSION_1_2;
	VkInstanceCreateInfo ii{};
	ii.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
	ii.pApplicationInfo = &app;
	VkInstance instance;
	check(vkCreateInstance(&ii, nullptr, &instance), "vkCreateInstance");
	VkPhysicalDevice physical;
	uint32_t nd = 1;
	VkResult er = vkEnumeratePhysicalDevices(instance, &nd, &physical);
	if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || nd == 0)
		fail("vkEnumeratePhysicalDevices", static_cast<int>(er));
	VkQueueFamilyProperties families[16];
	uint32_t nf = 16, family = UINT32_MAX;
	vkGetPhysicalDeviceQueueFamilyProperties(physical, &nf, families);
	for (uint32_t i = 0; i < nf && family == UINT32_MAX; i++)
		if (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)
			family = i;
	if (family == UINT32_MAX)
		fail("a graphics queue", 0);

	float priority = 1.0f;
	VkDeviceQueueCreateInfo qi{};
	qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
	qi.queueFamilyIndex = family;
	qi.queueCount = 1;
	qi.pQueuePriorities = &priority;
	VkPhysicalDeviceVulkan12Features f12{};
	f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
	f12.hostQueryReset = VK_TRUE;
	VkDeviceCreateInfo di{};
	di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
	di.pNext = &f12;
	di.queueCreateInfoCount = 1;
	di.pQueueCreateInfos = &qi;
	VkDevice device;
	check(vkCreateDevice(physical, &di, nullptr, &device), "vkCreateDevice");
	VkQueue queue;
	vkGetDeviceQueue(device, family, 0, &queue);
	VkCommandPoolCreateInfo pi{};
	pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
	pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
	pi.queueFamilyIndex = family;
	VkCommandPool pool;
	check(vkCreateCommandPool(device, &pi, nullptr, &pool), "vkCreateCommandPool");
	VkCommandBufferAllocateInfo ai{};
	ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
	ai.commandPool = pool;
	ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
	ai.commandBufferCount = 1;
	VkCommandBuffer cb;
	check(vkAllocateCommandBuffers(device, &ai, &cb), "vkAllocateCommandBuffers");
	VkFenceCreateInfo fi{};
	fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
	VkFence fence;
	check(vkCreateFence(device, &fi, nullptr, &fence), "vkCreateFence");

	crumbs_vk_device dev{ physical, device, CRUMBS_FEATURE_HOST_QUERY_RESET };
	crumbs_vk_queue q{ queue, 0, family, 0 };
	crumbs_desc desc{};
	desc.instance = instance;
	desc.get_instance_proc_addr = vkGetInstanceProcAddr;
	desc.devices = &dev;
	desc.device_count = 1;
	desc.queues = &q;
	desc.queue_count = 1;
	desc.log = [](void *, crumbs_log_level level, const char *message) {
		if (level != CRUMBS_LOG_INFO)
			std::fprintf(stderr, "crumbs: %s\n", message);
	};
	desc.capture_dir = argv[1];
	desc.program_name = "consumer-cpp";
	desc.no_trigger = 1;
	crumbs_context *crumbs = nullptr;
	crumbs_result r = crumbs_create(&desc, &crumbs);
	if (r != CRUMBS_OK)
		fail(crumbs_result_str(r), r);
	r = crumbs_capture(crumbs, nullptr);
	if (r != CRUMBS_OK)
		fail(crumbs_result_str(r), r);

	// Frames until crumbs' own thread has written the capture.
	std::string path;
	for (int frame = 0; frame < 20000 && path.empty(); frame++) {
		VkCommandBufferBeginInfo bi{};
		bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
		bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
		check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
		crumbs_cmd *cmd = crumbs_cmd_begin(crumbs, cb, queue);
		crumbs_scope_begin(cmd, 0, "Consumer Frame");
		crumbs_scope_beginf(cmd, 1, "Consumer Pass %d", 2);
		crumbs_dispatches(cmd, 3);
		crumbs_scope_end(cmd);
		crumbs_scope_end(cmd);
		crumbs_cmd_end(cmd);
		check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
		VkSubmitInfo si{};
		si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
		si.commandBufferCount = 1;
		si.pCommandBuffers = &cb;
		check(crumbs_queue_submit(crumbs, queue, 1, &si, fence), "crumbs_queue_submit");
		{
			// A CPU scope that ends with its block, before the frame does.
			CRUMBS_CPU_SCOPE(crumbs, 0, "Consumer CPU 2");
			crumbs_task task = crumbs_task_begin(crumbs, "Consumer Jobs", "Waiting", "Wait");
			CRUMBS_CPU_WAIT_SCOPE(crumbs, 0, "Consumer Fence");
			check(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
			crumbs_task_end(crumbs, task);
		}
		check(vkResetFences(device, 1, &fence), "vkResetFences");
		crumbs_frame(crumbs);
		if (const char *last = crumbs_last_capture(crumbs))
			path = last;
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	if (path.empty())
		fail("a capture", 0);
	if (now_ns_calls != 1)
		fail("now_ns called once, by this program alone", now_ns_calls);
	if (!is_capture(path))
		fail("the capture's signature", 0);
	std::printf("%s\n", path.c_str());

	check(vkDeviceWaitIdle(device), "vkDeviceWaitIdle");
	crumbs_destroy(crumbs);
	vkDestroyFence(device, fence, nullptr);
	vkDestroyCommandPool(device, pool, nullptr);
	vkDestroyDevice(device, nullptr);
	vkDestroyInstance(instance, nullptr);
	return 0;
}
