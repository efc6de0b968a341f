// Redis Cluster slots: the real-Redis vectors, and agreement with the npm peers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { keySlot, keySlots, hashTag } from 'keyroute';
import { vectors, hex, rng } from './helpers.mjs';

const require = createRequire(import.meta.url);
// @redis/client 1.x computes slots with its dependency cluster-key-slot: load that one.
const redisRequire = createRequire(require.resolve('@redis/client'));
const redisClientSlot = redisRequire('cluster-key-slot');
const clusterKeySlot = require('cluster-key-slot');

const files = vectors('slot');

test('slot vectors exist', () => assert.ok(files.length >= 1));

for (const [name, v] of files) {
  test(`slot vector ${name}: keySlot on bytes and strings`, () => {
    const keys = v.cases.map((c) => hex(c.key_hex));
    for (let i = 0; i < keys.length; i++) {
      assert.equal(keySlot(keys[i]), v.cases[i].slot, `key ${v.cases[i].key_hex}`);
      const s = Buffer.from(keys[i]).toString('utf8');
      if (Buffer.from(s, 'utf8').equals(Buffer.from(keys[i]))) assert.equal(keySlot(s), v.cases[i].slot);
    }
    const batch = keySlots(keys);
    assert.ok(batch instanceof Uint16Array);
    assert.deepEqual(Array.from(batch), v.cases.map((c) => c.slot));
  });

  test(`slot vector ${name}: where cluster-key-slot is wrong, keyroute follows Redis`, () => {
    let wrong = 0;
    for (const c of v.cases) {
      const key = Buffer.from(c.key_hex, 'hex');
      if (redisClientSlot(key) !== c.slot) {
        wrong++;
        assert.equal(keySlot(Uint8Array.from(key)), c.slot);
      }
    }
    // The empty first tag cases from docs/design.md are among them.
    assert.ok(wrong > 0, 'cluster-key-slot was expected to disagree with Redis on empty tags');
  });
}

test('docs/design.md examples', () => {
  assert.equal(keySlot('123456789'), 0x31c3 & 16383);
  assert.equal(keySlot('{}{a}'), 13650);
  assert.equal(keySlot('{{a}}'), 10276);
  assert.equal(keySlot('foo{}{bar}'), 8363);
  assert.equal(keySlot('foo{bar}{zap}'), 5061);
  assert.equal(keySlot(''), 0);
  // cluster-key-slot gets the empty-tag ones wrong:
  assert.notEqual(clusterKeySlot('{}{a}'), 13650);
  assert.notEqual(clusterKeySlot('foo{}{bar}'), 8363);
});

test('hashTag', () => {
  assert.equal(hashTag('user:{42}:cart'), '42');
  assert.equal(hashTag('{{a}}'), '{a');
  assert.equal(hashTag('foo{}{bar}'), 'foo{}{bar}');
  assert.equal(hashTag('no-tag'), 'no-tag');
  assert.equal(hashTag('{é}x'), 'é');
  assert.deepEqual(hashTag(Uint8Array.of(0x7b, 0xff, 0x7d)), Uint8Array.of(0xff));
});

function randomKey(r) {
  const alphabet = 'ab{}:xyz01é日\u{1F600}';
  const chars = Array.from(alphabet);
  const len = Math.floor(r() * 12);
  let s = '';
  for (let i = 0; i < len; i++) s += chars[Math.floor(r() * chars.length)];
  return s;
}

test('keySlot agrees with @redis/client (cluster-key-slot) on random keys without empty tags', () => {
  const r = rng(42);
  let compared = 0;
  for (let i = 0; i < 20000; i++) {
    const k = r() < 0.5 ? `key:${Math.floor(r() * 1e9)}` : randomKey(r);
    const open = k.indexOf('{');
    // cluster-key-slot differs from Redis exactly on an empty first tag: "{}" right after the first "{".
    if (open >= 0 && k[open + 1] === '}') continue;
    compared++;
    assert.equal(keySlot(k), redisClientSlot(k), `key ${JSON.stringify(k)}`);
    assert.equal(keySlot(Buffer.from(k)), redisClientSlot(Buffer.from(k)));
  }
  assert.ok(compared > 15000);
});

test('keySlots: one batch equals single calls, mixed strings and bytes', () => {
  const r = rng(7);
  const keys = [];
  for (let i = 0; i < 5000; i++) keys.push(r() < 0.2 ? Buffer.from(randomKey(r)) : r() < 0.5 ? randomKey(r) : `user:${i}`);
  const got = keySlots(keys);
  assert.equal(got.length, keys.length);
  keys.forEach((k, i) => assert.equal(got[i], keySlot(k)));
  const ascii = keys.filter((k) => typeof k === 'string' && /^[\x00-\x7f]*$/.test(k));
  const got2 = keySlots(ascii);
  ascii.forEach((k, i) => assert.equal(got2[i], keySlot(k)));
  assert.deepEqual(Array.from(keySlots([])), []);
  assert.deepEqual(Array.from(keySlots(new Set(['foo']))), [12182]);
});

test('bad keys are TypeErrors with a code', () => {
  assert.throws(() => keySlot(42), { name: 'TypeError', code: 'BAD_TYPE' });
  assert.throws(() => keySlots([1]), { code: 'BAD_TYPE' });
  assert.throws(() => keySlots(5), { code: 'BAD_TYPE' });
});
