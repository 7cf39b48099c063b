/* SPDX-License-Identifier: MIT */
/*
 * layer_features.c: the device features crumbs' pipeline statistics need
 * (pipelineStatisticsQuery, and hostQueryReset, with which crumbs resets
 * its queries), enabled for a program that did not enable them itself,
 * where the device has them. Most programs enable neither, and a program
 * nobody changed should still get its draws' counts.
 *
 * The program's create info is never written to: what changes is a copy.
 * A feature structure in the program's pNext chain can be changed only
 * where it lies in the chain's first links of types whose size the layer
 * knows, which it copies; one further down is left as it is, and the
 * counts go without that feature (LAYER.md says so).
 */
#include <stdlib.h>
#include <string.h>

#include "layer_internal.h"

/* The chain's links the layer may copy: their types and sizes. */
static size_t known_size(VkStructureType type)
{
	switch (type) {
	case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2:
		return sizeof(VkPhysicalDeviceFeatures2);
	case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
		return sizeof(VkPhysicalDeviceVulkan11Features);
	case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES:
		return sizeof(VkPhysicalDeviceVulkan12Features);
	case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES:
		return sizeof(VkPhysicalDeviceVulkan13Features);
	case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES:
		return sizeof(VkPhysicalDeviceHostQueryResetFeatures);
	default:
		return 0;
	}
}

/* Copies the chain's first links of known types into plan->copies,
 * relinked, and points mine at the copy; returns the copy of the link of
 * `type` among them, or NULL when it is not among them. */
static VkBaseOutStructure *copied(struct features_plan *plan, VkDeviceCreateInfo *mine,
				  VkStructureType type)
{
	if (!plan->copied) {
		plan->copied = true;
		size_t bytes = 0, n = 0;
		const VkBaseInStructure *s = mine->pNext;
		for (; s && known_size(s->sType) && n < FEATURES_COPIES; s = s->pNext, n++)
			bytes += (known_size(s->sType) + 15) & ~(size_t)15;
		if (!n)
			return NULL;
		unsigned char *block = calloc(1, bytes);
		if (!block)
			return NULL;
		plan->block = block;
		VkBaseOutStructure *prev = NULL;
		s = mine->pNext;
		for (size_t i = 0; i < n; i++, s = s->pNext) {
			size_t size = known_size(s->sType);
			memcpy(block, s, size);
			VkBaseOutStructure *c = (VkBaseOutStructure *)(void *)block;
			plan->copies[plan->count++] = c;
			if (prev)
				prev->pNext = c;
			else
				mine->pNext = c;
			prev = c;
			block += (size + 15) & ~(size_t)15;
		}
		/* The last copy goes on to the program's own links. */
		prev->pNext = (VkBaseOutStructure *)(uintptr_t)s;
	}
	for (size_t i = 0; i < plan->count; i++)
		if (plan->copies[i]->sType == type)
			return plan->copies[i];
	return NULL;
}

/* Whether the physical device has pipelineStatisticsQuery. hostQueryReset
 * every device has that lists VK_EXT_host_query_reset or is of Vulkan
 * 1.2, where the feature is required. */
/* (The function was looked up as the instance was made: the next
 * layer's answer asked later need not be one to call, below RenderDoc's
 * layer.) */
static bool supported(const struct layer_instance *li, VkPhysicalDevice physical)
{
	if (!li->GetPhysicalDeviceFeatures)
		return false;
	VkPhysicalDeviceFeatures f;
	memset(&f, 0, sizeof(f));
	li->GetPhysicalDeviceFeatures(physical, &f);
	return f.pipelineStatisticsQuery;
}

bool features_plan(const struct layer_instance *li, VkPhysicalDevice physical,
		   const VkExtensionProperties *props, uint32_t count, const VkDeviceCreateInfo *ci,
		   struct features_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	const char *asked = getenv("CRUMBS_LAYER_COUNTERS");
	if ((asked && strcmp(asked, "0") == 0) || !supported(li, physical))
		return false;
	VkPhysicalDeviceProperties dp;
	li->ifn.GetPhysicalDeviceProperties(physical, &dp);
	/* lavapipe (Mesa 22.3) crashes on its queue thread running some
	 * programs' work with a statistics query active (GStreamer's
	 * vulkancolorconvert): there only when asked. */
	if (strncmp(dp.deviceName, "llvmpipe", 8) == 0 && !(asked && strcmp(asked, "1") == 0))
		return false;
	/* hostQueryReset is core in Vulkan 1.2, where both the instance and
	 * the device are; else it needs its extension. */
	bool core12 = li->api_version >= VK_API_VERSION_1_2 && dp.apiVersion >= VK_API_VERSION_1_2;
	if (!core12 && !enabled(ci, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME)) {
		if (!has_extension(props, count, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME))
			return false;
		plan->extension = VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME;
	}
	return true;
}

bool features_apply(struct features_plan *plan, const VkDeviceCreateInfo *ci,
		    VkDeviceCreateInfo *mine)
{
	/* pipelineStatisticsQuery: in pEnabledFeatures, else in a
	 * VkPhysicalDeviceFeatures2, else in features of the layer's own. */
	const VkBaseInStructure *f2 = chained(ci->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
	if (ci->pEnabledFeatures) {
		plan->core = *ci->pEnabledFeatures;
		plan->core.pipelineStatisticsQuery = VK_TRUE;
		mine->pEnabledFeatures = &plan->core;
	} else if (f2) {
		if (!((const VkPhysicalDeviceFeatures2 *)(const void *)f2)->features.pipelineStatisticsQuery) {
			VkBaseOutStructure *c = copied(plan, mine, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
			if (!c)
				return false;
			((VkPhysicalDeviceFeatures2 *)(void *)c)->features.pipelineStatisticsQuery = VK_TRUE;
		}
	} else {
		memset(&plan->core, 0, sizeof(plan->core));
		plan->core.pipelineStatisticsQuery = VK_TRUE;
		mine->pEnabledFeatures = &plan->core;
	}
	/* hostQueryReset: in Vulkan 1.2's features or its own structure
	 * where the program chained one (both may not be), else in one of
	 * the layer's. */
	const VkBaseInStructure *v12 = chained(ci->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
	const VkBaseInStructure *own = chained(ci->pNext,
					    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES);
	if (v12) {
		if (!((const VkPhysicalDeviceVulkan12Features *)(const void *)v12)->hostQueryReset) {
			VkBaseOutStructure *c = copied(plan, mine, v12->sType);
			if (!c)
				return false;
			((VkPhysicalDeviceVulkan12Features *)(void *)c)->hostQueryReset = VK_TRUE;
		}
	} else if (own) {
		if (!((const VkPhysicalDeviceHostQueryResetFeatures *)(const void *)own)->hostQueryReset) {
			VkBaseOutStructure *c = copied(plan, mine, own->sType);
			if (!c)
				return false;
			((VkPhysicalDeviceHostQueryResetFeatures *)(void *)c)->hostQueryReset = VK_TRUE;
		}
	} else {
		plan->reset = (VkPhysicalDeviceHostQueryResetFeatures){
			.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES,
			.pNext = (void *)(uintptr_t)mine->pNext,
			.hostQueryReset = VK_TRUE
		};
		mine->pNext = &plan->reset;
	}
	return true;
}

void features_release(struct features_plan *plan)
{
	free(plan->block);
	plan->block = NULL;
}
