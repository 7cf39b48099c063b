/* SPDX-License-Identifier: MIT */
/*
 * compare.c: whether a statistic of one capture differs from another's
 * (crumbs diff): the Mann-Whitney U test on the per-frame values of both,
 * and the verdict that a change must earn by its size and, where both
 * sides have enough frames, by the test.
 */
#include "analyze.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * The verdict by the sizes of the change alone. Returns true when the
 * Mann-Whitney test is to confirm it (out->verdict is then regressed or
 * improved, and the test may make it unchanged): the change is large and
 * the sides are not two single frames.
 */
static bool verdict_by_size(const struct compare_rule *rule, const struct compare_side *base,
			    const struct compare_side *cand, struct compare_result *out)
{
	*out = (struct compare_result){ VERDICT_UNCHANGED, 0, 0, 1.0, false };
	if (!base->frames && !cand->frames)
		return false;
	if (!base->frames) {
		out->verdict = VERDICT_NEW;
		return false;
	}
	if (!cand->frames) {
		out->verdict = VERDICT_GONE;
		return false;
	}
	out->change_ns = cand->stat_ns - base->stat_ns;
	out->change_pct = base->stat_ns > 0 ? 100.0 * (double)out->change_ns / (double)base->stat_ns :
			  (out->change_ns ? 100.0 : 0.0);
	bool single = base->frames == 1 && cand->frames == 1;
	if (!single && (base->frames < rule->min_frames || cand->frames < rule->min_frames)) {
		out->verdict = VERDICT_TOO_FEW;
		return false;
	}
	bool large = fabs(out->change_pct) > rule->threshold_pct &&
		     (double)llabs(out->change_ns) > rule->min_ms * 1e6;
	if (!large)
		return false;
	out->verdict = out->change_ns > 0 ? VERDICT_REGRESSED : VERDICT_IMPROVED;
	return !single;
}

/* The test of a change verdict_by_size found large: unchanged unless
 * p < alpha. */
static void verdict_by_test(const struct compare_rule *rule, const int64_t *a, size_t na,
			    const int64_t *b, size_t nb, struct compare_result *out)
{
	struct mann_whitney mw;
	if (compare_mann_whitney(a, na, b, nb, &mw) != 0)
		return;
	out->p = mw.p;
	out->tested = true;
	if (!(mw.p < rule->alpha))
		out->verdict = VERDICT_UNCHANGED;
}

enum compare_verdict compare_verdict(const struct compare_rule *rule, const struct compare_side *base,
				     const struct compare_side *cand, struct compare_result *out)
{
	if (verdict_by_size(rule, base, cand, out) && base->values && cand->values)
		verdict_by_test(rule, base->values, base->frames, cand->values, cand->frames, out);
	return out->verdict;
}

/* ------------------------------------------------------------------------ */
/* Two runs, row by row                                                     */
/* ------------------------------------------------------------------------ */

/* A row of one side, for matching by kind and path. */
struct keyed_row {
	enum stats_kind kind;
	const char *path;
	uint32_t row;
};

static int keyed_cmp(const void *pa, const void *pb)
{
	const struct keyed_row *a = pa, *b = pb;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return strcmp(a->path, b->path);
}

/* The selected rows of s, sorted by kind and path; NULL when out of memory. */
static struct keyed_row *keyed_rows(const stats *s, const uint8_t *selected, size_t *count)
{
	size_t n = stats_row_count(s), k = 0;
	struct keyed_row *rows = malloc((n ? n : 1) * sizeof(*rows));
	if (!rows)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!selected || selected[i]) {
			const struct stats_row *r = stats_row(s, i);
			rows[k++] = (struct keyed_row){ r->kind, r->path, (uint32_t)i };
		}
	qsort(rows, k, sizeof(*rows), keyed_cmp);
	*count = k;
	return rows;
}

static int64_t statistic(const struct stats_summary *t, enum compare_stat stat)
{
	switch (stat) {
	case COMPARE_MEAN:
		return (int64_t)llround(t->mean_ns);
	case COMPARE_P95:
		return t->p95_ns;
	case COMPARE_MEDIAN:
		break;
	}
	return t->median_ns;
}

/* One side of a row: its frames and statistic; no values yet. */
static struct compare_side side_of(const stats *s, uint32_t row, enum compare_stat stat)
{
	if (row == STATS_NONE)
		return (struct compare_side){ 0, 0, NULL };
	const struct stats_row *r = stats_row(s, row);
	return (struct compare_side){ r->time.frames, statistic(&r->time, stat), NULL };
}

/* A row's per-frame values, sorted (malloc'd: the caller frees them), or
 * NULL when out of memory. *n: how many. */
static int64_t *sorted_values(const stats *s, uint32_t row, uint64_t frames, size_t *n)
{
	int64_t *v = malloc((frames ? frames : 1) * sizeof(*v));
	if (v)
		*n = stats_row_values(s, row, false, true, v);
	return v;
}

static int64_t impact(const struct compare_row *r)
{
	return llabs(r->cand_ns - r->base_ns);
}

/* Frame-time rows first, then by the size of the change, largest first. */
static int row_cmp(const void *pa, const void *pb)
{
	const struct compare_row *a = pa, *b = pb;
	bool fa = a->kind == STATS_GPU, fb = b->kind == STATS_GPU;
	if (fa != fb)
		return fa ? -1 : 1;
	if (impact(a) != impact(b))
		return impact(a) > impact(b) ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return strcmp(a->path, b->path);
}

int compare_runs(const stats *base, const uint8_t *base_selected, const stats *cand,
		 const uint8_t *cand_selected, enum compare_stat stat,
		 const struct compare_rule *rule, struct compare_runs *out)
{
	size_t nb = 0, nc = 0;
	struct keyed_row *kb = keyed_rows(base, base_selected, &nb);
	struct keyed_row *kc = keyed_rows(cand, cand_selected, &nc);
	int result = -1;

	*out = (struct compare_runs){ 0 };
	out->single = stats_frame_count(base) == 1 && stats_frame_count(cand) == 1;
	out->rows = malloc((nb + nc ? nb + nc : 1) * sizeof(*out->rows));
	if (!kb || !kc || !out->rows)
		goto out;
	for (size_t i = 0, k = 0; i < nb || k < nc;) {
		int c = i == nb ? 1 : k == nc ? -1 : keyed_cmp(&kb[i], &kc[k]);
		uint32_t rb = c <= 0 ? kb[i].row : STATS_NONE;
		uint32_t rc = c >= 0 ? kc[k].row : STATS_NONE;
		const struct stats_row *r = stats_row(rb != STATS_NONE ? base : cand,
						      rb != STATS_NONE ? rb : rc);
		struct compare_row *row = &out->rows[out->count];
		struct compare_side sb = side_of(base, rb, stat), sc = side_of(cand, rc, stat);
		*row = (struct compare_row){ r->kind, r->gpu, r->path, rb, rc, sb.frames, sc.frames,
					     sb.stat_ns, sc.stat_ns, { 0 } };
		/* The values are fetched and sorted only where the test decides:
		 * most rows change too little to need them. */
		if (verdict_by_size(rule, &sb, &sc, &row->result)) {
			size_t base_n = 0, cand_n = 0;
			int64_t *vb = sorted_values(base, rb, sb.frames, &base_n);
			int64_t *vc = vb ? sorted_values(cand, rc, sc.frames, &cand_n) : NULL;
			if (vc)
				verdict_by_test(rule, vb, base_n, vc, cand_n, &row->result);
			free(vb);
			free(vc);
			if (!vc)
				goto out;
		}
		out->verdicts[row->result.verdict]++;
		out->count++;
		i += c <= 0;
		k += c >= 0;
	}
	qsort(out->rows, out->count, sizeof(*out->rows), row_cmp);
	result = 0;
out:
	free(kb);
	free(kc);
	if (result != 0)
		compare_runs_release(out);
	return result;
}

void compare_runs_release(struct compare_runs *r)
{
	free(r->rows);
	*r = (struct compare_runs){ 0 };
}
