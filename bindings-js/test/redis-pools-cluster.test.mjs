// keyroute/redis through node-redis Cluster clients (createCluster, node-redis 4 and 5+) on
// a real 3-master Redis Cluster (started here on free 127.0.0.1 ports, stopped at the end):
// every script runs in the pool key's slot (no CROSSSLOT), 400 concurrent picks keep the
// spread at 0, and when the slot moves to another master under the clients (a MOVED for
// their stale slot map) every pick, lease and take is counted exactly once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { keySlot } from 'keyroute';
import { LeastUsed, Leases, Affinity } from 'keyroute/redis';
import { nodeRedis, close, startCluster } from './redis-helpers.mjs';

const open = [];
let cl;

before(async () => {
  cl = await startCluster('keyroute-redis-pools-cluster-');
});

after(async () => {
  for (const c of open) await close(c);
  if (cl) await cl.stop();
});

const cluster = (line) => cl.connect(line);

async function node(port) {
  const c = nodeRedis.v5.createClient({ socket: { host: '127.0.0.1', port } });
  c.on('error', () => {});
  await c.connect();
  open.push(c);
  return c;
}

// The master serving `slot` and another master: {port, id, c} each, and all three.
async function owners(slot) {
  const all = [];
  for (const port of cl.ports) all.push({ port, c: await node(port) });
  const lines = String(await all[0].c.sendCommand(['CLUSTER', 'NODES'])).trim().split('\n').map((l) => l.split(' '));
  for (const x of all) {
    const line = lines.find((f) => f[1].split('@')[0].endsWith(`:${x.port}`));
    x.id = line[0];
    x.mine = line.slice(8).some((r) => {
      const [lo, hi = lo] = r.split('-').map(Number);
      return slot >= lo && slot <= hi;
    });
  }
  return { from: all.find((x) => x.mine), to: all.find((x) => !x.mine), all };
}

// Moves `slot` with its keys from one master to another (SETSLOT IMPORTING/MIGRATING,
// MIGRATE, SETSLOT NODE on every master), as a resharding does.
async function moveSlot(slot) {
  const { from, to, all } = await owners(slot);
  await to.c.sendCommand(['CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', from.id]);
  await from.c.sendCommand(['CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', to.id]);
  for (;;) {
    const keys = (await from.c.sendCommand(['CLUSTER', 'GETKEYSINSLOT', String(slot), '100'])).map(String);
    if (keys.length === 0) break;
    await from.c.sendCommand(['MIGRATE', '127.0.0.1', String(to.port), '', '0', '5000', 'KEYS', ...keys]);
  }
  for (const x of [to, from, ...all]) await x.c.sendCommand(['CLUSTER', 'SETSLOT', String(slot), 'NODE', to.id]);
  return { from, to };
}

for (const line of ['v4', 'v5']) {
  test(`pools, leases and affinity follow their slot to another master (MOVED), counted once (node-redis ${line})`, async () => {
    const c = await cluster(line);
    const tag = `{moving-${line}}`;
    const pool = new LeastUsed(c, `${tag}:pool`);
    const leases = new Leases(c, `${tag}:busy`);
    const aff = new Affinity(c, `${tag}:owner`);
    const members = ['p1', 'p2', 'p3'];
    assert.equal(await pool.seed(members), 3);
    assert.equal(await leases.seed(members), 3);
    const before = await pool.pickMany(30);
    const lease = await leases.acquire(60000);
    assert.equal((await aff.take('job-1', ['n1', 'n2'], { cap: 1 })).node, 'n1');

    const slot = keySlot(`${tag}:pool`);
    const { from, to } = await moveSlot(slot);
    // The old master now answers MOVED for the pool: the clients' slot map is stale.
    await assert.rejects(from.c.sendCommand(['ZCARD', `${tag}:pool`]), /MOVED/);
    assert.equal(await to.c.sendCommand(['ZCARD', `${tag}:pool`]), 3);

    const after = await pool.pickMany(30);
    assert.equal(before.length + after.length, 60);
    assert.deepEqual(await pool.counts(), [['p1', 20], ['p2', 20], ['p3', 20]]);
    assert.equal(await leases.release(lease), 'released');
    assert.equal(await leases.outstanding(), 0);
    assert.equal((await aff.take('job-1', ['n2', 'n1'], { cap: 1 })).new, false);
    assert.equal((await aff.take('job-2', ['n1', 'n2'], { cap: 1 })).node, 'n2');
    assert.deepEqual(await aff.loads(), [['n1', 1], ['n2', 1]]);
  });
}

test('400 concurrent picks on a Cluster client: every count exact, spread 0', async () => {
  const cs = [await cluster('v5'), await cluster('v4')];
  const key = '{race}:pool';
  const members = Array.from({ length: 10 }, (_, i) => `proxy-${i}`);
  await new LeastUsed(cs[0], key).seed(members, { initial: 5 });
  const picks = (await Promise.all(cs.map((c) => {
    const pool = new LeastUsed(c, key);
    return Promise.all(Array.from({ length: 200 }, () => pool.pick()));
  }))).flat();
  const tally = new Map();
  for (const m of picks) tally.set(m, (tally.get(m) || 0) + 1);
  const counts = await new LeastUsed(cs[0], key).counts();
  assert.equal(counts.length, 10);
  for (const [m, k] of counts) assert.equal(k - 5, tally.get(m), m);
  assert.deepEqual(new Set(counts.map(([, k]) => k)), new Set([45]));
});
