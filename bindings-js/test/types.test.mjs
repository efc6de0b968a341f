// The TypeScript declarations (dist/index.d.ts, resolved through the exports map) compile
// against real usage with tsc --strict, and reject misuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { here } from './helpers.mjs';

const require = createRequire(import.meta.url);

test('index.d.ts type-checks real usage (tsc --strict)', () => {
  const tsc = require.resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(here, 'types', 'tsconfig.json')], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`);
  }
});
