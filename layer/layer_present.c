/* SPDX-License-Identifier: MIT */
/*
 * layer_present.c: presentation under the layer: the extensions that say
 * when a present was shown, enabled where the device has them and the
 * program did not; the swapchains, their present modes and refresh
 * periods; each present given to the recorder (crumbs_present), and when
 * it was shown (crumbs_present_shown), from vkWaitForPresentKHR on a
 * thread of the layer's own or from vkGetPastPresentationTimingGOOGLE at
 * later presents. What the program sees does not change. See
 * layer/LAYER.md, "Presentation".
 */
#include "layer_internal.h"

#include <stdlib.h>
#include <string.h>

/* Swapchains a device has alive at once that the layer follows; those
 * past it are presented to as unknown ones. */
#define SWAPCHAINS_MAX 32
/* Presents waiting for their wait, oldest first; newer ones past it are
 * not waited for. */
#define WAIT_RING 64
/* A present is waited for this long at a time, so that a swapchain being
 * destroyed waits no longer than this for the layer's thread to let go
 * of it; and in all this long before it is given up (a window that is
 * not shown may never show it). */
#define WAIT_SLICE_NS 10000000ull
#define WAIT_GIVE_UP_NS 2000000000ll
/* A present of more swapchains than this gets no ids of the layer's. */
#define PRESENT_IDS_MAX 8

struct swapchain {
	VkSwapchainKHR handle;   /* VK_NULL_HANDLE: a free entry */
	uint8_t mode;            /* enum crumbs_present_mode */
	uint64_t refresh_ns;     /* 0: not known */
	uint64_t next_id;        /* the layer's last id on it */
	bool dying;              /* being destroyed: no more waits */
	uint32_t waiting;        /* the layer's thread waits on it */
	/* Which swapchain of that handle: a handle destroyed and given
	 * again is another swapchain, whose ids start again. */
	uint64_t serial;
};

struct wait_item {
	VkSwapchainKHR swapchain;
	uint64_t serial;
	uint64_t id;
	int64_t since_ns;
};

struct layer_present {
	bool off;            /* CRUMBS_LAYER_PRESENTS=0: presents are not recorded */
	/* How this device's presents say when they were shown. */
	bool own_ids;        /* the layer gives present ids (VkPresentIdKHR) */
	bool program_ids;    /* the program enabled presentId itself */
	bool wait;           /* presents with ids are waited for */
	bool timing;         /* display timing is enabled (refresh periods) */
	bool own_timing;     /* ... by the layer, which reads past timings */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct swapchain swapchains[SWAPCHAINS_MAX];
	struct wait_item ring[WAIT_RING];
	uint32_t ring_head, ring_count;
	uint64_t serials;        /* swapchains seen */
	pthread_t thread;
	bool thread_started;
	bool quit;
};

/* ------------------------------------------------------------------------ */
/* At device creation                                                       */
/* ------------------------------------------------------------------------ */


/* CRUMBS_LAYER_PRESENTS=0: the layer records no present, which `make
 * bench` compares with the presents recorded. */
static bool presents_off(void)
{
	const char *v = getenv("CRUMBS_LAYER_PRESENTS");
	return v && strcmp(v, "0") == 0;
}

bool present_plan(const VkDeviceCreateInfo *ci, const VkExtensionProperties *props,
		  uint32_t count, struct present_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	if (presents_off())
		return false;
	/* Present ids, present wait and display timing all need
	 * VK_KHR_swapchain: a device the program made without it (a
	 * headless renderer) presents nothing, and gets none of them. */
	if (!enabled(ci, VK_KHR_SWAPCHAIN_EXTENSION_NAME))
		return false;
	if (getenv("CRUMBS_LAYER_NO_PRESENT_TIMES")) {
		/* Presents are recorded with their CPU times alone. */
		plan->program_timing = enabled(ci, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME);
		return false;
	}
	bool has_id = has_extension(props, count, VK_KHR_PRESENT_ID_EXTENSION_NAME);
	bool has_wait = has_extension(props, count, VK_KHR_PRESENT_WAIT_EXTENSION_NAME);
	bool has_timing = has_extension(props, count, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME);
	bool asked_id = enabled(ci, VK_KHR_PRESENT_ID_EXTENSION_NAME);
	bool asked_wait = enabled(ci, VK_KHR_PRESENT_WAIT_EXTENSION_NAME);
	plan->program_timing = enabled(ci, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME);
	const VkPhysicalDevicePresentIdFeaturesKHR *pid =
		(const void *)chained(ci->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR);
	const VkPhysicalDevicePresentWaitFeaturesKHR *pwait = (const void *)chained(
		ci->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR);
	plan->program_ids = asked_id && pid && pid->presentId;
	bool program_wait = asked_wait && pwait && pwait->presentWait;
	/* Present wait needs present ids; each feature the program left out
	 * (and did not chain a structure for, which the layer cannot chain
	 * twice) is the layer's to enable. Its support is not asked first:
	 * vkGetPhysicalDeviceFeatures2 is not the layer's to call on an
	 * instance of Vulkan 1.0, and a device that lists the extension and
	 * refuses the feature is created again without them. */
	bool ids = plan->program_ids || (has_id && !pid);
	bool waits = program_wait || (has_wait && !pwait);
	if (ids && waits) {
		plan->wait = true;
		if (!plan->program_ids) {
			plan->own_ids = true;
			plan->id_features = (VkPhysicalDevicePresentIdFeaturesKHR){
				.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR,
				.presentId = VK_TRUE };
			if (!asked_id)
				plan->names[plan->name_count++] = VK_KHR_PRESENT_ID_EXTENSION_NAME;
		}
		if (!program_wait) {
			plan->wait_features = (VkPhysicalDevicePresentWaitFeaturesKHR){
				.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR,
				.presentWait = VK_TRUE };
			plan->own_wait = true;
			if (!asked_wait)
				plan->names[plan->name_count++] = VK_KHR_PRESENT_WAIT_EXTENSION_NAME;
		}
	}
	/* Display timing: its refresh period, and where presents cannot be
	 * waited for, the times they were shown. A program that enabled it
	 * reads its past timings itself, which the layer must not take. */
	if (has_timing && !plan->program_timing) {
		plan->own_timing = true;
		plan->names[plan->name_count++] = VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME;
	}
	return plan->name_count > 0 || plan->own_wait || plan->own_ids;
}

bool present_create_info(const VkDeviceCreateInfo *ci, struct present_plan *plan,
			 VkDeviceCreateInfo *out, const char ***names)
{
	*out = *ci;
	*names = calloc(ci->enabledExtensionCount + PRESENT_PLAN_NAMES, sizeof(**names));
	if (!*names)
		return false;
	for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
		(*names)[i] = ci->ppEnabledExtensionNames[i];
	for (uint32_t i = 0; i < plan->name_count; i++)
		(*names)[ci->enabledExtensionCount + i] = plan->names[i];
	out->enabledExtensionCount = ci->enabledExtensionCount + plan->name_count;
	out->ppEnabledExtensionNames = *names;
	/* The layer's feature structures go in front of the program's. */
	const void *next = ci->pNext;
	if (plan->own_wait) {
		plan->wait_features.pNext = (void *)(uintptr_t)next;
		next = &plan->wait_features;
	}
	if (plan->own_ids) {
		plan->id_features.pNext = (void *)(uintptr_t)next;
		next = &plan->id_features;
	}
	out->pNext = next;
	return true;
}

void present_device_init(struct layer_device *d, const struct present_plan *plan, bool enabled)
{
	struct layer_present *p = calloc(1, sizeof(*p));
	if (!p)
		return; /* presents are recorded without the layer's help */
	if (pthread_mutex_init(&p->lock, NULL) != 0) {
		free(p);
		return;
	}
	if (pthread_cond_init(&p->cond, NULL) != 0) {
		pthread_mutex_destroy(&p->lock);
		free(p);
		return;
	}
	p->off = presents_off();
	if (enabled && !p->off) {
		p->program_ids = plan->program_ids;
		p->own_ids = plan->own_ids;
		p->wait = plan->wait && d->next.WaitForPresentKHR;
		p->own_timing = plan->own_timing && d->next.GetPastPresentationTimingGOOGLE &&
				d->next.GetRefreshCycleDurationGOOGLE;
	}
	p->timing = !p->off && (p->own_timing || plan->program_timing) &&
		    d->next.GetRefreshCycleDurationGOOGLE;
	d->present = p;
}

void present_device_destroy(struct layer_device *d)
{
	struct layer_present *p = d->present;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (p->thread_started)
		pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
	d->present = NULL;
}

const char *present_times_said(const struct layer_device *d)
{
	const struct layer_present *p = d->present;
	if (p && p->wait)
		return "VK_KHR_present_wait";
	if (p && p->own_timing)
		return "VK_GOOGLE_display_timing";
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Swapchains                                                               */
/* ------------------------------------------------------------------------ */

/* Under the lock: the entry of a swapchain, or NULL. */
static struct swapchain *swapchain_find(struct layer_present *p, VkSwapchainKHR sc)
{
	if (!sc)
		return NULL;
	for (uint32_t i = 0; i < SWAPCHAINS_MAX; i++)
		if (p->swapchains[i].handle == sc)
			return &p->swapchains[i];
	return NULL;
}

static uint8_t mode_of(VkPresentModeKHR mode)
{
	switch (mode) {
	case VK_PRESENT_MODE_FIFO_KHR: return CRUMBS_PRESENT_MODE_FIFO;
	case VK_PRESENT_MODE_FIFO_RELAXED_KHR: return CRUMBS_PRESENT_MODE_FIFO_RELAXED;
	case VK_PRESENT_MODE_MAILBOX_KHR: return CRUMBS_PRESENT_MODE_MAILBOX;
	case VK_PRESENT_MODE_IMMEDIATE_KHR: return CRUMBS_PRESENT_MODE_IMMEDIATE;
	default: return CRUMBS_PRESENT_MODE_OTHER;
	}
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateSwapchainKHR(VkDevice device,
							 const VkSwapchainCreateInfoKHR *ci,
							 const VkAllocationCallbacks *alloc,
							 VkSwapchainKHR *out)
{
	DEVICE_OF(device, VK_ERROR_DEVICE_LOST);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_DEVICE_LOST, CreateSwapchainKHR, device, ci, alloc,
				    out);
	struct layer_present *p = d->present;
	if (r != VK_SUCCESS || !p || p->off || !ci || !out || !*out)
		return r;
	uint64_t refresh = 0;
	if (p->timing) {
		/* The program holds the swapchain it is creating: the layer
		 * may ask of it here, on its thread. */
		VkRefreshCycleDurationGOOGLE rc = { 0 };
		if (d->next.GetRefreshCycleDurationGOOGLE(device, *out, &rc) == VK_SUCCESS)
			refresh = rc.refreshDuration;
	}
	pthread_mutex_lock(&p->lock);
	struct swapchain *s = swapchain_find(p, *out);
	for (uint32_t i = 0; !s && i < SWAPCHAINS_MAX; i++)
		if (!p->swapchains[i].handle)
			s = &p->swapchains[i];
	if (s)
		*s = (struct swapchain){ .handle = *out, .mode = mode_of(ci->presentMode),
					 .refresh_ns = refresh, .serial = ++p->serials };
	pthread_mutex_unlock(&p->lock);
	return r;
}

VKAPI_ATTR void VKAPI_CALL layer_DestroySwapchainKHR(VkDevice device, VkSwapchainKHR swapchain,
						      const VkAllocationCallbacks *alloc)
{
	DEVICE_OF(device, );
	struct layer_present *p = d->present;
	if (p && swapchain) {
		/* The layer's thread lets go of it within a slice of its
		 * wait; the program's thread waits for that, and no longer. */
		pthread_mutex_lock(&p->lock);
		struct swapchain *s = swapchain_find(p, swapchain);
		if (s) {
			s->dying = true;
			while (s->waiting)
				pthread_cond_wait(&p->cond, &p->lock);
			*s = (struct swapchain){ 0 };
		}
		pthread_mutex_unlock(&p->lock);
	}
	FORWARD(d, DestroySwapchainKHR, device, swapchain, alloc);
}

/* ------------------------------------------------------------------------ */
/* Waiting for presents, on the layer's thread                              */
/* ------------------------------------------------------------------------ */

static void *waiter_main(void *arg)
{
	struct layer_device *d = arg;
	struct layer_present *p = d->present;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->quit && !p->ring_count)
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->quit)
			break;
		struct wait_item it = p->ring[p->ring_head];
		struct swapchain *s = swapchain_find(p, it.swapchain);
		if (!s || s->dying || s->serial != it.serial) {
			p->ring_head = (p->ring_head + 1) % WAIT_RING;
			p->ring_count--;
			continue;
		}
		s->waiting++;
		pthread_mutex_unlock(&p->lock);
		VkResult r = d->next.WaitForPresentKHR(d->device, it.swapchain, it.id, WAIT_SLICE_NS);
		int64_t now = now_ns();
		if (r == VK_SUCCESS || r == VK_SUBOPTIMAL_KHR)
			crumbs_present_shown(d->ctx, (uint64_t)it.swapchain, it.id,
					     CRUMBS_SHOWN_PRESENT_WAIT, now);
		pthread_mutex_lock(&p->lock);
		s->waiting--;
		pthread_cond_broadcast(&p->cond);
		/* A timeout is waited again, up to a limit; anything else (the
		 * swapchain out of date, the surface or device lost) ends it. */
		if (r != VK_TIMEOUT || now - it.since_ns > WAIT_GIVE_UP_NS) {
			p->ring_head = (p->ring_head + 1) % WAIT_RING;
			p->ring_count--;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Under the lock: present `id` of swapchain s is to be waited for. */
static void wait_later(struct layer_device *d, struct layer_present *p, const struct swapchain *s,
		       uint64_t id, int64_t now)
{
	if (p->ring_count == WAIT_RING)
		return;
	if (!p->thread_started) {
		if (pthread_create(&p->thread, NULL, waiter_main, d) != 0) {
			p->wait = false; /* said nowhere: the presents keep their CPU times */
			return;
		}
		p->thread_started = true;
	}
	p->ring[(p->ring_head + p->ring_count) % WAIT_RING] =
		(struct wait_item){ s->handle, s->serial, id, now };
	p->ring_count++;
	pthread_cond_broadcast(&p->cond);
}

/* ------------------------------------------------------------------------ */
/* Presents                                                                 */
/* ------------------------------------------------------------------------ */

const VkPresentInfoKHR *present_prepare(struct layer_device *d, const VkPresentInfoKHR *info,
					struct present_call *pc)
{
	struct layer_present *p = d->present;
	pc->ids_count = 0;
	pc->program_ids = NULL;
	if (!p || p->off || !info || !info->pSwapchains || !recorder_recording(d->ctx))
		return info;
	const VkPresentIdKHR *given =
		(const void *)chained(info->pNext, VK_STRUCTURE_TYPE_PRESENT_ID_KHR);
	if (given && given->swapchainCount == info->swapchainCount)
		pc->program_ids = given->pPresentIds;
	bool own_ids = p->own_ids && !given;
	/* Display timing's past timings say when presents were shown only
	 * where they cannot be waited for. */
	bool own_times = p->own_timing && !p->wait &&
			 !chained(info->pNext, VK_STRUCTURE_TYPE_PRESENT_TIMES_INFO_GOOGLE);
	if ((!own_ids && !own_times) || info->swapchainCount > PRESENT_IDS_MAX)
		return info;
	pthread_mutex_lock(&p->lock);
	for (uint32_t i = 0; i < info->swapchainCount; i++) {
		struct swapchain *s = swapchain_find(p, info->pSwapchains[i]);
		/* The display timing's presentID is 32 bits: the layer's ids
		 * stay below, so that both name a present alike. */
		pc->ids[i] = s && s->next_id < UINT32_MAX ? ++s->next_id : 0;
		pc->times[i] = (VkPresentTimeGOOGLE){ (uint32_t)pc->ids[i], 0 };
	}
	pthread_mutex_unlock(&p->lock);
	pc->ids_count = info->swapchainCount;
	pc->info = *info;
	const void *next = info->pNext;
	if (own_times) {
		pc->times_info = (VkPresentTimesInfoGOOGLE){
			.sType = VK_STRUCTURE_TYPE_PRESENT_TIMES_INFO_GOOGLE,
			.pNext = next, .swapchainCount = info->swapchainCount, .pTimes = pc->times };
		next = &pc->times_info;
	}
	if (own_ids) {
		pc->id_info = (VkPresentIdKHR){ .sType = VK_STRUCTURE_TYPE_PRESENT_ID_KHR, .pNext = next,
						.swapchainCount = info->swapchainCount,
						.pPresentIds = pc->ids };
		next = &pc->id_info;
	}
	pc->info.pNext = next;
	return &pc->info;
}

/* The past timings of sc the driver holds, each given to the recorder as
 * when its present was shown. On the program's thread, which holds sc
 * while it presents. */
static void read_past_timings(struct layer_device *d, VkSwapchainKHR sc)
{
	VkPastPresentationTimingGOOGLE t[16];
	for (int rounds = 0; rounds < 4; rounds++) {
		uint32_t n = 16;
		VkResult r = d->next.GetPastPresentationTimingGOOGLE(d->device, sc, &n, t);
		if (r != VK_SUCCESS && r != VK_INCOMPLETE)
			return;
		for (uint32_t i = 0; i < n && i < 16; i++)
			if (t[i].presentID && t[i].actualPresentTime <= INT64_MAX)
				crumbs_present_shown(d->ctx, (uint64_t)sc, t[i].presentID,
						     CRUMBS_SHOWN_DISPLAY_TIMING,
						     (int64_t)t[i].actualPresentTime);
		if (r == VK_SUCCESS)
			return;
	}
}

void present_done(struct layer_device *d, const VkPresentInfoKHR *info,
		  const struct present_call *pc, int64_t begin_ns, int64_t end_ns, VkResult r)
{
	struct layer_present *p = d->present;
	if ((p && p->off) || !info || !info->pSwapchains || !recorder_recording(d->ctx))
		return;
	for (uint32_t i = 0; i < info->swapchainCount; i++) {
		VkSwapchainKHR sc = info->pSwapchains[i];
		uint64_t id = i < pc->ids_count ? pc->ids[i] : pc->program_ids ? pc->program_ids[i] : 0;
		struct crumbs_present_info pi = {
			.swapchain = (uint64_t)sc,
			.begin_ns = begin_ns,
			.end_ns = end_ns,
			.present_id = id,
			.result = info->pResults ? info->pResults[i] : r,
		};
		if (p) {
			pthread_mutex_lock(&p->lock);
			const struct swapchain *s = swapchain_find(p, sc);
			if (s) {
				pi.mode = s->mode;
				pi.refresh_ns = s->refresh_ns;
			}
			if (s && p->wait && id && pi.result >= 0)
				wait_later(d, p, s, id, end_ns);
			pthread_mutex_unlock(&p->lock);
		}
		crumbs_present(d->ctx, &pi);
		if (p && p->own_timing && !p->wait && pi.result >= 0)
			read_past_timings(d, sc);
	}
}
