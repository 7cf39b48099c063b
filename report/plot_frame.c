/* SPDX-License-Identifier: MIT */
/*
 * plot_frame.c: one frame as an SVG timeline. Above, the CPU: a lane per
 * thread with its scopes nested by depth, a lane per task timeline with
 * overlapping tasks stacked, and its frames of other kinds. Per GPU a time
 * axis in ms and a lane per queue: a strip of its idle, wait and busy time
 * under the CPU's submit marks, its scopes nested by depth below. Arrows
 * from the queue whose signal ended each semaphore wait, from the CPU
 * scope that made each submission, and along task dependencies.
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
#define LEGEND2_H 16.0   /* the CPU's line of the legend */
#define CPU_LANE_TOP 4.0 /* above a CPU lane's first row */
#define MARKS_H 24.0     /* a lane of frames of another kind alone */
/* Tasks of one timeline at once drawn at most; the rest are counted. */
#define TASK_SUBLANES_MAX 16u

enum cpu_lane_kind { CPU_LANE_THREAD, CPU_LANE_TIMELINE, CPU_LANE_MARKS };

struct cpu_lane {
	enum cpu_lane_kind kind;
	uint32_t thread;   /* index into frame.cpu_threads; marks: their first mark's */
	const char *name;  /* the thread's, timeline's or marks' */
	uint32_t name_len;
	uint32_t rows;     /* levels drawn: a thread's scopes, a task and its states */
	uint32_t sublanes; /* a timeline's rows of tasks that do not overlap */
	uint32_t hidden;   /* tasks past TASK_SUBLANES_MAX at once */
	double y;
	double h;
};

/* A frame of another kind, sorted by its timeline's name. */
struct mark_ref {
	const char *name;
	uint32_t len;
	uint32_t index;    /* in frame.marks */
};

/* Where a task is drawn. */
struct task_place {
	const struct node *task;
	uint32_t lane;     /* index into timeline.cpu_lanes */
	uint32_t sublane;
};

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
	double title_h;  /* the title and legend */
	/* The CPU part, above the GPUs': its top, lanes and tasks. */
	bool cpu;
	double cpu_y;
	struct cpu_lane *cpu_lanes;
	size_t cpu_lane_count;
	struct task_place *tasks; /* by task */
	size_t task_count;
	int64_t *lane_ends;
	uint32_t *thread_lane;    /* per CPU thread, its lane; UINT32_MAX: none */
	struct mark_ref *marks;   /* the frame's marks by timeline */
	uint32_t *lane_marks_at;  /* per lane, its first in marks; one more */
	struct cpu_links links;
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

static int task_place_cmp(const void *pa, const void *pb)
{
	const struct task_place *a = pa, *b = pb;
	return (uintptr_t)a->task < (uintptr_t)b->task ? -1 : (uintptr_t)a->task > (uintptr_t)b->task;
}

static const struct task_place *task_place_of(const struct timeline *tl, const struct node *task)
{
	struct task_place key = { task, 0, 0 };
	if (!tl->task_count)
		return NULL;
	return bsearch(&key, tl->tasks, tl->task_count, sizeof(*tl->tasks), task_place_cmp);
}

static bool name_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

static int mark_ref_cmp(const void *pa, const void *pb)
{
	const struct mark_ref *a = pa, *b = pb;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = n ? memcmp(a->name, b->name, n) : 0;
	if (c)
		return c;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

/* The CPU lane of a timeline of that name, or cpu_lane_count. */
static size_t timeline_lane(const struct timeline *tl, const char *name, size_t len)
{
	size_t i = 0;
	for (; i < tl->cpu_lane_count; i++) {
		const struct cpu_lane *l = &tl->cpu_lanes[i];
		if (l->kind != CPU_LANE_THREAD && name_equal(l->name, l->name_len, name, len))
			break;
	}
	return i;
}

/* Each timeline's frames of another kind on its lane, a lane of their own
 * for those of a timeline without one: the marks sorted by timeline, so
 * that each lane's are together and each name is looked for once.
 * Returns the y below the lanes, or -1 when out of memory. */
static double mark_lanes(struct timeline *tl, double lane_y)
{
	const struct frame *f = tl->f;
	for (uint32_t m = 0; m < f->mark_count; m++) {
		tl->marks[m] = (struct mark_ref){ f->marks[m].timeline, f->marks[m].timeline_len, m };
		widen(tl, f->marks[m].ns);
	}
	if (f->mark_count > 1)
		qsort(tl->marks, f->mark_count, sizeof(*tl->marks), mark_ref_cmp);
	uint32_t *lane_of_mark = calloc((size_t)f->mark_count + 1, sizeof(*lane_of_mark));
	if (!lane_of_mark)
		return -1;
	/* Marks of one name are together: each name's lane. */
	for (uint32_t m = 0; m < f->mark_count; m++) {
		const struct mark_ref *r = &tl->marks[m];
		if (m > 0 && name_equal(r->name, r->len, tl->marks[m - 1].name, tl->marks[m - 1].len)) {
			lane_of_mark[m] = lane_of_mark[m - 1];
			continue;
		}
		size_t i = timeline_lane(tl, r->name, r->len);
		if (i == tl->cpu_lane_count) {
			tl->cpu_lanes[tl->cpu_lane_count++] = (struct cpu_lane){
				CPU_LANE_MARKS, r->index, r->name, r->len, 0, 0, 0, lane_y, MARKS_H };
			lane_y += MARKS_H;
		}
		lane_of_mark[m] = (uint32_t)i;
	}
	/* Per lane, where its marks begin: a name's marks are together. */
	for (size_t i = 0; i <= tl->cpu_lane_count; i++)
		tl->lane_marks_at[i] = 0;
	for (uint32_t m = 0; m < f->mark_count; m++)
		tl->lane_marks_at[lane_of_mark[m] + 1]++;
	for (size_t i = 1; i <= tl->cpu_lane_count; i++)
		tl->lane_marks_at[i] += tl->lane_marks_at[i - 1];
	/* The marks in lane order, each lane's (of one name) in file order. */
	struct mark_ref *sorted = malloc(((size_t)f->mark_count + 1) * sizeof(*sorted));
	uint32_t *next = calloc(tl->cpu_lane_count + 1, sizeof(*next));
	if (!sorted || !next) {
		free(sorted);
		free(next);
		free(lane_of_mark);
		return -1;
	}
	for (size_t i = 0; i < tl->cpu_lane_count; i++)
		next[i] = tl->lane_marks_at[i];
	for (uint32_t m = 0; m < f->mark_count; m++)
		sorted[next[lane_of_mark[m]]++] = tl->marks[m];
	memcpy(tl->marks, sorted, (size_t)f->mark_count * sizeof(*sorted));
	free(sorted);
	free(next);
	free(lane_of_mark);
	return lane_y;
}

/* The CPU part's lanes from y on: a thread's, a timeline's with its tasks
 * given rows, one for frames of another kind whose timeline has no
 * tasks; their times into the range drawn. Only where no GPU or queue is
 * chosen: threads belong to neither. Returns the y below them; false
 * when out of memory. */
static bool cpu_layout(struct timeline *tl, double *y)
{
	const struct frame *f = tl->f;
	const struct report_settings *s = &tl->p->stats.report;
	size_t tasks = 0;
	if (!report_cpu_chosen(s) || tl->p->stats.no_cpu ||
	    (f->cpu_thread_count == 0 && f->mark_count == 0))
		return true;
	for (uint32_t t = 0; t < f->cpu_thread_count; t++)
		if (f->cpu_threads[t].kind == FRAME_CPU_TIMELINE)
			tasks += f->cpu_threads[t].scopes;
	size_t lanes = (size_t)f->cpu_thread_count + f->mark_count + 1;
	tl->cpu_lanes = calloc(lanes, sizeof(*tl->cpu_lanes));
	tl->tasks = calloc(tasks + 1, sizeof(*tl->tasks));
	tl->lane_ends = calloc(TASK_SUBLANES_MAX, sizeof(*tl->lane_ends));
	tl->thread_lane = calloc((size_t)f->cpu_thread_count + 1, sizeof(*tl->thread_lane));
	tl->marks = calloc((size_t)f->mark_count + 1, sizeof(*tl->marks));
	tl->lane_marks_at = calloc(lanes + 1, sizeof(*tl->lane_marks_at));
	if (!tl->cpu_lanes || !tl->tasks || !tl->lane_ends || !tl->thread_lane || !tl->marks ||
	    !tl->lane_marks_at)
		return false;
	tl->cpu = true;
	tl->cpu_y = *y;
	double lane_y = *y + GPU_HEAD_H + AXIS_H;
	for (uint32_t t = 0; t < f->cpu_thread_count; t++) {
		const struct frame_cpu_thread *ct = &f->cpu_threads[t];
		tl->thread_lane[t] = UINT32_MAX;
		if (!ct->root->child)
			continue;
		struct cpu_lane *l = &tl->cpu_lanes[tl->cpu_lane_count];
		*l = (struct cpu_lane){ ct->kind == FRAME_CPU_TIMELINE ? CPU_LANE_TIMELINE :
									  CPU_LANE_THREAD,
					t, ct->name, ct->name_len, 0, 1, 0, lane_y, 0 };
		l->rows = measure_tree(tl, ct->root);
		if (l->rows == 0)
			continue;
		if (l->kind == CPU_LANE_TIMELINE) {
			/* Overlapping tasks, each in the first row free when
			 * it begins. */
			l->sublanes = 0;
			for (const struct node *task = ct->root->child; task; task = task->next) {
				if (!node_shown(tl->p, task) || !node_timed(task))
					continue;
				uint32_t k = task_lane(tl->lane_ends, &l->sublanes, TASK_SUBLANES_MAX,
						       task->begin_ns, task->end_ns);
				if (k == TASK_SUBLANES_MAX) {
					l->hidden++;
					continue;
				}
				tl->tasks[tl->task_count++] = (struct task_place){
					task, (uint32_t)tl->cpu_lane_count, k };
			}
			if (l->sublanes == 0)
				l->sublanes = 1;
		}
		l->h = CPU_LANE_TOP + l->sublanes * l->rows * ROW_H + LANE_PAD;
		if (l->h < LANE_MIN_H)
			l->h = LANE_MIN_H;
		lane_y += l->h;
		tl->thread_lane[t] = (uint32_t)tl->cpu_lane_count++;
	}
	if ((lane_y = mark_lanes(tl, lane_y)) < 0)
		return false;
	if (tl->task_count > 1)
		qsort(tl->tasks, tl->task_count, sizeof(*tl->tasks), task_place_cmp);
	if (tl->cpu_lane_count == 0) {
		tl->cpu = false;
		return true;
	}
	*y = lane_y + GPU_GAP;
	return cpu_links_build(&tl->links, f);
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
	/* The CPU's lanes add a line to the legend. */
	bool cpu = report_cpu_chosen(&tl->p->stats.report) && !tl->p->stats.no_cpu &&
		   (f->cpu_thread_count > 0 || f->mark_count > 0);
	tl->title_h = TITLE_H + (cpu ? LEGEND2_H : 0);
	double y = tl->title_h;
	if (!cpu_layout(tl, &y))
		return false;
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
	if (tl->gpu_count == 0 && !tl->cpu)
		tl->height = tl->title_h + BOTTOM_PAD + 20;
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

static void axis(struct timeline *tl, double axis_y, double bottom);

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
	axis(tl, gp->y + GPU_HEAD_H + AXIS_H - 2, last->y + last->h);
}

/* The time axis at axis_y, and its grid down to bottom. */
static void axis(struct timeline *tl, double axis_y, double bottom)
{
	struct sbuf *b = &tl->out;
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

/* Where a lane's scopes of depth 1 are drawn; deeper ones a row each
 * below. */
static double rows_y(const struct lane *l)
{
	return strip_y(l) + STRIP_H + 3;
}

static double row_y(double y1, uint32_t depth)
{
	return y1 + (depth - 1) * ROW_H;
}

static void block(struct timeline *tl, double y1, const struct node *n)
{
	struct sbuf *b = &tl->out;
	double x = x_at(tl, n->begin_ns), w = x_at(tl, n->end_ns) - x;
	double y = row_y(y1, n->depth);
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
	if (n->flags & NODE_BEGUN_EARLIER)
		sbuf_adds(b, "\nbegun before the frame");
	if (n->flags & NODE_WAIT)
		sbuf_adds(b, "\nthe CPU waiting on the GPU</title><rect class=\"blk cwait\"");
	else if (scope)
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
static void merged_block(struct timeline *tl, double y1, const struct node *first,
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
		     "height=\"%.0f\"/></g>\n", x, row_y(y1, first->depth), w, ROW_H - 1);
}

static void blocks(struct timeline *tl, double y1, const struct node *parent)
{
	const struct node *n = parent->child;
	while (n) {
		if (!node_shown(tl->p, n)) {
			n = n->next;
			continue;
		}
		if (!node_timed(n)) {
			blocks(tl, y1, n);
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
				merged_block(tl, y1, n, last, count, inclusive);
				n = last->next;
				continue;
			}
		}
		block(tl, y1, n);
		blocks(tl, y1, n);
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
		blocks(tl, rows_y(l), fq->root);
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

/* ------------------------------------------------------------------------ */
/* The CPU                                                                  */
/* ------------------------------------------------------------------------ */

/* The legend's second line, where CPU lanes are drawn. */
static void cpu_legend(struct timeline *tl)
{
	struct sbuf *b = &tl->out;
	double x = 8, y = 38 + LEGEND2_H;
	sbuf_addf(b, "<rect class=\"blk cwait\" x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"8\"/>\n", x,
		  y - 8);
	const char *wait = "CPU waiting on the GPU";
	svg_label(b, x + 18, y, "small", wait, strlen(wait));
	x += 18 + svg_text_px(wait, strlen(wait), LABEL_FONT) + 14;
	static const struct {
		const char *cls;
		const char *text;
	} arrows[] = {
		{ "submitted", "CPU scope that submitted" },
		{ "dep", "task dependency" },
		{ "dep violated", "dependency broken" },
	};
	for (size_t i = 0; i < sizeof(arrows) / sizeof(arrows[0]); i++) {
		sbuf_addf(b, "<path class=\"%s\" d=\"M%.1f %.1fh20\"/>\n", arrows[i].cls, x, y - 4);
		svg_label(b, x + 26, y, "small", arrows[i].text, strlen(arrows[i].text));
		x += 26 + svg_text_px(arrows[i].text, strlen(arrows[i].text), LABEL_FONT) + 14;
	}
	sbuf_addf(b, "<path class=\"mark\" d=\"M%.1f %.1fv10\"/>\n", x + 2, y - 9);
	const char *mark = "frame of another timeline";
	svg_label(b, x + 8, y, "small", mark, strlen(mark));
}

static void cpu_header_and_axis(struct timeline *tl)
{
	struct sbuf *b = &tl->out;
	const struct frame *f = tl->f;
	struct sbuf t = { 0 };
	sbuf_addf(&t, "CPU \xc2\xb7 frame %.3f ms", ns_between(f->cpu_end_ns, f->cpu_begin_ns) / 1e6);
	svg_label(b, 8, tl->cpu_y + 15, "h2", t.data ? t.data : "", t.len);
	sbuf_release(&t);
	const struct cpu_lane *last = &tl->cpu_lanes[tl->cpu_lane_count - 1];
	axis(tl, tl->cpu_y + GPU_HEAD_H + AXIS_H - 2, last->y + last->h);
}

static void cpu_lane_label(struct timeline *tl, const struct cpu_lane *l)
{
	struct sbuf *b = &tl->out;
	const struct frame *f = tl->f;
	sbuf_addf(b, "<text x=\"8\" y=\"%.1f\" class=\"h2\">", l->y + 15);
	svg_text_fit(b, l->name, l->name_len, 12.5, LABEL_W - 16);
	sbuf_adds(b, "</text>\n");
	if (l->kind == CPU_LANE_MARKS)
		return;
	const struct frame_cpu_thread *ct = &f->cpu_threads[l->thread];
	if (l->kind == CPU_LANE_THREAD) {
		sbuf_addf(b, "<text x=\"8\" y=\"%.1f\" class=\"small\">tid %u \xc2\xb7 %u scope%s</text>\n",
			  l->y + 29, ct->tid, ct->scopes, ct->scopes == 1 ? "" : "s");
		if (ct->wait_ns > 0)
			sbuf_addf(b, "<text x=\"8\" y=\"%.1f\" class=\"small\">waiting on the GPU %.3f ms"
				     "</text>\n", l->y + 41, ct->wait_ns / 1e6);
		return;
	}
	sbuf_addf(b, "<text x=\"8\" y=\"%.1f\" class=\"small\">%u task%s</text>\n", l->y + 29,
		  ct->scopes, ct->scopes == 1 ? "" : "s");
	if (l->hidden)
		sbuf_addf(b, "<text x=\"8\" y=\"%.1f\" class=\"small\">%u not drawn: over %u at once"
			     "</text>\n", l->y + 41, l->hidden, TASK_SUBLANES_MAX);
}

/* The y of a CPU lane's first row of scopes, or of its sublane's tasks. */
static double cpu_rows_y(const struct cpu_lane *l, uint32_t sublane)
{
	return l->y + CPU_LANE_TOP + (double)sublane * l->rows * ROW_H;
}

static void cpu_lane(struct timeline *tl, size_t i)
{
	struct sbuf *b = &tl->out;
	const struct cpu_lane *l = &tl->cpu_lanes[i];
	const struct frame *f = tl->f;
	static const char *const kinds[] = { "thread", "timeline", "marks" };
	sbuf_addf(b, "<g data-cpu=\"%s\" data-name=\"", kinds[l->kind]);
	svg_text(b, l->name, l->name_len);
	if (l->kind == CPU_LANE_THREAD)
		sbuf_addf(b, "\" data-tid=\"%u", f->cpu_threads[l->thread].tid);
	sbuf_addf(b, "\">\n<rect class=\"lane\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
		  tl->x0, l->y, tl->x1 - tl->x0, l->h);
	cpu_lane_label(tl, l);
	/* Frames of another kind: a tick across the lane, behind its tasks. */
	for (uint32_t k = tl->lane_marks_at[i]; k < tl->lane_marks_at[i + 1]; k++) {
		const struct frame_mark *mk = &f->marks[tl->marks[k].index];
		sbuf_addf(b, "<path class=\"mark\" d=\"M%.2f %.1fV%.1f\"><title>frame of '",
			  x_at(tl, mk->ns), l->y + 1, l->y + l->h - 1);
		svg_text(b, mk->timeline, mk->timeline_len);
		sbuf_adds(b, "' at ");
		ms_text(b, ms_from_start(tl, mk->ns));
		sbuf_adds(b, "</title></path>\n");
	}
	if (l->kind == CPU_LANE_THREAD) {
		blocks(tl, cpu_rows_y(l, 0), f->cpu_threads[l->thread].root);
	} else if (l->kind == CPU_LANE_TIMELINE) {
		for (const struct node *task = f->cpu_threads[l->thread].root->child; task;
		     task = task->next) {
			const struct task_place *tp = task_place_of(tl, task);
			if (!tp)
				continue;
			double y1 = cpu_rows_y(l, tp->sublane);
			block(tl, y1, task);
			blocks(tl, y1, task);
		}
	}
	sbuf_adds(b, "</g>\n");
}

static const struct cpu_lane *thread_lane(const struct timeline *tl, uint32_t thread)
{
	uint32_t i = thread < tl->f->cpu_thread_count ? tl->thread_lane[thread] : UINT32_MAX;
	return i < tl->cpu_lane_count ? &tl->cpu_lanes[i] : NULL;
}

static void arrow(struct sbuf *b, const char *cls, double sx, double sy, double ex, double ey)
{
	double bend = (ey - sy) * 0.4;
	sbuf_addf(b, "<path class=\"%s\" d=\"M%.2f %.1fC%.2f %.1f %.2f %.1f %.2f %.1f\"><title>", cls,
		  sx, sy, sx, sy + bend, ex, ey - bend, ex, ey);
}

/* From the CPU scope that made each submission, where it submitted, to
 * where its work started on its queue's lane. */
static void submitters(struct timeline *tl)
{
	struct sbuf *b = &tl->out;
	const struct frame *f = tl->f;
	for (uint32_t i = 0; i < f->submission_count; i++) {
		const struct submission *s = &f->submissions[i];
		const struct node *n = tl->links.submitter[i];
		if (!n || s->begin_ns == INT64_MIN ||
		    (f->queues[s->queue].flags & FRAME_QUEUE_NO_TIMESTAMPS))
			continue;
		const struct cpu_lane *from = thread_lane(tl, tl->links.submitter_thread[i]);
		const struct lane *to = NULL;
		for (size_t g = 0; g < tl->gpu_count && !to; g++)
			to = lane_of(tl, &tl->gpus[g], s->queue);
		while (n->depth > 1 && !node_shown(tl->p, n))
			n = n->parent;
		if (!from || !to || !node_shown(tl->p, n))
			continue;
		int64_t start = wait_end_ns(s) > s->begin_ns ? wait_end_ns(s) : s->begin_ns;
		arrow(b, "submitted", x_at(tl, s->cpu_ns), row_y(cpu_rows_y(from, 0), n->depth) + ROW_H - 1,
		      x_at(tl, start), strip_y(to));
		sbuf_adds(b, "'");
		svg_text(b, n->name, n->name_len);
		sbuf_adds(b, "' submitted to ");
		const char *queue = tl->meta->queues[s->queue].name;
		svg_text(b, queue, strlen(queue));
		sbuf_adds(b, " at ");
		ms_text(b, ms_from_start(tl, s->cpu_ns));
		sbuf_adds(b, "; its work started at ");
		ms_text(b, ms_from_start(tl, start));
		sbuf_adds(b, "</title></path>\n");
	}
}

/* From the end of each blocking task to where the task it held back
 * entered the state it waited to enter. */
static void dependencies(struct timeline *tl)
{
	struct sbuf *b = &tl->out;
	const struct frame *f = tl->f;
	for (uint32_t k = 0; k < f->task_dep_count; k++) {
		const struct frame_task_dep *d = &f->task_deps[k];
		const struct task_place *from = d->blocking ? task_place_of(tl, d->blocking) : NULL;
		const struct task_place *to = d->task ? task_place_of(tl, d->task) : NULL;
		if (!from || !to || d->entered_ns == INT64_MIN)
			continue;
		const struct cpu_lane *fl = &tl->cpu_lanes[from->lane], *tlane = &tl->cpu_lanes[to->lane];
		int64_t ended = d->blocking_end_ns != INT64_MIN ? d->blocking_end_ns : d->blocking->end_ns;
		/* The blocked task's state row, where states are drawn. */
		uint32_t depth = tlane->rows > 1 ? 2 : 1;
		double sy = row_y(cpu_rows_y(fl, from->sublane), 1) + ROW_H / 2;
		double ey = row_y(cpu_rows_y(tlane, to->sublane), depth) + (sy <= row_y(cpu_rows_y(tlane, to->sublane), depth) ? 0 : ROW_H - 1);
		arrow(b, d->violated ? "dep violated" : "dep", x_at(tl, ended), sy, x_at(tl, d->entered_ns),
		      ey);
		sbuf_adds(b, "'");
		svg_text(b, d->task->name, d->task->name_len);
		sbuf_adds(b, d->violated ? "' entered '" : "' waited for '");
		if (d->violated) {
			svg_text(b, d->state, d->state_len);
			sbuf_adds(b, "' before '");
			svg_text(b, d->blocking->name, d->blocking->name_len);
			sbuf_adds(b, "' ended: the dependency was broken");
		} else {
			svg_text(b, d->blocking->name, d->blocking->name_len);
			sbuf_adds(b, "' to end before '");
			svg_text(b, d->state, d->state_len);
			sbuf_adds(b, "'");
		}
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
	if (tl.cpu) {
		cpu_legend(&tl);
		cpu_header_and_axis(&tl);
		for (size_t i = 0; i < tl.cpu_lane_count; i++) {
			cpu_lane(&tl, i);
			if (title.failed || sbuf_emit(sink, &tl.out) != 0)
				goto out;
		}
		dependencies(&tl);
	}
	if (tl.gpu_count == 0 && !tl.cpu) {
		const char *none = "no queue selected";
		svg_label(&tl.out, 8, tl.title_h + 14, NULL, none, strlen(none));
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
	if (tl.cpu)
		submitters(&tl);
	svg_end(&tl.out);
	result = title.failed ? -1 : sbuf_emit(sink, &tl.out);
out:
	sbuf_release(&title);
	sbuf_release(&tl.out);
	free(tl.lanes);
	free(tl.gpus);
	free(tl.cpu_lanes);
	free(tl.tasks);
	free(tl.lane_ends);
	free(tl.thread_lane);
	free(tl.marks);
	free(tl.lane_marks_at);
	cpu_links_release(&tl.links);
	return result;
}
