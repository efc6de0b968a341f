// keyroute/cache through node-redis Cluster clients (createCluster, node-redis 4 and 5+) on a
// real 3-master Redis Cluster (redis-server processes started here on free 127.0.0.1 ports,
// stopped at the end): every script runs in the client's slot (no CROSSSLOT), waiters are
// woken by SSUBSCRIBE, and a stampede over two caches costs one backend call.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SmartCache, Sessions, Devices, entryKey } from 'keyroute/cache';
import { nodeRedis, sleep } from './redis-helpers.mjs';

const procs = [];
const ports = [];
const open = [];
let dir;

function freePair() {
  const tryPort = (port) => new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(async () => resolve(port < 55000 && (await tryPort(port + 10000)) ? port : freePair()));
    });
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keyroute-cache-cluster-'));
  while (ports.length < 3) {
    const p = await freePair();
    if (!ports.includes(p)) ports.push(p);
  }
  for (const port of ports) {
    procs.push(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' }));
  }
  for (const port of ports) {
    for (let i = 0; ; i++) {
      const c = nodeRedis.v5.createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: false } });
      c.on('error', () => {});
      try {
        await c.connect();
        await c.ping();
        await c.close();
        break;
      } catch (e) {
        if (i > 200) throw new Error(`redis-server on ${port} did not start: ${e.message}`);
        await sleep(25);
      }
    }
  }
  execFileSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { stdio: 'pipe', timeout: 30000 });
  const deadline = Date.now() + 20000;
  for (const port of ports) {
    const c = nodeRedis.v5.createClient({ socket: { host: '127.0.0.1', port } });
    c.on('error', () => {});
    await c.connect();
    while (!/cluster_state:ok/.test(await c.sendCommand(['CLUSTER', 'INFO']))) {
      if (Date.now() > deadline) throw new Error('the cluster did not reach cluster_state:ok');
      await sleep(100);
    }
    await c.close();
  }
  // Masters accept writes about 2 s after the cluster forms.
  await sleep(2000);
});

after(async () => {
  for (const c of open) {
    try {
      await (typeof c.close === 'function' ? c.close() : c.quit());
    } catch {
      // gone
    }
  }
  for (const p of procs) p.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function cluster(line) {
  const c = nodeRedis[line].createCluster({ rootNodes: ports.map((p) => ({ url: `redis://127.0.0.1:${p}` })) });
  c.on('error', () => {});
  await c.connect();
  open.push(c);
  return c;
}

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
