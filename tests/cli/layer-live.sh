#!/bin/sh
# SPDX-License-Identifier: MIT
# The crumbs layer on a running program: `crumbs capture` runs the sample
# renderer under VK_LAYER_CRUMBS_capture with the validation layer stacked
# (any validation message fails the renderer), and the tree it captures
# from the renderer's labels must be the tree libcrumbs captures alone,
# with no scope counted twice, plus render passes, draws and dispatches
# as leaf events. Then `crumbs capture`'s own errors and exit statuses.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
# Under the sanitizers, programs that load lavapipe run with the options
# tests/run-tests chose for the renderer.
ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}}
export ASAN_OPTIONS
. tests/cli/tap.sh

# Frames end at each submission with a fence until a present: the
# renderer's upload at start-up is frame 0, so its own frame 2 is the
# layer's frame 3. The renderer keeps to one queue (--async-compute off),
# as on lavapipe, so that on a GPU with a compute-only family the counts
# and the order of the rows below are the same.
"$BUILD/crumbs" capture --frame 3 -o "$tmp/layer.crumbs" --ascii -- \
	"$BUILD/sample-renderer" --frames 6 --async-compute off --validate >"$tmp/layer.out" 2>"$tmp/layer.err"
result $? "crumbs capture runs the renderer under validation and exits 0"
! grep -q "validation" "$tmp/layer.err"
result $? "no validation messages with the layer loaded"
[ -s "$tmp/layer.crumbs" ] && zstd -q -t "$tmp/layer.crumbs"
result $? "the capture is written where -o says, a valid zstd stream"
grep -q "captured to '$tmp/layer.crumbs'" "$tmp/layer.err"
result $? "crumbs capture says where the capture went"
[ -z "$(find "$tmp" -name '.crumbs-capture-*')" ]
result $? "no temporary folder is left"
grep -q "^GPU profile for frame 3 " "$tmp/layer.out"
result $? "the table of frame 3 is printed"

"$BUILD/sample-renderer" --frames 6 --async-compute off --capture-frame 2 --capture-dir "$tmp" --quiet \
	--settings "--ascii --no-leaf" >"$tmp/lib.out" 2>"$tmp/lib.err"
result $? "the renderer captures the same frame with libcrumbs alone"
"$BUILD/crumbs" report "$tmp/layer.crumbs" --ascii --no-leaf >"$tmp/layer-scopes.out"
# The GPU's trees; the CPU's differ by design: libcrumbs has the
# renderer's own CPU scopes, the layer its threads' Vulkan calls.
awk '/^GPU profile/ { g = 1 } /^CPU profile/ { g = 0 } g' "$tmp/layer-scopes.out" >"$tmp/layer-gpu.out"
awk '/^GPU profile/ { g = 1 } /^CPU profile/ { g = 0 } g' "$tmp/lib.out" >"$tmp/lib-gpu.out"
names "$tmp/layer-gpu.out" >"$tmp/layer.names"
names "$tmp/lib-gpu.out" >"$tmp/lib.names"
[ "$(wc -l <"$tmp/lib.names")" -gt 50 ] && cmp -s "$tmp/layer.names" "$tmp/lib.names"
result $? "the layer's tree of scopes is libcrumbs' tree, name for name"
grep -q "| 58 scopes |" "$tmp/layer.out" && grep -q "| 58 scopes |" "$tmp/lib.out"
result $? "no scope is counted twice (58 in both)"
draws=$(names "$tmp/layer.out" | grep -c -E '^ *DrawIndexed [0-9]+ ind')
[ "$draws" -gt 800 ]
result $? "draws are leaf events named by command and counts ($draws)"
names "$tmp/layer.out" | grep -q -E '^ *Dispatch [0-9]+x[0-9]+x[0-9]+' &&
	! names "$tmp/layer.out" | grep -q -E '^ *(Render Pass|Draw|Dispatch|Copy) *$'
result $? "dispatches are named by their size; no event is a bare kind"

# A queue label (vkQueueBeginDebugUtilsLabelEXT) around the lighting
# submission holds the lighting scopes, and nothing after them.
"$BUILD/crumbs" capture --frame 3 -o "$tmp/qlabel.crumbs" --ascii --no-leaf -- \
	"$BUILD/sample-renderer" --frames 5 --async-compute off --validate --queue-label "Lighting Work" \
	>"$tmp/qlabel.out" 2>"$tmp/qlabel.err"
result $? "the renderer with a queue label runs under validation and exits 0"
names "$tmp/qlabel.out" | sed 's/ *$//' | grep -A3 '^ *Lighting Work$' | awk '
	{ match($0, /^ */); depth[NR] = RLENGTH; sub(/^ */, ""); name[NR] = $0 }
	END { exit !(NR == 4 && name[2] == "Lighting" && name[3] == "Tiled Deferred Lighting" &&
		     name[4] == "Post Processing" && depth[2] == depth[1] + 3 &&
		     depth[3] == depth[1] + 6 && depth[4] == depth[1]) }'
result $? "the queue label is a scope around the lighting scopes"

# The renderer names its render passes, framebuffers, pipelines and images
# (VK_EXT_debug_utils): a render pass is the row of its render pass's name
# (or else its framebuffer's), right under the scope that begins it, and a
# draw or dispatch ends in " · " and the name of the pipeline it runs.
names "$tmp/layer.out" | sed 's/ *$//' >"$tmp/layer.named"
grep -A1 '^ *Shadow View 0$' "$tmp/layer.named" | awk '
	{ match($0, /^ */); depth[NR] = RLENGTH; sub(/^ */, ""); name[NR] = $0 }
	END { exit !(NR == 2 && (name[2] == "Shadow Map" || name[2] == "Shadow Cascade 0") &&
		     depth[2] == depth[1] + 3) }' &&
	grep -A1 '^ *Base Pass$' "$tmp/layer.named" | awk '
	{ match($0, /^ */); depth[NR] = RLENGTH; sub(/^ */, ""); name[NR] = $0 }
	END { exit !(NR == 2 && name[2] == "GBuffer" && depth[2] == depth[1] + 3) }'
result $? "render passes are rows of the renderer's names for them (Shadow Map, GBuffer)"
grep -q '^ *Draw[A-Za-z]* .* · Shadow Depth$' "$tmp/layer.named" &&
	grep -q '^ *Draw[A-Za-z]* .* · GBuffer$' "$tmp/layer.named"
result $? "draws end in the name of their pipeline (Shadow Depth, GBuffer)"
missing=
for pipeline in "Tiled Lighting" "Bloom Down" "Bloom Up" "Average Luminance" "Tonemap"; do
	grep -q "^ *Dispatch [0-9]*x[0-9]*x[0-9]* · $pipeline\$" "$tmp/layer.named" ||
		missing="$missing '$pipeline'"
done
[ -z "$missing" ]
result $? "dispatches end in the name of their compute pipeline${missing:+ (none for$missing)}"

# Two devices alive at once, each with a label of its own: each device's
# frame 3 is its own capture, the first where -o says, the second beside
# it with "-device1" before the extension, and each table holds only its
# device's label.
"$BUILD/crumbs" capture --frame 3 -o "$tmp/two.crumbs" --ascii --no-stats -- \
	"$BUILD/tests/two-devices" --frames 6 --validate >"$tmp/two.out" 2>"$tmp/two.err"
result $? "crumbs capture runs a program with two devices under validation and exits 0"
[ -s "$tmp/two.crumbs" ] && zstd -q -t "$tmp/two.crumbs" &&
	[ -s "$tmp/two-device1.crumbs" ] && zstd -q -t "$tmp/two-device1.crumbs"
result $? "one capture per device: two.crumbs and two-device1.crumbs"
[ "$(grep -c "captured to '$tmp/two" "$tmp/two.err")" = 2 ] && ! grep -q "validation" "$tmp/two.err"
result $? "both captures are announced, without validation messages"
"$BUILD/crumbs" report "$tmp/two.crumbs" --ascii --no-stats >"$tmp/two0.out" &&
	"$BUILD/crumbs" report "$tmp/two-device1.crumbs" --ascii --no-stats >"$tmp/two1.out" &&
	names "$tmp/two0.out" >"$tmp/two0.names" && names "$tmp/two1.out" >"$tmp/two1.names" &&
	grep -q '^ *Device 0 work *$' "$tmp/two0.names" && ! grep -q 'Device 1' "$tmp/two0.names" &&
	grep -q '^ *Device 1 work *$' "$tmp/two1.names" && ! grep -q 'Device 0' "$tmp/two1.names"
result $? "each device's capture holds its own label and not the other's"
[ "$(grep -c '^GPU profile for frame 3 ' "$tmp/two.out")" = 2 ]
result $? "the tables of both are printed"

# A program that marks its work only where the device lists
# VK_EXT_debug_marker, as Qt's RHI does: lavapipe and most drivers do not,
# and the layer lists it as its own. The markers become scopes, the
# inserted one an empty scope, the buffer's marker name names its fill;
# validation says nothing (the layer takes the extension out of the
# device's creation where the device lacks it).
"$BUILD/crumbs" capture --frame 3 -o "$tmp/marked.crumbs" --ascii --no-stats -- \
	"$BUILD/tests/two-devices" --frames 6 --markers --validate >"$tmp/marked.out" 2>"$tmp/marked.err"
result $? "crumbs capture runs a program that enables VK_EXT_debug_marker, under validation, and exits 0"
grep -q '^two-devices: markers on$' "$tmp/marked.out" && ! grep -q "validation" "$tmp/marked.err"
result $? "the program finds VK_EXT_debug_marker listed, enables it and marks its work, without validation messages"
names "$tmp/marked.out" | sed 's/ *$//' >"$tmp/marked.names"
grep -q '^ *Device 0 marker$' "$tmp/marked.names" && grep -q '^ *Filled$' "$tmp/marked.names" &&
	grep -q '^ *Fill buffer whole · Marked Buffer 0$' "$tmp/marked.names"
result $? "its markers are scopes and its marker name names the fill"

# A run at detail 1 of a program that labels work inside a secondary
# command buffer, as Qt Quick does its pass: the secondary's label is a
# scope of every frame, under the primary's (not only in a capture frame
# at full detail).
"$BUILD/crumbs" capture --frames 5:24 -o "$tmp/secondary.crumbs" --ascii -- \
	"$BUILD/tests/two-devices" --frames 30 --secondary --validate >"$tmp/secondary.out" 2>&1
result $? "crumbs capture --frames of a program with secondary command buffers exits 0"
"$BUILD/crumbs" stats "$tmp/secondary.crumbs" --format csv >"$tmp/secondary.csv" &&
	grep -q '^scope,0,Graphics 0,GPU 0 / Graphics 0 / Device 0 work / Device 0 secondary,2,20,1\.' \
		"$tmp/secondary.csv"
result $? "the secondary's label is a scope in all 20 frames of the run, inside the primary's"

# Layers the user enables already (the loader's list is separated by
# commas) stay enabled beside crumbs': here the validation layer, which
# the program did not ask for, still checks it.
VK_LOADER_DEBUG=layer VK_LOADER_LAYERS_ENABLE='*validation' \
	"$BUILD/crumbs" capture --frame 3 -o "$tmp/enabled.crumbs" \
	--max-depth 1 -- "$BUILD/tests/two-devices" --frames 5 >"$tmp/enabled.out" 2>&1
result $? "crumbs capture with VK_LOADER_LAYERS_ENABLE already set exits 0"
[ -s "$tmp/enabled.crumbs" ] &&
	grep -q 'Insert instance layer "VK_LAYER_KHRONOS_validation"' "$tmp/enabled.out" &&
	grep -q 'Insert instance layer "VK_LAYER_CRUMBS_capture"' "$tmp/enabled.out"
result $? "crumbs' layer and the one already enabled are both loaded"

# A program that exits right after its last frame without destroying its
# devices: the captures resolved by then are still written, since crumbs
# waits at exit for a writer at work (frame 3 resolves by frame 5 at the
# latest; 4000 labels a frame make the writing outlast the program's end).
"$BUILD/crumbs" capture --frame 3 -o "$tmp/early.crumbs" --max-depth 1 -- \
	"$BUILD/tests/two-devices" --frames 6 --labels 4000 --no-cleanup >"$tmp/early.out" 2>&1
result $? "crumbs capture of a program that exits without cleaning up exits 0"
[ -s "$tmp/early.crumbs" ] && [ -s "$tmp/early-device1.crumbs" ] &&
	zstd -q -t "$tmp/early.crumbs" && zstd -q -t "$tmp/early-device1.crumbs"
result $? "both of its captures are written"

# The program's output is unchanged: the last frame's image, which the
# layer captures (the renderer's frame 3 is the layer's frame 4), is the
# same byte for byte as without the layer.
"$BUILD/sample-renderer" --frames 4 --quiet --output "$tmp/plain.ppm" >/dev/null 2>&1 &&
	"$BUILD/crumbs" capture --frame 4 -o "$tmp/image.crumbs" -- "$BUILD/sample-renderer" \
		--frames 4 --quiet --output "$tmp/layer.ppm" >"$tmp/image.out" 2>&1 &&
	grep -q "^GPU profile for frame 4 " "$tmp/image.out"
result $? "the renderer runs with and without the layer, capturing its last frame"
colours=$(tail -c 30000 "$tmp/plain.ppm" | od -An -tu1 -v | tr -s ' ' '\n' | sort -u | wc -l)
[ "$colours" -gt 16 ] && cmp -s "$tmp/plain.ppm" "$tmp/layer.ppm"
result $? "the rendered image is the same byte for byte with the layer ($colours byte values)"

"$BUILD/crumbs" capture --frame 50 -o "$tmp/none.crumbs" -- "$BUILD/sample-renderer" --frames 2 \
	--quiet >"$tmp/none.out" 2>"$tmp/none.err"
[ $? = 1 ] && grep -q "ended before frame 50 was captured" "$tmp/none.err" && [ ! -e "$tmp/none.crumbs" ]
result $? "a program that ends too soon: a clear error, exit 1, no file"
"$BUILD/crumbs" capture -- sh -c 'exit 7' >/dev/null 2>&1
result $((($? == 7) ? 0 : 1)) "the program's own exit status comes back"
"$BUILD/crumbs" capture -- "$tmp/no-such-program" >/dev/null 2>"$tmp/missing.err"
[ $? = 127 ] && grep -q "cannot run" "$tmp/missing.err"
result $? "a program that cannot run: 127 and why"
"$BUILD/crumbs" capture >/dev/null 2>&1
result $((($? == 2) ? 0 : 1)) "no program is a usage error"
"$BUILD/crumbs" capture --on-trigger --frame 3 -- true >/dev/null 2>&1
result $((($? == 2) ? 0 : 1)) "--on-trigger with --frame is a usage error"
"$BUILD/crumbs" capture --help | grep -q "^usage: crumbs capture"
result $? "crumbs capture --help"

echo "1..$n"
exit $bad
