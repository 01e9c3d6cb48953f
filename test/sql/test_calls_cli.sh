#!/usr/bin/env bash
# test_calls_cli.sh -- `fnt account`, `fnt calls`, `fnt stack` on a run of
# two threads filed with fnt_file_chunk, outputs checked against figures
# worked out by hand (SPEC §7); --json parsed back; usage errors.
#
# Thread 1 (recursion), times in µs:   main [0,100] { f [10,60] { f [20,50] { f [30,40] } } }
# Thread 2 (a tail exit, an exit of b that unwinds c and d):
#   main [0,60] { a [10,20] tail_exit, b [20,50] { c [30,50] { d [35,50] } } }
. "$(dirname "$0")/lib.sh" calls_cli
FNT="$FNT_BUILD/fnt"
run_fnt() { env -u FNT_WAREHOUSE LD_PRELOAD="${FNT_PRELOAD:-}" "$FNT" "$@" --warehouse "$wh"; }
norm() { sed 's/  */ /g; s/^ //; s/ $//'; }

chunk='{"repo": "acme/cli", "run_id": "r", "target": "t", "source": "xray",
 "chunk": 0, "chunks": 1, "total_events": 16, "duration_ns": 100000, "truncated": false,
 "functions": [{"symbol": "main", "local": true}, {"symbol": "f", "local": true},
               {"symbol": "a", "local": true}, {"symbol": "b", "local": true},
               {"symbol": "c", "local": true}, {"symbol": "d", "local": true}],
 "events": [[1, 0, 0, 0, "entry"], [1, 1, 10000, 1, "entry"], [1, 2, 20000, 1, "entry"],
            [1, 3, 30000, 1, "entry"], [1, 4, 40000, 1, "exit"], [1, 5, 50000, 1, "exit"],
            [1, 6, 60000, 1, "exit"], [1, 7, 100000, 0, "exit"],
            [2, 100, 0, 0, "entry"], [2, 101, 10000, 2, "entry"],
            [2, 102, 20000, 2, "tail_exit"], [2, 103, 20000, 3, "entry"],
            [2, 104, 30000, 4, "entry"], [2, 105, 35000, 5, "entry"],
            [2, 106, 50000, 3, "exit"], [2, 107, 60000, 0, "exit"]]}'
got=$(sql <<<"SELECT fnt_file_chunk('$chunk');")
expect "filing" "1" "$got"

head='calls min_us p50_us p90_us p99_us max_us sum_us inclusive_us self_us function'
expect "fnt account" "$head
2 60.000 100.000 100.000 100.000 100.000 160.000 160.000 70.000 main
3 10.000 30.000 50.000 50.000 50.000 90.000 50.000 50.000 f
1 30.000 30.000 30.000 30.000 30.000 30.000 30.000 10.000 b
1 20.000 20.000 20.000 20.000 20.000 20.000 20.000 5.000 c
1 15.000 15.000 15.000 15.000 15.000 15.000 15.000 15.000 d
1 10.000 10.000 10.000 10.000 10.000 10.000 10.000 10.000 a" "$(run_fnt account r | norm)"
expect "fnt account --sort calls --top 2" "$head
3 10.000 30.000 50.000 50.000 50.000 90.000 50.000 50.000 f
2 60.000 100.000 100.000 100.000 100.000 160.000 160.000 70.000 main
(4 more functions: --top N)" "$(run_fnt account r --sort calls --top 2 | norm)"
expect "fnt account --sort p99 --top 3" "main f b" \
  "$(run_fnt account --sort p99 --top 3 r | sed 1d | grep -v "^(" | awk '{printf "%s%s", (NR > 1 ? " " : ""), $NF}')"
got=$(run_fnt account r --json | /usr/bin/python3 -c '
import json, sys
rows = json.load(sys.stdin)
print(len(rows), [r["key"] for r in rows])
f = [r for r in rows if r["key"] == "?f"][0]
print(*(f[k] for k in ("symbol", "calls", "min_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns",
                      "sum_ns", "inclusive_ns", "self_ns")))')
expect "fnt account --json" "6 ['?main', '?f', '?b', '?c', '?d', '?a']
f 3 10000 30000 50000 50000 50000 90000 50000 50000" "$got"

chead='thread call_id depth start_ns dur_ns self_ns ended_by function'
expect "fnt calls --slowest 3" "$chead
1 0 0 0 100000 50000 exit main
2 100 0 0 60000 20000 exit main
1 1 1 10000 50000 20000 exit f" "$(run_fnt calls r --slowest 3 | norm)"
expect "fnt calls --key ?f" "$chead
1 1 1 10000 50000 20000 exit f
1 2 2 20000 30000 20000 exit f
1 3 3 30000 10000 10000 exit f" "$(run_fnt calls r --key '?f' | norm)"
expect "fnt calls --thread 2" "$chead
2 100 0 0 60000 20000 exit main
2 101 1 10000 10000 10000 tail_exit a
2 103 1 20000 30000 10000 exit b
2 104 2 30000 20000 5000 unwound c
2 105 3 35000 15000 15000 unwound d" "$(run_fnt calls r --thread 2 | norm)"
expect "calls are indented by depth" \
  "$(printf '%10s %12s %5s %16s %14s %14s %-9s  %6s%s' 2 105 3 35000 15000 15000 unwound '' d)" \
  "$(run_fnt calls r --thread 2 | tail -1)"
expect "fnt calls --limit 3 (start order, ties by call_id)" "$chead
1 0 0 0 100000 50000 exit main
2 100 0 0 60000 20000 exit main
1 1 1 10000 50000 20000 exit f
(more calls: --limit N, 0 for all)" "$(run_fnt calls r --limit 3 | norm)"
expect "fnt calls --limit 0: all" "9" "$(run_fnt calls r --limit 0 | sed 1d | wc -l)"
expect "fnt calls --slowest 2 --key ?f --thread 1 --json" "[1, 2] ['exit', 'exit'] [0, 1]" \
  "$(run_fnt calls r --slowest 2 --key '?f' --thread 1 --json | /usr/bin/python3 -c '
import json, sys
rows = json.load(sys.stdin)
print([r["call_id"] for r in rows], [r["ended_by"] for r in rows], [r["parent_id"] for r in rows])')"
expect "fnt calls --json: every column" \
  "{'thread': 2, 'call_id': 104, 'parent_id': 103, 'depth': 2, 'start_ns': 30000, 'end_ns': 50000, 'dur_ns': 20000, 'self_ns': 5000, 'key': '?c', 'symbol': 'c', 'ended_by': 'unwound', 'outermost': 1}" \
  "$(run_fnt calls r --key '?c' --json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)[0])')"

expect "fnt stack --at 35000" "thread 1
$chead
1 0 0 0 100000 50000 exit main
1 1 1 10000 50000 20000 exit f
1 2 2 20000 30000 20000 exit f
1 3 3 30000 10000 10000 exit f

thread 2
$chead
2 100 0 0 60000 20000 exit main
2 103 1 20000 30000 10000 exit b
2 104 2 30000 20000 5000 unwound c
2 105 3 35000 15000 15000 unwound d" "$(run_fnt stack r --at 35000 | norm)"
expect "fnt stack --at 20000 --thread 2 --json (a call ending and one starting at the instant)" \
  "[(100, 0), (101, 1), (103, 1)]" \
  "$(run_fnt stack r --at 20000 --thread 2 --json | /usr/bin/python3 -c '
import json, sys
print([(r["call_id"], r["depth"]) for r in json.load(sys.stdin)])')"
expect "fnt stack after the run" "(no call open at 100001 ns in run 'r')" "$(run_fnt stack r --at 100001)"

# errors: a message naming the problem, exit 1 (no such run) or 2 (usage)
check_error() {   # NAME WANT_RC PATTERN ARGS...
  local name=$1 want=$2 pat=$3 rc=0 out; shift 3
  out=$(run_fnt "$@" 2>&1) || rc=$?
  if [ "$rc" = "$want" ] && grep -q -- "$pat" <<<"$out"; then echo "ok   $name"
  else echo "FAIL $name: exit $rc, output: $out"; fail=1; fi
}
check_error "account of an unknown run" 1 "no calls in run 'nope'" account nope
check_error "stack without --at" 2 "--at NS is required" stack r
check_error "--sort bogus" 2 "expected sum, p99 or calls" account r --sort bogus
check_error "--top 0" 2 "positive integer" account r --top 0
check_error "--at of calls" 2 "not an option of fnt calls" calls r --at 5
check_error "--thread too big" 2 "above 2^32-1" calls r --thread 4294967296
check_error "two runs" 2 "expected one RUN_ID" calls r r
for c in account calls stack; do
  check_error "$c --help" 0 "example" "$c" --help
done
expect "fnt --help lists them" "3" "$("$FNT" --help | grep -cE '^  (account|calls|stack) ')"
finish
