#!/usr/bin/env bash
# test_import_perf_text.sh -- `fnt import-perf` of `perf script` text, no perf
# needed: test/perf/sample.txt is real perf 6.1 output (a --header block whose
# recorded command line spans three lines, a --call-graph dwarf recording with
# "(inlined)" frames and an unsymbolised binary, kernel page-fault chains, and
# +0x offsets), and test/perf/sample.expected its fn_profile rows, checked
# when it was made against an independent fold of the text.  Read back
# through the sqlite3 shell; then stdin, a re-import, and malformed copies
# (an error naming the line, exit 1, nothing filed).
set -euo pipefail
: "${FNT_BUILD:?}" "${FNT_SOURCE:?}" "${FNT_TEST_TMP:?}"
FNT="$FNT_BUILD/fnt"
SAMPLE="$FNT_SOURCE/test/perf/sample.txt"
T="$FNT_TEST_TMP/import_perf_text"
export TZ=UTC   # perf's "captured on" is local time

command -v sqlite3 >/dev/null || { echo "skip: sqlite3 not installed"; exit 77; }
rm -rf "$T"
mkdir -p "$T"
fail(){ echo "FAIL: $*" >&2; exit 1; }
q(){
  local wh=$1; shift
  { printf '.bail on\n.load %s/fntrace\n.mode tabs\n.headers off\n' "$FNT_BUILD"
    printf ".output /dev/null\nSELECT fnt_open('%s');\n.output stdout\n" "$wh"
    cat; } | LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory:
}
profile_of(){
  q "$1" <<<"SELECT 'run', target, ts_micros, samples, profile_ns, count(*) FROM fn_profile
               WHERE run_id = '$2' GROUP BY run_id;
             SELECT symbol, self_samples, total_samples, self_ns, total_ns FROM fn_profile
               WHERE run_id = '$2' ORDER BY symbol;"
}
nrows(){ q "$1" <<<"SELECT count(*) FROM fn_profile;"; }

WH="$T/wh"
"$FNT" import-perf --warehouse "$WH" "$SAMPLE" >"$T/import.out" || fail "import failed"
cat "$T/import.out"
RUN=$(sed -n 's/.*, run \(sample\.txt-[0-9a-f]\{16\}\): filed in .*/\1/p' "$T/import.out")
[ -n "$RUN" ] || fail "unexpected summary"
grep -q ": 55 samples, 29 symbols, profile_ns 27500000, run " "$T/import.out" \
  || fail "summary counts"
profile_of "$WH" "$RUN" >"$T/got.tsv"
diff -u "$FNT_SOURCE/test/perf/sample.expected" "$T/got.tsv" || fail "fn_profile differs from sample.expected"

# The same text on stdin: the same content hash, and the same rows.
"$FNT" import-perf --warehouse "$WH" - <"$SAMPLE" >"$T/stdin.out" || fail "stdin import failed"
cat "$T/stdin.out"
SRUN="stdin-${RUN#sample.txt-}"
grep -q "run $SRUN: filed" "$T/stdin.out" || fail "stdin run id is not $SRUN"
profile_of "$WH" "$SRUN" | diff -u "$FNT_SOURCE/test/perf/sample.expected" - || fail "stdin rows differ"

# A re-import files nothing.
before=$(nrows "$WH")
"$FNT" import-perf --warehouse "$WH" "$SAMPLE" >"$T/again.out" || fail "re-import failed"
grep -q "run $RUN: already filed" "$T/again.out" || fail "re-import did not say already filed"
[ "$(nrows "$WH")" = "$before" ] || fail "re-import changed fn_profile"

# Malformed copies: the error names the file and line; nothing is filed.
bad(){   # bad NAME LINE EXPECTED-MESSAGE-PREFIX  (the copy is made by the caller)
  local f="$T/$1"
  if "$FNT" import-perf --warehouse "$WH" "$f" >"$T/bad.out" 2>"$T/bad.err"; then
    fail "$1 was imported"
  fi
  cat "$T/bad.err"
  grep -qF "fnt import-perf: $f:$2: $3" "$T/bad.err" || fail "$1: expected '$f:$2: $3'"
}
awk 'NR==120 { print "garbage here" } { print }' "$SAMPLE" >"$T/garbage.txt"
bad garbage.txt 120 "expected"
# a frame without a sample: drop the header line of the sample at 'first'
first=$(grep -n '^inl ' "$SAMPLE" | sed -n 2p | cut -d: -f1)
awk -v n="$first" 'NR != n' "$SAMPLE" >"$T/orphan.txt"
bad orphan.txt "$first" "expected a sample header"
sed '0,/ cpu-clock:/s// page-faults:/' "$SAMPLE" >"$T/mixed.txt"
bad mixed.txt "$(grep -n ' cpu-clock:' "$SAMPLE" | sed -n 2p | cut -d: -f1)" \
    "sample of event 'cpu-clock' in a profile of 'page-faults'"
[ "$(nrows "$WH")" = "$before" ] || fail "a malformed import filed something"
echo "test_import_perf_text: ok"
