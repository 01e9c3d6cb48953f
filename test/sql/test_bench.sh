#!/usr/bin/env bash
# test_bench.sh -- a smoke test of `fnt bench`: a small run of every system
# (fntrace C API and SQL, plain and normalized SQLite), of the snapshot
# warehouse, of comparing two commits and of fnt_timeline's zoom, then of
# fntrace alone on the tree-shaped trace (--shape tree); the
# table is printed, the JSON after it parses, and every figure is there with a number.  Figures themselves are not judged here:
# 20,000 events under ASan say nothing about speed.  `fnt bench` itself
# fails when the systems disagree (window rows, scan rows, heat totals,
# rows of every call window and stack, account totals).
set -euo pipefail
: "${FNT_BUILD:?FNT_BUILD must name the build folder}"
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }

tmp="${FNT_TEST_TMP:-/tmp}/bench-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0

out=$("$FNT_BUILD/fnt" bench --events 20000 --threads 4 --windows 50 \
        --snapshot-runs 5 --snapshot-chunks 10 --snapshot-events 20-40 \
        --compare-runs 3 --compare-events 20000 \
        --dir "$tmp/scratch" --json 2>"$tmp/stderr") || {
  echo "FAIL fnt bench exited with $?"; cat "$tmp/stderr"; exit 1; }
echo "ok   fnt bench ran"

for want in "figure" "filing rate" "bytes on disk/event" "window p99" \
            "full scan, all columns" "heat of the run" "open + run summary" \
            "events alone" "calls alone" "10k-call window p50" \
            "stack at an instant p99" "account of the run" \
            "compare of two commits" "timeline p99" "export chrome" \
            "export speedscope" "flame of the run" "flame, 100k-call window"; do
  if grep -qF -- "$want" <<<"$out"; then echo "ok   table: $want"
  else echo "FAIL table lacks '$want'"; fail=1; fi
done

# Without --keep the scratch folders are gone; --dir itself (given) stays.
if [ -z "$(ls -A "$tmp/scratch")" ]; then echo "ok   scratch removed"
else echo "FAIL scratch left behind: $(ls "$tmp/scratch")"; fail=1; fi

printf '%s\n' "$out" | sed -n '/^{/,$p' > "$tmp/bench.json"
python3 - "$tmp/bench.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
want = ["filing_c", "filing_sql", "rss_filing_c", "rss_filing_sql", "bytes_c",
        "bytes_sql", "bytes_events_c", "bytes_calls_c", "window_p50_c",
        "window_p99_c", "window_p50_sql", "window_p99_sql", "scan_c", "scan_sql",
        "heat_c", "heat_sql", "calls_window_p50_c", "calls_window_p50_sql",
        "stack_p99_c", "stack_p99_sql", "account_c", "account_sql",
        "snapshots_open_c", "snapshots_open_sql", "compare_c", "timeline_p50_c",
        "timeline_p99_c", "timeline_p50_sql", "timeline_p99_sql",
        "export_chrome", "export_speedscope", "flame_run_c", "flame_window_c"]
# Calls exist in fntrace and in the plain calls table only; so do the
# bytes of calls (and the events + calls total).
no_norm = ("calls_", "stack_", "account_", "bytes_c", "bytes_sql", "bytes_calls_c")
figs = {f["figure"]: f for f in d["figures"]}
bad = [k for k in want if k not in figs]
assert not bad, "figures missing: %s" % bad
for k, f in figs.items():
    assert isinstance(f["fntrace"], (int, float)), (k, f)
    assert f["status"] in ("ok", "MISSED", "-"), (k, f)
    assert (f["target"] is None) == (f["status"] == "-"), (k, f)
    if not k.startswith(("snapshots", "compare", "timeline", "export", "flame")):  # fntrace's own
        alts = ("plain", "ratio_plain") if k.startswith(no_norm) else \
               ("plain", "normalized", "ratio_plain", "ratio_normalized")
        for alt in alts:
            assert isinstance(f[alt], (int, float)), (k, alt, f)
        if k.startswith(no_norm):
            assert f["normalized"] is None, (k, f)
    if not k.startswith("rss"):
        assert f["fntrace"] > 0, (k, f)
assert d["events"] == 20000 and d["threads"] == 4, d
assert d["cores"] >= 1 and "load_start" in d and "load_end" in d, d
assert d["snapshots"]["runs"] == 5 and d["snapshots"]["summary_rows"] == 5, d["snapshots"]
assert d["snapshots"]["chunks_per_run"] == 10, d["snapshots"]
assert (d["snapshots"]["chunk_events_min"], d["snapshots"]["chunk_events_max"]) == (20, 40), d["snapshots"]
s = d["snapshots"]
# Expiring all but the newest snapshot (the files aged past the grace hour)
# removes what only the history listed, and leaves less metadata.
assert s["expire_all_files"] > 0, s
assert 0 < s["metadata_file_bytes_current"] < s["metadata_file_bytes"], s
assert 0 < s["data_file_bytes_current"] <= s["data_file_bytes"], s
assert 8 <= d["trace"]["mean_depth"] <= 18, d["trace"]
for k in ("export_chrome", "export_speedscope",          # the copy's rate
          "timeline_p99_c", "timeline_p99_sql"):           # the widest frame's
    assert isinstance(figs[k]["floor"], (int, float)) and figs[k]["floor"] > 0, figs[k]
assert d["compare"]["runs_per_commit"] == 3 and d["compare"]["rows"] > 100, d["compare"]
print("ok   JSON: %d figures, all present" % len(figs))
PY

# --shape tree: a program's call tree, every fntrace line on it; its run's
# flame folds into a few stacks per function where the flat walk's has
# nearly one per call.
tree=$("$FNT_BUILD/fnt" bench --events 20000 --threads 4 --windows 20 --shape tree \
         --only fntrace --skip-snapshots --skip-compare \
         --dir "$tmp/scratch" --json 2>"$tmp/stderr") || {
  echo "FAIL fnt bench --shape tree exited with $?"; cat "$tmp/stderr"; exit 1; }
echo "ok   fnt bench --shape tree ran"
grep -q "shape tree" "$tmp/stderr" && echo "ok   progress names the shape" \
  || { echo "FAIL progress lacks the shape: $(head -3 "$tmp/stderr")"; fail=1; }
printf '%s\n' "$tree" | sed -n '/^{/,$p' > "$tmp/tree.json"
python3 - "$tmp/bench.json" "$tmp/tree.json" <<'PY' || fail=1
import json, sys
flat, tree = (json.load(open(f)) for f in sys.argv[1:3])
assert flat["shape"] == "flat" and tree["shape"] == "tree", (flat["shape"], tree["shape"])
assert tree["functions"] == 500 and flat["functions"] == 5000, (tree["functions"], flat["functions"])
assert tree["events"] == 20000 and tree["threads"] == 4, tree
assert 4 <= tree["trace"]["mean_depth"] <= 16 and tree["trace"]["max_depth"] <= 24, tree["trace"]
figs = {f["figure"]: f for f in tree["figures"]}
for k in ("filing_c", "filing_sql", "window_p99_c", "scan_c", "heat_c",
          "calls_window_p50_c", "stack_p99_c", "account_c", "timeline_p99_c",
          "timeline_p99_sql", "export_chrome", "flame_run_c", "flame_window_c"):
    assert k in figs and figs[k]["fntrace"] > 0, (k, figs.get(k))
assert 0 < tree["flame_run_stacks"] <= 4 * tree["functions"], tree["flame_run_stacks"]
assert tree["flame_run_stacks"] * 3 < flat["flame_run_stacks"], \
    (tree["flame_run_stacks"], flat["flame_run_stacks"])
print("ok   --shape tree: %d stacks in the run's flame (flat: %d)"
      % (tree["flame_run_stacks"], flat["flame_run_stacks"]))
PY

# Usage errors are exit status 2 with a message naming the option.
if "$FNT_BUILD/fnt" bench --events nope >/dev/null 2>"$tmp/err"; then
  echo "FAIL --events nope accepted"; fail=1
elif grep -q -- "--events" "$tmp/err"; then echo "ok   bad --events refused"
else echo "FAIL bad --events: $(cat "$tmp/err")"; fail=1; fi
if "$FNT_BUILD/fnt" bench --snapshot-events 40-20 >/dev/null 2>"$tmp/err"; then
  echo "FAIL --snapshot-events 40-20 accepted"; fail=1
elif grep -q -- "--snapshot-events" "$tmp/err"; then echo "ok   bad --snapshot-events refused"
else echo "FAIL bad --snapshot-events: $(cat "$tmp/err")"; fail=1; fi
if "$FNT_BUILD/fnt" bench --shape forest >/dev/null 2>"$tmp/err"; then
  echo "FAIL --shape forest accepted"; fail=1
elif grep -q -- "--shape" "$tmp/err" && grep -q "forest" "$tmp/err"; then
  echo "ok   bad --shape refused"
else echo "FAIL bad --shape: $(cat "$tmp/err")"; fail=1; fi
"$FNT_BUILD/fnt" bench --help | grep -q -- "--shape flat|tree" && echo "ok   --help: --shape" \
  || { echo "FAIL --help lacks --shape"; fail=1; }
"$FNT_BUILD/fnt" bench --help | grep -q "example" && echo "ok   --help" \
  || { echo "FAIL --help"; fail=1; }

exit $fail
