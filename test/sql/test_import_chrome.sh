#!/usr/bin/env bash
# test_import_chrome.sh -- `fnt import-chrome`, for real:
#   - clang -ftime-trace on three project source files writes three Chrome
#     traces (object form); each is imported and its heat (fnt_heat through
#     the sqlite3 shell) checked against a reference computed from the JSON
#     alone (test/chrome/chrome_heat.py), and its event count;
#   - the three merged into one array-form trace (three pids): threads
#     numbered 1..n, the heat again;
#   - a hand-written trace with what clang does not write: B/E, fractional
#     µs, zero-length and identical X, escapes, ignored phases, an array
#     cut short (no closing bracket, a trailing comma);
#   - bad traces: an error naming the event (or the byte), nothing filed;
#   - a re-import files nothing;
#   - a generated 1M-event trace (80 MB, written in end order as clang
#     does) whose sort spills to disk: exact heat, peak RSS <= 64 MiB
#     (asserted in the Release build only: ASan's own memory is not ours).
: "${FNT_SOURCE:?}"
. "$FNT_SOURCE/test/sql/import_lib.sh" import_chrome clang
REF="$FNT_SOURCE/test/chrome/chrome_heat.py"

heat_ok(){   # RUN JSON: fnt_heat of RUN against the reference from JSON
  q <<<"SELECT key, inclusive_ns, self_ns, calls FROM fnt_heat('$1');" >"$T/$1.heat"
  /usr/bin/python3 "$REF" "$2" "$T/$1.heat" || fail "$1: heat differs from the JSON's"
}
count_x(){ /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
print(sum(1 for e in ev if e.get("ph") == "X"))' "$1"; }

"$FNT" import-chrome --help | grep -q "clang -ftime-trace" || fail "--help has no example"

# --- real traces: clang -ftime-trace on project files ---------------------
for src in store/codec.c store/segment_write.c tools/chrome_json.c; do
  name=$(basename "$src" .c)
  clang -ftime-trace -ftime-trace-granularity=0 -O2 -c -I"$FNT_SOURCE/store" \
        -o "$T/$name.o" "$FNT_SOURCE/$src"
  [ -s "$T/$name.json" ] || fail "clang wrote no $name.json"
  "$FNT" import-chrome --warehouse "$WH" --repo test/chrome --chunk-events 2000 \
         "$T/$name.json" >"$T/$name.out" || { cat "$T/$name.out"; fail "import of $name.json"; }
  cat "$T/$name.out"
  heat_ok "$name" "$T/$name.json"
  x=$(count_x "$T/$name.json")
  got=$(q <<<"SELECT events, total_events, source, chunks_filed, chunks FROM fn_trace_run_summary WHERE run_id = '$name';")
  chunks=$(( (2*x + 1999) / 2000 ))
  [ "$got" = "$(printf '%s\t%s\tchrome\t%s\t%s' $((2*x)) $((2*x)) $chunks $chunks)" ] \
    || fail "$name: run summary '$got' ($x X events)"
done

# a re-import files nothing
"$FNT" import-chrome --warehouse "$WH" --repo test/chrome --chunk-events 2000 \
       "$T/codec.json" >"$T/again.out"
grep -Eq ": 0 filed, [0-9]+ already filed" "$T/again.out" \
  || { cat "$T/again.out"; fail "re-import filed something"; }

# --- the three as one array-form trace of three pids -----------------------
/usr/bin/python3 - "$T/codec.json" "$T/segment_write.json" "$T/chrome_json.json" >"$T/merged.json" <<'PY'
import json, sys
out = []
for p in sys.argv[1:]:
    out += json.load(open(p))["traceEvents"]
json.dump(out, sys.stdout)
PY
"$FNT" import-chrome --warehouse "$WH" "$T/merged.json" >"$T/merged.out"
grep -q "several pids" "$T/merged.out" || { cat "$T/merged.out"; fail "no thread mapping printed"; }
heat_ok merged "$T/merged.json"
pairs=$(/usr/bin/python3 -c '
import json, sys
print(len({(e.get("pid", 0), e["tid"]) for e in json.load(open(sys.argv[1])) if e.get("ph") in ("B", "E", "X")}))' "$T/merged.json")
got=$(q <<<"SELECT count(DISTINCT thread), min(thread), max(thread) FROM fn_trace_events WHERE run_id = 'merged';")
[ "$got" = "$(printf '%s\t1\t%s' "$pairs" "$pairs")" ] || fail "merged: threads '$got', want 1..$pairs"

# --- what clang does not write ----------------------------------------------
cat >"$T/edge.json" <<'EOF'
[{"ph": "M", "pid": 7, "tid": 1, "name": "thread_name", "args": {"name": "main"}},
 {"ph": "B", "pid": 7, "tid": 1, "ts": 10.5, "name": "outer \"quoted\" caf\u00e9", "args": {"x": [1, {"y": null}]}},
 {"ph": "X", "pid": 7, "tid": 1, "ts": 11.0004, "dur": 2.0005, "name": "leaf"},
 {"ph": "X", "pid": 7, "tid": 1, "ts": 14, "dur": 3, "name": "twin"},
 {"ph": "X", "pid": 7, "tid": 1, "ts": 14, "dur": 3, "name": "twin"},
 {"ph": "X", "pid": 7, "tid": 1, "ts": 14, "dur": 0, "name": "point"},
 {"ph": "X", "pid": 7, "tid": 1, "ts": 17, "dur": 0, "name": "point"},
 {"ph": "X", "pid": 7, "tid": 1, "ts": 17, "dur": 2, "name": "next"},
 {"ph": "i", "pid": 7, "tid": 1, "ts": 18, "name": "instant", "s": "t"},
 {"ph": "E", "pid": 7, "tid": 1, "ts": 20.25},
 {"ph": "B", "pid": 7, "tid": 2, "ts": 1e1, "name": "outer \"quoted\" caf\u00e9"},
 {"ph": "B", "pid": 7, "tid": 2, "ts": 12, "name": "never ended"},
 {"ph": "X", "pid": 7, "tid": 2, "ts": 13, "dur": 1, "name": "leaf"},
 {"ph": "C", "pid": 7, "tid": 2, "ts": 13, "name": "counter", "args": {"v": 3}},
 {"ph": "E", "pid": 7, "tid": 2, "ts": 30},
EOF
"$FNT" import-chrome --warehouse "$WH" "$T/edge.json" >"$T/edge.out" || { cat "$T/edge.out"; fail "edge.json"; }
heat_ok edge "$T/edge.json"
got=$(q <<<"SELECT thread, seq_no, t_ns, kind, symbol FROM fn_trace_events WHERE run_id = 'edge' ORDER BY seq_no LIMIT 4;")
want=$(printf '2\t0\t0\tentry\touter "quoted" café\n1\t1\t500\tentry\touter "quoted" café\n1\t2\t1000\tentry\tleaf\n2\t3\t2000\tentry\tnever ended')
[ "$got" = "$want" ] || fail "edge: first events
$got
want
$want"

# the same trace through a pipe (gzipped, as traces are often kept)
gzip -c "$T/edge.json" | gzip -dc | "$FNT" import-chrome --warehouse "$WH" --run-id piped - >"$T/piped.out" \
  || { cat "$T/piped.out"; fail "import-chrome - (stdin)"; }
[ "$(q <<<"SELECT key, inclusive_ns, self_ns, calls FROM fnt_heat('piped');")" = "$(cat "$T/edge.heat")" ] \
  || fail "the trace read from stdin differs from the file's"

# --- bad traces: an error naming the event, nothing filed -------------------
runs_before=$(q <<<"SELECT count(*) FROM fn_trace_runs;")
expect_error(){   # NAME JSON PATTERN
  local rc=0
  printf '%s' "$2" >"$T/$1.json"
  "$FNT" import-chrome --warehouse "$WH" "$T/$1.json" >"$T/bad.out" 2>"$T/bad.err" || rc=$?
  [ "$rc" = 1 ] || { cat "$T/bad.err"; fail "$1: exit $rc, want 1"; }
  grep -Eq "$3" "$T/bad.err" || { cat "$T/bad.err"; fail "$1: no error matching '$3'"; }
  cat "$T/bad.err"
  [ "$(q <<<"SELECT count(*) FROM fn_trace_runs;")" = "$runs_before" ] || fail "$1: something was filed"
}
expect_error overlap '[{"ph":"X","tid":1,"ts":0,"dur":10,"name":"a"},{"ph":"X","tid":1,"ts":20,"dur":5,"name":"c"},{"ph":"X","tid":1,"ts":5,"dur":10,"name":"b"}]' \
  "traceEvents\[2\] 'b' \(X, 5.000 to 15.000 µs\) overlaps traceEvents\[0\] 'a'"
expect_error lone-end '[{"ph":"X","tid":1,"ts":0,"dur":10,"name":"a"},{"ph":"E","tid":3,"ts":5}]' \
  "traceEvents\[1\]: E with no open B on pid 0 tid 3"
expect_error no-dur '{"traceEvents":[{"ph":"X","tid":1,"ts":0,"name":"a"}]}' \
  "traceEvents\[0\] 'a': an X event without dur"
expect_error bad-tid '[{"ph":"B","tid":"main","ts":0,"name":"a"}]' "traceEvents\[0\] 'a': tid is not an integer"
expect_error no-events '{"displayTimeUnit":"ns","otherData":{}}' 'no "traceEvents" member'
expect_error malformed '{"traceEvents":[{"ph":"X","tid":1,"ts":0,"dur":1,"name":"a"} {"ph":"X"}]}' \
  "byte 61: expected ',' or '\]' after traceEvents\[0\]"
/usr/bin/python3 -c 'import json; print(json.dumps([{"ph": "X", "tid": 1, "ts": 5, "dur": 0, "name": "p"}] * 50001))' >"$T/crowd.json"
rc=0
"$FNT" import-chrome --warehouse "$WH" "$T/crowd.json" >/dev/null 2>"$T/bad.err" || rc=$?
[ "$rc" = 1 ] && grep -q "more than 100000 B, E and X marks at 5.000 µs on pid 0 tid 1" "$T/bad.err" \
  || { cat "$T/bad.err"; fail "100,002 marks at one time on one thread were not refused"; }
expect_error garbage '[{"ph":"X","tid":1,"ts":0,"dur":1,"name":"a"}] x' "byte 47: unexpected text after the trace"

# --- a large trace: the sort spills, memory stays bounded --------------------
/usr/bin/python3 - "$T/big.json" <<'PY'
import sys
# 4 threads, 83,334 blocks each: "frame" [t, t+100] holding "inner a"
# [t+10, t+40] and "inner b" [t+50, t+90], written when they end (inner
# first, as clang writes them), the threads' blocks interleaved.
with open(sys.argv[1], 'w') as f:
    f.write('{"traceEvents": [\n')
    first = True
    for k in range(83334):
        for tid in range(4):
            t = k * 120 + tid
            for ts, dur, name in ((t + 10, 30, 'inner a'), (t + 50, 40, 'inner b'), (t, 100, 'frame')):
                f.write('%s{"ph":"X","pid":1,"tid":%d,"ts":%d,"dur":%d,"name":"%s","args":{}}\n'
                        % ('' if first else ',', tid, ts, dur, name))
                first = False
    f.write('], "displayTimeUnit": "ns"}\n')
PY
# chunks of 100,000 events: filing a 1M-event chunk, the store's derivation
# of its calls alone takes ~90 MiB (see test_import_xray_large.sh)
rss=$(peak_rss_kb "$FNT" import-chrome --warehouse "$WH" --chunk-events 100000 "$T/big.json") \
  || fail "import of big.json"
echo "big.json: $(stat -c %s "$T/big.json") bytes, 2000016 events, peak RSS $rss KiB"
rm -f "$T/big.json"
if [ -z "${FNT_PRELOAD:-}" ]; then
  [ "$rss" -le $((64 * 1024)) ] || fail "big.json: peak RSS $rss KiB > 64 MiB"
fi
got=$(q <<<"SELECT key, inclusive_ns, self_ns, calls FROM fnt_heat('big') ORDER BY key;")
n=333336
want=$(printf '?frame\t%s\t%s\t%s\n?inner a\t%s\t%s\t%s\n?inner b\t%s\t%s\t%s' \
  $((n*100000)) $((n*30000)) $n $((n*30000)) $((n*30000)) $n $((n*40000)) $((n*40000)) $n)
[ "$got" = "$want" ] || fail "big: heat
$got
want
$want"
echo "ok"
