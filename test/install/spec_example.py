"""spec_example.py -- the SPEC §4 example through the installed fntrace
Python package: runs spec_example.sql (one statement a line; :warehouse and
:chunk bound) and prints each row as sqlite3's list mode does.
    python spec_example.py SQL_FILE CHUNK_JSON WAREHOUSE_DIR"""
import re
import sqlite3
import sys

import fntrace

sql_file, chunk_file, warehouse = sys.argv[1:4]
with open(chunk_file, encoding="utf-8") as f:
    params = {"chunk": f.read(), "warehouse": warehouse}
conn = sqlite3.connect(":memory:")
fntrace.load(conn)
with open(sql_file, encoding="utf-8") as f:
    for stmt in filter(None, (line.strip() for line in f)):
        used = {k: params[k] for k in re.findall(r":(\w+)", stmt) if k in params}
        for row in conn.execute(stmt, used):
            print("|".join("" if v is None else str(v) for v in row))
