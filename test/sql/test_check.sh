#!/usr/bin/env bash
# test_check.sh -- `fnt check` (tools/check.c) on a warehouse filed through
# the sqlite3 shell:
#   - sound: exit 0, every snapshot verified with --all;
#   - one byte flipped in a segment, a manifest, the newest catalog file, or a
#     segment truncated / removed (each in a fresh copy): exit 1, and the
#     problem line names that file;
#   - a commit crashed at its publishing link() (FNT_FAULT, the store's
#     fault hook) leaves stray files in data/ and metadata/, and a file left
#     in tmp/: exit 0, each listed as unreferenced with its size, as left by
#     a failed or crashed commit;
#   - a run filed in 40 chunks (the manifest list is merged as it grows)
#     and compacted leaves no unreferenced file at all;
#   - after expiring snapshots, the files only they listed are told apart
#     from a failed commit's, and a foreign file from both; an old dot file
#     is never removed by expire, and check lists it;
#   - a segment removed by hand is "missing", also when only an older
#     snapshot lists it (--all), and a truncated one's size is told.
set -euo pipefail
: "${FNT_BUILD:?FNT_BUILD must name the build folder}"
command -v sqlite3 >/dev/null || { echo "sqlite3 shell not found"; exit 77; }
# fnt is ours end to end: in a sanitizer build its leaks count too.
fnt() { ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" "$FNT_BUILD/fnt" "$@"; }

tmp="${FNT_TEST_TMP:-/tmp}/check-$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
wh="$tmp/warehouse"
fail=0

sql() {   # sql WAREHOUSE: runs stdin in sqlite3 with the extension, wh open
  { echo ".load $FNT_BUILD/fntrace"
    echo "SELECT fnt_open('$1') IS NULL;"
    cat; } | env LD_PRELOAD="${FNT_PRELOAD:-}" sqlite3 -batch :memory: 2>&1 | sed 1d
}
ok()   { echo "ok   $1"; }
bad()  { echo "FAIL $1"; fail=1; }

chunk() {   # chunk RUN CHUNK
  printf '{"repo":"acme/check","run_id":"%s","target":"t","source":"xray","chunk":%d,"chunks":2,' "$1" "$2"
  printf '"total_events":4,"duration_ns":9,"truncated":false,'
  printf '"functions":[{"symbol":"main","stable_id":"c main().","local":true},{"symbol":"memcpy","local":false}],'
  printf '"events":[[1,%d,0,0,"entry"],[1,%d,3,1,"entry"],[1,%d,5,1,"exit"],[2,%d,9,0,"exit"]]}' \
    $((10*$2)) $((10*$2+1)) $((10*$2+2)) $((10*$2+3))
}

# --- a sound warehouse: two chunks of one run, a second run, a profile --------
got=$(sql "$wh" <<SQL
SELECT fnt_file_chunk('$(chunk r1 0)');
SELECT fnt_file_chunk('$(chunk r1 1)');
SELECT fnt_file_chunk('$(chunk r2 0)');
SELECT fnt_file_profile('{"run_id":"p1","repo":"acme/check","target":"b","samples":2,"profile_ns":4,"rows":[{"symbol":"main","self_ns":1,"total_ns":4,"self_samples":1,"total_samples":2}]}');
SQL
)
[ "$got" = $'1\n1\n1\n1' ] && ok "filed four times" || { bad "filing: $got"; exit 1; }

if out=$(fnt check -w "$wh" --all 2>&1); then
  echo "$out" | grep -q "4 snapshot(s) of 4 verified" && echo "$out" | grep -q ": sound$" \
    && ok "sound warehouse: exit 0, 4 snapshots verified" || bad "sound summary: $out"
else
  bad "sound warehouse: exit $?: $out"
fi
out=$(fnt check -w "$wh" 2>&1) && echo "$out" | grep -q "1 snapshot(s) of 4 verified" \
  && ok "without --all: the current snapshot only" || bad "current only: $out"
fnt check --help | grep -q "example:" && ok "--help has an example" || bad "--help"
fnt check -w "$tmp/nowhere" >/dev/null 2>&1 && bad "a missing warehouse passes" \
  || ok "a missing warehouse: exit 1"
[ -e "$tmp/nowhere" ] && bad "check created a warehouse" || true

# --- damage, each in a fresh copy ------------------------------------------
seg=$(cd "$wh" && find data -name '*.fnseg' -path '*fn_trace_events*' | sort | sed -n 1p)
cat_=$(cd "$wh" && ls catalog/v* | sort | tail -1)
# Four commits make no manifest file (format 3: each snapshot file holds
# the entries it adds, and the newest lists the older ones for them).
held=$(cd "$wh" && ls catalog/v* | sort | head -1)
[ -z "$(ls "$wh/metadata" 2>/dev/null)" ] && ok "four commits wrote no manifest file" \
  || bad "manifest files after four commits: $(ls "$wh/metadata")"
flip() {   # flip FILE OFFSET: xor one byte with 0x20
  python3 - "$1" "$2" <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, 'rb').read()); off = off % len(b); b[off] ^= 0x20
open(p, 'wb').write(bytes(b))
PY
}
damaged() {   # damaged NAME FILE-REL ACTION...: copy, damage, expect exit 1 naming FILE
  local name=$1 rel=$2; shift 2
  rm -rf "$tmp/copy"; cp -a "$wh" "$tmp/copy"
  "$@" "$tmp/copy/$rel"
  local rc=0
  out=$(fnt check -w "$tmp/copy" --all 2>&1) || rc=$?
  if [ $rc -eq 1 ] && echo "$out" | grep "^PROBLEM" | grep -qF "$rel"; then
    ok "$name: exit 1, names $rel"
  else
    bad "$name: exit $rc"; echo "$out" | head -20
  fi
}
mid()      { flip "$1" $(( $(stat -c %s "$1") / 2 )); }
first()    { flip "$1" 20; }
footer()   { flip "$1" $(( $(stat -c %s "$1") - 30 )); }
chop()     { truncate -s -7 "$1"; }
# the last byte before the footer: of the last row group's last column chunk
lastchunk() { flip "$1" $(python3 -c 'import struct,sys
b = open(sys.argv[1], "rb").read()
print(len(b) - 32 - struct.unpack_from("<Q", b, len(b) - 32)[0] - 1)' "$1"); }
gone()     { rm -f "$1"; }
damaged "segment, a byte of a column chunk"  "$seg" lastchunk
damaged "segment, a byte of its functions chunk (its first)" "$seg" first
damaged "segment, a byte of its footer"      "$seg" footer
damaged "segment, truncated"                 "$seg" chop
echo "$out" | grep -q "^PROBLEM .*$seg: [0-9]* bytes, the manifest lists [0-9]*$" \
  && ok "a truncated segment's size is told too" || bad "truncated segment: $out"
damaged "segment, removed"                   "$seg" gone
echo "$out" | grep -q "^PROBLEM .*$seg: listed segment is missing$" \
  && ok "a removed segment is said to be missing" || bad "removed segment: $out"
damaged "entries held by a snapshot file, a byte flipped" "$held" mid
damaged "catalog, a byte flipped"            "$cat_" mid
damaged "catalog, truncated"                 "$cat_" chop

# --- a crashed commit: killed at the link() that would publish it -----------
rm -rf "$tmp/copy"; cp -a "$wh" "$tmp/copy"
before=$(cd "$tmp/copy" && find data metadata tmp -type f 2>/dev/null | wc -l)
FNT_FAULT="ops=link,nth=1,crash=1" sql "$tmp/copy" <<SQL >/dev/null || true
SELECT fnt_file_chunk('$(chunk r3 0)');
SQL
after=$(cd "$tmp/copy" && find data metadata tmp -type f 2>/dev/null | wc -l)
mkdir -p "$tmp/copy/tmp"; printf 'half a segment' > "$tmp/copy/tmp/left-over"
[ "$after" -gt "$before" ] && ok "the crashed commit left files ($before -> $after)" \
  || bad "the crash left no stray files ($before -> $after)"
rc=0; out=$(fnt check -w "$tmp/copy" --all 2>&1) || rc=$?
nstray=$(echo "$out" | grep -c "^unreferenced " || true)
if [ $rc -eq 0 ] && [ "$nstray" -eq $((after - before + 1)) ] \
   && echo "$out" | grep -q "^unreferenced $tmp/copy/tmp/left-over (14 bytes): left by a failed or crashed commit$" \
   && echo "$out" | grep "^unreferenced" | grep -q "/tmp/.*\.fncat ([0-9]* bytes): left by a failed or crashed commit$" \
   && echo "$out" | grep "^unreferenced" | grep -q "/data/.*\.fnseg ([0-9]* bytes): left by a failed or crashed commit$" \
   && [ "$(echo "$out" | grep "^unreferenced" | grep -vc "left by a failed or crashed commit$")" = 0 ] \
   && echo "$out" | grep -q "($nstray of failed or crashed commits, 0 of expired snapshots, 0 foreign): sound$"; then
  ok "stray files: exit 0, $nstray listed with their sizes"
else
  bad "stray files: exit $rc, $nstray listed"; echo "$out"
fi
got=$(sql "$tmp/copy" <<<"SELECT count(*) FROM fn_trace_runs WHERE run_id = 'r3';")
[ "$got" = 0 ] && ok "the crashed chunk is not visible" || bad "crashed chunk visible: $got"

# --- many chunks: successful commits leave nothing unlisted -----------------
many="$tmp/many"
{ for k in $(seq 0 39); do
    chunk many "$k" | sed -e 's/"chunks":2/"chunks":40/' -e 's/"total_events":4/"total_events":160/' \
      | sed -e "s/^/SELECT fnt_file_chunk('/" -e "s/\$/');/"
    echo
  done; } | sql "$many" >/dev/null
rc=0; out=$(fnt check -w "$many" 2>&1) || rc=$?
if [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c "^unreferenced")" = 0 ] \
   && echo "$out" | grep -q "; 0 unreferenced file(s), 0 bytes: sound$" \
   && [ "$(sql "$many" <<<"SELECT count(*) FROM fn_trace_runs;")" = 40 ]; then
  ok "40 chunks filed: no unreferenced file"
else
  bad "40 chunks filed: exit $rc"; echo "$out" | tail -5
fi
fnt compact -w "$many" >/dev/null
rc=0; out=$(fnt check -w "$many" 2>&1) || rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "; 0 unreferenced file(s), 0 bytes: sound$" \
  && ok "compacted: no unreferenced file" || { bad "compacted: exit $rc"; echo "$out" | tail -5; }

# A file that only an older retained snapshot lists (compaction dropped it)
# removed by hand: corruption, said as a missing segment, not as expiry.
rm -rf "$tmp/copy"; cp -a "$many" "$tmp/copy"
gone_seg=$(cd "$tmp/copy" && ls -tr data/fn_trace_events/p=many/*.fnseg | head -1)
rm -f "$tmp/copy/$gone_seg"
rc=0; out=$(fnt check -w "$tmp/copy" --all 2>&1) || rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "^PROBLEM .*$gone_seg: listed segment is missing$"; then
  ok "--all: a file of an older snapshot removed by hand is missing, not expired"
else
  bad "--all, removed file of an older snapshot: exit $rc"; echo "$out" | head -5
fi

# Expire never removes a dot file (an editor's, NFS's .nfsXXXX), however old;
# check lists it as not a fntrace file.
rm -rf "$tmp/copy"; cp -a "$many" "$tmp/copy"
printf 'x' > "$tmp/copy/data/.keep"; touch -d '3 hours ago' "$tmp/copy/data/.keep"
fnt expire -w "$tmp/copy" --keep-seconds 0 >/dev/null
[ -e "$tmp/copy/data/.keep" ] && ok "expire leaves an old dot file alone" || bad "expire removed data/.keep"
out=$(fnt check -w "$tmp/copy" 2>&1) || true    # not through a pipe: grep -q would cut it
echo "$out" | grep -q "^unreferenced $tmp/copy/data/.keep (1 bytes): not a fntrace file$" \
  && ok "check lists the dot file" || { bad "check does not list data/.keep"; echo "$out" | tail -3; }

# --- expired snapshots' files, a failed commit's, a foreign file ------------
# Expiry keeps files younger than an hour: the compacted-away files stay,
# listed by no retained snapshot.
fnt expire -w "$many" --keep-seconds 0 >/dev/null
mkdir -p "$many/tmp"; printf 'x' > "$many/tmp/0123456789abcdef0123456789abcdef.fncat"
printf 'notes' > "$many/data/NOTES.txt"
rc=0; out=$(fnt check -w "$many" 2>&1) || rc=$?
nexp=$(echo "$out" | grep -c "^unreferenced .*: listed only by expired snapshots (fnt expire removes it)$" || true)
if [ $rc -eq 0 ] && [ "$nexp" -gt 40 ] \
   && echo "$out" | grep -q "^unreferenced $many/tmp/0123456789abcdef0123456789abcdef.fncat (1 bytes): left by a failed or crashed commit$" \
   && echo "$out" | grep -q "^unreferenced $many/data/NOTES.txt (5 bytes): not a fntrace file$" \
   && echo "$out" | grep -q "(1 of failed or crashed commits, $nexp of expired snapshots, 1 foreign): sound$"; then
  ok "expired snapshots' files ($nexp), a failed commit's and a foreign file told apart"
else
  bad "origins after expiry: exit $rc, $nexp expired"; echo "$out" | grep -v "expired snapshots (fnt" | tail -8
fi

exit $fail
