/* SPDX-License-Identifier: MIT */
/*
 * trigger.c: the program's side of `crumbs trigger` (trigger/TRIGGER.md):
 * the per-user directory and its checks, the process's datagram socket, the
 * parser of requests, the answers, and the splitting of a command line.
 */
#include "trigger.h"
#include "../util/util.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* Datagrams read per poll: a flood of bad requests must not stall a frame. */
#define POLL_MAX_DATAGRAMS 8

/* The directory of the sockets for XDG_RUNTIME_DIR's value xdg (NULL:
 * unset), without a trailing slash. Returns 0, or -1 if it does not fit. */
static int dir_for(const char *xdg, char *buf, size_t size)
{
	int n;
	if (xdg && xdg[0] == '/') {
		size_t len = strlen(xdg);
		while (len > 1 && xdg[len - 1] == '/')
			len--;
		if (len == 1) /* "/" itself */
			len = 0;
		if (len > 4096)
			return -1;
		n = snprintf(buf, size, "%.*s/crumbs", (int)len, xdg);
	} else {
		n = snprintf(buf, size, "/tmp/crumbs-%lu", (unsigned long)geteuid());
	}
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int trigger_dir(char *buf, size_t size)
{
	return dir_for(getenv("XDG_RUNTIME_DIR"), buf, size);
}

int trigger_path(long pid, char *buf, size_t size)
{
	return trigger_path_for(getenv("XDG_RUNTIME_DIR"), pid, buf, size);
}

int trigger_path_for(const char *xdg, long pid, char *buf, size_t size)
{
	char dir[4200];
	if (dir_for(xdg, dir, sizeof(dir)) != 0) {
		if (size)
			buf[0] = '\0';
		return -1;
	}
	int n = snprintf(buf, size, "%s/%ld.sock", dir, pid);
	if (n < 0 || (size_t)n >= size) {
		if (size)
			buf[0] = '\0';
		return -1;
	}
	return 0;
}

int trigger_check_dir(const char *dir, char *err, size_t err_size)
{
	struct stat st;
	char why[128];
	if (lstat(dir, &st) != 0) {
		if (errno == ENOENT)
			return 1;
		errno_text(errno, why, sizeof(why));
		snprintf(err, err_size, "cannot use '%s': %s", dir, why);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, err_size, "not using '%s': it is not a directory%s (remove it)", dir,
			 S_ISLNK(st.st_mode) ? " but a symbolic link" : "");
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, err_size, "not using '%s': it belongs to user %lu, not %lu (remove it, "
			 "or set XDG_RUNTIME_DIR)", dir, (unsigned long)st.st_uid,
			 (unsigned long)geteuid());
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, err_size, "not using '%s': it is writable by group or others "
			 "(chmod 700 it)", dir);
		return -1;
	}
	return 0;
}

/* Creates the directory if needed (mode 0700 whatever the umask), then
 * checks it, whoever made it. */
static int make_dir(const char *dir, char *err, size_t err_size)
{
	char why[128];
	if (mkdir(dir, 0700) == 0) {
		/* The umask may have taken bits we need. */
		if (chmod(dir, 0700) != 0) {
			errno_text(errno, why, sizeof(why));
			snprintf(err, err_size, "cannot use '%s': %s", dir, why);
			return -1;
		}
	} else if (errno != EEXIST) {
		errno_text(errno, why, sizeof(why));
		snprintf(err, err_size, "cannot create '%s': %s", dir, why);
		return -1;
	}
	int r = trigger_check_dir(dir, err, err_size);
	if (r == 1) { /* removed since it was made */
		errno_text(ENOENT, why, sizeof(why));
		snprintf(err, err_size, "cannot use '%s': %s", dir, why);
	}
	return r == 0 ? 0 : -1;
}

static int set_flags(int fd)
{
	int fl = fcntl(fd, F_GETFD);
	if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) != 0)
		return -1;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return -1;
	return 0;
}

static int new_socket(void)
{
	int type = SOCK_DGRAM;
#ifdef SOCK_CLOEXEC
	/* Atomically, where there is a way: another thread may exec. */
	type |= SOCK_CLOEXEC;
#endif
	int fd = socket(AF_UNIX, type, 0);
	if (fd >= 0 && set_flags(fd) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A socket file of our name was left by a process that had our pid and
 * died. Removed only if nothing answers there: a live one could belong to
 * a process in another PID namespace that shares the directory. Returns 0
 * when removed.
 */
static int remove_stale(const struct sockaddr_un *addr, char *err, size_t err_size)
{
	struct stat st;
	char why[128];
	if (lstat(addr->sun_path, &st) != 0) {
		if (errno == ENOENT)
			return 0; /* gone meanwhile */
		errno_text(errno, why, sizeof(why));
		snprintf(err, err_size, "cannot use '%s': %s", addr->sun_path, why);
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, err_size, "'%s' exists and is not a socket (remove it)", addr->sun_path);
		return -1;
	}
	int probe = new_socket();
	if (probe < 0) {
		errno_text(errno, why, sizeof(why));
		snprintf(err, err_size, "cannot create a socket: %s", why);
		return -1;
	}
	int r = connect(probe, (const struct sockaddr *)addr, sizeof(*addr));
	int e = errno;
	close(probe);
	if (r == 0) {
		snprintf(err, err_size, "'%s' is in use by another process", addr->sun_path);
		return -1;
	}
	if (e != ECONNREFUSED) {
		errno_text(e, why, sizeof(why));
		snprintf(err, err_size, "cannot use '%s': %s", addr->sun_path, why);
		return -1;
	}
	if (unlink(addr->sun_path) != 0 && errno != ENOENT) {
		errno_text(errno, why, sizeof(why));
		snprintf(err, err_size, "cannot remove the stale socket '%s': %s", addr->sun_path, why);
		return -1;
	}
	return 0;
}

int trigger_open(struct trigger *t, char *err, size_t err_size)
{
	struct sockaddr_un addr;
	char dir[sizeof(addr.sun_path)];
	char why[128];

	t->fd = -1;
	t->path[0] = '\0';
	if (trigger_dir(dir, sizeof(dir)) != 0 ||
	    trigger_path((long)getpid(), t->path, sizeof(t->path)) != 0) {
		char full[4300];
		if (trigger_path((long)getpid(), full, sizeof(full)) != 0)
			snprintf(full, sizeof(full), "$XDG_RUNTIME_DIR/crumbs/%ld.sock", (long)getpid());
		snprintf(err, err_size, "'%s' is too long for a socket path (set XDG_RUNTIME_DIR "
			 "to a shorter one)", full);
		t->path[0] = '\0';
		return -1;
	}
	if (make_dir(dir, err, err_size) != 0) {
		t->path[0] = '\0';
		return -1;
	}

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, t->path, strlen(t->path) + 1);
	int fd = new_socket();
	if (fd < 0) {
		errno_text(errno, why, sizeof(why));
		snprintf(err, err_size, "cannot create a socket: %s", why);
		t->path[0] = '\0';
		return -1;
	}
	int r = bind(fd, (const struct sockaddr *)&addr, sizeof(addr));
	if (r != 0 && errno == EADDRINUSE) {
		if (remove_stale(&addr, err, err_size) != 0) {
			close(fd);
			t->path[0] = '\0';
			return -1;
		}
		r = bind(fd, (const struct sockaddr *)&addr, sizeof(addr));
	}
	if (r != 0) {
		errno_text(errno, why, sizeof(why));
		snprintf(err, err_size, "cannot listen on '%s': %s", t->path, why);
		close(fd);
		t->path[0] = '\0';
		return -1;
	}
	t->fd = fd;
	return 0;
}

int trigger_parse_request(const char *data, size_t len, char *command, size_t command_size,
			  const char **why)
{
	size_t header = sizeof(TRIGGER_REQUEST_HEADER) - 1;
	if (len > TRIGGER_MAX_COMMAND) {
		*why = "request too long (at most 4096 bytes)";
		return 0;
	}
	if (memchr(data, '\0', len)) {
		*why = "request holds a NUL byte";
		return 0;
	}
	if (len < header || memcmp(data, TRIGGER_REQUEST_HEADER, header) != 0) {
		/* "crumbs-trigger DIGITS\n": a version this program does not speak. */
		size_t i = sizeof(TRIGGER_REQUEST_NAME " ") - 1;
		bool versioned = len > i && memcmp(data, TRIGGER_REQUEST_NAME " ", i) == 0;
		size_t digits = i;
		while (i < len && data[i] >= '0' && data[i] <= '9')
			i++;
		versioned = versioned && i > digits && i < len && data[i] == '\n';
		*why = versioned ?
			"unsupported protocol version (this program speaks '"
			TRIGGER_REQUEST_NAME " " TRIGGER_VERSION "')" :
			"not a " TRIGGER_REQUEST_NAME " request (it must begin with '"
			TRIGGER_REQUEST_NAME " " TRIGGER_VERSION "' and a line feed)";
		return 0;
	}
	const char *line = data + header;
	size_t line_len = len - header;
	const char *nl = memchr(line, '\n', line_len);
	if (!nl || (size_t)(nl - line) != line_len - 1) {
		*why = "a request holds exactly one command line, ended by a line feed";
		return 0;
	}
	line_len--;
	if (line_len == 0) {
		*why = "empty command";
		return 0;
	}
	if (line_len >= command_size) {
		*why = "command too long";
		return 0;
	}
	memcpy(command, line, line_len);
	command[line_len] = '\0';
	return 1;
}

int trigger_poll(struct trigger *t, char *command, size_t command_size,
		 struct trigger_peer *peer)
{
	/* One byte more than a request may have, to see one that is longer. */
	char data[TRIGGER_MAX_COMMAND + 1];

	if (t->fd < 0)
		return 0;
	for (int i = 0; i < POLL_MAX_DATAGRAMS; i++) {
		struct trigger_peer from;
		ssize_t n;
		do {
			memset(&from, 0, sizeof(from));
			from.len = sizeof(from.addr);
			n = recvfrom(t->fd, data, sizeof(data), 0, (struct sockaddr *)&from.addr,
				     &from.len);
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			return 0; /* EAGAIN: nothing pending; anything else: nothing to do */
		if (from.len > sizeof(from.addr))
			from.len = sizeof(from.addr);
		const char *why = NULL;
		if (trigger_parse_request(data, (size_t)n, command, command_size, &why)) {
			*peer = from;
			return 1;
		}
		trigger_answer_error(t, &from, "%s", why);
	}
	return 0;
}

void trigger_reply(struct trigger *t, const struct trigger_peer *peer, const char *message)
{
	char data[TRIGGER_MAX_COMMAND];
	size_t header = sizeof(TRIGGER_REPLY_HEADER) - 1;

	/* A requester that did not bind has no address to answer to. */
	if (t->fd < 0 || !peer || peer->len <= offsetof(struct sockaddr_un, sun_path))
		return;
	memcpy(data, TRIGGER_REPLY_HEADER, header);
	/* One line of valid UTF-8, whatever the message holds (it may quote
	 * a request's bytes), cut at a character: room for it and its line
	 * feed, which takes the place of the NUL. */
	size_t len = utf8_clean(data + header, sizeof(data) - header, message, strlen(message),
				' ', "\xEF\xBF\xBD");
	data[header + len] = '\n';

	int flags = MSG_NOSIGNAL;
#ifdef MSG_DONTWAIT
	flags |= MSG_DONTWAIT; /* the socket is non-blocking anyway */
#endif
	ssize_t n;
	do
		n = sendto(t->fd, data, header + len + 1, flags,
			   (const struct sockaddr *)&peer->addr, peer->len);
	while (n < 0 && errno == EINTR);
	/* Nothing to do on failure: the requester went away, or its queue is
	 * full; it times out and says so. */
}

void trigger_close(struct trigger *t)
{
	if (t->fd < 0)
		return;
	close(t->fd);
	t->fd = -1;
	/* A child forked without exec shares the socket but must not remove
	 * its parent's file: only the process the name is for removes it.
	 * (The name, not the whole path: the environment may have changed.) */
	char mine[32];
	size_t len = strlen(t->path);
	int n = snprintf(mine, sizeof(mine), "/%ld.sock", (long)getpid());
	if (n > 0 && (size_t)n <= len && strcmp(t->path + len - (size_t)n, mine) == 0)
		unlink(t->path);
	t->path[0] = '\0';
}

int trigger_split(char *line, char **argv, int max_args)
{
	int argc = 0;
	char *r = line; /* reads */
	char *w = line; /* writes: never ahead of r, quotes are dropped */

	if (max_args < 1)
		return -1;
	for (;;) {
		while (*r == ' ' || *r == '\t')
			r++;
		if (*r == '\0')
			break;
		if (argc >= max_args - 1)
			return -1;
		w = r;
		argv[argc++] = w;
		while (*r != '\0' && *r != ' ' && *r != '\t') {
			if (*r == '\'') {
				r++;
				while (*r != '\'') {
					if (*r == '\0')
						return -1; /* unterminated quote */
					*w++ = *r++;
				}
				r++;
			} else if (*r == '\\') {
				r++;
				if (*r == '\0')
					return -1; /* nothing to escape */
				*w++ = *r++;
			} else {
				*w++ = *r++;
			}
		}
		if (*r != '\0')
			r++;
		*w = '\0';
	}
	argv[argc] = NULL;
	return argc;
}
