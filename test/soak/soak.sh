#!/usr/bin/env bash
# soak.sh -- many processes on one warehouse for a bounded time, with kill -9.
#
#   test/soak/soak.sh [--seconds N] [--build DIR]      (default 120 s, build/)
#   tools/test.sh --soak                               (runs this after the suite)
#
# Not part of ctest: it is long and its load depends on the machine.
#   - 4 writers (sqlite3 shells with the extension) file runs of 4 chunks
#     each, run after run; each writer's chunks are a pure function of
#     (writer, run, chunk), so a writer killed -9 mid-commit is restarted on
#     the same run and re-files it (already filed chunks must answer 0);
#   - a killer sends kill -9 to a random writer every 0.3-1.5 s;
#   - 4 readers check, each in one statement (one snapshot), that every
#     run's events equal the sum of its runs rows' events, that no events
#     exist without a runs row, and that no (run_id, chunk) appears twice;
#   - every ~15 s the warehouse is copied (catalog/ first, then metadata/,
#     then data/, so that the copy holds every file its snapshots list),
#     `fnt check` must find the copy sound, then a byte of its newest
#     catalog file and of a listed segment is flipped and `fnt check` must
#     exit 1 naming the file;
#   - at the end, with the writers done: exactly the chunks the writers
#     started are filed, each once, with exactly their events, no seq_no
#     twice in a run, and `fnt check --all` passes.
# Exit 0 when every check held; the last lines are the accounting.
set -uo pipefail
SECS=120
HERE="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$HERE/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECS="$2"; shift 2 ;;
    --build)   BUILD="$(cd "$2" && pwd)"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v sqlite3 >/dev/null || { echo "soak.sh: sqlite3 shell not found"; exit 77; }
[ -x "$BUILD/fnt" ] && [ -e "$BUILD/fntrace.so" ] || { echo "soak.sh: build $BUILD first"; exit 2; }

T="${FNT_TEST_TMP:-/tmp}/soak-$$"
W="$T/warehouse"
S="$T/state"
mkdir -p "$S"
cleanup() {
  touch "$S/stop" "$S/stop-killer"
  for p in $(jobs -p); do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
NW=4; NR=4; CHUNKS=4
DEADLINE=$(( $(date +%s) + SECS ))

q() {   # q: SQL on stdin, the warehouse open; one sqlite3 process
  { echo ".load $BUILD/fntrace"; echo "SELECT fnt_open('$W') IS NULL;"; cat; } \
    | env LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory: 2>&1 | sed 1d
}
nev() { echo $(( 20 + ($1*7 + $2*13 + $3*5) % 60 )); }   # events of (w, r, c)

chunkSql() {   # chunkSql W R C: the SELECT filing that chunk
  local w=$1 r=$2 c=$3 n i seq t k f ev="" sep=""
  n=$(nev "$w" "$r" "$c")
  for (( i=0; i<n; i++ )); do
    seq=$(( c*1000 + i )); t=$(( seq*10 )); f=$(( i % 3 ))
    if (( i % 2 == 0 )); then k=entry; else k=exit; fi
    ev+="$sep[$(( i % 2 + 1 )),$seq,$t,$f,\"$k\"]"; sep=","
  done
  printf "SELECT fnt_file_chunk('{\"repo\":\"soak/w%d\",\"run_id\":\"w%d-r%d\",\"target\":\"t\",\"source\":\"soak\",\"chunk\":%d,\"chunks\":%d,\"total_events\":0,\"duration_ns\":0,\"truncated\":false,\"functions\":[{\"symbol\":\"a\",\"stable_id\":\"s a\",\"local\":true},{\"symbol\":\"b\",\"local\":true},{\"symbol\":\"c\",\"local\":false}],\"events\":[%s]}');\n" \
    "$w" "$w" "$r" "$c" "$CHUNKS" "$ev"
}

writer() {   # writer W: files run after run until the deadline
  local w=$1 r=0 out rc
  while :; do
    [ "$(date +%s)" -ge "$DEADLINE" ] && return 0
    echo "$r" >> "$S/w$w.runs"
    while :; do     # until this run is filed whole (restarted after a kill)
      { echo ".load $BUILD/fntrace"; echo "SELECT fnt_open('$W') IS NULL;"
        for (( c=0; c<CHUNKS; c++ )); do chunkSql "$w" "$r" "$c"; done; } > "$S/w$w.sql"
      env LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory: < "$S/w$w.sql" > "$S/w$w.out" 2>&1 &
      echo "$! $BASHPID" > "$S/w$w.pid"
      wait $!; rc=$?
      rm -f "$S/w$w.pid"
      if [ $rc -eq 137 ]; then echo "$w $r" >> "$S/kills-seen"; continue; fi
      out=$(sed 1d "$S/w$w.out" | tr '\n' ' ')
      if [ $rc -ne 0 ] || ! [[ "$out" =~ ^([01]\ )+$ ]]; then
        echo "writer $w run $r: exit $rc: $out" >> "$S/failures"
        sleep 0.2; continue
      fi
      echo "$out" | tr ' ' '\n' | grep -c 1 >> "$S/w$w.filed" || true
      echo "$out" | tr ' ' '\n' | grep -c 0 >> "$S/w$w.refiled" || true
      break
    done
    r=$(( r + 1 ))
  done
}

killer() {
  while [ ! -e "$S/stop-killer" ]; do
    sleep "0.$(( RANDOM % 12 + 3 ))"
    local w=$(( RANDOM % NW )) pid parent
    read -r pid parent 2>/dev/null < "$S/w$w.pid" || continue
    # Only our writer's sqlite3 (its pid may have ended and been reused).
    [ -n "$pid" ] && [ "$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null)" = "$parent" ] \
      && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sqlite3 ] \
      && kill -9 "$pid" 2>/dev/null && echo "$w" >> "$S/kills"
  done
}

CONSIST="SELECT 'mismatch ' || r.run_id || ' runs ' || r.ev || ' events ' ||
         (SELECT count(*) FROM fn_trace_events e WHERE e.run_id = r.run_id)
  FROM (SELECT run_id, sum(events) ev FROM fn_trace_runs GROUP BY run_id) r
 WHERE r.ev != (SELECT count(*) FROM fn_trace_events e WHERE e.run_id = r.run_id)
UNION ALL
SELECT 'orphan events ' || count(*) FROM fn_trace_events
 WHERE run_id NOT IN (SELECT run_id FROM fn_trace_runs) HAVING count(*) > 0
UNION ALL
SELECT 'duplicate ' || run_id || ' chunk ' || chunk FROM fn_trace_runs
 GROUP BY run_id, chunk HAVING count(*) > 1;"

reader() {   # reader I: the consistency check, one statement, again and again
  local i=$1 out
  while [ ! -e "$S/stop" ]; do
    out=$(q <<<"$CONSIST")
    echo x >> "$S/r$i.reads"
    [ -n "$out" ] && echo "reader $i: $out" >> "$S/failures"
  done
}

corruptor() {
  local n=0 c rc out cat seg
  while [ ! -e "$S/stop-killer" ]; do
    sleep 15
    [ -e "$S/stop-killer" ] && break
    n=$(( n + 1 )); c="$T/copy$n"
    mkdir -p "$c"
    cp "$W/fntrace-warehouse" "$c/" 2>/dev/null
    cp -a "$W/catalog" "$c/"; cp -a "$W/metadata" "$c/"; cp -a "$W/data" "$c/"
    out=$("$BUILD/fnt" check -w "$c" 2>&1); rc=$?
    if [ $rc -ne 0 ]; then echo "copy $n: fnt check before damage: exit $rc: $(grep PROBLEM <<<"$out" | head -3)" >> "$S/failures"; continue; fi
    cat=$(cd "$c" && ls catalog/v* | sort | tail -1)
    seg=$(cd "$c" && find data -name '*.fnseg' | shuf -n 1)
    python3 - "$c/$seg" <<'PY'
import sys, os
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[len(b)//2] ^= 0x10
open(p, 'wb').write(bytes(b))
PY
    out=$("$BUILD/fnt" check -w "$c" --all 2>&1); rc=$?
    if grep -q "^unreferenced .*$seg" <<<"$out"; then
      echo "copy $n: the damaged segment was a stray file (not read)" >> "$S/corrupt-checks"
    elif [ $rc -ne 1 ] || ! grep "^PROBLEM" <<<"$out" | grep -qF "$seg"; then
      echo "copy $n: a flipped byte in $seg: fnt check exit $rc" >> "$S/failures"
    else
      echo "copy $n: $seg flagged" >> "$S/corrupt-checks"
    fi
    python3 - "$c/$cat" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[len(b)//2] ^= 0x10
open(p, 'wb').write(bytes(b))
PY
    out=$("$BUILD/fnt" check -w "$c" 2>&1); rc=$?
    if [ $rc -ne 1 ] || ! grep "^PROBLEM" <<<"$out" | grep -qF "$cat"; then
      echo "copy $n: a flipped byte in $cat: fnt check exit $rc" >> "$S/failures"
    else
      echo "copy $n: $cat flagged" >> "$S/corrupt-checks"
    fi
    rm -rf "$c"
  done
}

echo "soak: $SECS s, $NW writers, $NR readers, kill -9 of writers, warehouse $W"
q <<<"SELECT 1;" >/dev/null
# (bash reports each killed sqlite3 on stderr: into a log, not the terminal)
for (( w=0; w<NW; w++ )); do writer "$w" 2>>"$S/writers.log" & echo $! > "$S/writer$w.job"; done
for (( i=0; i<NR; i++ )); do reader "$i" & done
killer & KILLER=$!
corruptor & CORRUPTOR=$!

for (( w=0; w<NW; w++ )); do wait "$(cat "$S/writer$w.job")"; done
touch "$S/stop-killer"; wait "$KILLER" "$CORRUPTOR" 2>/dev/null
touch "$S/stop"; wait

# ---- the accounting ------------------------------------------------------
{
  echo "CREATE TEMP TABLE want(run_id TEXT, chunk INT, events INT);"
  echo "BEGIN;"
  for (( w=0; w<NW; w++ )); do
    for r in $(sort -nu "$S/w$w.runs"); do
      for (( c=0; c<CHUNKS; c++ )); do
        echo "INSERT INTO want VALUES('w$w-r$r', $c, $(nev "$w" "$r" "$c"));"
      done
    done
  done
  echo "COMMIT;"
  cat <<'SQL'
CREATE TEMP TABLE got AS SELECT run_id, chunk, count(*) n, sum(events) events FROM fn_trace_runs GROUP BY 1, 2;
SELECT 'missing ' || w.run_id || ' chunk ' || w.chunk FROM want w LEFT JOIN got g USING(run_id, chunk) WHERE g.n IS NULL;
SELECT 'extra ' || g.run_id || ' chunk ' || g.chunk FROM got g LEFT JOIN want w USING(run_id, chunk) WHERE w.events IS NULL;
SELECT 'filed ' || g.n || ' times ' || g.run_id || ' chunk ' || g.chunk FROM got g WHERE g.n != 1;
SELECT 'events ' || g.run_id || ' chunk ' || g.chunk || ': ' || g.events || ', want ' || w.events FROM got g JOIN want w USING(run_id, chunk) WHERE g.events != w.events;
SELECT 'run ' || run_id || ': ' || n || ' events in fn_trace_events, want ' || (SELECT sum(events) FROM want w WHERE w.run_id = e.run_id)
  FROM (SELECT run_id, count(*) n FROM fn_trace_events GROUP BY run_id) e
 WHERE n != (SELECT sum(events) FROM want w WHERE w.run_id = e.run_id);
SELECT 'seq_no twice ' || run_id || ' ' || seq_no FROM fn_trace_events GROUP BY run_id, seq_no HAVING count(*) > 1;
SELECT 'TOTAL ' || (SELECT count(*) FROM want) || ' chunks, ' || (SELECT sum(events) FROM want) || ' events wanted; '
  || (SELECT count(*) FROM fn_trace_runs) || ' runs rows, ' || (SELECT count(*) FROM fn_trace_events) || ' events filed';
SQL
} > "$S/account.sql"
acct=$(q < "$S/account.sql")
grep -v '^TOTAL ' <<<"$acct" | sed '/^$/d' >> "$S/failures"
checkOut=$("$BUILD/fnt" check -w "$W" --all 2>&1) || echo "final fnt check --all: $(grep PROBLEM <<<"$checkOut" | head -5)" >> "$S/failures"

kills=$(cat "$S/kills" 2>/dev/null | wc -l)
seen=$(cat "$S/kills-seen" 2>/dev/null | wc -l)
reads=$(cat "$S"/r*.reads 2>/dev/null | wc -l)
filed=$(cat "$S"/w*.filed 2>/dev/null | awk '{s+=$1} END{print s+0}')
refiled=$(cat "$S"/w*.refiled 2>/dev/null | awk '{s+=$1} END{print s+0}')
flagged=$(grep -c flagged "$S/corrupt-checks" 2>/dev/null || echo 0)
echo "soak: $(grep '^TOTAL' <<<"$acct")"
echo "soak: $kills kill -9 sent ($seen hit a filing process), $filed filings answered 1, $refiled answered 0 (re-filed after a kill), $reads consistent reads, $flagged corruptions flagged"
echo "soak: $(tail -1 <<<"$checkOut")"
if [ -s "$S/failures" ]; then
  echo "soak: FAILED"; sort "$S/failures" | uniq -c | head -30
  exit 1
fi
echo "soak: passed"
