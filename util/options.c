/*
 * options.c: the command-line option parser every command and the
 * in-program console use: options declared in tables, their help lines,
 * and the values options take (numbers, strings, one of names, frame
 * ranges).
 */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int parse_u64(const char *v, uint64_t max, uint64_t *out, char *err, size_t n)
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

char *dup_str(const char *s)
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
