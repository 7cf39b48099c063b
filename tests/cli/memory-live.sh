#!/bin/sh
# SPDX-License-Identifier: MIT
# Video memory, for real: the sample renderer leaks a known size each
# frame (--leak BYTES: BYTES kept, BYTES more allocated and freed), under
# validation, recorded by libcrumbs (the program tells it of each
# allocation) and by the crumbs layer (which counts vkAllocateMemory and
# vkFreeMemory itself). `crumbs stats` must give the exact growth, slope,
# high-water and allocations in its JSON, CSV and text. Then vkcube and
# glxgears through Zink on a virtual X server: their runs must show their
# memory. Prints TAP lines.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
tmp=$(mktemp -d)
xvfb=
cleanup() {
	[ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
LC_ALL=C.UTF-8
export LC_ALL
. tests/cli/tap.sh
pre=
if [ -n "${CRUMBS_LAYER_PRELOAD:-}" ]; then
	pre="env LD_PRELOAD=$(echo "$CRUMBS_LAYER_PRELOAD" | tr ' ' ':')"
	pre="$pre ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-detect_leaks=0}"
fi
renderer_asan=${CRUMBS_RENDERER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}}

# check FILE LEAK WHAT: the vital signs of a run of frames 2 to 11 of a
# renderer leaking LEAK bytes a frame (the checks print TAP lines).
check() {
	"$BUILD/crumbs" stats "$1" --format json >"$tmp/s.json"
	"$BUILD/crumbs" stats "$1" --format csv >"$tmp/s.csv"
	"$BUILD/crumbs" stats "$1" --ascii >"$tmp/s.txt"
	python3 - "$tmp/s.json" "$tmp/s.csv" "$2" <<'EOF' >"$tmp/why" 2>&1
import csv, json, sys
v = json.load(open(sys.argv[1]))["vital_signs"]
leak = int(sys.argv[3])
heaps = [h for h in v["memory"] if h["source"] == "allocations" and h["growth_bytes"]]
if len(heaps) != 1:
    sys.exit(f"{len(heaps)} heaps that grew: {v['memory']}")
h = heaps[0]
want = {"frames": 10, "growth_bytes": 9 * leak, "slope_bytes_per_frame": float(leak),
        "high_frame": 11, "allocations": 20, "frees": 10,
        "allocated_bytes": 20 * leak, "freed_bytes": 10 * leak}
got = {k: h[k] for k in want}
if got != want:
    sys.exit(f"got {got}, want {want}")
# The last frame ends with its leak kept and its passing allocation gone:
# the high-water is a leak above what it leaves in use.
if h["high_bytes"] - h["last_bytes"] != leak or h["last_bytes"] - h["first_bytes"] != 9 * leak:
    sys.exit(f"high {h['high_bytes']}, first {h['first_bytes']}, last {h['last_bytes']}")
a = [g for g in v["allocations"] if g["gpu"] == h["gpu"]]
if not a or (a[0]["per_frame"], a[0]["most"], a[0]["frees"]) != (2.0, 2, 10):
    sys.exit(f"allocations {a}")
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["kind"] == "memory" and r["heap"] == str(h["heap"])]
if len(rows) != 1 or int(rows[0]["growth_bytes"]) != 9 * leak or \
        int(rows[0]["high_bytes"]) != h["high_bytes"] or float(rows[0]["allocations_per_frame"]) != 2.0:
    sys.exit(f"CSV {rows}")
print(f"heap {h['heap']}: high {h['high_bytes']}, growth {h['growth_bytes']}")
EOF
	result $? "$3: crumbs stats gives the exact growth, slope, high-water and allocations ($(cat "$tmp/why"))"
	mib=$(($2 / 1048576))
	grep -q "^GPU 0 heap [0-9]* memory: high-water .* | growth +$((9 * mib)).0 MiB over 10 frames, +$mib.0 MiB a frame | " "$tmp/s.txt" &&
		grep -q "^GPU 0 allocations: 2.0 a frame (most 2, frame [0-9]*) | 1.0 frees a frame$" "$tmp/s.txt"
	result $? "$3: its text's vital signs say so ($(grep -m1 ' memory: ' "$tmp/s.txt"))"
}

# ------------------------------------------------------------------------
# The sample renderer, by libcrumbs and by the layer
# ------------------------------------------------------------------------

mkdir "$tmp/lib"
ASAN_OPTIONS=$renderer_asan "$BUILD/sample-renderer" --frames 14 --record 2:11:1 --leak 1048576 \
	--validate --quiet --capture-dir "$tmp/lib" >"$tmp/lib.out" 2>&1
result $? "the renderer leaking 1 MiB a frame, recording frames 2 to 11, exits 0 with no validation message"
check "$tmp/lib/sample-renderer-run-2.crumbs" 1048576 "libcrumbs"

# crumbs diff: a high-water that grew is a regression (exit 1), one that
# shrank an improvement; the same run against itself, no change. Times,
# which lavapipe's threads make noisy, are kept out by --min-ms.
mkdir "$tmp/lib2"
ASAN_OPTIONS=$renderer_asan "$BUILD/sample-renderer" --frames 14 --record 2:11:1 --leak 3145728 \
	--quiet --capture-dir "$tmp/lib2" >"$tmp/lib2.out" 2>&1
a=$tmp/lib/sample-renderer-run-2.crumbs
b=$tmp/lib2/sample-renderer-run-2.crumbs
"$BUILD/crumbs" diff "$a" "$b" --min-ms 100000 --ascii >"$tmp/diff.out"
status=$?
[ $status = 1 ] && grep -q "^GPU 0 heap [0-9]*: 13.0 MiB -> 39.0 MiB (+26.0 MiB, +200.0%) regressed | growth +9.0 MiB -> +27.0 MiB$" "$tmp/diff.out"
result $? "crumbs diff: the high-water that grew by 26 MiB is a regression, exit 1 (status $status: $(grep ' heap ' "$tmp/diff.out"))"
"$BUILD/crumbs" diff "$b" "$a" --min-ms 100000 --format json >"$tmp/diff.json"
status=$?
[ $status = 0 ] && python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["memory"]; sys.exit(not (len(m) == 1 and m[0]["verdict"] == "improved" and m[0]["change_bytes"] == -26 * 2**20))' "$tmp/diff.json"
result $? "crumbs diff: the other way an improvement, exit 0 (status $status)"
"$BUILD/crumbs" diff "$a" "$a" --min-ms 100000 >/dev/null
result $? "crumbs diff: a run against itself, exit 0"

# crumbs report: a frame's memory under its summary (frame 5 leaves six
# leaks in use).
"$BUILD/crumbs" report "$a" --frame 5 --ascii >"$tmp/report.out"
grep -q "^memory heap [0-9]* ([0-9.]* [KMG]iB device-local): 6.0 MiB in use, high-water 7.0 MiB | 2 allocations (2.0 MiB), 1 free (1.0 MiB)$" "$tmp/report.out"
result $? "crumbs report --frame 5 shows the frame's memory ($(grep -m1 '^memory' "$tmp/report.out"))"

# crumbs stats --budget: lines of a heap's high-water or growth, in bytes.
printf 'GPU 0 heap *  high  %s\nGPU * heap *  growth  9MiB\n' "$(($(python3 -c 'import json, sys; print(max(h["high_bytes"] for h in json.load(open(sys.argv[1]))["vital_signs"]["memory"]))' "$tmp/s.json" 2>/dev/null || echo 0)))B" >"$tmp/ok.budget"
"$BUILD/crumbs" stats "$a" --budget "$tmp/ok.budget" --ascii >"$tmp/ok.out" 2>&1
status=$?
[ $status = 0 ] && grep -q "^2 budget lines: 0 exceeded, 0 matching no row$" "$tmp/ok.out"
result $? "a budget of the run's own high-water and growth (9 MiB) is kept (status $status)"
printf 'GPU 0 heap *  growth  9437183B\n' >"$tmp/over.budget"
"$BUILD/crumbs" stats "$a" --budget "$tmp/over.budget" --format json >"$tmp/over.json" 2>&1
status=$?
[ $status = 1 ] && python3 -c 'import json, sys; b = json.load(open(sys.argv[1]))["budgets"]; sys.exit(not (b[0]["result"] == "exceeded" and b[0]["matches"][0]["value_bytes"] == 9437184))' "$tmp/over.json"
result $? "a growth budget a byte below 9 MiB is exceeded, exit 1 (status $status)"
printf 'GPU 0 heap 0  high  20\n' >"$tmp/bad.budget"
"$BUILD/crumbs" stats "$a" --budget "$tmp/bad.budget" >/dev/null 2>"$tmp/bad.err"
[ $? = 2 ] && grep -q "bad.budget:1: '20' is not a size in bytes" "$tmp/bad.err"
result $? "a memory budget without a unit is a usage error ($(cat "$tmp/bad.err"))"

$pre "$BUILD/crumbs" capture --frames 2:11 -o "$tmp/layer.crumbs" --ascii -- \
	"$BUILD/sample-renderer" --frames 14 --leak 3145728 --validate --quiet \
	>"$tmp/layer.out" 2>&1
result $? "crumbs capture --frames 2:11 of the renderer leaking 3 MiB a frame exits 0 with no validation message"
check "$tmp/layer.crumbs" 3145728 "the layer"
grep -q "^GPU 0 heap [0-9]* memory: " "$tmp/layer.out"
result $? "crumbs capture prints the memory among the vital signs"

# A one-frame capture holds the frame's memory too.
$pre "$BUILD/crumbs" capture --frame 3 -o "$tmp/one.crumbs" --ascii -- \
	"$BUILD/sample-renderer" --frames 6 --leak 1048576 --quiet >"$tmp/one.out" 2>&1 &&
	"$BUILD/crumbs" stats "$tmp/one.crumbs" --format json |
	python3 -c 'import json, sys; m = json.load(sys.stdin)["vital_signs"]["memory"]; sys.exit(not any(h["frames"] == 1 and h["allocations"] == 2 for h in m))'
result $? "a one-frame capture by the layer holds the frame's two allocations"

# ------------------------------------------------------------------------
# vkcube and glxgears through Zink, on a virtual X server
# ------------------------------------------------------------------------

for program in Xvfb vkcube glxgears; do
	command -v "$program" >/dev/null 2>&1
	result $? "$program is installed (tests/install-deps installs it)"
done
[ "$bad" = 0 ] || exit 1
mkfifo "$tmp/display"
Xvfb -displayfd 3 -screen 0 640x480x24 -nolisten tcp 3>"$tmp/display" >"$tmp/xvfb.log" 2>&1 &
xvfb=$!
read -r display <"$tmp/display"
DISPLAY=:$display
export DISPLAY

$pre "$BUILD/crumbs" capture --frames 5:24 -o "$tmp/cube.crumbs" --ascii -- \
	vkcube --validate --c 30 >"$tmp/cube.out" 2>&1
result $? "crumbs capture --frames 5:24 runs vkcube --validate and exits 0"
! grep -q "VALIDATION" "$tmp/cube.out"
result $? "no validation message in vkcube with its memory counted"
grep -q "^GPU 0 heap [0-9]* memory: high-water [0-9.]* [KMG]iB (frame [0-9]*) | growth 0 B over 20 frames, 0 B a frame | " "$tmp/cube.out"
result $? "vkcube's run shows its memory, which does not grow ($(grep -m1 ' memory: ' "$tmp/cube.out"))"
grep -q "^GPU 0 allocations: none in these frames$" "$tmp/cube.out"
result $? "vkcube allocates nothing once it draws, and crumbs says so"

# glxgears draws until stopped; crumbs reports what it recorded.
LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink \
	timeout -s TERM 10 $pre "$BUILD/crumbs" capture --frames 5:24 -o "$tmp/gears.crumbs" --ascii -- \
	glxgears >"$tmp/gears.out" 2>&1
grep -q "^GPU 0 heap [0-9]* memory: high-water [0-9.]* [KMG]iB (frame [0-9]*) | growth " "$tmp/gears.out"
result $? "glxgears through Zink: its run shows its memory ($(grep -m1 ' memory: ' "$tmp/gears.out"))"

echo "1..$n"
exit $bad
