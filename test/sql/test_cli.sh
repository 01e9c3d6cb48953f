#!/usr/bin/env bash
# test_cli.sh -- one grammar for every `fnt` subcommand, through the real
# build/fnt, sqlite3 and bash:
#   - the global options -w/--warehouse (every spelling), --json and -q,
#     before or after the subcommand, for every subcommand;
#   - a short flag means the same in every subcommand's --help;
#   - `fnt sql` passes sqlite3's options through (-json, -csv, -cmd VALUE);
#   - --json prints one JSON object a line (checked with python's json);
#     -q prints nothing on success;
#   - a re-import under another --repo is an error naming the repo that
#     holds the run (import-perf; import-xray too when clang has XRay);
#   - the import summary's bytes are this import's;
#   - `fnt completion bash`, sourced in bash, completes commands, options,
#     run ids and folders (compgen through the script's own _fnt).
. "$(dirname "$0")/lib.sh" cli
: "${FNT_SOURCE:?}"
fnt() { LD_PRELOAD="${FNT_PRELOAD:-}" "$FNT_BUILD/fnt" "$@"; }
SAMPLE="$FNT_SOURCE/test/perf/sample.txt"
check(){   # check NAME COMMAND...: the command must succeed
  local name=$1; shift
  if out=$("$@" 2>&1); then echo "ok   $name"; else echo "FAIL $name: $out"; fail=1; fi
}
jsonl(){   # jsonl: every line of stdin a JSON object; prints the count
  /usr/bin/python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    assert isinstance(json.loads(line), dict), line
    n += 1
print(n)'
}

# A warehouse with one run (the first of its two chunks).
expect "filed a run" 1 "$(sql <<<"SELECT fnt_file_chunk(readfile('$FNT_SOURCE/test/golden/chunk0.json'));")"
RUN=run-2026-12-02-0001

# --- global options before and after, every spelling, every subcommand ----
for spelling in "-w $wh" "-w$wh" "--warehouse $wh" "--warehouse=$wh"; do
  # shellcheck disable=SC2086
  { fnt $spelling heat "$RUN" && fnt heat "$RUN" $spelling && fnt heat $spelling "$RUN"; } >"$tmp/heat.out" 2>&1 \
    && [ "$(grep -c '?memcpy' "$tmp/heat.out")" = 3 ] \
    && echo "ok   heat with '$spelling' before, after and between" \
    || { echo "FAIL heat with '$spelling'"; cat "$tmp/heat.out"; fail=1; }
done
for cmd in ls check compact expire; do
  check "$cmd: -w before" fnt -w "$wh" "$cmd"
  check "$cmd: --warehouse after" fnt "$cmd" --warehouse "$wh"
done
[ "$(fnt --warehouse "$wh" ls | grep -c "$RUN")" = 1 ] && echo "ok   ls reads the -w warehouse" \
  || { echo "FAIL ls -w"; fail=1; }
[ ! -e "$tmp/fnt-warehouse" ] && [ ! -e ./fnt-warehouse ] && echo "ok   no default warehouse made" \
  || { echo "FAIL a default warehouse was made"; fail=1; }
check "import-perf: -w after" fnt import-perf "$SAMPLE" -w "$wh" --run-id p1
check "import-perf: -w before, -q" fnt -q -w "$wh" import-perf --run-id p2 "$SAMPLE"
[ -z "$(fnt -q -w "$wh" import-perf --run-id p3 "$SAMPLE")" ] && echo "ok   -q: an import prints nothing" \
  || { echo "FAIL -q printed"; fail=1; }
printf '[{"name": "f", "ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]\n' >"$tmp/trace.json"
expect "import-chrome --json" 1 "$(fnt import-chrome --json -w "$tmp/wh-chrome" --run-id c1 "$tmp/trace.json" | jsonl)"
expect "import-chrome -q: silent" "" "$(fnt -q import-chrome -w "$tmp/wh-chrome" --run-id c2 "$tmp/trace.json")"
expect "export-iceberg --json: an object a table" 4 "$(fnt --json export-iceberg "$tmp/lake" -w "$wh" | jsonl)"
expect "export-iceberg -q: silent" "" "$(fnt export-iceberg -q "$tmp/lake" -w "$wh")"
check "bench: global options accepted" fnt -w "$wh" -q bench --help
check "completion: global options accepted" fnt completion bash -q
rc=0; fnt -w 2>/dev/null || rc=$?
expect "-w without a folder: usage error" 2 "$rc"

# --- a short flag means the same everywhere --------------------------------
cmds=$(fnt --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p')
: >"$tmp/flags"
for c in $cmds; do
  fnt "$c" --help >"$tmp/help" || { echo "FAIL $c --help"; fail=1; }
  grep -q -- "-w, --warehouse DIR" "$tmp/help" && grep -q -- "-q, --quiet" "$tmp/help" \
    || { echo "FAIL $c --help does not list the global options"; fail=1; }
  grep -o -- '^ *-[a-zA-Z], --[a-z-]*' "$tmp/help" | sed 's/^ *//' >>"$tmp/flags"
done
clash=$(sort -u "$tmp/flags" | cut -d, -f1 | uniq -d)
[ -z "$clash" ] && echo "ok   every short flag names one long option ($(sort -u "$tmp/flags" | wc -l) pairs)" \
  || { echo "FAIL short flags with two meanings: $clash"; sort -u "$tmp/flags"; fail=1; }

# --- fnt sql passes sqlite3's options -------------------------------------
got=$(fnt sql -w "$wh" -json "SELECT run_id, chunks_filed FROM fn_trace_run_summary")
expect "sql -json" "[{\"run_id\":\"$RUN\",\"chunks_filed\":1}]" "$got"
got=$(fnt -w "$wh" sql -csv -noheader "SELECT count(*) FROM fn_trace_events")
expect "sql -csv -noheader" "3" "$got"
got=$(fnt sql --json --warehouse "$wh" "SELECT fntrace_version() AS v")
case "$got" in '[{"v":"'*'"}]') echo "ok   sql --json is sqlite3's -json" ;;
  *) echo "FAIL sql --json: $got"; fail=1 ;; esac
got=$(fnt sql -w "$wh" -cmd "-q" "SELECT 1" 2>&1 || true)
case "$got" in *'-q'*) echo "ok   an option's value is sqlite3's, not ours (-cmd -q)" ;;
  *) echo "FAIL -cmd -q: $got"; fail=1 ;; esac
got=$(fnt sql -w "$wh" -- "SELECT 2 AS two")
expect "sql -- SQL" "two
2" "$got"

# --- --json: one object a line ----------------------------------------------
expect "ls --json: a run, three profiles" 4 "$(fnt ls --json -w "$wh" | jsonl)"
expect "heat --json" 2 "$(fnt --json heat "$RUN" -w "$wh" | jsonl)"
expect "check --json (summary)" 1 "$(fnt check -w "$wh" --json | jsonl)"
fnt check -w "$wh" --json | grep -q '"sound": true' && echo "ok   check --json says sound" \
  || { echo "FAIL check --json"; fail=1; }
expect "compact --json" 1 "$(fnt compact -w "$wh" --json | jsonl)"
expect "expire --json" 1 "$(fnt --json expire -w "$wh" | jsonl)"
expect "import-perf --json" 1 "$(fnt import-perf -w "$wh" --json --run-id p4 "$SAMPLE" | jsonl)"
fnt heat -w "$wh" --json "$RUN" | grep -q '"function": "c acme/widget \* main().", "inclusive_ns": 900, "self_ns": ' \
  && echo "ok   heat --json fields" || { echo "FAIL heat --json fields"; fail=1; }

# --- a re-import under another repo: an error naming the holder ------------
rc=0; fnt import-perf -w "$wh" --repo other/x --run-id p1 "$SAMPLE" >"$tmp/out" 2>"$tmp/err" || rc=$?
expect "perf re-import under another repo: exit 1" 1 "$rc"
expect "perf re-import under another repo: the message" \
  "fnt import-perf: run 'p1' is already filed under repo 'local', not 'other/x': a run belongs to one repo (import it with --repo local, or under another --run-id)" \
  "$(cat "$tmp/err")"
expect "nothing filed under the other repo" 0 \
  "$(sql <<<"SELECT count(*) FROM fn_profile WHERE repo = 'other/x';")"

if command -v clang >/dev/null && clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -pthread \
     -o "$tmp/prog" "$FNT_SOURCE/test/xray/prog.c" 2>/dev/null; then
  mkdir -p "$tmp/xlog"
  XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=$tmp/xlog/" \
  XRAY_BASIC_OPTIONS="func_duration_threshold_us=0 max_stack_depth=4096" "$tmp/prog" 2 >/dev/null 2>&1
  LOG=$(ls "$tmp"/xlog/prog.*)
  out=$(fnt import-xray -w "$wh" --repo acme/x --binary "$tmp/prog" "$LOG")
  grew=$(sed -n 's/.*: grew by \([0-9]*\) bytes on disk during this import (\([0-9]*\) in all)$/\1 \2/p' <<<"$out")
  [ -n "$grew" ] && [ "${grew% *}" -gt 0 ] && [ "${grew% *}" -lt "${grew#* }" ] \
    && echo "ok   import-xray: the bytes of this import ($grew)" || { echo "FAIL import bytes: $out"; fail=1; }
  out=$(fnt import-xray --binary "$tmp/prog" "$LOG" --warehouse="$wh" --repo acme/x)
  grep -q "grew by 0 bytes" <<<"$out" && echo "ok   a re-import adds 0 bytes" \
    || { echo "FAIL re-import bytes: $out"; fail=1; }
  rc=0; fnt -w "$wh" import-xray --repo other/x --binary "$tmp/prog" "$LOG" >/dev/null 2>"$tmp/err" || rc=$?
  expect "xray re-import under another repo: exit 1" 1 "$rc"
  grep -q "is already filed under repo 'acme/x', not 'other/x'" "$tmp/err" \
    && echo "ok   xray re-import: the message names the repo" || { echo "FAIL $(cat "$tmp/err")"; fail=1; }
  expect "import-xray --json -q: silent" "" "$(fnt -w "$wh" import-xray -q --json --repo acme/x --binary "$tmp/prog" "$LOG")"
  expect "import-xray --json" 1 "$(fnt -w "$wh" import-xray --json --repo acme/x --binary "$tmp/prog" "$LOG" | jsonl)"
else
  echo "note: no XRay-capable clang: import-xray's part skipped"
fi

# --- bash completion ----------------------------------------------------------
fnt completion bash >"$tmp/fnt.bash"
complete_words(){   # complete_words WORD...: the completions of the last word
  FNT_BIN="$FNT_BUILD/fnt" bash -c '
    source "$1"; shift
    COMP_WORDS=("$FNT_BIN" "$@"); COMP_CWORD=$#
    _fnt; printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$tmp/fnt.bash" "$@"
}
expect "complete 'fnt he'" "heat" "$(complete_words he)"
expect "complete 'fnt c'" "calls
check
compact
compare
completion" "$(complete_words c)"
expect "complete 'fnt import-'" "import-chrome
import-perf
import-xray" "$(complete_words import-)"
expect "complete 'fnt import-chrome --ch'" "--chunk-events" "$(complete_words import-chrome --ch)"
expect "complete 'fnt exp'" "expire
export
export-iceberg" "$(complete_words exp)"
mkdir -p "$tmp/lake-a"
expect "complete 'fnt export-iceberg .../lake-'" "$tmp/lake-a" "$(complete_words export-iceberg "$tmp/lake-")"
expect "complete 'fnt export-iceberg --table r'" "runs" "$(complete_words export-iceberg --table r)"
expect "complete 'fnt heat --t'" "--top" "$(complete_words heat --t)"
expect "complete 'fnt import-xray --bi'" "--binary" "$(complete_words import-xray --bi)"
expect "complete 'fnt check --a'" "--all" "$(complete_words check --a)"
expect "complete 'fnt --wa'" "--warehouse" "$(complete_words --wa)"
expect "complete 'fnt ls --j'" "--json" "$(complete_words ls --j)"
expect "complete 'fnt -w WH heat r'" "$RUN" "$(complete_words -w "$wh" heat r)"
for c in account calls stack timeline diff; do
  expect "complete 'fnt -w WH $c r'" "$RUN" "$(complete_words -w "$wh" $c r)"
done
mkdir -p "$tmp/wdir-a"
expect "complete 'fnt ls -w .../wdir-'" "$tmp/wdir-a" "$(complete_words ls -w "$tmp/wdir-")"
expect "complete 'fnt completion '" "bash" "$(complete_words completion '')"

finish
