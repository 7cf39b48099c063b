#!/bin/sh
# SPDX-License-Identifier: MIT
# `crumbs capture --frames` and `crumbs trigger --frames` against stand-ins
# that need no Vulkan: a program that writes, as the layer would, the run
# file that CRUMBS_RECORD asks for (a crumbs-gen capture), and a program
# that answers on the trigger socket as libcrumbs would. What crumbs asks
# for (the environment, the request), where the files go, what it says and
# its exit statuses. Prints TAP lines.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CRUMBS=$BUILD/crumbs
tmp=$(mktemp -d)
peer=
cleanup() {
	[ -n "$peer" ] && kill "$peer" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
LC_ALL=C.UTF-8
export LC_ALL
. tests/cli/tap.sh

# The stand-in program: notes what it was asked, then writes a run's file
# for each of FAKE_DEVICES devices (default 1) under the layer's names,
# as the recorder would: FAKE_FRAMES frames (default 20) from the run's
# first, or the frames FAKE_RUN_FRAMES lists; with FAKE_CUT, without the
# index that closing the run writes. Then it exits with FAKE_STATUS
# (default 0), or with FAKE_KILL kills itself with SIGKILL.
fake=$tmp/fake-program
cat >"$fake" <<EOF
#!/bin/sh
echo "\${CRUMBS_RECORD-unset}|\${CRUMBS_CAPTURE_FRAME-unset}|\${CRUMBS_LAYER_QUIET-unset}" >"$tmp/asked"
first=\${CRUMBS_RECORD%%:*}
frames=\${FAKE_RUN_FRAMES-\$(seq "\${first:-0}" \$((\${first:-0} + \${FAKE_FRAMES:-20} - 1)))}
k=0
while [ "\$k" -lt "\${FAKE_DEVICES:-1}" ]; do
	name=fake-program-run-\$first.crumbs
	[ "\$k" -gt 0 ] && name=fake-program-device\$k-run-\$first.crumbs
	python3 "$ROOT/tests/cli/run-file.py" "\$CRUMBS_CAPTURE_DIR/\$name" \${FAKE_CUT:+--cut} \$frames ||
		exit 99
	k=\$((k + 1))
done
[ -n "\${FAKE_KILL:-}" ] && kill -KILL \$\$
exit "\${FAKE_STATUS:-0}"
EOF
chmod +x "$fake"

"$CRUMBS" capture --frames 5:24 --detail 2 -o "$tmp/run.crumbs" --ascii -- "$fake" \
	>"$tmp/out" 2>"$tmp/err"
result $? "crumbs capture --frames exits 0 (said: $(tr '\n' ' ' <"$tmp/err"))"
[ "$(cat "$tmp/asked")" = "5:24:2|unset|1" ]
result $? "it sets CRUMBS_RECORD=5:24:2, no CRUMBS_CAPTURE_FRAME (got $(cat "$tmp/asked"))"
[ -s "$tmp/run.crumbs" ] && [ -z "$(find "$tmp" -name '.crumbs-capture-*')" ]
result $? "the run goes where -o says; no temporary folder is left"
[ "$(cat "$tmp/err")" = "crumbs: frames 5 to 24 of '$fake' recorded to '$tmp/run.crumbs'" ]
result $? "it says which frames were recorded, and where"
"$CRUMBS" stats "$tmp/run.crumbs" --ascii >"$tmp/stats"
[ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/stats"
result $? "it prints what crumbs stats prints of the file"

mkdir "$tmp/cwd"
(cd "$tmp/cwd" && CRUMBS_CAPTURE_FRAME=3 "$CRUMBS" capture --frames 7:9 -- "$fake" \
	>"$tmp/out" 2>"$tmp/err")
result $? "crumbs capture --frames without -o exits 0"
[ "$(cat "$tmp/asked")" = "7:9:1|unset|1" ]
result $? "the detail is 1 by default; a CRUMBS_CAPTURE_FRAME set before is dropped (got $(cat "$tmp/asked"))"
[ -s "$tmp/cwd/fake-program-run-7.crumbs" ] &&
	grep -q "recorded to './fake-program-run-7.crumbs'" "$tmp/err" &&
	grep -q "^Statistics of 20 frames" "$tmp/out"
result $? "without -o the run keeps its name, in the current folder"
! grep -q ' holds ' "$tmp/err"
result $? "a run that holds all its frames gets no note"

CRUMBS_RECORD=1:2 "$CRUMBS" capture --frame 4 -o "$tmp/frame.crumbs" -- "$fake" \
	>/dev/null 2>&1
[ "$(cat "$tmp/asked")" = "unset|4|1" ]
result $? "--frame sets CRUMBS_CAPTURE_FRAME and drops a CRUMBS_RECORD set before (got $(cat "$tmp/asked"))"

FAKE_DEVICES=2 "$CRUMBS" capture --frames 5:24 -o "$tmp/two.crumbs" --ascii -- "$fake" \
	>"$tmp/out" 2>"$tmp/err"
result $? "a run of two devices exits 0"
[ -s "$tmp/two.crumbs" ] && [ -s "$tmp/two-device1.crumbs" ] &&
	[ "$(grep -c "^crumbs: frames 5 to 24 of '$fake' recorded to '$tmp/two" "$tmp/err")" = 2 ] &&
	[ "$(grep -c '^Statistics of 20 frames' "$tmp/out")" = 2 ]
result $? "one run file per device, two.crumbs and two-device1.crumbs, each announced and shown"

"$CRUMBS" capture --frames 5: -o "$tmp/open.crumbs" -- "$fake" >"$tmp/out" 2>"$tmp/err"
result $? "an open run (--frames 5:) exits 0"
[ "$(cut -d'|' -f1 "$tmp/asked")" = "5::1" ] &&
	grep -q "^crumbs: frames 5 to the end of '$fake' recorded to '$tmp/open.crumbs'" "$tmp/err"
result $? "it sets CRUMBS_RECORD=5::1 and says the frames run to the end"

FAKE_FRAMES=8 "$CRUMBS" capture --frames 5:24 -o "$tmp/short.crumbs" -- "$fake" \
	>"$tmp/out" 2>"$tmp/err"
result $? "a run that ended early exits 0"
[ "$(tail -n 1 "$tmp/err")" = "crumbs: '$tmp/short.crumbs' holds frames 5 to 12 of frames 5 to 24: '$fake' ended after frame 12" ]
result $? "and says which frames it holds, and that the program ended after the last (said: $(tail -n 1 "$tmp/err"))"

# Frames dropped by the recorder (its GPU too far behind) in a run that
# ended on time: the file says which are there, and the line why the
# others are not; the run did not end early.
FAKE_RUN_FRAMES="5 6 7 8 11 12 13 14 15 16 17 19 20 21 22 23 24" "$CRUMBS" capture \
	--frames 5:24 -o "$tmp/dropped.crumbs" -- "$fake" >"$tmp/out" 2>"$tmp/err"
result $? "a run with frames dropped exits 0"
[ "$(tail -n 1 "$tmp/err")" = "crumbs: '$tmp/dropped.crumbs' holds 17 frames from 5 to 24 of frames 5 to 24: 3 up to frame 24 were not recorded (the recorder drops frames while the GPU is too far behind; the program's log says how far)" ]
result $? "it says which frames the file holds and why 3 are missing, not that the run ended early (said: $(tail -n 1 "$tmp/err"))"
FAKE_RUN_FRAMES="6 7 8 9 10" "$CRUMBS" capture --frames 5:24 -o "$tmp/both.crumbs" -- \
	"$fake" >"$tmp/out" 2>"$tmp/err"
[ "$(tail -n 1 "$tmp/err")" = "crumbs: '$tmp/both.crumbs' holds frames 6 to 10 of frames 5 to 24: 1 up to frame 10 was not recorded (the recorder drops frames while the GPU is too far behind; the program's log says how far); '$fake' ended after frame 10" ]
result $? "the first frame dropped and the program ended early: both said (said: $(tail -n 1 "$tmp/err"))"

# A program killed before it closed its run: the file ends after its last
# chunk, and crumbs says so, and which frames it holds; killed before the
# first frame was written, the file holds its devices alone.
FAKE_KILL=1 FAKE_CUT=1 FAKE_FRAMES=8 "$CRUMBS" capture --frames 5: -o "$tmp/cut.crumbs" \
	-- "$fake" >"$tmp/out" 2>"$tmp/err"
status=$?
[ $status = 137 ] && grep -q '^Statistics of 8 frames (5 to 12)' "$tmp/out" &&
	grep -q "^crumbs: cannot read '$tmp/cut.crumbs': truncated at byte [0-9]* (the frames before it are intact)\$" "$tmp/err" &&
	[ "$(tail -n 1 "$tmp/err")" = "crumbs: '$tmp/cut.crumbs' holds frames 5 to 12 of frames 5 to the end: '$fake' was killed by signal 9 before closing it, so any frame recorded after frame 12 is lost" ]
result $? "a program killed mid-run: exit $status, the statistics of its 8 frames, and what the file holds and why (said: $(tail -n 1 "$tmp/err"))"
FAKE_KILL=1 FAKE_CUT=1 FAKE_FRAMES=0 "$CRUMBS" capture --frames 5:24 -o "$tmp/empty.crumbs" \
	-- "$fake" >"$tmp/out" 2>"$tmp/err"
status=$?
[ $status = 137 ] && [ -s "$tmp/empty.crumbs" ] && ! grep -q "ended before its run began" "$tmp/err" &&
	[ "$(tail -n 1 "$tmp/err")" = "crumbs: '$tmp/empty.crumbs' holds none of frames 5 to 24: '$fake' was killed by signal 9 before the run's first frame was written" ]
result $? "killed before its first frame was written: exit $status, the file kept, and crumbs says it holds none (said: $(tail -n 1 "$tmp/err"))"

FAKE_STATUS=3 "$CRUMBS" capture --frames 5:24 -o "$tmp/three.crumbs" -- "$fake" \
	>/dev/null 2>&1
result $((($? == 3) ? 0 : 1)) "the program's own exit status comes back with a run"
"$CRUMBS" capture --frames 5:24 -o "$tmp/none.crumbs" -- sh -c 'exit 0' >/dev/null 2>"$tmp/err"
[ $? = 1 ] && grep -q "^crumbs: 'sh' ended before its run began at frame 5 " "$tmp/err" &&
	[ ! -e "$tmp/none.crumbs" ]
result $? "a program that leaves no run file: exit 1, a clear error, no file"

# A destination that cannot be written (a folder of that name) does not
# cost the run: it stays in crumbs' temporary folder, which says so.
mkdir -p "$tmp/taken/inside"
"$CRUMBS" capture --frames 5:24 -o "$tmp/taken" -- "$fake" >/dev/null 2>"$tmp/err"
[ $? = 1 ] && kept=$(sed -n "s/^crumbs: cannot move the capture to .*(it stays at '\(.*\)')\$/\1/p" "$tmp/err") &&
	[ -s "$kept" ] && ! grep -q "ended before" "$tmp/err"
result $? "a run that cannot be moved is kept, and crumbs says where (exit 1)"

# The stand-in for a program that listens: it answers the first request
# with what PEER_ANSWERS says (lines separated by '|'), then keeps quiet.
python3 tests/cli/run-file.py "$tmp/peer-run.crumbs" $(seq 120 129)
cat >"$tmp/peer.py" <<'EOF'
import os, socket, sys, time
d = os.path.join(os.environ["XDG_RUNTIME_DIR"], "crumbs")
os.makedirs(d, mode=0o700, exist_ok=True)
os.chmod(d, 0o700)
path = os.path.join(d, "%d.sock" % os.getpid())
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
data, addr = s.recvfrom(8192)
open(sys.argv[1], "wb").write(data)
for line in os.environ["PEER_ANSWERS"].split("|"):
    s.sendto(b"crumbs-reply 1\n" + line.encode() + b"\n", addr)
time.sleep(5)
os.unlink(path)
EOF
# Starts the stand-in ($peer) and waits for its socket.
start_peer() {
	PEER_ANSWERS=$1 python3 "$tmp/peer.py" "$tmp/request" &
	peer=$!
	i=0
	while [ ! -S "$XDG_RUNTIME_DIR/crumbs/$peer.sock" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
stop_peer() {
	kill "$peer" 2>/dev/null
	wait "$peer" 2>/dev/null
	peer=
}

start_peer "queued frames 120 to 129|captured $tmp/peer-run.crumbs"
"$CRUMBS" trigger "$peer" --frames 10 --detail 2 --ascii --root 'Post*' >"$tmp/out" 2>"$tmp/err"
result $? "crumbs trigger --frames exits 0 (said: $(tr '\n' ' ' <"$tmp/err"))"
printf 'crumbs-trigger 1\nprofilegpu --frames 10 --detail 2 --ascii --root '"'Post*'"'\n' >"$tmp/expected"
cmp -s "$tmp/request" "$tmp/expected"
result $? "the request is profilegpu --frames 10 --detail 2 and the report options (got $(tr '\n' ' ' <"$tmp/request"))"
printf "crumbs: recording frames 120 to 129 of process %s\ncrumbs: frames 120 to 129 of process %s recorded to '%s'\n" \
	"$peer" "$peer" "$tmp/peer-run.crumbs" >"$tmp/expected"
cmp -s "$tmp/err" "$tmp/expected"
result $? "it says which frames are recorded, then where they went"
"$CRUMBS" stats "$tmp/peer-run.crumbs" --ascii --root 'Post*' >"$tmp/stats"
cmp -s "$tmp/out" "$tmp/stats" && grep -q "Post Processing" "$tmp/out"
result $? "it prints what crumbs stats prints of the file, with the options given"
stop_peer

start_peer "queued frames 120 to 129|captured $tmp/peer-run.crumbs"
"$CRUMBS" trigger "$peer" --frames 10 --no-wait >"$tmp/out" 2>"$tmp/err"
result $? "crumbs trigger --frames --no-wait exits 0"
[ ! -s "$tmp/out" ] && [ "$(cat "$tmp/err")" = "crumbs: recording frames 120 to 129 of process $peer" ]
result $? "and returns once the run is queued"
grep -q '^profilegpu --frames 10$' "$tmp/request"
result $? "without --detail the request leaves the program's default"
stop_peer

# A run of one frame is "frame 120", not "frames 120 to 120".
start_peer "queued frames 120 to 120|captured $tmp/peer-run.crumbs"
"$CRUMBS" trigger "$peer" --frames 1 >/dev/null 2>"$tmp/err"
printf "crumbs: recording frame 120 of process %s\ncrumbs: frame 120 of process %s recorded to '%s'\n" \
	"$peer" "$peer" "$tmp/peer-run.crumbs" >"$tmp/expected"
cmp -s "$tmp/err" "$tmp/expected"
result $? "a run of one frame is said to be of frame 120 (said: $(tr '\n' ' ' <"$tmp/err"))"
stop_peer

start_peer "queued frames 120 to 129"
"$CRUMBS" trigger "$peer" --frames 10 --timeout 1 >/dev/null 2>"$tmp/err"
[ $? = 1 ] && grep -q "^crumbs: process $peer did not finish recording frames 120 to 129 within 1 s" "$tmp/err"
result $? "a run not written in time: exit 1, and a longer --timeout is suggested"
stop_peer

start_peer "queued frames 129 to 120|captured $tmp/peer-run.crumbs"
"$CRUMBS" trigger "$peer" --frames 10 --timeout 1 >/dev/null 2>"$tmp/err"
[ $? = 1 ] && grep -q "did not answer within 1 s" "$tmp/err"
result $? "a range that ends before it begins is not an answer"
stop_peer

echo "1..$n"
exit $bad
