// The JavaScript API itself: shapes, errors with codes, ownership, diff, slot maps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as kr from 'keyroute';
import { Ring, diff, PROFILES, SlotMap, ReshardPlan, keySlot } from 'keyroute';

test('exports', () => {
  for (const name of ['Ring', 'diff', 'parseNodes', 'parseWeights', 'PROFILES', 'keySlot', 'keySlots', 'groupBySlot', 'hashTag', 'sideKey', 'SLOT_COUNT', 'SlotMap', 'ReshardPlan', 'Pool', 'SCRIPTS', 'LEAST_USED_SCRIPT', 'LEAST_USED_SHA1', 'ERROR_CODES', 'LIMITS', 'liveHandles', 'init', 'initSync', 'initCluster', 'initClusterSync']) {
    assert.ok(kr[name] !== undefined, name);
  }
  assert.deepEqual([...PROFILES], ['native', 'libketama', 'libmemcached', 'uhashring', 'node-hashring', 'hash_ring']);
  // 'twemproxy', the old name of the libmemcached ring, still builds it.
  assert.equal(new Ring(['a'], { profile: 'twemproxy' }).profile, 'libmemcached');
  assert.equal(kr.SLOT_COUNT, 16384);
});

test('init resolves in Node too', async () => {
  const api = await kr.default();
  assert.equal(api.Ring, Ring);
});

test('docs/design.md key facts (libketama)', () => {
  const ring = new Ring({ '127.0.0.1:11211': 600, '127.0.0.1:11212': 400 }, { profile: 'libketama' });
  assert.equal(ring.pointCount, 320);
  assert.equal(ring.get('test'), '127.0.0.1:11211');
  assert.equal(ring.hashKey('test'), 3446378249n);
  assert.equal(ring.get(new TextEncoder().encode('test')), '127.0.0.1:11211');
  ring.free();
});

test('node list forms', () => {
  const a = new Ring(['a', 'b', 'c']);
  const b = new Ring([['a', 1], ['b', 1], ['c', 1]]);
  const c = new Ring([{ name: 'a' }, { name: 'b', weight: 1 }, { name: 'c' }]);
  const d = new Ring(new Map([['a', 1], ['b', 1], ['c', 1]]));
  const e = new Ring({ a: 1, b: 1, c: 1 });
  for (const r of [b, c, d, e]) {
    assert.deepEqual(r.names, ['a', 'b', 'c']);
    for (let i = 0; i < 200; i++) assert.equal(r.get(`k${i}`), a.get(`k${i}`));
  }
  assert.equal(a.profile, 'native');
  assert.equal(a.bits, 64);
  assert.equal(a.size, 3);
  assert.equal(a.pointCount, 480);
  assert.equal(new Ring(['a'], { vnodes: 10 }).pointCount, 10);
});

test('empty ring answers null, never throws', () => {
  const r = new Ring();
  assert.equal(r.get('x'), null);
  assert.deepEqual(r.getN('x', 3), []);
  assert.deepEqual(r.getMany(['x', 'y']), [null, null]);
  assert.deepEqual(Array.from(r.getManyIndexes(['x'])), [-1]);
  assert.deepEqual(r.shares(), {});
  assert.equal(r.points().positions.length, 0);
});

test('getN walks distinct nodes clockwise', () => {
  const r = new Ring(['a', 'b', 'c', 'd']);
  for (let i = 0; i < 100; i++) {
    const n = r.getN(`key${i}`, 3);
    assert.equal(n.length, 3);
    assert.equal(new Set(n).size, 3);
    assert.equal(n[0], r.get(`key${i}`));
  }
  assert.equal(r.getN('k', 10).length, 4);
});

test('errors are Error objects with a code', () => {
  const cases = [
    [() => new Ring(['a', 'a']), 'DUPLICATE_NODE'],
    [() => new Ring({ a: 0 }), 'ZERO_WEIGHT'],
    [() => new Ring({ a: -1 }), 'NEGATIVE_WEIGHT'],
    [() => new Ring({ a: 2 ** 33 }), 'WEIGHT_TOO_LARGE'],
    [() => new Ring({ a: 1.5 }), 'BAD_WEIGHT'],
    [() => new Ring({ a: 'heavy' }), 'BAD_TYPE'],
    [() => new Ring({ a: '3' }), 'BAD_TYPE'],
    [() => new Ring([''],), 'EMPTY_NODE_NAME'],
    [() => new Ring(['a'], { profile: 'nope' }), 'UNKNOWN_PROFILE'],
    [() => new Ring(['a'], { vnodes: 0 }), 'BAD_VNODES'],
    [() => new Ring(['a'], { vnodes: 1.5 }), 'BAD_TYPE'],
    [() => new Ring(['a'], { vnode: 10 }), 'BAD_OPTION'],
    [() => new Ring(['a'], { pointsPerDigest: 3 }), 'BAD_OPTION'],
    [() => new Ring(['a'], { profile: 'libketama', pointsPerDigest: 5 }), 'BAD_POINTS_PER_DIGEST'],
    [() => new Ring(['a'], { profile: 'libketama', defaultPort: 70000 }), 'BAD_PORT'],
    [() => new Ring(['a']).remove('b'), 'UNKNOWN_NODE'],
    [() => new Ring(['a']).add('a'), 'DUPLICATE_NODE'],
    [() => new Ring(['a']).setWeight('a', 0), 'ZERO_WEIGHT'],
    [() => new Ring(['a'], { profile: 'native', vnodes: 65536 }).setWeight('a', 100000), 'TOO_MANY_POINTS'],
    [() => diff(new Ring(['a']), new Ring(['a'], { profile: 'libketama' })), 'INCOMPATIBLE_RINGS'],
    [() => new Ring([42]), 'BAD_TYPE'],
  ];
  for (const [f, code] of cases) {
    assert.throws(f, (e) => {
      assert.ok(e instanceof Error, `${code}: not an Error`);
      assert.equal(e.code, code, `${e.message}`);
      assert.ok(e.message.length > 10);
      return true;
    });
  }
});

test('profile names: _ and - interchangeable', () => {
  assert.equal(new Ring(['a'], { profile: 'node_hashring' }).profile, 'node-hashring');
  assert.equal(new Ring(['a'], { profile: 'HASH-RING' }).profile, 'hash_ring');
});

test('add, remove, setWeight change shares; points and arcs are typed arrays', () => {
  const r = new Ring({ a: 1, b: 1 }, { profile: 'libketama' });
  const s = r.shares();
  assert.ok(Math.abs(s.a + s.b - 1) < 1e-12);
  r.add('c', 2);
  assert.equal(r.size, 3);
  r.setWeight('c', 4);
  assert.equal(r.nodes().find((n) => n.name === 'c').weight, 4);
  assert.ok(r.shares().c > 0.5);
  r.remove('a');
  assert.deepEqual(r.names, ['b', 'c']);
  assert.ok(!r.has('a'));
  const p = r.points();
  assert.ok(p.positions instanceof BigUint64Array);
  assert.ok(p.fractions instanceof Float64Array);
  assert.ok(p.owners instanceof Uint32Array);
  assert.equal(p.positions.length, r.pointCount);
  assert.equal(p.bits, 32);
  for (let i = 1; i < p.positions.length; i++) assert.ok(p.positions[i - 1] <= p.positions[i]);
  for (let i = 0; i < p.positions.length; i++) assert.equal(p.fractions[i], Number(p.positions[i]) / 2 ** 32);
  const a = r.arcs();
  assert.equal(a.starts.length, a.owners.length);
  // Arc lengths per owner sum to the shares.
  const acc = [0, 0];
  for (let i = 0; i < a.owners.length; i++) {
    let len = Number(a.ends[i]) - Number(a.starts[i]) + 1;
    if (len <= 0) len += 2 ** 32;
    acc[a.owners[i]] += len / 2 ** 32;
  }
  const sh = r.nodes().map((n) => n.share);
  assert.ok(Math.abs(acc[0] - sh[0]) < 1e-9 && Math.abs(acc[1] - sh[1]) < 1e-9);
});

test('diff: adding a node moves only to it; fraction equals the key sample', () => {
  const old = new Ring(['a', 'b', 'c']);
  const next = old.clone().add('d');
  assert.equal(old.size, 3);
  const d = old.diff(next);
  assert.ok(d.moved.length > 0);
  assert.ok(d.moved.every((m) => m.to === 'd' && m.from !== 'd' && typeof m.start === 'bigint'));
  assert.ok(Math.abs(d.movedFraction - d.idealFraction) < 1e-12);
  assert.ok(Math.abs(d.movedFraction - next.shares().d) < 1e-12);
  let moved = 0;
  const N = 20000;
  for (let i = 0; i < N; i++) if (old.get(`k${i}`) !== next.get(`k${i}`)) moved++;
  assert.ok(Math.abs(moved / N - d.movedFraction) < 0.02, `${moved / N} vs ${d.movedFraction}`);
  const same = diff(old, old.clone());
  assert.equal(same.movedFraction, 0);
  assert.deepEqual(same.moved, []);
  const toEmpty = diff(old, new Ring());
  assert.equal(toEmpty.movedFraction, 1);
  assert.equal(toEmpty.moved[0].to, null);
});

test('free(): later calls throw INVALID_HANDLE; double free is harmless', () => {
  const r = new Ring(['a']);
  r.free();
  r.free();
  assert.throws(() => r.get('x'), { code: 'INVALID_HANDLE' });
  if (typeof Symbol.dispose === 'symbol') assert.equal(typeof Ring.prototype[Symbol.dispose], 'function');
});

// Collects until the live-handle count stops falling (FinalizationRegistry callbacks run
// after a collection, on a later task); returns the count.
async function settle(target = 0) {
  let last = Infinity;
  for (let round = 0; round < 500; round++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
    const now = kr.liveHandles();
    if (now <= target || (now === last && round > 20)) return now;
    last = now;
  }
  return kr.liveHandles();
}

test('rings without free() are reclaimed: the live-handle count falls after gc()', async () => {
  assert.equal(typeof globalThis.gc, 'function', 'run with node --expose-gc (make test-js does)');
  const before = await settle();
  const N = 200;
  (() => {
    for (let i = 0; i < N; i++) new Ring(['a', 'b', 'c'], { vnodes: 1000 });
  })();
  assert.equal(kr.liveHandles(), before + N, 'each Ring holds one handle until it is collected');
  const after = await settle(before);
  assert.ok(after <= before, `${after - before} of ${N} rings still alive after gc()`);
  // free() releases at once.
  const r = new Ring(['a']);
  assert.equal(kr.liveHandles(), after + 1);
  r.free();
  assert.equal(kr.liveHandles(), after);
});

test('SlotMap: assign, lookup, ranges, owners', () => {
  const map = new SlotMap();
  const a = map.addMaster('10.0.0.1:7000', { id: 'a' });
  const b = map.addMaster({ host: '10.0.0.2', port: 7000 }, { id: 'b' });
  const r = map.addReplica(a, '[::1]:7001');
  assert.deepEqual([a, b, r], [0, 1, 2]);
  map.assign(0, 8191, a).assign(8192, 16383, b);
  assert.ok(map.isComplete);
  assert.equal(map.nodeForKey('foo').id, 'b'); // slot 12182
  assert.equal(map.slotOwner(0), a);
  const l = map.lookup('{user:1}:cart');
  assert.equal(l.tag, 'user:1');
  assert.equal(l.slot, keySlot('user:1'));
  assert.equal(l.node.index, l.slot < 8192 ? a : b);
  assert.deepEqual(map.ranges(), [{ start: 0, end: 8191, owner: 0 }, { start: 8192, end: 16383, owner: 1 }]);
  const owners = map.owners();
  assert.ok(owners instanceof Uint16Array);
  assert.equal(owners.length, 16384);
  assert.equal(owners[100], 0);
  assert.deepEqual(Array.from(map.slotCounts()), [8192, 8192, 0]);
  const n = map.node(r);
  assert.equal(n.role, 'replica');
  assert.equal(n.host, '::1');
  assert.equal(n.address, '[::1]:7001');
  assert.equal(n.master, a);
  assert.deepEqual(map.node(a).replicas, [r]);
  assert.equal(map.findId('b'), b);
  assert.equal(map.findId('zz'), null);
  map.unassign(0, 9);
  assert.equal(map.unassignedCount, 10);
  assert.equal(map.nodeForSlot(5), null);
  assert.deepEqual(Array.from(map.ownersOfKeys(['foo'])), [b]);
  map.setHealth(a, 'online');
  assert.equal(map.node(a).health, 'online');
  assert.throws(() => map.assign(0, 16384, a), { code: 'BAD_RANGE' });
  assert.throws(() => map.slotOwner(16384), { code: 'BAD_SLOT' });
  assert.throws(() => map.assign(0, 1, 9), { code: 'UNKNOWN_NODE' });
  assert.throws(() => map.assign(0, 1, r), { code: 'NOT_A_MASTER' });
  assert.throws(() => map.addMaster('nohost'), { code: 'BAD_ADDRESS' });
  assert.throws(() => map.addMaster('h:1', { id: 'a' }), { code: 'DUPLICATE_NODE' });
});

test('SlotMap: MOVED and ASK', () => {
  const map = new SlotMap();
  const a = map.addMaster('10.0.0.1:7000');
  map.assign(0, 16383, a);
  const moved = map.applyRedirect('MOVED 42 :7001', '10.0.0.1');
  assert.deepEqual(moved, { kind: 'moved', slot: 42, node: 1, added: true, host: '10.0.0.1', port: 7001, refresh: true });
  assert.equal(map.slotOwner(42), 1);
  const ask = map.applyRedirect('ASK 43 10.0.0.1:7001');
  assert.equal(ask.kind, 'ask');
  assert.equal(ask.node, 1);
  assert.equal(map.slotOwner(43), a);
  assert.throws(() => map.applyRedirect('ERR nope'), { code: 'NOT_A_REDIRECT' });
  assert.throws(() => map.applyRedirect('MOVED 99999 h:1'), { code: 'BAD_REDIRECT' });
});

test('SlotMap: resharding plan, step by step equals applyPlan', () => {
  const map = new SlotMap();
  const a = map.addMaster('h:1', { id: 'a' });
  const b = map.addMaster('h:2', { id: 'b' });
  const c = map.addMaster('h:3', { id: 'c' });
  map.assign(0, 8191, a).assign(8192, 16383, b);
  const plan = map.plan({ a: 1, b: 1, c: 1 });
  assert.ok(plan instanceof ReshardPlan);
  assert.equal(plan.slotsMoved, 5461);
  assert.equal(plan.moves.reduce((s, m) => s + m.count, 0), 5461);
  assert.ok(plan.moves.every((m) => m.to === c));
  assert.deepEqual(plan.targets.map((t) => t.node), [a, b, c]);
  const stepwise = map.clone();
  for (const m of plan.moves) stepwise.assign(m.start, m.end, m.to);
  map.applyPlan(plan);
  assert.deepEqual(stepwise.owners(), map.owners());
  assert.deepEqual(Array.from(map.slotCounts()).sort(), [5461, 5461, 5462]);
  assert.throws(() => map.applyPlan(plan), { code: 'STALE_PLAN' });
  assert.equal(map.plan([[a, 1], [b, 1], [c, 1]]).slotsMoved, 0);
  assert.throws(() => map.plan({ a: 1 }), { code: 'BAD_PLAN' });
  assert.throws(() => map.plan({ zz: 1 }), { code: 'UNKNOWN_NODE' });
  assert.throws(() => map.plan({ a: 1.5 }), { code: 'BAD_WEIGHT' });
  assert.throws(() => map.plan({ a: -1 }), { code: 'NEGATIVE_WEIGHT' });
});
