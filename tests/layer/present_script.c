/* SPDX-License-Identifier: MIT */
/*
 * present_script.c: a Vulkan layer to stack below the crumbs layer in
 * tests, in place of a display: it offers VK_KHR_present_id,
 * VK_KHR_present_wait and VK_GOOGLE_display_timing (which lavapipe on a
 * virtual X server has not), takes them out of the device's creation and
 * the presents it passes on, and says when each present was shown from a
 * script rather than a display:
 *   CRUMBS_TEST_PRESENT_OFFER      "wait" (present id and wait, with
 *                                  display timing for the refresh period
 *                                  alone: no past timings), "timing"
 *                                  (display timing alone), or "both"
 *                                  (the default)
 *   CRUMBS_TEST_PRESENT_REFRESH_NS the refresh period (default 50 ms)
 *   CRUMBS_TEST_PRESENT_SCRIPT     "N:K,N:K...": the Nth present (from 1)
 *                                  of a swapchain is shown K refresh
 *                                  periods after the one before it;
 *                                  every other one period after
 * With present wait offered, each present blocks until the one before it
 * is shown, as a FIFO swapchain with a queue of one image does, and
 * vkWaitForPresentKHR returns at its scripted time; display timing's past timings give the scripted times
 * exactly. One instance and one device at a time, as the tests
 * make.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#define EXPORT __attribute__((visibility("default")))
#define HISTORY 1024

static PFN_vkGetInstanceProcAddr next_gipa;
/* Asked of the next layer as the instance is created: asked later, the
 * loader answers with the top of the chain, which calls this layer. */
static PFN_vkEnumerateDeviceExtensionProperties next_enumerate;
static PFN_vkGetPhysicalDeviceFeatures2 next_features2;
static PFN_vkGetDeviceProcAddr next_gdpa;
static PFN_vkQueuePresentKHR next_present;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t shown_cond = PTHREAD_COND_INITIALIZER;
static bool offer_wait, offer_timing, past_timings;
static int64_t refresh_ns = 50000000;

/* Every present of the one swapchain followed: its id, display
 * timing's presentID, its scripted time. */
struct shown {
	uint64_t id;
	uint32_t timing_id;
	int64_t ns;
};
static struct shown history[HISTORY];
static uint32_t presents;          /* presents made */
static uint32_t timings_read;      /* of them, those past timings gave */
static int64_t last_shown;

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void sleep_until(int64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0)
		;
}

/* Refresh periods from present n - 1 to present n, from the script. */
static int64_t periods(uint32_t n)
{
	const char *s = getenv("CRUMBS_TEST_PRESENT_SCRIPT");
	while (s && *s) {
		char *end;
		unsigned long at = strtoul(s, &end, 10);
		if (*end != ':')
			break;
		unsigned long k = strtoul(end + 1, &end, 10);
		if (at == n)
			return (int64_t)k;
		s = *end == ',' ? end + 1 : "";
	}
	return 1;
}

static void read_settings(void)
{
	const char *offer = getenv("CRUMBS_TEST_PRESENT_OFFER");
	offer = offer ? offer : "both";
	offer_wait = strcmp(offer, "wait") == 0 || strcmp(offer, "both") == 0;
	offer_timing = true;
	past_timings = strcmp(offer, "timing") == 0 || strcmp(offer, "both") == 0;
	const char *r = getenv("CRUMBS_TEST_PRESENT_REFRESH_NS");
	if (r && atoll(r) > 0)
		refresh_ns = atoll(r);
}

static bool ours(const char *name)
{
	return (offer_wait && (strcmp(name, VK_KHR_PRESENT_ID_EXTENSION_NAME) == 0 ||
			       strcmp(name, VK_KHR_PRESENT_WAIT_EXTENSION_NAME) == 0)) ||
	       (offer_timing && strcmp(name, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME) == 0);
}

static void *next_link(const void *chain, VkStructureType type)
{
	for (const VkBaseInStructure *s = chain; s; s = s->pNext) {
		VkLayerInstanceCreateInfo *l = (VkLayerInstanceCreateInfo *)(uintptr_t)s;
		if (s->sType == type && l->function == VK_LAYER_LINK_INFO)
			return l;
	}
	return NULL;
}

/* Unlinks the structures of `type` from a chain, for the call below;
 * returns the one it took (one at most, as valid chains have). */
static VkBaseOutStructure *unlink_type(const void *head, VkStructureType type)
{
	for (VkBaseOutStructure *s = (VkBaseOutStructure *)(uintptr_t)head; s && s->pNext;
	     s = s->pNext) {
		if (s->pNext->sType == type) {
			VkBaseOutStructure *took = s->pNext;
			s->pNext = took->pNext;
			return took;
		}
	}
	return NULL;
}

/* Puts `took` back after the structure before it was. */
static void relink(VkBaseOutStructure *before, VkBaseOutStructure *took)
{
	if (!took)
		return;
	took->pNext = before->pNext;
	before->pNext = took;
}

static VKAPI_ATTR VkResult VKAPI_CALL script_CreateInstance(const VkInstanceCreateInfo *ci,
							    const VkAllocationCallbacks *alloc,
							    VkInstance *out)
{
	VkLayerInstanceCreateInfo *link =
		next_link(ci->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
	if (!link || !link->u.pLayerInfo)
		return VK_ERROR_INITIALIZATION_FAILED;
	PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	link->u.pLayerInfo = link->u.pLayerInfo->pNext;
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(VK_NULL_HANDLE, "vkCreateInstance");
	VkResult r = create ? create(ci, alloc, out) : VK_ERROR_INITIALIZATION_FAILED;
	if (r == VK_SUCCESS) {
		next_gipa = gipa;
		next_enumerate = (PFN_vkEnumerateDeviceExtensionProperties)gipa(
			*out, "vkEnumerateDeviceExtensionProperties");
		next_features2 = (PFN_vkGetPhysicalDeviceFeatures2)gipa(*out,
									"vkGetPhysicalDeviceFeatures2");
		if (!next_features2)
			next_features2 = (PFN_vkGetPhysicalDeviceFeatures2)gipa(
				*out, "vkGetPhysicalDeviceFeatures2KHR");
	}
	read_settings();
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL script_EnumerateDeviceExtensionProperties(
	VkPhysicalDevice physical, const char *layer, uint32_t *count, VkExtensionProperties *props)
{
	PFN_vkEnumerateDeviceExtensionProperties next = next_enumerate;
	if (layer)
		return next(physical, layer, count, props);
	static const VkExtensionProperties mine[] = {
		{ VK_KHR_PRESENT_ID_EXTENSION_NAME, 1 },
		{ VK_KHR_PRESENT_WAIT_EXTENSION_NAME, 1 },
		{ VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME, 1 },
	};
	uint32_t n = 0;
	VkResult r = next(physical, NULL, &n, NULL);
	if (r != VK_SUCCESS)
		return r;
	VkExtensionProperties *all = calloc(n + 3, sizeof(*all));
	if (!all)
		return VK_ERROR_OUT_OF_HOST_MEMORY;
	r = next(physical, NULL, &n, all);
	for (int i = 0; i < 3 && r == VK_SUCCESS; i++)
		if (ours(mine[i].extensionName))
			all[n++] = mine[i];
	if (r == VK_SUCCESS) {
		if (!props) {
			*count = n;
		} else {
			uint32_t k = *count < n ? *count : n;
			memcpy(props, all, k * sizeof(*all));
			*count = k;
			r = k < n ? VK_INCOMPLETE : VK_SUCCESS;
		}
	}
	free(all);
	return r;
}

static VKAPI_ATTR void VKAPI_CALL script_GetPhysicalDeviceFeatures2(VkPhysicalDevice physical,
								    VkPhysicalDeviceFeatures2 *f)
{
	VkBaseOutStructure *head = (VkBaseOutStructure *)f;
	VkBaseOutStructure *id = unlink_type(head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR);
	VkBaseOutStructure *wait =
		unlink_type(head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR);
	next_features2(physical, f);
	relink(head, wait);
	relink(head, id);
	if (id)
		((VkPhysicalDevicePresentIdFeaturesKHR *)(void *)id)->presentId = offer_wait;
	if (wait)
		((VkPhysicalDevicePresentWaitFeaturesKHR *)(void *)wait)->presentWait = offer_wait;
}

static VKAPI_ATTR VkResult VKAPI_CALL script_CreateDevice(VkPhysicalDevice physical,
							  const VkDeviceCreateInfo *ci,
							  const VkAllocationCallbacks *alloc,
							  VkDevice *out)
{
	VkLayerDeviceCreateInfo *link =
		next_link(ci->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
	if (!link || !link->u.pLayerInfo)
		return VK_ERROR_INITIALIZATION_FAILED;
	PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
	link->u.pLayerInfo = link->u.pLayerInfo->pNext;
	PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(VK_NULL_HANDLE, "vkCreateDevice");
	/* The driver has none of the offered extensions and features: they
	 * go no further. */
	VkDeviceCreateInfo mine = *ci;
	const char **names = calloc(ci->enabledExtensionCount + 1, sizeof(*names));
	if (!names || !create)
		return VK_ERROR_INITIALIZATION_FAILED;
	mine.enabledExtensionCount = 0;
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
		if (!ours(ci->ppEnabledExtensionNames[i]))
			names[mine.enabledExtensionCount++] = ci->ppEnabledExtensionNames[i];
	mine.ppEnabledExtensionNames = names;
	VkBaseOutStructure head = { .pNext = (VkBaseOutStructure *)(uintptr_t)ci->pNext };
	VkBaseOutStructure *id = unlink_type(&head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR);
	VkBaseOutStructure *wait =
		unlink_type(&head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR);
	mine.pNext = head.pNext;
	VkResult r = create(physical, &mine, alloc, out);
	/* The chain given back as it was. */
	head.pNext = (VkBaseOutStructure *)(uintptr_t)mine.pNext;
	relink(&head, wait);
	relink(&head, id);
	free(names);
	if (r == VK_SUCCESS) {
		next_gdpa = gdpa;
		next_present = (PFN_vkQueuePresentKHR)gdpa(*out, "vkQueuePresentKHR");
		fprintf(stderr, "present script layer: present wait %s, display timing %s\n",
			id && wait ? "enabled" : "not enabled",
			ci->enabledExtensionCount != mine.enabledExtensionCount ? "maybe" : "no");
	}
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL script_QueuePresentKHR(VkQueue queue,
							     const VkPresentInfoKHR *info)
{
	const VkPresentIdKHR *ids = NULL;
	const VkPresentTimesInfoGOOGLE *times = NULL;
	for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext) {
		if (s->sType == VK_STRUCTURE_TYPE_PRESENT_ID_KHR)
			ids = (const void *)s;
		if (s->sType == VK_STRUCTURE_TYPE_PRESENT_TIMES_INFO_GOOGLE)
			times = (const void *)s;
	}
	VkPresentInfoKHR plain = *info;
	VkBaseOutStructure head = { .pNext = (VkBaseOutStructure *)(uintptr_t)info->pNext };
	VkBaseOutStructure *took_ids = unlink_type(&head, VK_STRUCTURE_TYPE_PRESENT_ID_KHR);
	VkBaseOutStructure *took_times = unlink_type(&head, VK_STRUCTURE_TYPE_PRESENT_TIMES_INFO_GOOGLE);
	plain.pNext = head.pNext;
	VkResult r = next_present(queue, &plain);
	relink(&head, took_times);
	relink(&head, took_ids);

	int64_t now = now_ns();
	pthread_mutex_lock(&lock);
	uint32_t n = ++presents;
	int64_t before = n == 1 ? 0 : last_shown;
	int64_t shown = n == 1 ? now + refresh_ns : last_shown + periods(n) * refresh_ns;
	last_shown = shown;
	history[n % HISTORY] = (struct shown){
		.id = ids && ids->pPresentIds && ids->swapchainCount ? ids->pPresentIds[0] : 0,
		.timing_id = times && times->pTimes && times->swapchainCount ? times->pTimes[0].presentID : 0,
		.ns = shown };
	pthread_cond_broadcast(&shown_cond);
	pthread_mutex_unlock(&lock);
	/* A queue of one image: the present returns once the one before it
	 * is shown, so that a wait for this one begins before it is. */
	if (offer_wait && before)
		sleep_until(before);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL script_WaitForPresentKHR(VkDevice device,
							       VkSwapchainKHR swapchain,
							       uint64_t id, uint64_t timeout)
{
	(void)device;
	(void)swapchain;
	int64_t deadline = now_ns() + (int64_t)(timeout > 1000000000ull ? 1000000000ull : timeout);
	pthread_mutex_lock(&lock);
	for (;;) {
		for (uint32_t k = 0; k < HISTORY && k < presents; k++) {
			const struct shown *s = &history[(presents - k) % HISTORY];
			if (s->id == id) {
				int64_t at = s->ns;
				pthread_mutex_unlock(&lock);
				sleep_until(at);
				return VK_SUCCESS;
			}
		}
		if (now_ns() >= deadline)
			break;
		struct timespec t = { (time_t)(deadline / 1000000000), (long)(deadline % 1000000000) };
		pthread_cond_timedwait(&shown_cond, &lock, &t); /* CLOCK_REALTIME: a bound alone */
		if (now_ns() >= deadline)
			break;
	}
	pthread_mutex_unlock(&lock);
	return VK_TIMEOUT;
}

static VKAPI_ATTR VkResult VKAPI_CALL script_GetRefreshCycleDurationGOOGLE(
	VkDevice device, VkSwapchainKHR swapchain, VkRefreshCycleDurationGOOGLE *out)
{
	(void)device;
	(void)swapchain;
	out->refreshDuration = (uint64_t)refresh_ns;
	return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL script_GetPastPresentationTimingGOOGLE(
	VkDevice device, VkSwapchainKHR swapchain, uint32_t *count, VkPastPresentationTimingGOOGLE *out)
{
	(void)device;
	(void)swapchain;
	pthread_mutex_lock(&lock);
	if (!past_timings)
		timings_read = presents;
	uint32_t n = presents - timings_read;
	if (!out) {
		*count = n;
		pthread_mutex_unlock(&lock);
		return VK_SUCCESS;
	}
	uint32_t k = *count < n ? *count : n;
	for (uint32_t i = 0; i < k; i++) {
		const struct shown *s = &history[(timings_read + 1 + i) % HISTORY];
		out[i] = (VkPastPresentationTimingGOOGLE){ .presentID = s->timing_id,
							   .actualPresentTime = (uint64_t)s->ns,
							   .earliestPresentTime = (uint64_t)s->ns };
	}
	timings_read += k;
	*count = k;
	pthread_mutex_unlock(&lock);
	return k < n ? VK_INCOMPLETE : VK_SUCCESS;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL script_GetDeviceProcAddr(VkDevice device,
									 const char *name)
{
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)script_GetDeviceProcAddr;
	if (strcmp(name, "vkQueuePresentKHR") == 0)
		return (PFN_vkVoidFunction)script_QueuePresentKHR;
	if (offer_wait && strcmp(name, "vkWaitForPresentKHR") == 0)
		return (PFN_vkVoidFunction)script_WaitForPresentKHR;
	if (offer_timing && strcmp(name, "vkGetRefreshCycleDurationGOOGLE") == 0)
		return (PFN_vkVoidFunction)script_GetRefreshCycleDurationGOOGLE;
	if (offer_timing && strcmp(name, "vkGetPastPresentationTimingGOOGLE") == 0)
		return (PFN_vkVoidFunction)script_GetPastPresentationTimingGOOGLE;
	return next_gdpa ? next_gdpa(device, name) : NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL script_GetInstanceProcAddr(VkInstance instance,
									   const char *name)
{
	if (strcmp(name, "vkGetInstanceProcAddr") == 0)
		return (PFN_vkVoidFunction)script_GetInstanceProcAddr;
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)script_GetDeviceProcAddr;
	if (strcmp(name, "vkCreateInstance") == 0)
		return (PFN_vkVoidFunction)script_CreateInstance;
	if (strcmp(name, "vkCreateDevice") == 0)
		return (PFN_vkVoidFunction)script_CreateDevice;
	if (strcmp(name, "vkEnumerateDeviceExtensionProperties") == 0)
		return (PFN_vkVoidFunction)script_EnumerateDeviceExtensionProperties;
	if (strcmp(name, "vkGetPhysicalDeviceFeatures2") == 0 ||
	    strcmp(name, "vkGetPhysicalDeviceFeatures2KHR") == 0)
		return (PFN_vkVoidFunction)script_GetPhysicalDeviceFeatures2;
	if (strcmp(name, "vkQueuePresentKHR") == 0 || strcmp(name, "vkWaitForPresentKHR") == 0 ||
	    strcmp(name, "vkGetRefreshCycleDurationGOOGLE") == 0 ||
	    strcmp(name, "vkGetPastPresentationTimingGOOGLE") == 0)
		return script_GetDeviceProcAddr(VK_NULL_HANDLE, name);
	return next_gipa ? next_gipa(instance, name) : NULL;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(
	VkNegotiateLayerInterface *v)
{
	if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT || v->loaderLayerInterfaceVersion < 2)
		return VK_ERROR_INITIALIZATION_FAILED;
	v->loaderLayerInterfaceVersion = 2;
	v->pfnGetInstanceProcAddr = script_GetInstanceProcAddr;
	v->pfnGetDeviceProcAddr = script_GetDeviceProcAddr;
	v->pfnGetPhysicalDeviceProcAddr = NULL;
	return VK_SUCCESS;
}
