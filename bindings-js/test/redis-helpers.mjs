// redis-server processes for the smart-cache suites: started on free 127.0.0.1 ports and
// stopped by the suites; node-redis clients of both major lines (@redis/client 1.x is
// node-redis 4, npm redis 6.x is node-redis 5+).
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';

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
