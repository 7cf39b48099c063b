/* SPDX-License-Identifier: MIT */
/*
 * errno_text.c: an errno's text as crumbs' messages write it.
 */
#include "util.h"

#include <stdio.h>
#include <string.h>

/* strerror() is not thread-safe and this runs inside someone else's
 * threads too; the XSI strerror_r is what _POSIX_C_SOURCE gives. */
void errno_text(int errnum, char *buf, size_t size)
{
	if (strerror_r(errnum, buf, size) != 0)
		snprintf(buf, size, "error %d", errnum);
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
}
