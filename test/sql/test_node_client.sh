#!/usr/bin/env bash
# test_node_client.sh -- the extension in Node's better-sqlite3@12, a third
# real client (test/node/client.js).  Skipped (77) only when node or npm is
# absent.
set -euo pipefail
: "${FNT_BUILD:?FNT_BUILD must name the build folder}"
: "${FNT_SOURCE:?FNT_SOURCE must name the source folder}"
. "$FNT_SOURCE/test/node/better_sqlite3.sh"

tmp="${FNT_TEST_TMP:-/tmp}/node-client-run-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

env NODE_PATH="$bsq_modules" LD_PRELOAD="${FNT_PRELOAD:-}" \
  node "$FNT_SOURCE/test/node/client.js" "$FNT_BUILD/fntrace" "$tmp/warehouse"
