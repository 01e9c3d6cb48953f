#!/usr/bin/env bash
# test_filing_counts.sh -- the run's own counts a chunk carries must hold
# what the chunk itself holds, through the real sqlite3 shell: total_events
# below the chunk's events, threads below its distinct threads (0 included)
# and chunks 0 are refused with a message naming the field, and nothing is
# filed; the same counts, right, file.
. "$(dirname "$0")/lib.sh" filing_counts

# A chunk of 4 events on 2 threads; the placeholders are the counts.
chunk() {  # chunk CHUNKS TOTAL_EVENTS THREADS
  printf '{"repo":"r","run_id":"counts","target":"t","source":"xray",'
  printf '"chunk":0,"chunks":%s,"total_events":%s,"duration_ns":9,' "$1" "$2"
  printf '"truncated":false,"threads":%s,"functions":[{"symbol":"f","stable_id":null,"local":true}],' "$3"
  printf '"events":[[1,0,0,0,"entry"],[2,1,1,0,"entry"],[2,2,2,0,"exit"],[1,3,3,0,"exit"]]}'
}
chunk 0 4 2 > "$tmp/chunks0.json"
chunk 1 3 2 > "$tmp/total3.json"
chunk 1 4 1 > "$tmp/threads1.json"
chunk 1 4 0 > "$tmp/threads0.json"
chunk 1 4 2 > "$tmp/good.json"

got=$(sql <<'SQL'
SELECT fnt_file_chunk(readfile('chunks0.json'));
SELECT fnt_file_chunk(readfile('total3.json'));
SELECT fnt_file_chunk(readfile('threads1.json'));
SELECT fnt_file_chunk(readfile('threads0.json'));
SELECT count(*) FROM fn_trace_runs;
SELECT count(*) FROM fn_trace_events;
SQL
)
expect "bad counts: errors naming the field, nothing filed" \
"error: fnt_file_chunk: chunks: must be at least 1, not 0
error: fnt_file_chunk: total_events: 3 is below the 4 events of this chunk
error: fnt_file_chunk: threads: 1 is below the 2 distinct threads of this chunk
error: fnt_file_chunk: threads: 0 is below the 2 distinct threads of this chunk
0
0" "$(printf '%s\n' "$got" | sed -E -e 's/^(Parse|Runtime) error near line [0-9]+:/error:/' \
                                    -e 's/^Error: (near line [0-9]+: )?/error: /' -e 's/ \([0-9]+\)$//')"
# Nothing at all reached the disk: no snapshot, no segment.
expect "no file written" "0" "$(find "$wh" -type f \( -name '*.fnseg' -o -name 'v*' \) 2>/dev/null | wc -l | tr -d ' ')"

got=$(sql <<'SQL'
SELECT fnt_file_chunk(readfile('good.json'));
SELECT chunks, events, total_events, threads FROM fn_trace_runs;
SQL
)
expect "the same chunk with right counts files" "1
1|4|4|2" "$got"

finish
