// The capabilities the JavaScript package gained for parity (docs/parity.md): the
// node-list grammar, slot maps from cluster replies, groupBySlot, sideKey, ownerOfHash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ring, parseNodes, parseWeights, SlotMap, keySlot, keySlots, groupBySlot, sideKey, SCRIPTS } from 'keyroute';
import { rng } from './helpers.mjs';

test('parseNodes and Ring.fromSpec read core\'s grammar; host:port keeps its port', () => {
  assert.deepEqual(parseNodes('10.0.0.1:11211,10.0.0.2:11211'), [
    { name: '10.0.0.1:11211', weight: 1, address: null },
    { name: '10.0.0.2:11211', weight: 1, address: null },
  ]);
  assert.deepEqual(parseNodes('# fleet\n10.0.0.1:11211:2 cache-a\n[::1]:6379=3\ncache-b 4'), [
    { name: 'cache-a', weight: 2, address: '10.0.0.1:11211' },
    { name: '[::1]:6379', weight: 3, address: null },
    { name: 'cache-b', weight: 4, address: null },
  ]);
  assert.throws(() => parseNodes('cache-a:2'), (e) => e.code === 'AMBIGUOUS_NODE_SPEC' && /cache-a=2/.test(e.message));
  assert.throws(() => parseNodes(['a']), { code: 'BAD_TYPE' });
  const spec = Ring.fromSpec('10.0.0.1:11211=600\n10.0.0.2:11211=400', { profile: 'libketama' });
  const list = new Ring({ '10.0.0.1:11211': 600, '10.0.0.2:11211': 400 }, { profile: 'libketama' });
  assert.deepEqual(spec.nodes(), list.nodes());
  for (let i = 0; i < 500; i++) assert.equal(spec.get(`k${i}`), list.get(`k${i}`));
  assert.deepEqual(parseWeights('10.0.0.1:7000=1,10.0.0.2:7000=0'), [['10.0.0.1:7000', 1], ['10.0.0.2:7000', 0]]);
  // A profile's options are readable.
  assert.deepEqual([spec.vnodes, spec.pointsPerDigest, spec.defaultPort], [40, 4, null]);
  const lm = new Ring(['a'], { profile: 'libmemcached' });
  assert.equal(lm.defaultPort, 11211);
});

// A 3-master cluster with one replica each, as CLUSTER SLOTS and CLUSTER SHARDS answer it.
const nodes = [
  { id: 'a'.repeat(40), port: 7000, replica: { id: 'd'.repeat(40), port: 7003 }, slots: [0, 5460] },
  { id: 'b'.repeat(40), port: 7001, replica: { id: 'e'.repeat(40), port: 7004 }, slots: [5461, 10922] },
  { id: 'c'.repeat(40), port: 7002, replica: { id: 'f'.repeat(40), port: 7005 }, slots: [10923, 16383] },
];
function expectCluster(map, health) {
  assert.ok(map.isComplete);
  assert.equal(map.size, 6);
  for (const n of nodes) {
    const i = map.findId(n.id);
    assert.equal(map.slotOwner(n.slots[0]), i);
    assert.equal(map.slotOwner(n.slots[1]), i);
    const node = map.node(i);
    assert.equal(node.address, `127.0.0.1:${n.port}`);
    assert.equal(node.role, 'master');
    assert.equal(node.health, health);
    assert.deepEqual(node.replicas, [map.findId(n.replica.id)]);
    assert.equal(map.node(node.replicas[0]).master, i);
  }
  assert.equal(map.nodeForKey('foo').id, 'c'.repeat(40)); // slot 12182
}

test('SlotMap.fromSlots: node-redis clusterSlots() objects and the raw reply', () => {
  const objects = nodes.map((n) => ({ from: n.slots[0], to: n.slots[1], master: { host: '127.0.0.1', port: n.port, id: n.id }, replicas: [{ host: '127.0.0.1', port: n.replica.port, id: n.replica.id }] }));
  expectCluster(SlotMap.fromSlots(objects), 'unknown');
  const raw = nodes.map((n) => [n.slots[0], n.slots[1], ['127.0.0.1', n.port, n.id, {}], ['127.0.0.1', n.replica.port, n.replica.id, {}]]);
  expectCluster(SlotMap.fromSlots(raw), 'unknown');
  // Overlapping ranges of two masters: an inconsistent reply, refused.
  const overlap = [raw[0], [5000, 6000, ['127.0.0.1', 7001, nodes[1].id]]];
  assert.throws(() => SlotMap.fromSlots(overlap), { code: 'INCONSISTENT_TOPOLOGY' });
  assert.throws(() => SlotMap.fromSlots([[0, 16384, ['h', 1, 'x']]]), { code: 'BAD_RANGE' });
  assert.throws(() => SlotMap.fromSlots([[0, 1, ['h', 70000, 'x']]]), { code: 'BAD_PORT' });
  assert.throws(() => SlotMap.fromSlots('CLUSTER SLOTS'), { code: 'BAD_TYPE' });
});

test('SlotMap.fromShards: RESP2 arrays, RESP3 Maps and objects', () => {
  const shardNode = (id, port, role) => ['id', id, 'port', port, 'ip', '127.0.0.1', 'endpoint', '127.0.0.1', 'role', role, 'replication-offset', 42, 'health', 'online'];
  const resp2 = nodes.map((n) => ['slots', n.slots, 'nodes', [shardNode(n.id, n.port, 'master'), shardNode(n.replica.id, n.replica.port, 'replica')]]);
  expectCluster(SlotMap.fromShards(resp2), 'online');
  const toMap = (flat) => {
    const m = new Map();
    for (let i = 0; i < flat.length; i += 2) m.set(flat[i], flat[i + 1]);
    return m;
  };
  const resp3 = resp2.map((s) => new Map([['slots', s[1]], ['nodes', s[3].map(toMap)]]));
  expectCluster(SlotMap.fromShards(resp3), 'online');
  const objects = nodes.map((n) => ({ slots: [n.slots], nodes: [
    { id: n.id, port: n.port, ip: '127.0.0.1', endpoint: '127.0.0.1', role: 'master', replicationOffset: 1, health: 'online' },
    { id: n.replica.id, port: n.replica.port, ip: '127.0.0.1', endpoint: '127.0.0.1', role: 'replica', replicationOffset: 1, health: 'loading' },
  ] }));
  const map = SlotMap.fromShards(objects);
  expectCluster(map, 'online');
  assert.equal(map.node(map.findId('d'.repeat(40))).health, 'loading');
  // An empty new master (no slots) is kept; a shard without master is refused.
  const withEmpty = [...resp2, ['slots', [], 'nodes', [shardNode('9'.repeat(40), 7009, 'master')]]];
  assert.equal(SlotMap.fromShards(withEmpty).size, 7);
  assert.throws(() => SlotMap.fromShards([['slots', [0, 1], 'nodes', [shardNode('x', 1, 'replica')]]]), { code: 'INCONSISTENT_TOPOLOGY' });
  assert.throws(() => SlotMap.fromShards([['slots', [0, 1], 'nodes', [shardNode('x', 1, 'arbiter')]]]), { code: 'INCONSISTENT_TOPOLOGY' });
  assert.throws(() => SlotMap.fromShards([['slots', [0], 'nodes', []]]), { code: 'BAD_RANGE' });
});

test('groupBySlot: one group per slot, ascending, indexes in input order; equal to keySlots', () => {
  const r = rng(3);
  const keys = Array.from({ length: 3000 }, (_, i) => (r() < 0.5 ? `{user:${i % 37}}:${i}` : `k${i}`));
  const groups = groupBySlot(keys);
  const slots = keySlots(keys);
  let seen = 0;
  let last = -1;
  for (const g of groups) {
    assert.ok(g.slot > last);
    last = g.slot;
    for (let j = 0; j < g.indexes.length; j++) {
      assert.equal(slots[g.indexes[j]], g.slot);
      if (j) assert.ok(g.indexes[j] > g.indexes[j - 1]);
    }
    seen += g.indexes.length;
  }
  assert.equal(seen, keys.length);
  assert.deepEqual(groupBySlot(['{a}1', '{b}', '{a}2']).find((g) => g.slot === keySlot('a')).indexes, [0, 2]);
  assert.deepEqual(groupBySlot([]), []);
});

test('sideKey: the side key of the scripts, same type as its input; bad pool keys refused', () => {
  assert.equal(sideKey('{proxies}:pool'), '{proxies}:pool:removed');
  assert.equal(sideKey('proxies'), '{proxies}:removed');
  assert.equal(keySlot(sideKey('proxies')), keySlot('proxies'));
  assert.deepEqual(sideKey(new TextEncoder().encode('p')), new TextEncoder().encode('{p}:removed'));
  assert.throws(() => sideKey(''), { code: 'BAD_POOL_KEY' });
  assert.throws(() => sideKey('a}b'), { code: 'BAD_POOL_KEY' });
  assert.equal(SCRIPTS.remove.numKeys, 2);
});

test('ownerOfHash: the owner of a circle position, as get() finds it for a key', () => {
  for (const profile of ['native', 'libketama', 'uhashring']) {
    const ring = new Ring({ a: 1, b: 2, c: 3 }, { profile });
    for (let i = 0; i < 300; i++) assert.equal(ring.ownerOfHash(ring.hashKey(`k${i}`)), ring.get(`k${i}`), profile);
    assert.throws(() => ring.ownerOfHash(2n ** BigInt(ring.bits)), { code: 'OUT_OF_RANGE' });
    assert.throws(() => ring.ownerOfHash(-1n), { code: 'OUT_OF_RANGE' });
    assert.throws(() => ring.ownerOfHash('1'), { code: 'BAD_TYPE' });
  }
  assert.equal(new Ring().ownerOfHash(0n), null);
});

test('native rings change in place, across leaves too: the ring a fresh build of the same nodes gives', () => {
  // 1,700 x 160 = 272,000 points: past 262,144, where core cuts the circle into leaves.
  const ring = new Ring(Array.from({ length: 1700 }, (_, i) => `node-${i}`));
  ring.add('extra-a', 3).setWeight('node-5', 2).remove('node-9').add('extra-b').setWeight('extra-a', 1).setWeight('node-7', 4).remove('node-0');
  const fresh = new Ring(ring.nodes().map((n) => [n.name, n.weight]));
  const [a, b] = [ring.points(), fresh.points()];
  assert.equal(a.positions.length, 1700 * 160 + 2 * 160 + 160 + 3 * 160 - 2 * 160);
  assert.ok(Buffer.from(a.positions.buffer).equals(Buffer.from(b.positions.buffer)), 'positions differ');
  assert.deepEqual(a.names, b.names);
  assert.ok(Buffer.from(a.owners.buffer).equals(Buffer.from(b.owners.buffer)), 'owners differ');
  const keys = Array.from({ length: 5000 }, (_, i) => `key-${i}`);
  assert.deepEqual(ring.getMany(keys), fresh.getMany(keys));
  ring.free();
  fresh.free();
});
