"""A PEP 517 backend that builds the fntrace wheel with the standard library
only (so pip needs no network for build requirements): the package
fntrace/, the built extension as fntrace/fntrace.so, _version.py, and the
.dist-info.  The version is FNT_VERSION_STRING of ../store/fnt_store.h, the
project's one version."""
import base64
import hashlib
import os
import re
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "fntrace"
SUMMARY = "The fntrace SQLite extension: function traces and profiles, queried with SQL"


def _version():
    header = os.path.join(HERE, "..", "store", "fnt_store.h")
    with open(header, encoding="utf-8") as f:
        m = re.search(r'#define FNT_VERSION_STRING "([0-9.]+)"', f.read())
    if not m:
        raise RuntimeError(header + ": no FNT_VERSION_STRING")
    return m.group(1)


def _loadable():
    path = os.environ.get("FNTRACE_LOADABLE") or os.path.join(HERE, "..", "build", "fntrace.so")
    if not os.path.isfile(path):
        raise RuntimeError(
            "fntrace.so not found at %s: build fntrace first (tools/setup.sh), "
            "or set FNTRACE_LOADABLE to the built fntrace.so" % path)
    return path


def _tag():
    # The wheel carries a native library: tied to this platform, not to a
    # Python version (it is loaded by SQLite, not imported).
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _metadata(version):
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "License: see the fntrace source\nRequires-Python: >=3.7\n"
            % (NAME, version, SUMMARY))


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "%s,sha256=%s,%d" % (arcname, digest.decode(), len(data))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    dist_info = "%s-%s.dist-info" % (NAME, version)
    with open(_loadable(), "rb") as f:
        files = [("fntrace/fntrace.so", f.read())]
    with open(os.path.join(HERE, "fntrace", "__init__.py"), "rb") as f:
        files.append(("fntrace/__init__.py", f.read()))
    files.append(("fntrace/_version.py", ('__version__ = "%s"\n' % version).encode()))
    files.append((dist_info + "/METADATA", _metadata(version).encode()))
    files.append((dist_info + "/WHEEL",
                  ("Wheel-Version: 1.0\nGenerator: fntrace build_backend\n"
                   "Root-Is-Purelib: false\nTag: %s\n" % _tag()).encode()))
    files.append((dist_info + "/top_level.txt", b"fntrace\n"))
    record = [_record_line(n, d) for n, d in files] + [dist_info + "/RECORD,,"]
    files.append((dist_info + "/RECORD", ("\n".join(record) + "\n").encode()))

    name = "%s-%s-%s.whl" % (NAME, version, _tag())
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files:
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if arcname.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []
