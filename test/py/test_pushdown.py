"""Pushdown: a window of one big run reads only that run's overlapping row
groups (SPEC §3, §5), as fnt_last_scan() and EXPLAIN QUERY PLAN show.

One run of 1M events in 4 chunks of 250k (t_ns = 10 * seq_no), filed with
fnt_file_chunk(), next to three small runs; then the SPEC §5 window query
and its variants.  A row group holds 16384 rows (store/segment.h), so a
chunk file has 16 of them.
"""
import json
import os
import sqlite3
import tempfile

import pytest

BUILD = os.environ.get("FNT_BUILD", "build")
EXT = os.path.join(BUILD, "fntrace")
RUN = "big-run"
N_CHUNK = 250_000
CHUNKS = 4
RG = 16384

WINDOW = ("SELECT thread, seq_no, t_ns, stable_id, kind, symbol FROM fn_trace_events "
          "WHERE run_id = :run AND t_ns BETWEEN :from AND :to AND seq_no > :after "
          "ORDER BY seq_no LIMIT :limit")


def chunk_json(c):
    funs = [{"symbol": "f%d" % i, "stable_id": ("c r * f%d()." % i) if i % 3 else None,
             "local": True} for i in range(50)]
    lo = c * N_CHUNK
    events = [[1 + (s % 4), s, 10 * s, s % 50, "entry" if s % 2 == 0 else "exit"]
              for s in range(lo, lo + N_CHUNK)]
    return json.dumps({"repo": "acme/big", "run_id": RUN, "ts_micros": 1764680000000000,
                       "target": "t", "source": "xray", "chunk": c, "chunks": CHUNKS,
                       "total_events": CHUNKS * N_CHUNK, "duration_ns": 10 * CHUNKS * N_CHUNK,
                       "truncated": False, "functions": funs, "events": events})


def small_json(run_id, repo):
    return json.dumps({"repo": repo, "run_id": run_id, "ts_micros": 1764680000000001,
                       "target": "t", "source": "xray", "chunk": 0, "chunks": 1,
                       "total_events": 3, "duration_ns": 30, "truncated": False,
                       "functions": [{"symbol": "g", "local": False}],
                       "events": [[1, 0, 0, 0, "entry"], [1, 5, 10, 0, "exit"],
                                  [2, 9, 20, 0, "entry"]]})


@pytest.fixture(scope="module")
def db():
    base = os.environ.get("FNT_TEST_TMP")
    if base:
        os.makedirs(base, exist_ok=True)
    wh = tempfile.mkdtemp(prefix="pushdown-", dir=base)
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.execute("SELECT fnt_open(?)", (wh,))
    for run_id, repo in [("small-1", "acme/big"), ("small-2", "acme/other"),
                         ("small-3", "acme/other")]:
        assert conn.execute("SELECT fnt_file_chunk(?)", (small_json(run_id, repo),)).fetchone() == (1,)
    for c in range(CHUNKS):
        assert conn.execute("SELECT fnt_file_chunk(?)", (chunk_json(c),)).fetchone() == (1,)
    yield conn
    conn.close()


def last_scan(conn):
    return json.loads(conn.execute("SELECT fnt_last_scan()").fetchone()[0])


def plan(conn, sql, params=()):
    return " ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params))


def test_window_reads_few_row_groups(db):
    # A window inside chunk 2: seq_no 600000.. (t_ns 6000000..)
    p = {"run": RUN, "from": 6_000_000, "to": 6_100_000, "after": 600_100, "limit": 500}
    rows = db.execute(WINDOW, p).fetchall()
    assert len(rows) == 500
    assert [r[1] for r in rows] == list(range(600_101, 600_601))
    assert all(r[2] == 10 * r[1] for r in rows)
    s = last_scan(db)
    # only chunk 2 overlaps the window: the other chunks and the small runs'
    # files are pruned from the manifest, never opened
    assert s["files_opened"] == 1, s
    assert s["files_skipped"] >= 3 + 3, s
    # t_ns 6000000..6100000 is 10001 rows: at most 2 row groups of 16384
    # (the scan stops past the window: later groups are not even counted)
    assert 1 <= s["row_groups_read"] <= 2, s
    assert s["row_groups_skipped"] >= 1, s
    assert s["rows_decoded"] <= 2 * RG, s


def test_window_plan(db):
    p = {"run": RUN, "from": 0, "to": 1, "after": 0, "limit": 5}
    eqp = plan(db, WINDOW, p)
    # every constraint consumed, and the ORDER BY: no sorter.  (SQLite 3.40
    # offers no LIMIT to xBestIndex when the WHERE has a BETWEEN; the scan
    # stops anyway when SQLite stops stepping.)
    for tok in ("run_id=", "t_ns>=", "t_ns<=", "seq_no>", "order"):
        assert tok in eqp, eqp
    assert "TEMP B-TREE" not in eqp, eqp
    # the same window written with >= and <=: LIMIT consumed too
    sql = WINDOW.replace("BETWEEN :from AND :to", ">= :from AND t_ns <= :to")
    eqp = plan(db, sql, p)
    for tok in ("run_id=", "t_ns>=", "t_ns<=", "seq_no>", "limit", "order"):
        assert tok in eqp, eqp
    assert "TEMP B-TREE" not in eqp, eqp
    rows = db.execute(sql, {"run": RUN, "from": 10, "to": 10**9, "after": 3,
                            "limit": 7}).fetchall()
    assert [r[1] for r in rows] == list(range(4, 11))
    s = last_scan(db)
    assert s["files_opened"] == 1 and s["row_groups_read"] == 1, s


def test_limit_stops_early(db):
    # LIMIT pushed: one row group decoded out of 64
    rows = db.execute("SELECT seq_no FROM fn_trace_events WHERE run_id = ? "
                      "ORDER BY seq_no LIMIT 10 OFFSET 20", (RUN,)).fetchall()
    assert [r[0] for r in rows] == list(range(20, 30))
    s = last_scan(db)
    assert s["row_groups_read"] == 1 and s["files_opened"] == 1, s
    eqp = plan(db, "SELECT seq_no FROM fn_trace_events WHERE run_id = 'big-run' "
                   "ORDER BY seq_no LIMIT 10 OFFSET 20")
    assert "limit offset order" in eqp, eqp


def test_run_and_thread_filters(db):
    # IN on run_id: only the listed runs' files are opened
    n = db.execute("SELECT count(*) FROM fn_trace_events "
                   "WHERE run_id IN ('small-2', 'small-3', 'nope')").fetchone()[0]
    assert n == 6
    s = last_scan(db)
    assert s["files_opened"] == 2 and s["files_skipped"] == 5, s
    assert "run_id=IN" in plan(db, "SELECT * FROM fn_trace_events "
                                   "WHERE run_id IN ('small-2', 'small-3')")
    # repo: the big run's 4 files and small-1
    n = db.execute("SELECT count(*) FROM fn_trace_events WHERE repo = 'acme/other'").fetchone()[0]
    assert n == 6
    assert last_scan(db)["files_opened"] == 2
    # seq_no window across a chunk boundary: two files, one row group each
    rows = db.execute("SELECT seq_no FROM fn_trace_events WHERE run_id = ? AND "
                      "seq_no BETWEEN 249990 AND 250009 ORDER BY seq_no", (RUN,)).fetchall()
    assert [r[0] for r in rows] == list(range(249_990, 250_010))
    s = last_scan(db)
    assert s["files_opened"] == 2 and s["row_groups_read"] == 2, s
    # thread and kind are applied by the store, exactly
    n = db.execute("SELECT count(*) FROM fn_trace_events WHERE run_id = ? AND thread = 2 "
                   "AND kind = 'exit' AND seq_no < 1000", (RUN,)).fetchone()[0]
    assert n == 250          # s % 4 == 1 and s odd, s < 1000
    eqp = plan(db, "SELECT * FROM fn_trace_events WHERE run_id = 'x' AND thread = 2 "
                   "AND kind = 'exit' AND stable_id = 'c r * f1().'")
    for tok in ("run_id=", "thread=", "kind=", "stable_id="):
        assert tok in eqp, eqp


def test_unread_columns_not_decoded(db):
    # colUsed reaches the store: a count(*) asks for no column at all
    eqp = plan(db, "SELECT count(*) FROM fn_trace_events")
    assert "cols=0" in eqp, eqp
    # bits 2 and 5: run_id (SQLite counts the WHERE's columns too) and t_ns
    eqp = plan(db, "SELECT t_ns FROM fn_trace_events WHERE run_id = 'x'")
    assert "cols=24" in eqp, eqp
    assert db.execute("SELECT count(*) FROM fn_trace_events").fetchone()[0] == 1_000_009


def test_statement_reads_one_snapshot():
    """Cursors of one statement share a snapshot: a commit by another
    connection in the middle of the statement is seen by the next one."""
    base = os.environ.get("FNT_TEST_TMP")
    wh = tempfile.mkdtemp(prefix="snapshot-", dir=base)
    a, b = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
    for conn in (a, b):
        conn.enable_load_extension(True)
        conn.load_extension(EXT)
        conn.execute("SELECT fnt_open(?)", (wh,))
    for i in range(5):
        b.execute("SELECT fnt_file_chunk(?)", (small_json("s%d" % i, "acme/snap"),))
    # the inner scan is re-run for every outer row (correlated on r.chunk)
    cur = a.execute("SELECT r.run_id, (SELECT count(*) FROM fn_trace_events AS e "
                    "WHERE e.repo = 'acme/snap' AND e.seq_no >= r.chunk) "
                    "FROM fn_trace_runs AS r")
    first = cur.fetchone()
    assert b.execute("SELECT fnt_file_chunk(?)",
                     (small_json("late", "acme/snap"),)).fetchone() == (1,)
    rest = cur.fetchall()
    assert first[1] == 15 and [r[1] for r in rest] == [15] * 4, (first, rest)
    assert "late" not in [first[0]] + [r[0] for r in rest]
    # the next statement sees the commit
    assert a.execute("SELECT count(*) FROM fn_trace_events").fetchone() == (18,)
    a.close()
    b.close()


def test_run_id_parameter_not_rechecked():
    """run_id = ? is omitted (SQLite does not re-read run_id for every row)
    while no run_id looks like a number: no number equals such a run_id,
    whatever the affinity.  A numeric-looking run_id filed after the plan
    makes a number given to that plan an error, never a wrong answer."""
    base = os.environ.get("FNT_TEST_TMP")
    wh = tempfile.mkdtemp(prefix="runid-", dir=base)
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.execute("SELECT fnt_open(?)", (wh,))
    for run_id in ("alpha", "beta"):
        conn.execute("SELECT fnt_file_chunk(?)", (small_json(run_id, "acme/r"),))
    sql = "SELECT t_ns FROM fn_trace_events WHERE run_id = ? ORDER BY seq_no"

    def run_id_reads(q):
        # VColumn of run_id (column 2) would be SQLite re-checking it
        return [r for r in conn.execute("EXPLAIN " + q, ("alpha",))
                if r[1] == "VColumn" and r[3] == 2]
    assert run_id_reads(sql) == []
    assert conn.execute(sql, ("alpha",)).fetchall() == [(0,), (10,), (20,)]
    assert conn.execute(sql, (7,)).fetchall() == []
    assert conn.execute(sql, (7.5,)).fetchall() == []
    assert conn.execute(sql, (b"alpha",)).fetchall() == []
    assert conn.execute(sql, (None,)).fetchall() == []
    in_sql = "SELECT count(*) FROM fn_trace_events WHERE run_id IN (SELECT value FROM json_each(?))"
    assert conn.execute(in_sql, ('["alpha", 3, "beta"]',)).fetchone() == (6,)

    # "42" looks numeric: the cached plan above may not answer a number now
    conn.execute("SELECT fnt_file_chunk(?)", (small_json("42", "acme/r"),))
    assert conn.execute(sql, ("alpha",)).fetchall() == [(0,), (10,), (20,)]
    with pytest.raises(sqlite3.OperationalError, match="prepare it again"):
        conn.execute(sql, (42,)).fetchall()
    # a new statement re-checks run_id, and the number finds run "42"
    fresh = sql + " "
    assert run_id_reads(fresh) != []
    assert conn.execute(fresh, (42,)).fetchall() == [(0,), (10,), (20,)]
    # a join on an INTEGER column: numeric affinity, so '42' = 42.0 too
    conn.execute("CREATE TEMP TABLE n(x INTEGER)")
    conn.execute("INSERT INTO n VALUES (42)")
    assert conn.execute("SELECT count(*) FROM n JOIN fn_trace_events e "
                        "ON e.run_id = n.x").fetchone() == (3,)
    conn.close()
