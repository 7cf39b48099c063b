/* SPDX-License-Identifier: MIT */
/*
 * codec.c: the frames of a capture file around the chunks' bodies, both
 * ways: the file header, the chunk header and the index (entries and
 * trailer), as format/FORMAT.md lays them out. Each field's offset is named
 * once here; the writer encodes through it, the reader decodes through it.
 */
#include "format.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A skippable frame: its magic, then the size of its content. */
enum { FRAME_MAGIC = 0, FRAME_SIZE = 4 };

/* The header's content ("Header"): the producer, of P bytes, then the
 * CRC-32C of all before it. */
enum {
	HEADER_SIGNATURE = 0,
	HEADER_MAJOR = 8,
	HEADER_MINOR = 10,
	HEADER_FLAGS = 12,
	HEADER_CREATED = 16,
	HEADER_PRODUCER_LEN = 24,
	HEADER_PRODUCER = 26,
};
_Static_assert(HEADER_PRODUCER + 4 == FORMAT_HEADER_MIN_BYTES, "header without a producer");

/* The chunk header's content ("Chunks"). */
enum {
	CHUNK_TYPE = 0,
	CHUNK_RESERVED = 1, /* 3 bytes of zero */
	CHUNK_BODY_BYTES = 4,
	CHUNK_CONTENT_BYTES = 8,
	CHUNK_FRAME_COUNT = 12,
	CHUNK_FIRST_FRAME = 16,
	CHUNK_LAST_FRAME = 24,
	CHUNK_BODY_CRC = 32,
	CHUNK_HEADER_CRC = 36,
};
_Static_assert(CHUNK_HEADER_CRC + 4 == FORMAT_CHUNK_HEADER_BYTES, "chunk header size");

/* An index entry ("Index"). */
enum {
	ENTRY_OFFSET = 0,
	ENTRY_FIRST_FRAME = 8,
	ENTRY_LAST_FRAME = 16,
	ENTRY_FRAME_COUNT = 24,
	ENTRY_TYPE = 28,
	ENTRY_RESERVED = 29, /* 3 bytes of zero */
};
_Static_assert(ENTRY_RESERVED + 3 == FORMAT_INDEX_ENTRY_BYTES, "index entry size");

/* The index's trailer. */
enum {
	TRAILER_ENTRY_COUNT = 0,
	TRAILER_CRC = 4,
	TRAILER_FRAME_BYTES = 8,
	TRAILER_SIGNATURE = 12,
};
_Static_assert(TRAILER_SIGNATURE + FORMAT_INDEX_SIGNATURE_BYTES == FORMAT_INDEX_TRAILER_BYTES,
	       "index trailer size");

/* The decoders' CRUMBS_ERROR_CORRUPT, saying what is wrong. */
__attribute__((format(printf, 2, 3)))
static enum crumbs_result corrupt(struct format_fault *fault, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fault->what, sizeof(fault->what), fmt, ap);
	va_end(ap);
	return CRUMBS_ERROR_CORRUPT;
}

/* What is wrong with a chunk's type and frame numbers, which its header
 * and its index entry both give; NULL if nothing. */
static const char *chunk_frames_fault(uint8_t type, uint32_t frames, uint64_t first,
				      uint64_t last)
{
	if (type == FORMAT_CHUNK_SETUP)
		return frames || first || last ? "a setup chunk holds no frames" : NULL;
	if (type == FORMAT_CHUNK_FRAMES)
		return frames == 0 || first > last || last - first < frames - 1 ?
			       "frame numbers of the chunk are inconsistent" : NULL;
	return "unknown chunk type";
}

/* ------------------------------------------------------------------------ */
/* Skippable frames                                                         */
/* ------------------------------------------------------------------------ */

void format_frame_encode(unsigned char *out, uint32_t magic, uint32_t size)
{
	format_put32(out + FRAME_MAGIC, magic);
	format_put32(out + FRAME_SIZE, size);
}

struct format_frame format_frame_decode(const unsigned char *p)
{
	return (struct format_frame){ format_get32(p + FRAME_MAGIC), format_get32(p + FRAME_SIZE) };
}

/* ------------------------------------------------------------------------ */
/* The file header                                                          */
/* ------------------------------------------------------------------------ */

size_t format_file_header_encode(unsigned char *out, const struct format_file_header *h)
{
	size_t plen = h->producer_len < FORMAT_MAX_PRODUCER ? h->producer_len : FORMAT_MAX_PRODUCER;
	unsigned char *p = out + FORMAT_SKIPPABLE_BYTES;

	format_frame_encode(out, FORMAT_MAGIC_HEADER, (uint32_t)(FORMAT_HEADER_MIN_BYTES + plen));
	memcpy(p + HEADER_SIGNATURE, FORMAT_SIGNATURE, FORMAT_SIGNATURE_BYTES);
	format_put16(p + HEADER_MAJOR, h->major);
	format_put16(p + HEADER_MINOR, h->minor);
	format_put32(p + HEADER_FLAGS, h->flags);
	format_put64(p + HEADER_CREATED, h->created_unix_s);
	format_put16(p + HEADER_PRODUCER_LEN, (uint16_t)plen);
	if (plen)
		memcpy(p + HEADER_PRODUCER, h->producer, plen);
	format_put32(p + HEADER_PRODUCER + plen, crumbs_crc32c(0, p, HEADER_PRODUCER + plen));
	return FORMAT_SKIPPABLE_BYTES + FORMAT_HEADER_MIN_BYTES + plen;
}

/* Whether n bytes, fewer than the magic and the signature, begin them. */
static bool header_prefix(const unsigned char *p, size_t n)
{
	unsigned char magic[FORMAT_SKIPPABLE_BYTES];
	format_frame_encode(magic, FORMAT_MAGIC_HEADER, 0);
	size_t cmp = n < FRAME_SIZE ? n : FRAME_SIZE;
	return memcmp(p, magic, cmp) == 0 &&
	       (n <= FORMAT_SKIPPABLE_BYTES ||
		memcmp(p + FORMAT_SKIPPABLE_BYTES, FORMAT_SIGNATURE, n - FORMAT_SKIPPABLE_BYTES) == 0);
}

enum crumbs_result format_file_header_decode(const unsigned char *p, size_t n,
					     struct format_file_header *h,
					     struct format_fault *fault)
{
	const unsigned char *c = p + FORMAT_SKIPPABLE_BYTES; /* the content */

	/* A prefix of a header is a cut capture; anything else is not one. */
	if (n < FORMAT_SKIPPABLE_BYTES + FORMAT_SIGNATURE_BYTES)
		return n == 0 || header_prefix(p, n) ? CRUMBS_ERROR_TRUNCATED :
						       CRUMBS_ERROR_NOT_CAPTURE;
	struct format_frame frame = format_frame_decode(p);
	if (frame.magic != FORMAT_MAGIC_HEADER ||
	    memcmp(c + HEADER_SIGNATURE, FORMAT_SIGNATURE, FORMAT_SIGNATURE_BYTES) != 0)
		return CRUMBS_ERROR_NOT_CAPTURE;
	if (frame.size < FORMAT_HEADER_MIN_BYTES || frame.size > FORMAT_HEADER_MAX_BYTES)
		return corrupt(fault, "header size out of range");
	if (n < FORMAT_SKIPPABLE_BYTES + frame.size)
		return CRUMBS_ERROR_TRUNCATED;
	uint32_t plen = format_get16(c + HEADER_PRODUCER_LEN);
	if (plen != frame.size - FORMAT_HEADER_MIN_BYTES)
		return corrupt(fault, "header sizes are inconsistent");
	if (crumbs_crc32c(0, c, HEADER_PRODUCER + plen) != format_get32(c + HEADER_PRODUCER + plen))
		return corrupt(fault, "header checksum mismatch");
	h->major = format_get16(c + HEADER_MAJOR);
	h->minor = format_get16(c + HEADER_MINOR);
	if (h->major != CRUMBS_FORMAT_MAJOR || h->minor > CRUMBS_FORMAT_MINOR)
		return CRUMBS_ERROR_VERSION;
	h->flags = format_get32(c + HEADER_FLAGS);
	if (h->flags != 0)
		return corrupt(fault, "unknown header flags");
	for (size_t i = 0; i < plen;) {
		size_t len = crumbs_utf8_sequence(c + HEADER_PRODUCER + i, plen - i);
		if (!len)
			return corrupt(fault, "producer is not valid UTF-8");
		i += len;
	}
	h->created_unix_s = format_get64(c + HEADER_CREATED);
	h->producer_len = plen;
	h->producer = c + HEADER_PRODUCER;
	h->frame_bytes = FORMAT_SKIPPABLE_BYTES + frame.size;
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* Chunk headers                                                            */
/* ------------------------------------------------------------------------ */

void format_chunk_header_encode(unsigned char *out, const struct format_chunk_header *h)
{
	unsigned char *p = out + FORMAT_SKIPPABLE_BYTES;

	format_frame_encode(out, FORMAT_MAGIC_CHUNK, FORMAT_CHUNK_HEADER_BYTES);
	memset(p, 0, FORMAT_CHUNK_HEADER_BYTES);
	p[CHUNK_TYPE] = h->type;
	format_put32(p + CHUNK_BODY_BYTES, h->body_bytes);
	format_put32(p + CHUNK_CONTENT_BYTES, h->content_bytes);
	format_put32(p + CHUNK_FRAME_COUNT, h->frame_count);
	format_put64(p + CHUNK_FIRST_FRAME, h->first_frame);
	format_put64(p + CHUNK_LAST_FRAME, h->last_frame);
	format_put32(p + CHUNK_BODY_CRC, h->body_crc);
	format_put32(p + CHUNK_HEADER_CRC, crumbs_crc32c(0, p, CHUNK_HEADER_CRC));
}

enum crumbs_result format_chunk_header_decode(const unsigned char *p, size_t n,
					      struct format_chunk_header *h,
					      struct format_fault *fault)
{
	const unsigned char *c = p + FORMAT_SKIPPABLE_BYTES;

	if (n < FORMAT_CHUNK_FRAME_BYTES)
		return CRUMBS_ERROR_TRUNCATED;
	struct format_frame frame = format_frame_decode(p);
	if (frame.magic != FORMAT_MAGIC_CHUNK || frame.size != FORMAT_CHUNK_HEADER_BYTES)
		return corrupt(fault, "expected a chunk header");
	if (crumbs_crc32c(0, c, CHUNK_HEADER_CRC) != format_get32(c + CHUNK_HEADER_CRC))
		return corrupt(fault, "chunk header checksum mismatch");
	h->type = c[CHUNK_TYPE];
	h->body_bytes = format_get32(c + CHUNK_BODY_BYTES);
	h->content_bytes = format_get32(c + CHUNK_CONTENT_BYTES);
	h->frame_count = format_get32(c + CHUNK_FRAME_COUNT);
	h->first_frame = format_get64(c + CHUNK_FIRST_FRAME);
	h->last_frame = format_get64(c + CHUNK_LAST_FRAME);
	h->body_crc = format_get32(c + CHUNK_BODY_CRC);
	if (c[CHUNK_RESERVED] | c[CHUNK_RESERVED + 1] | c[CHUNK_RESERVED + 2])
		return corrupt(fault, "reserved chunk header bytes are not zero");
	if (h->body_bytes == 0 || h->content_bytes == 0 ||
	    h->content_bytes > FORMAT_MAX_CHUNK_BYTES ||
	    h->body_bytes > format_max_body_bytes(h->content_bytes))
		return corrupt(fault, "chunk sizes out of range");
	if (h->type != FORMAT_CHUNK_SETUP && h->type != FORMAT_CHUNK_FRAMES)
		return corrupt(fault, "unknown chunk type %u", h->type);
	const char *wrong = chunk_frames_fault(h->type, h->frame_count, h->first_frame,
					       h->last_frame);
	return wrong ? corrupt(fault, "%s", wrong) : CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* The index                                                                */
/* ------------------------------------------------------------------------ */

uint64_t format_index_frame_bytes(uint64_t entries)
{
	return FORMAT_SKIPPABLE_BYTES + entries * FORMAT_INDEX_ENTRY_BYTES +
	       FORMAT_INDEX_TRAILER_BYTES;
}

void format_index_encode(unsigned char *out, const struct format_index_entry *entries,
			 uint32_t count)
{
	uint32_t frame_bytes = (uint32_t)format_index_frame_bytes(count);
	unsigned char *p = out + FORMAT_SKIPPABLE_BYTES;

	format_frame_encode(out, FORMAT_MAGIC_INDEX, frame_bytes - FORMAT_SKIPPABLE_BYTES);
	for (uint32_t i = 0; i < count; i++) {
		unsigned char *e = p + (size_t)FORMAT_INDEX_ENTRY_BYTES * i;
		const struct format_index_entry *from = &entries[i];
		format_put64(e + ENTRY_OFFSET, from->offset);
		format_put64(e + ENTRY_FIRST_FRAME, from->first_frame);
		format_put64(e + ENTRY_LAST_FRAME, from->last_frame);
		format_put32(e + ENTRY_FRAME_COUNT, from->frame_count);
		e[ENTRY_TYPE] = from->type;
		memset(e + ENTRY_RESERVED, 0, FORMAT_INDEX_ENTRY_BYTES - ENTRY_RESERVED);
	}
	size_t entry_bytes = (size_t)FORMAT_INDEX_ENTRY_BYTES * count;
	unsigned char *t = p + entry_bytes;
	format_put32(t + TRAILER_ENTRY_COUNT, count);
	format_put32(t + TRAILER_CRC, crumbs_crc32c(0, p, entry_bytes + TRAILER_CRC));
	format_put32(t + TRAILER_FRAME_BYTES, frame_bytes);
	memcpy(t + TRAILER_SIGNATURE, FORMAT_INDEX_SIGNATURE, FORMAT_INDEX_SIGNATURE_BYTES);
}

enum crumbs_result format_index_trailer_decode(const unsigned char *p, uint64_t room,
					       struct format_index_trailer *t,
					       struct format_fault *fault)
{
	if (memcmp(p + TRAILER_SIGNATURE, FORMAT_INDEX_SIGNATURE, FORMAT_INDEX_SIGNATURE_BYTES) != 0)
		return CRUMBS_ERROR_NOT_FOUND;
	t->entry_count = format_get32(p + TRAILER_ENTRY_COUNT);
	t->crc = format_get32(p + TRAILER_CRC);
	t->frame_bytes = format_get32(p + TRAILER_FRAME_BYTES);
	if (t->frame_bytes != format_index_frame_bytes(t->entry_count) || t->frame_bytes > room)
		return corrupt(fault, "index trailer sizes are inconsistent");
	return CRUMBS_OK;
}

enum crumbs_result format_index_decode(const unsigned char *p,
				       const struct format_index_trailer *t,
				       struct format_fault *fault)
{
	struct format_frame frame = format_frame_decode(p);
	size_t entry_bytes = (size_t)FORMAT_INDEX_ENTRY_BYTES * t->entry_count;

	if (frame.magic != FORMAT_MAGIC_INDEX ||
	    frame.size != t->frame_bytes - FORMAT_SKIPPABLE_BYTES)
		return corrupt(fault, "expected the index");
	if (crumbs_crc32c(0, p + FORMAT_SKIPPABLE_BYTES, entry_bytes + TRAILER_CRC) != t->crc)
		return corrupt(fault, "index checksum mismatch");
	return CRUMBS_OK;
}

bool format_index_entry_decode(const unsigned char *p, uint32_t i, struct format_index_entry *e)
{
	const unsigned char *q = p + FORMAT_SKIPPABLE_BYTES + (size_t)FORMAT_INDEX_ENTRY_BYTES * i;

	e->offset = format_get64(q + ENTRY_OFFSET);
	e->first_frame = format_get64(q + ENTRY_FIRST_FRAME);
	e->last_frame = format_get64(q + ENTRY_LAST_FRAME);
	e->frame_count = format_get32(q + ENTRY_FRAME_COUNT);
	e->type = q[ENTRY_TYPE];
	return (q[ENTRY_RESERVED] | q[ENTRY_RESERVED + 1] | q[ENTRY_RESERVED + 2]) == 0 &&
	       !chunk_frames_fault(e->type, e->frame_count, e->first_frame, e->last_frame);
}
