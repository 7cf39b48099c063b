/* SPDX-License-Identifier: MIT */
/*
 * stats_present.c: the run's presentation in `crumbs stats`: the present
 * interval and missed v-syncs line of its vital signs, and the same in
 * JSON, from analyze/present.c's summary.
 */
#include "report_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where the intervals' times come from, for the line. */
static const char *clock_text(const struct present_summary *p)
{
	switch (p->clock) {
	case PRESENT_CLOCK_SHOWN:
		return p->sources == (1u << CRUMBS_SHOWN_DISPLAY_TIMING) ?
			       "from shown to shown (VK_GOOGLE_display_timing)" :
		       p->sources == (1u << CRUMBS_SHOWN_PRESENT_WAIT) ?
			       "from shown to shown (VK_KHR_present_wait)" :
			       "from shown to shown";
	case PRESENT_CLOCK_MIXED:
		return "from shown to shown where known, else from present call to present call";
	default:
		return "from present call to present call on the CPU: when frames were shown is "
		       "not known";
	}
}

void stats_present_line(struct sbuf *out, const struct glyphs *g, const present_run *r)
{
	const struct present_summary *p = r ? present_run_summary(r) : NULL;
	if (!p || (!p->presents && !p->failed))
		return;
	sbuf_addf(out, "Present interval: ");
	if (p->intervals)
		sbuf_addf(out, "median %.3f ms, p99 %.3f ms, max %.3f ms (frame %llu)%s%s\n",
			  p->median_ns / 1e6, p->p99_ns / 1e6, p->max_ns / 1e6,
			  (unsigned long long)p->max_frame, g->sep, clock_text(p));
	else
		sbuf_addf(out, "none (%llu present%s)\n", (unsigned long long)p->presents,
			  p->presents == 1 ? "" : "s");
	sbuf_adds(out, "Missed v-syncs: ");
	if (p->counted) {
		sbuf_addf(out, "%llu, %llu frame%s shown late, of %llu interval%s at a %.3f ms refresh",
			  (unsigned long long)p->missed_vsyncs, (unsigned long long)p->late,
			  p->late == 1 ? "" : "s", (unsigned long long)p->counted,
			  p->counted == 1 ? "" : "s", p->refresh_ns / 1e6);
		if (p->counted < p->intervals)
			sbuf_addf(out, " (%llu not counted)",
				  (unsigned long long)(p->intervals - p->counted));
		sbuf_adds(out, "\n");
	} else if (p->clock == PRESENT_CLOCK_CPU || p->clock == PRESENT_CLOCK_NONE) {
		sbuf_adds(out, "not known: nothing says when frames were shown (the device has "
			       "neither VK_KHR_present_wait nor VK_GOOGLE_display_timing, or the "
			       "program reported no shown times)\n");
	} else if (p->no_refresh >= p->no_vsync) {
		sbuf_adds(out, "not known: the display's refresh period is not known\n");
	} else {
		sbuf_adds(out, "none asked for: the presents asked for no v-sync of their own "
			       "(mailbox or immediate)\n");
	}
}

void stats_present_json(struct sbuf *b, const present_run *r)
{
	const struct present_summary *p = r ? present_run_summary(r) : NULL;
	if (!p || (!p->presents && !p->failed))
		return;
	static const char *const clocks[] = { "none", "shown", "cpu", "mixed" };
	sbuf_addf(b, ",\"presentation\":{\"presents\":%llu,\"failed\":%llu,\"swapchains\":%llu,"
		      "\"shown\":%llu,\"present_wait\":%s,\"display_timing\":%s,\"clock\":\"%s\","
		      "\"intervals\":%llu",
		  (unsigned long long)p->presents, (unsigned long long)p->failed,
		  (unsigned long long)p->swapchains, (unsigned long long)p->shown,
		  p->sources & (1u << CRUMBS_SHOWN_PRESENT_WAIT) ? "true" : "false",
		  p->sources & (1u << CRUMBS_SHOWN_DISPLAY_TIMING) ? "true" : "false",
		  clocks[p->clock], (unsigned long long)p->intervals);
	if (p->intervals)
		sbuf_addf(b, ",\"median_ns\":%lld,\"p99_ns\":%lld,\"max_ns\":%lld,\"max_frame\":%llu",
			  (long long)p->median_ns, (long long)p->p99_ns, (long long)p->max_ns,
			  (unsigned long long)p->max_frame);
	sbuf_adds(b, ",\"refresh_ns\":");
	if (p->refresh_ns)
		sbuf_addf(b, "%lld", (long long)p->refresh_ns);
	else
		sbuf_adds(b, "null");
	sbuf_addf(b, ",\"vsync_intervals\":%llu,\"missed_vsyncs\":", (unsigned long long)p->counted);
	if (p->counted)
		sbuf_addf(b, "%llu,\"late_frames\":%llu", (unsigned long long)p->missed_vsyncs,
			  (unsigned long long)p->late);
	else
		sbuf_adds(b, "null,\"late_frames\":null");
	sbuf_addf(b, ",\"call_median_ns\":%lld}", (long long)p->call_median_ns);
}

/* ------------------------------------------------------------------------ */
/* Budgets                                                                  */
/* ------------------------------------------------------------------------ */

static int ns_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Whether `pattern` is `name`, ignoring ASCII case where asked. */
static bool names(const char *pattern, const char *name, bool ignore_case)
{
	size_t n = strlen(name);
	if (strlen(pattern) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char a = (unsigned char)pattern[i], b = (unsigned char)name[i];
		if (ignore_case && a >= 'A' && a <= 'Z')
			a = (unsigned char)(a - 'A' + 'a');
		if (ignore_case && b >= 'A' && b <= 'Z')
			b = (unsigned char)(b - 'A' + 'a');
		if (a != b)
			return false;
	}
	return true;
}

int stats_present_budget(const present_run *r, const char *pattern, bool ignore_case,
			 unsigned stat, uint32_t limit_ns, uint32_t *value, bool *exceeded)
{
	bool interval = names(pattern, STATS_PRESENT_INTERVAL, ignore_case);
	bool vsyncs = names(pattern, STATS_MISSED_VSYNCS, ignore_case);
	if (!interval && !vsyncs)
		return 0;
	const struct present_summary *p = r ? present_run_summary(r) : NULL;
	*value = 0;
	*exceeded = false;
	if (vsyncs) {
		/* A count, whatever the statistic: the run's. None counted is
		 * none known, which no budget passes. */
		if (!p || !p->counted)
			return -1;
		uint64_t ns = p->missed_vsyncs * 1000000ull;
		*value = ns > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)ns;
		*exceeded = *value > limit_ns;
		return 1;
	}
	size_t n = 0;
	const struct present_interval *iv = r ? present_run_intervals(r, &n) : NULL;
	if (!n)
		return -1;
	int64_t *v = malloc(n * sizeof(*v));
	if (!v)
		return -2;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = iv[i].ns;
		sum += (double)iv[i].ns;
	}
	qsort(v, n, sizeof(*v), ns_cmp);
	static const unsigned pct[] = { 0, 50, 90, 95, 99, 100 };
	int64_t x;
	if (stat == 0) {
		x = (int64_t)(sum / (double)n + 0.5);
	} else {
		size_t rank = (size_t)(((uint64_t)pct[stat < 6 ? stat : 5] * n + 99) / 100);
		x = v[rank ? rank - 1 : 0];
	}
	free(v);
	*value = x >= (int64_t)UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)x;
	*exceeded = *value > limit_ns;
	return 1;
}

/* ------------------------------------------------------------------------ */
/* CSV and Markdown                                                         */
/* ------------------------------------------------------------------------ */

/* The intervals' summary as a row's: mean, percentiles, minimum, maximum
 * (and its frame), standard deviation. false when there is none, or out
 * of memory. */
static bool interval_summary(const present_run *r, struct stats_summary *t)
{
	size_t n = 0;
	const struct present_interval *iv = r ? present_run_intervals(r, &n) : NULL;
	if (!n)
		return false;
	int64_t *v = malloc(n * sizeof(*v));
	if (!v)
		return false;
	double sum = 0, sq = 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = iv[i].ns;
		sum += (double)iv[i].ns;
	}
	double mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += ((double)v[i] - mean) * ((double)v[i] - mean);
	qsort(v, n, sizeof(*v), ns_cmp);
#define CLAMP(x) ((x) >= (int64_t)STATS_NS_MAX ? STATS_NS_MAX : (uint32_t)(x))
#define RANK(p) v[(((uint64_t)(p) * n + 99) / 100) ? (((uint64_t)(p) * n + 99) / 100) - 1 : 0]
	const struct present_summary *p = present_run_summary(r);
	*t = (struct stats_summary){ .frames = n, .mean_ns = mean, .stddev_ns = sqrt(sq / (double)n),
				     .min_ns = CLAMP(v[0]), .median_ns = CLAMP(RANK(50)),
				     .p90_ns = CLAMP(RANK(90)), .p95_ns = CLAMP(RANK(95)),
				     .p99_ns = CLAMP(RANK(99)), .max_ns = CLAMP(v[n - 1]),
				     .max_frame = p->max_frame };
#undef RANK
#undef CLAMP
	free(v);
	return true;
}

void stats_present_csv(struct sbuf *b, const present_run *r, const char *tail)
{
	struct stats_summary t;
	if (!interval_summary(r, &t))
		return;
	const struct present_summary *p = present_run_summary(r);
	sbuf_addf(b, "present,,,%s,0,%llu,,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%llu,%.6f,,,,,,,,,",
		  STATS_PRESENT_INTERVAL, (unsigned long long)t.frames, t.mean_ns / 1e6,
		  t.median_ns / 1e6, t.p90_ns / 1e6, t.p95_ns / 1e6, t.p99_ns / 1e6, t.min_ns / 1e6,
		  t.max_ns / 1e6, (unsigned long long)t.max_frame, t.stddev_ns / 1e6);
	/* Its spikes are the intervals that missed a v-sync: above one and a
	 * half refresh periods, where they were counted. */
	if (p->counted)
		sbuf_addf(b, ",%.6f,%llu,,%s\n", p->refresh_ns * 1.5 / 1e6, (unsigned long long)p->late,
			  tail);
	else
		sbuf_addf(b, ",,,,%s\n", tail);
}

void stats_present_markdown(struct sbuf *b, const present_run *r)
{
	struct stats_summary t;
	if (!interval_summary(r, &t))
		return;
	const struct present_summary *p = present_run_summary(r);
	sbuf_addf(b, "| present | %s (%s) | %llu | %.3f | %.3f | %.3f | %.3f | |\n",
		  STATS_PRESENT_INTERVAL, p->clock == PRESENT_CLOCK_CPU ? "CPU" : "shown",
		  (unsigned long long)t.frames, t.mean_ns / 1e6, t.median_ns / 1e6, t.p95_ns / 1e6,
		  t.max_ns / 1e6);
	if (p->counted)
		sbuf_addf(b, "| present | %s: %llu, %llu frame%s shown late | %llu | | | | | |\n",
			  STATS_MISSED_VSYNCS, (unsigned long long)p->missed_vsyncs,
			  (unsigned long long)p->late, p->late == 1 ? "" : "s",
			  (unsigned long long)p->counted);
}
