"""fnt_compare(repo, commit_a, commit_b) against SciPy (SPEC §9).

Runs are filed whose heat gives chosen inclusive_ns per key (one call per
key, entry at t, exit at t + value), several keys per run, under two
commits of a repo; each repo is one pair of sample sizes, from (1, 1) up to
(25, 30).  Values come from small ranges so that ties are common, and some
keys are equal everywhere, constant within each side, absent from some runs
(0 by the SPEC) or from a whole side.  Every row's medians, ratio and
p-value must equal numpy.median and scipy.stats.mannwhitneyu(a, b,
method='asymptotic', use_continuity=True) (Debian's python3-scipy), NULL
where the SPEC says, and the rows must come in the SPEC's order.  Seeds are
fixed.
"""
import json
import math
import os
import random
import sqlite3
import tempfile

import numpy as np
import pytest
import scipy.stats as scipy_stats     # python3-scipy, from tools/setup.sh

BUILD = os.environ.get("FNT_BUILD", "build")
EXT = os.path.join(BUILD, "fntrace")

SIZES = [(1, 1), (1, 4), (4, 1), (2, 2), (2, 3), (3, 3), (5, 5), (4, 9),
         (10, 10), (25, 30)]


def connect(wh):
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.execute("SELECT fnt_open(?)", (wh,))
    return conn


def file_run(conn, repo, commit, run_id, values, chunk=0, chunks=1,
             seq0=0, stable=None):
    """Files one chunk of run_id: for each (symbol, value), a call lasting
    value ns on thread 1.  `stable` maps symbols to stable_ids."""
    stable = stable or {}
    functions, events, t, seq = [], [], 0, seq0
    for i, (sym, v) in enumerate(values.items()):
        functions.append({"symbol": sym, "stable_id": stable.get(sym),
                          "local": True})
        events.append([1, seq, t, i, "entry"])
        events.append([1, seq + 1, t + v, i, "exit"])
        seq += 2
        t += v + 10
    chunk_json = {"repo": repo, "commit": commit, "run_id": run_id,
                  "target": "t", "source": "test", "chunk": chunk,
                  "chunks": chunks, "total_events": len(events),
                  "duration_ns": t, "truncated": False,
                  "functions": functions, "events": events}
    got = conn.execute("SELECT fnt_file_chunk(?)",
                       (json.dumps(chunk_json),)).fetchone()[0]
    assert got == 1


def draw_case(rng, na, nb):
    """Per key, the values of side a's runs and side b's runs; None means
    the run has no call of the key (its value is 0)."""
    keys = {}
    for k in range(24):
        style = k % 8
        if style == 0:      # ties: few distinct values, same distribution
            a = [rng.randint(0, 4) * 1000 for _ in range(na)]
            b = [rng.randint(0, 4) * 1000 for _ in range(nb)]
        elif style == 1:    # a shift, with ties
            a = [rng.randint(0, 6) * 100 for _ in range(na)]
            b = [rng.randint(3, 9) * 100 for _ in range(nb)]
        elif style == 2:    # every value equal: p is NULL
            a, b = [777] * na, [777] * nb
        elif style == 3:    # constant per side, different sides
            a, b = [500] * na, [900] * nb
        elif style == 4:    # absent from some runs (those count 0)
            a = [rng.choice([None, 250, 300]) for _ in range(na)]
            b = [rng.choice([None, 250, 300, 350]) for _ in range(nb)]
        elif style == 5:    # absent from side a: median_a 0, ratio NULL
            a = [None] * na
            b = [rng.randint(1, 3) * 10 for _ in range(nb)]
        elif style == 6:    # continuous: no ties
            a = [rng.randint(10**6, 2 * 10**6) for _ in range(na)]
            b = [rng.randint(10**6, 3 * 10**6) for _ in range(nb)]
        else:               # a real call of 0 ns next to absent ones
            a = [rng.choice([0, None, 40]) for _ in range(na)]
            b = [rng.choice([0, None, 40, 80]) for _ in range(nb)]
        keys["fn_%02d" % k] = (a, b)
    return keys


def expected_p(a, b):
    if len(a) < 2 or len(b) < 2 or len(set(a + b)) == 1:
        return None
    res = scipy_stats.mannwhitneyu(a, b, method="asymptotic",
                                   use_continuity=True,
                                   alternative="two-sided")
    return float(res.pvalue)


def close(got, want):
    if want is None:
        return got is None
    return got is not None and math.isclose(got, want, rel_tol=1e-9,
                                            abs_tol=1e-300)


@pytest.fixture(scope="module")
def warehouse():
    tmp = os.environ.get("FNT_TEST_TMP")
    if tmp:
        os.makedirs(tmp, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        wh = os.path.join(d, "wh")
        conn = connect(wh)
        rng = random.Random(15)
        cases = {}
        for na, nb in SIZES:
            repo = "acme/%dx%d" % (na, nb)
            keys = draw_case(rng, na, nb)
            cases[repo] = keys
            for side, commit, n in (0, "c-a", na), (1, "c-b", nb):
                for r in range(n):
                    vals = {sym: ab[side][r] for sym, ab in keys.items()
                            if ab[side][r] is not None}
                    # every run calls "main", so that no run is empty
                    vals["main"] = 5
                    file_run(conn, repo, commit, "%s/%s/%d" % (repo, commit, r),
                             vals)
        # the same commits in another repo must not count
        file_run(conn, "other/repo", "c-a", "other-1", {"fn_00": 10**9})
        file_run(conn, "other/repo", "c-b", "other-2", {"fn_00": 1})
        yield conn, cases, wh
        conn.close()


def rows_of(conn, repo, a="c-a", b="c-b"):
    cur = conn.execute("SELECT key, symbol, runs_a, runs_b, median_a, "
                       "median_b, ratio, p_value FROM fnt_compare(?, ?, ?)",
                       (repo, a, b))
    return cur.fetchall()


@pytest.mark.parametrize("na,nb", SIZES)
def test_against_scipy(warehouse, na, nb):
    conn, cases, _ = warehouse
    repo = "acme/%dx%d" % (na, nb)
    keys = dict(cases[repo])
    keys["main"] = ([5] * na, [5] * nb)
    rows = rows_of(conn, repo)
    # one row per key that some run calls
    called = [k for k, (a, b) in keys.items()
              if any(v is not None for v in a + b)]
    assert sorted(r[0] for r in rows) == sorted("?" + k for k in called)
    for key, symbol, runs_a, runs_b, med_a, med_b, ratio, p in rows:
        a, b = ([0 if v is None else v for v in side]
                for side in keys[key[1:]])
        assert symbol == key[1:]
        assert (runs_a, runs_b) == (na, nb)
        assert med_a == float(np.median(a)), key
        assert med_b == float(np.median(b)), key
        want_ratio = None if med_a == 0 else med_b / med_a
        assert close(ratio, want_ratio), (key, ratio, want_ratio)
        want = expected_p(a, b)
        assert close(p, want), (key, a, b, p, want)


def order_key(row):
    p, ratio = row[7], row[6]
    return (p is None, p if p is not None else 0,
            ratio is None, -ratio if ratio is not None else 0, row[0])


@pytest.mark.parametrize("na,nb", SIZES)
def test_order(warehouse, na, nb):
    conn, _, _ = warehouse
    rows = rows_of(conn, "acme/%dx%d" % (na, nb))
    assert rows == sorted(rows, key=order_key)


def test_some_p_values_are_small(warehouse):
    """Not every case is NULL or near 1: the shifts are found."""
    conn, _, _ = warehouse
    ps = [r[7] for r in rows_of(conn, "acme/25x30") if r[7] is not None]
    assert min(ps) < 1e-6 and max(ps) > 0.1


def test_swapped_commits(warehouse):
    """a against b and b against a: the same p-values, inverse ratios."""
    conn, _, _ = warehouse
    ab = {r[0]: r for r in rows_of(conn, "acme/10x10")}
    ba = {r[0]: r for r in rows_of(conn, "acme/10x10", "c-b", "c-a")}
    assert ab.keys() == ba.keys()
    for k, r in ab.items():
        s = ba[k]
        assert close(s[7], r[7])
        assert (s[4], s[5]) == (r[5], r[4])


def test_one_side_empty(warehouse):
    conn, cases, _ = warehouse
    rows = rows_of(conn, "acme/5x5", "c-a", "no-such-commit")
    called = [k for k, (a, _) in cases["acme/5x5"].items()
              if any(v is not None for v in a)]
    assert len(rows) == len(called) + 1            # and main
    for key, _, runs_a, runs_b, med_a, med_b, ratio, p in rows:
        assert (runs_a, runs_b, med_b, p) == (5, 0, None, None)
        assert ratio is None
    assert rows_of(conn, "acme/5x5", "nope", "nope-either") == []
    assert rows_of(conn, "no/such/repo") == []
    # the same commit on both sides: every p is 1 or NULL
    same = rows_of(conn, "acme/5x5", "c-a", "c-a")
    assert all(r[7] in (None, 1.0) for r in same)


def test_null_and_missing_arguments(warehouse):
    conn, _, _ = warehouse
    assert conn.execute("SELECT count(*) FROM fnt_compare(NULL, 'c-a', 'c-b')"
                        ).fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM fnt_compare('acme/2x2', 'c-a', "
                        "NULL)").fetchone()[0] == 0
    with pytest.raises(sqlite3.OperationalError, match="required"):
        conn.execute("SELECT * FROM fnt_compare('acme/2x2', 'c-a')")
    # the arguments as columns, and as a join's inner side
    got = conn.execute(
        "SELECT c.repo, c.commit_a, c.commit_b, count(*) FROM "
        "(SELECT 'acme/2x2' AS r) AS x, fnt_compare AS c "
        "WHERE c.repo = x.r AND c.commit_a = 'c-a' AND c.commit_b = 'c-b'"
    ).fetchall()
    assert got == [("acme/2x2", "c-a", "c-b", 25)]


def test_run_commit_and_stable_ids(warehouse):
    """A run's commit is its lowest chunk's; a stable_id key takes the
    symbol of the first run (side a first) that calls it; chunks add up."""
    _, _, wh = warehouse
    conn = connect(wh)
    repo = "acme/chunks"
    sid = {"parse": "c acme * parse()."}
    for i in range(3):
        file_run(conn, repo, "old", "old-%d" % i, {"parse": 100 + i},
                 stable=sid)
    # chunk 0 says "new", chunk 1 (another commit) adds 1000 ns to parse
    for i in range(3):
        file_run(conn, repo, "new", "new-%d" % i, {"parse_v2": 200 + i},
                 chunk=0, chunks=2, stable={"parse_v2": sid["parse"]})
        file_run(conn, repo, "old", "new-%d" % i, {"parse_v2": 1000},
                 chunk=1, chunks=2, seq0=100, stable={"parse_v2": sid["parse"]})
    rows = rows_of(conn, repo, "old", "new")
    assert len(rows) == 1
    key, symbol, runs_a, runs_b, med_a, med_b, ratio, p = rows[0]
    assert (key, symbol, runs_a, runs_b) == (sid["parse"], "parse", 3, 3)
    assert (med_a, med_b) == (101.0, 1201.0)
    want = expected_p([100, 101, 102], [1200, 1201, 1202])
    assert close(p, want)
    rows = rows_of(conn, repo, "new", "old")
    assert rows[0][1] == "parse_v2"
    conn.close()
