/* SPDX-License-Identifier: MIT */
/*
 * layer_devices.c: what the layer knows of the program's instances and
 * devices: the registry that finds them from any of their dispatchable
 * objects, the maps from handles it keeps per device, and its messages.
 */
#include "layer_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INSTANCES 16
#define MAX_DEVICES 16

void *dispatch_key(const void *dispatchable)
{
	return *(void *const *)dispatchable;
}

/* ------------------------------------------------------------------------ */
/* A map from 64-bit handles to small values, under a lock                  */
/* ------------------------------------------------------------------------ */

static uint32_t slot_of(uint64_t key, uint32_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (uint32_t)key & (cap - 1);
}

static bool map_grow(struct handle_map *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 256;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	void **values = calloc(cap, sizeof(*values));
	if (!keys || !values) {
		free(keys);
		free(values);
		return false;
	}
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		uint32_t k = slot_of(m->keys[i], cap);
		while (keys[k])
			k = (k + 1) & (cap - 1);
		keys[k] = m->keys[i];
		values[k] = m->values[i];
	}
	free(m->keys);
	free(m->values);
	m->keys = keys;
	m->values = values;
	m->cap = cap;
	return true;
}

/* Sets key to value (overwritten when a handle comes back); false when
 * out of memory. */
bool handle_map_set(struct handle_map *m, uint64_t key, void *value)
{
	pthread_mutex_lock(&m->lock);
	if ((m->count + 1) * 2 > m->cap && !map_grow(m)) {
		pthread_mutex_unlock(&m->lock);
		return false;
	}
	uint32_t k = slot_of(key, m->cap);
	while (m->keys[k] && m->keys[k] != key)
		k = (k + 1) & (m->cap - 1);
	if (!m->keys[k])
		m->count++;
	m->keys[k] = key;
	m->values[k] = value;
	pthread_mutex_unlock(&m->lock);
	return true;
}

void *handle_map_get(struct handle_map *m, uint64_t key)
{
	void *value = NULL;
	pthread_mutex_lock(&m->lock);
	if (m->cap) {
		uint32_t k = slot_of(key, m->cap);
		while (m->keys[k] && m->keys[k] != key)
			k = (k + 1) & (m->cap - 1);
		if (m->keys[k])
			value = m->values[k];
	}
	pthread_mutex_unlock(&m->lock);
	return value;
}

void *handle_map_take(struct handle_map *m, uint64_t key)
{
	void *value = NULL;
	if (!key)
		return NULL;
	pthread_mutex_lock(&m->lock);
	if (!m->cap)
		goto out;
	uint32_t hole = slot_of(key, m->cap);
	while (m->keys[hole] && m->keys[hole] != key)
		hole = (hole + 1) & (m->cap - 1);
	if (!m->keys[hole])
		goto out;
	value = m->values[hole];
	m->keys[hole] = 0;
	m->values[hole] = NULL;
	m->count--;
	/* Linear probing without tombstones: the entries after the hole that
	 * probed past it move back into it. */
	for (uint32_t k = (hole + 1) & (m->cap - 1); m->keys[k]; k = (k + 1) & (m->cap - 1)) {
		uint32_t home = slot_of(m->keys[k], m->cap);
		/* Whether home lies cyclically in (hole, k]: then it stays. */
		bool stays = hole <= k ? (home > hole && home <= k) : (home > hole || home <= k);
		if (stays)
			continue;
		m->keys[hole] = m->keys[k];
		m->values[hole] = m->values[k];
		m->keys[k] = 0;
		m->values[k] = NULL;
		hole = k;
	}
out:
	pthread_mutex_unlock(&m->lock);
	return value;
}

/* Calls fn on every value, under the map's lock. */
void handle_map_each(struct handle_map *m, void (*fn)(void *value, void *arg), void *arg)
{
	pthread_mutex_lock(&m->lock);
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			fn(m->values[i], arg);
	pthread_mutex_unlock(&m->lock);
}

void handle_map_release(struct handle_map *m, bool free_values)
{
	if (free_values)
		for (uint32_t i = 0; i < m->cap; i++)
			if (m->keys[i])
				free(m->values[i]);
	free(m->keys);
	free(m->values);
	pthread_mutex_destroy(&m->lock);
}

/* ------------------------------------------------------------------------ */
/* Instances and devices                                                    */
/* ------------------------------------------------------------------------ */




static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct layer_instance *layer_instances[MAX_INSTANCES];
static struct layer_device *_Atomic layer_devices[MAX_DEVICES];
static bool trigger_taken; /* one context per process listens */

bool registry_add_instance(struct layer_instance *li)
{
	pthread_mutex_lock(&registry_lock);
	int i = 0;
	while (i < MAX_INSTANCES && layer_instances[i])
		i++;
	if (i < MAX_INSTANCES)
		layer_instances[i] = li;
	pthread_mutex_unlock(&registry_lock);
	if (i == MAX_INSTANCES)
		say("too many Vulkan instances (at most %d)", MAX_INSTANCES);
	return i < MAX_INSTANCES;
}

void registry_remove_instance(struct layer_instance *li)
{
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < MAX_INSTANCES; i++)
		if (layer_instances[i] == li)
			layer_instances[i] = NULL;
	pthread_mutex_unlock(&registry_lock);
}

int registry_add_device(struct layer_device *d)
{
	int i = 0;
	pthread_mutex_lock(&registry_lock);
	while (i < MAX_DEVICES && atomic_load(&layer_devices[i]))
		i++;
	if (i < MAX_DEVICES)
		atomic_store_explicit(&layer_devices[i], d, memory_order_release);
	pthread_mutex_unlock(&registry_lock);
	if (i == MAX_DEVICES) {
		say("too many Vulkan devices (at most %d)", MAX_DEVICES);
		return -1;
	}
	return i;
}

void registry_remove_device(struct layer_device *d)
{
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < MAX_DEVICES; i++)
		if (atomic_load(&layer_devices[i]) == d)
			atomic_store(&layer_devices[i], NULL);
	pthread_mutex_unlock(&registry_lock);
}

bool registry_take_trigger(void)
{
	pthread_mutex_lock(&registry_lock);
	bool listen = !trigger_taken;
	trigger_taken = true;
	pthread_mutex_unlock(&registry_lock);
	return listen;
}

struct layer_instance *instance_of(const void *dispatchable)
{
	void *key = dispatch_key(dispatchable);
	pthread_mutex_lock(&registry_lock);
	struct layer_instance *found = NULL;
	for (int i = 0; i < MAX_INSTANCES && !found; i++)
		if (layer_instances[i] && layer_instances[i]->key == key)
			found = layer_instances[i];
	pthread_mutex_unlock(&registry_lock);
	return found;
}

/* Lock-free: devices are few and change only at creation and destruction,
 * which the program does not overlap with their use. */
struct layer_device *device_of(const void *dispatchable)
{
	void *key = dispatch_key(dispatchable);
	for (int i = 0; i < MAX_DEVICES; i++) {
		struct layer_device *d = atomic_load_explicit(&layer_devices[i], memory_order_acquire);
		if (d && d->key == key)
			return d;
	}
	return NULL;
}

void layer_log(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user;
	if (level == CRUMBS_LOG_INFO && layer_env_quiet(getenv("CRUMBS_LAYER_QUIET")))
		return;
	fprintf(stderr, "%s%s\n", strchr(message, '\n') ? "" : "crumbs: ", message);
	fflush(stderr);
}

void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	layer_log(NULL, CRUMBS_LOG_WARNING, buf);
}
