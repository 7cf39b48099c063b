/* SPDX-License-Identifier: MIT */
/*
 * answer.c: the answers of a program to `crumbs trigger` (trigger/
 * TRIGGER.md, "Answers"): built by the program's side and read by the
 * requester's, so that their words are written once, here.
 */
#include "trigger.h"
#include "../util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first word of each answer, and the joint of a run's range. */
#define QUEUED "queued "
#define QUEUED_FRAME QUEUED "frame "
#define QUEUED_FRAMES QUEUED "frames "
#define RANGE_TO " to "
#define CAPTURED "captured "
#define ERROR "error "

#define LEN(literal) (sizeof(literal) - 1)

/* ------------------------------------------------------------------------ */
/* The program's side                                                       */
/* ------------------------------------------------------------------------ */

void trigger_answer_queued(struct trigger *t, const struct trigger_peer *peer, bool run,
			   uint64_t first, uint64_t last)
{
	char line[80];
	if (run)
		snprintf(line, sizeof(line), QUEUED_FRAMES "%llu" RANGE_TO "%llu",
			 (unsigned long long)first, (unsigned long long)last);
	else
		snprintf(line, sizeof(line), QUEUED_FRAME "%llu", (unsigned long long)first);
	trigger_reply(t, peer, line);
}

void trigger_answer_captured(struct trigger *t, const struct trigger_peer *peer,
			     const char *path)
{
	char line[TRIGGER_MAX_COMMAND];
	snprintf(line, sizeof(line), CAPTURED "%s", path);
	trigger_reply(t, peer, line);
}

void trigger_answer_error(struct trigger *t, const struct trigger_peer *peer, const char *fmt,
			  ...)
{
	char line[TRIGGER_MAX_COMMAND];
	va_list ap;
	memcpy(line, ERROR, LEN(ERROR));
	va_start(ap, fmt);
	vsnprintf(line + LEN(ERROR), sizeof(line) - LEN(ERROR), fmt, ap);
	va_end(ap);
	trigger_reply(t, peer, line);
}

/* ------------------------------------------------------------------------ */
/* The requester's side                                                     */
/* ------------------------------------------------------------------------ */

/* Control characters and bytes that are not UTF-8, from another
 * program, do not reach the terminal. */
static void printable(char *s)
{
	utf8_clean(s, strlen(s) + 1, s, strlen(s), '?', "?");
}

/* "queued frame N" or "queued frames A to B" into *q; false if neither. */
static bool read_queued(const char *line, struct queued *q)
{
	const char *end;
	if (strncmp(line, QUEUED_FRAME, LEN(QUEUED_FRAME)) == 0) {
		if (!(end = read_u64(line + LEN(QUEUED_FRAME), UINT64_MAX, &q->first)) || *end != '\0')
			return false;
		q->run = false;
		q->last = q->first;
		return true;
	}
	if (strncmp(line, QUEUED_FRAMES, LEN(QUEUED_FRAMES)) == 0) {
		if (!(end = read_u64(line + LEN(QUEUED_FRAMES), UINT64_MAX, &q->first)) ||
		    strncmp(end, RANGE_TO, LEN(RANGE_TO)) != 0 ||
		    !(end = read_u64(end + LEN(RANGE_TO), UINT64_MAX, &q->last)) || *end != '\0' ||
		    q->last < q->first)
			return false;
		q->run = true;
		return true;
	}
	return false;
}

/* Whether line begins with word and, unless `may_be_empty`, more; if so,
 * what follows it is moved to the start of line and made printable. */
static bool take_word(char *line, const char *word, size_t len, bool may_be_empty)
{
	if (strncmp(line, word, len) != 0 || (!may_be_empty && line[len] == '\0'))
		return false;
	memmove(line, line + len, strlen(line + len) + 1);
	printable(line);
	return true;
}

enum answer trigger_answer_read(const char *data, size_t len, char *line, size_t line_size,
				struct queued *q)
{
	size_t header = LEN(TRIGGER_REPLY_HEADER);
	if (len <= header || memcmp(data, TRIGGER_REPLY_HEADER, header) != 0 ||
	    memchr(data, '\0', len) || data[len - 1] != '\n' ||
	    memchr(data + header, '\n', len - header - 1) || len - header > line_size)
		return ANSWER_NONE;
	memcpy(line, data + header, len - header - 1);
	line[len - header - 1] = '\0';
	if (strncmp(line, QUEUED, LEN(QUEUED)) == 0)
		return read_queued(line, q) ? ANSWER_QUEUED : ANSWER_NONE;
	if (take_word(line, CAPTURED, LEN(CAPTURED), false))
		return ANSWER_CAPTURED;
	if (take_word(line, ERROR, LEN(ERROR), true))
		return ANSWER_ERROR;
	return ANSWER_NONE;
}
