#!/bin/sh
# SPDX-License-Identifier: MIT
# The crumbs layer on a corpus of programs from Debian's archive that were
# not written for crumbs, each of a different kind, on a virtual X server:
#   mpv         a video player through libplacebo: presents, records every
#               frame, labels its work and names its objects without
#               enabling VK_EXT_debug_utils, timeline semaphores, copies,
#               draws and a compute dispatch;
#   GStreamer   a Vulkan filter that never presents: upload, a colour
#               conversion drawn in a render pass, download, one fenced
#               submission each;
#   ffmpeg      Vulkan compute filters that never present: a dispatch per
#               filter, timeline semaphores, fenced submissions;
#   vkd3d-gears Direct3D 12 on Vulkan: command lists recorded once and
#               submitted every frame, clears as render passes, indexed
#               draws, fences waited on by another thread;
#   glmark2     OpenGL through Zink: dynamic rendering, multi-draws and
#               many off-screen passes per frame (its desktop blur scene);
#   Qt Quick    Qt 6's scene graph on Vulkan (`qml` with
#               tests/layer/scene.qml): marks its pass with
#               VK_EXT_debug_marker only where the device lists it, which
#               lavapipe does not and the crumbs layer does;
#   winduprobot an xscreensaver hack in OpenGL 1's immediate mode through
#               Zink: hundreds of draws a frame in one render pass, each
#               glBegin/glEnd a draw of its own, recorded ahead of their
#               frame;
#   mpv (GL)    mpv's older renderer (`--vo=gpu`) in OpenGL through Zink:
#               texture uploads, off-screen passes and a compute shader
#               of OpenGL's, each a Vulkan event;
#   es2gears    OpenGL ES 2 through EGL on Zink (mesa-utils'
#               es2gears_x11): a context EGL makes, not GLX.
# Each runs alone, then under `crumbs capture`: it must exit as it did
# alone, without a crash, print the table of the frame, write a capture
# `crumbs report` reads, show its labels and its kinds of events, name
# every event by what it does (no bare `Draw`, `Render Pass`, `Dispatch`
# or `Copy`), and time every one (no `[untimed]` row: lavapipe has query
# slots to spare). Each run takes a few seconds on lavapipe.
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

# profile NAME FRAME PROGRAM ARGS...: runs the program alone, then under
# `crumbs capture --frame FRAME`, and checks what every program must get.
# VALIDATE=1 stacks the validation layer below crumbs in both runs, and
# fails on any message but those matching the pattern ALLOWED. Leaves the
# table in $tmp/NAME.out for the checks of the program's own.
profile() {
	name=$1 frame=$2
	shift 2
	if [ "$VALIDATE" = 1 ]; then
		VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation
		export VK_INSTANCE_LAYERS
	fi
	"$@" >"$tmp/$name.alone" 2>&1
	alone=$?
	"$BUILD/crumbs" capture --frame "$frame" -o "$tmp/$name.crumbs" --ascii -- "$@" \
		>"$tmp/$name.out" 2>&1
	status=$?
	unset VK_INSTANCE_LAYERS
	[ "$status" = "$alone" ]
	result $? "$name: exits under crumbs capture as alone ($status, alone $alone)"
	! grep -q "killed by signal\|AddressSanitizer\|runtime error" "$tmp/$name.out"
	result $? "$name: no crash and no sanitizer report"
	if [ "$VALIDATE" = 1 ]; then
		! grep -i "validation error\|VUID-" "$tmp/$name.out" | grep -v -- "$ALLOWED" | grep -q .
		result $? "$name: no validation messages with the layer loaded"
	fi
	grep -q "^GPU profile for frame $frame " "$tmp/$name.out"
	result $? "$name: the table of frame $frame is printed"
	[ -s "$tmp/$name.crumbs" ] &&
		"$BUILD/crumbs" report --ascii "$tmp/$name.crumbs" >"$tmp/$name.report" 2>&1 &&
		grep -q "^GPU profile for frame $frame " "$tmp/$name.report"
	result $? "$name: the capture is written and crumbs report reads it"
	# Leaf events in the design's words: render passes, draws, dispatches
	# and copies, each named by what it does and on what.
	bare=$(trimmed "$tmp/$name.out" | grep -c -x 'Draw\|Render Pass\|Dispatch\|Copy')
	[ "$bare" = 0 ]
	result $? "$name: no event is a bare Draw, Render Pass, Dispatch or Copy ($bare are)"
	# Slots run out only where the device has too few; lavapipe has
	# plenty, so an untimed row is one the capture failed to time.
	untimed=$(grep -c '\[untimed\]' "$tmp/$name.out")
	[ "$untimed" = 0 ]
	result $? "$name: every event and scope is timed ($untimed rows are [untimed])"
}

# has_label NAME LABEL: the program's label is a row of its table.
has_label() {
	trimmed "$tmp/$1.out" | grep -q -x -F "$2"
	result $? "$1: its label '$2' is in the tree"
}

installed() {
	command -v "$1" >/dev/null 2>&1
	result $? "$1 is installed (tests/install-deps installs it)"
}
qml=/usr/lib/qt6/bin/qml
hacks=/usr/libexec/xscreensaver
for program in Xvfb mpv gst-launch-1.0 ffmpeg vkd3d-gears glmark2 $qml $hacks/winduprobot es2gears_x11; do
	installed "$program"
done
gst-inspect-1.0 vulkancolorconvert >/dev/null 2>&1
result $? "GStreamer's Vulkan elements are installed (gstreamer1.0-plugins-bad)"
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
# sanitizers' runtimes preloaded; both runs of each program get them, so
# only the layer differs.
if [ -n "${CRUMBS_LAYER_PRELOAD:-}" ]; then
	LD_PRELOAD=$CRUMBS_LAYER_PRELOAD
	export LD_PRELOAD
	ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-detect_leaks=0}
	export ASAN_OPTIONS
fi

# mpv plays 20 frames of a test pattern, untimed and dropping none, through
# libplacebo (gpu-next), which turns down software devices unless one is
# named: the first device mpv lists. The upscaler runs as a compute pass.
# No validation: libplacebo labels command buffers and names objects
# without enabling VK_EXT_debug_utils (with --gpu-debug it enables it, but
# then destroys a semaphore still in use at exit).
device=$(mpv --no-config --vulkan-device=help 2>/dev/null | sed -n "s/^  '\(.*\)' (GPU 0,.*/\1/p")
VALIDATE=0
profile mpv 10 mpv --no-config --really-quiet --input-terminal=no --untimed --framedrop=no \
	--vo=gpu-next --gpu-api=vulkan --gpu-context=x11vk --vulkan-device="$device" \
	--frames=20 --autofit=640x480 --scale=ewa_lanczossharp --deband \
	av://lavfi:testsrc2=size=320x240:rate=30
for label in vk_tex_upload vk_pass_run pl_vulkan_hold; do
	has_label mpv "$label"
done
[ "$(rows "$tmp/mpv.out" "Copy buffer to image")" -ge 3 ] &&
	[ "$(rows "$tmp/mpv.out" Draw)" -ge 1 ] && [ "$(rows "$tmp/mpv.out" Dispatch)" -ge 1 ]
result $? "mpv: its plane uploads, draws and compute pass are events"
trimmed "$tmp/mpv.out" | grep -q "^Copy buffer to image .* · ..*"
result $? "mpv: events carry the names libplacebo gave its images"

# GStreamer converts 30 frames of a test pattern on the GPU and never
# presents. Each frame is three fenced submissions (upload, conversion,
# download), and frames end at fenced submissions, so frame 3k+1 is a
# conversion. (With `crumbs capture --window MS`, one window would hold
# whole video frames.) No validation: the colour converter's render pass
# loads an attachment from an undefined layout (VUID-06699) alone too.
VALIDATE=0
profile gstreamer 10 gst-launch-1.0 -q videotestsrc num-buffers=30 \
	! video/x-raw,format=RGBA,width=320,height=240 ! vulkanupload ! vulkancolorconvert \
	! 'video/x-raw(memory:VulkanImage),format=BGRA' ! vulkandownload \
	! video/x-raw,format=BGRA ! fakesink
[ "$(rows "$tmp/gstreamer.out" "Render Pass")" = 1 ] && [ "$(rows "$tmp/gstreamer.out" Draw)" = 1 ]
result $? "gstreamer: the colour conversion's render pass and draw are events"

# ffmpeg scales and flips 10 frames in Vulkan compute shaders and never
# presents. From frame 1 its fenced submissions repeat every 7 (upload,
# one without events, scale, one without events, flip, download, one
# without events), so frame 10 is the scale's dispatch. (--window MS
# would fit here too.) Validation stays on: ffmpeg runs clean under it.
VALIDATE=1 ALLOWED='^$'
profile ffmpeg 10 ffmpeg -nostdin -hide_banner -loglevel warning \
	-init_hw_device vulkan=vk:0 -filter_hw_device vk \
	-f lavfi -i testsrc2=size=320x240:rate=30 -frames:v 10 \
	-vf format=yuv420p,hwupload,scale_vulkan=w=160:h=120,hflip_vulkan,hwdownload,format=yuv420p \
	-f null -
[ "$(rows "$tmp/ffmpeg.out" Dispatch)" = 1 ]
result $? "ffmpeg: the scale filter's dispatch is an event"

# vkd3d-gears draws until timeout stops it, under validation (clean).
VALIDATE=1 ALLOWED='^$'
profile vkd3d-gears 10 timeout 3 vkd3d-gears
[ "$status" = 124 ]
result $? "vkd3d-gears: runs until timeout stops it"
[ "$(rows "$tmp/vkd3d-gears.out" "Render Pass")" -ge 3 ] &&
	[ "$(rows "$tmp/vkd3d-gears.out" DrawIndexed)" -ge 6 ]
result $? "vkd3d-gears: its clears and pass are render passes, its gears indexed draws"

# glmark2's desktop scene through Zink for one second: four windows
# blurred in off-screen passes, then composited. Validation stays on;
# Zink leaves objects alive when the context goes at exit, which it
# reports alone too (VUID-vkDestroyDevice-device-00378).
VALIDATE=1 ALLOWED='VUID-vkDestroyDevice-device-00378'
LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink
export LIBGL_ALWAYS_SOFTWARE MESA_LOADER_DRIVER_OVERRIDE
profile glmark2 20 glmark2 -s 320x240 -b desktop:effect=blur:windows=4:passes=1:duration=1
unset LIBGL_ALWAYS_SOFTWARE MESA_LOADER_DRIVER_OVERRIDE
grep -q "glmark2 Score:" "$tmp/glmark2.out"
result $? "glmark2: runs its scene to the end"
[ "$(rows "$tmp/glmark2.out" "Render Pass")" -ge 8 ] && [ "$(rows "$tmp/glmark2.out" DrawMulti)" -ge 8 ]
result $? "glmark2: its passes are render passes, its draws multi-draws"

# Qt Quick draws a rotating rectangle until timeout stops it, its RHI on
# Vulkan with debug markers asked for (QSG_RHI_PROFILE). Qt enables
# VK_EXT_debug_marker only where the device lists it; without the
# layer's own it marks nothing. Validation stays on: Qt runs clean.
VALIDATE=1 ALLOWED='^$'
QSG_RHI_BACKEND=vulkan QSG_RHI_PROFILE=1
export QSG_RHI_BACKEND QSG_RHI_PROFILE
profile qtquick 30 timeout 8 $qml tests/layer/scene.qml
unset QSG_RHI_BACKEND QSG_RHI_PROFILE
[ "$status" = 124 ]
result $? "qtquick: runs until timeout stops it"
has_label qtquick "Qt Quick scene render"
[ "$(rows "$tmp/qtquick.out" "Render Pass")" -ge 1 ] && [ "$(rows "$tmp/qtquick.out" DrawIndexed)" -ge 1 ]
result $? "qtquick: its pass is a render pass, its rectangle and text indexed draws"

# winduprobot: six wind-up robots walking, in OpenGL 1's immediate mode,
# until timeout stops it. Zink makes each glBegin/glEnd a draw and
# records a frame's command buffer during the frame before, so a capture
# that timed only what was recorded inside its frame would leave most of
# these draws untimed. Its speech balloons are off (their text is
# random); where the robots walk is random too, but their parts, and so
# their draws, are not. Validation stays on, with Zink's objects left
# alive at exit.
VALIDATE=1 ALLOWED='VUID-vkDestroyDevice-device-00378'
LIBGL_ALWAYS_SOFTWARE=1 MESA_LOADER_DRIVER_OVERRIDE=zink
export LIBGL_ALWAYS_SOFTWARE MESA_LOADER_DRIVER_OVERRIDE
profile winduprobot 30 timeout 6 $hacks/winduprobot -window -geometry 320x240 -delay 0 \
	-count 6 -talk 0
[ "$status" = 124 ]
result $? "winduprobot: runs until timeout stops it"
draws=$(rows "$tmp/winduprobot.out" DrawMultiIndexed)
[ "$(rows "$tmp/winduprobot.out" "Render Pass")" -ge 1 ] && [ "$draws" -ge 300 ]
result $? "winduprobot: its robots are hundreds of indexed draws in a render pass ($draws)"

# The same robots in a run of 2 ms windows at full detail, shorter than
# the frames Zink takes several windows to record: each command buffer is
# still pending when its window's share of the query slots comes round
# again, six windows later. None may write slots handed to a later
# window (the validation layer says "query not reset"), and the run's
# frames hold the robots' draws.
VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation \
	"$BUILD/crumbs" capture --window 2 --frames 0: --detail 3 -o "$tmp/robots-run.crumbs" --ascii -- \
	timeout 4 $hacks/winduprobot -window -geometry 320x240 -delay 0 -count 6 -talk 0 \
	>"$tmp/robots-run.out" 2>&1
[ $? = 124 ] && ! grep -q "killed by signal\|AddressSanitizer\|runtime error" "$tmp/robots-run.out"
result $? "winduprobot: a run of 2 ms windows ends as timeout ends it, without a crash"
! grep -i "validation error\|VUID-" "$tmp/robots-run.out" | grep -v -- "$ALLOWED" | grep -q .
result $? "winduprobot: no validation messages in a run of windows shorter than its frames"
events=$("$BUILD/crumbs" info "$tmp/robots-run.crumbs" 2>/dev/null |
	sed -n 's/^scopes .* and \([0-9]*\) leaf events$/\1/p')
[ "${events:-0}" -ge 300 ]
result $? "winduprobot: the run's frames hold its draws (${events:-no} leaf events)"

# mpv's older renderer, `--vo=gpu`, in OpenGL through Zink: the test
# pattern's planes uploaded as textures, scaled in off-screen passes and
# by a compute shader (the EWA upscaler), drawn to the window.
VALIDATE=1 ALLOWED='VUID-vkDestroyDevice-device-00378'
profile mpv-gl 10 mpv --no-config --really-quiet --input-terminal=no --untimed --framedrop=no \
	--vo=gpu --gpu-api=opengl --gpu-context=x11egl \
	--frames=20 --autofit=640x480 --scale=ewa_lanczossharp --deband \
	av://lavfi:testsrc2=size=320x240:rate=30
[ "$(rows "$tmp/mpv-gl.out" "Copy buffer to image")" -ge 3 ] &&
	[ "$(rows "$tmp/mpv-gl.out" "Render Pass")" -ge 3 ] &&
	[ "$(rows "$tmp/mpv-gl.out" DrawMulti)" -ge 3 ] && [ "$(rows "$tmp/mpv-gl.out" Dispatch)" -ge 1 ]
result $? "mpv-gl: its uploads, passes, draws and compute shader are events"

# es2gears: OpenGL ES 2 through EGL (not GLX) on Zink, its gears drawn
# from buffer objects, until timeout stops it. Validation stays on.
VALIDATE=1 ALLOWED='VUID-vkDestroyDevice-device-00378'
profile es2gears 30 timeout 3 es2gears_x11
unset LIBGL_ALWAYS_SOFTWARE MESA_LOADER_DRIVER_OVERRIDE
[ "$status" = 124 ]
result $? "es2gears: runs until timeout stops it"
[ "$(rows "$tmp/es2gears.out" "Render Pass")" = 1 ] && [ "$(rows "$tmp/es2gears.out" DrawMulti)" = 3 ]
result $? "es2gears: its gears are three draws in one render pass"

if [ "$bad" != 0 ]; then
	for f in "$tmp"/*.out; do
		echo "--- $f"
		tail -n 40 "$f"
	done
fi
echo "1..$n"
exit $bad
