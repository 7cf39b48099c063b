/* SPDX-License-Identifier: MIT */
/*
 * options.c: the command-line option parser every command and the
 * in-program console use: options declared in tables that bind each to
 * a variable of the table's target, their help lines, and numbers read
 * from text, for the options and for everyone else.
 */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Numbers                                                                  */
/* ------------------------------------------------------------------------ */

const char *read_u64(const char *v, uint64_t max, uint64_t *out)
{
	uint64_t x = 0;
	if (!isdigit((unsigned char)*v))
		return NULL;
	for (; isdigit((unsigned char)*v); v++) {
		unsigned d = (unsigned)(*v - '0');
		if (d > max || x > (max - d) / 10)
			return NULL;
		x = x * 10 + d;
	}
	*out = x;
	return v;
}

int parse_u64(const char *v, uint64_t max, uint64_t *out, char *err, size_t n)
{
	uint64_t x;
	const char *end;
	if (!isdigit((unsigned char)v[0])) {
		snprintf(err, n, "'%s' is not a number", v);
		return -1;
	}
	if (!(end = read_u64(v, max, &x)) || *end != '\0') {
		snprintf(err, n, "'%s' is not a number from 0 to %llu", v, (unsigned long long)max);
		return -1;
	}
	*out = x;
	return 0;
}

const char *read_double(const char *v, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || errno != 0)
		return NULL;
	*out = x;
	return end;
}

int parse_double(const char *v, const char *unit, double min, double max, double *out)
{
	double x;
	const char *end = read_double(v, &x);
	if (end && unit && strcmp(end, unit) == 0)
		end += strlen(unit);
	if (!end || *end != '\0' || !isfinite(x) || x < min || x > max)
		return -1;
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

/* ------------------------------------------------------------------------ */
/* Values of options                                                        */
/* ------------------------------------------------------------------------ */

/* *dst (owned; NULL or an earlier value, which it frees) becomes a copy
 * of v. */
static int set_string(char **dst, const char *v, char *err, size_t n)
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

/* The index of v in names[] (NULL-terminated), or -1 with "'V' is not
 * one of A, B, C" in err. */
static int pick(const char *v, const char *const *names, char *err, size_t n)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(v, names[i]) == 0)
			return i;
	int used = snprintf(err, n, "'%s' is not one of ", v);
	for (size_t i = 0; names[i] && used >= 0 && (size_t)used < n; i++) {
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

/* --frames A:B, A: or :B into *first and *last. */
static int parse_frames(const char *v, uint64_t *first, uint64_t *last, char *err, size_t n)
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

/* A whole number of an integer kind's range. */
static uint64_t whole(double x)
{
	return x >= 0x1p64 ? UINT64_MAX : x > 0 ? (uint64_t)x : 0;
}

/* The value of an integer kind, from o->min to o->max. */
static int parse_whole(const struct option_spec *o, const char *v, uint64_t *out, char *err,
		       size_t n)
{
	uint64_t min = whole(o->min), max = whole(o->max);
	if (parse_u64(v, max, out, err, n) == 0 && *out >= min)
		return 0;
	if (o->what)
		snprintf(err, n, "'%s' is not %s", v, o->what);
	else if (isdigit((unsigned char)v[0]))
		snprintf(err, n, "'%s' is not a number from %llu to %llu", v,
			 (unsigned long long)min, (unsigned long long)max);
	return -1;
}

static int parse_real(const struct option_spec *o, const char *v, double *out, char *err,
		      size_t n)
{
	if (parse_double(v, o->unit, o->min, o->max, out) == 0 && !(o->above_min && *out <= o->min))
		return 0;
	if (o->what)
		snprintf(err, n, "'%s' is not %s", v, o->what);
	else
		snprintf(err, n, "'%s' is not a number from %g to %g", v, o->min, o->max);
	return -1;
}

/* Sets the variable of option o in target from its value (NULL for a
 * flag). Returns 0, or -1 with a message in err. */
static int apply(const struct option_spec *o, void *target, const char *v, char *err, size_t n)
{
	char *var = (char *)target + o->offset;
	uint64_t u;
	double d;
	int i;

	switch (o->kind) {
	case OPT_FLAG:
	case OPT_NEGATED:
		*(bool *)var = o->kind == OPT_FLAG;
		return 0;
	case OPT_U64:
	case OPT_UINT:
	case OPT_INT:
		if (parse_whole(o, v, &u, err, n) != 0)
			return -1;
		if (o->kind == OPT_U64)
			*(uint64_t *)var = u;
		else if (o->kind == OPT_UINT)
			*(unsigned *)var = (unsigned)u;
		else
			*(int *)var = (int)u;
		return 0;
	case OPT_DOUBLE:
		if (parse_real(o, v, &d, err, n) != 0)
			return -1;
		*(double *)var = d;
		return 0;
	case OPT_FILE:
		if (v[0] == '\0') {
			snprintf(err, n, "the file name is empty");
			return -1;
		}
		return set_string((char **)(void *)var, v, err, n);
	case OPT_STRING:
		return set_string((char **)(void *)var, v, err, n);
	case OPT_CHOICE:
		if ((i = pick(v, o->names, err, n)) < 0)
			return -1;
		*(int *)var = o->values ? o->values[i] : i;
		return 0;
	case OPT_FRAMES:
		if (parse_frames(v, (uint64_t *)(void *)var,
				 (uint64_t *)(void *)((char *)target + o->last_offset), err, n) != 0)
			return -1;
		*(bool *)((char *)target + o->set_offset) = true;
		return 0;
	case OPT_CALLBACK:
		return o->callback(target, v, err, n);
	}
	snprintf(err, n, "cannot be set");
	return -1;
}

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

/* The option a long argument (--name, --name=value) names, its table's
 * target in *target, a value written inside it in *value, and the option
 * as the messages show it in shown. NULL, with a message in err, when
 * there is none or it takes no value but was given one. */
static const struct option_spec *find_long_arg(const struct option_table *tables, size_t count,
					       const char *arg, void **target, const char **value,
					       char *shown, size_t shown_size, char *err, size_t n)
{
	const char *name = arg + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct option_spec *o = find_long(tables, count, name, len, target);
	snprintf(shown, shown_size, "--%.*s", (int)(len < 40 ? len : 40), name);
	if (!o) {
		snprintf(err, n, "unknown option '%s'", shown);
		return NULL;
	}
	if (eq && !o->value) {
		snprintf(err, n, "option '%s' takes no value", shown);
		return NULL;
	}
	*value = eq ? eq + 1 : NULL;
	return o;
}

/* Sets option o from value, or from the next argument when value is NULL
 * and o takes one (*i moves past it). Returns 0, or -1 with a message. */
static int take(const struct option_spec *o, void *target, const char *value, const char *shown,
		int argc, char **argv, int *i, char *err, size_t err_size)
{
	if (o->value && !value) {
		if (*i + 1 >= argc) {
			snprintf(err, err_size, "option '%s' needs a value (%s)", shown, o->value);
			return -1;
		}
		value = argv[++*i];
	}
	char why[200] = "";
	if (apply(o, target, value, why, sizeof(why)) != 0) {
		snprintf(err, err_size, "option '%s': %s", shown, why);
		return -1;
	}
	return 0;
}

/*
 * A bundle of short options, -abc as -a -b -c: each letter a flag, but
 * for the last that takes a value, which takes the rest of the argument
 * (-ab5, -d5) or, at its end, the next one. Returns 0, or -1 with a
 * message in err naming the letter.
 */
static int take_short(const struct option_table *tables, size_t count, int argc, char **argv,
		      int *i, char *err, size_t err_size)
{
	const char *arg = argv[*i];
	for (size_t j = 1; arg[j]; j++) {
		char shown[8];
		void *target = NULL;
		unsigned char c = (unsigned char)arg[j];
		/* A byte shown alone may be part of a character: '?' then. */
		snprintf(shown, sizeof(shown), "-%c", c < 0x80 && isprint(c) ? c : '?');
		const struct option_spec *o = find_short(tables, count, arg[j], &target);
		if (!o) {
			if (j > 1)
				snprintf(err, err_size, "unknown option '%s' in '%.40s'", shown, arg);
			else
				snprintf(err, err_size, "unknown option '%s'", shown);
			return -1;
		}
		if (o->value)
			return take(o, target, arg[j + 1] ? arg + j + 1 : NULL, shown, argc, argv, i,
				    err, err_size);
		if (take(o, target, NULL, shown, argc, argv, i, err, err_size) != 0)
			return -1;
	}
	return 0;
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
		if (arg[1] != '-') {
			if (take_short(tables, table_count, argc, argv, &i, err, err_size) != 0)
				return -1;
			continue;
		}
		const char *value = NULL;
		char shown[64];
		void *target = NULL;
		const struct option_spec *o = find_long_arg(tables, table_count, arg, &target, &value,
							    shown, sizeof(shown), err, err_size);
		if (!o || take(o, target, value, shown, argc, argv, &i, err, err_size) != 0)
			return -1;
	}
	for (; i < argc; i++)
		positional[np++] = argv[i];
	*positional_count = np;
	return 0;
}

size_t options_borrow(const struct option_spec *from, size_t count,
		      const struct option_borrowed *which, size_t which_count,
		      struct option_spec *out)
{
	size_t n = 0;
	for (size_t i = 0; i < which_count; i++)
		for (size_t j = 0; j < count; j++)
			if (strcmp(from[j].name, which[i].name) == 0) {
				out[n] = from[j];
				if (which[i].help)
					out[n].help = which[i].help;
				n++;
			}
	return n;
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
