"""fntrace: the fntrace SQLite extension (function traces and profiles,
queried with SQL) for Python's sqlite3.

    import sqlite3, fntrace
    conn = sqlite3.connect(":memory:")
    fntrace.load(conn)
    conn.execute("SELECT fnt_open('my-warehouse')")
"""
import os

from ._version import __version__

__all__ = ["load", "loadable_path", "__version__"]


def loadable_path():
    """The extension's path without its .so suffix, as
    sqlite3.Connection.load_extension() and SQLite's load_extension() take it."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "fntrace")


def load(conn):
    """Loads the extension into the sqlite3 connection conn (the SQLite it
    uses must allow extensions: Debian's does)."""
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError("fntrace: this Python's sqlite3 module was built without "
                           "extension loading (Debian's python3 has it)")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(loadable_path())
    finally:
        conn.enable_load_extension(False)
