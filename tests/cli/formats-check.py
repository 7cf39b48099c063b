#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The machine-readable outputs of crumbs report and crumbs info, read by
# Python's json and csv modules and checked against the text crumbs prints
# for people: report's JSON and CSV hold the same rows, and each scope's
# inclusive time, each queue's busy, wait and idle and each GPU's frame
# time are the report table's (to its 0.001 ms); info's JSON and CSV agree
# with its text. The Markdown of stats and diff is a pipe table whose rows
# all have the header's number of cells.
# Keys have no spaces and times are in ns. Standard input ('-') reads the
# same capture; a pipe that never ends can be stopped with ^C (SIGINT).
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CRUMBS = os.path.join(ROOT, BUILD, "crumbs")
SAMPLE = os.path.join(ROOT, "samples", "deferred.crumbs")

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
        for line in str(why).splitlines()[:20]:
            print(f"# {line}")


def run(*args, stdin=None):
    env = dict(os.environ, LC_ALL="C.UTF-8")
    return subprocess.run(args, capture_output=True, text=True, env=env, stdin=stdin)


def json_keys(x):
    if isinstance(x, dict):
        for k, v in x.items():
            yield k
            yield from json_keys(v)
    elif isinstance(x, list):
        for v in x:
            yield from json_keys(v)


def table(path, frame):
    """From the report's text of one frame: per path its inclusive times in
    ms (scopes), and per GPU its frame time, per queue busy, wait, idle."""
    p = run(CRUMBS, "report", path, "--frame", str(frame), "--ascii", "--no-stats",
            "--no-exclusive", "--no-percent")
    scopes, gpus, queues = {}, {}, {}
    title, stack = None, []
    for line in p.stdout.splitlines():
        m = re.match(r"GPU profile for frame \d+ \| GPU (\d+) \(.*\) \| (.+)$", line)
        if m:
            title, stack = (int(m.group(1)), m.group(2)), []
            continue
        if line.startswith("CPU profile"):
            title = None
        if title is None:
            continue
        m = re.match(r"GPU frame ([0-9.]+) ms \| busy ([0-9.]+) ms \| wait ([0-9.]+) ms \| "
                     r"idle ([0-9.]+) ms", line)
        if m:
            gpus[title[0]] = float(m.group(1))
            queues[title] = tuple(float(m.group(i)) for i in (2, 3, 4))
            continue
        cells = line.split("|")[1:-1] if line.startswith("|") else []
        if len(cells) != 2 or not cells[0].strip().endswith(" ms"):
            continue
        raw = cells[1][1:].rstrip()
        level = (len(raw) - len(raw.lstrip(" "))) // 3
        if level == 0:
            stack = []
            continue
        stack = stack[: level - 1] + [raw.strip()]
        key = " / ".join([f"GPU {title[0]}", title[1]] + stack)
        scopes.setdefault(key, []).append(float(cells[0].strip()[:-3]))
    return scopes, gpus, queues


def check_report(path, frame, what):
    j = run(CRUMBS, "report", path, "--format", "json", "--frame", str(frame))
    c = run(CRUMBS, "report", path, "--format", "csv", "--frame", str(frame))
    try:
        doc = json.loads(j.stdout)
        rows = list(csv.DictReader(io.StringIO(c.stdout)))
    except ValueError as e:
        result(False, f"{what}: report's JSON and CSV parse", e)
        return
    result(j.returncode == 0 and c.returncode == 0 and doc.get("schema") == 1,
           f"{what}: report's JSON (schema 1) and CSV parse", j.stderr + c.stderr)
    keys = sorted({k for k in json_keys(doc) if not re.fullmatch(r"[a-z0-9_]+", k)})
    result(not keys, f"{what}: report's JSON keys have no spaces", keys)
    jrows = doc["rows"]
    same = len(jrows) == len(rows) and all(
        a["kind"] == b["kind"] and a["path"] == b["path"]
        and str(a["inclusive_ns"]) == b["inclusive_ns"] for a, b in zip(jrows, rows))
    result(same, f"{what}: JSON and CSV hold the same {len(rows)} rows")

    scopes, gpus, queues = table(path, frame)
    mismatches = []
    seen = {}
    for r in jrows:
        ms = r["inclusive_ns"] / 1e6
        if r["kind"] in ("scope", "event"):
            i = seen.get(r["path"], 0)
            seen[r["path"]] = i + 1
            want = scopes.get(r["path"], [])
            if i >= len(want) or abs(want[i] - ms) > 0.0011:
                mismatches.append((r["path"], ms, want))
        elif r["kind"] == "gpu":
            if abs(gpus.get(r["gpu"], -1) - ms) > 0.0011:
                mismatches.append((r["path"], ms, gpus.get(r["gpu"])))
        elif r["kind"] in ("busy", "wait", "idle"):
            q = queues.get((r["gpu"], r["queue"]))
            want = q[("busy", "wait", "idle").index(r["kind"])] if q else None
            if want is None or abs(want - ms) > 0.0011:
                mismatches.append((r["path"], r["kind"], ms, want))
    result(not mismatches and sum(seen.values()) == sum(len(v) for v in scopes.values()),
           f"{what}: every row's time is the report table's ({sum(seen.values())} scopes)",
           "\n".join(map(str, mismatches[:10])))


def check_info(path):
    t = run(CRUMBS, "info", path)
    j = run(CRUMBS, "info", path, "--format", "json")
    c = run(CRUMBS, "info", path, "--format", "csv")
    try:
        doc = json.loads(j.stdout)
        rows = list(csv.DictReader(io.StringIO(c.stdout)))
    except ValueError as e:
        result(False, "info's JSON and CSV parse", e)
        return
    result(t.returncode == j.returncode == c.returncode == 0, "info's JSON and CSV parse")
    m = re.search(r"frames\s+(\d+), numbered (\d+) to (\d+)", t.stdout)
    result(m and doc["frames"] == {"count": int(m.group(1)), "first": int(m.group(2)),
                                   "last": int(m.group(3))},
           "info's JSON frames are its text's", doc.get("frames"))
    m = re.search(r"size\s+(\d+) bytes, (\d+) uncompressed", t.stdout)
    result(m and doc["file_bytes"] == int(m.group(1)) and
           doc["uncompressed_bytes"] == int(m.group(2)), "info's JSON sizes are its text's")
    ok = True
    for g in doc["gpus"]:
        m = re.search(r"frame time   GPU %d: min ([0-9.]+) ms, median ([0-9.]+) ms, "
                      r"max ([0-9.]+) ms" % g["gpu"], t.stdout)
        ft = g["frame_time"]
        ok = ok and m and all(abs(float(m.group(i + 1)) - ft[k] / 1e6) < 0.0011
                              for i, k in enumerate(("min_ns", "median_ns", "max_ns")))
        times = sorted(int(r["gpu_frame_ns"]) for r in rows if r["gpu"] == str(g["gpu"]))
        ok = ok and times and times[0] == ft["min_ns"] and times[-1] == ft["max_ns"]
    result(ok, "info's frame times: text, JSON and the CSV's rows agree")
    result(len({r["frame"] for r in rows}) == doc["frames"]["count"],
           "info's CSV has a row per frame and GPU")


def pipe_table(text):
    """The rows of the Markdown's pipe table, split into cells (an escaped
    '\\|' inside a cell)."""
    lines = [l for l in text.splitlines() if l.startswith("|")]
    return [re.split(r"(?<!\\)\|", l)[1:-1] for l in lines]


def check_markdown():
    for args in (("stats", SAMPLE), ("diff", SAMPLE, SAMPLE)):
        p = run(CRUMBS, *args, "--format", "markdown")
        rows = pipe_table(p.stdout)
        ok = p.returncode == 0 and len(rows) > 2 and \
            all(len(r) == len(rows[0]) for r in rows) and \
            all(re.fullmatch(r"-+:?|:?-+:?", c.strip()) for c in rows[1])
        result(ok, f"{args[0]} --format markdown: a pipe table of {len(rows) - 2} rows, "
               f"{len(rows[0]) if rows else 0} cells each", p.stdout[:400] + p.stderr)


def check_stdin():
    with open(SAMPLE, "rb") as f:
        data = f.read()
    env = dict(os.environ, LC_ALL="C.UTF-8")
    a = run(CRUMBS, "report", SAMPLE, "--format", "csv", "--frame", "all")
    b = subprocess.run([CRUMBS, "report", "-", "--format", "csv", "--frame", "all"],
                       input=data, capture_output=True, env=env)
    result(a.returncode == 0 and b.stdout.decode() == a.stdout,
           "report - reads a pipe as it reads the file", b.stderr)
    # A pipe that never ends: ^C stops the read.
    p = subprocess.Popen([CRUMBS, "stats", "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.stdin.write(data[:100])
    p.stdin.flush()
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    try:
        code = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        code = None
    p.stdin.close()
    result(code == -signal.SIGINT, "^C stops a read of a pipe that never ends", code)


def main():
    check_report(SAMPLE, 1, "deferred.crumbs")
    check_report(os.path.join(ROOT, "samples", "deferred-leaves.crumbs"), 0,
                 "deferred-leaves.crumbs (events)")
    check_info(SAMPLE)
    check_markdown()
    check_stdin()
    print(f"1..{n}")
    return bad


if __name__ == "__main__":
    sys.exit(main())
