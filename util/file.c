/* SPDX-License-Identifier: MIT */
/*
 * file.c: the files crumbs writes, created and never followed: each is
 * opened in its folder's descriptor with O_CREAT|O_EXCL|O_NOFOLLOW, under
 * its name or a random temporary one, and the temporary gets its name by
 * a rename that never replaces a file, or (a name the user gave) that
 * replaces the name itself, never what a link there points to.
 */
#define _GNU_SOURCE /* renameat2, getrandom */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CREATE_FLAGS (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
/* Less the umask, as any file a program creates. */
#define CREATE_MODE 0644
/* NAME.1.EXT to NAME.999.EXT: more than that is not a race but a folder
 * someone fills on purpose; the caller is told it exists. */
#define NAME_TRIES 1000
/* Random temporary names that exist already: someone plants them. */
#define TEMP_TRIES 100
/* Of the final name, at most this much goes into the temporary one. */
#define TEMP_STEM_MAX 200

/* n random hexadecimal digits and a NUL at out. Without entropy yet (early
 * in a machine's boot), the clock, the process and a count: the name is
 * then easier to guess, but O_EXCL still never opens another's file. */
static void random_hex(char *out, size_t n)
{
	static _Atomic uint64_t count;
	unsigned char bytes[16];
	size_t need = (n + 1) / 2;
	if (need > sizeof(bytes))
		need = sizeof(bytes);
	if (getrandom(bytes, need, GRND_NONBLOCK) != (ssize_t)need) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		x ^= (uint64_t)getpid() << 40 ^ atomic_fetch_add(&count, 1) * 0x9E3779B97F4A7C15u;
		for (size_t i = 0; i < need; i++) {
			/* splitmix64, a byte a step */
			x += 0x9E3779B97F4A7C15u;
			uint64_t z = x;
			z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
			z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
			bytes[i] = (unsigned char)(z ^ (z >> 31));
		}
	}
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n && i / 2 < need; i++)
		out[i] = digits[(bytes[i / 2] >> (i % 2 ? 0 : 4)) & 15];
	out[n < 2 * need ? n : 2 * need] = '\0';
}

/* Writes into f->path the folder it holds, then `name`. -1 with errno
 * ENAMETOOLONG when it does not fit. */
static int set_name(struct file_out *f, const char *name)
{
	size_t len = strlen(name);
	if (len > NAME_MAX || f->name_at + len >= sizeof(f->path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(f->path + f->name_at, name, len + 1);
	return 0;
}

/* NAME.K.EXT of `name` (NAME.K without an extension; a leading dot is
 * not one) into out, for K from 1; name itself for K 0. -1 with errno
 * ENAMETOOLONG when it does not fit in NAME_MAX. */
static int numbered(const char *name, unsigned k, char *out, size_t size)
{
	if (k == 0) {
		if (strlen(name) >= size)
			goto too_long;
		memcpy(out, name, strlen(name) + 1);
		return 0;
	}
	const char *dot = strrchr(name, '.');
	size_t stem = dot && dot != name ? (size_t)(dot - name) : strlen(name);
	int n = snprintf(out, size, "%.*s.%u%s", (int)stem, name, k, name + stem);
	if (n < 0 || (size_t)n >= size || n > NAME_MAX)
		goto too_long;
	return 0;
too_long:
	errno = ENAMETOOLONG;
	return -1;
}

int file_create(struct file_out *f, const char *path, enum file_kind kind)
{
	memset(f, 0, sizeof(*f));
	f->fd = f->dir_fd = -1;
	f->kind = kind;
	size_t len = strlen(path);
	if (len >= sizeof(f->path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(f->path, path, len + 1);
	char *slash = strrchr(f->path, '/');
	const char *name = slash ? slash + 1 : f->path;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		errno = EISDIR;
		return -1;
	}
	if (strlen(name) > NAME_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	char asked[NAME_MAX + 1];
	memcpy(asked, name, strlen(name) + 1);
	f->name_at = slash ? (size_t)(slash + 1 - f->path) : 0;

	/* The folder, by its path as given (a link there is the user's
	 * choice); from here on, everything is relative to it. */
	if (slash) {
		char keep = slash[1];
		slash[1] = '\0';
		f->dir_fd = open(f->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		slash[1] = keep;
	} else {
		f->dir_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (f->dir_fd < 0)
		return -1;

	if (kind == FILE_IN_PLACE) {
		char try[NAME_MAX + 1];
		for (unsigned k = 0; f->fd < 0; k++) {
			if (k == NAME_TRIES) {
				errno = EEXIST;
				goto fail;
			}
			if (numbered(asked, k, try, sizeof(try)) != 0)
				goto fail;
			f->fd = openat(f->dir_fd, try, CREATE_FLAGS, CREATE_MODE);
			if (f->fd < 0 && errno != EEXIST)
				goto fail;
		}
		f->renamed = strcmp(try, asked) != 0;
		if (set_name(f, try) != 0)
			goto fail;
	} else {
		/* A device or a pipe named by the user (-o /dev/null, a FIFO a
		 * reader waits on) is written into: a file renamed over it
		 * would take the place of the system's node. Never through a
		 * link, which is replaced as any name is. */
		struct stat node;
		if (kind == FILE_REPLACE &&
		    fstatat(f->dir_fd, asked, &node, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (S_ISCHR(node.st_mode) || S_ISFIFO(node.st_mode))) {
			f->fd = openat(f->dir_fd, asked, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			if (f->fd < 0)
				goto fail;
		}
		/* Hidden, and named after the file, so that whoever finds one
		 * left by a process killed mid-way knows what it was. */
		size_t stem = strlen(asked) > TEMP_STEM_MAX ? TEMP_STEM_MAX : strlen(asked);
		for (unsigned k = 0; f->fd < 0; k++) {
			char hex[17];
			if (k == TEMP_TRIES) {
				errno = EEXIST;
				goto fail;
			}
			random_hex(hex, 12);
			snprintf(f->temp, sizeof(f->temp), ".%.*s.%s.tmp", (int)stem, asked, hex);
			f->fd = openat(f->dir_fd, f->temp, CREATE_FLAGS, CREATE_MODE);
			if (f->fd < 0 && errno != EEXIST) {
				f->temp[0] = '\0';
				goto fail;
			}
		}
	}
	struct stat st;
	if (fstat(f->fd, &st) != 0)
		goto fail;
	f->dev = (uint64_t)st.st_dev;
	f->ino = (uint64_t)st.st_ino;
	return 0;
fail:;
	int saved = errno;
	file_close(f);
	errno = saved;
	return -1;
}

int file_write(struct file_out *f, const void *data, size_t size)
{
	for (const char *p = data; size > 0;) {
		ssize_t n = write(f->fd, p, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

FILE *file_stream(struct file_out *f)
{
	FILE *s = fdopen(f->fd, "w");
	if (s)
		f->fd = -1; /* the stream's now */
	return s;
}

/*
 * Gives the file at from_name in from_dir the name to_name in to_dir, or
 * with `replace` false, the first of to_name, to_name.1 ... that no file
 * has, into `placed` (room for NAME_MAX + 1). Never replaces a file
 * without `replace`; with it, replaces what is at to_name (a link
 * itself). Returns 0, or -1 with errno.
 */
static int place(int from_dir, const char *from_name, int to_dir, const char *to_name,
		 bool replace, char *placed)
{
	if (replace) {
		if (renameat(from_dir, from_name, to_dir, to_name) != 0)
			return -1;
		snprintf(placed, NAME_MAX + 1, "%s", to_name);
		return 0;
	}
	for (unsigned k = 0; k < NAME_TRIES; k++) {
		if (numbered(to_name, k, placed, NAME_MAX + 1) != 0)
			return -1;
#ifdef RENAME_NOREPLACE
		if (renameat2(from_dir, from_name, to_dir, placed, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno == EEXIST)
			continue;
		/* A file system (or a kernel) without it: a link, which
		 * never replaces either. */
		if (errno != EINVAL && errno != ENOSYS)
			return -1;
#endif
		if (linkat(from_dir, from_name, to_dir, placed, 0) == 0) {
			unlinkat(from_dir, from_name, 0);
			return 0;
		}
		if (errno == EEXIST)
			continue;
		if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS && errno != EMLINK)
			return -1;
		/* Nor links (FAT): a look before the rename. Such file
		 * systems have no links to plant, nor owners to fear. */
		struct stat st;
		if (fstatat(to_dir, placed, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		if (errno != ENOENT)
			return -1;
		return renameat(from_dir, from_name, to_dir, placed);
	}
	errno = EEXIST;
	return -1;
}

int file_finish(struct file_out *f)
{
	int saved = 0;
	if (f->fd >= 0 && close(f->fd) != 0)
		saved = errno;
	f->fd = -1;
	if (!saved && f->temp[0]) {
		char placed[NAME_MAX + 1];
		if (place(f->dir_fd, f->temp, f->dir_fd, f->path + f->name_at,
			  f->kind == FILE_REPLACE, placed) != 0) {
			saved = errno;
		} else {
			f->renamed = strcmp(placed, f->path + f->name_at) != 0;
			f->temp[0] = '\0';
			set_name(f, placed); /* fits: numbered() kept it in NAME_MAX */
		}
	}
	file_close(f);
	errno = saved;
	return saved ? -1 : 0;
}

void file_close(struct file_out *f)
{
	int saved = errno;
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->temp[0] && f->dir_fd >= 0)
		unlinkat(f->dir_fd, f->temp, 0);
	f->temp[0] = '\0';
	if (f->dir_fd >= 0)
		close(f->dir_fd);
	f->dir_fd = -1;
	errno = saved;
}

void file_discard(struct file_out *f)
{
	char why[64];
	int saved = errno;
	if (f->fd >= 0 && f->dir_fd >= 0 && !f->temp[0] && file_check(f, why, sizeof(why)) == 0)
		unlinkat(f->dir_fd, f->path + f->name_at, 0);
	file_close(f);
	errno = saved;
}

int file_move(int from_dir, const char *from_name, const char *to, bool replace, char *placed,
	      size_t size)
{
	struct file_out where;
	/* The destination's folder and name, as file_create reads them. */
	size_t len = strlen(to);
	if (len >= sizeof(where.path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memset(&where, 0, sizeof(where));
	memcpy(where.path, to, len + 1);
	char *slash = strrchr(where.path, '/');
	const char *name = slash ? slash + 1 : where.path;
	if (!*name) {
		errno = EISDIR;
		return -1;
	}
	where.name_at = slash ? (size_t)(slash + 1 - where.path) : 0;
	if (slash) {
		char keep = slash[1];
		slash[1] = '\0';
		where.dir_fd = open(where.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		slash[1] = keep;
	} else {
		where.dir_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (where.dir_fd < 0)
		return -1;
	char final[NAME_MAX + 1];
	char asked[NAME_MAX + 1];
	snprintf(asked, sizeof(asked), "%s", name);
	int r = place(from_dir, from_name, where.dir_fd, asked, replace, final);
	int saved = errno;
	close(where.dir_fd);
	if (r != 0) {
		errno = saved;
		return -1;
	}
	if (set_name(&where, final) != 0 || strlen(where.path) >= size) {
		/* Moved, but its name does not fit where the caller wants it. */
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(placed, where.path, strlen(where.path) + 1);
	return 0;
}

int file_check(const struct file_out *f, char *why, size_t size)
{
	struct stat dir, st;
	if (fstat(f->dir_fd, &dir) != 0)
		return 0; /* cannot look: nothing known to be wrong */
	if (dir.st_nlink == 0) {
		snprintf(why, size, "its folder was removed");
		return -1;
	}
	if (f->fd >= 0 && fstat(f->fd, &st) == 0 && st.st_nlink == 0) {
		snprintf(why, size, "it was removed");
		return -1;
	}
	const char *at = f->temp[0] ? f->temp : f->path + f->name_at;
	if (fstatat(f->dir_fd, at, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno != ENOENT)
			return 0;
		snprintf(why, size, "it was moved away");
		return 1;
	}
	if ((uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->ino) {
		snprintf(why, size, "another file took its name");
		return 1;
	}
	/* The folder, by its path: moved, the file is no longer where the
	 * messages say it is. */
	char folder[PATH_MAX];
	if (f->name_at == 0) {
		snprintf(folder, sizeof(folder), ".");
	} else {
		memcpy(folder, f->path, f->name_at);
		folder[f->name_at] = '\0';
	}
	if (stat(folder, &st) != 0 ? errno == ENOENT :
	    st.st_dev != dir.st_dev || st.st_ino != dir.st_ino) {
		snprintf(why, size, "its folder was moved");
		return 1;
	}
	return 0;
}

bool dir_open_to_others(int dir_fd)
{
	struct stat st;
	return fstat(dir_fd, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_IWOTH) &&
	       !(st.st_mode & S_ISVTX);
}
