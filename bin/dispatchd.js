#!/usr/bin/env node
'use strict';
require('../dist/src/cli/dispatchd')
  .main(process.argv.slice(2))
  .then((code) => process.exit(code))
  .catch((error) => {
    process.stderr.write(`dispatchd: ${error && error.stack ? error.stack : error}\n`);
    process.exit(1);
  });
