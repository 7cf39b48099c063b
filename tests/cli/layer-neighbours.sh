#!/bin/sh
# SPDX-License-Identifier: MIT
# The crumbs layer below other projects' layers, which users enable for
# every program they run, on a virtual X server with vkcube:
#   neighbour   tests/layer/neighbour.c: asks the next layer for
#               vkCreateDevice with no instance, as layers written from the
#               loader's early example do, and fails device creation when
#               it gets nothing;
#   MangoHud    the same request (calling what it gets unchecked), and an
#               overlay drawn in a render pass of its own at each present;
#   vkBasalt    the same request, and a sharpening pass recorded once per
#               swapchain image and submitted at each present;
#   RenderDoc   its capture layer, which unwraps every handle it is
#               given: asked after the instance is created, the loader
#               answers with the functions of the top of the chain,
#               RenderDoc's, which crumbs called with handles of its own
#               level (a crash); and its overlay's pass.
# Each is an implicit layer, above crumbs'. vkcube runs with each alone,
# then under `crumbs capture`: it must exit as it did alone, without a
# crash, print the table of its frame with the neighbour's work in it; and
# a run recorded with the first three at once must be one `crumbs stats`
# reads.
# Last, GFXReconstruct: the replay of its recording of vkcube, profiled;
# its capture layer (explicit, below crumbs') while crumbs captures a
# frame, and the replay of that recording.
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

# Names of the Events column, without the indentation.
trimmed() { names "$1" | sed 's/^ *//; s/ *$//'; }
# How many rows of $1 have a name that begins with $2.
rows() { trimmed "$1" | grep -c "^$2"; }

for program in Xvfb vkcube gfxrecon-replay; do
	command -v "$program" >/dev/null 2>&1
	result $? "$program is installed (tests/install-deps installs it)"
done
for manifest in MangoHud vkBasalt renderdoc_capture; do
	[ -f "/usr/share/vulkan/implicit_layer.d/$manifest.json" ]
	result $? "$manifest's layer is installed (tests/install-deps installs it)"
done
neighbour=$(pwd)/$BUILD/tests/neighbour/libVkLayer_crumbs_test_neighbour.so
[ -f "$neighbour" ]
result $? "the neighbour layer is built"
[ "$bad" = 0 ] || exit 1

# The neighbour as an implicit layer, found under XDG_DATA_HOME and
# enabled by CRUMBS_TEST_NEIGHBOUR=1.
mkdir -p "$tmp/data/vulkan/implicit_layer.d"
cat >"$tmp/data/vulkan/implicit_layer.d/neighbour.json" <<EOF
{
	"file_format_version": "1.1.2",
	"layer": {
		"name": "VK_LAYER_CRUMBS_test_neighbour",
		"type": "GLOBAL",
		"library_path": "$neighbour",
		"api_version": "1.3.0",
		"implementation_version": "1",
		"description": "crumbs' tests: asks for vkCreateDevice with no instance",
		"functions": {
			"vkNegotiateLoaderLayerInterfaceVersion": "vkNegotiateLoaderLayerInterfaceVersion"
		},
		"enable_environment": { "CRUMBS_TEST_NEIGHBOUR": "1" },
		"disable_environment": { "CRUMBS_TEST_NEIGHBOUR_OFF": "1" }
	}
}
EOF
XDG_DATA_HOME=$tmp/data
export XDG_DATA_HOME
# vkBasalt's sharpening, from a file of the test's own.
printf 'effects = cas\ncasSharpness = 0.4\n' >"$tmp/vkBasalt.conf"
VKBASALT_CONFIG_FILE=$tmp/vkBasalt.conf
export VKBASALT_CONFIG_FILE

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
# sanitizers' runtimes preloaded; both runs of each get them.
if [ -n "${CRUMBS_LAYER_PRELOAD:-}" ]; then
	LD_PRELOAD=$CRUMBS_LAYER_PRELOAD
	export LD_PRELOAD
	ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-detect_leaks=0}
	export ASAN_OPTIONS
fi

# beside NAME ENABLE: vkcube with the layer ENABLE (VAR=1) turns on, alone
# and with frame 10 captured. Leaves the table in $tmp/NAME.out.
beside() {
	name=$1 enable=$2
	env "$enable" vkcube --c 20 >"$tmp/$name.alone" 2>&1
	alone=$?
	env "$enable" "$BUILD/crumbs" capture --frame 10 -o "$tmp/$name.crumbs" --ascii -- \
		vkcube --c 20 >"$tmp/$name.out" 2>&1
	status=$?
	[ "$alone" = 0 ] && [ "$status" = "$alone" ]
	result $? "$name: vkcube exits 0 under crumbs capture as alone ($status, alone $alone)"
	! grep -q "killed by signal\|AddressSanitizer\|runtime error" "$tmp/$name.out"
	result $? "$name: no crash and no sanitizer report"
	grep -q "^GPU profile for frame 10 " "$tmp/$name.out"
	result $? "$name: the table of frame 10 is printed"
}

beside neighbour CRUMBS_TEST_NEIGHBOUR=1
grep -q "neighbour layer: a device was created below it" "$tmp/neighbour.out"
result $? "neighbour: it created its device through crumbs' vkCreateDevice"
[ "$(rows "$tmp/neighbour.out" "Render Pass")" = 1 ]
result $? "neighbour: vkcube's render pass is the one event of its kind"

beside mangohud MANGOHUD=1
[ "$(rows "$tmp/mangohud.out" "Render Pass")" = 2 ] &&
	[ "$(rows "$tmp/mangohud.out" "DrawIndexed")" -ge 1 ]
result $? "mangohud: its overlay's render pass and indexed draws follow vkcube's pass"

beside vkbasalt ENABLE_VKBASALT=1
grep -q "vkBasalt info: *effects = cas" "$tmp/vkbasalt.out"
result $? "vkbasalt: it loaded its sharpening effect"
[ "$(rows "$tmp/vkbasalt.out" "Render Pass")" = 2 ] &&
	[ "$(rows "$tmp/vkbasalt.out" "Draw 3 vertices")" = 1 ]
result $? "vkbasalt: its pass, recorded once, and its full-screen triangle are events"

beside renderdoc ENABLE_VULKAN_RENDERDOC_CAPTURE=1
[ "$(rows "$tmp/renderdoc.out" "Render Pass")" = 2 ] &&
	[ "$(rows "$tmp/renderdoc.out" "Draw 36 vertices")" = 1 ]
result $? "renderdoc: vkcube's pass and draw, and its overlay's pass, are events"

# The three at once, with a run of frames 5 to 14 at detail 1. (RenderDoc
# 1.24 and vkBasalt crash vkcube together, without crumbs.)
CRUMBS_TEST_NEIGHBOUR=1 MANGOHUD=1 ENABLE_VKBASALT=1 "$BUILD/crumbs" capture --frames 5:14 \
	--detail 1 -o "$tmp/all.crumbs" --ascii -- vkcube --c 20 >"$tmp/all.out" 2>&1
status=$?
[ "$status" = 0 ]
result $? "all three: vkcube exits 0 while crumbs records a run (status $status)"
! grep -q "killed by signal\|AddressSanitizer\|runtime error" "$tmp/all.out"
result $? "all three: no crash and no sanitizer report"
"$BUILD/crumbs" stats --format csv "$tmp/all.crumbs" >"$tmp/all.csv" 2>&1 &&
	grep -q "frames 5 to 14 of 'vkcube' recorded" "$tmp/all.out" &&
	grep -q "^Statistics of 10 frames (5 to 14)" "$tmp/all.out"
result $? "all three: the run's 10 frames are recorded, and crumbs stats reads them"

# GFXReconstruct: vkcube recorded by its layer alone, and that recording's
# replay profiled, as one profiles a trace: the recorded frame's pass and
# draw, and the replay's own blit. Then its layer below crumbs' while crumbs
# captures a frame, and that recording, crumbs' own work in it, replayed.
unset CRUMBS_TEST_NEIGHBOUR MANGOHUD ENABLE_VKBASALT
GFXRECON_CAPTURE_FILE=$tmp/cube.gfxr GFXRECON_CAPTURE_FILE_TIMESTAMP=false \
	VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct vkcube --c 20 >"$tmp/gfxr.alone" 2>&1
[ -s "$tmp/cube.gfxr" ]
result $? "gfxreconstruct: its layer records vkcube"
"$BUILD/crumbs" capture --frame 10 -o "$tmp/replay.crumbs" --ascii -- \
	gfxrecon-replay "$tmp/cube.gfxr" >"$tmp/replay.out" 2>&1
status=$?
[ "$status" = 0 ] && ! grep -q "killed by signal\|AddressSanitizer\|runtime error" "$tmp/replay.out"
result $? "gfxreconstruct: its replay exits 0 under crumbs capture, without a crash ($status)"
[ "$(rows "$tmp/replay.out" "Render Pass 500x500 (bgra8 + d16)")" = 1 ] &&
	[ "$(rows "$tmp/replay.out" "Draw 36 vertices")" = 1 ] &&
	[ "$(rows "$tmp/replay.out" "Blit 500x500 to 500x500")" = 1 ]
result $? "gfxreconstruct: the replayed frame's pass and draw, and the replay's blit, are events"
GFXRECON_CAPTURE_FILE=$tmp/both.gfxr GFXRECON_CAPTURE_FILE_TIMESTAMP=false \
	VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct "$BUILD/crumbs" capture --frame 10 \
	-o "$tmp/both.crumbs" --ascii -- vkcube --c 20 >"$tmp/both.out" 2>&1
status=$?
[ "$status" = 0 ] && grep -q "^GPU profile for frame 10 " "$tmp/both.out" && [ -s "$tmp/both.gfxr" ]
result $? "gfxreconstruct: its layer records vkcube while crumbs captures frame 10 ($status)"
"$BUILD/crumbs" capture --frame 10 -o "$tmp/replay-both.crumbs" --ascii -- \
	gfxrecon-replay "$tmp/both.gfxr" >"$tmp/replay-both.out" 2>&1
status=$?
[ "$status" = 0 ] && ! grep -q "killed by signal\|AddressSanitizer\|runtime error" \
	"$tmp/replay-both.out" && grep -q "^GPU profile for frame 10 " "$tmp/replay-both.out"
result $? "gfxreconstruct: that recording's replay, crumbs' work in it, is profiled too ($status)"

if [ "$bad" != 0 ]; then
	for f in "$tmp"/*.out "$tmp"/*.alone; do
		echo "--- $f"
		tail -n 40 "$f"
	done
fi
echo "1..$n"
exit $bad
