#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes a run whose CPU threads' times the test chooses, for the checks
# of `crumbs stats` and `crumbs diff` on the CPU's rows: one GPU and its
# queue with a "Frame" scope, and per frame the threads "Main Thread"
# (Frame > Game > Physics; Frame > Render > Visibility), "Render Thread"
# (Frame N, with N the frame's number, > Record, Submit) and an unnamed
# thread whose id changes every frame (Upload). Each scope's own time is
# its base time drawn within +-5% by a generator seeded with --seed; the
# frame ends 0.5 ms after its last scope. --slow NAME=FACTOR multiplies the
# own time of the scopes called NAME (repeatable); --spike N makes frame
# N's Physics take 4 times as long; --cpu-from N leaves the threads out of
# the frames before frame N; --chunk-frames N writes N frames a chunk
# (default: all in one).
#
#   tests/cli/cpu-run-file.py OUT [--frames N] [--seed S] [--slow NAME=F]... [--spike N]...
#                             [--cpu-from N] [--chunk-frames N]
import importlib.util
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location('hostile_files',
                                              os.path.join(here, 'hostile-files.py'))
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)

MS = 1000000
FRAME_PERIOD = 40 * MS

# name: (own time in ms, children); the trees of the named threads.
MAIN = ('Frame', 0.5, [('Game', 0.4, [('Physics', 3.0, [])]),
                       ('Render', 0.3, [('Visibility', 1.5, [])])])
RENDER = ('Frame {n}', 0.2, [('Record', 4.0, []), ('Submit', 1.0, [])])
UNNAMED = ('Upload', 2.0, [])

def header():
    producer = b'cpu-run-file.py'
    c = b'CRUMBS\x1a\n' + struct.pack('<HHIQH', 1, 3, 0, 0, len(producer)) + producer
    return h.skippable(0x184D2A50, c + struct.pack('<I', h.crc32c(c)))

class Draw:
    """A linear congruential generator: the same draws on every Python."""
    def __init__(self, seed):
        self.state = seed * 2654435761 % (1 << 32) or 1

    def factor(self):
        self.state = (self.state * 1103515245 + 12345) % (1 << 31)
        return 0.95 + 0.1 * self.state / (1 << 31)

class Chunk:
    def __init__(self):
        self.records = bytearray()
        self.strings = {}
        self.string_records = bytearray()
        self.cpu = 0

    def string(self, name):
        if name not in self.strings:
            self.strings[name] = len(self.strings)
            self.string_records += h.string(name.encode())
        return self.strings[name]

    def cpu_delta(self, t):
        d = t - self.cpu
        self.cpu = t
        return h.svarint(d)

def scope(c, tree, t, number, draw, slow, spike):
    """Writes the scope and its children from time t; returns its end."""
    name, own_ms, children = tree
    name = name.format(n=number)
    own = own_ms * MS * draw.factor() * slow.get(name, 1.0)
    if name == 'Physics' and spike:
        own *= 4
    c.records += b'\x40' + h.varint(c.string(name)) + c.cpu_delta(int(t))
    end = t + own / 2
    for child in children:
        end = scope(c, child, end, number, draw, slow, spike)
    end += own / 2
    c.records += b'\x44' + c.cpu_delta(int(end))
    return end

def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__ if __doc__ else 'usage: cpu-run-file.py OUT [options]')
    out = args.pop(0)
    frames, seed, slow, spikes, cpu_from, per_chunk = 20, 1, {}, set(), 0, 0
    while args:
        opt = args.pop(0)
        val = args.pop(0)
        if opt == '--frames':
            frames = int(val)
        elif opt == '--seed':
            seed = int(val)
        elif opt == '--slow':
            name, factor = val.rsplit('=', 1)
            slow[name] = float(factor)
        elif opt == '--spike':
            spikes.add(int(val))
        elif opt == '--cpu-from':
            cpu_from = int(val)
        elif opt == '--chunk-frames':
            per_chunk = int(val)
        else:
            sys.exit('cpu-run-file.py: unknown option ' + opt)
    draw = Draw(seed)
    f = h.File()
    f.out = bytearray(header())
    f.chunk(1, h.setup())
    per_chunk = per_chunk or frames
    c = None
    for n in range(frames):
        if n % per_chunk == 0:
            if c:
                write_chunk(f, c, first_begin, n - per_chunk, n - 1)
            c = Chunk()
        begin = h.CPU0 + n * FRAME_PERIOD
        c.records += b'\x10' + h.varint(n if n % per_chunk == 0 else 0) + c.cpu_delta(begin)
        if n % per_chunk == 0:
            first_begin = len(c.records) # the strings go right after it
        c.records += b'\x13' + h.varint(0) + c.cpu_delta(begin + MS) + h.svarint(1000 if n == 0 else FRAME_PERIOD) + b'\x00\x00'
        c.records += h.begin(c.string('Frame'), 1000) + h.end(2 * MS) + h.submit_end(1000)
        last = begin if n >= cpu_from else begin + 7 * MS
        for tid, tree in ((100, MAIN), (300, RENDER), (5000 + n, UNNAMED)) if n >= cpu_from else ():
            name = b'' if tree is UNNAMED else ('Main Thread' if tree is MAIN else 'Render Thread').encode()
            c.records += b'\x1a' + h.varint(tid) + h.varint(c.string(name.decode()))
            last = max(last, scope(c, tree, begin + MS, n, draw, slow, n in spikes))
        c.records += b'\x11' + c.cpu_delta(int(last + MS / 2)) + h.varint(0) + h.varint(0)
    write_chunk(f, c, first_begin, frames - 1 - (frames - 1) % per_chunk, frames - 1)
    f.write(out)

def write_chunk(f, c, first_begin, first, last):
    r = c.records[:first_begin] + c.string_records + c.records[first_begin:]
    f.chunk(2, r, last - first + 1, first, last)

if __name__ == '__main__':
    main()
