/* SPDX-License-Identifier: MIT */
/*
 * analyze_internal.h: what the files of analyze/ share: the arena, what the
 * chunk reader (reader.c) hands the record decoder (records.c), and a
 * frame's records as decoded from the file before they become a model.
 */
#ifndef CRUMBS_ANALYZE_INTERNAL_H
#define CRUMBS_ANALYZE_INTERNAL_H

#include "analyze.h"
#include "../format/format.h"

/* ------------------------------------------------------------------------ */
/* Arena: many small allocations freed at once                              */
/* ------------------------------------------------------------------------ */

struct arena_block {
	struct arena_block *prev;
	size_t size;
	size_t used;
	_Alignas(16) unsigned char data[];
};

struct arena {
	struct arena_block *head; /* the block being filled */
	struct arena_block *spare; /* kept by arena_reset for reuse */
};

/* arena_alloc_uninit when the block being filled has no room. */
void *arena_alloc_block(struct arena *a, size_t size);

/* Memory aligned to 16 bytes, not zeroed, for memory the caller fills
 * before reading, or NULL when out of memory. Inline: a frame's model
 * takes one per node. */
static inline void *arena_alloc_uninit(struct arena *a, size_t size)
{
	struct arena_block *b = a->head;
	if (size > SIZE_MAX / 2)
		return NULL;
	size = (size + 15) & ~(size_t)15;
	if (!b || b->size - b->used < size)
		return arena_alloc_block(a, size);
	void *p = b->data + b->used;
	b->used += size;
	return p;
}

/* The same, zeroed. */
static inline void *arena_alloc(struct arena *a, size_t size)
{
	void *p = arena_alloc_uninit(a, size);
	if (p)
		__builtin_memset(p, 0, size);
	return p;
}
/* Forgets every allocation but keeps one block to refill. */
void arena_reset(struct arena *a);
void arena_release(struct arena *a);
/* A copy of len bytes, NUL-terminated, or NULL when out of memory. */
const char *arena_copy_string(struct arena *a, const unsigned char *s, size_t len);

/*
 * Memory of megabytes kept a while (a chunk's content, a run's values):
 * mapped at an address aligned to the kernel's transparent huge pages and
 * advised for them, so that it faults in 2 MiB at a time where it would a
 * 4 KiB page at a time (each fault is dear, most of all on a virtual
 * machine, and a chunk's content is thousands of pages); malloc'd when
 * smaller or when that cannot be had. Not zeroed. big_alloc rounds a mapped block's
 * size up to HUGE_PAGE; false when out of memory.
 */
#define HUGE_PAGE (2u << 20)
struct big {
	void *data;
	size_t size;
	bool mapped;
};
bool big_alloc(struct big *b, size_t size);
void big_free(struct big *b);


/* ------------------------------------------------------------------------ */
/* Records, as the chunk reader hands them to the record decoder            */
/* ------------------------------------------------------------------------ */

/* The mask of a counter's `bits` valid bits (all 64 from 64 on). */
static inline uint64_t bits_mask(unsigned bits)
{
	return bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
}

/* What the setup chunks applied so far define; a frame refers to it. */
struct setup {
	struct arena arena;   /* names of devices */
	struct vec gpus;      /* struct capture_gpu */
	struct vec queues;    /* struct capture_queue */
	struct vec samples;   /* struct raw_calibration, the latest of each GPU */
	/* Vendor counters (since 1.5): struct capture_counter_set (their
	 * counters in the arena), each set's index + 1 by its number, and
	 * struct capture_counter offered. */
	struct vec counter_sets;
	uint16_t set_index[CRUMBS_MAX_COUNTER_SETS + 1];
	struct vec offered;
};

/* Forgets every device, queue and sample, to apply setup chunks again. */
void setup_reset(struct setup *s);
void setup_release(struct setup *s);

/* Decoding state of the loaded chunk. The chunk reader fills the first
 * fields when it loads a chunk; the record decoder keeps the rest. */
struct chunk_state {
	const unsigned char *data;
	size_t len;
	size_t pos;
	uint64_t body_offset;  /* where its body starts in the file */
	size_t index;          /* in reader.chunks */
	uint32_t frames_done;
	uint64_t prev_frame;
	uint64_t cpu_cursor;
	unsigned version_minor; /* the file's: which records it may hold */
	uint64_t tick_base[FORMAT_MAX_QUEUES];
	struct vec names;      /* const unsigned char *, by string id */
	struct vec name_lens;  /* uint32_t */
};

/* Cursor over a chunk's content; on a failure the error says where. */
struct cursor {
	const unsigned char *p;
	const unsigned char *end;
	const unsigned char *start;
	const char *fail;  /* what was wrong, or NULL */
	bool ran_out;      /* the content ended inside a record */
};

/* ------------------------------------------------------------------------ */
/* A frame as decoded, before the model is built                            */
/* ------------------------------------------------------------------------ */

enum item_type {
	ITEM_SUBMIT,
	ITEM_SUBMIT_END,
	ITEM_BEGIN, /* a scope or an event that contains others */
	ITEM_END,
	ITEM_LEAF,
	ITEM_COUNTS, /* counts of the innermost open node */
	/* Since 1.5, of the innermost open node too, or with b 1 of the
	 * queue's last leaf: one pipeline statistic (counter a, value t1, no
	 * flags); its statistics unknown; its render area (a by b). */
	ITEM_COUNTER,
	ITEM_COUNTERS_UNKNOWN,
	ITEM_RENDER_AREA
};

#define ITEM_HAS_T1 1u
#define ITEM_HAS_T2 2u

/* One record of a queue's stream, in file order. Ticks are stored raw
 * (masked to the queue's valid bits) and replaced by CPU-clock
 * nanoseconds once the frame's calibration is known. */
struct item {
	uint8_t type;   /* enum item_type */
	uint8_t kind;   /* enum crumbs_event_kind */
	uint8_t level;
	uint8_t flags;  /* ITEM_HAS_T1, ITEM_HAS_T2 */
	uint32_t queue;
	uint32_t a;     /* name string id; for SUBMIT the submission index */
	uint32_t b;     /* for LEAF and COUNTS the index of the counts */
	int64_t t1;     /* begin (or the only) time */
	int64_t t2;     /* a leaf's end */
};

struct raw_submit {
	int64_t cpu_ns;
	int64_t end_ns;  /* filled when the ticks are converted */
	uint32_t first_op; /* waits, then signals, in raw_frame.ops */
	uint32_t wait_count;
	uint32_t signal_count;
	uint32_t unrecorded; /* UNRECORDED's command buffers */
	uint8_t has_end;
};

struct raw_op {
	uint32_t semaphore;
	uint64_t value;
};

struct raw_host_signal {
	uint32_t semaphore;
	uint64_t value;
	int64_t cpu_ns;
};

struct raw_calibration {
	uint32_t gpu;
	uint64_t gpu_ticks;
	int64_t cpu_ns;
	uint64_t deviation_ns;
};

/* A CPU record, in file order. */
enum raw_cpu_type { RAW_CPU_THREAD, RAW_CPU_BEGIN, RAW_CPU_END };
struct raw_cpu {
	uint8_t type;    /* enum raw_cpu_type */
	uint8_t level;   /* of a BEGIN */
	uint8_t wait;    /* a BEGIN's scope waits on the GPU (CPU_WAIT_BEGIN) */
	uint32_t thread; /* the frame's thread, numbered in order of first selection */
	uint32_t a;      /* THREAD: the tid; BEGIN: its name's string id */
	uint32_t b;      /* THREAD: its name's string id */
	int64_t cpu_ns;  /* BEGIN, END */
};

/* A record of tasks or of a frame of another kind (format 1.4), in file
 * order. Ids are the file's, checked only for being nonzero: what a
 * state or end of an unknown task means is the model's to say. */
enum raw_task_type { RAW_TASK_BEGIN, RAW_TASK_STATE, RAW_TASK_END, RAW_TASK_DEPEND, RAW_MARK };
struct raw_task {
	uint8_t type;      /* enum raw_task_type */
	uint8_t earlier;   /* a BEGIN of a task begun before the frame */
	uint8_t timeline_index; /* BEGIN: the frame's task timeline, numbered
				 * in order of first use */
	uint32_t timeline; /* BEGIN, MARK: the timeline's name's string id */
	uint32_t name;     /* BEGIN: the task's name's string id */
	uint32_t state;    /* BEGIN, STATE: the state's string id; DEPEND:
			    * the blocked state's */
	uint64_t task;
	uint64_t blocking; /* DEPEND */
	int64_t cpu_ns;
};

struct raw_ready {
	uint32_t queue;
	uint64_t ticks;
	int64_t ns;
};

/* What a frame's model keeps of a GPU's clock fit. */
struct raw_fit {
	bool calibrated;
	uint32_t samples;
	double slope;
};

/* A decoded frame: its header and its records, spans of the arrays of the
 * raw_frames it was decoded into. Indices inside it (item.a of a SUBMIT,
 * item.b, raw_submit.first_op) count from the frame's own first element. */
struct raw_frame {
	uint64_t number;
	int64_t cpu_begin_ns;
	int64_t cpu_end_ns;
	uint32_t flags;
	uint32_t dropped_scopes;
	struct item *items;
	size_t item_count;
	struct raw_submit *submits;
	size_t submit_count;
	struct raw_op *ops;
	size_t op_count;
	struct raw_host_signal *host_signals;
	size_t host_signal_count;
	struct raw_calibration *calibrations;
	size_t calibration_count;
	struct raw_ready *readies;
	size_t ready_count;
	struct counts *counts;   /* of leaves and COUNTS records */
	size_t counts_count;
	struct raw_cpu *cpu;     /* CPU threads and scopes */
	size_t cpu_count;
	uint32_t cpu_threads;    /* distinct threads the CPU records select */
	struct raw_task *tasks;  /* tasks and timeline frames */
	size_t task_count;
	uint32_t task_timelines; /* distinct timelines of TASK_BEGINs */
	struct frame_memory *memory; /* MEMORY records (format 1.5) */
	size_t memory_count;
	struct frame_present *presents; /* presents and when some were shown */
	size_t present_count;
	struct frame_shown *shown;
	size_t shown_count;
	/* The last FRAME_THREAD's tid, if the frame has one. */
	bool has_frame_thread;
	uint32_t frame_thread_tid;
	/* When `placed`, model_place has run: times are CPU-clock ns, fits
	 * has one per GPU of the setup, and timestamps counts them. */
	bool placed;
	size_t timestamps;
	struct raw_fit *fits;
	/* Names by string id: pointers into the decoded chunk. */
	const unsigned char *const *names;
	const uint32_t *name_lens;
};

/* Where one frame's records start in each array of a raw_frames. */
struct raw_span {
	uint64_t number;
	int64_t cpu_begin_ns;
	int64_t cpu_end_ns;
	uint32_t flags;
	uint32_t dropped_scopes;
	bool placed;     /* as raw_frame's */
	size_t timestamps;
	uint32_t cpu_threads; /* as raw_frame's */
	uint32_t task_timelines;
	bool has_frame_thread;
	uint32_t frame_thread_tid;
	size_t first[13]; /* in the order of raw_frames' arrays below */
};

/* Frames decoded one after another, their records appended to the same
 * arrays: the frames of a chunk decoded ahead, on the prefetch thread. */
struct raw_frames {
	struct vec spans;        /* struct raw_span */
	struct vec items;        /* struct item */
	struct vec submits;      /* struct raw_submit */
	struct vec ops;          /* struct raw_op */
	struct vec host_signals; /* struct raw_host_signal */
	struct vec calibrations; /* struct raw_calibration */
	struct vec readies;      /* struct raw_ready */
	struct vec counts;       /* struct counts */
	struct vec fits;         /* struct raw_fit, of placed frames */
	struct vec cpu;          /* struct raw_cpu */
	struct vec tasks;        /* struct raw_task */
	struct vec memory;       /* struct frame_memory, in file order */
	struct vec presents;     /* struct frame_present (format 1.5) */
	struct vec shown;        /* struct frame_shown (format 1.5) */
};

/* counters.c, for the model: a pipeline statistic, unknown statistics
 * and a render area given to node n; n closing into its parent p (NULL
 * for a root); a leaf's counters, given after it closed, to its still
 * open ancestors too. false when out of memory. */
bool counters_add(struct arena *arena, struct node *n, uint32_t counter, uint64_t v);
/* A vendor counter's item (ITEM_COUNTER's a): counter k of set `set`
 * (1 to 255), or with k COUNTER_ITEM_UNKNOWN that set's counters are
 * unknown. counters_add and counters_add_closed take them too. */
#define COUNTER_ITEM_VENDOR(set, k) (0x100u * (set) + (k))
#define COUNTER_ITEM_UNKNOWN 0xFFu
bool counters_set_unknown(struct arena *arena, struct node *n);
bool counters_set_area(struct arena *arena, struct node *n, uint32_t width, uint32_t height);
bool counters_close(struct arena *arena, struct node *n, struct node *p);
bool counters_add_closed(struct arena *arena, struct node *leaf, uint32_t counter, uint64_t v);
bool counters_unknown_closed(struct arena *arena, struct node *leaf);

/* Forgets every frame, keeping the arrays' memory. */
void raw_frames_clear(struct raw_frames *f);
void raw_frames_release(struct raw_frames *f);
/* Bytes the arrays hold. */
size_t raw_frames_bytes(const struct raw_frames *f);
/* Frame i of f as a raw_frame, valid until f changes; its names are
 * looked up in the chunk's string table (names, name_lens). */
void raw_frames_get(struct raw_frames *f, size_t i, const unsigned char *const *names,
		    const uint32_t *name_lens, struct raw_frame *out);

/*
 * Applies the setup chunk whose content k covers to `setup`, checking every
 * rule of its records; its strings go to cs. Returns false with k->fail set
 * (and k->ran_out when the content ends inside a record), keeping what was
 * applied before the failure.
 */
bool records_apply_setup(struct setup *setup, struct cursor *k, struct chunk_state *cs);

/*
 * Decodes the frame at k->p of a frames chunk, appending it to `frames`,
 * checking every rule of its records; k->p ends after its FRAME_END. Its
 * number, times and ticks follow on from cs. Returns false with k->fail
 * set, as records_apply_setup, and `frames` as it was before the call.
 */
bool records_decode_frame(const struct setup *setup, struct cursor *k,
			  struct chunk_state *cs, struct raw_frames *frames);

/*
 * Builds the frame's CPU threads (f->cpu_threads) from raw->cpu into
 * `arena`: with `skip_scopes`, each thread's root alone. Returns false
 * when out of memory (cpu.c).
 */
/* The frame's memory heaps from its raw records, in order of GPU and heap
 * (memory.c); false when out of memory. */
bool memory_build(const struct raw_frame *raw, struct frame *f, struct arena *arena);
bool cpu_threads_build(const struct raw_frame *raw, struct frame *f, struct arena *arena,
		       bool skip_scopes);

/* Copies the frame's presents and shown times (f->presents, f->shown)
 * from raw into `arena`. Returns false when out of memory (present.c). */
bool present_frame_build(const struct raw_frame *raw, struct frame *f, struct arena *arena);

/* What the model builder needs of the capture. */
struct model_context {
	const struct capture_gpu *gpus;
	uint32_t gpu_count;
	const struct capture_queue *queues;
	uint32_t queue_count;
	/* Calibration samples from setup chunks, per GPU. */
	const struct raw_calibration *setup_samples;
	uint32_t setup_sample_count;
	bool skip_scopes;  /* reader_skip_scopes */
	bool flat_scopes;  /* reader_flat_scopes */
};

/*
 * Maps frame i of `frames` (its last, just decoded) to the CPU clock in
 * place, as model_build would, using `scratch` (reset by the caller), so
 * that the prefetch thread can do it ahead of the model. Returns false,
 * leaving the frame to model_build, when out of memory.
 */
bool model_place(const struct model_context *ctx, struct raw_frames *frames, size_t i,
		 struct arena *scratch);

/*
 * Builds the model of a decoded frame into `arena` (reset by the caller).
 * The raw frame's times are rewritten in place, unless model_place has
 * done it (raw->placed). Returns CRUMBS_OK or CRUMBS_ERROR_OUT_OF_MEMORY.
 */
enum crumbs_result model_build(const struct model_context *ctx,
			       struct raw_frame *raw, struct arena *arena,
			       struct frame **out);

/* The linear map from a GPU's ticks to the CPU clock, fitted to its
 * calibration samples. Exposed for the unit tests. */
struct clock_fit {
	bool calibrated;
	uint32_t samples;
	uint64_t ref_ticks;  /* ticks of the reference sample */
	int64_t ref_cpu_ns;  /* its CPU time */
	double offset_ns;    /* cpu = ref_cpu + offset + slope * ns since ref */
	double slope;
	double period;       /* ns per tick used by the fit */
	unsigned valid_bits; /* widest of the GPU's queues */
};

/* Fits samples (in any order) of one GPU whose counter has `valid_bits`
 * bits and `period` ns per tick; with none, returns an uncalibrated fit. */
void clock_fit_samples(struct clock_fit *fit, const struct raw_calibration *samples,
		       uint32_t count, double period, unsigned valid_bits);

/* Where ticks that lie near `near_ns` (which picks the counter's wrap)
 * are, in ticks since the fit's reference sample, for a queue with that
 * period and valid bits. */
int64_t clock_fit_position(const struct clock_fit *fit, uint64_t ticks, double period,
			   unsigned valid_bits, int64_t near_ns);


#endif
