/*
 * settings.c: the report settings as one table of options, shared by
 * `crumbs report` and the in-program profilegpu command, and the parser
 * and help formatter every command uses for its option tables.
 */
#include "report_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------------ */
/* The parser                                                               */
/* ------------------------------------------------------------------------ */

static const struct option_spec *find_long(const struct option_table *tables, size_t n,
					   const char *name, size_t len, void **target)
{
	for (size_t t = 0; t < n; t++)
		for (size_t i = 0; i < tables[t].count; i++) {
			const struct option_spec *o = &tables[t].specs[i];
			if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) {
				*target = tables[t].target;
				return o;
			}
		}
	return NULL;
}

static const struct option_spec *find_short(const struct option_table *tables, size_t n,
					    char c, void **target)
{
	for (size_t t = 0; t < n; t++)
		for (size_t i = 0; i < tables[t].count; i++)
			if (tables[t].specs[i].short_name == c) {
				*target = tables[t].target;
				return &tables[t].specs[i];
			}
	return NULL;
}

int options_parse(const struct option_table *tables, size_t table_count,
		  int argc, char **argv, bool stop_at_positional,
		  char **positional, int *positional_count,
		  char *err, size_t err_size)
{
	int np = 0;
	int i = 0;

	for (; i < argc; i++) {
		const char *arg = argv[i];
		const struct option_spec *o;
		const char *value = NULL;
		char shown[64];
		void *target = NULL;

		if (strcmp(arg, "--") == 0) {
			i++;
			break;
		}
		if (arg[0] != '-' || arg[1] == '\0') {
			positional[np++] = argv[i];
			if (stop_at_positional) {
				i++;
				break;
			}
			continue;
		}
		if (arg[1] == '-') {
			const char *name = arg + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			o = find_long(tables, table_count, name, len, &target);
			snprintf(shown, sizeof(shown), "--%.*s", (int)(len < 40 ? len : 40), name);
			if (!o) {
				snprintf(err, err_size, "unknown option '%s'", shown);
				return -1;
			}
			if (eq) {
				if (!o->value) {
					snprintf(err, err_size, "option '%s' takes no value", shown);
					return -1;
				}
				value = eq + 1;
			}
		} else {
			o = find_short(tables, table_count, arg[1], &target);
			snprintf(shown, sizeof(shown), "-%c", arg[1]);
			if (!o) {
				snprintf(err, err_size, "unknown option '%s'", shown);
				return -1;
			}
			if (arg[2] != '\0') {
				if (!o->value) {
					snprintf(err, err_size, "option '%s' takes no value", shown);
					return -1;
				}
				value = arg + 2;
			}
		}
		if (o->value && !value) {
			if (i + 1 >= argc) {
				snprintf(err, err_size, "option '%s' needs a value (%s)", shown, o->value);
				return -1;
			}
			value = argv[++i];
		}
		char why[200] = "";
		if (o->apply(target, value, why, sizeof(why)) != 0) {
			snprintf(err, err_size, "option '%s': %s", shown, why);
			return -1;
		}
	}
	for (; i < argc; i++)
		positional[np++] = argv[i];
	*positional_count = np;
	return 0;
}

void options_help(const struct option_table *tables, size_t table_count, struct sbuf *out)
{
	size_t widest = 0;
	for (size_t t = 0; t < table_count; t++)
		for (size_t i = 0; i < tables[t].count; i++) {
			const struct option_spec *o = &tables[t].specs[i];
			size_t w = 2 + strlen(o->name) + (o->value ? 1 + strlen(o->value) : 0);
			if (w > widest)
				widest = w;
		}
	for (size_t t = 0; t < table_count; t++)
		for (size_t i = 0; i < tables[t].count; i++) {
			const struct option_spec *o = &tables[t].specs[i];
			char left[96];
			snprintf(left, sizeof(left), "--%s%s%s", o->name, o->value ? " " : "",
				 o->value ? o->value : "");
			if (o->short_name)
				sbuf_addf(out, "  -%c, %-*s  %s\n", o->short_name, (int)widest, left, o->help);
			else
				sbuf_addf(out, "      %-*s  %s\n", (int)widest, left, o->help);
		}
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

static int parse_u64(const char *v, uint64_t max, uint64_t *out, char *err, size_t n)
{
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)v[0])) {
		snprintf(err, n, "'%s' is not a number", v);
		return -1;
	}
	unsigned long long x = strtoull(v, &end, 10);
	if (*end != '\0' || errno != 0 || x > max) {
		snprintf(err, n, "'%s' is not a number from 0 to %llu", v, (unsigned long long)max);
		return -1;
	}
	*out = x;
	return 0;
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

int option_set_string(char **dst, const char *v, char *err, size_t n)
{
	char *d = dup_str(v);
	if (!d) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	free(*dst);
	*dst = d;
	return 0;
}

int option_pick(const char *v, const char *const *names, size_t count, char *err, size_t n)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(v, names[i]) == 0)
			return (int)i;
	int used = snprintf(err, n, "'%s' is not one of ", v);
	for (size_t i = 0; i < count && used >= 0 && (size_t)used < n; i++) {
		int more = snprintf(err + used, n - (size_t)used, "%s%s", i ? ", " : "", names[i]);
		used = more < 0 ? more : used + more;
	}
	return -1;
}

/* A frame number of A:B: digits alone, at most 19 of them. */
static int parse_frame(const char *v, size_t len, uint64_t *out)
{
	uint64_t x = 0;
	if (len == 0 || len > 19)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*out = x;
	return 0;
}

int option_parse_frames(const char *v, uint64_t *first, uint64_t *last, char *err, size_t n)
{
	const char *colon = strchr(v, ':');
	uint64_t a = 0, b = UINT64_MAX;

	if (!colon || (colon > v && parse_frame(v, (size_t)(colon - v), &a)) ||
	    (colon[1] && parse_frame(colon + 1, strlen(colon + 1), &b))) {
		snprintf(err, n, "'%s' is not a range of frame numbers A:B, A: or :B", v);
		return -1;
	}
	if (a > b) {
		snprintf(err, n, "'%s' ends before it begins", v);
		return -1;
	}
	*first = a;
	*last = b;
	return 0;
}

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
