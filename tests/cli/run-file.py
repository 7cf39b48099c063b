#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes a run's file as the recorder leaves it, for stand-ins of a
# program that records a run (tests/cli/runs-cmds-fake.sh): one GPU and
# its queue, then the frames numbered as given, each a submission with a
# "Frame" scope around a "Post Processing" one, with gaps where numbers
# are left out (frames the recorder dropped). With --cut, the file ends
# after its last chunk, without the index, as a program killed before
# the run was closed leaves it; with no frame, its devices alone.
#
#   tests/cli/run-file.py OUT [--cut] [FRAME...]
import importlib.util
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location('hostile_files',
                                              os.path.join(here, 'hostile-files.py'))
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)

def main():
    args = sys.argv[1:]
    if not args:
        sys.exit('usage: tests/cli/run-file.py OUT [--cut] [FRAME...]')
    out = args.pop(0)
    cut = '--cut' in args
    numbers = sorted(int(a) for a in args if a != '--cut')
    f = h.File()
    f.chunk(1, h.setup())
    if numbers:
        r = bytearray()
        for i, n in enumerate(numbers):
            if i == 0:
                r += h.frame_begin(n)
                r += h.string(b'Frame') + h.string(b'Post Processing')
            else:
                r += b'\x10' + h.varint(n - numbers[i - 1] - 1) + h.svarint(1000000)
            r += h.submit(0, 1000, 16000000 if i else 1000)
            r += h.begin(0, 1000) + h.begin(1, 1000) + h.end(3000000 + 1000 * (n % 7))
            r += h.end(1000) + h.submit_end(1000) + h.frame_end(15000000)
        f.chunk(2, r, len(numbers), numbers[0], numbers[-1])
    if cut:
        with open(out, 'wb') as o:
            o.write(f.out)
    else:
        f.write(out)

if __name__ == '__main__':
    main()
