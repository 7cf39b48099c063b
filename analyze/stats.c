/* SPDX-License-Identifier: MIT */
/*
 * stats.c: statistics over the frames of a run. Each frame's model adds one
 * value to each row it has (a GPU's frame time, a queue's busy, wait and
 * idle, a scope path's inclusive and exclusive time); at the end every row
 * gets its mean, percentiles, extremes, spread, spikes and share.
 */
#include "analyze_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values are kept in chunks of up to CHUNK, so a long run never needs one
 * huge block, nor the copy of one; the first chunk starts small and
 * doubles, so a row seen in few frames costs little, and where it would
 * reach CHUNK is moved into a whole chunk, as the later ones are made: a row
 * seen in that many frames is mostly seen in all, and growing the first
 * by copying on to CHUNK faulted in many pages of its own (a reading
 * thread grows each row's anew in each piece it reads). Each piece also
 * ends every row in a chunk partly filled, which is why CHUNK is small:
 * the unused room grows with it (docs/BENCHMARKS.md, reading). */
#define CHUNK_SHIFT 10
#define CHUNK (1u << CHUNK_SHIFT)
#define CHUNK_FIRST 64u
_Static_assert(CHUNK % CHUNK_FIRST == 0 && ((CHUNK / CHUNK_FIRST) & (CHUNK / CHUNK_FIRST - 1)) == 0,
	       "the first chunk doubles to CHUNK exactly");

/*
 * Full chunks are cut from regions of REGION_BYTES (big_alloc's, in huge
 * pages where it can), never freed one by one: a run's values are tens of
 * megabytes, and touching each new 4 KiB page costs a page fault, dear on
 * a virtual machine: with 4 KiB pages the faults were a large share of
 * reading a whole run (docs/BENCHMARKS.md, reading).
 */
#define REGION_BYTES (4u << 20)
#define CHUNK_BYTES (CHUNK * sizeof(uint32_t))

struct region {
	struct region *next;
	struct big mem;
	size_t used;
};

/* Regions chunks are cut from, the newest (cut from) first: a statistics'
 * own, or those of the one it shares with (stats_create_sharing), cut
 * from by several threads. The pieces of a run read on threads share the
 * pool of the statistics they are joined into: with pools of their own,
 * each left its last region part used, a sizeable share of what `crumbs
 * stats` keeps of a run. */
struct region_pool {
	pthread_mutex_t lock;
	struct region *regions;
};

/*
 * A row's values by position, in chunks: chunks[k] holds the positions
 * from its start up to the next chunk's start (the last, up to the row's
 * length). A chunk holds CHUNK values, but the first, malloc'd and grown
 * while it has fewer (first_malloced), and the last of a part of the
 * values taken whole from statistics joined after them (stats_append),
 * which holds as many as there were.
 */
struct chunk {
	uint32_t *values;
	uint32_t start;      /* the position of values[0] */
};

struct series {
	uint32_t *tail;      /* the last chunk */
	uint32_t tail_start; /* the position of its first value */
	uint32_t room_end;   /* positions below this have room in it */
	uint32_t last_cap;   /* values the last chunk has room for */
	bool first_malloced;
	struct chunk *chunks;
	uint32_t chunk_count;
	size_t chunk_cap;
};

/* What a row holds besides its public part: its values from frame index
 * `first` on, `len` of them. A scope's exclusive values are kept apart
 * only from the first that differs from its time (`split`): most scopes
 * of a run have no children, and those keep one series, not two. */
struct row_store {
	uint32_t first;
	uint32_t len;
	bool scope;          /* kind == STATS_SCOPE: it has exclusive values */
	bool split;          /* they are in `exclusive`; else they are `time` */
	uint64_t calls;
	uint64_t events;     /* a STATS_BUSY row's: stats_row.events */
	uint32_t mark_line;  /* a timeline's STATS_CPU row: its index in
			      * stats.marks, plus 1; 0: none. Its values are
			      * its frames, one each, not one a frame of the
			      * run: `exclusive` holds the index of the
			      * frame (of the run) each ended in. */
	struct series time;
	struct series exclusive;
};

/* The rows of a queue's scopes in the last frame's preorder: a run's
 * frames mostly repeat their tree, so the k-th scope is most often the
 * row of the last frame's k-th, found without hashing its path. */
struct guess_entry {
	/* The model's name that matched `row` in a frame of names_epoch
	 * s->epoch: the same pointer is the same name, without comparing. */
	const char *seen;
	uint32_t row;
	uint32_t parent; /* the row's, kept here: one line for all three */
};

struct guess {
	struct guess_entry *e;
	uint32_t len;
	size_t cap;
};

/*
 * A timeline's marks: the last one seen, from which the next one's
 * interval runs. Statistics of a part of a run (stats_create_sharing)
 * cannot know the mark before their first: that mark is kept (its time
 * `first_ns`, its frame index `first_fi`), and stats_append puts the
 * interval from the mark before it between the two parts' frames.
 */
struct mark_line {
	uint32_t row;        /* its STATS_CPU row */
	bool have_last;
	int64_t last_ns;
	bool have_first;     /* this statistics' first mark */
	int64_t first_ns;
	uint32_t first_fi;
};

/* A queue's guesses cover its first scopes of a frame, no more: past
 * them rows are found by hashing, so that what a frame's many scopes
 * leave behind stays small. */
#define GUESS_MAX 4096u

struct stats {
	present_run *presents;     /* presentation over the run (present.c) */
	struct arena arena;        /* names, each once */
	const char **names;        /* the names, by hash */
	size_t name_count;
	size_t name_cap;           /* a power of two */
	struct stats_row *rows;
	struct row_store *store;
	size_t row_count;
	size_t row_cap;
	uint32_t *gpu_rows;        /* by GPU number */
	uint32_t gpu_row_count;
	uint32_t *queue_rows;      /* by queue index: its STATS_BUSY row;
				    * STATS_WAIT and STATS_IDLE follow it */
	uint32_t queue_row_count;
	uint32_t *slots;           /* scope rows by (parent, name) */
	size_t slot_cap;           /* a power of two */
	size_t scope_rows;
	uint64_t *numbers;         /* of the frames added */
	size_t frame_count;
	size_t frame_cap;
	struct guess *guesses;     /* by queue index */
	uint32_t guess_count;
	struct flat_scope *flat;   /* a tree's scopes, flattened */
	size_t flat_cap;
	uint32_t *outer;           /* flattening: a record per depth */
	size_t outer_cap;
	uint32_t *flat_rows;       /* the row of each record */
	size_t flat_rows_cap;
	char *name_buf;            /* a depth-1 name with its frame number replaced */
	size_t name_buf_cap;
	bool frame_times_only;     /* GPU rows alone */
	bool by_pipeline;          /* pipeline rows in place of scope rows */
	struct pipeline_groups groups; /* a queue's events by pipeline */
	uint64_t epoch;            /* frame.names_epoch of guess.seen */
	uint32_t cpu_row;          /* "CPU", or STATS_NONE before the first frame */
	bool cpu_seen;             /* a frame held CPU threads, timelines or marks */
	struct mark_line *marks;   /* per timeline with marks */
	uint32_t mark_count;
	size_t mark_cap;
	uint32_t *cpu_stack;       /* a CPU tree's rows, by depth */
	size_t cpu_stack_cap;
	struct region_pool own;    /* the full chunks' memory */
	struct region_pool *pool;  /* where they are cut: &own, or another's */
	struct memory_stats memory; /* video memory, apart: bytes, not ns */
};

/* ------------------------------------------------------------------------ */
/* Series                                                                   */
/* ------------------------------------------------------------------------ */

/* A full chunk's memory, from the newest region or a new one. */
static uint32_t *chunk_new(struct stats *s)
{
	struct region_pool *p = s->pool;
	uint32_t *c = NULL;
	pthread_mutex_lock(&p->lock);
	struct region *g = p->regions;
	if (!g || g->used + CHUNK_BYTES > REGION_BYTES) {
		if (!(g = malloc(sizeof(*g))))
			goto out;
		g->used = 0;
		if (!big_alloc(&g->mem, REGION_BYTES)) {
			free(g);
			goto out;
		}
		g->next = p->regions;
		p->regions = g;
	}
	c = (uint32_t *)(void *)((char *)g->mem.data + g->used);
	g->used += CHUNK_BYTES;
out:
	pthread_mutex_unlock(&p->lock);
	return c;
}

static void regions_release(struct region *g)
{
	while (g) {
		struct region *next = g->next;
		big_free(&g->mem);
		free(g);
		g = next;
	}
}

/* Room for n chunks in se's lists. */
static bool chunks_room(struct series *se, uint32_t n)
{
	return array_room_from((void **)&se->chunks, &se->chunk_cap, n, sizeof(*se->chunks), 4);
}

/* Appends v at pos, the series' length, where the last chunk has no room
 * for it. */
static bool series_set(struct stats *s, struct series *se, uint32_t pos, uint32_t v)
{
	if (se->chunk_count && se->last_cap < CHUNK) {
		/* The first chunk, grown; at CHUNK, moved into a region. */
		uint32_t cap = se->last_cap * 2;
		uint32_t *d = cap == CHUNK ? chunk_new(s) : realloc(se->tail, cap * sizeof(*d));
		if (!d)
			return false;
		if (cap == CHUNK) {
			memcpy(d, se->tail, se->last_cap * sizeof(*d));
			free(se->tail);
			se->first_malloced = false;
		}
		se->chunks[0].values = se->tail = d;
		se->last_cap = cap;
	} else {
		uint32_t c = se->chunk_count;
		bool first = c == 0;
		uint32_t *d = NULL;
		if (!chunks_room(se, c + 1) ||
		    !(d = first ? malloc(CHUNK_FIRST * sizeof(*d)) : chunk_new(s)))
			return false;
		se->chunks[c] = (struct chunk){ d, pos };
		se->tail = d;
		se->tail_start = pos;
		se->last_cap = first ? CHUNK_FIRST : CHUNK;
		if (first)
			se->first_malloced = true;
		se->chunk_count++;
	}
	se->room_end = se->tail_start + se->last_cap;
	se->tail[pos - se->tail_start] = v;
	return true;
}

/* Appends v at pos, the series' length: into the last chunk while it has
 * room, the usual case. */
static inline bool series_push(struct stats *s, struct series *se, uint32_t pos, uint32_t v)
{
	if (pos < se->room_end) {
		se->tail[pos - se->tail_start] = v;
		return true;
	}
	return series_set(s, se, pos, v);
}

/* The last value appended, which is in the last chunk. */
static inline uint32_t *series_last(struct series *se, uint32_t len)
{
	return &se->tail[len - 1 - se->tail_start];
}

/* The end of chunk k's positions in a series of len values. */
static inline uint32_t chunk_end(const struct series *se, uint32_t k, uint32_t len)
{
	return k + 1 < se->chunk_count ? se->chunks[k + 1].start : len;
}

/* The value at pos, of a series longer than pos: in the last chunk, or
 * the chunk found by bisecting their starts. */
static uint32_t series_get(const struct series *se, uint32_t pos)
{
	if (pos >= se->tail_start)
		return se->tail[pos - se->tail_start];
	uint32_t lo = 0, hi = se->chunk_count - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (se->chunks[mid].start <= pos)
			lo = mid;
		else
			hi = mid - 1;
	}
	return se->chunks[lo].values[pos - se->chunks[lo].start];
}

/* The series that holds a row's times, or its exclusive times. */
static const struct series *values_of(const struct row_store *st, bool exclusive)
{
	return exclusive && st->split ? &st->exclusive : &st->time;
}

/* Its malloc'd first chunk and its list; the full chunks go with their
 * regions. */
static void series_release(struct series *se)
{
	if (se->first_malloced)
		free(se->chunks[0].values);
	free(se->chunks);
}

/* Nanoseconds as stored: negative is 0, 4.29 s and more saturate. */
static inline uint32_t clamp_ns(int64_t ns)
{
	if (ns <= 0)
		return 0;
	return ns >= (int64_t)STATS_NS_MAX ? STATS_NS_MAX : (uint32_t)ns;
}

static inline uint32_t add_ns(uint32_t a, uint32_t b)
{
	uint64_t sum = (uint64_t)a + b;
	return sum >= STATS_NS_MAX ? STATS_NS_MAX : (uint32_t)sum;
}

/* Appends the first `len` of from's values to se's, whose length is
 * `at`: as many at once as both the room in se's last chunk and from's
 * chunk allow. */
static bool series_append(struct stats *s, struct series *se, uint32_t at,
			  const struct series *from, uint32_t len)
{
	for (uint32_t k = 0; k < from->chunk_count && from->chunks[k].start < len; k++) {
		const uint32_t *c = from->chunks[k].values, start = from->chunks[k].start;
		uint32_t i = start, end = chunk_end(from, k, len);
		while (i < end) {
			if (at + i >= se->room_end) {
				/* Makes room, with the first value. */
				if (!series_set(s, se, at + i, c[i - start]))
					return false;
				i++;
				continue;
			}
			uint32_t n = se->room_end - (at + i);
			if (n > end - i)
				n = end - i;
			memcpy(&se->tail[at + i - se->tail_start], &c[i - start],
			       n * sizeof(uint32_t));
			i += n;
		}
	}
	return true;
}

/*
 * Appends from's `len` values to se's, whose length is `at`, taking its
 * chunks as they are when they are all cut from regions (the caller takes
 * the regions): from is left without them.
 */
static bool series_take(struct stats *s, struct series *se, uint32_t at, struct series *from,
			uint32_t len)
{
	if (from->first_malloced || !from->chunk_count)
		return series_append(s, se, at, from, len);
	if (!chunks_room(se, se->chunk_count + from->chunk_count))
		return false;
	for (uint32_t k = 0; k < from->chunk_count; k++) {
		se->chunks[se->chunk_count++] = (struct chunk){ from->chunks[k].values,
								 at + from->chunks[k].start };
	}
	se->tail = from->tail;
	se->tail_start = at + from->tail_start;
	se->last_cap = from->last_cap;
	se->room_end = se->tail_start + se->last_cap;
	from->chunk_count = 0;
	from->tail = NULL;
	from->room_end = from->tail_start = from->last_cap = 0;
	return true;
}

/* A scope's exclusive values apart from its times, from now on: a copy
 * of the times so far, which they have equalled. */
static bool split_exclusive(struct stats *s, struct row_store *st)
{
	if (!series_append(s, &st->exclusive, 0, &st->time, st->len))
		return false;
	st->split = true;
	return true;
}

/* Absent values for the frames from the row's last up to frame index fi. */
static inline bool fill_absent(struct stats *s, struct row_store *st, uint32_t fi)
{
	for (; st->first + st->len < fi; st->len++)
		if (!series_push(s, &st->time, st->len, STATS_ABSENT) ||
		    (st->split && !series_push(s, &st->exclusive, st->len, STATS_ABSENT)))
			return false;
	return true;
}

/*
 * Adds a value to row r for frame index fi: the row's first value in that
 * frame is stored (after absent values for the frames it missed), a later
 * one of the same frame is summed with it.
 */
static inline __attribute__((always_inline)) bool row_add(struct stats *s, uint32_t r, uint32_t fi, uint32_t time_ns,
		    uint32_t exclusive_ns)
{
	struct row_store *st = &s->store[r];

	st->calls++;
	if (st->scope && !st->split && exclusive_ns != time_ns && !split_exclusive(s, st))
		return false;
	bool split = st->split;
	uint32_t len = st->len;
	if (len && st->first + len == fi) {
		/* A value in the frame before, none yet in this one: most. */
		if (!series_push(s, &st->time, len, time_ns) ||
		    (split && !series_push(s, &st->exclusive, len, exclusive_ns)))
			return false;
		st->len = len + 1;
		return true;
	}
	if (len && st->first + len - 1 == fi) {
		uint32_t *t = series_last(&st->time, st->len);
		*t = add_ns(*t, time_ns);
		if (split) {
			uint32_t *e = series_last(&st->exclusive, st->len);
			*e = add_ns(*e, exclusive_ns);
		}
		return true;
	}
	if (st->len == 0)
		st->first = fi;
	if (!fill_absent(s, st, fi) || !series_push(s, &st->time, st->len, time_ns) ||
	    (split && !series_push(s, &st->exclusive, st->len, exclusive_ns)))
		return false;
	st->len++;
	return true;
}

/* ------------------------------------------------------------------------ */
/* Rows                                                                     */
/* ------------------------------------------------------------------------ */

static uint64_t bytes_hash(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* A NUL-terminated copy of the name, one for all the rows that have it:
 * rows of one name in many places (a queue's "Frame #" in every GPU, a
 * pass at every depth) cost it once. NULL when out of memory. */
static const char *name_intern(struct stats *s, const char *name, size_t len)
{
	if ((s->name_count + 1) * 2 > s->name_cap) {
		size_t cap = s->name_cap ? s->name_cap * 2 : 256;
		const char **d = calloc(cap, sizeof(*d));
		if (!d)
			return NULL;
		for (size_t i = 0; i < s->name_cap; i++) {
			const char *n = s->names[i];
			if (!n)
				continue;
			size_t j = bytes_hash(n, strlen(n)) & (cap - 1);
			while (d[j])
				j = (j + 1) & (cap - 1);
			d[j] = n;
		}
		free(s->names);
		s->names = d;
		s->name_cap = cap;
	}
	size_t mask = s->name_cap - 1, j = bytes_hash(name, len) & mask;
	for (; s->names[j]; j = (j + 1) & mask)
		if (strncmp(s->names[j], name, len) == 0 && s->names[j][len] == '\0')
			return s->names[j];
	const char *n = arena_copy_string(&s->arena, (const unsigned char *)name, len);
	if (n) {
		s->names[j] = n;
		s->name_count++;
	}
	return n;
}

static uint32_t row_new(struct stats *s, enum stats_kind kind, uint32_t gpu, uint32_t queue,
			uint32_t parent, uint32_t depth, const char *name, size_t name_len)
{
	if (s->row_count >= STATS_NONE - 1)
		return STATS_NONE;
	if (s->row_count == s->row_cap) {
		/* Two arrays of one length, grown alike. */
		size_t rows_cap = s->row_cap, store_cap = s->row_cap;
		if (!array_room((void **)&s->rows, &rows_cap, s->row_count + 1, sizeof(*s->rows)) ||
		    !array_room((void **)&s->store, &store_cap, s->row_count + 1, sizeof(*s->store)))
			return STATS_NONE;
		s->row_cap = rows_cap;
	}
	const char *n = name_intern(s, name, name_len);
	if (!n)
		return STATS_NONE;

	uint32_t r = (uint32_t)s->row_count++;
	s->rows[r] = (struct stats_row){
		.kind = kind, .gpu = gpu, .queue = queue, .parent = parent,
		.first_child = STATS_NONE, .next_sibling = STATS_NONE, .depth = depth,
		.name = n, .name_len = name_len,
	};
	memset(&s->store[r], 0, sizeof(s->store[r]));
	s->store[r].scope = kind == STATS_SCOPE || kind == STATS_CPU_SCOPE || kind == STATS_TASK ||
			    kind == STATS_STATE;
	/* Children in order of first appearance: append to the parent's
	 * list. Rows are few next to frames, so walking it is cheap. */
	if (parent != STATS_NONE) {
		uint32_t *link = &s->rows[parent].first_child;
		while (*link != STATS_NONE)
			link = &s->rows[*link].next_sibling;
		*link = r;
	}
	return r;
}

static bool grow_index(uint32_t **a, uint32_t *count, uint32_t need)
{
	if (need <= *count)
		return true;
	uint32_t *d = realloc(*a, need * sizeof(*d));
	if (!d)
		return false;
	for (uint32_t i = *count; i < need; i++)
		d[i] = STATS_NONE;
	*a = d;
	*count = need;
	return true;
}

static uint32_t gpu_row(struct stats *s, uint32_t gpu)
{
	if (gpu >= 1u << 16 || !grow_index(&s->gpu_rows, &s->gpu_row_count, gpu + 1))
		return STATS_NONE;
	if (s->gpu_rows[gpu] == STATS_NONE) {
		char name[32];
		int n = snprintf(name, sizeof(name), "GPU %u", gpu);
		s->gpu_rows[gpu] = row_new(s, STATS_GPU, gpu, STATS_NONE, STATS_NONE, 0, name,
					   (size_t)n);
	}
	return s->gpu_rows[gpu];
}

/* The STATS_BUSY row of queue q (of that GPU and name), its STATS_WAIT and
 * STATS_IDLE after it. */
static uint32_t queue_rows_named(struct stats *s, uint32_t q, uint32_t gpu, const char *name,
				 size_t len)
{
	if (q >= 1u << 16 || !grow_index(&s->queue_rows, &s->queue_row_count, q + 1))
		return STATS_NONE;
	if (s->queue_rows[q] == STATS_NONE) {
		uint32_t g = gpu_row(s, gpu);
		if (g == STATS_NONE)
			return STATS_NONE;
		uint32_t busy = row_new(s, STATS_BUSY, gpu, q, g, 0, name, len);
		if (busy == STATS_NONE || row_new(s, STATS_WAIT, gpu, q, g, 0, name, len) == STATS_NONE ||
		    row_new(s, STATS_IDLE, gpu, q, g, 0, name, len) == STATS_NONE)
			return STATS_NONE;
		s->queue_rows[q] = busy;
	}
	return s->queue_rows[q];
}

/* The queue's STATS_BUSY row, its STATS_WAIT and STATS_IDLE after it. */
static uint32_t queue_row(struct stats *s, const struct capture_meta *meta, uint32_t q)
{
	if (q >= meta->queue_count)
		return STATS_NONE;
	const struct capture_queue *cq = &meta->queues[q];
	return queue_rows_named(s, q, cq->gpu, cq->name, strnlen(cq->name, sizeof(cq->name)));
}

static uint64_t name_hash(uint32_t parent, const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull);
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* The slot of the scope (or pipeline) row of that name below `parent`, or
 * of the empty slot where it would go; slot_cap must be above 0. */
static size_t scope_slot(const struct stats *s, enum stats_kind kind, uint32_t parent,
			 const char *name, size_t len)
{
	size_t mask = s->slot_cap - 1;
	size_t j = name_hash(parent, name, len) & mask;
	for (;; j = (j + 1) & mask) {
		uint32_t r = s->slots[j];
		if (r == STATS_NONE)
			return j;
		const struct stats_row *row = &s->rows[r];
		if (row->parent == parent && row->kind == kind && row->name_len == len &&
		    memcmp(row->name, name, len) == 0)
			return j;
	}
}

static bool slots_grow(struct stats *s)
{
	size_t cap = s->slot_cap ? s->slot_cap * 2 : 256;
	uint32_t *slots = malloc(cap * sizeof(*slots));
	if (!slots)
		return false;
	for (size_t i = 0; i < cap; i++)
		slots[i] = STATS_NONE;
	for (size_t i = 0; i < s->slot_cap; i++) {
		uint32_t r = s->slots[i];
		if (r == STATS_NONE)
			continue;
		const struct stats_row *row = &s->rows[r];
		size_t j = name_hash(row->parent, row->name, row->name_len) & (cap - 1);
		while (slots[j] != STATS_NONE)
			j = (j + 1) & (cap - 1);
		slots[j] = r;
	}
	free(s->slots);
	s->slots = slots;
	s->slot_cap = cap;
	return true;
}

/* The scope (or pipeline) row of that name below `parent`, made when
 * new. */
static uint32_t named_row(struct stats *s, enum stats_kind kind, uint32_t parent,
			  const char *name, size_t len)
{
	if ((s->scope_rows + 1) * 2 > s->slot_cap && !slots_grow(s))
		return STATS_NONE;
	size_t j = scope_slot(s, kind, parent, name, len);
	if (s->slots[j] != STATS_NONE)
		return s->slots[j];
	/* The CPU's rows without a parent ("CPU", "Tasks") are at depth 0,
	 * of no GPU or queue. */
	const struct stats_row *p = parent != STATS_NONE ? &s->rows[parent] : NULL;
	bool nested = p && (p->kind == STATS_SCOPE || p->kind == STATS_CPU_SCOPE ||
			    p->kind == STATS_TASK || p->kind == STATS_STATE);
	/* A thread or a timeline is at depth 0, as a queue's rows are. */
	bool top = !p || p->kind == STATS_CPU || p->kind == STATS_TASKS;
	uint32_t depth = top ? 0 : nested ? p->depth + 1 : 1;
	uint32_t r = row_new(s, kind, p ? p->gpu : STATS_NONE, p ? p->queue : STATS_NONE, parent,
			     depth, name, len);
	if (r == STATS_NONE)
		return STATS_NONE;
	s->slots[j] = r;
	s->scope_rows++;
	return r;
}

/* Whether a[0..n) and b[0..n) are the same bytes: names are short, and a
 * call of memcmp per frame for each showed in profiles of `crumbs stats`. */
static inline bool same_bytes(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * A depth-1 name with every run of digits equal to the frame's number
 * replaced by '#': the number changes each frame, the scope does not.
 * Returns the name itself when there is none.
 */
static const char *frame_name(struct stats *s, const char *name, size_t *len,
			      const char *number, size_t number_len)
{
	size_t n = *len, out = 0;
	bool found = false;

	for (size_t i = 0; i < n; i++)
		if (name[i] >= '0' && name[i] <= '9') {
			size_t j = i;
			while (j < n && name[j] >= '0' && name[j] <= '9')
				j++;
			if (j - i == number_len && same_bytes(name + i, number, number_len))
				found = true;
			i = j;
		}
	if (!found)
		return name;
	if (s->name_buf_cap < n) {
		char *d = realloc(s->name_buf, n);
		if (!d)
			return NULL;
		s->name_buf = d;
		s->name_buf_cap = n;
	}
	for (size_t i = 0; i < n;) {
		if (name[i] >= '0' && name[i] <= '9') {
			size_t j = i;
			while (j < n && name[j] >= '0' && name[j] <= '9')
				j++;
			if (j - i == number_len && same_bytes(name + i, number, number_len)) {
				s->name_buf[out++] = '#';
			} else {
				memcpy(s->name_buf + out, name + i, j - i);
				out += j - i;
			}
			i = j;
		} else {
			s->name_buf[out++] = name[i++];
		}
	}
	*len = out;
	return s->name_buf;
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

const char *stats_kind_name(enum stats_kind kind)
{
	static const char *const names[] = { "gpu", "busy", "wait", "idle", "scope", "pipeline",
					     "cpu", "thread", "cpu_scope", "tasks", "timeline",
					     "task", "state" };
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

bool stats_kind_named(enum stats_kind kind)
{
	return kind == STATS_SCOPE || kind == STATS_PIPELINE || kind == STATS_CPU_SCOPE ||
	       kind == STATS_TASK || kind == STATS_STATE;
}

bool stats_kind_frame_time(enum stats_kind kind)
{
	return kind == STATS_GPU || kind == STATS_CPU;
}

bool stats_kind_cpu(enum stats_kind kind)
{
	return kind >= STATS_CPU;
}

stats *stats_create(void)
{
	stats *s = calloc(1, sizeof(struct stats));
	if (!s)
		return NULL;
	if (!(s->presents = present_run_create()) || pthread_mutex_init(&s->own.lock, NULL) != 0) {
		present_run_free(s->presents);
		free(s);
		return NULL;
	}
	s->pool = &s->own;
	s->cpu_row = STATS_NONE;
	return s;
}

stats *stats_create_sharing(stats *owner)
{
	stats *s = stats_create();
	if (s) {
		s->pool = owner->pool;
		s->by_pipeline = owner->by_pipeline;
	}
	return s;
}

void stats_free(stats *s)
{
	if (!s)
		return;
	present_run_free(s->presents);
	for (size_t i = 0; i < s->row_count; i++) {
		series_release(&s->store[i].time);
		series_release(&s->store[i].exclusive);
	}
	regions_release(s->own.regions);
	pthread_mutex_destroy(&s->own.lock);
	arena_release(&s->arena);
	free(s->names);
	free(s->rows);
	free(s->store);
	free(s->gpu_rows);
	free(s->queue_rows);
	free(s->slots);
	free(s->numbers);
	for (uint32_t i = 0; i < s->guess_count; i++)
		free(s->guesses[i].e);
	free(s->guesses);
	free(s->flat);
	free(s->outer);
	free(s->flat_rows);
	free(s->name_buf);
	free(s->marks);
	free(s->cpu_stack);
	pipeline_groups_release(&s->groups);
	memory_stats_release(&s->memory);
	free(s);
}

/*
 * A queue's tree as reader_flat_scopes gives it, into s->flat, walked in
 * preorder without recursion (a tree may be as deep as a capture's
 * nesting): outer[d] is the scope record around a node at depth d + 1.
 * An event's time is the scope's around it.
 */
static bool flatten_tree(struct stats *s, const struct node *root, uint32_t *count)
{
	uint32_t depth = 1, n_out = 0;
	const struct node *n = root->child;

	if (!array_room((void **)&s->outer, &s->outer_cap, 1, sizeof(*s->outer)))
		return false;
	s->outer[0] = FLAT_NONE;
	while (n) {
		uint32_t outer = s->outer[depth - 1], here = outer;
		if (n->kind == CRUMBS_EVENT_SCOPE) {
			if (!array_room((void **)&s->flat, &s->flat_cap, n_out + 1, sizeof(*s->flat)))
				return false;
			s->flat[n_out] = (struct flat_scope){
				.name = n->name, .name_len = n->name_len, .parent = outer,
				.depth = depth, .exclusive_ns = n->exclusive_ns,
				.inclusive_ns = n->inclusive_ns,
			};
			here = n_out++;
		} else if (outer != FLAT_NONE) {
			s->flat[outer].exclusive_ns += n->exclusive_ns;
		}
		if (n->child) {
			if (!array_room((void **)&s->outer, &s->outer_cap, depth + 1, sizeof(*s->outer)))
				return false;
			s->outer[depth++] = here;
			n = n->child;
			continue;
		}
		while (n != root && !n->next) {
			n = n->parent;
			depth--;
		}
		n = n == root ? NULL : n->next;
	}
	*count = n_out;
	return true;
}

/*
 * Adds a queue's scopes, `count` records in preorder, under its busy row.
 * rows[i] is the row of record i, the parent of those after it.
 */
static bool add_scopes(struct stats *s, uint32_t fi, uint32_t busy, struct guess *guess,
		       const struct flat_scope *recs, uint32_t count, const char *number,
		       size_t number_len)
{
	if (!array_room((void **)&s->flat_rows, &s->flat_rows_cap, count, sizeof(*s->flat_rows)))
		return false;
	for (uint32_t k = 0; k < count; k++) {
		const struct flat_scope *n = &recs[k];
		uint32_t parent = n->parent == FLAT_NONE ? busy : s->flat_rows[n->parent];
		uint32_t here;
		size_t len = n->name_len;
		const char *name = n->name;
		if (n->depth == 1 && !(name = frame_name(s, name, &len, number, number_len)))
			return false;
		struct guess_entry *ge = k < guess->len ? &guess->e[k] : NULL;
		if (ge && ge->seen == name && ge->parent == parent && name) {
			here = ge->row;
		} else if (ge && ge->row != STATS_NONE && ge->parent == parent &&
			   s->rows[ge->row].name_len == len &&
			   same_bytes(s->rows[ge->row].name, name, len)) {
			here = ge->row;
			/* Not a name with its frame number replaced, whose
			 * buffer is reused. */
			ge->seen = s->epoch && name == n->name ? name : NULL;
		} else {
			here = named_row(s, STATS_SCOPE, parent, name, len);
			if (k < GUESS_MAX) {
				if (!array_room((void **)&guess->e, &guess->cap, (size_t)k + 1,
						sizeof(*guess->e)))
					return false;
				guess->e[k] = (struct guess_entry){ NULL, here, parent };
				if (k >= guess->len)
					guess->len = k + 1;
			}
		}
		if (here == STATS_NONE ||
		    !row_add(s, here, fi, clamp_ns(n->inclusive_ns), clamp_ns(n->exclusive_ns)))
			return false;
		s->flat_rows[k] = here;
	}
	return true;
}

/* A queue's events grouped by pipeline, each group a value of its row
 * below the queue's busy row: the events' exclusive time summed, and as
 * many calls as events. */
static bool add_pipelines(struct stats *s, uint32_t fi, uint32_t busy, const struct node *root)
{
	pipeline_groups_clear(&s->groups);
	pipeline_groups_add(&s->groups, root);
	if (s->groups.failed)
		return false;
	for (size_t i = 0; i < s->groups.len; i++) {
		const struct pipeline_group *p = &s->groups.data[i];
		const char *name = p->name_len ? p->name : PIPELINE_NONE_NAME;
		size_t len = p->name_len ? p->name_len : strlen(PIPELINE_NONE_NAME);
		uint32_t r = named_row(s, STATS_PIPELINE, busy, name, len);
		uint32_t ns = clamp_ns(p->exclusive_ns);
		if (r == STATS_NONE || !row_add(s, r, fi, ns, ns))
			return false;
		s->store[r].calls += p->calls - 1; /* row_add counted one */
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* The CPU                                                                  */
/* ------------------------------------------------------------------------ */

#define CPU_ROW_NAME "CPU"
#define TASKS_ROW_NAME "Tasks"
#define UNNAMED_THREAD_NAME "thread #"

static uint32_t cpu_frame_row(struct stats *s)
{
	if (s->cpu_row == STATS_NONE)
		s->cpu_row = named_row(s, STATS_CPU, STATS_NONE, CPU_ROW_NAME,
				       strlen(CPU_ROW_NAME));
	return s->cpu_row;
}

/* Appends one frame of another kind, v, ended in frame index fi, to
 * row r. */
static bool instance_add(struct stats *s, uint32_t r, uint32_t fi, uint32_t v)
{
	struct row_store *st = &s->store[r];
	if (st->len == UINT32_MAX - 1 || !series_push(s, &st->time, st->len, v) ||
	    !series_push(s, &st->exclusive, st->len, fi))
		return false;
	st->len++;
	st->calls++;
	return true;
}

/* The mark line of a STATS_CPU row of a timeline, made when new (its
 * index in s->marks), or UINT32_MAX when out of memory. */
static uint32_t mark_line_of(struct stats *s, uint32_t row)
{
	struct row_store *st = &s->store[row];
	if (st->mark_line)
		return st->mark_line - 1;
	if (!array_room((void **)&s->marks, &s->mark_cap, (size_t)s->mark_count + 1,
			sizeof(*s->marks)))
		return UINT32_MAX;
	s->marks[s->mark_count] = (struct mark_line){ .row = row };
	st->mark_line = ++s->mark_count;
	return s->mark_count - 1;
}

/* The STATS_CPU row of frames of timeline `name`: "CPU (NAME)". */
static uint32_t marks_row(struct stats *s, const char *name, size_t len, struct sbuf *buf)
{
	buf->len = 0;
	sbuf_adds(buf, CPU_ROW_NAME " (");
	sbuf_add(buf, name, len);
	sbuf_adds(buf, ")");
	if (buf->failed)
		return STATS_NONE;
	return named_row(s, STATS_CPU, STATS_NONE, buf->data, buf->len);
}

/* A frame's marks: each one's interval from the one before of its
 * timeline is one of that timeline's frames, ended in this one. */
static bool add_marks(struct stats *s, uint32_t fi, const struct frame *f)
{
	struct sbuf buf = { 0 };
	bool ok = true;
	for (uint32_t i = 0; i < f->mark_count && ok; i++) {
		const struct frame_mark *m = &f->marks[i];
		uint32_t r = marks_row(s, m->timeline, m->timeline_len, &buf);
		uint32_t k = r != STATS_NONE ? mark_line_of(s, r) : UINT32_MAX;
		if (k == UINT32_MAX) {
			ok = false;
			break;
		}
		struct mark_line *ml = &s->marks[k];
		if (ml->have_last) {
			int64_t iv = m->ns > ml->last_ns ? m->ns - ml->last_ns : 0;
			ok = instance_add(s, r, fi, clamp_ns(iv));
		} else {
			/* The first mark here: its interval is from the mark
			 * before, in the part of the run before this one's,
			 * if any (stats_append). */
			ml->have_first = true;
			ml->first_ns = m->ns;
			ml->first_fi = fi;
		}
		ml->have_last = true;
		ml->last_ns = m->ns;
	}
	sbuf_release(&buf);
	return ok;
}

/* Whether a thread's name is the one the model gives it without one. */
static bool thread_unnamed(const struct frame_cpu_thread *t)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "thread %u", t->tid);
	return n > 0 && (size_t)n == t->name_len && memcmp(buf, t->name, (size_t)n) == 0;
}

/*
 * A thread's (or a timeline's) tree below its row `top`, in preorder
 * without recursion (trees are as deep as the format allows): each node's
 * row below its parent's, a depth-1 name with the frame's number made
 * '#'. A timeline's nodes are tasks, and below them states.
 */
static bool add_cpu_tree(struct stats *s, uint32_t fi, uint32_t top, const struct node *root,
			 bool tasks, const char *number, size_t number_len)
{
	uint32_t depth = 1;
	const struct node *n = root->child;

	if (!array_room((void **)&s->cpu_stack, &s->cpu_stack_cap, 1, sizeof(*s->cpu_stack)))
		return false;
	s->cpu_stack[0] = top;
	while (n) {
		const char *name = n->name;
		size_t len = n->name_len;
		if (depth == 1 && !(name = frame_name(s, name, &len, number, number_len)))
			return false;
		enum stats_kind kind = !tasks ? STATS_CPU_SCOPE : depth == 1 ? STATS_TASK : STATS_STATE;
		uint32_t r = named_row(s, kind, s->cpu_stack[depth - 1], name, len);
		if (r == STATS_NONE ||
		    !row_add(s, r, fi, clamp_ns(n->inclusive_ns), clamp_ns(n->exclusive_ns)))
			return false;
		if (n->child) {
			if (!array_room((void **)&s->cpu_stack, &s->cpu_stack_cap, (size_t)depth + 1,
					sizeof(*s->cpu_stack)))
				return false;
			s->cpu_stack[depth++] = r;
			n = n->child;
			continue;
		}
		while (n != root && !n->next) {
			n = n->parent;
			depth--;
		}
		n = n == root ? NULL : n->next;
	}
	return true;
}

/* A frame's CPU frame time alone, as add_cpu takes it. */
static bool add_cpu_frame(struct stats *s, uint32_t fi, const struct frame *f)
{
	bool timed = f->cpu_end_ns > f->cpu_begin_ns;
	if (!timed && !f->cpu_thread_count && !f->mark_count)
		return true;
	uint32_t cpu = cpu_frame_row(s);
	if (cpu == STATS_NONE ||
	    (timed && !row_add(s, cpu, fi, clamp_ns(f->cpu_end_ns - f->cpu_begin_ns), 0)))
		return false;
	if (f->cpu_thread_count || f->mark_count)
		s->cpu_seen = true;
	return true;
}

/* A frame's CPU frame time, threads, timelines and marks. */
static bool add_cpu(struct stats *s, uint32_t fi, const struct frame *f, const char *number,
		    size_t number_len)
{
	if (!add_cpu_frame(s, fi, f))
		return false;
	uint32_t cpu = s->cpu_row;
	for (uint32_t i = 0; i < f->cpu_thread_count; i++) {
		const struct frame_cpu_thread *t = &f->cpu_threads[i];
		if (!t->root)
			continue;
		bool timeline = t->kind == FRAME_CPU_TIMELINE;
		uint32_t top = cpu;
		if (timeline &&
		    (top = named_row(s, STATS_TASKS, STATS_NONE, TASKS_ROW_NAME,
				     strlen(TASKS_ROW_NAME))) == STATS_NONE)
			return false;
		const char *name = t->name;
		size_t len = t->name_len;
		if (!timeline && thread_unnamed(t)) {
			name = UNNAMED_THREAD_NAME;
			len = strlen(UNNAMED_THREAD_NAME);
		}
		uint32_t r = named_row(s, timeline ? STATS_TIMELINE : STATS_THREAD, top, name, len);
		if (r == STATS_NONE || !row_add(s, r, fi, clamp_ns(t->root->inclusive_ns), 0) ||
		    !add_cpu_tree(s, fi, r, t->root, timeline, number, number_len))
			return false;
	}
	return add_marks(s, fi, f);
}

/* Room for n more frames' numbers; CRUMBS_ERROR_LIMIT past 2^32 - 2. */
static enum crumbs_result frames_room(struct stats *s, size_t n)
{
	if (s->frame_count + n >= UINT32_MAX)
		return CRUMBS_ERROR_LIMIT;
	if (!array_room_from((void **)&s->numbers, &s->frame_cap, s->frame_count + n,
			     sizeof(*s->numbers), 1024))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	return CRUMBS_OK;
}

enum crumbs_result stats_add_frame(stats *s, const struct capture_meta *meta,
				   const struct frame *f)
{
	enum crumbs_result fr = frames_room(s, 1);
	if (fr != CRUMBS_OK || (fr = present_run_add(s->presents, f)) != CRUMBS_OK)
		return fr;
	uint32_t fi = (uint32_t)s->frame_count;
	char number[24];
	size_t number_len = 0;
	for (uint64_t v = f->number; number_len == 0 || v; v /= 10)
		number[number_len++] = (char)('0' + v % 10);
	for (size_t i = 0; i < number_len / 2; i++) {
		char t = number[i];
		number[i] = number[number_len - 1 - i];
		number[number_len - 1 - i] = t;
	}
	if (f->names_epoch != s->epoch) {
		/* Other name buffers: the names seen are not these. */
		s->epoch = f->names_epoch;
		for (uint32_t i = 0; i < s->guess_count; i++)
			for (uint32_t k = 0; k < s->guesses[i].len; k++)
				s->guesses[i].e[k].seen = NULL;
	}

	for (uint32_t g = 0; g < f->gpu_count; g++) {
		const struct frame_gpu *fg = &f->gpus[g];
		if (fg->frame_ns <= 0)
			continue; /* no work on that GPU in this frame */
		uint32_t r = gpu_row(s, fg->gpu);
		if (r == STATS_NONE || !row_add(s, r, fi, clamp_ns(fg->frame_ns), 0))
			return r == STATS_NONE && s->row_count >= STATS_NONE - 1 ?
				       CRUMBS_ERROR_LIMIT : CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	for (uint32_t i = 0; i < f->queue_count && !s->frame_times_only; i++) {
		const struct frame_queue *fq = &f->queues[i];
		if (fq->submissions == 0 || (fq->flags & FRAME_QUEUE_NO_TIMESTAMPS))
			continue;
		uint32_t busy = queue_row(s, meta, fq->queue);
		if (busy != STATS_NONE && fq->queue >= s->guess_count) {
			struct guess *d = realloc(s->guesses, (fq->queue + 1) * sizeof(*d));
			if (!d)
				return CRUMBS_ERROR_OUT_OF_MEMORY;
			memset(d + s->guess_count, 0, (fq->queue + 1 - s->guess_count) * sizeof(*d));
			s->guesses = d;
			s->guess_count = fq->queue + 1;
		}
		/* A tree is flattened first. */
		uint32_t count = fq->flat_count;
		bool flat = s->by_pipeline || fq->flat || flatten_tree(s, fq->root, &count);
		if (busy != STATS_NONE)
			s->store[busy].events += fq->events;
		if (!flat || busy == STATS_NONE || !row_add(s, busy, fi, clamp_ns(fq->busy_ns), 0) ||
		    !row_add(s, busy + 1, fi, clamp_ns(fq->wait_ns), 0) ||
		    !row_add(s, busy + 2, fi, clamp_ns(fq->idle_ns), 0) ||
		    (s->by_pipeline ? !add_pipelines(s, fi, busy, fq->root) :
				      !add_scopes(s, fi, busy, &s->guesses[fq->queue],
						  fq->flat ? fq->flat : s->flat, count, number,
						  number_len)))
			return s->row_count >= STATS_NONE - 1 ? CRUMBS_ERROR_LIMIT :
								 CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	if (s->frame_times_only ? !add_cpu_frame(s, fi, f) : !add_cpu(s, fi, f, number, number_len))
		return s->row_count >= STATS_NONE - 1 ? CRUMBS_ERROR_LIMIT :
							 CRUMBS_ERROR_OUT_OF_MEMORY;
	if (!memory_stats_add(&s->memory, f))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	s->numbers[s->frame_count++] = f->number;
	return CRUMBS_OK;
}

const struct memory_stats *stats_memory(const stats *s)
{
	return &s->memory;
}

/*
 * Before from's frames of other kinds join s's: the interval from s's
 * last mark of each timeline to from's first, which neither held, is the
 * frame between theirs, ended in the frame of from's first mark (from's
 * frame index 0 is s's `base`).
 */
static bool append_crossings(stats *s, const stats *from, const uint32_t *map, uint32_t base)
{
	for (uint32_t i = 0; i < from->mark_count; i++) {
		const struct mark_line *fm = &from->marks[i];
		uint32_t r = map[fm->row];
		uint32_t k = mark_line_of(s, r);
		if (k == UINT32_MAX)
			return false;
		struct mark_line *ml = &s->marks[k];
		if (fm->have_first && ml->have_last) {
			int64_t iv = fm->first_ns > ml->last_ns ? fm->first_ns - ml->last_ns : 0;
			if (!instance_add(s, r, base + fm->first_fi, clamp_ns(iv)))
				return false;
		} else if (fm->have_first && !ml->have_first) {
			ml->have_first = true;
			ml->first_ns = fm->first_ns;
			ml->first_fi = base + fm->first_fi;
		}
		if (fm->have_last) {
			ml->have_last = true;
			ml->last_ns = fm->last_ns;
		}
	}
	return true;
}

/* Appends from's frames of another kind (row store f) to st's, their
 * frame indices moved by base. */
static bool append_instances(stats *s, struct row_store *st, const struct row_store *f,
			     uint32_t base)
{
	if (f->len > UINT32_MAX - 1 - st->len)
		return false;
	for (uint32_t i = 0; i < f->len; i++)
		if (!series_push(s, &st->time, st->len + i, series_get(&f->time, i)) ||
		    !series_push(s, &st->exclusive, st->len + i, base + series_get(&f->exclusive, i)))
			return false;
	st->len += f->len;
	return true;
}

enum crumbs_result stats_append(stats *s, stats *from)
{
	if (from->frame_count == 0)
		return CRUMBS_OK;
	enum crumbs_result r = frames_room(s, from->frame_count);
	if (r != CRUMBS_OK || (r = present_run_append(s->presents, from->presents)) != CRUMBS_OK)
		return r;
	uint32_t base = (uint32_t)s->frame_count;
	if (!memory_stats_append(&s->memory, &from->memory))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	uint32_t *map = malloc((from->row_count + 1) * sizeof(*map));
	if (!map)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	/* Rows in the order from made them, which is the order they first
	 * appear in its frames: a parent before its children. */
	for (size_t i = 0; i < from->row_count && r == CRUMBS_OK; i++) {
		const struct stats_row *row = &from->rows[i];
		uint32_t to = STATS_NONE;
		switch (row->kind) {
		case STATS_GPU:
			to = gpu_row(s, row->gpu);
			break;
		case STATS_BUSY:
			to = queue_rows_named(s, row->queue, row->gpu, row->name, row->name_len);
			break;
		case STATS_WAIT:
		case STATS_IDLE:
			/* Right after their busy row, in both. */
			to = map[i - (row->kind - STATS_BUSY)];
			if (to != STATS_NONE)
				to += row->kind - STATS_BUSY;
			break;
		case STATS_SCOPE:
		case STATS_PIPELINE:
		case STATS_CPU:
		case STATS_THREAD:
		case STATS_CPU_SCOPE:
		case STATS_TASKS:
		case STATS_TIMELINE:
		case STATS_TASK:
		case STATS_STATE:
			to = named_row(s, row->kind,
				       row->parent == STATS_NONE ? STATS_NONE : map[row->parent],
				       row->name, row->name_len);
			if (to != STATS_NONE && i == from->cpu_row)
				s->cpu_row = to;
			break;
		}
		if (to == STATS_NONE)
			r = s->row_count >= STATS_NONE - 1 ? CRUMBS_ERROR_LIMIT :
							   CRUMBS_ERROR_OUT_OF_MEMORY;
		map[i] = to;
	}
	if (r == CRUMBS_OK && !append_crossings(s, from, map, base))
		r = CRUMBS_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < from->row_count && r == CRUMBS_OK; i++) {
		struct row_store *f = &from->store[i];
		struct row_store *st = &s->store[map[i]];
		st->calls += f->calls;
		st->events += f->events;
		if (f->mark_line) {
			if (!append_instances(s, st, f, base))
				r = CRUMBS_ERROR_OUT_OF_MEMORY;
			continue;
		}
		if (!f->len)
			continue;
		if (f->split && !st->split && !split_exclusive(s, st)) {
			r = CRUMBS_ERROR_OUT_OF_MEMORY;
			break;
		}
		uint32_t first = base + f->first;
		if (st->len == 0)
			st->first = first;
		/* An exclusive series of times is copied, not taken: the
		 * times are taken as well. */
		if (!fill_absent(s, st, first) ||
		    (st->split && !(f->split ? series_take(s, &st->exclusive, st->len, &f->exclusive, f->len)
					     : series_append(s, &st->exclusive, st->len, &f->time, f->len))) ||
		    !series_take(s, &st->time, st->len, &f->time, f->len)) {
			r = CRUMBS_ERROR_OUT_OF_MEMORY;
			break;
		}
		st->len += f->len;
	}
	s->cpu_seen = s->cpu_seen || from->cpu_seen;
	free(map);
	/* The chunks taken, and from's others, unused, go with s, behind
	 * the region cut from now. */
	if (from->own.regions) {
		pthread_mutex_lock(&s->pool->lock);
		struct region **end = &s->pool->regions;
		while (*end)
			end = &(*end)->next;
		*end = from->own.regions;
		from->own.regions = NULL;
		pthread_mutex_unlock(&s->pool->lock);
	}
	if (r != CRUMBS_OK)
		return r;
	memcpy(s->numbers + base, from->numbers, from->frame_count * sizeof(*s->numbers));
	s->frame_count += from->frame_count;
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* Summaries                                                                */
/* ------------------------------------------------------------------------ */

uint32_t stats_percentile(const uint32_t *sorted, size_t n, unsigned p)
{
	if (n == 0)
		return 0;
	if (p > 100)
		p = 100;
	/* ceil(p * n / 100), in integers so that 95% of 100 is exactly 95. */
	size_t rank = (size_t)(((uint64_t)p * n + 99) / 100);
	if (rank == 0)
		rank = 1;
	return sorted[rank - 1];
}

/* Sorts v[0..n) by LSD radix sort on 11-bit digits: linear in n, with no
 * bad case, where a run's hundreds of thousands of values per row would
 * make a comparison sort the slowest part. tmp has room for n. */
static void radix_sort(uint32_t *v, uint32_t *tmp, size_t n)
{
	uint32_t count[3][2048]; /* n < 2^32: frames are counted in 32 bits */
	uint32_t *from = v, *to = tmp;

	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++) {
		count[0][v[i] & 2047]++;
		count[1][(v[i] >> 11) & 2047]++;
		count[2][v[i] >> 22]++;
	}
	for (unsigned pass = 0; pass < 3; pass++) {
		unsigned sh = pass * 11;
		uint32_t *c = count[pass];
		if (c[(v[0] >> sh) & 2047] == n)
			continue; /* every value has this digit */
		uint32_t sum = 0;
		for (size_t d = 0; d < 2048; d++) {
			uint32_t k = c[d];
			c[d] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			to[c[(from[i] >> sh) & 2047]++] = from[i];
		uint32_t *t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
}

/* Runs body with v each value of se's first len other than STATS_ABSENT,
 * and pos its position, chunk by chunk, in order: a macro, so that each
 * loop is compiled with its body in it. */
#define FOR_EACH_VALUE(se, len, pos, v, body)                                        \
	for (uint32_t k_ = 0; k_ < (se)->chunk_count; k_++) {                        \
		const uint32_t *c_ = (se)->chunks[k_].values, at_ = (se)->chunks[k_].start; \
		for (uint32_t pos = at_, e_ = chunk_end((se), k_, (len)); pos < e_; pos++) { \
			uint32_t v = c_[pos - at_];                                  \
			if (v != STATS_ABSENT) {                                     \
				body                                                 \
			}                                                            \
		}                                                                    \
	}

/* Runs body with v each of se's first len values, which are all present
 * (none is STATS_ABSENT): without the test of each. */
#define FOR_EACH_PRESENT(se, len, v, body)                                           \
	for (uint32_t k_ = 0; k_ < (se)->chunk_count; k_++) {                        \
		const uint32_t *c_ = (se)->chunks[k_].values;                        \
		for (uint32_t i_ = 0, e_ = chunk_end((se), k_, (len)) - (se)->chunks[k_].start; \
		     i_ < e_; i_++) {                                                \
			uint32_t v = c_[i_];                                         \
			body                                                         \
		}                                                                    \
	}

/*
 * The 50th, 90th, 95th and 99th percentiles of the n values (n > 0) of
 * se's first len, which lie in [lo, hi], as stats_percentile would find
 * them sorted. Only four ranks are wanted: a histogram of the values' top
 * bits says which bucket holds each, and only those buckets' values are
 * gathered and sorted, where sorting all of them took three passes that
 * scatter every value. The series is read where it lies, not copied; tmp
 * and tmp2 have room for n.
 */
#define SELECT_BITS 12
static void select_percentiles(const struct series *se, uint32_t len, size_t n, uint32_t lo,
			       uint32_t hi, uint32_t *tmp, uint32_t *tmp2, uint32_t out[4])
{
	static const unsigned ps[4] = { 50, 90, 95, 99 };
	uint32_t count[1u << SELECT_BITS];
	unsigned char pick[1u << SELECT_BITS];
	size_t rank[4], bucket[4], below[4];
	unsigned sh = 0;
	size_t m = 0;

	if (n < (1u << SELECT_BITS)) {
		FOR_EACH_VALUE(se, len, i, v, { tmp[m++] = v; })
		radix_sort(tmp, tmp2, n);
		for (unsigned k = 0; k < 4; k++)
			out[k] = stats_percentile(tmp, n, ps[k]);
		return;
	}
	while (((hi - lo) >> sh) >> SELECT_BITS)
		sh++;
	memset(count, 0, sizeof(count));
	bool dense = n == len; /* the usual row, seen in every frame */
	if (dense)
		FOR_EACH_PRESENT(se, len, v, { count[(v - lo) >> sh]++; })
	else
		FOR_EACH_VALUE(se, len, i, v, { count[(v - lo) >> sh]++; })
	/* Each rank's bucket, and the values in buckets before it. */
	for (unsigned k = 0; k < 4; k++) {
		rank[k] = (size_t)(((uint64_t)ps[k] * n + 99) / 100);
		if (rank[k] == 0)
			rank[k] = 1;
	}
	memset(pick, 0, sizeof(pick));
	size_t sum = 0;
	unsigned k = 0;
	for (size_t b = 0; b < (1u << SELECT_BITS) && k < 4; b++) {
		for (; k < 4 && rank[k] <= sum + count[b]; k++) {
			bucket[k] = b;
			below[k] = sum;
			pick[b] = 1;
		}
		sum += count[b];
	}
	if (dense)
		FOR_EACH_PRESENT(se, len, v, {
			if (pick[(v - lo) >> sh])
				tmp[m++] = v;
		})
	else
		FOR_EACH_VALUE(se, len, i, v, {
			if (pick[(v - lo) >> sh])
				tmp[m++] = v;
		})
	radix_sort(tmp, tmp2, m);
	/* The picked buckets' values, in order: a rank's place among them
	 * is its place in its bucket after the picked buckets before. */
	size_t picked = 0;
	for (k = 0; k < 4; k++) {
		if (k > 0 && bucket[k] != bucket[k - 1])
			picked += count[bucket[k - 1]];
		out[k] = tmp[picked + rank[k] - below[k] - 1];
	}
}

/*
 * The summary of one series; tmp and tmp2 have room for st->len. The
 * standard deviation comes from the sums of the values and of their
 * squares in integers, exact: n * sum(v^2) - sum(v)^2 is n^2 times the
 * variance (n < 2^32 and v < 2^32 keep it below 2^128), rounded once.
 */
__extension__ typedef unsigned __int128 uint128; /* GCC's and Clang's, on 64-bit targets */

/* Sums of values, their squares, their extremes, and how many; hi1 is
 * the maximum plus 1, 0 while there is none. */
struct sums {
	uint64_t n;
	uint64_t sum;
	uint128 squares;
	uint32_t lo, hi1;
};

/*
 * Adds the values of c[0..count) (count at most CHUNK) other than
 * STATS_ABSENT to *t. Written so that a full chunk's two loops are
 * vectorized, with SSE2 alone: no branch; an absent value counted as 0
 * in the sums, and in the maximum as v + 1, which wraps it to 0 (the
 * minimum never takes STATS_ABSENT unless every value is absent, and then
 * n is 0); each value split at 16 bits, v = h 2^16 + l, so that the sums
 * of h and l fit 32-bit lanes and those of h^2, h l and l^2 64-bit ones,
 * where the sum of v^2 needs 128 bits. One loop of all of them is not
 * vectorized (GCC 12, -O2). The scalar loop this replaces, with a 128-bit
 * add and the positions of the extremes at each value, took half of
 * stats_finish.
 */
static inline __attribute__((always_inline)) void sums_add(struct sums *t, const uint32_t *c,
							     uint32_t count)
{
	uint32_t n = 0, hs = 0, ls = 0, lo = t->lo, hi1 = t->hi1;
	uint64_t hh = 0, hl = 0, ll = 0;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t v = c[i], present = v != STATS_ABSENT, x = present ? v : 0, y = v + 1;
		n += present;
		hs += x >> 16;
		ls += x & 0xffff;
		lo = v < lo ? v : lo;
		hi1 = y > hi1 ? y : hi1;
	}
	for (uint32_t i = 0; i < count; i++) {
		uint32_t v = c[i], x = v != STATS_ABSENT ? v : 0, h = x >> 16, l = x & 0xffff;
		hh += h * h;
		hl += h * l;
		ll += l * l;
	}
	t->n += n;
	t->sum += ((uint64_t)hs << 16) + ls;
	t->squares += ((uint128)hh << 32) + ((uint128)hl << 17) + ll;
	t->lo = lo;
	t->hi1 = hi1;
}

static void sums_add_chunk(struct sums *t, const uint32_t *c, uint32_t count)
{
	for (; count >= CHUNK; c += CHUNK, count -= CHUNK)
		sums_add(t, c, CHUNK); /* the count known: vectorized whole */
	if (count)
		sums_add(t, c, count);
}

/* The position of the first value equal to v among se's first len, whose
 * chunk is chunk k or one after it. */
static uint32_t first_at(const struct series *se, uint32_t len, uint32_t k, uint32_t v)
{
	for (; k < se->chunk_count; k++) {
		const uint32_t *c = se->chunks[k].values, at = se->chunks[k].start;
		for (uint32_t pos = at, end = chunk_end(se, k, len); pos < end; pos++)
			if (c[pos - at] == v)
				return pos;
	}
	return 0;
}

/* The frame index of a row's value at pos: its frame of the run's, or
 * for frames of another kind the one it ended in. */
static inline uint32_t frame_of(const struct row_store *st, uint32_t pos)
{
	return st->mark_line ? series_get(&st->exclusive, pos) : st->first + pos;
}

static void summarize(const struct stats *s, const struct row_store *st,
		      const struct series *se, uint32_t *tmp, uint32_t *tmp2,
		      struct stats_summary *out)
{
	struct sums t = { 0, 0, 0, STATS_ABSENT, 0 };
	uint32_t lo_chunk = 0, hi_chunk = 0;

	memset(out, 0, sizeof(*out));
	for (uint32_t k = 0; k < se->chunk_count; k++) {
		uint32_t start = se->chunks[k].start, end = chunk_end(se, k, st->len);
		if (start >= end)
			continue;
		uint32_t lo = t.lo, hi1 = t.hi1;
		sums_add_chunk(&t, se->chunks[k].values, end - start);
		/* The first chunk to hold each extreme: where it is first. */
		if (t.lo < lo)
			lo_chunk = k;
		if (t.hi1 > hi1)
			hi_chunk = k;
	}
	uint64_t n = t.n;
	if (n == 0)
		return;
	uint32_t lo = t.lo, hi = t.hi1 - 1;
	uint32_t lo_at = first_at(se, st->len, lo_chunk, lo);
	uint32_t hi_at = first_at(se, st->len, hi_chunk, hi);
	uint128 spread = (uint128)n * t.squares - (uint128)t.sum * t.sum;
	uint32_t pct[4];
	select_percentiles(se, st->len, n, lo, hi, tmp, tmp2, pct);
	out->frames = n;
	out->mean_ns = (double)t.sum / (double)n;
	out->stddev_ns = sqrt((double)spread / ((double)n * (double)n));
	out->min_ns = lo;
	out->max_ns = hi;
	out->min_frame = s->numbers[frame_of(st, lo_at)];
	out->max_frame = s->numbers[frame_of(st, hi_at)];
	out->median_ns = pct[0];
	out->p90_ns = pct[1];
	out->p95_ns = pct[2];
	out->p99_ns = pct[3];
}

/* A frame-time row's spikes: a frame without a value ends a run of
 * them. Frames of another kind are values one after another, which a
 * frame of the run without a mark does not end. */
static void find_spikes(const struct stats *s, const struct row_store *st,
			const struct stats_spike_rule *rule, const struct stats_summary *sum,
			struct stats_spikes *out)
{
	double factor = rule && rule->median_factor > 0 ? rule->median_factor : 1.5;
	double t = rule && rule->threshold_ns ? rule->threshold_ns : factor * sum->median_ns;
	uint64_t run = 0;
	uint32_t run_start = 0;

	memset(out, 0, sizeof(*out));
	/* Values are integers: above t is above floor(t). */
	out->threshold_ns = t >= STATS_NS_MAX ? STATS_NS_MAX : (uint32_t)t;
	const struct series *se = &st->time;
	for (uint32_t k = 0; k < se->chunk_count; k++) {
		const uint32_t *c = se->chunks[k].values, at = se->chunks[k].start;
		for (uint32_t i = at, end = chunk_end(se, k, st->len); i < end; i++) {
			uint32_t v = c[i - at];
			if (v == STATS_ABSENT || v <= out->threshold_ns) {
				run = 0;
				continue;
			}
			out->count++;
			if (run++ == 0)
				run_start = i;
			if (run > out->longest_run) {
				out->longest_run = run;
				out->longest_run_first = s->numbers[frame_of(st, run_start)];
			}
		}
	}
}

/* A thread of a stats_finish, which takes the next row not taken. */
struct summary_job {
	stats *s;
	const struct stats_spike_rule *rule;
	atomic_size_t *next;
	uint32_t *tmp; /* each with room for the longest row */
	uint32_t *tmp2;
};

static void *summarize_rows(void *arg)
{
	const struct summary_job *job = arg;
	stats *s = job->s;

	for (;;) {
		size_t r = atomic_fetch_add_explicit(job->next, 1, memory_order_relaxed);
		if (r >= s->row_count)
			break;
		struct stats_row *row = &s->rows[r];
		const struct row_store *st = &s->store[r];
		row->calls = st->calls;
		row->events = st->events;
		summarize(s, st, &st->time, job->tmp, job->tmp2, &row->time);
		if (st->scope && st->split)
			summarize(s, st, &st->exclusive, job->tmp, job->tmp2, &row->exclusive);
		else if (stats_kind_named(row->kind))
			row->exclusive = row->time; /* the same values */
		if (stats_kind_frame_time(row->kind))
			find_spikes(s, st, job->rule, &row->time, &row->spikes);
	}
	return NULL;
}

/* A row's values summed over the frames it has one in. */
static double total_ns(const struct stats_summary *t)
{
	return t->mean_ns * (double)t->frames;
}

const present_run *stats_presents(const stats *s)
{
	return s->presents;
}

enum crumbs_result stats_finish(stats *s, const struct stats_spike_rule *rule)
{
	if (present_run_finish(s->presents) != CRUMBS_OK)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	size_t most = 1;
	for (size_t r = 0; r < s->row_count; r++)
		if (s->store[r].len > most)
			most = s->store[r].len;
	/* Rows are summarized apart, by two threads that each take the next
	 * row (the reading is over, so the second core is free); by one when
	 * a second cannot start. */
	struct big mem;
	if (most > SIZE_MAX / 16 || !big_alloc(&mem, 4 * most * sizeof(uint32_t)))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	uint32_t *scratch = mem.data;
	atomic_size_t next = 0;
	struct summary_job jobs[2] = {
		{ s, rule, &next, scratch, scratch + most },
		{ s, rule, &next, scratch + 2 * most, scratch + 3 * most },
	};
	pthread_t helper;
	bool helped = s->row_count > 1 && pthread_create(&helper, NULL, summarize_rows,
							  &jobs[1]) == 0;
	summarize_rows(&jobs[0]);
	if (helped)
		pthread_join(helper, NULL);
	/* Shares need their queue's summaries, made above. */
	for (size_t r = 0; r < s->row_count; r++) {
		struct stats_row *row = &s->rows[r];
		if (!stats_kind_named(row->kind))
			continue;
		/* Of the queue's time over the run: a scope of some frames
		 * only counts in those, and siblings never pass 100%. The
		 * CPU's, of the CPU frame time over the run. */
		double denominator = 0;
		if (stats_kind_cpu(row->kind)) {
			if (s->cpu_row != STATS_NONE)
				denominator = total_ns(&s->rows[s->cpu_row].time);
		} else {
			uint32_t busy = s->queue_rows[row->queue];
			denominator = total_ns(&s->rows[busy].time) + total_ns(&s->rows[busy + 1].time);
		}
		row->share_pct = denominator > 0 ? 100.0 * total_ns(&row->time) / denominator : 0;
	}
	big_free(&mem);
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* Access                                                                   */
/* ------------------------------------------------------------------------ */

void stats_keep_frame_times_only(stats *s)
{
	s->frame_times_only = true;
}

void stats_by_pipeline(stats *s)
{
	s->by_pipeline = true;
}

size_t stats_frame_count(const stats *s)
{
	return s->frame_count;
}

uint64_t stats_frame_number(const stats *s, size_t i)
{
	return i < s->frame_count ? s->numbers[i] : 0;
}

size_t stats_row_count(const stats *s)
{
	return s->row_count;
}

const struct stats_row *stats_row(const stats *s, size_t i)
{
	return i < s->row_count ? &s->rows[i] : NULL;
}

uint32_t stats_gpu_row(const stats *s, uint32_t gpu)
{
	return gpu < s->gpu_row_count ? s->gpu_rows[gpu] : STATS_NONE;
}

bool stats_has_cpu(const stats *s)
{
	return s->cpu_seen;
}

uint32_t stats_cpu_row(const stats *s)
{
	return s->cpu_seen ? s->cpu_row : STATS_NONE;
}

/* The longest of a timeline's frames that ended in frame index i, or
 * STATS_ABSENT: their frame indices do not decrease, so the first is
 * found by bisection. */
static uint32_t longest_ended_in(const struct row_store *st, size_t i)
{
	uint32_t lo = 0, hi = st->len, longest = STATS_ABSENT;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (series_get(&st->exclusive, mid) < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < st->len && series_get(&st->exclusive, lo) == i; lo++) {
		uint32_t v = series_get(&st->time, lo);
		if (longest == STATS_ABSENT || v > longest)
			longest = v;
	}
	return longest;
}

uint32_t stats_value(const stats *s, size_t row, size_t i, bool exclusive)
{
	if (row >= s->row_count)
		return STATS_ABSENT;
	const struct row_store *st = &s->store[row];
	if (st->mark_line)
		return exclusive ? STATS_ABSENT : longest_ended_in(st, i);
	if (i < st->first || i - st->first >= st->len)
		return STATS_ABSENT;
	if (exclusive && !stats_kind_named(s->rows[row].kind))
		return STATS_ABSENT;
	return series_get(values_of(st, exclusive), (uint32_t)(i - st->first));
}

bool stats_spike(const stats *s, size_t row, size_t i)
{
	if (row >= s->row_count || !stats_kind_frame_time(s->rows[row].kind))
		return false;
	/* As find_spikes: a value above the threshold, which stats_finish
	 * set (0 before it, when no value counts). */
	const struct stats_spikes *sp = &s->rows[row].spikes;
	uint32_t v = stats_value(s, row, i, false);
	return sp->count > 0 && v != STATS_ABSENT && v > sp->threshold_ns;
}

/* The rows from the top of row's path down to it, into chain (room for
 * STATS_PATH_MAX); returns how many. */
static size_t path_chain(const stats *s, uint32_t row, uint32_t *chain)
{
	size_t n = 0;
	for (uint32_t r = row; r != STATS_NONE && n < STATS_PATH_MAX; r = s->rows[r].parent)
		chain[n++] = r;
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = chain[i];
		chain[i] = chain[n - 1 - i];
		chain[n - 1 - i] = t;
	}
	return n;
}

void stats_row_path(const stats *s, size_t row, struct sbuf *out)
{
	uint32_t chain[STATS_PATH_MAX];
	if (row >= s->row_count)
		return;
	size_t n = path_chain(s, (uint32_t)row, chain);
	for (size_t i = 0; i < n; i++) {
		if (i)
			sbuf_add(out, " / ", 3);
		sbuf_add(out, s->rows[chain[i]].name, s->rows[chain[i]].name_len);
	}
}

uint32_t stats_child(const stats *s, uint32_t parent, enum stats_kind kind, const char *name,
		     size_t len)
{
	if (parent == STATS_NONE && kind == STATS_GPU) {
		for (uint32_t g = 0; g < s->gpu_row_count; g++) {
			uint32_t r = s->gpu_rows[g];
			if (r != STATS_NONE && s->rows[r].name_len == len &&
			    memcmp(s->rows[r].name, name, len) == 0)
				return r;
		}
		return STATS_NONE;
	}
	if (parent != STATS_NONE && parent >= s->row_count)
		return STATS_NONE;
	if (kind != STATS_BUSY && kind != STATS_WAIT && kind != STATS_IDLE) {
		if (!s->slot_cap)
			return STATS_NONE;
		return s->slots[scope_slot(s, kind, parent, name, len)];
	}
	/* A GPU's queue rows: a few. */
	if (parent == STATS_NONE)
		return STATS_NONE;
	for (uint32_t c = s->rows[parent].first_child; c != STATS_NONE; c = s->rows[c].next_sibling)
		if (s->rows[c].kind == kind && s->rows[c].name_len == len &&
		    memcmp(s->rows[c].name, name, len) == 0)
			return c;
	return STATS_NONE;
}

uint32_t stats_find(const stats *s, enum stats_kind kind, const char *path)
{
	uint32_t chain[STATS_PATH_MAX];
	size_t path_len = strlen(path);
	for (size_t r = 0; r < s->row_count; r++) {
		if (s->rows[r].kind != kind)
			continue;
		size_t n = path_chain(s, (uint32_t)r, chain), at = 0;
		bool same = true;
		for (size_t i = 0; i < n && same; i++) {
			const struct stats_row *row = &s->rows[chain[i]];
			if (i) {
				same = path_len - at >= 3 && memcmp(path + at, " / ", 3) == 0;
				at += 3;
			}
			same = same && path_len - at >= row->name_len &&
			       memcmp(path + at, row->name, row->name_len) == 0;
			at += row->name_len;
		}
		if (same && at == path_len)
			return (uint32_t)r;
	}
	return STATS_NONE;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a > b) - (a < b);
}

size_t stats_row_values(const stats *s, size_t row, bool exclusive, bool sorted, int64_t *out)
{
	if (row >= s->row_count || (exclusive && !stats_kind_named(s->rows[row].kind)))
		return 0;
	const struct row_store *st = &s->store[row];
	const struct series *se = values_of(st, exclusive);
	size_t n = 0;
	FOR_EACH_VALUE(se, st->len, i, v, { out[n++] = v; })
	if (sorted && n > 1) {
		uint32_t *v = malloc(2 * n * sizeof(*v));
		if (!v) {
			qsort(out, n, sizeof(*out), cmp_i64);
			return n;
		}
		for (size_t i = 0; i < n; i++)
			v[i] = (uint32_t)out[i];
		radix_sort(v, v + n, n);
		for (size_t i = 0; i < n; i++)
			out[i] = v[i];
		free(v);
	}
	return n;
}
