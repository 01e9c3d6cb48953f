// check_duckdb.js -- reads the Parquet files of `fnt export-iceberg` with
// DuckDB (@duckdb/node-api, its own Parquet reader) and compares them with
// what fntrace's SQL tables return through the real sqlite3 shell.
//
//   node check_duckdb.js expect EXT WAREHOUSE OUT.json
//       the rows of fn_trace_events / fn_trace_runs / fn_profile /
//       fn_trace_calls, each
//       value as [SQLite typeof, text], via sqlite3 with EXT loaded
//   node check_duckdb.js check EXPECTED.json LIVE.json
//       LIVE.json from check_avro.py: per table the live data files.  Every
//       file is read by DuckDB: the rows of a table's files equal the
//       expected rows, types included (BIGINT <-> integer, VARCHAR <->
//       text, NULL <-> null); each file's row count, partition value,
//       null counts and bounds match its manifest entry; parquet_schema() shows the Iceberg field
//       ids and REQUIRED/OPTIONAL; parquet_metadata() shows zstd, the
//       encodings and statistics for every column chunk.  Then DuckDB's
//       iceberg_scan, when its extension can be loaded (offline it cannot:
//       said, not failed).
// Prints "N passed, M failed"; exit 1 on a failure.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');

const TABLES = { events: 'fn_trace_events', runs: 'fn_trace_runs', profiles: 'fn_profile',
  calls: 'fn_trace_calls' };
const PARTITION = { events: 'run_id', runs: 'repo', profiles: 'repo', calls: 'run_id' };
let passed = 0;
const failures = [];
function check(ok, what) { if (ok) passed++; else failures.push(what); return ok; }

function sqliteRows(ext, wh, table) {
  const cols = sqliteColumns(ext, wh, table);
  const parts = cols.map((c) => `typeof("${c}"), CAST("${c}" AS TEXT)`).join(', ');
  const sql = `.load ${ext}\nSELECT fnt_open('${wh}') IS NULL;\n` +
    `SELECT json_group_array(json_array(${parts})) FROM ${table};\n`;
  const out = runSqlite(sql).split('\n');
  return { columns: cols, rows: JSON.parse(out[1]).map(pairs) };
}

function sqliteColumns(ext, wh, table) {
  const out = runSqlite(`.load ${ext}\nSELECT fnt_open('${wh}') IS NULL;\n` +
    `SELECT group_concat(name, ',') FROM pragma_table_info('${table}');\n`).split('\n');
  return out[1].split(',');
}

function runSqlite(sql) {
  const r = spawnSync('sqlite3', ['-batch', '-bail', ':memory:'], {
    input: sql, encoding: 'utf8', maxBuffer: 1 << 30,
    env: Object.assign({}, process.env, { LD_PRELOAD: process.env.FNT_PRELOAD || '' }),
  });
  if (r.status !== 0) throw new Error(`sqlite3 failed: ${r.stderr}`);
  return r.stdout;
}

// [t1, v1, t2, v2, ...] -> [[t1, v1], [t2, v2], ...]
function pairs(flat) {
  const out = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

function sortRows(rows) { return rows.map((r) => JSON.stringify(r)).sort(); }

function lit(s) { return `'${String(s).replace(/'/g, "''")}'`; }

async function checkTable(con, name, expected, live) {
  const files = live.live.map((f) => f.path);
  const want = expected[name];
  const fileList = `[${files.map(lit).join(', ')}]`;
  if (files.length === 0) {
    check(want.rows.length === 0, `${name}: no live file, ${want.rows.length} rows expected`);
    return;
  }
  // Per file: the manifest's record count and partition value.
  for (const f of live.live) {
    const r = (await con.runAndReadAll(
      `SELECT count(*)::VARCHAR AS n, count(DISTINCT "${PARTITION[name]}")::VARCHAR AS k, ` +
      `min("${PARTITION[name]}") AS p FROM read_parquet(${lit(f.path)})`)).getRowObjectsJson()[0];
    check(r.n === String(f.records), `${f.path}: ${r.n} rows, the manifest says ${f.records}`);
    check(r.k === '1' && r.p === f.partition, `${f.path}: partition ${r.p}, the manifest says ${f.partition}`);
  }
  // The manifest's column metrics (null counts, bounds) hold for the file.
  for (const f of live.live) {
    for (const [col, m] of Object.entries(f.metrics)) {
      const r = (await con.runAndReadAll(
        `SELECT (count(*) - count("${col}"))::VARCHAR AS nulls, min("${col}")::VARCHAR AS lo, ` +
        `max("${col}")::VARCHAR AS hi FROM read_parquet(${lit(f.path)})`)).getRowObjectsJson()[0];
      check(r.nulls === String(m.nulls), `${f.path}: ${col}: ${r.nulls} NULLs, the manifest says ${m.nulls}`);
      if (m.lo !== null) {
        check(r.lo === m.lo && r.hi === m.hi, `${f.path}: ${col}: ${r.lo}..${r.hi}, the manifest says ${m.lo}..${m.hi}`);
      } else {  // no bounds: only for a column of NULLs, or text bounds over 64 bytes
        check(r.lo === null || Buffer.byteLength(r.lo) > 64 || Buffer.byteLength(r.hi) > 64,
          `${f.path}: ${col}: no bounds in the manifest`);
      }
    }
  }
  // The rows, types included.
  const desc = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${fileList})`)).getRowObjectsJson();
  const cols = desc.map((d) => d.column_name);
  check(JSON.stringify(cols) === JSON.stringify(want.columns), `${name}: columns ${cols} vs ${want.columns}`);
  for (const d of desc) {
    const text = live.schema.find((f) => f.name === d.column_name).type === 'string';
    check(d.column_type === (text ? 'VARCHAR' : 'BIGINT'), `${name}.${d.column_name}: DuckDB type ${d.column_type}`);
  }
  const sel = cols.map((c) => `CASE WHEN "${c}" IS NULL THEN 'null' WHEN typeof("${c}") = 'BIGINT' ` +
    `THEN 'integer' WHEN typeof("${c}") = 'VARCHAR' THEN 'text' ELSE typeof("${c}") END, "${c}"::VARCHAR`).join(', ');
  const got = (await con.runAndReadAll(`SELECT ${sel} FROM read_parquet(${fileList})`)).getRowsJson()
    .map((r) => pairs(r));
  const a = sortRows(got), b = sortRows(want.rows);
  let same = a.length === b.length;
  for (let i = 0; same && i < a.length; i++) same = a[i] === b[i];
  if (!check(same, `${name}: DuckDB read ${a.length} rows, SQL returned ${b.length}; they differ`)) {
    const sb = new Set(b);
    const extra = a.filter((r) => !sb.has(r)).slice(0, 3);
    const sa = new Set(a);
    const missing = b.filter((r) => !sa.has(r)).slice(0, 3);
    console.log('  only in Parquet:', extra, '\n  only in SQL:', missing);
  }
  // Field ids and repetition, per file.
  const sch = (await con.runAndReadAll(
    `SELECT file_name, name, field_id::VARCHAR AS id, repetition_type AS rep FROM parquet_schema(${fileList}) ` +
    `WHERE name <> 'table'`)).getRowObjectsJson();
  for (const s of sch) {
    const f = live.schema.find((x) => x.name === s.name);
    check(f && s.id === String(f.id), `${s.file_name}: ${s.name} has field id ${s.id}`);
    check(f && s.rep === (f.required ? 'REQUIRED' : 'OPTIONAL'), `${s.file_name}: ${s.name} is ${s.rep}`);
  }
  check(sch.length === files.length * cols.length, `${name}: parquet_schema rows ${sch.length}`);
  // Column chunks: zstd, encodings, statistics.
  const md = (await con.runAndReadAll(
    `SELECT file_name, row_group_id::VARCHAR AS rg, path_in_schema AS col, compression, encodings, ` +
    `stats_null_count::VARCHAR AS nulls, stats_min_value AS lo, stats_max_value AS hi, ` +
    `row_group_num_rows::VARCHAR AS n FROM parquet_metadata(${fileList})`)).getRowObjectsJson();
  const groups = new Set();
  for (const m of md) {
    const f = live.schema.find((x) => x.name === m.col);
    const where = `${m.file_name} row group ${m.rg} ${m.col}`;
    groups.add(`${m.file_name}/${m.rg}`);
    check(m.compression === 'ZSTD', `${where}: compression ${m.compression}`);
    const enc = f.type === 'string' ? 'RLE_DICTIONARY' : 'DELTA_BINARY_PACKED';
    check(m.nulls !== null, `${where}: no null count`);
    if (m.nulls !== m.n) {
      check(m.encodings.includes(enc), `${where}: encodings ${m.encodings}`);
      check(m.lo !== null && m.hi !== null, `${where}: no min/max statistics`);
    }
  }
  // The statistics hold: per row group, min/max/nulls as DuckDB computes them.
  check(md.length === groups.size * cols.length, `${name}: parquet_metadata rows`);
  console.log(`${name}: ${files.length} files, ${groups.size} row groups, ${a.length} rows`);
}

async function statsExact(con, live) {
  // For the events table: the statistics of every integer column chunk
  // equal the min/max DuckDB computes over that row group's rows.
  if (!live.events || live.events.live.length === 0) return;
  for (const f of live.events.live) {
    const md = (await con.runAndReadAll(
      `SELECT row_group_id::INT AS rg, path_in_schema AS col, stats_min_value AS lo, stats_max_value AS hi, ` +
      `row_group_num_rows::BIGINT AS n FROM parquet_metadata(${lit(f.path)}) ORDER BY rg`)).getRowObjectsJson();
    let start = 0n;
    const byRg = {};
    for (const m of md) (byRg[m.rg] = byRg[m.rg] || []).push(m);
    for (const rg of Object.keys(byRg).sort((x, y) => x - y)) {
      const n = BigInt(byRg[rg][0].n);
      for (const m of byRg[rg]) {
        const r = (await con.runAndReadAll(
          `SELECT min("${m.col}")::VARCHAR AS lo, max("${m.col}")::VARCHAR AS hi FROM ` +
          `(SELECT "${m.col}" FROM read_parquet(${lit(f.path)}) LIMIT ${n} OFFSET ${start})`)).getRowObjectsJson()[0];
        check(r.lo === m.lo && r.hi === m.hi, `${f.path} row group ${rg} ${m.col}: statistics ${m.lo}..${m.hi}, rows ${r.lo}..${r.hi}`);
      }
      start += n;
    }
  }
}

async function icebergScan(con, dest, expected) {
  try {
    await con.run('LOAD iceberg');
  } catch (e) {
    console.log(`iceberg_scan: not checked, DuckDB's iceberg extension cannot be loaded here: ${e.message.split('\n')[0]}`);
    return;
  }
  for (const name of Object.keys(TABLES)) {
    const r = (await con.runAndReadAll(`SELECT count(*)::VARCHAR AS n FROM iceberg_scan(${lit(dest + '/' + name)})`)).getRowObjectsJson()[0];
    check(r.n === String(expected[name].rows.length), `iceberg_scan(${name}): ${r.n} rows`);
  }
}

async function main() {
  const [mode, a, b, c] = process.argv.slice(2);
  if (mode === 'expect') {
    const out = {};
    for (const [name, table] of Object.entries(TABLES)) out[name] = sqliteRows(a, b, table);
    fs.writeFileSync(c, JSON.stringify(out));
    return;
  }
  const { DuckDBInstance } = require('@duckdb/node-api');
  const expected = JSON.parse(fs.readFileSync(a, 'utf8'));
  const live = JSON.parse(fs.readFileSync(b, 'utf8'));
  const inst = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const con = await inst.connect();
  for (const name of Object.keys(TABLES)) {
    if (check(live[name], `${name}: not exported`)) await checkTable(con, name, expected, live[name]);
  }
  await statsExact(con, live);
  if (c) await icebergScan(con, c, expected);
  for (const f of failures) console.log('FAIL', f);
  console.log(`${passed} passed, ${failures.length} failed`);
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
