/* SPDX-License-Identifier: MIT */
/*
 * term.c: what the commands that print tables ask of the terminal, as git
 * does: how wide a line may be, whether to colour, and the pager their
 * output goes through.
 */
#define _GNU_SOURCE /* pipe2 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The widest COLUMNS taken: past it the value is more likely a mistake
 * than a terminal. */
#define COLUMNS_MAX 100000

unsigned term_width(const struct term_options *o, unsigned tty_columns, const char *columns)
{
	if (o->width > 0)
		return (unsigned)o->width;
	if (o->wide)
		return 0;
	if (tty_columns)
		return tty_columns;
	if (!columns || !*columns)
		return 0;
	unsigned long v = 0;
	for (const char *p = columns; *p; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > COLUMNS_MAX)
			return 0;
	}
	return (unsigned)v;
}

unsigned term_columns(int fd)
{
	struct winsize ws;
	if (!isatty(fd) || ioctl(fd, TIOCGWINSZ, &ws) != 0)
		return 0;
	return ws.ws_col;
}

static bool dumb(const char *term)
{
	return !term || !*term || strcmp(term, "dumb") == 0;
}

bool term_color(int when, bool tty, const char *no_color, const char *term)
{
	if (when != TERM_COLOR_AUTO)
		return when == TERM_COLOR_ALWAYS;
	return tty && (!no_color || !*no_color) && !dumb(term);
}

const char *term_pager(const char *crumbs_pager, const char *pager, const char *term)
{
	const char *p = crumbs_pager ? crumbs_pager : pager;
	if (!p)
		p = dumb(term) ? NULL : "less";
	if (!p || !*p || strcmp(p, "cat") == 0)
		return NULL;
	return p;
}

/* The pager's process; -1: none. */
static pid_t pager_pid = -1;

/* Whether the shell is needed to run command: anything but one word. */
static bool needs_shell(const char *command)
{
	return command[strcspn(command, "|&;<>()$`\\\"' \t\n*?[#~=%")] != '\0';
}

static void close_pair(int p[2])
{
	close(p[0]);
	close(p[1]);
}

bool term_pager_start(const char *command)
{
	int in[2], report[2];
	if (!command || pager_pid >= 0 || pipe2(in, O_CLOEXEC) != 0)
		return false;
	/* The child writes errno here when exec fails; exec closes it. */
	if (pipe2(report, O_CLOEXEC) != 0) {
		close_pair(in);
		return false;
	}
	/* less: quit when the text fits the screen (F), let colours through
	 * (R), leave the screen as it was (X). */
	setenv("LESS", "FRX", 0);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close_pair(in);
		close_pair(report);
		return false;
	}
	if (pid == 0) {
		if (dup2(in[0], STDIN_FILENO) >= 0) {
			if (needs_shell(command))
				execl("/bin/sh", "sh", "-c", command, (char *)NULL);
			else
				execlp(command, command, (char *)NULL);
		}
		int e = errno;
		ssize_t ignored = write(report[1], &e, sizeof(e));
		(void)ignored;
		_exit(127);
	}
	close(in[0]);
	close(report[1]);
	int e;
	ssize_t n;
	do
		n = read(report[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n != 0 || dup2(in[1], STDOUT_FILENO) < 0) {
		/* It did not start: the output goes where it would have. */
		close(in[1]);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return false;
	}
	close(in[1]);
	/* A reader who quits early must not kill the command: writes fail
	 * instead, and term_pager_quit says why. */
	signal(SIGPIPE, SIG_IGN);
	pager_pid = pid;
	return true;
}

/* Standard output onto /dev/null, or closed. */
static void stdout_to_null(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		close(STDOUT_FILENO);
	if (fd >= 0 && fd != STDOUT_FILENO)
		close(fd);
}

void term_pager_wait(void)
{
	if (pager_pid < 0)
		return;
	fflush(stdout);
	/* The pager sees the end of its input. */
	stdout_to_null();
	while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
		;
	pager_pid = -1;
}

bool term_pager_quit(void)
{
	if (pager_pid < 0)
		return false;
	/* A pipe whose reader is gone polls as an error for its writer. */
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };
	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLERR))
		return false;
	stdout_to_null();
	clearerr(stdout);
	return true;
}
