"""fnt_timeline (SPEC §8) against an independent reference written here.

The reference reads a run's fn_trace_calls rows and applies SPEC §8 word
for word: w = max(1, ceil((t1 - t0) / buckets)), a call with
t0 <= start_ns < t1 is in bucket (start_ns - t0) // w, the call of greatest
dur_ns per (thread, depth, bucket) (ties: the smallest call_id) with the
bucket's count, and the call that started before t0 and ends after it as
bucket -1.  Compared exactly, through SQL and through the C API (`fnt
timeline --json`), on random runs (those of test_calls, filed in chunks out
of order, and a run at 2^58 ns) with many windows: one bucket, more buckets
than nanoseconds, windows before, after, inside and around the run, one
nanosecond wide, a thread filter.  Bad arguments give errors naming them.
Larger runs (test_wide_buckets) draw wide buckets through the calls files'
level of detail, with windows on its block edges; calls files written
before it (test_golden_v3_calls) are read by their rows.
"""
import json
import os
import random
import subprocess

import pytest

from test_calls import (chunk_doc, connect, file, golden, random_events, split,
                        tmpdir)

BUILD = os.environ.get("FNT_BUILD", "build")
FNT = os.path.join(BUILD, "fnt")
COLS = ["thread", "depth", "bucket", "call_id", "start_ns", "dur_ns", "key",
        "symbol", "calls"]
TL_SQL = "SELECT %s FROM fnt_timeline(?, ?, ?, ?)" % ", ".join(COLS)
TL_SQL_THREAD = "SELECT %s FROM fnt_timeline(?, ?, ?, ?, ?)" % ", ".join(COLS)


def ref_timeline(calls, t0, t1, buckets, thread=None):
    """calls: (thread, call_id, depth, start_ns, end_ns, dur_ns, key, symbol)."""
    w = max(1, -(-(t1 - t0) // buckets))
    groups = {}
    for c in calls:
        th, cid, depth, start, end, dur, key, sym = c
        if thread is not None and th != thread:
            continue
        if t0 <= start < t1:
            b = (start - t0) // w
        elif start < t0 and end > t0:
            b = -1
        else:
            continue
        groups.setdefault((th, depth, b), []).append(c)
    out = []
    for (th, depth, b), cs in groups.items():
        best = min(cs, key=lambda c: (-c[5], c[1]))
        out.append((th, depth, b, best[1], best[3], best[5], best[6], best[7],
                    1 if b < 0 else len(cs)))
    return sorted(out)


def calls_of(conn, run_id):
    return conn.execute("SELECT thread, call_id, depth, start_ns, end_ns, dur_ns, key, symbol "
                        "FROM fn_trace_calls WHERE run_id = ?", (run_id,)).fetchall()


def windows(rng, lo, hi):
    """(t0, t1, buckets) covering the cases SPEC §8 names."""
    span = max(1, hi - lo)
    ws = [(lo, hi + 1, 1), (lo, hi + 1, 2000), (lo, hi + 1, span * 3 + 7),
          (lo - 1000, lo, 5), (hi + 1, hi + 100, 5), (lo - 10, hi + 10, 7),
          (lo + span // 2, lo + span // 2 + 1, 1), (lo + span // 2, lo + span // 2 + 1, 9)]
    for _ in range(20):
        a = rng.randint(lo - span // 4, hi + span // 4)
        b = a + rng.randint(1, span + 2)
        ws.append((a, b, rng.choice([1, 2, 3, 7, 64, 1000, b - a, 3 * (b - a) + 1])))
    return ws


def cli_rows(wh, run_id, t0, t1, buckets, thread=None):
    args = [FNT, "-w", wh, "--json", "timeline", run_id, "--from", str(t0), "--to", str(t1),
            "--buckets", str(buckets)]
    if thread is not None:
        args += ["--thread", str(thread)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return sorted(tuple(json.loads(l)[c] for c in COLS) for l in out.splitlines())


@pytest.mark.parametrize("seed", range(12))
def test_random_runs(seed):
    wh = tmpdir("timeline-")
    conn = connect(wh)
    rng = random.Random(1000 + seed)
    run_id = "tl-%d" % seed
    evs = random_events(rng, n_max=400, n_min=50, root=rng.random() < 0.5)
    nchunks = rng.randint(1, 4)
    parts = split(rng, evs, nchunks)
    for c in rng.sample(range(nchunks), nchunks):
        assert file(conn, chunk_doc("acme/tl", None, run_id, parts[c], c, nchunks, len(evs))) == 1
    calls = calls_of(conn, run_id)
    assert calls
    lo = min(c[3] for c in calls)
    hi = max(c[4] for c in calls)
    threads = sorted({c[0] for c in calls})
    for i, (t0, t1, nb) in enumerate(windows(rng, lo, hi)):
        what = "seed %d window [%d, %d) buckets %d" % (seed, t0, t1, nb)
        want = ref_timeline(calls, t0, t1, nb)
        got = sorted(conn.execute(TL_SQL, (run_id, t0, t1, nb)).fetchall())
        assert got == want, what
        th = rng.choice(threads)
        want_th = ref_timeline(calls, t0, t1, nb, th)
        assert sorted(conn.execute(TL_SQL_THREAD, (run_id, t0, t1, nb, th)).fetchall()) == want_th, \
            what + " thread %d" % th
        if i % 4 == 0:                               # the C API, through fnt timeline
            assert cli_rows(wh, run_id, t0, t1, nb) == want, what + " (fnt timeline)"
            assert cli_rows(wh, run_id, t0, t1, nb, th) == want_th, what + " (fnt timeline --thread)"
    # The rows come ordered by thread, depth, bucket.
    rows = conn.execute(TL_SQL, (run_id, lo, hi + 1, 50)).fetchall()
    assert rows == sorted(rows)
    conn.close()


def test_hand_worked():
    """Two threads; ties broken by call_id; bucket -1; a count."""
    wh = tmpdir("timeline-hand-")
    conn = connect(wh)
    E, X = "entry", "exit"
    evs = [  # (thread, seq_no, t_ns, symbol, stable_id, kind)
        (1, 0, 0, "main", None, E), (1, 1, 10, "a", None, E), (1, 2, 20, "a", None, X),
        (1, 3, 30, "b", None, E), (1, 4, 40, "b", None, X), (1, 5, 45, "c", None, E),
        (1, 6, 95, "c", None, X), (1, 7, 100, "main", None, X),
        (2, 8, 5, "w", None, E), (2, 9, 60, "w", None, X)]
    file(conn, chunk_doc("acme/tl", None, "hand", evs, 0, 1, len(evs)))
    got = conn.execute(TL_SQL, ("hand", 10, 50, 2)).fetchall()
    assert got == [
        (1, 0, -1, 0, 0, 100, "?main", "main", 1),
        (1, 1, 0, 1, 10, 10, "?a", "a", 1),          # w = 20: [10, 30) holds a
        (1, 1, 1, 5, 45, 50, "?c", "c", 2),          # [30, 50): b and c, c the longer
        (2, 0, -1, 8, 5, 55, "?w", "w", 1)]
    # a and b both last 10: the tie goes to a, the smaller call_id.
    got = conn.execute(TL_SQL_THREAD, ("hand", 10, 45, 1, 1)).fetchall()
    assert got == [(1, 0, -1, 0, 0, 100, "?main", "main", 1), (1, 1, 0, 1, 10, 10, "?a", "a", 2)]
    # More buckets than nanoseconds: w = 1, one call per bucket.
    got = conn.execute(TL_SQL_THREAD, ("hand", 0, 11, 1000, 1)).fetchall()
    assert got == [(1, 0, 0, 0, 0, 100, "?main", "main", 1), (1, 1, 10, 1, 10, 10, "?a", "a", 1)]
    # A window after the run, and a thread that does not exist: no rows.
    assert conn.execute(TL_SQL, ("hand", 1000, 2000, 10)).fetchall() == []
    assert conn.execute(TL_SQL_THREAD, ("hand", 0, 100, 10, 3)).fetchall() == []
    assert conn.execute(TL_SQL_THREAD, ("hand", 0, 100, 10, -1)).fetchall() == []
    # The optional thread from a joined table, whichever side the planner
    # would put first: the thread it names, never every thread or none.
    conn.execute("CREATE TEMP TABLE th(t)")
    conn.execute("INSERT INTO th VALUES (2)")
    want = [(2, 0, -1, 8, 5, 55, "?w", "w", 1)]
    for sql in ["SELECT %s FROM th, fnt_timeline('hand', 10, 50, 2, th.t)",
                "SELECT %s FROM fnt_timeline('hand', 10, 50, 2) AS f JOIN th ON f.thread_arg = th.t"]:
        assert conn.execute(sql % ", ".join("f." + c if "JOIN" in sql else c for c in COLS)
                            ).fetchall() == want, sql
    # NULL arguments: no rows, as every fntrace table-valued function.
    assert conn.execute(TL_SQL, ("hand", None, 100, 10)).fetchall() == []
    conn.close()


@pytest.mark.parametrize("args,message", [
    (("hand", 10, 10, 5), "fnt_timeline: t1 (10) must be greater than t0 (10)"),
    (("hand", 10, 5, 5), "fnt_timeline: t1 (5) must be greater than t0 (10)"),
    (("hand", 0, 10, 0), "fnt_timeline: buckets (0) must be at least 1"),
    (("hand", 0, 10, -3), "fnt_timeline: buckets (-3) must be at least 1"),
    (("nope", 0, 10, 5), "fnt_timeline: no run 'nope' in snapshot 1"),
    (("hand", "abc", 10, 5), "fnt_timeline: t0 must be an integer, not 'abc'"),
    (("hand", 0, 1.5, 5), "fnt_timeline: t1 must be an integer, not '1.5'"),
])
def test_bad_arguments(args, message):
    wh = tmpdir("timeline-bad-")
    conn = connect(wh)
    evs = [(1, 0, 0, "main", None, "entry"), (1, 1, 100, "main", None, "exit")]
    file(conn, chunk_doc("acme/tl", None, "hand", evs, 0, 1, len(evs)))
    with pytest.raises(Exception) as e:
        conn.execute(TL_SQL, args).fetchall()
    assert str(e.value) == message
    with pytest.raises(Exception) as e:
        conn.execute("SELECT * FROM fnt_timeline('hand', 0)").fetchall()
    assert "the run_id, t0, t1 and buckets arguments are required" in str(e.value)
    # The CLI says the same, from the store's message.
    if not isinstance(args[1], str) and not isinstance(args[2], float):
        p = subprocess.run([FNT, "-w", wh, "timeline", args[0], "--from", str(args[1]),
                            "--to", str(args[2]), "--buckets", str(args[3])],
                           capture_output=True, text=True)
        assert p.returncode != 0
        assert p.stdout == ""
    conn.close()


def test_golden_format1():
    """A warehouse of format 1 (no calls files: derived when read), then
    compacted (its calls stored): the same timeline as the reference."""
    wh = golden("warehouse-v1", "timeline-golden-")
    conn = connect(wh)
    runs = [r[0] for r in conn.execute("SELECT DISTINCT run_id FROM fn_trace_events")]
    assert runs
    for compacted in (False, True):
        for run in runs:
            calls = calls_of(conn, run)
            lo, hi = conn.execute("SELECT min(t_ns), max(t_ns) FROM fn_trace_events "
                                  "WHERE run_id = ?", (run,)).fetchone()
            for t0, t1, nb in [(lo, hi + 1, 1), (lo, hi + 1, 3), (lo + 1, hi, 1000)]:
                got = sorted(conn.execute(TL_SQL, (run, t0, t1, nb)).fetchall())
                assert got == ref_timeline(calls, t0, t1, nb), (run, compacted, t0, t1, nb)
        conn.execute("SELECT fnt_compact()").fetchone()
    conn.close()


def block_starts(conn, run_id):
    """The first start_ns of each block of FNT_LOD_ROWS rows of a run's calls
    file, as a writer lays it out (FORMAT.md, "Calls segments" and "Level of
    detail"): ended calls by (depth, start_ns, thread, call_id), row groups of
    at most 1,024 rows of one depth.  Exact for a run filed in one chunk."""
    rows = conn.execute("SELECT depth, start_ns, thread, call_id FROM fn_trace_calls "
                        "WHERE run_id = ? AND ended_by != 'open' "
                        "ORDER BY depth, start_ns, thread, call_id", (run_id,)).fetchall()
    out, i = [], 0
    while i < len(rows):
        j = i
        while j < len(rows) and j - i < 1024 and rows[j][0] == rows[i][0]:
            j += 1
        out += [rows[k][1] for k in range(i, j, LOD_ROWS)]
        i = j
    return sorted(set(out))


LOD_ROWS = 128


@pytest.mark.parametrize("seed", range(4))
def test_wide_buckets(seed):
    """Runs of thousands of calls, where buckets hold many calls of a row
    group: the level of detail's blocks are read whole and only blocks across
    an edge by their rows.  Windows on block edges (and a nanosecond off),
    a bucket per few blocks, ties in dur_ns (durations are a few ns), one
    file or several (chunks out of order), the tail's open rows."""
    wh = tmpdir("timeline-wide-")
    conn = connect(wh)
    rng = random.Random(3000 + seed)
    run_id = "wide-%d" % seed
    evs = random_events(rng, n_max=24000, n_min=16000, root=seed % 2 == 0)
    nchunks = 1 if seed < 2 else rng.randint(2, 3)
    parts = split(rng, evs, nchunks)
    for c in rng.sample(range(nchunks), nchunks):
        assert file(conn, chunk_doc("acme/tl", None, run_id, parts[c], c, nchunks, len(evs))) == 1
    calls = calls_of(conn, run_id)
    lo = min(c[3] for c in calls)
    hi = max(c[4] for c in calls)
    edges = block_starts(conn, run_id)
    ws = [(lo, hi + 1, nb) for nb in (1, 2, 5, 20, 100, 2000)]
    for _ in range(6):
        i = rng.randrange(len(edges) - 1)
        j = rng.randrange(i + 1, len(edges))
        a, b = edges[i], edges[j]
        ws += [(a, b, 1), (a, b, 2), (a - 1, b + 1, 3), (a + 1, max(a + 2, b - 1), 1),
               (a, b + (b - a) * 3, 4), (a, b, rng.randint(1, j - i + 1))]
    threads = sorted({c[0] for c in calls})
    for k, (t0, t1, nb) in enumerate(ws):
        what = "seed %d window [%d, %d) buckets %d" % (seed, t0, t1, nb)
        want = ref_timeline(calls, t0, t1, nb)
        assert sorted(conn.execute(TL_SQL, (run_id, t0, t1, nb)).fetchall()) == want, what
        if k % 5 == 0:
            th = rng.choice(threads)
            assert sorted(conn.execute(TL_SQL_THREAD, (run_id, t0, t1, nb, th)).fetchall()) == \
                ref_timeline(calls, t0, t1, nb, th), what + " thread %d" % th
        if k % 9 == 0:
            assert cli_rows(wh, run_id, t0, t1, nb) == want, what + " (fnt timeline)"
    conn.close()


def test_golden_v3_calls():
    """Calls files written before the level of detail (format 3): read by
    their rows, wide buckets too, the same timeline as the reference."""
    wh = golden("warehouse-v3-calls", "timeline-v3-")
    conn = connect(wh)
    runs = [r[0] for r in conn.execute("SELECT DISTINCT run_id FROM fn_trace_calls")]
    assert runs
    for run in runs:
        calls = calls_of(conn, run)
        lo = min(c[3] for c in calls)
        hi = max(c[4] for c in calls)
        for t0, t1, nb in [(lo, hi + 1, 1), (lo, hi + 1, 3), (lo, hi + 1, 2000),
                           (lo + (hi - lo) // 3, hi, 2)]:
            got = sorted(conn.execute(TL_SQL, (run, t0, t1, nb)).fetchall())
            assert got == ref_timeline(calls, t0, t1, nb), (run, t0, t1, nb)
    conn.close()
