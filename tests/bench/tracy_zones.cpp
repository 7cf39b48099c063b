/* SPDX-License-Identifier: MIT */
/*
 * tracy_zones.cpp: the CPU cost of Tracy's ZoneScopedN begin and end, the
 * peer `make bench TRACY=DIR` compares crumbs' CPU scope with. The loops
 * are scopes.c's for a CPU scope inside a recorded frame: the same count,
 * the same calls around each zone, five runs each ended as a frame, the
 * bare loop's time taken off. Tracy's capture server must be connected
 * (tests/bench/run starts it): a client nobody drains keeps every zone in
 * memory, which is not what Tracy's users see.
 */
#include <stdio.h>
#include <time.h>

#include <tracy/Tracy.hpp>

#define INSIDE_REPS 10000 /* scopes.c's CPU_INSIDE_REPS */
#define CONNECT_SECONDS 30

/* Stands for the program's own work between zones, as in scopes.c. */
__attribute__((noinline)) void opaque(void *p);
__attribute__((noinline)) void opaque(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ns per zone: the loop with zones less the bare loop, each the best of
 * five runs; *bare and *with get their ns per iteration. */
static double measure(long reps, double *bare, double *with)
{
	void *p = nullptr;
	*bare = *with = 1e9;
	for (int run = 0; run < 5; run++) {
		double t0 = seconds();
		for (long i = 0; i < reps; i++) {
			opaque(p);
			opaque(p);
		}
		double t1 = seconds();
		for (long i = 0; i < reps; i++) {
			opaque(p);
			ZoneScopedN("Visibility");
			opaque(p);
		}
		double t2 = seconds();
		FrameMark;
		double b = (t1 - t0) / (double)reps * 1e9, w = (t2 - t1) / (double)reps * 1e9;
		*bare = b < *bare ? b : *bare;
		*with = w < *with ? w : *with;
	}
	return *with > *bare ? *with - *bare : 0;
}

int main(void)
{
	double start = seconds();
	while (!TracyIsConnected) {
		if (seconds() - start > CONNECT_SECONDS) {
			fprintf(stderr, "tracy-zones: no Tracy server connected in %d s "
				"(tests/bench/run starts tracy-capture beside it)\n", CONNECT_SECONDS);
			return 1;
		}
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, nullptr);
	}
	double bare, with;
	double zone = measure(INSIDE_REPS, &bare, &with);
	printf("tracy inside %.3f %.3f %.3f\n", zone, bare, with);
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
