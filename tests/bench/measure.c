/* SPDX-License-Identifier: MIT */
/*
 * measure.c: runs a command and prints its wall time in seconds and its
 * peak resident memory in KiB ("SECONDS KIB"), optionally with its
 * standard output sent to /dev/null. Used by `make bench`, so the
 * benchmarks need nothing beyond the build.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int quiet = argc > 1 && strcmp(argv[1], "--quiet") == 0;
	char **cmd = argv + 1 + quiet;
	struct timespec a, b;
	struct rusage ru;
	int status;

	if (!cmd[0]) {
		fprintf(stderr, "usage: measure [--quiet] COMMAND [ARGS]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid_t pid = fork();
	if (pid < 0) {
		perror("measure: fork");
		return 1;
	}
	if (pid == 0) {
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, 1);
		}
		execvp(cmd[0], cmd);
		perror("measure: exec");
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("measure: wait");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%.4f %ld\n", s, ru.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
