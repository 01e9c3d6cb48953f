#!/usr/bin/python3
"""make_chunks.py -- chunk and profile JSON (SPEC §4) for the Iceberg export
test, deterministic, with the edge values an exporter must carry: NULL and
"" commits and stable_ids, an empty symbol, non-ASCII and quoting in text,
thread 2^32-1, t_ns 2^63-1; a profile's first 1,300 rows have no
stable_id (so a data page holds NULLs only) and no profile has a commit.

    make_chunks.py OUT_DIR NAME RUN_ID REPO COMMIT CHUNK CHUNKS EVENTS
    make_chunks.py OUT_DIR NAME --profile RUN_ID REPO ROWS
COMMIT "-" means none.  Writes OUT_DIR/NAME.json.
"""
import json
import random
import sys

FUNCS = [
    {"symbol": "main", "stable_id": "c acme/widget * main().", "local": True},
    {"symbol": "memcpy", "stable_id": None, "local": False},
    {"symbol": "", "stable_id": "", "local": True},
    {"symbol": "ns::Widget<int>::draw(char const*) \"quoted\" \u00fcml\u00e4ut", "stable_id": "c acme/widget * draw().", "local": True},
    {"symbol": "tab\there", "stable_id": None, "local": True},
] + [{"symbol": f"_ZN4acme6widget8functionILi{i}EEEvv", "stable_id": f"c acme/widget * f{i}()." if i % 3 else None,
      "local": i % 2 == 0} for i in range(60)]


def chunk(run_id, repo, commit, k, chunks, n):
    rnd = random.Random(f"{run_id}/{k}")
    events = []
    t = k * 10_000_000
    base = k * n
    threads = [1, 2, 7, 4294967295]
    for i in range(n):
        t += rnd.randint(1, 5000)
        kind = rnd.choice(["entry", "entry", "exit", "tail_exit"])
        events.append([rnd.choice(threads), base + i, t, rnd.randrange(len(FUNCS)), kind])
    if k == chunks - 1:
        events[-1][2] = 2**63 - 1          # the largest t_ns
    c = {"repo": repo, "run_id": run_id, "ts_micros": 1764680000000000 + k,
         "target": "widget_tests", "source": "xray-basic", "chunk": k,
         "chunks": chunks, "total_events": n * chunks, "duration_ns": 5000,
         "truncated": k % 2 == 1, "binaries": [{"path": "build/w", "build_id": "ab12"}],
         "functions": FUNCS, "events": events}
    if commit != "-":
        c["commit"] = commit
    return c


def profile(run_id, repo, rows):
    rnd = random.Random(run_id)
    return {"run_id": run_id, "ts_micros": 1764680000000000, "repo": repo,
            "commit": "", "target": "widget_bench", "samples": 4000,
            "profile_ns": 10**9,
            "rows": [{"symbol": f"fn_{i}", "stable_id": (f"c p * fn_{i}()." if i % 2 and i >= 1300 else None),
                      "self_ns": rnd.randint(0, 10**6), "total_ns": 10**6 + i,
                      "self_samples": i, "total_samples": 2 * i} for i in range(rows)]}


def main():
    out, name = sys.argv[1], sys.argv[2]
    if sys.argv[3] == "--profile":
        doc = profile(sys.argv[4], sys.argv[5], int(sys.argv[6]))
    else:
        run_id, repo, commit, k, chunks, n = sys.argv[3:9]
        doc = chunk(run_id, repo, commit, int(k), int(chunks), int(n))
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
