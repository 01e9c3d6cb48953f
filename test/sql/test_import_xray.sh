#!/usr/bin/env bash
# test_import_xray.sh -- `fnt import-xray` against llvm-xray, for real:
# compiles test/xray/prog.c with XRay, records it in basic and FDR mode,
# imports both logs, reads them back through the sqlite3 shell with
# build/fntrace.so loaded, and compares with `llvm-xray convert` of the same
# logs (events, threads, per-function kinds, order, SPEC §5 heat: see
# test/xray/xray_check.py).  Then: truncated and corrupted logs (an error
# with the offset, nothing filed), a re-import (files nothing), an import
# killed after a chunk and run again (every chunk exactly once), a room.
. "${FNT_SOURCE:?}/test/xray/lib.sh" import_xray
CHECK="$FNT_SOURCE/test/xray/xray_check.py"
mkdir -p "$T/basic" "$T/fdr"
events_of(){ q "$1" <<<"SELECT thread, seq_no, t_ns, kind, symbol FROM fn_trace_events WHERE run_id = '$2' ORDER BY seq_no;"; }
heat_of(){ q "$1" <<<"SELECT key, inclusive_ns, self_ns, calls FROM fnt_heat('$2');"; }

# --- record: basic and FDR mode, 20 rounds on 4 threads -------------------
XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=$T/basic/" \
XRAY_BASIC_OPTIONS="func_duration_threshold_us=0 max_stack_depth=4096" \
  "$T/prog" 20 >/dev/null 2>"$T/basic.err"
XRAY_OPTIONS="patch_premain=true xray_mode=xray-fdr xray_logfile_base=$T/fdr/" \
XRAY_FDR_OPTIONS="func_duration_threshold_us=0 buffer_size=65536 buffer_max=256" \
  "$T/prog" 20 >/dev/null 2>"$T/fdr.err"
BLOG=$(ls "$T"/basic/prog.*); FLOG=$(ls "$T"/fdr/prog.*)
[ -s "$BLOG" ] && [ -s "$FLOG" ] || fail "prog wrote no XRay logs"
BRUN=$(basename "$BLOG"); FRUN=$(basename "$FLOG")

# --- import both, in chunks of 5000 events, and compare with llvm-xray ----
WH="$T/wh"
for log in "$BLOG" "$FLOG"; do
  run=$(basename "$log")
  "$FNT" import-xray --warehouse "$WH" --repo test/xray --commit abc123 \
         --chunk-events 5000 --binary "$T/prog" "$log" >"$T/$run.out" \
    || fail "import of $log failed"
  cat "$T/$run.out"
  grep -q "already filed" "$T/$run.out" || fail "no summary"
  llvm-xray convert --symbolize --output-format=yaml --instr_map="$T/prog" "$log" >"$T/$run.yaml"
  events_of "$WH" "$run" >"$T/$run.events"
  heat_of "$WH" "$run" >"$T/$run.heat"
  /usr/bin/python3 "$CHECK" "$T/$run.yaml" "$T/$run.events" "$T/$run.heat" \
    || fail "$run differs from llvm-xray"
done

# the run rows: every chunk filed, the run's own values on each
n=$(wc -l <"$T/$BRUN.events")
chunks=$(( (n + 4999) / 5000 ))
got=$(q "$WH" <<<"SELECT chunks_filed, chunks, events, total_events, threads, source, target, repo, \"commit\", truncated FROM fn_trace_run_summary WHERE run_id = '$BRUN';")
want=$(printf '%s\t%s\t%s\t%s\t4\txray-basic\tprog\ttest/xray\tabc123\t0' "$chunks" "$chunks" "$n" "$n")
[ "$got" = "$want" ] || fail "run summary of $BRUN: got '$got', want '$want'"
got=$(q "$WH" <<<"SELECT source, threads FROM fn_trace_run_summary WHERE run_id = '$FRUN';")
[ "$got" = "$(printf 'xray-fdr\t4')" ] || fail "run summary of $FRUN: got '$got'"
bid=$(readelf -n "$T/prog" 2>/dev/null | sed -n 's/.*Build ID: //p')
got=$(q "$WH" <<<"SELECT DISTINCT json_extract(binaries, '\$[0].build_id') FROM fn_trace_runs WHERE run_id = '$BRUN';")
[ -z "$bid" ] || [ "$got" = "$bid" ] || fail "build id: got '$got', want '$bid'"
got=$(q "$WH" <<<"SELECT count(*) FROM fn_trace_runs WHERE run_id = '$BRUN' AND duration_ns > 0 AND local_functions = functions AND functions > 0;")
[ "$got" = "$chunks" ] || fail "run rows of $BRUN: $got of $chunks with duration and local functions"

# --- C++: demangled names as llvm-xray's symbolizer gives them ------------
if clang++ $XFLAGS -o "$T/prog_cxx" "$FNT_SOURCE/test/xray/prog.cc" 2>"$T/clangxx.err"; then
  mkdir -p "$T/cxx"
  XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=$T/cxx/" \
  XRAY_BASIC_OPTIONS="func_duration_threshold_us=0" "$T/prog_cxx" 2>/dev/null
  CLOG=$(ls "$T"/cxx/prog_cxx.*)
  "$FNT" import-xray --warehouse "$WH" --run-id cxx --binary "$T/prog_cxx" "$CLOG" >/dev/null
  llvm-xray convert --symbolize --output-format=yaml --instr_map="$T/prog_cxx" "$CLOG" >"$T/cxx.yaml"
  events_of "$WH" cxx >"$T/cxx.events"
  heat_of "$WH" cxx >"$T/cxx.heat"
  grep -q "ns::Box<long>::get() const" "$T/cxx.events" || fail "C++ names not demangled"
  /usr/bin/python3 "$CHECK" "$T/cxx.yaml" "$T/cxx.events" "$T/cxx.heat" || fail "C++ run differs"
else
  echo "note: clang++ cannot build XRay C++ here, C++ names not checked"
fi

# --- a re-import files nothing --------------------------------------------
"$FNT" import-xray --warehouse "$WH" --repo test/xray --commit abc123 \
       --chunk-events 5000 --binary "$T/prog" "$BLOG" >"$T/again.out"
grep -q "0 filed, $chunks already filed" "$T/again.out" || { cat "$T/again.out"; fail "re-import filed something"; }
[ "$(q "$WH" <<<"SELECT count(*) FROM fn_trace_events WHERE run_id = '$BRUN';")" = "$n" ] \
  || fail "re-import changed the events"
# ... and one cut differently would overlap the filed chunks: refused
rc=0
"$FNT" import-xray --warehouse "$WH" --repo test/xray --chunk-events 3000 \
       --binary "$T/prog" "$BLOG" >/dev/null 2>"$T/cut.err" || rc=$?
[ "$rc" = 1 ] && grep -q "is already filed as $chunks chunk(s) of $n events" "$T/cut.err" \
  || { cat "$T/cut.err"; fail "a re-import with another --chunk-events was not refused"; }
[ "$(q "$WH" <<<"SELECT count(*) FROM fn_trace_events WHERE run_id = '$BRUN';")" = "$n" ] \
  || fail "a refused re-import changed the events"

# --- truncated and corrupted logs: an error with the offset, nothing filed -
WH2="$T/wh-bad"
# a warehouse holding one good run, so that "nothing filed" is a real check
"$FNT" import-xray --warehouse "$WH2" --binary "$T/prog" --run-id good "$FLOG" >/dev/null
expect_error(){   # LOG PATTERN
  local rc=0
  "$FNT" import-xray --warehouse "$WH2" --binary "$T/prog" --run-id bad "$1" \
         >"$T/bad.out" 2>"$T/bad.err" || rc=$?
  [ "$rc" = 1 ] || fail "$1: exit $rc, want 1"
  grep -Eq "$2" "$T/bad.err" || { cat "$T/bad.err"; fail "$1: no error matching '$2'"; }
  cat "$T/bad.err"
  [ "$(q "$WH2" <<<"SELECT count(*) FROM fn_trace_runs WHERE run_id = 'bad';")" = 0 ] \
    || fail "$1: something was filed"
  [ "$(q "$WH2" <<<"SELECT count(*) FROM fn_trace_events;")" = "$(wc -l <"$T/$FRUN.events")" ] \
    || fail "$1: the warehouse changed"
}
size=$(stat -c %s "$BLOG")
head -c $((size - 20)) "$BLOG" >"$T/basic-truncated"
expect_error "$T/basic-truncated" "basic-truncated: offset $((size - 32)): truncated record"
cp "$BLOG" "$T/basic-corrupt"
printf '\x09' | dd of="$T/basic-corrupt" bs=1 seek=$((32*5 + 3)) conv=notrunc status=none
expect_error "$T/basic-corrupt" "offset $((32*5 + 3)): unknown function record kind 9"
head -c 20 "$BLOG" >"$T/header-only"
expect_error "$T/header-only" "offset 0: truncated header"
size=$(stat -c %s "$FLOG")
head -c $((size - 3)) "$FLOG" >"$T/fdr-truncated"
expect_error "$T/fdr-truncated" "fdr-truncated: offset [0-9]+: truncated buffer"
cp "$FLOG" "$T/fdr-corrupt"
printf '\x05' | dd of="$T/fdr-corrupt" bs=1 seek=32 conv=notrunc status=none
expect_error "$T/fdr-corrupt" "offset 32: expected a BufferExtents record"
expect_error "$T/no-such-log" "no-such-log: No such file"
rc=0; "$FNT" import-xray --warehouse "$WH2" --binary "$T/basic.err" "$BLOG" 2>"$T/bad.err" || rc=$?
[ "$rc" = 1 ] && grep -q "not an ELF file" "$T/bad.err" || fail "a non-ELF --binary was accepted"

# --- killed after chunk 2, then run again: every chunk exactly once --------
WH3="$T/wh-kill"
rc=0
FNT_TEST_KILL_AFTER_CHUNK=2 "$FNT" import-xray --warehouse "$WH3" --chunk-events 5000 \
  --binary "$T/prog" "$BLOG" >/dev/null 2>&1 || rc=$?
[ "$rc" = 137 ] || fail "the kill hook did not fire (exit $rc)"
[ "$(q "$WH3" <<<"SELECT count(*) FROM fn_trace_runs WHERE run_id = '$BRUN';")" = 3 ] \
  || fail "not 3 chunks filed before the kill"
"$FNT" import-xray --warehouse "$WH3" --chunk-events 5000 --binary "$T/prog" "$BLOG" >"$T/resume.out"
grep -q "$((chunks - 3)) filed, 3 already filed" "$T/resume.out" || { cat "$T/resume.out"; fail "resume"; }
events_of "$WH3" "$BRUN" >"$T/resumed.events"
/usr/bin/python3 "$CHECK" "$T/$BRUN.yaml" "$T/resumed.events" || fail "resumed run differs"
[ "$(q "$WH3" <<<"SELECT group_concat(chunk) FROM (SELECT chunk FROM fn_trace_runs WHERE run_id = '$BRUN' ORDER BY chunk);")" \
  = "$(seq -s, 0 $((chunks - 1)))" ] || fail "chunks not each filed once"

# --- a room names functions; defaults: repo "local", run id from the name --
printf '# symbol\tstable_id\nfib\tc test * fib().\n\nis_even\t\n' >"$T/room.tsv"
cp "$BLOG" "$T/xray-log.roomed"
"$FNT" import-xray --warehouse "$WH3" --room "$T/room.tsv" --binary "$T/prog" "$T/xray-log.roomed" >"$T/room.out"
grep -q "1 mapped to a stable_id" "$T/room.out" || { cat "$T/room.out"; fail "room not applied"; }
got=$(q "$WH3" <<<"SELECT repo, target, mapped_functions FROM fn_trace_run_summary WHERE run_id = 'roomed';")
[ "$got" = "$(printf 'local\tprog\t1')" ] || fail "defaults/room: got '$got'"
got=$(q "$WH3" <<<"SELECT count(*) FROM fnt_heat('roomed') WHERE key IN ('c test * fib().', '?is_even');")
[ "$got" = 2 ] || fail "heat keys with a room: $got"
printf 'no tab here\n' >"$T/bad-room.tsv"
rc=0; "$FNT" import-xray --warehouse "$WH3" --room "$T/bad-room.tsv" --binary "$T/prog" "$BLOG" 2>"$T/bad.err" || rc=$?
[ "$rc" = 1 ] && grep -q "bad-room.tsv:1: no tab" "$T/bad.err" || fail "a room line without a tab was accepted"

# --- usage --------------------------------------------------------------------
"$FNT" import-xray --help | grep -q "example" || fail "--help has no example"
rc=0; "$FNT" import-xray "$BLOG" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "missing --binary: exit $rc, want 2"
echo "ok: import-xray"
