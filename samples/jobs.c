/* SPDX-License-Identifier: MIT */
/*
 * jobs.c: the sample renderer's job threads and the frame's graph they
 * run: one lock and one condition variable, since a frame has a handful
 * of jobs and each runs for tens of microseconds or more. Each job is
 * also a crumbs task on the "Jobs" timeline, with its dependencies:
 * Waiting on them, Queued once they ended, Executing on a thread.
 */
#include "jobs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct jobs {
	crumbs_context *crumbs;
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a graph was handed over, a job ended, or stop */
	/* The frame's graph, under lock. */
	const struct job *list;
	unsigned count;
	void *user;
	uint64_t frame;
	uint32_t taken, ended;
	crumbs_task task[JOBS_MAX];
	bool failed;
	double cpu_ms[JOBS_MAX]; /* each job's on its thread */
	bool stopping;
	unsigned threads;
	pthread_t thread[JOBS_THREADS_MAX];
};

static double thread_cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Moves the jobs that `ended` let go from Waiting to Queued. */
static void queue_released(struct jobs *j, uint32_t ended)
{
	for (unsigned i = 0; i < j->count; i++) {
		uint32_t after = j->list[i].after;
		if ((after & ended) && (after & ~j->ended) == 0)
			crumbs_task_state(j->crumbs, j->task[i], "Queued");
	}
}

/* The first job not taken whose dependencies all ended; -1: none. */
static int ready_job(const struct jobs *j)
{
	for (unsigned i = 0; i < j->count; i++)
		if (!(j->taken & JOB_BIT(i)) && (j->list[i].after & ~j->ended) == 0)
			return (int)i;
	return -1;
}

struct worker_start {
	struct jobs *jobs;
	unsigned index;
};

static void *worker_main(void *arg)
{
	struct worker_start *start = arg;
	struct jobs *j = start->jobs;
	char name[32];
	snprintf(name, sizeof(name), "Worker %u", start->index + 1);
	free(start);
	crumbs_thread_name(j->crumbs, name);

	pthread_mutex_lock(&j->lock);
	for (;;) {
		int i = -1;
		while (!j->stopping && (i = ready_job(j)) < 0)
			pthread_cond_wait(&j->changed, &j->lock);
		if (j->stopping)
			break;
		const struct job *job = &j->list[i];
		void *user = j->user;
		uint64_t frame = j->frame;
		crumbs_task task = j->task[i];
		j->taken |= JOB_BIT(i);
		pthread_mutex_unlock(&j->lock);

		double begin = thread_cpu_ms();
		crumbs_task_state(j->crumbs, task, "Executing");
		crumbs_cpu_begin(j->crumbs, 1, job->name);
		bool ok = job->run(user, frame);
		crumbs_cpu_end(j->crumbs);
		crumbs_task_end(j->crumbs, task);
		double cpu = thread_cpu_ms() - begin;

		pthread_mutex_lock(&j->lock);
		j->ended |= JOB_BIT(i);
		queue_released(j, JOB_BIT(i));
		j->failed = j->failed || !ok;
		j->cpu_ms[i] = cpu;
		/* Both the jobs this one held back and the render thread. */
		pthread_cond_broadcast(&j->changed);
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

struct jobs *jobs_start(crumbs_context *crumbs, unsigned threads)
{
	struct jobs *j = calloc(1, sizeof(*j));
	if (!j) {
		fprintf(stderr, "sample-renderer: out of memory\n");
		return NULL;
	}
	j->crumbs = crumbs;
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->changed, NULL);
	if (threads > JOBS_THREADS_MAX)
		threads = JOBS_THREADS_MAX;
	for (unsigned t = 0; t < threads; t++) {
		struct worker_start *start = malloc(sizeof(*start));
		int err = start ? 0 : -1;
		if (start) {
			start->jobs = j;
			start->index = t;
			err = pthread_create(&j->thread[t], NULL, worker_main, start);
		}
		if (err != 0) {
			free(start);
			fprintf(stderr, "sample-renderer: cannot start job thread %u: %s\n", t + 1,
				err > 0 ? strerror(err) : "out of memory");
			jobs_stop(j);
			return NULL;
		}
		j->threads++;
	}
	return j;
}

void jobs_run(struct jobs *j, const struct job *list, unsigned count, void *user,
	      uint64_t frame)
{
	pthread_mutex_lock(&j->lock);
	j->list = list;
	j->count = count < JOBS_MAX ? count : JOBS_MAX;
	j->user = user;
	j->frame = frame;
	j->taken = j->ended = 0;
	j->failed = false;
	memset(j->cpu_ms, 0, sizeof(j->cpu_ms));
	for (unsigned i = 0; i < j->count; i++)
		j->task[i] = crumbs_task_begin(j->crumbs, "Jobs", list[i].after ? "Waiting" : "Queued",
					       "%s", list[i].name);
	for (unsigned i = 0; i < j->count; i++)
		for (unsigned d = 0; d < j->count; d++)
			if (list[i].after & JOB_BIT(d))
				crumbs_task_depend(j->crumbs, j->task[i], "Executing", j->task[d]);
	pthread_cond_broadcast(&j->changed);
	pthread_mutex_unlock(&j->lock);
}

bool jobs_wait(struct jobs *j, uint32_t mask, unsigned level, const char *name)
{
	crumbs_cpu_begin(j->crumbs, level, name);
	pthread_mutex_lock(&j->lock);
	while ((j->ended & mask) != mask)
		pthread_cond_wait(&j->changed, &j->lock);
	bool ok = !j->failed;
	pthread_mutex_unlock(&j->lock);
	crumbs_cpu_end(j->crumbs);
	return ok;
}

double jobs_cpu_ms(struct jobs *j, uint32_t mask)
{
	double ms = 0;
	pthread_mutex_lock(&j->lock);
	for (unsigned i = 0; i < j->count; i++)
		if (mask & j->ended & JOB_BIT(i))
			ms += j->cpu_ms[i];
	pthread_mutex_unlock(&j->lock);
	return ms;
}

void jobs_stop(struct jobs *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	j->stopping = true;
	pthread_cond_broadcast(&j->changed);
	pthread_mutex_unlock(&j->lock);
	for (unsigned t = 0; t < j->threads; t++)
		pthread_join(j->thread[t], NULL);
	pthread_cond_destroy(&j->changed);
	pthread_mutex_destroy(&j->lock);
	free(j);
}
