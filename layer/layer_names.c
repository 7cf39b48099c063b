/* SPDX-License-Identifier: MIT */
/*
 * layer_names.c: the names a program gives its objects through
 * vkSetDebugUtilsObjectNameEXT or vkDebugMarkerSetObjectNameEXT, kept by
 * the layer until the object is destroyed, so that captures can name
 * render passes and leaf events the way the program calls them.
 */
#include "layer_internal.h"

#include <stdlib.h>
#include <string.h>

struct object_name {
	uint64_t handle;   /* 0: empty */
	VkObjectType type;
	char *name;
};

void object_names_init(struct object_names *n)
{
	memset(n, 0, sizeof(*n));
	pthread_mutex_init(&n->lock, NULL);
}

void object_names_release(struct object_names *n)
{
	for (uint32_t i = 0; i < n->cap; i++)
		free(n->entries[i].name);
	free(n->entries);
	n->entries = NULL;
	n->cap = 0;
	pthread_mutex_destroy(&n->lock);
}

/* Only these are looked up; names of other objects cost nothing. */
static bool kept(VkObjectType type)
{
	switch (type) {
	case VK_OBJECT_TYPE_PIPELINE:
	case VK_OBJECT_TYPE_RENDER_PASS:
	case VK_OBJECT_TYPE_FRAMEBUFFER:
	case VK_OBJECT_TYPE_IMAGE:
	case VK_OBJECT_TYPE_IMAGE_VIEW:
	case VK_OBJECT_TYPE_BUFFER:
		return true;
	default:
		return false;
	}
}

/* Handles of different types may be equal (drivers may number each type
 * from 1), so the type is part of the key. */
static uint32_t slot_of(VkObjectType type, uint64_t handle, uint32_t cap)
{
	uint64_t k = handle ^ ((uint64_t)type << 40);
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k & (cap - 1);
}

/* The entry of (type, handle), or the empty one where it would go. */
static struct object_name *find(struct object_names *n, VkObjectType type, uint64_t handle)
{
	uint32_t k = slot_of(type, handle, n->cap);
	while (n->entries[k].handle &&
	       (n->entries[k].handle != handle || n->entries[k].type != type))
		k = (k + 1) & (n->cap - 1);
	return &n->entries[k];
}

static bool grow(struct object_names *n)
{
	uint32_t cap = n->cap ? n->cap * 2 : 64;
	struct object_name *old = n->entries;
	uint32_t old_cap = n->cap;
	struct object_name *entries = calloc(cap, sizeof(*entries));
	if (!entries)
		return false;
	n->entries = entries;
	n->cap = cap;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].handle)
			*find(n, old[i].type, old[i].handle) = old[i];
	free(old);
	return true;
}

/* Removes entry e, moving back the entries after it that probed past it
 * (linear probing without tombstones). */
static void remove_at(struct object_names *n, struct object_name *e)
{
	free(e->name);
	uint32_t hole = (uint32_t)(e - n->entries);
	n->entries[hole] = (struct object_name){ 0, VK_OBJECT_TYPE_UNKNOWN, NULL };
	for (uint32_t k = (hole + 1) & (n->cap - 1); n->entries[k].handle;
	     k = (k + 1) & (n->cap - 1)) {
		uint32_t home = slot_of(n->entries[k].type, n->entries[k].handle, n->cap);
		/* Whether home lies cyclically in (hole, k]: then it stays. */
		bool stays = hole <= k ? (home > hole && home <= k) : (home > hole || home <= k);
		if (stays)
			continue;
		n->entries[hole] = n->entries[k];
		n->entries[k] = (struct object_name){ 0, VK_OBJECT_TYPE_UNKNOWN, NULL };
		hole = k;
	}
	atomic_fetch_sub(&n->count, 1);
}

/* The length of at most `max` bytes of s, not cutting a UTF-8 sequence. */
static size_t cut(const char *s, size_t max)
{
	size_t len = strnlen(s, max + 1);
	if (len <= max)
		return len;
	len = max;
	while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
		len--;
	return len;
}

void object_names_set(struct object_names *n, VkObjectType type, uint64_t handle,
		      const char *name)
{
	if (!handle || !kept(type))
		return;
	char *copy = NULL;
	if (name && *name) {
		size_t len = cut(name, OBJECT_NAME_MAX);
		if (!(copy = malloc(len + 1)))
			return; /* the object stays unnamed */
		memcpy(copy, name, len);
		copy[len] = '\0';
	}
	pthread_mutex_lock(&n->lock);
	struct object_name *e = n->cap ? find(n, type, handle) : NULL;
	if (e && e->handle) {
		if (copy) {
			free(e->name);
			e->name = copy;
		} else {
			remove_at(n, e);
		}
	} else if (copy) {
		if ((atomic_load(&n->count) + 1) * 2 > n->cap && !grow(n)) {
			free(copy);
		} else {
			*find(n, type, handle) = (struct object_name){ handle, type, copy };
			atomic_fetch_add(&n->count, 1);
		}
	}
	pthread_mutex_unlock(&n->lock);
}

void object_names_forget(struct object_names *n, VkObjectType type, uint64_t handle)
{
	if (!handle || !atomic_load_explicit(&n->count, memory_order_relaxed))
		return;
	pthread_mutex_lock(&n->lock);
	if (n->cap) {
		struct object_name *e = find(n, type, handle);
		if (e->handle)
			remove_at(n, e);
	}
	pthread_mutex_unlock(&n->lock);
}

size_t object_names_get(struct object_names *n, VkObjectType type, uint64_t handle, char *buf,
			size_t size)
{
	size_t len = 0;
	if (size)
		buf[0] = '\0';
	if (!handle || !size || !atomic_load_explicit(&n->count, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&n->lock);
	if (n->cap) {
		const struct object_name *e = find(n, type, handle);
		if (e->handle) {
			len = strlen(e->name);
			if (len >= size)
				len = cut(e->name, size - 1);
			memcpy(buf, e->name, len);
			buf[len] = '\0';
		}
	}
	pthread_mutex_unlock(&n->lock);
	return len;
}

VkObjectType object_type_of_report(VkDebugReportObjectTypeEXT type)
{
	switch (type) {
	case VK_DEBUG_REPORT_OBJECT_TYPE_PIPELINE_EXT: return VK_OBJECT_TYPE_PIPELINE;
	case VK_DEBUG_REPORT_OBJECT_TYPE_RENDER_PASS_EXT: return VK_OBJECT_TYPE_RENDER_PASS;
	case VK_DEBUG_REPORT_OBJECT_TYPE_FRAMEBUFFER_EXT: return VK_OBJECT_TYPE_FRAMEBUFFER;
	case VK_DEBUG_REPORT_OBJECT_TYPE_IMAGE_EXT: return VK_OBJECT_TYPE_IMAGE;
	case VK_DEBUG_REPORT_OBJECT_TYPE_IMAGE_VIEW_EXT: return VK_OBJECT_TYPE_IMAGE_VIEW;
	case VK_DEBUG_REPORT_OBJECT_TYPE_BUFFER_EXT: return VK_OBJECT_TYPE_BUFFER;
	default: return VK_OBJECT_TYPE_UNKNOWN;
	}
}
