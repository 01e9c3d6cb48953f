"""fnt flame's SVG and fnt report's page in a real browser: headless Chromium (Debian's chromium;
installed here with apt-get when missing and this runs as root, else the
test skips with 77).

The SVG of a random run is opened from disk: the DOM after load has one
g.f per stack node, the embedded script ran (it writes every wide enough
frame's label; the labels are empty in the file), no console message, and a
screenshot is taken.  The view links flame.svg#zoom=NAME&search=RE check
click-to-zoom and search: zoomed, the frame spans the width and the frames
beside it are hidden; searching, matches turn purple and the share is shown.
The differential SVG opens without console messages too.  The speedscope
export is opened by speedscope (its npm package, installed into the test's
cache; the test skips when npm cannot install it) served from a local
folder.
"""
import os
import random
import re
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_calls as tc  # noqa: E402

FNT = os.path.join(tc.BUILD, "fnt")


def find_chromium():
    exe = shutil.which("chromium")
    if exe is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        env.pop("LD_PRELOAD", None)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], env=env,
                       capture_output=True)
        exe = shutil.which("chromium")
    if exe is None:
        print("skip: chromium not installed (and cannot be installed here)", flush=True)
        os._exit(77)                        # ctest's skip code, before pytest collects
    return exe


CHROMIUM = find_chromium()


def browse(url, *extra):
    # Not under the sanitizer build's LD_PRELOAD (libasan): Chromium is not ours.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                        "--enable-logging=stderr", "--v=0"] + list(extra) + [url],
                       capture_output=True, timeout=120, env=env)
    console = [line for line in p.stderr.decode(errors="replace").splitlines()
               if ":CONSOLE" in line]
    return p, console


@pytest.fixture(scope="module")
def svgs():
    wh = tc.tmpdir("flame-chromium-")
    conn = tc.connect(wh)
    for seed in range(2):
        rng = random.Random(77 + seed)
        evs = tc.random_events(rng, n_max=600, n_min=300, root=True)
        assert tc.file(conn, tc.chunk_doc("acme/c", None, "r%d" % seed, evs, 0, 1, len(evs))) == 1
    conn.close()
    out = {}
    for name, args in (("flame", ["r0"]), ("diff", ["--diff", "r1", "r0"])):
        path = os.path.join(wh, name + ".svg")
        subprocess.run([FNT, "-q", "-w", wh, "flame"] + args + ["-o", path], check=True)
        out[name] = path
    return out


def frames(dom):
    return re.findall(r'<g class="f"([^>]*)>(.*?)</g>', dom, re.S)


def test_svg_loads(svgs):
    path = svgs["flame"]
    p, console = browse("file://" + path, "--dump-dom")
    assert p.returncode == 0 and console == [], console
    dom = p.stdout.decode()
    got = frames(dom)
    src = open(path).read()
    assert len(got) == len(frames(src)) == int(re.search(r'data-shown="(\d+)"', src).group(1))
    assert len(got) > 20
    label = r"<text[^>]*?(?:/>|>([^<]*)</text>)"        # empty: <text .../>
    labels = [re.search(label, body).group(1) or "" for _, body in got]
    assert all(x == "" for x in re.findall(label, "".join(b for _, b in frames(src))))
    assert sum(1 for x in labels if x) >= 5, "the script did not label the frames"
    shot = os.path.join(os.path.dirname(path), "flame.png")
    p, console = browse("file://" + path, "--screenshot=" + shot, "--window-size=1200,800")
    assert p.returncode == 0 and console == [] and os.path.getsize(shot) > 5000


def test_zoom_and_search(svgs):
    path = svgs["flame"]
    p, console = browse("file://%s#zoom=main&search=%%5Ef1%%24" % path, "--dump-dom")
    assert p.returncode == 0 and console == [], console
    dom = p.stdout.decode()
    fs = frames(dom)
    mains = [(a, b) for a, b in fs if 'data-name="main"' in a]
    first = mains[0][1]
    width = float(re.search(r'<rect[^>]*width="([0-9.]+)"', first).group(1))
    assert abs(width - 1179.5) < 0.01                   # the zoomed frame fills the width
    hidden = [a for a, _ in fs if "display: none" in a]
    assert len(mains) == 1 or hidden                    # other threads' roots hidden
    matched = re.search(r'id="matched"[^>]*>Matched: ([0-9.]+)%<', dom)
    assert matched and 0 < float(matched.group(1)) <= 100
    purple = [a for a, b in fs if "rgb(230,0,230)" in b]
    assert purple and all('data-name="f1"' in a for a in purple)


def test_diff_loads(svgs):
    p, console = browse("file://" + svgs["diff"], "--dump-dom")
    assert p.returncode == 0 and console == [], console
    assert len(frames(p.stdout.decode())) > 10


def test_report(svgs):
    """fnt report: the summary, one table row per function (fnt_account),
    sorted by a column through report.html#sort=COL, the flame graph drawn by
    its script, no console message, offline (one file, no URL fetched)."""
    wh = os.path.dirname(svgs["flame"])
    path = os.path.join(wh, "r0.html")
    subprocess.run([FNT, "-q", "-w", wh, "report", "r0", "-o", path], check=True)
    src = open(path).read()
    assert "http://" not in src.replace("http://www.w3.org/2000/svg", "") and "https://" not in src
    conn = tc.connect(wh)
    acc = conn.execute("SELECT symbol, calls, p99_ns FROM fnt_account('r0')").fetchall()
    t0, t1 = conn.execute("SELECT min(t_ns), max(t_ns) + 1 FROM fn_trace_events"
                          " WHERE run_id = 'r0'").fetchone()
    tl = conn.execute("SELECT thread, symbol FROM fnt_timeline('r0', ?, ?, 800)"
                      " WHERE depth < 16 ORDER BY thread, depth, bucket", (t0, t1)).fetchall()
    conn.close()
    p, console = browse("file://%s#sort=p99_ns" % path, "--dump-dom")
    assert p.returncode == 0 and console == [], console
    dom = p.stdout.decode()
    body = dom.split('<tbody>')[1].split('</tbody>')[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    assert len(rows) == len(acc)
    p99 = [int(re.findall(r'data-v="([^"]*)"', r)[6]) for r in rows]
    assert p99 == sorted((a[2] for a in acc), reverse=True)
    assert 'data-sorted="p99_ns desc"' in dom
    syms = sorted(re.findall(r'<td class="sym" data-v="([^"]*)"', body))
    assert syms == sorted(a[0] for a in acc)
    fs = frames(dom)
    assert len(fs) > 10 and sum(1 for _, b in fs if re.search(r"<text[^>]*>[^<]+</text>", b)) >= 5
    assert re.search(r'<dt>events</dt><dd>\d+ ', dom)
    # the timeline overview: a box per fnt_timeline row of the whole run
    # (800 columns, depths below 16), a band per thread
    svg = dom.split('<svg id="timeline"')[1].split('</svg>')[0]
    boxes = re.findall(r'<rect class="call"[^>]*><title>([^<]*) \(', svg)
    assert boxes == [t[1] for t in tl] and len(boxes) > 0
    assert re.findall(r'>thread (\d+)</text>', svg) == [str(t) for t in sorted({t[0] for t in tl})]


@pytest.fixture(scope="module")
def speedscope_app():
    """speedscope's app (its npm package ships it), installed once."""
    cache = os.path.join(os.environ.get("FNT_TEST_TMP", "/tmp"), "cache", "speedscope")
    app = os.path.join(cache, "node_modules", "speedscope", "dist", "release")
    if not os.path.exists(os.path.join(app, "index.html")):
        os.makedirs(cache, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        p = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", cache,
                            "speedscope@1"], capture_output=True, env=env)
        if p.returncode != 0 or not os.path.exists(os.path.join(app, "index.html")):
            pytest.skip("npm could not install speedscope: %s" % p.stderr.decode()[-300:])
    return app


# speedscope reads every export: its own format, Chrome's Trace Event
# format, folded stacks and (gzipped) pprof; what it logs when it does.
SPEEDSCOPE_IMPORTS = [
    ("speedscope", "Importing as speedscope json file"),
    ("chrome", "Importing as Trace Event Format profile"),
    ("folded", "Importing as collapsed stack format"),
    ("pprof", "Importing as protobuf encoded pprof file"),
]


@pytest.mark.parametrize("fmt, logged", SPEEDSCOPE_IMPORTS,
                         ids=[f for f, _ in SPEEDSCOPE_IMPORTS])
def test_speedscope_app(svgs, speedscope_app, tmp_path, fmt, logged):
    """Each export opened by speedscope itself, served from a local folder
    to headless Chromium: it imports the file in the format meant, logs no
    error, and shows the run's functions (its speedscope file: one profile
    per thread)."""
    import http.server
    import threading
    wh = os.path.dirname(svgs["flame"])
    serve = str(tmp_path)
    for f in os.listdir(speedscope_app):
        src = os.path.join(speedscope_app, f)
        if os.path.isfile(src):
            shutil.copy(src, serve)
    name = "r0." + fmt
    subprocess.run([FNT, "-q", "-w", wh, "export", "r0", "--format", fmt, "-o",
                    os.path.join(serve, name)], check=True)
    conn = tc.connect(wh)
    threads = [r[0] for r in conn.execute(
        "SELECT DISTINCT thread FROM fn_trace_calls WHERE run_id = 'r0' ORDER BY thread")]
    conn.close()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=serve, **k)

        def log_message(self, *a):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        base = "http://127.0.0.1:%d/" % httpd.server_address[1]
        p, console = browse(base + "index.html#profileURL=" + base + name,
                            "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                            "--virtual-time-budget=10000", "--dump-dom")
    finally:
        httpd.shutdown()
    dom = p.stdout.decode()
    assert p.returncode == 0
    assert any(logged in c for c in console), console
    assert not [c for c in console if "rror" in c], console
    # the title: the profile's name, else the file's
    assert "<title>%s - speedscope" % ("r0" if fmt == "speedscope" else name) in dom, dom[:300]
    if fmt == "speedscope":
        if len(threads) > 1:                      # its profile switcher: "(1/N)"
            assert "(1/%d)" % len(threads) in dom
        for t in threads:
            assert "thread %d" % t in dom


def test_report_compare(svgs):
    """fnt report RUN_A RUN_B: RUN_B's page with fnt_diff's largest changes
    (largest first) and the differential flame graph in place of the plain
    one (one graph a page), loaded with no console message."""
    wh = os.path.dirname(svgs["flame"])
    path = os.path.join(wh, "r0-r1.html")
    subprocess.run([FNT, "-q", "-w", wh, "report", "r0", "r1", "-o", path], check=True)
    conn = tc.connect(wh)
    diff = conn.execute("SELECT symbol, inclusive_b - inclusive_a FROM fnt_diff('r0', 'r1')"
                        " ORDER BY abs(inclusive_b - inclusive_a) DESC, key").fetchall()
    conn.close()
    p, console = browse("file://%s" % path, "--dump-dom")
    assert p.returncode == 0 and console == [], console
    dom = p.stdout.decode()
    assert "<h1>Run r1</h1>" in dom and "Compared with r0</h2>" in dom
    body = dom.split('<table id="diff">')[1].split('<tbody>')[1].split('</tbody>')[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    assert len(rows) == min(50, len(diff)) > 0
    got = [(re.search(r'data-v="([^"]*)"', r).group(1), int(re.findall(r'data-v="([^"]*)"', r)[5]))
           for r in rows]
    assert [g[1] for g in got] == [d[1] for d in diff[:len(got)]]
    assert dom.count('<svg id="fntflame"') == 1
    assert "Differential flame graph: r1 against r0" in dom
    p = subprocess.run([FNT, "-w", wh, "report", "r0", "nope"], capture_output=True)
    assert p.returncode == 1 and b"nope" in p.stderr
