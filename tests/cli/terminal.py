#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# crumbs on a terminal, as git behaves there: report, info, stats and diff
# run on a pseudo-terminal (of a set size) page their output through
# $CRUMBS_PAGER, else $PAGER (a stand-in script that records that it ran,
# its LESS and what it read), colour it unless NO_COLOR or --color=never
# says not, and fit its tables to the terminal's width. Piped or written to
# a file there is no pager and no colour, and no width limit unless COLUMNS
# or --width sets one. --no-pager, PAGER=cat and an empty CRUMBS_PAGER turn
# the pager off; a pager that cannot start leaves the output on the
# terminal; a reader who quits the pager early changes neither the exit
# status nor stderr. Prints TAP lines.
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios
import unicodedata

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CRUMBS = os.path.join(ROOT, BUILD, "crumbs")
SAMPLE = os.path.join(ROOT, "samples", "deferred.crumbs")
LEAVES = os.path.join(ROOT, "samples", "deferred-leaves.crumbs")
SGR = re.compile(rb"\x1b\[[0-9;]*m")

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


tmp = tempfile.mkdtemp()
LOG = os.path.join(tmp, "pager")
PAGER = os.path.join(tmp, "pager.sh")
with open(PAGER, "w") as f:
    f.write('#!/bin/sh\necho "LESS=${LESS-unset}" >"$PAGER_LOG.ran"\ncat >"$PAGER_LOG.in"\n')
os.chmod(PAGER, 0o755)
# A reader who quits after the first bytes, as q in less does.
QUITTER = os.path.join(tmp, "quitter.sh")
with open(QUITTER, "w") as f:
    f.write('#!/bin/sh\necho quit >"$PAGER_LOG.ran"\nhead -c 100 >"$PAGER_LOG.in"\n')
os.chmod(QUITTER, 0o755)


def base_env(extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("CRUMBS_PAGER", "PAGER", "LESS", "NO_COLOR", "COLUMNS")}
    env.update(LC_ALL="C.UTF-8", TERM="xterm", PAGER_LOG=LOG)
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def clear_log():
    for suffix in (".ran", ".in"):
        if os.path.exists(LOG + suffix):
            os.unlink(LOG + suffix)


def pager_log():
    """(whether the pager ran, its LESS, what it read)"""
    if not os.path.exists(LOG + ".ran"):
        return False, None, b""
    with open(LOG + ".ran") as f:
        ran = f.read().strip()
    data = b""
    if os.path.exists(LOG + ".in"):
        with open(LOG + ".in", "rb") as f:
            data = f.read()
    return True, ran, data


def on_tty(args, env=None, cols=100):
    """Runs crumbs with its standard streams on a pseudo-terminal cols
    wide: (exit status, what reached the terminal)."""
    clear_log()
    pid, fd = pty.fork()
    if pid == 0:
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
            os.chdir(ROOT)
            os.execve(CRUMBS, [CRUMBS] + args, base_env(env or {}))
        finally:
            os._exit(127)
    out = b""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.replace(b"\r\n", b"\n")


def piped(args, env=None):
    clear_log()
    p = subprocess.run([CRUMBS] + args, capture_output=True, env=base_env(env or {}), cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def cells(line):
    """A line's display width: combining marks none, wide characters 2."""
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def widest_table_line(text):
    w = 0
    for line in SGR.sub(b"", text).decode("utf-8", "replace").splitlines():
        if line[:1] in ("│", "┌", "├", "└", "|", "+"):
            w = max(w, cells(line))
    return w


paged = {"CRUMBS_PAGER": PAGER}

# The pager runs on a terminal, with LESS=FRX, and reads the coloured tables.
status, out = on_tty(["report", SAMPLE], paged)
ran, less, data = pager_log()
result(status == 0 and ran and less == "LESS=FRX", "report on a terminal runs the pager with LESS=FRX",
       f"status {status}, ran {ran}, {less}")
result(b"GPU profile for frame 0" in data and b"GPU profile" not in out,
       "the tables go to the pager, not to the terminal", out[:300])
result(b"\x1b[36m" in data, "the pager's input is coloured: the bars", data[:300])
result(0 < widest_table_line(data) <= 100, "the tables fit the terminal's 100 columns",
       widest_table_line(data))
# A LESS of the user's own is kept.
on_tty(["report", SAMPLE], dict(paged, LESS="S"))
result(pager_log()[1] == "LESS=S", "a LESS already set is left as it is", pager_log()[1])
# $PAGER when CRUMBS_PAGER is unset; each command that prints tables.
for cmd in (["info", SAMPLE], ["stats", SAMPLE], ["diff", SAMPLE, SAMPLE]):
    status, out = on_tty(cmd, {"PAGER": PAGER})
    ran, less, data = pager_log()
    result(ran and status == 0 and len(data) > 100, f"crumbs {cmd[0]} runs $PAGER on a terminal",
           f"status {status}, ran {ran}, {len(data)} bytes")

# No pager: --no-pager, PAGER=cat, an empty CRUMBS_PAGER (over PAGER).
for what, args, env in (("--no-pager", ["report", SAMPLE, "--no-pager"], paged),
                        ("PAGER=cat", ["report", SAMPLE], {"PAGER": "cat"}),
                        ("CRUMBS_PAGER empty", ["report", SAMPLE], {"CRUMBS_PAGER": "", "PAGER": PAGER}),
                        ("CRUMBS_PAGER=cat", ["report", SAMPLE], {"CRUMBS_PAGER": "cat", "PAGER": PAGER})):
    status, out = on_tty(args, env)
    result(status == 0 and not pager_log()[0] and b"GPU profile for frame 0" in out
           and b"\x1b[36m" in out and 0 < widest_table_line(out) <= 100,
           f"{what}: no pager, the tables on the terminal, coloured and fitted",
           f"status {status}, ran {pager_log()[0]}, {out[:200]}")

# A pager that cannot start: the output is printed as it would be.
status, out = on_tty(["report", SAMPLE], {"CRUMBS_PAGER": os.path.join(tmp, "no-such-pager")})
result(status == 0 and b"GPU profile for frame 0" in out,
       "a pager that cannot start: the tables on the terminal", out[:300])

# Colour: NO_COLOR, --color=never, TERM=dumb; --color=always wins.
for what, args, env in (("NO_COLOR", ["report", SAMPLE], dict(paged, NO_COLOR="1")),
                        ("--color=never", ["report", SAMPLE, "--color=never"], paged),
                        ("--color never", ["report", SAMPLE, "--color", "never"], paged)):
    on_tty(args, env)
    ran, less, data = pager_log()
    result(ran and b"GPU profile" in data and b"\x1b[" not in data, f"{what}: no colour", data[:200])
on_tty(["report", SAMPLE, "--color=always"], dict(paged, NO_COLOR="1"))
result(b"\x1b[36m" in pager_log()[2], "--color=always colours in spite of NO_COLOR")
status, out = on_tty(["report", SAMPLE], {"TERM": "dumb", "PAGER": None})
result(status == 0 and b"GPU profile" in out and b"\x1b[" not in out,
       "TERM=dumb: no colour, and no less by default", out[:200])

# Piped: no pager, no colour, no width limit; COLUMNS and --width limit it.
status, out, err = piped(["report", SAMPLE], paged)
wide = widest_table_line(out)
result(status == 0 and not pager_log()[0] and b"\x1b[" not in out and wide > 150,
       "piped: no pager, no colour, every column", f"ran {pager_log()[0]}, widest {wide}")
status, same, err = piped(["report", SAMPLE, "--wide"], {"COLUMNS": "60"})
result(same == out, "--wide: every column whatever COLUMNS says")
status, out, err = piped(["report", SAMPLE], {"COLUMNS": "60"})
result(0 < widest_table_line(out) <= 60, "COLUMNS=60 fits the tables of a pipe in 60 columns",
       widest_table_line(out))
status, out, err = piped(["report", SAMPLE], {"COLUMNS": "sixty"})
result(widest_table_line(out) == wide, "a COLUMNS that is no number is no limit")
status, out = on_tty(["report", SAMPLE, "--width", "200", "--no-pager"], cols=60)
result(widest_table_line(out) == wide, "--width 200 over the terminal's 60 columns",
       widest_table_line(out))
status, out = on_tty(["report", SAMPLE, "--wide", "--no-pager"], cols=60)
result(widest_table_line(out) == wide, "--wide over the terminal's 60 columns")
status, out = on_tty(["report", SAMPLE, "--no-pager"], {"COLUMNS": "200"}, cols=60)
result(0 < widest_table_line(out) <= 60, "the terminal's width before COLUMNS",
       widest_table_line(out))
status, out, err = piped(["report", SAMPLE, "--color=always"])
result(b"\x1b[36m" in out and widest_table_line(out) == wide,
       "--color=always to a pipe: coloured, and the codes take no column")

# A reader who quits early: the status is the command's, nothing on stderr.
quit_env = {"CRUMBS_PAGER": QUITTER}
status, out = on_tty(["report", LEAVES, "--frame", "all"], quit_env)
result(status == 0 and pager_log()[0] and b"crumbs" not in out,
       "report, the pager quit early: exit 0, no message", f"status {status}, {out[:300]}")
status, out = on_tty(["stats", LEAVES, "--frames", "0:0"], quit_env)
result(status == 0 and b"crumbs" not in out, "stats, the pager quit early: exit 0, no message",
       f"status {status}, {out[:300]}")
gen = os.path.join(ROOT, BUILD, "crumbs-gen")
a, b = os.path.join(tmp, "a.crumbs"), os.path.join(tmp, "b.crumbs")
subprocess.run([gen, "-o", a, "--frames", "20", "--gpus", "1"], check=True)
subprocess.run([gen, "-o", b, "--frames", "20", "--gpus", "1", "--scale", "Bloom*=1.5"], check=True)
status, out = on_tty(["diff", a, b], quit_env)
result(status == 1 and b"crumbs" not in out,
       "diff that finds a regression, the pager quit early: exit 1, no message",
       f"status {status}, {out[:300]}")
status, out = on_tty(["diff", a, b], paged)
data = pager_log()[2]
result(status == 1 and b"\x1b[31mregressed" in data, "diff through the pager: regressions in red",
       f"status {status}, {data[:300]}")

# Errors in red on a terminal's standard error, not on a pipe's, nor
# with NO_COLOR or --color=never; a note (the frame shown of several)
# never.
missing = os.path.join(tmp, "no-such.crumbs")
status, out = on_tty(["report", missing, "--no-pager"])
result(status == 1 and b"\x1b[31mcrumbs: cannot read" in out,
       "an error on a terminal is red", f"status {status}, {out[:300]}")
status, out = on_tty(["report", missing, "--no-pager"], {"NO_COLOR": "1"})
result(status == 1 and b"crumbs: cannot read" in out and b"\x1b[" not in out,
       "NO_COLOR: the error is not coloured", out[:300])
status, out = on_tty(["report", missing, "--no-pager", "--color=never"])
result(status == 1 and b"crumbs: cannot read" in out and b"\x1b[" not in out,
       "--color=never: the error is not coloured", out[:300])
status, _, err = piped(["report", missing])
result(status == 1 and err.startswith(b"crumbs: cannot read") and b"\x1b[" not in err,
       "an error on a pipe is not coloured", err[:300])
status, out = on_tty(["report", LEAVES, "--no-pager", "--color=never"])
note = [l for l in out.split(b"\n") if b"this was the first" in l]
status2, out2 = on_tty(["report", LEAVES, "--no-pager"])
note2 = [l for l in out2.split(b"\n") if b"this was the first" in l]
result(status2 == 0 and note2 and not note2[0].startswith(b"\x1b"),
       "a note (which frame was shown) is not red", out2[-300:])

subprocess.run(["rm", "-rf", tmp])
print(f"1..{n}")
sys.exit(bad)
