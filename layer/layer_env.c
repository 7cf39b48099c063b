/* SPDX-License-Identifier: MIT */
/*
 * layer_env.c: what the layer's environment variables say, read from
 * their values (layer/LAYER.md): CRUMBS_LAYER_WINDOW_MS, CRUMBS_LAYER_QUIET
 * and CRUMBS_LAYER_STANDING. (CRUMBS_LAYER_SKIP is read where devices are
 * left alone, unprofilable.c.)
 */
#include "layer_internal.h"
#include "../util/util.h"

#include <string.h>

int64_t layer_env_window_ns(const char *v)
{
	uint64_t ms;
	if (!v || !*v)
		return 0;
	const char *end = read_u64(v, LAYER_WINDOW_MAX_MS, &ms);
	if (end && !*end && ms >= 1)
		return (int64_t)ms * 1000000;
	return -1;
}

bool layer_env_quiet(const char *v)
{
	return v && *v && *v != '0';
}

bool layer_env_standing(const char *v)
{
	return !v || strcmp(v, "0") != 0;
}
