// SlotMap.fromSlots and SlotMap.fromShards on the answers of a real 3-master Redis
// Cluster (redis-server processes started here on free 127.0.0.1 ports, stopped at the
// end), read through node-redis (@redis/client): the map must send every key to the
// master that stores it without a MOVED.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { SlotMap, keySlot, groupBySlot } from 'keyroute';
import { startCluster } from './redis-helpers.mjs';

const require = createRequire(import.meta.url);
const { createClient } = require('@redis/client');

let cl;
let ports = [];

async function client(port) {
  const c = createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: false } });
  c.on('error', () => {});
  await c.connect();
  return c;
}

before(async () => {
  cl = await startCluster('keyroute-cluster-');
  ports = cl.ports;
});

after(async () => {
  if (cl) await cl.stop();
});

// Writes keys through the map's choice of master, each on a plain (non-cluster) client:
// a wrong choice would be answered with MOVED.
async function writesLand(map, tag) {
  const clients = new Map();
  try {
    for (const port of ports) clients.set(`127.0.0.1:${port}`, await client(port));
    const keys = Array.from({ length: 300 }, (_, i) => `${tag}:${i}`);
    for (const k of keys) {
      const node = map.nodeForKey(k);
      assert.ok(node, `no owner for ${k}`);
      await clients.get(node.address).set(k, 'v');
    }
    // And an MGET per slot group lands too.
    for (const g of groupBySlot(keys).slice(0, 20)) {
      const node = map.nodeForSlot(g.slot);
      assert.deepEqual(await clients.get(node.address).mGet(g.indexes.map((i) => keys[i])), g.indexes.map(() => 'v'));
    }
    return keys.length;
  } finally {
    for (const c of clients.values()) await c.quit();
  }
}

test('fromSlots(client.clusterSlots()) of a real cluster routes every key to its master', async () => {
  const c = await client(ports[0]);
  const reply = await c.clusterSlots();
  await c.quit();
  const map = SlotMap.fromSlots(reply);
  assert.ok(map.isComplete);
  assert.equal(map.size, 3);
  assert.equal(await writesLand(map, 'slots'), 300);
  map.free();
});

test('fromShards(CLUSTER SHARDS) of a real cluster: masters, health, and every key routed', async () => {
  const c = await client(ports[1]);
  const reply = await c.sendCommand(['CLUSTER', 'SHARDS']);
  const myId = await c.sendCommand(['CLUSTER', 'MYID']);
  await c.quit();
  const map = SlotMap.fromShards(reply);
  assert.ok(map.isComplete);
  assert.equal(map.size, 3);
  const me = map.node(map.findId(myId));
  assert.equal(me.address, `127.0.0.1:${ports[1]}`);
  assert.equal(me.health, 'online');
  assert.equal(me.role, 'master');
  assert.equal(await writesLand(map, 'shards'), 300);
  // The same answer as CLUSTER SLOTS gives.
  const c2 = await client(ports[2]);
  const viaSlots = SlotMap.fromSlots(await c2.clusterSlots());
  await c2.quit();
  assert.deepEqual(Array.from(map.owners(), (o) => map.node(o).address), Array.from(viaSlots.owners(), (o) => viaSlots.node(o).address));
  assert.equal(keySlot('foo'), 12182);
});
