/*
 * arena.c: the arena that holds a loaded capture's names and a frame's
 * nodes, freed at once, and the growable arrays of decoded records and
 * of scratch.
 */
#include "analyze_internal.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_MIN (64u << 10)

/* Sizes are multiples of 16 (arena_alloc_uninit rounds them). */
void *arena_alloc_block(struct arena *a, size_t size)
{
	struct arena_block *b = a->head;
	if (a->spare && a->spare->size >= size) {
		b = a->spare;
		a->spare = NULL;
	} else {
		/* Doubling keeps the block count logarithmic, and the block
		 * kept by arena_reset near a frame's size. */
		size_t cap = b && b->size < SIZE_MAX / 4 ? 2 * b->size : BLOCK_MIN;
		if (cap < size)
			cap = size;
		if (cap > SIZE_MAX - sizeof(*b))
			return NULL;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->size = cap;
	}
	b->used = size;
	b->prev = a->head;
	a->head = b;
	return b->data;
}

void arena_reset(struct arena *a)
{
	/* Keep the largest block, so a steady stream of similar frames
	 * allocates nothing after the first. */
	struct arena_block *keep = a->spare;
	for (struct arena_block *b = a->head; b;) {
		struct arena_block *prev = b->prev;
		if (!keep || b->size > keep->size) {
			free(keep);
			keep = b;
		} else {
			free(b);
		}
		b = prev;
	}
	a->head = NULL;
	a->spare = keep;
}

void arena_release(struct arena *a)
{
	arena_reset(a);
	free(a->spare);
	a->spare = NULL;
}

const char *arena_copy_string(struct arena *a, const unsigned char *s, size_t len)
{
	char *d = arena_alloc(a, len + 1);
	if (d)
		memcpy(d, s, len);
	return d;
}

bool array_room(void **p, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return true;
	size_t c = *cap ? *cap : 64;
	while (c < n) {
		if (c > SIZE_MAX / 2)
			return false;
		c *= 2;
	}
	if (c > SIZE_MAX / size)
		return false;
	void *d = realloc(*p, c * size);
	if (!d)
		return false;
	*p = d;
	*cap = c;
	return true;
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
