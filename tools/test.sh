#!/usr/bin/env bash
# The test command: installs what is missing, builds the Release and the
# ASan+UBSan configurations, and runs every test under ctest in both.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh release
tools/setup.sh asan
status=0
for dir in build build-asan; do
  echo "== ctest in $dir"
  (cd "$dir" && ctest --output-on-failure -j"$(nproc)" --timeout 900) || status=1
done
exit $status
