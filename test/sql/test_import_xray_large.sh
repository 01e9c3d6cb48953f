#!/usr/bin/env bash
# test_import_xray_large.sh -- `fnt import-xray` streams: generated XRay
# logs (test/xray/gen_xray_log.c: 8 threads whose per-thread buffers are
# written out of time order) are imported and checked:
#   - order: small basic and FDR logs, every event against an independent
#     reading of the log (test/xray/xray_order.py);
#   - memory: 20M-event basic (640 MB) and FDR (160 MB) logs, each imported
#     with its peak RSS asserted <= 64 MiB and no more than a tenth of the
#     log's, every event filed (counts, the heat's calls = the log's
#     entries); the logs are deleted after;
#   - import-perf, which folds `perf script` text as it reads it: 300,000
#     samples (108 MB of text) under the same bound.
# The ASan build imports 2M-event logs and asserts no RSS (ASan's shadow
# memory and quarantine are not the importer's; 20M events there take
# minutes).
: "${FNT_SOURCE:?}"
. "$FNT_SOURCE/test/sql/import_lib.sh" import_xray_large clang
if ! clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -pthread \
     -o "$T/prog" "$FNT_SOURCE/test/xray/prog.c" 2>"$T/clang.err"; then
  cat "$T/clang.err"
  grep -q 'xray' "$T/clang.err" && { echo "skip: no XRay runtime for clang"; exit 77; }
  exit 1
fi
clang -O2 -o "$T/gen" "$FNT_SOURCE/test/xray/gen_xray_log.c"

# The prog's map has 10 functions: the logs use ids 1..10, with every kind
# of event for each, which prog's sleds do not all allow: the logs are not
# prog's own, so they are imported with --force (binary_check.h).
FUNCS=10

# --- order, on small logs ------------------------------------------------
for mode in basic fdr; do
  "$T/gen" $mode 300000 8 $FUNCS "$T/small-$mode" >/dev/null
  "$FNT" import-xray --warehouse "$WH" --chunk-events 70000 --force --binary "$T/prog" \
         "$T/small-$mode" >/dev/null || fail "import of small-$mode"
  q <<<"SELECT thread, seq_no, t_ns, kind, symbol FROM fn_trace_events
        WHERE run_id = 'small-$mode' ORDER BY seq_no;" >"$T/small-$mode.events"
  /usr/bin/python3 "$FNT_SOURCE/test/xray/xray_order.py" "$T/small-$mode" "$T/small-$mode.events" \
    || fail "small-$mode: events out of the documented order"
done

# --- memory, on 20M-event logs ------------------------------------------
# In chunks of 100,000 events: since the store derives the calls of each
# chunk as it files it (store/derive.c), filing one chunk of 1M events takes
# ~90 MiB by itself; the bound here is the importer's: its memory must not
# grow with the log (a 2M-event log against a 20M-event one) and stay under
# 64 MiB.
N=20000000
[ -n "${FNT_PRELOAD:-}" ] && N=2000000
LIMIT_KB=$((64 * 1024))
WH_MAIN=$WH
for mode in basic fdr; do
  # a warehouse each: 220 chunks in one repo stay below the store's automatic
  # compaction (256 files), whose memory is not the importer's
  WH="$T/wh-$mode"
  log="$T/big-$mode"
  "$T/gen" $mode $((N / 10)) 8 $FUNCS "$log" >/dev/null
  rss_small=$(peak_rss_kb "$FNT" import-xray --warehouse "$WH" --chunk-events 100000 --force \
                --run-id "tenth-$mode" --binary "$T/prog" "$log") || fail "import of tenth-$mode"
  entries=$("$T/gen" $mode $N 8 $FUNCS "$log")
  rss=$(peak_rss_kb "$FNT" import-xray --warehouse "$WH" --chunk-events 100000 --force --binary "$T/prog" "$log") \
    || fail "import of big-$mode"
  echo "big-$mode: $N events, $(stat -c %s "$log") bytes, peak RSS $rss KiB ($rss_small KiB for a tenth)"
  rm -f "$log"
  if [ -z "${FNT_PRELOAD:-}" ]; then
    [ "$rss" -le "$LIMIT_KB" ] || fail "big-$mode: peak RSS $rss KiB > $LIMIT_KB KiB"
    [ "$rss" -le $((rss_small + 8192)) ] || fail "big-$mode: peak RSS $rss KiB grew with the log ($rss_small KiB for a tenth)"
  fi
  got=$(q <<<"SELECT chunks_filed, chunks, events, total_events, threads FROM fn_trace_run_summary WHERE run_id = 'big-$mode';")
  chunks=$(( (N + 99999) / 100000 ))
  want=$(printf '%s\t%s\t%s\t%s\t8' $chunks $chunks $N $N)
  [ "$got" = "$want" ] || fail "big-$mode: run summary '$got', want '$want'"
  got=$(q <<<"SELECT sum(calls) FROM fnt_heat('big-$mode');")
  [ "$got" = "$entries" ] || fail "big-$mode: $got calls in the heat, the log has $entries entries"
done
WH=$WH_MAIN

# --- import-perf: `perf script` text larger than the bound --------------
/usr/bin/python3 - "$T/part.txt" <<'PY'
import random, sys
random.seed(1)
out = []
for s in range(1000):
    out.append('widget %d %.6f:     500000 cpu-clock:ppp:' % (4000 + s % 4, 100 + s / 2000))
    for d in range(random.randint(3, 12)):
        out.append('\t    %x fn_%d+0x%x (/usr/bin/widget)' % (0x401000 + d * 16, random.randrange(200), d * 4))
    out.append('')
open(sys.argv[1], 'w').write('\n'.join(out) + '\n')
PY
for i in $(seq 300); do cat "$T/part.txt"; done >"$T/perf-big.txt"
rss=$(peak_rss_kb "$FNT" import-perf --warehouse "$WH" --run-id perf-big "$T/perf-big.txt") \
  || fail "import-perf of perf-big.txt"
echo "perf-big.txt: $(stat -c %s "$T/perf-big.txt") bytes, peak RSS $rss KiB"
rm -f "$T/perf-big.txt"
if [ -z "${FNT_PRELOAD:-}" ]; then
  [ "$rss" -le "$LIMIT_KB" ] || fail "perf-big.txt: peak RSS $rss KiB > $LIMIT_KB KiB"
fi
got=$(q <<<"SELECT count(*), sum(self_samples) FROM fn_profile WHERE run_id = 'perf-big';")
[ "$got" = "$(printf '200\t300000')" ] || fail "perf-big: got '$got', want 200 symbols and 300000 samples"
echo "ok"
