"""Compares fnt_flame (fnt export --format folded, and the calls per stack)
with `llvm-xray stack -all-stacks -aggregate-threads -stack-format flame`
on the same XRay log.

usage: flame_check.py LLVM_TIME LLVM_COUNT CYCLES_PER_S FNT_ROWS

LLVM_TIME / LLVM_COUNT: llvm-xray's output with -aggregation-type time /
count ("a;b;c; value" lines: per stack its inclusive time in cycles, its
calls).  FNT_ROWS: "stack<TAB>self_ns<TAB>calls" of fnt_flame.

Checked: the same stacks; the same calls per stack; each stack's inclusive
time (fntrace: the self_ns of the stack and every stack above it) equal to
llvm-xray's within 0.1% + 2 us (the log's cycles become nanoseconds once per
event at import).  llvm-xray has no row for a frame still open at the end of
the log (fntrace ends it at its thread's last event, SPEC §7): such stacks
are listed and allowed only when the run has open calls (none in prog.c).
"""
import sys


def read_llvm(path):
    out = {}
    for line in open(path):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        stack, value = line.rsplit(" ", 1)
        stack = stack.rstrip(";")
        out[stack] = out.get(stack, 0) + int(value)
    return out


def main():
    ltime, lcount, hz, rows = sys.argv[1:5]
    ltime, lcount, hz = read_llvm(ltime), read_llvm(lcount), float(hz)
    self_ns, calls = {}, {}
    for line in open(rows):
        stack, s, c = line.rstrip("\n").split("\t")
        self_ns[stack] = int(s)
        calls[stack] = int(c)
    incl = {}
    for stack, s in self_ns.items():
        parts = stack.split(";")
        for i in range(1, len(parts) + 1):
            k = ";".join(parts[:i])
            incl[k] = incl.get(k, 0) + s
    bad = []
    if set(calls) != set(lcount):
        bad.append("stacks only in fntrace: %s" % sorted(set(calls) - set(lcount))[:5])
        bad.append("stacks only in llvm-xray: %s" % sorted(set(lcount) - set(calls))[:5])
    for k in sorted(set(calls) & set(lcount)):
        if calls[k] != lcount[k]:
            bad.append("%s: %d calls, llvm-xray %d" % (k, calls[k], lcount[k]))
        want = ltime[k] * 1e9 / hz
        if abs(incl[k] - want) > 2000 + 1e-3 * want:
            bad.append("%s: inclusive %d ns, llvm-xray %.0f ns" % (k, incl[k], want))
    if bad:
        print("\n".join(bad[:20]))
        sys.exit(1)
    print("%d stacks, %d calls: the same as llvm-xray stack" % (len(calls), sum(calls.values())))


main()
