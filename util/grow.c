/* SPDX-License-Identifier: MIT */
/*
 * grow.c: growing arrays: room for n elements, doubling, and the growable
 * array of fixed-size elements built on it.
 */
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t grow_capacity(size_t cap, size_t n, size_t size, size_t first)
{
	size_t c = cap ? cap : first ? first : 1;
	while (c < n) {
		if (c > SIZE_MAX / 2)
			return 0;
		c *= 2;
	}
	return c > SIZE_MAX / size ? 0 : c;
}

bool array_room_from(void **p, size_t *cap, size_t n, size_t size, size_t first)
{
	if (n <= *cap)
		return true;
	size_t c = grow_capacity(*cap, n, size, first);
	if (!c)
		return false;
	void *d = realloc(*p, c * size);
	if (!d)
		return false;
	*p = d;
	*cap = c;
	return true;
}

bool array_room(void **p, size_t *cap, size_t n, size_t size)
{
	return array_room_from(p, cap, n, size, 64);
}

void *vec_grow(struct vec *v, size_t size)
{
	if (!array_room(&v->data, &v->cap, v->len + 1, size))
		return NULL;
	return (unsigned char *)v->data + size * v->len++;
}

void vec_release(struct vec *v)
{
	free(v->data);
	memset(v, 0, sizeof(*v));
}
