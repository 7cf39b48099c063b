#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# crumbs export, read back by readers of its own: the Perfetto trace
# decoded by protoc against tests/export/perfetto_subset.proto, the Chrome
# JSON by Python's json, folded stacks line by line. On captures written by
# crumbs-gen (one frame with leaf events; two GPUs of queues that wait on
# each other's semaphores and on the host, with scopes left open; a run)
# it checks that every track's slices nest (Chrome's B and E events also
# when read as doubles, as speedscope and JavaScript read them), that
# Perfetto's timestamps are on CLOCK_MONOTONIC and its pids above any real
# pid, that Chrome's slices carry no args and its frames are marked by
# global instants, that Perfetto's annotations of inclusive and exclusive
# ns and counts agree with the slices, that the scope slices are as
# many as the capture's scopes and events (crumbs info), that slice
# durations less the queue's idle and wait give each scope's inclusive and
# exclusive time frame by frame as crumbs stats has them, to the
# nanosecond, and each queue's busy, idle and wait time and each GPU's
# frame time; that flows go from a CPU submit to its submission and from a
# signalling submission to a later one; that folded weights add up per
# queue to its busy time, frames merged ('Frame #') unless --per-frame;
# on a frame whose CPU side tests/cli/cpu-file.py writes, that each CPU
# scope is one slice on its thread's track at its times, under its real
# tid, with a flow from the scope that made each submission, and a folded
# line per CPU stack; that each memory heap of a run is a counter of its
# bytes a frame, on its GPU; and that a run of 200,000 frames exports in
# bounded memory. Prints TAP lines.
import bisect
import collections
import decimal
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CRUMBS = os.path.join(ROOT, BUILD, "crumbs")
GEN = os.path.join(ROOT, BUILD, "crumbs-gen")
PROTO_DIR = os.path.join(ROOT, "tests", "export")
# A run this long held in memory would take gigabytes; streamed, the
# reader's chunk and one frame.
RUN_FRAMES = 200000
PEAK_KIB = 96 * 1024

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
    sys.stdout.flush()
    return ok


def run(*args, stdin=None, text=True):
    env = dict(os.environ, LC_ALL="C.UTF-8")
    return subprocess.run(args, capture_output=True, text=text, env=env, stdin=stdin)


# ---------------------------------------------------------------------------
# What crumbs says of a capture, to compare with
# ---------------------------------------------------------------------------

def info_counts(path):
    """Scopes and leaf events of the whole capture, from crumbs info."""
    p = run(CRUMBS, "info", path)
    m = re.search(r"^scopes\s+(\d+), and (\d+) leaf event", p.stdout, re.M)
    if not m:
        raise RuntimeError(f"crumbs info: {p.stdout}{p.stderr}")
    return int(m.group(1)) + int(m.group(2))


def stats_of(path):
    """crumbs stats' per-frame values, by (kind, path) and frame number."""
    p = run(CRUMBS, "stats", path, "--format", "json", "--per-frame")
    if p.returncode != 0:
        raise RuntimeError(f"crumbs stats: {p.stderr}")
    doc = json.loads(p.stdout)
    numbers = doc["frames"]["numbers"]
    rows = {}
    for r in doc["rows"]:
        per = {}
        for i, v in enumerate(r["values_ns"]):
            if v is not None:
                per[numbers[i]] = (v, r["exclusive_values_ns"][i] if r["kind"] == "scope" else None)
        rows[(r["kind"], r["path"])] = per
    return numbers, rows


# ---------------------------------------------------------------------------
# Readers: each format to tracks of slices
# ---------------------------------------------------------------------------

class Slice:
    __slots__ = ("name", "begin", "end", "frame", "parent", "path", "flows_out", "flows_in",
                 "instant", "category", "args")

    def __init__(self, name, begin, frame):
        self.name, self.begin, self.end, self.frame = name, begin, begin, frame
        self.parent, self.path = None, None
        self.flows_out, self.flows_in = [], []
        self.instant, self.category = False, None
        self.args = {}


class Timeline:
    """Tracks keyed (gpu, queue name, kind) with kind 'scopes',
    'submissions' or 'cpu', and the CPU process's ('CPU', track name,
    'thread'); slices in the order the trace gives them, with their
    parents; counters per GPU in order; each CPU track's tid (a thread's
    real one in Perfetto, Chrome's tid); problems found reading."""

    def __init__(self):
        self.tracks = collections.defaultdict(list)
        self.counters = collections.defaultdict(list)
        # Video memory's counters: (GPU, track name) -> [(ns, bytes)].
        self.memory = collections.defaultdict(list)
        self.tids = {}
        self.problems = []
        # Presentation: counter values by track name ("Present interval
        # (CPU)", "Present interval (shown)"), and each present's args.
        self.present_counters = collections.defaultdict(list)
        self.presents = []


CPU_PID = 1 << 22
CPU0 = 1000000000000  # the CPU time of tests/cli/cpu-file.py's frame


def process_of(name):
    """A process name's GPU index, or 'CPU' for the program's CPU side."""
    if name == "CPU":
        return "CPU"
    return int(re.match(r"GPU (\d+): ", name).group(1))


def track_key(gpu, name):
    if gpu == "CPU":
        return ("CPU", name, "thread")
    for suffix, kind in ((" submissions", "submissions"), (" CPU submits", "cpu")):
        if name.endswith(suffix):
            return (gpu, name[: -len(suffix)], kind)
    return (gpu, name, "scopes")


def unescape(s):
    """A protoc text-format string literal's content as text."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = s[i + 1]
        if e in "01234567":
            j = i + 1
            while j < len(s) and j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(int(s[i + 1:j], 8))
            i = j
        elif e == "x":
            j = i + 2
            while j < len(s) and j < i + 4 and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(s[i + 2:j], 16))
            i = j
        else:
            out += {"n": b"\n", "t": b"\t", "r": b"\r", '"': b'"', "'": b"'", "\\": b"\\"}.get(
                e, e.encode())
            i += 2
    return out.decode("utf-8")


def parse_text_format(text):
    """protoc --decode's output as nested dicts of lists."""
    root = collections.defaultdict(list)
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            child = collections.defaultdict(list)
            stack[-1][line[:-1].strip()].append(child)
            stack.append(child)
            continue
        key, _, value = line.partition(": ")
        if value.startswith('"'):
            value = unescape(value[1:-1])
        elif re.fullmatch(r"-?\d+", value):
            value = int(value)
        elif re.fullmatch(r"-?\d+\.\d*(e[-+]?\d+)?|-?\d+e[-+]?\d+", value):
            value = float(value)
        stack[-1][key].append(value)
    return root


def read_perfetto(data):
    """The trace decoded by protoc, as a Timeline: slices from BEGIN/END
    pairs per track, names through the sequence's interned names."""
    p = subprocess.run(["protoc", "-I" + PROTO_DIR, "--decode=perfetto.protos.Trace",
                        "perfetto_subset.proto"], input=data, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"protoc: {p.stderr.decode()}")
    trace = parse_text_format(p.stdout.decode())
    t = Timeline()
    descriptors = {}
    processes = {}
    pids = {}
    names = {}
    open_slices = collections.defaultdict(list)
    last_ts = {}
    cleared = False
    for packet in trace["packet"]:
        flags = packet.get("sequence_flags", [0])[0]
        if packet.get("trusted_packet_sequence_id") != [1]:
            t.problems.append("a packet outside sequence 1")
        if flags & 1:
            cleared = True
            names = {}
        for d in packet.get("track_descriptor", []):
            uuid = d["uuid"][0]
            if uuid in descriptors or uuid in processes:
                t.problems.append(f"track {uuid} described twice")
            if d.get("process"):
                pname = d["process"][0]["process_name"][0]
                processes[uuid] = process_of(pname)
                pid = d["process"][0]["pid"][0]
                # Above any Linux pid, so that a system trace beside it
                # has no process of the same pid.
                if pid < CPU_PID or pid in pids:
                    t.problems.append(f"process {pname!r}: pid {pid}")
                pids[pid] = uuid
            elif d.get("thread"):
                th = d["thread"][0]
                if th["pid"][0] not in pids:
                    t.problems.append(f"thread {th['tid'][0]} of an undescribed process")
                    continue
                descriptors[uuid] = (pids[th["pid"][0]], th["thread_name"][0], False)
                t.tids[("CPU", th["thread_name"][0], "thread")] = th["tid"][0]
            else:
                # Presentation's tracks have no parent.
                descriptors[uuid] = (d.get("parent_uuid", [None])[0], d.get("name", [""])[0],
                                     bool(d.get("counter")))
        for interned in packet.get("interned_data", []):
            for en in interned.get("event_names", []):
                if en["iid"][0] in names:
                    t.problems.append(f"iid {en['iid'][0]} interned twice")
                names[en["iid"][0]] = en["name"][0]
        if "timestamp" in packet and packet.get("timestamp_clock_id") != [3]:
            t.problems.append(f"a timestamp on clock {packet.get('timestamp_clock_id')}, "
                              "not CLOCK_MONOTONIC (3)")
        for ev in packet.get("track_event", []):
            if not cleared or not flags & 2:
                t.problems.append("an event without incremental state")
            ts = packet["timestamp"][0]
            uuid = ev["track_uuid"][0]
            parent, tname, is_counter = descriptors[uuid]
            if parent is None:
                if ev["type"][0] == "TYPE_COUNTER":
                    t.present_counters[tname].append((ts, ev["counter_value"][0]))
                else:
                    t.presents.append({a["name"][0]: (a.get("uint_value") or
                                                      a.get("int_value"))[0]
                                       for a in ev.get("debug_annotations", [])})
                continue
            gpu = processes[parent]
            kind = ev["type"][0]
            if kind == "TYPE_COUNTER" and tname.startswith("Video memory"):
                t.memory[(gpu, tname)].append((ts, ev["counter_value"][0]))
                continue
            if kind == "TYPE_COUNTER":
                t.counters[gpu].append((ts, ev["counter_value"][0]))
                continue
            key = track_key(gpu, tname)
            # Trace processor orders a track's events by time; in file
            # order they must already be, for the nesting to be this one.
            if ts < last_ts.get(uuid, ts):
                t.problems.append(f"{key}: time goes back at {ts}")
            last_ts[uuid] = ts
            if kind == "TYPE_SLICE_END":
                if not open_slices[uuid]:
                    t.problems.append(f"{key}: an end with nothing open at {ts}")
                    continue
                open_slices[uuid].pop().end = ts
                continue
            args = {a["name"][0]: (a.get("uint_value") or a.get("int_value") or
                                   a.get("double_value") or a.get("string_value"))[0]
                    for a in ev.get("debug_annotations", [])}
            s = Slice(names.get(ev["name_iid"][0]), ts, args.get("frame"))
            s.args = args
            if s.name is None:
                t.problems.append(f"{key}: name iid {ev['name_iid'][0]} not interned")
            s.flows_out = ev.get("flow_ids", [])
            s.flows_in = ev.get("terminating_flow_ids", [])
            s.instant = kind == "TYPE_INSTANT"
            if open_slices[uuid]:
                s.parent = open_slices[uuid][-1]
            t.tracks[key].append(s)
            if kind == "TYPE_SLICE_BEGIN":
                open_slices[uuid].append(s)
    for uuid, stack in open_slices.items():
        if stack:
            t.problems.append(f"track {uuid}: {len(stack)} slices never end")
    return t


def us_to_ns(v):
    """Microseconds with three decimals, exactly, as integer ns."""
    d = decimal.Decimal(v) * 1000
    if d != d.to_integral_value():
        raise ValueError(f"{v} is not a whole number of ns")
    return int(d)


def read_chrome(text):
    """The JSON as a Timeline: B and E events paired per (pid, tid) in
    the file's order (each E ending the slice on top, by name), i events
    as instants (slices of length 0), times from otherData's start_ns,
    each event in the frame of the last global 'Frame N' instant before it
    in the file; flows bound to the innermost slice around each s and f.
    Read again as doubles, each thread's B and E events must keep that
    order, so that any reader that sorts them by time, stably, nests
    them so."""
    doc = json.loads(text, parse_float=decimal.Decimal)
    t = Timeline()
    start = doc["otherData"]["start_ns"]
    gpu_of = {}
    thread = {}
    flows = []
    stacks = collections.defaultdict(list)
    as_doubles = collections.defaultdict(list)
    frame = None

    def ns(v):
        return start + us_to_ns(v)

    for e in doc["traceEvents"]:
        ph = e["ph"]
        if ph == "M" and e["name"] == "process_name":
            gpu_of[e["pid"]] = process_of(e["args"]["name"])
        elif ph == "M" and e["name"] == "thread_name":
            thread[(e["pid"], e["tid"])] = e["args"]["name"]
            if gpu_of.get(e["pid"]) == "CPU":
                t.tids[("CPU", e["args"]["name"], "thread")] = e["tid"]
        elif ph == "C" and e["name"].startswith("Video memory"):
            t.memory[(gpu_of[e["pid"]], e["name"])].append((ns(e["ts"]), e["args"]["bytes"]))
        elif ph == "C" and e["name"].startswith("Present interval"):
            t.present_counters[e["name"]].append((ns(e["ts"]), e["args"]["ns"]))
        elif ph == "i" and e.get("cat") == "presents":
            t.presents.append(e["args"])
        elif ph == "C":
            t.counters[gpu_of[e["pid"]]].append((ns(e["ts"]), e["args"]["ns"]))
        elif ph in ("s", "f"):
            flows.append(e)
        elif ph == "i" and e.get("s") == "g":
            if e.get("cat") != "frames" or e["name"] != f"Frame {e['args']['frame']}":
                t.problems.append(f"a global instant that is not a frame's: {e}")
            frame = e["args"]["frame"]
        elif ph in ("B", "E", "i"):
            if "args" in e:
                t.problems.append(f"'{e['name']}': args {e['args']}, which speedscope adds to "
                                  "the name")
            if ph == "i" and e.get("s") != "t":
                t.problems.append(f"'{e['name']}': an instant of scope {e.get('s')}")
            pid_tid = (e["pid"], e["tid"])
            key = track_key(gpu_of[e["pid"]], thread[pid_tid])
            stack = stacks[pid_tid]
            b = ns(e["ts"])
            if ph != "i":
                as_doubles[pid_tid].append((float(e["ts"]), ph, e["name"]))
            if ph == "E":
                if not stack or stack[-1].name != e["name"]:
                    t.problems.append(f"{key}: E of '{e['name']}' at {b} with "
                                      f"'{stack[-1].name if stack else None}' open")
                    continue
                stack.pop().end = b
                continue
            s = Slice(e["name"], b, frame)
            s.category = e.get("cat")
            s.parent = stack[-1] if stack else None
            s.instant = e.get("cat") in ("submit", "signalled", "frame")
            s.args = {"wait": 1} if s.category == "cpu-wait" else {}
            t.tracks[key].append(s)
            if ph == "B":
                stack.append(s)
        elif ph != "M":
            t.problems.append(f"an event of phase {ph}")
    for pid_tid, stack in stacks.items():
        if stack:
            t.problems.append(f"{pid_tid}: {len(stack)} slices never end")
    # As doubles (JavaScript's numbers, Python's floats), in the file's
    # order: times never go back, and an end never follows a begin of
    # another name at the same time (speedscope puts it first).
    for pid_tid, events in as_doubles.items():
        for (ta, pa, na), (tb, pb, nb) in zip(events, events[1:]):
            if tb < ta or (tb == ta and pa == "B" and pb == "E" and na != nb):
                t.problems.append(f"{pid_tid}: as doubles, {pb} '{nb}' at {tb} after {pa} "
                                  f"'{na}' at {ta}")
                break
    # Flows bind to the innermost slice around their time on their thread.
    for e in flows:
        key = track_key(gpu_of[e["pid"]], thread[(e["pid"], e["tid"])])
        ts = ns(e["ts"])
        around = [s for s in t.tracks[key] if s.begin <= ts <= s.end]
        if not around:
            t.problems.append(f"{key}: flow {e['id']} at {ts} in no slice")
            continue
        s = max(around, key=lambda s: (s.begin, -s.end))
        (s.flows_out if e["ph"] == "s" else s.flows_in).append(e["id"])
        if e["name"] == "violated dependency" and e["ph"] == "f":
            s.args["violated"] = s.args.get("violated", 0) + 1
    return t


# ---------------------------------------------------------------------------
# Checks on a Timeline
# ---------------------------------------------------------------------------

def nesting_problems(t):
    """Children inside their parents, siblings one after another."""
    problems = list(t.problems)
    for key, slices in t.tracks.items():
        last_end = {}
        for s in slices:
            if s.end < s.begin:
                problems.append(f"{key}: '{s.name}' ends before it begins")
            p = s.parent
            if p and not (p.begin <= s.begin and s.end <= p.end):
                problems.append(f"{key}: '{s.name}' [{s.begin}, {s.end}] outside "
                                f"'{p.name}' [{p.begin}, {p.end}]")
            if s.begin < last_end.get(id(p), s.begin):
                problems.append(f"{key}: '{s.name}' at {s.begin} starts before its sibling ends")
            last_end[id(p)] = s.end
    return problems


def gaps_of(t):
    """Per queue, its idle and wait intervals, sorted."""
    gaps = {}
    for (gpu, queue, kind), slices in t.tracks.items():
        if kind == "submissions":
            gaps[(gpu, queue)] = sorted((s.begin, s.end) for s in slices
                                        if s.name in ("Idle", "Wait"))
    return gaps


def overlap(gaps, b, e):
    total = 0
    i = max(bisect.bisect_right(gaps, (b,)) - 1, 0)
    while i < len(gaps) and gaps[i][0] < e:
        total += max(0, min(e, gaps[i][1]) - max(b, gaps[i][0]))
        i += 1
    return total


def scope_times(t, gaps):
    """Per (stats kind, path) and frame: summed inclusive and exclusive ns
    of the scope slices, the queue's idle and wait taken out."""
    times = collections.defaultdict(lambda: [0, 0])
    for (gpu, queue, kind), slices in t.tracks.items():
        if kind != "scopes":
            continue
        g = gaps.get((gpu, queue), [])
        incl = {id(s): s.end - s.begin - overlap(g, s.begin, s.end) for s in slices}
        for s in slices:
            names = []
            p = s
            while p:
                names.append(p.name)
                p = p.parent
            names.reverse()
            # Right below the queue, the frame's number reads '#'.
            names[0] = re.sub(r"(?<![0-9])%d(?![0-9])" % s.frame, "#", names[0])
            s.path = " / ".join([f"GPU {gpu}", queue] + names)
            cell = times[(s.path, s.frame)]
            cell[0] += incl[id(s)]
            cell[1] += incl[id(s)]
            if s.parent:
                times[(s.parent.path, s.frame)][1] -= incl[id(s)]
    return times


def queue_times(t):
    """Per (gpu, queue) and frame: busy, wait and idle from the
    submission tracks: from the first to the last moment of the queue's
    accounting, less its idle and wait; and whether the frame's first
    slice starts where the frame before ended."""
    out = {}
    for (gpu, queue, kind), slices in t.tracks.items():
        if kind != "submissions":
            continue
        frames = collections.defaultdict(list)
        for s in slices:
            if s.parent is None:
                frames[s.frame].append(s)
        ends = {f: max(s.end for s in ss) for f, ss in frames.items()}
        for frame, ss in frames.items():
            idle = sum(s.end - s.begin for s in ss if s.name == "Idle")
            wait = sum(s.end - s.begin for s in ss if s.name == "Wait")
            subs = [s for s in ss if s.name.startswith("Submission ")]
            first = min(s.begin for s in ss)
            busy = (max(s.end for s in subs) - first - idle - wait) if subs else 0
            touching = any(e == first for f, e in ends.items() if f != frame)
            out[((gpu, queue), frame)] = (busy, wait, idle, touching)
    return out


def compare_with_stats(t, numbers, rows, what):
    """Every scope, queue and GPU value of every frame, to the ns."""
    gaps = gaps_of(t)
    mine = scope_times(t, gaps)
    wrong = []
    checked = 0
    for (kind, path), per in rows.items():
        if kind != "scope":
            continue
        for frame, (value, excl) in per.items():
            got = mine.pop((path, frame), None)
            expect = [value, excl]
            checked += 1
            if got is None or any(abs(a - b) > 1 for a, b in zip(got, expect)):
                wrong.append(f"{path} frame {frame}: slices say {got}, stats {expect}")
    for (path, frame), got in mine.items():
        wrong.append(f"{path} frame {frame}: in the trace, not in the stats {got}")
    result(not wrong and checked > 0,
           f"{what}: {checked} scopes' inclusive and exclusive ns per frame are crumbs stats'",
           "\n".join(wrong))

    # Each frame maps its GPU times to the CPU clock with its own fit of
    # the calibration: where the frame before ended by its fit after this
    # frame's queue was ready by this one's (by calibration noise, well
    # under a microsecond), the idle or wait that starts the frame starts
    # where the last slice ended, a little short.
    qt = queue_times(t)
    wrong = []
    checked = 0
    for (kind, path), per in rows.items():
        if kind not in ("busy", "wait", "idle"):
            continue
        gpu, queue = re.match(r"GPU (\d+) / (.+)$", path).groups()
        for frame, (value, _) in per.items():
            got = qt.get(((int(gpu), queue), frame))
            checked += 1
            i = ("busy", "wait", "idle").index(kind)
            short = got[3] and kind != "busy" and 0 <= value - got[i] < 1000 if got else False
            if got is None or (abs(got[i] - value) > 1 and not short):
                wrong.append(f"{path} {kind} frame {frame}: trace {got and got[i]}, stats {value}")
    result(not wrong and checked > 0,
           f"{what}: {checked} busy, wait and idle times per queue and frame are crumbs stats'",
           "\n".join(wrong))

    wrong = []
    for (kind, path), per in rows.items():
        if kind != "gpu":
            continue
        gpu = int(re.match(r"GPU (\d+)$", path).group(1))
        expect = [per[f][0] for f in numbers if f in per]
        got = [v for _, v in t.counters.get(gpu, [])]
        if got != expect:
            wrong.append(f"GPU {gpu}: counter {got[:5]}..., stats {expect[:5]}...")
    result(not wrong, f"{what}: the GPU frame time counters are crumbs stats' frame times",
           "\n".join(wrong))


# The pipeline statistics a slice of a capture that counted them carries.
COUNTERS = ("ia_vertices", "ia_primitives", "vs_invocations", "gs_invocations",
            "gs_primitives", "clipping_invocations", "clipping_primitives", "fs_invocations",
            "tcs_patches", "tes_invocations", "cs_invocations")


def check_counters(path, what):
    """A capture with pipeline statistics: every scope's slice carries them,
    its inclusive ones as crumbs report's rows have them."""
    p = run(CRUMBS, "export", path, "--format", "perfetto", text=False)
    if not result(p.returncode == 0 and p.stdout, f"{what}: exported", p.stderr.decode()):
        return
    t = read_perfetto(p.stdout)
    check_annotations(t, what)
    rows = json.loads(run(CRUMBS, "report", path, "--format", "json", "--counters").stdout)
    want = {}
    for r in rows["rows"]:
        if r["kind"] == "scope" and r.get("counters"):
            want.setdefault(r["name"], []).append(r["counters"])
    wrong = []
    checked = 0
    for slices in t.tracks.values():
        for s in slices:
            if s.name not in want or "ia_primitives" not in s.args:
                continue
            checked += 1
            got = {k: s.args.get(k) for k in COUNTERS}
            expect = [{k: (c[k] if not c["unknown"] else "?") for k in COUNTERS}
                      for c in want[s.name]]
            if got not in expect:
                wrong.append(f"'{s.name}': annotated {got}, report {expect[:1]}")
    result(not wrong and checked >= len(want) > 0,
           f"{what}: {checked} slices' pipeline statistics, as crumbs report has them",
           "\n".join(wrong[:10]))


def check_vendor(path, what):
    """A capture with vendor counters: each slice of a node the report
    gives them carries them as `vendor.NAME` (of it and all inside it) and
    `vendor_exclusive.NAME`, with crumbs report's JSON values; a slice's
    inclusive value is its own and its children's."""
    p = run(CRUMBS, "export", path, "--format", "perfetto", text=False)
    if not result(p.returncode == 0 and p.stdout, f"{what}: exported", p.stderr.decode()):
        return
    t = read_perfetto(p.stdout)
    want = {}
    frames = sorted({s.frame for slices in t.tracks.values() for s in slices
                     if s.frame is not None})
    for frame in frames:
        rows = json.loads(run(CRUMBS, "report", path, "--frame", str(frame), "--format", "json",
                              "--counters").stdout)
        for r in rows["rows"]:
            v = (r.get("counters") or {}).get("vendor")
            if r["kind"] == "scope" and v:
                want[(r["frame"], r["name"])] = v
    wrong = []
    checked = 0
    for slices in t.tracks.values():
        children = collections.defaultdict(list)
        for s in slices:
            if s.parent:
                children[id(s.parent)].append(s)
        for s in slices:
            got = {k[len("vendor."):]: v for k, v in s.args.items() if k.startswith("vendor.")}
            v = want.get((s.frame, s.name))
            if v is None:
                if got:
                    wrong.append(f"'{s.name}' frame {s.frame}: annotated {got}, the report none")
                continue
            checked += 1
            expect = {k: ("?" if v["unknown"] else x) for k, x in v["values"].items()
                      if x is not None or v["unknown"]}
            if set(got) != set(expect) or any(
                    got[k] != expect[k] if isinstance(expect[k], str) else
                    not isinstance(got[k], (int, float)) or abs(got[k] - expect[k]) > 1e-9 * max(1, abs(expect[k]))
                    for k in expect):
                wrong.append(f"'{s.name}' frame {s.frame}: annotated {got}, report {expect}")
            for k in got:
                own = s.args.get("vendor_exclusive." + k)
                kids = [c.args.get("vendor." + k, 0) for c in children[id(s)]]
                values = [got[k], own] + kids
                if all(isinstance(x, (int, float)) for x in values) and \
                        abs(values[0] - own - sum(kids)) > 1e-6 * max(1, abs(values[0])):
                    wrong.append(f"'{s.name}': {k} {got[k]}, its own {own}, its children's {kids}")
    result(not wrong and checked >= len(want) > 0,
           f"{what}: {checked} slices' vendor counters, as crumbs report has them",
           "\n".join(wrong[:10]))


def check_annotations(t, what):
    """Perfetto: each slice of a scope, event, CPU scope, task or state
    has its inclusive and exclusive ns as the slices here give them (its
    length less its queue's idle and wait, less its children's), and its
    inclusive counts are its exclusive ones and its children's."""
    gaps = gaps_of(t)
    wrong = []
    checked = 0
    for (gpu, queue, kind), slices in t.tracks.items():
        if kind not in ("scopes", "thread"):
            continue
        g = gaps.get((gpu, queue), []) if kind == "scopes" else []
        incl = {id(s): s.end - s.begin - overlap(g, s.begin, s.end) for s in slices}
        children = collections.defaultdict(list)
        for s in slices:
            if s.parent:
                children[id(s.parent)].append(s)
        for s in slices:
            if s.instant or "inclusive_ns" not in s.args and kind == "thread":
                continue
            checked += 1
            excl = incl[id(s)] - sum(incl[id(c)] for c in children[id(s)])
            got = (s.args.get("inclusive_ns"), s.args.get("exclusive_ns"))
            if got != (incl[id(s)], excl):
                wrong.append(f"{(gpu, queue, kind)} '{s.name}' at {s.begin}: annotations {got}, "
                             f"slices {(incl[id(s)], excl)}")
            for count in ("draws", "dispatches", "prims", "verts") + COUNTERS:
                values = [s.args.get(count, 0), s.args.get("exclusive_" + count, 0)] + \
                         [c.args.get(count, 0) for c in children[id(s)]]
                if all(isinstance(v, int) for v in values) and \
                        values[0] != values[1] + sum(values[2:]):
                    wrong.append(f"'{s.name}' at {s.begin}: {count} {values[0]}, its own "
                                 f"{values[1]} and its children's {values[2:]}")
    result(not wrong and checked > 0,
           f"{what}: {checked} slices' inclusive and exclusive ns and counts annotated, as their "
           "slices have them", "\n".join(wrong[:20]))


def check_flows(t, what, expect_signals):
    ends = collections.defaultdict(lambda: [[], []])
    for key, slices in t.tracks.items():
        for s in slices:
            for f in s.flows_out:
                ends[f][0].append((key, s))
            for f in s.flows_in:
                ends[f][1].append((key, s))
    wrong = []
    submits = signals = submitters = dependencies = 0
    for fid, (outs, ins) in ends.items():
        if len(outs) != 1 or len(ins) != 1:
            wrong.append(f"flow {fid}: {len(outs)} sources, {len(ins)} ends")
            continue
        (ka, a), (kb, b) = outs[0], ins[0]
        if ka[2] == "thread" and kb[2] == "submissions":
            # From the CPU scope that made a submission to its work.
            submitters += 1
            if not (b.name.startswith("Submission") and a.frame == b.frame):
                wrong.append(f"submitter flow {fid} from {ka} '{a.name}' to {kb} '{b.name}'")
        elif ka[2] == "thread":
            # From a blocking task's last state to the state it held back.
            dependencies += 1
            if not (kb[2] == "thread" and a.parent and b.parent and a.category in (None, "state")
                    and b.category in (None, "state")):
                wrong.append(f"dependency flow {fid} from {ka} '{a.name}' to {kb} '{b.name}'")
        elif ka[2] == "cpu":
            submits += 1
            if not (kb[2] == "submissions" and kb[:2] == ka[:2] and b.name.startswith("Submission")
                    and a.begin <= b.begin and a.frame == b.frame):
                wrong.append(f"submit flow {fid} from {ka} at {a.begin} to {kb} '{b.name}' at {b.begin}")
        else:
            # From the signalling submission to where the wait it
            # released ended, in the waiting submission: not before the
            # signal.
            signals += 1
            if not (a.name.startswith("Submission") and b.name == "Signalled" and
                    b.parent and b.parent.name.startswith("Submission") and
                    ka[0] == kb[0] and ka[1] != kb[1] and ka[2] == kb[2] == "submissions" and
                    a.end <= b.begin):
                wrong.append(f"signal flow {fid} from {ka} '{a.name}' ending {a.end} "
                             f"to {kb} '{b.name}' at {b.begin}")
    subs = sum(1 for k, ss in t.tracks.items() if k[2] == "submissions"
               for s in ss if s.name.startswith("Submission"))
    if submits != subs:
        wrong.append(f"{submits} submit flows for {subs} submissions")
    if expect_signals and signals == 0:
        wrong.append("no signal flows")
    result(not wrong, f"{what}: {submits} submit, {signals} signal, {submitters} submitter and "
           f"{dependencies} dependency flows, each from one slice to one other",
           "\n".join(wrong))


def check_timeline(t, path, what, full, numbers, rows, expect_signals):
    """Nesting, the slice count (full: leaves exported), flows, frames."""
    problems = nesting_problems(t)
    result(not problems, f"{what}: every track's slices nest", "\n".join(problems[:20]))
    scopes = sum(len(ss) for k, ss in t.tracks.items() if k[2] == "scopes")
    if full:
        expect = info_counts(path)
        result(scopes == expect, f"{what}: {scopes} scope slices, the capture's scopes and events",
               f"crumbs info says {expect}")
    frames = {s.frame for ss in t.tracks.values() for s in ss}
    result(frames == set(numbers), f"{what}: every slice names its frame, and every frame is there",
           f"{sorted(frames, key=str)[:10]} vs {numbers[:10]}")
    check_flows(t, what, expect_signals)


# ---------------------------------------------------------------------------
# Folded stacks
# ---------------------------------------------------------------------------

def read_folded(text):
    weights = collections.defaultdict(int)
    problems = []
    for line in text.splitlines():
        m = re.fullmatch(r"(.+) (\d+)", line)
        if not m or int(m.group(2)) <= 0:
            problems.append(f"not a folded line: {line!r}")
            continue
        weights[tuple(m.group(1).split(";"))] += int(m.group(2))
    return weights, problems


def check_folded(path, numbers, rows, what):
    p = run(CRUMBS, "export", path, "--format", "folded")
    weights, problems = read_folded(p.stdout)
    result(p.returncode == 0 and not problems, f"{what}: folded stacks parse",
           p.stderr + "\n".join(problems))
    per_queue = collections.defaultdict(int)
    for stack, w in weights.items():
        if stack[0] not in ("CPU", "Tasks"):
            per_queue[stack[:2]] += w
    wrong = []
    for (kind, rpath), per in rows.items():
        if kind != "busy":
            continue
        gpu, queue = re.match(r"GPU (\d+) / (.+)$", rpath).groups()
        busy = sum(v for v, _ in per.values())
        got = per_queue.pop((f"GPU {gpu}", queue), 0)
        if got != busy:
            wrong.append(f"{rpath}: weights {got}, busy {busy}")
    wrong += [f"{k}: weights {w} for a queue without busy time" for k, w in per_queue.items() if w]
    result(not wrong, f"{what}: folded weights add up to each queue's busy time",
           "\n".join(wrong))

    # Frames merged: right below a queue, the frame's number reads '#', as
    # in crumbs stats, so tools add up the frames; --per-frame keeps it.
    p2 = run(CRUMBS, "export", path, "--format", "folded", "--per-frame")
    per_frame, problems2 = read_folded(p2.stdout)
    numbered = {k[2] for k in weights if len(k) > 2 and re.search(r"\d", k[2])
                and k[0] not in ("CPU", "Tasks")}
    merged = collections.defaultdict(int)
    frames_seen = set()
    for stack, w in per_frame.items():
        if len(stack) > 2 and stack[0] not in ("CPU", "Tasks"):
            m = re.fullmatch(r"Frame (\d+)", stack[2])
            if m:
                frames_seen.add(int(m.group(1)))
            stack = stack[:2] + (re.sub(r"\d+", "#", stack[2]),) + stack[3:]
        merged[stack] += w
    result(p2.returncode == 0 and not problems2 and not numbered and
           frames_seen == set(numbers) and dict(merged) == dict(weights),
           f"{what}: folded stacks merge frames ('Frame #'), --per-frame keeps each one's "
           "number, and their weights agree",
           f"numbered by default: {sorted(numbered)[:5]}; frames with --per-frame "
           f"{sorted(frames_seen)[:10]}; differ: "
           f"{sorted(set(merged.items()) ^ set(weights.items()))[:5]}")

    # Without leaf events, each path's weight is its exclusive time.
    p = run(CRUMBS, "export", path, "--format", "folded", "--no-leaf")
    weights, problems = read_folded(p.stdout)
    got = collections.defaultdict(int)
    for stack, w in weights.items():
        if len(stack) > 2 and stack[0] not in ("CPU", "Tasks"):
            # Right below the queue, a frame's number reads '#' in the
            # stats; crumbs-gen's only numbered names there are frames.
            names = [re.sub(r"\d+", "#", stack[2])] + list(stack[3:])
            got[" / ".join(list(stack[:2]) + names)] += w
    wrong = []
    for (kind, rpath), per in rows.items():
        if kind == "scope":
            expect = sum(e for _, e in per.values())
            if got.pop(rpath, 0) != expect:
                wrong.append(f"{rpath}: folded {got.get(rpath)}, stats exclusive {expect}")
    wrong += [f"{k}: {w} in folded only" for k, w in got.items() if w]
    result(not wrong and not problems,
           f"{what}: with --no-leaf, each stack's weight is its scope's exclusive time",
           "\n".join(problems + wrong))


# ---------------------------------------------------------------------------
# The CPU side, on a capture whose every time is known here
# ---------------------------------------------------------------------------

def cpu_file():
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("cpu_file", os.path.join(here, "cpu-file.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def cpu_slices(t, kind):
    """The CPU process's slices of threads ('thread': tracks with a real
    tid), of task lanes ('lane': tracks named 'T' or 'T (lane N)', with
    the lane from 0) or of frames of other kinds ('marks': 'T frames'), as
    (track or timeline, path, begin, end, slice, lane) from the frame's CPU
    time."""
    out = []
    for (proc, track, _), slices in t.tracks.items():
        if proc != "CPU":
            continue
        tid = t.tids.get(("CPU", track, "thread"))
        if tid is not None and tid < CPU_PID:
            what, name, lane = "thread", track, 0
        elif track.endswith(" frames"):
            what, name, lane = "marks", track[:-len(" frames")], 0
        else:
            m = re.fullmatch(r"(.*) \(lane (\d+)\)", track)
            what, name, lane = ("lane", m.group(1), int(m.group(2)) - 1) if m else ("lane", track, 0)
        if what != kind:
            continue
        for s in slices:
            names = []
            p = s
            while p:
                names.append(p.name)
                p = p.parent
            out.append((name, tuple(reversed(names)), s.begin - CPU0, s.end - CPU0, s, lane))
    return out


def check_cpu(tmp):
    path = os.path.join(tmp, "cpu.crumbs")
    cf = cpu_file()
    try:
        cf.write(path)
    except (OSError, subprocess.CalledProcessError) as e:
        result(False, "a capture of CPU threads and tasks is written", repr(e))
        return
    expect = cf.scopes()
    tasks = cf.tasks()
    what = "CPU threads and tasks"
    for fmt in ("perfetto", "chrome"):
        label = f"{what}, {fmt}"
        p = run(CRUMBS, "export", path, "--format", fmt, text=False)
        if not result(p.returncode == 0, f"{label}: exported", p.stderr.decode()):
            continue
        try:
            t = read_perfetto(p.stdout) if fmt == "perfetto" else read_chrome(p.stdout.decode())
        except (RuntimeError, ValueError, KeyError, IndexError, AttributeError) as e:
            result(False, f"{label}: the trace reads back", repr(e))
            continue
        problems = nesting_problems(t)
        result(not problems, f"{label}: every track's slices nest, overlapping tasks apart",
               "\n".join(problems[:20]))

        got = cpu_slices(t, "thread")
        want = sorted((tr, pa, b, e) for tr, pa, b, e, _ in expect)
        have = sorted((tr, pa, b, e) for tr, pa, b, e, _, _ in got)
        result(have == want, f"{label}: each of the {len(want)} CPU scopes is one slice on its "
               f"thread's track, at its times to the ns, below its parent",
               f"missing {sorted(set(want) - set(have))[:5]}, extra {sorted(set(have) - set(want))[:5]}")

        tids = {k[1]: v for k, v in t.tids.items()}
        wrong = [f"{name or tid}: tid {tids.get(cf.thread_name(tid, name))}"
                 for tid, name, _ in cf.THREADS if tids.get(cf.thread_name(tid, name)) != tid]
        result(not wrong, f"{label}: each thread's track has its name and real tid",
               "\n".join(wrong))

        waits = sorted(pa[-1] for tr, pa, b, e, s, _ in got if s.args.get("wait") == 1)
        cats = {s.category for tr, pa, b, e, s, _ in got if pa[-1] in cf.WAITS}
        result(waits == sorted(cf.WAITS) and (fmt == "perfetto" or cats == {"cpu-wait"}),
               f"{label}: wait scopes, and they alone, have the argument wait",
               f"{waits} {cats}")

        lanes = cpu_slices(t, "lane")
        want = sorted((tl, pa, b, e, lane) for tl, pa, b, e, lane in tasks)
        have = sorted((tl, pa, b, e, lane) for tl, pa, b, e, _, lane in lanes)
        result(have == want, f"{label}: each of {len(want)} tasks and states is one slice in its "
               "timeline's first free lane, at its times, its states inside it",
               f"missing {sorted(set(want) - set(have))[:5]}, extra {sorted(set(have) - set(want))[:5]}")

        marks = sorted((tl, b) for tl, pa, b, e, s, _ in cpu_slices(t, "marks")
                       if s.instant and pa == (tl,))
        result(marks == sorted((tl, at * cf.US) for tl, at in cf.MARKS),
               f"{label}: an instant per frame of another kind on its timeline's frames track",
               f"{marks}")

        # Submitter flows: from the scope that made each submission.
        by_flow = {}
        for tr, pa, b, e, sl, _ in got:
            for fid in sl.flows_out:
                by_flow[fid] = (tr, pa[-1])
        subs = sorted((s for (g, q, k), ss in t.tracks.items() if k == "submissions"
                       for s in ss if s.name.startswith("Submission")), key=lambda s: s.begin)
        wrong = []
        for (cpu_us, maker), sub in zip(cf.SUBMISSIONS, subs):
            makers = [by_flow[f] for f in sub.flows_in if f in by_flow]
            if makers != ([maker] if maker else []):
                wrong.append(f"submission at {cpu_us} us: made by {makers}, expected {maker}")
        if len(subs) != len(cf.SUBMISSIONS):
            wrong.append(f"{len(subs)} submissions")
        result(not wrong, f"{label}: a flow from the innermost CPU scope around each submission's "
               f"CPU time (the frame thread's first) to its work, none where no scope holds it",
               "\n".join(wrong))

        # Dependency flows: from the blocking task's last state to the
        # state it held back, the broken ones marked.
        names = {tid: name for tid, _, name, _, _, _ in cf.TASKS}
        last = {tid: states[-1][0] for tid, _, _, states, _, _ in cf.TASKS}
        source = {}
        for tl, pa, b, e, s, _ in lanes:
            for fid in s.flows_out:
                source[fid] = pa
        drawn = []
        for tl, pa, b, e, s, _ in lanes:
            for fid in s.flows_in:
                drawn.append((source.get(fid), pa, s.args.get("violated", 0)))
        want = sorted(((names[blk], last[blk]), (names[task], state), int(broken))
                      for task, state, blk, _, broken in cf.DEPENDS)
        result(sorted(drawn, key=str) == sorted(want, key=str),
               f"{label}: a flow along each of {len(want)} dependencies, from the blocking task's "
               "end to the state it held back, broken ones with the argument violated",
               f"{drawn} vs {want}")
        if fmt == "chrome":
            doc = json.loads(p.stdout)
            flows = sorted(e["name"] for e in doc["traceEvents"] if e["ph"] == "s" and
                           "dependency" in e["name"])
            result(flows == ["dependency", "violated dependency"],
                   f"{label}: dependency flows are named for whether they were kept", f"{flows}")
        check_flows(t, label, False)

    # Folded: a line per CPU stack with its exclusive time, and per task state.
    p = run(CRUMBS, "export", path, "--format", "folded")
    weights, problems = read_folded(p.stdout)
    want = collections.defaultdict(int)
    for tr, pa, b, e, excl in expect:
        want[("CPU", tr) + pa] += excl
    for tl, pa, b, e, _ in tasks:
        if len(pa) == 2:
            want[("Tasks", tl) + pa] += e - b
    have = {k: v for k, v in weights.items() if k[0] in ("CPU", "Tasks")}
    result(p.returncode == 0 and not problems and have == dict(want),
           f"{what}, folded: a CPU;<thread> line per stack with its exclusive time, a "
           "Tasks;<timeline> line per task state with its time",
           f"{problems[:3]} missing {set(want.items()) - set(have.items())}, "
           f"extra {set(have.items()) - set(want.items())}")

    # --queue keeps the GPU alone; --root and --max-depth apply to threads
    # and to timelines (whose tasks are their first level).
    for args, keep in (
            (["--queue", "*"], lambda pa: False),
            (["--no-cpu"], lambda pa: False),
            (["--root", "Job"], lambda pa: pa[0] == "Job"),
            (["--root", "Update"], lambda pa: "Update" in pa),
            (["--root", "Cull"], lambda pa: pa[0] == "Cull"),
            (["--max-depth", "1"], lambda pa: len(pa) == 1)):
        all_cpu = [(tr, pa) for tr, pa, b, e, excl in expect] + \
                  [(tl, pa) for tl, pa, b, e, _ in tasks]
        for fmt in ("chrome", "folded"):
            p = run(CRUMBS, "export", path, "--format", fmt, *args)
            label = f"{what}, {fmt} {' '.join(args)}"
            if fmt == "folded":
                weights, problems = read_folded(p.stdout)
                have = {k[2:] for k in weights if k[0] in ("CPU", "Tasks") and weights[k] > 0}
                # A task weighs nothing (its states fill it) but at the
                # depth limit, where it weighs its states.
                task_names = {(name,) for _, _, name, _, _, _ in cf.TASKS}
                want = {pa for tr, pa in all_cpu if keep(pa) and
                        (pa not in task_names or args[0] == "--max-depth")}
                if args[0] == "--root":
                    want = {pa[pa.index(args[1]):] for pa in want}
                ok = p.returncode == 0 and have == want
            else:
                t = read_chrome(p.stdout)
                got = cpu_slices(t, "thread") + cpu_slices(t, "lane")
                have = sorted(pa[-1] for tr, pa, b, e, _, _ in got)
                want = sorted(pa[-1] for tr, pa in all_cpu if keep(pa))
                ok = p.returncode == 0 and have == want and not nesting_problems(t)
            result(ok, f"{label}: the CPU scopes and tasks it keeps", f"{have} vs {want}")


# ---------------------------------------------------------------------------

def check_capture(path, what, expect_signals):
    numbers, rows = stats_of(path)
    for fmt in ("perfetto", "chrome"):
        for full in (True, False):
            args = [CRUMBS, "export", path, "--format", fmt] + ([] if full else ["--no-leaf"])
            p = run(*args, text=False)
            label = f"{what}, {fmt}{'' if full else ' --no-leaf'}"
            if not result(p.returncode == 0 and p.stdout, f"{label}: exported",
                          p.stderr.decode()):
                continue
            try:
                t = read_perfetto(p.stdout) if fmt == "perfetto" else read_chrome(p.stdout.decode())
            except (RuntimeError, ValueError, KeyError, IndexError, AttributeError) as e:
                result(False, f"{label}: the trace reads back", repr(e))
                continue
            result(True, f"{label}: the trace reads back")
            check_timeline(t, path, label, full, numbers, rows, expect_signals)
            if not full:
                # Scopes only: a slice's exclusive time is what its
                # children leave, as the stats count leaf events' time.
                compare_with_stats(t, numbers, rows, label)
            if fmt == "perfetto":
                check_annotations(t, label)
    check_folded(path, numbers, rows, what)


def check_memory(tmp):
    """Video memory: crumbs-gen --memory LEAK leaves 64 MiB and LEAK more
    each frame in use on each GPU's heap 0 (counted), and 32 MiB and a
    KiB more each frame of the driver's usage on its heap 1. Each export
    must carry both as counters, one a frame at its end, in bytes, on the
    GPU's process; --gpu keeps one GPU's."""
    path = os.path.join(tmp, "memory.crumbs")
    leak, frames = 3 << 20, 7
    g = run(GEN, "-o", path, "--frames", str(frames), "--gpus", "2", "--memory", str(leak))
    if not result(g.returncode == 0, "crumbs-gen writes a run with video memory", g.stderr):
        return
    for fmt in ("perfetto", "chrome"):
        for only in (None, 1):
            args = ["--gpu", str(only)] if only is not None else []
            p = run(CRUMBS, "export", path, "--format", fmt, *args, text=False)
            if not result(p.returncode == 0, f"memory, {fmt} {' '.join(args)}: exported", p.stderr):
                continue
            t = read_perfetto(p.stdout) if fmt == "perfetto" else read_chrome(p.stdout.decode())
            gpus = [only] if only is not None else [0, 1]
            want = {}
            for gpu in gpus:
                want[(gpu, "Video memory heap 0")] = \
                    [(64 << 20) + (f + 1) * leak for f in range(frames)]
                want[(gpu, "Video memory heap 1 (driver's usage)")] = \
                    [(32 << 20) + f * 1024 for f in range(frames)]
            got = {k: [v for _, v in vs] for k, vs in t.memory.items()}
            times = {k: [ts for ts, _ in vs] for k, vs in t.memory.items()}
            steady = all(ts == sorted(ts) and len(set(ts)) == len(ts) for ts in times.values())
            result(got == want and steady and not t.problems,
                   f"memory, {fmt} {' '.join(args)}: a counter a heap, a value a frame, in bytes",
                   f"got {got}\nwant {want}\n{t.problems[:5]}")


def check_filters(path, what):
    """--root, --max-depth, --no-leaf and --queue: the slices that remain
    still nest, and are the ones asked for."""
    args = ["--root", "*Post*", "--max-depth", "1", "--no-leaf", "--queue", "Graphics*"]
    for fmt in ("perfetto", "chrome"):
        p = run(CRUMBS, "export", path, "--format", fmt, *args, text=False)
        if not result(p.returncode == 0, f"{what}, {fmt} {' '.join(args)}: exported", p.stderr):
            continue
        t = read_perfetto(p.stdout) if fmt == "perfetto" else read_chrome(p.stdout.decode())
        problems = nesting_problems(t)
        for (gpu, queue, kind), slices in t.tracks.items():
            if not queue.startswith("Graphics"):
                problems.append(f"{(gpu, queue, kind)}: a queue --queue did not ask for")
            if kind != "scopes":
                continue
            for s in slices:
                depth = 0 if s.parent is None else 1 if s.parent.parent is None else 2
                if depth == 0 and "Post" not in s.name or depth > 1:
                    problems.append(f"'{s.name}' at depth {depth}")
        scopes = sum(len(ss) for k, ss in t.tracks.items() if k[2] == "scopes")
        result(not problems and scopes > 0,
               f"{what}, {fmt} {' '.join(args)}: {scopes} slices of Post Processing "
               f"and one level below, nested", "\n".join(problems[:20]))


def check_terminal(path):
    """A binary trace is not written to a terminal."""
    import pty
    master, slave = pty.openpty()
    try:
        p = subprocess.run([CRUMBS, "export", path, "--format", "perfetto"], stdout=slave,
                           stderr=subprocess.PIPE, text=True)
    finally:
        os.close(slave)
        os.close(master)
    result(p.returncode == 2 and "terminal" in p.stderr,
           "a Perfetto trace is not written to a terminal (exit 2)", p.stderr)


def peak_kib(args):
    """Peak resident memory of a command run alone, output discarded."""
    code = ("import resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    p = run(sys.executable, "-c", code, *args)
    status, kib = p.stdout.split()
    return int(status), int(kib)


def check_presents(tmp):
    """A run with presents (crumbs-gen --presents, every 7th shown a
    v-sync late), in both traces: an instant per present, the CPU
    intervals from one to the next, and the shown intervals, whose
    v-syncs missed (each interval over the refresh period, rounded, less
    one) and longest are crumbs stats'."""
    path = os.path.join(tmp, "presents.crumbs")
    g = run(GEN, "-o", path, "--frames", "40", "--gpus", "1", "--presents")
    if not result(g.returncode == 0, "crumbs-gen writes a run with presents", g.stderr):
        return
    pr = json.loads(run(CRUMBS, "stats", path, "--format", "json").stdout)["presentation"]
    for fmt in ("perfetto", "chrome"):
        out = os.path.join(tmp, "presents." + fmt)
        e = run(CRUMBS, "export", path, "--format", fmt, "-o", out)
        if not result(e.returncode == 0, f"{fmt}: a run with presents exports", e.stderr):
            continue
        with open(out, "rb") as f:
            data = f.read()
        t = read_perfetto(data) if fmt == "perfetto" else read_chrome(data.decode())
        cpu = [v for _, v in t.present_counters["Present interval (CPU)"]]
        shown = [v for _, v in t.present_counters["Present interval (shown)"]]
        refresh = pr["refresh_ns"]
        missed = sum(max(0, (v + refresh // 2) // refresh - 1) for v in shown)
        ids = [int(p["present_id"]) for p in t.presents]
        result(not t.problems and ids == list(range(1, 41)) and len(cpu) == 39 and
               len(shown) == pr["intervals"] and missed == pr["missed_vsyncs"] and
               max(shown) == pr["max_ns"],
               f"{fmt}: a present instant each, {len(cpu)} CPU intervals and {len(shown)} shown "
               f"ones, {missed} v-syncs missed as crumbs stats counts",
               f"problems {t.problems[:3]}, ids {ids[:5]}..., stats {pr}")


def main():
    if not shutil.which("protoc"):
        result(False, "protoc is installed (tests/install-deps installs protobuf-compiler)")
        return
    tmp = tempfile.mkdtemp()
    try:
        captures = [
            ("one frame with leaf events", ["--frames", "1", "--gpus", "1", "--leaves"], False),
            ("two GPUs, semaphores, host waits, scopes left open",
             ["--frames", "8", "--leaves", "--unbalanced"], True),
            ("a run of 60 frames", ["--frames", "60", "--markers-per-frame", "40"], True),
            ("a run of 12 frames with CPU threads and tasks",
             ["--frames", "12", "--cpu-threads", "3", "--waits", "--tasks", "8",
              "--timeline-frames"], True),
        ]
        check_cpu(tmp)
        check_memory(tmp)
        for i, (what, args, signals) in enumerate(captures):
            path = os.path.join(tmp, f"c{i}.crumbs")
            g = run(GEN, "-o", path, *args)
            if result(g.returncode == 0, f"crumbs-gen writes {what}", g.stderr):
                check_capture(path, what, signals)
                if i == 0:
                    check_filters(path, what)
                    check_terminal(path)

        check_counters(os.path.join(ROOT, "tests", "cli", "captures", "renderer-counters.crumbs"),
                       "the sample renderer's capture with pipeline statistics")
        for name in ("vendor-counters", "vendor-counters-run"):
            check_vendor(os.path.join(ROOT, "tests", "cli", "captures", name + ".crumbs"),
                         f"{name}.crumbs, with vendor counters")

        check_presents(tmp)
        run_path = os.path.join(tmp, "run.crumbs")
        g = run(GEN, "-o", run_path, "--frames", str(RUN_FRAMES), "--markers-per-frame", "8")
        result(g.returncode == 0, f"crumbs-gen writes a run of {RUN_FRAMES} frames", g.stderr)
        for fmt in ("perfetto", "chrome", "folded"):
            status, kib = peak_kib([CRUMBS, "export", run_path, "--format", fmt, "-o", "/dev/null"])
            result(status == 0 and kib < PEAK_KIB,
                   f"{fmt}: {RUN_FRAMES} frames export in {kib} KiB at most (bound {PEAK_KIB})",
                   f"exit status {status}")
    finally:
        shutil.rmtree(tmp)


main()
print(f"1..{n}")
sys.exit(bad)
