/* SPDX-License-Identifier: MIT */
/*
 * format.h: the capture format's constants as format/FORMAT.md gives them
 * (magics, sizes, chunk types, record tags, limits) and the codec of the
 * frames around the chunks' bodies, defined once for the writer, the reader
 * and the fuzz targets. Not installed: programs see only the version and
 * the flags, which crumbs_file.h defines.
 */
#ifndef CRUMBS_FORMAT_H
#define CRUMBS_FORMAT_H

#include "../include/crumbs_file.h"

#include <stdbool.h>

/* ------------------------------------------------------------------------ */
/* Frames of the file                                                       */
/* ------------------------------------------------------------------------ */

/* Every frame but a chunk's body is a zstd skippable frame: a 4-byte
 * magic, a 4-byte content size, then the content. */
#define FORMAT_SKIPPABLE_BYTES 8
#define FORMAT_MAGIC_HEADER 0x184D2A50u
#define FORMAT_MAGIC_CHUNK 0x184D2A51u
#define FORMAT_MAGIC_INDEX 0x184D2A52u

/* Header content: the fixed fields, then a producer of P bytes and the
 * CRC-32C. The version is CRUMBS_FORMAT_MAJOR and _MINOR (crumbs_file.h). */
#define FORMAT_SIGNATURE "CRUMBS\x1A\n"
#define FORMAT_SIGNATURE_BYTES 8
#define FORMAT_MAX_PRODUCER 256
#define FORMAT_HEADER_MIN_BYTES 30 /* P = 0 */
#define FORMAT_HEADER_MAX_BYTES (FORMAT_HEADER_MIN_BYTES + FORMAT_MAX_PRODUCER)

/* Chunk header content, and the chunk types. */
#define FORMAT_CHUNK_HEADER_BYTES 40
#define FORMAT_CHUNK_SETUP 1
#define FORMAT_CHUNK_FRAMES 2
#define FORMAT_MAX_CHUNK_BYTES (64u << 20) /* a body, decompressed */

/* Index content: entries, then the trailer that ends the file. */
#define FORMAT_INDEX_ENTRY_BYTES 32
#define FORMAT_INDEX_TRAILER_BYTES 16
#define FORMAT_INDEX_SIGNATURE "CRIX"
#define FORMAT_INDEX_SIGNATURE_BYTES 4

/* ------------------------------------------------------------------------ */
/* Little-endian fields                                                     */
/* ------------------------------------------------------------------------ */

static inline uint16_t format_get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t format_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t format_get64(const unsigned char *p)
{
	return (uint64_t)format_get32(p) | (uint64_t)format_get32(p + 4) << 32;
}

static inline void format_put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void format_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void format_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* ------------------------------------------------------------------------ */
/* The frames around the chunks' bodies, both ways (codec.c)                */
/* ------------------------------------------------------------------------ */

/*
 * The decoders check every rule of FORMAT.md that the bytes given can
 * break, in a fixed order, and return CRUMBS_OK, or:
 * - CRUMBS_ERROR_TRUNCATED: the bytes end before the frame does (the
 *   caller knows where the file ends, and says so);
 * - CRUMBS_ERROR_CORRUPT: a rule fails; `fault` says which, in the words
 *   of "corrupt at byte N (...)", and the caller gives N, the frame's
 *   start;
 * - others, where a decoder says so.
 * Encoders write whole skippable frames, their sizes and checksums
 * included, to memory the caller sized; they check nothing.
 */
struct format_fault {
	char what[64];
};

/* A skippable frame's 8 bytes: its magic and the size of its content. */
struct format_frame {
	uint32_t magic;
	uint32_t size;
};
void format_frame_encode(unsigned char *out, uint32_t magic, uint32_t size);
struct format_frame format_frame_decode(const unsigned char *p);

/* The file header. */
#define FORMAT_HEADER_FRAME_MAX_BYTES (FORMAT_SKIPPABLE_BYTES + FORMAT_HEADER_MAX_BYTES)
struct format_file_header {
	uint16_t major;
	uint16_t minor;
	uint32_t flags;
	uint64_t created_unix_s;
	uint32_t producer_len;         /* at most FORMAT_MAX_PRODUCER */
	const unsigned char *producer; /* decoded: points into the bytes given */
	uint32_t frame_bytes;          /* decoded: the frame's, where chunks begin */
};
/* Writes the header's frame (up to FORMAT_HEADER_FRAME_MAX_BYTES; a longer
 * producer is cut, bytes not characters); returns its size. */
size_t format_file_header_encode(unsigned char *out, const struct format_file_header *h);
/* Decodes the n bytes at the start of a file. Beyond the above: _TRUNCATED
 * also when n bytes are a prefix of a header's first 16; _NOT_CAPTURE
 * when the magic or signature is another's; _VERSION, with major and minor
 * set, for a version this crumbs does not read. */
enum crumbs_result format_file_header_decode(const unsigned char *p, size_t n,
					     struct format_file_header *h,
					     struct format_fault *fault);

/* A chunk header, as a whole skippable frame. */
#define FORMAT_CHUNK_FRAME_BYTES (FORMAT_SKIPPABLE_BYTES + FORMAT_CHUNK_HEADER_BYTES)
struct format_chunk_header {
	uint8_t type;           /* FORMAT_CHUNK_SETUP or _FRAMES */
	uint32_t body_bytes;    /* C */
	uint32_t content_bytes; /* U */
	uint32_t frame_count;   /* F */
	uint64_t first_frame;
	uint64_t last_frame;
	uint32_t body_crc;
};
/* Writes FORMAT_CHUNK_FRAME_BYTES. */
void format_chunk_header_encode(unsigned char *out, const struct format_chunk_header *h);
/* Decodes the n bytes (at most FORMAT_CHUNK_FRAME_BYTES are read) where a
 * chunk header should be. */
enum crumbs_result format_chunk_header_decode(const unsigned char *p, size_t n,
					      struct format_chunk_header *h,
					      struct format_fault *fault);

/* The index: an entry per chunk, then the trailer that ends the file. */
struct format_index_entry {
	uint64_t offset; /* of the chunk header's first byte */
	uint64_t first_frame;
	uint64_t last_frame;
	uint32_t frame_count;
	uint8_t type;
};
struct format_index_trailer {
	uint32_t entry_count;
	uint32_t crc;
	uint32_t frame_bytes; /* the whole index frame's */
};
/* The index frame's size with that many entries. */
uint64_t format_index_frame_bytes(uint64_t entries);
/* Writes the index frame of `count` entries, format_index_frame_bytes(count)
 * of them, which must fit in 32 bits. */
void format_index_encode(unsigned char *out, const struct format_index_entry *entries,
			 uint32_t count);
/* Decodes the FORMAT_INDEX_TRAILER_BYTES that end a file, of which `room`
 * bytes follow the file header. _NOT_FOUND: not a trailer (the file has no
 * index). */
enum crumbs_result format_index_trailer_decode(const unsigned char *p, uint64_t room,
					       struct format_index_trailer *t,
					       struct format_fault *fault);
/* Checks the index frame that trailer t ends, t->frame_bytes at p. */
enum crumbs_result format_index_decode(const unsigned char *p,
				       const struct format_index_trailer *t,
				       struct format_fault *fault);
/* Entry i of the index frame at p, checked by format_index_decode; false
 * when its reserved bytes, type and frame numbers disagree (the caller
 * checks its offset, which only the file can say is right). */
bool format_index_entry_decode(const unsigned char *p, uint32_t i, struct format_index_entry *e);

/* ------------------------------------------------------------------------ */
/* Records inside a chunk body                                              */
/* ------------------------------------------------------------------------ */

enum format_tag {
	/* Any chunk. */
	FORMAT_TAG_STRING = 0x01,
	FORMAT_TAG_CALIBRATION = 0x04,
	/* Setup chunks. */
	FORMAT_TAG_GPU = 0x02,
	FORMAT_TAG_QUEUE = 0x03,
	/* Frames chunks. */
	FORMAT_TAG_FRAME_BEGIN = 0x10,
	FORMAT_TAG_FRAME_END = 0x11,
	FORMAT_TAG_QUEUE_READY = 0x12,
	FORMAT_TAG_SUBMIT = 0x13,
	FORMAT_TAG_SUBMIT_NO_TICKS = 0x14,
	FORMAT_TAG_SUBMIT_END = 0x15,
	FORMAT_TAG_SUBMIT_END_NO_TICKS = 0x16,
	FORMAT_TAG_HOST_SIGNAL = 0x17,
	FORMAT_TAG_SELECT_QUEUE = 0x18,
	FORMAT_TAG_UNRECORDED = 0x19, /* since 1.2 */
	FORMAT_TAG_CPU_THREAD = 0x1A, /* since 1.3 */
	FORMAT_TAG_FRAME_THREAD = 0x1B, /* since 1.4 */
	FORMAT_TAG_TIMELINE_FRAME = 0x1C, /* since 1.4 */
	/* Plus the level, 0 to CRUMBS_DETAIL_MAX. */
	FORMAT_TAG_SCOPE_BEGIN = 0x20,
	FORMAT_TAG_SCOPE_BEGIN_NO_TICKS = 0x24,
	FORMAT_TAG_EVENT_BEGIN = 0x28,
	FORMAT_TAG_EVENT_BEGIN_NO_TICKS = 0x29,
	FORMAT_TAG_SCOPE_END = 0x30,
	FORMAT_TAG_SCOPE_END_NO_TICKS = 0x31,
	FORMAT_TAG_LEAF = 0x38,
	FORMAT_TAG_LEAF_NO_TICKS = 0x39,
	FORMAT_TAG_COUNTS = 0x3A, /* since 1.1 */
	/* Since 1.3; CPU_BEGIN plus the level, 0 to CRUMBS_DETAIL_MAX. */
	FORMAT_TAG_CPU_BEGIN = 0x40,
	FORMAT_TAG_CPU_END = 0x44,
	/* Since 1.4; CPU_WAIT_BEGIN plus the level. */
	FORMAT_TAG_CPU_WAIT_BEGIN = 0x48,
	FORMAT_TAG_TASK_BEGIN = 0x50,
	FORMAT_TAG_TASK_BEGUN_EARLIER = 0x51,
	FORMAT_TAG_TASK_STATE = 0x52,
	FORMAT_TAG_TASK_END = 0x53,
	FORMAT_TAG_TASK_DEPEND = 0x54,
	/* Since 1.5: pipeline statistics (and later other counters). */
	FORMAT_TAG_COUNTERS = 0x58,
	FORMAT_TAG_COUNTERS_UNKNOWN = 0x59,
	FORMAT_TAG_RENDER_AREA = 0x5A,
	FORMAT_TAG_LEAF_COUNTERS = 0x5B,
	FORMAT_TAG_LEAF_COUNTERS_UNKNOWN = 0x5C,
	/* Since 1.5, in setup chunks: vendor counter sets and what each
	 * queue family offers (0x5F is kept for vendor counters). */
	FORMAT_TAG_COUNTER_SET = 0x5D,
	FORMAT_TAG_OFFERED_COUNTER = 0x5E
,
	/* Since 1.5: video memory, 0x60 to 0x67. */
	FORMAT_TAG_MEMORY = 0x60,
	/* Since 1.5: presentation. */
	FORMAT_TAG_PRESENT = 0x68,
	FORMAT_TAG_PRESENT_SHOWN = 0x69
};

/* COUNTER_SET and OFFERED_COUNTER: the largest unit, storage and scope
 * (Vulkan's VkPerformanceCounter*KHR enums), and decimal scale. */
#define FORMAT_MAX_COUNTER_UNIT 10
#define FORMAT_MAX_COUNTER_STORAGE 5
#define FORMAT_MAX_COUNTER_SCOPE 2
#define FORMAT_MAX_COUNTER_SCALE 9
/* OFFERED_COUNTER records a file's setup may hold, over all families;
 * the bytes of a counter's name or category (Vulkan's own limit, less
 * its NUL), so that a setup's counters stay small. */
#define FORMAT_MAX_OFFERED_COUNTERS 16384
#define FORMAT_MAX_COUNTER_NAME 255

/* COUNTERS: the sets of counters a record may name, and the bits of the
 * pipeline-statistics set's mask (VkQueryPipelineStatisticFlagBits'
 * order). A value is below 2^63; a render area's sides at most this. */
#define FORMAT_COUNTER_SET_PIPELINE 0
#define FORMAT_PIPELINE_COUNTER_BITS ((1u << CRUMBS_PIPELINE_COUNTERS) - 1)
#define FORMAT_MAX_RENDER_SIDE (1u << 20)

/* The bits a QUEUE's flags and a FRAME_END's flags may set: the low ones,
 * so each mask is also the largest value. */
#define FORMAT_QUEUE_FLAGS_KNOWN                                             \
	(CRUMBS_QUEUE_GRAPHICS | CRUMBS_QUEUE_COMPUTE | CRUMBS_QUEUE_TRANSFER | \
	 CRUMBS_QUEUE_VIDEO_DECODE | CRUMBS_QUEUE_VIDEO_ENCODE |             \
	 CRUMBS_QUEUE_OPTICAL_FLOW)
#define FORMAT_FRAME_FLAGS_KNOWN                                             \
	(CRUMBS_FRAME_SCOPES_DROPPED | CRUMBS_FRAME_DEVICE_LOST |            \
	 CRUMBS_FRAME_INCOMPLETE | CRUMBS_FRAME_FULL_DETAIL)

/* The bits a MEMORY record's heap flags and its mask may set. */
#define FORMAT_MEMORY_FLAGS_KNOWN (CRUMBS_MEMORY_HEAP_DEVICE_LOCAL | CRUMBS_MEMORY_HEAP_MULTI_INSTANCE)
#define FORMAT_MEMORY_TRACKED 0x01u
#define FORMAT_MEMORY_BUDGET 0x02u

/* A QUEUE's timestamp period (ns per tick) is above 0 and at most this;
 * its valid bits at most these. */
#define FORMAT_MAX_PERIOD_NS 1e6f
#define FORMAT_MAX_VALID_BITS 64

/* ------------------------------------------------------------------------ */
/* Limits                                                                   */
/* ------------------------------------------------------------------------ */

#define FORMAT_MAX_STRING 4096        /* bytes */
#define FORMAT_MAX_GPUS 64
#define FORMAT_MAX_QUEUES 256         /* of all GPUs */
#define FORMAT_MAX_SEMAPHORE_OPS 1024 /* waits, and signals, of a submission */
#define FORMAT_MAX_DEPTH 255          /* scopes open on one queue, or on
				       * one CPU thread */
#define FORMAT_MAX_CPU_THREADS 256    /* distinct CPU threads of a frame */
#define FORMAT_MAX_TIMELINES 256      /* distinct task timelines of a frame,
				       * and distinct timelines of its
				       * TIMELINE_FRAMEs */

/* What one frame and one chunk may hold, so that a reader's memory is
 * bounded by them rather than by how far a chunk's 64 MiB stretch:
 * decoded, a record takes tens of bytes and a node of the model hundreds,
 * and a name is copied into every table row and every trace event that
 * shows it. */
#define FORMAT_MAX_FRAME_RECORDS (1u << 20) /* FRAME_BEGIN to FRAME_END, each
					     * semaphore operation one more */
#define FORMAT_MAX_FRAME_NODES (1u << 18)   /* SCOPE_BEGIN, EVENT_BEGIN and
					     * LEAF records of a frame */
#define FORMAT_MAX_FRAME_NAME_BYTES (16u << 20) /* their names' bytes, a name
						 * counted at each record */
#define FORMAT_MAX_CHUNK_STRINGS (1u << 21) /* STRING records of a chunk */
/* Since 1.5: a PRESENT's duration and refresh period, and the largest
 * present mode and flags. */
#define FORMAT_MAX_PRESENT_NS (1ull << 40)
#define FORMAT_MAX_REFRESH_NS 10000000000ull
#define FORMAT_MAX_PRESENT_MODE CRUMBS_PRESENT_MODE_OTHER
#define FORMAT_PRESENT_FLAGS_KNOWN (CRUMBS_PRESENT_FAILED | CRUMBS_PRESENT_SUBOPTIMAL)

/* The most a chunk's body may take for U bytes of content: zstd's bound
 * for one frame of them (ZSTD_COMPRESSBOUND), rounded up to a rule that
 * reads simply. */
static inline uint64_t format_max_body_bytes(uint32_t content_bytes)
{
	return (uint64_t)content_bytes + content_bytes / 256 + 64;
}

#endif
