/* SPDX-License-Identifier: MIT */
/*
 * unprofilable.c: the devices the layer leaves alone. A device that enables
 * what the recorder cannot see or time runs as if the layer were not
 * there, and the log says why in one line (layer/LAYER.md).
 */
#include "layer_internal.h"

#include <stdio.h>
#include <string.h>

/* Extensions whose commands record GPU work the layer cannot see. */
static const struct {
	const char *name;
	const char *why;
} unseen[] = {
	{ "VK_NV_device_generated_commands", "its commands are generated on the GPU, out of the "
	  "layer's sight" },
	{ "VK_NV_device_generated_commands_compute", "its commands are generated on the GPU, out "
	  "of the layer's sight" },
	{ "VK_EXT_device_generated_commands", "its commands are generated on the GPU, out of the "
	  "layer's sight" },
};

/* Whether `name` is one of the comma-separated names in `list`. */
static bool listed(const char *list, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = list; p && *p;) {
		size_t word = strcspn(p, ", ");
		if (word == len && strncmp(p, name, len) == 0)
			return true;
		p += word;
		p += strspn(p, ", ");
	}
	return false;
}

bool layer_unprofilable(const VkDeviceCreateInfo *ci, const VkQueueFamilyProperties *families,
			uint32_t family_count, float timestamp_period, const char *skip,
			char *why, size_t n)
{
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++) {
		const char *ext = ci->ppEnabledExtensionNames[i];
		for (size_t k = 0; k < sizeof(unseen) / sizeof(unseen[0]); k++)
			if (strcmp(ext, unseen[k].name) == 0) {
				snprintf(why, n, "it enables %s: %s", ext, unseen[k].why);
				return true;
			}
		if (listed(skip, ext)) {
			snprintf(why, n, "it enables %s, which CRUMBS_LAYER_SKIP names", ext);
			return true;
		}
	}
	for (const VkBaseInStructure *s = ci->pNext; s; s = s->pNext)
		if (s->sType == VK_STRUCTURE_TYPE_DEVICE_GROUP_DEVICE_CREATE_INFO &&
		    ((const VkDeviceGroupDeviceCreateInfo *)(const void *)s)->physicalDeviceCount > 1) {
			snprintf(why, n, "it is a device group of %u GPUs, and the layer times one GPU "
				 "per device", ((const VkDeviceGroupDeviceCreateInfo *)(const void *)s)
				 ->physicalDeviceCount);
			return true;
		}
	bool timed = false;
	for (uint32_t i = 0; i < ci->queueCreateInfoCount; i++) {
		uint32_t f = ci->pQueueCreateInfos[i].queueFamilyIndex;
		if (f < family_count && families[f].timestampValidBits)
			timed = true;
	}
	if (!timed || !(timestamp_period > 0.0f)) {
		snprintf(why, n, "none of the queues it creates can write timestamps%s",
			 timed ? " (its timestampPeriod is 0)" : "");
		return true;
	}
	return false;
}
