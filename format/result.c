/* SPDX-License-Identifier: MIT */
/*
 * result.c: the messages of enum crumbs_result, from the one list in
 * crumbs_file.h.
 */
#include "../include/crumbs_file.h"

#define CRUMBS_RESULT_TEXT_(name, text) text,
static const char *const result_texts[] = { CRUMBS_RESULTS(CRUMBS_RESULT_TEXT_) };
#undef CRUMBS_RESULT_TEXT_

const char *crumbs_result_str(enum crumbs_result result)
{
	if ((unsigned)result >= CRUMBS_RESULT_COUNT)
		return "unknown result";
	return result_texts[result];
}
