#!/bin/sh
# SPDX-License-Identifier: MIT
# Golden tests of the crumbs command line. Each case is a directory under
# tests/cli/golden holding `cmd` (one shell command line, run from the
# repository root with the built programs first in PATH), and the expected
# `stdout`, `stderr` and `status`. With UPDATE_GOLDEN=1 the expectations are
# rewritten from what the commands print now.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
PATH="$ROOT/$BUILD:$PATH"
export PATH
# The default drawing mode follows the locale; tests fix it.
LC_ALL=C.UTF-8
export LC_ALL
unset LANG LC_CTYPE
# Piped, the tables take every column unless COLUMNS says otherwise.
unset COLUMNS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
bad=0
for dir in tests/cli/golden/*/; do
	name=$(basename "$dir")
	n=$((n + 1))
	(cd "$ROOT" && sh -c "$(cat "$dir/cmd")") >"$tmp/stdout" 2>"$tmp/stderr"
	echo $? >"$tmp/status"
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$tmp/stdout" "$tmp/stderr" "$tmp/status" "$dir"
	fi
	ok=1
	for f in stdout stderr status; do
		if ! cmp -s "$tmp/$f" "$dir/$f"; then
			ok=0
			echo "# $name: $f differs"
			diff -u "$dir/$f" "$tmp/$f" | head -40 | sed 's/^/# /'
		fi
	done
	if [ $ok = 1 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		bad=1
	fi
done
echo "1..$n"
exit $bad
