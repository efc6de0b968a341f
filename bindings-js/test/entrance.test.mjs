// Issue 12's JavaScript reproductions, each a test: inputs are checked at the entrance
// the same way in every language, and nothing wraps, traps or answers from stale data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ring, diff, keySlot, keySlots, groupBySlot, hashTag, sideKey, parseNodes, Pool, SlotMap, ERROR_CODES, LIMITS } from 'keyroute';

// Asserts `f` throws an Error with `code` (and, when given, a message matching `message`).
function refuses(f, code, message) {
  assert.throws(f, (e) => {
    assert.ok(e instanceof Error, `not an Error: ${e}`);
    assert.ok(!(e instanceof RangeError), `a RangeError escaped: ${e.message}`);
    assert.equal(e.code, code, e.message);
    assert.ok(code in ERROR_CODES);
    if (message) assert.match(e.message, message);
    return true;
  });
}

test('a string where a list is meant is BAD_TYPE, never iterated character by character', () => {
  refuses(() => new Ring('abc'), 'BAD_TYPE', /fromSpec/);
  refuses(() => new Ring('10.0.0.1:11211'), 'BAD_TYPE');
  refuses(() => new Ring(new String('abc')), 'BAD_TYPE');
  const ring = new Ring(['a', 'b']);
  refuses(() => ring.getMany('user:42'), 'BAD_TYPE', /wrap it in \[ \]/);
  refuses(() => ring.getManyIndexes('user:42'), 'BAD_TYPE');
  refuses(() => keySlots('foo'), 'BAD_TYPE');
  refuses(() => groupBySlot('foo'), 'BAD_TYPE');
  refuses(() => new SlotMap().ownersOfKeys('foo'), 'BAD_TYPE');
  const pool = new Pool();
  refuses(() => pool.seed('proxy-1'), 'BAD_TYPE');
  assert.equal(pool.size, 0, 'a refused seed adds nothing');
  // A single binary key is not a list of keys either.
  refuses(() => keySlots(new Uint8Array([1, 2])), 'BAD_TYPE');
  // Lists still work: arrays and other iterables.
  assert.deepEqual(ring.getMany(['user:42']), [ring.get('user:42')]);
  assert.deepEqual(Array.from(keySlots(new Set(['foo']))), [12182]);
  assert.equal(pool.seed(['proxy-1']), 1);
});

test('integers never wrap at 2**32: each is range-checked by core as given', () => {
  refuses(() => new Ring(['a'], { vnodes: 2 ** 32 + 160 }), 'BAD_VNODES', /4294967456/);
  refuses(() => new Ring(['a'], { vnodes: 2 ** 31 }), 'BAD_VNODES', /got 2147483648/);
  refuses(() => new Ring(['a'], { profile: 'node-hashring', defaultPort: 2 ** 32 + 11211 }), 'BAD_PORT', /4294978507/);
  refuses(() => new Ring(['a'], { profile: 'uhashring', pointsPerDigest: 300 }), 'BAD_POINTS_PER_DIGEST', /got 300/);
  const ring = new Ring(['a', 'b', 'c']);
  assert.deepEqual(ring.getN('x', 2 ** 32).sort(), ['a', 'b', 'c']);
  assert.deepEqual(ring.getN('x', 2n ** 100n).sort(), ['a', 'b', 'c']);
  refuses(() => ring.getN('x', -1), 'OUT_OF_RANGE');
  refuses(() => ring.getN('x', 1.5), 'BAD_TYPE');
  refuses(() => ring.getN('x', '2'), 'BAD_TYPE');
  refuses(() => ring.getN('x', 1e300), 'OUT_OF_RANGE');
  const pool = new Pool();
  pool.seed(['a', 'b']);
  refuses(() => pool.pickMany(2 ** 32 + 2), 'TOO_LARGE', new RegExp(String(LIMITS.picksPerCall)));
  assert.equal(pool.pickMany(2).length, 2);
  refuses(() => new Ring({ a: -(2 ** 64) }), 'NEGATIVE_WEIGHT', /-18446744073709551616/);
  refuses(() => new SlotMap().addMaster({ host: 'h', port: 2 ** 32 + 7000 }), 'BAD_PORT');
  const map = new SlotMap();
  const a = map.addMaster('h:1');
  refuses(() => map.assign(0, 2 ** 32, a), 'BAD_RANGE');
  refuses(() => map.slotOwner(2 ** 32), 'BAD_SLOT');
  refuses(() => map.assign(0, 1, 2 ** 32), 'UNKNOWN_NODE');
});

test('pickMany(1e8) is TOO_LARGE, not a trap; after any error every object keeps working', () => {
  const pool = new Pool();
  pool.seed(['proxy-1', 'proxy-2']);
  refuses(() => pool.pickMany(1e8), 'TOO_LARGE');
  refuses(() => pool.pickManyBytes(1e8), 'TOO_LARGE');
  assert.deepEqual(pool.counts(), [['proxy-1', 0], ['proxy-2', 0]], 'a refused call changes nothing');
  assert.equal(pool.pick(), 'proxy-1');
  assert.equal(pool.pickMany(LIMITS.picksPerCall).length, LIMITS.picksPerCall);
  refuses(() => pool.restore('x', 'zero'), 'BAD_RESTORE_MODE');
  assert.equal(pool.size, 2);

  const ring = new Ring(['a', 'b']);
  refuses(() => ring.add('a'), 'DUPLICATE_NODE');
  refuses(() => ring.setWeight('a', 0), 'ZERO_WEIGHT');
  refuses(() => ring.get(new Uint8Array(2 ** 31)), 'TOO_LARGE');
  assert.deepEqual(ring.names, ['a', 'b']);
  assert.ok(['a', 'b'].includes(ring.get('x')));
  ring.add('c');
  assert.equal(ring.size, 3);
});

test('keys above 512 MiB are TOO_LARGE before anything is copied (no RangeError, no trap)', () => {
  const ring = new Ring(['a', 'b']);
  const twoGiB = new Uint8Array(2 ** 31);
  refuses(() => ring.get(twoGiB), 'TOO_LARGE', /536870912/);
  refuses(() => ring.hashKey(twoGiB), 'TOO_LARGE');
  refuses(() => keySlot(twoGiB), 'TOO_LARGE');
  const fourGiB = new Uint8Array(2 ** 32);
  refuses(() => keySlot(fourGiB), 'TOO_LARGE');
  refuses(() => keySlots([fourGiB]), 'TOO_LARGE');
  refuses(() => hashTag(fourGiB), 'TOO_LARGE');
  // Big but allowed keys work (and are probed before wasm-bindgen copies them).
  const big = new Uint8Array(32 << 20).fill(0x61);
  assert.equal(keySlot(big), keySlots([big])[0]);
  assert.ok(['a', 'b'].includes(ring.get(big)));
});

test('a freed handle answers nothing, not even from cached data: INVALID_HANDLE', () => {
  const ring = new Ring(['a', 'b']);
  const other = new Ring(['a']);
  ring.free();
  for (const f of [() => ring.names, () => ring.size, () => ring.has('a'), () => ring.get('x'), () => ring.pointCount, () => ring.nodes(), () => ring.clone(), () => ring.add('c')]) {
    refuses(f, 'INVALID_HANDLE', /freed/);
  }
  refuses(() => diff(ring, other), 'INVALID_HANDLE');
  refuses(() => diff(other, ring), 'INVALID_HANDLE');
  refuses(() => other.diff(ring), 'INVALID_HANDLE');
  ring.free(); // harmless
  const map = new SlotMap();
  map.free();
  refuses(() => map.size, 'INVALID_HANDLE');
  refuses(() => map.addMaster('h:1'), 'INVALID_HANDLE');
  const pool = new Pool();
  pool.free();
  refuses(() => pool.size, 'INVALID_HANDLE');
  refuses(() => pool.pickMany(1), 'INVALID_HANDLE');
  const live = new SlotMap();
  const n = live.addMaster('h:1');
  live.assign(0, 16383, n);
  const plan = live.plan([[n, 1]]);
  plan.free();
  refuses(() => live.applyPlan(plan), 'INVALID_HANDLE');
});

test('lone surrogates are BAD_UTF8 everywhere a string enters, never U+FFFD', () => {
  const lone = 'user:\uD800';
  const ring = new Ring(['a', 'b']);
  refuses(() => ring.get(lone), 'BAD_UTF8');
  refuses(() => ring.get('\uDC00x'), 'BAD_UTF8');
  refuses(() => ring.getN(lone, 1), 'BAD_UTF8');
  refuses(() => ring.hashKey(lone), 'BAD_UTF8');
  refuses(() => ring.getMany(['ok', lone]), 'BAD_UTF8');
  refuses(() => ring.add(lone), 'BAD_UTF8');
  refuses(() => new Ring([lone]), 'BAD_UTF8');
  refuses(() => keySlot(lone), 'BAD_UTF8');
  refuses(() => keySlots(['é', lone]), 'BAD_UTF8');
  refuses(() => hashTag(lone), 'BAD_UTF8');
  refuses(() => sideKey(lone), 'BAD_UTF8');
  refuses(() => parseNodes(`a,${lone}`), 'BAD_UTF8');
  const pool = new Pool();
  refuses(() => pool.seed([lone]), 'BAD_UTF8');
  refuses(() => pool.restore(lone), 'BAD_UTF8');
  assert.equal(pool.size, 0);
  // A proper pair is fine, and hashes as its UTF-8 bytes.
  const emoji = 'user:\u{1F600}';
  assert.equal(ring.get(emoji), ring.get(new TextEncoder().encode(emoji)));
  assert.equal(keySlot(emoji), keySlot(new TextEncoder().encode(emoji)));
  // A member that is not UTF-8: the string methods are BAD_UTF8 and pick nothing; the
  // bytes methods serve.
  pool.seed(['ok', Uint8Array.of(0xff)]);
  refuses(() => pool.counts(), 'BAD_UTF8', /Bytes/);
  refuses(() => pool.pick(), 'BAD_UTF8', /nothing was picked/);
  refuses(() => pool.pickMany(3), 'BAD_UTF8');
  assert.deepEqual(pool.countsBytes(), [[new TextEncoder().encode('ok'), 0], [Uint8Array.of(0xff), 0]]);
  assert.deepEqual(pool.pickBytes(), new TextEncoder().encode('ok'));
  assert.equal(pool.remove(Uint8Array.of(0xff)), 0);
  assert.equal(pool.pick(), 'ok', 'text picks again once the binary member is gone');
});

test('messages show what was given: initial 1e300, weight "3"', () => {
  const pool = new Pool();
  assert.throws(() => pool.seed(['a'], { initial: 1e300 }), (e) => {
    assert.equal(e.code, 'OUT_OF_RANGE');
    assert.doesNotMatch(e.message, /18446744073709551615/);
    assert.match(e.message, /1e\+300/);
    return true;
  });
  refuses(() => pool.seed(['a'], { initial: 2 ** 53 + 2 }), 'BAD_COUNT', /9007199254740994/);
  refuses(() => pool.seed(['a'], { initial: 9007199254740993n }), 'BAD_COUNT', /9007199254740993/);
  refuses(() => pool.seed(['a'], { initial: -1 }), 'BAD_COUNT');
  refuses(() => pool.seed(['a'], { initial: '1' }), 'BAD_TYPE');
  refuses(() => pool.seed(['a'], { overwrite: 'yes' }), 'BAD_TYPE');
  assert.throws(() => new Ring({ a: '3' }), (e) => {
    assert.equal(e.code, 'BAD_TYPE');
    assert.match(e.message, /"3", a string/);
    assert.match(e.message, /write 3, without quotes/);
    assert.doesNotMatch(e.message, /has weight 3;/);
    return true;
  });
  refuses(() => new Ring({ a: 1.5 }), 'BAD_WEIGHT', /1\.5/);
  refuses(() => new Ring({ a: NaN }), 'BAD_WEIGHT');
  refuses(() => new Ring({ a: Infinity }), 'OUT_OF_RANGE');
  refuses(() => new Ring(['a']).add('b', 1.5), 'BAD_WEIGHT');
  refuses(() => new Ring(['a']).setWeight('a', '2'), 'BAD_TYPE');
});

test('empty members are EMPTY_MEMBER and change nothing', () => {
  const pool = new Pool();
  pool.seed(['a']);
  refuses(() => pool.seed(['b', '']), 'EMPTY_MEMBER');
  refuses(() => pool.seed([new Uint8Array(0)]), 'EMPTY_MEMBER');
  refuses(() => pool.restore(''), 'EMPTY_MEMBER');
  refuses(() => pool.restore('', 'keep'), 'EMPTY_MEMBER');
  assert.deepEqual(pool.counts(), [['a', 0]]);
});

test('batches above the stated limits are TOO_LARGE before anything is allocated', () => {
  // A sparse array reports a length it does not hold.
  const sparse = [];
  sparse.length = LIMITS.batchKeys + 1;
  refuses(() => keySlots(sparse), 'TOO_LARGE', new RegExp(String(LIMITS.batchKeys)));
  refuses(() => new Ring(['a']).getMany(sparse), 'TOO_LARGE');
  // An endless iterable is cut at the limit, not collected forever.
  function* forever() {
    for (;;) yield 'k';
  }
  refuses(() => keySlots(forever()), 'TOO_LARGE');
  // Holes are not keys.
  refuses(() => keySlots([, 'a']), 'BAD_TYPE'); // eslint-disable-line no-sparse-arrays
});
