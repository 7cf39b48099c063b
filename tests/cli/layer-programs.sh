#!/bin/sh
# SPDX-License-Identifier: MIT
# The crumbs layer on programs nobody changed, on a virtual X server:
# vkcube, which records its command buffers once and submits them every
# frame, under its own validation (any message fails), captured at frame
# 30: its labels and its draw must come back as a tree with sane times.
# Then glxgears through Mesa's Zink driver on Vulkan, with the validation
# layer stacked: render passes and draws as leaf events.
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
# Inclusive milliseconds of the first row named $2 (the Time column left
# of Events).
inclusive_ms() {
	grep '^|' "$1" | awk -F'|' -v want="$2" '{
		name = $(NF - 1); gsub(/^ +| +$/, "", name)
		if (name == want) { t = $(NF - 2); gsub(/[^0-9.]/, "", t); print t; exit }
	}'
}
# Whether a <= b, as decimals.
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

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
# sanitizers' runtimes preloaded.
if [ -n "${CRUMBS_LAYER_PRELOAD:-}" ]; then
	LD_PRELOAD=$CRUMBS_LAYER_PRELOAD
	export LD_PRELOAD
	ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-detect_leaks=0}
	export ASAN_OPTIONS
fi

# vkcube: 60 frames, frame 30 captured, its validation on.
"$BUILD/crumbs" capture --frame 30 -o "$tmp/cube.crumbs" --ascii -- vkcube --validate --c 60 \
	>"$tmp/cube.out" 2>&1
result $? "crumbs capture runs vkcube --validate --c 60 and exits 0"
! grep -q "VALIDATION" "$tmp/cube.out"
result $? "no validation messages in vkcube with the layer loaded"
! grep -q "never presented" "$tmp/cube.out"
result $? "vkcube presents: nothing is said about frames ended at fences"
grep -q "^GPU profile for frame 30 " "$tmp/cube.out"
result $? "the table of frame 30 is printed"
# vkcube names each framebuffer by its swapchain image, which the render
# pass row shows; the draw says what it draws, and its pipeline, which
# vkcube does not name, by its identity.
awk '/^GPU profile/ { g = 1 } /^CPU profile/ { g = 0 } g' "$tmp/cube.out" >"$tmp/cube.gpu"
names "$tmp/cube.gpu" | sed 's/ *$//; s/Framebuffer([0-9]*)/Framebuffer(N)/; s/ · pipeline [0-9a-f]\{4\}$/ · pipeline XXXX/' |
	grep -v '^ *$' >"$tmp/cube.names"
cat >"$tmp/cube.want" <<'EOF'
 Events
 Graphics 0
    DrawBegin
       Framebuffer(N)
          InsideRenderPass
             ActualDraw
                Draw 36 vertices · pipeline XXXX
EOF
cmp -s "$tmp/cube.names" "$tmp/cube.want"
result $? "vkcube's labels and its draw, recorded once, come back as a tree"
grep -q "| 3 scopes | 2 events" "$tmp/cube.out"
result $? "three scopes and two events"
frame=$(grep '^GPU frame' "$tmp/cube.out" | sed 's/^GPU frame \([0-9.]*\) ms.*/\1/')
outer=$(inclusive_ms "$tmp/cube.out" DrawBegin)
pass=$(inclusive_ms "$tmp/cube.out" "$(names "$tmp/cube.out" | grep -o 'Framebuffer([0-9]*)' | head -n 1)")
draw=$(inclusive_ms "$tmp/cube.out" "$(names "$tmp/cube.out" | grep -o 'Draw 36 vertices · pipeline [0-9a-f]*' | head -n 1)")
le 0.001 "$draw" && le "$draw" "$pass" && le "$pass" "$outer" && le "$outer" "$frame"
result $? "times nest: draw $draw <= pass $pass <= DrawBegin $outer <= frame $frame ms"
grep '^|' "$tmp/cube.out" | grep ' Draw 36 vertices ' | grep -q '|     1 |          0 |    12 |    36 |'
result $? "the draw counts 12 triangles of 36 vertices"
# The layer times vkcube's thread in its waits, submission and present:
# a CPU block before the GPU's, with the CPU frame time.
awk '/^CPU profile/ { c = 1 } /^GPU profile/ { c = 0 } c' "$tmp/cube.out" >"$tmp/cube.cpu"
names "$tmp/cube.cpu" | sed 's/^ *//; s/ *$//' | grep -v '^$' >"$tmp/cube.cpu-names"
printf '%s\n' Events vkcube 'vkWaitForFences [wait]' 'vkAcquireNextImageKHR [wait]' vkQueueSubmit \
	'vkQueuePresentKHR [wait]' >"$tmp/cube.cpu-want"
grep -q "^CPU profile for frame 30 [|] thread 'vkcube' (tid [0-9]*, ends the frames)$" "$tmp/cube.cpu" &&
	grep -q "^CPU frame [0-9.]* ms [|] 4 scopes [|] waited [0-9.]* ms (marked \[wait\])$" \
		"$tmp/cube.cpu" &&
	cmp -s "$tmp/cube.cpu-names" "$tmp/cube.cpu-want"
result $? "vkcube's thread, which ends the frames, is a CPU block: its fence wait, acquire and present as waits, its submission"

# With pipeline statistics (which the layer enables on lavapipe when told
# to, layer/LAYER.md): vkcube's command buffers, recorded once before any
# capture, count in the capture frame as any other: its cube is 12
# triangles of 36 vertices, and none of the frame's work is unknown.
CRUMBS_LAYER_COUNTERS=1 "$BUILD/crumbs" capture --frame 30 --counters -o "$tmp/cube-counts.crumbs" \
	--ascii -- vkcube --validate --c 60 >"$tmp/cube-counts.out" 2>&1
result $? "crumbs capture --counters runs vkcube --validate and exits 0"
! grep -q "VALIDATION" "$tmp/cube-counts.out"
result $? "no validation messages with the layer counting"
# The columns of the row named $2 (a pattern as awk reads one), from the
# column named $3 on, in file $1.
row_from() {
	grep '^|' "$1" | awk -F'|' -v want="$2" -v col="$3" '
	!at && /[|] IA Verts [|]/ {
		for (i = 2; i < NF && !at; i++) { h = $i; gsub(/^ +| +$/, "", h); if (h == col) at = i }
		next
	}
	at { name = $(NF - 1); gsub(/^ +| +$/, "", name)
	     if (name ~ "^" want "$") { out = ""; for (i = at; i < at + 4; i++) { v = $i; gsub(/ /, "", v); out = out v " " } print out } }'
}
row_from "$tmp/cube-counts.out" "Draw 36 vertices · pipeline [0-9a-f]+" "IA Verts" | grep -qx '36 12 36 1.00 '
result $? "vkcube's draw counts 36 input vertices, 12 triangles, 36 vertex shader invocations"
! grep '^|' "$tmp/cube-counts.out" | grep -q '| *? |' && ! grep -q "^note: some work" "$tmp/cube-counts.out"
result $? "none of vkcube's frame is unknown"

# A device the layer cannot profile (here made so by CRUMBS_LAYER_SKIP,
# which adds vkcube's VK_KHR_swapchain to what the layer leaves alone)
# runs unprofiled: one line says why, vkcube runs its frames, no capture.
CRUMBS_LAYER_SKIP=VK_KHR_swapchain "$BUILD/crumbs" capture --frame 30 -o "$tmp/skip.crumbs" \
	-- vkcube --validate --c 60 >"$tmp/skip.out" 2>&1
result $((($? == 1) ? 0 : 1)) "crumbs capture of an unprofiled vkcube exits 1: no capture"
[ "$(grep -c 'runs unprofiled' "$tmp/skip.out")" = 1 ] &&
	grep -q "^crumbs: device '.*' runs unprofiled: it enables VK_KHR_swapchain, which CRUMBS_LAYER_SKIP names$" "$tmp/skip.out"
result $? "one line says the device runs unprofiled, and why"
[ ! -e "$tmp/skip.crumbs" ] && ! grep -q "^GPU profile" "$tmp/skip.out" && ! grep -q "VALIDATION" "$tmp/skip.out"
result $? "no capture, no table, no validation message"

# glxgears through Zink on lavapipe, with the validation layer stacked
# below crumbs; it draws until timeout stops it.
LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation \
	"$BUILD/crumbs" capture --frame 30 -o "$tmp/gears.crumbs" --ascii -- timeout 4 glxgears \
	>"$tmp/gears.out" 2>&1
result $((($? == 124) ? 0 : 1)) "crumbs capture runs glxgears on Zink until timeout stops it"
! grep -qi "validation error\|VUID" "$tmp/gears.out"
result $? "no validation messages in Zink with the layer loaded"
grep -q "^GPU profile for frame 30 " "$tmp/gears.out"
result $? "the table of glxgears' frame 30 is printed"
# Zink names nothing: passes by their size and attachments, draws by
# their command and counts and their pipeline's identity.
gears_pass=$(names "$tmp/gears.out" | sed 's/^ *//; s/ *$//' |
	grep -m 1 -E '^Render Pass [0-9]+x[0-9]+ \((bgra8|rgba8)( srgb)? \+ d(16|24|32)(s8)?\)$')
[ -n "$gears_pass" ]
result $? "Zink's render passes are events named by size and attachments' formats ($gears_pass)"
draws=$(names "$tmp/gears.out" |
	grep -c -E '^ *Draw[A-Za-z]* ([0-9]+ draws )?[0-9]+ (vertices|indices) · pipeline [0-9a-f]{4} *$')
[ "$draws" -ge 3 ]
result $? "Zink's draws are leaf events named by command, count and pipeline ($draws)"
frame=$(grep '^GPU frame' "$tmp/gears.out" | sed 's/^GPU frame \([0-9.]*\) ms.*/\1/')
pass=$(inclusive_ms "$tmp/gears.out" "$gears_pass")
le 0.001 "$pass" && le "$pass" "$frame"
result $? "the render pass takes time within the frame ($pass of $frame ms)"

# Zink records each frame's command buffer in the frame before: with
# pipeline statistics, each indexed draw counts as many input vertices as
# its indices, under validation.
CRUMBS_LAYER_COUNTERS=1 LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink \
	VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation "$BUILD/crumbs" capture --frame 30 --counters \
	-o "$tmp/gears-counts.crumbs" --ascii -- timeout 4 glxgears >"$tmp/gears-counts.out" 2>&1
result $((($? == 124) ? 0 : 1)) "crumbs capture --counters runs glxgears on Zink until timeout stops it"
! grep -qi "validation error\|VUID" "$tmp/gears-counts.out"
result $? "no validation messages in Zink with the layer counting"
grep '^|' "$tmp/gears-counts.out" | awk -F'|' '
	!at && /[|] IA Verts [|]/ {
		for (i = 2; i < NF && !at; i++) { h = $i; gsub(/^ +| +$/, "", h); if (h == "IA Verts") at = i }
		next
	}
	at { name = $(NF - 1); v = $at; gsub(/ /, "", v)
	     if (match(name, /Draw[A-Za-z]* [0-9]+ (indices|vertices)/)) {
		split(substr(name, RSTART, RLENGTH), w, " "); n++
		if (v != w[2]) bad++
	     } }
	END { exit !(n >= 3 && !bad) }'
result $? "each of glxgears' draws counts as many input vertices as it draws"

# Zink's threads' submissions and presents are CPU scopes of each thread,
# with the CPU frame time; the thread that presents ends the frames.
grep -q "^CPU profile for frame 30 [|] thread 'glxgears[^']*' (tid [0-9]*)$" "$tmp/gears.out" &&
	grep -q "^CPU profile for frame 30 [|] thread 'glxgears[^']*' (tid [0-9]*, ends the frames)$" \
		"$tmp/gears.out" &&
	grep -q "^CPU frame [0-9.]* ms" "$tmp/gears.out" &&
	names "$tmp/gears.out" | grep -q "^ *vkQueueSubmit *$" &&
	names "$tmp/gears.out" | grep -q "^ *vkQueuePresentKHR \[wait\] *$"
result $? "glxgears' threads are CPU blocks with their vkQueueSubmit calls, the presenting one ends the frames"

# Another run, another frame: Zink's pipelines have the same identities
# in both processes (they hash what the pipelines are, not their handles).
LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink \
	"$BUILD/crumbs" capture --frame 12 -o "$tmp/gears2.crumbs" --ascii -- timeout 4 glxgears \
	>"$tmp/gears2.out" 2>&1
pipelines() { names "$1" | sed 's/ *$//' | grep -o ' · pipeline [0-9a-f]*$' | sort -u; }
pipelines "$tmp/gears.out" >"$tmp/gears.ids"
pipelines "$tmp/gears2.out" >"$tmp/gears2.ids"
[ "$(wc -l <"$tmp/gears.ids")" -ge 2 ] && cmp -s "$tmp/gears.ids" "$tmp/gears2.ids"
result $? "glxgears' pipelines have the same identities in two runs ($(paste -sd, "$tmp/gears.ids"))"

if [ "$bad" != 0 ]; then
	for f in "$tmp"/*.out; do
		echo "--- $f"
		tail -n 40 "$f"
	done
fi
echo "1..$n"
exit $bad
