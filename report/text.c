/* SPDX-License-Identifier: MIT */
/*
 * text.c: display widths, so that every column of a table is sized by the
 * cells a terminal draws, never by bytes (colour codes none); names
 * escaped, and cut to a width; text folded for case-blind lookups; and
 * text handed to a sink.
 */
#include "report_internal.h"

#include <inttypes.h>
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
	utf8_escape(b, name, len, g->escape_all);
}

size_t text_cells(const char *s, size_t len)
{
	size_t width = 0;
	while (len > 0) {
		const char *esc = memchr(s, '\033', len);
		size_t plain = esc ? (size_t)(esc - s) : len;
		width += text_width(s, plain);
		s += plain;
		len -= plain;
		if (len == 0)
			break;
		/* ESC [, parameters and intermediates, a final byte. */
		size_t i = 1;
		if (len > 1 && s[1] == '[') {
			i = 2;
			while (i < len && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7E))
				i++;
			if (i < len)
				i++;
		}
		s += i;
		len -= i;
	}
	return width;
}

static size_t leading_spaces(const char *s, size_t len)
{
	size_t n = 0;
	while (n < len && s[n] == ' ')
		n++;
	return n;
}

size_t text_cut_min(const char *s, size_t len, const char *ellipsis)
{
	size_t indent = leading_spaces(s, len);
	size_t rest = text_cells(s + indent, len - indent);
	size_t cut = text_width(ellipsis, strlen(ellipsis)) + 1;
	return indent + (rest < cut ? rest : cut);
}

void text_cut(struct sbuf *out, const char *s, size_t len, size_t width, const char *ellipsis)
{
	if (text_cells(s, len) <= width) {
		sbuf_add(out, s, len);
		return;
	}
	size_t indent = leading_spaces(s, len);
	size_t ell = text_width(ellipsis, strlen(ellipsis));
	size_t room = width > indent + ell ? width - indent - ell : 0;
	size_t used = 0, at = indent;
	const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
	/* Whole characters, and the marks that combine with the last. */
	while (at < len) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t n = utf8proc_iterate(p + at, (utf8proc_ssize_t)(len - at), &cp);
		size_t w = n <= 0 ? 1 : (size_t)utf8proc_charwidth(cp);
		if (n <= 0)
			n = 1;
		if (used + w > room || (w == 0 && at == indent))
			break;
		used += w;
		at += (size_t)n;
	}
	sbuf_add(out, s, at);
	sbuf_adds(out, ellipsis);
}

void text_colored(struct sbuf *out, bool on, const char *sgr, const char *text, size_t len)
{
	if (on)
		sbuf_adds(out, sgr);
	sbuf_add(out, text, len);
	if (on)
		sbuf_adds(out, SGR_RESET);
}

/* "12.3 MiB": a size to read, the exact bytes being in JSON and CSV. */
void text_bytes(struct sbuf *b, uint64_t v)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	if (v < 1024) {
		sbuf_addf(b, "%" PRIu64 " B", v);
		return;
	}
	double x = (double)v / 1024;
	size_t u = 0;
	while (x >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		x /= 1024;
		u++;
	}
	sbuf_addf(b, "%.1f %s", x, units[u]);
}
