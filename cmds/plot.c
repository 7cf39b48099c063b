/* SPDX-License-Identifier: MIT */
/*
 * plot.c: `crumbs plot FILE [-o OUT.svg] [options]`: a capture as an SVG
 * picture: one frame's timeline, or a run's frame times.
 */
#include "cmds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where the picture goes: standard output, or a file created under a
 * temporary name beside its final name and renamed over it once whole
 * (util/file.c), so that a failed plot never leaves half a picture where
 * the user had one, and a link planted at its name is replaced, never
 * followed. */
struct destination {
	const char *path; /* NULL: standard output */
	struct file_out out;
	FILE *file;
};

static int file_sink(void *user, const char *text, size_t len)
{
	return fwrite(text, 1, len, user) == len ? 0 : -1;
}

static bool destination_open(struct destination *d, struct report_sink *sink)
{
	char why[128];
	if (!d->path) {
		*sink = (struct report_sink){ cmd_stdout_sink, NULL };
		return true;
	}
	if (file_create(&d->out, d->path, FILE_REPLACE) != 0) {
		cmd_error("cannot write '%s': %s", d->path, cmd_strerror(errno, why, sizeof(why)));
		return false;
	}
	if (!(d->file = file_stream(&d->out))) {
		file_close(&d->out);
		cmd_error("out of memory");
		return false;
	}
	*sink = (struct report_sink){ file_sink, d->file };
	return true;
}

/* Finishes the picture: renamed into place when `ok`, else removed.
 * Returns false after saying what failed. */
static bool destination_close(struct destination *d, bool ok)
{
	char why[128];
	if (!d->file)
		return ok;
	int err = 0;
	if (fflush(d->file) != 0 || ferror(d->file))
		err = errno ? errno : EIO;
	if (fclose(d->file) != 0 && !err)
		err = errno;
	d->file = NULL;
	if (ok && !err && file_finish(&d->out) != 0)
		err = errno;
	file_close(&d->out); /* removes the temporary when not finished */
	if (err && ok)
		cmd_error("cannot write '%s': %s", d->path, cmd_strerror(err, why, sizeof(why)));
	return ok && !err;
}

static void destination_release(struct destination *d)
{
	if (d->file) {
		fclose(d->file);
		d->file = NULL;
	}
	file_close(&d->out);
}

/* Writes the picture with `draw`, saying what failed; an exit status. */
static int write_picture(struct destination *d, int (*draw)(const void *what, const struct report_sink *sink),
			 const void *what)
{
	struct report_sink sink;
	if (!destination_open(d, &sink))
		return EXIT_FAILURE_;
	int r = draw(what, &sink);
	if (!d->path)
		return r == 0 ? cmd_finish(EXIT_OK) : cmd_print_failed();
	if (r != 0 && !ferror(d->file)) {
		destination_close(d, false);
		cmd_error("out of memory");
		return EXIT_FAILURE_;
	}
	return destination_close(d, true) ? EXIT_OK : EXIT_FAILURE_;
}

struct frame_job {
	const struct plot_settings *p;
	const struct capture_meta *meta;
	const struct frame *f;
	const char *path;
};

static int draw_frame(const void *what, const struct report_sink *sink)
{
	const struct frame_job *j = what;
	return plot_frame(j->p, j->meta, j->f, j->path, sink);
}

struct run_job {
	const struct plot_settings *p;
	const struct capture_meta *meta;
	const stats *s;
	const struct stats_budget *b;
	const char *path;
};

static int draw_run(const void *what, const struct report_sink *sink)
{
	const struct run_job *j = what;
	return plot_run(j->p, j->meta, j->s, j->b, j->path, sink);
}

/* The timeline of the frame that --frame names (its first without one). */
static int plot_one_frame(const char *path, reader *c, struct plot_settings *p,
			  struct destination *d)
{
	struct analyze_error err;
	const struct report_settings *s = &p->stats.report;
	const struct frame *f = NULL;
	enum crumbs_result r = CRUMBS_OK;

	if (s->frames == FRAMES_LAST)
		r = reader_seek_last(c, &err);
	else if (s->frames == FRAMES_NUMBER)
		r = reader_seek_frame(c, s->frame_number, &err);
	if (r == CRUMBS_OK)
		r = reader_next_frame(c, &f, &err);
	if (r == CRUMBS_ERROR_NOT_FOUND || (r == CRUMBS_OK && !f && s->frames == FRAMES_NUMBER)) {
		cmd_error("'%s' does not hold frame %llu", path, (unsigned long long)s->frame_number);
		return EXIT_FAILURE_;
	}
	if (r != CRUMBS_OK) {
		cmd_capture_error(path, err.text, false);
		return EXIT_FAILURE_;
	}
	if (!f) {
		cmd_error("'%s' holds no frames", path);
		return EXIT_FAILURE_;
	}
	if (!cmd_check_selection(path, s, reader_meta(c)))
		return EXIT_FAILURE_;
	struct frame_job job = { p, reader_meta(c), f, path };
	int status = write_picture(d, draw_frame, &job);
	if (status == EXIT_OK && reader_damage(c)->code != CRUMBS_OK) {
		/* The frame drawn is intact, but the file is not. */
		cmd_capture_error(path, reader_damage(c)->text, false);
		status = EXIT_FAILURE_;
	}
	return status;
}

/* The frame times of the frames --frames selects. */
static int plot_frame_times(const char *path, struct plot_settings *p,
			    struct stats_budget *budget, struct destination *d)
{
	reader *c = NULL;
	stats *s = NULL;
	int status = EXIT_FAILURE_;

	enum cmd_load loaded = cmd_stats_load(path, &p->stats, &c, &s);
	if (loaded == CMD_LOAD_FAILED)
		goto out;
	if (budget) {
		/* Lines for other rows than a GPU's frame time match nothing
		 * here; the picture draws the others. */
		stats_budget_check(budget, &p->stats, s);
		struct stats_budget_line bl;
		for (size_t i = 0; stats_budget_line(budget, i, STATS_NONE, &bl); i++) {
			struct stats_budget_line at;
			bool any = stats_cpu_row(s) != STATS_NONE &&
				   stats_budget_line(budget, i, stats_cpu_row(s), &at) && at.matched;
			for (uint32_t g = 0; g < reader_meta(c)->gpu_count && !any; g++) {
				stats_budget_line(budget, i, stats_gpu_row(s, g), &at);
				any = at.matched;
			}
			if (!any)
				cmd_error("%s:%u: '%s' matches no frame time of a GPU or of the CPU; "
					  "the picture leaves it out", p->stats.budget_path, bl.line,
					  bl.pattern);
		}
	}
	struct run_job job = { p, reader_meta(c), s, budget, path };
	status = write_picture(d, draw_run, &job);
	/* A partial load was said: the picture is of the frames before it. */
	if (loaded == CMD_LOAD_PARTIAL && status == EXIT_OK)
		status = EXIT_FAILURE_;
out:
	stats_free(s);
	reader_free(c);
	return status;
}

static const char description[] =
	"Draws a capture as an SVG picture, to standard output or to -o FILE.\n"
	"\n"
	"A capture of one frame, or --frame N (first, last): the frame's timeline.\n"
	"Per GPU a time axis in ms and a lane per queue: a strip of its busy, wait\n"
	"and idle time under the CPU's submit marks, its scopes nested by depth\n"
	"below (names where they fit; hovering shows each one's name, inclusive and\n"
	"exclusive time), and arrows from the queue, or the host, whose signal ended\n"
	"a wait. Blocks narrower than a pixel next to each other are drawn as one.\n"
	"\n"
	"A capture of more frames, or one with --frames or --budget: the run's\n"
	"frame times, a graph per GPU of each frame's time by frame number (each\n"
	"pixel column's lowest to highest when there are more frames than columns),\n"
	"with the median and p95 (nearest rank, as crumbs stats), the spikes marked\n"
	"(--spike) and the limits of the --budget lines that match 'GPU N'; above\n"
	"them the same of the CPU frame time (budget lines matching 'CPU') where the\n"
	"frames hold CPU threads, unless --gpu, --queue or --no-cpu.\n"
	"\n"
	"Below each graph, the --rows scopes (default 6) with the most time summed\n"
	"over the run, each its time (inclusive, as crumbs stats) by frame number in\n"
	"a strip of its own, one scale for all, a colour each that the legend at\n"
	"the right names; the graph's spikes marked across them. A GPU's rows are\n"
	"the scopes of its queues (--queue chooses them), the CPU's its threads'\n"
	"scopes and its task timelines' tasks. They are of one level: a queue's (a\n"
	"thread's, a timeline's) first level that holds more than one scope, so a\n"
	"scope around all of each frame's work ('Frame #') gives way to the passes\n"
	"in it. Hovering a frame shows its number, its frame time and each row's\n"
	"time in it (over more frames than columns, those of the column's longest\n"
	"frame).\n"
	"\n"
	"The picture has no scripts and uses generic fonts; it reads on a light or\n"
	"a dark page. Exit status: 0; 1 when the capture cannot be read, or is\n"
	"damaged (the picture holds the frames before the damage), or holds no such\n"
	"frame, GPU or queue; 2 on a usage error or a bad budget file.\n"
	"\n" CMD_HELP_STDIN CMD_HELP_MEMORY "\nThe frame times add 8 bytes a frame and GPU; with --rows 0, nothing more.\n"
	"Else the rows are taken from statistics as crumbs stats takes them:"
	CMD_HELP_MEMORY_STATS;

/* Reads the arguments into p (initialised) and checks them: returns the
 * capture's path, with d->path set for -o, or NULL after saying why,
 * with the exit status in *status. */
static const char *parse_args(int argc, char **argv, struct plot_settings *p,
			      struct cmd_positional *pos, struct destination *d, int *status)
{
	struct option_spec from_stats[16], from_report[16];
	char perr[300];
	const struct option_table tables[] = {
		{ plot_options, plot_option_count, p },
		{ from_report, plot_report_options(from_report), &p->stats.report },
		{ from_stats, plot_stats_options(from_stats), &p->stats },
	};
	const struct cmd_spec spec = {
		.name = "plot",
		.usage = "crumbs plot FILE [-o OUT.svg] [options]",
		.description = description,
		.tables = tables,
		.table_count = sizeof(tables) / sizeof(tables[0]),
		.environment = CMD_ENV_THREADS,
	};
	if (!cmd_parse(&spec, argc, argv, pos, status))
		return NULL;
	const char *path = cmd_one_capture("plot", pos, status);
	if (!path)
		return NULL;
	if (report_settings_prepare(&p->stats.report, perr, sizeof(perr)) != CRUMBS_OK) {
		*status = cmd_usage_error("plot", "%s", perr);
		return NULL;
	}
	if (p->stats.report.frames != FRAMES_ALL && (p->stats.frames_set || p->stats.budget_path)) {
		*status = cmd_usage_error("plot", "--%s draws the run's frame times; --frame picks "
					  "one frame's timeline", p->stats.frames_set ? "frames" :
					  "budget");
		return NULL;
	}
	d->path = p->output && strcmp(p->output, "-") != 0 ? p->output : NULL;
	if (d->path && cmd_same_file(d->path, path)) {
		*status = cmd_usage_error("plot", "'%s' is the capture itself; give -o another file",
					  d->path);
		return NULL;
	}
	return path;
}

int cmd_plot(int argc, char **argv)
{
	struct plot_settings p;
	struct cmd_positional pos = { 0 };
	struct stats_budget *budget = NULL;
	struct destination d = { .out = { .fd = -1, .dir_fd = -1 } };
	reader *c = NULL;
	int status = EXIT_OK;

	plot_settings_init(&p);
	const char *path = parse_args(argc, argv, &p, &pos, &d, &status);
	if (!path)
		goto out;
	/* The frame times alone cost far less to read: the scopes only for
	 * rows of them. */
	p.stats.frame_times_only = p.rows == 0;
	if ((status = cmd_stats_budget(&p.stats, &budget)) != EXIT_OK)
		goto out;
	if (!cmd_open_capture(path, &c)) {
		status = EXIT_FAILURE_;
		goto out;
	}
	/* One frame is drawn as a timeline, unless --frames or --budget ask
	 * for the graph. */
	bool frame_given = p.stats.report.frames != FRAMES_ALL;
	bool timeline = frame_given || (reader_meta(c)->frame_count == 1 && !p.stats.frames_set &&
					!p.stats.budget_path);
	if (timeline) {
		status = plot_one_frame(path, c, &p, &d);
	} else {
		reader_free(c);
		c = NULL;
		status = plot_frame_times(path, &p, budget, &d);
	}
out:
	destination_release(&d);
	reader_free(c);
	stats_budget_free(budget);
	plot_settings_release(&p);
	cmd_positional_release(&pos);
	return status;
}
