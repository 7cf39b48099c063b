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
GEN=$BUILD/crumbs-gen
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

# The stand-in program: notes what it was asked, then writes FAKE_FRAMES
# frames (default 20) for each of FAKE_DEVICES devices (default 1) under
# the layer's names, and exits with FAKE_STATUS (default 0).
fake=$tmp/fake-program
cat >"$fake" <<EOF
#!/bin/sh
echo "\${CRUMBS_RECORD-unset}|\${CRUMBS_CAPTURE_FRAME-unset}|\${CRUMBS_LAYER_QUIET-unset}" >"$tmp/asked"
first=\${CRUMBS_RECORD%%:*}
k=0
while [ "\$k" -lt "\${FAKE_DEVICES:-1}" ]; do
	name=fake-program-run-\$first.crumbs
	[ "\$k" -gt 0 ] && name=fake-program-device\$k-run-\$first.crumbs
	"$GEN" -o "\$CRUMBS_CAPTURE_DIR/\$name" --frames "\${FAKE_FRAMES:-20}" --gpus 1 || exit 99
	k=\$((k + 1))
done
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
[ "$(grep -c 'holds 20 of frames 7 to 9' "$tmp/err")" = 0 ]
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
grep -q "^crumbs: '$tmp/short.crumbs' holds 8 of frames 5 to 24 (the run ended early)" "$tmp/err"
result $? "and says how many frames it holds"

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
"$GEN" -o "$tmp/peer-run.crumbs" --frames 10 --gpus 1
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
