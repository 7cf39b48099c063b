/* SPDX-License-Identifier: MIT */
/*
 * scopes.c: the CPU cost of a scope's begin and end, outside the capture
 * frame and inside it, without the driver's own vkCmdWriteTimestamp (a
 * no-op stands in for it). Each scope sits between two calls the compiler
 * cannot see through, as a program's vkCmd calls would be; their own cost
 * is measured alone and taken off. Prints, for outside and inside, the
 * ns per scope and the ns per iteration of both loops it comes from.
 * Then the same of a CPU scope (crumbs_cpu_begin and crumbs_cpu_end),
 * outside captures and inside a run's frames at full detail, and of a
 * task's begin, state and end, the same way; and of one read of the
 * clock those read (the time-stamp counter on x86-64), the floor under
 * both: a CPU scope reads it twice, a task three times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "../vulkan/vkt.h"

#define OUTSIDE_REPS 50000000
#define INSIDE_REPS 200000
#define CPU_INSIDE_REPS 10000 /* a frame's: fewer than a thread's buffers hold */
#define TASK_INSIDE_REPS 4000  /* three records each, and their ids and names */

/* Stands for the program's own commands between scopes. */
__attribute__((noinline)) void opaque(VkCommandBuffer cb);
__attribute__((noinline)) void opaque(VkCommandBuffer cb)
{
	__asm__ volatile("" : : "r"(cb) : "memory");
}

static bool use_driver_timestamps;

static PFN_vkVoidFunction stub_timestamps(const char *name)
{
	return use_driver_timestamps ? NULL : vkt_no_timestamps(name);
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ns per scope: the loop with scopes less the bare loop, each the best of
 * five runs. *bare and *with get their ns per iteration. */
static double measure(crumbs_cmd *h, VkCommandBuffer cb, long reps, double *bare, double *with)
{
	*bare = *with = 1e9;
	for (int run = 0; run < 5; run++) {
		double t0 = seconds();
		for (long i = 0; i < reps; i++) {
			opaque(cb);
			opaque(cb);
		}
		double t1 = seconds();
		for (long i = 0; i < reps; i++) {
			opaque(cb);
			crumbs_scope_begin(h, 2, "Mesh Batch");
			opaque(cb);
			crumbs_scope_end(h);
		}
		double t2 = seconds();
		double b = (t1 - t0) / (double)reps * 1e9, w = (t2 - t1) / (double)reps * 1e9;
		*bare = b < *bare ? b : *bare;
		*with = w < *with ? w : *with;
	}
	return *with > *bare ? *with - *bare : 0;
}

/* ns per CPU scope (crumbs_cpu_begin and crumbs_cpu_end), as measure()
 * does; inside a run's frames, each of the five runs in a frame of its
 * own, so that the thread's buffers never fill. */
static double measure_cpu(struct vkt *t, long reps, bool frames, double *bare, double *with)
{
	VkCommandBuffer cb = VK_NULL_HANDLE;
	*bare = *with = 1e9;
	for (int run = 0; run < 5; run++) {
		double t0 = seconds();
		for (long i = 0; i < reps; i++) {
			opaque(cb);
			opaque(cb);
		}
		double t1 = seconds();
		for (long i = 0; i < reps; i++) {
			opaque(cb);
			crumbs_cpu_begin(t->crumbs, 2, "Visibility");
			opaque(cb);
			crumbs_cpu_end(t->crumbs);
		}
		double t2 = seconds();
		if (frames)
			crumbs_frame(t->crumbs);
		double b = (t1 - t0) / (double)reps * 1e9, w = (t2 - t1) / (double)reps * 1e9;
		*bare = b < *bare ? b : *bare;
		*with = w < *with ? w : *with;
	}
	return *with > *bare ? *with - *bare : 0;
}

/* ns per task (crumbs_task_begin, crumbs_task_state and crumbs_task_end),
 * as measure_cpu() does. */
static double measure_task(struct vkt *t, long reps, bool frames, double *bare, double *with)
{
	VkCommandBuffer cb = VK_NULL_HANDLE;
	*bare = *with = 1e9;
	for (int run = 0; run < 5; run++) {
		double t0 = seconds();
		for (long i = 0; i < reps; i++) {
			opaque(cb);
			opaque(cb);
			opaque(cb);
		}
		double t1 = seconds();
		for (long i = 0; i < reps; i++) {
			opaque(cb);
			crumbs_task task = crumbs_task_begin(t->crumbs, "Jobs", NULL, "Cull");
			opaque(cb);
			crumbs_task_state(t->crumbs, task, "Waiting");
			opaque(cb);
			crumbs_task_end(t->crumbs, task);
		}
		double t2 = seconds();
		if (frames)
			crumbs_frame(t->crumbs);
		double b = (t1 - t0) / (double)reps * 1e9, w = (t2 - t1) / (double)reps * 1e9;
		*bare = b < *bare ? b : *bare;
		*with = w < *with ? w : *with;
	}
	return *with > *bare ? *with - *bare : 0;
}

/* ns per read of the clock CPU scopes read, as measure() does, but the
 * best of more and shorter runs: as short as the inside loops', which a
 * shared machine's turns then seldom cut. */
static double measure_clock(long reps)
{
	VkCommandBuffer cb = VK_NULL_HANDLE;
	double bare = 1e9, with = 1e9;
	uint64_t sum = 0;
	for (int run = 0; run < 50; run++) {
		double t0 = seconds();
		for (long i = 0; i < reps; i++) {
			opaque(cb);
			opaque(cb);
		}
		double t1 = seconds();
		for (long i = 0; i < reps; i++) {
			opaque(cb);
#if defined(__x86_64__)
			sum += __rdtsc();
#else
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sum += (uint64_t)ts.tv_nsec;
#endif
			opaque(cb);
		}
		double t2 = seconds();
		double b = (t1 - t0) / (double)reps * 1e9, w = (t2 - t1) / (double)reps * 1e9;
		bare = b < bare ? b : bare;
		with = w < with ? w : with;
	}
	__asm__ volatile("" : : "r"(sum));
	return with > bare ? with - bare : 0;
}

static void cpu_scope_cost(void **state)
{
	(void)state;
	struct vkt t;
	vkt_validation = false;
	vkt_override = stub_timestamps;
	vkt_init(&t, NULL);
	double out_bare, out_with, in_bare, in_with;
	double outside = measure_cpu(&t, OUTSIDE_REPS, false, &out_bare, &out_with);
	double tout_bare, tout_with, tin_bare, tin_with;
	double task_outside = measure_task(&t, OUTSIDE_REPS, false, &tout_bare, &tout_with);
	assert_int_equal(crumbs_record(t.crumbs, 1, 100, CRUMBS_DETAIL_MAX), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	crumbs_frame(t.crumbs);
	double inside = measure_cpu(&t, CPU_INSIDE_REPS, true, &in_bare, &in_with);
	double task_inside = measure_task(&t, TASK_INSIDE_REPS, true, &tin_bare, &tin_with);
	crumbs_record_stop(t.crumbs);
	crumbs_frame(t.crumbs);
	printf("cpu outside %.3f %.3f %.3f inside %.3f %.3f %.3f\n", outside, out_bare, out_with,
	       inside, in_bare, in_with);
	printf("task outside %.3f %.3f %.3f inside %.3f %.3f %.3f\n", task_outside, tout_bare,
	       tout_with, task_inside, tin_bare, tin_with);
	printf("clock read %.3f\n", measure_clock(CPU_INSIDE_REPS));
	vkt_destroy(&t);
}

static void scope_cost(void **state)
{
	(void)state;
	struct vkt t;
	struct crumbs_desc d = { 0 };
	d.max_scopes = 5 * INSIDE_REPS + 16;
	d.name_bytes = 5 * INSIDE_REPS * 16;
	vkt_validation = false;
	vkt_override = stub_timestamps;
	vkt_init(&t, &d);

	VkCommandBuffer cb = vkt_begin(&t);
	crumbs_cmd *off = crumbs_cmd_begin(t.crumbs, cb, t.queue);
	double out_bare, out_with, in_bare, in_with;
	double outside = measure(off, cb, OUTSIDE_REPS, &out_bare, &out_with);
	crumbs_cmd_end(off);
	vkEndCommandBuffer(cb);

	assert_int_equal(crumbs_capture(t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(t.crumbs);
	cb = vkt_begin(&t);
	crumbs_cmd *in = crumbs_cmd_begin(t.crumbs, cb, t.queue);
	double inside = measure(in, cb, INSIDE_REPS, &in_bare, &in_with);
	crumbs_cmd_end(in);
	vkEndCommandBuffer(cb);
	printf("outside %.3f %.3f %.3f inside %.3f %.3f %.3f\n", outside, out_bare, out_with,
	       inside, in_bare, in_with);
	vkt_destroy(&t);
}

int main(int argc, char **argv)
{
	/* --driver: with the driver's vkCmdWriteTimestamp, for comparison. */
	use_driver_timestamps = argc > 1 && strcmp(argv[1], "--driver") == 0;
	const struct CMUnitTest tests[] = { cmocka_unit_test(scope_cost),
					    cmocka_unit_test(cpu_scope_cost) };
	return cmocka_run_group_tests_name("scope cost", tests, NULL, NULL);
}
