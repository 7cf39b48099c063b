/*
 * answer.h: the answers a program sends `crumbs trigger` (trigger/
 * TRIGGER.md), read from any datagram: whoever can write to the reply
 * socket may send one.
 */
#ifndef CRUMBS_ANSWER_H
#define CRUMBS_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * the program's message there, their control characters made '?' so that
 * they do not reach the terminal. Anything else (a stranger, another
 * version, an answer this crumbs does not know, one that does not fit
 * line_size bytes with its NUL) is ANSWER_NONE, to be ignored.
 */
enum answer answer_read(const char *data, size_t len, char *line, size_t line_size,
			struct queued *q);

#endif
