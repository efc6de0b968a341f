// The download budget of the package (issue 6): the .wasm must stay at most 60 KB
// gzipped (level 9), the size browsers fetch. A size, not a timing: deterministic for a
// given build, so a change to core or to the bindings that grows it fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const BUDGET = 60_000;

test('the .wasm is at most 60 KB gzipped, and both targets ship the same module', () => {
  const web = readFileSync(join(dist, 'web', 'keyroute_js_bg.wasm'));
  const node = readFileSync(join(dist, 'node', 'keyroute_js_bg.wasm'));
  assert.ok(web.equals(node), 'the web and node builds must carry the same .wasm');
  const gz = gzipSync(web, { level: 9 }).length;
  assert.ok(gz <= BUDGET, `.wasm is ${gz} bytes gzipped, over the ${BUDGET}-byte budget`);
});
