/*
 * layer_internal.h: what the layer's files share: the names a program
 * gave its objects (layer_names.c), kept for naming render passes and
 * leaf events in captures.
 */
#ifndef CRUMBS_LAYER_INTERNAL_H
#define CRUMBS_LAYER_INTERNAL_H
#include "capture_internal.h"

/* At most this many bytes of an object's name are kept (the rest is cut
 * at a character boundary): a leaf's name holds its command, parameters
 * and a name, and stays well under the capture format's limit. */
#define OBJECT_NAME_MAX 96

/*
 * Object (type, handle) -> name, for the object types whose names the
 * layer uses: pipelines, render passes, framebuffers, images, image views
 * and buffers. Setting a name takes a lock; looking one up takes it only
 * when some name is held, and is done only while recording a capture.
 */
struct object_names {
	pthread_mutex_t lock;
	_Atomic uint32_t count;   /* names held */
	struct object_name *entries;
	uint32_t cap;             /* a power of two, or 0 */
};

void object_names_init(struct object_names *n);
void object_names_release(struct object_names *n);
/* Sets or, with name NULL or empty, forgets the name of an object of a
 * type the layer keeps names for (others are ignored). */
void object_names_set(struct object_names *n, VkObjectType type, uint64_t handle,
		      const char *name);
/* Forgets the name of an object being destroyed. Costs one atomic load
 * when no name is held. */
void object_names_forget(struct object_names *n, VkObjectType type, uint64_t handle);
/* Copies the name into buf (NUL-terminated) and returns its length; 0
 * when the object has none. */
size_t object_names_get(struct object_names *n, VkObjectType type, uint64_t handle, char *buf,
			size_t size);
/* The VkObjectType of a VK_EXT_debug_marker object type. */
VkObjectType object_type_of_report(VkDebugReportObjectTypeEXT type);

#endif
