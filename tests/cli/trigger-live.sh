#!/bin/sh
# SPDX-License-Identifier: MIT
# `crumbs trigger` on a running program: the sample renderer runs for a
# while; a capture of its next frame is asked for from outside, and the
# tables must come back on standard output and in the program's own log.
# A hundred requests at once are all answered; an answer is valid UTF-8
# whatever the request held. A program that exits normally removes its
# socket.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
pid=
# Under the sanitizers, the renderer (and only it) runs with the options
# tests/run-tests chose for it.
# `env` execs the renderer, so $! is the renderer's own PID.
renderer_asan=${CRUMBS_RENDERER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}}
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
. tests/cli/tap.sh

env ASAN_OPTIONS="$renderer_asan" "$BUILD/sample-renderer" --frames 3000 --quiet --capture-dir "$tmp" >"$tmp/out" 2>"$tmp/err" &
pid=$!
# Wait for its socket (the renderer starts in well under a second, but
# lavapipe compiles shaders first).
i=0
while [ ! -S "$XDG_RUNTIME_DIR/crumbs/$pid.sock" ] && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -S "$XDG_RUNTIME_DIR/crumbs/$pid.sock" ]
result $? "the renderer listens for crumbs trigger"

"$BUILD/crumbs" trigger "$pid" --ascii --root 'Post Processing' --no-stats \
	>"$tmp/table" 2>"$tmp/said"
status=$?
result $status "crumbs trigger exits 0 (said: $(tr '\n' ' ' <"$tmp/said"))"
grep -q "Bloom Down 3" "$tmp/table"
result $? "the tables of the captured frame are printed"
grep -Eq "^crumbs: frame [0-9]+ of process $pid captured to '$tmp/.*\.crumbs'" "$tmp/said"
result $? "it says which frame was captured, and where"
frame=$(sed -n 's/^crumbs: frame \([0-9]*\) of process.*/\1/p' "$tmp/said")
[ -f "$tmp/sample-renderer-frame-$frame.crumbs" ] && zstd -tq "$tmp/sample-renderer-frame-$frame.crumbs"
result $? "the capture file is there and is a valid zstd stream"
grep -q "Bloom Down 3" "$tmp/out"
result $? "the program printed the tables to its own log too"

# A hundred requests at once: the program takes them a few a frame, and
# answers every one, each requester waiting for room in its queue; those
# that come while a capture is under way are told which frame it is.
k=0
requesters=
while [ $k -lt 100 ]; do
	"$BUILD/crumbs" trigger "$pid" --ascii --root 'Post Processing' --no-stats --timeout 120 \
		>/dev/null 2>"$tmp/many-$k" &
	requesters="$requesters $!"
	k=$((k + 1))
done
captured=0
for r in $requesters; do
	wait "$r" && captured=$((captured + 1))
done
under_way="^crumbs: process $pid: a capture is already under way \\(frame [0-9]+\\)\$"
busy=$(cat "$tmp"/many-* | grep -Ec "$under_way")
cat "$tmp"/many-* | grep -Ev "^crumbs: (capturing frame [0-9]+|frame [0-9]+ of process [0-9]+ captured to) " |
	grep -Ev "$under_way" >"$tmp/many-others"
[ "$captured" -ge 1 ] && [ $((captured + busy)) = 100 ] && [ ! -s "$tmp/many-others" ]
result $? "100 requests at once: each one captured or told a capture is under way ($captured captured, $busy under way, others: $(sort "$tmp/many-others" | uniq -c | head -3 | tr '\n' ' '))"

# A request whose settings are not UTF-8: the answer is, with U+FFFD in
# place of each bad byte, and holds no control character.
python3 - "$XDG_RUNTIME_DIR/crumbs/$pid.sock" "$tmp/reply.sock" >"$tmp/answer" 2>&1 <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[2])
s.settimeout(30)
s.sendto(b"crumbs-trigger 1\nprofilegpu --root '[\xff\xfe\x1b'\n", sys.argv[1])
data = s.recv(8192)
text = data.decode("utf-8")  # strict: fails on bytes that are not UTF-8
assert text.startswith("crumbs-reply 1\nerror ") and text.endswith("\n"), text
assert "\ufffd\ufffd" in text, text
assert not any(c < " " and c != "\n" for c in text), text
print(text.strip().splitlines()[1])
EOF
result $? "an answer quoting bytes that are not UTF-8 is valid UTF-8 ($(tail -1 "$tmp/answer"))"

kill "$pid"
wait "$pid" 2>/dev/null
pid=

# A program that ends normally removes its socket.
env ASAN_OPTIONS="$renderer_asan" "$BUILD/sample-renderer" --frames 2 --quiet --capture-dir "$tmp" >/dev/null 2>&1 &
short=$!
wait "$short"
result $? "a short run of the renderer exits 0"
[ ! -e "$XDG_RUNTIME_DIR/crumbs/$short.sock" ]
result $? "its socket is gone after it exits"
echo "1..$n"
exit $bad
