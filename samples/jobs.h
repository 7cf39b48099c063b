/* SPDX-License-Identifier: MIT */
/*
 * jobs.h: the sample renderer's job threads. Each frame the render thread
 * hands them a small graph of jobs, which they run in an order their
 * dependencies allow, each job a CPU scope on the thread that ran it and
 * a task on crumbs' "Jobs" timeline; the render thread waits for the jobs
 * whose results it needs.
 */
#ifndef SAMPLES_JOBS_H
#define SAMPLES_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "../include/crumbs.h"

#define JOBS_MAX 16      /* jobs in one frame's graph */
#define JOBS_THREADS_MAX 4

/* One job of a frame's graph. run() returns false on a failure it has
 * reported; the jobs that depend on it run all the same. */
struct job {
	const char *name;   /* its CPU scope's */
	bool (*run)(void *user, uint64_t frame);
	uint32_t after;     /* bit i: begins only after job i of the graph ended */
};

#define JOB_BIT(i) (1u << (i))

struct jobs;

/* Starts `threads` (1 to JOBS_THREADS_MAX) job threads, named "Worker 1"
 * and on in crumbs' captures. Returns NULL, after a message, when it
 * cannot. */
struct jobs *jobs_start(crumbs_context *crumbs, unsigned threads);

/* Hands the threads a frame's graph: `count` jobs of `list` (which must
 * live until jobs_wait() has seen them all end), each called with user
 * and frame. The graph before must have ended. */
void jobs_run(struct jobs *j, const struct job *list, unsigned count, void *user,
	      uint64_t frame);

/* Waits until every job of `mask` (bits of the graph's indices) ended, in
 * a CPU scope `name` of detail `level` while it waits. Returns false when
 * one of the graph's jobs that ended so far failed. */
bool jobs_wait(struct jobs *j, uint32_t mask, unsigned level, const char *name);

/* The CPU time the jobs of `mask` that ended took on their threads, in
 * ms: what the frame cost the CPU outside the render thread. */
double jobs_cpu_ms(struct jobs *j, uint32_t mask);

/* Ends the threads once they are idle and frees j; jobs_stop(NULL) does
 * nothing. */
void jobs_stop(struct jobs *j);

#endif
