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

#endif
