"""fnt_file_chunk / fnt_file_profile through Python's sqlite3 (SPEC §4).

One test per bad-input rule: each checks the message (it names the field and
the index) and that nothing was written -- the row counts of fn_trace_runs and
fn_trace_events are unchanged, and the same (run_id, chunk), filed right
after with valid content, still returns 1.  Then the good paths: the SPEC
examples, idempotency, the room, exact integers above 2^53, profiles.
"""
import copy
import json
import os
import sqlite3
import tempfile

import pytest

BUILD = os.environ.get("FNT_BUILD", "build")
EXT = os.path.join(BUILD, "fntrace")

# The SPEC §4 chunk example, as shipped with the golden warehouse.
SOURCE = os.environ.get("FNT_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
with open(os.path.join(SOURCE, "test", "golden", "chunk0.json")) as f:
    SPEC_CHUNK = json.load(f)

SPEC_PROFILE = {
    "run_id": "prof-1", "ts_micros": 1764680000000000, "repo": "acme/widget",
    "commit": "9f1c2e0", "target": "widget_bench", "samples": 4000,
    "profile_ns": 1000000000,
    "rows": [{"symbol": "parse", "stable_id": None, "self_ns": 5, "total_ns": 9,
              "self_samples": 2, "total_samples": 4}],
}

REQUIRED = ["repo", "run_id", "target", "source", "chunk", "chunks",
            "total_events", "duration_ns", "truncated", "functions", "events"]


@pytest.fixture
def db():
    base = os.environ.get("FNT_TEST_TMP")
    if base:
        os.makedirs(base, exist_ok=True)
    wh = tempfile.mkdtemp(prefix="filing-", dir=base)
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.execute("SELECT fnt_open(?)", (wh,))
    yield conn
    conn.close()


def chunk(**changes):
    c = copy.deepcopy(SPEC_CHUNK)
    c.update(changes)
    return c


def file(conn, doc, *room):
    text = doc if isinstance(doc, str) else json.dumps(doc)
    args = ", ?" * len(room)
    return conn.execute("SELECT fnt_file_chunk(?%s)" % args,
                        (text,) + room).fetchone()[0]


def counts(conn):
    return (conn.execute("SELECT count(*) FROM fn_trace_runs").fetchone()[0],
            conn.execute("SELECT count(*) FROM fn_trace_events").fetchone()[0])


def rejected(conn, doc, *fragments, run_id=None, chunk_no=0):
    """Files doc, expects an error containing every fragment, checks that
    nothing was written; returns the message."""
    before = counts(conn)
    with pytest.raises(sqlite3.Error) as info:
        file(conn, doc)
    msg = str(info.value)
    assert msg.startswith("fnt_file_chunk: "), msg
    for f in fragments:
        assert f in msg, (f, msg)
    assert counts(conn) == before
    # The same (run_id, chunk) with valid content is still unfiled.
    good = chunk(chunk=chunk_no, run_id=run_id or SPEC_CHUNK["run_id"])
    assert file(conn, good) == 1
    return msg


def with_event(ev, at=3):
    c = chunk()
    c["events"].insert(at, ev)
    return c


# ---- one test per bad-input rule ------------------------------------------

@pytest.mark.parametrize("field", REQUIRED)
def test_missing_required_field(db, field):
    c = chunk()
    del c[field]
    msg = rejected(db, c, "missing required field '%s'" % field)
    assert msg == "fnt_file_chunk: missing required field '%s'" % field


def test_run_id_empty(db):
    before = counts(db)
    with pytest.raises(sqlite3.Error) as info:
        file(db, chunk(run_id=""))
    assert "fnt_file_chunk: run_id: must not be empty" in str(info.value)
    assert counts(db) == before


def test_repo_empty(db):
    rejected(db, chunk(repo=""), "fnt_file_chunk: repo: must not be empty")


def test_chunk_not_below_chunks(db):
    rejected(db, chunk(chunk=2, chunks=2), "chunk: 2 is not below chunks (2)")


def test_unknown_kind(db):
    msg = rejected(db, with_event([1, 3, 950, 0, "enter"]))
    assert msg.startswith("fnt_file_chunk: events[3]: unknown kind 'enter'"), msg


def test_kind_not_a_string(db):
    rejected(db, with_event([1, 3, 950, 0, 1]), "events[3]", "kind",
             "got a number")


def test_seq_no_repeats(db):
    # The store checks uniqueness; its message names both events.
    rejected(db, with_event([1, 0, 950, 0, "exit"]), "events[",
             "seq_no 0 repeats events[")


def test_thread_out_of_range(db):
    rejected(db, with_event([4294967296, 3, 950, 0, "exit"]),
             "events[3][0]: thread 4294967296 is out of range")


def test_thread_max_is_accepted(db):
    c = chunk(events=[[4294967295, 0, 5, 0, "entry"]])
    assert file(db, c) == 1
    assert db.execute("SELECT thread FROM fn_trace_events WHERE run_id=?",
                      (c["run_id"],)).fetchone()[0] == 4294967295


def test_negative_integer(db):
    rejected(db, with_event([1, -3, 950, 0, "exit"]),
             "events[3][1]: seq_no -3 is negative")


def test_negative_top_level_integer(db):
    rejected(db, chunk(duration_ns=-1), "duration_ns: -1 is negative")


def test_fraction(db):
    rejected(db, with_event([1, 3, 950.5, 0, "exit"]),
             "events[3][2]: t_ns 950.5 is not an integer")


def test_exponent(db):
    text = json.dumps(with_event([1, 3, 950, 0, "exit"])).replace(
        "950,", "9.5e2,")
    rejected(db, text, "events[3][2]: t_ns 9.5e2 is not an integer")


def test_integer_overflow(db):
    rejected(db, with_event([1, 3, 2**63, 0, "exit"]),
             "events[3][2]: t_ns 9223372036854775808 is larger than 2^63-1")


def test_function_index_out_of_range(db):
    rejected(db, with_event([1, 3, 950, 2, "exit"]),
             "events[3][3]: function_index 2 is not an index of functions "
             "(2 entries)")


def test_event_too_short(db):
    rejected(db, with_event([1, 3, 950, 0]), "events[3]: has 4 elements")


def test_event_too_long(db):
    rejected(db, with_event([1, 3, 950, 0, "exit", 7]),
             "events[3]: has more than 5 elements")


def test_event_not_an_array(db):
    rejected(db, with_event({"thread": 1}), "events[3]: expected an array")


def test_wrong_type(db):
    rejected(db, chunk(repo=7), "repo: expected a string, got a number")


def test_function_missing_symbol(db):
    c = chunk()
    del c["functions"][1]["symbol"]
    rejected(db, c, "functions[1]: missing required field 'symbol'")


def test_function_bad_stable_id(db):
    c = chunk()
    c["functions"][0]["stable_id"] = 5
    rejected(db, c, "functions[0].stable_id: expected a string or null")


def test_truncated_not_boolean(db):
    rejected(db, chunk(truncated="no"), "truncated: expected true or false")


def test_binaries_not_array(db):
    rejected(db, chunk(binaries={"path": "x"}),
             "binaries: expected an array, got an object")


def test_malformed_json_names_byte_offset(db):
    text = json.dumps(chunk())
    at = text.index('"chunks": 2') + len('"chunks" ')
    bad = text.replace('"chunks": 2', '"chunks" 2')
    msg = rejected(db, bad)
    assert msg == ("fnt_file_chunk: malformed JSON at byte %d: expected ':', "
                   "found '2'" % at), msg


def test_truncated_json(db):
    text = json.dumps(chunk())
    rejected(db, text[:-1], "malformed JSON at byte %d" % (len(text) - 1),
             "found the end of the input")


def test_trailing_garbage(db):
    text = json.dumps(chunk())
    rejected(db, text + " x", "malformed JSON at byte %d" % (len(text) + 1))


def test_not_an_object(db):
    rejected(db, "[1, 2]", "expected a JSON object (the chunk), got an array")


def test_nul_escape_rejected(db):
    rejected(db, chunk(target="a\u0000b"), "target: \\u0000 at byte",
             "cannot hold NUL")


def test_unpaired_surrogate_rejected(db):
    text = json.dumps(chunk()).replace('"main"', '"m\\ud800ain"')
    rejected(db, text, "functions[0].symbol: unpaired surrogate \\ud800")


def test_repeated_key(db):
    text = json.dumps(chunk()).replace('"repo"', '"repo": "x", "repo"', 1)
    rejected(db, text, "repo: repeated key")


def test_null_argument(db):
    with pytest.raises(sqlite3.Error, match="first argument must be JSON"):
        db.execute("SELECT fnt_file_chunk(NULL)").fetchone()


def test_run_id_under_another_repo(db):
    assert file(db, chunk()) == 1
    before = counts(db)
    with pytest.raises(sqlite3.Error) as info:
        file(db, chunk(repo="other/repo", chunk=1))
    msg = str(info.value)
    assert msg.startswith("fnt_file_chunk: "), msg
    assert "run-2026-12-02-0001" in msg and "another repo" in msg, msg
    assert counts(db) == before


def test_missing_room_table(db):
    before = counts(db)
    with pytest.raises(sqlite3.Error) as info:
        file(db, chunk(), "no_such_room")
    msg = str(info.value)
    assert msg.startswith("fnt_file_chunk: room 'no_such_room': no such table"), msg
    assert counts(db) == before
    assert file(db, chunk()) == 1


def test_room_without_columns(db):
    db.execute("CREATE TABLE r(name, id)")
    with pytest.raises(sqlite3.Error, match="room 'r': no such column"):
        file(db, chunk(), "r")


def test_no_warehouse():
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    env = os.environ.pop("FNT_WAREHOUSE", None)
    try:
        with pytest.raises(sqlite3.Error, match="fnt_file_chunk: .*fnt_open"):
            conn.execute("SELECT fnt_file_chunk(?)",
                         (json.dumps(chunk()),)).fetchone()
    finally:
        if env is not None:
            os.environ["FNT_WAREHOUSE"] = env
        conn.close()


# ---- good paths -------------------------------------------------------------

def test_spec_example_files_once(db):
    assert file(db, chunk()) == 1
    assert file(db, chunk()) == 0
    # Idempotent whatever the content.
    assert file(db, chunk(target="other", events=[])) == 0
    assert counts(db) == (1, 3)
    row = db.execute('SELECT run_id, ts_micros, repo, "commit", target, source, '
                     'chunk, chunks, events, mapped_events, functions, '
                     'mapped_functions, local_functions, mapped_local_functions, '
                     'threads, first_ns, last_ns, total_events, duration_ns, '
                     'truncated, binaries FROM fn_trace_runs').fetchone()
    assert row[:20] == ("run-2026-12-02-0001", 1764680000000000, "acme/widget",
                        "9f1c2e0", "widget_tests", "xray", 0, 2, 3, 1, 2, 1,
                        1, 1, 1, 0, 900, 6, 5000, 0)
    assert json.loads(row[20]) == SPEC_CHUNK["binaries"]
    ev = db.execute("SELECT thread, seq_no, t_ns, stable_id, kind, symbol "
                    "FROM fn_trace_events ORDER BY seq_no").fetchall()
    assert ev == [(1, 0, 0, "c acme/widget * main().", "entry", "main"),
                  (1, 1, 100, None, "entry", "memcpy"),
                  (1, 2, 900, None, "exit", "memcpy")]


def test_second_chunk_and_defaults(db):
    c = chunk(chunk=1, events=[[2, 5, 1000, 1, "tail_exit"],
                               [3, 4, 990, 1, "entry"]])
    for k in ("commit", "ts_micros", "threads", "binaries"):
        del c[k]
    c["future_field"] = {"ignored": [1, 2.5, None, "x"]}
    assert file(db, c) == 1
    row = db.execute('SELECT "commit", ts_micros > 1700000000000000, threads, '
                     'binaries, first_ns, last_ns FROM fn_trace_runs').fetchone()
    assert row == (None, 1, 2, "[]", 990, 1000)


def test_many_chunks_in_one_statement(db):
    # The parser's buffers are reused from call to call: a smaller chunk
    # after a bigger one must not see any of the bigger one's data.
    db.execute("CREATE TABLE inbox(n, doc)")
    sizes = [3000, 5, 700, 0]
    for i, n in enumerate(sizes):
        funcs = [{"symbol": "f%d_%d" % (i, k), "stable_id": None, "local": True}
                 for k in range(max(n // 10, 1))]
        evs = [[i, s, 10 * s + i, s % len(funcs), "entry"] for s in range(n)]
        db.execute("INSERT INTO inbox VALUES (?, ?)", (i, json.dumps(
            chunk(chunk=i, chunks=len(sizes), total_events=sum(sizes),
                  functions=funcs, events=evs))))
    got = [r[0] for r in db.execute(
        "SELECT fnt_file_chunk(doc) FROM inbox ORDER BY n")]
    assert got == [1, 1, 1, 1]
    for i, n in enumerate(sizes):
        rows = db.execute("SELECT count(*), count(DISTINCT thread), "
                          "sum(t_ns = 10 * seq_no + ?), min(symbol) "
                          "FROM fn_trace_events WHERE thread = ?",
                          (i, i)).fetchone()
        assert rows[:3] == (n, 1 if n else 0, n if n else None), (i, rows)
        if n:
            assert rows[3].startswith("f%d_" % i), rows


def test_blob_argument(db, tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps(chunk()))
    got = db.execute("SELECT fnt_file_chunk(CAST(? AS BLOB))",
                     (p.read_text(),)).fetchone()[0]
    assert got == 1


def test_escapes_decode_to_utf8(db):
    text = json.dumps(chunk()).replace(
        '"memcpy"', '"caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ \\/"')
    assert file(db, text) == 1
    sym = db.execute("SELECT symbol FROM fn_trace_events WHERE seq_no=1"
                     ).fetchone()[0]
    assert sym == 'caf\u00e9 \U0001F600 "q" \\ /'


def test_invalid_utf8_passes_through(db):
    text = json.dumps(chunk()).encode().replace(b'"memcpy"', b'"mem\xffcpy\xc3"')
    got = db.execute("SELECT fnt_file_chunk(?)", (text,)).fetchone()[0]
    assert got == 1
    db.text_factory = bytes
    sym = db.execute("SELECT symbol FROM fn_trace_events WHERE seq_no=1"
                     ).fetchone()[0]
    assert sym == b"mem\xffcpy\xc3"


def test_t_ns_above_2_53_round_trips(db):
    big = [2**53 + 1, 2**62 + 3, 2**63 - 1]
    c = chunk(events=[[1, i, t, 0, "entry"] for i, t in enumerate(big)])
    c["events"].append([1, 2**63 - 1, 7, 1, "exit"])
    assert file(db, c) == 1
    rows = db.execute("SELECT seq_no, t_ns FROM fn_trace_events "
                      "ORDER BY seq_no").fetchall()
    assert rows == [(0, big[0]), (1, big[1]), (2, big[2]), (2**63 - 1, 7)]


def test_room_lookup(db):
    db.execute("CREATE TABLE code_room(symbol TEXT, stable_id TEXT)")
    db.executemany("INSERT INTO code_room VALUES (?, ?)", [
        ("main", "room-main"),        # main has its own: its own wins
        ("memcpy", "room-memcpy"),    # memcpy's is null: the room's
        ("strlen", ""),               # empty in the room: stays NULL
        ("free", "room-free"),        # free's is "": the room's
    ])
    c = chunk()
    c["functions"] += [{"symbol": "strlen", "stable_id": None, "local": False},
                       {"symbol": "free", "stable_id": "", "local": False},
                       {"symbol": "absent", "local": False}]
    c["events"] += [[1, 3, 901, 2, "entry"], [1, 4, 902, 3, "entry"],
                    [1, 5, 903, 4, "entry"]]
    assert file(db, c, "code_room") == 1
    got = db.execute("SELECT symbol, stable_id FROM fn_trace_events "
                     "ORDER BY seq_no").fetchall()
    assert got == [("main", "c acme/widget * main()."),
                   ("memcpy", "room-memcpy"), ("memcpy", "room-memcpy"),
                   ("strlen", None), ("free", "room-free"), ("absent", None)]
    mapped = db.execute("SELECT mapped_events, mapped_functions "
                        "FROM fn_trace_runs").fetchone()
    assert mapped == (4, 3)


def test_room_many_functions_and_quoted_name(db):
    # More symbols than the per-symbol probes: matched in one scan of a view.
    db.execute('CREATE TABLE "we""ird room"(symbol TEXT, stable_id TEXT)')
    db.executemany('INSERT INTO "we""ird room" VALUES (?, ?)',
                   [("f%d" % i, "id-%d" % i) for i in range(0, 300, 2)])
    db.execute('CREATE VIEW rv AS SELECT * FROM "we""ird room"')
    funcs = [{"symbol": "f%d" % i, "stable_id": None, "local": True}
             for i in range(200)]
    events = [[0, i, i, i, "entry"] for i in range(200)]
    c = chunk(functions=funcs, events=events, total_events=400)
    assert file(db, c, 'we"ird room') == 1
    got = dict(db.execute("SELECT symbol, stable_id FROM fn_trace_events"))
    assert got["f0"] == "id-0" and got["f198"] == "id-198"
    assert got["f1"] is None and got["f199"] is None
    c2 = chunk(chunk=1, functions=funcs, events=events, total_events=400)
    assert file(db, c2, "rv") == 1
    assert db.execute("SELECT mapped_functions FROM fn_trace_runs WHERE "
                      "chunk = 1").fetchone()[0] == 100


def test_null_room_means_none(db):
    assert file(db, chunk(), None) == 1


def test_profile_example(db):
    text = json.dumps(SPEC_PROFILE)
    assert db.execute("SELECT fnt_file_profile(?)", (text,)).fetchone()[0] == 1
    assert db.execute("SELECT fnt_file_profile(?)", (text,)).fetchone()[0] == 0
    rows = db.execute('SELECT run_id, ts_micros, repo, "commit", target, '
                      'stable_id, symbol, self_ns, total_ns, self_samples, '
                      'total_samples, samples, profile_ns FROM fn_profile'
                      ).fetchall()
    assert rows == [("prof-1", 1764680000000000, "acme/widget", "9f1c2e0",
                     "widget_bench", None, "parse", 5, 9, 2, 4, 4000,
                     1000000000)]


def test_profile_room(db):
    db.execute("CREATE TABLE room(symbol, stable_id)")
    db.execute("INSERT INTO room VALUES ('parse', 'c parse().')")
    text = json.dumps(SPEC_PROFILE)
    assert db.execute("SELECT fnt_file_profile(?, 'room')",
                      (text,)).fetchone()[0] == 1
    assert db.execute("SELECT stable_id FROM fn_profile").fetchone()[0] == \
        "c parse()."


def test_profile_empty_rows(db):
    p = dict(SPEC_PROFILE, rows=[])
    assert db.execute("SELECT fnt_file_profile(?)",
                      (json.dumps(p),)).fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM fn_profile").fetchone()[0] == 0
    # Nothing was filed: the same run_id with rows still files.
    assert db.execute("SELECT fnt_file_profile(?)",
                      (json.dumps(SPEC_PROFILE),)).fetchone()[0] == 1


def test_profile_errors(db):
    p = copy.deepcopy(SPEC_PROFILE)
    del p["rows"][0]["total_ns"]
    with pytest.raises(sqlite3.Error) as info:
        db.execute("SELECT fnt_file_profile(?)", (json.dumps(p),)).fetchone()
    assert str(info.value) == \
        "fnt_file_profile: rows[0]: missing required field 'total_ns'"
    p = copy.deepcopy(SPEC_PROFILE)
    p["rows"][0]["self_ns"] = -5
    with pytest.raises(sqlite3.Error,
                       match=r"fnt_file_profile: rows\[0\]\.self_ns: -5 is "
                             r"negative"):
        db.execute("SELECT fnt_file_profile(?)", (json.dumps(p),)).fetchone()
    p = dict(SPEC_PROFILE)
    del p["repo"]
    with pytest.raises(sqlite3.Error,
                       match="fnt_file_profile: missing required field 'repo'"):
        db.execute("SELECT fnt_file_profile(?)", (json.dumps(p),)).fetchone()
    assert db.execute("SELECT count(*) FROM fn_profile").fetchone()[0] == 0


def test_directonly(db):
    text = json.dumps(chunk()).replace("'", "''")
    db.execute("CREATE VIEW v AS SELECT fnt_file_chunk('%s')" % text)
    with pytest.raises(sqlite3.Error, match="unsafe use of fnt_file_chunk"):
        db.execute("SELECT * FROM v").fetchall()
    db.execute("CREATE TABLE t(x)")
    db.execute("CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
               "SELECT fnt_file_profile(new.x); END")
    with pytest.raises(sqlite3.Error, match="unsafe use of fnt_file_profile"):
        db.execute("INSERT INTO t VALUES (?)", (json.dumps(SPEC_PROFILE),))
    assert counts(db) == (0, 0)



# Run in a child: SQLite's hard heap limit is the process's, and the pragma
# cannot raise it again.
HEAP_LIMIT_CHILD = r"""
import sqlite3, sys
ext, wh, path = sys.argv[1:4]
text = open(path).read()
conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(ext)
conn.execute("SELECT fnt_open(?)", (wh,))
conn.execute("PRAGMA hard_heap_limit=%d" % (9 * len(text) // 2))
print(conn.execute("SELECT fnt_file_chunk(?)", (text,)).fetchone()[0],
      conn.execute("SELECT count(*) FROM fn_trace_events").fetchone()[0])
"""


def test_events_estimate_beyond_a_heap_limit(tmp_path):
    # The events array is sized from the text after "events"; here that text
    # is mostly functions (5 MB of symbols no event uses), so the guess is
    # ~10 MB.  Under a heap limit that cannot hold it (4.5x the text: the
    # text's copy and the parser's strings fit) the array must grow as it
    # fills instead, and the chunk be filed; the guess alone failed below 6x.
    import subprocess
    import sys
    doc = {k: v for k, v in chunk().items() if k not in ("functions", "events")}
    doc["events"] = SPEC_CHUNK["events"]
    doc["functions"] = SPEC_CHUNK["functions"] + [
        {"symbol": "pad_%05d_%s" % (i, "x" * 1000), "stable_id": None, "local": False}
        for i in range(5000)]
    text = json.dumps(doc)
    assert text.index('"events"') < text.index('"functions"')
    path = tmp_path / "chunk.json"
    path.write_text(text)
    wh = str(tmp_path / "wh")
    out = subprocess.run([sys.executable, "-c", HEAP_LIMIT_CHILD, EXT, wh, str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", str(len(SPEC_CHUNK["events"]))], out.stdout
