#!/usr/bin/env bash
# test_surface.sh -- the extension's SQL surface, compared with the golden
# file test/sql/surface.expected so that an accidental change shows: every
# fnt%/fn_% function (name/arity and the flags that matter to callers:
# DIRECTONLY on everything that writes or touches files, DETERMINISTIC,
# INNOCUOUS), every module, and each module's columns as declared.
# After an intended change:  FNT_SURFACE_UPDATE=1 bash test/sql/test_surface.sh
set -euo pipefail
: "${FNT_BUILD:?FNT_BUILD must name the build folder}"
command -v sqlite3 >/dev/null || { echo "sqlite3 shell not found"; exit 77; }
src="${FNT_SOURCE:-$(cd "$(dirname "$0")/../.." && pwd)}"
golden="$src/test/sql/surface.expected"

got=$( { echo ".load $FNT_BUILD/fntrace"; cat <<'SQL'; } \
  | env -u FNT_WAREHOUSE LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch -bail :memory: 2>&1
.mode list
SELECT 'function ' || name || '/' || narg
       || iif(flags & 0x000800, ' DETERMINISTIC', '')
       || iif(flags & 0x080000, ' DIRECTONLY', '')
       || iif(flags & 0x200000, ' INNOCUOUS', '')
       || iif(flags & 0x100000, ' SUBTYPE', '')
       || iif(flags & ~0x380800, printf(' flags=0x%x', flags & ~0x380800), '')
  FROM pragma_function_list
 WHERE name LIKE 'fnt%' OR name LIKE 'fn\_%' ESCAPE '\'
 ORDER BY name, narg;
SELECT 'module ' || m.name || '(' ||
       (SELECT group_concat(c.name || ' ' || c.type
                            || iif(c.hidden, ' HIDDEN', '')
                            || iif(c."notnull", ' NOT NULL', ''), ', ')
          FROM pragma_table_xinfo(m.name) AS c) || ')'
  FROM pragma_module_list AS m
 WHERE m.name LIKE 'fnt%' OR m.name LIKE 'fn\_%' ESCAPE '\'
 ORDER BY m.name;
SQL
)

if [ "${FNT_SURFACE_UPDATE:-}" = 1 ]; then
  printf '%s\n' "$got" > "$golden"
  echo "wrote $golden"
  exit 0
fi
if [ "$got" = "$(cat "$golden")" ]; then
  echo "ok   SQL surface matches $golden"
  exit 0
fi
echo "FAIL the SQL surface changed (if intended: FNT_SURFACE_UPDATE=1 bash $0)"
diff <(cat "$golden") <(printf '%s\n' "$got") || true
exit 1
