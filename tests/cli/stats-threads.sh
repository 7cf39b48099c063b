#!/bin/sh
# SPDX-License-Identifier: MIT
# crumbs stats, diff and plot read a capture of several parts on several
# threads (CRUMBS_THREADS) and join what each thread took in order: what
# they print, and how they end, must be what one thread reading it all
# prints, whole or from a --frames range, and on a file cut short or
# damaged in a middle part; the CPU threads', tasks' and frames of kind
# Game's rows too. Prints TAP lines.
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/cli/tap.sh
CRUMBS="$BUILD/crumbs"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

"$BUILD/crumbs-gen" -o "$T/run.crumbs" --frames 6000 --leaves --unbalanced --cpu-threads 3 --tasks 6 --timeline-frames \
	--noise 3 --spikes 40 >/dev/null
"$BUILD/crumbs-gen" -o "$T/base.crumbs" --frames 6000 --leaves --unbalanced --cpu-threads 3 --tasks 6 --timeline-frames \
	--noise 3 --noise-seed 7 --scale 'Bloom*=1.2' >/dev/null
chunks=$("$CRUMBS" info "$T/run.crumbs" | sed -n 's/.*, \([0-9]*\) chunks.*/\1/p')
[ "${chunks:-0}" -ge 4 ]
result $? "the capture has several parts ($chunks chunks)"

size=$(wc -c <"$T/run.crumbs")
head -c $((size * 6 / 10)) "$T/run.crumbs" >"$T/cut.crumbs"
cp "$T/run.crumbs" "$T/damaged.crumbs"
# A byte in the middle of the file: inside a chunk's compressed body.
printf '\377' | dd of="$T/damaged.crumbs" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null

# same NAME ARGS...: one thread and four print the same, and end the same.
same() {
	what=$1
	shift
	CRUMBS_THREADS=1 "$CRUMBS" "$@" >"$T/one.out" 2>"$T/one.err"
	one=$?
	CRUMBS_THREADS=4 "$CRUMBS" "$@" >"$T/four.out" 2>"$T/four.err"
	four=$?
	if [ $one = $four ] && cmp -s "$T/one.out" "$T/four.out" &&
		cmp -s "$T/one.err" "$T/four.err" && [ -s "$T/one.out" -o -s "$T/one.err" ]; then
		result 0 "$what (exit $one)"
	else
		result 1 "$what: exit $one and $four"
		diff "$T/one.out" "$T/four.out" | head -5 | sed 's/^/# /'
		diff "$T/one.err" "$T/four.err" | head -5 | sed 's/^/# /'
	fi
}

same "stats, whole" stats "$T/run.crumbs"
same "stats, CSV" stats "$T/run.crumbs" --format csv
same "stats, JSON with every frame's values" stats "$T/run.crumbs" --format json --per-frame
same "stats of frames 1000 to 4500" stats "$T/run.crumbs" --frames 1000:4500 --format csv
same "stats of frames 5990 on" stats "$T/run.crumbs" --frames 5990: --format csv
same "stats of a range past the end" stats "$T/run.crumbs" --frames 7000:8000
same "stats of a file cut short" stats "$T/cut.crumbs" --format csv
same "stats of a file damaged in a middle part" stats "$T/damaged.crumbs" --format csv
same "diff" diff "$T/base.crumbs" "$T/run.crumbs" --format csv
CRUMBS_THREADS=1 "$CRUMBS" plot "$T/run.crumbs" -o "$T/one.svg" &&
	CRUMBS_THREADS=4 "$CRUMBS" plot "$T/run.crumbs" -o "$T/four.svg" &&
	[ -s "$T/one.svg" ] && cmp -s "$T/one.svg" "$T/four.svg"
result $? "plot of the frame times"
[ "$(CRUMBS_THREADS=4 "$CRUMBS" stats "$T/cut.crumbs" --format csv 2>&1 >/dev/null)" != "" ]
result $? "the cut file's damage is told"
exit $bad
