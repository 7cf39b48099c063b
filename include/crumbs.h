/* SPDX-License-Identifier: MIT */
/*
 * crumbs.h: the public interface of libcrumbs: the API with which a Vulkan
 * program records scopes, submits its work and captures frames. The result
 * codes and the capture writer it shares with the tools are in
 * crumbs_file.h, which it includes.
 */
#ifndef CRUMBS_H
#define CRUMBS_H

#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "crumbs_file.h"

#ifdef __cplusplus
extern "C" {
#endif

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
	CRUMBS_FEATURE_DEBUG_UTILS = 1u << 2,
	/* pipelineStatisticsQuery, with hostQueryReset: crumbs counts
	 * vertices, primitives and shader invocations per scope in captures
	 * (crumbs_desc.counters). The program then tells crumbs where its
	 * render passes begin and end (crumbs_pass_edge), and calls
	 * crumbs_cmd_execute before vkCmdExecuteCommands outside them. */
	CRUMBS_FEATURE_PIPELINE_STATISTICS = 1u << 3,
	/* VK_EXT_memory_budget on the device (and Vulkan 1.1 or
	 * VK_KHR_get_physical_device_properties2 on the instance): each
	 * recorded frame holds the driver's usage and budget of every heap. */
	CRUMBS_FEATURE_MEMORY_BUDGET = 1u << 4
,
	/* VK_KHR_performance_query with
	 * performanceCounterQueryPools, on a device that also has
	 * CRUMBS_FEATURE_PIPELINE_STATISTICS: crumbs counts the vendor
	 * counters crumbs_desc.perf_counters names over the same stretches,
	 * holding the device's profiling lock from creation to destruction. */
	CRUMBS_FEATURE_PERFORMANCE_QUERY = 1u << 6
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
	/* Pipeline statistics per scope, on devices with
	 * CRUMBS_FEATURE_PIPELINE_STATISTICS: 0 in one-frame captures and not
	 * in runs, 1 in runs too, -1 never. CRUMBS_COUNTERS=0 or 1 in the
	 * environment says the same of runs and wins. */
	int counters;
	/* Vendor counters per scope, on devices with
	 * CRUMBS_FEATURE_PERFORMANCE_QUERY: counter names as the device
	 * gives them (`crumbs info FILE` lists them), matched without case,
	 * separated by commas; NULL or "": none. CRUMBS_PERF_COUNTERS in the
	 * environment wins. Only counters of command scope whose values add
	 * up over a scope (no percentages or rates) are taken; the rest are
	 * named in the log. A set that needs several passes is split into
	 * groups of one pass: a one-frame capture takes the first, a run
	 * group (frame mod groups) in each frame. With a list, runs count
	 * pipeline statistics too, unless counters is -1. */
	const char *perf_counters;
};

/*
 * Creates a context. The devices and queues must outlive it. Loads the
 * Vulkan functions it needs through get_instance_proc_addr; creates a query
 * pool and a few command buffers per queue. With no instance, no devices
 * and no queues, a context of CPU threads alone: it records CPU scopes,
 * wait scopes and tasks, and captures and runs as any other. On success *out is owned by
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
 * Where the process `pid` listens for `crumbs trigger` (trigger/TRIGGER.md):
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
 * their timestamps when it reads the capture back. With pipeline
 * statistics, call it before vkCmdExecuteCommands outside render passes:
 * a secondary may not run inside crumbs' query; the primary's own work
 * between it and the next scope's begin or end then counts as unknown. */
CRUMBS_API void crumbs_cmd_execute(crumbs_cmd *cmd, uint32_t count,
				   const VkCommandBuffer *secondaries);

/*
 * Render pass edges, for pipeline statistics: Vulkan lets a query begun
 * outside a render pass end only outside it, and one begun inside a
 * subpass end only in it, so crumbs must end and begin its queries on
 * each side of every vkCmdBeginRenderPass, vkCmdBeginRendering,
 * vkCmdNextSubpass, vkCmdEndRenderPass and vkCmdEndRendering (and their
 * 2 forms). Call crumbs_pass_edge right before and right after each, on
 * the primary command buffer; width and height are the render area's,
 * given with CRUMBS_PASS_BEGINNING (0: unknown), for the pass's fragments
 * per pixel, and kept by the innermost open scope. Costs a branch outside
 * captures; does nothing where the device has no
 * CRUMBS_FEATURE_PIPELINE_STATISTICS.
 */
enum crumbs_pass_edge {
	CRUMBS_PASS_BEGINNING = 0,      /* right before a pass begins */
	CRUMBS_PASS_BEGUN = 1,          /* right after, or after a next subpass */
	CRUMBS_PASS_BEGUN_SECONDARY = 2, /* ... whose contents are secondaries */
	CRUMBS_PASS_BEGUN_MULTIVIEW = 3, /* ... of a multiview pass: counts unknown */
	CRUMBS_PASS_ENDING = 4,         /* right before a next subpass or the end */
	CRUMBS_PASS_ENDED = 5           /* right after the pass ends */
};
CRUMBS_API void crumbs_pass_edge(crumbs_cmd *cmd, enum crumbs_pass_edge edge, uint32_t width,
				 uint32_t height);

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
/* Scopes on CPU threads                                                    */
/* ------------------------------------------------------------------------ */

/* What the inline functions below read; the first member of every
 * crumbs_context. Not for programs. */
struct crumbs_context_state_ {
	int cpu_detail; /* levels of CPU scopes recorded; -1: none */
	int tasks;      /* tasks are recorded (from a capture's request on) */
};

CRUMBS_API void crumbs_cpu_record_(crumbs_context *ctx, unsigned level, const char *name);
CRUMBS_API void crumbs_cpu_recordf_(crumbs_context *ctx, unsigned level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
CRUMBS_API void crumbs_cpu_close_(crumbs_context *ctx);
CRUMBS_API void crumbs_cpu_wait_record_(crumbs_context *ctx, unsigned level, const char *name);

/* Whether CPU scopes are recorded now (a capture frame, or a run's). */
static inline int crumbs_cpu_on_(crumbs_context *ctx)
{
	return ctx && __atomic_load_n(&((struct crumbs_context_state_ *)(void *)ctx)->cpu_detail,
				      __ATOMIC_RELAXED) >= 0;
}

/*
 * A scope of detail `level` (0 coarsest to 3 finest) on the calling
 * thread, ended by crumbs_cpu_end() on the same thread. Recorded in a
 * capture frame and in a run's frames at the run's detail; outside them
 * it costs a branch. Names are copied. The thread's first recorded scope
 * sets aside its buffers; after that a scope takes no lock, makes no
 * allocation and no system call. An end with nothing open on the thread
 * is kept, and shown as unmatched.
 */
static inline void crumbs_cpu_begin(crumbs_context *ctx, unsigned level, const char *name)
{
	if (crumbs_cpu_on_(ctx))
		crumbs_cpu_record_(ctx, level, name);
}

/* The same with a printf-style name, formatted only when recorded. */
#define crumbs_cpu_beginf(ctx, level, ...)                                  \
	do {                                                                \
		crumbs_context *crumbs_ctx_ = (ctx);                        \
		if (crumbs_cpu_on_(crumbs_ctx_))                            \
			crumbs_cpu_recordf_(crumbs_ctx_, (level), __VA_ARGS__); \
	} while (0)

static inline void crumbs_cpu_end(crumbs_context *ctx)
{
	if (crumbs_cpu_on_(ctx))
		crumbs_cpu_close_(ctx);
}

/*
 * A scope in which the calling thread waits on the GPU or on presentation
 * (a fence, a semaphore, an image to draw to, a present, an idle queue),
 * otherwise as crumbs_cpu_begin(), and ended by crumbs_cpu_end(). The
 * report sums a thread's waits: the frame thread's waits are what says a
 * frame was bound by the GPU rather than the CPU. The crumbs layer times
 * the Vulkan calls that wait this way by itself.
 */
static inline void crumbs_cpu_wait_begin(crumbs_context *ctx, unsigned level, const char *name)
{
	if (crumbs_cpu_on_(ctx))
		crumbs_cpu_wait_record_(ctx, level, name);
}

/* Names the calling thread in captures (default: the name the system
 * gives it, pthread_setname_np's). */
CRUMBS_API void crumbs_thread_name(crumbs_context *ctx, const char *name);

/* ------------------------------------------------------------------------ */
/* Tasks and timelines                                                      */
/* ------------------------------------------------------------------------ */

/*
 * A task is work not bound to a thread (a job of a job system, a load, a
 * physics step): it begins on one thread, may change state and end on
 * others, and is shown on a named timeline ("Jobs", "Streaming") with
 * its states one after another ("Executing", "Waiting on IO"). Tasks
 * have no detail level: they are recorded whenever CPU scopes are, in
 * capture frames and in every frame of a run, and, so that a task begun
 * before the first of them can be shown, from the moment the capture or
 * run is asked for. Outside that, each call costs one branch.
 *
 * A call records on the calling thread's buffers (those of its CPU
 * scopes): no lock, no allocation after the thread's first, no system
 * call; the thread that calls crumbs_frame() merges every thread's by
 * time. A task still open when a recorded frame begins is written in it
 * as begun earlier, from the frame's start, with the state it is in then
 * and the dependencies given on it; one begun before the capture or run
 * was asked for was given id 0 and is not shown. A state, end or
 * dependency of task 0, of an ended task or of one begun before that, is
 * ignored; dependencies that the program does not respect are recorded
 * as given, and the report shows them.
 */
typedef uint64_t crumbs_task; /* 0 is no task */

/*
 * Begins a task on `timeline` (NULL: "Tasks") in `state` (NULL or "":
 * "Executing"), named by a printf-style format, and returns its id, unique
 * in the context; 0 when tasks are not recorded. Names are copied (each
 * string cut at 511 bytes).
 *
 * crumbs_task_begin is also a macro that costs one branch when tasks are
 * not recorded: it evaluates `ctx` twice, and its other arguments once,
 * only when tasks are recorded. (crumbs_task_begin)(...) calls the
 * function.
 */
CRUMBS_API crumbs_task crumbs_task_begin(crumbs_context *ctx, const char *timeline,
					 const char *state, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
CRUMBS_API void crumbs_task_state_(crumbs_context *ctx, crumbs_task task, const char *state);
CRUMBS_API void crumbs_task_end_(crumbs_context *ctx, crumbs_task task);
CRUMBS_API void crumbs_task_depend_(crumbs_context *ctx, crumbs_task task,
				    const char *blocked_state, crumbs_task blocking);
CRUMBS_API void crumbs_timeline_frame_(crumbs_context *ctx, const char *timeline);

/* Whether tasks are recorded now. */
static inline int crumbs_tasks_on_(crumbs_context *ctx)
{
	return ctx && __atomic_load_n(&((struct crumbs_context_state_ *)(void *)ctx)->tasks,
				      __ATOMIC_RELAXED);
}

#define crumbs_task_begin(ctx, timeline, state, ...)                               \
	(crumbs_tasks_on_(ctx) ? (crumbs_task_begin)((ctx), (timeline), (state), __VA_ARGS__) \
			       : (crumbs_task)0)

/* The task enters `state` (NULL or "": "Executing") now. */
static inline void crumbs_task_state(crumbs_context *ctx, crumbs_task task, const char *state)
{
	if (crumbs_tasks_on_(ctx))
		crumbs_task_state_(ctx, task, state);
}

/* The task ends now; a second end is ignored. */
static inline void crumbs_task_end(crumbs_context *ctx, crumbs_task task)
{
	if (crumbs_tasks_on_(ctx))
		crumbs_task_end_(ctx, task);
}

/* Task `task` cannot enter `blocked_state` (NULL or "": "Executing")
 * before task `blocking` has ended. Recorded as given: the report shows
 * where the program did not respect it. */
static inline void crumbs_task_depend(crumbs_context *ctx, crumbs_task task,
				      const char *blocked_state, crumbs_task blocking)
{
	if (crumbs_tasks_on_(ctx))
		crumbs_task_depend_(ctx, task, blocked_state, blocking);
}

/* A boundary of a frame of another kind, on `timeline` (a "Game" or
 * "Physics" frame; NULL: "Frames"), now. Recorded in recorded frames. */
static inline void crumbs_timeline_frame(crumbs_context *ctx, const char *timeline)
{
	if (crumbs_tasks_on_(ctx))
		crumbs_timeline_frame_(ctx, timeline);
}

/* ------------------------------------------------------------------------ */
/* Presentation                                                             */
/* ------------------------------------------------------------------------ */

/*
 * A present the program made to one swapchain (a vkQueuePresentKHR of
 * several swapchains is one crumbs_present for each). Zero is the
 * default of each field.
 */
struct crumbs_present_info {
	uint64_t swapchain;            /* (uint64_t)VkSwapchainKHR */
	/* The vkQueuePresentKHR call on CLOCK_MONOTONIC, in ns; both 0: it
	 * ended just now, and how long it took is not known. */
	int64_t begin_ns, end_ns;
	/* The id the present was given (VkPresentIdKHR), which
	 * crumbs_present_shown names; 0: none. */
	uint64_t present_id;
	/* The swapchain's present mode: FIFO and FIFO relaxed ask for each
	 * image to be shown at a v-sync of its own, which is what makes a
	 * v-sync missed. 0: not known (no v-sync is counted missed). */
	enum crumbs_present_mode mode;
	/* The display's refresh period in ns (vkGetRefreshCycleDurationGOOGLE,
	 * or what the program knows of its display); 0: not known. */
	uint64_t refresh_ns;
	VkResult result;               /* what vkQueuePresentKHR returned */
};

/*
 * Records a present in the frame being recorded (a capture frame or any
 * frame of a run, whatever its detail); outside them it costs a load.
 * Call it after vkQueuePresentKHR and before the crumbs_frame() that
 * ends the frame, from any thread. The crumbs layer reports the
 * presents of the devices it records by itself. A frame keeps at most 64.
 */
CRUMBS_API void crumbs_present(crumbs_context *ctx, const struct crumbs_present_info *info);

/*
 * When present `present_id` of `swapchain` was shown, learnt now: on
 * CRUMBS_SHOWN_PRESENT_WAIT, the CLOCK_MONOTONIC time at which
 * vkWaitForPresentKHR(present_id) returned; on CRUMBS_SHOWN_DISPLAY_TIMING,
 * a VkPastPresentationTimingGOOGLE's actualPresentTime (present_id its
 * presentID). From any thread, at any time; recorded in the frame being
 * recorded when it is called. From them crumbs gives the time from one
 * shown present to the next, and the v-syncs missed.
 */
CRUMBS_API void crumbs_present_shown(crumbs_context *ctx, uint64_t swapchain,
				     uint64_t present_id, enum crumbs_present_source source,
				     int64_t shown_ns);

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

/* ------------------------------------------------------------------------ */
/* Video memory                                                             */
/* ------------------------------------------------------------------------ */

/*
 * crumbs does not see the program's vkAllocateMemory and vkFreeMemory (the
 * crumbs layer does, for programs run under it): a program tells it of
 * each, beside the call, with the device (an index into crumbs_desc.devices),
 * the memory type index it allocated from (VkMemoryAllocateInfo's
 * memoryTypeIndex; crumbs finds its heap) and the size
 * (allocationSize). Every recorded frame then holds, per heap, the bytes
 * and the number of allocations and frees made in it, the bytes in use at
 * its end and their high-water during it: those allocated through these
 * calls since the context's creation and not freed (a program that
 * allocated before may tell of those allocations right after creating
 * it). A free of memory never told of is the program's own to avoid: it
 * is counted, and the bytes in use never go below 0. Any thread may call
 * them, at any time; each costs a few atomic operations. A device or
 * memory type out of range is ignored. Under the crumbs layer they do
 * nothing: the layer counts the same calls itself.
 */
CRUMBS_API void crumbs_memory_allocated(crumbs_context *ctx, uint32_t device,
					uint32_t memory_type, uint64_t bytes);
CRUMBS_API void crumbs_memory_freed(crumbs_context *ctx, uint32_t device,
				    uint32_t memory_type, uint64_t bytes);

#ifdef __cplusplus
}

/* A CPU scope that ends at the end of the enclosing block. */
struct crumbs_cpu_scope_ {
	crumbs_context *ctx;
	crumbs_cpu_scope_(crumbs_context *c, unsigned level, const char *name) : ctx(c)
	{
		crumbs_cpu_begin(ctx, level, name);
	}
	~crumbs_cpu_scope_() { crumbs_cpu_end(ctx); }
	crumbs_cpu_scope_(const crumbs_cpu_scope_ &) = delete;
	crumbs_cpu_scope_ &operator=(const crumbs_cpu_scope_ &) = delete;
};
#define CRUMBS_CPU_SCOPE_CAT2_(a, b) a##b
#define CRUMBS_CPU_SCOPE_CAT_(a, b) CRUMBS_CPU_SCOPE_CAT2_(a, b)
#define CRUMBS_CPU_SCOPE(ctx, level, name) \
	crumbs_cpu_scope_ CRUMBS_CPU_SCOPE_CAT_(crumbs_cpu_scope_at_, __LINE__)((ctx), (level), (name))

/* A wait scope that ends at the end of the enclosing block. */
struct crumbs_cpu_wait_scope_ {
	crumbs_context *ctx;
	crumbs_cpu_wait_scope_(crumbs_context *c, unsigned level, const char *name) : ctx(c)
	{
		crumbs_cpu_wait_begin(ctx, level, name);
	}
	~crumbs_cpu_wait_scope_() { crumbs_cpu_end(ctx); }
	crumbs_cpu_wait_scope_(const crumbs_cpu_wait_scope_ &) = delete;
	crumbs_cpu_wait_scope_ &operator=(const crumbs_cpu_wait_scope_ &) = delete;
};
#define CRUMBS_CPU_WAIT_SCOPE(ctx, level, name)                                          \
	crumbs_cpu_wait_scope_ CRUMBS_CPU_SCOPE_CAT_(crumbs_cpu_wait_scope_at_, __LINE__)( \
		(ctx), (level), (name))
#endif

#endif
