/* SPDX-License-Identifier: MIT */
/*
 * namefmt.c: formatting scope names in the capture frame. vsnprintf sets up
 * a whole stream for each call, which is most of what a formatted scope
 * costs there; the conversions names use are done here directly, and any
 * other format goes to vsnprintf, so the result is always vsnprintf's.
 */
#include "capture_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length modifiers, in the order of the checks in conversion(). */
enum length { LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_Z, LEN_J, LEN_T };

struct spec {
	bool left;       /* '-' */
	bool zero;       /* '0' */
	unsigned width;
	enum length length;
	char conv;       /* d i u x X o c s % */
};

/* Parses the conversion after a '%' at *p, advancing past it. False for
 * anything this file does not do itself (precision, '*', '+', ' ', '#',
 * floats, %n, %p, wide characters). */
RECORD_PATH
static bool conversion(const char **p, struct spec *s)
{
	const char *f = *p;
	*s = (struct spec){ false, false, 0, LEN_NONE, 0 };
	for (;; f++) {
		if (*f == '-')
			s->left = true;
		else if (*f == '0')
			s->zero = true;
		else
			break;
	}
	while (*f >= '0' && *f <= '9') {
		s->width = s->width * 10 + (unsigned)(*f++ - '0');
		if (s->width > 256)
			return false;
	}
	if (f[0] == 'h' && f[1] == 'h')
		s->length = LEN_HH, f += 2;
	else if (f[0] == 'h')
		s->length = LEN_H, f++;
	else if (f[0] == 'l' && f[1] == 'l')
		s->length = LEN_LL, f += 2;
	else if (f[0] == 'l')
		s->length = LEN_L, f++;
	else if (f[0] == 'z')
		s->length = LEN_Z, f++;
	else if (f[0] == 'j')
		s->length = LEN_J, f++;
	else if (f[0] == 't')
		s->length = LEN_T, f++;
	switch ((s->conv = *f)) {
	case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c': case 's': case '%':
		break;
	default:
		return false;
	}
	/* Only integers take a length or zeros; '%' takes nothing at all. */
	if ((s->conv == 'c' || s->conv == 's') && (s->length != LEN_NONE || s->zero))
		return false;
	if (s->conv == '%' && (s->left || s->zero || s->width || s->length != LEN_NONE))
		return false;
	*p = f + 1;
	return true;
}

struct out {
	char *buf;
	size_t size; /* room, the terminating NUL included */
	size_t len;
};

/* Byte by byte: a name's pieces are a few bytes, and a call into the C
 * library's copy (through the PLT, to code of its own) would find that
 * code out of the caches, as a frame finds crumbs'. */
RECORD_PATH
static void put(struct out *o, const char *s, size_t n)
{
	size_t room = o->size - 1 - o->len;
	if (n > room)
		n = room;
	char *d = o->buf + o->len;
	o->len += n;
	while (n--)
		*d++ = *s++;
}

RECORD_PATH
static void pad(struct out *o, char c, unsigned n)
{
	if (!n)
		return;
	char run[32];
	memset(run, c, sizeof(run));
	for (; n > sizeof(run); n -= (unsigned)sizeof(run))
		put(o, run, sizeof(run));
	put(o, run, n);
}

/* `body` of `n` bytes (after a sign of `sign_len` bytes at its start),
 * padded to the spec's width. */
RECORD_PATH
static void field(struct out *o, const struct spec *s, const char *body, size_t n, size_t sign_len)
{
	unsigned fill = s->width > n ? s->width - (unsigned)n : 0;
	if (s->left) {
		put(o, body, n);
		pad(o, ' ', fill);
	} else if (s->zero) {
		put(o, body, sign_len); /* zeros go between the sign and the digits */
		pad(o, '0', fill);
		put(o, body + sign_len, n - sign_len);
	} else {
		pad(o, ' ', fill);
		put(o, body, n);
	}
}

RECORD_PATH
static void integer(struct out *o, const struct spec *s, va_list *ap)
{
	bool is_signed = s->conv == 'd' || s->conv == 'i';
	uintmax_t u = 0;
	bool negative = false;
	if (is_signed) {
		intmax_t v;
		switch (s->length) {
		case LEN_HH: v = (signed char)va_arg(*ap, int); break;
		case LEN_H: v = (short)va_arg(*ap, int); break;
		case LEN_L: v = va_arg(*ap, long); break;
		case LEN_LL: v = va_arg(*ap, long long); break;
		case LEN_Z: v = (intmax_t)(ptrdiff_t)va_arg(*ap, size_t); break;
		case LEN_J: v = va_arg(*ap, intmax_t); break;
		case LEN_T: v = va_arg(*ap, ptrdiff_t); break;
		default: v = va_arg(*ap, int); break;
		}
		negative = v < 0;
		/* The magnitude, without overflow at the most negative value. */
		u = negative ? (uintmax_t)0 - (uintmax_t)v : (uintmax_t)v;
	} else {
		switch (s->length) {
		case LEN_HH: u = (unsigned char)va_arg(*ap, unsigned); break;
		case LEN_H: u = (unsigned short)va_arg(*ap, unsigned); break;
		case LEN_L: u = va_arg(*ap, unsigned long); break;
		case LEN_LL: u = va_arg(*ap, unsigned long long); break;
		case LEN_Z: u = va_arg(*ap, size_t); break;
		case LEN_J: u = va_arg(*ap, uintmax_t); break;
		case LEN_T: u = (uintmax_t)(size_t)va_arg(*ap, ptrdiff_t); break;
		default: u = va_arg(*ap, unsigned); break;
		}
	}
	const char *digits = s->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[72], *end = tmp + sizeof(tmp), *p = end;
	if (s->conv == 'x' || s->conv == 'X') {
		do
			*--p = digits[u & 15];
		while (u >>= 4);
	} else if (s->conv == 'o') {
		do
			*--p = digits[u & 7];
		while (u >>= 3);
	} else {
		do
			*--p = (char)('0' + u % 10);
		while (u /= 10);
	}
	if (negative)
		*--p = '-';
	field(o, s, p, (size_t)(end - p), negative);
}

RECORD_PATH
size_t name_vformat(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };
	struct spec s;
	va_list args;
	/* Arguments are taken from a copy: `ap` is still whole for vsnprintf
	 * when a conversion turns out not to be ours. */
	va_copy(args, ap);
	for (const char *f = fmt; *f;) {
		/* The text up to the next conversion. */
		const char *text = f;
		while (*f && *f != '%')
			f++;
		put(&o, text, (size_t)(f - text));
		if (!*f)
			break;
		f++;
		if (!conversion(&f, &s)) {
			va_end(args);
			int n = vsnprintf(buf, size, fmt, ap);
			if (n < 0) {
				buf[0] = '\0';
				return 0;
			}
			return (size_t)n < size ? (size_t)n : size - 1;
		}
		if (s.conv == '%') {
			put(&o, "%", 1);
		} else if (s.conv == 'c') {
			char c = (char)va_arg(args, int);
			field(&o, &s, &c, 1, 0);
		} else if (s.conv == 's') {
			const char *str = va_arg(args, const char *);
			if (!str)
				str = "(null)"; /* as glibc prints it */
			field(&o, &s, str, strlen(str), 0);
		} else {
			integer(&o, &s, &args);
		}
	}
	va_end(args);
	buf[o.len] = '\0';
	return o.len;
}
