#!/usr/bin/env bash
# test_compact.sh -- fnt_compact() through the sqlite3 shell: many small
# chunks merged in one commit, every table reads the same after, filing stays
# idempotent, a view cannot call it (DIRECTONLY), `fnt compact` agrees.
. "$(dirname "$0")/lib.sh" compact
chunk() {   # chunk RUN K N: chunk K of N of run RUN (repo acme/RUN), 4 events
  printf '{"repo":"acme/%s","run_id":"%s","target":"t","source":"s","chunk":%d,"chunks":%d,' \
    "$1" "$1" "$2" "$3"
  printf '"total_events":%d,"duration_ns":9,"truncated":false,' "$(( 4 * $3 ))"
  printf '"functions":[{"symbol":"main","stable_id":"s main","local":true},{"symbol":"f","stable_id":null,"local":false}],'
  printf '"events":[[1,%d,%d,0,"entry"],[1,%d,%d,1,"entry"],[2,%d,%d,1,"entry"],[1,%d,%d,1,"exit"]]}\n' \
    $(( $2*4 )) $(( $2*40 )) $(( $2*4+1 )) $(( $2*40+10 )) $(( $2*4+2 )) $(( $2*40+20 )) $(( $2*4+3 )) $(( $2*40+30 ))
}
{ for r in a b c; do for k in 0 1 2 3 4; do
    echo "SELECT fnt_file_chunk('$(chunk run-$r $k 5)');"; done; done; } | sql > "$tmp/filed"
expect "15 chunks filed" "$(printf '1\n%.0s' $(seq 15))" "$(cat "$tmp/filed")"
dump='.headers off
SELECT * FROM fn_trace_events ORDER BY run_id, seq_no;
SELECT * FROM fn_trace_runs ORDER BY run_id, chunk;
SELECT * FROM fn_trace_run_summary;
SELECT * FROM fnt_heat('"'"'run-b'"'"') ORDER BY key;
SELECT * FROM fn_trace_calls ORDER BY run_id, call_id;'
before=$(echo "$dump" | sql)
got=$(echo "SELECT json_extract(fnt_compact(), '\$.compacted', '\$.files_before', '\$.files_after');" | sql)
# per chunk an events, a runs and a calls file; after: per run one events
# and one calls file, per repo one runs file
expect "compacted 45 files into 9" '[1,45,9]' "$got"
expect "tables read the same" "$before" "$(echo "$dump" | sql)"
expect "refiling is still a no-op" "0" "$(echo "SELECT fnt_file_chunk('$(chunk run-c 3 5)');" | sql)"
expect "nothing left to compact" "nothing to compact: 9 files" "$("$FNT_BUILD/fnt" compact --warehouse "$wh")"
got=$(echo "SELECT json_extract(fnt_expire_snapshots(0), '\$.snapshots_expired', '\$.snapshots_kept');" | sql)
expect "expiry keeps only the newest snapshot" '[15,1]' "$got"
expect "tables read the same after expiry" "$before" "$(echo "$dump" | sql)"
got=$(printf "CREATE VIEW v AS SELECT fnt_compact();\nSELECT * FROM v;\n" | sql db.sqlite)
case "$got" in *"unsafe use of fnt_compact()"*) echo "ok   a view cannot call fnt_compact";;
  *) echo "FAIL view: $got"; fail=1;; esac
finish
