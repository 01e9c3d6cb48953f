#!/usr/bin/env bash
# test_man.sh -- the man pages man/fnt.1 and man/fntrace.7: clean under
# `mandoc -T lint` and `man --warnings` (whichever is installed; 77 when
# neither is), and complete: fnt(1) has an entry for every subcommand
# `fnt --help` lists, fntrace(7) one for every function and table of the
# SQL surface (test/sql/surface.expected) and names every column.
. "$(dirname "$0")/lib.sh" man
: "${FNT_SOURCE:?FNT_SOURCE must name the source folder}"
pages=("$FNT_SOURCE/man/fnt.1" "$FNT_SOURCE/man/fntrace.7")
linted=0
if command -v mandoc >/dev/null; then
  expect "mandoc -T lint" "" "$(mandoc -T lint "${pages[@]}" 2>&1 || true)"
  linted=1
fi
if command -v man >/dev/null && command -v groff >/dev/null; then
  for page in "${pages[@]}"; do
    expect "man --warnings $(basename "$page")" "" \
           "$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null || true)"
  done
  linted=1
fi
[ $linted = 1 ] || { echo "neither mandoc nor man with groff installed"; exit 77; }

# Entries: `.TP` then a bold line naming the item; the source escapes '-'.
entries() { grep -A1 '^\.TP' "$1" | sed -n 's/^\.B[IR]* "\{0,1\}\([A-Za-z_\\-]*\).*/\1/p' | sed 's/\\-/-/g' | sort -u; }
commands=$("$FNT_BUILD/fnt" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p' | sort)
[ -n "$commands" ] || { echo "FAIL: no commands parsed from fnt --help"; exit 1; }
expect "fnt(1) has an entry for each subcommand" "$commands" \
       "$(comm -12 <(printf '%s\n' "$commands") <(entries "${pages[0]}"))"

surface="$FNT_SOURCE/test/sql/surface.expected"
names=$(sed -n 's/^function \([a-z_]*\)\/.*/\1/p; s/^module \([a-z_]*\)(.*/\1/p' "$surface" | sort -u)
expect "fntrace(7) has an entry for each SQL function and table" "$names" \
       "$(comm -12 <(printf '%s\n' "$names") <(entries "${pages[1]}"))"
missing=""
for col in $(sed -n 's/^module [a-z_]*(\(.*\))$/\1/p' "$surface" | tr ',' '\n' | awk '{print $1}' | sort -u); do
  grep -qw -- "$col" "${pages[1]}" || missing="$missing $col"
done
expect "fntrace(7) names every column" "" "$missing"
finish
