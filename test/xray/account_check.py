"""fnt_account against `llvm-xray account -format csv -k -d` of the same log.

    account_check.py LLVM_CSV FREQ ACCOUNT_TSV CALLS_TSV

LLVM_CSV: llvm-xray account's CSV (funcid,count,min,median,90%ile,99%ile,
max,sum,debug,function; times in seconds, printed as %e).  FREQ: the log's
cycle frequency.  ACCOUNT_TSV: `SELECT symbol, calls, min_ns, p50_ns, p90_ns,
p99_ns, max_ns, sum_ns FROM fnt_account(run)`.  CALLS_TSV: `SELECT symbol,
dur_ns, ended_by FROM fn_trace_calls WHERE run_id = run`.

llvm-xray account replays a thread's records against a stack as SPEC §5
does (with -d an exit pops down to the topmost frame of its function, with
-k an exit with no frame is skipped), records every frame it pops, recursive
ones too (our sum_ns), and nothing for frames still open at the end.  So:
- every function: llvm's row equals the figures of its calls that are not
  'open', computed here from fn_trace_calls (percentile rule floor(p*n));
- a function none of whose calls is open: fnt_account's row equals llvm's;
- a function with open calls: fnt_account counts them too (calls = llvm's
  count + the open ones); listed as the functions that differ, and why.
Equal means: the same text when printed as llvm prints (%e of seconds),
when the frequency is 1 GHz (llvm divides the same integers); otherwise
within llvm's printed precision.
"""
import csv
import sys


def stats(durs):
    d = sorted(durs)
    n = len(d)
    return [n, d[0], d[n // 2], d[n * 9 // 10], d[n * 99 // 100], d[-1], sum(d)]


def main():
    llvm_csv, freq, account_tsv, calls_tsv = sys.argv[1:5]
    freq = float(freq)
    llvm = {}
    dup = set()
    with open(llvm_csv) as f:
        for row in csv.DictReader(f):
            name = row["function"]
            if name in llvm:
                dup.add(name)
            llvm[name] = [int(row["count"])] + [row[k] for k in
                                                ("min", "median", "90%ile", "99%ile", "max", "sum")]
    ours = {}
    with open(account_tsv) as f:
        for line in f:
            sym, *v = line.rstrip("\n").split("\t")
            ours[sym] = [int(x) for x in v]
    closed, opened = {}, {}
    with open(calls_tsv) as f:
        for line in f:
            sym, dur, how = line.rstrip("\n").split("\t")
            (opened if how == "open" else closed).setdefault(sym, []).append(int(dur))

    def same(ns, text):
        if freq == 1e9:
            return "%e" % (ns / 1e9) == text
        return abs(ns / 1e9 - float(text)) <= 5e-7 * abs(float(text)) + 2e-9

    def agree(fig, row):
        return fig[0] == row[0] and all(same(a, b) for a, b in zip(fig[1:], row[1:]))

    bad = []
    for name in sorted(set(llvm) | set(closed)):
        if name in dup:
            continue
        if name not in llvm or name not in closed:
            bad.append("%s: in %s only" % (name, "llvm-xray" if name in llvm else "fn_trace_calls"))
        elif not agree(stats(closed[name]), llvm[name]):
            bad.append("%s: closed calls %r, llvm-xray %r" % (name, stats(closed[name]), llvm[name]))
    differ = []
    for name in sorted(set(ours) | set(llvm)):
        if name in dup:
            continue
        if name not in ours:
            bad.append("%s: not in fnt_account" % name)
            continue
        if ours[name] != stats(closed.get(name, []) + opened.get(name, [])):
            bad.append("%s: fnt_account %r, its calls %r" % (name, ours[name],
                       stats(closed.get(name, []) + opened.get(name, []))))
        elif name in opened:
            differ.append("%s (%d open)" % (name, len(opened[name])))
            if ours[name][0] != llvm.get(name, [0])[0] + len(opened[name]):
                bad.append("%s: %d calls, llvm-xray %d + %d open" % (
                    name, ours[name][0], llvm.get(name, [0])[0], len(opened[name])))
        elif not agree(ours[name], llvm[name]):
            bad.append("%s: fnt_account %r, llvm-xray %r" % (name, ours[name], llvm[name]))
    print("%d functions: fnt_account equals llvm-xray account on %d; %d differ only by "
          "open frames, which llvm-xray leaves out: %s%s"
          % (len(ours), len(ours) - len(differ) - len(dup & set(ours)), len(differ),
             ", ".join(differ) or "none",
             ("; not compared (one name, several functions): " + ", ".join(sorted(dup)))
             if dup else ""))
    for b in bad[:20]:
        print("FAIL " + b)
    if len(bad) > 20:
        print("FAIL ... %d more" % (len(bad) - 20))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
