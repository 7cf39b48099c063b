/* SPDX-License-Identifier: MIT */
/*
 * layer_memory.c: the program's video memory for the recorder:
 * vkAllocateMemory and vkFreeMemory, each allocation's size and memory
 * type kept by its handle so that its free counts exactly what it took.
 */
#include "layer_internal.h"

/* An allocation's size and memory type, packed into the map's value
 * (never 0: Vulkan allocates at least a byte). */
#define TYPE_BITS 5
_Static_assert(VK_MAX_MEMORY_TYPES <= 1u << TYPE_BITS, "a memory type fits in TYPE_BITS");
#define SIZE_MAX_TRACKED ((uint64_t)UINTPTR_MAX >> TYPE_BITS)

bool memory_budget_usable(const struct layer_instance *li, VkPhysicalDevice physical)
{
	if (!li->ifn.GetPhysicalDeviceMemoryProperties2 || !li->ifn.GetPhysicalDeviceProperties)
		return false;
	if (li->props2)
		return true;
	/* Core in Vulkan 1.1, where both the instance and the device are. */
	VkPhysicalDeviceProperties props;
	li->ifn.GetPhysicalDeviceProperties(physical, &props);
	return li->api_version >= VK_API_VERSION_1_1 && props.apiVersion >= VK_API_VERSION_1_1;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_AllocateMemory(VkDevice device,
						    const VkMemoryAllocateInfo *info,
						    const VkAllocationCallbacks *alloc,
						    VkDeviceMemory *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, AllocateMemory, device,
				    info, alloc, out);
	if (r != VK_SUCCESS || !d->ctx || !info || !out || !*out ||
	    info->memoryTypeIndex >= VK_MAX_MEMORY_TYPES || !info->allocationSize ||
	    info->allocationSize > SIZE_MAX_TRACKED)
		return r;
	uint64_t packed = info->allocationSize << TYPE_BITS | info->memoryTypeIndex;
	/* Counted only once it is kept, so that its free finds it. */
	if (handle_map_set(&d->memory, (uint64_t)*out, (void *)(uintptr_t)packed))
		crumbs_memory_allocated(d->ctx, 0, info->memoryTypeIndex, info->allocationSize);
	return r;
}

VKAPI_ATTR void VKAPI_CALL layer_FreeMemory(VkDevice device, VkDeviceMemory memory,
					    const VkAllocationCallbacks *alloc)
{
	DEVICE_OF(device, );
	/* A handle the layer never saw (VK_NULL_HANDLE, or allocated before
	 * it counted) counts nothing. */
	uintptr_t packed = (uintptr_t)handle_map_take(&d->memory, (uint64_t)memory);
	FORWARD(d, FreeMemory, device, memory, alloc);
	if (packed && d->ctx)
		crumbs_memory_freed(d->ctx, 0, (uint32_t)(packed & ((1u << TYPE_BITS) - 1)),
				    (uint64_t)packed >> TYPE_BITS);
}
