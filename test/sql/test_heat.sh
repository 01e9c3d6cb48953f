#!/usr/bin/env bash
# test_heat.sh -- fnt_heat(run_id) through the real sqlite3 shell: a run of
# two chunks filed with fnt_file_chunk, its heat checked against figures
# computed by hand (SPEC §5), then the edge cases: unknown run, NULL,
# missing argument, the hidden run_id column, a join, no warehouse.
. "$(dirname "$0")/lib.sh" heat
SQL_BAIL=1

# Thread 1: main [0,5000] { a [100,900], a [1000,1500] { a [1100,1200] } }
#   (the second a ends with a tail_exit); thread 2: b [50,60], then an exit
#   of a that thread 2 never entered (ignored).  Chunk 1 numbers the
#   functions differently from chunk 0; b's stable_id "" is none.
chunk0='{"repo": "acme/widget", "commit": "9f1c2e0", "run_id": "r1",
 "ts_micros": 1764680000000000, "target": "widget_tests", "source": "xray",
 "chunk": 0, "chunks": 2, "total_events": 11, "duration_ns": 5000,
 "truncated": false,
 "functions": [{"symbol": "main", "stable_id": "c acme/widget * main().", "local": true},
               {"symbol": "a", "stable_id": null, "local": true},
               {"symbol": "b", "stable_id": "", "local": false}],
 "events": [[1, 0, 0, 0, "entry"], [1, 1, 100, 1, "entry"],
            [1, 2, 900, 1, "exit"], [2, 3, 50, 2, "entry"]]}'
chunk1='{"repo": "acme/widget", "commit": "9f1c2e0", "run_id": "r1",
 "ts_micros": 1764680000000000, "target": "widget_tests", "source": "xray",
 "chunk": 1, "chunks": 2, "total_events": 11, "duration_ns": 5000,
 "truncated": false,
 "functions": [{"symbol": "b", "stable_id": null, "local": false},
               {"symbol": "main", "stable_id": "c acme/widget * main().", "local": true},
               {"symbol": "a", "local": true}],
 "events": [[1, 5, 1100, 2, "entry"], [1, 4, 1000, 2, "entry"],
            [1, 6, 1200, 2, "exit"], [1, 7, 1500, 2, "tail_exit"],
            [2, 8, 60, 0, "exit"], [1, 9, 5000, 1, "exit"],
            [2, 10, 70, 2, "exit"]]}'

got=$(sql <<SQL
SELECT fnt_file_chunk('$(printf '%s' "$chunk1" | sed "s/'/''/g")');
SELECT fnt_file_chunk('$(printf '%s' "$chunk0" | sed "s/'/''/g")');
SQL
)
expect "filing" "1
1" "$got"

heat='?a|1300|1300|3
?b|10|10|1
c acme/widget * main().|5000|3700|1'

got=$(sql <<'SQL'
SELECT * FROM fnt_heat('r1') ORDER BY key;
SQL
)
expect "fnt_heat('r1')" "$heat" "$got"

got=$(sql <<'SQL'
SELECT key, inclusive_ns, self_ns, calls FROM fnt_heat WHERE run_id = 'r1' ORDER BY key;
SQL
)
expect "run_id = 'r1' as a constraint" "$heat" "$got"

got=$(sql <<'SQL'
.headers on
SELECT * FROM fnt_heat('r1') ORDER BY key LIMIT 1;
SELECT DISTINCT run_id FROM fnt_heat('r1');
SQL
)
expect "columns and the hidden run_id" "key|inclusive_ns|self_ns|calls
?a|1300|1300|3
run_id
r1" "$got"

got=$(sql <<'SQL'
SELECT count(*) FROM fnt_heat('no-such-run');
SELECT count(*) FROM fnt_heat(NULL);
SELECT count(*) FROM fnt_heat('');
SQL
)
expect "unknown run, NULL, '' give no rows" "0
0
0" "$got"

# A join: fnt_heat's argument comes from the outer table, so the planner
# must put it inner (the unusable plan is refused with SQLITE_CONSTRAINT).
got=$(sql <<'SQL'
WITH runs(r) AS (VALUES ('r1'), ('nope'), (NULL))
SELECT r, key, calls FROM runs, fnt_heat(runs.r) ORDER BY r, key;
SELECT r, count(key) FROM (SELECT 'r1' AS r UNION ALL SELECT 'x')
  LEFT JOIN fnt_heat ON fnt_heat.run_id = r GROUP BY r ORDER BY r;
SQL
)
expect "join" "r1|?a|3
r1|?b|1
r1|c acme/widget * main().|1
r1|3
x|0" "$got"

got=$(sql <<'SQL' || true
SELECT * FROM fnt_heat;
SQL
)
case "$got" in
  *"fnt_heat: the run_id argument is required"*) echo "ok   missing argument";;
  *) echo "FAIL missing argument: $got"; fail=1;;
esac

got=$(sql <<'SQL' || true
SELECT * FROM fnt_heat WHERE run_id > 'a';
SQL
)
case "$got" in
  *"fnt_heat: the run_id argument is required"*) echo "ok   run_id range is not an argument";;
  *) echo "FAIL run_id range: $got"; fail=1;;
esac

got=$(sql <<'SQL' || true
DELETE FROM fnt_heat;
SQL
)
case "$got" in
  *"may not be modified"*) echo "ok   read-only";;
  *) echo "FAIL read-only: $got"; fail=1;;
esac

# No warehouse open and no $FNT_WAREHOUSE: the error says to call fnt_open.
got=$({ echo ".load $FNT_BUILD/fntrace"; echo "SELECT * FROM fnt_heat('r1');"; } \
      | env -u FNT_WAREHOUSE LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory: 2>&1 || true)
case "$got" in
  *fnt_open*) echo "ok   no warehouse";;
  *) echo "FAIL no warehouse: $got"; fail=1;;
esac

finish
