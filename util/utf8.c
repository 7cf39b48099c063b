/* SPDX-License-Identifier: MIT */
/*
 * utf8.c: which bytes are a UTF-8 character, and text from elsewhere made
 * valid UTF-8 without control characters before it is sent or printed.
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
