#!/usr/bin/env bash
# test_export_iceberg.sh -- `fnt export-iceberg` end to end, read by outside
# readers: DuckDB (npm @duckdb/node-api, its own Parquet reader) reads every
# exported Parquet file and must return what the SQL tables return through
# the sqlite3 shell, types, field ids and statistics included
# (test/iceberg/check_duckdb.js); Debian's python3-avro reads every
# manifest list and manifest and checks them and the metadata JSON against
# the Iceberg v2 spec and the files on disk (test/iceberg/check_avro.py).
# icebird (npm), an Iceberg reader of its own, reads every table through its
# metadata, manifests and Parquet files and must return the same rows.
# Then: an incremental export adds exactly the new files (and rewrites a run
# that gained a chunk); an export with nothing new adds nothing; an export
# killed (SIGKILL) after each step leaves the previous state readable and
# the next export completes it.
# @duckdb/node-api and icebird are installed with npm into the scratch
# folder once; skipped (77) only when node, npm or the npm registry is
# unreachable, or python3-avro is missing.
. "$(dirname "$0")/lib.sh" export_iceberg
: "${FNT_SOURCE:?FNT_SOURCE must name the source folder}"
command -v node >/dev/null || { echo "node not found"; exit 77; }
command -v npm >/dev/null || { echo "npm not found"; exit 77; }
py=/usr/bin/python3
"$py" -c 'import avro' 2>/dev/null || { echo "python3-avro not installed"; exit 77; }

mods="${FNT_TEST_TMP:-/tmp}/iceberg-readers"
mkdir -p "$mods"
if ! (cd "$mods" && node -e "require('@duckdb/node-api')" && [ -d node_modules/icebird ]) 2>/dev/null; then
  echo "installing @duckdb/node-api and icebird into $mods"
  [ -f "$mods/package.json" ] ||
    echo '{"name": "fntrace-iceberg-check", "version": "1.0.0", "private": true}' > "$mods/package.json"
  (cd "$mods" && npm install --no-audit --no-fund --no-update-notifier --loglevel=error \
                   @duckdb/node-api icebird) || { echo "npm install @duckdb/node-api icebird failed"; exit 77; }
fi
export NODE_PATH="$mods/node_modules"
# An ES module resolves packages from its own folder (NODE_PATH does not
# apply): run icebird's check from beside its node_modules.
cp "$FNT_SOURCE/test/iceberg/check_icebird.mjs" "$mods/check_icebird_$$.mjs"
trap 'rm -rf "$tmp" "$mods/check_icebird_$$.mjs"' EXIT

fnt="$FNT_BUILD/fnt"
lake="$tmp/lake"
gen() { "$py" "$FNT_SOURCE/test/iceberg/make_chunks.py" "$tmp" "$@"; }
file_chunk() { echo "SELECT fnt_file_chunk(readfile('$tmp/$1.json'));" | sql; }
file_profile() { echo "SELECT fnt_file_profile(readfile('$tmp/$1.json'));" | sql; }
export_all() { env LD_PRELOAD="${FNT_PRELOAD:-}" "$fnt" export-iceberg "$lake" --warehouse "$wh" --row-group-rows 5000 "$@"; }
avro_check() { "$py" "$FNT_SOURCE/test/iceberg/check_avro.py" "$lake" "$@"; }
expect_rows() { node "$FNT_SOURCE/test/iceberg/check_duckdb.js" expect "$FNT_BUILD/fntrace" "$wh" "$1"; }
duck_check() { node "$FNT_SOURCE/test/iceberg/check_duckdb.js" check "$1" "$2" ${3:+"$3"}; }
icebird_check() { node "$mods/check_icebird_$$.mjs" "$1" "$lake"; }
# step NAME COMMAND...: runs a check, its output shown, its status counted.
step() {
  local name=$1; shift
  if "$@" > "$tmp/out" 2>&1; then echo "ok   $name ($(tail -1 "$tmp/out"))"
  else echo "FAIL $name"; cat "$tmp/out"; fail=1; fi
}
# jget FILE EXPR: EXPR over the JSON of FILE as d; a tuple prints space-separated.
jget() {
  "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(*v) if isinstance(v, tuple) else print(v)" "$@"
}

# Usage errors name what is wrong.
got=$(env LD_PRELOAD="${FNT_PRELOAD:-}" "$fnt" export-iceberg "$lake" --warehouse "$wh" --table nope 2>&1; echo "rc=$?")
expect "unknown table refused" 1 "$(grep -c "not 'nope'" <<<"$got")"

got=$(env LD_PRELOAD="${FNT_PRELOAD:-}" "$fnt" export-iceberg --warehouse "$wh" 2>&1; echo "rc=$?")
expect "no DEST refused" 1 "$(grep -c 'no DEST given' <<<"$got")"
got=$(env LD_PRELOAD="${FNT_PRELOAD:-}" "$fnt" export-iceberg --help)
expect "--help has the tables and an example" 3 "$(grep -c 'partitioned by identity(run_id)\|^example:' <<<"$got")"

# Round 1: two runs (one with 2 of its 3 chunks) in two repos, a profile.
gen a0 run-a acme/widget c1 0 3 6000
gen a1 run-a acme/widget c1 1 3 6000
gen a2 run-a acme/widget c1 2 3 6000
gen b0 "run b/ü" "other repo/ü" - 0 1 3000
gen c0 run-c acme/widget "" 0 1 2000
gen p1 --profile prof-1 acme/widget 3000
gen p2 --profile prof-2 third 20
for c in a0 a1 b0; do file_chunk $c >/dev/null; done
file_profile p1 >/dev/null
step "first export" export_all
expect_rows "$tmp/exp1.json"
step "avro: manifests, lists, metadata (round 1)" avro_check "$tmp/live1.json"
step "duckdb: rows, types, field ids, statistics (round 1)" duck_check "$tmp/exp1.json" "$tmp/live1.json" "$lake"
step "icebird: the tables read as Iceberg tables (round 1)" icebird_check "$tmp/exp1.json"
expect "events in 2 row groups or more" True "$(jget "$tmp/live1.json" "d['events']['live'][0]['records'] > 5000 or d['events']['live'][1]['records'] > 5000")"

# Round 2: run-a gains its last chunk, a new run, a new profile in a new repo.
for c in a2 c0; do file_chunk $c >/dev/null; done
file_profile p2 >/dev/null
step "incremental export" export_all
expect_rows "$tmp/exp2.json"
step "avro: only the new files added, run-a's old file deleted" avro_check "$tmp/live2.json" --prev "$tmp/live1.json" --exact-disk
step "duckdb (round 2)" duck_check "$tmp/exp2.json" "$tmp/live2.json"
step "icebird (round 2: run-a's old file deleted)" icebird_check "$tmp/exp2.json"
expect "events: run-a and run-c added, run-a's first file deleted" "2 1" \
  "$(jget "$tmp/live2.json" "len(d['events']['added']), len(d['events']['deleted'])")"
expect "calls: as events (run-a's calls change with its new chunk)" "2 1" \
  "$(jget "$tmp/live2.json" "len(d['calls']['added']), len(d['calls']['deleted'])")"
expect "runs and profiles: one new file each (run rows of run-a and run-c share a repo)" "1 1 0 0" \
  "$(jget "$tmp/live2.json" "len(d['runs']['added']), len(d['profiles']['added']), len(d['runs']['deleted']), len(d['profiles']['deleted'])")"

# Nothing new: no new snapshot, no new metadata version.
got=$(export_all)
expect "nothing new: up to date" 4 "$(grep -c 'up to date' <<<"$got")"
step "avro: unchanged" avro_check "$tmp/live3.json" --prev "$tmp/live2.json" --exact-disk
expect "same metadata version" "2 2 2 2" "$(jget "$tmp/live3.json" "d['events']['version'], d['runs']['version'], d['profiles']['version'], d['calls']['version']")"

# Killed after each step: the previous state stays readable; the next
# export completes (and reads as the warehouse).
prev_live="$tmp/live3.json"; prev_exp="$tmp/exp2.json"; n=0
for at in data manifest list metadata; do
  n=$((n+1))
  gen "k$n" "run-kill-$at" crash x 0 1 700
  file_chunk "k$n" >/dev/null
  rc=0; FNT_EXPORT_ICEBERG_CRASH=$at export_all > "$tmp/out" 2>&1 || rc=$?
  expect "killed after $at" 137 "$rc"
  step "avro: after the kill at $at" avro_check "$tmp/kill$n.json"
  if [ "$at" = metadata ]; then
    # Published but the hint not yet rewritten: readers of the hint see the
    # previous state, readers that probe see the new one; both complete.
    expect "hint still names the previous version" "$(jget "$prev_live" "d['events']['version']")" \
      "$(jget "$tmp/kill$n.json" "d['events']['version']")"
  fi
  step "duckdb: the previous rows after the kill at $at" duck_check "$prev_exp" "$tmp/kill$n.json"
  step "icebird: the previous rows after the kill at $at" icebird_check "$prev_exp"
  step "export after the kill at $at" export_all
  expect_rows "$tmp/expk$n.json"
  step "avro: completed after $at" avro_check "$tmp/livek$n.json" --prev "$prev_live"
  step "duckdb: completed after $at" duck_check "$tmp/expk$n.json" "$tmp/livek$n.json"
  step "icebird: completed after $at" icebird_check "$tmp/expk$n.json"
  prev_live="$tmp/livek$n.json"; prev_exp="$tmp/expk$n.json"
done

# A real kill -9 at whatever point the export has reached: the tables stay
# valid Iceberg tables (the old state or the new), and the next export
# brings them to the warehouse.
for delay in 0.05 0.2; do
  n=$((n+1))
  gen "k$n" "run-kill-$n" crash x 0 1 30000
  file_chunk "k$n" >/dev/null
  env LD_PRELOAD="${FNT_PRELOAD:-}" "$fnt" export-iceberg "$lake" --warehouse "$wh" --row-group-rows 5000 \
    > "$tmp/out" 2>&1 & pid=$!
  sleep "$delay"; kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  step "avro: valid after kill -9 at ${delay}s" avro_check "$tmp/kill$n.json"
  step "export after kill -9 at ${delay}s" export_all
  expect_rows "$tmp/expk$n.json"
  step "avro: completed after kill -9 at ${delay}s" avro_check "$tmp/livek$n.json" --prev "$prev_live"
  step "duckdb: completed after kill -9 at ${delay}s" duck_check "$tmp/expk$n.json" "$tmp/livek$n.json"
  step "icebird: completed after kill -9 at ${delay}s" icebird_check "$tmp/expk$n.json"
  prev_live="$tmp/livek$n.json"
done

# Two exports racing: each table's next version is published by one of
# them (the other stops with "another export published this version" or
# finds the table up to date); the tables read as the warehouse.
n=$((n+1))
gen "k$n" "run-race" acme/widget c2 0 1 4000
file_chunk "k$n" >/dev/null
export_all > "$tmp/race1" 2>&1 & p1=$!
export_all > "$tmp/race2" 2>&1 & p2=$!
wait $p1 || true; wait $p2 || true
if grep -v 'snapshot\|up to date\|another export published' "$tmp/race1" "$tmp/race2" | grep -q .; then
  echo "FAIL racing exports"; cat "$tmp/race1" "$tmp/race2"; fail=1
else
  echo "ok   racing exports: every line a snapshot, up to date, or the lost race"
fi
export_all >/dev/null 2>&1 || true       # completes a table whose race was lost
expect_rows "$tmp/expk$n.json"
step "avro: after racing exports" avro_check "$tmp/livek$n.json" --prev "$prev_live"
step "duckdb: after racing exports" duck_check "$tmp/expk$n.json" "$tmp/livek$n.json"
prev_live="$tmp/livek$n.json"

# The warehouse snapshot exported last expired: the tables are rewritten
# whole, every old file deleted, and still read as SQL does.
n=$((n+1))
gen "k$n" "run-after-expiry" acme/widget c2 0 1 500
file_chunk "k$n" >/dev/null
env LD_PRELOAD="${FNT_PRELOAD:-}" "$fnt" expire --warehouse "$wh" --keep-seconds 0 >/dev/null
got=$(export_all)
expect "expired: rewritten whole" 4 "$(grep -c 'rewriting the table whole' <<<"$got")"
expect_rows "$tmp/expk$n.json"
step "avro: every old file deleted, all rows added again" avro_check "$tmp/livek$n.json" --prev "$prev_live" --exact-disk
expect "nothing of the previous snapshot left live" 0 \
  "$(jget "$tmp/livek$n.json" "sum(len(set(f['path'] for f in d[t]['live']) & set(f['path'] for f in json.load(open('$prev_live'))[t]['live'])) for t in d)")"
step "duckdb: after the rewrite" duck_check "$tmp/expk$n.json" "$tmp/livek$n.json"
step "icebird: after the rewrite" icebird_check "$tmp/expk$n.json"

# No warehouse there: refused, nothing created.
got=$(env LD_PRELOAD="${FNT_PRELOAD:-}" "$fnt" export-iceberg "$tmp/lake-none" --warehouse "$tmp/no-such" 2>&1; echo "rc=$?")
expect "a missing warehouse refused, not created" "1 no" \
  "$(grep -c "no-such.*rc=1" <<<"$(tr '\n' ' ' <<<"$got")") $([ -e "$tmp/no-such" ] || [ -e "$tmp/lake-none" ] && echo yes || echo no)"

# Another warehouse cannot append to these tables.
other="$tmp/other-warehouse"
echo "SELECT fnt_open('$other') IS NULL;" | sql >/dev/null
got=$(env LD_PRELOAD="${FNT_PRELOAD:-}" "$fnt" export-iceberg "$lake" --warehouse "$other" 2>&1 || true)
expect "another warehouse refused" 1 "$(grep -c 'exported from the warehouse' <<<"$got")"

finish
