/* SPDX-License-Identifier: MIT */
/*
 * test_vendor.c: vendor counter records (format 1.5): COUNTER_SET and
 * OFFERED_COUNTER in the setup, COUNTERS of their sets in frames, written
 * by the writer and read back into the model, and written by hand past
 * what the format allows, which the reader must refuse as corrupt.
 */
#include "helpers.h"
#include "../../format/format.h"

#include <stdio.h>
#include <zstd.h>

#define T 1000000000ull

/* ------------------------------------------------------------------------ */
/* Through the writer                                                       */
/* ------------------------------------------------------------------------ */

static const struct crumbs_counter_desc set_counters[3] = {
	{ "Vertices", "Geometry", 0, 2, 2, 0, 0 },
	{ "Bytes Read", "Memory", 3, 3, 2, 0, 0 },
	{ "Warps", "Compute", 0, 4, 2, 1, 3 },
};

/* A frame: Pass { 10 / 20 of counters 0 and 1; a draw with its own 5 / 6;
 * Inner { 1 / 2 } } and Lost { unknown }. */
static crumbs_writer *vendor_capture(struct membuf *m)
{
	crumbs_writer *w = mem_writer_with(m, 0, 1);
	uint32_t g = add_gpu(w, "GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	struct crumbs_counter_desc offered = { "Offered", "Cat", 10, 5, 0, 0, 0 };
	assert_int_equal(crumbs_writer_offered_counter(w, g, 0, &offered), CRUMBS_OK);
	assert_int_equal(crumbs_writer_counter_set(w, 1, g, 0, 2, 1, 3, set_counters), CRUMBS_OK);
	/* Each set once; sets 1 to 255 only; groups below the set's. */
	assert_int_equal(crumbs_writer_counter_set(w, 1, g, 0, 2, 1, 3, set_counters),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_counter_set(w, 0, g, 0, 2, 1, 3, set_counters),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_counter_set(w, 2, g, 0, 1, 1, 3, set_counters),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	uint64_t v[64] = { 10, 20 }, leaf[64] = { 5, 6 }, inner[64] = { 1, 2 };
	crumbs_writer_frame_begin(w, 0, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T + 10, NULL, NULL);
	crumbs_writer_scope_begin(w, "Pass", 0, T + 10);
	assert_int_equal(crumbs_writer_set_counters(w, 0, 1, 3, v), CRUMBS_OK);
	/* Counters the set does not have, or values past 2^63. */
	assert_int_equal(crumbs_writer_set_counters(w, 0, 1, 8, v), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_set_counters(w, 0, 2, 1, v), CRUMBS_ERROR_INVALID_ARGUMENT);
	uint64_t big[64] = { UINT64_MAX };
	assert_int_equal(crumbs_writer_set_counters(w, 0, 1, 1, big), CRUMBS_ERROR_INVALID_ARGUMENT);
	struct crumbs_leaf_desc draw = { CRUMBS_EVENT_DRAW, NULL, 1, 0, 3, 9, T + 20, T + 30 };
	crumbs_writer_leaf(w, &draw);
	assert_int_equal(crumbs_writer_set_counters(w, 1, 1, 3, leaf), CRUMBS_OK);
	crumbs_writer_scope_begin(w, "Inner", 1, T + 40);
	assert_int_equal(crumbs_writer_set_counters(w, 0, 1, 3, inner), CRUMBS_OK);
	crumbs_writer_scope_end(w, T + 50);
	crumbs_writer_scope_end(w, T + 60);
	crumbs_writer_scope_begin(w, "Lost", 0, T + 60);
	assert_int_equal(crumbs_writer_set_counters(w, 0, 1, 3, v), CRUMBS_OK);
	assert_int_equal(crumbs_writer_set_counters_unknown(w, 0, 1), CRUMBS_OK);
	crumbs_writer_scope_end(w, T + 70);
	crumbs_writer_submit_end(w, T + 100);
	crumbs_writer_frame_end(w, T + 200, 0, 0);
	return w;
}

static uint64_t value(const struct node *n, bool inclusive, uint32_t k)
{
	uint64_t v = UINT64_MAX;
	assert_true(node_vendor_counter(n, inclusive, k, &v));
	return v;
}

static void round_trip(void **state)
{
	(void)state;
	struct membuf m;
	reader *c = mem_read(&m, vendor_capture(&m));
	const struct frame *f = next_frame(c);
	const struct capture_meta *meta = reader_meta(c);
	assert_int_equal(meta->offered_counter_count, 1);
	assert_string_equal(meta->offered_counters[0].name, "Offered");
	assert_int_equal(meta->offered_counters[0].unit, 10);
	assert_int_equal(meta->offered_counters[0].storage, 5);
	assert_int_equal(meta->counter_set_count, 1);
	const struct capture_counter_set *s = meta_counter_set(meta, 1);
	assert_non_null(s);
	assert_null(meta_counter_set(meta, 2));
	assert_int_equal(s->groups, 2);
	assert_true(s->round_robin);
	assert_int_equal(s->count, 3);
	for (uint32_t k = 0; k < 3; k++) {
		assert_string_equal(s->counters[k].name, set_counters[k].name);
		assert_string_equal(s->counters[k].category, set_counters[k].category);
		assert_int_equal(s->counters[k].group, set_counters[k].group);
		assert_int_equal(s->counters[k].scale, set_counters[k].scale);
		assert_int_equal(s->counters[k].storage, set_counters[k].storage);
	}
	const struct node *root = f->queues[0].root;
	const struct node *pass = must_find(root, "Pass"), *inner = must_find(root, "Inner");
	const struct node *lost = must_find(root, "Lost"), *draw = pass->child;
	assert_int_equal(node_vendor_set(pass), 1);
	assert_int_equal(value(pass, false, 0), 10);
	assert_int_equal(value(pass, false, 1), 20);
	assert_int_equal(value(pass, true, 0), 16);
	assert_int_equal(value(pass, true, 1), 28);
	assert_int_equal(value(draw, false, 0), 5);
	assert_int_equal(value(inner, true, 1), 2);
	uint64_t v;
	/* Counter 2 is the other group's: not taken in this frame. */
	assert_false(node_vendor_counter(pass, true, 2, &v));
	assert_true(node_vendor_unknown(lost, false));
	assert_false(node_vendor_counter(lost, true, 0, &v));
	assert_true(node_vendor_unknown(root, true));
	assert_false(node_vendor_unknown(pass, true));
	reader_free(c);
	free(m.data);
}

/* The writer keeps to the format's limits: 16384 offered counters, names
 * of 255 bytes. */
static void writer_limits(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer_with(&m, 0, 1);
	uint32_t g = add_gpu(w, "GPU");
	add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	char name[300];
	memset(name, 'n', 256);
	name[256] = '\0';
	struct crumbs_counter_desc c = { name, "Cat", 0, 0, 2, 0, 0 };
	assert_int_equal(crumbs_writer_offered_counter(w, g, 0, &c), CRUMBS_ERROR_INVALID_ARGUMENT);
	name[255] = '\0';
	for (uint32_t i = 0; i < 16384; i++)
		assert_int_equal(crumbs_writer_offered_counter(w, g, 0, &c), CRUMBS_OK);
	assert_int_equal(crumbs_writer_offered_counter(w, g, 0, &c), CRUMBS_ERROR_LIMIT);
	crumbs_writer_frame_begin(w, 0, T);
	crumbs_writer_frame_end(w, T + 1, 0, 0);
	reader *r = mem_read(&m, w);
	next_frame(r);
	assert_int_equal(reader_meta(r)->offered_counter_count, 16384);
	reader_free(r);
	free(m.data);
}

/* ------------------------------------------------------------------------ */
/* By hand                                                                  */
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

static void out_chunk(struct bytes_out *file, uint8_t type, const struct bytes_out *content,
		      uint32_t frames, struct format_index_entry *entry)
{
	*entry = (struct format_index_entry){ file->len, 0, frames ? frames - 1 : 0, frames, type };
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
		.frame_count = frames, .first_frame = 0, .last_frame = frames ? frames - 1 : 0,
		.body_crc = crumbs_crc32c(0, body, c) });
	out_put(file, h, sizeof(h));
	out_put(file, body, c);
	free(body);
}

/* A counter of string ids 1 and 2, unit u. */
static void out_counter(struct bytes_out *o, unsigned unit)
{
	out_varint(o, 1);
	out_varint(o, 2);
	out_varint(o, unit);
	out_varint(o, 0);
	out_varint(o, 2);
}

/* COUNTER_SET: set, gpu, groups, count, each counter's group and unit. */
static void out_set(struct bytes_out *o, uint64_t set, uint64_t gpu, uint64_t groups,
		    uint64_t count, uint64_t group, unsigned unit)
{
	out_byte(o, FORMAT_TAG_COUNTER_SET);
	out_varint(o, set);
	out_varint(o, gpu);
	out_varint(o, 0);
	out_varint(o, groups);
	out_varint(o, 1);
	out_varint(o, count);
	for (uint64_t i = 0; i < count; i++) {
		out_counter(o, unit);
		out_varint(o, group);
		out_varint(o, 0);
	}
}

/* A file of minor version `minor`: a GPU, a queue and the strings "N" and
 * "C", then `setup`; a frame of one submission holding `records`. Returns
 * what reading it ends with, and the error. */
static enum crumbs_result read_made(unsigned minor, const struct bytes_out *setup_records,
				    const struct bytes_out *records, struct analyze_error *e)
{
	struct bytes_out file = { 0 }, setup = { 0 }, frames = { 0 };
	struct format_index_entry index[2];
	unsigned char h[FORMAT_HEADER_FRAME_MAX_BYTES];
	out_put(&file, h, format_file_header_encode(h, &(struct format_file_header){
		.major = CRUMBS_FORMAT_MAJOR, .minor = (uint16_t)minor }));
	static const unsigned char strings[] = { FORMAT_TAG_STRING, 1, 'G', FORMAT_TAG_STRING, 1, 'N',
						 FORMAT_TAG_STRING, 1, 'C' };
	out_put(&setup, strings, sizeof(strings));
	out_byte(&setup, FORMAT_TAG_GPU);
	out_put(&setup, "\0\0\0\0\0\0", 6);
	static const unsigned char queue[] = { FORMAT_TAG_QUEUE, 0, 0, 0, 1, 0, 0, 0x80, 0x3F, 64 };
	out_put(&setup, queue, sizeof(queue));
	if (setup_records->len)
		out_put(&setup, setup_records->p, setup_records->len);
	out_chunk(&file, FORMAT_CHUNK_SETUP, &setup, 0, &index[0]);
	static const unsigned char begin[] = { FORMAT_TAG_FRAME_BEGIN, 0, 0x80, 0x94, 0xEB, 0xDC, 0x03,
					       FORMAT_TAG_SUBMIT, 0, 0, 0, 0, 0 };
	out_put(&frames, begin, sizeof(begin));
	if (records->len)
		out_put(&frames, records->p, records->len);
	static const unsigned char end[] = { FORMAT_TAG_SUBMIT_END, 2, FORMAT_TAG_FRAME_END, 2, 0, 0 };
	out_put(&frames, end, sizeof(end));
	out_chunk(&file, FORMAT_CHUNK_FRAMES, &frames, 1, &index[1]);
	unsigned char index_frame[FORMAT_SKIPPABLE_BYTES + 2 * FORMAT_INDEX_ENTRY_BYTES +
				  FORMAT_INDEX_TRAILER_BYTES];
	format_index_encode(index_frame, index, 2);
	out_put(&file, index_frame, (size_t)format_index_frame_bytes(2));

	reader *c = NULL;
	const struct frame *f;
	enum crumbs_result r = reader_open_memory(file.p, file.len, &c, e);
	while (r == CRUMBS_OK && (r = reader_next_frame(c, &f, e)) == CRUMBS_OK && f)
		;
	reader_free(c);
	free(file.p);
	free(setup.p);
	free(frames.p);
	return r;
}

/* Reads it, or (what) refuses it as corrupt saying what. */
static void expect(unsigned minor, struct bytes_out *setup, struct bytes_out *records,
		   const char *what)
{
	struct analyze_error e;
	enum crumbs_result r = read_made(minor, setup, records, &e);
	if (!what) {
		if (r != CRUMBS_OK)
			fail_msg("expected it to read, got '%s'", e.text);
	} else if (r != CRUMBS_ERROR_CORRUPT || !strstr(e.text, what)) {
		fail_msg("expected '%s', got %d '%s'", what, r, e.text);
	}
	free(setup->p);
	free(records->p);
	*setup = (struct bytes_out){ 0 };
	*records = (struct bytes_out){ 0 };
}

/* COUNTERS of set 1, with that mask and a value for each bit. */
static void out_values(struct bytes_out *o, uint64_t set, uint64_t mask, uint64_t v)
{
	out_byte(o, FORMAT_TAG_COUNTERS);
	out_varint(o, set);
	out_varint(o, mask);
	for (uint64_t m = mask; m; m &= m - 1)
		out_varint(o, v);
}

static void hostile_records(void **state)
{
	(void)state;
	struct bytes_out s = { 0 }, r = { 0 };

	out_set(&s, 1, 0, 2, 2, 1, 10);
	out_values(&r, 1, 3, 7);
	out_byte(&r, FORMAT_TAG_COUNTERS_UNKNOWN);
	out_varint(&r, 1);
	expect(5, &s, &r, NULL);

	/* Names of at most 255 bytes. */
	static const unsigned char long_name[] = { FORMAT_TAG_STRING, 0x80, 0x02 };
	out_put(&s, long_name, sizeof(long_name));
	for (int i = 0; i < 256; i++)
		out_byte(&s, 'x');
	out_byte(&s, FORMAT_TAG_OFFERED_COUNTER);
	out_varint(&s, 0);
	out_varint(&s, 0);
	out_varint(&s, 3);
	out_varint(&s, 1);
	out_put(&s, "\0\0\0", 3);
	expect(5, &s, &r, "counter name longer than 255 bytes");

	/* At the limits: 255 sets, 64 counters in 64 groups, values below
	 * 2^63. */
	out_set(&s, 255, 0, 64, 64, 63, 0);
	out_values(&r, 255, UINT64_MAX, INT64_MAX);
	expect(5, &s, &r, NULL);

	out_set(&s, 1, 0, 2, 2, 1, 0);
	out_values(&r, 2, 1, 7);
	expect(5, &s, &r, "COUNTERS of an unknown set");
	out_set(&s, 1, 0, 2, 2, 1, 0);
	out_values(&r, 1, 4, 7);
	expect(5, &s, &r, "COUNTERS mask out of range");
	out_set(&s, 1, 0, 2, 2, 1, 0);
	out_values(&r, 1, 1, (uint64_t)INT64_MAX + 1);
	expect(5, &s, &r, "counter value out of range");
	out_byte(&r, FORMAT_TAG_LEAF_COUNTERS_UNKNOWN);
	out_varint(&r, 3);
	expect(5, &s, &r, "COUNTERS_UNKNOWN of an unknown set");
	out_set(&s, 1, 0, 2, 2, 1, 0);
	out_set(&s, 1, 0, 2, 2, 1, 0);
	expect(5, &s, &r, "counter set defined twice");
	out_set(&s, 0, 0, 2, 2, 1, 0);
	expect(5, &s, &r, "counter set 0 defined");
	out_set(&s, 256, 0, 2, 2, 1, 0);
	expect(5, &s, &r, "counter set out of range");
	out_set(&s, 1, 1, 2, 2, 1, 0);
	expect(5, &s, &r, "counter set of an unknown gpu");
	out_set(&s, 1, 0, 2, 2, 2, 0);
	expect(5, &s, &r, "counter group out of range");
	out_set(&s, 1, 0, 65, 2, 1, 0);
	expect(5, &s, &r, "more than 64 counter groups");
	out_set(&s, 1, 0, 2, 65, 1, 0);
	expect(5, &s, &r, "more than 64 counters in a set");
	out_set(&s, 1, 0, 0, 2, 0, 0);
	expect(5, &s, &r, "empty counter set");
	out_set(&s, 1, 0, 2, 2, 1, 11);
	expect(5, &s, &r, "counter unit out of range");
	out_byte(&s, FORMAT_TAG_OFFERED_COUNTER);
	out_varint(&s, 0);
	out_varint(&s, 0);
	out_counter(&s, 0);
	expect(5, &s, &r, NULL);
	out_byte(&s, FORMAT_TAG_OFFERED_COUNTER);
	out_varint(&s, 2);
	out_varint(&s, 0);
	out_counter(&s, 0);
	expect(5, &s, &r, "offered counter of an unknown gpu");
	/* The string ids must exist. */
	out_byte(&s, FORMAT_TAG_OFFERED_COUNTER);
	out_varint(&s, 0);
	out_varint(&s, 0);
	out_varint(&s, 9);
	out_varint(&s, 1);
	out_put(&s, "\0\0\0", 3);
	expect(5, &s, &r, "string");
	/* A file of 1.4 knows neither. */
	out_set(&s, 1, 0, 2, 2, 1, 0);
	expect(4, &s, &r, "record not allowed in a setup chunk");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(writer_limits),
		cmocka_unit_test(hostile_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
