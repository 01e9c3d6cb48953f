#!/usr/bin/env bash
# test_calls_xray.sh -- fnt_account on real XRay traces against
# `llvm-xray account -format csv -k -d` of the same log (see
# test/xray/account_check.py for what is compared and why open frames
# differ).  Programs: test/xray/prog.c (threads, recursion, tail calls) in
# basic and FDR mode, test/xray/prog.cc (demangled C++ names), and the Lua
# 5.4 interpreter built with XRay from Debian's source package (skipped
# with a note when the source cannot be fetched), running a script with
# recursion, table.sort calling back, load(), pcall/error (longjmp: exits
# that unwind), coroutines, and os.exit() from deep inside (open frames).
#
# llvm-xray 14's account drops every record older than one it has seen,
# across threads, and basic and FDR logs are not in time order: the logs are
# first converted to YAML sorted by time.  Its YAML reader refuses the
# version numbers of the binary formats (3 basic, 5 FDR), so the YAML
# header says 1; the records are the same.
. "${FNT_SOURCE:?}/test/xray/lib.sh" calls_xray
CHECK="$FNT_SOURCE/test/xray/account_check.py"
CACHE="$FNT_TEST_TMP/cache"
mkdir -p "$CACHE"
WH="$T/wh"

# record NAME MODE BINARY ARGS...: runs BINARY under XRay (basic or fdr),
# the log in $T/NAME/.
record(){
  local name=$1 mode=$2 bin=$3; shift 3
  mkdir -p "$T/$name"
  XRAY_OPTIONS="patch_premain=true xray_mode=xray-$mode xray_logfile_base=$T/$name/" \
  XRAY_BASIC_OPTIONS="func_duration_threshold_us=0 max_stack_depth=4096" \
  XRAY_FDR_OPTIONS="func_duration_threshold_us=0 buffer_size=65536 buffer_max=256" \
    "$bin" "$@" >"$T/$name.out" 2>"$T/$name.err" || fail "$name: $bin exited $?"
}

# compare NAME BINARY: files the log of $T/NAME/ as run NAME (in chunks of
# 20000 events, so calls cross chunks), then compares fnt_account with
# llvm-xray account.
compare(){
  local name=$1 bin=$2 log yaml
  log=$(ls "$T/$name"/*)
  [ -s "$log" ] || fail "$name: no XRay log"
  "$FNT" import-xray --warehouse "$WH" --run-id "$name" --chunk-events 20000 \
         --binary "$bin" "$log" >"$T/$name.import" || fail "$name: import failed"
  yaml="$T/$name.yaml"
  llvm-xray convert -sort -output-format=yaml -instr_map="$bin" "$log" >"$yaml"
  sed -i '0,/^  version: *[0-9]*/s//  version:         1/' "$yaml"
  llvm-xray account -format=csv -k -d -instr_map="$bin" "$yaml" >"$T/$name.csv" 2>"$T/$name.account.err" \
    || { cat "$T/$name.account.err"; fail "$name: llvm-xray account failed"; }
  q "$WH" <<<"SELECT symbol, calls, min_ns, p50_ns, p90_ns, p99_ns, max_ns, sum_ns FROM fnt_account('$name');" >"$T/$name.account"
  q "$WH" <<<"SELECT symbol, dur_ns, ended_by FROM fn_trace_calls WHERE run_id = '$name';" >"$T/$name.calls"
  [ -s "$T/$name.account" ] || fail "$name: fnt_account gave no rows"
  printf '%s (%s events): ' "$name" "$(q "$WH" <<<"SELECT count(*) FROM fn_trace_events WHERE run_id = '$name';")"
  /usr/bin/python3 "$CHECK" "$T/$name.csv" "$(sed -n 's/^  cycle-frequency: *//p' "$yaml")" \
    "$T/$name.account" "$T/$name.calls" || fail "$name: fnt_account differs from llvm-xray account"
}

record prog-basic basic "$T/prog" 20
compare prog-basic "$T/prog"
record prog-fdr fdr "$T/prog" 20
compare prog-fdr "$T/prog"

if clang++ $XFLAGS -o "$T/prog_cxx" "$FNT_SOURCE/test/xray/prog.cc" 2>"$T/clangxx.err"; then
  record cxx basic "$T/prog_cxx"
  compare cxx "$T/prog_cxx"
else
  echo "note: clang++ cannot build XRay C++ here: prog.cc not compared"
fi

# --- Lua 5.4 from Debian's source package ------------------------------------
# The source comes through apt-get source with a deb-src list made here from
# the machine's own archive (its first non-security URI), in a private apt
# state folder; the tarball is kept in $CACHE for the next run.
fetch_lua(){
  local apt="$CACHE/apt" uri suite
  ls "$CACHE"/lua5.4_*.orig.tar.gz >/dev/null 2>&1 && return 0
  command -v apt-get >/dev/null || return 1
  uri=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | awk '{print $2; exit}')
  [ -n "$uri" ] || uri=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | grep -v security \
                         | awk '{for(i=2;i<=NF;i++) if($i ~ /:\/\//){print $i; exit}}' | head -1)
  suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$uri" ] && [ -n "$suite" ] || return 1
  mkdir -p "$apt/lists/partial"
  echo "deb-src $uri $suite main" >"$apt/sources.list"
  local o=(-q -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
           -o Dir::State::Lists="$apt/lists" -o APT::Sandbox::User=root)
  timeout 300 apt-get "${o[@]}" update >"$T/apt.log" 2>&1 || return 1
  (cd "$CACHE" && timeout 300 apt-get "${o[@]}" source --download-only lua5.4) >>"$T/apt.log" 2>&1 || return 1
  ls "$CACHE"/lua5.4_*.orig.tar.gz >/dev/null 2>&1
}
if fetch_lua; then
  mkdir -p "$T/lua-src"
  tar -xzf "$(ls "$CACHE"/lua5.4_*.orig.tar.gz | head -1)" -C "$T/lua-src" --strip-components=1
  (cd "$T/lua-src/src" && clang $XFLAGS -DLUA_USE_LINUX -w -o "$T/lua5.4" \
       $(ls ./*.c | grep -v '/luac\.c$') -lm -ldl) || fail "building Lua with XRay"
  cat >"$T/work.lua" <<'LUA'
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
local t = {}
for i = 1, 300 do t[i] = (i * 7919) % 1000 end
table.sort(t, function(a, b) return a > b end)
local acc = 0
for i = 1, 40 do
  local f = load("return " .. string.rep("(", 20) .. i .. string.rep(")", 20) .. " + 1")
  acc = acc + f()
  local ok, err = pcall(function() error({code = i}) end)
  if not ok then acc = acc + err.code end
  local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1); return b * 2 end)
  acc = acc + co(i) + co(i)
  acc = acc + #string.format("%d-%s", i, tostring(fib(8)))
end
print(acc)
os.exit(0)
LUA
  record lua basic "$T/lua5.4" "$T/work.lua"
  [ "$(cat "$T/lua.out")" = 4371 ] || fail "the Lua script printed '$(cat "$T/lua.out")'"
  compare lua "$T/lua5.4"
  # os.exit() leaves main and the interpreter's frames open: they differ
  q "$WH" <<<"SELECT count(*) FROM fn_trace_calls WHERE run_id = 'lua' AND ended_by = 'open' AND symbol = 'main';" \
    | grep -qx 1 || fail "lua: main is not an open frame"
  q "$WH" <<<"SELECT count(*) FROM fn_trace_calls WHERE run_id = 'lua' AND ended_by = 'unwound';" \
    | grep -qvx 0 || fail "lua: no frame unwound by longjmp"
else
  echo "note: the lua5.4 source package could not be fetched (see $T/apt.log): Lua not compared"
fi
echo "ok: calls_xray"
