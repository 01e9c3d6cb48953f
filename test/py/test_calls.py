"""Calls (SPEC §7) against an independent reference written here.

The reference replays the events of the chunks filed so far exactly as SPEC
§5/§7 say (per thread in seq_no order, a stack, exits matched by key, open
frames ended at the thread's last event) and derives fn_trace_calls,
fnt_account, fnt_callgraph and fnt_heat from its calls.  Checked:

- hand-worked runs (recursion, mutual recursion, tail_exit, an exit that
  unwinds several frames, unmatched exits, frames open at the end, several
  threads, an exit matched by key under another symbol, a middle chunk
  missing then filed), the expected rows written out by hand, so that the
  reference is checked too;
- random runs (seeded: the seed is the test's parameter; FNT_CALLS_SEED=N
  runs that seed alone) filed chunk by chunk in a random order with a middle
  chunk held back and filed last: after every filing every table and
  function equals the reference over the chunks filed so far, and
  heat == the SPEC §7 aggregate of fn_trace_calls;
- 2-4 processes filing chunks of one run at once;
- a differential test: the reference calls in a plain SQLite table, a few
  hundred random queries with the constraints SPEC §7 pushes down, same
  answers;
- the golden format-1 warehouse: its calls derived on the fly.
"""
import json
import multiprocessing
import os
import random
import shutil
import sqlite3
import tempfile

import pytest

BUILD = os.environ.get("FNT_BUILD", "build")
EXT = os.path.join(BUILD, "fntrace")
SOURCE = os.environ.get("FNT_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))

CALL_COLS = ["repo", "commit", "run_id", "thread", "call_id", "parent_id",
             "depth", "start_ns", "end_ns", "dur_ns", "self_ns", "key",
             "stable_id", "symbol", "ended_by", "outermost"]
CALLS_SQL = ("SELECT %s FROM fn_trace_calls WHERE run_id = ?"
             % ", ".join('"%s"' % c for c in CALL_COLS))
ACCOUNT_SQL = ("SELECT key, symbol, calls, min_ns, p50_ns, p90_ns, p99_ns, max_ns, "
               "sum_ns, inclusive_ns, self_ns FROM fnt_account(?)")
GRAPH_SQL = "SELECT caller_key, callee_key, calls, total_ns, self_ns FROM fnt_callgraph(?)"
HEAT_SQL = "SELECT key, inclusive_ns, self_ns, calls FROM fnt_heat(?)"
AGG_SQL = ("SELECT key, sum(dur_ns*outermost), sum(self_ns), count(*) FROM fn_trace_calls "
           "WHERE run_id = ? GROUP BY key")


def tmpdir(prefix):
    base = os.environ.get("FNT_TEST_TMP")
    if base:
        os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix, dir=base)


def golden(name, prefix):
    """A fresh copy of test/golden/NAME (a warehouse of an older format),
    its path."""
    wh = os.path.join(tmpdir(prefix), "wh")
    shutil.copytree(os.path.join(SOURCE, "test", "golden", name), wh)
    return wh


def connect(wh):
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.execute("SELECT fnt_open(?)", (wh,))
    return conn


# ------------------------------------------------------------ the reference
#
# An event is (repo, commit, run_id, thread, seq_no, t_ns, stable_id, kind,
# symbol): an fn_trace_events row.

def key_of(stable_id, symbol):
    return stable_id if stable_id else "?" + symbol


def ref_calls(events):
    """The fn_trace_calls rows (tuples in CALL_COLS order) of one run's events."""
    by_thread = {}
    for e in sorted(events, key=lambda e: e[4]):
        by_thread.setdefault(e[3], []).append(e)
    out = []
    for thread, evs in by_thread.items():
        stack = []            # frames: dicts; "below": dur_ns of the frames ended directly above
        done = []

        def end(frame, t, how):             # frame was just popped
            frame.update(end=t, dur=t - frame["start"], how=how)
            if stack:
                stack[-1]["below"] += frame["dur"]
            done.append(frame)

        for repo, commit, run_id, _, seq, t, sid, kind, sym in evs:
            k = key_of(sid, sym)
            if kind == "entry":
                stack.append({"repo": repo, "commit": commit, "run_id": run_id,
                              "call_id": seq, "start": t, "key": k, "sid": sid, "sym": sym,
                              "depth": len(stack), "below": 0,
                              "parent": stack[-1]["call_id"] if stack else None,
                              "outermost": int(all(f["key"] != k for f in stack))})
                continue
            at = [i for i, f in enumerate(stack) if f["key"] == k]
            if not at:
                continue                        # nothing of it on the stack: ignored
            i = at[-1]
            while len(stack) > i + 1:
                end(stack.pop(), t, "unwound")
            end(stack.pop(), t, kind)
        last_t = evs[-1][5]
        while stack:
            end(stack.pop(), last_t, "open")
        for f in done:
            out.append((f["repo"], f["commit"], f["run_id"], thread, f["call_id"], f["parent"],
                        f["depth"], f["start"], f["end"], f["dur"], f["dur"] - f["below"],
                        f["key"], f["sid"], f["sym"], f["how"], f["outermost"]))
    return sorted(out, key=row_key)


def row_key(r):
    """Orders rows by (thread, call_id), then every column (NULL first)."""
    return (r[3], r[4]) + tuple((x is not None, 0 if x is None else x) for x in r)


C = {c: i for i, c in enumerate(CALL_COLS)}


def ref_heat(calls):
    h = {}
    for r in calls:
        a = h.setdefault(r[C["key"]], [0, 0, 0])
        a[0] += r[C["dur_ns"]] * r[C["outermost"]]
        a[1] += r[C["self_ns"]]
        a[2] += 1
    return sorted((k,) + tuple(v) for k, v in h.items())


def ref_account(calls):
    by_key = {}
    for r in sorted(calls, key=lambda r: r[C["call_id"]]):
        by_key.setdefault(r[C["key"]], []).append(r)
    out = []
    for k, rs in by_key.items():
        d = sorted(r[C["dur_ns"]] for r in rs)
        n = len(d)
        out.append((k, rs[0][C["symbol"]], n, d[0], d[n // 2], d[n * 9 // 10],
                    d[n * 99 // 100], d[-1], sum(d),
                    sum(r[C["dur_ns"]] for r in rs if r[C["outermost"]]),
                    sum(r[C["self_ns"]] for r in rs)))
    return sorted(out)


def ref_callgraph(calls):
    key_by_id = {r[C["call_id"]]: r[C["key"]] for r in calls}
    g = {}
    for r in calls:
        p = r[C["parent_id"]]
        e = g.setdefault((None if p is None else key_by_id[p], r[C["key"]]), [0, 0, 0])
        e[0] += 1
        e[1] += r[C["dur_ns"]]
        e[2] += r[C["self_ns"]]
    return sorted(((a, b) + tuple(v) for (a, b), v in g.items()), key=repr)


# ------------------------------------------------------------------ filing

def nested_events(paths):
    """Events of calls nested as each (thread, [symbol, ...]) path says, one
    path after another, 10 ns a step: (events, the next seq_no)."""
    evs, seq = [], 0
    for th, path in paths:
        for s in path:
            evs.append((th, seq, seq * 10, s, "", "entry"))
            seq += 1
        for s in reversed(path):
            evs.append((th, seq, seq * 10, s, "", "exit"))
            seq += 1
    return evs, seq


def chunk_doc(repo, commit, run_id, evs, c, nchunks, total):
    """A fnt_file_chunk document; evs: (thread, seq_no, t_ns, symbol, stable_id, kind)."""
    funs, index = [], {}
    for th, seq, t, sym, sid, kind in evs:
        if (sym, sid) not in index:
            index[(sym, sid)] = len(funs)
            funs.append({"symbol": sym, "stable_id": sid, "local": True})
    return {"repo": repo, "commit": commit, "run_id": run_id, "ts_micros": 1764680000000000,
            "target": "t", "source": "xray", "chunk": c, "chunks": nchunks,
            "total_events": total, "duration_ns": 0, "truncated": False,
            "functions": funs,
            "events": [[th, seq, t, index[(sym, sid)], kind]
                       for th, seq, t, sym, sid, kind in evs]}


def as_rows(repo, commit, run_id, evs):
    """The fn_trace_events rows of evs (SPEC §3: "" is NULL)."""
    return [(repo, commit or None, run_id, th, seq, t, sid or None, kind, sym)
            for th, seq, t, sym, sid, kind in evs]


def events_of(conn, run_id):
    """A run's fn_trace_events rows, as the reference takes them."""
    return conn.execute('SELECT repo, "commit", run_id, thread, seq_no, t_ns, stable_id, '
                        "kind, symbol FROM fn_trace_events WHERE run_id = ?",
                        (run_id,)).fetchall()


def file(conn, doc):
    return conn.execute("SELECT fnt_file_chunk(?)", (json.dumps(doc),)).fetchone()[0]


def q_sorted(conn, sql, *args):
    return sorted(conn.execute(sql, args).fetchall(), key=repr)


def check_run(conn, run_id, events, what):
    """Every §7 table and function of run_id against the reference of events."""
    calls = ref_calls(events)
    got = conn.execute(CALLS_SQL, (run_id,)).fetchall()
    got_s = sorted(got, key=row_key)
    if got_s != calls:
        pytest.fail("%s: fn_trace_calls differ\n%s" % (what, diff_rows(got_s, calls)))
    ordered = conn.execute(CALLS_SQL + " ORDER BY start_ns, call_id", (run_id,)).fetchall()
    # (start_ns, call_id) is unique unless a run repeats seq_nos across chunks
    order = lambda r: (r[C["start_ns"]], r[C["call_id"]])  # noqa: E731
    assert [order(r) for r in ordered] == sorted(order(r) for r in calls) and \
        sorted(ordered, key=row_key) == calls, "%s: ORDER BY start_ns, call_id" % what
    starts = [r[0] for r in conn.execute(
        "SELECT start_ns FROM fn_trace_calls WHERE run_id = ? ORDER BY start_ns", (run_id,))]
    assert starts == sorted(r[C["start_ns"]] for r in calls), "%s: ORDER BY start_ns" % what
    heat = ref_heat(calls)
    assert q_sorted(conn, HEAT_SQL, run_id) == heat, "%s: fnt_heat" % what
    assert q_sorted(conn, AGG_SQL, run_id) == heat, \
        "%s: heat != the SPEC §7 aggregate of fn_trace_calls" % what
    assert q_sorted(conn, ACCOUNT_SQL, run_id) == ref_account(calls), "%s: fnt_account" % what
    assert q_sorted(conn, GRAPH_SQL, run_id) == ref_callgraph(calls), "%s: fnt_callgraph" % what
    return calls


def diff_rows(got, want):
    g, w = set(got), set(want)
    lines = ["  got %d rows, want %d" % (len(got), len(want))]
    lines += ["  only got:  %r" % (r,) for r in sorted(g - w, key=repr)[:8]]
    lines += ["  only want: %r" % (r,) for r in sorted(w - g, key=repr)[:8]]
    if len(got) != len(g):
        lines.append("  got has duplicate rows")
    return "\n".join(lines)


# ------------------------------------------------------ hand-worked cases
#
# Each case: events (thread, seq_no, t_ns, symbol, stable_id, kind) and the
# calls expected, worked out by hand, as (thread, call_id, parent_id, depth,
# start_ns, end_ns, dur_ns, self_ns, key, ended_by, outermost).

E = "c r * even()."
S = "c r * f()."
CASES = {
    "recursion": (
        [(1, 0, 0, "main", None, "entry"), (1, 1, 10, "f", None, "entry"),
         (1, 2, 20, "f", None, "entry"), (1, 3, 30, "f", None, "entry"),
         (1, 4, 40, "f", None, "exit"), (1, 5, 50, "f", None, "exit"),
         (1, 6, 60, "f", None, "exit"), (1, 7, 100, "main", None, "exit")],
        [(1, 0, None, 0, 0, 100, 100, 50, "?main", "exit", 1),
         (1, 1, 0, 1, 10, 60, 50, 20, "?f", "exit", 1),
         (1, 2, 1, 2, 20, 50, 30, 20, "?f", "exit", 0),
         (1, 3, 2, 3, 30, 40, 10, 10, "?f", "exit", 0)]),
    "mutual recursion": (
        [(7, 10, 0, "is_even", E, "entry"), (7, 11, 5, "is_odd", "", "entry"),
         (7, 12, 6, "is_even", E, "entry"), (7, 13, 9, "is_even", E, "exit"),
         (7, 14, 12, "is_odd", "", "exit"), (7, 15, 20, "is_even", E, "exit")],
        [(7, 10, None, 0, 0, 20, 20, 13, E, "exit", 1),
         (7, 11, 10, 1, 5, 12, 7, 4, "?is_odd", "exit", 1),
         (7, 12, 11, 2, 6, 9, 3, 3, E, "exit", 0)]),
    "tail_exit and an exit that unwinds": (
        [(2, 0, 0, "main", None, "entry"), (2, 1, 10, "a", None, "entry"),
         (2, 2, 20, "a", None, "tail_exit"), (2, 3, 20, "b", None, "entry"),
         (2, 4, 30, "c", None, "entry"), (2, 5, 35, "d", None, "entry"),
         (2, 6, 50, "b", None, "exit"), (2, 7, 60, "main", None, "exit")],
        [(2, 0, None, 0, 0, 60, 60, 20, "?main", "exit", 1),
         (2, 1, 0, 1, 10, 20, 10, 10, "?a", "tail_exit", 1),
         (2, 3, 0, 1, 20, 50, 30, 10, "?b", "exit", 1),
         (2, 4, 3, 2, 30, 50, 20, 5, "?c", "unwound", 1),
         (2, 5, 4, 3, 35, 50, 15, 15, "?d", "unwound", 1)]),
    "unmatched exits, open frames, several threads": (
        [(3, 0, 100, "x", None, "exit"), (3, 1, 110, "m", None, "entry"),
         (4, 2, 0, "q", None, "entry"),
         (3, 3, 120, "y", None, "exit"), (3, 4, 130, "n", None, "entry"),
         (3, 5, 140, "n", None, "entry"), (3, 6, 150, "n", None, "exit"),
         (4294967295, 7, 5, "m", None, "entry"),
         (3, 8, 170, "p", None, "entry"), (4, 9, 500, "zz", None, "exit"),
         (4294967295, 10, 9, "m", None, "tail_exit"),
         (4294967295, 11, 9, "m", None, "exit")],
        [(3, 1, None, 0, 110, 170, 60, 20, "?m", "open", 1),
         (3, 4, 1, 1, 130, 170, 40, 30, "?n", "open", 1),
         (3, 5, 4, 2, 140, 150, 10, 10, "?n", "exit", 0),
         (3, 8, 4, 2, 170, 170, 0, 0, "?p", "open", 1),
         (4, 2, None, 0, 0, 500, 500, 500, "?q", "open", 1),
         (4294967295, 7, None, 0, 5, 9, 4, 4, "?m", "tail_exit", 1)]),
    "an exit matched by key under another symbol": (
        [(1, 0, 0, "f", S, "entry"), (1, 1, 3, "g", None, "entry"),
         (1, 2, 5, "f_alias", S, "exit"), (1, 3, 6, "g", "", "entry"),
         (1, 4, 8, "g", None, "exit")],
        [(1, 0, None, 0, 0, 5, 5, 3, S, "exit", 1),
         (1, 1, 0, 1, 3, 5, 2, 2, "?g", "unwound", 1),
         (1, 3, None, 0, 6, 8, 2, 2, "?g", "exit", 1)]),
}


def expand(repo, commit, run_id, evs, want):
    by = {(e[0], e[1]): e for e in evs}
    return sorted((repo, commit, run_id, th, cid, pid, dep, s, en, d, sf, k,
                   by[(th, cid)][4] or None, by[(th, cid)][3], how, om)
                  for th, cid, pid, dep, s, en, d, sf, k, how, om in want)


@pytest.fixture
def conn():
    c = connect(tmpdir("calls-"))
    yield c
    c.close()


@pytest.mark.parametrize("name", sorted(CASES))
def test_hand_worked(conn, name):
    evs, want = CASES[name]
    run_id = "hand-" + name
    rows = as_rows("acme/hand", "c0ffee", run_id, evs)
    want = expand("acme/hand", "c0ffee", run_id, evs, want)
    assert ref_calls(rows) == sorted(want, key=row_key), "the reference itself"
    # two chunks, the second filed first
    half = len(evs) // 2
    assert file(conn, chunk_doc("acme/hand", "c0ffee", run_id, evs[half:], 1, 2, len(evs))) == 1
    assert file(conn, chunk_doc("acme/hand", "c0ffee", run_id, evs[:half], 0, 2, len(evs))) == 1
    check_run(conn, run_id, rows, name)


def test_hand_account_and_callgraph(conn):
    evs, _ = CASES["recursion"]
    assert file(conn, chunk_doc("acme/hand", None, "rec", evs, 0, 1, len(evs))) == 1
    assert q_sorted(conn, ACCOUNT_SQL, "rec") == [
        ("?f", "f", 3, 10, 30, 50, 50, 50, 90, 50, 50),
        ("?main", "main", 1, 100, 100, 100, 100, 100, 100, 100, 50)]
    assert q_sorted(conn, GRAPH_SQL, "rec") == sorted([
        (None, "?main", 1, 100, 50), ("?main", "?f", 1, 50, 20), ("?f", "?f", 2, 40, 30)], key=repr)
    assert q_sorted(conn, HEAT_SQL, "rec") == [("?f", 50, 50, 3), ("?main", 100, 50, 1)]
    # the percentile rule, floor(p * n), on 200 calls of durations 1..200
    evs = []
    for i in range(200):
        evs += [(1, 2 * i, 1000 * i, "h", None, "entry"),
                (1, 2 * i + 1, 1000 * i + 200 - i, "h", None, "exit")]
    assert file(conn, chunk_doc("acme/hand", None, "pct", evs, 0, 1, len(evs))) == 1
    assert q_sorted(conn, ACCOUNT_SQL, "pct") == [
        ("?h", "h", 200, 1, 101, 181, 199, 200, 20100, 20100, 20100)]
    for run in ("no-such-run", "", None):
        for sql in (ACCOUNT_SQL, GRAPH_SQL):
            assert conn.execute(sql, (run,)).fetchall() == []
        assert conn.execute(CALLS_SQL, (run,)).fetchall() == []


@pytest.mark.parametrize("seed", [1, 2])
def test_account_many_calls_per_key(conn, seed):
    """Keys with hundreds to tens of thousands of calls (fnt_account
    buckets large distributions before selecting): durations with many
    ties, a heavy tail up to 2^40 ns, zeros, and clocks that go back."""
    rng = random.Random(seed)
    evs, seq, t = [], 0, 1 << 41
    sizes = {"ties": 700, "small": 511, "edge": 512, "tail": 6000, "mixed": 20000}
    order = [k for k, n in sizes.items() for _ in range(n)]
    rng.shuffle(order)
    for k in order:
        if k == "ties":
            d = rng.choice([5, 5, 5, 7, 1000])
        elif k == "tail":
            d = int(rng.expovariate(1.0) * 1000) << rng.randrange(0, 30)
        elif k == "mixed":
            d = rng.choice([0, rng.randrange(1 << 40), rng.randrange(100), -rng.randrange(50)])
        else:
            d = rng.randrange(1, 10 ** rng.randrange(1, 7))
        evs += [(1, seq, t, k, None, "entry"), (1, seq + 1, t + d, k, None, "exit")]
        seq, t = seq + 2, max(t, t + d) + 1
    run = "many%d" % seed
    assert file(conn, chunk_doc("acme/hand", None, run, evs, 0, 1, len(evs))) == 1
    got = q_sorted(conn, ACCOUNT_SQL, run)
    assert [r[2] for r in got] == [sizes[r[0][1:]] for r in got]
    assert got == ref_account(ref_calls(events_of(conn, run)))


def test_hand_middle_chunk_missing(conn):
    """Case "tail_exit and an exit that unwinds" in 3 chunks: 2, 0, then 1."""
    evs, want = CASES["tail_exit and an exit that unwinds"]
    parts = [evs[0:3], evs[3:6], evs[6:8]]
    doc = lambda c: chunk_doc("acme/hand", "c0ffee", "mid", parts[c], c, 3, len(evs))  # noqa: E731
    assert file(conn, doc(2)) == 1
    # only exits of b and main, nothing entered: no calls
    assert conn.execute(CALLS_SQL, ("mid",)).fetchall() == []
    assert file(conn, doc(0)) == 1
    # main [0,60], a [10,20] tail exit; b's exit is unmatched
    want_mid = expand("acme/hand", "c0ffee", "mid", evs, [
        (2, 0, None, 0, 0, 60, 60, 50, "?main", "exit", 1),
        (2, 1, 0, 1, 10, 20, 10, 10, "?a", "tail_exit", 1)])
    filed = as_rows("acme/hand", "c0ffee", "mid", parts[0] + parts[2])
    assert ref_calls(filed) == want_mid
    check_run(conn, "mid", filed, "chunks 2, 0")
    assert file(conn, doc(1)) == 1
    check_run(conn, "mid", as_rows("acme/hand", "c0ffee", "mid", evs), "chunks 2, 0, 1")
    assert sorted(conn.execute(CALLS_SQL, ("mid",)).fetchall()) == \
        expand("acme/hand", "c0ffee", "mid", evs, want)
    assert file(conn, doc(1)) == 0


# ------------------------------------------------------------ random runs

THREADS = [0, 1, 2, 77, 4294967295]


def random_events(rng, n_max=300, root=False, n_min=0):
    """(thread, seq_no, t_ns, symbol, stable_id, kind) in seq_no order.  With
    root, each thread first enters "main", which lasts the whole run."""
    nfun = rng.randint(2, 7)
    funs = [("f%d" % i, rng.choice([None, "", "c r * f%d()." % i])) for i in range(nfun)]
    if rng.random() < 0.2:
        funs.append(("alias", funs[0][1] or "c r * shared()."))
        funs[0] = (funs[0][0], funs[-1][1])
    nreg = len(funs)                                        # main is not drawn
    funs.append(("main", "c r * main()."))
    threads = rng.sample(THREADS, rng.randint(1, 4))
    stacks = {t: [] for t in threads}
    big = rng.random() < 0.15
    clock = {t: ((1 << 58) if big else 0) + rng.randint(0, 30) for t in threads}
    evs = []
    seq = rng.randint(0, 3)

    def key(f):
        return key_of(funs[f][1], funs[f][0])

    def pop_to(st, f):                  # what an exit of f does to the stack
        keys = [key(g) for g in st]
        if key(f) in keys:
            del st[len(keys) - 1 - keys[::-1].index(key(f)):]

    if root:
        for th in threads:
            stacks[th].append(nreg)
            evs.append((th, seq, clock[th], "main", funs[nreg][1], "entry"))
            seq += 1
    floor = 1 if root else 0
    for _ in range(rng.randint(n_min, n_max)):
        th = rng.choice(threads)
        clock[th] += rng.choice([0, 0, 1, 2, 3, 10, 250])
        st = stacks[th]
        r = rng.random()
        if len(st) <= floor or r < 0.45:
            if len(st) > floor and r < 0.1:
                f = st[-1]                                  # recursion
            elif len(st) >= floor + 2 and r < 0.18:
                f = st[-2]                                  # mutual recursion
            else:
                f = rng.randrange(nreg)
            st.append(f)
            kind = "entry"
        elif r < 0.52:
            f = rng.randrange(nreg)                         # maybe unmatched
            pop_to(st, f)
            kind = "exit"
        else:
            f = st[-(1 if rng.random() < 0.85 else rng.randint(1, len(st) - floor))]
            pop_to(st, f)
            kind = "tail_exit" if rng.random() < 0.2 else "exit"
        evs.append((th, seq, clock[th], funs[f][0], funs[f][1], kind))
        seq += rng.choice([1, 1, 1, 2, 7])
    if root and rng.random() < 0.5:
        for th in threads:                                  # main exits, unwinding
            clock[th] += 1
            evs.append((th, seq, clock[th], "main", funs[nreg][1], "exit"))
            seq += 1
    return evs


def split(rng, evs, nchunks):
    parts = [[] for _ in range(nchunks)]
    how = rng.randrange(3)
    for i, e in enumerate(evs):
        if how == 0:
            c = min(nchunks - 1, i * nchunks // max(1, len(evs)))
        elif how == 1:
            c = i % nchunks
        else:
            c = rng.randrange(nchunks)
        parts[c].append(e)
    for p in parts:
        rng.shuffle(p)                         # events come in any order
    return parts


def seeds(n):
    s = os.environ.get("FNT_CALLS_SEED")
    return [int(s)] if s else list(range(n))


@pytest.mark.parametrize("seed", seeds(24))
def test_random_runs(conn, seed):
    rng = random.Random(seed)
    for r in range(2):
        run_id = "rand-%d-%d" % (seed, r)
        repo, commit = "acme/r%d" % (seed % 3), rng.choice([None, "abc123"])
        evs = random_events(rng, root=rng.random() < 0.5)
        nchunks = rng.randint(3, 6)
        parts = split(rng, evs, nchunks)
        held = rng.randrange(1, nchunks - 1)               # a middle chunk, filed last
        order = [c for c in range(nchunks) if c != held]
        rng.shuffle(order)
        filed, done = [], []
        for c in order + [held]:
            assert file(conn, chunk_doc(repo, commit, run_id, parts[c], c, nchunks, len(evs))) == 1
            filed += parts[c]
            done.append(c)
            check_run(conn, run_id, as_rows(repo, commit, run_id, filed),
                      "seed %d run %s, chunks filed in the order %r of %d"
                      % (seed, run_id, done, nchunks))
        assert file(conn, chunk_doc(repo, commit, run_id, parts[held], held, nchunks, len(evs))) == 0
    if seed % 3 == 0:                   # compaction keeps every call
        conn.execute("SELECT fnt_compact()").fetchone()
        for r in range(2):
            run_id = "rand-%d-%d" % (seed, r)
            check_run(conn, run_id, events_of(conn, run_id),
                      "seed %d run %s after fnt_compact" % (seed, run_id))


# ------------------------------------------------------- concurrent filers

def _filer(wh, docs, barrier, results):
    try:
        c = connect(wh)
        barrier.wait(60)
        for d in docs:
            results.put((json.loads(d)["chunk"], file(c, json.loads(d))))
        c.close()
    except Exception as e:                      # reported to the parent
        results.put(("error", repr(e)))


@pytest.mark.parametrize("seed", seeds(6))
def test_concurrent_filers(seed):
    rng = random.Random(1000 + seed)
    wh = tmpdir("calls-conc-")
    ctx = multiprocessing.get_context("fork")
    run_id = "conc-%d" % seed
    evs = random_events(rng, 1500, root=seed % 2 == 0, n_min=500)
    nchunks = rng.randint(6, 12)
    parts = split(rng, evs, nchunks)
    docs = [json.dumps(chunk_doc("acme/conc", "abc", run_id, parts[c], c, nchunks, len(evs)))
            for c in range(nchunks)]
    nproc = rng.randint(2, 4)
    share = [[] for _ in range(nproc)]
    for c in range(nchunks):                    # every chunk by one or more filers
        for p in rng.sample(range(nproc), rng.randint(1 if seed % 2 else 2, nproc)):
            share[p].append(docs[c])
    for s in share:
        rng.shuffle(s)
    barrier, results = ctx.Barrier(nproc), ctx.Queue()
    procs = [ctx.Process(target=_filer, args=(wh, share[p], barrier, results))
             for p in range(nproc)]
    for p in procs:
        p.start()
    got = []
    for _ in range(sum(len(s) for s in share)):
        got.append(results.get(timeout=300))
        if got[-1][0] == "error":
            for p in procs:
                p.kill()
            pytest.fail("a filer failed: %s" % got[-1][1])
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    filed = {}
    for c, rc in got:
        filed[c] = filed.get(c, 0) + rc
    assert filed == {c: 1 for c in range(nchunks)}, "each chunk filed exactly once: %r" % filed
    c = connect(wh)
    check_run(c, run_id, as_rows("acme/conc", "abc", run_id, evs), "concurrent seed %d" % seed)
    c.close()


def test_concurrent_same_chunks():
    """Two filers race on every chunk of a run, in opposite orders, a few
    times: each chunk is filed once and its calls are there once."""
    ctx = multiprocessing.get_context("fork")
    evs = [(1, 0, 0, "main", None, "entry")]
    for k in range(8):                          # chunk k: two calls of g under main
        evs += [(1, 1 + 4 * k + i, 10 * k + 1 + i, "g", None, "entry" if i % 2 == 0 else "exit")
                for i in range(4)]
    parts = [evs[:5]] + [evs[1 + 4 * k:5 + 4 * k] for k in range(1, 8)]
    for trial in range(5):
        wh = tmpdir("calls-race-")
        docs = [json.dumps(chunk_doc("acme/race", None, "race", parts[k], k, 8, len(evs)))
                for k in range(8)]
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_filer, args=(wh, order, barrier, results))
                 for order in (docs, docs[::-1])]
        for p in procs:
            p.start()
        got = [results.get(timeout=300) for _ in range(16)]
        for p in procs:
            p.join(60)
        assert sorted(got) == sorted([(k, 1) for k in range(8)] + [(k, 0) for k in range(8)]), got
        c = connect(wh)
        check_run(c, "race", as_rows("acme/race", None, "race", evs), "race trial %d" % trial)
        c.close()


# -------------------------------------------------------- differential test

SCHEMA = "CREATE TABLE rc(%s)" % ", ".join(
    '"%s" %s' % (c, "TEXT" if c in ("repo", "commit", "run_id", "key", "stable_id",
                                    "symbol", "ended_by") else "INTEGER")
    for c in CALL_COLS)


@pytest.fixture(scope="module")
def diffdb():
    c = connect(tmpdir("calls-diff-"))
    c.execute(SCHEMA)
    c.execute("CREATE INDEX rc_parent ON rc(run_id, parent_id)")
    rng = random.Random(20261203)
    facts = {"runs": [], "by_run": {}}
    for i in range(7):
        run_id = ["d-a", "d-b", "7", "d 'q'", "d-e", "d-f", "d-big"][i]
        # d-big: calls over several row groups, main lasting the whole run
        evs = random_events(rng, 1500, root=i % 2 == 0) if i < 6 else \
            random_events(rng, 50000, root=True, n_min=50000)
        nchunks = rng.randint(1, 4) if i < 6 else 1          # row groups of one file
        parts = split(rng, evs, nchunks)
        filed = []
        for ch in range(nchunks):
            if nchunks > 2 and ch == 1 and i % 2:
                continue                                   # a middle chunk missing
            assert file(c, chunk_doc("acme/d", "abc", run_id, parts[ch], ch, nchunks,
                                     len(evs))) == 1
            filed += parts[ch]
        calls = ref_calls(as_rows("acme/d", "abc", run_id, filed))
        c.executemany("INSERT INTO rc VALUES (%s)" % ",".join("?" * 16), calls)
        facts["runs"].append(run_id)
        facts["by_run"][run_id] = {
            "threads": sorted({r[C["thread"]] for r in calls}) or [0],
            "ids": [r[C["call_id"]] for r in calls] or [0],
            "keys": sorted({r[C["key"]] for r in calls}) or ["?f0"],
            "t": [r[C[x]] for r in calls for x in ("start_ns", "end_ns")] or [0]}
    c.commit()
    yield c, facts
    c.close()


def atom(rng, f, params, run):
    """One constraint; its values mostly from the calls of `run`."""
    def p(v):
        params.append(v)
        return "?"
    g = f["by_run"][run if rng.random() < 0.85 else rng.choice(f["runs"])]
    k = rng.randrange(13)
    if k < 3:
        return "run_id = " + p(rng.choice([run] * 4 + f["runs"] + ["nope"]))
    if k == 3:
        return "run_id IN (%s, %s)" % (p(run), p(rng.choice(f["runs"])))
    if k == 4:
        return "thread = " + p(rng.choice(g["threads"] + [3]))
    if k == 5:
        return "call_id = " + p(rng.choice(g["ids"]))
    if k == 6:
        return "parent_id = " + p(rng.choice(g["ids"]))
    if k == 7:
        a, form = rng.randint(0, 6), rng.randrange(5)
        if form < 3:
            return ["depth >= ", "depth <= ", "depth = "][form] + p(a)
        if form == 3:
            return "depth BETWEEN %s AND %s" % (p(a), p(a + rng.randint(0, 3)))
        return "depth > %s AND depth < %s" % (p(a), p(a + 3))
    if k == 8:
        return "key = " + p(rng.choice(g["keys"] + ["?nope"]))
    if k == 9:
        return rng.choice(["dur_ns >= ", "dur_ns > "]) + p(rng.choice([0, 1, 5, 20, 100, 1000]))
    if k < 12:
        t0 = rng.choice(g["t"]) + rng.choice([-1, 0, 0, 1])
        t1 = t0 if rng.random() < 0.4 else t0 + rng.choice([0, 1, 10, 300, 5000])
        return "start_ns <= %s AND end_ns >= %s" % (p(t1), p(t0))
    return rng.choice(["ended_by = 'open'", "outermost = 1", "self_ns > 3",
                       "parent_id IS NULL", "symbol LIKE 'f1%'"])


def test_differential(diffdb):
    c, f = diffdb
    rng = random.Random(7)
    cols = ", ".join('"%s"' % x for x in CALL_COLS)
    for qn in range(400):
        params, run = [], rng.choice(f["runs"])
        atoms = [atom(rng, f, params, run) for _ in range(rng.choice([1, 1, 2, 2, 3]))]
        shape = rng.randrange(8)
        if shape in (2, 3):                 # one run, ORDER BY start_ns (LIMIT)
            atoms.append("run_id = ?")
            params.append(run)
        if shape == 6:                      # two runs: the order is not one run's
            atoms.append("run_id IN (?, ?)")
            params += [run, rng.choice(f["runs"])]
        where = " WHERE " + " AND ".join(atoms)
        lim = rng.randint(0, 40)
        if shape == 0:
            sql, ordered = "SELECT %s FROM {T}%s" % (cols, where), False
        elif shape == 1:
            sql, ordered = "SELECT count(*), sum(dur_ns), sum(self_ns) FROM {T}%s" % where, True
        elif shape == 2:
            sql, ordered = ("SELECT %s FROM {T}%s ORDER BY start_ns, call_id LIMIT %d"
                            % (cols, where, lim)), True
        elif shape == 3:
            sql, ordered = ("SELECT start_ns FROM {T}%s ORDER BY start_ns LIMIT %d"
                            % (where, lim)), True
        elif shape == 4:
            sql, ordered = ("SELECT count(*) FROM (SELECT * FROM {T}%s LIMIT %d)"
                            % (where, lim)), True
        elif shape == 6:
            sql, ordered = ("SELECT run_id, call_id, start_ns FROM {T}%s "
                            "ORDER BY start_ns, call_id, run_id LIMIT %d" % (where, lim * 5)), True
        elif shape == 7:
            sql, ordered = ("SELECT start_ns FROM {T}%s ORDER BY start_ns LIMIT %d"
                            % (where, lim)), True
        elif shape == 5:                    # the children of 20 calls, a join
            sql, ordered = ("SELECT p.run_id, p.call_id, k.call_id, k.depth - p.depth FROM "
                            "(SELECT run_id, call_id, depth FROM {T}%s ORDER BY run_id, call_id "
                            "LIMIT 20) p JOIN {T} k ON k.run_id = p.run_id AND k.parent_id = "
                            "p.call_id" % where), False
        out = []
        for t in ("fn_trace_calls", "rc"):
            rows = c.execute(sql.format(T=t), params).fetchall()
            out.append(rows if ordered else sorted(rows, key=repr))
        if out[0] != out[1]:
            pytest.fail("query %d differs: %s\n  params %r\n  vtab  %d rows %r\n  plain %d rows %r"
                        % (qn, sql.format(T="fn_trace_calls"), params, len(out[0]),
                           out[0][:6], len(out[1]), out[1][:6]))


def test_stack_at_instant(diffdb):
    """The stack of a thread at an instant, point overlap t0 = t1."""
    c, f = diffdb
    rng = random.Random(11)
    for _ in range(60):
        run = rng.choice(f["runs"])
        t = rng.choice(f["by_run"][run]["t"])
        sql = ("SELECT thread, depth, call_id FROM {T} WHERE run_id = ? AND start_ns <= ? "
               "AND end_ns >= ? ORDER BY thread, depth, call_id")
        a = c.execute(sql.format(T="fn_trace_calls"), (run, t, t)).fetchall()
        b = c.execute(sql.format(T="rc"), (run, t, t)).fetchall()
        assert a == b, (run, t)


# ---------------------------------------------- the golden format-1 warehouse

def test_golden_format1():
    wh = golden("warehouse-v1", "calls-golden-")
    c = connect(wh)
    runs = [r[0] for r in c.execute("SELECT DISTINCT run_id FROM fn_trace_events")]
    assert runs
    for run in runs:
        check_run(c, run, events_of(c, run), "golden run %s" % run)
    c.execute("SELECT fnt_compact()").fetchone()       # stores the calls of format 1
    for run in runs:
        check_run(c, run, events_of(c, run), "golden run %s after fnt_compact" % run)
    c.close()


# ------------------------------------------------------------------ pruning

def test_stab_and_window_read_what_overlaps():
    """A window or an instant reads only the row groups overlapping it, also
    with a call that lasts the whole run (main), as fnt_last_scan() shows."""
    c = connect(tmpdir("calls-prune-"))
    n = 100_000                         # calls g (depth 1), under one main
    evs = [(1, 0, 0, "main", None, "entry")]
    for i in range(n - 1):
        evs += [(1, 2 * i + 1, 10 * i + 1, "g%d" % (i % 50), None, "entry"),
                (1, 2 * i + 2, 10 * i + 6, "g%d" % (i % 50), None, "exit")]
    evs.append((1, 2 * n, 10 * n, "main", None, "exit"))
    assert file(c, chunk_doc("acme/prune", None, "prune", evs, 0, 1, len(evs))) == 1
    assert c.execute("SELECT count(*) FROM fn_trace_calls WHERE run_id = 'prune'").fetchone() == (n,)
    full = json.loads(c.execute("SELECT fnt_last_scan()").fetchone()[0])
    t = 10 * (n // 2) + 3                                  # inside g call n/2
    got = c.execute("SELECT call_id, depth FROM fn_trace_calls WHERE run_id = 'prune' AND "
                    "start_ns <= ? AND end_ns >= ? ORDER BY depth", (t, t)).fetchall()
    assert got == [(0, 0), (2 * (n // 2) + 1, 1)]
    stab = json.loads(c.execute("SELECT fnt_last_scan()").fetchone()[0])
    assert full["row_groups_read"] >= 4, full
    assert stab["row_groups_read"] <= 3, (stab, full)
    assert stab["rows_decoded"] * 2 <= full["rows_decoded"], (stab, full)
    # a window of 10,000 calls
    t0, t1 = 10 * 30_000, 10 * 40_000 - 1
    got = c.execute("SELECT count(*) FROM fn_trace_calls WHERE run_id = 'prune' AND "
                    "start_ns <= ? AND end_ns >= ?", (t1, t0)).fetchone()
    assert got == (10_001,)
    win = json.loads(c.execute("SELECT fnt_last_scan()").fetchone()[0])
    assert win["rows_decoded"] * 2 <= full["rows_decoded"], (win, full)
    c.close()
