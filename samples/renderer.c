/* SPDX-License-Identifier: MIT */
/*
 * renderer.c: sample-renderer, a headless deferred renderer instrumented
 * with libcrumbs: cascaded shadow maps, a G-buffer pass, tiled deferred
 * lighting (on a compute-only queue when the device has one), bloom and
 * tonemapping, rendered offscreen; `make demo` captures one of its frames.
 * Each frame's CPU work is a small graph of jobs on two job threads
 * (samples/jobs.c), which record two of its three command buffers while
 * the render thread records the third.
 */
#include "../include/crumbs.h"
#include "jobs.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bloom_down.comp.h"
#include "bloom_up.comp.h"
#include "exposure.comp.h"
#include "gbuffer.frag.h"
#include "lighting.comp.h"
#include "mesh.vert.h"
#include "shadow.vert.h"
#include "tonemap.comp.h"

#define PROGRAM "sample-renderer"

#define EXIT_OK 0
#define EXIT_FAILURE_ 1
#define EXIT_USAGE 2

#define FRAMES_IN_FLIGHT 2
#define SHADOW_VIEWS 4
#define SHADOW_SIZE 512
#define BLOOM_LEVELS 5
#define MAX_LIGHTS 64 /* keep in step with the shaders */
#define GRID 16       /* objects on a GRID x GRID grid */
#define BATCH_OBJECTS 32
#define GRID_OBJECTS (GRID * GRID)
#define BATCHES (GRID_OBJECTS / BATCH_OBJECTS)
#define GROUND_OBJECT GRID_OBJECTS
#define OBJECT_COUNT (GRID_OBJECTS + 1)
#define LIGHT_TILE 16 /* lighting.comp's workgroup */
#define POST_GROUP 8  /* the post shaders' workgroups */
#define JOB_THREADS 2
/* The physics steps at a fixed rate, PHYSICS_STEPS steps every
 * PHYSICS_FRAMES frames, out of step with the frames drawn. */
#define PHYSICS_STEPS 3
#define PHYSICS_FRAMES 2

#define MIN_SIZE 64 /* keeps all BLOOM_LEVELS levels at least 2 texels */
#define MAX_SIZE 16384
#define MAX_FRAMES 100000000

#define ARRAY_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

struct extent {
	uint32_t width;
	uint32_t height;
};

/* Frames first to last recorded at a detail level (--record A:B[:D]). */
struct run {
	bool on;
	uint64_t first;
	uint64_t last; /* CRUMBS_RECORD_OPEN: until the renderer ends */
	int detail;
};

struct options {
	int64_t frames;
	int64_t duration_ms;   /* 0: --frames alone */
	int64_t capture_frame; /* -1: none */
	struct run record;
	int64_t record_every;  /* 0: --record once */
	struct extent size;
	int async_compute;      /* -1: when the device has a compute-only family */
	int shadow_secondaries;
	int counters;           /* -1: in captures where the device counts */
	int64_t device;         /* -1: choose */
	const char *settings;
	const char *capture_dir;
	bool validate;
	const char *output;
	bool quiet;
	bool timings;
	bool serial;
	bool stub_timestamps;
	int64_t mirror_labels;
	const char *queue_label;
	int64_t leak;           /* --leak: bytes leaked a frame; 0: none */
	bool help;
};

enum option_kind {
	OPTION_FLAG,   /* bool */
	OPTION_NUMBER, /* int64_t within [min, max] */
	OPTION_SIZE,   /* struct extent, WxH */
	OPTION_SWITCH, /* int, on|off */
	OPTION_RUN,    /* struct run, A:B[:D], frames within [min, max] */
	OPTION_TEXT    /* const char * */
};

struct option_spec {
	const char *name;
	const char *arg; /* NULL for flags */
	enum option_kind kind;
	size_t offset;
	int64_t min, max;
	const char *help;
};

#define OPT(field) offsetof(struct options, field)

static const struct option_spec option_specs[] = {
	{ "--frames", "N", OPTION_NUMBER, OPT(frames), 1, MAX_FRAMES,
	  "frames to render (default 5)" },
	{ "--duration", "MS", OPTION_NUMBER, OPT(duration_ms), 0, 3600000,
	  "go on rendering past --frames until MS milliseconds have passed since the "
	  "first frame (default 0)" },
	{ "--capture-frame", "N", OPTION_NUMBER, OPT(capture_frame), 0, MAX_FRAMES - 1,
	  "capture frame N (from 0) and print its GPU profile (default: none)" },
	{ "--record", "A:B[:D]", OPTION_RUN, OPT(record), 0, MAX_FRAMES - 1,
	  "record every frame from A to B (B empty: to the end) at detail level D "
	  "(0 to 3, default 1) into one capture file, as CRUMBS_RECORD=A:B:D does" },
	{ "--record-every", "N", OPTION_NUMBER, OPT(record_every), 1, MAX_FRAMES,
	  "with --record A:B, record frames A+N to B+N, A+2N to B+2N ... too, each a run "
	  "of its own, so that --timings compares frames recorded with frames between "
	  "runs in one process (N at least B - A + 12)" },
	{ "--settings", "'OPTIONS'", OPTION_TEXT, OPT(settings), 0, 0,
	  "report settings of that capture, as for 'crumbs report', "
	  "e.g. '--ascii --root *Post*'" },
	{ "--capture-dir", "DIR", OPTION_TEXT, OPT(capture_dir), 0, 0,
	  "where captures go (default: $CRUMBS_CAPTURE_DIR, else the current directory)" },
	{ "--size", "WxH", OPTION_SIZE, OPT(size), MIN_SIZE, MAX_SIZE,
	  "size of the rendered image (default 640x360)" },
	{ "--async-compute", "on|off", OPTION_SWITCH, OPT(async_compute), 0, 0,
	  "light on a compute-only queue (default: on when the device has one)" },
	{ "--shadow-secondaries", "on|off", OPTION_SWITCH, OPT(shadow_secondaries), 0, 0,
	  "record each shadow view in a secondary command buffer, placed with "
	  "crumbs_cmd_execute (default off)" },
	{ "--counters", "on|off", OPTION_SWITCH, OPT(counters), 0, 0,
	  "pipeline statistics per scope: off never, on in runs too (default: in "
	  "captures, where the device has pipelineStatisticsQuery)" },
	{ "--device", "INDEX", OPTION_NUMBER, OPT(device), 0, UINT32_MAX,
	  "physical device, in vkEnumeratePhysicalDevices order (default: a GPU, else the first)" },
	{ "--mirror-labels", "N", OPTION_NUMBER, OPT(mirror_labels), 0, CRUMBS_DETAIL_MAX + 1,
	  "outside captures, scopes of levels below N become debug labels (default 0)" },
	{ "--queue-label", "NAME", OPTION_TEXT, OPT(queue_label), 0, 0,
	  "wrap each frame's lighting submission in a debug-utils queue label NAME "
	  "(the crumbs layer times it)" },
	{ "--validate", NULL, OPTION_FLAG, OPT(validate), 0, 0,
	  "enable the Khronos validation layer; any warning or error fails the run" },
	{ "--output", "FILE", OPTION_TEXT, OPT(output), 0, 0,
	  "write the last frame's image to FILE as a binary PPM" },
	{ "--quiet", NULL, OPTION_FLAG, OPT(quiet), 0, 0,
	  "print only profile tables, warnings and errors" },
	{ "--timings", NULL, OPTION_FLAG, OPT(timings), 0, 0,
	  "print each frame's CPU time to stderr, the job threads' included (recording, "
	  "submitting, crumbs_frame; not waiting)" },
	{ "--serial", NULL, OPTION_FLAG, OPT(serial), 0, 0,
	  "wait for the device to finish each frame before the next begins, so that a "
	  "software driver's threads do not share the CPU with the frame --timings times" },
	{ "--stub-timestamps", NULL, OPTION_FLAG, OPT(stub_timestamps), 0, 0,
	  "give crumbs a vkCmdWriteTimestamp that does nothing, to measure crumbs' own CPU "
	  "cost apart from the driver's (results are filled in, every time zero)" },
	{ "--leak", "BYTES", OPTION_NUMBER, OPT(leak), 0, 1 << 30,
	  "each frame, allocate BYTES of device memory and keep them, beside BYTES more "
	  "freed in the same frame, telling crumbs of each (a leak that crumbs stats "
	  "shows; default 0)" },
	{ "--help", NULL, OPTION_FLAG, OPT(help), 0, 0, "show this help" },
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs(PROGRAM ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry '" PROGRAM " --help'.\n", stderr);
	return EXIT_USAGE;
}

static void print_help(void)
{
	printf("usage: " PROGRAM " [options]\n\n"
	       "Renders frames of a deferred scene offscreen with Vulkan, instrumented with\n"
	       "libcrumbs. With --capture-frame N, frame N is captured at full detail, its\n"
	       "GPU profile is printed and the capture is written to a file; with --record\n"
	       "A:B, frames A to B are recorded at a coarse detail level into one file.\n\n"
	       "options:\n");
	enum { LEFT = 24, WIDTH = 79 - LEFT - 4 };
	for (size_t i = 0; i < ARRAY_COUNT(option_specs); i++) {
		const struct option_spec *o = &option_specs[i];
		char left[64];
		snprintf(left, sizeof(left), "%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		if (strlen(left) > LEFT)
			printf("  %s\n", left);
		/* The help text wrapped at spaces into lines of WIDTH. */
		const char *text = o->help;
		bool first = strlen(left) <= LEFT;
		while (*text) {
			size_t len = strlen(text);
			if (len > WIDTH) {
				len = WIDTH;
				while (len > 0 && text[len] != ' ')
					len--;
				if (len == 0)
					len = WIDTH;
			}
			printf("  %-*s  %.*s\n", LEFT, first ? left : "", (int)len, text);
			first = false;
			text += len;
			while (*text == ' ')
				text++;
		}
	}
}

/* A whole decimal number within [min, max]; no sign, no spaces. */
static bool parse_number(const char *text, int64_t min, int64_t max, int64_t *out)
{
	if (text[0] < '0' || text[0] > '9')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno != 0 || *end != '\0' || v > (unsigned long long)max || (int64_t)v < min)
		return false;
	*out = (int64_t)v;
	return true;
}

static bool parse_size(const char *text, int64_t min, int64_t max, struct extent *out)
{
	char w[32];
	const char *x = strchr(text, 'x');
	if (!x || (size_t)(x - text) >= sizeof(w))
		return false;
	memcpy(w, text, (size_t)(x - text));
	w[x - text] = '\0';
	int64_t width, height;
	if (!parse_number(w, min, max, &width) || !parse_number(x + 1, min, max, &height))
		return false;
	out->width = (uint32_t)width;
	out->height = (uint32_t)height;
	return true;
}

/* A:B[:D]: frames A to B within [min, max], A <= B, or B empty for a run
 * that goes on to the end; D a detail level, 1 when left out. */
static bool parse_run(const char *text, int64_t min, int64_t max, struct run *out)
{
	char first[32];
	const char *colon = strchr(text, ':');
	if (!colon || (size_t)(colon - text) >= sizeof(first))
		return false;
	memcpy(first, text, (size_t)(colon - text));
	first[colon - text] = '\0';
	const char *last_text = colon + 1;
	const char *detail_text = strchr(last_text, ':');
	char last[32];
	size_t last_len = detail_text ? (size_t)(detail_text - last_text) : strlen(last_text);
	if (last_len >= sizeof(last))
		return false;
	memcpy(last, last_text, last_len);
	last[last_len] = '\0';
	int64_t a, b = -1, detail = 1;
	if (!parse_number(first, min, max, &a) ||
	    (last_len > 0 && (!parse_number(last, min, max, &b) || b < a)) ||
	    (detail_text && !parse_number(detail_text + 1, 0, CRUMBS_DETAIL_MAX, &detail)))
		return false;
	*out = (struct run){
		.on = true,
		.first = (uint64_t)a,
		.last = b < 0 ? CRUMBS_RECORD_OPEN : (uint64_t)b,
		.detail = (int)detail,
	};
	return true;
}

static int apply_option(struct options *opt, const struct option_spec *o, const char *value)
{
	void *field = (char *)opt + o->offset;
	switch (o->kind) {
	case OPTION_FLAG:
		*(bool *)field = true;
		return 0;
	case OPTION_NUMBER:
		if (!parse_number(value, o->min, o->max, (int64_t *)field))
			return usage_error("%s wants a whole number from %" PRId64 " to %" PRId64
					   ", not '%s'",
					   o->name, o->min, o->max, value);
		return 0;
	case OPTION_SIZE:
		if (!parse_size(value, o->min, o->max, (struct extent *)field))
			return usage_error("%s wants WxH with each from %" PRId64 " to %" PRId64
					   ", not '%s'",
					   o->name, o->min, o->max, value);
		return 0;
	case OPTION_SWITCH:
		if (strcmp(value, "on") == 0)
			*(int *)field = 1;
		else if (strcmp(value, "off") == 0)
			*(int *)field = 0;
		else
			return usage_error("%s wants 'on' or 'off', not '%s'", o->name, value);
		return 0;
	case OPTION_RUN:
		if (!parse_run(value, o->min, o->max, (struct run *)field))
			return usage_error("%s wants A:B[:D], frames A <= B from %" PRId64 " to %" PRId64
					   " (B empty: to the end) and a detail level D from 0 to %d, "
					   "not '%s'",
					   o->name, o->min, o->max, CRUMBS_DETAIL_MAX, value);
		return 0;
	case OPTION_TEXT:
		*(const char **)field = value;
		return 0;
	}
	return usage_error("internal error: option '%s'", o->name);
}

/* Returns 0, or EXIT_USAGE after saying why. Accepts --name VALUE and
 * --name=VALUE. */
static int parse_options(int argc, char **argv, struct options *opt)
{
	*opt = (struct options){
		.frames = 5,
		.capture_frame = -1,
		.size = { 640, 360 },
		.async_compute = -1,
		.counters = -1,
		.device = -1,
	};
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *eq = strchr(arg, '=');
		size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
		const struct option_spec *o = NULL;
		for (size_t k = 0; k < ARRAY_COUNT(option_specs); k++)
			if (strlen(option_specs[k].name) == name_len &&
			    strncmp(option_specs[k].name, arg, name_len) == 0)
				o = &option_specs[k];
		if (!o) {
			if (arg[0] == '-')
				return usage_error("unknown option '%.*s'", (int)name_len, arg);
			return usage_error("unexpected argument '%s'", arg);
		}
		const char *value = NULL;
		if (!o->arg) {
			if (eq)
				return usage_error("%s takes no value", o->name);
		} else if (eq) {
			value = eq + 1;
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			return usage_error("%s needs a value (%s)", o->name, o->arg);
		}
		int status = apply_option(opt, o, value);
		if (status != 0)
			return status;
	}
	if (opt->help)
		return 0;
	if (opt->capture_frame >= opt->frames)
		return usage_error("--capture-frame %" PRId64 " is not among the %" PRId64
				   " frames rendered (0 to %" PRId64 "); raise --frames",
				   opt->capture_frame, opt->frames, opt->frames - 1);
	if (opt->settings && opt->capture_frame < 0)
		return usage_error("--settings applies to a capture; add --capture-frame N");
	if (opt->record.on && opt->capture_frame >= 0)
		return usage_error("--record and --capture-frame cannot be combined; "
				   "crumbs records one or the other at a time");
	if (opt->record.on && opt->record.first >= (uint64_t)opt->frames)
		return usage_error("--record from frame %" PRIu64 " records none of the %" PRId64
				   " frames rendered (0 to %" PRId64 "); raise --frames",
				   opt->record.first, opt->frames, opt->frames - 1);
	if (opt->record.on && opt->record.last != CRUMBS_RECORD_OPEN &&
	    opt->record.last >= (uint64_t)opt->frames)
		return usage_error("--record to frame %" PRIu64 " goes past the %" PRId64
				   " frames rendered (0 to %" PRId64 "); raise --frames",
				   opt->record.last, opt->frames, opt->frames - 1);
	if (opt->record_every && (!opt->record.on || opt->record.last == CRUMBS_RECORD_OPEN))
		return usage_error("--record-every repeats a --record A:B with both ends given");
	if (opt->record_every &&
	    (uint64_t)opt->record_every < opt->record.last - opt->record.first + 12)
		return usage_error("--record-every %" PRId64 " leaves runs of %" PRIu64 " frames too "
				   "little room: each needs %" PRIu64 " frames or more, its own and "
				   "12 for crumbs to finish it",
				   opt->record_every, opt->record.last - opt->record.first + 1,
				   opt->record.last - opt->record.first + 12);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

static const char *vk_result_name(VkResult r)
{
	switch (r) {
#define NAME_(x)                                                                      \
	case x:                                                                       \
		return #x;
		NAME_(VK_SUCCESS)
		NAME_(VK_NOT_READY)
		NAME_(VK_TIMEOUT)
		NAME_(VK_EVENT_SET)
		NAME_(VK_EVENT_RESET)
		NAME_(VK_INCOMPLETE)
		NAME_(VK_ERROR_OUT_OF_HOST_MEMORY)
		NAME_(VK_ERROR_OUT_OF_DEVICE_MEMORY)
		NAME_(VK_ERROR_INITIALIZATION_FAILED)
		NAME_(VK_ERROR_DEVICE_LOST)
		NAME_(VK_ERROR_MEMORY_MAP_FAILED)
		NAME_(VK_ERROR_LAYER_NOT_PRESENT)
		NAME_(VK_ERROR_EXTENSION_NOT_PRESENT)
		NAME_(VK_ERROR_FEATURE_NOT_PRESENT)
		NAME_(VK_ERROR_INCOMPATIBLE_DRIVER)
		NAME_(VK_ERROR_TOO_MANY_OBJECTS)
		NAME_(VK_ERROR_FORMAT_NOT_SUPPORTED)
		NAME_(VK_ERROR_FRAGMENTED_POOL)
		NAME_(VK_ERROR_UNKNOWN)
		NAME_(VK_ERROR_OUT_OF_POOL_MEMORY)
		NAME_(VK_ERROR_INVALID_EXTERNAL_HANDLE)
		NAME_(VK_ERROR_FRAGMENTATION)
		NAME_(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef NAME_
	default:
		return "an unknown VkResult";
	}
}

static bool fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static bool fail(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs(PROGRAM ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return false;
}

/* Names the function from the call's own text: "vkCreateImage(...)". */
static bool vk_ok(VkResult r, const char *call)
{
	if (r == VK_SUCCESS)
		return true;
	const char *paren = strchr(call, '(');
	int len = paren ? (int)(paren - call) : (int)strlen(call);
	return fail("%.*s failed: %s (%d)", len, call, vk_result_name(r), (int)r);
}

#define VK_TRY(call)                          \
	do {                                  \
		if (!vk_ok((call), #call))    \
			return false;         \
	} while (0)

/* ------------------------------------------------------------------------ */
/* Math                                                                     */
/* ------------------------------------------------------------------------ */

struct vec3 {
	float x, y, z;
};

/* Column-major, as GLSL reads it: m[column * 4 + row]. */
struct mat4 {
	float m[16];
};

static struct vec3 v3(float x, float y, float z)
{
	return (struct vec3){ x, y, z };
}

static struct vec3 v3_add(struct vec3 a, struct vec3 b)
{
	return v3(a.x + b.x, a.y + b.y, a.z + b.z);
}

static struct vec3 v3_sub(struct vec3 a, struct vec3 b)
{
	return v3(a.x - b.x, a.y - b.y, a.z - b.z);
}

static struct vec3 v3_scale(struct vec3 a, float s)
{
	return v3(a.x * s, a.y * s, a.z * s);
}

static float v3_dot(struct vec3 a, struct vec3 b)
{
	return a.x * b.x + a.y * b.y + a.z * b.z;
}

static struct vec3 v3_cross(struct vec3 a, struct vec3 b)
{
	return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

static struct vec3 v3_normalize(struct vec3 a)
{
	float len = sqrtf(v3_dot(a, a));
	return len > 0.0f ? v3_scale(a, 1.0f / len) : a;
}

static struct mat4 mat4_identity(void)
{
	struct mat4 r = { { 0 } };
	r.m[0] = r.m[5] = r.m[10] = r.m[15] = 1.0f;
	return r;
}

static struct mat4 mat4_mul(const struct mat4 *a, const struct mat4 *b)
{
	struct mat4 r;
	for (int c = 0; c < 4; c++)
		for (int row = 0; row < 4; row++) {
			float s = 0.0f;
			for (int k = 0; k < 4; k++)
				s += a->m[k * 4 + row] * b->m[c * 4 + k];
			r.m[c * 4 + row] = s;
		}
	return r;
}

/* Right-handed: the camera looks down its -Z. */
static struct mat4 mat4_look_at(struct vec3 eye, struct vec3 at, struct vec3 up)
{
	struct vec3 f = v3_normalize(v3_sub(at, eye));
	struct vec3 s = v3_normalize(v3_cross(f, up));
	struct vec3 u = v3_cross(s, f);
	struct mat4 r = mat4_identity();
	r.m[0] = s.x;
	r.m[4] = s.y;
	r.m[8] = s.z;
	r.m[1] = u.x;
	r.m[5] = u.y;
	r.m[9] = u.z;
	r.m[2] = -f.x;
	r.m[6] = -f.y;
	r.m[10] = -f.z;
	r.m[12] = -v3_dot(s, eye);
	r.m[13] = -v3_dot(u, eye);
	r.m[14] = v3_dot(f, eye);
	return r;
}

/* Vulkan clip space: depth 0 to 1, and Y flipped so that up is up in the
 * image (which makes counter-clockwise triangles front-facing). */
static struct mat4 mat4_perspective(float fovy, float aspect, float near, float far)
{
	float f = 1.0f / tanf(fovy * 0.5f);
	struct mat4 r = { { 0 } };
	r.m[0] = f / aspect;
	r.m[5] = -f;
	r.m[10] = far / (near - far);
	r.m[11] = -1.0f;
	r.m[14] = -(far * near) / (far - near);
	return r;
}

/* Depth 0 to 1; Y is not flipped: shadow maps are written and read with
 * the same matrix, so their orientation does not matter. */
static struct mat4 mat4_ortho(float half_width, float near, float far)
{
	struct mat4 r = mat4_identity();
	r.m[0] = 1.0f / half_width;
	r.m[5] = 1.0f / half_width;
	r.m[10] = -1.0f / (far - near);
	r.m[14] = -near / (far - near);
	return r;
}

/* Rotation about a unit axis, uniform scale, then translation. */
static struct mat4 mat4_model(struct vec3 axis, float angle, float scale, struct vec3 position)
{
	float c = cosf(angle), s = sinf(angle), t = 1.0f - c;
	float x = axis.x, y = axis.y, z = axis.z;
	struct mat4 r = mat4_identity();
	r.m[0] = (t * x * x + c) * scale;
	r.m[1] = (t * x * y + s * z) * scale;
	r.m[2] = (t * x * z - s * y) * scale;
	r.m[4] = (t * x * y - s * z) * scale;
	r.m[5] = (t * y * y + c) * scale;
	r.m[6] = (t * y * z + s * x) * scale;
	r.m[8] = (t * x * z + s * y) * scale;
	r.m[9] = (t * y * z - s * x) * scale;
	r.m[10] = (t * z * z + c) * scale;
	r.m[12] = position.x;
	r.m[13] = position.y;
	r.m[14] = position.z;
	return r;
}

/* Cofactor expansion; the matrices here are never singular. */
static struct mat4 mat4_invert(const struct mat4 *a)
{
	const float *m = a->m;
	float inv[16];
	inv[0] = m[5] * m[10] * m[15] - m[5] * m[11] * m[14] - m[9] * m[6] * m[15] +
		 m[9] * m[7] * m[14] + m[13] * m[6] * m[11] - m[13] * m[7] * m[10];
	inv[4] = -m[4] * m[10] * m[15] + m[4] * m[11] * m[14] + m[8] * m[6] * m[15] -
		 m[8] * m[7] * m[14] - m[12] * m[6] * m[11] + m[12] * m[7] * m[10];
	inv[8] = m[4] * m[9] * m[15] - m[4] * m[11] * m[13] - m[8] * m[5] * m[15] +
		 m[8] * m[7] * m[13] + m[12] * m[5] * m[11] - m[12] * m[7] * m[9];
	inv[12] = -m[4] * m[9] * m[14] + m[4] * m[10] * m[13] + m[8] * m[5] * m[14] -
		  m[8] * m[6] * m[13] - m[12] * m[5] * m[10] + m[12] * m[6] * m[9];
	inv[1] = -m[1] * m[10] * m[15] + m[1] * m[11] * m[14] + m[9] * m[2] * m[15] -
		 m[9] * m[3] * m[14] - m[13] * m[2] * m[11] + m[13] * m[3] * m[10];
	inv[5] = m[0] * m[10] * m[15] - m[0] * m[11] * m[14] - m[8] * m[2] * m[15] +
		 m[8] * m[3] * m[14] + m[12] * m[2] * m[11] - m[12] * m[3] * m[10];
	inv[9] = -m[0] * m[9] * m[15] + m[0] * m[11] * m[13] + m[8] * m[1] * m[15] -
		 m[8] * m[3] * m[13] - m[12] * m[1] * m[11] + m[12] * m[3] * m[9];
	inv[13] = m[0] * m[9] * m[14] - m[0] * m[10] * m[13] - m[8] * m[1] * m[14] +
		  m[8] * m[2] * m[13] + m[12] * m[1] * m[10] - m[12] * m[2] * m[9];
	inv[2] = m[1] * m[6] * m[15] - m[1] * m[7] * m[14] - m[5] * m[2] * m[15] +
		 m[5] * m[3] * m[14] + m[13] * m[2] * m[7] - m[13] * m[3] * m[6];
	inv[6] = -m[0] * m[6] * m[15] + m[0] * m[7] * m[14] + m[4] * m[2] * m[15] -
		 m[4] * m[3] * m[14] - m[12] * m[2] * m[7] + m[12] * m[3] * m[6];
	inv[10] = m[0] * m[5] * m[15] - m[0] * m[7] * m[13] - m[4] * m[1] * m[15] +
		  m[4] * m[3] * m[13] + m[12] * m[1] * m[7] - m[12] * m[3] * m[5];
	inv[14] = -m[0] * m[5] * m[14] + m[0] * m[6] * m[13] + m[4] * m[1] * m[14] -
		  m[4] * m[2] * m[13] - m[12] * m[1] * m[6] + m[12] * m[2] * m[5];
	inv[3] = -m[1] * m[6] * m[11] + m[1] * m[7] * m[10] + m[5] * m[2] * m[11] -
		 m[5] * m[3] * m[10] - m[9] * m[2] * m[7] + m[9] * m[3] * m[6];
	inv[7] = m[0] * m[6] * m[11] - m[0] * m[7] * m[10] - m[4] * m[2] * m[11] +
		 m[4] * m[3] * m[10] + m[8] * m[2] * m[7] - m[8] * m[3] * m[6];
	inv[11] = -m[0] * m[5] * m[11] + m[0] * m[7] * m[9] + m[4] * m[1] * m[11] -
		  m[4] * m[3] * m[9] - m[8] * m[1] * m[7] + m[8] * m[3] * m[5];
	inv[15] = m[0] * m[5] * m[10] - m[0] * m[6] * m[9] - m[4] * m[1] * m[10] +
		  m[4] * m[2] * m[9] + m[8] * m[1] * m[6] - m[8] * m[2] * m[5];
	float det = m[0] * inv[0] + m[1] * inv[4] + m[2] * inv[8] + m[3] * inv[12];
	struct mat4 r;
	for (int i = 0; i < 16; i++)
		r.m[i] = inv[i] / det;
	return r;
}

/* A fixed hash to [0, 1): the scene is the same every run. */
static float hash01(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return (float)(x >> 8) / 16777216.0f;
}

/* ------------------------------------------------------------------------ */
/* Meshes and the scene                                                     */
/* ------------------------------------------------------------------------ */

struct vertex {
	float position[3];
	float normal[3];
};

enum mesh_kind { MESH_CUBE, MESH_SPHERE, MESH_TORUS, MESH_PLANE, MESH_COUNT };

#define SPHERE_SLICES 12
#define SPHERE_STACKS 8
#define TORUS_MAJOR 16
#define TORUS_MINOR 8
#define MESH_VERTICES                                                         \
	(24 + (SPHERE_SLICES + 1) * (SPHERE_STACKS + 1) +                     \
	 (TORUS_MAJOR + 1) * (TORUS_MINOR + 1) + 4)
#define MESH_INDICES \
	(36 + SPHERE_SLICES * SPHERE_STACKS * 6 + TORUS_MAJOR * TORUS_MINOR * 6 + 6)

struct mesh {
	uint32_t first_index;
	uint32_t index_count;
	int32_t vertex_offset;
	uint32_t vertex_count;
};

struct mesh_builder {
	struct vertex vertices[MESH_VERTICES];
	uint32_t indices[MESH_INDICES];
	uint32_t vertex_count;
	uint32_t index_count;
	struct mesh *mesh; /* the one being built */
};

static void mesh_begin(struct mesh_builder *b, struct mesh *mesh)
{
	mesh->first_index = b->index_count;
	mesh->vertex_offset = (int32_t)b->vertex_count;
	b->mesh = mesh;
}

static void mesh_end(struct mesh_builder *b)
{
	b->mesh->index_count = b->index_count - b->mesh->first_index;
	b->mesh->vertex_count = b->vertex_count - (uint32_t)b->mesh->vertex_offset;
}

static uint32_t mesh_vertex(struct mesh_builder *b, struct vec3 p, struct vec3 n)
{
	struct vertex *v = &b->vertices[b->vertex_count];
	v->position[0] = p.x;
	v->position[1] = p.y;
	v->position[2] = p.z;
	v->normal[0] = n.x;
	v->normal[1] = n.y;
	v->normal[2] = n.z;
	return b->vertex_count++ - (uint32_t)b->mesh->vertex_offset;
}

/* Indices relative to the mesh's first vertex. Each triangle is turned to
 * face along its vertices' normals, so no generator needs to get its
 * winding right by hand (the pipelines cull clockwise triangles). */
static void mesh_triangle(struct mesh_builder *b, uint32_t i0, uint32_t i1, uint32_t i2)
{
	const struct vertex *v = b->vertices + b->mesh->vertex_offset;
	struct vec3 p0 = v3(v[i0].position[0], v[i0].position[1], v[i0].position[2]);
	struct vec3 p1 = v3(v[i1].position[0], v[i1].position[1], v[i1].position[2]);
	struct vec3 p2 = v3(v[i2].position[0], v[i2].position[1], v[i2].position[2]);
	struct vec3 n = v3(v[i0].normal[0] + v[i1].normal[0] + v[i2].normal[0],
			   v[i0].normal[1] + v[i1].normal[1] + v[i2].normal[1],
			   v[i0].normal[2] + v[i1].normal[2] + v[i2].normal[2]);
	bool flip = v3_dot(v3_cross(v3_sub(p1, p0), v3_sub(p2, p0)), n) < 0.0f;
	b->indices[b->index_count++] = i0;
	b->indices[b->index_count++] = flip ? i2 : i1;
	b->indices[b->index_count++] = flip ? i1 : i2;
}

static void mesh_quad(struct mesh_builder *b, uint32_t a, uint32_t c, uint32_t d, uint32_t e)
{
	mesh_triangle(b, a, c, d);
	mesh_triangle(b, a, d, e);
}

static void build_cube(struct mesh_builder *b, struct mesh *mesh)
{
	static const float axes[6][3][3] = {
		{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } },
		{ { -1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } },
		{ { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 1 } },
		{ { 0, -1, 0 }, { 1, 0, 0 }, { 0, 0, 1 } },
		{ { 0, 0, 1 }, { 1, 0, 0 }, { 0, 1, 0 } },
		{ { 0, 0, -1 }, { 1, 0, 0 }, { 0, 1, 0 } },
	};
	mesh_begin(b, mesh);
	for (int f = 0; f < 6; f++) {
		struct vec3 n = v3(axes[f][0][0], axes[f][0][1], axes[f][0][2]);
		struct vec3 u = v3(axes[f][1][0], axes[f][1][1], axes[f][1][2]);
		struct vec3 w = v3(axes[f][2][0], axes[f][2][1], axes[f][2][2]);
		uint32_t first = 0;
		for (int k = 0; k < 4; k++) {
			float su = (k == 0 || k == 3) ? -1.0f : 1.0f;
			float sw = k < 2 ? -1.0f : 1.0f;
			struct vec3 corner = v3_add(n, v3_add(v3_scale(u, su), v3_scale(w, sw)));
			uint32_t i = mesh_vertex(b, corner, n);
			if (k == 0)
				first = i;
		}
		mesh_quad(b, first, first + 1, first + 2, first + 3);
	}
	mesh_end(b);
}

/* A (columns + 1) x (rows + 1) grid of vertices wrapped onto a surface. */
static void build_grid_indices(struct mesh_builder *b, uint32_t columns, uint32_t rows)
{
	for (uint32_t i = 0; i < columns; i++)
		for (uint32_t j = 0; j < rows; j++) {
			uint32_t a = i * (rows + 1) + j;
			uint32_t c = (i + 1) * (rows + 1) + j;
			mesh_quad(b, a, c, c + 1, a + 1);
		}
}

static void build_sphere(struct mesh_builder *b, struct mesh *mesh)
{
	const float pi = 3.14159265f;
	mesh_begin(b, mesh);
	for (uint32_t i = 0; i <= SPHERE_SLICES; i++) {
		float phi = 2.0f * pi * (float)i / SPHERE_SLICES;
		for (uint32_t j = 0; j <= SPHERE_STACKS; j++) {
			float theta = pi * (float)j / SPHERE_STACKS;
			struct vec3 n = v3(sinf(theta) * cosf(phi), cosf(theta),
					   sinf(theta) * sinf(phi));
			mesh_vertex(b, n, n);
		}
	}
	build_grid_indices(b, SPHERE_SLICES, SPHERE_STACKS);
	mesh_end(b);
}

static void build_torus(struct mesh_builder *b, struct mesh *mesh)
{
	const float pi = 3.14159265f, major = 0.72f, minor = 0.3f;
	mesh_begin(b, mesh);
	for (uint32_t i = 0; i <= TORUS_MAJOR; i++) {
		float u = 2.0f * pi * (float)i / TORUS_MAJOR;
		struct vec3 ring = v3(cosf(u), 0.0f, sinf(u));
		for (uint32_t j = 0; j <= TORUS_MINOR; j++) {
			float w = 2.0f * pi * (float)j / TORUS_MINOR;
			struct vec3 n = v3_add(v3_scale(ring, cosf(w)), v3(0.0f, sinf(w), 0.0f));
			mesh_vertex(b, v3_add(v3_scale(ring, major), v3_scale(n, minor)), n);
		}
	}
	build_grid_indices(b, TORUS_MAJOR, TORUS_MINOR);
	mesh_end(b);
}

static void build_plane(struct mesh_builder *b, struct mesh *mesh)
{
	struct vec3 up = v3(0.0f, 1.0f, 0.0f);
	mesh_begin(b, mesh);
	uint32_t a = mesh_vertex(b, v3(-1.0f, 0.0f, -1.0f), up);
	mesh_vertex(b, v3(1.0f, 0.0f, -1.0f), up);
	mesh_vertex(b, v3(1.0f, 0.0f, 1.0f), up);
	mesh_vertex(b, v3(-1.0f, 0.0f, 1.0f), up);
	mesh_quad(b, a, a + 1, a + 2, a + 3);
	mesh_end(b);
}

struct scene_object {
	enum mesh_kind mesh;
	struct vec3 position;
	float scale;
	struct vec3 axis;
	float phase;
	float spin; /* radians a frame */
	float color[4];
	float material[4];
};

/* Bounding radii at scale 1. */
static const float mesh_radius[MESH_COUNT] = {
	[MESH_CUBE] = 1.7320508f,
	[MESH_SPHERE] = 1.0f,
	[MESH_TORUS] = 1.02f,
	[MESH_PLANE] = 1.4142136f,
};

/*
 * The physics: each object floats on a spring that pulls it towards the
 * crest of a slow wave, stepped at a fixed rate (semi-implicit Euler);
 * a frame draws the objects between the last two steps. Steps, like
 * everything, go by the frame number, never by the clock.
 */
struct physics {
	uint64_t steps; /* taken so far */
	float height[OBJECT_COUNT], velocity[OBJECT_COUNT];
	float last_height[OBJECT_COUNT]; /* before the last step */
};

/* Keep in step with the shaders' Object. */
struct object_uniforms {
	struct mat4 model;
	float color[4];
	float material[4]; /* x roughness, y checker cell size (0: none) */
};

/* Keep in step with the shaders' Frame block (std140). */
struct light_uniforms {
	float position_radius[4];
	float color[4];
};

struct frame_uniforms {
	struct mat4 view_proj;
	struct mat4 inv_view_proj;
	struct mat4 shadow_view_proj[SHADOW_VIEWS];
	float camera_position[4];
	float sun_direction[4];
	float sun_color[4];
	float ambient[4];
	float cascade_texel[4];
	uint32_t params[4]; /* width, height, light count, frame */
	struct light_uniforms lights[MAX_LIGHTS];
};

_Static_assert(offsetof(struct frame_uniforms, lights) == 480, "std140 layout of Frame");
_Static_assert(sizeof(struct object_uniforms) == 96, "std430 layout of Object");

static void build_scene(struct scene_object *objects)
{
	static const float palette[8][3] = {
		{ 0.80f, 0.22f, 0.18f }, { 0.92f, 0.62f, 0.20f }, { 0.90f, 0.85f, 0.30f },
		{ 0.30f, 0.70f, 0.35f }, { 0.20f, 0.55f, 0.80f }, { 0.45f, 0.30f, 0.75f },
		{ 0.85f, 0.85f, 0.85f }, { 0.35f, 0.35f, 0.38f },
	};
	const float spacing = 2.2f;
	for (uint32_t i = 0; i < GRID_OBJECTS; i++) {
		struct scene_object *o = &objects[i];
		float gx = (float)(i % GRID) - (GRID - 1) * 0.5f;
		float gz = (float)(i / GRID) - (GRID - 1) * 0.5f;
		o->mesh = (enum mesh_kind)(uint32_t)(hash01(i * 3u + 1u) * 3.0f);
		o->scale = 0.55f + 0.3f * hash01(i * 3u + 2u);
		o->position = v3(gx * spacing, 0.0f, gz * spacing);
		o->axis = v3_normalize(
			v3(hash01(i * 7u + 3u) - 0.5f, 1.0f, hash01(i * 7u + 4u) - 0.5f));
		o->phase = 6.2831853f * hash01(i * 7u + 5u);
		o->spin = 0.02f + 0.05f * hash01(i * 7u + 6u);
		const float *c = palette[(uint32_t)(hash01(i * 11u + 7u) * 8.0f) & 7u];
		for (int k = 0; k < 3; k++)
			o->color[k] = c[k];
		o->color[3] = 1.0f;
		o->material[0] = 0.15f + 0.8f * hash01(i * 11u + 8u);
	}
	struct scene_object *ground = &objects[GROUND_OBJECT];
	ground->mesh = MESH_PLANE;
	ground->scale = 24.0f;
	ground->axis = v3(0.0f, 1.0f, 0.0f);
	ground->color[0] = 0.55f;
	ground->color[1] = 0.53f;
	ground->color[2] = 0.50f;
	ground->color[3] = 1.0f;
	ground->material[0] = 0.85f;
	ground->material[1] = 2.2f;
}

/* The crest of the wave under an object at time t, in frames. */
static float wave_height(const struct scene_object *o, double t)
{
	return 1.3f + 0.25f * sinf(o->phase + (float)fmod(t * 0.07, 6.283185307179586));
}

static void physics_init(struct physics *p, const struct scene_object *objects)
{
	for (uint32_t i = 0; i < GRID_OBJECTS; i++)
		p->height[i] = p->last_height[i] = wave_height(&objects[i], 0.0);
}

/* One step, from the time steps * dt to the next. */
static void physics_step(struct physics *p, const struct scene_object *objects)
{
	const float dt = (float)PHYSICS_FRAMES / PHYSICS_STEPS; /* in frames */
	const float stiffness = 0.02f, damping = 0.15f;
	double t = (double)p->steps * PHYSICS_FRAMES / PHYSICS_STEPS;
	for (uint32_t i = 0; i < GRID_OBJECTS; i++) {
		float pull = stiffness * (wave_height(&objects[i], t) - p->height[i]) -
			     damping * p->velocity[i];
		p->velocity[i] += pull * dt;
		p->last_height[i] = p->height[i];
		p->height[i] += p->velocity[i] * dt;
	}
	p->steps++;
}

/* The steps taken by the time a frame is drawn: those that reach it. */
static uint64_t physics_steps_due(uint64_t frame)
{
	return (frame * PHYSICS_STEPS + PHYSICS_FRAMES - 1) / PHYSICS_FRAMES;
}

/* An object's height in a frame, between the heights of the last two
 * steps, which the frame's time lies between. */
static float physics_height(const struct physics *p, uint32_t object, uint64_t frame)
{
	if (p->steps == 0)
		return p->height[object];
	double last = (double)(p->steps - 1) * PHYSICS_FRAMES / PHYSICS_STEPS;
	float along = (float)(((double)frame - last) * PHYSICS_STEPS / PHYSICS_FRAMES);
	return p->last_height[object] + (p->height[object] - p->last_height[object]) * along;
}

/* ------------------------------------------------------------------------ */
/* The renderer                                                             */
/* ------------------------------------------------------------------------ */

struct buffer {
	VkBuffer buffer;
	VkDeviceMemory memory;
	void *mapped; /* host-visible buffers stay mapped */
};

struct image {
	VkImage image;
	VkDeviceMemory memory;
	VkImageView view; /* every level and layer */
};

/* What one frame in flight owns. Render targets are per frame too, so a
 * frame never waits on its predecessor's use of them. A command pool is
 * used by one thread at a time: the render thread records the geometry
 * from its pool, the jobs that record the lighting and the post
 * processing each from one of their own. */
struct frame_slot {
	VkCommandPool graphics_pool;
	VkCommandPool lighting_pool; /* the compute family's with async compute */
	VkCommandPool post_pool;
	VkCommandBuffer geometry_cb; /* shadows and the base pass */
	VkCommandBuffer lighting_cb;
	VkCommandBuffer post_cb;
	VkCommandBuffer shadow_cbs[SHADOW_VIEWS]; /* secondaries */
	VkFence fence;

	struct image shadow; /* SHADOW_VIEWS layers */
	VkImageView shadow_layers[SHADOW_VIEWS];
	VkFramebuffer shadow_framebuffers[SHADOW_VIEWS];
	struct image albedo, normal, depth;
	VkFramebuffer gbuffer_framebuffer;
	struct image hdr, bloom_down, bloom_up, ldr;
	VkImageView bloom_down_levels[BLOOM_LEVELS];
	VkImageView bloom_up_levels[BLOOM_LEVELS];

	struct buffer frame_uniforms, objects, exposure;
	/* The frame's scene as the jobs compute it, then upload it. */
	struct frame_uniforms uniforms;
	struct object_uniforms object_data[OBJECT_COUNT];
	/* Bit K: the object can cast a shadow into cascade K this frame. */
	uint8_t in_cascade[OBJECT_COUNT];
	/* The draw list: bit B, batch B draws something into the view (a
	 * shadow cascade, or the last, the camera's). */
	uint8_t view_batches[SHADOW_VIEWS + 1];

	VkDescriptorSet scene_set;
	VkDescriptorSet lighting_set;
	VkDescriptorSet bloom_down_sets[BLOOM_LEVELS];
	VkDescriptorSet bloom_up_sets[BLOOM_LEVELS];
	VkDescriptorSet exposure_set;
	VkDescriptorSet tonemap_set;
};

struct renderer {
	struct options opt;
	bool usage_error; /* the failure was the user's (exit 2) */
	uint64_t rendered; /* frames begun */

	VkInstance instance;
	bool debug_utils;
	PFN_vkQueueBeginDebugUtilsLabelEXT queue_label_begin; /* --queue-label */
	PFN_vkQueueEndDebugUtilsLabelEXT queue_label_end;
	PFN_vkSetDebugUtilsObjectNameEXT set_object_name; /* NULL: objects go unnamed */
	VkDebugUtilsMessengerEXT messenger;
	uint32_t validation_messages;
	/* --leak: the memory kept, freed at the end. */
	VkDeviceMemory *leaked;
	uint32_t leaked_count;
	uint32_t leak_type;

	VkPhysicalDevice physical_device;
	VkPhysicalDeviceProperties properties;
	VkPhysicalDeviceMemoryProperties memory_properties;
	VkDevice device;
	uint32_t device_features; /* enum crumbs_device_features */
	uint32_t graphics_family, compute_family;
	VkQueue graphics_queue;
	VkQueue compute_queue; /* the graphics queue without async compute */
	bool async_compute;
	bool shadow_secondaries;
	VkFormat depth_format;
	VkFilter shadow_filter;

	/* Timeline semaphores, valued frame + 1: the G-buffer is ready, the
	 * lighting is done. Only with async compute. */
	VkSemaphore geometry_done;
	VkSemaphore lighting_done;

	VkRenderPass shadow_pass, gbuffer_pass;
	VkDescriptorSetLayout scene_set_layout, lighting_set_layout, post_set_layout;
	VkPipelineLayout scene_layout, lighting_layout, post_layout;
	VkPipeline shadow_pipeline, gbuffer_pipeline, lighting_pipeline;
	VkPipeline bloom_down_pipeline, bloom_up_pipeline, exposure_pipeline, tonemap_pipeline;
	VkSampler point_sampler, linear_sampler, shadow_sampler;
	VkDescriptorPool descriptor_pool;

	struct buffer vertices, indices;
	struct mesh meshes[MESH_COUNT];
	struct scene_object objects[OBJECT_COUNT];
	struct physics physics;
	struct frame_slot slots[FRAMES_IN_FLIGHT];

	crumbs_context *crumbs;
	struct jobs *jobs;
};

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
	VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
	const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
	struct renderer *r = user;
	fflush(stdout);
	/* The loader's own notes (a layer enabled from the environment, as
	 * `crumbs capture` does) are not validation messages. */
	if (types == VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT && data->pMessageIdName &&
	    strcmp(data->pMessageIdName, "Loader Message") == 0) {
		fprintf(stderr, PROGRAM ": loader: %s\n", data->pMessage ? data->pMessage : "");
		return VK_FALSE;
	}
	/* Command buffers are recorded on the job threads too. */
	__atomic_fetch_add(&r->validation_messages, 1, __ATOMIC_RELAXED);
	fprintf(stderr, PROGRAM ": validation %s: %s\n",
		severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
		data->pMessage ? data->pMessage : "(no message)");
	return VK_FALSE;
}

/* --stub-timestamps: what crumbs gets for vkCmdWriteTimestamp. */
static VKAPI_ATTR void VKAPI_CALL stub_write_timestamp(VkCommandBuffer cb,
						       VkPipelineStageFlagBits stage,
						       VkQueryPool pool, uint32_t query)
{
	(void)cb, (void)stage, (void)pool, (void)query;
}

/*
 * And for vkCmdCopyQueryPoolResults: the stubbed timestamps are never
 * written, so a copy that waits for them would wait for ever on a GPU.
 * The results are filled in instead, each value 0x100000001: the same
 * timestamp everywhere, and available.
 */
static PFN_vkCmdFillBuffer stub_fill_buffer;

static VKAPI_ATTR void VKAPI_CALL stub_copy_results(VkCommandBuffer cb, VkQueryPool pool,
						    uint32_t first, uint32_t count, VkBuffer buffer,
						    VkDeviceSize offset, VkDeviceSize stride,
						    VkQueryResultFlags flags)
{
	(void)pool, (void)first;
	VkDeviceSize element = (flags & VK_QUERY_RESULT_64_BIT) ? 8 : 4;
	if (flags & VK_QUERY_RESULT_WITH_AVAILABILITY_BIT)
		element *= 2;
	if (count)
		stub_fill_buffer(cb, buffer, offset, stride * (count - 1) + element, 1);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL stub_device_proc_addr(VkDevice device,
								      const char *name)
{
	if (strcmp(name, "vkCmdWriteTimestamp") == 0)
		return (PFN_vkVoidFunction)stub_write_timestamp;
	if (strcmp(name, "vkCmdCopyQueryPoolResults") == 0) {
		stub_fill_buffer = (PFN_vkCmdFillBuffer)vkGetDeviceProcAddr(device, "vkCmdFillBuffer");
		if (stub_fill_buffer)
			return (PFN_vkVoidFunction)stub_copy_results;
	}
	return vkGetDeviceProcAddr(device, name);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL stub_instance_proc_addr(VkInstance instance,
									const char *name)
{
	if (strcmp(name, "vkGetDeviceProcAddr") == 0)
		return (PFN_vkVoidFunction)stub_device_proc_addr;
	return vkGetInstanceProcAddr(instance, name);
}

static void on_crumbs_log(void *user, enum crumbs_log_level level, const char *message)
{
	(void)user;
	size_t len = strlen(message);
	const char *newline = len > 0 && message[len - 1] == '\n' ? "" : "\n";
	if (level == CRUMBS_LOG_INFO) {
		/* Flushed: a log read while the program runs (or after it is
		 * killed) must already hold the tables. */
		fputs(message, stdout);
		fputs(newline, stdout);
		fflush(stdout);
	} else {
		/* Tables already printed stay in order with the warning. */
		fflush(stdout);
		fprintf(stderr, "crumbs: %s%s", message, newline);
	}
}

static bool has_extension(const VkExtensionProperties *list, uint32_t count, const char *name)
{
	for (uint32_t i = 0; i < count; i++)
		if (strcmp(list[i].extensionName, name) == 0)
			return true;
	return false;
}

/* The instance's extensions, or a layer's; *out is the caller's to free. */
static bool instance_extensions(const char *layer, VkExtensionProperties **out, uint32_t *count)
{
	*out = NULL;
	*count = 0;
	VK_TRY(vkEnumerateInstanceExtensionProperties(layer, count, NULL));
	*out = calloc(*count ? *count : 1, sizeof(**out));
	if (!*out)
		return fail("out of memory");
	if (!vk_ok(vkEnumerateInstanceExtensionProperties(layer, count, *out),
		   "vkEnumerateInstanceExtensionProperties")) {
		free(*out);
		*out = NULL;
		return false;
	}
	return true;
}

static bool has_layer(const char *name, bool *found)
{
	*found = false;
	uint32_t count = 0;
	VK_TRY(vkEnumerateInstanceLayerProperties(&count, NULL));
	VkLayerProperties *layers = calloc(count ? count : 1, sizeof(*layers));
	if (!layers)
		return fail("out of memory");
	VkResult res = vkEnumerateInstanceLayerProperties(&count, layers);
	for (uint32_t i = 0; res == VK_SUCCESS && i < count; i++)
		if (strcmp(layers[i].layerName, name) == 0)
			*found = true;
	free(layers);
	return vk_ok(res, "vkEnumerateInstanceLayerProperties");
}

static bool create_instance(struct renderer *r)
{
	static const char validation_layer[] = "VK_LAYER_KHRONOS_validation";
	uint32_t version = VK_API_VERSION_1_0;
	/* Looked up, not called: a Vulkan 1.0 loader lacks it. */
	PFN_vkEnumerateInstanceVersion enumerate_version =
		(PFN_vkEnumerateInstanceVersion)(void (*)(void))vkGetInstanceProcAddr(
			VK_NULL_HANDLE, "vkEnumerateInstanceVersion");
	if (enumerate_version && !vk_ok(enumerate_version(&version), "vkEnumerateInstanceVersion"))
		return false;
	if (version < VK_API_VERSION_1_2)
		return fail("Vulkan 1.2 is required, and the Vulkan loader supports only %u.%u",
			    VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));

	VkExtensionProperties *extensions;
	uint32_t extension_count;
	if (!instance_extensions(NULL, &extensions, &extension_count))
		return false;
	r->debug_utils =
		has_extension(extensions, extension_count, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
	free(extensions);
	if (r->opt.validate) {
		bool found;
		if (!has_layer(validation_layer, &found))
			return false;
		if (!found)
			return fail("--validate needs the layer '%s' "
				    "(Debian: vulkan-validationlayers)",
				    validation_layer);
		if (!r->debug_utils) {
			if (!instance_extensions(validation_layer, &extensions, &extension_count))
				return false;
			r->debug_utils = has_extension(extensions, extension_count,
						       VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
			free(extensions);
		}
		if (!r->debug_utils)
			return fail("--validate needs %s to report messages",
				    VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
	}
	if (r->opt.queue_label && !r->debug_utils)
		return fail("--queue-label needs %s", VK_EXT_DEBUG_UTILS_EXTENSION_NAME);

	VkDebugUtilsMessengerCreateInfoEXT messenger_info = {
		.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
		.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
				   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
		.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		.pfnUserCallback = on_validation_message,
		.pUserData = r,
	};
	const char *layers[] = { validation_layer };
	const char *instance_extension_names[] = { VK_EXT_DEBUG_UTILS_EXTENSION_NAME };
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = PROGRAM,
		.applicationVersion = 1,
		.pEngineName = "crumbs sample",
		.engineVersion = 1,
		.apiVersion = VK_API_VERSION_1_2,
	};
	VkInstanceCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		/* Chained here too, so that messages of vkCreateInstance and
		 * vkDestroyInstance are counted. */
		.pNext = r->opt.validate ? &messenger_info : NULL,
		.pApplicationInfo = &app,
		.enabledLayerCount = r->opt.validate ? 1u : 0u,
		.ppEnabledLayerNames = layers,
		.enabledExtensionCount = r->debug_utils ? 1u : 0u,
		.ppEnabledExtensionNames = instance_extension_names,
	};
	VK_TRY(vkCreateInstance(&info, NULL, &r->instance));
	if (r->opt.validate) {
		PFN_vkCreateDebugUtilsMessengerEXT create =
			(PFN_vkCreateDebugUtilsMessengerEXT)(void (*)(void))vkGetInstanceProcAddr(
				r->instance, "vkCreateDebugUtilsMessengerEXT");
		if (!create)
			return fail("vkCreateDebugUtilsMessengerEXT is missing");
		VK_TRY(create(r->instance, &messenger_info, NULL, &r->messenger));
	}
	if (r->debug_utils)
		r->device_features |= CRUMBS_FEATURE_DEBUG_UTILS;
	return true;
}

static const char *device_type_name(VkPhysicalDeviceType type)
{
	switch (type) {
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
		return "discrete GPU";
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
		return "integrated GPU";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
		return "virtual GPU";
	case VK_PHYSICAL_DEVICE_TYPE_CPU:
		return "CPU";
	default:
		return "other";
	}
}

/* Discrete over integrated over the rest; a CPU device such as lavapipe
 * only when nothing else can run the renderer. */
static int device_rank(VkPhysicalDeviceType type)
{
	switch (type) {
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
		return 4;
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
		return 3;
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
		return 2;
	case VK_PHYSICAL_DEVICE_TYPE_CPU:
		return 0;
	default:
		return 1;
	}
}

static bool choose_device(struct renderer *r)
{
	VkPhysicalDevice devices[64];
	uint32_t count = ARRAY_COUNT(devices);
	/* More than 64 devices: the first 64 are choice enough. */
	VkResult res = vkEnumeratePhysicalDevices(r->instance, &count, devices);
	if (res != VK_INCOMPLETE && !vk_ok(res, "vkEnumeratePhysicalDevices"))
		return false;
	if (count == 0)
		return fail("no Vulkan device found "
			    "(lavapipe, in mesa-vulkan-drivers, runs on any CPU)");

	int64_t chosen = -1;
	if (r->opt.device >= 0) {
		if (r->opt.device >= (int64_t)count) {
			r->usage_error = true;
			return fail("--device %" PRId64 ": there %s %u device%s (0 to %u)",
				    r->opt.device, count == 1 ? "is" : "are", count,
				    count == 1 ? "" : "s", count - 1);
		}
		chosen = r->opt.device;
	} else {
		int best = -1;
		for (uint32_t i = 0; i < count; i++) {
			VkPhysicalDeviceProperties p;
			vkGetPhysicalDeviceProperties(devices[i], &p);
			if (p.apiVersion < VK_API_VERSION_1_2)
				continue;
			if (device_rank(p.deviceType) > best) {
				best = device_rank(p.deviceType);
				chosen = i;
			}
		}
		if (chosen < 0)
			chosen = 0; /* fails below, naming the device */
	}
	r->physical_device = devices[chosen];
	vkGetPhysicalDeviceProperties(r->physical_device, &r->properties);
	vkGetPhysicalDeviceMemoryProperties(r->physical_device, &r->memory_properties);
	const VkPhysicalDeviceProperties *p = &r->properties;
	if (p->apiVersion < VK_API_VERSION_1_2)
		return fail("device %" PRId64 " '%s' supports Vulkan %u.%u; 1.2 is required",
			    chosen, p->deviceName, VK_API_VERSION_MAJOR(p->apiVersion),
			    VK_API_VERSION_MINOR(p->apiVersion));
	uint32_t limit = p->limits.maxImageDimension2D;
	if (r->opt.size.width > limit || r->opt.size.height > limit) {
		r->usage_error = true;
		return fail("--size %" PRIu32 "x%" PRIu32 ": '%s' makes images of at most %" PRIu32
			    " pixels a side",
			    r->opt.size.width, r->opt.size.height, p->deviceName, limit);
	}
	if (!r->opt.quiet)
		fprintf(stderr, PROGRAM ": device %" PRId64 ": %s (%s, Vulkan %u.%u.%u)\n", chosen,
			p->deviceName, device_type_name(p->deviceType),
			VK_API_VERSION_MAJOR(p->apiVersion), VK_API_VERSION_MINOR(p->apiVersion),
			VK_API_VERSION_PATCH(p->apiVersion));
	return true;
}

static bool format_supports(struct renderer *r, VkFormat format, VkFormatFeatureFlags features)
{
	VkFormatProperties props;
	vkGetPhysicalDeviceFormatProperties(r->physical_device, format, &props);
	return (props.optimalTilingFeatures & features) == features;
}

static bool choose_formats(struct renderer *r)
{
	static const VkFormat depth_formats[] = {
		VK_FORMAT_D32_SFLOAT,
		VK_FORMAT_X8_D24_UNORM_PACK32,
		VK_FORMAT_D16_UNORM,
	};
	const VkFormatFeatureFlags depth_needs = VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT |
						 VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT;
	r->depth_format = VK_FORMAT_UNDEFINED;
	for (size_t i = 0; i < ARRAY_COUNT(depth_formats); i++)
		if (format_supports(r, depth_formats[i], depth_needs)) {
			r->depth_format = depth_formats[i];
			break;
		}
	if (r->depth_format == VK_FORMAT_UNDEFINED)
		return fail("'%s' has no depth format that can also be sampled",
			    r->properties.deviceName);
	/* Linear filtering of depth is optional; without it the 3x3 PCF
	 * still softens the edges. */
	r->shadow_filter = format_supports(r, r->depth_format,
					   VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT)
				   ? VK_FILTER_LINEAR
				   : VK_FILTER_NEAREST;
	const struct {
		VkFormat format;
		VkFormatFeatureFlags needs;
		const char *what;
	} checks[] = {
		{ VK_FORMAT_R8G8B8A8_UNORM,
		  VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT | VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT |
			  VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT,
		  "R8G8B8A8_UNORM as attachment, sampled and storage image" },
		{ VK_FORMAT_R16G16B16A16_SFLOAT,
		  VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT | VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT |
			  VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT |
			  VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT,
		  "R16G16B16A16_SFLOAT as attachment, filtered and storage image" },
	};
	for (size_t i = 0; i < ARRAY_COUNT(checks); i++)
		if (!format_supports(r, checks[i].format, checks[i].needs))
			return fail("'%s' does not support %s", r->properties.deviceName,
				    checks[i].what);
	return true;
}

static bool create_device(struct renderer *r)
{
	uint32_t family_count = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(r->physical_device, &family_count, NULL);
	VkQueueFamilyProperties families[32];
	if (family_count > ARRAY_COUNT(families))
		family_count = ARRAY_COUNT(families);
	vkGetPhysicalDeviceQueueFamilyProperties(r->physical_device, &family_count, families);
	const VkQueueFlags gc = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
	r->graphics_family = UINT32_MAX;
	r->compute_family = UINT32_MAX;
	for (uint32_t i = 0; i < family_count; i++) {
		if (families[i].queueCount == 0)
			continue;
		if ((families[i].queueFlags & gc) == gc && r->graphics_family == UINT32_MAX)
			r->graphics_family = i;
		if ((families[i].queueFlags & gc) == VK_QUEUE_COMPUTE_BIT &&
		    r->compute_family == UINT32_MAX)
			r->compute_family = i;
	}
	if (r->graphics_family == UINT32_MAX)
		return fail("'%s' has no queue family with both graphics and compute",
			    r->properties.deviceName);
	r->async_compute = r->opt.async_compute != 0 && r->compute_family != UINT32_MAX;
	if (r->opt.async_compute == 1 && !r->async_compute)
		fprintf(stderr,
			PROGRAM ": '%s' has no compute-only queue family; lighting runs on the "
				"graphics queue (--async-compute off)\n",
			r->properties.deviceName);

	VkPhysicalDeviceVulkan12Features supported12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
	};
	VkPhysicalDeviceFeatures2 supported = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &supported12,
	};
	vkGetPhysicalDeviceFeatures2(r->physical_device, &supported);
	if (!supported12.timelineSemaphore)
		return fail("'%s' lacks timelineSemaphore, which Vulkan 1.2 requires",
			    r->properties.deviceName);
	VkPhysicalDeviceVulkan12Features enabled12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
		.timelineSemaphore = VK_TRUE,
		.hostQueryReset = supported12.hostQueryReset,
	};
	if (enabled12.hostQueryReset)
		r->device_features |= CRUMBS_FEATURE_HOST_QUERY_RESET;
	/* crumbs counts with statistics queries it resets on the host. */
	VkPhysicalDeviceFeatures enabled10 = {
		.pipelineStatisticsQuery = supported.features.pipelineStatisticsQuery &&
					   enabled12.hostQueryReset && r->opt.counters != 0,
	};
	if (enabled10.pipelineStatisticsQuery)
		r->device_features |= CRUMBS_FEATURE_PIPELINE_STATISTICS;

	uint32_t extension_count = 0;
	VK_TRY(vkEnumerateDeviceExtensionProperties(r->physical_device, NULL, &extension_count,
						    NULL));
	VkExtensionProperties *extensions = calloc(extension_count ? extension_count : 1,
						   sizeof(*extensions));
	if (!extensions)
		return fail("out of memory");
	VkResult res = vkEnumerateDeviceExtensionProperties(r->physical_device, NULL,
							    &extension_count, extensions);
	/* The EXT name where the device has both: the same functions, known
	 * to every layer and capture tool since 2018, where validation layers
	 * older than the KHR name (2023) warn that they do not handle it. */
	const char *calibrated = NULL;
	if (res == VK_SUCCESS) {
		if (has_extension(extensions, extension_count, "VK_EXT_calibrated_timestamps"))
			calibrated = "VK_EXT_calibrated_timestamps";
		else if (has_extension(extensions, extension_count, "VK_KHR_calibrated_timestamps"))
			calibrated = "VK_KHR_calibrated_timestamps";
	}
	free(extensions);
	if (!vk_ok(res, "vkEnumerateDeviceExtensionProperties"))
		return false;
	if (calibrated)
		r->device_features |= CRUMBS_FEATURE_CALIBRATED_TIMESTAMPS;

	const float priority = 1.0f;
	VkDeviceQueueCreateInfo queues[2] = {
		{ .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		  .queueFamilyIndex = r->graphics_family,
		  .queueCount = 1,
		  .pQueuePriorities = &priority },
		{ .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		  .queueFamilyIndex = r->compute_family,
		  .queueCount = 1,
		  .pQueuePriorities = &priority },
	};
	VkDeviceCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = &enabled12,
		.queueCreateInfoCount = r->async_compute ? 2u : 1u,
		.pQueueCreateInfos = queues,
		.pEnabledFeatures = &enabled10,
		.enabledExtensionCount = calibrated ? 1u : 0u,
		.ppEnabledExtensionNames = &calibrated,
	};
	VK_TRY(vkCreateDevice(r->physical_device, &info, NULL, &r->device));
	if (r->debug_utils)
		r->set_object_name = (PFN_vkSetDebugUtilsObjectNameEXT)vkGetDeviceProcAddr(
			r->device, "vkSetDebugUtilsObjectNameEXT");
	if (r->opt.queue_label) {
		r->queue_label_begin = (PFN_vkQueueBeginDebugUtilsLabelEXT)vkGetDeviceProcAddr(
			r->device, "vkQueueBeginDebugUtilsLabelEXT");
		r->queue_label_end = (PFN_vkQueueEndDebugUtilsLabelEXT)vkGetDeviceProcAddr(
			r->device, "vkQueueEndDebugUtilsLabelEXT");
		if (!r->queue_label_begin || !r->queue_label_end)
			return fail("--queue-label: the device has no queue labels");
	}
	vkGetDeviceQueue(r->device, r->graphics_family, 0, &r->graphics_queue);
	if (r->async_compute)
		vkGetDeviceQueue(r->device, r->compute_family, 0, &r->compute_queue);
	else
		r->compute_queue = r->graphics_queue;
	return choose_formats(r);
}

/* ------------------------------------------------------------------------ */
/* Buffers, images, pipelines                                               */
/* ------------------------------------------------------------------------ */

/* Names an object for the tools that show them (a debugger, the crumbs
 * layer, which names render passes and draws by them); without
 * VK_EXT_debug_utils objects go unnamed. */
static bool name_object(struct renderer *r, VkObjectType type, uint64_t handle, const char *fmt,
			...) __attribute__((format(printf, 4, 5)));

static bool name_object(struct renderer *r, VkObjectType type, uint64_t handle, const char *fmt,
			...)
{
	if (!r->set_object_name)
		return true;
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	VkDebugUtilsObjectNameInfoEXT info = {
		.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
		.objectType = type,
		.objectHandle = handle,
		.pObjectName = name,
	};
	VK_TRY(r->set_object_name(r->device, &info));
	return true;
}

static bool find_memory_type(struct renderer *r, uint32_t type_bits, VkMemoryPropertyFlags needs,
			     VkMemoryPropertyFlags prefers, uint32_t *out)
{
	const VkPhysicalDeviceMemoryProperties *m = &r->memory_properties;
	for (int pass = 0; pass < 2; pass++) {
		VkMemoryPropertyFlags want = pass == 0 ? needs | prefers : needs;
		for (uint32_t i = 0; i < m->memoryTypeCount; i++)
			if ((type_bits & (1u << i)) &&
			    (m->memoryTypes[i].propertyFlags & want) == want) {
				*out = i;
				return true;
			}
	}
	return fail("'%s' has no memory type with properties 0x%x for this resource",
		    r->properties.deviceName, (unsigned)needs);
}

/* Shared between the graphics and compute families without ownership
 * transfers when both are used; exclusive otherwise. */
static void set_sharing(struct renderer *r, bool shared, VkSharingMode *mode, uint32_t *count,
			const uint32_t **families, uint32_t storage[2])
{
	*mode = VK_SHARING_MODE_EXCLUSIVE;
	*count = 0;
	*families = NULL;
	if (shared && r->async_compute) {
		storage[0] = r->graphics_family;
		storage[1] = r->compute_family;
		*mode = VK_SHARING_MODE_CONCURRENT;
		*count = 2;
		*families = storage;
	}
}

static bool create_buffer(struct renderer *r, VkDeviceSize size, VkBufferUsageFlags usage,
			  bool host_visible, bool shared, struct buffer *out)
{
	uint32_t family_storage[2];
	VkBufferCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size,
		.usage = usage,
	};
	set_sharing(r, shared, &info.sharingMode, &info.queueFamilyIndexCount,
		    &info.pQueueFamilyIndices, family_storage);
	VK_TRY(vkCreateBuffer(r->device, &info, NULL, &out->buffer));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(r->device, out->buffer, &req);
	VkMemoryAllocateInfo alloc = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size,
	};
	VkMemoryPropertyFlags needs = host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
							     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
						   : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
	VkMemoryPropertyFlags prefers = host_visible ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : 0;
	if (!find_memory_type(r, req.memoryTypeBits, needs, prefers, &alloc.memoryTypeIndex))
		return false;
	VK_TRY(vkAllocateMemory(r->device, &alloc, NULL, &out->memory));
	VK_TRY(vkBindBufferMemory(r->device, out->buffer, out->memory, 0));
	if (host_visible)
		VK_TRY(vkMapMemory(r->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped));
	return true;
}

static void destroy_buffer(struct renderer *r, struct buffer *b)
{
	vkDestroyBuffer(r->device, b->buffer, NULL);
	vkFreeMemory(r->device, b->memory, NULL); /* unmaps */
	*b = (struct buffer){ 0 };
}

struct image_desc {
	VkFormat format;
	uint32_t width, height;
	uint32_t levels, layers;
	VkImageUsageFlags usage;
	bool shared; /* used by both queue families */
};

static bool create_image(struct renderer *r, const struct image_desc *d, struct image *out)
{
	uint32_t family_storage[2];
	VkImageCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
		.imageType = VK_IMAGE_TYPE_2D,
		.format = d->format,
		.extent = { d->width, d->height, 1 },
		.mipLevels = d->levels,
		.arrayLayers = d->layers,
		.samples = VK_SAMPLE_COUNT_1_BIT,
		.tiling = VK_IMAGE_TILING_OPTIMAL,
		.usage = d->usage,
		.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
	};
	set_sharing(r, d->shared, &info.sharingMode, &info.queueFamilyIndexCount,
		    &info.pQueueFamilyIndices, family_storage);
	VK_TRY(vkCreateImage(r->device, &info, NULL, &out->image));
	VkMemoryRequirements req;
	vkGetImageMemoryRequirements(r->device, out->image, &req);
	VkMemoryAllocateInfo alloc = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size,
	};
	if (!find_memory_type(r, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
			      &alloc.memoryTypeIndex))
		return false;
	VK_TRY(vkAllocateMemory(r->device, &alloc, NULL, &out->memory));
	VK_TRY(vkBindImageMemory(r->device, out->image, out->memory, 0));
	VkImageViewCreateInfo view = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
		.image = out->image,
		.viewType = d->layers > 1 ? VK_IMAGE_VIEW_TYPE_2D_ARRAY : VK_IMAGE_VIEW_TYPE_2D,
		.format = d->format,
		.subresourceRange = { d->format == r->depth_format ? VK_IMAGE_ASPECT_DEPTH_BIT
								    : VK_IMAGE_ASPECT_COLOR_BIT,
				      0, d->levels, 0, d->layers },
	};
	VK_TRY(vkCreateImageView(r->device, &view, NULL, &out->view));
	return true;
}

/* A 2D view of one level and layer. */
static bool create_subview(struct renderer *r, const struct image *img, VkFormat format,
			   uint32_t level, uint32_t layer, VkImageView *out)
{
	VkImageViewCreateInfo view = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
		.image = img->image,
		.viewType = VK_IMAGE_VIEW_TYPE_2D,
		.format = format,
		.subresourceRange = { format == r->depth_format ? VK_IMAGE_ASPECT_DEPTH_BIT
								 : VK_IMAGE_ASPECT_COLOR_BIT,
				      level, 1, layer, 1 },
	};
	VK_TRY(vkCreateImageView(r->device, &view, NULL, out));
	return true;
}

static void destroy_image(struct renderer *r, struct image *img)
{
	vkDestroyImageView(r->device, img->view, NULL);
	vkDestroyImage(r->device, img->image, NULL);
	vkFreeMemory(r->device, img->memory, NULL);
	*img = (struct image){ 0 };
}

static bool create_shader(struct renderer *r, const uint32_t *code, size_t size,
			  VkShaderModule *out)
{
	VkShaderModuleCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = size,
		.pCode = code,
	};
	VK_TRY(vkCreateShaderModule(r->device, &info, NULL, out));
	return true;
}

static bool create_render_passes(struct renderer *r)
{
	/* Written in one frame, sampled by the lighting pass: the previous
	 * frame's contents are never needed (UNDEFINED, CLEAR). */
	VkAttachmentDescription depth = {
		.format = r->depth_format,
		.samples = VK_SAMPLE_COUNT_1_BIT,
		.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
		.storeOp = VK_ATTACHMENT_STORE_OP_STORE,
		.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
		.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
		.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
		.finalLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
	};
	VkAttachmentReference depth_ref = { 0, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL };
	VkSubpassDescription shadow_subpass = {
		.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
		.pDepthStencilAttachment = &depth_ref,
	};
	const VkPipelineStageFlags tests = VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
					   VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
	/* In: after the last frame's reads in the lighting pass (also
	 * ordered by the frame fence). Out: before this frame's reads. */
	VkSubpassDependency shadow_deps[2] = {
		{ .srcSubpass = VK_SUBPASS_EXTERNAL,
		  .dstSubpass = 0,
		  .srcStageMask = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | tests,
		  .dstStageMask = tests,
		  .srcAccessMask = 0,
		  .dstAccessMask = VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
				   VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT },
		{ .srcSubpass = 0,
		  .dstSubpass = VK_SUBPASS_EXTERNAL,
		  .srcStageMask = tests,
		  .dstStageMask = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
		  .srcAccessMask = VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
		  .dstAccessMask = VK_ACCESS_SHADER_READ_BIT },
	};
	VkRenderPassCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
		.attachmentCount = 1,
		.pAttachments = &depth,
		.subpassCount = 1,
		.pSubpasses = &shadow_subpass,
		.dependencyCount = 2,
		.pDependencies = shadow_deps,
	};
	VK_TRY(vkCreateRenderPass(r->device, &info, NULL, &r->shadow_pass));
	if (!name_object(r, VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)r->shadow_pass, "Shadow Map"))
		return false;

	VkAttachmentDescription gbuffer[3] = { depth, depth, depth };
	gbuffer[0].format = VK_FORMAT_R8G8B8A8_UNORM;
	gbuffer[1].format = VK_FORMAT_R16G16B16A16_SFLOAT;
	VkAttachmentReference colors[2] = {
		{ 0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL },
		{ 1, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL },
	};
	VkAttachmentReference gbuffer_depth = {
		2, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL
	};
	VkSubpassDescription gbuffer_subpass = {
		.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
		.colorAttachmentCount = 2,
		.pColorAttachments = colors,
		.pDepthStencilAttachment = &gbuffer_depth,
	};
	const VkPipelineStageFlags outputs = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | tests;
	VkSubpassDependency gbuffer_deps[2] = {
		{ .srcSubpass = VK_SUBPASS_EXTERNAL,
		  .dstSubpass = 0,
		  .srcStageMask = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | outputs,
		  .dstStageMask = outputs,
		  .srcAccessMask = 0,
		  .dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |
				   VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
				   VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT },
		{ .srcSubpass = 0,
		  .dstSubpass = VK_SUBPASS_EXTERNAL,
		  .srcStageMask = outputs,
		  .dstStageMask = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
		  .srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |
				   VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
		  .dstAccessMask = VK_ACCESS_SHADER_READ_BIT },
	};
	info.attachmentCount = 3;
	info.pAttachments = gbuffer;
	info.pSubpasses = &gbuffer_subpass;
	info.pDependencies = gbuffer_deps;
	VK_TRY(vkCreateRenderPass(r->device, &info, NULL, &r->gbuffer_pass));
	return name_object(r, VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)r->gbuffer_pass, "GBuffer");
}

static bool create_set_layout(struct renderer *r, const VkDescriptorSetLayoutBinding *bindings,
			      uint32_t count, VkDescriptorSetLayout *out)
{
	VkDescriptorSetLayoutCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = count,
		.pBindings = bindings,
	};
	VK_TRY(vkCreateDescriptorSetLayout(r->device, &info, NULL, out));
	return true;
}

static bool create_pipeline_layout(struct renderer *r, VkDescriptorSetLayout set,
				   VkShaderStageFlags push_stages, uint32_t push_size,
				   VkPipelineLayout *out)
{
	VkPushConstantRange push = { push_stages, 0, push_size };
	VkPipelineLayoutCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &set,
		.pushConstantRangeCount = push_size ? 1u : 0u,
		.pPushConstantRanges = &push,
	};
	VK_TRY(vkCreatePipelineLayout(r->device, &info, NULL, out));
	return true;
}

static bool create_layouts(struct renderer *r)
{
	const VkShaderStageFlags cs = VK_SHADER_STAGE_COMPUTE_BIT;
	const VkDescriptorType sampled = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
	const VkDescriptorSetLayoutBinding scene[] = {
		{ 0, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1, VK_SHADER_STAGE_VERTEX_BIT, NULL },
		{ 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
		  VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, NULL },
	};
	const VkDescriptorSetLayoutBinding lighting[] = {
		{ 0, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1, cs, NULL },
		{ 1, sampled, 1, cs, NULL }, /* albedo */
		{ 2, sampled, 1, cs, NULL }, /* normal */
		{ 3, sampled, 1, cs, NULL }, /* depth */
		{ 4, sampled, 1, cs, NULL }, /* shadow cascades */
		{ 5, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, cs, NULL },
	};
	/* One layout for every post-processing step: two inputs, one output
	 * and the exposure. */
	const VkDescriptorSetLayoutBinding post[] = {
		{ 0, sampled, 1, cs, NULL },
		{ 1, sampled, 1, cs, NULL },
		{ 2, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, cs, NULL },
		{ 3, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, cs, NULL },
	};
	if (!create_set_layout(r, scene, ARRAY_COUNT(scene), &r->scene_set_layout) ||
	    !create_set_layout(r, lighting, ARRAY_COUNT(lighting), &r->lighting_set_layout) ||
	    !create_set_layout(r, post, ARRAY_COUNT(post), &r->post_set_layout))
		return false;
	return create_pipeline_layout(r, r->scene_set_layout, VK_SHADER_STAGE_VERTEX_BIT, 16,
				      &r->scene_layout) &&
	       create_pipeline_layout(r, r->lighting_set_layout, 0, 0, &r->lighting_layout) &&
	       create_pipeline_layout(r, r->post_set_layout, cs, 16, &r->post_layout);
}

static bool create_graphics_pipeline(struct renderer *r, bool shadow, VkShaderModule vert,
				     VkShaderModule frag, VkPipeline *out)
{
	VkPipelineShaderStageCreateInfo stages[2] = {
		{ .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
		  .stage = VK_SHADER_STAGE_VERTEX_BIT,
		  .module = vert,
		  .pName = "main" },
		{ .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
		  .stage = VK_SHADER_STAGE_FRAGMENT_BIT,
		  .module = frag,
		  .pName = "main" },
	};
	VkVertexInputBindingDescription binding = { 0, sizeof(struct vertex),
						    VK_VERTEX_INPUT_RATE_VERTEX };
	VkVertexInputAttributeDescription attributes[2] = {
		{ 0, 0, VK_FORMAT_R32G32B32_SFLOAT, offsetof(struct vertex, position) },
		{ 1, 0, VK_FORMAT_R32G32B32_SFLOAT, offsetof(struct vertex, normal) },
	};
	VkPipelineVertexInputStateCreateInfo vertex_input = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO,
		.vertexBindingDescriptionCount = 1,
		.pVertexBindingDescriptions = &binding,
		.vertexAttributeDescriptionCount = shadow ? 1u : 2u,
		.pVertexAttributeDescriptions = attributes,
	};
	VkPipelineInputAssemblyStateCreateInfo assembly = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
		.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST,
	};
	VkPipelineViewportStateCreateInfo viewport = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
		.viewportCount = 1,
		.scissorCount = 1,
	};
	/* Shadows: both faces, so that thin and open shapes cast, with a
	 * slope-scaled bias against acne. */
	VkPipelineRasterizationStateCreateInfo raster = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
		.polygonMode = VK_POLYGON_MODE_FILL,
		.cullMode = shadow ? VK_CULL_MODE_NONE : VK_CULL_MODE_BACK_BIT,
		.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE,
		.depthBiasEnable = shadow ? VK_TRUE : VK_FALSE,
		.depthBiasConstantFactor = shadow ? 1.0f : 0.0f,
		.depthBiasSlopeFactor = shadow ? 1.5f : 0.0f,
		.lineWidth = 1.0f,
	};
	VkPipelineMultisampleStateCreateInfo multisample = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
		.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT,
	};
	VkPipelineDepthStencilStateCreateInfo depth = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO,
		.depthTestEnable = VK_TRUE,
		.depthWriteEnable = VK_TRUE,
		.depthCompareOp = VK_COMPARE_OP_LESS,
	};
	VkPipelineColorBlendAttachmentState blend[2] = {
		{ .colorWriteMask = 0xf },
		{ .colorWriteMask = 0xf },
	};
	VkPipelineColorBlendStateCreateInfo blending = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
		.attachmentCount = shadow ? 0u : 2u,
		.pAttachments = blend,
	};
	const VkDynamicState dynamic_states[] = { VK_DYNAMIC_STATE_VIEWPORT,
						  VK_DYNAMIC_STATE_SCISSOR };
	VkPipelineDynamicStateCreateInfo dynamic = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO,
		.dynamicStateCount = ARRAY_COUNT(dynamic_states),
		.pDynamicStates = dynamic_states,
	};
	VkGraphicsPipelineCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
		.stageCount = shadow ? 1u : 2u,
		.pStages = stages,
		.pVertexInputState = &vertex_input,
		.pInputAssemblyState = &assembly,
		.pViewportState = &viewport,
		.pRasterizationState = &raster,
		.pMultisampleState = &multisample,
		.pDepthStencilState = &depth,
		.pColorBlendState = &blending,
		.pDynamicState = &dynamic,
		.layout = r->scene_layout,
		.renderPass = shadow ? r->shadow_pass : r->gbuffer_pass,
	};
	VK_TRY(vkCreateGraphicsPipelines(r->device, VK_NULL_HANDLE, 1, &info, NULL, out));
	return true;
}

static bool create_compute_pipeline(struct renderer *r, const uint32_t *code, size_t size,
				    VkPipelineLayout layout, VkPipeline *out)
{
	VkShaderModule module = VK_NULL_HANDLE;
	if (!create_shader(r, code, size, &module))
		return false;
	VkComputePipelineCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = { .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			   .stage = VK_SHADER_STAGE_COMPUTE_BIT,
			   .module = module,
			   .pName = "main" },
		.layout = layout,
	};
	VkResult res = vkCreateComputePipelines(r->device, VK_NULL_HANDLE, 1, &info, NULL, out);
	vkDestroyShaderModule(r->device, module, NULL);
	return vk_ok(res, "vkCreateComputePipelines");
}

static bool create_pipelines(struct renderer *r)
{
	VkShaderModule mesh = VK_NULL_HANDLE, gbuffer = VK_NULL_HANDLE, shadow = VK_NULL_HANDLE;
	bool ok = create_shader(r, shader_mesh_vert, sizeof(shader_mesh_vert), &mesh) &&
		  create_shader(r, shader_gbuffer_frag, sizeof(shader_gbuffer_frag), &gbuffer) &&
		  create_shader(r, shader_shadow_vert, sizeof(shader_shadow_vert), &shadow) &&
		  create_graphics_pipeline(r, true, shadow, VK_NULL_HANDLE, &r->shadow_pipeline) &&
		  create_graphics_pipeline(r, false, mesh, gbuffer, &r->gbuffer_pipeline);
	vkDestroyShaderModule(r->device, mesh, NULL);
	vkDestroyShaderModule(r->device, gbuffer, NULL);
	vkDestroyShaderModule(r->device, shadow, NULL);
	if (!ok)
		return false;
#define COMPUTE_(name, layout, out) \
	create_compute_pipeline(r, shader_##name##_comp, sizeof(shader_##name##_comp), layout, out)
	ok = COMPUTE_(lighting, r->lighting_layout, &r->lighting_pipeline) &&
	     COMPUTE_(bloom_down, r->post_layout, &r->bloom_down_pipeline) &&
	     COMPUTE_(bloom_up, r->post_layout, &r->bloom_up_pipeline) &&
	     COMPUTE_(exposure, r->post_layout, &r->exposure_pipeline) &&
	     COMPUTE_(tonemap, r->post_layout, &r->tonemap_pipeline);
#undef COMPUTE_
	/* Named after the scopes they run in. */
	const struct {
		VkPipeline pipeline;
		const char *name;
	} names[] = {
		{ r->shadow_pipeline, "Shadow Depth" },
		{ r->gbuffer_pipeline, "GBuffer" },
		{ r->lighting_pipeline, "Tiled Lighting" },
		{ r->bloom_down_pipeline, "Bloom Down" },
		{ r->bloom_up_pipeline, "Bloom Up" },
		{ r->exposure_pipeline, "Average Luminance" },
		{ r->tonemap_pipeline, "Tonemap" },
	};
	for (size_t i = 0; ok && i < ARRAY_COUNT(names); i++)
		ok = name_object(r, VK_OBJECT_TYPE_PIPELINE, (uint64_t)names[i].pipeline, "%s",
				 names[i].name);
	return ok;
}

static bool create_samplers(struct renderer *r)
{
	VkSamplerCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO,
		.magFilter = VK_FILTER_NEAREST,
		.minFilter = VK_FILTER_NEAREST,
		.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST,
		.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
		.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
		.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
		.maxLod = 0.0f,
	};
	VK_TRY(vkCreateSampler(r->device, &info, NULL, &r->point_sampler));
	info.magFilter = info.minFilter = VK_FILTER_LINEAR;
	VK_TRY(vkCreateSampler(r->device, &info, NULL, &r->linear_sampler));
	info.magFilter = info.minFilter = r->shadow_filter;
	info.compareEnable = VK_TRUE;
	info.compareOp = VK_COMPARE_OP_LESS_OR_EQUAL;
	VK_TRY(vkCreateSampler(r->device, &info, NULL, &r->shadow_sampler));
	return true;
}

/* ------------------------------------------------------------------------ */
/* One-off work outside frames                                              */
/* ------------------------------------------------------------------------ */

/* Setup and the final readback are submitted straight to the queue: they
 * happen before the crumbs context exists and after it is gone, and are no
 * part of any frame. */
struct one_shot {
	VkCommandPool pool;
	VkCommandBuffer cb;
	VkFence fence;
};

static bool one_shot_begin(struct renderer *r, struct one_shot *o)
{
	VkCommandPoolCreateInfo pool = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
		.queueFamilyIndex = r->graphics_family,
	};
	VK_TRY(vkCreateCommandPool(r->device, &pool, NULL, &o->pool));
	VkCommandBufferAllocateInfo alloc = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = o->pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VK_TRY(vkAllocateCommandBuffers(r->device, &alloc, &o->cb));
	VkFenceCreateInfo fence = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VK_TRY(vkCreateFence(r->device, &fence, NULL, &o->fence));
	VkCommandBufferBeginInfo begin = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VK_TRY(vkBeginCommandBuffer(o->cb, &begin));
	return true;
}

static bool one_shot_run(struct renderer *r, struct one_shot *o)
{
	VK_TRY(vkEndCommandBuffer(o->cb));
	VkSubmitInfo submit = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &o->cb,
	};
	VK_TRY(vkQueueSubmit(r->graphics_queue, 1, &submit, o->fence));
	if (!vk_ok(vkWaitForFences(r->device, 1, &o->fence, VK_TRUE, UINT64_MAX),
		   "vkWaitForFences")) {
		/* Not to free what the queue may still use. */
		(void)vkQueueWaitIdle(r->graphics_queue);
		return false;
	}
	return true;
}

static void one_shot_free(struct renderer *r, struct one_shot *o)
{
	vkDestroyFence(r->device, o->fence, NULL);
	vkDestroyCommandPool(r->device, o->pool, NULL);
	*o = (struct one_shot){ 0 };
}

static bool upload_meshes(struct renderer *r)
{
	struct mesh_builder *b = calloc(1, sizeof(*b));
	if (!b)
		return fail("out of memory");
	build_cube(b, &r->meshes[MESH_CUBE]);
	build_sphere(b, &r->meshes[MESH_SPHERE]);
	build_torus(b, &r->meshes[MESH_TORUS]);
	build_plane(b, &r->meshes[MESH_PLANE]);
	VkDeviceSize vertex_bytes = b->vertex_count * sizeof(struct vertex);
	VkDeviceSize index_bytes = b->index_count * sizeof(uint32_t);
	struct buffer staging = { 0 };
	struct one_shot once = { 0 };
	const VkBufferUsageFlags dst = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
	bool ok = create_buffer(r, vertex_bytes + index_bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
				true, false, &staging) &&
		  create_buffer(r, vertex_bytes, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | dst, false,
				false, &r->vertices) &&
		  create_buffer(r, index_bytes, VK_BUFFER_USAGE_INDEX_BUFFER_BIT | dst, false,
				false, &r->indices) &&
		  one_shot_begin(r, &once);
	if (ok) {
		memcpy(staging.mapped, b->vertices, vertex_bytes);
		memcpy((char *)staging.mapped + vertex_bytes, b->indices, index_bytes);
		VkBufferCopy vertex_copy = { 0, 0, vertex_bytes };
		VkBufferCopy index_copy = { vertex_bytes, 0, index_bytes };
		vkCmdCopyBuffer(once.cb, staging.buffer, r->vertices.buffer, 1, &vertex_copy);
		vkCmdCopyBuffer(once.cb, staging.buffer, r->indices.buffer, 1, &index_copy);
		VkMemoryBarrier barrier = {
			.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_VERTEX_ATTRIBUTE_READ_BIT |
					 VK_ACCESS_INDEX_READ_BIT,
		};
		vkCmdPipelineBarrier(once.cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     VK_PIPELINE_STAGE_VERTEX_INPUT_BIT, 0, 1, &barrier, 0, NULL, 0,
				     NULL);
		ok = one_shot_run(r, &once);
	}
	one_shot_free(r, &once);
	destroy_buffer(r, &staging);
	free(b);
	return ok;
}

/* ------------------------------------------------------------------------ */
/* Frame slots                                                              */
/* ------------------------------------------------------------------------ */

static uint32_t bloom_width(const struct renderer *r, uint32_t level)
{
	uint32_t w = (r->opt.size.width / 2) >> level;
	return w ? w : 1;
}

static uint32_t bloom_height(const struct renderer *r, uint32_t level)
{
	uint32_t h = (r->opt.size.height / 2) >> level;
	return h ? h : 1;
}

static bool create_framebuffer(struct renderer *r, const VkImageView *views, uint32_t count,
			       VkRenderPass pass, uint32_t width, uint32_t height,
			       VkFramebuffer *out)
{
	VkFramebufferCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
		.renderPass = pass,
		.attachmentCount = count,
		.pAttachments = views,
		.width = width,
		.height = height,
		.layers = 1,
	};
	VK_TRY(vkCreateFramebuffer(r->device, &info, NULL, out));
	return true;
}

static bool create_slot_images(struct renderer *r, struct frame_slot *s)
{
	const uint32_t w = r->opt.size.width, h = r->opt.size.height;
	const VkImageUsageFlags sampled = VK_IMAGE_USAGE_SAMPLED_BIT;
	const VkImageUsageFlags storage = VK_IMAGE_USAGE_STORAGE_BIT;
	const VkFormat hdr = VK_FORMAT_R16G16B16A16_SFLOAT;
	const struct {
		struct image *image;
		struct image_desc desc;
		const char *name;
	} images[] = {
		{ &s->shadow,
		  { r->depth_format, SHADOW_SIZE, SHADOW_SIZE, 1, SHADOW_VIEWS,
		    VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT | sampled, true },
		  "Shadow Cascades" },
		{ &s->albedo,
		  { VK_FORMAT_R8G8B8A8_UNORM, w, h, 1, 1,
		    VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | sampled, true },
		  "GBuffer Albedo" },
		{ &s->normal,
		  { hdr, w, h, 1, 1, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | sampled, true },
		  "GBuffer Normal" },
		{ &s->depth,
		  { r->depth_format, w, h, 1, 1,
		    VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT | sampled, true },
		  "GBuffer Depth" },
		{ &s->hdr, { hdr, w, h, 1, 1, storage | sampled, true }, "Lit HDR" },
		{ &s->bloom_down,
		  { hdr, bloom_width(r, 0), bloom_height(r, 0), BLOOM_LEVELS, 1, storage | sampled,
		    false },
		  "Bloom Down Chain" },
		{ &s->bloom_up,
		  { hdr, bloom_width(r, 0), bloom_height(r, 0), BLOOM_LEVELS, 1, storage | sampled,
		    false },
		  "Bloom Up Chain" },
		{ &s->ldr,
		  { VK_FORMAT_R8G8B8A8_UNORM, w, h, 1, 1,
		    storage | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, false },
		  "Tonemapped LDR" },
	};
	for (size_t i = 0; i < ARRAY_COUNT(images); i++)
		if (!create_image(r, &images[i].desc, images[i].image) ||
		    !name_object(r, VK_OBJECT_TYPE_IMAGE, (uint64_t)images[i].image->image, "%s",
				 images[i].name))
			return false;
	for (uint32_t k = 0; k < SHADOW_VIEWS; k++)
		if (!create_subview(r, &s->shadow, r->depth_format, 0, k, &s->shadow_layers[k]) ||
		    !create_framebuffer(r, &s->shadow_layers[k], 1, r->shadow_pass, SHADOW_SIZE,
					SHADOW_SIZE, &s->shadow_framebuffers[k]) ||
		    !name_object(r, VK_OBJECT_TYPE_FRAMEBUFFER, (uint64_t)s->shadow_framebuffers[k],
				 "Shadow Cascade %" PRIu32, k))
			return false;
	for (uint32_t k = 0; k < BLOOM_LEVELS; k++)
		if (!create_subview(r, &s->bloom_down, hdr, k, 0, &s->bloom_down_levels[k]) ||
		    !create_subview(r, &s->bloom_up, hdr, k, 0, &s->bloom_up_levels[k]))
			return false;
	VkImageView gbuffer[3] = { s->albedo.view, s->normal.view, s->depth.view };
	return create_framebuffer(r, gbuffer, 3, r->gbuffer_pass, w, h, &s->gbuffer_framebuffer) &&
	       name_object(r, VK_OBJECT_TYPE_FRAMEBUFFER, (uint64_t)s->gbuffer_framebuffer,
			   "GBuffer");
}

static bool create_slot_commands(struct renderer *r, struct frame_slot *s)
{
	VkCommandPoolCreateInfo pool = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
		.queueFamilyIndex = r->graphics_family,
	};
	VK_TRY(vkCreateCommandPool(r->device, &pool, NULL, &s->graphics_pool));
	VK_TRY(vkCreateCommandPool(r->device, &pool, NULL, &s->post_pool));
	if (r->async_compute)
		pool.queueFamilyIndex = r->compute_family;
	VK_TRY(vkCreateCommandPool(r->device, &pool, NULL, &s->lighting_pool));
	VkCommandBufferAllocateInfo alloc = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = s->graphics_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VK_TRY(vkAllocateCommandBuffers(r->device, &alloc, &s->geometry_cb));
	alloc.commandPool = s->post_pool;
	VK_TRY(vkAllocateCommandBuffers(r->device, &alloc, &s->post_cb));
	alloc.commandPool = s->lighting_pool;
	VK_TRY(vkAllocateCommandBuffers(r->device, &alloc, &s->lighting_cb));
	alloc.commandPool = s->graphics_pool;
	alloc.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
	alloc.commandBufferCount = SHADOW_VIEWS;
	VK_TRY(vkAllocateCommandBuffers(r->device, &alloc, s->shadow_cbs));
	VkFenceCreateInfo fence = {
		.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO,
		.flags = VK_FENCE_CREATE_SIGNALED_BIT, /* the first wait passes */
	};
	VK_TRY(vkCreateFence(r->device, &fence, NULL, &s->fence));
	return true;
}

static void write_image(VkWriteDescriptorSet *w, VkDescriptorImageInfo *info, VkDescriptorSet set,
			uint32_t binding, VkDescriptorType type, VkSampler sampler,
			VkImageView view, VkImageLayout layout)
{
	*info = (VkDescriptorImageInfo){ sampler, view, layout };
	*w = (VkWriteDescriptorSet){
		.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
		.dstSet = set,
		.dstBinding = binding,
		.descriptorCount = 1,
		.descriptorType = type,
		.pImageInfo = info,
	};
}

static void write_buffer(VkWriteDescriptorSet *w, VkDescriptorBufferInfo *info,
			 VkDescriptorSet set, uint32_t binding, VkDescriptorType type,
			 VkBuffer buffer)
{
	*info = (VkDescriptorBufferInfo){ buffer, 0, VK_WHOLE_SIZE };
	*w = (VkWriteDescriptorSet){
		.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
		.dstSet = set,
		.dstBinding = binding,
		.descriptorCount = 1,
		.descriptorType = type,
		.pBufferInfo = info,
	};
}

/* Post-processing images stay in GENERAL: each step reads levels that
 * earlier steps wrote as storage images, and only memory barriers are
 * needed between them. */
static void write_post_set(struct renderer *r, VkDescriptorSet set, VkImageView src,
			   VkImageView src2, VkImageView dst, VkBuffer exposure)
{
	VkWriteDescriptorSet writes[4];
	VkDescriptorImageInfo images[3];
	VkDescriptorBufferInfo buffer;
	const VkDescriptorType sampled = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
	write_image(&writes[0], &images[0], set, 0, sampled, r->linear_sampler, src,
		    VK_IMAGE_LAYOUT_GENERAL);
	write_image(&writes[1], &images[1], set, 1, sampled, r->linear_sampler, src2,
		    VK_IMAGE_LAYOUT_GENERAL);
	write_image(&writes[2], &images[2], set, 2, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
		    VK_NULL_HANDLE, dst, VK_IMAGE_LAYOUT_GENERAL);
	write_buffer(&writes[3], &buffer, set, 3, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, exposure);
	vkUpdateDescriptorSets(r->device, 4, writes, 0, NULL);
}

static bool create_slot_descriptors(struct renderer *r, struct frame_slot *s)
{
	VkDescriptorSetLayout layouts[2 + 2 * BLOOM_LEVELS + 2];
	VkDescriptorSet sets[ARRAY_COUNT(layouts)];
	layouts[0] = r->scene_set_layout;
	layouts[1] = r->lighting_set_layout;
	for (size_t i = 2; i < ARRAY_COUNT(layouts); i++)
		layouts[i] = r->post_set_layout;
	VkDescriptorSetAllocateInfo alloc = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorPool = r->descriptor_pool,
		.descriptorSetCount = ARRAY_COUNT(layouts),
		.pSetLayouts = layouts,
	};
	VK_TRY(vkAllocateDescriptorSets(r->device, &alloc, sets));
	s->scene_set = sets[0];
	s->lighting_set = sets[1];
	for (uint32_t k = 0; k < BLOOM_LEVELS; k++) {
		s->bloom_down_sets[k] = sets[2 + k];
		s->bloom_up_sets[k] = sets[2 + BLOOM_LEVELS + k];
	}
	s->exposure_set = sets[2 + 2 * BLOOM_LEVELS];
	s->tonemap_set = sets[3 + 2 * BLOOM_LEVELS];

	VkWriteDescriptorSet writes[8];
	VkDescriptorBufferInfo buffers[3];
	VkDescriptorImageInfo images[5];
	const VkDescriptorType sampled = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
	const VkImageLayout read_only = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
	write_buffer(&writes[0], &buffers[0], s->scene_set, 0, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
		     s->frame_uniforms.buffer);
	write_buffer(&writes[1], &buffers[1], s->scene_set, 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		     s->objects.buffer);
	write_buffer(&writes[2], &buffers[2], s->lighting_set, 0,
		     VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, s->frame_uniforms.buffer);
	write_image(&writes[3], &images[0], s->lighting_set, 1, sampled, r->point_sampler,
		    s->albedo.view, read_only);
	write_image(&writes[4], &images[1], s->lighting_set, 2, sampled, r->point_sampler,
		    s->normal.view, read_only);
	write_image(&writes[5], &images[2], s->lighting_set, 3, sampled, r->point_sampler,
		    s->depth.view, read_only);
	write_image(&writes[6], &images[3], s->lighting_set, 4, sampled, r->shadow_sampler,
		    s->shadow.view, read_only);
	write_image(&writes[7], &images[4], s->lighting_set, 5, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
		    VK_NULL_HANDLE, s->hdr.view, VK_IMAGE_LAYOUT_GENERAL);
	vkUpdateDescriptorSets(r->device, ARRAY_COUNT(writes), writes, 0, NULL);

	VkBuffer exposure = s->exposure.buffer;
	for (uint32_t k = 0; k < BLOOM_LEVELS; k++) {
		VkImageView src = k == 0 ? s->hdr.view : s->bloom_down_levels[k - 1];
		write_post_set(r, s->bloom_down_sets[k], src, src, s->bloom_down_levels[k],
			       exposure);
		VkImageView low = k + 1 < BLOOM_LEVELS ? s->bloom_up_levels[k + 1]
						       : s->bloom_down_levels[k];
		write_post_set(r, s->bloom_up_sets[k], low, s->bloom_down_levels[k],
			       s->bloom_up_levels[k], exposure);
	}
	/* The exposure step writes no image; its output binding gets one that
	 * is valid and unused. */
	write_post_set(r, s->exposure_set, s->hdr.view, s->hdr.view, s->bloom_down_levels[0],
		       exposure);
	write_post_set(r, s->tonemap_set, s->hdr.view, s->bloom_up_levels[0], s->ldr.view,
		       exposure);
	return true;
}

static bool create_slots(struct renderer *r)
{
	const uint32_t per_slot_sets = 2 + 2 * BLOOM_LEVELS + 2;
	const uint32_t post_sets = per_slot_sets - 2;
	VkDescriptorPoolSize sizes[] = {
		{ VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 2 },
		{ VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1 + post_sets },
		{ VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 4 + 2 * post_sets },
		{ VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1 + post_sets },
	};
	for (size_t i = 0; i < ARRAY_COUNT(sizes); i++)
		sizes[i].descriptorCount *= FRAMES_IN_FLIGHT;
	VkDescriptorPoolCreateInfo pool = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = per_slot_sets * FRAMES_IN_FLIGHT,
		.poolSizeCount = ARRAY_COUNT(sizes),
		.pPoolSizes = sizes,
	};
	VK_TRY(vkCreateDescriptorPool(r->device, &pool, NULL, &r->descriptor_pool));
	for (uint32_t i = 0; i < FRAMES_IN_FLIGHT; i++) {
		struct frame_slot *s = &r->slots[i];
		if (!create_slot_images(r, s) || !create_slot_commands(r, s) ||
		    !create_buffer(r, sizeof(struct frame_uniforms),
				   VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, true, true,
				   &s->frame_uniforms) ||
		    !create_buffer(r, sizeof(struct object_uniforms) * OBJECT_COUNT,
				   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, false, &s->objects) ||
		    !create_buffer(r, 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, false, false,
				   &s->exposure) ||
		    !create_slot_descriptors(r, s))
			return false;
	}
	return true;
}

static bool create_semaphores(struct renderer *r)
{
	if (!r->async_compute)
		return true; /* one queue: barriers order the passes */
	VkSemaphoreTypeCreateInfo timeline = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
		.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
		.initialValue = 0,
	};
	VkSemaphoreCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
		.pNext = &timeline,
	};
	VK_TRY(vkCreateSemaphore(r->device, &info, NULL, &r->geometry_done));
	VK_TRY(vkCreateSemaphore(r->device, &info, NULL, &r->lighting_done));
	return true;
}

/* ------------------------------------------------------------------------ */
/* A frame                                                                  */
/* ------------------------------------------------------------------------ */

static void copy4(float *dst, float x, float y, float z, float w)
{
	dst[0] = x;
	dst[1] = y;
	dst[2] = z;
	dst[3] = w;
}

/* Cascades: from near the camera out to the whole scene; the lighting
 * pass takes the first one that holds a point. */
static const float cascade_along[SHADOW_VIEWS] = { 0.55f, 0.4f, 0.2f, 0.0f };
static const float cascade_radius[SHADOW_VIEWS] = { 7.0f, 11.0f, 18.0f, 34.0f };

/* The frame's jobs: step the physics, animate the scene, cull it for each
 * shadow cascade, build each view's draw list, upload the scene, and
 * record the lighting and post-processing command buffers. Everything
 * moves with the frame number, never with the clock, so that two runs
 * draw the same pictures. */
static void animate(struct renderer *r, struct frame_slot *s, uint64_t frame)
{
	const float t = (float)(frame % 1000000u);
	const float w = (float)r->opt.size.width, h = (float)r->opt.size.height;
	struct frame_uniforms *u = &s->uniforms;
	memset(u, 0, sizeof(*u));

	struct vec3 eye = v3(0.0f, 17.0f, -30.0f), target = v3(0.0f, 0.0f, 1.0f);
	struct vec3 up = v3(0.0f, 1.0f, 0.0f);
	struct mat4 view = mat4_look_at(eye, target, up);
	struct mat4 proj = mat4_perspective(0.785398f, w / h, 0.5f, 150.0f);
	u->view_proj = mat4_mul(&proj, &view);
	u->inv_view_proj = mat4_invert(&u->view_proj);
	copy4(u->camera_position, eye.x, eye.y, eye.z, 1.0f);

	struct vec3 sun = v3_normalize(v3(-0.55f, 0.75f, -0.4f));
	struct vec3 eye_ground = v3(eye.x, 0.0f, eye.z);
	for (int k = 0; k < SHADOW_VIEWS; k++) {
		struct vec3 center =
			v3_add(target, v3_scale(v3_sub(eye_ground, target), cascade_along[k]));
		struct vec3 light_eye = v3_add(center, v3_scale(sun, 60.0f));
		struct mat4 light_view = mat4_look_at(light_eye, center, up);
		struct mat4 light_proj = mat4_ortho(cascade_radius[k], 1.0f, 130.0f);
		u->shadow_view_proj[k] = mat4_mul(&light_proj, &light_view);
		u->cascade_texel[k] = 2.0f * cascade_radius[k] / SHADOW_SIZE;
	}
	copy4(u->sun_direction, sun.x, sun.y, sun.z, 0.0f);
	copy4(u->sun_color, 2.2f, 2.0f, 1.7f, 0.0f);
	copy4(u->ambient, 0.12f, 0.15f, 0.22f, 0.0f);
	u->params[0] = r->opt.size.width;
	u->params[1] = r->opt.size.height;
	u->params[2] = MAX_LIGHTS;
	u->params[3] = (uint32_t)frame;
	for (uint32_t i = 0; i < MAX_LIGHTS; i++) {
		float angle = (float)i * 2.39996f + t * 0.03f * (float)(1 + i % 3);
		float ring = 3.0f + (float)(i % 8) * 1.9f;
		copy4(u->lights[i].position_radius, cosf(angle) * ring,
		      0.6f + (float)(i % 4) * 0.35f, sinf(angle) * ring + 1.0f, 4.5f);
		float hue = hash01(i + 1000u) * 6.0f;
		float rc = fabsf(hue - 3.0f) - 1.0f, gc = 2.0f - fabsf(hue - 2.0f),
		      bc = 2.0f - fabsf(hue - 4.0f);
		copy4(u->lights[i].color, 3.0f * fminf(fmaxf(rc, 0.0f), 1.0f),
		      3.0f * fminf(fmaxf(gc, 0.0f), 1.0f), 3.0f * fminf(fmaxf(bc, 0.0f), 1.0f),
		      0.0f);
	}

	for (uint32_t i = 0; i < OBJECT_COUNT; i++) {
		const struct scene_object *o = &r->objects[i];
		struct object_uniforms *ou = &s->object_data[i];
		struct vec3 p = o->position;
		float angle = 0.0f;
		if (i != GROUND_OBJECT) {
			angle = o->phase + t * o->spin;
			p.y = physics_height(&r->physics, i, frame);
		}
		ou->model = mat4_model(o->axis, angle, o->scale, p);
		memcpy(ou->color, o->color, sizeof(ou->color));
		memcpy(ou->material, o->material, sizeof(ou->material));
	}
}

/* Culls each cascade on the CPU as engines do: the near cascades see a
 * fraction of the scene. The light's depth range holds the whole scene,
 * so only X and Y are tested. */
static void cull(struct renderer *r, struct frame_slot *s)
{
	for (uint32_t i = 0; i < OBJECT_COUNT; i++) {
		const float *model = s->object_data[i].model.m;
		struct vec3 p = v3(model[12], model[13], model[14]);
		float radius = r->objects[i].scale * mesh_radius[r->objects[i].mesh];
		s->in_cascade[i] = 0;
		for (int k = 0; k < SHADOW_VIEWS; k++) {
			const float *m = s->uniforms.shadow_view_proj[k].m;
			float x = m[0] * p.x + m[4] * p.y + m[8] * p.z + m[12];
			float y = m[1] * p.x + m[5] * p.y + m[9] * p.z + m[13];
			float reach = radius / cascade_radius[k];
			if (fabsf(x) <= 1.0f + reach && fabsf(y) <= 1.0f + reach)
				s->in_cascade[i] |= (uint8_t)(1u << k);
		}
	}
}

/* Each view's batches that draw anything; the camera's draws them all. */
static void build_draw_list(struct frame_slot *s)
{
	for (uint32_t v = 0; v <= SHADOW_VIEWS; v++) {
		s->view_batches[v] = 0;
		for (uint32_t i = 0; i < GRID_OBJECTS; i++)
			if (v == SHADOW_VIEWS || (s->in_cascade[i] & (1u << v)))
				s->view_batches[v] |= (uint8_t)(1u << (i / BATCH_OBJECTS));
	}
}

static void upload(struct frame_slot *s)
{
	memcpy(s->frame_uniforms.mapped, &s->uniforms, sizeof(s->uniforms));
	memcpy(s->objects.mapped, s->object_data, sizeof(s->object_data));
}

static void bind_scene(struct renderer *r, struct frame_slot *s, VkCommandBuffer cb,
		       VkPipeline pipeline, uint32_t width, uint32_t height)
{
	VkViewport viewport = { 0.0f, 0.0f, (float)width, (float)height, 0.0f, 1.0f };
	VkRect2D scissor = { { 0, 0 }, { width, height } };
	VkDeviceSize offset = 0;
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
	vkCmdSetViewport(cb, 0, 1, &viewport);
	vkCmdSetScissor(cb, 0, 1, &scissor);
	vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, r->scene_layout, 0, 1,
				&s->scene_set, 0, NULL);
	vkCmdBindVertexBuffers(cb, 0, 1, &r->vertices.buffer, &offset);
	vkCmdBindIndexBuffer(cb, r->indices.buffer, 0, VK_INDEX_TYPE_UINT32);
}

/* Which objects a view draws: those with `bit` set in `visible`, or all
 * of them when `visible` is NULL. */
struct view_filter {
	const uint8_t *visible;
	uint8_t bit;
	uint8_t batches; /* the draw list's: bit B, batch B draws something */
};

static bool view_draws(const struct view_filter *f, uint32_t object)
{
	return !f->visible || (f->visible[object] & f->bit);
}

/* Objects [first, first + count) that the view draws; the object index
 * goes in as firstInstance, where the shaders find their object. */
static void draw_objects(struct renderer *r, crumbs_cmd *cmd, VkCommandBuffer cb,
			 const struct view_filter *f, uint32_t first, uint32_t count)
{
	uint64_t draws = 0, prims = 0, verts = 0;
	for (uint32_t i = first; i < first + count; i++) {
		if (!view_draws(f, i))
			continue;
		const struct mesh *m = &r->meshes[r->objects[i].mesh];
		vkCmdDrawIndexed(cb, m->index_count, 1, m->first_index, m->vertex_offset, i);
		draws++;
		prims += m->index_count / 3;
		verts += m->vertex_count;
	}
	crumbs_draws(cmd, draws, prims, verts);
}

/* One scope per batch that draws anything. */
static void draw_batches(struct renderer *r, crumbs_cmd *cmd, VkCommandBuffer cb,
			 const struct view_filter *f)
{
	_Static_assert(BATCHES <= 8, "a draw list holds a bit per batch");
	for (uint32_t b = 0; b < BATCHES; b++) {
		if (!(f->batches & (1u << b)))
			continue;
		crumbs_scope_beginf(cmd, 3, "Mesh Batch %" PRIu32, b);
		draw_objects(r, cmd, cb, f, b * BATCH_OBJECTS, BATCH_OBJECTS);
		crumbs_scope_end(cmd);
	}
}

/* Inside the shadow render pass: the ground receives shadows, casts none. */
static void draw_shadow_view(struct renderer *r, struct frame_slot *s, crumbs_cmd *cmd,
			     VkCommandBuffer cb, uint32_t view)
{
	const uint32_t push[4] = { view, 0, 0, 0 };
	const struct view_filter cascade = { s->in_cascade, (uint8_t)(1u << view),
					     s->view_batches[view] };
	bind_scene(r, s, cb, r->shadow_pipeline, SHADOW_SIZE, SHADOW_SIZE);
	vkCmdPushConstants(cb, r->scene_layout, VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(push), push);
	draw_batches(r, cmd, cb, &cascade);
}

static bool record_shadow_secondary(struct renderer *r, struct frame_slot *s, uint32_t view)
{
	VkCommandBuffer cb = s->shadow_cbs[view];
	VkCommandBufferInheritanceInfo inheritance = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
		.renderPass = r->shadow_pass,
		.subpass = 0,
		.framebuffer = s->shadow_framebuffers[view],
	};
	VkCommandBufferBeginInfo begin = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT |
			 VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT,
		.pInheritanceInfo = &inheritance,
	};
	VK_TRY(vkBeginCommandBuffer(cb, &begin));
	crumbs_cmd *cmd = crumbs_cmd_begin(r->crumbs, cb, r->graphics_queue);
	draw_shadow_view(r, s, cmd, cb, view);
	crumbs_cmd_end(cmd);
	VK_TRY(vkEndCommandBuffer(cb));
	return true;
}

static bool begin_primary(VkCommandBuffer cb)
{
	VkCommandBufferBeginInfo begin = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VK_TRY(vkBeginCommandBuffer(cb, &begin));
	return true;
}

/* Shadows and the G-buffer. Opens "Frame N", which the post-processing
 * command buffer closes. */
static bool record_geometry(struct renderer *r, struct frame_slot *s, uint64_t frame)
{
	VkCommandBuffer cb = s->geometry_cb;
	if (r->shadow_secondaries)
		for (uint32_t k = 0; k < SHADOW_VIEWS; k++)
			if (!record_shadow_secondary(r, s, k))
				return false;
	if (!begin_primary(cb))
		return false;
	crumbs_cmd *cmd = crumbs_cmd_begin(r->crumbs, cb, r->graphics_queue);
	crumbs_scope_beginf(cmd, 0, "Frame %" PRIu64, frame);

	crumbs_scope_begin(cmd, 1, "Shadow Depths");
	VkClearValue depth_clear = { .depthStencil = { 1.0f, 0 } };
	for (uint32_t k = 0; k < SHADOW_VIEWS; k++) {
		crumbs_scope_beginf(cmd, 2, "Shadow View %" PRIu32, k);
		VkRenderPassBeginInfo pass = {
			.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
			.renderPass = r->shadow_pass,
			.framebuffer = s->shadow_framebuffers[k],
			.renderArea = { { 0, 0 }, { SHADOW_SIZE, SHADOW_SIZE } },
			.clearValueCount = 1,
			.pClearValues = &depth_clear,
		};
		/* crumbs ends and begins its statistics queries on each side
		 * of a render pass's edges. */
		crumbs_pass_edge(cmd, CRUMBS_PASS_BEGINNING, SHADOW_SIZE, SHADOW_SIZE);
		if (r->shadow_secondaries) {
			vkCmdBeginRenderPass(cb, &pass,
					     VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
			crumbs_pass_edge(cmd, CRUMBS_PASS_BEGUN_SECONDARY, 0, 0);
			/* crumbs places the secondary's "Mesh Batch" scopes
			 * under this view. */
			vkCmdExecuteCommands(cb, 1, &s->shadow_cbs[k]);
			crumbs_cmd_execute(cmd, 1, &s->shadow_cbs[k]);
		} else {
			vkCmdBeginRenderPass(cb, &pass, VK_SUBPASS_CONTENTS_INLINE);
			crumbs_pass_edge(cmd, CRUMBS_PASS_BEGUN, 0, 0);
			draw_shadow_view(r, s, cmd, cb, k);
		}
		crumbs_pass_edge(cmd, CRUMBS_PASS_ENDING, 0, 0);
		vkCmdEndRenderPass(cb);
		crumbs_pass_edge(cmd, CRUMBS_PASS_ENDED, 0, 0);
		crumbs_scope_end(cmd);
	}
	crumbs_scope_end(cmd);

	crumbs_scope_begin(cmd, 1, "Base Pass");
	VkClearValue clears[3] = {
		{ .color = { { 0.0f, 0.0f, 0.0f, 0.0f } } },
		{ .color = { { 0.0f, 0.0f, 0.0f, 0.0f } } },
		{ .depthStencil = { 1.0f, 0 } },
	};
	VkRenderPassBeginInfo pass = {
		.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
		.renderPass = r->gbuffer_pass,
		.framebuffer = s->gbuffer_framebuffer,
		.renderArea = { { 0, 0 }, { r->opt.size.width, r->opt.size.height } },
		.clearValueCount = 3,
		.pClearValues = clears,
	};
	crumbs_pass_edge(cmd, CRUMBS_PASS_BEGINNING, r->opt.size.width, r->opt.size.height);
	vkCmdBeginRenderPass(cb, &pass, VK_SUBPASS_CONTENTS_INLINE);
	crumbs_pass_edge(cmd, CRUMBS_PASS_BEGUN, 0, 0);
	bind_scene(r, s, cb, r->gbuffer_pipeline, r->opt.size.width, r->opt.size.height);
	const struct view_filter everything = { NULL, 0, s->view_batches[SHADOW_VIEWS] };
	crumbs_scope_begin(cmd, 2, "Opaque");
	draw_batches(r, cmd, cb, &everything);
	crumbs_scope_begin(cmd, 3, "Ground");
	draw_objects(r, cmd, cb, &everything, GROUND_OBJECT, 1);
	crumbs_scope_end(cmd);
	crumbs_scope_end(cmd);
	crumbs_pass_edge(cmd, CRUMBS_PASS_ENDING, 0, 0);
	vkCmdEndRenderPass(cb);
	crumbs_pass_edge(cmd, CRUMBS_PASS_ENDED, 0, 0);
	crumbs_scope_end(cmd);

	crumbs_cmd_end(cmd);
	VK_TRY(vkEndCommandBuffer(cb));
	return true;
}

static void image_barrier(VkCommandBuffer cb, VkImage image, uint32_t levels,
			  VkPipelineStageFlags src_stage, VkAccessFlags src_access,
			  VkImageLayout old_layout, VkPipelineStageFlags dst_stage,
			  VkAccessFlags dst_access, VkImageLayout new_layout)
{
	VkImageMemoryBarrier barrier = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
		.srcAccessMask = src_access,
		.dstAccessMask = dst_access,
		.oldLayout = old_layout,
		.newLayout = new_layout,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.image = image,
		.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, levels, 0, 1 },
	};
	vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, NULL, 0, NULL, 1, &barrier);
}

/* Between compute passes: what one wrote, the next reads. */
static void compute_barrier(VkCommandBuffer cb)
{
	VkMemoryBarrier barrier = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
	};
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
			     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, NULL, 0,
			     NULL);
}

static uint32_t groups(uint32_t size, uint32_t group)
{
	return (size + group - 1) / group;
}

static bool record_lighting(struct renderer *r, struct frame_slot *s)
{
	VkCommandBuffer cb = s->lighting_cb;
	if (!begin_primary(cb))
		return false;
	crumbs_cmd *cmd = crumbs_cmd_begin(r->crumbs, cb, r->compute_queue);
	crumbs_scope_begin(cmd, 1, "Lighting");
	/* The previous contents are not needed; the frame fence already
	 * ordered this after the last frame's reads of this slot. */
	image_barrier(cb, s->hdr.image, 1, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0,
		      VK_IMAGE_LAYOUT_UNDEFINED, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
		      VK_ACCESS_SHADER_WRITE_BIT, VK_IMAGE_LAYOUT_GENERAL);
	crumbs_scope_begin(cmd, 2, "Tiled Deferred Lighting");
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, r->lighting_pipeline);
	vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, r->lighting_layout, 0, 1,
				&s->lighting_set, 0, NULL);
	vkCmdDispatch(cb, groups(r->opt.size.width, LIGHT_TILE),
		      groups(r->opt.size.height, LIGHT_TILE), 1);
	crumbs_dispatches(cmd, 1);
	crumbs_scope_end(cmd);
	/* For post processing on the same queue; with async compute the
	 * semaphore orders it as well. */
	compute_barrier(cb);
	crumbs_scope_end(cmd);
	crumbs_cmd_end(cmd);
	VK_TRY(vkEndCommandBuffer(cb));
	return true;
}

struct post_push {
	int32_t size[2];
	float params[2];
};

static void post_dispatch(struct renderer *r, crumbs_cmd *cmd, VkCommandBuffer cb,
			  VkPipeline pipeline, VkDescriptorSet set, uint32_t width,
			  uint32_t height, float param0, float param1)
{
	struct post_push push = { { (int32_t)width, (int32_t)height }, { param0, param1 } };
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
	vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, r->post_layout, 0, 1, &set, 0,
				NULL);
	vkCmdPushConstants(cb, r->post_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
	vkCmdDispatch(cb, groups(width, POST_GROUP), groups(height, POST_GROUP), 1);
	crumbs_dispatches(cmd, 1);
	compute_barrier(cb);
}

/* Bloom, exposure and tonemapping. Closes "Frame N". */
static bool record_post(struct renderer *r, struct frame_slot *s)
{
	VkCommandBuffer cb = s->post_cb;
	const uint32_t w = r->opt.size.width, h = r->opt.size.height;
	if (!begin_primary(cb))
		return false;
	crumbs_cmd *cmd = crumbs_cmd_begin(r->crumbs, cb, r->graphics_queue);
	crumbs_scope_begin(cmd, 1, "Post Processing");
	const VkAccessFlags rw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
	const VkImage targets[] = { s->bloom_down.image, s->bloom_up.image, s->ldr.image };
	for (size_t i = 0; i < ARRAY_COUNT(targets); i++)
		image_barrier(cb, targets[i], VK_REMAINING_MIP_LEVELS,
			      VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_IMAGE_LAYOUT_UNDEFINED,
			      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, rw, VK_IMAGE_LAYOUT_GENERAL);

	for (uint32_t k = 0; k < BLOOM_LEVELS; k++) {
		crumbs_scope_beginf(cmd, 2, "Bloom Down %" PRIu32, k);
		post_dispatch(r, cmd, cb, r->bloom_down_pipeline, s->bloom_down_sets[k],
			      bloom_width(r, k), bloom_height(r, k), k == 0 ? 1.2f : 0.0f, 0.0f);
		crumbs_scope_end(cmd);
	}
	for (uint32_t k = BLOOM_LEVELS; k-- > 0;) {
		crumbs_scope_beginf(cmd, 2, "Bloom Up %" PRIu32, k);
		post_dispatch(r, cmd, cb, r->bloom_up_pipeline, s->bloom_up_sets[k],
			      bloom_width(r, k), bloom_height(r, k),
			      k + 1 < BLOOM_LEVELS ? 1.0f : 0.0f, 1.0f);
		crumbs_scope_end(cmd);
	}

	crumbs_scope_begin(cmd, 2, "Tonemap");
	crumbs_scope_begin(cmd, 3, "Average Luminance");
	/* One workgroup: the shader samples a fixed grid. */
	post_dispatch(r, cmd, cb, r->exposure_pipeline, s->exposure_set, 1, 1, 0.0f, 0.0f);
	crumbs_scope_end(cmd);
	crumbs_scope_begin(cmd, 3, "Tone Curve");
	post_dispatch(r, cmd, cb, r->tonemap_pipeline, s->tonemap_set, w, h, 0.08f, 0.0f);
	crumbs_scope_end(cmd);
	crumbs_scope_end(cmd);

	crumbs_scope_end(cmd); /* Post Processing */
	crumbs_scope_end(cmd); /* Frame N, begun in the geometry command buffer */
	crumbs_cmd_end(cmd);
	VK_TRY(vkEndCommandBuffer(cb));
	return true;
}

/*
 * Three submissions. With async compute, the lighting runs on the compute
 * queue: it waits for the G-buffer (geometry_done) and post processing
 * waits for it (lighting_done), both timeline semaphores valued frame + 1.
 * Without, all three go to the graphics queue in order, and the barriers
 * recorded in them are all the ordering needed.
 */
static bool submit_frame(struct renderer *r, struct frame_slot *s, uint64_t frame)
{
	const uint64_t value = frame + 1;
	const bool async = r->async_compute;
	const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;

	VkTimelineSemaphoreSubmitInfo geometry_values = {
		.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
		.signalSemaphoreValueCount = 1,
		.pSignalSemaphoreValues = &value,
	};
	VkSubmitInfo geometry = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.pNext = async ? &geometry_values : NULL,
		.commandBufferCount = 1,
		.pCommandBuffers = &s->geometry_cb,
		.signalSemaphoreCount = async ? 1u : 0u,
		.pSignalSemaphores = async ? &r->geometry_done : NULL,
	};
	VK_TRY(crumbs_queue_submit(r->crumbs, r->graphics_queue, 1, &geometry, VK_NULL_HANDLE));

	VkTimelineSemaphoreSubmitInfo lighting_values = {
		.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
		.waitSemaphoreValueCount = 1,
		.pWaitSemaphoreValues = &value,
		.signalSemaphoreValueCount = 1,
		.pSignalSemaphoreValues = &value,
	};
	VkSubmitInfo lighting = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.pNext = async ? &lighting_values : NULL,
		.waitSemaphoreCount = async ? 1u : 0u,
		.pWaitSemaphores = async ? &r->geometry_done : NULL,
		.pWaitDstStageMask = async ? &wait_stage : NULL,
		.commandBufferCount = 1,
		.pCommandBuffers = &s->lighting_cb,
		.signalSemaphoreCount = async ? 1u : 0u,
		.pSignalSemaphores = async ? &r->lighting_done : NULL,
	};
	if (r->opt.queue_label) {
		VkDebugUtilsLabelEXT label = { .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
					       .pLabelName = r->opt.queue_label };
		r->queue_label_begin(r->compute_queue, &label);
	}
	VK_TRY(crumbs_queue_submit(r->crumbs, r->compute_queue, 1, &lighting, VK_NULL_HANDLE));
	if (r->opt.queue_label)
		r->queue_label_end(r->compute_queue);

	VkTimelineSemaphoreSubmitInfo post_values = {
		.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
		.waitSemaphoreValueCount = 1,
		.pWaitSemaphoreValues = &value,
	};
	VkSubmitInfo post = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.pNext = async ? &post_values : NULL,
		.waitSemaphoreCount = async ? 1u : 0u,
		.pWaitSemaphores = async ? &r->lighting_done : NULL,
		.pWaitDstStageMask = async ? &wait_stage : NULL,
		.commandBufferCount = 1,
		.pCommandBuffers = &s->post_cb,
	};
	VK_TRY(crumbs_queue_submit(r->crumbs, r->graphics_queue, 1, &post, s->fence));
	return true;
}

static bool request_capture(struct renderer *r)
{
	enum crumbs_result res = crumbs_capture_at(r->crumbs, (uint64_t)r->opt.capture_frame,
						   r->opt.settings);
	if (res == CRUMBS_OK)
		return true;
	if (res == CRUMBS_ERROR_INVALID_ARGUMENT && r->opt.settings) {
		r->usage_error = true;
		return fail("--settings '%s' was refused (crumbs says why above)", r->opt.settings);
	}
	return fail("crumbs_capture_at failed: %s", crumbs_result_str(res));
}

static bool create_crumbs(struct renderer *r)
{
	struct crumbs_vk_device device = {
		.physical_device = r->physical_device,
		.device = r->device,
		.features = r->device_features,
	};
	struct crumbs_vk_queue queues[2] = {
		{ r->graphics_queue, 0, r->graphics_family, 0 },
		{ r->compute_queue, 0, r->compute_family, 0 },
	};
	struct crumbs_desc desc = {
		.instance = r->instance,
		.get_instance_proc_addr = r->opt.stub_timestamps ? stub_instance_proc_addr :
								 vkGetInstanceProcAddr,
		.devices = &device,
		.device_count = 1,
		.queues = queues,
		.queue_count = r->async_compute ? 2u : 1u,
		.log = on_crumbs_log,
		.capture_dir = r->opt.capture_dir,
		.program_name = PROGRAM,
		.mirror_labels = (int)r->opt.mirror_labels,
		.counters = r->opt.counters < 0 ? 0 : r->opt.counters ? 1 : -1,
	};
	enum crumbs_result res = crumbs_create(&desc, &r->crumbs);
	if (res != CRUMBS_OK)
		return fail("crumbs_create failed: %s", crumbs_result_str(res));
	crumbs_thread_name(r->crumbs, "Render Thread");
	/* Frame N is asked for now; crumbs makes frame N-1 its pre-roll. */
	if (r->opt.capture_frame >= 0)
		return request_capture(r);
	if (r->opt.record.on) {
		const struct run *run = &r->opt.record;
		res = crumbs_record(r->crumbs, run->first, run->last, run->detail);
		if (res != CRUMBS_OK)
			return fail("crumbs_record failed: %s%s", crumbs_result_str(res),
				    res == CRUMBS_ERROR_BAD_STATE && getenv("CRUMBS_RECORD") ?
					    " (CRUMBS_RECORD asks for a run already)" :
					    "");
	}
	return true;
}

/* The thread's CPU time: what the frame cost the CPU, whatever lavapipe's
 * threads or the scheduler did meanwhile. */
static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Whether frame is one to render: within --frames, or --duration. */
static bool frame_wanted(const struct renderer *r, uint64_t frame, double start)
{
	if (frame < (uint64_t)r->opt.frames)
		return true;
	return frame < MAX_FRAMES && r->opt.duration_ms &&
	       (seconds_now() - start) * 1e3 < (double)r->opt.duration_ms;
}

/* --record-every: the run frames are in or last were, its frames first to
 * last; each after the first is asked for two frames before its pre-roll.
 * `on`: crumbs took it (false, after a message, when it refused it). */
struct runs_ahead {
	uint64_t first, last;
	bool on;
};

static bool in_run(const struct runs_ahead *a, uint64_t frame)
{
	return a->on && frame >= a->first && frame <= a->last;
}

static void next_run(struct renderer *r, struct runs_ahead *a, uint64_t frame)
{
	uint64_t every = (uint64_t)r->opt.record_every;
	if (!every || frame + 2 != a->first + every)
		return;
	a->first += every;
	a->last += every;
	enum crumbs_result res = crumbs_record(r->crumbs, a->first, a->last, r->opt.record.detail);
	a->on = res == CRUMBS_OK;
	if (!a->on)
		fprintf(stderr, "sample-renderer: the run of frames %" PRIu64 " to %" PRIu64
			" could not start: %s\n", a->first, a->last, crumbs_result_str(res));
}

/* The frame's jobs, as the job threads call them. */
static struct frame_slot *job_slot(void *user, uint64_t frame)
{
	return &((struct renderer *)user)->slots[frame % FRAMES_IN_FLIGHT];
}

/* Steps the physics up to the frame's time: one or two steps a frame. */
static bool job_physics(void *user, uint64_t frame)
{
	struct renderer *r = user;
	while (r->physics.steps < physics_steps_due(frame)) {
		/* Each step begins a frame of the physics' own. */
		crumbs_timeline_frame(r->crumbs, "Physics");
		crumbs_cpu_begin(r->crumbs, 2, "Physics Step");
		physics_step(&r->physics, r->objects);
		crumbs_cpu_end(r->crumbs);
	}
	return true;
}

static bool job_animate(void *user, uint64_t frame)
{
	animate(user, job_slot(user, frame), frame);
	return true;
}

static bool job_cull(void *user, uint64_t frame)
{
	cull(user, job_slot(user, frame));
	return true;
}

static bool job_draw_list(void *user, uint64_t frame)
{
	build_draw_list(job_slot(user, frame));
	return true;
}

static bool job_upload(void *user, uint64_t frame)
{
	upload(job_slot(user, frame));
	return true;
}

static bool job_record_lighting(void *user, uint64_t frame)
{
	struct renderer *r = user;
	struct frame_slot *s = job_slot(user, frame);
	VK_TRY(vkResetCommandPool(r->device, s->lighting_pool, 0));
	return record_lighting(r, s);
}

static bool job_record_post(void *user, uint64_t frame)
{
	struct renderer *r = user;
	struct frame_slot *s = job_slot(user, frame);
	VK_TRY(vkResetCommandPool(r->device, s->post_pool, 0));
	return record_post(r, s);
}

/* A frame's graph: the physics, then the animation, which culling and
 * uploading need; the geometry, recorded on the render thread, needs the
 * draw list, and the submission every job. The recording jobs need
 * nothing of the others: the scene reaches the GPU through buffers. */
enum frame_job {
	JOB_PHYSICS,
	JOB_ANIMATE,
	JOB_CULL,
	JOB_DRAW_LIST,
	JOB_UPLOAD,
	JOB_RECORD_LIGHTING,
	JOB_RECORD_POST,
	JOB_COUNT
};

static const struct job frame_jobs[JOB_COUNT] = {
	[JOB_PHYSICS] = { "Physics", job_physics, 0 },
	[JOB_ANIMATE] = { "Animate", job_animate, JOB_BIT(JOB_PHYSICS) },
	[JOB_CULL] = { "Cull", job_cull, JOB_BIT(JOB_ANIMATE) },
	[JOB_DRAW_LIST] = { "Build Draw List", job_draw_list, JOB_BIT(JOB_CULL) },
	[JOB_UPLOAD] = { "Upload", job_upload, JOB_BIT(JOB_ANIMATE) },
	[JOB_RECORD_LIGHTING] = { "Record Lighting", job_record_lighting, 0 },
	[JOB_RECORD_POST] = { "Record Post Processing", job_record_post, 0 },
};

#define ALL_JOBS (JOB_BIT(JOB_COUNT) - 1)
#define RECORD_JOBS (JOB_BIT(JOB_RECORD_LIGHTING) | JOB_BIT(JOB_RECORD_POST))

/* A frame's CPU times on the render thread's clock, in ms; recording
 * counts the recording jobs' time on their threads too. */
struct frame_times {
	double begin, recording, submitting, ending;
};

/*
 * One frame on the render thread, a CPU scope per stage: wait until the
 * GPU is done with the frame's slot, hand the job threads the frame's
 * graph, record the geometry once the draw list is built, wait for the
 * other jobs, submit.
 */

static bool render_frame(struct renderer *r, uint64_t frame, struct frame_times *times)
{
	struct frame_slot *s = &r->slots[frame % FRAMES_IN_FLIGHT];
	crumbs_cpu_wait_begin(r->crumbs, 1, "Wait for GPU");
	VK_TRY(vkWaitForFences(r->device, 1, &s->fence, VK_TRUE, UINT64_MAX));
	crumbs_cpu_end(r->crumbs);
	times->begin = cpu_ms();
	crumbs_cpu_begin(r->crumbs, 1, "Start Jobs");
	VK_TRY(vkResetFences(r->device, 1, &s->fence));
	VK_TRY(vkResetCommandPool(r->device, s->graphics_pool, 0));
	jobs_run(r->jobs, frame_jobs, JOB_COUNT, r, frame);
	crumbs_cpu_end(r->crumbs);

	double recording = cpu_ms();
	crumbs_cpu_begin(r->crumbs, 1, "Record Geometry");
	bool ok = jobs_wait(r->jobs, JOB_BIT(JOB_DRAW_LIST), 2, "Wait for Draw List") &&
		  record_geometry(r, s, frame);
	crumbs_cpu_end(r->crumbs);
	times->recording = cpu_ms() - recording;
	/* Every job ends before the frame does, also after a failure. */
	ok = jobs_wait(r->jobs, ALL_JOBS, 1, "Wait for Jobs") && ok;
	if (!ok)
		return false;
	times->recording += jobs_cpu_ms(r->jobs, RECORD_JOBS);

	times->submitting = cpu_ms();
	crumbs_cpu_begin(r->crumbs, 1, "Submit");
	ok = submit_frame(r, s, frame);
	crumbs_cpu_end(r->crumbs);
	times->ending = cpu_ms();
	return ok;
}

/*
 * --leak: a frame's pattern of allocations, told to crumbs as a program
 * that linked libcrumbs would (under the crumbs layer those calls do
 * nothing, and the layer counts the same allocations itself): BYTES
 * allocated and kept, and BYTES more allocated and freed, so that the
 * frame's high-water is BYTES above what it leaves in use.
 */
static bool leak_frame(struct renderer *r)
{
	if (!r->opt.leak)
		return true;
	if (!r->leaked_count &&
	    !find_memory_type(r, UINT32_MAX, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, &r->leak_type))
		return false;
	VkDeviceMemory *kept = realloc(r->leaked, sizeof(*kept) * (r->leaked_count + 1));
	if (!kept)
		return fail("out of memory");
	r->leaked = kept;
	VkMemoryAllocateInfo info = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = (VkDeviceSize)r->opt.leak,
		.memoryTypeIndex = r->leak_type,
	};
	VkDeviceMemory passing = VK_NULL_HANDLE;
	VK_TRY(vkAllocateMemory(r->device, &info, NULL, &passing));
	crumbs_memory_allocated(r->crumbs, 0, info.memoryTypeIndex, info.allocationSize);
	VkResult res = vkAllocateMemory(r->device, &info, NULL, &kept[r->leaked_count]);
	if (res == VK_SUCCESS) {
		crumbs_memory_allocated(r->crumbs, 0, info.memoryTypeIndex, info.allocationSize);
		r->leaked_count++;
	}
	vkFreeMemory(r->device, passing, NULL);
	crumbs_memory_freed(r->crumbs, 0, info.memoryTypeIndex, info.allocationSize);
	return vk_ok(res, "vkAllocateMemory");
}

static bool render(struct renderer *r)
{
	double start = seconds_now();
	struct runs_ahead ahead = { r->opt.record.first, r->opt.record.last, r->opt.record.on };
	for (uint64_t frame = 0; frame_wanted(r, frame, start); frame++) {
		r->rendered = frame + 1;
		struct frame_times t;
		crumbs_cpu_begin(r->crumbs, 0, "Frame");
		bool ok = leak_frame(r) && render_frame(r, frame, &t);
		crumbs_cpu_end(r->crumbs);
		if (!ok)
			return false;
		crumbs_frame(r->crumbs);
		double end = cpu_ms();
		bool recorded = in_run(&ahead, frame);
		next_run(r, &ahead, frame);
		if (r->opt.serial)
			VK_TRY(vkDeviceWaitIdle(r->device));
		/* The job threads' time counts with the render thread's. */
		double jobs = jobs_cpu_ms(r->jobs, ALL_JOBS);
		if (r->opt.timings)
			fprintf(stderr, "frame %llu cpu %.4f ms: record %.4f submit %.4f crumbs_frame "
				"%.4f %s\n", (unsigned long long)frame, end - t.begin + jobs,
				t.recording, t.ending - t.submitting, end - t.ending,
				recorded ? "run" : "idle");
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* Output and teardown                                                      */
/* ------------------------------------------------------------------------ */

/* strerror() lowercased, as every message here is. */
static const char *error_text(int error, char *buf, size_t size)
{
	snprintf(buf, size, "%s", strerror(error));
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}

/* The image is written under a name of its own that mkstemp() creates
 * new beside `path` (so nothing planted at a name is written through),
 * then renamed over `path`, which replaces what was there, a symbolic
 * link itself. */
static bool write_ppm(const char *path, const uint8_t *rgba, uint32_t width, uint32_t height)
{
	char why[128];
	size_t temp_size = strlen(path) + 8;
	char *temp = malloc(temp_size);
	if (!temp)
		return fail("cannot write '%s': out of memory", path);
	snprintf(temp, temp_size, "%s.XXXXXX", path);
	int fd = mkstemp(temp);
	mode_t mask = umask(0);
	umask(mask);
	FILE *f = fd >= 0 && fchmod(fd, 0644 & ~mask) == 0 ? fdopen(fd, "wb") : NULL;
	if (!f) {
		int saved = errno;
		if (fd >= 0) {
			close(fd);
			unlink(temp);
		}
		free(temp);
		return fail("cannot write '%s': %s", path, error_text(saved, why, sizeof(why)));
	}
	uint8_t *row = malloc((size_t)width * 3);
	bool ok = row != NULL &&
		  fprintf(f, "P6\n%" PRIu32 " %" PRIu32 "\n255\n", width, height) > 0;
	for (uint32_t y = 0; ok && y < height; y++) {
		const uint8_t *src = rgba + (size_t)y * width * 4;
		for (uint32_t x = 0; x < width; x++)
			memcpy(row + x * 3, src + x * 4, 3);
		ok = fwrite(row, 3, width, f) == width;
	}
	free(row);
	bool no_memory = row == NULL;
	int saved = errno;
	if (fclose(f) != 0 && ok) {
		ok = false;
		saved = errno;
	}
	if (ok && rename(temp, path) != 0) {
		ok = false;
		saved = errno;
	}
	if (!ok)
		unlink(temp);
	free(temp);
	if (!ok)
		return fail("cannot write '%s': %s", path,
			    no_memory ? "out of memory" : error_text(saved, why, sizeof(why)));
	return true;
}

/* The final image of the last frame, after the device is idle. */
static bool write_output(struct renderer *r)
{
	struct frame_slot *s = &r->slots[(r->rendered - 1) % FRAMES_IN_FLIGHT];
	const uint32_t w = r->opt.size.width, h = r->opt.size.height;
	struct buffer readback = { 0 };
	struct one_shot once = { 0 };
	bool ok = create_buffer(r, (VkDeviceSize)w * h * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true,
				false, &readback) &&
		  one_shot_begin(r, &once);
	if (ok) {
		image_barrier(once.cb, s->ldr.image, 1, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
			      VK_ACCESS_SHADER_WRITE_BIT, VK_IMAGE_LAYOUT_GENERAL,
			      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT,
			      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
		VkBufferImageCopy region = {
			.imageSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
			.imageExtent = { w, h, 1 },
		};
		vkCmdCopyImageToBuffer(once.cb, s->ldr.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
				       readback.buffer, 1, &region);
		VkMemoryBarrier to_host = {
			.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_HOST_READ_BIT,
		};
		vkCmdPipelineBarrier(once.cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, NULL, 0, NULL);
		ok = one_shot_run(r, &once) && write_ppm(r->opt.output, readback.mapped, w, h);
	}
	one_shot_free(r, &once);
	destroy_buffer(r, &readback);
	return ok;
}

static void destroy_slot(struct renderer *r, struct frame_slot *s)
{
	VkDevice d = r->device;
	vkDestroyFence(d, s->fence, NULL);
	vkDestroyCommandPool(d, s->graphics_pool, NULL);
	vkDestroyCommandPool(d, s->lighting_pool, NULL);
	vkDestroyCommandPool(d, s->post_pool, NULL);
	for (uint32_t k = 0; k < SHADOW_VIEWS; k++) {
		vkDestroyFramebuffer(d, s->shadow_framebuffers[k], NULL);
		vkDestroyImageView(d, s->shadow_layers[k], NULL);
	}
	for (uint32_t k = 0; k < BLOOM_LEVELS; k++) {
		vkDestroyImageView(d, s->bloom_down_levels[k], NULL);
		vkDestroyImageView(d, s->bloom_up_levels[k], NULL);
	}
	vkDestroyFramebuffer(d, s->gbuffer_framebuffer, NULL);
	struct image *images[] = { &s->shadow, &s->albedo, &s->normal, &s->depth,
				   &s->hdr, &s->bloom_down, &s->bloom_up, &s->ldr };
	for (size_t i = 0; i < ARRAY_COUNT(images); i++)
		destroy_image(r, images[i]);
	destroy_buffer(r, &s->frame_uniforms);
	destroy_buffer(r, &s->objects);
	destroy_buffer(r, &s->exposure);
}

/* Every handle may be VK_NULL_HANDLE: this also cleans up after a setup
 * that failed halfway. */
static void renderer_destroy(struct renderer *r)
{
	if (r->device) {
		VkDevice d = r->device;
		for (uint32_t i = 0; i < r->leaked_count; i++)
			vkFreeMemory(d, r->leaked[i], NULL);
		for (uint32_t i = 0; i < FRAMES_IN_FLIGHT; i++)
			destroy_slot(r, &r->slots[i]);
		const VkPipeline pipelines[] = {
			r->shadow_pipeline,     r->gbuffer_pipeline,   r->lighting_pipeline,
			r->bloom_down_pipeline, r->bloom_up_pipeline,  r->exposure_pipeline,
			r->tonemap_pipeline,
		};
		for (size_t i = 0; i < ARRAY_COUNT(pipelines); i++)
			vkDestroyPipeline(d, pipelines[i], NULL);
		vkDestroyPipelineLayout(d, r->scene_layout, NULL);
		vkDestroyPipelineLayout(d, r->lighting_layout, NULL);
		vkDestroyPipelineLayout(d, r->post_layout, NULL);
		vkDestroyDescriptorSetLayout(d, r->scene_set_layout, NULL);
		vkDestroyDescriptorSetLayout(d, r->lighting_set_layout, NULL);
		vkDestroyDescriptorSetLayout(d, r->post_set_layout, NULL);
		vkDestroyDescriptorPool(d, r->descriptor_pool, NULL);
		vkDestroySampler(d, r->point_sampler, NULL);
		vkDestroySampler(d, r->linear_sampler, NULL);
		vkDestroySampler(d, r->shadow_sampler, NULL);
		vkDestroyRenderPass(d, r->shadow_pass, NULL);
		vkDestroyRenderPass(d, r->gbuffer_pass, NULL);
		vkDestroySemaphore(d, r->geometry_done, NULL);
		vkDestroySemaphore(d, r->lighting_done, NULL);
		destroy_buffer(r, &r->vertices);
		destroy_buffer(r, &r->indices);
		vkDestroyDevice(d, NULL);
		r->device = VK_NULL_HANDLE;
	}
	if (r->messenger) {
		PFN_vkDestroyDebugUtilsMessengerEXT destroy =
			(PFN_vkDestroyDebugUtilsMessengerEXT)(void (*)(void))vkGetInstanceProcAddr(
				r->instance, "vkDestroyDebugUtilsMessengerEXT");
		if (destroy)
			destroy(r->instance, r->messenger, NULL);
		r->messenger = VK_NULL_HANDLE;
	}
	vkDestroyInstance(r->instance, NULL);
	r->instance = VK_NULL_HANDLE;
}

static int finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		char why[128];
		fprintf(stderr, PROGRAM ": cannot write to standard output: %s\n",
			error_text(errno, why, sizeof(why)));
		return EXIT_FAILURE_;
	}
	return status;
}

int main(int argc, char **argv)
{
	struct renderer *r = calloc(1, sizeof(*r));
	if (!r) {
		fail("out of memory");
		return EXIT_FAILURE_;
	}
	int status = parse_options(argc, argv, &r->opt);
	if (status != 0 || r->opt.help) {
		if (status == 0)
			print_help();
		free(r);
		return finish(status);
	}
	r->shadow_secondaries = r->opt.shadow_secondaries != 0;
	build_scene(r->objects);
	physics_init(&r->physics, r->objects);

	bool ok = create_instance(r) && choose_device(r) && create_device(r) &&
		  create_render_passes(r) && create_layouts(r) && create_pipelines(r) &&
		  create_samplers(r) && upload_meshes(r) && create_slots(r) &&
		  create_semaphores(r) && create_crumbs(r) &&
		  (r->jobs = jobs_start(r->crumbs, JOB_THREADS)) != NULL;
	double start = seconds_now();
	ok = ok && render(r);
	jobs_stop(r->jobs);
	r->jobs = NULL;
	if (r->device) {
		/* The GPU must be done before crumbs_destroy() and teardown, also
		 * after a failure. */
		VkResult idle = vkDeviceWaitIdle(r->device);
		if (idle != VK_SUCCESS)
			ok = vk_ok(idle, "vkDeviceWaitIdle") && ok;
	}
	double elapsed = seconds_now() - start;
	crumbs_destroy(r->crumbs);
	r->crumbs = NULL;
	if (ok && !r->opt.quiet)
		fprintf(stderr,
			PROGRAM ": %" PRIu64 " frames of %" PRIu32 "x%" PRIu32
				" in %.3f s: %.1f ms a frame (async compute %s)\n",
			r->rendered, r->opt.size.width, r->opt.size.height, elapsed,
			elapsed * 1000.0 / (double)r->rendered, r->async_compute ? "on" : "off");
	if (ok && r->opt.output)
		ok = write_output(r);
	renderer_destroy(r);

	status = ok ? EXIT_OK : r->usage_error ? EXIT_USAGE : EXIT_FAILURE_;
	uint32_t messages = __atomic_load_n(&r->validation_messages, __ATOMIC_RELAXED);
	if (messages > 0) {
		fprintf(stderr, PROGRAM ": %" PRIu32 " validation message%s\n", messages,
			messages == 1 ? "" : "s");
		if (status == EXIT_OK)
			status = EXIT_FAILURE_;
	}
	free(r->leaked);
	free(r);
	return finish(status);
}
