#!/usr/bin/env bash
# test_golden.sh -- a reader of today reads yesterday's files: the warehouse
# in test/golden/warehouse-v1 (format 1: two chunks merged by compaction,
# two profiles, no catalog/HEAD) must read exactly as
# test/golden/warehouse-v1.expected, pass `fnt check`, and keep filing
# idempotent.  Never regenerate the golden files to make this pass: a
# change of format gets a new version and a new golden warehouse beside.
set -euo pipefail
: "${FNT_BUILD:?FNT_BUILD must name the build folder}"
: "${FNT_SOURCE:?FNT_SOURCE must name the source folder}"
command -v sqlite3 >/dev/null || { echo "sqlite3 shell not found"; exit 77; }

golden="$FNT_SOURCE/test/golden"
tmp="${FNT_TEST_TMP:-/tmp}/golden-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
cp -r "$golden/warehouse-v1" "$tmp/wh"

sql() {
  { echo ".load $FNT_BUILD/fntrace"
    echo "SELECT fnt_open('$tmp/wh') IS NULL;"
    cat; } | env LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch 2>&1 | sed 1d
}

fail=0
sql < "$golden/queries.sql" > "$tmp/got"
if diff -u "$golden/warehouse-v1.expected" "$tmp/got"; then
  echo "ok   golden warehouse reads as expected"
else
  echo "FAIL golden warehouse reads differently"; fail=1
fi
if "$FNT_BUILD/fnt" check --warehouse "$tmp/wh" > "$tmp/check" 2>&1; then
  echo "ok   fnt check: $(tail -1 "$tmp/check")"
else
  echo "FAIL fnt check"; cat "$tmp/check"; fail=1
fi
got=$(printf "SELECT fnt_file_chunk(readfile('%s')), fnt_file_chunk(readfile('%s'));\n" \
        "$golden/chunk0.json" "$golden/chunk1.json" | sql)
if [ "$got" = "0|0" ]; then
  echo "ok   chunks merged by compaction are still 'already filed'"
else
  echo "FAIL refiling gave '$got'"; fail=1
fi
if [ $fail -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
