#!/usr/bin/python3
"""compare.py -- fn_profile rows of one run against `perf report` of the same
perf.data (used by test/sql/test_import_perf.sh).

usage: compare.py SELF.txt CHILDREN.txt ROWS.tsv

SELF.txt      perf report --stdio --no-children --sort symbol,dso -g none
              --percent-limit 0 -F overhead,sample,period,sym,dso -t $'\\x1f'
CHILDREN.txt  the same with --children and -F overhead_children,overhead,
              sample,period,sym,dso
ROWS.tsv      symbol, self_samples, total_samples, self_ns, total_ns, samples,
              profile_ns of the run, tab-separated (the sqlite3 shell's
              .mode tabs)

perf report names an unsymbolised frame by its address ("[.] 0x16932" in
liblzma.so.5.4.1); fntrace files it as "[unknown] (liblzma.so.5.4.1)", one
row per library.  So:
  - self: perf report's sample counts and periods, summed per fntrace name,
    must equal self_samples and self_ns exactly, for every name of either
    side;
  - total: perf report prints only a percentage of the event count (two
    decimals), so for every symbol perf report shows under one dso only and
    that is not "[unknown]" (whose addresses perf counts one by one), the
    percentage 100 * total_ns / profile_ns must round to perf's figure
    (within 0.005 points), and so must the name set agree;
  - samples and profile_ns must equal the sums of perf report's self column
    and its "Event count".
Prints a summary; exit status 1 and the differences when they disagree.
"""
import collections
import re
import sys

SEP = "\x1f"
ADDR = re.compile(r"^(0x[0-9a-fA-F]+|[0-9a-f]{16})$")  # address 0 is printed without 0x


def fnt_name(sym, dso):
    """fntrace's name of a perf report (symbol, dso) row."""
    if ADDR.match(sym) or sym == "[unknown]":
        return "[unknown]" if dso in ("", "[unknown]") else "[unknown] (%s)" % dso
    return sym


def read_report(path, children):
    """[(fnt name, perf symbol, dso, children pct or None, self samples,
    self period)], event count."""
    rows, event_count = [], None
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^# Event count \(approx\.\): (\d+)", line)
            if m:
                event_count = int(m.group(1))
            if not line.strip() or line.startswith("#"):
                continue
            fields = [x.strip() for x in line.split(SEP)]
            if children:
                pct, fields = float(fields[0].rstrip("%")), fields[1:]
            else:
                pct = None
            samples, period = int(fields[1]), int(fields[2])
            sym = fields[3]
            m = re.match(r"^\[(.)\] (.*)$", sym)
            if not m:
                raise SystemExit("%s: cannot read symbol field %r" % (path, sym))
            sym, dso = m.group(2).strip(), fields[4]
            rows.append((fnt_name(sym, dso), sym, dso, pct, samples, period))
    if event_count is None:
        raise SystemExit("%s: no '# Event count' line" % path)
    return rows, event_count


def main():
    self_rows, event_count = read_report(sys.argv[1], False)
    child_rows, event_count2 = read_report(sys.argv[2], True)
    ours = {}
    samples = profile_ns = None
    with open(sys.argv[3], encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            sym, ss, ts, sn, tn, n, pns = line.rstrip("\n").split("\t")
            if sym in ours:
                raise SystemExit("fn_profile has symbol %r twice" % sym)
            ours[sym] = (int(ss), int(ts), int(sn), int(tn))
            samples, profile_ns = int(n), int(pns)
    if not ours:
        raise SystemExit("no fn_profile rows")
    bad = []

    # --- self: exact --------------------------------------------------------
    want = collections.defaultdict(lambda: [0, 0])
    for name, _, _, _, s, p in self_rows:
        want[name][0] += s
        want[name][1] += p
    for name in sorted(set(want) | set(ours)):
        w = tuple(want.get(name, (0, 0)))
        o = ours.get(name, (0, 0, 0, 0))
        if w != (o[0], o[2]):
            bad.append("self of %r: perf report %d samples %d ns, fn_profile %d samples %d ns"
                       % (name, w[0], w[1], o[0], o[2]))
    n_self = sum(1 for v in want.values() if v[0])
    total_self = sum(v[0] for v in want.values())
    if samples != total_self:
        bad.append("samples: fn_profile %d, perf report %d" % (samples, total_self))
    if profile_ns != event_count or event_count != event_count2:
        bad.append("profile_ns: fn_profile %d, perf report event count %d / %d"
                   % (profile_ns, event_count, event_count2))

    # --- total: to perf's two decimals ----------------------------------------
    dsos = collections.defaultdict(set)
    pct = {}
    for name, sym, dso, p, _, _ in child_rows:
        dsos[name].add(dso)
        pct[name] = p
    checked = skipped = 0
    for name in sorted(set(pct) | set(o for o in ours if ours[o][1])):
        if name.startswith("[unknown]") or len(dsos.get(name, ())) > 1:
            skipped += 1
            continue
        if name not in pct:
            bad.append("total of %r: in fn_profile (%d samples), not in perf report --children"
                       % (name, ours[name][1]))
            continue
        o = ours.get(name, (0, 0, 0, 0))
        mine = 100.0 * o[3] / profile_ns
        if abs(mine - pct[name]) > 0.005 + 1e-9:
            bad.append("total of %r: perf report %.2f%%, fn_profile %d samples %d ns = %.4f%%"
                       % (name, pct[name], o[1], o[3], mine))
        checked += 1

    print("compare: %d samples, profile_ns %d; self: %d symbols equal (%d perf report rows);"
          " total: %d symbols within 0.005%%, %d skipped ([unknown] or in several dsos)"
          % (samples, profile_ns, n_self, len(self_rows), checked, skipped))
    if bad:
        print("compare: %d differences:" % len(bad))
        for b in bad[:50]:
            print("  " + b)
        sys.exit(1)


if __name__ == "__main__":
    main()
