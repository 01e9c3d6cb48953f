#!/usr/bin/env bash
# test_symbols.sh -- what the shared objects export (nm -D): libfntstore.so
# exactly the functions store/fnt_store.h declares (those the store
# defines), none of its internal ones (fnt_io_*, fnt_buf_* ...), fntrace.so only its entry point sqlite3_fntrace_init
# (the store it links statically stays hidden); and libfntstore's SONAME.
. "$(dirname "$0")/lib.sh" symbols
command -v nm >/dev/null || { echo "nm not found"; exit 77; }

exported() { nm -D --defined-only "$1" | awk '$2 ~ /^[TDBRVWi]$/ {print $3}' | sort; }

declared=$(${CC:-cc} -E -P -x c "$FNT_SOURCE/store/fnt_store.h" \
           | grep -o '\bfnt_[a-z0-9_]*[[:space:]]*(' | tr -d ' (' | sort -u)
[ "$(printf '%s\n' "$declared" | wc -l)" -gt 30 ] || { echo "FAIL: too few declarations parsed"; exit 1; }
# The declared functions the store defines (a declaration may come before
# its code), and every global function it defines, internal ones included.
defined=$(nm --defined-only "$FNT_BUILD/libfntstore.a" 2>/dev/null | awk '$2 == "T" {print $3}' | sort -u)
[ "$(printf '%s\n' "$defined" | grep -c '^fnt_io_')" -gt 0 ] || { echo "FAIL: no internal symbols seen in libfntstore.a"; exit 1; }
expect "libfntstore.so exports exactly fnt_store.h's functions" \
       "$(comm -12 <(printf '%s\n' "$declared") <(printf '%s\n' "$defined"))" \
       "$(exported "$FNT_BUILD/libfntstore.so")"
expect "fntrace.so exports only sqlite3_fntrace_init" \
       "sqlite3_fntrace_init" "$(exported "$FNT_BUILD/fntrace.so")"
expect "libfntstore's SONAME carries the major version" \
       "libfntstore.so.$(sed -n 's/^#define FNT_VERSION_MAJOR \([0-9]*\)/\1/p' "$FNT_SOURCE/store/fnt_store.h")" \
       "$(readelf -d "$FNT_BUILD/libfntstore.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
finish
