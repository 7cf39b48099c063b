/* SPDX-License-Identifier: MIT */
/*
 * stats_counters.c: --counters of crumbs stats and crumbs diff: each
 * scope's pipeline statistics and vendor counters over a run's frames as
 * medians, and of two runs which scopes do more or less work, as text,
 * CSV, JSON and Markdown.
 */
#include "report_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The statistics the tables show, of the eleven; CSV and JSON give all. */
static const enum crumbs_pipeline_counter shown_counters[] = {
	CRUMBS_COUNTER_IA_PRIMITIVES, CRUMBS_COUNTER_VS_INVOCATIONS,
	CRUMBS_COUNTER_CLIP_PRIMITIVES, CRUMBS_COUNTER_FS_INVOCATIONS,
	CRUMBS_COUNTER_CS_INVOCATIONS,
};
#define SHOWN_COUNTERS (sizeof(shown_counters) / sizeof(shown_counters[0]))

/* The statistics' keys in CSV and JSON, in enum crumbs_pipeline_counter's
 * order: those crumbs report --counters gives them. */
static const char *const counter_keys[CRUMBS_PIPELINE_COUNTERS] = {
	"ia_vertices", "ia_primitives", "vs_invocations", "gs_invocations", "gs_primitives",
	"clipping_invocations", "clipping_primitives", "fs_invocations", "tcs_patches",
	"tes_invocations", "cs_invocations"
};

bool counters_row_selected(const struct report_settings *rs, const struct capture_meta *meta,
			   const struct counter_series *s)
{
	if (s->queue >= meta->queue_count ||
	    (rs->gpu >= 0 && meta->queues[s->queue].gpu != (uint32_t)rs->gpu) ||
	    !report_selects_queue(rs, meta->queues[s->queue].name))
		return false;
	/* Its depth n below the queue, and m that of the first name --root
	 * matches (0 without --root): --max-depth counts from the match, as
	 * the statistics do. */
	uint32_t n = 0, m = rs->root_count ? UINT32_MAX : 0;
	for (const char *p = s->path, *end = s->path + s->path_len; p < end;) {
		const char *sep = strstr(p, " / ");
		const char *next = sep && sep < end ? sep : end;
		n++;
		if (m == UINT32_MAX && filter_match_root(rs->filter, p, (size_t)(next - p)))
			m = n;
		p = next == end ? end : next + 3;
	}
	if (m == UINT32_MAX)
		return false;
	return rs->max_depth < 0 || n - m <= (uint32_t)rs->max_depth;
}

/* ------------------------------------------------------------------------ */
/* What the rows hold                                                       */
/* ------------------------------------------------------------------------ */

/* A row's path as crumbs stats names its rows in CSV and JSON: "GPU 0 /
 * Graphics 0 / Frame # / Base Pass". */
static void full_path(struct sbuf *b, const struct capture_meta *meta,
		      const struct counter_series *s)
{
	const struct capture_queue *q = &meta->queues[s->queue];
	sbuf_addf(b, "GPU %u / %s%s", q->gpu, q->name, s->path_len ? " / " : "");
	sbuf_add(b, s->path, s->path_len);
}

/* Its depth below the queue, as crumbs stats counts a scope's (the
 * queue's own row 0). */
static uint32_t path_depth(const struct counter_series *s)
{
	if (!s->path_len)
		return 0;
	uint32_t n = 1;
	for (const char *p = s->path, *end = s->path + s->path_len;
	     (p = strstr(p, " / ")) && p < end; p += 3)
		n++;
	return n;
}

/* The set of s's vendor counters, and how many of them s can hold; NULL
 * when it has none, or the capture does not define its set. */
static const struct capture_counter_set *vendor_set(const struct capture_meta *meta,
						    const struct counter_series *s, uint32_t *count)
{
	const struct capture_counter_set *set =
		s->vendor_set ? meta_counter_set(meta, s->vendor_set) : NULL;
	*count = set ? (s->vendor_len < set->count ? s->vendor_len : set->count) : 0;
	return set;
}

/* v in 10^-scale units, as a decimal: exact, and a JSON number too. */
static void add_scaled(struct sbuf *b, int64_t v, uint32_t scale)
{
	char text[48];
	int len = text_counter_value(text, sizeof(text), v < 0 ? 0 : (uint64_t)v, scale);
	sbuf_add(b, text, (size_t)len);
}

/* A vendor counter's name for text, with its unit where it has one. */
static void vendor_name(struct sbuf *b, const struct capture_counter *c)
{
	sbuf_adds(b, c->name);
	if (c->unit)
		sbuf_addf(b, " (%s)", counter_unit_name(c->unit));
}

/* Text from the capture for the terminal: control characters and what
 * would reorder a line escaped (and, with --ascii, all past ASCII). */
static void text_of(struct sbuf *b, const struct report_settings *rs, const char *s, size_t len)
{
	utf8_escape(b, s, len, rs->ascii);
}

/* "Graphics 0 / Frame # / Base Pass", escaped. */
static void text_path(struct sbuf *b, const struct report_settings *rs,
		      const struct capture_meta *meta, const struct counter_series *s)
{
	sbuf_addf(b, "%s%s", meta->queues[s->queue].name, s->path_len ? " / " : "");
	text_of(b, rs, s->path, s->path_len);
}

/* ------------------------------------------------------------------------ */
/* crumbs stats --counters                                                  */
/* ------------------------------------------------------------------------ */

/* The vendor counters of the selected rows, a line each: its median over
 * the frames that counted it (a run takes one pass of a set a frame). */
static int vendor_text(struct sbuf *b, const struct report_settings *rs,
		       const struct capture_meta *meta, struct counter_runs *r,
		       const struct report_sink *sink)
{
	bool head = false;
	int result = 0;
	for (size_t i = 0; i < r->len && result == 0; i++) {
		struct counter_series *s = &r->rows[i];
		if (b->len > 60000)
			result = sbuf_emit(sink, b);
		uint32_t count;
		const struct capture_counter_set *set = vendor_set(meta, s, &count);
		if (!set || !counters_row_selected(rs, meta, s))
			continue;
		if (!head)
			sbuf_adds(b, "\nvendor counters: each scope's median per frame, over the frames "
				     "whose pass counted it\n    Frames        Median  Scope: counter\n");
		head = true;
		for (uint32_t k = 0; k < count; k++) {
			int64_t median;
			if (!counter_series_vendor_median(s, k, &median))
				continue;
			struct sbuf v = { 0 };
			add_scaled(&v, median, set->counters[k].scale);
			sbuf_addf(b, "  %8llu  %12s  ", (unsigned long long)s->vendor[k].frames,
				  v.data ? v.data : "");
			if (v.failed)
				b->failed = true;
			sbuf_release(&v);
			text_path(b, rs, meta, s);
			sbuf_adds(b, ": ");
			v = (struct sbuf){ 0 };
			vendor_name(&v, &set->counters[k]);
			text_of(b, rs, v.data ? v.data : "", v.len);
			if (v.failed)
				b->failed = true;
			sbuf_release(&v);
			sbuf_adds(b, "\n");
		}
		if (s->vendor_unknown_frames) {
			sbuf_addf(b, "  %8s  %12s  ", "-", "?");
			text_path(b, rs, meta, s);
			sbuf_addf(b, ": set %u unknown in %llu frame%s\n", set->set,
				  (unsigned long long)s->vendor_unknown_frames,
				  s->vendor_unknown_frames == 1 ? "" : "s");
		}
	}
	return result;
}

int stats_counters_print(const struct report_settings *rs, struct counter_runs *r,
			 const struct capture_meta *meta, const struct report_sink *sink)
{
	struct sbuf b = { 0 };
	int result = 0;
	sbuf_adds(&b, "\npipeline statistics: each scope's median per frame, over the frames "
		      "that counted it\n");
	if (!r->len)
		sbuf_adds(&b, "  (no frame counted any: the capture was taken without them)\n");
	else {
		sbuf_addf(&b, "  %8s", "Frames");
		for (size_t k = 0; k < SHOWN_COUNTERS; k++)
			sbuf_addf(&b, "  %12s", counter_short_name(shown_counters[k]));
		sbuf_adds(&b, "  Scope\n");
	}
	for (size_t i = 0; i < r->len && result == 0; i++) {
		struct counter_series *s = &r->rows[i];
		if (!counters_row_selected(rs, meta, s))
			continue;
		if (b.len > 60000)
			result = sbuf_emit(sink, &b);
		sbuf_addf(&b, "  %8llu", (unsigned long long)s->frames);
		for (size_t k = 0; k < SHOWN_COUNTERS; k++) {
			if (s->frames && (s->mask & (1u << shown_counters[k])))
				sbuf_addf(&b, "  %12lld",
					  (long long)counter_series_median(s, shown_counters[k]));
			else
				sbuf_addf(&b, "  %12s", s->frames ? "-" : "?");
		}
		sbuf_adds(&b, "  ");
		text_path(&b, rs, meta, s);
		if (s->unknown_frames)
			sbuf_addf(&b, " (unknown in %llu frame%s)",
				  (unsigned long long)s->unknown_frames,
				  s->unknown_frames == 1 ? "" : "s");
		sbuf_adds(&b, "\n");
	}
	if (result == 0)
		result = vendor_text(&b, rs, meta, r, sink);
	if (r->left_out)
		sbuf_addf(&b, "  (%llu scopes past 65536 rows or 64 MiB of paths left out)\n",
			  (unsigned long long)r->left_out);
	if (result == 0)
		result = r->failed || b.failed ? -1 : sbuf_emit(sink, &b);
	sbuf_release(&b);
	return result;
}

const char stats_counters_csv_columns[] = ",counter,counter_unit,counter_median,"
					  "counter_unknown_frames";
const char stats_counters_csv_empty[] = ",,,,";

/* A counter row's first columns, those of a row of times up to its
 * frames, then the times', spikes' and memory's columns empty. */
static void csv_lead(struct sbuf *b, const char *kind, const struct capture_meta *meta,
		     const struct counter_series *s, uint64_t frames, struct sbuf *path)
{
	const struct capture_queue *q = &meta->queues[s->queue];
	sbuf_addf(b, "%s,%u,", kind, q->gpu);
	csv_field(b, q->name, strlen(q->name));
	sbuf_adds(b, ",");
	path->len = 0;
	full_path(path, meta, s);
	if (path->failed)
		b->failed = true;
	csv_field(b, path->data ? path->data : "", path->len);
	sbuf_addf(b, ",%u,%llu", path_depth(s), (unsigned long long)frames);
	/* calls_per_frame to share_pct, the spikes' four, the memory's eight. */
	for (int i = 0; i < 19 + 4 + 8; i++)
		sbuf_adds(b, ",");
}

int stats_counters_csv(struct sbuf *b, const struct report_settings *rs,
		       const struct capture_meta *meta, struct counter_runs *r,
		       const struct report_sink *sink)
{
	struct sbuf path = { 0 };
	int result = 0;
	for (size_t i = 0; i < r->len && result == 0; i++) {
		struct counter_series *s = &r->rows[i];
		if (!counters_row_selected(rs, meta, s))
			continue;
		bool any = false;
		for (uint32_t k = 0; k < CRUMBS_PIPELINE_COUNTERS; k++) {
			if (!s->frames || !(s->mask & (1u << k)))
				continue;
			csv_lead(b, "counter", meta, s, s->frames, &path);
			sbuf_addf(b, ",%s,,%lld,%llu\n", counter_keys[k],
				  (long long)counter_series_median(s, (enum crumbs_pipeline_counter)k),
				  (unsigned long long)s->unknown_frames);
			any = true;
		}
		if (!any && s->unknown_frames) {
			/* Only unknown: a row that says so, without a median. */
			csv_lead(b, "counter", meta, s, 0, &path);
			sbuf_addf(b, ",,,,%llu\n", (unsigned long long)s->unknown_frames);
		}
		uint32_t count;
		const struct capture_counter_set *set = vendor_set(meta, s, &count);
		for (uint32_t k = 0; set && k < count; k++) {
			int64_t median;
			if (!counter_series_vendor_median(s, k, &median))
				continue;
			const struct capture_counter *c = &set->counters[k];
			csv_lead(b, "vendor_counter", meta, s, s->vendor[k].frames, &path);
			sbuf_adds(b, ",");
			csv_field(b, c->name, strlen(c->name));
			sbuf_addf(b, ",%s,", counter_unit_name(c->unit));
			add_scaled(b, median, c->scale);
			sbuf_addf(b, ",%llu\n", (unsigned long long)s->vendor_unknown_frames);
		}
		if (b->len > 60000)
			result = sbuf_emit(sink, b);
	}
	sbuf_release(&path);
	return r->failed ? -1 : result;
}

int stats_counters_json(struct sbuf *b, const struct report_settings *rs,
			const struct capture_meta *meta, struct counter_runs *r,
			const struct report_sink *sink)
{
	struct sbuf path = { 0 };
	bool first = true;
	int result = 0;
	sbuf_addf(b, ",\"counters_left_out\":%llu,\"counters\":[", (unsigned long long)r->left_out);
	for (size_t i = 0; i < r->len && result == 0; i++) {
		struct counter_series *s = &r->rows[i];
		if (!counters_row_selected(rs, meta, s))
			continue;
		if (b->len > 60000)
			result = sbuf_emit(sink, b);
		const struct capture_queue *q = &meta->queues[s->queue];
		sbuf_addf(b, "%s\n{\"gpu\":%u,\"queue\":", first ? "" : ",", q->gpu);
		first = false;
		json_string(b, q->name, strlen(q->name));
		sbuf_adds(b, ",\"path\":");
		path.len = 0;
		full_path(&path, meta, s);
		if (path.failed)
			b->failed = true;
		json_string(b, path.data ? path.data : "", path.len);
		sbuf_addf(b, ",\"depth\":%u,\"frames\":%llu,\"unknown_frames\":%llu,\"medians\":{",
			  path_depth(s), (unsigned long long)s->frames,
			  (unsigned long long)s->unknown_frames);
		for (uint32_t k = 0; k < CRUMBS_PIPELINE_COUNTERS; k++) {
			sbuf_addf(b, "%s\"%s\":", k ? "," : "", counter_keys[k]);
			if (s->frames && (s->mask & (1u << k)))
				sbuf_addf(b, "%lld", (long long)counter_series_median(
							     s, (enum crumbs_pipeline_counter)k));
			else
				sbuf_adds(b, "null");
		}
		sbuf_adds(b, "},\"vendor\":");
		uint32_t count;
		const struct capture_counter_set *set = vendor_set(meta, s, &count);
		if (!set) {
			sbuf_adds(b, "null}");
			continue;
		}
		sbuf_addf(b, "{\"set\":%u,\"unknown_frames\":%llu,\"counters\":[", set->set,
			  (unsigned long long)s->vendor_unknown_frames);
		bool later = false;
		for (uint32_t k = 0; k < count; k++) {
			int64_t median;
			if (!counter_series_vendor_median(s, k, &median))
				continue;
			const struct capture_counter *c = &set->counters[k];
			sbuf_adds(b, later ? ",{\"name\":" : "{\"name\":");
			later = true;
			json_string(b, c->name, strlen(c->name));
			sbuf_adds(b, ",\"category\":");
			json_string(b, c->category, strlen(c->category));
			sbuf_addf(b, ",\"unit\":\"%s\",\"pass\":%u,\"frames\":%llu,\"median\":",
				  counter_unit_name(c->unit), c->group + 1,
				  (unsigned long long)s->vendor[k].frames);
			add_scaled(b, median, c->scale);
			sbuf_adds(b, "}");
		}
		sbuf_adds(b, "]}}");
	}
	sbuf_adds(b, "\n]");
	sbuf_release(&path);
	return r->failed ? -1 : result;
}

int stats_counters_markdown(struct sbuf *b, const struct report_settings *rs,
			    const struct capture_meta *meta, struct counter_runs *r,
			    const struct report_sink *sink)
{
	int result = 0;
	sbuf_adds(b, "\nPipeline statistics: each scope's median per frame, over the frames that "
		     "counted it.\n\n");
	if (!r->len) {
		sbuf_adds(b, "No frame counted any: the capture was taken without them.\n");
		return r->failed ? -1 : 0;
	}
	sbuf_adds(b, "| Scope | Counter | Frames | Median |\n|---|---|--:|--:|\n");
	for (size_t i = 0; i < r->len && result == 0; i++) {
		struct counter_series *s = &r->rows[i];
		if (!counters_row_selected(rs, meta, s))
			continue;
		if (b->len > 60000)
			result = sbuf_emit(sink, b);
		struct sbuf path = { 0 };
		sbuf_addf(&path, "%s / ", meta->queues[s->queue].name);
		sbuf_add(&path, s->path, s->path_len);
		const char *p = path.data ? path.data : "";
		for (size_t k = 0; k < SHOWN_COUNTERS; k++) {
			if (!s->frames || !(s->mask & (1u << shown_counters[k])))
				continue;
			sbuf_adds(b, "| ");
			md_text(b, p, path.len);
			sbuf_addf(b, " | %s | %llu | %lld |\n", counter_name(shown_counters[k]),
				  (unsigned long long)s->frames,
				  (long long)counter_series_median(s, shown_counters[k]));
		}
		if (s->unknown_frames) {
			sbuf_adds(b, "| ");
			md_text(b, p, path.len);
			sbuf_addf(b, " | pipeline statistics | %llu | unknown in %llu |\n",
				  (unsigned long long)s->frames, (unsigned long long)s->unknown_frames);
		}
		uint32_t count;
		const struct capture_counter_set *set = vendor_set(meta, s, &count);
		for (uint32_t k = 0; set && k < count; k++) {
			int64_t median;
			if (!counter_series_vendor_median(s, k, &median))
				continue;
			struct sbuf name = { 0 };
			vendor_name(&name, &set->counters[k]);
			sbuf_adds(b, "| ");
			md_text(b, p, path.len);
			sbuf_adds(b, " | ");
			md_text(b, name.data ? name.data : "", name.len);
			sbuf_addf(b, " | %llu | ", (unsigned long long)s->vendor[k].frames);
			add_scaled(b, median, set->counters[k].scale);
			sbuf_adds(b, " |\n");
			if (name.failed)
				b->failed = true;
			sbuf_release(&name);
		}
		if (path.failed)
			b->failed = true;
		sbuf_release(&path);
	}
	if (r->left_out)
		sbuf_addf(b, "\n%llu scopes past 65536 rows or 64 MiB of paths left out.\n",
			  (unsigned long long)r->left_out);
	return r->failed ? -1 : result;
}

/* ------------------------------------------------------------------------ */
/* crumbs diff --counters                                                   */
/* ------------------------------------------------------------------------ */

/* The statistics compared: what a pass does more or less of. */
static const enum crumbs_pipeline_counter compared_counters[] = {
	CRUMBS_COUNTER_IA_PRIMITIVES, CRUMBS_COUNTER_VS_INVOCATIONS,
	CRUMBS_COUNTER_CLIP_PRIMITIVES, CRUMBS_COUNTER_FS_INVOCATIONS,
	CRUMBS_COUNTER_CS_INVOCATIONS,
};
#define COMPARED_COUNTERS (sizeof(compared_counters) / sizeof(compared_counters[0]))

enum counter_verdict { COUNTER_SAME, COUNTER_MORE, COUNTER_LESS };
static const char *const counter_verdicts[] = { "same", "more", "less" };

/* One statistic or vendor counter of a scope in both runs. */
struct counter_change {
	struct counter_series *x, *y;    /* base's row, candidate's */
	const struct capture_counter *vendor; /* the base's vendor counter; NULL: statistic k */
	uint32_t k, ck;                  /* statistic, or the vendor counter in each set */
	uint64_t base_frames, cand_frames;
	int64_t mb, mc;                  /* medians */
	double pct;
	bool tested;                     /* both sides had --min-frames frames */
	double p;
	enum counter_verdict verdict;
};

/* The candidate's row of base row b: the same path on the queue of the
 * same name. */
static struct counter_series *counterpart(const struct counter_series *b,
					  const struct capture_meta *bm, struct counter_runs *cand,
					  const struct capture_meta *cm)
{
	if (b->queue >= bm->queue_count)
		return NULL;
	const char *name = bm->queues[b->queue].name;
	for (uint32_t q = 0; q < cm->queue_count; q++)
		if (strcmp(cm->queues[q].name, name) == 0) {
			const struct counter_series *c =
				counter_runs_find(cand, q, b->path, b->path_len);
			/* Found in cand's own rows, which the caller may sort. */
			return c ? &cand->rows[c - cand->rows] : NULL;
		}
	return NULL;
}

/* The verdict on two sorted samples, as the text has always judged:
 * their medians apart by more than --threshold percent and, with
 * --min-frames frames a side, the Mann-Whitney test below --alpha. */
static void judge(const struct diff_settings *d, const int64_t *a, uint64_t na, const int64_t *b,
		  uint64_t nb, struct counter_change *c)
{
	c->base_frames = na;
	c->cand_frames = nb;
	c->mb = a[na / 2];
	c->mc = b[nb / 2];
	/* In doubles: hostile medians near INT64_MAX must not overflow. */
	double change = (double)c->mc - (double)c->mb;
	c->pct = c->mb ? 100.0 * change / (double)c->mb : c->mc ? 100.0 : 0.0;
	c->tested = na >= d->rule.min_frames && nb >= d->rule.min_frames;
	c->p = 1;
	if (c->tested) {
		struct mann_whitney mw = { 0, 0, 1 };
		if (compare_mann_whitney(a, na, b, nb, &mw) == 0)
			c->p = mw.p;
		else
			c->tested = false;
	}
	c->verdict = COUNTER_SAME;
	if (c->mb == c->mc || (c->pct < 0 ? -c->pct : c->pct) <= d->rule.threshold_pct ||
	    (c->tested && c->p >= d->rule.alpha) ||
	    (na >= d->rule.min_frames && nb >= d->rule.min_frames && !c->tested))
		return;
	c->verdict = c->mc > c->mb ? COUNTER_MORE : COUNTER_LESS;
}

/*
 * Every statistic and vendor counter both runs counted of the selected
 * scopes, judged one at a time in the base's order (two runs at the
 * limits compare millions: none is kept). Zero-initialised but d and dc
 * is at the start.
 */
struct change_iter {
	const struct diff_settings *d;
	const struct diff_counters *dc;
	size_t row;                  /* the base's next row */
	struct counter_series *x, *y; /* the rows being compared; NULL: none */
	uint32_t step;               /* of x: a statistic of compared_counters,
				      * then vendor counter step - COMPARED_COUNTERS */
};

/* The next change into *c; false at the end. */
static bool change_next(struct change_iter *it, struct counter_change *c)
{
	const struct diff_counters *dc = it->dc;
	for (;;) {
		if (!it->x) {
			if (it->row >= dc->base->len)
				return false;
			struct counter_series *x = &dc->base->rows[it->row++];
			struct counter_series *y =
				counterpart(x, dc->base_meta, dc->cand, dc->cand_meta);
			if (!y || !counters_row_selected(&it->d->stats.report, dc->base_meta, x))
				continue;
			counter_series_sort(x);
			counter_series_sort(y);
			it->x = x;
			it->y = y;
			it->step = 0;
		}
		struct counter_series *x = it->x, *y = it->y;
		uint32_t step = it->step++;
		memset(c, 0, sizeof(*c));
		c->x = x;
		c->y = y;
		if (step < COMPARED_COUNTERS) {
			enum crumbs_pipeline_counter k = compared_counters[step];
			if (!x->frames || !y->frames || !(x->mask & y->mask & (1u << k)))
				continue;
			c->k = k;
			judge(it->d, x->values[k], x->frames, y->values[k], y->frames, c);
			return true;
		}
		uint32_t k = step - COMPARED_COUNTERS, xn, yn;
		const struct capture_counter_set *xs = vendor_set(dc->base_meta, x, &xn);
		const struct capture_counter_set *ys = vendor_set(dc->cand_meta, y, &yn);
		if (!xs || !ys || k >= xn) {
			it->x = NULL;
			continue;
		}
		const struct capture_counter *xc = &xs->counters[k];
		if (!x->vendor[k].frames)
			continue;
		/* The candidate's counter of the same name, unit and scale: the
		 * sets of two runs may differ in order. */
		uint32_t ck = 0;
		while (ck < yn && (strcmp(ys->counters[ck].name, xc->name) != 0 ||
				   ys->counters[ck].unit != xc->unit ||
				   ys->counters[ck].scale != xc->scale))
			ck++;
		if (ck == yn || !y->vendor[ck].frames)
			continue;
		c->vendor = xc;
		c->k = k;
		c->ck = ck;
		judge(it->d, x->vendor[k].values, x->vendor[k].frames, y->vendor[ck].values,
		      y->vendor[ck].frames, c);
		return true;
	}
}

/* A median of a change, a vendor counter's in its units. */
static void change_value(struct sbuf *b, const struct counter_change *c, int64_t v)
{
	if (c->vendor)
		add_scaled(b, v, c->vendor->scale);
	else
		sbuf_addf(b, "%lld", (long long)v);
}

/* What changed, for text and Markdown: "fragment shader invocations",
 * "Memory Traffic (bytes)". */
static void change_counter(struct sbuf *b, const struct counter_change *c)
{
	if (c->vendor)
		vendor_name(b, c->vendor);
	else
		sbuf_adds(b, counter_name((enum crumbs_pipeline_counter)c->k));
}

int diff_counters_print(const struct diff_settings *d, const struct diff_counters *dc,
			const struct report_sink *sink)
{
	struct sbuf b = { 0 };
	struct change_iter it = { .d = d, .dc = dc };
	struct counter_change c;
	size_t changed = 0;
	int result = 0;
	sbuf_addf(&b, "\npipeline statistics whose median per frame changed by more than %g%%:\n",
		  d->rule.threshold_pct);
	while (result == 0 && change_next(&it, &c)) {
		if (c.verdict == COUNTER_SAME)
			continue;
		changed++;
		sbuf_adds(&b, "  ");
		text_path(&b, &d->stats.report, dc->base_meta, c.x);
		sbuf_adds(&b, ": ");
		struct sbuf name = { 0 };
		change_counter(&name, &c);
		text_of(&b, &d->stats.report, name.data ? name.data : "", name.len);
		if (name.failed)
			b.failed = true;
		sbuf_release(&name);
		sbuf_adds(&b, " ");
		change_value(&b, &c, c.mb);
		sbuf_adds(&b, " -> ");
		change_value(&b, &c, c.mc);
		sbuf_addf(&b, " (%+.1f%%", c.pct);
		if (c.tested)
			sbuf_addf(&b, ", p %.2g", c.p);
		sbuf_addf(&b, ") %s\n", counter_verdicts[c.verdict]);
		if (b.len > 60000)
			result = sbuf_emit(sink, &b);
	}
	if (!changed)
		sbuf_adds(&b, "  none\n");
	if (result == 0)
		result = dc->base->failed || dc->cand->failed || b.failed ? -1 : sbuf_emit(sink, &b);
	sbuf_release(&b);
	return result;
}

const char diff_counters_csv_columns[] = ",counter,counter_unit,base_median,candidate_median";
const char diff_counters_csv_empty[] = ",,,,";

int diff_counters_csv(const struct diff_settings *d, const struct diff_counters *dc,
		      struct sbuf *b, const struct report_sink *sink)
{
	struct change_iter it = { .d = d, .dc = dc };
	struct counter_change ch, *c = &ch;
	struct sbuf path = { 0 };
	int result = 0;
	while (result == 0 && change_next(&it, c)) {
		const struct capture_queue *q = &dc->base_meta->queues[c->x->queue];
		sbuf_addf(b, "%s,%u,", c->vendor ? "vendor_counter" : "counter", q->gpu);
		path.len = 0;
		full_path(&path, dc->base_meta, c->x);
		if (path.failed)
			b->failed = true;
		csv_field(b, path.data ? path.data : "", path.len);
		/* No times: the change in percent, p and the verdict. */
		sbuf_addf(b, ",%llu,%llu,,,,%.6f,", (unsigned long long)c->base_frames,
			  (unsigned long long)c->cand_frames, c->pct);
		if (c->tested)
			sbuf_addf(b, "%.6g", c->p);
		sbuf_addf(b, ",%s,", counter_verdicts[c->verdict]);
		if (c->vendor) {
			csv_field(b, c->vendor->name, strlen(c->vendor->name));
			sbuf_addf(b, ",%s,", counter_unit_name(c->vendor->unit));
		} else {
			sbuf_addf(b, "%s,,", counter_keys[c->k]);
		}
		change_value(b, c, c->mb);
		sbuf_adds(b, ",");
		change_value(b, c, c->mc);
		sbuf_adds(b, "\n");
		if (b->len > 60000)
			result = sbuf_emit(sink, b);
	}
	sbuf_release(&path);
	return dc->base->failed || dc->cand->failed ? -1 : result;
}

int diff_counters_json(const struct diff_settings *d, const struct diff_counters *dc,
		       struct sbuf *b, const struct report_sink *sink)
{
	struct change_iter it = { .d = d, .dc = dc };
	struct counter_change ch, *c = &ch;
	struct sbuf path = { 0 };
	size_t counts[3] = { 0, 0, 0 }, n = 0;
	int result = 0;
	sbuf_adds(b, ",\n \"counters\": [");
	while (result == 0 && change_next(&it, c)) {
		const struct capture_queue *q = &dc->base_meta->queues[c->x->queue];
		counts[c->verdict]++;
		sbuf_addf(b, "%s\n  {\"kind\": \"%s\", \"gpu\": %u, \"queue\": ", n++ ? "," : "",
			  c->vendor ? "vendor_counter" : "counter", q->gpu);
		json_string(b, q->name, strlen(q->name));
		sbuf_adds(b, ", \"path\": ");
		path.len = 0;
		full_path(&path, dc->base_meta, c->x);
		if (path.failed)
			b->failed = true;
		json_string(b, path.data ? path.data : "", path.len);
		sbuf_adds(b, ", \"counter\": ");
		if (c->vendor) {
			json_string(b, c->vendor->name, strlen(c->vendor->name));
			sbuf_addf(b, ", \"unit\": \"%s\"", counter_unit_name(c->vendor->unit));
		} else {
			sbuf_addf(b, "\"%s\"", counter_keys[c->k]);
		}
		sbuf_addf(b, ", \"base_frames\": %llu, \"candidate_frames\": %llu, \"base_median\": ",
			  (unsigned long long)c->base_frames, (unsigned long long)c->cand_frames);
		change_value(b, c, c->mb);
		sbuf_adds(b, ", \"candidate_median\": ");
		change_value(b, c, c->mc);
		sbuf_addf(b, ", \"change_pct\": %.17g, \"p\": ", c->pct);
		if (c->tested)
			sbuf_addf(b, "%.17g", c->p);
		else
			sbuf_adds(b, "null");
		sbuf_addf(b, ", \"verdict\": \"%s\"}", counter_verdicts[c->verdict]);
		if (b->len > 60000)
			result = sbuf_emit(sink, b);
	}
	/* Counted as they were written: after them. */
	sbuf_addf(b, "\n],\n \"counter_counts\": {\"same\": %zu, \"more\": %zu, \"less\": %zu}",
		  counts[COUNTER_SAME], counts[COUNTER_MORE], counts[COUNTER_LESS]);
	sbuf_release(&path);
	return dc->base->failed || dc->cand->failed ? -1 : result;
}

int diff_counters_markdown(const struct diff_settings *d, const struct diff_counters *dc,
			   struct sbuf *b, const struct report_sink *sink)
{
	struct change_iter it = { .d = d, .dc = dc };
	struct counter_change ch, *c = &ch;
	size_t changed = 0;
	int result = 0;
	sbuf_addf(b, "\nPipeline statistics whose median per frame changed by more than %g%%: "
		     "more or less work, not a verdict.\n\n", d->rule.threshold_pct);
	while (result == 0 && change_next(&it, c)) {
		if (c->verdict == COUNTER_SAME)
			continue;
		if (!changed++)
			sbuf_adds(b, "| Change | Scope | Counter | Base | Candidate | Change % | p |\n"
				     "|---|---|---|--:|--:|--:|--:|\n");
		struct sbuf t = { 0 };
		sbuf_addf(&t, "%s / ", dc->base_meta->queues[c->x->queue].name);
		sbuf_add(&t, c->x->path, c->x->path_len);
		sbuf_addf(b, "| %s | ", counter_verdicts[c->verdict]);
		md_text(b, t.data ? t.data : "", t.len);
		sbuf_adds(b, " | ");
		t.len = 0;
		change_counter(&t, c);
		md_text(b, t.data ? t.data : "", t.len);
		if (t.failed)
			b->failed = true;
		sbuf_release(&t);
		sbuf_adds(b, " | ");
		change_value(b, c, c->mb);
		sbuf_adds(b, " | ");
		change_value(b, c, c->mc);
		sbuf_addf(b, " | %+.1f |", c->pct);
		if (c->tested)
			sbuf_addf(b, " %.3g |\n", c->p);
		else
			sbuf_adds(b, " - |\n");
		if (b->len > 60000)
			result = sbuf_emit(sink, b);
	}
	if (!changed)
		sbuf_adds(b, "None.\n");
	return dc->base->failed || dc->cand->failed ? -1 : result;
}
