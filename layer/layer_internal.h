/* SPDX-License-Identifier: MIT */
/*
 * layer_internal.h: what the layer's files share: the one list of the
 * commands it intercepts and the table of the next layer's, its devices
 * and command buffers (layer.c), what command buffers record
 * (layer_record.c, layer_events.c), and the names a program gave its
 * objects (layer_names.c).
 */
#ifndef CRUMBS_LAYER_INTERNAL_H
#define CRUMBS_LAYER_INTERNAL_H
#include "../capture/recorder.h"

#include <pthread.h>
#include <stdatomic.h>

/* VK_EXT_shader_object, for Vulkan headers older than it (1.3.246): the
 * layer only needs to see shaders bound in place of a pipeline. */
#ifndef VK_EXT_shader_object
VK_DEFINE_NON_DISPATCHABLE_HANDLE(VkShaderEXT)
typedef void(VKAPI_PTR *PFN_vkCmdBindShadersEXT)(VkCommandBuffer commandBuffer, uint32_t stageCount,
						 const VkShaderStageFlagBits *pStages,
						 const VkShaderEXT *pShaders);
#endif

/* At most this many bytes of an object's name are kept (the rest is cut
 * at a character boundary): a leaf's name holds its command, parameters
 * and a name, and stays well under the capture format's limit. */
#define OBJECT_NAME_MAX 96

/*
 * Object (type, handle) -> name, for the object types whose names the
 * layer uses: pipelines, render passes, framebuffers, images, image views
 * and buffers. Setting a name takes a lock; looking one up takes it only
 * when some name is held, and is done only while recording a capture.
 */
struct object_names {
	pthread_mutex_t lock;
	_Atomic uint32_t count;   /* names held */
	struct object_name *entries;
	uint32_t cap;             /* a power of two, or 0 */
};

void object_names_init(struct object_names *n);
void object_names_release(struct object_names *n);
/* Sets or, with name NULL or empty, forgets the name of an object of a
 * type the layer keeps names for (others are ignored). */
void object_names_set(struct object_names *n, VkObjectType type, uint64_t handle,
		      const char *name);
/* Forgets the name of an object being destroyed. Costs one atomic load
 * when no name is held. */
void object_names_forget(struct object_names *n, VkObjectType type, uint64_t handle);
/* Copies the name into buf (NUL-terminated) and returns its length; 0
 * when the object has none. */
size_t object_names_get(struct object_names *n, VkObjectType type, uint64_t handle, char *buf,
			size_t size);
/* The VkObjectType of a VK_EXT_debug_marker object type. */
VkObjectType object_type_of_report(VkDebugReportObjectTypeEXT type);


/* The environment variables' values, read (layer_env.c). */
/* Longer windows make capture frames too large to be useful; `crumbs
 * capture --window` allows as much. */
#define LAYER_WINDOW_MAX_MS 10000
/* CRUMBS_LAYER_WINDOW_MS: the length of a window in ns; 0 when v is NULL
 * or empty (frames end at presents and fences), -1 when it is not a
 * number of milliseconds from 1 to LAYER_WINDOW_MAX_MS. */
int64_t layer_env_window_ns(const char *v);
/* CRUMBS_LAYER_QUIET: whether the log keeps only warnings and errors (v
 * set, not empty, not beginning with '0'). */
bool layer_env_quiet(const char *v);
/* CRUMBS_LAYER_STANDING: whether standing recordings are timed (unless v
 * is "0"). */
bool layer_env_standing(const char *v);

/* ------------------------------------------------------------------------ */
/* The identity of a pipeline (pipeline_id.c)                               */
/* ------------------------------------------------------------------------ */

/* At most this many bytes of an entry point are kept as a pipeline's name. */
#define PIPELINE_ENTRY_MAX 32

/* The parts of a graphics pipeline, as VK_EXT_graphics_pipeline_library
 * divides it: vertex input, pre-rasterization shaders, fragment shader,
 * fragment output. */
#define PIPELINE_PARTS 4

enum pipeline_kind { PIPELINE_UNKNOWN, PIPELINE_GRAPHICS, PIPELINE_COMPUTE };

/*
 * What the layer keeps of a pipeline from its creation. `id` is a hash of
 * its shaders (their code, entry points and specialization constants),
 * its topology and what it draws to, never of a handle: the same pipeline
 * has the same id in every run and process. 0: not known (a shader whose
 * code the layer did not see, a library that is not whole, a ray-tracing
 * pipeline).
 */
struct pipeline_info {
	uint8_t kind;              /* enum pipeline_kind */
	bool unknown;              /* a part could not be hashed */
	uint8_t entry_rank;        /* of the stage `entry` is from; 0: none */
	uintptr_t topology;        /* VkPrimitiveTopology + 1; 0: it does not say */
	uint64_t id;
	/* Graphics pipelines and libraries: the hash of each part they hold,
	 * and which (VkGraphicsPipelineLibraryFlagsEXT). */
	uint64_t parts[PIPELINE_PARTS];
	uint32_t part_flags;
	/* The entry point that says what the pipeline does: not "main". */
	char entry[PIPELINE_ENTRY_MAX + 1];
};

/* How pipeline_info_* finds what other objects hold; each may be NULL. */
struct pipeline_lookup {
	/* The shader_code_hash of a module; 0 when not known. */
	uint64_t (*module)(void *user, VkShaderModule module);
	/* A pipeline library's info; NULL when not known. */
	const struct pipeline_info *(*library)(void *user, VkPipeline library);
	/* A hash of what a render pass draws to; 0 when not known. */
	uint64_t (*pass)(void *user, VkRenderPass pass);
	void *user;
};

/* Adds len bytes to the hash h and returns it. */
uint64_t pipeline_hash(uint64_t h, const void *data, size_t len);
/* The hash of a shader module's code (never 0), or 0 for NULL. */
uint64_t shader_code_hash(const void *code, size_t bytes);
/* The info of a pipeline created from ci (which must be valid, as the
 * driver just accepted it). */
void pipeline_info_graphics(const VkGraphicsPipelineCreateInfo *ci, const struct pipeline_lookup *lk,
			    struct pipeline_info *out);
void pipeline_info_compute(const VkComputePipelineCreateInfo *ci, const struct pipeline_lookup *lk,
			   struct pipeline_info *out);
/* The name of an unnamed pipeline's events: "ENTRY 3f2a" (its entry
 * point and the top 16 bits of its id), or "pipeline 3f2a" when no entry
 * point says more than main. Writes "" and returns 0 when the id is not
 * known; else returns the length. */
size_t pipeline_label(const struct pipeline_info *p, char *buf, size_t size);

/* Video memory (layer_memory.c): vkAllocateMemory and vkFreeMemory are
 * counted per heap for the recorder. Whether VK_EXT_memory_budget may be
 * enabled on a device of physical under li (its properties query can be
 * called). */
struct layer_instance;
bool memory_budget_usable(const struct layer_instance *li, VkPhysicalDevice physical);

/* Devices the layer leaves alone (unprofilable.c). */
/*
 * Whether the layer must leave alone a device created with `ci` on a
 * physical device with queue families `families[family_count]` and
 * `timestamp_period`: it enables an extension whose GPU work the layer
 * cannot see, or one named in `skip` (CRUMBS_LAYER_SKIP: names separated
 * by commas or spaces; may be NULL), it groups several GPUs, or none of
 * its queues has timestamps. When it must, `why` gets the reason (a
 * clause for "... runs unprofiled: WHY") and it returns true.
 */
bool layer_unprofilable(const VkDeviceCreateInfo *ci, const VkQueueFamilyProperties *families,
			uint32_t family_count, float timestamp_period, const char *skip,
			char *why, size_t n);

/* ------------------------------------------------------------------------ */
/* The commands the layer intercepts                                        */
/* ------------------------------------------------------------------------ */

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
	X(CreateShaderModule, "1.0", NULL, NULL, NEXT)                                                \
	X(DestroyShaderModule, "1.0", NULL, NULL, NEXT)                                               \
	X(CreateGraphicsPipelines, "1.0", NULL, NULL, NEXT)                                           \
	X(CreateComputePipelines, "1.0", NULL, NULL, NEXT)                                            \
	X(DestroyPipeline, "1.0", NULL, NULL, NEXT)                                                   \
	X(CreateRenderPass, "1.0", NULL, NULL, NEXT)                                                  \
	X(CreateRenderPass2, "1.2", "vkCreateRenderPass2KHR", NULL, NEXT)                             \
	X(DestroyRenderPass, "1.0", NULL, NULL, NEXT)                                                 \
	X(CreateFramebuffer, "1.0", NULL, NULL, NEXT)                                                 \
	X(DestroyFramebuffer, "1.0", NULL, NULL, NEXT)                                                \
	X(DestroyImage, "1.0", NULL, NULL, NEXT)                                                      \
	X(CreateImageView, "1.0", NULL, NULL, NEXT)                                                   \
	X(DestroyImageView, "1.0", NULL, NULL, NEXT)                                                  \
	X(DestroyBuffer, "1.0", NULL, NULL, NEXT)                                                     \
	X(AllocateMemory, "1.0", NULL, NULL, NEXT)                                                    \
	X(FreeMemory, "1.0", NULL, NULL, NEXT)                                                        \
	X(SetDebugUtilsObjectNameEXT, "VK_EXT_debug_utils", NULL, NULL, ALWAYS)                       \
	X(DebugMarkerSetObjectNameEXT, "VK_EXT_debug_marker", NULL, NULL, ALWAYS)                     \
	X(DebugMarkerSetObjectTagEXT, "VK_EXT_debug_marker", NULL, NULL, ALWAYS)                      \
	X(CmdBindPipeline, "1.0", NULL, NULL, NEXT)                                                   \
	X(CmdBindShadersEXT, "VK_EXT_shader_object", NULL, NULL, NEXT)                                \
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
	X(QueueBindSparse, "1.0", NULL, NULL, NEXT)                                                   \
	X(QueueWaitIdle, "1.0", NULL, NULL, NEXT)                                                     \
	X(DeviceWaitIdle, "1.0", NULL, NULL, NEXT)                                                    \
	X(WaitForFences, "1.0", NULL, NULL, NEXT)                                                     \
	X(WaitSemaphores, "1.2", "vkWaitSemaphoresKHR", NULL, NEXT)                                   \
	X(AcquireNextImageKHR, "VK_KHR_swapchain", NULL, NULL, NEXT)                                  \
	X(AcquireNextImage2KHR, "VK_KHR_swapchain", NULL, NULL, NEXT)                                 \
	X(SignalSemaphore, "1.2", "vkSignalSemaphoreKHR", NULL, NEXT)                                 \
	X(CreateSwapchainKHR, "VK_KHR_swapchain", NULL, NULL, NEXT)                                   \
	X(DestroySwapchainKHR, "VK_KHR_swapchain", NULL, NULL, NEXT)                                  \
	N(WaitForPresentKHR, "VK_KHR_present_wait", NULL)                                             \
	N(GetRefreshCycleDurationGOOGLE, "VK_GOOGLE_display_timing", NULL)                            \
	N(GetPastPresentationTimingGOOGLE, "VK_GOOGLE_display_timing", NULL)

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

/* Every intercept, declared from the list: layer_Name has the type of
 * PFN_vkName, which the compiler checks against its definition. */
#define LAYER_DECLARE(name, from, alias, alias2, hand_out) \
	extern __typeof__(*(PFN_vk##name)0) layer_##name;
#define LAYER_DECLARE_N(name, from, alias)
LAYER_DEVICE_FUNCTIONS(LAYER_DECLARE, LAYER_DECLARE_N)
#undef LAYER_DECLARE
#undef LAYER_DECLARE_N

/* A program that links libcrumbs asks for this to learn that the layer
 * records its device (layer/LAYER.md). */
VKAPI_ATTR void VKAPI_CALL layer_CrumbsLayerCRUMBS(void);

/* ------------------------------------------------------------------------ */
/* Instances, devices and their maps (layer_devices.c)                      */
/* ------------------------------------------------------------------------ */

/* A map from 64-bit handles to small values, under a lock. */
struct handle_map {
	pthread_mutex_t lock;
	uint64_t *keys;
	void **values;
	uint32_t cap;
	uint32_t count;
};

/* Sets key to value (overwritten when a handle comes back). */
bool handle_map_set(struct handle_map *m, uint64_t key, void *value);
/* The value of key, or NULL. */
void *handle_map_get(struct handle_map *m, uint64_t key);
/* Removes key and returns its value (the caller's to free), or NULL. */
void *handle_map_take(struct handle_map *m, uint64_t key);
/* Calls fn on every value, under the map's lock. */
void handle_map_each(struct handle_map *m, void (*fn)(void *value, void *arg), void *arg);
/* Frees the map and, with free_values, its values. */
void handle_map_release(struct handle_map *m, bool free_values);

struct layer_instance {
	void *key;
	VkInstance instance;
	PFN_vkGetInstanceProcAddr gipa;
	PFN_vkDestroyInstance DestroyInstance;
	PFN_vkCreateDevice CreateDevice;
	PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties;
	/* Looked up as the instance is made, as the recorder's are. */
	PFN_vkGetPhysicalDeviceFeatures GetPhysicalDeviceFeatures;
	PFN_vkGetPhysicalDeviceFeatures2 GetPhysicalDeviceFeatures2;
	struct instance_fns ifn; /* the recorder's, which the layer uses too */
	/* VK_KHR_get_physical_device_properties2 was enabled, and the
	 * Vulkan version the program asked for: where
	 * vkGetPhysicalDeviceMemoryProperties2 may be called, as
	 * VK_EXT_memory_budget needs (layer_memory.c). */
	bool props2;
	uint32_t api_version;
};

/* layer.c, for every file that looks at a device's creation: whether
 * props (NULL: none) lists the extension, whether the program enabled it,
 * and the program's structure of that type in a pNext chain, or NULL. */
bool has_extension(const VkExtensionProperties *props, uint32_t count, const char *name);
bool enabled(const VkDeviceCreateInfo *ci, const char *name);
const VkBaseInStructure *chained(const void *next, VkStructureType type);

/* layer_features.c: pipelineStatisticsQuery and hostQueryReset, enabled
 * for a program that did not enable them, where the device has them. */
#define FEATURES_COPIES 8
struct features_plan {
	const char *extension;  /* VK_EXT_host_query_reset, to enable too; or NULL */
	VkPhysicalDeviceFeatures core;
	VkPhysicalDeviceHostQueryResetFeatures reset;
	bool copied;
	void *block;            /* the copies of the program's first links */
	VkBaseOutStructure *copies[FEATURES_COPIES];
	size_t count;
};
/* Whether the device can have both (and CRUMBS_LAYER_COUNTERS is not 0;
 * on lavapipe, only with CRUMBS_LAYER_COUNTERS=1);
 * plan->extension names the extension that must be enabled with them. */
bool features_plan(const struct layer_instance *li, VkPhysicalDevice physical,
		   const VkExtensionProperties *props, uint32_t count, const VkDeviceCreateInfo *ci,
		   struct features_plan *plan);
/* Changes *mine, a copy of ci, to enable both; false when it cannot (a
 * feature structure out of the layer's reach, out of memory), *mine then
 * partly changed. features_release frees what it made, after the device
 * is created. */
bool features_apply(struct features_plan *plan, const VkDeviceCreateInfo *ci,
		    VkDeviceCreateInfo *mine);
void features_release(struct features_plan *plan);

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
	uint32_t standing_hint; /* the slots the last one asked for */
	VkPrimitiveTopology topology;
	uint32_t view_mask;     /* of the render pass being recorded */
	/* Names of the bound graphics, compute and ray-tracing pipelines
	 * (the program's, else pipeline_label's), kept only while the
	 * command buffer records at full detail. */
	char pipeline[3][OBJECT_NAME_MAX + 1];
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
	struct handle_map modules;      /* VkShaderModule -> its code's hash (a uint64_t) */
	struct handle_map pipelines;    /* VkPipeline -> struct pipeline_info */
	struct handle_map passes;       /* VkRenderPass -> struct pass_info */
	struct handle_map framebuffers; /* VkFramebuffer -> struct framebuffer_info */
	struct handle_map views;        /* VkImageView -> struct view_info */
	struct handle_map memory;       /* VkDeviceMemory -> its size and type (layer_memory.c) */
	struct object_names names;      /* what the program named its objects */
	_Atomic uint32_t recording;     /* command buffers recorded at full detail */
	_Atomic bool presented;
	_Atomic uint64_t frames;        /* frames ended */
	int64_t window_ns;              /* CRUMBS_LAYER_WINDOW_MS; 0: frames end at presents */
	_Atomic int64_t window_start_ns; /* the first submission on the CPU clock; 0: none yet */
	/* Held to end a frame (crumbs_frame submits on the device's queues);
	 * read-held by the program's submissions, presents and signals, which
	 * other threads may make meanwhile. */
	pthread_rwlock_t window_lock;
	bool window_lock_ready;
	bool standing;                  /* standing recordings can be made */
	_Atomic bool standing_off;      /* the program records every frame */
	_Atomic uint32_t standing_live; /* standing recordings held */
	_Atomic uint32_t rerecorded;    /* of them, replaced within a few frames */
	struct layer_present *present;  /* its swapchains and waits (layer_present.c) */
};

/* The loader's dispatch table pointer, which every dispatchable object of
 * one instance or device shares: the key the registry finds them by. */
void *dispatch_key(const void *dispatchable);
/* Registers an instance; false (and says so) when there are too many. */
bool registry_add_instance(struct layer_instance *li);
void registry_remove_instance(struct layer_instance *li);
/* The instance of a dispatchable object (an instance or physical device),
 * or NULL. */
struct layer_instance *instance_of(const void *dispatchable);
/* Registers a device: its slot, which numbers its captures, or -1 (said)
 * when there are too many. */
int registry_add_device(struct layer_device *d);
void registry_remove_device(struct layer_device *d);
/* The device of a dispatchable object (a device, queue or command
 * buffer), or NULL when the layer does not know it. */
struct layer_device *device_of(const void *dispatchable);
/* True for the first caller in the process only: the device whose
 * recorder listens for `crumbs trigger`. */
bool registry_take_trigger(void);
/* The recorders' log: standard error, quiet with CRUMBS_LAYER_QUIET. */
void layer_log(void *user, enum crumbs_log_level level, const char *message);
/* One line on standard error, "crumbs: " first. */
__attribute__((format(printf, 1, 2)))
void say(const char *fmt, ...);

/* ------------------------------------------------------------------------ */
/* Frames (layer_frames.c)                                                  */
/* ------------------------------------------------------------------------ */

/* Ends d's frame (under the write lock: crumbs_frame submits on the
 * device's queues); at a fenced submission, saying once a capture that the
 * frame ended there. */
void layer_frame_end(struct layer_device *d);
void layer_fenced_frame_end(struct layer_device *d);
/* With windows of fixed length: ends the frames of the windows that have
 * passed since the device's first submission. */
void window_advance(struct layer_device *d);
/* Around the program's queue calls (submissions, presents, signals, queue
 * labels): no frame ends during them, on any thread, and with windows a
 * submission lands in the frame of its own window (window_advance). */
void window_enter(struct layer_device *d);
void window_leave(struct layer_device *d);
/* Around the program's other uses of its queues (waiting for them to be
 * idle, sparse binding): no frame ends during them. */
void frames_hold(struct layer_device *d);
void frames_release(struct layer_device *d);

/* The device of a dispatchable object; returns (with `fail`, if any) from
 * the intercept when the layer does not know it, since then it has no
 * next function to call. */
#define DEVICE_OF(object, fail)                              \
	struct layer_device *d = device_of(object);          \
	if (!d)                                              \
		return fail

/* ------------------------------------------------------------------------ */
/* Presentation (layer_present.c)                                           */
/* ------------------------------------------------------------------------ */

/* The extensions a device's creation gets for presentation. */
#define PRESENT_PLAN_NAMES 3
struct present_plan {
	const char *names[PRESENT_PLAN_NAMES]; /* extensions the layer enables */
	uint32_t name_count;
	VkPhysicalDevicePresentIdFeaturesKHR id_features;
	VkPhysicalDevicePresentWaitFeaturesKHR wait_features;
	bool own_ids, own_wait;  /* the layer enables the feature */
	bool program_ids;        /* the program enabled presentId */
	bool wait;               /* presents can be waited for */
	bool own_timing;         /* the layer enables VK_GOOGLE_display_timing */
	bool program_timing;     /* the program did */
};
/* What a device created with `ci` on a physical device whose extensions
 * are props[count] needs for the layer to learn when presents are shown;
 * true when the creation must change (present_create_info). */
bool present_plan(const VkDeviceCreateInfo *ci, const VkExtensionProperties *props,
		  uint32_t count, struct present_plan *plan);
/* ci with the plan's extensions and features: *names (the caller frees
 * it) holds the extension names, the plan the features chained in front
 * of ci's. false when out of memory. */
bool present_create_info(const VkDeviceCreateInfo *ci, struct present_plan *plan,
			 VkDeviceCreateInfo *out, const char ***names);
/* After d's next functions are loaded: its presentation state, with the
 * plan's extensions `enabled` or not. */
void present_device_init(struct layer_device *d, const struct present_plan *plan, bool enabled);
/* Before the device is destroyed: the layer's thread is ended. */
void present_device_destroy(struct layer_device *d);
/* The extension by which d's presents say when they were shown, or NULL
 * when nothing does. */
const char *present_times_said(const struct layer_device *d);

/* A present under way: what the layer chained to it. */
struct present_call {
	VkPresentInfoKHR info;
	VkPresentIdKHR id_info;
	VkPresentTimesInfoGOOGLE times_info;
	uint64_t ids[8];
	VkPresentTimeGOOGLE times[8];
	uint32_t ids_count;           /* ids of the layer's; 0: none */
	const uint64_t *program_ids;  /* the program's VkPresentIdKHR ids, or NULL */
};
/* The present info to pass on in place of `info`: with the layer's ids
 * chained, where it gives them; `pc` holds what it points to. */
const VkPresentInfoKHR *present_prepare(struct layer_device *d, const VkPresentInfoKHR *info,
					struct present_call *pc);
/* After the present, which took from begin_ns to end_ns and returned r:
 * each swapchain's present to the recorder, its wait queued, past
 * timings read. */
void present_done(struct layer_device *d, const VkPresentInfoKHR *info,
		  const struct present_call *pc, int64_t begin_ns, int64_t end_ns, VkResult r);

/* ------------------------------------------------------------------------ */
/* Command buffers (layer_record.c)                                         */
/* ------------------------------------------------------------------------ */

/* The state of cb when it records at full detail; NULL otherwise, after
 * one atomic load when nothing does. */
struct cb_state *capturing(struct layer_device *d, VkCommandBuffer cb);
/* Its state while it is recorded into a capture or a run at any detail
 * (its labels and the secondaries it executes are kept); NULL otherwise. */
struct cb_state *recording(struct layer_device *d, VkCommandBuffer cb);

/* The color attachments of a render pass, of a framebuffer, or of
 * dynamic rendering whose formats and views name a pass: the first. */
#define PASS_COLORS_MAX 8

/* What a render pass object says of itself: the attachments its
 * subpasses write (the color ones in order of first use, the first
 * PASS_COLORS_MAX by index and format), how many subpasses it has, and
 * whether any uses multiview. */
struct pass_info {
	bool multiview;
	uint32_t subpasses;
	uint32_t colors;                      /* color attachments written */
	uint32_t color[PASS_COLORS_MAX];      /* their indices in the pass */
	VkFormat color_format[PASS_COLORS_MAX];
	uint32_t depth;                       /* VK_ATTACHMENT_UNUSED: none */
	VkFormat depth_format;
};

/* A framebuffer's image views by attachment (none when imageless: the
 * views come with vkCmdBeginRenderPass then). */
#define FRAMEBUFFER_VIEWS_MAX 16
struct framebuffer_info {
	uint32_t count;
	VkImageView views[FRAMEBUFFER_VIEWS_MAX];
};

/* An image view: its image, whose name names it too, and its format. */
struct view_info {
	VkImage image;
	VkFormat format;
};

#endif
