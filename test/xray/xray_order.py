#!/usr/bin/env python3
"""xray_order.py LOG EVENTS -- checks the importer's event order against an
independent reading of an XRay log (the records gen_xray_log.c writes:
basic mode, FDR version 5 with BufferExtents, NewBuffer, Walltime, Pid,
NewCPUId and function records).

EVENTS is `thread<TAB>seq_no<TAB>t_ns<TAB>kind<TAB>symbol` lines, in seq_no
order, read back from fn_trace_events.  The order the importer documents
(tools/xray_log.h): each thread's blocks (a basic-mode run of one tid's
records, an FDR buffer) sorted by first TSC, then file order; the threads
merged by TSC, ties to the record earlier in the file.
"""
import heapq
import struct
import sys

KINDS = {0: 'entry', 1: 'exit', 2: 'tail_exit', 3: 'entry'}


def blocks_of(data):
    """[(tid, [(tsc, offset, func_id, kind), ...]), ...] in file order."""
    version, typ = struct.unpack_from('<HH', data, 0)
    blocks = []
    if typ == 0:
        cur_tid = None
        for off in range(32, len(data), 32):
            rtype, _cpu, kind, fn, tsc, tid = struct.unpack_from('<HBBiQI', data, off)
            if rtype == 1:
                continue
            if tid != cur_tid:
                blocks.append((tid, []))
                cur_tid = tid
            blocks[-1][1].append((tsc, off, fn, kind))
        return blocks
    assert typ == 1 and version == 5, 'only what gen_xray_log.c writes'
    off = 32
    while off < len(data):
        assert data[off] == (1 | 7 << 1), 'BufferExtents expected at %d' % off
        (extent,) = struct.unpack_from('<Q', data, off + 1)
        off += 16
        end = off + extent
        base = 0
        while off < end:
            b = data[off]
            if b & 1:
                md = b >> 1
                if md == 0:
                    (tid,) = struct.unpack_from('<I', data, off + 1)
                    blocks.append((tid, []))
                elif md == 2:
                    (base,) = struct.unpack_from('<Q', data, off + 3)
                else:
                    assert md in (4, 9), 'metadata kind %d not expected' % md
                off += 16
            else:
                w, delta = struct.unpack_from('<II', data, off)
                base += delta
                blocks[-1][1].append((base, off, w >> 4, (w >> 1) & 7))
                off += 8
    return blocks


def expected(data):
    threads = {}
    for tid, evs in blocks_of(data):
        if evs:
            threads.setdefault(tid, []).append(evs)
    streams = []
    for tid, blks in threads.items():
        blks.sort(key=lambda evs: (evs[0][0], evs[0][1]))
        streams.append([(tsc, off, tid, fn, kind) for evs in blks for (tsc, off, fn, kind) in evs])
    return heapq.merge(*streams)


def main():
    data = open(sys.argv[1], 'rb').read()
    (freq,) = struct.unpack_from('<Q', data, 8)
    assert freq == 1000000000, 'ticks are ns in these logs'
    want = list(expected(data))
    first = min(e[0] for e in want) if want else 0
    names = {}
    n = 0
    with open(sys.argv[2]) as f:
        for line in f:
            thread, seq, t_ns, kind, symbol = line.rstrip('\n').split('\t')
            if n >= len(want):
                sys.exit('more events filed than the log holds (%d)' % len(want))
            tsc, _off, tid, fn, k = want[n]
            got = (int(thread), int(seq), int(t_ns), kind)
            exp = (tid, n, tsc - first, KINDS[k])
            if got != exp:
                sys.exit('event %d: filed %r, the log says %r' % (n, got, exp))
            if names.setdefault(fn, symbol) != symbol:
                sys.exit('event %d: function id %d filed as %r and as %r' % (n, fn, names[fn], symbol))
            n += 1
    if n != len(want):
        sys.exit('%d events filed, the log holds %d' % (n, len(want)))
    print('order ok: %d events, %d threads' % (n, len(set(e[2] for e in want))))


if __name__ == '__main__':
    main()
