// The least-used pool model against the operation sequences recorded on a real Redis.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Pool, LEAST_USED_SCRIPT, LEAST_USED_SHA1, SCRIPTS } from 'keyroute';
import { vectors, hex } from './helpers.mjs';

const toHex = (b) => Buffer.from(b).toString('hex');
const files = vectors('pool');

// The code the model gives where the script on Redis answered `op.error`: an empty member
// (EMPTY_MEMBER), else a count outside 0..=2^53 (BAD_COUNT).
function refusal(op) {
  if (/members must not be empty/.test(op.error)) return 'EMPTY_MEMBER';
  if (/initial count/.test(op.error)) return 'BAD_COUNT';
  assert.fail(`a recorded error this test does not know: ${op.error}`);
}

test('pool vectors exist', () => assert.ok(files.length >= 1));

test("SCRIPTS: core's scripts, each SHA1 the SHA1 of its text (what EVALSHA needs)", () => {
  // Exactly core's scripts, in order, as recorded in tests/vectors/scripts/scripts.json
  // (core's build assembles each text from core/src/script/lua/: one file per script).
  const recorded = JSON.parse(readFileSync(new URL('../../tests/vectors/scripts/scripts.json', import.meta.url), 'utf8'));
  assert.deepEqual(Object.keys(SCRIPTS), recorded.map((s) => s.name));
  for (const s of recorded) assert.deepEqual({ ...SCRIPTS[s.name] }, s, s.name);
  const luaDir = new URL('../../core/src/script/lua/', import.meta.url);
  const luaNames = readdirSync(luaDir).filter((f) => f.endsWith('.lua')).map((f) => f.slice(0, -4).replaceAll('_', '-'));
  assert.deepEqual(Object.keys(SCRIPTS).sort(), luaNames.sort());
  assert.deepEqual(Object.keys(SCRIPTS).slice(0, 4), ['least-used', 'seed', 'remove', 'restore']);
  for (const s of Object.values(SCRIPTS)) {
    assert.equal(createHash('sha1').update(s.text).digest('hex'), s.sha1, s.name);
    assert.ok(Number.isInteger(s.numKeys) && s.numKeys >= 1, s.name);
    assert.ok(Object.isFrozen(s));
  }
  assert.ok(Object.isFrozen(SCRIPTS));
});

for (const [name, v] of files) {
  test(`pool vector ${name}: script texts and SHA1s`, () => {
    for (const [scriptName, s] of Object.entries(v.scripts)) {
      assert.equal(SCRIPTS[scriptName].sha1, s.sha1, scriptName);
    }
    assert.equal(LEAST_USED_SCRIPT, SCRIPTS['least-used'].text);
    assert.equal(LEAST_USED_SHA1, v.scripts['least-used'].sha1);
    assert.match(LEAST_USED_SCRIPT, /ZINCRBY/);
  });

  for (const seq of v.sequences) {
    test(`pool vector ${name} / ${seq.name}`, () => {
      const pool = new Pool();
      seq.ops.forEach((op, i) => {
        const at = `op ${i} (${op.op})`;
        switch (op.op) {
          case 'seed':
            if (op.error !== undefined) {
              assert.throws(() => pool.seed(op.members_hex.map(hex), { initial: op.initial, overwrite: op.overwrite }), (e) => e instanceof Error && e.code === refusal(op), at);
            } else {
              assert.equal(pool.seed(op.members_hex.map(hex), { initial: op.initial, overwrite: op.overwrite }), op.result, at);
            }
            break;
          case 'pick': {
            const got = pool.pickBytes();
            assert.equal(got === null ? null : toHex(got), op.result_hex ?? null, at);
            break;
          }
          case 'pick_many':
            assert.deepEqual(pool.pickManyBytes(op.n).map(toHex), op.result_hex, at);
            break;
          case 'remove':
            assert.equal(pool.remove(hex(op.member_hex)), op.result ?? null, at);
            break;
          case 'restore':
            if (op.error !== undefined) {
              assert.throws(() => pool.restore(hex(op.member_hex), op.mode), (e) => e instanceof Error && e.code === refusal(op), at);
            } else {
              assert.equal(pool.restore(hex(op.member_hex), op.mode), op.result, at);
            }
            break;
          default:
            assert.fail(`unknown op ${op.op}`);
        }
        assert.deepEqual(pool.countsBytes().map(([m, c]) => [toHex(m), c]), op.counts, `${at} counts`);
        assert.deepEqual(pool.removedBytes().map(([m, c]) => [toHex(m), c]), op.removed, `${at} removed`);
      });
      pool.free();
    });
  }
}

test('Pool: empty pool gives null, strings round-trip', () => {
  const pool = new Pool();
  assert.equal(pool.pick(), null);
  assert.deepEqual(pool.pickMany(3), []);
  assert.equal(pool.seed(['proxy-b', 'proxy-a']), 2);
  assert.equal(pool.pick(), 'proxy-a');
  assert.equal(pool.pick(), 'proxy-b');
  assert.equal(pool.count('proxy-a'), 1);
  assert.equal(pool.remove('proxy-a'), 1);
  assert.equal(pool.remove('proxy-a'), null);
  assert.equal(pool.removedCount('proxy-a'), 1);
  assert.equal(pool.pick(), 'proxy-b');
  assert.equal(pool.restore('proxy-a', 'at_minimum'), 2);
  assert.equal(pool.size, 2);
  assert.equal(pool.minCount(), 2);
  assert.ok(pool.has('proxy-a'));
  assert.deepEqual(pool.counts(), [['proxy-a', 2], ['proxy-b', 2]]);
  assert.throws(() => pool.restore('x', 'zero'), { code: 'BAD_RESTORE_MODE' });
  assert.throws(() => pool.seed(['x'], { initial: -1 }), { code: 'BAD_COUNT' });
  assert.throws(() => pool.seed(['x'], { initial: 2 ** 54 }), { code: 'BAD_COUNT' });
  pool.free();
  assert.throws(() => pool.pick(), { code: 'INVALID_HANDLE' });
});
