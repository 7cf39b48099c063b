#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# crumbs export read by speedscope, the tool people open traces in: the
# Chrome JSON and the folded stacks of a run of two GPUs and several
# queues, CPU threads and tasks (crumbs-gen), each imported by the
# speedscope npm package (tests/install-deps installs it into tests/npm)
# in headless Chromium, driven through the DevTools protocol on a pipe.
# The import must print no console warning or error (speedscope warns
# when a slice ends while another is on top of its stack), and each
# thread's functions must be the scope names as they are ('Lighting', not
# 'Lighting {...}'), frames merged in the folded stacks ('Frame #').
# A missing Chromium, Node or speedscope is a failure that says to run
# tests/install-deps, never a pass. Prints TAP lines.
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CRUMBS = os.path.join(ROOT, BUILD, "crumbs")
GEN = os.path.join(ROOT, BUILD, "crumbs-gen")
SPEEDSCOPE = os.path.join(ROOT, "tests", "npm", "node_modules", "speedscope", "dist", "release",
                          "index.html")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# How long speedscope may take to import a profile.
LOAD_SECONDS = 120

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


class Browser:
    """Headless Chromium spoken to over --remote-debugging-pipe: requests
    as JSON on fd 3, answers and events on fd 4, each ended by a NUL."""

    def __init__(self, profile_dir):
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():
            # Out of the way first, in case either is already 3 or 4.
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--allow-file-access-from-files", "--no-first-run", "--window-size=1600,16000",
             f"--user-data-dir={profile_dir}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(to_r, from_w, 3, 4), preexec_fn=fds)
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 1
        self.events = []
        self.session = None

    def close(self):
        try:
            self.call("Browser.close", session=False)
        except (OSError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                raise RuntimeError("chromium did not answer in time")
            chunk = os.read(self.from_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method, params=None, session=True, timeout=60):
        i = self.next_id
        self.next_id += 1
        msg = {"id": i, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == i:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def attach(self):
        targets = self.call("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": page["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Runtime", "Page"):
            self.call(f"{domain}.enable")

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def key(self, key):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": key, "text": key})

    def messages(self):
        """The console's warnings and errors so far, and the page's errors."""
        out = []
        for e in self.events:
            if e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] in (
                    "warning", "error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description", "")))
                                    for a in e["params"]["args"]))
            elif e["method"] == "Runtime.exceptionThrown":
                out.append(str(e["params"]["exceptionDetails"].get("exception", {})
                               .get("description", e["params"]["exceptionDetails"])))
        return out


# The functions of the profile shown, from speedscope's sandwich view: the
# table's rows, each a total, a self time and a name.
SANDWICH_NAMES = r"""
(() => {
  const names = [];
  for (const row of document.querySelectorAll('tr')) {
    const cells = row.querySelectorAll('td');
    if (cells.length == 3 && cells[1].innerText.includes('%'))
      names.push(cells[2].innerText.trim());
  }
  return names;
})()
"""


def load(browser, tmp, path):
    """Opens path in speedscope as its command-line tool does: a script
    that hands the file over in base64 (#localProfilePath). Returns the
    title once it names the file, and the console's messages."""
    name = os.path.basename(path)
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode()
    script = os.path.join(tmp, name + ".js")
    with open(script, "w") as f:
        f.write(f"speedscope.loadFileFromBase64({json.dumps(name)}, {json.dumps(data)})")
    # A new document each time: a change of the hash alone loads nothing.
    browser.call("Page.navigate", {"url": "about:blank"})
    time.sleep(0.5)
    browser.events = []
    browser.call("Page.navigate", {"url": "file://" + SPEEDSCOPE + "#localProfilePath=" + script})
    deadline = time.time() + LOAD_SECONDS
    title = ""
    while time.time() < deadline:
        title = browser.eval("document.title") or ""
        if name in title:
            break
        time.sleep(0.2)
    # Let the first view draw, and anything it has to say arrive.
    time.sleep(1)
    browser.eval("1")
    return title, browser.messages()


def functions(browser):
    """Every profile's (thread's) functions, from the sandwich view, going
    through the profiles with 'n' until the first comes back."""
    browser.key("3")
    time.sleep(0.5)
    seen = {}
    for _ in range(200):
        text = browser.eval("document.body.innerText") or ""
        head = text[:300]
        if head in seen:
            break
        seen[head] = browser.eval(SANDWICH_NAMES) or []
        browser.key("n")
        time.sleep(0.3)
    return seen


def check(browser, tmp, path, fmt, expect, unexpected):
    what = f"speedscope imports the {fmt} export of a run of 2 GPUs, several queues, CPU " \
           "threads and tasks"
    try:
        title, messages = load(browser, tmp, path)
    except (OSError, RuntimeError) as e:
        result(False, f"{what}: loaded", repr(e))
        return
    if not result(os.path.basename(path) in title, f"{what}: loaded", f"title {title!r}"):
        return
    result(not messages, f"{what}: no console warning or error",
           f"{len(messages)} messages, the first:\n" + "\n".join(m[:300] for m in messages[:10]))
    try:
        per_profile = functions(browser)
    except (OSError, RuntimeError) as e:
        result(False, f"{what}: its functions read", repr(e))
        return
    names = {nm for ns in per_profile.values() for nm in ns}
    missing = sorted(expect - names)
    bad_names = sorted(nm for nm in names if any(u(nm) for u in unexpected))
    result(names and not missing and not bad_names,
           f"{what}: {len(names)} functions in {len(per_profile)} profiles, the scope names "
           f"as they are ({', '.join(sorted(expect))})",
           f"missing {missing}; unexpected {bad_names[:10]}; some: {sorted(names)[:20]}")


def main():
    missing = []
    if not CHROMIUM:
        missing.append("chromium")
    if not os.path.exists(SPEEDSCOPE):
        missing.append(f"speedscope ({os.path.relpath(SPEEDSCOPE, ROOT)})")
    if missing:
        result(False, "chromium and the speedscope npm package are installed",
               f"missing: {', '.join(missing)}; run tests/install-deps")
        return
    tmp = tempfile.mkdtemp()
    browser = None
    try:
        cap = os.path.join(tmp, "run.crumbs")
        g = subprocess.run([GEN, "-o", cap, "--frames", "100", "--gpus", "2", "--leaves", "--unbalanced",
                            "--cpu-threads", "3", "--waits", "--tasks", "6", "--timeline-frames"],
                           capture_output=True, text=True)
        if not result(g.returncode == 0, "crumbs-gen writes a run of 2 GPUs with CPU threads",
                      g.stderr):
            return
        exports = {}
        for fmt, ext in (("chrome", "json"), ("folded", "txt")):
            out = os.path.join(tmp, f"run-{fmt}.{ext}")
            p = subprocess.run([CRUMBS, "export", cap, "--format", fmt, "-o", out],
                               capture_output=True, text=True)
            if result(p.returncode == 0, f"crumbs export --format {fmt}", p.stderr):
                exports[fmt] = out
        browser = Browser(os.path.join(tmp, "chromium"))
        try:
            browser.attach()
        except (OSError, RuntimeError, StopIteration) as e:
            result(False, "headless chromium answers on its DevTools pipe", repr(e))
            return
        scopes = {"Base Pass", "Shadow Depths", "Async Compute", "Submission 0", "Idle"}
        with_args = lambda nm: "{" in nm
        if "chrome" in exports:
            check(browser, tmp, exports["chrome"], "Chrome JSON", scopes, [with_args])
        if "folded" in exports:
            frame_n = lambda nm: nm.startswith("Frame ") and nm != "Frame #"
            check(browser, tmp, exports["folded"], "folded",
                  {"Base Pass", "Shadow Depths", "Async Compute", "Frame #"}, [with_args, frame_n])
    finally:
        if browser:
            browser.close()
        shutil.rmtree(tmp, ignore_errors=True)


main()
print(f"1..{n}")
sys.exit(bad)
