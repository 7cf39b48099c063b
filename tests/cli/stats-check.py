#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# crumbs stats against crumbs report, read independently: on a small
# generated run, every scope's per-frame inclusive time in `crumbs stats
# --format json --per-frame` must be what `crumbs report --frame N` prints
# for it (within the report's 3 decimals), and so must each GPU's frame
# time and each queue's busy, wait and idle. The JSON must parse and carry
# its schema; the CSV must parse with its documented header, one line per
# JSON row, with the same numbers. Then the same by pipeline: each
# pipeline row's per-frame time and calls in `crumbs stats --by pipeline`
# must be the draws and dispatches of the report's tree grouped here by
# the text after " · " in their names, and so must each row of `crumbs
# report --by pipeline`. Then the CPU's rows, on a run of crumbs-gen's
# threads and one of tests/cli/cpu-run-file.py's, with an unnamed thread
# whose id changes: the CPU frame time, each thread's and each CPU scope
# path's per-frame time must be what the report's CPU blocks print, summed
# over the threads of one name (the unnamed ones being "thread #"), a
# number equal to the frame's right below the thread reading '#', and the same
# of a run with task timelines and frames of kind Game, whose frames must
# be the intervals between the marks the report prints; the CSV
# must carry the same rows with an empty gpu field. With --counters, each
# scope's medians of its pipeline statistics and vendor counters, and the
# frames each was counted in, must be what crumbs report --counters gives
# frame by frame (its JSON, its vendor tables), in the JSON, the CSV's
# rows, and from standard input; a capture cut short must fail cleanly in
# every format. Prints TAP lines.
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
          "share_pct,spike_threshold_ms,spikes,longest_spike_run,longest_spike_run_first,"
          "heap,heap_bytes,device_local,high_bytes,high_frame,growth_bytes,"
          "slope_bytes_per_frame,allocations_per_frame").split(",")

n = 0
bad = 0


def json_keys(x):
    """Every key of a parsed JSON document, nested ones too."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield k
            yield from json_keys(v)
    elif isinstance(x, list):
        for v in x:
            yield from json_keys(v)


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


def queue_lines(stdout):
    """The lines of a report's queue blocks, each with its block's (GPU,
    queue) and whether it is the block's title. CPU threads' blocks are
    left out."""
    title = None
    for line in stdout.splitlines():
        m = re.match(r"GPU profile for frame (\d+) \| GPU (\d+) \(.*\) \| (.+)$", line)
        if m:
            title = (int(m.group(2)), m.group(3))
            yield title, line, True
        elif line.startswith("CPU profile for frame "):
            title = None
        elif title is not None:
            yield title, line, False


def report_frame(path, number):
    """Per path of the report's tables of one frame: the inclusive times
    printed (a list: two scopes of one path in a frame are two rows), and
    per GPU its frame time and per queue its busy, wait and idle."""
    p = run(CRUMBS, "report", path, "--frame", str(number), "--ascii", "--no-stats",
            "--no-exclusive", "--no-percent")
    if p.returncode != 0:
        raise RuntimeError(f"crumbs report --frame {number}: {p.stderr}")
    scopes, gpus, queues = {}, {}, {}
    stack = []
    for title, line, first in queue_lines(p.stdout):
        if first:
            stack = []
            continue
        m = re.match(r"GPU frame ([0-9.]+) ms \| busy ([0-9.]+) ms \| wait ([0-9.]+) ms \| idle ([0-9.]+) ms", line)
        if m:
            gpus[title[0]] = float(m.group(1))
            queues[title] = tuple(float(m.group(i)) for i in (2, 3, 4))
            continue
        if not line.startswith("|"):
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


def report_leaves(path, number):
    """Per queue of one frame's report, its draws and dispatches grouped
    by the pipeline their names end in (after " · "): [exclusive ms,
    calls] per (GPU, queue, pipeline)."""
    p = run(CRUMBS, "report", path, "--frame", str(number), "--ascii", "--no-stats",
            "--no-inclusive", "--no-percent")
    if p.returncode != 0:
        raise RuntimeError(f"crumbs report --frame {number}: {p.stderr}")
    groups = {}
    for title, line, first in queue_lines(p.stdout):
        if first or not line.startswith("|"):
            continue
        cells = line.split("|")[1:-1]
        if len(cells) != 2 or not cells[0].strip().endswith(" ms"):
            continue
        name = cells[1].strip()
        if not re.match(r"(Draw|Dispatch|TraceRays)", name):
            continue
        pipeline = name.split(" \u00b7 ", 1)[1] if " \u00b7 " in name else "(no pipeline named)"
        g = groups.setdefault((title[0], title[1], pipeline), [0.0, 0])
        g[0] += float(cells[0].strip()[:-3])
        g[1] += 1
    return groups


def report_by_pipeline(path, number):
    """The rows of `crumbs report --by pipeline` of one frame: [ms, calls]
    per (GPU, queue, pipeline)."""
    p = run(CRUMBS, "report", path, "--frame", str(number), "--by", "pipeline", "--ascii",
            "--no-stats", "--no-percent")
    if p.returncode != 0:
        raise RuntimeError(f"crumbs report --by pipeline --frame {number}: {p.stderr}")
    rows = {}
    for title, line, first in queue_lines(p.stdout):
        cells = line.split("|")[1:-1] if line.startswith("|") and not first else []
        if len(cells) != 3 or not cells[1].strip().endswith(" ms"):
            continue
        rows[(title[0], title[1], cells[2].strip())] = [float(cells[1].strip()[:-3]),
                                                        int(cells[0])]
    return rows


def report_cpu(path, number):
    """Per path of the CPU blocks of one frame's report ("CPU / Main
    Thread / Frame # / Game"; the thread's row "CPU / Main Thread"; a
    timeline's "Tasks / Jobs / Cull / Waiting"), the inclusive times
    printed, summed over threads of one name; the frame's CPU frame time;
    and per timeline the marks of its frames, in ms into the frame."""
    p = run(CRUMBS, "report", path, "--frame", str(number), "--ascii", "--no-stats",
            "--no-exclusive", "--no-percent")
    if p.returncode != 0:
        raise RuntimeError(f"crumbs report --frame {number}: {p.stderr}")
    times, cpu_ms, thread, stack, marks = {}, None, None, [], {}
    for line in p.stdout.splitlines():
        m = re.match(r"frames of kind '(.*)' began at (.*) into the frame$", line)
        if m:
            marks[m.group(1)] = [float(t.strip()[1:-3]) for t in m.group(2).split(",")]
            continue
        m = re.match(r"CPU profile for frame \d+ \| thread '(.*)' \(tid (\d+)\)$", line)
        t = re.match(r"CPU profile for frame \d+ \| tasks on timeline '(.*)'$", line)
        if m or t:
            thread = ("Tasks", t.group(1)) if t else ("CPU", m.group(1))
            if m and thread[1] == f"thread {m.group(2)}":
                thread = ("CPU", "thread #")
            stack = []
            continue
        if line.startswith("GPU profile for frame "):
            thread = None
            continue
        if thread is None:
            continue
        m = re.match(r"CPU frame ([0-9.]+) ms", line)
        if m:
            cpu_ms = float(m.group(1))
            continue
        if not line.startswith("|"):
            continue
        cells = line.split("|")[1:-1]
        if len(cells) != 2 or not cells[0].strip().endswith(" ms"):
            continue
        raw = cells[1][1:].rstrip()
        level = (len(raw) - len(raw.lstrip(" "))) // 3
        name = re.sub(r"( \[(open|earlier)\])+$", "", raw.strip())
        if level == 1:
            name = re.sub(r"(?<![0-9])%d(?![0-9])" % number, "#", name)
        stack = stack[: level - 1] + [name] if level else []
        key = " / ".join(list(thread) + stack)
        times[key] = times.get(key, 0.0) + float(cells[0].strip()[:-3])
    return times, cpu_ms, marks


def check_cpu(tmp):
    runs = [("crumbs-gen --cpu-threads 4", os.path.join(tmp, "cpu-gen.crumbs"),
             [GEN, "--frames", "5", "--gpus", "1", "--cpu-threads", "4"]),
            ("cpu-run-file.py", os.path.join(tmp, "cpu-file.crumbs"),
             [sys.executable, os.path.join(ROOT, "tests", "cli", "cpu-run-file.py"), None,
              "--frames", "5"]),
            # Its first frames without threads: read flat, then again with trees.
            ("cpu-run-file.py --cpu-from 2", os.path.join(tmp, "cpu-later.crumbs"),
             [sys.executable, os.path.join(ROOT, "tests", "cli", "cpu-run-file.py"), None,
              "--frames", "6", "--cpu-from", "2"]),
            ("crumbs-gen --tasks 6 --timeline-frames", os.path.join(tmp, "cpu-tasks.crumbs"),
             [GEN, "--frames", "5", "--gpus", "1", "--cpu-threads", "2", "--tasks", "6",
              "--timeline-frames", "--unbalanced"])]
    for what, path, argv in runs:
        argv = [a if a is not None else path for a in argv]
        if argv[0] == GEN:
            argv[1:1] = ["-o", path]
        g = run(*argv)
        result(g.returncode == 0, f"{what} writes a run with CPU threads", g.stderr)
        j = run(CRUMBS, "stats", path, "--format", "json", "--per-frame")
        try:
            doc = json.loads(j.stdout)
        except ValueError as e:
            result(False, f"the JSON of {what}'s run parses", f"{j.stderr}\n{e}")
            continue
        rows = doc["rows"]
        cpu_kinds = ("cpu", "thread", "cpu_scope", "timeline", "task", "state")
        by_path = {r["path"]: r for r in rows if r["kind"] in cpu_kinds}
        mismatches, seen = [], 0
        first_cpu = next((i for i, r in enumerate(rows) if r["kind"] in cpu_kinds), len(rows))
        if what.startswith("crumbs-gen --tasks") and not {"timeline", "task", "state"} <= \
           {r["kind"] for r in rows}:
            mismatches.append("no timeline, task or state rows")
        if any(r["kind"] not in cpu_kinds for r in rows[first_cpu:]):
            mismatches.append("a GPU row after the CPU's")
        for r in rows[first_cpu:]:
            if r["gpu"] is not None or r["queue"] is not None:
                mismatches.append(f"{r['path']}: gpu {r['gpu']}, queue {r['queue']}")
        # Marks in ms from the run's start, as if each frame began where the
        # one before ended: an interval across frames may be longer by the
        # gap between them, which the report does not print.
        start, all_marks = 0.0, {}
        longest = {}  # per timeline, per frame index: the longest frame ended in it
        for i, number in enumerate(doc["frames"]["numbers"]):
            times, cpu_ms, marks = report_cpu(path, number)
            for tl, offsets in marks.items():
                seen_marks = all_marks.setdefault(tl, [])
                for k, o in enumerate(offsets):
                    if seen_marks:
                        iv = start + o - seen_marks[-1]
                        low, high = longest.setdefault(tl, {}).get(i, (0.0, 0.0))
                        # One from the frame before may be longer by the gap.
                        longest[tl][i] = (max(low, iv), max(high, iv + (0.1 if k == 0 else 0)))
                    seen_marks.append(start + o)
            start += cpu_ms or 0.0
            v = by_path["CPU"]["values_ns"][i] if "CPU" in by_path else None
            # A frame without threads has no CPU block to say it.
            if cpu_ms is not None and (v is None or abs(v / 1e6 - cpu_ms) > 0.0005 + 1e-9):
                mismatches.append(f"frame {number}: CPU frame {v} ns, report {cpu_ms}")
            for key, ms in times.items():
                r = by_path.get(key)
                if r is None:
                    mismatches.append(f"frame {number}: '{key}' has no row")
                    continue
                v = r["values_ns"][i]
                if v is None or abs(v / 1e6 - ms) > 0.002:
                    mismatches.append(f"frame {number}: '{key}' {v} ns, report {ms}")
                seen += 1
            for key, r in by_path.items():
                if r["kind"] != "cpu" and r["values_ns"][i] is not None and key not in times:
                    mismatches.append(f"frame {number}: '{key}' not in the report")
        for tl, per_frame in longest.items():
            r = by_path.get(f"CPU ({tl})")
            if r is None or r["frames"] != len(all_marks[tl]) - 1:
                mismatches.append(f"CPU ({tl}): {r and r['frames']} frames, "
                                  f"{len(all_marks[tl])} marks")
                continue
            for i, v in enumerate(r["values_ns"]):
                low, high = per_frame.get(i, (None, None))
                if (v is None) != (low is None) or \
                   (v is not None and not low - 0.003 <= v / 1e6 <= high + 0.003):
                    mismatches.append(f"CPU ({tl}) in frame index {i}: {v} ns, the marks "
                                      f"{low} to {high} ms")
            seen += 1
        result(seen >= 4 * 10 and not mismatches,
               f"{what}: the CPU frame time and {seen} thread and scope times equal the report's",
               "\n".join(mismatches) or f"only {seen} compared")

        c = run(CRUMBS, "stats", path, "--format", "csv")
        lines = list(csv.reader(io.StringIO(c.stdout)))
        diffs = []
        if not lines or lines[0] != HEADER or len(lines) - 1 != len(rows):
            diffs.append(f"{len(lines) - 1} lines, {len(rows)} rows")
        for l, r in zip(lines[1:], rows):
            f = dict(zip(HEADER, l))
            if (f["kind"], f["path"]) != (r["kind"], r["path"]):
                diffs.append(f"{f['kind']} {f['path']} against {r['kind']} {r['path']}")
            elif r["kind"] in cpu_kinds and f["gpu"] != "":
                diffs.append(f"{r['path']}: gpu '{f['gpu']}'")
            elif abs(float(f["median_ms"]) * 1e6 - r["time"]["median_ns"]) > 0.5:
                diffs.append(f"{r['path']}: median {f['median_ms']} ms")
            elif r["kind"] == "cpu" and int(f["spikes"]) != r["spikes"]["count"]:
                diffs.append(f"{r['path']}: {f['spikes']} spikes")
        result(c.returncode == 0 and not diffs, f"{what}: the CSV has the JSON's CPU rows",
               c.stderr + "\n".join(diffs))
        g = run(CRUMBS, "stats", path, "--format", "json", "--no-cpu")
        result(g.returncode == 0 and all(r["kind"] not in cpu_kinds for r in json.loads(g.stdout)["rows"]),
               f"{what}: --no-cpu leaves the CPU's rows out", g.stderr)


def check_pipelines(tmp):
    path = os.path.join(tmp, "leaves.crumbs")
    g = run(GEN, "-o", path, "--frames", "5", "--leaves", "--pipeline-ids")
    result(g.returncode == 0, "crumbs-gen writes a run of 5 frames with pipelines", g.stderr)
    j = run(CRUMBS, "stats", path, "--by", "pipeline", "--format", "json", "--per-frame")
    try:
        doc = json.loads(j.stdout)
    except ValueError as e:
        result(False, "the JSON of stats --by pipeline parses", f"{j.stderr}\n{e}")
        return
    rows = doc["rows"]
    kinds = {r["kind"] for r in rows}
    result(j.returncode == 0 and "pipeline" in kinds and "scope" not in kinds,
           "stats --by pipeline has pipeline rows in place of scopes", str(sorted(kinds)))
    pipes = {(r["gpu"], r["queue"], r["name"]): r for r in rows if r["kind"] == "pipeline"}
    mismatches = []
    calls = {}
    for i, number in enumerate(doc["frames"]["numbers"]):
        groups = report_leaves(path, number)
        table = report_by_pipeline(path, number)
        for key, (ms, count) in groups.items():
            r = pipes.get(key)
            if r is None:
                mismatches.append(f"frame {number}: {key} has no row")
                continue
            v = r["values_ns"][i]
            if v is None or abs(v / 1e6 - ms) > 0.0005 * count + 1e-9:
                mismatches.append(f"frame {number}: {key} {v} ns, report {ms} ms")
            if r["exclusive_values_ns"][i] != v:
                mismatches.append(f"frame {number}: {key} exclusive differs from time")
            calls[key] = calls.get(key, 0) + count
            t = table.get(key)
            if t is None or abs(t[0] - ms) > 0.0005 * count + 1e-9 or t[1] != count:
                mismatches.append(f"frame {number}: {key} report --by pipeline {t}, tree {ms} ms {count}")
        if len(table) != len(groups):
            mismatches.append(f"frame {number}: report --by pipeline has {len(table)} rows, "
                              f"the tree {len(groups)} pipelines")
        for key, r in pipes.items():
            if r["values_ns"][i] is not None and key not in groups:
                mismatches.append(f"frame {number}: {key} not in the report")
    for key, r in pipes.items():
        if r["calls"] != calls.get(key):
            mismatches.append(f"{key}: {r['calls']} calls, the report {calls.get(key)}")
        if r["path"] != f"GPU {key[0]} / {key[1]} / {key[2]}":
            mismatches.append(f"{key}: path {r['path']}")
    result(len(pipes) > 10 and not mismatches,
           f"per-frame times and calls of {len(pipes)} pipelines equal the report's draws and "
           "dispatches grouped by pipeline", "\n".join(mismatches) or f"only {len(pipes)} pipelines")

    c = run(CRUMBS, "stats", path, "--by", "pipeline", "--format", "csv")
    lines = list(csv.reader(io.StringIO(c.stdout)))
    body = lines[1:]
    diffs = []
    if not lines or lines[0] != HEADER or len(body) != len(rows):
        diffs.append(f"{len(body)} lines, {len(rows)} rows")
    for l, r in zip(body, rows):
        f = dict(zip(HEADER, l))
        if (f["kind"], f["path"]) != (r["kind"], r["path"]):
            diffs.append(f"{f['kind']} {f['path']} against {r['kind']} {r['path']}")
            continue
        if r["kind"] != "pipeline":
            continue
        if abs(float(f["calls_per_frame"]) - r["calls_per_frame"]) > 1e-6 or \
           abs(float(f["share_pct"]) - r["share_pct"]) > 1e-6 or \
           abs(float(f["excl_median_ms"]) * 1e6 - r["exclusive"]["median_ns"]) > 0.5 or \
           abs(float(f["median_ms"]) * 1e6 - r["time"]["median_ns"]) > 0.5:
            diffs.append(f"{r['path']}: CSV {l}")
    result(c.returncode == 0 and not diffs, "the CSV by pipeline has the JSON's rows and numbers",
           c.stderr + "\n".join(diffs))


CAPTURES = os.path.join(ROOT, "tests", "cli", "captures")
COUNTER_KEYS = ["ia_vertices", "ia_primitives", "vs_invocations", "gs_invocations",
                "gs_primitives", "clipping_invocations", "clipping_primitives",
                "fs_invocations", "tcs_patches", "tes_invocations", "cs_invocations"]
COUNTER_COLUMNS = ["counter", "counter_unit", "counter_median", "counter_unknown_frames"]


def upper_median(values):
    """The median as crumbs takes it: by nearest rank, the upper middle."""
    return sorted(values)[len(values) // 2]


def stats_path(path, frame):
    """A report's scope path as crumbs stats names it: the name right
    below the queue with the frame's number as '#'."""
    parts = path.split(" / ")
    if len(parts) > 2:
        parts[2] = re.sub(r"(?<![0-9])%d(?![0-9])" % frame, "#", parts[2])
    return " / ".join(parts)


def report_statistics(path):
    """{(stats path, key): [value of each frame that counted it]} from
    crumbs report --frame all --format json --counters, scopes of one path
    in a frame summed, a frame where one was unknown left out."""
    j = run(CRUMBS, "report", path, "--frame", "all", "--format", "json", "--counters")
    per_frame = {}
    for r in json.loads(j.stdout)["rows"]:
        # A queue's own row is its busy row, which holds all its work.
        if r["kind"] not in ("scope", "busy") or not r.get("counters"):
            continue
        key = (stats_path(r["path"], r["frame"]), r["frame"])
        c = r["counters"]
        got = per_frame.setdefault(key, {})
        if c["unknown"] or got.get("unknown"):
            per_frame[key] = {"unknown": True}
            continue
        for k in COUNTER_KEYS:
            if c[k] is not None:
                got[k] = got.get(k, 0) + c[k]
    out = {}
    for (p, _), got in per_frame.items():
        if got.get("unknown"):
            continue
        for k, v in got.items():
            out.setdefault((p, k), []).append(v)
    return out


def report_vendor(path):
    """{(stats path, counter name): [value of each frame that took it]}
    from the vendor tables of crumbs report --counters --frame all."""
    t = run(CRUMBS, "report", path, "--counters", "--frame", "all", "--no-stats",
            "--no-percent", "--no-exclusive", "--width", "250", "--ascii")
    out = {}
    lines = t.stdout.splitlines()
    frame = None
    i = 0
    while i < len(lines):
        m = re.match(r"GPU profile for frame (\d+) \| GPU (\d+) \(.*\) \| (.+)$", lines[i])
        if m:
            frame, gpu, queue = int(m.group(1)), m.group(2), m.group(3)
        if lines[i].startswith("Vendor counters of set") and frame is not None:
            heads = [h.strip() for h in lines[i + 2].strip("|").split("|")][:-1]
            # "Name (unit)" as the head says it; crumbs stats keys the name.
            names = [re.sub(r" \([a-z ]+\)$", "", h) for h in heads]
            stack = []
            i += 4
            while lines[i].startswith("|"):
                cells = lines[i].strip("|").split("|")
                name_cell = cells[-1].rstrip()
                depth = (len(name_cell) - len(name_cell.lstrip())) // 3
                stack = stack[:depth] + [name_cell.strip()]
                # Depth 0 is the queue's own row.
                if depth >= 0:
                    p = stats_path(" / ".join([f"GPU {gpu}"] + stack), frame)
                    for name, cell in zip(names, cells[:-1]):
                        if cell.strip() not in ("-", "?"):
                            out.setdefault((p, name), []).append(float(cell))
                i += 1
        i += 1
    return out


def check_counters(tmp):
    """--counters in JSON and CSV against crumbs report's counters frame by
    frame, from a file, standard input and a pipe."""
    for name in ("renderer-counters-run-a.crumbs", "vendor-counters-run.crumbs"):
        path = os.path.join(CAPTURES, name)
        j = run(CRUMBS, "stats", path, "--counters", "--format", "json")
        try:
            doc = json.loads(j.stdout)
        except ValueError as e:
            result(False, f"{name}: stats --counters --format json parses", f"{j.stderr}\n{e}")
            continue
        counters = doc.get("counters", [])
        result(j.returncode == 0 and doc.get("schema") == 1 and counters and
               doc.get("counters_left_out") == 0 and "rows" in doc,
               f"{name}: stats --counters --format json is one document with a counters array",
               j.stderr + str(doc.get("counters_left_out")))
        bad_keys = sorted({k for k in json_keys(doc) if not re.fullmatch(r"[a-z0-9_]+", k)})
        result(not bad_keys, f"{name}: the counters' keys have no spaces", str(bad_keys))

        expected = report_statistics(path)
        diffs = []
        seen = set()
        for c in counters:
            for k in COUNTER_KEYS:
                values = expected.get((c["path"], k))
                got = c["medians"][k]
                if values is None:
                    if got is not None:
                        diffs.append(f"{c['path']} {k}: {got}, the report has none")
                    continue
                seen.add((c["path"], k))
                if got != upper_median(values) or c["frames"] != len(values):
                    diffs.append(f"{c['path']} {k}: {got} over {c['frames']} frames, "
                                 f"the report's {values}")
        missing = sorted(set(expected) - seen)
        result(seen and not diffs and not missing,
               f"{name}: each scope's statistics' medians and frames are the report's "
               f"({len(seen)} compared)", "\n".join(diffs + [str(m) for m in missing]))

        vendor = report_vendor(path)
        diffs = []
        seen = set()
        for c in counters:
            for v in (c["vendor"] or {}).get("counters", []):
                values = vendor.get((c["path"], v["name"]))
                seen.add((c["path"], v["name"]))
                if values is None or abs(float(v["median"]) - upper_median(values)) > 1e-9 \
                        or v["frames"] != len(values):
                    diffs.append(f"{c['path']} {v['name']}: {v['median']} over {v['frames']} "
                                 f"frames, the report's {values}")
        missing = sorted(set(vendor) - seen)
        result(not diffs and not missing and (seen or not vendor),
               f"{name}: each scope's vendor counters' medians and frames are the report's "
               f"({len(seen)} compared)", "\n".join(diffs + [str(m) for m in missing]))

        c = run(CRUMBS, "stats", path, "--counters", "--format", "csv")
        lines = list(csv.reader(io.StringIO(c.stdout)))
        header = HEADER + COUNTER_COLUMNS
        result(c.returncode == 0 and lines and lines[0] == header,
               f"{name}: the CSV with --counters has the documented header",
               c.stderr + (",".join(lines[0]) if lines else "(nothing)"))
        body = [dict(zip(header, l)) for l in lines[1:]]
        result(all(len(l) == len(header) for l in lines[1:]),
               f"{name}: every CSV line has every field", str({len(l) for l in lines}))
        from_json = set()
        for r in counters:
            for k in COUNTER_KEYS:
                if r["medians"][k] is not None:
                    from_json.add(("counter", r["path"], k, str(r["medians"][k]), str(r["frames"])))
            for v in (r["vendor"] or {}).get("counters", []):
                from_json.add(("vendor_counter", r["path"], v["name"], str(v["median"]),
                               str(v["frames"])))
        from_csv = set()
        for f in body:
            if f["kind"] in ("counter", "vendor_counter"):
                # json.loads gives the median as JSON's number reads.
                median = str(json.loads(f["counter_median"]))
                from_csv.add((f["kind"], f["path"], f["counter"], median, f["frames"]))
        result(from_csv == from_json and from_csv,
               f"{name}: the CSV's counter rows are the JSON's ({len(from_csv)})",
               str(sorted(from_csv ^ from_json))[:2000])

        # Standard input: redirected (read in place twice) and piped
        # (read once into memory), the same document but its name.
        with open(path, "rb") as f:
            redirected = subprocess.run([CRUMBS, "stats", "-", "--counters", "--format", "json"],
                                        stdin=f, capture_output=True, text=True)
        piped = subprocess.run(["sh", "-c", 'cat "$1" | "$2" stats - --counters --format json',
                                "sh", path, CRUMBS], capture_output=True, text=True)
        same = True
        for p in (redirected, piped):
            try:
                d = json.loads(p.stdout)
                same = same and p.returncode == 0 and d["counters"] == counters
            except ValueError:
                same = False
        result(same, f"{name}: from standard input, redirected and piped, the same counters",
               redirected.stderr + piped.stderr)

    # A capture cut short: what the frames before the cut counted, a
    # message, status 1, and a document that parses.
    path = os.path.join(CAPTURES, "renderer-counters-run-a.crumbs")
    data = open(path, "rb").read()
    cut = os.path.join(tmp, "cut.crumbs")
    ok = True
    why = ""
    for size in range(len(data) // 3, len(data), max(1, len(data) // 7)):
        with open(cut, "wb") as f:
            f.write(data[:size])
        for fmt in ("json", "csv", "markdown", "table"):
            p = run(CRUMBS, "stats", cut, "--counters", "--format", fmt)
            d = run(CRUMBS, "diff", cut, path, "--counters", "--format", fmt)
            for what, q, status in (("stats", p, (1,)), ("diff", d, (2,))):
                if q.returncode not in status or "cannot read" not in q.stderr:
                    ok = False
                    why += f"{what} cut at {size} --format {fmt}: {q.returncode} {q.stderr[:200]}\n"
            if fmt == "json" and p.stdout:
                try:
                    json.loads(p.stdout)
                except ValueError as e:
                    ok = False
                    why += f"cut at {size}: {e}\n"
    result(ok, "a capture cut short: --counters in every format fails cleanly", why)


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
        bad_keys = sorted({k for k in json_keys(doc)
                           if not re.fullmatch(r"[a-z0-9_]+", k) or k.endswith("_ms")})
        result(not bad_keys, "the JSON's keys have no spaces and name times in ns",
               str(bad_keys))
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
        check_pipelines(tmp)
        check_cpu(tmp)
        check_counters(tmp)
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


main()
print(f"1..{n}")
sys.exit(bad)
