/* SPDX-License-Identifier: MIT */
/*
 * profilegpu.c: the in-program tables: the settings the profilegpu
 * command and `crumbs trigger` give a capture's tables, its help, and the
 * tables of a written capture, read back for the program's log. The one
 * file of the recorder that uses analyze/ and report/.
 */
#include "capture_internal.h"
#include "../analyze/analyze.h"
#include "../report/report.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct profilegpu_settings {
	struct report_settings report;
};

bool profilegpu_settings_counters(const struct profilegpu_settings *p)
{
	return p && p->report.counters;
}

int profilegpu_settings_parse(const char *settings, struct profilegpu_settings **out, char *err,
			      size_t n)
{
	char line[TRIGGER_MAX_COMMAND];
	char *argv[256], *positional[256];
	int argc = 0, np = 0;

	*out = NULL;
	if (settings) {
		if (strlen(settings) >= sizeof(line)) {
			snprintf(err, n, "the settings are longer than %d bytes", TRIGGER_MAX_COMMAND - 1);
			return -1;
		}
		snprintf(line, sizeof(line), "%s", settings);
		argc = trigger_split(line, argv, 256);
		if (argc < 0) {
			snprintf(err, n, "cannot split '%s': unbalanced quotes or over 255 arguments",
				 settings);
			return -1;
		}
	}
	struct profilegpu_settings *p = malloc(sizeof(*p));
	if (!p) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	report_settings_init(&p->report);
	struct option_table t = { report_options, report_option_count, &p->report };
	if (options_parse(&t, 1, argc, argv, false, positional, &np, err, n) != 0 ||
	    (np > 0 && snprintf(err, n, "unexpected argument '%s'", positional[0]) > 0) ||
	    report_settings_prepare(&p->report, err, n) != CRUMBS_OK) {
		profilegpu_settings_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

void profilegpu_settings_free(struct profilegpu_settings *p)
{
	if (!p)
		return;
	report_settings_release(&p->report);
	free(p);
}

const struct report_settings *profilegpu_report_settings(const struct profilegpu_settings *p)
{
	return &p->report;
}

void profilegpu_help(crumbs_context *ctx)
{
	struct sbuf b = { 0 };
	struct option_table t = { report_options, report_option_count, NULL };
	sbuf_adds(&b, "profilegpu [settings]: capture the next frame and print its tables; "
		      "settings:\n");
	options_help(&t, 1, &b);
	ctx_log(ctx, CRUMBS_LOG_INFO, "%s", b.data ? b.data : "");
	sbuf_release(&b);
}

struct table_log {
	profilegpu_log_fn *log;
	void *user;
};

static int table_sink(void *user, const char *text, size_t len)
{
	struct table_log *t = user;
	/* One message per block, without its last line break. */
	while (len > 0 && text[len - 1] == '\n')
		len--;
	t->log(t->user, CRUMBS_LOG_INFO, text, len);
	return 0;
}

void profilegpu_print(const struct profilegpu_settings *p, const char *path,
		      profilegpu_log_fn *log, void *user)
{
	reader *c = NULL;
	struct analyze_error err;
	const struct frame *f;
	struct table_log t = { log, user };
	struct report_sink sink = { table_sink, &t };
	struct report_settings defaults;
	char msg[PATH_MAX + 400];

	report_settings_init(&defaults);
	/* A copy that borrows what it points to, to ask for whole tables. */
	struct report_settings settings = p ? p->report : defaults;
	settings.whole_tables = true;
	if (reader_open_file(path, &c, &err) != CRUMBS_OK ||
	    reader_next_frame(c, &f, &err) != CRUMBS_OK || !f) {
		snprintf(msg, sizeof(msg), "cannot read back '%s': %s", path, err.text);
		log(user, CRUMBS_LOG_ERROR, msg, strlen(msg));
	} else if (report_frame(&settings, reader_meta(c), f, &sink) != 0) {
		snprintf(msg, sizeof(msg), "cannot print the tables of '%s'", path);
		log(user, CRUMBS_LOG_ERROR, msg, strlen(msg));
	}
	reader_free(c);
	report_settings_release(&defaults);
}
