// Real processes for the keyroute/serve suites and the service benchmark: `keyroute serve`
// on free 127.0.0.1 ports, the Rust example worker, the Python client and worker
// (keyroute.serve from the venv `make serve-venv` builds), and a stand-in broker (a ROUTER
// socket) for what a real broker never sends. Every process a test starts is stopped by it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { Client } from 'keyroute/serve';
import { repo } from './helpers.mjs';
import { freePort, sleep } from './redis-helpers.mjs';

const target = process.env.CARGO_TARGET_DIR || join(repo, 'target');
export const KEYROUTE = process.env.KEYROUTE_BIN || join(target, 'release', 'keyroute');
export const WORKER = process.env.KEYROUTE_WORKER_BIN || join(target, 'release', 'examples', 'worker');
export const PYTHON = process.env.KEYROUTE_SERVE_PY || join(repo, 'build', 'venv-serve', 'bin', 'python');

function need(file, how) {
  if (!existsSync(file)) throw new Error(`${file} is missing: ${how}`);
  return file;
}

export async function waitFor(pred, what = 'condition', ms = 10000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await pred()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function httpGet(url) {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

/** A `keyroute serve` process on free ports (args: its flags; redis: a URL or none). */
export async function startServe(args = [], { redis } = {}) {
  need(KEYROUTE, 'cargo build --release -p keyroute-cli (make build-serve)');
  const [port, wport, mport] = [await freePort(), await freePort(), await freePort()];
  const bind = `tcp://127.0.0.1:${port}`;
  const workers = `tcp://127.0.0.1:${wport}`;
  const cmd = ['serve', '--bind', bind, '--workers-bind', workers, '--metrics', `127.0.0.1:${mport}`, ...args];
  if (redis) cmd.push('--redis', redis);
  const proc = spawn(KEYROUTE, cmd, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, KEYROUTE_LOG: 'warn' } });
  let log = '';
  proc.stderr.on('data', (d) => {
    log = (log + d).slice(-20000);
  });
  const s = {
    bind,
    workers,
    proc,
    get log() {
      return log;
    },
    async metrics() {
      const out = {};
      for (const line of (await httpGet(`http://127.0.0.1:${mport}/metrics`)).split('\n')) {
        if (line && !line.startsWith('#')) {
          const at = line.lastIndexOf(' ');
          out[line.slice(0, at)] = Number(line.slice(at + 1));
        }
      }
      return out;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const gone = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGKILL');
        await gone;
      }
    },
  };
  const probe = new Client(bind, { timeoutMs: 200 });
  try {
    await waitFor(async () => {
      if (proc.exitCode !== null) throw new Error(`keyroute serve exited ${proc.exitCode}: ${log}`);
      try {
        return (await probe.request('ping')).ok;
      } catch {
        return false;
      }
    }, `keyroute serve on ${bind}`, 20000);
  } finally {
    await probe.close();
  }
  return s;
}

/** Waits until `n` idle workers of `kind` are registered. */
export function workersIdle(s, kind, n = 1) {
  return waitFor(async () => (await s.metrics())[`keyroute_serve_workers{kind="${kind}",state="idle"}`] === n, `${n} idle ${kind} worker(s)`);
}

/** A child process whose stdout lines are kept: {proc, lines, until(pred), stop()}. */
export function child(file, args, opts = {}) {
  const proc = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  const lines = [];
  let err = '';
  let rest = '';
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (d) => {
    rest += d;
    const parts = rest.split('\n');
    rest = parts.pop();
    lines.push(...parts);
  });
  proc.stderr.on('data', (d) => {
    err = (err + d).slice(-20000);
  });
  return {
    proc,
    lines,
    get stderr() {
      return err;
    },
    until(pred, what = 'a line', ms = 15000) {
      return waitFor(() => {
        if (proc.exitCode !== null && !lines.some(pred)) throw new Error(`${file} exited ${proc.exitCode} before ${what}: ${err}`);
        return lines.some(pred);
      }, `${what} (${lines.join(' | ')})`, ms);
    },
    async exited() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      return new Promise((r) => proc.once('exit', r));
    },
    async stop(sig = 'SIGKILL') {
      if (proc.exitCode === null && proc.signalCode === null) {
        const gone = new Promise((r) => proc.once('exit', r));
        proc.kill(sig);
        await gone;
      }
    },
  };
}

/** The Rust example worker (`load CLIENT KIND` on stdout per load; kinds comma-separated). */
export function rustWorker(endpoint, kinds, delayMs = 0, capacity = 1) {
  need(WORKER, 'cargo build --release -p keyroute-serve --example worker (make build-serve)');
  return child(WORKER, [endpoint, kinds, String(delayMs), String(capacity)]);
}

/** A Python program run with the venv's interpreter (keyroute.serve and pyzmq). */
export function python(code, args = [], opts = {}) {
  need(PYTHON, 'make serve-venv');
  return child(PYTHON, ['-c', code, ...args], opts);
}
