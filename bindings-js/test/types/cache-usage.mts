// Compiled by types.test.mjs: keyroute/cache's declarations accept real usage and reject misuse.
import { createClient } from 'redis';
import { SmartCache, Sessions, Devices, PollSchedule, entryKey, clientKeys, cacheCalls, commandOf, decodeReply, CACHE_LIMITS, type BackendError, type Session, type WarmReport } from 'keyroute/cache';

const redis = createClient();
const cache = await new SmartCache(redis, { leaseMs: 2000, negTtlMs: 0 }).ready();
const v: Buffer = await cache.getOrLoad('client-42', 'accounts', async () => JSON.stringify([]), { timeoutMs: 5000 });
const gone: boolean = await cache.invalidate('client-42', 'accounts');
const report: WarmReport = await cache.warm('ios-1', ['accounts'], (client: string, kind: string) => `${client}/${kind}`);
const hits: number = cache.stats().hits + CACHE_LIMITS.maxWarmKinds;
try {
  await cache.getOrLoad('c', 'k', () => new Uint8Array(1));
} catch (e) {
  const b = e as BackendError;
  const code: string = b.backendCode;
}
const sessions = new Sessions(redis, { ttlMs: 1_800_000, maxAgeMs: null });
const sid: string = await sessions.create('client-42', 'app-2.14', '{}');
const s: Session = await sessions.touch(sid, { version: 'app-2.14' });
const data: Buffer = s.data;
await new Devices(redis).bind('ios-1', 'client-42', 86_400_000);
const who: string | null = await new Devices(redis).clientOf('ios-1');
const key: string = entryKey('client-42', 'cards');
const keyBytes: Buffer = entryKey('client-42', new Uint8Array([1]));
const channel: string = clientKeys('c').channel;
const call = cacheCalls.get(key, { leaseMs: 2000, owner: 'me' });
const reply = decodeReply('sc-get', await redis.sendCommand(commandOf(call)));
if (reply.kind === 'wait') {
  const ms: number = reply.remainingMs;
}
const wait: number = new PollSchedule().nextWait(100, 100);
// @ts-expect-error the loader returns bytes or a string
await cache.getOrLoad('c', 'k', () => 42);
// @ts-expect-error options are named
new SmartCache(redis, { lease: 5 });
// @ts-expect-error warm takes a list of kinds
await cache.warm('d', 'accounts', () => '');
export { v, gone, report, hits, data, who, keyBytes, channel, wait };
