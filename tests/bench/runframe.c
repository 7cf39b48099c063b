/* SPDX-License-Identifier: MIT */
/*
 * runframe.c: crumbs' own CPU time per frame of a run at detail 1, apart
 * from any renderer's: each frame records one command buffer with a frame
 * scope and four passes of twenty batches (level 3, left out at detail 1),
 * submits it through crumbs and ends the frame. Between frames 16 MiB are
 * touched and the thread sleeps 16 ms, as a program's own work and a 60 Hz
 * frame would, so crumbs finds its code and data out of the caches, as it
 * does in a real program; --sleep-us N sleeps N us instead (1000: frames
 * about a millisecond apart, as a fast GPU runs a light renderer). The driver's vkCmdWriteTimestamp is a no-op and
 * its copies of results become fills (what --stub-timestamps does to the
 * sample renderer; vkt_no_timestamps). Prints the medians of the
 * thread's CPU time, in microseconds, of the frame's three parts and
 * their sum; with --record the frames after the first ten are recorded
 * at detail 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../vulkan/vkt.h"

#define FRAMES 150
#define SKIP 12            /* the run begins at frame 10, and settles */
#define FLUSH_BYTES (16u << 20)

static bool record_run;
static long sleep_us = 16000;

/* The thread's CPU time: what the frame cost it, whatever the scheduler
 * did meanwhile. */
static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void run_frames(void **state)
{
	(void)state;
	static double parts[4][FRAMES];
	struct vkt t;
	vkt_validation = false;
	vkt_override = vkt_no_timestamps;
	vkt_init(&t, NULL);
	if (record_run)
		assert_int_equal(crumbs_record(t.crumbs, 10, CRUMBS_RECORD_OPEN, 1), CRUMBS_OK);
	unsigned char *other = malloc(FLUSH_BYTES);
	assert_non_null(other);
	memset(other, 1, FLUSH_BYTES);
	size_t n = 0;
	for (int f = 0; f < FRAMES + SKIP; f++) {
		for (size_t i = 0; i < FLUSH_BYTES; i += 64)
			other[i]++;
		__asm__ volatile("" : : "r"(other) : "memory"); /* the stores stay */
		double t0 = cpu_us();
		VkCommandBuffer cb = vkt_begin(&t);
		crumbs_cmd *cmd = crumbs_cmd_begin(t.crumbs, cb, t.queue);
		crumbs_scope_beginf(cmd, 0, "Frame %d", f);
		for (int p = 0; p < 4; p++) {
			crumbs_scope_beginf(cmd, 1, "Pass %d", p);
			for (int b = 0; b < 20; b++) {
				crumbs_scope_beginf(cmd, 3, "Batch %d", b);
				crumbs_scope_end(cmd);
			}
			crumbs_scope_end(cmd);
		}
		crumbs_scope_end(cmd);
		crumbs_cmd_end(cmd);
		assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
		double t1 = cpu_us();
		VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
		assert_int_equal(crumbs_queue_submit(t.crumbs, t.queue, 1, &si, VK_NULL_HANDLE),
				 VK_SUCCESS);
		double t2 = cpu_us();
		crumbs_frame(t.crumbs);
		double t3 = cpu_us();
		assert_int_equal(vkQueueWaitIdle(t.queue), VK_SUCCESS);
		vkFreeCommandBuffers(t.device, t.pool, 1, &cb);
		if (f >= SKIP) {
			parts[0][n] = t1 - t0;
			parts[1][n] = t2 - t1;
			parts[2][n] = t3 - t2;
			parts[3][n] = t3 - t0;
			n++;
		}
		nanosleep(&(struct timespec){ sleep_us / 1000000, sleep_us % 1000000 * 1000 }, NULL);
	}
	if (record_run)
		crumbs_record_stop(t.crumbs);
	printf("frame %.2f recording %.2f submitting %.2f crumbs_frame %.2f\n",
	       median(parts[3], n), median(parts[0], n), median(parts[1], n), median(parts[2], n));
	free(other);
	vkt_destroy(&t);
	vkt_override = NULL;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--record") == 0) {
			record_run = true;
		} else if (strcmp(argv[i], "--sleep-us") == 0 && i + 1 < argc) {
			char *end;
			sleep_us = strtol(argv[++i], &end, 10);
			if (*end || sleep_us < 0 || sleep_us > 1000000) {
				fprintf(stderr, "runframe: --sleep-us takes 0 to 1000000\n");
				return 2;
			}
		} else {
			fprintf(stderr, "usage: runframe [--record] [--sleep-us N]\n");
			return 2;
		}
	}
	const struct CMUnitTest tests[] = { cmocka_unit_test(run_frames) };
	return cmocka_run_group_tests_name("a run's frame", tests, NULL, NULL);
}
