"""The virtual tables against plain SQLite tables holding the same rows.

Random runs (several repos, multi-chunk runs with chunks left unfiled,
NULL and "" commits and stable_ids, recursion, tail exits, unmatched exits,
several threads, t_ns above 2^53, run_ids that look like numbers) are filed
through fnt_file_chunk()/fnt_file_profile(), and the rows SPEC §3/§4 says
they make are inserted into plain tables ev, ru, pr (same columns, same
declared types) and a view su (the summary as a GROUP BY over ru).  Then a
few hundred random queries -- filters on every column with values of every
type (TEXT '5', REAL 2.5, NULL, BLOB, out-of-range), as literals and as
bound parameters, ranges, IN, IS NULL, ORDER BY / LIMIT / OFFSET,
aggregates, GROUP BY, joins and correlated subqueries, the two SPEC §5
queries -- must give the same answer on both (rows compared sorted unless
the ORDER BY makes the order total).  Seeds are fixed.
"""
import json
import os
import random
import sqlite3
import tempfile

import pytest

BUILD = os.environ.get("FNT_BUILD", "build")
EXT = os.path.join(BUILD, "fntrace")

EV_COLS = ["repo", "commit", "run_id", "thread", "seq_no", "t_ns",
           "stable_id", "kind", "symbol"]
RUN_COLS = ["run_id", "ts_micros", "repo", "commit", "target", "source",
            "chunk", "chunks", "events", "mapped_events", "functions",
            "mapped_functions", "local_functions", "mapped_local_functions",
            "threads", "first_ns", "last_ns", "total_events", "duration_ns",
            "truncated", "binaries"]
PROF_COLS = ["run_id", "ts_micros", "repo", "commit", "target", "stable_id",
             "symbol", "self_ns", "total_ns", "self_samples",
             "total_samples", "samples", "profile_ns"]
TEXT = {"repo", "commit", "run_id", "stable_id", "kind", "symbol", "target",
        "source", "binaries"}
NOT_NULL = {"repo", "run_id", "symbol"}

SCHEMA = """
CREATE TABLE ev(%s);
CREATE TABLE ru(%s);
CREATE TABLE pr(%s);
CREATE VIEW su AS
 SELECT f.run_id, g.ts_micros, f.repo, f."commit", f.target, f.source,
        g.chunks_filed, f.chunks, g.events, g.mapped_events, f.total_events,
        f.threads, f.duration_ns, f.truncated, g.functions,
        g.mapped_functions, g.local_functions, g.mapped_local_functions,
        f.binaries
   FROM (SELECT run_id, min(ts_micros) AS ts_micros, count(*) AS chunks_filed,
                min(chunk) AS c0, sum(events) AS events,
                sum(mapped_events) AS mapped_events, sum(functions) AS functions,
                sum(mapped_functions) AS mapped_functions,
                sum(local_functions) AS local_functions,
                sum(mapped_local_functions) AS mapped_local_functions
           FROM ru GROUP BY run_id) AS g
   JOIN ru AS f ON f.run_id = g.run_id AND f.chunk = g.c0;
"""


def decl(cols):
    return ", ".join('"%s" %s%s' % (c, "TEXT" if c in TEXT else "INTEGER",
                                    " NOT NULL" if c in NOT_NULL else "")
                     for c in cols)


# ---------------------------------------------------------------- the data

REPOS = ["acme/widget", "acme/gadget", "zeta/z"]
THREADS = [0, 1, 2, 77, 4294967295]
RUN_IDS = ["run-a", "run-b", "run-c", "run-d", "run-e", "run-f", "run-g",
           "1", "01", "7", "run 'quoted'", "run-\u00e9t\u00e9", "RUN-A"]


def nz(s):
    """SPEC §3: "" is stored as NULL in the nullable columns."""
    return None if s in (None, "") else s


def make_run(rng, run_id, repo, ts, big):
    """A run's chunks (dicts for fnt_file_chunk), some left unfiled."""
    nfun = rng.randint(3, 9)
    funs = []
    for i in range(nfun):
        sym = rng.choice(["main", "parse", "memcpy", "lex", "emit", "f", "g"]) + str(i)
        sid = rng.choice([None, "", "c %s * %s()." % (repo, sym), "c %s * %s()." % (repo, sym)])
        funs.append({"symbol": sym, "stable_id": sid, "local": rng.random() < 0.6})
    nthreads = rng.randint(1, 3)
    threads = rng.sample(THREADS, nthreads)
    stacks = {t: [] for t in threads}
    clock = {t: 0 for t in threads}
    base = (1 << 60) + rng.randint(0, 1000) if big else rng.randint(0, 50)
    events = []                                  # [thread, t, fun, kind]
    n = rng.randint(0, 2000)
    for _ in range(n):
        th = rng.choice(threads)
        clock[th] += rng.choice([0, 1, 1, 2, 5, 17, 100])
        st = stacks[th]
        r = rng.random()
        if not st or r < 0.45:
            f = st[-1] if st and rng.random() < 0.2 else rng.randrange(nfun)
            st.append(f)
            events.append([th, base + clock[th], f, "entry"])
        elif r < 0.52:                           # an exit nothing entered
            events.append([th, base + clock[th], rng.randrange(nfun), "exit"])
        else:
            depth = 1 if rng.random() < 0.9 else rng.randint(1, len(st))
            f = st[-depth]
            del st[-depth:]
            events.append([th, base + clock[th], f,
                           "tail_exit" if rng.random() < 0.2 else "exit"])
    # seq_no: increasing with gaps, in event order
    seq = rng.randint(0, 5)
    for e in events:
        e.insert(1, seq)
        seq += rng.choice([1, 1, 1, 2, 9])
    nchunks = rng.randint(1, 4)
    interleave = rng.random() < 0.3
    parts = [[] for _ in range(nchunks)]
    for i, e in enumerate(events):
        c = (i % nchunks) if interleave else min(nchunks - 1, i * nchunks // max(1, len(events)))
        parts[c].append(e)
    filed = [c for c in range(nchunks) if nchunks == 1 or rng.random() < 0.75] or [nchunks - 1]
    commit = rng.choice([None, "", "9f1c2e0", "abc123"])
    binaries = rng.choice([None, [], [{"path": "bin/" + run_id, "build_id": "ab"}]])
    total = len(events)
    duration = (events[-1][2] - events[0][2]) if events else 0
    chunks = []
    for c in filed:
        evs = parts[c]
        used = sorted({e[3] for e in evs})
        extra = [f for f in range(nfun) if f not in used and rng.random() < 0.3]
        order = used + extra
        rng.shuffle(order)
        local_index = {f: i for i, f in enumerate(order)}
        fl = []
        for f in order:
            d = {"symbol": funs[f]["symbol"], "local": funs[f]["local"]}
            if funs[f]["stable_id"] is not None or rng.random() < 0.5:
                d["stable_id"] = funs[f]["stable_id"]
            fl.append(d)
        jev = [[e[0], e[1], e[2], local_index[e[3]], e[4]] for e in evs]
        rng.shuffle(jev)
        ch = {"repo": repo, "run_id": run_id, "ts_micros": ts + c,
              "target": rng.choice(["widget_tests", "t2"]) if c else "widget_tests",
              "source": "xray", "chunk": c, "chunks": nchunks,
              "total_events": total, "duration_ns": duration,
              "truncated": rng.random() < 0.2, "functions": fl, "events": jev}
        ch["commit"] = commit if c == filed[0] else rng.choice([commit, None, "other"])
        if ch["commit"] is None and rng.random() < 0.5:
            del ch["commit"]
        if rng.random() < 0.7:
            ch["threads"] = nthreads
        if binaries is not None:
            ch["binaries"] = binaries
        chunks.append(ch)
    return chunks


def chunk_rows(ch):
    """The fn_trace_events rows and the fn_trace_runs row of a chunk."""
    funs = ch["functions"]
    commit = nz(ch.get("commit"))
    ev = []
    for th, seq, t, f, kind in ch["events"]:
        ev.append((ch["repo"], commit, ch["run_id"], th, seq, t,
                   nz(funs[f].get("stable_id")), kind, funs[f]["symbol"]))
    used = {e[3] for e in ch["events"]}
    mapped = {f for f in used if nz(funs[f].get("stable_id"))}
    local = {f for f in used if funs[f]["local"]}
    ts = [e[2] for e in ch["events"]]
    threads = ch.get("threads", len({e[0] for e in ch["events"]}))
    binaries = json.dumps(ch["binaries"]) if "binaries" in ch else "[]"
    run = (ch["run_id"], ch["ts_micros"], ch["repo"], commit, ch["target"],
           ch["source"], ch["chunk"], ch["chunks"], len(ch["events"]),
           sum(1 for e in ch["events"] if e[3] in mapped), len(used),
           len(mapped), len(local), len(mapped & local), threads,
           min(ts) if ts else 0, max(ts) if ts else 0, ch["total_events"],
           ch["duration_ns"], int(ch["truncated"]), binaries)
    return ev, run


def make_profile(rng, run_id, repo, ts):
    rows = []
    for i in range(rng.randint(1, 15)):
        rows.append({"symbol": "p%d_%s" % (i, rng.choice("abc")),
                     "stable_id": rng.choice([None, "", "c %s * p%d()." % (repo, i)]),
                     "self_ns": rng.randint(0, 10**6), "total_ns": rng.randint(0, 10**6),
                     "self_samples": rng.randint(0, 99), "total_samples": rng.randint(0, 99)})
    return {"run_id": run_id, "ts_micros": ts, "repo": repo,
            "commit": rng.choice([None, "", "c1"]), "target": "bench",
            "samples": rng.randint(1, 4000), "profile_ns": rng.randint(1, 10**9),
            "rows": rows}


@pytest.fixture(scope="module")
def db():
    base = os.environ.get("FNT_TEST_TMP")
    if base:
        os.makedirs(base, exist_ok=True)
    wh = tempfile.mkdtemp(prefix="differential-", dir=base)
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.execute("SELECT fnt_open(?)", (wh,))
    conn.executescript(SCHEMA % (decl(EV_COLS), decl(RUN_COLS), decl(PROF_COLS)))
    rng = random.Random(20261202)
    ts0 = 1764680000000000
    facts = {"run_ids": [], "t_ns": [], "seq_no": [], "stable_ids": set(),
             "symbols": set(), "profiles": []}
    for i, run_id in enumerate(RUN_IDS):
        repo = REPOS[i % len(REPOS)]
        # two runs share a ts_micros: the summary breaks the tie by run_id
        ts = ts0 + 1000 * (i if i != 3 else 2)
        for ch in make_run(rng, run_id, repo, ts, big=(i % 5 == 4)):
            assert conn.execute("SELECT fnt_file_chunk(?)", (json.dumps(ch),)).fetchone()[0] == 1
            ev, run = chunk_rows(ch)
            conn.executemany("INSERT INTO ev VALUES (%s)" % ",".join("?" * 9), ev)
            conn.execute("INSERT INTO ru VALUES (%s)" % ",".join("?" * 21), run)
            facts["t_ns"] += [e[5] for e in ev]
            facts["seq_no"] += [e[4] for e in ev]
            facts["stable_ids"] |= {e[6] for e in ev if e[6]}
            facts["symbols"] |= {e[8] for e in ev}
        facts["run_ids"].append(run_id)
    for i in range(6):
        run_id = "prof-%d" % i
        repo = REPOS[i % 2]
        p = make_profile(rng, run_id, repo, ts0 + 7 * i)
        assert conn.execute("SELECT fnt_file_profile(?)", (json.dumps(p),)).fetchone()[0] == 1
        for r in p["rows"]:
            conn.execute("INSERT INTO pr VALUES (%s)" % ",".join("?" * 13),
                         (run_id, p["ts_micros"], repo, nz(p["commit"]), p["target"],
                          nz(r["stable_id"]), r["symbol"], r["self_ns"], r["total_ns"],
                          r["self_samples"], r["total_samples"], p["samples"],
                          p["profile_ns"]))
            facts["stable_ids"] |= {nz(r["stable_id"])} - {None}
        facts["profiles"].append(run_id)
    conn.commit()
    facts["stable_ids"] = sorted(facts["stable_ids"])
    facts["symbols"] = sorted(facts["symbols"])
    yield conn, facts
    conn.close()


# ------------------------------------------------------------- comparison

VT = {"E": "fn_trace_events", "R": "fn_trace_runs", "P": "fn_profile",
      "S": "fn_trace_run_summary"}
PLAIN = {"E": "ev", "R": "ru", "P": "pr", "S": "su"}


def run_both(conn, sql, params, ordered):
    out = []
    for names in (VT, PLAIN):
        try:
            rows = conn.execute(sql.format(**names), params).fetchall()
            out.append(rows if ordered else sorted(rows, key=repr))
        except sqlite3.Error as e:
            out.append("error: %s" % e.__class__.__name__)
    return out


def check(conn, sql, params=(), ordered=False):
    got, want = run_both(conn, sql, params, ordered)
    if got != want:
        def show(x):
            return x if isinstance(x, str) else "%d rows %r" % (len(x), x[:8])
        pytest.fail("differs: %s\n  params %r\n  vtab  %s\n  plain %s"
                    % (sql.format(**VT), params, show(got), show(want)))
    return want


def lit(v):
    """v as an SQL literal."""
    if v is None:
        return "NULL"
    if isinstance(v, bytes):
        return "X'%s'" % v.hex()
    if isinstance(v, str):
        return "'%s'" % v.replace("'", "''")
    return repr(v)


class Q:
    """A WHERE clause built of atoms, each value a parameter or a literal."""

    def __init__(self, rng):
        self.rng = rng
        self.atoms = []
        self.params = []

    def val(self, v):
        if self.rng.random() < 0.5:
            self.params.append(v)
            return "?"
        return lit(v)

    def add(self, fmt, *vals):
        self.atoms.append(fmt % tuple(self.val(v) for v in vals))

    def where(self, joiner=" AND "):
        return (" WHERE " + joiner.join(self.atoms)) if self.atoms else ""


def int_val(rng, pool):
    v = rng.choice(pool) + rng.choice([-1, 0, 0, 1])
    return rng.choice([
        v, v, v, v + 0.5, v - 0.5, float(v), str(v), " %d " % v, "%d.0" % v,
        "abc", None, b"\x01", -1, 2**63 - 1, 9.3e18, -9.3e18, 1e300,
        "%de0" % v])


def text_val(rng, pool):
    return rng.choice(list(pool) * 4 + [None, "", "nope", 7, 7.0, 1, "7", b"7", "01",
                                        "RUN-A"])


def event_atom(q, f):
    rng = q.rng
    k = rng.randrange(24)
    if k < 4:
        q.add("run_id = %s", text_val(rng, f["run_ids"]))
    elif k == 4:
        vals = [text_val(rng, f["run_ids"]) for _ in range(rng.randint(1, 4))]
        q.add("run_id IN (%s)" % ", ".join(["%s"] * len(vals)), *vals)
    elif k == 5:
        q.add("repo = %s", text_val(rng, REPOS))
    elif k == 6:
        vals = [text_val(rng, REPOS) for _ in range(rng.randint(1, 3))]
        q.add("repo IN (%s)" % ", ".join(["%s"] * len(vals)), *vals)
    elif k < 10:
        col = rng.choice(["t_ns", "seq_no"])
        pool = f[col]
        op = rng.choice(["<", "<=", ">", ">=", "="])
        q.add("%s %s %%s" % (col, op), int_val(rng, pool))
    elif k < 12:
        col = rng.choice(["t_ns", "seq_no"])
        a, b = sorted(rng.sample(f[col], 2))
        q.add("%s BETWEEN %%s AND %%s" % col,
              rng.choice([a, str(a), a - 0.5]), rng.choice([b, b + 0.5, str(b)]))
    elif k == 12:
        q.add("thread = %s", rng.choice(THREADS + [3, -1, 2**32, "1", 1.0, 1.5, None, "x"]))
    elif k == 13:
        q.add("thread IN (%s, %s)", rng.choice(THREADS), rng.choice(THREADS + ["2"]))
    elif k == 14:
        q.add("kind = %s", rng.choice(["entry", "exit", "tail_exit", "enter", None, 0, "EXIT"]))
    elif k == 15:
        q.add("kind IN (%s, %s)", rng.choice(["entry", "exit"]), rng.choice(["tail_exit", "x"]))
    elif k == 16:
        q.add("stable_id = %s", rng.choice(f["stable_ids"] + [None, "", "nope"]))
    elif k == 17:
        q.atoms.append(rng.choice(["stable_id IS NULL", "stable_id IS NOT NULL",
                                   '"commit" IS NULL', '"commit" IS NOT NULL']))
    elif k == 18:
        q.add('"commit" = %s', rng.choice(["9f1c2e0", "abc123", "other", None]))
    elif k == 19:
        q.add("symbol = %s", rng.choice(f["symbols"]))
    elif k == 20:
        q.atoms.append(rng.choice(["symbol LIKE 'm%'", "t_ns % 3 = 0", "seq_no + 0 > 100",
                                   "run_id > 'run-c'", "thread > 1"]))
    elif k == 21:
        q.add("run_id = %s COLLATE NOCASE", rng.choice(["run-a", "RUN-A"]))
    elif k == 22:
        q.add("%s = run_id", text_val(rng, f["run_ids"]))
    else:
        q.add("seq_no != %s", rng.choice(f["seq_no"]))


def test_events(db):
    conn, f = db
    rng = random.Random(1)
    for _ in range(260):
        q = Q(rng)
        for _ in range(rng.randint(1, 4)):
            event_atom(q, f)
        shape = rng.randrange(8)
        cols = ", ".join('"%s"' % c for c in rng.sample(EV_COLS, rng.randint(1, 9)))
        if shape == 0:
            check(conn, "SELECT * FROM {E}" + q.where(), q.params)
        elif shape == 1:
            check(conn, "SELECT %s FROM {E}%s" % (cols, q.where()), q.params)
        elif shape == 2:
            check(conn, "SELECT * FROM {E}" + q.where(" OR "), q.params)
        elif shape == 3:
            # one run, its seq_no order: ORDER BY (and LIMIT) consumed
            q.add("run_id = %s", rng.choice(f["run_ids"]))
            lim = " LIMIT %d" % rng.randint(0, 50) if rng.random() < 0.7 else ""
            if lim and rng.random() < 0.5:
                lim += " OFFSET %d" % rng.randint(0, 30)
            check(conn, "SELECT %s, seq_no FROM {E}%s ORDER BY seq_no%s"
                  % (cols, q.where(), lim), q.params, ordered=True)
        elif shape == 4:
            lim = "LIMIT %d OFFSET %d" % (rng.randint(0, 40), rng.randint(0, 40))
            order = rng.choice(["run_id, seq_no", "seq_no DESC, run_id",
                                "t_ns DESC, run_id, seq_no"])
            check(conn, "SELECT %s FROM {E}%s ORDER BY %s %s"
                  % (cols, q.where(), order, lim), q.params, ordered=True)
        elif shape == 5:
            # LIMIT without ORDER BY: which rows is free, how many is not
            lim = "LIMIT %d" % rng.randint(0, 300)
            if rng.random() < 0.5:
                lim += " OFFSET %d" % rng.randint(0, 300)
            check(conn, "SELECT count(*) FROM (SELECT seq_no FROM {E}%s %s)"
                  % (q.where(), lim), q.params)
        elif shape == 6:
            check(conn, "SELECT count(*), sum(t_ns), min(seq_no), max(t_ns), "
                  "count(DISTINCT stable_id), total(thread), count(\"commit\") "
                  "FROM {E}" + q.where(), q.params)
        else:
            g = rng.choice(["kind", "run_id, thread", "stable_id", "repo, kind"])
            check(conn, "SELECT %s, count(*), min(t_ns), max(seq_no) FROM {E}%s GROUP BY %s"
                  % (g, q.where(), g), q.params)


def test_runs_profile_summary(db):
    conn, f = db
    rng = random.Random(2)
    for _ in range(70):
        q = Q(rng)
        for _ in range(rng.randint(0, 3)):
            k = rng.randrange(8)
            if k < 2:
                q.add("run_id = %s", text_val(rng, f["run_ids"]))
            elif k == 2:
                q.add("repo = %s", text_val(rng, REPOS))
            elif k == 3:
                q.add("repo IN (%s, %s)", text_val(rng, REPOS), text_val(rng, REPOS))
            elif k == 4:
                q.add("chunk = %s", rng.choice([0, 1, 2, 3, "1", 1.0, 0.5, None, -1]))
            elif k == 5:
                q.add("chunk %s %%s" % rng.choice(["<", ">="]), rng.choice([1, 2, 1.5]))
            elif k == 6:
                q.atoms.append(rng.choice(['"commit" IS NULL', "truncated = 1",
                                           "events > 100", "binaries = '[]'"]))
            else:
                q.add("run_id IN (SELECT run_id FROM {R} WHERE repo = %s)",
                      rng.choice(REPOS))
        check(conn, "SELECT * FROM {R}" + q.where(), q.params)
    for _ in range(60):
        q = Q(rng)
        for _ in range(rng.randint(0, 3)):
            k = rng.randrange(6)
            if k < 2:
                q.add("run_id = %s", rng.choice(f["profiles"] + ["nope", None, 1]))
            elif k == 2:
                q.add("repo = %s", text_val(rng, REPOS))
            elif k == 3:
                q.add("stable_id = %s", rng.choice(f["stable_ids"][:20] + [None, ""]))
            elif k == 4:
                q.atoms.append(rng.choice(["stable_id IS NULL", "total_ns > 500000",
                                           "symbol LIKE 'p1%'"]))
            else:
                q.add("ts_micros >= %s", rng.choice([1764680000000000, 1764680000000014]))
        check(conn, "SELECT * FROM {P}" + q.where(), q.params)
        check(conn, "SELECT repo, count(*), sum(total_ns) FROM {P}%s GROUP BY repo"
              % q.where(), q.params)
    for _ in range(50):
        q = Q(rng)
        for _ in range(rng.randint(0, 2)):
            k = rng.randrange(4)
            if k == 0:
                q.add("run_id = %s", text_val(rng, f["run_ids"]))
            elif k == 1:
                q.add("repo = %s", text_val(rng, REPOS))
            elif k == 2:
                q.add("ts_micros > %s", 1764680000000000 + rng.randint(0, 13000))
            else:
                q.atoms.append(rng.choice(["chunks_filed < chunks", '"commit" IS NULL',
                                           "events >= 200"]))
        check(conn, "SELECT * FROM {S}" + q.where(), q.params)
        # without ORDER BY the summary is newest first, then by run_id
        got = conn.execute("SELECT run_id FROM fn_trace_run_summary" + q.where(),
                           q.params).fetchall()
        want = conn.execute("SELECT run_id FROM su%s ORDER BY ts_micros DESC, run_id"
                            % q.where(), q.params).fetchall()
        assert got == want, (q.where(), q.params)
        check(conn, "SELECT run_id, ts_micros FROM {S}%s ORDER BY ts_micros DESC, run_id "
              "LIMIT 5" % q.where(), q.params, ordered=True)


def test_joins(db):
    conn, f = db
    rng = random.Random(3)
    for _ in range(70):
        q = Q(rng)
        event_atom(q, f)
        shape = rng.randrange(9)
        if shape == 6:
            # IN over a subquery of INTEGERs: numeric affinity again
            check(conn, "SELECT run_id, count(*) FROM {E} WHERE run_id IN "
                  "(SELECT chunk FROM {R}) GROUP BY run_id")
            check(conn, "SELECT run_id, count(*) FROM {E} WHERE run_id IN "
                  "(SELECT chunk || '' FROM {R}) GROUP BY run_id")
        elif shape == 7:
            # OR across tables' rows: deduplicated by rowid
            check(conn, "SELECT * FROM {R} WHERE run_id = ? OR chunk = 1 OR repo = ?",
                  (rng.choice(f["run_ids"]), rng.choice(REPOS)))
            check(conn, "SELECT * FROM {P} WHERE run_id = ? OR stable_id = ? OR repo = ?",
                  (rng.choice(f["profiles"]), rng.choice(f["stable_ids"]), rng.choice(REPOS)))
            check(conn, "SELECT * FROM {S} WHERE run_id = ? OR repo = ?",
                  (rng.choice(f["run_ids"]), rng.choice(REPOS)))
        elif shape == 8:
            check(conn, "SELECT count(*), sum(seq_no) FROM {E} WHERE run_id NOT IN (?, ?) "
                  "AND kind IS ? AND thread IS NOT ?",
                  (rng.choice(f["run_ids"]), rng.choice(f["run_ids"]),
                   rng.choice(["entry", None]), rng.choice(THREADS)))
        elif shape == 0:
            # (the subquery is flattened: its WHERE still reaches xBestIndex)
            check(conn, "SELECT e.run_id, e.seq_no, r.target, r.chunk FROM "
                  "(SELECT * FROM {E}%s) AS e "
                  "JOIN {R} AS r ON r.run_id = e.run_id AND r.chunk = 0" % q.where(),
                  q.params)
        elif shape == 1:
            check(conn, "SELECT r.run_id, r.chunk, (SELECT count(*) FROM {E} AS e "
                  "WHERE e.run_id = r.run_id AND e.t_ns BETWEEN r.first_ns AND r.last_ns "
                  "AND e.thread = r.threads) FROM {R} AS r")
        elif shape == 2:
            check(conn, "SELECT count(*), sum(seq_no) FROM {E} WHERE run_id IN "
                  "(SELECT run_id FROM {R} WHERE repo = ?)", (rng.choice(REPOS),))
        elif shape == 3:
            # a TEXT column against an INTEGER one: numeric affinity, '01' = 1
            check(conn, "SELECT r.run_id, r.chunk, e.run_id, e.seq_no FROM {R} AS r "
                  "JOIN {E} AS e ON e.run_id = r.chunk")
        elif shape == 4:
            check(conn, "SELECT s.run_id, s.events, (SELECT count(*) FROM {E} AS e "
                  "WHERE e.run_id = s.run_id) FROM {S} AS s")
        else:
            check(conn, "SELECT e.kind, count(*) FROM {R} AS r JOIN {E} AS e "
                  "ON e.run_id = r.run_id AND e.seq_no BETWEEN r.first_ns AND r.last_ns "
                  "GROUP BY e.kind")


def test_spec_queries(db):
    conn, f = db
    rng = random.Random(4)
    window = ("SELECT thread, seq_no, t_ns, stable_id, kind, symbol FROM {E} "
              "WHERE run_id = :run AND t_ns BETWEEN :from AND :to AND seq_no > :after "
              "ORDER BY seq_no LIMIT :limit")
    for _ in range(40):
        run = rng.choice(f["run_ids"])
        ts = sorted(rng.sample(f["t_ns"], 2))
        p = {"run": run, "from": ts[0], "to": ts[1],
             "after": rng.choice(f["seq_no"]), "limit": rng.randint(1, 200)}
        check(conn, window, p, ordered=True)
    newest = ("SELECT * FROM {P} WHERE run_id = (SELECT run_id FROM {P} WHERE repo = :repo "
              "ORDER BY ts_micros DESC LIMIT 1) ORDER BY total_ns DESC, symbol")
    for repo in REPOS:
        check(conn, newest, {"repo": repo}, ordered=True)
