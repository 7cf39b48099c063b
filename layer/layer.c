/* SPDX-License-Identifier: MIT */
/*
 * layer.c: VK_LAYER_CRUMBS_capture, the recorder core as a Vulkan layer
 * for programs that were not changed for crumbs. This file is its face to
 * the loader: the creation and destruction of instances and devices (a
 * recorder per device, or none for a device it cannot profile), the
 * answers of vkGet*ProcAddr made from the one list of intercepts, and
 * submissions and presents. The registry of instances and devices is
 * layer_devices.c's, where frames end layer_frames.c's, command buffers
 * layer_record.c's and layer_events.c's. See layer/LAYER.md.
 */
#include "layer_internal.h"
#include "../util/util.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYER_NAME "VK_LAYER_CRUMBS_capture"
#define EXPORT __attribute__((visibility("default")))

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

/* Whether an instance made from ci enabled
 * VK_KHR_get_physical_device_properties2, which VK_EXT_memory_budget needs
 * where Vulkan 1.1 does not give it. */
static bool memory_props2(const VkInstanceCreateInfo *ci)
{
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
		if (strcmp(ci->ppEnabledExtensionNames[i],
			   VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME) == 0)
			return true;
	return false;
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
		li->key = dispatch_key(*out);
		li->instance = *out;
		li->gipa = gipa;
		li->DestroyInstance = (PFN_vkDestroyInstance)gipa(*out, "vkDestroyInstance");
		li->CreateDevice = (PFN_vkCreateDevice)gipa(*out, "vkCreateDevice");
		li->EnumerateDeviceExtensionProperties = (PFN_vkEnumerateDeviceExtensionProperties)
			gipa(*out, "vkEnumerateDeviceExtensionProperties");
		li->GetPhysicalDeviceFeatures = (PFN_vkGetPhysicalDeviceFeatures)
			gipa(*out, "vkGetPhysicalDeviceFeatures");
		li->GetPhysicalDeviceFeatures2 = (PFN_vkGetPhysicalDeviceFeatures2)
			gipa(*out, "vkGetPhysicalDeviceFeatures2");
		if (!li->GetPhysicalDeviceFeatures2)
			li->GetPhysicalDeviceFeatures2 = (PFN_vkGetPhysicalDeviceFeatures2)
				gipa(*out, "vkGetPhysicalDeviceFeatures2KHR");
		/* The recorder's, now: see crumbs_create_layered. The layer
		 * uses them too. */
		functions_fill_instance(&li->ifn, gipa, *out);
		li->props2 = memory_props2(ci);
		li->api_version = ci->pApplicationInfo ? ci->pApplicationInfo->apiVersion : 0;
	}
	if (!li || !registry_add_instance(li)) {
		/* Without its record the layer cannot even pass calls on. */
		if (!li)
			say("out of memory for a Vulkan instance");
		free(li);
		PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance)gipa(*out, "vkDestroyInstance");
		if (destroy)
			destroy(*out, alloc);
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
	registry_remove_instance(li);
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

bool has_extension(const VkExtensionProperties *props, uint32_t count, const char *name)
{
	for (uint32_t i = 0; props && i < count; i++)
		if (strcmp(props[i].extensionName, name) == 0)
			return true;
	return false;
}

bool enabled(const VkDeviceCreateInfo *ci, const char *name)
{
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
		if (ci->ppEnabledExtensionNames[i] && strcmp(ci->ppEnabledExtensionNames[i], name) == 0)
			return true;
	return false;
}

const VkBaseInStructure *chained(const void *next, VkStructureType type)
{
	for (const VkBaseInStructure *s = next; s; s = s->pNext)
		if (s->sType == type)
			return s;
	return NULL;
}

/* The device extensions of the layers below and the driver, in an array
 * the caller frees; NULL when they cannot be listed. */
static VkExtensionProperties *next_extensions(struct layer_instance *li, VkPhysicalDevice physical,
					      uint32_t *count)
{
	VkExtensionProperties *props = NULL;
	*count = 0;
	for (int tries = 0; tries < 4 && li->EnumerateDeviceExtensionProperties; tries++) {
		uint32_t n = 0;
		if (li->EnumerateDeviceExtensionProperties(physical, NULL, &n, NULL) != VK_SUCCESS)
			break;
		VkExtensionProperties *p = calloc(n ? n : 1, sizeof(*p));
		if (!p)
			break;
		VkResult r = li->EnumerateDeviceExtensionProperties(physical, NULL, &n, p);
		if (r == VK_SUCCESS) {
			*count = n;
			props = p;
			break;
		}
		free(p);
		if (r != VK_INCOMPLETE) /* VK_INCOMPLETE: the list grew; again */
			break;
	}
	return props;
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

/* Whether the program enabled pipelineStatisticsQuery, through
 * pEnabledFeatures or VkPhysicalDeviceFeatures2: then captures count
 * pipeline statistics (with hostQueryReset, which crumbs resets its
 * queries with). */
static bool statistics_enabled(const VkDeviceCreateInfo *ci)
{
	if (ci->pEnabledFeatures && ci->pEnabledFeatures->pipelineStatisticsQuery)
		return true;
	for (const VkBaseInStructure *s = ci->pNext; s; s = s->pNext)
		if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 &&
		    ((const VkPhysicalDeviceFeatures2 *)(const void *)s)->features.pipelineStatisticsQuery)
			return true;
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

/* `own_marker`: VK_EXT_debug_marker is the layer's own (the device lacks
 * it), and its commands are not the next layer's to answer: one below
 * that answers for them anyway would call the driver's, which do not
 * exist. */
static void load_next(struct layer_device *d, bool own_marker)
{
#define LOAD(name, from, alias, alias2, hand_out)                                              \
	d->next.name = own_marker && strcmp(from, VK_EXT_DEBUG_MARKER_EXTENSION_NAME) == 0 ?   \
			       NULL : (PFN_vk##name)next_proc(d, "vk" #name, alias, alias2);
#define LOAD_N(name, from, alias) d->next.name = (PFN_vk##name)next_proc(d, "vk" #name, alias, NULL);
	LAYER_DEVICE_FUNCTIONS(LOAD, LOAD_N)
#undef LOAD
#undef LOAD_N
}

/* The standing recording of a command buffer (capture/standing.c). */
static struct crumbs_cmd *standing_of(void *user, VkCommandBuffer cb)
{
	struct layer_device *d = user;
	struct cb_state *s = handle_map_get(&d->cbs, (uint64_t)(uintptr_t)cb);
	return s ? s->standing : NULL;
}

/* CRUMBS_LAYER_WINDOW_MS=MS: frames of fixed length (layer/LAYER.md);
 * 0 when unset or not a valid length. */
static int64_t window_from_env(void)
{
	static _Atomic bool window_refused; /* said once, not once a device */
	const char *window = getenv("CRUMBS_LAYER_WINDOW_MS");
	int64_t ns = layer_env_window_ns(window);
	if (ns >= 0)
		return ns;
	if (!atomic_exchange(&window_refused, true))
		say("CRUMBS_LAYER_WINDOW_MS='%s' is not a number of milliseconds from 1 to %d; "
		    "frames end at presents and fences", window, LAYER_WINDOW_MAX_MS);
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
	bool listen = registry_take_trigger();
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
						       &d->inst->ifn, &d->ctx);
	free(cq);
	if (r != CRUMBS_OK) {
		d->ctx = NULL;
		say("cannot profile this device (%s); it runs unprofiled", crumbs_result_str(r));
		return;
	}
	/* CRUMBS_LAYER_STANDING=0: command buffers recorded once are not
	 * timed, and cost nothing outside captures (layer/LAYER.md). */
	if (layer_env_standing(getenv("CRUMBS_LAYER_STANDING")))
		d->standing = standing_setup(d->ctx, standing_of, d);
	d->window_lock_ready = pthread_rwlock_init(&d->window_lock, NULL) == 0;
	if (window_ns && d->window_lock_ready)
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
	if (!li->ifn.GetPhysicalDeviceProperties || !li->ifn.GetPhysicalDeviceQueueFamilyProperties)
		return false; /* profile_device says what goes wrong */
	li->ifn.GetPhysicalDeviceProperties(physical, &props);
	li->ifn.GetPhysicalDeviceQueueFamilyProperties(physical, &count, families);
	if (!layer_unprofilable(ci, families, count, props.limits.timestampPeriod,
				getenv("CRUMBS_LAYER_SKIP"), why, sizeof(why)))
		return false;
	say("device '%s' runs unprofiled: %s", props.deviceName, why);
	return true;
}

/*
 * Vendor counters (CRUMBS_PERF_COUNTERS, as `crumbs capture
 * --counters=LIST` sets it): VK_KHR_performance_query with
 * performanceCounterQueryPools, enabled for the program where the device
 * has them (a VkPhysicalDevicePerformanceQueryFeaturesKHR the program
 * chained the layer cannot change, only read).
 */
static bool perf_counters_asked(void)
{
	const char *list = getenv("CRUMBS_PERF_COUNTERS");
	return list && *list;
}


static bool perf_pools_supported(const struct layer_instance *li, VkPhysicalDevice physical)
{
	/* Looked up when the instance was made: the next layer's answer for
	 * an instance function asked later need not be one to call (below
	 * RenderDoc's layer, it is not). Vulkan 1.1's or the extension's. */
	PFN_vkGetPhysicalDeviceFeatures2 features2 = li->GetPhysicalDeviceFeatures2;
	if (!features2 || (li->api_version < VK_API_VERSION_1_1 && !li->props2))
		return false;
	VkPhysicalDevicePerformanceQueryFeaturesKHR pf = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR };
	VkPhysicalDeviceFeatures2 f = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
					.pNext = &pf };
	features2(physical, &f);
	return pf.performanceCounterQueryPools;
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
	 * did not ask for them itself: the EXT name where the device has both,
	 * which every layer below and every capture tool knows, where those
	 * older than the KHR name (2023) warn of it or refuse it. */
	uint32_t features = 0;
	const char *calibrated = NULL;
	uint32_t count = 0;
	VkExtensionProperties *props = next_extensions(li, physical, &count);
	if (!leave && has_extension(props, count, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME))
		calibrated = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
	else if (!leave && has_extension(props, count, "VK_KHR_calibrated_timestamps"))
		calibrated = "VK_KHR_calibrated_timestamps";
	/* VK_EXT_debug_marker is the layer's own where the device lacks it
	 * (see layer_EnumerateDeviceExtensionProperties): not asked of the
	 * layers below. */
	bool own_marker = props && !has_extension(props, count, VK_EXT_DEBUG_MARKER_EXTENSION_NAME);
	/* VK_EXT_memory_budget, where the device has it, for each recorded
	 * frame's usage and budget of every heap (layer_memory.c). */
	const char *budget = NULL;
	if (!leave && has_extension(props, count, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME) &&
	    memory_budget_usable(li, physical))
		budget = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
	struct present_plan plan;
	bool presenting = !leave && present_plan(ci, props, count, &plan);
	/* Pipeline statistics for a program that did not enable their
	 * features (layer_features.c), or enabled the statistics but not
	 * hostQueryReset, which crumbs resets its queries with (vkd3d). */
	struct features_plan fplan = { 0 };
	bool counting = !leave && !(statistics_enabled(ci) && host_reset_enabled(ci)) &&
			features_plan(li, physical, props, count, ci, &fplan);
	/* Vendor counters: the extension added where the program did not
	 * enable it, the feature chained where it chained none. */
	const char *perf = NULL;
	bool perf_feature = false;
	const VkPhysicalDevicePerformanceQueryFeaturesKHR *perf_own = (const void *)chained(
		ci->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR);
	VkPhysicalDevicePerformanceQueryFeaturesKHR perf_features = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR,
		.performanceCounterQueryPools = VK_TRUE };
	if (!leave && perf_counters_asked() &&
	    has_extension(props, count, VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME) &&
	    (perf_own ? perf_own->performanceCounterQueryPools :
			perf_pools_supported(li, physical))) {
		perf_feature = true;
		if (!enabled(ci, VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME))
			perf = VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME;
	}
	free(props);
	if (budget && enabled(ci, budget)) {
		features |= CRUMBS_FEATURE_MEMORY_BUDGET;
		budget = NULL;
	}
	if (calibrated && (enabled(ci, "VK_KHR_calibrated_timestamps") ||
			   enabled(ci, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME))) {
		features |= CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS;
		calibrated = NULL;
	}
	/* names: the program's, less the layer's own, then the one the layer
	 * adds; `asked` of them the program's alone. */
	VkDeviceCreateInfo mine = *ci, asked = *ci;
	const char **names = NULL;
	if ((calibrated || budget || perf || (counting && fplan.extension) ||
	     (own_marker && enabled(ci, VK_EXT_DEBUG_MARKER_EXTENSION_NAME))) &&
	    (names = calloc(ci->enabledExtensionCount + 4, sizeof(*names))) != NULL) {
		uint32_t n = 0;
		for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
			if (!own_marker ||
			    strcmp(ci->ppEnabledExtensionNames[i], VK_EXT_DEBUG_MARKER_EXTENSION_NAME) != 0)
				names[n++] = ci->ppEnabledExtensionNames[i];
		asked.enabledExtensionCount = n;
		asked.ppEnabledExtensionNames = names;
		mine = asked;
		if (calibrated) {
			names[mine.enabledExtensionCount++] = calibrated;
			features |= CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS;
		}
		if (budget) {
			names[mine.enabledExtensionCount++] = budget;
			features |= CRUMBS_FEATURE_MEMORY_BUDGET;
		}
		if (counting && fplan.extension)
			names[mine.enabledExtensionCount++] = fplan.extension;
		if (perf)
			names[mine.enabledExtensionCount++] = perf;
	} else {
		/* Out of memory: without what needed a name. */
		if (counting && fplan.extension)
			counting = false;
		perf_feature = perf_feature && !perf;
	}
	if (counting) {
		VkDeviceCreateInfo before = mine;
		if (features_apply(&fplan, ci, &mine))
			features |= CRUMBS_FEATURE_PIPELINE_STATISTICS | CRUMBS_FEATURE_HOST_QUERY_RESET;
		else
			mine = before, counting = false;
	}
	if (perf_feature) {
		if (!perf_own) {
			perf_features.pNext = (void *)(uintptr_t)mine.pNext;
			mine.pNext = &perf_features;
		}
		features |= CRUMBS_FEATURE_PERFORMANCE_QUERY;
	}
	if (host_reset_enabled(ci))
		features |= CRUMBS_FEATURE_HOST_QUERY_RESET;
	if (statistics_enabled(ci))
		features |= CRUMBS_FEATURE_PIPELINE_STATISTICS;
	/* Presentation's extensions, tried first and left out if the
	 * device refuses them (layer_present.c). */
	VkDeviceCreateInfo with_present;
	const char **present_names = NULL;
	VkResult r = VK_ERROR_EXTENSION_NOT_PRESENT;
	if (presenting && present_create_info(&mine, &plan, &with_present, &present_names))
		r = create(physical, &with_present, alloc, out);
	free(present_names);
	presenting = r == VK_SUCCESS;
	if (!presenting)
		r = create(physical, &mine, alloc, out);
	if (r != VK_SUCCESS && (mine.enabledExtensionCount != asked.enabledExtensionCount ||
				mine.pNext != asked.pNext || counting)) {
		/* The extensions (or features) were the trouble: without them. */
		if (calibrated)
			features &= ~(uint32_t)CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS;
		if (budget)
			features &= ~(uint32_t)CRUMBS_FEATURE_MEMORY_BUDGET;
		if (counting && !host_reset_enabled(ci))
			features &= ~(uint32_t)CRUMBS_FEATURE_HOST_QUERY_RESET;
		if (counting && !statistics_enabled(ci))
			features &= ~(uint32_t)CRUMBS_FEATURE_PIPELINE_STATISTICS;
		features &= ~(uint32_t)CRUMBS_FEATURE_PERFORMANCE_QUERY;
		r = create(physical, &asked, alloc, out);
	}
	free(names);
	features_release(&fplan);
	if (r != VK_SUCCESS)
		return r;

	struct layer_device *d = calloc(1, sizeof(*d));
	if (!d) {
		say("out of memory; the device runs without the layer's help");
		PFN_vkDestroyDevice destroy = (PFN_vkDestroyDevice)gdpa(*out, "vkDestroyDevice");
		destroy(*out, alloc);
		return VK_ERROR_OUT_OF_HOST_MEMORY;
	}
	d->key = dispatch_key(*out);
	d->device = *out;
	d->inst = li;
	d->next.GetDeviceProcAddr = gdpa;
	pthread_mutex_init(&d->pools.lock, NULL);
	pthread_mutex_init(&d->cbs.lock, NULL);
	pthread_mutex_init(&d->modules.lock, NULL);
	pthread_mutex_init(&d->pipelines.lock, NULL);
	pthread_mutex_init(&d->passes.lock, NULL);
	pthread_mutex_init(&d->framebuffers.lock, NULL);
	pthread_mutex_init(&d->views.lock, NULL);
	pthread_mutex_init(&d->memory.lock, NULL);
	object_names_init(&d->names);
	load_next(d, own_marker);
	present_device_init(d, &plan, presenting);

	/* Registered before it is profiled: its slot numbers its captures.
	 * The program cannot use the device before this returns. */
	int i = registry_add_device(d);
	if (i < 0) {
		present_device_destroy(d);
		d->next.DestroyDevice(*out, alloc);
		free(d);
		return VK_ERROR_INITIALIZATION_FAILED;
	}
	if (!leave)
		profile_device(d, physical, ci, features, data->u.pfnSetDeviceLoaderData, i);
	return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL layer_DestroyDevice(VkDevice device,
						      const VkAllocationCallbacks *alloc)
{
	if (!device)
		return;
	struct layer_device *d = device_of(device);
	if (!d)
		return;
	registry_remove_device(d);
	/* First the layer's thread that waits for presents, which gives the
	 * recorder what it learns. */
	present_device_destroy(d);
	/* The program waited for the device to be idle, as it must before
	 * destroying it: what crumbs submitted is done too. */
	crumbs_destroy(d->ctx);
	if (d->window_lock_ready)
		pthread_rwlock_destroy(&d->window_lock);
	d->next.DestroyDevice(device, alloc);
	handle_map_release(&d->pools, false);
	handle_map_release(&d->cbs, true);
	handle_map_release(&d->modules, true);
	handle_map_release(&d->pipelines, true);
	handle_map_release(&d->passes, true);
	handle_map_release(&d->framebuffers, true);
	handle_map_release(&d->views, true);
	handle_map_release(&d->memory, false);
	object_names_release(&d->names);
	free(d->queues);
	free(d);
}

/* ------------------------------------------------------------------------ */
/* Submissions and presents                                                 */
/* ------------------------------------------------------------------------ */

VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit(VkQueue queue, uint32_t count,
							const VkSubmitInfo *submits, VkFence fence)
{
	DEVICE_OF(queue, VK_ERROR_DEVICE_LOST);
	if (!d->ctx)
		return FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, QueueSubmit, queue, count, submits,
				      fence);
	window_enter(d);
	crumbs_cpu_begin(d->ctx, 0, "vkQueueSubmit");
	VkResult r = crumbs_queue_submit(d->ctx, queue, count, submits, fence);
	crumbs_cpu_end(d->ctx);
	window_leave(d);
	if (!d->window_ns && r == VK_SUCCESS && fence && !atomic_load(&d->presented))
		layer_fenced_frame_end(d);
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2(VkQueue queue, uint32_t count,
							 const VkSubmitInfo2 *submits, VkFence fence)
{
	DEVICE_OF(queue, VK_ERROR_DEVICE_LOST);
	if (!d->ctx)
		return FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, QueueSubmit2, queue, count, submits,
				      fence);
	window_enter(d);
	crumbs_cpu_begin(d->ctx, 0, "vkQueueSubmit2");
	VkResult r = crumbs_queue_submit2(d->ctx, queue, count, submits, fence);
	crumbs_cpu_end(d->ctx);
	window_leave(d);
	if (!d->window_ns && r == VK_SUCCESS && fence && !atomic_load(&d->presented))
		layer_fenced_frame_end(d);
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_QueuePresentKHR(VkQueue queue,
							    const VkPresentInfoKHR *info)
{
	DEVICE_OF(queue, VK_ERROR_DEVICE_LOST);
	if (!d->ctx)
		return FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, QueuePresentKHR, queue, info);
	window_enter(d);
	struct present_call pc;
	const VkPresentInfoKHR *sent = present_prepare(d, info, &pc);
	/* Ended before the frame is: the present is the frame's last. */
	crumbs_cpu_wait_begin(d->ctx, 0, "vkQueuePresentKHR");
	int64_t begin = now_ns();
	VkResult r = FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, QueuePresentKHR, queue, sent);
	int64_t end = now_ns();
	crumbs_cpu_end(d->ctx);
	present_done(d, info, &pc, begin, end, r);
	window_leave(d);
	{
		atomic_store(&d->presented, true);
		if (!d->window_ns) /* windows end frames by the clock alone */
			layer_frame_end(d);
	}
	return r;
}

/* crumbs submits on the device's queues when a frame ends: not while the
 * program waits on one or binds sparse memory on it, which Vulkan has it
 * do alone too. */
VKAPI_ATTR VkResult VKAPI_CALL layer_QueueBindSparse(VkQueue queue, uint32_t count,
							    const VkBindSparseInfo *info, VkFence fence)
{
	DEVICE_OF(queue, VK_ERROR_DEVICE_LOST);
	frames_hold(d);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, QueueBindSparse, queue, count, info,
				    fence);
	frames_release(d);
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_QueueWaitIdle(VkQueue queue)
{
	DEVICE_OF(queue, VK_ERROR_DEVICE_LOST);
	frames_hold(d);
	crumbs_cpu_wait_begin(d->ctx, 0, "vkQueueWaitIdle");
	VkResult r = FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, QueueWaitIdle, queue);
	crumbs_cpu_end(d->ctx);
	frames_release(d);
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_DeviceWaitIdle(VkDevice device)
{
	DEVICE_OF(device, VK_ERROR_DEVICE_LOST);
	frames_hold(d);
	crumbs_cpu_wait_begin(d->ctx, 0, "vkDeviceWaitIdle");
	VkResult r = FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, DeviceWaitIdle, device);
	crumbs_cpu_end(d->ctx);
	frames_release(d);
	return r;
}

/* The CPU's waits on the GPU and on the presentation engine, as wait
 * scopes of the thread that waits (vkQueuePresentKHR's, vkQueueWaitIdle's
 * and vkDeviceWaitIdle's too): what they sum to on the thread that
 * presents says whether a frame was bound by the CPU or the GPU. */
VKAPI_ATTR VkResult VKAPI_CALL layer_WaitForFences(VkDevice device, uint32_t count,
							  const VkFence *fences, VkBool32 all,
							  uint64_t timeout)
{
	DEVICE_OF(device, VK_ERROR_DEVICE_LOST);
	crumbs_cpu_wait_begin(d->ctx, 0, "vkWaitForFences");
	VkResult r = FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, WaitForFences, device, count, fences,
				    all, timeout);
	crumbs_cpu_end(d->ctx);
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_WaitSemaphores(VkDevice device,
							   const VkSemaphoreWaitInfo *info,
							   uint64_t timeout)
{
	DEVICE_OF(device, VK_ERROR_DEVICE_LOST);
	crumbs_cpu_wait_begin(d->ctx, 0, "vkWaitSemaphores");
	VkResult r = FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, WaitSemaphores, device, info, timeout);
	crumbs_cpu_end(d->ctx);
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_AcquireNextImageKHR(VkDevice device,
								VkSwapchainKHR swapchain,
								uint64_t timeout, VkSemaphore semaphore,
								VkFence fence, uint32_t *index)
{
	DEVICE_OF(device, VK_ERROR_DEVICE_LOST);
	crumbs_cpu_wait_begin(d->ctx, 0, "vkAcquireNextImageKHR");
	VkResult r = FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, AcquireNextImageKHR, device, swapchain,
				    timeout, semaphore, fence, index);
	crumbs_cpu_end(d->ctx);
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_AcquireNextImage2KHR(VkDevice device,
								 const VkAcquireNextImageInfoKHR *info,
								 uint32_t *index)
{
	DEVICE_OF(device, VK_ERROR_DEVICE_LOST);
	crumbs_cpu_wait_begin(d->ctx, 0, "vkAcquireNextImage2KHR");
	VkResult r = FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, AcquireNextImage2KHR, device, info,
				    index);
	crumbs_cpu_end(d->ctx);
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_SignalSemaphore(VkDevice device,
							    const VkSemaphoreSignalInfo *info)
{
	DEVICE_OF(device, VK_ERROR_DEVICE_LOST);
	if (!d->ctx)
		return FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, SignalSemaphore, device, info);
	window_enter(d);
	VkResult r = crumbs_signal_semaphore(d->ctx, device, info);
	window_leave(d);
	return r;
}

VKAPI_ATTR void VKAPI_CALL layer_CrumbsLayerCRUMBS(void)
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

/*
 * VK_EXT_debug_marker, where the device lacks it, as the layer's own:
 * programs that check for it before they mark their work (Qt's RHI, older
 * engines) then give their markers, which become scopes. The layer
 * answers its commands whatever the program enabled and passes them on
 * only where the device has them, and takes the extension out of the
 * device's creation (layer_CreateDevice). As RenderDoc's layer does.
 */
static const VkExtensionProperties own_extensions[] = {
	{ VK_EXT_DEBUG_MARKER_EXTENSION_NAME, VK_EXT_DEBUG_MARKER_SPEC_VERSION },
};

/* The standard answer of a list: all of it, or as much as fits. */
static VkResult list_out(const VkExtensionProperties *list, uint32_t n, uint32_t *count,
			 VkExtensionProperties *props)
{
	if (!props) {
		*count = n;
		return VK_SUCCESS;
	}
	uint32_t k = *count < n ? *count : n;
	if (k)
		memcpy(props, list, sizeof(*list) * k);
	*count = k;
	return k < n ? VK_INCOMPLETE : VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_EnumerateDeviceExtensionProperties(
	VkPhysicalDevice physical, const char *layer, uint32_t *count, VkExtensionProperties *props)
{
	struct layer_instance *li = physical ? instance_of(physical) : NULL;
	if (!count)
		return VK_ERROR_INITIALIZATION_FAILED;
	if (layer && strcmp(layer, LAYER_NAME) == 0)
		return list_out(own_extensions, 1, count, props);
	if (!li || !li->EnumerateDeviceExtensionProperties)
		return VK_ERROR_INITIALIZATION_FAILED;
	if (layer)
		return li->EnumerateDeviceExtensionProperties(physical, layer, count, props);
	uint32_t n = 0;
	VkExtensionProperties *next = next_extensions(li, physical, &n);
	if (!next) /* passed on as it is */
		return li->EnumerateDeviceExtensionProperties(physical, NULL, count, props);
	VkResult r = VK_SUCCESS;
	if (!has_extension(next, n, VK_EXT_DEBUG_MARKER_EXTENSION_NAME)) {
		VkExtensionProperties *all = realloc(next, sizeof(*next) * (n + 1));
		if (all) {
			next = all;
			next[n++] = own_extensions[0];
		} else {
			r = VK_ERROR_OUT_OF_HOST_MEMORY;
		}
	}
	if (r == VK_SUCCESS)
		r = list_out(next, n, count, props);
	free(next);
	return r;
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
	/* Whatever the instance, even none, which the specification answers
	 * only for global commands: layers above written from the loader's
	 * old example (Mesa's overlay, MangoHud, vkBasalt and more) ask for
	 * the next vkCreateDevice with no instance and call what they get
	 * unchecked. Both find their instance by their handle's. */
	if (strcmp(name, "vkCreateDevice") == 0)
		return (PFN_vkVoidFunction)layer_CreateDevice;
	if (strcmp(name, "vkDestroyInstance") == 0)
		return (PFN_vkVoidFunction)layer_DestroyInstance;
	if (!instance)
		return NULL;
	if (strcmp(name, "vkEnumerateDeviceExtensionProperties") == 0)
		return instance_of(instance) ? (PFN_vkVoidFunction)layer_EnumerateDeviceExtensionProperties
					     : NULL;
	struct layer_instance *li = instance_of(instance);
	if (!li)
		return NULL;
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
