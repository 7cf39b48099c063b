/* SPDX-License-Identifier: MIT */
/*
 * report_internal.h: what the files of report/ share: the compiled
 * patterns of the settings.
 */
#ifndef CRUMBS_REPORT_INTERNAL_H
#define CRUMBS_REPORT_INTERNAL_H

#include "report.h"

/* Whether a scope name matches one of the --root patterns. */
bool filter_match_root(const struct report_filter *f, const char *name, size_t len);

/* Whether a queue name matches --queue (always true without one). */
bool filter_match_queue(const struct report_filter *f, const char *name);

/* Whether wildcard w holds no *, ? or [...]: then it matches one name
 * alone, which is appended to out with its \ quotes undone. */
bool wildcard_literal(const char *w, struct sbuf *out);

/* Compiles the --root patterns for speed (PCRE2's JIT, where it is to be
 * had), for patterns matched against many names. */
void filter_compile_fast(struct report_filter *f);

/* Appends s folded for a lookup that ignores case: each character that a
 * case-blind match takes for another folds to the same one. */
void text_fold_case(struct sbuf *out, const char *s, size_t len);


/* Writes b's text to the sink and empties b: 0, or -1 when the sink failed
 * or b ran out of memory (text.c). */
int sbuf_emit(const struct report_sink *sink, struct sbuf *b);

/* Writes b's text to the sink once it holds enough, so that a long table
 * is never held whole; a sink that fails leaves b failed. NULL: b keeps
 * it all. */
void sbuf_emit_some(const struct report_sink *sink, struct sbuf *b);

/* ------------------------------------------------------------------------ */
/* Grids of cells, CSV and JSON fields (grid.c)                             */
/* ------------------------------------------------------------------------ */

/* The drawing characters of one mode. */
struct glyphs {
	const char *h, *v;
	const char *tl, *tm, *tr;  /* top: left, middle, right */
	const char *ml, *mm, *mr;  /* middle */
	const char *bl, *bm, *br;  /* bottom */
	const char *mt;            /* a middle line's junction below a group title */
	const char *sep;           /* between parts of a title line */
	const char *partial[8];    /* bar cells of 0 to 7 eighths */
	const char *full;
	const char *replacement;   /* for a control character in a name */
	const char *ellipsis;      /* where a name is cut */
	bool escape_all;           /* names escaped past ASCII (utf8_escape) */
};

extern const struct glyphs grid_unicode;
extern const struct glyphs grid_ascii;

/* The glyphs of the settings' drawing mode, escaping names past ASCII
 * where the settings say (ascii_names). */
const struct glyphs *grid_glyphs(const struct report_settings *s);

/* A name from the capture, escaped (utf8_escape) so that its characters
 * neither break the line nor, with g's escape_all, take other than a cell
 * a byte (text.c). */
void text_add_name(struct sbuf *b, const struct glyphs *g, const char *name, size_t len);

/* A vendor counter's value of 10^-scale units as exact decimal text
 * ("12.345"), into buf; its length (table.c). */
int text_counter_value(char *buf, size_t size, uint64_t v, uint32_t scale);

/* "12.3 MiB", "512 B": a size to read, the exact bytes being in JSON
 * and CSV (text.c). */
void text_bytes(struct sbuf *b, uint64_t v);

/* Colours, in the terminal's own palette (SGR codes). */
#define SGR_BAD "\033[31m"   /* regressions, exceeded budgets, errors */
#define SGR_GOOD "\033[32m"  /* improvements, budgets kept */
#define SGR_BAR "\033[36m"   /* the bars of the Percent columns */
#define SGR_RESET "\033[m"

/* text_width of a cell whose SGR codes (ESC [ ... m) take no cell. */
size_t text_cells(const char *s, size_t len);

/* Appends text of `width` cells at most: whole when it fits, else its
 * leading spaces (a tree's indentation) kept, then as many characters
 * as fit before `ellipsis`. */
void text_cut(struct sbuf *out, const char *s, size_t len, size_t width, const char *ellipsis);

/* The fewest cells text_cut may cut text to: its indentation and one
 * character before the ellipsis (or the whole text when shorter). */
size_t text_cut_min(const char *s, size_t len, const char *ellipsis);

/* Appends text in colour sgr when `on`. */
void text_colored(struct sbuf *out, bool on, const char *sgr, const char *text, size_t len);

#define MAX_COLS 16

/* A table of text cells: columns belong to groups whose titles are drawn
 * above them; the last column is left-aligned, the others right. */
struct grid {
	const struct glyphs *g;
	size_t cols;
	const char *titles[MAX_COLS];
	int group[MAX_COLS];
	const char *group_titles[4]; /* NULL: no line of group titles */
	bool grouped;
	struct sbuf text;            /* every cell, NUL-terminated */
	size_t *cells;               /* offsets into text, row by row */
	size_t cell_count;
	size_t cell_cap;
	size_t width[MAX_COLS];
	bool failed;
	/* Fitting a width (grid_fit): the line's cells at most (0: no
	 * limit), and when each column is left out (0: never; 1 first). */
	unsigned max_width;
	uint8_t drop[MAX_COLS];
	bool color;                  /* bars coloured */
};

/* The next cell, row by row (a copy of the text). */
void grid_cell(struct grid *gr, const char *text, size_t len);
/* A number with `decimals` decimals; ns as ms with 3; a count. */
void grid_fixed(struct grid *gr, int decimals, double v);
void grid_ms(struct grid *gr, double ns);
void grid_count(struct grid *gr, uint64_t v);
/* A bar of 8 cells and the percentage. */
void grid_bar(struct grid *gr, double pct);
/* A name indented 3 spaces a level, escaped (text_add_name), and an
 * optional suffix. */
void grid_name(struct grid *gr, uint32_t level, const char *name, size_t len,
	       const char *suffix);
/* s, n times; text padded with spaces to `width` display cells (right-
 * aligned with `right`), with a space either side. */
void grid_repeat(struct sbuf *b, const char *s, size_t n);
void grid_pad(struct sbuf *out, const char *text, size_t len, size_t width, bool right);
/* A title (ASCII) centred in `width` cells, the odd cell on the right. */
void grid_centre(struct sbuf *out, const char *title, size_t width);
/* Draws the grid into out (out->failed when memory ran out), handing
 * it to the sink as it goes (sbuf_emit_some). */
void grid_render(struct grid *gr, struct sbuf *out, const struct report_sink *sink);

/*
 * Fits the n columns of a table (n at most MAX_COLS) whose last holds
 * names into a line of `limit` cells (0: no limit; a line is 1 cell and
 * 3 a column more than its columns' widths): while it is too wide, the
 * shown column of least nonzero drop is left out (shown[] false); then
 * the names' width shrinks, to name_min at the least. A group's title
 * (titles[group], NULL for none, for groups below title_count) widens
 * its last shown column. width[] becomes what each shown column takes.
 */
void grid_fit(size_t *width, const int *group, const uint8_t *drop, bool *shown, size_t n,
	      const char *const *titles, size_t title_count, size_t name_min, size_t limit);
void grid_release(struct grid *gr);

/* ------------------------------------------------------------------------ */
/* Events by pipeline (pipelines.c)                                         */
/* ------------------------------------------------------------------------ */

/* The rows of a queue's table by pipeline; zero-initialised is empty. */
struct pipeline_rows {
	struct pipeline_groups groups;
	uint32_t *order;         /* the groups shown, in order */
	size_t shown;
	size_t hidden;           /* groups under --threshold */
	struct pipeline_group folded; /* the hidden together; calls 0: not shown */
	int64_t denominator_ns;  /* the queue's busy + wait */
	bool timed;              /* the queue has timestamps */
	bool failed;             /* out of memory */
};

/* Groups the events of fq that the settings select (the subtrees of the
 * --root matches) by pipeline, ordered by exclusive time or by --sort
 * draws, prims or verts, largest first; --threshold hides groups whose
 * share of denominator_ns is below it. Reuses r's memory. */
void pipeline_rows_build(struct pipeline_rows *r, const struct report_settings *s,
			 const struct frame_queue *fq, int64_t denominator_ns, bool timed);
/* Draws the table into out (handed to the sink as it goes; NULL: kept). */
void pipeline_rows_render(struct sbuf *out, const struct report_settings *s,
			  const struct glyphs *g, const struct pipeline_rows *r,
			  const struct report_sink *sink);
void pipeline_rows_release(struct pipeline_rows *r);

/* ------------------------------------------------------------------------ */
/* What bounded a frame (verdict.c)                                         */
/* ------------------------------------------------------------------------ */

enum bound_kind {
	BOUND_UNKNOWN,  /* no CPU thread, or a frame of no time */
	BOUND_GPU,      /* the CPU waited on the GPU a tenth of the frame or more */
	BOUND_CPU,      /* else the GPU idled a tenth of it or more */
	BOUND_BALANCED
};

struct frame_bound {
	enum bound_kind kind;
	int64_t frame_ns;  /* the CPU frame time */
	int32_t thread;    /* the thread whose waits count: the frame thread,
			    * or with none the one that waited most; -1 */
	int64_t wait_ns;   /* its wait_ns */
	int64_t idle_ns;   /* time of the CPU frame no GPU was busy */
};

/* What bounded frame f; 0, or -1 when out of memory. */
int frame_bound_find(const struct frame *f, struct frame_bound *out);

/* The lines that end a frame's report: its CPU frame time and GPU frame
 * times, what bounded it and the task records it left out; 0, or -1
 * when out of memory. */
int frame_bound_print(struct sbuf *out, const struct glyphs *g, const struct frame *f);

/* ------------------------------------------------------------------------ */
/* SVG (plot.c)                                                             */
/* ------------------------------------------------------------------------ */

/* Text for XML: & < > " ' escaped; invalid UTF-8, control characters and
 * non-characters become U+FFFD. */
void svg_text(struct sbuf *b, const char *s, size_t len);
/* Its width in pixels at font_px, estimated from display widths. */
double svg_text_px(const char *s, size_t len, double font_px);
/* svg_text cut to max_px, ending in an ellipsis when cut; writes nothing
 * and returns false when not even two characters fit. */
bool svg_text_fit(struct sbuf *b, const char *s, size_t len, double font_px, double max_px);
/* The XML declaration, <svg> of that size, its <title>, the style (the
 * classes the pictures use) and the shared <defs>; and the end. */
void svg_begin(struct sbuf *b, double width, double height, const char *title, size_t title_len);
void svg_end(struct sbuf *b);
/* A <text> at (x, y) of class cls (NULL: none). */
void svg_label(struct sbuf *b, double x, double y, const char *cls, const char *s, size_t len);
/* An axis step near span/count: 1, 2 or 5 times a power of ten. */
double svg_nice_step(double span, double count);
/* v with the decimals a step needs. */
void svg_number(struct sbuf *b, double v, double step);

/* ------------------------------------------------------------------------ */
/* A run's picture (plot_run.c, plot_rows.c)                                */
/* ------------------------------------------------------------------------ */

/* The room a run's graphs leave at the left (the time axis) and at the
 * right (labels and legends), in pixels. */
#define PLOT_RUN_LEFT_W 70.0
#define PLOT_RUN_RIGHT_W 200.0

/* The frame axis of a run's graphs: frames first to last from x0 to x1. */
struct plot_frames {
	double x0, x1;
	uint64_t first, last;
};

/* The x of frame `number`: the middle when first is last. */
double plot_frame_x(const struct plot_frames *a, uint64_t number);
/* Tick marks and numbers of the frames below y, "frame" at the right. */
void plot_frame_ticks(struct sbuf *b, const struct plot_frames *a, double y);

/*
 * The top rows of frame-time row `panel` (a GPU's, or the CPU's) into
 * out, which has room for max: the rows the panel's scopes offer (below
 * each queue of that GPU that rs selects; for the CPU, below each thread
 * and task timeline, which are then a thread's scopes and a timeline's
 * tasks), the max with the most time summed over the run, most first,
 * rows of equal time in the order they appeared. A scope's level offers
 * each of its scopes, unless it holds one scope alone with scopes below
 * it (a "Frame #" around each frame's work), which gives way to those.
 * Returns how many.
 */
size_t plot_top_rows(const stats *s, const struct capture_meta *meta,
		     const struct report_settings *rs, uint32_t panel, uint32_t *out, size_t max);
/* The time of row `row` summed over the run, as plot_top_rows ranks it. */
uint64_t plot_row_total_ns(const stats *s, uint32_t row);

/* The height of the rows below a graph: `count` rows, or with none a
 * line that says so. */
double plot_rows_height(size_t count);

/*
 * Writes the rows of plot_top_rows below panel's graph, from y `top`:
 * per row its time by frame number on one scale for all, the legend of
 * its colour at the right; the panel's spikes (stats_spike) marked
 * across them; and a hover column per frame (per pixel column when the
 * frames outnumber them) from hover_top down, whose <title> holds the
 * frame's number, panel's time and each row's. false when out of memory.
 */
bool plot_rows(struct sbuf *b, const stats *s, uint32_t panel, const uint32_t *rows, size_t count,
	       const struct plot_frames *a, double top, double hover_top);

/* A CSV field, quoted when it must be. */
void csv_field(struct sbuf *b, const char *s, size_t len);
/* A JSON string: valid UTF-8 passes, invalid bytes become U+FFFD. */
void json_string(struct sbuf *b, const char *s, size_t len);
/* Text for a Markdown table's cell, escaped so that it never ends it
 * (markdown.c). */
void md_text(struct sbuf *b, const char *s, size_t len);

/* --counters in CSV, JSON and Markdown (stats_counters.c). CSV: the
 * columns a header line adds, and a row of times leaves empty; the
 * counter rows, written to sink as they grow (0, or -1 when the sink
 * failed or memory ran out). JSON and Markdown are written to the sink
 * as they grow too: ,"counters_left_out":N,"counters":[...] (stats),
 * ,"counters":[...],"counter_counts":{...} (diff); a second table. */
extern const char stats_counters_csv_columns[];
extern const char stats_counters_csv_empty[];
int stats_counters_csv(struct sbuf *b, const struct report_settings *rs,
		       const struct capture_meta *meta, struct counter_runs *r,
		       const struct report_sink *sink);
int stats_counters_json(struct sbuf *b, const struct report_settings *rs,
			const struct capture_meta *meta, struct counter_runs *r,
			const struct report_sink *sink);
int stats_counters_markdown(struct sbuf *b, const struct report_settings *rs,
			    const struct capture_meta *meta, struct counter_runs *r,
			    const struct report_sink *sink);
extern const char diff_counters_csv_columns[];
extern const char diff_counters_csv_empty[];
int diff_counters_csv(const struct diff_settings *d, const struct diff_counters *dc,
		      struct sbuf *b, const struct report_sink *sink);
int diff_counters_json(const struct diff_settings *d, const struct diff_counters *dc,
		       struct sbuf *b, const struct report_sink *sink);
int diff_counters_markdown(const struct diff_settings *d, const struct diff_counters *dc,
			   struct sbuf *b, const struct report_sink *sink);

/* ------------------------------------------------------------------------ */
/* The CPU side's links (cpu_links.c)                                       */
/* ------------------------------------------------------------------------ */

struct cpu_link_order {
	int64_t cpu_ns;
	uint32_t submission;
};

/* Per submission of a frame, the CPU scope that made it; zero-initialised
 * is empty, and its memory is kept from frame to frame. */
struct cpu_links {
	const struct node **submitter;  /* per submission; NULL: none */
	uint32_t *submitter_thread;     /* its index in frame.cpu_threads */
	size_t submitter_cap, thread_cap;
	struct cpu_link_order *order;   /* the submissions by cpu_ns */
	size_t order_cap;
	const struct node **stack;
	size_t stack_cap;
};

/*
 * Finds the scope that made each submission of f: the innermost scope of a
 * CPU thread (not a timeline) whose interval, ends included, holds the
 * submission's cpu_ns, on the frame's thread (frame.frame_thread) when it
 * has one, else on the first thread in the frame's order that has one.
 * Returns false when memory ran out.
 */
bool cpu_links_build(struct cpu_links *l, const struct frame *f);
void cpu_links_release(struct cpu_links *l);

/* The state that dependency d held back: the child of d->task named
 * d->state that it entered at entered_ns (or the first it entered after);
 * NULL when the task or that state is not in the frame. */
const struct node *task_dep_state(const struct frame_task_dep *d);

/*
 * The lane of a task from begin to end among lanes whose last tasks end
 * at lane_ends[0 .. *lanes): the first that is free at begin, or a new one
 * (*lanes grows, up to max); its end becomes the task's. Returns the lane,
 * or max when all max lanes are busy.
 */
uint32_t task_lane(int64_t *lane_ends, uint32_t *lanes, uint32_t max, int64_t begin,
		   int64_t end);

/* ------------------------------------------------------------------------ */
/* The vital signs `crumbs stats` opens with (vitals.c)                     */
/* ------------------------------------------------------------------------ */

/* "Vital signs" and a line each: every GPU's frame time, the CPU's, each
 * heap's video memory, each GPU's allocations (none without frames). */
void vitals_text(struct sbuf *out, const struct stats_settings *st,
		 const struct capture_meta *meta, const stats *s, const struct glyphs *g);
/* ,"vital_signs":{...} of the JSON. */
void vitals_json(struct sbuf *b, const struct stats_settings *st,
		 const struct capture_meta *meta, const stats *s);
/* The columns the CSV's header adds for them, those rows of times leave
 * empty, and a row per heap of video memory. */
extern const char vitals_csv_columns[];
extern const char vitals_csv_empty[];
void vitals_csv(struct sbuf *b, const struct stats_settings *st, const stats *s);
/* The frame times' and allocations' vital signs as a Markdown list, for
 * the top of `crumbs stats --format markdown`. */
void vitals_markdown_head(struct sbuf *b, const struct stats_settings *st, const stats *s);
/* crumbs diff's heaps as a Markdown table, where either run has any. */
void diff_memory_markdown(struct sbuf *b, const struct compare_runs *r);
/* "+1.0 MiB", "-512 B", "0 B": a change of size to read. */
void vitals_signed_bytes(struct sbuf *b, double v);
/* A run's video memory under GPU gpu's frame times (plot_memory.c): the
 * height it takes (0 where the run has none of that GPU), and the panel
 * from `top`, on the frames' axis a; false when out of memory. */
struct plot_frames;
double plot_memory_height(const stats *s, uint32_t gpu);
bool plot_memory(struct sbuf *b, const stats *s, uint32_t gpu, const struct plot_frames *a,
		 double width, double top);
/* A table of the heaps' video memory, where the run has any. */
void vitals_markdown(struct sbuf *b, const struct stats_settings *st, const stats *s);
/* The run's presentation (stats_present.c): the vital signs' present
 * interval and missed v-syncs lines of the stats table, and its JSON
 * member (",\"presentation\":{...}"); nothing for a run without presents. */
void stats_present_line(struct sbuf *out, const struct glyphs *g, const present_run *r);
void stats_present_json(struct sbuf *b, const present_run *r);
/* What budget lines name the presentation by: its intervals (each
 * statistic over them) and its missed v-syncs (the run's count, written
 * as the limit's number of ms, whatever the statistic). */
#define STATS_PRESENT_INTERVAL "Present interval"
#define STATS_MISSED_VSYNCS "Missed v-syncs"
/* A budget line of `pattern` on statistic `stat` (0 mean, 1 median, 2
 * p90, 3 p95, 4 p99, 5 max) against the run's presentation: 0 when the
 * pattern names neither; 1 with *value (ns, or a count times 10^6) and
 * whether it passed limit_ns; -1 when the run has no such value (no
 * interval, no v-sync counted); -2 when out of memory. */
/* The present intervals' panel of a run's picture (plot_present.c): its
 * height, 0 when the run has none; drawn at `top` on the frame axis a,
 * in a picture `width` wide. false when out of memory. */
double plot_present_height(const stats *s);
bool plot_present_panel(struct sbuf *b, const stats *s, const struct plot_frames *a,
			double width, double top);
/* The present interval's row of stats' CSV (kind "present": its
 * frames are intervals, its spikes those that missed a v-sync) and of its
 * Markdown table, with the missed v-syncs; nothing without intervals.
 * The CSV row ends with `tail`, the columns it leaves empty. */
void stats_present_csv(struct sbuf *b, const present_run *r, const char *tail);
void stats_present_markdown(struct sbuf *b, const present_run *r);
int stats_present_budget(const present_run *r, const char *pattern, bool ignore_case,
			 unsigned stat, uint32_t limit_ns, uint32_t *value, bool *exceeded);

#endif
