/* SPDX-License-Identifier: MIT */
/*
 * recorder.h: the recorder's API for its one client inside crumbs, the
 * Vulkan layer (layer/): a context made for a device the layer wraps, the
 * instance functions the layer shares with it, leaf events and render
 * passes on command buffers, standing recordings, queue labels and what
 * the layer asks of the frame under way. Programs see include/crumbs.h;
 * the recorder's own files see capture_internal.h, which includes this.
 */
#ifndef CRUMBS_RECORDER_H
#define CRUMBS_RECORDER_H

#include "../include/crumbs.h"
#include <vulkan/vk_layer.h>

#include <stdarg.h>
#include <stdbool.h>

/* No query slot: an event recorded without timestamps. */
#define NO_SLOT UINT32_MAX

/*
 * The Vulkan functions the recorder calls: one list per table, from which
 * come the struct of pointers, their loading and the check that each
 * required one was found (functions.c).
 *
 * X(Name, PFN, LOAD, ALIAS, NEED)
 * - Name: the field of the table, the command without "vk" or a suffix.
 * - PFN: its type.
 * - LOAD: the name it is loaded by; ALIAS: the name tried when LOAD gives
 *   nothing (a promoted command's extension name), or NULL.
 * - NEED: REQUIRED (creation fails without it), OPTIONAL, or a
 *   CRUMBS_FEATURE_ bit: loaded only where the program said it enabled
 *   that feature.
 * A field already set is kept: the layer gives the next layer's
 * vkGetDeviceProcAddr.
 */
#define RECORDER_INSTANCE_FUNCTIONS(X)                                                                   \
	X(GetDeviceProcAddr, PFN_vkGetDeviceProcAddr, "vkGetDeviceProcAddr", NULL, REQUIRED)             \
	X(GetPhysicalDeviceProperties, PFN_vkGetPhysicalDeviceProperties,                                \
	  "vkGetPhysicalDeviceProperties", NULL, REQUIRED)                                               \
	X(GetPhysicalDeviceMemoryProperties, PFN_vkGetPhysicalDeviceMemoryProperties,                    \
	  "vkGetPhysicalDeviceMemoryProperties", NULL, REQUIRED)                                         \
	X(GetPhysicalDeviceMemoryProperties2, PFN_vkGetPhysicalDeviceMemoryProperties2,                  \
	  "vkGetPhysicalDeviceMemoryProperties2", "vkGetPhysicalDeviceMemoryProperties2KHR", OPTIONAL)   \
	X(GetPhysicalDeviceQueueFamilyProperties, PFN_vkGetPhysicalDeviceQueueFamilyProperties,          \
	  "vkGetPhysicalDeviceQueueFamilyProperties", NULL, REQUIRED)                                    \
	X(GetPhysicalDeviceCalibrateableTimeDomains, PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT, \
	  "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT",                                              \
	  "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR", OPTIONAL)                                    \
	X(CmdBeginDebugUtilsLabel, PFN_vkCmdBeginDebugUtilsLabelEXT,                                     \
	  "vkCmdBeginDebugUtilsLabelEXT", NULL, OPTIONAL)                                                \
	X(CmdEndDebugUtilsLabel, PFN_vkCmdEndDebugUtilsLabelEXT,                                         \
	  "vkCmdEndDebugUtilsLabelEXT", NULL, OPTIONAL)                                                  \
	X(EnumerateQueueFamilyPerformanceQueryCounters,                                                  \
	  PFN_vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR,                           \
	  "vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR", NULL, OPTIONAL)             \
	X(GetQueueFamilyPerformanceQueryPasses,                                                          \
	  PFN_vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR,                                   \
	  "vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR", NULL, OPTIONAL)

#define RECORDER_FN_FIELD(name, pfn, load, alias, need) pfn name;
struct instance_fns {
	RECORDER_INSTANCE_FUNCTIONS(RECORDER_FN_FIELD)
};
#undef RECORDER_FN_FIELD

/* crumbs_create() for the layer: the loader's callback that makes the
 * command buffers crumbs allocates dispatchable, the next layer's
 * vkGetDeviceProcAddr, and its instance functions as they were when the
 * instance was created (`next_ifn`, or NULL): asked later, the loader may
 * answer with those of the layers above, which RenderDoc's, for one,
 * cannot take crumbs' handles to. */
enum crumbs_result crumbs_create_layered(const struct crumbs_desc *desc,
					 PFN_vkSetDeviceLoaderData set_loader_data,
					 PFN_vkGetDeviceProcAddr next_gdpa,
					 const struct instance_fns *next_ifn, crumbs_context **out);

/* Whether ctx is in the pre-roll of a capture or a run: the rest of the
 * frame before the first one recorded. */
bool recorder_in_preroll(const crumbs_context *ctx);
/* The detail of the run of several frames in its pre-roll or under way,
 * or -1 when there is none (one-frame captures included). */
int recorder_run_detail(const crumbs_context *ctx);
/* Whether the frame under way is recorded (a capture frame, or a run's
 * at any detail): what a present costs the layer beyond it is spent only
 * then (present.c). */
bool recorder_recording(const crumbs_context *ctx);
/* Whether the frame under way is the first recorded one of a capture or
 * a run. */
bool recorder_first_frame(const crumbs_context *ctx);

/* The instance functions t lacks, loaded through gipa, without a word for
 * those it does not give (functions.c). */
void functions_fill_instance(struct instance_fns *t, PFN_vkGetInstanceProcAddr gipa,
			     VkInstance instance);

/* The CPU clock, CLOCK_MONOTONIC, in ns (common.c). */
int64_t now_ns(void);
/* The process's own name, made safe for file names. */
void default_program_name(char *buf, size_t size);

/* Leaf events and render passes at full detail (record.c). A leaf is
 * recorded around its command: record_leaf_begin() writes its first
 * timestamp and returns its slot (NO_SLOT: untimed), record_leaf_end()
 * the second and the event. record_full_detail() says whether cmd
 * records them now. */
bool record_full_detail(const struct crumbs_cmd *cmd);
uint32_t record_leaf_begin(struct crumbs_cmd *cmd);
/* `name` (len bytes) names the event; an empty one is named by its kind. */
void record_leaf_end(struct crumbs_cmd *cmd, uint32_t slot, enum crumbs_event_kind kind,
		     const char *name, size_t len, uint64_t draws, uint64_t dispatches,
		     uint64_t prims, uint64_t verts);
void record_pass_begin(struct crumbs_cmd *cmd, enum crumbs_event_kind kind, const char *name,
		       size_t len);
/* Until called again with false, cmd writes no timestamps. */
void record_untimed(struct crumbs_cmd *cmd, bool untimed);
/* Pipeline statistics around vkCmdExecuteCommands, which the layer sees
 * whole: before, cmd's query ends; after (and after crumbs_cmd_execute),
 * the next begins. Render passes' edges go through crumbs_pass_edge. */
void record_execute_edge(struct crumbs_cmd *cmd, bool before);

/* Standing recordings: command buffers recorded once and submitted in
 * many frames (standing.c). */
/* Sets up standing recordings on every device and queue that can have
 * them (graphics and compute families with timestamps and the GPU copy);
 * `lookup` finds the one a command buffer holds. False: none can. */
bool standing_setup(crumbs_context *ctx, struct crumbs_cmd *(*lookup)(void *, VkCommandBuffer),
		    void *user);
/* A standing recording of the primary command buffer cb, just begun, for
 * queues like `queue`: its timestamps' range is reset first thing in cb.
 * `hint`: the slots its last recording asked for. `once`: cb is begun
 * with ONE_TIME_SUBMIT, so a one-frame capture may take its timestamps
 * past its range. `run_detail`: -1 for a recording at full detail; or the
 * detail of the run it is begun in, for a command buffer that only that
 * run reads. NULL when it cannot have one. */
struct crumbs_cmd *standing_begin(crumbs_context *ctx, VkCommandBuffer cb, VkQueue queue,
				  uint32_t hint, bool once, int run_detail);
/* Right after standing_begin(): where the recording counts pipeline
 * statistics, its first stretch begins (record.c). */
void record_count(struct crumbs_cmd *cmd);
/* Whether command buffers for `queue` can have standing recordings. */
bool standing_queue(crumbs_context *ctx, VkQueue queue);
/* The slots its events asked for, whether they got them or not: a hint
 * for its next recording. */
uint32_t standing_used(const struct crumbs_cmd *h);
void standing_free(crumbs_context *ctx, struct crumbs_cmd *h);

/* A queue label of the layer: begins `name`, or ends the innermost when
 * `name` is NULL. Recorded in capture frames only. */
void submit_queue_label(crumbs_context *ctx, VkQueue queue, const char *name);

/* vsnprintf(buf, size, fmt, ap) for a scope name, size >= 1: the same
 * text, faster for the conversions names use. Returns the length stored
 * (at most size - 1). */
size_t name_vformat(char *buf, size_t size, const char *fmt, va_list ap);

#endif
