/* SPDX-License-Identifier: MIT */
/*
 * util.h: what every part of crumbs shares and none owns: the option
 * parser of the commands and the console, growable strings and arrays,
 * numbers read from text, UTF-8, errno's text, the files crumbs creates,
 * and the terminal (width, colour, pager). No Vulkan, no capture format.
 */
#ifndef CRUMBS_UTIL_H
#define CRUMBS_UTIL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* Growable strings (sbuf.c)                                                */
/* ------------------------------------------------------------------------ */

/* A growable string, NUL-terminated once anything was added. */
struct sbuf {
	char *data;
	size_t len;
	size_t cap;
	bool failed; /* an allocation failed; the text is incomplete */
};

void sbuf_add(struct sbuf *b, const char *s, size_t len);
void sbuf_adds(struct sbuf *b, const char *s);
__attribute__((format(printf, 2, 3)))
void sbuf_addf(struct sbuf *b, const char *fmt, ...);
void sbuf_release(struct sbuf *b);

/* ------------------------------------------------------------------------ */
/* Growable arrays (grow.c)                                                 */
/* ------------------------------------------------------------------------ */

/* The capacity, from cap (or `first` when cap is 0) doubled until it holds
 * n elements of `size` bytes: what every growing array of crumbs takes,
 * whatever allocates it. 0 when that many bytes cannot be counted. */
size_t grow_capacity(size_t cap, size_t n, size_t size, size_t first);

/* Room for n elements of `size` bytes in the array *p, which has room for
 * *cap: it doubles from *cap, or from `first` when *cap is 0, until they
 * fit. false, with *p and *cap as they were, when out of memory. */
bool array_room_from(void **p, size_t *cap, size_t n, size_t size, size_t first);

/* array_room_from, from 64. */
bool array_room(void **p, size_t *cap, size_t n, size_t size);

/* A growable array of fixed-size elements. */
struct vec {
	void *data;
	size_t len;
	size_t cap;
};

/* Room for one more element of `size` bytes; NULL when out of memory. */
void *vec_grow(struct vec *v, size_t size);

static inline void *vec_push(struct vec *v, size_t size)
{
	if (v->len < v->cap)
		return (unsigned char *)v->data + size * v->len++;
	return vec_grow(v, size);
}
void vec_release(struct vec *v);

/* ------------------------------------------------------------------------ */
/* Options (options.c)                                                      */
/* ------------------------------------------------------------------------ */

/*
 * One command-line option, declared in a table: what it is called, and
 * the variable it sets, at `offset` in the table's target, by its kind.
 * Tables are static arrays shared by commands whose targets differ, so an
 * option names its variable by offsetof, not by address:
 *
 *   { "threshold", 't', "PCT", "hide rows below PCT percent", OPT_DOUBLE,
 *     .offset = offsetof(struct report_settings, threshold_pct),
 *     .min = 0, .max = 100, .unit = "%", .what = "a percentage from 0 to 100" },
 *
 * (The variable's fields are designated: a table entry then leaves the
 * others zero without a warning.) A value refused says "'VALUE' is not
 * WHAT"; a number without `what`, "'VALUE' is not a number" (from MIN to
 * MAX, when it starts with a digit).
 */
enum option_kind {
	OPT_FLAG,     /* bool, set true; takes no value */
	OPT_NEGATED,  /* bool, set false (--no-leaf); takes no value */
	OPT_U64,      /* uint64_t: digits alone, from min to max */
	OPT_UINT,     /* unsigned: digits alone, from min to max */
	OPT_INT,      /* int: digits alone, from min to max (0 or more) */
	OPT_DOUBLE,   /* double: a finite number from min (above min, with
		       * above_min) to max, which may end with `unit` */
	OPT_STRING,   /* char *, owned: a copy of the value, replacing (and
		       * freeing) the one before */
	OPT_FILE,     /* as OPT_STRING, a file name: an empty one is refused */
	OPT_CHOICE,   /* an int or enum: the index of the value in names[]
		       * (values[] of that index, when given) */
	OPT_FRAMES,   /* A:B, A: or :B, the frame numbers A to B, inclusive
		       * (0 and UINT64_MAX where left out): uint64_t first at
		       * offset, last at last_offset, bool true at set_offset */
	OPT_CALLBACK  /* callback(target, value): for the few whose value needs
		       * more than a kind */
};

struct option_spec {
	const char *name;       /* long name without the dashes */
	char short_name;        /* 0: none */
	const char *value;      /* the value's name in the help; NULL: a flag */
	const char *help;       /* one line */
	enum option_kind kind;
	size_t offset;          /* of the variable in the table's target */
	/* Numbers: the range (an integer kind's min and max are whole
	 * numbers, max 2^64 or more meaning UINT64_MAX). */
	double min, max;
	bool above_min;         /* OPT_DOUBLE: min itself is refused */
	const char *unit;       /* OPT_DOUBLE: what the number may end with */
	const char *what;       /* the values taken, for "'V' is not WHAT" */
	const char *const *names; /* OPT_CHOICE: NULL-terminated */
	const int *values;      /* OPT_CHOICE: the value of each name; NULL:
				 * its index */
	size_t last_offset;     /* OPT_FRAMES: of last */
	size_t set_offset;      /* OPT_FRAMES: of the bool that says it was given */
	/* OPT_CALLBACK: applies the value (NULL for a flag) to the table's
	 * target. Returns 0, or -1 with a message in err (lowercase,
	 * naming the value). */
	int (*callback)(void *target, const char *value, char *err, size_t err_size);
};

struct option_table {
	const struct option_spec *specs;
	size_t count;
	void *target;
};

/*
 * Parses argv[0..argc) against the tables: `--name`, `--name=value`,
 * `--name value`, `-x value`, `-xVALUE`, bundles of short options
 * (`-ai` is `-a -i`; one that takes a value ends the bundle: `-ab5`,
 * `-ab 5`), and `--` to end the options; `-` alone is an argument (the
 * standard input, where a command reads a file). Each option sets its variable in its table's target. Other arguments
 * are stored in order in positional[] (room for argc entries) and counted
 * in *positional_count; with stop_at_positional, the first one ends the
 * options (for `capture -- PROGRAM ARGS`). Returns 0, or -1 with a message
 * in err: "option '--name': why".
 */
int options_parse(const struct option_table *tables, size_t table_count,
		  int argc, char **argv, bool stop_at_positional,
		  char **positional, int *positional_count,
		  char *err, size_t err_size);

/* Help lines for the options of the tables, one per option. */
void options_help(const struct option_table *tables, size_t table_count,
		  struct sbuf *out);

/* An option another table holds, for a command that takes it too, with
 * a help line that says what it does there (NULL: the table's). */
struct option_borrowed {
	const char *name;
	const char *help;
};

/* Copies the options of from[0..count) that which[] names into out (room
 * for which_count), in which[]'s order, with which[]'s help lines. Their
 * variables stay where from's target has them. Returns how many. */
size_t options_borrow(const struct option_spec *from, size_t count,
		      const struct option_borrowed *which, size_t which_count,
		      struct option_spec *out);

/* ------------------------------------------------------------------------ */
/* Numbers and text                                                         */
/* ------------------------------------------------------------------------ */

/* A decimal number from 0 to max, digits alone, into *out. Returns 0, or
 * -1 with "'V' is not a number ..." in err (options.c). */
int parse_u64(const char *v, uint64_t max, uint64_t *out, char *err, size_t n);

/* The decimal number that v starts with, digits alone, into *out: the
 * character after its digits, or NULL when v does not start with a digit
 * or the number is above max (options.c). */
const char *read_u64(const char *v, uint64_t max, uint64_t *out);

/* A number, as strtod reads it (leading blanks, a sign, decimals, an
 * exponent), at the start of v into *out: the character after it, or
 * NULL when there is none or it is out of range (options.c). */
const char *read_double(const char *v, double *out);

/* A finite number from min to max, the whole of v but for `unit` (NULL:
 * none) right after it, which may be left out, into *out. Returns 0, or
 * -1 when it is not; the caller says what it expected (options.c). */
int parse_double(const char *v, const char *unit, double min, double max, double *out);

/* A malloc'd copy of s, or NULL when out of memory (options.c). */
char *dup_str(const char *s);

/* The length of the UTF-8 sequence starting at p (at most `avail` bytes)
 * if it is one valid character (shortest form, no surrogates, at most
 * U+10FFFF, not NUL), else 0 (utf8.c). */
size_t utf8_sequence(const unsigned char *p, size_t avail);

/*
 * The `len` bytes at `in` as valid UTF-8 without control characters, for
 * text from another program: each control character (C0, DEL, NUL and
 * C1, U+0080 to U+009F) becomes `control`, each byte that begins no
 * valid character becomes the string `invalid` (e.g. "\xEF\xBF\xBD",
 * U+FFFD, or "?"). Written to out, which has room for `size` bytes with
 * the NUL, up to the last whole character that fits. Returns the bytes
 * written, NUL excluded. out may be in when `invalid` is one byte long
 * (utf8.c).
 */
size_t utf8_clean(char *out, size_t size, const char *in, size_t len, char control,
		  const char *invalid);

/* The code point of the valid sequence of n bytes at p (utf8_sequence's
 * length) (utf8.c). */
uint32_t utf8_decode(const unsigned char *p, size_t n);

/*
 * Appends the `len` bytes at `in` so that a terminal draws every character
 * as the text says and a table's columns line up in any locale: control
 * characters (C0, DEL, C1), the characters that reorder or break a line
 * (bidirectional controls, U+2028, U+2029) and bytes that begin no valid
 * character become escapes, \xHH for a byte below 0x80 or an invalid one,
 * \uHHHH or \UHHHHHHHH for a code point; with `ascii`, so does every
 * character past ASCII, so that each byte is one cell (utf8.c).
 */
void utf8_escape(struct sbuf *out, const char *in, size_t len, bool ascii);

/* An errno's text, lowercased like every message of crumbs (an acronym
 * stays as it is); thread-safe (errno_text.c). */
void errno_text(int errnum, char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* Files crumbs writes (file.c)                                             */
/* ------------------------------------------------------------------------ */

/*
 * Every file crumbs writes is created, never followed: opened in its
 * folder's descriptor with O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0644
 * less the umask, so that nothing at its name (a file, or a symbolic link
 * someone planted there) is ever written through or truncated. How it
 * gets its name is its kind's:
 */
enum file_kind {
	/* Created at its name and written there (a run, which a process
	 * killed mid-way leaves readable). A name taken gets the first free
	 * one of NAME.1.EXT, NAME.2.EXT ... */
	FILE_IN_PLACE,
	/* Written under a random temporary name in its folder, then given
	 * its name, or the first free one as above, by a rename that never
	 * replaces a file (a capture). */
	FILE_NEW,
	/* Written under a random temporary name, then renamed over its
	 * name (a name the user gave, -o): what was there is replaced, a
	 * link itself, never the file it points to. A character device or
	 * a FIFO there (/dev/null) is written into instead. */
	FILE_REPLACE
};

/* A file being written. No allocation: a path is at most PATH_MAX. */
struct file_out {
	int fd;                 /* open for writing; -1 once closed (or taken by
				 * file_stream) */
	int dir_fd;             /* its folder, held: -1 once closed */
	enum file_kind kind;
	bool renamed;           /* its name is not the one asked for: taken */
	size_t name_at;         /* where its name starts in path */
	char path[PATH_MAX];    /* the folder as given, then its name: the name
				 * it has, or will have, once it is placed */
	char temp[NAME_MAX + 1]; /* its temporary name in the folder; "" when none */
	uint64_t dev, ino;      /* the file, to find it again */
};

/*
 * Creates the file of `kind` for `path` (a name without a folder is in
 * the current one). Returns 0 with *f open, or -1 with errno (EEXIST: a
 * thousand names taken; ENAMETOOLONG; EISDIR: the path names no file)
 * and *f closed.
 */
int file_create(struct file_out *f, const char *path, enum file_kind kind);

/* Writes all of data. Returns 0, or -1 with errno. */
int file_write(struct file_out *f, const void *data, size_t size);

/* A buffered stream on the file, which takes its descriptor: fclose it
 * before file_finish. NULL, with f as it was, when out of memory. */
FILE *file_stream(struct file_out *f);

/*
 * After the last write: closes the file and gives a temporary its name as
 * its kind says (path then holds it, and `renamed` says whether it is not
 * the one asked for), then closes the folder. Returns 0, or -1 with errno,
 * the temporary removed. Either way *f is closed.
 */
int file_finish(struct file_out *f);

/* Closes the file and its folder and removes a temporary (a file created
 * in place stays). Closing a closed one does nothing. */
void file_close(struct file_out *f);

/* Closes the file and its folder, and removes it: a temporary, or a file
 * created in place while it is still at its name (as file_check says),
 * never another that took the name. */
void file_discard(struct file_out *f);

/*
 * Whether the file is still where its path says: its folder not removed
 * nor moved, the file not removed, and its name (or temporary name) still
 * its own. 0 when nothing says otherwise; -1 when the file is gone with
 * what it held (removed, or its folder), 1 when it is somewhere else
 * (moved away, another file at its name, its folder moved), with what
 * happened in why ("its folder was removed"). A folder given by a
 * relative path is looked for from the current folder: give an absolute
 * one where that may change.
 */
int file_check(const struct file_out *f, char *why, size_t size);

/*
 * Moves the file from_name of the folder open at from_dir to `to`, in the
 * same file system, as file_finish places a temporary: over what is
 * there with `replace`, else under the first free name of to, to.1 ...
 * The path it got, folder as given, goes to placed (room for size).
 * Returns 0, or -1 with errno.
 */
int file_move(int from_dir, const char *from_name, const char *to, bool replace, char *placed,
	      size_t size);

/* Whether any user may replace or remove the files of the folder open at
 * dir_fd: it is writable by others and has no sticky bit. */
bool dir_open_to_others(int dir_fd);

/* ------------------------------------------------------------------------ */
/* The terminal: width, colour, pager (term.c)                              */
/* ------------------------------------------------------------------------ */

enum term_color { TERM_COLOR_AUTO, TERM_COLOR_ALWAYS, TERM_COLOR_NEVER };

/* What a command's options say of its terminal; zeroed is the default. */
struct term_options {
	int width;           /* --width N; 0: not given */
	bool wide;           /* --wide: no limit */
	int color;           /* --color: an enum term_color */
	bool no_pager;       /* --no-pager */
};

/* The display cells a line of a table may take: --width, else no limit
 * with --wide, else tty_columns (the terminal's, 0 when standard output
 * is none or does not say), else `columns` (COLUMNS) when it is a number
 * from 1 to 100000, else 0: no limit. */
unsigned term_width(const struct term_options *o, unsigned tty_columns, const char *columns);

/* The columns of the terminal at fd (TIOCGWINSZ); 0 when it is none. */
unsigned term_columns(int fd);

/* Whether to colour: always, never, or with auto when the output is a
 * terminal (or a pager started for one), no_color (NO_COLOR) is unset
 * or empty and term (TERM) is set and not "dumb". */
bool term_color(int when, bool tty, const char *no_color, const char *term);

/* The pager to run, from CRUMBS_PAGER, else PAGER, else less where term
 * (TERM) is set and not "dumb"; NULL for none: an empty value or "cat". */
const char *term_pager(const char *crumbs_pager, const char *pager, const char *term);

/* Runs `command` with standard output (fd 1) piped to its input, LESS=FRX
 * where LESS is unset, and SIGPIPE ignored: a single word is run by
 * itself, anything else by /bin/sh -c. false, with standard output as it
 * was, when it could not start. */
bool term_pager_start(const char *command);

/* Flushes and closes standard output and waits for the pager; a no-op
 * without one. */
void term_pager_wait(void);

/* Whether the pager was quit before it read all, leaving standard output
 * a pipe nobody reads: then standard output becomes /dev/null, its error
 * cleared, so that the command ends as it would have and says nothing of
 * it. false without a pager, or when the pager is still reading. */
bool term_pager_quit(void);

#endif
