/* SPDX-License-Identifier: MIT */
/*
 * report.c: `crumbs report FILE [options]`: the profilegpu tables of the
 * frames a capture holds, filtered and drawn as the settings say.
 */
#include "cmds.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

bool cmd_check_selection(const char *path, const struct report_settings *s,
			 const struct capture_meta *meta)
{
	if (s->gpu >= 0 && (uint32_t)s->gpu >= meta->gpu_count) {
		cmd_error("GPU %d is not in '%s' (it has %u GPU%s, numbered from 0)", s->gpu, path,
			  meta->gpu_count, meta->gpu_count == 1 ? "" : "s");
		return false;
	}
	if (!s->queue)
		return true;
	struct sbuf names = { 0 };
	bool found = false;
	uint32_t gpu = UINT32_MAX;
	for (uint32_t i = 0; i < meta->queue_count; i++) {
		const struct capture_queue *q = &meta->queues[i];
		if (s->gpu >= 0 && q->gpu != (uint32_t)s->gpu)
			continue;
		if (q->gpu != gpu)
			sbuf_addf(&names, "%sGPU %u: ", names.len ? "; " : "", q->gpu);
		else
			sbuf_adds(&names, ", ");
		gpu = q->gpu;
		sbuf_addf(&names, "'%s'", q->name);
		found = found || report_selects_queue(s, q->name);
	}
	if (!found)
		cmd_error("no queue of '%s' matches '%s' (it has %s)", path, s->queue,
			  names.data ? names.data : "none");
	sbuf_release(&names);
	return found;
}

void cmd_no_root_match(const char *where, const struct report_settings *s)
{
	struct sbuf roots = { 0 };
	for (size_t i = 0; i < s->root_count; i++)
		sbuf_addf(&roots, "%s'%s'", i == 0 ? "" : i + 1 == s->root_count ? " or " : ", ",
			  s->roots[i]);
	cmd_error("no scope %s matches --root %s", where, roots.data ? roots.data : "");
	sbuf_release(&roots);
}

/* What `crumbs report` takes besides the report settings. */
struct report_args {
	int format;        /* enum report_format */
	char *output;      /* -o FILE, owned */
};

static const char *const format_names[] = { "text", "json", "csv", NULL };

static const struct option_spec own_options[] = {
	{ "format", 0, "FORMAT", "text (the tables, default), json or csv: a row per GPU, queue, "
	  "scope, event, thread, timeline, task and state", OPT_CHOICE,
	  .offset = offsetof(struct report_args, format), .names = format_names },
};

/* Prints the tables of the frames that s selects from c (the capture at
 * path) in `format` to out, and says what went wrong. Returns an exit
 * status. */
static int print_frames(const char *path, reader *c, const struct report_settings *s,
			enum report_format format, struct cmd_output *out)
{
	struct analyze_error err;
	enum crumbs_result r = CRUMBS_OK;
	int status = EXIT_OK;

	if (s->frames == FRAMES_LAST)
		r = reader_seek_last(c, &err);
	else if (s->frames == FRAMES_NUMBER)
		r = reader_seek_frame(c, s->frame_number, &err);
	if (r == CRUMBS_ERROR_NOT_FOUND) {
		cmd_error("'%s': %s", path, err.text);
		return EXIT_FAILURE_;
	}

	struct report_sink sink = { cmd_output_write, out };
	uint64_t shown = 0;
	bool write_failed = false, found = false, first = true;
	while (r == CRUMBS_OK) {
		const struct frame *f;
		if ((r = reader_next_frame(c, &f, &err)) != CRUMBS_OK || !f)
			break;
		const struct capture_meta *meta = reader_meta(c);
		if (shown == 0 && !cmd_check_selection(path, s, meta))
			return cmd_output_close(out, EXIT_FAILURE_, false);
		if (shown == 0 && format != REPORT_FORMAT_TEXT &&
		    report_rows_begin(format, path, s->counters, &sink) != 0) {
			write_failed = true;
			break;
		}
		found = found || report_root_found(s, meta, f);
		if (format == REPORT_FORMAT_TEXT ? report_frame(s, meta, f, &sink) != 0 :
		    report_rows_frame(s, format, meta, f, &first, &sink) != 0) {
			write_failed = true; /* cmd_output_close says so */
			break;
		}
		shown++;
		if (s->frames != FRAMES_ALL)
			break;
	}
	if (!write_failed && shown > 0 && format != REPORT_FORMAT_TEXT &&
	    report_rows_end(format, &sink) != 0)
		write_failed = true;
	if (write_failed) {
		if (!out->error && !ferror(stdout))
			cmd_error("out of memory");
		status = EXIT_FAILURE_;
	} else if (r != CRUMBS_OK) {
		cmd_capture_error(path, err.text, shown > 0);
		status = EXIT_FAILURE_;
	} else if (shown == 0) {
		cmd_error("'%s' holds no frames", path);
		status = EXIT_FAILURE_;
	} else if (!found) {
		/* A typo in a pattern must not pass for an empty table. */
		struct sbuf where = { 0 };
		sbuf_addf(&where, "in the frame%s of '%s'", shown > 1 ? "s" : "", path);
		cmd_no_root_match(where.data ? where.data : path, s);
		sbuf_release(&where);
		status = EXIT_FAILURE_;
	} else if (reader_damage(c)->code != CRUMBS_OK) {
		/* The frames shown are intact, but the file is not. */
		cmd_capture_error(path, reader_damage(c)->text, false);
		status = EXIT_FAILURE_;
	} else if (s->frames == FRAMES_FIRST && reader_meta(c)->frame_count > 1) {
		cmd_note("'%s' holds %llu frames; this was the first (choose with --frame N, last "
			  "or all)",
			  path, (unsigned long long)reader_meta(c)->frame_count);
	}
	/* A file of what could be read is kept, as the text on a terminal
	 * would be, but not one whose --root found nothing. */
	return cmd_output_close(out, status, shown > 0 && found && !write_failed);
}

int cmd_report(int argc, char **argv)
{
	struct report_settings s;
	struct report_args args = { 0 };
	struct cmd_output out = { 0 };
	struct cmd_positional pos = { 0 };
	reader *c = NULL;
	int status = EXIT_OK;
	char perr[300];

	report_settings_init(&s);
	const struct option_table tables[] = {
		{ own_options, sizeof(own_options) / sizeof(own_options[0]), &args },
		{ &cmd_output_option, 1, &args.output },
		{ report_options, report_option_count, &s },
		{ report_terminal_options, report_terminal_option_count, &s.term },
	};
	const struct cmd_spec spec = {
		.name = "report",
		.usage = "crumbs report FILE [options]",
		.description =
			"Prints the profilegpu tables of a capture: per frame, GPU and queue, the\n"
			"tree of scopes with exclusive and inclusive time, share and counts.\n"
			"\n"
			"On a terminal the tables fit its width, and are coloured and paged as\n"
			"git's output is (--width, --wide, --color, --no-pager). Where the locale is\n"
			"not UTF-8 (LANG=C) a name's characters past ASCII are written \\uHHHH, and\n"
			"control characters \\xHH in any locale, so that the columns line up.\n"
			"\n" CMD_HELP_STDIN CMD_HELP_MEMORY,
		.tables = tables,
		.table_count = sizeof(tables) / sizeof(tables[0]),
		.environment = CMD_ENV_LOCALE CMD_ENV_TERMINAL,
	};
	if (!cmd_parse(&spec, argc, argv, &pos, &status))
		goto out;
	const char *path = cmd_one_capture("report", &pos, &status);
	if (!path)
		goto out;
	out.path = args.output;
	if (!cmd_output_check("report", &out, &path, 1, &status))
		goto out;
	if (args.format != REPORT_FORMAT_TEXT && s.by == BY_PIPELINE) {
		status = cmd_usage_error("report", "--format %s gives scopes' rows: not --by pipeline",
					 format_names[args.format]);
		goto out;
	}
	if (report_settings_prepare(&s, perr, sizeof(perr)) != CRUMBS_OK) {
		status = cmd_usage_error("report", "%s", perr);
		goto out;
	}
	if (!cmd_open_capture(path, &c)) {
		status = EXIT_FAILURE_;
		goto out;
	}
	cmd_terminal(&s.term, &s, &out);
	status = print_frames(path, c, &s, (enum report_format)args.format, &out);
out:
	reader_free(c);
	free(args.output);
	report_settings_release(&s);
	cmd_positional_release(&pos);
	return status;
}

int cmd_report_capture(const char *path, uint64_t number, struct report_settings *s)
{
	struct analyze_error err;
	reader *c = NULL;
	const struct frame *f = NULL;
	int status = EXIT_OK;
	enum crumbs_result r;

	if ((r = reader_open_file(path, &c, &err)) != CRUMBS_OK) {
		cmd_capture_error(path, err.text, false);
		return EXIT_FAILURE_;
	}
	r = number == UINT64_MAX ? CRUMBS_OK : reader_seek_frame(c, number, &err);
	if (r == CRUMBS_OK)
		r = reader_next_frame(c, &f, &err);
	if (r == CRUMBS_ERROR_NOT_FOUND || (r == CRUMBS_OK && !f)) {
		cmd_error("'%s' does not hold frame %llu", path, (unsigned long long)number);
		status = EXIT_FAILURE_;
	} else if (r != CRUMBS_OK) {
		cmd_capture_error(path, err.text, false);
		status = EXIT_FAILURE_;
	} else if (!cmd_check_selection(path, s, reader_meta(c))) {
		status = EXIT_FAILURE_;
	} else {
		struct report_sink sink = { cmd_stdout_sink, NULL };
		if (report_frame(s, reader_meta(c), f, &sink) != 0) {
			status = EXIT_FAILURE_; /* cmd_finish says why */
		} else if (!report_root_found(s, reader_meta(c), f)) {
			struct sbuf where = { 0 };
			sbuf_addf(&where, "in the frame of '%s'", path);
			cmd_no_root_match(where.data ? where.data : path, s);
			sbuf_release(&where);
			status = EXIT_FAILURE_;
		} else if (reader_damage(c)->code != CRUMBS_OK) {
			cmd_capture_error(path, reader_damage(c)->text, false);
			status = EXIT_FAILURE_;
		}
	}
	reader_free(c);
	return status;
}
