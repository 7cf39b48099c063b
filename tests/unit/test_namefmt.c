/* SPDX-License-Identifier: MIT */
/*
 * test_namefmt.c: scope names formatted by name_vformat must be exactly
 * what vsnprintf makes of the same format and arguments: every length
 * modifier at its extremes and at random values, widths and flags,
 * strings and characters, truncation at every buffer size, and formats it
 * hands to vsnprintf.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../capture/capture_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <wchar.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Formats with both into buffers of `size` bytes and compares them. */
static void check_sized(size_t size, const char *fmt, ...)
{
	char want[600], got[600];
	va_list ap, copy;
	assert_true(size >= 1 && size <= sizeof(got));
	va_start(ap, fmt);
	va_copy(copy, ap);
	int n = vsnprintf(want, size, fmt, copy);
	va_end(copy);
	memset(got, 'Z', sizeof(got));
	size_t len = name_vformat(got, size, fmt, ap);
	va_end(ap);
	if (n < 0) /* vsnprintf failed: the name is empty */
		want[0] = '\0';
	if (strcmp(got, want) != 0 || len != strlen(want))
		fail_msg("'%s' in %zu bytes: got '%s' (%zu), vsnprintf '%s'", fmt, size, got, len,
			 want);
}

#define check(...) check_sized(600, __VA_ARGS__)

static void plain(void **state)
{
	(void)state;
	check("");
	check("Base Pass");
	check("100%% done");
	check("Bloom Down %u", 3u);
	check("Frame %" PRIu64, UINT64_MAX);
	check("Shadow View %" PRIu32 " of %d: %s", 2u, -7, "sun");
	check("%c%c%c", 'a', 'b', 'c');
	check("%s|%s", "", "Tonemap ✨");
	check("%s", (const char *)NULL);
	check("%d %i %u %x %X %o", 0, 0, 0u, 0u, 0u, 0u);
}

static void extremes(void **state)
{
	(void)state;
	check("%d %d", INT_MIN, INT_MAX);
	check("%hhd %hhd %hhu", -129, 300, 511u);
	check("%hd %hd %hu", SHRT_MIN, 70000, 70000u);
	check("%ld %ld %lu", LONG_MIN, LONG_MAX, ULONG_MAX);
	check("%lld %lld %llu", LLONG_MIN, LLONG_MAX, ULLONG_MAX);
	check("%zd %zu", (size_t)-5, SIZE_MAX);
	check("%jd %jd %ju", INTMAX_MIN, INTMAX_MAX, UINTMAX_MAX);
	check("%td %tu", PTRDIFF_MIN, (ptrdiff_t)-1);
	check("%x %X %o %llx", UINT_MAX, 0xabcdefu, 0777u, ULLONG_MAX);
}

static void widths(void **state)
{
	(void)state;
	check("[%5d] [%-5d] [%05d] [%-05d] [%05d]", 42, 42, 42, 42, -42);
	check("[%1d] [%03d] [%00d] [%0d]", 12345, -1, 7, 0);
	check("[%8x] [%08X] [%-8o]", 0xbeefu, 0xbeefu, 8u);
	check("[%10s] [%-10s] [%3s]", "ab", "ab", "abcdef");
	check("[%4c] [%-4c]", 'x', 'y');
	check("[%256d]", 1);
	check("[%-200s]", "wide");
}

static void handed_over(void **state)
{
	(void)state;
	check("%.2f ms", 1.2345);
	check("%+d % d %#x %#o", 5, 5, 255u, 8u);
	check("%*d|%-*d", 6, 1, 6, 2);
	check("%.3s|%.*s", "abcdef", 2, "xyz");
	check("%p", (void *)0);
	check("%e %g %a", 1.0, 2.0, 3.0);
	check("[%257d]", 3);
	check("[%05s] [%ls]", "zero", L"w");
	check("%5%|%-%");
	check("%lc", (wint_t)'q');
	check("trailing %");
	check("%q %d", 1);
}

static void truncated(void **state)
{
	(void)state;
	for (size_t size = 1; size < 40; size++) {
		check_sized(size, "Bloom Down %u of %s", 12u, "the chain");
		check_sized(size, "[%-8d|%08x]", -3, 0xffu);
		check_sized(size, "%s%%%c", "abc", 'd');
		check_sized(size, "%.1f ms", 0.25); /* vsnprintf's */
	}
}

/* A 64-bit value with random bits, often near an edge. */
static uint64_t random64(void)
{
	uint64_t v = 0;
	for (int i = 0; i < 4; i++)
		v = (v << 16) ^ (uint64_t)(rand() & 0xffff);
	switch (rand() % 4) {
	case 0: return v >> (rand() % 64);
	case 1: return ~(v >> (rand() % 64));
	default: return v;
	}
}

static void random_values(void **state)
{
	(void)state;
	srand(7);
	for (int i = 0; i < 20000; i++) {
		uint64_t v = random64();
		int w = rand() % 24;
		check("%d %i %u %x %X %o", (int)v, (int)v, (unsigned)v, (unsigned)v, (unsigned)v,
		      (unsigned)v);
		check("%hhd %hhu %hd %hu %hhx", (int)v, (unsigned)v, (int)v, (unsigned)v, (unsigned)v);
		check("%ld %lu %lx %lld %llu %llo", (long)v, (unsigned long)v, (unsigned long)v,
		      (long long)v, (unsigned long long)v, (unsigned long long)v);
		check("%zd %zu %jd %ju %td %tu", (size_t)v, (size_t)v, (intmax_t)v, (uintmax_t)v,
		      (ptrdiff_t)v, (ptrdiff_t)v);
		check("[%*d] [%-*lld] [%0*llx]", w, (int)v, w, (long long)v, w,
		      (unsigned long long)v); /* '*': vsnprintf's */
		char fmt[64];
		snprintf(fmt, sizeof(fmt), "[%%%s%dlld|%%%s%dllu]", rand() % 2 ? "-" : "0", w,
			 rand() % 2 ? "0" : "", w);
		check(fmt, (long long)v, (unsigned long long)v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain),
		cmocka_unit_test(extremes),
		cmocka_unit_test(widths),
		cmocka_unit_test(handed_over),
		cmocka_unit_test(truncated),
		cmocka_unit_test(random_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
