#!/usr/bin/env node
'use strict';
require('../dist/src/cli/dispatchctl')
  .main(process.argv.slice(2))
  .then((code) => process.exit(code))
  .catch((error) => {
    process.stderr.write(`dispatchctl: ${error && error.stack ? error.stack : error}\n`);
    process.exit(1);
  });
