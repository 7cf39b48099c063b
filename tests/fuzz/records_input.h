/* SPDX-License-Identifier: MIT */
/*
 * records_input.h: a capture file built around a fuzz target's input, so
 * that mutations reach what reads records rather than stopping at the
 * checksums: the input is the decompressed content of a setup chunk and
 * of a frames chunk, which are compressed and framed here exactly as
 * format/FORMAT.md specifies. Included by fuzz_records.c and
 * fuzz_exports.c.
 *
 * Input: byte 0 = frames the chunk header claims (1 to 256), bytes 1-2 =
 * length L of the setup content, then L bytes of it (none: a fixed device
 * with three queues), then the frames content.
 */
#ifndef CRUMBS_FUZZ_RECORDS_INPUT_H
#define CRUMBS_FUZZ_RECORDS_INPUT_H

#include "../../format/format.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* GPU 0 "G" and queues with 64, 36 and 0 valid bits. */
static const unsigned char records_fixed_setup[] = {
	FORMAT_TAG_STRING, 0x01, 'G', FORMAT_TAG_STRING, 0x00,
	FORMAT_TAG_GPU, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	FORMAT_TAG_QUEUE, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x80, 0x3F, 64,
	FORMAT_TAG_QUEUE, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x80, 0x3F, 36,
	FORMAT_TAG_QUEUE, 0x00, 0x02, 0x00, 0x04, 0x00, 0x00, 0x80, 0x3F, 0,
	FORMAT_TAG_CALIBRATION, 0x00, 0x80, 0x94, 0xEB, 0xDC, 0x03, 0x80, 0x94, 0xEB, 0xDC, 0x03,
	0x00,
};

/* The file's bytes; free p. */
struct records_file {
	unsigned char *p;
	size_t len;
	size_t cap;
};

static inline void records_put(struct records_file *o, const void *d, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = (o->len + n) * 2;
		o->p = realloc(o->p, o->cap);
		if (!o->p)
			abort();
	}
	memcpy(o->p + o->len, d, n);
	o->len += n;
}

/* Frames chunks claim frames 0 to 2^32 - 1, which any count fits. */
static inline void records_chunk(struct records_file *o, ZSTD_CCtx *z, uint8_t type,
				 const void *content, size_t len, uint32_t frames,
				 struct format_index_entry *index, uint32_t *entries)
{
	if (len == 0)
		return;
	size_t bound = ZSTD_compressBound(len);
	unsigned char *body = malloc(bound);
	if (!body)
		abort();
	size_t c = ZSTD_compress2(z, body, bound, content, len);
	if (ZSTD_isError(c))
		abort();
	struct format_chunk_header header = {
		.type = type,
		.body_bytes = (uint32_t)c,
		.content_bytes = (uint32_t)len,
		.frame_count = frames,
		.last_frame = type == FORMAT_CHUNK_FRAMES ? UINT32_MAX : 0,
		.body_crc = crumbs_crc32c(0, body, c),
	};
	unsigned char h[FORMAT_CHUNK_FRAME_BYTES];
	format_chunk_header_encode(h, &header);
	index[(*entries)++] = (struct format_index_entry){ o->len, header.first_frame,
							   header.last_frame, frames, type };
	records_put(o, h, sizeof(h));
	records_put(o, body, c);
	free(body);
}

/* The capture that data[0..size) stands for, in *o (zeroed first);
 * false when the input is too short to say. */
static inline bool records_build(const uint8_t *data, size_t size, struct records_file *o)
{
	static ZSTD_CCtx *z;
	struct format_index_entry index[2];
	uint32_t entries = 0;

	memset(o, 0, sizeof(*o));
	if (size < 3)
		return false;
	if (!z) {
		z = ZSTD_createCCtx();
		ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 1);
		ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
	}
	uint32_t frames = (uint32_t)data[0] + 1;
	size_t extra = (size_t)(data[1] | data[2] << 8);
	if (extra > size - 3)
		extra = size - 3;
	const uint8_t *frames_content = data + 3 + extra;
	size_t frames_len = size - 3 - extra;

	unsigned char header[FORMAT_HEADER_FRAME_MAX_BYTES];
	records_put(o, header, format_file_header_encode(header, &(struct format_file_header){
		.major = CRUMBS_FORMAT_MAJOR, .minor = CRUMBS_FORMAT_MINOR }));

	if (extra)
		records_chunk(o, z, FORMAT_CHUNK_SETUP, data + 3, extra, 0, index, &entries);
	else
		records_chunk(o, z, FORMAT_CHUNK_SETUP, records_fixed_setup,
			      sizeof(records_fixed_setup), 0, index, &entries);
	records_chunk(o, z, FORMAT_CHUNK_FRAMES, frames_content, frames_len, frames, index,
		      &entries);

	unsigned char index_frame[FORMAT_SKIPPABLE_BYTES + 2 * FORMAT_INDEX_ENTRY_BYTES +
				  FORMAT_INDEX_TRAILER_BYTES];
	format_index_encode(index_frame, index, entries);
	records_put(o, index_frame, (size_t)format_index_frame_bytes(entries));
	return true;
}

#endif
