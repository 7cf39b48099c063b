#!/bin/sh
# SPDX-License-Identifier: MIT
# Damaged captures on the command line: a small capture cut at every byte,
# and with single bits flipped at pseudo-random places (fixed seed), must
# make `crumbs info` and `crumbs report` exit 1 with a clear message. Its
# frames hold video memory (format 1.5) too.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
crumbs="$ROOT/$BUILD/crumbs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
bad=0

"$ROOT/$BUILD/crumbs-gen" -o "$tmp/small.crumbs" --frames 2 --gpus 1 --markers-per-frame 4 \
	--memory 4096 ||
	{ echo "not ok 1 - cannot generate the capture"; exit 1; }
size=$(wc -c <"$tmp/small.crumbs")
pattern="^crumbs: cannot read '[^']*': ((truncated|corrupt) at byte [0-9]+|not a crumbs capture)"

# Runs a command that must fail on damaged input; $1 names the case.
check() {
	what=$1
	shift
	n=$((n + 1))
	"$@" >/dev/null 2>"$tmp/err"
	status=$?
	if [ $status -eq 1 ] && grep -Eq "$pattern" "$tmp/err"; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what: status $status, said: $(head -c 300 "$tmp/err")"
		bad=1
	fi
}

cut=0
while [ $cut -lt "$size" ]; do
	head -c $cut "$tmp/small.crumbs" >"$tmp/cut.crumbs"
	check "info, cut at byte $cut of $size" "$crumbs" info "$tmp/cut.crumbs"
	check "report, cut at byte $cut of $size" "$crumbs" report --frame all "$tmp/cut.crumbs"
	cut=$((cut + 1))
done

# A linear congruential generator keeps the flips the same on every run.
seed=12345
flips=0
while [ $flips -lt 200 ]; do
	seed=$(( (seed * 1103515245 + 12345) % 2147483648 ))
	pos=$(( seed % size ))
	bit=$(( (seed / 65536) % 8 ))
	cp "$tmp/small.crumbs" "$tmp/flip.crumbs"
	byte=$(od -An -tu1 -j "$pos" -N1 "$tmp/flip.crumbs" | tr -d ' ')
	new=$(( byte ^ (1 << bit) ))
	printf "$(printf '\\%03o' "$new")" |
		dd of="$tmp/flip.crumbs" bs=1 seek="$pos" count=1 conv=notrunc 2>/dev/null
	check "info, bit $bit of byte $pos flipped" "$crumbs" info "$tmp/flip.crumbs"
	flips=$((flips + 1))
done
echo "1..$n"
exit $bad
