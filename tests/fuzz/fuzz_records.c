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

static void le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void chunk(struct out *o, ZSTD_CCtx *z, int type, const void *content, size_t len,
		  uint32_t frames, uint64_t *index, size_t *entries)
{
	if (len == 0)
		return;
	size_t bound = ZSTD_compressBound(len);
	unsigned char *body = malloc(bound);
	size_t c = ZSTD_compress2(z, body, bound, content, len);
	if (ZSTD_isError(c))
		abort();
	unsigned char h[FORMAT_SKIPPABLE_BYTES + FORMAT_CHUNK_HEADER_BYTES] = { 0 };
	le(h, FORMAT_MAGIC_CHUNK, 4);
	le(h + 4, FORMAT_CHUNK_HEADER_BYTES, 4);
	h[8] = (unsigned char)type;
	le(h + 12, c, 4);
	le(h + 16, len, 4);
	le(h + 20, frames, 4);
	le(h + 24, 0, 8);
	le(h + 32, type == FORMAT_CHUNK_FRAMES ? UINT32_MAX : 0, 8);
	le(h + 40, crumbs_crc32c(0, body, c), 4);
	le(h + 44, crumbs_crc32c(0, h + 8, 36), 4);
	index[(*entries)++] = o->len;
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
	uint64_t index[2];
	size_t entries = 0;

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

	unsigned char header[FORMAT_SKIPPABLE_BYTES + FORMAT_HEADER_MIN_BYTES] = { 0 };
	le(header, FORMAT_MAGIC_HEADER, 4);
	le(header + 4, FORMAT_HEADER_MIN_BYTES, 4);
	memcpy(header + 8, FORMAT_SIGNATURE, FORMAT_SIGNATURE_BYTES);
	le(header + 16, CRUMBS_FORMAT_MAJOR, 2);
	le(header + 34, crumbs_crc32c(0, header + 8, 26), 4);
	put(&o, header, sizeof(header));

	if (extra)
		chunk(&o, z, FORMAT_CHUNK_SETUP, data + 3, extra, 0, index, &entries);
	else
		chunk(&o, z, FORMAT_CHUNK_SETUP, fixed_setup, sizeof(fixed_setup), 0, index,
		      &entries);
	chunk(&o, z, FORMAT_CHUNK_FRAMES, frames_content, frames_len, frames, index, &entries);

	unsigned char entry[FORMAT_INDEX_ENTRY_BYTES], trailer[FORMAT_INDEX_TRAILER_BYTES];
	size_t index_len = sizeof(entry) * entries + sizeof(trailer);
	unsigned char head[FORMAT_SKIPPABLE_BYTES];
	le(head, FORMAT_MAGIC_INDEX, 4);
	le(head + 4, index_len, 4);
	put(&o, head, sizeof(head));
	size_t at = o.len;
	for (size_t i = 0; i < entries; i++) {
		memset(entry, 0, sizeof(entry));
		le(entry, index[i], 8);
		le(entry + 16, i == 1 ? UINT32_MAX : 0, 8);
		le(entry + 24, i == 1 ? frames : 0, 4);
		entry[28] = i == 1 ? FORMAT_CHUNK_FRAMES : FORMAT_CHUNK_SETUP;
		put(&o, entry, sizeof(entry));
	}
	le(trailer, entries, 4);
	uint32_t crc = crumbs_crc32c(0, o.p + at, sizeof(entry) * entries);
	crc = crumbs_crc32c(crc, trailer, 4);
	le(trailer + 4, crc, 4);
	le(trailer + 8, index_len + FORMAT_SKIPPABLE_BYTES, 4);
	memcpy(trailer + 12, FORMAT_INDEX_SIGNATURE, FORMAT_INDEX_SIGNATURE_BYTES);
	put(&o, trailer, sizeof(trailer));

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
