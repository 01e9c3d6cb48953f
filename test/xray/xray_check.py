#!/usr/bin/env python3
"""xray_check.py -- compares an imported run against llvm-xray's reading of
the same log (SPEC §5 heat computed here, independently of the store).

  xray_check.py YAML EVENTS [HEAT]

YAML    `llvm-xray convert --symbolize --output-format=yaml --instr_map=BIN LOG`
EVENTS  the run read back: TSV lines `thread seq_no t_ns kind symbol`
HEAT    optional: fnt_heat's rows as TSV `key inclusive_ns self_ns calls`

Checks event count, per-thread counts, thread ids, per-function
entry/exit/tail_exit counts, that seq_no is 0..n-1 and time-ordered, and
the heat (from the YAML, against the events' heat and against HEAT).
Exits 1 listing the differences.  Plain Python: the YAML is parsed by hand
(llvm-xray writes one flow mapping a record).
"""
import collections
import re
import sys

KINDS = {"function-enter": "entry", "function-enter-arg": "entry",
         "function-exit": "exit", "function-tail-exit": "tail_exit"}
REC = re.compile(r"^\s*- \{ type: \d+, func-id: (-?\d+), function: "
                 r"('(?:[^']|'')*'|.*?), cpu: \d+, thread: (\d+), process: \d+, "
                 r"kind: ([a-z-]+), tsc: (\d+)")


def read_yaml(path):
    freq = None
    recs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("  cycle-frequency:"):
                freq = int(line.split(":")[1])
                continue
            m = REC.match(line)
            if not m:
                if line.lstrip().startswith("- {"):
                    sys.exit("xray_check: cannot parse YAML record: " + line.strip())
                continue
            name = m.group(2)
            if name.startswith("'"):
                name = name[1:-1].replace("''", "'")
            kind = KINDS.get(m.group(4))
            if kind is None:
                continue  # custom / typed events are not function events
            recs.append((int(m.group(3)), int(m.group(5)), kind, name))
    if freq is None:
        sys.exit("xray_check: no cycle-frequency in " + path)
    if not recs:
        return []
    first = min(r[1] for r in recs)
    out = []
    for tid, tsc, kind, name in recs:
        d = tsc - first
        t = d if freq in (0, 10**9) else d * 10**9 // freq
        out.append((tid, t, kind, name))
    # each thread in time order (stable: within a thread times never tie)
    out.sort(key=lambda r: (r[0], r[1]))
    return out


def read_events(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            tid, seq, t, kind, sym = line.split("\t", 4)
            rows.append((int(seq), int(tid), int(t), kind, sym))
    rows.sort()
    return rows


def heat(per_thread):
    """SPEC §5 over {thread: [(t, kind, key)] in seq order}."""
    incl = collections.Counter()
    self_ = collections.Counter()
    calls = collections.Counter()
    for evs in per_thread.values():
        stack = []          # [key, start, child_ns]
        depth = collections.Counter()

        def end_top(t):
            key, start, child = stack.pop()
            d = t - start
            depth[key] -= 1
            calls[key] += 1
            self_[key] += d - child
            if depth[key] == 0:
                incl[key] += d
            else:
                incl[key] += 0
            if stack:
                stack[-1][2] += d

        for t, kind, key in evs:
            if kind == "entry":
                stack.append([key, t, 0])
                depth[key] += 1
            elif depth[key] > 0:
                while True:
                    top = stack[-1][0]
                    end_top(t)
                    if top == key:
                        break
        if evs:
            last = evs[-1][0]
            while stack:
                end_top(last)
    return {k: (incl[k], self_[k], calls[k]) for k in calls}


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    ref = read_yaml(sys.argv[1])
    got = read_events(sys.argv[2])
    bad = []

    def check(what, a, b):
        if a != b:
            bad.append("%s: llvm-xray %r, fntrace %r" % (what, a, b))

    check("events", len(ref), len(got))
    check("seq_no", list(range(len(got))), [r[0] for r in got])
    if any(got[i][2] > got[i + 1][2] for i in range(len(got) - 1)):
        bad.append("t_ns not ascending in seq_no order")
    check("threads", sorted(collections.Counter(r[0] for r in ref).items()),
          sorted(collections.Counter(r[1] for r in got).items()))
    check("per-function kinds",
          sorted(collections.Counter((r[3], r[2]) for r in ref).items()),
          sorted(collections.Counter((r[4], r[3]) for r in got).items()))

    ref_threads = collections.defaultdict(list)
    for tid, t, kind, name in ref:
        ref_threads[tid].append((t, kind, "?" + name))
    got_threads = collections.defaultdict(list)
    for seq, tid, t, kind, sym in got:
        got_threads[tid].append((t, kind, "?" + sym))
    for tid in ref_threads:
        check("thread %d event order" % tid, ref_threads[tid], got_threads.get(tid))
    ref_heat = heat(ref_threads)
    check("heat of the events read back", ref_heat, heat(got_threads))
    if len(sys.argv) == 4:
        fh = {}
        with open(sys.argv[3], encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    key, i, s, c = line.rstrip("\n").split("\t")
                    fh[key] = (int(i), int(s), int(c))
        for k in sorted(set(ref_heat) | set(fh)):
            check("fnt_heat %s" % k, ref_heat.get(k), fh.get(k))
    for b in bad[:40]:
        print("xray_check: " + b[:2000])
    if bad:
        sys.exit(1)
    print("xray_check: %d events, %d threads, %d functions agree with llvm-xray"
          % (len(got), len(got_threads), len(ref_heat)))


if __name__ == "__main__":
    main()
