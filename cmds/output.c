/* SPDX-License-Identifier: MIT */
/*
 * output.c: where report, info, stats and diff write: standard output, or
 * the -o file, made under a temporary name beside it and renamed over it
 * once whole (util/file.c), so that a link planted at its name is
 * replaced, never followed, and a failure leaves what was there.
 */
#include "cmds.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const struct option_spec cmd_output_option = {
	"output", 'o', "FILE", "write to FILE (replaced once whole), not standard output",
	OPT_FILE, .offset = 0
};

bool cmd_output_check(const char *command, struct cmd_output *o, const char *const *inputs,
		      size_t input_count, int *status)
{
	if (o->path && strcmp(o->path, "-") == 0)
		o->path = NULL;
	for (size_t i = 0; o->path && i < input_count; i++)
		if (cmd_same_file(o->path, inputs[i])) {
			*status = cmd_usage_error(command, "'%s' is the capture itself; choose another "
						  "output", o->path);
			return false;
		}
	return true;
}

int cmd_output_write(void *user, const char *text, size_t len)
{
	struct cmd_output *o = user;
	if (o->path && !o->file && !o->error && !cmd_output_open(o))
		o->error = errno ? errno : EIO;
	FILE *to = o->path ? o->file : stdout;
	if (to && fwrite(text, 1, len, to) == len)
		return 0;
	/* A reader who quit the pager early is no failure (main.c). */
	if (!o->path && term_pager_quit())
		return 0;
	if (!o->error)
		o->error = errno ? errno : EIO;
	return -1;
}

bool cmd_output_open(struct cmd_output *o)
{
	char why[128];
	if (!o->path || o->file)
		return true;
	o->out.fd = o->out.dir_fd = -1;
	if (file_create(&o->out, o->path, FILE_REPLACE) != 0) {
		o->error = errno;
		cmd_error("cannot write '%s': %s", o->path, cmd_strerror(errno, why, sizeof(why)));
		o->said = true;
		return false;
	}
	if (!(o->file = file_stream(&o->out))) {
		file_close(&o->out);
		o->error = ENOMEM;
		return false;
	}
	return true;
}

int cmd_output_close(struct cmd_output *o, int status, bool keep)
{
	char why[128];
	if (!o->path)
		return cmd_finish(status);
	if (!o->file) {
		if (o->error && !o->said)
			cmd_error("cannot write '%s': %s", o->path,
				  cmd_strerror(o->error, why, sizeof(why)));
		return o->error ? EXIT_FAILURE_ : status;
	}
	if (fclose(o->file) != 0 && !o->error)
		o->error = errno ? errno : EIO;
	o->file = NULL;
	/* Placed over its name once whole; a failed one is removed. */
	if (!o->error && keep && file_finish(&o->out) != 0)
		o->error = errno;
	file_close(&o->out);
	if (o->error && !o->said) {
		cmd_error("cannot write '%s': %s", o->path, cmd_strerror(o->error, why, sizeof(why)));
		o->said = true;
	}
	return o->error ? EXIT_FAILURE_ : status;
}
