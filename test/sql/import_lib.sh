# import_lib.sh -- what the importers' size and format tests share; source
# it with the test's scratch name and the tools it needs:
#   . "$FNT_SOURCE/test/sql/import_lib.sh" import_chrome clang
# Skips (exit 77) when a tool is missing; makes $T (emptied, removed at
# exit) and $WH, a warehouse in it; defines fail, q and peak_rss_kb.
set -euo pipefail
: "${FNT_BUILD:?}" "${FNT_SOURCE:?}" "${FNT_TEST_TMP:?}"
FNT="$FNT_BUILD/fnt"
T="$FNT_TEST_TMP/$1"
shift
for tool in sqlite3 /usr/bin/python3 "$@"; do
  command -v "$tool" >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
rm -rf "$T"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
WH="$T/wh"

fail(){ echo "FAIL: $*" >&2; exit 1; }

# q: the SQL on stdin through the sqlite3 shell, fntrace loaded, $WH open,
# tab-separated rows without headers.
q(){
  { printf '.bail on\n.load %s/fntrace\n.mode tabs\n.headers off\n' "$FNT_BUILD"
    printf ".output /dev/null\nSELECT fnt_open('%s');\n.output stdout\n" "$WH"
    cat; } | LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory:
}

# peak_rss_kb CMD...: runs CMD (its stdout dropped) and prints its peak RSS
# in KiB (getrusage of the child); fails when CMD does.
peak_rss_kb(){
  /usr/bin/python3 - "$@" <<'PY'
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
if r.returncode != 0:
    sys.exit('exit %d: %s' % (r.returncode, ' '.join(sys.argv[1:])))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
