/* SPDX-License-Identifier: MIT */
/*
 * info.c: `crumbs info FILE`: what a capture holds, its size, and the
 * minimum, median and maximum frame time of each GPU over every frame.
 */
#include "cmds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frame times of one GPU over the frames where it worked. */
struct times {
	int64_t *ns;
	size_t len;
	size_t cap;
};

static bool times_push(struct times *t, int64_t ns)
{
	if (!array_room((void **)&t->ns, &t->cap, t->len + 1, sizeof(*t->ns)))
		return false;
	t->ns[t->len++] = ns;
	return true;
}

/* The k-th smallest of v[0..n) (Hoare's selection), reordering v; linear
 * on average, where sorting a long run's frame times would dominate. */
static int64_t select_kth(int64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		int64_t pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				int64_t t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

static void print_queue_flags(uint32_t flags)
{
	static const char *const names[] = { "graphics", "compute", "transfer",
					     "video decode", "video encode", "optical flow" };
	bool first = true;
	for (int i = 0; i < 6; i++)
		if (flags & (1u << i)) {
			printf("%s%s", first ? "" : "+", names[i]);
			first = false;
		}
	if (first)
		printf("no capabilities");
}

static void print_meta(const char *path, const struct capture_meta *m, uint64_t raw_bytes,
		       bool complete)
{
	printf("file         %s\n", path);
	printf("format       version %u.%u, written by %s\n", m->version_major, m->version_minor,
	       m->producer && *m->producer ? m->producer : "an unnamed producer");
	printf("size         %llu bytes", (unsigned long long)m->file_bytes);
	if (complete && m->file_bytes)
		printf(", %llu uncompressed (ratio %.2f)", (unsigned long long)raw_bytes,
		       (double)raw_bytes / (double)m->file_bytes);
	printf(", %llu chunk%s, %s\n", (unsigned long long)m->chunk_count,
	       m->chunk_count == 1 ? "" : "s", m->has_index ? "indexed" : "no index");
	for (uint32_t g = 0; g < m->gpu_count; g++) {
		const struct capture_gpu *gpu = &m->gpus[g];
		uint32_t api = gpu->api_version;
		printf("GPU %-8u %s (vendor 0x%04x, device 0x%04x, driver %s 0x%08x, Vulkan %u.%u.%u)\n",
		       g, gpu->name, gpu->vendor_id, gpu->device_id,
		       *gpu->driver_name ? gpu->driver_name : "version", gpu->driver_version,
		       (api >> 22) & 0x7F, (api >> 12) & 0x3FF, api & 0xFFF);
		for (uint32_t q = 0; q < m->queue_count; q++) {
			const struct capture_queue *cq = &m->queues[q];
			if (cq->gpu != g)
				continue;
			printf("  %-11s family %u, index %u, ", cq->name, cq->family, cq->index);
			print_queue_flags(cq->flags);
			if (cq->timestamp_valid_bits)
				printf(", %u-bit timestamps, %g ns per tick\n",
				       cq->timestamp_valid_bits, (double)cq->timestamp_period);
			else
				printf(", no timestamps\n");
		}
	}
}

/* What info counts over the frames. */
struct tally {
	uint64_t frames, scopes, events, timestamps;
	uint64_t first, last; /* frame numbers */
	/* CPU threads: the most in one frame (a thread's id may be another
	 * thread's in a later frame), and their scopes. */
	uint32_t cpu_threads;
	uint64_t cpu_scopes;
	/* Tasks (the most timelines in one frame), their dependencies and
	 * the task records left out; boundaries of frames of other kinds. */
	uint32_t timelines;
	uint64_t tasks, deps, broken_deps, misuses;
	uint32_t mark_timelines;
	uint64_t marks;
};

/* The distinct timelines of f's frames of other kinds. */
static uint32_t mark_timelines(const struct frame *f)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->mark_count; i++) {
		const struct frame_mark *m = &f->marks[i];
		uint32_t j = 0;
		while (j < i && (f->marks[j].timeline_len != m->timeline_len ||
				 memcmp(f->marks[j].timeline, m->timeline, m->timeline_len) != 0))
			j++;
		n += j == i;
	}
	return n;
}

/* Reads the frames of c to the end or the damage (*r says which, with
 * err), counting them in *n and keeping each GPU's frame times in
 * times[0..64). false when memory ran out, after saying so. */
static bool read_frames(reader *c, struct tally *n, struct times *times, enum crumbs_result *r,
			struct analyze_error *err)
{
	for (;;) {
		const struct frame *f;
		if ((*r = reader_next_frame(c, &f, err)) != CRUMBS_OK || !f)
			return true;
		if (n->frames++ == 0)
			n->first = f->number;
		n->last = f->number;
		n->scopes += f->scopes;
		n->events += f->events;
		n->timestamps += f->timestamps;
		uint32_t threads = 0, timelines = 0;
		for (uint32_t i = 0; i < f->cpu_thread_count; i++) {
			if (f->cpu_threads[i].kind == FRAME_CPU_TIMELINE) {
				timelines++;
				n->tasks += f->cpu_threads[i].scopes;
			} else {
				threads++;
			}
		}
		if (threads > n->cpu_threads)
			n->cpu_threads = threads;
		if (timelines > n->timelines)
			n->timelines = timelines;
		n->cpu_scopes += f->cpu_scopes;
		n->deps += f->task_dep_count;
		for (uint32_t i = 0; i < f->task_dep_count; i++)
			n->broken_deps += f->task_deps[i].violated;
		n->misuses += f->task_misuses;
		n->marks += f->mark_count;
		uint32_t marked = mark_timelines(f);
		if (marked > n->mark_timelines)
			n->mark_timelines = marked;
		for (uint32_t g = 0; g < f->gpu_count && g < 64; g++)
			if (f->gpus[g].frame_ns > 0 && !times_push(&times[g], f->gpus[g].frame_ns)) {
				cmd_error("out of memory");
				return false;
			}
	}
}

static void print_counts(const struct capture_meta *m, const struct tally *n)
{
	if (n->frames)
		printf("frames       %llu, numbered %llu to %llu\n", (unsigned long long)n->frames,
		       (unsigned long long)n->first, (unsigned long long)n->last);
	else
		printf("frames       none\n");
	printf("scopes       %llu, and %llu leaf event%s\n", (unsigned long long)n->scopes,
	       (unsigned long long)n->events, n->events == 1 ? "" : "s");
	printf("timestamps   %llu", (unsigned long long)n->timestamps);
	if (n->timestamps)
		printf(", %.2f bytes of file each", (double)m->file_bytes / (double)n->timestamps);
	printf("\n");
	if (n->cpu_threads)
		printf("CPU threads  %u in a frame at most, %llu CPU scope%s\n", n->cpu_threads,
		       (unsigned long long)n->cpu_scopes, n->cpu_scopes == 1 ? "" : "s");
	if (n->timelines) {
		printf("tasks        %llu, on %u timeline%s in a frame at most, %llu "
		       "dependenc%s (%llu not respected)", (unsigned long long)n->tasks,
		       n->timelines, n->timelines == 1 ? "" : "s", (unsigned long long)n->deps,
		       n->deps == 1 ? "y" : "ies", (unsigned long long)n->broken_deps);
		if (n->misuses)
			printf(", %llu task record%s left out", (unsigned long long)n->misuses,
			       n->misuses == 1 ? "" : "s");
		printf("\n");
	} else if (n->misuses) {
		printf("tasks        none, %llu task record%s left out\n",
		       (unsigned long long)n->misuses, n->misuses == 1 ? "" : "s");
	}
	if (n->marks)
		printf("frame marks  %llu, of %u kind%s in a frame at most\n",
		       (unsigned long long)n->marks, n->mark_timelines,
		       n->mark_timelines == 1 ? "" : "s");
}

/* GPU g's minimum, median and maximum frame time, reordering its times. */
static void print_frame_times(uint32_t g, struct times *t)
{
	if (t->len == 0) {
		printf("frame time   GPU %u: no busy time in any frame\n", g);
		return;
	}
	int64_t lo = t->ns[0], hi = t->ns[0];
	for (size_t i = 1; i < t->len; i++) {
		lo = t->ns[i] < lo ? t->ns[i] : lo;
		hi = t->ns[i] > hi ? t->ns[i] : hi;
	}
	int64_t median = select_kth(t->ns, t->len, t->len / 2);
	if (t->len % 2 == 0) {
		/* The mean of the two middle values: the lower one is the
		 * largest of the half below. */
		int64_t below = select_kth(t->ns, t->len / 2, t->len / 2 - 1);
		median = below + (median - below) / 2;
	}
	printf("frame time   GPU %u: min %.3f ms, median %.3f ms, max %.3f ms (%zu frame%s)\n",
	       g, (double)lo / 1e6, (double)median / 1e6, (double)hi / 1e6, t->len,
	       t->len == 1 ? "" : "s");
}

int cmd_info(int argc, char **argv)
{
	struct cmd_positional pos = { 0 };
	struct analyze_error err;
	struct tally n = { 0 };
	reader *c = NULL;
	struct times *times = NULL;
	int status = EXIT_OK;
	struct term_options term = { 0 };
	static const struct option_borrowed pager[] = { { "no-pager", NULL } };
	struct option_spec from_report[1];
	const struct option_table tables[] = {
		{ from_report, options_borrow(report_terminal_options, report_terminal_option_count,
					      pager, 1, from_report), &term },
	};
	const struct cmd_spec spec = {
		.name = "info",
		.usage = "crumbs info FILE [options]",
		.description =
			"Describes a capture: format, size and compression, devices and queues,\n"
			"frames and scopes, and each GPU's frame time (minimum, median, maximum)\n"
			"over every frame, which it reads whole.\n"
			"\n" CMD_HELP_MEMORY "\nThe frame times add 8 bytes a frame and GPU.",
		.tables = tables,
		.table_count = 1,
	};

	if (!cmd_parse(&spec, argc, argv, &pos, &status))
		goto out;
	const char *path = cmd_one_capture("info", &pos, &status);
	if (!path)
		goto out;
	if (reader_open_file(path, &c, &err) != CRUMBS_OK) {
		cmd_capture_error(path, err.text, false);
		status = EXIT_FAILURE_;
		goto out;
	}

	cmd_terminal(&term, NULL);
	reader_skip_scopes(c, true); /* frame times and counts are enough */
	times = calloc(64, sizeof(*times));
	if (!times) {
		cmd_error("out of memory");
		status = EXIT_FAILURE_;
		goto out;
	}
	enum crumbs_result r;
	if (!read_frames(c, &n, times, &r, &err)) {
		status = EXIT_FAILURE_;
		goto out;
	}
	const struct capture_meta *m = reader_meta(c);
	print_meta(path, m, reader_raw_bytes(c), r == CRUMBS_OK);
	print_counts(m, &n);
	for (uint32_t g = 0; g < m->gpu_count && g < 64; g++)
		print_frame_times(g, &times[g]);
	if (r != CRUMBS_OK) {
		cmd_capture_error(path, err.text, n.frames > 0);
		status = EXIT_FAILURE_;
	}
	status = cmd_finish(status);
out:
	if (times)
		for (int g = 0; g < 64; g++)
			free(times[g].ns);
	free(times);
	reader_free(c);
	cmd_positional_release(&pos);
	return status;
}
