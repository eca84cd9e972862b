#!/usr/bin/env node
'use strict';

/**
 * An error that escaped dispatchd (a bug, or dist/ not built): one JSON line on stderr in the shape
 * of every line of its log (src/log), so a log pipeline parses it too, and exit 1.
 */
function crashed(error) {
  const text = error instanceof Error ? error.message : String(error);
  const line = { time: new Date().toISOString(), level: 'error', message: `dispatchd: ${text}`, code: 'crashed', error: text, stack: error instanceof Error ? error.stack : undefined, exitCode: 1 };
  process.stderr.write(`${JSON.stringify(line)}\n`);
  process.exit(1);
}

try {
  require('../dist/src/cli/dispatchd')
    .main(process.argv.slice(2))
    .then((code) => process.exit(code), crashed);
} catch (error) {
  crashed(error);
}
