#!/usr/bin/env bash
# test_compact.sh -- fnt_compact() through the sqlite3 shell: many small
# chunks merged in one commit, every table reads the same after, filing stays
# idempotent, a view cannot call it (DIRECTONLY), `fnt compact` agrees.
set -euo pipefail
: "${FNT_BUILD:?FNT_BUILD must name the build folder}"
command -v sqlite3 >/dev/null || { echo "sqlite3 shell not found"; exit 77; }
tmp="${FNT_TEST_TMP:-/tmp}/compact-sql-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
wh="$tmp/wh"
fail=0
sql() {
  { echo ".load $FNT_BUILD/fntrace"; echo "SELECT fnt_open('$wh') IS NULL;"; cat; } \
    | { env LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch "${1:-:memory:}" 2>&1 || true; } | sed 1d
}
check() {   # check NAME WANT GOT
  if [ "$2" = "$3" ]; then echo "ok   $1"; else
    echo "FAIL $1"; echo "--- want"; printf '%s\n' "$2"; echo "--- got"; printf '%s\n' "$3"; fail=1; fi
}
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
check "15 chunks filed" "$(printf '1\n%.0s' $(seq 15))" "$(cat "$tmp/filed")"
dump='.headers off
SELECT * FROM fn_trace_events ORDER BY run_id, seq_no;
SELECT * FROM fn_trace_runs ORDER BY run_id, chunk;
SELECT * FROM fn_trace_run_summary;
SELECT * FROM fnt_heat('"'"'run-b'"'"') ORDER BY key;'
before=$(echo "$dump" | sql)
got=$(echo "SELECT json_extract(fnt_compact(), '\$.compacted', '\$.files_before', '\$.files_after');" | sql)
check "compacted 30 files into 6" '[1,30,6]' "$got"
check "tables read the same" "$before" "$(echo "$dump" | sql)"
check "refiling is still a no-op" "0" "$(echo "SELECT fnt_file_chunk('$(chunk run-c 3 5)');" | sql)"
check "nothing left to compact" "nothing to compact: 6 files" "$("$FNT_BUILD/fnt" compact --warehouse "$wh")"
got=$(printf "CREATE VIEW v AS SELECT fnt_compact();\nSELECT * FROM v;\n" | sql "$tmp/db.sqlite")
case "$got" in *"unsafe use of fnt_compact()"*) echo "ok   a view cannot call fnt_compact";;
  *) echo "FAIL view: $got"; fail=1;; esac
if [ $fail -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
