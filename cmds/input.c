/* SPDX-License-Identifier: MIT */
/*
 * input.c: the captures commands read, by name or, for `-`, from standard
 * input: a file there is read in place; a pipe is read into memory first,
 * since the reader seeks (to the index at the end, to a frame).
 */
#include "cmds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What was read from a pipe: one standard input a process, which the
 * reader of it (and its clones, and a command's second reader of it, such
 * as plot's) reads until the program ends. */
static unsigned char *piped;
static size_t piped_len;
static bool piped_whole; /* read to its end: opened again, it is reused */

static void free_piped(void)
{
	free(piped);
	piped = NULL;
	piped_len = 0;
	piped_whole = false;
}

bool cmd_is_stdin(const char *path)
{
	return strcmp(path, "-") == 0;
}

/* Reads all of standard input into `piped`, at most CMD_STDIN_MAX bytes.
 * Returns 0, or -1 after saying why. A read blocks until there is more,
 * and ^C ends it as it ends any command. */
static int read_pipe(void)
{
	static bool registered;
	size_t cap = 0, len = 0;
	unsigned char *buf = NULL;
	char why[128];

	if (piped_whole)
		return 0;
	if (!registered)
		registered = atexit(free_piped) == 0;
	for (;;) {
		if (len == cap) {
			if (cap >= CMD_STDIN_MAX) {
				cmd_error("standard input holds more than %llu MiB: save the capture to a "
					  "file and name it",
					  (unsigned long long)(CMD_STDIN_MAX >> 20));
				free(buf);
				return -1;
			}
			size_t more = cap ? cap : (size_t)1 << 20;
			if (more > CMD_STDIN_MAX - cap)
				more = CMD_STDIN_MAX - cap;
			unsigned char *grown = realloc(buf, cap + more);
			if (!grown) {
				cmd_error("out of memory reading standard input (%zu MiB): save the "
					  "capture to a file and name it", len >> 20);
				free(buf);
				return -1;
			}
			buf = grown;
			cap += more;
		}
		ssize_t n = read(STDIN_FILENO, buf + len, cap - len);
		if (n == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cmd_error("cannot read standard input: %s", cmd_strerror(errno, why, sizeof(why)));
			free(buf);
			return -1;
		}
		len += (size_t)n;
	}
	piped = buf;
	piped_len = len;
	piped_whole = true;
	return 0;
}

bool cmd_open_capture(const char *path, reader **out)
{
	struct analyze_error err;
	struct stat st;
	enum crumbs_result r;

	*out = NULL;
	if (!cmd_is_stdin(path)) {
		r = reader_open_file(path, out, &err);
	} else if (isatty(STDIN_FILENO)) {
		cmd_error("standard input is a terminal: pipe a capture into crumbs, or name its "
			  "file");
		return false;
	} else if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
		   lseek(STDIN_FILENO, 0, SEEK_CUR) == 0) {
		/* A file from its start is read in place, as by its name. */
		r = reader_open_file("/dev/stdin", out, &err);
	} else {
		if (read_pipe() != 0)
			return false;
		r = reader_open_memory(piped, piped_len, out, &err);
	}
	if (r != CRUMBS_OK) {
		cmd_capture_error(path, err.text, false);
		return false;
	}
	return true;
}
