/* SPDX-License-Identifier: MIT */
/*
 * common.c: what every file of the recorder uses: memory through the
 * program's allocation callbacks, the log, the clock, the text of an
 * errno, and finding a queue.
 * It calls no other file of the recorder.
 */
#include "capture_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void *ctx_alloc(crumbs_context *ctx, size_t size)
{
	void *p;
	if (size == 0)
		size = 1;
	if (ctx->has_allocator)
		p = ctx->allocator.pfnAllocation(ctx->allocator.pUserData, size, 16,
						 VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
	else
		p = malloc(size);
	if (p)
		memset(p, 0, size);
	return p;
}

/* Unlike ctx_alloc, the bytes past the old size are not cleared. */
void *ctx_realloc(crumbs_context *ctx, void *p, size_t size)
{
	if (size == 0)
		size = 1;
	if (!p)
		return ctx_alloc(ctx, size);
	if (ctx->has_allocator)
		return ctx->allocator.pfnReallocation(ctx->allocator.pUserData, p, size, 16,
						      VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
	return realloc(p, size);
}

bool ctx_grow(crumbs_context *ctx, void **items, uint32_t *cap, uint32_t need, size_t size,
	      uint32_t first)
{
	if (need <= *cap)
		return true;
	size_t n = grow_capacity(*cap, need, size, first);
	if (!n || n > UINT32_MAX)
		return false;
	void *p = ctx_realloc(ctx, *items, size * n);
	if (!p)
		return false;
	*items = p;
	*cap = (uint32_t)n;
	return true;
}

void ctx_free(crumbs_context *ctx, void *p)
{
	if (!p)
		return;
	if (ctx->has_allocator)
		ctx->allocator.pfnFree(ctx->allocator.pUserData, p);
	else
		free(p);
}

char *ctx_strdup(crumbs_context *ctx, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = ctx_alloc(ctx, n);
	if (d)
		memcpy(d, s, n);
	return d;
}

const VkAllocationCallbacks *ctx_vk_allocator(const crumbs_context *ctx)
{
	return ctx->has_allocator ? &ctx->allocator : NULL;
}

void ctx_log(crumbs_context *ctx, enum crumbs_log_level level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ctx_log_text(ctx, level, buf);
}

void ctx_log_text(crumbs_context *ctx, enum crumbs_log_level level, const char *text)
{
	if (ctx->log)
		ctx->log(ctx->log_user, level, text);
	else
		fprintf(stderr, "%s%s\n", level == CRUMBS_LOG_INFO ? "" : "crumbs: ", text);
}

FRAME_PATH
int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Where the linker put the sections: undefined (null) if it has none. */
extern const char __start_crumbs_record_path[] __attribute__((weak, visibility("hidden")));
extern const char __stop_crumbs_record_path[] __attribute__((weak, visibility("hidden")));
extern const char __start_crumbs_frame_path[] __attribute__((weak, visibility("hidden")));
extern const char __stop_crumbs_frame_path[] __attribute__((weak, visibility("hidden")));

/*
 * A prefetch a cache line of the part's section: the lines come in
 * together while the program goes on (for PATH_FRAME, while the driver
 * submits). Into the second level (T1), which instruction fetches read,
 * not the first level's data side. Once a frame each.
 */
void path_warm(struct capture_set *set, enum path_part part)
{
	if (atomic_fetch_or_explicit(&set->warm, part, memory_order_relaxed) & part)
		return;
	const char *p = part == PATH_RECORD ? __start_crumbs_record_path : __start_crumbs_frame_path;
	const char *end = part == PATH_RECORD ? __stop_crumbs_record_path : __stop_crumbs_frame_path;
	for (; p < end; p += 64)
		__builtin_prefetch(p, 0, 2);
}

const char *vk_result_str(VkResult r)
{
	switch (r) {
	case VK_SUCCESS: return "VK_SUCCESS";
	case VK_NOT_READY: return "VK_NOT_READY";
	case VK_TIMEOUT: return "VK_TIMEOUT";
	case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
	case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
	case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
	case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
	default: return "an error";
	}
}

void default_program_name(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/comm", "r");
	snprintf(buf, size, "program");
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	/* Keep it a safe file name. */
	for (char *p = buf; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	if (!buf[0])
		snprintf(buf, size, "program");
}

void ctx_new_cbs(crumbs_context *ctx, const struct device_state *d, VkCommandBuffer *cbs,
		 uint32_t count)
{
	/* Under a layer, objects made below it need the loader's dispatch
	 * table set by hand. */
	if (ctx->set_loader_data)
		for (uint32_t i = 0; i < count; i++)
			ctx->set_loader_data(d->device, cbs[i]);
}

RECORD_PATH
struct queue_state *queue_find(crumbs_context *ctx, VkQueue queue)
{
	for (uint32_t i = 0; i < ctx->queue_count; i++)
		if (ctx->queues[i].queue == queue)
			return &ctx->queues[i];
	return NULL;
}

FRAME_PATH
bool queue_same_family(const struct queue_state *a, const struct queue_state *b)
{
	return a->device == b->device && a->family == b->family;
}
