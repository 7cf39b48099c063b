/* SPDX-License-Identifier: MIT */
/*
 * test_trigger.c: the library's side of `crumbs trigger` in one process: a
 * client socket made here sends requests to trigger_open's socket; the
 * answers, the directory's checks, stale sockets, command-line splitting,
 * and the console's parsing of the command line a request holds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../capture/capture_internal.h"
#include "../../include/crumbs.h"
#include "../../trigger/trigger.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A modifiable copy of a string literal. */
#define A(s) ((char[]){ s })

#define HEADER "crumbs-trigger 1\n"
#define REPLY "crumbs-reply 1\n"

/* Each test runs in its own XDG_RUNTIME_DIR under this one, never the
 * user's real one. */
static char base[64];

static void remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		chmod(path, 0700); /* tests leave some closed */
		DIR *d = opendir(path);
		if (d) {
			struct dirent *e;
			while ((e = readdir(d)) != NULL) {
				char sub[512];
				if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
					continue;
				snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
				remove_tree(sub);
			}
			closedir(d);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/crumbs-trigger-test-XXXXXX");
	return mkdtemp(base) ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	remove_tree(base);
	return 0;
}

/* A fresh runtime directory for one test; its crumbs/ does not exist. */
static int test_setup(void **state)
{
	static char xdg[128];
	snprintf(xdg, sizeof(xdg), "%s/run-XXXXXX", base);
	if (!mkdtemp(xdg))
		return -1;
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	*state = xdg;
	return 0;
}

static int test_teardown(void **state)
{
	remove_tree(*state);
	unsetenv("XDG_RUNTIME_DIR");
	return 0;
}

static void crumbs_dir(void **state, char *buf, size_t size)
{
	snprintf(buf, size, "%s/crumbs", (const char *)*state);
}

static void open_ok(struct trigger *t)
{
	char err[512] = "";
	int r = trigger_open(t, err, sizeof(err));
	if (r != 0)
		print_error("trigger_open: %s\n", err);
	assert_int_equal(r, 0);
	assert_true(t->fd >= 0);
}

/* A requester's socket, bound in the directory so that it gets answers. */
static int client_open(void **state, struct sockaddr_un *addr)
{
	char dir[80]; /* well below a socket path's limit */
	crumbs_dir(state, dir, sizeof(dir));
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	snprintf(addr->sun_path, sizeof(addr->sun_path), "%s/client.sock", dir);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	return fd;
}

static void client_close(int fd, const struct sockaddr_un *addr)
{
	close(fd);
	unlink(addr->sun_path);
}

static void client_send(int fd, const struct trigger *t, const void *data, size_t len)
{
	struct sockaddr_un to;
	memset(&to, 0, sizeof(to));
	to.sun_family = AF_UNIX;
	snprintf(to.sun_path, sizeof(to.sun_path), "%s", t->path);
	assert_int_equal(sendto(fd, data, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
}

/* The next answer, NUL-terminated, waiting at most a second; -1 if none. */
static ssize_t client_recv(int fd, char *buf, size_t size, int wait_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	if (poll(&p, 1, wait_ms) != 1)
		return -1;
	ssize_t n = recv(fd, buf, size - 1, 0);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------------ */

static void no_request(void **state)
{
	struct trigger t;
	struct trigger_peer peer;
	char cmd[TRIGGER_MAX_COMMAND];
	(void)state;
	open_ok(&t);
	assert_true(fcntl(t.fd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(t.fd, F_GETFD) & FD_CLOEXEC);
	double start = now_s();
	for (int i = 0; i < 1000; i++)
		assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 0);
	/* A thousand empty polls are a thousand failing syscalls, not waits. */
	assert_true(now_s() - start < 0.5);
	trigger_close(&t);
}

static void valid_request(void **state)
{
	struct trigger t;
	struct trigger_peer peer;
	struct sockaddr_un me;
	char cmd[TRIGGER_MAX_COMMAND];
	static const char req[] = HEADER "profilegpu --root '*Post*' --ascii\n";

	open_ok(&t);
	int c = client_open(state, &me);
	client_send(c, &t, req, sizeof(req) - 1);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 1);
	assert_string_equal(cmd, "profilegpu --root '*Post*' --ascii");
	assert_string_equal(peer.addr.sun_path, me.sun_path);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 0);

	/* Two in a row come one per poll, in order. */
	client_send(c, &t, HEADER "profilegpu\n", sizeof(HEADER "profilegpu\n") - 1);
	client_send(c, &t, HEADER "help\n", sizeof(HEADER "help\n") - 1);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 1);
	assert_string_equal(cmd, "profilegpu");
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 1);
	assert_string_equal(cmd, "help");
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 0);
	client_close(c, &me);
	trigger_close(&t);
}

/* The largest request: 4096 bytes, a 4078-byte command. */
static void longest_request(void **state)
{
	struct trigger t;
	struct trigger_peer peer;
	struct sockaddr_un me;
	char cmd[TRIGGER_MAX_COMMAND];
	char *req = malloc(TRIGGER_MAX_COMMAND);
	size_t h = sizeof(HEADER) - 1;

	assert_non_null(req);
	memcpy(req, HEADER, h);
	memset(req + h, 'x', TRIGGER_MAX_COMMAND - h - 1);
	req[TRIGGER_MAX_COMMAND - 1] = '\n';
	open_ok(&t);
	int c = client_open(state, &me);
	client_send(c, &t, req, TRIGGER_MAX_COMMAND);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 1);
	assert_int_equal(strlen(cmd), TRIGGER_MAX_COMMAND - h - 1);

	/* A command longer than the caller's buffer is refused, not cut. */
	client_send(c, &t, HEADER "profilegpu\n", sizeof(HEADER "profilegpu\n") - 1);
	assert_int_equal(trigger_poll(&t, cmd, 10, &peer), 0);
	char answer[TRIGGER_MAX_COMMAND + 1];
	assert_true(client_recv(c, answer, sizeof(answer), 1000) > 0);
	assert_string_equal(answer, REPLY "error command too long\n");
	client_close(c, &me);
	trigger_close(&t);
	free(req);
}

static void malformed_requests(void **state)
{
	static const struct {
		const char *data;
		size_t len;
		const char *error;
	} cases[] = {
		{ "", 0, "not a crumbs-trigger request" },
		{ "hello\n", 6, "not a crumbs-trigger request" },
		{ "crumbs-trigger 1", 16, "not a crumbs-trigger request" },
		{ "crumbs-trigger 2\nprofilegpu\n", 28, "unsupported protocol version" },
		{ "crumbs-trigger 10\nprofilegpu\n", 29, "unsupported protocol version" },
		{ "crumbs-trigger 1\r\nprofilegpu\n", 29, "not a crumbs-trigger request" },
		{ HEADER, sizeof(HEADER) - 1, "exactly one command line" },
		{ HEADER "profilegpu", sizeof(HEADER) + 9, "exactly one command line" },
		{ HEADER "profilegpu\nhelp\n", sizeof(HEADER) + 15, "exactly one command line" },
		{ HEADER "profilegpu\n\n", sizeof(HEADER) + 11, "exactly one command line" },
		{ HEADER "\n", sizeof(HEADER), "empty command" },
		{ HEADER "profile\0gpu\n", sizeof(HEADER) + 11, "NUL byte" },
		{ "\0", 1, "NUL byte" },
	};
	struct trigger t;
	struct trigger_peer peer;
	struct sockaddr_un me;
	char cmd[TRIGGER_MAX_COMMAND];
	char answer[TRIGGER_MAX_COMMAND + 1];

	open_ok(&t);
	int c = client_open(state, &me);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		client_send(c, &t, cases[i].data, cases[i].len);
		assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 0);
		assert_true(client_recv(c, answer, sizeof(answer), 1000) > 0);
		if (strncmp(answer, REPLY "error ", sizeof(REPLY) + 5) != 0 ||
		    !strstr(answer, cases[i].error) || answer[strlen(answer) - 1] != '\n' ||
		    strchr(answer + sizeof(REPLY) - 1, '\n') != answer + strlen(answer) - 1)
			fail_msg("case %zu: answer '%s'", i, answer);
	}

	/* Too long: one byte over. */
	char *big = malloc(TRIGGER_MAX_COMMAND + 100);
	assert_non_null(big);
	memcpy(big, HEADER, sizeof(HEADER) - 1);
	memset(big + sizeof(HEADER) - 1, 'x', TRIGGER_MAX_COMMAND + 100 - (sizeof(HEADER) - 1));
	big[TRIGGER_MAX_COMMAND] = '\n';
	client_send(c, &t, big, TRIGGER_MAX_COMMAND + 1);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 0);
	assert_true(client_recv(c, answer, sizeof(answer), 1000) > 0);
	assert_non_null(strstr(answer, "error request too long"));
	/* Far too long. */
	client_send(c, &t, big, TRIGGER_MAX_COMMAND + 100);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 0);
	assert_true(client_recv(c, answer, sizeof(answer), 1000) > 0);
	assert_non_null(strstr(answer, "error request too long"));
	free(big);

	/* A bad request does not hide a good one behind it. */
	client_send(c, &t, "junk", 4);
	client_send(c, &t, HEADER "profilegpu\n", sizeof(HEADER "profilegpu\n") - 1);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 1);
	assert_string_equal(cmd, "profilegpu");
	assert_true(client_recv(c, answer, sizeof(answer), 1000) > 0);
	assert_non_null(strstr(answer, "error not a crumbs-trigger request"));

	/* A flood is read a few datagrams per poll, never all at once. */
	struct sockaddr_un to;
	memset(&to, 0, sizeof(to));
	to.sun_family = AF_UNIX;
	snprintf(to.sun_path, sizeof(to.sun_path), "%s", t.path);
	int sent = 0;
	while (sent < 64 && sendto(c, "junk", 4, MSG_DONTWAIT, (struct sockaddr *)&to,
				   sizeof(to)) == 4)
		sent++;
	assert_true(sent > 8);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 0);
	struct pollfd p = { t.fd, POLLIN, 0 };
	assert_int_equal(poll(&p, 1, 0), 1);
	for (int i = 0; i < sent && poll(&p, 1, 0) == 1; i++)
		assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 0);
	assert_int_equal(poll(&p, 1, 0), 0);
	client_close(c, &me);
	trigger_close(&t);
}

static void replies(void **state)
{
	struct trigger t;
	struct trigger_peer peer;
	struct sockaddr_un me, from;
	socklen_t from_len = sizeof(from);
	char cmd[TRIGGER_MAX_COMMAND];
	char answer[TRIGGER_MAX_COMMAND + 100];

	open_ok(&t);
	int c = client_open(state, &me);
	client_send(c, &t, HEADER "profilegpu\n", sizeof(HEADER "profilegpu\n") - 1);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 1);

	trigger_reply(&t, &peer, "queued frame 7");
	memset(&from, 0, sizeof(from));
	ssize_t n = recvfrom(c, answer, sizeof(answer) - 1, 0, (struct sockaddr *)&from, &from_len);
	assert_true(n > 0);
	answer[n] = '\0';
	assert_string_equal(answer, REPLY "queued frame 7\n");
	/* The answer comes from the program's socket: that is how a
	 * requester knows who speaks. */
	assert_string_equal(from.sun_path, t.path);

	/* The peer is a value: kept, it answers later. */
	struct trigger_peer kept = peer;
	trigger_reply(&t, &kept, "captured /tmp/x.crumbs");
	assert_true(client_recv(c, answer, sizeof(answer), 1000) > 0);
	assert_string_equal(answer, REPLY "captured /tmp/x.crumbs\n");

	/* An answer is one line. */
	trigger_reply(&t, &peer, "error two\nlines\tand\x1b[31m colour");
	assert_true(client_recv(c, answer, sizeof(answer), 1000) > 0);
	assert_string_equal(answer, REPLY "error two lines and [31m colour\n");

	/* Valid UTF-8, whatever the message quotes: a byte that is not
	 * UTF-8 is U+FFFD, a C1 control a space, good characters stay. */
	trigger_reply(&t, &peer, "error bad '\xff\xc3(' \xc2\x9b[31m \xc3\xa9 \xed\xa0\x80");
	assert_true(client_recv(c, answer, sizeof(answer), 1000) > 0);
	assert_string_equal(answer, REPLY "error bad '\xef\xbf\xbd\xef\xbf\xbd(' "
			    " [31m \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\n");
	/* The replacements count in its length: still one datagram. */
	char *bad = malloc(5001);
	assert_non_null(bad);
	memset(bad, '\xff', 5000);
	bad[5000] = '\0';
	trigger_reply(&t, &peer, bad);
	free(bad);
	n = client_recv(c, answer, sizeof(answer), 1000);
	assert_true(n > 0 && n <= TRIGGER_MAX_COMMAND);
	assert_int_equal((n - 1 - (ssize_t)sizeof(REPLY) + 1) % 3, 0);
	assert_memory_equal(answer + sizeof(REPLY) - 1, "\xef\xbf\xbd", 3);

	/* Cut to one datagram, not inside a UTF-8 sequence. */
	char *long_msg = malloc(10000);
	assert_non_null(long_msg);
	for (int i = 0; i < 9998; i += 2)
		memcpy(long_msg + i, "\xc3\xa9", 2); /* é */
	long_msg[9998] = '\0';
	trigger_reply(&t, &peer, long_msg);
	n = client_recv(c, answer, sizeof(answer), 1000);
	assert_true(n > 0 && n <= TRIGGER_MAX_COMMAND);
	assert_int_equal(answer[n - 1], '\n');
	assert_int_equal((n - 1 - (ssize_t)sizeof(REPLY) + 1) % 2, 0);
	free(long_msg);

	/* A requester gone: nothing blocks, nothing fails. */
	client_close(c, &me);
	trigger_reply(&t, &peer, "captured /tmp/x.crumbs");

	/* A requester that did not bind has no address; its request counts. */
	int anon = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(anon >= 0);
	client_send(anon, &t, HEADER "profilegpu\n", sizeof(HEADER "profilegpu\n") - 1);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 1);
	trigger_reply(&t, &peer, "queued frame 8");
	close(anon);
	trigger_reply(&t, NULL, "queued frame 8");
	trigger_close(&t);
}

/* A requester that never reads: its queue fills, answers never block. */
static void reply_never_blocks(void **state)
{
	struct trigger t;
	struct trigger_peer peer;
	struct sockaddr_un me;
	char cmd[TRIGGER_MAX_COMMAND];

	open_ok(&t);
	int c = client_open(state, &me);
	client_send(c, &t, HEADER "profilegpu\n", sizeof(HEADER "profilegpu\n") - 1);
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 1);
	double start = now_s();
	for (int i = 0; i < 5000; i++)
		trigger_reply(&t, &peer, "queued frame 1");
	assert_true(now_s() - start < 2.0);
	client_close(c, &me);
	trigger_close(&t);
}

/* What crumbs trigger reads of an answer is valid UTF-8 with no control
 * character, whatever the datagram held. */
static void answers_read(void **state)
{
	char line[TRIGGER_MAX_COMMAND];
	struct queued q;
	(void)state;

#define READ(literal) trigger_answer_read(literal, sizeof(literal) - 1, line, sizeof(line), &q)
	assert_int_equal(READ(REPLY "queued frame 12\n"), ANSWER_QUEUED);
	assert_true(!q.run && q.first == 12 && q.last == 12);
	assert_int_equal(READ(REPLY "queued frames 3 to 7\n"), ANSWER_QUEUED);
	assert_true(q.run && q.first == 3 && q.last == 7);
	assert_int_equal(READ(REPLY "captured /tmp/caf\xc3\xa9.crumbs\n"), ANSWER_CAPTURED);
	assert_string_equal(line, "/tmp/caf\xc3\xa9.crumbs");
	assert_int_equal(READ(REPLY "error bad '\xff\xfe' \x1b[31m\xc2\x9b" "1m \xe2\x9c\xa8 \xe2\x9c\n"),
			 ANSWER_ERROR);
	assert_string_equal(line, "bad '?" "?' ?[31m?1m \xe2\x9c\xa8 ?" "?");
	assert_int_equal(READ(REPLY "error \xc0\xaf \xf4\x90\x80\x80\n"), ANSWER_ERROR);
	assert_string_equal(line, "?" "? ?" "?" "?" "?");
	assert_int_equal(READ(REPLY "captured \n"), ANSWER_NONE);
	assert_int_equal(READ("crumbs-reply 2\nerror x\n"), ANSWER_NONE);
#undef READ
}

static void directory_and_path(void **state)
{
	struct trigger t;
	struct stat st;
	char dir[256], path[256], expected[300];

	crumbs_dir(state, dir, sizeof(dir));
	/* Created 0700 whatever the umask. */
	mode_t old = umask(0222);
	open_ok(&t);
	umask(old);
	assert_int_equal(lstat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_uid, geteuid());

	assert_int_equal(crumbs_trigger_path((long)getpid(), path, sizeof(path)), 0);
	snprintf(expected, sizeof(expected), "%s/%ld.sock", dir, (long)getpid());
	assert_string_equal(path, expected);
	assert_string_equal(t.path, expected);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));

	trigger_close(&t);
	assert_int_equal(t.fd, -1);
	assert_int_equal(lstat(path, &st), -1);
	/* Closed twice, polled closed: nothing happens. */
	trigger_close(&t);
	char cmd[16];
	struct trigger_peer peer;
	assert_int_equal(trigger_poll(&t, cmd, sizeof(cmd), &peer), 0);
	trigger_reply(&t, &peer, "queued frame 1");

	/* An existing good directory is used as it is. */
	open_ok(&t);
	trigger_close(&t);
}

static void stale_socket(void **state)
{
	struct trigger t;
	struct stat st;
	struct sockaddr_un addr;
	char dir[256];
	char err[512];

	crumbs_dir(state, dir, sizeof(dir));
	assert_int_equal(mkdir(dir, 0700), 0);
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	assert_int_equal(crumbs_trigger_path((long)getpid(), addr.sun_path, sizeof(addr.sun_path)), 0);

	/* Left by a crashed process that had our pid: replaced. */
	int old = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_int_equal(bind(old, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(old);
	open_ok(&t);
	trigger_close(&t);

	/* One that something listens on is not taken over. */
	int live = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_int_equal(bind(live, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(trigger_open(&t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "in use by another process"));
	assert_int_equal(t.fd, -1);
	trigger_close(&t);
	close(live);
	unlink(addr.sun_path);

	/* Nor is a file that is not a socket removed. */
	int f = open(addr.sun_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(f >= 0);
	close(f);
	assert_int_equal(trigger_open(&t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not a socket"));
	assert_int_equal(lstat(addr.sun_path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	unlink(addr.sun_path);
}

static void unsafe_directories(void **state)
{
	struct trigger t;
	char dir[256], other[256], path[256];
	char err[512];
	struct stat st;

	crumbs_dir(state, dir, sizeof(dir));
	crumbs_trigger_path((long)getpid(), path, sizeof(path));

	/* Writable by the group: others could plant sockets, or read. */
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 0770), 0);
	assert_int_equal(trigger_open(&t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "writable by group or others"));
	assert_non_null(strstr(err, dir));
	assert_int_equal(t.fd, -1);
	assert_int_equal(lstat(path, &st), -1);
	/* Left as it was. */
	assert_int_equal(lstat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0770);
	assert_int_equal(chmod(dir, 0702), 0);
	assert_int_equal(trigger_open(&t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "writable by group or others"));
	assert_int_equal(rmdir(dir), 0);

	/* A symbolic link is not followed, even to a good directory. */
	snprintf(other, sizeof(other), "%s/elsewhere", (const char *)*state);
	assert_int_equal(mkdir(other, 0700), 0);
	assert_int_equal(symlink(other, dir), 0);
	assert_int_equal(trigger_open(&t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(unlink(dir), 0);

	/* A file in its place. */
	int f = open(dir, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(f >= 0);
	close(f);
	assert_int_equal(trigger_open(&t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a directory"));
	assert_int_equal(unlink(dir), 0);

	/* Another user's: only root can make one to test with. */
	if (geteuid() == 0) {
		assert_int_equal(mkdir(dir, 0700), 0);
		assert_int_equal(chown(dir, 65534, 65534), 0);
		assert_int_equal(trigger_open(&t, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "belongs to user 65534"));
		assert_int_equal(rmdir(dir), 0);
	}

	/* XDG_RUNTIME_DIR that does not exist: not created, no fallback. */
	char missing[256];
	snprintf(missing, sizeof(missing), "%s/missing", (const char *)*state);
	setenv("XDG_RUNTIME_DIR", missing, 1);
	assert_int_equal(trigger_open(&t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot create"));
	assert_int_equal(lstat(missing, &st), -1);

	/* A path too long for a socket. */
	char deep[300];
	snprintf(deep, sizeof(deep), "%s/%0150d", (const char *)*state, 0);
	setenv("XDG_RUNTIME_DIR", deep, 1);
	assert_int_equal(trigger_open(&t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too long"));
	trigger_close(&t);
}

/* A child forked without exec closes its copy but leaves the file that
 * its parent listens on. */
static void forked_child(void **state)
{
	struct trigger t;
	struct stat st;
	(void)state;
	open_ok(&t);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		trigger_close(&t);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	/* Not its status: under valgrind, the child's leak check sets it. */
	assert_true(WIFEXITED(status));
	assert_int_equal(lstat(t.path, &st), 0);
	char path[256];
	snprintf(path, sizeof(path), "%s", t.path);
	trigger_close(&t);
	assert_int_equal(lstat(path, &st), -1);
}

static void socket_path(void **state)
{
	char buf[256];
	char expected[256];
	(void)state;

	setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
	assert_int_equal(crumbs_trigger_path(1234, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/user/1000/crumbs/1234.sock");
	setenv("XDG_RUNTIME_DIR", "/run/user/1000//", 1);
	assert_int_equal(crumbs_trigger_path(1234, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/user/1000/crumbs/1234.sock");
	setenv("XDG_RUNTIME_DIR", "/", 1);
	assert_int_equal(crumbs_trigger_path(1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/crumbs/1.sock");

	/* Unset, empty or relative: the per-user directory in /tmp. */
	snprintf(expected, sizeof(expected), "/tmp/crumbs-%lu/1234.sock", (unsigned long)geteuid());
	unsetenv("XDG_RUNTIME_DIR");
	assert_int_equal(crumbs_trigger_path(1234, buf, sizeof(buf)), 0);
	assert_string_equal(buf, expected);
	setenv("XDG_RUNTIME_DIR", "", 1);
	assert_int_equal(crumbs_trigger_path(1234, buf, sizeof(buf)), 0);
	assert_string_equal(buf, expected);
	setenv("XDG_RUNTIME_DIR", "run/user/1000", 1);
	assert_int_equal(crumbs_trigger_path(1234, buf, sizeof(buf)), 0);
	assert_string_equal(buf, expected);

	/* Too small a buffer: -1 and an empty string, never a cut path. */
	setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
	assert_int_equal(crumbs_trigger_path(1234, buf, 31), -1);
	assert_string_equal(buf, "");
	assert_int_equal(crumbs_trigger_path(1234, buf, 32), 0);
	assert_int_equal(crumbs_trigger_path(1234, buf, 0), -1);
	unsetenv("XDG_RUNTIME_DIR");
}

static void split(void **state)
{
	char *argv[8];
	(void)state;

	char *l1 = A("profilegpu --root '*Post*' --ascii");
	assert_int_equal(trigger_split(l1, argv, 8), 4);
	assert_string_equal(argv[0], "profilegpu");
	assert_string_equal(argv[1], "--root");
	assert_string_equal(argv[2], "*Post*");
	assert_string_equal(argv[3], "--ascii");
	assert_null(argv[4]);

	/* Quotes inside, spaces inside, empty arguments, concatenation. */
	char *l2 = A("  'it'\\''s'  'a  b' '' x'y'z\\ w  \t'\\'  ");
	assert_int_equal(trigger_split(l2, argv, 8), 5);
	assert_string_equal(argv[0], "it's");
	assert_string_equal(argv[1], "a  b");
	assert_string_equal(argv[2], "");
	assert_string_equal(argv[3], "xyz w");
	assert_string_equal(argv[4], "\\");
	assert_null(argv[5]);

	char *l3 = A("");
	assert_int_equal(trigger_split(l3, argv, 8), 0);
	assert_null(argv[0]);
	char *l4 = A(" \t ");
	assert_int_equal(trigger_split(l4, argv, 8), 0);
	char *l5 = A("''");
	assert_int_equal(trigger_split(l5, argv, 8), 1);
	assert_string_equal(argv[0], "");
	char *l6 = A("a\\\\b \\'");
	assert_int_equal(trigger_split(l6, argv, 8), 2);
	assert_string_equal(argv[0], "a\\b");
	assert_string_equal(argv[1], "'");
	/* Within quotes nothing is special but the quote. */
	char *l7 = A("'a\\b\"c d'");
	assert_int_equal(trigger_split(l7, argv, 8), 1);
	assert_string_equal(argv[0], "a\\b\"c d");

	/* Bad quoting. */
	char *b1 = A("profilegpu 'unterminated");
	assert_int_equal(trigger_split(b1, argv, 8), -1);
	char *b2 = A("profilegpu trailing\\");
	assert_int_equal(trigger_split(b2, argv, 8), -1);
	char *b3 = A("'");
	assert_int_equal(trigger_split(b3, argv, 8), -1);
	char *b4 = A("'a'b'");
	assert_int_equal(trigger_split(b4, argv, 8), -1);
	/* Not bad: a backslash inside quotes is itself. */
	char *b5 = A("it'\\''s'");
	assert_int_equal(trigger_split(b5, argv, 8), 1);
	assert_string_equal(argv[0], "it\\s");

	/* Room for max_args - 1 arguments and the NULL. */
	char *m1 = A("a b c");
	assert_int_equal(trigger_split(m1, argv, 3), -1);
	char *m2 = A("a b c");
	assert_int_equal(trigger_split(m2, argv, 4), 3);
	assert_null(argv[3]);
	char *m3 = A("a");
	assert_int_equal(trigger_split(m3, argv, 0), -1);
	char *m4 = A("");
	assert_int_equal(trigger_split(m4, argv, 1), 0);
	assert_null(argv[0]);
}

/* What `crumbs trigger` sends for arguments with every character that
 * matters comes back as the same arguments. */
static void split_round_trip(void **state)
{
	static const char *const args[] = { "--root", "*Post* 'x'", "", "a\\b", "'", "''", "\t" };
	char line[512] = "profilegpu";
	size_t len = strlen(line);
	char *argv[16];
	(void)state;

	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		line[len++] = ' ';
		line[len++] = '\'';
		for (const char *p = args[i]; *p; p++) {
			if (*p == '\'') {
				memcpy(line + len, "'\\''", 4);
				len += 4;
			} else {
				line[len++] = *p;
			}
		}
		line[len++] = '\'';
	}
	line[len] = '\0';
	int n = trigger_split(line, argv, 16);
	assert_int_equal(n, 1 + (int)(sizeof(args) / sizeof(args[0])));
	assert_string_equal(argv[0], "profilegpu");
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
		assert_string_equal(argv[i + 1], args[i]);
}

/* The settings a console line leaves for the tables, split as the tables
 * take them: its arguments joined by '|'. */
static const char *console_rest(const char *line, uint64_t frames, int detail)
{
	static struct console_request req;
	static char joined[512];
	char err[300], *argv[32];
	err[0] = '\0';
	if (console_parse(line, &req, err, sizeof(err)) != 0)
		print_error("%s: %s\n", line, err);
	assert_false(req.help);
	assert_int_equal(req.frames, frames);
	assert_int_equal(req.detail, detail);
	int n = trigger_split(req.settings, argv, 32);
	assert_true(n >= 0);
	joined[0] = '\0';
	for (int i = 0; i < n; i++)
		snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s",
			 i ? "|" : "", argv[i]);
	return joined;
}

/* A console line refused, with err holding `why`. */
static void console_refused(const char *line, const char *why)
{
	struct console_request req;
	char err[300] = "";
	assert_int_equal(console_parse(line, &req, err, sizeof(err)), -1);
	if (!strstr(err, why))
		print_error("%s: '%s' lacks '%s'\n", line, err, why);
	assert_non_null(strstr(err, why));
}

/* The run's options are taken where the tables' splitting would see an
 * argument begin: not inside quotes or an argument, and past a quote
 * escaped with a backslash. */
static void console_lines(void **state)
{
	(void)state;
	assert_string_equal(console_rest("profilegpu", 0, -1), "");
	assert_string_equal(console_rest("  profilegpu\t --frames 600 --detail 1 --root '*Post*'",
					 600, 1), "--root|*Post*");
	assert_string_equal(console_rest("profilegpu --frames=5 --detail=0 -t 2", 5, 0), "-t|2");
	assert_string_equal(console_rest("profilegpu --root 'it'\\''s' --frames 5", 5, -1),
			    "--root|it's");
	assert_string_equal(console_rest("profilegpu --root it\\'s' --frames 5' --ascii", 0, -1),
			    "--root|it's --frames 5|--ascii");
	assert_string_equal(console_rest("profilegpu --root a\\ --frames 5", 0, -1),
			    "--root|a --frames|5");
	assert_string_equal(console_rest("profilegpu --root '--frames 5'", 0, -1),
			    "--root|--frames 5");
	assert_string_equal(console_rest("profilegpu --root \"x --frames 3", 3, -1),
			    "--root|\"x");
	assert_string_equal(console_rest("profilegpu --framesx 5", 0, -1), "--framesx|5");

	struct console_request req;
	char err[300];
	assert_int_equal(console_parse("help", &req, err, sizeof(err)), 0);
	assert_true(req.help);
	console_refused("profilegpu --frames 0", "from 1 to 1000000000");
	console_refused("profilegpu --frames 1000000001", "from 1 to 1000000000");
	console_refused("profilegpu --frames 5x", "--frames takes");
	console_refused("profilegpu --frames", "--frames takes");
	console_refused("profilegpu --frames 5 --detail 4", "a detail level from 0 to 3");
	console_refused("profilegpu --detail 2", "--detail is for runs");
	console_refused("frobnicate --frames 5", "unknown command 'frobnicate'");
	console_refused("help me", "unknown command 'help'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(no_request, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(valid_request, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(longest_request, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(malformed_requests, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(replies, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(reply_never_blocks, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(directory_and_path, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(stale_socket, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(unsafe_directories, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(forked_child, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(socket_path, test_setup, test_teardown),
		cmocka_unit_test(answers_read),
		cmocka_unit_test(split),
		cmocka_unit_test(split_round_trip),
		cmocka_unit_test(console_lines),
	};
	return cmocka_run_group_tests_name("trigger", tests, group_setup, group_teardown);
}
