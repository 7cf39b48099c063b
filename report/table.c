/* SPDX-License-Identifier: MIT */
/*
 * table.c: the profilegpu table. For each GPU and queue a frame's tree
 * becomes rows (filtered, folded, sorted by the settings), then cells, then
 * lines whose every column is sized by display width, in Unicode or ASCII.
 */
#include "report_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAR_CELLS 8

/* ------------------------------------------------------------------------ */
/* Rows                                                                     */
/* ------------------------------------------------------------------------ */

struct row {
	const struct node *node;  /* NULL for a row of folded siblings */
	uint32_t level;
	uint32_t folded;          /* siblings in a folded row */
	struct counts exclusive;
	struct counts inclusive;
	int64_t exclusive_ns;
	int64_t inclusive_ns;
	/* Pipeline statistics: the node's, with what hidden children did
	 * in the exclusive ones; has_counters false when none. */
	bool has_counters;
	struct node_counters counters;
};

struct rows {
	struct row *data;
	size_t len;
	size_t cap;
	bool failed;
	size_t hidden; /* rows the threshold hid */
};

struct view {
	const struct report_settings *s;
	int64_t denominator_ns;   /* the queue's busy + wait; the CPU frame time */
	bool timed;
	struct rows rows;
	bool no_counts;           /* a CPU thread's: no count columns */
};

static struct row *rows_push(struct rows *r)
{
	if (!array_room((void **)&r->data, &r->cap, r->len + 1, sizeof(*r->data))) {
		r->failed = true;
		return NULL;
	}
	return &r->data[r->len++];
}

static void add_counts(struct counts *to, const struct counts *from)
{
	to->draws += from->draws;
	to->dispatches += from->dispatches;
	to->prims += from->prims;
	to->verts += from->verts;
	to->unknown |= from->unknown;
}

/* Folds the counters of `from` (its inclusive ones, or its exclusive)
 * into to's exclusive ones, and with `both` its inclusive ones too. */
static void fold_counters(struct row *to, const struct node_counters *from, bool inclusive,
			  bool both)
{
	if (!from)
		return;
	struct node_counters *c = &to->counters;
	const uint64_t *v = inclusive ? from->inclusive : from->exclusive;
	uint32_t mask = inclusive ? from->inclusive_mask : from->exclusive_mask;
	bool unknown = inclusive ? from->inclusive_unknown : from->exclusive_unknown;
	for (uint32_t i = 0; i < CRUMBS_PIPELINE_COUNTERS; i++)
		if (mask & (1u << i)) {
			c->exclusive[i] += v[i];
			if (both)
				c->inclusive[i] += v[i];
		}
	c->exclusive_mask |= mask;
	c->exclusive_unknown |= unknown;
	if (both) {
		c->inclusive_mask |= mask;
		c->inclusive_unknown |= unknown;
	}
	to->has_counters = true;
}

/* Leaf events (and render passes) are hidden by --no-leaf. */
static bool node_visible(const struct report_settings *s, const struct node *n)
{
	return s->leaf || n->kind == CRUMBS_EVENT_SCOPE;
}

/*
 * The children a node shows: hidden children are replaced by their own
 * visible children, and what a hidden node did itself is folded into the
 * row that shows: `extra` collects it.
 */
static void collect_children(const struct report_settings *s, const struct node *n,
			     const struct node ***out, size_t *len, size_t *cap, bool *failed,
			     struct counts *extra, int64_t *extra_ns, struct row *extra_counters)
{
	for (const struct node *c = n->child; c; c = c->next) {
		if (node_visible(s, c)) {
			if (!array_room((void **)out, cap, *len + 1, sizeof(**out))) {
				*failed = true;
				return;
			}
			(*out)[(*len)++] = c;
		} else {
			add_counts(extra, &c->exclusive);
			*extra_ns += c->exclusive_ns;
			fold_counters(extra_counters, c->counters, false, false);
			collect_children(s, c, out, len, cap, failed, extra, extra_ns,
					 extra_counters);
		}
	}
}

/* A child with its sort key, so the comparison needs no settings. */
struct keyed {
	uint64_t key;
	const struct node *node;
};

static uint64_t sort_key(enum report_sort sort, const struct node *n)
{
	switch (sort) {
	case SORT_TIME:
		return n->inclusive_ns > 0 ? (uint64_t)n->inclusive_ns : 0;
	case SORT_DRAWS:
		return n->inclusive.draws;
	case SORT_PRIMS:
		return n->inclusive.prims;
	case SORT_VERTS:
		return n->inclusive.verts;
	case SORT_CHRONO:
		break;
	}
	return 0;
}

/* Larger keys first; equal keys in chronological order. */
static int keyed_cmp(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? 1 : -1;
	return (a->node->order > b->node->order) - (a->node->order < b->node->order);
}

static void sort_children(enum report_sort sort, const struct node **kids, size_t len,
			  bool *failed)
{
	struct keyed *k = malloc(len * sizeof(*k));
	if (!k) {
		*failed = true;
		return;
	}
	for (size_t i = 0; i < len; i++)
		k[i] = (struct keyed){ sort_key(sort, kids[i]), kids[i] };
	qsort(k, len, sizeof(*k), keyed_cmp);
	for (size_t i = 0; i < len; i++)
		kids[i] = k[i].node;
	free(k);
}

static double percent_of(const struct view *v, int64_t ns)
{
	if (v->denominator_ns <= 0 || !v->timed)
		return 0;
	return 100.0 * (double)ns / (double)v->denominator_ns;
}

static bool below_threshold(const struct view *v, int64_t ns)
{
	return v->s->threshold_pct > 0 && v->timed &&
	       percent_of(v, ns) < v->s->threshold_pct;
}

/* Adds the row of n at `level` and, depth permitting, its subtree. */
static void add_subtree(struct view *v, const struct node *n, uint32_t level)
{
	const struct report_settings *s = v->s;
	const struct node **kids = NULL;
	size_t len = 0, cap = 0;
	struct counts extra = { 0 };
	int64_t extra_ns = 0;
	struct row hidden = { 0 };

	collect_children(s, n, &kids, &len, &cap, &v->rows.failed, &extra, &extra_ns, &hidden);
	struct row *r = rows_push(&v->rows);
	if (!r) {
		free(kids);
		return;
	}
	*r = (struct row){ .node = n, .level = level, .exclusive = n->exclusive,
			   .inclusive = n->inclusive, .exclusive_ns = n->exclusive_ns + extra_ns,
			   .inclusive_ns = n->inclusive_ns };
	add_counts(&r->exclusive, &extra);
	if (n->counters) {
		r->has_counters = true;
		r->counters = *n->counters;
	}
	/* Only the exclusive side: the inclusive holds them already. */
	if (hidden.has_counters)
		fold_counters(r, &hidden.counters, false, false);

	if (s->max_depth >= 0 && level >= (uint32_t)s->max_depth) {
		free(kids);
		return;
	}
	if (s->sort != SORT_CHRONO && len > 1)
		sort_children(s->sort, kids, len, &v->rows.failed);
	struct row folded = { .node = NULL, .level = level + 1 };
	for (size_t i = 0; i < len; i++) {
		if (below_threshold(v, kids[i]->inclusive_ns)) {
			folded.folded++;
			fold_counters(&folded, kids[i]->counters, true, true);
			add_counts(&folded.exclusive, &kids[i]->inclusive);
			add_counts(&folded.inclusive, &kids[i]->inclusive);
			folded.exclusive_ns += kids[i]->inclusive_ns;
			folded.inclusive_ns += kids[i]->inclusive_ns;
			continue;
		}
		add_subtree(v, kids[i], level + 1);
	}
	free(kids);
	if (folded.folded == 0)
		return;
	/* Hidden siblings that together pass the threshold show as one row. */
	v->rows.hidden += folded.folded;
	if (!below_threshold(v, folded.inclusive_ns)) {
		struct row *f = rows_push(&v->rows);
		if (f)
			*f = folded;
	}
}

/* The nodes matching --root, outermost only, in chronological order. */
static void add_matches(struct view *v, const struct node *n)
{
	for (const struct node *c = n->child; c; c = c->next) {
		if (node_visible(v->s, c) && filter_match_root(v->s->filter, c->name, c->name_len))
			add_subtree(v, c, 0);
		else
			add_matches(v, c);
	}
}

/* ------------------------------------------------------------------------ */
/* Cells                                                                    */
/* ------------------------------------------------------------------------ */

enum column_kind { COL_DRAWS, COL_DISPATCHES, COL_PRIMS, COL_VERTS, COL_PERCENT, COL_TIME, COL_EVENTS,
		   /* --counters: pipeline statistics and what follows from them */
		   COL_IA_VERTS, COL_IA_PRIMS, COL_VS, COL_VS_PER_VERT, COL_CULLED, COL_FS,
		   COL_FRAGS_PER_PIXEL, COL_CS, COL_CS_PER_DISPATCH };
#define COUNTER_COLUMNS (COL_CS_PER_DISPATCH - COL_IA_VERTS + 1)
#define MAX_COLUMNS (2 * (COL_EVENTS + COUNTER_COLUMNS) + 1)

static const char *const column_titles[] = {
	"Draws", "Dispatches", "Prims", "Verts", "Percent", "Time", "Events",
	"IA Verts", "IA Prims", "VS Inv", "VS/Vert", "Culled", "FS Inv", "Frag/Px", "CS Inv",
	"CS/Disp"
};

struct column {
	enum column_kind kind;
	int group;      /* 0 exclusive, 1 inclusive, 2 events */
	size_t width;   /* of its content, in cells */
};

/*
 * When a column is left out to fit the width (grid_fit): first the
 * counts, the ones a frame's cost depends on least first (Verts, Prims,
 * Dispatches, Draws; Exclusive before Inclusive), then the Percent bars
 * (Exclusive first); the times never. 0: never.
 */
static uint8_t drop_rank(const struct column *c)
{
	if (c->kind <= COL_VERTS)
		return (uint8_t)((COL_VERTS - c->kind) * 2 + 1 + c->group);
	/* Then the counters', the last asked for first. */
	if (c->kind >= COL_IA_VERTS)
		return (uint8_t)(9 + (COL_CS_PER_DISPATCH - c->kind) * 2 + c->group);
	if (c->kind == COL_PERCENT)
		return (uint8_t)(9 + 2 * COUNTER_COLUMNS + c->group);
	return 0;
}

/* A counter's cell: '-' where the frame has none, '?' where unknown. */
static void format_counter(struct sbuf *b, const struct row *r, bool inclusive,
			   enum column_kind kind)
{
	static const enum crumbs_pipeline_counter of[] = {
		[COL_IA_VERTS - COL_IA_VERTS] = CRUMBS_COUNTER_IA_VERTICES,
		[COL_IA_PRIMS - COL_IA_VERTS] = CRUMBS_COUNTER_IA_PRIMITIVES,
		[COL_VS - COL_IA_VERTS] = CRUMBS_COUNTER_VS_INVOCATIONS,
		[COL_FS - COL_IA_VERTS] = CRUMBS_COUNTER_FS_INVOCATIONS,
		[COL_CS - COL_IA_VERTS] = CRUMBS_COUNTER_CS_INVOCATIONS,
	};
	if (!r->has_counters) {
		sbuf_adds(b, "-");
		return;
	}
	/* The derived numbers read a node: the row's, with the row's
	 * counters and counts (what hidden children folded in). */
	struct node n = r->node ? *r->node : (struct node){ 0 };
	struct node_counters counters = r->counters;
	n.counters = &counters;
	n.exclusive = r->exclusive;
	n.inclusive = r->inclusive;
	uint64_t v;
	double d;
	bool ok;
	if (node_counters_unknown(&n, inclusive)) {
		sbuf_adds(b, "?");
		return;
	}
	switch (kind) {
	case COL_VS_PER_VERT:
		if ((ok = node_vertex_reuse(&n, inclusive, &d)))
			sbuf_addf(b, "%.2f", d);
		break;
	case COL_CULLED:
		if ((ok = node_culled_primitives(&n, inclusive, &v)))
			sbuf_addf(b, "%llu", (unsigned long long)v);
		break;
	case COL_FRAGS_PER_PIXEL:
		if ((ok = node_fragments_per_pixel(&n, inclusive, &d)))
			sbuf_addf(b, "%.2f", d);
		break;
	case COL_CS_PER_DISPATCH:
		if ((ok = node_invocations_per_dispatch(&n, inclusive, &d)))
			sbuf_addf(b, "%.1f", d);
		break;
	default:
		if ((ok = node_counter(&n, inclusive, of[kind - COL_IA_VERTS], &v)))
			sbuf_addf(b, "%llu", (unsigned long long)v);
		break;
	}
	if (!ok)
		sbuf_adds(b, "-");
}

static void format_count(char *buf, size_t n, uint64_t value, bool unknown)
{
	if (unknown && value == 0)
		snprintf(buf, n, "?");
	else
		snprintf(buf, n, "%llu%s", (unsigned long long)value, unknown ? "+" : "");
}

static void format_bar(struct sbuf *b, const struct glyphs *g, bool color, double pct)
{
	if (pct < 0)
		pct = 0;
	if (pct > 100)
		pct = 100;
	int eighths = (int)(pct / 100.0 * BAR_CELLS * 8 + 0.5);
	if (color)
		sbuf_adds(b, SGR_BAR);
	for (int i = 0; i < BAR_CELLS; i++) {
		int e = eighths - i * 8;
		sbuf_adds(b, e >= 8 ? g->full : g->partial[e > 0 ? e : 0]);
	}
	if (color)
		sbuf_adds(b, SGR_RESET);
	sbuf_addf(b, " %5.1f%%", pct);
}

/* The text of one cell into b (emptied first). */
static void format_cell(struct sbuf *b, const struct view *v, const struct glyphs *g,
			const struct row *r, const struct column *c)
{
	const struct counts *cn = c->group == 0 ? &r->exclusive : &r->inclusive;
	int64_t ns = c->group == 0 ? r->exclusive_ns : r->inclusive_ns;
	char buf[64];

	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
	switch (c->kind) {
	case COL_DRAWS:
		format_count(buf, sizeof(buf), cn->draws, cn->unknown & COUNT_DRAWS);
		sbuf_adds(b, buf);
		break;
	case COL_DISPATCHES:
		format_count(buf, sizeof(buf), cn->dispatches, cn->unknown & COUNT_DISPATCHES);
		sbuf_adds(b, buf);
		break;
	case COL_PRIMS:
		format_count(buf, sizeof(buf), cn->prims, cn->unknown & COUNT_PRIMS);
		sbuf_adds(b, buf);
		break;
	case COL_VERTS:
		format_count(buf, sizeof(buf), cn->verts, cn->unknown & COUNT_VERTS);
		sbuf_adds(b, buf);
		break;
	case COL_PERCENT:
		if (v->timed)
			format_bar(b, g, v->s->color, percent_of(v, ns));
		else
			sbuf_adds(b, "-");
		break;
	case COL_TIME:
		if (v->timed)
			sbuf_addf(b, "%.3f ms", (double)ns / 1e6);
		else
			sbuf_adds(b, "-");
		break;
	case COL_EVENTS:
		for (uint32_t i = 0; i < r->level; i++)
			sbuf_adds(b, "   ");
		if (!r->node) {
			sbuf_addf(b, "%u other %s", r->folded, r->folded == 1 ? "child" : "children");
			break;
		}
		text_add_name(b, g, r->node->name, r->node->name_len);
		if (r->node->flags & NODE_WAIT)
			sbuf_adds(b, " [wait]");
		if (r->node->flags & NODE_BEGUN_EARLIER)
			sbuf_adds(b, " [earlier]");
		if (r->node->flags & NODE_OPEN)
			sbuf_adds(b, " [open]");
		if (r->node->flags & NODE_UNTIMED)
			sbuf_adds(b, " [untimed]");
		break;
	default:
		format_counter(b, r, c->group == 1, c->kind);
		break;
	}
}

/* ------------------------------------------------------------------------ */
/* Lines                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * A border line. Between two columns of one group it draws `inner`, between
 * groups `outer`; with `spans`, a group is one wide cell with no junctions.
 */
static void border(struct sbuf *out, const struct glyphs *g, const struct column *cols,
		   size_t n, const char *left, const char *inner, const char *outer,
		   const char *right, bool spans)
{
	sbuf_adds(out, left);
	for (size_t i = 0; i < n; i++) {
		grid_repeat(out, g->h, cols[i].width + 2);
		if (i + 1 == n)
			break;
		bool same = cols[i + 1].group == cols[i].group;
		sbuf_adds(out, same ? (spans ? g->h : inner) : outer);
	}
	sbuf_adds(out, right);
	sbuf_adds(out, "\n");
}

static void render_table(struct sbuf *out, const struct view *v, const struct glyphs *g,
			 const struct report_sink *sink)
{
	const struct report_settings *s = v->s;
	struct column cols[MAX_COLUMNS];
	size_t n = 0;
	struct sbuf cell = { 0 }, cut = { 0 };

	for (int group = 0; group < 2; group++) {
		if ((group == 0 && !s->exclusive) || (group == 1 && !s->inclusive))
			continue;
		for (int k = COL_DRAWS; k <= COL_TIME; k++) {
			if (k <= COL_VERTS && (!s->stats || v->no_counts))
				continue;
			if (k == COL_PERCENT && s->counters && !v->no_counts)
				for (int c = COL_IA_VERTS; c <= COL_CS_PER_DISPATCH; c++)
					cols[n++] = (struct column){ (enum column_kind)c, group, 0 };
			if (k == COL_PERCENT && !s->percent)
				continue;
			cols[n++] = (struct column){ (enum column_kind)k, group, 0 };
		}
	}
	cols[n++] = (struct column){ COL_EVENTS, 2, 0 };

	/* Widths: titles, then every cell. */
	size_t name_min = strlen(column_titles[COL_EVENTS]);
	for (size_t i = 0; i < n; i++)
		cols[i].width = strlen(column_titles[cols[i].kind]);
	for (size_t r = 0; r < v->rows.len; r++)
		for (size_t i = 0; i < n; i++) {
			format_cell(&cell, v, g, &v->rows.data[r], &cols[i]);
			const char *t = cell.data ? cell.data : "";
			size_t w = text_cells(t, cell.len);
			if (w > cols[i].width)
				cols[i].width = w;
			if (cols[i].kind == COL_EVENTS && s->width) {
				size_t m = text_cut_min(t, cell.len, g->ellipsis);
				name_min = m > name_min ? m : name_min;
			}
		}
	/* Fitted to the width, a group's title fitting the span of its
	 * columns. */
	static const char *const group_titles[3] = { "Exclusive", "Inclusive", NULL };
	size_t width[MAX_COLUMNS];
	int groups[MAX_COLUMNS];
	uint8_t drop[MAX_COLUMNS];
	bool shown[MAX_COLUMNS];
	for (size_t i = 0; i < n; i++) {
		width[i] = cols[i].width;
		groups[i] = cols[i].group;
		drop[i] = drop_rank(&cols[i]);
	}
	size_t names = cols[n - 1].width;
	grid_fit(width, groups, drop, shown, n, group_titles, 3, name_min, s->width);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (shown[i]) {
			cols[kept] = cols[i];
			cols[kept++].width = width[i];
		}
	n = kept;
	bool cutting = cols[n - 1].width < names;
	bool any_group = false;
	for (size_t i = 0; i < n; i++)
		any_group = any_group || cols[i].group < 2;

	if (any_group) {
		border(out, g, cols, n, g->tl, g->h, g->tm, g->tr, true);
		/* The group titles, centred over their columns. */
		sbuf_adds(out, g->v);
		for (int group = 0; group <= 2; group++) {
			size_t span = 0;
			bool present = false;
			for (size_t i = 0; i < n; i++)
				if (cols[i].group == group) {
					span += cols[i].width + 3;
					present = true;
				}
			if (!present)
				continue;
			span -= 1; /* the cell without its right border */
			grid_centre(out, group < 2 ? group_titles[group] : "", span);
			sbuf_adds(out, g->v);
		}
		sbuf_adds(out, "\n");
		border(out, g, cols, n, g->ml, g->mt, g->mm, g->mr, false);
	} else {
		border(out, g, cols, n, g->tl, g->tm, g->tm, g->tr, false);
	}

	/* Column titles. */
	sbuf_adds(out, g->v);
	for (size_t i = 0; i < n; i++) {
		const char *t = column_titles[cols[i].kind];
		grid_pad(out, t, strlen(t), cols[i].width, cols[i].kind != COL_EVENTS);
		sbuf_adds(out, g->v);
	}
	sbuf_adds(out, "\n");
	border(out, g, cols, n, g->ml, g->mm, g->mm, g->mr, false);

	for (size_t r = 0; r < v->rows.len; r++) {
		sbuf_adds(out, g->v);
		for (size_t i = 0; i < n; i++) {
			format_cell(&cell, v, g, &v->rows.data[r], &cols[i]);
			const char *t = cell.data ? cell.data : "";
			size_t len = cell.len;
			if (cols[i].kind == COL_EVENTS && cutting) {
				cut.len = 0;
				text_cut(&cut, t, len, cols[i].width, g->ellipsis);
				t = cut.data ? cut.data : "";
				len = cut.len;
			}
			grid_pad(out, t, len, cols[i].width, cols[i].kind != COL_EVENTS);
			sbuf_adds(out, g->v);
		}
		sbuf_adds(out, "\n");
		sbuf_emit_some(sink, out);
	}
	border(out, g, cols, n, g->bl, g->bm, g->bm, g->br, false);
	if (cell.failed || cut.failed)
		out->failed = true;
	sbuf_release(&cell);
	sbuf_release(&cut);
}

/* ------------------------------------------------------------------------ */
/* Blocks                                                                   */
/* ------------------------------------------------------------------------ */

static void add_ms(struct sbuf *b, const char *label, int64_t ns)
{
	sbuf_addf(b, "%s %.3f ms", label, (double)ns / 1e6);
}

static void quote_list(struct sbuf *b, char *const *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbuf_addf(b, "%s'%s'", i ? ", " : "", items[i]);
}

static void summary(struct sbuf *out, const struct report_settings *s, const struct glyphs *g,
		    const struct frame_queue *fq, const struct view *v,
		    const struct pipeline_rows *pr)
{
	if (!v->timed) {
		sbuf_addf(out, "%u submission%s%s%u scope%s%s%u event%s\n", fq->submissions,
			  fq->submissions == 1 ? "" : "s", g->sep, fq->scopes,
			  fq->scopes == 1 ? "" : "s", g->sep, fq->events, fq->events == 1 ? "" : "s");
		sbuf_adds(out, "note: this queue records no timestamps (timestampValidBits is 0); "
			       "only counts are shown\n");
		return;
	}
	add_ms(out, "busy", fq->busy_ns);
	sbuf_adds(out, g->sep);
	add_ms(out, "wait", fq->wait_ns);
	sbuf_adds(out, g->sep);
	add_ms(out, "idle", fq->idle_ns);
	sbuf_addf(out, "%s%u submission%s%s%u scope%s%s%u event%s\n", g->sep, fq->submissions,
		  fq->submissions == 1 ? "" : "s", g->sep, fq->scopes, fq->scopes == 1 ? "" : "s",
		  g->sep, fq->events, fq->events == 1 ? "" : "s");

	/* What the percentages are of, and every setting that filtered. */
	add_ms(out, "percent of busy + wait", v->denominator_ns);
	if (s->root_count) {
		sbuf_addf(out, "%sroot ", g->sep);
		quote_list(out, s->roots, s->root_count);
		if (s->ignore_case)
			sbuf_adds(out, " ignoring case");
	}
	size_t hidden = pr ? pr->hidden : v->rows.hidden;
	if (s->threshold_pct > 0)
		sbuf_addf(out, "%sthreshold %g%% (%zu row%s hidden)", g->sep, s->threshold_pct,
			  hidden, hidden == 1 ? "" : "s");
	static const char *const sorts[] = { "chrono", "time", "draws", "prims", "verts" };
	if (pr) {
		/* By pipeline: what the pipelines ran, together. */
		sbuf_addf(out, "%sby pipeline: %zu pipeline%s, %llu event%s, %.3f ms", g->sep,
			  pr->groups.len, pr->groups.len == 1 ? "" : "s",
			  (unsigned long long)pr->groups.events, pr->groups.events == 1 ? "" : "s",
			  (double)pr->groups.exclusive_ns / 1e6);
		if (s->sort >= SORT_DRAWS)
			sbuf_addf(out, "%ssorted by %s", g->sep, sorts[s->sort]);
		sbuf_adds(out, "\n");
		return;
	}
	if (!s->leaf)
		sbuf_addf(out, "%sleaf events folded into their scopes", g->sep);
	if (s->max_depth >= 0)
		sbuf_addf(out, "%smax depth %d", g->sep, s->max_depth);
	if (s->sort != SORT_CHRONO)
		sbuf_addf(out, "%ssorted by %s", g->sep, sorts[s->sort]);
	sbuf_adds(out, "\n");
}

/* Under the first queue of a GPU shown, a line for each of its memory
 * heaps the frame holds (format 1.5): what was in use at the frame's end
 * and at most during it, what the frame allocated and freed, and the
 * driver's usage and budget. */
static void memory_lines(struct sbuf *out, const struct glyphs *g, const struct frame *f,
			 uint32_t gpu)
{
	for (uint32_t i = 0; i < f->memory_count; i++) {
		const struct frame_memory *m = &f->memory[i];
		if (m->gpu != gpu)
			continue;
		sbuf_addf(out, "memory heap %u (", m->heap);
		text_bytes(out, m->size);
		sbuf_adds(out, m->flags & CRUMBS_MEMORY_HEAP_DEVICE_LOCAL ? " device-local)" : " host)");
		if (m->tracked) {
			sbuf_adds(out, ": ");
			text_bytes(out, m->in_use);
			sbuf_adds(out, " in use, high-water ");
			text_bytes(out, m->high);
			sbuf_addf(out, "%s%llu allocation%s (", g->sep, (unsigned long long)m->allocations,
				  m->allocations == 1 ? "" : "s");
			text_bytes(out, m->allocated);
			sbuf_addf(out, "), %llu free%s (", (unsigned long long)m->frees,
				  m->frees == 1 ? "" : "s");
			text_bytes(out, m->freed);
			sbuf_adds(out, ")");
		}
		if (m->budgeted) {
			sbuf_adds(out, m->tracked ? g->sep : ": ");
			sbuf_adds(out, "the driver's usage ");
			text_bytes(out, m->usage);
			sbuf_adds(out, " of a budget of ");
			text_bytes(out, m->budget);
		}
		sbuf_adds(out, "\n");
	}
}

static void notes(struct sbuf *out, const struct frame *f, const struct frame_gpu *gpu,
		  const struct frame_queue *fq)
{
	if (gpu && !gpu->calibrated)
		sbuf_adds(out, "note: no calibration samples; GPU time is aligned with the CPU "
			       "at the first submission, so idle and wait are estimates\n");
	if (fq->flags & FRAME_QUEUE_NO_READY)
		sbuf_adds(out, "note: the capture does not say when this queue finished the "
			       "previous frame; idle before its first submission is not counted\n");
	if (fq->open_scopes)
		sbuf_addf(out, "note: %u scope%s still open at the frame end, closed there "
			       "(marked [open])\n", fq->open_scopes, fq->open_scopes == 1 ? " was" : "s were");
	if (fq->unmatched_ends)
		sbuf_addf(out, "note: %u scope end%s had no begin on this queue in this frame\n",
			  fq->unmatched_ends, fq->unmatched_ends == 1 ? "" : "s");
	if (fq->unrecorded == 1)
		sbuf_adds(out, "note: 1 command buffer submitted on this queue could not be "
			       "recorded for this frame (begun before the capture began, or with no "
			       "room left to record it): its events are not shown, and its time is "
			       "inside the row that holds its submission\n");
	else if (fq->unrecorded)
		sbuf_addf(out, "note: %u command buffers submitted on this queue could not be "
			       "recorded for this frame (begun before the capture began, or with no "
			       "room left to record them): their events are not shown, and their time "
			       "is inside the row that holds their submission\n", fq->unrecorded);
	if ((f->flags & CRUMBS_FRAME_SCOPES_DROPPED) && f->dropped_scopes == 1)
		sbuf_adds(out, "note: query slots ran out: 1 scope or event of this frame lost its "
			       "timestamps (marked [untimed]); its time is inside the row that "
			       "holds it\n");
	else if (f->flags & CRUMBS_FRAME_SCOPES_DROPPED)
		sbuf_addf(out, "note: query slots ran out: %u scopes and events of this frame lost "
			       "their timestamps (marked [untimed]); the time of each is inside the "
			       "row that holds it\n", f->dropped_scopes);
	if (f->flags & CRUMBS_FRAME_DEVICE_LOST)
		sbuf_adds(out, "note: the device was lost during this frame; only what was "
			       "resolved before is shown\n");
	if (f->flags & CRUMBS_FRAME_INCOMPLETE)
		sbuf_adds(out, "note: some timestamps of this frame never became available\n");
}

/* Why the counter columns read '?' or '-' on this queue, with
 * --counters: '?' is a row some of whose work went uncounted, '-' one
 * none of whose work was. */
static void counters_note(struct sbuf *out, const struct report_settings *s,
			  const struct frame_queue *fq)
{
	if (!s->counters || !fq->root)
		return;
	if (!fq->root->counters)
		sbuf_adds(out, "note: no pipeline statistics were taken on this queue in this "
			       "frame ('-'): the device, the program or the capture did not enable "
			       "them\n");
	else if (node_counters_unknown(fq->root, true))
		sbuf_adds(out, "note: some work on this queue was not counted: '?' marks the rows "
			       "holding it, '-' those none of whose work was (command buffers "
			       "recorded before the frame, as programs that record once or a frame "
			       "ahead do; multiview passes; secondaries crumbs could not place)\n");
}

/* What a CPU thread's or a timeline's block says above its table. */
static void cpu_summary(struct sbuf *out, const struct report_settings *s,
			const struct glyphs *g, const struct frame_cpu_thread *t,
			const struct view *v)
{
	bool tasks = t->kind == FRAME_CPU_TIMELINE;
	add_ms(out, "CPU frame", v->denominator_ns);
	sbuf_addf(out, "%s%u %s%s", g->sep, t->scopes, tasks ? "task" : "scope",
		  t->scopes == 1 ? "" : "s");
	if (t->wait_ns) {
		sbuf_adds(out, g->sep);
		add_ms(out, "waited", t->wait_ns);
		sbuf_adds(out, " (marked [wait])");
	}
	sbuf_adds(out, "\n");
	add_ms(out, "percent of CPU frame", v->denominator_ns);
	if (s->root_count) {
		sbuf_addf(out, "%sroot ", g->sep);
		quote_list(out, s->roots, s->root_count);
		if (s->ignore_case)
			sbuf_adds(out, " ignoring case");
	}
	if (s->threshold_pct > 0)
		sbuf_addf(out, "%sthreshold %g%% (%zu row%s hidden)", g->sep, s->threshold_pct,
			  v->rows.hidden, v->rows.hidden == 1 ? "" : "s");
	if (s->max_depth >= 0)
		sbuf_addf(out, "%smax depth %d", g->sep, s->max_depth);
	static const char *const sorts[] = { "chrono", "time", "draws", "prims", "verts" };
	if (s->sort != SORT_CHRONO)
		sbuf_addf(out, "%ssorted by %s", g->sep, sorts[s->sort]);
	sbuf_adds(out, "\n");
	uint32_t earlier = 0;
	for (const struct node *n = tasks ? t->root->child : NULL; n; n = n->next)
		earlier += (n->flags & NODE_BEGUN_EARLIER) != 0;
	if (earlier)
		sbuf_addf(out, "note: %u task%s begun before the frame, shown from its begin "
			       "(marked [earlier])\n", earlier, earlier == 1 ? " was" : "s were");
	if (t->open_scopes && tasks)
		sbuf_addf(out, "note: %u task%s still running at the frame end, shown to there "
			       "(marked [open])\n", t->open_scopes, t->open_scopes == 1 ? " was" : "s were");
	else if (t->open_scopes)
		sbuf_addf(out, "note: %u scope%s still open at the frame end, closed there "
			       "(marked [open])\n", t->open_scopes, t->open_scopes == 1 ? " was" : "s were");
	if (t->unmatched_ends)
		sbuf_addf(out, "note: %u scope end%s had no begin on this thread in this frame\n",
			  t->unmatched_ends, t->unmatched_ends == 1 ? "" : "s");
}

/* The dependencies of tasks of timeline t that were not respected: a
 * line each. */
static void broken_dependencies(struct sbuf *out, const struct glyphs *g, bool color,
				const struct frame *f, const struct frame_cpu_thread *t)
{
	for (uint32_t i = 0; i < f->task_dep_count; i++) {
		const struct frame_task_dep *d = &f->task_deps[i];
		if (!d->violated || d->task->parent != t->root)
			continue;
		text_colored(out, color, SGR_BAD, "dependency not respected", 24);
		sbuf_adds(out, ": '");
		text_add_name(out, g, d->task->name, d->task->name_len);
		sbuf_adds(out, "' entered '");
		text_add_name(out, g, d->state, d->state_len);
		if (d->blocking_end_ns == INT64_MIN) {
			sbuf_adds(out, "' while '");
			text_add_name(out, g, d->blocking->name, d->blocking->name_len);
			sbuf_adds(out, "' ran, which had not ended by the frame end\n");
		} else {
			sbuf_addf(out, "' %.3f ms before '",
				  (double)(d->blocking_end_ns - d->entered_ns) / 1e6);
			text_add_name(out, g, d->blocking->name, d->blocking->name_len);
			sbuf_adds(out, "' ended\n");
		}
	}
}

/* A block per CPU thread, then per task timeline, before the queues'
 * (the CPU's work comes first in a frame, and what it waited on shows
 * below). Only where no GPU or queue is chosen (threads belong to
 * neither), and not by pipeline (they run none). Returns as
 * report_frame. */
static int report_cpu_threads(const struct report_settings *s, const struct frame *f,
			      const struct glyphs *g, struct sbuf *out,
			      const struct report_sink *sink)
{
	int result = 0;
	if (!report_cpu_chosen(s))
		return 0;
	/* The thread that ends the frames first: the frame's time is its. */
	for (int64_t k = -1; k < (int64_t)f->cpu_thread_count && result == 0; k++) {
		int64_t i = k < 0 ? f->frame_thread : k;
		if (i < 0 || (k >= 0 && i == f->frame_thread))
			continue;
		const struct frame_cpu_thread *t = &f->cpu_threads[i];
		bool empty = t->root->child == NULL && t->unmatched_ends == 0;
		if (empty && !s->empty_queues)
			continue;
		struct view v = { s, f->cpu_end_ns - f->cpu_begin_ns, true, { 0 }, true };
		if (!empty) {
			if (s->root_count)
				add_matches(&v, t->root);
			else
				add_subtree(&v, t->root, 0);
		}
		if (v.rows.failed) {
			free(v.rows.data);
			return -1;
		}
		bool nothing = !empty && v.rows.len == 0;
		if (nothing && !s->empty_queues) {
			free(v.rows.data);
			continue;
		}
		bool tasks = t->kind == FRAME_CPU_TIMELINE;
		if (s->header) {
			sbuf_addf(out, "CPU profile for frame %llu%s%s '",
				  (unsigned long long)f->number, g->sep,
				  tasks ? "tasks on timeline" : "thread");
			text_add_name(out, g, t->name, t->name_len);
			if (tasks)
				sbuf_adds(out, "'\n");
			else
				sbuf_addf(out, "' (tid %u%s)\n", t->tid,
					  i == f->frame_thread ? ", ends the frames" : "");
			if (!empty)
				cpu_summary(out, s, g, t, &v);
		}
		if (empty) {
			sbuf_adds(out, "No scope on this thread in this frame.\n\n");
		} else {
			if (nothing)
				sbuf_addf(out, "No %s matches the root filter.\n",
					  tasks ? "task or state on this timeline" :
						  "scope on this thread");
			else
				render_table(out, &v, g, s->whole_tables ? NULL : sink);
			if (tasks && s->header)
				broken_dependencies(out, g, s->color, f, t);
			sbuf_adds(out, "\n");
		}
		free(v.rows.data);
		result = sbuf_emit(sink, out);
	}
	return result;
}

/* The frame's presents (format 1.5): how many, how long the calls took,
 * what they asked for, and the earlier presents whose shown times came
 * in it. A frame alone holds no interval: `crumbs stats` gives those. */
static void frame_presents(struct sbuf *out, const struct glyphs *g, const struct frame *f)
{
	static const char *const modes[] = { "", "FIFO", "FIFO relaxed", "mailbox", "immediate",
					      "another present mode" };
	if (!f->present_count && !f->shown_count)
		return;
	/* Inside the frame's block, before the blank line that ends it. */
	bool blank = out->len >= 2 && out->data[out->len - 1] == '\n' && out->data[out->len - 2] == '\n';
	if (blank)
		out->len--;
	int64_t call_ns = 0, refresh_ns = 0;
	uint32_t failed = 0;
	uint8_t mode = 0;
	for (uint32_t i = 0; i < f->present_count; i++) {
		const struct frame_present *p = &f->presents[i];
		call_ns += p->duration_ns;
		failed += (p->flags & CRUMBS_PRESENT_FAILED) != 0;
		if (p->refresh_ns)
			refresh_ns = p->refresh_ns;
		if (p->mode)
			mode = p->mode;
	}
	sbuf_addf(out, "Presented %u time%s", f->present_count, f->present_count == 1 ? "" : "s");
	if (f->present_count)
		sbuf_addf(out, "%s%.3f ms in the call%s", g->sep, (double)call_ns / 1e6,
			  f->present_count == 1 ? "" : "s");
	if (failed)
		sbuf_addf(out, "%s%u failed", g->sep, failed);
	if (mode && mode < sizeof(modes) / sizeof(modes[0]))
		sbuf_addf(out, "%s%s", g->sep, modes[mode]);
	if (refresh_ns)
		sbuf_addf(out, " at a %.3f ms refresh", refresh_ns / 1e6);
	if (f->shown_count)
		sbuf_addf(out, "%swhen %u present%s shown came in it", g->sep, f->shown_count,
			  f->shown_count == 1 ? " was" : "s were");
	else if (f->present_count)
		sbuf_addf(out, "%snothing said when a present was shown", g->sep);
	sbuf_adds(out, blank ? "\n\n" : "\n");
}

/* After every block, the frame's CPU and GPU frame times and what bounded
 * the frame, where it has CPU threads. Returns as report_frame. */
static int report_frame_bound(const struct report_settings *s, const struct frame *f,
			      const struct glyphs *g, struct sbuf *out,
			      const struct report_sink *sink)
{
	if (!report_cpu_chosen(s) || !s->header)
		return 0;
	if ((f->cpu_thread_count || f->mark_count || f->task_misuses) &&
	    frame_bound_print(out, g, f) != 0)
		out->failed = true;
	frame_presents(out, g, f);
	return sbuf_emit(sink, out);
}

/* ------------------------------------------------------------------------ */
/* Vendor counters (--counters)                                             */
/* ------------------------------------------------------------------------ */

#define VENDOR_COLUMNS (MAX_COLS - 1)

int text_counter_value(char *buf, size_t size, uint64_t v, uint32_t scale)
{
	int len;
	if (!scale) {
		len = snprintf(buf, size, "%llu", (unsigned long long)v);
	} else {
		uint64_t unit = 1;
		for (uint32_t i = 0; i < scale && i < 19; i++)
			unit *= 10;
		len = snprintf(buf, size, "%llu.%0*llu", (unsigned long long)(v / unit),
			       (int)(scale < 19 ? scale : 19), (unsigned long long)(v % unit));
	}
	return len > 0 ? (len < (int)size ? len : (int)size - 1) : 0;
}

/* A value of 10^-scale units. */
static void vendor_cell(struct grid *gr, const struct node *n, bool inclusive, uint32_t k,
			uint32_t scale)
{
	char buf[48];
	uint64_t v;
	int len;
	if (!n)
		len = snprintf(buf, sizeof(buf), "-");
	else if (node_vendor_unknown(n, inclusive))
		len = snprintf(buf, sizeof(buf), "?");
	else if (!node_vendor_counter(n, inclusive, k, &v))
		len = snprintf(buf, sizeof(buf), "-");
	else
		len = text_counter_value(buf, sizeof(buf), v, scale);
	grid_cell(gr, buf, len > 0 ? (size_t)len : 0);
}

/* Which frames of the capture took pass g of set: "over frames 2, 5,
 * 8", or what a one-frame capture left to a run. */
static void vendor_frames(struct sbuf *out, const struct capture_meta *meta,
			  const struct capture_counter_set *set, uint32_t g)
{
	if (set->groups == 1) {
		sbuf_adds(out, "all counters taken in every frame");
		return;
	}
	sbuf_addf(out, "pass %u of %u", g + 1, set->groups);
	if (!set->round_robin) {
		sbuf_adds(out, " (a one-frame capture; a run takes the others:");
		for (uint32_t k = 0, n = 0; k < set->count; k++)
			if (set->counters[k].group != g)
				sbuf_addf(out, "%s'%s'", n++ ? ", " : " ", set->counters[k].name);
		sbuf_adds(out, ")");
		return;
	}
	sbuf_adds(out, ", taken over frames");
	uint32_t shown = 0;
	for (uint64_t n = meta->first_frame; n <= meta->last_frame && shown < 5; n++)
		if (n % set->groups == g)
			sbuf_addf(out, "%s%llu", shown++ ? ", " : " ", (unsigned long long)n);
	uint64_t last = meta->last_frame;
	while (last > meta->first_frame && last % set->groups != g)
		last--;
	if (shown == 5 && last % set->groups == g)
		sbuf_addf(out, " … %llu", (unsigned long long)last);
}

/* The vendor counters of the rows v shows, in a table of their own under
 * the queue's: the counters of the pass this frame took, inclusive
 * (exclusive with --no-inclusive), "?" where unknown. */
static void vendor_table(struct sbuf *out, const struct view *v, const struct glyphs *g,
			 const struct capture_meta *meta, const struct frame *f,
			 const struct frame_queue *fq, const struct report_sink *sink)
{
	const struct report_settings *s = v->s;
	uint32_t number = node_vendor_set(fq->root);
	const struct capture_counter_set *set = number ? meta_counter_set(meta, number) : NULL;
	if (!set)
		return;
	uint32_t taken = set->round_robin ? (uint32_t)(f->number % set->groups) : 0;
	bool inclusive = s->inclusive || !s->exclusive;
	char titles[VENDOR_COLUMNS][96];
	uint32_t counter[VENDOR_COLUMNS];
	struct grid gr = { .g = g, .max_width = s->width, .color = s->color };
	uint32_t more = 0;
	for (uint32_t k = 0; k < set->count; k++) {
		const struct capture_counter *c = &set->counters[k];
		if (c->group != taken)
			continue;
		if (gr.cols == VENDOR_COLUMNS) {
			more++;
			continue;
		}
		if (c->unit)
			snprintf(titles[gr.cols], sizeof(titles[0]), "%.64s (%s)", c->name,
				 counter_unit_name(c->unit));
		else
			snprintf(titles[gr.cols], sizeof(titles[0]), "%.80s", c->name);
		counter[gr.cols] = k;
		gr.titles[gr.cols] = titles[gr.cols];
		/* The last asked for goes first when the line is too narrow. */
		gr.drop[gr.cols] = (uint8_t)(VENDOR_COLUMNS - gr.cols);
		gr.cols++;
	}
	if (!gr.cols)
		return;
	size_t counters = gr.cols;
	gr.titles[gr.cols++] = inclusive ? "Inclusive vendor counters" : "Exclusive vendor counters";
	for (size_t i = 0; i < v->rows.len; i++) {
		const struct row *r = &v->rows.data[i];
		for (size_t c = 0; c < counters; c++)
			vendor_cell(&gr, r->node, inclusive, counter[c],
				    set->counters[counter[c]].scale);
		if (r->node) {
			grid_name(&gr, r->level, r->node->name, r->node->name_len, NULL);
		} else {
			char label[48];
			int n = snprintf(label, sizeof(label), "%u more", r->folded);
			grid_name(&gr, r->level, label, n > 0 ? (size_t)n : 0, NULL);
		}
	}
	sbuf_addf(out, "\nVendor counters of set %u%s", set->set, g->sep);
	vendor_frames(out, meta, set, taken);
	if (more)
		sbuf_addf(out, "%s%u more counters of this pass not shown", g->sep, more);
	sbuf_adds(out, "\n");
	grid_render(&gr, out, sink);
	grid_release(&gr);
}

int report_frame(const struct report_settings *s, const struct capture_meta *meta,
		 const struct frame *f, const struct report_sink *sink)
{
	const struct glyphs *g = grid_glyphs(s);
	struct sbuf out = { 0 };
	struct pipeline_rows pipelines = { 0 };
	const struct pipeline_rows *pr = s->by == BY_PIPELINE ? &pipelines : NULL;
	int result = report_cpu_threads(s, f, g, &out, sink);
	uint64_t memory_shown = 0; /* GPUs whose memory lines are out, a bit each */

	for (uint32_t qi = 0; qi < f->queue_count && result == 0; qi++) {
		const struct frame_queue *fq = &f->queues[qi];
		const struct capture_queue *cq = &meta->queues[fq->queue];
		const struct capture_gpu *cg = &meta->gpus[cq->gpu];
		const struct frame_gpu *gpu = cq->gpu < f->gpu_count ? &f->gpus[cq->gpu] : NULL;

		if ((s->gpu >= 0 && cq->gpu != (uint32_t)s->gpu) ||
		    !filter_match_queue(s->filter, cq->name))
			continue;
		bool empty = fq->submissions == 0 && fq->root->child == NULL;
		if (empty && !s->empty_queues)
			continue;

		struct view v = { s, fq->busy_ns + fq->wait_ns,
				  !(fq->flags & FRAME_QUEUE_NO_TIMESTAMPS), { 0 }, false };
		size_t rows = 0;
		if (!empty && pr) {
			pipeline_rows_build(&pipelines, s, fq, v.denominator_ns, v.timed);
			rows = pipelines.groups.len;
		} else if (!empty) {
			if (s->root_count)
				add_matches(&v, fq->root);
			else
				add_subtree(&v, fq->root, 0);
			rows = v.rows.len;
		}
		if (v.rows.failed || (pr && pipelines.failed)) {
			free(v.rows.data);
			result = -1;
			break;
		}
		bool nothing = !empty && rows == 0;
		if (nothing && !s->empty_queues) {
			free(v.rows.data);
			continue;
		}

		if (s->header) {
			sbuf_addf(&out, "GPU profile for frame %llu%sGPU %u (%s)%s%s\n",
				  (unsigned long long)f->number, g->sep, cq->gpu, cg->name, g->sep,
				  cq->name);
			if (gpu && v.timed && !empty) {
				add_ms(&out, "GPU frame", gpu->frame_ns);
				sbuf_adds(&out, g->sep);
			}
		}
		if (empty) {
			if (s->header)
				sbuf_adds(&out, "\n");
			sbuf_adds(&out, "No work on this queue in this frame.\n\n");
		} else {
			if (s->header) {
				summary(&out, s, g, fq, &v, pr);
				if (cq->gpu < 64 && !(memory_shown & (1ull << cq->gpu))) {
					memory_shown |= 1ull << cq->gpu;
					memory_lines(&out, g, f, cq->gpu);
				}
				notes(&out, f, gpu, fq);
				counters_note(&out, s, fq);
			}
			if (nothing && pr)
				sbuf_adds(&out, s->root_count ? "No draw or dispatch on this queue is in a scope "
								"that matches the root filter.\n" :
								"No draw or dispatch on this queue in this frame.\n");
			else if (nothing)
				sbuf_adds(&out, "No scope on this queue matches the root filter.\n");
			else if (pr)
				pipeline_rows_render(&out, s, g, pr, s->whole_tables ? NULL : sink);
			else
				render_table(&out, &v, g, s->whole_tables ? NULL : sink);
			if (s->counters && !nothing && !pr)
				vendor_table(&out, &v, g, meta, f, fq,
					     s->whole_tables ? NULL : sink);
			sbuf_adds(&out, "\n");
		}
		free(v.rows.data);
		result = sbuf_emit(sink, &out);
	}
	if (result == 0)
		result = report_frame_bound(s, f, g, &out, sink);
	pipeline_rows_release(&pipelines);
	sbuf_release(&out);
	return result;
}
