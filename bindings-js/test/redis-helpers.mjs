// redis-server processes for the smart-cache suites: started on free 127.0.0.1 ports and
// stopped by the suites; node-redis clients of both major lines (@redis/client 1.x is
// node-redis 4, npm redis 6.x is node-redis 5+).
import { before, after } from 'node:test';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
export const nodeRedis = {
  v4: require('@redis/client'),
  v5: require('redis'),
};

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A connected client of node-redis `line` ('v4' or 'v5'); errors are left to the commands. */
export async function connect(url, line = 'v5', extra = {}) {
  const c = nodeRedis[line].createClient({ url, ...extra });
  c.on('error', () => {});
  await c.connect();
  return c;
}

export async function close(c) {
  try {
    await (typeof c.close === 'function' ? c.close() : c.quit());
  } catch {
    // already closed
  }
}

/** A redis-server on a free port (`port` to reuse one); resolves once it answers PING. */
export async function startRedis(port) {
  port = port || (await freePort());
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    const c = nodeRedis.v5.createClient({ url, socket: { reconnectStrategy: false } });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.ping();
      await c.close();
      return {
        proc,
        port,
        url,
        async stop() {
          if (proc.exitCode === null && proc.signalCode === null) {
            const gone = new Promise((r) => proc.once('exit', r));
            proc.kill('SIGKILL');
            await gone;
          }
        },
      };
    } catch {
      await sleep(25);
    }
  }
  proc.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not start`);
}

// A free port p whose cluster bus port p + 10000 is free too.
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

/**
 * A Redis Cluster of three masters (redis-server processes on free 127.0.0.1 ports, joined
 * with redis-cli --cluster create), resolved once every node says cluster_state:ok and
 * the masters accept writes: {ports, connect(line), stop()}.
 */
export async function startCluster(prefix = 'keyroute-cluster-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const procs = [];
  const ports = [];
  const opened = [];
  const stop = async () => {
    for (const c of opened) await close(c);
    for (const p of procs) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  // A connected Cluster client of node-redis `line`, closed by stop().
  const connect = async (line = 'v5') => {
    const c = nodeRedis[line].createCluster({ rootNodes: ports.map((p) => ({ url: `redis://127.0.0.1:${p}` })) });
    c.on('error', () => {});
    await c.connect();
    opened.push(c);
    return c;
  };
  try {
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
  } catch (e) {
    await stop();
    throw e;
  }
  return { ports, connect, stop };
}

/**
 * A redis-server for the suite that calls this (started before its tests, stopped after
 * them) and clients of it, closed after them: {url, client(line)}.
 */
export function suiteRedis() {
  let server = null;
  const clients = [];
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    for (const c of clients) await close(c);
    if (server) await server.stop();
  });
  return {
    get url() {
      return server.url;
    },
    async client(line = 'v5') {
      const c = await connect(server.url, line);
      clients.push(c);
      return c;
    },
  };
}
