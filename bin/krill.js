#!/usr/bin/env node
'use strict';
// The krill command: the CLI module (dist/krill.bundle.js when fresh, else dist/broker/cli.js; bin/load-cli.js) runs argv.
require('./load-cli.js')
  .loadCli()
  .then(({ cli }) => cli.main(process.argv.slice(2)))
  .catch((err) => {
    console.error(err && err.stack ? err.stack : err);
    process.exit(1);
  });
