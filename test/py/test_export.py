"""fnt export (SPEC §11), fnt flame and fnt report's output, parsed back and checked.

Random runs (filed in chunks, out of order) are exported whole and in
windows, with and without a thread, in every format, and each file is read
back by this test against the store's fn_trace_calls and fnt_flame:

- chrome: one X event per call in the window, ts/dur (microseconds, 3
  decimals) exactly the call's start/duration, tid its thread, properly
  nested per thread; a thread_name event per thread;
- folded: the lines of fnt_flame (and fnt_folded);
- speedscope: per thread, O/C events balanced (each C closes the frame the
  last O opened), times never decreasing, one O at each call's start and
  one C at its end;
- pprof: gunzipped, the protobuf decoded here (varints and lengths), each
  sample's locations (leaf first) and values summed back to fnt_flame's
  stacks, calls and self time;
- the output (writer.c), of export and of fnt flame and fnt report (which
  print through the writer's stdio stream): a run larger than the writer's
  buffers gives the same bytes to a file, a pipe and an O_APPEND stdout; a
  full disk, a closed pipe or a file size limit fail with a message naming
  the output, and leave neither a temporary file nor a half-written FILE;
- fnt flame's SVG: one rect per stack node with time, each as wide as its
  inclusive time; --diff coloured red where RUN_B's self time grew and blue
  where it shrank; above 10,000 stacks the thinnest merged and counted.
"""
import gzip
import json
import os
import random
import resource
import signal
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from decimal import Decimal

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_calls as tc  # noqa: E402

FNT = os.path.join(tc.BUILD, "fnt")
CALLS_SQL = ("SELECT thread, call_id, parent_id, depth, start_ns, end_ns, symbol "
             "FROM fn_trace_calls WHERE run_id = ?")


def fnt(wh, *args, ok=True, env=None):
    p = subprocess.run([FNT, "-w", wh] + [str(a) for a in args], capture_output=True,
                       env=dict(os.environ, **(env or {})))
    if ok:
        assert p.returncode == 0, p.stderr.decode()
    return p


def in_window(c, win):
    if win is None:
        return True
    t0, t1, th = win
    if th is not None and c[0] != th:
        return False
    return c[4] < t1 and (c[5] > t0 or c[4] >= t0)


def win_args(win):
    if win is None:
        return []
    a = ["--from", win[0], "--to", win[1]]
    return a + (["--thread", win[2]] if win[2] is not None else [])


def flame_rows(conn, run, win):
    if win is None:
        return conn.execute("SELECT stack, self_ns, calls FROM fnt_flame(?)", (run,)).fetchall()
    if win[2] is None:
        return conn.execute("SELECT stack, self_ns, calls FROM fnt_flame(?, ?, ?)",
                            (run, win[0], win[1])).fetchall()
    return conn.execute("SELECT stack, self_ns, calls FROM fnt_flame(?, ?, ?, ?)",
                        (run, win[0], win[1], win[2])).fetchall()


# ------------------------------------------------------------ the checks

def check_chrome(path, calls):
    doc = json.load(open(path), parse_float=Decimal)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    got = sorted((e["tid"], e["args"]["call_id"], e["ts"], e["dur"], e["name"]) for e in xs)
    want = sorted((c[0], c[1], Decimal(c[4]) / 1000, Decimal(c[5] - c[4]) / 1000, c[6])
                  for c in calls)
    assert got == want
    assert all(e["pid"] == 1 for e in doc["traceEvents"])
    names = {e["tid"] for e in doc["traceEvents"] if e.get("name") == "thread_name"}
    assert names == {c[0] for c in calls}
    by_tid = {}
    for e in xs:
        by_tid.setdefault(e["tid"], []).append((e["ts"], -e["dur"], e["args"]["depth"]))
    for evs in by_tid.values():
        stack = []
        for ts, mdur, depth in sorted(evs):
            while stack and stack[-1] <= ts and not (stack[-1] == ts and mdur == 0):
                stack.pop()
            if stack:
                assert ts - mdur <= stack[-1], "X events overlap without nesting"
            stack.append(ts - mdur)


def check_speedscope(path, calls):
    doc = json.load(open(path))
    frames = [f["name"] for f in doc["shared"]["frames"]]
    by_thread = {}
    for c in calls:
        by_thread.setdefault(c[0], []).append(c)
    assert sorted(p["name"] for p in doc["profiles"]) == sorted(
        "thread %d" % t for t in by_thread)
    for p in doc["profiles"]:
        assert p["type"] == "evented" and p["unit"] == "nanoseconds"
        th = int(p["name"].split()[1])
        stack, last, opens, closes = [], None, [], []
        for e in p["events"]:
            assert last is None or e["at"] >= last, "events out of order"
            last = e["at"]
            if e["type"] == "O":
                stack.append(e["frame"])
                opens.append((frames[e["frame"]], e["at"]))
            else:
                assert stack and stack[-1] == e["frame"], "C does not close the last O"
                stack.pop()
                closes.append((frames[e["frame"]], e["at"]))
        assert stack == []
        assert sorted(opens) == sorted((c[6], c[4]) for c in by_thread[th])
        assert sorted(closes) == sorted((c[6], c[5]) for c in by_thread[th])
        assert p["startValue"] <= min(c[4] for c in by_thread[th])
        assert p["endValue"] >= max(c[5] for c in by_thread[th])


def varint(buf, i):
    """The varint at buf[i:] and the index after it."""
    v = s = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << s
        s += 7
        if b < 0x80:
            return v, i


def pb_fields(buf):
    """(field, wire type, value) of a protobuf message: ints or bytes."""
    i, out = 0, []
    while i < len(buf):
        key, i = varint(buf, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(buf, i)
            out.append((f, w, v))
        elif w == 2:
            n, i = varint(buf, i)
            out.append((f, w, buf[i:i + n]))
            i += n
        else:
            raise AssertionError("unexpected wire type %d" % w)
    return out


def _packed(buf):
    vals, i = [], 0
    while i < len(buf):
        v, i = varint(buf, i)
        vals.append(v)
    return vals


def check_pprof(path, rows):
    prof = pb_fields(gzip.open(path).read())
    strings = [v.decode() for f, _, v in prof if f == 6]
    assert strings[0] == ""
    types = [dict((f, v) for f, _, v in pb_fields(m)) for f, _, m in prof if f == 1]
    assert [(strings[t[1]], strings[t[2]]) for t in types] == [
        ("calls", "count"), ("wall", "nanoseconds")]
    funcs = {}
    for f, _, m in prof:
        if f == 5:
            d = dict((k, v) for k, _, v in pb_fields(m))
            funcs[d[1]] = strings[d[2]]
    locs = {}
    for f, _, m in prof:
        if f == 4:
            d = pb_fields(m)
            lid = [v for k, _, v in d if k == 1][0]
            line = [v for k, _, v in d if k == 4][0]
            locs[lid] = funcs[dict((k, v) for k, _, v in pb_fields(line))[1]]
    got = {}
    for f, _, m in prof:
        if f == 2:
            d = pb_fields(m)
            ids = _packed([v for k, _, v in d if k == 1][0])
            vals = _packed([v for k, _, v in d if k == 2][0])
            stack = ";".join(locs[x] for x in reversed(ids))
            a = got.setdefault(stack, [0, 0])
            a[0] += vals[1]
            a[1] += vals[0]
    assert sorted((k, v[0], v[1]) for k, v in got.items()) == sorted(rows)


def svg_frames(path):
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    out = {}
    for g in root.iter(ns + "g"):
        if g.get("class") != "f":
            continue
        out.setdefault(int(g.get("data-d")), []).append(g)
    return root, ns, out


def tree_of(rows):
    """{stack prefix: [inclusive, self]} of folded rows."""
    t = {}
    for stack, self_ns, _ in rows:
        parts = stack.split(";")
        for i in range(1, len(parts) + 1):
            t.setdefault(";".join(parts[:i]), [0, 0])[0] += self_ns
        t[stack][1] += self_ns
    return t


def check_svg(path, rows):
    root, ns, by_depth = svg_frames(path)
    want = {k: v for k, v in tree_of(rows).items() if v[0] > 0}
    total = sum(v[0] for k, v in want.items() if ";" not in k)
    assert int(root.get("data-total")) == total
    got = sum(len(v) for v in by_depth.values())
    assert got == len(want) == int(root.get("data-shown"))
    widths = {}
    for d, gs in by_depth.items():
        for g in gs:
            widths.setdefault((d, g.get("data-name")), []).append(int(g.get("data-w")))
            assert g.find(ns + "title").text.startswith(g.get("data-name") + " (self ")
            rect = g.find(ns + "rect")
            assert abs(float(rect.get("width")) - max(
                0, int(g.get("data-w")) * 1180 / total - 0.5)) < 0.02
    want_w = {}
    for k, v in want.items():
        want_w.setdefault((k.count(";"), k.split(";")[-1]), []).append(v[0])
    assert {k: sorted(v) for k, v in widths.items()} == {k: sorted(v) for k, v in want_w.items()}


# ------------------------------------------------------------ the tests

@pytest.fixture(scope="module")
def runs():
    wh = tc.tmpdir("export-")
    conn = tc.connect(wh)
    out = []
    for seed in range(6):
        rng = random.Random(500 + seed)
        run = "exp-%d" % seed
        evs = tc.random_events(rng, n_max=400, n_min=50, root=seed % 2 == 0)
        n = rng.randint(1, 4)
        parts = tc.split(rng, evs, n)
        for c in rng.sample(range(n), n):
            assert tc.file(conn, tc.chunk_doc("acme/e", "c1", run, parts[c], c, n, len(evs))) == 1
        calls = conn.execute(CALLS_SQL, (run,)).fetchall()
        ts = sorted({c[4] for c in calls} | {c[5] for c in calls})
        threads = sorted({c[0] for c in calls})
        wins = [None, (ts[0], ts[-1] + 1, None)]
        for _ in range(3):
            a = rng.choice(ts)
            b = rng.choice([t for t in ts if t > a] or [a + 1])
            wins.append((a, b, None))
            wins.append((a, b, rng.choice(threads)))
        out.append((run, calls, wins))
    yield wh, conn, out
    conn.close()


@pytest.mark.parametrize("fmt", ["chrome", "folded", "speedscope", "pprof"])
def test_exports(runs, fmt):
    wh, conn, rs = runs
    for run, calls, wins in rs:
        for win in wins:
            path = os.path.join(wh, "%s.%s" % (run, fmt))
            p = fnt(wh, "export", run, "--format", fmt, "-o", path, *win_args(win))
            what = "%s %s %r" % (fmt, run, win)
            sel = [c for c in calls if in_window(c, win)]
            rows = flame_rows(conn, run, win)
            if fmt == "chrome":
                check_chrome(path, sel)
                assert ("%d calls" % len(sel)).encode() in p.stderr, what
            elif fmt == "speedscope":
                check_speedscope(path, sel)
                # slices of ~7 calls: calls span slices, frames stay open across
                fnt(wh, "export", run, "--format", fmt, "-o", path, *win_args(win),
                    env={"FNT_SPEEDSCOPE_SLICE_CALLS": "7"})
                check_speedscope(path, sel)
            elif fmt == "folded":
                text = open(path).read()
                assert text == "".join("%s %d\n" % (s, n) for s, n, _ in rows), what
                assert text == conn.execute("SELECT fnt_folded(?)", (run,)).fetchone()[0] \
                    or win is not None
                check_folded_on_disk(wh, run, win, rows)
            else:
                check_pprof(path, rows)
                fnt(wh, "export", run, "--format", fmt, "-o", path, "--memory", "0",
                    *win_args(win))
                check_pprof(path, rows)
    # --json: the summary as a JSON object on stdout
    run, calls, _ = rs[0]
    p = fnt(wh, "--json", "export", run, "--format", fmt, "-o", os.path.join(wh, "j"))
    assert json.loads(p.stdout) == {"run_id": run, "format": fmt, "calls": len(calls),
                                    "output": os.path.join(wh, "j")} and p.stderr == b""
    # to stdout, quietly
    p = fnt(wh, "-q", "export", rs[0][0], "--format", "folded")
    assert p.stderr == b"" and p.stdout.decode() == conn.execute(
        "SELECT fnt_folded(?)", (rs[0][0],)).fetchone()[0]


def check_folded_on_disk(wh, run, win, rows):
    """--memory 0 folds on disk: the same lines, in the order their stacks
    are first entered."""
    p = fnt(wh, "-q", "export", run, "--format", "folded", "--memory", "0", *win_args(win))
    lines = p.stdout.decode().splitlines()
    assert sorted(lines) == sorted("%s %d" % (s, n) for s, n, _ in rows), (run, win)


def test_folded_on_disk_odd_symbols(tmp_path):
    """Folded on disk, stacks of equal text merge as fnt_flame merges them
    (a symbol holding a ';', an empty one), in the whole run and in windows;
    pprof's frames are the texts split at ';', both ways."""
    wh = str(tmp_path / "wh")
    conn = tc.connect(wh)
    evs, seq = tc.nested_events([(0, ["a", "c"]), (0, ["a;c"]), (0, ["a:x"]), (1, ["a", "a;"]),
                                 (1, ["", "b"]), (1, [";b"]), (2, ["a", "c", "d"]),
                                 (2, ["a;c;d"])])
    assert tc.file(conn, tc.chunk_doc("acme/o", None, "odd", evs, 0, 1, len(evs))) == 1
    for win in (None, (15, seq * 10 - 15, None), (35, 205, None), (0, 400, 2)):
        rows = flame_rows(conn, "odd", win)
        assert rows, win
        check_folded_on_disk(wh, "odd", win, rows)
        for mem in ("0", "64"):
            path = str(tmp_path / "odd.pb.gz")
            fnt(wh, "export", "odd", "--format", "pprof", "--memory", mem, "-o", path,
                *win_args(win))
            check_pprof(path, rows)
    rows = flame_rows(conn, "odd", None)
    calls = {st: n for st, _, n in rows}
    assert len(calls) == len(rows) and calls["a;c"] == 3 and calls["a;c;d"] == 2
    conn.close()


def test_flame_svg(runs):
    wh, conn, rs = runs
    for run, calls, wins in rs:
        for win in wins[:4]:
            path = os.path.join(wh, run + ".svg")
            fnt(wh, "flame", run, "-o", path, *win_args(win))
            check_svg(path, flame_rows(conn, run, win))
            # folded on disk: the same graph
            assert fnt(wh, "-q", "flame", run, "--memory", "0", *win_args(win)).stdout \
                == open(path, "rb").read(), (run, win)


def test_flame_diff(runs):
    wh, conn, rs = runs
    a, b = rs[0][0], rs[2][0]
    path = os.path.join(wh, "diff.svg")
    fnt(wh, "flame", "--diff", a, b, "-o", path)
    assert fnt(wh, "-q", "flame", "--diff", a, b, "--memory", "0").stdout \
        == open(path, "rb").read()
    rows_b = flame_rows(conn, b, None)
    check_svg(path, rows_b)                       # widths by the newer run
    ta = tree_of(flame_rows(conn, a, None))
    tb = tree_of(rows_b)
    _, ns, by_depth = svg_frames(path)
    seen = set()
    for gs in by_depth.values():
        for g in gs:
            fill = g.find(ns + "rect").get("fill")
            r, gg, bb = (int(x) for x in fill[4:-1].split(","))
            k = (int(g.get("data-d")), g.get("data-name"))
            # the stack of this rect: any prefix at that depth with that name
            cands = [s for s in tb if s.count(";") == k[0] and s.split(";")[-1] == k[1]
                     and tb[s][0] == int(g.get("data-w"))]
            assert cands
            d = {tb[s][1] - ta.get(s, [0, 0])[1] for s in cands}
            if all(x > 0 for x in d):
                assert r == 255 and bb < 255, (k, fill)
                seen.add("red")
            elif all(x < 0 for x in d):
                assert bb == 255 and r < 255, (k, fill)
                seen.add("blue")
            elif all(x == 0 for x in d):
                assert (r, gg, bb) == (250, 250, 250)
    assert seen == {"red", "blue"}


def test_flame_diff_against_empty_run(tmp_path):
    """A graph of a run without calls, compared with one that has some
    (its stacks have no box to join): an empty graph, in memory and on
    disk."""
    wh = str(tmp_path / "wh")
    conn = tc.connect(wh)
    evs, _ = tc.nested_events([(0, ["a", "b"]), (1, ["a"])])
    assert tc.file(conn, tc.chunk_doc("acme/d", None, "full", evs, 0, 1, len(evs))) == 1
    assert tc.file(conn, tc.chunk_doc("acme/d", None, "empty", [], 0, 1, 0)) == 1
    for mem in ("64", "0"):
        p = fnt(wh, "-q", "flame", "--diff", "full", "empty", "--memory", mem)
        assert p.stdout.endswith(b"</svg>\n"), mem
    path = str(tmp_path / "d.svg")
    fnt(wh, "flame", "--diff", "full", "empty", "-o", path)
    root, _, by_depth = svg_frames(path)
    assert root.get("data-stacks") == "0" and by_depth == {}
    conn.close()


def test_flame_merges_thin_stacks(tmp_path):
    """10,500 distinct stacks: the 500 thinnest merged into their caller."""
    wh = str(tmp_path / "wh")
    conn = tc.connect(wh)
    evs, seq, t = [(0, 0, 0, "main", "", "entry")], 1, 0
    for i in range(10500):
        evs.append((0, seq, t + 1, "f%05d" % i, "", "entry"))
        t += 2 + i
        evs.append((0, seq + 1, t, "f%05d" % i, "", "exit"))
        seq += 2
    evs.append((0, seq, t + 1, "main", "", "exit"))
    assert tc.file(conn, tc.chunk_doc("acme/m", None, "many", evs, 0, 1, len(evs))) == 1
    path = str(tmp_path / "many.svg")
    fnt(wh, "flame", "many", "-o", path)
    root, ns, by_depth = svg_frames(path)
    assert root.get("data-merged") == "501"        # main + 10,500 callees: 10,501
    assert sum(len(v) for v in by_depth.values()) == 10000
    names = {g.get("data-name") for g in by_depth[1]}
    assert "f10499" in names and "f00000" not in names   # the thinnest went
    assert "501 of 10501 stacks too thin to draw merged" in ET.tostring(root).decode()
    # more than a writer buffer through its stdio stream: the same bytes to stdout
    want = open(path, "rb").read()
    assert len(want) > 1 << 20 and fnt(wh, "-q", "flame", "many").stdout == want
    # folded on disk, the 10,000 thickest kept there: the same graph
    assert fnt(wh, "-q", "flame", "many", "--memory", "0").stdout == want
    path = str(tmp_path / "many.html")
    fnt(wh, "report", "many", "-o", path)
    want = open(path, "rb").read()
    assert len(want) > 1 << 20 and fnt(wh, "-q", "report", "many").stdout == want
    assert fnt(wh, "-q", "report", "many", "--memory", "0").stdout == want
    assert leftovers(str(tmp_path)) == []
    conn.close()


@pytest.mark.parametrize("args, msg", [
    (["export", "exp-0"], "--format is required"),
    (["export", "exp-0", "--format", "svg"], "not 'svg'"),
    (["export", "nope", "--format", "chrome"], "no run 'nope'"),
    (["export", "exp-0", "--format", "chrome", "--from", "5"], "--from and --to go together"),
    (["export", "exp-0", "--format", "chrome", "--from", "5", "--to", "5"],
     "--to (5) must be greater than --from (5)"),
    (["export", "exp-0", "--format", "chrome", "--thread", "1"], "--thread needs --from"),
    (["export", "exp-0", "--format", "chrome", "--from", "x", "--to", "5"],
     "--from: expected a non-negative integer, not 'x'"),
    (["flame", "exp-0", "exp-1"], "expected one RUN_ID"),
    (["flame", "--diff", "exp-0"], "expected two RUN_IDs"),
    (["flame", "exp-0", "--format", "chrome"], "usage: fnt flame"),
    (["export", "exp-0", "--format", "chrome", "-o", "/nonexistent/x.json"], "cannot write"),
    (["export", "exp-0", "--format", "chrome", "-o", ""], ": cannot write: No such file"),
    (["export", "exp-0", "--format", "chrome", "-o", "/"], "/: cannot write: Is a directory"),
])
def test_bad_arguments(runs, args, msg):
    wh = runs[0]
    p = fnt(wh, *args, ok=False)
    assert p.returncode in (1, 2) and msg in p.stderr.decode(), p.stderr.decode()


def outer_inner(threads, reps):
    """Events of `reps` calls of outer, each calling inner, on each thread."""
    evs, seq = [], 0
    for k in range(reps):
        for th in range(threads):
            t = 100 * k + th
            evs += [(th, seq, t, "outer", "", "entry"), (th, seq + 1, t + 5, "inner", "", "entry"),
                    (th, seq + 2, t + 9, "inner", "", "exit"),
                    (th, seq + 3, t + 20, "outer", "", "exit")]
            seq += 4
    return evs


def test_speedscope_many_threads(tmp_path):
    """150 threads: written 64 at a time, each its own profile."""
    wh = str(tmp_path / "wh")
    conn = tc.connect(wh)
    evs = outer_inner(150, 3)
    assert tc.file(conn, tc.chunk_doc("acme/t", None, "threads", evs, 0, 1, len(evs))) == 1
    calls = conn.execute(CALLS_SQL, ("threads",)).fetchall()
    assert len(calls) == 900
    path = str(tmp_path / "t.speedscope")
    for env in ({}, {"FNT_SPEEDSCOPE_SLICE_CALLS": "50"}):
        fnt(wh, "export", "threads", "--format", "speedscope", "-o", path, env=env)
        check_speedscope(path, calls)
    conn.close()


def test_awkward_symbols(tmp_path):
    """Symbols with quotes, backslashes, control characters and markup come
    back intact from chrome, speedscope and pprof, and the SVG is XML."""
    wh = str(tmp_path / "wh")
    conn = tc.connect(wh)
    names = ['op"er\\ator', "tab\there", "<b>&amp;</b>", "caf\u00e9 \u2603"]
    evs, seq = [], 0
    for i, n in enumerate(names):
        evs += [(1, seq, 10 * i, n, "", "entry"), (1, seq + 1, 10 * i + 5, n, "", "exit")]
        seq += 2
    assert tc.file(conn, tc.chunk_doc("acme/w", None, "weird", evs, 0, 1, len(evs))) == 1
    calls = conn.execute(CALLS_SQL, ("weird",)).fetchall()
    assert sorted(c[6] for c in calls) == sorted(names)
    for fmt, check in (("chrome", check_chrome), ("speedscope", check_speedscope)):
        path = str(tmp_path / fmt)
        fnt(wh, "export", "weird", "--format", fmt, "-o", path)
        check(path, calls)
    path = str(tmp_path / "p.gz")
    fnt(wh, "export", "weird", "--format", "pprof", "-o", path)
    check_pprof(path, flame_rows(conn, "weird", None))
    path = str(tmp_path / "w.svg")
    fnt(wh, "flame", "weird", "-o", path)
    # XML holds no control characters: the SVG drops them from names
    check_svg(path, [("".join(ch for ch in st if ch >= " "), n, c)
                     for st, n, c in flame_rows(conn, "weird", None)])
    conn.close()


def test_speedscope_far_times(tmp_path):
    """Times far apart: the speedscope export codes each event's distance
    from its thread's previous one in 32 bits, a larger one (the first at
    2^40 ns, a gap of 2^33 ns, a call of 2^34 ns) given whole."""
    wh = str(tmp_path / "wh")
    conn = tc.connect(wh)
    t0, gap = 1 << 40, 1 << 33
    evs = [(1, 0, t0, "a", "", "entry"), (1, 1, t0 + 5, "a", "", "exit"),
           (1, 2, t0 + 5 + gap, "b", "", "entry"), (1, 3, t0 + 6 + gap, "c", "", "entry"),
           (1, 4, t0 + 7 + gap, "c", "", "exit"),
           (1, 5, t0 + 7 + gap + (1 << 34), "b", "", "exit"),
           (2, 6, 3, "a", "", "entry"), (2, 7, t0 + gap, "a", "", "exit")]
    assert tc.file(conn, tc.chunk_doc("acme/w", None, "far", evs, 0, 1, len(evs))) == 1
    calls = conn.execute(CALLS_SQL, ("far",)).fetchall()
    assert len(calls) == 4
    path = str(tmp_path / "far.speedscope")
    fnt(wh, "export", "far", "--format", "speedscope", "-o", path)
    check_speedscope(path, calls)
    ats = [e["at"] for p in json.load(open(path))["profiles"] for e in p["events"]]
    assert max(ats) == t0 + 7 + gap + (1 << 34)
    conn.close()


# ------------------------------------------------------------ the output

@pytest.fixture(scope="module")
def big():
    """A run of 24,000 calls on 4 threads: its chrome (~3.5 MB) and
    speedscope (~1.7 MB) exports fill more than one of the writer's 1 MiB buffers."""
    wh = tc.tmpdir("export-big-")
    conn = tc.connect(wh)
    evs = outer_inner(4, 3000)
    assert tc.file(conn, tc.chunk_doc("acme/b", None, "big", evs, 0, 1, len(evs))) == 1
    calls = conn.execute(CALLS_SQL, ("big",)).fetchall()
    assert len(calls) == 24000
    yield wh, calls
    conn.close()


def leftovers(d):
    return [f for f in os.listdir(d) if ".fnt-" in f]


def test_output_same_bytes_every_way(big):
    wh, calls = big
    for cmd, check in ((["export", "big", "--format", "chrome"], check_chrome),
                       (["export", "big", "--format", "speedscope"], check_speedscope),
                       (["flame", "big"], None), (["report", "big"], None)):
        path = os.path.join(wh, "big." + cmd[-1])
        fnt(wh, "-q", *cmd, "-o", path)
        want = open(path, "rb").read()
        if check:
            check(path, calls)
            assert len(want) > 1 << 20
        assert fnt(wh, "-q", *cmd).stdout == want
        # sendfile refuses an O_APPEND output: the writer reads and writes
        app = os.path.join(wh, "append")
        with open(app, "wb") as f:
            f.write(b"before\n")
        with open(app, "ab") as f:
            p = subprocess.run([FNT, "-q", "-w", wh] + cmd, stdout=f, stderr=subprocess.PIPE)
        assert p.returncode == 0, p.stderr.decode()
        assert open(app, "rb").read() == b"before\n" + want
    assert leftovers(wh) == []


def limited(fsize=None, sigpipe=False, mask=None):
    def pre():
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # EFBIG, not a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if sigpipe:
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)   # EPIPE, not a kill
        if mask is not None:
            os.umask(mask)
    return pre


@pytest.mark.parametrize("cmd", [["export", "big", "--format", "chrome"],
                                 ["export", "big", "--format", "speedscope"],
                                 ["export", "big", "--format", "folded"],
                                 ["flame", "big"], ["report", "big"]],
                         ids=["chrome", "speedscope", "folded", "flame", "report"])
def test_output_errors(big, cmd):
    wh, _ = big
    args = [FNT, "-w", wh] + cmd
    # a full disk
    p = subprocess.run(args + ["-o", "/dev/full"], capture_output=True)
    assert p.returncode == 1
    assert "/dev/full: write failed: No space left on device" in p.stderr.decode()
    # a pipe closed by its reader
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run(args, stdout=w, stderr=subprocess.PIPE, preexec_fn=limited(sigpipe=True))
    os.close(w)
    assert p.returncode == 1 and "stdout: write failed: Broken pipe" in p.stderr.decode()
    # a file too large for the limit: FILE keeps its old bytes, no temporary left
    path = os.path.join(wh, "old." + cmd[0] + "." + cmd[-1])
    with open(path, "w") as f:
        f.write("old\n")
    p = subprocess.run(args + ["-o", path], capture_output=True,
                       preexec_fn=limited(fsize=10))
    assert p.returncode == 1
    assert "%s: write failed: File too large" % path in p.stderr.decode(), p.stderr.decode()
    assert open(path).read() == "old\n" and leftovers(wh) == []


def test_output_file_modes(big, tmp_path):
    """A new FILE gets 0666 less the umask, as fopen gives; a FILE replaced
    keeps its mode; a symlink's target is written, the link kept."""
    wh, _ = big
    args = [FNT, "-q", "-w", wh, "export", "big", "--format", "folded", "-o"]
    new = str(tmp_path / "new")
    assert subprocess.run(args + [new], preexec_fn=limited(mask=0o027)).returncode == 0
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o640
    os.chmod(new, 0o600)
    assert subprocess.run(args + [new]).returncode == 0
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o600
    link = str(tmp_path / "link")
    os.symlink(new, link)
    os.truncate(new, 0)
    assert subprocess.run(args + [link]).returncode == 0
    assert os.path.islink(link) and os.path.getsize(new) > 0
    assert leftovers(str(tmp_path)) == []


def test_golden_format1(tmp_path):
    """A format-1 warehouse has no calls files: chrome and speedscope read
    the calls its replay derives in memory, a block at a time."""
    wh = tc.golden("warehouse-v1", "export-golden-")
    conn = tc.connect(wh)
    runs = [r[0] for r in conn.execute("SELECT DISTINCT run_id FROM fn_trace_events")]
    assert runs
    for run in runs:
        calls = conn.execute(CALLS_SQL, (run,)).fetchall()
        assert calls, run
        path = str(tmp_path / "out.json")
        p = fnt(wh, "export", run, "--format", "chrome", "-o", path)
        check_chrome(path, calls)
        assert ("%d calls" % len(calls)).encode() in p.stderr, run
        for env in ({}, {"FNT_SPEEDSCOPE_SLICE_CALLS": "3"}):
            fnt(wh, "export", run, "--format", "speedscope", "-o", path, env=env)
            check_speedscope(path, calls)
    conn.close()
