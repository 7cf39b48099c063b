/* SPDX-License-Identifier: MIT */
/*
 * text.c: display widths, so that every column of a table is sized by the
 * cells a terminal draws, never by bytes; text folded for case-blind
 * lookups; and text handed to a sink.
 */
#include "report_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

size_t text_width(const char *s, size_t len)
{
	const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
	size_t width = 0;

	while (len > 0) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t n = utf8proc_iterate(p, (utf8proc_ssize_t)len, &cp);
		if (n <= 0) {
			width++;
			n = 1;
		} else {
			width += (size_t)utf8proc_charwidth(cp);
		}
		p += n;
		len -= (size_t)n;
	}
	return width;
}

void text_fold_case(struct sbuf *out, const char *s, size_t len)
{
	const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
	while (len > 0) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t n = utf8proc_iterate(p, (utf8proc_ssize_t)len, &cp);
		if (n <= 0) {
			sbuf_add(out, (const char *)p, 1);
			n = 1;
		} else {
			/* Up, then down: the characters a case-blind match takes
			 * for one (K, k and the Kelvin sign) end as one. */
			utf8proc_uint8_t enc[4];
			cp = utf8proc_tolower(utf8proc_toupper(cp));
			sbuf_add(out, (const char *)enc, (size_t)utf8proc_encode_char(cp, enc));
		}
		p += n;
		len -= (size_t)n;
	}
}

int sbuf_emit(const struct report_sink *sink, struct sbuf *b)
{
	if (b->failed)
		return -1;
	int r = b->len ? sink->write(sink->user, b->data, b->len) : 0;
	b->len = 0;
	return r;
}

void sbuf_emit_some(const struct report_sink *sink, struct sbuf *b)
{
	if (sink && b->len >= 64 * 1024 && sbuf_emit(sink, b) != 0)
		b->failed = true;
}

void text_add_name(struct sbuf *b, const struct glyphs *g, const char *name, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)name[i];
		bool c1 = ch == 0xC2 && i + 1 < len && (unsigned char)name[i + 1] >= 0x80 &&
			  (unsigned char)name[i + 1] <= 0x9F;
		if (ch < 0x20 || ch == 0x7F || c1) {
			sbuf_adds(b, g->replacement);
			i += c1;
		} else {
			sbuf_add(b, (const char *)&ch, 1);
		}
	}
}
