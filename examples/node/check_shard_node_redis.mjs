// Runs shard_node_redis.mjs against real redis-server processes (started here on free
// 127.0.0.1 ports, stopped at the end) and checks that every key landed on exactly the
// server the Ring names, by asking each server directly. `make test-js` runs it.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { Ring } from 'keyroute';

const here = dirname(fileURLToPath(import.meta.url));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startRedis() {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const c = createClient({ url, socket: { reconnectStrategy: false } });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.ping();
      await c.close();
      return { proc, url, port };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  proc.kill();
  throw new Error(`redis-server on port ${port} did not start`);
}

const servers = [];
try {
  for (let i = 0; i < 3; i++) servers.push(await startRedis());
  const urls = servers.map((s) => s.url);
  const out = execFileSync(process.execPath, [join(here, 'shard_node_redis.mjs'), ...urls], { encoding: 'utf8' });
  const report = JSON.parse(out.trim().split('\n').at(-1));
  assert.equal(report.keys, 1000);
  assert.equal(report.wrong, 0);
  // Every key is on the server the ring names, and on no other.
  const ring = new Ring(servers.map((s) => `127.0.0.1:${s.port}`));
  let checked = 0;
  for (const s of servers) {
    const c = createClient({ url: s.url });
    await c.connect();
    const name = `127.0.0.1:${s.port}`;
    assert.equal(await c.dbSize(), report.perServer[name]);
    for (let i = 0; i < 1000; i++) {
      const key = `session:${i}`;
      assert.equal(await c.exists(key), ring.get(key) === name ? 1 : 0, `${key} on ${name}`);
      checked++;
    }
    await c.close();
  }
  const counts = Object.values(report.perServer);
  assert.equal(counts.reduce((a, b) => a + b, 0), 1000);
  assert.ok(counts.every((n) => n > 150), `a lopsided split: ${counts}`);
  console.log(`shard_node_redis: 1000 keys over ${servers.length} redis-servers ${JSON.stringify(report.perServer)}, ${checked} placements checked`);
  ring.free();
} finally {
  for (const s of servers) s.proc.kill();
}
