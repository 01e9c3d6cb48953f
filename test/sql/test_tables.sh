#!/usr/bin/env bash
# test_tables.sh -- the four eponymous tables through the real sqlite3 shell:
# their declared columns (order, types, "commit" quoted), the SPEC §4
# examples filed and read back from every table, the summary's folding and
# its newest-first order, read-only errors that name the filing function,
# fnt_last_scan(), and the error without a warehouse.
. "$(dirname "$0")/lib.sh" tables

q() { printf '%s' "$1" | sed "s/'/''/g"; }   # SQL-quote a JSON text

# The SPEC §4 chunk, as chunk 0 of a run of 2; its chunk 1 (filed first)
# disagrees on commit and target, which the summary must take from chunk 0.
chunk0=$(cat "${FNT_SOURCE:?FNT_SOURCE must name the source folder}/test/golden/chunk0.json")
chunk1='{
  "repo": "acme/widget",            "commit": "",
  "run_id": "run-2026-12-02-0001",  "ts_micros": 1764680000000500,
  "target": "other",                "source": "xray",
  "chunk": 1, "chunks": 2,
  "total_events": 6, "duration_ns": 5000, "truncated": false, "threads": 1,
  "functions": [
    {"symbol": "main", "stable_id": "c acme/widget * main().", "local": true}
  ],
  "events": [[1, 3, 1000, 0, "entry"], [1, 4, 4000, 0, "tail_exit"], [1, 5, 5000, 0, "exit"]]
}'
# An older run of another repo (no commit) and a newer one: summary order.
older='{"repo": "acme/gadget", "run_id": "run-old", "ts_micros": 1764000000000000,
  "target": "t", "source": "xray-fdr", "chunk": 0, "chunks": 1, "total_events": 1,
  "duration_ns": 1, "truncated": true, "functions": [{"symbol": "f", "local": true}],
  "events": [[7, 0, 5, 0, "entry"]]}'
newer='{"repo": "acme/gadget", "run_id": "run-new", "ts_micros": 1765000000000000,
  "target": "t", "source": "xray-fdr", "chunk": 0, "chunks": 1, "total_events": 0,
  "duration_ns": 0, "truncated": false, "functions": [], "events": []}'
profile='{ "run_id": "prof-1", "ts_micros": 1764680000000000, "repo": "acme/widget",
  "commit": "9f1c2e0", "target": "widget_bench", "samples": 4000,
  "profile_ns": 1000000000,
  "rows": [{"symbol": "parse", "stable_id": null, "self_ns": 5, "total_ns": 9,
            "self_samples": 2, "total_samples": 4}] }'

# --- declared columns (the HIDDEN snapshot_id aside): order, types, NOT NULL -
got=$(sql <<'SQL'
.mode list
SELECT group_concat(name || ' ' || type || iif("notnull", ' NOT NULL', ''), ', ')
  FROM pragma_table_info('fn_trace_events');
SELECT group_concat(name || ' ' || type, ', ') FROM pragma_table_info('fn_trace_runs');
SELECT group_concat(name || ' ' || type, ', ') FROM pragma_table_info('fn_profile');
SELECT group_concat(name || ' ' || type, ', ') FROM pragma_table_info('fn_trace_run_summary');
SQL
)
expect "declared columns" \
"repo TEXT NOT NULL, commit TEXT, run_id TEXT NOT NULL, thread INTEGER, seq_no INTEGER, t_ns INTEGER, stable_id TEXT, kind TEXT, symbol TEXT NOT NULL
run_id TEXT, ts_micros INTEGER, repo TEXT, commit TEXT, target TEXT, source TEXT, chunk INTEGER, chunks INTEGER, events INTEGER, mapped_events INTEGER, functions INTEGER, mapped_functions INTEGER, local_functions INTEGER, mapped_local_functions INTEGER, threads INTEGER, first_ns INTEGER, last_ns INTEGER, total_events INTEGER, duration_ns INTEGER, truncated INTEGER, binaries TEXT
run_id TEXT, ts_micros INTEGER, repo TEXT, commit TEXT, target TEXT, stable_id TEXT, symbol TEXT, self_ns INTEGER, total_ns INTEGER, self_samples INTEGER, total_samples INTEGER, samples INTEGER, profile_ns INTEGER
run_id TEXT, ts_micros INTEGER, repo TEXT, commit TEXT, target TEXT, source TEXT, chunks_filed INTEGER, chunks INTEGER, events INTEGER, mapped_events INTEGER, total_events INTEGER, threads INTEGER, duration_ns INTEGER, truncated INTEGER, functions INTEGER, mapped_functions INTEGER, local_functions INTEGER, mapped_local_functions INTEGER, binaries TEXT" \
"$got"

got=$(sql <<'SQL'
SELECT commit FROM fn_trace_events;
SQL
)
case "$got" in
  *'syntax error'*) echo 'ok   unquoted commit is a syntax error' ;;
  *) echo "FAIL unquoted commit: $got"; fail=1 ;;
esac

# --- an empty warehouse: every table empty, last scan NULL -----------------
got=$(sql <<'SQL'
SELECT fnt_last_scan() IS NULL;
SELECT (SELECT count(*) FROM fn_trace_events) || (SELECT count(*) FROM fn_trace_runs)
    || (SELECT count(*) FROM fn_profile) || (SELECT count(*) FROM fn_trace_run_summary);
SQL
)
expect "empty warehouse" "1
0000" "$got"

# --- filing, then reading back every table ---------------------------------
got=$(sql <<SQL
SELECT fnt_file_chunk('$(q "$chunk1")');
SELECT fnt_file_chunk('$(q "$chunk0")');
SELECT fnt_file_chunk('$(q "$older")');
SELECT fnt_file_chunk('$(q "$newer")');
SELECT fnt_file_profile('$(q "$profile")');
SQL
)
expect "filed" "1
1
1
1
1" "$got"

got=$(sql <<'SQL'
.mode list
.nullvalue NULL
SELECT * FROM fn_trace_events WHERE run_id = 'run-2026-12-02-0001' ORDER BY seq_no;
SQL
)
expect "fn_trace_events" \
"acme/widget|9f1c2e0|run-2026-12-02-0001|1|0|0|c acme/widget * main().|entry|main
acme/widget|9f1c2e0|run-2026-12-02-0001|1|1|100|NULL|entry|memcpy
acme/widget|9f1c2e0|run-2026-12-02-0001|1|2|900|NULL|exit|memcpy
acme/widget|NULL|run-2026-12-02-0001|1|3|1000|c acme/widget * main().|entry|main
acme/widget|NULL|run-2026-12-02-0001|1|4|4000|c acme/widget * main().|tail_exit|main
acme/widget|NULL|run-2026-12-02-0001|1|5|5000|c acme/widget * main().|exit|main" "$got"

got=$(sql <<'SQL'
.mode list
.nullvalue NULL
SELECT * FROM fn_trace_runs ORDER BY run_id, chunk;
SQL
)
expect "fn_trace_runs" \
"run-2026-12-02-0001|1764680000000000|acme/widget|9f1c2e0|widget_tests|xray|0|2|3|1|2|1|1|1|1|0|900|6|5000|0|[{\"path\": \"build/widget_tests\", \"build_id\": \"ab12\"}]
run-2026-12-02-0001|1764680000000500|acme/widget|NULL|other|xray|1|2|3|3|1|1|1|1|1|1000|5000|6|5000|0|[]
run-new|1765000000000000|acme/gadget|NULL|t|xray-fdr|0|1|0|0|0|0|0|0|0|0|0|0|0|0|[]
run-old|1764000000000000|acme/gadget|NULL|t|xray-fdr|0|1|1|0|1|0|1|0|1|5|5|1|1|1|[]" "$got"

got=$(sql <<'SQL'
.mode list
.nullvalue NULL
SELECT * FROM fn_profile;
SQL
)
expect "fn_profile" \
"prof-1|1764680000000000|acme/widget|9f1c2e0|widget_bench|NULL|parse|5|9|2|4|4000|1000000000" "$got"

# Summary: chunks folded (sums; ts_micros the smallest; commit, target and
# binaries from chunk 0 although chunk 1 was filed first), newest first.
got=$(sql <<'SQL'
.mode list
.nullvalue NULL
SELECT * FROM fn_trace_run_summary;
SELECT '--';
SELECT run_id FROM fn_trace_run_summary ORDER BY ts_micros DESC, run_id;
SELECT '--';
SELECT run_id FROM fn_trace_run_summary ORDER BY ts_micros;
SELECT '--';
SELECT run_id, chunks_filed FROM fn_trace_run_summary WHERE repo = 'acme/gadget';
SELECT run_id, events FROM fn_trace_run_summary WHERE run_id = 'run-2026-12-02-0001';
SELECT count(*) FROM fn_trace_run_summary WHERE run_id = NULL;
SQL
)
expect "fn_trace_run_summary" \
"run-new|1765000000000000|acme/gadget|NULL|t|xray-fdr|1|1|0|0|0|0|0|0|0|0|0|0|[]
run-2026-12-02-0001|1764680000000000|acme/widget|9f1c2e0|widget_tests|xray|2|2|6|4|6|1|5000|0|3|2|2|2|[{\"path\": \"build/widget_tests\", \"build_id\": \"ab12\"}]
run-old|1764000000000000|acme/gadget|NULL|t|xray-fdr|1|1|1|0|1|1|1|1|1|0|1|0|[]
--
run-new
run-2026-12-02-0001
run-old
--
run-old
run-2026-12-02-0001
run-new
--
run-new|1
run-old|1
run-2026-12-02-0001|6
0" "$got"

# The summary's ORDER BY ts_micros DESC is its own order: no sorter.
got=$(sql <<'SQL'
EXPLAIN QUERY PLAN SELECT run_id FROM fn_trace_run_summary ORDER BY ts_micros DESC, run_id;
SQL
)
case "$got" in
  *'USE TEMP B-TREE'*) echo "FAIL summary order consumed: $got"; fail=1 ;;
  *) echo 'ok   summary order consumed' ;;
esac

# --- read-only, with the filing function named -----------------------------
got=$(sql <<'SQL'
INSERT INTO fn_trace_events(repo, run_id, symbol) VALUES ('r', 'x', 's');
UPDATE fn_trace_events SET symbol = 'x';
DELETE FROM fn_trace_events;
INSERT INTO fn_trace_runs(run_id) VALUES ('x');
DELETE FROM fn_trace_runs WHERE run_id = 'run-old';
INSERT INTO fn_profile(run_id) VALUES ('x');
UPDATE fn_profile SET total_ns = 0;
INSERT INTO fn_trace_run_summary(run_id) VALUES ('x');
DELETE FROM fn_trace_run_summary;
SELECT count(*) FROM fn_trace_events;
SQL
)
expect "read-only" \
"Runtime error near line 3: fn_trace_events is read-only: file events with fnt_file_chunk() (8)
Runtime error near line 4: fn_trace_events is read-only: file events with fnt_file_chunk() (8)
Runtime error near line 5: fn_trace_events is read-only: file events with fnt_file_chunk() (8)
Runtime error near line 6: fn_trace_runs is read-only: file run chunks with fnt_file_chunk() (8)
Runtime error near line 7: fn_trace_runs is read-only: file run chunks with fnt_file_chunk() (8)
Runtime error near line 8: fn_profile is read-only: file profiles with fnt_file_profile() (8)
Runtime error near line 9: fn_profile is read-only: file profiles with fnt_file_profile() (8)
Runtime error near line 10: fn_trace_run_summary is read-only: file run chunks with fnt_file_chunk() (8)
Runtime error near line 11: fn_trace_run_summary is read-only: file run chunks with fnt_file_chunk() (8)
7" "$got"

# --- fnt_last_scan() after a window of one run ------------------------------
got=$(sql <<'SQL'
SELECT seq_no FROM fn_trace_events WHERE run_id = 'run-2026-12-02-0001'
   AND t_ns BETWEEN 100 AND 1000 AND seq_no > 1 ORDER BY seq_no LIMIT 5;
SELECT json_extract(fnt_last_scan(), '$.files_opened'),
       json_extract(fnt_last_scan(), '$.files_skipped'),
       json_extract(fnt_last_scan(), '$.row_groups_read') BETWEEN 1 AND 2,
       json_type(fnt_last_scan(), '$.row_groups_skipped'),
       json_type(fnt_last_scan(), '$.rows_decoded');
SQL
)
# Both chunks of the run overlap the window; run-old's file is skipped
# (run-new has no events, so no file).
expect "window and fnt_last_scan" "2
3
2|1|1|integer|integer" "$got"

# --- a damaged segment: an error naming the table and the file, no crash ---
seg=$(find "$wh" -path "*fn_trace_events*" -type f -size +100c | sort | sed -n 1p)
if [ -n "$seg" ]; then
  size=$(stat -c %s "$seg")
  printf '\xff\xff\xff\xff' | dd of="$seg" bs=1 seek=$((size / 2)) conv=notrunc status=none
  got=$(sql <<'SQL'
SELECT count(*), sum(t_ns) FROM fn_trace_events;
SQL
)
  case "$got" in
    *"fn_trace_events: "*"$(basename "$seg")"*) echo 'ok   damaged segment named in the error' ;;
    *) echo "FAIL damaged segment: $got"; fail=1 ;;
  esac
else
  echo "FAIL no fn_trace_events file found under $wh"; fail=1
fi

# --- no warehouse: a clear error ---------------------------------------------
got=$( { echo ".load $FNT_BUILD/fntrace"; echo "SELECT * FROM fn_trace_events;"; } \
       | env -u FNT_WAREHOUSE LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory: 2>&1 || true)
case "$got" in
  *'fnt_open'*) echo 'ok   no warehouse names fnt_open' ;;
  *) echo "FAIL no warehouse: $got"; fail=1 ;;
esac

finish
