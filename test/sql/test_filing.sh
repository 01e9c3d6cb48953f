#!/usr/bin/env bash
# test_filing.sh -- fnt_file_chunk / fnt_file_profile through the real sqlite3
# shell (SPEC §4): the SPEC examples filed from files with readfile(), once
# (1) then again (0), read back from fn_trace_events, fn_trace_runs and
# fn_profile; a room; a bad chunk's message, with nothing written; a view
# and a trigger that call the filing functions are refused (DIRECTONLY).
. "$(dirname "$0")/lib.sh" filing

# The SPEC §4 chunk example (shipped with the golden warehouse).
cp "${FNT_SOURCE:?FNT_SOURCE must name the source folder}/test/golden/chunk0.json" "$tmp/chunk.json"
cat > "$tmp/profile.json" <<'JSON'
{ "run_id": "prof-1", "ts_micros": 1764680000000000, "repo": "acme/widget",
  "commit": "9f1c2e0", "target": "widget_bench", "samples": 4000,
  "profile_ns": 1000000000,
  "rows": [{"symbol": "parse", "stable_id": null, "self_ns": 5, "total_ns": 9,
            "self_samples": 2, "total_samples": 4}] }
JSON
# The second chunk of the run: its memcpy gets a stable_id from the room.
sed -e 's/"chunk": 0/"chunk": 1/' \
    -e 's/"events": .*/"events": [[1, 3, 4000, 1, "entry"], [1, 4, 4500, 1, "tail_exit"], [1, 5, 5000, 0, "exit"]]/' \
    "$tmp/chunk.json" > "$tmp/chunk1.json"

got=$(sql <<'SQL'
SELECT fnt_file_chunk(readfile('chunk.json'));
SELECT fnt_file_chunk(readfile('chunk.json'));
CREATE TEMP TABLE room(symbol TEXT, stable_id TEXT);
INSERT INTO room VALUES ('memcpy', 'c libc * memcpy().'), ('main', 'not this');
SELECT fnt_file_chunk(readfile('chunk1.json'), 'room');
SELECT fnt_file_profile(readfile('profile.json'));
SELECT fnt_file_profile(readfile('profile.json'));
SQL
)
expect "file the SPEC examples: 1, again 0" "1
0
1
1
0" "$got"

got=$(sql <<'SQL'
SELECT thread, seq_no, t_ns, stable_id, kind, symbol FROM fn_trace_events
 WHERE run_id = 'run-2026-12-02-0001' ORDER BY seq_no;
SQL
)
expect "read the events back" "1|0|0|c acme/widget * main().|entry|main
1|1|100||entry|memcpy
1|2|900||exit|memcpy
1|3|4000|c libc * memcpy().|entry|memcpy
1|4|4500|c libc * memcpy().|tail_exit|memcpy
1|5|5000|c acme/widget * main().|exit|main" "$got"

got=$(sql <<'SQL'
SELECT run_id, ts_micros, repo, "commit", target, source, chunk, chunks,
       events, mapped_events, functions, mapped_functions, local_functions,
       mapped_local_functions, threads, first_ns, last_ns, total_events,
       duration_ns, truncated, binaries
  FROM fn_trace_runs ORDER BY chunk;
SQL
)
expect "read the run rows back" 'run-2026-12-02-0001|1764680000000000|acme/widget|9f1c2e0|widget_tests|xray|0|2|3|1|2|1|1|1|1|0|900|6|5000|0|[{"path": "build/widget_tests", "build_id": "ab12"}]
run-2026-12-02-0001|1764680000000000|acme/widget|9f1c2e0|widget_tests|xray|1|2|3|3|2|2|1|1|1|4000|5000|6|5000|0|[{"path": "build/widget_tests", "build_id": "ab12"}]' "$got"

got=$(sql <<'SQL'
SELECT * FROM fn_profile;
SQL
)
expect "read the profile back" "prof-1|1764680000000000|acme/widget|9f1c2e0|widget_bench||parse|5|9|2|4|4000|1000000000" "$got"

# A bad chunk: the message names the event, nothing is written.
got=$(sql <<'SQL'
SELECT fnt_file_chunk(replace(replace(readfile('chunk.json'), '"exit"', '"enter"'),
                              '"chunk": 0', '"chunk": 1'));
SELECT fnt_file_chunk(replace(readfile('chunk.json'), '"run_id": "run-2026-12-02-0001",', ''));
SELECT fnt_file_chunk('{"repo": "a", "run_id": "x" "target": 1}');
SELECT fnt_file_chunk(readfile('chunk.json'), 'no_room');
SELECT count(*) FROM fn_trace_events;
SQL
)
expect "bad input: clear errors, nothing written" "error: fnt_file_chunk: events[2]: unknown kind 'enter' (want entry, exit or tail_exit)
error: fnt_file_chunk: missing required field 'run_id'
error: fnt_file_chunk: malformed JSON at byte 28: expected ',' or '}', found '\"'
error: fnt_file_chunk: room 'no_room': no such table: no_room (a room is a table or view with columns symbol, stable_id)
6" "$(printf '%s\n' "$got" | sed -E -e 's/^(Parse|Runtime) error near line [0-9]+:/error:/' \
                                    -e 's/^Error: (near line [0-9]+: )?/error: /' -e 's/ \([0-9]+\)$//')"

# DIRECTONLY: a view or a trigger of the database cannot file.
got=$(sql "$tmp/hostile.db" <<'SQL'
CREATE VIEW v AS SELECT fnt_file_chunk('{}') AS r;
CREATE TABLE t(x);
CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT fnt_file_profile(new.x); END;
SELECT r FROM v;
INSERT INTO t VALUES (readfile('profile.json'));
SQL
)
case "$got" in
  *"unsafe use of fnt_file_chunk()"*"unsafe use of fnt_file_profile()"*)
    echo "ok   DIRECTONLY: view and trigger refused" ;;
  *) echo "FAIL DIRECTONLY: view and trigger refused"; printf '%s\n' "$got"; fail=1 ;;
esac
got=$(sql <<'SQL'
SELECT count(*) FROM fn_trace_runs;
SELECT count(*) FROM fn_profile;
SQL
)
expect "nothing filed by the hostile schema" "2
1" "$got"

finish
