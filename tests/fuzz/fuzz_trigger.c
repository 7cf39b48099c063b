/* SPDX-License-Identifier: MIT */
/*
 * fuzz_trigger.c: libFuzzer target for the text that reaches a profiled
 * program from outside: a datagram on the trigger's socket and a console
 * command line (crumbs_command). Any bytes are read as a request; the
 * command line it holds, and the bytes themselves as a command line, are
 * parsed as the console parses them, and a capture request's settings as
 * its tables would take them. What parses must be a request crumbs can
 * carry out: aborts otherwise.
 */
#include "../../capture/capture_internal.h"
#include "../../report/report.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void command_line(const char *line)
{
	static struct console_request req; /* 4 KiB: not on the fuzzer's stack */
	struct profilegpu_settings *s;
	char err[300];

	if (console_parse(line, &req, err, sizeof(err)) != 0)
		return;
	if (req.frames > TRIGGER_MAX_RUN_FRAMES || req.detail < -1 || req.detail > CRUMBS_DETAIL_MAX ||
	    (req.detail >= 0 && !req.frames) || memchr(req.settings, '\0', sizeof(req.settings)) == NULL)
		abort();
	if (req.help)
		return;
	if (profilegpu_settings_parse(req.settings, &s, err, sizeof(err)) == 0) {
		double pct = profilegpu_report_settings(s)->threshold_pct;
		if (!(pct >= 0 && pct <= 100))
			abort();
		profilegpu_settings_free(s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char command[TRIGGER_MAX_COMMAND];
	const char *why = NULL;

	if (trigger_parse_request((const char *)data, size, command, sizeof(command), &why)) {
		if (strlen(command) == 0 || strchr(command, '\n'))
			abort();
		command_line(command);
	} else if (!why || !*why) {
		abort(); /* a refused request is answered with its reason */
	}
	char *line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	command_line(line);
	free(line);
	return 0;
}
