/* SPDX-License-Identifier: MIT */
/*
 * format.c: rules of the capture format that the writer, the reader and
 * programs share: which UTF-8 a name may hold. (Timestamp differences
 * across the counter's wrap are inline in crumbs_file.h.)
 */
#include "../include/crumbs_file.h"

size_t crumbs_utf8_sequence(const unsigned char *p, size_t avail)
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
