/* SPDX-License-Identifier: MIT */
/*
 * utf8.c: which bytes are a UTF-8 character, and text from elsewhere made
 * valid UTF-8 without control characters before it is sent or printed, or
 * escaped so that a table of it lines up.
 */
#include "util.h"

#include <string.h>

size_t utf8_sequence(const unsigned char *p, size_t avail)
{
	unsigned c;
	size_t n;
	uint32_t cp;

	if (avail == 0)
		return 0;
	c = p[0];
	if (c < 0x80)
		return c ? 1 : 0;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
		cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		cp = c & 0x0F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

size_t utf8_clean(char *out, size_t size, const char *in, size_t len, char control,
		  const char *invalid)
{
	size_t bad_len = strlen(invalid);
	size_t w = 0;

	if (size == 0)
		return 0;
	for (size_t r = 0; r < len;) {
		const unsigned char *p = (const unsigned char *)in + r;
		size_t n = utf8_sequence(p, len - r);
		/* C0 controls, DEL and NUL are one byte; C1 controls (U+0080
		 * to U+009F) are two, 0xC2 then 0x80 to 0x9F. */
		bool is_control = n == 0 ? p[0] == 0 :
				  n == 1 ? p[0] < 0x20 || p[0] == 0x7F :
				  n == 2 && p[0] == 0xC2 && p[1] < 0xA0;
		const char *put = (const char *)p;
		size_t put_len = n;
		if (is_control) {
			put = &control;
			put_len = 1;
			n = n ? n : 1;
		} else if (n == 0) {
			put = invalid;
			put_len = bad_len;
			n = 1;
		}
		if (w + put_len > size - 1)
			break;
		memmove(out + w, put, put_len);
		w += put_len;
		r += n;
	}
	out[w] = '\0';
	return w;
}

uint32_t utf8_decode(const unsigned char *p, size_t n)
{
	static const unsigned char lead_mask[] = { 0, 0x7F, 0x1F, 0x0F, 0x07 };
	uint32_t cp = p[0] & lead_mask[n < 5 ? n : 0];
	for (size_t i = 1; i < n; i++)
		cp = (cp << 6) | (p[i] & 0x3F);
	return cp;
}

/* Characters a terminal would not draw as one more cell in its place:
 * controls, and those that reorder the line (a right-to-left override
 * would turn a table's columns around) or end it. */
static bool escaped_always(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || cp == 0x061C || cp == 0x200E ||
	       cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void utf8_escape(struct sbuf *out, const char *in, size_t len, bool ascii)
{
	for (size_t r = 0; r < len;) {
		const unsigned char *p = (const unsigned char *)in + r;
		/* Printable ASCII, most of any name, a run at a time. */
		size_t plain = 0;
		while (r + plain < len && p[plain] >= 0x20 && p[plain] < 0x7F)
			plain++;
		if (plain) {
			sbuf_add(out, (const char *)p, plain);
			r += plain;
			continue;
		}
		size_t n = utf8_sequence(p, len - r);
		if (n == 0) { /* NUL, or a byte that begins no character */
			sbuf_addf(out, "\\x%02x", p[0]);
			r++;
			continue;
		}
		uint32_t cp = utf8_decode(p, n);
		if (cp < 0x80 && escaped_always(cp))
			sbuf_addf(out, "\\x%02x", (unsigned)cp);
		else if (escaped_always(cp) || (ascii && cp >= 0x80))
			sbuf_addf(out, cp <= 0xFFFF ? "\\u%04x" : "\\U%08x", (unsigned)cp);
		else
			sbuf_add(out, (const char *)p, n);
		r += n;
	}
}
