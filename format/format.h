/*
 * format.h: the capture format's constants as format/FORMAT.md gives them
 * (magics, sizes, chunk types, record tags, limits), defined once for the
 * writer, the reader and the fuzz targets. Not installed: programs see only
 * the version and the flags, which crumbs_file.h defines.
 */
#ifndef CRUMBS_FORMAT_H
#define CRUMBS_FORMAT_H

#include "../include/crumbs_file.h"

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
	/* Plus the level, 0 to CRUMBS_DETAIL_MAX. */
	FORMAT_TAG_SCOPE_BEGIN = 0x20,
	FORMAT_TAG_SCOPE_BEGIN_NO_TICKS = 0x24,
	FORMAT_TAG_EVENT_BEGIN = 0x28,
	FORMAT_TAG_EVENT_BEGIN_NO_TICKS = 0x29,
	FORMAT_TAG_SCOPE_END = 0x30,
	FORMAT_TAG_SCOPE_END_NO_TICKS = 0x31,
	FORMAT_TAG_LEAF = 0x38,
	FORMAT_TAG_LEAF_NO_TICKS = 0x39,
	FORMAT_TAG_COUNTS = 0x3A /* since 1.1 */
};

/* The bits a QUEUE's flags and a FRAME_END's flags may set: the low ones,
 * so each mask is also the largest value. */
#define FORMAT_QUEUE_FLAGS_KNOWN                                             \
	(CRUMBS_QUEUE_GRAPHICS | CRUMBS_QUEUE_COMPUTE | CRUMBS_QUEUE_TRANSFER | \
	 CRUMBS_QUEUE_VIDEO_DECODE | CRUMBS_QUEUE_VIDEO_ENCODE |             \
	 CRUMBS_QUEUE_OPTICAL_FLOW)
#define FORMAT_FRAME_FLAGS_KNOWN                                             \
	(CRUMBS_FRAME_SCOPES_DROPPED | CRUMBS_FRAME_DEVICE_LOST |            \
	 CRUMBS_FRAME_INCOMPLETE | CRUMBS_FRAME_FULL_DETAIL)

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
#define FORMAT_MAX_DEPTH 255          /* scopes open on one queue */

#endif
