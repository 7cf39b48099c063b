/* SPDX-License-Identifier: MIT */
/*
 * test_memory.c: video memory (format 1.5): MEMORY records written and
 * read back, the writer's rules (the reader's are in test_reader.c), and
 * a run's figures of each heap (high-water, growth, slope, allocations),
 * whole and joined from pieces.
 */
#include "helpers.h"

#define T 1000000000ull
#define MIB (1024ull * 1024)

static crumbs_writer *setup(struct membuf *m)
{
	crumbs_writer *w = mem_writer(m, 0);
	uint32_t g = add_gpu(w, "GPU A");
	add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	return w;
}

/* A frame's heap as the recorder would give it: `leak` bytes more in use
 * each frame from `base`, and a passing allocation of as much. */
static struct crumbs_memory_desc leak_heap(uint64_t frame, uint64_t base, uint64_t leak)
{
	uint64_t in_use = base + (frame + 1) * leak;
	return (struct crumbs_memory_desc){
		.gpu = 0,
		.heap = 1,
		.flags = CRUMBS_MEMORY_HEAP_DEVICE_LOCAL,
		.size_bytes = 4096 * MIB,
		.tracked = 1,
		.allocated_bytes = 2 * leak,
		.freed_bytes = leak,
		.allocations = 2,
		.frees = 1,
		.in_use_bytes = in_use,
		.high_bytes = in_use + leak,
	};
}

static void write_leak_frames(crumbs_writer *w, uint64_t frames, uint64_t base, uint64_t leak)
{
	for (uint64_t f = 0; f < frames; f++) {
		assert_int_equal(crumbs_writer_frame_begin(w, f, T + f * 1000), CRUMBS_OK);
		struct crumbs_memory_desc m = leak_heap(f, base, leak);
		assert_int_equal(crumbs_writer_memory(w, &m), CRUMBS_OK);
		/* A heap of the budget alone, written before: frames keep
		 * them by GPU and heap. */
		struct crumbs_memory_desc b = {
			.gpu = 0, .heap = 0, .size_bytes = 512 * MIB, .budgeted = 1,
			.usage_bytes = 100 * MIB + f, .budget_bytes = 400 * MIB - f,
		};
		assert_int_equal(crumbs_writer_memory(w, &b), CRUMBS_OK);
		assert_int_equal(crumbs_writer_frame_end(w, T + f * 1000 + 900, 0, 0), CRUMBS_OK);
	}
}

static void round_trip(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = setup(&m);
	write_leak_frames(w, 3, 10 * MIB, MIB);
	reader *c = mem_read(&m, w);
	for (uint64_t f = 0; f < 3; f++) {
		const struct frame *fr = next_frame(c);
		assert_int_equal(fr->memory_count, 2);
		const struct frame_memory *b = &fr->memory[0], *h = &fr->memory[1];
		assert_int_equal(b->heap, 0);
		assert_false(b->tracked);
		assert_true(b->budgeted);
		assert_int_equal(b->usage, 100 * MIB + f);
		assert_int_equal(b->budget, 400 * MIB - f);
		assert_int_equal(b->size, 512 * MIB);
		assert_int_equal(h->heap, 1);
		assert_int_equal(h->flags, CRUMBS_MEMORY_HEAP_DEVICE_LOCAL);
		assert_int_equal(h->size, 4096 * MIB);
		assert_true(h->tracked);
		assert_false(h->budgeted);
		assert_int_equal(h->allocated, 2 * MIB);
		assert_int_equal(h->freed, MIB);
		assert_int_equal(h->allocations, 2);
		assert_int_equal(h->frees, 1);
		assert_int_equal(h->in_use, 10 * MIB + (f + 1) * MIB);
		assert_int_equal(h->high, 10 * MIB + (f + 2) * MIB);
		assert_ptr_equal(frame_memory_find(fr, 0, 1), h);
		assert_null(frame_memory_find(fr, 0, 2));
	}
	reader_free(c);
	free(m.data);
}

static void writer_rules(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = setup(&m);
	struct crumbs_memory_desc d = leak_heap(0, 0, MIB);
	assert_int_equal(crumbs_writer_memory(w, &d), CRUMBS_ERROR_BAD_STATE); /* outside a frame */
	assert_int_equal(crumbs_writer_frame_begin(w, 0, T), CRUMBS_OK);
	struct crumbs_memory_desc bad = d;
	bad.gpu = 1;
	assert_int_equal(crumbs_writer_memory(w, &bad), CRUMBS_ERROR_INVALID_ARGUMENT);
	bad = d;
	bad.heap = CRUMBS_MAX_MEMORY_HEAPS;
	assert_int_equal(crumbs_writer_memory(w, &bad), CRUMBS_ERROR_INVALID_ARGUMENT);
	bad = d;
	bad.flags = 1u << 2;
	assert_int_equal(crumbs_writer_memory(w, &bad), CRUMBS_ERROR_INVALID_ARGUMENT);
	bad = d;
	bad.high_bytes = bad.in_use_bytes - 1;
	assert_int_equal(crumbs_writer_memory(w, &bad), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_memory(w, NULL), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_memory(w, &d), CRUMBS_OK);
	/* A heap once a frame; again in the next. */
	assert_int_equal(crumbs_writer_memory(w, &d), CRUMBS_ERROR_INVALID_ARGUMENT);
	assert_int_equal(crumbs_writer_frame_end(w, T + 10, 0, 0), CRUMBS_OK);
	assert_int_equal(crumbs_writer_frame_begin(w, 1, T + 10), CRUMBS_OK);
	assert_int_equal(crumbs_writer_memory(w, &d), CRUMBS_OK);
	assert_int_equal(crumbs_writer_frame_end(w, T + 20, 0, 0), CRUMBS_OK);
	reader *c = mem_read(&m, w);
	assert_int_equal(next_frame(c)->memory_count, 1);
	assert_int_equal(next_frame(c)->memory_count, 1);
	reader_free(c);
	free(m.data);
}

/* A run of leaking frames: its high-water is the last frame's passing
 * peak, its growth the leak times the frames after the first, its slope
 * the leak; joined from pieces, the very same. */
static void run_figures(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = setup(&m);
	const uint64_t leak = 3 * MIB + 17, base = 100 * MIB, frames = 40;
	write_leak_frames(w, frames, base, leak);
	reader *c = mem_read(&m, w);
	struct memory_stats whole = { 0 }, a = { 0 }, b = { 0 };
	for (uint64_t f = 0; f < frames; f++) {
		const struct frame *fr = next_frame(c);
		assert_true(memory_stats_add(&whole, fr));
		assert_true(memory_stats_add(f < 13 ? &a : &b, fr));
	}
	assert_true(memory_stats_append(&a, &b));
	for (int k = 0; k < 2; k++) {
		const struct memory_stats *s = k ? &a : &whole;
		assert_int_equal(s->count, 2);
		const struct memory_heap_stats *h = &s->heaps[1];
		assert_int_equal(h->heap, 1);
		const struct memory_series *u = memory_heap_series(h);
		assert_ptr_equal(u, &h->use);
		assert_int_equal(u->frames, frames);
		assert_int_equal(u->high, base + (frames + 1) * leak);
		assert_int_equal(u->high_frame, frames - 1);
		assert_int_equal(memory_series_growth(u), (int64_t)((frames - 1) * leak));
		assert_true(memory_series_slope(u) > (double)leak - 1e-6 &&
			    memory_series_slope(u) < (double)leak + 1e-6);
		assert_int_equal(h->allocations, 2 * frames);
		assert_int_equal(h->frees, frames);
		assert_int_equal(h->most_allocations, 2);
		/* The budget-only heap: the driver's usage, which grows a
		 * byte a frame, and its least budget. */
		const struct memory_heap_stats *bh = &s->heaps[0];
		assert_ptr_equal(memory_heap_series(bh), &bh->usage);
		assert_int_equal(memory_series_growth(&bh->usage), (int64_t)frames - 1);
		assert_int_equal(bh->least_budget, 400 * MIB - (frames - 1));
		assert_int_equal(bh->budget_frames, frames);
	}
	assert_memory_equal(&whole.heaps[1].use, &a.heaps[1].use, sizeof(whole.heaps[1].use));
	memory_stats_release(&whole);
	memory_stats_release(&a);
	memory_stats_release(&b);
	reader_free(c);
	free(m.data);
}

/* A shrinking heap: negative growth and slope. */
static void shrinking(void **state)
{
	(void)state;
	struct memory_stats s = { 0 };
	struct frame f;
	struct frame_memory fm;
	memset(&f, 0, sizeof(f));
	for (uint64_t i = 0; i < 5; i++) {
		memset(&fm, 0, sizeof(fm));
		fm.tracked = true;
		fm.in_use = fm.high = 1000 - 100 * i;
		f.number = 10 + i;
		f.memory = &fm;
		f.memory_count = 1;
		assert_true(memory_stats_add(&s, &f));
	}
	assert_int_equal(memory_series_growth(&s.heaps[0].use), -400);
	assert_true(memory_series_slope(&s.heaps[0].use) > -100.000001 &&
		    memory_series_slope(&s.heaps[0].use) < -99.999999);
	assert_int_equal(s.heaps[0].use.high, 1000);
	assert_int_equal(s.heaps[0].use.high_frame, 10);
	memory_stats_release(&s);
}

/* A long run's points for a picture: at most MEMORY_POINTS, each its
 * group's largest value, the same whole and joined from pieces split
 * anywhere. */
static void add_frames(struct memory_stats *s, uint64_t from, uint64_t to)
{
	struct frame f;
	struct frame_memory fm;
	memset(&f, 0, sizeof(f));
	for (uint64_t i = from; i < to; i++) {
		memset(&fm, 0, sizeof(fm));
		fm.tracked = true;
		/* A saw: a leak freed every 100 frames, and a spike at 777. */
		fm.in_use = fm.high = (i % 100) * 1000 + (i == 777 ? 5000000 : 0);
		f.number = 3 + i;
		f.memory = &fm;
		f.memory_count = 1;
		assert_true(memory_stats_add(s, &f));
	}
}

static void points_whole_and_pieces(void **state)
{
	(void)state;
	const uint64_t n = 5000;
	struct memory_stats whole = { 0 };
	add_frames(&whole, 0, n);
	const struct memory_points *w = memory_heap_points(&whole.heaps[0]);
	assert_true(w->count <= MEMORY_POINTS && w->count > MEMORY_POINTS / 2);
	uint64_t top = 0;
	for (uint32_t i = 0; i < w->count; i++)
		top = w->p[i].value > top ? w->p[i].value : top;
	assert_int_equal(top, 5000000 + 77 * 1000); /* the spike is kept */
	static const uint64_t cuts[][2] = { { 1, 2 }, { 255, 4000 }, { 1000, 1001 }, { 2500, 4999 } };
	for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
		struct memory_stats a = { 0 }, b = { 0 }, d = { 0 };
		add_frames(&a, 0, cuts[c][0]);
		add_frames(&b, cuts[c][0], cuts[c][1]);
		add_frames(&d, cuts[c][1], n);
		assert_true(memory_stats_append(&a, &b));
		assert_true(memory_stats_append(&a, &d));
		const struct memory_points *j = memory_heap_points(&a.heaps[0]);
		assert_int_equal(j->count, w->count);
		assert_int_equal(j->shift, w->shift);
		assert_memory_equal(j->p, w->p, sizeof(*w->p) * w->count);
		memory_stats_release(&a);
		memory_stats_release(&b);
		memory_stats_release(&d);
	}
	memory_stats_release(&whole);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(writer_rules),
		cmocka_unit_test(run_figures),
		cmocka_unit_test(shrinking),
		cmocka_unit_test(points_whole_and_pieces),
	};
	return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
