// The smart cache from a Node front server: one backend call per cold key across every
// front (processes and machines sharing the Redis), sessions any front can read, and a
// warm cache at app start. keyroute/cache runs core's scripts on your node-redis client.
//
//   npm install            # keyroute (../../bindings-js, after `make build-js`) and redis
//   node smart_cache.mjs redis://127.0.0.1:6379
import { createClient } from 'redis';
import { SmartCache, Sessions, Devices } from 'keyroute/cache';

const url = process.argv[2] || 'redis://127.0.0.1:6379';
const redis = createClient({ url });
redis.on('error', (e) => console.error('redis:', e.message));
await redis.connect();

// One of each per process, made at start: ready() loads the scripts and opens the
// subscriber connection, so the first stampede pays no set-up.
const cache = await new SmartCache(redis, { leaseMs: 2000, softTtlMs: 60_000, hardTtlMs: 600_000, negTtlMs: 1000 }).ready();
const sessions = new Sessions(redis, { ttlMs: 30 * 60_000 });
const devices = new Devices(redis);

let backendCalls = 0;
// The slow backend (~200 ms): called once per cold key, whatever the number of callers.
async function coreBanking(client, kind) {
  backendCalls++;
  await new Promise((r) => setTimeout(r, 200));
  return JSON.stringify({ client, kind, items: [] });
}

// App start: the device names the client; its products load before login.
await devices.bind('ios-7F3A', 'client-42', 90 * 86400 * 1000);
const report = await cache.warm('ios-7F3A', ['accounts', 'cards', 'deposits', 'loans'], coreBanking);
console.log(`warm-up: loaded ${report.granted.length} kinds, skipped ${report.skipped.length}`);

// Login: a session any front can read from its id alone.
const sid = await sessions.create('client-42', 'app-2.14', JSON.stringify({ lang: 'en' }));

// A request: 50 at once for the same data cost no backend call (warm), and a cold kind
// costs exactly one.
const session = await sessions.touch(sid, { version: 'app-2.14' });
const before = backendCalls;
const answers = await Promise.all(Array.from({ length: 50 }, () =>
  cache.getOrLoad(session.client, 'cards', () => coreBanking(session.client, 'cards'), { timeoutMs: 5000 })));
const statements = await Promise.all(Array.from({ length: 50 }, () =>
  cache.getOrLoad(session.client, 'statements', () => coreBanking(session.client, 'statements'))));
console.log(`50 + 50 requests: ${backendCalls - before} backend call(s); cards = ${answers[0].toString()}; statements ${statements.length}`);

// The client opened a new card: the next read loads afresh, a load in flight is discarded.
await cache.invalidate('client-42', 'cards');

try {
  await cache.getOrLoad('client-42', 'loans-offer', async () => {
    throw Object.assign(new Error('offers service down'), { code: 'E_OFFERS' });
  });
} catch (e) {
  console.log(`${e.code}: ${e.backendCode} (${e.backendMessage}); cached for the others: ${e.cached}`);
}

try {
  await sessions.touch(sid, { version: 'app-3.0' });
} catch (e) {
  console.log(`${e.code}: made by ${e.storedVersion}`);
}
await sessions.destroy(sid);
console.log(JSON.stringify({ backendCalls, stats: cache.stats() }));
await cache.close();
await redis.close();
