#!/bin/sh
# How capture/'s files depend on each other, read from the objects with nm
# and from the sources' #include lines: no file calls or includes another
# in a circle; each of the recorder's files calls only the files that
# capture/capture_internal.h lists before it; and only profilegpu.c among them
# uses analyze/ and report/.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/cli/tap.sh

# The objects of capture/'s sources (a stale object of a removed source
# is not one of them).
: >"$tmp/defs"
: >"$tmp/uses"
missing=
for src in capture/*.c; do
	name=$(basename "$src" .c)
	obj="$BUILD/obj/capture/$name.o"
	if [ ! -f "$obj" ]; then
		missing="$missing $name"
		continue
	fi
	nm --defined-only "$obj" | awk -v f="$name" 'NF == 3 && $2 ~ /^[A-TV-Z]$/ { print $3, f }' \
		>>"$tmp/defs"
	nm --undefined-only "$obj" | awk -v f="$name" '{ print $NF, f }' >>"$tmp/uses"
done
[ -z "$missing" ]
result $? "every source of capture/ is built (missing:${missing:- none})"

# FROM TO: FROM uses a symbol that TO defines.
sort -k1,1 "$tmp/defs" >"$tmp/defs.sorted"
sort -k1,1 "$tmp/uses" >"$tmp/uses.sorted"
join "$tmp/uses.sorted" "$tmp/defs.sorted" | awk '$2 != $3 { print $2, $3 }' | sort -u \
	>"$tmp/calls"
[ -s "$tmp/calls" ]
result $? "the files call each other ($(wc -l <"$tmp/calls") pairs)"

tsort "$tmp/calls" >/dev/null 2>"$tmp/loop"
result $? "no file of capture/ calls another in a circle"
sed 's/^/#   /' "$tmp/loop"

# "#include "x"" lines, among capture/'s own files.
for f in capture/*.c capture/*.h; do
	sed -n 's/^#include "\([^"/]*\)".*/\1/p' "$f" | while read -r inc; do
		echo "$(basename "$f") $inc"
	done
done >"$tmp/includes"
[ -s "$tmp/includes" ]
result $? "the files include each other's headers ($(wc -l <"$tmp/includes") lines)"
tsort "$tmp/includes" >/dev/null 2>"$tmp/loop"
result $? "no file of capture/ includes another in a circle"
sed 's/^/#   /' "$tmp/loop"

# The recorder's layers, bottom first: the order of its sections in
# capture_internal.h ("/* common.c: ...").
sed -n 's|^/\* \([a-z_]*\)\.c: .*|\1|p' capture/capture_internal.h >"$tmp/layers"
[ "$(wc -l <"$tmp/layers")" -ge 10 ]
result $? "capture_internal.h lists the recorder's files in order ($(paste -sd' ' "$tmp/layers"))"
awk 'NR == FNR { rank[$1] = FNR; next }
     ($1 in rank) && ($2 in rank) && rank[$2] >= rank[$1] {
	print "#   " $1 ".c calls " $2 ".c, listed after it"; bad = 1 }
     END { exit bad }' "$tmp/layers" "$tmp/calls" >"$tmp/upward"
result $? "each file of the recorder calls only the files listed before it"
cat "$tmp/upward"

grep -l '^#include "\.\./\(report\|analyze\)/' capture/*.c capture/*.h >"$tmp/report-users"
[ "$(cat "$tmp/report-users")" = capture/profilegpu.c ]
result $? "only capture/profilegpu.c uses analyze/ and report/ (used by: $(paste -sd' ' "$tmp/report-users"))"

exit $bad
