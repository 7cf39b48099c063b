#!/bin/sh
# SPDX-License-Identifier: MIT
# The crumbs layer on a careless program (tests/layer/careless.c): it asks
# for the debug label, marker and object-name functions without enabling
# VK_EXT_debug_utils or VK_EXT_debug_marker and calls those it is given,
# with NULL and empty names, ends without begins, begins never ended and a
# label that ends in a later command buffer. Under `crumbs capture` it
# must exit as it does alone, and its labels must come back as timed
# scopes. It runs without the validation layer: the program is invalid on
# purpose, and validation would only say so.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
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
positive() { awk -v a="$1" 'BEGIN { exit !(a + 0 > 0) }'; }

# Under the sanitizers, the sanitized layer loads with their runtimes
# preloaded, as in tests/cli/layer-programs.sh.
if [ -n "${CRUMBS_LAYER_PRELOAD:-}" ]; then
	LD_PRELOAD=$CRUMBS_LAYER_PRELOAD
	export LD_PRELOAD
	ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-detect_leaks=0}
	export ASAN_OPTIONS
fi

# Frames end at each fenced submission: careless submits no other fenced
# work, so its frame N is the layer's frame N. Frame 4 of 8 leaves the
# frames after it to read the capture back.
frames=8
frame=4
"$BUILD/tests/careless" --frames $frames >"$tmp/alone.out" 2>"$tmp/alone.err"
alone=$?
[ "$alone" = 0 ] && grep -q "^careless: $frames frames" "$tmp/alone.out"
result $? "careless runs its $frames frames alone and exits 0"

"$BUILD/crumbs" capture --frame $frame -o "$tmp/careless.crumbs" --ascii -- \
	"$BUILD/tests/careless" --frames $frames >"$tmp/layer.out" 2>"$tmp/layer.err"
status=$?
[ "$status" = "$alone" ] && grep -q "^careless: $frames frames" "$tmp/layer.out"
result $? "under crumbs capture it runs its frames and exits as alone ($status, alone $alone)"
! grep -q "killed by signal\|AddressSanitizer\|runtime error" "$tmp/layer.err"
result $? "no crash and no sanitizer report"
grep -q "^GPU profile for frame $frame " "$tmp/layer.out"
result $? "the table of frame $frame is printed"
[ -s "$tmp/careless.crumbs" ] && zstd -q -t "$tmp/careless.crumbs" &&
	grep -q "captured to '$tmp/careless.crumbs'" "$tmp/layer.err"
result $? "the capture is written where -o says, a valid zstd stream"
"$BUILD/crumbs" report "$tmp/careless.crumbs" --ascii >"$tmp/report.out" 2>"$tmp/report.err" &&
	grep -q "^GPU profile for frame $frame " "$tmp/report.out"
result $? "crumbs report reads the capture"

# Labels and markers, one of them inside a marker named NULL, and the
# two halves of the label that crosses command buffers.
for label in "Upload" "Marker Copy" "Bild löschen" "Cross Buffer" "Second Half" \
	"Compute Scramble" "Never Ended [open]"; do
	ms=$(inclusive_ms "$tmp/layer.out" "$label")
	[ -n "$ms" ] && positive "$ms"
	result $? "'$label' is a scope that takes time (${ms:-no row} ms)"
done
"$BUILD/crumbs" report "$tmp/careless.crumbs" --ascii --no-leaf >"$tmp/scopes.out"
# (Rows of labels named NULL or "" show no depth, and are skipped.)
names "$tmp/scopes.out" | sed 's/ *$//' | awk '
	$0 == "" { next }
	{ match($0, /^ */); depth = RLENGTH; sub(/^ */, "") }
	inside && depth <= outer { inside = 0 }
	inside && $0 == "Second Half" { found = 1 }
	$0 == "Cross Buffer" { inside = 1; outer = depth }
	END { exit !found }'
result $? "the label ended by the next command buffer holds what that one recorded first"
names "$tmp/layer.out" | grep -q '^ *Long Label 0123456789abcdefghijklmnopqrstuvwxyz0123'
result $? "a label of $((64 + 512 * frame)) bytes comes back"

# The pipeline is made, named and destroyed each frame, and its handle
# comes back: the dispatch carries the name given in this frame, and
# never the one given and taken back before it.
names "$tmp/layer.out" | sed 's/ *$//' | grep -q "^ *Dispatch .* · Scramble $frame\$" &&
	! grep -q "Stale Name" "$tmp/layer.out"
result $? "the dispatch is named by its pipeline's latest name"

if [ "$bad" != 0 ]; then
	for f in "$tmp"/*.out "$tmp"/*.err; do
		echo "--- $f"
		tail -n 40 "$f" | cut -c1-300
	done
fi
echo "1..$n"
exit $bad
