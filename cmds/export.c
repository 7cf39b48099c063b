/* SPDX-License-Identifier: MIT */
/*
 * export.c: `crumbs export FILE --format FORMAT [-o OUT]`: the frames of a
 * capture as one trace for Perfetto, Chrome's trace viewer and speedscope,
 * or as folded stacks for flame graphs, written frame by frame.
 */
#include "cmds.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char description[] =
	"Writes the frames of a capture as one trace, frame by frame, on the CPU clock\n"
	"the capture is calibrated to (times in ns; a run is one timeline).\n"
	"\n"
	"perfetto  Perfetto's protobuf trace, for ui.perfetto.dev and trace_processor,\n"
	"          on CLOCK_MONOTONIC (timestamp_clock_id 3) to line up with a system\n"
	"          trace: a process per GPU (pid 4194305 + its index, above any real\n"
	"          pid) with a 'GPU frame time' counter; per queue a track of its\n"
	"          scopes and events as nested slices, a track of its submissions\n"
	"          ('Submission N') with the 'Idle' and 'Wait' before each, and a\n"
	"          track of its 'CPU submits'.\n"
	"          Flows run from each CPU submit to its submission, and from each\n"
	"          submission whose semaphore signal released a wait to a 'Signalled'\n"
	"          instant in the waiting submission: when the signal came, or when\n"
	"          that submission started if it was later (a wait that holds back\n"
	"          later stages only). Every slice and instant has a 'frame' arg;\n"
	"          scopes, events, tasks and states their 'inclusive_ns' and\n"
	"          'exclusive_ns' as crumbs report has them, their counts\n"
	"          ('draws', 'exclusive_draws', ...), pipeline statistics\n"
	"          ('ia_vertices', 'exclusive_ia_vertices', ...) and vendor\n"
	"          counters ('vendor.NAME', 'vendor_exclusive.NAME').\n"
	"          The CPU side is a process 'CPU' (pid 4194304): a track per\n"
	"          thread (its real tid) with its scopes nested ('wait' arg: the\n"
	"          thread waited on the GPU), lanes per task timeline with its\n"
	"          tasks and their states, instants for frames of other timelines;\n"
	"          flows from the CPU scope that made each submission to it, and\n"
	"          along task dependencies ('violated' arg where one was broken).\n"
	"chrome    the same as Chrome's Trace Event Format (JSON), for chrome://tracing,\n"
	"          Perfetto and speedscope: 'B'/'E' slices, 'i' instants, 'M' names,\n"
	"          's'/'f' flows, 'C' counters; ts in microseconds with three decimals\n"
	"          from the trace's start (otherData's start_ns); a global instant\n"
	"          'Frame N' where each frame begins, its events after it; no args on\n"
	"          slices (speedscope adds them to the name); the three tracks of\n"
	"          queue Q (in file order, from 0) are tids 3Q+1, 3Q+2 and 3Q+3.\n"
	"folded    folded stacks for flamegraph.pl, inferno and speedscope: a line\n"
	"          per stack of scope names, 'GPU 0;Graphics 0;Frame #;Post Processing\n"
	"          1234' with the exclusive time in ns of its scopes summed ('GPU\n"
	"          0;Graphics 0 N' is the queue's time in no scope), so that a\n"
	"          queue's weights add up to its busy time; lines of weight 0 are left\n"
	"          out, and ';' in a name reads ':'. CPU threads follow as 'CPU;Main\n"
	"          Thread;Frame 1234', task timelines as 'Tasks;Loading;Load;Reading\n"
	"          1234'. Right below a queue, thread or timeline, the frame's number\n"
	"          in a name reads '#', as in crumbs stats, so that tools add up the\n"
	"          frames (--per-frame keeps it).\n"
	"\n"
	"--root keeps the subtrees of the matching scopes (the submission tracks stay);\n"
	"--max-depth and --no-leaf leave scopes and events out, and in folded stacks\n"
	"give their time to the scope that shows; --gpu and --queue pick tracks and,\n"
	"as --no-cpu does, leave the CPU side out.\n"
	"A damaged capture is exported up to the damage, and exits 1 saying where.\n"
	"\n" CMD_HELP_STDIN CMD_HELP_MEMORY
	"\nThe trace is written frame by frame; past --max-bytes the export stops\n"
	"with an error, and -o FILE is not written.";

/*
 * Reads the arguments into es (initialised) and checks them: returns the
 * capture's path, with out->path set for -o, or NULL after saying why,
 * with the exit status in *status.
 */
static const char *parse_args(int argc, char **argv, struct export_settings *es,
			      struct cmd_positional *pos, struct cmd_output *out, int *status)
{
	struct option_spec shared[16];
	char perr[300];
	const struct option_table tables[] = {
		{ export_options, export_option_count, es },
		{ shared, export_report_options(shared), &es->report },
	};
	const struct cmd_spec spec = {
		.name = "export",
		.usage = "crumbs export FILE --format FORMAT [-o OUT] [options]",
		.description = description,
		.tables = tables,
		.table_count = sizeof(tables) / sizeof(tables[0]),
	};
	if (!cmd_parse(&spec, argc, argv, pos, status))
		return NULL;
	const char *path = cmd_one_capture("export", pos, status);
	if (!path)
		return NULL;
	if (es->format == EXPORT_NONE) {
		*status = cmd_usage_error("export", "expected --format perfetto, chrome or folded");
		return NULL;
	}
	out->path = es->output;
	if (!cmd_output_check("export", out, &path, 1, status))
		return NULL;
	if (!out->path && es->format == EXPORT_PERFETTO && isatty(STDOUT_FILENO)) {
		*status = cmd_usage_error("export", "a Perfetto trace is binary: not writing it to a "
					  "terminal (use -o FILE or a redirection)");
		return NULL;
	}
	if (report_settings_prepare(&es->report, perr, sizeof(perr)) != CRUMBS_OK) {
		*status = cmd_usage_error("export", "%s", perr);
		return NULL;
	}
	return path;
}

/* What the first frame to write needs: the selection checked against
 * the capture, the output opened, the exporter begun, writing to sink.
 * NULL after saying what failed. */
static exporter *begin(const char *path, const struct export_settings *es, reader *c,
		       struct cmd_output *out, const struct report_sink *sink)
{
	exporter *x;
	if (!cmd_check_selection(path, &es->report, reader_meta(c)))
		return NULL;
	if (!cmd_output_open(out)) {
		if (!out->said)
			cmd_error("out of memory");
		return NULL;
	}
	if (!(x = exporter_begin(es, sink)))
		cmd_error("out of memory");
	return x;
}

/* Writes the frames of capture c (at path) that es selects to out, as
 * one trace, and closes out. Returns an exit status, having said what
 * went wrong. */
static int export_frames(const char *path, reader *c, const struct export_settings *es,
			 struct cmd_output *out)
{
	struct analyze_error err;
	struct report_sink sink = { cmd_output_write, out };
	exporter *x = NULL;
	uint64_t written = 0;
	bool write_failed = false, found = false;
	int status = EXIT_OK;

	enum crumbs_result r = cmd_range_start(c, es->first_frame, &err);
	while (r == CRUMBS_OK) {
		const struct frame *f;
		if ((r = cmd_range_next(c, es->first_frame, es->last_frame, &f, &err)) != CRUMBS_OK ||
		    !f)
			break;
		if (written == 0 && !(x = begin(path, es, c, out, &sink))) {
			status = EXIT_FAILURE_;
			goto out;
		}
		found = found || report_root_found(&es->report, reader_meta(c), f);
		if (exporter_frame(x, reader_meta(c), f) != 0) {
			write_failed = true;
			break;
		}
		written++;
	}
	/* A trace cut by damage still ends as a trace should. */
	if (!write_failed && x && exporter_end(x) != 0)
		write_failed = true;
	if (write_failed) {
		status = cmd_output_close(out, EXIT_FAILURE_, false);
		if (x && exporter_over_limit(x) && out->path)
			cmd_error("the export of '%s' would pass --max-bytes %llu: '%s' is not "
				  "written (raise the limit, or 0 for none)", path,
				  (unsigned long long)es->max_bytes, out->path);
		else if (x && exporter_over_limit(x))
			cmd_error("the export of '%s' stopped after %llu bytes: more would pass "
				  "--max-bytes %llu (raise the limit, or 0 for none)", path,
				  (unsigned long long)exporter_bytes(x),
				  (unsigned long long)es->max_bytes);
		else if (!out->error && !ferror(stdout))
			cmd_error("out of memory");
		goto out;
	}
	if (r != CRUMBS_OK) {
		cmd_capture_error(path, err.text, written > 0);
		status = EXIT_FAILURE_;
	} else if (written == 0) {
		cmd_no_frames(path, es->frames_set, es->first_frame, es->last_frame);
		status = EXIT_FAILURE_;
	} else if (!found) {
		/* A typo in a pattern must not pass for an empty trace. */
		struct sbuf where = { 0 };
		sbuf_addf(&where, "in the frames of '%s'", path);
		cmd_no_root_match(where.data ? where.data : path, &es->report);
		sbuf_release(&where);
		status = cmd_output_close(out, EXIT_FAILURE_, false);
		goto out;
	} else if (reader_damage(c)->code != CRUMBS_OK) {
		/* The frames written are intact, but the file is not. */
		cmd_capture_error(path, reader_damage(c)->text, false);
		status = EXIT_FAILURE_;
	}
	status = cmd_output_close(out, status, true);
out:
	exporter_free(x);
	return status;
}

int cmd_export(int argc, char **argv)
{
	struct export_settings es;
	struct cmd_positional pos = { 0 };
	struct cmd_output out = { .out = { .fd = -1, .dir_fd = -1 } };
	reader *c = NULL;
	int status = EXIT_OK;

	export_settings_init(&es);
	const char *path = parse_args(argc, argv, &es, &pos, &out, &status);
	if (!path)
		goto out;
	if (!cmd_open_capture(path, &c)) {
		status = EXIT_FAILURE_;
		goto out;
	}
	status = export_frames(path, c, &es, &out);
out:
	if (out.file) {
		fclose(out.file);
		file_close(&out.out);
	}
	reader_free(c);
	export_settings_release(&es);
	cmd_positional_release(&pos);
	return status;
}
