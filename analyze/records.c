/* SPDX-License-Identifier: MIT */
/*
 * records.c: decodes the records of a decompressed chunk (format/FORMAT.md,
 * "Records"): a setup chunk into the devices, queues and calibration samples
 * it defines, a frames chunk frame by frame into the raw streams the model
 * is built from. Every rule of the records is checked here.
 */
#include "analyze_internal.h"

#include <stdio.h>
#include <string.h>

#define MAX_SETUP_SAMPLES 64 /* per GPU; the most recent are kept */

/* ------------------------------------------------------------------------ */
/* The setup: devices and queues                                            */
/* ------------------------------------------------------------------------ */

static const char *queue_type_name(uint32_t flags)
{
	if (flags & CRUMBS_QUEUE_GRAPHICS)
		return "Graphics";
	if (flags & CRUMBS_QUEUE_COMPUTE)
		return "Compute";
	if (flags & CRUMBS_QUEUE_TRANSFER)
		return "Transfer";
	if (flags & CRUMBS_QUEUE_VIDEO_DECODE)
		return "Video Decode";
	if (flags & CRUMBS_QUEUE_VIDEO_ENCODE)
		return "Video Encode";
	if (flags & CRUMBS_QUEUE_OPTICAL_FLOW)
		return "Optical Flow";
	return "Queue";
}

void setup_reset(struct setup *s)
{
	s->gpus.len = 0;
	s->queues.len = 0;
	s->samples.len = 0;
	s->counter_sets.len = 0;
	s->offered.len = 0;
	memset(s->set_index, 0, sizeof(s->set_index));
	arena_reset(&s->arena);
}

void setup_release(struct setup *s)
{
	arena_release(&s->arena);
	vec_release(&s->gpus);
	vec_release(&s->queues);
	vec_release(&s->samples);
	vec_release(&s->counter_sets);
	vec_release(&s->offered);
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

static bool cur_fail(struct cursor *k, const char *why)
{
	if (!k->fail)
		k->fail = why;
	return false;
}

static bool get_u8(struct cursor *k, unsigned *v)
{
	if (k->p >= k->end) {
		k->ran_out = true;
		return cur_fail(k, "record cut short");
	}
	*v = *k->p++;
	return true;
}

/*
 * A varint at p where at least 10 bytes remain, without bounds checks: its
 * length, or 0 when it is longer than 64 bits or not in its shortest form
 * (get_varint_slow then says which).
 */
static inline unsigned varint_unchecked(const unsigned char *p, uint64_t *v)
{
	uint64_t r = p[0];
	if (r < 0x80) {
		*v = r;
		return 1;
	}
	/* Timestamp differences take two or three bytes. */
	r = (r & 0x7F) | (uint64_t)(p[1] & 0x7F) << 7;
	if (p[1] < 0x80) {
		*v = r;
		return p[1] ? 2 : 0;
	}
	r |= (uint64_t)(p[2] & 0x7F) << 14;
	if (p[2] < 0x80) {
		*v = r;
		return p[2] ? 3 : 0;
	}
	/* CPU time differences, up to 268 ms, take four. */
	r |= (uint64_t)(p[3] & 0x7F) << 21;
	if (p[3] < 0x80) {
		*v = r;
		return p[3] ? 4 : 0;
	}
	for (unsigned i = 4; i < 10; i++) {
		uint64_t b = p[i];
		r |= (b & 0x7F) << (7 * i);
		if (b < 0x80) {
			if (b == 0 || (i == 9 && b > 1))
				return 0;
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

/* Longer varints (CPU time differences), near the end of the content, and
 * bad ones, which it says what is wrong with. */
static bool get_varint_slow(struct cursor *k, uint64_t *v)
{
	unsigned n;
	if (k->end - k->p >= 10 && (n = varint_unchecked(k->p, v))) {
		k->p += n;
		return true;
	}
	uint64_t r = 0;
	for (unsigned shift = 0, i = 0;; i++, shift += 7) {
		if (k->p >= k->end) {
			k->ran_out = true;
			return cur_fail(k, "record cut short");
		}
		unsigned b = *k->p++;
		if (i == 9 && b > 1)
			return cur_fail(k, "varint longer than 64 bits");
		r |= (uint64_t)(b & 0x7F) << shift;
		if (!(b & 0x80)) {
			if (b == 0 && i > 0)
				return cur_fail(k, "varint not in its shortest form");
			*v = r;
			return true;
		}
	}
}

/* Most values fit in one byte, timestamp differences in two or three;
 * those stay inline. */
static inline bool get_varint(struct cursor *k, uint64_t *v)
{
	const unsigned char *p = k->p;
	if (k->end - p >= 3) {
		if (p[0] < 0x80) {
			*v = p[0];
			k->p = p + 1;
			return true;
		}
		if (p[1] < 0x80 && p[1] != 0) {
			*v = (uint64_t)(p[0] & 0x7F) | (uint64_t)p[1] << 7;
			k->p = p + 2;
			return true;
		}
		if (p[1] >= 0x80 && p[2] < 0x80 && p[2] != 0) {
			*v = (uint64_t)(p[0] & 0x7F) | (uint64_t)(p[1] & 0x7F) << 7 |
			     (uint64_t)p[2] << 14;
			k->p = p + 3;
			return true;
		}
	}
	return get_varint_slow(k, v);
}

static inline bool get_u32(struct cursor *k, uint32_t *v, uint64_t max, const char *what)
{
	uint64_t x;
	if (!get_varint(k, &x))
		return false;
	if (x > max)
		return cur_fail(k, what);
	*v = (uint32_t)x;
	return true;
}

/* A reference to one of `count` things defined earlier (strings, GPUs,
 * queues). */
static inline bool get_index(struct cursor *k, uint32_t *v, size_t count, const char *what)
{
	uint64_t x;
	if (!get_varint(k, &x))
		return false;
	if (x >= count)
		return cur_fail(k, what);
	*v = (uint32_t)x;
	return true;
}

static bool get_svarint(struct cursor *k, int64_t *v)
{
	uint64_t z;
	if (!get_varint(k, &z))
		return false;
	*v = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
	return true;
}

static inline bool get_cpu(struct cursor *k, uint64_t *cursor, int64_t *out)
{
	int64_t d;
	if (!get_svarint(k, &d))
		return false;
	uint64_t v = *cursor + (uint64_t)d;
	/* The result must be a valid time: no wrap through zero. */
	if ((d < 0 && (uint64_t)-(d + 1) + 1 > *cursor) || v > INT64_MAX)
		return cur_fail(k, "cpu time out of range");
	*cursor = v;
	*out = (int64_t)v;
	return true;
}

/* Called once per timestamp: inline, and the range checked on the zigzag
 * form, which is below 2^B exactly when the B-bit difference is in range. */
static inline bool get_ticks(struct cursor *k, uint64_t *base, unsigned bits, uint64_t *out)
{
	uint64_t z;
	if (!get_varint(k, &z))
		return false;
	if (bits < 64 && z >> bits)
		return cur_fail(k, "timestamp difference beyond the valid bits");
	uint64_t mask = bits_mask(bits);
	*base = (*base + ((z >> 1) ^ (0 - (z & 1)))) & mask;
	*out = *base;
	return true;
}

static bool get_string_id(struct cursor *k, const struct chunk_state *cs, uint32_t *id)
{
	return get_index(k, id, cs->names.len, "unknown string id");
}

/* ------------------------------------------------------------------------ */
/* Records of any chunk                                                     */
/* ------------------------------------------------------------------------ */

static bool parse_string(struct cursor *k, struct chunk_state *cs)
{
	uint64_t len;
	if (!get_varint(k, &len))
		return false;
	if (len > FORMAT_MAX_STRING)
		return cur_fail(k, "string longer than 4096 bytes");
	if (cs->names.len >= FORMAT_MAX_CHUNK_STRINGS)
		return cur_fail(k, "more than 2097152 strings in a chunk");
	if ((uint64_t)(k->end - k->p) < len) {
		k->ran_out = true;
		return cur_fail(k, "record cut short");
	}
	for (size_t i = 0; i < len;) {
		if (k->p[i] - 1u < 0x7F) {
			i++; /* ASCII but NUL, most of a name: without a call */
			continue;
		}
		size_t n = crumbs_utf8_sequence(k->p + i, (size_t)len - i);
		if (!n)
			return cur_fail(k, "string is not valid UTF-8");
		i += n;
	}
	const unsigned char **name = vec_push(&cs->names, sizeof(*name));
	uint32_t *nlen = name ? vec_push(&cs->name_lens, sizeof(*nlen)) : NULL;
	if (!nlen)
		return cur_fail(k, "out of memory");
	*name = k->p;
	*nlen = (uint32_t)len;
	k->p += len;
	return true;
}

static bool parse_calibration(struct cursor *k, const struct setup *setup,
			      struct raw_calibration *out)
{
	uint64_t cpu;
	if (!get_index(k, &out->gpu, setup->gpus.len, "calibration of an unknown gpu") ||
	    !get_varint(k, &out->gpu_ticks) || !get_varint(k, &cpu) ||
	    !get_varint(k, &out->deviation_ns))
		return false;
	if (cpu > INT64_MAX)
		return cur_fail(k, "cpu time out of range");
	out->cpu_ns = (int64_t)cpu;
	return true;
}

/* ------------------------------------------------------------------------ */
/* Setup chunks                                                             */
/* ------------------------------------------------------------------------ */

static bool setup_gpu(struct setup *setup, struct cursor *k, const struct chunk_state *cs)
{
	struct capture_gpu g = { 0 };
	uint32_t name, driver;
	if (!get_string_id(k, cs, &name) || !get_string_id(k, cs, &driver) ||
	    !get_u32(k, &g.vendor_id, UINT32_MAX, "vendor id out of range") ||
	    !get_u32(k, &g.device_id, UINT32_MAX, "device id out of range") ||
	    !get_u32(k, &g.driver_version, UINT32_MAX, "driver version out of range") ||
	    !get_u32(k, &g.api_version, UINT32_MAX, "api version out of range"))
		return false;
	if (setup->gpus.len >= FORMAT_MAX_GPUS)
		return cur_fail(k, "more than 64 gpus");
	const unsigned char *const *names = cs->names.data;
	const uint32_t *lens = cs->name_lens.data;
	g.name = arena_copy_string(&setup->arena, names[name], lens[name]);
	g.driver_name = arena_copy_string(&setup->arena, names[driver], lens[driver]);
	struct capture_gpu *slot = vec_push(&setup->gpus, sizeof(*slot));
	if (!slot || !g.name || !g.driver_name)
		return cur_fail(k, "out of memory");
	*slot = g;
	return true;
}

static bool setup_queue(struct setup *setup, struct cursor *k)
{
	struct capture_queue q = { 0 };
	unsigned bits = 0;
	float period;
	if (!get_index(k, &q.gpu, setup->gpus.len, "queue of an unknown gpu") ||
	    !get_u32(k, &q.family, UINT32_MAX, "family out of range") ||
	    !get_u32(k, &q.index, UINT32_MAX, "queue index out of range") ||
	    !get_u32(k, &q.flags, FORMAT_QUEUE_FLAGS_KNOWN, "unknown queue flags"))
		return false;
	if (k->end - k->p < 5) {
		k->ran_out = true;
		return cur_fail(k, "record cut short");
	}
	uint32_t pbits = format_get32(k->p);
	memcpy(&period, &pbits, 4);
	k->p += 4;
	get_u8(k, &bits);
	if (!(period > 0.0f && period <= FORMAT_MAX_PERIOD_NS))
		return cur_fail(k, "timestamp period out of range");
	if (bits > FORMAT_MAX_VALID_BITS)
		return cur_fail(k, "more than 64 timestamp valid bits");
	if (setup->queues.len >= FORMAT_MAX_QUEUES)
		return cur_fail(k, "more than 256 queues");
	q.timestamp_period = period;
	q.timestamp_valid_bits = bits;
	const char *type = queue_type_name(q.flags);
	unsigned ordinal = 0;
	const struct capture_queue *qs = setup->queues.data;
	for (size_t i = 0; i < setup->queues.len; i++)
		if (qs[i].gpu == q.gpu && strcmp(queue_type_name(qs[i].flags), type) == 0)
			ordinal++;
	snprintf(q.name, sizeof(q.name), "%s %u", type, ordinal);
	struct capture_queue *slot = vec_push(&setup->queues, sizeof(*slot));
	if (!slot)
		return cur_fail(k, "out of memory");
	*slot = q;
	return true;
}

static bool setup_calibration(struct setup *setup, struct cursor *k)
{
	struct raw_calibration s;
	if (!parse_calibration(k, setup, &s))
		return false;
	/* Keep the most recent samples of each GPU. */
	struct raw_calibration *all = setup->samples.data;
	size_t n = 0, oldest = SIZE_MAX;
	for (size_t i = 0; i < setup->samples.len; i++)
		if (all[i].gpu == s.gpu && (n++, oldest == SIZE_MAX))
			oldest = i;
	if (n >= MAX_SETUP_SAMPLES) {
		memmove(all + oldest, all + oldest + 1,
			(setup->samples.len - oldest - 1) * sizeof(*all));
		setup->samples.len--;
	}
	struct raw_calibration *slot = vec_push(&setup->samples, sizeof(*slot));
	if (!slot)
		return cur_fail(k, "out of memory");
	*slot = s;
	((struct capture_gpu *)setup->gpus.data)[s.gpu].calibration_samples++;
	return true;
}

/* Vendor counters (since 1.5): a counter's name, category, unit, storage
 * and scope. */
static bool get_counter(struct setup *setup, struct cursor *k, const struct chunk_state *cs,
			struct capture_counter *c)
{
	uint32_t name, category;
	if (!get_string_id(k, cs, &name) || !get_string_id(k, cs, &category) ||
	    !get_u32(k, &c->unit, FORMAT_MAX_COUNTER_UNIT, "counter unit out of range") ||
	    !get_u32(k, &c->storage, FORMAT_MAX_COUNTER_STORAGE, "counter storage out of range") ||
	    !get_u32(k, &c->scope, FORMAT_MAX_COUNTER_SCOPE, "counter scope out of range"))
		return false;
	const unsigned char *const *names = cs->names.data;
	const uint32_t *lens = cs->name_lens.data;
	if (lens[name] > FORMAT_MAX_COUNTER_NAME || lens[category] > FORMAT_MAX_COUNTER_NAME)
		return cur_fail(k, "counter name longer than 255 bytes");
	c->name = arena_copy_string(&setup->arena, names[name], lens[name]);
	c->category = arena_copy_string(&setup->arena, names[category], lens[category]);
	return c->name && c->category ? true : cur_fail(k, "out of memory");
}

static bool setup_counter_set(struct setup *setup, struct cursor *k, const struct chunk_state *cs)
{
	struct capture_counter_set s = { 0 };
	uint32_t round_robin;
	if (!get_u32(k, &s.set, CRUMBS_MAX_COUNTER_SETS, "counter set out of range") ||
	    !get_index(k, &s.gpu, setup->gpus.len, "counter set of an unknown gpu") ||
	    !get_u32(k, &s.family, UINT32_MAX, "family out of range") ||
	    !get_u32(k, &s.groups, CRUMBS_MAX_COUNTER_GROUPS, "more than 64 counter groups") ||
	    !get_u32(k, &round_robin, 1, "counter set's frames out of range") ||
	    !get_u32(k, &s.count, CRUMBS_MAX_SET_COUNTERS, "more than 64 counters in a set"))
		return false;
	if (!s.set || setup->set_index[s.set])
		return cur_fail(k, s.set ? "counter set defined twice" : "counter set 0 defined");
	if (!s.groups || !s.count)
		return cur_fail(k, "empty counter set");
	s.round_robin = round_robin;
	struct capture_counter *c = arena_alloc(&setup->arena, sizeof(*c) * s.count);
	if (!c)
		return cur_fail(k, "out of memory");
	for (uint32_t i = 0; i < s.count; i++) {
		if (!get_counter(setup, k, cs, &c[i]) ||
		    !get_u32(k, &c[i].group, s.groups - 1, "counter group out of range") ||
		    !get_u32(k, &c[i].scale, FORMAT_MAX_COUNTER_SCALE, "counter scale out of range"))
			return false;
		c[i].gpu = s.gpu;
		c[i].family = s.family;
	}
	s.counters = c;
	struct capture_counter_set *slot = vec_push(&setup->counter_sets, sizeof(*slot));
	if (!slot)
		return cur_fail(k, "out of memory");
	*slot = s;
	setup->set_index[s.set] = (uint16_t)setup->counter_sets.len;
	return true;
}

static bool setup_offered(struct setup *setup, struct cursor *k, const struct chunk_state *cs)
{
	struct capture_counter c = { 0 };
	if (!get_index(k, &c.gpu, setup->gpus.len, "offered counter of an unknown gpu") ||
	    !get_u32(k, &c.family, UINT32_MAX, "family out of range") ||
	    !get_counter(setup, k, cs, &c))
		return false;
	if (setup->offered.len >= FORMAT_MAX_OFFERED_COUNTERS)
		return cur_fail(k, "more than 16384 offered counters");
	struct capture_counter *slot = vec_push(&setup->offered, sizeof(*slot));
	if (!slot)
		return cur_fail(k, "out of memory");
	*slot = c;
	return true;
}

bool records_apply_setup(struct setup *setup, struct cursor *k, struct chunk_state *cs)
{
	while (k->p < k->end) {
		unsigned tag;
		bool ok;
		get_u8(k, &tag);
		switch (tag) {
		case FORMAT_TAG_STRING:
			ok = parse_string(k, cs);
			break;
		case FORMAT_TAG_GPU:
			ok = setup_gpu(setup, k, cs);
			break;
		case FORMAT_TAG_QUEUE:
			ok = setup_queue(setup, k);
			break;
		case FORMAT_TAG_CALIBRATION:
			ok = setup_calibration(setup, k);
			break;
		case FORMAT_TAG_COUNTER_SET:
		case FORMAT_TAG_OFFERED_COUNTER:
			if (cs->version_minor < 5)
				goto unknown;
			ok = tag == FORMAT_TAG_COUNTER_SET ? setup_counter_set(setup, k, cs) :
							     setup_offered(setup, k, cs);
			break;
		default:
		unknown:
			k->p--;
			return cur_fail(k, "record not allowed in a setup chunk");
		}
		if (!ok)
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* Frames chunks                                                            */
/* ------------------------------------------------------------------------ */

/* A count mask (bits 0-3 present, 4-7 unknown) and the counts it says
 * are present, appended to raw->counts. */
static bool get_counts(struct cursor *k, struct raw_frames *raw)
{
	unsigned mask;
	uint64_t v[4] = { 0 };
	if (!get_u8(k, &mask))
		return false;
	if ((mask & 0xF) & (mask >> 4))
		return cur_fail(k, "a count both present and unknown");
	for (int i = 0; i < 4; i++)
		if ((mask & (1u << i)) && !get_varint(k, &v[i]))
			return false;
	struct counts *cn = vec_push(&raw->counts, sizeof(*cn));
	if (!cn)
		return cur_fail(k, "out of memory");
	*cn = (struct counts){ v[0], v[1], v[2], v[3], mask >> 4 };
	return true;
}

/* The arrays of raw_frames, in the order of raw_span.first. */
enum { RAW_ITEMS, RAW_SUBMITS, RAW_OPS, RAW_HOST_SIGNALS, RAW_CALIBRATIONS, RAW_READIES,
       RAW_COUNTS, RAW_FITS, RAW_CPU, RAW_TASKS, RAW_MEMORY, RAW_PRESENTS,
       RAW_SHOWN, RAW_ARRAYS };
_Static_assert(RAW_ARRAYS == sizeof(((struct raw_span *)0)->first) / sizeof(size_t),
	       "raw_span.first has a place for each array");

static void raw_frames_arrays(struct raw_frames *f, struct vec *v[RAW_ARRAYS],
			      size_t size[RAW_ARRAYS])
{
	v[RAW_ITEMS] = &f->items;
	size[RAW_ITEMS] = sizeof(struct item);
	v[RAW_SUBMITS] = &f->submits;
	size[RAW_SUBMITS] = sizeof(struct raw_submit);
	v[RAW_OPS] = &f->ops;
	size[RAW_OPS] = sizeof(struct raw_op);
	v[RAW_HOST_SIGNALS] = &f->host_signals;
	size[RAW_HOST_SIGNALS] = sizeof(struct raw_host_signal);
	v[RAW_CALIBRATIONS] = &f->calibrations;
	size[RAW_CALIBRATIONS] = sizeof(struct raw_calibration);
	v[RAW_READIES] = &f->readies;
	size[RAW_READIES] = sizeof(struct raw_ready);
	v[RAW_COUNTS] = &f->counts;
	size[RAW_COUNTS] = sizeof(struct counts);
	v[RAW_FITS] = &f->fits;
	size[RAW_FITS] = sizeof(struct raw_fit);
	v[RAW_CPU] = &f->cpu;
	size[RAW_CPU] = sizeof(struct raw_cpu);
	v[RAW_TASKS] = &f->tasks;
	size[RAW_TASKS] = sizeof(struct raw_task);
	v[RAW_MEMORY] = &f->memory;
	size[RAW_MEMORY] = sizeof(struct frame_memory);
	v[RAW_PRESENTS] = &f->presents;
	size[RAW_PRESENTS] = sizeof(struct frame_present);
	v[RAW_SHOWN] = &f->shown;
	size[RAW_SHOWN] = sizeof(struct frame_shown);
}

void raw_frames_clear(struct raw_frames *f)
{
	struct vec *v[RAW_ARRAYS];
	size_t size[RAW_ARRAYS];
	raw_frames_arrays(f, v, size);
	for (int j = 0; j < RAW_ARRAYS; j++)
		v[j]->len = 0;
	f->spans.len = 0;
}

void raw_frames_release(struct raw_frames *f)
{
	struct vec *v[RAW_ARRAYS];
	size_t size[RAW_ARRAYS];
	raw_frames_arrays(f, v, size);
	for (int j = 0; j < RAW_ARRAYS; j++)
		vec_release(v[j]);
	vec_release(&f->spans);
}

size_t raw_frames_bytes(const struct raw_frames *f)
{
	return f->spans.len * sizeof(struct raw_span) + f->items.len * sizeof(struct item) +
	       f->submits.len * sizeof(struct raw_submit) + f->ops.len * sizeof(struct raw_op) +
	       f->host_signals.len * sizeof(struct raw_host_signal) +
	       f->calibrations.len * sizeof(struct raw_calibration) +
	       f->readies.len * sizeof(struct raw_ready) + f->counts.len * sizeof(struct counts) +
	       f->fits.len * sizeof(struct raw_fit) + f->cpu.len * sizeof(struct raw_cpu) +
	       f->tasks.len * sizeof(struct raw_task) + f->memory.len * sizeof(struct frame_memory) +
	       f->presents.len * sizeof(struct frame_present) +
	       f->shown.len * sizeof(struct frame_shown);
}

void raw_frames_get(struct raw_frames *f, size_t i, const unsigned char *const *names,
		    const uint32_t *name_lens, struct raw_frame *out)
{
	const struct raw_span *s = (const struct raw_span *)f->spans.data + i;
	const struct raw_span *next = i + 1 < f->spans.len ? s + 1 : NULL;
	struct vec *v[RAW_ARRAYS];
	size_t size[RAW_ARRAYS], count[RAW_ARRAYS];
	void *data[RAW_ARRAYS];
	raw_frames_arrays(f, v, size);
	for (int j = 0; j < RAW_ARRAYS; j++) {
		count[j] = (next ? next->first[j] : v[j]->len) - s->first[j];
		data[j] = v[j]->data ? (unsigned char *)v[j]->data + size[j] * s->first[j] : NULL;
	}
	*out = (struct raw_frame){
		.number = s->number,
		.cpu_begin_ns = s->cpu_begin_ns,
		.cpu_end_ns = s->cpu_end_ns,
		.flags = s->flags,
		.dropped_scopes = s->dropped_scopes,
		.items = data[RAW_ITEMS],
		.item_count = count[RAW_ITEMS],
		.submits = data[RAW_SUBMITS],
		.submit_count = count[RAW_SUBMITS],
		.ops = data[RAW_OPS],
		.op_count = count[RAW_OPS],
		.host_signals = data[RAW_HOST_SIGNALS],
		.host_signal_count = count[RAW_HOST_SIGNALS],
		.calibrations = data[RAW_CALIBRATIONS],
		.calibration_count = count[RAW_CALIBRATIONS],
		.readies = data[RAW_READIES],
		.ready_count = count[RAW_READIES],
		.counts = data[RAW_COUNTS],
		.counts_count = count[RAW_COUNTS],
		.placed = s->placed,
		.timestamps = s->timestamps,
		.fits = data[RAW_FITS],
		.cpu = data[RAW_CPU],
		.cpu_count = count[RAW_CPU],
		.cpu_threads = s->cpu_threads,
		.tasks = data[RAW_TASKS],
		.task_count = count[RAW_TASKS],
		.task_timelines = s->task_timelines,
		.memory = data[RAW_MEMORY],
		.memory_count = count[RAW_MEMORY],
		.presents = data[RAW_PRESENTS],
		.present_count = count[RAW_PRESENTS],
		.shown = data[RAW_SHOWN],
		.shown_count = count[RAW_SHOWN],
		.has_frame_thread = s->has_frame_thread,
		.frame_thread_tid = s->frame_thread_tid,
		.names = names,
		.name_lens = name_lens,
	};
}

/* A zeroed item of `type` on queue q at the end of the frame's items, or
 * NULL when out of memory. */
static inline struct item *item_push(struct raw_frames *raw, uint8_t type, uint32_t q)
{
	struct item *it = vec_push(&raw->items, sizeof(*it));
	if (it) {
		memset(it, 0, sizeof(*it));
		it->type = type;
		it->queue = q;
	}
	return it;
}

/* A CPU thread of the frame being decoded: its open scopes, linked
 * through their BEGIN records (raw_cpu.b), innermost first. */
struct cpu_decoder_thread {
	uint32_t tid;
	uint32_t depth;
	uint32_t top;   /* the innermost open BEGIN, from the frame's first
			 * CPU record, or UINT32_MAX */
};

/* A frame being decoded: where its records come from and go, and the
 * state of the frame that their rules read. */
struct frame_decoder {
	const struct setup *setup;
	struct cursor *k;
	struct chunk_state *cs;
	struct raw_frames *raw;
	struct raw_span *span;
	const struct capture_queue *queues;
	uint32_t queue_count;
	int current; /* the current queue, or -1 */
	bool in_submit;
	/* Inside a submission on a queue with timestamps: the mask of its
	 * valid bits, which a zigzag difference in range is at most. */
	bool timed;
	uint64_t mask;
	/* Scopes open on each queue: an array of the caller's, so that the
	 * rest, once the functions are inlined, stays in registers. */
	uint32_t *depth;
	/* What the frame holds so far, against the format's limits: its
	 * records (each semaphore operation one more), its scopes, events
	 * and leaf events, and the bytes of their names. */
	uint32_t records;
	uint32_t nodes;
	uint64_t name_bytes;
	/* CPU threads selected so far, an array of the caller's, and the
	 * current one, or -1. */
	struct cpu_decoder_thread *threads;
	uint32_t thread_count;
	int thread;
	/* The string ids of the frame's distinct task timelines and of its
	 * TIMELINE_FRAMEs' timelines, arrays of the caller's. */
	uint32_t *timelines;
	uint32_t timeline_count;
	uint32_t *mark_timelines;
	uint32_t mark_timeline_count;
	/* The heaps of each GPU the frame has MEMORY records of, a bit a
	 * heap, an array of the caller's. */
	uint16_t *memory_heaps;
};

/* Bytes left in the content that fast_scopes needs: a tag and two varints
 * of at most 10 bytes, and the 10 its reads may touch. */
#define FAST_BYTES 32

/*
 * The common records, the begins and ends of scopes with their timestamps
 * inside a submission, far from the end of the content: read without the
 * checks of each byte. Anything unusual is left to decode_record, which
 * reads the record again and says what is wrong. One loop, its state in
 * locals (registers), written back where it stops: at a record of another
 * kind, near the end, or where the items need room.
 */
static inline __attribute__((always_inline)) void fast_scopes(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	struct raw_frames *raw = d->raw;
	const int current = d->current;
	const unsigned char *p = k->p, *limit = k->end - FAST_BYTES;
	const uint64_t mask = d->mask;
	uint64_t base = d->cs->tick_base[current];
	uint32_t dep = d->depth[current];
	const size_t names = d->cs->names.len;
	const uint32_t *lens = d->cs->name_lens.data;
	struct item *fast = (struct item *)raw->items.data + raw->items.len;
	struct item *const start = fast;
	/* No further than the frame's records may go: the record past them
	 * is left to decode_record, which says so. */
	struct item *const fast_end = fast + (raw->items.cap - raw->items.len <
					      FORMAT_MAX_FRAME_RECORDS - d->records ?
					      raw->items.cap - raw->items.len :
					      FORMAT_MAX_FRAME_RECORDS - d->records);
	uint32_t nodes = d->nodes;
	uint64_t name_bytes = d->name_bytes;
	/* Registers are short here: each bound is one, and a difference
	 * beyond the valid bits is one above mask. */
	while (p <= limit && fast < fast_end) {
		unsigned t = p[0], n;
		const unsigned char *q = p + 1;
		uint64_t id = 0, z;
		bool close = t == FORMAT_TAG_SCOPE_END;
		if (!close) {
			if (t - FORMAT_TAG_SCOPE_BEGIN >=
				    FORMAT_TAG_SCOPE_BEGIN_NO_TICKS - FORMAT_TAG_SCOPE_BEGIN ||
			    dep >= FORMAT_MAX_DEPTH || nodes >= FORMAT_MAX_FRAME_NODES)
				break;
			if (!(n = varint_unchecked(q, &id)) || id >= names ||
			    name_bytes + lens[id] > FORMAT_MAX_FRAME_NAME_BYTES)
				break;
			q += n;
		}
		if (!(n = varint_unchecked(q, &z)) || z > mask)
			break;
		base = (base + ((z >> 1) ^ (0 - (z & 1)))) & mask;
		/* Field by field: a compound literal is zeroed whole first. */
		fast->type = close ? ITEM_END : ITEM_BEGIN;
		fast->kind = CRUMBS_EVENT_SCOPE;
		fast->level = close ? 0 : (uint8_t)(t - FORMAT_TAG_SCOPE_BEGIN);
		fast->flags = ITEM_HAS_T1;
		fast->queue = (uint32_t)current;
		fast->a = (uint32_t)id;
		fast->b = 0;
		fast->t1 = (int64_t)base;
		fast->t2 = 0;
		fast++;
		if (!close) {
			dep++;
			nodes++;
			name_bytes += lens[id];
		} else if (dep) {
			dep--;
		}
		p = q + n;
	}
	d->records += (uint32_t)(fast - start);
	d->nodes = nodes;
	d->name_bytes = name_bytes;
	raw->items.len = (size_t)(fast - (struct item *)raw->items.data);
	d->cs->tick_base[current] = base;
	d->depth[current] = dep;
	k->p = p;
}

/* The limits of a frame (format/FORMAT.md, "Limits"). */
static bool too_many_records(struct cursor *k)
{
	return cur_fail(k, "more than 1048576 records in a frame");
}

/* A scope, an event or a leaf event named by string `name`, counted
 * against them before anything is kept of it. */
static inline bool count_node(struct frame_decoder *d, uint32_t name)
{
	if (d->nodes >= FORMAT_MAX_FRAME_NODES)
		return cur_fail(d->k, "more than 262144 scopes and events in a frame");
	d->nodes++;
	d->name_bytes += ((const uint32_t *)d->cs->name_lens.data)[name];
	if (d->name_bytes > FORMAT_MAX_FRAME_NAME_BYTES)
		return cur_fail(d->k, "names of a frame's scopes and events longer than 16 MiB in all");
	return true;
}

/* The rules of where records may be. */
static inline bool need_queue(const struct frame_decoder *d)
{
	return d->current >= 0 || cur_fail(d->k, "scope record with no current queue");
}

static inline bool need_ticks(const struct frame_decoder *d)
{
	if (!d->in_submit)
		return cur_fail(d->k, "timestamp outside a submission");
	if (d->queues[d->current].timestamp_valid_bits == 0)
		return cur_fail(d->k, "timestamp on a queue without timestamps");
	return true;
}

/* A timestamp of the current queue, which must have them. */
static inline bool read_ticks(struct frame_decoder *d, uint64_t *t)
{
	return need_ticks(d) && get_ticks(d->k, &d->cs->tick_base[d->current],
					  d->queues[d->current].timestamp_valid_bits, t);
}

/* A record's one timestamp, into it->t1. */
static inline bool read_t1(struct frame_decoder *d, struct item *it)
{
	uint64_t t;
	if (!read_ticks(d, &t))
		return false;
	it->flags = ITEM_HAS_T1;
	it->t1 = (int64_t)t;
	return true;
}

/* FRAME_BEGIN: the frame's number and when it began. */
static bool frame_begin(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	struct chunk_state *cs = d->cs;
	unsigned tag;
	uint64_t n;

	if (!get_u8(k, &tag))
		return false;
	if (tag != FORMAT_TAG_FRAME_BEGIN) {
		k->p--;
		return cur_fail(k, "a frame must start with FRAME_BEGIN");
	}
	if (!get_varint(k, &n))
		return false;
	if (cs->frames_done == 0) {
		d->span->number = n;
	} else {
		if (n >= UINT64_MAX - cs->prev_frame)
			return cur_fail(k, "frame number out of range");
		d->span->number = cs->prev_frame + 1 + n;
	}
	return get_cpu(k, &cs->cpu_cursor, &d->span->cpu_begin_ns);
}

/* FRAME_END, after its tag: the frame is complete. */
static bool frame_end(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	struct raw_span *span = d->span;
	uint64_t flags;
	uint32_t dropped;

	if (d->in_submit)
		return cur_fail(k, "frame ends inside a submission");
	if (!get_cpu(k, &d->cs->cpu_cursor, &span->cpu_end_ns) || !get_varint(k, &flags) ||
	    !get_u32(k, &dropped, UINT32_MAX, "dropped scope count out of range"))
		return false;
	if (span->cpu_end_ns < span->cpu_begin_ns)
		return cur_fail(k, "frame ends before it begins");
	if (flags & ~(uint64_t)FORMAT_FRAME_FLAGS_KNOWN)
		return cur_fail(k, "unknown frame flags");
	span->flags = (uint32_t)flags;
	span->dropped_scopes = dropped;
	d->cs->prev_frame = span->number;
	d->cs->frames_done++;
	return true;
}

static bool frame_calibration(struct frame_decoder *d)
{
	struct raw_calibration s;
	if (d->in_submit)
		return cur_fail(d->k, "calibration inside a submission");
	if (!parse_calibration(d->k, d->setup, &s))
		return false;
	struct raw_calibration *slot = vec_push(&d->raw->calibrations, sizeof(*slot));
	if (!slot)
		return cur_fail(d->k, "out of memory");
	*slot = s;
	return true;
}

static bool queue_ready(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	uint32_t q;
	if (d->in_submit)
		return cur_fail(k, "QUEUE_READY inside a submission");
	if (!get_index(k, &q, d->queue_count, "unknown queue"))
		return false;
	if (d->queues[q].timestamp_valid_bits == 0)
		return cur_fail(k, "timestamp on a queue without timestamps");
	struct raw_ready *r = vec_push(&d->raw->readies, sizeof(*r));
	if (!r)
		return cur_fail(k, "out of memory");
	r->queue = q;
	return get_ticks(k, &d->cs->tick_base[q], d->queues[q].timestamp_valid_bits, &r->ticks);
}

/* A count of semaphore operations, then the operations, appended to
 * raw->ops; each counts as one of the frame's records. Inline: called, it
 * takes more than the loop it holds. */
static inline __attribute__((always_inline)) bool
submit_ops(struct frame_decoder *d, uint32_t *count)
{
	struct cursor *k = d->k;
	struct raw_frames *raw = d->raw;
	uint32_t n;
	if (!get_u32(k, &n, FORMAT_MAX_SEMAPHORE_OPS, "more than 1024 semaphore operations"))
		return false;
	if (n > FORMAT_MAX_FRAME_RECORDS - d->records)
		return too_many_records(k);
	d->records += n;
	*count = n;
	for (uint32_t i = 0; i < n; i++) {
		struct raw_op *op = vec_push(&raw->ops, sizeof(*op));
		if (!op)
			return cur_fail(k, "out of memory");
		if (!get_u32(k, &op->semaphore, UINT32_MAX, "semaphore id out of range") ||
		    !get_varint(k, &op->value))
			return false;
	}
	return true;
}

/* SUBMIT, with or without its GPU start: opens a submission. */
static inline bool submit_begin(struct frame_decoder *d, unsigned tag)
{
	struct cursor *k = d->k;
	struct raw_frames *raw = d->raw;
	uint32_t q;
	if (d->in_submit)
		return cur_fail(k, "submissions do not nest");
	if (!get_index(k, &q, d->queue_count, "unknown queue"))
		return false;
	struct raw_submit *s = vec_push(&raw->submits, sizeof(*s));
	struct item *it = s ? item_push(raw, ITEM_SUBMIT, q) : NULL;
	if (!it)
		return cur_fail(k, "out of memory");
	memset(s, 0, sizeof(*s));
	it->a = (uint32_t)(raw->submits.len - 1 - d->span->first[RAW_SUBMITS]);
	d->current = (int)q;
	d->in_submit = true;
	if (d->queues[q].timestamp_valid_bits) {
		d->timed = true;
		d->mask = bits_mask(d->queues[q].timestamp_valid_bits);
	}
	if (!get_cpu(k, &d->cs->cpu_cursor, &s->cpu_ns) ||
	    (tag == FORMAT_TAG_SUBMIT && !read_t1(d, it)))
		return false;
	s->first_op = (uint32_t)(raw->ops.len - d->span->first[RAW_OPS]);
	return submit_ops(d, &s->wait_count) && submit_ops(d, &s->signal_count);
}

/* SUBMIT_END, with or without its GPU end. */
static inline bool submit_end(struct frame_decoder *d, unsigned tag)
{
	struct item *it;
	if (!d->in_submit)
		return cur_fail(d->k, "SUBMIT_END outside a submission");
	if (!(it = item_push(d->raw, ITEM_SUBMIT_END, (uint32_t)d->current)))
		return cur_fail(d->k, "out of memory");
	if (tag == FORMAT_TAG_SUBMIT_END && !read_t1(d, it))
		return false;
	d->in_submit = false;
	d->timed = false;
	return true;
}

/* UNRECORDED: command buffers of the open submission the capture holds
 * nothing of. */
static bool unrecorded(struct frame_decoder *d)
{
	uint32_t count;
	if (!d->in_submit)
		return cur_fail(d->k, "UNRECORDED outside a submission");
	if (!get_u32(d->k, &count, UINT32_MAX, "unrecorded command buffer count out of range"))
		return false;
	if (count == 0)
		return cur_fail(d->k, "UNRECORDED of no command buffer");
	struct raw_submit *s = (struct raw_submit *)d->raw->submits.data + d->raw->submits.len - 1;
	s->unrecorded = count > UINT32_MAX - s->unrecorded ? UINT32_MAX : s->unrecorded + count;
	return true;
}

static bool host_signal(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	if (d->in_submit)
		return cur_fail(k, "HOST_SIGNAL inside a submission");
	struct raw_host_signal *h = vec_push(&d->raw->host_signals, sizeof(*h));
	if (!h)
		return cur_fail(k, "out of memory");
	return get_u32(k, &h->semaphore, UINT32_MAX, "semaphore id out of range") &&
	       get_varint(k, &h->value) && get_cpu(k, &d->cs->cpu_cursor, &h->cpu_ns);
}

static bool select_queue(struct frame_decoder *d)
{
	uint32_t q;
	if (d->in_submit)
		return cur_fail(d->k, "SELECT_QUEUE inside a submission");
	if (!get_index(d->k, &q, d->queue_count, "unknown queue"))
		return false;
	d->current = (int)q;
	return true;
}

/* SCOPE_BEGIN at a level and EVENT_BEGIN, each with or without its
 * timestamp. */
static inline bool scope_begin(struct frame_decoder *d, unsigned tag)
{
	struct cursor *k = d->k;
	bool event = tag == FORMAT_TAG_EVENT_BEGIN || tag == FORMAT_TAG_EVENT_BEGIN_NO_TICKS;
	bool ticks = tag < FORMAT_TAG_SCOPE_BEGIN_NO_TICKS || tag == FORMAT_TAG_EVENT_BEGIN;
	uint32_t kind = CRUMBS_EVENT_SCOPE, name;
	struct item *it;

	if (!need_queue(d))
		return false;
	if (event &&
	    (!get_u32(k, &kind, UINT32_MAX, "unknown event kind") ||
	     (kind != CRUMBS_EVENT_RENDER_PASS && kind != CRUMBS_EVENT_OTHER &&
	      !cur_fail(k, "an event that contains others must be a render pass or other"))))
		return false;
	if (!get_string_id(k, d->cs, &name) || !count_node(d, name))
		return false;
	if (!(it = item_push(d->raw, ITEM_BEGIN, (uint32_t)d->current)))
		return cur_fail(k, "out of memory");
	it->kind = (uint8_t)kind;
	it->level = event ? CRUMBS_DETAIL_MAX :
		    ticks ? (uint8_t)(tag - FORMAT_TAG_SCOPE_BEGIN) :
		    (uint8_t)(tag - FORMAT_TAG_SCOPE_BEGIN_NO_TICKS);
	it->a = name;
	if (ticks && !read_t1(d, it))
		return false;
	if (++d->depth[d->current] > FORMAT_MAX_DEPTH)
		return cur_fail(k, "scopes nested deeper than 255");
	return true;
}

/* SCOPE_END, with or without its timestamp. */
static inline bool scope_end(struct frame_decoder *d, unsigned tag)
{
	struct item *it;
	if (!need_queue(d))
		return false;
	if (!(it = item_push(d->raw, ITEM_END, (uint32_t)d->current)))
		return cur_fail(d->k, "out of memory");
	if (tag == FORMAT_TAG_SCOPE_END && !read_t1(d, it))
		return false;
	if (d->depth[d->current])
		d->depth[d->current]--;
	return true;
}

/* LEAF, with or without its begin and end. */
static inline bool leaf(struct frame_decoder *d, unsigned tag)
{
	struct cursor *k = d->k;
	struct raw_frames *raw = d->raw;
	uint32_t kind, name;
	struct item *it;

	if (!need_queue(d))
		return false;
	if (!get_u32(k, &kind, UINT32_MAX, "unknown leaf kind") ||
	    ((kind < CRUMBS_EVENT_DRAW || kind > CRUMBS_EVENT_OTHER) &&
	     !cur_fail(k, "unknown leaf kind")) ||
	    !get_string_id(k, d->cs, &name) || !count_node(d, name) || !get_counts(k, raw))
		return false;
	if (!(it = item_push(raw, ITEM_LEAF, (uint32_t)d->current)))
		return cur_fail(k, "out of memory");
	it->kind = (uint8_t)kind;
	it->level = CRUMBS_DETAIL_MAX;
	it->a = name;
	it->b = (uint32_t)(raw->counts.len - 1 - d->span->first[RAW_COUNTS]);
	if (tag == FORMAT_TAG_LEAF) {
		uint64_t t1, t2;
		if (!read_ticks(d, &t1) || !read_ticks(d, &t2))
			return false;
		it->flags = ITEM_HAS_T1 | ITEM_HAS_T2;
		it->t1 = (int64_t)t1;
		it->t2 = (int64_t)t2;
	}
	if (d->depth[d->current] >= FORMAT_MAX_DEPTH)
		return cur_fail(k, "scopes nested deeper than 255");
	return true;
}

/* COUNTS: added to the innermost scope when the model is built. */
static bool counts(struct frame_decoder *d)
{
	struct item *it;
	if (!need_queue(d) || !get_counts(d->k, d->raw))
		return false;
	if (!(it = item_push(d->raw, ITEM_COUNTS, (uint32_t)d->current)))
		return cur_fail(d->k, "out of memory");
	it->b = (uint32_t)(d->raw->counts.len - 1 - d->span->first[RAW_COUNTS]);
	return true;
}

/* Vendor counter set `set` as the setup defined it, or NULL. */
static const struct capture_counter_set *vendor_set(const struct frame_decoder *d, uint64_t set)
{
	if (!set || set > CRUMBS_MAX_COUNTER_SETS || !d->setup->set_index[set])
		return NULL;
	return (const struct capture_counter_set *)d->setup->counter_sets.data +
	       d->setup->set_index[set] - 1;
}

/* COUNTERS of a vendor counter set (since 1.5): as the pipeline
 * statistics', an item per value. */
static bool set_counters(struct frame_decoder *d, unsigned tag, uint64_t set, uint64_t mask)
{
	struct cursor *k = d->k;
	const struct capture_counter_set *s = vendor_set(d, set);
	if (!s)
		return cur_fail(k, "COUNTERS of an unknown set");
	if (!mask || (s->count < 64 && mask >> s->count))
		return cur_fail(k, "COUNTERS mask out of range");
	uint32_t n = (uint32_t)__builtin_popcountll(mask);
	if (n > FORMAT_MAX_FRAME_RECORDS - d->records)
		return too_many_records(k);
	d->records += n;
	for (uint32_t i = 0; i < s->count; i++) {
		uint64_t v;
		if (!(mask >> i & 1))
			continue;
		if (!get_varint(k, &v))
			return false;
		if (v > (uint64_t)INT64_MAX)
			return cur_fail(k, "counter value out of range");
		struct item *it = item_push(d->raw, ITEM_COUNTER, (uint32_t)d->current);
		if (!it)
			return cur_fail(k, "out of memory");
		it->a = COUNTER_ITEM_VENDOR((uint32_t)set, i);
		it->b = tag == FORMAT_TAG_LEAF_COUNTERS;
		it->t1 = (int64_t)v;
	}
	return true;
}

/* COUNTERS (since 1.5): an item per value, each counted as a record of
 * the frame, so that the items a frame holds stay bounded by its
 * records. */
static bool counters(struct frame_decoder *d, unsigned tag)
{
	struct cursor *k = d->k;
	uint64_t set, mask;
	if (!need_queue(d) || !get_varint(k, &set) || !get_varint(k, &mask))
		return false;
	if (set != FORMAT_COUNTER_SET_PIPELINE)
		return set_counters(d, tag, set, mask);
	if (!mask || (mask & ~(uint64_t)FORMAT_PIPELINE_COUNTER_BITS))
		return cur_fail(k, "COUNTERS mask out of range");
	uint32_t n = (uint32_t)__builtin_popcountll(mask);
	if (n > FORMAT_MAX_FRAME_RECORDS - d->records)
		return too_many_records(k);
	d->records += n;
	for (uint32_t i = 0; i < CRUMBS_PIPELINE_COUNTERS; i++) {
		uint64_t v;
		if (!(mask & (1u << i)))
			continue;
		if (!get_varint(k, &v))
			return false;
		if (v > (uint64_t)INT64_MAX)
			return cur_fail(k, "counter value out of range");
		struct item *it = item_push(d->raw, ITEM_COUNTER, (uint32_t)d->current);
		if (!it)
			return cur_fail(k, "out of memory");
		it->a = i;
		it->b = tag == FORMAT_TAG_LEAF_COUNTERS;
		it->t1 = (int64_t)v;
	}
	return true;
}

static bool counters_unknown(struct frame_decoder *d, unsigned tag)
{
	struct item *it;
	uint64_t set;
	if (!need_queue(d) || !get_varint(d->k, &set))
		return false;
	if (set != FORMAT_COUNTER_SET_PIPELINE) {
		/* A vendor set's: an ITEM_COUNTER that says so. */
		if (!vendor_set(d, set))
			return cur_fail(d->k, "COUNTERS_UNKNOWN of an unknown set");
		if (!(it = item_push(d->raw, ITEM_COUNTER, (uint32_t)d->current)))
			return cur_fail(d->k, "out of memory");
		it->a = COUNTER_ITEM_VENDOR((uint32_t)set, COUNTER_ITEM_UNKNOWN);
		it->b = tag == FORMAT_TAG_LEAF_COUNTERS_UNKNOWN;
		it->t1 = 0;
		return true;
	}
	if (!(it = item_push(d->raw, ITEM_COUNTERS_UNKNOWN, (uint32_t)d->current)))
		return cur_fail(d->k, "out of memory");
	it->b = tag == FORMAT_TAG_LEAF_COUNTERS_UNKNOWN;
	return true;
}

static bool render_area(struct frame_decoder *d)
{
	uint32_t width, height;
	struct item *it;
	if (!need_queue(d) ||
	    !get_u32(d->k, &width, FORMAT_MAX_RENDER_SIDE, "render area out of range") ||
	    !get_u32(d->k, &height, FORMAT_MAX_RENDER_SIDE, "render area out of range"))
		return false;
	if (!width || !height)
		return cur_fail(d->k, "empty render area");
	if (!(it = item_push(d->raw, ITEM_RENDER_AREA, (uint32_t)d->current)))
		return cur_fail(d->k, "out of memory");
	it->a = width;
	it->b = height;
	return true;
}

/* A CPU record appended to the frame's, or NULL when out of memory. */
static struct raw_cpu *cpu_push(struct frame_decoder *d, uint8_t type)
{
	struct raw_cpu *c = vec_push(&d->raw->cpu, sizeof(*c));
	if (c) {
		memset(c, 0, sizeof(*c));
		c->type = type;
		c->thread = (uint32_t)d->thread;
	}
	return c;
}

/* CPU_THREAD: the thread the CPU scopes that follow are on. */
static bool cpu_thread(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	uint32_t tid, name, i;
	if (!get_u32(k, &tid, UINT32_MAX, "thread id out of range") ||
	    !get_string_id(k, d->cs, &name))
		return false;
	for (i = 0; i < d->thread_count && d->threads[i].tid != tid; i++)
		;
	if (i == d->thread_count) {
		if (i >= FORMAT_MAX_CPU_THREADS)
			return cur_fail(k, "more than 256 CPU threads in a frame");
		d->threads[i] = (struct cpu_decoder_thread){ tid, 0, UINT32_MAX };
		d->thread_count++;
		d->span->cpu_threads = d->thread_count;
	}
	d->thread = (int)i;
	struct raw_cpu *c = cpu_push(d, RAW_CPU_THREAD);
	if (!c)
		return cur_fail(k, "out of memory");
	c->a = tid;
	c->b = name;
	return true;
}

/* CPU_BEGIN and CPU_WAIT_BEGIN at a level: a scope opens on the current
 * thread. */
static bool cpu_begin(struct frame_decoder *d, unsigned tag)
{
	bool wait = tag >= FORMAT_TAG_CPU_WAIT_BEGIN;
	struct cursor *k = d->k;
	uint32_t name;
	if (d->thread < 0)
		return cur_fail(k, "CPU scope with no current thread");
	if (!get_string_id(k, d->cs, &name) || !count_node(d, name))
		return false;
	struct cpu_decoder_thread *t = &d->threads[d->thread];
	struct raw_cpu *c = cpu_push(d, RAW_CPU_BEGIN);
	if (!c)
		return cur_fail(k, "out of memory");
	c->level = (uint8_t)(tag - (wait ? FORMAT_TAG_CPU_WAIT_BEGIN : FORMAT_TAG_CPU_BEGIN));
	c->wait = wait;
	c->a = name;
	c->b = t->top;
	if (!get_cpu(k, &d->cs->cpu_cursor, &c->cpu_ns))
		return false;
	if (++t->depth > FORMAT_MAX_DEPTH)
		return cur_fail(k, "CPU scopes nested deeper than 255");
	t->top = (uint32_t)(d->raw->cpu.len - 1 - d->span->first[RAW_CPU]);
	return true;
}

/* CPU_END: the current thread's innermost open scope ends; with none
 * open, kept as unmatched. */
static bool cpu_end(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	if (d->thread < 0)
		return cur_fail(k, "CPU scope with no current thread");
	struct cpu_decoder_thread *t = &d->threads[d->thread];
	struct raw_cpu *c = cpu_push(d, RAW_CPU_END);
	if (!c)
		return cur_fail(k, "out of memory");
	if (!get_cpu(k, &d->cs->cpu_cursor, &c->cpu_ns))
		return false;
	if (t->depth) {
		const struct raw_cpu *open = (const struct raw_cpu *)d->raw->cpu.data +
					     d->span->first[RAW_CPU] + t->top;
		if (c->cpu_ns < open->cpu_ns)
			return cur_fail(k, "CPU scope ends before it begins");
		t->top = open->b;
		t->depth--;
	}
	return true;
}

/* FRAME_THREAD (since 1.4): the thread that ends frames; given again,
 * replaces it. */
static bool frame_thread(struct frame_decoder *d)
{
	uint32_t tid;
	if (!get_u32(d->k, &tid, UINT32_MAX, "thread id out of range"))
		return false;
	d->span->has_frame_thread = true;
	d->span->frame_thread_tid = tid;
	return true;
}

/*
 * The index of the timeline named by string `id` among the `*count` of
 * `ids`, added when new. Two ids of equal strings name the same timeline,
 * as a name does everywhere else. False past FORMAT_MAX_TIMELINES.
 */
static bool timeline_index(struct frame_decoder *d, uint32_t *ids, uint32_t *count,
			   uint32_t id, uint32_t *out)
{
	const unsigned char *const *names = d->cs->names.data;
	const uint32_t *lens = d->cs->name_lens.data;
	uint32_t i;
	for (i = 0; i < *count; i++)
		if (ids[i] == id ||
		    (lens[ids[i]] == lens[id] && memcmp(names[ids[i]], names[id], lens[id]) == 0))
			break;
	if (i == *count) {
		if (i >= FORMAT_MAX_TIMELINES)
			return false;
		ids[(*count)++] = id;
	}
	*out = i;
	return true;
}

/* A task or timeline record appended to the frame's, or NULL when out of
 * memory. */
static struct raw_task *task_push(struct frame_decoder *d, uint8_t type)
{
	struct raw_task *t = vec_push(&d->raw->tasks, sizeof(*t));
	if (t) {
		memset(t, 0, sizeof(*t));
		t->type = type;
	}
	return t;
}

/* TIMELINE_FRAME (since 1.4): a boundary of a frame of another kind. */
static bool timeline_frame(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	uint32_t id, index;
	if (!get_string_id(k, d->cs, &id))
		return false;
	if (!timeline_index(d, d->mark_timelines, &d->mark_timeline_count, id, &index))
		return cur_fail(k, "frames of more than 256 timelines in a frame");
	struct raw_task *t = task_push(d, RAW_MARK);
	if (!t)
		return cur_fail(k, "out of memory");
	t->timeline = id;
	return get_cpu(k, &d->cs->cpu_cursor, &t->cpu_ns);
}

/* A task's id, which is never 0. */
static bool get_task_id(struct cursor *k, uint64_t *id)
{
	if (!get_varint(k, id))
		return false;
	return *id != 0 || cur_fail(k, "task id 0");
}

/* TASK_BEGIN, TASK_BEGUN_EARLIER, TASK_STATE, TASK_END and TASK_DEPEND
 * (since 1.4). A task and each state it enters count as a scope against
 * the frame's limits, whether the model takes them or not. */
static bool task_record(struct frame_decoder *d, unsigned tag)
{
	struct cursor *k = d->k;
	struct raw_task *t;
	uint64_t task;
	uint32_t timeline = 0, index = 0, name = 0, state = 0;
	uint64_t blocking = 0;

	if (!get_task_id(k, &task))
		return false;
	switch (tag) {
	case FORMAT_TAG_TASK_BEGIN:
	case FORMAT_TAG_TASK_BEGUN_EARLIER:
		if (!get_string_id(k, d->cs, &timeline) || !get_string_id(k, d->cs, &name) ||
		    !get_string_id(k, d->cs, &state))
			return false;
		if (!timeline_index(d, d->timelines, &d->timeline_count, timeline, &index))
			return cur_fail(k, "tasks on more than 256 timelines in a frame");
		if (!count_node(d, name) || !count_node(d, state))
			return false;
		d->span->task_timelines = d->timeline_count;
		break;
	case FORMAT_TAG_TASK_STATE:
		if (!get_string_id(k, d->cs, &state) || !count_node(d, state))
			return false;
		break;
	case FORMAT_TAG_TASK_DEPEND:
		if (!get_string_id(k, d->cs, &state) || !get_task_id(k, &blocking))
			return false;
		break;
	default:
		break;
	}
	static const uint8_t types[] = {
		[FORMAT_TAG_TASK_BEGIN - FORMAT_TAG_TASK_BEGIN] = RAW_TASK_BEGIN,
		[FORMAT_TAG_TASK_BEGUN_EARLIER - FORMAT_TAG_TASK_BEGIN] = RAW_TASK_BEGIN,
		[FORMAT_TAG_TASK_STATE - FORMAT_TAG_TASK_BEGIN] = RAW_TASK_STATE,
		[FORMAT_TAG_TASK_END - FORMAT_TAG_TASK_BEGIN] = RAW_TASK_END,
		[FORMAT_TAG_TASK_DEPEND - FORMAT_TAG_TASK_BEGIN] = RAW_TASK_DEPEND,
	};
	if (!(t = task_push(d, types[tag - FORMAT_TAG_TASK_BEGIN])))
		return cur_fail(k, "out of memory");
	t->earlier = tag == FORMAT_TAG_TASK_BEGUN_EARLIER;
	t->timeline = timeline;
	t->timeline_index = (uint8_t)index;
	t->name = name;
	t->state = state;
	t->task = task;
	t->blocking = blocking;
	return get_cpu(k, &d->cs->cpu_cursor, &t->cpu_ns);
}

/* MEMORY (since 1.5): a heap of a GPU in the frame, at most once. */
static bool memory_record(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	struct frame_memory m;
	unsigned mask;
	memset(&m, 0, sizeof(m));
	if (!get_index(k, &m.gpu, d->setup->gpus.len, "memory of an unknown gpu") ||
	    !get_u32(k, &m.heap, CRUMBS_MAX_MEMORY_HEAPS - 1, "memory heap out of range") ||
	    !get_u32(k, &m.flags, FORMAT_MEMORY_FLAGS_KNOWN, "unknown memory heap flags") ||
	    !get_varint(k, &m.size) || !get_u8(k, &mask))
		return false;
	if (mask & ~(FORMAT_MEMORY_TRACKED | FORMAT_MEMORY_BUDGET))
		return cur_fail(k, "unknown memory mask");
	if (d->memory_heaps[m.gpu] & (1u << m.heap))
		return cur_fail(k, "memory of a heap given twice in a frame");
	d->memory_heaps[m.gpu] |= (uint16_t)(1u << m.heap);
	m.tracked = mask & FORMAT_MEMORY_TRACKED;
	m.budgeted = mask & FORMAT_MEMORY_BUDGET;
	if (m.tracked &&
	    (!get_varint(k, &m.allocated) || !get_varint(k, &m.freed) ||
	     !get_varint(k, &m.allocations) || !get_varint(k, &m.frees) ||
	     !get_varint(k, &m.in_use) || !get_varint(k, &m.high)))
		return false;
	if (m.high < m.in_use)
		return cur_fail(k, "memory high-water below the bytes in use");
	if (m.budgeted && (!get_varint(k, &m.usage) || !get_varint(k, &m.budget)))
		return false;
	struct frame_memory *slot = vec_push(&d->raw->memory, sizeof(*slot));
	if (!slot)
		return cur_fail(k, "out of memory");
	*slot = m;
	return true;
}

/* PRESENT (since 1.5): a present to a swapchain. */
static bool present(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	struct frame_present p = { 0 };
	uint64_t duration, mode, flags, refresh;
	if (!get_varint(k, &p.swapchain) || !get_cpu(k, &d->cs->cpu_cursor, &p.cpu_ns) ||
	    !get_varint(k, &duration) || !get_varint(k, &p.id) || !get_varint(k, &mode) ||
	    !get_varint(k, &flags) || !get_varint(k, &refresh))
		return false;
	if (duration > FORMAT_MAX_PRESENT_NS)
		return cur_fail(k, "present longer than 2^40 ns");
	if (mode > FORMAT_MAX_PRESENT_MODE)
		return cur_fail(k, "unknown present mode");
	if (flags & ~(uint64_t)FORMAT_PRESENT_FLAGS_KNOWN)
		return cur_fail(k, "unknown present flags");
	if (refresh > FORMAT_MAX_REFRESH_NS)
		return cur_fail(k, "refresh period longer than 10 s");
	p.duration_ns = (int64_t)duration;
	p.mode = (uint8_t)mode;
	p.flags = (uint8_t)flags;
	p.refresh_ns = (int64_t)refresh;
	struct frame_present *out = vec_push(&d->raw->presents, sizeof(*out));
	if (!out)
		return cur_fail(k, "out of memory");
	*out = p;
	return true;
}

/* PRESENT_SHOWN (since 1.5): when a present was shown. */
static bool present_shown(struct frame_decoder *d)
{
	struct cursor *k = d->k;
	struct frame_shown s = { 0 };
	uint64_t source, ns;
	if (!get_varint(k, &s.swapchain) || !get_varint(k, &s.id) || !get_varint(k, &source) ||
	    !get_varint(k, &ns))
		return false;
	if (s.id == 0)
		return cur_fail(k, "shown present with id 0");
	if (source != CRUMBS_SHOWN_PRESENT_WAIT && source != CRUMBS_SHOWN_DISPLAY_TIMING)
		return cur_fail(k, "unknown source of a shown time");
	if (ns > INT64_MAX)
		return cur_fail(k, "shown time out of range");
	s.source = (uint8_t)source;
	s.shown_ns = (int64_t)ns;
	struct frame_shown *out = vec_push(&d->raw->shown, sizeof(*out));
	if (!out)
		return cur_fail(k, "out of memory");
	*out = s;
	return true;
}

/* A record of a frame but FRAME_BEGIN and FRAME_END, after its tag, which
 * began at `record`. */
static inline bool decode_record(struct frame_decoder *d, unsigned tag,
				 const unsigned char *record)
{
	switch (tag) {
	case FORMAT_TAG_STRING:
		return parse_string(d->k, d->cs);
	case FORMAT_TAG_CALIBRATION:
		return frame_calibration(d);
	case FORMAT_TAG_QUEUE_READY:
		return queue_ready(d);
	case FORMAT_TAG_SUBMIT:
	case FORMAT_TAG_SUBMIT_NO_TICKS:
		return submit_begin(d, tag);
	case FORMAT_TAG_SUBMIT_END:
	case FORMAT_TAG_SUBMIT_END_NO_TICKS:
		return submit_end(d, tag);
	case FORMAT_TAG_HOST_SIGNAL:
		return host_signal(d);
	case FORMAT_TAG_SELECT_QUEUE:
		return select_queue(d);
	case FORMAT_TAG_UNRECORDED:
		return unrecorded(d);
	case FORMAT_TAG_SCOPE_BEGIN:
	case FORMAT_TAG_SCOPE_BEGIN + 1:
	case FORMAT_TAG_SCOPE_BEGIN + 2:
	case FORMAT_TAG_SCOPE_BEGIN + 3:
	case FORMAT_TAG_SCOPE_BEGIN_NO_TICKS:
	case FORMAT_TAG_SCOPE_BEGIN_NO_TICKS + 1:
	case FORMAT_TAG_SCOPE_BEGIN_NO_TICKS + 2:
	case FORMAT_TAG_SCOPE_BEGIN_NO_TICKS + 3:
	case FORMAT_TAG_EVENT_BEGIN:
	case FORMAT_TAG_EVENT_BEGIN_NO_TICKS:
		return scope_begin(d, tag);
	case FORMAT_TAG_SCOPE_END:
	case FORMAT_TAG_SCOPE_END_NO_TICKS:
		return scope_end(d, tag);
	case FORMAT_TAG_LEAF:
	case FORMAT_TAG_LEAF_NO_TICKS:
		return leaf(d, tag);
	case FORMAT_TAG_COUNTS:
		return counts(d);
	case FORMAT_TAG_CPU_THREAD:
		return cpu_thread(d);
	case FORMAT_TAG_CPU_BEGIN:
	case FORMAT_TAG_CPU_BEGIN + 1:
	case FORMAT_TAG_CPU_BEGIN + 2:
	case FORMAT_TAG_CPU_BEGIN + 3:
		return cpu_begin(d, tag);
	case FORMAT_TAG_CPU_END:
		return cpu_end(d);
	case FORMAT_TAG_CPU_WAIT_BEGIN:
	case FORMAT_TAG_CPU_WAIT_BEGIN + 1:
	case FORMAT_TAG_CPU_WAIT_BEGIN + 2:
	case FORMAT_TAG_CPU_WAIT_BEGIN + 3:
		if (d->cs->version_minor < 4)
			break;
		return cpu_begin(d, tag);
	case FORMAT_TAG_FRAME_THREAD:
		if (d->cs->version_minor < 4)
			break;
		return frame_thread(d);
	case FORMAT_TAG_TIMELINE_FRAME:
		if (d->cs->version_minor < 4)
			break;
		return timeline_frame(d);
	case FORMAT_TAG_TASK_BEGIN:
	case FORMAT_TAG_TASK_BEGUN_EARLIER:
	case FORMAT_TAG_TASK_STATE:
	case FORMAT_TAG_TASK_END:
	case FORMAT_TAG_TASK_DEPEND:
		if (d->cs->version_minor < 4)
			break;
		return task_record(d, tag);
	case FORMAT_TAG_COUNTERS:
	case FORMAT_TAG_LEAF_COUNTERS:
		if (d->cs->version_minor < 5)
			break;
		return counters(d, tag);
	case FORMAT_TAG_COUNTERS_UNKNOWN:
	case FORMAT_TAG_LEAF_COUNTERS_UNKNOWN:
		if (d->cs->version_minor < 5)
			break;
		return counters_unknown(d, tag);
	case FORMAT_TAG_RENDER_AREA:
		if (d->cs->version_minor < 5)
			break;
		return render_area(d);
	case FORMAT_TAG_MEMORY:
		if (d->cs->version_minor < 5)
			break;
		return memory_record(d);
	case FORMAT_TAG_PRESENT:
		if (d->cs->version_minor < 5)
			break;
		return present(d);
	case FORMAT_TAG_PRESENT_SHOWN:
		if (d->cs->version_minor < 5)
			break;
		return present_shown(d);
	default:
		break;
	}
	d->k->p = record;
	return cur_fail(d->k, "unknown record tag");
}

/* One frame's records, FRAME_BEGIN to FRAME_END, appended to raw. */
static bool decode_frame(const struct setup *setup, struct cursor *k, struct chunk_state *cs,
			 struct raw_frames *raw, struct raw_span *span)
{
	uint32_t depth[FORMAT_MAX_QUEUES];
	struct cpu_decoder_thread threads[FORMAT_MAX_CPU_THREADS];
	uint32_t timelines[FORMAT_MAX_TIMELINES], mark_timelines[FORMAT_MAX_TIMELINES];
	uint16_t memory_heaps[FORMAT_MAX_GPUS];
	struct frame_decoder d;
	d.setup = setup;
	d.k = k;
	d.cs = cs;
	d.raw = raw;
	d.span = span;
	d.queues = setup->queues.data;
	d.queue_count = (uint32_t)setup->queues.len;
	d.current = -1;
	d.in_submit = false;
	d.timed = false;
	d.mask = 0;
	d.depth = depth;
	d.records = 0;
	d.nodes = 0;
	d.name_bytes = 0;
	d.threads = threads;
	d.thread_count = 0;
	d.thread = -1;
	d.timelines = timelines;
	d.timeline_count = 0;
	d.mark_timelines = mark_timelines;
	d.mark_timeline_count = 0;
	d.memory_heaps = memory_heaps;
	memset(memory_heaps, 0, sizeof(uint16_t) * d.setup->gpus.len);
	memset(depth, 0, sizeof(depth[0]) * d.queue_count);

	if (!frame_begin(&d))
		return false;
	for (;;) {
		if (d.timed && k->end - k->p >= FAST_BYTES)
			fast_scopes(&d);
		const unsigned char *record = k->p;
		unsigned tag;
		if (!get_u8(k, &tag))
			return false;
		if (tag == FORMAT_TAG_FRAME_END)
			return frame_end(&d);
		if (d.records >= FORMAT_MAX_FRAME_RECORDS) {
			k->p = record;
			return too_many_records(k);
		}
		d.records++;
		if (!decode_record(&d, tag, record))
			return false;
	}
}

bool records_decode_frame(const struct setup *setup, struct cursor *k, struct chunk_state *cs,
			  struct raw_frames *frames)
{
	struct vec *v[RAW_ARRAYS];
	size_t size[RAW_ARRAYS];
	struct raw_span *span = vec_push(&frames->spans, sizeof(*span));
	if (!span)
		return cur_fail(k, "out of memory");
	raw_frames_arrays(frames, v, size);
	for (int j = 0; j < RAW_ARRAYS; j++)
		span->first[j] = v[j]->len;
	span->placed = false;
	span->timestamps = 0;
	span->cpu_threads = 0;
	span->task_timelines = 0;
	span->has_frame_thread = false;
	span->frame_thread_tid = 0;
	if (decode_frame(setup, k, cs, frames, span))
		return true;
	for (int j = 0; j < RAW_ARRAYS; j++)
		v[j]->len = span->first[j];
	frames->spans.len--;
	return false;
}
