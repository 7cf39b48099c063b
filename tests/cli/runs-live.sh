#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs recorded by libcrumbs in the sample renderer: frames 10 to 209 at
# detail 1 under the validation layer, asked for by --record (which calls
# crumbs_record) and by CRUMBS_RECORD in the environment. The file must
# hold exactly those 200 frames, each with the renderer's level 0 and 1
# scopes and none finer, and `crumbs info` and `crumbs stats` must read
# it. Detail levels 0 and 2 record what they say. Then a recording killed
# with SIGKILL mid-run must leave a prefix of whole frames that both read.
# Prints TAP lines.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
crumbs=$BUILD/crumbs
renderer=${CRUMBS_RENDERER:-$BUILD/sample-renderer}
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
LC_ALL=C.UTF-8
export LC_ALL
unset CRUMBS_RECORD CRUMBS_CAPTURE_FRAME CRUMBS_CAPTURE_DIR
# Under the sanitizers, programs that load lavapipe run with the options
# tests/run-tests chose for the renderer.
ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}}
export ASAN_OPTIONS
. tests/cli/tap.sh
# A small image: the scopes are the same at any size, and the frames come
# faster on a software driver.
SIZE=160x90

# The scope rows of `crumbs stats --format csv` in FILE, one a line:
# "path|depth|frames|calls_per_frame", sorted.
scope_rows() {
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == "scope" { print $col["path"] "|" $col["depth"] "|" $col["frames"] "|" \
			$col["calls_per_frame"] }' "$1" | tr -d '"' | sort
}
# The value of the CSV column NAME in the row of kind KIND of FILE.
csv_value() {
	awk -F, -v kind="$2" -v want="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) col = i; next }
		$1 == kind { print $col }' "$1"
}
# The scopes a frame holds at detail 1, as scope_rows prints them for a
# run of N frames: "Frame N" and its four passes. Lighting is on the
# graphics queue inside the frame, or alone on a compute queue where the
# device has one (the stats CSV of FILE says which).
coarse_rows() {
	rows_n=$1 rows_frame="GPU 0 / Graphics 0 / Frame #"
	{
		echo "$rows_frame|1|$rows_n|1.000000"
		echo "$rows_frame / Shadow Depths|2|$rows_n|1.000000"
		echo "$rows_frame / Base Pass|2|$rows_n|1.000000"
		echo "$rows_frame / Post Processing|2|$rows_n|1.000000"
		if grep -q '^busy,0,Compute 0,' "$2"; then
			echo "GPU 0 / Compute 0 / Lighting|1|$rows_n|1.000000"
		else
			echo "$rows_frame / Lighting|2|$rows_n|1.000000"
		fi
	} | sort
}
# The rows of the Events column of an ASCII table, without trailing blanks.
events() {
	names "$1" | sed 's/ *$//' | grep -v -e '^ *Events$' -e '^$'
}

# Checks a recorded run of frames 10 to 209 at detail 1 in FILE; WHAT
# says how it was asked for.
check_run() {
	file=$1 what=$2
	"$crumbs" info "$file" >"$tmp/info" 2>"$tmp/info.err"
	result $? "$what: crumbs info reads the file (said: $(head -c 200 "$tmp/info.err"))"
	grep -q '^frames  *200, numbered 10 to 209$' "$tmp/info"
	result $? "$what: it holds 200 frames, 10 to 209 ($(grep '^frames' "$tmp/info"))"
	grep -q '^scopes  *1000, and 0 leaf events$' "$tmp/info"
	result $? "$what: 5 scopes a frame, no leaf events ($(grep '^scopes' "$tmp/info"))"

	"$crumbs" stats "$file" --format csv >"$tmp/stats.csv" 2>"$tmp/stats.err"
	result $? "$what: crumbs stats reads it (said: $(head -c 200 "$tmp/stats.err"))"
	[ "$(csv_value "$tmp/stats.csv" gpu frames)" = 200 ]
	result $? "$what: crumbs stats counts 200 frames of GPU 0"
	scope_rows "$tmp/stats.csv" >"$tmp/rows"
	coarse_rows 200 "$tmp/stats.csv" >"$tmp/expected"
	cmp -s "$tmp/rows" "$tmp/expected"
	result $? "$what: Frame N, Shadow Depths, Base Pass, Lighting and Post Processing in each frame, once, and no other scope$(
		diff "$tmp/expected" "$tmp/rows" | grep '^[<>]' | head -8 | tr '\n' ';' | sed 's/^/: /')"

	# Frames at both ends and one between, read from crumbs report: the
	# frame's own number in its name, and the passes nested in it.
	for f in 10 111 209; do
		"$crumbs" report "$file" --frame "$f" --ascii --no-stats --queue 'Graphics 0' \
			>"$tmp/report" 2>"$tmp/report.err" &&
			grep -q "^GPU profile for frame $f | GPU 0 " "$tmp/report" &&
			events "$tmp/report" >"$tmp/events"
		ok=$?
		if [ $ok = 0 ] && grep -q '^busy,0,Compute 0,' "$tmp/stats.csv"; then
			printf '%s\n' " Graphics 0" "    Frame $f" "       Shadow Depths" \
				"       Base Pass" "       Post Processing" >"$tmp/events.expected"
		else
			printf '%s\n' " Graphics 0" "    Frame $f" "       Shadow Depths" \
				"       Base Pass" "       Lighting" "       Post Processing" \
				>"$tmp/events.expected"
		fi
		[ $ok = 0 ] && cmp -s "$tmp/events" "$tmp/events.expected"
		result $? "$what: crumbs report --frame $f shows Frame $f and its four passes$(
			[ -s "$tmp/report.err" ] && head -c 200 "$tmp/report.err" | sed 's/^/: /')"
	done
	"$crumbs" report "$file" --frame 9 >/dev/null 2>"$tmp/report.err"
	[ $? = 1 ] && grep -q "frame 9 is not in the capture (it holds frames 10 to 209)" "$tmp/report.err"
	result $? "$what: frame 9, the pre-roll, is not in the file"
}

# ------------------------------------------------------------------------
# --record 10:209 and CRUMBS_RECORD=10:209, under the validation layer
# ------------------------------------------------------------------------

# The renderer ends right after frame 209: crumbs_destroy finishes the file.
mkdir "$tmp/opt"
"$renderer" --frames 210 --size $SIZE --quiet --validate --record 10:209 \
	--capture-dir "$tmp/opt" >"$tmp/opt.out" 2>"$tmp/opt.err"
result $? "the renderer with --record 10:209 runs under validation and exits 0"
! grep -qi "validation" "$tmp/opt.out" "$tmp/opt.err"
result $? "--record: no validation messages$(grep -i -m1 validation "$tmp/opt.err" | sed 's/^/: /')"
run=$tmp/opt/sample-renderer-run-10.crumbs
[ "$(ls "$tmp/opt")" = "sample-renderer-run-10.crumbs" ]
result $? "--record: one file, sample-renderer-run-10.crumbs ($(ls "$tmp/opt" | tr '\n' ' '))"
grep -qx "frames 10 to 209 recorded to '$run' (200 frames, 0 incomplete)" "$tmp/opt.out"
result $? "--record: the log says where the run went, 200 frames, none incomplete"
check_run "$run" "--record"

# Frames go on past the run; the file is complete before the renderer ends.
mkdir "$tmp/env"
CRUMBS_RECORD=10:209 "$renderer" --frames 230 --size $SIZE --quiet --validate \
	--capture-dir "$tmp/env" >"$tmp/env.out" 2>"$tmp/env.err"
result $? "the renderer with CRUMBS_RECORD=10:209 runs under validation and exits 0"
! grep -qi "validation" "$tmp/env.out" "$tmp/env.err"
result $? "CRUMBS_RECORD: no validation messages$(grep -i -m1 validation "$tmp/env.err" | sed 's/^/: /')"
run=$tmp/env/sample-renderer-run-10.crumbs
[ "$(ls "$tmp/env")" = "sample-renderer-run-10.crumbs" ]
result $? "CRUMBS_RECORD: one file, sample-renderer-run-10.crumbs ($(ls "$tmp/env" | tr '\n' ' '))"
grep -qx "frames 10 to 209 recorded to '$run' (200 frames, 0 incomplete)" "$tmp/env.out"
result $? "CRUMBS_RECORD: the log says where the run went, 200 frames, none incomplete"
check_run "$run" "CRUMBS_RECORD"

# ------------------------------------------------------------------------
# Other detail levels: 0 is the frame alone, 2 adds the passes' parts
# ------------------------------------------------------------------------

mkdir "$tmp/d0" "$tmp/d2"
# --serial (as make bench runs it): each frame waited for before the next.
"$renderer" --frames 4 --size $SIZE --quiet --validate --serial --record 1:3:0 \
	--capture-dir "$tmp/d0" >"$tmp/d0.out" 2>"$tmp/d0.err" &&
	"$crumbs" stats "$tmp/d0/sample-renderer-run-1.crumbs" --format csv >"$tmp/d0.csv"
result $? "--record 1:3:0 --serial runs under validation, and crumbs stats reads its file"
grep -qx "frames 1 to 3 recorded to '$tmp/d0/sample-renderer-run-1.crumbs' (3 frames, 0 incomplete)" \
	"$tmp/d0.out"
result $? "--serial: 3 frames recorded, none incomplete"
scope_rows "$tmp/d0.csv" >"$tmp/rows"
echo "GPU 0 / Graphics 0 / Frame #|1|3|1.000000" >"$tmp/expected"
cmp -s "$tmp/rows" "$tmp/expected"
result $? "detail 0: Frame N alone in each of 3 frames$(
	diff "$tmp/expected" "$tmp/rows" | grep '^[<>]' | head -6 | tr '\n' ';' | sed 's/^/: /')"

"$renderer" --frames 5 --size $SIZE --quiet --validate --record 2:4:2 \
	--capture-dir "$tmp/d2" >"$tmp/d2.out" 2>"$tmp/d2.err" &&
	"$crumbs" stats "$tmp/d2/sample-renderer-run-2.crumbs" --format csv >"$tmp/d2.csv"
result $? "--record 2:4:2 runs under validation, and crumbs stats reads its file"
scope_rows "$tmp/d2.csv" | cut -d'|' -f1 | sed 's,^GPU 0 / [A-Za-z]* 0 / ,,' |
	sed 's,^Frame # / ,,' | sort >"$tmp/rows"
{
	echo "Frame #"
	echo "Shadow Depths"
	for k in 0 1 2 3; do echo "Shadow Depths / Shadow View $k"; done
	echo "Base Pass"
	echo "Base Pass / Opaque"
	echo "Lighting"
	echo "Lighting / Tiled Deferred Lighting"
	echo "Post Processing"
	for k in 0 1 2 3 4; do echo "Post Processing / Bloom Down $k"; echo "Post Processing / Bloom Up $k"; done
	echo "Post Processing / Tonemap"
} | sort >"$tmp/expected"
cmp -s "$tmp/rows" "$tmp/expected"
result $? "detail 2: the passes' parts (Shadow View N, Opaque, Bloom, Tonemap) and nothing of level 3$(
	diff "$tmp/expected" "$tmp/rows" | grep '^[<>]' | head -6 | tr '\n' ';' | sed 's/^/: /')"
[ "$(csv_value "$tmp/d2.csv" gpu frames)" = 3 ] &&
	! scope_rows "$tmp/d2.csv" | cut -d'|' -f3,4 | grep -v -x '3|1.000000' | grep -q .
result $? "detail 2: each of them in each of the 3 frames, once"

# ------------------------------------------------------------------------
# A recording killed mid-run leaves a prefix of whole frames
# ------------------------------------------------------------------------

# An open run from frame 0 of a long run of the renderer, killed with
# SIGKILL once the file holds frames. Its size is polled first (the file
# begins with its header, then a chunk of frames at least every second);
# then a copy must read at least one frame before the renderer is killed.
mkdir "$tmp/kill"
run=$tmp/kill/sample-renderer-run-0.crumbs
CRUMBS_RECORD=0: "$renderer" --frames 100000 --size $SIZE --quiet --capture-dir "$tmp/kill" \
	>"$tmp/kill.out" 2>"$tmp/kill.err" &
pid=$!
header=
seen=0
i=0
while [ $i -lt 600 ] && kill -0 "$pid" 2>/dev/null; do
	if [ -f "$run" ]; then
		size=$(wc -c <"$run")
		[ -z "$header" ] && [ "$size" -gt 0 ] && header=$size
		if [ -n "$header" ] && [ "$size" -gt "$header" ]; then
			cp "$run" "$tmp/snapshot.crumbs"
			seen=$("$crumbs" info "$tmp/snapshot.crumbs" 2>/dev/null |
				sed -n 's/^frames  *\([0-9]*\),.*/\1/p')
			[ "${seen:-0}" -ge 3 ] && break
		fi
	fi
	sleep 0.2
	i=$((i + 1))
done
# One more chunk's worth of frames, so the cut may fall inside one.
sleep 1.5
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
status=$?
pid=
[ "$status" = 137 ] && [ "${seen:-0}" -ge 3 ]
result $? "a recording renderer is killed with SIGKILL once its file holds frames (status $status, ${seen:-0} frames seen, header ${header:-none} bytes)"

"$crumbs" info "$run" >"$tmp/info" 2>"$tmp/info.err"
info_status=$?
total=$(wc -c <"$run")
# Cut inside a chunk, crumbs info says where and exits 1; cut between
# chunks, it reads what is there.
if [ $info_status = 1 ]; then
	grep -Eqx "crumbs: cannot read '$run': truncated at byte [0-9]+ \(the frames before it are intact\)" \
		"$tmp/info.err"
else
	[ $info_status = 0 ] && [ ! -s "$tmp/info.err" ]
fi
result $? "crumbs info reads the killed recording and reports the cut (status $info_status, $total bytes: $(head -c 200 "$tmp/info.err"))"
count=$(sed -n 's/^frames  *\([0-9]*\), numbered 0 to \([0-9]*\)$/\1 \2/p' "$tmp/info")
last=${count#* }
count=${count% *}
[ -n "$count" ] && [ "$count" -ge "$seen" ] && [ "$last" = $((count - 1)) ]
result $? "it holds frames 0 to N-1, at least the $seen seen before the kill ($(grep '^frames' "$tmp/info"))"
grep -q "^scopes  *$((${count:-0} * 5)), and 0 leaf events\$" "$tmp/info"
result $? "each of its frames is whole: 5 scopes each ($(grep '^scopes' "$tmp/info"))"

"$crumbs" stats "$run" --format csv >"$tmp/stats.csv" 2>"$tmp/stats.err"
stats_status=$?
[ $stats_status = $info_status ] && cmp -s "$tmp/stats.err" "$tmp/info.err"
result $? "crumbs stats reads it too, and says the same of the cut (status $stats_status)"
[ "$(csv_value "$tmp/stats.csv" gpu frames)" = "$count" ] &&
	scope_rows "$tmp/stats.csv" >"$tmp/rows" && coarse_rows "$count" "$tmp/stats.csv" >"$tmp/expected" &&
	cmp -s "$tmp/rows" "$tmp/expected"
result $? "crumbs stats: the $count frames, each with the coarse scopes and no other$(
	diff "$tmp/expected" "$tmp/rows" 2>/dev/null | grep '^[<>]' | head -6 | tr '\n' ';' | sed 's/^/: /')"

# Killed in the run's first second: the run's file is made as the run
# begins, with the devices and queues, and its first frame is flushed as
# soon as it is written (the others at least every second), so a program
# killed 0.3 s after its frame 4 (frame 0 is handed to the output thread
# by frame 5 at the latest) leaves a file holding frame 0 on, not a
# header alone, nor no file at all.
mkdir "$tmp/early"
run=$tmp/early/sample-renderer-run-0.crumbs
CRUMBS_RECORD=0: "$renderer" --frames 100000 --size $SIZE --quiet --timings \
	--capture-dir "$tmp/early" >"$tmp/early.out" 2>"$tmp/early.err" &
pid=$!
i=0
while [ $i -lt 1200 ] && kill -0 "$pid" 2>/dev/null && ! grep -q '^frame 4 cpu' "$tmp/early.err"; do
	sleep 0.05
	i=$((i + 1))
done
sleep 0.3
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
status=$?
pid=
"$crumbs" info "$run" >"$tmp/early.info" 2>"$tmp/early.info.err"
[ "$status" = 137 ] && grep -q '^frames  *[0-9]*, numbered 0 to [0-9]*$' "$tmp/early.info" &&
	grep -q '^GPU 0 ' "$tmp/early.info"
result $? "killed 0.3 s after its frame 4, the renderer leaves its run's file with its GPU and frames from 0 (status $status: $(grep -e '^frames' -e '^size' "$tmp/early.info" | tr '\n' ' ')$(head -c 200 "$tmp/early.info.err"))"

# ------------------------------------------------------------------------
# A directory that is not there: the program goes on, and the log says why
# ------------------------------------------------------------------------

for ask in "--record 2:4" "--capture-frame 2"; do
	# $ask: two words.
	"$renderer" --frames 6 --size $SIZE --quiet $ask --capture-dir "$tmp/none/dir" \
		>"$tmp/none.out" 2>"$tmp/none.err"
	status=$?
	file=$(case "$ask" in --record*) echo run ;; *) echo frame ;; esac)
	[ $status = 0 ] && grep -qx "crumbs: cannot write '$tmp/none/dir/sample-renderer-$file-2.crumbs': no such file or directory" \
		"$tmp/none.err"
	result $? "$ask into a missing directory: exit $status, and the log says no such file or directory$(
		head -c 300 "$tmp/none.err" | tr '\n' ';' | sed 's/^/: /')"
done

# ------------------------------------------------------------------------
# --record-every: runs again and again in one process, under validation;
# --timings says which frames each run recorded
# ------------------------------------------------------------------------

mkdir -p "$tmp/every"
"$renderer" --frames 20 --size $SIZE --quiet --validate --timings --record 2:4 \
	--record-every 14 --capture-dir "$tmp/every" >"$tmp/every.out" 2>"$tmp/every.err"
status=$?
labels=$(awk '/^frame [0-9]+ cpu/ && $NF == "run" { printf "%s ", $2 }' "$tmp/every.err")
[ $status = 0 ] && [ "$labels" = "2 3 4 16 17 18 " ] &&
	[ "$(ls "$tmp/every")" = "$(printf 'sample-renderer-run-16.crumbs\nsample-renderer-run-2.crumbs')" ]
result $? "--record 2:4 --record-every 14 under validation: exit $status, frames $labels recorded, into $(ls "$tmp/every" | tr '\n' ' ')"
frames_of() {
	"$crumbs" info "$1" 2>/dev/null | awk '$1 == "frames" { sub(",", "", $2); print $2 }'
}
[ "$(frames_of "$tmp/every/sample-renderer-run-2.crumbs")" = 3 ] &&
	[ "$(frames_of "$tmp/every/sample-renderer-run-16.crumbs")" = 3 ]
result $? "each run holds its 3 frames ($(frames_of "$tmp/every/sample-renderer-run-2.crumbs") and $(frames_of "$tmp/every/sample-renderer-run-16.crumbs"))"
"$renderer" --frames 20 --record 2:4 --record-every 13 >/dev/null 2>"$tmp/every-short.err"
status=$?
[ $status = 2 ] && grep -q 'record-every 13 leaves runs of 3 frames too little room' "$tmp/every-short.err"
result $? "--record-every shorter than a run and 12 frames: exit $status, and says why$(
	head -c 200 "$tmp/every-short.err" | tr '\n' ';' | sed 's/^/: /')"

echo "1..$n"
exit $bad
