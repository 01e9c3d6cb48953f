// spec_example.js -- the SPEC §4 example through the installed fntrace npm
// package and better-sqlite3: runs spec_example.sql (one statement a line;
// :warehouse and :chunk bound) and prints each row as sqlite3's list mode.
//   node spec_example.js SQL_FILE CHUNK_JSON WAREHOUSE_DIR
'use strict';
const fs = require('fs');
const Database = require('better-sqlite3');
const fntrace = require('fntrace');

const [sqlFile, chunkFile, warehouse] = process.argv.slice(2);
const params = { chunk: fs.readFileSync(chunkFile, 'utf8'), warehouse };
const db = new Database(':memory:');
fntrace.load(db);
for (const stmt of fs.readFileSync(sqlFile, 'utf8').split('\n').filter(s => s.trim())) {
  const used = {};
  for (const [, k] of stmt.matchAll(/:(\w+)/g)) if (k in params) used[k] = params[k];
  for (const row of db.prepare(stmt).raw().all(used)) {
    console.log(row.map(v => (v === null ? '' : String(v))).join('|'));
  }
}
