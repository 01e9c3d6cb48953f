#!/usr/bin/env bash
# test_node_client.sh -- the extension in Node's better-sqlite3@12, a third
# real client (test/node/client.js).  better-sqlite3 is installed with npm
# into the scratch folder once (it builds its native module from source,
# against the local Node headers), then reused.  Skipped (77) only when node
# or npm is absent.
set -euo pipefail
: "${FNT_BUILD:?FNT_BUILD must name the build folder}"
: "${FNT_SOURCE:?FNT_SOURCE must name the source folder}"
command -v node >/dev/null || { echo "node not found"; exit 77; }
command -v npm >/dev/null || { echo "npm not found"; exit 77; }

scratch="${FNT_TEST_TMP:-/tmp}"
mods="$scratch/node-client"
tmp="$scratch/node-client-run-$$"
mkdir -p "$mods" "$tmp"
trap 'rm -rf "$tmp"' EXIT

if ! (cd "$mods" && node -e "new (require('better-sqlite3'))(':memory:').close()") 2>/dev/null; then
  echo "installing better-sqlite3@12 into $mods"
  [ -f "$mods/package.json" ] ||
    echo '{"name": "fntrace-node-client", "version": "1.0.0", "private": true}' > "$mods/package.json"
  nodedir=()
  # Build against the installed headers instead of downloading them.
  [ -f /usr/include/node/node.h ] && nodedir=(--nodedir=/usr)
  (cd "$mods" && npm install --no-audit --no-fund --no-update-notifier --loglevel=error \
                   "${nodedir[@]}" better-sqlite3@12)
fi

env NODE_PATH="$mods/node_modules" LD_PRELOAD="${FNT_PRELOAD:-}" \
  node "$FNT_SOURCE/test/node/client.js" "$FNT_BUILD/fntrace" "$tmp/warehouse"
