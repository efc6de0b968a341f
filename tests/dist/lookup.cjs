// test-dist: copied into a new npm project that installed the tarball from dist/ alone
// (`npm install keyroute-<version>.tgz`). Reads the case file of case.py and prints each
// key's node, one per line.
//
// usage: node lookup.cjs CASE_FILE
'use strict';
const fs = require('fs');
const path = require('path');

const where = require.resolve('keyroute');
if (!where.startsWith(path.join(__dirname, 'node_modules') + path.sep)) {
  throw new Error(`keyroute resolved outside this project: ${where}`);
}
const { Ring } = require('keyroute');

const [profile, spec, ...keys] = fs.readFileSync(process.argv[2], 'utf8').replace(/\n$/, '').split('\n');
const nodes = Object.fromEntries(spec.split(',').map((e) => {
  const i = e.lastIndexOf('=');
  return [e.slice(0, i), Number(e.slice(i + 1))];
}));
const ring = new Ring(nodes, { profile });
process.stdout.write(keys.map((k) => `${ring.get(k)}\n`).join(''));
ring.free();
