#!/usr/bin/env bash
# The main job, end to end, unattended: installs and builds fntrace
# (tools/setup.sh release), compiles the XRay demo program test/xray/prog.c
# (threads, recursion, mutual recursion, tail calls), records one run of it
# in XRay basic mode, files it into ./fnt-warehouse as run "demo", and shows
# its hottest functions and the run's summary row.
#
#   tools/demo.sh [ROUNDS]      (default 200: about 330,000 events)
#
# Re-runnable: the run id is fixed, so a second run records afresh but files
# nothing ("already filed"), the warehouse keeping the first run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-200}
WH=./fnt-warehouse
RUN=demo

say(){ printf '\n== %s\n' "$*"; }

say "installing what is missing and building (tools/setup.sh release)"
"$ROOT/tools/setup.sh" release
FNT="$ROOT/build/fnt"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fnt-demo.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

say "compiling test/xray/prog.c with XRay instrumentation"
echo "clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -pthread -o $TMP/prog test/xray/prog.c"
clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -pthread \
      -o "$TMP/prog" "$ROOT/test/xray/prog.c"

say "recording $ROUNDS rounds on 4 threads in XRay basic mode (every call kept)"
XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=$TMP/xray-log." \
XRAY_BASIC_OPTIONS="func_duration_threshold_us=0 max_stack_depth=4096" \
  "$TMP/prog" "$ROUNDS" 2> >(grep -v 'Unable to determine CPU frequency' >&2)
LOG=$(ls "$TMP"/xray-log.prog.*)
echo "log: $LOG ($(stat -c %s "$LOG") bytes)"

say "filing it into $WH as run '$RUN'"
"$FNT" import-xray --warehouse "$WH" --repo fntrace/demo --run-id "$RUN" \
       --binary "$TMP/prog" "$LOG"

sql(){
  { printf '.load %s/build/fntrace\n.output /dev/null\n' "$ROOT"
    printf "SELECT fnt_open('%s');\n.output stdout\n.mode column\n.headers on\n" "$WH"
    cat; } | sqlite3 -batch :memory:
}

say "the hottest functions of run '$RUN' (SPEC §5 heat: inclusive and self time)"
if "$FNT" heat --help >/dev/null 2>&1; then
  FNT_WAREHOUSE="$WH" "$FNT" heat "$RUN" --top 15
else
  sql <<SQL
SELECT key, inclusive_ns, self_ns, calls FROM fnt_heat('$RUN')
 ORDER BY inclusive_ns DESC LIMIT 15;
SQL
fi

say "per function of run '$RUN': call counts and duration percentiles (fnt account)"
FNT_WAREHOUSE="$WH" "$FNT" account "$RUN" --sort sum --top 10

say "the stacks at 5 ms (fn_trace_calls: one row per frame of the replay)"
sql <<SQL
SELECT thread, depth, call_id, parent_id, symbol, start_ns, end_ns, ended_by
  FROM fn_trace_calls
 WHERE run_id = '$RUN' AND start_ns <= 5000000 AND end_ns >= 5000000
 ORDER BY thread, depth;
SQL

say "the run's summary (fn_trace_run_summary)"
sql <<SQL
SELECT run_id, repo, target, source, chunks_filed, chunks, events, threads,
       duration_ns, functions, local_functions
  FROM fn_trace_run_summary LIMIT 5;
SQL

say "done: query it yourself with"
echo "  sqlite3 -cmd '.load $ROOT/build/fntrace' -cmd \"SELECT fnt_open('$WH')\" :memory:"
