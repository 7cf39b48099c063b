/* SPDX-License-Identifier: MIT */
/*
 * export.c: frames as traces for other tools, written one frame at a time
 * as they are read: Perfetto's protobuf trace, Chrome's Trace Event Format
 * (JSON) and folded stacks: the GPUs' queues, and the program's CPU
 * threads and task timelines. Across frames it keeps only where each track
 * got to and, for Perfetto, the names it interned, which it drops past a
 * bound; so memory follows one frame and the tracks, not the capture.
 */
#include "report_internal.h"
#include "../format/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* Output is handed to the sink in pieces of about this size. */
#define FLUSH_BYTES (64u * 1024)

/* Perfetto names interned before the sequence's state is cleared. */
#define INTERN_SLOTS 8192u
#define INTERN_MAX 4096u
#define INTERN_TEXT_MAX (1u << 20)

/* The CPU side's tracks: past these, new threads, lanes and timelines are
 * left out rather than grow the exporter without bound. */
#define CPU_TRACKS_MAX 65536u
#define CPU_NAMES_MAX (16u << 20)
#define TASK_LANES_MAX 256u

/* The CPU process's pid, and above it the GPUs': above any Linux pid
 * (pid_max is at most 2^22), so that a trace merged with a system trace
 * meets no real process. The CPU's threads keep their real tids. */
#define CPU_PID (1u << 22)

static uint32_t gpu_pid(uint32_t gpu)
{
	return CPU_PID + 1 + gpu;
}

/* ------------------------------------------------------------------------ */
/* Settings                                                                 */
/* ------------------------------------------------------------------------ */

void export_settings_init(struct export_settings *es)
{
	memset(es, 0, sizeof(*es));
	report_settings_init(&es->report);
	es->last_frame = UINT64_MAX;
	es->max_bytes = EXPORT_DEFAULT_MAX_BYTES;
}

void export_settings_release(struct export_settings *es)
{
	report_settings_release(&es->report);
	free(es->output);
	memset(es, 0, sizeof(*es));
}

#define AT(field) offsetof(struct export_settings, field)

static const char *const format_names[] = { "perfetto", "chrome", "folded", NULL };
static const int format_values[] = { EXPORT_PERFETTO, EXPORT_CHROME, EXPORT_FOLDED };

const struct option_spec export_options[] = {
	{ "format", 0, "FORMAT", "perfetto, chrome or folded (required)",
	  OPT_CHOICE, .offset = AT(format), .names = format_names, .values = format_values },
	{ "output", 'o', "FILE", "write to FILE (default: standard output)",
	  OPT_FILE, .offset = AT(output) },
	{ "frames", 0, "A:B", "only frames numbered A to B, inclusive (A: to the end, :B from the start)",
	  OPT_FRAMES, .offset = AT(first_frame), .last_offset = AT(last_frame), .set_offset = AT(frames_set) },
	{ "no-cpu", 0, NULL, "only the GPUs' tracks (as --gpu and --queue do): no CPU threads or tasks",
	  OPT_FLAG, .offset = AT(no_cpu) },
	{ "per-frame", 0, NULL, "folded: keep each frame's number in the names right below a queue, "
	  "thread or timeline ('Frame 12'); by default it reads '#' ('Frame #'), so that "
	  "tools add up the frames",
	  OPT_FLAG, .offset = AT(per_frame) },
	{ "max-bytes", 0, "N", "stop with an error rather than write more than N bytes (default 4294967296, 4 GiB; 0: no limit)",
	  OPT_U64, .offset = AT(max_bytes), .min = 0, .max = 18446744073709551616.0 },
};
const size_t export_option_count = sizeof(export_options) / sizeof(export_options[0]);

size_t export_report_options(struct option_spec *out)
{
	static const struct option_borrowed shared[] = {
		{ "root", "only the scopes whose name matches (*, ?, [...]) and the scopes below; repeatable" },
		{ "ignore-case", NULL },
		{ "max-depth", "N levels of scopes below the queue (or below a --root match)" },
		{ "leaf", "export leaf events: draws, dispatches, copies, render passes (default)" },
		{ "no-leaf", "leave leaf events out; their time stays with their scope" },
		{ "gpu", NULL },
		{ "queue", NULL },
	};
	return options_borrow(report_options, report_option_count, shared,
			      sizeof(shared) / sizeof(shared[0]), out);
}

/* ------------------------------------------------------------------------ */
/* The exporter                                                             */
/* ------------------------------------------------------------------------ */

/* Each queue has three tracks. */
enum track_kind { TRACK_SCOPES, TRACK_SUBMISSIONS, TRACK_CPU, TRACK_KINDS };

static const char *const track_suffix[TRACK_KINDS] = { "", " submissions", " CPU submits" };

/* A protobuf message being built: level 0 is the output, each nested
 * message one level up until it is closed and its length known. */
#define PB_LEVELS 5

struct intern_slot {
	uint64_t iid;     /* 0: empty */
	uint32_t offset;  /* of the name in intern_text */
	uint32_t len;
};

/* Where a wait was released, and the flow from its signal. */
struct released {
	int64_t ns;
	uint64_t flow;
};

/* A stack of folded scope names of a queue in a frame: its name below
 * the stack `parent` (FOLD_NONE: the queue), and the weight of the
 * scopes it stands for. */
struct fold_stack {
	uint32_t parent;
	uint32_t name_len;
	const char *name;    /* NULL: at name_offset in fold_names */
	uint32_t name_offset;
	int64_t ns;
};

#define FOLD_NONE UINT32_MAX

/* A track of the CPU process. */
enum cpu_track_kind {
	CPU_TRACK_THREAD,  /* a thread's scopes */
	CPU_TRACK_LANE,    /* a lane of a task timeline: tasks that do not overlap */
	CPU_TRACK_MARKS,   /* a timeline's frames of another kind, as instants */
	CPU_TRACK_CLAIM    /* no track: a Chrome tid taken by a thread's track */
};

struct cpu_track {
	uint8_t kind;        /* enum cpu_track_kind */
	uint32_t tid;        /* a thread's */
	uint32_t lane;       /* a lane's, from 0 */
	uint32_t name_offset; /* of its thread's or timeline's name in cpu_names */
	uint32_t name_len;
	uint32_t chrome_tid;
	int64_t cursor;      /* where its slices got to */
	int64_t lane_end;    /* a lane's: where the last task given it ends */
};

#define CPU_NONE UINT32_MAX

/* What a CPU node of the frame has: its task's lane track, a flow that
 * leaves it or one that arrives. Sorted by node, so that a node finds its
 * own as it is written. */
enum { LINK_TRACK, LINK_OUT, LINK_IN };

struct node_link {
	const struct node *node;
	uint32_t kind;
	uint64_t value;      /* a track index or a flow id */
};

struct exporter {
	const struct export_settings *es;
	const struct capture_meta *meta; /* the frame's, for its counter sets */
	struct report_sink sink;
	struct sbuf level[PB_LEVELS]; /* [0] is the output not yet written */
	int depth;
	bool started;
	int64_t origin_ns;      /* Chrome: the time its timestamps count from */
	bool failed;            /* memory ran out or the sink failed */
	bool over_limit;        /* the output would pass es->max_bytes */
	uint64_t written;       /* bytes handed to the sink */
	/* The memory heaps whose counter tracks are described, a bit a heap
	 * by GPU (Perfetto). */
	uint16_t memory_declared[FORMAT_MAX_GPUS];
	uint32_t gpus_declared; /* tracks are written for GPUs and queues */
	uint32_t queues_declared; /* below these */
	uint64_t events;        /* Chrome: events written, for the commas */
	uint64_t next_flow;     /* the first flow id of the next frame */
	/* Per queue, where each of its tracks got to. */
	int64_t (*cursor)[TRACK_KINDS];
	uint32_t cursor_count;
	/* Perfetto's interned names. */
	struct intern_slot *slots;
	uint32_t interned;
	struct sbuf intern_text;
	uint64_t next_iid;
	bool clear_pending;     /* the next packet clears the sequence's state */
	/* Scratch for one frame. */
	uint8_t *selected;      /* per queue */
	size_t selected_cap;
	int64_t *ends;          /* per node of a queue, by order */
	size_t ends_cap;
	uint64_t *flows;        /* ids of one event's flows */
	size_t flows_cap;
	struct released *released; /* one submission's released waits */
	size_t released_cap;
	/* The frame's releases by the submission that signalled them and by
	 * the one that waited: each submission's, from by_*_at[i] to
	 * by_*_at[i + 1] in by_*, so that a frame of many submissions and
	 * waits is not walked whole for each. */
	uint32_t *by_signaller, *by_signaller_at;
	uint32_t *by_waiter, *by_waiter_at;
	size_t by_cap, by_at_cap;
	struct sbuf name;
	/* Folded stacks of the queue being written, in the order they
	 * first appear, found by (parent, name). */
	struct fold_stack *stacks;
	size_t stack_count;
	size_t stack_cap;
	uint32_t *stack_slots;  /* index + 1, 0: empty; a power of two */
	size_t slot_cap;
	const struct node *fold_root; /* the tree being folded */
	struct sbuf fold_names;  /* names with the frame's number made '#' */
	char fold_number[24];    /* the frame's number, as names have it */
	size_t fold_number_len;
	/* The CPU process and its tracks, found by (kind, tid, lane, name). */
	bool cpu_shown;         /* neither --gpu nor --queue */
	/* Presentation (write_presents): each swapchain's last present and
	 * last shown time, for the intervals of its counters. */
	struct export_swapchain {
		uint64_t swapchain;
		bool used;
		int64_t last_cpu_ns;     /* INT64_MIN: none yet */
		int64_t last_shown_ns;
		uint8_t last_source;
	} swapchains[8];
	bool presents_declared;
	bool cpu_declared;
	struct cpu_track *cpu_tracks;
	size_t cpu_track_count, cpu_track_cap;
	uint32_t *cpu_slots;    /* index + 1, 0: empty; a power of two */
	size_t cpu_slot_cap;
	struct sbuf cpu_names;
	uint32_t next_chrome_tid;
	/* Scratch for one frame's CPU side. */
	uint32_t *thread_track; /* per frame.cpu_threads; CPU_NONE: not exported */
	size_t thread_track_cap;
	struct cpu_links links;
	struct node_link *node_links;
	size_t node_link_count, node_link_cap;
	uint64_t *submitter_flow; /* per submission: the flow from its CPU scope; 0: none */
	size_t submitter_flow_cap;
	uint64_t *flows_in;     /* ids of one slice's arriving flows */
	size_t flows_in_cap;
};

exporter *exporter_begin(const struct export_settings *es, const struct report_sink *sink)
{
	exporter *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->es = es;
	x->sink = *sink;
	x->next_flow = 1;
	x->next_iid = 1;
	x->clear_pending = true;
	x->cpu_shown = report_cpu_chosen(&es->report) && !es->no_cpu;
	x->next_chrome_tid = CPU_PID;
	if (es->format == EXPORT_PERFETTO && !(x->slots = calloc(INTERN_SLOTS, sizeof(*x->slots)))) {
		free(x);
		return NULL;
	}
	return x;
}

void exporter_free(exporter *x)
{
	if (!x)
		return;
	for (int i = 0; i < PB_LEVELS; i++)
		sbuf_release(&x->level[i]);
	sbuf_release(&x->intern_text);
	sbuf_release(&x->name);
	sbuf_release(&x->fold_names);
	free(x->cursor);
	free(x->slots);
	free(x->selected);
	free(x->ends);
	free(x->flows);
	free(x->released);
	free(x->by_signaller);
	free(x->by_signaller_at);
	free(x->by_waiter);
	free(x->by_waiter_at);
	free(x->stacks);
	free(x->stack_slots);
	free(x->cpu_tracks);
	free(x->cpu_slots);
	sbuf_release(&x->cpu_names);
	free(x->thread_track);
	cpu_links_release(&x->links);
	free(x->node_links);
	free(x->submitter_flow);
	free(x->flows_in);
	free(x);
}

static struct sbuf *out_of(exporter *x)
{
	return &x->level[x->depth];
}

/* Hands the output to the sink once there is enough of it (or `all`),
 * unless that would pass max_bytes. */
static void flush(exporter *x, bool all)
{
	struct sbuf *b = &x->level[0];
	if (b->failed)
		x->failed = true;
	if (x->failed || (!all && b->len < FLUSH_BYTES))
		return;
	uint64_t max = x->es->max_bytes;
	if (max && (x->written > max || b->len > max - x->written)) {
		x->over_limit = true;
		x->failed = true;
		return;
	}
	x->written += b->len;
	if (sbuf_emit(&x->sink, b) != 0)
		x->failed = true;
}

/* Valid UTF-8 for a name: invalid bytes become U+FFFD; with `folded`, a
 * ';' becomes ':' and a control character a space, as the lines need. */
static void clean_name(struct sbuf *b, const char *s, size_t len, bool folded)
{
	const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
	while (len > 0) {
		/* Printable ASCII, most of a name, as it is: a run at a time. */
		size_t run = 0;
		while (run < len && p[run] >= 0x20 && p[run] < 0x7f && !(folded && p[run] == ';'))
			run++;
		if (run) {
			sbuf_add(b, (const char *)p, run);
			p += run;
			len -= run;
			continue;
		}
		utf8proc_int32_t cp;
		utf8proc_ssize_t n = utf8proc_iterate(p, (utf8proc_ssize_t)len, &cp);
		if (n <= 0) {
			sbuf_adds(b, "\xef\xbf\xbd");
			n = 1;
		} else if (folded && cp == ';') {
			sbuf_adds(b, ":");
		} else if (folded && (cp < 0x20 || cp == 0x7f)) {
			sbuf_adds(b, " ");
		} else {
			sbuf_add(b, (const char *)p, (size_t)n);
		}
		p += n;
		len -= (size_t)n;
	}
}

/* ------------------------------------------------------------------------ */
/* Protobuf                                                                 */
/* ------------------------------------------------------------------------ */

/* Field numbers from Perfetto's protos/perfetto/trace/: trace.proto,
 * trace_packet.proto, track_event/track_event.proto,
 * track_event/track_descriptor.proto, track_event/process_descriptor.proto,
 * track_event/counter_descriptor.proto, track_event/debug_annotation.proto,
 * interned_data/interned_data.proto. tests/export/perfetto_subset.proto
 * holds the same, for protoc. */
enum {
	TRACE_PACKET = 1,

	PACKET_TIMESTAMP = 8,
	PACKET_SEQUENCE_ID = 10,       /* trusted_packet_sequence_id */
	PACKET_TRACK_EVENT = 11,
	PACKET_INTERNED_DATA = 12,
	PACKET_SEQUENCE_FLAGS = 13,
	PACKET_TIMESTAMP_CLOCK_ID = 58,
	PACKET_TRACK_DESCRIPTOR = 60,
	BUILTIN_CLOCK_MONOTONIC = 3,   /* common/builtin_clock.proto */

	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,

	DESCRIPTOR_UUID = 1,
	DESCRIPTOR_NAME = 2,
	DESCRIPTOR_PROCESS = 3,
	DESCRIPTOR_THREAD = 4,
	DESCRIPTOR_PARENT_UUID = 5,
	DESCRIPTOR_COUNTER = 8,
	PROCESS_PID = 1,
	PROCESS_NAME = 6,
	THREAD_PID = 1,
	THREAD_TID = 2,
	THREAD_NAME = 5,
	COUNTER_UNIT = 3,
	UNIT_TIME_NS = 1,
	UNIT_SIZE_BYTES = 3,

	EVENT_DEBUG_ANNOTATIONS = 4,
	EVENT_TYPE = 9,
	EVENT_NAME_IID = 10,
	EVENT_TRACK_UUID = 11,
	EVENT_COUNTER_VALUE = 30,
	EVENT_FLOW_IDS = 47,
	EVENT_TERMINATING_FLOW_IDS = 48,
	TYPE_SLICE_BEGIN = 1,
	TYPE_SLICE_END = 2,
	TYPE_INSTANT = 3,
	TYPE_COUNTER = 4,

	ANNOTATION_UINT_VALUE = 3,
	ANNOTATION_INT_VALUE = 4,
	ANNOTATION_DOUBLE_VALUE = 5,
	ANNOTATION_STRING_VALUE = 6,
	ANNOTATION_NAME = 10,

	INTERNED_EVENT_NAMES = 2,
	EVENT_NAME_IID_FIELD = 1,
	EVENT_NAME_NAME = 2,

	WIRE_VARINT = 0,
	WIRE_FIXED64 = 1,
	WIRE_BYTES = 2,
};

/* The one packet sequence of the trace. */
#define SEQUENCE_ID 1

/* Track uuids: a kind in the high bits, the GPU's or queue's index below;
 * the CPU process is kind 6, its tracks kind 7 with 32 bits of index. */
enum { UUID_GPU = 1, UUID_COUNTER = 2, UUID_QUEUE = 3, UUID_CPU = 6, UUID_CPU_TRACK = 7,
       UUID_MEMORY = 8 };

static uint64_t track_uuid(unsigned kind, uint32_t index)
{
	return (uint64_t)kind << 16 | index;
}

static uint64_t queue_track_uuid(enum track_kind k, uint32_t queue)
{
	return track_uuid(UUID_QUEUE + (unsigned)k, queue);
}

static uint64_t cpu_track_uuid(uint32_t index)
{
	return (uint64_t)UUID_CPU_TRACK << 32 | index;
}

static void put_varint(struct sbuf *b, uint64_t v)
{
	char tmp[10];
	size_t n = 0;
	do {
		unsigned char c = v & 0x7f;
		v >>= 7;
		tmp[n++] = (char)(c | (v ? 0x80 : 0));
	} while (v);
	sbuf_add(b, tmp, n);
}

static void pb_varint(exporter *x, uint32_t field, uint64_t v)
{
	put_varint(out_of(x), (uint64_t)field << 3 | WIRE_VARINT);
	put_varint(out_of(x), v);
}

static void pb_fixed64(exporter *x, uint32_t field, uint64_t v)
{
	char le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (char)(v >> (8 * i));
	put_varint(out_of(x), (uint64_t)field << 3 | WIRE_FIXED64);
	sbuf_add(out_of(x), le, 8);
}

static void pb_bytes(exporter *x, uint32_t field, const char *data, size_t len)
{
	put_varint(out_of(x), (uint64_t)field << 3 | WIRE_BYTES);
	put_varint(out_of(x), len);
	sbuf_add(out_of(x), data, len);
}

static void pb_open(exporter *x)
{
	x->depth++;
	x->level[x->depth].len = 0;
	x->level[x->depth].failed = false;
}

/* Closes the message of the current level as field `field` of the one
 * below. */
static void pb_close(exporter *x, uint32_t field)
{
	struct sbuf *inner = &x->level[x->depth];
	x->depth--;
	if (inner->failed)
		out_of(x)->failed = true;
	pb_bytes(x, field, inner->data ? inner->data : "", inner->len);
}

/* A string field, as valid UTF-8. */
static void pb_string(exporter *x, uint32_t field, const char *s, size_t len)
{
	x->name.len = 0;
	clean_name(&x->name, s, len, false);
	if (x->name.failed)
		x->failed = true;
	pb_bytes(x, field, x->name.data ? x->name.data : "", x->name.len);
}

/* Opens a packet of the sequence; flags are added when the sequence's
 * state is to be cleared. */
static void packet_open(exporter *x, uint32_t flags)
{
	pb_open(x);
	pb_varint(x, PACKET_SEQUENCE_ID, SEQUENCE_ID);
	if (x->clear_pending) {
		flags |= SEQ_INCREMENTAL_STATE_CLEARED;
		x->clear_pending = false;
	}
	if (flags)
		pb_varint(x, PACKET_SEQUENCE_FLAGS, flags);
}

/* A packet's time, on CLOCK_MONOTONIC, crumbs' clock: without the clock
 * id Perfetto takes it for BOOTTIME, which drifts from it across a
 * suspend, and a system trace beside it would not line up. */
static void pb_timestamp(exporter *x, int64_t ns)
{
	pb_varint(x, PACKET_TIMESTAMP, ns < 0 ? 0 : (uint64_t)ns);
	pb_varint(x, PACKET_TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
}

static void packet_close(exporter *x)
{
	pb_close(x, TRACE_PACKET);
	flush(x, false);
}

static uint32_t name_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/*
 * The iid of a name, and whether it is new (to be written in the packet's
 * interned data). Past INTERN_MAX names, or INTERN_TEXT_MAX bytes of
 * them, everything is forgotten and the next packet clears the sequence's
 * state; iids keep counting up, as Perfetto wants them never reused.
 */
static uint64_t intern(exporter *x, const char *s, size_t len, bool *fresh)
{
	uint32_t h = name_hash(s, len);
	for (uint32_t i = h & (INTERN_SLOTS - 1);; i = (i + 1) & (INTERN_SLOTS - 1)) {
		struct intern_slot *slot = &x->slots[i];
		if (slot->iid == 0)
			break;
		if (slot->len == len && memcmp(x->intern_text.data + slot->offset, s, len) == 0) {
			*fresh = false;
			return slot->iid;
		}
	}
	if (x->interned >= INTERN_MAX || x->intern_text.len + len > INTERN_TEXT_MAX) {
		memset(x->slots, 0, INTERN_SLOTS * sizeof(*x->slots));
		x->interned = 0;
		x->intern_text.len = 0;
		x->clear_pending = true;
	}
	uint32_t i = h & (INTERN_SLOTS - 1);
	while (x->slots[i].iid != 0)
		i = (i + 1) & (INTERN_SLOTS - 1);
	x->slots[i] = (struct intern_slot){ x->next_iid++, (uint32_t)x->intern_text.len, (uint32_t)len };
	sbuf_add(&x->intern_text, s, len);
	if (x->intern_text.failed)
		x->failed = true;
	x->interned++;
	*fresh = true;
	return x->slots[i].iid;
}

static void perfetto_process(exporter *x, const struct capture_meta *meta, uint32_t g)
{
	packet_open(x, 0);
	pb_open(x);
	pb_varint(x, DESCRIPTOR_UUID, track_uuid(UUID_GPU, g));
	pb_open(x);
	pb_varint(x, PROCESS_PID, gpu_pid(g));
	x->name.len = 0;
	sbuf_addf(&x->name, "GPU %u: ", g);
	clean_name(&x->name, meta->gpus[g].name, strlen(meta->gpus[g].name), false);
	pb_bytes(x, PROCESS_NAME, x->name.data, x->name.len);
	pb_close(x, DESCRIPTOR_PROCESS);
	pb_close(x, PACKET_TRACK_DESCRIPTOR);
	packet_close(x);

	packet_open(x, 0);
	pb_open(x);
	pb_varint(x, DESCRIPTOR_UUID, track_uuid(UUID_COUNTER, g));
	pb_varint(x, DESCRIPTOR_PARENT_UUID, track_uuid(UUID_GPU, g));
	pb_string(x, DESCRIPTOR_NAME, "GPU frame time", 14);
	pb_open(x);
	pb_varint(x, COUNTER_UNIT, UNIT_TIME_NS);
	pb_close(x, DESCRIPTOR_COUNTER);
	pb_close(x, PACKET_TRACK_DESCRIPTOR);
	packet_close(x);
}

static void perfetto_queue(exporter *x, const struct capture_meta *meta, uint32_t q)
{
	const struct capture_queue *cq = &meta->queues[q];
	for (int k = 0; k < TRACK_KINDS; k++) {
		packet_open(x, 0);
		pb_open(x);
		pb_varint(x, DESCRIPTOR_UUID, queue_track_uuid((enum track_kind)k, q));
		pb_varint(x, DESCRIPTOR_PARENT_UUID, track_uuid(UUID_GPU, cq->gpu));
		x->name.len = 0;
		sbuf_addf(&x->name, "%s%s", cq->name, track_suffix[k]);
		pb_bytes(x, DESCRIPTOR_NAME, x->name.data, x->name.len);
		pb_close(x, PACKET_TRACK_DESCRIPTOR);
		packet_close(x);
	}
}

/* ------------------------------------------------------------------------ */
/* Chrome's JSON                                                            */
/* ------------------------------------------------------------------------ */

/* Chrome's thread of a queue's track: three a queue, from 1. */
static uint32_t chrome_tid(enum track_kind k, uint32_t queue)
{
	return queue * TRACK_KINDS + (uint32_t)k + 1;
}

/* A time as Chrome's microseconds from the trace's origin, with three
 * decimals: exact nanoseconds, and small numbers, so that a reader that
 * takes them as doubles keeps apart the times that differ. (Times that
 * are equal come out as one text, and so as one double.) */
static void chrome_us(const exporter *x, struct sbuf *b, int64_t ns)
{
	int64_t o = x->origin_ns;
	if (o >= 0 ? ns < INT64_MIN + o : ns > INT64_MAX + o)
		ns = ns < 0 ? INT64_MIN : INT64_MAX;
	else
		ns -= o;
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	sbuf_addf(b, "%s%llu.%03u", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
		  (unsigned)(a % 1000));
}

/* Starts an event: the separator and the opening brace. */
static struct sbuf *chrome_event(exporter *x)
{
	struct sbuf *b = out_of(x);
	sbuf_adds(b, x->events++ ? ",\n{" : "\n{");
	return b;
}

static void chrome_process(exporter *x, const struct capture_meta *meta, uint32_t g)
{
	struct sbuf *b = chrome_event(x);
	sbuf_addf(b, "\"ph\":\"M\",\"pid\":%u,\"name\":\"process_name\",\"args\":{\"name\":", gpu_pid(g));
	x->name.len = 0;
	sbuf_addf(&x->name, "GPU %u: %s", g, meta->gpus[g].name);
	json_string(b, x->name.data, x->name.len);
	sbuf_adds(b, "}}");
	b = chrome_event(x);
	sbuf_addf(b, "\"ph\":\"M\",\"pid\":%u,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%u}}",
		  gpu_pid(g), g);
}

static void chrome_queue(exporter *x, const struct capture_meta *meta, uint32_t q)
{
	const struct capture_queue *cq = &meta->queues[q];
	for (int k = 0; k < TRACK_KINDS; k++) {
		uint32_t tid = chrome_tid((enum track_kind)k, q);
		struct sbuf *b = chrome_event(x);
		sbuf_addf(b, "\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":",
			  gpu_pid(cq->gpu), tid);
		x->name.len = 0;
		sbuf_addf(&x->name, "%s%s", cq->name, track_suffix[k]);
		json_string(b, x->name.data, x->name.len);
		sbuf_adds(b, "}}");
		b = chrome_event(x);
		sbuf_addf(b, "\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_sort_index\","
			     "\"args\":{\"sort_index\":%u}}", gpu_pid(cq->gpu), tid, tid);
	}
}

/* ------------------------------------------------------------------------ */
/* Slices, the same for Perfetto and Chrome                                 */
/* ------------------------------------------------------------------------ */

/* A slice or an instant on a queue's track or a CPU track, with the
 * flows that leave it and arrive at it. */
struct slice {
	enum track_kind track;
	bool instant;
	uint32_t queue;
	uint32_t gpu;
	uint32_t cpu;          /* the CPU track's index; CPU_NONE: a queue's */
	bool wait;             /* a CPU scope waiting on the GPU: arg "wait" 1 */
	uint32_t violated;     /* arg "violated": dependencies it broke */
	int64_t flow_ns;       /* Chrome: where its flows sit; INT64_MIN: the middle */
	const char *name;
	size_t name_len;
	const char *category;  /* Chrome's */
	const struct node *node; /* the scope, event, task or state it shows; NULL: none */
	int64_t exclusive_ns;  /* the node's, with that of children left out */
	struct counts exclusive;
	int64_t begin_ns;
	int64_t end_ns;
	const uint64_t *flows_out;
	size_t out_count;
	const uint64_t *flows_in;
	size_t in_count;
};

static uint64_t slice_uuid(const struct slice *s)
{
	return s->cpu != CPU_NONE ? cpu_track_uuid(s->cpu) : queue_track_uuid(s->track, s->queue);
}

static void pb_uint_arg(exporter *x, const char *name, uint64_t v)
{
	pb_open(x);
	pb_bytes(x, ANNOTATION_NAME, name, strlen(name));
	pb_varint(x, ANNOTATION_UINT_VALUE, v);
	pb_close(x, EVENT_DEBUG_ANNOTATIONS);
}

/* Chrome's name of flow `id` of frame f: the frame's flows are numbered
 * from x->next_flow, its CPU submits' first, then its signals', its CPU
 * scopes' submissions' and its task dependencies' (exporter_frame). */
static const char *flow_name(const exporter *x, const struct frame *f, uint64_t id)
{
	uint64_t k = id - x->next_flow, subs = f->submission_count;
	if (k < subs)
		return "submit";
	if (k < subs + f->release_count)
		return "signal";
	if (k < 2 * subs + f->release_count)
		return "submitter";
	k -= 2 * subs + f->release_count;
	return k < f->task_dep_count && f->task_deps[k].violated ? "violated dependency" :
								   "dependency";
}

/* Chrome's process and thread of a slice's track. */
static void chrome_ids(const exporter *x, const struct slice *s, uint32_t *pid, uint32_t *tid)
{
	*pid = gpu_pid(s->gpu);
	*tid = chrome_tid(s->track, s->queue);
	if (s->cpu != CPU_NONE) {
		*pid = CPU_PID;
		*tid = x->cpu_tracks[s->cpu].chrome_tid;
	}
}

/* Whether Chrome's JSON has the slice as an instant. */
static bool chrome_point(const struct slice *s)
{
	return s->instant || s->begin_ns == s->end_ns;
}

/* A count of the node's as the report shows it: "?" unknown, "N+" at
 * least N, else the number. */
static void pb_count_arg(exporter *x, const char *name, uint64_t v, bool unknown)
{
	char text[32];
	pb_open(x);
	pb_bytes(x, ANNOTATION_NAME, name, strlen(name));
	if (!unknown) {
		pb_varint(x, ANNOTATION_UINT_VALUE, v);
	} else {
		int len = v ? snprintf(text, sizeof(text), "%llu+", (unsigned long long)v) :
			      snprintf(text, sizeof(text), "?");
		pb_bytes(x, ANNOTATION_STRING_VALUE, text, (size_t)len);
	}
	pb_close(x, EVENT_DEBUG_ANNOTATIONS);
}

static void pb_ns_arg(exporter *x, const char *name, int64_t v)
{
	pb_open(x);
	pb_bytes(x, ANNOTATION_NAME, name, strlen(name));
	pb_varint(x, ANNOTATION_INT_VALUE, (uint64_t)v);
	pb_close(x, EVENT_DEBUG_ANNOTATIONS);
}

static void pb_counter_args(exporter *x, const struct node *n);
static void pb_vendor_args(exporter *x, const struct node *n);
static bool node_shown(const struct report_settings *s, const struct node *n);

/* A node's times as crumbs report has them (its slice's length counts
 * its queue's idle and wait too), and its counts where it has any. */
static void pb_node_args(exporter *x, const struct slice *s)
{
	const struct node *n = s->node;
	pb_ns_arg(x, "inclusive_ns", n->inclusive_ns);
	pb_ns_arg(x, "exclusive_ns", s->exclusive_ns);
	static const struct {
		const char *inclusive, *exclusive;
		size_t offset;
		unsigned bit;
	} counts[] = {
		{ "draws", "exclusive_draws", offsetof(struct counts, draws), COUNT_DRAWS },
		{ "dispatches", "exclusive_dispatches", offsetof(struct counts, dispatches),
		  COUNT_DISPATCHES },
		{ "prims", "exclusive_prims", offsetof(struct counts, prims), COUNT_PRIMS },
		{ "verts", "exclusive_verts", offsetof(struct counts, verts), COUNT_VERTS },
	};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		uint64_t in, ex;
		memcpy(&in, (const char *)&n->inclusive + counts[i].offset, sizeof(in));
		memcpy(&ex, (const char *)&s->exclusive + counts[i].offset, sizeof(ex));
		bool in_unknown = n->inclusive.unknown & counts[i].bit;
		bool ex_unknown = s->exclusive.unknown & counts[i].bit;
		if (in || in_unknown) {
			pb_count_arg(x, counts[i].inclusive, in, in_unknown);
			pb_count_arg(x, counts[i].exclusive, ex, ex_unknown);
		}
	}
	if (n->counters)
		pb_counter_args(x, n);
	if (n->counters && node_vendor_set(n))
		pb_vendor_args(x, n);
}

/* ------------------------------------------------------------------------ */
/* Pipeline statistics, as annotations of Perfetto's slices                 */
/* ------------------------------------------------------------------------ */

static const char *const counter_args[CRUMBS_PIPELINE_COUNTERS][2] = {
	{ "ia_vertices", "exclusive_ia_vertices" },
	{ "ia_primitives", "exclusive_ia_primitives" },
	{ "vs_invocations", "exclusive_vs_invocations" },
	{ "gs_invocations", "exclusive_gs_invocations" },
	{ "gs_primitives", "exclusive_gs_primitives" },
	{ "clipping_invocations", "exclusive_clipping_invocations" },
	{ "clipping_primitives", "exclusive_clipping_primitives" },
	{ "fs_invocations", "exclusive_fs_invocations" },
	{ "tcs_patches", "exclusive_tcs_patches" },
	{ "tes_invocations", "exclusive_tes_invocations" },
	{ "cs_invocations", "exclusive_cs_invocations" },
};

/* Counter k of the hidden children of n (--no-leaf), and theirs, into
 * *v; false when one of them is unknown. */
static bool hidden_counter(const struct report_settings *s, const struct node *n, uint32_t k,
			   uint64_t *v)
{
	for (const struct node *c = n->child; c; c = c->next) {
		if (node_shown(s, c) || !c->counters)
			continue;
		if (c->counters->exclusive_unknown)
			return false;
		if (c->counters->exclusive_mask & (1u << k))
			*v += c->counters->exclusive[k];
		if (!hidden_counter(s, c, k, v))
			return false;
	}
	return true;
}

/* A node's pipeline statistics, of it and all inside it and its own (with
 * its hidden children's, as its counts), each the text "?" where they are
 * unknown. */
static void pb_counter_args(exporter *x, const struct node *n)
{
	const struct node_counters *c = n->counters;
	for (uint32_t k = 0; k < CRUMBS_PIPELINE_COUNTERS; k++) {
		if (!((c->inclusive_mask | c->exclusive_mask) & (1u << k)) &&
		    !c->inclusive_unknown)
			continue;
		uint64_t in = c->inclusive[k], ex = c->exclusive[k];
		bool ex_unknown = c->exclusive_unknown ||
				  !hidden_counter(&x->es->report, n, k, &ex);
		pb_count_arg(x, counter_args[k][0], c->inclusive_unknown ? 0 : in,
			     c->inclusive_unknown);
		pb_count_arg(x, counter_args[k][1], ex_unknown ? 0 : ex, ex_unknown);
	}
}

/* Vendor counter k of the hidden children of n (--no-leaf), and theirs,
 * into *v; false when one of them is unknown. */
static bool hidden_vendor(const struct report_settings *s, const struct node *n, uint32_t k,
			  uint64_t *v)
{
	for (const struct node *c = n->child; c; c = c->next) {
		uint64_t cv;
		if (node_shown(s, c))
			continue;
		if (node_vendor_unknown(c, false))
			return false;
		if (node_vendor_counter(c, false, k, &cv))
			*v += cv;
		if (!hidden_vendor(s, c, k, v))
			return false;
	}
	return true;
}

/* A vendor counter's value: a count as an integer, one of 10^-scale
 * units as a number; "?" where unknown. */
static void pb_vendor_arg(exporter *x, const char *name, size_t len, uint64_t v, uint32_t scale,
			  bool unknown)
{
	pb_open(x);
	pb_bytes(x, ANNOTATION_NAME, name, len);
	if (unknown) {
		pb_bytes(x, ANNOTATION_STRING_VALUE, "?", 1);
	} else if (!scale) {
		pb_varint(x, ANNOTATION_UINT_VALUE, v);
	} else {
		double d = (double)v;
		for (uint32_t i = 0; i < scale; i++)
			d /= 10;
		uint64_t bits;
		memcpy(&bits, &d, sizeof(bits));
		pb_fixed64(x, ANNOTATION_DOUBLE_VALUE, bits);
	}
	pb_close(x, EVENT_DEBUG_ANNOTATIONS);
}

/* A node's vendor counters, `vendor.NAME` of it and all inside it and
 * `vendor_exclusive.NAME` its own (with its hidden children's), those
 * its frame did not take (another pass did) left out. */
static void pb_vendor_args(exporter *x, const struct node *n)
{
	const struct capture_counter_set *set = meta_counter_set(x->meta, node_vendor_set(n));
	struct sbuf key = { 0 };
	for (uint32_t k = 0; set && k < set->count; k++) {
		const struct capture_counter *c = &set->counters[k];
		for (int inclusive = 1; inclusive >= 0; inclusive--) {
			uint64_t v = 0;
			bool unknown = node_vendor_unknown(n, inclusive);
			if (!unknown && !node_vendor_counter(n, inclusive, k, &v))
				continue;
			if (!inclusive && !unknown)
				unknown = !hidden_vendor(&x->es->report, n, k, &v);
			key.len = 0;
			sbuf_adds(&key, inclusive ? "vendor." : "vendor_exclusive.");
			sbuf_adds(&key, c->name);
			if (key.failed)
				x->failed = true;
			else
				pb_vendor_arg(x, key.data, key.len, v, c->scale, unknown);
		}
	}
	sbuf_release(&key);
}

static void slice_begin(exporter *x, const struct frame *f, const struct slice *s)
{
	bool instant = s->instant;
	if (x->es->format == EXPORT_PERFETTO) {
		bool fresh;
		uint64_t iid = intern(x, s->name, s->name_len, &fresh);
		packet_open(x, SEQ_NEEDS_INCREMENTAL_STATE);
		pb_timestamp(x, s->begin_ns);
		if (fresh) {
			pb_open(x);
			pb_open(x);
			pb_varint(x, EVENT_NAME_IID_FIELD, iid);
			pb_string(x, EVENT_NAME_NAME, s->name, s->name_len);
			pb_close(x, INTERNED_EVENT_NAMES);
			pb_close(x, PACKET_INTERNED_DATA);
		}
		pb_open(x);
		pb_uint_arg(x, "frame", f->number);
		if (s->node)
			pb_node_args(x, s);
		if (s->wait)
			pb_uint_arg(x, "wait", 1);
		if (s->violated)
			pb_uint_arg(x, "violated", s->violated);
		pb_varint(x, EVENT_TYPE, instant ? TYPE_INSTANT : TYPE_SLICE_BEGIN);
		pb_varint(x, EVENT_NAME_IID, iid);
		pb_varint(x, EVENT_TRACK_UUID, slice_uuid(s));
		for (size_t i = 0; i < s->out_count; i++)
			pb_fixed64(x, EVENT_FLOW_IDS, s->flows_out[i]);
		for (size_t i = 0; i < s->in_count; i++)
			pb_fixed64(x, EVENT_TERMINATING_FLOW_IDS, s->flows_in[i]);
		pb_close(x, PACKET_TRACK_EVENT);
		packet_close(x);
		return;
	}

	uint32_t pid, tid;
	chrome_ids(x, s, &pid, &tid);
	/* Instants, and slices of no length, as instants: a slice of length
	 * 0 at another's edge reads as begun before, or ended after, it. */
	struct sbuf *b = chrome_event(x);
	sbuf_adds(b, chrome_point(s) ? "\"ph\":\"i\",\"s\":\"t\",\"name\":" : "\"ph\":\"B\",\"name\":");
	json_string(b, s->name, s->name_len);
	sbuf_addf(b, ",\"cat\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":", s->category, pid, tid);
	chrome_us(x, b, s->begin_ns);
	sbuf_adds(b, "}");
	/* Flows bind to the slice around them: their ends sit in the
	 * middle, clear of the neighbours' edges, or where the slice has no
	 * child. */
	int64_t mid = s->flow_ns != INT64_MIN ? s->flow_ns :
						 s->begin_ns + (s->end_ns - s->begin_ns) / 2;
	for (size_t i = 0; i < s->out_count + s->in_count; i++) {
		bool out = i < s->out_count;
		uint64_t id = out ? s->flows_out[i] : s->flows_in[i - s->out_count];
		b = chrome_event(x);
		sbuf_addf(b, "\"ph\":\"%s\",%s\"id\":%llu,\"name\":\"%s\",\"cat\":\"flow\",\"pid\":%u,"
			     "\"tid\":%u,\"ts\":", out ? "s" : "f", out ? "" : "\"bp\":\"e\",",
			  (unsigned long long)id, flow_name(x, f, id), pid, tid);
		chrome_us(x, b, mid);
		sbuf_adds(b, "}");
	}
	flush(x, false);
}

static void slice_end(exporter *x, const struct slice *s)
{
	if (s->instant)
		return;
	if (x->es->format == EXPORT_PERFETTO) {
		packet_open(x, SEQ_NEEDS_INCREMENTAL_STATE);
		pb_timestamp(x, s->end_ns);
		pb_open(x);
		pb_varint(x, EVENT_TYPE, TYPE_SLICE_END);
		pb_varint(x, EVENT_TRACK_UUID, slice_uuid(s));
		pb_close(x, PACKET_TRACK_EVENT);
		packet_close(x);
		return;
	}
	if (chrome_point(s))
		return;
	/* An end of its own, not a duration: a reader adding a duration to
	 * a start in doubles may land after the next slice's start, where an
	 * end written as a time is the same double as any start there. */
	uint32_t pid, tid;
	chrome_ids(x, s, &pid, &tid);
	struct sbuf *b = chrome_event(x);
	sbuf_adds(b, "\"ph\":\"E\",\"name\":");
	json_string(b, s->name, s->name_len);
	sbuf_addf(b, ",\"pid\":%u,\"tid\":%u,\"ts\":", pid, tid);
	chrome_us(x, b, s->end_ns);
	sbuf_adds(b, "}");
	flush(x, false);
}

/* Perfetto: a value of the counter track `uuid` at ns. */
static void pb_counter(exporter *x, uint64_t uuid, int64_t ns, uint64_t value)
{
	packet_open(x, SEQ_NEEDS_INCREMENTAL_STATE);
	pb_timestamp(x, ns);
	pb_open(x);
	pb_varint(x, EVENT_TYPE, TYPE_COUNTER);
	pb_varint(x, EVENT_TRACK_UUID, uuid);
	pb_varint(x, EVENT_COUNTER_VALUE, value);
	pb_close(x, PACKET_TRACK_EVENT);
	packet_close(x);
}

static void counter(exporter *x, uint32_t gpu, int64_t ns, int64_t value)
{
	if (x->es->format == EXPORT_PERFETTO) {
		pb_counter(x, track_uuid(UUID_COUNTER, gpu), ns, (uint64_t)value);
		return;
	}
	struct sbuf *b = chrome_event(x);
	sbuf_addf(b, "\"ph\":\"C\",\"name\":\"GPU frame time\",\"pid\":%u,\"ts\":", gpu_pid(gpu));
	chrome_us(x, b, ns);
	sbuf_addf(b, ",\"args\":{\"ns\":%lld}}", (long long)value);
}

/* ------------------------------------------------------------------------ */
/* Video memory as counters                                                 */
/* ------------------------------------------------------------------------ */

/* "Video memory heap 1", or "... heap 1 (driver's usage)" where the
 * allocations were not counted, into x->name. */
static void memory_counter_name(exporter *x, const struct frame_memory *m)
{
	x->name.len = 0;
	sbuf_addf(&x->name, "Video memory heap %u%s", m->heap, m->tracked ? "" : " (driver's usage)");
}

/* At each frame's end, a counter a memory heap of the GPUs shown: the
 * bytes in use (the driver's usage where the allocations were not
 * counted), on a track of its own under the GPU's process, in bytes. */
static void memory_counters(exporter *x, const struct frame *f)
{
	const struct report_settings *s = &x->es->report;
	for (uint32_t i = 0; i < f->memory_count; i++) {
		const struct frame_memory *m = &f->memory[i];
		if ((s->gpu >= 0 && (uint32_t)s->gpu != m->gpu) || m->gpu >= x->gpus_declared)
			continue;
		uint64_t value = m->tracked ? m->in_use : m->usage;
		uint64_t uuid = track_uuid(UUID_MEMORY, m->gpu * CRUMBS_MAX_MEMORY_HEAPS + m->heap);
		memory_counter_name(x, m);
		if (x->es->format == EXPORT_CHROME) {
			struct sbuf *b = chrome_event(x);
			sbuf_adds(b, "\"ph\":\"C\",\"name\":");
			json_string(b, x->name.data, x->name.len);
			sbuf_addf(b, ",\"pid\":%u,\"ts\":", gpu_pid(m->gpu));
			chrome_us(x, b, f->cpu_end_ns);
			sbuf_addf(b, ",\"args\":{\"bytes\":%llu}}", (unsigned long long)value);
			continue;
		}
		/* A heap counted one frame and not the next keeps its one
		 * track, named as first seen. */
		if (!(x->memory_declared[m->gpu] & (1u << m->heap))) {
			x->memory_declared[m->gpu] |= (uint16_t)(1u << m->heap);
			packet_open(x, 0);
			pb_open(x);
			pb_varint(x, DESCRIPTOR_UUID, uuid);
			pb_varint(x, DESCRIPTOR_PARENT_UUID, track_uuid(UUID_GPU, m->gpu));
			pb_bytes(x, DESCRIPTOR_NAME, x->name.data, x->name.len);
			pb_open(x);
			pb_varint(x, COUNTER_UNIT, UNIT_SIZE_BYTES);
			pb_close(x, DESCRIPTOR_COUNTER);
			pb_close(x, PACKET_TRACK_DESCRIPTOR);
			packet_close(x);
		}
		pb_counter(x, uuid, f->cpu_end_ns, value > INT64_MAX ? (uint64_t)INT64_MAX : value);
	}
}

/* Keeps a track's slices apart: a slice starts no earlier than the last
 * one on its track ended, and ends no earlier than it starts. Timestamps
 * that agree never need it. */
static void place(int64_t *cursor, int64_t *begin, int64_t *end)
{
	if (*begin < *cursor)
		*begin = *cursor;
	if (*end < *begin)
		*end = *begin;
	*cursor = *end;
}

/* ------------------------------------------------------------------------ */
/* A frame as slices                                                        */
/* ------------------------------------------------------------------------ */

static bool node_shown(const struct report_settings *s, const struct node *n)
{
	return s->leaf || n->kind == CRUMBS_EVENT_SCOPE;
}

static bool queue_timed(const struct frame *f, uint32_t q)
{
	return !(f->queues[q].flags & FRAME_QUEUE_NO_TIMESTAMPS);
}

static bool has_times(const struct submission *s)
{
	return s->begin_ns != INT64_MIN && s->end_ns != INT64_MIN;
}

/* Whether a wait's release is drawn as a flow: both submissions are
 * exported with their times. */
static bool release_drawn(const exporter *x, const struct frame *f, const struct release *r)
{
	if (r->signaller >= f->submission_count)
		return false;
	const struct submission *from = &f->submissions[r->signaller];
	const struct submission *to = &f->submissions[r->waiter];
	return x->selected[from->queue] && x->selected[to->queue] && queue_timed(f, from->queue) &&
	       queue_timed(f, to->queue) && has_times(from) && has_times(to);
}

/* Where each node's slice ends, by its order: its last timestamp, or its
 * subtree's; a node left open runs to the queue's last. Returns the end. */
static int64_t node_ends(exporter *x, const struct node *n, int64_t queue_end)
{
	int64_t end = n->end_ns;
	if (n->flags & NODE_OPEN && queue_end > end)
		end = queue_end;
	for (const struct node *c = n->child; c; c = c->next) {
		int64_t e = node_ends(x, c, queue_end);
		if (e > end)
			end = e;
	}
	if (!(n->flags & NODE_QUEUE_ROOT))
		x->ends[n->order] = end;
	return end;
}

struct scope_walk {
	exporter *x;
	const struct frame *f;
	uint32_t queue;
	uint32_t gpu;
	int64_t *cursor;
};

static void write_node(struct scope_walk *w, const struct node *n, uint32_t level, int64_t *cursor,
		       int64_t limit);
static int64_t hidden_ns(const struct report_settings *s, const struct node *n);

/* A node's counts and those of its hidden children (--no-leaf), and
 * theirs, as crumbs report --no-leaf shows them. */
static void shown_counts(const struct report_settings *s, const struct node *n, struct counts *to)
{
	for (const struct node *c = n->child; c; c = c->next) {
		if (node_shown(s, c))
			continue;
		to->draws += c->exclusive.draws;
		to->dispatches += c->exclusive.dispatches;
		to->prims += c->exclusive.prims;
		to->verts += c->exclusive.verts;
		to->unknown |= c->exclusive.unknown;
		shown_counts(s, c, to);
	}
}

/* The children a node shows, hidden ones replaced by theirs. */
static void write_children(struct scope_walk *w, const struct node *n, uint32_t level,
			   int64_t *cursor, int64_t limit)
{
	for (const struct node *c = n->child; c; c = c->next) {
		if (node_shown(&w->x->es->report, c))
			write_node(w, c, level, cursor, limit);
		else
			write_children(w, c, level, cursor, limit);
	}
}

static void write_node(struct scope_walk *w, const struct node *n, uint32_t level, int64_t *cursor,
		       int64_t limit)
{
	const struct report_settings *s = &w->x->es->report;
	int64_t begin = n->begin_ns, end = w->x->ends[n->order];
	if (begin == INT64_MIN)
		begin = *cursor != INT64_MIN ? *cursor : end != INT64_MIN ? end : w->f->cpu_begin_ns;
	if (end == INT64_MIN)
		end = begin;
	place(cursor, &begin, &end);
	if (end > limit) {
		end = limit;
		if (begin > end)
			begin = end;
		*cursor = end;
	}
	struct slice sl = {
		.cpu = CPU_NONE, .flow_ns = INT64_MIN,
		.track = TRACK_SCOPES, .queue = w->queue, .gpu = w->gpu,
		.name = n->name, .name_len = n->name_len,
		.category = n->kind == CRUMBS_EVENT_SCOPE ? "scope" : "event",
		.node = n, .exclusive_ns = n->exclusive_ns + hidden_ns(s, n),
		.exclusive = n->exclusive, .begin_ns = begin, .end_ns = end,
	};
	if (w->x->es->format == EXPORT_PERFETTO)
		shown_counts(s, n, &sl.exclusive);
	slice_begin(w->x, w->f, &sl);
	if (s->max_depth < 0 || level < (uint32_t)s->max_depth) {
		int64_t inner = begin;
		write_children(w, n, level + 1, &inner, end);
	}
	slice_end(w->x, &sl);
}

/* The outermost nodes that --root matches, and their subtrees. */
static void write_matches(struct scope_walk *w, const struct node *n)
{
	const struct report_settings *s = &w->x->es->report;
	for (const struct node *c = n->child; c; c = c->next) {
		if (node_shown(s, c) && filter_match_root(s->filter, c->name, c->name_len))
			write_node(w, c, 0, w->cursor, INT64_MAX);
		else
			write_matches(w, c);
	}
}

/* The idle or wait before a submission, `ns` from `begin_ns`, on queue
 * q's submissions track. */
static void queue_gap(exporter *x, const struct frame *f, int64_t *cursor, uint32_t q,
		      uint32_t gpu, const char *name, const char *category, int64_t begin_ns,
		      int64_t ns)
{
	struct slice gap = {
		.cpu = CPU_NONE, .flow_ns = INT64_MIN,
		.track = TRACK_SUBMISSIONS, .queue = q, .gpu = gpu, .name = name,
		.name_len = strlen(name), .category = category, .begin_ns = begin_ns,
		.end_ns = begin_ns + ns,
	};
	place(&cursor[TRACK_SUBMISSIONS], &gap.begin_ns, &gap.end_ns);
	slice_begin(x, f, &gap);
	slice_end(x, &gap);
}

static int released_cmp(const void *pa, const void *pb)
{
	const struct released *a = pa, *b = pb;
	if (a->ns != b->ns)
		return a->ns < b->ns ? -1 : 1;
	return (a->flow > b->flow) - (a->flow < b->flow);
}

/* Sorts the frame's releases by signalling and by waiting submission,
 * in their order within each (by_*_at as the starts). */
static bool index_releases(exporter *x, const struct frame *f)
{
	size_t n = f->submission_count;
	size_t by_cap = x->by_cap, at_cap = x->by_at_cap;
	if (!array_room((void **)&x->by_signaller, &by_cap, (size_t)f->release_count + 1,
			sizeof(uint32_t)) ||
	    !array_room((void **)&x->by_waiter, &x->by_cap, (size_t)f->release_count + 1,
			sizeof(uint32_t)) ||
	    !array_room((void **)&x->by_signaller_at, &at_cap, n + 2, sizeof(uint32_t)) ||
	    !array_room((void **)&x->by_waiter_at, &x->by_at_cap, n + 2, sizeof(uint32_t)))
		return false;
	memset(x->by_signaller_at, 0, (n + 2) * sizeof(uint32_t));
	memset(x->by_waiter_at, 0, (n + 2) * sizeof(uint32_t));
	for (uint32_t r = 0; r < f->release_count; r++) {
		const struct release *rel = &f->releases[r];
		if (rel->signaller < n)
			x->by_signaller_at[rel->signaller + 2]++;
		x->by_waiter_at[rel->waiter + 2]++;
	}
	for (size_t i = 2; i < n + 2; i++) {
		x->by_signaller_at[i] += x->by_signaller_at[i - 1];
		x->by_waiter_at[i] += x->by_waiter_at[i - 1];
	}
	/* Counted into [i + 1], which ends as the start of i + 1. */
	for (uint32_t r = 0; r < f->release_count; r++) {
		const struct release *rel = &f->releases[r];
		if (rel->signaller < n)
			x->by_signaller[x->by_signaller_at[rel->signaller + 1]++] = r;
		x->by_waiter[x->by_waiter_at[rel->waiter + 1]++] = r;
	}
	return true;
}

static void write_queue(exporter *x, const struct frame *f, uint32_t q, uint32_t gpu)
{
	const struct frame_queue *fq = &f->queues[q];
	bool timed = queue_timed(f, q);
	int64_t *cursor = x->cursor[q];
	uint64_t submit_flows = x->next_flow;
	uint64_t release_flows = x->next_flow + f->submission_count;
	int64_t queue_end = INT64_MIN;

	if (!array_room((void **)&x->flows, &x->flows_cap, (size_t)f->release_count + 1,
			sizeof(*x->flows)) ||
	    !array_room((void **)&x->released, &x->released_cap, (size_t)f->release_count + 1,
			sizeof(*x->released))) {
		x->failed = true;
		return;
	}
	for (uint32_t i = 0; i < f->submission_count && !x->failed; i++) {
		const struct submission *sub = &f->submissions[i];
		if (sub->queue != q)
			continue;
		bool drawn = timed && has_times(sub);
		uint64_t submit_flow = submit_flows + i;
		struct slice cpu = {
			.cpu = CPU_NONE, .flow_ns = INT64_MIN,
			.track = TRACK_CPU, .instant = true, .queue = q, .gpu = gpu, .name = "Submit",
			.name_len = 6, .category = "submit", .begin_ns = sub->cpu_ns, .end_ns = sub->cpu_ns,
			.flows_out = &submit_flow, .out_count = drawn,
		};
		slice_begin(x, f, &cpu);
		if (!timed)
			continue;
		if (sub->idle_ns > 0)
			queue_gap(x, f, cursor, q, gpu, "Idle", "idle", sub->idle_begin_ns,
				  sub->idle_ns);
		if (sub->waits > 0)
			queue_gap(x, f, cursor, q, gpu, "Wait", "wait", sub->wait_begin_ns,
				  sub->wait_ns);
		if (!drawn)
			continue;
		/* Flows leave a submission for the waits its signals released,
		 * and arrive from its CPU submit. */
		size_t out = 0;
		for (uint32_t k = x->by_signaller_at[i]; k < x->by_signaller_at[i + 1]; k++) {
			uint32_t r = x->by_signaller[k];
			if (release_drawn(x, f, &f->releases[r]))
				x->flows[out++] = release_flows + r;
		}
		char name[32];
		int len = snprintf(name, sizeof(name), "Submission %u", sub->index);
		/* And from the CPU scope that made it, where there is one. */
		uint64_t in[2] = { submit_flow, x->submitter_flow[i] };
		struct slice sl = {
			.cpu = CPU_NONE, .flow_ns = INT64_MIN,
			.track = TRACK_SUBMISSIONS, .queue = q, .gpu = gpu, .name = name,
			.name_len = (size_t)len, .category = "submission", .begin_ns = sub->begin_ns,
			.end_ns = sub->end_ns, .flows_in = in, .in_count = in[1] ? 2 : 1,
			.flows_out = x->flows, .out_count = out,
		};
		place(&cursor[TRACK_SUBMISSIONS], &sl.begin_ns, &sl.end_ns);
		slice_begin(x, f, &sl);

		/* Where each of its waits was released, in time order: when
		 * the signal came, or when the work started if that was later.
		 * (A wait that holds back only later stages lets the work
		 * start before the signal; the flow then arrives inside.) */
		size_t n = 0;
		for (uint32_t j = x->by_waiter_at[i]; j < x->by_waiter_at[i + 1]; j++) {
			uint32_t r = x->by_waiter[j];
			const struct release *rel = &f->releases[r];
			if (!release_drawn(x, f, rel))
				continue;
			int64_t at = rel->signal_ns > sl.begin_ns ? rel->signal_ns : sl.begin_ns;
			x->released[n++] = (struct released){ at < sl.end_ns ? at : sl.end_ns,
							      release_flows + r };
		}
		if (n > 1)
			qsort(x->released, n, sizeof(*x->released), released_cmp);
		for (size_t k = 0; k < n; k++) {
			struct slice signalled = {
				.cpu = CPU_NONE, .flow_ns = INT64_MIN,
				.track = TRACK_SUBMISSIONS, .instant = true, .queue = q, .gpu = gpu,
				.name = "Signalled", .name_len = 9, .category = "signalled",
				.begin_ns = x->released[k].ns, .end_ns = x->released[k].ns,
				.flows_in = &x->released[k].flow, .in_count = 1,
			};
			slice_begin(x, f, &signalled);
		}
		slice_end(x, &sl);
		if (sub->end_ns > queue_end)
			queue_end = sub->end_ns;
	}

	size_t nodes = (size_t)fq->scopes + fq->events;
	const struct report_settings *s = &x->es->report;
	if (x->failed || nodes == 0 || (s->max_depth == 0 && !s->root_count))
		return;
	if (!array_room((void **)&x->ends, &x->ends_cap, nodes, sizeof(*x->ends))) {
		x->failed = true;
		return;
	}
	node_ends(x, fq->root, queue_end);
	struct scope_walk w = { x, f, q, gpu, &cursor[TRACK_SCOPES] };
	if (s->root_count)
		write_matches(&w, fq->root);
	else
		write_children(&w, fq->root, 1, &cursor[TRACK_SCOPES], INT64_MAX);
}

/* ------------------------------------------------------------------------ */
/* The CPU side: threads, task timelines, frames of other kinds             */
/* ------------------------------------------------------------------------ */

static uint64_t cpu_key_hash(unsigned kind, uint32_t tid, uint32_t lane, const char *name,
			     size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)kind << 56 | (uint64_t)lane << 32 | tid);
	h *= 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* A CPU track's thread's or timeline's name, as kept. */
static const char *cpu_name_of(const exporter *x, const struct cpu_track *t)
{
	return t->name_len ? x->cpu_names.data + t->name_offset : "";
}

static bool cpu_key_equal(const exporter *x, const struct cpu_track *t, unsigned kind,
			  uint32_t tid, uint32_t lane, const char *name, size_t len)
{
	return t->kind == kind && t->tid == tid && t->lane == lane && t->name_len == len &&
	       (len == 0 || memcmp(cpu_name_of(x, t), name, len) == 0);
}

static bool cpu_slots_grow(exporter *x)
{
	size_t cap = x->cpu_slot_cap ? x->cpu_slot_cap * 2 : 64;
	uint32_t *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return false;
	for (size_t i = 0; i < x->cpu_track_count; i++) {
		const struct cpu_track *t = &x->cpu_tracks[i];
		size_t j = cpu_key_hash(t->kind, t->tid, t->lane, cpu_name_of(x, t), t->name_len) &
			   (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(x->cpu_slots);
	x->cpu_slots = slots;
	x->cpu_slot_cap = cap;
	return true;
}

/* The CPU track of that key; with `create`, a new one when there is
 * none (its Chrome tid still to be given). CPU_NONE when there is none,
 * past the bounds, or out of memory (x->failed). */
static uint32_t cpu_track_find(exporter *x, unsigned kind, uint32_t tid, uint32_t lane,
			       const char *name, size_t len, bool create, bool *fresh)
{
	*fresh = false;
	if ((x->cpu_track_count + 1) * 2 > x->cpu_slot_cap && !cpu_slots_grow(x)) {
		x->failed = true;
		return CPU_NONE;
	}
	size_t mask = x->cpu_slot_cap - 1, j = cpu_key_hash(kind, tid, lane, name, len) & mask;
	for (; x->cpu_slots[j]; j = (j + 1) & mask) {
		uint32_t i = x->cpu_slots[j] - 1;
		if (cpu_key_equal(x, &x->cpu_tracks[i], kind, tid, lane, name, len))
			return i;
	}
	if (!create || x->cpu_track_count >= CPU_TRACKS_MAX ||
	    x->cpu_names.len + len > CPU_NAMES_MAX)
		return CPU_NONE;
	if (!array_room((void **)&x->cpu_tracks, &x->cpu_track_cap, x->cpu_track_count + 1,
			sizeof(*x->cpu_tracks))) {
		x->failed = true;
		return CPU_NONE;
	}
	struct cpu_track *t = &x->cpu_tracks[x->cpu_track_count];
	*t = (struct cpu_track){ (uint8_t)kind, tid, lane, (uint32_t)x->cpu_names.len,
				 (uint32_t)len, 0, INT64_MIN, INT64_MIN };
	if (len)
		sbuf_add(&x->cpu_names, name, len);
	if (x->cpu_names.failed) {
		x->failed = true;
		return CPU_NONE;
	}
	x->cpu_slots[j] = (uint32_t)++x->cpu_track_count;
	*fresh = true;
	return (uint32_t)x->cpu_track_count - 1;
}

/* A track's name as the trace shows it: a thread's name ("thread N" when
 * it has none, as the model names it), a timeline's ("T (lane 2)" for its
 * second lane), "T frames". */
static void cpu_track_name(exporter *x, const struct cpu_track *t, struct sbuf *out)
{
	const char *name = cpu_name_of(x, t);
	out->len = 0;
	if (t->kind == CPU_TRACK_THREAD && t->name_len == 0) {
		sbuf_addf(out, "thread %u", t->tid);
		return;
	}
	clean_name(out, name, t->name_len, false);
	if (t->kind == CPU_TRACK_LANE && t->lane > 0)
		sbuf_addf(out, " (lane %u)", t->lane + 1);
	else if (t->kind == CPU_TRACK_MARKS)
		sbuf_adds(out, " frames");
}

static void cpu_declare_process(exporter *x)
{
	static const char name[] = "CPU";
	x->cpu_declared = true;
	if (x->es->format == EXPORT_PERFETTO) {
		packet_open(x, 0);
		pb_open(x);
		pb_varint(x, DESCRIPTOR_UUID, track_uuid(UUID_CPU, 0));
		pb_open(x);
		pb_varint(x, PROCESS_PID, CPU_PID);
		pb_bytes(x, PROCESS_NAME, name, sizeof(name) - 1);
		pb_close(x, DESCRIPTOR_PROCESS);
		pb_close(x, PACKET_TRACK_DESCRIPTOR);
		packet_close(x);
		return;
	}
	/* Above the GPUs, whose sort indices count from 0. */
	struct sbuf *b = chrome_event(x);
	sbuf_addf(b, "\"ph\":\"M\",\"pid\":%u,\"name\":\"process_name\",\"args\":{\"name\":\"%s\"}}",
		  CPU_PID, name);
	b = chrome_event(x);
	sbuf_addf(b, "\"ph\":\"M\",\"pid\":%u,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":-1}}",
		  CPU_PID);
}

/* Writes track i's description: Perfetto's thread (its real tid) or
 * named track of the CPU process; Chrome's thread of it, a thread's real
 * tid where no other track took it, else one above every real tid. */
static void cpu_declare_track(exporter *x, uint32_t i)
{
	struct cpu_track *t = &x->cpu_tracks[i];
	if (!x->cpu_declared)
		cpu_declare_process(x);
	cpu_track_name(x, t, &x->name);
	if (x->name.failed) {
		x->failed = true;
		return;
	}
	const char *name = x->name.data ? x->name.data : "";
	if (x->es->format == EXPORT_PERFETTO) {
		packet_open(x, 0);
		pb_open(x);
		pb_varint(x, DESCRIPTOR_UUID, cpu_track_uuid(i));
		if (t->kind == CPU_TRACK_THREAD) {
			pb_open(x);
			pb_varint(x, THREAD_PID, CPU_PID);
			pb_varint(x, THREAD_TID, t->tid);
			pb_bytes(x, THREAD_NAME, name, x->name.len);
			pb_close(x, DESCRIPTOR_THREAD);
		} else {
			pb_varint(x, DESCRIPTOR_PARENT_UUID, track_uuid(UUID_CPU, 0));
			pb_bytes(x, DESCRIPTOR_NAME, name, x->name.len);
		}
		pb_close(x, PACKET_TRACK_DESCRIPTOR);
		packet_close(x);
		return;
	}
	bool fresh = false;
	uint32_t tid = 0;
	if (t->kind == CPU_TRACK_THREAD && t->tid > 0 && t->tid < CPU_PID) {
		cpu_track_find(x, CPU_TRACK_CLAIM, t->tid, 0, "", 0, true, &fresh);
		t = &x->cpu_tracks[i]; /* the array may have moved */
		if (fresh)
			tid = t->tid;
	}
	if (!tid)
		tid = ++x->next_chrome_tid;
	t->chrome_tid = tid;
	struct sbuf *b = chrome_event(x);
	sbuf_addf(b, "\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":",
		  CPU_PID, tid);
	json_string(b, name, x->name.len);
	sbuf_adds(b, "}}");
	b = chrome_event(x);
	sbuf_addf(b, "\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_sort_index\","
		     "\"args\":{\"sort_index\":%u}}", CPU_PID, tid, i);
}

/* The track of that key, declared when new; CPU_NONE when there is none. */
static uint32_t cpu_track(exporter *x, unsigned kind, uint32_t tid, uint32_t lane,
			  const char *name, size_t len)
{
	bool fresh;
	uint32_t i = cpu_track_find(x, kind, tid, lane, name, len, true, &fresh);
	if (fresh)
		cpu_declare_track(x, i);
	return i;
}

/* The node that stands for n on its track under --root and --max-depth:
 * n, or the deepest ancestor that is exported; NULL when none is. On a
 * timeline (`tasks`), --root matches tasks alone. */
static const struct node *cpu_shown(const struct report_settings *s, const struct node *n,
				    bool tasks)
{
	const struct node *match = NULL;
	if (s->root_count) {
		for (const struct node *a = n; a && a->parent; a = a->parent)
			if ((!tasks || a->depth == 1) &&
			    filter_match_root(s->filter, a->name, a->name_len))
				match = a;
		if (!match)
			return NULL;
	}
	if (s->max_depth >= 0) {
		uint32_t base = match ? match->depth : 0;
		if (!match && s->max_depth == 0)
			return NULL;
		while (n->depth - base > (uint32_t)s->max_depth)
			n = n->parent;
	}
	return n;
}

static bool add_link(exporter *x, const struct node *n, uint32_t kind, uint64_t value)
{
	if (!array_room((void **)&x->node_links, &x->node_link_cap, x->node_link_count + 1,
			sizeof(*x->node_links))) {
		x->failed = true;
		return false;
	}
	x->node_links[x->node_link_count++] = (struct node_link){ n, kind, value };
	return true;
}

static int link_cmp(const void *pa, const void *pb)
{
	const struct node_link *a = pa, *b = pb;
	if (a->node != b->node)
		return (uintptr_t)a->node < (uintptr_t)b->node ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return (a->value > b->value) - (a->value < b->value);
}

/* The first of n's links among the first `count`, or count. */
static size_t links_of(const exporter *x, const struct node *n, size_t count)
{
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)x->node_links[mid].node < (uintptr_t)n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The lane track a task was given, among the first `count` links;
 * CPU_NONE when none. */
static uint32_t task_track(const exporter *x, const struct node *task, size_t count)
{
	size_t k = links_of(x, task, count);
	if (k < count && x->node_links[k].node == task &&
	    x->node_links[k].kind == LINK_TRACK)
		return (uint32_t)x->node_links[k].value;
	return CPU_NONE;
}

/* Whether a submission is drawn with its times on a queue's track. */
static bool submission_drawn(const exporter *x, const struct frame *f, uint32_t i)
{
	const struct submission *sub = &f->submissions[i];
	return sub->queue < f->queue_count && x->selected[sub->queue] &&
	       queue_timed(f, sub->queue) && has_times(sub);
}

/*
 * Before a frame's CPU side is written: each thread's track, each task's
 * lane (declaring new tracks), and the flows between CPU nodes and to
 * submissions, as links sorted by node. Flows are made only between
 * nodes that are written.
 */
static void cpu_prepare(exporter *x, const struct frame *f)
{
	const struct report_settings *s = &x->es->report;
	x->node_link_count = 0;
	if (!array_room((void **)&x->thread_track, &x->thread_track_cap, f->cpu_thread_count + 1,
			sizeof(*x->thread_track)) ||
	    !array_room((void **)&x->submitter_flow, &x->submitter_flow_cap,
			(size_t)f->submission_count + 1, sizeof(*x->submitter_flow))) {
		x->failed = true;
		return;
	}
	memset(x->submitter_flow, 0, ((size_t)f->submission_count + 1) * sizeof(*x->submitter_flow));
	if (!x->cpu_shown)
		return;
	for (uint32_t t = 0; t < f->cpu_thread_count && !x->failed; t++) {
		const struct frame_cpu_thread *ct = &f->cpu_threads[t];
		x->thread_track[t] = CPU_NONE;
		if (ct->kind == FRAME_CPU_THREAD) {
			if (ct->root->child)
				x->thread_track[t] = cpu_track(x, CPU_TRACK_THREAD, ct->tid, 0, ct->name,
							       ct->name_len);
			continue;
		}
		if (ct->kind != FRAME_CPU_TIMELINE)
			continue;
		/* Tasks overlap: each goes to the first of its timeline's
		 * lanes that is free when it begins. */
		for (const struct node *task = ct->root->child; task && !x->failed; task = task->next) {
			if (cpu_shown(s, task, true) != task)
				continue;
			uint32_t lane = 0, i = CPU_NONE;
			for (; lane < TASK_LANES_MAX; lane++) {
				i = cpu_track(x, CPU_TRACK_LANE, 0, lane, ct->name, ct->name_len);
				if (i == CPU_NONE || x->cpu_tracks[i].lane_end <= task->begin_ns)
					break;
			}
			if (i == CPU_NONE || lane == TASK_LANES_MAX)
				continue;
			x->cpu_tracks[i].lane_end = task->end_ns > task->begin_ns ? task->end_ns :
										    task->begin_ns;
			add_link(x, task, LINK_TRACK, i);
		}
	}
	if (x->failed)
		return;
	if (x->node_link_count > 1)
		qsort(x->node_links, x->node_link_count, sizeof(*x->node_links), link_cmp);
	size_t tracks = x->node_link_count;

	/* From the scope that made each submission to its work. */
	uint64_t submitter_flows = x->next_flow + f->submission_count + f->release_count;
	if (!cpu_links_build(&x->links, f)) {
		x->failed = true;
		return;
	}
	for (uint32_t i = 0; i < f->submission_count; i++) {
		const struct node *n = x->links.submitter[i];
		if (!n || x->thread_track[x->links.submitter_thread[i]] == CPU_NONE ||
		    !submission_drawn(x, f, i) || !(n = cpu_shown(s, n, false)))
			continue;
		x->submitter_flow[i] = submitter_flows + i;
		if (!add_link(x, n, LINK_OUT, submitter_flows + i))
			return;
	}
	/* From the end of the blocking task (its last state) to the state
	 * the dependency held back. */
	uint64_t dep_flows = submitter_flows + f->submission_count;
	for (uint32_t k = 0; k < f->task_dep_count; k++) {
		const struct frame_task_dep *d = &f->task_deps[k];
		if (!d->task || !d->blocking)
			continue;
		const struct node *to = task_dep_state(d);
		const struct node *from = d->blocking;
		while (from->child)
			for (from = from->child; from->next; from = from->next)
				;
		if (!to || !(to = cpu_shown(s, to, true)) || !(from = cpu_shown(s, from, true)))
			continue;
		/* Both tasks must have been given a lane. */
		const struct node *a = to, *b = from;
		while (a->depth > 1)
			a = a->parent;
		while (b->depth > 1)
			b = b->parent;
		if (task_track(x, a, tracks) == CPU_NONE || task_track(x, b, tracks) == CPU_NONE)
			continue;
		if (!add_link(x, from, LINK_OUT, dep_flows + k) || !add_link(x, to, LINK_IN, dep_flows + k))
			return;
	}
	if (x->node_link_count > 1)
		qsort(x->node_links, x->node_link_count, sizeof(*x->node_links), link_cmp);
}

/* Where Chrome's flows of a slice sit: the middle of its first stretch
 * that no child covers, so that they bind to it and not to a child; the
 * middle when its children cover it all. */
static int64_t own_point(const struct node *n, int64_t begin, int64_t end)
{
	int64_t at = begin;
	for (const struct node *c = n->child; c; c = c->next) {
		if (c->begin_ns > at)
			return at + (c->begin_ns - at) / 2;
		if (c->end_ns > at)
			at = c->end_ns;
	}
	if (at < end)
		return at + (end - at) / 2;
	return begin + (end - begin) / 2;
}

struct cpu_walk {
	exporter *x;
	const struct frame *f;
	uint32_t track;
	const char *category;  /* "cpu" or "task"; a wait scope's is "cpu-wait" */
};

static void write_cpu_node(struct cpu_walk *w, const struct node *n, uint32_t level,
			   int64_t *cursor, int64_t limit)
{
	exporter *x = w->x;
	const struct report_settings *s = &x->es->report;
	int64_t begin = n->begin_ns, end = n->end_ns;
	place(cursor, &begin, &end);
	if (end > limit) {
		end = limit;
		if (begin > end)
			begin = end;
		*cursor = end;
	}
	size_t outs = 0, ins = 0;
	uint32_t violated = 0;
	for (size_t k = links_of(x, n, x->node_link_count);
	     k < x->node_link_count && x->node_links[k].node == n; k++) {
		const struct node_link *l = &x->node_links[k];
		if (l->kind == LINK_OUT && array_room((void **)&x->flows, &x->flows_cap, outs + 1,
						      sizeof(*x->flows))) {
			x->flows[outs++] = l->value;
		} else if (l->kind == LINK_IN && array_room((void **)&x->flows_in, &x->flows_in_cap,
							     ins + 1, sizeof(*x->flows_in))) {
			x->flows_in[ins++] = l->value;
			uint64_t dep = l->value - (x->next_flow + 2 * (uint64_t)w->f->submission_count +
						   w->f->release_count);
			if (dep < w->f->task_dep_count && w->f->task_deps[dep].violated)
				violated++;
		} else if (l->kind != LINK_TRACK) {
			x->failed = true;
		}
	}
	bool wait = n->flags & NODE_WAIT;
	const char *category = n->depth == 1 ? w->category :
			       strcmp(w->category, "task") == 0 ? "state" : "cpu";
	struct slice sl = {
		.cpu = w->track, .flow_ns = own_point(n, begin, end), .name = n->name,
		.name_len = n->name_len, .category = wait ? "cpu-wait" : category,
		.node = n, .exclusive_ns = n->exclusive_ns, .exclusive = n->exclusive,
		.begin_ns = begin, .end_ns = end, .wait = wait, .violated = violated,
		.flows_out = x->flows, .out_count = outs, .flows_in = x->flows_in, .in_count = ins,
	};
	slice_begin(x, w->f, &sl);
	if (s->max_depth < 0 || level < (uint32_t)s->max_depth) {
		int64_t inner = begin;
		for (const struct node *c = n->child; c && !x->failed; c = c->next)
			write_cpu_node(w, c, level + 1, &inner, end);
	}
	slice_end(x, &sl);
}

static void write_cpu_matches(struct cpu_walk *w, const struct node *n)
{
	const struct report_settings *s = &w->x->es->report;
	for (const struct node *c = n->child; c && !w->x->failed; c = c->next) {
		if (filter_match_root(s->filter, c->name, c->name_len))
			write_cpu_node(w, c, 0, &w->x->cpu_tracks[w->track].cursor, INT64_MAX);
		else
			write_cpu_matches(w, c);
	}
}

/* A frame's CPU side: each thread's scopes on its track, each timeline's
 * tasks on their lanes with their states inside, and the frames of other
 * kinds as instants. */
static void write_cpu(exporter *x, const struct frame *f)
{
	const struct report_settings *s = &x->es->report;
	if (!x->cpu_shown)
		return;
	for (uint32_t t = 0; t < f->cpu_thread_count && !x->failed; t++) {
		const struct frame_cpu_thread *ct = &f->cpu_threads[t];
		if (ct->kind == FRAME_CPU_THREAD) {
			struct cpu_walk w = { x, f, x->thread_track[t], "cpu" };
			if (w.track == CPU_NONE || (s->max_depth == 0 && !s->root_count))
				continue;
			if (s->root_count) {
				write_cpu_matches(&w, ct->root);
				continue;
			}
			for (const struct node *c = ct->root->child; c && !x->failed; c = c->next)
				write_cpu_node(&w, c, 1, &x->cpu_tracks[w.track].cursor, INT64_MAX);
			continue;
		}
		for (const struct node *task = ct->root->child; task && !x->failed; task = task->next) {
			struct cpu_walk w = { x, f, task_track(x, task, x->node_link_count), "task" };
			if (w.track != CPU_NONE)
				write_cpu_node(&w, task, s->root_count ? 0 : 1,
					       &x->cpu_tracks[w.track].cursor, INT64_MAX);
		}
	}
	for (uint32_t m = 0; m < f->mark_count && !x->failed; m++) {
		const struct frame_mark *mk = &f->marks[m];
		uint32_t i = cpu_track(x, CPU_TRACK_MARKS, 0, 0, mk->timeline, mk->timeline_len);
		if (i == CPU_NONE)
			continue;
		int64_t at = mk->ns, end = mk->ns;
		place(&x->cpu_tracks[i].cursor, &at, &end);
		struct slice sl = {
			.cpu = i, .flow_ns = INT64_MIN, .instant = true, .name = mk->timeline,
			.name_len = mk->timeline_len, .category = "frame", .begin_ns = at, .end_ns = at,
		};
		slice_begin(x, f, &sl);
	}
}

/* ------------------------------------------------------------------------ */
/* Folded stacks                                                            */
/* ------------------------------------------------------------------------ */

/* The time of a node's hidden children (--no-leaf) and theirs. */
static int64_t hidden_ns(const struct report_settings *s, const struct node *n)
{
	int64_t ns = 0;
	for (const struct node *c = n->child; c; c = c->next)
		if (!node_shown(s, c))
			ns += c->exclusive_ns + hidden_ns(s, c);
	return ns;
}

static const char *stack_name(const exporter *x, const struct fold_stack *st)
{
	return st->name ? st->name : x->fold_names.data + st->name_offset;
}

/*
 * A name right below the queue, thread or timeline with every run of
 * digits that is the frame's number made '#', as crumbs stats names its
 * rows: 'Frame 12' and 'Frame 13' are one stack, 'Frame #'. Kept in
 * fold_names; NULL when the name has no such run (or out of memory,
 * x->failed).
 */
static const char *frame_merged(exporter *x, const char *name, size_t *len)
{
	size_t n = *len, start = x->fold_names.len;
	bool found = false;
	for (size_t i = 0; i < n;) {
		if (name[i] < '0' || name[i] > '9') {
			sbuf_add(&x->fold_names, name + i++, 1);
			continue;
		}
		size_t j = i;
		while (j < n && name[j] >= '0' && name[j] <= '9')
			j++;
		if (j - i == x->fold_number_len && memcmp(name + i, x->fold_number, j - i) == 0) {
			sbuf_adds(&x->fold_names, "#");
			found = true;
		} else {
			sbuf_add(&x->fold_names, name + i, j - i);
		}
		i = j;
	}
	if (x->fold_names.failed)
		x->failed = true;
	if (!found || x->failed) {
		x->fold_names.len = start;
		return NULL;
	}
	*len = x->fold_names.len - start;
	return x->fold_names.data + start;
}

static uint64_t stack_hash(uint32_t parent, const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull);
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static bool stack_slots_grow(exporter *x)
{
	size_t cap = x->slot_cap ? x->slot_cap * 2 : 256;
	uint32_t *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return false;
	for (size_t i = 1; i < x->stack_count; i++) {
		const struct fold_stack *st = &x->stacks[i];
		size_t j = stack_hash(st->parent, stack_name(x, st), st->name_len) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(x->stack_slots);
	x->stack_slots = slots;
	x->slot_cap = cap;
	return true;
}

/* The stack of that name below `parent`, made when new; FOLD_NONE when
 * out of memory. A name in fold_names (`owned`) is kept by its offset. */
static uint32_t fold_stack(exporter *x, uint32_t parent, const char *name, size_t len, bool owned)
{
	if ((x->stack_count + 1) * 2 > x->slot_cap && !stack_slots_grow(x))
		return FOLD_NONE;
	size_t mask = x->slot_cap - 1, j = stack_hash(parent, name, len) & mask;
	for (; x->stack_slots[j]; j = (j + 1) & mask) {
		const struct fold_stack *st = &x->stacks[x->stack_slots[j] - 1];
		if (st->parent == parent && st->name_len == len &&
		    memcmp(stack_name(x, st), name, len) == 0)
			return x->stack_slots[j] - 1;
	}
	if (!array_room((void **)&x->stacks, &x->stack_cap, x->stack_count + 1, sizeof(*x->stacks)))
		return FOLD_NONE;
	x->stacks[x->stack_count] = (struct fold_stack){
		parent, (uint32_t)len, owned ? NULL : name,
		owned ? (uint32_t)(name - x->fold_names.data) : 0, 0 };
	x->stack_slots[j] = (uint32_t)++x->stack_count;
	return (uint32_t)x->stack_count - 1;
}

static void fold_node(exporter *x, uint32_t parent, const struct node *n, uint32_t level);

static void fold_children(exporter *x, uint32_t parent, const struct node *n, uint32_t level)
{
	for (const struct node *c = n->child; c; c = c->next) {
		if (node_shown(&x->es->report, c))
			fold_node(x, parent, c, level);
		else
			fold_children(x, parent, c, level);
	}
}

/* A node's weight added to its stack's: at the depth limit its whole
 * subtree's time, else its own and that of its hidden children. */
static void fold_node(exporter *x, uint32_t parent, const struct node *n, uint32_t level)
{
	const struct report_settings *s = &x->es->report;
	uint32_t here = parent;
	if (x->failed)
		return;
	if (n != x->fold_root) {
		const char *name = NULL;
		size_t len = n->name_len;
		if (n->depth == 1 && !x->es->per_frame)
			name = frame_merged(x, n->name, &len);
		here = name ? fold_stack(x, parent, name, len, true) :
			      fold_stack(x, parent, n->name, n->name_len, false);
		if (here == FOLD_NONE || x->failed) {
			x->failed = true;
			return;
		}
	}
	/* The queue's own stack is the one before all others. */
	int64_t *ns = here == FOLD_NONE ? &x->stacks[0].ns : &x->stacks[here].ns;
	if (s->max_depth >= 0 && level >= (uint32_t)s->max_depth) {
		*ns += n->inclusive_ns;
	} else {
		*ns += n->exclusive_ns + hidden_ns(s, n);
		fold_children(x, here, n, level + 1);
	}
}

static void fold_matches(exporter *x, const struct node *n)
{
	const struct report_settings *s = &x->es->report;
	for (const struct node *c = n->child; c; c = c->next) {
		if (node_shown(s, c) && filter_match_root(s->filter, c->name, c->name_len))
			fold_node(x, FOLD_NONE, c, 0);
		else
			fold_matches(x, c);
	}
}

/* Stack i's line, "GPU 0;Graphics 0;Frame 2;Post Processing NS". */
static void fold_line(exporter *x, const struct sbuf *queue, uint32_t i)
{
	uint32_t chain[STATS_PATH_MAX];
	size_t n = 0;
	struct sbuf *b = out_of(x);
	for (uint32_t k = i; k != FOLD_NONE && n < STATS_PATH_MAX; k = x->stacks[k].parent)
		chain[n++] = k;
	sbuf_add(b, queue->data, queue->len);
	while (n-- > 0) {
		sbuf_adds(b, ";");
		clean_name(b, stack_name(x, &x->stacks[chain[n]]), x->stacks[chain[n]].name_len, true);
	}
	sbuf_addf(b, " %lld\n", (long long)x->stacks[i].ns);
}

/* The folded stacks of a tree whose lines begin with x->name (a queue's,
 * "GPU 0;Graphics 0", a thread's, "CPU;Main Thread", or a timeline's,
 * "Tasks;Loading"): the nodes of one stack in the frame summed, a line
 * for each stack with time, in the order they first appear. On a
 * timeline, --root matches tasks alone. */
static void fold_tree(exporter *x, const struct node *root, bool tasks)
{
	struct sbuf *queue = &x->name;
	if (x->slot_cap)
		memset(x->stack_slots, 0, x->slot_cap * sizeof(*x->stack_slots));
	/* Stack 0 is the queue's own, which no scope's name finds. */
	if (!array_room((void **)&x->stacks, &x->stack_cap, 1, sizeof(*x->stacks))) {
		x->failed = true;
		return;
	}
	x->stacks[0] = (struct fold_stack){ FOLD_NONE, 0, "", 0, 0 };
	x->stack_count = 1;
	x->fold_names.len = 0;
	x->fold_root = root;
	if (x->es->report.root_count && tasks) {
		const struct report_settings *s = &x->es->report;
		for (const struct node *c = root->child; c; c = c->next)
			if (filter_match_root(s->filter, c->name, c->name_len))
				fold_node(x, FOLD_NONE, c, 0);
	} else if (x->es->report.root_count) {
		fold_matches(x, root);
	} else {
		fold_node(x, FOLD_NONE, root, 0);
	}
	for (uint32_t i = 0; i < x->stack_count && !x->failed; i++) {
		if (x->stacks[i].ns <= 0)
			continue;
		if (i == 0) {
			sbuf_add(out_of(x), queue->data, queue->len);
			sbuf_addf(out_of(x), " %lld\n", (long long)x->stacks[0].ns);
		} else {
			fold_line(x, queue, i);
		}
		flush(x, false);
	}
	if (queue->failed)
		x->failed = true;
}

static void fold_queue(exporter *x, const struct capture_meta *meta, const struct frame *f,
		       uint32_t q)
{
	x->name.len = 0;
	sbuf_addf(&x->name, "GPU %u;", meta->queues[q].gpu);
	clean_name(&x->name, meta->queues[q].name, strlen(meta->queues[q].name), true);
	fold_tree(x, f->queues[q].root, false);
}

/* A frame's CPU threads, "CPU;Main Thread;Frame;Render 1234" (an unnamed
 * thread's "thread N"), and task timelines, "Tasks;Loading;Load mesh;Running
 * 1234": a thread's weights add up to its scopes' time, a timeline's to
 * its tasks'. */
static void fold_cpu(exporter *x, const struct frame *f)
{
	for (uint32_t t = 0; t < f->cpu_thread_count && !x->failed; t++) {
		const struct frame_cpu_thread *ct = &f->cpu_threads[t];
		bool tasks = ct->kind == FRAME_CPU_TIMELINE;
		x->name.len = 0;
		sbuf_adds(&x->name, tasks ? "Tasks;" : "CPU;");
		if (ct->name_len == 0)
			sbuf_addf(&x->name, "thread %u", ct->tid);
		else
			clean_name(&x->name, ct->name, ct->name_len, true);
		fold_tree(x, ct->root, tasks);
	}
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

/* The earliest time a frame's slices, instants and counters begin at
 * (the frame's CPU begin, or before it an idle that reaches into it); 0
 * when it has none. */
static int64_t frame_start(const struct frame *f)
{
	int64_t t = f->cpu_begin_ns;
	for (uint32_t g = 0; g < f->gpu_count; g++)
		if (f->gpus[g].begin_ns != INT64_MIN && f->gpus[g].begin_ns < t)
			t = f->gpus[g].begin_ns;
	for (uint32_t i = 0; i < f->submission_count; i++) {
		const struct submission *sub = &f->submissions[i];
		int64_t at[4] = { sub->cpu_ns, sub->begin_ns,
				  sub->idle_ns > 0 ? sub->idle_begin_ns : INT64_MAX,
				  sub->waits > 0 ? sub->wait_begin_ns : INT64_MAX };
		for (int k = 0; k < 4; k++)
			if (at[k] != INT64_MIN && at[k] < t)
				t = at[k];
	}
	for (uint32_t q = 0; q < f->queue_count; q++)
		for (const struct node *c = f->queues[q].root->child; c; c = c->next)
			if (c->begin_ns != INT64_MIN && c->begin_ns < t)
				t = c->begin_ns;
	for (uint32_t i = 0; i < f->cpu_thread_count; i++)
		for (const struct node *c = f->cpu_threads[i].root->child; c; c = c->next)
			if (c->begin_ns != INT64_MIN && c->begin_ns < t)
				t = c->begin_ns;
	for (uint32_t m = 0; m < f->mark_count; m++)
		if (f->marks[m].ns < t)
			t = f->marks[m].ns;
	return t == INT64_MIN || t == INT64_MAX ? 0 : t;
}

/* Chrome's opening: times count from the origin, which otherData holds,
 * so that they are small numbers (exact as doubles to well below a
 * nanosecond). */
static void chrome_open(exporter *x)
{
	if (x->es->format == EXPORT_CHROME)
		sbuf_addf(out_of(x), "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"start_ns\":%lld},"
			  "\"traceEvents\":[", (long long)x->origin_ns);
}

/* Chrome: a global instant where each frame begins, named and with the
 * argument frame, its number. Its events follow it in the file. (Slices
 * carry no arguments: speedscope adds them to the name, and each frame's
 * scope would be a function of its own.) */
static void chrome_frame(exporter *x, const struct frame *f)
{
	struct sbuf *b = chrome_event(x);
	sbuf_addf(b, "\"ph\":\"i\",\"s\":\"g\",\"name\":\"Frame %llu\",\"cat\":\"frames\","
		     "\"pid\":%u,\"tid\":0,\"ts\":", (unsigned long long)f->number, CPU_PID);
	chrome_us(x, b, frame_start(f) == 0 ? x->origin_ns : frame_start(f));
	sbuf_addf(b, ",\"args\":{\"frame\":%llu}}", (unsigned long long)f->number);
}

/* The trace's opening, and the tracks of GPUs and queues not seen before
 * (setup chunks may add them between frames). */
static void declare(exporter *x, const struct capture_meta *meta, const struct frame *f)
{
	const struct report_settings *s = &x->es->report;
	if (!x->started) {
		x->origin_ns = frame_start(f);
		chrome_open(x);
		x->started = true;
	}
	if (x->es->format == EXPORT_FOLDED)
		return;
	for (uint32_t g = x->gpus_declared; g < meta->gpu_count; g++) {
		if (s->gpu >= 0 && (uint32_t)s->gpu != g)
			continue;
		if (x->es->format == EXPORT_PERFETTO)
			perfetto_process(x, meta, g);
		else
			chrome_process(x, meta, g);
	}
	x->gpus_declared = meta->gpu_count;
	for (uint32_t q = x->queues_declared; q < meta->queue_count; q++) {
		const struct capture_queue *cq = &meta->queues[q];
		if ((s->gpu >= 0 && (uint32_t)s->gpu != cq->gpu) || !report_selects_queue(s, cq->name))
			continue;
		if (x->es->format == EXPORT_PERFETTO)
			perfetto_queue(x, meta, q);
		else
			chrome_queue(x, meta, q);
	}
	x->queues_declared = meta->queue_count;
}

/* ------------------------------------------------------------------------ */
/* Presentation (format 1.5)                                                */
/* ------------------------------------------------------------------------ */

/* Its tracks: counters of the intervals from present call to present
 * call and from shown to shown, and the presents as instants. */
enum { UUID_PRESENT = 8 };
enum { PRESENT_TRACK_CPU, PRESENT_TRACK_SHOWN, PRESENT_TRACK_CALLS };
static const char *const present_track_names[] = { "Present interval (CPU)",
						     "Present interval (shown)", "Presents" };

static void present_declare(exporter *x)
{
	x->presents_declared = true;
	if (x->es->format != EXPORT_PERFETTO)
		return;
	for (uint32_t k = 0; k < 3; k++) {
		packet_open(x, 0);
		pb_open(x);
		pb_varint(x, DESCRIPTOR_UUID, track_uuid(UUID_PRESENT, k));
		pb_string(x, DESCRIPTOR_NAME, present_track_names[k], strlen(present_track_names[k]));
		if (k != PRESENT_TRACK_CALLS) {
			pb_open(x);
			pb_varint(x, COUNTER_UNIT, UNIT_TIME_NS);
			pb_close(x, DESCRIPTOR_COUNTER);
		}
		pb_close(x, PACKET_TRACK_DESCRIPTOR);
		packet_close(x);
	}
}

/* A value of counter track k at ns; Chrome's "C" event of that name. */
static void present_counter(exporter *x, uint32_t k, int64_t ns, int64_t value, uint64_t swapchain)
{
	if (x->es->format == EXPORT_PERFETTO) {
		pb_counter(x, track_uuid(UUID_PRESENT, k), ns, (uint64_t)value);
		return;
	}
	struct sbuf *b = chrome_event(x);
	sbuf_addf(b, "\"ph\":\"C\",\"name\":\"%s\",\"pid\":%u,\"ts\":", present_track_names[k],
		  CPU_PID);
	chrome_us(x, b, ns);
	sbuf_addf(b, ",\"args\":{\"ns\":%lld,\"swapchain\":%llu}}", (long long)value,
		  (unsigned long long)swapchain);
}

/* A present, as an instant where its call began. */
static void present_instant(exporter *x, const struct frame_present *p)
{
	static const char name[] = "vkQueuePresentKHR";
	if (x->es->format == EXPORT_PERFETTO) {
		bool fresh;
		uint64_t iid = intern(x, name, sizeof(name) - 1, &fresh);
		packet_open(x, SEQ_NEEDS_INCREMENTAL_STATE);
		pb_timestamp(x, p->cpu_ns);
		pb_open(x);
		pb_varint(x, EVENT_TYPE, TYPE_INSTANT);
		pb_varint(x, EVENT_TRACK_UUID, track_uuid(UUID_PRESENT, PRESENT_TRACK_CALLS));
		pb_varint(x, EVENT_NAME_IID, iid);
		pb_uint_arg(x, "swapchain", p->swapchain);
		pb_uint_arg(x, "present_id", p->id);
		pb_uint_arg(x, "call_ns", (uint64_t)p->duration_ns);
		pb_close(x, PACKET_TRACK_EVENT);
		packet_close(x);
		return;
	}
	struct sbuf *b = chrome_event(x);
	sbuf_addf(b, "\"ph\":\"i\",\"s\":\"p\",\"name\":\"%s\",\"cat\":\"presents\",\"pid\":%u,"
		     "\"tid\":0,\"ts\":", name, CPU_PID);
	chrome_us(x, b, p->cpu_ns);
	sbuf_addf(b, ",\"args\":{\"swapchain\":%llu,\"present_id\":%llu,\"call_ns\":%lld}}",
		  (unsigned long long)p->swapchain, (unsigned long long)p->id,
		  (long long)p->duration_ns);
}

static struct export_swapchain *export_swapchain(exporter *x, uint64_t swapchain)
{
	size_t n = sizeof(x->swapchains) / sizeof(x->swapchains[0]);
	for (size_t i = 0; i < n; i++)
		if (x->swapchains[i].used && x->swapchains[i].swapchain == swapchain)
			return &x->swapchains[i];
	for (size_t i = 0; i < n; i++)
		if (!x->swapchains[i].used) {
			x->swapchains[i] = (struct export_swapchain){ swapchain, true, INT64_MIN,
								      INT64_MIN, 0 };
			return &x->swapchains[i];
		}
	return NULL; /* past the swapchains followed: their presents are instants alone */
}

/*
 * A frame's presents: an instant each, and the interval from the last
 * present to its swapchain (the CPU's clock) as a counter at its call;
 * each shown time, the interval from the one before on its swapchain and
 * source, at the shown time where that is on the CPU's clock (present
 * wait), else at the frame's start (display timing's clock is the
 * display's).
 */
static void write_presents(exporter *x, const struct frame *f)
{
	if ((!f->present_count && !f->shown_count) || !x->cpu_shown)
		return;
	if (!x->presents_declared)
		present_declare(x);
	for (uint32_t i = 0; i < f->present_count; i++) {
		const struct frame_present *p = &f->presents[i];
		if (p->flags & CRUMBS_PRESENT_FAILED)
			continue;
		present_instant(x, p);
		struct export_swapchain *sc = export_swapchain(x, p->swapchain);
		if (!sc)
			continue;
		if (sc->last_cpu_ns != INT64_MIN && p->cpu_ns >= sc->last_cpu_ns)
			present_counter(x, PRESENT_TRACK_CPU, p->cpu_ns, p->cpu_ns - sc->last_cpu_ns,
					p->swapchain);
		sc->last_cpu_ns = p->cpu_ns;
	}
	for (uint32_t i = 0; i < f->shown_count; i++) {
		const struct frame_shown *sh = &f->shown[i];
		struct export_swapchain *sc = export_swapchain(x, sh->swapchain);
		if (!sc)
			continue;
		if (sc->last_shown_ns != INT64_MIN && sc->last_source == sh->source &&
		    sh->shown_ns >= sc->last_shown_ns)
			present_counter(x, PRESENT_TRACK_SHOWN,
					sh->source == CRUMBS_SHOWN_PRESENT_WAIT ? sh->shown_ns :
										  frame_start(f),
					sh->shown_ns - sc->last_shown_ns, sh->swapchain);
		sc->last_shown_ns = sh->shown_ns;
		sc->last_source = sh->source;
	}
}

int exporter_frame(exporter *x, const struct capture_meta *meta, const struct frame *f)
{
	const struct report_settings *s = &x->es->report;
	if (x->failed)
		return -1;
	x->meta = meta;
	declare(x, meta, f);

	/* Which queues, and where each track got to. */
	if (!array_room((void **)&x->selected, &x->selected_cap, f->queue_count + 1, 1)) {
		x->failed = true;
		return -1;
	}
	if (f->queue_count > x->cursor_count) {
		int64_t (*c)[TRACK_KINDS] = realloc(x->cursor, f->queue_count * sizeof(*c));
		if (!c) {
			x->failed = true;
			return -1;
		}
		for (uint32_t q = x->cursor_count; q < f->queue_count; q++)
			for (int k = 0; k < TRACK_KINDS; k++)
				c[q][k] = INT64_MIN;
		x->cursor = c;
		x->cursor_count = f->queue_count;
	}
	for (uint32_t q = 0; q < f->queue_count; q++) {
		const struct capture_queue *cq = &meta->queues[q];
		x->selected[q] = (s->gpu < 0 || (uint32_t)s->gpu == cq->gpu) &&
				 report_selects_queue(s, cq->name);
	}

	if (x->es->format == EXPORT_FOLDED) {
		int len = snprintf(x->fold_number, sizeof(x->fold_number), "%llu",
				   (unsigned long long)f->number);
		x->fold_number_len = len > 0 ? (size_t)len : 0;
		for (uint32_t q = 0; q < f->queue_count && !x->failed; q++)
			if (x->selected[q])
				fold_queue(x, meta, f, q);
		if (x->cpu_shown)
			fold_cpu(x, f);
	} else {
		if (x->es->format == EXPORT_CHROME)
			chrome_frame(x, f);
		for (uint32_t g = 0; g < f->gpu_count; g++) {
			const struct frame_gpu *fg = &f->gpus[g];
			if ((s->gpu < 0 || (uint32_t)s->gpu == g) && fg->begin_ns != INT64_MIN)
				counter(x, g, fg->begin_ns, fg->frame_ns);
		}
		memory_counters(x, f);
		if (!index_releases(x, f))
			x->failed = true;
		if (!x->failed)
			cpu_prepare(x, f);
		if (!x->failed)
			write_cpu(x, f);
		if (!x->failed)
			write_presents(x, f);
		for (uint32_t q = 0; q < f->queue_count && !x->failed; q++)
			if (x->selected[q])
				write_queue(x, f, q, meta->queues[q].gpu);
		x->next_flow += 2 * (uint64_t)f->submission_count + f->release_count +
				f->task_dep_count;
	}
	flush(x, false);
	return x->failed ? -1 : 0;
}

bool exporter_over_limit(const exporter *x)
{
	return x->over_limit;
}

uint64_t exporter_bytes(const exporter *x)
{
	return x->written;
}

int exporter_end(exporter *x)
{
	if (x->failed)
		return -1;
	if (x->es->format == EXPORT_CHROME) {
		if (!x->started)
			chrome_open(x);
		sbuf_adds(out_of(x), "\n]}\n");
	}
	flush(x, true);
	return x->failed ? -1 : 0;
}
