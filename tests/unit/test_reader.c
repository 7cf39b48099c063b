/* SPDX-License-Identifier: MIT */
/*
 * test_reader.c: the reader against damaged files: every truncation point
 * and every single-bit flip of a small capture, a newer version, files
 * that are not captures, a writer that stopped before its index, and
 * chunks past the limits of a frame and of a chunk.
 */
#include "helpers.h"
#include "../../format/format.h"

#include <stdio.h>
#include <zstd.h>

#define T 1000000000ull

/* A small capture of several chunks: three frames, one chunk each, with
 * strings, semaphores, leaves, command buffers not recorded and two
 * queues. */
static void small_capture(struct membuf *m)
{
	crumbs_writer *w = mem_writer_with(m, 0, 1);
	uint32_t g = add_gpu(w, "GPU Ω");
	uint32_t gfx = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	uint32_t comp = add_queue(w, g, CRUMBS_QUEUE_COMPUTE, 1.0f, 40);
	crumbs_writer_calibration(w, g, T, T, 10);
	for (uint64_t i = 0; i < 3; i++) {
		uint64_t t = T + i * 1000000;
		struct crumbs_semaphore_op op = { 1, i + 1 };
		struct crumbs_leaf_desc draw = { CRUMBS_EVENT_DRAW, NULL, 1, 0, 12, 36, t + 300, t + 400 };
		crumbs_writer_frame_begin(w, i, t);
		crumbs_writer_queue_ready(w, gfx, t);
		crumbs_writer_queue_ready(w, comp, t);
		submit(w, gfx, t, t + 10, NULL, &op);
		crumbs_writer_unrecorded(w, 2);
		crumbs_writer_scope_begin(w, "Кадр", 0, t + 10);
		crumbs_writer_leaf(w, &draw);
		crumbs_writer_scope_end(w, t + 900);
		crumbs_writer_submit_end(w, t + 1000);
		submit(w, comp, t + 5, t + 1100, &op, NULL);
		crumbs_writer_scope_begin(w, "非同期", 0, t + 1100);
		crumbs_writer_scope_end(w, t + 1500);
		crumbs_writer_submit_end(w, t + 1500);
		crumbs_writer_frame_end(w, t + 2000, 0, 0);
	}
	assert_int_equal(crumbs_writer_close(w), CRUMBS_OK);
}

/* Reads every frame; returns the code that ended reading, the error and
 * the number of frames read. Each frame read must be the original's. */
static enum crumbs_result read_all(const unsigned char *data, size_t len,
				   struct analyze_error *e, unsigned *frames)
{
	reader *c = NULL;
	const struct frame *f;
	enum crumbs_result r = reader_open_memory(data, len, &c, e);
	*frames = 0;
	if (r != CRUMBS_OK)
		return r;
	while ((r = reader_next_frame(c, &f, e)) == CRUMBS_OK && f) {
		assert_int_equal(f->number, *frames);
		assert_int_equal(f->queue_count, 2);
		assert_int_equal(f->queues[0].busy_ns, 1000);
		assert_int_equal(f->queues[1].busy_ns, 500); /* 100 start-up after the wait, 400 of scope */
		assert_int_equal(f->queues[0].unrecorded, 2);
		assert_int_equal(f->queues[1].unrecorded, 0);
		(*frames)++;
	}
	reader_free(c);
	return r;
}

static void intact(void **state)
{
	(void)state;
	struct membuf m;
	struct analyze_error e;
	unsigned frames;
	small_capture(&m);
	assert_int_equal(read_all(m.data, m.len, &e, &frames), CRUMBS_OK);
	assert_int_equal(frames, 3);
	free(m.data);
}

/* The byte offsets where each chunk ends, walking the chunk headers. */
static void chunk_ends(const struct membuf *m, uint64_t *ends, unsigned *count)
{
	struct format_file_header file;
	struct format_chunk_header chunk;
	struct format_fault fault;
	assert_int_equal(format_file_header_decode(m->data, m->len, &file, &fault), CRUMBS_OK);
	uint64_t off = file.frame_bytes;
	*count = 0;
	while (off < m->len && format_chunk_header_decode(m->data + off, m->len - off, &chunk,
							    &fault) == CRUMBS_OK) {
		off += FORMAT_CHUNK_FRAME_BYTES + chunk.body_bytes;
		ends[(*count)++] = off;
	}
}

/* Cut at every byte: a clear "truncated at byte N", and every frame whose
 * chunk ended before the cut still read, unchanged. */
static void every_truncation_point(void **state)
{
	(void)state;
	struct membuf m;
	uint64_t ends[16];
	unsigned chunks;
	small_capture(&m);
	chunk_ends(&m, ends, &chunks);
	assert_int_equal(chunks, 4); /* setup + one per frame */

	for (size_t cut = 0; cut < m.len; cut++) {
		struct analyze_error e;
		unsigned frames, whole = 0;
		char expect[64];
		unsigned char *copy = malloc(cut ? cut : 1);
		memcpy(copy, m.data, cut);
		enum crumbs_result r = read_all(copy, cut, &e, &frames);
		snprintf(expect, sizeof(expect), "truncated at byte %zu", cut);
		if (r != CRUMBS_ERROR_TRUNCATED || strcmp(e.text, expect) != 0)
			fail_msg("cut at %zu: got %d '%s'", cut, r, e.text);
		for (unsigned k = 1; k < chunks; k++)
			if (ends[k] <= cut)
				whole++;
		if (frames < whole)
			fail_msg("cut at %zu: %u frames read, %u intact", cut, frames, whole);
		free(copy);
	}
	free(m.data);
}

/* Flip every bit: always an error, at or before the flipped byte. */
static void every_bit_flip(void **state)
{
	(void)state;
	struct membuf m;
	small_capture(&m);
	unsigned char *copy = malloc(m.len);
	for (size_t byte = 0; byte < m.len; byte++)
		for (int bit = 0; bit < 8; bit++) {
			struct analyze_error e;
			unsigned frames;
			memcpy(copy, m.data, m.len);
			copy[byte] ^= (unsigned char)(1u << bit);
			enum crumbs_result r = read_all(copy, m.len, &e, &frames);
			if (r != CRUMBS_ERROR_CORRUPT && r != CRUMBS_ERROR_NOT_CAPTURE)
				fail_msg("flip %zu.%d: got %d '%s'", byte, bit, r, e.text);
			if (r == CRUMBS_ERROR_CORRUPT &&
			    (e.byte > byte || strncmp(e.text, "corrupt at byte ", 16) != 0))
				fail_msg("flip %zu.%d: reported '%s'", byte, bit, e.text);
		}
	free(copy);
	free(m.data);
}

/* A writer that stopped: every frame, then "truncated" where it stopped. */
static void no_index(void **state)
{
	(void)state;
	struct membuf m;
	struct analyze_error e;
	unsigned frames;
	uint64_t ends[16];
	unsigned chunks;
	small_capture(&m);
	chunk_ends(&m, ends, &chunks);
	size_t len = (size_t)ends[chunks - 1];
	assert_int_equal(read_all(m.data, len, &e, &frames), CRUMBS_ERROR_TRUNCATED);
	assert_int_equal(frames, 3);
	assert_int_equal(e.byte, len);

	reader *c;
	assert_int_equal(reader_open_memory(m.data, len, &c, &e), CRUMBS_OK);
	assert_false(reader_meta(c)->has_index);
	assert_int_equal(reader_meta(c)->frame_count, 3);
	assert_int_equal(reader_damage(c)->code, CRUMBS_ERROR_TRUNCATED);
	/* Seeking works from the chunk headers alone. */
	assert_int_equal(reader_seek_frame(c, 1, &e), CRUMBS_OK);
	assert_int_equal(next_frame(c)->number, 1);
	assert_int_equal(reader_seek_last(c, &e), CRUMBS_OK);
	assert_int_equal(next_frame(c)->number, 2);
	reader_free(c);
	free(m.data);
}

/* Frames of a chunk cut in its body are still read when whole. */
static void cut_chunk_keeps_whole_frames(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0); /* one big chunk */
	uint32_t g = add_gpu(w, "GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	crumbs_writer_calibration(w, g, T, T, 0);
	/* Incompressible names make the body long enough for several zstd
	 * blocks, so a cut leaves whole blocks behind it. */
	uint64_t x = 88172645463325252ull;
	for (uint64_t i = 0; i < 400; i++) {
		char name[64];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		snprintf(name, sizeof(name), "scope %016llx", (unsigned long long)x);
		uint64_t t = T + i * 10000;
		crumbs_writer_frame_begin(w, i, t);
		submit(w, q, t, t, NULL, NULL);
		for (int k = 0; k < 40; k++) {
			name[6 + k % 16] = (char)('a' + (x >> k) % 26);
			crumbs_writer_scope_begin(w, name, 0, t + (uint64_t)k * 10);
			crumbs_writer_scope_end(w, t + (uint64_t)k * 10 + 5);
		}
		crumbs_writer_submit_end(w, t + 1000);
		crumbs_writer_frame_end(w, t + 2000, 0, 0);
	}
	assert_int_equal(crumbs_writer_close(w), CRUMBS_OK);
	reader *c;
	struct analyze_error e;
	const struct frame *f;
	size_t cut = m.len * 3 / 4;
	assert_int_equal(reader_open_memory(m.data, cut, &c, &e), CRUMBS_OK);
	assert_int_equal(reader_meta(c)->chunk_count, 2);
	unsigned frames = 0;
	enum crumbs_result r;
	while ((r = reader_next_frame(c, &f, &e)) == CRUMBS_OK && f) {
		assert_int_equal(f->number, frames);
		assert_int_equal(f->queues[q].root->child_count, 40);
		frames++;
	}
	assert_int_equal(r, CRUMBS_ERROR_TRUNCATED);
	assert_true(frames > 100 && frames < 400);
	reader_free(c);
	free(m.data);
}

/* The capture's header written again with another version. */
static void set_version(struct membuf *m, struct format_file_header *h, uint16_t major,
			uint16_t minor)
{
	unsigned char bytes[FORMAT_HEADER_FRAME_MAX_BYTES];
	h->major = major;
	h->minor = minor;
	size_t n = format_file_header_encode(bytes, h);
	assert_int_equal(n, h->frame_bytes);
	memcpy(m->data, bytes, n);
}

static void newer_version(void **state)
{
	(void)state;
	struct membuf m;
	struct analyze_error e;
	struct format_file_header h;
	struct format_fault fault;
	reader *c;
	small_capture(&m);
	assert_int_equal(format_file_header_decode(m.data, m.len, &h, &fault), CRUMBS_OK);
	set_version(&m, &h, 2, 0);
	assert_int_equal(reader_open_memory(m.data, m.len, &c, &e), CRUMBS_ERROR_VERSION);
	assert_string_equal(e.text, "unsupported version 2.0 (this crumbs reads 1.5)");
	set_version(&m, &h, 1, 6); /* the next minor of this major */
	assert_int_equal(reader_open_memory(m.data, m.len, &c, &e), CRUMBS_ERROR_VERSION);
	assert_string_equal(e.text, "unsupported version 1.6 (this crumbs reads 1.5)");
	set_version(&m, &h, 1, 7);
	assert_int_equal(reader_open_memory(m.data, m.len, &c, &e), CRUMBS_ERROR_VERSION);
	assert_string_equal(e.text, "unsupported version 1.7 (this crumbs reads 1.5)");
	set_version(&m, &h, 1, 2); /* the version before CPU threads */
	assert_int_equal(reader_open_memory(m.data, m.len, &c, &e), CRUMBS_OK);
	reader_free(c);
	set_version(&m, &h, 1, 0); /* an older minor is read */
	assert_int_equal(reader_open_memory(m.data, m.len, &c, &e), CRUMBS_OK);
	reader_free(c);
	free(m.data);
}

static void not_a_capture(void **state)
{
	(void)state;
	struct analyze_error e;
	reader *c;
	static const unsigned char zstd_frame[] = { 0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x48, 0x01, 0x00, 0x00 };
	const char *text = "GPU profile for frame 1\nnot a capture at all\n";
	assert_int_equal(reader_open_memory(text, strlen(text), &c, &e), CRUMBS_ERROR_NOT_CAPTURE);
	assert_string_equal(e.text, "not a crumbs capture");
	assert_int_equal(reader_open_memory(zstd_frame, sizeof(zstd_frame), &c, &e),
			 CRUMBS_ERROR_NOT_CAPTURE);
	assert_int_equal(reader_open_memory("", 0, &c, &e), CRUMBS_ERROR_TRUNCATED);
	assert_string_equal(e.text, "truncated at byte 0");
	assert_int_equal(reader_open_file("/nonexistent/x.crumbs", &c, &e), CRUMBS_ERROR_IO);
	assert_int_equal(reader_open_file("/", &c, &e), CRUMBS_ERROR_IO);
}

/* Two captures concatenated are not one capture: the second header is
 * where a chunk header should be. */
static void garbage_after_chunks(void **state)
{
	(void)state;
	struct membuf m;
	struct analyze_error e;
	unsigned frames;
	uint64_t ends[16];
	unsigned chunks;
	small_capture(&m);
	chunk_ends(&m, ends, &chunks);
	unsigned char *d = malloc(m.len + 8);
	size_t at = (size_t)ends[chunks - 1];
	memcpy(d, m.data, at);
	memcpy(d + at, "garbage!", 8);
	memcpy(d + at + 8, m.data + at, m.len - at);
	assert_int_equal(read_all(d, m.len + 8, &e, &frames), CRUMBS_ERROR_CORRUPT);
	free(d);
	free(m.data);
}

/* ------------------------------------------------------------------------ */
/* Limits: records written by hand, past what the writer writes             */
/* ------------------------------------------------------------------------ */

struct bytes_out {
	unsigned char *p;
	size_t len, cap;
};

static void out_put(struct bytes_out *o, const void *d, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = (o->len + n) * 2;
		o->p = realloc(o->p, o->cap);
		assert_non_null(o->p);
	}
	memcpy(o->p + o->len, d, n);
	o->len += n;
}

static void out_byte(struct bytes_out *o, unsigned b)
{
	unsigned char c = (unsigned char)b;
	out_put(o, &c, 1);
}

static void out_varint(struct bytes_out *o, uint64_t v)
{
	while (v >= 0x80) {
		out_byte(o, (unsigned)(v & 0x7F) | 0x80);
		v >>= 7;
	}
	out_byte(o, (unsigned)v);
}

static void out_string(struct bytes_out *o, const char *s, size_t len)
{
	out_byte(o, FORMAT_TAG_STRING);
	out_varint(o, len);
	out_put(o, s, len);
}

/* A chunk of that content, framed as FORMAT.md says. */
static void out_chunk(struct bytes_out *file, uint8_t type, const struct bytes_out *content,
		      uint32_t frames, uint64_t first, uint64_t last, struct format_index_entry *entry)
{
	*entry = (struct format_index_entry){ file->len, first, last, frames, type };
	size_t bound = ZSTD_compressBound(content->len);
	unsigned char *body = malloc(bound);
	ZSTD_CCtx *z = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
	size_t c = ZSTD_compress2(z, body, bound, content->p, content->len);
	assert_false(ZSTD_isError(c));
	ZSTD_freeCCtx(z);
	unsigned char h[FORMAT_CHUNK_FRAME_BYTES];
	format_chunk_header_encode(h, &(struct format_chunk_header){
		.type = type, .body_bytes = (uint32_t)c, .content_bytes = (uint32_t)content->len,
		.frame_count = frames, .first_frame = first, .last_frame = last,
		.body_crc = crumbs_crc32c(0, body, c) });
	out_put(file, h, sizeof(h));
	out_put(file, body, c);
	free(body);
}

/* The minor version out_file writes. */
static unsigned file_minor = CRUMBS_FORMAT_MINOR;

/* A file of one GPU with a queue of 64-bit timestamps, then frames
 * chunks of the contents given (at most 3), each holding `frames[i]`
 * frames numbered on from 0, and the index. */
static void out_file(struct bytes_out *file, const struct bytes_out *chunks, const uint32_t *frames,
		     size_t count)
{
	struct bytes_out setup = { 0 };
	struct format_index_entry index[4];
	unsigned char index_frame[FORMAT_SKIPPABLE_BYTES + 4 * FORMAT_INDEX_ENTRY_BYTES +
				  FORMAT_INDEX_TRAILER_BYTES];
	unsigned char h[FORMAT_HEADER_FRAME_MAX_BYTES];
	memset(file, 0, sizeof(*file));
	out_put(file, h, format_file_header_encode(h, &(struct format_file_header){
		.major = CRUMBS_FORMAT_MAJOR, .minor = (uint16_t)file_minor }));
	out_string(&setup, "G", 1);
	out_byte(&setup, FORMAT_TAG_GPU);
	out_put(&setup, "\0\0\0\0\0\0", 6);
	static const unsigned char queue[] = { FORMAT_TAG_QUEUE, 0, 0, 0, 1, 0, 0, 0x80, 0x3F, 64 };
	out_put(&setup, queue, sizeof(queue));
	out_chunk(file, FORMAT_CHUNK_SETUP, &setup, 0, 0, 0, &index[0]);
	free(setup.p);
	uint64_t first = 0;
	for (size_t i = 0; i < count; i++) {
		out_chunk(file, FORMAT_CHUNK_FRAMES, &chunks[i], frames[i], first,
			  first + frames[i] - 1, &index[i + 1]);
		first += frames[i];
	}
	format_index_encode(index_frame, index, (uint32_t)count + 1);
	out_put(file, index_frame, (size_t)format_index_frame_bytes(count + 1));
}

/* A frame's begin (frame 0 of a chunk, or the next), and its end. */
static void out_frame_begin(struct bytes_out *o, bool first)
{
	out_byte(o, FORMAT_TAG_FRAME_BEGIN);
	out_varint(o, 0);
	out_varint(o, first ? 2 * T : 0);
}

static void out_frame_end(struct bytes_out *o)
{
	static const unsigned char end[] = { FORMAT_TAG_FRAME_END, 2, 0, 0 };
	out_put(o, end, sizeof(end));
}

/* Reads the frames of file; returns what ended reading, and the frames. */
static enum crumbs_result read_file(const struct bytes_out *file, struct analyze_error *e,
				    unsigned *frames)
{
	reader *c = NULL;
	const struct frame *f;
	enum crumbs_result r = reader_open_memory(file->p, file->len, &c, e);
	*frames = 0;
	while (r == CRUMBS_OK && (r = reader_next_frame(c, &f, e)) == CRUMBS_OK && f)
		(*frames)++;
	reader_free(c);
	return r;
}

/* A frame of one submission holding `scopes` timed scopes, then `ends`
 * ends with nothing open and `leaves` leaf events, all named by one
 * string of `name_len` bytes; `what` is what the reader must find wrong
 * with it, or NULL when it must read it. */
static void expect_frame(unsigned scopes, size_t name_len, unsigned ends, unsigned leaves,
			 const char *what)
{
	struct bytes_out chunk = { 0 }, file;
	struct analyze_error e;
	unsigned frames;
	char *name = malloc(name_len + 1);
	memset(name, 'n', name_len);
	out_frame_begin(&chunk, true);
	out_string(&chunk, name, name_len);
	static const unsigned char submit_record[] = { FORMAT_TAG_SUBMIT, 0, 0, 0, 0, 0 };
	out_put(&chunk, submit_record, sizeof(submit_record));
	for (unsigned i = 0; i < scopes; i++) {
		static const unsigned char scope[] = { FORMAT_TAG_SCOPE_BEGIN, 0, 2,
						       FORMAT_TAG_SCOPE_END, 2 };
		out_put(&chunk, scope, sizeof(scope));
	}
	for (unsigned i = 0; i < ends; i++) {
		static const unsigned char end[] = { FORMAT_TAG_SCOPE_END, 0 };
		out_put(&chunk, end, sizeof(end));
	}
	for (unsigned i = 0; i < leaves; i++) {
		static const unsigned char leaf[] = { FORMAT_TAG_LEAF_NO_TICKS, CRUMBS_EVENT_DRAW, 0, 0 };
		out_put(&chunk, leaf, sizeof(leaf));
	}
	static const unsigned char submit_end[] = { FORMAT_TAG_SUBMIT_END, 2 };
	out_put(&chunk, submit_end, sizeof(submit_end));
	out_frame_end(&chunk);
	uint32_t one = 1;
	out_file(&file, &chunk, &one, 1);
	enum crumbs_result r = read_file(&file, &e, &frames);
	if (!what) {
		if (r != CRUMBS_OK)
			fail_msg("%u scopes, %u ends, %u leaves: %s", scopes, ends, leaves, e.text);
		assert_int_equal(frames, 1);
	} else {
		assert_int_equal(r, CRUMBS_ERROR_CORRUPT);
		assert_int_equal(frames, 0);
		if (!strstr(e.text, what) || strncmp(e.text, "corrupt at byte ", 16) != 0)
			fail_msg("expected '%s', got '%s'", what, e.text);
	}
	free(name);
	free(chunk.p);
	free(file.p);
}

/* A frame holds at most 2^18 scopes and events, 2^20 records and 16 MiB
 * of their names, each counted where used; at the limit it reads. */
static void frame_limits(void **state)
{
	(void)state;
	const unsigned nodes = 1u << 18, records = 1u << 20;
	expect_frame(nodes, 1, 0, 0, NULL);
	expect_frame(nodes, 1, 0, 1, "more than 262144 scopes and events in a frame");
	expect_frame(nodes - 10, 1, 0, 11, "more than 262144 scopes and events in a frame");
	/* The string, the submission and its end, then ends: one too many. */
	expect_frame(0, 1, records - 3, 0, NULL);
	expect_frame(0, 1, records - 2, 0, "more than 1048576 records in a frame");
	expect_frame(4096, 4096, 0, 0, NULL);
	expect_frame(4096, 4096, 0, 1, "names of a frame's scopes and events longer than 16 MiB");
}

/* A chunk holds at most 2^21 strings, over its frames. */
static void chunk_string_limit(void **state)
{
	(void)state;
	for (unsigned extra = 0; extra < 2; extra++) {
		struct bytes_out chunk = { 0 }, file;
		struct analyze_error e;
		unsigned frames;
		for (unsigned f = 0; f < 3; f++) {
			out_frame_begin(&chunk, f == 0);
			unsigned n = f < 2 ? 1u << 20 : extra;
			for (unsigned i = 0; i < n; i++)
				out_string(&chunk, "", 0);
			out_frame_end(&chunk);
		}
		uint32_t three = 3;
		out_file(&file, &chunk, &three, 1);
		enum crumbs_result r = read_file(&file, &e, &frames);
		if (extra == 0) {
			assert_int_equal(r, CRUMBS_OK);
			assert_int_equal(frames, 3);
		} else {
			assert_int_equal(r, CRUMBS_ERROR_CORRUPT);
			assert_non_null(strstr(e.text, "more than 2097152 strings in a chunk"));
			assert_int_equal(frames, 2);
		}
		free(chunk.p);
		free(file.p);
	}
}

/* A body larger than zstd makes one of its content is no chunk: refused
 * from its header, before anything is read for it. */
static void body_bound(void **state)
{
	(void)state;
	struct bytes_out chunk = { 0 }, file;
	struct analyze_error e;
	unsigned frames;
	out_frame_begin(&chunk, true);
	out_frame_end(&chunk);
	uint32_t one = 1;
	out_file(&file, &chunk, &one, 1);
	/* The frames chunk's header, last: a body of 200 bytes for 7. */
	size_t at = file.len;
	struct format_chunk_header h;
	struct format_fault fault;
	for (size_t off = 0; off + FORMAT_CHUNK_FRAME_BYTES <= file.len; off++)
		if (format_chunk_header_decode(file.p + off, file.len - off, &h, &fault) == CRUMBS_OK &&
		    h.type == FORMAT_CHUNK_FRAMES)
			at = off;
	assert_true(at < file.len);
	size_t body = at + FORMAT_CHUNK_FRAME_BYTES;
	file.len = body;
	unsigned char junk[200];
	memset(junk, 0x5A, sizeof(junk));
	out_put(&file, junk, sizeof(junk));
	h.body_bytes = sizeof(junk);
	h.body_crc = crumbs_crc32c(0, junk, sizeof(junk));
	format_chunk_header_encode(file.p + at, &h);
	assert_int_equal(read_file(&file, &e, &frames), CRUMBS_ERROR_CORRUPT);
	char expect[80];
	snprintf(expect, sizeof(expect), "corrupt at byte %zu (chunk sizes out of range)", at);
	assert_string_equal(e.text, expect);
	free(chunk.p);
	free(file.p);
}

/* ------------------------------------------------------------------------ */
/* CPU threads                                                              */
/* ------------------------------------------------------------------------ */

/* A cpu time of a frames chunk: the svarint difference from the last. */
static void out_cpu(struct bytes_out *o, uint64_t *cursor, uint64_t t)
{
	int64_t d = (int64_t)(t - *cursor);
	out_varint(o, ((uint64_t)d << 1) ^ (0 - ((uint64_t)d >> 63)));
	*cursor = t;
}

static void out_cpu_thread(struct bytes_out *o, uint32_t tid, uint32_t name)
{
	out_byte(o, FORMAT_TAG_CPU_THREAD);
	out_varint(o, tid);
	out_varint(o, name);
}

static void out_cpu_begin(struct bytes_out *o, uint64_t *cursor, uint32_t name, uint64_t t)
{
	out_byte(o, FORMAT_TAG_CPU_BEGIN);
	out_varint(o, name);
	out_cpu(o, cursor, t);
}

static void out_cpu_end(struct bytes_out *o, uint64_t *cursor, uint64_t t)
{
	out_byte(o, FORMAT_TAG_CPU_END);
	out_cpu(o, cursor, t);
}

/*
 * A frame of CPU records: frame 0 from T, string 0 "main" (string 1 "",
 * string 2 "work"), then what `records` writes, then FRAME_END at 2T +
 * 10^6. `what` as for expect_frame; on success the frame is handed to
 * `check`.
 */
static void expect_cpu_frame(void (*records)(struct bytes_out *o, uint64_t *cursor),
			     const char *what, void (*check)(const struct frame *f))
{
	struct bytes_out chunk = { 0 }, file;
	struct analyze_error e;
	uint64_t cursor = T; /* where out_frame_begin begins frame 0 */
	out_frame_begin(&chunk, true);
	out_string(&chunk, "main", 4);
	out_string(&chunk, "", 0);
	out_string(&chunk, "work", 4);
	records(&chunk, &cursor);
	out_byte(&chunk, FORMAT_TAG_FRAME_END);
	out_cpu(&chunk, &cursor, 2 * T + 1000000);
	out_varint(&chunk, 0);
	out_varint(&chunk, 0);
	uint32_t one = 1;
	out_file(&file, &chunk, &one, 1);

	reader *c = NULL;
	const struct frame *f = NULL;
	enum crumbs_result r = reader_open_memory(file.p, file.len, &c, &e);
	assert_int_equal(r, CRUMBS_OK);
	r = reader_next_frame(c, &f, &e);
	if (!what) {
		if (r != CRUMBS_OK)
			fail_msg("%s", e.text);
		assert_non_null(f);
		if (check)
			check(f);
	} else {
		assert_int_equal(r, CRUMBS_ERROR_CORRUPT);
		if (!strstr(e.text, what) || strncmp(e.text, "corrupt at byte ", 16) != 0)
			fail_msg("expected '%s', got '%s'", what, e.text);
	}
	reader_free(c);
	free(chunk.p);
	free(file.p);
}

static void cpu_no_thread(struct bytes_out *o, uint64_t *cursor)
{
	out_cpu_begin(o, cursor, 2, 2 * T + 10);
}

static void cpu_end_no_thread(struct bytes_out *o, uint64_t *cursor)
{
	out_cpu_end(o, cursor, 2 * T + 10);
}

static void cpu_end_before_begin(struct bytes_out *o, uint64_t *cursor)
{
	out_cpu_thread(o, 7, 0);
	out_cpu_begin(o, cursor, 2, 2 * T + 100);
	out_cpu_end(o, cursor, 2 * T + 99);
}

/* Threads 1 to n, each selected once and again. */
static void cpu_threads_n(struct bytes_out *o, unsigned n)
{
	for (unsigned i = 1; i <= n; i++)
		out_cpu_thread(o, i, 1);
	for (unsigned i = 1; i <= n; i++)
		out_cpu_thread(o, i, 0);
}

static void cpu_256_threads(struct bytes_out *o, uint64_t *cursor)
{
	(void)cursor;
	cpu_threads_n(o, 256);
}

static void cpu_257_threads(struct bytes_out *o, uint64_t *cursor)
{
	(void)cursor;
	cpu_threads_n(o, 257);
}

static void check_256_threads(const struct frame *f)
{
	assert_int_equal(f->cpu_thread_count, 256);
	assert_int_equal(f->cpu_threads[255].tid, 256);
	/* Named again: the last name holds. */
	assert_int_equal(f->cpu_threads[0].name_len, 4);
}

/* Scopes nested n deep on thread 7, all ended. */
static void cpu_nest_n(struct bytes_out *o, uint64_t *cursor, unsigned n)
{
	out_cpu_thread(o, 7, 0);
	for (unsigned i = 0; i < n; i++)
		out_cpu_begin(o, cursor, 2, 2 * T + 10 + i);
	for (unsigned i = 0; i < n; i++)
		out_cpu_end(o, cursor, 2 * T + 1000 + i);
}

static void cpu_nest_255(struct bytes_out *o, uint64_t *cursor)
{
	cpu_nest_n(o, cursor, 255);
}

static void cpu_nest_256(struct bytes_out *o, uint64_t *cursor)
{
	cpu_nest_n(o, cursor, 256);
}

static void check_nest_255(const struct frame *f)
{
	assert_int_equal(f->cpu_thread_count, 1);
	assert_int_equal(f->cpu_threads[0].scopes, 255);
	const struct node *n = f->cpu_threads[0].root;
	while (n->child)
		n = n->child;
	assert_int_equal(n->depth, 255);
	assert_int_equal(n->inclusive_ns, 1000 - 10 - 254);
}

/* An end with nothing open, a scope on an unnamed thread, an end on
 * thread 7 while thread 8 has one open, and one left open. */
static void cpu_unmatched(struct bytes_out *o, uint64_t *cursor)
{
	out_cpu_thread(o, 7, 0);
	out_cpu_end(o, cursor, 2 * T + 5);
	out_cpu_begin(o, cursor, 2, 2 * T + 10);
	out_cpu_thread(o, 8, 1);
	out_cpu_begin(o, cursor, 2, 2 * T + 20);
	out_cpu_thread(o, 7, 1);
	out_cpu_end(o, cursor, 2 * T + 30);
	out_cpu_begin(o, cursor, 0, 2 * T + 40);
}

static void check_unmatched(const struct frame *f)
{
	assert_int_equal(f->cpu_thread_count, 2);
	assert_int_equal(f->cpu_scopes, 3);
	const struct frame_cpu_thread *a = &f->cpu_threads[0], *b = &f->cpu_threads[1];
	assert_int_equal(a->tid, 7);
	assert_int_equal(a->unmatched_ends, 1);
	assert_int_equal(a->open_scopes, 1);
	assert_int_equal(a->scopes, 2);
	assert_memory_equal(a->name, "main", 4);
	const struct node *work = a->root->child;
	assert_int_equal(work->inclusive_ns, 20);
	assert_int_equal(work->flags & NODE_OPEN, 0);
	const struct node *open = work->next;
	assert_memory_equal(open->name, "main", 4);
	assert_true(open->flags & NODE_OPEN);
	assert_int_equal(open->inclusive_ns, 1000000 - 40);
	assert_int_equal(a->root->inclusive_ns, 20 + 1000000 - 40);
	assert_int_equal(b->tid, 8);
	assert_int_equal(b->name_len, strlen("thread 8"));
	assert_memory_equal(b->name, "thread 8", b->name_len);
	assert_int_equal(b->unmatched_ends, 0);
	assert_int_equal(b->open_scopes, 1);
}

/* Times that go back on a thread, and the widest spans there are. */
static void cpu_backwards(struct bytes_out *o, uint64_t *cursor)
{
	out_cpu_thread(o, 7, 0);
	out_cpu_begin(o, cursor, 2, 2 * T + 1000);
	out_cpu_begin(o, cursor, 2, 2 * T + 500);
	out_cpu_end(o, cursor, 2 * T + 600);
	out_cpu_begin(o, cursor, 2, 2 * T + 100);
	out_cpu_end(o, cursor, 2 * T + 2000);
	out_cpu_end(o, cursor, 2 * T + 1500);
	out_cpu_thread(o, 8, 0);
	for (int i = 0; i < 3; i++) {
		out_cpu_begin(o, cursor, 2, 0);
		out_cpu_end(o, cursor, INT64_MAX);
	}
}

static void check_backwards(const struct frame *f)
{
	const struct node *outer = f->cpu_threads[0].root->child;
	const struct node *early = outer->child, *wide = early->next;
	assert_int_equal(outer->begin_ns, (int64_t)(2 * T + 1000));
	assert_int_equal(outer->end_ns, (int64_t)(2 * T + 2000));
	assert_int_equal(outer->inclusive_ns, 1000);
	assert_int_equal(outer->exclusive_ns, 0);
	assert_int_equal(early->inclusive_ns, 0);
	assert_int_equal(wide->inclusive_ns, 1000);
	const struct node *root = f->cpu_threads[1].root;
	assert_int_equal(root->inclusive_ns, INT64_MAX);
	assert_int_equal(root->child->next->inclusive_ns, 0);
}

static void cpu_records(void **state)
{
	(void)state;
	expect_cpu_frame(cpu_no_thread, "CPU scope with no current thread", NULL);
	expect_cpu_frame(cpu_end_no_thread, "CPU scope with no current thread", NULL);
	expect_cpu_frame(cpu_end_before_begin, "CPU scope ends before it begins", NULL);
	expect_cpu_frame(cpu_256_threads, NULL, check_256_threads);
	expect_cpu_frame(cpu_257_threads, "more than 256 CPU threads in a frame", NULL);
	expect_cpu_frame(cpu_nest_255, NULL, check_nest_255);
	expect_cpu_frame(cpu_nest_256, "CPU scopes nested deeper than 255", NULL);
	expect_cpu_frame(cpu_unmatched, NULL, check_unmatched);
	expect_cpu_frame(cpu_backwards, NULL, check_backwards);
}

/* CPU scopes count toward the frame's scopes and events. */
static void cpu_node_limit(struct bytes_out *o, uint64_t *cursor)
{
	out_cpu_thread(o, 7, 0);
	for (unsigned i = 0; i < (1u << 18) + 1; i++) {
		out_cpu_begin(o, cursor, 2, 2 * T + 10);
		out_cpu_end(o, cursor, 2 * T + 10);
	}
}

static void cpu_limits(void **state)
{
	(void)state;
	expect_cpu_frame(cpu_node_limit, "more than 262144 scopes and events in a frame", NULL);
}

/* ------------------------------------------------------------------------ */
/* Tasks, waits and frames of other kinds (since 1.4)                       */
/* ------------------------------------------------------------------------ */

static void out_task_begin(struct bytes_out *o, uint64_t *cursor, uint64_t task,
			   uint32_t timeline, uint64_t t)
{
	out_byte(o, FORMAT_TAG_TASK_BEGIN);
	out_varint(o, task);
	out_varint(o, timeline);
	out_varint(o, 2);
	out_varint(o, 0);
	out_cpu(o, cursor, t);
}

static void out_timeline_frame(struct bytes_out *o, uint64_t *cursor, uint32_t timeline,
			       uint64_t t)
{
	out_byte(o, FORMAT_TAG_TIMELINE_FRAME);
	out_varint(o, timeline);
	out_cpu(o, cursor, t);
}

static void task_id_zero(struct bytes_out *o, uint64_t *cursor)
{
	out_task_begin(o, cursor, 0, 0, 2 * T);
}

static void task_end_out_of_range(struct bytes_out *o, uint64_t *cursor)
{
	out_task_begin(o, cursor, 1, 0, 2 * T);
	out_byte(o, FORMAT_TAG_TASK_END);
	out_varint(o, 1);
	out_varint(o, (2 * T + 1) * 2 + 1); /* back past zero */
}

static void task_unknown_string(struct bytes_out *o, uint64_t *cursor)
{
	out_task_begin(o, cursor, 1, 3, 2 * T);
}

/* Strings 3 to 2 + n, "0" to n - 1, and a task, or a frame of another
 * kind, on each; then all of them again under ids of their own, which
 * name the same timelines. */
static void timelines_n(struct bytes_out *o, uint64_t *cursor, unsigned n, bool marks)
{
	char name[16];
	for (int again = 0; again < 2; again++)
		for (unsigned i = 0; i < n; i++) {
			int len = snprintf(name, sizeof(name), "%u", i);
			out_string(o, name, (size_t)len);
		}
	for (unsigned i = 0; i < 2 * n; i++) {
		if (marks)
			out_timeline_frame(o, cursor, 3 + i, 2 * T + i);
		else
			out_task_begin(o, cursor, 1 + i, 3 + i, 2 * T + i);
	}
}

static void tasks_256(struct bytes_out *o, uint64_t *cursor)
{
	timelines_n(o, cursor, 256, false);
}

static void tasks_257(struct bytes_out *o, uint64_t *cursor)
{
	timelines_n(o, cursor, 257, false);
}

static void marks_256(struct bytes_out *o, uint64_t *cursor)
{
	timelines_n(o, cursor, 256, true);
}

static void marks_257(struct bytes_out *o, uint64_t *cursor)
{
	timelines_n(o, cursor, 257, true);
}

static void check_256_timelines(const struct frame *f)
{
	assert_int_equal(f->cpu_thread_count, 256);
	for (uint32_t i = 0; i < 256; i++) {
		assert_int_equal(f->cpu_threads[i].kind, FRAME_CPU_TIMELINE);
		assert_int_equal(f->cpu_threads[i].scopes, 2);
	}
	assert_memory_equal(f->cpu_threads[255].name, "255", 3);
	assert_int_equal(f->task_misuses, 0);
}

static void check_256_marks(const struct frame *f)
{
	assert_int_equal(f->cpu_thread_count, 0);
	assert_int_equal(f->mark_count, 512);
	assert_memory_equal(f->marks[511].timeline, "255", 3);
	assert_int_equal(f->marks[511].ns, (int64_t)(2 * T + 511));
}

/* A task and each state it enters are scopes of the frame: 2^17 begins
 * fill it, and a state more passes it. */
static void task_node_limit(struct bytes_out *o, uint64_t *cursor)
{
	for (unsigned i = 0; i < (1u << 17); i++)
		out_task_begin(o, cursor, 1 + i, 0, 2 * T);
	out_byte(o, FORMAT_TAG_TASK_STATE);
	out_varint(o, 1);
	out_varint(o, 0);
	out_cpu(o, cursor, 2 * T);
}

/* Each record of 1.4 once. */
static void all_records(struct bytes_out *o, uint64_t *cursor)
{
	out_cpu_thread(o, 7, 0);
	out_byte(o, FORMAT_TAG_FRAME_THREAD);
	out_varint(o, 7);
	out_byte(o, FORMAT_TAG_CPU_WAIT_BEGIN + 1);
	out_varint(o, 2);
	out_cpu(o, cursor, 2 * T + 10);
	out_cpu_end(o, cursor, 2 * T + 30);
	out_timeline_frame(o, cursor, 2, 2 * T + 5);
	out_task_begin(o, cursor, 5, 0, 2 * T + 10);
	out_byte(o, FORMAT_TAG_TASK_BEGUN_EARLIER);
	out_varint(o, 6);
	out_varint(o, 0);
	out_varint(o, 2);
	out_varint(o, 0);
	out_cpu(o, cursor, T - 100); /* before the frame, which begins at T */
	out_byte(o, FORMAT_TAG_TASK_DEPEND);
	out_varint(o, 5);
	out_varint(o, 2);
	out_varint(o, 6);
	out_cpu(o, cursor, 2 * T + 10);
	out_byte(o, FORMAT_TAG_TASK_STATE);
	out_varint(o, 5);
	out_varint(o, 2);
	out_cpu(o, cursor, 2 * T + 20);
	out_byte(o, FORMAT_TAG_TASK_END);
	out_varint(o, 6);
	out_cpu(o, cursor, 2 * T + 15);
	out_byte(o, FORMAT_TAG_TASK_END);
	out_varint(o, 5);
	out_cpu(o, cursor, 2 * T + 50);
}

static void check_all_records(const struct frame *f)
{
	assert_int_equal(f->cpu_thread_count, 2);
	assert_int_equal(f->frame_thread, 0);
	assert_int_equal(f->cpu_threads[0].wait_ns, 20);
	assert_int_equal(f->cpu_threads[0].root->child->level, 1);
	assert_int_equal(f->mark_count, 1);
	const struct frame_cpu_thread *tl = &f->cpu_threads[1];
	assert_memory_equal(tl->name, "main", 4);
	const struct node *a = tl->root->child, *b = a->next;
	assert_int_equal(a->inclusive_ns, 40);
	assert_memory_equal(a->child->next->name, "work", 4);
	assert_int_equal(b->flags, NODE_BEGUN_EARLIER);
	assert_int_equal(b->begin_ns, (int64_t)T);
	assert_int_equal(f->task_dep_count, 1);
	assert_int_equal(f->task_deps[0].entered_ns, (int64_t)(2 * T + 20));
	assert_int_equal(b->inclusive_ns, (int64_t)(T + 15));
	assert_int_equal(f->task_deps[0].blocking_end_ns, (int64_t)(2 * T + 15));
	assert_false(f->task_deps[0].violated);
}

static void task_records(void **state)
{
	(void)state;
	expect_cpu_frame(all_records, NULL, check_all_records);
	expect_cpu_frame(task_id_zero, "task id 0", NULL);
	expect_cpu_frame(task_end_out_of_range, "cpu time out of range", NULL);
	expect_cpu_frame(task_unknown_string, "unknown string id", NULL);
	expect_cpu_frame(tasks_256, NULL, check_256_timelines);
	expect_cpu_frame(tasks_257, "tasks on more than 256 timelines in a frame", NULL);
	expect_cpu_frame(marks_256, NULL, check_256_marks);
	expect_cpu_frame(marks_257, "frames of more than 256 timelines in a frame", NULL);
	expect_cpu_frame(task_node_limit, "more than 262144 scopes and events in a frame", NULL);
}

static void wait_begin_only(struct bytes_out *o, uint64_t *cursor)
{
	out_cpu_thread(o, 7, 0);
	out_byte(o, FORMAT_TAG_CPU_WAIT_BEGIN);
	out_varint(o, 2);
	out_cpu(o, cursor, 2 * T + 10);
}

static void frame_thread_only(struct bytes_out *o, uint64_t *cursor)
{
	(void)cursor;
	out_byte(o, FORMAT_TAG_FRAME_THREAD);
	out_varint(o, 7);
}

static void check_frame_thread_only(const struct frame *f)
{
	assert_int_equal(f->frame_thread, -1);
	assert_int_equal(f->frame_thread_tid, 7);
}

static void task_begin_only(struct bytes_out *o, uint64_t *cursor)
{
	out_task_begin(o, cursor, 1, 0, 2 * T);
}

/* In a file of 1.3, 1.4's tags are no records: the chunk is corrupt. */
static void older_minor_has_no_tasks(void **state)
{
	(void)state;
	file_minor = 3;
	expect_cpu_frame(task_begin_only, "unknown record tag", NULL);
	expect_cpu_frame(wait_begin_only, "unknown record tag", NULL);
	expect_cpu_frame(frame_thread_only, "unknown record tag", NULL);
	expect_cpu_frame(cpu_unmatched, NULL, check_unmatched);
	file_minor = CRUMBS_FORMAT_MINOR;
	expect_cpu_frame(task_begin_only, NULL, NULL);
	expect_cpu_frame(frame_thread_only, NULL, check_frame_thread_only);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intact),
		cmocka_unit_test(every_truncation_point),
		cmocka_unit_test(every_bit_flip),
		cmocka_unit_test(no_index),
		cmocka_unit_test(cut_chunk_keeps_whole_frames),
		cmocka_unit_test(newer_version),
		cmocka_unit_test(not_a_capture),
		cmocka_unit_test(garbage_after_chunks),
		cmocka_unit_test(frame_limits),
		cmocka_unit_test(chunk_string_limit),
		cmocka_unit_test(body_bound),
		cmocka_unit_test(cpu_records),
		cmocka_unit_test(cpu_limits),
		cmocka_unit_test(task_records),
		cmocka_unit_test(older_minor_has_no_tasks),
	};
	return cmocka_run_group_tests_name("reader", tests, NULL, NULL);
}
