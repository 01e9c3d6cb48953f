#!/usr/bin/env bash
# test_package_python.sh -- the Python package (python/): `pip install` of
# the source folder into a fresh venv, offline (--no-index: its build
# backend needs nothing from PyPI), taking this build's fntrace.so; then
# fntrace.loadable_path(), fntrace.__version__ and the SPEC §4 example
# through fntrace.load(conn) in the venv's python (-I: a fntrace.so in the
# current folder, such as build/, must not be imported as a module).
. "$(dirname "$0")/lib.sh" package-python
: "${FNT_SOURCE:?FNT_SOURCE must name the source folder}"
py=/usr/bin/python3
$py -c 'import venv, ensurepip' 2>/dev/null || { echo "python3-venv not installed"; exit 77; }

$py -m venv "$tmp/venv"
FNTRACE_LOADABLE="$FNT_BUILD/fntrace.so" \
  "$tmp/venv/bin/pip" install --no-index --no-cache-dir --quiet --disable-pip-version-check \
  "$FNT_SOURCE/python"
vpy="$tmp/venv/bin/python"
expect "the wheel carries this build's fntrace.so" "" \
       "$(cmp "$FNT_BUILD/fntrace.so" "$("$vpy" -I -c 'import fntrace; print(fntrace.loadable_path())').so" 2>&1)"
expect "fntrace.loadable_path() is inside the venv" "$tmp/venv/" \
       "$("$vpy" -I -c 'import fntrace; print(fntrace.loadable_path())' | grep -o "^$tmp/venv/")"
expect "fntrace.__version__ is the library's" \
       "$(sed -n 's/^#define FNT_VERSION_STRING "\(.*\)"/\1/p' "$FNT_SOURCE/store/fnt_store.h")" \
       "$("$vpy" -I -c 'import fntrace; print(fntrace.__version__)')"
spec_example "fntrace.load(conn): the SPEC example" - "$vpy" "$FNT_SOURCE/test/install/spec_example.py"
expect "pip uninstall" "" \
       "$("$tmp/venv/bin/pip" uninstall -y -q fntrace 2>&1; "$vpy" -I -c 'import fntrace' 2>/dev/null && echo still there)"
finish
