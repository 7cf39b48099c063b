/*
 * settings.c: the report settings as one table of options, shared by
 * `crumbs report` and the in-program profilegpu command.
 */
#include "report_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SETTINGS(t) ((struct report_settings *)(t))

static int set_root(void *t, const char *v, char *err, size_t n)
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

static int set_ignore_case(void *t, const char *v, char *err, size_t n)
{
	(void)v, (void)err, (void)n;
	SETTINGS(t)->ignore_case = true;
	return 0;
}

static int set_threshold(void *t, const char *v, char *err, size_t n)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end != v && *end == '%')
		end++;
	if (end == v || *end != '\0' || errno != 0 || !(x >= 0 && x <= 100)) {
		snprintf(err, n, "'%s' is not a percentage from 0 to 100", v);
		return -1;
	}
	SETTINGS(t)->threshold_pct = x;
	return 0;
}

#define FLAG_SETTER(fn, field, value)                                   \
	static int fn(void *t, const char *v, char *err, size_t n)      \
	{                                                               \
		(void)v, (void)err, (void)n;                            \
		SETTINGS(t)->field = value;                             \
		return 0;                                               \
	}

FLAG_SETTER(set_leaf, leaf, true)
FLAG_SETTER(set_no_leaf, leaf, false)
FLAG_SETTER(set_ascii, ascii, true)
FLAG_SETTER(set_unicode, ascii, false)
FLAG_SETTER(set_no_stats, stats, false)
FLAG_SETTER(set_no_percent, percent, false)
FLAG_SETTER(set_no_inclusive, inclusive, false)
FLAG_SETTER(set_no_exclusive, exclusive, false)
FLAG_SETTER(set_no_header, header, false)
FLAG_SETTER(set_no_empty_queues, empty_queues, false)

static int set_sort(void *t, const char *v, char *err, size_t n)
{
	static const char *const names[] = { "chrono", "time", "draws", "prims", "verts" };
	int i = option_pick(v, names, sizeof(names) / sizeof(names[0]), err, n);
	if (i < 0)
		return -1;
	SETTINGS(t)->sort = (enum report_sort)i;
	return 0;
}

static int set_max_depth(void *t, const char *v, char *err, size_t n)
{
	uint64_t x;
	if (parse_u64(v, 1000, &x, err, n))
		return -1;
	SETTINGS(t)->max_depth = (int)x;
	return 0;
}

static int set_gpu(void *t, const char *v, char *err, size_t n)
{
	uint64_t x;
	if (parse_u64(v, 63, &x, err, n))
		return -1;
	SETTINGS(t)->gpu = (int)x;
	return 0;
}

static int set_queue(void *t, const char *v, char *err, size_t n)
{
	struct report_settings *s = SETTINGS(t);
	char *q = dup_str(v);
	if (!q) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	free(s->queue);
	s->queue = q;
	return 0;
}

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

const struct option_spec report_options[] = {
	{ "root", 'r', "PATTERN", "show only the subtrees of scopes whose name matches (*, ?, [...]); repeatable", set_root },
	{ "ignore-case", 'i', NULL, "match --root and --queue patterns ignoring case", set_ignore_case },
	{ "threshold", 't', "PCT", "hide rows below PCT percent; fold hidden siblings into one row", set_threshold },
	{ "leaf", 0, NULL, "show leaf events: draws, dispatches, copies, render passes (default)", set_leaf },
	{ "no-leaf", 0, NULL, "hide leaf events; their time and counts stay with their scope", set_no_leaf },
	{ "sort", 's', "ORDER", "order siblings by chrono (default), time, draws, prims or verts", set_sort },
	{ "max-depth", 'd', "N", "show N levels below the top rows", set_max_depth },
	{ "ascii", 'a', NULL, "draw the table with ASCII only", set_ascii },
	{ "unicode", 'u', NULL, "draw with box-drawing and block characters (default in UTF-8 locales)", set_unicode },
	{ "no-stats", 0, NULL, "hide the Draws, Dispatches, Prims and Verts columns", set_no_stats },
	{ "no-percent", 0, NULL, "hide the Percent columns", set_no_percent },
	{ "no-inclusive", 0, NULL, "hide the Inclusive columns", set_no_inclusive },
	{ "no-exclusive", 0, NULL, "hide the Exclusive columns", set_no_exclusive },
	{ "no-header", 0, NULL, "hide the title and summary lines of each table", set_no_header },
	{ "no-empty-queues", 0, NULL, "skip queues that did no work in the frame", set_no_empty_queues },
	{ "gpu", 'g', "N", "only GPU N", set_gpu },
	{ "queue", 'q', "NAME", "only queues whose name matches, e.g. 'Graphics 0' or 'Compute*'", set_queue },
	{ "frame", 'f', "N|first|last|all", "which frames to show (default first)", set_frame },
};
const size_t report_option_count = sizeof(report_options) / sizeof(report_options[0]);

/* ------------------------------------------------------------------------ */
/* Settings                                                                 */
/* ------------------------------------------------------------------------ */

/* The locale's character set is UTF-8 when the first of these that is set
 * says so; this reads the environment rather than calling setlocale(),
 * which a library must not do inside someone else's program. */
static bool locale_is_utf8(void)
{
	static const char *const vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };
	for (size_t i = 0; i < 3; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v) {
			for (const char *p = v; *p; p++)
				if (strncasecmp(p, "utf-8", 5) == 0 || strncasecmp(p, "utf8", 4) == 0)
					return true;
			return false;
		}
	}
	return false;
}

void report_settings_init(struct report_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->leaf = true;
	s->sort = SORT_CHRONO;
	s->max_depth = -1;
	s->ascii = !locale_is_utf8();
	s->stats = s->percent = s->inclusive = s->exclusive = true;
	s->header = s->empty_queues = true;
	s->gpu = -1;
	s->frames = FRAMES_FIRST;
}
