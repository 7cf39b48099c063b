#!/bin/sh
# SPDX-License-Identifier: MIT
# The crumbs layer on a program that records each frame's command buffer
# ahead of the frame, as Zink does (tests/layer/ahead.c): the capture
# frame's command buffer is begun in the frame before, the capture's
# pre-roll, and every one of its 300 draws must be timed, as in each
# frame of a run at full detail. Of draws recorded in the pre-roll itself
# (--early), those past the room the command buffer was given are
# untimed, and the note counts each. A command buffer begun before the
# capture, where nothing records it for its frame, has a note that says
# so; in a run, one begun any number of frames ahead has its draws. Each
# run is under the validation layer, which must say nothing.
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

# Under the sanitizers, the sanitized layer loads with their runtimes
# preloaded, as in tests/cli/layer-programs.sh.
if [ -n "${CRUMBS_LAYER_PRELOAD:-}" ]; then
	LD_PRELOAD=$CRUMBS_LAYER_PRELOAD
	export LD_PRELOAD
	ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-detect_leaks=0}
	export ASAN_OPTIONS
fi

# The draws' name: what they draw and the identity of their pipeline.
DRAW='Draw 4 vertices · pipeline [0-9a-f]\{4\}'
DRAW_AWK='Draw 4 vertices · pipeline [0-9a-f]+'
# The rows of the table's Events column named $2 (a pattern), and those
# of them marked [untimed].
rows() { names "$1" | grep -c "^ *$2\( \[untimed\]\)\? *$"; }
untimed() { names "$1" | grep -c "^ *$2 \[untimed\] *$"; }
# The Time column of the Inclusive group of each row named $2 (a pattern
# as awk reads one), in ms.
inclusive_ms() {
	grep '^|' "$1" | awk -F'|' -v want="$2" '{
		name = $(NF - 1); gsub(/^ +| +$/, "", name)
		if (name ~ "^" want "$") { t = $(NF - 2); gsub(/[^0-9.]/, "", t); print t }
	}'
}

draws=300
frames=14
frame=10
"$BUILD/tests/ahead" --validate --frames $frames --draws $draws >"$tmp/alone.out" 2>"$tmp/alone.err"
[ $? = 0 ] && grep -q "^ahead: $frames frames of $draws draws, each begun 1 frame ahead$" "$tmp/alone.out"
result $? "ahead runs alone under validation and exits 0"

# Frame 10's command buffer is begun in frame 9, the pre-roll, and its
# draws are recorded in frame 10.
"$BUILD/crumbs" capture --frame $frame -o "$tmp/ahead.crumbs" --ascii -- \
	"$BUILD/tests/ahead" --validate --frames $frames --draws $draws >"$tmp/ahead.out" 2>&1
result $? "crumbs capture --frame $frame of ahead exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/ahead.out"
result $? "no validation message, no crash"
grep -q "^GPU profile for frame $frame " "$tmp/ahead.out"
result $? "the table of frame $frame is printed"
[ "$(rows "$tmp/ahead.out" "$DRAW")" = $draws ]
result $? "its $draws draws are leaf events"
[ "$(untimed "$tmp/ahead.out" "$DRAW")" = 0 ] && ! grep -q "^note: query slots" "$tmp/ahead.out"
result $? "every draw is timed ($(untimed "$tmp/ahead.out" "$DRAW") untimed)"
inclusive_ms "$tmp/ahead.out" "Draw 4 vertices · pipeline [0-9a-f]+" | awk '$1 + 0 <= 0 { bad++ } END { exit bad > 0 }'
result $? "every draw takes time"

# With 100 of the draws recorded in the pre-roll, where the command
# buffer has no last recording to size its room: a first recording begun
# there has room for them, and every draw is timed.
"$BUILD/crumbs" capture --frame $frame -o "$tmp/early100.crumbs" --ascii -- \
	"$BUILD/tests/ahead" --validate --frames $frames --draws $draws --early 100 \
	>"$tmp/early100.out" 2>&1
result $? "crumbs capture --frame $frame of ahead --early 100 exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/early100.out"
result $? "no validation message, no crash"
[ "$(rows "$tmp/early100.out" "$DRAW")" = $draws ] && [ "$(untimed "$tmp/early100.out" "$DRAW")" = 0 ] &&
	! grep -q "^note: query slots" "$tmp/early100.out"
result $? "every draw is timed, those of the pre-roll too ($(untimed "$tmp/early100.out" "$DRAW") untimed)"

# With 600 of 700 recorded in the pre-roll, more than that room: those
# past it lose their timestamps, and the note counts every one.
early=600
"$BUILD/crumbs" capture --frame $frame -o "$tmp/early.crumbs" --ascii -- \
	"$BUILD/tests/ahead" --validate --frames $frames --draws 700 --early $early \
	>"$tmp/early.out" 2>&1
result $? "crumbs capture --frame $frame of ahead --draws 700 --early $early exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/early.out"
result $? "no validation message, no crash"
lost=$(untimed "$tmp/early.out" "$DRAW")
[ "$(rows "$tmp/early.out" "$DRAW")" = 700 ] && [ "$lost" -gt 0 ] && [ "$lost" -lt $early ]
result $? "some of the $early draws of the pre-roll are untimed ($lost), none of the others"
! names "$tmp/early.out" | grep "$DRAW" | sed -n "$((early + 1)),\$p" | grep -q untimed
result $? "the draws recorded in the capture frame are all timed"
note=$(sed -n 's/^note: query slots ran out: \([0-9]*\) scopes and events of this frame lost their timestamps (marked \[untimed\]); the time of each is inside the row that holds it$/\1/p' \
	"$tmp/early.out")
[ "$note" = "$lost" ]
result $? "the note counts each untimed draw ($note for $lost)"

# A run at full detail: the first frame's command buffer is begun in the
# pre-roll, and each later one in the frame before its own, where the run
# records it; every frame has all its draws, timed.
"$BUILD/crumbs" capture --frames 4:8 --detail 3 -o "$tmp/run.crumbs" --ascii -- \
	"$BUILD/tests/ahead" --validate --frames $frames --draws $draws >"$tmp/run.out" 2>&1
result $? "crumbs capture --frames 4:8 --detail 3 of ahead exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/run.out"
result $? "no validation message, no crash"
for f in 4 5 6 7 8; do
	"$BUILD/crumbs" report --frame $f --ascii "$tmp/run.crumbs" >"$tmp/run-$f.out" 2>&1 &&
		[ "$(rows "$tmp/run-$f.out" "$DRAW")" = $draws ] &&
		[ "$(untimed "$tmp/run-$f.out" "$DRAW")" = 0 ] &&
		! grep -q "^note: query slots" "$tmp/run-$f.out"
	result $? "frame $f of the run has its $draws draws, all timed"
done

# Begun two frames ahead, the capture frame's command buffer is begun
# before the pre-roll, where nothing records it: the table says so, and
# where its time is. In a run each frame's is begun two frames before;
# frame 4's before the pre-roll, frame 5's in it, and the later ones in
# the run, which records each for whichever frame submits it.
ONE="note: 1 command buffer submitted on this queue could not be recorded for this frame (begun before the capture began, or with no room left to record it): its events are not shown, and its time is inside the row that holds its submission"
"$BUILD/crumbs" capture --frame $frame -o "$tmp/two.crumbs" --ascii -- \
	"$BUILD/tests/ahead" --validate --frames $frames --draws $draws --ahead 2 >"$tmp/two.out" 2>&1
result $? "crumbs capture --frame $frame of ahead --ahead 2 exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/two.out"
result $? "no validation message, no crash"
[ "$(rows "$tmp/two.out" "$DRAW")" = 0 ] && [ "$(grep -cxF "$ONE" "$tmp/two.out")" = 1 ]
result $? "its draws are not shown, and a note says why"
"$BUILD/crumbs" capture --frames 4:8 --detail 3 -o "$tmp/two-run.crumbs" --ascii -- \
	"$BUILD/tests/ahead" --validate --frames $frames --draws $draws --ahead 2 >"$tmp/two-run.out" 2>&1
result $? "crumbs capture --frames 4:8 --detail 3 of ahead --ahead 2 exits 0"
for f in 4 5 6 7 8; do
	"$BUILD/crumbs" report --frame $f --ascii "$tmp/two-run.crumbs" >"$tmp/two-run-$f.out" 2>&1
	if [ $f != 4 ]; then
		[ "$(rows "$tmp/two-run-$f.out" "$DRAW")" = $draws ] &&
			[ "$(untimed "$tmp/two-run-$f.out" "$DRAW")" = 0 ] &&
			! grep -q "^note: 1 command buffer" "$tmp/two-run-$f.out"
		result $? "frame $f of the run, begun two frames before, has its $draws draws, timed"
	else
		[ "$(rows "$tmp/two-run-$f.out" "$DRAW")" = 0 ] &&
			[ "$(grep -cxF "$ONE" "$tmp/two-run-$f.out")" = 1 ]
		result $? "frame $f of the run says why its draws are not shown"
	fi
done

# Begun seven frames ahead, more than the run's six sets of query slots:
# a frame's command buffer is still pending when its frame's set is
# handed to a later frame, and must not write that frame's slots (the
# validation layer says "query not reset" when it does). Frames 4 to 9
# were begun before the pre-roll; from frame 10 on, each has its draws,
# timed, whichever frame began them.
far=7
"$BUILD/crumbs" capture --frames 4:20 --detail 3 -o "$tmp/far.crumbs" --ascii -- \
	"$BUILD/tests/ahead" --validate --frames 30 --draws 50 --ahead $far >"$tmp/far.out" 2>&1
result $? "crumbs capture --frames 4:20 --detail 3 of ahead --ahead $far exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/far.out"
result $? "no validation message, no crash"
for f in 9 10 14 20; do
	"$BUILD/crumbs" report --frame $f --ascii "$tmp/far.crumbs" >"$tmp/far-$f.out" 2>&1
	if [ $f = 9 ]; then
		[ "$(rows "$tmp/far-$f.out" "$DRAW")" = 0 ] &&
			[ "$(grep -cxF "$ONE" "$tmp/far-$f.out")" = 1 ]
		result $? "frame $f of the run, begun before its pre-roll, says why its draws are not shown"
	else
		[ "$(rows "$tmp/far-$f.out" "$DRAW")" = 50 ] &&
			[ "$(untimed "$tmp/far-$f.out" "$DRAW")" = 0 ] &&
			! grep -q "^note:" "$tmp/far-$f.out" &&
			inclusive_ms "$tmp/far-$f.out" "Draw 4 vertices · pipeline [0-9a-f]+" |
			awk '$1 + 0 <= 0 { bad++ } END { exit bad > 0 || NR != 50 }'
		result $? "frame $f of the run, begun $far frames before, has its 50 draws, each timed"
	fi
done

# 700 more command buffers begun in frame 5 and submitted in the last:
# more than the device's queries for a run's recordings can hold at once.
# Those that found no room are not recorded, so none writes queries a
# later frame was handed; the note counts them, and the draws of the
# others are all there, timed.
hold=700
"$BUILD/crumbs" capture --frames 4:13 --detail 3 -o "$tmp/hold.crumbs" --ascii -- \
	"$BUILD/tests/ahead" --validate --frames $frames --draws $draws --hold $hold >"$tmp/hold.out" 2>&1
result $? "crumbs capture --frames 4:13 --detail 3 of ahead --hold $hold exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/hold.out"
result $? "no validation message, no crash"
"$BUILD/crumbs" report --frame 13 --ascii "$tmp/hold.crumbs" >"$tmp/hold-13.out" 2>&1
skipped=$(sed -n 's/^note: \([0-9]*\) command buffers submitted on this queue could not be recorded for this frame (begun before the capture began, or with no room left to record them): their events are not shown, and their time is inside the row that holds their submission$/\1/p' \
	"$tmp/hold-13.out")
shown=$(rows "$tmp/hold-13.out" "$DRAW")
# Which command buffers find room depends on when earlier frames' reads
# let go of theirs: the frame's own (of $draws draws) may be among those
# not recorded, beside held ones of one draw each.
[ -n "$skipped" ] && [ "$skipped" -ge 1 ] && [ "$skipped" -lt $hold ] &&
	{ [ "$shown" = $((draws + hold - skipped)) ] || [ "$shown" = $((hold - skipped + 1)) ]; } &&
	[ "$(untimed "$tmp/hold-13.out" "$DRAW")" = 0 ]
result $? "the note counts the $skipped command buffers not recorded; the $shown draws shown are timed"

# Pipeline statistics, with the layer told to enable them on lavapipe
# (layer/LAYER.md). Each draw is a quad of 4 vertices, 2 triangles. The
# capture frame's command buffer, recorded in the pre-roll, counts its
# draws as the frame's own would.
# counts FILE NAME-PATTERN COLUMN [2]: the column named COLUMN of the rows
# named as NAME-PATTERN (awk; marked [untimed] or not), of the Exclusive
# group, or of the Inclusive with 2.
counts() {
	grep '^|' "$1" | awk -F'|' -v want="$2" -v col="$3" -v group="${4:-1}" '
	!at && /[|] IA Verts [|]/ {
		for (i = 2; i < NF; i++) { h = $i; gsub(/^ +| +$/, "", h); if (h == col && ++seen == group) at = i }
		next
	}
	at { name = $(NF - 1); gsub(/^ +| +$/, "", name); v = $at; gsub(/ /, "", v)
	     if (name ~ "^" want "( [[]untimed[]])?$") print v }'
}
CRUMBS_LAYER_COUNTERS=1 "$BUILD/crumbs" capture --frame $frame --counters -o "$tmp/count.crumbs" \
	--ascii -- "$BUILD/tests/ahead" --validate --frames $frames --draws $draws >"$tmp/count.out" 2>&1
result $? "crumbs capture --frame $frame --counters of ahead exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/count.out"
result $? "no validation message, no crash"
[ "$(counts "$tmp/count.out" "$DRAW_AWK" "IA Verts" | grep -cx 4)" = $draws ] &&
	[ "$(counts "$tmp/count.out" "$DRAW_AWK" "IA Prims" | grep -cx 2)" = $draws ] &&
	[ "$(counts "$tmp/count.out" "$DRAW_AWK" "VS Inv" | grep -cx 4)" = $draws ] &&
	[ "$(counts "$tmp/count.out" "$DRAW_AWK" "FS Inv" | grep -cx '[1-9][0-9]*')" = $draws ]
result $? "each of the $draws draws counts 4 vertices, 2 triangles, 4 vertex shader invocations and some fragments"
[ "$(counts "$tmp/count.out" "Graphics 0" "IA Verts" 2)" = $((4 * draws)) ] &&
	[ "$(counts "$tmp/count.out" "Render Pass 64x64 \\(rgba8\\)" "IA Prims" 2)" = $((2 * draws)) ] &&
	! grep '^|' "$tmp/count.out" | grep -q '| *? |' && ! grep -q "^note: some work" "$tmp/count.out"
result $? "the queue and the pass hold all $((4 * draws)) vertices; nothing is unknown"

# 1200 draws need more queries than a command buffer begun in the
# pre-roll is given: those it records in the capture frame go on in the
# frame's own, and every draw counts. Of 1000 recorded in the pre-roll,
# those past its range are unknown (never a wrong count); the 200 of the
# capture frame count.
CRUMBS_LAYER_COUNTERS=1 "$BUILD/crumbs" capture --frame $frame --counters -o "$tmp/count-big.crumbs" \
	--ascii -- "$BUILD/tests/ahead" --validate --frames $frames --draws 1200 >"$tmp/count-big.out" 2>&1
result $? "crumbs capture --frame $frame --counters of ahead --draws 1200 exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/count-big.out"
result $? "no validation message, no crash"
[ "$(counts "$tmp/count-big.out" "$DRAW_AWK" "IA Verts" | grep -cx 4)" = 1200 ]
result $? "each of the 1200 draws counts 4 vertices"
CRUMBS_LAYER_COUNTERS=1 "$BUILD/crumbs" capture --frame $frame --counters -o "$tmp/count-early.crumbs" \
	--ascii -- "$BUILD/tests/ahead" --validate --frames $frames --draws 1200 --early 1000 \
	>"$tmp/count-early.out" 2>&1
result $? "crumbs capture --frame $frame --counters of ahead --draws 1200 --early 1000 exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/count-early.out"
result $? "no validation message, no crash"
counts "$tmp/count-early.out" "$DRAW_AWK" "IA Verts" >"$tmp/count-early.ia"
unknown=$(grep -cx '?' "$tmp/count-early.ia")
[ "$(wc -l <"$tmp/count-early.ia")" = 1200 ] && [ "$unknown" -lt 1000 ] &&
	[ "$(grep -cx 4 "$tmp/count-early.ia")" = $((1200 - unknown)) ] &&
	! tail -n 200 "$tmp/count-early.ia" | grep -qvx 4
result $? "of the pre-roll's 1000 draws, $unknown are unknown; the rest and the capture frame's 200 count 4 vertices"

# A program that enabled pipelineStatisticsQuery itself but not
# hostQueryReset (vkd3d does so) gets hostQueryReset from the layer, and
# its counts.
CRUMBS_LAYER_COUNTERS=1 "$BUILD/crumbs" capture --frame $frame --counters -o "$tmp/count-own.crumbs" \
	--ascii -- "$BUILD/tests/ahead" --validate --statistics --frames $frames --draws $draws \
	>"$tmp/count-own.out" 2>&1
result $? "crumbs capture --frame $frame --counters of ahead --statistics exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/count-own.out"
result $? "no validation message, no crash"
[ "$(counts "$tmp/count-own.out" "$DRAW_AWK" "IA Verts" | grep -cx 4)" = $draws ]
result $? "each of its $draws draws counts 4 vertices"

# On lavapipe, not told to, the layer leaves that device as it is: with
# the statistics and no hostQueryReset it counts nothing, and the table
# says so, not that the work is unknown.
"$BUILD/crumbs" capture --frame $frame --counters -o "$tmp/count-none.crumbs" --ascii -- \
	"$BUILD/tests/ahead" --validate --statistics --frames $frames --draws $draws \
	>"$tmp/count-none.out" 2>&1
result $? "crumbs capture --frame $frame --counters of ahead --statistics, not told to count, exits 0"
grep -q "^note: no pipeline statistics were taken on this queue in this frame" "$tmp/count-none.out" &&
	! grep '^|' "$tmp/count-none.out" | grep -q '| *? |'
result $? "the table says no statistics were taken, and marks nothing unknown"

# A run counts where asked to (--counters): at detail 1, with no scopes,
# each frame's queue row holds its draws' work.
CRUMBS_LAYER_COUNTERS=1 "$BUILD/crumbs" capture --frames 4:8 --counters -o "$tmp/count-run.crumbs" \
	--ascii -- "$BUILD/tests/ahead" --validate --frames $frames --draws $draws >"$tmp/count-run.out" 2>&1
result $? "crumbs capture --frames 4:8 --counters of ahead exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/count-run.out"
result $? "no validation message, no crash"
grep -q "^ *5 *$((2 * draws)) *$((4 * draws)) .* Graphics 0$" "$tmp/count-run.out"
result $? "its statistics' queue row: 5 frames of $((2 * draws)) triangles and $((4 * draws)) vertex shader invocations"
for f in 4 6 8; do
	"$BUILD/crumbs" report --frame $f --counters --ascii "$tmp/count-run.crumbs" \
		>"$tmp/count-run-$f.out" 2>&1 &&
		[ "$(counts "$tmp/count-run-$f.out" "Graphics 0" "IA Verts")" = $((4 * draws)) ] &&
		[ "$(counts "$tmp/count-run-$f.out" "Graphics 0" "VS Inv")" = $((4 * draws)) ]
	result $? "frame $f of the run counts its $((4 * draws)) vertices and vertex shader invocations"
done

# Command buffers held past the family's statistics queries: each draw
# counts exactly, or is unknown ('?'), never wrong.
CRUMBS_LAYER_COUNTERS=1 "$BUILD/crumbs" capture --frames 4:13 --detail 3 --counters \
	-o "$tmp/count-hold.crumbs" --ascii -- "$BUILD/tests/ahead" --validate --frames $frames \
	--draws 30 --hold $hold >"$tmp/count-hold.out" 2>&1
result $? "crumbs capture --frames 4:13 --counters of ahead --hold $hold exits 0"
! grep -q "validation\|killed by signal\|AddressSanitizer\|runtime error" "$tmp/count-hold.out"
result $? "no validation message, no crash"
"$BUILD/crumbs" report --frame 13 --counters --ascii "$tmp/count-hold.crumbs" >"$tmp/count-hold-13.out" 2>&1
known=$(counts "$tmp/count-hold-13.out" "$DRAW_AWK" "IA Verts" | grep -cx 4)
unknown=$(counts "$tmp/count-hold-13.out" "$DRAW_AWK" "IA Verts" | grep -cx '?')
all=$(counts "$tmp/count-hold-13.out" "$DRAW_AWK" "IA Verts" | wc -l)
[ "$known" -gt 30 ] && [ "$((known + unknown))" = "$all" ] && [ "$all" -gt 30 ]
result $? "of $all draws, $known count 4 vertices and $unknown are unknown: none is wrong"

if [ "$bad" != 0 ]; then
	for f in "$tmp"/*.out; do
		echo "--- $f"
		grep -v '^|' "$f" | tail -n 20
	done
fi
echo "1..$n"
exit $bad
