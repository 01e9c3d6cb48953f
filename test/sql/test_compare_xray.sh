#!/usr/bin/env bash
# test_compare_xray.sh -- `fnt compare` and fnt_compare on real traces: the
# XRay demo program test/xray/prog.c built twice, once as is and once with
# a deliberate slowdown in leaf_work (-DPROG_SLOW_LEAF), each traced 5 times
# (runs interleaved, so that a change in the machine's load hits both
# sides) and filed under two commits of one repo.  `fnt compare` must name
# leaf_work first, slower with p < 0.05, and exit 3; the functions that did
# not change and that it flags anyway (false positives) are printed.  Then
# the table without a terminal (no colour), the SQL function's agreement,
# the same commit on both sides (exit 0), errors and usage.  Last, `fnt
# diff` and fnt_diff of two of the runs: each side equal to its run's heat,
# leaf_work's median call (p50) much longer in the slow run.
set -euo pipefail
: "${FNT_BUILD:?}" "${FNT_SOURCE:?}" "${FNT_TEST_TMP:?}"
FNT="$FNT_BUILD/fnt"
T="$FNT_TEST_TMP/compare_xray"
WH="$T/wh"
REPO=test/compare

for tool in clang sqlite3 /usr/bin/python3; do
  command -v "$tool" >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
fail(){ echo "FAIL: $*" >&2; exit 1; }
rm -rf "$T"
mkdir -p "$T"

build(){   # OUT [CFLAGS...]
  local out=$1; shift
  if ! clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -pthread "$@" \
       -o "$out" "$FNT_SOURCE/test/xray/prog.c" 2>"$T/clang.err"; then
    cat "$T/clang.err"
    grep -q 'xray' "$T/clang.err" && { echo "skip: no XRay runtime for clang"; exit 77; }
    exit 1
  fi
}
build "$T/prog"
# Ten times slower than a run's leaf_work could look from a few ms of
# preemption: 200,000 more rounds (~2.5 ms a run) let a loaded machine
# (the suite's other tests beside it) put one base run above the slow ones.
build "$T/prog_slow" -DPROG_SLOW_LEAF=2000000

# --- 5 runs of each, interleaved, filed under commits "base" and "slow" ----
for i in 1 2 3 4 5; do
  for commit in base slow; do
    bin="$T/prog"; [ "$commit" = slow ] && bin="$T/prog_slow"
    mkdir -p "$T/$commit-$i"
    XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=$T/$commit-$i/" \
    XRAY_BASIC_OPTIONS="func_duration_threshold_us=0 max_stack_depth=4096" \
      "$bin" 20 >/dev/null 2>"$T/run.err"
    "$FNT" import-xray --warehouse "$WH" --repo "$REPO" --commit "$commit" \
           --run-id "$commit-$i" --binary "$bin" "$T/$commit-$i"/prog* >/dev/null \
      || fail "import of $commit-$i failed"
  done
done

# --- fnt compare --json: leaf_work first, slower, p < 0.05; exit 3 ----------
rc=0
"$FNT" compare --warehouse "$WH" --repo "$REPO" --alpha 0.05 --json base slow \
  >"$T/compare.json" || rc=$?
[ "$rc" = 3 ] || { cat "$T/compare.json"; fail "exit $rc with a regression, want 3"; }
/usr/bin/python3 - "$T/compare.json" <<'PY' || fail "fnt compare --json"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["rows"]
assert (doc["runs_a"], doc["runs_b"]) == (5, 5), doc
# leaf_work has the smallest p-value, but need not be the very first row:
# an unchanged function that takes nanoseconds can, by the machine's noise,
# be apart in all 5 runs too (the same p) with a larger ratio.
first = [r for r in rows if r["symbol"] == "leaf_work"][0]
assert first["key"] == "?leaf_work", first
assert first["p_value"] == rows[0]["p_value"], (first, rows[0])
assert first["p_value"] < 0.05 and first["ratio"] > 2, first
assert first["verdict"] == "slower", first
assert doc["functions"] == len(rows) >= 8, doc
# leaf_work's callers include it; what else does it flag?
unchanged = {"fib", "is_even", "is_odd", "tail_caller", "tail_chain",
             "tail_to_libc"}
flagged = [(r["symbol"], r["verdict"], round(r["p_value"], 4), round(r["ratio"], 3))
           for r in rows if r["verdict"] and r["symbol"] in unchanged]
print("false positives (unchanged functions flagged at p <= 0.05):",
      flagged or "none")
near = [(r["symbol"], round(r["p_value"], 4), round(r["ratio"], 3)) for r in rows
        if r["symbol"] in unchanged and not r["verdict"]
        and r["p_value"] is not None and r["p_value"] <= 0.05]
print("unchanged functions at p <= 0.05 within the ratio threshold:",
      near or "none")
print("regressions:", doc["regressions"], [r["symbol"] for r in rows
                                           if r["verdict"] == "slower"])
PY

# --- the table, piped: no colour codes, leaf_work on the first row ---------
rc=0
"$FNT" compare --warehouse "$WH" --repo "$REPO" --alpha 0.05 base slow >"$T/table" || rc=$?
cat "$T/table"
[ "$rc" = 3 ] || fail "table: exit $rc, want 3"
! grep -q $'\033' "$T/table" || fail "colour codes in piped output"
grep -Eq '^slower +0\.0122 .* leaf_work$' "$T/table" || fail "table: leaf_work not slower at p 0.0122"
grep -q "slower with p <= 0.05 and ratio >= 1.05" "$T/table" || fail "table: no summary line"
# on a terminal (script(1) gives it one): leaf_work's row in red, unless NO_COLOR
if command -v script >/dev/null; then
  cmd="$FNT compare --warehouse $WH --repo $REPO --alpha 0.05 base slow"
  script -qec "$cmd" /dev/null >"$T/tty" || true
  grep -q $'\033\[31mslower .*leaf_work' "$T/tty" || { cat -v "$T/tty"; fail "no colour on a terminal"; }
  NO_COLOR=1 script -qec "$cmd" /dev/null >"$T/tty" || true
  ! grep -q $'\033' "$T/tty" || fail "colour despite NO_COLOR"
else
  echo "note: no script(1), colour on a terminal not checked"
fi
# the default alpha (0.01) cannot be reached with 5 runs a side: exit 0
"$FNT" compare --warehouse "$WH" --repo "$REPO" base slow >/dev/null \
  || fail "alpha 0.01 with 5 runs a side flagged something"

# --- the SQL function agrees with the CLI ------------------------------------
got=$( { printf '.load %s/fntrace\n.mode tabs\n.output /dev/null\n' "$FNT_BUILD"
         printf "SELECT fnt_open('%s');\n.output stdout\n" "$WH"
         printf "SELECT symbol, runs_a, runs_b, round(p_value, 4) FROM fnt_compare('%s', 'base', 'slow') WHERE symbol = 'leaf_work';\n" "$REPO"
       } | LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory:)
[ "$got" = "$(printf 'leaf_work\t5\t5\t0.0122')" ] || fail "SQL fnt_compare: got '$got'"

# --- the same commit on both sides: nothing slower, exit 0 ------------------
"$FNT" compare --warehouse "$WH" --repo "$REPO" --alpha 0.5 base base >"$T/same" \
  || { cat "$T/same"; fail "base against base: exit $?"; }
grep -q "^0 function(s) slower" "$T/same" || fail "base against base flagged something"

# --- errors and usage ---------------------------------------------------------
expect_exit(){   # WANT PATTERN ARGS...
  local want=$1 pat=$2 rc=0; shift 2
  "$FNT" compare --warehouse "$WH" "$@" >"$T/out" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat "$T/out"; fail "fnt compare $*: exit $rc, want $want"; }
  grep -q -- "$pat" "$T/out" || { cat "$T/out"; fail "fnt compare $*: no '$pat'"; }
}
expect_exit 1 "no runs of repo 'test/compare' under commit 'nope'" --repo "$REPO" base nope
expect_exit 1 "under commit 'base'" --repo other/repo base slow
expect_exit 2 "--repo REPO is required" base slow
expect_exit 2 "expected COMMIT_A and COMMIT_B" --repo "$REPO" base
expect_exit 2 "--alpha: expected a number from 0 to 1" --repo "$REPO" --alpha 2 base slow
expect_exit 2 "--min-ratio" --repo "$REPO" --min-ratio 0.5 base slow
expect_exit 2 "--top: expected a positive number" --repo "$REPO" --top 0 base slow
"$FNT" compare --help | grep -q "3  at least one function is slower" || fail "--help: exit codes"

# --- fnt_diff of one run of each: the heat of each run, leaf_work's p50 ------
q(){ { printf '.load %s/fntrace\n.mode tabs\n.output /dev/null\n' "$FNT_BUILD"
       printf "SELECT fnt_open('%s');\n.output stdout\n" "$WH"; cat; } \
     | LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory:; }
for side in a b; do
  run=base-1; [ "$side" = b ] && run=slow-1
  got=$(q <<<"SELECT key, calls_$side, inclusive_$side, self_$side FROM fnt_diff('base-1', 'slow-1') WHERE calls_$side > 0 ORDER BY key;")
  want=$(q <<<"SELECT key, calls, inclusive_ns, self_ns FROM fnt_heat('$run') ORDER BY key;")
  [ -n "$want" ] && [ "$got" = "$want" ] || fail "fnt_diff side $side differs from fnt_heat('$run')"
done
got=$(q <<<"SELECT p50_b > 5 * p50_a FROM fnt_diff('base-1', 'slow-1') WHERE key = '?leaf_work';")
[ "$got" = 1 ] || fail "leaf_work's p50 in the slow run: '$got'"
got=$(q <<<"SELECT count(*), count(p50_b) FROM fnt_diff('base-1', 'no-such-run');")
[ "$got" = "$(printf '10\t0')" ] || fail "fnt_diff against an unknown run: '$got'"
"$FNT" diff --warehouse "$WH" --top 4 base-1 slow-1 >"$T/diff" || fail "fnt diff: exit $?"
cat "$T/diff"
sed -n 1p "$T/diff" | grep -q "^base-1 -> slow-1$" || fail "fnt diff: no header"
[ "$(grep -c . "$T/diff")" = 7 ] || fail "fnt diff --top 4: not 4 rows and the rest line"
# the change column (3rd) comes in descending order
awk 'NR>=4 && NR<=7 {print $3}' "$T/diff" | sort -g -r -c || fail "fnt diff: not largest slowdown first"
rc=0; "$FNT" diff --warehouse "$WH" base-1 nope 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "no calls in run 'nope'" "$T/err" || fail "fnt diff of an unknown run: exit $rc"
rc=0; "$FNT" diff --warehouse "$WH" base-1 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "fnt diff with one run: exit $rc, want 2"
echo "ok: compare on real traces"
