// fntrace: the fntrace SQLite extension for Node (better-sqlite3, or any
// client with loadExtension(path)).
//   const db = new (require('better-sqlite3'))(':memory:');
//   require('fntrace').load(db);
//   db.prepare("SELECT fnt_open('my-warehouse')").get();
'use strict';
const fs = require('fs');
const path = require('path');

// The path of the fntrace.so this package carries.
function getLoadablePath() {
  const so = path.join(__dirname, 'fntrace.so');
  if (!fs.existsSync(so)) {
    throw new Error(`fntrace: ${so} is missing: reinstall the package ` +
                    '(its install step copies the built extension in)');
  }
  return so;
}

// Loads the extension into db (a better-sqlite3 Database).
function load(db) {
  db.loadExtension(getLoadablePath());
}

module.exports = { load, getLoadablePath };
