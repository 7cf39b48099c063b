/* SPDX-License-Identifier: MIT */
/*
 * trigger.h: the `crumbs trigger` protocol (trigger/TRIGGER.md), both
 * sides: its words, defined once here; the program's side, a datagram
 * socket per process that a running program polls once a frame for
 * capture requests, and its answers (trigger.c, answer.c); and the
 * requester's, the directory it trusts and the answers it reads
 * (answer.c).
 */
#ifndef CRUMBS_TRIGGER_H
#define CRUMBS_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

/* The first line of every request and of every answer: the protocol's
 * name and its version. */
#define TRIGGER_REQUEST_NAME "crumbs-trigger"
#define TRIGGER_REPLY_NAME "crumbs-reply"
#define TRIGGER_VERSION "1"
#define TRIGGER_REQUEST_HEADER TRIGGER_REQUEST_NAME " " TRIGGER_VERSION "\n"
#define TRIGGER_REPLY_HEADER TRIGGER_REPLY_NAME " " TRIGGER_VERSION "\n"

/* The largest datagram, request or answer, in bytes. A command line is
 * shorter: the request's header and line feed take 18 of them. */
#define TRIGGER_MAX_COMMAND 4096

/* The longest run a request may ask for (`profilegpu --frames N`), in
 * frames: both sides check it, `crumbs trigger` as a usage error before
 * sending. A plain decimal, so that messages can spell it with
 * TRIGGER_TEXT. */
#define TRIGGER_MAX_RUN_FRAMES 1000000000
#define TRIGGER_TEXT_(x) #x
#define TRIGGER_TEXT(x) TRIGGER_TEXT_(x)

/*
 * Whether `dir` may hold the sockets: it keeps other users out of the
 * conversation, so both sides trust it only if it is a real directory
 * (lstat: a symbolic link planted by someone else is refused, not
 * followed), the effective user's, and closed to group and others.
 * Returns 0, 1 when it does not exist, or -1 with why not in err.
 */
int trigger_check_dir(const char *dir, char *err, size_t err_size);

/* Nothing else holds state: the functions below keep all of it here. */
struct trigger {
	int fd;                              /* -1: not listening */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* Who asked, so that the answer goes back to them. A plain value: copy it
 * to answer later (e.g. "captured PATH" frames after "queued frame N"). */
struct trigger_peer {
	struct sockaddr_un addr;
	socklen_t len;
};

/*
 * Where the process `pid` listens: $XDG_RUNTIME_DIR/crumbs/PID.sock, or
 * /tmp/crumbs-UID/PID.sock without it. Returns 0, or -1 (with buf empty)
 * if the path does not fit in `size` bytes. crumbs_trigger_path() of the
 * public API.
 */
int trigger_path(long pid, char *buf, size_t size);
/* trigger_path() for XDG_RUNTIME_DIR's value xdg (NULL: unset) rather
 * than the environment's. Any text is safe. */
int trigger_path_for(const char *xdg, long pid, char *buf, size_t size);

/* Binds this process's socket. Returns 0, or -1 with a message in err
 * (the program then runs on, without the trigger).
 *
 * Creates the directory (trigger_path()) with mode 0700 if needed
 * and refuses one that is not a real directory, not owned by the effective
 * user or writable by group or others. A socket file of this process's
 * name that nothing listens on (left by a crashed process with the same
 * pid) is replaced. The socket is non-blocking and close-on-exec. t is
 * always initialised: trigger_close() and trigger_poll() may be called
 * after a failure, and do nothing. */
int trigger_open(struct trigger *t, char *err, size_t err_size);

/* The next request, without blocking: 1 with its command line (e.g.
 * "profilegpu --root *Post*", without its line feed, NUL-terminated) and
 * who sent it, 0 when there is none. A malformed request is answered with
 * an error and skipped. Costs one recvfrom() when nothing is pending, so
 * it may be called every frame; reads at most a few datagrams per call.
 * command_size: TRIGGER_MAX_COMMAND holds any request; a longer command
 * than fits is answered "error command too long". */
int trigger_poll(struct trigger *t, char *command, size_t command_size,
		 struct trigger_peer *peer);

/* Whether the `len` bytes of a datagram are a well-formed request: 1
 * with its command line in command[] (NUL-terminated), else 0 with what
 * is wrong in *why. trigger_poll's parser; any bytes are safe. */
int trigger_parse_request(const char *data, size_t len, char *command, size_t command_size,
			  const char **why);

/* Answers a request with one line (answer.c builds them): one datagram,
 * sent without blocking. An answer is one line of valid UTF-8: control
 * characters in the message become spaces, bytes that are not UTF-8
 * U+FFFD; one that is too long is cut at a character. A requester that
 * went away, or that has no address, is ignored. */
void trigger_reply(struct trigger *t, const struct trigger_peer *peer, const char *message);

/* Closes and removes the socket. A no-op when not open. In a child forked
 * from the process that opened it, closes without removing its parent's
 * socket file. */
void trigger_close(struct trigger *t);

/*
 * Splits a command line into arguments, in place, by the rule of
 * trigger/TRIGGER.md (a subset of the POSIX shell's): arguments are
 * separated by spaces or tabs; within one, '...' quotes every character up
 * to the next single quote and a backslash outside quotes takes the next
 * character literally (so 'it'\''s' is "it's", and '' an empty argument).
 * argv has room for max_args pointers, the last used one NULL. Returns the
 * number of arguments, or -1 on an unterminated quote, a backslash at the
 * end, or more than max_args - 1 arguments; line is then partly rewritten.
 * The arguments point into line.
 */
int trigger_split(char *line, char **argv, int max_args);

/* ------------------------------------------------------------------------ */
/* Answers (answer.c)                                                       */
/* ------------------------------------------------------------------------ */

/* The program's answers: "queued frame N" or "queued frames A to B" when
 * a capture or a run is queued (run: a run of frames first to last),
 * "captured PATH" once its file is written, "error TEXT" (printf-style)
 * when it cannot be. */
void trigger_answer_queued(struct trigger *t, const struct trigger_peer *peer, bool run,
			   uint64_t first, uint64_t last);
void trigger_answer_captured(struct trigger *t, const struct trigger_peer *peer,
			     const char *path);
__attribute__((format(printf, 3, 4)))
void trigger_answer_error(struct trigger *t, const struct trigger_peer *peer, const char *fmt,
			  ...);

/* What `crumbs trigger` reads of them, from any datagram: whoever can
 * write to its reply socket may send one. */
enum answer { ANSWER_NONE, ANSWER_QUEUED, ANSWER_CAPTURED, ANSWER_ERROR };

/* What the program queued: one frame, or a run of frames. */
struct queued {
	bool run;
	uint64_t first;
	uint64_t last; /* first for one frame; never below first */
};

/*
 * The answer in the `len` bytes of a datagram: ANSWER_QUEUED with *q set;
 * ANSWER_CAPTURED with the capture's path in line[], or ANSWER_ERROR with
 * the program's message there, their control characters (C0, DEL, C1)
 * and bytes that are not UTF-8 made '?' so that they do not reach the
 * terminal. Anything else (a stranger, another version, an answer this
 * crumbs does not know, one that does not fit line_size bytes with its
 * NUL) is ANSWER_NONE, to be ignored.
 */
enum answer trigger_answer_read(const char *data, size_t len, char *line, size_t line_size,
				struct queued *q);

#endif
