/* SPDX-License-Identifier: MIT */
/*
 * capture.c: `crumbs capture [options] -- PROGRAM [ARGS]`: runs a program
 * with the crumbs layer (VK_LAYER_CRUMBS_capture) enabled, captures one of
 * its frames (and prints its tables) or records a run of frames (and
 * prints their statistics), and returns the program's exit status.
 */
#include "cmds.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LAYER_NAME "VK_LAYER_CRUMBS_capture"
#define MANIFEST "VkLayer_crumbs.json"
#define DEFAULT_FRAME 10
#define DEFAULT_DETAIL 1
#define MAX_DETAIL 3
/* Longer windows make capture frames too large to be useful. */
#define MAX_WINDOW_MS 10000
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

/* --frame not given: DEFAULT_FRAME. */
#define NO_FRAME UINT64_MAX

struct capture_args {
	bool on_trigger;
	uint64_t frame;     /* NO_FRAME until the options are checked */
	bool run;           /* --frames A:B, from the statistics' settings */
	uint64_t first;
	uint64_t last;      /* UINT64_MAX: until the program exits */
	int detail;         /* -1 until the options are checked */
	char *output;       /* owned; NULL: the layer's names, here */
	unsigned window_ms; /* 0: frames end at presents or fences */
	const char *perf_counters; /* --counters=LIST's LIST (in argv); NULL: none */
	bool counters;      /* --counters: a run counts pipeline statistics */
};

#define AT(field) offsetof(struct capture_args, field)

static const struct option_spec own_options[] = {
	{ "frame", 'f', "N", "capture frame N, counted from 0 (default 10, after warm-up)",
	  OPT_U64, .offset = AT(frame), .min = 0, .max = 1ull << 48, .what = "a frame number" },
	{ "output", 'o', "FILE", "write the capture to FILE (default PROGRAM-frame-N.crumbs, or "
	  "PROGRAM-run-A.crumbs)", OPT_FILE, .offset = AT(output) },
	{ "on-trigger", 0, NULL, "capture when `crumbs trigger PID` asks, not at a frame",
	  OPT_FLAG, .offset = AT(on_trigger) },
	{ "window", 0, "MS", "frame N is the Nth window of MS milliseconds (1 to " TEXT(MAX_WINDOW_MS) ") from the "
	  "first submission", OPT_UINT, .offset = AT(window_ms), .min = 1, .max = MAX_WINDOW_MS,
	  .what = "a number of milliseconds from 1 to " TEXT(MAX_WINDOW_MS) },
};

static const struct option_spec run_options[] = {
	{ "detail", 0, "N", "with --frames: record scopes of detail levels 0 to N (0 to 3, "
	  "default 1); leaf events only at 3", OPT_INT, .offset = AT(detail), .min = 0, .max = MAX_DETAIL,
	  .what = "a detail level from 0 to " TEXT(MAX_DETAIL) },
};

/* --frames is crumbs stats' option (A:B, A: or :B), with a help line of
 * ours. Returns how many options it put in *out (1, or 0 if stats had
 * none). */
static size_t frames_option(struct option_spec *out)
{
	static const struct option_borrowed frames = {
		"frames", "record frames A to B, inclusive (A: until the program exits), and print "
			  "their statistics"
	};
	return options_borrow(stats_options, stats_option_count, &frames, 1, out);
}

/* Room for the report's options here (cmd_report_options_one_frame). */
#define REPORT_OPTIONS_MAX 32

/* The folder of the layer's manifest: beside this program (the build
 * tree), or the installed ../share/vulkan/explicit_layer.d. */
static bool find_layer(char *dir, size_t size)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return false;
	exe[len] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	const char *tries[] = { "", "/../share/vulkan/explicit_layer.d" };
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof(path), "%s%s/" MANIFEST, exe, tries[i]);
		if (access(path, R_OK) == 0) {
			/* The folder: the path without its last part. */
			*strrchr(path, '/') = '\0';
			if (strlen(path) >= size)
				return false;
			memcpy(dir, path, strlen(path) + 1);
			return true;
		}
	}
	return false;
}

/* Sets name to value or, when it is set already, joins value to the
 * list it holds with `separator`: first or last. */
static int set_env(const char *name, const char *value, char separator, bool first)
{
	const char *old = getenv(name);
	if (!old || !*old)
		return setenv(name, value, 1);
	size_t n = strlen(old) + strlen(value) + 2;
	char *joined = malloc(n);
	if (!joined)
		return -1;
	if (first)
		snprintf(joined, n, "%s%c%s", value, separator, old);
	else
		snprintf(joined, n, "%s%c%s", old, separator, value);
	int r = setenv(name, joined, 1);
	free(joined);
	return r;
}

/* The program run, while crumbs waits for it. */
static volatile sig_atomic_t running_pid;

/* SIGTERM or SIGHUP to crumbs (a job's time limit, a closed terminal)
 * goes on to the program, which ends as it would alone; crumbs still takes
 * what it recorded. */
static void pass_on(int sig)
{
	if (running_pid > 0)
		kill((pid_t)running_pid, sig);
}

/* Runs the program and returns its exit status, as a shell reports it;
 * how it ended goes into `ended` ("'game' ended with exit status 3"). */
static int run(char **argv, char *ended, size_t size)
{
	snprintf(ended, size, "'%s' ended", argv[0]);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		cmd_error("cannot start '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "crumbs: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	/* A reader of crumbs' output that goes away (`| head`) makes its
	 * writes fail from here on instead of killing it before the run's
	 * file is moved where -o says. The program, forked before, keeps its
	 * own SIGPIPE. */
	struct sigaction no_pipe = { .sa_handler = SIG_IGN };
	sigemptyset(&no_pipe.sa_mask);
	sigaction(SIGPIPE, &no_pipe, NULL);
	/* ^C goes to the program; crumbs waits to report what it left. */
	struct sigaction ignore = { .sa_handler = SIG_IGN }, old_int, old_quit;
	struct sigaction forward = { .sa_handler = pass_on }, old_term, old_hup;
	sigemptyset(&ignore.sa_mask);
	sigemptyset(&forward.sa_mask);
	running_pid = (sig_atomic_t)pid;
	sigaction(SIGINT, &ignore, &old_int);
	sigaction(SIGQUIT, &ignore, &old_quit);
	sigaction(SIGTERM, &forward, &old_term);
	sigaction(SIGHUP, &forward, &old_hup);
	int status = 0;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	running_pid = 0;
	if (w < 0) {
		cmd_error("cannot wait for '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status))
			snprintf(ended, size, "'%s' ended with exit status %d", argv[0],
				 WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	if (WIFSIGNALED(status)) {
		cmd_error("'%s' was killed by signal %d", argv[0], WTERMSIG(status));
		snprintf(ended, size, "'%s' was killed by signal %d", argv[0], WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return 1;
}

/* The device a capture's file name says it came from: N of
 * "PROGRAM-deviceN-frame-F.crumbs" or "PROGRAM-deviceN-run-F.crumbs", 0
 * for "PROGRAM-frame-F.crumbs" or "PROGRAM-run-F.crumbs" (the layer's
 * naming, layer/LAYER.md). */
static unsigned long device_of_name(const char *name)
{
	/* The last of either: the program's own name may hold one. */
	const char *frame = NULL;
	for (const char *f = name; (f = strstr(f, "-frame-")) != NULL; f++)
		frame = f;
	for (const char *f = frame ? frame : name; (f = strstr(f, "-run-")) != NULL; f++)
		frame = f;
	const char *p = frame;
	while (p && p > name && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (!p || p == frame || p - name < 7 || strncmp(p - 7, "-device", 7) != 0)
		return 0;
	uint64_t n;
	return read_u64(p, ULONG_MAX, &n) ? (unsigned long)n : ULONG_MAX;
}

static int by_device(const void *a, const void *b)
{
	unsigned long x = device_of_name(*(char *const *)a), y = device_of_name(*(char *const *)b);
	return x < y ? -1 : x > y;
}

/*
 * Moves the captures the layer wrote into the folder open at dir_fd (whose
 * path is `dir`) to their destinations: the first device's to `dest` (or
 * its own name in `out_dir`), another device's to `dest` with "-deviceN"
 * before its extension (or its own name). A destination the user named
 * (-o) is replaced, a link there itself; one of its own name never
 * replaces a file: it gets the next free name (NAME.1.crumbs ...), and
 * that is said. Returns their paths, first device first,
 * NULL-terminated; the caller frees each and the array. NULL when there
 * is none. One that cannot be moved is left in `dir`, said, and *kept
 * set.
 */
static char **take_captures(int dir_fd, const char *dir, const char *dest, const char *out_dir,
			    bool *kept)
{
	int list_fd = dup(dir_fd);
	DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
	char **found = NULL;
	size_t count = 0;
	struct dirent *e;
	if (!d && list_fd >= 0)
		close(list_fd);
	while (d && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len <= 7 || strcmp(e->d_name + len - 7, ".crumbs") != 0 || e->d_name[0] == '.')
			continue;
		char **more = realloc(found, (count + 2) * sizeof(*found));
		if (!more)
			break;
		found = more;
		if ((found[count] = strdup(e->d_name)))
			count++;
	}
	if (d)
		closedir(d);
	if (!count) {
		free(found);
		return NULL;
	}
	found[count] = NULL;
	qsort(found, count, sizeof(*found), by_device);
	size_t taken = 0;
	for (size_t k = 0; k < count; k++) {
		/* Room for any folder and name: a path too long for the system
		 * fails in the move, which says so, rather than being cut. */
		char to[PATH_MAX + NAME_MAX + 64], placed[PATH_MAX + NAME_MAX + 64];
		unsigned long device = device_of_name(found[k]);
		if (dest && device == 0) {
			snprintf(to, sizeof(to), "%s", dest);
		} else if (dest) {
			const char *slash = strrchr(dest, '/'), *dot = strrchr(dest, '.');
			int stem = dot && (!slash || dot > slash + 1) ? (int)(dot - dest) : (int)strlen(dest);
			snprintf(to, sizeof(to), "%.*s-device%lu%s", stem, dest, device, dest + stem);
		} else {
			snprintf(to, sizeof(to), "%s/%s", out_dir, found[k]);
		}
		if (file_move(dir_fd, found[k], to, dest != NULL, placed, sizeof(placed)) != 0) {
			/* Kept: a run may hold hours of frames. */
			char why[128];
			cmd_error("cannot move the capture to '%s': %s (it stays at '%s/%s')", to,
				  cmd_strerror(errno, why, sizeof(why)), dir, found[k]);
			*kept = true;
			free(found[k]);
			found[k] = NULL;
			continue;
		}
		free(found[k]);
		found[k] = NULL;
		if (strcmp(placed, to) != 0) {
			fflush(stdout);
			fprintf(stderr, "crumbs: '%s' exists: the capture goes to '%s'\n", to, placed);
		}
		found[taken] = strdup(placed);
		if (found[taken])
			taken++;
	}
	found[taken] = NULL;
	if (!taken) {
		free(found);
		return NULL;
	}
	return found;
}

/* Removes the temporary folder `name` of the folder open at parent_fd,
 * open itself at dir_fd, and anything the layer left in it. */
static void remove_dir(int parent_fd, const char *name, int dir_fd)
{
	int list_fd = dup(dir_fd);
	DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
	struct dirent *e;
	if (!d && list_fd >= 0)
		close(list_fd);
	while (d && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		unlinkat(dir_fd, e->d_name, 0);
	}
	if (d)
		closedir(d);
	unlinkat(parent_fd, name, AT_REMOVEDIR);
}

void cmd_run_range(char *buf, size_t size, uint64_t first, uint64_t last)
{
	if (last == UINT64_MAX)
		snprintf(buf, size, "frames %llu to the end", (unsigned long long)first);
	else if (first == last)
		snprintf(buf, size, "frame %llu", (unsigned long long)first);
	else
		snprintf(buf, size, "frames %llu to %llu", (unsigned long long)first,
			 (unsigned long long)last);
}

/*
 * Says which of the frames first to last a run's file holds, when some
 * are not there, and why: the frames of the run read, s; whether the file
 * was closed (its index written); how the program ended, or NULL when
 * crumbs did not see it end (crumbs trigger).
 */
static void say_held(const char *path, uint64_t first, uint64_t last, const stats *s,
		     bool closed, const char *ended)
{
	uint64_t held = 0, low = 0, high = 0;
	for (size_t i = 0; s && i < stats_frame_count(s); i++) {
		uint64_t f = stats_frame_number(s, i);
		if (f < first || f > last)
			continue;
		if (!held++)
			low = f;
		high = f;
	}
	/* Frames missing up to the last held were never written: the
	 * recorder drops frames, but never the ones after its last. */
	uint64_t dropped = held ? high - first + 1 - held : 0;
	bool short_end = last != UINT64_MAX ? !held || high < last : !closed;
	if (!dropped && !short_end)
		return;

	char range[64], what[96], why[400] = "";
	cmd_run_range(range, sizeof(range), first, last);
	if (!held)
		snprintf(what, sizeof(what), "none");
	else if (high - low + 1 != held)
		snprintf(what, sizeof(what), "%llu frames from %llu to %llu",
			 (unsigned long long)held, (unsigned long long)low, (unsigned long long)high);
	else
		cmd_run_range(what, sizeof(what), low, high);
	if (dropped)
		snprintf(why, sizeof(why), "%llu up to frame %llu %s not recorded (the recorder drops "
			 "frames while the GPU is too far behind; the program's log says how far)",
			 (unsigned long long)dropped, (unsigned long long)high,
			 dropped == 1 ? "was" : "were");
	if (short_end) {
		size_t n = strlen(why);
		const char *sep = n ? "; " : "";
		const char *who = ended ? ended : "the program";
		if (!held)
			snprintf(why + n, sizeof(why) - n, "%s%s before the run's first frame was "
				 "written", sep, who);
		else if (!closed)
			snprintf(why + n, sizeof(why) - n, "%s%s before closing it, so any frame recorded "
				 "after frame %llu is lost", sep, who, (unsigned long long)high);
		else if (ended)
			snprintf(why + n, sizeof(why) - n, "%s%s after frame %llu", sep, ended,
				 (unsigned long long)high);
		else
			snprintf(why + n, sizeof(why) - n, "%sthe run stopped after frame %llu (the "
				 "program stopped it, or ended)", sep, (unsigned long long)high);
	}
	cmd_error("'%s' holds %s of %s: %s", path, what, range, why);
}

int cmd_stats_run(const char *path, uint64_t first, uint64_t last, struct stats_settings *st,
		  const char *ended)
{
	reader *c = NULL;
	stats *s = NULL;
	int status = EXIT_OK;

	enum cmd_load loaded = cmd_stats_load(path, st, &c, &s);
	if (loaded == CMD_LOAD_FAILED) {
		/* A run's file without a frame (its program ended before the
		 * first was written) still says so; one that does not read
		 * at all, or whose frames were not chosen, has said why. */
		if (c && reader_meta(c)->frame_count == 0)
			say_held(path, first, last, NULL, reader_meta(c)->has_index, ended);
		status = EXIT_FAILURE_;
		goto out;
	}
	struct report_sink out = { cmd_stdout_sink, NULL };
	struct counter_runs counters = { 0 };
	if (st->report.counters && cmd_counters_load("capture", path, st, &counters) != 0) {
		status = EXIT_FAILURE_;
		goto out;
	}
	/* The tables are followed by the counters' text; the other formats
	 * hold them. */
	bool table = st->format == STATS_FORMAT_TABLE;
	int r = stats_print_with_counters(st, reader_meta(c), s, path, NULL,
					  st->report.counters && !table ? &counters : NULL, &out);
	if (r == 0 && st->report.counters && table)
		r = stats_counters_print(&st->report, &counters, reader_meta(c), &out);
	counter_runs_release(&counters);
	if (r != 0) {
		status = cmd_print_failed();
		goto out;
	}
	/* A partial load was said: the statistics are of the frames before. */
	if (loaded == CMD_LOAD_PARTIAL)
		status = EXIT_FAILURE_;
	say_held(path, first, last, s, reader_meta(c)->has_index, ended);
out:
	stats_free(s);
	reader_free(c);
	return status;
}

/* Usage errors of the options together; EXIT_OK when they go together. */
static int check_args(const struct capture_args *args)
{
	bool frame_given = args->frame != NO_FRAME;
	if (args->run && frame_given)
		return cmd_usage_error("capture", "--frame captures one frame and --frames records "
				       "a run: give one of them");
	if (args->detail >= 0 && !args->run)
		return cmd_usage_error("capture", "--detail is the detail level of a run: it needs "
				       "--frames A:B (one frame is captured at full detail)");
	if (args->on_trigger && (frame_given || args->run || args->output))
		return cmd_usage_error("capture", "--on-trigger captures when asked: it takes no "
				       "--frame or --frames, and captures keep their own names (no "
				       "--output)");
	return EXIT_OK;
}

/* What the layer is asked for: CRUMBS_CAPTURE_FRAME or CRUMBS_RECORD,
 * and never both, whatever the environment held. */
static int set_request_env(const struct capture_args *args)
{
	char value[80];
	if (args->on_trigger)
		return unsetenv("CRUMBS_CAPTURE_FRAME") != 0 || unsetenv("CRUMBS_RECORD") != 0 ? -1 : 0;
	if (!args->run) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)args->frame);
		return setenv("CRUMBS_CAPTURE_FRAME", value, 1) != 0 ||
		       unsetenv("CRUMBS_RECORD") != 0 ? -1 : 0;
	}
	if (args->last == UINT64_MAX)
		snprintf(value, sizeof(value), "%llu::%d", (unsigned long long)args->first,
			 args->detail);
	else
		snprintf(value, sizeof(value), "%llu:%llu:%d", (unsigned long long)args->first,
			 (unsigned long long)args->last, args->detail);
	/* A run counts only when asked to (a capture frame does unless told
	 * not to). */
	if (args->counters && setenv("CRUMBS_COUNTERS", "1", 1) != 0)
		return -1;
	return setenv("CRUMBS_RECORD", value, 1) != 0 ||
	       unsetenv("CRUMBS_CAPTURE_FRAME") != 0 ? -1 : 0;
}

static const char description[] =
	"Runs PROGRAM with the crumbs Vulkan layer, which times the program's debug\n"
	"labels and, in the capture frame, every render pass, draw, dispatch, copy,\n"
	"blit, clear and resolve. Frame N (-f, --frame) is captured, written to a\n"
	"file, and its tables are printed with the report options (all but the\n"
	"report's --frame: the file holds that one frame). Frames end at each\n"
	"vkQueuePresentKHR; a program that never presents ends one at each submission\n"
	"with a fence. With --window MS, frame N is instead the Nth window of MS\n"
	"milliseconds from the program's first submission, with every submission made\n"
	"in it on every queue; its capture completes at the first submission after the\n"
	"window ends. A program with several devices alive at once gets a capture per\n"
	"device: FILE, then FILE with -device1, -device2... before its extension.\n"
	"\n"
	"With --frames A:B, every frame from A to B is recorded into one file\n"
	"(PROGRAM-run-A.crumbs) at the detail level of --detail, and its statistics\n"
	"are printed as by 'crumbs stats' (of the report options, --root,\n"
	"--ignore-case, --threshold, --max-depth, --ascii, --unicode, --gpu and --queue\n"
	"apply). With A: the run goes on until the program exits; :B is 0:B. A\n"
	"program that exits or is killed before frame B leaves the frames written\n"
	"until then; when the file lacks some of the frames asked for, crumbs says\n"
	"which it holds and why the others are missing.\n"
	"\n"
	"--counters=LIST also asks the layer for vendor counters per scope, where a\n"
	"device offers VK_KHR_performance_query: LIST names them, separated by\n"
	"commas ('crumbs info' on a capture lists those each device offers). A set\n"
	"that needs several passes is taken a pass a frame in a run; a capture\n"
	"frame takes the first pass, and the log says which counters it left out.\n"
	"\n"
	"Returns the program's exit status (1 if it exited 0 but no frame was\n"
	"captured or recorded). ^C, SIGTERM and SIGHUP go to the program; crumbs\n"
	"waits for it and still takes and reports what it recorded.";

/*
 * --counters=LIST: the vendor counters the layer asks the program's
 * devices for (CRUMBS_PERF_COUNTERS), besides --counters' columns, which
 * it also turns on. The report options' --counters takes no value, so
 * the list is taken out of crumbs' own arguments (those before the
 * program, each option's separate value skipped) before they are parsed,
 * leaving --counters.
 */
static void take_counter_list(int argc, char **argv, const struct option_table *tables,
			      size_t count, struct capture_args *args)
{
	static char flag[] = "--counters";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--") || a[0] != '-' || !a[1])
			return;
		if (!strncmp(a, "--counters=", 11)) {
			args->perf_counters = a + 11;
			argv[i] = flag;
			continue;
		}
		/* Whether the option's value is the next argument. */
		bool is_long = a[1] == '-';
		if (is_long && strchr(a, '='))
			continue;
		size_t len = is_long ? strlen(a + 2) : 1;
		const struct option_spec *o = NULL;
		for (size_t t = 0; t < count && !o; t++)
			for (size_t k = 0; k < tables[t].count && !o; k++) {
				const struct option_spec *sp = &tables[t].specs[k];
				if (is_long ? strlen(sp->name) == len && !strncmp(sp->name, a + 2, len) :
					      sp->short_name == a[1])
					o = sp;
			}
		if (o && o->value && (is_long || !a[2]))
			i++;
	}
}

/* Reads the arguments into args and settings (initialised), and checks
 * them: true with the program and its arguments in *pos, else false after
 * saying why, with the exit status in *status. */
static bool parse_args(int argc, char **argv, struct capture_args *args,
		       struct stats_settings *settings, struct cmd_positional *pos, int *status)
{
	struct option_spec frames, report[REPORT_OPTIONS_MAX], term[3];
	char perr[300];
	const struct option_table tables[] = {
		{ own_options, sizeof(own_options) / sizeof(own_options[0]), args },
		{ &frames, frames_option(&frames), settings },
		{ run_options, sizeof(run_options) / sizeof(run_options[0]), args },
		{ report, cmd_report_options_one_frame(report, REPORT_OPTIONS_MAX), &settings->report },
		{ term, cmd_terminal_options(term), &settings->report.term },
	};
	const struct cmd_spec spec = {
		.name = "capture",
		.usage = "crumbs capture [options] [--] PROGRAM [ARGS...]",
		.description = description,
		.tables = tables,
		.table_count = sizeof(tables) / sizeof(tables[0]),
		/* The program's own options are its, not ours. */
		.stop_at_positional = true,
		.environment = CMD_ENV_LOCALE CMD_ENV_THREADS
			"  VK_ADD_LAYER_PATH,      the layer is added to them, before the program's\n"
			"  VK_LOADER_LAYERS_ENABLE layers (others, such as the validation layer, see\n"
			"                          what it records)\n"
			"  CRUMBS_PERF_COUNTERS    vendor counters (as --counters=LIST sets it)\n"
			"  CRUMBS_LAYER_STANDING,  read by the layer in the program: see\n"
			"  CRUMBS_LAYER_SKIP       layer/LAYER.md\n",
	};
	take_counter_list(argc, argv, tables, sizeof(tables) / sizeof(tables[0]), args);
	if (!cmd_parse(&spec, argc, argv, pos, status))
		return false;
	cmd_terminal_tables(&settings->report);
	/* The range is the run's; the statistics are of the whole file, as
	 * crumbs stats FILE shows them. */
	args->run = settings->frames_set;
	args->counters = settings->report.counters;
	args->first = settings->first_frame;
	args->last = settings->last_frame;
	settings->frames_set = false;
	settings->first_frame = 0;
	settings->last_frame = UINT64_MAX;
	if (pos->count == 0) {
		*status = cmd_usage_error("capture", "expected a program to run (crumbs capture "
					  "[options] -- PROGRAM [ARGS])");
		return false;
	}
	if ((*status = check_args(args)) != EXIT_OK)
		return false;
	if (args->frame == NO_FRAME)
		args->frame = DEFAULT_FRAME;
	if (args->detail < 0)
		args->detail = DEFAULT_DETAIL;
	if (args->run && (*status = cmd_stats_check_by("capture", settings)) != EXIT_OK)
		return false;
	if (report_settings_prepare(&settings->report, perr, sizeof(perr)) != CRUMBS_OK) {
		*status = cmd_usage_error("capture", "%s", perr);
		return false;
	}
	return true;
}

/* The folder of the -o file, or the current one without -o. */
static void output_dir(const char *output, char *dir, size_t size)
{
	snprintf(dir, size, "%s", output ? output : ".");
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(dir, size, ".");
}

/* The environment the layer reads: where it is, that it is enabled,
 * where its captures go (`capture_dir`) and what it is asked for.
 * Returns 0, or -1 after saying why. */
static int set_layer_env(const char *layer_dir, const char *capture_dir,
			 const struct capture_args *args)
{
	char window[32];
	snprintf(window, sizeof(window), "%u", args->window_ms);
	/* The layer below any the program or the user enabled, so that
	 * the validation layer sees what crumbs records too. */
	/* A path list takes ':', the loader's list of layers ','. */
	if (set_env("VK_ADD_LAYER_PATH", layer_dir, ':', true) != 0 ||
	    set_env("VK_LOADER_LAYERS_ENABLE", LAYER_NAME, ',', false) != 0 ||
	    setenv("CRUMBS_CAPTURE_DIR", capture_dir, 1) != 0 ||
	    set_request_env(args) != 0 ||
	    (!args->on_trigger && setenv("CRUMBS_LAYER_QUIET", "1", 1) != 0) ||
	    (args->window_ms && setenv("CRUMBS_LAYER_WINDOW_MS", window, 1) != 0) ||
	    (!args->window_ms && unsetenv("CRUMBS_LAYER_WINDOW_MS") != 0) ||
	    (args->perf_counters && setenv("CRUMBS_PERF_COUNTERS", args->perf_counters, 1) != 0)) {
		cmd_error("cannot set the environment: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Says that `program` left no capture of what args asked for. */
static void say_missed(const char *program, const struct capture_args *args)
{
	/* A run that began leaves a file, however soon the program ended. */
	char missed[96];
	uint64_t awaited = args->run ? args->first : args->frame;
	if (args->run)
		snprintf(missed, sizeof(missed), "its run began at frame %llu",
			 (unsigned long long)awaited);
	else
		snprintf(missed, sizeof(missed), "frame %llu was captured", (unsigned long long)awaited);
	if (args->window_ms)
		/* The window's capture completes at the next submission (or
		 * when the device is destroyed). */
		cmd_error("'%s' ended before %s (did it use Vulkan, and submit work after %llu ms, "
			  "the end of that window?)", program, missed,
			  (unsigned long long)(awaited + 1) * args->window_ms);
	else
		cmd_error("'%s' ended before %s (did it use Vulkan, and run that many frames? "
			  "Frames end at presents, or at fenced submissions when it never presents; "
			  "for a program that does neither, use --window MS)", program, missed);
}

/* Prints the tables, or a run's statistics, of each capture at paths[]
 * (NULL-terminated, one per device), and frees them. Returns an exit
 * status. */
static int show_captures(char **paths, const char *program, const char *ended,
			 const struct capture_args *args, struct stats_settings *settings)
{
	char asked[64];
	int shown = EXIT_OK;
	if (args->run)
		cmd_run_range(asked, sizeof(asked), args->first, args->last);
	else
		snprintf(asked, sizeof(asked), "frame %llu", (unsigned long long)args->frame);
	for (size_t k = 0; paths[k]; k++) {
		cmd_note("%s of '%s' %s to '%s'", asked, program, args->run ? "recorded" : "captured",
			  paths[k]);
		int r = args->run ? cmd_stats_run(paths[k], args->first, args->last, settings, ended) :
			cmd_report_capture(paths[k], UINT64_MAX, &settings->report);
		if (r != EXIT_OK)
			shown = r;
		free(paths[k]);
	}
	free(paths);
	return cmd_finish(shown);
}

/*
 * Opens the folder of the captures, out_dir, and the temporary folder
 * tmp that mkdtemp made in it, into *out_fd and *tmp_fd, checking that
 * tmp is still the one made (a folder of this user's, that no one else
 * may enter), and warns when out_dir lets any user replace what is in it.
 * Returns EXIT_OK, or EXIT_FAILURE_ after saying why.
 */
static int hold_dirs(const char *out_dir, const char *tmp, int *out_fd, int *tmp_fd)
{
	char why[128];
	struct stat st;
	if ((*out_fd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		cmd_error("cannot open '%s': %s", out_dir, cmd_strerror(errno, why, sizeof(why)));
		return EXIT_FAILURE_;
	}
	*tmp_fd = openat(*out_fd, strrchr(tmp, '/') + 1,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*tmp_fd < 0 || fstat(*tmp_fd, &st) != 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 0077)) {
		cmd_error("'%s' is not the folder crumbs made: someone replaced it", tmp);
		return EXIT_FAILURE_;
	}
	if (dir_open_to_others(*out_fd)) {
		fflush(stdout);
		fprintf(stderr, "crumbs: '%s' is writable by every user and has no sticky bit: others "
			"can remove or replace the capture there (chmod +t it, or choose another "
			"folder with -o)\n", out_dir);
	}
	return EXIT_OK;
}

int cmd_capture(int argc, char **argv)
{
	struct stats_settings settings;
	struct capture_args args = { .frame = NO_FRAME, .detail = -1 };
	struct cmd_positional pos = { 0 };
	/* tmp has room for out_dir and its own name: a path too long for the
	 * system fails in mkdtemp(), which says so, rather than being cut. */
	char layer_dir[PATH_MAX], out_dir[PATH_MAX], tmp[PATH_MAX + 64] = "";
	/* The folders, held: the captures are taken from the one the layer
	 * wrote into, wherever someone moves it or whatever they put at its
	 * name. */
	int out_fd = -1, tmp_fd = -1;
	int status = EXIT_OK;

	stats_settings_init(&settings);
	if (!parse_args(argc, argv, &args, &settings, &pos, &status))
		goto out;
	if (!find_layer(layer_dir, sizeof(layer_dir))) {
		cmd_error("cannot find the crumbs layer (" MANIFEST " beside the crumbs program or "
			  "in ../share/vulkan/explicit_layer.d)");
		status = EXIT_FAILURE_;
		goto out;
	}
	/* Where the capture goes: a folder beside its destination, so that
	 * taking it is a rename. */
	output_dir(args.output, out_dir, sizeof(out_dir));
	if (!args.on_trigger) {
		snprintf(tmp, sizeof(tmp), "%s/.crumbs-capture-XXXXXX", out_dir);
		if (!mkdtemp(tmp)) {
			cmd_error("cannot create a folder in '%s': %s", out_dir, strerror(errno));
			tmp[0] = '\0';
			status = EXIT_FAILURE_;
			goto out;
		}
		if ((status = hold_dirs(out_dir, tmp, &out_fd, &tmp_fd)) != EXIT_OK)
			goto out;
	}
	if (set_layer_env(layer_dir, args.on_trigger ? out_dir : tmp, &args) != 0) {
		status = EXIT_FAILURE_;
		goto out;
	}

	char ended[128];
	int program = run(pos.args, ended, sizeof(ended));
	if (program < 0) {
		status = EXIT_FAILURE_;
		goto out;
	}
	status = program;
	if (args.on_trigger)
		goto out;
	struct stat st;
	if (fstat(tmp_fd, &st) == 0 && st.st_nlink == 0) {
		cmd_error("the folder '%s' was removed while '%s' ran: %s", tmp, pos.args[0],
			  args.run ? "the frames it recorded are lost" : "its capture is lost");
		tmp[0] = '\0';
		if (status == 0)
			status = EXIT_FAILURE_;
		goto out;
	}
	bool kept = false;
	char **paths = take_captures(tmp_fd, tmp, args.output, out_dir, &kept);
	if (kept)
		tmp[0] = '\0'; /* the folder stays, with what could not be moved */
	if (!paths) {
		if (!kept)
			say_missed(pos.args[0], &args);
		if (status == 0)
			status = EXIT_FAILURE_;
		goto out;
	}
	/* One file per device that ran the frames, each with its tables or
	 * statistics. */
	int shown = show_captures(paths, pos.args[0], ended, &args, &settings);
	if (status == 0)
		status = shown;
out:
	if (tmp[0] && out_fd >= 0 && tmp_fd >= 0)
		remove_dir(out_fd, strrchr(tmp, '/') + 1, tmp_fd);
	else if (tmp[0])
		rmdir(tmp);
	if (tmp_fd >= 0)
		close(tmp_fd);
	if (out_fd >= 0)
		close(out_fd);
	free(args.output);
	stats_settings_release(&settings);
	cmd_positional_release(&pos);
	return status;
}
