/* SPDX-License-Identifier: MIT */
/*
 * sbuf.c: growable strings, which remember a failed allocation so that a
 * caller checks once, at the end.
 */
#include "util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool sbuf_reserve(struct sbuf *b, size_t extra)
{
	if (b->failed)
		return false;
	if (b->cap - b->len > extra)
		return true;
	if (extra >= SIZE_MAX - b->len ||
	    !array_room_from((void **)&b->data, &b->cap, b->len + extra + 1, 1, 256)) {
		b->failed = true;
		return false;
	}
	return true;
}

void sbuf_add(struct sbuf *b, const char *s, size_t len)
{
	if (!sbuf_reserve(b, len))
		return;
	memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void sbuf_adds(struct sbuf *b, const char *s)
{
	sbuf_add(b, s, strlen(s));
}

void sbuf_addf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];

	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		sbuf_add(b, small, (size_t)n);
		return;
	}
	if (!sbuf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void sbuf_release(struct sbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
