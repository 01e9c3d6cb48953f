#!/usr/bin/env python3
"""chrome_heat.py TRACE.json HEAT -- checks `fnt_heat` of an imported Chrome
trace against the heat computed here from the JSON alone.

HEAT is `key<TAB>inclusive_ns<TAB>self_ns<TAB>calls` lines (fnt_heat's
rows).  The reference does not replay events: per (pid, tid) it pairs each
B with its E (in time order), takes X events as the intervals they are,
nests the intervals into a tree (sorted by start, longer first, then file
order; an interval ending where the next starts is not its parent) and sums,
per name, as SPEC §5 defines the heat of such a tree: calls = frames;
self = duration minus the direct children's; inclusive = duration when no
ancestor has the same name.  B frames never ended end at the thread's last
time.  Times: µs -> ns rounded half away from zero, from the digits
(Decimal), the end of an X being round(ts) + round(dur).
"""
import decimal
import json
import sys
from collections import defaultdict
from decimal import Decimal


def ns(v):
    return int((Decimal(v) * 1000).quantize(Decimal(1), rounding=decimal.ROUND_HALF_UP))


def intervals(trace):
    events = trace['traceEvents'] if isinstance(trace, dict) else trace
    per_thread = defaultdict(list)    # (pid, tid) -> [(start, end, index, name)]
    be = defaultdict(list)            # (pid, tid) -> [(ts, index, ph, name)]
    last = defaultdict(lambda: None)  # (pid, tid) -> last time seen
    for i, e in enumerate(events):
        ph = e.get('ph')
        if ph not in ('B', 'E', 'X'):
            continue
        key = (e.get('pid', 0), e['tid'])
        t = ns(e['ts'])
        if ph == 'X':
            end = t + ns(e['dur'])
            per_thread[key].append((t, end, i, e['name']))
            t = end
        else:
            be[key].append((t, i, ph, e.get('name')))
        if last[key] is None or t > last[key]:
            last[key] = t
    for key, evs in be.items():
        stack = []
        for t, i, ph, name in sorted(evs):
            if ph == 'B':
                stack.append((t, i, name))
            else:
                s, j, n = stack.pop()
                per_thread[key].append((s, t, j, n))
        for s, j, n in stack:
            per_thread[key].append((s, last[key], j, n))
    return per_thread


def heat(per_thread):
    inclusive = defaultdict(int)
    self_ns = defaultdict(int)
    calls = defaultdict(int)
    for ivs in per_thread.values():
        ivs.sort(key=lambda v: (v[0], -(v[1] - v[0]), v[2]))
        stack = []   # [start, end, name, children's total]

        def close(f):
            s, e, name, kids = f
            d = e - s
            calls[name] += 1
            self_ns[name] += d - kids
            if all(g[2] != name for g in stack):
                inclusive[name] += d
            if stack:
                stack[-1][3] += d

        for s, e, _i, name in ivs:
            while stack and stack[-1][1] <= s:
                close(stack.pop())
            stack.append([s, e, name, 0])
        while stack:
            close(stack.pop())
    return {('?' + n): (inclusive[n], self_ns[n], calls[n]) for n in calls}


def main():
    with open(sys.argv[1]) as f:
        text = f.read()
    if text.lstrip().startswith('[') and not text.rstrip().endswith(']'):
        text = text.rstrip().rstrip(',') + ']'   # an array cut short, as the format allows
    trace = json.loads(text, parse_float=Decimal)
    want = heat(intervals(trace))
    got = {}
    with open(sys.argv[2]) as f:
        for line in f:
            key, inc, slf, n = line.rstrip('\n').split('\t')
            got[key] = (int(inc), int(slf), int(n))
    bad = 0
    for key in sorted(set(want) | set(got)):
        if want.get(key) != got.get(key):
            print('%r: fnt_heat %r, the JSON says %r (inclusive, self, calls)'
                  % (key, got.get(key), want.get(key)))
            bad += 1
    if bad:
        sys.exit('%d of %d functions differ' % (bad, len(want)))
    print('heat ok: %d functions, %d calls' % (len(want), sum(v[2] for v in want.values())))


if __name__ == '__main__':
    main()
