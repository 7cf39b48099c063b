/* SPDX-License-Identifier: MIT */
/*
 * gen.c: crumbs-gen, which writes realistic capture files with no GPU: a
 * deferred renderer's frames on one or two virtual GPUs, scaled to an exact
 * number of scope markers per frame, through the public writer API only;
 * scopes slowed, jittered or spiking on request, to compare runs against.
 */
#include "../include/crumbs_file.h"
#include "version.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PRODUCER "crumbs-gen " CRUMBS_VERSION_SHORT

#define US INT64_C(1000)
#define MS INT64_C(1000000)
#define CPU_START_NS INT64_C(1000000000000)
#define FRAME_NS INT64_C(16666667)

#define MAX_FRAMES UINT64_C(1000000000)
/* A frame holds at most 262,144 scopes (format/FORMAT.md, "Limits"); the
 * writer drops those past it. */
#define MAX_MARKERS UINT64_C(524288)
#define MAX_CHUNK_KIB UINT64_C(16384)
/* The format's limits that --stress-* frames go up to. */
#define MAX_FRAME_SCOPES UINT64_C(262144)
#define MAX_FRAME_NAME_BYTES (UINT64_C(16) << 20)
#define MAX_NAME_BYTES 4096
#define MAX_STRESS_GPUS 64
#define MAX_CPU_THREADS 256 /* the format's, a frame */
#define MAX_TASKS 1000      /* a frame; ids are unique in it */
#define MAX_STRESS_QUEUES 256
#define MAX_STRESS_DEPTH 255

/* GPU 0 counts nanoseconds. Its transfer queue keeps only 36 bits, so the
 * counter starts 17.2 ms short of a multiple of 2^36: that queue's ticks
 * wrap in frame 1, in the middle of its uploads. */
#define GPU0_BASE_TICKS ((UINT64_C(3) << 36) - UINT64_C(17200000))
/* GPU 1: a 19.2 MHz counter that runs 25 ppm fast against the CPU clock. */
#define GPU1_BASE_TICKS UINT64_C(0x2f3a5c81d4)
#define GPU1_PERIOD_NS 52.083332
#define GPU1_DRIFT 25e-6

/* ------------------------------------------------------------------------ */
/* The scenario                                                             */
/* ------------------------------------------------------------------------ */

enum queue_id { GFX0, COMP0, XFER0, GFX1, COMP1, QUEUE_COUNT };

static const struct queue_info {
	struct crumbs_queue_desc desc;
	unsigned submissions;
} queue_infos[QUEUE_COUNT] = {
	[GFX0] = { { 0, 0, 0, CRUMBS_QUEUE_GRAPHICS | CRUMBS_QUEUE_COMPUTE | CRUMBS_QUEUE_TRANSFER,
		     1.0f, 64 }, 3 },
	[COMP0] = { { 0, 1, 0, CRUMBS_QUEUE_COMPUTE | CRUMBS_QUEUE_TRANSFER, 1.0f, 64 }, 1 },
	[XFER0] = { { 0, 2, 0, CRUMBS_QUEUE_TRANSFER, 1.0f, 36 }, 1 },
	[GFX1] = { { 1, 0, 0, CRUMBS_QUEUE_GRAPHICS | CRUMBS_QUEUE_COMPUTE | CRUMBS_QUEUE_TRANSFER,
		     (float)GPU1_PERIOD_NS, 48 }, 1 },
	[COMP1] = { { 1, 1, 0, CRUMBS_QUEUE_COMPUTE | CRUMBS_QUEUE_TRANSFER,
		      (float)GPU1_PERIOD_NS, 48 }, 1 },
};

/* Semaphore ids; every value is the frame number + 1 unless said. */
enum semaphore_id {
	SEM_SHADOWS_DONE = 1, /* timeline: graphics' first batch → async compute */
	SEM_COMPUTE_DONE,     /* timeline: async compute → graphics' second batch */
	SEM_UPLOADS_DONE,     /* binary: transfer → graphics' second batch */
	SEM_HOST_STAGING,     /* timeline, host-signalled every 5th frame, numbered apart */
	SEM_RENDER_DONE,      /* binary: graphics → present (outside the capture) */
	SEM_PARTICLES_DONE    /* timeline on GPU 1: compute → graphics */
};

enum leaf_style { LEAF_NONE, LEAF_MESH, LEAF_FULLSCREEN, LEAF_INDIRECT, LEAF_DISPATCH, LEAF_COPY };
enum extra_kind { EXTRA_NONE, EXTRA_SHADOW_VIEWS, EXTRA_MESH_BATCHES };

enum spec_flags {
	SPEC_FRAME = 1u << 0,       /* named "<name> <frame number>"; spans its queue's submissions */
	SPEC_NUMBERED = 1u << 1,    /* named "<name> <K>" */
	SPEC_PASS = 1u << 2,        /* `ms` is absolute: it takes time whether recorded or not */
	SPEC_RENDER_PASS = 1u << 3, /* an event, recorded only with --leaves */
	SPEC_AFTER_DEP = 1u << 4,   /* starts after the other queue's work it waits on */
	SPEC_STREAMING = 1u << 5    /* its length varies a lot from frame to frame */
};

/* One scope of the full-detail frame; the table is an outline in
 * recording order, nested by `depth`. */
struct spec {
	uint8_t queue;
	uint8_t submission; /* passes: which of the queue's submissions */
	uint8_t depth;
	uint8_t level;      /* detail level: the finest go first when M is small */
	const char *name;
	double ms;          /* passes: nominal busy ms; others: share of the parent */
	uint8_t leaf;       /* enum leaf_style, when nothing finer is recorded */
	uint8_t leaves;
	uint8_t extra;      /* enum extra_kind: where finer scopes go when M is large */
	uint8_t flags;
};

static const struct spec specs[] = {
	{ GFX0, 0, 0, 0, "Frame", 0, LEAF_NONE, 0, 0, SPEC_FRAME },
	{ GFX0, 0, 1, 1, "Shadow Depths", 1.6, LEAF_MESH, 6, EXTRA_SHADOW_VIEWS, SPEC_PASS },
	{ GFX0, 0, 2, 2, "Shadow View 0", 1.2, LEAF_MESH, 4, 0, 0 },
	{ GFX0, 0, 2, 2, "Shadow View 1", 1.0, LEAF_MESH, 4, 0, 0 },
	{ GFX0, 0, 2, 2, "Shadow View 2", 0.8, LEAF_MESH, 3, 0, 0 },
	{ GFX0, 0, 2, 2, "Shadow View 3", 0.6, LEAF_MESH, 3, 0, 0 },
	{ GFX0, 0, 1, 1, "Prepass", 0.7, LEAF_MESH, 6, 0, SPEC_PASS },
	{ GFX0, 1, 1, 1, "Base Pass", 3.2, LEAF_MESH, 8, EXTRA_MESH_BATCHES, SPEC_PASS },
	{ GFX0, 1, 2, 2, "Base Pass RP", 1.0, LEAF_MESH, 8, EXTRA_MESH_BATCHES, SPEC_RENDER_PASS },
	{ GFX0, 1, 1, 1, "Lighting", 1.8, LEAF_DISPATCH, 2, 0, SPEC_PASS | SPEC_AFTER_DEP },
	{ GFX0, 1, 2, 2, "Tiled Deferred Lighting", 1.3, LEAF_DISPATCH, 2, 0, 0 },
	{ GFX0, 1, 2, 2, "Освещение неба", 0.5, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 1, 1, 1, "Translucency", 0.9, LEAF_INDIRECT, 3, 0, SPEC_PASS },
	{ GFX0, 1, 2, 2, "半透明パーティクル", 1.0, LEAF_INDIRECT, 3, 0, 0 },
	{ GFX0, 2, 1, 1, "Post Processing", 1.5, LEAF_FULLSCREEN, 4, 0, SPEC_PASS },
	{ GFX0, 2, 2, 2, "Bloom Down 0", 0.16, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Bloom Down 1", 0.08, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Bloom Down 2", 0.05, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Bloom Down 3", 0.035, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Bloom Down 4", 0.03, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Bloom Up 4", 0.03, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Bloom Up 3", 0.035, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Bloom Up 2", 0.05, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Bloom Up 1", 0.08, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Bloom Up 0", 0.16, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Tonemap ✨", 0.12, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "Contraste\xcc\x81", 0.08, LEAF_FULLSCREEN, 1, 0, 0 },
	{ GFX0, 2, 2, 2, "FXAA", 0.14, LEAF_FULLSCREEN, 1, 0, 0 },
	{ COMP0, 0, 0, 1, "Async Compute", 1.2, LEAF_DISPATCH, 4, 0, SPEC_PASS },
	{ COMP0, 0, 1, 2, "Ambient Occlusion", 0.8, LEAF_DISPATCH, 3, 0, 0 },
	{ COMP0, 0, 1, 2, "Light Culling", 0.4, LEAF_DISPATCH, 1, 0, 0 },
	{ XFER0, 0, 0, 1, "Streaming Uploads", 0.6, LEAF_COPY, 6, 0, SPEC_PASS | SPEC_STREAMING },
	{ GFX1, 0, 0, 0, "Frame", 0, LEAF_NONE, 0, 0, SPEC_FRAME },
	{ GFX1, 0, 1, 1, "Reflection Captures", 2.7, LEAF_MESH, 6, 0, SPEC_PASS },
	{ GFX1, 0, 2, 2, "Capture 0", 1.0, LEAF_MESH, 5, 0, 0 },
	{ GFX1, 0, 2, 2, "Capture 1", 1.0, LEAF_MESH, 5, 0, 0 },
	{ GFX1, 0, 2, 2, "Capture 2", 1.0, LEAF_MESH, 5, 0, 0 },
	{ GFX1, 0, 1, 1, "Secondary View", 2.4, LEAF_MESH, 12, 0, SPEC_PASS | SPEC_AFTER_DEP },
	{ COMP1, 0, 0, 1, "Async Compute", 0.7, LEAF_DISPATCH, 2, 0, SPEC_PASS },
	{ COMP1, 0, 1, 2, "Particle Simulation", 1.0, LEAF_DISPATCH, 2, 0, 0 },
};

#define SPEC_COUNT (sizeof(specs) / sizeof(specs[0]))

/* The finer scopes added beyond the outline, numbered on from its own. */
static const struct spec extra_specs[] = {
	[EXTRA_SHADOW_VIEWS] = { GFX0, 0, 2, 2, "Shadow View", 0.5, LEAF_MESH, 3, 0, SPEC_NUMBERED },
	[EXTRA_MESH_BATCHES] = { GFX0, 1, 3, 3, "Mesh Batch", 1.0, LEAF_MESH, 2, 0, SPEC_NUMBERED },
};
#define FIRST_EXTRA_SHADOW_VIEW 4
#define MAX_EXTRA_SHADOW_VIEWS 28

/* ------------------------------------------------------------------------ */
/* Deterministic randomness                                                 */
/* ------------------------------------------------------------------------ */

/*
 * splitmix64. Pass lengths and jitter are hashed from (seed, frame, what)
 * rather than drawn in sequence, so they do not move when --leaves or
 * --markers-per-frame change how much else is drawn.
 */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
	return mix64(a ^ mix64(b ^ mix64(c + UINT64_C(0x9E3779B97F4A7C15))));
}

static double unit(uint64_t h)
{
	return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

/* The next draw of a frame's splitmix64 stream, in [0, 1). */
static double rng_unit(uint64_t *state)
{
	return unit(mix64(*state += UINT64_C(0x9E3779B97F4A7C15)));
}

/* ------------------------------------------------------------------------ */
/* Wildcards, as crumbs report --root matches them                          */
/* ------------------------------------------------------------------------ */

/* The character at s (before end) and its length in bytes; a byte that
 * starts no UTF-8 sequence stands for itself. */
static uint32_t utf8_next(const char *s, const char *end, size_t *len)
{
	unsigned char c = (unsigned char)s[0];
	size_t n = c >= 0xf8 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	uint32_t cp = n == 1 ? c : c & (0x7fu >> n);

	if (n > 1 && (size_t)(end - s) < n)
		n = 1;
	for (size_t i = 1; i < n; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			*len = 1;
			return c;
		}
		cp = cp << 6 | ((unsigned char)s[i] & 0x3f);
	}
	*len = n;
	return n == 1 ? c : cp;
}

/*
 * Whether the one-character wildcard at *p (?, [...], \x or a character)
 * matches c; moves *p past it. A '[' without its ']' is an ordinary
 * character, a ']' first in a class (or after its '!' or '^') a member.
 */
static bool wildcard_char(const char **p, const char *end, uint32_t c)
{
	const char *w = *p;
	size_t len;

	if (*w == '?') {
		*p = w + 1;
		return true;
	}
	if (*w == '\\' && w + 1 < end) {
		uint32_t x = utf8_next(w + 1, end, &len);
		*p = w + 1 + len;
		return x == c;
	}
	if (*w == '[') {
		const char *j = w + 1;
		bool negate = j < end && (*j == '!' || *j == '^');
		if (negate)
			j++;
		const char *first = j;
		if (j < end && *j == ']')
			j++;
		while (j < end && *j != ']')
			j++;
		if (j < end) {
			bool in = false;
			for (const char *m = first; m < j;) {
				uint32_t lo = utf8_next(m, j, &len), hi = lo;
				m += len;
				if (m + 1 < j && *m == '-') {
					hi = utf8_next(m + 1, j, &len);
					m += 1 + len;
				}
				in = in || (lo <= c && c <= hi);
			}
			*p = j + 1;
			return in != negate;
		}
	}
	uint32_t x = utf8_next(w, end, &len);
	*p = w + len;
	return x == c;
}

/* Whether the wildcard [pattern, pattern + len) matches the whole name. A
 * '*' that fails is retried one character further, from the last '*'
 * only: time stays linear in the pattern times the name. */
static bool wildcard_match(const char *pattern, size_t len, const char *name)
{
	const char *p = pattern, *end = pattern + len, *s = name, *s_end = name + strlen(name);
	const char *star_p = NULL, *star_s = NULL;
	size_t n;

	while (s < s_end) {
		if (p < end && *p == '*') {
			while (p < end && *p == '*')
				p++;
			star_p = p;
			star_s = s;
			continue;
		}
		const char *next = p;
		uint32_t c = utf8_next(s, s_end, &n);
		if (p < end && wildcard_char(&next, end, c)) {
			p = next;
			s += n;
			continue;
		}
		if (!star_p)
			return false;
		utf8_next(star_s, s_end, &n);
		s = star_s += n;
		p = star_p;
	}
	while (p < end && *p == '*')
		p++;
	return p == end;
}

/* ------------------------------------------------------------------------ */
/* Plans: which scopes a frame records, chosen once                         */
/* ------------------------------------------------------------------------ */

#define NO_NUMBER UINT32_MAX
#define MAX_LEAVES 16 /* per scope */

/* A recorded scope; the plan is its queues' trees in preorder. */
struct plan_node {
	const struct spec *spec;
	uint32_t number; /* the K of a numbered extra */
	uint32_t end;    /* one past its subtree */
	uint32_t leaves;
	uint64_t key;    /* the spec and number, which --noise hashes */
	double scale;    /* --scale's factor; frame scopes take the frame's */
	double weight;   /* its share among its siblings... */
	double before;   /* ...the shares of the siblings before it... */
	double total;    /* ...and the sum of its children's shares */
};

struct plan {
	struct plan_node *nodes;
	uint32_t count;
	int32_t at[SPEC_COUNT]; /* each spec's node, or -1 when not recorded */
	uint32_t extras[3];     /* by enum extra_kind */
	uint64_t seed;
};

static bool spec_eligible(const struct spec *s, unsigned gpus, bool leaves)
{
	return queue_infos[s->queue].desc.gpu < gpus && (leaves || !(s->flags & SPEC_RENDER_PASS));
}

/* `spec_id`: the index in specs[], or SPEC_COUNT + the extra_kind. */
static uint32_t plan_push(struct plan *p, const struct spec *s, uint32_t spec_id, uint32_t number)
{
	struct plan_node *n = &p->nodes[p->count];
	*n = (struct plan_node){ s, number, p->count + 1, s->leaves, (uint64_t)spec_id << 32 | number,
				 1.0, s->ms, 0, 0 };
	if (s == &extra_specs[EXTRA_MESH_BATCHES]) {
		/* Meshes differ in cost and draw count; fixed per K so that
		 * a batch looks the same in every frame. */
		uint64_t h = hash3(p->seed, number, 0);
		n->weight = 0.3 + 1.4 * unit(h);
		n->leaves = 1 + (uint32_t)(h % 3);
	}
	return p->count++;
}

static void plan_build(struct plan *p, const bool *included, size_t i)
{
	uint32_t n = plan_push(p, &specs[i], (uint32_t)i, NO_NUMBER);
	bool taken = false;

	p->at[i] = (int32_t)n;
	for (size_t j = i + 1; j < SPEC_COUNT && specs[j].depth > specs[i].depth; j++) {
		if (specs[j].depth != specs[i].depth + 1 || !included[j])
			continue;
		plan_build(p, included, j);
		/* The render pass takes the mesh batches from the base pass. */
		taken = taken || (specs[j].extra != EXTRA_NONE && specs[j].extra == specs[i].extra);
	}
	if (specs[i].extra != EXTRA_NONE && !taken) {
		uint32_t first = specs[i].extra == EXTRA_SHADOW_VIEWS ? FIRST_EXTRA_SHADOW_VIEW : 0;
		for (uint32_t k = 0; k < p->extras[specs[i].extra]; k++)
			plan_push(p, &extra_specs[specs[i].extra], SPEC_COUNT + specs[i].extra,
				  first + k);
	}
	p->nodes[n].end = p->count;
	for (uint32_t c = n + 1; c < p->count; c = p->nodes[c].end) {
		p->nodes[c].before = p->nodes[n].total;
		p->nodes[n].total += p->nodes[c].weight;
	}
}

/*
 * Chooses `scopes` scopes: the outline level by level, coarsest first, so
 * that a small budget drops the finest; past the outline, extra shadow
 * views and mesh batches. Returns false when out of memory.
 */
static bool plan_init(struct plan *p, uint64_t scopes, unsigned gpus, bool leaves, uint64_t seed)
{
	bool included[SPEC_COUNT] = { false };
	uint64_t left = scopes;

	memset(p, 0, sizeof(*p));
	p->seed = seed;
	for (unsigned level = 0; level <= CRUMBS_DETAIL_MAX; level++)
		for (size_t i = 0; i < SPEC_COUNT && left > 0; i++)
			if (specs[i].level == level && spec_eligible(&specs[i], gpus, leaves)) {
				included[i] = true;
				left--;
			}
	/* A few more shadowed lights, then ever finer mesh batches. */
	uint64_t views = left / 8 < MAX_EXTRA_SHADOW_VIEWS ? left / 8 : MAX_EXTRA_SHADOW_VIEWS;
	p->extras[EXTRA_SHADOW_VIEWS] = (uint32_t)views;
	p->extras[EXTRA_MESH_BATCHES] = (uint32_t)(left - views);
	p->nodes = calloc(scopes ? scopes : 1, sizeof(*p->nodes));
	if (!p->nodes)
		return false;
	for (size_t i = 0; i < SPEC_COUNT; i++)
		p->at[i] = -1;
	for (size_t i = 0; i < SPEC_COUNT; i++)
		if (specs[i].depth == 0 && included[i])
			plan_build(p, included, i);
	return true;
}

/* ------------------------------------------------------------------------ */
/* The generator and its clocks                                             */
/* ------------------------------------------------------------------------ */

#define MAX_SCALES 64
#define MAX_FACTOR 100 /* --scale's; with --noise and --spikes a scope runs 600x at most */

/* --scale PATTERN=FACTOR: the pattern points into argv. */
struct scale_rule {
	const char *pattern;
	size_t pattern_len;
	double factor;
};

struct options {
	const char *output;
	uint64_t frames;
	uint64_t markers;
	uint64_t seed;
	uint64_t noise_seed;     /* of --noise and --spikes; UINT64_MAX: seed */
	uint64_t gpus;
	uint64_t chunk_kib;
	struct scale_rule scales[MAX_SCALES];
	size_t scale_count;
	double noise_pct;
	uint64_t spikes;
	uint64_t cpu_threads;
	uint64_t tasks;
	bool waits;              /* the first CPU thread ends frames and waits */
	bool timeline_frames;
	uint64_t memory;         /* --memory: bytes leaked a frame; 0: no memory */
	bool presents;
	bool leaves;
	bool pipeline_ids;       /* leaves name pipelines by identities */
	bool unbalanced;
	bool verbose;
	bool help;
	/* --stress-*: frames of their own, shaped to test readers with. */
	uint64_t stress_gpus;
	uint64_t stress_queues;
	uint64_t stress_depth;
	uint64_t stress_scopes;
	uint64_t stress_name_bytes;
	bool stress_distinct;
};

struct gen {
	const struct options *opt;
	crumbs_writer *w;
	struct plan plans[2];   /* [1]: frames that leave a scope open */
	unsigned queue_count;
	/* The frame being written. */
	uint64_t frame;
	uint64_t rng;           /* its splitmix64 stream */
	bool unbalanced;
	const struct plan *plan;
	uint64_t markers;
	int64_t free_ns[QUEUE_COUNT]; /* when each queue finished its last work */
	double frame_scale;     /* --scale's factor for "Frame <number>" */
	double spike;           /* how much longer all its work takes: 1, or 2 to 3 */
	double overlay_scale;   /* --scale's factor for "Debug Overlay" */
};

/* Time laid out as without --scale, --noise and --spikes ("nominal"), and
 * the time written: the stretch between two markers takes its innermost
 * scope's factor times as long, so a scope's exclusive time grows by its
 * factor and everything after it moves later. */
struct warp {
	int64_t nominal_ns;
	int64_t real_ns;
};

/* One batch of work on a queue; times are CPU-clock nanoseconds. */
struct submission {
	unsigned queue;
	unsigned index;
	int64_t cpu_ns;
	int64_t ready_ns;       /* the GPU work it waits on is done */
	int64_t dep_ns;         /* passes that need another queue's results wait for this */
	double load;
	int64_t begin_ns;
	int64_t content_end_ns; /* the end of its last pass */
	int64_t end_ns;
	const struct crumbs_semaphore_op *waits;
	uint32_t wait_count;
	const struct crumbs_semaphore_op *signals;
	uint32_t signal_count;
};

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* A GPU's counter at CPU time ns, its full width. */
static uint64_t gpu_ticks(unsigned gpu, int64_t ns)
{
	int64_t d = ns - CPU_START_NS;
	if (gpu == 0)
		return GPU0_BASE_TICKS + (uint64_t)d;
	double x = (double)d * (1.0 + GPU1_DRIFT) / GPU1_PERIOD_NS;
	return (GPU1_BASE_TICKS + (uint64_t)(int64_t)(x < 0 ? x - 0.5 : x + 0.5)) &
	       ((UINT64_C(1) << 48) - 1);
}

/* What a queue's timestamp query reads at ns: the counter cut to its
 * valid bits. */
static uint64_t queue_ticks(unsigned queue, int64_t ns)
{
	unsigned bits = queue_infos[queue].desc.timestamp_valid_bits;
	uint64_t t = gpu_ticks(queue_infos[queue].desc.gpu, ns);
	return bits >= 64 ? t : t & ((UINT64_C(1) << bits) - 1);
}

/* A scope's name as written: frame scopes and numbered extras get their
 * number. Returns the spec's name or buf. */
static const char *node_name(const struct plan_node *node, uint64_t frame, char *buf, size_t size)
{
	const struct spec *s = node->spec;

	if (!(s->flags & (SPEC_FRAME | SPEC_NUMBERED)))
		return s->name;
	snprintf(buf, size, "%s %" PRIu64, s->name,
		 s->flags & SPEC_FRAME ? frame : (uint64_t)node->number);
	return buf;
}

/* ------------------------------------------------------------------------ */
/* --scale, --noise and --spikes                                            */
/* ------------------------------------------------------------------------ */

/* Seeds of their own, so that the draws of the frame's other jitter do not
 * move when these options change. */
#define NOISE_SALT UINT64_C(0x6e6f697365000000)
#define SPIKE_SALT UINT64_C(0x7370696b65000000)
#define CPU_SALT UINT64_C(0x6370750000000000)
#define TASK_SALT UINT64_C(0x7461736b00000000)
/* The --noise key of the scope that --unbalanced leaves open. */
#define OVERLAY_KEY ((uint64_t)(SPEC_COUNT + 3) << 32 | NO_NUMBER)

/* ns times factor, rounded; exactly ns when the factor is 1, so that the
 * default options write what they always wrote. */
static int64_t stretch(int64_t ns, double factor)
{
	return factor == 1.0 ? ns : (int64_t)((double)ns * factor + 0.5);
}

/* The written time of nominal_ns, not before the last one asked for;
 * `factor` is that of the innermost scope open since then. */
static int64_t warp_to(struct warp *w, int64_t nominal_ns, double factor)
{
	w->real_ns += stretch(nominal_ns - w->nominal_ns, factor);
	w->nominal_ns = nominal_ns;
	return w->real_ns;
}

/* --scale's factor for a name: the last rule that matches it, or 1. */
static double scale_of(const struct options *opt, const char *name)
{
	for (size_t i = opt->scale_count; i-- > 0;)
		if (wildcard_match(opt->scales[i].pattern, opt->scales[i].pattern_len, name))
			return opt->scales[i].factor;
	return 1.0;
}

/* Matched once per plan: the names of all but frame scopes are the same
 * in every frame. */
static void plan_scale(struct plan *p, const struct options *opt)
{
	char buf[64];

	for (uint32_t n = 0; n < p->count; n++)
		if (!(p->nodes[n].spec->flags & SPEC_FRAME))
			p->nodes[n].scale = scale_of(opt, node_name(&p->nodes[n], 0, buf, sizeof(buf)));
}

/*
 * The factor by which frame f's work takes longer: 2 to 3 (uniform) in a
 * spike frame, else 1. The capture is cut into --spikes equal stretches of
 * frames, and one frame of each, drawn from the seed, is a spike.
 */
static double spike_factor(const struct options *opt, uint64_t f)
{
	uint64_t n = opt->spikes, frames = opt->frames;

	if (n == 0)
		return 1.0;
	/* Stretch k holds frames k * frames / n up to (k + 1) * frames / n;
	 * n <= frames, so none is empty, and both products fit. */
	uint64_t k = ((f + 1) * n - 1) / frames;
	uint64_t first = k * frames / n, size = (k + 1) * frames / n - first;
	if (f != first + hash3(opt->noise_seed ^ SPIKE_SALT, k, 0) % size)
		return 1.0;
	return 2.0 + unit(hash3(opt->noise_seed ^ SPIKE_SALT, f, 1));
}

/* How many times its nominal length a scope's own time takes in the frame
 * being written: its --scale factor, the spike's, and --noise's draw,
 * uniform in +-PCT percent, hashed from (seed, frame, key). */
static double scope_factor(const struct gen *g, uint64_t key, double scale)
{
	double f = scale * g->spike;

	if (g->opt->noise_pct > 0) {
		double u = unit(hash3(g->opt->noise_seed ^ NOISE_SALT, g->frame, key));
		f *= 1.0 + g->opt->noise_pct / 100.0 * (2.0 * u - 1.0);
	}
	return f;
}

static double node_factor(const struct gen *g, const struct plan_node *node)
{
	return scope_factor(g, node->key,
			    node->spec->flags & SPEC_FRAME ? g->frame_scale : node->scale);
}

/* ------------------------------------------------------------------------ */
/* Writing frames                                                           */
/* ------------------------------------------------------------------------ */

static enum crumbs_result open_node(struct gen *g, const struct plan_node *node, unsigned queue,
				    int64_t ns)
{
	char buf[64];
	const char *name = node_name(node, g->frame, buf, sizeof(buf));

	g->markers++;
	if (node->spec->flags & SPEC_RENDER_PASS)
		return crumbs_writer_event_begin(g->w, CRUMBS_EVENT_RENDER_PASS, name,
						 queue_ticks(queue, ns));
	return crumbs_writer_scope_begin(g->w, name, node->spec->level, queue_ticks(queue, ns));
}

static enum crumbs_result close_node(struct gen *g, unsigned queue, int64_t ns)
{
	g->markers++;
	return crumbs_writer_scope_end(g->w, queue_ticks(queue, ns));
}

/* A draw's triangles: fixed by its hash, so the same mesh every frame. */
static uint64_t mesh_prims(uint64_t h)
{
	return 256 + (h >> 8) % 48000;
}

/* How long a leaf takes relative to its siblings: draws by their size. */
static double leaf_weight(enum leaf_style style, uint64_t h)
{
	if (style == LEAF_MESH && h % 6 != 0)
		return 0.25 + (double)mesh_prims(h) / 24000.0;
	return 0.4 + unit(mix64(h));
}

/* What a Vulkan layer would record for each leaf style, named the way
 * the layer names them: the command, its main parameters and the bound
 * pipeline's (or the target's) name. */
static const struct crumbs_leaf_desc leaf_templates[] = {
	[LEAF_MESH] = { CRUMBS_EVENT_DRAW, NULL, 1, 0, 0, 0, 0, 0 },
	[LEAF_FULLSCREEN] = { CRUMBS_EVENT_DRAW, NULL, 1, 0, 1, 3, 0, 0 },
	[LEAF_INDIRECT] = { CRUMBS_EVENT_DRAW, NULL, 1, 0, CRUMBS_COUNT_UNKNOWN,
			    CRUMBS_COUNT_UNKNOWN, 0, 0 },
	[LEAF_DISPATCH] = { CRUMBS_EVENT_DISPATCH, NULL, 0, 1, 0, 0, 0, 0 },
	[LEAF_COPY] = { CRUMBS_EVENT_COPY, NULL, 0, 0, 0, 0, 0, 0 },
};

/*
 * With --pipeline-ids, the name a draw or dispatch of scope `scope` gives
 * its pipeline, as the layer names one a program did not name: its
 * identity, 4 hex digits, after "pipeline", or for a dispatch after its
 * entry point (the scope's name in lower case, words joined by '_').
 * Scopes whose names differ only in a number at their end share one
 * pipeline ("Shadow View 0" to "Shadow View 31", "Bloom Down 0" to "4").
 */
static const char *pipeline_id(char *buf, size_t size, enum leaf_style style, const char *scope)
{
	size_t len = strlen(scope);
	while (len > 0 && scope[len - 1] >= '0' && scope[len - 1] <= '9')
		len--;
	while (len > 0 && scope[len - 1] == ' ')
		len--;
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)scope[i]) * UINT64_C(0x100000001b3);
	unsigned id = (unsigned)(mix64(h) >> 48);
	if (style != LEAF_DISPATCH) {
		snprintf(buf, size, "pipeline %04x", id);
		return buf;
	}
	size_t n = 0;
	for (size_t i = 0; i < len && n + 1 < size; i++) {
		char c = scope[i];
		buf[n++] = c == ' ' ? '_' : c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
	}
	snprintf(buf + n, size - n, " %04x", id);
	return buf;
}

/* A draw, dispatch or copy in [begin_ns, end_ns], in a scope whose
 * pipeline is called `pipeline`. `h` picks its mesh, the same in every
 * frame. */
static enum crumbs_result write_leaf(struct gen *g, unsigned queue, enum leaf_style style,
				    uint64_t h, const char *pipeline, int64_t begin_ns,
				    int64_t end_ns)
{
	struct crumbs_leaf_desc leaf = leaf_templates[style];
	char name[160], id[80];

	if (g->opt->pipeline_ids && style != LEAF_COPY)
		pipeline = pipeline_id(id, sizeof(id), style, pipeline);

	if (style == LEAF_MESH && h % 6 == 0) {
		/* GPU-driven: the CPU never learns the counts. */
		snprintf(name, sizeof(name), "DrawIndexedIndirect 1 draw \u00b7 %s", pipeline);
		leaf.prims = leaf.verts = CRUMBS_COUNT_UNKNOWN;
	} else if (style == LEAF_MESH) {
		/* A triangle list: vertices are the indices drawn, as the
		 * layer counts them. */
		leaf.prims = mesh_prims(h);
		leaf.verts = leaf.prims * 3;
		snprintf(name, sizeof(name), "DrawIndexed %" PRIu64 " indices \u00b7 %s", leaf.verts,
			 pipeline);
	} else if (style == LEAF_FULLSCREEN) {
		snprintf(name, sizeof(name), "Draw 3 vertices \u00b7 %s", pipeline);
	} else if (style == LEAF_INDIRECT) {
		snprintf(name, sizeof(name), "DrawIndirect 1 draw \u00b7 %s", pipeline);
	} else if (style == LEAF_DISPATCH) {
		snprintf(name, sizeof(name), "Dispatch %ux%ux1 \u00b7 %s", 40u >> (h % 3),
			 23u >> (h % 3), pipeline);
	} else {
		snprintf(name, sizeof(name), "Copy buffer to image %ux%u \u00b7 %s",
			 64u << (h % 4), 64u << (h % 4), pipeline);
	}
	leaf.name = name;
	leaf.begin_ticks = queue_ticks(queue, begin_ns);
	leaf.end_ticks = queue_ticks(queue, end_ns);
	return crumbs_writer_leaf(g->w, &leaf);
}

/*
 * A node and its subtree in nominal [begin_ns, end_ns]: children share the
 * time by weight, each a few percent short of its slot, so that the parent
 * keeps some exclusive time and the split changes from frame to frame.
 * Written through the warp; `outer` is the factor of the scope around it.
 */
static enum crumbs_result write_tree(struct gen *g, const struct plan *p, uint32_t n,
				     unsigned queue, int64_t begin_ns, int64_t end_ns,
				     struct warp *w, double outer)
{
	const struct plan_node *node = &p->nodes[n];
	int64_t pad = (end_ns - begin_ns) / 16 < US ? (end_ns - begin_ns) / 16 : US;
	int64_t inner_begin = begin_ns + pad;
	double len = (double)(end_ns - pad - inner_begin);
	double factor = node_factor(g, node);
	enum crumbs_result r;

	if ((r = open_node(g, node, queue, warp_to(w, begin_ns, outer))) != CRUMBS_OK)
		return r;
	for (uint32_t c = n + 1; c < node->end; c = p->nodes[c].end) {
		const struct plan_node *child = &p->nodes[c];
		int64_t slot_begin = inner_begin + (int64_t)(len * child->before / node->total);
		int64_t slot_end = inner_begin +
				   (int64_t)(len * (child->before + child->weight) / node->total);
		double slot = (double)(slot_end - slot_begin);
		double shrink = 0.02 + 0.04 * unit(hash3(p->seed, g->frame, c));
		int64_t child_begin = slot_begin + (int64_t)(slot * 0.02);
		int64_t child_end = max64(child_begin, slot_end - (int64_t)(slot * shrink));
		r = write_tree(g, p, c, queue, child_begin, child_end, w, factor);
		if (r != CRUMBS_OK)
			return r;
	}
	if (node->end == n + 1 && g->opt->leaves && node->spec->leaf != LEAF_NONE) {
		double weights[MAX_LEAVES], total = 0, at = 0;
		uint32_t count = node->leaves < MAX_LEAVES ? node->leaves : MAX_LEAVES;
		for (uint32_t k = 0; k < count; k++)
			total += weights[k] = leaf_weight(node->spec->leaf, hash3(p->seed, n, k));
		for (uint32_t k = 0; k < count; k++) {
			int64_t b = inner_begin + (int64_t)(len * at / total);
			at += weights[k];
			int64_t e = inner_begin + (int64_t)(len * at / total);
			int64_t gap = (e - b) / 10;
			int64_t leaf_begin = warp_to(w, b + gap, factor);
			r = write_leaf(g, queue, node->spec->leaf, hash3(p->seed, n, k), node->spec->name,
				       leaf_begin, warp_to(w, e - gap / 2, factor));
			if (r != CRUMBS_OK)
				return r;
		}
	}
	return close_node(g, queue, warp_to(w, end_ns, factor));
}

/*
 * Places a submission and writes it. It starts once the CPU has submitted
 * it, the queue is free and what it waits on is done; its passes follow
 * each other, and one that needs another queue's results waits for
 * dep_ns; it ends a little after its last pass. The queue's frame scope
 * opens in its first submission and closes in its last; the time between
 * passes is the frame scope's while it is open.
 */
static enum crumbs_result submit(struct gen *g, struct submission *s)
{
	const struct plan *p = g->plan;
	bool last = s->index + 1 == queue_infos[s->queue].submissions;
	bool overlay = g->unbalanced && last && s->queue == GFX0;
	int64_t launch = 15 * US + (int64_t)(20.0 * (double)US * rng_unit(&g->rng));
	int32_t frame = -1;
	enum crumbs_result r;

	s->begin_ns = max64(max64(s->cpu_ns + launch, g->free_ns[s->queue] + 2 * US), s->ready_ns);
	for (size_t i = 0; i < SPEC_COUNT; i++)
		if (specs[i].queue == s->queue && (specs[i].flags & SPEC_FRAME))
			frame = p->at[i];
	double between = frame >= 0 ? node_factor(g, &p->nodes[frame]) : 1.0;

	const struct crumbs_submit_desc desc = {
		.queue = s->queue,
		.cpu_ns = (uint64_t)s->cpu_ns,
		.gpu_ticks = queue_ticks(s->queue, s->begin_ns),
		.waits = s->waits,
		.wait_count = s->wait_count,
		.signals = s->signals,
		.signal_count = s->signal_count,
	};
	if ((r = crumbs_writer_submit_begin(g->w, &desc)) != CRUMBS_OK)
		return r;
	/* The end of a scope whose begin the program lost (--unbalanced). */
	if (g->unbalanced && s->queue == COMP0 &&
	    (r = close_node(g, s->queue, s->begin_ns)) != CRUMBS_OK)
		return r;
	int64_t t = s->begin_ns + stretch(3 * US, between);
	if (frame >= 0 && s->index == 0) {
		if ((r = open_node(g, &p->nodes[frame], s->queue, s->begin_ns + US)) != CRUMBS_OK)
			return r;
		t = s->begin_ns + US + stretch(2 * US, between);
	}
	s->content_end_ns = t;
	for (size_t i = 0; i < SPEC_COUNT; i++) {
		const struct spec *pass = &specs[i];
		if (pass->queue != s->queue || pass->submission != s->index ||
		    !(pass->flags & SPEC_PASS))
			continue;
		double u = unit(hash3(g->opt->seed, g->frame, i));
		double scale = pass->flags & SPEC_STREAMING ? 0.4 + 1.6 * u : 0.97 + 0.06 * u;
		int64_t nominal_ns = (int64_t)(pass->ms * (double)MS * s->load * scale);
		if (pass->flags & SPEC_AFTER_DEP)
			t = max64(t, s->dep_ns);
		/* A pass that is not recorded takes its time all the same. */
		struct warp w = { t, t };
		if (p->at[i] < 0)
			warp_to(&w, t + nominal_ns, between);
		else if ((r = write_tree(g, p, (uint32_t)p->at[i], s->queue, t, t + nominal_ns, &w,
					 between)) != CRUMBS_OK)
			return r;
		s->content_end_ns = w.real_ns;
		t = w.real_ns + stretch(3 * US, between);
	}

	if (frame >= 0 && !last) {
		s->end_ns = s->content_end_ns + stretch(4 * US, between);
	} else {
		t = s->content_end_ns + (frame >= 0 ? stretch(US, between) : US);
		if (frame >= 0 && (r = close_node(g, s->queue, t)) != CRUMBS_OK)
			return r;
		s->end_ns = t + 3 * US;
	}
	if (overlay) {
		/* A scope the program forgets to end; the analyzer closes it
		 * at the frame's end. */
		double factor = scope_factor(g, OVERLAY_KEY, g->overlay_scale);
		int64_t open_ns = t + 2 * US;
		g->markers++;
		if ((r = crumbs_writer_scope_begin(g->w, "Debug Overlay", 1,
						   queue_ticks(s->queue, open_ns))) != CRUMBS_OK)
			return r;
		if (g->opt->leaves &&
		    (r = write_leaf(g, s->queue, LEAF_FULLSCREEN, 0, "Debug Overlay",
				    open_ns + stretch(8 * US, factor),
				    open_ns + stretch(48 * US, factor))) != CRUMBS_OK)
			return r;
		s->end_ns = open_ns + stretch(61 * US, factor);
	}
	g->free_ns[s->queue] = s->end_ns;
	return crumbs_writer_submit_end(g->w, queue_ticks(s->queue, s->end_ns));
}

/* ------------------------------------------------------------------------ */
/* CPU threads                                                              */
/* ------------------------------------------------------------------------ */

/* A scope of a CPU thread's tree, in preorder: its depth and how much of
 * its parent it takes beside its siblings. */
struct cpu_scope {
	const char *name;
	unsigned depth;
	double weight;
};

/* The scope of a tree that waits on the GPU. */
#define WAIT_SCOPE "Wait for GPU"

static const struct cpu_scope main_tree[] = {
	{ "Frame", 0, 1 },  { "Game", 1, 3 },       { "Physics", 2, 2 },
	{ "Animation", 2, 1 }, { "Render", 1, 2 },  { "Visibility", 2, 1 },
	{ "Record Commands", 2, 2 },
};
/* With --waits, on frames that wait: the GPU is behind. */
static const struct cpu_scope waiting_tree[] = {
	{ "Frame", 0, 1 },  { "Game", 1, 3 },       { "Physics", 2, 2 },
	{ "Animation", 2, 1 }, { "Render", 1, 2 },  { "Visibility", 2, 1 },
	{ "Record Commands", 2, 2 }, { WAIT_SCOPE, 1, 2 },
};
static const struct cpu_scope render_tree[] = {
	{ "Frame", 0, 1 },      { "Render", 1, 4 },          { "Visibility", 2, 1 },
	{ "Record Commands", 2, 3 }, { "Submit", 1, 1 },
};
static const struct cpu_scope worker_tree[] = {
	{ "Jobs", 0, 1 }, { "Physics", 1, 2 }, { "Animation", 1, 1 }, { "Particles", 1, 1 },
};

/*
 * Writes scope i of tree t (n scopes) from begin_ns to end_ns and its
 * subtree, the children sharing the span by weight times a draw from h,
 * with gaps between them; returns the index after its subtree.
 */
static size_t write_cpu_scope(crumbs_writer *w, const struct cpu_scope *t, size_t n, size_t i,
			      int64_t begin_ns, int64_t end_ns, uint64_t h, enum crumbs_result *r)
{
	size_t first = i + 1, end = first;
	double total = 0;

	bool wait = strcmp(t[i].name, WAIT_SCOPE) == 0;
	if ((*r = (wait ? crumbs_writer_cpu_wait_begin : crumbs_writer_cpu_begin)(
		     w, t[i].name, t[i].depth < 3 ? t[i].depth : 3, (uint64_t)begin_ns)) != CRUMBS_OK)
		return n;
	for (; end < n && t[end].depth > t[i].depth; end++)
		if (t[end].depth == t[i].depth + 1)
			total += t[end].weight * (0.75 + 0.5 * unit(hash3(h, end, 0)));
	int64_t span = end_ns - begin_ns, at = begin_ns + span / 20;
	for (size_t k = first; k < end && *r == CRUMBS_OK;) {
		double share = t[k].weight * (0.75 + 0.5 * unit(hash3(h, k, 0))) / total;
		int64_t len = (int64_t)((double)span * 0.85 * share);
		k = write_cpu_scope(w, t, n, k, at, at + len, h, r);
		at += len + span / 100;
	}
	if (*r == CRUMBS_OK)
		*r = crumbs_writer_cpu_end(w, (uint64_t)end_ns);
	return end;
}

/* --cpu-threads: each thread's tree inside the frame, from t0 to t1 on
 * the CPU clock, its times drawn from the seed and the frame. */
static enum crumbs_result write_cpu_threads(struct gen *g, int64_t t0, int64_t t1)
{
	enum crumbs_result r = CRUMBS_OK;
	for (uint64_t i = 0; i < g->opt->cpu_threads && r == CRUMBS_OK; i++) {
		const struct cpu_scope *t = worker_tree;
		size_t n = sizeof(worker_tree) / sizeof(worker_tree[0]);
		char name[32];
		if (i == 0 && g->opt->waits && g->frame % 2 == 0) {
			t = waiting_tree;
			n = sizeof(waiting_tree) / sizeof(waiting_tree[0]);
			snprintf(name, sizeof(name), "Main Thread");
		} else if (i == 0) {
			t = main_tree;
			n = sizeof(main_tree) / sizeof(main_tree[0]);
			snprintf(name, sizeof(name), "Main Thread");
		} else if (i == 1) {
			t = render_tree;
			n = sizeof(render_tree) / sizeof(render_tree[0]);
			snprintf(name, sizeof(name), "Render Thread");
		} else {
			snprintf(name, sizeof(name), "Worker %" PRIu64, i - 2);
		}
		uint64_t h = hash3(g->opt->seed ^ CPU_SALT, g->frame, i);
		int64_t span = t1 - t0;
		int64_t begin = t0 + span / 50 + (int64_t)((double)(span / 20) * unit(hash3(h, 0, 1)));
		int64_t end = t1 - span / 50 - (int64_t)((double)(span / 10) * unit(hash3(h, 0, 2)));
		if ((r = crumbs_writer_cpu_thread(g->w, (uint32_t)(1000 + i), name)) == CRUMBS_OK)
			write_cpu_scope(g->w, t, n, 0, begin, end, h, &r);
		if (i == 0 && g->opt->waits && r == CRUMBS_OK)
			r = crumbs_writer_frame_thread(g->w, 1000);
	}
	return r;
}

/* ------------------------------------------------------------------------ */
/* Tasks and frames of other kinds                                          */
/* ------------------------------------------------------------------------ */

static const char *const task_names[] = {
	"Stream Textures", "Cull", "Skin", "Shade", "Decode Audio",
	"Build Lights", "Sort Draws", "Simulate Cloth",
};

/*
 * --tasks: n tasks a frame from t0 to t1, on timelines "Jobs" and
 * "Streaming", each waiting a little before it executes. The first (with
 * two or more) was begun before the frame; "Skin" and "Shade" may not
 * execute before "Cull" ends: "Skin" waits for it, "Shade" does not; the
 * fifth is still running when the frame ends. Times are drawn from the
 * seed and the frame.
 */
static enum crumbs_result write_tasks(struct gen *g, int64_t t0, int64_t t1)
{
	enum crumbs_result r = CRUMBS_OK;
	uint64_t n = g->opt->tasks, first_id = 1000 * (g->frame % 1000) + 1;
	int64_t span = t1 - t0, cull_end = 0;

	for (uint64_t k = 0; k < n && r == CRUMBS_OK; k++) {
		uint64_t h = hash3(g->opt->seed ^ TASK_SALT, g->frame, k), id = first_id + k;
		char name[32];
		const char *timeline = k == 0 || k == 4 || (k > 4 && k % 2) ? "Streaming" : "Jobs";
		if (k < sizeof(task_names) / sizeof(task_names[0]))
			snprintf(name, sizeof(name), "%s", task_names[k]);
		else
			snprintf(name, sizeof(name), "Job %" PRIu64, k);
		int64_t begin = t0 + span / 20 + (int64_t)((double)span * 0.5 * (double)k /
							   (double)n) +
				(int64_t)((double)(span / 50) * unit(hash3(h, 0, 1)));
		int64_t exec = begin + (int64_t)((double)span * 0.03 * (0.5 + unit(hash3(h, 0, 2))));
		int64_t end = exec + (int64_t)((double)span * (0.12 + 0.1 * unit(hash3(h, 0, 3))));
		bool earlier = k == 0 && n >= 2;
		if (earlier) {
			begin = t0 - span / 10;
			end = t0 + span / 8;
		} else if (k == 2 && n > 2) {
			exec = max64(exec, cull_end + span / 100);
			end = max64(end, exec + span / 10);
		} else if (k == 3 && n > 3) {
			exec = cull_end - span / 50;
			begin = min64(begin, exec - span / 100);
		}
		r = crumbs_writer_task_begin(g->w, id, timeline, name, earlier ? "Executing" : "Waiting",
					     earlier, (uint64_t)begin);
		if (r == CRUMBS_OK && (k == 2 || k == 3))
			r = crumbs_writer_task_depend(g->w, id, "Executing", first_id + 1,
						      (uint64_t)begin);
		if (r == CRUMBS_OK && !earlier)
			r = crumbs_writer_task_state(g->w, id, "Executing", (uint64_t)exec);
		if (r == CRUMBS_OK && k != 4)
			r = crumbs_writer_task_end(g->w, id, (uint64_t)end);
		if (k == 1)
			cull_end = end;
	}
	return r;
}

/* --timeline-frames: the game's own frames, two to each of the GPU's. */
/* --memory: on each GPU, heap 0 (device-local) leaks the option's bytes
 * a frame beside as much allocated and freed in it, and heap 1 (host)
 * has the driver's usage alone, a KiB more each frame. */
static enum crumbs_result write_memory(struct gen *g, uint64_t f)
{
	const uint64_t leak = g->opt->memory, base = 64ull << 20;
	enum crumbs_result r = CRUMBS_OK;
	for (uint32_t gpu = 0; gpu < g->opt->gpus && r == CRUMBS_OK; gpu++) {
		uint64_t in_use = base + (f + 1) * leak;
		struct crumbs_memory_desc dev = {
			.gpu = gpu, .heap = 0, .flags = CRUMBS_MEMORY_HEAP_DEVICE_LOCAL,
			.size_bytes = 8ull << 30, .tracked = 1,
			.allocated_bytes = 2 * leak, .freed_bytes = leak, .allocations = 2, .frees = 1,
			.in_use_bytes = in_use, .high_bytes = in_use + leak,
		};
		struct crumbs_memory_desc host = {
			.gpu = gpu, .heap = 1, .size_bytes = 16ull << 30, .budgeted = 1,
			.usage_bytes = (32ull << 20) + f * 1024, .budget_bytes = 12ull << 30,
		};
		if ((r = crumbs_writer_memory(g->w, &dev)) == CRUMBS_OK)
			r = crumbs_writer_memory(g->w, &host);
	}
	return r;
}

static enum crumbs_result write_timeline_frames(struct gen *g, int64_t t0, int64_t t1)
{
	enum crumbs_result r = crumbs_writer_timeline_frame(g->w, "Game", (uint64_t)(t0 + (t1 - t0) / 10));
	if (r == CRUMBS_OK)
		r = crumbs_writer_timeline_frame(g->w, "Game", (uint64_t)(t0 + (t1 - t0) * 6 / 10));
	return r;
}

/* --presents: a present to swapchain 1 near each frame's end, on FIFO at
 * the frame's rate, and when the one before was shown (display timing):
 * one period after the one before it, but every 7th two (a missed
 * v-sync). */
static int64_t shown_ns(uint64_t id)
{
	int64_t periods = (int64_t)(id - 1) + (int64_t)(id / 7);
	return 5 * CPU_START_NS + periods * FRAME_NS;
}

static enum crumbs_result write_presents(struct gen *g, uint64_t f, int64_t t1)
{
	struct crumbs_present_desc p = {
		.swapchain = 1, .cpu_ns = (uint64_t)(t1 - 300 * US), .duration_ns = 120 * US,
		.present_id = f + 1, .mode = CRUMBS_PRESENT_MODE_FIFO, .refresh_ns = FRAME_NS };
	enum crumbs_result r = crumbs_writer_present(g->w, &p);
	if (r == CRUMBS_OK && f > 0)
		r = crumbs_writer_present_shown(g->w, 1, f, CRUMBS_SHOWN_DISPLAY_TIMING,
						(uint64_t)shown_ns(f));
	return r;
}

static enum crumbs_result write_frame(struct gen *g, uint64_t f)
{
	const struct options *opt = g->opt;
	uint64_t v = f + 1; /* this frame's semaphore values */
	enum crumbs_result r;

	g->frame = f;
	g->rng = hash3(opt->seed, f, 0);
	g->unbalanced = opt->unbalanced && f % 3 == 2 && opt->markers >= 4;
	g->plan = &g->plans[g->unbalanced];
	g->markers = 0;
	g->spike = spike_factor(opt, f);
	if (opt->scale_count > 0) {
		char name[64];
		snprintf(name, sizeof(name), "Frame %" PRIu64, f);
		g->frame_scale = scale_of(opt, name);
	}
	int64_t t0 = CPU_START_NS + (int64_t)f * FRAME_NS + (int64_t)(40.0 * US * rng_unit(&g->rng));
	/* The scene's cost wanders slowly (a triangle wave over 8 s) plus
	 * a little noise per frame: GPU 0's graphics work runs 9 to 14 ms. */
	double phase = (double)(f % 480) / 480.0;
	double load = 1.17 + 0.15 * (4.0 * (phase < 0.5 ? phase : 1.0 - phase) - 1.0) +
		      0.08 * (rng_unit(&g->rng) - 0.5);

	if ((r = crumbs_writer_frame_begin(g->w, f, (uint64_t)t0)) != CRUMBS_OK)
		return r;
	for (unsigned gpu = 0; gpu < opt->gpus; gpu++) {
		/* A calibrated-timestamps read: the true pair, with the CPU
		 * side off by up to half the deviation it reports. */
		int64_t at = t0 + 40 * US + (int64_t)(100.0 * US * rng_unit(&g->rng));
		int64_t deviation = 150 + (int64_t)(300.0 * rng_unit(&g->rng));
		int64_t error = (int64_t)((double)deviation * (rng_unit(&g->rng) - 0.5));
		if ((r = crumbs_writer_calibration(g->w, gpu, gpu_ticks(gpu, at),
						   (uint64_t)(at + error), (uint64_t)deviation)) != CRUMBS_OK)
			return r;
	}
	for (unsigned q = 0; q < g->queue_count; q++)
		if ((r = crumbs_writer_queue_ready(g->w, q, queue_ticks(q, g->free_ns[q]))) != CRUMBS_OK)
			return r;

	/* Streaming uploads first; every 5th frame the staging buffer is
	 * filled on the host, which signals when it is done. */
	bool host_wait = f % 5 == 2;
	const struct crumbs_semaphore_op host_op = { SEM_HOST_STAGING, f / 5 + 1 };
	const struct crumbs_semaphore_op uploads_op = { SEM_UPLOADS_DONE, v };
	int64_t xfer_cpu = t0 + 300 * US + (int64_t)(100.0 * US * rng_unit(&g->rng));
	int64_t host_ns = xfer_cpu + 200 * US + (int64_t)(400.0 * US * rng_unit(&g->rng));
	struct submission xfer = { .queue = XFER0, .cpu_ns = xfer_cpu, .load = 1.0,
				   .ready_ns = host_wait ? host_ns + 15 * US : 0,
				   .waits = &host_op, .wait_count = host_wait,
				   .signals = &uploads_op, .signal_count = 1 };
	if ((r = submit(g, &xfer)) != CRUMBS_OK)
		return r;
	if (host_wait && (r = crumbs_writer_host_signal(g->w, host_op.semaphore, host_op.value,
							(uint64_t)host_ns)) != CRUMBS_OK)
		return r;

	/* Graphics, first batch: shadows and the depth prepass. */
	const struct crumbs_semaphore_op shadows_op = { SEM_SHADOWS_DONE, v };
	struct submission gfx_shadows = {
		.queue = GFX0, .index = 0, .load = load, .signals = &shadows_op, .signal_count = 1,
		.cpu_ns = t0 + 1000 * US + (int64_t)(200.0 * US * rng_unit(&g->rng)) };
	if ((r = submit(g, &gfx_shadows)) != CRUMBS_OK)
		return r;

	if (opt->gpus == 2) {
		/* GPU 1 renders reflection captures and a second view, which
		 * reads the particles its compute queue simulates (a
		 * stage-masked wait: the captures run meanwhile). */
		const struct crumbs_semaphore_op particles_op = { SEM_PARTICLES_DONE, v };
		double load1 = 1.0 + (load - 1.17) / 2;
		struct submission comp1 = { .queue = COMP1, .cpu_ns = t0 + 1050 * US, .load = load1,
					    .signals = &particles_op, .signal_count = 1 };
		if ((r = submit(g, &comp1)) != CRUMBS_OK)
			return r;
		struct submission gfx1 = { .queue = GFX1, .cpu_ns = t0 + 1100 * US, .load = load1,
					   .dep_ns = comp1.end_ns + 5 * US,
					   .waits = &particles_op, .wait_count = 1 };
		if ((r = submit(g, &gfx1)) != CRUMBS_OK)
			return r;
	}

	/* Async compute is submitted early and waits for the depth buffer,
	 * then overlaps the base pass. */
	const struct crumbs_semaphore_op compute_op = { SEM_COMPUTE_DONE, v };
	struct submission comp0 = {
		.queue = COMP0, .load = load, .ready_ns = gfx_shadows.end_ns + 8 * US,
		.waits = &shadows_op, .wait_count = 1, .signals = &compute_op, .signal_count = 1,
		.cpu_ns = t0 + 1200 * US + (int64_t)(100.0 * US * rng_unit(&g->rng)) };
	if ((r = submit(g, &comp0)) != CRUMBS_OK)
		return r;

	/* Graphics, second batch: base pass, lighting, translucency. Its
	 * waits are stage-masked: only lighting needs the compute results.
	 * Every 7th frame the CPU is late with it and the queue idles. */
	const struct crumbs_semaphore_op mid_waits[2] = { compute_op, uploads_op };
	double late = rng_unit(&g->rng);
	struct submission gfx_main = {
		.queue = GFX0, .index = 1, .load = load, .dep_ns = comp0.end_ns + 5 * US,
		.waits = mid_waits, .wait_count = 2,
		.cpu_ns = f % 7 == 1 ? gfx_shadows.end_ns + 500 * US + (int64_t)(1500.0 * US * late) :
			  t0 + 2000 * US + (int64_t)(300.0 * US * late) };
	if ((r = submit(g, &gfx_main)) != CRUMBS_OK)
		return r;

	/* Graphics, last batch: post processing, then present. */
	const struct crumbs_semaphore_op render_op = { SEM_RENDER_DONE, v };
	struct submission gfx_post = {
		.queue = GFX0, .index = 2, .load = load, .signals = &render_op, .signal_count = 1,
		.cpu_ns = max64(t0 + 4500 * US + (int64_t)(500.0 * US * rng_unit(&g->rng)),
				gfx_main.cpu_ns + 300 * US) };
	if ((r = submit(g, &gfx_post)) != CRUMBS_OK)
		return r;

	int64_t t1 = CPU_START_NS + (int64_t)(f + 1) * FRAME_NS;
	if ((opt->memory && (r = write_memory(g, f)) != CRUMBS_OK) ||
	    (r = write_cpu_threads(g, t0, t1)) != CRUMBS_OK ||
	    (opt->tasks && (r = write_tasks(g, t0, t1)) != CRUMBS_OK) ||
	    (opt->timeline_frames && (r = write_timeline_frames(g, t0, t1)) != CRUMBS_OK) ||
	    (opt->presents && (r = write_presents(g, f, t1)) != CRUMBS_OK))
		return r;
	return crumbs_writer_frame_end(g->w, (uint64_t)(CPU_START_NS + (int64_t)(f + 1) * FRAME_NS),
				       opt->leaves ? CRUMBS_FRAME_FULL_DETAIL : 0, 0);
}

/* ------------------------------------------------------------------------ */
/* Stress frames                                                            */
/* ------------------------------------------------------------------------ */

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...);

/*
 * --stress-*: frames shaped to test what reads them rather than to look
 * like a renderer's: on every queue of every GPU one submission holding a
 * chain of --stress-depth nested scopes, the rest of the queue's
 * --stress-scopes beside the innermost, each 500 ns long; names of
 * exactly --stress-name-bytes bytes, all alike or each its own. GPU
 * clocks count nanoseconds of the CPU clock.
 */
static bool stress_mode(const struct options *opt)
{
	return opt->stress_gpus || opt->stress_queues || opt->stress_depth || opt->stress_scopes ||
	       opt->stress_name_bytes || opt->stress_distinct;
}

/* Fills in what the --stress-* options given leave out, and checks that
 * a frame stays within the format's limits; 2 after a usage error. */
static int stress_options(struct options *opt)
{
	if (!opt->stress_gpus)
		opt->stress_gpus = 1;
	if (!opt->stress_queues)
		opt->stress_queues = 1;
	if (!opt->stress_depth)
		opt->stress_depth = 1;
	if (!opt->stress_scopes)
		opt->stress_scopes = opt->stress_depth;
	if (!opt->stress_name_bytes)
		opt->stress_name_bytes = 16;
	if (opt->stress_gpus * opt->stress_queues > MAX_STRESS_QUEUES)
		return usage_error("%" PRIu64 " GPUs of %" PRIu64 " queues are more than the %d queues "
				   "a capture holds", opt->stress_gpus, opt->stress_queues,
				   MAX_STRESS_QUEUES);
	if (opt->stress_scopes < opt->stress_depth)
		return usage_error("option '--stress-scopes': %" PRIu64 " scopes cannot nest %" PRIu64
				   " deep", opt->stress_scopes, opt->stress_depth);
	uint64_t scopes = opt->stress_gpus * opt->stress_queues * opt->stress_scopes;
	if (scopes > MAX_FRAME_SCOPES)
		return usage_error("--stress-* make frames of %" PRIu64 " scopes; a frame holds at "
				   "most %" PRIu64, scopes, MAX_FRAME_SCOPES);
	if (scopes * opt->stress_name_bytes > MAX_FRAME_NAME_BYTES)
		return usage_error("--stress-* make frames of %" PRIu64 " bytes of names; a frame "
				   "holds at most %" PRIu64, scopes * opt->stress_name_bytes,
				   MAX_FRAME_NAME_BYTES);
	return 0;
}

/* Scope k of a queue's frame, named in buf (room for MAX_NAME_BYTES + 1). */
static const char *stress_name(const struct options *opt, uint64_t k, char *buf)
{
	size_t len = (size_t)opt->stress_name_bytes;
	int n = opt->stress_distinct ? snprintf(buf, MAX_NAME_BYTES + 1, "Stress %" PRIu64, k) :
				       snprintf(buf, MAX_NAME_BYTES + 1, "Stress");
	if ((size_t)n < len)
		memset(buf + n, '~', len - (size_t)n);
	buf[len] = '\0';
	return buf;
}

static enum crumbs_result stress_setup(struct gen *g)
{
	const struct options *opt = g->opt;
	enum crumbs_result r;
	for (uint64_t gpu = 0; gpu < opt->stress_gpus; gpu++) {
		char name[48];
		snprintf(name, sizeof(name), "Crumbs Stress GPU %" PRIu64, gpu);
		const struct crumbs_gpu_desc d = { name, "crumbs virtual driver", 0x10de, 0x2684, 1, 1 };
		if ((r = crumbs_writer_add_gpu(g->w, &d, NULL)) != CRUMBS_OK ||
		    (r = crumbs_writer_calibration(g->w, (uint32_t)gpu, (uint64_t)CPU_START_NS,
						   (uint64_t)CPU_START_NS, 100)) != CRUMBS_OK)
			return r;
	}
	for (uint64_t gpu = 0; gpu < opt->stress_gpus; gpu++)
		for (uint64_t q = 0; q < opt->stress_queues; q++) {
			const struct crumbs_queue_desc d = {
				(uint32_t)gpu, (uint32_t)q, 0,
				q == 0 ? CRUMBS_QUEUE_GRAPHICS | CRUMBS_QUEUE_COMPUTE |
					 CRUMBS_QUEUE_TRANSFER : CRUMBS_QUEUE_COMPUTE,
				1.0f, 64 };
			if ((r = crumbs_writer_add_queue(g->w, &d, NULL)) != CRUMBS_OK)
				return r;
		}
	return CRUMBS_OK;
}

static enum crumbs_result stress_frame(struct gen *g, uint64_t f)
{
	const struct options *opt = g->opt;
	int64_t t0 = CPU_START_NS + (int64_t)f * FRAME_NS;
	uint64_t queues = opt->stress_gpus * opt->stress_queues;
	char name[MAX_NAME_BYTES + 1];
	enum crumbs_result r;

	if ((r = crumbs_writer_frame_begin(g->w, f, (uint64_t)t0)) != CRUMBS_OK)
		return r;
	for (uint64_t q = 0; q < queues; q++) {
		int64_t t = t0 + 1000 * US + (int64_t)q * 10 * US;
		const struct crumbs_submit_desc d = { (uint32_t)q, (uint64_t)(t - 5 * US),
						      (uint64_t)t, NULL, 0, NULL, 0 };
		if ((r = crumbs_writer_submit_begin(g->w, &d)) != CRUMBS_OK)
			return r;
		for (uint64_t k = 0; k < opt->stress_scopes; k++) {
			/* The chain's scopes stay open, but its innermost, which
			 * the rest follow as siblings, one level deep like it. */
			bool open = k + 1 < opt->stress_depth;
			if ((r = crumbs_writer_scope_begin(g->w, stress_name(opt, k, name),
							   (unsigned)(k < 3 ? k : 3), (uint64_t)++t)) != CRUMBS_OK)
				return r;
			t += 500;
			if (!open && (r = crumbs_writer_scope_end(g->w, (uint64_t)t)) != CRUMBS_OK)
				return r;
		}
		for (uint64_t k = 1; k < opt->stress_depth; k++)
			if ((r = crumbs_writer_scope_end(g->w, (uint64_t)++t)) != CRUMBS_OK)
				return r;
		if ((r = crumbs_writer_submit_end(g->w, (uint64_t)(t + 100))) != CRUMBS_OK)
			return r;
	}
	return crumbs_writer_frame_end(g->w, (uint64_t)(t0 + FRAME_NS), 0, 0);
}

static enum crumbs_result write_setup(struct gen *g)
{
	static const struct crumbs_gpu_desc gpus[2] = {
		{ "Crumbs Virtual GPU 0 (deferred)", "crumbs virtual driver", 0x10de, 0x2684,
		  (550u << 22) | (54u << 14) | (14u << 6), (1u << 22) | (3u << 12) | 277u },
		{ "Crumbs Virtual GPU 1 (reflections)", "crumbs virtual driver", 0x8086, 0x56a0,
		  (23u << 22) | (3u << 12) | 4u, (1u << 22) | (3u << 12) | 264u },
	};
	enum crumbs_result r;

	for (unsigned gpu = 0; gpu < g->opt->gpus; gpu++)
		if ((r = crumbs_writer_add_gpu(g->w, &gpus[gpu], NULL)) != CRUMBS_OK)
			return r;
	for (unsigned q = 0; q < g->queue_count; q++)
		if ((r = crumbs_writer_add_queue(g->w, &queue_infos[q].desc, NULL)) != CRUMBS_OK)
			return r;
	/* Read when the device was created, well before the first frame. */
	for (unsigned gpu = 0; gpu < g->opt->gpus; gpu++) {
		int64_t at = CPU_START_NS - 500 * MS;
		if ((r = crumbs_writer_calibration(g->w, gpu, gpu_ticks(gpu, at), (uint64_t)at + 120,
						   310)) != CRUMBS_OK)
			return r;
	}
	for (unsigned q = 0; q < g->queue_count; q++)
		g->free_ns[q] = CPU_START_NS - 3 * MS;
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* The command line                                                         */
/* ------------------------------------------------------------------------ */

enum option_kind {
	OPT_STRING,
	OPT_NUMBER,  /* an integer from min to max */
	OPT_DECIMAL, /* a decimal like 2.5, from min to max */
	OPT_SCALE,   /* PATTERN=FACTOR, repeatable */
	OPT_SWITCH
};

struct option_spec {
	const char *name;
	char short_name;
	enum option_kind kind;
	const char *value; /* the value's name in the help */
	size_t offset;     /* of the field in struct options */
	uint64_t min, max;
	const char *help;
};

#define FIELD(f) offsetof(struct options, f)

static const struct option_spec option_specs[] = {
	{ "output", 'o', OPT_STRING, "FILE", FIELD(output), 0, 0,
	  "write the capture to FILE (required)" },
	{ "frames", 0, OPT_NUMBER, "N", FIELD(frames), 1, MAX_FRAMES,
	  "frames to write (default 3)" },
	{ "markers-per-frame", 0, OPT_NUMBER, "M", FIELD(markers), 1, MAX_MARKERS,
	  "scope begins and ends per frame, over all GPUs\n"
	  "and queues (default 120); an odd M is rounded\n"
	  "up to even" },
	{ "seed", 0, OPT_NUMBER, "S", FIELD(seed), 0, UINT64_MAX,
	  "seed of the timing jitter, --noise and --spikes\n"
	  "(default 1); the same options write the same\n"
	  "bytes" },
	{ "noise-seed", 0, OPT_NUMBER, "S", FIELD(noise_seed), 0, UINT64_MAX - 1,
	  "seed of --noise and --spikes alone (default:\n"
	  "--seed): another run of the same scenario" },
	{ "gpus", 0, OPT_NUMBER, "1|2", FIELD(gpus), 1, 2,
	  "GPUs to simulate (default 2)" },
	{ "leaves", 0, OPT_SWITCH, NULL, FIELD(leaves), 0, 0,
	  "record draws, dispatches and copies, and the\n"
	  "base pass's render pass (its begin and end\n"
	  "count as markers)" },
	{ "pipeline-ids", 0, OPT_SWITCH, NULL, FIELD(pipeline_ids), 0, 0,
	  "with --leaves, name draws' and dispatches'\n"
	  "pipelines as the layer names those a program\n"
	  "did not name: 'pipeline 3f2a', or a dispatch's\n"
	  "entry point and identity; scopes named alike\n"
	  "but for a number at the end share one" },
	{ "unbalanced", 0, OPT_SWITCH, NULL, FIELD(unbalanced), 0, 0,
	  "every third frame, leave a scope open at the\n"
	  "frame's end and end one that never began\n"
	  "(when M is at least 4)" },
	{ "scale", 0, OPT_SCALE, "PATTERN=FACTOR", FIELD(scales), 0, MAX_FACTOR,
	  "multiply by FACTOR (a decimal above 0, at most\n"
	  "100) the own GPU time of the scopes whose name\n"
	  "matches PATTERN (*, ?, [...], as in crumbs\n"
	  "report --root): their parents grow and the work\n"
	  "after them moves later; repeatable, the last\n"
	  "PATTERN that matches a scope decides" },
	{ "noise", 0, OPT_DECIMAL, "PCT", FIELD(noise_pct), 0, 100,
	  "vary each scope's own time in each frame by a\n"
	  "factor drawn uniformly from 1 - PCT/100 to\n"
	  "1 + PCT/100 (PCT from 0 to 100, default 0)" },
	{ "spikes", 0, OPT_NUMBER, "N", FIELD(spikes), 0, MAX_FRAMES,
	  "make N frames spikes, in which all GPU work\n"
	  "takes 2x to 3x as long (uniform): one frame\n"
	  "drawn from the seed in each of N equal stretches\n"
	  "of the capture (default 0, at most --frames)" },
	{ "cpu-threads", 0, OPT_NUMBER, "N", FIELD(cpu_threads), 0, MAX_CPU_THREADS,
	  "N CPU threads a frame (0 to 256, default 0):\n"
	  "'Main Thread', 'Render Thread', 'Worker 0',\n"
	  "..., tids from 1000, each a small tree of\n"
	  "scopes inside the frame (not in stress frames)" },
	{ "waits", 0, OPT_SWITCH, NULL, FIELD(waits), 0, 0,
	  "with --cpu-threads, the first thread ends the\n"
	  "frames, and in every other frame waits for the\n"
	  "GPU ('Wait for GPU')" },
	{ "tasks", 0, OPT_NUMBER, "N", FIELD(tasks), 0, MAX_TASKS,
	  "N tasks a frame (0 to 1000, default 0) on\n"
	  "timelines 'Jobs' and 'Streaming', waiting and\n"
	  "executing: one begun before the frame, one left\n"
	  "running, 'Skin' waiting for 'Cull' to end and\n"
	  "'Shade' not (not in stress frames)" },
	{ "timeline-frames", 0, OPT_SWITCH, NULL, FIELD(timeline_frames), 0, 0,
	  "mark two frames of kind 'Game' in each frame" },
	{ "memory", 0, OPT_NUMBER, "BYTES", FIELD(memory), 1, 1ull << 40,
	  "video memory on each GPU: 64 MiB in use, and\n"
	  "BYTES more each frame (2 allocations, 1 free);\n"
	  "a host heap of the driver's usage and budget\n"
	  "(not in stress frames)" },
	{ "presents", 0, OPT_SWITCH, NULL, FIELD(presents), 0, 0,
	  "present each frame, and say when the one before\n"
	  "was shown: every 7th a v-sync late" },
	{ "chunk-kib", 0, OPT_NUMBER, "K", FIELD(chunk_kib), 1, MAX_CHUNK_KIB,
	  "compress records K KiB at a time (default:\n"
	  "the writer's, 1024)" },
	{ "stress-gpus", 0, OPT_NUMBER, "N", FIELD(stress_gpus), 1, MAX_STRESS_GPUS,
	  "stress frames instead of the renderer's (any\n"
	  "--stress-* option): N GPUs (1 to 64)" },
	{ "stress-queues", 0, OPT_NUMBER, "N", FIELD(stress_queues), 1, MAX_STRESS_QUEUES,
	  "N queues a GPU (at most 256 in all)" },
	{ "stress-depth", 0, OPT_NUMBER, "N", FIELD(stress_depth), 1, MAX_STRESS_DEPTH,
	  "a chain of N nested scopes a queue (1 to 255)" },
	{ "stress-scopes", 0, OPT_NUMBER, "N", FIELD(stress_scopes), 1, MAX_FRAME_SCOPES,
	  "N scopes a queue and frame, those past the\n"
	  "chain beside its innermost (default:\n"
	  "the depth; 262144 a frame at most)" },
	{ "stress-name-bytes", 0, OPT_NUMBER, "N", FIELD(stress_name_bytes), 1, MAX_NAME_BYTES,
	  "names of N bytes (default 16, at most 4096;\n"
	  "16 MiB of them a frame)" },
	{ "stress-distinct", 0, OPT_SWITCH, NULL, FIELD(stress_distinct), 0, 0,
	  "each scope of a queue its own name, not one\n"
	  "for all" },
	{ "verbose", 0, OPT_SWITCH, NULL, FIELD(verbose), 0, 0,
	  "print frames, markers, file size and bytes\n"
	  "per marker" },
	{ "help", 'h', OPT_SWITCH, NULL, FIELD(help), 0, 0, "show this help" },
};

#define OPTION_COUNT (sizeof(option_specs) / sizeof(option_specs[0]))

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("crumbs-gen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'crumbs-gen --help'.\n", stderr);
	return 2;
}

static void print_help(void)
{
	printf("usage: crumbs-gen -o FILE [options]\n\n"
	       "Writes a capture of a deferred renderer's frames with no GPU: shadows,\n"
	       "prepass, base pass, lighting, translucency and post processing on GPU 0's\n"
	       "graphics queue, async compute, streaming uploads, and reflection captures\n"
	       "on GPU 1, with semaphores between them and calibrated clocks.\n\n"
	       "options:\n");
	for (size_t i = 0; i < OPTION_COUNT; i++) {
		const struct option_spec *o = &option_specs[i];
		char left[48];
		snprintf(left, sizeof(left), "--%s%s%s", o->name, o->value ? " " : "",
			 o->value ? o->value : "");
		if (o->short_name)
			printf("  -%c, %-24s  ", o->short_name, left);
		else
			printf("      %-24s  ", left);
		for (const char *h = o->help; *h; h++) {
			putchar(*h);
			if (*h == '\n')
				printf("%32s", "");
		}
		putchar('\n');
	}
}

/* A decimal like 2, 2.5 or .5 (no sign, exponent or spaces) in *x. */
static bool parse_decimal(const char *s, double *x)
{
	size_t digits = strspn(s, "0123456789");
	const char *rest = s + digits;

	if (*rest == '.') {
		size_t more = strspn(rest + 1, "0123456789");
		digits += more;
		rest += 1 + more;
	}
	if (digits == 0 || *rest != '\0')
		return false;
	*x = strtod(s, NULL);
	return true;
}

static int set_option(struct options *opt, const struct option_spec *o, const char *shown,
		      const char *value)
{
	char *field = (char *)opt + o->offset;

	if (o->kind == OPT_STRING) {
		*(const char **)field = value;
		return 0;
	}
	if (o->kind == OPT_SCALE) {
		/* The last '=', so that a pattern may hold one. */
		const char *eq = strrchr(value, '=');
		double factor;
		if (!eq || eq == value || eq[1] == '\0')
			return usage_error("option '%s' needs PATTERN=FACTOR, got '%s'", shown, value);
		if (!parse_decimal(eq + 1, &factor) || factor <= 0 || factor > (double)o->max)
			return usage_error("option '%s': in '%s', '%s' is not a number above 0 and at "
					   "most %" PRIu64, shown, value, eq + 1, o->max);
		if (opt->scale_count == MAX_SCALES)
			return usage_error("option '%s' given more than %d times", shown, MAX_SCALES);
		opt->scales[opt->scale_count++] =
			(struct scale_rule){ value, (size_t)(eq - value), factor };
		return 0;
	}
	if (o->kind == OPT_DECIMAL) {
		double x;
		if (!parse_decimal(value, &x) || x < (double)o->min || x > (double)o->max)
			return usage_error("option '%s': '%s' is not a number from %" PRIu64
					   " to %" PRIu64, shown, value, o->min, o->max);
		*(double *)field = x;
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long long x = strtoull(value, &end, 10);
	if (value[0] < '0' || value[0] > '9' || *end != '\0' || errno != 0 || x < o->min ||
	    x > o->max)
		return usage_error("option '%s': '%s' is not a number from %" PRIu64 " to %" PRIu64,
				   shown, value, o->min, o->max);
	*(uint64_t *)field = x;
	return 0;
}

/* Returns 0, or 2 after printing a usage error. */
static int parse_options(int argc, char **argv, struct options *opt)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *value = NULL;
		const struct option_spec *o = NULL;
		char shown[48];

		if (arg[0] != '-' || arg[1] == '\0')
			return usage_error("unexpected argument '%s'", arg);
		if (arg[1] == '-') {
			const char *name = arg + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			for (size_t k = 0; k < OPTION_COUNT && !o; k++)
				if (strlen(option_specs[k].name) == len &&
				    strncmp(option_specs[k].name, name, len) == 0)
					o = &option_specs[k];
			snprintf(shown, sizeof(shown), "--%.*s", (int)(len < 40 ? len : 40), name);
			value = eq ? eq + 1 : NULL;
		} else {
			for (size_t k = 0; k < OPTION_COUNT && !o; k++)
				if (option_specs[k].short_name == arg[1])
					o = &option_specs[k];
			snprintf(shown, sizeof(shown), "-%c", arg[1]);
			value = arg[2] ? arg + 2 : NULL;
		}
		if (!o)
			return usage_error("unknown option '%s'", shown);
		if (o->kind == OPT_SWITCH) {
			if (value)
				return usage_error("option '%s' takes no value", shown);
			*(bool *)((char *)opt + o->offset) = true;
			continue;
		}
		if (!value) {
			if (i + 1 >= argc)
				return usage_error("option '%s' needs a value (%s)", shown, o->value);
			value = argv[++i];
		}
		if (set_option(opt, o, shown, value) != 0)
			return 2;
	}
	return 0;
}

/* Standard output is checked before exiting 0: a full disk is a failure. */
static int finish_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "crumbs-gen: cannot write to standard output: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options opt = { .frames = 3, .markers = 120, .seed = 1, .noise_seed = UINT64_MAX,
			       .gpus = 2 };
	struct gen g = { .opt = &opt };
	enum crumbs_result r = CRUMBS_OK;
	int status = 1;

	if (parse_options(argc, argv, &opt) != 0)
		return 2;
	if (opt.help) {
		print_help();
		return finish_stdout();
	}
	if (!opt.output)
		return usage_error("no output file (give -o FILE)");
	if (opt.noise_seed == UINT64_MAX)
		opt.noise_seed = opt.seed;
	if (opt.pipeline_ids && !opt.leaves)
		return usage_error("option '--pipeline-ids' names the pipelines of leaves (add --leaves)");
	if (opt.spikes > opt.frames)
		return usage_error("option '--spikes': %" PRIu64 " is more than the %" PRIu64
				   " frames written (raise --frames)", opt.spikes, opt.frames);
	opt.markers += opt.markers % 2;
	g.queue_count = opt.gpus == 2 ? QUEUE_COUNT : GFX1;
	bool stress = stress_mode(&opt);
	if (stress && stress_options(&opt) != 0)
		return 2;
	if (stress)
		opt.markers = 2 * opt.stress_gpus * opt.stress_queues * opt.stress_scopes;

	uint64_t scopes = opt.markers / 2;
	if (!plan_init(&g.plans[0], scopes, (unsigned)opt.gpus, opt.leaves, opt.seed) ||
	    !plan_init(&g.plans[1], scopes - 1, (unsigned)opt.gpus, opt.leaves, opt.seed)) {
		fprintf(stderr, "crumbs-gen: out of memory\n");
		goto out;
	}
	plan_scale(&g.plans[0], &opt);
	plan_scale(&g.plans[1], &opt);
	g.frame_scale = 1.0;
	g.overlay_scale = scale_of(&opt, "Debug Overlay");

	const struct crumbs_writer_desc desc = {
		.path = opt.output,
		.producer = PRODUCER,
		.created_unix_s = CRUMBS_CREATED_UNKNOWN,
		.chunk_bytes = (uint32_t)(opt.chunk_kib * 1024),
	};
	if ((r = crumbs_writer_open(&desc, &g.w)) != CRUMBS_OK ||
	    (r = stress ? stress_setup(&g) : write_setup(&g)) != CRUMBS_OK)
		goto out;
	for (uint64_t f = 0; f < opt.frames; f++) {
		if ((r = stress ? stress_frame(&g, f) : write_frame(&g, f)) != CRUMBS_OK)
			goto out;
		if (!stress && g.markers != opt.markers) {
			fprintf(stderr, "crumbs-gen: frame %" PRIu64 " has %" PRIu64 " markers, "
				"not %" PRIu64 " (a bug in crumbs-gen)\n", f, g.markers, opt.markers);
			goto out;
		}
	}
	r = crumbs_writer_close(g.w);
	g.w = NULL;
	if (r != CRUMBS_OK)
		goto out;
	status = 0;
	if (opt.verbose) {
		struct stat st;
		if (stat(opt.output, &st) != 0) {
			fprintf(stderr, "crumbs-gen: cannot read '%s': %s\n", opt.output, strerror(errno));
			status = 1;
			goto out;
		}
		uint64_t markers = opt.frames * opt.markers;
		printf("'%s': %" PRIu64 " frames, %" PRIu64 " markers (%" PRIu64 " per frame), "
		       "%lld bytes, %.3f bytes per marker\n", opt.output, opt.frames, markers,
		       opt.markers, (long long)st.st_size, (double)st.st_size / (double)markers);
		status = finish_stdout();
	}
out:
	if (r != CRUMBS_OK)
		fprintf(stderr, "crumbs-gen: cannot write '%s': %s\n", opt.output,
			crumbs_result_str(r));
	crumbs_writer_free(g.w);
	free(g.plans[0].nodes);
	free(g.plans[1].nodes);
	return status;
}
