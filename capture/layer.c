/*
 * layer.c: VK_LAYER_CRUMBS_capture, the recorder core as a Vulkan layer
 * for programs that were not changed for crumbs. Debug labels (debug utils
 * and debug marker) become scopes; in a capture frame render passes become
 * events and draws, dispatches, copies, blits, clears and resolves leaf
 * events with their counts, each named from what the program recorded.
 * Frames end at vkQueuePresentKHR, or, on a device that has never
 * presented, at each submission that signals a fence, or, with
 * CRUMBS_LAYER_WINDOW_MS, every so many milliseconds. Every command it
 * hands out is safe whatever the program enabled. See capture/LAYER.md.
 */
#include "layer_internal.h"

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
	/* Names of the bound graphics, compute and ray-tracing pipelines,
	 * kept only while the command buffer records at full detail. */
	char pipeline[3][OBJECT_NAME_MAX + 1];
};

/*
 * The device functions of the next layer or driver that the layer calls:
 * one list, from which come the table of them (struct next_fns), their
 * loading (load_next) and the layer's answers to vkGetDeviceProcAddr and
 * vkGetInstanceProcAddr (intercepts[]).
 *
 * X(Name, FROM, ALIAS, ALIAS2, HAND_OUT)
 * - Name: the command without "vk"; layer_Name intercepts it, and
 *   next.Name is the next layer's.
 * - FROM: the core version or the extension it belongs to.
 * - ALIAS, ALIAS2: the names it had before promotion (NULL for none): the
 *   first one the next layer has fills next.Name, once, at device
 *   creation, and the layer answers to every name.
 * - HAND_OUT: NEXT, the layer hands out layer_Name only where next.Name
 *   exists (a program must not see a command its device lacks); ALWAYS,
 *   always, forwarding nothing where next.Name is NULL: labels and object
 *   names a program gives without enabling their extension are still
 *   recorded.
 * N(Name, FROM, ALIAS) is one the layer calls but does not intercept.
 */
#define LAYER_DEVICE_FUNCTIONS(X, N)                                                                  \
	N(GetDeviceQueue, "1.0", NULL)                                                                \
	X(DestroyDevice, "1.0", NULL, NULL, NEXT)                                                     \
	X(CreateCommandPool, "1.0", NULL, NULL, NEXT)                                                 \
	X(AllocateCommandBuffers, "1.0", NULL, NULL, NEXT)                                            \
	X(FreeCommandBuffers, "1.0", NULL, NULL, NEXT)                                                \
	X(ResetCommandBuffer, "1.0", NULL, NULL, NEXT)                                                \
	X(ResetCommandPool, "1.0", NULL, NULL, NEXT)                                                  \
	X(DestroyCommandPool, "1.0", NULL, NULL, NEXT)                                                \
	X(BeginCommandBuffer, "1.0", NULL, NULL, NEXT)                                                \
	X(EndCommandBuffer, "1.0", NULL, NULL, NEXT)                                                  \
	X(CreateGraphicsPipelines, "1.0", NULL, NULL, NEXT)                                           \
	X(DestroyPipeline, "1.0", NULL, NULL, NEXT)                                                   \
	X(CreateRenderPass, "1.0", NULL, NULL, NEXT)                                                  \
	X(CreateRenderPass2, "1.2", "vkCreateRenderPass2KHR", NULL, NEXT)                             \
	X(DestroyRenderPass, "1.0", NULL, NULL, NEXT)                                                 \
	X(DestroyFramebuffer, "1.0", NULL, NULL, NEXT)                                                \
	X(DestroyImage, "1.0", NULL, NULL, NEXT)                                                      \
	X(DestroyImageView, "1.0", NULL, NULL, NEXT)                                                  \
	X(DestroyBuffer, "1.0", NULL, NULL, NEXT)                                                     \
	X(SetDebugUtilsObjectNameEXT, "VK_EXT_debug_utils", NULL, NULL, ALWAYS)                       \
	X(DebugMarkerSetObjectNameEXT, "VK_EXT_debug_marker", NULL, NULL, ALWAYS)                     \
	X(CmdBindPipeline, "1.0", NULL, NULL, NEXT)                                                   \
	X(CmdSetPrimitiveTopology, "1.3", "vkCmdSetPrimitiveTopologyEXT", NULL, NEXT)                 \
	X(CmdBeginDebugUtilsLabelEXT, "VK_EXT_debug_utils", NULL, NULL, ALWAYS)                       \
	X(CmdEndDebugUtilsLabelEXT, "VK_EXT_debug_utils", NULL, NULL, ALWAYS)                         \
	X(CmdInsertDebugUtilsLabelEXT, "VK_EXT_debug_utils", NULL, NULL, ALWAYS)                      \
	X(QueueBeginDebugUtilsLabelEXT, "VK_EXT_debug_utils", NULL, NULL, ALWAYS)                     \
	X(QueueEndDebugUtilsLabelEXT, "VK_EXT_debug_utils", NULL, NULL, ALWAYS)                       \
	X(QueueInsertDebugUtilsLabelEXT, "VK_EXT_debug_utils", NULL, NULL, ALWAYS)                    \
	X(CmdDebugMarkerBeginEXT, "VK_EXT_debug_marker", NULL, NULL, ALWAYS)                          \
	X(CmdDebugMarkerEndEXT, "VK_EXT_debug_marker", NULL, NULL, ALWAYS)                            \
	X(CmdDebugMarkerInsertEXT, "VK_EXT_debug_marker", NULL, NULL, ALWAYS)                         \
	X(CmdBeginRenderPass, "1.0", NULL, NULL, NEXT)                                                \
	X(CmdBeginRenderPass2, "1.2", "vkCmdBeginRenderPass2KHR", NULL, NEXT)                         \
	X(CmdEndRenderPass, "1.0", NULL, NULL, NEXT)                                                  \
	X(CmdEndRenderPass2, "1.2", "vkCmdEndRenderPass2KHR", NULL, NEXT)                             \
	X(CmdBeginRendering, "1.3", "vkCmdBeginRenderingKHR", NULL, NEXT)                             \
	X(CmdEndRendering, "1.3", "vkCmdEndRenderingKHR", NULL, NEXT)                                 \
	X(CmdDraw, "1.0", NULL, NULL, NEXT)                                                           \
	X(CmdDrawIndexed, "1.0", NULL, NULL, NEXT)                                                    \
	X(CmdDrawIndirect, "1.0", NULL, NULL, NEXT)                                                   \
	X(CmdDrawIndexedIndirect, "1.0", NULL, NULL, NEXT)                                            \
	X(CmdDrawIndirectCount, "1.2", "vkCmdDrawIndirectCountKHR", "vkCmdDrawIndirectCountAMD", NEXT) \
	X(CmdDrawIndexedIndirectCount, "1.2", "vkCmdDrawIndexedIndirectCountKHR",                     \
	  "vkCmdDrawIndexedIndirectCountAMD", NEXT)                                                   \
	X(CmdDrawMultiEXT, "VK_EXT_multi_draw", NULL, NULL, NEXT)                                     \
	X(CmdDrawMultiIndexedEXT, "VK_EXT_multi_draw", NULL, NULL, NEXT)                              \
	X(CmdDrawMeshTasksEXT, "VK_EXT_mesh_shader", NULL, NULL, NEXT)                                \
	X(CmdDrawMeshTasksIndirectEXT, "VK_EXT_mesh_shader", NULL, NULL, NEXT)                        \
	X(CmdDrawMeshTasksIndirectCountEXT, "VK_EXT_mesh_shader", NULL, NULL, NEXT)                   \
	X(CmdDispatch, "1.0", NULL, NULL, NEXT)                                                       \
	X(CmdDispatchBase, "1.1", "vkCmdDispatchBaseKHR", NULL, NEXT)                                 \
	X(CmdDispatchIndirect, "1.0", NULL, NULL, NEXT)                                               \
	X(CmdTraceRaysKHR, "VK_KHR_ray_tracing_pipeline", NULL, NULL, NEXT)                           \
	X(CmdTraceRaysIndirectKHR, "VK_KHR_ray_tracing_pipeline", NULL, NULL, NEXT)                   \
	X(CmdCopyBuffer, "1.0", NULL, NULL, NEXT)                                                     \
	X(CmdCopyImage, "1.0", NULL, NULL, NEXT)                                                      \
	X(CmdCopyBufferToImage, "1.0", NULL, NULL, NEXT)                                              \
	X(CmdCopyImageToBuffer, "1.0", NULL, NULL, NEXT)                                              \
	X(CmdCopyBuffer2, "1.3", "vkCmdCopyBuffer2KHR", NULL, NEXT)                                   \
	X(CmdCopyImage2, "1.3", "vkCmdCopyImage2KHR", NULL, NEXT)                                     \
	X(CmdCopyBufferToImage2, "1.3", "vkCmdCopyBufferToImage2KHR", NULL, NEXT)                     \
	X(CmdCopyImageToBuffer2, "1.3", "vkCmdCopyImageToBuffer2KHR", NULL, NEXT)                     \
	X(CmdUpdateBuffer, "1.0", NULL, NULL, NEXT)                                                   \
	X(CmdFillBuffer, "1.0", NULL, NULL, NEXT)                                                     \
	X(CmdBlitImage, "1.0", NULL, NULL, NEXT)                                                      \
	X(CmdBlitImage2, "1.3", "vkCmdBlitImage2KHR", NULL, NEXT)                                     \
	X(CmdClearColorImage, "1.0", NULL, NULL, NEXT)                                                \
	X(CmdClearDepthStencilImage, "1.0", NULL, NULL, NEXT)                                         \
	X(CmdClearAttachments, "1.0", NULL, NULL, NEXT)                                               \
	X(CmdResolveImage, "1.0", NULL, NULL, NEXT)                                                   \
	X(CmdResolveImage2, "1.3", "vkCmdResolveImage2KHR", NULL, NEXT)                               \
	X(CmdExecuteCommands, "1.0", NULL, NULL, NEXT)                                                \
	X(QueueSubmit, "1.0", NULL, NULL, NEXT)                                                       \
	X(QueueSubmit2, "1.3", "vkQueueSubmit2KHR", NULL, NEXT)                                       \
	X(QueuePresentKHR, "VK_KHR_swapchain", NULL, NULL, NEXT)                                      \
	X(SignalSemaphore, "1.2", "vkSignalSemaphoreKHR", NULL, NEXT)

#define FIELD(name, from, alias, alias2, hand_out) PFN_vk##name name;
#define FIELD_N(name, from, alias) PFN_vk##name name;
struct next_fns {
	PFN_vkGetDeviceProcAddr GetDeviceProcAddr;
	LAYER_DEVICE_FUNCTIONS(FIELD, FIELD_N)
};
#undef FIELD
#undef FIELD_N

/* Calls the next layer's command where it has one, and nothing where it
 * has not: the layer hands out label and name commands whatever the
 * program enabled, and a program may call any command it got through
 * vkGetInstanceProcAddr. */
#define FORWARD(d, name, ...)                           \
	do {                                            \
		if ((d)->next.name)                     \
			(d)->next.name(__VA_ARGS__);    \
	} while (0)
/* The same for commands that return a VkResult: `missing` without one. */
#define FORWARD_RESULT(d, missing, name, ...) \
	((d)->next.name ? (d)->next.name(__VA_ARGS__) : (missing))

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
	struct handle_map passes;       /* VkRenderPass -> its pass_info */
	struct object_names names;      /* what the program named its objects */
	_Atomic uint32_t recording;     /* command buffers recorded at full detail */
	_Atomic bool presented;
	_Atomic uint64_t frames;        /* frames ended */
	int64_t window_ns;              /* CRUMBS_LAYER_WINDOW_MS; 0: frames end at presents */
	_Atomic int64_t window_start_ns; /* the first submission on the CPU clock; 0: none yet */
	pthread_rwlock_t window_lock;   /* held to end windows; read-held by submissions */
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

/* The next layer's functions, each under the first of its names the
 * next layer has: aliases are resolved here, once. */
static PFN_vkVoidFunction next_proc(struct layer_device *d, const char *name, const char *alias,
				    const char *alias2)
{
	PFN_vkVoidFunction f = d->next.GetDeviceProcAddr(d->device, name);
	if (!f && alias)
		f = d->next.GetDeviceProcAddr(d->device, alias);
	if (!f && alias2)
		f = d->next.GetDeviceProcAddr(d->device, alias2);
	return f;
}

static void load_next(struct layer_device *d)
{
#define LOAD(name, from, alias, alias2, hand_out) \
	d->next.name = (PFN_vk##name)next_proc(d, "vk" #name, alias, alias2);
#define LOAD_N(name, from, alias) d->next.name = (PFN_vk##name)next_proc(d, "vk" #name, alias, NULL);
	LAYER_DEVICE_FUNCTIONS(LOAD, LOAD_N)
#undef LOAD
#undef LOAD_N
}

/* The standing recording of a command buffer (capture/standing.c). */
static struct crumbs_cmd *standing_of(void *user, VkCommandBuffer cb)
{
	struct layer_device *d = user;
	struct cb_state *s = hmap_get(&d->cbs, (uint64_t)(uintptr_t)cb);
	return s ? s->standing : NULL;
}

/* CRUMBS_LAYER_WINDOW_MS=MS: frames of fixed length (capture/LAYER.md);
 * 0 when unset or not a valid length. */
static int64_t window_from_env(void)
{
	enum { WINDOW_MAX_MS = 10000 }; /* as `crumbs capture --window` allows */
	static _Atomic bool window_refused; /* said once, not once a device */
	const char *window = getenv("CRUMBS_LAYER_WINDOW_MS");
	if (!window || !*window)
		return 0;
	char *end = NULL;
	long ms = window[0] >= '0' && window[0] <= '9' ? strtol(window, &end, 10) : 0;
	if (ms >= 1 && ms <= WINDOW_MAX_MS && !*end)
		return ms * 1000000ll;
	if (!atomic_exchange(&window_refused, true))
		say("CRUMBS_LAYER_WINDOW_MS='%s' is not a number of milliseconds from 1 to %d; "
		    "frames end at presents and fences", window, WINDOW_MAX_MS);
	return 0;
}

/* A window holds every submission made in it, far more than a frame's:
 * room for this many per queue. */
#define WINDOW_SUBMISSIONS 512

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
	int64_t window_ns = window_from_env();
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
		.max_submissions = window_ns ? WINDOW_SUBMISSIONS : 0,
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
	if (window_ns && pthread_rwlock_init(&d->window_lock, NULL) == 0)
		d->window_ns = window_ns;
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
	pthread_mutex_init(&d->passes.lock, NULL);
	object_names_init(&d->names);
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
	if (d->window_ns)
		pthread_rwlock_destroy(&d->window_lock);
	d->next.DestroyDevice(device, alloc);
	hmap_free(&d->pools, false);
	hmap_free(&d->cbs, true);
	hmap_free(&d->pipelines, false);
	hmap_free(&d->passes, false);
	object_names_release(&d->names);
	free(d->queues);
	free(d);
}

/* ------------------------------------------------------------------------ */
/* Command pools, buffers and pipelines                                     */
/* ------------------------------------------------------------------------ */

/* The device of a dispatchable object; returns (with `fail`, if any) from
 * the intercept when the layer does not know it, since then it has no
 * next function to call. */
#define DEVICE_OF(object, fail)                              \
	struct layer_device *d = device_of(object);          \
	if (!d)                                              \
		return fail

static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateCommandPool(VkDevice device,
							       const VkCommandPoolCreateInfo *ci,
							       const VkAllocationCallbacks *alloc,
							       VkCommandPool *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateCommandPool, device,
				    ci, alloc, out);
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
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, AllocateCommandBuffers,
				    device, ai, out);
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
	DEVICE_OF(device, );
	for (uint32_t i = 0; d->ctx && cbs && i < count; i++) {
		struct cb_state *s = cbs[i] ? hmap_get(&d->cbs, (uint64_t)(uintptr_t)cbs[i]) : NULL;
		if (s)
			standing_release(d, s);
	}
	FORWARD(d, FreeCommandBuffers, device, pool, count, cbs);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_ResetCommandBuffer(VkCommandBuffer cb,
								VkCommandBufferResetFlags flags)
{
	DEVICE_OF(cb, VK_ERROR_INITIALIZATION_FAILED);
	struct cb_state *s = d->ctx ? hmap_get(&d->cbs, (uint64_t)(uintptr_t)cb) : NULL;
	if (s)
		standing_release(d, s);
	return FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, ResetCommandBuffer, cb, flags);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_ResetCommandPool(VkDevice device, VkCommandPool pool,
							      VkCommandPoolResetFlags flags)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	release_pool(d, pool);
	return FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, ResetCommandPool, device, pool,
			      flags);
}

static VKAPI_ATTR void VKAPI_CALL layer_DestroyCommandPool(VkDevice device, VkCommandPool pool,
							   const VkAllocationCallbacks *alloc)
{
	DEVICE_OF(device, );
	release_pool(d, pool);
	FORWARD(d, DestroyCommandPool, device, pool, alloc);
}

static void window_advance(struct layer_device *d);

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
	DEVICE_OF(cb, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, BeginCommandBuffer, cb, bi);
	if (r != VK_SUCCESS || !d->ctx || !bi)
		return r;
	/* With windows, a command buffer begun after a window's end is
	 * recorded in the next window's frame (a capture frame, maybe): the
	 * frames that passed end first, as they would at its submission. */
	if (d->window_ns && atomic_load(&d->window_start_ns))
		window_advance(d);
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
	for (int i = 0; i < 3; i++)
		s->pipeline[i][0] = '\0';
	if (s->capturing)
		atomic_fetch_add(&d->recording, 1);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_EndCommandBuffer(VkCommandBuffer cb)
{
	DEVICE_OF(cb, VK_ERROR_INITIALIZATION_FAILED);
	if (d->ctx) {
		struct cb_state *s = hmap_get(&d->cbs, (uint64_t)(uintptr_t)cb);
		if (s && s->cmd) {
			crumbs_cmd_end(s->cmd);
			if (s->capturing)
				atomic_fetch_sub(&d->recording, 1);
			s->capturing = false;
		}
	}
	return FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, EndCommandBuffer, cb);
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

/*
 * The topology a graphics pipeline draws with, or 0 when it does not say.
 * pStages and pInputAssemblyState may be left as garbage where the
 * specification says they are ignored: in parts of a pipeline library
 * without those states, and in pipelines linked from libraries (whose
 * topology is the libraries'). So they are read only where they count.
 */
static uintptr_t pipeline_topology(struct layer_device *d, const VkGraphicsPipelineCreateInfo *ci)
{
	VkGraphicsPipelineLibraryFlagsEXT parts = VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT |
						  VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT;
	for (const VkBaseInStructure *p = ci->pNext; p; p = p->pNext) {
		if (p->sType == VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT)
			parts = ((const VkGraphicsPipelineLibraryCreateInfoEXT *)(const void *)p)->flags;
		if (p->sType == VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR) {
			const VkPipelineLibraryCreateInfoKHR *l = (const void *)p;
			for (uint32_t i = 0; l->pLibraries && i < l->libraryCount; i++) {
				uintptr_t t = (uintptr_t)hmap_get(&d->pipelines,
								  (uint64_t)l->pLibraries[i]);
				if (t)
					return t;
			}
			return 0;
		}
	}
	if ((parts & VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT) && ci->pStages)
		for (uint32_t i = 0; i < ci->stageCount; i++)
			if (ci->pStages[i].stage & (VK_SHADER_STAGE_MESH_BIT_EXT | VK_SHADER_STAGE_TASK_BIT_EXT))
				return 0; /* no input assembly */
	if (!(parts & VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT) ||
	    !ci->pInputAssemblyState)
		return 0;
	return (uintptr_t)ci->pInputAssemblyState->topology + 1;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateGraphicsPipelines(
	VkDevice device, VkPipelineCache cache, uint32_t count,
	const VkGraphicsPipelineCreateInfo *ci, const VkAllocationCallbacks *alloc, VkPipeline *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateGraphicsPipelines,
				    device, cache, count, ci, alloc, out);
	for (uint32_t i = 0; r >= 0 && ci && out && i < count; i++) {
		uintptr_t topology = out[i] ? pipeline_topology(d, &ci[i]) : 0;
		if (topology)
			hmap_set(&d->pipelines, (uint64_t)out[i], (void *)topology);
	}
	return r;
}

/* Objects whose names the layer keeps forget them when destroyed. */
#define DESTROY(name, type, handle_type)                                                       \
	static VKAPI_ATTR void VKAPI_CALL layer_Destroy##name(VkDevice device, handle_type h,  \
							      const VkAllocationCallbacks *alloc) \
	{                                                                                      \
		DEVICE_OF(device, );                                                           \
		object_names_forget(&d->names, type, (uint64_t)h);                             \
		FORWARD(d, Destroy##name, device, h, alloc);                                   \
	}

DESTROY(Pipeline, VK_OBJECT_TYPE_PIPELINE, VkPipeline)
DESTROY(RenderPass, VK_OBJECT_TYPE_RENDER_PASS, VkRenderPass)
DESTROY(Framebuffer, VK_OBJECT_TYPE_FRAMEBUFFER, VkFramebuffer)
DESTROY(Image, VK_OBJECT_TYPE_IMAGE, VkImage)
DESTROY(ImageView, VK_OBJECT_TYPE_IMAGE_VIEW, VkImageView)
DESTROY(Buffer, VK_OBJECT_TYPE_BUFFER, VkBuffer)

/* ------------------------------------------------------------------------ */
/* Object names                                                             */
/* ------------------------------------------------------------------------ */

/* Names are kept whether or not the program enabled the extension, and
 * passed on only where the next layer has the command. */
static VKAPI_ATTR VkResult VKAPI_CALL layer_SetDebugUtilsObjectNameEXT(
	VkDevice device, const VkDebugUtilsObjectNameInfoEXT *info)
{
	DEVICE_OF(device, VK_SUCCESS);
	if (info)
		object_names_set(&d->names, info->objectType, info->objectHandle, info->pObjectName);
	return FORWARD_RESULT(d, VK_SUCCESS, SetDebugUtilsObjectNameEXT, device, info);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_DebugMarkerSetObjectNameEXT(
	VkDevice device, const VkDebugMarkerObjectNameInfoEXT *info)
{
	DEVICE_OF(device, VK_SUCCESS);
	if (info)
		object_names_set(&d->names, object_type_of_report(info->objectType), info->object,
				 info->pObjectName);
	return FORWARD_RESULT(d, VK_SUCCESS, DebugMarkerSetObjectNameEXT, device, info);
}

/* ------------------------------------------------------------------------ */
/* Render pass objects                                                      */
/* ------------------------------------------------------------------------ */

/* What a render pass object says of itself, packed into a map value
 * (never 0): the attachments its subpasses write and whether any uses
 * multiview. */
#define PASS_KNOWN (1u << 0)
#define PASS_MULTIVIEW (1u << 1)
#define PASS_DEPTH (1u << 2)
#define PASS_STENCIL (1u << 3)
#define PASS_COLORS_SHIFT 8   /* 8 bits: color attachments, at most 255 */
#define PASS_SUBPASSES_SHIFT 16 /* 8 bits: subpasses, at most 255 */

static uintptr_t pass_pack(bool multiview, uint32_t colors, bool depth, bool stencil,
			   uint32_t subpasses)
{
	return PASS_KNOWN | (multiview ? PASS_MULTIVIEW : 0) | (depth ? PASS_DEPTH : 0) |
	       (stencil ? PASS_STENCIL : 0) | (uintptr_t)(colors > 255 ? 255 : colors) << PASS_COLORS_SHIFT |
	       (uintptr_t)(subpasses > 255 ? 255 : subpasses) << PASS_SUBPASSES_SHIFT;
}

static bool format_has_depth(VkFormat f)
{
	return f == VK_FORMAT_D16_UNORM || f == VK_FORMAT_X8_D24_UNORM_PACK32 ||
	       f == VK_FORMAT_D32_SFLOAT || f == VK_FORMAT_D16_UNORM_S8_UINT ||
	       f == VK_FORMAT_D24_UNORM_S8_UINT || f == VK_FORMAT_D32_SFLOAT_S8_UINT;
}

static bool format_has_stencil(VkFormat f)
{
	return f == VK_FORMAT_S8_UINT || f == VK_FORMAT_D16_UNORM_S8_UINT ||
	       f == VK_FORMAT_D24_UNORM_S8_UINT || f == VK_FORMAT_D32_SFLOAT_S8_UINT;
}

/* Collects the attachments of subpasses: `seen` marks color attachments
 * counted (the first 64; beyond that each reference counts). */
struct pass_count {
	uint64_t seen;
	uint32_t colors;
	bool depth, stencil;
};

static void pass_color(struct pass_count *c, uint32_t attachment)
{
	if (attachment == VK_ATTACHMENT_UNUSED)
		return;
	if (attachment < 64) {
		if (c->seen & (1ull << attachment))
			return;
		c->seen |= 1ull << attachment;
	}
	c->colors++;
}

static void pass_depth(struct pass_count *c, uint32_t attachment, VkFormat format)
{
	if (attachment == VK_ATTACHMENT_UNUSED)
		return;
	c->depth |= format_has_depth(format);
	c->stencil |= format_has_stencil(format);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateRenderPass(VkDevice device,
							      const VkRenderPassCreateInfo *ci,
							      const VkAllocationCallbacks *alloc,
							      VkRenderPass *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateRenderPass, device,
				    ci, alloc, out);
	if (r != VK_SUCCESS)
		return r;
	bool multiview = false;
	for (const VkBaseInStructure *p = ci->pNext; p; p = p->pNext)
		if (p->sType == VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO) {
			const VkRenderPassMultiviewCreateInfo *m = (const void *)p;
			for (uint32_t i = 0; m->pViewMasks && i < m->subpassCount; i++)
				multiview |= m->pViewMasks[i] != 0;
		}
	struct pass_count c = { 0, 0, false, false };
	for (uint32_t i = 0; ci->pSubpasses && i < ci->subpassCount; i++) {
		const VkSubpassDescription *sp = &ci->pSubpasses[i];
		for (uint32_t k = 0; sp->pColorAttachments && k < sp->colorAttachmentCount; k++)
			pass_color(&c, sp->pColorAttachments[k].attachment);
		uint32_t ds = sp->pDepthStencilAttachment ? sp->pDepthStencilAttachment->attachment :
							    VK_ATTACHMENT_UNUSED;
		if (ds < ci->attachmentCount && ci->pAttachments)
			pass_depth(&c, ds, ci->pAttachments[ds].format);
	}
	hmap_set(&d->passes, (uint64_t)*out,
		 (void *)pass_pack(multiview, c.colors, c.depth, c.stencil, ci->subpassCount));
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateRenderPass2(VkDevice device,
							       const VkRenderPassCreateInfo2 *ci,
							       const VkAllocationCallbacks *alloc,
							       VkRenderPass *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateRenderPass2, device,
				    ci, alloc, out);
	if (r != VK_SUCCESS)
		return r;
	bool multiview = false;
	struct pass_count c = { 0, 0, false, false };
	for (uint32_t i = 0; ci->pSubpasses && i < ci->subpassCount; i++) {
		const VkSubpassDescription2 *sp = &ci->pSubpasses[i];
		multiview |= sp->viewMask != 0;
		for (uint32_t k = 0; sp->pColorAttachments && k < sp->colorAttachmentCount; k++)
			pass_color(&c, sp->pColorAttachments[k].attachment);
		uint32_t ds = sp->pDepthStencilAttachment ? sp->pDepthStencilAttachment->attachment :
							    VK_ATTACHMENT_UNUSED;
		if (ds < ci->attachmentCount && ci->pAttachments)
			pass_depth(&c, ds, ci->pAttachments[ds].format);
	}
	hmap_set(&d->passes, (uint64_t)*out,
		 (void *)pass_pack(multiview, c.colors, c.depth, c.stencil, ci->subpassCount));
	return r;
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBindPipeline(VkCommandBuffer cb,
							VkPipelineBindPoint point, VkPipeline p)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdBindPipeline, cb, point, p);
	struct cb_state *s = capturing(d, cb);
	if (!s)
		return;
	int i = point == VK_PIPELINE_BIND_POINT_GRAPHICS ? 0 :
		point == VK_PIPELINE_BIND_POINT_COMPUTE ? 1 :
		point == VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR ? 2 : -1;
	if (i < 0)
		return;
	object_names_get(&d->names, VK_OBJECT_TYPE_PIPELINE, (uint64_t)p, s->pipeline[i],
			 sizeof(s->pipeline[i]));
	if (i == 0) {
		uintptr_t t = (uintptr_t)hmap_get(&d->pipelines, (uint64_t)p);
		if (t)
			s->topology = (VkPrimitiveTopology)(t - 1);
	}
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdSetPrimitiveTopology(VkCommandBuffer cb,
								VkPrimitiveTopology t)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdSetPrimitiveTopology, cb, t);
	struct cb_state *s = capturing(d, cb);
	if (s)
		s->topology = t;
}

/* ------------------------------------------------------------------------ */
/* Labels                                                                   */
/* ------------------------------------------------------------------------ */

/* A label's name: real programs pass NULL too, which is an empty name. */
static void label_begin(struct layer_device *d, VkCommandBuffer cb, const char *name)
{
	struct cb_state *s = capturing(d, cb);
	if (s)
		crumbs_scope_begin(s->cmd, 0, name ? name : "");
}

/* An end with nothing open on cb ends a label of an earlier command
 * buffer on the same queue, as debug utils allows; the recorder keeps it
 * (and the analyzer reports one that matches nothing). */
static void label_end(struct layer_device *d, VkCommandBuffer cb)
{
	struct cb_state *s = capturing(d, cb);
	if (s)
		crumbs_scope_end(s->cmd);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBeginDebugUtilsLabelEXT(VkCommandBuffer cb,
								   const VkDebugUtilsLabelEXT *l)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdBeginDebugUtilsLabelEXT, cb, l);
	label_begin(d, cb, l ? l->pLabelName : NULL);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndDebugUtilsLabelEXT(VkCommandBuffer cb)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdEndDebugUtilsLabelEXT, cb);
	label_end(d, cb);
}

/* An inserted label is a point in time: a scope that begins and ends
 * there. */
static VKAPI_ATTR void VKAPI_CALL layer_CmdInsertDebugUtilsLabelEXT(VkCommandBuffer cb,
								    const VkDebugUtilsLabelEXT *l)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdInsertDebugUtilsLabelEXT, cb, l);
	label_begin(d, cb, l ? l->pLabelName : NULL);
	label_end(d, cb);
}

/* Queue labels wrap submissions: capture/submit.c places them. */
static VKAPI_ATTR void VKAPI_CALL layer_QueueBeginDebugUtilsLabelEXT(VkQueue queue,
								     const VkDebugUtilsLabelEXT *l)
{
	DEVICE_OF(queue, );
	FORWARD(d, QueueBeginDebugUtilsLabelEXT, queue, l);
	if (d->ctx)
		submit_queue_label(d->ctx, queue, l && l->pLabelName ? l->pLabelName : "");
}

static VKAPI_ATTR void VKAPI_CALL layer_QueueEndDebugUtilsLabelEXT(VkQueue queue)
{
	DEVICE_OF(queue, );
	FORWARD(d, QueueEndDebugUtilsLabelEXT, queue);
	if (d->ctx)
		submit_queue_label(d->ctx, queue, NULL);
}

static VKAPI_ATTR void VKAPI_CALL layer_QueueInsertDebugUtilsLabelEXT(VkQueue queue,
								      const VkDebugUtilsLabelEXT *l)
{
	DEVICE_OF(queue, );
	FORWARD(d, QueueInsertDebugUtilsLabelEXT, queue, l);
	if (d->ctx) {
		submit_queue_label(d->ctx, queue, l && l->pLabelName ? l->pLabelName : "");
		submit_queue_label(d->ctx, queue, NULL);
	}
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDebugMarkerBeginEXT(VkCommandBuffer cb,
							       const VkDebugMarkerMarkerInfoEXT *m)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdDebugMarkerBeginEXT, cb, m);
	label_begin(d, cb, m ? m->pMarkerName : NULL);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDebugMarkerEndEXT(VkCommandBuffer cb)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdDebugMarkerEndEXT, cb);
	label_end(d, cb);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDebugMarkerInsertEXT(VkCommandBuffer cb,
								const VkDebugMarkerMarkerInfoEXT *m)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdDebugMarkerInsertEXT, cb, m);
	label_begin(d, cb, m ? m->pMarkerName : NULL);
	label_end(d, cb);
}

/* ------------------------------------------------------------------------ */
/* Names of events                                                          */
/* ------------------------------------------------------------------------ */

/* A render pass or leaf event's name, as RenderDoc's event browser would
 * show it: the command, its main parameters, and the name of what it
 * works with. Bounded: an object's name is at most OBJECT_NAME_MAX. */
#define EVENT_NAME_MAX 256

struct event_name {
	char text[EVENT_NAME_MAX];
	size_t len;
};

__attribute__((format(printf, 2, 3)))
static void name_add(struct event_name *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	n->len += name_vformat(n->text + n->len, sizeof(n->text) - n->len, fmt, ap);
	va_end(ap);
}

/* " · NAME" when `name` is one. */
static void name_add_object(struct event_name *n, const char *name)
{
	if (name && *name)
		name_add(n, " \u00b7 %s", name);
}

static void name_add_named(struct event_name *n, struct layer_device *d, VkObjectType type,
			   uint64_t handle)
{
	char name[OBJECT_NAME_MAX + 1];
	if (object_names_get(&d->names, type, handle, name, sizeof(name)))
		name_add_object(n, name);
}

/* "N things", singular for one. */
static void name_add_count(struct event_name *n, uint64_t count, const char *one,
			   const char *many)
{
	name_add(n, " %llu %s", (unsigned long long)count, count == 1 ? one : many);
}

/* A byte count as people read it: 256 B, 64 KiB, 1.5 MiB. */
static void name_add_bytes(struct event_name *n, VkDeviceSize bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	if (bytes == VK_WHOLE_SIZE) {
		name_add(n, " whole");
		return;
	}
	if (bytes < 1024) {
		name_add(n, " %llu B", (unsigned long long)bytes);
		return;
	}
	int u = 0;
	uint64_t scale = 1024;
	while (u < 3 && bytes >= scale * 1024) {
		scale *= 1024;
		u++;
	}
	uint64_t whole = bytes / scale;
	uint64_t tenth = (bytes % scale) * 10 / scale;
	if (tenth)
		name_add(n, " %llu.%llu %s", (unsigned long long)whole, (unsigned long long)tenth,
			 units[u]);
	else
		name_add(n, " %llu %s", (unsigned long long)whole, units[u]);
}

static void name_add_extent(struct event_name *n, uint32_t w, uint32_t h, uint32_t depth)
{
	if (depth > 1)
		name_add(n, " %ux%ux%u", w, h, depth);
	else
		name_add(n, " %ux%u", w, h);
}

/* " (N regions)" for more than one. */
static void name_add_regions(struct event_name *n, uint32_t regions)
{
	if (regions > 1)
		name_add(n, " (%u regions)", regions);
}

/* ------------------------------------------------------------------------ */
/* Render passes                                                            */
/* ------------------------------------------------------------------------ */

static void pass_begin(struct layer_device *d, struct cb_state *s, const struct event_name *n,
		       uint32_t view_mask)
{
	record_pass_begin(s->cmd, CRUMBS_EVENT_RENDER_PASS, n->text, n->len);
	s->view_mask = view_mask;
	/* Inside a multiview pass a timestamp takes a query per view:
	 * what is recorded there is untimed. */
	record_untimed(s->cmd, view_mask != 0);
	(void)d;
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

/* "Render Pass 1280x720 (2 color + depth)": what a pass draws to. */
static void name_add_targets(struct event_name *n, uint32_t colors, bool depth, bool stencil,
			     uint32_t subpasses, bool multiview)
{
	name_add(n, " (");
	size_t start = n->len;
	if (colors)
		name_add(n, "%u color", colors);
	if (depth || stencil)
		name_add(n, "%s%s", n->len > start ? " + " : "",
			 depth && stencil ? "depth/stencil" : depth ? "depth" : "stencil");
	if (n->len == start)
		name_add(n, "no attachments");
	if (subpasses > 1)
		name_add(n, ", %u subpasses", subpasses);
	if (multiview)
		name_add(n, ", multiview");
	name_add(n, ")");
}

/* A classic pass: the program's name for its render pass, else for its
 * framebuffer, else its size and attachments. */
static void classic_pass_begin(struct layer_device *d, VkCommandBuffer cb,
			       const VkRenderPassBeginInfo *bi)
{
	struct cb_state *s = capturing(d, cb);
	if (!s || !bi)
		return;
	uintptr_t info = (uintptr_t)hmap_get(&d->passes, (uint64_t)bi->renderPass);
	struct event_name n = { "", 0 };
	char name[OBJECT_NAME_MAX + 1];
	if (object_names_get(&d->names, VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)bi->renderPass,
			     name, sizeof(name)) ||
	    object_names_get(&d->names, VK_OBJECT_TYPE_FRAMEBUFFER, (uint64_t)bi->framebuffer,
			     name, sizeof(name))) {
		name_add(&n, "%s", name);
	} else {
		name_add(&n, "Render Pass");
		name_add_extent(&n, bi->renderArea.extent.width, bi->renderArea.extent.height, 1);
		if (info)
			name_add_targets(&n, (uint32_t)(info >> PASS_COLORS_SHIFT) & 255,
					 info & PASS_DEPTH, info & PASS_STENCIL,
					 (uint32_t)(info >> PASS_SUBPASSES_SHIFT) & 255,
					 info & PASS_MULTIVIEW);
	}
	pass_begin(d, s, &n, info & PASS_MULTIVIEW ? 1 : 0);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBeginRenderPass(VkCommandBuffer cb,
							   const VkRenderPassBeginInfo *bi,
							   VkSubpassContents contents)
{
	DEVICE_OF(cb, );
	classic_pass_begin(d, cb, bi);
	FORWARD(d, CmdBeginRenderPass, cb, bi, contents);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBeginRenderPass2(VkCommandBuffer cb,
							    const VkRenderPassBeginInfo *bi,
							    const VkSubpassBeginInfo *si)
{
	DEVICE_OF(cb, );
	classic_pass_begin(d, cb, bi);
	FORWARD(d, CmdBeginRenderPass2, cb, bi, si);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndRenderPass(VkCommandBuffer cb)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdEndRenderPass, cb);
	pass_end(d, cb);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndRenderPass2(VkCommandBuffer cb,
							  const VkSubpassEndInfo *ei)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdEndRenderPass2, cb, ei);
	pass_end(d, cb);
}

/* Dynamic rendering has no object to name: its size and attachments,
 * and the name of its first named attachment's view. A pass resumed from
 * another command buffer continues one event there; one that is
 * suspended ends here. Each part is its own. */
static VKAPI_ATTR void VKAPI_CALL layer_CmdBeginRendering(VkCommandBuffer cb,
							  const VkRenderingInfo *ri)
{
	DEVICE_OF(cb, );
	struct cb_state *s = ri ? capturing(d, cb) : NULL;
	if (s) {
		struct event_name n = { "", 0 };
		uint32_t colors = 0;
		VkImageView first = VK_NULL_HANDLE;
		for (uint32_t i = 0; ri->pColorAttachments && i < ri->colorAttachmentCount; i++)
			if (ri->pColorAttachments[i].imageView) {
				colors++;
				first = first ? first : ri->pColorAttachments[i].imageView;
			}
		VkImageView depth = ri->pDepthAttachment ? ri->pDepthAttachment->imageView : VK_NULL_HANDLE;
		VkImageView stencil = ri->pStencilAttachment ? ri->pStencilAttachment->imageView :
							       VK_NULL_HANDLE;
		name_add(&n, "%s", ri->flags & VK_RENDERING_RESUMING_BIT ? "Render Pass (resumed)" :
									  "Render Pass");
		name_add_extent(&n, ri->renderArea.extent.width, ri->renderArea.extent.height, 1);
		name_add_targets(&n, colors, depth != VK_NULL_HANDLE, stencil != VK_NULL_HANDLE, 1,
				 ri->viewMask != 0);
		first = first ? first : depth ? depth : stencil;
		name_add_named(&n, d, VK_OBJECT_TYPE_IMAGE_VIEW, (uint64_t)first);
		pass_begin(d, s, &n, ri->viewMask);
	}
	FORWARD(d, CmdBeginRendering, cb, ri);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndRendering(VkCommandBuffer cb)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdEndRendering, cb);
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

/* A leaf being recorded: its command buffer's state (NULL when it does
 * not record at full detail), its first slot and its name. */
struct leaf {
	struct cb_state *s;
	uint32_t slot;
	struct layer_device *d;
	struct event_name name;
};

static void leaf_begin(struct leaf *l, struct layer_device *d, VkCommandBuffer cb)
{
	l->s = capturing(d, cb);
	l->slot = NO_SLOT;
	l->d = d;
	l->name.len = 0;
	l->name.text[0] = '\0';
	/* Inside a multiview pass a timestamp takes a query per view. */
	if (l->s && !l->s->view_mask)
		l->slot = record_leaf_begin(l->s->cmd);
}

static void leaf_end(struct leaf *l, enum crumbs_event_kind kind, uint64_t draws,
		     uint64_t dispatches, uint64_t prims, uint64_t verts)
{
	if (l->s)
		record_leaf_end(l->s->cmd, l->slot, kind, l->name.text, l->name.len, draws,
				dispatches, prims, verts);
}

/* "Draw 36 vertices x4 · Name": the command, what it draws and the
 * bound pipeline's name. */
static void draw_end(struct leaf *l, const char *command, const char *what, uint64_t count,
		     uint32_t instances)
{
	if (!l->s)
		return;
	name_add(&l->name, "%s", command);
	name_add_count(&l->name, count, what, what[0] == 'v' ? "vertices" : "indices");
	if (instances != 1)
		name_add(&l->name, " x%u", instances);
	name_add_object(&l->name, l->s->pipeline[0]);
	uint64_t prims = prims_of(l->s->topology, count);
	if (prims != CRUMBS_COUNT_UNKNOWN)
		prims *= instances;
	leaf_end(l, CRUMBS_EVENT_DRAW, 1, 0, prims, count * instances);
}

/* Draws whose parameters the GPU reads: "DrawIndirect 4 draws · Name",
 * "DrawIndirectCount up to 64 draws · Name". */
static void indirect_end(struct leaf *l, const char *command, const char *up_to, uint32_t count)
{
	if (!l->s)
		return;
	name_add(&l->name, "%s%s", command, up_to);
	name_add_count(&l->name, count, "draw", "draws");
	name_add_object(&l->name, l->s->pipeline[0]);
	leaf_end(l, CRUMBS_EVENT_DRAW, CRUMBS_COUNT_UNKNOWN, 0, CRUMBS_COUNT_UNKNOWN,
		 CRUMBS_COUNT_UNKNOWN);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDraw(VkCommandBuffer cb, uint32_t verts,
						uint32_t instances, uint32_t first_vertex,
						uint32_t first_instance)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDraw, cb, verts, instances, first_vertex, first_instance);
	draw_end(&l, "Draw", "vertex", verts, instances);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndexed(VkCommandBuffer cb, uint32_t indices,
						       uint32_t instances, uint32_t first_index,
						       int32_t vertex_offset, uint32_t first_instance)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawIndexed, cb, indices, instances, first_index, vertex_offset,
		first_instance);
	draw_end(&l, "DrawIndexed", "index", indices, instances);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndirect(VkCommandBuffer cb, VkBuffer buffer,
							VkDeviceSize offset, uint32_t count,
							uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawIndirect, cb, buffer, offset, count, stride);
	indirect_end(&l, "DrawIndirect", "", count);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndexedIndirect(VkCommandBuffer cb, VkBuffer buffer,
							       VkDeviceSize offset, uint32_t count,
							       uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawIndexedIndirect, cb, buffer, offset, count, stride);
	indirect_end(&l, "DrawIndexedIndirect", "", count);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndirectCount(VkCommandBuffer cb, VkBuffer buffer,
							     VkDeviceSize offset, VkBuffer count_buffer,
							     VkDeviceSize count_offset,
							     uint32_t max_count, uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawIndirectCount, cb, buffer, offset, count_buffer, count_offset,
		max_count, stride);
	indirect_end(&l, "DrawIndirectCount", " up to", max_count);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndexedIndirectCount(
	VkCommandBuffer cb, VkBuffer buffer, VkDeviceSize offset, VkBuffer count_buffer,
	VkDeviceSize count_offset, uint32_t max_count, uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawIndexedIndirectCount, cb, buffer, offset, count_buffer, count_offset,
		max_count, stride);
	indirect_end(&l, "DrawIndexedIndirectCount", " up to", max_count);
}

/* The two multi-draw structures hold their vertex and index counts at
 * the same place. */
_Static_assert(offsetof(VkMultiDrawInfoEXT, vertexCount) ==
	       offsetof(VkMultiDrawIndexedInfoEXT, indexCount), "multi-draw counts");

/* The leaf of a multi-draw: `count` elements `stride` bytes apart, each
 * with its vertex (or index) count where VkMultiDrawInfoEXT has it. One
 * leaf for the whole call: its draws are one command. */
static void multi_draw_end(struct leaf *l, const char *command, bool indexed, uint32_t count,
			   const void *info, uint32_t stride, uint32_t instances)
{
	if (!l->s)
		return;
	uint64_t verts = 0, prims = 0;
	for (uint32_t i = 0; info && i < count; i++) {
		uint32_t n;
		memcpy(&n, (const char *)info + (size_t)i * stride +
			   offsetof(VkMultiDrawInfoEXT, vertexCount), sizeof(n));
		uint64_t p = prims_of(l->s->topology, n);
		verts += (uint64_t)n * instances;
		prims = (p == CRUMBS_COUNT_UNKNOWN || prims == CRUMBS_COUNT_UNKNOWN) ?
				CRUMBS_COUNT_UNKNOWN : prims + p * instances;
	}
	/* "DrawMultiIndexed 3 draws 840 indices x2 · Name" */
	name_add(&l->name, "%s", command);
	if (count != 1)
		name_add_count(&l->name, count, "draw", "draws");
	name_add_count(&l->name, verts / (instances ? instances : 1), indexed ? "index" : "vertex",
		       indexed ? "indices" : "vertices");
	if (instances != 1)
		name_add(&l->name, " x%u", instances);
	name_add_object(&l->name, l->s->pipeline[0]);
	leaf_end(l, CRUMBS_EVENT_DRAW, count, 0, prims, verts);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMultiEXT(VkCommandBuffer cb, uint32_t count,
							const VkMultiDrawInfoEXT *info,
							uint32_t instances, uint32_t first_instance,
							uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawMultiEXT, cb, count, info, instances, first_instance, stride);
	multi_draw_end(&l, "DrawMulti", false, count, info, stride, instances);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMultiIndexedEXT(VkCommandBuffer cb, uint32_t count,
							       const VkMultiDrawIndexedInfoEXT *info,
							       uint32_t instances,
							       uint32_t first_instance,
							       uint32_t stride,
							       const int32_t *vertex_offset)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawMultiIndexedEXT, cb, count, info, instances, first_instance, stride,
		vertex_offset);
	multi_draw_end(&l, "DrawMultiIndexed", true, count, info, stride, instances);
}

/* Mesh shading: the task or mesh workgroups launched; its primitives
 * are the shaders' to decide. */
static void mesh_end(struct leaf *l)
{
	if (!l->s)
		return;
	name_add_object(&l->name, l->s->pipeline[0]);
	leaf_end(l, CRUMBS_EVENT_DRAW, 1, 0, CRUMBS_COUNT_UNKNOWN, CRUMBS_COUNT_UNKNOWN);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMeshTasksEXT(VkCommandBuffer cb, uint32_t x,
							    uint32_t y, uint32_t z)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawMeshTasksEXT, cb, x, y, z);
	if (l.s)
		name_add(&l.name, "DrawMeshTasks %ux%ux%u", x, y, z);
	mesh_end(&l);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMeshTasksIndirectEXT(VkCommandBuffer cb,
								    VkBuffer buffer,
								    VkDeviceSize offset,
								    uint32_t count, uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawMeshTasksIndirectEXT, cb, buffer, offset, count, stride);
	indirect_end(&l, "DrawMeshTasksIndirect", "", count);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMeshTasksIndirectCountEXT(
	VkCommandBuffer cb, VkBuffer buffer, VkDeviceSize offset, VkBuffer count_buffer,
	VkDeviceSize count_offset, uint32_t max_count, uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawMeshTasksIndirectCountEXT, cb, buffer, offset, count_buffer,
		count_offset, max_count, stride);
	indirect_end(&l, "DrawMeshTasksIndirectCount", " up to", max_count);
}

/* "Dispatch 40x23x1 · Name", with the bound compute pipeline's name. */
static void dispatch_end(struct leaf *l, int point)
{
	if (!l->s)
		return;
	name_add_object(&l->name, l->s->pipeline[point]);
	leaf_end(l, point == 2 ? CRUMBS_EVENT_TRACE_RAYS : CRUMBS_EVENT_DISPATCH, 0, 1, 0, 0);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDispatch(VkCommandBuffer cb, uint32_t x, uint32_t y,
						    uint32_t z)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDispatch, cb, x, y, z);
	if (l.s)
		name_add(&l.name, "Dispatch %ux%ux%u", x, y, z);
	dispatch_end(&l, 1);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDispatchBase(VkCommandBuffer cb, uint32_t bx,
							uint32_t by, uint32_t bz, uint32_t x,
							uint32_t y, uint32_t z)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDispatchBase, cb, bx, by, bz, x, y, z);
	if (l.s)
		name_add(&l.name, "DispatchBase %ux%ux%u from %u,%u,%u", x, y, z, bx, by, bz);
	dispatch_end(&l, 1);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDispatchIndirect(VkCommandBuffer cb, VkBuffer buffer,
							    VkDeviceSize offset)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDispatchIndirect, cb, buffer, offset);
	if (l.s)
		name_add(&l.name, "DispatchIndirect");
	dispatch_end(&l, 1);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdTraceRaysKHR(
	VkCommandBuffer cb, const VkStridedDeviceAddressRegionKHR *raygen,
	const VkStridedDeviceAddressRegionKHR *miss, const VkStridedDeviceAddressRegionKHR *hit,
	const VkStridedDeviceAddressRegionKHR *callable, uint32_t w, uint32_t h, uint32_t depth)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdTraceRaysKHR, cb, raygen, miss, hit, callable, w, h, depth);
	if (l.s)
		name_add(&l.name, "TraceRays %ux%ux%u", w, h, depth);
	dispatch_end(&l, 2);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdTraceRaysIndirectKHR(
	VkCommandBuffer cb, const VkStridedDeviceAddressRegionKHR *raygen,
	const VkStridedDeviceAddressRegionKHR *miss, const VkStridedDeviceAddressRegionKHR *hit,
	const VkStridedDeviceAddressRegionKHR *callable, VkDeviceAddress address)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdTraceRaysIndirectKHR, cb, raygen, miss, hit, callable, address);
	if (l.s)
		name_add(&l.name, "TraceRaysIndirect");
	dispatch_end(&l, 2);
}

/*
 * Transfers: a leaf of `kind` around the call, named by `describe`, a
 * statement that may use l (a struct leaf, l.s set) and d. Named by what
 * the program called the destination (else the source).
 */
#define TRANSFER(name, kind, params, args, describe)                          \
	static VKAPI_ATTR void VKAPI_CALL layer_##name params                 \
	{                                                                     \
		DEVICE_OF(cb, );                                                \
		struct leaf l;                                                \
		leaf_begin(&l, d, cb);                                        \
		FORWARD(d, name, UNPAREN args);                               \
		if (l.s) {                                                    \
			describe;                                             \
			leaf_end(&l, kind, 0, 0, 0, 0);                       \
		}                                                             \
	}
#define UNPAREN(...) __VA_ARGS__

/* " · NAME" of the first of two objects that has one. */
static void name_add_either(struct leaf *l, VkObjectType t1, uint64_t h1, VkObjectType t2,
			    uint64_t h2)
{
	size_t len = l->name.len;
	name_add_named(&l->name, l->d, t1, h1);
	if (l->name.len == len)
		name_add_named(&l->name, l->d, t2, h2);
}

static VkDeviceSize copy_bytes(const VkBufferCopy *r, uint32_t n)
{
	VkDeviceSize sum = 0;
	for (uint32_t i = 0; r && i < n; i++)
		sum += r[i].size;
	return sum;
}

static VkDeviceSize copy2_bytes(const VkBufferCopy2 *r, uint32_t n)
{
	VkDeviceSize sum = 0;
	for (uint32_t i = 0; r && i < n; i++)
		sum += r[i].size;
	return sum;
}

/* The extent of a blit region (its offsets may run either way). */
static void name_add_blit_extent(struct event_name *n, const VkOffset3D o[2])
{
	int64_t w = (int64_t)o[1].x - o[0].x, h = (int64_t)o[1].y - o[0].y;
	int64_t dz = (int64_t)o[1].z - o[0].z;
	name_add_extent(n, (uint32_t)(w < 0 ? -w : w), (uint32_t)(h < 0 ? -h : h),
			(uint32_t)(dz < 0 ? -dz : dz));
}

#define BUF(h) VK_OBJECT_TYPE_BUFFER, (uint64_t)(h)
#define IMG(h) VK_OBJECT_TYPE_IMAGE, (uint64_t)(h)

TRANSFER(CmdCopyBuffer, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkBuffer src, VkBuffer dst, uint32_t n, const VkBufferCopy *r),
	 (cb, src, dst, n, r),
	 (name_add(&l.name, "Copy buffer"), name_add_bytes(&l.name, copy_bytes(r, n)),
	  name_add_regions(&l.name, n), name_add_either(&l, BUF(dst), BUF(src))))
TRANSFER(CmdCopyImage, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst, VkImageLayout dl,
	  uint32_t n, const VkImageCopy *r),
	 (cb, src, sl, dst, dl, n, r),
	 (name_add(&l.name, "Copy image"),
	  n && r ? name_add_extent(&l.name, r->extent.width, r->extent.height, r->extent.depth) : (void)0,
	  name_add_regions(&l.name, n), name_add_either(&l, IMG(dst), IMG(src))))
TRANSFER(CmdCopyBufferToImage, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkBuffer src, VkImage dst, VkImageLayout dl, uint32_t n,
	  const VkBufferImageCopy *r),
	 (cb, src, dst, dl, n, r),
	 (name_add(&l.name, "Copy buffer to image"),
	  n && r ? name_add_extent(&l.name, r->imageExtent.width, r->imageExtent.height,
				   r->imageExtent.depth) : (void)0,
	  name_add_regions(&l.name, n), name_add_either(&l, IMG(dst), BUF(src))))
TRANSFER(CmdCopyImageToBuffer, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkBuffer dst, uint32_t n,
	  const VkBufferImageCopy *r),
	 (cb, src, sl, dst, n, r),
	 (name_add(&l.name, "Copy image to buffer"),
	  n && r ? name_add_extent(&l.name, r->imageExtent.width, r->imageExtent.height,
				   r->imageExtent.depth) : (void)0,
	  name_add_regions(&l.name, n), name_add_either(&l, BUF(dst), IMG(src))))
TRANSFER(CmdCopyBuffer2, CRUMBS_EVENT_COPY, (VkCommandBuffer cb, const VkCopyBufferInfo2 *i),
	 (cb, i),
	 (name_add(&l.name, "Copy buffer"),
	  i ? (name_add_bytes(&l.name, copy2_bytes(i->pRegions, i->regionCount)),
	       name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, BUF(i->dstBuffer), BUF(i->srcBuffer))) : (void)0))
TRANSFER(CmdCopyImage2, CRUMBS_EVENT_COPY, (VkCommandBuffer cb, const VkCopyImageInfo2 *i),
	 (cb, i),
	 (name_add(&l.name, "Copy image"),
	  i && i->regionCount && i->pRegions ?
		  name_add_extent(&l.name, i->pRegions->extent.width, i->pRegions->extent.height,
				  i->pRegions->extent.depth) : (void)0,
	  i ? (name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, IMG(i->dstImage), IMG(i->srcImage))) : (void)0))
TRANSFER(CmdCopyBufferToImage2, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, const VkCopyBufferToImageInfo2 *i), (cb, i),
	 (name_add(&l.name, "Copy buffer to image"),
	  i && i->regionCount && i->pRegions ?
		  name_add_extent(&l.name, i->pRegions->imageExtent.width,
				  i->pRegions->imageExtent.height, i->pRegions->imageExtent.depth) : (void)0,
	  i ? (name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, IMG(i->dstImage), BUF(i->srcBuffer))) : (void)0))
TRANSFER(CmdCopyImageToBuffer2, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, const VkCopyImageToBufferInfo2 *i), (cb, i),
	 (name_add(&l.name, "Copy image to buffer"),
	  i && i->regionCount && i->pRegions ?
		  name_add_extent(&l.name, i->pRegions->imageExtent.width,
				  i->pRegions->imageExtent.height, i->pRegions->imageExtent.depth) : (void)0,
	  i ? (name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, BUF(i->dstBuffer), IMG(i->srcImage))) : (void)0))
TRANSFER(CmdUpdateBuffer, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkBuffer dst, VkDeviceSize off, VkDeviceSize size, const void *data),
	 (cb, dst, off, size, data),
	 (name_add(&l.name, "Update buffer"), name_add_bytes(&l.name, size),
	  name_add_named(&l.name, d, BUF(dst))))
TRANSFER(CmdFillBuffer, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, VkBuffer dst, VkDeviceSize off, VkDeviceSize size, uint32_t data),
	 (cb, dst, off, size, data),
	 (name_add(&l.name, "Fill buffer"), name_add_bytes(&l.name, size),
	  name_add_named(&l.name, d, BUF(dst))))
TRANSFER(CmdBlitImage, CRUMBS_EVENT_BLIT,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst, VkImageLayout dl,
	  uint32_t n, const VkImageBlit *r, VkFilter f),
	 (cb, src, sl, dst, dl, n, r, f),
	 (name_add(&l.name, "Blit"),
	  n && r ? (name_add_blit_extent(&l.name, r->srcOffsets), name_add(&l.name, " to"),
		    name_add_blit_extent(&l.name, r->dstOffsets)) : (void)0,
	  name_add_regions(&l.name, n), name_add_either(&l, IMG(dst), IMG(src))))
TRANSFER(CmdBlitImage2, CRUMBS_EVENT_BLIT, (VkCommandBuffer cb, const VkBlitImageInfo2 *i),
	 (cb, i),
	 (name_add(&l.name, "Blit"),
	  i && i->regionCount && i->pRegions ?
		  (name_add_blit_extent(&l.name, i->pRegions->srcOffsets), name_add(&l.name, " to"),
		   name_add_blit_extent(&l.name, i->pRegions->dstOffsets)) : (void)0,
	  i ? (name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, IMG(i->dstImage), IMG(i->srcImage))) : (void)0))
TRANSFER(CmdClearColorImage, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, VkImage img, VkImageLayout il, const VkClearColorValue *c,
	  uint32_t n, const VkImageSubresourceRange *r),
	 (cb, img, il, c, n, r),
	 (name_add(&l.name, "Clear color image"), name_add_named(&l.name, d, IMG(img))))
TRANSFER(CmdClearDepthStencilImage, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, VkImage img, VkImageLayout il, const VkClearDepthStencilValue *c,
	  uint32_t n, const VkImageSubresourceRange *r),
	 (cb, img, il, c, n, r),
	 (name_add(&l.name, "Clear depth/stencil image"), name_add_named(&l.name, d, IMG(img))))
TRANSFER(CmdClearAttachments, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, uint32_t n, const VkClearAttachment *a, uint32_t nr,
	  const VkClearRect *r),
	 (cb, n, a, nr, r),
	 (name_add(&l.name, "Clear"), name_add_count(&l.name, n, "attachment", "attachments")))
TRANSFER(CmdResolveImage, CRUMBS_EVENT_RESOLVE,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst, VkImageLayout dl,
	  uint32_t n, const VkImageResolve *r),
	 (cb, src, sl, dst, dl, n, r),
	 (name_add(&l.name, "Resolve"),
	  n && r ? name_add_extent(&l.name, r->extent.width, r->extent.height, r->extent.depth) : (void)0,
	  name_add_regions(&l.name, n), name_add_either(&l, IMG(dst), IMG(src))))
TRANSFER(CmdResolveImage2, CRUMBS_EVENT_RESOLVE,
	 (VkCommandBuffer cb, const VkResolveImageInfo2 *i), (cb, i),
	 (name_add(&l.name, "Resolve"),
	  i && i->regionCount && i->pRegions ?
		  name_add_extent(&l.name, i->pRegions->extent.width, i->pRegions->extent.height,
				  i->pRegions->extent.depth) : (void)0,
	  i ? (name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, IMG(i->dstImage), IMG(i->srcImage))) : (void)0))

static VKAPI_ATTR void VKAPI_CALL layer_CmdExecuteCommands(VkCommandBuffer cb, uint32_t count,
							   const VkCommandBuffer *secondaries)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdExecuteCommands, cb, count, secondaries);
	struct cb_state *s = capturing(d, cb);
	if (s && secondaries)
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

/* The capture frame last said to end at a fence: devices that capture the
 * same frame say it once. */
static _Atomic uint64_t fence_rule_said = UINT64_MAX;

/* A frame ended by a fenced submission. When it is a capture frame, says
 * which rule made it, once a capture: a compute job's or a video filter's
 * fenced submission may be a small part of what its user calls a frame. */
static void fenced_frame_end(struct layer_device *d)
{
	uint64_t frame = atomic_load(&d->frames);
	if (atomic_load(&d->ctx->state) == STATE_CAPTURING &&
	    atomic_exchange(&fence_rule_said, frame) != frame) {
		char program[64];
		default_program_name(program, sizeof(program));
		say("frames of '%s' ended at fenced submissions (it never presented); use --window MS "
		    "(CRUMBS_LAYER_WINDOW_MS=MS) for frames of fixed length", program);
	}
	frame_end(d);
}

/*
 * With a window: ends the frame of every window that has passed since the
 * first submission (which starts window 0), so that frame N is the Nth
 * window. Windows without a submission end one frame each, so that the
 * numbers hold: an idle crumbs_frame costs about 0.25 us on lavapipe's
 * host (5000 windows of 1 ms idle: 1.3 ms at the next submission). Frames
 * end under the write lock, since crumbs_frame must not run during another
 * queue's submission.
 */
static void window_advance(struct layer_device *d)
{
	int64_t now = now_ns(), start = 0;
	if (atomic_compare_exchange_strong(&d->window_start_ns, &start, now))
		start = now;
	uint64_t due = now > start ? (uint64_t)((now - start) / d->window_ns) : 0;
	if (atomic_load(&d->frames) < due) {
		pthread_rwlock_wrlock(&d->window_lock);
		while (atomic_load(&d->frames) < due)
			frame_end(d);
		pthread_rwlock_unlock(&d->window_lock);
	}
}

/* Before the layer records a submission: it lands in the frame of its
 * own window, so the capture of window N completes at the first
 * submission after it. The read lock is held until window_leave. */
static void window_enter(struct layer_device *d)
{
	window_advance(d);
	pthread_rwlock_rdlock(&d->window_lock);
}

static void window_leave(struct layer_device *d)
{
	pthread_rwlock_unlock(&d->window_lock);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit(VkQueue queue, uint32_t count,
							const VkSubmitInfo *submits, VkFence fence)
{
	DEVICE_OF(queue, VK_ERROR_DEVICE_LOST);
	if (!d->ctx)
		return FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, QueueSubmit, queue, count, submits,
				      fence);
	if (d->window_ns)
		window_enter(d);
	VkResult r = crumbs_queue_submit(d->ctx, queue, count, submits, fence);
	if (d->window_ns)
		window_leave(d);
	else if (r == VK_SUCCESS && fence && !atomic_load(&d->presented))
		fenced_frame_end(d);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2(VkQueue queue, uint32_t count,
							 const VkSubmitInfo2 *submits, VkFence fence)
{
	DEVICE_OF(queue, VK_ERROR_DEVICE_LOST);
	if (!d->ctx)
		return FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, QueueSubmit2, queue, count, submits,
				      fence);
	if (d->window_ns)
		window_enter(d);
	VkResult r = crumbs_queue_submit2(d->ctx, queue, count, submits, fence);
	if (d->window_ns)
		window_leave(d);
	else if (r == VK_SUCCESS && fence && !atomic_load(&d->presented))
		fenced_frame_end(d);
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_QueuePresentKHR(VkQueue queue,
							    const VkPresentInfoKHR *info)
{
	DEVICE_OF(queue, VK_ERROR_DEVICE_LOST);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, QueuePresentKHR, queue, info);
	if (d->ctx) {
		atomic_store(&d->presented, true);
		if (!d->window_ns) /* windows end frames by the clock alone */
			frame_end(d);
	}
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_SignalSemaphore(VkDevice device,
							    const VkSemaphoreSignalInfo *info)
{
	DEVICE_OF(device, VK_ERROR_DEVICE_LOST);
	if (!d->ctx)
		return FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, SignalSemaphore, device, info);
	if (!d->window_ns)
		return crumbs_signal_semaphore(d->ctx, device, info);
	window_enter(d);
	VkResult r = crumbs_signal_semaphore(d->ctx, device, info);
	window_leave(d);
	return r;
}

/* A program that links libcrumbs asks for this to learn that the layer
 * records its device (capture/LAYER.md). */
static VKAPI_ATTR void VKAPI_CALL layer_CrumbsLayerCRUMBS(void)
{
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                 */
/* ------------------------------------------------------------------------ */

/* One name the layer answers to: its intercept, where next_fns keeps the
 * next layer's, and whether it is handed out without one. */
struct intercept {
	const char *name;       /* NULL: an alias the command does not have */
	PFN_vkVoidFunction fn;
	size_t next;
	bool always;
	const char *from;       /* core version or extension */
};

#define NEXT false
#define ALWAYS true
#define ENTRY(name, from, alias, alias2, hand_out)                                             \
	{ "vk" #name, (PFN_vkVoidFunction)layer_##name, offsetof(struct next_fns, name),       \
	  hand_out, from },                                                                    \
	{ alias, (PFN_vkVoidFunction)layer_##name, offsetof(struct next_fns, name), hand_out,  \
	  from },                                                                              \
	{ alias2, (PFN_vkVoidFunction)layer_##name, offsetof(struct next_fns, name), hand_out, \
	  from },
#define ENTRY_N(name, from, alias)

static const struct intercept intercepts[] = { LAYER_DEVICE_FUNCTIONS(ENTRY, ENTRY_N) };

#undef ENTRY
#undef ENTRY_N
#undef NEXT
#undef ALWAYS

static const struct intercept *find_intercept(const char *name)
{
	for (size_t i = 0; i < sizeof(intercepts) / sizeof(intercepts[0]); i++)
		if (intercepts[i].name && strcmp(intercepts[i].name, name) == 0)
			return &intercepts[i];
	return NULL;
}

static PFN_vkVoidFunction next_of(const struct layer_device *d, const struct intercept *in)
{
	PFN_vkVoidFunction f;
	memcpy(&f, (const char *)&d->next + in->next, sizeof(f));
	return f;
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
	/* A command the next layer lacks is one the program must not see,
	 * except labels and names, which the layer records by itself. */
	if (in && (in->always || next_of(d, in)))
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
	/* Device commands asked of the instance: ours where the next layer
	 * has them (or for labels and names, always); each intercept
	 * forwards only what its device has. */
	PFN_vkVoidFunction next = li->gipa(instance, name);
	const struct intercept *in = find_intercept(name);
	if (in && (next || in->always))
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
