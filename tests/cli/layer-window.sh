#!/bin/sh
# SPDX-License-Identifier: MIT
# Frames of fixed length under the crumbs layer, on programs that never
# present: the sample renderer (three submissions a frame offscreen, the
# last with a fence it waits on) and tests/layer/two_devices.c (one fenced
# fill a frame). By default each fenced submission ends a layer frame, and
# `crumbs capture` says so once, with the way out; with `--window MS`,
# frame N is the Nth window of MS milliseconds from the first submission
# and holds every submission made in it, also when `crumbs trigger` asks
# for it. Then --window's usage errors.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
# Under the sanitizers, programs that load lavapipe run with the options
# tests/run-tests chose for the renderer.
ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}}
export ASAN_OPTIONS
. tests/cli/tap.sh
# The submissions of the first table in a report.
submissions() {
	sed -n 's/.* | \([0-9]*\) submissions | .*/\1/p' "$1" | head -n 1
}
NEVER="crumbs: frames of 'sample-renderer' ended at fenced submissions (it never presented); use --window MS (CRUMBS_LAYER_WINDOW_MS=MS) for frames of fixed length"

# Without --window: frame 2 is one fenced submission's worth, and the
# capture says which rule made it, once.
"$BUILD/crumbs" capture --frame 2 -o "$tmp/fenced.crumbs" --ascii --no-leaf -- \
	"$BUILD/sample-renderer" --frames 4 --validate >"$tmp/fenced.out" 2>"$tmp/fenced.err"
result $? "crumbs capture of the renderer without --window exits 0"
[ "$(grep -cxF "$NEVER" "$tmp/fenced.err")" = 1 ]
result $? "it says once that frames ended at fenced submissions, and suggests --window"
[ "$(submissions "$tmp/fenced.out")" = 3 ]
result $? "a fenced frame holds the renderer's three submissions"

# Windows without a submission are frames too: frame 5 of 10 ms windows
# lies in the renderer's first frame or two, whatever it holds.
"$BUILD/crumbs" capture --window 10 --frame 5 -o "$tmp/short.crumbs" --ascii --no-leaf -- \
	"$BUILD/sample-renderer" --frames 3 >"$tmp/short.out" 2>"$tmp/short.err"
result $? "crumbs capture --window 10 --frame 5 of the renderer exits 0"
grep -q "^GPU profile for frame 5 " "$tmp/short.out" && [ -s "$tmp/short.crumbs" ]
result $? "frame 5 is captured, counted in windows"
! grep -q "never presented" "$tmp/short.err"
result $? "with --window, nothing is said about fences"

# A window that lasts until the program destroys its devices is captured
# then, timed: crumbs waits for the copy of its results at destruction.
"$BUILD/crumbs" capture --window 10000 --frame 0 -o "$tmp/whole.crumbs" --ascii --max-depth 1 \
	-- "$BUILD/tests/two-devices" --frames 5 >"$tmp/whole.out" 2>"$tmp/whole.err"
result $? "crumbs capture of a window that the program's end closes exits 0"
[ "$(grep -c '| 5 submissions | 5 scopes |' "$tmp/whole.out")" = 2 ] &&
	! grep -q 'untimed\|never became available' "$tmp/whole.out" "$tmp/whole.err"
result $? "both devices' captures hold all five frames' work, timed"

# A renderer frame in the captured window has its whole tree of 58
# scopes or none (one begun before the window, when no standing recording
# could be made for it): none is cut short. The renderer waits on each
# frame's fence, and its first frames take lavapipe seconds under the
# sanitizers (shaders compiled at first use), leaving the windows during
# them empty: the window is taken past them, and the renderer goes on
# rendering for a while after it, however fast its frames. The window is
# 2 s: a frame under the sanitizers takes about 200 ms, and one of almost
# a second (seen with the machine's cores oversubscribed three times)
# still leaves a whole frame in it.
"$BUILD/crumbs" capture --window 2000 --frame 2 -o "$tmp/long.crumbs" --ascii --no-leaf \
	--max-depth 1 -- "$BUILD/sample-renderer" --frames 3 --duration 7500 --quiet \
	>"$tmp/long.out" 2>"$tmp/long.err"
result $? "crumbs capture --window 2000 --frame 2 of the renderer exits 0"
# The queue's block: the CPU's above it has a Frame scope too.
awk '/^GPU profile/ { g = 1 } /^CPU profile/ { g = 0 } g' "$tmp/long.out" >"$tmp/long.gpu"
frames=$(grep -c '^| .*|    Frame [0-9][0-9]* *|$' "$tmp/long.gpu")
scopes=$(sed -n 's/.* | \([0-9]*\) scopes | .*/\1/p' "$tmp/long.gpu" | head -n 1)
[ "$frames" -ge 1 ] && [ "${scopes:-0}" = $((58 * frames)) ]
result $? "each of the window's renderer frames has its 58 scopes ($frames frames, ${scopes:-no} scopes)"

# With --window: frame 3 is the fourth window, with every submission made
# in it. two-devices submits one fenced fill a frame on each of its
# devices, a fraction of a millisecond each, so a window of 500 ms holds
# many of them however fast or loaded the machine (a fenced frame holds
# one); each device counts its windows from its own first submission, and
# the program runs until well past the end of the fourth. The window
# before the captured one is the pre-roll, where the layer sets up each
# queue's pools and command buffers: under validation and the sanitizers
# that stops each device for 70 ms or more, and, as the program waits on
# each device in turn, the stop of the second lies in the first's next
# window. Under load, a window of 100 ms was seen to hold nothing.
"$BUILD/crumbs" capture --window 500 --frame 3 -o "$tmp/window.crumbs" --ascii --no-leaf -- \
	"$BUILD/tests/two-devices" --frames 1 --duration 2600 --validate \
	>"$tmp/window.out" 2>"$tmp/window.err"
status=$?
result $status "crumbs capture --window 500 --frame 3 runs two-devices under validation, exits 0"
! grep -q "validation" "$tmp/window.err"
result $? "no validation messages"
[ $status = 0 ] && ! grep -q "validation" "$tmp/window.err" ||
	grep -v '^[|+]' "$tmp/window.err" | head -n 20 | sed 's/^/# /'
grep -q "captured to '$tmp/window.crumbs'" "$tmp/window.err" && zstd -q -t "$tmp/window.crumbs" &&
	zstd -q -t "$tmp/window-device1.crumbs"
result $? "each device's capture is written, the first where -o says"
[ "$(grep -c '^GPU profile for frame 3 ' "$tmp/window.out")" = 2 ]
result $? "the tables of frame 3 of both devices are printed"
held=$(submissions "$tmp/window.out")
[ "${held:-0}" -gt 1 ]
result $? "the window holds more submissions than a fenced frame (${held:-none})"
names "$tmp/window.out" | grep -q '^ *Device 0 work *$'
result $? "its submissions' labels are scopes"
[ "${held:-0}" -gt 1 ] && names "$tmp/window.out" | grep -q '^ *Device 0 work *$' ||
	grep -v '^[|+]' "$tmp/window.out" | head -n 20 | sed 's/^/# /'

# --on-trigger with --window: `crumbs trigger` captures the next window of
# the first device. The socket is named after the PID of crumbs
# capture's child.
mkdir "$tmp/trigger"
(cd "$tmp/trigger" && exec "$ROOT/$BUILD/crumbs" capture --on-trigger --window 100 -- \
	"$ROOT/$BUILD/tests/two-devices" --frames 100000000 >"$tmp/trigger.out" 2>"$tmp/trigger.err") &
capture=$!
i=0
while [ -z "$(ls "$XDG_RUNTIME_DIR/crumbs" 2>/dev/null)" ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
sock=$(ls "$XDG_RUNTIME_DIR/crumbs" 2>/dev/null | head -n 1)
pid=${sock%.sock}
[ -n "$pid" ]
result $? "two-devices under crumbs capture --on-trigger --window listens"
"$BUILD/crumbs" trigger "$pid" --ascii --no-leaf >"$tmp/triggered.out" 2>"$tmp/triggered.err"
result $? "crumbs trigger exits 0 (said: $(tr '\n' ' ' <"$tmp/triggered.err"))"
held=$(submissions "$tmp/triggered.out")
[ "${held:-0}" -gt 1 ]
result $? "the triggered window holds more submissions than a fenced frame (${held:-none})"
[ -n "$pid" ] && kill "$pid" 2>/dev/null
wait "$capture" 2>/dev/null
pid=
[ -n "$(ls "$tmp/trigger"/*.crumbs 2>/dev/null)" ]
result $? "the capture is in the folder crumbs capture ran in"

# Usage errors.
"$BUILD/crumbs" capture --window 0 -- true >/dev/null 2>"$tmp/zero.err"
[ $? = 2 ] && grep -q "option '--window': '0' is not a number of milliseconds from 1 to 10000" \
	"$tmp/zero.err"
result $? "--window 0 is a usage error (exit 2) that says why"
"$BUILD/crumbs" capture --window abc -- true >/dev/null 2>"$tmp/abc.err"
[ $? = 2 ] && grep -q "option '--window': 'abc' is not a number of milliseconds" "$tmp/abc.err"
result $? "--window abc is a usage error (exit 2) that says why"
"$BUILD/crumbs" capture --window 10001 -- true >/dev/null 2>&1
result $((($? == 2) ? 0 : 1)) "--window above 10000 ms is a usage error"
"$BUILD/crumbs" capture --help | grep -q "^  *--window MS "
result $? "crumbs capture --help lists --window"

echo "1..$n"
exit $bad
