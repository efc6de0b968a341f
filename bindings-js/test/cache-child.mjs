// Child processes of the smart-cache suites (node test/cache-child.mjs MODE ...):
//
//   stampede URL START_WALL_MS REQUESTS BACKEND_MS CLIENT KIND
//       makes its SmartCache first (scripts loaded, subscriber open), then at the
//       wall-clock instant START_WALL_MS starts REQUESTS concurrent getOrLoad calls for one
//       cold key; prints one JSON line {latMs, calls, stats, errors}
//   holder URL LEASE_MS LOAD_MS VALUE CLIENT KIND
//       loads KIND with a loader that prints LOADING and takes LOAD_MS; if it lives, prints
//       RESULT <value> and FENCED <fenced fills>
import { SmartCache } from 'keyroute/cache';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { createClient } = require('redis');
const [mode, url, ...rest] = process.argv.slice(2);
const client = createClient({ url });
client.on('error', () => {});
await client.connect();

if (mode === 'stampede') {
  const [start, requests, backendMs, who, kind] = [Number(rest[0]), Number(rest[1]), Number(rest[2]), rest[3], rest[4]];
  const cache = await new SmartCache(client).ready();
  let calls = 0;
  const load = async () => {
    calls++;
    await new Promise((r) => setTimeout(r, backendMs));
    return `accounts of ${who}`;
  };
  const wait = start - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const lateMs = Date.now() - start;
  const latMs = [];
  const errors = [];
  await Promise.all(Array.from({ length: requests }, async () => {
    const began = performance.now();
    try {
      const v = await cache.getOrLoad(who, kind, load, { timeoutMs: 10000 });
      if (v.toString() !== `accounts of ${who}`) throw new Error(`wrong value ${v}`);
      latMs.push(performance.now() - began);
    } catch (e) {
      errors.push(`${e.code}: ${e.message}`);
    }
  }));
  console.log(JSON.stringify({ latMs, calls, stats: cache.stats(), errors, lateMs }));
  await cache.close();
} else if (mode === 'holder') {
  const [leaseMs, loadMs, value, who, kind] = [Number(rest[0]), Number(rest[1]), rest[2], rest[3], rest[4]];
  const cache = await new SmartCache(client, { leaseMs }).ready();
  const v = await cache.getOrLoad(who, kind, async () => {
    console.log('LOADING');
    await new Promise((r) => setTimeout(r, loadMs));
    return value;
  }, { timeoutMs: 60000 });
  console.log(`RESULT ${v}`);
  console.log(`FENCED ${cache.stats().fencedFills}`);
  await cache.close();
}
await client.close();
