#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes one frame (format 1.4) whose CPU side the checks know to the ns,
# for tests/cli/export-check.py and plot-check.py: three CPU threads (one
# unnamed, one the frame's thread) with nested scopes and a wait, two task
# timelines whose tasks overlap, with a dependency kept and one broken, a
# task begun before the frame and one still running at its end, frames of
# other kinds, and one queue whose submissions were made inside some scopes
# and outside all. Built record by record with hostile-files.py's writer,
# not by crumbs, so that what crumbs makes of it is checked against a
# truth of its own.
#
#   tests/cli/cpu-file.py OUT
import importlib.util
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("hostile_files",
                                              os.path.join(here, "hostile-files.py"))
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)

# The frame's CPU time; every time below is in microseconds from it.
CPU0 = h.CPU0
US = 1000

# Per thread (tid, name, scopes): each scope (name, begin, end, children).
THREADS = [
    (4242, "Main", [
        ("Frame", 100, 9000, [
            ("Update", 200, 3000, [("Physics", 300, 2500, [])]),
            ("Submit", 4000, 5000, []),
            ("Render", 5000, 8000, [("Draw lists", 5100, 7000, [])]),
            ("Wait for GPU", 8100, 8900, []),
        ]),
    ]),
    (77, "Worker", [
        ("Job", 1000, 6000, [("Decode", 1500, 4600, [])]),
        ("Job", 9200, 9800, []),
    ]),
    (99, "", [("Stream", 8500, 9990, [])]),
]
# Scopes in which the thread waited on the GPU (CPU_WAIT_BEGIN).
WAITS = {"Wait for GPU"}
# The thread that ends frames (FRAME_THREAD).
FRAME_THREAD = 77
# The submissions' CPU times, and the scope that made each: the innermost
# around it on the frame's thread, else on the first thread that has one,
# or none. Each one's work takes 500 ns.
SUBMISSIONS = [(2000, ("Worker", "Decode")), (4500, ("Worker", "Decode")),
               (8050, ("Main", "Frame")), (9500, ("Worker", "Job")), (9995, None)]
FRAME_END = 10000

# Tasks: (id, timeline, name, [(state, from)], end or None for still
# running, begun before the frame); a task begun earlier is shown from the
# frame's begin (0), one running at the frame's end ends there.
TASKS = [
    (1, "Jobs", "Cull", [("Waiting", 500), ("Executing", 800)], 3000, False),
    (2, "Jobs", "Skin", [("Waiting", 1000), ("Executing", 3200)], 5000, False),
    (3, "Jobs", "Shade", [("Waiting", 1200), ("Executing", 2000)], 4000, False),
    (4, "Jobs", "Sort", [("Executing", 5500)], 7000, False),
    (5, "Streaming", "Load", [("Reading", -5000), ("Decoding", 4000)], None, True),
]
# The lane each task is drawn in: the first of its timeline's free when it
# begins.
LANES = {1: 0, 2: 1, 3: 2, 4: 0, 5: 0}
# Dependencies: (task, state, blocking task, given at, broken).
DEPENDS = [(2, "Executing", 1, 1000, False), (3, "Executing", 1, 1200, True)]
# Frames of other kinds: (timeline, time).
MARKS = [("Game", 1000), ("Jobs", 2500), ("Game", 6000)]


def thread_name(tid, name):
    """The name crumbs gives a thread: its own, or 'thread N'."""
    return name or f"thread {tid}"


def tasks():
    """Every task and state as (timeline, path, begin ns, end ns) from the
    frame's CPU time, and its lane."""
    out = []
    for tid, timeline, name, states, end, _ in TASKS:
        b = max(states[0][1], 0)
        e = FRAME_END if end is None else end
        out.append((timeline, (name,), b * US, e * US, LANES[tid]))
        for i, (state, at) in enumerate(states):
            until = states[i + 1][1] if i + 1 < len(states) else e
            out.append((timeline, (name, state), max(at, 0) * US, until * US, LANES[tid]))
    return out


def scopes():
    """Every scope as (thread, path, begin ns, end ns, exclusive ns) from
    the frame's CPU time, each thread's in the order they began."""
    out = []

    def walk(thread, prefix, scopes):
        for name, b, e, children in scopes:
            excl = e - b - sum(c[2] - c[1] for c in children)
            out.append((thread, prefix + (name,), b * US, e * US, excl * US))
            walk(thread, prefix + (name,), children)
    for tid, name, s in THREADS:
        walk(thread_name(tid, name), (), s)
    return out


def frame():
    strings = []

    def sid(name):
        if name.encode() not in strings:
            strings.append(name.encode())
        return strings.index(name.encode())

    events = []  # (time, order at that time, kind, tid, name or record)

    def walk(tid, scopes):
        for name, b, e, children in scopes:
            events.append((b, 1, "begin", tid, name))
            walk(tid, children)
            events.append((e, 0, "end", tid, None))
    for tid, name, s in THREADS:
        sid(name)
        walk(tid, s)
    for t, _ in SUBMISSIONS:
        events.append((t, 2, "submit", None, None))
    for tid, timeline, name, states, end, earlier in TASKS:
        tag = b"\x51" if earlier else b"\x50"  # TASK_BEGUN_EARLIER, TASK_BEGIN
        events.append((states[0][1], 3, "record", None,
                       lambda tag=tag, tid=tid, tl=timeline, n=name, st=states[0][0]:
                       tag + h.varint(tid) + h.varint(sid(tl)) + h.varint(sid(n)) +
                       h.varint(sid(st))))
        for state, at in states[1:]:
            events.append((at, 3, "record", None, lambda tid=tid, st=state:
                           b"\x52" + h.varint(tid) + h.varint(sid(st))))  # TASK_STATE
        if end is not None:
            events.append((end, 0, "record", None,
                           lambda tid=tid: b"\x53" + h.varint(tid)))  # TASK_END
    for task, state, blocking, at, _ in DEPENDS:
        events.append((at, 4, "record", None, lambda t=task, st=state, b=blocking:
                       b"\x54" + h.varint(t) + h.varint(sid(st)) + h.varint(b)))  # TASK_DEPEND
    for timeline, at in MARKS:
        events.append((at, 5, "record", None,
                       lambda tl=timeline: b"\x1c" + h.varint(sid(tl))))  # TIMELINE_FRAME
    events.sort(key=lambda e: (e[0], e[1]))
    for e in events:
        if e[2] == "begin":
            sid(e[4])
        elif e[2] == "record":
            e[4]()
    body = bytearray(h.frame_begin(0, CPU0))
    for s in strings:
        body += h.string(s)
    body += b"\x1b" + h.varint(FRAME_THREAD)  # FRAME_THREAD
    names = {tid: name for tid, name, _ in THREADS}
    now, current = CPU0, None
    for t, _, kind, tid, name in events:
        at = CPU0 + t * US
        if kind == "submit":
            body += h.submit(0, at - now, 1000) + h.submit_end(500)
        elif kind == "record":
            body += name() + h.svarint(at - now)
        else:
            if tid != current:
                body += b"\x1a" + h.varint(tid) + h.varint(sid(names[tid]))  # CPU_THREAD
                current = tid
            if kind == "begin":
                tag = b"\x48" if name in WAITS else b"\x40"  # CPU_WAIT_BEGIN, CPU_BEGIN
                body += tag + h.varint(sid(name)) + h.svarint(at - now)
            else:
                body += b"\x44" + h.svarint(at - now)  # CPU_END
        now = at
    body += h.frame_end(CPU0 + FRAME_END * US - now)
    return bytes(body)


def header():
    """The file header of format 1.4, whose records the frame holds."""
    producer = b"cpu-file.py"
    c = b"CRUMBS\x1a\n" + struct.pack("<HHIQH", 1, 4, 0, 0, len(producer)) + producer
    return h.skippable(0x184D2A50, c + struct.pack("<I", h.crc32c(c)))


def write(path):
    f = h.File()
    f.out = bytearray(header())
    f.chunk(1, h.setup())
    f.chunk(2, frame(), 1, 0, 0)
    f.write(path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: tests/cli/cpu-file.py OUT")
    write(sys.argv[1])
