// Runs smart_cache.mjs against a real redis-server (started here on a free 127.0.0.1
// port, stopped at the end) and checks what it printed and what it left in Redis.
// `make test-js` runs it.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { clientKeys, entryKey } from 'keyroute/cache';

const here = dirname(fileURLToPath(import.meta.url));
const port = await new Promise((resolve, reject) => {
  const s = createServer();
  s.on('error', reject);
  s.listen(0, '127.0.0.1', () => {
    const { port: p } = s.address();
    s.close(() => resolve(p));
  });
});
const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
const url = `redis://127.0.0.1:${port}`;
try {
  let c;
  for (let i = 0; ; i++) {
    c = createClient({ url, socket: { reconnectStrategy: false } });
    c.on('error', () => {});
    try {
      await c.connect();
      break;
    } catch (e) {
      if (i > 100) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const out = execFileSync(process.execPath, [join(here, 'smart_cache.mjs'), url], { encoding: 'utf8' });
  const last = JSON.parse(out.trim().split('\n').at(-1));
  assert.match(out, /warm-up: loaded 4 kinds, skipped 0/);
  assert.match(out, /50 \+ 50 requests: 1 backend call\(s\)/);
  assert.match(out, /BACKEND_ERROR: E_OFFERS \(offers service down\); cached for the others: false/);
  assert.match(out, /VERSION_MISMATCH: made by app-2.14/);
  assert.equal(last.backendCalls, 5);
  assert.equal(last.stats.coalesced, 98);
  // In Redis: the entries under the client's token (never its id), cards invalidated.
  assert.equal(await c.exists(entryKey('client-42', 'accounts')), 1);
  assert.equal(Number(await c.hExists(entryKey('client-42', 'cards'), 'v')), 0);
  assert.equal(await c.exists(clientKeys('client-42').sessionIndex), 0);
  assert.ok((await c.keys('*')).every((k) => !k.includes('client-42')));
  await c.close();
  console.log(`smart_cache: ${out.trim().split('\n').length} lines checked, ${last.backendCalls} backend calls`);
} finally {
  proc.kill();
}
