#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the hand-made files of the hostile corpus (tests/fuzz/corpus/
# hostile/): small captures whose records go past the limits of
# format/FORMAT.md (past-limits-*), or up to them where crumbs' writer
# would not write them so (at-limits-*), each built record by record and
# framed as FORMAT.md says (zstd's command compresses the bodies). The
# rest of the corpus is written by crumbs-gen's --stress-* options
# (gen-*.crumbs, the commands in tests/cli/hostile.sh).
#
#   tests/cli/hostile-files.py DIR
import os
import struct
import subprocess
import sys
import tempfile

# ---------------------------------------------------------------------------
# CRC-32C and the frames around the bodies

def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table

CRC_TABLE = _crc_table()

def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF

def skippable(magic, content):
    return struct.pack('<II', magic, len(content)) + content

def header(minor=1):
    producer = b'hostile-files.py'
    c = b'CRUMBS\x1a\n' + struct.pack('<HHIQH', 1, minor, 0, 0, len(producer)) + producer
    return skippable(0x184D2A50, c + struct.pack('<I', crc32c(c)))

def compress(content):
    with tempfile.NamedTemporaryFile(delete=False) as t:
        t.write(content)
        name = t.name
    try:
        return subprocess.run(['zstd', '-q', '-c', '--check', '-19', '--long=27', name],
                              check=True, stdout=subprocess.PIPE).stdout
    finally:
        os.unlink(name)

class File:
    def __init__(self, minor=1):
        self.out = bytearray(header(minor))
        self.index = []

    def chunk(self, kind, content, frames=0, first=0, last=0):
        body = compress(bytes(content))
        c = struct.pack('<B3xIIIQQI', kind, len(body), len(content), frames, first, last,
                        crc32c(body))
        c += struct.pack('<I', crc32c(c))
        self.index.append(struct.pack('<QQQIB3x', len(self.out), first, last, frames, kind))
        self.out += skippable(0x184D2A51, c) + body

    def write(self, path):
        entries = b''.join(self.index)
        count = struct.pack('<I', len(self.index))
        trailer = count + struct.pack('<I', crc32c(entries + count))
        size = 8 + len(entries) + 16
        trailer += struct.pack('<I', size) + b'CRIX'
        data = self.out + skippable(0x184D2A52, entries + trailer)
        with open(path, 'wb') as f:
            f.write(data)

# ---------------------------------------------------------------------------
# Records

def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)

def svarint(v):
    return varint((v << 1) ^ (v >> 63) if v < 0 else v << 1)

def string(s):
    return b'\x01' + varint(len(s)) + s

def gpu(name_id, driver_id):
    return b'\x02' + varint(name_id) + varint(driver_id) + b'\x00\x00\x00\x00'

def queue(g, family, index, flags=1, bits=64):
    return (b'\x03' + varint(g) + varint(family) + varint(index) + varint(flags) +
            struct.pack('<f', 1.0) + bytes([bits]))

def setup(gpus=1, queues_per_gpu=1):
    r = string(b'G') + string(b'')
    for g in range(gpus):
        r += gpu(0, 1)
    for g in range(gpus):
        for q in range(queues_per_gpu):
            r += queue(g, q, 0)
    return r

CPU0 = 1000000000000

def frame_begin(number=0, cpu=CPU0):
    return b'\x10' + varint(number) + svarint(cpu)

def frame_end(cpu_delta=16000000):
    return b'\x11' + svarint(cpu_delta) + varint(0) + varint(0)

def submit(q, cpu_delta=0, ticks=1000):
    return b'\x13' + varint(q) + svarint(cpu_delta) + svarint(ticks) + b'\x00\x00'

def submit_end(dt=1):
    return b'\x15' + svarint(dt)

def begin(name_id, dt=1):
    return b'\x20' + varint(name_id) + svarint(dt)

def end(dt=1):
    return b'\x30' + svarint(dt)

def leaf(name_id, dt=1):
    return b'\x38' + varint(2) + varint(name_id) + b'\x01\x01' + svarint(dt) + svarint(dt)

MAX_CHUNK = 64 << 20

def fill(prefix, unit, suffix, size=MAX_CHUNK):
    n = (size - len(prefix) - len(suffix)) // len(unit)
    return prefix + unit * n + suffix

# ---------------------------------------------------------------------------
# The files

def one_frame(frames_content, gpus=1, queues_per_gpu=1):
    f = File()
    f.chunk(1, setup(gpus, queues_per_gpu))
    f.chunk(2, frames_content, 1, 0, 0)
    return f

def flat_scopes_chunk():
    """One frame of flat timed scopes filling a 64 MiB chunk."""
    head = frame_begin() + string(b'Scope') + submit(0)
    tail = submit_end() + frame_end()
    return one_frame(fill(head, begin(0) + end(), tail))

def flat_scopes_chunks(count=4):
    """Four chunks like flat_scopes_chunk: reading threads each take one."""
    f = File()
    f.chunk(1, setup())
    for i in range(count):
        head = frame_begin(i) + string(b'Scope') + submit(0)
        tail = submit_end() + frame_end()
        f.chunk(2, fill(head, begin(0) + end(), tail), 1, i, i)
    return f

def unmatched_ends():
    """One frame of scope ends with nothing open, filling a chunk."""
    head = frame_begin() + submit(0)
    tail = submit_end() + frame_end()
    return one_frame(fill(head, end(), tail))

def empty_strings():
    """A frame of empty strings filling a chunk: a string table alone."""
    head = frame_begin()
    return one_frame(fill(head, string(b''), frame_end()))

def wide_deep(name_len=4096, depth=255):
    """64 GPUs of 4 queues, each nesting 255 deep in one long name."""
    r = frame_begin() + string(b'N' * name_len)
    for q in range(256):
        r += submit(q) + begin(0) * depth + end() * depth + submit_end()
    r += frame_end()
    return one_frame(r, 64, 4)

def deep_leaves(name_len=4096, depth=255, leaves=1 << 20):
    """Leaves at the bottom of a nesting 255 deep in long names: every
    folded stack, and every exported slice, repeats the long path."""
    head = frame_begin() + string(b'N' * name_len) + string(b'Draw') + submit(0)
    head += begin(0) * (depth - 1)
    tail = end() * (depth - 1) + submit_end() + frame_end()
    unit = leaf(1)
    return one_frame(head + unit * leaves + tail)

def many_frames(frames=200000):
    """Many tiny frames in one chunk, each with its own name: per-frame
    costs (rows of statistics, lines of exports) times many frames."""
    f = File()
    f.chunk(1, setup())
    r = bytearray()
    for i in range(frames):
        r += frame_begin() if i == 0 else b'\x10\x00' + svarint(1000)
        r += string(b'Frame %d' % i) + submit(0) + begin(i) + end() + submit_end()
        r += frame_end(1000)
    f.chunk(2, r, frames, 0, frames - 1)
    return f

NODES = 1 << 18

def at_limit_frame(number=0, first=True):
    """A frame of as many timed scopes as a frame may hold."""
    head = (frame_begin(number) if first else b'\x10\x00' + svarint(1000)) + \
        string(b'Scope') + submit(0)
    return head + (begin(0) + end()) * NODES + submit_end() + frame_end()

def frames_at_limit():
    """One frame at the limit of scopes a frame holds, in a chunk of its own."""
    return one_frame(at_limit_frame())

def frames_at_limit_chunks(count=1):
    """Chunks of 64 MiB, each of frames at the limit of scopes: the
    largest chunks of the largest frames there are."""
    f = File()
    f.chunk(1, setup())
    frame = at_limit_frame()
    per_chunk = MAX_CHUNK // len(frame)
    first = 0
    for _ in range(count):
        r = bytearray()
        for i in range(per_chunk):
            # Each frame has its own strings (ids restart with the chunk).
            r += at_limit_frame(first, True) if i == 0 else \
                b'\x10\x00' + svarint(1000) + frame[len(frame_begin()):]
        # The string ids of the frames after the first: their own STRING
        # records add to the chunk's, so each names its own.
        f.chunk(2, r, per_chunk, first, first + per_chunk - 1)
        first += per_chunk
    return f

def deep_long_names(name_len=4096, depth=254):
    """Leaves, as many as a frame holds, at the bottom of a nesting 254
    deep in 4096-byte names: every folded stack, table row and slice
    repeats the long path or its indent."""
    head = frame_begin() + string(b'N' * name_len) + string(b'Draw') + submit(0)
    head += begin(0, 0) * depth
    tail = end(0) * depth + submit_end() + frame_end()
    return one_frame(head + leaf(1) * (NODES - depth) + tail)

def distinct_stacks(name_len=4096, depth=16):
    """Leaves each of its own name below a nesting of long names: no two
    folded stacks alike, each a long line."""
    head = frame_begin() + string(b'N' * name_len) + submit(0) + begin(0, 0) * depth
    leaves = NODES - depth
    body = bytearray()
    for i in range(leaves):
        body += string(b'%x' % i) + leaf(1 + i)
    tail = end(0) * depth + submit_end() + frame_end()
    return one_frame(head + body + tail)

def submit_ops(q, waits, signals, cpu_delta=0, ticks=1):
    r = b'\x13' + varint(q) + svarint(cpu_delta) + svarint(ticks) + varint(len(waits))
    for sem, value in waits:
        r += varint(sem) + varint(value)
    r += varint(len(signals))
    for sem, value in signals:
        r += varint(sem) + varint(value)
    return r

def waiting_submissions(count=(1 << 20) // 4 - 4):
    """Submissions as many as a frame holds, each waiting on the one
    before: every wait released by a signal of the frame."""
    r = frame_begin()
    for i in range(count):
        r += submit_ops(0, [(1, i)], [(1, i + 1)], 1, 1) + submit_end()
    return one_frame(r + frame_end())

def chunk_strings():
    """Frames within their limits whose strings pass a chunk's."""
    r = bytearray()
    for i in range(3):
        r += frame_begin() if i == 0 else b'\x10\x00' + svarint(1000)
        r += string(b'') * ((1 << 20) - 1) + frame_end()
    f = File()
    f.chunk(1, setup())
    f.chunk(2, r, 3, 0, 2)
    return f

# Vendor counters (format 1.5): a counter is its name's and category's
# string ids, unit, storage and scope.
def counter(name_id, category_id):
    return varint(name_id) + varint(category_id) + varint(0) + varint(3) + varint(2)

def offered(count):
    """Offered counters of distinct 255-byte names and categories."""
    r = bytearray(setup())
    for i in range(count):
        r += string(b'%0255d' % (2 * i)) + string(b'%0255d' % (2 * i + 1))
        r += b'\x5e' + varint(0) + varint(0) + counter(2 + 2 * i, 3 + 2 * i)
    return r

def vendor_counters(count=16384):
    """As many offered counters as a file holds, 255 sets of 64 counters
    in 64 passes named by them, and a frame of set 1's values up to its
    records' limit."""
    r = offered(count)
    for s in range(1, 256):
        r += b'\x5d' + varint(s) + varint(0) + varint(0) + varint(64) + varint(1) + varint(64)
        for k in range(64):
            n = 2 + 2 * ((s * 64 + k) % count)
            r += counter(n, n + 1) + varint(k) + varint(9)
    values = b'\x58' + varint(1) + varint((1 << 64) - 1) + varint((1 << 63) - 1) * 64
    head = frame_begin() + string(b'Scope') + submit(0) + begin(0)
    tail = end() + submit_end() + frame_end()
    f = File(5)
    f.chunk(1, bytes(r))
    f.chunk(2, head + values * (((1 << 20) - 8) // 65) + tail, 1, 0, 0)
    return f

def counter_rows(frames=6, scopes=12000):
    """Frames of 12,000 scopes, each of its own name with all eleven
    pipeline statistics and 64 vendor counters, near a frame's records:
    72,000 scope paths, more than crumbs stats and diff --counters keep."""
    r = bytearray(setup())
    for k in range(64):
        r += string(b'Counter %d' % k)
    r += b'\x5d' + varint(1) + varint(0) + varint(0) + varint(1) + varint(1) + varint(64)
    for k in range(64):
        r += counter(2 + k, 1) + varint(0) + varint(0)
    statistics = b'\x58' + varint(0) + varint((1 << 11) - 1) + varint(1000) * 11
    vendor = b'\x58' + varint(1) + varint((1 << 64) - 1) + varint(1000) * 64
    body = bytearray()
    for i in range(frames):
        body += frame_begin() if i == 0 else b'\x10\x00' + svarint(1000)
        for s in range(scopes):
            body += string(b'Scope %d' % (i * scopes + s))
        body += submit(0)
        for s in range(scopes):
            body += begin(i * scopes + s) + statistics + vendor + end()
        body += submit_end() + frame_end()
    f = File(5)
    f.chunk(1, bytes(r))
    f.chunk(2, bytes(body), frames, 0, frames - 1)
    return f

def past_offered():
    """One offered counter more than a file holds."""
    f = File(5)
    f.chunk(1, bytes(offered(16385)))
    f.chunk(2, frame_begin() + frame_end(), 1, 0, 0)
    return f

# Files past the format's limits, which every command must refuse as
# corrupt, and files at them, which every command must read within the
# bounds its help states.
FILES = {
    'past-limits-flat-scopes': flat_scopes_chunk,
    'past-limits-flat-scopes-4-chunks': flat_scopes_chunks,
    'past-limits-unmatched-ends': unmatched_ends,
    'past-limits-frame-strings': empty_strings,
    'past-limits-chunk-strings': chunk_strings,
    'past-limits-wide-deep-long-names': wide_deep,
    'past-limits-deep-leaves': deep_leaves,
    'at-limits-frame': frames_at_limit,
    'at-limits-chunk': frames_at_limit_chunks,
    'at-limits-4-chunks': lambda: frames_at_limit_chunks(4),
    'at-limits-deep-long-names': deep_long_names,
    'at-limits-distinct-stacks': distinct_stacks,
    'at-limits-waiting-submissions': waiting_submissions,
    'many-named-frames': many_frames,
    'at-limits-vendor-counters': vendor_counters,
    'at-limits-counter-rows': counter_rows,
    'past-limits-offered-counters': past_offered,
}

def main():
    if len(sys.argv) != 2:
        sys.exit('usage: tests/cli/hostile-files.py DIR')
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, make in FILES.items():
        make().write(os.path.join(sys.argv[1], name + '.crumbs'))

if __name__ == '__main__':
    main()
