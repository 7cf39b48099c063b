/* SPDX-License-Identifier: MIT */
/*
 * counters_runs.c: pipeline statistics over a run's frames, for crumbs
 * stats and crumbs diff --counters: per queue and scope path, each
 * statistic's inclusive value in every frame that counted it, kept sorted
 * for medians and the comparison of two runs.
 */
#include "analyze_internal.h"

#include <stdlib.h>
#include <string.h>

/* Rows one run may hold, and the bytes of their paths: past either, new
 * paths are left out (counted). A row keeps its path whole, and a frame
 * at the format's limits nests names deep enough for one chain of scopes
 * to make gigabytes of paths. */
#define COUNTER_ROWS_MAX 65536
#define COUNTER_PATH_BYTES_MAX ((size_t)64 << 20)
/* A row's arrays of values start this small: a row has up to 75 of them,
 * and the rows of one frame at the format's limits are 65536. */
#define VALUES_FIRST 4

static uint64_t path_hash(uint32_t queue, const char *path, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ queue;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)path[i]) * 1099511628211ull;
	return h;
}

/* The row of (queue, path) into *out, made when new (NULL past the
 * rows' limit). false when out of memory. */
static bool row_of(struct counter_runs *r, uint32_t queue, const char *path, size_t len,
		   struct counter_series **out)
{
	*out = NULL;
	if (r->len * 2 >= r->slot_cap) {
		size_t cap = r->slot_cap ? r->slot_cap * 2 : 256;
		uint32_t *slots = malloc(cap * sizeof(*slots));
		if (!slots)
			return false;
		memset(slots, 0xff, cap * sizeof(*slots));
		for (size_t i = 0; i < r->len; i++) {
			const struct counter_series *s = &r->rows[i];
			size_t k = path_hash(s->queue, s->path, s->path_len) & (cap - 1);
			while (slots[k] != UINT32_MAX)
				k = (k + 1) & (cap - 1);
			slots[k] = (uint32_t)i;
		}
		free(r->slots);
		r->slots = slots;
		r->slot_cap = cap;
	}
	size_t k = path_hash(queue, path, len) & (r->slot_cap - 1);
	for (; r->slots[k] != UINT32_MAX; k = (k + 1) & (r->slot_cap - 1)) {
		struct counter_series *s = &r->rows[r->slots[k]];
		if (s->queue == queue && s->path_len == len && memcmp(s->path, path, len) == 0) {
			*out = s;
			return true;
		}
	}
	if (r->len >= COUNTER_ROWS_MAX || len > COUNTER_PATH_BYTES_MAX - r->path_bytes) {
		r->left_out++;
		return true;
	}
	if (!array_room((void **)&r->rows, &r->cap, r->len + 1, sizeof(*r->rows)))
		return false;
	struct counter_series *s = &r->rows[r->len];
	memset(s, 0, sizeof(*s));
	if (!(s->path = malloc(len + 1)))
		return false;
	memcpy(s->path, path, len);
	s->path[len] = '\0';
	r->path_bytes += len;
	s->path_len = len;
	s->queue = queue;
	r->slots[k] = (uint32_t)r->len++;
	*out = s;
	return true;
}

static int64_t clamp(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int64_t sum(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/*
 * Adds node n's inclusive vendor counters to frame `seq`: those its
 * frame's pass took. Scopes of one path in a frame are summed for it, as
 * crumbs stats sums their times; one of them unknown makes the frame's
 * unknown, and what the others gave is taken back. false when out of
 * memory.
 */
static bool vendor_add(struct counter_series *s, const struct node *n, uint64_t seq)
{
	uint32_t set = node_vendor_set(n);
	if (!set || (s->vendor_set && s->vendor_set != set))
		return true;
	s->vendor_set = set;
	bool again = s->vendor_seen == seq;
	if (again && s->vendor_unknown_now)
		return true;
	s->vendor_seen = seq;
	s->vendor_unknown_now = node_vendor_unknown(n, true);
	if (s->vendor_unknown_now) {
		s->vendor_unknown_frames++;
		for (uint32_t k = 0; again && k < s->vendor_len; k++)
			if (s->vendor[k].seen == seq)
				s->vendor[k].frames--;
		return true;
	}
	/* Room for the last counter n has, made at once. */
	uint32_t len = CRUMBS_MAX_SET_COUNTERS;
	uint64_t v;
	while (len > s->vendor_len && !node_vendor_counter(n, true, len - 1, &v))
		len--;
	if (len > s->vendor_len) {
		struct counter_vendor_series *grown = realloc(s->vendor, len * sizeof(*grown));
		if (!grown)
			return false;
		memset(grown + s->vendor_len, 0, (len - s->vendor_len) * sizeof(*grown));
		s->vendor = grown;
		s->vendor_len = len;
	}
	for (uint32_t k = 0; k < s->vendor_len; k++) {
		if (!node_vendor_counter(n, true, k, &v))
			continue;
		struct counter_vendor_series *c = &s->vendor[k];
		if (c->seen == seq) {
			c->values[c->frames - 1] = sum(c->values[c->frames - 1], clamp(v));
			continue;
		}
		if (!array_room_from((void **)&c->values, &c->cap, c->frames + 1, sizeof(int64_t),
				     VALUES_FIRST))
			return false;
		c->values[c->frames++] = clamp(v);
		c->seen = seq;
		s->sorted = false;
	}
	return true;
}

/* Adds node n's inclusive statistics to frame `seq`, summed with those
 * of scopes of its path before it in the frame, as vendor_add. false
 * when out of memory. */
static bool series_add(struct counter_series *s, const struct node *n, uint64_t seq)
{
	if (!vendor_add(s, n, seq))
		return false;
	bool again = s->seen == seq;
	if (again && s->unknown_now)
		return true;
	s->seen = seq;
	s->sorted = false;
	if ((s->unknown_now = node_counters_unknown(n, true))) {
		s->unknown_frames++;
		if (again)
			s->frames--;
		return true;
	}
	for (uint32_t k = 0; k < CRUMBS_PIPELINE_COUNTERS; k++) {
		uint64_t v = 0;
		if (node_counter(n, true, (enum crumbs_pipeline_counter)k, &v))
			s->mask |= 1u << k;
		if (again) {
			s->values[k][s->frames - 1] = sum(s->values[k][s->frames - 1], clamp(v));
			continue;
		}
		size_t cap = s->value_cap[k];
		if (!array_room_from((void **)&s->values[k], &cap, s->frames + 1, sizeof(int64_t),
				     VALUES_FIRST))
			return false;
		s->value_cap[k] = cap;
		s->values[k][s->frames] = clamp(v);
	}
	if (!again)
		s->frames++;
	return true;
}

/* A scope's name as its row has it: below the queue, a run of digits
 * equal to the frame's number is '#', as crumbs stats names rows, so
 * that "Frame 120" of every frame is one row. */
static void add_name(struct sbuf *b, const struct node *n, uint32_t depth, const char *number)
{
	size_t len = strlen(number);
	const char *p = n->name, *end = n->name + n->name_len;
	if (depth == 1)
		for (const char *q = p; q + len <= end; q++)
			if (memcmp(q, number, len) == 0 && (q == p || q[-1] < '0' || q[-1] > '9') &&
			    (q + len == end || q[len] < '0' || q[len] > '9')) {
				sbuf_add(b, p, (size_t)(q - p));
				sbuf_adds(b, "#");
				sbuf_add(b, q + len, (size_t)(end - q - len));
				return;
			}
	sbuf_add(b, p, n->name_len);
}

static bool walk(struct counter_runs *r, uint32_t queue, const struct node *n, uint32_t depth,
		 struct sbuf *path, const char *number)
{
	for (const struct node *c = n->child; c; c = c->next) {
		if (c->kind != CRUMBS_EVENT_SCOPE) {
			/* Events are no rows; scopes inside them are. */
			if (!walk(r, queue, c, depth, path, number))
				return false;
			continue;
		}
		size_t len = path->len;
		if (len)
			sbuf_adds(path, " / ");
		add_name(path, c, depth, number);
		if (path->failed)
			return false;
		if (c->counters) {
			struct counter_series *s;
			if (!row_of(r, queue, path->data, path->len, &s) ||
			    (s && !series_add(s, c, r->frames)))
				return false;
		}
		if (!walk(r, queue, c, depth + 1, path, number))
			return false;
		path->len = len;
		if (path->data)
			path->data[len] = '\0';
	}
	return true;
}

bool counter_runs_add_frame(struct counter_runs *r, const struct frame *f)
{
	char number[24];
	snprintf(number, sizeof(number), "%llu", (unsigned long long)f->number);
	r->frames++; /* this frame's mark, which no row has met yet */
	struct sbuf path = { 0 };
	bool ok = true;
	for (uint32_t i = 0; i < f->queue_count && ok; i++) {
		const struct node *root = f->queues[i].root;
		struct counter_series *s;
		path.len = 0;
		if (!root)
			continue;
		/* The queue's own row (path ""), all its work: a program
		 * nobody changed, recorded at a run's detail, has no scopes. */
		if (root->counters)
			ok = row_of(r, f->queues[i].queue, "", 0, &s) && (!s || series_add(s, root, r->frames));
		if (ok)
			ok = walk(r, f->queues[i].queue, root, 1, &path, number);
	}
	sbuf_release(&path);
	if (!ok)
		r->failed = true;
	return ok;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

void counter_series_sort(struct counter_series *s)
{
	if (s->sorted)
		return;
	for (uint32_t k = 0; k < CRUMBS_PIPELINE_COUNTERS; k++)
		if (s->values[k])
			qsort(s->values[k], s->frames, sizeof(int64_t), cmp_i64);
	for (uint32_t k = 0; k < s->vendor_len; k++)
		if (s->vendor[k].frames)
			qsort(s->vendor[k].values, s->vendor[k].frames, sizeof(int64_t), cmp_i64);
	s->sorted = true;
}

int64_t counter_series_median(struct counter_series *s, enum crumbs_pipeline_counter k)
{
	if (!s->frames || (unsigned)k >= CRUMBS_PIPELINE_COUNTERS || !s->values[k])
		return 0;
	counter_series_sort(s);
	return s->values[k][s->frames / 2];
}

bool counter_series_vendor_median(struct counter_series *s, uint32_t k, int64_t *median)
{
	if (k >= s->vendor_len || !s->vendor[k].frames)
		return false;
	counter_series_sort(s);
	*median = s->vendor[k].values[s->vendor[k].frames / 2];
	return true;
}

const struct counter_series *counter_runs_find(const struct counter_runs *r, uint32_t queue,
					       const char *path, size_t len)
{
	if (!r->slot_cap)
		return NULL;
	size_t k = path_hash(queue, path, len) & (r->slot_cap - 1);
	for (; r->slots[k] != UINT32_MAX; k = (k + 1) & (r->slot_cap - 1)) {
		const struct counter_series *s = &r->rows[r->slots[k]];
		if (s->queue == queue && s->path_len == len && memcmp(s->path, path, len) == 0)
			return s;
	}
	return NULL;
}

void counter_runs_release(struct counter_runs *r)
{
	for (size_t i = 0; i < r->len; i++) {
		free(r->rows[i].path);
		for (uint32_t k = 0; k < CRUMBS_PIPELINE_COUNTERS; k++)
			free(r->rows[i].values[k]);
		for (uint32_t k = 0; k < r->rows[i].vendor_len; k++)
			free(r->rows[i].vendor[k].values);
		free(r->rows[i].vendor);
	}
	free(r->rows);
	free(r->slots);
	memset(r, 0, sizeof(*r));
}
