/* SPDX-License-Identifier: MIT */
/*
 * test_compare.c: the Mann-Whitney U test against its definition (pairs
 * counted one by one) and against the exact permutation distribution, and
 * the verdicts of crumbs diff on crafted rows.
 */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>

static int by_value(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

/* U of a, as defined: pairs where a's value is larger, ties a half. */
static double u_by_pairs(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
	double u = 0;
	for (size_t i = 0; i < na; i++)
		for (size_t k = 0; k < nb; k++)
			u += a[i] > b[k] ? 1.0 : a[i] == b[k] ? 0.5 : 0.0;
	return u;
}

static uint64_t next_random(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void separated_samples(void **state)
{
	(void)state;
	const int64_t a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
	struct mann_whitney mw;
	assert_int_equal(compare_mann_whitney(a, 3, b, 3, &mw), 0);
	assert_true(mw.u == 0);
	/* mean 4.5, variance 3 * 3 / 12 * 7 = 5.25: z = -(4.5 - 0.5) / sqrt(5.25) */
	assert_true(fabs(mw.z - -1.745743) < 1e-5);
	assert_true(fabs(mw.p - 0.080856) < 1e-5);
	assert_int_equal(compare_mann_whitney(b, 3, a, 3, &mw), 0);
	assert_true(mw.u == 9);
	assert_true(mw.z > 0);
}

static void u_matches_its_definition_with_ties(void **state)
{
	(void)state;
	uint64_t seed = 7;
	int64_t a[40], b[50];
	for (int round = 0; round < 200; round++) {
		size_t na = 1 + next_random(&seed) % 40, nb = 1 + next_random(&seed) % 50;
		int64_t spread = 1 + (int64_t)(next_random(&seed) % 12); /* small: many ties */
		for (size_t i = 0; i < na; i++)
			a[i] = (int64_t)(next_random(&seed) % (uint64_t)spread);
		for (size_t i = 0; i < nb; i++)
			b[i] = (int64_t)(next_random(&seed) % (uint64_t)spread) + round % 3;
		qsort(a, na, sizeof(a[0]), by_value);
		qsort(b, nb, sizeof(b[0]), by_value);
		struct mann_whitney mw;
		assert_int_equal(compare_mann_whitney(a, na, b, nb, &mw), 0);
		if (fabs(mw.u - u_by_pairs(a, na, b, nb)) > 1e-9)
			fail_msg("round %d: U %.1f, pairs %.1f", round, mw.u, u_by_pairs(a, na, b, nb));
		assert_true(mw.p >= 0 && mw.p <= 1);
	}
}

/* The exact two-sided p-value of U for 8 + 8 distinct values: every way
 * of choosing which 8 of the 16 ranks are a's. */
static double exact_p(double u, double n1, double n2)
{
	unsigned total = 0, extreme = 0;
	double mean = n1 * n2 / 2, observed = fabs(u - mean);
	for (unsigned mask = 0; mask < (1u << 16); mask++) {
		if (__builtin_popcount(mask) != 8)
			continue;
		double ranks = 0;
		for (unsigned r = 0; r < 16; r++)
			if (mask & (1u << r))
				ranks += r + 1;
		double ui = ranks - n1 * (n1 + 1) / 2;
		total++;
		extreme += fabs(ui - mean) >= observed - 1e-9;
	}
	return (double)extreme / total;
}

static void p_close_to_the_exact_one(void **state)
{
	(void)state;
	/* a takes ranks given by `mine`, b the rest, of the values 1..16. */
	static const unsigned masks[] = { 0x00FF, 0x01FE, 0x0F0F, 0x5555, 0x33CC, 0x0EF1, 0x107F };
	for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		int64_t a[8], b[8];
		size_t na = 0, nb = 0;
		for (unsigned r = 0; r < 16; r++) {
			if (masks[m] & (1u << r))
				a[na++] = r + 1;
			else
				b[nb++] = r + 1;
		}
		struct mann_whitney mw;
		assert_int_equal(compare_mann_whitney(a, na, b, nb, &mw), 0);
		double exact = exact_p(mw.u, 8, 8);
		if (fabs(mw.p - exact) > 0.02)
			fail_msg("mask %#x: U %.0f, p %.4f, exact %.4f", masks[m], mw.u, mw.p, exact);
	}
}

static void nothing_to_compare(void **state)
{
	(void)state;
	const int64_t a[] = { 5, 5, 5 }, b[] = { 5, 5 };
	struct mann_whitney mw;
	assert_int_equal(compare_mann_whitney(a, 3, b, 2, &mw), 0);
	assert_true(mw.p == 1.0);
	assert_int_equal(compare_mann_whitney(a, 0, b, 2, &mw), -1);
	assert_true(mw.p == 1.0);
}

static const struct compare_rule rule = { 5.0, 0.05, 0.01, 8 };

/* n values of about `ms`, varied by up to ±pct percent, sorted. */
static int64_t *noisy(size_t n, double ms, double pct, uint64_t seed)
{
	int64_t *v = malloc(n * sizeof(*v));
	assert_non_null(v);
	for (size_t i = 0; i < n; i++) {
		double f = 1.0 + pct / 100.0 * ((double)(next_random(&seed) % 2001) / 1000.0 - 1.0);
		v[i] = (int64_t)(ms * 1e6 * f);
	}
	qsort(v, n, sizeof(*v), by_value);
	return v;
}

static int64_t median(const int64_t *v, size_t n)
{
	return v[(n + 1) / 2 - 1]; /* nearest rank */
}

static void verdicts(void **state)
{
	(void)state;
	struct compare_result r;
	struct compare_side none = { 0, 0, NULL };
	struct compare_side one_ms = { 1, 1000000, NULL };
	struct compare_side ten_pct = { 1, 1100000, NULL };

	assert_int_equal(compare_verdict(&rule, &none, &one_ms, &r), VERDICT_NEW);
	assert_int_equal(compare_verdict(&rule, &one_ms, &none, &r), VERDICT_GONE);
	/* Two single frames: the thresholds alone. */
	assert_int_equal(compare_verdict(&rule, &one_ms, &ten_pct, &r), VERDICT_REGRESSED);
	assert_false(r.tested);
	assert_int_equal(r.change_ns, 100000);
	assert_true(fabs(r.change_pct - 10.0) < 1e-9);
	assert_int_equal(compare_verdict(&rule, &ten_pct, &one_ms, &r), VERDICT_IMPROVED);
	/* 4%: under the relative threshold. */
	struct compare_side four_pct = { 1, 1040000, NULL };
	assert_int_equal(compare_verdict(&rule, &one_ms, &four_pct, &r), VERDICT_UNCHANGED);
	/* 50% of 0.02 ms: under the absolute one. */
	struct compare_side tiny = { 1, 20000, NULL }, tiny_more = { 1, 30000, NULL };
	assert_int_equal(compare_verdict(&rule, &tiny, &tiny_more, &r), VERDICT_UNCHANGED);
	/* A single frame against many: too few to test. */
	int64_t *base = noisy(200, 1.0, 3, 1);
	struct compare_side many = { 200, median(base, 200), base };
	assert_int_equal(compare_verdict(&rule, &one_ms, &many, &r), VERDICT_TOO_FEW);
	assert_string_equal(compare_verdict_name(r.verdict), "too few frames");

	/* 200 frames, 3% noise: 10% slower is a regression, found by the test. */
	int64_t *slower = noisy(200, 1.1, 3, 2);
	struct compare_side cand = { 200, median(slower, 200), slower };
	assert_int_equal(compare_verdict(&rule, &many, &cand, &r), VERDICT_REGRESSED);
	assert_true(r.tested);
	assert_true(r.p < 1e-10);
	assert_int_equal(compare_verdict(&rule, &cand, &many, &r), VERDICT_IMPROVED);
	/* Another draw of the same: unchanged. */
	int64_t *same = noisy(200, 1.0, 3, 3);
	struct compare_side again = { 200, median(same, 200), same };
	assert_int_equal(compare_verdict(&rule, &many, &again, &r), VERDICT_UNCHANGED);

	/* Medians 10% apart but samples that overlap wholly: not significant. */
	int64_t wide_a[8] = { 100000, 200000, 900000, 1000000, 1100000, 5000000, 6000000, 7000000 };
	int64_t wide_b[8] = { 100000, 200000, 900000, 1100000, 1200000, 5000000, 6000000, 7000000 };
	struct compare_side wa = { 8, 1000000, wide_a }, wb = { 8, 1100000, wide_b };
	assert_int_equal(compare_verdict(&rule, &wa, &wb, &r), VERDICT_UNCHANGED);
	assert_true(r.tested);
	assert_true(r.p > 0.5);
	free(base);
	free(slower);
	free(same);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(separated_samples),
		cmocka_unit_test(u_matches_its_definition_with_ties),
		cmocka_unit_test(p_close_to_the_exact_one),
		cmocka_unit_test(nothing_to_compare),
		cmocka_unit_test(verdicts),
	};
	return cmocka_run_group_tests_name("comparing captures", tests, NULL, NULL);
}
