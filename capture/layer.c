/*
 * layer.c: VK_LAYER_CRUMBS_capture, the recorder core as a Vulkan layer
 * for programs that were not changed for crumbs. Debug labels (debug utils
 * and debug marker) become scopes; in a capture frame render passes become
 * events and draws, dispatches, copies, blits, clears and resolves leaf
 * events with their counts. Frames end at vkQueuePresentKHR, or, on a
 * device that has never presented, at each submission that signals a
 * fence. See capture/LAYER.md.
 */
#include "capture_internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYER_NAME "VK_LAYER_CRUMBS_capture"
#define MAX_INSTANCES 16
#define MAX_DEVICES 16
#define EXPORT __attribute__((visibility("default")))

static void *key_of(const void *dispatchable)
{
	return *(void *const *)dispatchable;
}

/* ------------------------------------------------------------------------ */
/* A map from 64-bit handles to small values, under a lock                  */
/* ------------------------------------------------------------------------ */

struct handle_map {
	pthread_mutex_t lock;
	uint64_t *keys;
	void **values;
	uint32_t cap;
	uint32_t count;
};

static uint32_t slot_of(uint64_t key, uint32_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (uint32_t)key & (cap - 1);
}

static bool map_grow(struct handle_map *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 256;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	void **values = calloc(cap, sizeof(*values));
	if (!keys || !values) {
		free(keys);
		free(values);
		return false;
	}
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		uint32_t k = slot_of(m->keys[i], cap);
		while (keys[k])
			k = (k + 1) & (cap - 1);
		keys[k] = m->keys[i];
		values[k] = m->values[i];
	}
	free(m->keys);
	free(m->values);
	m->keys = keys;
	m->values = values;
	m->cap = cap;
	return true;
}

/* Sets key to value (entries are overwritten, never removed: a handle
 * that comes back is set again when it does). */
static void hmap_set(struct handle_map *m, uint64_t key, void *value)
{
	pthread_mutex_lock(&m->lock);
	if ((m->count + 1) * 2 > m->cap && !map_grow(m)) {
		pthread_mutex_unlock(&m->lock);
		return;
	}
	uint32_t k = slot_of(key, m->cap);
	while (m->keys[k] && m->keys[k] != key)
		k = (k + 1) & (m->cap - 1);
	if (!m->keys[k])
		m->count++;
	m->keys[k] = key;
	m->values[k] = value;
	pthread_mutex_unlock(&m->lock);
}

static void *hmap_get(struct handle_map *m, uint64_t key)
{
	void *value = NULL;
	pthread_mutex_lock(&m->lock);
	if (m->cap) {
		uint32_t k = slot_of(key, m->cap);
		while (m->keys[k] && m->keys[k] != key)
			k = (k + 1) & (m->cap - 1);
		if (m->keys[k])
			value = m->values[k];
	}
	pthread_mutex_unlock(&m->lock);
	return value;
}

/* Calls fn on every value, under the map's lock. */
static void hmap_each(struct handle_map *m, void (*fn)(void *value, void *arg), void *arg)
{
	pthread_mutex_lock(&m->lock);
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			fn(m->values[i], arg);
	pthread_mutex_unlock(&m->lock);
}

static void hmap_free(struct handle_map *m, bool free_values)
{
	if (free_values)
		for (uint32_t i = 0; i < m->cap; i++)
			if (m->keys[i])
				free(m->values[i]);
	free(m->keys);
	free(m->values);
	pthread_mutex_destroy(&m->lock);
}

/* ------------------------------------------------------------------------ */
/* Instances and devices                                                    */
/* ------------------------------------------------------------------------ */

struct layer_instance {
	void *key;
	VkInstance instance;
	PFN_vkGetInstanceProcAddr gipa;
	PFN_vkDestroyInstance DestroyInstance;
	PFN_vkCreateDevice CreateDevice;
	PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties;
	PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
	PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties;
};

/* A command buffer the layer has seen allocated. */
struct cb_state {
	uint32_t family;
	VkCommandPool pool;
	bool secondary;
	crumbs_cmd *cmd;        /* while recorded */
	bool capturing;         /* cmd records at full detail */
	crumbs_cmd *standing;   /* its standing recording (capture/standing.c) */
	uint64_t standing_frame; /* the frame it was begun in */
	bool standing_reused;   /* recorded without ONE_TIME_SUBMIT */
	uint32_t standing_hint; /* the slots the last one used */
	VkPrimitiveTopology topology;
	uint32_t view_mask;     /* of the render pass being recorded */
};

struct next_fns {
	PFN_vkGetDeviceProcAddr GetDeviceProcAddr;
	PFN_vkDestroyDevice DestroyDevice;
	PFN_vkGetDeviceQueue GetDeviceQueue;
	PFN_vkCreateCommandPool CreateCommandPool;
	PFN_vkAllocateCommandBuffers AllocateCommandBuffers;
	PFN_vkFreeCommandBuffers FreeCommandBuffers;
	PFN_vkResetCommandBuffer ResetCommandBuffer;
	PFN_vkResetCommandPool ResetCommandPool;
	PFN_vkDestroyCommandPool DestroyCommandPool;
	PFN_vkBeginCommandBuffer BeginCommandBuffer;
	PFN_vkEndCommandBuffer EndCommandBuffer;
	PFN_vkCreateGraphicsPipelines CreateGraphicsPipelines;
	PFN_vkCreateRenderPass CreateRenderPass;
	PFN_vkCreateRenderPass2 CreateRenderPass2;
	PFN_vkCreateRenderPass2 CreateRenderPass2KHR;
	PFN_vkCmdBindPipeline CmdBindPipeline;
	PFN_vkCmdSetPrimitiveTopology CmdSetPrimitiveTopology;
	PFN_vkCmdSetPrimitiveTopology CmdSetPrimitiveTopologyEXT;
	PFN_vkCmdBeginDebugUtilsLabelEXT CmdBeginDebugUtilsLabelEXT;
	PFN_vkCmdEndDebugUtilsLabelEXT CmdEndDebugUtilsLabelEXT;
	PFN_vkCmdInsertDebugUtilsLabelEXT CmdInsertDebugUtilsLabelEXT;
	PFN_vkQueueBeginDebugUtilsLabelEXT QueueBeginDebugUtilsLabelEXT;
	PFN_vkQueueEndDebugUtilsLabelEXT QueueEndDebugUtilsLabelEXT;
	PFN_vkQueueInsertDebugUtilsLabelEXT QueueInsertDebugUtilsLabelEXT;
	PFN_vkCmdDebugMarkerBeginEXT CmdDebugMarkerBeginEXT;
	PFN_vkCmdDebugMarkerEndEXT CmdDebugMarkerEndEXT;
	PFN_vkCmdDebugMarkerInsertEXT CmdDebugMarkerInsertEXT;
	PFN_vkCmdBeginRenderPass CmdBeginRenderPass;
	PFN_vkCmdBeginRenderPass2 CmdBeginRenderPass2;
	PFN_vkCmdBeginRenderPass2 CmdBeginRenderPass2KHR;
	PFN_vkCmdEndRenderPass CmdEndRenderPass;
	PFN_vkCmdEndRenderPass2 CmdEndRenderPass2;
	PFN_vkCmdEndRenderPass2 CmdEndRenderPass2KHR;
	PFN_vkCmdBeginRendering CmdBeginRendering;
	PFN_vkCmdBeginRendering CmdBeginRenderingKHR;
	PFN_vkCmdEndRendering CmdEndRendering;
	PFN_vkCmdEndRendering CmdEndRenderingKHR;
	PFN_vkCmdDraw CmdDraw;
	PFN_vkCmdDrawIndexed CmdDrawIndexed;
	PFN_vkCmdDrawIndirect CmdDrawIndirect;
	PFN_vkCmdDrawIndexedIndirect CmdDrawIndexedIndirect;
	PFN_vkCmdDrawIndirectCount CmdDrawIndirectCount;
	PFN_vkCmdDrawIndirectCount CmdDrawIndirectCountKHR;
	PFN_vkCmdDrawIndexedIndirectCount CmdDrawIndexedIndirectCount;
	PFN_vkCmdDrawIndexedIndirectCount CmdDrawIndexedIndirectCountKHR;
	PFN_vkCmdDrawMultiEXT CmdDrawMultiEXT;
	PFN_vkCmdDrawMultiIndexedEXT CmdDrawMultiIndexedEXT;
	PFN_vkCmdDispatch CmdDispatch;
	PFN_vkCmdDispatchBase CmdDispatchBase;
	PFN_vkCmdDispatchIndirect CmdDispatchIndirect;
	PFN_vkCmdCopyBuffer CmdCopyBuffer;
	PFN_vkCmdCopyImage CmdCopyImage;
	PFN_vkCmdCopyBufferToImage CmdCopyBufferToImage;
	PFN_vkCmdCopyImageToBuffer CmdCopyImageToBuffer;
	PFN_vkCmdCopyBuffer2 CmdCopyBuffer2;
	PFN_vkCmdCopyImage2 CmdCopyImage2;
	PFN_vkCmdCopyBufferToImage2 CmdCopyBufferToImage2;
	PFN_vkCmdCopyImageToBuffer2 CmdCopyImageToBuffer2;
	PFN_vkCmdUpdateBuffer CmdUpdateBuffer;
	PFN_vkCmdFillBuffer CmdFillBuffer;
	PFN_vkCmdBlitImage CmdBlitImage;
	PFN_vkCmdBlitImage2 CmdBlitImage2;
	PFN_vkCmdClearColorImage CmdClearColorImage;
	PFN_vkCmdClearDepthStencilImage CmdClearDepthStencilImage;
	PFN_vkCmdClearAttachments CmdClearAttachments;
	PFN_vkCmdResolveImage CmdResolveImage;
	PFN_vkCmdResolveImage2 CmdResolveImage2;
	PFN_vkCmdExecuteCommands CmdExecuteCommands;
	PFN_vkQueueSubmit QueueSubmit;
	PFN_vkQueueSubmit2 QueueSubmit2;
	PFN_vkQueueSubmit2 QueueSubmit2KHR;
	PFN_vkQueuePresentKHR QueuePresentKHR;
	PFN_vkSignalSemaphore SignalSemaphore;
	PFN_vkSignalSemaphore SignalSemaphoreKHR;
};

struct layer_queue {
	VkQueue queue;
	uint32_t family;
};

struct layer_device {
	void *key;
	VkDevice device;
	struct layer_instance *inst;
	struct next_fns next;
	crumbs_context *ctx;            /* NULL: unprofiled */
	struct layer_queue *queues;
	uint32_t queue_count;
	struct handle_map pools;        /* VkCommandPool -> family + 1 */
	struct handle_map cbs;          /* VkCommandBuffer -> struct cb_state */
	struct handle_map pipelines;    /* VkPipeline -> topology + 1 */
	struct handle_map multiview;    /* VkRenderPass -> 1 when it uses multiview */
	_Atomic uint32_t recording;     /* command buffers recorded at full detail */
	_Atomic bool presented;
	_Atomic uint64_t frames;        /* frames ended */
	bool standing;                  /* standing recordings can be made */
	_Atomic bool standing_off;      /* the program records every frame */
	_Atomic uint32_t standing_live; /* standing recordings held */
	_Atomic uint32_t rerecorded;    /* of them, replaced within a few frames */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct layer_instance *layer_instances[MAX_INSTANCES];
static struct layer_device *_Atomic layer_devices[MAX_DEVICES];
static bool trigger_taken; /* one context per process listens */

static struct layer_instance *instance_of(const void *dispatchable)
{
	void *key = key_of(dispatchable);
	pthread_mutex_lock(&registry_lock);
	struct layer_instance *found = NULL;
	for (int i = 0; i < MAX_INSTANCES && !found; i++)
		if (layer_instances[i] && layer_instances[i]->key == key)
			found = layer_instances[i];
	pthread_mutex_unlock(&registry_lock);
	return found;
}

/* Lock-free: devices are few and change only at creation and destruction,
 * which the program does not overlap with their use. */
static struct layer_device *device_of(const void *dispatchable)
{
	void *key = key_of(dispatchable);
	for (int i = 0; i < MAX_DEVICES; i++) {
		struct layer_device *d = atomic_load_explicit(&layer_devices[i], memory_order_acquire);
		if (d && d->key == key)
			return d;
	}
	return NULL;
}

static void layer_log(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user;
	const char *quiet = getenv("CRUMBS_LAYER_QUIET");
	if (quiet && *quiet && *quiet != '0' && level == CRUMBS_LOG_INFO)
		return;
	fprintf(stderr, "%s%s\n", strchr(message, '\n') ? "" : "crumbs: ", message);
	fflush(stderr);
}

__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	layer_log(NULL, CRUMBS_LOG_WARNING, buf);
}

/* ------------------------------------------------------------------------ */
/* Instance                                                                 */
/* ------------------------------------------------------------------------ */

static VkLayerInstanceCreateInfo *instance_link(const VkInstanceCreateInfo *ci)
{
	for (const VkBaseInStructure *s = ci->pNext; s; s = s->pNext) {
		VkLayerInstanceCreateInfo *l = (VkLayerInstanceCreateInfo *)(uintptr_t)s;
		if (s->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO &&
		    l->function == VK_LAYER_LINK_INFO)
			return l;
	}
	return NULL;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateInstance(const VkInstanceCreateInfo *ci,
							    const VkAllocationCallbacks *alloc,
							    VkInstance *out)
{
	VkLayerInstanceCreateInfo *link = instance_link(ci);
	if (!link || !link->u.pLayerInfo)
		return VK_ERROR_INITIALIZATION_FAILED;
	PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	link->u.pLayerInfo = link->u.pLayerInfo->pNext;
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(VK_NULL_HANDLE, "vkCreateInstance");
	if (!create)
		return VK_ERROR_INITIALIZATION_FAILED;
	VkResult r = create(ci, alloc, out);
	if (r != VK_SUCCESS)
		return r;

	struct layer_instance *li = calloc(1, sizeof(*li));
	if (li) {
		li->key = key_of(*out);
		li->instance = *out;
		li->gipa = gipa;
		li->DestroyInstance = (PFN_vkDestroyInstance)gipa(*out, "vkDestroyInstance");
		li->CreateDevice = (PFN_vkCreateDevice)gipa(*out, "vkCreateDevice");
		li->EnumerateDeviceExtensionProperties = (PFN_vkEnumerateDeviceExtensionProperties)
			gipa(*out, "vkEnumerateDeviceExtensionProperties");
		li->GetPhysicalDeviceQueueFamilyProperties = (PFN_vkGetPhysicalDeviceQueueFamilyProperties)
			gipa(*out, "vkGetPhysicalDeviceQueueFamilyProperties");
		li->GetPhysicalDeviceProperties = (PFN_vkGetPhysicalDeviceProperties)
			gipa(*out, "vkGetPhysicalDeviceProperties");
	}
	pthread_mutex_lock(&registry_lock);
	int i = 0;
	while (li && i < MAX_INSTANCES && layer_instances[i])
		i++;
	if (li && i < MAX_INSTANCES)
		layer_instances[i] = li;
	pthread_mutex_unlock(&registry_lock);
	if (!li || i == MAX_INSTANCES) {
		/* Without its record the layer cannot even pass calls on. */
		free(li);
		PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance)gipa(*out, "vkDestroyInstance");
		if (destroy)
			destroy(*out, alloc);
		say("too many Vulkan instances (at most %d)", MAX_INSTANCES);
		return VK_ERROR_INITIALIZATION_FAILED;
	}
	return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL layer_DestroyInstance(VkInstance instance,
							const VkAllocationCallbacks *alloc)
{
	if (!instance)
		return;
	struct layer_instance *li = instance_of(instance);
	if (!li)
		return;
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < MAX_INSTANCES; i++)
		if (layer_instances[i] == li)
			layer_instances[i] = NULL;
	pthread_mutex_unlock(&registry_lock);
	li->DestroyInstance(instance, alloc);
	free(li);
}

/* ------------------------------------------------------------------------ */
/* Device                                                                   */
/* ------------------------------------------------------------------------ */

static VkLayerDeviceCreateInfo *device_link(const VkDeviceCreateInfo *ci, VkLayerFunction f)
{
	for (const VkBaseInStructure *s = ci->pNext; s; s = s->pNext) {
		VkLayerDeviceCreateInfo *l = (VkLayerDeviceCreateInfo *)(uintptr_t)s;
		if (s->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && l->function == f)
			return l;
	}
	return NULL;
}

static bool has_extension(const VkExtensionProperties *props, uint32_t count, const char *name)
{
	for (uint32_t i = 0; i < count; i++)
		if (strcmp(props[i].extensionName, name) == 0)
			return true;
	return false;
}

static bool enabled(const VkDeviceCreateInfo *ci, const char *name)
{
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
		if (strcmp(ci->ppEnabledExtensionNames[i], name) == 0)
			return true;
	return false;
}

/* Whether the program enabled hostQueryReset. */
static bool host_reset_enabled(const VkDeviceCreateInfo *ci)
{
	for (const VkBaseInStructure *s = ci->pNext; s; s = s->pNext) {
		if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES &&
		    ((const VkPhysicalDeviceHostQueryResetFeatures *)(const void *)s)->hostQueryReset)
			return true;
		if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES &&
		    ((const VkPhysicalDeviceVulkan12Features *)(const void *)s)->hostQueryReset)
			return true;
	}
	return false;
}

#define NEXT(field, name) \
	(d->next.field = (__typeof__(d->next.field))d->next.GetDeviceProcAddr(d->device, name))

static void load_next(struct layer_device *d)
{
	NEXT(DestroyDevice, "vkDestroyDevice");
	NEXT(GetDeviceQueue, "vkGetDeviceQueue");
	NEXT(CreateCommandPool, "vkCreateCommandPool");
	NEXT(AllocateCommandBuffers, "vkAllocateCommandBuffers");
	NEXT(FreeCommandBuffers, "vkFreeCommandBuffers");
	NEXT(ResetCommandBuffer, "vkResetCommandBuffer");
	NEXT(ResetCommandPool, "vkResetCommandPool");
	NEXT(DestroyCommandPool, "vkDestroyCommandPool");
	NEXT(BeginCommandBuffer, "vkBeginCommandBuffer");
	NEXT(EndCommandBuffer, "vkEndCommandBuffer");
	NEXT(CreateGraphicsPipelines, "vkCreateGraphicsPipelines");
	NEXT(CreateRenderPass, "vkCreateRenderPass");
	NEXT(CreateRenderPass2, "vkCreateRenderPass2");
	NEXT(CreateRenderPass2KHR, "vkCreateRenderPass2KHR");
	NEXT(CmdBindPipeline, "vkCmdBindPipeline");
	NEXT(CmdSetPrimitiveTopology, "vkCmdSetPrimitiveTopology");
	NEXT(CmdSetPrimitiveTopologyEXT, "vkCmdSetPrimitiveTopologyEXT");
	NEXT(CmdBeginDebugUtilsLabelEXT, "vkCmdBeginDebugUtilsLabelEXT");
	NEXT(CmdEndDebugUtilsLabelEXT, "vkCmdEndDebugUtilsLabelEXT");
	NEXT(CmdInsertDebugUtilsLabelEXT, "vkCmdInsertDebugUtilsLabelEXT");
	NEXT(QueueBeginDebugUtilsLabelEXT, "vkQueueBeginDebugUtilsLabelEXT");
	NEXT(QueueEndDebugUtilsLabelEXT, "vkQueueEndDebugUtilsLabelEXT");
	NEXT(QueueInsertDebugUtilsLabelEXT, "vkQueueInsertDebugUtilsLabelEXT");
	NEXT(CmdDebugMarkerBeginEXT, "vkCmdDebugMarkerBeginEXT");
	NEXT(CmdDebugMarkerEndEXT, "vkCmdDebugMarkerEndEXT");
	NEXT(CmdDebugMarkerInsertEXT, "vkCmdDebugMarkerInsertEXT");
	NEXT(CmdBeginRenderPass, "vkCmdBeginRenderPass");
	NEXT(CmdBeginRenderPass2, "vkCmdBeginRenderPass2");
	NEXT(CmdBeginRenderPass2KHR, "vkCmdBeginRenderPass2KHR");
	NEXT(CmdEndRenderPass, "vkCmdEndRenderPass");
	NEXT(CmdEndRenderPass2, "vkCmdEndRenderPass2");
	NEXT(CmdEndRenderPass2KHR, "vkCmdEndRenderPass2KHR");
	NEXT(CmdBeginRendering, "vkCmdBeginRendering");
	NEXT(CmdBeginRenderingKHR, "vkCmdBeginRenderingKHR");
	NEXT(CmdEndRendering, "vkCmdEndRendering");
	NEXT(CmdEndRenderingKHR, "vkCmdEndRenderingKHR");
	NEXT(CmdDraw, "vkCmdDraw");
	NEXT(CmdDrawIndexed, "vkCmdDrawIndexed");
	NEXT(CmdDrawIndirect, "vkCmdDrawIndirect");
	NEXT(CmdDrawIndexedIndirect, "vkCmdDrawIndexedIndirect");
	NEXT(CmdDrawIndirectCount, "vkCmdDrawIndirectCount");
	NEXT(CmdDrawIndirectCountKHR, "vkCmdDrawIndirectCountKHR");
	NEXT(CmdDrawIndexedIndirectCount, "vkCmdDrawIndexedIndirectCount");
	NEXT(CmdDrawIndexedIndirectCountKHR, "vkCmdDrawIndexedIndirectCountKHR");
	NEXT(CmdDrawMultiEXT, "vkCmdDrawMultiEXT");
	NEXT(CmdDrawMultiIndexedEXT, "vkCmdDrawMultiIndexedEXT");
	NEXT(CmdDispatch, "vkCmdDispatch");
	NEXT(CmdDispatchBase, "vkCmdDispatchBase");
	NEXT(CmdDispatchIndirect, "vkCmdDispatchIndirect");
	NEXT(CmdCopyBuffer, "vkCmdCopyBuffer");
	NEXT(CmdCopyImage, "vkCmdCopyImage");
	NEXT(CmdCopyBufferToImage, "vkCmdCopyBufferToImage");
	NEXT(CmdCopyImageToBuffer, "vkCmdCopyImageToBuffer");
	NEXT(CmdCopyBuffer2, "vkCmdCopyBuffer2");
	NEXT(CmdCopyImage2, "vkCmdCopyImage2");
	NEXT(CmdCopyBufferToImage2, "vkCmdCopyBufferToImage2");
	NEXT(CmdCopyImageToBuffer2, "vkCmdCopyImageToBuffer2");
	NEXT(CmdUpdateBuffer, "vkCmdUpdateBuffer");
	NEXT(CmdFillBuffer, "vkCmdFillBuffer");
	NEXT(CmdBlitImage, "vkCmdBlitImage");
	NEXT(CmdBlitImage2, "vkCmdBlitImage2");
	NEXT(CmdClearColorImage, "vkCmdClearColorImage");
	NEXT(CmdClearDepthStencilImage, "vkCmdClearDepthStencilImage");
	NEXT(CmdClearAttachments, "vkCmdClearAttachments");
	NEXT(CmdResolveImage, "vkCmdResolveImage");
	NEXT(CmdResolveImage2, "vkCmdResolveImage2");
	NEXT(CmdExecuteCommands, "vkCmdExecuteCommands");
	NEXT(QueueSubmit, "vkQueueSubmit");
	NEXT(QueueSubmit2, "vkQueueSubmit2");
	NEXT(QueueSubmit2KHR, "vkQueueSubmit2KHR");
	NEXT(QueuePresentKHR, "vkQueuePresentKHR");
	NEXT(SignalSemaphore, "vkSignalSemaphore");
	NEXT(SignalSemaphoreKHR, "vkSignalSemaphoreKHR");
}

/* The standing recording of a command buffer (capture/standing.c). */
static struct crumbs_cmd *standing_of(void *user, VkCommandBuffer cb)
{
	struct layer_device *d = user;
	struct cb_state *s = hmap_get(&d->cbs, (uint64_t)(uintptr_t)cb);
	return s ? s->standing : NULL;
}

/* The recorder for a new device: every queue the program created. The
 * `ordinal`-th of the devices alive at once writes its captures under the
 * program's name with "-deviceN" after it, so that devices capturing the
 * same frame do not write the same file. */
static void profile_device(struct layer_device *d, VkPhysicalDevice physical,
			   const VkDeviceCreateInfo *ci, uint32_t features,
			   PFN_vkSetDeviceLoaderData set_loader_data, int ordinal)
{
	uint32_t total = 0;
	for (uint32_t i = 0; i < ci->queueCreateInfoCount; i++)
		total += ci->pQueueCreateInfos[i].queueCount;
	d->queues = calloc(total ? total : 1, sizeof(*d->queues));
	struct crumbs_vk_queue *cq = calloc(total ? total : 1, sizeof(*cq));
	if (!d->queues || !cq) {
		free(cq);
		say("out of memory; the device runs unprofiled");
		return;
	}
	for (uint32_t i = 0; i < ci->queueCreateInfoCount; i++) {
		const VkDeviceQueueCreateInfo *qi = &ci->pQueueCreateInfos[i];
		if (qi->flags) /* protected queues come from vkGetDeviceQueue2 */
			continue;
		for (uint32_t k = 0; k < qi->queueCount; k++) {
			VkQueue q = VK_NULL_HANDLE;
			d->next.GetDeviceQueue(d->device, qi->queueFamilyIndex, k, &q);
			if (!q)
				continue;
			set_loader_data(d->device, q);
			d->queues[d->queue_count] = (struct layer_queue){ q, qi->queueFamilyIndex };
			cq[d->queue_count] = (struct crumbs_vk_queue){ q, 0, qi->queueFamilyIndex, k };
			d->queue_count++;
		}
	}
	struct crumbs_vk_device dev = { physical, d->device, features };
	pthread_mutex_lock(&registry_lock);
	bool listen = !trigger_taken;
	trigger_taken = true;
	pthread_mutex_unlock(&registry_lock);
	struct crumbs_desc desc = {
		.instance = d->inst->instance,
		.get_instance_proc_addr = d->inst->gipa,
		.devices = &dev,
		.device_count = 1,
		.queues = cq,
		.queue_count = d->queue_count,
		.log = layer_log,
		.no_trigger = !listen,
	};
	char name[96];
	if (ordinal > 0) {
		char program[64];
		default_program_name(program, sizeof(program));
		snprintf(name, sizeof(name), "%s-device%d", program, ordinal);
		desc.program_name = name;
	}
	enum crumbs_result r = crumbs_create_layered(&desc, set_loader_data, d->next.GetDeviceProcAddr,
						       &d->ctx);
	free(cq);
	if (r != CRUMBS_OK) {
		d->ctx = NULL;
		say("cannot profile this device (%s); it runs unprofiled", crumbs_result_str(r));
		return;
	}
	/* CRUMBS_LAYER_STANDING=0: command buffers recorded once are not
	 * timed, and cost nothing outside captures (capture/LAYER.md). */
	const char *standing = getenv("CRUMBS_LAYER_STANDING");
	if (!standing || strcmp(standing, "0") != 0)
		d->standing = standing_setup(d->ctx, standing_of, d);
}

/* Whether the device is one the layer leaves alone; says why if so. */
static bool unprofilable(struct layer_instance *li, VkPhysicalDevice physical,
			 const VkDeviceCreateInfo *ci)
{
	VkPhysicalDeviceProperties props;
	VkQueueFamilyProperties families[64];
	uint32_t count = 64;
	char why[256];
	if (!li->GetPhysicalDeviceProperties || !li->GetPhysicalDeviceQueueFamilyProperties)
		return false; /* profile_device says what goes wrong */
	li->GetPhysicalDeviceProperties(physical, &props);
	li->GetPhysicalDeviceQueueFamilyProperties(physical, &count, families);
	if (!layer_unprofilable(ci, families, count, props.limits.timestampPeriod,
				getenv("CRUMBS_LAYER_SKIP"), why, sizeof(why)))
		return false;
	say("device '%s' runs unprofiled: %s", props.deviceName, why);
	return true;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateDevice(VkPhysicalDevice physical,
							  const VkDeviceCreateInfo *ci,
							  const VkAllocationCallbacks *alloc,
							  VkDevice *out)
{
	struct layer_instance *li = instance_of(physical);
	VkLayerDeviceCreateInfo *link = device_link(ci, VK_LAYER_LINK_INFO);
	VkLayerDeviceCreateInfo *data = device_link(ci, VK_LOADER_DATA_CALLBACK);
	if (!li || !link || !link->u.pLayerInfo || !data)
		return VK_ERROR_INITIALIZATION_FAILED;
	PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
	link->u.pLayerInfo = link->u.pLayerInfo->pNext;
	PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(li->instance, "vkCreateDevice");
	if (!create)
		return VK_ERROR_INITIALIZATION_FAILED;

	/* A device the layer cannot profile is created as the program asked
	 * and only passed through. */
	bool leave = unprofilable(li, physical, ci);

	/* Calibrated timestamps, where the device has them and the program
	 * did not ask for them itself. */
	uint32_t features = 0;
	const char *calibrated = NULL;
	uint32_t count = 0;
	VkExtensionProperties *props = NULL;
	if (!leave && li->EnumerateDeviceExtensionProperties &&
	    li->EnumerateDeviceExtensionProperties(physical, NULL, &count, NULL) == VK_SUCCESS &&
	    (props = calloc(count ? count : 1, sizeof(*props))) != NULL &&
	    li->EnumerateDeviceExtensionProperties(physical, NULL, &count, props) == VK_SUCCESS) {
		if (has_extension(props, count, "VK_KHR_calibrated_timestamps"))
			calibrated = "VK_KHR_calibrated_timestamps";
		else if (has_extension(props, count, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME))
			calibrated = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
	}
	free(props);
	VkDeviceCreateInfo mine = *ci;
	const char **names = NULL;
	if (calibrated && (enabled(ci, "VK_KHR_calibrated_timestamps") ||
			   enabled(ci, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME))) {
		features |= CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS;
	} else if (calibrated &&
		   (names = calloc(ci->enabledExtensionCount + 1, sizeof(*names))) != NULL) {
		for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
			names[i] = ci->ppEnabledExtensionNames[i];
		names[ci->enabledExtensionCount] = calibrated;
		mine.enabledExtensionCount = ci->enabledExtensionCount + 1;
		mine.ppEnabledExtensionNames = names;
		features |= CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS;
	}
	if (host_reset_enabled(ci))
		features |= CRUMBS_FEATURE_HOST_QUERY_RESET;
	VkResult r = create(physical, &mine, alloc, out);
	if (r != VK_SUCCESS && names) {
		/* The extension was the trouble: without it. */
		features &= ~(uint32_t)CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS;
		r = create(physical, ci, alloc, out);
	}
	free(names);
	if (r != VK_SUCCESS)
		return r;

	struct layer_device *d = calloc(1, sizeof(*d));
	if (!d) {
		say("out of memory; the device runs without the layer's help");
		PFN_vkDestroyDevice destroy = (PFN_vkDestroyDevice)gdpa(*out, "vkDestroyDevice");
		destroy(*out, alloc);
		return VK_ERROR_OUT_OF_HOST_MEMORY;
	}
	d->key = key_of(*out);
	d->device = *out;
	d->inst = li;
	d->next.GetDeviceProcAddr = gdpa;
	pthread_mutex_init(&d->pools.lock, NULL);
	pthread_mutex_init(&d->cbs.lock, NULL);
	pthread_mutex_init(&d->pipelines.lock, NULL);
	pthread_mutex_init(&d->multiview.lock, NULL);
	load_next(d);

	/* Registered before it is profiled: its slot numbers its captures.
	 * The program cannot use the device before this returns. */
	int i = 0;
	pthread_mutex_lock(&registry_lock);
	while (i < MAX_DEVICES && atomic_load(&layer_devices[i]))
		i++;
	if (i < MAX_DEVICES)
		atomic_store_explicit(&layer_devices[i], d, memory_order_release);
	pthread_mutex_unlock(&registry_lock);
	if (i == MAX_DEVICES) {
		say("too many Vulkan devices (at most %d)", MAX_DEVICES);
		d->next.DestroyDevice(*out, alloc);
		free(d);
		return VK_ERROR_INITIALIZATION_FAILED;
	}
	if (!leave)
		profile_device(d, physical, ci, features, data->u.pfnSetDeviceLoaderData, i);
	return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL layer_DestroyDevice(VkDevice device,
						      const VkAllocationCallbacks *alloc)
{
	if (!device)
		return;
	struct layer_device *d = device_of(device);
	if (!d)
		return;
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < MAX_DEVICES; i++)
		if (atomic_load(&layer_devices[i]) == d)
			atomic_store(&layer_devices[i], NULL);
	pthread_mutex_unlock(&registry_lock);
	/* The program waited for the device to be idle, as it must before
	 * destroying it: what crumbs submitted is done too. */
	crumbs_destroy(d->ctx);
	d->next.DestroyDevice(device, alloc);
	hmap_free(&d->pools, false);
	hmap_free(&d->cbs, true);
	hmap_free(&d->pipelines, false);
	hmap_free(&d->multiview, false);
	free(d->queues);
	free(d);
}

/* ------------------------------------------------------------------------ */
/* Command pools, buffers and pipelines                                     */
/* ------------------------------------------------------------------------ */

static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateCommandPool(VkDevice device,
							       const VkCommandPoolCreateInfo *ci,
							       const VkAllocationCallbacks *alloc,
							       VkCommandPool *out)
{
	struct layer_device *d = device_of(device);
	VkResult r = d->next.CreateCommandPool(device, ci, alloc, out);
	if (r == VK_SUCCESS)
		hmap_set(&d->pools, (uint64_t)*out, (void *)(uintptr_t)(ci->queueFamilyIndex + 1u));
	return r;
}

/*
 * Frees the standing recording of a command buffer that is recorded
 * again, reset or freed. One replaced within a few frames of its
 * recording says the program records every frame; after enough of those
 * the device makes no more, and its command buffers are timed in capture
 * frames only (capture/LAYER.md).
 */
#define RERECORD_FRAMES 4
#define RERECORD_LIMIT 16

static void standing_release(struct layer_device *d, struct cb_state *s)
{
	if (!s->standing)
		return;
	if (s->cmd == s->standing) {
		if (s->capturing)
			atomic_fetch_sub(&d->recording, 1);
		s->capturing = false;
		s->cmd = NULL;
	}
	if (s->standing_reused && atomic_load(&d->frames) - s->standing_frame < RERECORD_FRAMES &&
	    atomic_fetch_add(&d->rerecorded, 1) + 1 == RERECORD_LIMIT)
		atomic_store(&d->standing_off, true);
	s->standing_hint = standing_used(s->standing);
	standing_free(d->ctx, s->standing);
	s->standing = NULL;
	atomic_fetch_sub(&d->standing_live, 1);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_AllocateCommandBuffers(VkDevice device,
								    const VkCommandBufferAllocateInfo *ai,
								    VkCommandBuffer *out)
{
	struct layer_device *d = device_of(device);
	VkResult r = d->next.AllocateCommandBuffers(device, ai, out);
	if (r != VK_SUCCESS)
		return r;
	uintptr_t family = (uintptr_t)hmap_get(&d->pools, (uint64_t)ai->commandPool);
	for (uint32_t i = 0; i < ai->commandBufferCount; i++) {
		struct cb_state *s = hmap_get(&d->cbs, (uint64_t)(uintptr_t)out[i]);
		if (!s) {
			s = calloc(1, sizeof(*s));
			if (!s)
				continue; /* this one is recorded unprofiled */
			hmap_set(&d->cbs, (uint64_t)(uintptr_t)out[i], s);
		}
		standing_release(d, s); /* a handle the driver gave out again */
		s->family = family ? (uint32_t)(family - 1) : UINT32_MAX;
		s->pool = ai->commandPool;
		s->secondary = ai->level == VK_COMMAND_BUFFER_LEVEL_SECONDARY;
		s->cmd = NULL;
		s->capturing = false;
		s->standing_hint = 0;
	}
	return r;
}

/* The command buffers of a pool, when some have standing recordings. */
struct pool_walk {
	struct layer_device *d;
	VkCommandPool pool;
};

static void release_in_pool(void *value, void *arg)
{
	struct cb_state *s = value;
	struct pool_walk *w = arg;
	if (s->pool == w->pool && s->standing)
		standing_release(w->d, s);
}

static void release_pool(struct layer_device *d, VkCommandPool pool)
{
	if (!d->ctx || !atomic_load(&d->standing_live))
		return;
	struct pool_walk w = { d, pool };
	hmap_each(&d->cbs, release_in_pool, &w);
}

static VKAPI_ATTR void VKAPI_CALL layer_FreeCommandBuffers(VkDevice device, VkCommandPool pool,
							   uint32_t count, const VkCommandBuffer *cbs)
{
	struct layer_device *d = device_of(device);
	for (uint32_t i = 0; d->ctx && i < count; i++) {
		struct cb_state *s = cbs[i] ? hmap_get(&d->cbs, (uint64_t)(uintptr_t)cbs[i]) : NULL;
		if (s)
			standing_release(d, s);
	}
	d->next.FreeCommandBuffers(device, pool, count, cbs);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_ResetCommandBuffer(VkCommandBuffer cb,
								VkCommandBufferResetFlags flags)
{
	struct layer_device *d = device_of(cb);
	struct cb_state *s = d->ctx ? hmap_get(&d->cbs, (uint64_t)(uintptr_t)cb) : NULL;
	if (s)
		standing_release(d, s);
	return d->next.ResetCommandBuffer(cb, flags);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_ResetCommandPool(VkDevice device, VkCommandPool pool,
							      VkCommandPoolResetFlags flags)
{
	struct layer_device *d = device_of(device);
	release_pool(d, pool);
	return d->next.ResetCommandPool(device, pool, flags);
}

static VKAPI_ATTR void VKAPI_CALL layer_DestroyCommandPool(VkDevice device, VkCommandPool pool,
							   const VkAllocationCallbacks *alloc)
{
	struct layer_device *d = device_of(device);
	release_pool(d, pool);
	d->next.DestroyCommandPool(device, pool, alloc);
}

static VkQueue queue_for_family(const struct layer_device *d, uint32_t family)
{
	for (uint32_t i = 0; i < d->queue_count; i++)
		if (d->queues[i].family == family)
			return d->queues[i].queue;
	return VK_NULL_HANDLE;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_BeginCommandBuffer(VkCommandBuffer cb,
								const VkCommandBufferBeginInfo *bi)
{
	struct layer_device *d = device_of(cb);
	VkResult r = d->next.BeginCommandBuffer(cb, bi);
	if (r != VK_SUCCESS || !d->ctx)
		return r;
	struct cb_state *s = hmap_get(&d->cbs, (uint64_t)(uintptr_t)cb);
	if (!s)
		return r;
	if (s->capturing)
		atomic_fetch_sub(&d->recording, 1);
	s->capturing = false;
	s->cmd = NULL;
	standing_release(d, s);
	VkQueue queue = queue_for_family(d, s->family);
	/* One that may be submitted again without being recorded again
	 * records for every frame it may run in; so does one begun in the
	 * frame before a capture, which may be submitted in the capture. */
	bool reused = !(bi->flags & VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT) &&
		      !atomic_load(&d->standing_off);
	bool preroll = atomic_load(&d->ctx->state) == STATE_PREROLL;
	if (d->standing && !s->secondary && (reused || preroll) &&
	    (s->standing = standing_begin(d->ctx, cb, queue, s->standing_hint)) != NULL) {
		s->cmd = s->standing;
		s->standing_reused = reused;
		s->standing_frame = atomic_load(&d->frames);
		atomic_fetch_add(&d->standing_live, 1);
	} else {
		s->cmd = crumbs_cmd_begin(d->ctx, cb, queue);
	}
	s->capturing = record_full_detail(s->cmd);
	s->topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
	s->view_mask = 0;
	if (s->capturing)
		atomic_fetch_add(&d->recording, 1);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_EndCommandBuffer(VkCommandBuffer cb)
{
	struct layer_device *d = device_of(cb);
	if (d->ctx) {
		struct cb_state *s = hmap_get(&d->cbs, (uint64_t)(uintptr_t)cb);
		if (s && s->cmd) {
			crumbs_cmd_end(s->cmd);
			if (s->capturing)
				atomic_fetch_sub(&d->recording, 1);
			s->capturing = false;
		}
	}
	return d->next.EndCommandBuffer(cb);
}

/* The state of cb when it records at full detail; NULL otherwise, after
 * one atomic load when nothing does. */
static struct cb_state *capturing(struct layer_device *d, VkCommandBuffer cb)
{
	if (!atomic_load_explicit(&d->recording, memory_order_relaxed))
		return NULL;
	struct cb_state *s = hmap_get(&d->cbs, (uint64_t)(uintptr_t)cb);
	return s && s->capturing && s->cmd ? s : NULL;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateGraphicsPipelines(
	VkDevice device, VkPipelineCache cache, uint32_t count,
	const VkGraphicsPipelineCreateInfo *ci, const VkAllocationCallbacks *alloc, VkPipeline *out)
{
	struct layer_device *d = device_of(device);
	VkResult r = d->next.CreateGraphicsPipelines(device, cache, count, ci, alloc, out);
	for (uint32_t i = 0; i < count; i++) {
		if (!out[i] || !ci[i].pInputAssemblyState)
			continue;
		uintptr_t topology = (uintptr_t)ci[i].pInputAssemblyState->topology + 1;
		hmap_set(&d->pipelines, (uint64_t)out[i], (void *)topology);
	}
	return r;
}

/* Render passes with multiview: a timestamp inside one takes a query per
 * view, so the layer records no timestamps there. */
static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateRenderPass(VkDevice device,
							      const VkRenderPassCreateInfo *ci,
							      const VkAllocationCallbacks *alloc,
							      VkRenderPass *out)
{
	struct layer_device *d = device_of(device);
	VkResult r = d->next.CreateRenderPass(device, ci, alloc, out);
	bool multiview = false;
	for (const VkBaseInStructure *p = ci->pNext; p; p = p->pNext)
		if (p->sType == VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO) {
			const VkRenderPassMultiviewCreateInfo *m = (const void *)p;
			for (uint32_t i = 0; i < m->subpassCount; i++)
				multiview |= m->pViewMasks[i] != 0;
		}
	if (r == VK_SUCCESS)
		hmap_set(&d->multiview, (uint64_t)*out, (void *)(uintptr_t)multiview);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateRenderPass2(VkDevice device,
							       const VkRenderPassCreateInfo2 *ci,
							       const VkAllocationCallbacks *alloc,
							       VkRenderPass *out)
{
	struct layer_device *d = device_of(device);
	VkResult r = (d->next.CreateRenderPass2 ? d->next.CreateRenderPass2 :
		      d->next.CreateRenderPass2KHR)(device, ci, alloc, out);
	bool multiview = false;
	for (uint32_t i = 0; i < ci->subpassCount; i++)
		multiview |= ci->pSubpasses[i].viewMask != 0;
	if (r == VK_SUCCESS)
		hmap_set(&d->multiview, (uint64_t)*out, (void *)(uintptr_t)multiview);
	return r;
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBindPipeline(VkCommandBuffer cb,
							VkPipelineBindPoint point, VkPipeline p)
{
	struct layer_device *d = device_of(cb);
	d->next.CmdBindPipeline(cb, point, p);
	struct cb_state *s;
	if (point == VK_PIPELINE_BIND_POINT_GRAPHICS && (s = capturing(d, cb)) != NULL) {
		uintptr_t t = (uintptr_t)hmap_get(&d->pipelines, (uint64_t)p);
		if (t)
			s->topology = (VkPrimitiveTopology)(t - 1);
	}
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdSetPrimitiveTopology(VkCommandBuffer cb,
								VkPrimitiveTopology t)
{
	struct layer_device *d = device_of(cb);
	if (d->next.CmdSetPrimitiveTopology)
		d->next.CmdSetPrimitiveTopology(cb, t);
	else
		d->next.CmdSetPrimitiveTopologyEXT(cb, t);
	struct cb_state *s = capturing(d, cb);
	if (s)
		s->topology = t;
}

/* ------------------------------------------------------------------------ */
/* Labels                                                                   */
/* ------------------------------------------------------------------------ */

static void label_begin(struct layer_device *d, VkCommandBuffer cb, const char *name)
{
	struct cb_state *s = capturing(d, cb);
	if (s)
		crumbs_scope_begin(s->cmd, 0, name ? name : "");
}

static void label_end(struct layer_device *d, VkCommandBuffer cb)
{
	struct cb_state *s = capturing(d, cb);
	if (s)
		crumbs_scope_end(s->cmd);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBeginDebugUtilsLabelEXT(VkCommandBuffer cb,
								   const VkDebugUtilsLabelEXT *l)
{
	struct layer_device *d = device_of(cb);
	d->next.CmdBeginDebugUtilsLabelEXT(cb, l);
	label_begin(d, cb, l->pLabelName);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndDebugUtilsLabelEXT(VkCommandBuffer cb)
{
	struct layer_device *d = device_of(cb);
	d->next.CmdEndDebugUtilsLabelEXT(cb);
	label_end(d, cb);
}

/* An inserted label is a point in time: a scope that begins and ends
 * there. */
static VKAPI_ATTR void VKAPI_CALL layer_CmdInsertDebugUtilsLabelEXT(VkCommandBuffer cb,
								    const VkDebugUtilsLabelEXT *l)
{
	struct layer_device *d = device_of(cb);
	d->next.CmdInsertDebugUtilsLabelEXT(cb, l);
	label_begin(d, cb, l->pLabelName);
	label_end(d, cb);
}

/* Queue labels wrap submissions: capture/submit.c places them. */
static VKAPI_ATTR void VKAPI_CALL layer_QueueBeginDebugUtilsLabelEXT(VkQueue queue,
								     const VkDebugUtilsLabelEXT *l)
{
	struct layer_device *d = device_of(queue);
	d->next.QueueBeginDebugUtilsLabelEXT(queue, l);
	if (d->ctx)
		submit_queue_label(d->ctx, queue, l->pLabelName ? l->pLabelName : "");
}

static VKAPI_ATTR void VKAPI_CALL layer_QueueEndDebugUtilsLabelEXT(VkQueue queue)
{
	struct layer_device *d = device_of(queue);
	d->next.QueueEndDebugUtilsLabelEXT(queue);
	if (d->ctx)
		submit_queue_label(d->ctx, queue, NULL);
}

static VKAPI_ATTR void VKAPI_CALL layer_QueueInsertDebugUtilsLabelEXT(VkQueue queue,
								      const VkDebugUtilsLabelEXT *l)
{
	struct layer_device *d = device_of(queue);
	d->next.QueueInsertDebugUtilsLabelEXT(queue, l);
	if (d->ctx) {
		submit_queue_label(d->ctx, queue, l->pLabelName ? l->pLabelName : "");
		submit_queue_label(d->ctx, queue, NULL);
	}
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDebugMarkerBeginEXT(VkCommandBuffer cb,
							       const VkDebugMarkerMarkerInfoEXT *m)
{
	struct layer_device *d = device_of(cb);
	d->next.CmdDebugMarkerBeginEXT(cb, m);
	label_begin(d, cb, m->pMarkerName);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDebugMarkerEndEXT(VkCommandBuffer cb)
{
	struct layer_device *d = device_of(cb);
	d->next.CmdDebugMarkerEndEXT(cb);
	label_end(d, cb);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDebugMarkerInsertEXT(VkCommandBuffer cb,
								const VkDebugMarkerMarkerInfoEXT *m)
{
	struct layer_device *d = device_of(cb);
	d->next.CmdDebugMarkerInsertEXT(cb, m);
	label_begin(d, cb, m->pMarkerName);
	label_end(d, cb);
}

/* ------------------------------------------------------------------------ */
/* Render passes                                                            */
/* ------------------------------------------------------------------------ */

static void pass_begin(struct layer_device *d, VkCommandBuffer cb, uint32_t view_mask)
{
	struct cb_state *s = capturing(d, cb);
	if (s) {
		record_pass_begin(s->cmd, CRUMBS_EVENT_RENDER_PASS);
		s->view_mask = view_mask;
		/* Inside a multiview pass a timestamp takes a query per view:
		 * what is recorded there is untimed. */
		record_untimed(s->cmd, view_mask != 0);
	}
}

static void pass_end(struct layer_device *d, VkCommandBuffer cb)
{
	struct cb_state *s = capturing(d, cb);
	if (s) {
		s->view_mask = 0;
		record_untimed(s->cmd, false);
		crumbs_scope_end(s->cmd);
	}
}

/* A classic pass's view mask, as far as timing goes: nonzero with
 * multiview. Looked up only while something records at full detail. */
static uint32_t classic_views(struct layer_device *d, VkRenderPass rp)
{
	if (!atomic_load_explicit(&d->recording, memory_order_relaxed))
		return 0;
	return hmap_get(&d->multiview, (uint64_t)rp) ? 1 : 0;
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBeginRenderPass(VkCommandBuffer cb,
							   const VkRenderPassBeginInfo *bi,
							   VkSubpassContents contents)
{
	struct layer_device *d = device_of(cb);
	pass_begin(d, cb, classic_views(d, bi->renderPass));
	d->next.CmdBeginRenderPass(cb, bi, contents);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBeginRenderPass2(VkCommandBuffer cb,
							    const VkRenderPassBeginInfo *bi,
							    const VkSubpassBeginInfo *si)
{
	struct layer_device *d = device_of(cb);
	pass_begin(d, cb, classic_views(d, bi->renderPass));
	(d->next.CmdBeginRenderPass2 ? d->next.CmdBeginRenderPass2 : d->next.CmdBeginRenderPass2KHR)(cb, bi, si);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndRenderPass(VkCommandBuffer cb)
{
	struct layer_device *d = device_of(cb);
	d->next.CmdEndRenderPass(cb);
	pass_end(d, cb);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndRenderPass2(VkCommandBuffer cb,
							  const VkSubpassEndInfo *ei)
{
	struct layer_device *d = device_of(cb);
	(d->next.CmdEndRenderPass2 ? d->next.CmdEndRenderPass2 : d->next.CmdEndRenderPass2KHR)(cb, ei);
	pass_end(d, cb);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBeginRendering(VkCommandBuffer cb,
							  const VkRenderingInfo *ri)
{
	struct layer_device *d = device_of(cb);
	/* A pass resumed from another command buffer continues one event
	 * there; one that is suspended ends here. Each part is its own. */
	pass_begin(d, cb, ri->viewMask);
	(d->next.CmdBeginRendering ? d->next.CmdBeginRendering : d->next.CmdBeginRenderingKHR)(cb, ri);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndRendering(VkCommandBuffer cb)
{
	struct layer_device *d = device_of(cb);
	(d->next.CmdEndRendering ? d->next.CmdEndRendering : d->next.CmdEndRenderingKHR)(cb);
	pass_end(d, cb);
}

/* ------------------------------------------------------------------------ */
/* Leaf events                                                              */
/* ------------------------------------------------------------------------ */

/* Primitives of `verts` vertices drawn as `t`. */
static uint64_t prims_of(VkPrimitiveTopology t, uint64_t verts)
{
	switch (t) {
	case VK_PRIMITIVE_TOPOLOGY_POINT_LIST: return verts;
	case VK_PRIMITIVE_TOPOLOGY_LINE_LIST: return verts / 2;
	case VK_PRIMITIVE_TOPOLOGY_LINE_STRIP: return verts > 1 ? verts - 1 : 0;
	case VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST: return verts / 3;
	case VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP:
	case VK_PRIMITIVE_TOPOLOGY_TRIANGLE_FAN: return verts > 2 ? verts - 2 : 0;
	case VK_PRIMITIVE_TOPOLOGY_LINE_LIST_WITH_ADJACENCY: return verts / 4;
	case VK_PRIMITIVE_TOPOLOGY_LINE_STRIP_WITH_ADJACENCY: return verts > 3 ? verts - 3 : 0;
	case VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST_WITH_ADJACENCY: return verts / 6;
	case VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP_WITH_ADJACENCY: return verts > 4 ? (verts - 4) / 2 : 0;
	default: return CRUMBS_COUNT_UNKNOWN; /* patches: the tessellator decides */
	}
}

struct leaf {
	struct cb_state *s;
	uint32_t slot;
};

static struct leaf leaf_begin(struct layer_device *d, VkCommandBuffer cb)
{
	struct leaf l = { capturing(d, cb), NO_SLOT };
	/* Inside a multiview pass a timestamp takes a query per view. */
	if (l.s && !l.s->view_mask)
		l.slot = record_leaf_begin(l.s->cmd);
	return l;
}

static void leaf_end(struct leaf l, enum crumbs_event_kind kind, uint64_t draws,
		     uint64_t dispatches, uint64_t prims, uint64_t verts)
{
	if (l.s)
		record_leaf_end(l.s->cmd, l.slot, kind, draws, dispatches, prims, verts);
}

static void draw_end(struct leaf l, uint64_t verts_per_instance, uint64_t instances)
{
	if (!l.s)
		return;
	uint64_t prims = prims_of(l.s->topology, verts_per_instance);
	if (prims != CRUMBS_COUNT_UNKNOWN)
		prims *= instances;
	leaf_end(l, CRUMBS_EVENT_DRAW, 1, 0, prims, verts_per_instance * instances);
}

static void indirect_end(struct leaf l)
{
	leaf_end(l, CRUMBS_EVENT_DRAW, CRUMBS_COUNT_UNKNOWN, 0, CRUMBS_COUNT_UNKNOWN,
		 CRUMBS_COUNT_UNKNOWN);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDraw(VkCommandBuffer cb, uint32_t verts,
						uint32_t instances, uint32_t first_vertex,
						uint32_t first_instance)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	d->next.CmdDraw(cb, verts, instances, first_vertex, first_instance);
	draw_end(l, verts, instances);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndexed(VkCommandBuffer cb, uint32_t indices,
						       uint32_t instances, uint32_t first_index,
						       int32_t vertex_offset, uint32_t first_instance)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	d->next.CmdDrawIndexed(cb, indices, instances, first_index, vertex_offset, first_instance);
	draw_end(l, indices, instances);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndirect(VkCommandBuffer cb, VkBuffer buffer,
							VkDeviceSize offset, uint32_t count,
							uint32_t stride)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	d->next.CmdDrawIndirect(cb, buffer, offset, count, stride);
	indirect_end(l);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndexedIndirect(VkCommandBuffer cb, VkBuffer buffer,
							       VkDeviceSize offset, uint32_t count,
							       uint32_t stride)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	d->next.CmdDrawIndexedIndirect(cb, buffer, offset, count, stride);
	indirect_end(l);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndirectCount(VkCommandBuffer cb, VkBuffer buffer,
							     VkDeviceSize offset, VkBuffer count_buffer,
							     VkDeviceSize count_offset,
							     uint32_t max_count, uint32_t stride)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	(d->next.CmdDrawIndirectCount ? d->next.CmdDrawIndirectCount : d->next.CmdDrawIndirectCountKHR)(
		cb, buffer, offset, count_buffer, count_offset, max_count, stride);
	indirect_end(l);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndexedIndirectCount(
	VkCommandBuffer cb, VkBuffer buffer, VkDeviceSize offset, VkBuffer count_buffer,
	VkDeviceSize count_offset, uint32_t max_count, uint32_t stride)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	(d->next.CmdDrawIndexedIndirectCount ? d->next.CmdDrawIndexedIndirectCount :
					       d->next.CmdDrawIndexedIndirectCountKHR)(
		cb, buffer, offset, count_buffer, count_offset, max_count, stride);
	indirect_end(l);
}

/* The two multi-draw structures hold their vertex and index counts at
 * the same place. */
_Static_assert(offsetof(VkMultiDrawInfoEXT, vertexCount) ==
	       offsetof(VkMultiDrawIndexedInfoEXT, indexCount), "multi-draw counts");

/* The leaf of a multi-draw: `count` elements `stride` bytes apart, each
 * with its vertex (or index) count where VkMultiDrawInfoEXT has it. */
static void multi_draw_end(struct leaf l, uint32_t count, const void *info, uint32_t stride,
			   uint32_t instances)
{
	if (!l.s)
		return;
	uint64_t verts = 0, prims = 0;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t n;
		memcpy(&n, (const char *)info + (size_t)i * stride +
			   offsetof(VkMultiDrawInfoEXT, vertexCount), sizeof(n));
		uint64_t p = prims_of(l.s->topology, n);
		verts += (uint64_t)n * instances;
		prims = (p == CRUMBS_COUNT_UNKNOWN || prims == CRUMBS_COUNT_UNKNOWN) ?
				CRUMBS_COUNT_UNKNOWN : prims + p * instances;
	}
	leaf_end(l, CRUMBS_EVENT_DRAW, count, 0, prims, verts);
}

/* One leaf for the whole call: its draws are one command. */
static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMultiEXT(VkCommandBuffer cb, uint32_t count,
							const VkMultiDrawInfoEXT *info,
							uint32_t instances, uint32_t first_instance,
							uint32_t stride)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	d->next.CmdDrawMultiEXT(cb, count, info, instances, first_instance, stride);
	multi_draw_end(l, count, info, stride, instances);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMultiIndexedEXT(VkCommandBuffer cb, uint32_t count,
							       const VkMultiDrawIndexedInfoEXT *info,
							       uint32_t instances,
							       uint32_t first_instance,
							       uint32_t stride,
							       const int32_t *vertex_offset)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	d->next.CmdDrawMultiIndexedEXT(cb, count, info, instances, first_instance, stride,
				       vertex_offset);
	multi_draw_end(l, count, info, stride, instances);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDispatch(VkCommandBuffer cb, uint32_t x, uint32_t y,
						    uint32_t z)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	d->next.CmdDispatch(cb, x, y, z);
	leaf_end(l, CRUMBS_EVENT_DISPATCH, 0, 1, 0, 0);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDispatchBase(VkCommandBuffer cb, uint32_t bx,
							uint32_t by, uint32_t bz, uint32_t x,
							uint32_t y, uint32_t z)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	d->next.CmdDispatchBase(cb, bx, by, bz, x, y, z);
	leaf_end(l, CRUMBS_EVENT_DISPATCH, 0, 1, 0, 0);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDispatchIndirect(VkCommandBuffer cb, VkBuffer buffer,
							    VkDeviceSize offset)
{
	struct layer_device *d = device_of(cb);
	struct leaf l = leaf_begin(d, cb);
	d->next.CmdDispatchIndirect(cb, buffer, offset);
	leaf_end(l, CRUMBS_EVENT_DISPATCH, 0, 1, 0, 0);
}

/* Transfers: a leaf of `kind` around the call. */
#define TRANSFER(name, kind, params, args)                                    \
	static VKAPI_ATTR void VKAPI_CALL layer_##name params                 \
	{                                                                     \
		struct layer_device *d = device_of(cb);                       \
		struct leaf l = leaf_begin(d, cb);                            \
		d->next.name args;                                            \
		leaf_end(l, kind, 0, 0, 0, 0);                                \
	}

TRANSFER(CmdCopyBuffer, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkBuffer src, VkBuffer dst, uint32_t n, const VkBufferCopy *r),
	 (cb, src, dst, n, r))
TRANSFER(CmdCopyImage, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst, VkImageLayout dl,
	  uint32_t n, const VkImageCopy *r),
	 (cb, src, sl, dst, dl, n, r))
TRANSFER(CmdCopyBufferToImage, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkBuffer src, VkImage dst, VkImageLayout dl, uint32_t n,
	  const VkBufferImageCopy *r),
	 (cb, src, dst, dl, n, r))
TRANSFER(CmdCopyImageToBuffer, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkBuffer dst, uint32_t n,
	  const VkBufferImageCopy *r),
	 (cb, src, sl, dst, n, r))
TRANSFER(CmdCopyBuffer2, CRUMBS_EVENT_COPY, (VkCommandBuffer cb, const VkCopyBufferInfo2 *i),
	 (cb, i))
TRANSFER(CmdCopyImage2, CRUMBS_EVENT_COPY, (VkCommandBuffer cb, const VkCopyImageInfo2 *i),
	 (cb, i))
TRANSFER(CmdCopyBufferToImage2, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, const VkCopyBufferToImageInfo2 *i), (cb, i))
TRANSFER(CmdCopyImageToBuffer2, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, const VkCopyImageToBufferInfo2 *i), (cb, i))
TRANSFER(CmdUpdateBuffer, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkBuffer dst, VkDeviceSize off, VkDeviceSize size, const void *data),
	 (cb, dst, off, size, data))
TRANSFER(CmdFillBuffer, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, VkBuffer dst, VkDeviceSize off, VkDeviceSize size, uint32_t data),
	 (cb, dst, off, size, data))
TRANSFER(CmdBlitImage, CRUMBS_EVENT_BLIT,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst, VkImageLayout dl,
	  uint32_t n, const VkImageBlit *r, VkFilter f),
	 (cb, src, sl, dst, dl, n, r, f))
TRANSFER(CmdBlitImage2, CRUMBS_EVENT_BLIT, (VkCommandBuffer cb, const VkBlitImageInfo2 *i),
	 (cb, i))
TRANSFER(CmdClearColorImage, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, VkImage img, VkImageLayout il, const VkClearColorValue *c,
	  uint32_t n, const VkImageSubresourceRange *r),
	 (cb, img, il, c, n, r))
TRANSFER(CmdClearDepthStencilImage, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, VkImage img, VkImageLayout il, const VkClearDepthStencilValue *c,
	  uint32_t n, const VkImageSubresourceRange *r),
	 (cb, img, il, c, n, r))
TRANSFER(CmdClearAttachments, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, uint32_t n, const VkClearAttachment *a, uint32_t nr,
	  const VkClearRect *r),
	 (cb, n, a, nr, r))
TRANSFER(CmdResolveImage, CRUMBS_EVENT_RESOLVE,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst, VkImageLayout dl,
	  uint32_t n, const VkImageResolve *r),
	 (cb, src, sl, dst, dl, n, r))
TRANSFER(CmdResolveImage2, CRUMBS_EVENT_RESOLVE,
	 (VkCommandBuffer cb, const VkResolveImageInfo2 *i), (cb, i))

static VKAPI_ATTR void VKAPI_CALL layer_CmdExecuteCommands(VkCommandBuffer cb, uint32_t count,
							   const VkCommandBuffer *secondaries)
{
	struct layer_device *d = device_of(cb);
	d->next.CmdExecuteCommands(cb, count, secondaries);
	struct cb_state *s = capturing(d, cb);
	if (s)
		crumbs_cmd_execute(s->cmd, count, secondaries);
}

/* ------------------------------------------------------------------------ */
/* Queues and frames                                                        */
/* ------------------------------------------------------------------------ */

static void frame_end(struct layer_device *d)
{
	crumbs_frame(d->ctx);
	atomic_fetch_add(&d->frames, 1);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit(VkQueue queue, uint32_t count,
							const VkSubmitInfo *submits, VkFence fence)
{
	struct layer_device *d = device_of(queue);
	if (!d->ctx)
		return d->next.QueueSubmit(queue, count, submits, fence);
	VkResult r = crumbs_queue_submit(d->ctx, queue, count, submits, fence);
	if (r == VK_SUCCESS && fence && !atomic_load(&d->presented))
		frame_end(d);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2(VkQueue queue, uint32_t count,
							 const VkSubmitInfo2 *submits, VkFence fence)
{
	struct layer_device *d = device_of(queue);
	if (!d->ctx)
		return (d->next.QueueSubmit2 ? d->next.QueueSubmit2 : d->next.QueueSubmit2KHR)(
			queue, count, submits, fence);
	VkResult r = crumbs_queue_submit2(d->ctx, queue, count, submits, fence);
	if (r == VK_SUCCESS && fence && !atomic_load(&d->presented))
		frame_end(d);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_QueuePresentKHR(VkQueue queue,
							    const VkPresentInfoKHR *info)
{
	struct layer_device *d = device_of(queue);
	VkResult r = d->next.QueuePresentKHR(queue, info);
	if (d->ctx) {
		atomic_store(&d->presented, true);
		frame_end(d);
	}
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_SignalSemaphore(VkDevice device,
							    const VkSemaphoreSignalInfo *info)
{
	struct layer_device *d = device_of(device);
	if (!d->ctx)
		return (d->next.SignalSemaphore ? d->next.SignalSemaphore : d->next.SignalSemaphoreKHR)(
			device, info);
	return crumbs_signal_semaphore(d->ctx, device, info);
}

/* A program that links libcrumbs asks for this to learn that the layer
 * records its device (capture/LAYER.md). */
static VKAPI_ATTR void VKAPI_CALL layer_CrumbsLayerCRUMBS(void)
{
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                 */
/* ------------------------------------------------------------------------ */

struct intercept {
	const char *name;
	PFN_vkVoidFunction fn;
	size_t next;   /* offset of the next layer's function in next_fns */
};

#define I(name) { "vk" #name, (PFN_vkVoidFunction)layer_##name, offsetof(struct next_fns, name) }
#define I_AS(alias, name) { "vk" #alias, (PFN_vkVoidFunction)layer_##name, offsetof(struct next_fns, alias) }

static const struct intercept device_intercepts[] = {
	I(DestroyDevice),
	I(CreateCommandPool),
	I(AllocateCommandBuffers),
	I(FreeCommandBuffers),
	I(ResetCommandBuffer),
	I(ResetCommandPool),
	I(DestroyCommandPool),
	I(BeginCommandBuffer),
	I(EndCommandBuffer),
	I(CreateGraphicsPipelines),
	I(CreateRenderPass),
	I(CreateRenderPass2),
	I_AS(CreateRenderPass2KHR, CreateRenderPass2),
	I(CmdBindPipeline),
	I(CmdSetPrimitiveTopology),
	I_AS(CmdSetPrimitiveTopologyEXT, CmdSetPrimitiveTopology),
	I(CmdBeginDebugUtilsLabelEXT),
	I(CmdEndDebugUtilsLabelEXT),
	I(CmdInsertDebugUtilsLabelEXT),
	I(QueueBeginDebugUtilsLabelEXT),
	I(QueueEndDebugUtilsLabelEXT),
	I(QueueInsertDebugUtilsLabelEXT),
	I(CmdDebugMarkerBeginEXT),
	I(CmdDebugMarkerEndEXT),
	I(CmdDebugMarkerInsertEXT),
	I(CmdBeginRenderPass),
	I(CmdBeginRenderPass2),
	I_AS(CmdBeginRenderPass2KHR, CmdBeginRenderPass2),
	I(CmdEndRenderPass),
	I(CmdEndRenderPass2),
	I_AS(CmdEndRenderPass2KHR, CmdEndRenderPass2),
	I(CmdBeginRendering),
	I_AS(CmdBeginRenderingKHR, CmdBeginRendering),
	I(CmdEndRendering),
	I_AS(CmdEndRenderingKHR, CmdEndRendering),
	I(CmdDraw),
	I(CmdDrawIndexed),
	I(CmdDrawIndirect),
	I(CmdDrawIndexedIndirect),
	I(CmdDrawIndirectCount),
	I_AS(CmdDrawIndirectCountKHR, CmdDrawIndirectCount),
	I(CmdDrawIndexedIndirectCount),
	I_AS(CmdDrawIndexedIndirectCountKHR, CmdDrawIndexedIndirectCount),
	I(CmdDrawMultiEXT),
	I(CmdDrawMultiIndexedEXT),
	I(CmdDispatch),
	I(CmdDispatchBase),
	I(CmdDispatchIndirect),
	I(CmdCopyBuffer),
	I(CmdCopyImage),
	I(CmdCopyBufferToImage),
	I(CmdCopyImageToBuffer),
	I(CmdCopyBuffer2),
	I(CmdCopyImage2),
	I(CmdCopyBufferToImage2),
	I(CmdCopyImageToBuffer2),
	I(CmdUpdateBuffer),
	I(CmdFillBuffer),
	I(CmdBlitImage),
	I(CmdBlitImage2),
	I(CmdClearColorImage),
	I(CmdClearDepthStencilImage),
	I(CmdClearAttachments),
	I(CmdResolveImage),
	I(CmdResolveImage2),
	I(CmdExecuteCommands),
	I(QueueSubmit),
	I(QueueSubmit2),
	I_AS(QueueSubmit2KHR, QueueSubmit2),
	I(QueuePresentKHR),
	I(SignalSemaphore),
	I_AS(SignalSemaphoreKHR, SignalSemaphore),
};

static const struct intercept *find_intercept(const char *name)
{
	for (size_t i = 0; i < sizeof(device_intercepts) / sizeof(device_intercepts[0]); i++)
		if (strcmp(device_intercepts[i].name, name) == 0)
			return &device_intercepts[i];
	return NULL;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL crumbs_layer_GetDeviceProcAddr(VkDevice device,
									  const char *name);

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL crumbs_layer_GetDeviceProcAddr(VkDevice device,
										 const char *name)
{
	if (!name)
		return NULL;
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)crumbs_layer_GetDeviceProcAddr;
	if (strcmp(name, "vkCrumbsLayerCRUMBS") == 0)
		return (PFN_vkVoidFunction)layer_CrumbsLayerCRUMBS;
	struct layer_device *d = device ? device_of(device) : NULL;
	if (!d)
		return NULL;
	const struct intercept *in = find_intercept(name);
	/* Only what the device has: a function the next layer lacks is
	 * one the program must not see. */
	if (in && *(PFN_vkVoidFunction *)((char *)&d->next + in->next))
		return in->fn;
	return d->next.GetDeviceProcAddr(device, name);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL crumbs_layer_GetInstanceProcAddr(VkInstance instance,
									    const char *name);

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL crumbs_layer_GetInstanceProcAddr(VkInstance instance,
										   const char *name)
{
	if (!name)
		return NULL;
	if (strcmp(name, "vkGetInstanceProcAddr") == 0)
		return (PFN_vkVoidFunction)crumbs_layer_GetInstanceProcAddr;
	if (strcmp(name, "vkCreateInstance") == 0)
		return (PFN_vkVoidFunction)layer_CreateInstance;
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)crumbs_layer_GetDeviceProcAddr;
	if (!instance)
		return NULL;
	struct layer_instance *li = instance_of(instance);
	if (!li)
		return NULL;
	if (strcmp(name, "vkDestroyInstance") == 0)
		return (PFN_vkVoidFunction)layer_DestroyInstance;
	if (strcmp(name, "vkCreateDevice") == 0)
		return (PFN_vkVoidFunction)layer_CreateDevice;
	/* Device functions asked of the instance: ours where the next
	 * layer has them. */
	PFN_vkVoidFunction next = li->gipa(instance, name);
	const struct intercept *in = find_intercept(name);
	if (in && next)
		return in->fn;
	return next;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(
	VkNegotiateLayerInterface *v)
{
	if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT)
		return VK_ERROR_INITIALIZATION_FAILED;
	if (v->loaderLayerInterfaceVersion > 2)
		v->loaderLayerInterfaceVersion = 2;
	if (v->loaderLayerInterfaceVersion < 2)
		return VK_ERROR_INITIALIZATION_FAILED;
	v->pfnGetInstanceProcAddr = crumbs_layer_GetInstanceProcAddr;
	v->pfnGetDeviceProcAddr = crumbs_layer_GetDeviceProcAddr;
	v->pfnGetPhysicalDeviceProcAddr = NULL;
	return VK_SUCCESS;
}
