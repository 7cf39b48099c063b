/* SPDX-License-Identifier: MIT */
/*
 * stats_present.c: the run's presentation in `crumbs stats`: the present
 * interval and missed v-syncs line of its vital signs, and the same in
 * JSON, from analyze/present.c's summary.
 */
#include "report_internal.h"

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
		sbuf_addf(out, "median %.3f, p99 %.3f, max %.3f (frame %llu)%s%s\n",
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
