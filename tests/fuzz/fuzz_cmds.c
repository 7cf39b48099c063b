/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cmds.c: libFuzzer target for the command line of every subcommand
 * of `crumbs` (cmds/): the first byte of the input picks the command, and
 * the rest, cut at its NUL bytes, gives its arguments. It runs as `crumbs
 * COMMAND ARGS...` would (cmds_main(), cmds/main.c's main), in-process,
 * so that a leak or an error of memory in any command is found.
 *
 * What it may touch: the command runs in an empty folder of its own,
 * which holds captures copied from the source tree and a budget file
 * under short names (c0 to c3, t, b), and is emptied after each run;
 * every '/' of an argument becomes '_', so no path leaves that folder.
 * Standard input and error are /dev/null, and standard output too, or
 * /dev/full (every write fails) when the first byte says so. XDG_RUNTIME_DIR is a
 * folder with no socket, so `crumbs trigger` reaches no process and
 * waits for nothing. Nothing it reaches may start a program: `crumbs
 * capture -- PROGRAM` stops before its run (no layer beside this
 * program), and a fork() while a command runs aborts.
 */
#include "../../cmds/cmds.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int cmds_main(int argc, char **argv); /* cmds_main.c */

/* Under sanitizers: where their reports go (sanitizer/common_interface_defs.h),
 * not /dev/null with the command's output. */
void __sanitizer_set_report_fd(void *fd) __attribute__((weak));

#define MAX_ARGS 48

/* The words of cmds/main.c's table, and its own. */
static const char *const commands[] = {
	"report", "info", "stats", "diff", "export", "plot", "capture", "trigger",
	"help", "--help", "--version",
};
#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

/* What the folder holds before each command: copies of these. */
static const struct {
	const char *name;
	const char *from;  /* in the source tree; NULL: text */
	const char *text;
	size_t cut;        /* 0: whole; else its first `cut` bytes */
} fixtures[] = {
	{ "c0", "samples/deferred.crumbs", NULL, 0 },
	{ "c1", "samples/deferred-leaves.crumbs", NULL, 0 },
	{ "c2", "samples/unbalanced.crumbs", NULL, 0 },
	{ "c3", "tests/cli/captures/glxgears-zink-run.crumbs", NULL, 0 },
	{ "t", "samples/deferred.crumbs", NULL, 1500 },
	{ "b", NULL, "# limits\nGPU 0 p95 11.5\nGPU * max 20\n*Bloom* median 0.5\n", 0 },
};
#define FIXTURE_COUNT (sizeof(fixtures) / sizeof(fixtures[0]))

static struct {
	bool ready;
	char root[1100];       /* the fuzzer's own folder, in TMPDIR */
	char work[1200];       /* where commands run */
	int home;              /* the folder the fuzzer was started in */
	int devnull;
	int devfull;
	int saved[3];          /* standard input, output, error */
	void *contents[FIXTURE_COUNT];
	size_t lengths[FIXTURE_COUNT];
	volatile bool in_command;
} fz;

/* A fork while a command runs means it is about to start a program. */
static void no_fork(void)
{
	if (fz.in_command) {
		static const char say[] = "fuzz_cmds: a command forked (it would start a program)\n";
		if (write(fz.saved[2] >= 0 ? fz.saved[2] : 2, say, sizeof(say) - 1) < 0)
			abort();
		abort();
	}
}

/* Removes what dir (a descriptor, closed here) holds, folders too. */
static void empty_folder(int dir)
{
	DIR *d = fdopendir(dir);
	struct dirent *e;
	if (!d) {
		close(dir);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			continue;
		int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (sub >= 0) {
			empty_folder(sub);
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
}

static void remove_root(void)
{
	int d = open(fz.root, O_RDONLY | O_DIRECTORY);
	if (d >= 0)
		empty_folder(d);
	rmdir(fz.root);
}

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long n = ftell(f);
		if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n)) &&
		    fread(p, 1, (size_t)n, f) != (size_t)n) {
			free(p);
			p = NULL;
		}
		*len = n > 0 ? (size_t)n : 0;
	}
	fclose(f);
	return p;
}

static bool setup(void)
{
	/* In TMPDIR: libFuzzer may end without atexit(), and `make fuzz`
	 * points it into the build. */
	const char *tmp = getenv("TMPDIR");
	snprintf(fz.root, sizeof(fz.root), "%s/crumbs-fuzz-cmds-XXXXXX",
		 tmp && tmp[0] == '/' && strlen(tmp) < 1000 ? tmp : "/tmp");
	if (!mkdtemp(fz.root))
		return false;
	atexit(remove_root);
	snprintf(fz.work, sizeof(fz.work), "%s/w", fz.root);
	char run[1200];
	snprintf(run, sizeof(run), "%s/run", fz.root); /* never made: no socket */
	if (mkdir(fz.work, 0700) != 0 || (fz.home = open(".", O_RDONLY | O_DIRECTORY)) < 0 ||
	    (fz.devnull = open("/dev/null", O_RDWR)) < 0 ||
	    (fz.devfull = open("/dev/full", O_WRONLY)) < 0)
		return false;
	for (size_t k = 0; k < FIXTURE_COUNT; k++) {
		if (fixtures[k].from) {
			fz.contents[k] = read_file(fixtures[k].from, &fz.lengths[k]);
			if (!fz.contents[k]) {
				fprintf(stderr, "fuzz_cmds: cannot read '%s': run it from the source "
					"tree\n", fixtures[k].from);
				return false;
			}
			if (fixtures[k].cut && fixtures[k].cut < fz.lengths[k])
				fz.lengths[k] = fixtures[k].cut;
		} else {
			fz.contents[k] = strdup(fixtures[k].text);
			fz.lengths[k] = strlen(fixtures[k].text);
		}
	}
	/* The environment every command sees. */
	setenv("XDG_RUNTIME_DIR", run, 1);
	setenv("CRUMBS_THREADS", "2", 1);
	setenv("LC_ALL", "C.UTF-8", 1);
	static const char *const unset[] = { "CRUMBS_CAPTURE_FRAME", "CRUMBS_RECORD",
					     "CRUMBS_CAPTURE_DIR", "VK_LOADER_LAYERS_ENABLE",
					     "VK_INSTANCE_LAYERS", "LANG", "LC_CTYPE" };
	for (size_t k = 0; k < sizeof(unset) / sizeof(unset[0]); k++)
		unsetenv(unset[k]);
	/* Where sanitizer reports go: the real standard error, unless
	 * libFuzzer has already set it aside (-close_fd_mask). */
	struct stat err, null;
	fz.saved[2] = -1;
	if (__sanitizer_set_report_fd && fstat(2, &err) == 0 && fstat(fz.devnull, &null) == 0 &&
	    !(err.st_dev == null.st_dev && err.st_ino == null.st_ino)) {
		int fd = dup(2);
		if (fd >= 0)
			__sanitizer_set_report_fd((void *)(intptr_t)fd);
	}
	pthread_atfork(no_fork, NULL, NULL);
	return true;
}

/* Into the folder, with the fixtures and the standard streams set:
 * standard output on /dev/full when `full`. */
static bool enter(bool full)
{
	if (chdir(fz.work) != 0)
		return false;
	empty_folder(open(".", O_RDONLY | O_DIRECTORY));
	for (size_t k = 0; k < FIXTURE_COUNT; k++) {
		FILE *f = fz.contents[k] ? fopen(fixtures[k].name, "wb") : NULL;
		if (f) {
			fwrite(fz.contents[k], 1, fz.lengths[k], f);
			fclose(f);
		}
	}
	fflush(stdout);
	fflush(stderr);
	for (int fd = 0; fd < 3; fd++) {
		fz.saved[fd] = dup(fd);
		dup2(fd == 1 && full ? fz.devfull : fz.devnull, fd);
	}
	fz.in_command = true;
	return true;
}

static void leave(void)
{
	fz.in_command = false;
	fflush(stdout);
	fflush(stderr);
	clearerr(stdout);
	clearerr(stderr);
	for (int fd = 0; fd < 3; fd++) {
		dup2(fz.saved[fd], fd);
		close(fz.saved[fd]);
	}
	fz.saved[2] = -1;
	empty_folder(open(".", O_RDONLY | O_DIRECTORY));
	if (fchdir(fz.home) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 3];
	int argc = 0;

	if (size < 1)
		return 0;
	if (!fz.ready && !(fz.ready = setup()))
		abort();
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	for (size_t i = 0; i + 1 < size; i++)
		if (text[i] == '/')
			text[i] = '_';

	static char program[] = "crumbs";
	argv[argc++] = program;
	unsigned pick = data[0] % (COMMAND_COUNT + 1);
	bool full = data[0] / (COMMAND_COUNT + 1) % 2 == 1;
	if (pick < COMMAND_COUNT)
		argv[argc++] = (char *)(uintptr_t)commands[pick];
	/* Past the table: the input's first argument is the command. */
	for (size_t i = 0; i + 1 < size && argc < MAX_ARGS + 2;) {
		argv[argc++] = text + i;
		i += strlen(text + i) + 1;
	}
	argv[argc] = NULL;

	if (enter(full)) {
		cmds_main(argc, argv);
		leave();
	}
	free(text);
	return 0;
}
