/* SPDX-License-Identifier: MIT */
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
int cmd_stats(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_plot(int argc, char **argv);

/*
 * The help's paragraph on memory, which the format's limits bound
 * (format/FORMAT.md, "Limits"; tests/cli/hostile-check.py holds the
 * commands to it): what reading a capture takes, and what the statistics
 * of crumbs stats and crumbs diff add.
 */
#define CMD_HELP_MEMORY \
	"Memory: reading takes at most about 512 MiB whatever the number of\n" \
	"threads, for a chunk decompresses to 64 MiB at most and a frame's\n" \
	"records, scopes and names are bounded (the format's limits); a capture\n" \
	"past them is refused as corrupt."
/* The help's line on `-`, read before CMD_HELP_MEMORY. */
#define CMD_HELP_STDIN \
	"A capture named '-' is standard input: a file redirected there is read in\n" \
	"place, a pipe is read whole into memory first (at most 2 GiB; ^C stops it).\n\n"
#define CMD_HELP_MEMORY_STATS \
	"\nThe statistics add about 2 KiB a row (a GPU, a queue, or a scope's path on\n" \
	"its queue) and 4 to 8 bytes a row for each frame it is in; reading threads\n" \
	"keep at most 256 MiB of rows more."
#define CMD_HELP_MEMORY_COUNTERS \
	"\n--counters adds about 1 KiB a scope path (6 KiB with 64 vendor counters)\n" \
	"and 8 to 16 bytes a frame for each statistic and vendor counter it has in\n" \
	"it, for at most 65536 paths of 64 MiB in all."

/*
 * The help's lines on the environment, which each command lists as it
 * reads it: the locale chooses the drawing, the terminal's variables the
 * pager, colour and width of what is shown on a terminal, CRUMBS_THREADS
 * the threads that read a run.
 */
#define CMD_ENV_LOCALE \
	"  LC_ALL, LC_CTYPE, LANG  the first set and not empty decides: one naming\n" \
	"                          UTF-8 draws with Unicode (--unicode), else ASCII\n"
#define CMD_ENV_TERMINAL \
	"  CRUMBS_PAGER, PAGER     the pager for output to a terminal (CRUMBS_PAGER\n" \
	"                          first; empty: none)\n" \
	"  NO_COLOR                set and not empty: no colour\n" \
	"  COLUMNS                 the terminal's width, in characters\n"
#define CMD_ENV_THREADS \
	"  CRUMBS_THREADS          threads that read a capture's frames (1 to 16;\n" \
	"                          default one per CPU)\n"

/* "frames A to B" of a run, "frame A" of a run of one, or "frames A to
 * the end" of an open one (last UINT64_MAX), into buf. */
void cmd_run_range(char *buf, size_t size, uint64_t first, uint64_t last);

/* "crumbs: <message>" on standard error: in red where standard error is
 * a terminal that takes colour (NO_COLOR, TERM; --color, once a command
 * has read it: cmd_terminal). */
__attribute__((format(printf, 1, 2)))
void cmd_error(const char *fmt, ...);
/* The same, never coloured: a line that says what was done or chosen
 * (a capture written, the frame shown of several), not what failed. */
__attribute__((format(printf, 1, 2)))
void cmd_note(const char *fmt, ...);

/* "crumbs <command>: <message>" and a pointer to --help; returns
 * EXIT_USAGE. */
__attribute__((format(printf, 2, 3)))
int cmd_usage_error(const char *command, const char *fmt, ...);

/* What a subcommand is, declared once: cmd_parse reads its arguments
 * and prints its help from it. */
struct cmd_spec {
	const char *name;                  /* as typed after `crumbs` */
	const char *usage;                 /* the help's usage line */
	const char *description;           /* the help's paragraph */
	const char *description_more;      /* its paragraphs after, NULL: none
					    * (a literal holds 4095 bytes) */
	const struct option_table *tables; /* listed after --help */
	size_t table_count;
	bool stop_at_positional;           /* the first positional argument
					    * ends the options */
	const char *environment;           /* the help's lines on the
					    * variables that change what it
					    * does (CMD_ENV_*); NULL: none */
};

/* A subcommand as cmds/main.c's table lists it. */
struct cmd_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;    /* its line in 'crumbs --help' */
};

/*
 * `crumbs help --man [COMMAND]` (crumbs(1), or crumbs-COMMAND(1)) and
 * `crumbs help --completion bash|zsh`, argv[0] being --man or
 * --completion: made from each command's spec and option tables, which
 * it reaches by running the command as for --help with a hook in
 * cmd_parse (manual.c). Returns an exit status.
 */
int cmd_manual(int argc, char **argv, const struct cmd_command *commands, size_t count,
	       const char *version);
/* In cmd_parse: hands the spec and its tables (--help first) to the hook
 * that cmd_manual set, and returns true; false when none is set. */
bool cmd_spec_hooked(const struct cmd_spec *spec, const struct option_table *tables,
		     size_t count);

/* A command's positional arguments, in order. */
struct cmd_positional {
	char **args; /* NULL-terminated; the strings are argv's */
	int count;
};

/*
 * Parses a command's arguments (argv[0] is its name) against --help, -h
 * and its tables, whose targets the options set. Returns true when the
 * command has work to do, with its positional arguments in *pos (free
 * with cmd_positional_release). Else it has printed what there was to
 * say and returns false, with nothing in *pos and the exit status in
 * *status: after the help EXIT_OK (EXIT_FAILURE_ if standard output
 * failed), after a usage error EXIT_USAGE, out of memory EXIT_FAILURE_.
 */
bool cmd_parse(const struct cmd_spec *spec, int argc, char **argv,
	       struct cmd_positional *pos, int *status);

/* The one capture file a command's positional arguments must be: its path,
 * or NULL with *status set to EXIT_USAGE after saying what is wrong. */
const char *cmd_one_capture(const char *command, const struct cmd_positional *pos,
			    int *status);

/* Frees what cmd_parse stored; a zeroed struct is left alone. */
void cmd_positional_release(struct cmd_positional *pos);

/* Writes to standard output: a report_sink's write; -1 after a write
 * error, else 0. */
int cmd_stdout_sink(void *user, const char *text, size_t len);

/* Before a command that prints tables writes: the width and colour of
 * s's tables (s may be NULL) from the options o, the terminal and the
 * environment, and where standard output is a terminal, the pager,
 * waited for at exit (util/term.c says which). Output to an -o file (to,
 * when given) is never paged, and coloured only when asked. */
struct cmd_output;
void cmd_terminal(const struct term_options *o, struct report_settings *s,
		  const struct cmd_output *to);
/* For the commands that print tables after a program's own output
 * (capture, trigger): --width, --wide and --color, into out (room for
 * 3); returns how many. cmd_terminal_tables then sets s's width and
 * colour from them (s->term), with no pager, which would take the
 * program's output too. */
size_t cmd_terminal_options(struct option_spec *out);
/* The report's options but its --frame, which chooses among a file's
 * frames: for capture and trigger, whose file holds the one frame they
 * took (and -f is capture's own --frame). At most `room` into out;
 * returns how many. */
size_t cmd_report_options_one_frame(struct option_spec *out, size_t room);
void cmd_terminal_tables(struct report_settings *s);

/* errno_text in buf; returns buf. */
const char *cmd_strerror(int errnum, char *buf, size_t size);

/* Flushes standard output; on a write error says so and returns
 * EXIT_FAILURE_, else `status`. */
int cmd_finish(int status);

/* After writing a command's output failed (a report_sink returned -1):
 * says why, the write error on standard output or else memory that ran
 * out, and returns EXIT_FAILURE_. */
int cmd_print_failed(void);

/* Whether --gpu and --queue name something the capture has; says what
 * it has when not (the tables would be silently empty). */
bool cmd_check_selection(const char *path, const struct report_settings *s,
			 const struct capture_meta *meta);

/* Says that no scope `where` ("in the frames of 'x.crumbs'") matches s's
 * --root patterns. */
void cmd_no_root_match(const char *where, const struct report_settings *s);

/* Prints the tables of frame `number` of a capture (UINT64_MAX: its
 * first) with the settings; says what went wrong. Returns an exit status. */
int cmd_report_capture(const char *path, uint64_t number, struct report_settings *s);

/* Whether two paths name the same existing file (a hard link or another
 * spelling too): an output that would replace the capture it is made of. */
bool cmd_same_file(const char *a, const char *b);

/* The most of standard input cmd_open_capture reads into memory: a
 * capture piped in is read whole before it is read, for the reader
 * seeks; one larger is refused (a file named, or redirected with <, is
 * read in place, however large). */
#define CMD_STDIN_MAX ((size_t)2 << 30)

/* Whether path is `-`, standard input. */
bool cmd_is_stdin(const char *path);

/* Opens the capture at path, or standard input for `-` (a terminal
 * refused), into *out (the caller's, reader_free). Returns true, or false
 * after saying why. In input.c. */
bool cmd_open_capture(const char *path, reader **out);

/*
 * Where a command writes (output.c): standard output, or the -o file,
 * created at the first write under a temporary name beside its name and
 * renamed over it when closed whole (never through a link planted there).
 */
struct cmd_output {
	const char *path;    /* -o FILE; NULL or "-": standard output */
	struct file_out out;
	FILE *file;          /* open once written to */
	int error;           /* errno of the first failure */
	bool said;           /* that failure was said */
};

/* The -o option, whose target is a `char *` (owned, NULL: none), of the
 * commands that write to standard output or a file. */
extern const struct option_spec cmd_output_option;

/* Checks -o before anything is read: `-` is standard output, and a file
 * that is one of the inputs (paths, `-` for standard input) is a usage
 * error, said, *status set. */
bool cmd_output_check(const char *command, struct cmd_output *o, const char *const *inputs,
		      size_t input_count, int *status);
/* A report_sink's write to o (the file created at the first). */
int cmd_output_write(void *user, const char *text, size_t len);
/* Creates the -o file now (the write does it otherwise); false after
 * saying why. */
bool cmd_output_open(struct cmd_output *o);
/* Ends the output: the file put in place when `keep` and nothing failed,
 * else removed (what was at its name stays); standard output flushed.
 * Says what failed; returns EXIT_FAILURE_ then, else status. */
int cmd_output_close(struct cmd_output *o, int status, bool keep);

/* A message for a capture that could not be read. */
void cmd_capture_error(const char *path, const char *text, bool frames_before);

/* The frames of a capture numbered first to last, in order: frame numbers
 * increase through a capture, so cmd_range_start starts at `first` when it
 * is one of its frames (at the start otherwise), and cmd_range_next skips
 * those before it and gives *out NULL past `last` or at the end. */
enum crumbs_result cmd_range_start(reader *c, uint64_t first, struct analyze_error *err);
enum crumbs_result cmd_range_next(reader *c, uint64_t first, uint64_t last,
				  const struct frame **out, struct analyze_error *err);

/* Says that a capture read whole holds none of the frames asked for:
 * first to last when `frames_set` (last UINT64_MAX: from first on). */
void cmd_no_frames(const char *path, bool frames_set, uint64_t first, uint64_t last);

/* The most threads cmd_stats_load reads with. */
#define CMD_MAX_THREADS 16

/* The threads to read with that CRUMBS_THREADS's value v says (NULL or
 * empty: `cpus`), from 1 to CMD_MAX_THREADS (0 is 1, more is the most):
 * 0, or -1 when v is not a number, with `cpus` (at least 1) in *threads.
 * Any text is safe. */
int cmd_threads_parse(const char *v, unsigned cpus, unsigned *threads);

/* How cmd_stats_load went. */
enum cmd_load {
	CMD_LOAD_OK,
	CMD_LOAD_PARTIAL, /* damage after some frames: said, and the statistics
			   * are of the frames before it */
	CMD_LOAD_FAILED   /* said; nothing to show */
};

/* Reads and parses st's --budget file into *out (NULL without one).
 * Returns EXIT_OK, or after saying what was wrong EXIT_USAGE (unreadable
 * file, bad line) or EXIT_FAILURE_ (out of memory). */
int cmd_stats_budget(const struct stats_settings *st, struct stats_budget **out);
/* A usage error (its exit status) when st asks for statistics by pipeline
 * with --root or --max-depth, which choose scopes, for --cpu with --no-cpu,
 * or for --cpu with what chooses GPU work (--gpu, --queue, --by
 * pipeline); EXIT_OK otherwise. */
int cmd_stats_check_by(const char *name, const struct stats_settings *st);

/* Whether st's --root patterns (if any) select a row of s: a scope, CPU
 * scope, task or state. */
bool cmd_stats_root_found(const struct stats_settings *st, const stats *s);

/* --counters of command `name`: the pipeline statistics and vendor
 * counters of the frames of a capture (or standard input, `-`) that st
 * selects (--frames), read again as trees, into *r (the caller's to
 * release). Returns 0, or -1 after saying why. */
int cmd_counters_load(const char *name, const char *path, const struct stats_settings *st,
		      struct counter_runs *r);

/* Reads the frames of a capture that st selects (--frames, and --gpu and
 * --queue checked against it) into finished statistics, saying what went
 * wrong. *c and *s are the caller's to free, whatever it returns. */
enum cmd_load cmd_stats_load(const char *path, const struct stats_settings *st, reader **c,
			    stats **s);

/* Prints the statistics of a run's capture file with the settings (st's
 * --root and --gpu prepared), and, when it lacks some of the frames first
 * to last it was asked to (last UINT64_MAX: no end was asked for), says
 * which it holds and why the others are missing: dropped by the
 * recorder, or after the run's end, `ended` saying how the program ended
 * (NULL: not seen). Returns an exit status. In capture.c, which records
 * runs. */
int cmd_stats_run(const char *path, uint64_t first, uint64_t last, struct stats_settings *st,
		  const char *ended);

#endif
