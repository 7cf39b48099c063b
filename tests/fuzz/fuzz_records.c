/* SPDX-License-Identifier: MIT */
/*
 * fuzz_records.c: libFuzzer target for the record parser, the model, and
 * the statistics a run takes of its frames (crumbs stats and diff).
 * Checksums stop random mutations of a file at the chunk boundary, so this
 * target builds a valid file around the input instead: the input is the
 * decompressed content of a setup chunk and of a frames chunk, which are
 * compressed and framed here exactly as format/FORMAT.md specifies.
 *
 * The frames are drawn as tables, then read again as crumbs stats reads
 * them; the statistics are printed in each format, and compared with
 * themselves as crumbs diff compares runs, which must find no change.
 *
 * Input: byte 0 = frames the chunk header claims (1 to 256), bytes 1-2 =
 * length L of the setup content, then L bytes of it (none: a fixed device
 * with three queues), then the frames content.
 */
#include "../../analyze/analyze.h"
#include "../../format/format.h"
#include "../../report/report.h"
#include "runs_check.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* GPU 0 "G" and queues with 64, 36 and 0 valid bits. */
static const unsigned char fixed_setup[] = {
	FORMAT_TAG_STRING, 0x01, 'G', FORMAT_TAG_STRING, 0x00,
	FORMAT_TAG_GPU, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	FORMAT_TAG_QUEUE, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x80, 0x3F, 64,
	FORMAT_TAG_QUEUE, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x80, 0x3F, 36,
	FORMAT_TAG_QUEUE, 0x00, 0x02, 0x00, 0x04, 0x00, 0x00, 0x80, 0x3F, 0,
	FORMAT_TAG_CALIBRATION, 0x00, 0x80, 0x94, 0xEB, 0xDC, 0x03, 0x80, 0x94, 0xEB, 0xDC, 0x03,
	0x00,
};

struct out {
	unsigned char *p;
	size_t len;
	size_t cap;
};

static void put(struct out *o, const void *d, size_t n)
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
static void chunk(struct out *o, ZSTD_CCtx *z, uint8_t type, const void *content, size_t len,
		  uint32_t frames, struct format_index_entry *index, uint32_t *entries)
{
	if (len == 0)
		return;
	size_t bound = ZSTD_compressBound(len);
	unsigned char *body = malloc(bound);
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
	put(o, h, sizeof(h));
	put(o, body, c);
	free(body);
}

/* c's frames as crumbs stats takes them, printed, and compared with
 * themselves as crumbs diff does: aborts if that finds a change. */
static void run_statistics(reader *c)
{
	struct analyze_error e;
	const struct frame *f;
	stats *s = stats_create();

	reader_flat_scopes(c, true);
	if (s && reader_rewind(c, &e) == CRUMBS_OK) {
		while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f &&
		       stats_add_frame(s, reader_meta(c), f) == CRUMBS_OK)
			;
		if (stats_finish(s, NULL) == CRUMBS_OK) {
			runs_print(s, reader_meta(c));
			if (runs_diff_changed(s, s))
				abort();
		}
	}
	stats_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ZSTD_CCtx *z;
	struct out o = { 0 };
	struct format_index_entry index[2];
	uint32_t entries = 0;

	if (size < 3)
		return 0;
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
	put(&o, header, format_file_header_encode(header, &(struct format_file_header){
		.major = CRUMBS_FORMAT_MAJOR }));

	if (extra)
		chunk(&o, z, FORMAT_CHUNK_SETUP, data + 3, extra, 0, index, &entries);
	else
		chunk(&o, z, FORMAT_CHUNK_SETUP, fixed_setup, sizeof(fixed_setup), 0, index,
		      &entries);
	chunk(&o, z, FORMAT_CHUNK_FRAMES, frames_content, frames_len, frames, index, &entries);

	unsigned char index_frame[FORMAT_SKIPPABLE_BYTES + 2 * FORMAT_INDEX_ENTRY_BYTES +
				  FORMAT_INDEX_TRAILER_BYTES];
	format_index_encode(index_frame, index, entries);
	put(&o, index_frame, (size_t)format_index_frame_bytes(entries));

	reader *c = NULL;
	struct analyze_error e;
	const struct frame *f;
	if (reader_open_memory(o.p, o.len, &c, &e) == CRUMBS_OK) {
		struct report_settings s;
		struct report_sink sink = { runs_discard, NULL };
		char err[200];
		report_settings_init(&s);
		s.leaf = data[0] & 1;
		s.threshold_pct = data[0] & 2 ? 3 : 0;
		s.sort = (enum report_sort)(data[0] % 5);
		if (report_settings_prepare(&s, err, sizeof(err)) == CRUMBS_OK)
			while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f)
				report_frame(&s, reader_meta(c), f, &sink);
		report_settings_release(&s);
		run_statistics(c);
	}
	reader_free(c);
	free(o.p);
	return 0;
}
