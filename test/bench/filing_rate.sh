#!/usr/bin/env bash
# filing_rate.sh -- how fast fnt_file_chunk files a big chunk, end to end
# through the sqlite3 shell, and how much of that is the JSON parse.
#   test/bench/filing_rate.sh [BUILD_DIR] [EVENTS] [REPEATS]
# Not run by ctest (timings are not pass/fail on a shared machine).
#
# For each repeat: a fresh warehouse, then the shell's .timer around
#   SELECT length(readfile(...))                 -- reading the file alone
#   SELECT fnt_file_chunk(readfile(...), 'none') -- the full parse, then the
#                                                   missing room fails it
#                                                   before the store is called
#   SELECT fnt_file_chunk(readfile(...))         -- parse + store filing
# and the events/s of the last two (best of the repeats).
set -euo pipefail
build="${1:-build}"
n="${2:-1000000}"
reps="${3:-3}"
command -v sqlite3 >/dev/null || { echo "sqlite3 shell not found" >&2; exit 1; }
[ -e "$build/fntrace.so" ] || { echo "no $build/fntrace.so" >&2; exit 1; }
build="$(cd "$build" && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/filing-rate.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# A chunk of n events on 8 threads over 2000 functions, with irregular
# times, in seq_no order (as importers write them).
/usr/bin/python3 - "$n" > "$tmp/chunk.json" <<'PY'
import json, random, sys
n = int(sys.argv[1]); rnd = random.Random(42); nf = 2000
funcs = [{"symbol": "ns::fn_%d(int, char const*)" % i,
          "stable_id": ("c acme/widget * fn_%d()." % i) if i % 3 else None,
          "local": i % 5 != 0} for i in range(nf)]
out = []; t = 1 << 40; stacks = [[] for _ in range(8)]
for s in range(n):
    th = rnd.randrange(8); st = stacks[th]; t += rnd.randrange(1, 400)
    if st and (len(st) > 30 or rnd.random() < 0.5):
        f = st.pop(); k = "exit" if rnd.random() < 0.95 else "tail_exit"
    else:
        f = rnd.randrange(nf); st.append(f); k = "entry"
    out.append('[%d,%d,%d,%d,"%s"]' % (1000 + th, s, t, f, k))
sys.stdout.write(json.dumps({
    "repo": "acme/widget", "commit": "9f1c2e0", "run_id": "bench-run",
    "ts_micros": 1764680000000000, "target": "widget_bench",
    "source": "xray-basic", "chunk": 0, "chunks": 1, "total_events": n,
    "duration_ns": t - (1 << 40), "truncated": False, "binaries": [],
    "functions": funcs, "events": []})[:-2] + ",".join(out) + "]}")
PY
bytes=$(stat -c %s "$tmp/chunk.json")
echo "chunk: $n events, $bytes bytes of JSON"

cat > "$tmp/bench.sql" <<SQL
.load $build/fntrace
SELECT fnt_open('wh') IS NULL;
.timer on
SELECT length(readfile('chunk.json'));
SELECT fnt_file_chunk(readfile('chunk.json'), 'none');
SELECT fnt_file_chunk(readfile('chunk.json'));
SQL
best_read=999; best_parse=999; best_file=999
for r in $(seq "$reps"); do
  rm -rf "$tmp/wh"
  out=$(cd "$tmp" && sqlite3 -batch :memory: < bench.sql 2>&1 || true)
  printf '%s\n' "$out" | grep -q "no such table: none" || { echo "$out" >&2; exit 1; }
  mapfile -t t < <(printf '%s\n' "$out" | sed -n 's/^Run Time: real \([0-9.]*\).*/\1/p')
  [ "${#t[@]}" -eq 3 ] || { echo "$out" >&2; exit 1; }
  filed=$(printf '%s\n' "$out" | grep -c '^1$' || true)
  [ "$filed" -eq 1 ] || { echo "$out" >&2; exit 1; }   # the filing returned 1
  echo "run $r: readfile ${t[0]} s, readfile+parse ${t[1]} s, readfile+parse+file ${t[2]} s"
  best_read=$(echo "$best_read ${t[0]}" | awk '{print ($2<$1)?$2:$1}')
  best_parse=$(echo "$best_parse ${t[1]}" | awk '{print ($2<$1)?$2:$1}')
  best_file=$(echo "$best_file ${t[2]}" | awk '{print ($2<$1)?$2:$1}')
done
awk -v n="$n" -v r="$best_read" -v p="$best_parse" -v f="$best_file" 'BEGIN {
  printf "best of runs: readfile %.3f s; parse %.3f s (%.1f M events/s); ", r, p-r, n/(p-r)/1e6
  printf "fnt_file_chunk(readfile()) %.3f s = %.2f M events/s end to end ", f, n/f/1e6
  printf "(%.2f M events/s without the readfile)\n", n/(f-r)/1e6
}'
