#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs recorded from the command line, for real: `crumbs capture --frames
# 5:24` records 20 frames of vkcube (under its own validation, on a
# virtual X server) through the layer into one file, and `crumbs trigger
# PID --frames 10` asks the running sample renderer for its next 10
# frames. The files must hold exactly those frames, at the detail asked
# for, and crumbs must print their statistics. Prints TAP lines.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
tmp=$(mktemp -d)
xvfb=
pid=
cube=
renderer=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	[ -n "$renderer" ] && kill -9 "$renderer" 2>/dev/null
	[ -n "$cube" ] && kill "$cube" 2>/dev/null
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
# Under the sanitizers, programs that load lavapipe run with the options
# tests/run-tests chose for the renderer.
renderer_asan=${CRUMBS_RENDERER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}}

# The value of a CSV column (by its header name) in the rows of FILE whose
# first field is KIND, one a line.
csv_column() {
	awk -F, -v kind="$2" -v want="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) col = i; next }
		$1 == kind { print $col }' "$1"
}
# The scope paths of FILE's CSV (quoted or not), one a line.
csv_paths() {
	grep '^scope,' "$1" | cut -d, -f4 | tr -d '"'
}

# ------------------------------------------------------------------------
# crumbs capture --frames on vkcube
# ------------------------------------------------------------------------

for program in Xvfb vkcube glxgears; do
	command -v "$program" >/dev/null 2>&1
	result $? "$program is installed (tests/install-deps installs it)"
done
[ "$bad" = 0 ] || exit 1

# A display of our own: Xvfb names the one it took on a pipe.
mkfifo "$tmp/display"
Xvfb -displayfd 3 -screen 0 640x480x24 -nolisten tcp 3>"$tmp/display" >"$tmp/xvfb.log" 2>&1 &
xvfb=$!
read -r display <"$tmp/display"
DISPLAY=:$display
export DISPLAY
[ -n "$display" ]
result $? "Xvfb runs on display $DISPLAY"

# Programs that are not built here load a sanitized layer only with the
# sanitizers' runtimes preloaded: $pre runs crumbs capture that way. Not
# for the whole script: tools such as pgrep can hang with them.
pre=
if [ -n "${CRUMBS_LAYER_PRELOAD:-}" ]; then
	# One word: the loader takes colons between the libraries too.
	pre="env LD_PRELOAD=$(echo "$CRUMBS_LAYER_PRELOAD" | tr ' ' ':')"
	pre="$pre ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-detect_leaks=0}"
fi

# vkcube presents once a frame: frames 0 to 29, of which 5 to 24 are
# recorded at the default detail.
$pre "$BUILD/crumbs" capture --frames 5:24 -o "$tmp/cube.crumbs" --ascii -- \
	vkcube --validate --c 30 >"$tmp/cube.out" 2>"$tmp/cube.err"
result $? "crumbs capture --frames 5:24 runs vkcube --validate --c 30 and exits 0"
! grep -q "VALIDATION" "$tmp/cube.out" "$tmp/cube.err"
result $? "no validation messages in vkcube with a run recorded"
grep -q "^crumbs: frames 5 to 24 of 'vkcube' recorded to '$tmp/cube.crumbs'\$" "$tmp/cube.err"
result $? "it says which frames were recorded, and where"
[ -s "$tmp/cube.crumbs" ] && zstd -q -t "$tmp/cube.crumbs" &&
	[ -z "$(find "$tmp" -name '.crumbs-capture-*')" ]
result $? "the run is one valid file where -o says; no temporary folder is left"
"$BUILD/crumbs" info "$tmp/cube.crumbs" >"$tmp/cube.info"
grep -q '^frames  *20, numbered 5 to 24' "$tmp/cube.info"
result $? "crumbs info: 20 frames, numbered 5 to 24 ($(grep '^frames' "$tmp/cube.info"))"
"$BUILD/crumbs" stats "$tmp/cube.crumbs" --format csv >"$tmp/cube.csv"
result $? "crumbs stats --format csv reads it"
[ "$(csv_column "$tmp/cube.csv" gpu frames)" = 20 ]
result $? "the GPU frame time row counts 20 frames"
# Labels are scopes of level 0, recorded at every detail level: those
# inside vkcube's render pass too, though the pass itself is a leaf event.
csv_paths "$tmp/cube.csv" >"$tmp/cube.paths"
grep -q '^GPU 0 / Graphics 0 / DrawBegin / InsideRenderPass / ActualDraw$' "$tmp/cube.paths" &&
	[ "$(grep '^scope,.*ActualDraw"*,' "$tmp/cube.csv" | cut -d, -f6)" = 20 ]
result $? "vkcube's labels, those in its render pass too, are scopes in each of the 20 frames ($(tr '\n' ' ' <"$tmp/cube.paths"))"
# vkcube --validate prints the loader's messages on standard output too.
"$BUILD/crumbs" stats "$tmp/cube.crumbs" --ascii >"$tmp/cube.stats"
sed -n '/^Statistics of /,$p' "$tmp/cube.out" >"$tmp/cube.tables"
[ -s "$tmp/cube.tables" ] && cmp -s "$tmp/cube.tables" "$tmp/cube.stats"
result $? "crumbs capture printed what crumbs stats prints of the file"
"$BUILD/crumbs" report "$tmp/cube.crumbs" --frame 5 --ascii >"$tmp/cube5.out"
grep -q "^GPU profile for frame 5 " "$tmp/cube5.out" &&
	! names "$tmp/cube5.out" | grep -q '^ *Draw 36 vertices'
result $? "at the default detail, no leaf events (draws) are recorded"

# A reader that stops reading early (here after one byte) leaves crumbs'
# writes failing, not crumbs killed: the run is still moved where -o says.
$pre "$BUILD/crumbs" capture --frames 5:9 -o "$tmp/piped.crumbs" --ascii -- vkcube --c 12 2>&1 |
	head -c 1 >/dev/null
[ -s "$tmp/piped.crumbs" ] && "$BUILD/crumbs" info "$tmp/piped.crumbs" | grep -q '^frames  *5, numbered 5 to 9$' &&
	[ -z "$(find "$tmp" -name '.crumbs-capture-*')" ]
result $? "with its output read by head -c 1, the run is still one whole file where -o says"

# At detail 3 the draws are recorded too; without -o the run keeps the
# layer's name, in the current folder.
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && $pre "$BUILD/crumbs" capture --frames 10:12 --detail 3 --ascii -- \
	vkcube --c 20 >"$tmp/cube3.out" 2>"$tmp/cube3.err")
result $? "crumbs capture --frames 10:12 --detail 3 exits 0"
[ -s "$tmp/cwd/vkcube-run-10.crumbs" ] &&
	grep -q "recorded to './vkcube-run-10.crumbs'" "$tmp/cube3.err"
result $? "without -o the run is vkcube-run-10.crumbs in the current folder"
"$BUILD/crumbs" report "$tmp/cwd/vkcube-run-10.crumbs" --frame all --ascii >"$tmp/cube3.report"
[ "$(grep -c '^GPU profile for frame 1[0-2] ' "$tmp/cube3.report")" = 3 ] &&
	[ "$(names "$tmp/cube3.report" | grep -c '^ *Draw 36 vertices')" = 3 ]
result $? "at detail 3, each of frames 10 to 12 holds vkcube's draw"

# Zink records each frame's command buffer in the frame before, while the
# last is presented: each frame of a run still holds the render pass and
# draws it submitted, as a one-frame capture does. glxgears draws until
# timeout stops it; validation is stacked below crumbs.
LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation \
	$pre "$BUILD/crumbs" capture --frames 10:49 --detail 3 -o "$tmp/gears.crumbs" --ascii -- \
	timeout 8 glxgears >"$tmp/gears.out" 2>&1
result $((($? == 124) ? 0 : 1)) "crumbs capture --frames 10:49 --detail 3 runs glxgears on Zink until timeout stops it"
! grep -qi "validation error\|VUID" "$tmp/gears.out" &&
	"$BUILD/crumbs" info "$tmp/gears.crumbs" | grep -q '^frames  *40, numbered 10 to 49$'
result $? "40 frames, no validation message"
"$BUILD/crumbs" report "$tmp/gears.crumbs" --frame all --ascii >"$tmp/gears.report"
awk '/^GPU profile for frame / { f = $5; frames++ }
	/^\|.*\| *Render Pass [0-9]+x[0-9]+ .*\| *$/ { if (!(f in pass)) passes++; pass[f] = 1 }
	/^\|.*\| *Draw[A-Za-z]* .*(vertices|indices) · pipeline [0-9a-f][0-9a-f][0-9a-f][0-9a-f] *\| *$/ { draws[f]++ }
	END { for (f in draws) if (draws[f] >= 3) drawn++
	      exit !(frames == 40 && passes == 40 && drawn == 40) }' "$tmp/gears.report"
result $? "each of the 40 frames holds a render pass and at least 3 draws, each with its pipeline's identity"

# A program that stops before its run ends leaves the frames it recorded.
$pre "$BUILD/crumbs" capture --frames 5:500 -o "$tmp/short.crumbs" -- vkcube --c 15 \
	>/dev/null 2>"$tmp/short.err"
result $? "a run past vkcube's last frame exits 0"
"$BUILD/crumbs" info "$tmp/short.crumbs" >"$tmp/short.info" 2>&1 &&
	last=$(sed -n 's/^frames  *[0-9]*, numbered 5 to \([0-9]*\)$/\1/p' "$tmp/short.info") &&
	[ -n "$last" ] && grep -q "^crumbs: '$tmp/short.crumbs' holds frames 5 to $last of frames 5 to 500: 'vkcube' ended after frame $last\$" "$tmp/short.err"
result $? "its file reads, and crumbs says which frames it holds and that vkcube ended after the last ($(grep '^frames' "$tmp/short.info"); said: $(grep ' holds ' "$tmp/short.err"))"

# Under the layer the program's recorder listens too: crumbs capture
# --on-trigger starts vkcube, and crumbs trigger --frames asks it for a run.
mkdir "$tmp/asked"
(cd "$tmp/asked" && exec $pre "$BUILD/crumbs" capture --on-trigger -- vkcube --c 100000 \
	>"$tmp/asked.out" 2>"$tmp/asked.err") &
capture=$!
i=0
cube=
while [ $i -lt 200 ] && { [ -z "$cube" ] || [ ! -S "$XDG_RUNTIME_DIR/crumbs/$cube.sock" ]; }; do
	sleep 0.1
	cube=$(pgrep -P "$capture")
	i=$((i + 1))
done
"$BUILD/crumbs" trigger "$cube" --frames 5 --timeout 60 >"$tmp/asked.stats" 2>"$tmp/asked.said"
result $? "crumbs trigger --frames 5 on vkcube under crumbs capture --on-trigger exits 0 (said: $(tr '\n' ' ' <"$tmp/asked.said"))"
run=$(sed -n "s/^crumbs: frames .* of process $cube recorded to '\(.*\)'\$/\1/p" "$tmp/asked.said")
case $run in "$tmp"/asked/vkcube-run-*.crumbs) ;; *) false ;; esac &&
	"$BUILD/crumbs" info "$run" | grep -q '^frames  *5, numbered' &&
	grep -q '^Statistics of 5 frames' "$tmp/asked.stats"
result $? "the run is vkcube-run-A.crumbs where crumbs capture runs, with 5 frames"
kill "$cube" 2>/dev/null
wait "$capture"
cube=

kill "$xvfb" 2>/dev/null
xvfb=

# ------------------------------------------------------------------------
# crumbs trigger --frames on the sample renderer
# ------------------------------------------------------------------------

# `env` execs the renderer, so $! is the renderer's own PID.
start_renderer() {
	env ASAN_OPTIONS="$renderer_asan" "$BUILD/sample-renderer" --frames 100000 --quiet \
		--capture-dir "$tmp" >"$tmp/renderer.out" 2>"$tmp/renderer.err" &
	pid=$!
	i=0
	while [ ! -S "$XDG_RUNTIME_DIR/crumbs/$pid.sock" ] && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -S "$XDG_RUNTIME_DIR/crumbs/$pid.sock" ]
}

start_renderer
result $? "the renderer listens for crumbs trigger"
"$BUILD/crumbs" trigger "$pid" --frames 10 --ascii --timeout 120 >"$tmp/trigger.out" \
	2>"$tmp/trigger.err"
result $? "crumbs trigger --frames 10 exits 0 (said: $(tr '\n' ' ' <"$tmp/trigger.err"))"
first=$(sed -n "s/^crumbs: recording frames \([0-9]*\) to [0-9]* of process $pid\$/\1/p" \
	"$tmp/trigger.err")
last=$(sed -n "s/^crumbs: recording frames [0-9]* to \([0-9]*\) of process $pid\$/\1/p" \
	"$tmp/trigger.err")
[ -n "$first" ] && [ -n "$last" ] && [ $((last - first + 1)) = 10 ]
result $? "it says which 10 frames are recorded ($first to $last)"
run=$tmp/sample-renderer-run-$first.crumbs
grep -q "^crumbs: frames $first to $last of process $pid recorded to '$run'\$" "$tmp/trigger.err"
result $? "then where they went"
"$BUILD/crumbs" info "$run" >"$tmp/trigger.info" &&
	grep -q "^frames  *10, numbered $first to $last" "$tmp/trigger.info"
result $? "the file holds those 10 frames ($(grep '^frames' "$tmp/trigger.info"))"
"$BUILD/crumbs" stats "$run" --ascii >"$tmp/trigger.stats"
[ -s "$tmp/trigger.out" ] && cmp -s "$tmp/trigger.out" "$tmp/trigger.stats"
result $? "crumbs trigger printed what crumbs stats prints of the file"
"$BUILD/crumbs" stats "$run" --format csv >"$tmp/trigger.csv"
csv_paths "$tmp/trigger.csv" | grep -q '/ Post Processing$' &&
	! csv_paths "$tmp/trigger.csv" | grep -q -e 'Tonemap' -e 'Bloom Down'
result $? "at the default detail 1, coarse scopes only (Post Processing, no Tonemap)"

"$BUILD/crumbs" trigger "$pid" --frames 5 --detail 2 --timeout 120 \
	>"$tmp/trigger2.out" 2>"$tmp/trigger2.err"
result $? "crumbs trigger --frames 5 --detail 2 exits 0"
run2=$(sed -n "s/^crumbs: frames .* recorded to '\(.*\)'\$/\1/p" "$tmp/trigger2.err")
[ -n "$run2" ] && "$BUILD/crumbs" stats "$run2" --format csv >"$tmp/trigger2.csv" &&
	csv_paths "$tmp/trigger2.csv" | grep -q '/ Tonemap$' &&
	[ "$(csv_column "$tmp/trigger2.csv" gpu frames)" = 5 ]
result $? "at detail 2, the finer scopes too (Tonemap), in 5 frames"

# A run counts pipeline statistics when asked for with --counters; the
# first, asked for without, counted none.
"$BUILD/crumbs" trigger "$pid" --frames 5 --counters --ascii --timeout 120 \
	>"$tmp/trigger3.out" 2>"$tmp/trigger3.err"
result $? "crumbs trigger --frames 5 --counters exits 0"
grep -q "^ *5 *[1-9][0-9]* *[1-9][0-9]* .* Graphics 0 / Frame #\$" "$tmp/trigger3.out" &&
	"$BUILD/crumbs" stats "$run" --counters --ascii | grep -q "no frame counted any"
result $? "its 5 frames counted the frame's primitives and invocations; the run without --counters none"

"$BUILD/crumbs" trigger "$pid" --frames 10 --no-wait >"$tmp/nowait.out" 2>"$tmp/nowait.err"
result $? "crumbs trigger --frames 10 --no-wait exits 0"
[ ! -s "$tmp/nowait.out" ] &&
	grep -q "^crumbs: recording frames [0-9]* to [0-9]* of process $pid\$" "$tmp/nowait.err" &&
	[ "$(wc -l <"$tmp/nowait.err")" = 1 ]
result $? "and returns once the run is queued"

kill "$pid"
wait "$pid" 2>/dev/null
pid=

# A program killed mid-run (an open one, --frames 5:) leaves the frames of
# the chunks written before: crumbs takes the file, says where it is cut,
# prints the statistics of the frames before and returns 128 + 9.
$pre "$BUILD/crumbs" capture --frames 5: -o "$tmp/killed.crumbs" --ascii -- env \
	ASAN_OPTIONS="$renderer_asan" "$BUILD/sample-renderer" --frames 100000 --quiet \
	>"$tmp/killed.out" 2>"$tmp/killed.err" &
capture=$!
i=0
while [ $i -lt 600 ] && [ -z "$(find "$tmp" -path '*/.crumbs-capture-*' \
	-name 'sample-renderer-run-5.crumbs' -size +2k)" ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 1
kill -9 "$(pgrep -P "$capture")"
wait "$capture"
result $((($? == 137) ? 0 : 1)) "crumbs capture of a program killed mid-run returns 137"
grep -q "^crumbs: frames 5 to the end of 'env' recorded to '$tmp/killed.crumbs'\$" \
	"$tmp/killed.err" && grep -q "^crumbs: cannot read '$tmp/killed.crumbs': truncated at byte" \
	"$tmp/killed.err"
result $? "it says where the run went, and where the file is cut"
"$BUILD/crumbs" info "$tmp/killed.crumbs" >"$tmp/killed.info" 2>/dev/null
grep -q '^frames  *[0-9]*, numbered 5 to [0-9]' "$tmp/killed.info" &&
	grep -q '^Statistics of [0-9]* frames (5 to [0-9]*)' "$tmp/killed.out"
result $? "the frames before the cut read, from frame 5 ($(grep '^frames' "$tmp/killed.info"))"
last=$(sed -n 's/^frames  *[0-9]*, numbered 5 to \([0-9]*\)$/\1/p' "$tmp/killed.info")
[ -n "$last" ] && grep -q "^crumbs: '$tmp/killed.crumbs' holds frames 5 to $last of frames 5 to the end: 'env' was killed by signal 9 before closing it, so any frame recorded after frame $last is lost\$" "$tmp/killed.err"
result $? "and says which frames the file holds, and why no more (said: $(grep ' holds ' "$tmp/killed.err"))"

# Killed in its first second, as \`crumbs capture --frames 0: -- timeout 8
# PROGRAM\` kills a slow program: 0.3 s after the renderer's frame 4, by
# when the layer's frame 0 is written and flushed, SIGTERM (timeout's)
# ends it. The run's file is taken, holds frames from 0, and crumbs says
# which and why no more, not that the run never began.
$pre "$BUILD/crumbs" capture --frames 0: -o "$tmp/early.crumbs" --ascii -- env \
	ASAN_OPTIONS="$renderer_asan" "$BUILD/sample-renderer" --frames 100000 --quiet \
	--size 160x90 --timings >"$tmp/early.out" 2>"$tmp/early.err" &
capture=$!
i=0
while [ $i -lt 1200 ] && ! grep -q '^frame 4 cpu' "$tmp/early.err"; do
	sleep 0.05
	i=$((i + 1))
done
sleep 0.3
kill -TERM "$(pgrep -P "$capture")"
wait "$capture"
status=$?
"$BUILD/crumbs" info "$tmp/early.crumbs" >"$tmp/early.info" 2>/dev/null
last=$(sed -n 's/^frames  *[0-9]*, numbered 0 to \([0-9]*\)$/\1/p' "$tmp/early.info")
[ $status = 143 ] && [ -n "$last" ] && ! grep -q "ended before its run began" "$tmp/early.err" &&
	grep -q "^crumbs: '$tmp/early.crumbs' holds frames\{0,1\} 0\( to $last\)\{0,1\} of frames 0 to the end: 'env' was killed by signal 15 before closing it, so any frame recorded after frame $last is lost\$" "$tmp/early.err"
result $? "killed 0.3 s after frame 4: exit $status, the file holds frames from 0, and crumbs says which and why ($(grep '^frames' "$tmp/early.info"); said: $(grep -e ' holds ' -e 'began' "$tmp/early.err"))"

# A job's time limit: SIGTERM to crumbs goes on to the program, which ends
# as it would alone; crumbs takes the run's file, prints its statistics and
# returns the program's status, and no program is left running.
$pre "$BUILD/crumbs" capture --frames 5: -o "$tmp/term.crumbs" --ascii -- env \
	ASAN_OPTIONS="$renderer_asan" "$BUILD/sample-renderer" --frames 100000 --quiet \
	>"$tmp/term.out" 2>"$tmp/term.err" &
capture=$!
i=0
while [ $i -lt 600 ] && [ -z "$(find "$tmp" -path '*/.crumbs-capture-*' \
	-name 'sample-renderer-run-5.crumbs' -size +2k)" ]; do
	sleep 0.1
	i=$((i + 1))
done
renderer=$(pgrep -P "$capture")
kill -TERM "$capture"
wait "$capture"
result $((($? == 143) ? 0 : 1)) "crumbs capture sent SIGTERM returns the program's 128 + 15"
sleep 0.2
! kill -0 "$renderer" 2>/dev/null
result $? "the program got the signal and is gone"
"$BUILD/crumbs" info "$tmp/term.crumbs" >"$tmp/term.info" 2>/dev/null
grep -q '^frames  *[0-9]*, numbered 5 to [0-9]' "$tmp/term.info" &&
	grep -q '^Statistics of [0-9]* frames (5 to [0-9]*)' "$tmp/term.out" &&
	[ -z "$(find "$tmp" -path '*/.crumbs-capture-*')" ]
result $? "the run's file is taken to -o and its statistics printed ($(grep '^frames' "$tmp/term.info"))"

echo "1..$n"
exit $bad
