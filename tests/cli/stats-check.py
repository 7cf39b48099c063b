#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# crumbs stats against crumbs report, read independently: on a small
# generated run, every scope's per-frame inclusive time in `crumbs stats
# --format json --per-frame` must be what `crumbs report --frame N` prints
# for it (within the report's 3 decimals), and so must each GPU's frame
# time and each queue's busy, wait and idle. The JSON must parse and carry
# its schema; the CSV must parse with its documented header, one line per
# JSON row, with the same numbers. Prints TAP lines.
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CRUMBS = os.path.join(ROOT, BUILD, "crumbs")
GEN = os.path.join(ROOT, BUILD, "crumbs-gen")
HEADER = ("kind,gpu,queue,path,depth,frames,calls_per_frame,mean_ms,median_ms,p90_ms,"
          "p95_ms,p99_ms,min_ms,max_ms,max_frame,stddev_ms,excl_mean_ms,excl_median_ms,"
          "excl_p90_ms,excl_p95_ms,excl_p99_ms,excl_min_ms,excl_max_ms,excl_stddev_ms,"
          "share_pct,spike_threshold_ms,spikes,longest_spike_run,longest_spike_run_first").split(",")

n = 0
bad = 0


def result(ok, what, why=""):
    global n, bad
    n += 1
    if ok:
        print(f"ok {n} - {what}")
    else:
        bad = 1
        print(f"not ok {n} - {what}")
        for line in why.splitlines()[:20]:
            print(f"# {line}")


def run(*args):
    env = dict(os.environ, LC_ALL="C.UTF-8")
    return subprocess.run(args, capture_output=True, text=True, env=env)


def report_frame(path, number):
    """Per path of the report's tables of one frame: the inclusive times
    printed (a list: two scopes of one path in a frame are two rows), and
    per GPU its frame time and per queue its busy, wait and idle."""
    p = run(CRUMBS, "report", path, "--frame", str(number), "--ascii", "--no-stats",
            "--no-exclusive", "--no-percent")
    if p.returncode != 0:
        raise RuntimeError(f"crumbs report --frame {number}: {p.stderr}")
    scopes, gpus, queues = {}, {}, {}
    title = None
    stack = []
    for line in p.stdout.splitlines():
        m = re.match(r"GPU profile for frame (\d+) \| GPU (\d+) \(.*\) \| (.+)$", line)
        if m:
            title = (int(m.group(2)), m.group(3))
            stack = []
            continue
        m = re.match(r"GPU frame ([0-9.]+) ms \| busy ([0-9.]+) ms \| wait ([0-9.]+) ms \| idle ([0-9.]+) ms", line)
        if m and title:
            gpus[title[0]] = float(m.group(1))
            queues[title] = tuple(float(m.group(i)) for i in (2, 3, 4))
            continue
        if not line.startswith("|") or title is None:
            continue
        cells = line.split("|")[1:-1]
        if len(cells) != 2 or cells[1].strip() in ("Events", ""):
            continue
        time_text = cells[0].strip()
        if not time_text.endswith(" ms"):
            continue
        raw = cells[1][1:].rstrip()
        level = (len(raw) - len(raw.lstrip(" "))) // 3
        name = raw.strip()
        if level == 0:
            stack = []
            continue  # the queue's root: its busy time
        if level == 1:
            # Right below the queue, the frame's number reads '#'.
            name = re.sub(r"(?<![0-9])%d(?![0-9])" % number, "#", name)
        stack = stack[: level - 1] + [name]
        key = " / ".join([f"GPU {title[0]}", title[1]] + stack)
        scopes.setdefault(key, []).append(float(time_text[:-3]))
    return scopes, gpus, queues


def main():
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "run.crumbs")
    try:
        g = run(GEN, "-o", path, "--frames", "5")
        result(g.returncode == 0, "crumbs-gen writes a run of 5 frames", g.stderr)

        j = run(CRUMBS, "stats", path, "--format", "json", "--per-frame")
        try:
            doc = json.loads(j.stdout)
            parsed = j.returncode == 0
        except ValueError as e:
            doc, parsed = None, False
            j.stderr += f"\n{e}"
        result(parsed, "the JSON parses", j.stderr)
        if not doc:
            return
        result(doc.get("schema") == 1, "the JSON says its schema, 1", str(doc.get("schema")))
        numbers = doc["frames"].get("numbers", [])
        result(numbers == [0, 1, 2, 3, 4], "the JSON lists the 5 frames", str(numbers))
        rows = doc["rows"]
        by_key = {(r["kind"], r["path"]): r for r in rows}

        # Every frame: the report's numbers, read from its tables.
        mismatches = []
        seen = 0
        for i, number in enumerate(numbers):
            scopes, gpus, queues = report_frame(path, number)
            for key, times in scopes.items():
                r = by_key.get(("scope", key))
                if r is None:
                    mismatches.append(f"frame {number}: '{key}' has no row")
                    continue
                v = r["values_ns"][i]
                # Each printed time is rounded to the microsecond.
                if v is None or abs(v / 1e6 - sum(times)) > 0.0005 * len(times) + 1e-9:
                    mismatches.append(f"frame {number}: '{key}' {v} ns, report {times}")
                seen += 1
            for r in rows:
                if r["kind"] == "scope" and r["values_ns"][i] is not None and r["path"] not in scopes:
                    mismatches.append(f"frame {number}: '{r['path']}' not in the report")
            for gpu, ms in gpus.items():
                v = by_key[("gpu", f"GPU {gpu}")]["values_ns"][i]
                if abs(v / 1e6 - ms) > 0.0005 + 1e-9:
                    mismatches.append(f"frame {number}: GPU {gpu} frame {v} ns, report {ms}")
            for (gpu, queue), times in queues.items():
                for kind, ms in zip(("busy", "wait", "idle"), times):
                    v = by_key[(kind, f"GPU {gpu} / {queue}")]["values_ns"][i]
                    if abs(v / 1e6 - ms) > 0.0005 + 1e-9:
                        mismatches.append(f"frame {number}: GPU {gpu} {queue} {kind} {v} ns, report {ms}")
        result(seen > 5 * 50 and not mismatches,
               f"per-frame times of {seen} scopes, the GPUs and the queues equal crumbs report's",
               "\n".join(mismatches) or f"only {seen} scopes compared")

        c = run(CRUMBS, "stats", path, "--format", "csv")
        lines = list(csv.reader(io.StringIO(c.stdout)))
        result(c.returncode == 0 and lines and lines[0] == HEADER, "the CSV has the documented header",
               c.stderr + (",".join(lines[0]) if lines else "(nothing)"))
        body = lines[1:]
        result(all(len(l) == len(HEADER) for l in body) and len(body) == len(rows),
               "the CSV has one line of every field per JSON row",
               f"{len(body)} lines, {len(rows)} rows")
        diffs = []
        for l, r in zip(body, rows):
            f = dict(zip(HEADER, l))
            if (f["kind"], f["path"]) != (r["kind"] if r["kind"] != "gpu" else "gpu", r["path"]):
                diffs.append(f"{f['kind']} {f['path']} against {r['kind']} {r['path']}")
                continue
            for stat in ("mean", "median", "p95", "max"):
                if abs(float(f[f"{stat}_ms"]) * 1e6 - r["time"][f"{stat}_ns"]) > 0.5:
                    diffs.append(f"{r['path']} {stat}: {f[stat + '_ms']} ms, {r['time'][stat + '_ns']} ns")
            if int(f["frames"]) != r["frames"] or int(f["max_frame"]) != r["time"]["max_frame"]:
                diffs.append(f"{r['path']}: frames or max_frame differ")
        result(not diffs, "the CSV's numbers are the JSON's", "\n".join(diffs))
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


main()
print(f"1..{n}")
sys.exit(bad)
