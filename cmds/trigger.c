/* SPDX-License-Identifier: MIT */
/*
 * trigger.c: `crumbs trigger PID [options]`: asks a running program that
 * uses libcrumbs to capture its next frame, or to record its next N frames
 * (trigger/TRIGGER.md), waits for the file and prints its profilegpu
 * tables, or the run's statistics, with the report options given.
 */
#include "../trigger/trigger.h"
#include "cmds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

struct trigger_args {
	bool no_wait;
	double timeout_s;
	uint64_t run_frames; /* --frames N; 0: one frame */
	int detail;          /* --detail D; -1: the program's default */
};

#define AT(field) offsetof(struct trigger_args, field)

static const struct option_spec own_options[] = {
	{ "frames", 0, "N", "record the next N frames into one file and print their statistics",
	  OPT_U64, .offset = AT(run_frames), .min = 1, .max = TRIGGER_MAX_RUN_FRAMES,
	  .what = "a number of frames from 1 to " TRIGGER_TEXT(TRIGGER_MAX_RUN_FRAMES) },
	{ "detail", 0, "N", "with --frames: record scopes of detail levels 0 to N (0 to 3, "
	  "default 1); leaf events only at 3", OPT_INT, .offset = AT(detail), .min = 0,
	  .max = CRUMBS_DETAIL_MAX, .what = "a detail level from 0 to " TEXT(CRUMBS_DETAIL_MAX) },
	{ "timeout", 0, "SECONDS", "give up after SECONDS in all (default 30; a run takes as long as "
	  "its frames)", OPT_DOUBLE, .offset = AT(timeout_s), .min = 0, .above_min = true,
	  .max = 1e6, .what = "a number of seconds above 0" },
	{ "no-wait", 0, NULL, "return once the capture or run is queued; the program logs its tables",
	  OPT_FLAG, .offset = AT(no_wait) },
};

/* ------------------------------------------------------------------------ */
/* The request                                                              */
/* ------------------------------------------------------------------------ */

/* The spec an option argument names; cmd_parse has accepted it, and it
 * is not --help, which would have ended the command there. */
static const struct option_spec *find_spec(const struct option_table *tables, size_t count,
					   const char *arg, size_t *table, bool *inline_value)
{
	for (size_t t = 0; t < count; t++)
		for (size_t i = 0; i < tables[t].count; i++) {
			const struct option_spec *o = &tables[t].specs[i];
			if (arg[1] == '-') {
				const char *eq = strchr(arg + 2, '=');
				size_t len = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
				if (strlen(o->name) != len || strncmp(o->name, arg + 2, len) != 0)
					continue;
				*inline_value = eq != NULL;
			} else {
				if (o->short_name != arg[1])
					continue;
				*inline_value = arg[2] != '\0';
			}
			*table = t;
			return o;
		}
	return NULL;
}

/* One argument, quoted so that trigger_split() gives it back: as is when
 * it has only characters no rule touches, else in single quotes, with
 * '\'' for a quote inside. */
static void add_quoted(struct sbuf *b, const char *arg)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789-_./=:,+@%";
	sbuf_adds(b, " ");
	if (*arg && strspn(arg, plain) == strlen(arg)) {
		sbuf_adds(b, arg);
		return;
	}
	sbuf_adds(b, "'");
	for (const char *p = arg; *p; p++)
		if (*p == '\'')
			sbuf_adds(b, "'\\''");
		else
			sbuf_add(b, p, 1);
	sbuf_adds(b, "'");
}

/*
 * The request: the header, then "profilegpu", a run's --frames and
 * --detail, and the report options of argv exactly as given (tables[1] is
 * the report settings table). Usage errors (a line feed in an option, a
 * request too long) are printed, returning EXIT_USAGE; else 0.
 */
static int build_request(const struct option_table *tables, size_t count, int argc,
			 char **argv, const struct trigger_args *args, struct sbuf *req)
{
	sbuf_adds(req, TRIGGER_REQUEST_HEADER "profilegpu");
	if (args->run_frames)
		sbuf_addf(req, " --frames %llu", (unsigned long long)args->run_frames);
	if (args->detail >= 0)
		sbuf_addf(req, " --detail %d", args->detail);
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--") == 0)
			break;
		if (arg[0] != '-' || arg[1] == '\0')
			continue;
		size_t table = 0;
		bool inline_value = false;
		const struct option_spec *o = find_spec(tables, count, arg, &table, &inline_value);
		if (!o)
			continue; /* cannot happen: cmd_parse accepted argv */
		const char *value = o->value && !inline_value && i + 1 < argc ? argv[++i] : NULL;
		if (table != 1)
			continue;
		if (strchr(arg, '\n') || (value && strchr(value, '\n')))
			return cmd_usage_error("trigger", "option '--%s' holds a line feed, "
					       "which a request cannot carry", o->name);
		add_quoted(req, arg);
		if (value)
			add_quoted(req, value);
	}
	sbuf_adds(req, "\n");
	if (req->failed) {
		cmd_error("out of memory");
		return EXIT_FAILURE_;
	}
	if (req->len > TRIGGER_MAX_COMMAND)
		return cmd_usage_error("trigger", "the options are too long for a request "
				       "(%zu bytes, at most %d)", req->len, TRIGGER_MAX_COMMAND);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Sockets                                                                  */
/* ------------------------------------------------------------------------ */

static int set_path(struct sockaddr_un *addr, const char *path)
{
	size_t len = strlen(path);
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (len >= sizeof(addr->sun_path))
		return -1;
	memcpy(addr->sun_path, path, len + 1);
	return 0;
}

/* Whether a socket file is left by a process that is gone: nothing is
 * bound to it. */
static bool is_stale(const struct sockaddr_un *addr)
{
	struct stat st;
	if (lstat(addr->sun_path, &st) != 0 || !S_ISSOCK(st.st_mode))
		return false;
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0)
		return false;
	int r = connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	int e = errno;
	close(fd);
	return r != 0 && e == ECONNREFUSED;
}

/* "no process PID", removing the socket a crashed process left. */
static int no_process(long pid, const struct sockaddr_un *target)
{
	if (is_stale(target) && unlink(target->sun_path) == 0)
		cmd_error("no process %ld (removed the stale socket '%s' it left)", pid,
			  target->sun_path);
	else
		cmd_error("no process %ld", pid);
	return EXIT_FAILURE_;
}

/* The requester's own socket, where the answers come: the first free
 * DIR/trigger-OURPID-N.sock. A name in use is left alone. */
static int bind_reply(const char *dir, struct sockaddr_un *addr)
{
	char buf[128];
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0) {
		cmd_error("cannot create a socket: %s", cmd_strerror(errno, buf, sizeof(buf)));
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
		cmd_error("cannot create a socket: %s", cmd_strerror(errno, buf, sizeof(buf)));
		close(fd);
		return -1;
	}
	for (int n = 0; n < 100; n++) {
		char path[sizeof(addr->sun_path) + 128];
		snprintf(path, sizeof(path), "%s/trigger-%ld-%d.sock", dir, (long)getpid(), n);
		if (set_path(addr, path) != 0) {
			cmd_error("'%s' is too long for a socket path (set XDG_RUNTIME_DIR to a "
				  "shorter one)", path);
			break;
		}
		if (bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0)
			return fd;
		if (errno != EADDRINUSE) {
			cmd_error("cannot create '%s': %s", path, cmd_strerror(errno, buf, sizeof(buf)));
			break;
		}
	}
	if (errno == EADDRINUSE)
		cmd_error("cannot create a socket in '%s': 100 names in use", dir);
	addr->sun_path[0] = '\0';
	close(fd);
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Waiting for answers                                                      */
/* ------------------------------------------------------------------------ */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static const int caught[] = { SIGINT, SIGTERM, SIGHUP };

struct signals {
	sigset_t unblocked; /* the mask while waiting */
	struct sigaction old[3];
};

/* Catches interruptions until signals_restore(), so that the reply
 * socket is removed: they stay blocked except inside pselect(). */
static void signals_catch(struct signals *s)
{
	sigset_t block;
	struct sigaction sa;
	sigemptyset(&block);
	for (int i = 0; i < 3; i++)
		sigaddset(&block, caught[i]);
	sigprocmask(SIG_BLOCK, &block, &s->unblocked);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++) {
		sigaction(caught[i], NULL, &s->old[i]);
		/* Ignored ones stay ignored (a shell's background job). */
		if (s->old[i].sa_handler != SIG_IGN)
			sigaction(caught[i], &sa, NULL);
	}
}

/* Puts the handlers back; a signal caught meanwhile then takes its
 * ordinary course. */
static void signals_restore(struct signals *s)
{
	for (int i = 0; i < 3; i++)
		sigaction(caught[i], &s->old[i], NULL);
	if (interrupted)
		raise(interrupted);
	sigprocmask(SIG_SETMASK, &s->unblocked, NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Waits for the answers until the capture is written (or, with no_wait,
 * queued). Returns EXIT_OK with the file in capture_path and what was
 * queued in *q, or says what went wrong and returns EXIT_FAILURE_ (also
 * when interrupted).
 */
static int wait_answers(int fd, long pid, const struct sockaddr_un *target,
			const struct trigger_args *args, const struct signals *sig,
			double deadline, char *capture_path, size_t path_size, struct queued *q)
{
	bool queued = false;
	char data[TRIGGER_MAX_COMMAND + 1];
	char line[TRIGGER_MAX_COMMAND];

	for (;;) {
		if (interrupted)
			return EXIT_FAILURE_;
		double left = deadline - now_s();
		if (left <= 0 && queued && q->run) {
			char range[64];
			cmd_run_range(range, sizeof(range), q->first, q->last);
			cmd_error("process %ld did not finish recording %s within %g s (a run takes "
				  "as long as its frames: give a longer --timeout; the program goes "
				  "on recording)", pid, range, args->timeout_s);
			return EXIT_FAILURE_;
		}
		if (left <= 0) {
			cmd_error(queued ? "process %ld did not finish the capture within %g s" :
				  "process %ld did not answer within %g s", pid, args->timeout_s);
			return EXIT_FAILURE_;
		}
		struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
		fd_set rd;
		FD_ZERO(&rd);
		FD_SET(fd, &rd);
		/* Signals are let in only while waiting here: one caught just
		 * before the wait cannot be missed by it. */
		int r = pselect(fd + 1, &rd, NULL, NULL, &ts, &sig->unblocked);
		if (r <= 0)
			continue; /* timed out, or interrupted: checked above */

		struct sockaddr_un from;
		socklen_t from_len = sizeof(from);
		memset(&from, 0, sizeof(from));
		ssize_t n = recvfrom(fd, data, sizeof(data), 0, (struct sockaddr *)&from, &from_len);
		if (n < 0)
			continue;
		/* Only the program's socket speaks for it. */
		if (from_len <= offsetof(struct sockaddr_un, sun_path) ||
		    strncmp(from.sun_path, target->sun_path, sizeof(from.sun_path)) != 0)
			continue;
		struct queued answer;
		switch (trigger_answer_read(data, (size_t)n, line, sizeof(line), &answer)) {
		case ANSWER_QUEUED:
			if (queued)
				break;
			queued = true;
			*q = answer;
			fflush(stdout);
			char range[64];
			if (q->run)
				cmd_run_range(range, sizeof(range), q->first, q->last);
			else
				cmd_run_range(range, sizeof(range), q->first, q->first);
			fprintf(stderr, "crumbs: %s %s of process %ld\n",
				q->run ? "recording" : "capturing", range, pid);
			if (args->no_wait)
				return EXIT_OK;
			break;
		case ANSWER_CAPTURED:
			if (!queued)
				break; /* out of order: not ours to trust */
			snprintf(capture_path, path_size, "%s", line);
			return EXIT_OK;
		case ANSWER_ERROR:
			cmd_error("process %ld: %s", pid, line);
			return EXIT_FAILURE_;
		case ANSWER_NONE:
			break;
		}
	}
}

/*
 * Sends the request on fd, connected to the program's socket, before the
 * deadline: a program busy with other requesters' has a full queue for a
 * while, and takes ours once it has read a few. Returns 0, or -1 with
 * errno set (EAGAIN: the queue stayed full; EINTR: interrupted).
 */
static int send_request(int fd, const struct sbuf *req, const struct signals *sig,
			double deadline)
{
	for (;;) {
		if (send(fd, req->data, req->len, 0) >= 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (interrupted) {
			errno = EINTR;
			return -1;
		}
		double left = deadline - now_s();
		if (left <= 0) {
			errno = EAGAIN;
			return -1;
		}
		/* Connected, the socket is writable once the program's queue
		 * has room. */
		struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
		fd_set wr;
		FD_ZERO(&wr);
		FD_SET(fd, &wr);
		pselect(fd + 1, NULL, &wr, NULL, &ts, &sig->unblocked);
	}
}

/* Says why the request could not be sent (errno e, from connect or
 * send); returns the exit status. */
static int send_failed(int e, long pid, const struct sockaddr_un *target,
		       const struct trigger_args *args)
{
	char buf[128];
	if (e == EINTR)
		return EXIT_FAILURE_; /* interrupted: nothing to say */
	if (e == ECONNREFUSED && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return no_process(pid, target);
	if (e == ECONNREFUSED || e == ENOENT)
		/* Refused: the file was left by an earlier process that had
		 * this id; the program removes it when it starts listening. */
		cmd_error(e == ENOENT ? "process %ld does not use crumbs (no '%s')" :
			  "process %ld does not use crumbs ('%s' was left by an earlier "
			  "process)", pid, target->sun_path);
	else if (e == EAGAIN || e == EWOULDBLOCK)
		cmd_error("process %ld took no request within %g s: its queue of requests "
			  "('%s') stayed full (is it stopped, or not calling crumbs_frame?)", pid,
			  args->timeout_s, target->sun_path);
	else
		cmd_error("cannot send to '%s': %s", target->sun_path,
			  cmd_strerror(e, buf, sizeof(buf)));
	return EXIT_FAILURE_;
}

/*
 * Sends the request and waits, within --timeout in all. Returns EXIT_OK
 * with the file in capture_path (empty with --no-wait), or says what went
 * wrong.
 */
static int request(long pid, const char *dir, const struct sockaddr_un *target,
		   const struct sbuf *req, const struct trigger_args *args,
		   char *capture_path, size_t path_size, struct queued *q)
{
	double deadline = now_s() + args->timeout_s;
	struct sockaddr_un reply;
	struct signals sig;
	int status;

	signals_catch(&sig);
	int fd = bind_reply(dir, &reply);
	if (fd < 0) {
		status = EXIT_FAILURE_;
		goto out;
	}
	/* Connected, so that a full queue can be waited on; and the kernel
	 * then lets only the program's socket answer. */
	if (connect(fd, (const struct sockaddr *)target, sizeof(*target)) != 0 ||
	    send_request(fd, req, &sig, deadline) != 0) {
		status = send_failed(errno, pid, target, args);
		goto out;
	}
	status = wait_answers(fd, pid, target, args, &sig, deadline, capture_path, path_size, q);
out:
	if (fd >= 0) {
		close(fd);
		unlink(reply.sun_path);
	}
	signals_restore(&sig);
	return status;
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */
/* ------------------------------------------------------------------------ */

/* The report settings without --frame: the program captures one frame,
 * its next. Returns the count, or 0 when out of memory. */
static size_t trigger_report_options(struct option_spec **out)
{
	*out = malloc(report_option_count * sizeof(**out));
	return *out ? cmd_report_options_one_frame(*out, report_option_count) : 0;
}

/* A process id: digits alone, from 1 to INT_MAX. */
static int parse_pid(const char *s, long *pid)
{
	uint64_t x;
	const char *end = read_u64(s, INT_MAX, &x);
	if (!end || *end || x == 0)
		return -1;
	*pid = (long)x;
	return 0;
}

static const char description[] =
	"Asks a running program that uses libcrumbs to capture its next frame,\n"
	"waits until the capture is written and prints its profilegpu tables with\n"
	"the report options given, which the program also uses for its own. The\n"
	"program must run as the same user, with the same XDG_RUNTIME_DIR.\n"
	"\n"
	"With --frames N, the program records its next N frames into one file at the\n"
	"detail level of --detail, and their statistics are printed as by 'crumbs\n"
	"stats' (of the report options, --root, --ignore-case, --threshold,\n"
	"--max-depth, --ascii, --unicode, --gpu and --queue apply); with --counters\n"
	"the run counts pipeline statistics, and their medians follow. --timeout\n"
	"counts until the file is written: a run of 3600 frames at 60 frames a second\n"
	"takes a minute, so give it more than the default 30 s.";

/*
 * Reads the arguments into args and settings (initialised), checks them
 * and builds the request in req: true with the process id in *pid, else
 * false after saying why, with the exit status in *status.
 */
static bool parse_args(int argc, char **argv, struct trigger_args *args,
		       struct stats_settings *settings, struct sbuf *req, long *pid, int *status)
{
	struct cmd_positional pos = { 0 };
	struct option_spec *settings_options = NULL;
	size_t settings_count = trigger_report_options(&settings_options);
	bool ok = false;
	char perr[300];
	struct option_spec term[3];
	const struct option_table tables[] = {
		{ own_options, sizeof(own_options) / sizeof(own_options[0]), args },
		{ settings_options, settings_count, &settings->report },
		{ term, cmd_terminal_options(term), &settings->report.term },
	};
	const struct cmd_spec spec = {
		.name = "trigger",
		.usage = "crumbs trigger PID [options]",
		.description = description,
		.tables = tables,
		.table_count = sizeof(tables) / sizeof(tables[0]),
		.environment = CMD_ENV_LOCALE
			"  XDG_RUNTIME_DIR         its crumbs folder holds the programs' sockets\n"
			"                          (unset: /tmp/crumbs-UID)\n",
	};
	if (!settings_options) {
		cmd_error("out of memory");
		*status = EXIT_FAILURE_;
		goto out;
	}
	if (!cmd_parse(&spec, argc, argv, &pos, status))
		goto out;
	cmd_terminal_tables(&settings->report);
	if (pos.count != 1) {
		*status = cmd_usage_error("trigger", pos.count == 0 ? "expected a process id" :
					  "expected one process id, got %d arguments", pos.count);
		goto out;
	}
	if (parse_pid(pos.args[0], pid) != 0) {
		*status = cmd_usage_error("trigger", "'%s' is not a process id", pos.args[0]);
		goto out;
	}
	if (args->detail >= 0 && !args->run_frames) {
		*status = cmd_usage_error("trigger", "--detail is the detail level of a run: it "
					  "needs --frames N (one frame is captured at full detail)");
		goto out;
	}
	if ((*status = build_request(tables, spec.table_count, argc - 1, argv + 1, args,
				     req)) != 0)
		goto out;
	if (args->run_frames && (*status = cmd_stats_check_by("trigger", settings)) != EXIT_OK)
		goto out;
	if (report_settings_prepare(&settings->report, perr, sizeof(perr)) != CRUMBS_OK) {
		*status = cmd_usage_error("trigger", "%s", perr);
		goto out;
	}
	ok = true;
out:
	free(settings_options);
	cmd_positional_release(&pos);
	return ok;
}

/*
 * The socket of process pid in *target, and the folder that holds it in
 * dir, which must be one to trust. Returns EXIT_OK, or EXIT_FAILURE_
 * after saying why not: no such process, a process that does not use
 * crumbs, a folder others could write to.
 */
static int find_target(long pid, struct sockaddr_un *target, char *dir, size_t dir_size)
{
	char target_path[sizeof(target->sun_path) + 64];
	if (trigger_path(pid, target_path, sizeof(target_path)) != 0 ||
	    set_path(target, target_path) != 0) {
		cmd_error("the socket path of process %ld is too long ('%s'; set XDG_RUNTIME_DIR "
			  "to a shorter one)", pid, target_path);
		return EXIT_FAILURE_;
	}
	/* No signal: kill(pid, 0) only asks whether the process exists. */
	bool other_user = false;
	if (kill((pid_t)pid, 0) != 0) {
		if (errno == ESRCH)
			return no_process(pid, target);
		other_user = errno == EPERM;
	}
	snprintf(dir, dir_size, "%s", target_path);
	*strrchr(dir, '/') = '\0';
	char why[PATH_MAX + 200];
	int d = trigger_check_dir(dir, why, sizeof(why));
	struct stat st;
	if (d < 0) {
		cmd_error("%s", why);
		return EXIT_FAILURE_;
	}
	if (d == 0 && lstat(target_path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		cmd_error("process %ld does not use crumbs ('%s' is not a socket)", pid, target_path);
		return EXIT_FAILURE_;
	}
	if (d == 1 || lstat(target_path, &st) != 0) {
		if (other_user)
			cmd_error("process %ld does not use crumbs (no '%s'), or belongs to another "
				  "user (run 'crumbs trigger' as that user)", pid, target_path);
		else
			cmd_error("process %ld does not use crumbs (no '%s')", pid, target_path);
		return EXIT_FAILURE_;
	}
	return EXIT_OK;
}

/* Prints the tables of the frame, or the statistics of the run, that
 * process pid wrote to path, as q says it queued. Returns an exit
 * status. */
static int show_capture(long pid, const char *path, const struct queued *q,
			struct stats_settings *settings)
{
	if (q->run) {
		char range[64];
		cmd_run_range(range, sizeof(range), q->first, q->last);
		cmd_note("%s of process %ld recorded to '%s'", range, pid, path);
		return cmd_finish(cmd_stats_run(path, q->first, q->last, settings, NULL));
	}
	cmd_note("frame %llu of process %ld captured to '%s'", (unsigned long long)q->first, pid,
		  path);
	return cmd_finish(cmd_report_capture(path, q->first, &settings->report));
}

int cmd_trigger(int argc, char **argv)
{
	/* The report's settings, inside the statistics' for a run. */
	struct stats_settings settings;
	struct trigger_args args = { .timeout_s = 30, .detail = -1 };
	struct sbuf req = { 0 };
	struct sockaddr_un target;
	struct queued queued = { 0 };
	char dir[sizeof(target.sun_path) + 64];
	char capture_path[TRIGGER_MAX_COMMAND] = "";
	long pid = 0;
	int status = EXIT_OK;

	stats_settings_init(&settings);
	if (!parse_args(argc, argv, &args, &settings, &req, &pid, &status))
		goto out;
	if ((status = find_target(pid, &target, dir, sizeof(dir))) != EXIT_OK)
		goto out;
	status = request(pid, dir, &target, &req, &args, capture_path, sizeof(capture_path),
			 &queued);
	if (status == EXIT_OK && !args.no_wait)
		status = show_capture(pid, capture_path, &queued, &settings);
out:
	sbuf_release(&req);
	stats_settings_release(&settings);
	return status;
}
