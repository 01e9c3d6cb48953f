// check_icebird.mjs -- reads the exported tables as Iceberg tables with
// icebird (npm; an Iceberg reader of its own: version-hint.text, the
// metadata JSON, the Avro manifest list and manifests, deleted entries, and
// the Parquet files through hyparquet) and compares every table's rows with
// what the SQL tables returned (check_duckdb.js expect), types included.
// DuckDB's iceberg_scan cannot be loaded offline; this is the end-to-end
// Iceberg read instead.
//
//   node check_icebird.mjs EXPECTED.json DEST
//
// icebird fetches by URL; a fetch for local absolute paths (GET, Range,
// HEAD) stands in for HTTP.  Prints "N passed, M failed"; exit 1 on one.
import { readFileSync } from 'fs'
import { icebergRead } from 'icebird'

globalThis.fetch = async (url, init = {}) => {
  const path = String(url).replace(/^file:\/\//, '')
  let buf
  try { buf = readFileSync(path) } catch { return new Response(null, { status: 404, statusText: 'Not Found' }) }
  if ((init.method || 'GET') === 'HEAD') {
    return new Response(null, { status: 200, headers: { 'content-length': String(buf.length) } })
  }
  const range = new Headers(init.headers || {}).get('range')
  if (range) {
    const m = /bytes=(\d+)-(\d*)/.exec(range)
    const a = Number(m[1]), b = m[2] ? Number(m[2]) + 1 : buf.length
    return new Response(buf.subarray(a, b), { status: 206, headers: { 'content-length': String(b - a) } })
  }
  return new Response(buf, { status: 200, headers: { 'content-length': String(buf.length) } })
}

const [expPath, dest] = process.argv.slice(2)
const expected = JSON.parse(readFileSync(expPath, 'utf8'))
let passed = 0
const failures = []
const check = (ok, what) => { if (ok) passed++; else failures.push(what); return ok }

function typed(v) {
  if (v === null || v === undefined) return ['null', null]
  if (typeof v === 'bigint') return ['integer', v.toString()]
  if (typeof v === 'string') return ['text', v]
  return [typeof v, String(v)]
}

for (const name of Object.keys(expected)) {
  const want = expected[name]
  let rows = []
  try {
    rows = await icebergRead({ tableUrl: `${dest}/${name}` })
  } catch (e) {
    // icebird refuses a table whose snapshot lists no data file.
    if (!check(want.rows.length === 0 && /No data manifest/.test(e.message), `${name}: ${e.message}`)) continue
  }
  const got = rows.map((r) => JSON.stringify(want.columns.map((c) => typed(r[c])))).sort()
  const exp = want.rows.map((r) => JSON.stringify(r)).sort()
  let same = got.length === exp.length
  for (let i = 0; same && i < got.length; i++) same = got[i] === exp[i]
  if (!check(same, `${name}: icebird read ${got.length} rows, SQL returned ${exp.length}; they differ`)) {
    const se = new Set(exp), sg = new Set(got)
    console.log('  only in Iceberg:', got.filter((r) => !se.has(r)).slice(0, 3))
    console.log('  only in SQL:', exp.filter((r) => !sg.has(r)).slice(0, 3))
  }
  console.log(`${name}: ${got.length} rows through icebird`)
}
for (const f of failures) console.log('FAIL', f)
console.log(`${passed} passed, ${failures.length} failed`)
process.exit(failures.length ? 1 : 0)
