#!/bin/sh
# SPDX-License-Identifier: MIT
# The files crumbs writes, in a folder every user may write to (0777, no
# sticky bit) beside a file outside it that must never change: symbolic
# links are planted (by another user where this runs as root) at every
# name crumbs writes, final and temporary, the old predictable
# PATH.PID.tmp too, and the sample renderer's capture and run, `crumbs
# capture` with and without -o, `crumbs export -o`, `crumbs plot -o` and
# `crumbs-gen -o` must leave the file outside as it was and their output
# readable under the name they announce. Two runs and two captures of
# one name at once leave two readable files; a run whose folder or file
# is removed mid-run says what was lost (the renderer's log, `crumbs
# trigger`, `crumbs capture`), never "recorded"; the folder's danger is
# said; a capture folder too long for the system is named by its start.
# Prints TAP lines.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
crumbs=$BUILD/crumbs
renderer=${CRUMBS_RENDERER:-$BUILD/sample-renderer}
case $renderer in /*) ;; *) renderer=$ROOT/$renderer ;; esac
tmp=$(mktemp -d)
tmp=$(cd "$tmp" && pwd -P)
pids=
cleanup() {
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
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
SIZE=160x90

# Another user reaches the shared folders through $tmp.
chmod 711 "$tmp"
outside=$tmp/outside
printf 'a file outside the capture folder, which crumbs must never write\n' >"$outside"
cp "$outside" "$tmp/outside.orig"

# A folder every user may write to, without the sticky bit.
shared_dir() {
	mkdir "$tmp/$1" && chmod 0777 "$tmp/$1" && echo "$tmp/$1"
}

# A symbolic link at DIR/NAME to the file outside, planted by nobody
# where this runs as root (as another user of the machine would), else
# by this user.
attacker=
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	attacker="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
# The file outside is made as it was first, so that each check sees
# only what the command after its links did.
plant() {
	cp "$tmp/outside.orig" "$outside"
	$attacker ln -s "$outside" "$1/$2" || ln -s "$outside" "$1/$2"
}
# Runs a program with a link planted first at DIR/NAME.PID.tmp, PID
# being its own (the shell's, which exec hands on): the temporary name
# crumbs once wrote through. plant_tmp DIR NAME PROGRAM ARGS...
plant_tmp() {
	dir=$1 name=$2
	shift 2
	sh -c 'ln -s "$1" "$2/$3.$$.tmp"; shift 3; exec "$@"' sh "$outside" "$dir" "$name" "$@"
}
# Whether the file outside is as it was.
outside_kept() {
	cmp -s "$outside" "$tmp/outside.orig"
}
# Whether PATH is a regular file (not a link) that crumbs info reads,
# with N frames when N is given.
readable() {
	[ -f "$1" ] && [ ! -L "$1" ] && "$crumbs" info "$1" >"$tmp/info" 2>"$tmp/info.err" &&
		{ [ -z "${2:-}" ] || grep -q "^frames  *$2," "$tmp/info"; }
}
# The path a line of FILE announces: the text between the first ' and
# the next after PREFIX.
announced() {
	sed -n "s/^$2'\([^']*\)'.*/\1/p" "$1" | head -n 1
}

# ------------------------------------------------------------------------
# The renderer's capture: links at its name and its old temporary name
# ------------------------------------------------------------------------

dir=$(shared_dir capture)
plant "$dir" sample-renderer-frame-2.crumbs
plant_tmp "$dir" sample-renderer-frame-2.crumbs "$renderer" --frames 4 --size $SIZE --quiet \
	--capture-frame 2 --capture-dir "$dir" >"$tmp/capture.out" 2>"$tmp/capture.err"
result $? "the renderer captures frame 2 into a folder with links planted, and exits 0"
outside_kept
result $? "capture: the file outside the folder is unchanged"
file=$(announced "$tmp/capture.out" "frame 2 captured to ")
[ "$file" = "$dir/sample-renderer-frame-2.1.crumbs" ] && readable "$file" 1
result $? "capture: it goes to the next free name, and reads as a capture of 1 frame ('$file')"
grep -qxF "crumbs: '$dir/sample-renderer-frame-2.crumbs' exists: the capture goes to '$dir/sample-renderer-frame-2.1.crumbs'" \
	"$tmp/capture.err"
result $? "capture: the log says the name was taken, and which it took$(head -c 300 "$tmp/capture.err" | tr '\n' ';' | sed 's/^/: /')"
# crumbs' temporaries are hidden; the one planted is not.
[ -L "$dir/sample-renderer-frame-2.crumbs" ] && ! ls -A "$dir" | grep -q '^\.'
result $? "capture: the planted link is still a link, and no temporary is left ($(ls -A "$dir" | tr '\n' ' '))"
grep -qF "crumbs: the capture folder '$dir' is writable by every user and has no sticky bit" "$tmp/capture.err"
result $? "capture: the log warns that the folder lets anyone replace its captures"

# The sticky bit: no warning.
sticky=$tmp/sticky
mkdir "$sticky" && chmod 1777 "$sticky"
"$renderer" --frames 4 --size $SIZE --quiet --capture-frame 2 --capture-dir "$sticky" \
	>"$tmp/sticky.out" 2>"$tmp/sticky.err" &&
	readable "$sticky/sample-renderer-frame-2.crumbs" && ! grep -q "sticky" "$tmp/sticky.err"
result $? "capture into a folder with the sticky bit: no warning$(head -c 200 "$tmp/sticky.err" | tr '\n' ';' | sed 's/^/: /')"

# ------------------------------------------------------------------------
# The renderer's run: a link at its name
# ------------------------------------------------------------------------

dir=$(shared_dir runs)
plant "$dir" sample-renderer-run-2.crumbs
"$renderer" --frames 7 --size $SIZE --quiet --record 2:5 --capture-dir "$dir" \
	>"$tmp/run.out" 2>"$tmp/run.err"
result $? "the renderer records frames 2 to 5 into a folder with a link planted, and exits 0"
outside_kept
result $? "run: the file outside the folder is unchanged"
grep -qxF "frames 2 to 5 recorded to '$dir/sample-renderer-run-2.1.crumbs' (4 frames, 0 incomplete)" "$tmp/run.out" &&
	readable "$dir/sample-renderer-run-2.1.crumbs" 4
result $? "run: it goes to the next free name, whose 4 frames read$(grep recorded "$tmp/run.out" | sed 's/^/: /')"
grep -qxF "crumbs: '$dir/sample-renderer-run-2.crumbs' exists: the run goes to '$dir/sample-renderer-run-2.1.crumbs'" \
	"$tmp/run.err"
result $? "run: the log says the name was taken, and which it took$(head -c 300 "$tmp/run.err" | tr '\n' ';' | sed 's/^/: /')"

# One frame: "1 frame".
"$renderer" --frames 4 --size $SIZE --quiet --record 2:2 --capture-dir "$dir" >"$tmp/one.out" 2>&1
grep -qxF "frame 2 recorded to '$dir/sample-renderer-run-2.2.crumbs' (1 frame, 0 incomplete)" "$tmp/one.out"
result $? "a run of one frame says '1 frame'$(grep recorded "$tmp/one.out" | sed 's/^/: /')"

# ------------------------------------------------------------------------
# crumbs capture: -o over a link; without -o, never over a file
# ------------------------------------------------------------------------

dir=$(shared_dir cmd)
plant "$dir" cap.crumbs
"$crumbs" capture --frame 3 -o "$dir/cap.crumbs" --ascii -- "$renderer" --frames 5 --size $SIZE \
	>"$tmp/cmd.out" 2>"$tmp/cmd.err"
result $? "crumbs capture -o into a folder with a link at that name exits 0"
outside_kept
result $? "crumbs capture -o: the file outside the folder is unchanged"
file=$(announced "$tmp/cmd.err" "crumbs: frame 3 of '[^']*' captured to ")
[ "$file" = "$dir/cap.crumbs" ] && readable "$file" 1
result $? "crumbs capture -o: the capture replaced the link, and reads ('$file')"
grep -qF "crumbs: '$dir' is writable by every user and has no sticky bit" "$tmp/cmd.err"
result $? "crumbs capture -o: it warns that the folder lets anyone replace the capture"
! ls -A "$dir" | grep -q '^\.crumbs-capture-'
result $? "crumbs capture -o: its temporary folder is gone ($(ls -A "$dir" | tr '\n' ' '))"

printf 'mine\n' >"$dir/sample-renderer-frame-3.crumbs"
(cd "$dir" && exec "$crumbs" capture --frame 3 --ascii -- "$renderer" --frames 5 --size $SIZE) \
	>"$tmp/cmd2.out" 2>"$tmp/cmd2.err"
result $? "crumbs capture without -o, where a file has the capture's name, exits 0"
[ "$(cat "$dir/sample-renderer-frame-3.crumbs")" = mine ]
result $? "crumbs capture without -o: the file that had the name is as it was"
grep -qxF "crumbs: './sample-renderer-frame-3.crumbs' exists: the capture goes to './sample-renderer-frame-3.1.crumbs'" \
	"$tmp/cmd2.err" && readable "$dir/sample-renderer-frame-3.1.crumbs" 1
result $? "crumbs capture without -o: the capture goes to the next free name, and says so$(
	head -c 300 "$tmp/cmd2.err" | tr '\n' ';' | sed 's/^/: /')"

# ------------------------------------------------------------------------
# crumbs export -o, crumbs plot -o, crumbs-gen -o: over the link, never
# through it, nor through one at the old temporary name
# ------------------------------------------------------------------------

dir=$(shared_dir out)
plant "$dir" trace.json
"$crumbs" export samples/deferred.crumbs --format chrome -o "$dir/trace.json" 2>"$tmp/export.err"
result $? "crumbs export -o over a planted link exits 0$(head -c 200 "$tmp/export.err" | sed 's/^/: /')"
outside_kept && [ -f "$dir/trace.json" ] && [ ! -L "$dir/trace.json" ] &&
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$dir/trace.json"
result $? "crumbs export -o: the file outside is unchanged, and the trace is JSON in place of the link"

plant "$dir" pic.svg
plant_tmp "$dir" pic.svg "$crumbs" plot samples/deferred.crumbs -o "$dir/pic.svg" 2>"$tmp/plot.err"
result $? "crumbs plot -o over planted links exits 0$(head -c 200 "$tmp/plot.err" | sed 's/^/: /')"
outside_kept && [ -f "$dir/pic.svg" ] && [ ! -L "$dir/pic.svg" ] &&
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$dir/pic.svg"
result $? "crumbs plot -o: the file outside is unchanged, and the picture is SVG in place of the link"

plant "$dir" gen.crumbs
plant_tmp "$dir" gen.crumbs "$BUILD/crumbs-gen" -o "$dir/gen.crumbs" --frames 3 2>"$tmp/gen.err"
result $? "crumbs-gen -o over planted links exits 0$(head -c 200 "$tmp/gen.err" | sed 's/^/: /')"
outside_kept && readable "$dir/gen.crumbs" 3
result $? "crumbs-gen -o: the file outside is unchanged, and the capture reads in place of the link"
! ls -A "$dir" | grep -q '^\.'
result $? "no temporary is left beside them ($(ls -A "$dir" | tr '\n' ' '))"

# ------------------------------------------------------------------------
# Two runs, and two captures, of one name at once
# ------------------------------------------------------------------------

dir=$(shared_dir two-runs)
for k in a b; do
	"$renderer" --frames 52 --size $SIZE --quiet --record 2:50 --capture-dir "$dir" \
		>"$tmp/two-$k.out" 2>"$tmp/two-$k.err" &
	eval "pid_$k=\$!"
	pids="$pids $!"
done
# shellcheck disable=SC2154 # set by eval
wait "$pid_a"
status_a=$?
# shellcheck disable=SC2154
wait "$pid_b"
status_b=$?
pids=
[ $status_a = 0 ] && [ $status_b = 0 ]
result $? "two renderers record frames 2 to 50 into one folder at once, and exit 0 ($status_a, $status_b)"
a=$(announced "$tmp/two-a.out" "frames 2 to 50 recorded to ")
b=$(announced "$tmp/two-b.out" "frames 2 to 50 recorded to ")
[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] && readable "$a" 49 && readable "$b" 49 &&
	[ "$(ls "$dir" | sort | tr '\n' ' ')" = "sample-renderer-run-2.1.crumbs sample-renderer-run-2.crumbs " ]
result $? "two runs: two files, each of its 49 frames ('$a', '$b': $(ls "$dir" | tr '\n' ' '))"
cat "$tmp/two-a.err" "$tmp/two-b.err" >"$tmp/two.err"
[ "$(grep -cxF "crumbs: '$dir/sample-renderer-run-2.crumbs' exists: the run goes to '$dir/sample-renderer-run-2.1.crumbs'" \
	"$tmp/two.err")" = 1 ]
result $? "two runs: the second says its name was taken"

dir=$(shared_dir two-captures)
for k in a b; do
	"$renderer" --frames 4 --size $SIZE --quiet --capture-frame 2 --capture-dir "$dir" \
		>"$tmp/cap-$k.out" 2>"$tmp/cap-$k.err" &
	eval "pid_$k=\$!"
	pids="$pids $!"
done
wait "$pid_a"
status_a=$?
wait "$pid_b"
status_b=$?
pids=
a=$(announced "$tmp/cap-a.out" "frame 2 captured to ")
b=$(announced "$tmp/cap-b.out" "frame 2 captured to ")
[ $status_a = 0 ] && [ $status_b = 0 ] && [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] &&
	readable "$a" 1 && readable "$b" 1 &&
	[ "$(ls "$dir" | sort | tr '\n' ' ')" = "sample-renderer-frame-2.1.crumbs sample-renderer-frame-2.crumbs " ]
result $? "two captures of frame 2 at once: two files, each read ('$a', '$b': $(ls "$dir" | tr '\n' ' '))"

# ------------------------------------------------------------------------
# A folder removed mid-run, a file removed mid-run
# ------------------------------------------------------------------------

# Waits (up to a minute) until FILE exists, or the process PID is gone.
wait_for_file() {
	i=0
	while [ $i -lt 600 ] && [ ! -e "$1" ] && kill -0 "$2" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$1" ]
}

# The renderer's own run, from frame 2 until it ends, six seconds on.
mkdir "$tmp/gone"
CRUMBS_RECORD=2: "$renderer" --frames 1 --duration 6000 --size $SIZE --quiet --capture-dir "$tmp/gone" \
	>"$tmp/gone.out" 2>"$tmp/gone.err" &
pid=$!
pids=$pid
wait_for_file "$tmp/gone/sample-renderer-run-2.crumbs" "$pid"
result $? "a run begins its file"
# A flush or two in: the file holds frames by then.
sleep 1.5
rm -rf "$tmp/gone"
wait "$pid"
status=$?
pids=
grep -Eqx "crumbs: frames 2 to [0-9]+ are lost: gone from '$tmp/gone/sample-renderer-run-2.crumbs' \(its folder was removed during the run\); recording stopped" \
	"$tmp/gone.err" && ! grep -q "recorded to" "$tmp/gone.out" "$tmp/gone.err"
result $? "a folder removed mid-run: the log says which frames are lost and why, never 'recorded' (exit $status$(
	cat "$tmp/gone.out" "$tmp/gone.err" | grep -e lost -e recorded | head -c 300 | sed 's/^/: /'))"

# crumbs trigger --frames: the run's file removed; crumbs trigger says so
# and exits 1.
mkdir "$tmp/trig"
"$renderer" --frames 1 --duration 8000 --size $SIZE --quiet --capture-dir "$tmp/trig" \
	>"$tmp/trig.out" 2>"$tmp/trig.err" &
pid=$!
pids=$pid
wait_for_file "$XDG_RUNTIME_DIR/crumbs/$pid.sock" "$pid"
: >"$tmp/trigger.err"
"$crumbs" trigger "$pid" --frames 100000 --timeout 60 >"$tmp/trigger.out" 2>"$tmp/trigger.err" &
asker=$!
pids="$pids $asker"
run=$(sed -n 's/^crumbs: recording frames \([0-9]*\) .*/\1/p' "$tmp/trigger.err")
i=0
while [ -z "$run" ] && [ $i -lt 600 ] && kill -0 "$asker" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
	run=$(sed -n 's/^crumbs: recording frames \([0-9]*\) .*/\1/p' "$tmp/trigger.err")
done
wait_for_file "$tmp/trig/sample-renderer-run-$run.crumbs" "$pid"
sleep 1.5
rm -f "$tmp/trig/sample-renderer-run-$run.crumbs"
wait "$asker"
status=$?
grep -Eq "^crumbs: process $pid: frames $run to [0-9]+ are lost: gone from '$tmp/trig/sample-renderer-run-$run.crumbs' \(it was removed during the run\)\$" \
	"$tmp/trigger.err"
ok=$?
[ $status = 1 ] && [ $ok = 0 ]
result $? "crumbs trigger --frames whose file is removed mid-run exits 1, saying what was lost (exit $status: $(
	head -c 300 "$tmp/trigger.err" | tr '\n' ';'))"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pids=

# crumbs capture --frames: the folder the layer writes into, removed.
mkdir "$tmp/cc"
"$crumbs" capture --frames 2: -o "$tmp/cc/run.crumbs" -- "$renderer" --frames 1 --duration 6000 \
	--size $SIZE >"$tmp/cc.out" 2>"$tmp/cc.err" &
pid=$!
pids=$pid
i=0
while [ $i -lt 600 ] && ! ls "$tmp"/cc/.crumbs-capture-*/*.crumbs >/dev/null 2>&1 && kill -0 "$pid" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
sleep 1.5
rm -rf "$tmp"/cc/.crumbs-capture-*
wait "$pid"
status=$?
pids=
[ $status = 1 ] && grep -qF "was removed while '$renderer' ran: the frames it recorded are lost" "$tmp/cc.err" &&
	grep -q "are lost: gone from '.*' (its folder was removed during the run)" "$tmp/cc.err" &&
	! grep -q "recorded to" "$tmp/cc.err" && [ ! -e "$tmp/cc/run.crumbs" ]
result $? "crumbs capture --frames whose folder is removed mid-run exits 1, saying what was lost (exit $status: $(
	grep -v '^[|+]' "$tmp/cc.err" | head -c 400 | tr '\n' ';'))"

# ------------------------------------------------------------------------
# A capture folder too long for the system
# ------------------------------------------------------------------------

long=$tmp/$(printf '%5000s' '' | tr ' ' a)
CRUMBS_CAPTURE_DIR=$long "$renderer" --frames 4 --size $SIZE --quiet --capture-frame 2 \
	>"$tmp/long.out" 2>"$tmp/long.err"
status=$?
start=$(printf '%.48s' "$long/")
[ $status = 0 ] && grep -qF "crumbs: cannot write '$start...' (" "$tmp/long.err" &&
	grep -q "the path is too long" "$tmp/long.err"
result $? "a CRUMBS_CAPTURE_DIR of 5,000 characters: the log names its start and says it is too long (exit $status: $(
	head -c 300 "$tmp/long.err"))"

echo "1..$n"
exit $bad
