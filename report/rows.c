/* SPDX-License-Identifier: MIT */
/*
 * rows.c: `crumbs report` for programs: a frame's tables as one row per
 * GPU, queue, scope, event, CPU thread, timeline, task and state, in CSV
 * or JSON, with the row kinds and paths crumbs stats gives them; and
 * whether --root found anything in a frame.
 */
#include "report_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Whether --root matches                                                   */
/* ------------------------------------------------------------------------ */

static bool subtree_matches(const struct report_settings *s, const struct node *n)
{
	for (const struct node *c = n->child; c; c = c->next)
		if (filter_match_root(s->filter, c->name, c->name_len) || subtree_matches(s, c))
			return true;
	return false;
}

bool report_root_found(const struct report_settings *s, const struct capture_meta *meta,
		       const struct frame *f)
{
	if (s->root_count == 0)
		return true;
	for (uint32_t i = 0; i < f->queue_count; i++) {
		const struct frame_queue *fq = &f->queues[i];
		const struct capture_queue *q = &meta->queues[fq->queue];
		if ((s->gpu >= 0 && q->gpu != (uint32_t)s->gpu) || !report_selects_queue(s, q->name))
			continue;
		for (uint32_t k = 0; k < fq->flat_count; k++)
			if (filter_match_root(s->filter, fq->flat[k].name, fq->flat[k].name_len))
				return true;
		if (fq->root && subtree_matches(s, fq->root))
			return true;
	}
	if (!report_cpu_chosen(s))
		return false;
	for (uint32_t i = 0; i < f->cpu_thread_count; i++)
		if (f->cpu_threads[i].root && subtree_matches(s, f->cpu_threads[i].root))
			return true;
	return false;
}

/* ------------------------------------------------------------------------ */
/* Rows                                                                     */
/* ------------------------------------------------------------------------ */

/* One row as both formats hold it. */
struct row {
	uint64_t frame;
	const char *kind;
	int64_t gpu;            /* -1: none (the CPU's) */
	const char *queue;      /* NULL: none */
	const struct sbuf *path;
	const char *name;
	size_t name_len;
	uint32_t depth;
	int64_t inclusive_ns;
	int64_t exclusive_ns;   /* -1: none */
	double inclusive_pct;   /* < 0: none */
	double exclusive_pct;
	const struct counts *counts; /* NULL: none */
	const struct node *node;     /* for --counters; NULL: none */
};

struct writer {
	const struct report_settings *s;
	enum report_format format;
	const struct report_sink *sink;
	struct sbuf *out;
	bool *first;            /* no row written yet (JSON's commas) */
	uint64_t frame;
	int64_t denominator_ns; /* of the percentages */
	const char *kind;       /* of the nodes walked: scope or cpu_scope, task */
	const char *queue;
	int64_t gpu;
	int result;
	const struct capture_meta *meta; /* its vendor counter sets */
};

static void pct(struct sbuf *b, double v, bool json)
{
	if (v >= 0)
		sbuf_addf(b, "%.6f", v);
	else if (json)
		sbuf_adds(b, "null");
}

/* The keys of the pipeline statistics, in enum crumbs_pipeline_counter's
 * order. */
static const char *const counter_keys[CRUMBS_PIPELINE_COUNTERS] = {
	"ia_vertices", "ia_primitives", "vs_invocations", "gs_invocations", "gs_primitives",
	"clipping_invocations", "clipping_primitives", "fs_invocations", "tcs_patches",
	"tes_invocations", "cs_invocations"
};

/* JSON's vendor counters of a node: its set's number, whether they are
 * unknown, and each counter's inclusive value by name, as a decimal
 * number (null: not taken in this frame, or unknown). */
static void add_vendor(struct sbuf *b, const struct node *n, const struct capture_meta *meta)
{
	uint32_t number = node_vendor_set(n);
	const struct capture_counter_set *set = number ? meta_counter_set(meta, number) : NULL;
	if (!set)
		return;
	bool unknown = node_vendor_unknown(n, true);
	sbuf_addf(b, ",\"vendor\":{\"set\":%u,\"unknown\":%s,\"values\":{", number,
		  unknown ? "true" : "false");
	for (uint32_t k = 0; k < set->count; k++) {
		char text[48];
		uint64_t v;
		sbuf_adds(b, k ? "," : "");
		json_string(b, set->counters[k].name, strlen(set->counters[k].name));
		sbuf_adds(b, ":");
		if (!unknown && node_vendor_counter(n, true, k, &v))
			sbuf_add(b, text, (size_t)text_counter_value(text, sizeof(text), v,
								     set->counters[k].scale));
		else
			sbuf_adds(b, "null");
	}
	sbuf_adds(b, "}}");
}

/* --counters: a row's inclusive pipeline statistics, each column empty
 * (null) where its node has none, and whether they are unknown; in JSON,
 * its vendor counters too. */
static void add_counters(struct sbuf *b, const struct row *r, bool json,
			 const struct capture_meta *meta)
{
	const struct node *n = r->node;
	bool unknown = n && node_counters_unknown(n, true);
	if (json)
		sbuf_adds(b, ",\"counters\":");
	if (json && (!n || !n->counters)) {
		sbuf_adds(b, "null");
		return;
	}
	if (json)
		sbuf_addf(b, "{\"unknown\":%s", unknown ? "true" : "false");
	for (uint32_t i = 0; i < CRUMBS_PIPELINE_COUNTERS; i++) {
		uint64_t v;
		bool has = n && node_counter(n, true, (enum crumbs_pipeline_counter)i, &v);
		if (json) {
			sbuf_addf(b, ",\"%s\":", counter_keys[i]);
			if (has)
				sbuf_addf(b, "%llu", (unsigned long long)v);
			else
				sbuf_adds(b, "null");
		} else {
			sbuf_adds(b, ",");
			if (has)
				sbuf_addf(b, "%llu", (unsigned long long)v);
		}
	}
	if (json) {
		add_vendor(b, n, meta);
		sbuf_adds(b, "}");
	} else if (n && n->counters)
		sbuf_addf(b, ",%d", unknown ? 1 : 0);
	else
		sbuf_adds(b, ",");
}

static void add_row(struct writer *w, const struct row *r)
{
	struct sbuf *b = w->out;
	const char *path = r->path->data ? r->path->data : "";
	if (w->format == REPORT_FORMAT_CSV) {
		sbuf_addf(b, "%llu,%s,", (unsigned long long)r->frame, r->kind);
		if (r->gpu >= 0)
			sbuf_addf(b, "%lld", (long long)r->gpu);
		sbuf_adds(b, ",");
		if (r->queue)
			csv_field(b, r->queue, strlen(r->queue));
		sbuf_adds(b, ",");
		csv_field(b, path, r->path->len);
		sbuf_adds(b, ",");
		csv_field(b, r->name, r->name_len);
		sbuf_addf(b, ",%u,%lld,", r->depth, (long long)r->inclusive_ns);
		if (r->exclusive_ns >= 0)
			sbuf_addf(b, "%lld", (long long)r->exclusive_ns);
		sbuf_adds(b, ",");
		pct(b, r->inclusive_pct, false);
		sbuf_adds(b, ",");
		pct(b, r->exclusive_pct, false);
		if (r->counts)
			sbuf_addf(b, ",%llu,%llu,%llu,%llu,%d", (unsigned long long)r->counts->draws,
				  (unsigned long long)r->counts->dispatches,
				  (unsigned long long)r->counts->prims,
				  (unsigned long long)r->counts->verts, r->counts->unknown ? 1 : 0);
		else
			sbuf_adds(b, ",,,,,");
		if (w->s->counters)
			add_counters(b, r, false, w->meta);
		sbuf_adds(b, "\n");
	} else {
		sbuf_addf(b, "%s\n{\"frame\":%llu,\"kind\":\"%s\",\"gpu\":", *w->first ? "" : ",",
			  (unsigned long long)r->frame, r->kind);
		if (r->gpu >= 0)
			sbuf_addf(b, "%lld", (long long)r->gpu);
		else
			sbuf_adds(b, "null");
		sbuf_adds(b, ",\"queue\":");
		if (r->queue)
			json_string(b, r->queue, strlen(r->queue));
		else
			sbuf_adds(b, "null");
		sbuf_adds(b, ",\"path\":");
		json_string(b, path, r->path->len);
		sbuf_adds(b, ",\"name\":");
		json_string(b, r->name, r->name_len);
		sbuf_addf(b, ",\"depth\":%u,\"inclusive_ns\":%lld,\"exclusive_ns\":", r->depth,
			  (long long)r->inclusive_ns);
		if (r->exclusive_ns >= 0)
			sbuf_addf(b, "%lld", (long long)r->exclusive_ns);
		else
			sbuf_adds(b, "null");
		sbuf_adds(b, ",\"inclusive_pct\":");
		pct(b, r->inclusive_pct, true);
		sbuf_adds(b, ",\"exclusive_pct\":");
		pct(b, r->exclusive_pct, true);
		if (r->counts)
			sbuf_addf(b, ",\"draws\":%llu,\"dispatches\":%llu,\"prims\":%llu,\"verts\":%llu,"
				  "\"counts_lower_bound\":%s",
				  (unsigned long long)r->counts->draws,
				  (unsigned long long)r->counts->dispatches,
				  (unsigned long long)r->counts->prims,
				  (unsigned long long)r->counts->verts,
				  r->counts->unknown ? "true" : "false");
		if (w->s->counters)
			add_counters(b, r, true, w->meta);
		sbuf_adds(b, "}");
	}
	*w->first = false;
	if (b->len > 60000 && w->result == 0)
		w->result = sbuf_emit(w->sink, b);
}

static double share(int64_t ns, int64_t of)
{
	return of > 0 ? 100.0 * (double)ns / (double)of : -1;
}

static bool shown(const struct report_settings *s, const struct node *n)
{
	return s->leaf || n->kind == CRUMBS_EVENT_SCOPE;
}

/* The time of a node's hidden events (--no-leaf), which stays its own. */
static int64_t hidden_ns(const struct report_settings *s, const struct node *n)
{
	int64_t ns = 0;
	for (const struct node *c = n->child; c; c = c->next)
		if (!shown(s, c))
			ns += c->exclusive_ns + hidden_ns(s, c);
	return ns;
}

/* Writes node n (path: its parent's, which this appends to and restores)
 * at `level` below the top row or --root match, and its subtree. */
static void walk(struct writer *w, const struct node *n, struct sbuf *path, uint32_t level,
		 bool matched)
{
	const struct report_settings *s = w->s;
	size_t len = path->len;
	bool match = matched || s->root_count == 0 ||
		     filter_match_root(s->filter, n->name, n->name_len);

	/* --max-depth counts from the --root match, as stats does. */
	if (match && !matched && s->root_count)
		level = 0;
	sbuf_adds(path, " / ");
	sbuf_add(path, n->name, n->name_len);
	if (match && !(s->max_depth >= 0 && level > (uint32_t)s->max_depth)) {
		double incl = share(n->inclusive_ns, w->denominator_ns);
		if (!(s->threshold_pct > 0 && incl >= 0 && incl < s->threshold_pct)) {
			int64_t excl = n->exclusive_ns + hidden_ns(s, n);
			const char *kind = n->kind == CRUMBS_EVENT_SCOPE ? w->kind : "event";
			struct row r = { w->frame, kind, w->gpu, w->queue, path, n->name, n->name_len,
					 n->depth, n->inclusive_ns, excl, incl,
					 share(excl, w->denominator_ns),
					 w->gpu >= 0 ? &n->inclusive : NULL, w->gpu >= 0 ? n : NULL };
			add_row(w, &r);
			for (const struct node *c = n->child; c; c = c->next)
				if (shown(s, c))
					walk(w, c, path, level + 1, true);
				else
					for (const struct node *g = c->child; g; g = g->next)
						walk(w, g, path, level + 1, true);
		}
	} else if (!match) {
		for (const struct node *c = n->child; c; c = c->next)
			walk(w, c, path, level, false);
	}
	path->len = len;
	if (path->data)
		path->data[len] = '\0';
}

/* The rows of a queue: its busy, wait and idle, and its scopes. */
static void queue_rows(struct writer *w, const struct capture_meta *meta,
		       const struct frame_queue *fq, struct sbuf *path)
{
	const struct capture_queue *q = &meta->queues[fq->queue];
	const struct report_settings *s = w->s;
	if (!s->empty_queues && fq->submissions == 0)
		return;
	path->len = 0;
	sbuf_addf(path, "GPU %u / ", q->gpu);
	sbuf_adds(path, q->name);
	w->queue = q->name;
	w->gpu = q->gpu;
	w->denominator_ns = fq->busy_ns + fq->wait_ns;
	int64_t root_excl = fq->root ? fq->root->exclusive_ns + hidden_ns(s, fq->root) : -1;
	struct row busy = { w->frame, "busy", q->gpu, q->name, path, q->name, strlen(q->name), 0,
			    fq->busy_ns, root_excl, share(fq->busy_ns, w->denominator_ns),
			    share(root_excl, w->denominator_ns), fq->root ? &fq->root->inclusive : NULL,
			    fq->root };
	struct row wait = { w->frame, "wait", q->gpu, q->name, path, q->name, strlen(q->name), 0,
			    fq->wait_ns, -1, share(fq->wait_ns, w->denominator_ns), -1, NULL, NULL };
	struct row idle = { w->frame, "idle", q->gpu, q->name, path, q->name, strlen(q->name), 0,
			    fq->idle_ns, -1, -1, -1, NULL, NULL };
	add_row(w, &busy);
	add_row(w, &wait);
	add_row(w, &idle);
	if (!fq->root)
		return;
	w->kind = "scope";
	for (const struct node *c = fq->root->child; c; c = c->next)
		if (shown(s, c))
			walk(w, c, path, 1, false);
		else
			for (const struct node *g = c->child; g; g = g->next)
				walk(w, g, path, 1, false);
}

/* The CPU's rows: its frame time, and per thread and task timeline its
 * tree. */
static void cpu_rows(struct writer *w, const struct frame *f, struct sbuf *path)
{
	int64_t cpu_ns = f->cpu_end_ns - f->cpu_begin_ns;
	static const char cpu[] = "CPU";
	path->len = 0;
	sbuf_adds(path, cpu);
	w->gpu = -1;
	w->queue = NULL;
	w->denominator_ns = cpu_ns;
	struct row r = { w->frame, "cpu", -1, NULL, path, cpu, 3, 0, cpu_ns, -1, -1, -1, NULL, NULL };
	add_row(w, &r);
	for (uint32_t i = 0; i < f->cpu_thread_count; i++) {
		const struct frame_cpu_thread *t = &f->cpu_threads[i];
		bool timeline = t->kind == FRAME_CPU_TIMELINE;
		char unnamed[32];
		const char *name = t->name;
		size_t name_len = t->name_len;
		if (!name_len) {
			snprintf(unnamed, sizeof(unnamed), "thread %u", t->tid);
			name = unnamed;
			name_len = strlen(unnamed);
		}
		path->len = 0;
		sbuf_adds(path, timeline ? "Tasks / " : "CPU / ");
		sbuf_add(path, name, name_len);
		int64_t ns = t->root ? t->root->inclusive_ns : 0;
		struct row tr = { w->frame, timeline ? "timeline" : "thread", -1, NULL, path, name,
				  name_len, 0, ns, -1, share(ns, cpu_ns), -1, NULL, NULL };
		add_row(w, &tr);
		if (!t->root)
			continue;
		w->kind = timeline ? "task" : "cpu_scope";
		for (const struct node *c = t->root->child; c; c = c->next) {
			if (timeline) {
				/* A task's states are "state" rows. */
				size_t len = path->len;
				bool match = (w->s->root_count == 0 ||
					      filter_match_root(w->s->filter, c->name, c->name_len)) &&
					     !(w->s->max_depth >= 0 && w->s->max_depth < 1);
				sbuf_adds(path, " / ");
				sbuf_add(path, c->name, c->name_len);
				if (match) {
					struct row task = { w->frame, "task", -1, NULL, path, c->name,
							    c->name_len, 1, c->inclusive_ns, -1,
							    share(c->inclusive_ns, cpu_ns), -1, NULL, NULL };
					add_row(w, &task);
					w->kind = "state";
					for (const struct node *st = c->child; st; st = st->next)
						walk(w, st, path, 2, true);
					w->kind = "task";
				}
				path->len = len;
				if (path->data)
					path->data[len] = '\0';
			} else {
				walk(w, c, path, 1, false);
			}
		}
	}
}

int report_rows_begin(enum report_format format, const char *file, bool counters,
		      const struct report_sink *sink)
{
	struct sbuf b = { 0 };
	if (format == REPORT_FORMAT_CSV) {
		sbuf_adds(&b, "frame,kind,gpu,queue,path,name,depth,inclusive_ns,exclusive_ns,"
			      "inclusive_pct,exclusive_pct,draws,dispatches,prims,verts,"
			      "counts_lower_bound");
		for (uint32_t i = 0; counters && i < CRUMBS_PIPELINE_COUNTERS; i++)
			sbuf_addf(&b, ",%s", counter_keys[i]);
		sbuf_adds(&b, counters ? ",counters_unknown\n" : "\n");
	} else {
		sbuf_adds(&b, "{\"schema\":1,\"file\":");
		json_string(&b, file, strlen(file));
		sbuf_adds(&b, ",\"rows\":[");
	}
	int r = sbuf_emit(sink, &b);
	sbuf_release(&b);
	return r;
}

int report_rows_frame(const struct report_settings *s, enum report_format format,
		      const struct capture_meta *meta, const struct frame *f, bool *first,
		      const struct report_sink *sink)
{
	struct sbuf out = { 0 }, path = { 0 };
	struct writer w = { s, format, sink, &out, first, f->number, 0, "scope", NULL, -1, 0, meta };

	if (report_cpu_chosen(s) && (f->cpu_thread_count || f->mark_count))
		cpu_rows(&w, f, &path);
	for (uint32_t g = 0; g < f->gpu_count && w.result == 0; g++) {
		const struct frame_gpu *fg = &f->gpus[g];
		if (s->gpu >= 0 && fg->gpu != (uint32_t)s->gpu)
			continue;
		bool any = false;
		for (uint32_t i = 0; i < f->queue_count && !any; i++)
			any = meta->queues[f->queues[i].queue].gpu == fg->gpu &&
			      report_selects_queue(s, meta->queues[f->queues[i].queue].name);
		if (!any)
			continue;
		path.len = 0;
		sbuf_addf(&path, "GPU %u", fg->gpu);
		w.gpu = fg->gpu;
		w.queue = NULL;
		char name[24];
		snprintf(name, sizeof(name), "GPU %u", fg->gpu);
		struct row r = { f->number, "gpu", fg->gpu, NULL, &path, name, strlen(name), 0,
				 fg->frame_ns, -1, -1, -1, NULL, NULL };
		add_row(&w, &r);
		for (uint32_t i = 0; i < f->queue_count; i++) {
			const struct capture_queue *q = &meta->queues[f->queues[i].queue];
			if (q->gpu == fg->gpu && report_selects_queue(s, q->name))
				queue_rows(&w, meta, &f->queues[i], &path);
		}
	}
	if (path.failed)
		out.failed = true;
	sbuf_release(&path);
	if (w.result == 0)
		w.result = sbuf_emit(sink, &out);
	sbuf_release(&out);
	return w.result;
}

int report_rows_end(enum report_format format, const struct report_sink *sink)
{
	if (format != REPORT_FORMAT_JSON)
		return 0;
	struct sbuf b = { 0 };
	sbuf_adds(&b, "\n]}\n");
	int r = sbuf_emit(sink, &b);
	sbuf_release(&b);
	return r;
}

void report_json_string(struct sbuf *b, const char *s, size_t len)
{
	json_string(b, s, len);
}
