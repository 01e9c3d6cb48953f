#!/usr/bin/env bash
# test_deb.sh -- `cpack -G DEB` of this build, installed system-wide with
# `apt-get install ./fntrace_*.deb` (its dependencies declared), then used
# as a user would: sqlite3 loads it by name (`.load fntrace`) and runs the
# SPEC §4 example, `fnt --help`, `man fnt`, and a program built against it
# with `pkg-config fntrace` and with find_package(fntrace); then purged,
# leaving nothing behind.
# Skipped (77) unless root, in a sanitizer build (the package is built from
# the Release build), or when a fntrace package is already installed (it is
# not replaced).
. "$(dirname "$0")/lib.sh" deb
: "${FNT_SOURCE:?FNT_SOURCE must name the source folder}"
[ "$(id -u)" = 0 ] || { echo "not root: the .deb is not installed"; exit 77; }
[ -z "${FNT_PRELOAD:-}" ] || { echo "sanitizer build: the .deb is tested from the Release build"; exit 77; }
{ command -v apt-get && command -v cpack; } >/dev/null || { echo "apt-get or cpack not found"; exit 77; }
if dpkg-query -W -f='${Status}' fntrace 2>/dev/null | grep -q 'ok installed'; then
  echo "a fntrace package is already installed: not replacing it"; exit 77
fi
apt=(apt-get -o DPkg::Lock::Timeout=600 -y -qq)
export DEBIAN_FRONTEND=noninteractive
trap '"${apt[@]}" purge fntrace >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

(cd "$tmp" && cpack -G DEB --config "$FNT_BUILD/CPackConfig.cmake" -B "$tmp/pkg" >/dev/null 2>&1) \
  || { echo "FAIL cpack -G DEB"; exit 1; }
deb=$(ls "$tmp"/pkg/fntrace_*.deb)
version=$(sed -n 's/^#define FNT_VERSION_STRING "\(.*\)"/\1/p' "$FNT_SOURCE/store/fnt_store.h")
expect "the package's version" "$version" "$(dpkg-deb -f "$deb" Version)"
expect "its dependencies are declared" "libsqlite3-0 libxxhash0 libzstd1" \
       "$(dpkg-deb -f "$deb" Depends | grep -o 'libsqlite3-0\|libxxhash0\|libzstd1' | sort | tr '\n' ' ' | sed 's/ $//')"

(cd "$tmp/pkg" && "${apt[@]}" install "./$(basename "$deb")" >/dev/null)
expect "installed" "install ok installed" "$(dpkg-query -W -f='${Status}' fntrace)"

spec_example "sqlite3 -cmd '.load fntrace' (by name): the SPEC example" fntrace
expect "fnt --help" "$("$FNT_BUILD/fnt" --help | head -1)" "$(/usr/bin/fnt --help | head -1)"
expect "fnt sql finds the installed extension" "v
$version" "$(cd "$tmp" && /usr/bin/fnt sql -w "$tmp/wh-sql" 'SELECT fntrace_version() AS v' 2>&1)"
if command -v man >/dev/null && dpkg -L fntrace | grep -q '/man1/fnt\.1'; then
  expect "man fnt" "1" "$(MANWIDTH=80 man fnt 2>/dev/null | grep -c '^NAME')"
  expect "man 7 fntrace" "1" "$(MANWIDTH=80 man 7 fntrace 2>/dev/null | grep -c '^NAME')"
else
  echo "skip man: man-db absent or dpkg excludes man pages here"
fi
expect "pkg-config finds it" "$version" "$(pkg-config --modversion fntrace)"
# shellcheck disable=SC2046
cc -o "$tmp/viewer" "$FNT_SOURCE/test/install/viewer.c" $(pkg-config --cflags --libs fntrace)
expect "a program built with pkg-config runs" "filed 1" "$("$tmp/viewer" "$tmp/wh-viewer" | sed -n 2p)"
cmake -S "$FNT_SOURCE/test/install" -B "$tmp/consumer" >/dev/null && cmake --build "$tmp/consumer" >/dev/null
expect "a program built with find_package(fntrace) runs" "filed 1" \
       "$("$tmp/consumer/viewer" "$tmp/wh-cmake" | sed -n 2p)"

"${apt[@]}" purge fntrace >/dev/null
expect "purged: nothing left" "absent 0" \
       "$(dpkg-query -W fntrace >/dev/null 2>&1 && echo present || echo absent) $(ls /usr/lib/fntrace.so /usr/bin/fnt /usr/lib/libfntstore.so* 2>/dev/null | wc -l)"
finish
