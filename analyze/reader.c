/* SPDX-License-Identifier: MIT */
/*
 * reader.c: a capture file as chunks (format/FORMAT.md): the header, and
 * the index or the chunk headers, read at open; each chunk checked and
 * decompressed only when its frames are asked for (memory follows the
 * largest chunk), the next one on a thread; seeking. records.c decodes them.
 */
#include "analyze_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

struct chunk_ref {
	uint64_t offset;
	uint64_t first;
	uint64_t last;
	uint32_t frames;
	uint8_t type;
	uint8_t partial; /* its body is cut by the end of the file */
};


/* Frames of a chunk decoded ahead on the prefetch thread, at most this many
 * bytes of records (decoded records take many times the bytes of the
 * content they come from); the rest of a larger chunk is decoded frame by
 * frame as it is read. */
#define AHEAD_BYTES (24u << 20)

/* A chunk as read and decompressed, and the frames decoded from it. */
struct chunk_data {
	struct big compressed; /* big_alloc's: a chunk is megabytes */
	struct big content;
	size_t produced;   /* bytes of content */
	ZSTD_DCtx *dctx;
	struct chunk_state cs;
	struct raw_frames frames;
	/* frames holds the chunk's first frames, decoded with the setup of
	 * this generation; where that decoding stopped at damage, `fail` and
	 * the rest say why and where (at fail_offset of the content). */
	bool ahead;
	uint64_t setup_generation;
	const char *fail;
	bool ran_out;
	size_t fail_offset;
	struct arena scratch; /* of model_place */
};

static void chunk_data_release(struct chunk_data *d)
{
	big_free(&d->compressed);
	big_free(&d->content);
	ZSTD_freeDCtx(d->dctx);
	vec_release(&d->cs.names);
	vec_release(&d->cs.name_lens);
	raw_frames_release(&d->frames);
	arena_release(&d->scratch);
	memset(d, 0, sizeof(*d));
}

/* The background decoder of the next chunk. */
struct prefetch {
	bool started;
	bool failed;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool quit;
	bool busy;
	size_t want;       /* chunk asked for, or NO_CHUNK */
	bool want_frames;  /* and its frames decoded, with the setup of */
	uint64_t want_generation; /* this generation */
	/* Set by the main thread when it waits for the chunk being
	 * decoded: its frames not decoded yet are left to the main thread,
	 * so that neither thread waits for the other longer than a frame. */
	atomic_bool hurry;
	size_t done;       /* chunk decoded into data, or NO_CHUNK */
	struct chunk_data data;
	enum crumbs_result result;
	struct analyze_error err;
};

struct reader {
	int fd;
	const unsigned char *mem;
	uint64_t size;

	struct capture_meta meta;
	struct analyze_error damage;  /* found at open, or while reading */
	struct analyze_error stop;    /* what ended reading, sticky */
	bool stopped;

	struct arena header_arena;    /* what the header names: the producer */
	struct setup setup;           /* reset to apply setup chunks again */
	uint64_t setup_generation;    /* counts the changes to setup */
	struct vec chunks;            /* struct chunk_ref */
	struct vec frame_chunks;      /* size_t, chunks of frames in order */
	uint64_t chunks_end;          /* where the chunks stop (index or damage) */
	size_t setup_applied;         /* setup chunks before this are applied */

	size_t next_chunk;
	bool loaded;
	struct chunk_data main;       /* the loaded chunk, its state in main.cs */
	size_t next_frame;            /* in main.frames, the next to read */
	uint32_t frames_read;         /* of the loaded chunk */
	struct prefetch prefetch;
	uint64_t raw_bytes;

	bool skip_scopes;             /* reader_skip_scopes */
	bool flat_scopes;             /* reader_flat_scopes */
	size_t read_end;              /* chunks from here on are not read */
	bool no_prefetch;             /* reader_prefetch(c, false) */
	uint64_t names_epoch;         /* counts the chunks loaded */
	struct raw_frame raw;         /* the frame read last, in main.frames */
	bool pending;                 /* raw holds the frame the next read returns */
	struct arena frame_arena;
};

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

__attribute__((format(printf, 4, 5)))
static enum crumbs_result set_error(struct analyze_error *e, enum crumbs_result code,
				    uint64_t byte, const char *fmt, ...)
{
	va_list ap;
	e->code = code;
	e->byte = byte;
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
	return code;
}

static enum crumbs_result truncated(struct analyze_error *e, uint64_t byte)
{
	return set_error(e, CRUMBS_ERROR_TRUNCATED, byte, "truncated at byte %llu",
			 (unsigned long long)byte);
}

__attribute__((format(printf, 3, 4)))
static enum crumbs_result corrupt(struct analyze_error *e, uint64_t byte,
				  const char *fmt, ...)
{
	char detail[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return set_error(e, CRUMBS_ERROR_CORRUPT, byte, "corrupt at byte %llu (%s)",
			 (unsigned long long)byte, detail);
}

static enum crumbs_result out_of_memory(struct analyze_error *e)
{
	return set_error(e, CRUMBS_ERROR_OUT_OF_MEMORY, 0, "out of memory");
}

/* Keeps the earliest damage of the file. */
static void note_damage(reader *c, const struct analyze_error *e)
{
	if (c->damage.code == CRUMBS_OK || e->byte < c->damage.byte)
		c->damage = *e;
}

/* ------------------------------------------------------------------------ */
/* The file                                                                 */
/* ------------------------------------------------------------------------ */

/* Room for size bytes in b, whose contents need not be kept: a quarter
 * more than asked, so that chunks a little larger each time do not each
 * take a new block, but never more than the largest chunk takes. */
static bool big_room(struct big *b, size_t size)
{
	if (b->data && b->size >= size)
		return true;
	big_free(b);
	size_t grown = size < SIZE_MAX / 2 ? size + size / 4 : size;
	if (grown > FORMAT_MAX_CHUNK_BYTES)
		grown = size > FORMAT_MAX_CHUNK_BYTES ? size : FORMAT_MAX_CHUNK_BYTES;
	return big_alloc(b, grown);
}

/* Reads up to n bytes at off; returns how many were read (fewer only at
 * the end of the file), or -1 on an I/O error (errno set). */
static ssize_t read_at(const reader *c, uint64_t off, void *buf, size_t n)
{
	if (off >= c->size)
		return 0;
	if (n > c->size - off)
		n = (size_t)(c->size - off);
	if (c->mem) {
		memcpy(buf, c->mem + off, n);
		return (ssize_t)n;
	}
	size_t done = 0;
	while (done < n) {
		ssize_t r = pread(c->fd, (char *)buf + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* strerror's text, lowercased to read as the rest of crumbs' messages.
 * strerror_r: crumbs' writer thread reads captures back while the
 * program's threads may call strerror. _POSIX_C_SOURCE gives the XSI
 * strerror_r, which returns 0 on success. */

static enum crumbs_result io_error(struct analyze_error *e, uint64_t byte)
{
	char why[128];
	errno_text(errno, why, sizeof(why));
	return set_error(e, CRUMBS_ERROR_IO, byte, "cannot read at byte %llu: %s",
			 (unsigned long long)byte, why);
}

/* ------------------------------------------------------------------------ */
/* Devices and queues                                                       */
/* ------------------------------------------------------------------------ */

static void refresh_meta(reader *c)
{
	c->meta.gpus = c->setup.gpus.data;
	c->meta.gpu_count = (uint32_t)c->setup.gpus.len;
	c->meta.queues = c->setup.queues.data;
	c->meta.queue_count = (uint32_t)c->setup.queues.len;
	c->meta.counter_sets = c->setup.counter_sets.data;
	c->meta.counter_set_count = (uint32_t)c->setup.counter_sets.len;
	c->meta.offered_counters = c->setup.offered.data;
	c->meta.offered_counter_count = (uint32_t)c->setup.offered.len;
}

static void prefetch_idle(reader *c);

static void reset_setup(reader *c)
{
	prefetch_idle(c); /* its thread may be decoding frames with the setup */
	setup_reset(&c->setup);
	c->setup_generation++;
	c->setup_applied = 0;
	refresh_meta(c);
}

/* ------------------------------------------------------------------------ */
/* Chunks                                                                   */
/* ------------------------------------------------------------------------ */

/* Checks the chunk header at off, of which the file holds `have` bytes
 * at h; fills ref and *got. */
static enum crumbs_result check_chunk_header(const unsigned char *h, size_t have,
					     uint64_t off, struct chunk_ref *ref,
					     struct format_chunk_header *got,
					     struct analyze_error *err)
{
	struct format_fault fault;
	switch (format_chunk_header_decode(h, have, got, &fault)) {
	case CRUMBS_OK:
		break;
	case CRUMBS_ERROR_TRUNCATED:
		return truncated(err, off + have);
	default:
		return corrupt(err, off, "%s", fault.what);
	}
	*ref = (struct chunk_ref){ off, got->first_frame, got->last_frame, got->frame_count,
				   got->type, 0 };
	return CRUMBS_OK;
}

/* Frame numbers increase strictly through the file. */
static bool follows(const struct vec *chunks, const struct chunk_ref *ref)
{
	if (ref->type != FORMAT_CHUNK_FRAMES)
		return true;
	const struct chunk_ref *all = chunks->data;
	for (size_t i = chunks->len; i-- > 0;)
		if (all[i].type == FORMAT_CHUNK_FRAMES)
			return ref->first > all[i].last;
	return true;
}

static enum crumbs_result add_chunk(reader *c, const struct chunk_ref *ref,
				    struct analyze_error *err)
{
	struct chunk_ref *slot = vec_push(&c->chunks, sizeof(*slot));
	size_t *fc = NULL;
	if (!slot || (ref->type == FORMAT_CHUNK_FRAMES && !(fc = vec_push(&c->frame_chunks, sizeof(*fc)))))
		return out_of_memory(err);
	*slot = *ref;
	if (fc)
		*fc = c->chunks.len - 1;
	if (ref->type == FORMAT_CHUNK_FRAMES) {
		if (c->meta.frame_count == 0)
			c->meta.first_frame = ref->first;
		c->meta.last_frame = ref->last;
		c->meta.frame_count += ref->frames;
	}
	c->meta.chunk_count = c->chunks.len;
	return CRUMBS_OK;
}

/* Finds the chunks by their headers, front to back. Stops at the first
 * damage, which it records: a file without an index was cut. */
static enum crumbs_result walk_chunks(reader *c, uint64_t off, struct analyze_error *err)
{
	unsigned char h[FORMAT_CHUNK_FRAME_BYTES];
	struct analyze_error e = { 0 };

	for (;;) {
		if (off == c->size) {
			truncated(&e, off);
			break;
		}
		ssize_t n = read_at(c, off, h, sizeof(h));
		if (n < 0)
			return io_error(err, off);
		struct format_frame frame = { 0, 0 };
		if (n >= FORMAT_SKIPPABLE_BYTES)
			frame = format_frame_decode(h);
		if (n >= FORMAT_SKIPPABLE_BYTES && frame.magic == FORMAT_MAGIC_INDEX) {
			/* An index whose trailer did not check out: damaged if
			 * it ends where the file does, else cut. */
			if (off + FORMAT_SKIPPABLE_BYTES + frame.size == c->size)
				corrupt(&e, off, "index trailer is damaged");
			else
				truncated(&e, c->size);
			break;
		}
		struct chunk_ref ref;
		struct format_chunk_header got;
		if (check_chunk_header(h, (size_t)n, off, &ref, &got, &e) != CRUMBS_OK)
			break;
		if (!follows(&c->chunks, &ref)) {
			corrupt(&e, off, "frame numbers do not increase");
			break;
		}
		uint64_t end = off + FORMAT_CHUNK_FRAME_BYTES + got.body_bytes;
		if (end > c->size) {
			ref.partial = 1;
			if (add_chunk(c, &ref, err) != CRUMBS_OK)
				return err->code;
			truncated(&e, c->size);
			off = c->size;
			break;
		}
		if (add_chunk(c, &ref, err) != CRUMBS_OK)
			return err->code;
		off = end;
	}
	c->chunks_end = off;
	if (e.code != CRUMBS_OK)
		note_damage(c, &e);
	return CRUMBS_OK;
}

/* Reads the index at the end of the file. Returns false (with the damage
 * noted when there was an index to find) if it cannot be used. */
static bool read_index(reader *c, uint64_t chunks_start)
{
	unsigned char t[FORMAT_INDEX_TRAILER_BYTES];
	struct analyze_error e = { 0 };
	struct format_fault fault;
	struct format_index_trailer trailer;
	uint64_t tail = c->size - FORMAT_INDEX_TRAILER_BYTES;

	if (c->size < chunks_start + FORMAT_SKIPPABLE_BYTES + FORMAT_INDEX_TRAILER_BYTES ||
	    read_at(c, tail, t, sizeof(t)) != (ssize_t)sizeof(t))
		return false;
	switch (format_index_trailer_decode(t, c->size - chunks_start, &trailer, &fault)) {
	case CRUMBS_OK:
		break;
	case CRUMBS_ERROR_NOT_FOUND:
		return false;
	default:
		corrupt(&e, tail, "%s", fault.what);
		note_damage(c, &e);
		return false;
	}
	uint64_t entries = trailer.entry_count;
	uint64_t total = trailer.frame_bytes;
	uint64_t at = c->size - total;
	unsigned char *p = malloc((size_t)total);
	if (!p)
		return false;
	bool ok = false;
	if (read_at(c, at, p, (size_t)total) != (ssize_t)total) {
		io_error(&e, at);
		goto out;
	}
	if (format_index_decode(p, &trailer, &fault) != CRUMBS_OK) {
		corrupt(&e, at, "%s", fault.what);
		goto out;
	}
	uint64_t prev = 0;
	for (uint32_t i = 0; i < entries; i++) {
		struct format_index_entry got;
		bool sane = format_index_entry_decode(p, i, &got);
		struct chunk_ref ref = { got.offset, got.first_frame, got.last_frame,
					 got.frame_count, got.type, 0 };
		sane = sane && ref.offset == (i == 0 ? chunks_start : ref.offset) &&
		       (i == 0 || ref.offset > prev) &&
		       ref.offset <= at - FORMAT_CHUNK_FRAME_BYTES - 1 && ref.offset < at &&
		       follows(&c->chunks, &ref);
		if (!sane) {
			corrupt(&e, at, "index entry %llu is inconsistent", (unsigned long long)i);
			goto out;
		}
		if (add_chunk(c, &ref, &e) != CRUMBS_OK)
			goto out;
		prev = ref.offset;
	}
	if (entries == 0 && at != chunks_start) {
		corrupt(&e, at, "index lists no chunks");
		goto out;
	}
	c->chunks_end = at;
	c->meta.has_index = true;
	ok = true;
out:
	free(p);
	if (!ok) {
		c->chunks.len = c->frame_chunks.len = 0;
		c->meta.frame_count = c->meta.first_frame = c->meta.last_frame = 0;
		c->meta.chunk_count = 0;
		if (e.code != CRUMBS_OK)
			note_damage(c, &e);
	}
	return ok;
}

/* A zstd frame (RFC 8878) whose descriptor sets the content checksum and
 * nothing a decoder would ignore: no dictionary, unused and reserved bits
 * zero. Checked by hand because zstd's own header parser is not part of its
 * stable interface. */
static bool zstd_frame_as_specified(const unsigned char *p, size_t size)
{
	if (size < 6 || format_get32(p) != ZSTD_MAGICNUMBER)
		return false;
	unsigned descriptor = p[4];
	return (descriptor & 0x04) && !(descriptor & 0x18) && !(descriptor & 0x03);
}

/*
 * Reads, checks and decompresses chunk i into d. Touches nothing of the
 * capture but what is fixed once it is open (the chunk list, the file), so
 * the prefetch thread runs it too.
 */
static enum crumbs_result decode_chunk(const reader *c, size_t i, struct chunk_data *d,
				       struct analyze_error *err)
{
	const struct chunk_ref *ref = (const struct chunk_ref *)c->chunks.data + i;
	unsigned char h[FORMAT_CHUNK_FRAME_BYTES];
	struct chunk_ref got;
	struct format_chunk_header header;
	ssize_t n;

	d->produced = 0;
	if ((n = read_at(c, ref->offset, h, sizeof(h))) < 0)
		return io_error(err, ref->offset);
	if (check_chunk_header(h, (size_t)n, ref->offset, &got, &header, err) != CRUMBS_OK)
		return err->code;
	uint32_t csize = header.body_bytes, usize = header.content_bytes;
	if (got.type != ref->type || got.frames != ref->frames || got.first != ref->first ||
	    got.last != ref->last)
		return corrupt(err, ref->offset, "chunk header disagrees with the index");

	uint64_t body = ref->offset + FORMAT_CHUNK_FRAME_BYTES;
	uint64_t end = i + 1 < c->chunks.len ? ((const struct chunk_ref *)c->chunks.data)[i + 1].offset
					     : c->chunks_end;
	if (!ref->partial && body + csize != end)
		return corrupt(err, body + csize < end ? body + csize : ref->offset,
			       "chunk does not end where the next begins");
	/* A cut body is read as far as the file goes, and no further. */
	size_t want = csize;
	if (ref->partial && body + want > c->size)
		want = body < c->size ? (size_t)(c->size - body) : 0;
	if (!big_room(&d->compressed, want) || !big_room(&d->content, usize))
		return out_of_memory(err);
	if (!d->dctx) {
		if (!(d->dctx = ZSTD_createDCtx()))
			return out_of_memory(err);
		/* The chunk's CRC-32C, checked before decompression, covers
		 * every byte zstd reads, so the frame's own XXH64 of what it
		 * gives back says nothing more, and costs as much: zstd is
		 * asked to skip it (ZSTD_d_forceIgnoreChecksum, the name its
		 * header gives the parameter only to static linking). A zstd
		 * without the parameter refuses it and checks, as before. */
		(void)ZSTD_DCtx_setParameter(d->dctx, ZSTD_d_experimentalParam3, 1);
		/* A cut body is decompressed a block at a time straight into
		 * the content's buffer, which stays put (ZSTD_d_stableOutBuffer):
		 * without it zstd keeps a window of its own, as large again. */
		(void)ZSTD_DCtx_setParameter(d->dctx, ZSTD_d_experimentalParam2, 1);
	}
	if ((n = read_at(c, body, d->compressed.data, want)) < 0)
		return io_error(err, body);
	size_t have = (size_t)n;

	if (!ref->partial) {
		if (have != csize)
			return truncated(err, body + have);
		if (crumbs_crc32c(0, d->compressed.data, csize) != header.body_crc)
			return corrupt(err, body, "chunk checksum mismatch");
		if (!zstd_frame_as_specified(d->compressed.data, csize) ||
		    ZSTD_getFrameContentSize(d->compressed.data, csize) != usize)
			return corrupt(err, body, "chunk body is not the zstd frame its header describes");
		if (ZSTD_findFrameCompressedSize(d->compressed.data, csize) != csize)
			return corrupt(err, body, "chunk body is not one zstd frame of its size");
		size_t r = ZSTD_decompressDCtx(d->dctx, d->content.data, usize,
					       d->compressed.data, csize);
		if (ZSTD_isError(r) || r != usize)
			return corrupt(err, body, "chunk does not decompress: %s",
				       ZSTD_isError(r) ? ZSTD_getErrorName(r) : "wrong size");
		d->produced = r;
	} else {
		/* The file ends inside this body: take what its complete
		 * blocks give; its frames that decoded whole are usable. */
		ZSTD_inBuffer in = { d->compressed.data, have, 0 };
		ZSTD_outBuffer out = { d->content.data, usize, 0 };
		ZSTD_DCtx_reset(d->dctx, ZSTD_reset_session_only);
		while (in.pos < in.size && out.pos < out.size) {
			size_t r = ZSTD_decompressStream(d->dctx, &out, &in);
			if (ZSTD_isError(r))
				return corrupt(err, body, "chunk does not decompress: %s",
					       ZSTD_getErrorName(r));
			if (r == 0)
				break;
		}
		d->produced = out.pos;
	}
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* Frames decoded ahead                                                     */
/* ------------------------------------------------------------------------ */

/* Starts decoding chunk i, whose content d holds, from its first record. */
static void chunk_begin(const reader *c, size_t i, struct chunk_data *d)
{
	const struct chunk_ref *ref = (const struct chunk_ref *)c->chunks.data + i;
	struct chunk_state *cs = &d->cs;
	cs->data = d->content.data;
	cs->len = d->produced;
	cs->pos = 0;
	cs->body_offset = ref->offset + FORMAT_CHUNK_FRAME_BYTES;
	cs->index = i;
	cs->frames_done = 0;
	cs->prev_frame = 0;
	cs->cpu_cursor = 0;
	cs->version_minor = c->meta.version_minor;
	memset(cs->tick_base, 0, sizeof(cs->tick_base));
	cs->names.len = cs->name_lens.len = 0;
	raw_frames_clear(&d->frames);
	d->ahead = false;
	d->fail = NULL;
	d->ran_out = false;
	d->fail_offset = 0;
}

static void cursor_init(const struct chunk_state *cs, struct cursor *k)
{
	k->start = cs->data;
	k->p = cs->data + cs->pos;
	k->end = cs->data + cs->len;
	k->fail = NULL;
	k->ran_out = false;
}

/* Decodes the next frame of d's chunk, appending it to d->frames; at
 * damage, notes it in d and returns false. */
static bool decode_frame(const struct setup *setup, struct chunk_data *d)
{
	struct cursor k;
	cursor_init(&d->cs, &k);
	if (!records_decode_frame(setup, &k, &d->cs, &d->frames)) {
		d->fail = k.fail;
		d->ran_out = k.ran_out;
		d->fail_offset = (size_t)(k.p - k.start);
		return false;
	}
	d->cs.pos = (size_t)(k.p - k.start);
	return true;
}

/*
 * Decodes the first frames of frames chunk i, decompressed in d, with the
 * setup as it is: the prefetch thread runs it while the setup does not
 * change (reset_setup waits for it; setup chunks are not decoded ahead).
 * Memory is bounded by AHEAD_BYTES; the rest is left to next_raw.
 */
static void decode_ahead(reader *c, size_t i, struct chunk_data *d, uint64_t generation)
{
	const struct setup *setup = &c->setup;
	struct model_context ctx = {
		setup->gpus.data, (uint32_t)setup->gpus.len,
		setup->queues.data, (uint32_t)setup->queues.len,
		setup->samples.data, (uint32_t)setup->samples.len, false, false,
	};

	chunk_begin(c, i, d);
	d->ahead = true;
	d->setup_generation = generation;
	while (d->cs.pos < d->cs.len && raw_frames_bytes(&d->frames) < AHEAD_BYTES &&
	       !atomic_load_explicit(&c->prefetch.hurry, memory_order_relaxed)) {
		if (!decode_frame(setup, d))
			break;
		/* Its times too, which need no earlier frame: less for the
		 * thread that builds the models. Out of memory leaves them
		 * to it. */
		model_place(&ctx, &d->frames, d->frames.spans.len - 1, &d->scratch);
		arena_reset(&d->scratch);
	}
}

/* ------------------------------------------------------------------------ */
/* Prefetch: while one chunk is read, the next is decompressed and decoded  */
/* ------------------------------------------------------------------------ */

#define NO_CHUNK SIZE_MAX

static void *prefetch_main(void *arg)
{
	reader *c = arg;
	struct prefetch *p = &c->prefetch;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->want == NO_CHUNK && !p->quit)
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->quit)
			break;
		size_t i = p->want;
		bool frames = p->want_frames;
		uint64_t generation = p->want_generation;
		p->want = NO_CHUNK;
		p->busy = true;
		pthread_mutex_unlock(&p->lock);
		struct analyze_error e = { 0 };
		enum crumbs_result r = decode_chunk(c, i, &p->data, &e);
		p->data.ahead = false;
		if (r == CRUMBS_OK && frames)
			decode_ahead(c, i, &p->data, generation);
		pthread_mutex_lock(&p->lock);
		p->result = r;
		p->err = e;
		p->done = i;
		p->busy = false;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Asks for chunk i to be decoded in the background, and its frames too
 * when `frames`. Without a thread (one could not be started) chunks are
 * simply decoded when needed. */
static void prefetch_start(reader *c, size_t i, bool frames)
{
	struct prefetch *p = &c->prefetch;
	if (i >= c->chunks.len)
		return;
	if (!p->started) {
		if (p->failed || c->no_prefetch)
			return;
		p->want = p->done = NO_CHUNK;
		if (pthread_mutex_init(&p->lock, NULL) != 0) {
			p->failed = true;
			return;
		}
		if (pthread_cond_init(&p->cond, NULL) != 0) {
			pthread_mutex_destroy(&p->lock);
			p->failed = true;
			return;
		}
		if (pthread_create(&p->thread, NULL, prefetch_main, c) != 0) {
			pthread_cond_destroy(&p->cond);
			pthread_mutex_destroy(&p->lock);
			p->failed = true;
			return;
		}
		p->started = true;
	}
	pthread_mutex_lock(&p->lock);
	p->want = i;
	p->want_frames = frames;
	p->want_generation = c->setup_generation;
	p->done = NO_CHUNK;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* Waits until the thread is idle, dropping what it was asked for. */
static void prefetch_idle(reader *c)
{
	struct prefetch *p = &c->prefetch;
	if (!p->started)
		return;
	pthread_mutex_lock(&p->lock);
	p->want = NO_CHUNK;
	atomic_store_explicit(&p->hurry, true, memory_order_relaxed);
	while (p->busy)
		pthread_cond_wait(&p->cond, &p->lock);
	atomic_store_explicit(&p->hurry, false, memory_order_relaxed);
	pthread_mutex_unlock(&p->lock);
}

/* If chunk i was decoded in the background, swaps its buffers with d and
 * returns true with its result. */
static bool prefetch_take(reader *c, size_t i, struct chunk_data *d, enum crumbs_result *r,
			  struct analyze_error *err)
{
	struct prefetch *p = &c->prefetch;
	bool got = false;
	if (!p->started)
		return false;
	pthread_mutex_lock(&p->lock);
	while (p->busy || p->want != NO_CHUNK) {
		if (p->want != NO_CHUNK && p->want != i) {
			p->want = NO_CHUNK; /* no longer needed */
		} else {
			atomic_store_explicit(&p->hurry, true, memory_order_relaxed);
			pthread_cond_wait(&p->cond, &p->lock);
		}
	}
	atomic_store_explicit(&p->hurry, false, memory_order_relaxed);
	if (p->done == i) {
		struct chunk_data mine = *d;
		*d = p->data;
		p->data = mine;
		*r = p->result;
		*err = p->err;
		p->done = NO_CHUNK;
		got = true;
	}
	pthread_mutex_unlock(&p->lock);
	return got;
}

static void prefetch_stop(reader *c)
{
	struct prefetch *p = &c->prefetch;
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		p->quit = true;
		pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		p->started = false;
	}
	chunk_data_release(&p->data);
}

static bool is_frames(const reader *c, size_t i)
{
	return i < c->chunks.len &&
	       ((const struct chunk_ref *)c->chunks.data)[i].type == FORMAT_CHUNK_FRAMES;
}

/* Makes chunk i the loaded one, and starts on the one after it: its
 * frames too when both hold frames, as then the setup that applies to
 * both is already applied. */
static enum crumbs_result load_chunk(reader *c, size_t i, struct analyze_error *err)
{
	enum crumbs_result r;

	c->loaded = false;
	c->names_epoch++; /* the names of another chunk, or of another read */
	if (!prefetch_take(c, i, &c->main, &r, err)) {
		c->main.ahead = false;
		r = decode_chunk(c, i, &c->main, err);
	}
	if (r != CRUMBS_OK)
		return r;
	if (!c->main.ahead || c->main.setup_generation != c->setup_generation)
		chunk_begin(c, i, &c->main);
	prefetch_start(c, i + 1, is_frames(c, i) && is_frames(c, i + 1));
	c->next_frame = 0;
	c->frames_read = 0;
	c->raw_bytes += c->main.produced;
	c->loaded = true;
	return CRUMBS_OK;
}

/* The damage at `offset` of the loaded chunk's content. */
static enum crumbs_result records_error(reader *c, const char *fail, bool ran_out,
					size_t offset, struct analyze_error *err)
{
	const struct chunk_ref *ref = (const struct chunk_ref *)c->chunks.data + c->main.cs.index;
	if (ran_out && ref->partial)
		return truncated(err, c->size);
	if (strcmp(fail, "out of memory") == 0)
		return out_of_memory(err);
	return corrupt(err, c->main.cs.body_offset, "%s, at offset %zu of the chunk's content",
		       fail, offset);
}

/* Applies setup chunk i (loading it). */
static enum crumbs_result apply_setup(reader *c, size_t i, struct analyze_error *err)
{
	struct cursor k;
	enum crumbs_result r = load_chunk(c, i, err);
	if (r != CRUMBS_OK)
		return r;
	cursor_init(&c->main.cs, &k);
	c->setup_generation++;
	bool ok = records_apply_setup(&c->setup, &k, &c->main.cs);
	refresh_meta(c);
	c->loaded = false; /* nothing of it is read as frames */
	if (!ok)
		return records_error(c, k.fail, k.ran_out, (size_t)(k.p - k.start), err);
	const struct chunk_ref *ref = (const struct chunk_ref *)c->chunks.data + i;
	if (ref->partial)
		return truncated(err, c->size);
	return CRUMBS_OK;
}

/* Applies every setup chunk before chunk i that is not applied yet. */
static enum crumbs_result setup_before(reader *c, size_t i, struct analyze_error *err)
{
	const struct chunk_ref *all = c->chunks.data;
	if (c->setup_applied > i)
		reset_setup(c);
	for (; c->setup_applied < i; c->setup_applied++) {
		if (all[c->setup_applied].type != FORMAT_CHUNK_SETUP)
			continue;
		enum crumbs_result r = apply_setup(c, c->setup_applied, err);
		if (r != CRUMBS_OK)
			return r;
	}
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* Open                                                                     */
/* ------------------------------------------------------------------------ */

static enum crumbs_result open_common(reader *c, struct analyze_error *err)
{
	unsigned char h[FORMAT_HEADER_FRAME_MAX_BYTES];
	struct format_file_header header;
	struct format_fault fault;
	ssize_t n = read_at(c, 0, h, sizeof(h));

	if (n < 0)
		return io_error(err, 0);
	switch (format_file_header_decode(h, (size_t)n, &header, &fault)) {
	case CRUMBS_OK:
		break;
	case CRUMBS_ERROR_TRUNCATED:
		return truncated(err, (uint64_t)n);
	case CRUMBS_ERROR_NOT_CAPTURE:
		return set_error(err, CRUMBS_ERROR_NOT_CAPTURE, 0, "not a crumbs capture");
	case CRUMBS_ERROR_VERSION:
		/* At the header's content, which begins with what it is. */
		return set_error(err, CRUMBS_ERROR_VERSION, FORMAT_SKIPPABLE_BYTES,
				 "unsupported version %u.%u (this crumbs reads %u.%u)",
				 header.major, header.minor, CRUMBS_FORMAT_MAJOR,
				 CRUMBS_FORMAT_MINOR);
	default:
		return corrupt(err, 0, "%s", fault.what);
	}
	c->meta.version_major = header.major;
	c->meta.version_minor = header.minor;
	/* Not in the devices' arena, which a rewind resets. */
	c->meta.producer = arena_copy_string(&c->header_arena, header.producer,
					     header.producer_len);
	if (!c->meta.producer)
		return out_of_memory(err);
	c->meta.created_unix_s = header.created_unix_s;
	c->meta.file_bytes = c->size;

	uint64_t chunks_start = header.frame_bytes;
	if (!read_index(c, chunks_start)) {
		enum crumbs_result r = walk_chunks(c, chunks_start, err);
		if (r != CRUMBS_OK)
			return r;
	}
	refresh_meta(c);
	return CRUMBS_OK;
}

static enum crumbs_result open_finish(reader *c, reader **out, struct analyze_error *err)
{
	enum crumbs_result r = open_common(c, err);
	if (r != CRUMBS_OK) {
		reader_free(c);
		return r;
	}
	*out = c;
	return CRUMBS_OK;
}

/* A reader not open yet, with *out and err cleared; NULL, with err
 * filled in, when out of memory. */
static reader *reader_new(reader **out, struct analyze_error *err)
{
	*out = NULL;
	memset(err, 0, sizeof(*err));
	reader *c = calloc(1, sizeof(*c));
	if (!c) {
		out_of_memory(err);
		return NULL;
	}
	c->fd = -1;
	c->read_end = SIZE_MAX;
	return c;
}

/* Frees c, whose file could not be had, saying why (errno). */
static enum crumbs_result open_failed(reader *c, struct analyze_error *err)
{
	char why[128];
	errno_text(errno, why, sizeof(why));
	reader_free(c);
	return set_error(err, CRUMBS_ERROR_IO, 0, "%s", why);
}

enum crumbs_result reader_open_file(const char *path, reader **out,
				    struct analyze_error *err)
{
	struct stat st;
	reader *c = reader_new(out, err);

	if (!c)
		return err->code;
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0 || fstat(c->fd, &st) != 0)
		return open_failed(c, err);
	if (S_ISDIR(st.st_mode)) {
		reader_free(c);
		return set_error(err, CRUMBS_ERROR_IO, 0, "is a directory");
	}
	c->size = (uint64_t)st.st_size;
	return open_finish(c, out, err);
}

enum crumbs_result reader_open_memory(const void *data, size_t size, reader **out,
				      struct analyze_error *err)
{
	reader *c = reader_new(out, err);

	if (!c)
		return err->code;
	c->mem = data ? data : (const unsigned char *)"";
	c->size = data ? size : 0;
	return open_finish(c, out, err);
}

enum crumbs_result reader_clone(const reader *from, reader **out, struct analyze_error *err)
{
	reader *c = reader_new(out, err);

	if (!c)
		return err->code;
	if (from->fd >= 0 && (c->fd = fcntl(from->fd, F_DUPFD_CLOEXEC, 0)) < 0)
		return open_failed(c, err);
	c->mem = from->mem;
	c->size = from->size; /* the same bytes, should the file grow */
	c->skip_scopes = from->skip_scopes;
	c->flat_scopes = from->flat_scopes;
	return open_finish(c, out, err);
}

void reader_free(reader *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	prefetch_stop(c);
	chunk_data_release(&c->main);
	arena_release(&c->header_arena);
	arena_release(&c->frame_arena);
	setup_release(&c->setup);
	vec_release(&c->chunks);
	vec_release(&c->frame_chunks);
	free(c);
}

const struct capture_meta *reader_meta(const reader *c)
{
	return &c->meta;
}

const struct analyze_error *reader_damage(const reader *c)
{
	return &c->damage;
}

uint64_t reader_raw_bytes(const reader *c)
{
	return c->raw_bytes;
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

static enum crumbs_result stop(reader *c, struct analyze_error *err)
{
	c->stopped = true;
	c->stop = *err;
	if (err->code == CRUMBS_ERROR_TRUNCATED || err->code == CRUMBS_ERROR_CORRUPT)
		note_damage(c, err);
	return err->code;
}

/* Decodes the next frame into c->raw. Returns CRUMBS_OK with *got false at
 * the end of the capture. */
static enum crumbs_result next_raw(reader *c, bool *got, struct analyze_error *err)
{
	*got = false;
	if (c->stopped) {
		*err = c->stop;
		return err->code;
	}
	for (;;) {
		if (c->loaded) {
			struct chunk_data *d = &c->main;
			const struct chunk_ref *ref = (const struct chunk_ref *)c->chunks.data + d->cs.index;
			bool have = c->next_frame < d->frames.spans.len;
			if (!have && !d->fail && d->cs.pos < d->cs.len) {
				/* Past what was decoded ahead: one frame at a time. */
				raw_frames_clear(&d->frames);
				c->next_frame = 0;
				have = decode_frame(&c->setup, d);
			}
			if (have) {
				raw_frames_get(&d->frames, c->next_frame++, d->cs.names.data,
					       d->cs.name_lens.data, &c->raw);
				c->frames_read++;
				if (c->frames_read > ref->frames ||
				    (c->frames_read == 1 && c->raw.number != ref->first) ||
				    c->raw.number > ref->last) {
					corrupt(err, d->cs.body_offset,
						"frame %llu is not in the range its chunk header gives",
						(unsigned long long)c->raw.number);
					return stop(c, err);
				}
				*got = true;
				return CRUMBS_OK;
			}
			if (d->fail) {
				records_error(c, d->fail, d->ran_out, d->fail_offset, err);
				return stop(c, err);
			}
			if (ref->partial) {
				truncated(err, c->size);
				return stop(c, err);
			}
			if (c->frames_read != ref->frames || c->raw.number != ref->last) {
				corrupt(err, d->cs.body_offset,
					"chunk holds %u frames, its header says %u",
					c->frames_read, ref->frames);
				return stop(c, err);
			}
			c->loaded = false;
		}
		if (c->next_chunk >= c->read_end || c->next_chunk >= c->chunks.len) {
			if (c->read_end >= c->chunks.len && c->damage.code != CRUMBS_OK) {
				*err = c->damage;
				return stop(c, err);
			}
			return CRUMBS_OK;
		}
		size_t i = c->next_chunk++;
		const struct chunk_ref *ref = (const struct chunk_ref *)c->chunks.data + i;
		enum crumbs_result r = setup_before(c, i, err);
		if (r != CRUMBS_OK)
			return stop(c, err);
		if (ref->type == FORMAT_CHUNK_SETUP) {
			if ((r = apply_setup(c, i, err)) != CRUMBS_OK)
				return stop(c, err);
			c->setup_applied = i + 1;
			continue;
		}
		if ((r = load_chunk(c, i, err)) != CRUMBS_OK)
			return stop(c, err);
	}
}

enum crumbs_result reader_next_frame(reader *c, const struct frame **out,
				     struct analyze_error *err)
{
	struct frame *f;
	enum crumbs_result r;

	*out = NULL;
	memset(err, 0, sizeof(*err));
	if (!c->pending) {
		bool got;
		if ((r = next_raw(c, &got, err)) != CRUMBS_OK || !got)
			return r;
	}
	c->pending = false;
	arena_reset(&c->frame_arena);
	struct model_context ctx = {
		c->setup.gpus.data, (uint32_t)c->setup.gpus.len,
		c->setup.queues.data, (uint32_t)c->setup.queues.len,
		c->setup.samples.data, (uint32_t)c->setup.samples.len,
		c->skip_scopes,
		c->flat_scopes,
	};
	if ((r = model_build(&ctx, &c->raw, &c->frame_arena, &f)) != CRUMBS_OK)
		return out_of_memory(err);
	f->names_epoch = c->names_epoch;
	*out = f;
	return CRUMBS_OK;
}

void reader_skip_scopes(reader *c, bool skip)
{
	c->skip_scopes = skip;
}

void reader_flat_scopes(reader *c, bool flat)
{
	c->flat_scopes = flat;
}

/* Reading from chunk `chunk` on, with the setup of the chunks before it
 * applied again if the setup applied is of later ones. */
static void restart(reader *c, size_t chunk)
{
	if (c->setup_applied > chunk)
		reset_setup(c);
	c->next_chunk = chunk;
	c->read_end = SIZE_MAX;
	c->loaded = false;
	c->pending = false;
	c->stopped = false;
	memset(&c->stop, 0, sizeof(c->stop));
}

enum crumbs_result reader_rewind(reader *c, struct analyze_error *err)
{
	memset(err, 0, sizeof(*err));
	reset_setup(c);
	restart(c, 0);
	return CRUMBS_OK;
}

size_t reader_part_count(const reader *c)
{
	return c->frame_chunks.len;
}

uint64_t reader_part_bytes(const reader *c, size_t k)
{
	const size_t *fc = c->frame_chunks.data;
	const struct chunk_ref *all = c->chunks.data;
	if (k >= c->frame_chunks.len)
		return 0;
	size_t i = fc[k];
	uint64_t end = i + 1 < c->chunks.len ? all[i + 1].offset : c->chunks_end;
	return end > all[i].offset ? end - all[i].offset : 0;
}

size_t reader_part_of(const reader *c, uint64_t number)
{
	const size_t *fc = c->frame_chunks.data;
	const struct chunk_ref *all = c->chunks.data;
	size_t lo = 0, hi = c->frame_chunks.len;
	/* The first whose frames do not all come before `number`. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (all[fc[mid]].last < number)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->frame_chunks.len && all[fc[lo]].first <= number ? lo : c->frame_chunks.len;
}

enum crumbs_result reader_read_parts(reader *c, size_t first, size_t end,
				     struct analyze_error *err)
{
	const size_t *fc = c->frame_chunks.data;
	memset(err, 0, sizeof(*err));
	if (first >= end || end > c->frame_chunks.len)
		return set_error(err, CRUMBS_ERROR_NOT_FOUND, 0, "no such part of the capture");
	restart(c, fc[first]);
	reader_end_parts(c, end);
	return CRUMBS_OK;
}

void reader_end_parts(reader *c, size_t end)
{
	const size_t *fc = c->frame_chunks.data;
	/* Up to the chunk after the part's last frames chunk: setup chunks
	 * after it belong to the next part. */
	if (end > 0 && end <= c->frame_chunks.len)
		c->read_end = end == c->frame_chunks.len ? SIZE_MAX : fc[end - 1] + 1;
}

void reader_prefetch(reader *c, bool on)
{
	c->no_prefetch = !on;
	if (!on)
		prefetch_stop(c);
}

uint32_t reader_part_content_bytes(const reader *c, size_t k)
{
	const size_t *fc = c->frame_chunks.data;
	unsigned char h[FORMAT_CHUNK_FRAME_BYTES];
	struct format_chunk_header header;
	struct format_fault fault;
	if (k >= c->frame_chunks.len)
		return 0;
	const struct chunk_ref *ref = (const struct chunk_ref *)c->chunks.data + fc[k];
	ssize_t n = read_at(c, ref->offset, h, sizeof(h));
	if (n < 0 || format_chunk_header_decode(h, (size_t)n, &header, &fault) != CRUMBS_OK)
		return FORMAT_MAX_CHUNK_BYTES;
	return header.content_bytes;
}

void reader_release_memory(reader *c)
{
	prefetch_stop(c);
	chunk_data_release(&c->main);
	arena_release(&c->frame_arena);
	/* Reading ends, as at the end of the capture. */
	restart(c, c->chunks.len);
}

static enum crumbs_result not_found(reader *c, uint64_t number, struct analyze_error *err)
{
	if (c->meta.frame_count == 0)
		return set_error(err, CRUMBS_ERROR_NOT_FOUND, 0,
				 "frame %llu is not in the capture (it holds no frames)",
				 (unsigned long long)number);
	return set_error(err, CRUMBS_ERROR_NOT_FOUND, 0,
			 "frame %llu is not in the capture (it holds frames %llu to %llu)",
			 (unsigned long long)number, (unsigned long long)c->meta.first_frame,
			 (unsigned long long)c->meta.last_frame);
}

enum crumbs_result reader_seek_frame(reader *c, uint64_t number, struct analyze_error *err)
{
	const size_t *fc = c->frame_chunks.data;
	size_t lo = reader_part_of(c, number);
	bool got;

	memset(err, 0, sizeof(*err));
	if (lo == c->frame_chunks.len)
		return not_found(c, number, err);
	restart(c, fc[lo]);
	for (;;) {
		enum crumbs_result r = next_raw(c, &got, err);
		if (r != CRUMBS_OK)
			return r;
		if (!got || c->raw.number > number || c->main.cs.index != fc[lo])
			return not_found(c, number, err);
		if (c->raw.number == number)
			break;
	}
	c->pending = true;
	return CRUMBS_OK;
}

enum crumbs_result reader_seek_last(reader *c, struct analyze_error *err)
{
	const size_t *fc = c->frame_chunks.data;
	const struct chunk_ref *all = c->chunks.data;
	bool got;

	memset(err, 0, sizeof(*err));
	if (c->frame_chunks.len == 0)
		return set_error(err, CRUMBS_ERROR_NOT_FOUND, 0, "the capture holds no frames");
	size_t last = fc[c->frame_chunks.len - 1];
	if (!all[last].partial)
		return reader_seek_frame(c, all[last].last, err);
	/* A cut chunk: its last whole frame is found by decoding it. Fall back
	 * to the chunk before when none of it decodes. */
	for (size_t k = c->frame_chunks.len; k-- > 0;) {
		bool any = false;
		uint64_t number = 0;
		restart(c, fc[k]);
		for (;;) {
			enum crumbs_result r = next_raw(c, &got, err);
			if (r != CRUMBS_OK || !got || c->main.cs.index != fc[k])
				break;
			any = true;
			number = c->raw.number;
		}
		if (any)
			return reader_seek_frame(c, number, err);
		if (!all[fc[k]].partial)
			break;
	}
	memset(err, 0, sizeof(*err));
	return set_error(err, CRUMBS_ERROR_NOT_FOUND, 0, "no frame of the capture is intact");
}
