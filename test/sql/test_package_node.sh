#!/usr/bin/env bash
# test_package_node.sh -- the npm package (node/): a copy of the source
# folder (so that its install step, which copies this build's fntrace.so in,
# never writes into the source tree) is `npm install`ed into a fresh folder
# as a packed package would be (--install-links), offline; then
# getLoadablePath(), the version and the SPEC §4 example through
# require('fntrace').load(db) with better-sqlite3@12.
. "$(dirname "$0")/lib.sh" package-node
: "${FNT_SOURCE:?FNT_SOURCE must name the source folder}"
. "$FNT_SOURCE/test/node/better_sqlite3.sh"

cp -r "$FNT_SOURCE/node" "$tmp/fntrace-node"
rm -f "$tmp/fntrace-node/fntrace.so"   # a developer's copy from a link install
mkdir "$tmp/app"
echo '{"name": "fntrace-app", "version": "1.0.0", "private": true}' > "$tmp/app/package.json"
(cd "$tmp/app" && FNTRACE_LOADABLE="$FNT_BUILD/fntrace.so" \
   npm install --offline --install-links --no-audit --no-fund --no-update-notifier \
       --loglevel=error "$tmp/fntrace-node")
nodeenv=(env NODE_PATH="$tmp/app/node_modules:$bsq_modules")
installed="$tmp/app/node_modules/fntrace"
expect "installed as a folder of its own, not a link" "no" "$([ -L "$installed" ] && echo yes || echo no)"
expect "getLoadablePath() is the package's own fntrace.so, this build's" "$installed/fntrace.so" \
       "$("${nodeenv[@]}" node -e "const p = require('fntrace').getLoadablePath();
         require('child_process').execFileSync('cmp', [p, process.argv[1]]); console.log(p)" \
         "$FNT_BUILD/fntrace.so" 2>&1)"
expect "package.json's version is the library's" \
       "$(sed -n 's/^#define FNT_VERSION_STRING "\(.*\)"/\1/p' "$FNT_SOURCE/store/fnt_store.h")" \
       "$(node -p "require('$installed/package.json').version")"
spec_example "require('fntrace').load(db): the SPEC example" - \
  "${nodeenv[@]}" node "$FNT_SOURCE/test/install/spec_example.js"
finish
