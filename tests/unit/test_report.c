/* SPDX-License-Identifier: MIT */
/*
 * test_report.c: the profilegpu table: line widths in every script and both
 * modes, ASCII purity, bars, and each setting (root filter, threshold
 * folding, leaf folding, sorting, depth, columns), plus the option parser
 * and the numbers it reads.
 */
#include "helpers.h"

#include "../../report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define T 1000000000ull

/* A modifiable copy of a string literal, for argv arrays. */
#define A(s) ((char[]){ s })

struct scope_spec {
	const char *name;
	int depth;          /* 0: top level */
	uint64_t own_ns;    /* busy time before its first child */
};

/*
 * A one-queue capture whose tree follows the list: each scope begins after
 * its own_ns, children follow in order, and a scope ends where its last
 * descendant ended. Queue busy time is then the sum of own_ns.
 */
static reader *tree_capture(struct membuf *m, const struct scope_spec *specs, size_t n,
			    bool with_leaf)
{
	crumbs_writer *w = mem_writer(m, 0);
	uint32_t g = add_gpu(w, "Test GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	uint64_t t = T;
	int depth = -1;
	crumbs_writer_calibration(w, g, T, T, 0);
	crumbs_writer_frame_begin(w, 7, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T, NULL, NULL);
	for (size_t i = 0; i < n; i++) {
		while (depth >= specs[i].depth) {
			crumbs_writer_scope_end(w, t);
			depth--;
		}
		crumbs_writer_scope_begin(w, specs[i].name, (unsigned)(specs[i].depth > 3 ? 3 : specs[i].depth), t);
		depth = specs[i].depth;
		t += specs[i].own_ns;
		if (with_leaf && i == 0) {
			struct crumbs_leaf_desc d = { CRUMBS_EVENT_DRAW, "Leaf Draw", 1, 0, 10, 30, t, t + 500 };
			crumbs_writer_leaf(w, &d);
			t += 500;
		}
	}
	while (depth-- >= 0)
		crumbs_writer_scope_end(w, t);
	crumbs_writer_submit_end(w, t);
	crumbs_writer_frame_end(w, t + 1000, 0, 0);
	return mem_read(m, w);
}

static int sink_to_sbuf(void *user, const char *text, size_t len)
{
	sbuf_add(user, text, len);
	return 0;
}

/* The report of the capture's first frame under the given settings. */
static char *render(reader *c, struct report_settings *s)
{
	struct sbuf out = { 0 };
	struct report_sink sink = { sink_to_sbuf, &out };
	char err[200];
	if (report_settings_prepare(s, err, sizeof(err)) != CRUMBS_OK)
		fail_msg("prepare: %s", err);
	struct analyze_error e;
	assert_int_equal(reader_rewind(c, &e), CRUMBS_OK);
	assert_int_equal(report_frame(s, reader_meta(c), next_frame(c), &sink), 0);
	assert_false(out.failed);
	return out.data ? out.data : calloc(1, 1);
}

static bool table_line(const char *line, bool ascii)
{
	if (ascii)
		return line[0] == '|' || line[0] == '+';
	return strncmp(line, "│", 3) == 0 || strncmp(line, "┌", 3) == 0 ||
	       strncmp(line, "├", 3) == 0 || strncmp(line, "└", 3) == 0;
}

/* Every line of each table has one display width; returns the tables. */
static int check_widths(const char *text, bool ascii)
{
	int tables = 0;
	size_t width = 0;
	bool in_table = false;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = strndup(p, len);
		if (table_line(line, ascii)) {
			size_t w = text_width(line, len);
			if (!in_table) {
				tables++;
				width = w;
				in_table = true;
			} else if (w != width) {
				fail_msg("line of width %zu in a table of width %zu: %s", w, width, line);
			}
		} else {
			in_table = false;
		}
		free(line);
		p += len + (nl ? 1 : 0);
	}
	return tables;
}

static const struct scope_spec scripts[] = {
	{ "Frame 7", 0, 1000 },
	{ "Latin Pass", 1, 2000 },
	{ "Тени и свет", 1, 3000 },
	{ "半透明パーティクル", 2, 4000 },
	{ "Contraste\xcc\x81", 2, 500 },
	{ "e\xcc\x81\xcc\x82\xcc\x83 stacked marks", 2, 500 },
	{ "Tonemap ✨", 1, 700 },
	{ "😀 emoji first", 1, 800 },
	{ "Ελληνικά και 中文", 3, 900 },
	{ "tab\there and\nnewline", 1, 100 },
};

static void widths_in_every_script(void **state)
{
	(void)state;
	struct membuf m;
	reader *c = tree_capture(&m, scripts, sizeof(scripts) / sizeof(scripts[0]), true);
	for (int ascii = 0; ascii < 2; ascii++) {
		struct report_settings s;
		report_settings_init(&s);
		s.ascii = ascii;
		/* ASCII as a locale not UTF-8 chooses it, names escaped. */
		s.ascii_names = ascii;
		char *text = render(c, &s);
		assert_int_equal(check_widths(text, ascii), 1);
		/* Control characters never reach the terminal: escaped in
		 * both modes, as every character past ASCII is where the
		 * locale is not UTF-8. */
		assert_null(strstr(text, "\t"));
		assert_non_null(strstr(text, "tab\\x09here and\\x0anewline"));
		assert_non_null(strstr(text, ascii ? "\\u534a\\u900f" : "半透明パーティクル"));
		free(text);
		/* With columns hidden too. */
		s.stats = false;
		s.inclusive = false;
		text = render(c, &s);
		assert_int_equal(check_widths(text, ascii), 1);
		assert_null(strstr(text, "Inclusive"));
		assert_null(strstr(text, "Draws"));
		free(text);
		s.exclusive = false;
		s.percent = false;
		text = render(c, &s);
		assert_int_equal(check_widths(text, ascii), 1);
		assert_null(strstr(text, "Exclusive"));
		free(text);
		report_settings_release(&s);
	}
	reader_free(c);
	free(m.data);
}

static void ascii_mode_draws_only_ascii(void **state)
{
	(void)state;
	static const struct scope_spec plain[] = {
		{ "Frame", 0, 1000 }, { "Shadows", 1, 5000 }, { "Post", 1, 3000 }, { "Bloom", 2, 100 },
	};
	struct membuf m;
	reader *c = tree_capture(&m, plain, 4, true);
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	s.threshold_pct = 1.5;
	char *text = render(c, &s);
	for (const char *p = text; *p; p++)
		if ((unsigned char)*p >= 0x80)
			fail_msg("non-ASCII byte 0x%02x in: %s", (unsigned char)*p, text);
	assert_non_null(strstr(text, "| Events"));
	assert_non_null(strstr(text, "########"));
	free(text);
	report_settings_release(&s);
	reader_free(c);
	free(m.data);
}

/* Bars: 8 cells, full cells and one partial cell of eighths. */
static void bars(void **state)
{
	(void)state;
	/* Root 100%; A 50%; B 4.6875% = 3/64 of the bar. */
	static const struct scope_spec specs[] = {
		{ "A", 0, 32000 }, { "B", 0, 3000 }, { "C", 0, 29000 },
	};
	struct membuf m;
	reader *c = tree_capture(&m, specs, 3, false);
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = false;
	char *text = render(c, &s);
	assert_non_null(strstr(text, "████████ 100.0%"));
	assert_non_null(strstr(text, "████      50.0%"));
	assert_non_null(strstr(text, "▍          4.7%"));
	free(text);
	s.ascii = true;
	text = render(c, &s);
	assert_non_null(strstr(text, "######## 100.0%"));
	assert_non_null(strstr(text, "####      50.0%"));
	assert_non_null(strstr(text, "-          4.7%"));
	free(text);
	report_settings_release(&s);
	reader_free(c);
	free(m.data);
}

static const struct scope_spec shares[] = {
	{ "Big", 0, 50000 },
	{ "Medium", 0, 30000 },
	{ "Small 1", 0, 2000 },
	{ "Small 2", 0, 2000 },
	{ "Small 3", 0, 1000 },
	{ "Rest", 0, 15000 },
};

static void threshold_folds_siblings(void **state)
{
	(void)state;
	struct membuf m;
	reader *c = tree_capture(&m, shares, 6, false);
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	s.threshold_pct = 5;
	char *text = render(c, &s);
	/* The three small ones (5% together) fold into one row. */
	assert_null(strstr(text, "Small 1"));
	assert_non_null(strstr(text, "3 other children"));
	assert_non_null(strstr(text, "threshold 5% (3 rows hidden)"));
	assert_non_null(strstr(text, "Rest"));
	free(text);
	s.threshold_pct = 6; /* 5% together no longer passes: no row */
	text = render(c, &s);
	assert_null(strstr(text, "other children"));
	assert_non_null(strstr(text, "threshold 6% (3 rows hidden)"));
	assert_non_null(strstr(text, "Medium"));
	free(text);
	report_settings_release(&s);
	reader_free(c);
	free(m.data);
}

static void sort_by_time(void **state)
{
	(void)state;
	struct membuf m;
	reader *c = tree_capture(&m, shares, 6, false);
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	s.sort = SORT_TIME;
	char *text = render(c, &s);
	char *big = strstr(text, " Big"), *medium = strstr(text, " Medium"),
	     *rest = strstr(text, " Rest"), *small = strstr(text, " Small 3");
	assert_true(big && medium && rest && small);
	assert_true(big < medium && medium < rest && rest < small);
	assert_non_null(strstr(text, "sorted by time"));
	free(text);
	s.sort = SORT_CHRONO;
	text = render(c, &s);
	assert_true(strstr(text, " Rest") > strstr(text, " Small 3"));
	free(text);
	report_settings_release(&s);
	reader_free(c);
	free(m.data);
}

static const struct scope_spec nested[] = {
	{ "Frame", 0, 100 },
	{ "Post Processing", 1, 200 },
	{ "Bloom 3", 2, 300 },
	{ "Post Inner", 2, 400 },
	{ "Bloom 12", 3, 500 },
	{ "Translucency", 1, 600 },
	{ "post late", 1, 700 },
	{ "[x] marker*", 1, 10 },
};

static char *render_root(reader *c, const char *pattern, bool ignore_case)
{
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	s.ignore_case = ignore_case;
	char *argv[] = { A("--root"), NULL };
	char copy[64];
	snprintf(copy, sizeof(copy), "%s", pattern);
	argv[1] = copy;
	struct option_table t = { report_options, report_option_count, &s };
	char *pos[2];
	int np;
	char err[200];
	assert_int_equal(options_parse(&t, 1, 2, argv, false, pos, &np, err, sizeof(err)), 0);
	char *text = render(c, &s);
	report_settings_release(&s);
	return text;
}

static void root_filter(void **state)
{
	(void)state;
	struct membuf m;
	reader *c = tree_capture(&m, nested, sizeof(nested) / sizeof(nested[0]), false);

	/* Nested matches are shown once, inside the outer one. */
	char *text = render_root(c, "*Post*", false);
	assert_non_null(strstr(text, "| Post Processing"));
	assert_non_null(strstr(text, "|    Post Inner"));
	assert_null(strstr(text, "| Post Inner"));
	assert_null(strstr(text, "Translucency"));
	assert_null(strstr(text, "post late"));
	/* The queue's own row is not shown; its name is only in the title. */
	assert_null(strstr(strstr(text, "Graphics 0") + 1, "Graphics 0"));
	assert_non_null(strstr(text, "root '*Post*'"));
	free(text);

	text = render_root(c, "*post*", true);
	assert_non_null(strstr(text, "| post late"));
	assert_non_null(strstr(text, "| Post Processing"));
	free(text);

	/* ? is one character; [...] a class; [! a negated one. */
	text = render_root(c, "Bloom ?", false);
	assert_non_null(strstr(text, "| Bloom 3"));
	assert_null(strstr(text, "Bloom 12"));
	free(text);
	text = render_root(c, "Bloom [0-9][0-9]", false);
	assert_non_null(strstr(text, "| Bloom 12"));
	assert_null(strstr(text, "Bloom 3 "));
	free(text);
	text = render_root(c, "[!FPB]*", false);
	assert_non_null(strstr(text, "| Translucency"));
	assert_non_null(strstr(text, "| post late"));
	assert_null(strstr(text, "Frame"));
	free(text);
	/* Brackets and stars quoted, and a lone [ as itself. */
	text = render_root(c, "\\[x] marker\\*", false);
	assert_non_null(strstr(text, "| [x] marker*"));
	free(text);
	text = render_root(c, "[x*", false);
	assert_non_null(strstr(text, "| [x] marker*"));
	free(text);

	text = render_root(c, "Nothing*", false);
	assert_non_null(strstr(text, "No scope on this queue matches the root filter."));
	free(text);
	reader_free(c);
	free(m.data);
}

static void invalid_pattern(void **state)
{
	(void)state;
	struct report_settings s;
	char err[200];
	report_settings_init(&s);
	char *argv[] = { A("--root"), A("[z-a]") };
	struct option_table t = { report_options, report_option_count, &s };
	char *pos[2];
	int np;
	assert_int_equal(options_parse(&t, 1, 2, argv, false, pos, &np, err, sizeof(err)), 0);
	assert_int_equal(report_settings_prepare(&s, err, sizeof(err)), CRUMBS_ERROR_PATTERN);
	assert_non_null(strstr(err, "invalid root pattern '[z-a]'"));
	report_settings_release(&s);
}

/* --no-leaf: leaf rows go, their time and counts stay in the scope's
 * exclusive columns. */
static void leaf_folding(void **state)
{
	(void)state;
	static const struct scope_spec specs[] = { { "Pass", 0, 1000 } };
	struct membuf m;
	reader *c = tree_capture(&m, specs, 1, true);
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	s.percent = false;
	char *text = render(c, &s);
	assert_non_null(strstr(text, "Leaf Draw"));
	/* Pass's own 1000 ns, its draw's 500 ns apart. */
	assert_non_null(strstr(text, "|     0 |          0 |     0 |     0 | 0.001 ms |     1 |          0 |    10 |    30 | 0.002 ms |    Pass"));
	free(text);
	s.leaf = false;
	text = render(c, &s);
	assert_null(strstr(text, "Leaf Draw"));
	assert_non_null(strstr(text, "|     1 |          0 |    10 |    30 | 0.002 ms |     1 |          0 |    10 |    30 | 0.002 ms |    Pass"));
	assert_non_null(strstr(text, "leaf events folded into their scopes"));
	free(text);
	report_settings_release(&s);
	reader_free(c);
	free(m.data);
}

/* --by pipeline: draws, dispatches and ray tracing grouped by the text
 * after " · " in their names; other events run no pipeline. */
static void by_pipeline(void **state)
{
	(void)state;
	static const struct {
		uint8_t kind;
		const char *name;
		uint64_t ns;
	} leaves[] = {
		{ CRUMBS_EVENT_DRAW, "Draw 3 vertices \u00b7 Tonemap", 5000 },
		{ CRUMBS_EVENT_DISPATCH, "Dispatch 8x8x1 \u00b7 gblur 9c41", 30000 },
		{ CRUMBS_EVENT_DRAW, "Draw 6 vertices \u00b7 Tonemap", 2000 },
		{ CRUMBS_EVENT_COPY, "Copy buffer 4 KiB \u00b7 Staging", 90000 },
		{ CRUMBS_EVENT_DRAW, "Draw 3 vertices", 1000 },
		{ CRUMBS_EVENT_TRACE_RAYS, "TraceRays 8x8x1 \u00b7 A \u00b7 B", 4000 },
	};
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "Test GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	uint64_t t = T;
	crumbs_writer_calibration(w, g, T, T, 0);
	crumbs_writer_frame_begin(w, 7, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T, NULL, NULL);
	crumbs_writer_scope_begin(w, "Post", 0, t);
	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		struct crumbs_leaf_desc d = { leaves[i].kind, leaves[i].name, 1, 0, 1, 3, t, t + leaves[i].ns };
		if (leaves[i].kind != CRUMBS_EVENT_DRAW)
			d.draws = d.prims = d.verts = 0;
		if (leaves[i].kind == CRUMBS_EVENT_DISPATCH)
			d.dispatches = 1;
		crumbs_writer_leaf(w, &d);
		t += leaves[i].ns;
	}
	crumbs_writer_scope_end(w, t + 8000);
	crumbs_writer_submit_end(w, t + 8000);
	crumbs_writer_frame_end(w, t + 9000, 0, 0);
	reader *c = mem_read(&m, w);

	/* The pipeline of each event, as its name says. */
	const struct frame *f = next_frame(c);
	const struct node *post = f->queues[0].root->child;
	const char *name;
	uint32_t len;
	const struct node *n = post->child;
	assert_true(node_pipeline(n, &name, &len));
	assert_int_equal(len, strlen("Tonemap"));
	assert_memory_equal(name, "Tonemap", len);
	assert_false(node_pipeline(post, &name, &len));
	n = n->next->next->next;
	assert_false(node_pipeline(n, &name, &len)); /* a copy */
	assert_true(node_pipeline(n->next, &name, &len));
	assert_int_equal(len, 0);
	assert_true(node_pipeline(n->next->next, &name, &len));
	assert_int_equal(len, strlen("A \u00b7 B"));

	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	s.ascii_names = false;
	s.by = BY_PIPELINE;
	char *text = render(c, &s);
	assert_non_null(strstr(text, "by pipeline: 4 pipelines, 5 events, 0.042 ms"));
	/* The slowest first; the copy is in none. */
	const char *gblur = strstr(text, "| gblur 9c41 ");
	const char *tonemap = strstr(text, "| Tonemap ");
	const char *ab = strstr(text, "| A \u00b7 B ");
	const char *none = strstr(text, "| (no pipeline named) ");
	assert_true(gblur && tonemap && ab && none && gblur < tonemap && tonemap < ab && ab < none);
	assert_null(strstr(text, "Staging"));
	assert_non_null(strstr(text, "|     2 |     2 |          0 |     2 |"));
	assert_int_equal(check_widths(text, true), 1);
	free(text);
	/* --sort draws, --root, --threshold. */
	s.sort = SORT_DRAWS;
	s.threshold_pct = 3;
	text = render(c, &s);
	tonemap = strstr(text, "| Tonemap ");
	gblur = strstr(text, "| gblur 9c41 ");
	assert_true(tonemap && gblur && tonemap < gblur);
	assert_non_null(strstr(text, "threshold 3% (2 rows hidden)"));
	assert_non_null(strstr(text, "| 2 other pipelines "));
	free(text);
	report_settings_release(&s);
	report_settings_init(&s);
	s.by = BY_PIPELINE;
	s.ascii = true;
	s.roots = malloc(sizeof(*s.roots));
	s.roots[0] = strdup("Nothing");
	s.root_count = 1;
	text = render(c, &s);
	assert_non_null(strstr(text, "No draw or dispatch on this queue is in a scope that matches"));
	free(text);
	free(s.roots[0]);
	s.roots[0] = strdup("Po*");
	text = render(c, &s);
	assert_non_null(strstr(text, "root 'Po*' | by pipeline: 4 pipelines"));
	free(text);
	report_settings_release(&s);
	reader_free(c);
	free(m.data);
}

static void max_depth(void **state)
{
	(void)state;
	struct membuf m;
	reader *c = tree_capture(&m, nested, sizeof(nested) / sizeof(nested[0]), false);
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	s.max_depth = 2;
	char *text = render(c, &s);
	assert_non_null(strstr(text, "|       Post Processing"));
	assert_null(strstr(text, "Bloom 3"));
	assert_non_null(strstr(text, "max depth 2"));
	free(text);
	report_settings_release(&s);
	reader_free(c);
	free(m.data);
}

static void options(void **state)
{
	(void)state;
	struct report_settings s;
	char err[200];
	char *pos[16];
	int np;
	report_settings_init(&s);
	struct option_table t = { report_options, report_option_count, &s };

	char *ok[] = { A("file.crumbs"), A("--threshold=2.5"), A("-r"), A("A*"),
		       A("--root"), A("B*"), A("--sort"), A("prims"),
		       A("--frame"), A("last"), A("--no-leaf"), A("--"),
		       A("--not-an-option") };
	assert_int_equal(options_parse(&t, 1, 13, ok, false, pos, &np, err, sizeof(err)), 0);
	assert_int_equal(np, 2);
	assert_string_equal(pos[0], "file.crumbs");
	assert_string_equal(pos[1], "--not-an-option");
	assert_true(s.threshold_pct == 2.5);
	assert_int_equal(s.root_count, 2);
	assert_int_equal(s.sort, SORT_PRIMS);
	assert_int_equal(s.frames, FRAMES_LAST);
	assert_false(s.leaf);

	char *bad1[] = { A("--bogus") };
	assert_int_equal(options_parse(&t, 1, 1, bad1, false, pos, &np, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown option '--bogus'");
	char *bad2[] = { A("--threshold") };
	assert_int_equal(options_parse(&t, 1, 1, bad2, false, pos, &np, err, sizeof(err)), -1);
	assert_string_equal(err, "option '--threshold' needs a value (PCT)");
	char *bad3[] = { A("--threshold"), A("150") };
	assert_int_equal(options_parse(&t, 1, 2, bad3, false, pos, &np, err, sizeof(err)), -1);
	assert_string_equal(err, "option '--threshold': '150' is not a percentage from 0 to 100");
	char *bad4[] = { A("--sort"), A("size") };
	assert_int_equal(options_parse(&t, 1, 2, bad4, false, pos, &np, err, sizeof(err)), -1);
	char *bad5[] = { A("--frame"), A("-1") };
	assert_int_equal(options_parse(&t, 1, 2, bad5, false, pos, &np, err, sizeof(err)), -1);
	char *bad6[] = { A("--ascii=yes") };
	assert_int_equal(options_parse(&t, 1, 1, bad6, false, pos, &np, err, sizeof(err)), -1);
	assert_string_equal(err, "option '--ascii' takes no value");

	char *stop[] = { A("--ascii"), A("prog"), A("--ascii") };
	assert_int_equal(options_parse(&t, 1, 3, stop, true, pos, &np, err, sizeof(err)), 0);
	assert_int_equal(np, 2);
	assert_string_equal(pos[1], "--ascii");
	report_settings_release(&s);
}

/* Each kind of option sets its variable in the table's target, and a
 * refused value says what the option takes. */
struct kinds {
	bool flag, negated;
	uint64_t u64;
	unsigned uint;
	int integer;
	double real;
	char *string, *file;
	int choice;
	uint64_t first, last;
	bool frames_set;
	int calls;
};

static int count_call(void *target, const char *value, char *err, size_t n)
{
	(void)value, (void)err, (void)n;
	((struct kinds *)target)->calls++;
	return 0;
}

static const char *const kind_names[] = { "one", "two", "three", NULL };
static const int kind_values[] = { 10, 20, 30 };

#define KIND(field) offsetof(struct kinds, field)
static const struct option_spec kind_options[] = {
	{ "flag", 'f', NULL, "", OPT_FLAG, .offset = KIND(flag) },
	{ "no-negated", 0, NULL, "", OPT_NEGATED, .offset = KIND(negated) },
	{ "u64", 0, "N", "", OPT_U64, .offset = KIND(u64), .min = 1, .max = UINT64_MAX },
	{ "uint", 'u', "N", "", OPT_UINT, .offset = KIND(uint), .min = 2, .max = 9,
	  .what = "a count from 2 to 9" },
	{ "int", 0, "N", "", OPT_INT, .offset = KIND(integer), .min = 0, .max = 63 },
	{ "real", 0, "X", "", OPT_DOUBLE, .offset = KIND(real), .min = 0, .above_min = true,
	  .max = 10, .unit = "ms", .what = "a time in ms above 0 and at most 10" },
	{ "string", 0, "S", "", OPT_STRING, .offset = KIND(string) },
	{ "file", 0, "F", "", OPT_FILE, .offset = KIND(file) },
	{ "choice", 0, "C", "", OPT_CHOICE, .offset = KIND(choice), .names = kind_names,
	  .values = kind_values },
	{ "frames", 0, "A:B", "", OPT_FRAMES, .offset = KIND(first), .last_offset = KIND(last),
	  .set_offset = KIND(frames_set) },
	{ "call", 0, NULL, "", OPT_CALLBACK, .callback = count_call },
};

/* The message options_parse gives for argv, "" when it takes them. */
static const char *parse_kinds(struct kinds *k, char **argv, int argc, char *err, size_t n)
{
	struct option_table t = { kind_options, sizeof(kind_options) / sizeof(kind_options[0]), k };
	char *pos[16];
	int np;
	if (options_parse(&t, 1, argc, argv, false, pos, &np, err, n) == 0)
		snprintf(err, n, "%s", "");
	return err;
}

static void option_kinds(void **state)
{
	(void)state;
	struct kinds k = { .negated = true };
	char err[200];

	char *ok[] = { A("-f"), A("--no-negated"), A("--u64=18446744073709551615"), A("-u9"),
		       A("--int"), A("007"), A("--real"), A("2.5ms"), A("--string"), A("a"),
		       A("--string"), A(""), A("--file"), A("f"), A("--choice"), A("three"),
		       A("--frames"), A(":9"), A("--call"), A("--call") };
	assert_string_equal(parse_kinds(&k, ok, 20, err, sizeof(err)), "");
	assert_true(k.flag);
	assert_false(k.negated);
	assert_true(k.u64 == UINT64_MAX);
	assert_int_equal(k.uint, 9);
	assert_int_equal(k.integer, 7);
	assert_true(k.real == 2.5);
	assert_string_equal(k.string, "");
	assert_string_equal(k.file, "f");
	assert_int_equal(k.choice, 30);
	assert_true(k.frames_set && k.first == 0 && k.last == 9);
	assert_int_equal(k.calls, 2);

	static const struct {
		const char *option, *value, *message;
	} bad[] = {
		{ "--u64", "0", "option '--u64': '0' is not a number from 1 to 18446744073709551615" },
		{ "--u64", "18446744073709551616",
		  "option '--u64': '18446744073709551616' is not a number from 1 to 18446744073709551615" },
		{ "--uint", "1", "option '--uint': '1' is not a count from 2 to 9" },
		{ "--uint", "x", "option '--uint': 'x' is not a count from 2 to 9" },
		{ "--int", "-1", "option '--int': '-1' is not a number" },
		{ "--int", "64", "option '--int': '64' is not a number from 0 to 63" },
		{ "--int", "1 ", "option '--int': '1 ' is not a number from 0 to 63" },
		{ "--real", "0", "option '--real': '0' is not a time in ms above 0 and at most 10" },
		{ "--real", "11ms", "option '--real': '11ms' is not a time in ms above 0 and at most 10" },
		{ "--real", "1s", "option '--real': '1s' is not a time in ms above 0 and at most 10" },
		{ "--real", "nan", "option '--real': 'nan' is not a time in ms above 0 and at most 10" },
		{ "--real", "ms", "option '--real': 'ms' is not a time in ms above 0 and at most 10" },
		{ "--file", "", "option '--file': the file name is empty" },
		{ "--choice", "four", "option '--choice': 'four' is not one of one, two, three" },
		{ "--frames", "3:2", "option '--frames': '3:2' ends before it begins" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char option[32], value[32];
		snprintf(option, sizeof(option), "%s", bad[i].option);
		snprintf(value, sizeof(value), "%s", bad[i].value);
		char *argv[] = { option, value };
		assert_string_equal(parse_kinds(&k, argv, 2, err, sizeof(err)), bad[i].message);
	}
	free(k.string);
	free(k.file);
}

/* Short options bundle: each letter a flag but for the last, which may
 * take the rest of the argument or the next one as its value. */
static void option_bundles(void **state)
{
	(void)state;
	struct report_settings s;
	char err[200];
	char *pos[16];
	int np;
	report_settings_init(&s);
	struct option_table t = { report_options, report_option_count, &s };

	char *ok[] = { A("-ai"), A("-ud5"), A("-ag"), A("1"), A("-"), A("-iqCompute*") };
	assert_int_equal(options_parse(&t, 1, 6, ok, false, pos, &np, err, sizeof(err)), 0);
	assert_true(s.ascii); /* -a, -u, then -a again */
	assert_true(s.ignore_case);
	assert_int_equal(s.max_depth, 5);
	assert_int_equal(s.gpu, 1);
	assert_string_equal(s.queue, "Compute*");
	assert_int_equal(np, 1);
	assert_string_equal(pos[0], "-");

	char *bad1[] = { A("-aZ") };
	assert_int_equal(options_parse(&t, 1, 1, bad1, false, pos, &np, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown option '-Z' in '-aZ'");
	char *bad2[] = { A("-ad") };
	assert_int_equal(options_parse(&t, 1, 1, bad2, false, pos, &np, err, sizeof(err)), -1);
	assert_string_equal(err, "option '-d' needs a value (N)");
	char *bad3[] = { A("-adx") };
	assert_int_equal(options_parse(&t, 1, 1, bad3, false, pos, &np, err, sizeof(err)), -1);
	assert_string_equal(err, "option '-d': 'x' is not a number");
	char *bad4[] = { A("-Z") };
	assert_int_equal(options_parse(&t, 1, 1, bad4, false, pos, &np, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown option '-Z'");
	char *bad5[] = { A("-a\xc3\xa9") };
	assert_int_equal(options_parse(&t, 1, 1, bad5, false, pos, &np, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown option '-?' in '-a\xc3\xa9'");
	report_settings_release(&s);
}

/* The numbers every part reads from text. */
static void numbers(void **state)
{
	(void)state;
	uint64_t u = 0;
	double d = 0;
	char err[100];

	assert_string_equal(read_u64("42 rest", 100, &u), " rest");
	assert_true(u == 42);
	assert_null(read_u64("101", 100, &u));
	assert_null(read_u64(" 1", 100, &u));
	assert_null(read_u64("+1", 100, &u));
	assert_null(read_u64("18446744073709551616", UINT64_MAX, &u));
	assert_int_equal(parse_u64("18446744073709551615", UINT64_MAX, &u, err, sizeof(err)), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(parse_u64("", 9, &u, err, sizeof(err)), -1);
	assert_string_equal(err, "'' is not a number");
	assert_int_equal(parse_u64("10", 9, &u, err, sizeof(err)), -1);
	assert_string_equal(err, "'10' is not a number from 0 to 9");

	assert_string_equal(read_double("1.5x", &d), "x");
	assert_true(d == 1.5);
	assert_null(read_double("x", &d));
	assert_null(read_double("1e999", &d));
	assert_int_equal(parse_double("5%", "%", 0, 100, &d), 0);
	assert_true(d == 5);
	assert_int_equal(parse_double("5", "%", 0, 100, &d), 0);
	assert_int_equal(parse_double("5%%", "%", 0, 100, &d), -1);
	assert_int_equal(parse_double("inf", NULL, 0, INFINITY, &d), -1);
	assert_int_equal(parse_double("-1", NULL, 0, 100, &d), -1);
}

/* A queue that did nothing says so, unless asked to skip it. */
static void empty_queue(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	add_queue(w, g, CRUMBS_QUEUE_TRANSFER, 1.0f, 64);
	crumbs_writer_calibration(w, g, T, T, 0);
	crumbs_writer_frame_begin(w, 1, T);
	submit(w, q, T, T, NULL, NULL);
	crumbs_writer_submit_end(w, T + 10);
	crumbs_writer_frame_end(w, T + 100, 0, 0);
	reader *c = mem_read(&m, w);
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	char *text = render(c, &s);
	assert_non_null(strstr(text, "Transfer 0\n\nNo work on this queue in this frame."));
	free(text);
	s.empty_queues = false;
	text = render(c, &s);
	assert_null(strstr(text, "Transfer 0"));
	free(text);
	s.header = false;
	text = render(c, &s);
	assert_null(strstr(text, "GPU profile"));
	assert_non_null(strstr(text, "| Graphics 0"));
	free(text);
	report_settings_release(&s);
	reader_free(c);
	free(m.data);
}

/* A CPU thread's block: above the queues', its percentages of the CPU
 * frame time, no count columns, notes of open and unmatched scopes; left
 * out when a GPU or queue is chosen. */
static void cpu_thread_block(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	crumbs_writer_calibration(w, g, T, T, 0);
	crumbs_writer_frame_begin(w, 3, T);
	submit(w, q, T, T, NULL, NULL);
	crumbs_writer_submit_end(w, T + 10000);
	assert_int_equal(crumbs_writer_cpu_thread(w, 4242, "Render Thread"), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_begin(w, "Frame", 0, T + 100000), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_begin(w, "Cull", 1, T + 200000), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_end(w, T + 300000), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_thread(w, 7, NULL), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_end(w, T + 400000), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_begin(w, "Job", 0, T + 500000), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_end(w, T + 700000), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_thread(w, 9, "bad\nname"), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_begin(w, "x", 0, T + 800000), CRUMBS_OK);
	assert_int_equal(crumbs_writer_cpu_end(w, T + 900000), CRUMBS_OK);
	crumbs_writer_frame_end(w, T + 1000000, 0, 0);
	reader *c = mem_read(&m, w);
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	char *text = render(c, &s);
	const char *block = strstr(text, "CPU profile for frame 3 | thread 'Render Thread' (tid 4242)\n"
					 "CPU frame 1.000 ms | 2 scopes\n"
					 "percent of CPU frame 1.000 ms\n"
					 "note: 1 scope was still open at the frame end, closed there "
					 "(marked [open])\n");
	assert_non_null(block);
	/* Above the queue's block, and without its count columns. */
	const char *gpu = strstr(block, "GPU profile for frame 3");
	assert_non_null(gpu);
	assert_non_null(strstr(block, " Percent |"));
	const char *draws = strstr(block, "Draws");
	assert_true(draws && draws > gpu);
	assert_non_null(strstr(block, "| #######-  90.0% | 0.900 ms |    Frame [open]"));
	assert_non_null(strstr(block, "| =         10.0% | 0.100 ms |       Cull "));
	assert_non_null(strstr(block, "thread 'thread 7' (tid 7)\n"
				      "CPU frame 1.000 ms | 1 scope\n"
				      "percent of CPU frame 1.000 ms\n"
				      "note: 1 scope end had no begin on this thread in this frame\n"));
	/* A name's control characters would break the title's line. */
	assert_non_null(strstr(text, "| thread 'bad\\x0aname' (tid 9)\n"));
	free(text);
	s.gpu = 0;
	text = render(c, &s);
	assert_null(strstr(text, "CPU profile"));
	free(text);
	report_settings_release(&s);
	text = render_root(c, "Cull", false);
	assert_non_null(strstr(text, "| 0.100 ms | Cull "));
	assert_non_null(strstr(text, "thread 'thread 7' (tid 7)\nCPU frame 1.000 ms | 1 scope\n"
				     "percent of CPU frame 1.000 ms | root 'Cull'\n"
				     "note: 1 scope end had no begin on this thread in this frame\n"
				     "No scope on this thread matches the root filter.\n"));
	free(text);
	reader_free(c);
	free(m.data);
}

/*
 * The lines that end a 1 ms frame 5: the GPU busy for gpu_ns from its
 * begin, thread 1 'A' waiting wait_a ns ('Present'), thread 2 'B' two
 * waits, 'Fence' of wait_b / 3 and 'Present' of the rest; thread 1 ends
 * the frames with `frame_thread`.
 */
static char *verdict_of(uint64_t gpu_ns, uint64_t wait_a, uint64_t wait_b, bool frame_thread)
{
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	crumbs_writer_calibration(w, g, T, T, 0);
	crumbs_writer_frame_begin(w, 5, T);
	crumbs_writer_queue_ready(w, q, T);
	submit(w, q, T, T, NULL, NULL);
	crumbs_writer_submit_end(w, T + gpu_ns);
	crumbs_writer_cpu_thread(w, 1, "A");
	if (frame_thread)
		crumbs_writer_frame_thread(w, 1);
	crumbs_writer_cpu_begin(w, "Frame", 0, T);
	if (wait_a) {
		crumbs_writer_cpu_wait_begin(w, "Present", 1, T + 1000);
		crumbs_writer_cpu_end(w, T + 1000 + wait_a);
	}
	crumbs_writer_cpu_end(w, T + 999000);
	crumbs_writer_cpu_thread(w, 2, "B");
	if (wait_b) {
		crumbs_writer_cpu_wait_begin(w, "Fence", 0, T);
		/* Inside a wait, a wait adds nothing. */
		crumbs_writer_cpu_wait_begin(w, "Inner", 0, T + 1);
		crumbs_writer_cpu_end(w, T + 2);
		crumbs_writer_cpu_end(w, T + wait_b / 3);
		crumbs_writer_cpu_wait_begin(w, "Present", 0, T + wait_b / 3);
		crumbs_writer_cpu_end(w, T + wait_b);
	}
	crumbs_writer_frame_end(w, T + 1000000, 0, 0);
	reader *c = mem_read(&m, w);
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	char *text = render(c, &s);
	report_settings_release(&s);
	reader_free(c);
	free(m.data);
	char *last = strstr(text, "Frame 5 | CPU frame");
	assert_non_null(last);
	memmove(text, last, strlen(last) + 1);
	return text;
}

static void expect_verdict(char *text, const char *want)
{
	if (strcmp(text, want) != 0)
		fail_msg("expected\n%s\ngot\n%s", want, text);
	free(text);
}

/* What bounded a frame: the frame thread's waits against a tenth of the
 * CPU frame time, else the GPU's idle time; without a frame thread, the
 * thread that waited most. */
static void frame_verdict(void **state)
{
	(void)state;
	expect_verdict(verdict_of(950000, 50000, 400000, true),
		       "Frame 5 | CPU frame 1.000 ms | GPU frame 0.950 ms\n"
		       "balanced: the CPU waited 0.050 ms on the GPU and the GPU idled 0.050 ms, "
		       "each less than a tenth of 1.000 ms\n\n");
	expect_verdict(verdict_of(950000, 100000, 0, true),
		       "Frame 5 | CPU frame 1.000 ms | GPU frame 0.950 ms\n"
		       "GPU-bound: the CPU waited 0.100 ms of 1.000 ms on the GPU ('Present')\n\n");
	expect_verdict(verdict_of(950000, 99999, 0, true),
		       "Frame 5 | CPU frame 1.000 ms | GPU frame 0.950 ms\n"
		       "balanced: the CPU waited 0.100 ms on the GPU and the GPU idled 0.050 ms, "
		       "each less than a tenth of 1.000 ms\n\n");
	expect_verdict(verdict_of(900000, 0, 0, true),
		       "Frame 5 | CPU frame 1.000 ms | GPU frame 0.900 ms\n"
		       "CPU-bound: the GPU idled 0.100 ms of 1.000 ms waiting for submissions\n\n");
	expect_verdict(verdict_of(950000, 100000, 600000, false),
		       "Frame 5 | CPU frame 1.000 ms | GPU frame 0.950 ms\n"
		       "GPU-bound: the CPU waited 0.600 ms of 1.000 ms on the GPU on thread 'B' "
		       "('Present', 'Fence')\n\n");
}

/* A timeline's block: after the threads', its tasks and their states,
 * those begun earlier and still running marked, and the dependencies that
 * were not respected. */
static void timeline_block(void **state)
{
	(void)state;
	struct membuf m;
	crumbs_writer *w = mem_writer(&m, 0);
	uint32_t g = add_gpu(w, "GPU");
	uint32_t q = add_queue(w, g, CRUMBS_QUEUE_GRAPHICS, 1.0f, 64);
	crumbs_writer_calibration(w, g, T, T, 0);
	crumbs_writer_frame_begin(w, 3, T);
	submit(w, q, T, T, NULL, NULL);
	crumbs_writer_submit_end(w, T + 10000);
	crumbs_writer_task_begin(w, 1, "Jobs", "Cull", NULL, 0, T + 100000);
	crumbs_writer_task_end(w, 1, T + 400000);
	crumbs_writer_task_begin(w, 2, "Jobs", "Shade", "Waiting", 0, T + 100000);
	crumbs_writer_task_depend(w, 2, "Executing", 1, T + 100000);
	crumbs_writer_task_state(w, 2, "Executing", T + 250000);
	crumbs_writer_task_begin(w, 3, "Jobs", "Load", NULL, 1, T - 5000);
	crumbs_writer_task_depend(w, 3, "Executing", 2, T);
	crumbs_writer_task_end(w, 9, T); /* not running: left out */
	crumbs_writer_frame_end(w, T + 1000000, 0, 0);
	reader *c = mem_read(&m, w);
	struct report_settings s;
	report_settings_init(&s);
	s.ascii = true;
	char *text = render(c, &s);
	const char *block = strstr(text, "CPU profile for frame 3 | tasks on timeline 'Jobs'\n"
					 "CPU frame 1.000 ms | 3 tasks\n"
					 "percent of CPU frame 1.000 ms\n"
					 "note: 1 task was begun before the frame, shown from its begin "
					 "(marked [earlier])\n"
					 "note: 2 tasks were still running at the frame end, shown to "
					 "there (marked [open])\n");
	if (!block)
		fail_msg("%s", text);
	assert_non_null(strstr(block, "| 0.000 ms | ##-       30.0% | 0.300 ms |    Cull "));
	assert_non_null(strstr(block, "| 0.150 ms |       Waiting "));
	assert_non_null(strstr(block, "|    Shade [open] "));
	assert_non_null(strstr(block, "|       Executing [open] "));
	assert_non_null(strstr(block, "|    Load [earlier] [open] "));
	assert_non_null(strstr(block, "+\ndependency not respected: 'Shade' entered 'Executing' "
				      "0.150 ms before 'Cull' ended\n"
				      "dependency not respected: 'Load' entered 'Executing' while "
				      "'Shade' ran, which had not ended by the frame end\n\n"));
	assert_non_null(strstr(block, "\nFrame 3 | CPU frame 1.000 ms | GPU frame 0.010 ms\n"
				      "note: 1 task record named a task that was not running, or "
				      "began one again; it was left out\n\n"));
	free(text);
	s.gpu = 0;
	text = render(c, &s);
	assert_null(strstr(text, "CPU profile"));
	assert_null(strstr(text, "Frame 3 |"));
	free(text);
	report_settings_release(&s);
	reader_free(c);
	free(m.data);
}


/* How many times `title` is a column's title in the first line of titles. */
static int title_count(const char *text, const char *title)
{
	const char *line = strstr(text, "| Events");
	if (!line)
		line = strstr(text, "│ Events");
	assert_non_null(line);
	const char *start = line;
	while (start > text && start[-1] != '\n')
		start--;
	int count = 0;
	size_t n = strlen(title);
	for (const char *p = start; p < line; p++)
		if (strncmp(p, title, n) == 0 && p[n] == ' ' && p[-1] == ' ')
			count++;
	return count;
}

/* The widest line of the tables in text, in cells. */
static size_t table_width(const char *text)
{
	size_t widest = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (*p == '|' || *p == '+' || strncmp(p, "│", 3) == 0 || strncmp(p, "┌", 3) == 0) {
			size_t w = text_width(p, len);
			widest = w > widest ? w : widest;
		}
		p += len + (nl ? 1 : 0);
	}
	return widest;
}

/*
 * Narrowed a cell at a time, the table leaves its columns out in one
 * order: Verts, Prims, Dispatches, Draws (Exclusive before Inclusive),
 * then the Percent bars; never the times. Then the names are cut, their
 * indentation kept, and below the least it can take it stays there.
 */
static void fit_order(void **state)
{
	(void)state;
	static const char *const titles[] = { "Verts", "Prims", "Dispatches", "Draws", "Percent" };
	static const char *const expected[] = { "Verts", "Verts", "Prims", "Prims", "Dispatches",
						"Dispatches", "Draws", "Draws", "Percent", "Percent" };
	struct membuf m;
	reader *c = tree_capture(&m, scripts, sizeof(scripts) / sizeof(scripts[0]), true);
	for (int ascii = 0; ascii < 2; ascii++) {
		struct report_settings s;
		report_settings_init(&s);
		s.ascii = s.ascii_names = ascii;
		char *text = render(c, &s);
		size_t natural = table_width(text);
		int before[5];
		for (int k = 0; k < 5; k++)
			before[k] = title_count(text, titles[k]);
		assert_int_equal(before[0], 2);
		free(text);
		size_t dropped = 0, least = natural;
		for (unsigned w = (unsigned)natural + 5; w >= 10; w--) {
			s.width = w;
			text = render(c, &s);
			assert_int_equal(check_widths(text, ascii), 1);
			size_t tw = table_width(text);
			if (tw > w)
				assert_int_equal(tw, least); /* at its least */
			least = tw < least ? tw : least;
			assert_int_equal(title_count(text, "Time"), 2);
			for (int k = 0; k < 5; k++) {
				int now = title_count(text, titles[k]);
				assert_true(now == before[k] || now == before[k] - 1);
				if (now < before[k]) {
					assert_true(dropped < 10);
					assert_string_equal(titles[k], expected[dropped]);
					dropped++;
				}
				before[k] = now;
			}
			if (w == 40) {
				/* Names cut, the tree's indentation kept. */
				const char *e = ascii ? "..." : "…";
				char deep[64];
				snprintf(deep, sizeof(deep), "         %s%s", ascii ? "\\" : "半", e);
				assert_non_null(strstr(text, e));
				assert_non_null(strstr(text, deep));
			}
			free(text);
		}
		assert_int_equal(dropped, 10);
		report_settings_release(&s);
	}
	reader_free(c);
	free(m.data);
}

/* Names escaped: controls in both modes, all past ASCII in ASCII mode. */
static void escaped_names(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		bool ascii;
		const char *out;
	} cases[] = {
		{ "caf\xc3\xa9", true, "caf\\u00e9" },
		{ "caf\xc3\xa9", false, "caf\xc3\xa9" },
		{ "\xf0\x9f\x98\x80!", true, "\\U0001f600!" },
		{ "a\tb\x7f" "c", false, "a\\x09b\\x7fc" },
		{ "c1\xc2\x85", false, "c1\\u0085" },
		{ "bad\xff\xc3", false, "bad\\xff\\xc3" },
		{ "rtl\xe2\x80\xae" "x", false, "rtl\\u202ex" },
		{ "back\\slash", true, "back\\slash" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbuf b = { 0 };
		utf8_escape(&b, cases[i].in, strlen(cases[i].in), cases[i].ascii);
		assert_string_equal(b.data, cases[i].out);
		if (cases[i].ascii)
			for (size_t k = 0; k < b.len; k++)
				assert_true((unsigned char)b.data[k] >= 0x20 &&
					    (unsigned char)b.data[k] < 0x7f);
		sbuf_release(&b);
	}
}

/* Width, colour and pager chosen as git chooses them. */
static void terminal_choices(void **state)
{
	(void)state;
	struct term_options o = { 0 };
	assert_int_equal(term_width(&o, 0, NULL), 0);
	assert_int_equal(term_width(&o, 0, "60"), 60);
	assert_int_equal(term_width(&o, 0, "60x"), 0);
	assert_int_equal(term_width(&o, 0, ""), 0);
	assert_int_equal(term_width(&o, 0, "99999999999999999999"), 0);
	assert_int_equal(term_width(&o, 120, "60"), 120);
	o.wide = true;
	assert_int_equal(term_width(&o, 120, "60"), 0);
	o.width = 80;
	assert_int_equal(term_width(&o, 120, "60"), 80);

	assert_true(term_color(TERM_COLOR_AUTO, true, NULL, "xterm"));
	assert_true(term_color(TERM_COLOR_AUTO, true, "", "xterm"));
	assert_false(term_color(TERM_COLOR_AUTO, true, "1", "xterm"));
	assert_false(term_color(TERM_COLOR_AUTO, false, NULL, "xterm"));
	assert_false(term_color(TERM_COLOR_AUTO, true, NULL, "dumb"));
	assert_false(term_color(TERM_COLOR_AUTO, true, NULL, NULL));
	assert_true(term_color(TERM_COLOR_ALWAYS, false, "1", "dumb"));
	assert_false(term_color(TERM_COLOR_NEVER, true, NULL, "xterm"));

	assert_string_equal(term_pager("most", "more", "xterm"), "most");
	assert_string_equal(term_pager(NULL, "more", "xterm"), "more");
	assert_string_equal(term_pager(NULL, NULL, "xterm"), "less");
	assert_null(term_pager(NULL, NULL, "dumb"));
	assert_null(term_pager("", "more", "xterm"));
	assert_null(term_pager("cat", "more", "xterm"));
	assert_null(term_pager(NULL, "cat", "xterm"));

	/* Names are escaped past ASCII where the locale is not UTF-8. */
	char *saved = getenv("LC_ALL") ? strdup(getenv("LC_ALL")) : NULL;
	struct report_settings s;
	setenv("LC_ALL", "C", 1);
	report_settings_init(&s);
	assert_true(s.ascii && s.ascii_names);
	setenv("LC_ALL", "en_US.UTF-8", 1);
	report_settings_init(&s);
	assert_false(s.ascii || s.ascii_names);
	if (saved)
		setenv("LC_ALL", saved, 1);
	else
		unsetenv("LC_ALL");
	free(saved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(widths_in_every_script),
		cmocka_unit_test(ascii_mode_draws_only_ascii),
		cmocka_unit_test(bars),
		cmocka_unit_test(threshold_folds_siblings),
		cmocka_unit_test(sort_by_time),
		cmocka_unit_test(root_filter),
		cmocka_unit_test(invalid_pattern),
		cmocka_unit_test(leaf_folding),
		cmocka_unit_test(max_depth),
		cmocka_unit_test(by_pipeline),
		cmocka_unit_test(options),
		cmocka_unit_test(option_bundles),
		cmocka_unit_test(option_kinds),
		cmocka_unit_test(numbers),
		cmocka_unit_test(empty_queue),
		cmocka_unit_test(cpu_thread_block),
		cmocka_unit_test(frame_verdict),
		cmocka_unit_test(timeline_block),
		cmocka_unit_test(fit_order),
		cmocka_unit_test(escaped_names),
		cmocka_unit_test(terminal_choices),
	};
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
