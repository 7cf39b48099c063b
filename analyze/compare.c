/*
 * compare.c: whether a statistic of one capture differs from another's
 * (crumbs diff): the Mann-Whitney U test on the per-frame values of both,
 * and the verdict that a change must earn by its size and, where both
 * sides have enough frames, by the test.
 */
#include "analyze.h"

#include <math.h>
#include <stdlib.h>

/*
 * The ranks of both samples together, in one merge of the sorted arrays:
 * a run of t equal values shares the mean of its ranks, and adds t^3 - t
 * to the ties term of the variance.
 */
int compare_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb,
			 struct mann_whitney *out)
{
	double rank_a = 0, ties = 0;
	size_t i = 0, k = 0, rank = 1;

	*out = (struct mann_whitney){ 0, 0, 1.0 };
	if (na == 0 || nb == 0)
		return -1;
	while (i < na || k < nb) {
		int64_t v = i < na && (k >= nb || a[i] <= b[k]) ? a[i] : b[k];
		size_t in_a = 0, in_b = 0;
		while (i < na && a[i] == v) {
			i++;
			in_a++;
		}
		while (k < nb && b[k] == v) {
			k++;
			in_b++;
		}
		double t = (double)(in_a + in_b);
		/* Ranks rank .. rank + t - 1, each worth their mean. */
		rank_a += (double)in_a * ((double)rank + (t - 1) / 2);
		ties += t * t * t - t;
		rank += in_a + in_b;
	}
	double n1 = (double)na, n2 = (double)nb, n = n1 + n2;
	out->u = rank_a - n1 * (n1 + 1) / 2;
	double mean = n1 * n2 / 2;
	double variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (!(variance > 0)) {
		/* Every value equal: nothing tells the samples apart. */
		out->z = 0;
		out->p = 1.0;
		return 0;
	}
	/* With the continuity correction; two-sided. */
	double d = fabs(out->u - mean) - 0.5;
	out->z = d > 0 ? d / sqrt(variance) : 0;
	if (out->u < mean)
		out->z = -out->z;
	out->p = erfc(fabs(out->z) / sqrt(2.0));
	if (out->p > 1.0)
		out->p = 1.0;
	return 0;
}

const char *compare_verdict_name(enum compare_verdict v)
{
	switch (v) {
	case VERDICT_UNCHANGED: return "unchanged";
	case VERDICT_REGRESSED: return "regressed";
	case VERDICT_IMPROVED: return "improved";
	case VERDICT_NEW: return "new";
	case VERDICT_GONE: return "gone";
	case VERDICT_TOO_FEW: return "too few frames";
	}
	return "?";
}

enum compare_verdict compare_verdict(const struct compare_rule *rule, const struct compare_side *base,
				     const struct compare_side *cand, struct compare_result *out)
{
	*out = (struct compare_result){ VERDICT_UNCHANGED, 0, 0, 1.0, false };
	if (!base->frames && !cand->frames)
		return out->verdict;
	if (!base->frames)
		return out->verdict = VERDICT_NEW;
	if (!cand->frames)
		return out->verdict = VERDICT_GONE;
	out->change_ns = cand->stat_ns - base->stat_ns;
	out->change_pct = base->stat_ns > 0 ? 100.0 * (double)out->change_ns / (double)base->stat_ns :
			  (out->change_ns ? 100.0 : 0.0);
	bool single = base->frames == 1 && cand->frames == 1;
	if (!single && (base->frames < rule->min_frames || cand->frames < rule->min_frames))
		return out->verdict = VERDICT_TOO_FEW;
	bool large = fabs(out->change_pct) > rule->threshold_pct &&
		     (double)llabs(out->change_ns) > rule->min_ms * 1e6;
	if (!large)
		return out->verdict;
	if (!single && base->values && cand->values) {
		struct mann_whitney mw;
		if (compare_mann_whitney(base->values, base->frames, cand->values, cand->frames,
					 &mw) == 0) {
			out->p = mw.p;
			out->tested = true;
			if (!(mw.p < rule->alpha))
				return out->verdict;
		}
	}
	return out->verdict = out->change_ns > 0 ? VERDICT_REGRESSED : VERDICT_IMPROVED;
}
