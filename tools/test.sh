#!/usr/bin/env bash
# The test command: installs what is missing, builds the Release and the
# ASan+UBSan configurations, and runs every test under ctest in both.
# --soak [--seconds N]: then also test/soak/soak.sh on the Release build
# (several minutes; not part of the default run).
set -euo pipefail
cd "$(dirname "$0")/.."
soak=0; soak_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --soak) soak=1; shift ;;
    --seconds) soak_args+=(--seconds "$2"); shift 2 ;;
    *) echo "usage: tools/test.sh [--soak [--seconds N]]" >&2; exit 2 ;;
  esac
done
tools/setup.sh release
tools/setup.sh asan
status=0
for dir in build build-asan; do
  echo "== ctest in $dir"
  (cd "$dir" && ctest --output-on-failure -j"$(nproc)" --timeout 900) || status=1
done
if [ $soak = 1 ]; then
  echo "== soak"
  FNT_TEST_TMP="$PWD/build/test-tmp" test/soak/soak.sh --build build "${soak_args[@]}" || status=1
fi
exit $status
