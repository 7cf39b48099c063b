#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Every command reads each capture of the hostile corpus within the memory
# its --help states, or refuses it as corrupt: the hand-made files of
# tests/fuzz/corpus/hostile (tests/cli/hostile-files.py) and the ones
# crumbs-gen's --stress-* options write here. Each command runs with its
# address space limited (RLIMIT_AS, as `ulimit -v`) to the bound its help
# states for the file plus ADDRESS_SLACK, and its largest resident size
# must stay within the bound plus RESIDENT_SLACK. Under the sanitizers,
# whose shadow memory and quarantine no such limit allows for, the files
# are read without one and only how each command ends is checked: the
# memory is checked by the run of the plain build.
#
#   tests/cli/hostile-check.py BUILD
import os
import re
import resource
import subprocess
import sys
import tempfile

BUILD = sys.argv[1] if len(sys.argv) > 1 else 'build'
CRUMBS = os.path.join(BUILD, 'crumbs')
GEN = os.path.join(BUILD, 'crumbs-gen')
CORPUS = 'tests/fuzz/corpus/hostile'
SANITIZED = bool(os.environ.get('CRUMBS_SANITIZE'))

MiB = 1 << 20
# What the help of every reading command states (cmds/cmds.h).
READING = 512 * MiB
ROW = 2048           # a row of statistics
ROW_FRAME = 8        # a row in each frame it is in
THREAD_ROWS = 256 * MiB
FRAME_GPU = 8        # a frame's time on a GPU (info, plot)
# Neither a row nor a memory bound: the program's code and libraries,
# thread stacks (8 MiB each, and the commands start up to 16 threads
# here) and the allocator's reserves take address space.
ADDRESS_SLACK = 384 * MiB
RESIDENT_SLACK = 64 * MiB
# The most rows any file here has: the scopes of a frame at the format's
# limits, and its queues and GPUs.
MAX_ROWS = (1 << 18) + 256 + 64 + 1
# An export passes this rather than write gigabytes to /dev/null.
MAX_BYTES = 256 * MiB
# --counters (stats and diff help): a scope path with 64 vendor counters,
# the paths kept and their bytes, 16 bytes a frame for each of its 75
# statistics and vendor counters.
COUNTER_ROW = 6 * 1024
COUNTER_ROWS = 65536
COUNTER_PATHS = 64 * MiB
COUNTER_FRAME = 16 * 75

n = 0
bad = False


def result(ok, what):
    global n, bad
    n += 1
    print(('ok' if ok else 'not ok') + ' %d - %s' % (n, what), flush=True)
    if not ok:
        bad = True


def gen_files(tmp):
    """The --stress-* captures: 256 queues of nesting 255 deep; names of
    4096 bytes 255 deep, each its own; chunks as large as the writer
    makes them of frames at the limit of scopes; 256 queues of 1024
    scopes each with its own name (a frame of 262,144 rows)."""
    files = {
        'gen-wide': ['--stress-gpus', '64', '--stress-queues', '4', '--stress-depth', '255',
                     '--stress-name-bytes', '256', '--frames', '2'],
        'gen-deep-long-names': ['--stress-depth', '255', '--stress-scopes', '4096',
                                '--stress-name-bytes', '4096', '--stress-distinct',
                                '--frames', '3'],
        'gen-large-chunks': ['--stress-scopes', '262144', '--frames', '12',
                             '--chunk-kib', '16384'],
        'gen-many-rows': ['--stress-queues', '256', '--stress-scopes', '1024',
                          '--stress-distinct', '--frames', '4'],
    }
    out = []
    for name, args in files.items():
        path = os.path.join(tmp, name + '.crumbs')
        p = subprocess.run([GEN, *args, '-o', path], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        result(p.returncode == 0, 'crumbs-gen writes %s %s' % (name, p.stderr.strip()))
        if p.returncode == 0:
            out.append(path)
    return out


def info_of(path):
    """Frames and GPUs as crumbs info says, without a limit: (frames,
    gpus), 1 each when it cannot say."""
    p = subprocess.run([CRUMBS, 'info', path], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, errors='replace')
    frames = re.search(r'^frames\s+(\d+)', p.stdout, re.M)
    gpus = len(re.findall(r'^GPU \d+ ', p.stdout, re.M))
    return (int(frames.group(1)) if frames else 1), max(gpus, 1)


def bound(command, frames, gpus):
    """The memory the help of `command` states for a file of this many
    frames and GPUs and at most MAX_ROWS rows."""
    if command.endswith(' --counters'):
        runs = 2 if command.startswith('diff') else 1
        return (bound(command.split()[0], frames, gpus) +
                runs * (COUNTER_ROWS * (COUNTER_ROW + COUNTER_FRAME * frames) + COUNTER_PATHS))
    if command in ('stats', 'diff', 'plot'):
        # plot's rows of top scopes take the statistics stats takes.
        rows = ROW * MAX_ROWS + ROW_FRAME * MAX_ROWS * frames
        return (READING + THREAD_ROWS + rows * (2 if command == 'diff' else 1) +
                (FRAME_GPU * frames * gpus if command == 'plot' else 0))
    if command in ('info', 'plot --rows 0'):
        return READING + FRAME_GPU * frames * gpus
    return READING


def run_limited(argv, limit, address=None):
    """Runs argv with `limit` bytes of memory (the address space `address`,
    else limit + ADDRESS_SLACK): its status, standard error and largest
    resident size (None when not known)."""
    env = dict(os.environ, CRUMBS_THREADS='16')
    if SANITIZED:
        pre = None
    else:
        def pre():
            cap = address or limit + ADDRESS_SLACK
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    with tempfile.TemporaryFile() as errf:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errf, env=env,
                             preexec_fn=pre)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        errf.seek(0)
        err = errf.read().decode('utf-8', 'replace')
    return p.returncode, err, usage.ru_maxrss * 1024


COMMANDS = [
    ('info', lambda f: ['info', f]),
    ('report', lambda f: ['report', f]),
    ('report', lambda f: ['report', f, '--frame', 'last', '--no-leaf']),
    ('stats', lambda f: ['stats', f]),
    ('stats', lambda f: ['stats', f, '--by', 'pipeline']),
    ('diff', lambda f: ['diff', f, f]),
    ('stats --counters', lambda f: ['stats', f, '--counters', '--format', 'json']),
    ('diff --counters', lambda f: ['diff', f, f, '--counters', '--format', 'csv']),
    ('export', lambda f: ['export', f, '--format', 'perfetto', '--max-bytes', str(MAX_BYTES)]),
    ('export', lambda f: ['export', f, '--format', 'chrome', '--max-bytes', str(MAX_BYTES)]),
    ('export', lambda f: ['export', f, '--format', 'folded', '--max-bytes', str(MAX_BYTES)]),
    ('plot', lambda f: ['plot', f]),
    ('plot --rows 0', lambda f: ['plot', f, '--rows', '0']),
    ('plot', lambda f: ['plot', f, '--frame', 'first']),
]

CORRUPT = re.compile(r"cannot read '[^']*': corrupt at byte \d+|corrupt at byte \d+")
OVER = re.compile(r'would pass --max-bytes|more would pass --max-bytes')


def check(path):
    name = os.path.basename(path)[:-len('.crumbs')]
    past = name.startswith('past-limits')
    frames, gpus = info_of(path)
    for command, args in COMMANDS:
        argv = [CRUMBS, *args(path)]
        limit = bound(command, frames, gpus)
        shown_limit = ' (sanitizers: no memory limit)' if SANITIZED else ''
        rc, err, peak = run_limited(argv, limit)
        shown = ' '.join(args(name))
        first = err.strip().splitlines()[0] if err.strip() else ''
        if rc < 0 or 'out of memory' in err or 'Sanitizer' in err or 'runtime error' in err:
            result(False, '%s: crashed or ran out of memory (status %d): %s' % (shown, rc, first))
            continue
        if past:
            # Refused as corrupt, or read up to frames before the damage
            # (report and plot read only the frames they show); info reads
            # every frame.
            ok = (rc in (1, 2) and CORRUPT.search(err)) or (rc == 0 and command != 'info')
            result(bool(ok), '%s: refused as corrupt or read before the damage (status %d)%s %s'
                   % (shown, rc, shown_limit, first))
        else:
            ok = rc == 0 or (command == 'export' and rc == 1 and OVER.search(err))
            result(bool(ok), '%s: read%s (status %d)%s %s'
                   % (shown, '' if SANITIZED else ' within the limit', rc, shown_limit, first))
        if not SANITIZED:
            result(peak <= limit + RESIDENT_SLACK,
                   '%s: resident %d MiB within the %d MiB stated'
                   % (shown, peak // MiB, limit // MiB))


def main():
    files = sorted(os.path.join(CORPUS, f) for f in os.listdir(CORPUS) if f.endswith('.crumbs'))
    result(any('past-limits' in f for f in files) and any('at-limits' in f for f in files),
           'the corpus holds files past and at the limits')
    with tempfile.TemporaryDirectory() as tmp:
        files += gen_files(tmp)
        for path in files:
            check(path)
    # Deep paths: the diff table shortens them, its CSV does not.
    with tempfile.TemporaryDirectory() as tmp:
        deep = os.path.join(tmp, 'deep.crumbs')
        subprocess.run([GEN, '--stress-depth', '40', '--stress-name-bytes', '64', '-o', deep],
                       check=True, stdout=subprocess.DEVNULL)
        table = subprocess.run([CRUMBS, 'diff', deep, deep], stdout=subprocess.PIPE,
                               text=True).stdout.splitlines()
        widest = max((len(line) for line in table), default=0)
        result(len(table) > 40 and widest < 300 and any('\u2026' in line for line in table),
               'diff table: paths of 40 names of 64 bytes shortened, widest line %d' % widest)
        csv = subprocess.run([CRUMBS, 'diff', deep, deep, '--format', 'csv'],
                             stdout=subprocess.PIPE, text=True).stdout.splitlines()
        longest = max((len(line) for line in csv), default=0)
        result(longest > 40 * 64, 'diff CSV: paths whole, longest line %d' % longest)
    # The limit bites: a command given less than it needs fails cleanly.
    if not SANITIZED:
        rc, err, _ = run_limited([CRUMBS, 'stats',
                                  os.path.join(CORPUS, 'at-limits-4-chunks.crumbs')],
                                 96 * MiB, 160 * MiB)
        result(rc == 1 and 'out of memory' in err,
               'stats under too small a limit says out of memory (status %d)' % rc)
    print('1..%d' % n)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
