#!/usr/bin/env bash
# test_flame_xray.sh -- fnt_flame and `fnt export --format folded` of real
# XRay runs (test/xray/prog.c: threads, recursion, tail calls; basic and
# FDR mode) against `llvm-xray stack -all-stacks -aggregate-threads
# -stack-format flame` of the same log: the same stacks, the same calls
# per stack, the same inclusive time per stack (test/xray/flame_check.py
# says what is compared).  llvm-xray reads the log converted to YAML sorted
# by time (it drops records older than one it has seen, across threads; see
# test_calls_xray.sh), fntrace the binary log itself.
. "${FNT_SOURCE:?}/test/xray/lib.sh" flame_xray
WH="$T/wh"

for mode in basic fdr; do
  name="prog-$mode"
  mkdir -p "$T/$name"
  XRAY_OPTIONS="patch_premain=true xray_mode=xray-$mode xray_logfile_base=$T/$name/" \
  XRAY_BASIC_OPTIONS="func_duration_threshold_us=0 max_stack_depth=4096" \
  XRAY_FDR_OPTIONS="func_duration_threshold_us=0 buffer_size=65536 buffer_max=256" \
    "$T/prog" 20 >"$T/$name.out" 2>"$T/$name.err" || fail "$name: prog exited $?"
  log=$(ls "$T/$name"/*)
  "$FNT" import-xray --warehouse "$WH" --run-id "$name" --chunk-events 5000 \
         --binary "$T/prog" "$log" >/dev/null || fail "$name: import failed"
  yaml="$T/$name.yaml"
  llvm-xray convert -sort -output-format=yaml -instr_map="$T/prog" "$log" >"$yaml"
  sed -i '0,/^  version: *[0-9]*/s//  version:         1/' "$yaml"
  for agg in time count; do
    llvm-xray stack -all-stacks -aggregate-threads -stack-format=flame \
      -aggregation-type=$agg -instr_map="$T/prog" "$yaml" >"$T/$name.$agg" 2>"$T/$name.stack.err" \
      || { cat "$T/$name.stack.err"; fail "$name: llvm-xray stack failed"; }
  done
  q "$WH" <<<"SELECT stack, self_ns, calls FROM fnt_flame('$name');" >"$T/$name.rows"
  # the export is fnt_flame's rows
  "$FNT" -q -w "$WH" export "$name" --format folded -o "$T/$name.folded" || fail "$name: export failed"
  [ "$(cut -f1,2 "$T/$name.rows" | tr '\t' ' ')" = "$(cat "$T/$name.folded")" ] \
    || fail "$name: the folded export differs from fnt_flame"
  printf '%s: ' "$name"
  /usr/bin/python3 "$FNT_SOURCE/test/xray/flame_check.py" "$T/$name.time" "$T/$name.count" \
    "$(sed -n 's/^  cycle-frequency: *//p' "$yaml")" "$T/$name.rows" \
    || fail "$name: fnt_flame differs from llvm-xray stack"
done
echo "ok"
