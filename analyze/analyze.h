/*
 * analyze.h: reads capture files and builds the timing model.
 *
 * A capture is read one frame at a time: memory grows with the largest
 * frame, not with the file. Each frame becomes a model: per GPU its frame
 * time, per queue its busy, wait and idle time and a tree of scopes and
 * leaf events with inclusive and exclusive times and counts. Nothing here
 * prints.
 */
#ifndef CRUMBS_ANALYZE_H
#define CRUMBS_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../capture/crumbs.h"

/* What went wrong reading a capture, with the byte where it did. */
struct analyze_error {
	enum crumbs_result code;
	uint64_t byte;    /* offset in the file, where it applies */
	char text[256];   /* e.g. "truncated at byte 4096" */
};

typedef struct reader reader;

struct capture_gpu {
	const char *name;
	const char *driver_name;
	uint32_t vendor_id;
	uint32_t device_id;
	uint32_t driver_version;
	uint32_t api_version;
	uint32_t calibration_samples; /* in setup chunks */
};

struct capture_queue {
	uint32_t gpu;
	uint32_t family;
	uint32_t index;
	uint32_t flags; /* enum crumbs_queue_flags */
	float timestamp_period;
	uint32_t timestamp_valid_bits;
	/* "Graphics 0", "Compute 1": the queue's type and its number among
	 * the GPU's queues of that type, in file order. */
	char name[32];
};

struct capture_meta {
	unsigned version_major;
	unsigned version_minor;
	const char *producer;
	uint64_t created_unix_s;
	uint64_t file_bytes;
	/* Devices and queues defined by the setup chunks read so far. */
	const struct capture_gpu *gpus;
	uint32_t gpu_count;
	const struct capture_queue *queues;
	uint32_t queue_count;
	/* From the index (or the chunk headers when there is none). */
	uint64_t frame_count;
	uint64_t first_frame;
	uint64_t last_frame;
	uint64_t chunk_count;
	bool has_index;
};

/*
 * Opens a capture file, or a capture in memory (the bytes must outlive the
 * capture). Reads and checks the header and the index, or walks the chunk
 * headers when there is no index. Fails only when nothing can be read: not
 * a capture, unsupported version, unreadable header. Damage further in is
 * kept and reported by reader_damage() and by the read that reaches it.
 * On success *out is owned by the caller; free it with reader_free().
 */
enum crumbs_result reader_open_file(const char *path, reader **out,
				    struct analyze_error *err);
enum crumbs_result reader_open_memory(const void *data, size_t size,
				      reader **out, struct analyze_error *err);

/* Frees the capture and every frame read from it. NULL is a no-op. */
void reader_free(reader *c);

/* What the capture holds; valid until the next call on c. */
const struct capture_meta *reader_meta(const reader *c);

/* The first damage found so far (code CRUMBS_OK when none). */
const struct analyze_error *reader_damage(const reader *c);

/* ------------------------------------------------------------------------ */
/* The model of a frame                                                     */
/* ------------------------------------------------------------------------ */

/* Draw and dispatch statistics. A count with its bit in `unknown` is a
 * lower bound: some event below did not know it (indirect draws). */
enum count_bits { COUNT_DRAWS = 1, COUNT_DISPATCHES = 2, COUNT_PRIMS = 4, COUNT_VERTS = 8 };

struct counts {
	uint64_t draws;
	uint64_t dispatches;
	uint64_t prims;
	uint64_t verts;
	unsigned unknown; /* enum count_bits */
};

enum node_flags {
	NODE_OPEN = 1u << 0,         /* still open at the frame end; closed there */
	NODE_UNTIMED = 1u << 1,      /* began or ended without a timestamp */
	NODE_QUEUE_ROOT = 1u << 2    /* the root of a queue's tree */
};

/*
 * One scope or event. Times are nanoseconds. exclusive_ns is the busy time
 * of the queue while this node was the innermost open one; inclusive_ns is
 * the sum of exclusive_ns over its subtree, so idle and wait gaps between
 * submissions never count. Children are in chronological (submission)
 * order.
 */
struct node {
	const char *name;   /* UTF-8, not NUL-terminated */
	uint32_t name_len;
	uint8_t kind;       /* enum crumbs_event_kind */
	uint8_t level;      /* detail level of a scope */
	uint16_t flags;     /* enum node_flags */
	uint32_t depth;     /* the queue root is 0 */
	uint32_t order;     /* chronological position in the queue */
	uint32_t child_count;
	struct node *parent;
	struct node *child;  /* first child */
	struct node *next;   /* next sibling */
	struct counts exclusive;
	struct counts inclusive;
	int64_t exclusive_ns;
	int64_t inclusive_ns;
	int64_t begin_ns;   /* CPU-clock time of its first timestamp, or INT64_MIN */
	int64_t end_ns;     /* of its last, or INT64_MIN */
};

enum frame_queue_flags {
	FRAME_QUEUE_NO_TIMESTAMPS = 1u << 0, /* timestamp_valid_bits == 0 */
	FRAME_QUEUE_NO_READY = 1u << 1       /* idle before the first submission unknown */
};

struct frame_queue {
	uint32_t queue;     /* index into capture_meta.queues */
	uint32_t flags;     /* enum frame_queue_flags */
	uint32_t submissions;
	uint32_t scopes;
	uint32_t events;    /* leaf events and render passes */
	uint32_t open_scopes;    /* closed at the frame end */
	uint32_t unmatched_ends; /* ends with nothing open */
	int64_t busy_ns;
	int64_t wait_ns;
	int64_t idle_ns;
	struct node *root;  /* named after the queue; inclusive_ns == busy_ns */
};

struct frame_gpu {
	uint32_t gpu;
	bool calibrated;    /* false: GPU time aligned at its first submission */
	uint32_t calibration_samples;
	double drift_ppm;   /* how much faster the GPU clock runs than the CPU's */
	int64_t frame_ns;   /* union of the busy time of all its queues */
	int64_t begin_ns;   /* first busy moment, or INT64_MIN */
	int64_t end_ns;     /* last busy moment */
};

struct frame {
	uint64_t number;
	int64_t cpu_begin_ns;
	int64_t cpu_end_ns;
	uint32_t flags;          /* enum crumbs_frame_flags */
	uint32_t dropped_scopes;
	struct frame_gpu *gpus;  /* one per GPU defined so far */
	uint32_t gpu_count;
	struct frame_queue *queues; /* one per queue defined so far */
	uint32_t queue_count;
	uint64_t scopes;
	uint64_t events;
	uint64_t timestamps;     /* GPU timestamps recorded in the frame */
};

/*
 * Reads the next frame. On success *out is the frame, or NULL at the end of
 * the capture; the frame (and every name in it) stays valid until the next
 * read, seek or free. At damage, returns its code with err filled in; the
 * frames before it were returned intact.
 */
enum crumbs_result reader_next_frame(reader *c, const struct frame **out,
				     struct analyze_error *err);

/* Positions the capture so that the next read returns frame `number`.
 * CRUMBS_ERROR_NOT_FOUND if the capture has no such frame. */
enum crumbs_result reader_seek_frame(reader *c, uint64_t number,
				     struct analyze_error *err);

/* Positions at the last frame that can be read (decoding the last chunk
 * to find it when the file is cut). */
enum crumbs_result reader_seek_last(reader *c, struct analyze_error *err);

/* Back to the first frame. */
enum crumbs_result reader_rewind(reader *c, struct analyze_error *err);

/* Uncompressed bytes decoded so far (for statistics). */
uint64_t reader_raw_bytes(const reader *c);

/* ------------------------------------------------------------------------ */
/* Comparing two captures (compare.c)                                       */
/* ------------------------------------------------------------------------ */

/*
 * The Mann-Whitney U test of two samples of per-frame values, each sorted
 * ascending: u is U of the first sample (the number of pairs in which its
 * value is the larger, ties counting a half), z its normal score with the
 * continuity correction and the correction for ties (negative when the
 * first sample tends to be smaller), p the two-sided p-value from the
 * normal approximation, which is close to the exact one from about 8
 * values a side. Returns -1 (p = 1) when a sample is empty.
 */
struct mann_whitney {
	double u;
	double z;
	double p;
};
int compare_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb,
			 struct mann_whitney *out);

enum compare_verdict {
	VERDICT_UNCHANGED,
	VERDICT_REGRESSED,
	VERDICT_IMPROVED,
	VERDICT_NEW,      /* only in the candidate */
	VERDICT_GONE,     /* only in the base */
	VERDICT_TOO_FEW   /* a side has fewer than min_frames frames */
};
const char *compare_verdict_name(enum compare_verdict v);

/* What a change must exceed to count (crumbs diff's options). */
struct compare_rule {
	double threshold_pct;   /* relative change, percent (--threshold, 5) */
	double min_ms;          /* absolute change (--min-ms, 0.05) */
	double alpha;           /* the test's p-value must be below (--alpha, 0.01) */
	uint64_t min_frames;    /* fewer on a side: too few frames (8); two
				 * single-frame sides are compared by the
				 * thresholds alone */
};

/* One side of a row: its statistic and its per-frame values, sorted
 * ascending (values may be NULL: the thresholds alone decide). frames 0:
 * the row is not in that capture. */
struct compare_side {
	uint64_t frames;
	int64_t stat_ns;
	const int64_t *values;
};

struct compare_result {
	enum compare_verdict verdict;
	int64_t change_ns;      /* candidate minus base */
	double change_pct;      /* of the base */
	double p;               /* the test's, 1 when not tested */
	bool tested;            /* the Mann-Whitney test was run */
};

/*
 * The verdict on a row: regressed (or improved) when the change is larger
 * than both thresholds and, where both sides have at least min_frames
 * frames, the Mann-Whitney test on their values gives p < alpha. Returns
 * out->verdict.
 */
enum compare_verdict compare_verdict(const struct compare_rule *rule, const struct compare_side *base,
				     const struct compare_side *cand, struct compare_result *out);

#endif
