/*
 * answer.c: reading the answers of a program to `crumbs trigger`
 * (answer.h).
 */
#include "answer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define REPLY_HEADER "crumbs-reply 1\n"

/* Control characters from another program do not reach the terminal. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7F)
			*s = '?';
}

/* A decimal number at p, which must start with a digit; the character
 * after it, or NULL. */
static const char *read_number(const char *p, uint64_t *out)
{
	char *end;
	if (*p < '0' || *p > '9')
		return NULL;
	errno = 0;
	unsigned long long x = strtoull(p, &end, 10);
	if (errno != 0)
		return NULL;
	*out = x;
	return end;
}

/* "queued frame N" or "queued frames A to B" into *q; false if neither. */
static bool read_queued(const char *line, struct queued *q)
{
	const char *end;
	if (strncmp(line, "queued frame ", 13) == 0) {
		if (!(end = read_number(line + 13, &q->first)) || *end != '\0')
			return false;
		q->run = false;
		q->last = q->first;
		return true;
	}
	if (strncmp(line, "queued frames ", 14) == 0) {
		if (!(end = read_number(line + 14, &q->first)) || strncmp(end, " to ", 4) != 0 ||
		    !(end = read_number(end + 4, &q->last)) || *end != '\0' || q->last < q->first)
			return false;
		q->run = true;
		return true;
	}
	return false;
}

enum answer answer_read(const char *data, size_t len, char *line, size_t line_size,
			struct queued *q)
{
	size_t header = sizeof(REPLY_HEADER) - 1;
	if (len <= header || memcmp(data, REPLY_HEADER, header) != 0 ||
	    memchr(data, '\0', len) || data[len - 1] != '\n' ||
	    memchr(data + header, '\n', len - header - 1) || len - header > line_size)
		return ANSWER_NONE;
	memcpy(line, data + header, len - header - 1);
	line[len - header - 1] = '\0';
	if (strncmp(line, "queued ", 7) == 0)
		return read_queued(line, q) ? ANSWER_QUEUED : ANSWER_NONE;
	if (strncmp(line, "captured ", 9) == 0 && line[9] != '\0') {
		memmove(line, line + 9, strlen(line + 9) + 1);
		printable(line);
		return ANSWER_CAPTURED;
	}
	if (strncmp(line, "error ", 6) == 0) {
		memmove(line, line + 6, strlen(line + 6) + 1);
		printable(line);
		return ANSWER_ERROR;
	}
	return ANSWER_NONE;
}
