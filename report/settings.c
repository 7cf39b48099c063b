/* SPDX-License-Identifier: MIT */
/*
 * settings.c: the report settings as one table of options, shared by
 * `crumbs report` and the in-program profilegpu command.
 */
#include "report_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SETTINGS(t) ((struct report_settings *)(t))
#define AT(field) offsetof(struct report_settings, field)

/* --root appends to the list. */
static int add_root(void *t, const char *v, char *err, size_t n)
{
	struct report_settings *s = SETTINGS(t);
	char **roots = realloc(s->roots, (s->root_count + 1) * sizeof(*roots));
	if (!roots || !(roots[s->root_count] = dup_str(v))) {
		if (roots)
			s->roots = roots;
		snprintf(err, n, "out of memory");
		return -1;
	}
	s->roots = roots;
	s->root_count++;
	return 0;
}

/* --frame N, first, last or all. */
static int set_frame(void *t, const char *v, char *err, size_t n)
{
	struct report_settings *s = SETTINGS(t);
	if (strcmp(v, "first") == 0)
		s->frames = FRAMES_FIRST;
	else if (strcmp(v, "last") == 0)
		s->frames = FRAMES_LAST;
	else if (strcmp(v, "all") == 0)
		s->frames = FRAMES_ALL;
	else if (parse_u64(v, UINT64_MAX, &s->frame_number, err, n) == 0)
		s->frames = FRAMES_NUMBER;
	else {
		snprintf(err, n, "'%s' is not a frame number, first, last or all", v);
		return -1;
	}
	return 0;
}

static const char *const sort_names[] = { "chrono", "time", "draws", "prims", "verts", NULL };
static const char *const by_names[] = { "scope", "pipeline", NULL };

const struct option_spec report_options[] = {
	{ "root", 'r', "PATTERN", "show only the subtrees of scopes whose name matches (*, ?, [...]); repeatable",
	  OPT_CALLBACK, .callback = add_root },
	{ "ignore-case", 'i', NULL, "match --root and --queue patterns ignoring case",
	  OPT_FLAG, .offset = AT(ignore_case) },
	{ "threshold", 't', "PCT", "hide rows below PCT percent; fold hidden siblings into one row",
	  OPT_DOUBLE, .offset = AT(threshold_pct), .min = 0, .max = 100, .unit = "%",
	  .what = "a percentage from 0 to 100" },
	{ "leaf", 0, NULL, "show leaf events: draws, dispatches, copies, render passes (default)",
	  OPT_FLAG, .offset = AT(leaf) },
	{ "no-leaf", 0, NULL, "hide leaf events; their time and counts stay with their scope",
	  OPT_NEGATED, .offset = AT(leaf) },
	{ "sort", 's', "ORDER", "order siblings by chrono (default), time, draws, prims or verts",
	  OPT_CHOICE, .offset = AT(sort), .names = sort_names },
	{ "by", 0, "ROWS", "rows of scope (the tree, default) or pipeline (draws and dispatches by the pipeline they ran, the slowest first)",
	  OPT_CHOICE, .offset = AT(by), .names = by_names },
	{ "max-depth", 'd', "N", "show N levels below the top rows",
	  OPT_INT, .offset = AT(max_depth), .min = 0, .max = 1000 },
	{ "ascii", 'a', NULL, "draw the table with ASCII only",
	  OPT_FLAG, .offset = AT(ascii) },
	{ "unicode", 'u', NULL, "draw with box-drawing and block characters (default in UTF-8 locales)",
	  OPT_NEGATED, .offset = AT(ascii) },
	{ "no-stats", 0, NULL, "hide the Draws, Dispatches, Prims and Verts columns",
	  OPT_NEGATED, .offset = AT(stats) },
	{ "counters", 0, NULL, "add pipeline statistics' columns: vertices, primitives, shader "
	  "invocations, culled primitives, fragments per pixel (? where unknown)",
	  OPT_FLAG, .offset = AT(counters) },
	{ "no-percent", 0, NULL, "hide the Percent columns",
	  OPT_NEGATED, .offset = AT(percent) },
	{ "no-inclusive", 0, NULL, "hide the Inclusive columns",
	  OPT_NEGATED, .offset = AT(inclusive) },
	{ "no-exclusive", 0, NULL, "hide the Exclusive columns",
	  OPT_NEGATED, .offset = AT(exclusive) },
	{ "no-header", 0, NULL, "hide the title and summary lines of each table",
	  OPT_NEGATED, .offset = AT(header) },
	{ "no-empty-queues", 0, NULL, "skip queues that did no work in the frame",
	  OPT_NEGATED, .offset = AT(empty_queues) },
	{ "gpu", 'g', "N", "only GPU N",
	  OPT_INT, .offset = AT(gpu), .min = 0, .max = 63 },
	{ "queue", 'q', "NAME", "only queues whose name matches, e.g. 'Graphics 0' or 'Compute*'",
	  OPT_STRING, .offset = AT(queue) },
	{ "frame", 'f', "N|first|last|all", "which frames to show (default first)",
	  OPT_CALLBACK, .callback = set_frame },
};
const size_t report_option_count = sizeof(report_options) / sizeof(report_options[0]);

static const char *const color_names[] = { "auto", "always", "never", NULL };

#define TERM_AT(field) offsetof(struct term_options, field)

const struct option_spec report_terminal_options[] = {
	{ "width", 0, "N", "fit the tables in N columns (default: the terminal's width, else "
			    "COLUMNS, else no limit): the least needed columns are left out first "
			    "(counts and spreads, then exclusive times and bars; never the main "
			    "times), then names are cut with an ellipsis",
	  OPT_INT, .offset = TERM_AT(width), .min = 1, .max = 100000 },
	{ "wide", 0, NULL, "no limit on the tables' width: every column, names whole",
	  OPT_FLAG, .offset = TERM_AT(wide) },
	{ "color", 0, "WHEN", "colour regressions, exceeded budgets and bars: auto (on a "
			      "terminal, unless NO_COLOR is set; default), always or never",
	  OPT_CHOICE, .offset = TERM_AT(color), .names = color_names },
	{ "no-pager", 0, NULL, "do not page the output on a terminal (through $CRUMBS_PAGER, "
			       "$PAGER or less)",
	  OPT_FLAG, .offset = TERM_AT(no_pager) },
};
const size_t report_terminal_option_count =
	sizeof(report_terminal_options) / sizeof(report_terminal_options[0]);

/* ------------------------------------------------------------------------ */
/* Settings                                                                 */
/* ------------------------------------------------------------------------ */

bool report_locale_utf8(const char *lc_all, const char *lc_ctype, const char *lang)
{
	const char *const values[] = { lc_all, lc_ctype, lang };
	for (size_t i = 0; i < 3; i++) {
		const char *v = values[i];
		if (v && *v) {
			for (const char *p = v; *p; p++)
				if (strncasecmp(p, "utf-8", 5) == 0 || strncasecmp(p, "utf8", 4) == 0)
					return true;
			return false;
		}
	}
	return false;
}

/* The locale's character set, from the environment rather than
 * setlocale(), which a library must not call inside someone else's
 * program. */
static bool locale_is_utf8(void)
{
	return report_locale_utf8(getenv("LC_ALL"), getenv("LC_CTYPE"), getenv("LANG"));
}

bool report_cpu_chosen(const struct report_settings *s)
{
	return s->gpu < 0 && !s->queue && s->by != BY_PIPELINE;
}

void report_settings_init(struct report_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->leaf = true;
	s->sort = SORT_CHRONO;
	s->max_depth = -1;
	s->ascii = s->ascii_names = !locale_is_utf8();
	s->stats = s->percent = s->inclusive = s->exclusive = true;
	s->header = s->empty_queues = true;
	s->gpu = -1;
	s->frames = FRAMES_FIRST;
}
