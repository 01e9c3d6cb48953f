#!/usr/bin/env bash
# test_import_binary.sh -- `fnt import-xray` refuses a log read against a
# binary it does not come from, for real: test/xray/prog.c and prog.cc are
# built with XRay and recorded (basic and FDR mode), then each log is
# imported against the other program (exit 1, a message naming both files,
# nothing filed), a log whose events need a sled the binary lacks, and a
# run re-imported against a binary of another build id; --force imports
# anyway.  The right pairs import, and a run filed in many chunks leaves
# `fnt check` without an unreferenced file.
set -euo pipefail
: "${FNT_BUILD:?}" "${FNT_SOURCE:?}" "${FNT_TEST_TMP:?}"
FNT="$FNT_BUILD/fnt"
T="$FNT_TEST_TMP/import_binary"
for tool in clang clang++ llvm-xray sqlite3 /usr/bin/python3; do
  command -v "$tool" >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
rm -rf "$T"
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/basic" "$T/fdr" "$T/cxx" "$T/rebuilt"
XFLAGS="-O2 -fxray-instrument -fxray-instruction-threshold=1"
if ! clang $XFLAGS -pthread -o "$T/prog" "$FNT_SOURCE/test/xray/prog.c" 2>"$T/clang.err"; then
  cat "$T/clang.err"
  grep -q 'xray' "$T/clang.err" && { echo "skip: no XRay runtime for clang"; exit 77; }
  exit 1
fi
clang++ $XFLAGS -o "$T/prog_cxx" "$FNT_SOURCE/test/xray/prog.cc"
# The same code under another build id: only the id can tell them apart.
clang $XFLAGS -pthread -Wl,--build-id=0x0123456789abcdef -o "$T/rebuilt/prog" \
  "$FNT_SOURCE/test/xray/prog.c"

fail(){ echo "FAIL: $*" >&2; exit 1; }
ok(){ echo "ok   $*"; }
q(){   # q WAREHOUSE: SQL on stdin through the sqlite3 shell with fntrace
  { printf '.bail on\n.load %s/fntrace\n.mode tabs\n.headers off\n' "$FNT_BUILD"
    printf ".output /dev/null\nSELECT fnt_open('%s');\n.output stdout\n" "$1"
    cat; } | LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory:
}

XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=$T/basic/" \
XRAY_BASIC_OPTIONS="func_duration_threshold_us=0 max_stack_depth=4096" \
  "$T/prog" 10 >/dev/null 2>&1
XRAY_OPTIONS="patch_premain=true xray_mode=xray-fdr xray_logfile_base=$T/fdr/" \
XRAY_FDR_OPTIONS="func_duration_threshold_us=0 buffer_size=65536 buffer_max=256" \
  "$T/prog" 10 >/dev/null 2>&1
XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=$T/cxx/" \
XRAY_BASIC_OPTIONS="func_duration_threshold_us=0" "$T/prog_cxx" 2>/dev/null || true
BLOG=$(ls "$T"/basic/prog.*); FLOG=$(ls "$T"/fdr/prog.*); CLOG=$(ls "$T"/cxx/prog_cxx.*)

WH="$T/wh"
refused(){   # refused NAME PATTERN fnt-args...: exit 1, the message, nothing filed
  local name=$1 pat=$2 rc=0; shift 2
  "$FNT" import-xray --warehouse "$WH" "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 1 ] || { cat "$T/out" "$T/err"; fail "$name: exit $rc, want 1"; }
  grep -Eq -- "$pat" "$T/err" || { cat "$T/err"; fail "$name: no message matching '$pat'"; }
  [ "$(q "$WH" <<<"SELECT count(*) FROM fn_trace_runs WHERE run_id = 'x';")" = 0 ] \
    || fail "$name: something was filed"
  ok "$name: $(cat "$T/err")"
}
refused "C log, C++ binary (basic)" \
  "the log $BLOG does not match the binary $T/prog_cxx: it uses function ids up to [0-9]+, and [0-9]+ of its events have ids \(such as [0-9]+\) outside the binary's xray_instr_map of [0-9]+ functions: .*--force imports anyway" \
  --run-id x --binary "$T/prog_cxx" "$BLOG"
refused "C log, C++ binary (FDR)" "the log $FLOG does not match the binary $T/prog_cxx: .* outside the binary's xray_instr_map" \
  --run-id x --binary "$T/prog_cxx" "$FLOG"
# prog's map is larger than prog_cxx's: the ids fit, the log's name does not.
refused "C++ log, C binary" "the log $CLOG does not match the binary $T/prog: its name says the program 'prog_cxx' wrote it" \
  --run-id x --binary "$T/prog" "$CLOG"

# A tail exit in a function that has no tail-call sled: its exit record's kind
# changed from 1 to 2 (bytes: u16 type, u8 cpu, u8 kind, i32 function id).
notail=$(llvm-xray extract "$T/prog" | /usr/bin/python3 -c '
import re, sys
kinds = {}
for line in sys.stdin:
    m = re.search(r"id: (\d+),.*kind: ([a-z-]+)", line)
    if m: kinds.setdefault(int(m.group(1)), set()).add(m.group(2))
print(" ".join(str(i) for i, k in sorted(kinds.items()) if "tail-exit" not in k and "function-exit" in k))')
cp "$BLOG" "$T/basic/prog.kindXX"
fid=$(/usr/bin/python3 - "$T/basic/prog.kindXX" $notail <<'PY'
import struct, sys
path, ids = sys.argv[1], {int(x) for x in sys.argv[2:]}
b = bytearray(open(path, "rb").read())
for off in range(32, len(b) - 31, 32):
    rtype, cpu, kind, fid = struct.unpack_from("<HBBi", b, off)
    if rtype == 0 and kind == 1 and fid in ids:
        b[off + 3] = 2
        open(path, "wb").write(bytes(b))
        print(fid)
        break
PY
)
[ -n "$fid" ] || fail "no exit record of a function without a tail-call sled"
refused "an event kind the binary has no sled for" \
  "the log $T/basic/prog.kindXX does not match the binary $T/prog: function id $fid \([a-z_]+ there\) has tail exits in the log but no tail-call sled in the binary \(1 such events\)" \
  --run-id x --binary "$T/prog" "$T/basic/prog.kindXX"

# --force: imported all the same, the ids outside the map named "#id".
"$FNT" import-xray --warehouse "$WH" --run-id forced --force --binary "$T/prog_cxx" "$BLOG" >/dev/null \
  || fail "--force did not import"
[ "$(q "$WH" <<<"SELECT count(*) > 0 FROM fn_trace_events WHERE run_id = 'forced' AND symbol LIKE '#%';")" = 1 ] \
  || fail "--force: no #id symbols"
ok "--force imports anyway"

# The right pairs import; many chunks (the manifest list merges past 16)
# leave no unreferenced file.
"$FNT" import-xray --warehouse "$WH" --run-id basic --chunk-events 100 --binary "$T/prog" "$BLOG" >"$T/out" \
  || fail "basic log and its binary"
chunks=$(sed -n 's/^  chunks *\([0-9]*\):.*/\1/p' "$T/out")
[ "$chunks" -gt 20 ] || fail "only $chunks chunks"
"$FNT" import-xray --warehouse "$WH" --run-id fdr --binary "$T/prog" "$FLOG" >/dev/null || fail "FDR log and its binary"
"$FNT" import-xray --warehouse "$WH" --run-id cxx --binary "$T/prog_cxx" "$CLOG" >/dev/null || fail "C++ log and its binary"
ok "the right pairs import ($chunks chunks of the basic log)"
rc=0; "$FNT" check -w "$WH" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q "; 0 unreferenced file(s), 0 bytes: sound$" "$T/check.out" \
  || { cat "$T/check.out"; fail "fnt check after a $chunks-chunk import"; }
ok "fnt check after a $chunks-chunk import: no unreferenced file"

# The same log again under its run id, against a binary of another build:
# refused, naming the build ids; --force files nothing new (already filed).
refused "re-import against another build id" \
  "$BLOG: run 'basic' is already filed from a binary with build id [0-9a-f]+; the binary $T/rebuilt/prog has build id 0123456789abcdef" \
  --run-id basic --chunk-events 100 --binary "$T/rebuilt/prog" "$BLOG"
"$FNT" import-xray --warehouse "$WH" --run-id basic --chunk-events 100 --force \
  --binary "$T/rebuilt/prog" "$BLOG" | grep -q "0 filed, $chunks already filed" || fail "--force re-import"
ok "--force past the build id: already filed"
echo "ok: import-xray binary checks"
