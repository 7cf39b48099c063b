/* SPDX-License-Identifier: MIT */
/*
 * test_writer.c: the writer's side of the format: the checksum, tick
 * differences across the wrap, the UTF-8 rule and name repair, misuse of
 * the API (refused, with the file still valid), the depth limit and the
 * limits of a frame and of a chunk.
 */
#include "helpers.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define T 1000000000ull

static void crc32c_check_value(void **state)
{
	(void)state;
	assert_int_equal(crumbs_crc32c(0, "123456789", 9), 0xE3069283u);
	/* Continuing over parts gives the same result as one call. */
	uint32_t part = crumbs_crc32c(0, "1234", 4);
	assert_int_equal(crumbs_crc32c(part, "56789", 5), 0xE3069283u);
	assert_int_equal(crumbs_crc32c(0, "", 0), 0);
}

/* The checksum a bit at a time, as its definition says. */
static uint32_t crc32c_bitwise(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
	}
	return ~crc;
}

extern int crc32c_tables_only;

/* Both ways of computing it (the crc32 instruction where the processor
 * has it, the tables everywhere) agree with the definition at every
 * alignment and length, whole or in parts. */
static void crc32c_both_ways(void **state)
{
	(void)state;
	unsigned char buf[300];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (unsigned char)(x >> 16);
	}
	for (int tables = 0; tables < 2; tables++) {
		crc32c_tables_only = tables;
		for (size_t at = 0; at < 9; at++)
			for (size_t n = 0; at + n <= sizeof(buf); n += 7) {
				uint32_t want = crc32c_bitwise(0, buf + at, n);
				assert_int_equal(crumbs_crc32c(0, buf + at, n), want);
				uint32_t part = crumbs_crc32c(0, buf + at, n / 3);
				assert_int_equal(crumbs_crc32c(part, buf + at + n / 3, n - n / 3), want);
			}
	}
	crc32c_tables_only = 0;
	/* Past three lanes of 1024 bytes, which the instruction checks at
	 * once and joins: lengths around each multiple of 3 KiB. */
	enum { BIG = 13008 };
	unsigned char *big = malloc(BIG);
	assert_non_null(big);
	for (size_t i = 0; i < BIG; i++) {
		x = x * 1103515245u + 12345u;
		big[i] = (unsigned char)(x >> 16);
	}
	static const size_t lens[] = { 3071, 3072, 3073, 3080, 6143, 6144, 6151, 9216, 12000, 12999 };
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
		for (size_t at = 0; at < 3; at++) {
			uint32_t want = crc32c_bitwise(0xA5A5A5A5u, big + at, lens[k]);
			assert_int_equal(crumbs_crc32c(0xA5A5A5A5u, big + at, lens[k]), want);
			crc32c_tables_only = 1;
			assert_int_equal(crumbs_crc32c(0xA5A5A5A5u, big + at, lens[k]), want);
			crc32c_tables_only = 0;
		}
	free(big);
}

static void ticks_delta(void **state)
{
	(void)state;
	assert_int_equal(crumbs_ticks_delta(500, (1ull << 36) - 1000, 36), 1500);
	assert_int_equal(crumbs_ticks_delta((1ull << 36) - 1000, 500, 36), -1500);
	assert_int_equal(crumbs_ticks_delta(5, 10, 64), -5);
	assert_int_equal(crumbs_ticks_delta(0, UINT64_MAX, 64), 1);
	assert_int_equal(crumbs_ticks_delta(1ull << 63, 0, 64), INT64_MIN);
	assert_int_equal(crumbs_ticks_delta(3, 1, 0), 0);
}

static void utf8_rule(void **state)
{
	(void)state;
	const unsigned char ok2[] = { 0xD0, 0x9A }, ok4[] = { 0xF0, 0x9F, 0x98, 0x80 };
	const unsigned char overlong[] = { 0xC0, 0xAF }, surrogate[] = { 0xED, 0xA0, 0x80 };
	const unsigned char high[] = { 0xF4, 0x90, 0x80, 0x80 }, cut[] = { 0xE3, 0x81 };
	assert_int_equal(crumbs_utf8_sequence(ok2, 2), 2);
	assert_int_equal(crumbs_utf8_sequence(ok4, 4), 4);
	assert_int_equal(crumbs_utf8_sequence((const unsigned char *)"a", 1), 1);
	assert_int_equal(crumbs_utf8_sequence((const unsigned char *)"", 1), 0);
	assert_int_equal(crumbs_utf8_sequence(overlong, 2), 0);
	assert_int_equal(crumbs_utf8_sequence(surrogate, 3), 0);
	assert_int_equal(crumbs_utf8_sequence(high, 4), 0);
	assert_int_equal(crumbs_utf8_sequence(cut, 2), 0);
	assert_int_equal(crumbs_utf8_sequence(ok2, 0), 0);
}

static crumbs_writer *one_queue(struct membuf *m, uint32_t *q)
{
	crumbs_writer *w = mem_writer(m, 0);
	uint32_t g = add_gpu(w, "GPU");
	*q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	crumbs_writer_calibration(w, g, T, T, 0);
	return w;
}

/* Invalid UTF-8 and over-long names are repaired, never written raw. */
static void names_are_repaired(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = one_queue(&m, &q);
	char longname[6000];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T, T, NULL, NULL);
	assert_int_equal(crumbs_writer_scope_begin(w, "bad \xff\xfe byte", 0, T + 1), CRUMBS_OK);
	crumbs_writer_scope_end(w, T + 2);
	assert_int_equal(crumbs_writer_scope_begin(w, longname, 0, T + 3), CRUMBS_OK);
	crumbs_writer_scope_end(w, T + 4);
	assert_int_equal(crumbs_writer_scope_begin(w, NULL, 0, T + 5), CRUMBS_OK);
	crumbs_writer_scope_end(w, T + 6);
	crumbs_writer_submit_end(w, T + 7);
	crumbs_writer_frame_end(w, T + 8, 0, 0);
	reader *c = mem_read(&m, w);
	const struct node *root = next_frame(c)->queues[q].root;
	must_find(root, "bad \xEF\xBF\xBD\xEF\xBF\xBD byte");
	const struct node *n = root->child->next;
	assert_int_equal(n->name_len, 4096);
	assert_int_equal(root->child->next->next->name_len, 0);
	reader_free(c);
	free(m.data);
}

/* Calls out of order or with bad arguments are refused and change
 * nothing: the file stays readable. */
static void misuse_is_refused(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = one_queue(&m, &q);
	struct crumbs_submit_desc s = { 0 };
	s.queue = q;
	s.cpu_ns = T;

	assert_int_equal(crumbs_writer_scope_begin(w, "x", 0, CRUMBS_NO_TICKS), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_submit_begin(w, &s), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_frame_end(w, T, 0, 0), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_frame_begin(w, 5, T), CRUMBS_OK);
	/* Command buffers not recorded belong to a submission. */
	assert_int_equal(crumbs_writer_unrecorded(w, 1), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_frame_begin(w, 6, T), CRUMBS_ERROR_BAD_STATE);
	/* No queue is current yet. */
	assert_int_equal(crumbs_writer_scope_begin(w, "x", 0, CRUMBS_NO_TICKS), CRUMBS_ERROR_BAD_STATE);
	s.queue = 9;
	assert_int_equal(crumbs_writer_submit_begin(w, &s), CRUMBS_ERROR_INVALID_ARGUMENT);
	s.queue = q;
	assert_int_equal(crumbs_writer_submit_begin(w, &s), CRUMBS_OK);
	assert_int_equal(crumbs_writer_submit_begin(w, &s), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_unrecorded(w, 0), CRUMBS_OK); /* writes nothing */
	assert_int_equal(crumbs_writer_scope_begin(w, "x", 4, T), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_frame_end(w, T, 0, 0), CRUMBS_ERROR_BAD_STATE);
	struct crumbs_gpu_desc gpu = { 0 };
	assert_int_equal(crumbs_writer_add_gpu(w, &gpu, NULL), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_submit_end(w, T + 10), CRUMBS_OK);
	assert_int_equal(crumbs_writer_scope_begin(w, "x", 0, T + 11), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_frame_end(w, T + 20, 1u << 9, 0), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_frame_end(w, T + 20, 0, 0), CRUMBS_OK);
	/* Frame numbers must increase. */
	assert_int_equal(crumbs_writer_frame_begin(w, 5, T + 30), CRUMBS_ERROR_INVALID_ARGUMENT);
	struct crumbs_queue_desc bad = { 0 };
	bad.gpu = 7;
	bad.timestamp_period = 1;
	assert_int_equal(crumbs_writer_add_queue(w, &bad, NULL), CRUMBS_ERROR_INVALID_ARGUMENT);
	bad.gpu = 0;
	bad.timestamp_period = 0;
	assert_int_equal(crumbs_writer_add_queue(w, &bad, NULL), CRUMBS_ERROR_INVALID_ARGUMENT);

	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_int_equal(f->number, 5);
	assert_int_equal(f->queues[q].submissions, 1);
	assert_int_equal(f->queues[q].busy_ns, 10);
	assert_int_equal(f->queues[q].unrecorded, 0);
	reader_free(c);
	free(m.data);
}

/* Scopes beyond 255 deep are dropped with their ends, and counted. */
static void depth_limit(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = one_queue(&m, &q);
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T, T, NULL, NULL);
	for (int i = 0; i < 300; i++)
		assert_int_equal(crumbs_writer_scope_begin(w, "deep", 0, T + (uint64_t)i),
				 i < 255 ? CRUMBS_OK : CRUMBS_ERROR_LIMIT);
	for (int i = 0; i < 300; i++)
		assert_int_equal(crumbs_writer_scope_end(w, T + 300 + (uint64_t)i), CRUMBS_OK);
	crumbs_writer_submit_end(w, T + 700);
	crumbs_writer_frame_end(w, T + 800, 0, 0);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_true(f->flags & CRUMBS_FRAME_SCOPES_DROPPED);
	assert_int_equal(f->dropped_scopes, 45);
	assert_int_equal(f->queues[q].scopes, 255);
	assert_int_equal(f->queues[q].unmatched_ends, 0);
	assert_int_equal(f->queues[q].open_scopes, 0);
	reader_free(c);
	free(m.data);
}

/* Past the format's scopes and events a frame holds, scopes and leaf
 * events are dropped, their ends with them, and counted. */
static void frame_node_limit(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	const uint32_t extra = 10;
	crumbs_writer *w = one_queue(&m, &q);
	struct crumbs_leaf_desc draw = { CRUMBS_EVENT_DRAW, "d", 1, 0, 0, 0, T + 2, T + 3 };
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T, T, NULL, NULL);
	for (uint32_t i = 0; i < (1u << 18) + extra; i++) {
		enum crumbs_result r = i % 2 ? crumbs_writer_leaf(w, &draw) :
				       crumbs_writer_scope_begin(w, "s", 0, T + 1);
		assert_int_equal(r, i < 1u << 18 ? CRUMBS_OK : CRUMBS_ERROR_LIMIT);
		if (i % 2 == 0)
			assert_int_equal(crumbs_writer_scope_end(w, T + 4), CRUMBS_OK);
	}
	crumbs_writer_submit_end(w, T + 5);
	assert_int_equal(crumbs_writer_frame_end(w, T + 6, 0, 0), CRUMBS_OK);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_true(f->flags & CRUMBS_FRAME_SCOPES_DROPPED);
	assert_int_equal(f->dropped_scopes, extra);
	assert_int_equal(f->queues[q].scopes + f->queues[q].events, 1u << 18);
	assert_int_equal(f->queues[q].unmatched_ends, 0);
	reader_free(c);
	free(m.data);
}

/* Names are counted at each scope that uses them: past 16 MiB of them in
 * a frame, scopes are dropped. */
static void frame_name_limit(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	char *name = malloc(4097);
	memset(name, 'n', 4096);
	name[4096] = '\0';
	crumbs_writer *w = one_queue(&m, &q);
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T, T, NULL, NULL);
	for (uint32_t i = 0; i < 4100; i++) {
		assert_int_equal(crumbs_writer_scope_begin(w, name, 0, T + 1),
				 i < 4096 ? CRUMBS_OK : CRUMBS_ERROR_LIMIT);
		assert_int_equal(crumbs_writer_scope_end(w, T + 2), CRUMBS_OK);
	}
	crumbs_writer_submit_end(w, T + 3);
	assert_int_equal(crumbs_writer_frame_end(w, T + 4, 0, 0), CRUMBS_OK);
	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_int_equal(f->queues[q].scopes, 4096);
	assert_int_equal(f->dropped_scopes, 4);
	reader_free(c);
	free(name);
	free(m.data);
}

/* Records that may be left out (ends with nothing open, counts) are, past
 * the records a frame holds; a frame with more of the others is dropped
 * whole, and the next is written. */
static void frame_record_limit(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = one_queue(&m, &q);
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T, T, NULL, NULL);
	/* The submission took two records, its end counted ahead. */
	for (uint32_t i = 0; i < (1u << 20); i++)
		assert_int_equal(crumbs_writer_scope_end(w, T + 1),
				 i < (1u << 20) - 2 ? CRUMBS_OK : CRUMBS_ERROR_LIMIT);
	assert_int_equal(crumbs_writer_counts(w, 1, 0, 0, 0), CRUMBS_ERROR_LIMIT);
	crumbs_writer_submit_end(w, T + 2);
	assert_int_equal(crumbs_writer_frame_end(w, T + 3, 0, 0), CRUMBS_OK);

	crumbs_writer_frame_begin(w, 2, T + 10);
	for (uint32_t i = 0; i < (1u << 19) + 1; i++) {
		submit(w, q, T + 10, T + 10, NULL, NULL);
		crumbs_writer_submit_end(w, T + 11);
	}
	assert_int_equal(crumbs_writer_frame_end(w, T + 12, 0, 0), CRUMBS_ERROR_LIMIT);
	crumbs_writer_frame_begin(w, 3, T + 20);
	assert_int_equal(crumbs_writer_frame_end(w, T + 21, 0, 0), CRUMBS_OK);

	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_int_equal(f->number, 1);
	assert_int_equal(f->queues[q].unmatched_ends, (1u << 20) - 2);
	f = next_frame(c);
	assert_int_equal(f->number, 3);
	reader_free(c);
	free(m.data);
}

/* A chunk whose frames left half the strings a chunk may hold is
 * written, so that the next frame's strings fit in a chunk of their own
 * whatever they are. */
static void chunk_string_limit(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 16u << 20);
	uint32_t g = add_gpu(w, "GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	uint32_t n = 0;
	for (uint64_t f = 0; f < 5; f++) {
		crumbs_writer_frame_begin(w, f, T + f * 10);
		crumbs_writer_select_queue(w, q);
		for (uint32_t i = 0; i < 1u << 18; i++) {
			char name[16];
			snprintf(name, sizeof(name), "%x", n++);
			struct crumbs_leaf_desc draw = { CRUMBS_EVENT_DRAW, name, 1, 0, 0, 0,
							 CRUMBS_NO_TICKS, CRUMBS_NO_TICKS };
			assert_int_equal(crumbs_writer_leaf(w, &draw), CRUMBS_OK);
		}
		assert_int_equal(crumbs_writer_frame_end(w, T + f * 10 + 5, 0, 0), CRUMBS_OK);
	}
	reader *c = mem_read(&m, w);
	/* The setup, four frames of 2^18 strings, and the fifth. */
	assert_int_equal(reader_meta(c)->chunk_count, 3);
	for (int f = 0; f < 5; f++)
		assert_int_equal(next_frame(c)->queues[q].events, 1u << 18);
	reader_free(c);
	free(m.data);
}

/* A flush writes what was added so far, devices and queues too: the
 * bytes up to it read as a cut file that knows them, with the frames
 * ended before it (a recorder's run flushes as it begins, so that a
 * process killed before its first frame leaves a file that reads). */
static void flush_writes_the_setup(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	add_gpu(w, "GPU");
	uint32_t q = add_queue(w, 0, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	assert_int_equal(crumbs_writer_flush(w), CRUMBS_OK);
	reader *c;
	struct analyze_error e;
	const struct frame *f = NULL;
	assert_int_equal(reader_open_memory(m.data, m.len, &c, &e), CRUMBS_OK);
	assert_int_equal(reader_next_frame(c, &f, &e), CRUMBS_ERROR_TRUNCATED);
	assert_null(f);
	assert_int_equal(reader_meta(c)->gpu_count, 1);
	assert_int_equal(reader_meta(c)->queue_count, 1);
	assert_int_equal(reader_meta(c)->frame_count, 0);
	reader_free(c);

	assert_int_equal(crumbs_writer_frame_begin(w, 7, T), CRUMBS_OK);
	submit(w, q, T, T, NULL, NULL);
	assert_int_equal(crumbs_writer_submit_end(w, T + 10), CRUMBS_OK);
	assert_int_equal(crumbs_writer_frame_end(w, T + 20, 0, 0), CRUMBS_OK);
	assert_int_equal(crumbs_writer_flush(w), CRUMBS_OK);
	assert_int_equal(reader_open_memory(m.data, m.len, &c, &e), CRUMBS_OK);
	assert_int_equal(reader_meta(c)->frame_count, 1);
	f = next_frame(c);
	assert_int_equal(f->number, 7);
	assert_int_equal(f->queues[q].busy_ns, 10);
	reader_free(c);
	crumbs_writer_free(w);
	free(m.data);
}

/* With a path, the file appears only at close, under its name. */
static void atomic_file(void **state)
{
	(void)state;
	char path[] = "/tmp/crumbs-writer-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	crumbs_writer *w;
	struct crumbs_writer_desc d = { 0 };
	d.path = path;
	assert_int_equal(crumbs_writer_open(&d, &w), CRUMBS_OK);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(crumbs_writer_close(w), CRUMBS_OK);
	reader *c;
	struct analyze_error e;
	assert_int_equal(reader_open_file(path, &c, &e), CRUMBS_OK);
	assert_int_equal(reader_meta(c)->frame_count, 0);
	reader_free(c);
	unlink(path);
	/* Freed without closing: nothing is left behind. */
	assert_int_equal(crumbs_writer_open(&d, &w), CRUMBS_OK);
	crumbs_writer_free(w);
	assert_int_equal(access(path, F_OK), -1);
	d.path = "/nonexistent-dir/x.crumbs";
	assert_int_equal(crumbs_writer_open(&d, &w), CRUMBS_ERROR_IO);
	crumbs_writer_free(NULL);
}

/* Links planted at the path and at the temporary name it once had
 * (PATH.PID.tmp) are never written through: the file outside stays as it
 * was, and the path becomes the capture, the link replaced. */
static void links_never_followed(void **state)
{
	(void)state;
	char dir[] = "/tmp/crumbs-writer-XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);
	char outside[64], path[64], old_temp[96];
	snprintf(outside, sizeof(outside), "%s.outside", dir);
	snprintf(path, sizeof(path), "%s/x.crumbs", dir);
	snprintf(old_temp, sizeof(old_temp), "%s.%ld.tmp", path, (long)getpid());
	FILE *f = fopen(outside, "w");
	assert_non_null(f);
	fputs("outside\n", f);
	fclose(f);
	assert_int_equal(symlink(outside, path), 0);
	assert_int_equal(symlink(outside, old_temp), 0);

	crumbs_writer *w;
	struct crumbs_writer_desc d = { 0 };
	d.path = path;
	assert_int_equal(crumbs_writer_open(&d, &w), CRUMBS_OK);
	assert_int_equal(crumbs_writer_close(w), CRUMBS_OK);
	char text[16] = "";
	f = fopen(outside, "r");
	assert_non_null(f);
	assert_int_equal(fread(text, 1, sizeof(text) - 1, f), 8);
	fclose(f);
	assert_string_equal(text, "outside\n");
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	reader *c;
	struct analyze_error e;
	assert_int_equal(reader_open_file(path, &c, &e), CRUMBS_OK);
	reader_free(c);
	assert_int_equal(lstat(old_temp, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	unlink(old_temp);
	unlink(path);
	unlink(outside);
	assert_int_equal(rmdir(dir), 0); /* and no temporary was left */
}

static void result_strings(void **state)
{
	(void)state;
	assert_string_equal(crumbs_result_str(CRUMBS_OK), "success");
	assert_string_equal(crumbs_result_str(CRUMBS_ERROR_TRUNCATED), "capture is truncated");
	assert_string_equal(crumbs_result_str((enum crumbs_result)999), "unknown result");
}

/* CPU threads and their scopes come back as written, beside a queue's,
 * in two frames of one chunk: names, nesting, times, an unmatched end,
 * a scope left open, an end given before its begin. */
static void cpu_round_trip(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = one_queue(&m, &q);

	for (uint64_t f = 0; f < 2; f++) {
		uint64_t t = T + f * 1000000;
		assert_int_equal(crumbs_writer_frame_begin(w, f, t), CRUMBS_OK);
		assert_int_equal(crumbs_writer_cpu_thread(w, 4242, "Render Thread"), CRUMBS_OK);
		assert_int_equal(crumbs_writer_cpu_begin(w, "Frame", 0, t + 100), CRUMBS_OK);
		assert_int_equal(crumbs_writer_cpu_begin(w, "Render", 1, t + 200), CRUMBS_OK);
		/* Inside a submission too: CPU records are no queue's. */
		submit(w, q, t + 250, t + 300, NULL, NULL);
		assert_int_equal(crumbs_writer_cpu_end(w, t + 500), CRUMBS_OK);
		assert_int_equal(crumbs_writer_scope_begin(w, "GPU", 0, t + 300), CRUMBS_OK);
		assert_int_equal(crumbs_writer_scope_end(w, t + 400), CRUMBS_OK);
		assert_int_equal(crumbs_writer_submit_end(w, t + 400), CRUMBS_OK);
		assert_int_equal(crumbs_writer_cpu_thread(w, 7, NULL), CRUMBS_OK);
		assert_int_equal(crumbs_writer_cpu_end(w, t + 600), CRUMBS_OK); /* unmatched */
		assert_int_equal(crumbs_writer_cpu_begin(w, "Job", 3, t + 700), CRUMBS_OK);
		assert_int_equal(crumbs_writer_cpu_end(w, t + 650), CRUMBS_OK); /* taken as its begin */
		assert_int_equal(crumbs_writer_cpu_begin(w, "Open", 2, t + 800), CRUMBS_OK);
		assert_int_equal(crumbs_writer_cpu_thread(w, 4242, NULL), CRUMBS_OK);
		assert_int_equal(crumbs_writer_cpu_end(w, t + 900), CRUMBS_OK);
		assert_int_equal(crumbs_writer_frame_end(w, t + 1000, 0, 0), CRUMBS_OK);
	}

	reader *c = mem_read(&m, w);
	assert_int_equal(reader_meta(c)->version_minor, CRUMBS_FORMAT_MINOR);
	for (uint64_t n = 0; n < 2; n++) {
		const struct frame *f = next_frame(c);
		assert_int_equal(f->number, n);
		assert_int_equal(f->cpu_thread_count, 2);
		assert_int_equal(f->cpu_scopes, 4);
		assert_int_equal(f->scopes, 1);
		const struct frame_cpu_thread *a = &f->cpu_threads[0], *b = &f->cpu_threads[1];
		assert_int_equal(a->tid, 4242);
		assert_int_equal(a->name_len, strlen("Render Thread"));
		assert_memory_equal(a->name, "Render Thread", a->name_len);
		assert_int_equal(a->scopes, 2);
		assert_int_equal(a->open_scopes, 0);
		assert_int_equal(a->unmatched_ends, 0);
		const struct node *frame = must_find(a->root, "Frame");
		const struct node *render = must_find(a->root, "Render");
		assert_int_equal(frame->begin_ns, (int64_t)(T + n * 1000000 + 100));
		assert_int_equal(frame->inclusive_ns, 800);
		assert_int_equal(frame->exclusive_ns, 500);
		assert_int_equal(render->inclusive_ns, 300);
		assert_int_equal(render->exclusive_ns, 300);
		assert_int_equal(render->level, 1);
		assert_ptr_equal(render->parent, frame);
		assert_int_equal(a->root->inclusive_ns, 800);
		assert_int_equal(b->tid, 7);
		assert_int_equal(b->unmatched_ends, 1);
		assert_int_equal(b->open_scopes, 1);
		const struct node *job = must_find(b->root, "Job");
		assert_int_equal(job->inclusive_ns, 0);
		assert_int_equal(job->level, 3);
		const struct node *open = must_find(b->root, "Open");
		assert_true(open->flags & NODE_OPEN);
		assert_int_equal(open->inclusive_ns, 200);
	}
	reader_free(c);
	free(m.data);
}

/* CPU records out of place are refused, and the file stays readable:
 * none outside a frame, no scope without a thread, at most 256 threads a
 * frame, and scopes nested deeper than 255 dropped with their ends. */
static void cpu_misuse(void **state)
{
	(void)state;
	struct membuf m;
	uint32_t q;
	crumbs_writer *w = one_queue(&m, &q);

	assert_int_equal(crumbs_writer_cpu_thread(w, 1, "a"), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_cpu_begin(w, "x", 0, T), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_frame_begin(w, 0, T), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_begin(w, "x", 0, T), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_cpu_end(w, T), CRUMBS_ERROR_BAD_STATE);
	for (uint32_t i = 0; i < 256; i++)
		assert_int_equal(crumbs_writer_cpu_thread(w, i, "t"), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_thread(w, 5, NULL), CRUMBS_OK); /* one of them */
	assert_int_equal(crumbs_writer_cpu_begin(w, "x", 4, T), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_cpu_begin(w, "x", 0, (uint64_t)INT64_MAX + 1),
			 CRUMBS_ERROR_INVALID_ARGUMENT);
	for (unsigned i = 0; i < 300; i++)
		assert_int_equal(crumbs_writer_cpu_begin(w, "deep", 0, T + i),
				 i < 255 ? CRUMBS_OK : CRUMBS_ERROR_LIMIT);
	for (unsigned i = 0; i < 300; i++)
		assert_int_equal(crumbs_writer_cpu_end(w, T + 1000 - i), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_thread(w, 256, "one too many"), CRUMBS_ERROR_LIMIT);
	/* It left no thread current. */
	assert_int_equal(crumbs_writer_cpu_begin(w, "x", 0, T), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_frame_end(w, T + 2000, 0, 0), CRUMBS_OK);
	/* The next frame has threads of its own. */
	assert_int_equal(crumbs_writer_frame_begin(w, 1, T + 3000), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_begin(w, "x", 0, T + 3000), CRUMBS_ERROR_BAD_STATE);
	assert_int_equal(crumbs_writer_cpu_thread(w, 999, "new"), CRUMBS_OK);
	assert_int_equal(crumbs_writer_frame_end(w, T + 4000, 0, 0), CRUMBS_OK);

	reader *c = mem_read(&m, w);
	const struct frame *f = next_frame(c);
	assert_int_equal(f->cpu_thread_count, 256);
	assert_int_equal(f->cpu_threads[5].scopes, 255);
	assert_int_equal(f->cpu_threads[5].unmatched_ends, 0);
	assert_int_equal(f->cpu_threads[5].open_scopes, 0);
	assert_true(f->flags & CRUMBS_FRAME_SCOPES_DROPPED);
	assert_int_equal(f->dropped_scopes, 45);
	f = next_frame(c);
	assert_int_equal(f->cpu_thread_count, 1);
	assert_int_equal(f->cpu_threads[0].tid, 999);
	reader_free(c);
	free(m.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc32c_check_value),
		cmocka_unit_test(crc32c_both_ways),
		cmocka_unit_test(ticks_delta),
		cmocka_unit_test(utf8_rule),
		cmocka_unit_test(names_are_repaired),
		cmocka_unit_test(misuse_is_refused),
		cmocka_unit_test(depth_limit),
		cmocka_unit_test(frame_node_limit),
		cmocka_unit_test(frame_name_limit),
		cmocka_unit_test(frame_record_limit),
		cmocka_unit_test(chunk_string_limit),
		cmocka_unit_test(flush_writes_the_setup),
		cmocka_unit_test(atomic_file),
		cmocka_unit_test(links_never_followed),
		cmocka_unit_test(result_strings),
		cmocka_unit_test(cpu_round_trip),
		cmocka_unit_test(cpu_misuse),
	};
	return cmocka_run_group_tests_name("writer", tests, NULL, NULL);
}
