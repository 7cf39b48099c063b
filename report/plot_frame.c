/* SPDX-License-Identifier: MIT */
/*
 * plot_frame.c: one frame as an SVG timeline. Per GPU a time axis in ms and
 * a lane per queue: a strip of its idle, wait and busy time under the
 * CPU's submit marks, its scopes nested by depth below, and arrows from
 * the queue whose signal ended each semaphore wait.
 */
#include "report_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Layout, in pixels. */
#define TITLE_H 52.0
#define LABEL_W 196.0
#define RIGHT_PAD 18.0
#define GPU_HEAD_H 22.0
#define AXIS_H 20.0
#define MARK_H 7.0       /* the submit marks, above the strip */
#define STRIP_H 8.0      /* idle, wait and busy */
#define ROW_H 17.0       /* one level of scopes */
#define LANE_PAD 5.0
#define LANE_MIN_H 50.0
#define GPU_GAP 18.0
#define BOTTOM_PAD 8.0
#define BLOCK_FONT 10.5
#define LABEL_FONT 10.0
#define TICK_PX 90.0     /* about one axis label this far apart */
/* Siblings narrower than this, each close to the one before, are drawn
 * as one block: a frame of a million draws stays a picture of pixels. */
#define MIN_BLOCK_PX 1.0
#define MERGED_NAMES 8   /* named in such a block's title */

struct lane {
	uint32_t queue;  /* index into the frame's queues */
	uint32_t rows;   /* levels of scopes drawn */
	double y;
	double h;
};

struct gpu_part {
	uint32_t gpu;
	size_t first_lane;
	size_t lane_count;
	double y;        /* top of its header */
};

struct timeline {
	const struct plot_settings *p;
	const struct capture_meta *meta;
	const struct frame *f;
	struct lane *lanes;
	size_t lane_count;
	struct gpu_part *gpus;
	size_t gpu_count;
	int64_t t0, t1;  /* the time drawn */
	double x0, x1;   /* where it is drawn */
	double height;
	struct sbuf out;
};

static bool node_shown(const struct plot_settings *p, const struct node *n)
{
	const struct report_settings *s = &p->stats.report;
	if (!s->leaf && n->kind != CRUMBS_EVENT_SCOPE)
		return false;
	return s->max_depth < 0 || n->depth <= (uint32_t)s->max_depth;
}

static bool node_timed(const struct node *n)
{
	return n->begin_ns != INT64_MIN && n->end_ns != INT64_MIN && n->end_ns >= n->begin_ns;
}

static void widen(struct timeline *tl, int64_t t)
{
	if (t == INT64_MIN)
		return;
	if (tl->t0 == INT64_MIN || t < tl->t0)
		tl->t0 = t;
	if (tl->t1 == INT64_MIN || t > tl->t1)
		tl->t1 = t;
}

/* The levels a queue's tree shows, and its times into the range drawn. */
static uint32_t measure_tree(struct timeline *tl, const struct node *root)
{
	uint32_t rows = 0;
	const struct node *n = root->child;
	while (n) {
		bool shown = node_shown(tl->p, n);
		if (shown) {
			if (n->depth > rows)
				rows = n->depth;
			if (node_timed(n)) {
				widen(tl, n->begin_ns);
				widen(tl, n->end_ns);
			}
		}
		if (shown && n->child) {
			n = n->child;
			continue;
		}
		while (n != root && !n->next)
			n = n->parent;
		n = n == root ? NULL : n->next;
	}
	return rows;
}

/* When a submission's wait ended and its work could start. */
static int64_t wait_end_ns(const struct submission *s)
{
	return s->wait_begin_ns + s->wait_ns;
}

/* a - b: exact where it fits an int64, as a double otherwise, since a
 * damaged capture's times can lie anywhere in the int64 range. */
static double ns_between(int64_t a, int64_t b)
{
	if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
		return (double)a - (double)b;
	return (double)(a - b);
}

static double x_at(const struct timeline *tl, int64_t t)
{
	double x = tl->x0 + ns_between(t, tl->t0) * (tl->x1 - tl->x0) / ns_between(tl->t1, tl->t0);
	return x < tl->x0 ? tl->x0 : x > tl->x1 ? tl->x1 : x;
}

static double ms_from_start(const struct timeline *tl, int64_t t)
{
	return ns_between(t, tl->t0) / 1e6;
}

static bool lane_selected(const struct plot_settings *p, const struct capture_meta *meta,
			  uint32_t queue)
{
	const struct capture_queue *cq = &meta->queues[queue];
	if (p->stats.report.gpu >= 0 && cq->gpu != (uint32_t)p->stats.report.gpu)
		return false;
	return report_selects_queue(&p->stats.report, cq->name);
}

/* Lanes and GPUs, their heights, and the time range. false when out of
 * memory. */
static bool layout(struct timeline *tl)
{
	const struct frame *f = tl->f;
	const struct capture_meta *meta = tl->meta;
	uint32_t queues = f->queue_count < meta->queue_count ? f->queue_count : meta->queue_count;

	tl->lanes = calloc(queues + 1, sizeof(*tl->lanes));
	tl->gpus = calloc(meta->gpu_count + 1, sizeof(*tl->gpus));
	if (!tl->lanes || !tl->gpus)
		return false;
	tl->t0 = tl->t1 = INT64_MIN;
	double y = TITLE_H;
	for (uint32_t g = 0; g < meta->gpu_count && g < f->gpu_count; g++) {
		struct gpu_part *gp = &tl->gpus[tl->gpu_count];
		gp->gpu = g;
		gp->first_lane = tl->lane_count;
		gp->y = y;
		double lane_y = y + GPU_HEAD_H + AXIS_H;
		for (uint32_t q = 0; q < queues; q++) {
			if (meta->queues[q].gpu != g || !lane_selected(tl->p, meta, q))
				continue;
			struct lane *l = &tl->lanes[tl->lane_count++];
			l->queue = q;
			l->rows = measure_tree(tl, f->queues[q].root);
			l->y = lane_y;
			l->h = MARK_H + 1 + STRIP_H + 3 + l->rows * ROW_H + LANE_PAD;
			if (l->h < LANE_MIN_H)
				l->h = LANE_MIN_H;
			lane_y += l->h;
			gp->lane_count++;
		}
		if (gp->lane_count == 0)
			continue;
		tl->gpu_count++;
		y = lane_y + GPU_GAP;
	}
	for (uint32_t i = 0; i < f->submission_count; i++) {
		const struct submission *s = &f->submissions[i];
		if (s->queue >= queues || !lane_selected(tl->p, meta, s->queue) ||
		    (f->queues[s->queue].flags & FRAME_QUEUE_NO_TIMESTAMPS))
			continue;
		/* The picture spans the GPU's work. Where the GPU waited for
		 * the CPU (idle) or a semaphore, it includes the submit; a
		 * submission made well ahead of its work leaves its mark at
		 * the left edge. Idle before a frame's first submission can
		 * reach back to the previous frame's work: it is cut. */
		if (s->idle_ns > 0 || s->wait_ns > 0)
			widen(tl, s->cpu_ns);
		widen(tl, wait_end_ns(s));
		widen(tl, s->begin_ns);
		widen(tl, s->end_ns);
	}
	if (tl->t0 == INT64_MIN)
		tl->t0 = tl->t1 = f->cpu_begin_ns;
	if (tl->t1 <= tl->t0) { /* nothing timed: 1 ms of nothing */
		if (tl->t0 > INT64_MAX - 1000000)
			tl->t0 = INT64_MAX - 1000000;
		tl->t1 = tl->t0 + 1000000;
	}
	tl->height = y - GPU_GAP + BOTTOM_PAD;
	if (tl->gpu_count == 0)
		tl->height = TITLE_H + BOTTOM_PAD + 20;
	tl->x0 = LABEL_W;
	tl->x1 = tl->p->width - RIGHT_PAD;
	return true;
}

static const struct lane *lane_of(const struct timeline *tl, const struct gpu_part *gp,
				  uint32_t queue)
{
	for (size_t i = gp->first_lane; i < gp->first_lane + gp->lane_count; i++)
		if (tl->lanes[i].queue == queue)
			return &tl->lanes[i];
	return NULL;
}

static double strip_y(const struct lane *l)
{
	return l->y + MARK_H + 1;
}

/* ------------------------------------------------------------------------ */
/* Parts                                                                    */
/* ------------------------------------------------------------------------ */

static void title_and_legend(struct timeline *tl, const char *file)
{
	struct sbuf *b = &tl->out;
	struct sbuf t = { 0 };
	sbuf_addf(&t, "Frame %llu \xc2\xb7 %s", (unsigned long long)tl->f->number, file);
	svg_label(b, 8, 20, "h1", t.data ? t.data : "", t.len);
	sbuf_release(&t);

	/* The legend: what each mark means. */
	double x = 8, y = 38;
	static const struct {
		const char *cls;
		const char *text;
	} swatches[] = {
		{ "busy", "busy" },
		{ "wait", "wait on a semaphore" },
		{ "idle", "idle: nothing submitted" },
	};
	for (size_t i = 0; i < sizeof(swatches) / sizeof(swatches[0]); i++) {
		sbuf_addf(b, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"8\"/>\n",
			  swatches[i].cls, x, y - 8);
		svg_label(b, x + 18, y, "small", swatches[i].text, strlen(swatches[i].text));
		x += 18 + svg_text_px(swatches[i].text, strlen(swatches[i].text), LABEL_FONT) + 14;
	}
	sbuf_addf(b, "<path class=\"submit\" d=\"M%.1f %.1fh8l-4 6z\"/>\n", x, y - 8);
	const char *submit = "CPU submit";
	svg_label(b, x + 12, y, "small", submit, strlen(submit));
	x += 12 + svg_text_px(submit, strlen(submit), LABEL_FONT) + 14;
	sbuf_addf(b, "<path class=\"signal\" d=\"M%.1f %.1fh20\"/>\n", x, y - 4);
	const char *signal = "signal that ended a wait";
	svg_label(b, x + 26, y, "small", signal, strlen(signal));
	x += 26 + svg_text_px(signal, strlen(signal), LABEL_FONT) + 14;
	const char *hover = "scopes by depth; hover for their times";
	svg_label(b, x, y, "small", hover, strlen(hover));
}

static void gpu_header_and_axis(struct timeline *tl, const struct gpu_part *gp)
{
	struct sbuf *b = &tl->out;
	const struct frame_gpu *fg = &tl->f->gpus[gp->gpu];
	const struct capture_gpu *cg = &tl->meta->gpus[gp->gpu];
	struct sbuf t = { 0 };
	sbuf_addf(&t, "GPU %u \xc2\xb7 %s \xc2\xb7 frame %.3f ms", gp->gpu, cg->name ? cg->name : "",
		  fg->frame_ns / 1e6);
	if (!fg->calibrated)
		sbuf_adds(&t, " \xc2\xb7 no calibration: GPU time aligned at its first submission");
	svg_label(b, 8, gp->y + 15, "h2", t.data ? t.data : "", t.len);
	sbuf_release(&t);

	const struct lane *last = &tl->lanes[gp->first_lane + gp->lane_count - 1];
	double axis_y = gp->y + GPU_HEAD_H + AXIS_H - 2;
	double bottom = last->y + last->h;
	double span_ms = ns_between(tl->t1, tl->t0) / 1e6;
	double step = svg_nice_step(span_ms, (tl->x1 - tl->x0) / TICK_PX);
	sbuf_addf(b, "<path class=\"axis\" d=\"M%.1f %.1fH%.1f\"/>\n", tl->x0, axis_y, tl->x1);
	for (unsigned k = 0; k * step <= span_ms * (1 + 1e-9) && k < 1000; k++) {
		double x = tl->x0 + k * step / span_ms * (tl->x1 - tl->x0);
		sbuf_addf(b, "<path class=\"grid\" d=\"M%.1f %.1fV%.1f\"/>\n", x, axis_y, bottom);
		sbuf_addf(b, "<path class=\"axis\" d=\"M%.1f %.1fv-4\"/>\n", x, axis_y);
		/* The last label would run off the right edge: it ends there. */
		bool at_end = x + 30 > tl->x1;
		sbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"small%s\">", x, axis_y - 6,
			  at_end ? " end" : k ? " mid" : "");
		svg_number(b, k * step, step);
		sbuf_adds(b, k == 0 ? " ms</text>\n" : "</text>\n");
	}
}

static void ms_text(struct sbuf *b, double ms)
{
	sbuf_addf(b, "%.3f ms", ms > -0.0005 && ms < 0.0005 ? 0.0 : ms);
}

static void lane_label(struct timeline *tl, const struct lane *l)
{
	struct sbuf *b = &tl->out;
	const struct frame_queue *fq = &tl->f->queues[l->queue];
	const char *name = tl->meta->queues[l->queue].name;

	sbuf_addf(b, "<text x=\"8\" y=\"%.1f\" class=\"h2\">", l->y + 15);
	svg_text_fit(b, name, strlen(name), 12.5, LABEL_W - 16);
	sbuf_adds(b, "</text>\n");
	if (fq->flags & FRAME_QUEUE_NO_TIMESTAMPS) {
		sbuf_addf(b, "<text x=\"8\" y=\"%.1f\" class=\"small\">%u submission%s, no timestamps"
			     "</text>\n", l->y + 29, fq->submissions, fq->submissions == 1 ? "" : "s");
		return;
	}
	sbuf_addf(b, "<text x=\"8\" y=\"%.1f\" class=\"small\">busy %.3f ms \xc2\xb7 %u submission%s"
		     "</text>\n", l->y + 29, fq->busy_ns / 1e6, fq->submissions,
		  fq->submissions == 1 ? "" : "s");
	sbuf_addf(b, "<text x=\"8\" y=\"%.1f\" class=\"small\">wait %.3f \xc2\xb7 idle %.3f ms</text>\n",
		  l->y + 41, fq->wait_ns / 1e6, fq->idle_ns / 1e6);
}

/* The strip of idle, wait and busy time, and the submit marks above it. */
static void lane_strip(struct timeline *tl, const struct lane *l)
{
	struct sbuf *b = &tl->out;
	const struct frame *f = tl->f;
	double sy = strip_y(l);
	uint32_t number = 0;

	for (uint32_t i = 0; i < f->submission_count; i++) {
		const struct submission *s = &f->submissions[i];
		if (s->queue != l->queue)
			continue;
		number++;
		int64_t wait_end = wait_end_ns(s);
		double xc = x_at(tl, s->cpu_ns);
		if (s->idle_ns > 0) {
			double xi = x_at(tl, s->idle_begin_ns);
			sbuf_addf(b, "<rect class=\"idle\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
				     "height=\"%.0f\"><title>idle ", xi, sy, xc - xi > 0.5 ? xc - xi : 0.5,
				  STRIP_H);
			ms_text(b, (double)s->idle_ns / 1e6);
			sbuf_addf(b, " before submission %u: the queue had finished its work and the CPU "
				     "had not submitted more</title></rect>\n", number);
		}
		if (s->wait_ns > 0) {
			double xw = x_at(tl, s->wait_begin_ns), xe = x_at(tl, wait_end);
			sbuf_addf(b, "<rect class=\"wait\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
				     "height=\"%.0f\"><title>wait ", xw, sy, xe - xw > 0.5 ? xe - xw : 0.5,
				  STRIP_H);
			ms_text(b, (double)s->wait_ns / 1e6);
			sbuf_addf(b, " of submission %u on %u semaphore%s</title></rect>\n", number,
				  s->waits, s->waits == 1 ? "" : "s");
		}
		if (s->end_ns != INT64_MIN && s->end_ns > wait_end) {
			double xb = x_at(tl, wait_end), xe = x_at(tl, s->end_ns);
			sbuf_addf(b, "<rect class=\"busy\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
				     "height=\"%.0f\"><title>submission %u: ", xb, sy,
				  xe - xb > 0.5 ? xe - xb : 0.5, STRIP_H, number);
			ms_text(b, ms_from_start(tl, wait_end));
			sbuf_adds(b, " to ");
			ms_text(b, ms_from_start(tl, s->end_ns));
			sbuf_adds(b, "</title></rect>\n");
		}
		if (s->cpu_ns < tl->t0)
			sbuf_addf(b, "<path class=\"submit\" d=\"M%.2f %.1fl6 -3.5v7z\"><title>submission "
				     "%u by the CPU at ", tl->x0 - 7, l->y + 3.5, number);
		else
			sbuf_addf(b, "<path class=\"submit\" d=\"M%.2f %.1fh7l-3.5 6z\"><title>submission "
				     "%u by the CPU at ", xc - 3.5, l->y, number);
		ms_text(b, ms_from_start(tl, s->cpu_ns));
		if (s->cpu_ns < tl->t0)
			sbuf_adds(b, ", before the picture starts");
		if (s->waits)
			sbuf_addf(b, ", waiting on %u semaphore%s", s->waits, s->waits == 1 ? "" : "s");
		sbuf_adds(b, "</title></path>\n");
	}
}

static uint32_t name_colour(const struct node *n)
{
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < n->name_len; i++)
		h = (h ^ (unsigned char)n->name[i]) * 16777619u;
	return h % 10;
}

static const char *kind_word(uint8_t kind)
{
	switch (kind) {
	case CRUMBS_EVENT_RENDER_PASS:
		return "render pass";
	case CRUMBS_EVENT_DRAW:
		return "draw";
	case CRUMBS_EVENT_DISPATCH:
		return "dispatch";
	case CRUMBS_EVENT_COPY:
		return "copy";
	case CRUMBS_EVENT_BLIT:
		return "blit";
	case CRUMBS_EVENT_CLEAR:
		return "clear";
	case CRUMBS_EVENT_RESOLVE:
		return "resolve";
	case CRUMBS_EVENT_TRACE_RAYS:
		return "trace rays";
	default:
		return "event";
	}
}

static double row_y(const struct lane *l, uint32_t depth)
{
	return strip_y(l) + STRIP_H + 3 + (depth - 1) * ROW_H;
}

static void block(struct timeline *tl, const struct lane *l, const struct node *n)
{
	struct sbuf *b = &tl->out;
	double x = x_at(tl, n->begin_ns), w = x_at(tl, n->end_ns) - x;
	double y = row_y(l, n->depth);
	bool scope = n->kind == CRUMBS_EVENT_SCOPE;

	if (w < 0.5)
		w = 0.5;
	sbuf_adds(b, "<g><title>");
	svg_text(b, n->name, n->name_len);
	if (!scope)
		sbuf_addf(b, " (%s)", kind_word(n->kind));
	sbuf_adds(b, "\ninclusive ");
	ms_text(b, n->inclusive_ns / 1e6);
	sbuf_adds(b, " \xc2\xb7 exclusive ");
	ms_text(b, n->exclusive_ns / 1e6);
	sbuf_adds(b, "\nfrom ");
	ms_text(b, ms_from_start(tl, n->begin_ns));
	sbuf_adds(b, " to ");
	ms_text(b, ms_from_start(tl, n->end_ns));
	if (n->inclusive.draws || n->inclusive.dispatches)
		sbuf_addf(b, "\n%llu draw%s \xc2\xb7 %llu dispatch%s",
			  (unsigned long long)n->inclusive.draws, n->inclusive.draws == 1 ? "" : "s",
			  (unsigned long long)n->inclusive.dispatches,
			  n->inclusive.dispatches == 1 ? "" : "es");
	if (n->flags & NODE_OPEN)
		sbuf_adds(b, "\nstill open at the frame's end");
	if (scope)
		sbuf_addf(b, "</title><rect class=\"blk c%u\"", name_colour(n));
	else
		sbuf_adds(b, "</title><rect class=\"blk leaf\"");
	sbuf_addf(b, " x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\"/>", x, y, w, ROW_H - 1);
	/* The name where it fits: inside the block, cut to its width. */
	if (w > 14) {
		size_t mark = b->len;
		sbuf_addf(b, "<text class=\"blk\" x=\"%.2f\" y=\"%.1f\">", x + 3, y + ROW_H / 2 + 3.5);
		if (svg_text_fit(b, n->name, n->name_len, BLOCK_FONT, w - 6))
			sbuf_adds(b, "</text>");
		else if (!b->failed)
			b->len = mark;
	}
	sbuf_adds(b, "</g>\n");
}

/* Narrow siblings first to last, drawn as one block. */
static void merged_block(struct timeline *tl, const struct lane *l, const struct node *first,
			 const struct node *last, size_t count, int64_t inclusive_ns)
{
	struct sbuf *b = &tl->out;
	double x = x_at(tl, first->begin_ns), w = x_at(tl, last->end_ns) - x;
	size_t named = 0;

	if (w < 0.5)
		w = 0.5;
	sbuf_addf(b, "<g><title>%zu blocks under a pixel each, inclusive ", count);
	ms_text(b, inclusive_ns / 1e6);
	sbuf_adds(b, " together:");
	for (const struct node *n = first; n && named < MERGED_NAMES; n = n->next) {
		if (!node_shown(tl->p, n))
			continue;
		sbuf_adds(b, "\n");
		svg_text(b, n->name, n->name_len);
		named++;
		if (n == last)
			break;
	}
	if (count > named)
		sbuf_addf(b, "\nand %zu more", count - named);
	sbuf_addf(b, "</title><rect class=\"blk leaf\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		     "height=\"%.0f\"/></g>\n", x, row_y(l, first->depth), w, ROW_H - 1);
}

static void blocks(struct timeline *tl, const struct lane *l, const struct node *parent)
{
	const struct node *n = parent->child;
	while (n) {
		if (!node_shown(tl->p, n)) {
			n = n->next;
			continue;
		}
		if (!node_timed(n)) {
			blocks(tl, l, n);
			n = n->next;
			continue;
		}
		if (x_at(tl, n->end_ns) - x_at(tl, n->begin_ns) < MIN_BLOCK_PX) {
			const struct node *last = n;
			size_t count = 1;
			int64_t inclusive = n->inclusive_ns;
			for (const struct node *m = n->next; m; m = m->next) {
				if (!node_shown(tl->p, m))
					continue;
				if (!node_timed(m) ||
				    x_at(tl, m->end_ns) - x_at(tl, m->begin_ns) >= MIN_BLOCK_PX ||
				    x_at(tl, m->begin_ns) - x_at(tl, last->end_ns) >= MIN_BLOCK_PX)
					break;
				last = m;
				count++;
				inclusive += m->inclusive_ns;
			}
			if (count > 1) {
				merged_block(tl, l, n, last, count, inclusive);
				n = last->next;
				continue;
			}
		}
		block(tl, l, n);
		blocks(tl, l, n);
		n = n->next;
	}
}

static void lane(struct timeline *tl, const struct lane *l)
{
	struct sbuf *b = &tl->out;
	const struct frame_queue *fq = &tl->f->queues[l->queue];
	const char *name = tl->meta->queues[l->queue].name;

	sbuf_addf(b, "<g data-queue=\"");
	svg_text(b, name, strlen(name));
	sbuf_addf(b, "\" data-gpu=\"%u\">\n<rect class=\"lane\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		     "height=\"%.1f\"/>\n", tl->meta->queues[l->queue].gpu, tl->x0, l->y,
		  tl->x1 - tl->x0, l->h);
	lane_label(tl, l);
	if (fq->submissions == 0 || (fq->flags & FRAME_QUEUE_NO_TIMESTAMPS)) {
		const char *why = fq->submissions == 0 ? "no submissions in this frame" :
							 "no timestamps on this queue";
		svg_label(b, tl->x0 + 8, l->y + l->h / 2 + 4, NULL, why, strlen(why));
	} else {
		lane_strip(tl, l);
		blocks(tl, l, fq->root);
	}
	sbuf_adds(b, "</g>\n");
}

/* Arrows from the signal that ended each semaphore wait to the waiting
 * lane, where that wait ended: when the signal came, within the
 * submission's wait (a signal sent before the submit ended it at once; one
 * after the work started, on a wait that held back later stages alone,
 * ended it when the work started). */
static void signals(struct timeline *tl, const struct gpu_part *gp)
{
	struct sbuf *b = &tl->out;
	const struct frame *f = tl->f;
	double axis_y = gp->y + GPU_HEAD_H + AXIS_H - 2;

	for (uint32_t i = 0; i < f->release_count; i++) {
		const struct release *r = &f->releases[i];
		const struct submission *s = &f->submissions[r->waiter];
		bool host = r->signaller == RELEASE_HOST;
		if (!host && r->signaller >= f->submission_count)
			continue; /* RELEASE_UNKNOWN: no signal in the frame */
		const struct lane *to = lane_of(tl, gp, s->queue);
		uint32_t from_queue = host ? 0 : f->submissions[r->signaller].queue;
		const struct lane *from = host ? NULL : lane_of(tl, gp, from_queue);
		if (!to || (f->queues[s->queue].flags & FRAME_QUEUE_NO_TIMESTAMPS) ||
		    (!host && (!from || from == to)))
			continue;
		int64_t ended = r->signal_ns < s->wait_begin_ns ? s->wait_begin_ns :
				r->signal_ns > wait_end_ns(s) ? wait_end_ns(s) : r->signal_ns;
		double sx = x_at(tl, r->signal_ns), ex = x_at(tl, ended);
		double sy = host ? axis_y : strip_y(from) + STRIP_H / 2;
		double ey = strip_y(to) + (sy < strip_y(to) ? 0 : STRIP_H);
		double bend = (ey - sy) * 0.4;
		sbuf_addf(b, "<path class=\"signal\" d=\"M%.2f %.1fC%.2f %.1f %.2f %.1f %.2f %.1f\">"
			     "<title>", sx, sy, sx, sy + bend, ex, ey - bend, ex, ey);
		const char *waiter = tl->meta->queues[s->queue].name;
		svg_text(b, waiter, strlen(waiter));
		sbuf_adds(b, " waited ");
		ms_text(b, ns_between(ended, s->wait_begin_ns) / 1e6);
		sbuf_adds(b, " for a signal from ");
		if (host) {
			sbuf_adds(b, "the host");
		} else {
			const char *signaller = tl->meta->queues[from_queue].name;
			svg_text(b, signaller, strlen(signaller));
		}
		sbuf_adds(b, " at ");
		ms_text(b, ms_from_start(tl, r->signal_ns));
		sbuf_adds(b, "</title></path>\n");
	}
}

int plot_frame(const struct plot_settings *p, const struct capture_meta *meta,
	       const struct frame *f, const char *file, const struct report_sink *sink)
{
	struct timeline tl = { .p = p, .meta = meta, .f = f };
	struct sbuf title = { 0 };
	int result = -1;

	if (!layout(&tl))
		goto out;
	sbuf_addf(&title, "crumbs plot: frame %llu of %s", (unsigned long long)f->number, file);
	svg_begin(&tl.out, p->width, tl.height, title.data ? title.data : "", title.len);
	title_and_legend(&tl, file);
	if (tl.gpu_count == 0) {
		const char *none = "no queue selected";
		svg_label(&tl.out, 8, TITLE_H + 14, NULL, none, strlen(none));
	}
	for (size_t g = 0; g < tl.gpu_count; g++) {
		const struct gpu_part *gp = &tl.gpus[g];
		gpu_header_and_axis(&tl, gp);
		for (size_t i = gp->first_lane; i < gp->first_lane + gp->lane_count; i++) {
			lane(&tl, &tl.lanes[i]);
			if (title.failed || sbuf_emit(sink, &tl.out) != 0)
				goto out;
		}
		signals(&tl, gp);
	}
	svg_end(&tl.out);
	result = title.failed ? -1 : sbuf_emit(sink, &tl.out);
out:
	sbuf_release(&title);
	sbuf_release(&tl.out);
	free(tl.lanes);
	free(tl.gpus);
	return result;
}
