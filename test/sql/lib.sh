# lib.sh -- what the shell tests share; source it with the test's name:
#   . "$(dirname "$0")/lib.sh" filing
# It checks the environment (FNT_BUILD, the sqlite3 shell: exit 77 when
# missing), makes a scratch folder $tmp removed at exit, names a warehouse
# $wh in it, and defines sql, expect and finish.
set -euo pipefail
: "${FNT_BUILD:?FNT_BUILD must name the build folder}"
command -v sqlite3 >/dev/null || { echo "sqlite3 shell not found"; exit 77; }

tmp="${FNT_TEST_TMP:-/tmp}/${1:-test}-sql-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
wh="$tmp/warehouse"
fail=0

# sql [DB]: the SQL on stdin through the sqlite3 shell (in $tmp, database DB,
# default :memory:) with the extension loaded and $wh open.  Errors go to
# the output, so a refused statement can be checked; $SQL_BAIL=1 stops at
# the first one.  $FNT_WAREHOUSE is unset: tests name their warehouse.
sql() {
  { echo ".load $FNT_BUILD/fntrace"
    echo "SELECT fnt_open('$wh') IS NULL;"
    cat; } | (cd "$tmp" && env -u FNT_WAREHOUSE LD_PRELOAD="${FNT_PRELOAD:-}" \
                sqlite3 -batch ${SQL_BAIL:+-bail} "${1:-:memory:}" 2>&1 || true) | sed 1d
}

# expect NAME WANT GOT
expect() {
  if [ "$2" != "$3" ]; then
    echo "FAIL $1"; echo "--- want"; printf '%s\n' "$2"; echo "--- got"; printf '%s\n' "$3"
    fail=1
  else
    echo "ok   $1"
  fi
}

# finish: the closing count line, and the exit status.
finish() {
  if [ "$fail" -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
  exit "$fail"
}

# spec_example NAME LOAD [RUNNER...]: the SPEC §4 example
# (test/install/spec_example.sql: file test/golden/chunk0.json twice, read
# it back, its heat) into a new warehouse, compared with
# spec_example.expected.  Through the sqlite3 shell with `.load LOAD`, or
# when RUNNER is given through `RUNNER SQL CHUNK WAREHOUSE` (a client).
spec_example() {
  local name="$1" load="$2" ex="${FNT_SOURCE:?}/test/install" w
  shift 2
  w=$(mktemp -d "$tmp/spec-XXXXXX")
  if [ $# -gt 0 ]; then
    got=$(env LD_PRELOAD="${FNT_PRELOAD:-}" "$@" "$ex/spec_example.sql" \
            "$FNT_SOURCE/test/golden/chunk0.json" "$w/warehouse" 2>&1 || true)
  else
    got=$(env -u FNT_WAREHOUSE LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch -bail :memory: \
            -cmd ".load $load" \
            -cmd ".parameter set :chunk \"readfile('$FNT_SOURCE/test/golden/chunk0.json')\"" \
            -cmd ".parameter set :warehouse \"'$w/warehouse'\"" \
            < "$ex/spec_example.sql" 2>&1 || true)
  fi
  expect "$name" "$(cat "$ex/spec_example.expected")" "$got"
}
