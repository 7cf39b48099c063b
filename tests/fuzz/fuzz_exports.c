/* SPDX-License-Identifier: MIT */
/*
 * fuzz_exports.c: libFuzzer target for what `crumbs export` and `crumbs
 * plot` write: the Perfetto, Chrome and folded-stack exporters, a frame's
 * timeline and a run's frame times as SVG. They are fed the frames of the
 * capture records_input.h builds around the input, as fuzz_records.c
 * reads them, with settings drawn from its first byte.
 *
 * Each writer writes to a sink that counts its bytes and refuses any past
 * OUTPUT_CAP, so the output stays bounded however much a frame asks for.
 * Aborts when a writer writes on after its sink refused, or says it
 * succeeded when its sink refused; when a text output (Chrome's JSON,
 * folded stacks, SVG) is not valid UTF-8 or holds a C0 control character
 * other than a tab, line feed or carriage return (JSON escapes them, XML
 * forbids them); when Chrome's trace is not one JSON value (a NaN or an
 * infinity is not a JSON number); when a line of folded stacks does not
 * end in a space and a weight; or when an SVG picture is not well-formed
 * XML as far as its tags, quotes and entities go.
 */
#include "../../analyze/analyze.h"
#include "../../report/report.h"
#include "../../util/util.h"
#include "records_input.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* More than any frame of a small input needs, unless a writer multiplies
 * what it is given: then the sink stops it. */
#define OUTPUT_CAP (1u << 20)

/* A sink that keeps what a writer wrote, up to OUTPUT_CAP bytes. */
struct counted {
	char *text;
	size_t bytes;
	bool refused;       /* the cap was reached: every write since fails */
	bool binary;        /* Perfetto's protobuf: no text to check */
};

static int count_write(void *user, const char *text, size_t len)
{
	struct counted *c = user;
	if (c->refused)
		abort(); /* the writer went on after its sink failed */
	if (len > OUTPUT_CAP - c->bytes) {
		c->refused = true;
		return -1;
	}
	if (!c->binary) {
		memcpy(c->text + c->bytes, text, len);
	}
	c->bytes += len;
	return 0;
}

static void counted_begin(struct counted *c, bool binary)
{
	c->bytes = 0;
	c->refused = false;
	c->binary = binary;
}

/* A writer's result against what its sink saw: a refusal must fail it. */
static void check_result(const struct counted *c, int r)
{
	if (c->refused && r == 0)
		abort();
}

/* Text for a JSON or XML parser or a terminal: valid UTF-8, and no C0
 * control character but tab, line feed and carriage return. */
static void check_text(const struct counted *c)
{
	const unsigned char *p = (const unsigned char *)c->text;
	if (c->binary)
		return;
	for (size_t i = 0; i < c->bytes;) {
		size_t n = utf8_sequence(p + i, c->bytes - i);
		if (n == 0 || (n == 1 && p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r'))
			abort();
		i += n;
	}
}

/* ------------------------------------------------------------------------ */
/* JSON, as RFC 8259 has it                                                 */
/* ------------------------------------------------------------------------ */

struct json {
	const char *p, *end;
	int depth;
};

static void json_space(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool json_word(struct json *j, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return false;
	j->p += n;
	return true;
}

static bool json_digits(struct json *j)
{
	const char *start = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > start;
}

static bool json_number(struct json *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!json_digits(j))
		return false;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!json_digits(j))
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!json_digits(j))
			return false;
	}
	return true;
}

static bool json_string(struct json *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	for (j->p++; j->p < j->end; j->p++) {
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (++j->p >= j->end)
			return false;
		if (*j->p == 'u') {
			for (int k = 0; k < 4; k++)
				if (++j->p >= j->end || !strchr("0123456789abcdefABCDEF", *j->p))
					return false;
		} else if (!strchr("\"\\/bfnrt", *j->p)) {
			return false;
		}
	}
	return false;
}

static bool json_value(struct json *j)
{
	json_space(j);
	if (j->p >= j->end || ++j->depth > 64)
		return false;
	bool ok;
	char open = *j->p;
	if (open == '{' || open == '[') {
		char close = open == '{' ? '}' : ']';
		j->p++;
		json_space(j);
		ok = true;
		if (j->p < j->end && *j->p == close) {
			j->p++;
		} else {
			for (;;) {
				if (open == '{') {
					json_space(j);
					if (!json_string(j))
						return false;
					json_space(j);
					if (j->p >= j->end || *j->p++ != ':')
						return false;
				}
				if (!json_value(j))
					return false;
				json_space(j);
				if (j->p < j->end && *j->p == ',') {
					j->p++;
					continue;
				}
				if (j->p >= j->end || *j->p++ != close)
					return false;
				break;
			}
		}
	} else if (open == '"') {
		ok = json_string(j);
	} else if (open == 't' || open == 'f' || open == 'n') {
		ok = json_word(j, "true") || json_word(j, "false") || json_word(j, "null");
	} else {
		ok = json_number(j);
	}
	j->depth--;
	return ok;
}

/* Whether text is one JSON value, with white space around it alone. */
static bool json_valid(const char *text, size_t len)
{
	struct json j = { text, text + len, 0 };
	if (!json_value(&j))
		return false;
	json_space(&j);
	return j.p == j.end;
}

/* Whether each line of folded stacks ends in a space and a weight. */
static bool folded_valid(const char *text, size_t len)
{
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return false;
		const char *d = nl;
		while (d > p && d[-1] >= '0' && d[-1] <= '9')
			d--;
		if (d == nl || d - p < 2 || d[-1] != ' ')
			return false;
		p = nl + 1;
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* XML: tags that nest, quoted attributes, entities                         */
/* ------------------------------------------------------------------------ */

/* The length of the entity at p ("&amp;", "&#10;"...), 0 if none. */
static size_t xml_entity(const char *p, const char *end)
{
	static const char *const named[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++) {
		size_t n = strlen(named[k]);
		if ((size_t)(end - p) >= n && memcmp(p, named[k], n) == 0)
			return n;
	}
	const char *q = p + 1;
	if (q < end && *q == '#') {
		bool hex = ++q < end && *q == 'x';
		const char *digits = q += hex;
		while (q < end && strchr(hex ? "0123456789abcdefABCDEF" : "0123456789", *q) && *q)
			q++;
		if (q > digits && q < end && *q == ';')
			return (size_t)(q + 1 - p);
	}
	return 0;
}

static bool xml_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == ':' || c == '.';
}

/* Whether text is well-formed XML in what crumbs plot writes: elements
 * that nest and close, attributes in quotes, '&' only in an entity and
 * '<' only in markup, a declaration and comments skipped. */
static bool xml_valid(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	const char *stack[64];
	size_t stack_len[64];
	int depth = 0, roots = 0;

	while (p < end) {
		if (*p == '&') {
			size_t n = xml_entity(p, end);
			if (!n)
				return false;
			p += n;
			continue;
		}
		if (*p != '<') {
			p++;
			continue;
		}
		if (end - p >= 4 && memcmp(p, "<!--", 4) == 0) {
			const char *c = p + 4;
			while (c + 3 <= end && memcmp(c, "-->", 3) != 0)
				c++;
			if (c + 3 > end)
				return false;
			p = c + 3;
			continue;
		}
		if (end - p >= 2 && (p[1] == '?' || p[1] == '!')) {
			const char *c = memchr(p, '>', (size_t)(end - p));
			if (!c)
				return false;
			p = c + 1;
			continue;
		}
		bool closing = ++p < end && *p == '/';
		const char *name = p += closing;
		while (p < end && xml_name_char(*p))
			p++;
		size_t name_len = (size_t)(p - name);
		if (!name_len)
			return false;
		if (closing) {
			if (!depth || stack_len[depth - 1] != name_len ||
			    memcmp(stack[depth - 1], name, name_len) != 0 || p >= end || *p != '>')
				return false;
			depth--;
			p++;
			continue;
		}
		/* Attributes: name="value" or name='value'. */
		for (;;) {
			while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
				p++;
			if (p >= end)
				return false;
			if (*p == '>' || (*p == '/' && p + 1 < end && p[1] == '>'))
				break;
			const char *a = p;
			while (p < end && xml_name_char(*p))
				p++;
			if (p == a || p + 1 >= end || *p != '=' || (p[1] != '"' && p[1] != '\''))
				return false;
			char quote = p[1];
			for (p += 2; p < end && *p != quote; p++) {
				if (*p == '<')
					return false;
				if (*p == '&') {
					size_t n = xml_entity(p, end);
					if (!n)
						return false;
					p += n - 1;
				}
			}
			if (p++ >= end)
				return false;
		}
		if (depth == 0)
			roots++;
		if (*p == '/') {
			p += 2;
			continue;
		}
		if (depth == 64)
			return false;
		stack[depth] = name;
		stack_len[depth++] = name_len;
		p++;
	}
	return depth == 0 && roots == 1;
}

/* Settings for the report part of every writer, from the input's first
 * byte: leaf events or not, a depth limit, one GPU, a root pattern. */
static bool settings_from(uint8_t b, struct report_settings *s)
{
	static const char *const depths[] = { "0", "1", "3" };
	static char root[] = "--root", any[] = "*a*", leaf[] = "--no-leaf", depth[] = "--max-depth",
		    gpu[] = "--gpu", zero[] = "0";
	char value[2];
	char *argv[8];
	char *positional[8];
	int argc = 0, count = 0;
	char err[300];

	if (b & 1)
		argv[argc++] = leaf;
	if (b & 2) {
		argv[argc++] = depth;
		snprintf(value, sizeof(value), "%s", depths[(b >> 2) % 3]);
		argv[argc++] = value;
	}
	if (b & 16) {
		argv[argc++] = gpu;
		argv[argc++] = zero;
	}
	if (b & 32) {
		argv[argc++] = root;
		argv[argc++] = any;
	}
	argv[argc] = NULL;
	struct option_table t = { report_options, report_option_count, s };
	return options_parse(&t, 1, argc, argv, false, positional, &count, err, sizeof(err)) == 0 &&
	       report_settings_prepare(s, err, sizeof(err)) == CRUMBS_OK;
}

/* Every frame of c into one trace of each export format. */
static void exports(reader *c, uint8_t b, struct counted *out)
{
	static const enum export_format formats[] = { EXPORT_PERFETTO, EXPORT_CHROME,
						      EXPORT_FOLDED };
	struct analyze_error e;
	const struct frame *f;

	for (size_t k = 0; k < sizeof(formats) / sizeof(formats[0]); k++) {
		struct export_settings es;
		struct report_sink sink = { count_write, out };
		export_settings_init(&es);
		es.format = formats[k];
		counted_begin(out, es.format == EXPORT_PERFETTO);
		exporter *x = NULL;
		if (settings_from(b, &es.report) && reader_rewind(c, &e) == CRUMBS_OK &&
		    (x = exporter_begin(&es, &sink))) {
			int r = 0;
			while (r == 0 && reader_next_frame(c, &f, &e) == CRUMBS_OK && f) {
				r = exporter_frame(x, reader_meta(c), f);
				check_result(out, r);
			}
			if (r == 0) {
				r = exporter_end(x);
				check_result(out, r);
			}
			if (r == 0) {
				check_text(out);
				if ((es.format == EXPORT_CHROME && !json_valid(out->text, out->bytes)) ||
				    (es.format == EXPORT_FOLDED && !folded_valid(out->text, out->bytes)))
					abort();
			}
		}
		exporter_free(x);
		export_settings_release(&es);
	}
}

/* The first frames of c as timelines, and the run's frame times (with the
 * rows of its top scopes unless the first byte has bit 128 set). */
static void plots(reader *c, uint8_t b, struct counted *out)
{
	struct plot_settings p;
	struct report_sink sink = { count_write, out };
	struct analyze_error e;
	const struct frame *f;

	plot_settings_init(&p);
	p.width = b & 64 ? PLOT_MIN_WIDTH : PLOT_DEFAULT_WIDTH;
	if (settings_from(b, &p.stats.report) && reader_rewind(c, &e) == CRUMBS_OK) {
		for (int k = 0; k < 4 && reader_next_frame(c, &f, &e) == CRUMBS_OK && f; k++) {
			counted_begin(out, false);
			int r = plot_frame(&p, reader_meta(c), f, "fuzz.crumbs", &sink);
			check_result(out, r);
			if (r == 0) {
				check_text(out);
				if (!xml_valid(out->text, out->bytes))
					abort();
			}
		}
	}
	stats *s = stats_create();
	if (s && reader_rewind(c, &e) == CRUMBS_OK) {
		/* With the scopes, the rows of the top ones below the graphs. */
		if (b & 128)
			stats_keep_frame_times_only(s);
		while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f &&
		       stats_add_frame(s, reader_meta(c), f) == CRUMBS_OK)
			;
		if (stats_finish(s, &p.stats.spike) == CRUMBS_OK) {
			counted_begin(out, false);
			int r = plot_run(&p, reader_meta(c), s, NULL, "fuzz.crumbs", &sink);
			check_result(out, r);
			if (r == 0) {
				check_text(out);
				if (!xml_valid(out->text, out->bytes))
					abort();
			}
		}
	}
	stats_free(s);
	plot_settings_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct counted out;
	struct records_file o;
	reader *c = NULL;
	struct analyze_error e;

	if (!out.text && !(out.text = malloc(OUTPUT_CAP)))
		return 0;
	if (!records_build(data, size, &o))
		return 0;
	if (reader_open_memory(o.p, o.len, &c, &e) == CRUMBS_OK) {
		exports(c, data[0], &out);
		plots(c, data[0], &out);
	}
	reader_free(c);
	free(o.p);
	return 0;
}
