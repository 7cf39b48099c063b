/* SPDX-License-Identifier: MIT */
/*
 * test_file.c: the files crumbs creates (util/file.c): never through a
 * link planted at their name or temporary name, never over a file that
 * exists unless asked, the next free name when one is taken, temporaries
 * removed, and a file removed or moved, or its folder, noticed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A folder of the test's own, in which a world-writable one, "shared",
 * and a file outside it, "outside", that no test may change. */
struct place {
	char root[64];
	char dir[96];
	char outside[96];
};

static const char OUTSIDE_TEXT[] = "the file outside\n";

static void place_make(struct place *p)
{
	snprintf(p->root, sizeof(p->root), "/tmp/crumbs-file-XXXXXX");
	assert_non_null(mkdtemp(p->root));
	snprintf(p->dir, sizeof(p->dir), "%s/shared", p->root);
	assert_int_equal(mkdir(p->dir, 0777), 0);
	assert_int_equal(chmod(p->dir, 0777), 0);
	snprintf(p->outside, sizeof(p->outside), "%s/outside", p->root);
	FILE *f = fopen(p->outside, "w");
	assert_non_null(f);
	fputs(OUTSIDE_TEXT, f);
	assert_int_equal(fclose(f), 0);
}

static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(path);
		else
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* The file outside is as it was. */
static void outside_unchanged(const struct place *p)
{
	char text[64] = "";
	FILE *f = fopen(p->outside, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	assert_string_equal(text, OUTSIDE_TEXT);
}

/* A link named `name` in the shared folder to the file outside. */
static void plant(const struct place *p, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", p->dir, name);
	assert_int_equal(symlink(p->outside, path), 0);
}

/* The text of the regular file at path (a link is not one). */
static void file_is(const char *path, const char *want)
{
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	char text[64] = "";
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	assert_string_equal(text, want);
}

/* How many entries the shared folder holds. */
static int entries(const struct place *p)
{
	int n = 0;
	DIR *d = opendir(p->dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	if (d)
		closedir(d);
	return n;
}

static void write_text(struct file_out *f, const char *text)
{
	assert_int_equal(file_write(f, text, strlen(text)), 0);
}

/* A file created in place, at its name: 0644 less the umask, written
 * there; a name taken (by a link, a file) gets the next free one. */
static void in_place(void **state)
{
	(void)state;
	struct place p;
	place_make(&p);
	char path[256], want[256];
	snprintf(path, sizeof(path), "%s/prog-run-5.crumbs", p.dir);
	mode_t mask = umask(022);

	struct file_out f;
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	assert_false(f.renamed);
	assert_string_equal(f.path, path);
	assert_string_equal(f.temp, "");
	write_text(&f, "first\n");
	assert_int_equal(file_finish(&f), 0);
	file_is(path, "first\n");
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);

	/* Taken: .1, then, with a link at .1, .2. */
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	assert_true(f.renamed);
	snprintf(want, sizeof(want), "%s/prog-run-5.1.crumbs", p.dir);
	assert_string_equal(f.path, want);
	write_text(&f, "second\n");
	assert_int_equal(file_finish(&f), 0);
	file_is(path, "first\n");
	file_is(want, "second\n");

	plant(&p, "prog-run-5.2.crumbs");
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	snprintf(want, sizeof(want), "%s/prog-run-5.3.crumbs", p.dir);
	assert_string_equal(f.path, want);
	write_text(&f, "third\n");
	assert_int_equal(file_finish(&f), 0);
	file_is(want, "third\n");
	outside_unchanged(&p);

	/* The umask takes from the mode. */
	umask(077);
	snprintf(path, sizeof(path), "%s/private", p.dir);
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	assert_int_equal(file_finish(&f), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	umask(mask);
	remove_tree(p.root);
}

/* A link planted at the name of a file created in place is never
 * written through: the file takes the next name. */
static void in_place_never_follows(void **state)
{
	(void)state;
	struct place p;
	place_make(&p);
	char path[256], want[256];
	plant(&p, "prog-run-5.crumbs");
	snprintf(path, sizeof(path), "%s/prog-run-5.crumbs", p.dir);
	struct file_out f;
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	assert_true(f.renamed);
	write_text(&f, "run\n");
	assert_int_equal(file_finish(&f), 0);
	snprintf(want, sizeof(want), "%s/prog-run-5.1.crumbs", p.dir);
	file_is(want, "run\n");
	outside_unchanged(&p);
	remove_tree(p.root);
}

/* A new file is written under a hidden temporary name of its own, random,
 * then given its name, or the next free one: never over a file, nor
 * through a link at its name. */
static void new_never_replaces(void **state)
{
	(void)state;
	struct place p;
	place_make(&p);
	char path[256], want[256];
	snprintf(path, sizeof(path), "%s/prog-frame-2.crumbs", p.dir);

	struct file_out a, b;
	assert_int_equal(file_create(&a, path, FILE_NEW), 0);
	assert_int_equal(file_create(&b, path, FILE_NEW), 0);
	/* Hidden, named after the file, and not the same twice. */
	assert_true(a.temp[0] == '.');
	assert_non_null(strstr(a.temp, "prog-frame-2.crumbs"));
	assert_string_not_equal(a.temp, b.temp);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(entries(&p), 2);
	write_text(&a, "a\n");
	write_text(&b, "b\n");
	assert_int_equal(file_finish(&a), 0);
	assert_false(a.renamed);
	assert_string_equal(a.path, path);
	assert_int_equal(file_finish(&b), 0);
	assert_true(b.renamed);
	snprintf(want, sizeof(want), "%s/prog-frame-2.1.crumbs", p.dir);
	assert_string_equal(b.path, want);
	file_is(path, "a\n");
	file_is(want, "b\n");
	assert_int_equal(entries(&p), 2);

	/* A link at the name, and at the temporary names a process of this
	 * id once used: the file goes to the next free name. */
	snprintf(path, sizeof(path), "%s/pic.svg", p.dir);
	plant(&p, "pic.svg");
	char old_temp[64];
	snprintf(old_temp, sizeof(old_temp), "pic.svg.%ld.tmp", (long)getpid());
	plant(&p, old_temp);
	assert_int_equal(file_create(&a, path, FILE_NEW), 0);
	write_text(&a, "picture\n");
	assert_int_equal(file_finish(&a), 0);
	snprintf(want, sizeof(want), "%s/pic.1.svg", p.dir);
	assert_string_equal(a.path, want);
	file_is(want, "picture\n");
	outside_unchanged(&p);

	/* No extension, and a hidden name: the number goes at the end. */
	snprintf(path, sizeof(path), "%s/.hidden", p.dir);
	plant(&p, ".hidden");
	assert_int_equal(file_create(&a, path, FILE_NEW), 0);
	assert_int_equal(file_finish(&a), 0);
	snprintf(want, sizeof(want), "%s/.hidden.1", p.dir);
	assert_string_equal(a.path, want);
	outside_unchanged(&p);
	remove_tree(p.root);
}

/* A file the user named is renamed over what is at its name: a link
 * there is replaced, itself, and what it points to stays as it was. */
static void replace_replaces_the_link(void **state)
{
	(void)state;
	struct place p;
	place_make(&p);
	char path[256];
	snprintf(path, sizeof(path), "%s/out.json", p.dir);
	plant(&p, "out.json");
	struct file_out f;
	assert_int_equal(file_create(&f, path, FILE_REPLACE), 0);
	/* A stream on it, as the commands write. */
	FILE *s = file_stream(&f);
	assert_non_null(s);
	assert_int_equal(f.fd, -1);
	fputs("trace\n", s);
	assert_int_equal(fclose(s), 0);
	assert_int_equal(file_finish(&f), 0);
	assert_false(f.renamed);
	file_is(path, "trace\n");
	outside_unchanged(&p);

	/* And over a file that was there. */
	assert_int_equal(file_create(&f, path, FILE_REPLACE), 0);
	write_text(&f, "again\n");
	assert_int_equal(file_finish(&f), 0);
	file_is(path, "again\n");
	assert_int_equal(entries(&p), 1);
	remove_tree(p.root);
}

/* A device or a FIFO the user names is written into, never replaced by
 * a file: /dev/null stays the device, a FIFO's reader gets the text. */
static void replace_writes_into_devices(void **state)
{
	(void)state;
	struct stat before, after;
	assert_int_equal(stat("/dev/null", &before), 0);
	struct file_out f;
	assert_int_equal(file_create(&f, "/dev/null", FILE_REPLACE), 0);
	write_text(&f, "nothing\n");
	assert_int_equal(file_finish(&f), 0);
	assert_int_equal(stat("/dev/null", &after), 0);
	assert_true(S_ISCHR(after.st_mode));
	assert_true(before.st_ino == after.st_ino && before.st_rdev == after.st_rdev);

	struct place p;
	place_make(&p);
	char path[256];
	snprintf(path, sizeof(path), "%s/pipe", p.dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	int reader = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(reader >= 0);
	assert_int_equal(file_create(&f, path, FILE_REPLACE), 0);
	write_text(&f, "through\n");
	assert_int_equal(file_finish(&f), 0);
	char got[16] = { 0 };
	assert_int_equal(read(reader, got, sizeof(got) - 1), 8);
	assert_string_equal(got, "through\n");
	close(reader);
	assert_int_equal(lstat(path, &after), 0);
	assert_true(S_ISFIFO(after.st_mode));
	assert_int_equal(entries(&p), 1);
	remove_tree(p.root);
}

/* Closed without finishing: the temporary is gone, the name untouched;
 * a file created in place stays. */
static void close_removes_temporaries(void **state)
{
	(void)state;
	struct place p;
	place_make(&p);
	char path[256];
	snprintf(path, sizeof(path), "%s/x.crumbs", p.dir);
	struct file_out f;
	assert_int_equal(file_create(&f, path, FILE_NEW), 0);
	write_text(&f, "half\n");
	assert_int_equal(entries(&p), 1);
	file_close(&f);
	assert_int_equal(entries(&p), 0);
	file_close(&f); /* twice: nothing more */
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	file_close(&f);
	assert_int_equal(access(path, F_OK), 0);
	remove_tree(p.root);
}

/* Discarded: a file created in place is removed while it is at its
 * name, a temporary too; a file that took the name, or a link planted
 * there, stays. */
static void discard_removes_only_its_own(void **state)
{
	(void)state;
	struct place p;
	place_make(&p);
	char path[256], other[256];
	snprintf(path, sizeof(path), "%s/run.crumbs", p.dir);
	snprintf(other, sizeof(other), "%s/moved.crumbs", p.dir);
	struct file_out f;
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	write_text(&f, "run\n");
	file_discard(&f);
	assert_int_equal(entries(&p), 0);
	file_discard(&f); /* twice: nothing more */

	assert_int_equal(file_create(&f, path, FILE_NEW), 0);
	file_discard(&f);
	assert_int_equal(entries(&p), 0);

	/* Moved away, and another file at its name: both stay. */
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	assert_int_equal(rename(path, other), 0);
	FILE *s = fopen(path, "w");
	assert_non_null(s);
	fputs("theirs\n", s);
	fclose(s);
	file_discard(&f);
	file_is(path, "theirs\n");
	assert_int_equal(entries(&p), 2);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(other), 0);

	/* A link planted at its name once it was removed. */
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	assert_int_equal(unlink(path), 0);
	plant(&p, "run.crumbs");
	file_discard(&f);
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	outside_unchanged(&p);
	remove_tree(p.root);
}

/* Paths that name no file, folders that are not there, names too long. */
static void refused(void **state)
{
	(void)state;
	struct place p;
	place_make(&p);
	struct file_out f;
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/", p.dir);
	assert_int_equal(file_create(&f, path, FILE_NEW), -1);
	assert_int_equal(errno, EISDIR);
	snprintf(path, sizeof(path), "%s/none/x.crumbs", p.dir);
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(f.fd, -1);
	assert_int_equal(f.dir_fd, -1);
	memset(path, 'a', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	char name[NAME_MAX + 64];
	memset(name, 'b', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/%s", p.dir, name);
	assert_int_equal(file_create(&f, path, FILE_NEW), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	/* A folder path the system refuses. */
	char dir[5000];
	memset(dir, 'c', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	snprintf(path, sizeof(path), "%.*s/x", PATH_MAX - 8, dir);
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	remove_tree(p.root);
}

/* A file noticed gone (removed, or its folder: -1) or elsewhere (moved
 * away, another at its name, its folder moved: 1). */
static void check_notices(void **state)
{
	(void)state;
	struct place p;
	place_make(&p);
	char path[256], other[256], why[64];
	snprintf(path, sizeof(path), "%s/run.crumbs", p.dir);
	snprintf(other, sizeof(other), "%s/moved.crumbs", p.dir);
	struct file_out f;

	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	assert_int_equal(file_check(&f, why, sizeof(why)), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(file_check(&f, why, sizeof(why)), -1);
	assert_string_equal(why, "it was removed");
	file_close(&f);

	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	assert_int_equal(rename(path, other), 0);
	assert_int_equal(file_check(&f, why, sizeof(why)), 1);
	assert_string_equal(why, "it was moved away");
	/* Another file at its name. */
	FILE *s = fopen(path, "w");
	assert_non_null(s);
	fclose(s);
	assert_int_equal(file_check(&f, why, sizeof(why)), 1);
	assert_string_equal(why, "another file took its name");
	file_close(&f);
	unlink(path);
	unlink(other);

	/* A temporary is looked for by its temporary name. */
	assert_int_equal(file_create(&f, path, FILE_NEW), 0);
	assert_int_equal(file_check(&f, why, sizeof(why)), 0);
	file_close(&f);

	char moved[256];
	snprintf(moved, sizeof(moved), "%s/elsewhere", p.root);
	assert_int_equal(file_create(&f, path, FILE_IN_PLACE), 0);
	assert_int_equal(rename(p.dir, moved), 0);
	assert_int_equal(file_check(&f, why, sizeof(why)), 1);
	assert_string_equal(why, "its folder was moved");
	assert_int_equal(rename(moved, p.dir), 0);
	assert_int_equal(file_check(&f, why, sizeof(why)), 0);

	/* Removed with everything in it. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(p.dir), 0);
	assert_int_equal(file_check(&f, why, sizeof(why)), -1);
	assert_string_equal(why, "its folder was removed");
	file_close(&f);
	remove_tree(p.root);
}

/* Moving a file in: over the name when asked, else to the next free one;
 * never through a link. */
static void move_places(void **state)
{
	(void)state;
	struct place p;
	place_make(&p);
	char from[256], to[256], placed[512], want[256];
	int from_fd = open(p.root, O_RDONLY | O_DIRECTORY);
	assert_true(from_fd >= 0);

	snprintf(from, sizeof(from), "%s/a", p.root);
	FILE *s = fopen(from, "w");
	assert_non_null(s);
	fputs("a\n", s);
	fclose(s);
	plant(&p, "game-frame-10.crumbs");
	snprintf(to, sizeof(to), "%s/game-frame-10.crumbs", p.dir);
	assert_int_equal(file_move(from_fd, "a", to, false, placed, sizeof(placed)), 0);
	snprintf(want, sizeof(want), "%s/game-frame-10.1.crumbs", p.dir);
	assert_string_equal(placed, want);
	file_is(want, "a\n");
	outside_unchanged(&p);

	s = fopen(from, "w");
	assert_non_null(s);
	fputs("b\n", s);
	fclose(s);
	assert_int_equal(file_move(from_fd, "a", to, true, placed, sizeof(placed)), 0);
	assert_string_equal(placed, to);
	file_is(to, "b\n");
	outside_unchanged(&p);
	close(from_fd);
	remove_tree(p.root);
}

/* A folder anyone may write to without the sticky bit is open to others;
 * with it, or writable by its owner alone, it is not. */
static void folder_open_to_others(void **state)
{
	(void)state;
	struct place p;
	place_make(&p);
	int fd = open(p.dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_true(dir_open_to_others(fd));
	assert_int_equal(chmod(p.dir, 01777), 0);
	assert_false(dir_open_to_others(fd));
	assert_int_equal(chmod(p.dir, 0755), 0);
	assert_false(dir_open_to_others(fd));
	close(fd);
	remove_tree(p.root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_place),
		cmocka_unit_test(in_place_never_follows),
		cmocka_unit_test(new_never_replaces),
		cmocka_unit_test(replace_replaces_the_link),
		cmocka_unit_test(replace_writes_into_devices),
		cmocka_unit_test(close_removes_temporaries),
		cmocka_unit_test(discard_removes_only_its_own),
		cmocka_unit_test(refused),
		cmocka_unit_test(check_notices),
		cmocka_unit_test(move_places),
		cmocka_unit_test(folder_open_to_others),
	};
	return cmocka_run_group_tests_name("file", tests, NULL, NULL);
}
