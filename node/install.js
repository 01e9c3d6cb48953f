// install.js -- npm's install step: puts the built extension beside
// index.js as fntrace.so.  From a source checkout (`npm install ./node`)
// it copies $FNTRACE_LOADABLE, else ../build/fntrace.so, afresh each time;
// a packed package (npm pack) already carries fntrace.so.
'use strict';
const fs = require('fs');
const path = require('path');

const dest = path.join(__dirname, 'fntrace.so');
const src = process.env.FNTRACE_LOADABLE ||
            path.join(__dirname, '..', 'build', 'fntrace.so');
if (fs.existsSync(src)) {
  if (path.resolve(src) !== dest) fs.copyFileSync(src, dest);
} else if (!fs.existsSync(dest)) {
  console.error(`fntrace: no fntrace.so at ${src}: build fntrace first ` +
                '(tools/setup.sh), or set FNTRACE_LOADABLE to the built fntrace.so');
  process.exit(1);
}
