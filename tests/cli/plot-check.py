#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# crumbs plot, read and rendered independently. Captures made by crumbs-gen
# (one frame on one queue, several queues with semaphore waits on two GPUs,
# runs with spikes, short and long) and by the sample renderer are drawn;
# each SVG must parse as XML (xmllint and Python's reader), hold no script
# nor anything from outside, and carry a lane per queue and CPU thread.
# Every scope of `crumbs report` must have a <title> with its name and
# inclusive time in its queue's or thread's lane, and each wait that
# another queue released an arrow (the flows of `crumbs export`); on a
# frame whose CPU side tests/cli/cpu-file.py writes, each CPU scope must be
# a block where its times put it and each submission an arrow from the
# scope that made it; a run's median, p95 and spikes must be
# crumbs stats', and so must the rows of its top scopes below each graph:
# which rows (worked out here from the JSON's rows), each frame's values
# in its hover <title>, the spikes marked across them; on runs of two
# GPUs, of CPU threads and tasks, of the sample renderer, of one frame,
# of no scope, of thousands of scopes and of names of 4096 bytes; each
# memory heap's line under its GPU's frame times, its high-water and
# growth crumbs stats'.
# Headless Chromium turns each picture into a PNG (once more
# on a dark page), which must not be blank, with ink in every lane. A
# capture that cannot be read exits 1, as with report, stats and export.
# Prints TAP lines.
import collections
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CRUMBS = os.path.join(ROOT, BUILD, "crumbs")
GEN = os.path.join(ROOT, BUILD, "crumbs-gen")
RENDERER = os.environ.get("CRUMBS_RENDERER", os.path.join(ROOT, BUILD, "sample-renderer"))
SVG = "{http://www.w3.org/2000/svg}"

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


def run(*args, env=None):
    e = dict(os.environ, LC_ALL="C.UTF-8")
    if env:
        e.update(env)
    return subprocess.run(args, capture_output=True, text=True, env=e)


# ---------------------------------------------------------------------------
# PNG, decoded with the standard library

def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"PNG of depth {depth}, colour type {colour}")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def ink(pixel, background):
    return max(abs(pixel[k] - background[k]) for k in range(3)) > 60


# ---------------------------------------------------------------------------
# Chromium

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def render(svg_path, png_path, width, height, dark=False):
    """Screenshots the SVG (or a dark page with it as an image) with
    headless Chromium; returns an error text or None."""
    target = svg_path
    if dark:
        target = svg_path[:-4] + "-dark.html"
        with open(target, "w") as f:
            f.write('<!DOCTYPE html><html><body style="margin:0;overflow:hidden;'
                    f'background:#0d1117"><img src="{os.path.basename(svg_path)}"></body></html>')
    home = tempfile.mkdtemp(dir=TMP)
    try:
        p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                            "--hide-scrollbars", "--force-device-scale-factor=1",
                            f"--user-data-dir={home}", f"--screenshot={png_path}",
                            f"--window-size={width},{height}", "file://" + target],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, HOME=home))
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"cannot run chromium: {e}"

    if not os.path.exists(png_path):
        return f"chromium wrote no PNG (status {p.returncode}): {p.stderr[-800:]}"
    return None


# ---------------------------------------------------------------------------
# The SVG

def parse_svg(path, what):
    """Parses the SVG with xmllint and with Python; returns its root or None."""
    p = run("xmllint", "--noout", path)
    result(p.returncode == 0, f"{what}: xmllint parses the SVG", p.stderr)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        result(False, f"{what}: Python's XML reader parses the SVG", e)
        return None
    result(root.tag == SVG + "svg", f"{what}: Python's XML reader parses an <svg>", root.tag)
    text = open(path, encoding="utf-8").read()
    fonts = set(re.findall(r"font-family:([^;}]+)", text))
    outside = [e.tag for e in root.iter() if e.tag in (SVG + "script", SVG + "foreignObject",
                                                       SVG + "image", SVG + "use")]
    hrefs = [v for e in root.iter() for k, v in e.attrib.items() if k.endswith("href")]
    result(not outside and not hrefs and "url(http" not in text and "@import" not in text and
           fonts <= {"sans-serif", "serif", "monospace"},
           f"{what}: no script, nothing from outside, generic fonts",
           f"elements {outside}, hrefs {hrefs}, fonts {fonts}")
    # A class the style does not define draws a shape black.
    style = "".join(e.text or "" for e in root.iter(SVG + "style"))
    defined = set(re.findall(r"\.([A-Za-z][\w-]*)", style))
    used = {c for e in root.iter() for c in (e.get("class") or "").split()}
    result(used and used <= defined, f"{what}: the style defines every class used",
           f"undefined: {sorted(used - defined)}")
    return root


def size_of(root):
    return int(float(root.get("width"))), int(float(root.get("height")))


def lane_key(g):
    """A lane's key: (gpu, queue), ('CPU', name) for a CPU thread's or
    timeline's, ('marks', name) for a timeline's frames of another kind
    alone; None for other groups."""
    if g.get("data-queue") is not None:
        return (int(g.get("data-gpu")), g.get("data-queue"))
    if g.get("data-cpu") == "marks":
        return ("marks", g.get("data-name"))
    if g.get("data-cpu") is not None:
        return ("CPU", g.get("data-name"))
    return None


def drawn_lanes(root):
    """lanes_of's lanes that draw something a pixel wide or more: a CPU
    frame far shorter than its GPU work leaves a thread's scopes under a
    pixel each."""
    out = {}
    for g in root.iter(SVG + "g"):
        key = lane_key(g)
        if key is None or key[0] == "marks":
            continue
        wide = sum(float(r.get("width")) for r in g.iter(SVG + "rect")
                   if r.get("class") != "lane" and r.get("width"))
        if wide >= 4:
            out[key] = lanes_of(root)[key]
    return out


def lanes_of(root):
    """{key: (x, y, w, h)} of a timeline's lanes (lane_key)."""
    lanes = {}
    for g in root.iter(SVG + "g"):
        key = lane_key(g)
        if key is None:
            continue
        rect = next((r for r in g.iter(SVG + "rect") if r.get("class") == "lane"), None)
        if rect is not None:
            lanes[key] = tuple(float(rect.get(k)) for k in ("x", "y", "width", "height"))
    return lanes


def report_tables(path, frame):
    """Per (gpu, queue) of `crumbs report`, and ('CPU', thread) of its CPU
    blocks: a Counter of (name, inclusive ms as printed) of every scope and
    event below the queue or thread."""
    p = run(CRUMBS, "report", path, "--frame", str(frame), "--ascii", "--no-stats",
            "--no-exclusive", "--no-percent")
    if p.returncode != 0:
        raise RuntimeError(f"crumbs report: {p.stderr}")
    tables, key = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"GPU profile for frame \d+ \| GPU (\d+) \(.*\) \| (.+)$", line)
        if m:
            key = (int(m.group(1)), m.group(2))
            tables[key] = collections.Counter()
            continue
        m = (re.match(r"CPU profile for frame \d+ \| thread '(.*)' \(tid \d+[^)]*\)$", line) or
             re.match(r"CPU profile for frame \d+ \| tasks on timeline '(.*)'$", line))
        if m:
            key = ("CPU", m.group(1))
            tables[key] = collections.Counter()
            continue
        if key is None or not line.startswith("|"):
            continue
        cells = line.split("|")[1:-1]
        if len(cells) != 2 or not cells[0].strip().endswith(" ms"):
            continue
        raw = re.sub(r"( \[(wait|open|earlier)\])+$", "", cells[1][1:].rstrip())
        if raw == raw.lstrip(" "):
            continue  # the queue's own row
        tables[key][(raw.strip(), cells[0].strip()[:-3])] += 1
    return tables


def lane_titles(root, merged=None, more=None):
    """Per lane (lane_key): a Counter of (name, inclusive ms) of its blocks'
    titles; into `merged`, per lane, the names of blocks drawn together
    as one under a pixel each, and into `more` how many such blocks such
    a title counts without naming them ("and N more")."""
    out = {}
    for g in root.iter(SVG + "g"):
        if lane_key(g) is None:
            continue
        c = collections.Counter()
        for block in g.iter(SVG + "g"):
            t = block.find(SVG + "title")
            if t is None or t.text is None:
                continue
            lines = t.text.split("\n")
            if merged is not None and re.match(r"\d+ blocks under a pixel each", lines[0]):
                unnamed = re.fullmatch(r"and (\d+) more", lines[-1])
                if unnamed and more is not None:
                    more[lane_key(g)] = more.get(lane_key(g), 0) + int(unnamed.group(1))
                merged.setdefault(lane_key(g), set()).update(lines[1:-1] if unnamed else lines[1:])
            m = re.match(r"inclusive (\d+\.\d{3}) ms \u00b7 exclusive", lines[1]) if len(lines) > 1 else None
            if m:
                name = re.sub(r" \((draw|dispatch|copy|render pass|blit|clear|resolve|trace rays|event)\)$",
                              "", lines[0])
                c[(name, m.group(1))] += 1
        out[lane_key(g)] = c
    return out


def check_timeline(path, frame, what, extra=(), expect_lanes=None, expect_signals=False):
    """Draws frame `frame` of a capture as a timeline and checks it; returns
    (svg path, root) for rendering."""
    svg = os.path.join(TMP, what.replace(" ", "-") + ".svg")
    p = run(CRUMBS, "plot", path, "--frame", str(frame), "-o", svg, *extra)
    if not result(p.returncode == 0 and p.stdout == "", f"{what}: crumbs plot draws it",
                  p.stderr):
        return None, None
    root = parse_svg(svg, what)
    if root is None:
        return None, None
    tables = report_tables(path, frame)
    if expect_lanes is None:
        expect_lanes = set(tables)
    lanes = {k: v for k, v in lanes_of(root).items() if k[0] != "marks"}
    result(set(lanes) == set(expect_lanes), f"{what}: a lane for each queue and CPU thread",
           f"lanes {sorted(lanes, key=str)}, queues {sorted(expect_lanes, key=str)}")

    # Every scope's name and inclusive time, in its queue's lane. Drawn wide,
    # so that no block is under a pixel and merged with its neighbours.
    wide = os.path.join(TMP, what.replace(" ", "-") + "-wide.svg")
    p = run(CRUMBS, "plot", path, "--frame", str(frame), "-o", wide, "--width", "20000", *extra)
    merged, more = {}, {}
    titles = lane_titles(ET.parse(wide).getroot(), merged, more) if p.returncode == 0 else {}
    missing = []
    for key in expect_lanes:
        want, got = tables.get(key, collections.Counter()), titles.get(key, collections.Counter())
        # A CPU frame can span far more than its GPU work: scopes of a few
        # microseconds may still share a pixel, drawn as one block that
        # names them.
        for k in list((want - got).elements()):
            if k[0] in merged.get(key, ()):
                want[k] -= 1
        # As many more as those titles count, unnamed.
        unnamed = more.get(key, 0)
        for k in list((want - got).elements()):
            if unnamed > 0:
                want[k] -= 1
                unnamed -= 1
        # A merged block names the scopes at its own depth: those inside
        # them (a few microseconds each) are under it, drawn and named by
        # nothing.
        for k in list((want - got).elements()):
            if key in merged and float(k[1]) < 0.02:
                want[k] -= 1
        if +want != got:
            missing.append(f"{key}: missing {list((want - got).items())[:5]}, "
                           f"extra {list((got - want).items())[:5]}")
    count = sum(sum(tables.get(k, collections.Counter()).values()) for k in expect_lanes)
    result(not missing and count > 0,
           f"{what}: each of {count} scopes has a <title> with its name and inclusive time "
           "in its queue's or thread's lane", "\n".join(missing))
    if expect_signals:
        arrows = [e for e in root.iter(SVG + "path") if e.get("class") == "signal" and
                  e.find(SVG + "title") is not None]
        waits = [e for e in root.iter(SVG + "rect") if e.get("class") == "wait"]
        result(arrows and waits and all("for a signal from" in a.find(SVG + "title").text
                                        for a in arrows),
               f"{what}: waits shaded ({len(waits)}) and drawn from the signalling queue "
               f"({len(arrows)} arrows)")
        # An arrow for each wait that another queue's signal released: the
        # signal flows crumbs export writes for the same frame.
        p = run(CRUMBS, "export", path, "--format", "chrome", "--frames", f"{frame}:{frame}",
                *extra)
        events = json.loads(p.stdout)["traceEvents"] if p.returncode == 0 else []
        tracks = {(e["pid"], e["tid"]): e["args"]["name"].removesuffix(" submissions")
                  for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
        ends = collections.defaultdict(dict)
        for e in events:
            if e.get("name") == "signal" and e.get("ph") in ("s", "f"):
                ends[e["id"]][e["ph"]] = (e["pid"], tracks.get((e["pid"], e["tid"])))
        flows = collections.Counter((v["f"][1], v["s"][1]) for v in ends.values()
                                    if "s" in v and "f" in v and v["s"][0] == v["f"][0])
        drawn = collections.Counter()
        for a in arrows:
            m = re.match(r"(.*) waited \d+\.\d{3} ms for a signal from (.*) at ",
                         a.find(SVG + "title").text)
            if m and m.group(2) != "the host":
                drawn[(m.group(1), m.group(2))] += 1
        result(p.returncode == 0 and flows and drawn == flows,
               f"{what}: an arrow for each of the {sum(flows.values())} waits another queue's "
               "signal released, as crumbs export has them",
               f"arrows (waiter, signaller): {sorted(drawn.items())}\n"
               f"export's flows: {sorted(flows.items())}\n{p.stderr}")
    return svg, root


def check_rendered(svg, root, what, regions, dark=False):
    """Renders the SVG and checks the PNG: not blank, ink in each region."""
    if svg is None:
        return
    width, height = size_of(root)
    png = svg[:-4] + ("-dark" if dark else "") + ".png"
    page = "a dark page" if dark else "Chromium"
    err = render(svg, png, width, height, dark)
    if not result(err is None, f"{what}: rendered by headless Chromium on {page}", err):
        return
    try:
        w, h, rows = read_png(png)
    except (ValueError, zlib.error) as e:
        result(False, f"{what}: the PNG decodes", e)
        return
    background = rows[2][2]
    inked = sum(1 for row in rows for px in row if ink(px, background))
    colours = len({px for row in rows[::4] for px in row[::4]})
    result((w, h) == (width, height) and inked > w * h // 50 and colours > 8,
           f"{what} on {page}: the PNG is not blank ({inked} of {w * h} pixels drawn, "
           f"{colours} colours)", f"size {w}x{h}, expected {width}x{height}")
    empty = []
    regions = dict(regions, **{str(k): v for k, v in STRIPS.get(svg, {}).items()})
    for key, (x, y, rw, rh) in regions.items():
        x0, y0, x1, y1 = int(x) + 2, int(y) + 2, int(x + rw) - 2, int(y + rh) - 2
        count = sum(1 for yy in range(y0, min(y1, h)) for xx in range(x0, min(x1, w))
                    if ink(rows[yy][xx], background))
        if count < 20:
            empty.append(f"{key}: {count} pixels drawn in x {x0}..{x1}, y {y0}..{y1}")
    result(not empty, f"{what} on {page}: every one of {len(regions)} lanes is drawn",
           "\n".join(empty))


def check_run(path, what, extra=(), spike=(), extra_stats=()):
    """Draws a run's frame times; checks them against crumbs stats: a
    panel per GPU, and the CPU frame time's above them where the run has
    CPU threads."""
    svg = os.path.join(TMP, what.replace(" ", "-") + ".svg")
    p = run(CRUMBS, "plot", path, "-o", svg, *extra, *spike)
    if not result(p.returncode == 0 and p.stdout == "", f"{what}: crumbs plot draws it", p.stderr):
        return None, None, {}
    root = parse_svg(svg, what)
    if root is None:
        return None, None, {}
    st = json.loads(run(CRUMBS, "stats", path, "--format", "json", "--per-frame", *spike,
                        *extra_stats).stdout)
    # The panels by key: a GPU's number, or "cpu" for the CPU frame time
    # (its row in crumbs stats is the one named CPU).
    gpus = {r["gpu"]: r for r in st["rows"] if r["kind"] == "gpu"}
    gpus.update({"cpu": r for r in st["rows"] if r["kind"] == "cpu" and r["name"] == "CPU"})
    panels = {}
    wrong = []
    order = []
    for g in root.iter(SVG + "g"):
        if g.get("data-cpu") == "frame":
            gpu = "cpu"
        elif g.get("data-gpu") is not None:
            gpu = int(g.get("data-gpu"))
        else:
            continue
        order.append(gpu)
        rect = next(r for r in g.iter(SVG + "rect") if r.get("class") == "lane")
        panels[gpu] = tuple(float(rect.get(k)) for k in ("x", "y", "width", "height"))
        row = gpus.get(gpu)
        if row is None:
            wrong.append(f"GPU {gpu}: not in crumbs stats")
            continue
        texts = [t.text or "" for t in g.iter(SVG + "text")]
        for stat in ("median", "p95"):
            want = f"{stat} {row['time'][stat + '_ns'] / 1e6:.3f} ms"
            if want not in texts:
                wrong.append(f"GPU {gpu}: no label '{want}'")
        spikes = [c for c in g.iter(SVG + "circle") if c.get("class") == "spike"]
        marked = 0
        for c in spikes:
            t = c.find(SVG + "title").text
            m = re.match(r"frames \d+ to \d+: (\d+) spikes?", t)
            marked += int(m.group(1)) if m else 1
        if marked != row["spikes"]["count"]:
            wrong.append(f"GPU {gpu}: {marked} spikes marked, crumbs stats counts "
                         f"{row['spikes']['count']}")
        series = next(e for e in g.iter(SVG + "path") if e.get("class") == "series")
        points = len(re.findall(r"[ML]", series.get("d")))
        columns = int(panels[gpu][2]) + 1
        if row["frames"] <= columns and points != row["frames"]:
            wrong.append(f"GPU {gpu}: {points} points for {row['frames']} frames")
        if points > 2 * columns:
            wrong.append(f"GPU {gpu}: {points} points, more than its {columns} columns hold")
    if "cpu" in panels and order[0] != "cpu":
        wrong.append(f"the CPU's panel is not the first: {order}")
    result(not wrong and set(panels) == set(gpus),
           f"{what}: a graph per GPU{' and the CPU' if 'cpu' in gpus else ''} with crumbs "
           "stats' median, p95 and spikes",
           "\n".join(wrong) + f"\npanels {sorted(map(str, panels))}, rows {sorted(map(str, gpus))}")
    rows = list(extra)[list(extra).index("--rows") + 1] if "--rows" in extra else "6"
    STRIPS[svg] = check_rows(root, st, gpus, what, int(rows))
    return svg, root, panels


# The strips of rows of each run's picture, by its file: check_rendered
# looks for ink in them too.
STRIPS = {}


# ---------------------------------------------------------------------------
# The rows of top scopes below a run's graphs

def stats_tree(st):
    """crumbs stats' rows as a tree read from their paths: {path: row},
    {parent path: [child rows]}."""
    by_path = {r["path"]: r for r in st["rows"]}
    children = collections.defaultdict(list)
    for r in st["rows"]:
        parent = r["path"][:-len(r["name"]) - 3] if r["path"].endswith(" / " + r["name"]) else None
        if parent is not None:
            children[parent].append(r)
    return by_path, children


NAMED = ("scope", "cpu_scope", "task", "state")


def expected_rows(st, panel, count):
    """What plot-check expects in the rows of a panel (a GPU's number or
    'cpu'), worked out from crumbs stats' JSON alone: below each root (a
    queue of that GPU; a CPU thread or task timeline), the first level
    that does not hold one scope alone with scopes below it; ranked by
    their values summed over the run. Returns [(total, path)] of every
    candidate, most first."""
    _, children = stats_tree(st)
    if panel == "cpu":
        roots = [r for r in st["rows"] if r["kind"] in ("thread", "timeline")]
    else:
        roots = [r for r in st["rows"] if r["kind"] == "busy" and r["gpu"] == panel]
    found = []
    for root in roots:
        path = root["path"]
        while True:
            level = [c for c in children.get(path, []) if c["kind"] in NAMED]
            if len(level) == 1 and [c for c in children.get(level[0]["path"], [])
                                    if c["kind"] in NAMED]:
                path = level[0]["path"]
                continue
            break
        for c in level:
            total = sum(v for v in c["values_ns"] if v is not None)
            if total:
                found.append((total, c["path"]))
    found.sort(key=lambda t: -t[0])
    return found


def check_rows(root, st, gpus, what, count):
    """The rows of top scopes of every panel against crumbs stats: which
    rows (the rule of expected_rows), each frame's <title> (its number,
    the panel's time and each row's, to the microsecond), and the spikes
    marked across them the frames above the panel's threshold. Returns
    {(panel, row): region} of the strips drawn, for the rendering check."""
    numbers = st["frames"]["numbers"]
    index = {n: i for i, n in enumerate(numbers)}
    by_path, _ = stats_tree(st)
    strips = {}
    wrong = []
    checked_titles = 0
    for g in root.iter(SVG + "g"):
        if g.get("data-cpu") == "frame":
            panel = "cpu"
        elif g.get("data-gpu") is not None:
            panel = int(g.get("data-gpu"))
        else:
            continue
        section = next((e for e in g.iter(SVG + "g") if e.get("data-rows") is not None), None)
        if count == 0:
            if section is not None:
                wrong.append(f"{panel}: rows drawn with --rows 0")
            continue
        if section is None:
            wrong.append(f"{panel}: no rows below the graph")
            continue
        frame_row = gpus[panel]
        drawn = [e for e in section.iter(SVG + "g") if e.get("data-row") is not None]
        want = expected_rows(st, panel, count)
        if int(section.get("data-rows")) != len(drawn) or len(drawn) != min(count, len(want)):
            wrong.append(f"{panel}: {len(drawn)} rows drawn, of {len(want)} candidates, "
                         f"--rows {count}")
            continue
        # The top `count`, most first; of rows of equal time, any.
        cut = want[len(drawn) - 1][0] if drawn else None
        must = {p for t, p in want if cut is not None and t > cut}
        may = {p for t, p in want if t == cut}
        # data-path keeps 1024 bytes of a path, and an ellipsis.
        full = [p for _, p in want]
        got = []
        for e in drawn:
            p = e.get("data-path")
            if p.endswith("\u2026"):
                p = next((f for f in full if f.startswith(p[:-1])), p)
            got.append((int(e.get("data-total-ns")), p))
        if [t for t, _ in got] != [t for t, _ in want[:len(drawn)]] or \
                not must <= {p for _, p in got} or not {p for _, p in got} <= must | may:
            wrong.append(f"{panel}: rows {got}, expected the first {len(drawn)} of {want[:12]}")
            continue
        rows = [by_path[p] for _, p in got]
        for k, e in enumerate(drawn):
            r = next(x for x in e.iter(SVG + "rect") if x.get("class") == "strip")
            region = tuple(float(r.get(a)) for a in ("x", "y", "width", "height"))
            # A row all of whose times are under two pixels of the strips'
            # common scale is drawn flat on its baseline: no ink to find.
            area = next((x for x in e.iter(SVG + "path") if "blk" in (x.get("class") or "")), None)
            ys = [float(a or b) for a, b in re.findall(r"[ML][\d.]+ ([\d.]+)|V([\d.]+)",
                                                       area.get("d") if area is not None else "")]
            if ys and region[1] + region[3] - min(ys) < 2:
                continue
            strips[(panel, k)] = region
        legend = [t for t in section.iter(SVG + "rect") if "blk" in (t.get("class") or "")]
        if sorted(t.get("class") for t in legend) != sorted(f"c{k} blk" for k in range(len(rows))):
            wrong.append(f"{panel}: the legend's colours {[t.get('class') for t in legend]}")

        def ms(v):
            return "not in this frame" if v is None else f"{v / 1e6:.3f} ms"

        threshold = frame_row["spikes"]["threshold_ns"]
        values = frame_row["values_ns"]
        spikes = {numbers[i] for i, v in enumerate(values) if v is not None and v > threshold}
        if len(spikes) != frame_row["spikes"]["count"]:
            wrong.append(f"{panel}: {len(spikes)} values above the threshold, stats counts "
                         f"{frame_row['spikes']['count']}")
        name = "CPU" if panel == "cpu" else f"GPU {panel}"
        hovers = [h for h in section.iter(SVG + "rect") if h.get("class") == "hover"]
        per_frame = not any(h.get("data-first") for h in hovers)
        for h in hovers:
            lines = h.find(SVG + "title").text.split("\n")
            i = index[int(h.get("data-frame"))]
            if per_frame:
                head = f"frame {numbers[i]}"
                v = values[i]
                time = (f"{name} frame time {v / 1e6:.3f} ms" if v is not None else None)
                if v is not None and numbers[i] in spikes:
                    time += f", a spike (above {threshold / 1e6:.3f} ms)"
                if lines[0] != head or (time is not None and lines[1] != time):
                    wrong.append(f"{panel}: title {lines[:2]}, expected {head!r}, {time!r}")
            if len(lines) != 2 + len(rows):
                wrong.append(f"{panel}: title of {len(lines)} lines for {len(rows)} rows")
                continue
            for k, r in enumerate(rows):
                want_v = ms(r["values_ns"][i])
                if not lines[2 + k].endswith(" " + want_v if r["values_ns"][i] is not None
                                             else ": " + want_v):
                    wrong.append(f"{panel}: frame {numbers[i]}, row {r['path']}: "
                                 f"{lines[2 + k]!r}, crumbs stats {want_v}")
            checked_titles += 1
        marks = [m for m in section.iter(SVG + "path") if m.get("class") == "spikemark"]
        if per_frame:
            if len(hovers) != len(numbers):
                wrong.append(f"{panel}: {len(hovers)} hover columns for {len(numbers)} frames")
            marked = {int(m.get("data-frame")) for m in marks}
            if rows and marked != spikes:
                wrong.append(f"{panel}: spikes marked {sorted(marked)}, crumbs stats' "
                             f"{sorted(spikes)}")
        else:
            marked = sum(int(m.get("data-spikes")) for m in marks)
            if rows and marked != len(spikes):
                wrong.append(f"{panel}: {marked} spikes marked in columns, {len(spikes)} in stats")
            covered = sum(index[int(h.get("data-last"))] - index[int(h.get("data-first"))] + 1
                          for h in hovers)
            if covered != len(numbers):
                wrong.append(f"{panel}: the hover columns cover {covered} of {len(numbers)} frames")
    result(not wrong, f"{what}: the rows of top scopes are crumbs stats' (which, each frame's "
           f"values in {checked_titles} titles, the spikes marked)", "\n".join(wrong[:20]))
    return strips


def scopeless_run(path, frames):
    """A run of `frames` frames whose submissions hold no scope, written
    record by record (tests/cli/hostile-files.py)."""
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("hostile_files",
                                                  os.path.join(here, "hostile-files.py"))
    h = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(h)
    f = h.File()
    f.chunk(1, h.setup())
    r = bytearray()
    for i in range(frames):
        r += h.frame_begin(0) if i == 0 else b"\x10" + h.varint(0) + h.svarint(1000000)
        r += h.submit(0, 1000, 16000000 if i else 1000)
        r += h.submit_end(2000000 + 1000 * (i % 5)) + h.frame_end(15000000)
    f.chunk(2, r, frames, 0, frames - 1)
    f.write(path)


def cpu_file():
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("cpu_file", os.path.join(here, "cpu-file.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def check_cpu_picture():
    """The CPU lanes of a frame whose every time is known (cpu-file.py):
    a lane per thread with its name and tid, each scope's block where its
    times put it and a row below its parent, and an arrow from the scope
    that made each submission; none of it with --queue."""
    cf = cpu_file()
    path = os.path.join(TMP, "cpu.crumbs")
    cf.write(path)
    what = "CPU threads and tasks"
    svg = os.path.join(TMP, "cpu.svg")
    p = run(CRUMBS, "plot", path, "--frame", "0", "-o", svg)
    if not result(p.returncode == 0, f"{what}: crumbs plot draws it", p.stderr):
        return
    root = parse_svg(svg, what)
    if root is None:
        return
    lanes = {}
    for g in root.iter(SVG + "g"):
        if g.get("data-cpu") == "thread":
            lanes[g.get("data-name")] = g
    want = {cf.thread_name(tid, name): tid for tid, name, _ in cf.THREADS}
    got = {name: int(g.get("data-tid")) for name, g in lanes.items()}
    result(got == want, f"{what}: a lane per thread, with its name and tid", f"{got} vs {want}")

    # Each block's x and width from its times, on one scale for all, which
    # two blocks of names found once set.
    blocks = {}
    wrong = []
    for name, g in lanes.items():
        for b in g.iter(SVG + "g"):
            t, r = b.find(SVG + "title"), b.find(SVG + "rect")
            if t is None or r is None:
                continue
            blocks.setdefault((name, t.text.split("\n")[0]), []).append(
                (float(r.get("x")), float(r.get("width")), float(r.get("y"))))
    expect = cf.scopes()
    anchors = [(b, blocks.get((th, pa[-1]), [(0, 0, 0)])[0][0]) for th, pa, b, _, _ in expect
               if pa[-1] in ("Frame", "Stream")]
    if len(anchors) != 2 or anchors[0][0] == anchors[1][0]:
        result(False, f"{what}: the blocks 'Frame' and 'Stream' are drawn", f"{anchors}")
        return
    (ta, xa), (tb, xb) = anchors
    scale = (xb - xa) / (tb - ta)
    t0, x0 = ta, xa
    ys = {}
    for thread, path_, b, e, _ in expect:
        drawn = blocks.get((thread, path_[-1]), [])
        match = [d for d in drawn if abs(d[0] - (x0 + (b - t0) * scale)) < 0.05 and
                 abs(d[1] - max((e - b) * scale, 0.5)) < 0.05]
        if len(match) != 1:
            wrong.append(f"{thread} {'/'.join(path_)}: {len(match)} blocks at "
                         f"{x0 + (b - t0) * scale:.2f}, width {(e - b) * scale:.2f}; drawn {drawn}")
            continue
        ys[(thread, path_)] = match[0][2]
        if len(path_) > 1 and not ys.get((thread, path_[:-1]), 1e9) < match[0][2]:
            wrong.append(f"{thread} {'/'.join(path_)}: not below its parent")
    result(not wrong, f"{what}: each of {len(expect)} scopes is a block where its times put it, "
           "a row below its parent", "\n".join(wrong))

    waits = sorted(t.text.split("\n")[0] for g in lanes.values() for b in g.iter(SVG + "g")
                   for t in [b.find(SVG + "title")] for r in [b.find(SVG + "rect")]
                   if t is not None and r is not None and "cwait" in (r.get("class") or ""))
    result(waits == sorted(cf.WAITS), f"{what}: wait scopes, and they alone, drawn as waits",
           f"{waits}")

    # Tasks: each in its row of its timeline's lane, its states below it.
    timelines = {g.get("data-name"): g for g in root.iter(SVG + "g")
                 if g.get("data-cpu") == "timeline"}
    wrong = []
    for tl, pa, b, e, lane in cf.tasks():
        g = timelines.get(tl)
        if g is None:
            wrong.append(f"no lane for timeline {tl}")
            continue
        top = float(next(r for r in g.iter(SVG + "rect") if r.get("class") == "lane").get("y"))
        rows = 2  # a task and its states
        y = top + 4 + (lane * rows + len(pa) - 1) * 17
        found = [bl for bl in g.iter(SVG + "g") if bl.find(SVG + "title") is not None and
                 bl.find(SVG + "rect") is not None and
                 bl.find(SVG + "title").text.split("\n")[0] == pa[-1] and
                 abs(float(bl.find(SVG + "rect").get("y")) - y) < 0.1 and
                 abs(float(bl.find(SVG + "rect").get("x")) - (x0 + (b - t0) * scale)) < 0.05]
        if len(found) != 1:
            wrong.append(f"{tl} {'/'.join(pa)}: {len(found)} blocks at y {y}")
    result(not wrong, f"{what}: each task in its row of its timeline's lane, its states below",
           "\n".join(wrong))

    deps = sorted((a.get("class"), a.find(SVG + "title").text) for a in root.iter(SVG + "path")
                  if (a.get("class") or "").startswith("dep") and a.find(SVG + "title") is not None)
    names = {tid: name for tid, _, name, _, _, _ in cf.TASKS}
    want = sorted(("dep violated" if broken else "dep", names[task]) for task, _, _, _, broken
                  in cf.DEPENDS)
    result(sorted((c, re.match(r"'([^']*)'", t).group(1)) for c, t in deps) == want,
           f"{what}: an arrow along each of {len(want)} task dependencies, broken ones dashed",
           f"{deps} vs {want}")

    marks = collections.Counter()
    for g in root.iter(SVG + "g"):
        if g.get("data-cpu") in ("timeline", "marks"):
            for m in g.iter(SVG + "path"):
                if m.get("class") == "mark":
                    marks[g.get("data-name")] += 1
    result(marks == collections.Counter(tl for tl, _ in cf.MARKS),
           f"{what}: a tick per frame of another kind, on its timeline's lane", f"{marks}")

    arrows = [a.find(SVG + "title").text for a in root.iter(SVG + "path")
              if a.get("class") == "submitted" and a.find(SVG + "title") is not None]
    made = sorted(m[1] for _, m in cf.SUBMISSIONS if m)
    drawn = sorted(re.match(r"'(.*)' submitted to ", a).group(1) for a in arrows)
    result(drawn == made, f"{what}: an arrow from the scope that made each of "
           f"{len(made)} submissions", f"{drawn} vs {made}")
    regions = lanes_of(root)
    check_rendered(svg, root, what, regions)
    check_rendered(svg, root, what, regions, dark=True)

    for args in (["--queue", "*"], ["--no-cpu"]):
        p = run(CRUMBS, "plot", path, "--frame", "0", *args, "-o", svg)
        root = ET.parse(svg).getroot() if p.returncode == 0 else None
        result(root is not None and not any(g.get("data-cpu") for g in root.iter(SVG + "g")),
               f"{what}: {args[0]} draws no CPU lane", p.stderr)


TMP = tempfile.mkdtemp(prefix="crumbs-plot-")
try:
    result(CHROMIUM is not None and shutil.which("xmllint") is not None,
           "chromium and xmllint are installed (tests/install-deps installs them)",
           f"chromium: {CHROMIUM}, xmllint: {shutil.which('xmllint')}")
    if CHROMIUM is None:
        CHROMIUM = "chromium"

    def gen(name, *args):
        path = os.path.join(TMP, name)
        p = run(GEN, "-o", path, *args)
        if p.returncode != 0:
            raise RuntimeError(f"crumbs-gen {args}: {p.stderr}")
        return path

    one = gen("one.crumbs", "--frames", "1", "--gpus", "1", "--markers-per-frame", "40")
    multi = gen("multi.crumbs", "--frames", "3", "--gpus", "2", "--leaves")
    spiky = gen("run.crumbs", "--frames", "400", "--gpus", "2", "--noise", "5", "--spikes", "8")
    long_run = gen("long.crumbs", "--frames", "5000", "--gpus", "1", "--markers-per-frame", "8",
                   "--spikes", "20", "--noise", "10")

    # A capture that cannot be read: exit 1, as crumbs report, stats and
    # export, and no picture where -o pointed.
    unreadable = {"a missing file": os.path.join(TMP, "no-such.crumbs"),
                  "a file that is not a capture": os.path.join(TMP, "not-a-capture.crumbs"),
                  "a capture cut in its header": os.path.join(TMP, "cut.crumbs")}
    with open(unreadable["a file that is not a capture"], "w") as f:
        f.write("not a capture\n")
    with open(one, "rb") as f, open(unreadable["a capture cut in its header"], "wb") as g:
        g.write(f.read(10))
    never = os.path.join(TMP, "never.svg")
    for why, path in unreadable.items():
        others = {c: run(CRUMBS, c, path, *more).returncode
                  for c, more in (("report", ()), ("stats", ()), ("export", ("--format", "chrome")))}
        p = run(CRUMBS, "plot", path, "-o", never)
        result(p.returncode == 1 and set(others.values()) == {1} and
               p.stderr.startswith("crumbs: cannot read") and not os.path.exists(never),
               f"{why}: crumbs plot exits 1, as report, stats and export do, "
               "and writes no picture",
               f"plot: {p.returncode} {p.stderr}others: {others}")

    # One frame, one queue.
    svg, root = check_timeline(one, 0, "one frame on one queue", ("--queue", "Graphics 0"),
                               expect_lanes={(0, "Graphics 0")})
    if root is not None:
        check_rendered(svg, root, "one frame on one queue", lanes_of(root))

    # Five queues on two GPUs, waits between them, leaf events.
    svg, root = check_timeline(multi, 1, "queues with semaphore waits", expect_signals=True)
    if root is not None:
        check_rendered(svg, root, "queues with semaphore waits", lanes_of(root))
        check_rendered(svg, root, "queues with semaphore waits", lanes_of(root), dark=True)

    # The sample renderer's frame, on lavapipe.
    renderer_dir = os.path.join(TMP, "renderer")
    os.mkdir(renderer_dir)
    # LeakSanitizer cannot tell lavapipe's own leaks at exit from others
    # (tests/run-tests says more): the renderer runs without leak checks.
    env = {"ASAN_OPTIONS": os.environ.get("CRUMBS_RENDERER_ASAN_OPTIONS", "detect_leaks=0")}
    p = run(RENDERER, "--frames", "3", "--capture-frame", "1", "--capture-dir", renderer_dir,
            "--size", "320x180", "--quiet", env=env)
    frame_file = os.path.join(renderer_dir, "sample-renderer-frame-1.crumbs")
    if result(p.returncode == 0 and os.path.exists(frame_file),
              "the sample renderer captures frame 1", p.stderr):
        svg, root = check_timeline(frame_file, 1, "the sample renderer's frame")
        if root is not None:
            check_rendered(svg, root, "the sample renderer's frame", drawn_lanes(root))

    check_cpu_picture()

    # A run with spikes, and a budget line for each GPU.
    budget = os.path.join(TMP, "budget")
    with open(budget, "w") as f:
        f.write("GPU 0 p95 12\nGPU 1 max 9.5\n")
    svg, root, panels = check_run(spiky, "a run with spikes", ("--budget", budget))
    if root is not None:
        lines = [e for e in root.iter(SVG + "path") if e.get("class") == "budget" and
                 e.find(SVG + "title") is not None]
        result(len(lines) == 2, "a run with spikes: a budget line per GPU", f"{len(lines)} lines")
        texts = ["".join(e.itertext()) for e in root.iter(SVG + "text")]
        result("budget limit" in texts, "a run with a budget: its legend names the budget limit")
        check_rendered(svg, root, "a run with spikes", panels)

    # Without a budget, the legend names no budget limit.
    svg, root, panels = check_run(spiky, "a run without a budget")
    if root is not None:
        texts = ["".join(e.itertext()) for e in root.iter(SVG + "text")]
        result("budget limit" not in texts and "spike threshold" in texts,
               "a run without a budget: its legend names no budget limit")

    # A run with CPU threads: the CPU frame time above the GPUs'; none
    # with --no-cpu, nor for one GPU chosen.
    cpu_run = gen("cpu-run.crumbs", "--frames", "300", "--gpus", "2", "--cpu-threads", "2",
                  "--waits", "--tasks", "4", "--noise", "5", "--spikes", "6")
    svg, root, panels = check_run(cpu_run, "a run with CPU threads")
    result("cpu" in panels, "a run with CPU threads: a panel of the CPU frame time",
           f"panels {sorted(map(str, panels))}")
    svg, root, panels = check_run(cpu_run, "a run with CPU threads, --no-cpu", ("--no-cpu",),
                                  extra_stats=("--no-cpu",))
    result(root is not None and "cpu" not in panels and len(panels) == 2,
           "a run with CPU threads, --no-cpu: the GPUs' panels alone",
           f"panels {sorted(map(str, panels))}")
    p = run(CRUMBS, "plot", cpu_run, "--gpu", "1", "-o", os.path.join(TMP, "gpu1.svg"))
    with open(os.path.join(TMP, "gpu1.svg")) as f:
        drawn = f.read()
    result(p.returncode == 0 and 'data-cpu="frame"' not in drawn and 'data-gpu="1"' in drawn,
           "a run with CPU threads, --gpu 1: that GPU's panel alone", p.stderr)

    # Video memory under each GPU's frame times: a line a heap, its
    # high-water and growth crumbs stats', its points no more than the
    # picture needs, rising with a leak; none where the run has none.
    mem_run = gen("memory-run.crumbs", "--frames", "900", "--gpus", "2", "--memory", "65536")
    svg, root, panels = check_run(mem_run, "a run with video memory")
    if root is not None:
        st = json.loads(run(CRUMBS, "stats", mem_run, "--format", "json").stdout)
        want = {(h["gpu"], h["heap"]): h for h in st["vital_signs"]["memory"]}
        got, wrong = {}, []
        for g in root.iter(SVG + "g"):
            if g.get("data-memory-gpu") is None:
                continue
            gpu = int(g.get("data-memory-gpu"))
            for h in g.iter(SVG + "g"):
                if h.get("data-heap") is None:
                    continue
                key = (gpu, int(h.get("data-heap")))
                got[key] = h
                w = want.get(key)
                path = h.find(SVG + "path")
                ys = [float(v) for v in re.findall(r"[ML][\d.]+ ([\d.]+)", path.get("d"))]
                if not w or int(h.get("data-high-bytes")) != w["high_bytes"] or \
                        int(h.get("data-growth-bytes")) != w["growth_bytes"] or \
                        h.get("data-source") != w["source"]:
                    wrong.append(f"{key}: {h.attrib} against {w}")
                if len(ys) != int(h.get("data-points")) or not 0 < len(ys) <= 256 or \
                        ys != sorted(ys, reverse=True):
                    wrong.append(f"{key}: {len(ys)} points, rising: {ys == sorted(ys, reverse=True)}")
        result(set(got) == set(want) and not wrong,
               "a run with video memory: a line a heap under each GPU, as crumbs stats has it",
               "\n".join(wrong) + f"\nheaps {sorted(got)} against {sorted(want)}")
        check_rendered(svg, root, "a run with video memory", panels)
    p = run(CRUMBS, "plot", spiky, "-o", os.path.join(TMP, "no-memory.svg"))
    with open(os.path.join(TMP, "no-memory.svg")) as f:
        result(p.returncode == 0 and "data-memory-gpu" not in f.read(),
               "a run without video memory: no memory panel")

    # More frames than pixel columns: each column's lowest and highest.
    svg, root, panels = check_run(long_run, "a run of 5000 frames", spike=("--spike", "1.3x"))
    if root is not None:
        size = os.path.getsize(svg)
        result(size < 500000, f"a run of 5000 frames: the SVG follows the width ({size} bytes)")
        check_rendered(svg, root, "a run of 5000 frames", panels)
    svg, root, panels = check_run(long_run, "a run of 5000 frames, --rows 0", ("--rows", "0"),
                                  spike=("--spike", "1.3x"))
    if root is not None:
        size = os.path.getsize(svg)
        result(size < 200000, f"a run of 5000 frames, --rows 0: the SVG of the frame times "
               f"alone follows the width ({size} bytes)")

    # The rows of a run on two GPUs, and with the CPU's: what moved at a
    # spike, in Chromium too.
    for rows in ("2", "10"):
        svg, root, panels = check_run(spiky, f"a run on 2 GPUs, --rows {rows}", ("--rows", rows))
    svg, root, panels = check_run(cpu_run, "a run with CPU threads, its rows")
    if root is not None:
        check_rendered(svg, root, "a run with CPU threads, its rows", panels)
        check_rendered(svg, root, "a run with CPU threads, its rows", panels, dark=True)
        titles = [t.text for t in root.iter(SVG + "title") if t.text]
        result(any("(Main Thread / Frame)" in t for t in titles),
               "a run with CPU threads: rows of one name say where they are in titles")

    # A run the sample renderer records, on lavapipe: its CPU threads,
    # tasks and GPU passes.
    p = run(RENDERER, "--frames", "40", "--record", "0:39", "--capture-dir", renderer_dir,
            "--size", "320x180", "--quiet", env=env)
    run_file = os.path.join(renderer_dir, "sample-renderer-run-0.crumbs")
    if result(p.returncode == 0 and os.path.exists(run_file),
              "the sample renderer records frames 0 to 39", p.stderr):
        svg, root, panels = check_run(run_file, "the sample renderer's run")
        if root is not None:
            # Its frame-time panels only: how much ink each row's strip
            # gets depends on the machine's load while it ran (a row of
            # a few microseconds beside a wait of tens of milliseconds
            # draws under a pixel); strips are checked on the runs above,
            # whose times the test chooses.
            frames = {k: v for k, v in panels.items() if not isinstance(k, tuple)}
            check_rendered(svg, root, "the sample renderer's run", frames)

    # Hostile runs: one frame; no scope at all; thousands of scopes of
    # their own names; names of 4096 bytes.
    check_run(spiky, "one frame of a run", ("--frames", "7:7"), extra_stats=("--frames", "7:7"))
    bare = os.path.join(TMP, "bare.crumbs")
    scopeless_run(bare, 40)
    svg, root, panels = check_run(bare, "a run without scopes")
    if root is not None:
        texts = ["".join(e.itertext()) for e in root.iter(SVG + "text")]
        result("no scopes in these frames" in texts, "a run without scopes: the rows say so")
    many = gen("many.crumbs", "--stress-scopes", "3000", "--stress-distinct", "--frames", "3",
               "--stress-gpus", "2")
    svg, root, panels = check_run(many, "a run of 3000 scopes of their own names")
    if root is not None:
        check_rendered(svg, root, "a run of 3000 scopes of their own names", panels)
    huge = gen("huge.crumbs", "--stress-depth", "3", "--stress-scopes", "12", "--stress-distinct",
               "--stress-name-bytes", "4096", "--frames", "5")
    svg, root, panels = check_run(huge, "a run of names of 4096 bytes")
    if root is not None:
        longest = max(len(t.text or "") for t in root.iter(SVG + "text"))
        titles = [t.text for t in root.iter(SVG + "title")
                  if t.text and t.text.startswith("frame ")]
        result(longest < 200 and titles and max(map(len, titles)) < 1500,
               f"a run of names of 4096 bytes: cut in texts (longest {longest}) and "
               "titles", f"titles up to {max(map(len, titles), default=0)}")
        check_rendered(svg, root, "a run of names of 4096 bytes", panels)
    # Present intervals under the frame times (crumbs-gen --presents:
    # every 7th present shown a v-sync late): the panel's numbers are
    # crumbs stats', a point per interval, a mark per interval late.
    presents = gen("presents.crumbs", "--frames", "60", "--gpus", "1", "--presents")
    svg, root, panels = check_run(presents, "a run with presents")
    if root is not None:
        st = json.loads(run(CRUMBS, "stats", presents, "--format", "json").stdout)
        pr = st["presentation"]
        g = next((g for g in root.iter(SVG + "g") if g.get("data-present") == "interval"), None)
        head = (g.find(SVG + "text").text or "") if g is not None else ""
        want = (f"{pr['intervals']} intervals \u00b7 median {pr['median_ns'] / 1e6:.3f} ms "
                f"\u00b7 p99 {pr['p99_ns'] / 1e6:.3f} ms \u00b7 max {pr['max_ns'] / 1e6:.3f} ms "
                f"(frame {pr['max_frame']}) \u00b7 {pr['missed_vsyncs']} missed v-syncs, "
                f"{pr['late_frames']} frames shown late")
        late = [c for c in g.iter(SVG + "circle") if c.get("class") == "spike"] if g else []
        series = next((e for e in g.iter(SVG + "path") if e.get("class") == "series"), None) \
            if g is not None else None
        points = len(re.findall(r"[ML]", series.get("d"))) if series is not None else 0
        result(g is not None and want in head and len(late) == pr["late_frames"] and
               points == pr["intervals"] and pr["missed_vsyncs"] == 8,
               "a run with presents: a panel of its present intervals with crumbs stats' "
               "median, p99, max and missed v-syncs, a point per interval, a mark per frame "
               "shown late", f"head {head!r}, want {want!r}, {len(late)} marks, {points} points")
        check_rendered(svg, root, "a run with presents", panels)
finally:
    shutil.rmtree(TMP, ignore_errors=True)

print(f"1..{n}")
sys.exit(bad)
