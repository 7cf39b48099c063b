/* SPDX-License-Identifier: MIT */
/*
 * capture_internal.h: the recorder's state, shared by its files: the
 * context with its devices and queues (query pools, pre-recorded timestamp
 * command buffers), the command-buffer handles and their events, the
 * submissions of a capture, and the capture's state machine; then each
 * file's functions, one section a file, from the bottom of the call graph
 * up.
 */
#ifndef CRUMBS_CAPTURE_INTERNAL_H
#define CRUMBS_CAPTURE_INTERNAL_H

#include "recorder.h"
#include "../trigger/trigger.h"
#include "../util/util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>

#define READY_RING 64          /* query slots for the pre-roll's ends */
#define END_STACK 32           /* reserved end slots a handle remembers */
#define SPARE_SLOTS 4          /* spare end slots a set's queue keeps */
#define EVENTS_PER_BLOCK 30
#define RESOLVE_NS 10000000000ll /* how long results may take before giving up */
#define RUN_CALIBRATE_NS 50000000ll /* a run samples its clocks again once this is past */
#define RUN_REFRESH_NS 25000000ll   /* the output thread does, once this is past */
#define STANDING_RANGE 128     /* query slots per range of a standing pool */
#define STANDING_RANGES 1024   /* ranges per device */
#define STANDING_MAX_RANGES 32 /* ranges one recording may take */
/* A run's first recording of a command buffer (and one begun with
 * ONE_TIME_SUBMIT in a capture's pre-roll): at full detail (two queries a
 * draw), and with scopes only. */
#define STANDING_RUN_RANGES 8
#define STANDING_RUN_SCOPE_RANGES 2
/* A family's pipeline statistics queries for standing recordings: fewer
 * than its timestamps, as each query is larger. */
#define STATS_RANGE 16
#define STATS_RANGES 1024
/* Frames of a run in flight at once: one recorded while the others'
 * results are copied, read back and written. A frame's results are given
 * up CAPTURE_SETS - 1 frames after it, more than a driver keeps in flight. */
#define CAPTURE_SETS 6

/*
 * The code a run's frame runs on the program's thread, in two sections of
 * its own that path_warm() prefetches: what recording runs, and what the
 * submissions and crumbs_frame run. A frame of a run finds crumbs' code
 * out of the core's caches (the program's own work, the driver's and
 * crumbs' output thread have been through them since the frame before),
 * and would otherwise wait for each line in turn as it runs into it.
 */
#define RECORD_PATH __attribute__((section("crumbs_record_path")))
#define FRAME_PATH __attribute__((section("crumbs_frame_path")))
enum path_part { PATH_RECORD = 1, PATH_FRAME = 2 };

/* ------------------------------------------------------------------------ */
/* Vulkan functions (functions.c)                                           */
/* ------------------------------------------------------------------------ */

/* The device functions, in the form of RECORDER_INSTANCE_FUNCTIONS
 * (recorder.h). */
#define RECORDER_DEVICE_FUNCTIONS(X)                                                                 \
	X(CreateQueryPool, PFN_vkCreateQueryPool, "vkCreateQueryPool", NULL, REQUIRED)               \
	X(DestroyQueryPool, PFN_vkDestroyQueryPool, "vkDestroyQueryPool", NULL, REQUIRED)            \
	X(ResetQueryPool, PFN_vkResetQueryPool, "vkResetQueryPool", "vkResetQueryPoolEXT", OPTIONAL) \
	X(GetQueryPoolResults, PFN_vkGetQueryPoolResults, "vkGetQueryPoolResults", NULL, REQUIRED)   \
	X(CreateCommandPool, PFN_vkCreateCommandPool, "vkCreateCommandPool", NULL, REQUIRED)         \
	X(DestroyCommandPool, PFN_vkDestroyCommandPool, "vkDestroyCommandPool", NULL, REQUIRED)      \
	X(AllocateCommandBuffers, PFN_vkAllocateCommandBuffers, "vkAllocateCommandBuffers", NULL,    \
	  REQUIRED)                                                                                  \
	X(BeginCommandBuffer, PFN_vkBeginCommandBuffer, "vkBeginCommandBuffer", NULL, REQUIRED)      \
	X(EndCommandBuffer, PFN_vkEndCommandBuffer, "vkEndCommandBuffer", NULL, REQUIRED)            \
	X(CmdWriteTimestamp, PFN_vkCmdWriteTimestamp, "vkCmdWriteTimestamp", NULL, REQUIRED)         \
	X(CmdBeginQuery, PFN_vkCmdBeginQuery, "vkCmdBeginQuery", NULL, REQUIRED)                     \
	X(CmdEndQuery, PFN_vkCmdEndQuery, "vkCmdEndQuery", NULL, REQUIRED)                           \
	X(CmdResetQueryPool, PFN_vkCmdResetQueryPool, "vkCmdResetQueryPool", NULL, REQUIRED)         \
	X(CmdExecuteCommands, PFN_vkCmdExecuteCommands, "vkCmdExecuteCommands", NULL, REQUIRED)      \
	X(QueueSubmit, PFN_vkQueueSubmit, "vkQueueSubmit", NULL, REQUIRED)                           \
	X(QueueSubmit2, PFN_vkQueueSubmit2, "vkQueueSubmit2", "vkQueueSubmit2KHR", OPTIONAL)         \
	X(SignalSemaphore, PFN_vkSignalSemaphore, "vkSignalSemaphore", "vkSignalSemaphoreKHR",       \
	  OPTIONAL)                                                                                  \
	X(CreateFence, PFN_vkCreateFence, "vkCreateFence", NULL, REQUIRED)                           \
	X(DestroyFence, PFN_vkDestroyFence, "vkDestroyFence", NULL, REQUIRED)                        \
	X(WaitForFences, PFN_vkWaitForFences, "vkWaitForFences", NULL, REQUIRED)                     \
	X(GetFenceStatus, PFN_vkGetFenceStatus, "vkGetFenceStatus", NULL, REQUIRED)                  \
	X(ResetFences, PFN_vkResetFences, "vkResetFences", NULL, REQUIRED)                           \
	X(CreateBuffer, PFN_vkCreateBuffer, "vkCreateBuffer", NULL, REQUIRED)                        \
	X(DestroyBuffer, PFN_vkDestroyBuffer, "vkDestroyBuffer", NULL, REQUIRED)                     \
	X(GetBufferMemoryRequirements, PFN_vkGetBufferMemoryRequirements,                            \
	  "vkGetBufferMemoryRequirements", NULL, REQUIRED)                                           \
	X(AllocateMemory, PFN_vkAllocateMemory, "vkAllocateMemory", NULL, REQUIRED)                  \
	X(FreeMemory, PFN_vkFreeMemory, "vkFreeMemory", NULL, REQUIRED)                              \
	X(BindBufferMemory, PFN_vkBindBufferMemory, "vkBindBufferMemory", NULL, REQUIRED)            \
	X(MapMemory, PFN_vkMapMemory, "vkMapMemory", NULL, REQUIRED)                                 \
	X(InvalidateMappedMemoryRanges, PFN_vkInvalidateMappedMemoryRanges,                          \
	  "vkInvalidateMappedMemoryRanges", NULL, REQUIRED)                                          \
	X(CmdCopyQueryPoolResults, PFN_vkCmdCopyQueryPoolResults, "vkCmdCopyQueryPoolResults",       \
	  NULL, REQUIRED)                                                                            \
	X(CmdPipelineBarrier, PFN_vkCmdPipelineBarrier, "vkCmdPipelineBarrier", NULL, REQUIRED)      \
	X(GetCalibratedTimestamps, PFN_vkGetCalibratedTimestampsEXT, "vkGetCalibratedTimestampsEXT", \
	  "vkGetCalibratedTimestampsKHR", CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS)                     \
	X(AcquireProfilingLock, PFN_vkAcquireProfilingLockKHR, "vkAcquireProfilingLockKHR", NULL,    \
	  CRUMBS_FEATURE_PERFORMANCE_QUERY)                                                          \
	X(ReleaseProfilingLock, PFN_vkReleaseProfilingLockKHR, "vkReleaseProfilingLockKHR", NULL,    \
	  CRUMBS_FEATURE_PERFORMANCE_QUERY)

#define RECORDER_FN_FIELD(name, pfn, load, alias, need) pfn name;
struct device_fns {
	RECORDER_DEVICE_FUNCTIONS(RECORDER_FN_FIELD)
};
#undef RECORDER_FN_FIELD

/* ------------------------------------------------------------------------ */
/* Devices and queues                                                       */
/* ------------------------------------------------------------------------ */

struct calibration_sample {
	uint64_t ticks;
	int64_t cpu_ns;
	uint64_t deviation_ns;
	bool valid;
};

/* A device's query pool for standing recordings (standing.c), in ranges
 * that each recording takes for its life. */
struct standing_pool {
	VkQueryPool pool;
	struct crumbs_cmd *owner[STANDING_RANGES]; /* NULL: free */
	uint8_t held[STANDING_RANGES]; /* capture sets (bits) reading it until resolved */
};

/* A queue family's pipeline statistics queries for standing recordings
 * (standing.c), in ranges as the timestamps are. */
struct standing_stats {
	VkQueryPool pool;
	struct crumbs_cmd *owner[STATS_RANGES]; /* NULL: free */
	uint8_t held[STATS_RANGES];
};

/* A host-visible buffer query results are copied into (pools.c). */
struct host_buffer {
	VkBuffer buffer;
	VkDeviceMemory memory;
	void *mapped;
	bool coherent;
};

struct device_state {
	VkPhysicalDevice physical;
	VkDevice device;
	uint32_t features;
	struct device_fns fn;
	VkPhysicalDeviceProperties props;
	bool calibrated;                   /* calibrated timestamps usable */
	struct calibration_sample bracketed; /* the fallback's, from creation */
	struct calibration_sample recent;  /* a run's latest sample: under recent_lock */
	struct standing_pool *standing;    /* NULL: no standing recordings */
	bool profiling_lock;               /* perfquery.c holds vkAcquireProfilingLockKHR's */
	bool profiling_lock_tried;
};

/* Submissions of one queue in a captured frame. */
struct submit_record {
	int64_t cpu_ns;
	uint32_t begin_slot;
	uint32_t end_slot;
	uint32_t first_cmd;      /* in context.submit_cmds */
	uint32_t cmd_count;
	uint32_t unrecorded;     /* command buffers it ran with no recording to show */
	uint32_t first_op;       /* in context.ops: waits, then signals */
	uint32_t wait_count;
	uint32_t signal_count;
};

/* Copies of query results into a copy buffer, as a list, so that a
 * command buffer holding them is recorded again only when they change. */
struct copy_op {
	VkQueryPool pool;
	VkBuffer buffer;
	uint32_t first_query;
	uint32_t count;
	uint32_t first_slot;
};
struct copy_plan {
	struct copy_op *ops;
	uint32_t count;
	uint32_t cap;
	bool valid; /* the command buffer it belongs to holds exactly these */
};

struct queue_state {
	VkQueue queue;
	uint32_t device;
	uint32_t family;
	uint32_t index;
	uint32_t flags;            /* enum crumbs_queue_flags */
	uint32_t valid_bits;       /* 0: no timestamps */
	bool can_reset_in_cmd;     /* graphics or compute: vkCmdResetQueryPool */
	VkQueryPool pool;
	uint32_t scope_slots;      /* [0, scope_slots) for scopes */
	uint32_t submit_base;      /* then two per submission */
	uint32_t ready_base;       /* then READY_RING */
	uint32_t slot_count;
	VkCommandPool cmd_pool;
	VkCommandBuffer *begin_cbs; /* [max_submissions]: timestamp into slot */
	VkCommandBuffer *end_cbs;
	VkCommandBuffer ready_cbs[READY_RING];
	/* Without host reset, each capture set's slots are reset by command
	 * buffers recorded once for each layout of the sets (pools.c):
	 * [0] for a one-frame capture, [1..CAPTURE_SETS] for a run's sets. */
	VkCommandBuffer reset_cbs[1 + CAPTURE_SETS];
	VkCommandBuffer scope_reset_cbs[1 + CAPTURE_SETS];
	uint32_t scope_resets_taken; /* scope resets in front of its scratch_cbs */
	uint32_t resets_taken;       /* all resets there */
	/* ctx->resets_posted when its submissions last found no reset due. */
	uint32_t resets_none_at;
	uint32_t ready_next;
	uint32_t ready_slot;        /* last pre-roll end written, or NO_SLOT */
	struct submit_record *submits; /* [max_submissions], shared out to the sets */
	uint64_t *results;          /* [slot_count][2]: value, availability */
	/* The GPU copies the results here after each captured frame, so
	 * that reading them never waits (some drivers' vkGetQueryPoolResults
	 * waits for the device to be idle). Graphics and compute families
	 * only; others fall back to vkGetQueryPoolResults. A slot is copied
	 * by the queue that wrote it, which may be any queue of the family
	 * (readback.c), so a copy may copy into other queues' buffers. One
	 * command buffer and fence per capture set. */
	VkBuffer copy_buffer;
	VkDeviceMemory copy_memory;
	const uint64_t *copy_mapped;
	bool copy_coherent;
	VkCommandBuffer copy_cb[CAPTURE_SETS];
	VkFence copy_fence[CAPTURE_SETS];
	/* What copy_cb[k] was recorded with, and the plan of the next copy:
	 * a run's frames mostly copy the same slots, and the command buffer
	 * is then submitted again as it is (readback.c). */
	struct copy_plan copy_held[CAPTURE_SETS];
	struct copy_plan copy_next;
	uint8_t *written;           /* [slot_count]: slots the captures wrote */
	/* Room to rebuild a submission with crumbs' command buffers. */
	VkCommandBuffer *scratch_cbs;
	uint32_t scratch_cb_cap;
	VkCommandBufferSubmitInfo *scratch_cbinfos;
	void *scratch_submits;      /* VkSubmitInfo or VkSubmitInfo2 */
	uint32_t scratch_submit_cap;
	/* Standing recordings: [max_submissions] command buffers that copy
	 * the results of those a capture-frame batch ran, from their own
	 * pool, so that crumbs' other buffers need no lock. */
	VkCommandPool standing_cmd_pool;
	VkCommandBuffer *standing_cbs;
	/* Pipeline statistics (counters.c): a pool of stats_count queries
	 * counting stats_bits (graphics and compute families only), shared
	 * out to the sets as the scope slots are, and what was read of them:
	 * [stats_count][stats_words], the values then the availability. */
	VkQueryPool stats_pool;
	VkQueryPipelineStatisticFlags stats_bits;
	uint32_t stats_count;
	uint32_t stats_words;
	uint64_t *stats_results;
	/* Standing recordings' statistics: the family's queries they count
	 * into (owned by its first queue), and where a capture's copy of
	 * them lands, [stats_count][stats_words] as stats_results, with
	 * which of this queue's queries came that way (enum adopted). */
	struct standing_stats *standing_stats;
	bool owns_standing_stats;
	struct host_buffer stats_copy;
	uint8_t *stats_adopted;
	/* Vendor counters (perfquery.c), NULL where none are counted. */
	struct perf_queue *perf;
};

/* ------------------------------------------------------------------------ */
/* Command buffers and events                                               */
/* ------------------------------------------------------------------------ */

/* A name in the capture's arena (or a standing recording's own). */
struct name_ref {
	uint32_t offset;
	uint32_t len;
};

/* A leaf's or a COUNTS event's counts; a leaf's name too, kept here so
 * that every event stays 16 bytes. */
struct counts_record {
	uint64_t draws, dispatches, prims, verts;
	struct name_ref name;
};

/* EVENT_PASS: a render pass, a scope whose level is its kind. EVENT_LEAF:
 * one command between two slots (slot, slot + 1), its kind in level and
 * its counts and name in u.counts. EVENT_STRETCH: a pipeline statistics
 * query begins, its index in u.counts (COUNTER_UNKNOWN: the work from here
 * to the next stretch goes uncounted); EVENT_LEAF_STRETCH the same, of
 * the leaf before it. EVENT_AREA: a render area, u.name's offset by its
 * len. None of the three has a slot. */
enum event_type { EVENT_NONE, EVENT_BEGIN, EVENT_END, EVENT_COUNTS, EVENT_EXECUTE, EVENT_PASS,
		  EVENT_LEAF, EVENT_STRETCH, EVENT_LEAF_STRETCH, EVENT_AREA };
#define COUNTER_UNKNOWN UINT32_MAX
/* How a set's statistics query came to hold a standing recording's
 * values: not so, copied by the GPU and not read yet, read, or never
 * coming (the copy was not read). */
enum adopted { ADOPTED_NOT, ADOPTED_COPIED, ADOPTED_READ, ADOPTED_NEVER };

/* EVENT_POOL_SLOT: of a handle adopted from a standing recording, a slot
 * its command buffer writes into its queue's pool (in the set's share, as
 * a capture's do), not one copied there from the recording's range.
 * EVENT_LOST: it lost its timestamps for want of query slots; its frame's
 * note counts it when it is written. */
enum event_flags { EVENT_POOL_SLOT = 1u << 0, EVENT_LOST = 1u << 1 };

struct event {
	uint8_t type;
	uint8_t level;
	uint8_t flags;    /* enum event_flags */
	uint8_t pad;
	uint32_t slot;    /* query slot written, or NO_SLOT */
	union {
		struct name_ref name;
		uint32_t counts;        /* index in context.counts */
		VkCommandBuffer secondary;
	} u;
};

struct event_block {
	struct event_block *next;
	uint32_t count;
	struct event events[EVENTS_PER_BLOCK];
};

/* HANDLE_STANDING: a recording kept across frames (standing.c). */
enum handle_kind { HANDLE_OFF, HANDLE_LABELS, HANDLE_CAPTURE, HANDLE_STANDING };

/* A standing recording's slot with this bit lies in a capture set's
 * share of its queue's pool, not in the recording's range. */
#define SLOT_IN_SET 0x80000000u
/* The same for a statistics query (never COUNTER_UNKNOWN, which has
 * every bit). */
#define STATS_IN_SET 0x80000000u

/* What a standing recording keeps on the heap: its events with slots in
 * its device's standing pool, names and counts indexing its own arrays.
 * One executed once (`once`) whose range runs out during a capture frame
 * goes on in that frame's set's share of its queue's pool (standing.c). */
struct standing {
	uint32_t device;
	uint32_t first_range, range_count;
	uint32_t slot_first, slot_end, slot_next;
	uint32_t wanted;              /* slots its events asked for */
	/* Its statistics queries: ranges of its queue's standing_stats
	 * (none when stats_range_count is 0), the first, next and end. */
	uint32_t stats_first_range, stats_range_count;
	uint32_t stats_first, stats_next, stats_end;
	bool once;                    /* begun with ONE_TIME_SUBMIT */
	struct capture_set *set;      /* whose share its SLOT_IN_SET slots are in */
	uint64_t set_frame;           /* ... taken in this frame of it */
	struct event *events;
	uint32_t event_count, event_cap;
	char *names;
	uint32_t name_len, name_cap;
	struct counts_record *counts;
	uint32_t count_len, count_cap;
	uint32_t unrecorded;          /* scopes and events with no room to be kept */
};

struct crumbs_cmd {
	struct crumbs_cmd_state_ state; /* first: the inline functions read it */
	crumbs_context *ctx;
	enum handle_kind kind;
	VkCommandBuffer cb;
	uint32_t queue;
	uint32_t depth;                 /* recorded scopes open on this cb */
	struct event_block *first;
	struct event_block *last;
	bool adopted;                   /* copied from a standing recording */
	bool borrowed;                  /* copied from the frame before's (store_borrow) */
	bool untimed;                   /* inside a multiview pass: no timestamps */
	/* Pipeline statistics: counted on this handle; a query is open
	 * (its index `stretch`); none may be (a pass of secondaries). */
	bool counting;
	bool stretch_open;
	bool no_stretch;
	uint32_t stretch;
	uint32_t leaf_stretch;          /* the leaf's query being recorded */
	uint32_t map_slot;              /* 1 + its entry in the capture's map, or 0 */
	struct capture_set *set;        /* HANDLE_CAPTURE's */
	struct standing *standing;      /* HANDLE_STANDING's own storage */
	/* Last, and not cleared (HANDLE_CLEARED): each is written at a
	 * scope's begin before its end reads it, so a handle touches the
	 * cache lines of the depths it reaches, not all of them. */
	uint32_t end_slots[END_STACK];  /* reserved for the open scopes */
};

/* The bytes of a handle a new one clears: all but end_slots. */
#define HANDLE_CLEARED offsetof(struct crumbs_cmd, end_slots)

/* Semaphores seen in a capture: their id in the file and, for binary
 * ones, how many times they were signalled. */
struct semaphore_entry {
	VkSemaphore semaphore;
	uint32_t id;
	uint64_t signals;
};

struct host_signal {
	uint32_t semaphore;
	uint64_t value;
	int64_t cpu_ns;
};

/* ------------------------------------------------------------------------ */
/* The context                                                              */
/* ------------------------------------------------------------------------ */

/*
 * A capture set: one captured frame, from its recording until its file
 * records are written: its handles, events, names and counts (in memory
 * set aside when the set is first used, so that many threads can record at
 * once without allocating or locking per scope), its submissions and
 * semaphores, and each queue's share of the query slots. A one-frame
 * capture uses one set with all the slots; a run uses CAPTURE_SETS in
 * turn, frame f the set f % CAPTURE_SETS, each with an equal share.
 */
enum set_phase {
	SET_FREE,
	SET_RECORDING,  /* its frame runs */
	SET_RESOLVING,  /* waiting for its timestamps */
	SET_WRITING     /* handed to the output thread */
};

/* A queue's part of a set. */
struct set_queue {
	/* Its share of the pipeline statistics queries (counters.c). */
	uint32_t stats_first, stats_end;
	_Atomic uint32_t stats_next;
	uint32_t scope_first, scope_end; /* its scope slots */
	_Atomic uint32_t scope_next;
	uint32_t submit_first;      /* its submissions: q->submits + this */
	uint32_t submit_cap;
	uint32_t submit_count;
	uint32_t ready_slot;        /* the pre-roll's last end, or NO_SLOT */
	VkCommandBuffer reset_cb;   /* without host reset: its slots' resets */
	VkCommandBuffer scope_reset_cb;
	bool reset_pending;
	_Atomic bool scope_reset_pending;
	bool copy_pending;          /* copy_cb submitted, fence not seen yet */
	/* Its fence seen signalled; reset since, by the output thread
	 * (readback_recycle), so the next copy need not. */
	bool fence_signalled;
	bool fence_clean;
	bool copy_stale;            /* ... and it copies an earlier frame's */
	bool copy_unread;           /* copies of this frame go into copy_buffer */
	bool read_pool;             /* this frame reads the pool instead */
	bool marked;                /* readback_start: slots marked for a copy */
	/* With host query reset: its copies left slots of its runs to the
	 * host to reset (enum slot_mark). */
	bool host_reset;
	/* The end slots that handles reserved for scopes they left open at
	 * their end, which they never write: a handle that ends such a scope
	 * takes one. NO_SLOT where there is none. */
	_Atomic uint32_t spare[SPARE_SLOTS];
	/* Queue labels since the last submission: they happen at the start
	 * of the next one (submit.c). */
	struct crumbs_cmd *labels;
};

/* A CPU scope's begin or end in a captured frame (cpu.c), of the set's
 * thread `thread`, its name in the set's names; or a task's record, which
 * keeps its ids and strings where a scope keeps its name (cpu.c,
 * "Tasks"). CPU_RECORD_EARLIER: a task open when the frame began,
 * as a TASK_BEGIN's; CPU_RECORD_IGNORED: a record the frame thread found
 * to be of no task it knows. */
enum {
	CPU_RECORD_BEGIN,
	CPU_RECORD_END,
	CPU_RECORD_WAIT_BEGIN,
	CPU_RECORD_TASK_BEGIN,
	CPU_RECORD_TASK_STATE,
	CPU_RECORD_TASK_END,
	CPU_RECORD_TASK_DEPEND,
	CPU_RECORD_TIMELINE_FRAME,
	CPU_RECORD_EARLIER,
	CPU_RECORD_IGNORED
};
#define CPU_RECORD_NAME_MAX 511 /* a CPU scope name's bytes kept */
struct cpu_record {
	int64_t ns;
	uint32_t name_off, name_len;
	uint32_t thread;
	uint8_t type, level;
};
struct cpu_set_thread {
	uint32_t tid;
	char name[64];
};
/* A task record's place in the frame's tasks, merged from every thread's
 * by time. */
struct cpu_task_key {
	int64_t ns;
	uint32_t record;  /* in records */
	uint32_t rank;    /* at one time: earlier begins, begins, ..., ends */
};
/* What a frame's CPU threads recorded, taken by the frame thread. */
struct cpu_frame {
	struct cpu_set_thread *threads;
	uint32_t thread_count, thread_cap;
	struct cpu_record *records;     /* each thread's in its order */
	uint32_t record_count, record_cap;
	char *names;
	uint32_t name_len, name_cap;
	struct cpu_task_key *tasks;     /* its task records in time order */
	uint32_t task_count, task_cap;
	struct cpu_task_key *merge;     /* room for sorting tasks */
	uint32_t merge_cap;
	uint32_t frame_tid;             /* the thread that ended it; 0: none */
};

struct capture_set {
	uint32_t index;                 /* in ctx->sets */
	_Atomic int phase;              /* enum set_phase */
	uint64_t frame;
	int64_t begin_ns, end_ns;
	int detail;
	bool first;                     /* the first of its run: has the pre-roll's ends */
	bool used;                      /* it recorded a frame of this run */
	bool device_lost;
	bool holds;                     /* it holds ranges of standing pools */
	/* The set of the frame before, when this frame submitted command
	 * buffers recorded in it: their slots are in that set's share. */
	struct capture_set *borrows;
	uint32_t flags;                 /* the frame's, when it is resolved */
	/* Its store was reset by the output thread once it was written
	 * (the frame after it copied what it borrowed when it submitted),
	 * as the program's thread would when the set comes back. */
	bool recycled;
	/* Resolved once its copies were read, without looking for each
	 * timestamp: the output thread flags the frame incomplete when one
	 * it writes never came. */
	bool unchecked;
	_Atomic unsigned warm;          /* the path_parts path_warm() asked for */
	struct calibration_sample (*calibration)[2]; /* [device]: start, end */
	struct set_queue *queues;       /* [queue_count] */

	struct crumbs_cmd *handles;     /* [max_command_buffers] */
	_Atomic uint32_t handle_next;
	struct event_block *blocks;
	uint32_t block_count;
	_Atomic uint32_t block_next;
	char *names;
	uint32_t name_bytes;
	_Atomic uint32_t name_next;
	struct counts_record *counts;
	uint32_t counts_cap;
	_Atomic uint32_t counts_next;
	/* Scopes and events not recorded, and submissions not timed, for
	 * want of room; those written without their timestamps are counted
	 * as they are written (EVENT_LOST). */
	_Atomic uint32_t dropped;
	bool counters;                  /* its frame counts pipeline statistics */

	/* Command buffer -> the handle that recorded it, in this frame: a
	 * key beside its value, one cache line for both. */
	pthread_mutex_t map_lock;
	bool map_lock_ready;            /* initialised (store_init) */
	struct map_entry {
		VkCommandBuffer cb;     /* VK_NULL_HANDLE: empty */
		struct crumbs_cmd *cmd;
	} *map;
	uint32_t map_cap;

	/* Submissions' references, semaphores and host signals. */
	struct crumbs_cmd **submit_cmds;
	uint32_t submit_cmd_count;
	uint32_t submit_cmd_cap;
	struct crumbs_semaphore_op *ops; /* as the writer takes them */
	uint32_t op_count;
	uint32_t op_cap;
	struct semaphore_entry *semaphores;
	uint32_t semaphore_count;
	uint32_t semaphore_cap;
	struct host_signal *host_signals;
	uint32_t host_signal_count;
	uint32_t host_signal_cap;

	/* The CPU threads' scopes and tasks of its frame. */
	struct cpu_frame cpu;
};

enum capture_state {
	STATE_IDLE,
	STATE_PREROLL,   /* the rest of the frame before the first captured one */
	STATE_RUNNING,   /* frames are captured (a one-frame capture is a run of one) */
	STATE_DRAINING,  /* none is any more; the last are resolved and written */
	STATE_CLOSING    /* all are: the output thread closes the file */
};

struct crumbs_context {
	struct crumbs_context_state_ state_; /* first: the inline functions read it */
	VkAllocationCallbacks allocator;
	PFN_vkSetDeviceLoaderData set_loader_data; /* this is the layer's */
	bool under_layer;               /* the layer records this program */
	bool has_allocator;
	void (*log)(void *user, enum crumbs_log_level level, const char *message);
	void *log_user;
	char *capture_dir;
	char *program_name;
	int mirror_labels;
	uint32_t max_scopes;
	uint32_t max_submissions;
	uint32_t max_command_buffers;
	uint32_t name_bytes;
	int counters;                   /* crumbs_desc.counters, as the environment left it */
	bool run_counters;              /* the run asked for was asked with --counters */
	char *perf_list;                /* vendor counters asked for (perfquery.c); NULL: none */
	uint32_t perf_sets;             /* the counter sets numbered so far */
	struct instance_fns ifn;

	struct device_state *devices;
	uint32_t device_count;
	struct queue_state *queues;
	uint32_t queue_count;

	/* Frames. */
	uint64_t frame;                 /* the current frame's number */
	int64_t frame_begin_ns;
	_Atomic int state;              /* enum capture_state */
	uint64_t capture_at;            /* a run asked for ahead: its first frame, or UINT64_MAX */
	uint64_t ask_last;              /* ... its last, */
	int ask_detail;                 /* ... its detail */
	uint32_t ask_sets;              /* ... and its sets */
	bool submitted;                 /* a submission was made this frame */
	bool device_lost;
	/* Counts the times resets were put in front of the next submissions
	 * (without host resets, pools.c): a queue's submissions look for
	 * them only when it changed. */
	_Atomic uint32_t resets_posted;
	char *last_capture;

	/* The run asked for or under way: frames first to last (UINT64_MAX:
	 * until stopped) at `detail`, in set_count sets. A one-frame capture
	 * is the run of one frame at CRUMBS_DETAIL_MAX in one set. */
	uint64_t run_first, run_last;
	int run_detail;
	uint32_t set_count;
	bool run_stop;                  /* crumbs_record_stop: no frame after this */
	uint32_t run_skipped;           /* frames not captured: their set was busy */
	uint64_t run_skip_first, run_skip_last; /* ... the first and last of them */
	uint64_t run_lag;               /* the most frames the GPU was behind then */
	struct capture_set sets[CAPTURE_SETS];
	struct capture_set *_Atomic cur; /* the set recording this frame, or NULL */
	struct capture_set *order[CAPTURE_SETS]; /* sets resolving, oldest first */
	uint32_t order_count;
	/* A run's frames are first looked at this many frames after they
	 * end (frame.c), and counted since it last went down. */
	uint32_t look_age;
	uint32_t looked;

	/* Handles outside captures. */
	struct crumbs_cmd *label_handles; /* a ring */
	_Atomic uint32_t label_next;

	pthread_mutex_t submit_lock;    /* a set's ops, semaphores, submit_cmds across queues */
	bool submit_lock_ready;         /* initialised (submit_init) */
	pthread_mutex_t recent_lock;    /* each device's recent sample, across threads */
	bool recent_lock_ready;         /* initialised (calibrate_init) */

	/* Standing recordings: the layer's lookup of a command buffer's. */
	struct crumbs_cmd *(*standing_of)(void *user, VkCommandBuffer cb);
	void *standing_user;

	/* Writing the file and printing the tables (output.c), on the
	 * output thread. */
	struct output *output;

	/* Video memory per device and heap (memory.c). */
	struct memory_state *memory;

	/* CPU scopes (cpu.c): the threads that recorded some, and the
	 * number each thread finds its buffers for this context by. */
	uint64_t cpu_serial;
	/* Its threads' time line: CLOCK_MONOTONIC against their ticks (cpu.c),
	 * read when it began (base) and when a frame's scopes were last
	 * taken (anchor), on the thread that ends frames. */
	int64_t cpu_base_ns, cpu_anchor_ns;
	uint64_t cpu_base_ticks, cpu_anchor_ticks;
	double cpu_ns_per_tick;
	_Atomic uint32_t cpu_epoch;     /* captures begun: a thread's counts are of one */
	pthread_mutex_t cpu_lock;       /* the list, and each thread's name */
	bool cpu_lock_ready;
	struct cpu_thread *cpu_threads;
	_Atomic uint32_t cpu_thread_serial; /* the last thread's: its tasks' ids */
	/* Tasks (cpu.c), the frame thread's: those open, as the records
	 * taken so far say, and the records of frames that are not
	 * recorded, taken only to follow them. Records before task_since_ns
	 * are older than the request that turned tasks on. */
	struct task_table *tasks;
	struct cpu_frame drain;
	int64_t task_since_ns;
	/* The process the context was made in: a child forked from it
	 * records nothing (cpu.c). */
	uint32_t fork_generation;
	bool forked;

	/* Presents and when they were shown (present.c); NULL: not recorded. */
	struct present_state *present;

	/* `crumbs trigger`. */
	struct trigger trigger;
	struct trigger_peer peer;
	bool has_peer;
	int64_t trigger_polled_ns;      /* when it was last looked at */
};

/* The set that records frame f of the run (or one-frame capture) under
 * way. */
static inline struct capture_set *set_of(crumbs_context *ctx, uint64_t f)
{
	return &ctx->sets[ctx->set_count == 1 ? 0 : f % ctx->set_count];
}

/*
 * The recorder's files, each one concept, listed from the bottom of the
 * call graph up: a file calls only the files listed before it (checked
 * by tests/cli/layout.sh).
 */

/* common.c: what every file of the recorder uses */
/* Memory through the program's allocation callbacks, if it gave any:
 * ctx_alloc's is cleared; ctx_realloc keeps p when it fails. */
void *ctx_alloc(crumbs_context *ctx, size_t size);
void *ctx_realloc(crumbs_context *ctx, void *p, size_t size);
void ctx_free(crumbs_context *ctx, void *p);
char *ctx_strdup(crumbs_context *ctx, const char *s);
/* Room for `need` items of `size` bytes in *items, which has room for
 * *cap, grown as util's arrays grow (from `first`) but through ctx's
 * allocator. false, with both as they were, when out of memory. */
bool ctx_grow(crumbs_context *ctx, void **items, uint32_t *cap, uint32_t need, size_t size,
	      uint32_t first);
/* The callbacks to hand Vulkan: the program's, or NULL. */
const VkAllocationCallbacks *ctx_vk_allocator(const crumbs_context *ctx);
__attribute__((format(printf, 3, 4), cold))
void ctx_log(crumbs_context *ctx, enum crumbs_log_level level, const char *fmt, ...);
/* A message of any length, unformatted, to the log callback or stderr. */
__attribute__((cold)) void ctx_log_text(crumbs_context *ctx, enum crumbs_log_level level, const char *text);
/* The first of crumbs' calls in set's frame that runs a part of the frame
 * path asks for that part's code at once, into the core's second-level
 * cache, instead of one line at a time as it runs. */
void path_warm(struct capture_set *set, enum path_part part);
/* "VK_ERROR_DEVICE_LOST" and the like, for messages. */
__attribute__((cold)) const char *vk_result_str(VkResult r);
/* Command buffers crumbs allocated, made dispatchable under a layer. */
void ctx_new_cbs(crumbs_context *ctx, const struct device_state *d, VkCommandBuffer *cbs,
		 uint32_t count);
/* The queue that is `queue`, or NULL. */
struct queue_state *queue_find(crumbs_context *ctx, VkQueue queue);
/* Whether a and b are queues of the same family of the same device. */
bool queue_same_family(const struct queue_state *a, const struct queue_state *b);

/* cpu.c: scopes on CPU threads (crumbs_cpu_*, crumbs_thread_name) */
/* At the context's creation: nothing recorded yet. */
void cpu_init(crumbs_context *ctx);
/* A capture or run begins: what threads hold from before is dropped. */
void cpu_start(crumbs_context *ctx);
/* Takes into set each thread's scopes and tasks of set's frame, which
 * ended at set->end_ns, with the tasks open when it began; on the thread
 * that ends frames. */
void cpu_collect(crumbs_context *ctx, struct capture_set *set);
/* f's task keys in time order: by time, then rank, then record (cpu.c). */
void cpu_keys_sort(crumbs_context *ctx, struct cpu_frame *f);
/* Tasks are recorded from now on (a capture or run is asked for), with
 * none open; or no longer. */
void cpu_tasks_on(crumbs_context *ctx);
void cpu_tasks_off(crumbs_context *ctx);
/* A frame that is not recorded ends at `now` while tasks are: the tasks
 * its threads began, changed and ended are followed, the rest dropped. */
void cpu_drain(crumbs_context *ctx, int64_t now);
/* Whether ctx was made in a process this one was forked from: it then
 * records nothing, and its frames do nothing. */
bool cpu_forked(crumbs_context *ctx);
/* Forks this process came from (a context records its own at creation). */
uint32_t cpu_fork_generation(void);
/* A task record's ids and strings (NUL-terminated, in `buf`, which has
 * room for CPU_TASK_STRINGS bytes); false for a record of another kind. */
#define CPU_TASK_STRINGS (3 * (CPU_RECORD_NAME_MAX + 1))
struct cpu_task_view {
	uint64_t task, blocking;
	const char *timeline, *state, *name; /* NULL: not in the record */
	uint16_t timeline_len, state_len, name_len;
};
bool cpu_task_read(const struct cpu_frame *f, const struct cpu_record *r,
		   struct cpu_task_view *v, char *buf);
/* At the context's destruction. */
void cpu_release(crumbs_context *ctx);

/* present.c: presents and when they were shown (crumbs_present,
 * crumbs_present_shown), kept for the frame recorded */
/* At creation (without memory, presents are not recorded); at
 * destruction. */
void present_init(crumbs_context *ctx);
void present_release(crumbs_context *ctx);
/* On the thread that ends frames, as set's frame ends: the presents and
 * shown times given since the last frame ended are set's. */
void present_collect(crumbs_context *ctx, struct capture_set *set);
/* Writes set's presents and shown times into its frame. */
enum crumbs_result present_write(crumbs_context *ctx, const struct capture_set *set,
				 crumbs_writer *w);

/* functions.c: the Vulkan functions of RECORDER_*_FUNCTIONS */
/* The instance's, through the program's vkGetInstanceProcAddr: those
 * ctx->ifn lacks. With no gipa (the layer's, which come loaded), only
 * checks that the required ones are there. */
enum crumbs_result functions_load_instance(crumbs_context *ctx, PFN_vkGetInstanceProcAddr gipa,
					   VkInstance instance);
/* d's, for the features it has (d->features, which it may narrow). */
enum crumbs_result functions_load_device(crumbs_context *ctx, struct device_state *d);

/* calibrate.c: the GPU clocks against the CPU's */
/* Whether d can calibrate its clock against CLOCK_MONOTONIC. */
bool calibrate_supported(crumbs_context *ctx, struct device_state *d);
/* The bracketed sample of each device without calibrated timestamps,
 * on its first timed queue: once, at creation (pools set up). */
void calibrate_bracketed(crumbs_context *ctx);
/* Calibration samples of every device with calibrated timestamps, at the
 * start or the end of set's frame, taken at `now`. A run's frames carry
 * a sample younger than RUN_CALIBRATE_NS instead of taking one. */
void calibrate(crumbs_context *ctx, struct capture_set *set, bool at_start, int64_t now);
/* A run starts: the samples of an earlier one are not carried into it. */
void calibrate_forget(crumbs_context *ctx);
/* On the output thread during a run: the recent samples kept young. */
void calibrate_refresh(crumbs_context *ctx);
enum crumbs_result calibrate_init(crumbs_context *ctx);
void calibrate_release(crumbs_context *ctx);

/* memory.c: video memory per device and heap, counted as the program
 * allocates and frees it, and each recorded frame's figures */
/* At creation, once the devices are set up (false: out of memory); at
 * destruction. */
bool memory_init(crumbs_context *ctx);
void memory_release(crumbs_context *ctx);
/* set's frame begins, or ends at `now`: its figures are taken from the
 * counts (and the driver's budget, where enabled). */
void memory_frame_begin(crumbs_context *ctx, struct capture_set *set);
void memory_frame_end(crumbs_context *ctx, struct capture_set *set);
/* Writes set's frame's MEMORY records (on the output thread). */
enum crumbs_result memory_write(crumbs_context *ctx, const struct capture_set *set,
				crumbs_writer *w);

/* perfquery.c: vendor counters (VK_KHR_performance_query), in a pool per
 * group of one pass, over the pipeline statistics' stretches: query i of
 * the group a frame takes runs where statistics query i does */
struct perf_queue;
/* At creation: the list asked for (CRUMBS_PERF_COUNTERS wins over
 * `list`); with one, runs count pipeline statistics too. */
enum crumbs_result perfquery_init(crumbs_context *ctx, const char *list);
void perfquery_release(crumbs_context *ctx);
/* Once a queue's statistics pool is made: what its family offers, the
 * counters taken and their groups, the device's profiling lock and the
 * pools (each refusal and failure logged; captures go on without). */
enum crumbs_result perfquery_setup_queue(crumbs_context *ctx, struct queue_state *q);
void perfquery_release_queue(crumbs_context *ctx, struct queue_state *q);
/* Resets, as counters_preroll and counters_set_reuse do theirs. */
void perfquery_preroll(crumbs_context *ctx, uint32_t set_count);
void perfquery_set_reuse(crumbs_context *ctx, uint32_t queue, uint32_t first, uint32_t n);
/* Begins and ends query i of the group cmd's frame takes, beside
 * statistics query i. */
void perfquery_begin(struct crumbs_cmd *cmd, uint32_t i);
void perfquery_end(struct crumbs_cmd *cmd, uint32_t i);
/* Reads what is available of set's queries without waiting; whether all
 * are. */
bool perfquery_poll(crumbs_context *ctx, struct capture_set *set);
/* Whether query i of q was read (or failed to be, or q counts none). */
bool perfquery_ready(const struct queue_state *q, uint32_t i);
/* Queries [first, first + n) of q are begun nowhere (a standing
 * recording's stretches counted none): their values are unknown. */
void perfquery_forgo(struct queue_state *q, uint32_t first, uint32_t n);
/* The counter sets and what each family offers, in the setup; a
 * stretch's values (or that they are unknown), after the statistics'. */
enum crumbs_result perfquery_write_setup(const crumbs_context *ctx, crumbs_writer *w);
enum crumbs_result perfquery_write(const crumbs_context *ctx, crumbs_writer *w,
				   const struct capture_set *set, const struct queue_state *q,
				   uint32_t i, int leaf);

/* counters.c: pipeline statistics queries: each queue's pool, the sets'
 * shares of it, their resets on the host and their reading */
/* At creation and destruction, for each queue: its pool, where the device
 * counts and crumbs_desc.counters allows (a failure to create one is
 * logged, and captures go on without). */
enum crumbs_result counters_setup_queue(crumbs_context *ctx, struct queue_state *q);
/* Whether the device counts: it has pipeline statistics, and host query
 * reset to reset them with. */
bool counters_device(const struct device_state *d);
/* Whether a run counts: the program or the environment said so, or the
 * run was asked for with --counters and the program did not say never. */
bool counters_in_run(const crumbs_context *ctx);
void counters_release_queue(crumbs_context *ctx, struct queue_state *q);
/* A capture of set_count sets begins: each set's share, reset, and
 * whether its frames count. */
void counters_preroll(crumbs_context *ctx, uint32_t set_count);
/* A set is used again: the queries it took, reset on the host. */
void counters_set_reuse(crumbs_context *ctx, struct capture_set *set);
/* A query of the set's queue, or COUNTER_UNKNOWN when they ran out. */
uint32_t counters_take(struct set_queue *sq);
/* Reads what is available of set's queries, on the program's thread,
 * without waiting. Returns whether all of them are. */
bool counters_poll(crumbs_context *ctx, struct capture_set *set);
/* n queries of the set's queue in a row, or COUNTER_UNKNOWN. */
uint32_t counters_take_n(struct set_queue *sq, uint32_t n);
/* Once q's copies of set are done (`copied`) or will not be read: the
 * standing recordings' statistics copied into q's stats_copy. */
void counters_adopted_read(crumbs_context *ctx, struct capture_set *set, struct queue_state *q,
			   bool copied);
/* Whether query i of q has come, or never will. */
bool counters_settled(const struct queue_state *q, uint32_t i);
/* Query i of q as read: values[] by enum crumbs_pipeline_counter, *mask
 * those it counts. false when it never became available (or i is
 * COUNTER_UNKNOWN): its stretch is unknown. */
bool counters_values(const struct queue_state *q, uint32_t i,
		     uint64_t values[CRUMBS_PIPELINE_COUNTERS], uint32_t *mask);

/* pools.c: each queue's query pool, its layout in slots, the command
 * buffers crumbs recorded once for it, its resets and the copy of its
 * results */
/* Sets up q (named by its device, family and index) with its pool and
 * command buffers. */
enum crumbs_result pools_setup_queue(crumbs_context *ctx, struct queue_state *q);
/* Everything pools_setup_queue made, whatever it reached. */
void pools_release_queue(crumbs_context *ctx, struct queue_state *q);
bool pools_host_buffer(crumbs_context *ctx, const struct device_state *d, VkDeviceSize size,
		       struct host_buffer *out);
void pools_host_buffer_release(crumbs_context *ctx, const struct device_state *d,
			       struct host_buffer *b);
/* The pre-roll of a run in `set_count` sets (1: a one-frame capture):
 * the slots the sets wrote are reset (on the host, or in front of the
 * next submissions), the sets take their shares of the slots, and the
 * pre-roll's ends start again. */
void pools_preroll(crumbs_context *ctx, uint32_t set_count);
/* A set taken again in a run: the slots it wrote are reset (with host
 * query reset, but for those its copies reset), its counts start again.
 * Its copies, and those of the frame that borrowed from it, are done
 * (readback_copy_busy). */
void pools_set_reuse(crumbs_context *ctx, struct capture_set *set);
/* The runs of q's pool that set can have written: its scope slots handed
 * out, two per submission, and the pre-roll's last end. Clearing,
 * copying, reading and resetting only these keeps the end of a frame from
 * touching every slot of the pool (tens of thousands). Returns how many of
 * runs[3] it filled. */
struct slot_run {
	uint32_t first, count;
};
uint32_t pools_set_runs(const struct queue_state *q, const struct set_queue *sq,
			struct slot_run runs[3]);
/*
 * What the end of a frame marks of each slot in a pool's `written`
 * (readback.c). A slot is SLOT_WRITTEN for the copy of the queue that
 * wrote it, which is being recorded, and SLOT_COPIED once that copy is
 * submitted (a standing recording's slots are SLOT_COPIED already: the
 * batch that ran it copied them, and the pool's own slot stays unwritten).
 * Poll reads the SLOT_COPIED ones. The slots of command buffers that the
 * frame before recorded (store_borrow) lie in that frame's set's share:
 * SLOT_LENT, then SLOT_LENT_COPIED, read by this frame's copy and poll
 * alone. With host query reset, the copy resets what it copied, after it:
 * a copied slot, once its copy is done, needs no reset on the host.
 */
enum slot_mark { SLOT_WRITTEN = 1, SLOT_COPIED = 2, SLOT_LENT = 3, SLOT_LENT_COPIED = 4 };
/* Whether slots of the set's runs in q's pool, marked as the end of its
 * frame left them, were not reset by the copy that copied them: its reuse
 * resets those on the host. */
bool pools_left_to_host(const struct queue_state *q, const struct set_queue *sq);
/* `count` scope slots of a set's queue for a scope `depth` deep, or NO_SLOT. */
uint32_t pools_take_slots(struct set_queue *sq, uint32_t depth, uint32_t count);
/* A reserved end slot that its handle will not write, kept for a handle
 * that ends the scope (or none, when the set's queue keeps enough). */
void pools_spare_put(struct set_queue *sq, uint32_t slot);
/* A spare end slot of the set's queue, or NO_SLOT. */
uint32_t pools_spare_take(struct set_queue *sq);
/* Appends to plan the copies pools_copy_marked would record. false when
 * out of memory. */
bool pools_plan_copies(crumbs_context *ctx, struct copy_plan *plan, VkQueryPool pool,
		       uint32_t first_query, const uint8_t *marks, uint8_t mark, uint32_t count,
		       VkBuffer buffer, uint32_t first_slot);
/* Records the plan's copies into cb. */
void pools_record_plan(const struct device_state *d, VkCommandBuffer cb,
		       const struct copy_plan *plan);
/* Records into cb the reset of the queries the plan copies. */
void pools_record_plan_resets(const struct device_state *d, VkCommandBuffer cb,
			      const struct copy_plan *plan);
/* Records into cb the copy of queries first_query + i of pool, for each
 * run of i < count where marks[i] == mark, into buffer's slots
 * first_slot + i, waiting for each to be available. */
void pools_copy_marked(const struct device_state *d, VkCommandBuffer cb, VkQueryPool pool,
		       uint32_t first_query, const uint8_t *marks, uint8_t mark, uint32_t count,
		       VkBuffer buffer, uint32_t first_slot);
/* Without host query reset: how many reset command buffers (of every
 * set) are due in front of q's next submission; taking them into out[]
 * (returns how many); giving back those taken for a submission that was
 * not made (they lie at the front of q's scratch command buffers). */
uint32_t pools_resets_due(crumbs_context *ctx, struct queue_state *q);
uint32_t pools_resets_take(crumbs_context *ctx, struct queue_state *q, VkCommandBuffer *out);
void pools_resets_return(crumbs_context *ctx, struct queue_state *q);
/* A submission with the resets taken was made. */
void pools_resets_done(crumbs_context *ctx, struct queue_state *q);

/* store.c: a capture set's handles, events, names and counts, in memory
 * set aside when the set is first used, and the map from command buffer
 * to handle; the label handles */
/* The label handles and set 0; release: every set's and the labels'. */
enum crumbs_result store_init(crumbs_context *ctx);
void store_release(crumbs_context *ctx);
/* A set's memory (set->handles stays NULL when it fails). */
enum crumbs_result store_set_init(crumbs_context *ctx, struct capture_set *set);
/* Forgets the events, names and handles of the set's last frame. */
void store_reset(struct capture_set *set);
/* A capture handle of queue q with no command buffer or events yet, or
 * NULL (counted as dropped) when the set has no more. */
struct crumbs_cmd *store_handle(crumbs_context *ctx, struct capture_set *set,
				struct queue_state *q);
/* A label handle of queue q, from a ring (crumbs_desc.mirror_labels). */
struct crumbs_cmd *store_label_handle(crumbs_context *ctx, struct queue_state *q);
/* An event at the end of a capture handle's, or NULL when they are full. */
struct event *store_event(struct crumbs_cmd *cmd);
/* A copy of the name (cut at 4096 bytes) in the set's names; an empty
 * reference when they are full. */
void store_name(struct capture_set *set, struct name_ref *ref, const char *name, size_t len);
/* A counts record of the set, or UINT32_MAX when they are full. */
uint32_t store_counts(struct capture_set *set, const struct counts_record *c);
/* Asks for the lines that q's command buffer cb, just begun, will most
 * likely write in the set. */
void store_warm(crumbs_context *ctx, struct capture_set *set, const struct queue_state *q,
		VkCommandBuffer cb);
/* The handle that recorded cb in the set's frame (its latest recording),
 * or NULL; cmd's recording, from when it ends. */
struct crumbs_cmd *store_map_find(struct capture_set *set, VkCommandBuffer cb);
void store_map_put(struct capture_set *set, struct crumbs_cmd *cmd);
/* c becomes a copy of event e in set, its name and counts (which lie in
 * `names` and `counts`: another set's, or a standing recording's) copied
 * into the set's; a counts record the set has no room for leaves it
 * EVENT_NONE, counted as dropped. Its slot is e's. */
void store_copy_event(struct capture_set *set, struct event *c, const struct event *e,
		      const char *names, const struct counts_record *counts);
/* A copy in set of cmd, which `from` (the run's frame before) recorded
 * and set's frame submits, with the secondaries it executes; its slots
 * stay in from's share. NULL when set has no room. */
struct crumbs_cmd *store_borrow(crumbs_context *ctx, struct capture_set *set,
				struct capture_set *from, const struct crumbs_cmd *cmd, int depth);

/* standing.c: recordings kept across frames, with all their storage */
/* Its storage, growing on the heap: an event, or NULL; a name; a counts
 * record, or UINT32_MAX. */
struct event *standing_event(crumbs_context *ctx, struct standing *st);
void standing_name(crumbs_context *ctx, struct standing *st, struct name_ref *ref,
		   const char *name, size_t len);
uint32_t standing_counts(crumbs_context *ctx, struct standing *st, const struct counts_record *c);
/* `count` slots for standing recording h, for a scope `depth` deep: of its
 * range, or, once that is used up, SLOT_IN_SET and slots of the capture
 * frame's set; NO_SLOT when none is left. */
uint32_t standing_slots(crumbs_context *ctx, struct crumbs_cmd *h, uint32_t depth, uint32_t count);
/* A statistics query for h once its range is used up: STATS_IN_SET and
 * one of the capture frame's set, as standing_slots takes slots, or
 * COUNTER_UNKNOWN. */
uint32_t standing_stats_spill(crumbs_context *ctx, struct crumbs_cmd *h);
/* For a capture-frame submission of h's command buffer to q: a capture
 * handle with h's events, whose results `copy` (being recorded) copies
 * into q's copy buffer. NULL when there is no room. */
struct crumbs_cmd *standing_adopt(crumbs_context *ctx, struct capture_set *set,
				  struct queue_state *q, struct crumbs_cmd *h, VkCommandBuffer copy);
/* After a set is resolved: the ranges it read may be reused. */
void standing_unhold(crumbs_context *ctx, struct capture_set *set);
/* At destruction: every standing recording and pool. */
void standing_destroy(crumbs_context *ctx);

/* record.c: scopes on command buffers (crumbs_cmd_begin, crumbs_scope_*)
 * and, for the layer, leaf events and render passes at full detail. A
 * leaf is recorded around its command: record_leaf_begin() writes its
 * first timestamp and returns its slot (NO_SLOT: untimed),
 * record_leaf_end() the second and the event. */
/* Whether cmd keeps events now (a capture's or a standing recording's,
 * inside no scope left out). */
bool record_keeps(const struct crumbs_cmd *cmd);

/* submit.c: submissions (crumbs_queue_submit*, crumbs_signal_semaphore),
 * their semaphores and queue labels */
/* The lock and set 0's room; a set's room (set->submit_cmds stays NULL
 * when it fails); release: every set's. */
enum crumbs_result submit_init(crumbs_context *ctx);
enum crumbs_result submit_set_init(crumbs_context *ctx, struct capture_set *set);
void submit_release(crumbs_context *ctx);
/* Forgets the submissions of the set's last frame. */
void submit_reset(crumbs_context *ctx, struct capture_set *set);

/* readback.c: a captured frame's timestamps, copied on the GPU and read
 * without waiting */
/* At the end of set's frame: each queue's copy of the results it wrote,
 * into the buffers of the pools they lie in. */
void readback_start(crumbs_context *ctx, struct capture_set *set);
/* At destruction, when the program is done with the device: waits (a
 * bounded time) for the copies of set's results still under way. */
void readback_wait(crumbs_context *ctx, struct capture_set *set);
/* Reads what is available of set's. Returns whether every timestamp its
 * frame wrote is, or, for a run's frame (set->unchecked), whether every
 * result that can still come has; *lost: the device was lost, and what
 * was read is forgotten. */
bool readback_poll(crumbs_context *ctx, struct capture_set *set, bool *lost);
/* Once set is written, off the program's thread: its copies' fences and
 * its store reset. (Not its slots: lavapipe's vkResetQueryPool races
 * with its own threads when not called on the thread that submits.) */
void readback_recycle(crumbs_context *ctx, struct capture_set *set);
/* Whether a copy of set's results is still under way on the GPU (its
 * slots cannot be reset yet). */
bool readback_copy_busy(crumbs_context *ctx, struct capture_set *set);
/* The ticks read from slot of q, or CRUMBS_NO_TICKS. */
uint64_t readback_ticks(const struct queue_state *q, uint32_t slot);
/* Whether secondaries inside secondaries are followed this deep. */
#define MAX_EXECUTE_DEPTH 4

/* profilegpu.c: the settings of the in-program tables, their help, and
 * the tables of a written capture (the only file that uses report/ and
 * analyze/) */
/* Parses the settings of a capture's tables ("--root *Post*"; NULL: the
 * defaults) into *out, to free with profilegpu_settings_free(). -1 with a
 * message in err when they are bad (*out is NULL then). Any text is
 * safe: it comes from the console and the trigger's socket. */
struct profilegpu_settings;
int profilegpu_settings_parse(const char *settings, struct profilegpu_settings **out, char *err,
			      size_t n);
/* NULL is a no-op. */
void profilegpu_settings_free(struct profilegpu_settings *p);
/* Whether the settings ask for the counters' columns (--counters). */
bool profilegpu_settings_counters(const struct profilegpu_settings *p);
/* The report's settings inside p (what the fuzz target checks). */
struct report_settings;
const struct report_settings *profilegpu_report_settings(const struct profilegpu_settings *p);
/* Logs the console's help: profilegpu and its settings. */
void profilegpu_help(crumbs_context *ctx);
/* Where profilegpu_print's messages go: one call per table block, or per
 * error, without a last line break. */
typedef void profilegpu_log_fn(void *user, enum crumbs_log_level level, const char *text,
			       size_t len);
/* Reads the first frame of the capture at path back and logs its tables
 * with the settings (NULL: the defaults), or why it cannot. */
void profilegpu_print(const struct profilegpu_settings *p, const char *path,
		      profilegpu_log_fn *log, void *user);

/* output.c: the capture file, its tables and the output thread that
 * writes and prints them, off the program's thread */
/* The output thread, at creation (false: out of resources); at
 * destruction, once nothing is being written. */
bool output_init(crumbs_context *ctx);
void output_release(crumbs_context *ctx);
/* Takes the settings of the next capture's tables, as
 * profilegpu_settings_parse() reads them. */
int output_settings(crumbs_context *ctx, const char *settings, char *err, size_t n);
/* Whether the settings output_settings() last took ask for the
 * counters' columns. */
bool output_counters(const crumbs_context *ctx);
/* A run (or a one-frame capture) begins: its file is named from
 * ctx->run_first and ctx->set_count. */
void output_begin(crumbs_context *ctx);
/* Hands a resolved set (frame flags in set->flags) to the output thread,
 * which appends its frame to the file and frees the set; with `now`, or
 * without a thread, before it returns. */
void output_write(crumbs_context *ctx, struct capture_set *set, bool now);
/* Waits until set is written and free. */
void output_wait_set(crumbs_context *ctx, struct capture_set *set);
/* After the run's last set: the file is closed (and a one-frame
 * capture's tables printed), on the output thread or with `now` before it
 * returns. */
void output_end(crumbs_context *ctx, bool now);
/* Whether the run is to stop: its file is gone (its folder removed, the
 * file unlinked), so its frames have nowhere to go. */
bool output_stopped(const crumbs_context *ctx);
/* Whether the run's file is closed (after waiting for it, with `wait`);
 * when it is, the output's messages go to the log, the trigger's peer gets
 * its answer, and crumbs_last_capture() names the file. */
bool output_done(crumbs_context *ctx, bool wait);

/* frame.c: frames and the capture's state machine (crumbs_frame), and
 * capture requests from the API, the console and the trigger */
/* At creation: a capture the environment asks for (CRUMBS_CAPTURE_FRAME). */
void frame_init(crumbs_context *ctx);
/* The environment's requests, read: CRUMBS_CAPTURE_FRAME=N into *frame,
 * CRUMBS_RECORD=A:B[:DETAIL] (B empty: CRUMBS_RECORD_OPEN; DETAIL 1 when
 * left out) into *first, *last and *detail. 0, or -1 with the warning to
 * log in err, the outputs untouched. Any text is safe. */
int env_capture_frame(const char *v, uint64_t *frame, char *err, size_t n);
int env_record(const char *v, uint64_t *first, uint64_t *last, int *detail, char *err,
	       size_t n);
/* At destruction: a capture under way is ended, resolved and written. */
void frame_finish(crumbs_context *ctx);
/* A console command line (crumbs_command(), or a request through the
 * trigger's socket), parsed: `profilegpu [--frames N] [--detail D]
 * [settings]` or `help`. */
struct console_request {
	bool help;
	uint64_t frames;                     /* a run of N frames; 0: one frame */
	int detail;                          /* --detail D, or -1 */
	char settings[TRIGGER_MAX_COMMAND];  /* the rest, for the tables */
};
/* 0, or -1 with a message in err when the line is not a command or a
 * run's option is bad. The settings are not checked here
 * (profilegpu_settings_parse() does). Any text is safe. */
int console_parse(const char *line, struct console_request *req, char *err, size_t n);

/* context.c: crumbs_create and crumbs_destroy, above all the others. */



#endif
