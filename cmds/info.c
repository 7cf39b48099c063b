/* SPDX-License-Identifier: MIT */
/*
 * info.c: `crumbs info FILE`: what a capture holds, its size, and the
 * minimum, median and maximum frame time of each GPU over every frame.
 */
#include "cmds.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where info writes: standard output, or the -o file. */
static FILE *to;

/* What `crumbs info` takes. */
struct info_args {
	int format;        /* enum report_format */
	char *output;      /* -o FILE, owned */
};

static const char *const format_names[] = { "text", "json", "csv", NULL };

static const struct option_spec own_options[] = {
	{ "format", 0, "FORMAT", "text (default), json (every fact) or csv (a row per frame "
	  "and GPU)", OPT_CHOICE, .offset = offsetof(struct info_args, format),
	  .names = format_names },
};

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
			fprintf(to, "%s%s", first ? "" : "+", names[i]);
			first = false;
		}
	if (first)
		fprintf(to, "no capabilities");
}

/* ------------------------------------------------------------------------ */
/* Vendor counters (since format 1.5)                                       */
/* ------------------------------------------------------------------------ */

static void put_json(const char *s, size_t len);

/* A name from the file, its control characters shown as '?'. */
static void put_text(const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7F ? '?' : *s, to);
}

/* Under each GPU's queues: the counters each queue family offers, and
 * the sets the capture counted. */
static void print_vendor(const struct capture_meta *m, uint32_t g)
{
	uint32_t family = UINT32_MAX;
	for (uint32_t i = 0; i < m->offered_counter_count; i++) {
		const struct capture_counter *c = &m->offered_counters[i];
		if (c->gpu != g)
			continue;
		if (c->family != family) {
			uint32_t n = 0;
			for (uint32_t k = i; k < m->offered_counter_count; k++)
				n += m->offered_counters[k].gpu == g &&
				     m->offered_counters[k].family == c->family;
			fprintf(to, "  counters of family %u: %u offered (name, category, unit, "
				"storage, scope)\n", c->family, n);
			family = c->family;
		}
		fprintf(to, "    ");
		put_text(c->name);
		fprintf(to, " · ");
		put_text(c->category);
		fprintf(to, " · %s · %s · %s\n", counter_unit_name(c->unit),
			counter_storage_name(c->storage), counter_scope_name(c->scope));
	}
	for (uint32_t i = 0; i < m->counter_set_count; i++) {
		const struct capture_counter_set *set = &m->counter_sets[i];
		if (set->gpu != g)
			continue;
		fprintf(to, "  counted: set %u on family %u, %u counter%s in %u pass%s (%s):",
			set->set, set->family, set->count, set->count == 1 ? "" : "s", set->groups,
			set->groups == 1 ? "" : "es",
			set->groups == 1 ? "every frame" :
			set->round_robin ? "a pass a frame, in turn" : "a one-frame capture takes pass 1");
		for (uint32_t k = 0; k < set->count; k++) {
			fprintf(to, "%s", k ? ", " : " ");
			put_text(set->counters[k].name);
			if (set->groups > 1)
				fprintf(to, " (pass %u)", set->counters[k].group + 1);
		}
		fprintf(to, "\n");
	}
}

static void put_json_counter(const struct capture_counter *c)
{
	fprintf(to, "{\"gpu\":%u,\"family\":%u,\"name\":", c->gpu, c->family);
	put_json(c->name, strlen(c->name));
	fprintf(to, ",\"category\":");
	put_json(c->category, strlen(c->category));
	fprintf(to, ",\"unit\":\"%s\",\"storage\":\"%s\",\"scope\":\"%s\"",
		counter_unit_name(c->unit), counter_storage_name(c->storage),
		counter_scope_name(c->scope));
}

/* ,"vendor_counters":{...} where the capture has any. */
static void print_json_vendor(const struct capture_meta *m)
{
	if (!m->offered_counter_count && !m->counter_set_count)
		return;
	fprintf(to, ",\"vendor_counters\":{\"offered\":[");
	for (uint32_t i = 0; i < m->offered_counter_count; i++) {
		fprintf(to, "%s", i ? "," : "");
		put_json_counter(&m->offered_counters[i]);
		fprintf(to, "}");
	}
	fprintf(to, "],\"sets\":[");
	for (uint32_t i = 0; i < m->counter_set_count; i++) {
		const struct capture_counter_set *set = &m->counter_sets[i];
		fprintf(to, "%s{\"set\":%u,\"gpu\":%u,\"family\":%u,\"passes\":%u,"
			"\"pass_per_frame\":%s,\"counters\":[", i ? "," : "", set->set, set->gpu,
			set->family, set->groups, set->round_robin ? "true" : "false");
		for (uint32_t k = 0; k < set->count; k++) {
			fprintf(to, "%s", k ? "," : "");
			put_json_counter(&set->counters[k]);
			fprintf(to, ",\"pass\":%u,\"decimals\":%u}", set->counters[k].group,
				set->counters[k].scale);
		}
		fprintf(to, "]}");
	}
	fprintf(to, "]}");
}

static void print_meta(const char *path, const struct capture_meta *m, uint64_t raw_bytes,
		       bool complete)
{
	fprintf(to, "file         %s\n", path);
	fprintf(to, "format       version %u.%u, written by %s\n", m->version_major, m->version_minor,
	       m->producer && *m->producer ? m->producer : "an unnamed producer");
	fprintf(to, "size         %llu bytes", (unsigned long long)m->file_bytes);
	if (complete && m->file_bytes)
		fprintf(to, ", %llu uncompressed (ratio %.2f)", (unsigned long long)raw_bytes,
		       (double)raw_bytes / (double)m->file_bytes);
	fprintf(to, ", %llu chunk%s, %s\n", (unsigned long long)m->chunk_count,
	       m->chunk_count == 1 ? "" : "s", m->has_index ? "indexed" : "no index");
	for (uint32_t g = 0; g < m->gpu_count; g++) {
		const struct capture_gpu *gpu = &m->gpus[g];
		uint32_t api = gpu->api_version;
		fprintf(to, "GPU %-8u %s (vendor 0x%04x, device 0x%04x, driver %s 0x%08x, Vulkan %u.%u.%u)\n",
		       g, gpu->name, gpu->vendor_id, gpu->device_id,
		       *gpu->driver_name ? gpu->driver_name : "version", gpu->driver_version,
		       (api >> 22) & 0x7F, (api >> 12) & 0x3FF, api & 0xFFF);
		for (uint32_t q = 0; q < m->queue_count; q++) {
			const struct capture_queue *cq = &m->queues[q];
			if (cq->gpu != g)
				continue;
			fprintf(to, "  %-11s family %u, index %u, ", cq->name, cq->family, cq->index);
			print_queue_flags(cq->flags);
			if (cq->timestamp_valid_bits)
				fprintf(to, ", %u-bit timestamps, %g ns per tick\n",
				       cq->timestamp_valid_bits, (double)cq->timestamp_period);
			else
				fprintf(to, ", no timestamps\n");
		}
		print_vendor(m, g);
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

static void print_csv_frame(const struct frame *f);

/* Reads the frames of c to the end or the damage (*r says which, with
 * err), counting them in *n and keeping each GPU's frame times in
 * times[0..64), and with `csv` writing each frame's rows. false when
 * memory ran out, after saying so. */
static bool read_frames(reader *c, struct tally *n, struct times *times, enum crumbs_result *r,
			struct analyze_error *err, bool csv)
{
	for (;;) {
		const struct frame *f;
		if ((*r = reader_next_frame(c, &f, err)) != CRUMBS_OK || !f)
			return true;
		if (csv)
			print_csv_frame(f);
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
		fprintf(to, "frames       %llu, numbered %llu to %llu\n", (unsigned long long)n->frames,
		       (unsigned long long)n->first, (unsigned long long)n->last);
	else
		fprintf(to, "frames       none\n");
	fprintf(to, "scopes       %llu, and %llu leaf event%s\n", (unsigned long long)n->scopes,
	       (unsigned long long)n->events, n->events == 1 ? "" : "s");
	fprintf(to, "timestamps   %llu", (unsigned long long)n->timestamps);
	if (n->timestamps)
		fprintf(to, ", %.2f bytes of file each", (double)m->file_bytes / (double)n->timestamps);
	fputc('\n', to);
	if (n->cpu_threads)
		fprintf(to, "CPU threads  %u in a frame at most, %llu CPU scope%s\n", n->cpu_threads,
		       (unsigned long long)n->cpu_scopes, n->cpu_scopes == 1 ? "" : "s");
	if (n->timelines) {
		fprintf(to, "tasks        %llu, on %u timeline%s in a frame at most, %llu "
		       "dependenc%s (%llu not respected)", (unsigned long long)n->tasks,
		       n->timelines, n->timelines == 1 ? "" : "s", (unsigned long long)n->deps,
		       n->deps == 1 ? "y" : "ies", (unsigned long long)n->broken_deps);
		if (n->misuses)
			fprintf(to, ", %llu task record%s left out", (unsigned long long)n->misuses,
			       n->misuses == 1 ? "" : "s");
		fputc('\n', to);
	} else if (n->misuses) {
		fprintf(to, "tasks        none, %llu task record%s left out\n",
		       (unsigned long long)n->misuses, n->misuses == 1 ? "" : "s");
	}
	if (n->marks)
		fprintf(to, "frame marks  %llu, of %u kind%s in a frame at most\n",
		       (unsigned long long)n->marks, n->mark_timelines,
		       n->mark_timelines == 1 ? "" : "s");
}

/* The minimum, median and maximum of t (not empty), reordering it. */
static void summarize(struct times *t, int64_t *min, int64_t *med, int64_t *max)
{
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
	*min = lo;
	*med = median;
	*max = hi;
}

/* GPU g's minimum, median and maximum frame time, reordering its times. */
static void print_frame_times(uint32_t g, struct times *t)
{
	int64_t lo, median, hi;
	if (t->len == 0) {
		fprintf(to, "frame time   GPU %u: no busy time in any frame\n", g);
		return;
	}
	summarize(t, &lo, &median, &hi);
	fprintf(to, "frame time   GPU %u: min %.3f ms, median %.3f ms, max %.3f ms (%zu frame%s)\n",
		g, (double)lo / 1e6, (double)median / 1e6, (double)hi / 1e6, t->len,
		t->len == 1 ? "" : "s");
}

/* A JSON string of s on `to`. */
static void put_json(const char *s, size_t len)
{
	struct sbuf b = { 0 };
	report_json_string(&b, s, len);
	if (b.data)
		fputs(b.data, to);
	sbuf_release(&b);
}

/* Every fact of the text, as one JSON object; times in ns, sizes in
 * bytes. */
static void print_json(const char *path, const struct capture_meta *m, uint64_t raw_bytes,
		       bool complete, const struct tally *n, struct times *times)
{
	static const char *const caps[] = { "graphics", "compute", "transfer", "video_decode",
					     "video_encode", "optical_flow" };
	fprintf(to, "{\"schema\":1,\"file\":");
	put_json(path, strlen(path));
	fprintf(to, ",\"format_version\":\"%u.%u\",\"producer\":", m->version_major,
		m->version_minor);
	put_json(m->producer ? m->producer : "", m->producer ? strlen(m->producer) : 0);
	fprintf(to, ",\"file_bytes\":%llu,\"uncompressed_bytes\":", (unsigned long long)m->file_bytes);
	if (complete)
		fprintf(to, "%llu", (unsigned long long)raw_bytes);
	else
		fprintf(to, "null");
	fprintf(to, ",\"chunks\":%llu,\"indexed\":%s,\"gpus\":[", (unsigned long long)m->chunk_count,
		m->has_index ? "true" : "false");
	for (uint32_t g = 0; g < m->gpu_count; g++) {
		const struct capture_gpu *gpu = &m->gpus[g];
		uint32_t api = gpu->api_version;
		fprintf(to, "%s{\"gpu\":%u,\"name\":", g ? "," : "", g);
		put_json(gpu->name, strlen(gpu->name));
		fprintf(to, ",\"vendor_id\":%u,\"device_id\":%u,\"driver_name\":", gpu->vendor_id,
			gpu->device_id);
		put_json(gpu->driver_name, strlen(gpu->driver_name));
		fprintf(to, ",\"driver_version\":%u,\"vulkan\":\"%u.%u.%u\",\"queues\":[",
			gpu->driver_version, (api >> 22) & 0x7F, (api >> 12) & 0x3FF, api & 0xFFF);
		bool first = true;
		for (uint32_t q = 0; q < m->queue_count; q++) {
			const struct capture_queue *cq = &m->queues[q];
			if (cq->gpu != g)
				continue;
			fprintf(to, "%s{\"name\":", first ? "" : ",");
			first = false;
			put_json(cq->name, strlen(cq->name));
			fprintf(to, ",\"family\":%u,\"index\":%u,\"capabilities\":[", cq->family,
				cq->index);
			bool first_cap = true;
			for (int i = 0; i < 6; i++)
				if (cq->flags & (1u << i)) {
					fprintf(to, "%s\"%s\"", first_cap ? "" : ",", caps[i]);
					first_cap = false;
				}
			fprintf(to, "],\"timestamp_valid_bits\":%u,\"ns_per_tick\":%.9g}",
				cq->timestamp_valid_bits, (double)cq->timestamp_period);
		}
		fprintf(to, "],\"frame_time\":");
		if (g < 64 && times[g].len) {
			int64_t lo, med, hi;
			summarize(&times[g], &lo, &med, &hi);
			fprintf(to, "{\"frames\":%zu,\"min_ns\":%lld,\"median_ns\":%lld,"
				"\"max_ns\":%lld}", times[g].len, (long long)lo, (long long)med,
				(long long)hi);
		} else {
			fprintf(to, "null");
		}
		fprintf(to, "}");
	}
	fprintf(to, "],\"frames\":{\"count\":%llu", (unsigned long long)n->frames);
	if (n->frames)
		fprintf(to, ",\"first\":%llu,\"last\":%llu", (unsigned long long)n->first,
			(unsigned long long)n->last);
	fprintf(to, "},\"scopes\":%llu,\"events\":%llu,\"timestamps\":%llu,"
		"\"cpu_threads_max\":%u,\"cpu_scopes\":%llu,\"task_timelines_max\":%u,"
		"\"tasks\":%llu,\"task_dependencies\":%llu,\"task_dependencies_broken\":%llu,"
		"\"task_records_left_out\":%llu,\"frame_mark_kinds_max\":%u,\"frame_marks\":%llu",
		(unsigned long long)n->scopes, (unsigned long long)n->events,
		(unsigned long long)n->timestamps, n->cpu_threads, (unsigned long long)n->cpu_scopes,
		n->timelines, (unsigned long long)n->tasks, (unsigned long long)n->deps,
		(unsigned long long)n->broken_deps, (unsigned long long)n->misuses,
		n->mark_timelines, (unsigned long long)n->marks);
	print_json_vendor(m);
	fprintf(to, "}\n");
}

/* CSV's rows of frame f: one per GPU of the frame (one with no GPU for a
 * frame of the CPU alone). */
static void print_csv_frame(const struct frame *f)
{
	long long cpu = f->cpu_end_ns > f->cpu_begin_ns ? (long long)(f->cpu_end_ns - f->cpu_begin_ns)
							: 0;
	for (uint32_t g = 0; g < f->gpu_count || (g == 0 && f->gpu_count == 0); g++) {
		fprintf(to, "%llu,", (unsigned long long)f->number);
		if (f->gpu_count)
			fprintf(to, "%u,%lld", f->gpus[g].gpu, (long long)f->gpus[g].frame_ns);
		else
			fprintf(to, ",");
		fprintf(to, ",");
		if (f->cpu_thread_count || f->mark_count)
			fprintf(to, "%lld", cpu);
		fprintf(to, ",%llu,%llu,%llu,%u\n", (unsigned long long)f->scopes,
			(unsigned long long)f->events, (unsigned long long)f->timestamps,
			f->submission_count);
	}
}

int cmd_info(int argc, char **argv)
{
	struct cmd_positional pos = { 0 };
	struct analyze_error err;
	struct tally n = { 0 };
	reader *c = NULL;
	struct times *times = NULL;
	int status = EXIT_OK;
	struct info_args args = { 0 };
	struct cmd_output out = { 0 };
	struct term_options term = { 0 };
	static const struct option_borrowed pager[] = { { "no-pager", NULL } };
	struct option_spec from_report[1];
	const struct option_table tables[] = {
		{ own_options, sizeof(own_options) / sizeof(own_options[0]), &args },
		{ &cmd_output_option, 1, &args.output },
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
			"\n"
			"--format json: one object of the same facts, times in ns and sizes in\n"
			"bytes. --format csv: a row per frame and GPU under the header line\n"
			"  frame,gpu,gpu_frame_ns,cpu_frame_ns,scopes,events,timestamps,submissions\n"
			"(gpu empty in a frame of the CPU alone, cpu_frame_ns in one without CPU\n"
			"records).\n"
			"\n" CMD_HELP_STDIN CMD_HELP_MEMORY "\nThe frame times add 8 bytes a frame and GPU.",
		.tables = tables,
		.table_count = sizeof(tables) / sizeof(tables[0]),
		.environment = CMD_ENV_TERMINAL,
	};

	if (!cmd_parse(&spec, argc, argv, &pos, &status))
		goto out;
	const char *path = cmd_one_capture("info", &pos, &status);
	if (!path)
		goto out;
	out.path = args.output;
	if (!cmd_output_check("info", &out, &path, 1, &status))
		goto out;
	if (!cmd_open_capture(path, &c)) {
		status = EXIT_FAILURE_;
		goto out;
	}
	if (!cmd_output_open(&out)) {
		status = EXIT_FAILURE_;
		goto out;
	}
	to = out.file ? out.file : stdout;

	cmd_terminal(&term, NULL, &out);
	reader_skip_scopes(c, true); /* frame times and counts are enough */
	times = calloc(64, sizeof(*times));
	if (!times) {
		cmd_error("out of memory");
		status = EXIT_FAILURE_;
		goto out;
	}
	enum crumbs_result r;
	if (args.format == REPORT_FORMAT_CSV)
		fprintf(to, "frame,gpu,gpu_frame_ns,cpu_frame_ns,scopes,events,timestamps,"
			"submissions\n");
	if (!read_frames(c, &n, times, &r, &err, args.format == REPORT_FORMAT_CSV)) {
		status = cmd_output_close(&out, EXIT_FAILURE_, false);
		goto out;
	}
	const struct capture_meta *m = reader_meta(c);
	if (args.format == REPORT_FORMAT_JSON) {
		print_json(path, m, reader_raw_bytes(c), r == CRUMBS_OK, &n, times);
	} else if (args.format == REPORT_FORMAT_TEXT) {
		print_meta(path, m, reader_raw_bytes(c), r == CRUMBS_OK);
		print_counts(m, &n);
		for (uint32_t g = 0; g < m->gpu_count && g < 64; g++)
			print_frame_times(g, &times[g]);
	}
	if (r != CRUMBS_OK) {
		cmd_capture_error(path, err.text, n.frames > 0);
		status = EXIT_FAILURE_;
	}
	if (out.file && ferror(out.file))
		out.error = EIO;
	status = cmd_output_close(&out, status, true);
out:
	free(args.output);
	if (times)
		for (int g = 0; g < 64; g++)
			free(times[g].ns);
	free(times);
	reader_free(c);
	cmd_positional_release(&pos);
	return status;
}
