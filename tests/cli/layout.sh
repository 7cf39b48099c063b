#!/bin/sh
# SPDX-License-Identifier: MIT
# The direction of the code, read from the sources' includes as the
# preprocessor follows them (cc -M) and from the objects' symbols (nm):
# each folder uses only the folders RULES below allows it; util/,
# format/, trigger/, analyze/, report/ and cmds/ reach no Vulkan header,
# directly or through another; a *_internal.h header is included only
# from its own folder. Inside capture/: no file calls or includes another
# in a circle, and each of the recorder's files calls only the files
# capture/capture_internal.h lists before it. Prints TAP lines.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/cli/tap.sh

# Prints the first 30 lines of a list of what is wrong, and how many more.
show() {
	head -n 30 "$1"
	more=$(($(wc -l <"$1") - 30))
	[ "$more" -le 0 ] || echo "#   (and $more more)"
}

# Who may use what: a file's own line, else its folder's. A folder named
# may be used whole; a header named, only through what it declares (the
# functions of include/crumbs.h are defined in capture/). A file may
# always use the files of its own folder.
cat >"$tmp/rules" <<'RULES'
include
util
format                  util include/crumbs_file.h
trigger                 util
analyze                 format util include/crumbs_file.h
report                  analyze format util include/crumbs_file.h
capture                 include format trigger util
capture/profilegpu.c    include format trigger util analyze report
layer                   capture/recorder.h include format trigger util
cmds                    report analyze trigger format util include/crumbs_file.h
samples/renderer.c      include/crumbs.h include/crumbs_file.h
samples/jobs.c          include/crumbs.h include/crumbs_file.h
samples/jobs.h          include/crumbs.h include/crumbs_file.h
samples/gen.c           include/crumbs_file.h
RULES
# The folders that never see Vulkan.
NO_VULKAN="util format trigger analyze report cmds"

# The code: every C source and header outside tests/ and the builds.
find . \( -path ./tests -o -path ./build -o -path "./$BUILD" -o -path ./.git \) -prune -o \
	\( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort >"$tmp/files"
grep '\.c$' "$tmp/files" >"$tmp/sources"

awk 'NR == FNR { rule[$1] = 1; next }
     { top = $1; sub(/\/.*/, "", top) }
     !($1 in rule) && !(top in rule) { print "#   " $1; bad = 1 }
     END { exit bad }' "$tmp/rules" "$tmp/files" >"$tmp/norule"
result $? "every file of the code has a rule ($(wc -l <"$tmp/files") files)"
show "$tmp/norule"

# What each file includes, as the preprocessor finds it: "FILE HEADER",
# the header relative to the root when it is inside the tree, else
# absolute. Headers generated into the build (the shaders, version.h)
# are found there.
CC=${CC:-cc}
PKG_CFLAGS=$(pkg-config --cflags libzstd libpcre2-8 libutf8proc vulkan 2>/dev/null)
: >"$tmp/deps"
: >"$tmp/cc-errors"
while read -r f; do
	# shellcheck disable=SC2086 # the flags are words
	if ! "$CC" -M -MG -std=c11 -D_POSIX_C_SOURCE=200809L $PKG_CFLAGS -I"$BUILD" \
		-I"$BUILD/shaders" -x c "$f" >"$tmp/m" 2>>"$tmp/cc-errors"; then
		echo "$f" >>"$tmp/cc-failed"
		continue
	fi
	# shellcheck disable=SC2046 # one path a word
	realpath -m $(sed 's/\\$//' "$tmp/m" | tr '\n' ' ' | cut -d: -f2-) |
		sed -e "s|^$ROOT/||" -e "s|^|$f |" | awk '$1 != $2' >>"$tmp/deps"
done <"$tmp/files"
[ ! -s "$tmp/cc-failed" ] && [ -s "$tmp/deps" ]
result $? "the preprocessor reads the includes of every file ($(wc -l <"$tmp/deps") lines)"
sed 's/^/#   /' "$tmp/cc-errors" | head -20

# Of them, the code's own headers (not the build's, not the system's).
awk 'NR == FNR { top = $1; sub(/\/.*/, "", top); code[top] = 1; next }
     { top = $2; sub(/\/.*/, "", top) }
     $2 !~ /^\// && (top in code) && $2 ~ /\// { print $1, $2 }' \
	"$tmp/files" "$tmp/deps" >"$tmp/includes"

# FILE TARGET [SYMBOL] lines that RULES does not allow: TARGET a header
# FILE includes, or the source whose object defines a SYMBOL that FILE's
# object uses. $tmp/declared holds "HEADER WORD" for each header of
# include/ and each named in RULES.
for h in include/*.h $(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /\.h$/) print $i }' "$tmp/rules"); do
	[ -f "$h" ] && grep -o '[A-Za-z_][A-Za-z0-9_]*' "$h" | sort -u | sed "s|^|$h |"
done | sort -u >"$tmp/declared"
forbidden() {
	awk 'function top(p) { sub(/\/.*/, "", p); return p }
	     FILENAME == ARGV[1] { rule[$1] = $0; next }
	     FILENAME == ARGV[2] { declared[$1, $2] = 1; declared[top($1), $2] = 1; next }
	     function allowed(who, target, sym,    r, n, e, i) {
		if (top(who) == top(target))
			return 1
		r = (who in rule) ? rule[who] : rule[top(who)]
		n = split(r, e, " ")
		for (i = 2; i <= n; i++) {
			if (sym == "" && (target == e[i] || top(target) == e[i]))
				return 1
			if (sym != "" && (top(target) == e[i] || (e[i], sym) in declared))
				return 1
		}
		return 0
	     }
	     !allowed($1, $2, $3) {
		if (NF == 2) print "#   " $1 " includes " $2
		else print "#   " $1 " uses " $3 " of " $2
		bad = 1
	     }
	     END { exit bad }' "$tmp/rules" "$tmp/declared" "$1"
}

forbidden "$tmp/includes" >"$tmp/bad"
result $? "each file includes only what its folder may ($(wc -l <"$tmp/includes") includes)"
show "$tmp/bad"

awk -v folders=" $NO_VULKAN " '{ top = $1; sub(/\/.*/, "", top) }
     index(folders, " " top " ") && $2 ~ /(^|\/)(vulkan|vk_video)\// && !seen[$1]++ {
	print "#   " $1 " includes " $2; bad = 1 }
     END { exit bad }' "$tmp/deps" >"$tmp/bad"
result $? "no file of $(echo "$NO_VULKAN" | sed 's|\([a-z]*\)|\1/|g; s| |, |g') includes a Vulkan header, directly or not"
show "$tmp/bad"

awk '{ a = $1; b = $2; sub(/\/[^\/]*$/, "", a); sub(/\/[^\/]*$/, "", b) }
     $2 ~ /_internal\.h$/ && a != b { print "#   " $1 " includes " $2; bad = 1 }
     END { exit bad }' "$tmp/includes" >"$tmp/bad"
result $? "a *_internal.h header is included only from its own folder"
show "$tmp/bad"

# The objects' symbols: "SYMBOL SOURCE" for each global one an object
# defines, and for each it uses.
: >"$tmp/defs"
: >"$tmp/uses"
missing=
while read -r src; do
	obj="$BUILD/obj/${src%.c}.o"
	if [ ! -f "$obj" ]; then
		missing="$missing $src"
		continue
	fi
	nm --defined-only "$obj" | awk -v f="$src" 'NF == 3 && $2 ~ /^[A-TV-Z]$/ { print $3, f }' \
		>>"$tmp/defs"
	nm --undefined-only "$obj" | awk -v f="$src" '{ print $NF, f }' >>"$tmp/uses"
done <"$tmp/sources"
[ -z "$missing" ]
result $? "every source of the code is built (missing:${missing:- none})"

# USER DEFINER SYMBOL: USER's object uses a symbol DEFINER's defines.
sort -k1,1 "$tmp/defs" >"$tmp/defs.sorted"
sort -k1,1 "$tmp/uses" >"$tmp/uses.sorted"
join "$tmp/uses.sorted" "$tmp/defs.sorted" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u \
	>"$tmp/symbols"
forbidden "$tmp/symbols" >"$tmp/bad"
result $? "each object uses only the symbols its folder may ($(wc -l <"$tmp/symbols") uses)"
show "$tmp/bad"

# capture/ inside: FROM TO, the file FROM calls a function of TO.
awk '$1 ~ /^capture\// && $2 ~ /^capture\// {
	sub(/^capture\//, "", $1); sub(/\.c$/, "", $1)
	sub(/^capture\//, "", $2); sub(/\.c$/, "", $2); print $1, $2 }' "$tmp/symbols" |
	sort -u >"$tmp/calls"
[ -s "$tmp/calls" ]
result $? "the files of capture/ call each other ($(wc -l <"$tmp/calls") pairs)"

tsort "$tmp/calls" >/dev/null 2>"$tmp/loop"
result $? "no file of capture/ calls another in a circle"
sed 's/^/#   /' "$tmp/loop"

# "#include "x"" lines, among capture/'s own files.
for f in capture/*.c capture/*.h; do
	sed -n 's/^#include "\([^"/]*\)".*/\1/p' "$f" | while read -r inc; do
		echo "$(basename "$f") $inc"
	done
done >"$tmp/capture-includes"
[ -s "$tmp/capture-includes" ]
result $? "the files of capture/ include each other's headers ($(wc -l <"$tmp/capture-includes") lines)"
tsort "$tmp/capture-includes" >/dev/null 2>"$tmp/loop"
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
show "$tmp/upward"

exit $bad
