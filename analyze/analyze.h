/* SPDX-License-Identifier: MIT */
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

#include "../include/crumbs_file.h"
#include "../util/util.h"

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

/*
 * Vendor counters (since format 1.5): a counter as the device describes
 * it (unit, storage and scope are Vulkan's VkPerformanceCounter*KHR
 * values), the pass that counts it in its set and the decimal digits its
 * values carry (a value v was written as v * 10^scale); and a set of them,
 * counted on queue family `family` of `gpu` in `groups` passes: a
 * one-frame capture takes pass 0, a run (round_robin) pass (frame number
 * mod groups) in each frame. Offered counters are what a family offers
 * (their gpu and family set, group and scale 0).
 */
struct capture_counter {
	const char *name;
	const char *category;
	uint32_t unit, storage, scope;
	uint32_t group, scale;
	uint32_t gpu, family;
};
struct capture_counter_set {
	uint32_t set, gpu, family, groups;
	bool round_robin;
	uint32_t count;
	const struct capture_counter *counters;
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
	/* Vendor counter sets and offered counters, from the setup chunks. */
	const struct capture_counter_set *counter_sets;
	uint32_t counter_set_count;
	const struct capture_counter *offered_counters;
	uint32_t offered_counter_count;
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

/*
 * A node's pipeline statistics (since format 1.5), indexed by enum
 * crumbs_pipeline_counter; `mask` has a bit for each counter some record
 * gave. Unknown: some of the work was not counted (a scope the recorder
 * could not place a query around), so the values are a lower bound and
 * are shown as unknown. The render area is a render pass's, for its
 * fragments per pixel, in pixels (0: not given); a scope given several,
 * one per pass it holds, has their sum.
 */
struct node_counters {
	struct node_vendor *vendor; /* vendor counters (counters.c); NULL: none */
	uint64_t exclusive[CRUMBS_PIPELINE_COUNTERS];
	uint64_t inclusive[CRUMBS_PIPELINE_COUNTERS];
	uint32_t exclusive_mask, inclusive_mask;
	bool exclusive_unknown, inclusive_unknown;
	uint64_t area_pixels;
};

enum node_flags {
	NODE_OPEN = 1u << 0,         /* still open at the frame end; closed there */
	NODE_UNTIMED = 1u << 1,      /* began or ended without a timestamp */
	NODE_QUEUE_ROOT = 1u << 2,   /* the root of a queue's tree */
	NODE_WAIT = 1u << 3,         /* a CPU scope waiting on the GPU or a present */
	NODE_BEGUN_EARLIER = 1u << 4 /* a task begun before the frame: shown from its begin */
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
	struct node_counters *counters; /* NULL: its subtree has none */
};

enum frame_queue_flags {
	FRAME_QUEUE_NO_TIMESTAMPS = 1u << 0, /* timestamp_valid_bits == 0 */
	FRAME_QUEUE_NO_READY = 1u << 1       /* idle before the first submission unknown */
};

/*
 * A scope of a queue as reader_flat_scopes gives it: its tree reduced to
 * scopes, in preorder. Events are not records: their time is the
 * enclosing scope's own, and the scopes inside them are its children.
 */
struct flat_scope {
	const char *name;   /* UTF-8, not NUL-terminated */
	uint32_t name_len;
	uint32_t parent;    /* the enclosing scope's index, or FLAT_NONE */
	uint32_t depth;     /* its node's depth in the tree: 1 below the root */
	int64_t exclusive_ns; /* busy while it was the innermost open scope */
	int64_t inclusive_ns;
};

#define FLAT_NONE UINT32_MAX

struct frame_queue {
	uint32_t queue;     /* index into capture_meta.queues */
	uint32_t flags;     /* enum frame_queue_flags */
	uint32_t submissions;
	uint32_t scopes;
	uint32_t events;    /* leaf events and render passes */
	uint32_t open_scopes;    /* closed at the frame end */
	uint32_t unmatched_ends; /* ends with nothing open */
	uint32_t unrecorded;     /* command buffers its submissions ran that the
				  * capture holds nothing of */
	int64_t busy_ns;
	int64_t wait_ns;
	int64_t idle_ns;
	struct node *root;  /* named after the queue; inclusive_ns == busy_ns */
	/* With reader_flat_scopes, its scopes (the root has no children). */
	struct flat_scope *flat;
	uint32_t flat_count;
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

/*
 * One submission of a frame, on the CPU clock, with the queue's time
 * before it as the walk of "The timing model" in docs/DESIGN.md accounts
 * it: idle from idle_begin_ns for idle_ns (the queue had nothing to do
 * before the CPU submitted this), then waiting on its semaphores from
 * wait_begin_ns for wait_ns. Apart from those, a queue's time from its first timestamp to
 * its last is busy. A queue without timestamps has only cpu_ns and counts.
 */
struct submission {
	uint32_t queue;       /* index into capture_meta.queues */
	uint32_t index;       /* its position among the queue's, from 0 */
	uint32_t waits;       /* semaphores it waits on */
	uint32_t signals;     /* semaphores it signals */
	uint32_t unrecorded;  /* command buffers it ran that the capture holds nothing of */
	int64_t cpu_ns;       /* when the CPU submitted it */
	int64_t begin_ns;     /* its first GPU timestamp, or INT64_MIN */
	int64_t end_ns;       /* its end timestamp, or INT64_MIN */
	int64_t idle_begin_ns;
	int64_t idle_ns;      /* 0: none */
	int64_t wait_begin_ns;
	int64_t wait_ns;      /* 0: none, or it did not have to wait */
};

/* A semaphore wait of a submission and the signal that released it: the
 * earliest known signal of that semaphore with a value at least the one
 * waited for. */
struct release {
	uint32_t waiter;      /* index into frame.submissions */
	uint32_t signaller;   /* index into frame.submissions; RELEASE_HOST:
			       * signalled by the host; RELEASE_UNKNOWN: no
			       * signal in the frame (the presentation engine,
			       * an earlier frame) */
	int64_t signal_ns;    /* when it was signalled, or INT64_MIN */
};

#define RELEASE_HOST (UINT32_MAX - 1)
#define RELEASE_UNKNOWN UINT32_MAX

/*
 * A CPU thread of a frame (format 1.3's CPU records) and the tree of its
 * scopes. A scope's inclusive_ns is its end minus its begin, its
 * exclusive_ns that less its children's inclusive_ns; the root, named
 * after the thread, holds its top-level scopes, its inclusive_ns their
 * sum and its exclusive_ns 0. Scopes open at the frame end are closed
 * there (NODE_OPEN); ends with nothing open are only counted. A time
 * earlier than one before it on the thread (which no clock gives) is
 * taken as that one, so children lie inside their parents.
 */
enum frame_cpu_kind {
	FRAME_CPU_THREAD = 0,   /* a thread and its scopes */
	FRAME_CPU_TIMELINE = 1  /* a task timeline: its tasks, their states below */
};

struct frame_cpu_thread {
	uint32_t kind;      /* enum frame_cpu_kind */
	uint32_t tid;       /* the OS's thread id; 0 for a timeline */
	const char *name;   /* UTF-8, not NUL-terminated; name_len 0: unnamed */
	uint32_t name_len;
	uint32_t scopes;
	uint32_t open_scopes;    /* closed at the frame end */
	uint32_t unmatched_ends; /* ends with nothing open */
	struct node *root;  /* with reader_skip_scopes, without children (a
			     * thread's tree is built under reader_flat_scopes) */
	/* A thread's: the union of its NODE_WAIT scopes' times. */
	int64_t wait_ns;
};

/*
 * Format 1.4's tasks. A timeline (kind FRAME_CPU_TIMELINE, named after
 * it, tid 0) holds its tasks as the root's children in the order they
 * began, overlapping as they may; a task's children are its states, one
 * node each time it entered one (named after the state, the first its
 * begin's), one after another, which fill it: a task's inclusive_ns is
 * its end (or the frame's end, NODE_OPEN) less its begin (or the frame's
 * begin, NODE_BEGUN_EARLIER), its exclusive_ns 0. `scopes` counts its
 * tasks. States and ends of unknown or ended tasks, and second begins of
 * an id, are counted in the frame's task_misuses.
 */
struct frame_task_dep {
	const struct node *task;     /* the blocked task; NULL: not in the frame */
	const struct node *blocking; /* NULL: not in the frame */
	const char *state;           /* the state it may not enter before
				      * blocking ends; not NUL-terminated */
	uint32_t state_len;
	uint64_t task_id, blocking_id;  /* the file's ids */
	int64_t entered_ns;  /* when task first entered state after the
			      * dependency was given; INT64_MIN: not in the frame */
	int64_t blocking_end_ns; /* INT64_MIN: not ended in the frame */
	bool violated;       /* entered before blocking ended */
};

/* A time a GPU was busy: the union of its queues' busy intervals. */
struct busy_interval {
	int64_t begin_ns;
	int64_t end_ns;
	uint32_t gpu;
};

/* One memory heap of a GPU in a frame (MEMORY, format 1.5): what the
 * program allocated and freed in the frame, what was in use at its end
 * and at most during it (`tracked`), and the driver's usage and budget of
 * the heap at its end (`budgeted`). Bytes, and counts of calls. */
struct frame_memory {
	uint32_t gpu;
	uint32_t heap;
	uint32_t flags;          /* enum crumbs_memory_heap_flags */
	uint64_t size;           /* the heap's */
	bool tracked;
	bool budgeted;
	uint64_t allocated, freed;
	uint64_t allocations, frees;
	uint64_t in_use, high;   /* high >= in_use */
	uint64_t usage, budget;
};

/* A boundary of a frame of another kind (TIMELINE_FRAME). */
struct frame_mark {
	const char *timeline;  /* not NUL-terminated */
	uint32_t timeline_len;
	int64_t ns;
};

/*
 * A present to a swapchain (format 1.5's PRESENT), and when one was shown
 * (PRESENT_SHOWN), which a later frame may say. Times are nanoseconds:
 * cpu_ns on the CPU clock, shown_ns on its source's clock (enum
 * crumbs_present_source).
 */
struct frame_present {
	uint64_t swapchain;   /* the producer's number for it */
	uint64_t id;          /* 0: none */
	int64_t cpu_ns;       /* when the present call began */
	int64_t duration_ns;  /* how long it took */
	int64_t refresh_ns;   /* the display's refresh period; 0: not known */
	uint8_t mode;         /* enum crumbs_present_mode */
	uint8_t flags;        /* enum crumbs_present_flags */
};

struct frame_shown {
	uint64_t swapchain;
	uint64_t id;          /* never 0 */
	int64_t shown_ns;
	uint8_t source;       /* enum crumbs_present_source */
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
	/* Every submission, in the capture's order, which is submission
	 * order on each queue; every semaphore wait, in that order too. */
	struct submission *submissions;
	uint32_t submission_count;
	struct release *releases;
	uint32_t release_count;
	/* CPU threads in order of their first selection in the frame; the
	 * CPU frame time is cpu_end_ns - cpu_begin_ns. Their scopes are not
	 * in `scopes`. */
	struct frame_cpu_thread *cpu_threads;  /* threads, then timelines */
	uint32_t cpu_thread_count;
	uint64_t cpu_scopes;
	int32_t frame_thread;    /* the index in cpu_threads of the thread that
				  * ends frames (FRAME_THREAD); -1: none */
	uint32_t frame_thread_tid; /* its tid, even when it has no scopes; 0: none */
	struct frame_task_dep *task_deps;
	uint32_t task_dep_count;
	uint32_t task_misuses;
	struct frame_mark *marks;  /* in the file's order */
	uint32_t mark_count;
	/* Memory heaps (format 1.5), by GPU and then heap (analyze/memory.c). */
	struct frame_memory *memory;
	uint32_t memory_count;
	/* Presents made in the frame and times of presents shown that
	 * became known in it (format 1.5), in the file's order. */
	const struct frame_present *presents;
	uint32_t present_count;
	const struct frame_shown *shown;
	uint32_t shown_count;
	/* Each GPU's busy time, disjoint intervals by GPU and then in time
	 * order, which frame_gpu.frame_ns sums. */
	const struct busy_interval *busy;
	uint32_t busy_count;
	/* Frames with the same nonzero names_epoch share their names'
	 * storage, so that nodes whose name pointers are equal have equal
	 * names. 0: not known. */
	uint64_t names_epoch;
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

/*
 * Reading a capture in parts, each on its own thread with its own reader:
 * reader_clone opens another reader of the same bytes (freed before the
 * one it came from when that one reads memory); the parts are the
 * capture's frames chunks, reader_part_count of them, part k taking
 * reader_part_bytes of the file; reader_read_parts positions at the first
 * frame of part `first` and makes reading end after the last of part
 * end - 1, as at the end of the capture (where damage found at open is
 * told only when end is the count).
 */
enum crumbs_result reader_clone(const reader *c, reader **out, struct analyze_error *err);
size_t reader_part_count(const reader *c);
uint64_t reader_part_bytes(const reader *c, size_t k);
/* The part whose chunk header says it holds frame `number`, or
 * reader_part_count when none does. */
size_t reader_part_of(const reader *c, uint64_t number);
enum crumbs_result reader_read_parts(reader *c, size_t first, size_t end,
				     struct analyze_error *err);
/* Makes reading end after the last frame of part end - 1, as
 * reader_read_parts does, from where the reader is: one whose next frame
 * is in an earlier part (or in the chunk it is reading) reads on to
 * there. */
void reader_end_parts(reader *c, size_t end);
/* Whether the next chunk is decompressed and decoded on a thread of the
 * reader's own while one is read (the default); a reader of one part
 * among threads that each read one does better without. */
void reader_prefetch(reader *c, bool on);

/* The decompressed size of part k's chunk, from its header (one small
 * read of the file), or the format's largest when that cannot be read:
 * what reading the part holds at once is about twice it. */
uint32_t reader_part_content_bytes(const reader *c, size_t k);

/* Frees what reading holds (the chunks, the frames decoded, the last
 * frame's model) and ends reading, keeping what reader_meta and
 * reader_damage say: a capture read whole, its statistics taken, costs
 * nothing more while another is read. reader_rewind or a seek reads
 * again. */
void reader_release_memory(reader *c);

/*
 * From the next read on, frames without their scopes and events: each
 * queue's root alone, holding the queue's whole busy time, with the rest
 * of the frame as always (busy, wait and idle, the GPUs' frame times, the
 * submissions and releases, and the counts of scopes, events, open scopes
 * and unmatched ends). For readers of frame times, which skip the cost of
 * the trees.
 */
void reader_skip_scopes(reader *c, bool skip);

/*
 * From the next read on, each queue's scopes as flat records
 * (frame_queue.flat) instead of a tree below its root, which keeps its
 * busy time: what statistics need, for less than the tree costs. Without
 * counts, event names or times of their own. reader_skip_scopes wins.
 */
void reader_flat_scopes(reader *c, bool flat);

/* ------------------------------------------------------------------------ */
/* Pipeline statistics and what follows from them (counters.c)              */
/* ------------------------------------------------------------------------ */

/* The name of a pipeline statistic ("fragment shader invocations"), and a
 * short one for a column's head ("FS Inv"). */
const char *counter_name(enum crumbs_pipeline_counter c);
const char *counter_short_name(enum crumbs_pipeline_counter c);

/* Counter c of n's subtree (inclusive) or of n alone: false when no
 * record gave it or n's are unknown (a lower bound would be wrong). */
bool node_counter(const struct node *n, bool inclusive, enum crumbs_pipeline_counter c,
		  uint64_t *v);
/* Whether n's counters (inclusive or exclusive) are marked unknown. */
bool node_counters_unknown(const struct node *n, bool inclusive);

/*
 * Numbers that answer questions, from a node's counters; false where the
 * counters they need are missing or unknown, or the divisor is 0:
 * - culled: primitives that reached clipping (clipping invocations) less
 *   those it put out (clipping primitives), the same stage's input and
 *   output, so that geometry and tessellation shaders' amplification is
 *   not taken for culling. Clipping may split a primitive into several,
 *   so this is a lower bound, and 0 when it would be negative.
 * - fragments per pixel: fragment shader invocations over the render
 *   area's pixels, of a render pass that recorded its area (overdraw).
 * - vertex invocations per input vertex: the post-transform cache's
 *   miss rate, 1 when nothing is reused.
 * - invocations per dispatch: compute shader invocations over the
 *   dispatches the node counts.
 */
/*
 * Vendor counters (since 1.5): a node holds those of one counter set (its
 * queue's), counter k being the set's k-th; node_vendor_set is 0 when it
 * has none. node_vendor_counter is false when the counter was not taken
 * in the node's frame (another pass took it) or the node's are unknown.
 * A value is in 10^-scale units of the counter's.
 */
uint32_t node_vendor_set(const struct node *n);
bool node_vendor_counter(const struct node *n, bool inclusive, uint32_t k, uint64_t *v);
bool node_vendor_unknown(const struct node *n, bool inclusive);
/* Set `set` of meta, or NULL. */
const struct capture_counter_set *meta_counter_set(const struct capture_meta *meta, uint32_t set);
/* The name of a VkPerformanceCounterUnitKHR ("bytes"), of a
 * VkPerformanceCounterStorageKHR ("uint64") and of a
 * VkPerformanceCounterScopeKHR ("command"). */
const char *counter_unit_name(uint32_t unit);
const char *counter_storage_name(uint32_t storage);
const char *counter_scope_name(uint32_t scope);

bool node_culled_primitives(const struct node *n, bool inclusive, uint64_t *v);
bool node_fragments_per_pixel(const struct node *n, bool inclusive, double *v);
bool node_vertex_reuse(const struct node *n, bool inclusive, double *v);
bool node_invocations_per_dispatch(const struct node *n, bool inclusive, double *v);

/* One vendor counter of a row: its value (in 10^-scale units of the
 * counter's) in each frame that counted it. */
struct counter_vendor_series {
	int64_t *values;         /* [frames] */
	uint64_t frames;
	size_t cap;
	uint64_t seen;           /* the mark of the last frame it was met in */
};
/*
 * Pipeline statistics over a run's frames (counters_runs.c; crumbs stats
 * and diff --counters): per queue and scope path (names from below the
 * queue, joined by " / ", a depth-1 name's frame number as '#', as crumbs
 * stats names its rows; "" the queue's own row, all its work), the inclusive value of each statistic in every
 * frame where it was known, scopes of one path in a frame summed.
 * Zero-initialised is empty.
 */
struct counter_series {
	uint32_t queue;          /* index into capture_meta.queues */
	char *path;              /* NUL-terminated, owned */
	size_t path_len;
	uint32_t mask;           /* statistics some frame gave */
	uint64_t frames;         /* frames it was known in */
	uint64_t unknown_frames; /* frames its statistics were unknown in */
	int64_t *values[CRUMBS_PIPELINE_COUNTERS]; /* [frames] each, 0 where absent */
	size_t value_cap[CRUMBS_PIPELINE_COUNTERS];
	bool sorted;             /* values ascending, not in frame order */
	/* Vendor counters (since 1.5) of one set, the first the row met (a
	 * row given another set's is hostile: those are left out), counter
	 * k of the set in vendor[k] for k < vendor_len: each known only in
	 * the frames that took its pass. */
	uint32_t vendor_set;     /* 0: none */
	uint32_t vendor_len;
	struct counter_vendor_series *vendor;
	uint64_t vendor_unknown_frames; /* frames its vendor counters were unknown in */
	/* The mark of the last frame the row was met in (counter_runs.frames
	 * then), for scopes of one path in a frame are summed, and whether
	 * that frame's statistics (vendor counters) were unknown. */
	uint64_t seen, vendor_seen;
	bool unknown_now, vendor_unknown_now;
};
struct counter_runs {
	struct counter_series *rows; /* in order of first appearance */
	size_t len, cap;
	uint32_t *slots;
	size_t slot_cap;
	uint64_t left_out;       /* scopes past 65536 rows or 64 MiB of their
				  * paths, not kept */
	size_t path_bytes;       /* of the rows' paths */
	uint64_t frames;         /* frames added */
	bool failed;             /* out of memory: what is held is incomplete */
};
/* Adds a frame (a tree: not one read with reader_flat_scopes). false
 * when out of memory. */
bool counter_runs_add_frame(struct counter_runs *r, const struct frame *f);
/* Sorts a row's values ascending (as compare_mann_whitney takes them),
 * its vendor counters' too. */
void counter_series_sort(struct counter_series *s);
/* The median (by nearest rank, the upper middle) of statistic k. */
int64_t counter_series_median(struct counter_series *s, enum crumbs_pipeline_counter k);
/* The median, as counter_series_median, of vendor counter k of the row's
 * set, over the s->vendor[k].frames frames that counted it, into *median;
 * false when none did. */
bool counter_series_vendor_median(struct counter_series *s, uint32_t k, int64_t *median);
/* The row of (queue, path), or NULL. */
const struct counter_series *counter_runs_find(const struct counter_runs *r, uint32_t queue,
					       const char *path, size_t len);
void counter_runs_release(struct counter_runs *r);

/* ------------------------------------------------------------------------ */
/* Events by pipeline (pipelines.c)                                         */
/* ------------------------------------------------------------------------ */

/*
 * The pipeline an event ran, as the layer names draws, dispatches and ray
 * tracing: the text after the first " · " of its name (the program's name
 * for the pipeline, or its identity, "pipeline 3f2a"), or "" (len 0) when
 * the name holds none. Returns false for nodes of other kinds (scopes,
 * render passes, copies), which run no pipeline.
 */
bool node_pipeline(const struct node *n, const char **name, uint32_t *len);

/* What tables and statistics call the pipeline of events that name none. */
#define PIPELINE_NONE_NAME "(no pipeline named)"

/* The events of one pipeline. */
struct pipeline_group {
	const char *name;    /* as node_pipeline gives it; valid while the frame is */
	uint32_t name_len;
	uint32_t first;      /* its rank in order of first appearance */
	uint64_t calls;      /* events */
	struct counts counts;
	int64_t exclusive_ns;
	bool untimed;        /* an event of it was not timed */
};

/* Groups of events by pipeline name, in order of first appearance;
 * zero-initialised is empty. */
struct pipeline_groups {
	struct pipeline_group *data;
	size_t len;
	size_t cap;
	uint32_t *slots;     /* groups by name */
	size_t slot_cap;
	uint64_t events;     /* grouped, over all groups */
	int64_t exclusive_ns;
	bool failed;         /* out of memory: what is held is incomplete */
};

/* Adds the events of the subtree of n (n included). */
void pipeline_groups_add(struct pipeline_groups *g, const struct node *n);
/* Empties g, keeping its memory. */
void pipeline_groups_clear(struct pipeline_groups *g);
void pipeline_groups_release(struct pipeline_groups *g);

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

/* ------------------------------------------------------------------------ */
/* Presentation over a run (present.c)                                      */
/* ------------------------------------------------------------------------ */

/*
 * The time from one present to the next on each swapchain, fed one frame
 * at a time. Where a swapchain's presents have times they were shown
 * (PRESENT_SHOWN), an interval is from one shown present to the next
 * shown one, on the clock of the source most of them have (display
 * timing before present wait where as many): the frame pacing a player
 * sees. Where none has, intervals are from one present call to the next
 * on the CPU clock, and are said to be so: crumbs never takes a CPU
 * interval for a shown one. Failed presents are left out.
 *
 * A missed v-sync is counted on a shown interval only, and only where
 * the later present knows the display's refresh period R and asked for
 * a v-sync of its own (present mode FIFO or FIFO relaxed): the interval
 * spans n = round(interval / R) refresh periods (at least 1), and missed
 * n − 1 v-syncs; a frame shown late is one whose interval missed one or
 * more. Elsewhere nothing is counted, and the summary says why.
 */
typedef struct present_run present_run;

/* What intervals of a run are on. */
enum present_clock {
	PRESENT_CLOCK_NONE,     /* no interval: fewer than two presents */
	PRESENT_CLOCK_SHOWN,    /* every one from shown time to shown time */
	PRESENT_CLOCK_CPU,      /* every one from present call to present call */
	PRESENT_CLOCK_MIXED     /* some swapchains' shown, others' CPU */
};

struct present_interval {
	uint64_t frame;       /* the frame of the later present */
	uint64_t swapchain;
	int64_t ns;
	uint32_t missed;      /* v-syncs missed; 0 also where not counted */
	bool shown;           /* on a shown clock; else the CPU's */
	bool counted;         /* missed v-syncs were counted on it */
};

struct present_summary {
	uint64_t presents;        /* present calls that did not fail */
	uint64_t failed;          /* present calls that failed */
	uint64_t swapchains;
	uint64_t shown;           /* presents with a time they were shown */
	unsigned sources;         /* 1 << each enum crumbs_present_source seen */
	enum present_clock clock;
	uint64_t intervals;
	int64_t median_ns;        /* of the intervals, nearest rank */
	int64_t p99_ns;
	int64_t max_ns;
	uint64_t max_frame;       /* the frame of the longest */
	int64_t refresh_ns;       /* the last refresh period known; 0: none */
	uint64_t counted;         /* intervals on which v-syncs were counted */
	uint64_t missed_vsyncs;   /* summed over them */
	uint64_t late;            /* intervals that missed one or more */
	uint64_t no_vsync;        /* shown intervals of presents that asked
				   * for no v-sync (mailbox, immediate) */
	uint64_t no_refresh;      /* shown intervals with no refresh period known */
	int64_t call_median_ns;   /* how long present calls took, median */
};

/* An empty run, or NULL when out of memory; present_run_free(NULL) is a
 * no-op. */
present_run *present_run_create(void);
void present_run_free(present_run *r);
/* Adds a frame's presents and shown times (frames in order). */
enum crumbs_result present_run_add(present_run *r, const struct frame *f);
/* Adds what `from` was given after what r was, emptying from. */
enum crumbs_result present_run_append(present_run *r, present_run *from);
/* Matches shown times to presents and computes the intervals and the
 * summary; once, after the last frame. CRUMBS_OK or
 * CRUMBS_ERROR_OUT_OF_MEMORY. */
enum crumbs_result present_run_finish(present_run *r);
/* After present_run_finish: the summary, and the intervals in the order
 * of their later presents (valid while r is). */
const struct present_summary *present_run_summary(const present_run *r);
const struct present_interval *present_run_intervals(const present_run *r, size_t *count);
/* The longest interval whose later present is in frame `number` (ns), or
 * -1 when none is; intervals are searched from *cursor on, which callers
 * walking frames in order keep (start it at 0). */
int64_t present_run_frame_max(const present_run *r, uint64_t number, size_t *cursor);

/* ------------------------------------------------------------------------ */
/* Statistics over frames                                                   */
/* ------------------------------------------------------------------------ */

/*
 * Statistics over the frames of a run, fed one frame at a time. Each row
 * is one series of times keyed by (kind, GPU, queue, path):
 *   STATS_GPU    a GPU's frame time, in the frames where the GPU did work;
 *   STATS_BUSY, STATS_WAIT, STATS_IDLE
 *                a queue's busy, wait and idle time, in the frames where it
 *                had a submission and records timestamps;
 *   STATS_SCOPE  a scope path: the names from below the queue root down.
 *                Its inclusive and exclusive times and its calls; two
 *                scopes of one path in one frame are summed for that frame
 *                and both count as calls. Leaf events are not rows: their
 *                time stays with their scope (as `report --no-leaf`).
 *   STATS_PIPELINE with stats_by_pipeline, in place of scopes: a queue's
 *                draws, dispatches and ray tracing of one pipeline
 *                (node_pipeline; PIPELINE_NONE_NAME for those that name
 *                none), right below the queue: their exclusive time
 *                summed in each frame (its time and exclusive time alike)
 *                and the events as calls.
 * and on the CPU side, in frames that hold CPU threads, task timelines or
 * marks of frames of other kinds (format 1.3 and 1.4):
 *   STATS_CPU    the CPU frame time ("CPU": cpu_end_ns - cpu_begin_ns, in
 *                every frame once one held CPU data), and per timeline
 *                with marks ("CPU (Game)") its frames: the time from each
 *                of its marks to the next, across frames in order. These
 *                are values one per frame of that kind, not per frame of
 *                the run: their summary, spikes and runs are of those
 *                frames, the frame a minimum or maximum is in is the one
 *                its later mark is in, and stats_value gives for a frame
 *                of the run the longest that ended in it;
 *   STATS_THREAD a CPU thread, below "CPU", keyed by its name (tids
 *                change from run to run): its top-level scopes' time;
 *                threads of one name in a frame are summed, and unnamed
 *                ones ("thread 1234") are one row, "thread #";
 *   STATS_CPU_SCOPE a scope path of a thread, below its thread row, as
 *                STATS_SCOPE is below its queue;
 *   STATS_TASKS  "Tasks", the parent of the timelines, which has no value;
 *   STATS_TIMELINE a task timeline below "Tasks", by name: its tasks'
 *                time summed in each frame;
 *   STATS_TASK, STATS_STATE
 *                a task name below its timeline and a state name below
 *                its task: the inclusive time of every task (or state)
 *                of that name in the frame, the part of it inside the
 *                frame, summed, and each one a call.
 * In a scope directly below the queue root or the thread, and in a task's
 * name, a run of digits equal to the frame's number is replaced by '#', so
 * the per-frame "Frame 120" of many engines is one row "Frame #".
 *
 * Per-frame values are kept in frame order as uint32 nanoseconds: a time
 * of 4.29 s (STATS_NS_MAX) or more is stored, and counted, as
 * STATS_NS_MAX; a frame where the row does not appear is STATS_ABSENT.
 * Memory is 4 bytes per row per frame from the row's first frame on (8
 * for a scope), plus the rows: each keeps its parent, not its path, and
 * rows of one name share it.
 *
 * Percentiles are exact, by the nearest-rank method: the p-th percentile
 * of n sorted values is the value at rank ceil(p/100 * n), 1-based (rank 1
 * for p = 0). The standard deviation is the population's (divided by n;
 * multiply its square by n/(n-1) for the sample variance).
 */
typedef struct stats stats;

enum stats_kind {
	STATS_GPU, STATS_BUSY, STATS_WAIT, STATS_IDLE, STATS_SCOPE, STATS_PIPELINE,
	STATS_CPU, STATS_THREAD, STATS_CPU_SCOPE, STATS_TASKS, STATS_TIMELINE, STATS_TASK,
	STATS_STATE
};
/* "gpu", "busy", "wait", "idle", "scope", "pipeline", "cpu", "thread",
 * "cpu_scope", "tasks", "timeline", "task" or "state", as CSV and JSON
 * name them. */
const char *stats_kind_name(enum stats_kind kind);

/* Whether rows of that kind have calls, exclusive times and a share:
 * scopes, pipelines, CPU scopes, tasks and states. */
bool stats_kind_named(enum stats_kind kind);

/* Whether rows of that kind are frame times, with spikes: STATS_GPU and
 * STATS_CPU. */
bool stats_kind_frame_time(enum stats_kind kind);

/* Whether rows of that kind are the CPU's (STATS_CPU and after). */
bool stats_kind_cpu(enum stats_kind kind);

#define STATS_NS_MAX (UINT32_MAX - 1)
#define STATS_ABSENT UINT32_MAX
#define STATS_NONE UINT32_MAX /* no such row */

/* One series over the frames where it has a value. */
struct stats_summary {
	uint64_t frames;     /* frames with a value; 0: the rest is 0 */
	double mean_ns;
	double stddev_ns;    /* population */
	uint32_t min_ns;
	uint32_t median_ns;  /* p50 */
	uint32_t p90_ns;
	uint32_t p95_ns;
	uint32_t p99_ns;
	uint32_t max_ns;
	uint64_t min_frame;  /* number of the first frame with the minimum */
	uint64_t max_frame;  /* of the first with the maximum: the high-water mark */
};

/* Frames whose value is above a threshold, for GPU rows. */
struct stats_spikes {
	uint32_t threshold_ns;
	uint64_t count;
	uint64_t longest_run;        /* consecutive frames of the capture (in
				      * the frames fed), all spikes */
	uint64_t longest_run_first;  /* number of the first frame of that run */
};

struct stats_row {
	enum stats_kind kind;
	uint32_t gpu;           /* STATS_NONE for the CPU's rows */
	uint32_t queue;         /* index into capture_meta.queues; STATS_NONE for GPU
				 * rows and the CPU's */
	/* The tree, in order of first appearance: a scope's parent is the
	 * scope above it, or its queue's STATS_BUSY row at depth 1; queue
	 * rows' parent is their GPU's row, created with them; a thread's
	 * is "CPU", a timeline's "Tasks". */
	uint32_t parent;        /* row index; STATS_NONE for GPU rows, STATS_CPU
				 * rows and "Tasks" */
	uint32_t first_child;   /* STATS_NONE when none */
	uint32_t next_sibling;  /* STATS_NONE when none */
	uint32_t depth;         /* scopes: 1 below the queue root (CPU scopes
				 * and tasks: below the thread or timeline);
				 * pipelines 1; else 0 */
	const char *name;       /* NUL-terminated UTF-8: the scope's or
				 * pipeline's name, "GPU 0", or the queue's */
	size_t name_len;
	uint64_t calls;         /* scopes and pipelines: over every frame
				 * (a pipeline's events); else frames */
	uint64_t events;        /* STATS_BUSY rows: the queue's events over
				 * every frame (draws, dispatches, copies,
				 * render passes), which are no rows */
	struct stats_summary time;      /* the series: inclusive for scopes */
	struct stats_summary exclusive; /* scopes and pipelines only */
	double share_pct;       /* scopes and pipelines: time summed over
				 * its frames, over the queue's busy + wait
				 * summed over every frame, in percent;
				 * CPU scopes, tasks and states: over the
				 * CPU frame time summed over every frame;
				 * else 0 */
	struct stats_spikes spikes;     /* frame-time rows only */
};

/* How stats_finish finds spikes: above threshold_ns when it is not 0,
 * else above median_factor times the median. */
struct stats_spike_rule {
	uint32_t threshold_ns;
	double median_factor;  /* 0: 1.5 */
};

/* ------------------------------------------------------------------------ */
/* Video memory over a run (memory.c)                                       */
/* ------------------------------------------------------------------------ */

/* The heap's MEMORY figures of frame f, or NULL. */
const struct frame_memory *frame_memory_find(const struct frame *f, uint32_t gpu, uint32_t heap);

/* Sums of a least-squares fit, in 128 bits that wrap: they add up the
 * same whatever pieces a run is read in, so that its slope does too. */
__extension__ typedef unsigned __int128 memory_sum;

/* A heap's bytes in use, frame by frame: the first and last frames', the
 * high-water (the most in use at any moment of a frame, where the
 * allocations were tracked) and a least-squares line through the values
 * by frame number, kept so that pieces of a run join in order. */
struct memory_series {
	uint64_t frames;
	uint64_t first, last;
	uint64_t first_frame, last_frame;
	uint64_t high, high_frame;
	memory_sum sx, sy, sxy, sxx;
};
/*
 * A series' values for a picture: at most MEMORY_POINTS of them, frame
 * numbers grouped by their top bits (frame >> shift, shift growing as
 * the run does) and each group kept as its largest value and that value's
 * first frame. The groups depend on the run's frames alone, so a run read
 * in pieces has the points it has read whole.
 */
#define MEMORY_POINTS 256
struct memory_point {
	uint64_t frame;
	uint64_t value;
};
struct memory_points {
	struct memory_point *p;
	uint32_t count, cap;
	unsigned shift;
};

/* Its slope, in bytes a frame (0 with fewer than 2 frames). */
double memory_series_slope(const struct memory_series *s);
/* The last frame's bytes less the first's. */
int64_t memory_series_growth(const struct memory_series *s);

/* One heap of one GPU over a run: its bytes in use as the allocations
 * say (`use`, tracked frames) and as the driver does (`usage`, frames
 * with VK_EXT_memory_budget), and its allocations. */
struct memory_heap_stats {
	uint32_t gpu, heap;
	uint32_t flags;            /* enum crumbs_memory_heap_flags */
	uint64_t size;
	struct memory_series use;
	struct memory_series usage;
	struct memory_points use_points, usage_points; /* their values, for a picture */
	uint64_t budget_frames;
	uint64_t least_budget;     /* the driver's smallest budget */
	uint64_t allocations, frees, allocated, freed;
	uint64_t most_allocations, most_allocations_frame; /* in one frame */
};
/* The series a report shows of h: `use` where tracked, else `usage`;
 * NULL when neither has a frame. */
const struct memory_series *memory_heap_series(const struct memory_heap_stats *h);
/* The points of that series. */
const struct memory_points *memory_heap_points(const struct memory_heap_stats *h);

/* One GPU's allocations over a run, its heaps' together, in the frames
 * whose allocations were tracked. */
struct memory_gpu_stats {
	uint32_t gpu;
	uint64_t frames;
	uint64_t allocations, frees;
	uint64_t most_allocations, most_allocations_frame; /* in one frame */
};

/* The heaps of a run's frames, by GPU and then heap; the GPUs by GPU. */
struct memory_stats {
	struct memory_heap_stats *heaps;
	uint32_t count, cap;
	struct memory_gpu_stats *gpus;
	uint32_t gpu_count, gpu_cap;
};
/* Takes frame f's heaps (false: out of memory); joins those of `from`,
 * whose frames follow. */
bool memory_stats_add(struct memory_stats *s, const struct frame *f);
bool memory_stats_append(struct memory_stats *s, const struct memory_stats *from);
void memory_stats_release(struct memory_stats *s);

/* An empty set of statistics, or NULL when out of memory. Free it with
 * stats_free(); NULL is a no-op there. */
stats *stats_create(void);
void stats_free(stats *s);

/* An empty set of statistics whose values are kept in memory cut from
 * owner's, to be appended to owner (stats_append). Several may be filled
 * on threads of their own while owner takes others: a run read in pieces
 * on several threads then leaves no half-used block of memory a piece.
 * owner must outlive it. */
stats *stats_create_sharing(stats *owner);

/*
 * Adds a frame (frames are taken in the order given, which is the order
 * `consecutive` refers to). Rows appear as their keys first do; a row
 * records every frame before its first as absent. Returns CRUMBS_OK, or
 * CRUMBS_ERROR_OUT_OF_MEMORY (the statistics are then unusable), or
 * CRUMBS_ERROR_LIMIT past 2^32 - 2 frames or rows.
 */
enum crumbs_result stats_add_frame(stats *s, const struct capture_meta *meta,
				   const struct frame *f);

/* Adds the frames `from` was given, after those s was, as if they had been
 * added to s one by one: statistics taken of a capture's parts on several
 * threads, joined in order. The values are mostly taken, not copied: from
 * is left with its rows but not their values, to be freed. Errors as
 * stats_add_frame's. */
enum crumbs_result stats_append(stats *s, stats *from);

/* Makes stats_add_frame keep the frame times alone (the GPUs' STATS_GPU
 * rows and the CPU's row): 4 bytes a GPU a frame, and 4 for the CPU, for
 * a picture of a long run. Call before the first frame. */
void stats_keep_frame_times_only(stats *s);

/* Makes stats_add_frame make pipeline rows of the frames' events in
 * place of scope rows: frames with their trees, not flat scopes. Call
 * before the first frame; statistics made by stats_create_sharing from
 * these do the same. */
void stats_by_pipeline(stats *s);

/* Computes every row's summary, spikes and share. Call once after the
 * last frame. CRUMBS_OK or CRUMBS_ERROR_OUT_OF_MEMORY. */
enum crumbs_result stats_finish(stats *s, const struct stats_spike_rule *rule);

/* The frames added, and the number of the i-th. */
size_t stats_frame_count(const stats *s);
uint64_t stats_frame_number(const stats *s, size_t i);

/* The rows, in order of creation (a parent before its children); valid
 * until the next stats_add_frame or stats_free. */
size_t stats_row_count(const stats *s);
const struct stats_row *stats_row(const stats *s, size_t i);

/* The index of GPU g's row, or STATS_NONE. */
uint32_t stats_gpu_row(const stats *s, uint32_t gpu);
/* The index of the CPU frame time's row, where the frames held CPU
 * threads, tasks or marks; else STATS_NONE. */
uint32_t stats_cpu_row(const stats *s);

/* The video memory of the frames added (format 1.5); its count is 0
 * when none held any. Valid until the next stats_add_frame or stats_free. */
const struct memory_stats *stats_memory(const stats *s);
/* The run's presentation (present.c's), finished with the statistics. */
const present_run *stats_presents(const stats *s);

/* Whether a frame added held CPU threads, timelines or marks: the CPU
 * frame time is kept from the first frame, but is the CPU's only then. */
bool stats_has_cpu(const stats *s);

/*
 * The value of row `row` in the i-th frame added: its time (inclusive for
 * a scope) or, with `exclusive`, a scope's exclusive time; STATS_ABSENT
 * where it did not appear. In frame order.
 */
uint32_t stats_value(const stats *s, size_t row, size_t i, bool exclusive);

/* Whether the i-th frame added is one of the spikes stats_finish counted
 * for frame-time row `row` (its value above row's spikes.threshold_ns;
 * for a timeline's frames of another kind, one of them ended in it): the
 * frames a picture marks are then those crumbs stats counts. false for
 * other rows, and before stats_finish. */
bool stats_spike(const stats *s, size_t row, size_t i);

/*
 * The values of row `row` in the frames where it appears (inclusive time,
 * or with `exclusive` a scope's exclusive time) into out, which has room
 * for stats_row(s, row)->time.frames values: in frame order, or with
 * `sorted` ascending (as compare_side.values wants them). Returns how
 * many.
 */
size_t stats_row_values(const stats *s, size_t row, bool exclusive, bool sorted, int64_t *out);

/* The most rows a path holds: a GPU's, a queue's and a scope's at each
 * depth the format allows. */
#define STATS_PATH_MAX 260

/*
 * Appends row `row`'s path to out: the names from its GPU's row down to
 * it, joined by " / ": "GPU 0", "GPU 0 / Graphics 0" (for a queue's busy,
 * wait and idle rows), "GPU 0 / Graphics 0 / Frame # / Post Processing".
 * Paths are made when asked for, never kept: a deep tree of long names
 * would hold each name once per row below it.
 */
void stats_row_path(const stats *s, size_t row, struct sbuf *out);

/* The row of that kind and name right below `parent` (STATS_NONE for a
 * GPU's row, a STATS_CPU row or "Tasks"), or STATS_NONE. A scope's is
 * found by hashing. */
uint32_t stats_child(const stats *s, uint32_t parent, enum stats_kind kind, const char *name,
		     size_t len);

/* The row of that kind and full path (as stats_row_path writes it), or
 * STATS_NONE: a scan of the rows. (compare_runs matches runs row by
 * row with stats_child.) */
uint32_t stats_find(const stats *s, enum stats_kind kind, const char *path);

/* The nearest-rank percentile p (0 to 100) of n values sorted ascending. */
uint32_t stats_percentile(const uint32_t *sorted, size_t n, unsigned p);

/* ------------------------------------------------------------------------ */
/* Two runs, row by row (compare.c)                                         */
/* ------------------------------------------------------------------------ */

/* The statistic of each row that is compared (crumbs diff --stat). */
enum compare_stat { COMPARE_MEDIAN, COMPARE_MEAN, COMPARE_P95 };

struct compare_row {
	enum stats_kind kind;
	uint32_t gpu;
	uint32_t base_row;       /* in the base's stats, or STATS_NONE */
	uint32_t cand_row;       /* in the candidate's, or STATS_NONE */
	uint64_t base_frames;    /* frames the row appears in, on each side */
	uint64_t cand_frames;
	int64_t base_ns;         /* the statistic, on each side (0 where absent) */
	int64_t cand_ns;
	struct compare_result result;
};

/* A memory heap of both runs: its high-water and growth on each side
 * (memory_heap_series'), and the verdict on the high-water: regressed
 * when it grew by more than the rule's percent of the base's and more
 * than COMPARE_MEMORY_MIN_BYTES, improved when it shrank as much. */
#define COMPARE_MEMORY_MIN_BYTES (1u << 20)
struct compare_memory_row {
	uint32_t gpu, heap;
	bool in_base, in_cand;
	uint64_t base_high, cand_high;
	int64_t base_growth, cand_growth;
	int64_t change;           /* candidate's high-water less the base's */
	double change_pct;        /* of the base's */
	enum compare_verdict verdict;
};

/*
 * The runs' presentation compared: the present interval (the statistic
 * of compare_runs' over each side's intervals, tested on them as rows
 * are), and the missed v-syncs, counts: the candidate's, scaled to as
 * many counted intervals as the base's, against the base's; regressed
 * when one or more higher, improved when one or more lower. A side
 * without intervals (or without v-syncs counted) leaves it out.
 */
struct compare_present {
	bool interval;              /* both sides have present intervals */
	uint64_t base_intervals, cand_intervals;
	int64_t base_ns, cand_ns;
	struct compare_result interval_result;
	bool vsyncs;                /* both sides counted missed v-syncs */
	uint64_t base_missed, cand_missed;
	uint64_t base_counted, cand_counted;
	struct compare_result vsync_result; /* change_ns: the scaled change in v-syncs */
};

struct compare_runs {
	struct compare_present present; /* counted in verdicts too */
	struct compare_row *rows; /* frame-time rows (GPU and CPU) first, then by the
				   * size of the change, largest first */
	size_t count;
	size_t verdicts[VERDICT_TOO_FEW + 1]; /* rows of each verdict */
	bool single;              /* both runs are one frame: thresholds alone */
	/* The video memory's vital signs, heap by heap (none where neither
	 * run recorded any), and their verdicts apart from the rows'. */
	struct compare_memory_row *memory;
	size_t memory_count;
	size_t memory_verdicts[VERDICT_TOO_FEW + 1];
};

/*
 * Matches the rows of two finished stats by kind and path, a row to the
 * row of its kind and name below its parent's match (rows where
 * `selected`, one byte per row, is 1; NULL: all) and gives each the
 * verdict of compare_verdict on the statistic `stat` of its time
 * (inclusive for scopes), testing the per-frame values. Rows of equal
 * rank are in the order of their paths (as strcmp orders the strings
 * stats_row_path writes). Returns 0, or -1 when out of memory. A row's
 * path is the base's row's where it has one, else the candidate's.
 */
int compare_runs(const stats *base, const uint8_t *base_selected, const stats *cand,
		 const uint8_t *cand_selected, enum compare_stat stat,
		 const struct compare_rule *rule, struct compare_runs *out);
void compare_runs_release(struct compare_runs *r);

#endif
