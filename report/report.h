/* SPDX-License-Identifier: MIT */
/*
 * report.h: turns frame models into profilegpu tables, and owns the one
 * table of settings that `crumbs report` and the in-program `profilegpu`
 * command both accept. No file parsing, no printing: text goes to a sink.
 */
#ifndef CRUMBS_REPORT_H
#define CRUMBS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../analyze/analyze.h"
#include "../util/util.h"

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

/* Display width in terminal cells of UTF-8 text (utf8proc's widths:
 * combining marks 0, wide and emoji 2). Invalid bytes count 1. */
size_t text_width(const char *s, size_t len);

/* ------------------------------------------------------------------------ */
/* Settings                                                                 */
/* ------------------------------------------------------------------------ */

enum report_sort { SORT_CHRONO, SORT_TIME, SORT_DRAWS, SORT_PRIMS, SORT_VERTS };

enum report_frames { FRAMES_FIRST, FRAMES_LAST, FRAMES_ALL, FRAMES_NUMBER };

/* What a table's rows are: scopes (the tree) or pipelines (events grouped
 * by the pipeline they ran). */
enum report_by { BY_SCOPE, BY_PIPELINE };

struct report_filter; /* compiled --root patterns */

struct report_settings {
	char **roots;           /* --root patterns, owned */
	size_t root_count;
	bool ignore_case;
	double threshold_pct;   /* 0: show every row */
	bool leaf;              /* show leaf events (default on) */
	enum report_by by;      /* --by: scope (default) or pipeline */
	enum report_sort sort;
	int max_depth;          /* rows below the top one; -1: no limit */
	bool ascii;
	/* Names' characters past ASCII escaped (\uHHHH), each byte a cell:
	 * the locale's character set is not UTF-8, so a terminal would not
	 * draw them one character a cell. Not an option. */
	bool ascii_names;
	bool stats;             /* Draws, Dispatches, Prims, Verts columns */
	bool counters;          /* pipeline statistics' columns (--counters) */
	bool percent;
	bool inclusive;
	bool exclusive;
	bool header;            /* title and summary lines */
	bool empty_queues;
	int gpu;                /* -1: every GPU */
	char *queue;            /* wildcard on queue names, owned; NULL: all */
	enum report_frames frames;
	uint64_t frame_number;
	struct report_filter *filter; /* built by report_settings_prepare */
	/* Each table handed to the sink in one piece (the in-program log's
	 * one message a table), not a few rows at a time as it is drawn,
	 * which keeps a long table from being held whole. Not an option. */
	bool whole_tables;
	/* --width, --wide, --color, --no-pager (report_terminal_options),
	 * which the command turns into width and color. */
	struct term_options term;
	/* The display cells a table's line may take; 0: no limit. Past it,
	 * columns are left out (the least needed first: docs/COMMANDS.md), then
	 * names are cut. */
	unsigned width;
	bool color;             /* SGR colour codes in the tables */
};

/* Defaults: everything shown, chronological, Unicode unless the locale's
 * character set is not UTF-8. */
void report_settings_init(struct report_settings *s);

/* Whether the settings leave the CPU's side (threads, tasks, frames of
 * other kinds, the CPU frame time) in view: not where a GPU, a queue or
 * pipelines are chosen, which the CPU is none of. */
bool report_cpu_chosen(const struct report_settings *s);
void report_settings_release(struct report_settings *s);

/* The settings as options; the target is a struct report_settings. */
extern const struct option_spec report_options[];
extern const size_t report_option_count;

/* The options of the commands that print tables to a terminal (report,
 * stats, diff; info takes --no-pager): --width, --wide, --color and
 * --no-pager. The target is a struct term_options. */
extern const struct option_spec report_terminal_options[];
extern const size_t report_terminal_option_count;

/* Whether the locale's character set is UTF-8, from the values of
 * LC_ALL, LC_CTYPE and LANG (NULL: unset): the first that is set and not
 * empty decides, by holding "UTF-8" or "utf8" in any case. (The default
 * of report_settings_init's ascii.) */
bool report_locale_utf8(const char *lc_all, const char *lc_ctype, const char *lang);

/* Compiles the patterns. Returns CRUMBS_OK, or CRUMBS_ERROR_PATTERN with
 * a message in err naming the pattern. */
enum crumbs_result report_settings_prepare(struct report_settings *s,
					   char *err, size_t err_size);

/* Whether --queue selects the queue of that name. */
bool report_selects_queue(const struct report_settings *s, const char *queue_name);

/* ------------------------------------------------------------------------ */
/* Tables                                                                   */
/* ------------------------------------------------------------------------ */

/* Where text goes; write returns 0, or -1 to stop. */
struct report_sink {
	int (*write)(void *user, const char *text, size_t len);
	void *user;
};

/*
 * Writes the blocks of one frame: where report_cpu_chosen, first a block
 * per CPU thread (the one that ends the frames first) and per task
 * timeline; then per GPU and queue that the settings select, a title, a
 * summary and the table; last, where the frame has CPU threads, its CPU
 * and GPU frame times and what bounded it. Returns 0, or -1 if the sink
 * failed or memory ran out.
 */
int report_frame(const struct report_settings *s, const struct capture_meta *meta,
		 const struct frame *f, const struct report_sink *sink);

/* ------------------------------------------------------------------------ */
/* Rows for programs (`crumbs report --format`, rows.c)                     */
/* ------------------------------------------------------------------------ */

enum report_format { REPORT_FORMAT_TEXT, REPORT_FORMAT_JSON, REPORT_FORMAT_CSV };

/* Whether a --root pattern of s matches a scope of frame f on the queues
 * s selects (and on the CPU's threads and timelines when
 * report_cpu_chosen); true without --root. */
bool report_root_found(const struct report_settings *s, const struct capture_meta *meta,
		       const struct frame *f);

/*
 * Writes the frames' tables as rows: begin (CSV's header line, or JSON's
 * opening with "schema": 1 and the file's name), then each frame, then
 * end (JSON's close). A row per CPU frame ("cpu", path "CPU"), thread
 * ("thread", "CPU / NAME"), its scopes ("cpu_scope"), task timeline
 * ("timeline", "Tasks / NAME"), task ("task") and state ("state"); per
 * GPU ("gpu", "GPU N", its frame time) and queue ("busy", "wait" and
 * "idle", "GPU N / QUEUE"; busy holds the time in no scope as its
 * exclusive time), its scopes ("scope") and leaf events ("event"), paths
 * joined by " / " as crumbs stats joins them. Each row: frame, kind,
 * gpu, queue, path, name, depth, inclusive_ns, exclusive_ns,
 * inclusive_pct and exclusive_pct (of the queue's busy + wait, or of the
 * CPU frame time), and for scopes, events and busy the inclusive draws,
 * dispatches, prims and verts with counts_lower_bound. --gpu, --queue,
 * --root, --max-depth, --threshold (rows below it left out, not folded),
 * --no-leaf and --no-empty-queues choose rows; rows are in the tree's
 * order. `first` (true before the first frame) places JSON's commas.
 * Each returns 0, or -1 if the sink failed or memory ran out.
 */
int report_rows_begin(enum report_format format, const char *file, bool counters,
		      const struct report_sink *sink);
int report_rows_frame(const struct report_settings *s, enum report_format format,
		      const struct capture_meta *meta, const struct frame *f, bool *first,
		      const struct report_sink *sink);
int report_rows_end(enum report_format format, const struct report_sink *sink);

/* A JSON string of s appended to b, as the rows write theirs: valid
 * UTF-8 passes, invalid bytes become U+FFFD. */
void report_json_string(struct sbuf *b, const char *s, size_t len);

/* ------------------------------------------------------------------------ */
/* Statistics over frames (`crumbs stats`)                                  */
/* ------------------------------------------------------------------------ */

enum stats_format { STATS_FORMAT_TABLE, STATS_FORMAT_CSV, STATS_FORMAT_JSON,
		    STATS_FORMAT_MARKDOWN };

/* Siblings in order of first appearance, or by a statistic of their
 * inclusive time, largest first. */
enum stats_sort { STATS_SORT_CHRONO, STATS_SORT_TIME, STATS_SORT_P95, STATS_SORT_MAX };

struct stats_budget;

struct stats_settings {
	/* --root, --ignore-case, --threshold (hides scope rows whose share
	 * is below it), --max-depth, --ascii, --unicode, --gpu, --queue; the
	 * other report settings are not used. --gpu, --queue and --by
	 * pipeline choose GPU work, and leave the CPU's rows out, as
	 * `crumbs report` leaves its CPU blocks out. */
	struct report_settings report;
	enum stats_format format;
	enum stats_sort sort;
	struct stats_spike_rule spike;
	bool frames_set;             /* --frames A:B */
	uint64_t first_frame;        /* A, 0 when left out */
	uint64_t last_frame;         /* B, UINT64_MAX when left out */
	bool per_frame;              /* --per-frame: JSON rows carry every value */
	char *budget_path;           /* --budget FILE, owned; NULL: none */
	bool frame_times_only;       /* the frame times alone (crumbs plot):
				      * stats_keep_frame_times_only */
	bool no_cpu;                 /* --no-cpu: the GPU's rows alone */
	bool cpu_only;               /* --cpu: the CPU's rows alone */
};

/* Defaults: table, chronological, spikes above 1.5x the median, every
 * frame. */
void stats_settings_init(struct stats_settings *st);
void stats_settings_release(struct stats_settings *st);

/* The options of `crumbs stats` of its own; the target is a struct
 * stats_settings. */
extern const struct option_spec stats_options[];
extern const size_t stats_option_count;

/* The report options `crumbs stats` accepts too, copied into out (room
 * for 16), with help lines that say what they do there; their target is
 * a struct report_settings. Returns how many. */
size_t stats_report_options(struct option_spec *out);

/*
 * Reads a budget file's text: lines of `PATTERN STATISTIC LIMIT_MS`,
 * blank lines and lines whose first non-blank character is '#'. PATTERN
 * (which may hold spaces) is a wildcard matched against each row's names
 * (stats_settings' --ignore-case applies); STATISTIC is mean, median, p90,
 * p95, p99 or max of the row's time (inclusive for scopes). Returns
 * CRUMBS_OK with *out owned by the caller (free with stats_budget_free),
 * or an error with "NAME:LINE: what" in err.
 */
enum crumbs_result stats_budget_parse(const char *name, const char *text, size_t len,
				      bool ignore_case, struct stats_budget **out,
				      char *err, size_t err_size);
void stats_budget_free(struct stats_budget *b);

/* Checks each budget line against the rows the settings select (all but
 * --threshold). Returns the number of failed lines: exceeded, or matching
 * no row. */
size_t stats_budget_check(struct stats_budget *b, const struct stats_settings *st,
			  const stats *s);

/* Line i of a budget (from 0) as the last stats_budget_check left it,
 * with what it found for row `row`. */
struct stats_budget_line {
	unsigned line;          /* in the file, from 1 */
	const char *pattern;    /* valid while the budget is */
	const char *statistic;  /* mean, median, p90, p95, p99 or max */
	uint32_t limit_ns;
	bool matched;           /* the line matched row `row` */
	uint32_t value_ns;      /* that row's statistic, when matched */
};

/* Fills *out with line i; false when there is no line i. */
bool stats_budget_line(const struct stats_budget *b, size_t i, uint32_t row,
		       struct stats_budget_line *out);

/* The budget lines, the values each matched and ok or EXCEEDED, as text
 * (after stats_budget_check). Returns 0, or -1 if the sink failed. */
int stats_budget_print(const struct stats_budget *b, const struct stats_settings *st,
		       const stats *s, const struct report_sink *sink);

/* Which rows --gpu, --queue, --root and --max-depth select (not
 * --threshold): one byte per row of s, 1 for selected; malloc'd, the
 * caller's to free; NULL when out of memory. */
uint8_t *stats_select(const struct stats_settings *st, const stats *s);

/*
 * Writes the statistics of a finished stats in the settings' format: the
 * tables, CSV (with its header line) or JSON (with the budget lines when
 * b is not NULL and checked). `file` is named in the title and the JSON.
 * Returns 0, or -1 if the sink failed or memory ran out.
 */
int stats_print(const struct stats_settings *st, const struct capture_meta *meta,
		const stats *s, const char *file, const struct stats_budget *b,
		const struct report_sink *sink);

/* ------------------------------------------------------------------------ */
/* Comparing two runs (`crumbs diff`)                                       */
/* ------------------------------------------------------------------------ */

struct diff_settings {
	/* --frames and --format (stats' own), and --root, --ignore-case,
	 * --max-depth, --ascii, --unicode, --gpu, --queue (the report's):
	 * they apply to both captures. */
	struct stats_settings stats;
	enum compare_stat stat;      /* --stat */
	struct compare_rule rule;    /* --threshold, --min-ms, --alpha */
	bool force;                  /* --force */
};

/* Defaults: the median; 5%, 0.05 ms, p < 0.01, 8 frames a side. */
void diff_settings_init(struct diff_settings *d);
void diff_settings_release(struct diff_settings *d);

/* diff's own options; the target is a struct diff_settings. */
extern const struct option_spec diff_options[];
extern const size_t diff_option_count;
/* The options of crumbs stats it takes (target: its stats_settings), and
 * those of crumbs report (target: their report_settings), copied into out
 * (room for 16). Return how many. */
size_t diff_stats_options(struct option_spec *out);
size_t diff_report_options(struct option_spec *out);

struct diff_counters;

/* Writes the compared rows in the settings' format: a table (a title, the
 * rule, the count of each verdict), CSV with the header line
 * kind,gpu,path,base_frames,candidate_frames,base_ms,candidate_ms,
 * change_ms,change_pct,p,verdict, or JSON ("schema": 2); both name
 * verdicts as keys without spaces (too_few_frames). Returns 0, or -1
 * if the sink failed or memory ran out. */
int diff_print(const struct diff_settings *d, const struct compare_runs *r, const stats *base,
	       const stats *cand, const char *base_path, const char *cand_path,
	       const struct report_sink *sink);
/* The same with dc (--counters; NULL: none): CSV, JSON and Markdown hold
 * the counters compared too (the table leaves them to
 * diff_counters_print). */
int diff_print_with_counters(const struct diff_settings *d, const struct compare_runs *r,
			     const stats *base, const stats *cand, const char *base_path,
			     const char *cand_path, const struct diff_counters *dc,
			     const struct report_sink *sink);

/*
 * --counters (crumbs stats and diff; stats_counters.c): each scope's
 * pipeline statistics and vendor counters as medians per frame over the
 * frames that counted them (a vendor counter's, over the frames whose
 * pass took it); and, of two runs, the scopes whose median of one changed
 * by more than --threshold percent (and, with --min-frames frames a side,
 * passes the Mann-Whitney test at --alpha), as more or less work, not as
 * regressions. The rows' values are sorted on the way.
 */
/* The text after crumbs stats' tables. Returns 0, or -1 if the sink
 * failed or memory ran out. */
int stats_counters_print(const struct report_settings *rs, struct counter_runs *r,
			 const struct capture_meta *meta, const struct report_sink *sink);
/* Whether rs (--gpu, --queue, --root, --max-depth) selects row s. */
bool counters_row_selected(const struct report_settings *rs, const struct capture_meta *meta,
			   const struct counter_series *s);
/* Both runs' counters, each with the capture that names its queues and
 * sets. */
struct diff_counters {
	struct counter_runs *base, *cand;
	const struct capture_meta *base_meta, *cand_meta;
};
/* The text after crumbs diff's table: the changes. Returns 0, or -1 if
 * the sink failed or memory ran out. */
int diff_counters_print(const struct diff_settings *d, const struct diff_counters *dc,
			const struct report_sink *sink);

/*
 * stats_print with --counters in CSV, JSON and Markdown too: r (NULL:
 * none) holds the run's counters, of the capture meta describes. CSV's
 * header has four more columns, JSON's document a "counters" array,
 * Markdown a second table; the table format leaves them to
 * stats_counters_print.
 */
int stats_print_with_counters(const struct stats_settings *st, const struct capture_meta *meta,
			      const stats *s, const char *file, const struct stats_budget *b,
			      struct counter_runs *r, const struct report_sink *sink);

/*
 * stats and diff as Markdown (markdown.c), for a pull request's comment:
 * a line on what was read (and diff's verdicts counted), then a pipe
 * table, a row per statistic's row in the order of first appearance
 * (stats: kind, path, frames, mean, median, p95 and max in ms, share) or
 * per compared row in diff's order (verdict, row, base, candidate, change
 * in ms and percent, p); with --counters (counters, dc; NULL: none) a
 * second table of the counters. Text from the capture is escaped so that
 * it never ends a cell. Return 0, or -1 if the sink failed or memory ran out.
 */
int stats_print_markdown(const struct stats_settings *st, const struct capture_meta *meta,
			 const stats *s, const char *file, struct counter_runs *counters,
			 const struct report_sink *sink);
int diff_print_markdown(const struct diff_settings *d, const struct compare_runs *r,
			const stats *base, const stats *cand, const char *base_path,
			const char *cand_path, const struct diff_counters *dc,
			const struct report_sink *sink);

/* ------------------------------------------------------------------------ */
/* Exports (`crumbs export`)                                                */
/* ------------------------------------------------------------------------ */

enum export_format {
	EXPORT_NONE,     /* not chosen yet */
	EXPORT_PERFETTO, /* Perfetto's protobuf trace */
	EXPORT_CHROME,   /* the Trace Event Format, JSON */
	EXPORT_FOLDED    /* folded stacks, one line per scope with its weight */
};

struct export_settings {
	/* --root, --ignore-case, --max-depth, --leaf, --no-leaf, --gpu,
	 * --queue of the report; the other report settings are not used. */
	struct report_settings report;
	enum export_format format;   /* --format */
	char *output;                /* -o FILE, owned; NULL: standard output */
	bool frames_set;             /* --frames A:B */
	uint64_t first_frame;        /* A, 0 when left out */
	uint64_t last_frame;         /* B, UINT64_MAX when left out */
	uint64_t max_bytes;          /* --max-bytes: output refused past it; 0: no limit */
	bool no_cpu;                 /* --no-cpu: the GPUs' tracks alone */
	bool per_frame;              /* --per-frame: folded names keep frame numbers */
};

/* The output an export writes at most unless --max-bytes says otherwise:
 * a few times what a long run's trace takes, far less than what a small
 * capture of long names nested deep can make. */
#define EXPORT_DEFAULT_MAX_BYTES (UINT64_C(4) << 30)

/* Defaults: no format, standard output, every frame, at most
 * EXPORT_DEFAULT_MAX_BYTES. */
void export_settings_init(struct export_settings *es);
void export_settings_release(struct export_settings *es);

/* export's own options; the target is a struct export_settings. */
extern const struct option_spec export_options[];
extern const size_t export_option_count;
/* The report options export accepts, copied into out (room for 16), with
 * help lines that say what they do there; their target is a struct
 * report_settings. Returns how many. */
size_t export_report_options(struct option_spec *out);

/*
 * Writes the frames of a capture, one at a time, as one trace: begin with
 * the settings (their patterns prepared; they must outlive the exporter),
 * add each frame, then end, which writes what closes the trace. Each
 * frame is written before the call returns, so memory follows one frame.
 *
 * Perfetto and Chrome: per GPU a process (pid: the GPU's index + 1) with
 * its "GPU frame time" counter; per queue three tracks: its scopes and
 * events as nested slices, its submissions with their "Idle" and "Wait",
 * and its "CPU submits" as instants; flows from each CPU submit to its
 * submission and from each semaphore signal to the wait it released.
 * Unless a GPU or queue is chosen, or no_cpu, a "CPU" process: a track per CPU
 * thread (its real tid), lanes per task timeline, a track per timeline of
 * frames of another kind; flows from the CPU scope that made each
 * submission to it and along task dependencies.
 * Every slice and instant carries its frame's number. Folded: per stack of
 * scope names of a frame (and per queue, for its time in no scope) "GPU
 * 0;Graphics 0;Frame 2;Post Processing EXCLUSIVE_NS", the scopes of one
 * stack summed, so that a queue's weights add up to its busy time; hidden
 * scopes' time goes to the scope that shows; then "CPU;THREAD;..." and
 * "Tasks;TIMELINE;TASK;STATE" lines of the CPU side.
 *
 * Past the settings' max_bytes of output, nothing more is handed to the
 * sink and the calls fail (exporter_over_limit then says so).
 */
typedef struct exporter exporter;

/* A new exporter writing to sink, or NULL when out of memory. */
exporter *exporter_begin(const struct export_settings *es, const struct report_sink *sink);
/* Writes a frame. Returns 0, or -1 when the sink failed or memory ran
 * out. */
int exporter_frame(exporter *x, const struct capture_meta *meta, const struct frame *f);
/* Writes the end of the trace. Returns 0 or -1, as exporter_frame. */
int exporter_end(exporter *x);
/* Whether the calls failed because the output would pass max_bytes; the
 * bytes handed to the sink, which stop below it. */
bool exporter_over_limit(const exporter *x);
uint64_t exporter_bytes(const exporter *x);
/* Frees x; NULL is a no-op. */
void exporter_free(exporter *x);

/* ------------------------------------------------------------------------ */
/* Pictures (`crumbs plot`)                                                 */
/* ------------------------------------------------------------------------ */

#define PLOT_DEFAULT_WIDTH 1200u
#define PLOT_MIN_WIDTH 400
#define PLOT_MAX_WIDTH 20000
/* The rows of top scopes below each frame-time graph: the default, and
 * the most (one colour each). */
#define PLOT_DEFAULT_ROWS 6u
#define PLOT_MAX_ROWS 10

struct plot_settings {
	/* --frames, --spike, --budget (stats'), and in stats.report --frame,
	 * --gpu, --queue, --ignore-case, --max-depth, --leaf and --no-leaf
	 * (the report's). stats.report.frames is FRAMES_ALL unless --frame
	 * picked one; stats.frame_times_only is set where rows is 0 (the
	 * command sets it after reading the options). */
	struct stats_settings stats;
	unsigned width;  /* --width: pixels */
	unsigned rows;   /* --rows: top scopes below each graph; 0: none */
	char *output;    /* -o FILE, owned; NULL: standard output */
};

/* Defaults: 1200 pixels wide, 6 rows, standard output, no --frame. */
void plot_settings_init(struct plot_settings *p);
void plot_settings_release(struct plot_settings *p);

/* plot's own options; the target is a struct plot_settings. */
extern const struct option_spec plot_options[];
extern const size_t plot_option_count;
/* The options of crumbs stats it takes (target: its stats), and those of
 * crumbs report (target: stats.report), copied into out (room for 16),
 * with help lines for the pictures. Return how many. */
size_t plot_stats_options(struct option_spec *out);
size_t plot_report_options(struct option_spec *out);

/*
 * Writes one frame as an SVG timeline: per GPU that the settings select,
 * a time axis in ms and a lane per selected queue, with its submissions'
 * idle, wait and busy time, the CPU's submit marks, the scopes nested by
 * depth (names where they fit; each with a <title> of its name, inclusive
 * and exclusive time) and an arrow for each semaphore wait from the
 * queue, or the host, whose signal ended it (frame.releases). Unless a
 * GPU or queue is chosen, or stats.no_cpu, above them a lane per CPU thread and task
 * timeline, arrows from the CPU scope that made each submission and along
 * task dependencies. `file` is named in the title. Returns 0, or -1 if the sink failed or memory ran
 * out.
 */
int plot_frame(const struct plot_settings *p, const struct capture_meta *meta,
	       const struct frame *f, const char *file, const struct report_sink *sink);

/*
 * Writes the frame times of a finished stats (made with
 * stats_keep_frame_times_only or not) as an SVG graph: the CPU frame time
 * first where the frames held CPU threads, tasks or marks (not where a
 * GPU or queue is chosen, nor with stats.no_cpu), then per selected GPU,
 * every frame's time by frame number (each pixel column's lowest and
 * highest when there are more frames than columns), the median and p95,
 * the spikes of its stats row marked, and the limits of the budget lines
 * that matched its row (b checked with stats_budget_check; NULL: none).
 * Where p->rows is not 0, below each graph the times of its top scopes
 * (plot_top_rows; none in statistics of the frame times alone), with
 * each frame's numbers in a <title>. Returns 0, or -1 if the sink failed
 * or memory ran out.
 */
int plot_run(const struct plot_settings *p, const struct capture_meta *meta, const stats *s,
	     const struct stats_budget *b, const char *file, const struct report_sink *sink);

#endif
