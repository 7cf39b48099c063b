/* SPDX-License-Identifier: MIT */
/*
 * fuzz_env.c: libFuzzer target for the parsers of the environment
 * variables crumbs reads, whose values come from whoever starts the
 * program: CRUMBS_CAPTURE_FRAME and CRUMBS_RECORD (libcrumbs),
 * CRUMBS_THREADS (crumbs stats, diff, plot), CRUMBS_LAYER_WINDOW_MS,
 * CRUMBS_LAYER_QUIET, CRUMBS_LAYER_STANDING and CRUMBS_LAYER_SKIP (the
 * layer), XDG_RUNTIME_DIR (both sides of the trigger) and LC_ALL,
 * LC_CTYPE and LANG (the tables' default drawing).
 *
 * The input, cut at its NUL bytes, gives a value and up to three more
 * strings; each parser reads the value, the multi-valued ones the others
 * too. What a parser takes must be what its header promises: aborts
 * otherwise.
 */
#include "../../capture/capture_internal.h"
#include "../../cmds/cmds.h"
#include "../../layer/layer_internal.h"
#include "../../report/report.h"
#include "../../trigger/trigger.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether s is digits alone, at least one. */
static bool digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* A message of a parser that refused: said, and cut to its buffer. */
static void check_message(const char *err, size_t size)
{
	if (!memchr(err, '\0', size) || !err[0])
		abort();
}

static void frames(const char *v)
{
	char err[1024];
	uint64_t frame = 7, first = 7, last = 7;
	int detail = 7;

	if (env_capture_frame(v, &frame, err, sizeof(err)) == 0) {
		if (!digits(v))
			abort();
	} else {
		check_message(err, sizeof(err));
		if (frame != 7)
			abort(); /* untouched when refused */
	}
	if (env_record(v, &first, &last, &detail, err, sizeof(err)) == 0) {
		if (!strchr(v, ':') || last < first || detail < 0 || detail > CRUMBS_DETAIL_MAX)
			abort();
	} else {
		check_message(err, sizeof(err));
		if (first != 7 || last != 7 || detail != 7)
			abort();
	}
}

static void threads(const char *v, unsigned cpus)
{
	unsigned n = 0;
	int r = cmd_threads_parse(v, cpus, &n);
	if (n < 1 || n > CMD_MAX_THREADS || (r != 0 && n != (cpus ? (cpus > CMD_MAX_THREADS ?
						     CMD_MAX_THREADS : cpus) : 1)))
		abort();
	if (r == 0 && *v && !digits(v))
		abort();
}

static void layer(const char *v, const char *ext, const char *ext2)
{
	int64_t ns = layer_env_window_ns(v);
	if (ns != -1 && ns != 0 && (ns < 1000000 || ns > (int64_t)LAYER_WINDOW_MAX_MS * 1000000))
		abort();
	if ((ns == 0) != (*v == '\0'))
		abort();
	(void)layer_env_quiet(v);
	(void)layer_env_standing(v);

	/* CRUMBS_LAYER_SKIP, against a device that enables the two
	 * extensions the input names, on a family with timestamps. */
	const char *names[] = { ext, ext2 };
	VkDeviceQueueCreateInfo qi = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
				       .queueCount = 1 };
	VkDeviceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
				  .queueCreateInfoCount = 1, .pQueueCreateInfos = &qi,
				  .enabledExtensionCount = 2, .ppEnabledExtensionNames = names };
	VkQueueFamilyProperties family = { .queueFlags = VK_QUEUE_GRAPHICS_BIT, .queueCount = 1,
					   .timestampValidBits = 64 };
	char why[256];
	if (layer_unprofilable(&ci, &family, 1, 1.0f, v, why, sizeof(why)))
		check_message(why, sizeof(why));
}

static void runtime_dir(const char *v)
{
	char path[200];
	if (trigger_path_for(v, 12345, path, sizeof(path)) == 0) {
		size_t len = strlen(path);
		if (path[0] != '/' || len < 11 || strcmp(path + len - 11, "/12345.sock") != 0)
			abort();
	} else if (path[0] != '\0') {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);
	const char *part[4] = { "", "", "", "" };
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	/* The value, then what follows each of the first NULs. */
	part[0] = copy;
	for (size_t i = 0, k = 1; i < size && k < 4; i++)
		if (copy[i] == '\0')
			part[k++] = copy + i + 1;

	frames(part[0]);
	threads(part[0], size % 40);
	layer(part[0], part[1], part[2]);
	runtime_dir(part[0]);
	(void)report_locale_utf8(part[0], part[1], part[2]);
	(void)report_locale_utf8(NULL, *part[1] ? part[1] : NULL, part[3]);
	free(copy);
	return 0;
}
