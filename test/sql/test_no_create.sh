#!/usr/bin/env bash
# test_no_create.sh -- only filing makes a warehouse: every other `fnt`
# subcommand, and a read through `fnt sql`, on a mistyped warehouse fails
# with exit 1 naming it and leaves nothing behind; fnt_open() refuses a
# non-empty folder that is not a warehouse.  The message names the folder
# once and says it does not exist.
. "$(dirname "$0")/lib.sh" no_create
fnt="$FNT_BUILD/fnt"
fntsql() { env -u FNT_WAREHOUSE LD_PRELOAD="${FNT_PRELOAD:-}" "$fnt" "$@"; }  # loads fntrace.so
typo="$tmp/typo"
for cmd in "ls" "heat run" "account run" "calls run" "stack run --at 0" \
           "diff a b" "compare --repo r c1 c2" "compact" "expire" "check" \
           "export-iceberg $tmp/ice" "timeline run"; do
  # shellcheck disable=SC2086
  st=0; out=$(env -u FNT_WAREHOUSE "$fnt" -w "$typo" $cmd 2>&1) || st=$?
  case "$out" in *"$typo"*"$typo"*) ok=0;;
    "fnt"*": $typo: not a fntrace warehouse (no such folder)") ok=1;; *) ok=0;; esac
  if [ "$st" -eq 1 ] && [ "$ok" -eq 1 ] && [ ! -e "$typo" ]; then
    echo "ok   fnt $cmd creates nothing"
  else
    echo "FAIL fnt $cmd (exit $st, exists: $([ -e "$typo" ] && echo yes || echo no)): $out"; fail=1
  fi
done
out=$(fntsql -w "$typo" sql 'SELECT count(*) FROM fn_trace_runs;' 2>&1 || true)
case "$out" in *"not a fntrace warehouse"*) ok=1;; *) ok=0;; esac
expect "fnt sql: a read names the missing warehouse and creates nothing" "1 no" \
  "$ok $([ -e "$typo" ] && echo yes || echo no)"
chunk='{"repo":"acme/x","run_id":"r","target":"t","source":"s","chunk":0,"chunks":1,"total_events":2,"duration_ns":1,"truncated":false,"functions":[{"symbol":"f","local":true}],"events":[[1,0,0,0,"entry"],[1,1,5,0,"exit"]]}'
got=$(fntsql -w "$typo" sql -batch -noheader "SELECT fnt_file_chunk('$chunk');" 2>&1)
expect "fnt sql: a filing makes it" "1 yes" "$got $([ -e "$typo/fntrace-warehouse" ] && echo yes || echo no)"
expect "and fnt ls reads it" "r" "$(env -u FNT_WAREHOUSE "$fnt" -w "$typo" ls --json | sed -n 's/.*"run_id": *"\([^"]*\)".*/\1/p')"
mkdir -p "$tmp/notes" && echo hello > "$tmp/notes/todo.txt"
got=$(printf "SELECT fnt_open('%s');\n" "$tmp/notes" | sql)
case "$got" in *"not empty"*) echo "ok   fnt_open refuses a folder of other things";;
  *) echo "FAIL fnt_open on a non-empty folder: $got"; fail=1;; esac
expect "which is left as it was" "todo.txt" "$(ls "$tmp/notes")"
finish
