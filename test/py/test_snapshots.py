"""Snapshots through Python's sqlite3: a statement whose snapshot is expired
under it fails with a retryable error (SQLITE_BUSY) saying so, never
SQLITE_CORRUPT; reads never create a warehouse.
"""
import json
import os
import sqlite3
import tempfile
import time

import pytest

BUILD = os.environ.get("FNT_BUILD", "build")
EXT = os.path.join(BUILD, "fntrace")


def tmpdir(prefix):
    base = os.environ.get("FNT_TEST_TMP")
    if base:
        os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix, dir=base)


def connect(wh=None):
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    if wh is not None:
        conn.execute("SELECT fnt_open(?)", (wh,))
    return conn


def chunk(run_id, c, chunks=3, n=4):
    """Chunk c of run_id: n events (entry/exit pairs of one function)."""
    lo = c * n
    return json.dumps({
        "repo": "acme/snap", "run_id": run_id, "ts_micros": 1764680000000000 + c,
        "target": "t", "source": "xray", "chunk": c, "chunks": chunks,
        "total_events": chunks * n, "duration_ns": 0, "truncated": False,
        "functions": [{"symbol": "f", "stable_id": None, "local": True}],
        "events": [[1, lo + k, 10 * (lo + k), 0, "entry" if k % 2 == 0 else "exit"]
                   for k in range(n)]})


def file_runs(conn, runs, chunks=3):
    for r in runs:
        for c in range(chunks):
            assert conn.execute("SELECT fnt_file_chunk(?)", (chunk(r, c, chunks),)).fetchone()[0] == 1


def age(wh, seconds):
    """Makes every file of the warehouse `seconds` old (expiry removes an
    unlisted file only once it is older than an hour)."""
    t = time.time() - seconds
    for d, _, names in os.walk(wh):
        for n in names:
            os.utime(os.path.join(d, n), (t, t))


EVENTS = "SELECT run_id, seq_no FROM fn_trace_events"


def test_expired_under_a_statement_is_retryable():
    wh = tmpdir("snap-expired-")
    w = connect(wh)
    file_runs(w, ["a", "b", "c"])
    want = sorted(w.execute(EVENTS).fetchall())
    r = connect(wh)                        # opens no file before the statement
    cur = r.execute(EVENTS)
    first = cur.fetchone()                 # the statement holds its snapshot
    assert first is not None
    # Another connection merges the files (the old ones are listed only by
    # older snapshots), then expires every snapshot but the newest.
    assert json.loads(w.execute("SELECT fnt_compact()").fetchone()[0])["compacted"] == 1
    age(wh, 7200)
    out = json.loads(w.execute("SELECT fnt_expire_snapshots(0)").fetchone()[0])
    assert out["files_removed"] > 0, out
    with pytest.raises(sqlite3.OperationalError) as e:
        cur.fetchall()
    msg = str(e.value)
    assert "expired" in msg and "re-run" in msg, msg
    assert "corrupt" not in msg.lower(), msg
    if hasattr(e.value, "sqlite_errorcode"):          # Python 3.11+
        assert e.value.sqlite_errorcode == sqlite3.SQLITE_BUSY, e.value.sqlite_errorname
    # Retrying reads the newest snapshot: the same rows.
    assert sorted(r.execute(EVENTS).fetchall()) == want


def test_a_missing_file_of_the_newest_snapshot_is_corruption():
    wh = tmpdir("snap-corrupt-")
    w = connect(wh)
    file_runs(w, ["a"], chunks=1)
    seg = [os.path.join(d, n) for d, _, ns in os.walk(os.path.join(wh, "data", "fn_trace_events"))
           for n in ns]
    assert len(seg) == 1
    os.unlink(seg[0])
    with pytest.raises(sqlite3.DatabaseError) as e:
        connect(wh).execute(EVENTS).fetchall()
    assert "missing" in str(e.value), str(e.value)
    if hasattr(e.value, "sqlite_errorcode"):
        assert e.value.sqlite_errorcode == sqlite3.SQLITE_CORRUPT, e.value.sqlite_errorname


def test_reads_never_create_a_warehouse(monkeypatch):
    base = tmpdir("snap-nocreate-")
    typo = os.path.join(base, "typo")
    monkeypatch.setenv("FNT_WAREHOUSE", typo)
    c = connect()
    for sql in ("SELECT count(*) FROM fn_trace_runs", "SELECT * FROM fn_trace_run_summary",
                "SELECT fnt_compact()", "SELECT * FROM fnt_heat('x')"):
        with pytest.raises(sqlite3.Error) as e:
            c.execute(sql).fetchall()
        assert "FNT_WAREHOUSE" in str(e.value) and "not a fntrace warehouse" in str(e.value), sql
        assert not os.path.exists(typo), sql
    # Filing makes it.
    assert c.execute("SELECT fnt_file_chunk(?)", (chunk("a", 0, 1),)).fetchone()[0] == 1
    assert os.path.exists(os.path.join(typo, "fntrace-warehouse"))
    assert c.execute("SELECT count(*) FROM fn_trace_runs").fetchone()[0] == 1


def test_fnt_open_refuses_a_folder_of_other_things():
    base = tmpdir("snap-open-")
    other = os.path.join(base, "photos")
    os.makedirs(other)
    with open(os.path.join(other, "cat.jpg"), "w") as f:
        f.write("meow")
    c = connect()
    with pytest.raises(sqlite3.Error) as e:
        c.execute("SELECT fnt_open(?)", (other,)).fetchone()
    assert "not empty" in str(e.value), str(e.value)
    assert sorted(os.listdir(other)) == ["cat.jpg"]
    empty = os.path.join(base, "empty")
    os.makedirs(empty)
    assert c.execute("SELECT fnt_open(?)", (empty,)).fetchone()[0] == empty
    assert os.path.exists(os.path.join(empty, "fntrace-warehouse"))
    absent = os.path.join(base, "new", "wh")
    assert c.execute("SELECT fnt_open(?)", (absent,)).fetchone()[0] == absent
    # A warehouse opens again, whatever it holds.
    file_runs(c, ["a"], chunks=1)
    assert connect(absent).execute("SELECT count(*) FROM fn_trace_runs").fetchone()[0] == 1


# ---------------------------------------------------------------- SPEC §10

def profile(run_id):
    return json.dumps({"run_id": run_id, "ts_micros": 1764680000000000, "repo": "acme/snap",
                       "target": "t", "samples": 3, "profile_ns": 30,
                       "rows": [{"symbol": "f", "self_ns": 10, "total_ns": 30,
                                 "self_samples": 1, "total_samples": 3}]})


COUNTS = {  # table -> what to count in it (the run-level tables by run)
    "fn_trace_events": "count(*)",
    "fn_trace_runs": "count(*)",
    "fn_trace_calls": "count(*)",
    "fn_trace_run_summary": "sum(chunks_filed)",
    "fn_profile": "count(*)",
}


def counts(conn, where="", args=()):
    return {t: conn.execute("SELECT %s FROM %s %s" % (c, t, where), args).fetchone()[0] or 0
            for t, c in COUNTS.items()}


def test_time_travel_every_table():
    wh = tmpdir("snap-travel-")
    c = connect(wh)
    seen = {}                                   # snapshot id -> counts then
    for k in range(3):
        assert c.execute("SELECT fnt_file_chunk(?)", (chunk("tt", k),)).fetchone()[0] == 1
        seen[c.execute("SELECT fnt_snapshot()").fetchone()[0]] = counts(c)
    assert c.execute("SELECT fnt_file_profile(?)", (profile("pp"),)).fetchone()[0] == 1
    seen[c.execute("SELECT fnt_snapshot()").fetchone()[0]] = counts(c)
    assert sorted(seen) == [1, 2, 3, 4], seen
    assert seen[1]["fn_trace_events"] == 4 and seen[3]["fn_trace_events"] == 12
    for s, want in seen.items():
        assert counts(c, "WHERE snapshot_id = ?", (s,)) == want, s
        # the hidden column says which snapshot a row comes from
        assert c.execute("SELECT DISTINCT snapshot_id FROM fn_trace_events WHERE snapshot_id = ?",
                         (s,)).fetchall() == [(s,)]
    for t in COUNTS:
        assert c.execute("SELECT DISTINCT snapshot_id FROM %s" % t).fetchall() == [(4,)], t
    # a join of two snapshots: the first chunk's events in both
    got = c.execute("SELECT count(*) FROM fn_trace_events a JOIN fn_trace_events b "
                    "ON b.seq_no = a.seq_no AND b.snapshot_id = 3 "
                    "WHERE a.snapshot_id = 1").fetchone()[0]
    assert got == 4
    # snapshot 0 is the empty warehouse; an id never committed, and one
    # expired, are clear errors
    assert counts(c, "WHERE snapshot_id = 0") == {t: 0 for t in COUNTS}
    with pytest.raises(sqlite3.OperationalError, match="snapshot_id 99: no such snapshot"):
        c.execute("SELECT count(*) FROM fn_trace_runs WHERE snapshot_id = 99").fetchall()
    with pytest.raises(sqlite3.OperationalError, match="not a snapshot id"):
        c.execute("SELECT count(*) FROM fn_trace_events WHERE snapshot_id = 'x'").fetchall()
    assert json.loads(c.execute("SELECT fnt_expire_snapshots(0)").fetchone()[0])["snapshots_expired"] == 3
    for t in COUNTS:
        with pytest.raises(sqlite3.OperationalError, match="snapshot_id 2: no such snapshot: it was expired"):
            c.execute("SELECT * FROM %s WHERE snapshot_id = 2" % t).fetchall()
    assert counts(c, "WHERE snapshot_id = 4") == seen[4]


def test_fnt_snapshots_rows():
    wh = tmpdir("snap-list-")
    c = connect(wh)
    long_run = "L" * 350                        # longer than the summary keeps
    for k in range(2):
        c.execute("SELECT fnt_file_chunk(?)", (chunk("r1", k),))
    c.execute("SELECT fnt_file_chunk(?)", (chunk(long_run, 0, 1),))
    c.execute("SELECT fnt_file_profile(?)", (profile("p 1"),))
    # bytes: what the files of the snapshot take on disk (every file so far)
    on_disk = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(os.path.join(wh, "data"))
                  for n in ns)
    c.execute("SELECT fnt_compact()")
    rows = c.execute("SELECT snapshot_id, operation, run_id, chunk, files, bytes, committed_micros "
                     "FROM fnt_snapshots").fetchall()
    assert [r[:4] for r in rows] == [(5, "compact", None, None), (4, "file_profile", "p 1", None),
                                     (3, "file_chunk", long_run, 0), (2, "file_chunk", "r1", 1),
                                     (1, "file_chunk", "r1", 0)], [r[:4] for r in rows]
    assert [r[4] for r in rows][1:] == [10, 9, 6, 3]   # events, runs, calls file per chunk
    assert all(r[5] > 0 for r in rows) and rows[1][5] > rows[3][5] > rows[4][5]
    assert sorted((r[6] for r in rows), reverse=True) == [r[6] for r in rows]
    assert rows[1][5] == on_disk
    assert c.execute("SELECT operation, run_id FROM fnt_snapshots WHERE snapshot_id = 3").fetchall() \
        == [("file_chunk", long_run)]
    assert c.execute("SELECT count(*) FROM fnt_snapshots WHERE snapshot_id = 9").fetchone()[0] == 0
    assert c.execute("SELECT fnt_snapshot()").fetchone()[0] == 5


CORRELATED = ("SELECT x.k, fnt_file_chunk(x.doc), "
              "(SELECT count(*) FROM fn_trace_runs WHERE chunk >= x.k - 100) FROM src x ORDER BY x.k")


def test_correlated_subquery_reads_one_snapshot():
    """SQLite closes and reopens the subquery's cursor for every row: the
    statement still reads one snapshot (the newest when it first read), so
    it does not see the chunks it files after."""
    wh = tmpdir("snap-corr-")
    c = connect(wh)
    c.execute("CREATE TABLE src(k INTEGER, doc TEXT)")
    c.executemany("INSERT INTO src VALUES (?, ?)", [(k, chunk("cs", k, 6)) for k in range(6)])
    assert c.execute(CORRELATED).fetchall() == [(k, 1, 1) for k in range(6)]
    # the next statement sees them all; so does the same statement run again
    assert c.execute("SELECT count(*) FROM fn_trace_runs").fetchone()[0] == 6
    c.execute("DELETE FROM src")
    c.executemany("INSERT INTO src VALUES (?, ?)", [(k, chunk("cs2", k, 3)) for k in range(3)])
    assert c.execute(CORRELATED).fetchall() == [(k, 1, 7) for k in range(3)]
    assert c.execute("SELECT fnt_snapshot()").fetchone()[0] == 9


@pytest.mark.parametrize("cached", [0, 100])
def test_each_statement_sees_the_newest(cached):
    """A statement prepared after another was finalized (it may get the same
    address and run count) and a cached statement run again both read the
    newest snapshot."""
    wh = tmpdir("snap-next-")
    c = sqlite3.connect(":memory:", cached_statements=cached)
    c.enable_load_extension(True)
    c.load_extension(EXT)
    c.execute("SELECT fnt_open(?)", (wh,))
    for k in range(12):
        c.execute("SELECT fnt_file_chunk(?)", (chunk("nx", k, 12),))
        sql = "SELECT (SELECT count(*) FROM fn_trace_runs WHERE chunk >= ?) FROM (SELECT 1)"
        if cached == 0:
            sql += " -- %d" % k                 # a new statement each time
        assert c.execute(sql, (-1,)).fetchone()[0] == k + 1


def test_a_statement_inside_another_reads_the_newest():
    wh = tmpdir("snap-nested-")
    c = connect(wh)
    file_runs(c, ["a", "b"], chunks=2)
    outer = c.execute("SELECT run_id, chunk FROM fn_trace_runs")
    got = [outer.fetchone()]                    # the outer statement is running
    c.execute("SELECT fnt_file_chunk(?)", (chunk("c", 0, 1),))
    assert c.execute("SELECT count(*) FROM fn_trace_runs").fetchone()[0] == 5
    got += outer.fetchall()                     # still its own snapshot
    assert len(got) == 4 and ("c", 0) not in got

