#!/usr/bin/env node
'use strict';
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` via `prepare`).
// It exits as soon as the command is done: a command has released what it holds by then, and a
// stray timer of a library must not keep a stopped service alive.
require('../dist/src/cli/main.js').main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`visibility-api: ${err && err.message ? err.message : String(err)}`);
    process.exit(1);
  },
);
