/* SPDX-License-Identifier: MIT */
/*
 * crumbs_file.h: capture files without Vulkan, for libcrumbs and for any
 * program that writes or reads captures: the result codes every part of
 * crumbs returns, the capture format's public constants (format/FORMAT.md),
 * and the writer. crumbs.h, the recording API, includes it.
 */
#ifndef CRUMBS_FILE_H
#define CRUMBS_FILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What libcrumbs exports. The library is built with -fvisibility=hidden;
 * the functions declared with CRUMBS_API are the only ones a program sees,
 * so its own names never clash with crumbs' internals.
 */
#if defined(__GNUC__) || defined(__clang__)
#define CRUMBS_API __attribute__((visibility("default")))
#else
#define CRUMBS_API
#endif

/* ------------------------------------------------------------------------ */
/* Results                                                                  */
/* ------------------------------------------------------------------------ */

/* Every library function that can fail returns one of these; 0 is success. */
#define CRUMBS_RESULTS(X)                                                     \
	X(CRUMBS_OK, "success")                                               \
	X(CRUMBS_ERROR_OUT_OF_MEMORY, "out of memory")                        \
	X(CRUMBS_ERROR_IO, "input or output failed")                          \
	X(CRUMBS_ERROR_INVALID_ARGUMENT, "invalid argument")                  \
	X(CRUMBS_ERROR_BAD_STATE, "call out of order")                        \
	X(CRUMBS_ERROR_LIMIT, "a limit of the capture format was exceeded")   \
	X(CRUMBS_ERROR_COMPRESSION, "compression failed")                     \
	X(CRUMBS_ERROR_NOT_CAPTURE, "not a crumbs capture")                   \
	X(CRUMBS_ERROR_VERSION, "unsupported capture version")                \
	X(CRUMBS_ERROR_TRUNCATED, "capture is truncated")                     \
	X(CRUMBS_ERROR_CORRUPT, "capture is corrupt")                         \
	X(CRUMBS_ERROR_NOT_FOUND, "not found")                                \
	X(CRUMBS_ERROR_PATTERN, "invalid pattern")

#define CRUMBS_RESULT_ENUM_(name, text) name,
enum crumbs_result { CRUMBS_RESULTS(CRUMBS_RESULT_ENUM_) CRUMBS_RESULT_COUNT };
#undef CRUMBS_RESULT_ENUM_

/* A short lowercase description of a result; never NULL, static storage. */
CRUMBS_API const char *crumbs_result_str(enum crumbs_result result);

/* ------------------------------------------------------------------------ */
/* Capture file format constants (format/FORMAT.md)                         */
/* ------------------------------------------------------------------------ */

#define CRUMBS_FORMAT_MAJOR 1
#define CRUMBS_FORMAT_MINOR 5

/* Queue capabilities, as VkQueueFlags bits that matter for naming. */
enum crumbs_queue_flags {
	CRUMBS_QUEUE_GRAPHICS = 1u << 0,
	CRUMBS_QUEUE_COMPUTE = 1u << 1,
	CRUMBS_QUEUE_TRANSFER = 1u << 2,
	CRUMBS_QUEUE_VIDEO_DECODE = 1u << 3,
	CRUMBS_QUEUE_VIDEO_ENCODE = 1u << 4,
	CRUMBS_QUEUE_OPTICAL_FLOW = 1u << 5
};

/*
 * What a node of the tree is. Scopes are the program's breadcrumbs; the
 * other kinds are leaf events, recorded only at full detail. A render pass
 * is an event that contains other events.
 */
enum crumbs_event_kind {
	CRUMBS_EVENT_SCOPE = 0,
	CRUMBS_EVENT_RENDER_PASS = 1,
	CRUMBS_EVENT_DRAW = 2,
	CRUMBS_EVENT_DISPATCH = 3,
	CRUMBS_EVENT_COPY = 4,
	CRUMBS_EVENT_BLIT = 5,
	CRUMBS_EVENT_CLEAR = 6,
	CRUMBS_EVENT_RESOLVE = 7,
	CRUMBS_EVENT_TRACE_RAYS = 8,
	CRUMBS_EVENT_OTHER = 9,
	CRUMBS_EVENT_KIND_COUNT
};

/* The name of an event kind ("Draw", "Render Pass", ...); static. */
CRUMBS_API const char *crumbs_event_kind_name(enum crumbs_event_kind kind);

/* Detail levels of scopes, like r.RDG.Events: 0 coarsest, 3 finest. */
#define CRUMBS_DETAIL_MAX 3

/* Frame flags, recorded at the end of a frame. */
enum crumbs_frame_flags {
	/* Query slots ran out; the deepest scopes were recorded without
	 * timestamps (their time stays with their parents). */
	CRUMBS_FRAME_SCOPES_DROPPED = 1u << 0,
	/* The device was lost; only what was resolved before is present. */
	CRUMBS_FRAME_DEVICE_LOST = 1u << 1,
	/* Some timestamps never became available. */
	CRUMBS_FRAME_INCOMPLETE = 1u << 2,
	/* The frame ran at the maximum detail level (a capture frame). */
	CRUMBS_FRAME_FULL_DETAIL = 1u << 3
};

/* How a swapchain presents (format 1.5's PRESENT): the program's present
 * mode, of which FIFO and FIFO relaxed ask for each image to be shown at
 * a v-sync of its own. */
enum crumbs_present_mode {
	CRUMBS_PRESENT_MODE_UNKNOWN = 0,
	CRUMBS_PRESENT_MODE_FIFO = 1,
	CRUMBS_PRESENT_MODE_FIFO_RELAXED = 2,
	CRUMBS_PRESENT_MODE_MAILBOX = 3,
	CRUMBS_PRESENT_MODE_IMMEDIATE = 4,
	CRUMBS_PRESENT_MODE_OTHER = 5
};

/* A present's flags (PRESENT). */
enum crumbs_present_flags {
	CRUMBS_PRESENT_FAILED = 1u << 0,     /* the call failed: nothing was queued */
	CRUMBS_PRESENT_SUBOPTIMAL = 1u << 1  /* VK_SUBOPTIMAL_KHR */
};

/* Where a time a present was shown comes from (PRESENT_SHOWN). */
enum crumbs_present_source {
	/* VK_KHR_present_wait: the CPU clock when vkWaitForPresentKHR
	 * returned, just after the image was shown. */
	CRUMBS_SHOWN_PRESENT_WAIT = 1,
	/* VK_GOOGLE_display_timing: actualPresentTime, on the display's
	 * clock. */
	CRUMBS_SHOWN_DISPLAY_TIMING = 2
};

/* Passed where a timestamp is optional: the event has no GPU timestamp. */
#define CRUMBS_NO_TICKS UINT64_MAX

/* Passed as a leaf count that is not known (indirect draws). */
#define CRUMBS_COUNT_UNKNOWN UINT64_MAX

/*
 * CRC-32C (Castagnoli) as the capture format uses it: pass 0 to start, and
 * the previous result to continue over more bytes.
 */
CRUMBS_API uint32_t crumbs_crc32c(uint32_t crc, const void *data, size_t size);

/*
 * The difference ticks − base of two timestamps of a counter with `bits`
 * valid bits (1 to 64), taken modulo 2^bits and read as a bits-wide signed
 * number: the shortest way round the wrap. 0 when bits is 0. Inline: the
 * reader calls it for every timestamp.
 */
static inline int64_t crumbs_ticks_delta(uint64_t ticks, uint64_t base, unsigned bits)
{
	if (bits == 0)
		return 0;
	uint64_t mask = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
	uint64_t d = (ticks - base) & mask;
	uint64_t sign = (uint64_t)1 << (bits >= 64 ? 63 : bits - 1);
	return d & sign ? -(int64_t)(~d & mask) - 1 : (int64_t)d;
}

/*
 * The length of the UTF-8 sequence starting at p (at most `avail` bytes)
 * if it is one valid character as capture files allow (shortest form, no
 * surrogates, at most U+10FFFF, not NUL), else 0.
 */
CRUMBS_API size_t crumbs_utf8_sequence(const unsigned char *p, size_t avail);

/* ------------------------------------------------------------------------ */
/* Capture file writer                                                      */
/* ------------------------------------------------------------------------ */

typedef struct crumbs_writer crumbs_writer;

/* For crumbs_writer_desc.created_unix_s: record no creation time. */
#define CRUMBS_CREATED_UNKNOWN UINT64_MAX

/*
 * Where and how a capture is written. Zero means default for every field.
 * With `path`, the file is written under a temporary name of its own
 * beside it (random, created new with O_EXCL, never through a symbolic
 * link: ".NAME.XXXXXXXXXXXX.tmp") and renamed over `path` by
 * crumbs_writer_close(), so a reader never sees half a file under the
 * final name. That rename replaces whatever `path` names: a file there is
 * replaced, and so is a symbolic link, itself, never the file it points
 * to. A program that must not replace a file can create its own (with
 * O_EXCL) and write it through `write`, as libcrumbs does. With `write`,
 * bytes go to the callback in file order instead (it returns 0 on
 * success).
 */
struct crumbs_writer_desc {
	const char *path;
	int (*write)(void *user, const void *data, size_t size);
	void *user;
	/* Recorded in the file header, e.g. "libcrumbs 1.0 (sample-renderer)". */
	const char *producer;
	/* Creation time in Unix seconds for the header; 0 means now, and
	 * CRUMBS_CREATED_UNKNOWN writes none (byte-for-byte reproducible
	 * files). */
	uint64_t created_unix_s;
	/* zstd level; 0 means 3. */
	int compression_level;
	/* Uncompressed bytes collected before a chunk is compressed and
	 * written; 0 means 1 MiB, at most 16 MiB. A chunk always holds whole
	 * frames, so one frame may take up to 48 MiB encoded; a larger one is
	 * refused with CRUMBS_ERROR_LIMIT. */
	uint32_t chunk_bytes;
	/* Write a chunk at the end of every frame, so a writer that dies
	 * loses nothing already ended. Costs compression ratio. */
	int flush_each_frame;
};

/* A physical device. Strings are copied; NULL means empty. */
struct crumbs_gpu_desc {
	const char *name;
	const char *driver_name;
	uint32_t vendor_id;
	uint32_t device_id;
	uint32_t driver_version;
	uint32_t api_version;
};

/* A queue. Its ticks are converted with timestamp_period (ns per tick);
 * timestamp_valid_bits 0 means the queue records no timestamps. */
struct crumbs_queue_desc {
	uint32_t gpu;
	uint32_t family;
	uint32_t index;
	uint32_t flags; /* enum crumbs_queue_flags */
	float timestamp_period;
	uint32_t timestamp_valid_bits;
};

/* A semaphore operation of a submission. For binary semaphores the value
 * numbers the signals (1, 2, ...) so a wait names the signal it consumes;
 * for timeline semaphores it is the timeline value. */
struct crumbs_semaphore_op {
	uint32_t semaphore; /* an id the recorder chose */
	uint64_t value;
};

struct crumbs_submit_desc {
	uint32_t queue;
	uint64_t cpu_ns;     /* CPU clock (CLOCK_MONOTONIC) at the submit */
	uint64_t gpu_ticks;  /* when the submission started, or CRUMBS_NO_TICKS */
	const struct crumbs_semaphore_op *waits;
	uint32_t wait_count;
	const struct crumbs_semaphore_op *signals;
	uint32_t signal_count;
};

/* A leaf event. Counts may be CRUMBS_COUNT_UNKNOWN. */
struct crumbs_leaf_desc {
	enum crumbs_event_kind kind;
	const char *name; /* NULL: the kind's own name */
	uint64_t draws;
	uint64_t dispatches;
	uint64_t prims;
	uint64_t verts;
	uint64_t begin_ticks; /* or CRUMBS_NO_TICKS */
	uint64_t end_ticks;   /* or CRUMBS_NO_TICKS */
};

/*
 * Opens a writer. On success *out owns the file (or the callback's stream)
 * until crumbs_writer_close() or crumbs_writer_free(). The file header is
 * written at once.
 */
CRUMBS_API enum crumbs_result crumbs_writer_open(const struct crumbs_writer_desc *desc,
						 crumbs_writer **out);

/*
 * Writes what is pending and the index, then (with a path) renames the
 * temporary file over the path, and frees the writer, also on failure
 * (the temporary is then removed, and the path left as it was). An
 * unfinished frame is discarded. Returns the first error the writer met.
 */
CRUMBS_API enum crumbs_result crumbs_writer_close(crumbs_writer *w);

/* Frees the writer without finishing the file; a temporary file is
 * removed. NULL is a no-op. */
CRUMBS_API void crumbs_writer_free(crumbs_writer *w);

/* Devices and queues, numbered from 0 in the order they are added. They
 * may be added at any time outside a frame. Strings are copied. */
CRUMBS_API enum crumbs_result crumbs_writer_add_gpu(crumbs_writer *w,
						    const struct crumbs_gpu_desc *gpu,
						    uint32_t *gpu_index);
CRUMBS_API enum crumbs_result crumbs_writer_add_queue(crumbs_writer *w,
						      const struct crumbs_queue_desc *queue,
						      uint32_t *queue_index);

/* A calibration sample: at cpu_ns on the CPU clock the GPU's counter read
 * gpu_ticks, within deviation_ns. Outside a frame it holds for the frames
 * that follow; inside one, for that frame. */
CRUMBS_API enum crumbs_result crumbs_writer_calibration(crumbs_writer *w, uint32_t gpu,
							uint64_t gpu_ticks, uint64_t cpu_ns,
							uint64_t deviation_ns);

/* Frames. Numbers must increase. The frame's flags (enum
 * crumbs_frame_flags) and how many scopes lost their timestamps are given
 * at its end. */
CRUMBS_API enum crumbs_result crumbs_writer_frame_begin(crumbs_writer *w,
							uint64_t frame_number,
							uint64_t cpu_ns);
CRUMBS_API enum crumbs_result crumbs_writer_frame_end(crumbs_writer *w, uint64_t cpu_ns,
						      uint32_t flags,
						      uint32_t dropped_scopes);

/* When `queue` finished the work submitted before this frame; lets the
 * analyzer count idle time before the frame's first submission. */
CRUMBS_API enum crumbs_result crumbs_writer_queue_ready(crumbs_writer *w, uint32_t queue,
							uint64_t gpu_ticks);

/* A submission: begin, its scopes and events in GPU order, then end with
 * the GPU time it finished (or CRUMBS_NO_TICKS). */
CRUMBS_API enum crumbs_result crumbs_writer_submit_begin(crumbs_writer *w,
							 const struct crumbs_submit_desc *s);
CRUMBS_API enum crumbs_result crumbs_writer_submit_end(crumbs_writer *w,
						       uint64_t gpu_ticks);

/* Inside a submission: it also ran `count` command buffers of which the
 * capture holds nothing, begun where the recorder could not record them
 * for this frame (in an earlier one). Their work is in the submission's
 * time. Since format 1.2; a count of 0 writes nothing. */
CRUMBS_API enum crumbs_result crumbs_writer_unrecorded(crumbs_writer *w, uint32_t count);

/* A host-side signal (vkSignalSemaphore) at cpu_ns. */
CRUMBS_API enum crumbs_result crumbs_writer_host_signal(crumbs_writer *w,
							uint32_t semaphore,
							uint64_t value, uint64_t cpu_ns);

/*
 * Scopes. Inside a submission they belong to its queue and may carry a
 * timestamp; outside one (queue labels) they belong to the queue chosen
 * with crumbs_writer_select_queue() or the last submission's, and carry
 * none. A scope may end in a later submission on the same queue. Names are
 * UTF-8; invalid bytes are replaced with U+FFFD.
 */
CRUMBS_API enum crumbs_result crumbs_writer_select_queue(crumbs_writer *w,
							 uint32_t queue);
CRUMBS_API enum crumbs_result crumbs_writer_scope_begin(crumbs_writer *w,
							const char *name, unsigned level,
							uint64_t gpu_ticks);
CRUMBS_API enum crumbs_result crumbs_writer_scope_end(crumbs_writer *w,
						      uint64_t gpu_ticks);

/* An event that contains others (a render pass), ended by
 * crumbs_writer_scope_end(). */
CRUMBS_API enum crumbs_result crumbs_writer_event_begin(crumbs_writer *w,
							enum crumbs_event_kind kind,
							const char *name,
							uint64_t gpu_ticks);

/* A leaf event: one draw, dispatch, copy, ... with its counts. */
CRUMBS_API enum crumbs_result crumbs_writer_leaf(crumbs_writer *w,
						 const struct crumbs_leaf_desc *leaf);

/* Counts of work in the innermost open scope of the current queue (the
 * queue's own when none is open), where no leaf events were recorded.
 * CRUMBS_COUNT_UNKNOWN is allowed. */
CRUMBS_API enum crumbs_result crumbs_writer_counts(crumbs_writer *w, uint64_t draws,
						   uint64_t dispatches,
						   uint64_t prims, uint64_t verts);

/*
 * Pipeline statistics (since format 1.5), in the order of Vulkan's
 * VkQueryPipelineStatisticFlagBits: bit i of a mask is counter i.
 */
enum crumbs_pipeline_counter {
	CRUMBS_COUNTER_IA_VERTICES = 0,     /* input-assembly vertices */
	CRUMBS_COUNTER_IA_PRIMITIVES = 1,   /* input-assembly primitives */
	CRUMBS_COUNTER_VS_INVOCATIONS = 2,
	CRUMBS_COUNTER_GS_INVOCATIONS = 3,
	CRUMBS_COUNTER_GS_PRIMITIVES = 4,
	CRUMBS_COUNTER_CLIP_INVOCATIONS = 5, /* primitives that reach clipping */
	CRUMBS_COUNTER_CLIP_PRIMITIVES = 6,  /* primitives that clipping puts out */
	CRUMBS_COUNTER_FS_INVOCATIONS = 7,
	CRUMBS_COUNTER_TCS_PATCHES = 8,
	CRUMBS_COUNTER_TES_INVOCATIONS = 9,
	CRUMBS_COUNTER_CS_INVOCATIONS = 10
};
#define CRUMBS_PIPELINE_COUNTERS 11

/*
 * Pipeline statistics of work in the innermost open scope or event of the
 * current queue (the queue's own when none is open), or with `leaf` of the
 * last leaf event written on it since its last scope begin or end, added
 * to what it has: values[i] for each bit i of mask (below
 * 2^CRUMBS_PIPELINE_COUNTERS), each below 2^63. A mask of 0 writes
 * nothing.
 */
CRUMBS_API enum crumbs_result crumbs_writer_counters(crumbs_writer *w, int leaf, uint32_t mask,
						     const uint64_t values[CRUMBS_PIPELINE_COUNTERS]);
/* Some work of that scope, event or leaf was not counted: its pipeline
 * statistics are unknown. */
CRUMBS_API enum crumbs_result crumbs_writer_counters_unknown(crumbs_writer *w, int leaf);
/* The render area of the innermost open event (a render pass), 1 to
 * 2^20 pixels a side, for its fragments per pixel. */
CRUMBS_API enum crumbs_result crumbs_writer_render_area(crumbs_writer *w, uint32_t width,
							uint32_t height);

/*
 * Vendor counters (since format 1.5; VK_KHR_performance_query): a
 * counter as the device describes it. unit and storage are Vulkan's
 * VkPerformanceCounterUnitKHR and VkPerformanceCounterStorageKHR, scope
 * VkPerformanceCounterScopeKHR; group the pass (0 to groups - 1) that
 * counts it; scale the decimal digits its values carry: a value v is
 * written as round(v * 10^scale), 0 to 9 (floats take 3).
 */
struct crumbs_counter_desc {
	const char *name;
	const char *category;
	uint32_t unit;
	uint32_t storage;
	uint32_t scope;
	uint32_t group;
	uint32_t scale;
};
#define CRUMBS_MAX_COUNTER_SETS 255
#define CRUMBS_MAX_SET_COUNTERS 64
#define CRUMBS_MAX_COUNTER_GROUPS 64

/* Defines counter set `set` (1 to CRUMBS_MAX_COUNTER_SETS, each once) of
 * queue family `family` of `gpu`: count counters (at most 64) in `groups`
 * groups, of which a one-frame capture (round_robin 0) takes group 0, a
 * run (round_robin 1) group (frame number mod groups) in each frame. In
 * the setup, before the first frame. */
CRUMBS_API enum crumbs_result crumbs_writer_counter_set(crumbs_writer *w, uint32_t set,
							uint32_t gpu, uint32_t family,
							uint32_t groups, int round_robin,
							uint32_t count,
							const struct crumbs_counter_desc *counters);
/* A counter that queue family `family` of `gpu` offers (group and scale
 * are not written), in the setup. */
CRUMBS_API enum crumbs_result crumbs_writer_offered_counter(crumbs_writer *w, uint32_t gpu,
							    uint32_t family,
							    const struct crumbs_counter_desc *c);
/* As crumbs_writer_counters, for a counter set defined above: values[i]
 * for each bit i of mask (counter i of the set), each below 2^63. */
CRUMBS_API enum crumbs_result crumbs_writer_set_counters(crumbs_writer *w, int leaf, uint32_t set,
							 uint64_t mask, const uint64_t *values);
CRUMBS_API enum crumbs_result crumbs_writer_set_counters_unknown(crumbs_writer *w, int leaf,
								 uint32_t set);

/*
 * CPU threads and their scopes (since format 1.3), inside a frame, inside
 * a submission or not: selects thread `tid` (the OS's thread id), named
 * `name` (UTF-8, invalid bytes replaced as for scopes; NULL or "" unnamed),
 * for the CPU scopes that follow. A frame holds at most 256 threads: a
 * 257th returns CRUMBS_ERROR_LIMIT and leaves no thread current.
 * Selecting a thread again in the frame continues it; a name given again
 * replaces its name. CRUMBS_ERROR_BAD_STATE outside a frame.
 */
CRUMBS_API enum crumbs_result crumbs_writer_cpu_thread(crumbs_writer *w, uint32_t tid,
						       const char *name);
/*
 * A scope on the current CPU thread from cpu_ns (CLOCK_MONOTONIC ns, at
 * most INT64_MAX) at detail `level` (0 to CRUMBS_DETAIL_MAX), ended by
 * crumbs_writer_cpu_end(), which ends the thread's innermost open scope at
 * cpu_ns (an earlier time than its begin is taken as its begin). Scopes
 * still open at the frame's end are closed there. As for GPU scopes, one
 * nested deeper than 255 or past the frame's limits is dropped with its
 * end and counted as dropped (CRUMBS_ERROR_LIMIT); an end with nothing
 * open is kept and reported as unmatched. CRUMBS_ERROR_BAD_STATE outside a
 * frame or with no current thread.
 */
CRUMBS_API enum crumbs_result crumbs_writer_cpu_begin(crumbs_writer *w, const char *name,
						      unsigned level, uint64_t cpu_ns);
CRUMBS_API enum crumbs_result crumbs_writer_cpu_end(crumbs_writer *w, uint64_t cpu_ns);
/*
 * Since format 1.4: a CPU scope that waits on the GPU or on presentation
 * (a fence, a semaphore, an image to draw to, a present), otherwise as
 * crumbs_writer_cpu_begin(); ended by crumbs_writer_cpu_end().
 */
CRUMBS_API enum crumbs_result crumbs_writer_cpu_wait_begin(crumbs_writer *w, const char *name,
							   unsigned level, uint64_t cpu_ns);
/*
 * Since format 1.4: the thread that ends the frames (calls crumbs_frame,
 * or presents), whose time from frame to frame is the CPU frame time.
 * Inside a frame; it need not have scopes. Given again, replaces it.
 */
CRUMBS_API enum crumbs_result crumbs_writer_frame_thread(crumbs_writer *w, uint32_t tid);

/*
 * Tasks (since format 1.4): work not bound to a thread, on named
 * timelines, inside a frame. `task` is the producer's nonzero id of the
 * task, unique in the frame. A task begins in `state` (NULL or "":
 * "Executing") at cpu_ns, changes state, and ends; one begun before the
 * frame is given with `earlier` nonzero and cpu_ns its begin if known
 * (the frame's begin otherwise), and is shown from the frame's begin.
 * A dependency says that `task` cannot enter `blocked_state` before task
 * `blocking` ends. A frame holds at most 256 timelines: a task on a
 * 257th returns CRUMBS_ERROR_LIMIT and is not written. A task and each
 * of its states count as a scope against the frame's limits; past them,
 * CRUMBS_ERROR_LIMIT and the frame's dropped count. The writer does not
 * check ids: a state or end of an unknown or ended task, or a second
 * begin of an id, is written, and readers ignore and count it.
 * CRUMBS_ERROR_BAD_STATE outside a frame.
 */
CRUMBS_API enum crumbs_result crumbs_writer_task_begin(crumbs_writer *w, uint64_t task,
						       const char *timeline, const char *name,
						       const char *state, int earlier,
						       uint64_t cpu_ns);
CRUMBS_API enum crumbs_result crumbs_writer_task_state(crumbs_writer *w, uint64_t task,
						       const char *state, uint64_t cpu_ns);
CRUMBS_API enum crumbs_result crumbs_writer_task_end(crumbs_writer *w, uint64_t task,
						     uint64_t cpu_ns);
CRUMBS_API enum crumbs_result crumbs_writer_task_depend(crumbs_writer *w, uint64_t task,
							const char *blocked_state,
							uint64_t blocking, uint64_t cpu_ns);
/*
 * Since format 1.4: a frame boundary of another kind, on `timeline` (a
 * "Game" or "Physics" frame) at cpu_ns, inside a frame. A frame holds
 * boundaries of at most 256 timelines: a 257th returns
 * CRUMBS_ERROR_LIMIT.
 */
CRUMBS_API enum crumbs_result crumbs_writer_timeline_frame(crumbs_writer *w, const char *timeline,
							   uint64_t cpu_ns);

/*
 * Since format 1.5: one memory heap of a GPU in the frame (format/FORMAT.md,
 * MEMORY): its description, the allocations the program made and freed
 * through vkAllocateMemory and vkFreeMemory in the frame (when `tracked`),
 * and the driver's usage and budget of it at the frame's end
 * (VK_EXT_memory_budget, when `budgeted`).
 */
/* Heap flags, as VkMemoryHeapFlags' bits. */
enum crumbs_memory_heap_flags {
	CRUMBS_MEMORY_HEAP_DEVICE_LOCAL = 1u << 0,
	CRUMBS_MEMORY_HEAP_MULTI_INSTANCE = 1u << 1
};
/* At most this many heaps per GPU (Vulkan's VK_MAX_MEMORY_HEAPS). */
#define CRUMBS_MAX_MEMORY_HEAPS 16
struct crumbs_memory_desc {
	uint32_t gpu;
	uint32_t heap;          /* below CRUMBS_MAX_MEMORY_HEAPS */
	uint32_t flags;         /* enum crumbs_memory_heap_flags */
	uint64_t size_bytes;    /* the heap's size */
	int tracked;
	uint64_t allocated_bytes, freed_bytes; /* in the frame */
	uint64_t allocations, frees;           /* in the frame */
	uint64_t in_use_bytes;  /* allocated and not freed, at the frame's end */
	uint64_t high_bytes;    /* the most in use during the frame, >= in_use_bytes */
	int budgeted;
	uint64_t usage_bytes, budget_bytes;    /* the driver's, at the frame's end */
};
/* Inside a frame; a heap at most once a frame (CRUMBS_ERROR_INVALID_ARGUMENT
 * the second time, for a GPU not added, a heap out of range, unknown
 * flags or a high-water below the bytes in use). */
CRUMBS_API enum crumbs_result crumbs_writer_memory(crumbs_writer *w,
						   const struct crumbs_memory_desc *m);

/*
 * Since format 1.5: a present to a swapchain, inside a frame. `swapchain`
 * is the producer's number for it (a handle's value), the same in every
 * frame of the file; cpu_ns when the present call began, duration_ns how
 * long it took; present_id the id it was given (VK_KHR_present_id or
 * VK_GOOGLE_display_timing's presentID; 0: none); mode an enum
 * crumbs_present_mode; refresh_ns the display's refresh period where it
 * is known (0: not known); flags enum crumbs_present_flags.
 */
struct crumbs_present_desc {
	uint64_t swapchain;
	uint64_t cpu_ns;
	uint64_t duration_ns;
	uint64_t present_id;
	uint32_t mode;
	uint32_t flags;
	uint64_t refresh_ns;
};
CRUMBS_API enum crumbs_result crumbs_writer_present(crumbs_writer *w,
						    const struct crumbs_present_desc *p);
/*
 * Since format 1.5: when present `present_id` (not 0) of `swapchain` was
 * shown, at shown_ns on the clock `source` (enum crumbs_present_source)
 * says, written in the frame in which it became known.
 */
CRUMBS_API enum crumbs_result crumbs_writer_present_shown(crumbs_writer *w, uint64_t swapchain,
							  uint64_t present_id, unsigned source,
							  uint64_t shown_ns);

/* Writes the frames ended so far, and the devices and queues added since
 * the last chunk, as chunks now, between frames (a recorder's run does
 * when it begins and each second after, so that a process killed mid-run
 * leaves a file that reads, with those frames). */
CRUMBS_API enum crumbs_result crumbs_writer_flush(crumbs_writer *w);

/* Bytes written so far, compressed and uncompressed (statistics). */
CRUMBS_API void crumbs_writer_sizes(const crumbs_writer *w, uint64_t *file_bytes,
				    uint64_t *raw_bytes);
#ifdef __cplusplus
}
#endif

#endif
