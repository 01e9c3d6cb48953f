#!/usr/bin/python3
"""check_avro.py -- checks the Iceberg tables `fnt export-iceberg` wrote,
through Debian's python3-avro, against the Iceberg table spec (format v2).

    check_avro.py DEST OUT.json [--prev PREV.json] [--exact-disk]

For each table under DEST (events, runs, profiles, calls): the metadata file that
version-hint.text names carries every required v2 field; the current
snapshot's manifest list and its manifests read with python3-avro, carry
the spec's header keys, field-id attributes and required fields, and agree
with each other and with the files on disk (paths exist, sizes, counts).
OUT.json gets, per table, the live data files (path, records, partition),
the current snapshot's added and deleted files, the files on disk and the
schema -- for the DuckDB check and for the next run's --prev.  With
--prev: the current snapshot added exactly the live files that PREV did
not have, and deleted exactly those it lost; with --exact-disk also
exactly the files that appeared on disk since PREV.
Exit 0 and "N passed, 0 failed", or 1 with every failure listed.
"""
import json
import os
import struct
import sys
import warnings

import avro.datafile
import avro.io

# python3-avro names the map logical type it does not know; the arrays of
# key/value records are what the spec writes.
warnings.filterwarnings("ignore", category=avro.errors.IgnoredLogicalType)

# The field ids of store/FORMAT.md, which the Iceberg schemas must keep.
FIELDS = {
    "events": ["repo", "commit", "run_id", "thread", "seq_no", "t_ns",
               "stable_id", "kind", "symbol"],
    "runs": ["run_id", "ts_micros", "repo", "commit", "target", "source",
             "chunk", "chunks", "events", "mapped_events", "functions",
             "mapped_functions", "local_functions", "mapped_local_functions",
             "threads", "first_ns", "last_ns", "total_events", "duration_ns",
             "truncated", "binaries"],
    "profiles": ["run_id", "ts_micros", "repo", "commit", "target",
                 "stable_id", "symbol", "self_ns", "total_ns", "self_samples",
                 "total_samples", "samples", "profile_ns"],
    "calls": ["repo", "commit", "run_id", "thread", "call_id", "parent_id",
              "depth", "start_ns", "end_ns", "dur_ns", "self_ns", "key",
              "stable_id", "symbol", "ended_by", "outermost"],
}
TEXT = {"repo", "commit", "run_id", "stable_id", "kind", "symbol", "target",
        "source", "binaries", "key", "ended_by"}
OPTIONAL = {"commit", "stable_id", "parent_id"}
PARTITION = {"events": "run_id", "runs": "repo", "profiles": "repo", "calls": "run_id"}

# Iceberg spec, "Table Metadata Fields": required in v2.
META_REQUIRED = ["format-version", "table-uuid", "location",
                 "last-sequence-number", "last-updated-ms", "last-column-id",
                 "schemas", "current-schema-id", "partition-specs",
                 "default-spec-id", "last-partition-id", "sort-orders",
                 "default-sort-order-id"]
SNAPSHOT_REQUIRED = ["snapshot-id", "sequence-number", "timestamp-ms",
                     "manifest-list", "summary"]
# "Manifest Lists": required v2 fields, by field id.
LIST_REQUIRED = {500: "manifest_path", 501: "manifest_length",
                 502: "partition_spec_id", 517: "content",
                 515: "sequence_number", 516: "min_sequence_number",
                 503: "added_snapshot_id", 504: "added_files_count",
                 505: "existing_files_count", 506: "deleted_files_count",
                 512: "added_rows_count", 513: "existing_rows_count",
                 514: "deleted_rows_count"}
# "Manifests": manifest_entry and data_file required v2 fields.
ENTRY_REQUIRED = {0: "status", 2: "data_file"}
DATA_FILE_REQUIRED = {134: "content", 100: "file_path", 101: "file_format",
                      102: "partition", 103: "record_count",
                      104: "file_size_in_bytes"}
MANIFEST_KEYS = ["schema", "partition-spec", "partition-spec-id",
                 "format-version", "content"]

failures = []
passed = 0


def check(ok, what):
    global passed
    if ok:
        passed += 1
    else:
        failures.append(what)
    return ok


def field_ids(schema):
    """field-id -> field, over a record schema (as parsed JSON)."""
    return {f.get("field-id"): f for f in schema["fields"]}


def read_avro(path):
    with open(path, "rb") as f:
        r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
        meta = {k: v.decode() for k, v in r.meta.items()}
        rows = list(r)
        r.close()
    return meta, rows


def check_schema_ids(where, schema, required):
    ids = field_ids(schema)
    for fid, name in required.items():
        check(fid in ids and ids[fid]["name"] == name,
              f"{where}: field-id {fid} ({name}) missing")


def metrics(where, df, fields):
    """The column metrics of a data_file, by column name, bounds decoded
    from Iceberg's single-value form; every column has value and null
    counts, value counts are the record count."""
    out = {}
    def kv(name):
        return {e["key"]: e["value"] for e in (df.get(name) or [])}
    vc, nc, lo, hi = kv("value_counts"), kv("null_value_counts"), kv("lower_bounds"), kv("upper_bounds")
    for f in fields:
        i = f["id"]
        check(vc.get(i) == df["record_count"], f"{where}: value_counts[{i}] {vc.get(i)}")
        check(i in nc, f"{where}: no null_value_counts[{i}]")
        check((i in lo) == (i in hi), f"{where}: one bound of {i}")
        dec = (lambda b: b.decode()) if f["type"] == "string" else (lambda b: str(struct.unpack("<q", b)[0]))
        out[f["name"]] = {"nulls": nc.get(i), "lo": dec(lo[i]) if i in lo else None,
                          "hi": dec(hi[i]) if i in hi else None}
    return out


def check_table(dest, table, prev):
    tdir = os.path.join(dest, table)
    mdir = os.path.join(tdir, "metadata")
    with open(os.path.join(mdir, "version-hint.text")) as f:
        version = int(f.read().strip())
    mpath = os.path.join(mdir, f"v{version}.metadata.json")
    with open(mpath) as f:
        meta = json.load(f)
    for k in META_REQUIRED:
        check(k in meta, f"{mpath}: no {k}")
    check(meta["format-version"] == 2, f"{mpath}: format-version {meta['format-version']}")
    check(os.path.realpath(meta["location"]) == os.path.realpath(tdir),
          f"{mpath}: location {meta['location']}")
    # The schema: our columns, our field ids, our types.
    schema = [s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"]][0]
    names = [f["name"] for f in schema["fields"]]
    check(names == FIELDS[table], f"{mpath}: columns {names}")
    for i, f in enumerate(schema["fields"]):
        check(f["id"] == i + 1, f"{mpath}: {f['name']} has field id {f['id']}, FORMAT.md says {i+1}")
        want = "string" if f["name"] in TEXT else "long"
        check(f["type"] == want, f"{mpath}: {f['name']} is {f['type']}")
        check(f["required"] == (f["name"] not in OPTIONAL),
              f"{mpath}: {f['name']} required={f['required']}")
    check(meta["last-column-id"] == len(FIELDS[table]), f"{mpath}: last-column-id")
    spec = [s for s in meta["partition-specs"] if s["spec-id"] == meta["default-spec-id"]][0]
    src = FIELDS[table].index(PARTITION[table]) + 1
    check(spec["fields"] == [{"name": PARTITION[table], "transform": "identity",
                              "source-id": src, "field-id": 1000}],
          f"{mpath}: partition spec {spec}")
    check(meta["last-partition-id"] == 1000, f"{mpath}: last-partition-id")
    # Snapshots, refs, the snapshot log.
    snaps = {s["snapshot-id"]: s for s in meta["snapshots"]}
    cur = meta.get("current-snapshot-id")
    check(cur in snaps, f"{mpath}: current snapshot {cur} not listed")
    check(meta.get("refs", {}).get("main") == {"snapshot-id": cur, "type": "branch"},
          f"{mpath}: refs.main")
    seqs = []
    for s in meta["snapshots"]:
        for k in SNAPSHOT_REQUIRED:
            check(k in s, f"{mpath}: snapshot {s.get('snapshot-id')}: no {k}")
        check(s["summary"].get("operation") in ("append", "overwrite"),
              f"{mpath}: snapshot operation {s['summary'].get('operation')}")
        if "parent-snapshot-id" in s:
            check(s["parent-snapshot-id"] in snaps, f"{mpath}: parent of {s['snapshot-id']}")
        seqs.append(s["sequence-number"])
    check(seqs == sorted(seqs) and len(set(seqs)) == len(seqs), f"{mpath}: sequence numbers {seqs}")
    check(meta["last-sequence-number"] == max(seqs), f"{mpath}: last-sequence-number")
    check([e["snapshot-id"] for e in meta["snapshot-log"]] == [s["snapshot-id"] for s in meta["snapshots"]],
          f"{mpath}: snapshot-log")
    check(len(meta["metadata-log"]) == version - 1, f"{mpath}: metadata-log has {len(meta['metadata-log'])}")
    for e in meta["metadata-log"]:
        check(os.path.exists(e["metadata-file"]), f"{mpath}: metadata-log {e['metadata-file']} missing")
    snap = snaps[cur]
    check(meta["properties"].get("fntrace.warehouse-snapshot-id") ==
          snap["summary"].get("fntrace.warehouse-snapshot-id"), f"{mpath}: warehouse snapshot id")

    # The manifest list.
    lpath = snap["manifest-list"]
    lmeta, manifests = read_avro(lpath)
    lschema = json.loads(lmeta["avro.schema"])
    check_schema_ids(lpath, lschema, LIST_REQUIRED)
    check(lmeta.get("format-version") == "2", f"{lpath}: format-version key")
    check(lmeta.get("snapshot-id") == str(cur), f"{lpath}: snapshot-id key")
    check(lmeta.get("sequence-number") == str(snap["sequence-number"]), f"{lpath}: sequence-number key")
    live, added, deleted = [], [], []
    total_records = 0
    for m in manifests:
        for name in LIST_REQUIRED.values():
            check(m.get(name) is not None, f"{lpath}: {name} missing")
        mp = m["manifest_path"]
        if not check(os.path.exists(mp), f"{lpath}: {mp} missing"):
            continue
        check(os.path.getsize(mp) == m["manifest_length"], f"{lpath}: {mp}: manifest_length")
        check(m["added_snapshot_id"] in snaps, f"{lpath}: {mp}: added_snapshot_id unknown")
        check(m["sequence_number"] <= snap["sequence-number"], f"{lpath}: {mp}: sequence_number")
        check(m["content"] == 0 and m["partition_spec_id"] == 0, f"{lpath}: {mp}: content/spec")
        mmeta, entries = read_avro(mp)
        for k in MANIFEST_KEYS:
            check(k in mmeta, f"{mp}: no header key {k}")
        check(mmeta.get("format-version") == "2" and mmeta.get("content") == "data",
              f"{mp}: format-version/content keys")
        check(json.loads(mmeta["schema"]) == schema, f"{mp}: schema key differs from the table's")
        check(json.loads(mmeta["partition-spec"]) == spec["fields"], f"{mp}: partition-spec key")
        eschema = json.loads(mmeta["avro.schema"])
        check_schema_ids(mp, eschema, ENTRY_REQUIRED)
        dschema = field_ids(eschema)[2]["type"]
        check_schema_ids(mp, dschema, DATA_FILE_REQUIRED)
        pschema = field_ids(dschema)[102]["type"]
        check([(f["name"], f["field-id"]) for f in pschema["fields"]] == [(PARTITION[table], 1000)],
              f"{mp}: partition record {pschema}")
        counts = {0: [0, 0], 1: [0, 0], 2: [0, 0]}
        for e in entries:
            df = e["data_file"]
            path = df["file_path"]
            counts[e["status"]][0] += 1
            counts[e["status"]][1] += df["record_count"]
            check(df["content"] == 0 and df["file_format"] == "PARQUET", f"{mp}: {path}: content/format")
            check(e["snapshot_id"] in snaps, f"{mp}: {path}: snapshot_id {e['snapshot_id']}")
            # An added file inherits null sequence numbers from the list;
            # an existing or deleted one keeps its own (spec, "Sequence
            # Number Inheritance").
            if e["status"] == 1:
                check(m["sequence_number"] == snaps[m["added_snapshot_id"]]["sequence-number"],
                      f"{lpath}: {mp}: sequence_number is not its snapshot's")
            else:
                check(e["sequence_number"] is not None and e["file_sequence_number"] is not None
                      and e["sequence_number"] <= m["sequence_number"], f"{mp}: {path}: sequence numbers")
            if e["status"] == 1:
                check(e["snapshot_id"] == m["added_snapshot_id"], f"{mp}: {path}: added by another snapshot")
            if e["status"] == 2:
                if e["snapshot_id"] == cur:
                    deleted.append(path)
                continue
            if not check(os.path.exists(path), f"{mp}: {path} missing"):
                continue
            check(os.path.getsize(path) == df["file_size_in_bytes"], f"{mp}: {path}: file_size_in_bytes")
            check(os.path.realpath(path).startswith(os.path.realpath(tdir) + "/data/"), f"{mp}: {path} outside data/")
            part = df["partition"][PARTITION[table]]
            live.append({"path": path, "records": df["record_count"], "partition": part,
                         "metrics": metrics(f"{mp}: {path}", df, schema["fields"])})
            total_records += df["record_count"]
            if e["snapshot_id"] == cur and e["status"] == 1:
                added.append(path)
        check(counts[1][0] == m["added_files_count"] and counts[0][0] == m["existing_files_count"]
              and counts[2][0] == m["deleted_files_count"], f"{lpath}: {mp}: file counts {counts}")
        check(counts[1][1] == m["added_rows_count"] and counts[0][1] == m["existing_rows_count"]
              and counts[2][1] == m["deleted_rows_count"], f"{lpath}: {mp}: row counts {counts}")
    paths = [f["path"] for f in live]
    check(len(paths) == len(set(paths)), f"{tdir}: a live file listed twice")
    check(str(total_records) == snap["summary"].get("total-records"),
          f"{mpath}: summary total-records {snap['summary'].get('total-records')}, manifests {total_records}")
    check(str(len(live)) == snap["summary"].get("total-data-files"), f"{mpath}: summary total-data-files")
    disk = sorted(os.path.join(d, n) for d, _, ns in os.walk(os.path.join(tdir, "data"))
                  for n in ns if n.endswith(".parquet"))
    out = {"version": version, "snapshot_id": cur, "schema": schema["fields"],
           "live": live, "added": sorted(added), "deleted": sorted(deleted), "disk": disk}
    if prev is not None and table in prev:
        p = prev[table]
        before = {f["path"] for f in p["live"]}
        now = set(paths)
        if p["snapshot_id"] == cur:
            check(before == now, f"{tdir}: same snapshot, other files")
        else:
            check(set(added) == now - before, f"{tdir}: added {sorted(added)}, new live files {sorted(now - before)}")
            check(set(deleted) == before - now, f"{tdir}: deleted {sorted(deleted)}, gone {sorted(before - now)}")
            if "--exact-disk" in sys.argv:
                check(set(added) == set(disk) - set(p["disk"]),
                      f"{tdir}: added {sorted(added)}, new on disk {sorted(set(disk) - set(p['disk']))}")
    return out


def main():
    dest, outp = sys.argv[1], sys.argv[2]
    prev = None
    if "--prev" in sys.argv:
        with open(sys.argv[sys.argv.index("--prev") + 1]) as f:
            prev = json.load(f)
    out = {}
    for table in ("events", "runs", "profiles", "calls"):
        if os.path.isdir(os.path.join(dest, table)):
            out[table] = check_table(dest, table, prev)
    check(len(out) > 0, f"{dest}: no table")
    with open(outp, "w") as f:
        json.dump(out, f, indent=1)
    for f in failures:
        print("FAIL", f)
    print(f"{passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
