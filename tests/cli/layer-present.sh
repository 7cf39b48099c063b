#!/bin/sh
# SPDX-License-Identifier: MIT
# Presentation under the crumbs layer, on a virtual X server (Xvfb) with
# lavapipe, which says nothing of when a frame was shown:
#   - vkcube's run under `crumbs capture --frames`: its presents are
#     recorded, and `crumbs stats` gives their CPU intervals and says that
#     when frames were shown is not known; glxgears through Zink the same;
#   - the same with tests/layer/present_script.c below crumbs' layer in
#     place of a display, which offers VK_GOOGLE_display_timing, or
#     VK_KHR_present_id with VK_KHR_present_wait, and shows the presents
#     as a script says: presents 10, 15 and 20 of vkcube shown 2, 3 and 2
#     refresh periods after the one before, every other one period after.
#     crumbs must count 1 + 2 + 1 = 4 missed v-syncs and 3 frames shown
#     late, with either extension, the validation layer stacked between
#     the two and silent; and none when told not to use them
#     (CRUMBS_LAYER_NO_PRESENT_TIMES).
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
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
. tests/cli/tap.sh

for program in Xvfb vkcube glxgears python3; do
	command -v "$program" >/dev/null 2>&1
	result $? "$program is installed (tests/install-deps installs it)"
done
script=$(pwd)/$BUILD/tests/present_script/libVkLayer_crumbs_test_present.so
[ -f "$script" ]
result $? "the present script layer is built"
[ "$bad" = 0 ] || exit 1

VK_ADD_LAYER_PATH=$(pwd)/$BUILD:$tmp/layers
export VK_ADD_LAYER_PATH
mkdir -p "$tmp/layers"
cat >"$tmp/layers/present_script.json" <<EOF
{
	"file_format_version": "1.1.2",
	"layer": {
		"name": "VK_LAYER_CRUMBS_test_present",
		"type": "GLOBAL",
		"library_path": "$script",
		"api_version": "1.3.0",
		"implementation_version": "1",
		"description": "crumbs' tests: presents shown as a script says"
	}
}
EOF

mkfifo "$tmp/display"
Xvfb -displayfd 3 -screen 0 640x480x24 -nolisten tcp 3>"$tmp/display" >"$tmp/xvfb.log" 2>&1 &
xvfb=$!
read -r display <"$tmp/display"
DISPLAY=:$display
export DISPLAY
[ -n "$display" ]
result $? "Xvfb runs on display $DISPLAY"

if [ -n "${CRUMBS_LAYER_PRELOAD:-}" ]; then
	LD_PRELOAD=$CRUMBS_LAYER_PRELOAD
	export LD_PRELOAD
	ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-detect_leaks=0}
	export ASAN_OPTIONS
fi

# presentation FILE: the "presentation" member of crumbs stats' JSON, as
# KEY=VALUE lines.
presentation() {
	"$BUILD/crumbs" stats "$1" --format json |
		python3 -c 'import json, sys
p = json.load(sys.stdin).get("presentation") or {}
for k, v in sorted(p.items()):
    print("%s=%s" % (k, json.dumps(v)))'
}
# has FILE KEY=VALUE
has() { grep -qx "$2" "$1"; }

# Lavapipe on Xvfb: CPU intervals, and the lack of shown times said.
VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation \
	"$BUILD/crumbs" capture --frames 5:30 -o "$tmp/cube.crumbs" -- vkcube --c 40 \
	>"$tmp/cube.out" 2>&1
result $? "vkcube's run under crumbs capture --frames exits 0"
! grep -qi "validation error\|VUID" "$tmp/cube.out"
result $? "no validation message"
presentation "$tmp/cube.crumbs" >"$tmp/cube.p"
has "$tmp/cube.p" 'presents=26' && has "$tmp/cube.p" 'swapchains=1' &&
	has "$tmp/cube.p" 'intervals=25' && has "$tmp/cube.p" 'clock="cpu"' &&
	has "$tmp/cube.p" 'shown=0' && has "$tmp/cube.p" 'missed_vsyncs=null'
result $? "its 26 presents are recorded, 25 CPU intervals, no shown time, no v-sync counted ($(paste -sd' ' "$tmp/cube.p"))"
grep -q "^Present interval: median [0-9.]* ms, p99 [0-9.]* ms, max [0-9.]* ms (frame [0-9]*) . from present call to present call on the CPU: when frames were shown is not known$" "$tmp/cube.out" &&
	grep -q "^Missed v-syncs: not known: nothing says when frames were shown" "$tmp/cube.out"
result $? "crumbs capture's statistics give the present interval and say that when frames were shown is not known"

LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink \
	"$BUILD/crumbs" capture --frames 20:40 -o "$tmp/gears.crumbs" -- timeout 6 glxgears \
	>"$tmp/gears.out" 2>&1
presentation "$tmp/gears.crumbs" >"$tmp/gears.p"
has "$tmp/gears.p" 'presents=21' && has "$tmp/gears.p" 'intervals=20' &&
	has "$tmp/gears.p" 'clock="cpu"'
result $? "glxgears through Zink: its 21 presents and 20 intervals are recorded ($(paste -sd' ' "$tmp/gears.p"))"
grep -q "^Present interval: median " "$tmp/gears.out"
result $? "and its statistics give the present interval"

# scripted OFFER NAME [VAR=VALUE...]: vkcube under crumbs capture with the
# script layer below crumbs' offering OFFER, the validation layer between.
scripted() {
	offer=$1 name=$2
	shift 2
	env CRUMBS_TEST_PRESENT_OFFER="$offer" CRUMBS_TEST_PRESENT_REFRESH_NS=50000000 \
		CRUMBS_TEST_PRESENT_SCRIPT=10:2,15:3,20:2 \
		VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation:VK_LAYER_CRUMBS_test_present "$@" \
		"$BUILD/crumbs" capture --frames 5:30 -o "$tmp/$name.crumbs" -- vkcube --c 40 \
		>"$tmp/$name.out" 2>&1
	result $? "$name: vkcube's run exits 0 with the script layer offering '$offer'"
	! grep -qi "validation error\|VUID\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/$name.out"
	result $? "$name: no validation message, crash or sanitizer report"
	presentation "$tmp/$name.crumbs" >"$tmp/$name.p"
}

scripted timing timing
has "$tmp/timing.p" 'display_timing=true' && has "$tmp/timing.p" 'present_wait=false' &&
	has "$tmp/timing.p" 'refresh_ns=50000000' && has "$tmp/timing.p" 'clock="shown"'
result $? "timing: shown times from display timing, at its refresh period ($(paste -sd' ' "$tmp/timing.p"))"
has "$tmp/timing.p" 'missed_vsyncs=4' && has "$tmp/timing.p" 'late_frames=3' &&
	has "$tmp/timing.p" 'max_ns=150000000' && has "$tmp/timing.p" 'median_ns=50000000'
result $? "timing: exactly 4 missed v-syncs, 3 frames shown late, the longest interval 3 periods"
grep -q "^Missed v-syncs: 4, 3 frames shown late, of [0-9]* intervals at a 50.000 ms refresh" "$tmp/timing.out" &&
	grep -q "from shown to shown (VK_GOOGLE_display_timing)$" "$tmp/timing.out"
result $? "timing: crumbs capture's statistics say so"

scripted wait wait
has "$tmp/wait.p" 'present_wait=true' && has "$tmp/wait.p" 'display_timing=false' &&
	has "$tmp/wait.p" 'refresh_ns=50000000'
result $? "wait: shown times from present wait, the refresh period from display timing ($(paste -sd' ' "$tmp/wait.p"))"
has "$tmp/wait.p" 'missed_vsyncs=4' && has "$tmp/wait.p" 'late_frames=3'
result $? "wait: exactly 4 missed v-syncs and 3 frames shown late"

scripted both off CRUMBS_LAYER_NO_PRESENT_TIMES=1
has "$tmp/off.p" 'clock="cpu"' && has "$tmp/off.p" 'missed_vsyncs=null' &&
	has "$tmp/off.p" 'presents=26'
result $? "CRUMBS_LAYER_NO_PRESENT_TIMES: presents with their CPU times alone"

echo "1..$n"
[ "$bad" = 0 ]
