// The TypeScript declarations (dist/index.d.ts, resolved through the exports map) compile
// against real usage with tsc --strict, and reject misuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { here } from './helpers.mjs';

const require = createRequire(import.meta.url);

test('ErrorCode in index.d.ts names every code of ERROR_CODES', async () => {
  const { ERROR_CODES } = await import('keyroute');
  const { readFileSync } = await import('node:fs');
  const d = readFileSync(join(here, '..', 'js', 'index.d.ts'), 'utf8');
  const union = new Set([...d.match(/export type ErrorCode =([^;]*);/)[1].matchAll(/'([A-Z_0-9]+)'/g)].map((m) => m[1]));
  assert.deepEqual(Object.keys(ERROR_CODES).filter((c) => !union.has(c)), []);
});

test('index.d.ts, cache.d.ts and fleet.d.ts type-check real usage (tsc --strict)', () => {
  const tsc = require.resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(here, 'types', 'tsconfig.json')], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`);
  }
});
