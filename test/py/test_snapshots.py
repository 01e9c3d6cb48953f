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
