// client.js -- fntrace through Node's better-sqlite3, a third real SQLite
// client (its own bundled SQLite, not Debian's): load the extension, open a
// warehouse, file the SPEC §4 chunk and profile, read them back, check that
// a bad chunk's error reaches JavaScript and that t_ns above 2^53 comes back
// exact as a BigInt.
//   node client.js BUILD/fntrace WAREHOUSE_DIR   (better-sqlite3 on NODE_PATH)
'use strict';
const assert = require('assert/strict');
const Database = require('better-sqlite3');

const [extPath, warehouse] = process.argv.slice(2);
if (!extPath || !warehouse) {
  console.error('usage: node client.js BUILD/fntrace WAREHOUSE_DIR');
  process.exit(2);
}

const chunk = {
  repo: 'acme/widget', commit: '9f1c2e0',
  run_id: 'run-2026-12-02-0001', ts_micros: 1764680000000000,
  target: 'widget_tests', source: 'xray',
  chunk: 0, chunks: 2,
  total_events: 6, duration_ns: 5000, truncated: false, threads: 1,
  binaries: [{ path: 'build/widget_tests', build_id: 'ab12' }],
  functions: [
    { symbol: 'main', stable_id: 'c acme/widget * main().', local: true },
    { symbol: 'memcpy', stable_id: null, local: false },
  ],
  events: [[1, 0, 0, 0, 'entry'], [1, 1, 100, 1, 'entry'], [1, 2, 900, 1, 'exit']],
};
const profile = {
  run_id: 'prof-1', ts_micros: 1764680000000000, repo: 'acme/widget',
  commit: '9f1c2e0', target: 'widget_bench', samples: 4000,
  profile_ns: 1000000000,
  rows: [{ symbol: 'parse', stable_id: null, self_ns: 5, total_ns: 9,
           self_samples: 2, total_samples: 4 }],
};

let failures = 0;
function check(name, fn) {
  try {
    fn();
    console.log('ok   ' + name);
  } catch (e) {
    failures++;
    console.log('FAIL ' + name + '\n' + (e && e.stack ? e.stack : e));
  }
}

const db = new Database(':memory:');
db.loadExtension(extPath);
const fileChunk = db.prepare('SELECT fnt_file_chunk(?) AS r').pluck();
const fileProfile = db.prepare('SELECT fnt_file_profile(?) AS r').pluck();

check('fnt_open', () => {
  assert.equal(db.prepare('SELECT fnt_open(?)').pluck().get(warehouse),
               warehouse);
});

check('file the SPEC chunk: 1, again 0', () => {
  assert.equal(fileChunk.get(JSON.stringify(chunk)), 1);
  assert.equal(fileChunk.get(JSON.stringify(chunk)), 0);
});

check('read the events back', () => {
  const rows = db.prepare(
    'SELECT thread, seq_no, t_ns, stable_id, kind, symbol FROM fn_trace_events ' +
    'WHERE run_id = ? ORDER BY seq_no').all(chunk.run_id);
  assert.deepEqual(rows.map(r => ({ ...r })), [
    { thread: 1, seq_no: 0, t_ns: 0, stable_id: 'c acme/widget * main().', kind: 'entry', symbol: 'main' },
    { thread: 1, seq_no: 1, t_ns: 100, stable_id: null, kind: 'entry', symbol: 'memcpy' },
    { thread: 1, seq_no: 2, t_ns: 900, stable_id: null, kind: 'exit', symbol: 'memcpy' },
  ]);
  const run = db.prepare('SELECT events, mapped_events, first_ns, last_ns, binaries ' +
                         'FROM fn_trace_runs WHERE run_id = ?').get(chunk.run_id);
  assert.deepEqual({ ...run, binaries: JSON.parse(run.binaries) },
                   { events: 3, mapped_events: 1, first_ns: 0, last_ns: 900,
                     binaries: chunk.binaries });
});

check('t_ns above 2^53 round-trips exactly (BigInt)', () => {
  // JSON.stringify cannot write a BigInt: the numbers go in as text.
  const big = 2n ** 53n + 1n, top = 2n ** 63n - 1n;
  const text = JSON.stringify({ ...chunk, run_id: 'big', events: [] }).replace(
    '"events":[]', `"events":[[7,0,${big},0,"entry"],[7,1,${top},0,"exit"]]`);
  assert.equal(fileChunk.get(text), 1);
  const rows = db.prepare('SELECT t_ns FROM fn_trace_events WHERE run_id = ? ' +
                          'ORDER BY seq_no').pluck().safeIntegers(true).all('big');
  assert.deepEqual(rows, [big, top]);
});

check('a bad chunk: the message reaches JavaScript, nothing written', () => {
  const bad = JSON.parse(JSON.stringify(chunk));
  bad.chunk = 1;
  bad.events[2][4] = 'enter';
  assert.throws(() => fileChunk.get(JSON.stringify(bad)), (e) => {
    assert.equal(e.message,
      "fnt_file_chunk: events[2]: unknown kind 'enter' (want entry, exit or tail_exit)");
    assert.match(e.code, /^SQLITE_CONSTRAINT/);
    return true;
  });
  assert.equal(db.prepare('SELECT count(*) FROM fn_trace_runs').pluck().get(), 2);
  bad.events[2][4] = 'exit';
  assert.equal(fileChunk.get(JSON.stringify(bad)), 1);
});

check('file the SPEC profile and read it back', () => {
  assert.equal(fileProfile.get(JSON.stringify(profile)), 1);
  assert.equal(fileProfile.get(JSON.stringify(profile)), 0);
  const row = db.prepare('SELECT * FROM fn_profile WHERE run_id = ?').get('prof-1');
  assert.deepEqual({ ...row }, {
    run_id: 'prof-1', ts_micros: 1764680000000000, repo: 'acme/widget',
    commit: '9f1c2e0', target: 'widget_bench', stable_id: null, symbol: 'parse',
    self_ns: 5, total_ns: 9, self_samples: 2, total_samples: 4, samples: 4000,
    profile_ns: 1000000000,
  });
});

db.close();
process.exit(failures ? 1 : 0);
