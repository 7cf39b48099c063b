/*
 * cmds.h: the subcommands of `crumbs` and the helpers they share for
 * messages, exit codes and standard output. Only cmds/ prints or exits.
 */
#ifndef CRUMBS_CMDS_H
#define CRUMBS_CMDS_H

#include <stdbool.h>
#include <stddef.h>

#include "../report/report.h"

/* Exit codes. */
enum { EXIT_OK = 0, EXIT_FAILURE_ = 1, EXIT_USAGE = 2 };

int cmd_report(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_trigger(int argc, char **argv);
int cmd_capture(int argc, char **argv);

/* "crumbs: <message>" on standard error. */
__attribute__((format(printf, 1, 2)))
void cmd_error(const char *fmt, ...);

/* "crumbs <command>: <message>" and a pointer to --help; returns
 * EXIT_USAGE. */
__attribute__((format(printf, 2, 3)))
int cmd_usage_error(const char *command, const char *fmt, ...);

/*
 * Parses a command's options: its own table, then `extra` tables. Prints
 * usage errors itself. Returns -1 on an error (exit with EXIT_USAGE), else
 * the number of positional arguments stored in positional[] (room for
 * argc).
 */
int cmd_parse(const char *command, const struct option_table *tables, size_t count,
	      int argc, char **argv, bool stop_at_positional, char **positional);

/* Prints a command's help: its usage line, description and options. */
void cmd_help(const char *usage, const char *description,
	      const struct option_table *tables, size_t count);

/* Writes to standard output; false after a write error. */
int cmd_stdout_sink(void *user, const char *text, size_t len);

/* Flushes standard output; on a write error says so and returns
 * EXIT_FAILURE_, else `status`. */
int cmd_finish(int status);

/* Whether --gpu and --queue name something the capture has; says what
 * it has when not (the tables would be silently empty). */
bool cmd_check_selection(const char *path, const struct report_settings *s,
			 const struct capture_meta *meta);

/* Prints the tables of frame `number` of a capture (UINT64_MAX: its
 * first) with the settings; says what went wrong. Returns an exit status. */
int cmd_report_capture(const char *path, uint64_t number, struct report_settings *s);

/* A message for a capture that could not be read. */
void cmd_capture_error(const char *path, const char *text, bool frames_before);

#endif
