#!/bin/sh
# SPDX-License-Identifier: MIT
# A program of CPU threads alone (tests/unit/test_tasks.c: a context with
# no Vulkan instance or device, eight threads with scopes and tasks)
# leaves a capture and a run that `crumbs info` and `crumbs report` read:
# its threads and its tasks' timeline, and no GPU.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/cli/tap.sh

CRUMBS_TEST_KEEP="$tmp" "$BUILD/tests/test_tasks" >"$tmp/test.out" 2>&1
result $? "the CPU-only program records a capture and a run"
[ -s "$tmp/cpu-capture.crumbs" ] && [ -s "$tmp/cpu-run.crumbs" ]
result $? "it leaves both files"
for f in cpu-capture cpu-run; do
	"$BUILD/crumbs" info "$tmp/$f.crumbs" >"$tmp/$f.info" 2>"$tmp/$f.err"
	result $? "crumbs info reads $f.crumbs"
	grep -q '^format       version 1\.5' "$tmp/$f.info" && grep -q '^CPU threads  ' "$tmp/$f.info"
	result $? "$f.crumbs is format 1.5 with CPU threads"
	sed 's/^/#   /' "$tmp/$f.err"
	"$BUILD/crumbs" report --ascii "$tmp/$f.crumbs" >"$tmp/$f.report" 2>"$tmp/$f.err"
	result $? "crumbs report reads $f.crumbs"
	sed 's/^/#   /' "$tmp/$f.err"
	grep -q "thread 'Worker 3'" "$tmp/$f.report" && grep -q "thread 'Main'" "$tmp/$f.report" &&
		grep -q "'Jobs'" "$tmp/$f.report"
	result $? "its report has the workers', the main thread's and the tasks' blocks"
	! grep -q '^GPU profile' "$tmp/$f.report"
	result $? "and no GPU's"
done
echo "1..$n"
exit $bad
