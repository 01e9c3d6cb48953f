"""fnt_flame and fnt_folded (SPEC §8) against an independent reference.

The reference folds the calls that test_calls.py's reference replay derives
from the events (not the store's fn_trace_calls): a call's stack is its
parent's plus its symbol; whole run, self adds self_ns; in a window every
call is clipped to [t0, t1) and self is the clipped duration minus the
clipped durations of the calls directly above it; a call is in the window
when start < t1 and (end > t0 or start >= t0).  Checked on seeded random
runs filed in several chunks out of order, whole run and many windows
(before, after, inside and around the run, one nanosecond wide, exactly a
call's edges), with and without a thread, through the table-valued function
and the scalar fnt_folded; bad arguments give errors that name them.
"""
import os
import random
import sqlite3
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_calls as tc  # noqa: E402  (the reference replay and filing helpers)

C = tc.C


def ref_flame(calls, window=None, thread=None):
    """{stack: [self_ns, calls]} of rows in CALL_COLS order."""
    # (thread, call_id, depth): a format-1 run can repeat a seq_no.
    by_id = {(r[C["thread"]], r[C["call_id"]], r[C["depth"]]): r for r in calls}
    stacks = {}

    def stack_of(r):
        k = (r[C["thread"]], r[C["call_id"]], r[C["depth"]])
        if k not in stacks:
            p = r[C["parent_id"]]
            below = (stack_of(by_id[(r[C["thread"]], p, r[C["depth"]] - 1)]) + ";"
                     if p is not None else "")
            stacks[k] = below + r[C["symbol"]]
        return stacks[k]

    out = {}
    for r in calls:
        if thread is not None and r[C["thread"]] != thread:
            continue
        s, e = r[C["start_ns"]], r[C["end_ns"]]
        if window is None:
            self_ns = r[C["self_ns"]]
        else:
            t0, t1 = window
            if not (s < t1 and (e > t0 or s >= t0)):
                continue
            clip = lambda a, b: min(b, t1) - max(a, t0)  # noqa: E731
            self_ns = clip(s, e)
            for c in calls:
                if (c[C["thread"]] == r[C["thread"]] and c[C["parent_id"]] == r[C["call_id"]]
                        and c[C["depth"]] == r[C["depth"]] + 1
                        and c[C["start_ns"]] < t1
                        and (c[C["end_ns"]] > t0 or c[C["start_ns"]] >= t0)):
                    self_ns -= clip(c[C["start_ns"]], c[C["end_ns"]])
        a = out.setdefault(stack_of(r), [0, 0])
        a[0] += self_ns
        a[1] += 1
    return sorted((k, v[0], v[1]) for k, v in out.items())


def folded(rows):
    return "".join("%s %d\n" % (s, n) for s, n, _ in rows)


def windows(rng, calls):
    """Windows before, after, inside and around the run and at call edges."""
    ts = sorted({r[C["start_ns"]] for r in calls} | {r[C["end_ns"]] for r in calls}) or [0]
    lo, hi = ts[0], ts[-1]
    out = [(lo - 100, lo - 1), (hi + 1, hi + 100), (lo - 10, hi + 10), (lo, hi + 1),
           (lo, lo + 1), (hi, hi + 1)]
    for _ in range(12):
        a = rng.choice(ts) + rng.choice([-1, 0, 0, 1])
        b = a + rng.choice([1, 2, 5, 50, 1000, rng.choice(ts) - a if rng.choice(ts) > a else 3])
        out.append((a, max(b, a + 1)))
    return out


@pytest.fixture
def conn():
    c = tc.connect(tc.tmpdir("flame-"))
    yield c
    c.close()


def flame_sql(conn, *args):
    q = "SELECT stack, self_ns, calls FROM fnt_flame(%s) ORDER BY stack" % ", ".join(
        "?" for _ in args)
    return conn.execute(q, args).fetchall()


def hand_calls(conn):
    """A hand-worked run: main calls a (which calls b) then b; thread 1 too."""
    evs = [(0, 0, 0, "main", "", "entry"), (0, 1, 10, "a", "", "entry"),
           (0, 2, 20, "b", "", "entry"), (0, 3, 30, "b", "", "exit"),
           (0, 4, 40, "a", "", "exit"), (0, 5, 50, "b", "", "entry"),
           (0, 6, 80, "b", "", "exit"), (0, 7, 100, "main", "", "exit"),
           (1, 8, 5, "a", "", "entry"), (1, 9, 15, "a", "", "exit")]
    assert tc.file(conn, tc.chunk_doc("acme/h", None, "hand", evs, 0, 1, len(evs))) == 1


def test_hand_worked(conn):
    hand_calls(conn)
    # main 0..100: a 10..40 (b 20..30), b 50..80; thread 1: a 5..15.
    assert flame_sql(conn, "hand") == [
        ("a", 10, 1), ("main", 40, 1), ("main;a", 20, 1), ("main;a;b", 10, 1),
        ("main;b", 30, 1)]
    # [25, 60): main 35 minus a 15 (25..40, less b 25..30 = 5) and b 10.
    assert flame_sql(conn, "hand", 25, 60) == [
        ("main", 10, 1), ("main;a", 10, 1), ("main;a;b", 5, 1), ("main;b", 10, 1)]
    assert flame_sql(conn, "hand", 0, 100, 1) == [("a", 10, 1)]
    # A call that ends at t0 is out; one that starts at t0 (even empty) is in.
    assert flame_sql(conn, "hand", 40, 50) == [("main", 10, 1)]
    assert flame_sql(conn, "hand", 15, 16, 1) == []
    assert conn.execute("SELECT fnt_folded('hand', 25, 60)").fetchone()[0] == (
        "main 10\nmain;a 10\nmain;a;b 5\nmain;b 10\n")
    assert conn.execute("SELECT fnt_folded('nope')").fetchone()[0] == ""
    assert conn.execute("SELECT fnt_folded(NULL)").fetchone()[0] is None
    assert flame_sql(conn, "nope") == []


@pytest.mark.parametrize("sql, msg", [
    ("SELECT * FROM fnt_flame('hand', 10, 10)", "t1 (10) must be greater than t0 (10)"),
    ("SELECT * FROM fnt_flame('hand', 10, 5)", "must be greater than t0"),
    ("SELECT * FROM fnt_flame('hand', 10)", "t0 and t1 go together"),
    ("SELECT * FROM fnt_flame('hand', 'x', 5)", "t0 must be an integer, not 'x'"),
    ("SELECT * FROM fnt_flame('hand', 0, 5, -1)", "thread must be >= 0"),
    ("SELECT * FROM fnt_flame", "the run_id argument is required"),
    ("SELECT fnt_folded('hand', 0)", "wrong number of arguments"),
    ("SELECT fnt_folded('hand', 9, 1)", "must be greater than t0"),
])
def test_bad_arguments(conn, sql, msg):
    hand_calls(conn)
    with pytest.raises(sqlite3.Error) as e:
        conn.execute(sql).fetchall()
    assert msg in str(e.value)


@pytest.mark.parametrize("seed", tc.seeds(16))
def test_random_runs(conn, seed):
    rng = random.Random(1000 + seed)
    run_id = "flame-%d" % seed
    evs = tc.random_events(rng, n_max=250, root=rng.random() < 0.5)
    nchunks = rng.randint(2, 5)
    parts = tc.split(rng, evs, nchunks)
    order = list(range(nchunks))
    rng.shuffle(order)
    for c in order:
        assert tc.file(conn, tc.chunk_doc("acme/f", "c1", run_id, parts[c], c, nchunks,
                                          len(evs))) == 1
    calls = tc.ref_calls(tc.as_rows("acme/f", "c1", run_id, evs))
    want = ref_flame(calls)
    assert flame_sql(conn, run_id) == want, "seed %d: whole run" % seed
    assert conn.execute("SELECT fnt_folded(?)", (run_id,)).fetchone()[0] == folded(want)
    threads = sorted({r[C["thread"]] for r in calls})
    for t0, t1 in windows(rng, calls):
        want = ref_flame(calls, (t0, t1))
        assert flame_sql(conn, run_id, t0, t1) == want, "seed %d: [%d, %d)" % (seed, t0, t1)
        th = rng.choice(threads + [12345])
        want = ref_flame(calls, (t0, t1), th)
        assert flame_sql(conn, run_id, t0, t1, th) == want, \
            "seed %d: [%d, %d) thread %d" % (seed, t0, t1, th)
        assert conn.execute("SELECT fnt_folded(?, ?, ?, ?)",
                            (run_id, t0, t1, th)).fetchone()[0] == folded(want)


def test_golden_format1_and_compaction():
    """A format-1 warehouse has no calls files (folded from the replay), and
    compaction rewrites them with stacks sections: the same flames."""
    wh = tc.golden("warehouse-v1", "flame-golden-")
    c = tc.connect(wh)
    runs = [r[0] for r in c.execute("SELECT DISTINCT run_id FROM fn_trace_events")]
    assert runs
    want = {r: ref_flame(tc.ref_calls(tc.events_of(c, r))) for r in runs}
    for r in runs:
        assert want[r] and flame_sql(c, r) == want[r], r
    c.execute("SELECT fnt_compact()").fetchone()
    for r in runs:
        assert flame_sql(c, r) == want[r], "%s after fnt_compact" % r
    c.close()


def test_symbols_against_tree_order(conn):
    """Rows come in strcmp's order of their texts even where that is not the
    tree's order by symbol: a symbol that is a sibling's prefix followed by a
    byte below ';' ("a" and "a:x", "a!"), one holding a ';' (its text equal
    to another stack's: the two rows merge)."""
    evs, seq = tc.nested_events([(0, ["a", "c"]), (0, ["a:x"]), (0, ["a;c"]), (0, ["a!"]),
                                 (1, ["a", "a:x", "c"]), (1, ["a", "a:x"]), (1, ["a", "a;"])])
    assert tc.file(conn, tc.chunk_doc("acme/o", None, "odd", evs, 0, 1, len(evs))) == 1
    calls = tc.ref_calls(tc.events_of(conn, "odd"))
    want = ref_flame(calls)
    assert [r[0] for r in want] == sorted(r[0] for r in want)
    assert ("a;c", 20, 2) in want                 # "a" then "c", and "a;c" itself
    assert conn.execute("SELECT fnt_folded('odd')").fetchone()[0] == folded(want)
    t0, t1 = 15, seq * 10 - 15
    assert conn.execute("SELECT fnt_folded('odd', ?, ?)", (t0, t1)).fetchone()[0] == \
        folded(ref_flame(calls, (t0, t1)))


@pytest.mark.parametrize("flat_file", [False, True])
def test_many_files(conn, flat_file):
    """A run of more calls files than the flame keeps in the segment cache
    (16), filed in order, each file a program's few stacks: the whole-run
    flame adds their stacks sections.  With flat_file, one file in the middle
    has a stack per call and no stacks section, so the run is folded from
    its calls instead of the sections read before it."""
    evs, seq = [], 0

    def ev(th, sym, kind):
        nonlocal seq
        evs.append((th, seq, seq * 7, sym, "", kind))
        seq += 1

    chunks = []
    for th in (0, 1):
        ev(th, "main", "entry")                     # open to the run's end
    for c in range(21):
        start = len(evs)
        if flat_file and c == 10:
            for i in range(1200):
                ev(i % 2, "unique_%d" % i, "entry")
                ev(i % 2, "unique_%d" % i, "exit")
        else:
            for i in range(60):
                th = i % 2
                ev(th, "a", "entry")
                ev(th, "b" if (i + c) % 3 else "c", "entry")   # tables differ
                ev(th, "b" if (i + c) % 3 else "c", "exit")
                ev(th, "a", "exit")
        chunks.append(evs[start if c else 0:len(evs)])
    for c, part in enumerate(chunks):
        assert tc.file(conn, tc.chunk_doc("acme/m", None, "many", part, c, len(chunks),
                                          len(evs))) == 1
    calls = tc.ref_calls(tc.events_of(conn, "many"))
    want = ref_flame(calls)
    assert len(want) == (1204 if flat_file else 4), len(want)
    assert flame_sql(conn, "many") == want
