#!/bin/sh
# SPDX-License-Identifier: MIT
# What libcrumbs exports, read with nm: every global symbol that
# libcrumbs.a and libcrumbs.so define starts with crumbs_, the API is
# there, internals such as now_ns are local, and the shared library has
# its versioned soname and needs no libvulkan.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/cli/tap.sh

# Defined global symbols: nm's uppercase types other than U (undefined).
globals() {
	nm "$@" 2>"$tmp/nm.err" | awk 'NF == 3 && $2 ~ /^[A-TV-Z]$/ { print $3 }' | sort -u
}

for lib in "$BUILD/libcrumbs.a" "$BUILD/libcrumbs.so"; do
	name=$(basename "$lib")
	[ -f "$lib" ]
	result $? "$name is built"
	if [ "$name" = libcrumbs.so ]; then
		globals -D --defined-only "$lib" >"$tmp/dynamic"
		globals --defined-only "$lib" >"$tmp/static"
		sort -u "$tmp/dynamic" "$tmp/static" >"$tmp/$name"
	else
		globals --defined-only "$lib" >"$tmp/$name"
	fi
	grep -v '^crumbs_' "$tmp/$name" >"$tmp/foreign"
	[ ! -s "$tmp/foreign" ]
	result $? "$name defines only crumbs_ globals ($(wc -l <"$tmp/$name") of them)"
	sed 's/^/#   not crumbs_: /' "$tmp/foreign"
	for sym in crumbs_create crumbs_destroy crumbs_frame crumbs_capture crumbs_cmd_begin \
		crumbs_scope_record_ crumbs_scope_close_ crumbs_count_ crumbs_queue_submit \
		crumbs_writer_open crumbs_writer_cpu_thread crumbs_writer_cpu_begin \
		crumbs_writer_cpu_end crumbs_result_str crumbs_cpu_wait_record_ crumbs_task_begin \
		crumbs_task_state_ crumbs_task_end_ crumbs_task_depend_ crumbs_timeline_frame_ \
		crumbs_writer_task_begin crumbs_writer_frame_thread; do
		grep -qx "$sym" "$tmp/$name" || echo "#   missing: $sym"
	done >"$tmp/missing"
	[ ! -s "$tmp/missing" ]
	result $? "$name exports the API that crumbs.h declares"
	cat "$tmp/missing"
	for sym in now_ns calibrate store_event store_map_find pools_take_slots output_init \
		reader_open_file arena_alloc options_parse crumbs_create_layered; do
		grep -qx "$sym" "$tmp/$name" && echo "#   global: $sym"
	done >"$tmp/leaked"
	[ ! -s "$tmp/leaked" ]
	result $? "$name keeps its internals (now_ns, store_map_find, ...) local"
	cat "$tmp/leaked"
done

# The version the build was made with (VERSION in the Makefile).
version=$(sed -n 's/^#define CRUMBS_VERSION "\(.*\)"$/\1/p' "$BUILD/version.h")
major=${version%%.*}
soname=$(objdump -p "$BUILD/libcrumbs.so" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
[ -n "$version" ] && [ "$soname" = "libcrumbs.so.$major" ]
result $? "libcrumbs.so has the soname libcrumbs.so.$major (got '$soname', version '$version')"
[ "$(readlink "$BUILD/libcrumbs.so.$major")" = "libcrumbs.so.$version" ]
result $? "libcrumbs.so.$major links to libcrumbs.so.$version"
! objdump -p "$BUILD/libcrumbs.so" | grep -q 'NEEDED.*libvulkan'
result $? "libcrumbs.so needs no libvulkan: it loads Vulkan through the program's loader"

# The frame path's two sections, whose bounds the linker gives path_warm()
# (without them it prefetches nothing, silently): in the shared library,
# the layer and a program linked with libcrumbs.a, each holding the
# functions it should, with its bounds defined and not exported (local, or
# hidden in the program).
for bin in "$BUILD/libcrumbs.so" "$BUILD/libVkLayer_crumbs.so" "$BUILD/sample-renderer"; do
	for part in record:crumbs_cmd_begin frame:crumbs_frame; do
		sec=crumbs_${part%%:*}_path fn=${part#*:}
		readelf -sW "$bin" 2>/dev/null | awk -v sec="$sec" -v fn="$fn" '
			# readelf pads its addresses: as strings, they compare as numbers.
			$8 == "__start_" sec { start = "x" $2; startb = $5 $6 }
			$8 == "__stop_" sec { stop = "x" $2; stopb = $5 $6 }
			$8 == fn && $4 == "FUNC" { at = "x" $2 }
			END { exit !(start != "" && stop > start && at >= start && at < stop &&
				     startb ~ /^LOCAL|HIDDEN$/ && stopb ~ /^LOCAL|HIDDEN$/) }'
		result $? "$(basename "$bin"): $fn in $sec, whose bounds the linker defined, not exported"
	done
done

exit $bad
