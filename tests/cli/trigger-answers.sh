#!/bin/sh
# SPDX-License-Identifier: MIT
# `crumbs trigger` against stand-ins for a program that listens, which
# need no Vulkan: one busy with other requests, whose queue is full for a
# while (the request waits for room, within --timeout); one that never
# reads (crumbs says what happened); one whose answer holds bytes that
# are not UTF-8 and control characters (crumbs prints valid UTF-8 and no
# control character). Prints TAP lines.
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

# The stand-in: binds its socket, fills its own queue of requests with
# junk from a socket of its own (as other requesters would), waits
# PEER_BUSY seconds (never reads when negative), then reads every
# datagram and answers the crumbs-trigger requests with PEER_ANSWER (a
# Python bytes literal) and keeps running.
cat >"$tmp/peer.py" <<'EOF'
import ast, os, socket, sys, time
d = os.path.join(os.environ["XDG_RUNTIME_DIR"], "crumbs")
os.makedirs(d, mode=0o700, exist_ok=True)
os.chmod(d, 0o700)
path = os.path.join(d, "%d.sock" % os.getpid())
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
junk = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
junk.setblocking(False)
queued = 0
try:
    while queued < 1000:
        junk.sendto(b"junk", path)
        queued += 1
except BlockingIOError:
    pass
open(sys.argv[1], "w").write("%d\n" % queued)
busy = float(os.environ["PEER_BUSY"])
if busy < 0:
    time.sleep(60)
    sys.exit(0)
time.sleep(busy)
answer = ast.literal_eval(os.environ["PEER_ANSWER"])
s.settimeout(20)
while True:
    data, addr = s.recvfrom(8192)
    if data.startswith(b"crumbs-trigger 1\n") and addr:
        s.sendto(b"crumbs-reply 1\n" + answer + b"\n", addr)
EOF
# Starts the stand-in ($peer) and waits until its queue is full.
start_peer() {
	rm -f "$tmp/queued"
	PEER_BUSY=$1 PEER_ANSWER=$2 python3 "$tmp/peer.py" "$tmp/queued" &
	peer=$!
	i=0
	while [ ! -s "$tmp/queued" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
stop_peer() {
	kill "$peer" 2>/dev/null
	wait "$peer" 2>/dev/null
	peer=
}

# Busy for a second and a half: the request waits for room in its queue.
start_peer 1.5 "b'queued frame 42'"
[ "$(cat "$tmp/queued")" -gt 0 ] 2>/dev/null
result $? "the stand-in's queue of requests is full ($(cat "$tmp/queued") datagrams)"
"$CRUMBS" trigger "$peer" --no-wait --timeout 20 >"$tmp/out" 2>"$tmp/err"
result $? "crumbs trigger waits for room in a busy program's queue and exits 0 (said: $(tr '\n' ' ' <"$tmp/err"))"
[ "$(cat "$tmp/err")" = "crumbs: capturing frame 42 of process $peer" ]
result $? "and says what was queued"
stop_peer

# Never reads: the time out says what happened.
start_peer -1 "b''"
"$CRUMBS" trigger "$peer" --timeout 1 >"$tmp/out" 2>"$tmp/err"
status=$?
[ $status = 1 ] && [ "$(cat "$tmp/err")" = "crumbs: process $peer took no request within 1 s: its queue of requests ('$XDG_RUNTIME_DIR/crumbs/$peer.sock') stayed full (is it stopped, or not calling crumbs_frame?)" ]
result $? "a program that never reads: exit 1 after --timeout, saying its queue stayed full (exit $status, said: $(tr '\n' ' ' <"$tmp/err"))"
stop_peer

# An answer that is not UTF-8, with control characters: C0 (escape),
# DEL, C1 (CSI, U+009B) and a cut sequence.
start_peer 0 "b'error bad \\xff\\xfe pattern \\x1b[31mred\\x7f \\xc2\\x9b1m caf\\xc3\\xa9 \\xe2\\x9c'"
"$CRUMBS" trigger "$peer" --timeout 20 >"$tmp/out" 2>"$tmp/err"
status=$?
python3 - "$tmp/err" 2>/dev/null <<'EOF'
import sys, unicodedata
text = open(sys.argv[1], "rb").read().decode("utf-8")  # strict: fails on bad bytes
bad = [c for c in text if c != "\n" and unicodedata.category(c) == "Cc"]
sys.exit(1 if bad else 0)
EOF
result $? "what crumbs trigger prints of the answer is valid UTF-8 without control characters"
pid_peer=$peer
[ $status = 1 ] && [ "$(cat "$tmp/err")" = "crumbs: process $pid_peer: bad ?? pattern ?[31mred? ?1m café ??" ]
result $? "the bytes are replaced one by one, the good characters kept (exit $status, said: $(tr '\n' ' ' <"$tmp/err"))"
stop_peer

echo "1..$n"
exit $bad
