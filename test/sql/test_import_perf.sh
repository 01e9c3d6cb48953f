#!/usr/bin/env bash
# test_import_perf.sh -- `fnt import-perf` against `perf report`, for real:
# records a CPU-bound python3 run with `perf record -e cpu-clock -F 2000 -g`,
# imports the perf.data, reads fn_profile back through the sqlite3 shell with
# build/fntrace.so loaded, and compares per symbol with `perf report --stdio
# --sort symbol,dso` (--no-children: self samples and periods, exactly;
# --children: total, to perf's two decimals; see test/perf/compare.py).
# Then: the same recording as `perf script` text on stdin gives the same
# rows; a re-import files nothing; malformed text (an error with the line
# number) and a truncated perf.data file nothing; a room sets stable_ids.
set -euo pipefail
: "${FNT_BUILD:?}" "${FNT_SOURCE:?}" "${FNT_TEST_TMP:?}"
FNT="$FNT_BUILD/fnt"
CMP="$FNT_SOURCE/test/perf/compare.py"
T="$FNT_TEST_TMP/import_perf"
FIELDS=comm,tid,time,period,event,ip,sym,dso

for tool in perf sqlite3 /usr/bin/python3; do
  command -v "$tool" >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
rm -rf "$T"
mkdir -p "$T"
if ! perf record -q -e cpu-clock -F 2000 -g -o "$T/probe.data" -- true >/dev/null 2>"$T/probe.err"; then
  cat "$T/probe.err"
  echo "skip: perf record is not permitted here (kernel.perf_event_paranoid?)"
  exit 77
fi

fail(){ echo "FAIL: $*" >&2; exit 1; }
# The sqlite3 shell with the extension loaded and warehouse $1 open; SQL on stdin.
q(){
  local wh=$1; shift
  { printf '.bail on\n.load %s/fntrace\n.mode tabs\n.headers off\n' "$FNT_BUILD"
    printf ".output /dev/null\nSELECT fnt_open('%s');\n.output stdout\n" "$wh"
    cat; } | LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory:
}
rows_of(){
  q "$1" <<<"SELECT symbol, self_samples, total_samples, self_ns, total_ns, samples, profile_ns
               FROM fn_profile WHERE run_id = '$2' ORDER BY symbol;"
}
nruns(){ q "$1" <<<"SELECT count(DISTINCT run_id) || ' ' || count(*) FROM fn_profile;"; }

# --- record: json, zlib and sort in python3, ~1.5 s of CPU ----------------
perf record -q -e cpu-clock -F 2000 -g -o "$T/perf.data" -- /usr/bin/python3 -c '
import json, zlib
d = [{"k": i, "v": str(i) * 3} for i in range(60000)]
for r in range(2):
    s = json.dumps(d)
    x = json.loads(s)
    z = zlib.compress(s.encode(), 9)
    y = sorted(x, key=lambda e: e["v"][::-1])
print(len(z), y[0]["k"])' >/dev/null 2>"$T/record.err" || { cat "$T/record.err"; fail "perf record"; }

# --- import and compare with perf report ----------------------------------
WH="$T/wh"
"$FNT" import-perf --warehouse "$WH" --repo test/perf --commit abc123 "$T/perf.data" \
  >"$T/import.out" || fail "import of perf.data failed"
cat "$T/import.out"
grep -Eq '^.*perf\.data: [0-9]+ samples, [0-9]+ symbols(, [0-9]+ samples with no call chain)?, profile_ns [0-9]+, run perf\.data-[0-9a-f]{16}: filed in ' \
  "$T/import.out" || fail "unexpected summary"
RUN=$(sed -n 's/.*, run \(perf\.data-[0-9a-f]*\): filed.*/\1/p' "$T/import.out")
rows_of "$WH" "$RUN" >"$T/rows.tsv"
[ -s "$T/rows.tsv" ] || fail "no fn_profile rows for $RUN"
for mode in no-children children; do
  f=overhead,sample,period,sym,dso
  [ $mode = children ] && f=overhead_children,$f
  perf report --no-inline -i "$T/perf.data" --stdio --$mode --sort symbol,dso -g none \
       --percent-limit 0 -F "$f" -t $'\x1f' >"$T/report-$mode.txt" 2>"$T/report.err" \
    || { cat "$T/report.err"; fail "perf report --$mode"; }
done
/usr/bin/python3 "$CMP" "$T/report-no-children.txt" "$T/report-children.txt" "$T/rows.tsv" \
  || fail "fn_profile differs from perf report"

# The run's own columns.
meta=$(q "$WH" <<<"SELECT DISTINCT repo, \"commit\", target, stable_id IS NULL, ts_micros
                     FROM fn_profile WHERE run_id = '$RUN';")
IFS=$'\t' read -r repo commit target nostable ts <<<"$meta"
[ "$(wc -l <<<"$meta")" = 1 ] || fail "run columns differ between rows: $meta"
[ "$repo/$commit/$target/$nostable" = "test/perf/abc123/python3/1" ] \
  || fail "repo/commit/target/stable_id: $repo/$commit/$target/$nostable"
mtime=$(stat -c %Y "$T/perf.data")
# perf's "captured on" is the file's mtime to the second.
[ $(( ts / 1000000 - mtime )) -ge -1 ] && [ $(( ts / 1000000 - mtime )) -le 1 ] \
  || fail "ts_micros $ts is not the recording time (mtime $mtime)"

# --- a re-import files nothing --------------------------------------------
before=$(nruns "$WH")
"$FNT" import-perf --warehouse "$WH" --repo test/perf --commit abc123 "$T/perf.data" \
  >"$T/again.out" || fail "re-import failed"
cat "$T/again.out"
grep -q ": already filed in " "$T/again.out" || fail "re-import did not say already filed"
[ "$(nruns "$WH")" = "$before" ] || fail "re-import changed fn_profile: $before -> $(nruns "$WH")"

# --- the same recording as text on stdin: the same rows; import speed -----
perf script --no-inline -F "$FIELDS" -i "$T/perf.data" >"$T/script.txt" 2>/dev/null
for i in $(seq 32); do cat "$T/script.txt"; done >"$T/script32.txt"
"$FNT" import-perf --warehouse "$WH" --repo test/perf --run-id from-stdin - \
  <"$T/script.txt" >"$T/stdin.out" || fail "import from stdin failed"
cat "$T/stdin.out"
rows_of "$WH" from-stdin >"$T/rows-stdin.tsv"
# Samples whose chain perf printed empty get their leaf from a second
# `perf script -G` for a perf.data only: text has no more to give.
nempty=$(awk '/^[^ \t#]/ { if (h) n++; h=1; next } /^[ \t]+[0-9a-f]+ / { h=0 } /^$/ { if (h) n++; h=0 }
              END { if (h) n++; print n+0 }' "$T/script.txt")
if [ "$nempty" = 0 ]; then
  diff "$T/rows.tsv" "$T/rows-stdin.tsv" >/dev/null || fail "stdin text gives other rows than perf.data"
else
  echo "$nempty samples with an empty call chain"
  grep -q ", $nempty samples with no call chain" "$T/import.out" || fail "summary misses $nempty empty chains"
  selfs(){ awk -F'\t' '{ s += $2 } END { print s, $6, $7 }' "$1"; }
  read -r s1 n1 p1 <<<"$(selfs "$T/rows.tsv")"; read -r s2 n2 p2 <<<"$(selfs "$T/rows-stdin.tsv")"
  [ "$n1 $p1" = "$n2 $p2" ] && [ "$s1" = "$n1" ] && [ $((s2 + nempty)) = "$s1" ] \
    || fail "stdin text: self samples $s2 + $nempty empty != $s1 (samples $n1/$n2)"
fi
"$FNT" import-perf --warehouse "$T/wh-speed" --run-id speed "$T/script32.txt" >"$T/speed.out" \
  || fail "import of the 32-fold text failed"
lines=$(wc -l <"$T/script32.txt")
secs=$(sed -n 's/.* filed in \([0-9.]*\) s$/\1/p' "$T/speed.out")
echo "speed: $lines lines of perf script text ($(( $(stat -c %s "$T/script32.txt") / 1024 )) KiB) imported in $secs s"

# --- malformed text and a truncated perf.data file nothing ----------------
before=$(nruns "$WH")
{ head -n 40 "$T/script.txt"; printf '\nthis is not a sample header\n'; } >"$T/bad.txt"
if "$FNT" import-perf --warehouse "$WH" "$T/bad.txt" >"$T/bad.out" 2>"$T/bad.err"; then
  fail "malformed text was imported"
fi
cat "$T/bad.err"
grep -q "^fnt import-perf: $T/bad.txt:42: expected a sample header" "$T/bad.err" \
  || fail "malformed text: no line number in the error"
head -c 20000 "$T/perf.data" >"$T/trunc.data"
if "$FNT" import-perf --warehouse "$WH" "$T/trunc.data" >"$T/trunc.out" 2>"$T/trunc.err"; then
  fail "a truncated perf.data was imported"
fi
grep -q "trunc.data" "$T/trunc.err" || fail "truncated perf.data: error does not name the file"
[ "$(nruns "$WH")" = "$before" ] || fail "a failed import filed something"

# --- a room gives stable_ids ----------------------------------------------
top=$(sort -t$'\t' -k3,3nr "$T/rows.tsv" | sed -n '1,2p' | cut -f1)   # sed reads all: no SIGPIPE under pipefail
{ echo "# symbol<TAB>stable_id"
  n=0; while IFS= read -r sym; do n=$((n+1)); printf '%s\tc test/perf * f%d().\n' "$sym" "$n"; done <<<"$top"
} >"$T/room.tsv"
"$FNT" import-perf --warehouse "$WH" --repo test/perf --run-id with-room --room "$T/room.tsv" \
  "$T/script.txt" >"$T/room.out" || fail "import with a room failed"
cat "$T/room.out"
grep -q "(2 with a stable_id)" "$T/room.out" || fail "room: summary does not count 2 stable_ids"
got=$(q "$WH" <<<"SELECT count(*), group_concat(stable_id, '|') FROM
         (SELECT stable_id FROM fn_profile WHERE run_id = 'with-room' AND stable_id IS NOT NULL
          ORDER BY stable_id);")
[ "$got" = $'2\tc test/perf * f1().|c test/perf * f2().' ] || fail "room stable_ids: $got"

# --- usage -----------------------------------------------------------------
"$FNT" import-perf --help | grep -q "^example:" || fail "--help has no example"
set +e
"$FNT" import-perf --bogus x "$T/perf.data" >/dev/null 2>&1; [ $? = 2 ] || fail "unknown option: not exit 2"
"$FNT" import-perf --warehouse "$WH" "$T/missing.data" 2>"$T/missing.err"; [ $? = 1 ] || fail "missing file: not exit 1"
set -e
grep -q "missing.data: No such file" "$T/missing.err" || fail "missing file: unclear error"
echo "test_import_perf: ok"
