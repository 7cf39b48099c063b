/* SPDX-License-Identifier: MIT */
/*
 * filter.c: the wildcard patterns of --root and --queue. A wildcard (*, ?,
 * [...], with \ to quote) is translated to an anchored PCRE2 pattern, so
 * it matches whole names, in any script, optionally ignoring case.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "report_internal.h"

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pattern like "*a*a*a*a*b" backtracks in polynomial time on long
 * names; past this many steps a name is taken not to match rather than
 * hang the report. */
#define MATCH_LIMIT 1000000

struct report_filter {
	pcre2_code **roots;
	size_t root_count;
	pcre2_code *queue;
	pcre2_match_data *match;
	pcre2_match_context *context;
};

/* The length of the class that opens at w[i] ('['), up to its closing
 * bracket, or 0 when it has none: '[' is then an ordinary character, as
 * in the shell. A ']' right after the opening (or its '!') is a member. */
static size_t class_len(const char *w, size_t i)
{
	size_t j = i + 1;
	if (w[j] == '!' || w[j] == '^')
		j++;
	if (w[j] == ']')
		j++;
	while (w[j] && w[j] != ']')
		j++;
	return w[j] == ']' ? j + 1 - i : 0;
}

bool wildcard_literal(const char *w, struct sbuf *out)
{
	for (size_t i = 0; w[i]; i++) {
		char c = w[i];
		if (c == '*' || c == '?' || (c == '[' && class_len(w, i)))
			return false;
		if (c == '\\' && w[i + 1])
			c = w[++i];
		sbuf_add(out, &c, 1);
	}
	return true;
}

/* Appends the PCRE2 form of a wildcard to out. */
static void wildcard_to_regex(const char *w, struct sbuf *out)
{
	for (size_t i = 0; w[i];) {
		unsigned char c = (unsigned char)w[i];
		if (c == '*') {
			while (w[i] == '*')
				i++;
			sbuf_adds(out, ".*");
			continue;
		}
		if (c == '?') {
			sbuf_adds(out, ".");
			i++;
			continue;
		}
		if (c == '\\' && w[i + 1]) {
			i++;
			c = (unsigned char)w[i];
		} else if (c == '[') {
			/* A class needs its closing bracket; a ']' right after
			 * the opening (or its '!') is a member. Without one, '['
			 * is an ordinary character, as in the shell. */
			size_t j = i + 1;
			bool negate = w[j] == '!' || w[j] == '^';
			if (negate)
				j++;
			size_t first = j;
			if (w[j] == ']')
				j++;
			while (w[j] && w[j] != ']')
				j++;
			if (w[j] == ']') {
				sbuf_adds(out, negate ? "[^" : "[");
				for (size_t k = first; k < j; k++) {
					unsigned char m = (unsigned char)w[k];
					if (m == '\\' || m == '[' || m == ']' || m == '^')
						sbuf_add(out, "\\", 1);
					sbuf_add(out, (const char *)&m, 1);
				}
				sbuf_adds(out, "]");
				i = j + 1;
				continue;
			}
		}
		/* Quote every ASCII punctuation character; letters, digits and
		 * the bytes of non-ASCII characters stand for themselves. */
		if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
				  (c >= 'A' && c <= 'Z') || c == ' '))
			sbuf_add(out, "\\", 1);
		sbuf_add(out, (const char *)&c, 1);
		i++;
	}
}

static enum crumbs_result compile(const char *wildcard, bool ignore_case, pcre2_code **out,
				  const char *what, char *err, size_t err_size)
{
	struct sbuf re = { 0 };
	int code;
	PCRE2_SIZE offset;

	wildcard_to_regex(wildcard, &re);
	if (re.failed) {
		sbuf_release(&re);
		snprintf(err, err_size, "out of memory");
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	}
	uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED | PCRE2_ENDANCHORED |
			   PCRE2_DOTALL | (ignore_case ? PCRE2_CASELESS : 0);
	*out = pcre2_compile((PCRE2_SPTR)(re.data ? re.data : ""), re.len, options, &code,
			     &offset, NULL);
	sbuf_release(&re);
	if (!*out) {
		PCRE2_UCHAR message[160];
		pcre2_get_error_message(code, message, sizeof(message));
		snprintf(err, err_size, "invalid %s pattern '%s': %s", what, wildcard,
			 (const char *)message);
		return CRUMBS_ERROR_PATTERN;
	}
	return CRUMBS_OK;
}

enum crumbs_result report_settings_prepare(struct report_settings *s, char *err, size_t err_size)
{
	struct report_filter *f = calloc(1, sizeof(*f));
	enum crumbs_result r = CRUMBS_OK;

	if (!f)
		goto oom;
	if (s->root_count && !(f->roots = calloc(s->root_count, sizeof(*f->roots))))
		goto oom;
	for (size_t i = 0; i < s->root_count; i++, f->root_count++)
		if ((r = compile(s->roots[i], s->ignore_case, &f->roots[i], "root", err, err_size)))
			goto fail;
	/* Queue names are few and fixed; their case never matters. */
	if (s->queue && (r = compile(s->queue, true, &f->queue, "queue", err, err_size)))
		goto fail;
	f->match = pcre2_match_data_create(1, NULL);
	f->context = pcre2_match_context_create(NULL);
	if (!f->match || !f->context)
		goto oom;
	pcre2_set_match_limit(f->context, MATCH_LIMIT);
	pcre2_set_depth_limit(f->context, MATCH_LIMIT);
	if (s->filter) {
		struct report_settings old = { .filter = s->filter };
		report_settings_release(&old);
	}
	s->filter = f;
	return CRUMBS_OK;
oom:
	snprintf(err, err_size, "out of memory");
	r = CRUMBS_ERROR_OUT_OF_MEMORY;
fail:
	if (f) {
		struct report_settings tmp = { .filter = f };
		report_settings_release(&tmp);
	}
	return r;
}

void report_settings_release(struct report_settings *s)
{
	struct report_filter *f = s->filter;
	for (size_t i = 0; i < s->root_count; i++)
		free(s->roots[i]);
	free(s->roots);
	free(s->queue);
	if (f) {
		for (size_t i = 0; i < f->root_count; i++)
			pcre2_code_free(f->roots[i]);
		free(f->roots);
		pcre2_code_free(f->queue);
		pcre2_match_data_free(f->match);
		pcre2_match_context_free(f->context);
		free(f);
	}
	memset(s, 0, sizeof(*s));
}

static bool matches(const struct report_filter *f, const pcre2_code *re, const char *s, size_t len)
{
	int rc = pcre2_match(re, (PCRE2_SPTR)s, len, 0, 0, f->match, f->context);
	return rc >= 0;
}

bool filter_match_root(const struct report_filter *f, const char *name, size_t len)
{
	for (size_t i = 0; f && i < f->root_count; i++)
		if (matches(f, f->roots[i], name, len))
			return true;
	return false;
}

void filter_compile_fast(struct report_filter *f)
{
	/* Where JIT is not to be had, matching goes on without it. */
	for (size_t i = 0; f && i < f->root_count; i++)
		(void)pcre2_jit_compile(f->roots[i], PCRE2_JIT_COMPLETE);
}

bool filter_match_queue(const struct report_filter *f, const char *name)
{
	return !f || !f->queue || matches(f, f->queue, name, strlen(name));
}

bool report_selects_queue(const struct report_settings *s, const char *queue_name)
{
	return filter_match_queue(s->filter, queue_name);
}
