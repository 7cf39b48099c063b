/* SPDX-License-Identifier: MIT */
/*
 * two_devices.c: a Vulkan program that knows nothing of crumbs, with two
 * devices alive at once on the first GPU. Each frame, each device runs a
 * fill inside a debug label of its own ("Device 0 work", "Device 1 work")
 * and waits for it on a fence, so the crumbs layer sees one frame per
 * device per submission (layer/LAYER.md). With --validate, the Khronos
 * validation layer is enabled and any message it prints fails the run.
 * With --no-cleanup it exits after its last frame without destroying
 * anything, as many programs do; --labels N puts N more labels inside
 * each device's, for captures that take a while to write. --duration MS
 * goes on past --frames until MS milliseconds have passed since the first
 * frame, for tests that need the program alive for a given time whatever
 * the machine's speed. --markers enables VK_EXT_debug_marker where the
 * device lists it (as Qt's RHI does: nothing is marked otherwise), names
 * each device's buffer with it ("Marked Buffer N"), tags it, and marks
 * the fill "Device N marker" inside the label; it prints whether it did,
 * and checks the list's short answer (VK_INCOMPLETE). --secondary records
 * the fill, inside a label "Device N secondary", in a secondary command
 * buffer the primary executes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vulkan/vulkan.h>

#define DEVICES 2
#define FILL_BYTES (1u << 20)

static unsigned messages;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
						 VkDebugUtilsMessageTypeFlagsEXT types,
						 const VkDebugUtilsMessengerCallbackDataEXT *data,
						 void *user)
{
	(void)severity, (void)types, (void)user;
	fprintf(stderr, "two-devices: validation: %s\n", data->pMessage);
	messages++;
	return VK_FALSE;
}

/* VK_EXT_debug_marker's commands, where --markers found the extension. */
struct markers {
	PFN_vkCmdDebugMarkerBeginEXT begin;
	PFN_vkCmdDebugMarkerEndEXT end;
	PFN_vkCmdDebugMarkerInsertEXT insert;
	PFN_vkDebugMarkerSetObjectNameEXT name;
	PFN_vkDebugMarkerSetObjectTagEXT tag;
};

struct device {
	VkDevice device;
	struct markers markers;
	VkQueue queue;
	VkCommandPool pool;
	VkCommandBuffer cb;
	VkCommandBuffer secondary; /* --secondary */
	VkFence fence;
	VkBuffer buffer;
	VkDeviceMemory memory;
};

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int fail(const char *what, VkResult r)
{
	fprintf(stderr, "two-devices: %s failed (VkResult %d)\n", what, (int)r);
	return 1;
}

#define TRY(call)                                      \
	do {                                           \
		VkResult r_ = (call);                  \
		if (r_ != VK_SUCCESS)                  \
			return fail(#call, r_);        \
	} while (0)

/* Whether the device lists VK_EXT_debug_marker; -1 when the list is
 * wrong: a short array must get VK_INCOMPLETE and be filled. */
static int lists_marker(VkPhysicalDevice physical)
{
	uint32_t n = 0;
	if (vkEnumerateDeviceExtensionProperties(physical, NULL, &n, NULL) != VK_SUCCESS || n == 0)
		return -1;
	VkExtensionProperties *props = calloc(n, sizeof(*props));
	uint32_t short_n = n - 1, all = n;
	int found = -1;
	if (props &&
	    vkEnumerateDeviceExtensionProperties(physical, NULL, &short_n, props) == VK_INCOMPLETE &&
	    short_n == n - 1 &&
	    vkEnumerateDeviceExtensionProperties(physical, NULL, &all, props) == VK_SUCCESS &&
	    all == n) {
		found = 0;
		for (uint32_t i = 0; i < n; i++)
			if (strcmp(props[i].extensionName, VK_EXT_DEBUG_MARKER_EXTENSION_NAME) == 0)
				found = 1;
	}
	free(props);
	return found;
}

static int make_device(VkPhysicalDevice physical, uint32_t family, int markers, int secondary,
		       int index, struct device *d)
{
	const float priority = 1.0f;
	const char *marker_ext = VK_EXT_DEBUG_MARKER_EXTENSION_NAME;
	VkDeviceQueueCreateInfo qi = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, family, 1,
				       &priority };
	VkDeviceCreateInfo ci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qi, 0, NULL,
				  markers ? 1 : 0, &marker_ext, NULL };
	TRY(vkCreateDevice(physical, &ci, NULL, &d->device));
	if (markers) {
		struct markers *m = &d->markers;
		m->begin = (PFN_vkCmdDebugMarkerBeginEXT)vkGetDeviceProcAddr(d->device,
									      "vkCmdDebugMarkerBeginEXT");
		m->end = (PFN_vkCmdDebugMarkerEndEXT)vkGetDeviceProcAddr(d->device,
									  "vkCmdDebugMarkerEndEXT");
		m->insert = (PFN_vkCmdDebugMarkerInsertEXT)vkGetDeviceProcAddr(
			d->device, "vkCmdDebugMarkerInsertEXT");
		m->name = (PFN_vkDebugMarkerSetObjectNameEXT)vkGetDeviceProcAddr(
			d->device, "vkDebugMarkerSetObjectNameEXT");
		m->tag = (PFN_vkDebugMarkerSetObjectTagEXT)vkGetDeviceProcAddr(
			d->device, "vkDebugMarkerSetObjectTagEXT");
		if (!m->begin || !m->end || !m->insert || !m->name || !m->tag)
			return fail("vkGetDeviceProcAddr of an enabled VK_EXT_debug_marker command",
				    VK_ERROR_EXTENSION_NOT_PRESENT);
	}
	vkGetDeviceQueue(d->device, family, 0, &d->queue);
	VkCommandPoolCreateInfo pi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
				       VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, family };
	TRY(vkCreateCommandPool(d->device, &pi, NULL, &d->pool));
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   d->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
	TRY(vkAllocateCommandBuffers(d->device, &ai, &d->cb));
	if (secondary) {
		ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
		TRY(vkAllocateCommandBuffers(d->device, &ai, &d->secondary));
	}
	VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
	TRY(vkCreateFence(d->device, &fi, NULL, &d->fence));
	VkBufferCreateInfo bi = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, FILL_BYTES,
				  VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_SHARING_MODE_EXCLUSIVE, 0, NULL };
	TRY(vkCreateBuffer(d->device, &bi, NULL, &d->buffer));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(d->device, d->buffer, &req);
	uint32_t type = 0;
	while (type < 32 && !(req.memoryTypeBits & (1u << type)))
		type++;
	VkMemoryAllocateInfo mi = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type };
	TRY(vkAllocateMemory(d->device, &mi, NULL, &d->memory));
	TRY(vkBindBufferMemory(d->device, d->buffer, d->memory, 0));
	if (d->markers.name) {
		char name[32];
		snprintf(name, sizeof(name), "Marked Buffer %d", index);
		VkDebugMarkerObjectNameInfoEXT ni = {
			VK_STRUCTURE_TYPE_DEBUG_MARKER_OBJECT_NAME_INFO_EXT, NULL,
			VK_DEBUG_REPORT_OBJECT_TYPE_BUFFER_EXT, (uint64_t)d->buffer, name
		};
		TRY(d->markers.name(d->device, &ni));
		const uint32_t tag = 0x6372756d;
		VkDebugMarkerObjectTagInfoEXT ti = {
			VK_STRUCTURE_TYPE_DEBUG_MARKER_OBJECT_TAG_INFO_EXT, NULL,
			VK_DEBUG_REPORT_OBJECT_TYPE_BUFFER_EXT, (uint64_t)d->buffer, 1, sizeof(tag), &tag
		};
		TRY(d->markers.tag(d->device, &ti));
	}
	return 0;
}

static int run_frame(struct device *d, int index, int labels,
		     PFN_vkCmdBeginDebugUtilsLabelEXT begin_label,
		     PFN_vkCmdEndDebugUtilsLabelEXT end_label)
{
	char name[32];
	snprintf(name, sizeof(name), "Device %d work", index);
	VkDebugUtilsLabelEXT label = { VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, NULL, name,
				       { 0, 0, 0, 0 } };
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
	TRY(vkBeginCommandBuffer(d->cb, &bi));
	begin_label(d->cb, &label);
	if (d->markers.begin) {
		char marker[32];
		snprintf(marker, sizeof(marker), "Device %d marker", index);
		VkDebugMarkerMarkerInfoEXT mi = { VK_STRUCTURE_TYPE_DEBUG_MARKER_MARKER_INFO_EXT, NULL,
						  marker, { 0, 0, 0, 0 } };
		d->markers.begin(d->cb, &mi);
		vkCmdFillBuffer(d->cb, d->buffer, 0, VK_WHOLE_SIZE, (uint32_t)index);
		mi.pMarkerName = "Filled";
		d->markers.insert(d->cb, &mi);
		d->markers.end(d->cb);
	} else if (d->secondary) {
		char inner[32];
		snprintf(inner, sizeof(inner), "Device %d secondary", index);
		VkDebugUtilsLabelEXT sl = { VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, NULL, inner,
					    { 0, 0, 0, 0 } };
		VkCommandBufferInheritanceInfo ii = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
						      NULL, VK_NULL_HANDLE, 0, VK_NULL_HANDLE,
						      VK_FALSE, 0, 0 };
		VkCommandBufferBeginInfo si = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
						VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, &ii };
		TRY(vkBeginCommandBuffer(d->secondary, &si));
		begin_label(d->secondary, &sl);
		vkCmdFillBuffer(d->secondary, d->buffer, 0, VK_WHOLE_SIZE, (uint32_t)index);
		end_label(d->secondary);
		TRY(vkEndCommandBuffer(d->secondary));
		vkCmdExecuteCommands(d->cb, 1, &d->secondary);
	} else {
		vkCmdFillBuffer(d->cb, d->buffer, 0, VK_WHOLE_SIZE, (uint32_t)index);
	}
	for (int i = 0; i < labels; i++) {
		char pass[32];
		snprintf(pass, sizeof(pass), "Pass %d", i);
		VkDebugUtilsLabelEXT inner = { VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, NULL, pass,
					       { 0, 0, 0, 0 } };
		begin_label(d->cb, &inner);
		end_label(d->cb);
	}
	end_label(d->cb);
	TRY(vkEndCommandBuffer(d->cb));
	VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &d->cb, 0, NULL };
	TRY(vkQueueSubmit(d->queue, 1, &si, d->fence));
	TRY(vkWaitForFences(d->device, 1, &d->fence, VK_TRUE, UINT64_MAX));
	TRY(vkResetFences(d->device, 1, &d->fence));
	return 0;
}

int main(int argc, char **argv)
{
	int frames = 5;
	int validate = 0, cleanup = 1, labels = 0, duration = 0, markers = 0, secondary = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
			frames = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--validate") == 0) {
			validate = 1;
		} else if (strcmp(argv[i], "--markers") == 0) {
			markers = 1;
		} else if (strcmp(argv[i], "--secondary") == 0) {
			secondary = 1;
		} else if (strcmp(argv[i], "--no-cleanup") == 0) {
			cleanup = 0;
		} else if (strcmp(argv[i], "--labels") == 0 && i + 1 < argc) {
			labels = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--duration") == 0 && i + 1 < argc) {
			duration = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: two-devices [--frames N] [--duration MS] [--labels N] "
				"[--validate] [--no-cleanup] [--markers] [--secondary]\n");
			return 2;
		}
	}

	const char *layer = "VK_LAYER_KHRONOS_validation";
	const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
	VkDebugUtilsMessengerCreateInfoEXT mi = {
		VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT, NULL, 0,
		VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
		/* Not the loader's general messages, such as the one that
		 * says the crumbs layer is enabled by the environment. */
		VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		on_message, NULL
	};
	VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "two-devices", 1, NULL, 0,
				  VK_API_VERSION_1_1 };
	VkInstanceCreateInfo ii = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, validate ? &mi : NULL, 0,
				    &app, validate ? 1 : 0, &layer, 1, &ext };
	VkInstance instance;
	TRY(vkCreateInstance(&ii, NULL, &instance));
	VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
	PFN_vkCreateDebugUtilsMessengerEXT create_messenger = (PFN_vkCreateDebugUtilsMessengerEXT)
		vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT");
	if (validate && create_messenger)
		TRY(create_messenger(instance, &mi, NULL, &messenger));
	PFN_vkCmdBeginDebugUtilsLabelEXT begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)
		vkGetInstanceProcAddr(instance, "vkCmdBeginDebugUtilsLabelEXT");
	PFN_vkCmdEndDebugUtilsLabelEXT end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)
		vkGetInstanceProcAddr(instance, "vkCmdEndDebugUtilsLabelEXT");
	if (!begin_label || !end_label)
		return fail("vkGetInstanceProcAddr(vkCmdBeginDebugUtilsLabelEXT)", VK_ERROR_UNKNOWN);

	uint32_t count = 1;
	VkPhysicalDevice physical;
	VkResult er = vkEnumeratePhysicalDevices(instance, &count, &physical);
	if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || count == 0)
		return fail("vkEnumeratePhysicalDevices", er);
	VkQueueFamilyProperties families[16];
	uint32_t nf = 16;
	vkGetPhysicalDeviceQueueFamilyProperties(physical, &nf, families);
	uint32_t family = 0;
	while (family < nf && !(families[family].queueFlags & VK_QUEUE_TRANSFER_BIT) &&
	       !(families[family].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)))
		family++;
	if (family == nf)
		return fail("finding a queue family", VK_ERROR_FEATURE_NOT_PRESENT);

	if (markers) {
		int listed = lists_marker(physical);
		if (listed < 0)
			return fail("vkEnumerateDeviceExtensionProperties (a short array)", VK_INCOMPLETE);
		markers = listed;
		printf("two-devices: markers %s\n", markers ? "on" : "off (no VK_EXT_debug_marker)");
	}
	struct device devices[DEVICES];
	memset(devices, 0, sizeof(devices));
	for (int k = 0; k < DEVICES; k++)
		if (make_device(physical, family, markers, secondary, k, &devices[k]) != 0)
			return 1;
	double start = now_ms();
	for (int f = 0; f < frames || now_ms() - start < duration; f++)
		for (int k = 0; k < DEVICES; k++)
			if (run_frame(&devices[k], k, labels, begin_label, end_label) != 0)
				return 1;
	if (!cleanup)
		return messages ? 1 : 0;
	for (int k = 0; k < DEVICES; k++) {
		struct device *d = &devices[k];
		vkDeviceWaitIdle(d->device);
		vkDestroyBuffer(d->device, d->buffer, NULL);
		vkFreeMemory(d->device, d->memory, NULL);
		vkDestroyFence(d->device, d->fence, NULL);
		vkDestroyCommandPool(d->device, d->pool, NULL);
		vkDestroyDevice(d->device, NULL);
	}
	if (messenger) {
		PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
			(PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
				instance, "vkDestroyDebugUtilsMessengerEXT");
		destroy_messenger(instance, messenger, NULL);
	}
	vkDestroyInstance(instance, NULL);
	if (messages) {
		fprintf(stderr, "two-devices: %u validation messages\n", messages);
		return 1;
	}
	return 0;
}
