#!/usr/bin/env bash
# test_golden.sh -- a reader of today reads yesterday's files: the warehouse
# in test/golden/warehouse-v1 (format 1: two chunks merged by compaction,
# two profiles, no catalog/HEAD) must read exactly as
# test/golden/warehouse-v1.expected, pass `fnt check`, keep filing
# idempotent, and accept new commits (format-3 metadata beside format-1
# files: filing, compaction, check, expire); test/golden/warehouse-v3-meta
# (format 3, 20 snapshots) likewise; and test/golden/warehouse-v3-calls
# (format 3, a run's calls in three files) likewise (see below).  Never regenerate the golden files to make this pass: a
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

sql() {   # statements on stdin, against ${WH:-$tmp/wh}
  { echo ".load $FNT_BUILD/fntrace"
    echo "SELECT fnt_open('${WH:-$tmp/wh}') IS NULL;"
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
# New commits on the old warehouse: a new run filed (its manifest and
# snapshot file are format 3, the old manifests stay listed as they are),
# then compacted (which rewrites old entries into a format-3 manifest).
sed 's/run-2026-12-02-0001/run-new-0001/' "$golden/chunk0.json" > "$tmp/new0.json"
sed 's/run-2026-12-02-0001/run-new-0001/' "$golden/chunk1.json" > "$tmp/new1.json"
got=$(printf "SELECT fnt_file_chunk(readfile('%s')), fnt_file_chunk(readfile('%s'));
SELECT count(*) FROM fn_trace_events WHERE run_id='run-new-0001';
SELECT count(*) FROM fn_trace_events WHERE run_id='run-2026-12-02-0001';\n" \
        "$tmp/new0.json" "$tmp/new1.json" | sql | tr '\n' ' ')
old=$(grep -c '' "$tmp/got")
versions() {   # the format version of each metadata file, as "magic:version"
  for f in "$tmp"/wh/metadata/*.fnman "$tmp"/wh/catalog/v*; do
    printf '%s:%d\n' "$(head -c 8 "$f")" "$(od -An -tu1 -j8 -N1 "$f")"
  done | sort | uniq -c | tr -s ' ' | tr '\n' ';'
}
# the version this build writes, from "fnt X (format N)"
cur=$("$FNT_BUILD/fnt" --version | sed -n 's/.*(format \([0-9]*\)).*/\1/p')
if [ "$got" = "1|1 6 6 " ] && versions | grep -q 'FNTMANI1:1' && versions | grep -q "FNTMANI1:$cur" \
   && versions | grep -q "FNTCATL1:$cur" && "$FNT_BUILD/fnt" check --warehouse "$tmp/wh" >/dev/null 2>&1; then
  echo "ok   new commits on the format-1 warehouse: $(versions)"
else
  echo "FAIL filing into the format-1 warehouse gave '$got', $(versions)"; fail=1
fi
"$FNT_BUILD/fnt" -q compact --warehouse "$tmp/wh" >/dev/null
sql < "$golden/queries.sql" > "$tmp/after"
if "$FNT_BUILD/fnt" check --warehouse "$tmp/wh" > "$tmp/check" 2>&1 \
   && [ "$(grep -c 'run-2026-12-02-0001' "$tmp/after")" = "$(grep -c 'run-2026-12-02-0001' "$tmp/got")" ] \
   && [ "$(grep -c '' "$tmp/after")" -gt "$old" ]; then
  echo "ok   compacted after the new commits, reads the old run as before, fnt check clean"
else
  echo "FAIL after compaction"; cat "$tmp/check"; diff "$tmp/got" "$tmp/after" | head; fail=1
fi
# A warehouse of format 3 with many snapshots (test/golden/warehouse-v3-meta:
# the same two chunks compacted, then 17 runs of one chunk, by a format-3
# build: snapshot files holding their entries, merged manifests) reads
# exactly as that build read it, passes `fnt check`, and takes new commits
# (metadata of today's format beside) and a compaction.
cp -r "$golden/warehouse-v3-meta" "$tmp/whm"
WH="$tmp/whm" sql < "$golden/queries.sql" > "$tmp/gotm"
if diff -u "$golden/warehouse-v3-meta.expected" "$tmp/gotm" \
   && "$FNT_BUILD/fnt" check --warehouse "$tmp/whm" >/dev/null 2>&1; then
  echo "ok   format-3 warehouse of 20 snapshots reads as expected, fnt check clean"
else
  echo "FAIL format-3 warehouse of 20 snapshots reads differently"; fail=1
fi
got=$(printf "SELECT fnt_file_chunk(readfile('%s')), fnt_file_chunk(readfile('%s'));
SELECT count(*) FROM fn_trace_events WHERE run_id='run-new-0001';\n" \
        "$tmp/new0.json" "$tmp/new1.json" | WH="$tmp/whm" sql | tr '\n' ' ')
mversions=$(for f in "$tmp"/whm/catalog/v*; do od -An -tu1 -j8 -N1 "$f"; done | sort -u | tr -s ' \n' ' ')
"$FNT_BUILD/fnt" -q compact --warehouse "$tmp/whm" >/dev/null
WH="$tmp/whm" sql < "$golden/queries.sql" > "$tmp/afterm"
if [ "$got" = "1|1 6 " ] && [ "$mversions" = " 3 $cur " ] \
   && "$FNT_BUILD/fnt" check --warehouse "$tmp/whm" >/dev/null 2>&1 \
   && [ "$(grep -c 'run-v3-0017' "$tmp/afterm")" = "$(grep -c 'run-v3-0017' "$tmp/gotm")" ] \
   && [ "$(grep -c 'run-new-0001' "$tmp/afterm")" -gt 0 ]; then
  echo "ok   new commits and a compaction on it: snapshot files of versions$mversions"
else
  echo "FAIL filing into the format-3 warehouse of 20 snapshots gave '$got', versions$mversions"; fail=1
fi
# A warehouse of format 3 (test/golden/warehouse-v3-calls: a run's chunks 0, 2
# and 1 filed in that order by a format-3 build, its calls in three files
# whose function tables lie in their footers) reads exactly as that build
# read it.  Then its last chunk, filed now, adds a version-4 calls file
# beside them, and every answer (calls, heat, account, call graph, flames,
# timeline) equals what the format-3 build gave after filing it itself;
# so it does once `fnt compact` has rewritten the files.
cp -r "$golden/warehouse-v3-calls" "$tmp/whc"
WH="$tmp/whc" sql < "$golden/queries-v3-calls.sql" > "$tmp/gotc"
if diff -u "$golden/warehouse-v3-calls.expected" "$tmp/gotc"; then
  echo "ok   format-3 warehouse with calls reads as expected"
else
  echo "FAIL format-3 warehouse reads differently"; fail=1
fi
got=$(printf "SELECT fnt_file_chunk(readfile('%s'));\n" "$golden/v3-calls-chunk3.json" | WH="$tmp/whc" sql)
WH="$tmp/whc" sql < "$golden/queries-v3-calls.sql" > "$tmp/afterc"
if [ "$got" = 1 ] && diff -u "$golden/warehouse-v3-calls-after.expected" "$tmp/afterc"; then
  echo "ok   a chunk filed into it: version-3 and version-4 calls files read as one run"
else
  echo "FAIL filing into the format-3 warehouse gave '$got'"; fail=1
fi
"$FNT_BUILD/fnt" -q compact --warehouse "$tmp/whc" >/dev/null
WH="$tmp/whc" sql < "$golden/queries-v3-calls.sql" > "$tmp/compactc"
if diff -u "$golden/warehouse-v3-calls-after.expected" "$tmp/compactc" \
   && "$FNT_BUILD/fnt" check --warehouse "$tmp/whc" > "$tmp/checkc" 2>&1; then
  echo "ok   compacted, reads the same, fnt check clean"
else
  echo "FAIL format-3 warehouse after compaction"; cat "$tmp/checkc"; fail=1
fi
if [ $fail -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
