/* SPDX-License-Identifier: MIT */
/*
 * format.c: rules of the capture format that the writer, the reader and
 * programs share: which UTF-8 a name may hold. (Timestamp differences
 * across the counter's wrap are inline in crumbs_file.h.)
 */
#include "../include/crumbs_file.h"
#include "../util/util.h"

/* The rule is util's, which the trigger's answers follow too. */
size_t crumbs_utf8_sequence(const unsigned char *p, size_t avail)
{
	return utf8_sequence(p, avail);
}
