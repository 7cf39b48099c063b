/* SPDX-License-Identifier: MIT */
/*
 * allocs.c: a program that allocates device memory every frame, for `make
 * bench`: each frame allocates PER_FRAME blocks of BYTES with
 * vkAllocateMemory, frees them with vkFreeMemory, and ends with a fenced
 * submission (where the crumbs layer ends a frame). Prints the median
 * over the frames of the ns an allocation and its free took, timed around
 * those calls alone, so that run with the crumbs layer and without it,
 * the two give the cost of counting them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vulkan/vulkan.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#define CHECK(call)                                                              \
	do {                                                                     \
		VkResult r_ = (call);                                            \
		if (r_ != VK_SUCCESS) {                                          \
			fprintf(stderr, "allocs: %s failed (%d)\n", #call, (int)r_); \
			return 1;                                                \
		}                                                                \
	} while (0)

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: allocs FRAMES PER_FRAME BYTES\n");
		return 2;
	}
	int frames = atoi(argv[1]), per_frame = atoi(argv[2]);
	VkDeviceSize bytes = (VkDeviceSize)strtoull(argv[3], NULL, 10);
	if (frames < 1 || per_frame < 1 || per_frame > 4096 || !bytes)
		return 2;

	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
				  .pApplicationName = "allocs", .apiVersion = VK_API_VERSION_1_1 };
	VkInstanceCreateInfo ici = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
				     .pApplicationInfo = &app };
	VkInstance instance;
	CHECK(vkCreateInstance(&ici, NULL, &instance));
	uint32_t count = 1;
	VkPhysicalDevice physical;
	VkResult er = vkEnumeratePhysicalDevices(instance, &count, &physical);
	if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || count == 0) {
		fprintf(stderr, "allocs: no Vulkan device\n");
		return 1;
	}
	VkPhysicalDeviceMemoryProperties mp;
	vkGetPhysicalDeviceMemoryProperties(physical, &mp);
	uint32_t type = 0;
	for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
		if (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) {
			type = i;
			break;
		}
	float priority = 1;
	VkDeviceQueueCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
					.queueFamilyIndex = 0, .queueCount = 1,
					.pQueuePriorities = &priority };
	VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
				   .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci };
	VkDevice device;
	CHECK(vkCreateDevice(physical, &dci, NULL, &device));
	VkQueue queue;
	vkGetDeviceQueue(device, 0, 0, &queue);
	VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VkFence fence;
	CHECK(vkCreateFence(device, &fci, NULL, &fence));

	VkDeviceMemory *blocks = calloc((size_t)per_frame, sizeof(*blocks));
	double *per_pair = calloc((size_t)frames, sizeof(*per_pair));
	if (!blocks || !per_pair)
		return 1;
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
				    .allocationSize = bytes, .memoryTypeIndex = type };
	for (int f = 0; f < frames; f++) {
		double t0 = now_ns();
		for (int i = 0; i < per_frame; i++)
			CHECK(vkAllocateMemory(device, &ai, NULL, &blocks[i]));
		for (int i = 0; i < per_frame; i++)
			vkFreeMemory(device, blocks[i], NULL);
		per_pair[f] = (now_ns() - t0) / per_frame;
		/* The frame's end, as the layer sees one in a program that
		 * does not present. */
		VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO };
		CHECK(vkQueueSubmit(queue, 1, &si, fence));
		CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
		CHECK(vkResetFences(device, 1, &fence));
	}
	qsort(per_pair, (size_t)frames, sizeof(*per_pair), cmp_double);
	printf("%.1f\n", per_pair[frames / 2]);

	free(per_pair);
	free(blocks);
	vkDestroyFence(device, fence, NULL);
	vkDestroyDevice(device, NULL);
	vkDestroyInstance(instance, NULL);
	return 0;
}
