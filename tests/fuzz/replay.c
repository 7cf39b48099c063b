/* SPDX-License-Identifier: MIT */
/*
 * replay.c: runs a fuzz target over the files of a corpus without
 * libFuzzer, so `make test` replays it with any compiler (and under the
 * sanitizers). Prints one TAP line per file.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path, unsigned *n)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("not ok %u - %s: cannot open\n", ++*n, path);
		return 1;
	}
	size_t cap = 1 << 16, len = 0;
	unsigned char *data = malloc(cap);
	size_t got;
	while (data && (got = fread(data + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap) {
			unsigned char *d = realloc(data, cap *= 2);
			if (!d) {
				free(data);
				data = NULL;
			}
			data = d;
		}
	}
	int bad = ferror(f) || !data;
	fclose(f);
	if (!bad)
		LLVMFuzzerTestOneInput(data, len);
	free(data);
	/* Reaching here without a crash or sanitizer report is the test. */
	printf("%s %u - %s\n", bad ? "not ok" : "ok", ++*n, path);
	return bad;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	unsigned n = 0;
	int failed = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			printf("not ok %u - %s: missing\n", ++n, argv[i]);
			failed = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed |= replay_file(argv[i], &n);
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		char **names = NULL;
		size_t count = 0;
		while (d && (e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char **more = realloc(names, (count + 1) * sizeof(*names));
			size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
			if (!more || !(more[count] = malloc(len)))
				return 1;
			names = more;
			snprintf(names[count++], len, "%s/%s", argv[i], e->d_name);
		}
		if (d)
			closedir(d);
		if (count)
			qsort(names, count, sizeof(*names), cmp_str);
		for (size_t k = 0; k < count; k++) {
			failed |= replay_file(names[k], &n);
			free(names[k]);
		}
		free(names);
	}
	printf("1..%u\n", n);
	return failed;
}
