#!/bin/sh
# SPDX-License-Identifier: MIT
# The man pages and shell completions the build makes (cmds/manual.c):
# a page for crumbs and one per command 'crumbs --help' lists, each
# rendered by groff and man without a warning and naming every option
# its command's --help lists; the bash script, sourced, offers every
# option of each command after '-', a choice's values after it, and the
# commands first; the zsh script parses (zsh -n) and names every option.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/cli/tap.sh
crumbs="$BUILD/crumbs"

commands=$("$crumbs" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
[ -n "$commands" ]
result $? "crumbs --help lists the commands ($(echo $commands))"

# The options of a command's --help, long and short, one a line.
options_of() {
	"$crumbs" "$1" --help | sed -n '/^options:/,/^$/p' | grep -oE '^  (-[a-zA-Z], )?--[a-z0-9-]+' |
		tr -d ' ,' | sed 's/^\(-[a-zA-Z]\)--/\1\n--/'
}

for page in crumbs $(for c in $commands; do echo "crumbs-$c"; done); do
	file="$BUILD/man/$page.1"
	if [ ! -f "$file" ]; then
		result 1 "$file is made"
		continue
	fi
	warnings=$(groff -man -ww -z "$file" 2>&1)
	[ -z "$warnings" ]
	result $? "groff -man -ww renders $page.1 without a warning${warnings:+: $warnings}"
	if command -v man >/dev/null 2>&1; then
		warnings=$(MANWIDTH=80 man -l --warnings "$file" 2>&1 >/dev/null)
		[ -z "$warnings" ]
		result $? "man -l --warnings renders $page.1 without a warning${warnings:+: $warnings}"
	fi
done

# Each page names every option of its command, as the page shows it.
for c in $commands; do
	MANWIDTH=200 man -l "$BUILD/man/crumbs-$c.1" 2>/dev/null >"$tmp/$c.txt" ||
		groff -man -Tutf8 "$BUILD/man/crumbs-$c.1" >"$tmp/$c.txt"
	missing=
	for o in $(options_of "$c"); do
		grep -q -- "$o" "$tmp/$c.txt" || missing="$missing $o"
	done
	[ -z "$missing" ]
	result $? "crumbs-$c(1) names every option of 'crumbs $c --help'${missing:+ (missing:$missing)}"
done

# bash: what _crumbs offers for the words given (the last one completed).
complete_bash() {
	bash -c '
		. "$1"
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_crumbs
		printf "%s\n" "${COMPREPLY[@]}"
	' bash "$BUILD/completion/crumbs.bash" "$@"
}

offered=$(complete_bash crumbs '')
missing=
for c in $commands; do
	echo "$offered" | grep -qx "$c" || missing="$missing $c"
done
[ -z "$missing" ]
result $? "bash: the commands are offered first${missing:+ (missing:$missing)}"

for c in $commands; do
	offered=$(complete_bash crumbs "$c" -)
	missing=
	for o in $(options_of "$c"); do
		echo "$offered" | grep -qx -- "$o" || missing="$missing $o"
	done
	[ -z "$missing" ]
	result $? "bash: 'crumbs $c -' offers every option of its --help${missing:+ (missing:$missing)}"
done

offered=$(complete_bash crumbs report --format '' | sort | tr '\n' ' ')
[ "$offered" = "csv json text " ]
result $? "bash: 'crumbs report --format ' offers its values (got $offered)"
offered=$(complete_bash crumbs stats samples/deferred.crumbs -s t | tr '\n' ' ')
[ "$offered" = "time " ]
result $? "bash: 'crumbs stats FILE -s t' offers time (got $offered)"

# zsh: the script parses, and names each command's options.
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$BUILD/completion/_crumbs"
	result $? "zsh -n parses the zsh completion"
	for c in $commands; do
		block=$(sed -n "/^	$c)/,/;;\$/p" "$BUILD/completion/_crumbs")
		missing=
		for o in $(options_of "$c"); do
			case $o in
			--*) echo "$block" | grep -q -- "[{',]$o[]},'[]" || missing="$missing $o" ;;
			-?) echo "$block" | grep -q -- "{$o," || missing="$missing $o" ;;
			esac
		done
		[ -z "$missing" ]
		result $? "zsh: the '$c' case names every option of its --help${missing:+ (missing:$missing)}"
		# Run, with compsys' functions standing in: the specs that
		# _arguments gets for 'crumbs CMD -'.
		zsh -f -c '
			_arguments() { print -rl -- "$@"; }
			_describe() { print -r -- describe; }
			words=(crumbs "$1" -)
			CURRENT=3
			. "$2"
		' zsh "$c" "$BUILD/completion/_crumbs" >"$tmp/zsh-$c" 2>&1
		missing=
		for o in $(options_of "$c"); do
			grep -q -- "^[*]*$o\[" "$tmp/zsh-$c" || missing="$missing $o"
		done
		[ -z "$missing" ]
		result $? "zsh: _crumbs gives _arguments every option of 'crumbs $c'${missing:+ (missing:$missing)}"
	done
else
	result 1 "zsh is installed (tests/install-deps)"
fi
echo "1..$n"
exit $bad
