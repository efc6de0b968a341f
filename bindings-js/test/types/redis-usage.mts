// Compiled by types.test.mjs: keyroute/redis's declarations accept real usage and reject misuse.
import { createClient, createCluster } from 'redis';
import { LeastUsed, Leases, Affinity, type Lease, type Release, type Taken } from 'keyroute/redis';

const redis = createClient();
const pool = new LeastUsed(redis, '{proxies}:pool', { ioTimeoutMs: 500 });
const added: number = await pool.seed(['proxy-1', new Uint8Array([1])], { initial: 0, overwrite: false });
const picked: string | null = await pool.pick();
const many: string[] = await pool.pickMany(10);
const raw: Buffer[] = await pool.pickManyBytes(2n);
const kept: number | null = await pool.remove('proxy-1');
const back: number = await pool.restore('proxy-1', 'keep');
const counts: Array<[string, number]> = await pool.counts();
const side: Buffer = pool.sideKey;
const leases = new Leases(createCluster({ rootNodes: [] }), '{jobs}:busy');
const lease: Lease | null = await leases.acquire(30_000);
if (lease) {
  const how: Release = await leases.release(lease);
  const at: number = lease.deadlineMs;
}
const reclaimed: Lease[] = await leases.reclaim({ nowMs: Date.now() });
const owners = new Affinity(redis, '{jobs}:owner');
const taken: Taken | null = await owners.take('job-1', ['n1', 'n2'], { c: 1.25 });
const fixed: Taken | null = await owners.take('job-2', ['n1'], { cap: 3 });
const freed: string | null = await owners.release('job-1');
// @ts-expect-error the restore mode is keep or at_minimum
await pool.restore('proxy-1', 'sideways');
// @ts-expect-error the cap is {cap} or {c}
await owners.take('job-3', ['n1'], { factor: 2 });
// @ts-expect-error a lease TTL is a number of ms
await leases.acquire('30s');
export { added, picked, many, raw, kept, back, counts, side, reclaimed, taken, fixed, freed };
