#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes one frame whose CPU side the checks know to the ns, for
# tests/cli/export-check.py and plot-check.py: three CPU threads (one
# unnamed) with nested scopes, and one queue whose submissions were made
# inside some of them and outside all. Built record by record with
# hostile-files.py's writer, not by crumbs, so that what crumbs makes of
# it is checked against a truth of its own.
#
#   tests/cli/cpu-file.py OUT
import importlib.util
import os
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
        ]),
    ]),
    (77, "Worker", [
        ("Job", 1000, 6000, [("Decode", 1500, 4600, [])]),
        ("Job", 9200, 9800, []),
    ]),
    (99, "", [("Stream", 8500, 9990, [])]),
]
# The submissions' CPU times, and the scope that made each: the innermost
# around it on the first thread that has one (the file names no frame
# thread), or none. Each one's work takes 500 ns.
SUBMISSIONS = [(2000, ("Main", "Physics")), (4500, ("Main", "Submit")),
               (9500, ("Worker", "Job")), (9995, None)]
FRAME_END = 10000


def thread_name(tid, name):
    """The name crumbs gives a thread: its own, or 'thread N'."""
    return name or f"thread {tid}"


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

    events = []  # (time, order at that time, kind, tid, name)

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
    events.sort(key=lambda e: (e[0], e[1]))
    for e in events:
        if e[2] == "begin":
            sid(e[4])
    body = bytearray(h.frame_begin(0, CPU0))
    for s in strings:
        body += h.string(s)
    names = {tid: name for tid, name, _ in THREADS}
    now, current = CPU0, None
    for t, _, kind, tid, name in events:
        at = CPU0 + t * US
        if kind == "submit":
            body += h.submit(0, at - now, 1000) + h.submit_end(500)
        else:
            if tid != current:
                body += b"\x1a" + h.varint(tid) + h.varint(sid(names[tid]))  # CPU_THREAD
                current = tid
            if kind == "begin":
                body += b"\x40" + h.varint(sid(name)) + h.svarint(at - now)  # CPU_BEGIN
            else:
                body += b"\x44" + h.svarint(at - now)  # CPU_END
        now = at
    body += h.frame_end(CPU0 + FRAME_END * US - now)
    return bytes(body)


def write(path):
    h.one_frame(frame()).write(path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: tests/cli/cpu-file.py OUT")
    write(sys.argv[1])
