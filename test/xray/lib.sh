# lib.sh -- what the XRay shell tests share; source it with the test's name:
#   . "$FNT_SOURCE/test/xray/lib.sh" import_xray
# It checks the tools (exit 77 without clang, llvm-xray, sqlite3 or
# python3), makes a fresh scratch folder $T ($FNT_TEST_TMP/NAME), builds
# test/xray/prog.c with XRay into $T/prog (exit 77 when clang has no XRay
# runtime), and defines $FNT, $XFLAGS, fail and q.
set -euo pipefail
: "${FNT_BUILD:?}" "${FNT_SOURCE:?}" "${FNT_TEST_TMP:?}"
FNT="$FNT_BUILD/fnt"
T="$FNT_TEST_TMP/$1"
# every function instrumented (the default threshold skips small ones)
XFLAGS="-O2 -fxray-instrument -fxray-instruction-threshold=1"

for tool in clang llvm-xray sqlite3 /usr/bin/python3; do
  command -v "$tool" >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
rm -rf "$T"
mkdir -p "$T"
# shellcheck disable=SC2086
if ! clang $XFLAGS -pthread -o "$T/prog" "$FNT_SOURCE/test/xray/prog.c" 2>"$T/clang.err"; then
  cat "$T/clang.err"
  grep -q 'xray' "$T/clang.err" && { echo "skip: no XRay runtime for clang"; exit 77; }
  exit 1
fi

fail(){ echo "FAIL: $*" >&2; exit 1; }
# The sqlite3 shell with the extension loaded and warehouse $1 open; SQL on stdin.
q(){
  local wh=$1; shift
  { printf '.bail on\n.load %s/fntrace\n.mode tabs\n.headers off\n' "$FNT_BUILD"
    printf ".output /dev/null\nSELECT fnt_open('%s');\n.output stdout\n" "$wh"
    cat; } | LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory:
}
