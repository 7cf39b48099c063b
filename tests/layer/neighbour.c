/* SPDX-License-Identifier: MIT */
/*
 * neighbour.c: a Vulkan layer to stack above the crumbs layer in tests,
 * written the way the loader's early example taught and many layers in
 * use still are (Mesa's overlay, MangoHud, vkBasalt): it asks the next
 * layer for vkCreateInstance and vkCreateDevice with no instance, which
 * the specification answers only for global commands, and passes every
 * other command through untouched. Where it gets no vkCreateDevice, it
 * says so and fails the device's creation; those layers call the NULL
 * they got and crash the program.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#define EXPORT __attribute__((visibility("default")))

/* The next layer's, from the last instance and device created: the test
 * programs create one of each. */
static PFN_vkGetInstanceProcAddr next_gipa;
static PFN_vkGetDeviceProcAddr next_gdpa;

/* The loader's link to the next layer in a create info's chain, of
 * `type`: VkLayerInstanceCreateInfo and VkLayerDeviceCreateInfo begin
 * alike. */
static void *next_link(const void *chain, VkStructureType type)
{
	for (const VkBaseInStructure *s = chain; s; s = s->pNext) {
		VkLayerInstanceCreateInfo *l = (VkLayerInstanceCreateInfo *)(uintptr_t)s;
		if (s->sType == type && l->function == VK_LAYER_LINK_INFO)
			return l;
	}
	return NULL;
}

static VKAPI_ATTR VkResult VKAPI_CALL neighbour_CreateInstance(const VkInstanceCreateInfo *ci,
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
	if (!create)
		return VK_ERROR_INITIALIZATION_FAILED;
	VkResult r = create(ci, alloc, out);
	if (r == VK_SUCCESS)
		next_gipa = gipa;
	return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL neighbour_CreateDevice(VkPhysicalDevice physical,
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
	/* The instance is not looked up: that is the point of this layer. */
	PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(VK_NULL_HANDLE, "vkCreateDevice");
	if (!create) {
		fprintf(stderr, "neighbour layer: the next layer gave no vkCreateDevice to "
				"vkGetInstanceProcAddr(VK_NULL_HANDLE, \"vkCreateDevice\")\n");
		return VK_ERROR_INITIALIZATION_FAILED;
	}
	VkResult r = create(physical, ci, alloc, out);
	if (r == VK_SUCCESS) {
		next_gdpa = gdpa;
		fprintf(stderr, "neighbour layer: a device was created below it\n");
	}
	return r;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL neighbour_GetDeviceProcAddr(VkDevice device,
									   const char *name)
{
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)neighbour_GetDeviceProcAddr;
	return next_gdpa ? next_gdpa(device, name) : NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL neighbour_GetInstanceProcAddr(VkInstance instance,
									     const char *name)
{
	if (strcmp(name, "vkGetInstanceProcAddr") == 0)
		return (PFN_vkVoidFunction)neighbour_GetInstanceProcAddr;
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)neighbour_GetDeviceProcAddr;
	if (strcmp(name, "vkCreateInstance") == 0)
		return (PFN_vkVoidFunction)neighbour_CreateInstance;
	if (strcmp(name, "vkCreateDevice") == 0)
		return (PFN_vkVoidFunction)neighbour_CreateDevice;
	return next_gipa ? next_gipa(instance, name) : NULL;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(
	VkNegotiateLayerInterface *v)
{
	if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT || v->loaderLayerInterfaceVersion < 2)
		return VK_ERROR_INITIALIZATION_FAILED;
	v->loaderLayerInterfaceVersion = 2;
	v->pfnGetInstanceProcAddr = neighbour_GetInstanceProcAddr;
	v->pfnGetDeviceProcAddr = neighbour_GetDeviceProcAddr;
	v->pfnGetPhysicalDeviceProcAddr = NULL;
	return VK_SUCCESS;
}
