/* SPDX-License-Identifier: MIT */
/*
 * helpers.h: what the unit tests share: captures written to memory with the
 * real writer and read back with the real reader, tree lookups, and the
 * comparison of two statistics.
 */
#ifndef CRUMBS_TEST_HELPERS_H
#define CRUMBS_TEST_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../analyze/analyze.h"

struct membuf {
	unsigned char *data;
	size_t len;
	size_t cap;
};

static inline int membuf_write(void *user, const void *data, size_t size)
{
	struct membuf *m = user;
	if (m->len + size > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;
		while (cap < m->len + size)
			cap *= 2;
		unsigned char *d = realloc(m->data, cap);
		if (!d)
			return -1;
		m->data = d;
		m->cap = cap;
	}
	memcpy(m->data + m->len, data, size);
	m->len += size;
	return 0;
}

/* A writer into memory, a chunk each frame when asked. */
static inline crumbs_writer *mem_writer_with(struct membuf *m, uint32_t chunk_bytes,
					     int flush_each_frame)
{
	crumbs_writer *w = NULL;
	struct crumbs_writer_desc d = { 0 };
	memset(m, 0, sizeof(*m));
	d.write = membuf_write;
	d.user = m;
	d.producer = "unit test";
	d.created_unix_s = CRUMBS_CREATED_UNKNOWN;
	d.chunk_bytes = chunk_bytes;
	d.flush_each_frame = flush_each_frame;
	assert_int_equal(crumbs_writer_open(&d, &w), CRUMBS_OK);
	return w;
}

/* A writer into memory; chunk_bytes 0 for the default. */
static inline crumbs_writer *mem_writer(struct membuf *m, uint32_t chunk_bytes)
{
	return mem_writer_with(m, chunk_bytes, 0);
}

static inline uint32_t add_gpu(crumbs_writer *w, const char *name)
{
	uint32_t g;
	struct crumbs_gpu_desc d = { 0 };
	d.name = name;
	d.driver_name = "test driver";
	assert_int_equal(crumbs_writer_add_gpu(w, &d, &g), CRUMBS_OK);
	return g;
}

static inline uint32_t add_queue(crumbs_writer *w, uint32_t gpu, uint32_t flags, float period,
				 uint32_t valid_bits)
{
	uint32_t q;
	struct crumbs_queue_desc d = { 0 };
	d.gpu = gpu;
	d.flags = flags;
	d.timestamp_period = period;
	d.timestamp_valid_bits = valid_bits;
	assert_int_equal(crumbs_writer_add_queue(w, &d, &q), CRUMBS_OK);
	return q;
}

/* A submission with at most one wait and one signal. */
static inline void submit(crumbs_writer *w, uint32_t queue, uint64_t cpu_ns, uint64_t begin_ticks,
			  const struct crumbs_semaphore_op *wait, const struct crumbs_semaphore_op *signal)
{
	struct crumbs_submit_desc d = { 0 };
	d.queue = queue;
	d.cpu_ns = cpu_ns;
	d.gpu_ticks = begin_ticks;
	d.waits = wait;
	d.wait_count = wait ? 1 : 0;
	d.signals = signal;
	d.signal_count = signal ? 1 : 0;
	assert_int_equal(crumbs_writer_submit_begin(w, &d), CRUMBS_OK);
}

/* A capture opened from the writer's bytes; the bytes stay in m. */
static inline reader *mem_read(struct membuf *m, crumbs_writer *w)
{
	reader *c = NULL;
	struct analyze_error e;
	assert_int_equal(crumbs_writer_close(w), CRUMBS_OK);
	enum crumbs_result r = reader_open_memory(m->data, m->len, &c, &e);
	if (r != CRUMBS_OK)
		fail_msg("open: %s", e.text);
	return c;
}

static inline const struct frame *next_frame(reader *c)
{
	const struct frame *f = NULL;
	struct analyze_error e;
	enum crumbs_result r = reader_next_frame(c, &f, &e);
	if (r != CRUMBS_OK)
		fail_msg("read: %s", e.text);
	assert_non_null(f);
	return f;
}

/* The first node named `name` in a preorder walk of the subtree. */
static inline const struct node *find_node(const struct node *n, const char *name)
{
	if (n->name_len == strlen(name) && memcmp(n->name, name, n->name_len) == 0)
		return n;
	for (const struct node *c = n->child; c; c = c->next) {
		const struct node *hit = find_node(c, name);
		if (hit)
			return hit;
	}
	return NULL;
}

static inline const struct node *must_find(const struct node *root, const char *name)
{
	const struct node *n = find_node(root, name);
	if (!n)
		fail_msg("no node named '%s'", name);
	return n;
}

/* Every row of `got` as it is in `want`: its path, calls, summaries and
 * values frame by frame. */
static inline void assert_same_stats(const stats *want, const stats *got)
{
	assert_int_equal(stats_row_count(got), stats_row_count(want));
	for (size_t r = 0; r < stats_row_count(want); r++) {
		const struct stats_row *w = stats_row(want, r), *g = stats_row(got, r);
		struct sbuf wp = { 0 }, gp = { 0 };
		stats_row_path(want, r, &wp);
		stats_row_path(got, r, &gp);
		assert_string_equal(gp.data, wp.data);
		sbuf_release(&wp);
		sbuf_release(&gp);
		assert_int_equal(g->parent, w->parent);
		assert_int_equal(g->calls, w->calls);
		assert_int_equal(g->events, w->events);
		assert_memory_equal(&g->time, &w->time, sizeof(w->time));
		assert_memory_equal(&g->exclusive, &w->exclusive, sizeof(w->exclusive));
		size_t room = (w->time.frames > g->time.frames ? w->time.frames : g->time.frames) + 1;
		int64_t *x = malloc(2 * room * sizeof(*x)), *y = x + room;
		assert_non_null(x);
		for (int e = 0; e < 2; e++) {
			size_t n = stats_row_values(want, r, e, false, x);
			assert_int_equal(stats_row_values(got, r, e, false, y), n);
			assert_memory_equal(x, y, n * sizeof(*x));
		}
		/* And each frame's, found by its index. */
		assert_int_equal(stats_frame_count(got), stats_frame_count(want));
		for (size_t i = 0; i < stats_frame_count(want); i++)
			for (int e = 0; e < 2; e++)
				assert_int_equal(stats_value(got, r, i, e), stats_value(want, r, i, e));
		free(x);
	}
}

#endif
