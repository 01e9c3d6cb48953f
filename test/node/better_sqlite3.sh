# shellcheck shell=bash
# better_sqlite3.sh -- sourced by the Node tests: makes $bsq_modules a
# node_modules folder holding better-sqlite3@12.  It is installed with npm
# into the scratch folder once (it builds its native module from source,
# against the local Node headers), under a lock since tests run in
# parallel, then reused.  Exits 77 (skip) only when node or npm is absent.
command -v node >/dev/null || { echo "node not found"; exit 77; }
command -v npm >/dev/null || { echo "npm not found"; exit 77; }

bsq_dir="${FNT_TEST_TMP:-/tmp}/node-client"
bsq_modules="$bsq_dir/node_modules"
mkdir -p "$bsq_dir"
(
  flock 9
  if ! (cd "$bsq_dir" && node -e "new (require('better-sqlite3'))(':memory:').close()") 2>/dev/null; then
    echo "installing better-sqlite3@12 into $bsq_dir"
    [ -f "$bsq_dir/package.json" ] ||
      echo '{"name": "fntrace-node-client", "version": "1.0.0", "private": true}' > "$bsq_dir/package.json"
    nodedir=()
    # Build against the installed headers instead of downloading them.
    [ -f /usr/include/node/node.h ] && nodedir=(--nodedir=/usr)
    (cd "$bsq_dir" && npm install --no-audit --no-fund --no-update-notifier --loglevel=error \
                       "${nodedir[@]}" better-sqlite3@12)
  fi
) 9>"$bsq_dir.lock"
