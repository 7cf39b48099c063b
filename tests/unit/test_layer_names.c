/* SPDX-License-Identifier: MIT */
/*
 * test_layer_names.c: the names the layer keeps for a program's objects:
 * set, renamed, forgotten on destruction, kept apart by type, cut at a
 * character boundary, and intact when many come and go (removal moves
 * entries back, with no tombstones); and the same of the maps from
 * handles to what the layer keeps of pipelines, passes and views.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../layer/layer_internal.h"

#include <stdio.h>
#include <string.h>

static char buf[OBJECT_NAME_MAX + 1];

static const char *name_of(struct object_names *n, VkObjectType type, uint64_t handle)
{
	object_names_get(n, type, handle, buf, sizeof(buf));
	return buf;
}

static void set_rename_forget(void **state)
{
	(void)state;
	struct object_names n;
	object_names_init(&n);
	assert_string_equal(name_of(&n, VK_OBJECT_TYPE_PIPELINE, 7), "");
	object_names_set(&n, VK_OBJECT_TYPE_PIPELINE, 7, "GBuffer");
	object_names_set(&n, VK_OBJECT_TYPE_IMAGE, 7, "Albedo");
	assert_string_equal(name_of(&n, VK_OBJECT_TYPE_PIPELINE, 7), "GBuffer");
	assert_string_equal(name_of(&n, VK_OBJECT_TYPE_IMAGE, 7), "Albedo");
	object_names_set(&n, VK_OBJECT_TYPE_PIPELINE, 7, "Tiled Lighting");
	assert_string_equal(name_of(&n, VK_OBJECT_TYPE_PIPELINE, 7), "Tiled Lighting");
	/* An empty or NULL name forgets, as does destruction. */
	object_names_set(&n, VK_OBJECT_TYPE_PIPELINE, 7, "");
	assert_string_equal(name_of(&n, VK_OBJECT_TYPE_PIPELINE, 7), "");
	object_names_set(&n, VK_OBJECT_TYPE_PIPELINE, 7, "Again");
	object_names_set(&n, VK_OBJECT_TYPE_PIPELINE, 7, NULL);
	assert_string_equal(name_of(&n, VK_OBJECT_TYPE_PIPELINE, 7), "");
	object_names_forget(&n, VK_OBJECT_TYPE_IMAGE, 7);
	assert_string_equal(name_of(&n, VK_OBJECT_TYPE_IMAGE, 7), "");
	assert_int_equal(atomic_load(&n.count), 0);
	/* Types the layer does not use, and the null handle, are ignored. */
	object_names_set(&n, VK_OBJECT_TYPE_SEMAPHORE, 9, "Frame Done");
	object_names_set(&n, VK_OBJECT_TYPE_BUFFER, 0, "Nothing");
	assert_int_equal(atomic_load(&n.count), 0);
	object_names_release(&n);
}

/* Names are cut to OBJECT_NAME_MAX bytes, never inside a character; so
 * is a copy into a short buffer. */
static void cut_at_characters(void **state)
{
	(void)state;
	struct object_names n;
	object_names_init(&n);
	char name[4096];
	memset(name, 'a', OBJECT_NAME_MAX - 1);
	memcpy(name + OBJECT_NAME_MAX - 1, "\xc3\xa9tape", 7); /* é straddles the limit */
	object_names_set(&n, VK_OBJECT_TYPE_BUFFER, 3, name);
	assert_int_equal(strlen(name_of(&n, VK_OBJECT_TYPE_BUFFER, 3)), OBJECT_NAME_MAX - 1);
	object_names_set(&n, VK_OBJECT_TYPE_BUFFER, 4, "\xe5\x8d\x8a\xe9\x80\x8f\xe6\x98\x8e");
	char small[5];
	assert_int_equal(object_names_get(&n, VK_OBJECT_TYPE_BUFFER, 4, small, sizeof(small)), 3);
	assert_string_equal(small, "\xe5\x8d\x8a");
	memset(name, 'b', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	object_names_set(&n, VK_OBJECT_TYPE_BUFFER, 5, name);
	assert_int_equal(strlen(name_of(&n, VK_OBJECT_TYPE_BUFFER, 5)), OBJECT_NAME_MAX);
	object_names_release(&n);
}

/* A handle like a driver's pointer to its object. */
static uint64_t handle_of(uint64_t h)
{
	return 0x560000000000ull + h * 48;
}

/* Thousands of objects named and destroyed in turn, with handles that
 * collide in the table (hundreds probe past their slot): every survivor
 * keeps its own name. */
static void many_come_and_go(void **state)
{
	(void)state;
	struct object_names n;
	object_names_init(&n);
	char want[32];
	for (uint64_t round = 0; round < 4; round++) {
		for (uint64_t h = 1; h <= 3000; h++) {
			snprintf(want, sizeof(want), "obj %llu.%llu", (unsigned long long)h,
				 (unsigned long long)round);
			object_names_set(&n, VK_OBJECT_TYPE_IMAGE_VIEW, handle_of(h), want);
		}
		for (uint64_t h = 1 + round % 2; h <= 3000; h += 2)
			object_names_forget(&n, VK_OBJECT_TYPE_IMAGE_VIEW, handle_of(h));
		for (uint64_t h = 1; h <= 3000; h++) {
			bool gone = (h % 2) == ((1 + round) % 2);
			snprintf(want, sizeof(want), "obj %llu.%llu", (unsigned long long)h,
				 (unsigned long long)round);
			assert_string_equal(name_of(&n, VK_OBJECT_TYPE_IMAGE_VIEW, handle_of(h)),
					    gone ? "" : want);
		}
		assert_int_equal(atomic_load(&n.count), 1500);
	}
	object_names_release(&n);
}

static void marker_types(void **state)
{
	(void)state;
	assert_int_equal(object_type_of_report(VK_DEBUG_REPORT_OBJECT_TYPE_PIPELINE_EXT),
			 VK_OBJECT_TYPE_PIPELINE);
	assert_int_equal(object_type_of_report(VK_DEBUG_REPORT_OBJECT_TYPE_FRAMEBUFFER_EXT),
			 VK_OBJECT_TYPE_FRAMEBUFFER);
	assert_int_equal(object_type_of_report(VK_DEBUG_REPORT_OBJECT_TYPE_IMAGE_VIEW_EXT),
			 VK_OBJECT_TYPE_IMAGE_VIEW);
	assert_int_equal(object_type_of_report(VK_DEBUG_REPORT_OBJECT_TYPE_FENCE_EXT),
			 VK_OBJECT_TYPE_UNKNOWN);
}

/* The layer's maps from handles (layer_devices.c): values found after
 * many keys come and go, those that probed past a removed one moved
 * back, as the names above are. */
static void handle_maps(void **state)
{
	(void)state;
	struct handle_map m;
	memset(&m, 0, sizeof(m));
	pthread_mutex_init(&m.lock, NULL);
	enum { N = 5000 };
	static bool held[N];
	memset(held, 0, sizeof(held));
	for (uint64_t i = 1; i < N; i++) {
		handle_map_set(&m, i * 0x10000, (void *)(uintptr_t)i);
		held[i] = true;
	}
	/* Take every third, then every fifth of those left. */
	for (uint64_t i = 1; i < N; i += 3) {
		assert_int_equal((uintptr_t)handle_map_take(&m, i * 0x10000), i);
		held[i] = false;
	}
	for (uint64_t i = 1; i < N; i += 5)
		if (held[i]) {
			assert_int_equal((uintptr_t)handle_map_take(&m, i * 0x10000), i);
			held[i] = false;
		}
	assert_null(handle_map_take(&m, 1));
	assert_null(handle_map_take(&m, 0));
	for (uint64_t i = 1; i < N; i++)
		assert_int_equal((uintptr_t)handle_map_get(&m, i * 0x10000), held[i] ? i : 0);
	/* Set again: found again. */
	handle_map_set(&m, 4 * 0x10000, (void *)(uintptr_t)44);
	assert_int_equal((uintptr_t)handle_map_get(&m, 4 * 0x10000), 44);
	handle_map_release(&m, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_rename_forget),
		cmocka_unit_test(cut_at_characters),
		cmocka_unit_test(many_come_and_go),
		cmocka_unit_test(marker_types),
		cmocka_unit_test(handle_maps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
