"""Text lifetime: every value SQLite keeps past its row (min()/max(), bare
columns, the outer row of a join, a correlated subquery's result) must
still be right when it is finally read.  fn_trace_events hands SQLite its
text without a copy, with a destructor that releases a reference on the
segment footer the text points into (fnt_scan_text_hold).  Plain pointers
(SQLITE_STATIC) were tried once and broke, since SQLite closes and reopens
a vtab cursor for each run of a correlated subquery
(test_correlated_subquery): these tests stay as the regression.  Under ASan
a dangling pointer fails them; without it, wrong answers still do.

Two runs filed chunk by chunk, one segment file per chunk (filing compacts
run-row files only): "pin-70" has 70 chunks, more than the store's cache of
64 footers, so footers read early are evicted while a statement still uses
their text; "pin-140" has 140.  Each chunk has its own functions, and chunk
0 holds the largest symbol and the smallest stable_id, so min() and max()
keep a value from the first footer to the end of the scan.  Answers are
checked against a plain-table copy of the same rows.

fn_trace_calls hands out its footer and function-table texts (repo,
commit, run_id, key, stable_id, symbol) the same way: the calls of each chunk are a
file of their own, and a function without a stable_id has its "?symbol"
key made once for that file's table (fnt_segment_func_key).
"""
import json
import os
import sqlite3
import tempfile

import pytest

BUILD = os.environ.get("FNT_BUILD", "build")
EXT = os.path.join(BUILD, "fntrace")
RUNS = {"pin-70": 70, "pin-140": 140}
PER_CHUNK = 6


def chunk_json(run_id, c, chunks):
    # Chunk 0: "zz..." symbols (the max) and "aa..." stable_ids (the min).
    funs = []
    for i in range(3):
        if c == 0:
            sym, sid = "zz_%s_%d" % (run_id, i), "aa %s %d" % (run_id, i)
        else:
            sym = "sym_%s_c%03d_%d_%s" % (run_id, c, i, "x" * (c % 17))
            sid = None if i == 2 else "sid %s c%03d %d" % (run_id, c, i)
        funs.append({"symbol": sym, "stable_id": sid, "local": i != 1})
    lo = c * PER_CHUNK
    events = []
    for k in range(PER_CHUNK):
        s = lo + k
        f = (k // 2) % 3
        events.append([1 + c % 2, s, 100 * s, f, "entry" if k % 2 == 0 else "exit"])
    return json.dumps({"repo": "acme/" + run_id, "commit": "c%03d" % c, "run_id": run_id,
                       "ts_micros": 1764680000000000, "target": "t", "source": "xray",
                       "chunk": c, "chunks": chunks, "total_events": chunks * PER_CHUNK,
                       "duration_ns": 100 * chunks * PER_CHUNK, "truncated": False,
                       "functions": funs, "events": events})


@pytest.fixture(scope="module")
def db():
    base = os.environ.get("FNT_TEST_TMP")
    if base:
        os.makedirs(base, exist_ok=True)
    wh = tempfile.mkdtemp(prefix="lifetime-", dir=base)
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.execute("SELECT fnt_open(?)", (wh,))
    for run_id, chunks in RUNS.items():
        for c in range(chunks):
            assert conn.execute("SELECT fnt_file_chunk(?)",
                                (chunk_json(run_id, c, chunks),)).fetchone() == (1,)
    conn.execute("CREATE TABLE plain AS SELECT * FROM fn_trace_events")
    conn.execute("CREATE TABLE plain_calls AS SELECT * FROM fn_trace_calls")
    yield conn
    conn.close()


def last_scan(conn):
    return json.loads(conn.execute("SELECT fnt_last_scan()").fetchone()[0])


def both(conn, sql):
    """The query over fn_trace_events and over the plain copy."""
    got = conn.execute(sql.format(t="fn_trace_events")).fetchall()
    want = conn.execute(sql.format(t="plain")).fetchall()
    return got, want


def test_one_file_per_chunk(db):
    for run_id, chunks in RUNS.items():
        n = db.execute("SELECT count(*) FROM fn_trace_events WHERE run_id = ?",
                       (run_id,)).fetchone()[0]
        assert n == chunks * PER_CHUNK
        assert last_scan(db)["files_opened"] == chunks


@pytest.mark.parametrize("run_id", sorted(RUNS))
def test_min_max_keep_first_footer(db, run_id):
    sql = ("SELECT max(symbol), min(stable_id), max(repo), min(\"commit\"), "
           "max(run_id), max(kind), count(*) FROM {t} WHERE run_id = '%s'" % run_id)
    got, want = both(db, sql)
    assert got == want
    assert got[0][0].startswith("zz_") and got[0][1].startswith("aa ")
    assert got[0][3] == "c000"


def test_min_max_whole_table(db):
    got, want = both(db, "SELECT max(symbol), min(stable_id), min(repo), max(\"commit\"),"
                         " count(*) FROM {t}")
    assert got == want


@pytest.mark.parametrize("run_id", sorted(RUNS))
def test_bare_columns_of_first_row(db, run_id):
    # The bare columns come from the row of min(seq_no): chunk 0's.
    sql = ("SELECT min(seq_no), symbol, stable_id, repo, \"commit\" FROM {t} "
           "WHERE run_id = '%s'" % run_id)
    got, want = both(db, sql)
    assert got == want
    assert got[0][0] == 0 and got[0][1].startswith("zz_")


def test_group_by_min_max(db):
    got, want = both(db, "SELECT run_id, max(symbol), min(stable_id), count(*) FROM {t} "
                         "GROUP BY run_id ORDER BY run_id")
    assert got == want


@pytest.mark.parametrize("run_id", sorted(RUNS))
def test_join_refilters_inner_cursor(db, run_id):
    # The inner fn_trace_events cursor is filtered again for each outer row
    # (one seq_no, so one chunk file each time): chunk 0 first, then every
    # other chunk, so the first footers leave the cache while max()/min()
    # still point into them.
    chunks = RUNS[run_id]
    db.execute("DROP TABLE IF EXISTS probe")
    db.execute("CREATE TABLE probe(s INTEGER)")
    db.executemany("INSERT INTO probe VALUES (?)",
                   [(c * PER_CHUNK + k,) for c in range(chunks) for k in (0, 3)])
    sql = ("SELECT max(e.symbol), min(e.stable_id), max(e.\"commit\"), "
           "min(e.repo || e.symbol), count(*) "
           "FROM probe p CROSS JOIN {t} e ON e.run_id = '%s' AND e.seq_no = p.s" % run_id)
    got, want = both(db, sql)
    assert got == want
    assert got[0][4] == 2 * chunks
    assert "seq_no=" in " ".join(
        r[3] for r in db.execute("EXPLAIN QUERY PLAN " + sql.format(t="fn_trace_events")))


def test_self_join_outer_text_survives(db):
    # Outer rows of one run, inner cursor re-filtered per outer row on the
    # other run; the outer row's text is read after the inner scans moved on.
    sql = ("SELECT a.seq_no, a.symbol, a.stable_id, b.symbol, b.\"commit\" "
           "FROM {t} a CROSS JOIN {t} b ON b.run_id = 'pin-140' AND b.seq_no = 2 * a.seq_no "
           "WHERE a.run_id = 'pin-70' ORDER BY a.seq_no")
    got = db.execute(sql.format(t="fn_trace_events")).fetchall()
    want = db.execute(sql.format(t="plain")).fetchall()
    assert got == want
    assert len(got) == 70 * PER_CHUNK


def test_scalar_subqueries(db):
    got, want = both(db, "SELECT (SELECT max(symbol) FROM {t} WHERE run_id = 'pin-70'), "
                         "(SELECT min(stable_id) FROM {t} WHERE run_id = 'pin-140'), "
                         "(SELECT max(symbol) FROM {t})")
    assert got == want


def test_correlated_subquery(db):
    # Each run of the subquery closes and reopens its cursor; max() keeps
    # the value of the first (chunk 0) across 140 reopenings.
    db.execute("DROP TABLE IF EXISTS probe3")
    db.execute("CREATE TABLE probe3(s INTEGER)")
    db.executemany("INSERT INTO probe3 VALUES (?)", [(c * PER_CHUNK,) for c in range(140)])
    got, want = both(db, "SELECT max((SELECT symbol FROM {t} WHERE run_id = 'pin-140' "
                         "AND seq_no = p.s)) FROM probe3 p")
    assert got == want and got[0][0].startswith("zz_")


def test_late_rows_of_many_files(db):
    # One inner cursor re-filtered 210 times: first over pin-140's 140 files,
    # then over pin-70's 70 files, which push the late ones out of the
    # 64-footer cache.  The bare column comes from the row with
    # the largest ord: chunk 135 of pin-140, read early, output at the end.
    db.execute("DROP TABLE IF EXISTS probe2")
    db.execute("CREATE TABLE probe2(i INTEGER PRIMARY KEY, run TEXT, s INTEGER, ord INTEGER)")
    rows = [("pin-140", c * PER_CHUNK, 1000 if c == 135 else c) for c in range(140)]
    rows += [("pin-70", c * PER_CHUNK + 1, c) for c in range(70)]
    db.executemany("INSERT INTO probe2(run, s, ord) VALUES (?, ?, ?)", rows)
    sql = ("SELECT max(p.ord), e.symbol, e.stable_id, e.\"commit\", count(*) "
           "FROM probe2 p CROSS JOIN {t} e ON e.run_id = p.run AND e.seq_no = p.s")
    got, want = both(db, sql)
    assert got == want
    assert got[0][0] == 1000 and got[0][3] == "c135" and got[0][4] == 210


def calls_both(conn, sql):
    """The query over fn_trace_calls and over its plain copy."""
    got = conn.execute(sql.format(t="fn_trace_calls")).fetchall()
    want = conn.execute(sql.format(t="plain_calls")).fetchall()
    return got, want


@pytest.mark.parametrize("run_id", sorted(RUNS))
def test_calls_min_max_keep_first_file(db, run_id):
    got, want = calls_both(db, "SELECT max(symbol), min(stable_id), max(key), min(key), "
                               "max(repo), min(\"commit\"), max(ended_by), count(*), "
                               "max(run_id) FROM {t} WHERE run_id = '%s'" % run_id)
    assert got == want and got[0][8] == run_id
    assert got[0][0].startswith("zz_") and got[0][1].startswith("aa ")
    assert got[0][2].startswith("sid ") and got[0][3].startswith("?sym_")
    assert got[0][7] == RUNS[run_id] * PER_CHUNK // 2
    assert last_scan(db)["files_opened"] == RUNS[run_id]


def test_calls_correlated_subquery(db):
    # Each run of the subquery reopens the calls cursor on another file;
    # max() keeps chunk 0's key and symbol across 140 reopenings.
    db.execute("DROP TABLE IF EXISTS probe4")
    db.execute("CREATE TABLE probe4(s INTEGER)")
    db.executemany("INSERT INTO probe4 VALUES (?)", [(c * PER_CHUNK,) for c in range(140)])
    got, want = calls_both(db, "SELECT max((SELECT key || '|' || symbol FROM {t} "
                               "WHERE run_id = 'pin-140' AND call_id = p.s)), "
                               "min((SELECT key FROM {t} WHERE run_id = 'pin-140' "
                               "AND call_id = p.s + 4)) FROM probe4 p")
    assert got == want
    assert got[0][0].startswith("sid pin-140 c139 0|sym_") and got[0][1].startswith("?sym_")


def test_calls_bare_columns_across_runs(db):
    got, want = calls_both(db, "SELECT run_id, max(dur_ns + call_id), key, symbol, stable_id, "
                               "\"commit\" FROM {t} GROUP BY run_id ORDER BY run_id")
    assert got == want and len(got) == 2
