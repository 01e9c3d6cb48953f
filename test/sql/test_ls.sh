#!/usr/bin/env bash
# test_ls.sh -- `fnt ls`: newest first, --limit N, --csv (RFC 4180 quoting,
# read back by Python's csv module), --json, on runs whose ids need quoting.
. "$(dirname "$0")/lib.sh" ls
fnt="$FNT_BUILD/fnt"
for k in 0 1 2 3; do
  printf 'SELECT fnt_file_chunk(json_object(%s));\n' \
    "'repo','acme/ls','run_id',char(114,$((48+k)),44,34),'ts_micros',$((1764680000000000+k)),'target','t','source','s','chunk',0,'chunks',1,'total_events',2,'duration_ns',1,'truncated',json('false'),'functions',json('[{\"symbol\":\"f\",\"local\":true}]'),'events',json('[[1,0,0,0,\"entry\"],[1,1,5,0,\"exit\"]]')"
done | sql > /dev/null
got=$("$fnt" -w "$wh" ls --csv --limit 3 | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
print(rows[0][3], len(rows) - 1, *[r[3] for r in rows[1:]])')
expect "--csv --limit 3: a header and the 3 newest, run ids with , and \" intact" \
  'run_id 3 r3," r2," r1,"' "$got"
expect "--json --limit 2" "2" "$("$fnt" -w "$wh" ls --json --limit 2 | wc -l)"
expect "--limit 0" "0" "$("$fnt" -w "$wh" -q ls --limit 0 | wc -l)"
expect "no limit" "4" "$("$fnt" -w "$wh" -q ls | wc -l)"
st=0; "$fnt" -w "$wh" ls --limit -1 2>/dev/null || st=$?
expect "a bad --limit is a usage error" "2" "$st"
finish
