/*
 * util.h: what every part of crumbs shares and none owns: the option
 * parser of the commands and the console, growable strings and arrays,
 * numbers read from text, and errno's text. No Vulkan, no capture format.
 */
#ifndef CRUMBS_UTIL_H
#define CRUMBS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* One command-line option, declared in a table. */
struct option_spec {
	const char *name;       /* long name without the dashes */
	char short_name;        /* 0: none */
	const char *value;      /* the value's name in the help; NULL: a flag */
	const char *help;       /* one line */
	/* Applies the option to the table's target. Returns 0, or -1 with a
	 * message in err (lowercase, naming the option). */
	int (*apply)(void *target, const char *value, char *err, size_t err_size);
};

struct option_table {
	const struct option_spec *specs;
	size_t count;
	void *target;
};

/*
 * Parses argv[0..argc) against the tables: `--name`, `--name=value`,
 * `--name value`, `-x value`, and `--` to end the options. Other arguments
 * are stored in order in positional[] (room for argc entries) and counted
 * in *positional_count; with stop_at_positional, the first one ends the
 * options (for `capture -- PROGRAM ARGS`). Returns 0, or -1 with a message
 * in err.
 */
int options_parse(const struct option_table *tables, size_t table_count,
		  int argc, char **argv, bool stop_at_positional,
		  char **positional, int *positional_count,
		  char *err, size_t err_size);

/* Help lines for the options of the tables, one per option. */
void options_help(const struct option_table *tables, size_t table_count,
		  struct sbuf *out);

/* An option's string value: *dst (owned; NULL or an earlier value, which
 * it frees) becomes a copy of v. Returns 0, or -1 with a message in err
 * when memory ran out. */
int option_set_string(char **dst, const char *v, char *err, size_t n);

/* An option's value that must be one of `count` names: its index, or -1
 * with "'V' is not one of A, B, C" in err. */
int option_pick(const char *v, const char *const *names, size_t count, char *err, size_t n);

/* --frames A:B, A: or :B: the frame numbers A to B, inclusive, into
 * *first and *last (0 and UINT64_MAX where left out). Returns 0, or -1
 * with a message in err. */
int option_parse_frames(const char *v, uint64_t *first, uint64_t *last, char *err, size_t n);

/* ------------------------------------------------------------------------ */
/* Numbers and text                                                         */
/* ------------------------------------------------------------------------ */

/* A decimal number from 0 to max, digits alone, into *out. Returns 0, or
 * -1 with "'V' is not a number ..." in err (options.c). */
int parse_u64(const char *v, uint64_t max, uint64_t *out, char *err, size_t n);

/* A malloc'd copy of s, or NULL when out of memory (options.c). */
char *dup_str(const char *s);

/* An errno's text, lowercased like every message of crumbs (an acronym
 * stays as it is); thread-safe (errno_text.c). */
void errno_text(int errnum, char *buf, size_t size);

#endif
