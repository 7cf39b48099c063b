/* SPDX-License-Identifier: MIT */
/*
 * arena.c: the arena that holds a loaded capture's names and a frame's
 * nodes, freed at once, and the growable arrays of decoded records and
 * of scratch, and big blocks in huge pages.
 */
/* MAP_ANONYMOUS and MADV_HUGEPAGE, beside POSIX. */
#define _DEFAULT_SOURCE
#include "analyze_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* ------------------------------------------------------------------------ */
/* Big blocks                                                               */
/* ------------------------------------------------------------------------ */

/* Below this a block is malloc'd: a huge page would be mostly unused.
 * A long run's compressed chunks are larger, so their buffers are mapped
 * too. */
#define BIG_MIN (HUGE_PAGE / 4)

/* size bytes (a multiple of HUGE_PAGE) at an address aligned to
 * HUGE_PAGE, advised for huge pages, or NULL. */
static void *map_aligned(size_t size)
{
#if defined(MAP_ANONYMOUS)
	if (size > SIZE_MAX - HUGE_PAGE)
		return NULL;
	size_t span = size + HUGE_PAGE;
	char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	char *a = (char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + size < p + span)
		munmap(a + size, (size_t)(p + span - (a + size)));
#if defined(MADV_HUGEPAGE)
	madvise(a, size, MADV_HUGEPAGE); /* a wish: without it, 4 KiB pages */
#endif
	return a;
#else
	(void)size;
	return NULL;
#endif
}

bool big_alloc(struct big *b, size_t size)
{
	b->mapped = false;
	b->data = NULL;
	b->size = 0;
	if (size >= BIG_MIN && size <= SIZE_MAX - HUGE_PAGE) {
		size_t whole = (size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
		if ((b->data = map_aligned(whole))) {
			b->mapped = true;
			b->size = whole;
			return true;
		}
	}
	if (!(b->data = malloc(size ? size : 1)))
		return false;
	b->size = size;
	return true;
}

void big_free(struct big *b)
{
	if (b->mapped)
		munmap(b->data, b->size);
	else
		free(b->data);
	b->data = NULL;
	b->size = 0;
	b->mapped = false;
}
