/* SPDX-License-Identifier: MIT */
/*
 * test_reader.c: the reader against damaged files: every truncation point
 * and every single-bit flip of a small capture, a newer version, files
 * that are not captures, and a writer that stopped before its index.
 */
#include "helpers.h"
#include "../../format/format.h"

#include <stdio.h>

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
	assert_string_equal(e.text, "unsupported version 2.0 (this crumbs reads 1.2)");
	set_version(&m, &h, 1, 7); /* a newer minor of this major */
	assert_int_equal(reader_open_memory(m.data, m.len, &c, &e), CRUMBS_ERROR_VERSION);
	assert_string_equal(e.text, "unsupported version 1.7 (this crumbs reads 1.2)");
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
	};
	return cmocka_run_group_tests_name("reader", tests, NULL, NULL);
}
