/*
 * crumbs.h: the public interface of libcrumbs.
 *
 * Result codes shared by every part of crumbs, the constants of the capture
 * file format (specified in capture/FORMAT.md), the capture-file writer
 * (which uses no Vulkan: tests and generators write captures with it), and
 * the API with which a Vulkan program records scopes and captures frames.
 */
#ifndef CRUMBS_H
#define CRUMBS_H

#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

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
/* Capture file format constants (capture/FORMAT.md)                        */
/* ------------------------------------------------------------------------ */

#define CRUMBS_FORMAT_MAJOR 1
#define CRUMBS_FORMAT_MINOR 1

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
 * With `path`, the file is written under a temporary name beside it and
 * renamed into place by crumbs_writer_close(), so a reader never sees half
 * a file under the final name. With `write`, bytes go to the callback in
 * file order instead (it returns 0 on success).
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
 * temporary file into place, and frees the writer, also on failure. An
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

/* Writes the frames ended so far as a chunk now, between frames (a
 * recorder's run does each second, so that a process killed mid-run
 * leaves them readable). */
CRUMBS_API enum crumbs_result crumbs_writer_flush(crumbs_writer *w);

/* Bytes written so far, compressed and uncompressed (statistics). */
CRUMBS_API void crumbs_writer_sizes(const crumbs_writer *w, uint64_t *file_bytes,
				    uint64_t *raw_bytes);

/* ------------------------------------------------------------------------ */
/* Capturing a Vulkan program                                               */
/* ------------------------------------------------------------------------ */

/*
 * A program creates one context for its Vulkan devices and queues, wraps
 * its GPU work in scopes, submits through crumbs_queue_submit(), and calls
 * crumbs_frame() once a frame. Nothing is recorded until a capture is asked
 * for (crumbs_capture(), crumbs_command("profilegpu"), `crumbs trigger PID`
 * or CRUMBS_CAPTURE_FRAME=N): then the next frame is recorded at the
 * maximum detail, its timestamps are read back a few frames later without
 * waiting on the GPU, and a thread of crumbs' own writes the capture to a
 * file and prints its table, which crumbs_frame() then hands to the log
 * callback: the log callback is only ever called from the threads that
 * call crumbs, never from that writer.
 *
 * Threads: command buffers may be recorded with scopes on many threads at
 * once; submissions to one queue must not run concurrently (Vulkan's own
 * rule); crumbs_frame() must not run concurrently with submissions.
 */

typedef struct crumbs_context crumbs_context;

enum crumbs_log_level { CRUMBS_LOG_INFO, CRUMBS_LOG_WARNING, CRUMBS_LOG_ERROR };

/* What the program enabled on a device. crumbs uses a feature only when
 * told: it cannot ask a device what was enabled at its creation. */
enum crumbs_device_features {
	/* hostQueryReset (Vulkan 1.2 or VK_EXT_host_query_reset): query
	 * slots are reset on the host, also for transfer-only queues. */
	CRUMBS_FEATURE_HOST_QUERY_RESET = 1u << 0,
	/* VK_EXT_calibrated_timestamps or VK_KHR_calibrated_timestamps. */
	CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS = 1u << 1,
	/* VK_EXT_debug_utils on the instance: scopes can become labels. */
	CRUMBS_FEATURE_DEBUG_UTILS = 1u << 2
};

struct crumbs_vk_device {
	VkPhysicalDevice physical_device;
	VkDevice device;
	uint32_t features; /* enum crumbs_device_features */
};

struct crumbs_vk_queue {
	VkQueue queue;
	uint32_t device;  /* index into crumbs_desc.devices */
	uint32_t family;
	uint32_t index;   /* in its family */
};

/* Calibration of GPU clocks against CLOCK_MONOTONIC. */
enum crumbs_calibration {
	CRUMBS_CALIBRATION_AUTO = 0,      /* calibrated timestamps when enabled */
	CRUMBS_CALIBRATION_BRACKETED = 1  /* a timestamp between two CPU reads */
};

/* How a context is made. Zero means default for every field. */
struct crumbs_desc {
	VkInstance instance;
	PFN_vkGetInstanceProcAddr get_instance_proc_addr; /* the loader's */
	const struct crumbs_vk_device *devices;
	uint32_t device_count;
	const struct crumbs_vk_queue *queues;
	uint32_t queue_count;
	/* Used for every Vulkan object and every allocation of crumbs. */
	const VkAllocationCallbacks *allocator;
	/* Messages and tables, one call per line or table; called only
	 * from within crumbs' functions, on the thread that called them
	 * (crumbs_frame(), crumbs_create(), crumbs_destroy(), the capture
	 * requests). NULL: standard error. */
	void (*log)(void *user, enum crumbs_log_level level, const char *message);
	void *log_user;
	/* Where captures go; NULL: $CRUMBS_CAPTURE_DIR, else the current
	 * directory. Files are named PROGRAM-frame-N.crumbs. */
	const char *capture_dir;
	const char *program_name; /* NULL: the process's own name */
	/* 0: labels off. N from 1 to 4: outside captures, scopes of levels
	 * below N become VK_EXT_debug_utils labels (RenderDoc, Nsight and
	 * the validation layer see them); during a capture every recorded
	 * scope does. Needs CRUMBS_FEATURE_DEBUG_UTILS. */
	int mirror_labels;
	uint32_t max_scopes;          /* per queue and capture; 0: 16384 */
	uint32_t max_submissions;     /* per queue and capture; 0: 128 */
	uint32_t max_command_buffers; /* recorded during a capture; 0: 4096 */
	uint32_t name_bytes;          /* scope names of a capture; 0: 1 MiB */
	int no_trigger;               /* do not listen for `crumbs trigger` */
	enum crumbs_calibration calibration;
};

/*
 * Creates a context. The devices and queues must outlive it. Loads the
 * Vulkan functions it needs through get_instance_proc_addr; creates a query
 * pool and a few command buffers per queue. On success *out is owned by
 * the caller. CRUMBS_CAPTURE_FRAME=N in the environment asks for a
 * capture of frame N (frames count from 0 at creation).
 */
CRUMBS_API enum crumbs_result crumbs_create(const struct crumbs_desc *desc, crumbs_context **out);

/* Destroys the context, before vkDestroyDevice of any of its devices:
 * crumbs' query pools, command buffers and fences live on them, and its
 * output thread calls them during a run. The GPU must be done with
 * everything submitted through it (vkDeviceWaitIdle). A capture not yet
 * written is written with what was resolved. NULL is a no-op. A program
 * that exits without it (and without destroying its devices) still gets
 * the capture crumbs' output thread was writing: the exit waits for it
 * (without printing its tables). */
CRUMBS_API void crumbs_destroy(crumbs_context *ctx);

/*
 * The frame boundary: call once a frame, after its last submission. Ends
 * a capture frame, reads back results of earlier ones, starts writing a
 * resolved capture on crumbs' output thread and, once it is written,
 * hands its tables to the log, answers `crumbs trigger`.
 */
CRUMBS_API void crumbs_frame(crumbs_context *ctx);

/* Asks for the next frame to be captured, with report settings as for
 * `crumbs report` (NULL: defaults). CRUMBS_ERROR_BAD_STATE if a capture is
 * already under way; CRUMBS_ERROR_INVALID_ARGUMENT (logged) for bad
 * settings. */
CRUMBS_API enum crumbs_result crumbs_capture(crumbs_context *ctx, const char *settings);

/* Asks for frame `frame` to be captured: frame N-1 is its pre-roll. Right
 * after crumbs_create, frame 0 may be asked for. CRUMBS_ERROR_INVALID_ARGUMENT
 * for a frame that has begun, CRUMBS_ERROR_BAD_STATE while another capture
 * is asked for or under way. */
CRUMBS_API enum crumbs_result crumbs_capture_at(crumbs_context *ctx, uint64_t frame,
						const char *settings);

/* For crumbs_record(): a run that goes on until it is stopped. */
#define CRUMBS_RECORD_OPEN UINT64_MAX

/*
 * Records a run: every frame from `first` to `last` (inclusive;
 * CRUMBS_RECORD_OPEN: until crumbs_record_stop() or crumbs_destroy()) at
 * detail level `detail` (0 to CRUMBS_DETAIL_MAX; scopes of higher levels
 * cost a branch, and leaf events are recorded only at the maximum), into
 * one capture file, PROGRAM-run-FIRST.crumbs in the capture folder. Frame
 * first - 1 is its pre-roll; right after crumbs_create, first may be 0.
 * Each frame's timestamps are read back a few frames later without
 * waiting on the GPU; a frame whose results are not ready when its memory
 * is needed again (CAPTURE_SETS frames later) is written incomplete. The
 * frames are appended to the file on crumbs' output thread, a chunk at
 * least every second (also while the program ends no frame), so memory
 * stays bounded however long the run, and a program killed mid-run leaves
 * a file whose complete chunks read. The
 * log gets one line when the file is complete. CRUMBS_RECORD=A:B[:DETAIL]
 * in the environment (B empty: until the program ends; DETAIL default 1)
 * asks for a run at creation. Errors as for crumbs_capture_at().
 */
CRUMBS_API enum crumbs_result crumbs_record(crumbs_context *ctx, uint64_t first, uint64_t last,
					    int detail);

/* Ends the run under way after the current frame (CRUMBS_ERROR_BAD_STATE
 * when none is). */
CRUMBS_API enum crumbs_result crumbs_record_stop(crumbs_context *ctx);

/* The console command: "profilegpu [settings]" captures the next frame;
 * "profilegpu --frames N [--detail D] [settings]" records the next N
 * frames at detail D (default 1); "help" lists the settings. Replies
 * through the log callback. */
CRUMBS_API enum crumbs_result crumbs_command(crumbs_context *ctx, const char *command_line);

/* The detail level recorded now: CRUMBS_DETAIL_MAX in a capture frame,
 * the run's in a run's frame, mirror_labels - 1 outside them, -1 when
 * nothing is recorded (then a program can skip building fine-grained
 * names at all). */
CRUMBS_API int crumbs_detail(const crumbs_context *ctx);

/* The path of the last capture written, or NULL; valid until the next. */
CRUMBS_API const char *crumbs_last_capture(const crumbs_context *ctx);

/*
 * Where the process `pid` listens for `crumbs trigger` (capture/TRIGGER.md):
 * $XDG_RUNTIME_DIR/crumbs/PID.sock, or /tmp/crumbs-UID/PID.sock without it.
 * Returns 0, or -1 if the path does not fit in `size` bytes.
 */
CRUMBS_API int crumbs_trigger_path(long pid, char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* Scopes on command buffers                                                */
/* ------------------------------------------------------------------------ */

typedef struct crumbs_cmd crumbs_cmd;

/*
 * Starts scopes on a command buffer being recorded for `queue` (crumbs
 * needs the queue to choose its query pool); it may be submitted on any
 * queue of `queue`'s family. Call after vkBeginCommandBuffer; end with
 * crumbs_cmd_end() before vkEndCommandBuffer. Never NULL: outside
 * captures (and when out of handles) a shared handle on which every
 * scope costs one branch. A capture times the command buffers begun in
 * its frame and submitted in it; a run's frame also those begun in the
 * run's frame before (a program that records the next frame's work
 * before it presents).
 */
CRUMBS_API crumbs_cmd *crumbs_cmd_begin(crumbs_context *ctx, VkCommandBuffer cb, VkQueue queue);
CRUMBS_API void crumbs_cmd_end(crumbs_cmd *cmd);

/* Call beside vkCmdExecuteCommands (which the program still calls): the
 * scopes recorded on the secondaries are placed here in the tree. Only for
 * secondaries that really are executed there: crumbs waits on the GPU for
 * their timestamps when it reads the capture back. */
CRUMBS_API void crumbs_cmd_execute(crumbs_cmd *cmd, uint32_t count,
				   const VkCommandBuffer *secondaries);

/* What the inline functions below read; the first member of every
 * crumbs_cmd. Not for programs. */
struct crumbs_cmd_state_ {
	int detail;        /* recorded levels; -1: nothing */
	uint32_t skipped;  /* open scopes not recorded */
};

CRUMBS_API void crumbs_scope_record_(crumbs_cmd *cmd, unsigned level, const char *name);
CRUMBS_API void crumbs_scope_recordf_(crumbs_cmd *cmd, unsigned level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
CRUMBS_API void crumbs_scope_close_(crumbs_cmd *cmd);

/* Whether a scope of `level` would be recorded; counts it as skipped if
 * not. */
static inline int crumbs_scope_wanted_(crumbs_cmd *cmd, unsigned level)
{
	struct crumbs_cmd_state_ *s = (struct crumbs_cmd_state_ *)(void *)cmd;
	if (s->detail < 0)
		return 0;
	if ((int)level > s->detail || s->skipped) {
		s->skipped++;
		return 0;
	}
	return 1;
}

/*
 * A scope of detail `level` (0 coarsest to 3 finest). Above the recorded
 * level, and inside a scope that was not recorded, it costs a branch.
 * Names are copied. Scopes nest; a scope may end on a later command buffer
 * submitted to the same queue.
 */
static inline void crumbs_scope_begin(crumbs_cmd *cmd, unsigned level, const char *name)
{
	if (crumbs_scope_wanted_(cmd, level))
		crumbs_scope_record_(cmd, level, name);
}

/* The same with a printf-style name, formatted only when recorded. */
#define crumbs_scope_beginf(cmd, level, ...)                              \
	do {                                                              \
		crumbs_cmd *crumbs_cmd_ = (cmd);                          \
		unsigned crumbs_level_ = (level);                         \
		if (crumbs_scope_wanted_(crumbs_cmd_, crumbs_level_))     \
			crumbs_scope_recordf_(crumbs_cmd_, crumbs_level_, __VA_ARGS__); \
	} while (0)

static inline void crumbs_scope_end(crumbs_cmd *cmd)
{
	struct crumbs_cmd_state_ *s = (struct crumbs_cmd_state_ *)(void *)cmd;
	if (s->detail < 0)
		return;
	if (s->skipped) {
		s->skipped--;
		return;
	}
	crumbs_scope_close_(cmd);
}

/* Counts of work done in the innermost scope (draws with their
 * primitives and vertices, dispatches), shown in the Draws, Dispatches,
 * Prims and Verts columns. Recorded in capture frames only. A count may be
 * CRUMBS_COUNT_UNKNOWN (an indirect draw). */
CRUMBS_API void crumbs_count_(crumbs_cmd *cmd, uint64_t draws, uint64_t dispatches, uint64_t prims,
			      uint64_t verts);

static inline void crumbs_count(crumbs_cmd *cmd, uint64_t draws, uint64_t dispatches,
				uint64_t prims, uint64_t verts)
{
	struct crumbs_cmd_state_ *s = (struct crumbs_cmd_state_ *)(void *)cmd;
	if (s->detail >= CRUMBS_DETAIL_MAX && !s->skipped)
		crumbs_count_(cmd, draws, dispatches, prims, verts);
}

/* The common cases. */
static inline void crumbs_draws(crumbs_cmd *cmd, uint64_t draws, uint64_t prims, uint64_t verts)
{
	crumbs_count(cmd, draws, 0, prims, verts);
}

static inline void crumbs_dispatches(crumbs_cmd *cmd, uint64_t dispatches)
{
	crumbs_count(cmd, 0, dispatches, 0, 0);
}

/* ------------------------------------------------------------------------ */
/* Submissions                                                              */
/* ------------------------------------------------------------------------ */

/* vkQueueSubmit and vkQueueSubmit2, recording in a capture frame when the
 * work ran and which semaphores it waited on and signalled. */
CRUMBS_API VkResult crumbs_queue_submit(crumbs_context *ctx, VkQueue queue, uint32_t count,
					const VkSubmitInfo *submits, VkFence fence);
CRUMBS_API VkResult crumbs_queue_submit2(crumbs_context *ctx, VkQueue queue, uint32_t count,
					 const VkSubmitInfo2 *submits, VkFence fence);

/* vkSignalSemaphore, recording the host's signal. */
CRUMBS_API VkResult crumbs_signal_semaphore(crumbs_context *ctx, VkDevice device,
					    const VkSemaphoreSignalInfo *info);

#ifdef __cplusplus
}
#endif

#endif
