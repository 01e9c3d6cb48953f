#!/usr/bin/env bash
# test_install.sh -- `cmake --install` of this build into a temporary
# prefix (and under DESTDIR): the files land where GNUInstallDirs says, and
# they work there: the viewer example (test/install/viewer.c) built against
# the prefix with `pkg-config --cflags --libs fntrace`, statically with
# `pkg-config --static`, and with CMake's find_package(fntrace), and run;
# the installed fnt finds its extension (`fnt sql`); sqlite3 loads the
# installed fntrace.so and runs the SPEC §4 example; the man pages lint.
. "$(dirname "$0")/lib.sh" install
: "${FNT_SOURCE:?FNT_SOURCE must name the source folder}"
command -v pkg-config >/dev/null || { echo "pkg-config not found"; exit 77; }
cc=${CC:-cc}
# In a sanitizer build the installed libraries need the sanitizer runtime.
sanflags=()
[ -n "${FNT_PRELOAD:-}" ] && sanflags=(-fsanitize=address,undefined)
version=$(sed -n 's/^#define FNT_VERSION_STRING "\(.*\)"/\1/p' "$FNT_SOURCE/store/fnt_store.h")
format=$(sed -n 's/^#define FNT_FORMAT_VERSION \([0-9]*\).*/\1/p' "$FNT_SOURCE/store/fnt_store.h")

# DESTDIR: everything under DESTDIR/PREFIX, nothing elsewhere.
DESTDIR="$tmp/dest" cmake --install "$FNT_BUILD" --prefix /opt/fntrace >/dev/null
expect "DESTDIR is honoured" "opt" "$(ls "$tmp/dest")"

p="$tmp/prefix"
cmake --install "$FNT_BUILD" --prefix "$p" >/dev/null
libdir=$(dirname "$(find "$p" -name libfntstore.a)")
rel=${libdir#"$p"/}
got=$(cd "$p" && find . \( -type f -o -type l \) | sed 's|^\./||' | sed "s|^$rel/|LIBDIR/|" | sort)
want=$(sort <<EOF2
bin/fnt
include/fnt_store.h
LIBDIR/cmake/fntrace/fntraceConfig.cmake
LIBDIR/cmake/fntrace/fntraceConfigVersion.cmake
LIBDIR/cmake/fntrace/fntraceTargets.cmake
LIBDIR/cmake/fntrace/fntraceTargets-$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$FNT_BUILD/CMakeCache.txt" | tr '[:upper:]' '[:lower:]').cmake
LIBDIR/fntrace.so
LIBDIR/libfntstore.a
LIBDIR/libfntstore.so
LIBDIR/libfntstore.so.${version%%.*}
LIBDIR/libfntstore.so.$version
LIBDIR/pkgconfig/fntrace.pc
share/man/man1/fnt.1
share/man/man7/fntrace.7
EOF2
)
expect "installed files" "$want" "$got"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
expect "pkg-config --modversion" "$version" "$(pkg-config --modversion fntrace)"
expect "pkg-config extension variable" "$libdir/fntrace.so" \
       "$(realpath -m "$(pkg-config --variable=extension fntrace)")"

viewer_want=$(cat <<EOF2
fntrace $version
filed 1
1 0 0 entry main
1 1 100 entry memcpy
1 2 900 exit memcpy
heat ?memcpy 800 800 1
heat c acme/widget * main(). 900 100 1
EOF2
)
src="$FNT_SOURCE/test/install/viewer.c"
run() { env LD_PRELOAD="${FNT_PRELOAD:-}" "$@" 2>&1 || true; }

# shellcheck disable=SC2046  # pkg-config's output is words
$cc "${sanflags[@]}" -o "$tmp/viewer-pc" "$src" $(pkg-config --cflags --libs fntrace) \
    -Wl,-rpath,"$libdir"
expect "viewer via pkg-config (libfntstore.so)" "$viewer_want" "$(run "$tmp/viewer-pc" "$tmp/wh-pc")"
expect "it links the shared library" "1" \
       "$(readelf -d "$tmp/viewer-pc" | grep -c 'NEEDED.*libfntstore\.so\.')"

# shellcheck disable=SC2046
$cc "${sanflags[@]}" -o "$tmp/viewer-static" "$src" $(pkg-config --cflags fntrace) \
    -L"$libdir" -Wl,-Bstatic -lfntstore -Wl,-Bdynamic \
    $(pkg-config --static --libs-only-l fntrace | sed 's/-lfntstore//')
expect "viewer via pkg-config --static (libfntstore.a)" "$viewer_want" \
       "$(run "$tmp/viewer-static" "$tmp/wh-static")"

cmake -S "$FNT_SOURCE/test/install" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$p" \
      -DCMAKE_C_FLAGS="${sanflags[*]}" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
expect "viewer via find_package(fntrace)" "$viewer_want" "$(run "$tmp/consumer/viewer" "$tmp/wh-cmake")"
expect "find_package's fntrace_EXTENSION" "$libdir/fntrace.so" \
       "$(realpath -m "$(cat "$tmp/consumer/extension.txt")")"

expect "installed fnt --version" "fnt $version (format $format)" "$(run "$p/bin/fnt" --version)"
expect "installed fnt sql loads the installed extension" "v
$version" "$(cd "$tmp" && run env PATH="$p/bin:$PATH" fnt sql -w "$tmp/wh-sql" 'SELECT fntrace_version() AS v')"
spec_example "sqlite3 .load PREFIX/LIBDIR/fntrace: the SPEC example" "$libdir/fntrace"

if command -v man >/dev/null; then
  expect "man finds the installed fnt(1)" "$p/share/man/man1/fnt.1" "$(MANPATH="$p/share/man" man -w fnt)"
  expect "man finds the installed fntrace(7)" "$p/share/man/man7/fntrace.7" \
         "$(MANPATH="$p/share/man" man -w 7 fntrace)"
fi
finish
