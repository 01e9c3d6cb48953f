#!/usr/bin/env bash
# test_snapshots.sh -- SPEC §10 through the sqlite3 shell: a statement that
# files chunks and counts them in a correlated subquery reads one snapshot
# (SQLite reopens the subquery's cursor for each row), the next statement
# sees them all; fnt_snapshots lists the filings; time travel by
# snapshot_id, and an expired id is a clear error.
. "$(dirname "$0")/lib.sh" snapshots
chunk_sql() {   # the JSON of chunk x.k of run R (of 4), as an SQL expression
  echo "json_object('repo','acme/s','run_id','$1','target','t','source','s','chunk',x.k,'chunks',4,
    'total_events',8,'duration_ns',1,'truncated',json('false'),
    'functions',json('[{\"symbol\":\"f\",\"local\":true}]'),
    'events',json_array(json_array(1,2*x.k,2*x.k,0,'entry'),json_array(1,2*x.k+1,2*x.k+1,0,'exit')))"
}
got=$(sql db.sqlite <<SQL
CREATE TABLE src(k INTEGER);
INSERT INTO src VALUES (0),(1),(2),(3);
SELECT x.k, fnt_file_chunk($(chunk_sql r)),
       (SELECT count(*) FROM fn_trace_runs WHERE chunk <= x.k + 10),
       fnt_snapshot()
  FROM src x ORDER BY x.k;
SELECT count(*), fnt_snapshot() FROM fn_trace_runs;
SQL
)
expect "a correlated subquery reads the statement's one snapshot" "0|1|1|1
1|1|1|1
2|1|1|1
3|1|1|1
4|4" "$got"
got=$(sql <<'SQL'
SELECT snapshot_id, operation, run_id, chunk, files FROM fnt_snapshots;
SELECT snapshot_id, count(*) FROM fn_trace_events WHERE snapshot_id = 2;
SELECT snapshot_id, chunks_filed FROM fn_trace_run_summary WHERE snapshot_id = 3;
SELECT count(*) FROM fn_trace_calls WHERE snapshot_id = 1;
SELECT count(*) FROM fn_trace_runs a JOIN fn_trace_runs b USING (chunk)
 WHERE a.snapshot_id = 1 AND b.snapshot_id = 4;
SQL
)
expect "fnt_snapshots and time travel" "4|file_chunk|r|3|12
3|file_chunk|r|2|9
2|file_chunk|r|1|6
1|file_chunk|r|0|3
2|4
3|3
1
1" "$got"
got=$(echo "SELECT json_extract(fnt_expire_snapshots(0), '\$.snapshots_expired');
SELECT count(*) FROM fn_trace_events WHERE snapshot_id = 2;" | sql)
expect "an expired snapshot is a clear error" "3
Runtime error near line 4: snapshot_id 2: no such snapshot: it was expired (fnt expire), or is not committed yet (see fnt_snapshots)" "$got"
# expire says what it kept unlisted, and why: a young stray may be a
# commit in flight in another process
printf 'stray' > "$wh/data/stray.fnseg"
got=$("$FNT_BUILD/fnt" -w "$wh" expire --keep-seconds 0 | sed -n 2p)
expect "expire names the unlisted files it kept" "kept 1 unlisted file(s), 5 bytes: younger than the window and an hour, so possibly a commit in flight in another process; a later expire removes them" "$got"
got=$("$FNT_BUILD/fnt" -w "$wh" --json expire --keep-seconds 0 | sed 's/.*"unlisted_kept": *\([0-9]*\), *"unlisted_kept_bytes": *\([0-9]*\).*/\1 \2/')
expect "and in its JSON" "1 5" "$got"
touch -d '2 hours ago' "$wh/data/stray.fnseg"
got=$("$FNT_BUILD/fnt" -w "$wh" --json expire --keep-seconds 0 | sed 's/.*"files_removed": *\([0-9]*\).*"unlisted_kept": *\([0-9]*\).*/\1 \2/')
expect "an old one is removed" "1 0" "$got"
finish
