/* SPDX-License-Identifier: MIT */
/*
 * main.c: the `crumbs` program: finds the subcommand in one table and runs
 * it; holds the helpers every subcommand uses to read its arguments, print
 * its help and report errors.
 */
#include "cmds.h"
#include "version.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static const struct cmd_command commands[] = {
	{ "report", cmd_report, "print the profilegpu tables of a capture" },
	{ "info", cmd_info, "describe a capture: devices, queues, frames, sizes, frame times" },
	{ "stats", cmd_stats, "statistics over a run's frames: percentiles, spikes, budgets" },
	{ "diff", cmd_diff, "compare two runs row by row; exit 1 when something regressed" },
	{ "export", cmd_export, "write frames as a Perfetto or Chrome trace, or as folded stacks" },
	{ "plot", cmd_plot, "draw a frame's timeline or a run's frame times as an SVG picture" },
	{ "capture", cmd_capture, "run a program under the crumbs layer, capture a frame, print its tables" },
	{ "trigger", cmd_trigger, "capture the next frame of a running program and print its tables" },
};

/* A message on standard error as valid UTF-8 without control
 * characters, each of which, and each byte that begins no character,
 * becomes '?': it may quote an argument, a pattern or a file name, whose
 * bytes come from anyone and would otherwise reach the terminal. */
__attribute__((format(printf, 1, 0)))
static void put_message(const char *fmt, va_list ap)
{
	char small[512], *big = NULL;
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	size_t len = n > 0 ? (size_t)n : 0;
	char *text = small;
	if (len >= sizeof(small) && (big = malloc(len + 1)))
		vsnprintf(text = big, len + 1, fmt, again);
	else if (len >= sizeof(small))
		len = sizeof(small) - 1; /* no memory for more: its start */
	va_end(again);
	utf8_clean(text, len + 1, text, len, '?', "?");
	fputs(text, stderr);
	free(big);
}

/* Whether errors are red: -1 until a command's --color says (auto: a
 * terminal's standard error). */
static int error_color = -1;

static bool errors_red(void)
{
	if (error_color < 0)
		error_color = term_color(TERM_COLOR_AUTO, isatty(STDERR_FILENO), getenv("NO_COLOR"),
					 getenv("TERM"));
	return error_color;
}

__attribute__((format(printf, 2, 0)))
static void say(bool red, const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs(red ? "\033[31mcrumbs: " : "crumbs: ", stderr);
	put_message(fmt, ap);
	fputs(red ? "\033[0m\n" : "\n", stderr);
}

void cmd_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(errors_red(), fmt, ap);
	va_end(ap);
}

void cmd_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(false, fmt, ap);
	va_end(ap);
}

int cmd_usage_error(const char *command, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "crumbs %s: ", command);
	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'crumbs %s --help'.\n", command);
	return EXIT_USAGE;
}

const char *cmd_one_capture(const char *command, const struct cmd_positional *pos,
			    int *status)
{
	if (pos->count == 1)
		return pos->args[0];
	*status = cmd_usage_error(command, pos->count == 0 ? "expected a capture file" :
				  "expected one capture file, got %d arguments", pos->count);
	return NULL;
}

/* Its target is a bool. */
static const struct option_spec help_option = {
	"help", 'h', NULL, "show this help", OPT_FLAG, .offset = 0
};

static void print_help(const struct cmd_spec *spec, const struct option_table *tables,
		       size_t count)
{
	struct sbuf b = { 0 };
	options_help(tables, count, &b);
	printf("usage: %s\n\n%s%s%s\n\noptions:\n%s", spec->usage, spec->description,
	       spec->description_more ? "\n\n" : "",
	       spec->description_more ? spec->description_more : "", b.data ? b.data : "");
	if (spec->environment)
		printf("\nenvironment:\n%s", spec->environment);
	sbuf_release(&b);
}

bool cmd_parse(const struct cmd_spec *spec, int argc, char **argv,
	       struct cmd_positional *pos, int *status)
{
	bool help = false;
	bool run = false;
	char err[300];
	/* --help first, then the command's own tables, in the help too. */
	struct option_table *tables = calloc(spec->table_count + 1, sizeof(*tables));

	pos->args = calloc((size_t)argc + 1, sizeof(*pos->args));
	pos->count = 0;
	if (!tables || !pos->args) {
		cmd_error("out of memory");
		*status = EXIT_FAILURE_;
		goto out;
	}
	tables[0] = (struct option_table){ &help_option, 1, &help };
	for (size_t t = 0; t < spec->table_count; t++)
		tables[t + 1] = spec->tables[t];
	if (cmd_spec_hooked(spec, tables, spec->table_count + 1)) {
		*status = EXIT_OK;
		goto out;
	}
	if (options_parse(tables, spec->table_count + 1, argc - 1, argv + 1,
			  spec->stop_at_positional, pos->args, &pos->count,
			  err, sizeof(err)) != 0) {
		*status = cmd_usage_error(spec->name, "%s", err);
		goto out;
	}
	if (help) {
		print_help(spec, tables, spec->table_count + 1);
		*status = cmd_finish(EXIT_OK);
		goto out;
	}
	/* --color is for the errors from here on too, such as a capture
	 * that cannot be read before any table is printed. */
	for (size_t t = 1; t <= spec->table_count; t++)
		for (size_t i = 0; i < tables[t].count; i++)
			if (strcmp(tables[t].specs[i].name, "color") == 0)
				error_color = term_color(*(const int *)(const void *)
						((const char *)tables[t].target + tables[t].specs[i].offset),
					isatty(STDERR_FILENO), getenv("NO_COLOR"), getenv("TERM"));
	run = true;
out:
	free(tables);
	if (!run)
		cmd_positional_release(pos);
	return run;
}

void cmd_positional_release(struct cmd_positional *pos)
{
	free(pos->args);
	pos->args = NULL;
	pos->count = 0;
}

int cmd_stdout_sink(void *user, const char *text, size_t len)
{
	(void)user;
	return fwrite(text, 1, len, stdout) == len || term_pager_quit() ? 0 : -1;
}

void cmd_terminal(const struct term_options *o, struct report_settings *s,
		  const struct cmd_output *to)
{
	/* An -o file is no terminal, whatever standard output is. */
	bool file = to && to->path; /* cmd_output_check made `-` NULL */
	bool tty = !file && isatty(STDOUT_FILENO);
	if (s) {
		s->width = term_width(o, tty ? term_columns(STDOUT_FILENO) : 0, getenv("COLUMNS"));
		s->color = term_color(o->color, tty, getenv("NO_COLOR"), getenv("TERM"));
	}
	if (tty && !o->no_pager &&
	    term_pager_start(term_pager(getenv("CRUMBS_PAGER"), getenv("PAGER"), getenv("TERM"))))
		atexit(term_pager_wait);
}

size_t cmd_terminal_options(struct option_spec *out)
{
	static const struct option_borrowed which[] = { { "width", NULL },
							{ "wide", NULL },
							{ "color", NULL } };
	return options_borrow(report_terminal_options, report_terminal_option_count, which, 3,
			      out);
}

size_t cmd_report_options_one_frame(struct option_spec *out, size_t room)
{
	size_t n = 0;
	for (size_t i = 0; i < report_option_count && n < room; i++)
		if (strcmp(report_options[i].name, "frame") != 0)
			out[n++] = report_options[i];
	return n;
}

void cmd_terminal_tables(struct report_settings *s)
{
	s->term.no_pager = true;
	cmd_terminal(&s->term, s, NULL);
}

const char *cmd_strerror(int errnum, char *buf, size_t size)
{
	errno_text(errnum, buf, size);
	return buf;
}

int cmd_finish(int status)
{
	/* A reader who quit the pager early is no error. */
	if ((fflush(stdout) != 0 || ferror(stdout)) && !term_pager_quit()) {
		char why[128];
		cmd_error("cannot write to standard output: %s", cmd_strerror(errno, why, sizeof(why)));
		return EXIT_FAILURE_;
	}
	return status;
}

int cmd_print_failed(void)
{
	int status = cmd_finish(EXIT_FAILURE_);
	if (!ferror(stdout))
		cmd_error("out of memory");
	return status;
}

bool cmd_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	/* `-` is standard input, which may be a file too. */
	return (strcmp(a, "-") == 0 ? fstat(0, &sa) : stat(a, &sa)) == 0 &&
	       (strcmp(b, "-") == 0 ? fstat(0, &sb) : stat(b, &sb)) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

enum crumbs_result cmd_range_start(reader *c, uint64_t first, struct analyze_error *err)
{
	if (first > 0 && reader_seek_frame(c, first, err) != CRUMBS_OK)
		return reader_rewind(c, err);
	return CRUMBS_OK;
}

enum crumbs_result cmd_range_next(reader *c, uint64_t first, uint64_t last,
				  const struct frame **out, struct analyze_error *err)
{
	enum crumbs_result r;
	do {
		if ((r = reader_next_frame(c, out, err)) != CRUMBS_OK || !*out)
			return r;
	} while ((*out)->number < first);
	if ((*out)->number > last)
		*out = NULL;
	return CRUMBS_OK;
}

void cmd_no_frames(const char *path, bool frames_set, uint64_t first, uint64_t last)
{
	if (frames_set && last == UINT64_MAX)
		cmd_error("'%s' holds no frames numbered %llu or above", path,
			  (unsigned long long)first);
	else if (frames_set)
		cmd_error("'%s' holds no frames numbered %llu to %llu", path,
			  (unsigned long long)first, (unsigned long long)last);
	else
		cmd_error("'%s' holds no frames", path);
}

void cmd_capture_error(const char *path, const char *text, bool frames_before)
{
	cmd_error("cannot read '%s': %s%s", path, text,
		  frames_before ? " (the frames before it are intact)" : "");
}

static void usage(FILE *to)
{
	fprintf(to, "usage: crumbs COMMAND [ARGS]\n"
		    "       crumbs --version\n\n"
		    "crumbs captures GPU frames of Vulkan programs and prints their timing tables.\n\n"
		    "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(to, "  %-8s  %s\n", commands[i].name, commands[i].help);
	fprintf(to, "\noptions:\n"
		    "  -h, --help     show this help\n"
		    "      --version  print the version of crumbs and of the capture format it writes\n"
		    "\n'crumbs COMMAND --help' (or 'crumbs help COMMAND') describes a command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		/* For packagers, not in the help: the pages and scripts the
		 * build installs. */
		if (strcmp(name, "help") == 0 && argc > 2 &&
		    (strcmp(argv[2], "--man") == 0 || strcmp(argv[2], "--completion") == 0))
			return cmd_manual(argc - 2, argv + 2, commands,
					  sizeof(commands) / sizeof(commands[0]), CRUMBS_VERSION_SHORT);
		if (strcmp(name, "help") == 0 && argc > 2) {
			for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
				if (strcmp(argv[2], commands[i].name) == 0) {
					static char help_flag[] = "--help";
					char *args[] = { argv[2], help_flag, NULL };
					return commands[i].run(2, args);
				}
			cmd_error("'%s' is not a crumbs command; see 'crumbs --help'", argv[2]);
			return EXIT_USAGE;
		}
		usage(stdout);
		return cmd_finish(EXIT_OK);
	}
	if (strcmp(name, "--version") == 0) {
		printf("crumbs %s (capture format %d.%d)\n", CRUMBS_VERSION_SHORT, CRUMBS_FORMAT_MAJOR,
		       CRUMBS_FORMAT_MINOR);
		return cmd_finish(EXIT_OK);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	cmd_error("'%s' is not a crumbs command; see 'crumbs --help'", name);
	return EXIT_USAGE;
}
