#!/bin/sh
# SPDX-License-Identifier: MIT
# crumbs capture's habits on the sample renderer under lavapipe: -f is its
# own --frame, the frame captured (the report's --frame, which chooses
# among a file's frames, is not taken there); a --root that matches no
# scope of the captured frame exits 1 saying so, and one that matches
# exits 0; its tables fit --width or COLUMNS.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
ASAN_OPTIONS=${CRUMBS_RENDERER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}}
export ASAN_OPTIONS
. tests/cli/tap.sh

capture() { # NAME [crumbs capture options]: frame 2 of 5 of the renderer
	name=$1
	shift
	"$BUILD/crumbs" capture -o "$tmp/$name.crumbs" --ascii "$@" -- \
		"$BUILD/sample-renderer" --frames 5 --async-compute off >"$tmp/$name.out" \
		2>"$tmp/$name.err"
}

capture short -f 2
status=$?
[ "$status" = 0 ] && grep -q "^crumbs: frame 2 of " "$tmp/short.err" &&
	grep -q "^GPU profile for frame 2 " "$tmp/short.out"
result $? "crumbs capture -f 2 captures frame 2 (exit $status)"

"$BUILD/crumbs" capture -f last -- true >/dev/null 2>"$tmp/last.err"
status=$?
[ "$status" = 2 ] && grep -q "'-f': 'last' is not a frame number" "$tmp/last.err"
result $? "crumbs capture -f last is a usage error, not the report's --frame (exit $status)"

capture nope -f 2 --root 'No such scope'
status=$?
[ "$status" = 1 ] && grep -q "no scope in the frame of '.*' matches --root 'No such scope'" \
	"$tmp/nope.err"
result $? "a --root that matches nothing in the captured frame: exit 1, said (exit $status)"

capture some -f 2 --root 'shadow*' -i
status=$?
[ "$status" = 0 ] && ! grep -q "no scope" "$tmp/some.err"
result $? "a --root that matches: exit 0 (exit $status)"
# The tables after the program's output fit --width, or COLUMNS, as
# report's do; with neither, on a pipe, they are as wide as they need.
widest() { # in characters: names keep their UTF-8 in a UTF-8 locale
	python3 -c 'import sys; print(max([len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8", errors="replace") if l[:1] in "+|"] or [0]))' "$1"
}
capture narrow -f 2 --width 80
status=$?
w=$(widest "$tmp/narrow.out")
[ "$status" = 0 ] && [ "$w" -gt 40 ] && [ "$w" -le 80 ]
result $? "crumbs capture --width 80: its tables fit 80 columns (widest $w, exit $status)"
COLUMNS=90 capture columns -f 2
status=$?
w=$(widest "$tmp/columns.out")
[ "$status" = 0 ] && [ "$w" -gt 40 ] && [ "$w" -le 90 ]
result $? "crumbs capture with COLUMNS=90: its tables fit (widest $w, exit $status)"
(unset COLUMNS; capture full -f 2)
w=$(widest "$tmp/full.out")
[ "$w" -gt 90 ]
result $? "crumbs capture without either: the full tables (widest $w)"
echo "1..$n"
exit $bad
