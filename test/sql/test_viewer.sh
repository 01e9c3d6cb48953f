#!/usr/bin/env bash
# test_viewer.sh -- the example viewer (examples/viewer.c, build/fnt-viewer)
# on a real XRay run of test/xray/prog.c, as tools/demo.sh records it: its
# frames zoom from the whole run in and back out, and every frame is
# checked against fnt_timeline through SQL: the window (the first is the
# run's events' extent), the row count, one chart line per (thread, depth),
# and in every bucket that holds calls the letter of its longest call's
# symbol (the legend).
. "${FNT_SOURCE:?}/test/xray/lib.sh" viewer
VIEWER="$FNT_BUILD/fnt-viewer"
WH="$T/wh"

XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=$T/log." \
XRAY_BASIC_OPTIONS="func_duration_threshold_us=0 max_stack_depth=4096" \
  "$T/prog" 3 >"$T/prog.out" 2>"$T/prog.err" || fail "prog exited $?"
"$FNT" import-xray -q --warehouse "$WH" --repo fntrace/demo --run-id demo \
       --chunk-events 2000 --binary "$T/prog" "$T"/log.* || fail "import failed"
# Another run that sorts after it: the viewer picks the first.
"$FNT" import-xray -q --warehouse "$WH" --repo fntrace/demo --run-id zz-later \
       --binary "$T/prog" "$T"/log.* || fail "import failed"

LD_PRELOAD="${FNT_PRELOAD:-}" "$VIEWER" "$WH" --width 80 --zoom 8 --steps 3 >"$T/viewer.out" \
  || fail "fnt-viewer exited $?"
head -20 "$T/viewer.out"

LD_PRELOAD="${FNT_PRELOAD:-}" /usr/bin/python3 - "$T/viewer.out" "$WH" "$FNT_BUILD/fntrace" <<'PY' || fail "the viewer's frames differ from fnt_timeline"
import re, sqlite3, sys
out, wh, ext = sys.argv[1:]
conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(ext)
conn.execute("SELECT fnt_open(?)", (wh,))
lines = open(out).read().splitlines()
m = re.fullmatch(r"run (\S+): \[(\d+), (\d+)\] ns", lines[0])
assert m, lines[0]
run, first, last = m.group(1), int(m.group(2)), int(m.group(3))
assert run == "demo", run
assert (first, last) == conn.execute("SELECT min(t_ns), max(t_ns) FROM fn_trace_events "
                                     "WHERE run_id = 'demo'").fetchone()
frames, i = [], 1
while i < len(lines):
    m = re.fullmatch(r"frame (\d+): \[(-?\d+), (-?\d+)\) (\d+) columns of (\d+) ns: (\d+) rows, "
                     r"query (\d+\.\d+) ms", lines[i])
    assert m, lines[i]
    k, t0, t1, width, w, nrows = (int(g) for g in m.groups()[:6])
    assert k == len(frames)
    chart = {}
    i += 1
    while not lines[i].startswith("  ") or "lines; legend:" not in lines[i]:
        lm = re.fullmatch(r"  t(\d+) +d(\d+) +\|(.*)\|", lines[i])
        assert lm and len(lm.group(3)) == width, lines[i]
        chart[(int(lm.group(1)), int(lm.group(2)))] = lm.group(3)
        i += 1
    legend = dict(x.split("=", 1) for x in lines[i].split("legend:")[1].split())
    assert int(lines[i].split()[0]) == len(chart)
    i += 1
    rows = conn.execute("SELECT thread, depth, bucket, symbol FROM fnt_timeline(?, ?, ?, ?)",
                        (run, t0, t1, width)).fetchall()
    assert len(rows) == nrows, (k, len(rows), nrows)
    assert w == max(1, -(-(t1 - t0) // width))
    assert set(chart) == {(r[0], r[1]) for r in rows}, k
    for th, d, b, sym in rows:
        if b >= 0:
            assert legend[chart[(th, d)][b]] == sym, (k, th, d, b, sym)
    frames.append((t0, t1))
assert len(frames) == 7, len(frames)
assert frames[0] == (first, last + 1) and frames[6] == frames[0]
assert frames[1] == frames[5] and frames[3][1] - frames[3][0] < frames[2][1] - frames[2][0]
assert "main" in legend.values() or any("main" in l for l in lines)
print("viewer: %d frames, each as fnt_timeline draws it" % len(frames))
PY
# The footer cache changes how often footers are parsed, never a frame:
# none kept (--cache 0) and room for all draw what the default draws.
for c in 0 48; do
  LD_PRELOAD="${FNT_PRELOAD:-}" "$VIEWER" "$WH" --width 80 --zoom 8 --steps 3 --cache $c \
    >"$T/viewer-$c.out" || fail "fnt-viewer --cache $c exited $?"
  diff <(sed 's/, query .* ms$//' "$T/viewer.out") <(sed 's/, query .* ms$//' "$T/viewer-$c.out") \
    || fail "--cache $c drew other frames"
done
if "$VIEWER" "$WH" --cache -5 2>/dev/null; then fail "--cache -5 succeeded"; fi
# A run that does not exist, and a bad width: errors, not a crash.
if "$VIEWER" "$WH" nope >"$T/nope.out" 2>"$T/nope.err"; then fail "an unknown run succeeded"; fi
grep -q "no run 'nope'" "$T/nope.err" || fail "unknown run: $(cat "$T/nope.err")"
if "$VIEWER" "$WH" --width 0 2>/dev/null; then fail "--width 0 succeeded"; fi
echo "ok"
