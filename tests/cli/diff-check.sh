#!/bin/sh
# SPDX-License-Identifier: MIT
# crumbs diff on runs made by crumbs-gen: a 10% slower scope of about 1 ms
# over 200 frames with 3% noise regresses and is named; 20 other draws of
# the noise and a 1% change do not; captures of other GPUs are not
# comparable; two single frames are compared by the thresholds alone. The
# CSV and JSON are read back with Python's csv and json modules. By
# pipeline, the scope's dispatches are the pipeline that regressed, and
# no other pipeline does. On the CPU (runs of tests/cli/cpu-run-file.py,
# whose scopes vary by 5%): a 10% slower CPU scope regresses and is named,
# a 30% slower one makes the CPU frame time regress, first among the rows
# with the GPU's; other draws regress nothing, though their unnamed
# threads' ids differ. --counters: the pipeline statistics and vendor
# counters compared in CSV and JSON, against crumbs stats --counters.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/cli/tap.sh
gen="$BUILD/crumbs-gen"
crumbs="$BUILD/crumbs"
SCOPE='Ambient Occlusion'

run() { # NAME NOISE-SEED [crumbs-gen options]: a 200-frame run, 3% noise
	name=$1 seed=$2
	shift 2
	"$gen" -o "$tmp/$name.crumbs" --frames 200 --gpus 1 --noise 3 --noise-seed "$seed" "$@"
}

# The row of the scope: "verdict,change_pct" from the CSV.
row_of() {
	python3 - "$1" "$SCOPE" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
hit = [r for r in rows if r["kind"] == "scope" and r["path"].endswith(" / " + sys.argv[2])]
print(",".join((hit[0]["verdict"], hit[0]["change_pct"])) if len(hit) == 1 else "none")
EOF
}

run base 1
run slower 2 --scale "$SCOPE=1.1"
"$crumbs" diff "$tmp/base.crumbs" "$tmp/slower.crumbs" --unicode >"$tmp/table" 2>"$tmp/err"
status=$(
	"$crumbs" diff "$tmp/base.crumbs" "$tmp/slower.crumbs" >/dev/null 2>&1
	echo $?
)
[ "$status" = 1 ]
result $? "a 10% slower '$SCOPE' over 200 frames with 3% noise: exit 1 (got $status)"
grep -q "regressed │ .*$SCOPE" "$tmp/table"
result $? "the table names '$SCOPE' as regressed"
"$crumbs" diff "$tmp/base.crumbs" "$tmp/slower.crumbs" --format csv >"$tmp/csv"
row=$(row_of "$tmp/csv")
case $row in regressed,*) ok=0 ;; *) ok=1 ;; esac
result $ok "its CSV row: regressed, about +10% (got $row)"

# The same the other way round is an improvement, and nothing regressed.
"$crumbs" diff "$tmp/slower.crumbs" "$tmp/base.crumbs" --format csv >"$tmp/csv-back"
status=$?
row=$(row_of "$tmp/csv-back")
case "$status,$row" in 0,improved,*) ok=0 ;; *) ok=1 ;; esac
result $ok "candidate and base swapped: exit 0, '$SCOPE' improved (got $status, $row)"

# Other draws of the same noise: nothing regresses, for every one of 20.
flagged=
for seed in $(seq 2 21); do
	"$gen" -o "$tmp/same.crumbs" --frames 200 --gpus 1 --noise 3 --noise-seed "$seed"
	"$crumbs" diff "$tmp/base.crumbs" "$tmp/same.crumbs" >"$tmp/same.out" 2>&1
	s=$?
	[ "$s" = 0 ] || flagged="$flagged $seed:$s"
done
[ -z "$flagged" ]
result $? "the same run with 20 other noise seeds: exit 0 for each (failed:${flagged:- none})"

run onepct 2 --scale "$SCOPE=1.01"
"$crumbs" diff "$tmp/base.crumbs" "$tmp/onepct.crumbs" --format csv >"$tmp/csv-1"
status=$?
row=$(row_of "$tmp/csv-1")
case "$status,$row" in 0,unchanged,*) ok=0 ;; *) ok=1 ;; esac
result $ok "a 1% slower '$SCOPE': exit 0, unchanged (got $status, $row)"

# Captures of other GPUs or queues.
"$gen" -o "$tmp/two-gpus.crumbs" --frames 10 --gpus 2
"$crumbs" diff "$tmp/base.crumbs" "$tmp/two-gpus.crumbs" >/dev/null 2>"$tmp/err"
status=$?
[ "$status" = 3 ] && grep -q 'not comparable' "$tmp/err"
result $? "a capture of 2 GPUs against one of 1: exit 3, 'not comparable' (got $status)"
"$crumbs" diff "$tmp/base.crumbs" "$tmp/two-gpus.crumbs" --force >/dev/null 2>&1
status=$?
[ "$status" != 3 ] && [ "$status" != 2 ]
result $? "with --force they are compared (exit $status)"

# Two single frames: the thresholds alone.
"$gen" -o "$tmp/one.crumbs" --frames 1 --gpus 1
"$gen" -o "$tmp/one-slower.crumbs" --frames 1 --gpus 1 --scale 'Tonemap*=1.5'
"$crumbs" diff "$tmp/one.crumbs" "$tmp/one-slower.crumbs" --ascii >"$tmp/one.table"
status=$?
[ "$status" = 1 ] && grep -q 'compared by these thresholds alone' "$tmp/one.table" &&
	grep -q '| regressed | .*Tonemap' "$tmp/one.table"
result $? "two single frames, Tonemap 50% slower: regressed by the thresholds alone (exit $status)"

# One frame against 200: too few to tell.
"$crumbs" diff "$tmp/one.crumbs" "$tmp/base.crumbs" --format csv >"$tmp/csv-few"
status=$?
row=$(row_of "$tmp/csv-few")
case "$status,$row" in 0,too_few_frames,*) ok=0 ;; *) ok=1 ;; esac
result $ok "one frame against 200: too few frames, exit 0 (got $status, $row)"

# The formats, read by another reader: the same rows and verdicts.
"$crumbs" diff "$tmp/base.crumbs" "$tmp/slower.crumbs" --format json >"$tmp/json"
python3 - "$tmp/csv" "$tmp/json" >"$tmp/formats" 2>&1 <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
header = "kind,gpu,path,base_frames,candidate_frames,base_ms,candidate_ms,change_ms,change_pct,p,verdict"
assert open(sys.argv[1]).readline().strip() == header, "CSV header"
doc = json.load(open(sys.argv[2]))
assert doc["schema"] == 2, "schema"
# Keys are names without spaces, and every time is in ns.
def keys(x):
    if isinstance(x, dict):
        for k, v in x.items():
            yield k
            yield from keys(v)
    elif isinstance(x, list):
        for v in x:
            yield from keys(v)
import re
for k in keys(doc):
    assert re.fullmatch(r"[a-z0-9_]+", k), "key %r" % k
    assert not k.endswith("_ms"), "key %r not in ns" % k
assert len(doc["rows"]) == len(rows), "row counts differ"
for c, j in zip(rows, doc["rows"]):
    assert c["path"] == j["path"] and c["verdict"] == j["verdict"], (c, j)
    assert abs(float(c["base_ms"]) * 1e6 - j["base_ns"]) < 1, (c, j)
counts = {}
for j in doc["rows"]:
    counts[j["verdict"]] = counts.get(j["verdict"], 0) + 1
for k, v in doc["counts"].items():
    assert counts.get(k, 0) == v, (k, v, counts)
assert doc["rows"][0]["kind"] == "gpu", "frame-time rows first"
print("ok")
EOF
result $? "CSV and JSON parse, agree row by row, and count each verdict ($(tail -1 "$tmp/formats"))"

# By pipeline: the dispatches of the slower scope run one pipeline, which
# regresses; the other pipelines, of the same noise, do not.
run leaves 1 --leaves --pipeline-ids
run leaves-slower 2 --leaves --pipeline-ids --scale "$SCOPE=1.1"
run leaves-same 3 --leaves --pipeline-ids
"$crumbs" diff "$tmp/leaves.crumbs" "$tmp/leaves-slower.crumbs" --by pipeline --format csv \
	>"$tmp/pipelines.csv"
status=$?
"$crumbs" diff "$tmp/leaves.crumbs" "$tmp/leaves-same.crumbs" --by pipeline --format json \
	>"$tmp/pipelines-same.json"
same=$?
python3 - "$tmp/pipelines.csv" "$tmp/pipelines-same.json" >"$tmp/pipelines" 2>&1 <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert not any(r["kind"] == "scope" for r in rows), "scope rows by pipeline"
rows = [r for r in rows if r["kind"] == "pipeline"]
assert len(rows) > 10, f"{len(rows)} pipeline rows"
regressed = [r["path"] for r in rows if r["verdict"] == "regressed"]
assert regressed == ["GPU 0 / Compute 0 / ambient_occlusion 979c"], regressed
same = [r for r in json.load(open(sys.argv[2]))["rows"] if r["kind"] == "pipeline"]
assert len(same) == len(rows) and all(r["verdict"] == "unchanged" for r in same), same
print(regressed[0])
EOF
ok=$?
[ "$status" = 1 ] && [ "$same" = 0 ] && [ "$ok" = 0 ]
result $? "by pipeline: the slower scope's pipeline alone regresses, none in another noise seed ($status, $same: $(tail -1 "$tmp/pipelines"))"

# The CPU's rows.
cpu_run() { # NAME SEED [cpu-run-file.py options]: a 200-frame run
	name=$1 seed=$2
	shift 2
	python3 tests/cli/cpu-run-file.py "$tmp/$name.crumbs" --frames 200 --seed "$seed" "$@"
}
cpu_run cpu-base 1
cpu_run cpu-vis 2 --slow Visibility=1.1
cpu_run cpu-physics 3 --slow Physics=1.3
"$crumbs" diff "$tmp/cpu-base.crumbs" "$tmp/cpu-vis.crumbs" --format csv >"$tmp/cpu-vis.csv"
vis=$?
"$crumbs" diff "$tmp/cpu-base.crumbs" "$tmp/cpu-physics.crumbs" --format json >"$tmp/cpu-physics.json"
physics=$?
"$crumbs" diff "$tmp/cpu-base.crumbs" "$tmp/cpu-physics.crumbs" --cpu --format json \
	>"$tmp/cpu-only.json"
"$crumbs" diff "$tmp/cpu-base.crumbs" "$tmp/cpu-physics.crumbs" --no-cpu --format json \
	>"$tmp/no-cpu.json"
python3 - "$tmp/cpu-vis.csv" "$tmp/cpu-physics.json" "$tmp/cpu-only.json" "$tmp/no-cpu.json" \
	>"$tmp/cpu" 2>&1 <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
regressed = [r["path"] for r in rows if r["verdict"] == "regressed"]
vis = "CPU / Main Thread / Frame / Render / Visibility"
assert vis in regressed, regressed
assert all(p.startswith("CPU / Main Thread") for p in regressed), regressed
assert [r["gpu"] for r in rows if r["path"] == vis] == [""], "gpu of a CPU row"
doc = json.load(open(sys.argv[2]))
frame = [r for r in doc["rows"] if r["kind"] == "cpu"]
assert len(frame) == 1 and frame[0]["path"] == "CPU" and frame[0]["gpu"] is None, frame
assert frame[0]["verdict"] == "regressed", frame
assert {r["kind"] for r in doc["rows"][:2]} == {"gpu", "cpu"}, "frame-time rows first"
unnamed = [r for r in doc["rows"] if r["path"].startswith("CPU / thread #")]
assert len(unnamed) == 2 and all(r["verdict"] == "unchanged" for r in unnamed), unnamed
only = json.load(open(sys.argv[3]))["rows"]
assert only and all(r["gpu"] is None for r in only), "--cpu"
assert not any(r["gpu"] is None for r in json.load(open(sys.argv[4]))["rows"]), "--no-cpu"
print(f"{len(regressed)} regressed with Visibility, CPU frame {frame[0]['change_pct']:+.1f}%")
EOF
ok=$?
[ "$vis" = 1 ] && [ "$physics" = 1 ] && [ "$ok" = 0 ]
result $? "CPU: a 10% slower scope and a 30% slower one regress, the latter the CPU frame time ($vis, $physics: $(tail -1 "$tmp/cpu"))"

# --counters (runs of the renderer, the second doing more compute and
# shading more fragments): every statistic both count, in CSV and JSON,
# each median the one crumbs stats --counters gives for its side, each
# verdict following the rule; a run against itself changes nothing and
# exits 0; standard input as one side gives the same.
ca=tests/cli/captures/renderer-counters-run-a.crumbs
cb=tests/cli/captures/renderer-counters-run-b.crumbs
cv=tests/cli/captures/vendor-counters-run.crumbs
"$crumbs" diff "$ca" "$cb" --counters --format csv >"$tmp/counters.csv" 2>"$tmp/counters.err"
"$crumbs" diff "$ca" "$cb" --counters --format json >"$tmp/counters.json" 2>>"$tmp/counters.err"
"$crumbs" diff - "$cb" --counters --format json <"$ca" >"$tmp/counters-stdin.json" 2>>"$tmp/counters.err"
"$crumbs" stats "$ca" --counters --format json >"$tmp/counters-a.json" 2>>"$tmp/counters.err"
"$crumbs" stats "$cb" --counters --format json >"$tmp/counters-b.json" 2>>"$tmp/counters.err"
"$crumbs" diff "$cv" "$cv" --counters --format json >"$tmp/vendor-self.json" 2>>"$tmp/counters.err"
self=$?
"$crumbs" stats "$cv" --counters --format json >"$tmp/vendor-stats.json" 2>>"$tmp/counters.err"
python3 - "$tmp" >"$tmp/counters" 2>&1 <<'EOF'
import csv, json, os, sys
t = sys.argv[1]
def load(name):
    return json.load(open(os.path.join(t, name)))
lines = list(csv.reader(open(os.path.join(t, "counters.csv"), newline="")))
header = ("kind,gpu,path,base_frames,candidate_frames,base_ms,candidate_ms,change_ms,change_pct,"
          "p,verdict,counter,counter_unit,base_median,candidate_median").split(",")
assert lines[0] == header, lines[0]
assert all(len(l) == len(header) for l in lines), "ragged CSV"
rows = [dict(zip(header, l)) for l in lines[1:] if l[0] in ("counter", "vendor_counter")]
doc = load("counters.json")
assert doc["schema"] == 2 and doc["rows"], "the times are still there"
got = doc["counters"]
assert got and len(got) == len(rows), (len(got), len(rows))
for c, j in zip(rows, got):
    assert (c["path"], c["counter"], c["verdict"]) == (j["path"], j["counter"], j["verdict"]), (c, j)
    assert int(c["base_median"]) == j["base_median"] and int(c["candidate_median"]) == j["candidate_median"]
assert load("counters-stdin.json")["counters"] == got, "standard input as the base"
medians = [{r["path"]: r for r in load(n)["counters"]} for n in ("counters-a.json", "counters-b.json")]
counts = {"same": 0, "more": 0, "less": 0}
for j in got:
    a, b = (m[j["path"]] for m in medians)
    assert j["base_median"] == a["medians"][j["counter"]], (j, a)
    assert j["candidate_median"] == b["medians"][j["counter"]], (j, b)
    assert (j["base_frames"], j["candidate_frames"]) == (a["frames"], b["frames"]), j
    changed = (j["base_median"] != j["candidate_median"] and abs(j["change_pct"]) > 5
               and j["p"] is not None and j["p"] < 0.01)
    want = ("more" if j["candidate_median"] > j["base_median"] else "less") if changed else "same"
    assert j["verdict"] == want, (j, want)
    counts[j["verdict"]] += 1
assert counts == doc["counter_counts"], (counts, doc["counter_counts"])
more = {(j["path"], j["counter"]) for j in got if j["verdict"] == "more"}
assert ("GPU 0 / Graphics 0 / Frame # / Lighting", "cs_invocations") in more, more
assert ("GPU 0 / Graphics 0 / Frame # / Base Pass", "fs_invocations") in more, more
self = load("vendor-self.json")
vendor = [j for j in self["counters"] if j["kind"] == "vendor_counter"]
want = sum(len((r["vendor"] or {}).get("counters", [])) for r in load("vendor-stats.json")["counters"])
assert vendor and len(vendor) == want, (len(vendor), want)
assert all(j["verdict"] == "same" and j["base_median"] == j["candidate_median"]
           for j in self["counters"]), "a run against itself"
print(f"{len(got)} statistics compared, {counts['more']} more, {len(vendor)} vendor counters")
EOF
ok=$?
[ "$ok" = 0 ] && [ "$self" = 0 ] && ! [ -s "$tmp/counters.err" ]
result $? "--counters: CSV and JSON agree, medians are stats', verdicts follow the rule ($(tail -1 "$tmp/counters") $(head -c 300 "$tmp/counters.err"))"

flagged=
for seed in $(seq 4 13); do
	cpu_run cpu-same "$seed"
	"$crumbs" diff "$tmp/cpu-base.crumbs" "$tmp/cpu-same.crumbs" >"$tmp/cpu-same.out" 2>&1
	s=$?
	[ "$s" = 0 ] || flagged="$flagged $seed:$s"
done
[ -z "$flagged" ]
result $? "CPU: the same run drawn with 10 other seeds: exit 0 for each (failed:${flagged:- none})"

exit $bad
