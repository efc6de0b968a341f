// docs/parity.md holds the JavaScript column to the package: every name of a `yes:` cell
// exists (an export of `keyroute`, `keyroute/cache`, `keyroute/fleet`, `keyroute/redis` or
// `keyroute/serve`, or a method, getter or static of an exported class or object:
// `Ring.getN`, `cacheCalls.get`), and every `no:` cell gives a reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as main from 'keyroute';
import * as cache from 'keyroute/cache';
import * as fleet from 'keyroute/fleet';
import * as redis from 'keyroute/redis';
import * as serve from 'keyroute/serve';
import { repo } from './helpers.mjs';

function rows() {
  const lines = readFileSync(join(repo, 'docs', 'parity.md'), 'utf8').split('\n').filter((l) => l.startsWith('|'));
  const header = lines[0].split('|').map((c) => c.trim());
  const col = header.indexOf('JavaScript');
  assert.ok(col > 0, 'docs/parity.md has a JavaScript column');
  return lines.slice(2).map((l) => {
    const cells = l.split('|').map((c) => c.trim());
    return { capability: cells[1], cell: cells[col] };
  });
}

function exists(name) {
  const [head, member, ...rest] = name.split('.');
  const kr = [main, cache, redis, serve].find((m) => head in m) || fleet;
  if (rest.length || !(head in kr)) return false;
  if (member === undefined) return true;
  const owner = kr[head];
  if (typeof owner !== 'function') return member in Object(owner);
  return member in owner || member in owner.prototype;
}

test('every name of a JavaScript "yes" cell exists; every "no" gives a reason', () => {
  const all = rows();
  assert.ok(all.length >= 20, `${all.length} rows`);
  let names = 0;
  for (const { capability, cell } of all) {
    if (cell.startsWith('no:')) {
      assert.ok(cell.length > 'no: '.length + 10, `${capability}: a "no" needs a reason`);
      continue;
    }
    assert.ok(cell.startsWith('yes:'), `${capability}: the cell must start with "yes:" or "no:", not ${JSON.stringify(cell)}`);
    const listed = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]).filter((n) => /^[A-Za-z_][\w.]*$/.test(n));
    assert.ok(listed.length > 0, `${capability}: a "yes" names what provides it`);
    for (const n of listed) {
      // Core's own names may be cited in the explanation after the list (e.g. `keySlots`
      // is both); every listed name must exist in the package.
      assert.ok(exists(n), `${capability}: ${n} is not in the package`);
      names++;
    }
  }
  assert.ok(names >= 40, `${names} names checked`);
});

test('the check itself fails on a missing name', () => {
  assert.equal(exists('Ring.getN'), true);
  assert.equal(exists('Ring.fromSpec'), true);
  assert.equal(exists('Ring.profile'), true);
  assert.equal(exists('Ring.noSuchMethod'), false);
  assert.equal(exists('noSuchExport'), false);
  assert.equal(exists('SmartCache.getOrLoad'), true);
  assert.equal(exists('cacheCalls.warmBegin'), true);
  assert.equal(exists('SmartCache.noSuchMethod'), false);
  assert.equal(exists('Leases.reclaim'), true);
  assert.equal(exists('Client.request'), true);
  assert.equal(exists('Client.noSuchMethod'), false);
});
