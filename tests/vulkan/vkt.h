/* SPDX-License-Identifier: MIT */
/*
 * vkt.h: what the Vulkan tests share: an instance with the Khronos
 * validation layer and a messenger that counts what it says, a device with
 * the features crumbs can use, a crumbs context, buffers to keep the GPU
 * busy, and a way to replace single Vulkan functions crumbs calls.
 */
#ifndef CRUMBS_VKT_H
#define CRUMBS_VKT_H

#include <stdbool.h>
#include <stdint.h>

#include "../../include/crumbs.h"
#include "../../analyze/analyze.h"

struct vkt {
	VkInstance instance;
	VkPhysicalDevice physical;
	VkDevice device;
	VkQueue queue;
	uint32_t family;
	float period;
	uint32_t valid_bits;
	bool calibrated;          /* VK_EXT_calibrated_timestamps enabled */
	VkDebugUtilsMessengerEXT messenger;
	VkCommandPool pool;
	VkBuffer buffer;          /* a large buffer to fill, for GPU work */
	VkDeviceMemory memory;
	VkDeviceSize buffer_size;
	crumbs_context *crumbs;
	char capture_dir[64];
};

/* Validation messages seen since the start (warnings and errors). */
extern unsigned vkt_validation_messages;

/* While set, the layer's report that a call returned
 * VK_ERROR_OUT_OF_HOST_MEMORY is not counted: a test that fails
 * allocations on purpose expects it. */
extern bool vkt_expect_out_of_memory;

/* Whether vkt_init enables pipelineStatisticsQuery and tells crumbs so
 * (CRUMBS_FEATURE_PIPELINE_STATISTICS); off by default, since a capture
 * then counts, and a test's render passes must say where they are. */
extern bool vkt_counters;

/* Whether vkt_init enables the validation layer (benchmarks turn it off:
 * it costs more than what they measure). */
extern bool vkt_validation;

/* The functions crumbs loads come from here; set vkt_override to replace
 * one (by name) before vkt_init, e.g. vkGetQueryPoolResults. */
extern PFN_vkVoidFunction (*vkt_override)(const char *name);

/* A vkt_override for measuring crumbs without the driver's timestamps: a
 * vkCmdWriteTimestamp that does nothing, and a vkCmdCopyQueryPoolResults
 * that fills the results in instead (each 32-bit word 1: one same
 * timestamp everywhere, available), as a copy that waited for the
 * timestamps never written would wait for ever. */
PFN_vkVoidFunction vkt_no_timestamps(const char *name);

/* What vkt_init gives crumbs as vkGetInstanceProcAddr: the loader's, with
 * vkt_override's replacements; for a test that makes a context of its own. */
PFN_vkVoidFunction VKAPI_CALL vkt_gipa(VkInstance instance, const char *name);

/* Creates everything; fails the test (cmocka) when something is missing.
 * `features` of crumbs_vk_device are the ones enabled, plus `desc` fields
 * the test wants (may be NULL). */
void vkt_init(struct vkt *t, const struct crumbs_desc *desc);
void vkt_destroy(struct vkt *t);

/* A command buffer begun for one-time submission. */
VkCommandBuffer vkt_begin(struct vkt *t);
/* Fills `bytes` of the buffer: GPU work of a predictable length. */
void vkt_fill(struct vkt *t, VkCommandBuffer cb, VkDeviceSize bytes);
/* Submits through crumbs with optional semaphore wait/signal (timeline
 * values) and waits for the queue to finish when asked. */
void vkt_submit(struct vkt *t, VkCommandBuffer cb, VkSemaphore wait, uint64_t wait_value,
		VkSemaphore signal, uint64_t signal_value);
/* Runs frames until crumbs has written a new capture; returns its path. */
const char *vkt_finish_capture(struct vkt *t, const char *previous);
void vkt_sleep_ms(double ms);
/* CLOCK_MONOTONIC in milliseconds, the clock crumbs records. */
double vkt_now_ms(void);

/* The first frame of a capture file (the capture stays open in *c). */
const struct frame *vkt_read(const char *path, reader **c);
const struct node *vkt_find(const struct node *n, const char *name);

#endif
