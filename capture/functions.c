/* SPDX-License-Identifier: MIT */
/*
 * functions.c: loads the Vulkan functions the recorder calls, the tables
 * of RECORDER_INSTANCE_FUNCTIONS and RECORDER_DEVICE_FUNCTIONS
 * (capture_internal.h), and checks that each one it needs was found.
 */
#include "capture_internal.h"

enum { REQUIRED = -1, OPTIONAL = 0 };

/* Whether a function of need `need` is loaded for features `features`. */
static bool wanted(long long need, uint32_t features)
{
	return need <= 0 || (features & (uint32_t)need) != 0;
}

/* PFN_vkVoidFunction cast to the function's own type, as ISO C allows
 * between function pointer types. */
#define FILL_INSTANCE(name, pfn, load, alias, need)                   \
	if (!t->name)                                                 \
		t->name = (pfn)gipa(instance, load);                  \
	if (!t->name && (alias))                                      \
		t->name = (pfn)gipa(instance, (const char *)(alias));

void functions_fill_instance(struct instance_fns *t, PFN_vkGetInstanceProcAddr gipa,
			     VkInstance instance)
{
	RECORDER_INSTANCE_FUNCTIONS(FILL_INSTANCE)
}

#define CHECK_INSTANCE(name, pfn, load, alias, need)                                      \
	if (!t->name && (long long)(need) == REQUIRED) {                                  \
		ctx_log(ctx, CRUMBS_LOG_ERROR,                                            \
			"vkGetInstanceProcAddr does not give core functions (%s)", load); \
		return CRUMBS_ERROR_INVALID_ARGUMENT;                                     \
	}

enum crumbs_result functions_load_instance(crumbs_context *ctx, PFN_vkGetInstanceProcAddr gipa,
					   VkInstance instance)
{
	struct instance_fns *t = &ctx->ifn;
	if (gipa)
		functions_fill_instance(t, gipa, instance);
	RECORDER_INSTANCE_FUNCTIONS(CHECK_INSTANCE)
	return CRUMBS_OK;
}

#define LOAD_DEVICE(name, pfn, load, alias, need)                              \
	if (wanted((long long)(need), d->features)) {                          \
		t->name = (pfn)gdpa(d->device, load);                          \
		if (!t->name && (alias))                                       \
			t->name = (pfn)gdpa(d->device, (const char *)(alias)); \
	}                                                                      \
	if (!t->name && (long long)(need) == REQUIRED) {                       \
		ctx_log(ctx, CRUMBS_LOG_ERROR,                                 \
			"device '%s' lacks core Vulkan 1.0 functions (%s)",    \
			d->props.deviceName, load);                            \
		return CRUMBS_ERROR_INVALID_ARGUMENT;                          \
	}

enum crumbs_result functions_load_device(crumbs_context *ctx, struct device_state *d)
{
	struct device_fns *t = &d->fn;
	PFN_vkGetDeviceProcAddr gdpa = ctx->ifn.GetDeviceProcAddr;
	RECORDER_DEVICE_FUNCTIONS(LOAD_DEVICE)
	if ((d->features & CRUMBS_FEATURE_HOST_QUERY_RESET) && !t->ResetQueryPool) {
		ctx_log(ctx, CRUMBS_LOG_WARNING, "host query reset was said to be enabled on '%s', "
			"but vkResetQueryPool is missing; resetting in command buffers",
			d->props.deviceName);
		d->features &= ~(uint32_t)CRUMBS_FEATURE_HOST_QUERY_RESET;
	}
	return CRUMBS_OK;
}
