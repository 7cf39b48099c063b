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

/*
 * Both runs' rows as one tree: a node for each row of the base (by its
 * index), then one for each row of the candidate the base lacks. A
 * candidate's row is the base's row of its kind and name below its
 * parent's: matched so, rows never need their paths, which a deep tree of
 * long names makes long.
 */
struct merged_node {
	uint32_t parent; /* a node, or STATS_NONE */
	uint32_t base;   /* its row in each run, or STATS_NONE */
	uint32_t cand;
	const char *name;
	size_t name_len;
};

struct merged {
	struct merged_node *nodes;
	size_t count;
};

static bool merge_rows(const stats *base, const stats *cand, struct merged *m)
{
	size_t nb = stats_row_count(base), nc = stats_row_count(cand);
	uint32_t *node_of = malloc((nc ? nc : 1) * sizeof(*node_of));
	m->nodes = malloc((nb + nc ? nb + nc : 1) * sizeof(*m->nodes));
	m->count = nb;
	if (!node_of || !m->nodes) {
		free(node_of);
		return false;
	}
	for (size_t i = 0; i < nb; i++) {
		const struct stats_row *r = stats_row(base, i);
		m->nodes[i] = (struct merged_node){ r->parent, (uint32_t)i, STATS_NONE, r->name,
						    r->name_len };
	}
	/* A parent comes before its children. */
	for (size_t i = 0; i < nc; i++) {
		const struct stats_row *r = stats_row(cand, i);
		uint32_t parent = r->parent == STATS_NONE ? STATS_NONE : node_of[r->parent];
		uint32_t b = STATS_NONE;
		if (parent == STATS_NONE || parent < nb)
			b = stats_child(base, parent, r->kind, r->name, r->name_len);
		if (b != STATS_NONE && m->nodes[b].cand == STATS_NONE) {
			m->nodes[b].cand = (uint32_t)i;
			node_of[i] = b;
		} else {
			m->nodes[m->count] = (struct merged_node){ parent, STATS_NONE, (uint32_t)i,
								   r->name, r->name_len };
			node_of[i] = (uint32_t)m->count++;
		}
	}
	free(node_of);
	return true;
}

/* The nodes from the top of node's path down to it; returns how many. */
static size_t merged_chain(const struct merged *m, uint32_t node, uint32_t *chain)
{
	size_t n = 0;
	for (uint32_t x = node; x != STATS_NONE && n < STATS_PATH_MAX; x = m->nodes[x].parent)
		chain[n++] = x;
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = chain[i];
		chain[i] = chain[n - 1 - i];
		chain[n - 1 - i] = t;
	}
	return n;
}

/* The bytes of a path from one of its names on: the names joined by
 * " / ", read one at a time. */
struct path_bytes {
	const struct merged *m;
	const uint32_t *chain;
	size_t n, at, pos; /* chain[at]'s name, and a byte of it or of the " / " after */
};

static int path_byte(struct path_bytes *p)
{
	while (p->at < p->n) {
		const struct merged_node *x = &p->m->nodes[p->chain[p->at]];
		size_t len = x->name_len + (p->at + 1 < p->n ? 3 : 0);
		if (p->pos < len) {
			size_t i = p->pos++;
			return i < x->name_len ? (unsigned char)x->name[i] : " / "[i - x->name_len];
		}
		p->at++;
		p->pos = 0;
	}
	return -1;
}

/* The order of two nodes' paths, as strcmp orders them: from the first
 * names where they part, which is where they can differ. */
static int merged_path_cmp(const struct merged *m, uint32_t a, uint32_t b)
{
	uint32_t ca[STATS_PATH_MAX], cb[STATS_PATH_MAX];
	if (a == b)
		return 0;
	size_t na = merged_chain(m, a, ca), nb = merged_chain(m, b, cb), j = 0;
	while (j < na && j < nb && ca[j] == cb[j])
		j++;
	struct path_bytes pa = { m, ca, na, j, 0 }, pb = { m, cb, nb, j, 0 };
	for (;;) {
		int x = path_byte(&pa), y = path_byte(&pb);
		if (x != y || x < 0)
			return (x > y) - (x < y);
	}
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

/* Frame-time rows first, then by the size of the change, largest first,
 * then by kind and path. */
static int row_cmp(const struct merged *m, const struct compare_row *a, uint32_t node_a,
		   const struct compare_row *b, uint32_t node_b)
{
	bool fa = stats_kind_frame_time(a->kind), fb = stats_kind_frame_time(b->kind);
	if (fa != fb)
		return fa ? -1 : 1;
	if (impact(a) != impact(b))
		return impact(a) > impact(b) ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return merged_path_cmp(m, node_a, node_b);
}

/* Sorts rows, whose nodes are node[], by row_cmp: a merge sort, stable,
 * as qsort cannot pass the tree to the comparison. */
static bool sort_rows(const struct merged *m, struct compare_row *rows, uint32_t *node, size_t n)
{
	size_t *order = malloc((n ? n : 1) * 2 * sizeof(*order));
	struct compare_row *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!order || !sorted) {
		free(order);
		free(sorted);
		return false;
	}
	size_t *from = order, *to = order + n;
	for (size_t i = 0; i < n; i++)
		from[i] = i;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, k = mid, o = lo;
			while (i < mid && k < hi)
				to[o++] = row_cmp(m, &rows[from[k]], node[from[k]], &rows[from[i]],
						  node[from[i]]) < 0 ? from[k++] : from[i++];
			while (i < mid)
				to[o++] = from[i++];
			while (k < hi)
				to[o++] = from[k++];
		}
		size_t *t = from;
		from = to;
		to = t;
	}
	for (size_t i = 0; i < n; i++)
		sorted[i] = rows[from[i]];
	memcpy(rows, sorted, n * sizeof(*rows));
	free(order);
	free(sorted);
	return true;
}

/* ------------------------------------------------------------------------ */
/* Video memory, heap by heap                                               */
/* ------------------------------------------------------------------------ */

/* A heap's high-water has one value a run, so no test: the thresholds
 * alone decide, --threshold's percent and a mebibyte, below which a
 * driver's own allocations come and go. */
static void memory_verdict(const struct compare_rule *rule, struct compare_memory_row *m)
{
	if (!m->in_base || !m->in_cand) {
		m->verdict = m->in_base ? VERDICT_GONE : VERDICT_NEW;
		return;
	}
	uint64_t d = m->cand_high > m->base_high ? m->cand_high - m->base_high
						 : m->base_high - m->cand_high;
	m->change = d > INT64_MAX ? INT64_MAX : (int64_t)d;
	if (m->cand_high < m->base_high)
		m->change = -m->change;
	m->change_pct = m->base_high ? 100.0 * (double)m->change / (double)m->base_high
				     : (m->change ? 100.0 : 0.0);
	bool large = fabs(m->change_pct) > rule->threshold_pct && d > COMPARE_MEMORY_MIN_BYTES;
	m->verdict = !large ? VERDICT_UNCHANGED
		     : m->change > 0 ? VERDICT_REGRESSED : VERDICT_IMPROVED;
}

/* The heaps of both runs, in order of GPU and heap, into out->memory. */
static bool compare_memory(const stats *base, const stats *cand, const struct compare_rule *rule,
			   struct compare_runs *out)
{
	const struct memory_stats *mb = stats_memory(base), *mc = stats_memory(cand);
	size_t n = (size_t)mb->count + mc->count;
	if (!n)
		return true;
	out->memory = calloc(n, sizeof(*out->memory));
	if (!out->memory)
		return false;
	uint32_t i = 0, k = 0;
	while (i < mb->count || k < mc->count) {
		const struct memory_heap_stats *hb = i < mb->count ? &mb->heaps[i] : NULL;
		const struct memory_heap_stats *hc = k < mc->count ? &mc->heaps[k] : NULL;
		if (hb && hc && (hb->gpu != hc->gpu || hb->heap != hc->heap)) {
			bool base_first = hb->gpu < hc->gpu || (hb->gpu == hc->gpu && hb->heap < hc->heap);
			if (base_first)
				hc = NULL;
			else
				hb = NULL;
		}
		const struct memory_series *sb = hb ? memory_heap_series(hb) : NULL;
		const struct memory_series *sc = hc ? memory_heap_series(hc) : NULL;
		i += hb != NULL;
		k += hc != NULL;
		if (!sb && !sc)
			continue;
		struct compare_memory_row *m = &out->memory[out->memory_count++];
		const struct memory_heap_stats *h = hb ? hb : hc;
		*m = (struct compare_memory_row){ .gpu = h->gpu, .heap = h->heap };
		if (sb) {
			m->in_base = true;
			m->base_high = sb->high;
			m->base_growth = memory_series_growth(sb);
		}
		if (sc) {
			m->in_cand = true;
			m->cand_high = sc->high;
			m->cand_growth = memory_series_growth(sc);
		}
		memory_verdict(rule, m);
		out->memory_verdicts[m->verdict]++;
	}
	return true;
}

static int int64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The statistic `stat` of n sorted intervals. */
static int64_t interval_stat(const int64_t *v, size_t n, enum compare_stat stat)
{
	if (stat == COMPARE_MEAN) {
		double sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += (double)v[i];
		return (int64_t)(sum / (double)n + 0.5);
	}
	unsigned p = stat == COMPARE_P95 ? 95 : 50;
	size_t rank = (size_t)(((uint64_t)p * n + 99) / 100);
	return v[rank ? rank - 1 : 0];
}

static int64_t *sorted_intervals(const present_run *r, size_t *n)
{
	const struct present_interval *iv = present_run_intervals(r, n);
	int64_t *v = malloc((*n ? *n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < *n; i++)
		v[i] = iv[i].ns;
	if (*n > 1)
		qsort(v, *n, sizeof(*v), int64_cmp);
	return v;
}

/* The runs' presentation (struct compare_present); false when out of
 * memory. */
static bool compare_presents(const stats *base, const stats *cand, enum compare_stat stat,
			     const struct compare_rule *rule, struct compare_runs *out)
{
	struct compare_present *cp = &out->present;
	const present_run *rb = stats_presents(base), *rc = stats_presents(cand);
	const struct present_summary *pb = present_run_summary(rb), *pc = present_run_summary(rc);
	if (pb->intervals && pc->intervals) {
		size_t nb = 0, nc = 0;
		int64_t *vb = sorted_intervals(rb, &nb);
		int64_t *vc = vb ? sorted_intervals(rc, &nc) : NULL;
		if (!vc) {
			free(vb);
			return false;
		}
		cp->interval = true;
		cp->base_intervals = nb;
		cp->cand_intervals = nc;
		cp->base_ns = interval_stat(vb, nb, stat);
		cp->cand_ns = interval_stat(vc, nc, stat);
		struct compare_side sb = { nb, cp->base_ns, vb }, sc = { nc, cp->cand_ns, vc };
		compare_verdict(rule, &sb, &sc, &cp->interval_result);
		out->verdicts[cp->interval_result.verdict]++;
		free(vb);
		free(vc);
	}
	if (pb->counted && pc->counted) {
		cp->vsyncs = true;
		cp->base_missed = pb->missed_vsyncs;
		cp->cand_missed = pc->missed_vsyncs;
		cp->base_counted = pb->counted;
		cp->cand_counted = pc->counted;
		double scaled = (double)pc->missed_vsyncs * (double)pb->counted / (double)pc->counted;
		double change = scaled - (double)pb->missed_vsyncs;
		struct compare_result *res = &cp->vsync_result;
		*res = (struct compare_result){ VERDICT_UNCHANGED, (int64_t)(change >= 0 ? change + 0.5 :
									     change - 0.5),
						pb->missed_vsyncs ? change * 100.0 / (double)pb->missed_vsyncs :
								    0, 1, false };
		if (change >= 1)
			res->verdict = VERDICT_REGRESSED;
		else if (change <= -1)
			res->verdict = VERDICT_IMPROVED;
		out->verdicts[res->verdict]++;
	}
	return true;
}

int compare_runs(const stats *base, const uint8_t *base_selected, const stats *cand,
		 const uint8_t *cand_selected, enum compare_stat stat,
		 const struct compare_rule *rule, struct compare_runs *out)
{
	struct merged m = { 0 };
	uint32_t *node = NULL;
	int result = -1;

	*out = (struct compare_runs){ 0 };
	out->single = stats_frame_count(base) == 1 && stats_frame_count(cand) == 1;
	if (!merge_rows(base, cand, &m))
		goto out;
	out->rows = malloc((m.count ? m.count : 1) * sizeof(*out->rows));
	node = malloc((m.count ? m.count : 1) * sizeof(*node));
	if (!out->rows || !node)
		goto out;
	for (size_t i = 0; i < m.count; i++) {
		uint32_t rb = m.nodes[i].base, rc = m.nodes[i].cand;
		if (rb != STATS_NONE && base_selected && !base_selected[rb])
			rb = STATS_NONE;
		if (rc != STATS_NONE && cand_selected && !cand_selected[rc])
			rc = STATS_NONE;
		if (rb == STATS_NONE && rc == STATS_NONE)
			continue;
		const struct stats_row *r = stats_row(rb != STATS_NONE ? base : cand,
						      rb != STATS_NONE ? rb : rc);
		struct compare_row *row = &out->rows[out->count];
		struct compare_side sb = side_of(base, rb, stat), sc = side_of(cand, rc, stat);
		*row = (struct compare_row){ r->kind, r->gpu, rb, rc, sb.frames, sc.frames,
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
		node[out->count++] = (uint32_t)i;
	}
	if (sort_rows(&m, out->rows, node, out->count) && compare_memory(base, cand, rule, out) &&
	    compare_presents(base, cand, stat, rule, out))
		result = 0;
out:
	free(m.nodes);
	free(node);
	if (result != 0)
		compare_runs_release(out);
	return result;
}

void compare_runs_release(struct compare_runs *r)
{
	free(r->rows);
	free(r->memory);
	*r = (struct compare_runs){ 0 };
}
