/* SPDX-License-Identifier: MIT */
/*
 * writer.c: writes capture files as format/FORMAT.md specifies.
 *
 * Records are encoded into an in-memory chunk as they come; a chunk is
 * compressed and written once it holds enough whole frames, so memory stays
 * bounded however long the run. Devices and queues go to setup chunks.
 */
#include "../include/crumbs_file.h"
#include "format.h"
#include "../util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

/* Writer tuning; the format's own limits are in format.h. */
#define DEFAULT_CHUNK_BYTES (1u << 20)

/* A growable byte buffer. */
struct bytes {
	unsigned char *data;
	size_t len;
	size_t cap;
};

/* The strings of one chunk: ids in order, found by hash. Entries point
 * into the chunk's own buffer by offset, since the buffer moves. */
struct string_entry {
	size_t offset;
	uint32_t len;
	uint32_t hash;
};

struct strings {
	struct string_entry *entries;
	uint32_t count;
	size_t entry_cap;
	uint32_t *slots; /* id + 1, or 0 for empty */
	uint32_t slot_cap;
};

/* One chunk being built. */
struct encoder {
	struct bytes buf;
	struct strings strings;
};

struct writer_queue {
	uint64_t mask;     /* 2^B - 1, or 0 without timestamps */
	uint8_t valid_bits;
	uint64_t base;     /* previous ticks in this chunk */
	uint32_t depth;    /* scopes open in the current frame */
	uint32_t skipped;  /* scopes refused beyond FORMAT_MAX_DEPTH, still open */
};

/* A CPU thread of the open frame. Its open scopes' begins are kept so
 * that an end is never written before its begin. */
struct writer_thread {
	uint32_t tid;
	uint32_t depth;    /* scopes open */
	uint32_t skipped;  /* scopes refused beyond FORMAT_MAX_DEPTH, still open */
	uint64_t *begins;  /* of the open scopes, innermost last */
	uint32_t begin_cap;
};

struct crumbs_writer {
	enum crumbs_result error; /* first failure; sticky */
	/* Vendor counter sets defined (since 1.5): each one's counters, as
	 * a mask; 0: not defined. */
	uint64_t counter_sets[CRUMBS_MAX_COUNTER_SETS + 1];
	uint32_t offered_counters;

	struct file_out file; /* with a path: written under a temporary name */
	int has_file;
	int (*write)(void *user, const void *data, size_t size);
	void *user;
	uint64_t offset;
	uint64_t raw_bytes;

	ZSTD_CCtx *cctx;
	struct bytes compressed;
	uint32_t chunk_bytes;
	int flush_each_frame;

	struct encoder setup;
	struct encoder frames;
	uint32_t frames_in_chunk;
	uint64_t chunk_first_frame;
	uint64_t chunk_last_frame;
	uint64_t cpu_cursor;

	struct format_index_entry *index;
	size_t index_count;
	size_t index_cap;

	uint32_t gpu_count;
	struct writer_queue queues[FORMAT_MAX_QUEUES];
	uint32_t queue_count;

	int in_frame;
	size_t frame_start;   /* offset in frames.buf of the open frame */
	int have_frame;       /* a frame was written before */
	uint64_t last_frame;
	int in_submit;
	int current_queue;    /* -1: none */
	uint32_t frame_skipped;
	uint64_t frame_begin_cpu;
	/* The open frame against the format's limits of a frame: its
	 * records (an open scope or submission counts its end ahead, a
	 * name its STRING record), its scopes, events and leaf events, and
	 * the bytes of their names. */
	uint32_t frame_records;
	uint32_t frame_nodes;
	uint64_t frame_name_bytes;

	/* CPU threads of the open frame, in order of first selection; their
	 * begins' memory is kept from frame to frame. */
	struct writer_thread *threads;
	uint32_t thread_count;     /* of the open frame */
	int current_thread;        /* -1: none */
	/* Strings of the open frame's task timelines and of its timeline
	 * frames' timelines: what bounds their counts. */
	uint32_t timelines[FORMAT_MAX_TIMELINES];
	uint32_t timeline_count;
	uint32_t mark_timelines[FORMAT_MAX_TIMELINES];
	/* The heaps the open frame has MEMORY records of, a bit a heap. */
	uint16_t memory_heaps[FORMAT_MAX_GPUS];
	uint32_t mark_timeline_count;

	struct bytes scratch; /* sanitized names */
};

/* ------------------------------------------------------------------------ */
/* Encoding                                                                 */
/* ------------------------------------------------------------------------ */

static int bytes_reserve(struct bytes *b, size_t extra)
{
	if (extra > SIZE_MAX - b->len ||
	    !array_room_from((void **)&b->data, &b->cap, b->len + extra, 1, 4096))
		return -1;
	return 0;
}

static void bytes_release(struct bytes *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* The put_* helpers assume space was reserved; records reserve their
 * worst case first, so one check covers a whole record. */
static void put_u8(struct bytes *b, unsigned v)
{
	b->data[b->len++] = (unsigned char)v;
}

static void put_varint(struct bytes *b, uint64_t v)
{
	while (v >= 0x80) {
		b->data[b->len++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b->data[b->len++] = (unsigned char)v;
}

static void put_svarint(struct bytes *b, int64_t v)
{
	uint64_t u = (uint64_t)v;
	put_varint(b, (u << 1) ^ (0 - (u >> 63)));
}

static void put_raw(struct bytes *b, const void *data, size_t size)
{
	memcpy(b->data + b->len, data, size);
	b->len += size;
}

/* Worst-case sizes for reserving. */
#define VARINT_MAX 10
#define RECORD_MAX (1 + 16 * VARINT_MAX + 8)

/* ------------------------------------------------------------------------ */
/* Strings                                                                  */
/* ------------------------------------------------------------------------ */

static uint32_t hash_bytes(const unsigned char *p, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static void strings_reset(struct strings *s)
{
	s->count = 0;
	if (s->slots)
		memset(s->slots, 0, s->slot_cap * sizeof(*s->slots));
}

static void strings_release(struct strings *s)
{
	free(s->entries);
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

static int strings_grow(struct strings *s)
{
	uint32_t cap = s->slot_cap ? s->slot_cap * 2 : 256;
	uint32_t *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (uint32_t id = 0; id < s->count; id++) {
		uint32_t i = s->entries[id].hash & (cap - 1);
		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = id + 1;
	}
	free(s->slots);
	s->slots = slots;
	s->slot_cap = cap;
	return 0;
}

/* Returns the chunk-local id of the name, writing a STRING record the
 * first time the chunk sees it; the name is already valid UTF-8. */
static enum crumbs_result intern(struct encoder *e, const unsigned char *name,
				 size_t len, uint32_t *id)
{
	struct strings *s = &e->strings;
	uint32_t h = hash_bytes(name, len);

	if (s->slot_cap) {
		uint32_t i = h & (s->slot_cap - 1);
		for (; s->slots[i]; i = (i + 1) & (s->slot_cap - 1)) {
			const struct string_entry *en = &s->entries[s->slots[i] - 1];
			if (en->hash == h && en->len == len &&
			    memcmp(e->buf.data + en->offset, name, len) == 0) {
				*id = s->slots[i] - 1;
				return CRUMBS_OK;
			}
		}
	}
	if ((uint64_t)(s->count + 1) * 2 > s->slot_cap && strings_grow(s))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	if (!array_room((void **)&s->entries, &s->entry_cap, (size_t)s->count + 1,
			sizeof(*s->entries)))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	if (bytes_reserve(&e->buf, 1 + VARINT_MAX + len))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	put_u8(&e->buf, FORMAT_TAG_STRING);
	put_varint(&e->buf, len);
	s->entries[s->count] = (struct string_entry){ e->buf.len, (uint32_t)len, h };
	put_raw(&e->buf, name, len);

	uint32_t i = h & (s->slot_cap - 1);
	while (s->slots[i])
		i = (i + 1) & (s->slot_cap - 1);
	s->slots[i] = s->count + 1;
	*id = s->count++;
	return CRUMBS_OK;
}

/* Copies name into w->scratch as valid UTF-8 of at most FORMAT_MAX_STRING
 * bytes, with U+FFFD for every byte that starts no valid sequence, cut at a
 * character boundary. */
static enum crumbs_result sanitize(crumbs_writer *w, const char *name,
				   const unsigned char **out, size_t *out_len)
{
	static const unsigned char replacement[3] = { 0xEF, 0xBF, 0xBD };
	const unsigned char *p = (const unsigned char *)(name ? name : "");
	size_t len = strlen((const char *)p);
	struct bytes *s = &w->scratch;

	s->len = 0;
	if (bytes_reserve(s, FORMAT_MAX_STRING + 4))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < len;) {
		size_t n = crumbs_utf8_sequence(p + i, len - i);
		const unsigned char *src = n ? p + i : replacement;
		size_t src_len = n ? n : 3;
		if (s->len + src_len > FORMAT_MAX_STRING)
			break;
		memcpy(s->data + s->len, src, src_len);
		s->len += src_len;
		i += n ? n : 1;
	}
	*out = s->data;
	*out_len = s->len;
	return CRUMBS_OK;
}

static enum crumbs_result intern_name(crumbs_writer *w, struct encoder *e,
				      const char *name, uint32_t *id)
{
	const unsigned char *p;
	size_t len;
	enum crumbs_result r = sanitize(w, name, &p, &len);
	if (r != CRUMBS_OK)
		return r;
	return intern(e, p, len, id);
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

static enum crumbs_result emit(crumbs_writer *w, const void *data, size_t size)
{
	if (size == 0)
		return CRUMBS_OK;
	if (w->write) {
		if (w->write(w->user, data, size) != 0)
			return CRUMBS_ERROR_IO;
	} else if (file_write(&w->file, data, size) != 0) {
		return CRUMBS_ERROR_IO;
	}
	w->offset += size;
	return CRUMBS_OK;
}

static enum crumbs_result index_add(crumbs_writer *w, struct format_index_entry e)
{
	if (!array_room((void **)&w->index, &w->index_cap, w->index_count + 1, sizeof(*w->index)))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	w->index[w->index_count++] = e;
	return CRUMBS_OK;
}

/* Compresses the first `len` bytes of e's buffer and writes them as one
 * chunk. */
static enum crumbs_result write_chunk(crumbs_writer *w, struct encoder *e,
				      size_t len, uint8_t type,
				      uint32_t frame_count, uint64_t first,
				      uint64_t last)
{
	enum crumbs_result r;
	size_t bound = ZSTD_compressBound(len);

	if (len == 0)
		return CRUMBS_OK;
	if (len > FORMAT_MAX_CHUNK_BYTES)
		return CRUMBS_ERROR_LIMIT;
	w->compressed.len = 0;
	if (bytes_reserve(&w->compressed, bound))
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	size_t c = ZSTD_compress2(w->cctx, w->compressed.data, bound, e->buf.data, len);
	if (ZSTD_isError(c) || c > UINT32_MAX)
		return CRUMBS_ERROR_COMPRESSION;

	unsigned char h[FORMAT_CHUNK_FRAME_BYTES];
	format_chunk_header_encode(h, &(struct format_chunk_header){
		.type = type,
		.body_bytes = (uint32_t)c,
		.content_bytes = (uint32_t)len,
		.frame_count = frame_count,
		.first_frame = first,
		.last_frame = last,
		.body_crc = crumbs_crc32c(0, w->compressed.data, c),
	});

	struct format_index_entry entry = { w->offset, first, last, frame_count, type };
	if ((r = index_add(w, entry)) != CRUMBS_OK)
		return r;
	if ((r = emit(w, h, sizeof(h))) != CRUMBS_OK ||
	    (r = emit(w, w->compressed.data, c)) != CRUMBS_OK)
		return r;
	w->raw_bytes += len;
	return CRUMBS_OK;
}

static void encoder_reset(struct encoder *e)
{
	e->buf.len = 0;
	strings_reset(&e->strings);
}

static void encoder_release(struct encoder *e)
{
	bytes_release(&e->buf);
	strings_release(&e->strings);
}

/* Writes the frames collected so far (not an open frame: callers flush
 * only between frames) and starts a new chunk. */
static enum crumbs_result flush_frames(crumbs_writer *w)
{
	enum crumbs_result r = CRUMBS_OK;
	if (w->frames_in_chunk > 0)
		r = write_chunk(w, &w->frames, w->frames.buf.len, FORMAT_CHUNK_FRAMES,
				w->frames_in_chunk, w->chunk_first_frame,
				w->chunk_last_frame);
	encoder_reset(&w->frames);
	w->frames_in_chunk = 0;
	w->cpu_cursor = 0;
	for (uint32_t q = 0; q < w->queue_count; q++)
		w->queues[q].base = 0;
	return r;
}

static enum crumbs_result flush_setup(crumbs_writer *w)
{
	enum crumbs_result r = write_chunk(w, &w->setup, w->setup.buf.len,
					   FORMAT_CHUNK_SETUP, 0, 0, 0);
	encoder_reset(&w->setup);
	return r;
}

/* Records the first error and returns it, so every entry point can end
 * with `return fail(w, r)`. */
static enum crumbs_result fail(crumbs_writer *w, enum crumbs_result r)
{
	if (r != CRUMBS_OK && w->error == CRUMBS_OK &&
	    r != CRUMBS_ERROR_INVALID_ARGUMENT && r != CRUMBS_ERROR_BAD_STATE &&
	    r != CRUMBS_ERROR_LIMIT)
		w->error = r; /* misuse is the caller's to handle; I/O is fatal */
	return r;
}

/* ------------------------------------------------------------------------ */
/* Open and close                                                           */
/* ------------------------------------------------------------------------ */

enum crumbs_result crumbs_writer_open(const struct crumbs_writer_desc *desc,
				      crumbs_writer **out)
{
	enum crumbs_result r = CRUMBS_OK;
	crumbs_writer *w = NULL;

	*out = NULL;
	if (!desc || (!desc->path == !desc->write))
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	/* A chunk is flushed once it passes chunk_bytes, so keeping this well
	 * below the format's limit leaves room for any sane frame after it. */
	if (desc->chunk_bytes > FORMAT_MAX_CHUNK_BYTES / 4)
		return CRUMBS_ERROR_INVALID_ARGUMENT;

	w = calloc(1, sizeof(*w));
	if (!w)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	w->current_queue = -1;
	w->current_thread = -1;
	w->chunk_bytes = desc->chunk_bytes ? desc->chunk_bytes : DEFAULT_CHUNK_BYTES;
	w->flush_each_frame = desc->flush_each_frame;
	w->write = desc->write;
	w->user = desc->user;

	w->cctx = ZSTD_createCCtx();
	if (!w->cctx) {
		r = CRUMBS_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	int level = desc->compression_level ? desc->compression_level : 3;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1))) {
		r = CRUMBS_ERROR_INVALID_ARGUMENT;
		goto out;
	}

	/* A random temporary name beside the file, created, never
	 * followed (util/file.c), renamed over the path at the end. */
	if (desc->path) {
		if (file_create(&w->file, desc->path, FILE_REPLACE) != 0) {
			r = CRUMBS_ERROR_IO;
			goto out;
		}
		w->has_file = 1;
	}

	/* The header. */
	{
		const unsigned char *producer;
		size_t plen;
		if ((r = sanitize(w, desc->producer, &producer, &plen)) != CRUMBS_OK)
			goto out;
		if (plen > FORMAT_MAX_PRODUCER)
			plen = FORMAT_MAX_PRODUCER;
		while (plen > 0 && plen < w->scratch.len && (producer[plen] & 0xC0) == 0x80)
			plen--; /* never cut inside a character */
		unsigned char h[FORMAT_HEADER_FRAME_MAX_BYTES];
		uint64_t created = desc->created_unix_s == 0 ? (uint64_t)time(NULL) :
				   desc->created_unix_s == CRUMBS_CREATED_UNKNOWN ? 0 :
				   desc->created_unix_s;
		size_t size = format_file_header_encode(h, &(struct format_file_header){
			.major = CRUMBS_FORMAT_MAJOR,
			.minor = CRUMBS_FORMAT_MINOR,
			.created_unix_s = created,
			.producer_len = (uint32_t)plen,
			.producer = producer,
		});
		if ((r = emit(w, h, size)) != CRUMBS_OK)
			goto out;
	}
out:
	if (r != CRUMBS_OK) {
		crumbs_writer_free(w);
		return r;
	}
	*out = w;
	return CRUMBS_OK;
}

static enum crumbs_result write_index(crumbs_writer *w)
{
	uint64_t size = format_index_frame_bytes(w->index_count);
	if (size > UINT32_MAX)
		return CRUMBS_ERROR_LIMIT;
	unsigned char *p = malloc((size_t)size);
	if (!p)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	format_index_encode(p, w->index, (uint32_t)w->index_count);
	enum crumbs_result r = emit(w, p, (size_t)size);
	free(p);
	return r;
}

enum crumbs_result crumbs_writer_flush(crumbs_writer *w)
{
	if (!w)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (w->error)
		return w->error;
	if (w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	/* The frames first: those ended use only the devices before them. */
	enum crumbs_result r = flush_frames(w);
	if (r == CRUMBS_OK)
		r = flush_setup(w);
	return fail(w, r);
}

enum crumbs_result crumbs_writer_close(crumbs_writer *w)
{
	enum crumbs_result r;

	if (!w)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	r = w->error;
	if (w->in_frame) {
		/* The unfinished frame is dropped; its strings may stay, which
		 * the format allows. */
		w->frames.buf.len = w->frame_start;
		w->in_frame = 0;
	}
	if (r == CRUMBS_OK)
		r = flush_frames(w);
	if (r == CRUMBS_OK)
		r = flush_setup(w);
	if (r == CRUMBS_OK)
		r = write_index(w);
	if (w->has_file) {
		if (r == CRUMBS_OK && file_finish(&w->file) != 0)
			r = CRUMBS_ERROR_IO;
		file_close(&w->file); /* the temporary is removed on failure */
		w->has_file = 0;
	}
	crumbs_writer_free(w);
	return r;
}

void crumbs_writer_free(crumbs_writer *w)
{
	if (!w)
		return;
	if (w->has_file)
		file_close(&w->file); /* keeps errno */
	ZSTD_freeCCtx(w->cctx);
	bytes_release(&w->compressed);
	bytes_release(&w->scratch);
	encoder_release(&w->setup);
	encoder_release(&w->frames);
	free(w->index);
	if (w->threads)
		for (uint32_t i = 0; i < FORMAT_MAX_CPU_THREADS; i++)
			free(w->threads[i].begins);
	free(w->threads);
	free(w);
}

void crumbs_writer_sizes(const crumbs_writer *w, uint64_t *file_bytes,
			 uint64_t *raw_bytes)
{
	if (file_bytes)
		*file_bytes = w->offset;
	if (raw_bytes)
		*raw_bytes = w->raw_bytes;
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

enum crumbs_result crumbs_writer_add_gpu(crumbs_writer *w,
					 const struct crumbs_gpu_desc *gpu,
					 uint32_t *gpu_index)
{
	enum crumbs_result r;
	uint32_t name, driver;

	if (w->error)
		return w->error;
	if (!gpu)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if (w->gpu_count >= FORMAT_MAX_GPUS)
		return CRUMBS_ERROR_LIMIT;
	if ((r = intern_name(w, &w->setup, gpu->name, &name)) != CRUMBS_OK ||
	    (r = intern_name(w, &w->setup, gpu->driver_name, &driver)) != CRUMBS_OK)
		return fail(w, r);
	if (bytes_reserve(&w->setup.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	struct bytes *b = &w->setup.buf;
	put_u8(b, FORMAT_TAG_GPU);
	put_varint(b, name);
	put_varint(b, driver);
	put_varint(b, gpu->vendor_id);
	put_varint(b, gpu->device_id);
	put_varint(b, gpu->driver_version);
	put_varint(b, gpu->api_version);
	if (gpu_index)
		*gpu_index = w->gpu_count;
	w->gpu_count++;
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_add_queue(crumbs_writer *w,
					   const struct crumbs_queue_desc *queue,
					   uint32_t *queue_index)
{
	unsigned char period[4];
	float p;

	if (w->error)
		return w->error;
	if (!queue)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if (w->queue_count >= FORMAT_MAX_QUEUES)
		return CRUMBS_ERROR_LIMIT;
	p = queue->timestamp_period;
	if (queue->gpu >= w->gpu_count || queue->timestamp_valid_bits > FORMAT_MAX_VALID_BITS ||
	    (queue->flags & ~FORMAT_QUEUE_FLAGS_KNOWN) || !(p > 0.0f && p <= FORMAT_MAX_PERIOD_NS))
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (bytes_reserve(&w->setup.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	struct bytes *b = &w->setup.buf;
	put_u8(b, FORMAT_TAG_QUEUE);
	put_varint(b, queue->gpu);
	put_varint(b, queue->family);
	put_varint(b, queue->index);
	put_varint(b, queue->flags);
	uint32_t bits;
	memcpy(&bits, &p, 4);
	format_put32(period, bits);
	put_raw(b, period, 4);
	put_u8(b, queue->timestamp_valid_bits);

	struct writer_queue *q = &w->queues[w->queue_count];
	memset(q, 0, sizeof(*q));
	q->valid_bits = (uint8_t)queue->timestamp_valid_bits;
	q->mask = q->valid_bits == 0 ? 0 :
		  q->valid_bits >= 64 ? UINT64_MAX :
		  ((uint64_t)1 << q->valid_bits) - 1;
	if (queue_index)
		*queue_index = w->queue_count;
	w->queue_count++;
	return CRUMBS_OK;
}

/* Counts n records of the open frame that cannot be left out; a frame
 * past the limit is dropped at its end. */
static void frame_records_add(crumbs_writer *w, uint64_t n)
{
	uint64_t total = w->frame_records + n;
	w->frame_records = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

/* Whether `records` more records fit in the open frame: those that may
 * be left out (scopes, events, leaf events, counts, ends with nothing
 * open) are, when they would pass the frame's limits. */
static int frame_room(const crumbs_writer *w, uint32_t records)
{
	return w->frame_records <= FORMAT_MAX_FRAME_RECORDS &&
	       records <= FORMAT_MAX_FRAME_RECORDS - w->frame_records;
}

/* Whether a scope, an event or a leaf event of `records` records (its
 * end and its name's STRING record among them) and a name of len bytes
 * fits in the open frame. */
static int node_room(const crumbs_writer *w, uint32_t records, size_t len)
{
	return w->frame_nodes < FORMAT_MAX_FRAME_NODES &&
	       len <= FORMAT_MAX_FRAME_NAME_BYTES - w->frame_name_bytes && frame_room(w, records);
}

/* Interns the name of a scope, an event or a leaf event that takes
 * `records` records beside its name's STRING record, and counts them;
 * CRUMBS_ERROR_LIMIT, counting nothing, when they would pass the
 * frame's limits. */
static enum crumbs_result intern_node(crumbs_writer *w, const char *name, uint32_t records,
				      uint32_t *id)
{
	const unsigned char *p;
	size_t len;
	enum crumbs_result r = sanitize(w, name, &p, &len);
	if (r != CRUMBS_OK)
		return r;
	if (!node_room(w, records + 1, len))
		return CRUMBS_ERROR_LIMIT;
	uint32_t strings = w->frames.strings.count;
	if ((r = intern(&w->frames, p, len, id)) != CRUMBS_OK)
		return r;
	w->frame_records += records + (w->frames.strings.count - strings);
	w->frame_nodes++;
	w->frame_name_bytes += len;
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_calibration(crumbs_writer *w, uint32_t gpu,
					     uint64_t gpu_ticks, uint64_t cpu_ns,
					     uint64_t deviation_ns)
{
	if (w->error)
		return w->error;
	if (gpu >= w->gpu_count)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (w->in_submit)
		return CRUMBS_ERROR_BAD_STATE;
	struct bytes *b = w->in_frame ? &w->frames.buf : &w->setup.buf;
	if (bytes_reserve(b, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	if (w->in_frame)
		frame_records_add(w, 1);
	put_u8(b, FORMAT_TAG_CALIBRATION);
	put_varint(b, gpu);
	put_varint(b, gpu_ticks);
	put_varint(b, cpu_ns);
	put_varint(b, deviation_ns);
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

static void put_cpu(crumbs_writer *w, uint64_t cpu_ns)
{
	put_svarint(&w->frames.buf, (int64_t)(cpu_ns - w->cpu_cursor));
	w->cpu_cursor = cpu_ns;
}

static void put_ticks(crumbs_writer *w, struct writer_queue *q, uint64_t ticks)
{
	ticks &= q->mask;
	put_svarint(&w->frames.buf, crumbs_ticks_delta(ticks, q->base, q->valid_bits));
	q->base = ticks;
}

enum crumbs_result crumbs_writer_frame_begin(crumbs_writer *w,
					     uint64_t frame_number,
					     uint64_t cpu_ns)
{
	enum crumbs_result r;

	if (w->error)
		return w->error;
	if (w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if ((w->have_frame && frame_number <= w->last_frame) || cpu_ns > INT64_MAX)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (w->setup.buf.len > 0) {
		/* Devices added since the last chunk must precede the frames
		 * that use them. */
		if ((r = flush_frames(w)) != CRUMBS_OK || (r = flush_setup(w)) != CRUMBS_OK)
			return fail(w, r);
	}
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	w->frame_start = w->frames.buf.len;
	put_u8(&w->frames.buf, FORMAT_TAG_FRAME_BEGIN);
	if (w->frames_in_chunk == 0) {
		put_varint(&w->frames.buf, frame_number);
		w->chunk_first_frame = frame_number;
	} else {
		put_varint(&w->frames.buf, frame_number - w->chunk_last_frame - 1);
	}
	put_cpu(w, cpu_ns);
	w->frame_begin_cpu = cpu_ns;
	w->in_frame = 1;
	w->current_queue = -1;
	w->current_thread = -1;
	w->thread_count = 0;
	w->timeline_count = 0;
	w->mark_timeline_count = 0;
	memset(w->memory_heaps, 0, sizeof(w->memory_heaps));
	w->frame_skipped = 0;
	w->frame_records = 0;
	w->frame_nodes = 0;
	w->frame_name_bytes = 0;
	w->last_frame = frame_number;
	w->have_frame = 1;
	for (uint32_t q = 0; q < w->queue_count; q++) {
		w->queues[q].depth = 0;
		w->queues[q].skipped = 0;
	}
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_frame_end(crumbs_writer *w, uint64_t cpu_ns,
					   uint32_t flags,
					   uint32_t dropped_scopes)
{
	if (w->error)
		return w->error;
	if (!w->in_frame || w->in_submit)
		return CRUMBS_ERROR_BAD_STATE;
	if (flags & ~FORMAT_FRAME_FLAGS_KNOWN)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	if (w->frame_skipped) {
		flags |= CRUMBS_FRAME_SCOPES_DROPPED;
		dropped_scopes = dropped_scopes > UINT32_MAX - w->frame_skipped ?
				 UINT32_MAX : dropped_scopes + w->frame_skipped;
	}
	put_u8(&w->frames.buf, FORMAT_TAG_FRAME_END);
	/* An end before the begin would not decode as a frame. */
	put_cpu(w, cpu_ns > w->frame_begin_cpu && cpu_ns <= INT64_MAX ?
		   cpu_ns : w->frame_begin_cpu);
	put_varint(&w->frames.buf, flags);
	put_varint(&w->frames.buf, dropped_scopes);
	w->in_frame = 0;
	if (w->frames.buf.len > FORMAT_MAX_CHUNK_BYTES ||
	    w->frame_records > FORMAT_MAX_FRAME_RECORDS) {
		/* One frame larger than a chunk, or than a frame, may be:
		 * drop it rather than write a file no reader accepts. The
		 * flush also forgets the strings and tick bases the dropped
		 * frame left behind. */
		w->frames.buf.len = w->frame_start;
		enum crumbs_result r = flush_frames(w);
		return r != CRUMBS_OK ? fail(w, r) : CRUMBS_ERROR_LIMIT;
	}
	w->frames_in_chunk++;
	w->chunk_last_frame = w->last_frame;
	/* A frame adds fewer strings than it has records: with half the
	 * chunk's strings left, the next frame fits whatever it holds. */
	if (w->flush_each_frame || w->frames.buf.len >= w->chunk_bytes ||
	    w->frames.strings.count >= FORMAT_MAX_CHUNK_STRINGS / 2)
		return fail(w, flush_frames(w));
	return CRUMBS_OK;
}

static struct writer_queue *queue_of(crumbs_writer *w, uint32_t queue)
{
	return queue < w->queue_count ? &w->queues[queue] : NULL;
}

enum crumbs_result crumbs_writer_queue_ready(crumbs_writer *w, uint32_t queue,
					     uint64_t gpu_ticks)
{
	struct writer_queue *q = queue_of(w, queue);

	if (w->error)
		return w->error;
	if (!q)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (!w->in_frame || w->in_submit)
		return CRUMBS_ERROR_BAD_STATE;
	if (q->mask == 0 || gpu_ticks == CRUMBS_NO_TICKS)
		return CRUMBS_OK;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	frame_records_add(w, 1);
	put_u8(&w->frames.buf, FORMAT_TAG_QUEUE_READY);
	put_varint(&w->frames.buf, queue);
	put_ticks(w, q, gpu_ticks);
	return CRUMBS_OK;
}

static void put_semaphore_ops(struct bytes *b, const struct crumbs_semaphore_op *ops,
			      uint32_t count)
{
	put_varint(b, count);
	for (uint32_t i = 0; i < count; i++) {
		put_varint(b, ops[i].semaphore);
		put_varint(b, ops[i].value);
	}
}

enum crumbs_result crumbs_writer_submit_begin(crumbs_writer *w,
					      const struct crumbs_submit_desc *s)
{
	struct writer_queue *q;

	if (w->error)
		return w->error;
	if (!s || !(q = queue_of(w, s->queue)) || s->cpu_ns > INT64_MAX ||
	    (s->wait_count && !s->waits) || (s->signal_count && !s->signals))
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (!w->in_frame || w->in_submit)
		return CRUMBS_ERROR_BAD_STATE;
	if (s->wait_count > FORMAT_MAX_SEMAPHORE_OPS || s->signal_count > FORMAT_MAX_SEMAPHORE_OPS)
		return CRUMBS_ERROR_LIMIT;
	size_t need = RECORD_MAX + 2 * VARINT_MAX * ((size_t)s->wait_count + s->signal_count);
	if (bytes_reserve(&w->frames.buf, need))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	int ticks = q->mask != 0 && s->gpu_ticks != CRUMBS_NO_TICKS;
	/* Its operations, and its SUBMIT_END ahead. */
	frame_records_add(w, 2 + (uint64_t)s->wait_count + s->signal_count);
	put_u8(&w->frames.buf, ticks ? FORMAT_TAG_SUBMIT : FORMAT_TAG_SUBMIT_NO_TICKS);
	put_varint(&w->frames.buf, s->queue);
	put_cpu(w, s->cpu_ns);
	if (ticks)
		put_ticks(w, q, s->gpu_ticks);
	put_semaphore_ops(&w->frames.buf, s->waits, s->wait_count);
	put_semaphore_ops(&w->frames.buf, s->signals, s->signal_count);
	w->in_submit = 1;
	w->current_queue = (int)s->queue;
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_submit_end(crumbs_writer *w, uint64_t gpu_ticks)
{
	if (w->error)
		return w->error;
	if (!w->in_submit)
		return CRUMBS_ERROR_BAD_STATE;
	struct writer_queue *q = &w->queues[w->current_queue];
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	int ticks = q->mask != 0 && gpu_ticks != CRUMBS_NO_TICKS;
	put_u8(&w->frames.buf, ticks ? FORMAT_TAG_SUBMIT_END : FORMAT_TAG_SUBMIT_END_NO_TICKS);
	if (ticks)
		put_ticks(w, q, gpu_ticks);
	w->in_submit = 0;
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_unrecorded(crumbs_writer *w, uint32_t count)
{
	if (w->error)
		return w->error;
	if (!w->in_submit)
		return CRUMBS_ERROR_BAD_STATE;
	if (count == 0)
		return CRUMBS_OK;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	put_u8(&w->frames.buf, FORMAT_TAG_UNRECORDED);
	put_varint(&w->frames.buf, count);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_host_signal(crumbs_writer *w,
					     uint32_t semaphore,
					     uint64_t value, uint64_t cpu_ns)
{
	if (w->error)
		return w->error;
	if (cpu_ns > INT64_MAX)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (!w->in_frame || w->in_submit)
		return CRUMBS_ERROR_BAD_STATE;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	frame_records_add(w, 1);
	put_u8(&w->frames.buf, FORMAT_TAG_HOST_SIGNAL);
	put_varint(&w->frames.buf, semaphore);
	put_varint(&w->frames.buf, value);
	put_cpu(w, cpu_ns);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_select_queue(crumbs_writer *w, uint32_t queue)
{
	if (w->error)
		return w->error;
	if (!queue_of(w, queue))
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (!w->in_frame || w->in_submit)
		return CRUMBS_ERROR_BAD_STATE;
	if ((int)queue == w->current_queue)
		return CRUMBS_OK;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	frame_records_add(w, 1);
	put_u8(&w->frames.buf, FORMAT_TAG_SELECT_QUEUE);
	put_varint(&w->frames.buf, queue);
	w->current_queue = (int)queue;
	return CRUMBS_OK;
}

/*
 * Checks shared by everything that records on the current queue. Returns
 * the queue, and in *ticks whether a timestamp will be written: ticks
 * exist only inside a submission on a queue that has them.
 */
static enum crumbs_result scope_target(crumbs_writer *w, uint64_t gpu_ticks,
				       struct writer_queue **out, int *ticks)
{
	if (w->error)
		return w->error;
	if (!w->in_frame || w->current_queue < 0)
		return CRUMBS_ERROR_BAD_STATE;
	if (gpu_ticks != CRUMBS_NO_TICKS && !w->in_submit)
		return CRUMBS_ERROR_BAD_STATE;
	*out = &w->queues[w->current_queue];
	*ticks = gpu_ticks != CRUMBS_NO_TICKS && (*out)->mask != 0;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	return CRUMBS_OK;
}

/* Opens a scope or an event; tag_ticks/tag_plain are the record's two
 * forms, kind is written when not a scope. */
static enum crumbs_result open_scope(crumbs_writer *w, unsigned tag_ticks,
				     unsigned tag_plain, int kind,
				     const char *name, uint64_t gpu_ticks)
{
	struct writer_queue *q;
	int ticks;
	uint32_t id;
	enum crumbs_result r = scope_target(w, gpu_ticks, &q, &ticks);

	if (r != CRUMBS_OK)
		return r;
	/* Its end is counted ahead. */
	if (q->depth >= FORMAT_MAX_DEPTH ||
	    (r = intern_node(w, name, 2, &id)) == CRUMBS_ERROR_LIMIT) {
		/* Too deep, or past the frame's limits, to record: remember
		 * it so that its end is swallowed too, and count it as
		 * dropped. */
		q->skipped++;
		w->frame_skipped++;
		return CRUMBS_ERROR_LIMIT;
	}
	if (r != CRUMBS_OK)
		return fail(w, r);
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	put_u8(&w->frames.buf, ticks ? tag_ticks : tag_plain);
	if (kind >= 0)
		put_varint(&w->frames.buf, (uint64_t)kind);
	put_varint(&w->frames.buf, id);
	if (ticks)
		put_ticks(w, q, gpu_ticks);
	q->depth++;
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_scope_begin(crumbs_writer *w, const char *name,
					     unsigned level, uint64_t gpu_ticks)
{
	if (level > CRUMBS_DETAIL_MAX)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	return open_scope(w, FORMAT_TAG_SCOPE_BEGIN + level, FORMAT_TAG_SCOPE_BEGIN_NO_TICKS + level,
			  -1, name, gpu_ticks);
}

enum crumbs_result crumbs_writer_event_begin(crumbs_writer *w,
					     enum crumbs_event_kind kind,
					     const char *name, uint64_t gpu_ticks)
{
	if (kind != CRUMBS_EVENT_RENDER_PASS && kind != CRUMBS_EVENT_OTHER)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	return open_scope(w, FORMAT_TAG_EVENT_BEGIN, FORMAT_TAG_EVENT_BEGIN_NO_TICKS, (int)kind,
			  name ? name : crumbs_event_kind_name(kind), gpu_ticks);
}

enum crumbs_result crumbs_writer_scope_end(crumbs_writer *w, uint64_t gpu_ticks)
{
	struct writer_queue *q;
	int ticks;
	enum crumbs_result r = scope_target(w, gpu_ticks, &q, &ticks);

	if (r != CRUMBS_OK)
		return r;
	if (q->skipped) {
		q->skipped--;
		return CRUMBS_OK;
	}
	if (!q->depth) {
		/* An end with nothing open: kept while the frame has room. */
		if (!frame_room(w, 1))
			return CRUMBS_ERROR_LIMIT;
		w->frame_records++;
	}
	put_u8(&w->frames.buf, ticks ? FORMAT_TAG_SCOPE_END : FORMAT_TAG_SCOPE_END_NO_TICKS);
	if (ticks)
		put_ticks(w, q, gpu_ticks);
	if (q->depth)
		q->depth--;
	return CRUMBS_OK;
}

const char *crumbs_event_kind_name(enum crumbs_event_kind kind)
{
	static const char *const names[CRUMBS_EVENT_KIND_COUNT] = {
		[CRUMBS_EVENT_SCOPE] = "Scope",
		[CRUMBS_EVENT_RENDER_PASS] = "Render Pass",
		[CRUMBS_EVENT_DRAW] = "Draw",
		[CRUMBS_EVENT_DISPATCH] = "Dispatch",
		[CRUMBS_EVENT_COPY] = "Copy",
		[CRUMBS_EVENT_BLIT] = "Blit",
		[CRUMBS_EVENT_CLEAR] = "Clear",
		[CRUMBS_EVENT_RESOLVE] = "Resolve",
		[CRUMBS_EVENT_TRACE_RAYS] = "Trace Rays",
		[CRUMBS_EVENT_OTHER] = "Event",
	};
	return (unsigned)kind < CRUMBS_EVENT_KIND_COUNT ? names[kind] : "Event";
}

/* A count mask (bits 0-3 present, 4-7 unknown) and the present counts. */
static void put_counts(struct bytes *b, const uint64_t counts[4])
{
	unsigned mask = 0;
	for (int i = 0; i < 4; i++) {
		if (counts[i] == CRUMBS_COUNT_UNKNOWN)
			mask |= 0x10u << i;
		else if (counts[i] != 0)
			mask |= 1u << i;
	}
	put_u8(b, mask);
	for (int i = 0; i < 4; i++)
		if (mask & (1u << i))
			put_varint(b, counts[i]);
}

enum crumbs_result crumbs_writer_counts(crumbs_writer *w, uint64_t draws, uint64_t dispatches,
					uint64_t prims, uint64_t verts)
{
	struct writer_queue *q;
	int ticks;
	enum crumbs_result r = scope_target(w, CRUMBS_NO_TICKS, &q, &ticks);
	if (r != CRUMBS_OK)
		return r;
	const uint64_t counts[4] = { draws, dispatches, prims, verts };
	if (!frame_room(w, 1))
		return CRUMBS_ERROR_LIMIT;
	w->frame_records++;
	put_u8(&w->frames.buf, FORMAT_TAG_COUNTS);
	put_counts(&w->frames.buf, counts);
	return CRUMBS_OK;
}

/* The counters of `set` (the pipeline statistics' or a vendor set) in
 * mask, values[i] for bit i, whose mask the caller checked. */
static enum crumbs_result counters_record(crumbs_writer *w, int leaf, uint32_t set, uint64_t mask,
					  const uint64_t *values)
{
	struct writer_queue *q;
	int ticks;
	for (uint32_t i = 0; i < 64; i++)
		if ((mask >> i & 1) && values[i] > (uint64_t)INT64_MAX)
			return CRUMBS_ERROR_INVALID_ARGUMENT;
	enum crumbs_result r = scope_target(w, CRUMBS_NO_TICKS, &q, &ticks);
	if (r != CRUMBS_OK || !mask)
		return r;
	/* Each value is one more record, as the reader counts them. */
	uint32_t n = (uint32_t)__builtin_popcountll(mask);
	if (!frame_room(w, 1 + n))
		return CRUMBS_ERROR_LIMIT;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX + (size_t)n * VARINT_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	w->frame_records += 1 + n;
	put_u8(&w->frames.buf, leaf ? FORMAT_TAG_LEAF_COUNTERS : FORMAT_TAG_COUNTERS);
	put_varint(&w->frames.buf, set);
	put_varint(&w->frames.buf, mask);
	for (uint32_t i = 0; i < 64; i++)
		if (mask >> i & 1)
			put_varint(&w->frames.buf, values[i]);
	return CRUMBS_OK;
}

/* Pipeline statistics (since 1.5): records that, as COUNTS, add to the
 * innermost open node of the current queue. */
enum crumbs_result crumbs_writer_counters(crumbs_writer *w, int leaf, uint32_t mask,
					  const uint64_t values[CRUMBS_PIPELINE_COUNTERS])
{
	if (mask & ~(uint32_t)FORMAT_PIPELINE_COUNTER_BITS || (mask && !values))
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	return counters_record(w, leaf, FORMAT_COUNTER_SET_PIPELINE, mask, values);
}

/* The record that a stretch's counters of `set` (the pipeline statistics'
 * or a vendor set) are unknown. */
static enum crumbs_result counters_unknown(crumbs_writer *w, int leaf, uint32_t set)
{
	struct writer_queue *q;
	int ticks;
	enum crumbs_result r = scope_target(w, CRUMBS_NO_TICKS, &q, &ticks);
	if (r != CRUMBS_OK)
		return r;
	if (!frame_room(w, 1))
		return CRUMBS_ERROR_LIMIT;
	w->frame_records++;
	put_u8(&w->frames.buf, leaf ? FORMAT_TAG_LEAF_COUNTERS_UNKNOWN :
				      FORMAT_TAG_COUNTERS_UNKNOWN);
	put_varint(&w->frames.buf, set);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_counters_unknown(crumbs_writer *w, int leaf)
{
	return counters_unknown(w, leaf, FORMAT_COUNTER_SET_PIPELINE);
}

enum crumbs_result crumbs_writer_render_area(crumbs_writer *w, uint32_t width, uint32_t height)
{
	struct writer_queue *q;
	int ticks;
	if (!width || !height || width > FORMAT_MAX_RENDER_SIDE || height > FORMAT_MAX_RENDER_SIDE)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	enum crumbs_result r = scope_target(w, CRUMBS_NO_TICKS, &q, &ticks);
	if (r != CRUMBS_OK)
		return r;
	if (!frame_room(w, 1))
		return CRUMBS_ERROR_LIMIT;
	w->frame_records++;
	put_u8(&w->frames.buf, FORMAT_TAG_RENDER_AREA);
	put_varint(&w->frames.buf, width);
	put_varint(&w->frames.buf, height);
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* Vendor counters (since 1.5)                                              */
/* ------------------------------------------------------------------------ */

/* Whether c describes a counter the format can carry. */
static int counter_desc_ok(const struct crumbs_counter_desc *c)
{
	return c && c->name && c->category && strlen(c->name) <= FORMAT_MAX_COUNTER_NAME &&
	       strlen(c->category) <= FORMAT_MAX_COUNTER_NAME && c->unit <= FORMAT_MAX_COUNTER_UNIT &&
	       c->storage <= FORMAT_MAX_COUNTER_STORAGE && c->scope <= FORMAT_MAX_COUNTER_SCOPE &&
	       c->scale <= FORMAT_MAX_COUNTER_SCALE;
}

/* A counter as COUNTER_SET and OFFERED_COUNTER describe it, its name and
 * category interned already. */
static void put_counter(struct bytes *b, uint32_t name, uint32_t category,
			const struct crumbs_counter_desc *c)
{
	put_varint(b, name);
	put_varint(b, category);
	put_varint(b, c->unit);
	put_varint(b, c->storage);
	put_varint(b, c->scope);
}

enum crumbs_result crumbs_writer_counter_set(crumbs_writer *w, uint32_t set, uint32_t gpu,
					     uint32_t family, uint32_t groups, int round_robin,
					     uint32_t count,
					     const struct crumbs_counter_desc *counters)
{
	if (w->error)
		return w->error;
	if (w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if (!set || set > CRUMBS_MAX_COUNTER_SETS || w->counter_sets[set] || gpu >= w->gpu_count ||
	    !groups || groups > CRUMBS_MAX_COUNTER_GROUPS || !count ||
	    count > CRUMBS_MAX_SET_COUNTERS || !counters)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	for (uint32_t i = 0; i < count; i++)
		if (!counter_desc_ok(&counters[i]) || counters[i].group >= groups)
			return CRUMBS_ERROR_INVALID_ARGUMENT;
	/* The strings first: each goes before the record that names it. */
	uint32_t ids[2 * CRUMBS_MAX_SET_COUNTERS];
	enum crumbs_result r;
	for (uint32_t i = 0; i < count; i++)
		if ((r = intern_name(w, &w->setup, counters[i].name, &ids[2 * i])) != CRUMBS_OK ||
		    (r = intern_name(w, &w->setup, counters[i].category, &ids[2 * i + 1])) !=
			    CRUMBS_OK)
			return fail(w, r);
	if (bytes_reserve(&w->setup.buf, RECORD_MAX + (size_t)count * 8 * VARINT_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	struct bytes *b = &w->setup.buf;
	put_u8(b, FORMAT_TAG_COUNTER_SET);
	put_varint(b, set);
	put_varint(b, gpu);
	put_varint(b, family);
	put_varint(b, groups);
	put_varint(b, round_robin ? 1 : 0);
	put_varint(b, count);
	for (uint32_t i = 0; i < count; i++) {
		put_counter(b, ids[2 * i], ids[2 * i + 1], &counters[i]);
		put_varint(b, counters[i].group);
		put_varint(b, counters[i].scale);
	}
	w->counter_sets[set] = count == 64 ? UINT64_MAX : ((uint64_t)1 << count) - 1;
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_offered_counter(crumbs_writer *w, uint32_t gpu, uint32_t family,
						 const struct crumbs_counter_desc *c)
{
	if (w->error)
		return w->error;
	if (w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if (gpu >= w->gpu_count || !counter_desc_ok(c))
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (w->offered_counters >= FORMAT_MAX_OFFERED_COUNTERS)
		return CRUMBS_ERROR_LIMIT;
	uint32_t name, category;
	enum crumbs_result r;
	if ((r = intern_name(w, &w->setup, c->name, &name)) != CRUMBS_OK ||
	    (r = intern_name(w, &w->setup, c->category, &category)) != CRUMBS_OK)
		return fail(w, r);
	if (bytes_reserve(&w->setup.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	struct bytes *b = &w->setup.buf;
	put_u8(b, FORMAT_TAG_OFFERED_COUNTER);
	put_varint(b, gpu);
	put_varint(b, family);
	put_counter(b, name, category, c);
	w->offered_counters++;
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_set_counters(crumbs_writer *w, int leaf, uint32_t set,
					      uint64_t mask, const uint64_t *values)
{
	if (!set || set > CRUMBS_MAX_COUNTER_SETS || (mask & ~w->counter_sets[set]) ||
	    (mask && !values))
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	return counters_record(w, leaf, set, mask, values);
}

enum crumbs_result crumbs_writer_set_counters_unknown(crumbs_writer *w, int leaf, uint32_t set)
{
	if (!set || set > CRUMBS_MAX_COUNTER_SETS || !w->counter_sets[set])
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	return counters_unknown(w, leaf, set);
}

enum crumbs_result crumbs_writer_leaf(crumbs_writer *w,
				      const struct crumbs_leaf_desc *leaf)
{
	struct writer_queue *q;
	int ticks;
	uint32_t id;
	enum crumbs_result r;

	if (!leaf || leaf->kind <= CRUMBS_EVENT_RENDER_PASS ||
	    leaf->kind >= CRUMBS_EVENT_KIND_COUNT)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	/* A leaf is timed by both ends or not at all. */
	uint64_t any = leaf->begin_ticks != CRUMBS_NO_TICKS &&
		       leaf->end_ticks != CRUMBS_NO_TICKS ? leaf->begin_ticks : CRUMBS_NO_TICKS;
	if ((r = scope_target(w, any, &q, &ticks)) != CRUMBS_OK)
		return r;
	if (q->depth >= FORMAT_MAX_DEPTH ||
	    (r = intern_node(w, leaf->name ? leaf->name : crumbs_event_kind_name(leaf->kind), 1,
			     &id)) == CRUMBS_ERROR_LIMIT) {
		w->frame_skipped++;
		return CRUMBS_ERROR_LIMIT;
	}
	if (r != CRUMBS_OK)
		return fail(w, r);
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);

	const uint64_t counts[4] = { leaf->draws, leaf->dispatches, leaf->prims, leaf->verts };
	struct bytes *b = &w->frames.buf;
	put_u8(b, ticks ? FORMAT_TAG_LEAF : FORMAT_TAG_LEAF_NO_TICKS);
	put_varint(b, (uint64_t)leaf->kind);
	put_varint(b, id);
	put_counts(b, counts);
	if (ticks) {
		put_ticks(w, q, leaf->begin_ticks);
		put_ticks(w, q, leaf->end_ticks);
	}
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* CPU threads and their scopes                                             */
/* ------------------------------------------------------------------------ */

enum crumbs_result crumbs_writer_cpu_thread(crumbs_writer *w, uint32_t tid, const char *name)
{
	enum crumbs_result r;
	uint32_t i, id;

	if (w->error)
		return w->error;
	if (!w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	for (i = 0; i < w->thread_count && w->threads[i].tid != tid; i++)
		;
	if (i == w->thread_count) {
		if (i >= FORMAT_MAX_CPU_THREADS) {
			w->current_thread = -1;
			return CRUMBS_ERROR_LIMIT;
		}
		if (!w->threads) {
			/* All the format allows at once, kept from frame to
			 * frame: a frame's threads never move. */
			w->threads = calloc(FORMAT_MAX_CPU_THREADS, sizeof(*w->threads));
			if (!w->threads)
				return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
		}
		w->threads[i].tid = tid;
		w->threads[i].depth = 0;
		w->threads[i].skipped = 0;
		w->thread_count++;
	} else if ((int)i == w->current_thread && (!name || !*name)) {
		return CRUMBS_OK;
	}
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	uint32_t strings = w->frames.strings.count;
	if ((r = intern_name(w, &w->frames, name, &id)) != CRUMBS_OK)
		return fail(w, r);
	frame_records_add(w, 1 + (uint64_t)(w->frames.strings.count - strings));
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	put_u8(&w->frames.buf, FORMAT_TAG_CPU_THREAD);
	put_varint(&w->frames.buf, tid);
	put_varint(&w->frames.buf, id);
	w->current_thread = (int)i;
	return CRUMBS_OK;
}

/* The current CPU thread, for a scope's begin or end at cpu_ns. */
static enum crumbs_result cpu_target(crumbs_writer *w, uint64_t cpu_ns,
				     struct writer_thread **out)
{
	if (w->error)
		return w->error;
	if (cpu_ns > INT64_MAX)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (!w->in_frame || w->current_thread < 0)
		return CRUMBS_ERROR_BAD_STATE;
	*out = &w->threads[w->current_thread];
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	return CRUMBS_OK;
}

static enum crumbs_result cpu_begin(crumbs_writer *w, const char *name, unsigned level,
				    uint64_t cpu_ns, uint8_t tag)
{
	struct writer_thread *t;
	uint32_t id;
	enum crumbs_result r;

	if (level > CRUMBS_DETAIL_MAX)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if ((r = cpu_target(w, cpu_ns, &t)) != CRUMBS_OK)
		return r;
	if (t->depth >= FORMAT_MAX_DEPTH ||
	    (r = intern_node(w, name, 2, &id)) == CRUMBS_ERROR_LIMIT) {
		/* As for a queue's scopes: its end is swallowed too. */
		t->skipped++;
		w->frame_skipped++;
		return CRUMBS_ERROR_LIMIT;
	}
	if (r != CRUMBS_OK)
		return fail(w, r);
	if (t->depth == t->begin_cap) {
		uint32_t cap = t->begin_cap ? t->begin_cap * 2 : 16;
		if (cap > FORMAT_MAX_DEPTH)
			cap = FORMAT_MAX_DEPTH;
		uint64_t *b = realloc(t->begins, sizeof(*b) * cap);
		if (!b)
			return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
		t->begins = b;
		t->begin_cap = cap;
	}
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	put_u8(&w->frames.buf, (uint8_t)(tag + level));
	put_varint(&w->frames.buf, id);
	put_cpu(w, cpu_ns);
	t->begins[t->depth++] = cpu_ns;
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_cpu_begin(crumbs_writer *w, const char *name,
					   unsigned level, uint64_t cpu_ns)
{
	return cpu_begin(w, name, level, cpu_ns, FORMAT_TAG_CPU_BEGIN);
}

enum crumbs_result crumbs_writer_cpu_wait_begin(crumbs_writer *w, const char *name,
						unsigned level, uint64_t cpu_ns)
{
	return cpu_begin(w, name, level, cpu_ns, FORMAT_TAG_CPU_WAIT_BEGIN);
}

enum crumbs_result crumbs_writer_cpu_end(crumbs_writer *w, uint64_t cpu_ns)
{
	struct writer_thread *t;
	enum crumbs_result r = cpu_target(w, cpu_ns, &t);

	if (r != CRUMBS_OK)
		return r;
	if (t->skipped) {
		t->skipped--;
		return CRUMBS_OK;
	}
	if (t->depth) {
		/* An end before its begin would not decode. */
		uint64_t begin = t->begins[--t->depth];
		if (cpu_ns < begin)
			cpu_ns = begin;
	} else {
		/* An end with nothing open: kept while the frame has room. */
		if (!frame_room(w, 1))
			return CRUMBS_ERROR_LIMIT;
		w->frame_records++;
	}
	put_u8(&w->frames.buf, FORMAT_TAG_CPU_END);
	put_cpu(w, cpu_ns);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_frame_thread(crumbs_writer *w, uint32_t tid)
{
	if (w->error)
		return w->error;
	if (!w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	frame_records_add(w, 1);
	put_u8(&w->frames.buf, FORMAT_TAG_FRAME_THREAD);
	put_varint(&w->frames.buf, tid);
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* Tasks and timeline frames                                                */
/* ------------------------------------------------------------------------ */

/* Checks a task record's common arguments and makes room for it. */
static enum crumbs_result task_ready(crumbs_writer *w, uint64_t task, uint64_t cpu_ns)
{
	if (w->error)
		return w->error;
	if (task == 0 || cpu_ns > INT64_MAX)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (!w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX * 2))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	return CRUMBS_OK;
}

/* Interns a timeline's name and counts it among the `count` of `ids`;
 * CRUMBS_ERROR_LIMIT for a new one past FORMAT_MAX_TIMELINES. */
static enum crumbs_result intern_timeline(crumbs_writer *w, const char *name, uint32_t *ids,
					  uint32_t *count, uint32_t *id)
{
	const unsigned char *p;
	size_t len;
	enum crumbs_result r = sanitize(w, name, &p, &len);
	if (r != CRUMBS_OK)
		return r;
	/* Look it up before interning it, so that a refused one adds no
	 * string. */
	uint32_t strings = w->frames.strings.count;
	uint32_t i;
	if (*count >= FORMAT_MAX_TIMELINES && !frame_room(w, 2))
		return CRUMBS_ERROR_LIMIT;
	if ((r = intern(&w->frames, p, len, id)) != CRUMBS_OK)
		return r;
	for (i = 0; i < *count && ids[i] != *id; i++)
		;
	if (i == *count) {
		if (i >= FORMAT_MAX_TIMELINES)
			return CRUMBS_ERROR_LIMIT; /* an interned string unused costs nothing */
		ids[(*count)++] = *id;
	}
	frame_records_add(w, w->frames.strings.count - strings);
	return CRUMBS_OK;
}

/* The state's string, "Executing" for none. */
static const char *state_or_default(const char *state)
{
	return state && *state ? state : "Executing";
}

enum crumbs_result crumbs_writer_task_begin(crumbs_writer *w, uint64_t task, const char *timeline,
					    const char *name, const char *state, int earlier,
					    uint64_t cpu_ns)
{
	uint32_t tl, name_id, state_id;
	enum crumbs_result r = task_ready(w, task, cpu_ns);

	if (r != CRUMBS_OK)
		return r;
	if ((r = intern_timeline(w, timeline, w->timelines, &w->timeline_count, &tl)) != CRUMBS_OK)
		return r == CRUMBS_ERROR_LIMIT ? r : fail(w, r);
	if (w->frame_nodes + 1 >= FORMAT_MAX_FRAME_NODES ||
	    (r = intern_node(w, name, 1, &name_id)) == CRUMBS_ERROR_LIMIT ||
	    (r == CRUMBS_OK && (r = intern_node(w, state_or_default(state), 0, &state_id)) ==
				       CRUMBS_ERROR_LIMIT)) {
		w->frame_skipped++;
		return CRUMBS_ERROR_LIMIT;
	}
	if (r != CRUMBS_OK)
		return fail(w, r);
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	put_u8(&w->frames.buf, earlier ? FORMAT_TAG_TASK_BEGUN_EARLIER : FORMAT_TAG_TASK_BEGIN);
	put_varint(&w->frames.buf, task);
	put_varint(&w->frames.buf, tl);
	put_varint(&w->frames.buf, name_id);
	put_varint(&w->frames.buf, state_id);
	put_cpu(w, cpu_ns);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_task_state(crumbs_writer *w, uint64_t task, const char *state,
					    uint64_t cpu_ns)
{
	uint32_t id;
	enum crumbs_result r = task_ready(w, task, cpu_ns);

	if (r != CRUMBS_OK)
		return r;
	if ((r = intern_node(w, state_or_default(state), 1, &id)) == CRUMBS_ERROR_LIMIT) {
		w->frame_skipped++;
		return r;
	}
	if (r != CRUMBS_OK)
		return fail(w, r);
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	put_u8(&w->frames.buf, FORMAT_TAG_TASK_STATE);
	put_varint(&w->frames.buf, task);
	put_varint(&w->frames.buf, id);
	put_cpu(w, cpu_ns);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_task_end(crumbs_writer *w, uint64_t task, uint64_t cpu_ns)
{
	enum crumbs_result r = task_ready(w, task, cpu_ns);

	if (r != CRUMBS_OK)
		return r;
	if (!frame_room(w, 1))
		return CRUMBS_ERROR_LIMIT;
	frame_records_add(w, 1);
	put_u8(&w->frames.buf, FORMAT_TAG_TASK_END);
	put_varint(&w->frames.buf, task);
	put_cpu(w, cpu_ns);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_task_depend(crumbs_writer *w, uint64_t task,
					     const char *blocked_state, uint64_t blocking,
					     uint64_t cpu_ns)
{
	uint32_t id, strings;
	enum crumbs_result r = task_ready(w, task, cpu_ns);

	if (r != CRUMBS_OK)
		return r;
	if (blocking == 0)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (!frame_room(w, 2))
		return CRUMBS_ERROR_LIMIT;
	strings = w->frames.strings.count;
	if ((r = intern_name(w, &w->frames, state_or_default(blocked_state), &id)) != CRUMBS_OK)
		return fail(w, r);
	frame_records_add(w, 1 + (uint64_t)(w->frames.strings.count - strings));
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	put_u8(&w->frames.buf, FORMAT_TAG_TASK_DEPEND);
	put_varint(&w->frames.buf, task);
	put_varint(&w->frames.buf, id);
	put_varint(&w->frames.buf, blocking);
	put_cpu(w, cpu_ns);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_timeline_frame(crumbs_writer *w, const char *timeline,
						uint64_t cpu_ns)
{
	uint32_t tl;
	enum crumbs_result r;

	if (w->error)
		return w->error;
	if (cpu_ns > INT64_MAX)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (!w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX * 2))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	if (!frame_room(w, 2))
		return CRUMBS_ERROR_LIMIT;
	r = intern_timeline(w, timeline, w->mark_timelines, &w->mark_timeline_count, &tl);
	if (r != CRUMBS_OK)
		return r == CRUMBS_ERROR_LIMIT ? r : fail(w, r);
	frame_records_add(w, 1);
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	put_u8(&w->frames.buf, FORMAT_TAG_TIMELINE_FRAME);
	put_varint(&w->frames.buf, tl);
	put_cpu(w, cpu_ns);
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* Video memory                                                             */
/* ------------------------------------------------------------------------ */

enum crumbs_result crumbs_writer_memory(crumbs_writer *w, const struct crumbs_memory_desc *m)
{
	if (w->error)
		return w->error;
	if (!w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if (!m || m->gpu >= w->gpu_count || m->heap >= CRUMBS_MAX_MEMORY_HEAPS ||
	    (m->flags & ~FORMAT_MEMORY_FLAGS_KNOWN) ||
	    (m->tracked && m->high_bytes < m->in_use_bytes) ||
	    (w->memory_heaps[m->gpu] & (1u << m->heap)))
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	w->memory_heaps[m->gpu] |= (uint16_t)(1u << m->heap);
	frame_records_add(w, 1);
	struct bytes *b = &w->frames.buf;
	put_u8(b, FORMAT_TAG_MEMORY);
	put_varint(b, m->gpu);
	put_varint(b, m->heap);
	put_varint(b, m->flags);
	put_varint(b, m->size_bytes);
	put_u8(b, (uint8_t)((m->tracked ? FORMAT_MEMORY_TRACKED : 0) |
			    (m->budgeted ? FORMAT_MEMORY_BUDGET : 0)));
	if (m->tracked) {
		put_varint(b, m->allocated_bytes);
		put_varint(b, m->freed_bytes);
		put_varint(b, m->allocations);
		put_varint(b, m->frees);
		put_varint(b, m->in_use_bytes);
		put_varint(b, m->high_bytes);
	}
	if (m->budgeted) {
		put_varint(b, m->usage_bytes);
		put_varint(b, m->budget_bytes);
	}
	return CRUMBS_OK;
}

/* ------------------------------------------------------------------------ */
/* Presentation (since 1.5)                                                 */
/* ------------------------------------------------------------------------ */

enum crumbs_result crumbs_writer_present(crumbs_writer *w, const struct crumbs_present_desc *p)
{
	if (w->error)
		return w->error;
	if (!p || p->cpu_ns > INT64_MAX || p->duration_ns > FORMAT_MAX_PRESENT_NS ||
	    p->mode > FORMAT_MAX_PRESENT_MODE || (p->flags & ~(uint32_t)FORMAT_PRESENT_FLAGS_KNOWN) ||
	    p->refresh_ns > FORMAT_MAX_REFRESH_NS)
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (!w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if (!frame_room(w, 1))
		return CRUMBS_ERROR_LIMIT;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	frame_records_add(w, 1);
	put_u8(&w->frames.buf, FORMAT_TAG_PRESENT);
	put_varint(&w->frames.buf, p->swapchain);
	put_cpu(w, p->cpu_ns);
	put_varint(&w->frames.buf, p->duration_ns);
	put_varint(&w->frames.buf, p->present_id);
	put_varint(&w->frames.buf, p->mode);
	put_varint(&w->frames.buf, p->flags);
	put_varint(&w->frames.buf, p->refresh_ns);
	return CRUMBS_OK;
}

enum crumbs_result crumbs_writer_present_shown(crumbs_writer *w, uint64_t swapchain,
					       uint64_t present_id, unsigned source,
					       uint64_t shown_ns)
{
	if (w->error)
		return w->error;
	if (present_id == 0 || shown_ns > INT64_MAX ||
	    (source != CRUMBS_SHOWN_PRESENT_WAIT && source != CRUMBS_SHOWN_DISPLAY_TIMING))
		return CRUMBS_ERROR_INVALID_ARGUMENT;
	if (!w->in_frame)
		return CRUMBS_ERROR_BAD_STATE;
	if (!frame_room(w, 1))
		return CRUMBS_ERROR_LIMIT;
	if (bytes_reserve(&w->frames.buf, RECORD_MAX))
		return fail(w, CRUMBS_ERROR_OUT_OF_MEMORY);
	frame_records_add(w, 1);
	put_u8(&w->frames.buf, FORMAT_TAG_PRESENT_SHOWN);
	put_varint(&w->frames.buf, swapchain);
	put_varint(&w->frames.buf, present_id);
	put_varint(&w->frames.buf, source);
	put_varint(&w->frames.buf, shown_ns);
	return CRUMBS_OK;
}
