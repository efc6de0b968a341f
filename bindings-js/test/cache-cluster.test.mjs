// keyroute/cache through node-redis Cluster clients (createCluster, node-redis 4 and 5+) on a
// real 3-master Redis Cluster (redis-server processes started here on free 127.0.0.1 ports,
// stopped at the end): every script runs in the client's slot (no CROSSSLOT), waiters are
// woken by SSUBSCRIBE, and a stampede over two caches costs one backend call.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { SmartCache, Sessions, Devices, entryKey } from 'keyroute/cache';
import { sleep, startCluster } from './redis-helpers.mjs';

let cl;

before(async () => {
  cl = await startCluster('keyroute-cache-cluster-');
});

after(async () => {
  if (cl) await cl.stop();
});

const cluster = (line) => cl.connect(line);

for (const line of ['v4', 'v5']) {
  test(`a stampede over two caches on Cluster clients costs one backend call; waiters woken by SSUBSCRIBE (node-redis ${line})`, async () => {
    const a = await new SmartCache(await cluster(line)).ready();
    const b = await new SmartCache(await cluster(line)).ready();
    assert.equal(a.config.cluster, true);
    let calls = 0;
    const load = async () => {
      calls++;
      await sleep(200);
      return 'accounts';
    };
    for (const who of ['client-1', 'client-2', 'client-3', 'client-4']) {
      calls = 0;
      const began = performance.now();
      const out = await Promise.all([
        ...Array.from({ length: 20 }, () => a.getOrLoad(`${line}-${who}`, 'accounts', load)),
        ...Array.from({ length: 20 }, async () => {
          await sleep(20);
          return b.getOrLoad(`${line}-${who}`, 'accounts', load);
        }),
      ]);
      const took = performance.now() - began;
      assert.ok(out.every((v) => v.toString() === 'accounts'));
      assert.equal(calls, 1, who);
      // Woken by the shard message, not by polling at 200 ms steps.
      assert.ok(took < 200 + 150, `${who}: ${took} ms`);
    }
    assert.equal(b.stats().waits, 4);
    assert.equal(await a.invalidate(`${line}-client-1`, 'accounts'), true);
    await a.close();
    await b.close();
  });
}

test('sessions, devices and warm-up on a Cluster (every script in one slot)', async () => {
  const c = await cluster('v5');
  const sessions = new Sessions(c, { ttlMs: 60000 });
  const sid = await sessions.create('client-42', 'v1', '{}');
  assert.equal((await sessions.touch(sid, { version: 'v1' })).client, 'client-42');
  assert.deepEqual((await sessions.list('client-42')).map(([s]) => s), [sid]);
  const devices = new Devices(c);
  await devices.bind('ios-cluster', 'client-42', 60000);
  const cache = await new SmartCache(c).ready();
  const report = await cache.warm('ios-cluster', ['accounts', 'cards', 'loans'], (client, kind) => `${kind} of ${client}`);
  assert.deepEqual(report.granted.sort(), ['accounts', 'cards', 'loans']);
  assert.equal((await cache.getOrLoad('client-42', 'cards', () => 'never')).toString(), 'cards of client-42');
  assert.equal(await sessions.destroy(sid), true);
  // The entries of one client are on one master.
  assert.equal(new Set(['accounts', 'cards', 'loans'].map((k) => entryKey('client-42', k).match(/\{[^}]*\}/)[0])).size, 1);
});
