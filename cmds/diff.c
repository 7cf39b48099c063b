/* SPDX-License-Identifier: MIT */
/*
 * diff.c: `crumbs diff BASE CANDIDATE [options]`: every row of two runs
 * (GPU frame time, queue busy, wait and idle, scope paths) compared, with
 * a verdict, and an exit status a build can act on.
 */
#include "cmds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit status when the captures are of different GPUs or queues. */
#define EXIT_NOT_COMPARABLE 3

/* Whether the captures have the same GPUs (by name) and each the same
 * queues (by name); says how they differ when not. */
static bool comparable(const char *base_path, const struct capture_meta *a,
		       const char *cand_path, const struct capture_meta *b)
{
	if (a->gpu_count != b->gpu_count) {
		cmd_error("'%s' has %u GPU%s and '%s' %u", base_path, a->gpu_count,
			  a->gpu_count == 1 ? "" : "s", cand_path, b->gpu_count);
		return false;
	}
	for (uint32_t g = 0; g < a->gpu_count; g++)
		if (strcmp(a->gpus[g].name, b->gpus[g].name) != 0) {
			cmd_error("GPU %u is '%s' in '%s' and '%s' in '%s'", g, a->gpus[g].name,
				  base_path, b->gpus[g].name, cand_path);
			return false;
		}
	for (int side = 0; side < 2; side++) {
		const struct capture_meta *m = side ? b : a, *o = side ? a : b;
		for (uint32_t i = 0; i < m->queue_count; i++) {
			bool found = false;
			for (uint32_t k = 0; k < o->queue_count && !found; k++)
				found = o->queues[k].gpu == m->queues[i].gpu &&
					strcmp(o->queues[k].name, m->queues[i].name) == 0;
			if (!found) {
				cmd_error("GPU %u's queue '%s' is in '%s' but not in '%s'",
					  m->queues[i].gpu, m->queues[i].name,
					  side ? cand_path : base_path, side ? base_path : cand_path);
				return false;
			}
		}
	}
	return true;
}

static const char description[] =
	"Compares two runs row by row, matched by GPU, queue and scope path (as\n"
	"crumbs stats names them): each GPU's frame time, each queue's busy, wait and\n"
	"idle, and each scope's inclusive time; the CPU frame time (and that of\n"
	"frames of other kinds), each thread's scopes, each CPU scope's, task's and\n"
	"state's time. For each row: the statistic (--stat)\n"
	"of both, the change in ms and percent, and a verdict: regressed, improved,\n"
	"unchanged, new, gone, or too few frames. A change is a regression (or an\n"
	"improvement) when it is larger than --threshold percent and --min-ms ms\n"
	"and, where both sides have 8 frames or more, the Mann-Whitney U test on the\n"
	"per-frame values gives a p-value below --alpha (two-sided, normal\n"
	"approximation with corrections for ties and continuity). A side with 2 to 7\n"
	"frames is too few; two single-frame captures are compared by the thresholds\n"
	"alone, and the output says so. Rows: frame-time rows (GPU and CPU)\n"
	"first, then the largest changes.\n"
	"\n"
	"--format csv: one line per row under the header line\n"
	"  kind,gpu,path,base_frames,candidate_frames,base_ms,candidate_ms,change_ms,\n"
	"  change_pct,p,verdict\n"
	"--format json: {\"schema\": 2, \"base\", \"candidate\", \"stat\", \"threshold_pct\",\n"
	"\"min_change_ns\", \"alpha\", \"min_frames\", \"single_frame\", \"counts\", \"rows\"},\n"
	"times in ns. Both name verdicts as keys: too_few_frames for \"too few frames\".\n"
	"--format markdown: a line of the verdicts counted and a pipe table, for a\n"
	"pull request's comment. -o FILE writes to FILE, replaced once whole.\n"
	"\n"
	"--counters: after the rows, each scope path's pipeline statistics (input-\n"
	"assembly primitives, vertex shader invocations, clipping primitives,\n"
	"fragment and compute shader invocations) and vendor counters (matched by\n"
	"name) that both runs counted, their medians per frame compared: more or\n"
	"less work where they differ by more than --threshold percent and, with 8\n"
	"frames or more a side, the Mann-Whitney test gives p below --alpha; same\n"
	"otherwise. Not a verdict: the exit status leaves them out. The table and\n"
	"Markdown list the changes; --format csv has them all, with four columns\n"
	"more (counter,counter_unit,base_median,candidate_median) and kind counter\n"
	"or vendor_counter, the times empty; --format json has \"counters\":\n"
	"[{\"kind\", \"gpu\", \"queue\", \"path\", \"counter\", \"base_frames\",\n"
	"\"candidate_frames\", \"base_median\", \"candidate_median\", \"change_pct\",\n"
	"\"p\", \"verdict\"}] and \"counter_counts\". The captures are read a second\n"
	"time for them, standard input too.\n"
	"\n"
	"Exit status: 0 when nothing regressed, 1 when something did, 2 on a usage\n"
	"error or a capture that cannot be read whole, 3 when the captures are of\n"
	"different GPUs or queues (unless --force).\n"
	"\n"
	"The table shortens a row's path past 160 bytes in its middle; CSV and\n"
	"JSON give it whole.\n"
	"\n" CMD_HELP_STDIN CMD_HELP_MEMORY CMD_HELP_MEMORY_STATS CMD_HELP_MEMORY_COUNTERS
	"\nBoth captures' statistics are kept; one capture is read at a time.";

/* Reads the arguments into d (initialised) and checks them: true with
 * BASE and CANDIDATE in *pos, else false after saying why, with the exit
 * status in *status. */
static bool parse_args(int argc, char **argv, struct diff_settings *d, struct cmd_positional *pos,
		       struct cmd_output *out, char **output, int *status)
{
	struct option_spec from_stats[16], from_report[16];
	char perr[300];
	const struct option_table tables[] = {
		{ diff_options, diff_option_count, d },
		{ from_stats, diff_stats_options(from_stats), &d->stats },
		{ from_report, diff_report_options(from_report), &d->stats.report },
		{ &cmd_output_option, 1, output },
		{ report_terminal_options, report_terminal_option_count, &d->stats.report.term },
	};
	const struct cmd_spec spec = {
		.name = "diff",
		.usage = "crumbs diff BASE CANDIDATE [options]",
		.description = description,
		.tables = tables,
		.table_count = sizeof(tables) / sizeof(tables[0]),
		.environment = CMD_ENV_LOCALE CMD_ENV_TERMINAL CMD_ENV_THREADS,
	};
	if (!cmd_parse(&spec, argc, argv, pos, status))
		return false;
	if (pos->count != 2) {
		*status = cmd_usage_error("diff", pos->count < 2 ? "expected two capture files, "
					  "BASE and CANDIDATE" : "expected two capture files, got %d "
					  "arguments", pos->count);
		return false;
	}
	out->path = *output;
	if (!cmd_output_check("diff", out, (const char *const *)pos->args, 2, status))
		return false;
	if (cmd_is_stdin(pos->args[0]) && cmd_is_stdin(pos->args[1])) {
		*status = cmd_usage_error("diff", "standard input ('-') can be one of the captures, "
					  "not both");
		return false;
	}
	if ((*status = cmd_stats_check_by("diff", &d->stats)) != EXIT_OK)
		return false;
	if (report_settings_prepare(&d->stats.report, perr, sizeof(perr)) != CRUMBS_OK) {
		*status = cmd_usage_error("diff", "%s", perr);
		return false;
	}
	return true;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_settings d;
	struct cmd_positional pos = { 0 };
	reader *c[2] = { NULL, NULL };
	stats *s[2] = { NULL, NULL };
	uint8_t *selected[2] = { NULL, NULL };
	struct compare_runs runs = { 0 };
	int status = EXIT_OK;
	struct cmd_output to = { 0 };
	char *output = NULL;
	struct counter_runs counters[2] = { { 0 }, { 0 } };

	diff_settings_init(&d);
	if (!parse_args(argc, argv, &d, &pos, &to, &output, &status))
		goto out;
	for (int i = 0; i < 2; i++)
		if (cmd_stats_load(pos.args[i], &d.stats, &c[i], &s[i]) != CMD_LOAD_OK) {
			/* A run read in part would compare what is not comparable. */
			status = EXIT_USAGE;
			goto out;
		}
	if (!cmd_stats_root_found(&d.stats, s[0]) && !cmd_stats_root_found(&d.stats, s[1])) {
		/* Else nothing would be compared, and nothing regress. */
		struct sbuf where = { 0 };
		sbuf_addf(&where, "in the frames of '%s' or '%s'", pos.args[0], pos.args[1]);
		cmd_no_root_match(where.data ? where.data : pos.args[0], &d.stats.report);
		sbuf_release(&where);
		status = EXIT_USAGE;
		goto out;
	}
	if (!comparable(pos.args[0], reader_meta(c[0]), pos.args[1], reader_meta(c[1]))) {
		if (!d.force) {
			cmd_error("the captures are not comparable; --force compares them all "
				  "the same");
			status = EXIT_NOT_COMPARABLE;
			goto out;
		}
	}
	for (int i = 0; i < 2; i++)
		if (!(selected[i] = stats_select(&d.stats, s[i]))) {
			cmd_error("out of memory");
			status = EXIT_FAILURE_;
			goto out;
		}
	if (compare_runs(s[0], selected[0], s[1], selected[1], d.stat, &d.rule, &runs) != 0) {
		cmd_error("out of memory");
		status = EXIT_FAILURE_;
		goto out;
	}
	/* --counters: more or less work, said beside the times, not a
	 * verdict. */
	struct diff_counters dc = { &counters[0], &counters[1], reader_meta(c[0]), reader_meta(c[1]) };
	for (int i = 0; i < 2 && d.stats.report.counters; i++)
		if (cmd_counters_load("diff", pos.args[i], &d.stats, &counters[i]) != 0) {
			status = EXIT_FAILURE_;
			goto out;
		}
	cmd_terminal(&d.stats.report.term, &d.stats.report, &to);
	struct report_sink sink = { cmd_output_write, &to };
	bool in_print = d.stats.report.counters && d.stats.format != STATS_FORMAT_TABLE;
	if (diff_print_with_counters(&d, &runs, s[0], s[1], pos.args[0], pos.args[1],
				     in_print ? &dc : NULL, &sink) != 0 ||
	    (d.stats.report.counters && !in_print && diff_counters_print(&d, &dc, &sink) != 0)) {
		if (!to.error && !ferror(stdout))
			cmd_error("out of memory");
		status = cmd_output_close(&to, EXIT_FAILURE_, false);
		goto out;
	}
	status = cmd_output_close(&to, runs.verdicts[VERDICT_REGRESSED] ||
					       runs.memory_verdicts[VERDICT_REGRESSED]
				  ? EXIT_FAILURE_ : EXIT_OK, true);
out:
	free(output);
	compare_runs_release(&runs);
	for (int i = 0; i < 2; i++) {
		counter_runs_release(&counters[i]);
		free(selected[i]);
		stats_free(s[i]);
		reader_free(c[i]);
	}
	diff_settings_release(&d);
	cmd_positional_release(&pos);
	return status;
}
