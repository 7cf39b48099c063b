# SPDX-License-Identifier: MIT
# Sourced by the live command-line tests: TAP lines and table columns.
# result STATUS DESCRIPTION prints "ok N" or "not ok N" (and sets bad=1).
n=0
bad=0
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; bad=1; fi
}
names() { # the Events column of an ASCII table
	grep '^|' "$1" | awk -F'|' '{ print $(NF - 1) }'
}
