#!/usr/bin/env bash
# Installs what fntrace needs from Debian (when missing) and builds it.
#   tools/setup.sh            Release build in build/
#   tools/setup.sh asan       ASan+UBSan build in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in build-essential cmake pkg-config libsqlite3-dev sqlite3 libzstd-dev zlib1g-dev \
           libxxhash-dev python3 python3-pytest python3-scipy clang llvm libclang-rt-14-dev \
           linux-perf mandoc man-db python3-venv python3-pip dpkg-dev \
           libavro-dev libjansson-dev python3-avro; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || need+=("$pkg")
done
# Node.js (for the better-sqlite3 client test) may come from elsewhere.
command -v node >/dev/null || need+=(nodejs npm)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi

case "${1:-release}" in
  release) dir=build;      flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan)    dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DFNT_SANITIZE=ON) ;;
  *) echo "usage: tools/setup.sh [release|asan]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
