/* SPDX-License-Identifier: MIT */
/*
 * stats.c: `crumbs stats FILE [options]`: statistics over every frame of a
 * run (frame times, queue times, each scope path's times and share) as
 * tables, CSV or JSON, and budgets checked against them.
 */
#include "cmds.h"
#include "../format/format.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A budget file is a few lines; more than this is not one. */
#define BUDGET_MAX_BYTES (1u << 20)

static int stderr_sink(void *user, const char *text, size_t len)
{
	(void)user;
	return fwrite(text, 1, len, stderr) == len ? 0 : -1;
}

/* Reads the budget file whole; says why not and returns NULL. */
static char *read_budget(const char *path, size_t *len)
{
	char why[128];
	FILE *f = fopen(path, "rb");
	if (!f) {
		cmd_error("cannot read budget file '%s': %s", path, cmd_strerror(errno, why, sizeof(why)));
		return NULL;
	}
	char *text = malloc(BUDGET_MAX_BYTES + 1);
	size_t n = text ? fread(text, 1, BUDGET_MAX_BYTES + 1, f) : 0;
	if (!text)
		cmd_error("out of memory");
	else if (ferror(f))
		cmd_error("cannot read budget file '%s': %s", path, cmd_strerror(errno, why, sizeof(why)));
	else if (n > BUDGET_MAX_BYTES)
		cmd_error("budget file '%s' is larger than 1 MiB; is it one?", path);
	else {
		fclose(f);
		*len = n;
		return text;
	}
	free(text);
	fclose(f);
	return NULL;
}

int cmd_stats_budget(const struct stats_settings *st, struct stats_budget **out)
{
	char perr[300];
	size_t len = 0;

	*out = NULL;
	if (!st->budget_path)
		return EXIT_OK;
	char *text = read_budget(st->budget_path, &len);
	if (!text)
		return EXIT_USAGE;
	enum crumbs_result br = stats_budget_parse(st->budget_path, text, len, st->report.ignore_case,
						   out, perr, sizeof(perr));
	free(text);
	if (br != CRUMBS_OK) {
		cmd_error("%s", perr);
		return br == CRUMBS_ERROR_OUT_OF_MEMORY ? EXIT_FAILURE_ : EXIT_USAGE;
	}
	return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* A capture read in parts on several threads                              */
/* ------------------------------------------------------------------------ */

/* Parts (frames chunks) of a capture read one after the other by one
 * thread, into statistics of their own, joined in order by the main one. */
struct piece {
	size_t first, end;         /* its parts */
	stats *s;
	enum crumbs_result r;      /* of reading: not CRUMBS_OK at damage */
	struct analyze_error err;
	enum crumbs_result added_r; /* of taking the statistics */
	uint64_t added;
	bool past_range;           /* it read a frame after --frames */
	bool done;
};

struct loader {
	const struct stats_settings *st;
	const reader *from;
	stats *into;               /* the pieces' statistics share its memory */
	struct piece *pieces;
	size_t count;
	size_t next;               /* the next piece to take */
	bool stop;                 /* no piece after those taken is needed */
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/*
 * Each piece is a share of the bytes not yet planned, 1 / (PIECE_SHARE x
 * threads) of them, so the pieces shrink as the plan goes on: the threads
 * take the large ones first and end on pieces of a part or two, close
 * together however unequal their speeds (a core another program shares,
 * or a slower one). Pieces of equal size left a thread idle at the end
 * for up to a whole piece, about a tenth of the reading with two threads.
 * At most MAX_PIECES_PER_THREAD a thread: each costs a statistics of its
 * own and a seek.
 */
#define PIECE_SHARE 2
#define MAX_PIECES_PER_THREAD 16
#define MAX_THREADS CMD_MAX_THREADS

static void read_piece(const struct loader *l, reader *c, struct piece *p)
{
	const struct stats_settings *st = l->st;
	if (!(p->s = stats_create_sharing(l->into))) {
		p->added_r = CRUMBS_ERROR_OUT_OF_MEMORY;
		return;
	}
	if (st->frame_times_only)
		stats_keep_frame_times_only(p->s);
	p->r = reader_read_parts(c, p->first, p->end, &p->err);
	while (p->r == CRUMBS_OK) {
		const struct frame *f;
		if ((p->r = reader_next_frame(c, &f, &p->err)) != CRUMBS_OK || !f)
			break;
		if (f->number < st->first_frame)
			continue;
		if (f->number > st->last_frame) {
			p->past_range = true;
			break;
		}
		if ((p->added_r = stats_add_frame(p->s, reader_meta(c), f)) != CRUMBS_OK)
			break;
		p->added++;
	}
}

static void *load_thread(void *arg)
{
	struct loader *l = arg;
	struct analyze_error err;
	reader *c = NULL;
	enum crumbs_result cr = reader_clone(l->from, &c, &err);
	if (c) {
		reader_prefetch(c, false);
		reader_skip_scopes(c, l->st->frame_times_only);
	}
	pthread_mutex_lock(&l->lock);
	while (!l->stop && l->next < l->count) {
		struct piece *p = &l->pieces[l->next++];
		pthread_mutex_unlock(&l->lock);
		if (c) {
			read_piece(l, c, p);
		} else {
			p->r = cr;
			p->err = err;
		}
		pthread_mutex_lock(&l->lock);
		p->done = true;
		if (p->r != CRUMBS_OK || p->added_r != CRUMBS_OK || p->past_range)
			l->stop = true;
		pthread_cond_broadcast(&l->cond);
	}
	pthread_mutex_unlock(&l->lock);
	reader_free(c);
	return NULL;
}

int cmd_threads_parse(const char *v, unsigned cpus, unsigned *threads)
{
	uint64_t n = cpus;
	char err[64];
	int r = 0;
	if (v && *v && parse_u64(v, UINT64_MAX, &n, err, sizeof(err)) != 0) {
		n = cpus;
		r = -1;
	}
	if (n < 1)
		n = 1;
	*threads = n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
	return r;
}

/* Threads to read with: CRUMBS_THREADS, else the CPUs online. A
 * CRUMBS_THREADS that is not a number is said (once) and left aside. */
static unsigned load_threads(void)
{
	static bool said;
	const char *v = getenv("CRUMBS_THREADS");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n;
	if (cmd_threads_parse(v, cpus > 0 && cpus < 1000000 ? (unsigned)cpus : 1, &n) != 0) {
		if (!said)
			cmd_error("CRUMBS_THREADS='%s' is not a number of threads; using one per "
				  "CPU", v);
		said = true;
	}
	return n;
}

/*
 * What reading a chunk of u bytes holds at most: the chunk, its
 * compressed form and its strings, about 9/4 of it, and the model of
 * the frame being read, which grows with the frame's records up to what
 * the format's limits of a frame allow. Readers together hold at most
 * READ_BUDGET: where chunks are large, fewer threads read them.
 */
#define READ_BUDGET (512ull << 20)
#define FRAME_MODEL_MAX (48ull << 20)

static uint64_t reading_cost(uint64_t u)
{
	uint64_t model = 32 * u < FRAME_MODEL_MAX ? 32 * u : FRAME_MODEL_MAX;
	return u * 9 / 4 + model;
}

/* The threads to read c's parts with beside this one: at most `threads`,
 * and as many as READ_BUDGET holds for its largest chunk, this one's
 * reader counted. */
static unsigned reading_threads(const reader *c, unsigned threads)
{
	uint64_t largest = 1;
	if (threads <= 1)
		return 1;
	for (size_t k = 0; k < reader_part_count(c) && largest < FORMAT_MAX_CHUNK_BYTES; k++) {
		uint64_t u = reader_part_content_bytes(c, k);
		if (u > largest)
			largest = u;
	}
	uint64_t readers = READ_BUDGET / reading_cost(largest);
	return readers > threads ? threads : readers > 2 ? (unsigned)readers - 1 : 1;
}

/*
 * A piece read on a thread holds the statistics of its frames until they
 * are joined: most often the rows of the first frame again, which in a
 * frame at the format's limits are 262,144 scopes. Each row costs at
 * most ROW_BYTES with its arrays grown by doubling; the pieces being read
 * hold at most ROWS_BUDGET, so frames of many rows are read by fewer.
 */
#define ROW_BYTES 2048ull
#define ROWS_BUDGET (256ull << 20)

static unsigned rows_threads(unsigned threads, const struct frame *f)
{
	uint64_t rows = f->scopes + f->queue_count + f->gpu_count + 1;
	uint64_t n = ROWS_BUDGET / (rows * ROW_BYTES);
	return n >= threads ? threads : n > 1 ? (unsigned)n : 1;
}

/* Splits parts [first, end) into at most `cap` pieces for `threads`
 * threads, each a share of the bytes left, one part at least. */
static size_t plan_pieces(const reader *c, size_t first, size_t end, unsigned threads, size_t cap,
			  struct piece *pieces)
{
	uint64_t left = 0;
	size_t n = 0;
	for (size_t k = first; k < end; k++)
		left += reader_part_bytes(c, k);
	for (size_t k = first; k < end;) {
		size_t begin = k;
		uint64_t share = left / ((uint64_t)threads * PIECE_SHARE), took = 0;
		/* The last piece there is room for takes the rest. */
		do
			took += reader_part_bytes(c, k++);
		while (k < end && (took < share || n + 1 == cap));
		left -= took;
		memset(&pieces[n], 0, sizeof(pieces[n]));
		pieces[n].first = begin;
		pieces[n].end = k;
		n++;
	}
	return n;
}

/* Parts of a capture being read on threads while this one reads on. */
struct parts_load {
	struct loader l;
	pthread_t tids[MAX_THREADS];
	unsigned started;
};

/*
 * Starts reading parts [first, end) of c on `threads` threads (or, when
 * none can start, on this one in parts_finish). false, having said so,
 * when out of memory.
 */
static bool parts_start(struct parts_load *pl, const struct stats_settings *st, reader *c,
			stats *into, size_t first, size_t end, unsigned threads)
{
	*pl = (struct parts_load){ .l = { .st = st, .from = c, .into = into,
					  .lock = PTHREAD_MUTEX_INITIALIZER,
					  .cond = PTHREAD_COND_INITIALIZER } };
	size_t cap = (size_t)threads * MAX_PIECES_PER_THREAD;
	if (cap > end - first)
		cap = end - first;
	if (!(pl->l.pieces = calloc(cap, sizeof(*pl->l.pieces)))) {
		cmd_error("out of memory");
		return false;
	}
	pl->l.count = plan_pieces(c, first, end, threads, cap, pl->l.pieces);
	for (unsigned i = 0; i < threads && i < pl->l.count; i++)
		if (pthread_create(&pl->tids[pl->started], NULL, load_thread, &pl->l) == 0)
			pl->started++;
	return true;
}

/*
 * Takes the statistics of the pieces into s in order, when `take` (else
 * the reading ended before them, and they are only stopped), and ends the
 * threads. Returns how the reading ended as cmd_stats_load does, having
 * said why when not CMD_LOAD_OK; *added counts the frames taken.
 */
static enum cmd_load parts_finish(struct parts_load *pl, const char *path, bool take, stats *s,
				  uint64_t *added)
{
	struct loader *l = &pl->l;
	enum cmd_load out = CMD_LOAD_OK;
	bool failed = !take;
	if (failed) {
		pthread_mutex_lock(&l->lock);
		l->stop = true;
		pthread_mutex_unlock(&l->lock);
	} else if (pl->started == 0) {
		load_thread(l); /* no thread to be had: this one reads */
	}
	for (size_t i = 0; i < l->count && !failed; i++) {
		struct piece *p = &l->pieces[i];
		pthread_mutex_lock(&l->lock);
		while (!p->done && !(l->stop && i >= l->next))
			pthread_cond_wait(&l->cond, &l->lock);
		bool taken = p->done;
		pthread_mutex_unlock(&l->lock);
		if (!taken)
			break; /* a piece before ended the reading */
		enum crumbs_result ar = p->added_r;
		if (ar == CRUMBS_OK && p->s)
			ar = stats_append(s, p->s);
		stats_free(p->s);
		p->s = NULL;
		if (ar != CRUMBS_OK) {
			cmd_error("cannot take the statistics of '%s': %s", path, crumbs_result_str(ar));
			out = CMD_LOAD_FAILED;
			failed = true;
		} else if (p->r != CRUMBS_OK) {
			*added += p->added;
			cmd_capture_error(path, p->err.text, *added > 0);
			out = CMD_LOAD_PARTIAL;
			failed = true;
		} else {
			*added += p->added;
			failed = p->past_range;
		}
		if (failed) {
			pthread_mutex_lock(&l->lock);
			l->stop = true;
			pthread_mutex_unlock(&l->lock);
		}
	}
	for (unsigned i = 0; i < pl->started; i++)
		pthread_join(pl->tids[i], NULL);
	for (size_t i = 0; i < l->count; i++)
		stats_free(l->pieces[i].s);
	free(l->pieces);
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	return out;
}

bool cmd_stats_root_found(const struct stats_settings *st, const stats *s)
{
	if (st->report.root_count == 0)
		return true;
	uint8_t *selected = stats_select(st, s);
	bool found = !selected; /* out of memory: not said to be missing */
	for (size_t i = 0; selected && i < stats_row_count(s) && !found; i++) {
		enum stats_kind k = stats_row(s, i)->kind;
		found = selected[i] && (k == STATS_SCOPE || k == STATS_CPU_SCOPE || k == STATS_TASK ||
					k == STATS_STATE);
	}
	free(selected);
	return found;
}

int cmd_stats_check_by(const char *name, const struct stats_settings *st)
{
	const struct report_settings *rs = &st->report;
	if (st->cpu_only && st->no_cpu)
		return cmd_usage_error(name, "--cpu and --no-cpu exclude each other");
	if (st->cpu_only && !report_cpu_chosen(rs))
		return cmd_usage_error(name, "--cpu shows the CPU's rows alone, and --%s chooses "
				       "GPU work", rs->gpu >= 0 ? "gpu" : rs->queue ? "queue" : "by pipeline");
	if (rs->by != BY_PIPELINE || (!rs->root_count && rs->max_depth < 0))
		return EXIT_OK;
	return cmd_usage_error(name, "--%s chooses scopes, and statistics by pipeline have none "
			       "(crumbs report --by pipeline --root PATTERN shows a frame's "
			       "pipelines below a scope)", rs->root_count ? "root" : "max-depth");
}

/*
 * Reads the capture as cmd_stats_load does: the queues' scopes flat, which
 * cost less than their trees (the CPU threads' trees are built either
 * way), or their trees by pipeline, whose events are the rows.
 */
static enum cmd_load load(const char *path, const struct stats_settings *st, reader **cp,
			  stats **sp)
{
	bool trees = false;
	struct analyze_error err;
	reader *c = NULL;
	stats *s = NULL;

	*cp = NULL;
	*sp = NULL;
	if (!cmd_open_capture(path, &c))
		return CMD_LOAD_FAILED;
	*cp = c;
	if (!(s = stats_create())) {
		cmd_error("out of memory");
		return CMD_LOAD_FAILED;
	}
	*sp = s;
	/* And so the clones the threads read with: by pipeline, the trees,
	 * whose events are the rows. */
	if (st->report.by == BY_PIPELINE) {
		stats_by_pipeline(s);
		trees = true;
	}
	if (!trees)
		reader_flat_scopes(c, true);
	if (st->frame_times_only) {
		stats_keep_frame_times_only(s);
		reader_skip_scopes(c, true);
	}

	/* With threads to read the parts after, this reader reads on to the
	 * end of the part of the first frame, one frame at a time: a chunk
	 * decoded ahead would be decoded again by them. */
	unsigned threads = reading_threads(c, load_threads());
	if (threads > 1)
		reader_prefetch(c, false);
	enum crumbs_result r = cmd_range_start(c, st->first_frame, &err);
	enum cmd_load load = CMD_LOAD_OK;
	uint64_t added = 0;
	struct parts_load parts;
	bool in_parts = false;
	while (r == CRUMBS_OK) {
		const struct frame *f;
		if ((r = cmd_range_next(c, st->first_frame, st->last_frame, &f, &err)) != CRUMBS_OK ||
		    !f)
			break;
		if (added == 0 && !cmd_check_selection(path, &st->report, reader_meta(c)))
			return CMD_LOAD_FAILED;
		/* The first frame told what the capture holds (the selection
		 * is checked against it); with more than one part left, the
		 * parts after its part are read on several threads while this
		 * one reads the rest of its part, whose chunk it has decoded. */
		size_t count = reader_part_count(c);
		size_t part = count;
		if (added == 0 && threads > 1) {
			threads = rows_threads(threads, f);
			if (threads > 1)
				part = reader_part_of(c, f->number);
			else
				reader_prefetch(c, true);
		}
		if (part + 1 < count) {
			if (!parts_start(&parts, st, c, s, part + 1, count, threads))
				return CMD_LOAD_FAILED;
			in_parts = true;
			reader_end_parts(c, part + 1);
		}
		enum crumbs_result ar = stats_add_frame(s, reader_meta(c), f);
		if (ar != CRUMBS_OK) {
			cmd_error("cannot take the statistics of '%s': %s", path,
				  crumbs_result_str(ar));
			if (in_parts)
				parts_finish(&parts, path, false, s, &added);
			return CMD_LOAD_FAILED;
		}
		added++;
	}
	if (r != CRUMBS_OK) {
		cmd_capture_error(path, err.text, added > 0);
		load = CMD_LOAD_PARTIAL;
	}
	/* The parts after are taken only when this one's ended whole. */
	if (in_parts) {
		enum cmd_load pr = parts_finish(&parts, path, load == CMD_LOAD_OK, s, &added);
		if (pr == CMD_LOAD_FAILED)
			return pr;
		if (load == CMD_LOAD_OK)
			load = pr;
	}
	if (added == 0) {
		if (load == CMD_LOAD_OK)
			cmd_no_frames(path, st->frames_set, st->first_frame, st->last_frame);
		return CMD_LOAD_FAILED;
	}
	/* Another capture may be read next (crumbs diff): this one's chunks
	 * are no longer needed. */
	reader_release_memory(c);
	if (stats_finish(s, &st->spike) != CRUMBS_OK) {
		cmd_error("out of memory");
		return CMD_LOAD_FAILED;
	}
	if (load != CMD_LOAD_OK)
		return load;
	if (reader_damage(c)->code != CRUMBS_OK) {
		/* The frames read are intact, but the file is not. */
		cmd_capture_error(path, reader_damage(c)->text, false);
		return CMD_LOAD_PARTIAL;
	}
	return CMD_LOAD_OK;
}

enum cmd_load cmd_stats_load(const char *path, const struct stats_settings *st, reader **cp,
			    stats **sp)
{
	return load(path, st, cp, sp);
}

static const char description[] =
	"Statistics over the frames of a capture. Per GPU its frame time, per queue\n"
	"its busy, wait and idle time, per scope path (the scope names from the queue\n"
	"down; a number equal to the frame's in a scope right below the queue reads\n"
	"'#') its frames, calls per frame, inclusive and exclusive time and its share\n"
	"of the queue's busy + wait over the run: mean, median, p90, p95, p99, minimum,\n"
	"maximum and the frame of it, standard deviation (of the population).\n"
	"Percentiles are exact, nearest rank: the p-th of n sorted values is the one\n"
	"at rank ceil(p/100 * n). Times are kept per frame to the nanosecond up to\n"
	"4.29 s (longer ones count as 4.29 s); leaf events' time stays with their\n"
	"scope. Spikes: GPU frames above --spike, their count and longest run.\n"
	"--by pipeline: in place of scopes, per pipeline of each queue its draws'\n"
	"and dispatches' exclusive time, calls per frame and share (runs recorded\n"
	"at detail 3 have them; crumbs report --by pipeline groups a frame's).\n"
	"\n"
	"After the GPUs, where the frames hold CPU threads: the CPU frame time\n"
	"('CPU') with its spikes, and per timeline with marks the time from each\n"
	"mark to the next ('CPU (Game)'); per thread, by name ('CPU / Render\n"
	"Thread'; unnamed ones are 'thread #'), its scopes' time, and its scope\n"
	"paths as a queue's, their share of the CPU frame time; per task timeline\n"
	"('Tasks / Streaming') each task name and its states, their time in a\n"
	"frame summed. --gpu, --queue, --by pipeline and --no-cpu leave them out;\n"
	"--cpu shows them alone.\n"
	"\n"
	"Vital signs open it: GPU and CPU frame times, the present interval and\n"
	"missed v-syncs (where frames made presents), each heap's memory\n"
	"high-water and growth, allocations a frame (docs/COMMANDS.md says how each\n"
	"is counted). Budgets name them 'Present interval', 'Missed v-syncs' and\n"
	"'GPU 0 heap 1'.\n"
	"\n"
	"--format csv: one line per row under the header line\n"
	"  kind,gpu,queue,path,depth,frames,calls_per_frame,mean_ms,median_ms,p90_ms,\n"
	"  p95_ms,p99_ms,min_ms,max_ms,max_frame,stddev_ms,excl_mean_ms,excl_median_ms,\n"
	"  excl_p90_ms,excl_p95_ms,excl_p99_ms,excl_min_ms,excl_max_ms,excl_stddev_ms,\n"
	"  share_pct,spike_threshold_ms,spikes,longest_spike_run,longest_spike_run_first,\n"
	"  heap,heap_bytes,device_local,high_bytes,high_frame,growth_bytes,\n"
	"  slope_bytes_per_frame,allocations_per_frame\n"
	"kind is gpu, busy, wait, idle, scope, pipeline, cpu, thread, cpu_scope,\n"
	"timeline, task, state, present or memory (a heap's, in bytes); times in ms\n"
	"with 6 decimals; fields that do not apply to a kind are empty.\n"
	"--format json: {\"schema\": 1, \"file\", \"frames\", \"spike\", \"gpus\",\n"
	"\"vital_signs\", \"presentation\", \"rows\": [...], \"budgets\": [...]}, times\n"
	"in ns. --format markdown: a pipe table (kind, row,\n"
	"frames, mean, median, p95, max in ms, share), rows in their first order, for\n"
	"a pull request's comment. -o FILE writes to FILE, replaced once whole.\n"
	"\n"
	"--budget FILE: lines of PATTERN STATISTIC LIMIT_MS ('#' starts a comment\n"
	"line). PATTERN is a wildcard matched against each row: 'GPU 0' (its frame\n"
	"time), 'GPU 0 / Graphics 0 busy' (or wait, idle), a scope's (or\n"
	"pipeline's) name or its path 'GPU 0 / Graphics 0 / Frame # / Post\n"
	"Processing'; 'CPU', 'CPU (Game)', 'CPU / Render Thread', a CPU scope's,\n"
	"task's or state's name or path ('CPU / Render Thread / Frame /\n"
	"Visibility', 'Tasks / Streaming / Load'). STATISTIC is mean, median, p90,\n"
	"p95, p99 or max; for a heap ('GPU 0 heap 1'), high or growth and a size\n"
	"(512MiB). Exit status 1 if a value is above its limit or a line\n"
	"matches no row; 2 for a bad line. With --format csv the budget lines go\n"
	"to standard error.";

/* The description's paragraphs after: a literal holds no more. */
static const char description_counters[] =
	"--counters: after the tables, each scope path's pipeline statistics and\n"
	"vendor counters, the median per frame over the frames that counted them (a\n"
	"run takes a vendor counter only in the frames of its pass: its count of\n"
	"frames is its own). The capture is read a second time for them, standard\n"
	"input too. --format csv: four columns more, counter,counter_unit,\n"
	"counter_median,counter_unknown_frames, and a row per statistic of a scope\n"
	"path, of kind counter (its key, ia_vertices to cs_invocations) or\n"
	"vendor_counter (its name), frames the frames that counted it. --format\n"
	"json: \"counters_left_out\" and \"counters\": [{\"gpu\", \"queue\", \"path\",\n"
	"\"depth\", \"frames\", \"unknown_frames\", \"medians\": {\"ia_vertices\", ...},\n"
	"\"vendor\": {\"set\", \"unknown_frames\", \"counters\": [{\"name\", \"category\",\n"
	"\"unit\", \"pass\", \"frames\", \"median\"}]}}]. --format markdown: a second\n"
	"table.\n"
	"\n" CMD_HELP_STDIN CMD_HELP_MEMORY CMD_HELP_MEMORY_STATS CMD_HELP_MEMORY_COUNTERS;

/* Reads the arguments into st (initialised) and checks them: returns the
 * capture's path, or NULL after saying why, with the exit status in
 * *status. */
static const char *parse_args(int argc, char **argv, struct stats_settings *st,
			      struct cmd_positional *pos, struct cmd_output *out, char **output,
			      int *status)
{
	struct option_spec shared[16];
	char perr[300];
	const struct option_table tables[] = {
		{ shared, stats_report_options(shared), &st->report },
		{ stats_options, stats_option_count, st },
		{ &cmd_output_option, 1, output },
		{ report_terminal_options, report_terminal_option_count, &st->report.term },
	};
	const struct cmd_spec spec = {
		.name = "stats",
		.usage = "crumbs stats FILE [options]",
		.description = description,
		.description_more = description_counters,
		.tables = tables,
		.table_count = sizeof(tables) / sizeof(tables[0]),
		.environment = CMD_ENV_LOCALE CMD_ENV_TERMINAL CMD_ENV_THREADS,
	};
	if (!cmd_parse(&spec, argc, argv, pos, status))
		return NULL;
	const char *path = cmd_one_capture("stats", pos, status);
	if (!path)
		return NULL;
	out->path = *output;
	if (!cmd_output_check("stats", out, &path, 1, status))
		return NULL;
	if (st->per_frame && st->format != STATS_FORMAT_JSON) {
		*status = cmd_usage_error("stats", "--per-frame needs --format json");
		return NULL;
	}
	if ((*status = cmd_stats_check_by("stats", st)) != EXIT_OK)
		return NULL;
	if (report_settings_prepare(&st->report, perr, sizeof(perr)) != CRUMBS_OK) {
		*status = cmd_usage_error("stats", "%s", perr);
		return NULL;
	}
	return path;
}

/* ------------------------------------------------------------------------ */
/* Pipeline statistics (--counters)                                         */
/* ------------------------------------------------------------------------ */

/*
 * A second pass over the capture, as trees, which the statistics' pass
 * (flat, on several threads) does not build. Standard input reads again
 * as cmd_open_capture reads it: a file in place, a pipe from the memory
 * it was read into the first time.
 */
int cmd_counters_load(const char *name, const char *path, const struct stats_settings *st,
		      struct counter_runs *r)
{
	struct analyze_error e;
	reader *c;
	const struct frame *f;
	(void)name;
	if (!cmd_open_capture(path, &c))
		return -1;
	enum crumbs_result res = cmd_range_start(c, st->first_frame, &e);
	while (res == CRUMBS_OK &&
	       (res = cmd_range_next(c, st->first_frame, st->last_frame, &f, &e)) == CRUMBS_OK && f)
		if (!counter_runs_add_frame(r, f)) {
			cmd_error("out of memory");
			reader_free(c);
			return -1;
		}
	reader_free(c);
	/* Damage was said when the statistics were read; what came before
	 * it is counted. */
	return 0;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_settings st;
	struct cmd_positional pos = { 0 };
	struct stats_budget *budget = NULL;
	reader *c = NULL;
	stats *s = NULL;
	int status = EXIT_OK;
	struct cmd_output to = { 0 };
	char *output = NULL;
	struct counter_runs counters = { 0 };

	stats_settings_init(&st);
	const char *path = parse_args(argc, argv, &st, &pos, &to, &output, &status);
	if (!path)
		goto out;
	if ((status = cmd_stats_budget(&st, &budget)) != EXIT_OK)
		goto out;
	enum cmd_load loaded = cmd_stats_load(path, &st, &c, &s);
	if (loaded == CMD_LOAD_FAILED) {
		status = EXIT_FAILURE_;
		goto out;
	}
	if (!cmd_stats_root_found(&st, s)) {
		struct sbuf where = { 0 };
		sbuf_addf(&where, "in the frames of '%s'", path);
		cmd_no_root_match(where.data ? where.data : path, &st.report);
		sbuf_release(&where);
		status = EXIT_FAILURE_;
		goto out;
	}

	if (st.report.counters && cmd_counters_load("stats", path, &st, &counters) != 0) {
		status = EXIT_FAILURE_;
		goto out;
	}
	size_t failed = budget ? stats_budget_check(budget, &st, s) : 0;
	cmd_terminal(&st.report.term, &st.report, &to);
	struct report_sink out = { cmd_output_write, &to };
	struct report_sink err_out = { stderr_sink, NULL };
	/* The tables are followed by the counters' text; the other formats
	 * hold them. */
	bool in_print = st.report.counters && st.format != STATS_FORMAT_TABLE;
	if (stats_print_with_counters(&st, reader_meta(c), s, path, budget,
				      in_print ? &counters : NULL, &out) != 0) {
		if (!to.error && !ferror(stdout))
			cmd_error("out of memory");
		status = cmd_output_close(&to, EXIT_FAILURE_, false);
		goto out;
	}
	if (budget && st.format != STATS_FORMAT_JSON) {
		if (st.format == STATS_FORMAT_CSV)
			fflush(stdout);
		stats_budget_print(budget, &st, s, st.format == STATS_FORMAT_CSV ? &err_out : &out);
	}
	if (st.report.counters && st.format == STATS_FORMAT_TABLE &&
	    stats_counters_print(&st.report, &counters, reader_meta(c), &out) != 0) {
		if (!to.error && !ferror(stdout))
			cmd_error("out of memory");
		status = EXIT_FAILURE_;
	}
	/* A partial load was said: the statistics are of the frames before. */
	if (loaded == CMD_LOAD_PARTIAL || failed)
		status = EXIT_FAILURE_;
	status = cmd_output_close(&to, status, true);
out:
	free(output);
	counter_runs_release(&counters);
	stats_free(s);
	stats_budget_free(budget);
	reader_free(c);
	stats_settings_release(&st);
	cmd_positional_release(&pos);
	return status;
}
