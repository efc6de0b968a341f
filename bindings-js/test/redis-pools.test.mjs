// keyroute/redis (LeastUsed, Leases, Affinity) on a real redis-server (started here on a
// free 127.0.0.1 port, stopped at the end) through node-redis 4 (@redis/client 1.x) and 5+
// (npm redis 6.x): the same answers as the in-memory Pool, core's refusals before anything
// is sent, NOSCRIPT, binary members, and the concurrency check of
// redis/tests/redis_least_used_concurrency.rs (400 concurrent picks, spread 0), which a
// non-atomic client fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Pool } from 'keyroute';
import { LeastUsed, Leases, Affinity } from 'keyroute/redis';
import { suiteRedis, sleep } from './redis-helpers.mjs';

const redis = suiteRedis();
const client = (line) => redis.client(line);
let n = 0;
const fresh = (what) => `{${what}-${process.pid}-${++n}}:pool`;

const code = (c) => (e) => {
  assert.equal(e.code, c, e.message);
  return true;
};

for (const line of ['v4', 'v5']) {
  test(`LeastUsed picks as the in-memory Pool does, remembers removed counts, restores (node-redis ${line})`, async () => {
    const c = await client(line);
    const key = fresh(`lu-${line}`);
    const pool = new LeastUsed(c, key);
    assert.equal(pool.key.toString(), key);
    assert.equal(pool.sideKey.toString(), `${key}:removed`);
    assert.equal((new LeastUsed(c, 'plain')).sideKey.toString(), '{plain}:removed');
    const mem = new Pool();
    assert.equal(await pool.seed(['proxy-b', 'proxy-a', 'proxy-c'], { initial: 2 }), 3);
    mem.seed(['proxy-b', 'proxy-a', 'proxy-c'], { initial: 2 });
    assert.equal(await pool.seed(['proxy-a', 'proxy-d'], { initial: 0 }), 1);
    mem.seed(['proxy-a', 'proxy-d'], { initial: 0 });
    const picks = [];
    for (let i = 0; i < 12; i++) picks.push(await pool.pick());
    assert.deepEqual(picks, mem.pickMany(12));
    assert.deepEqual(await pool.pickMany(9), mem.pickMany(9));
    assert.deepEqual(await pool.counts(), mem.counts());
    assert.equal(await pool.remove('proxy-a'), mem.remove('proxy-a'));
    assert.equal(await pool.remove('proxy-a'), null);
    assert.deepEqual(await pool.removed(), mem.removed());
    assert.equal(await pool.restore('proxy-a', 'keep'), mem.restore('proxy-a', 'keep'));
    assert.equal(await pool.remove('proxy-b'), mem.remove('proxy-b'));
    assert.equal(await pool.restore('proxy-b'), mem.restore('proxy-b'));
    assert.deepEqual(await pool.counts(), mem.counts());
    assert.deepEqual((await pool.countsBytes()).map(([m, k]) => [m.toString(), k]), mem.counts());
    mem.free();

    // An empty or missing pool picks nothing.
    const empty = new LeastUsed(c, fresh('empty'));
    assert.equal(await empty.pick(), null);
    assert.deepEqual(await empty.pickMany(5), []);
    assert.deepEqual(await pool.pickMany(0), []);
  });

  test(`LeastUsed refuses what core refuses, before sending, and maps Redis's errors (node-redis ${line})`, async () => {
    const c = await client(line);
    assert.throws(() => new LeastUsed(c, ''), code('BAD_POOL_KEY'));
    assert.throws(() => new LeastUsed(c, 'a}b'), code('BAD_POOL_KEY'));
    assert.throws(() => new LeastUsed({}, 'k'), code('BAD_TYPE'));
    assert.throws(() => new LeastUsed(c, 'k', { nope: 1 }), code('BAD_OPTION'));
    const key = fresh(`bad-${line}`);
    const pool = new LeastUsed(c, key);
    await assert.rejects(pool.seed(['a', '']), code('EMPTY_MEMBER'));
    await assert.rejects(pool.seed(['a'], { initial: 2 ** 53 + 2 }), code('BAD_COUNT'));
    await assert.rejects(pool.seed('a'), code('BAD_TYPE'));
    await assert.rejects(pool.restore('a', 'sideways'), code('BAD_RESTORE_MODE'));
    await assert.rejects(pool.restore(''), code('EMPTY_MEMBER'));
    await assert.rejects(pool.pickMany(2 ** 24 + 1), code('TOO_LARGE'));
    await assert.rejects(pool.pickMany(-1), code('TOO_LARGE'));
    // Nothing was sent: the key does not exist.
    assert.equal(await c.sendCommand(['EXISTS', key]), 0);
    // A key of another type: the script refuses and changes nothing.
    await c.sendCommand(['SET', key, 'a string']);
    await assert.rejects(pool.pick(), code('REDIS_WRONGTYPE'));
    assert.equal(await c.sendCommand(['GET', key]), 'a string');
  });

  test(`LeastUsed survives SCRIPT FLUSH, and members that are not UTF-8 are picked as bytes (node-redis ${line})`, async () => {
    const c = await client(line);
    const pool = new LeastUsed(c, fresh(`flush-${line}`));
    await pool.seed([Buffer.from([0xff, 0x01]), 'text']);
    await c.sendCommand(['SCRIPT', 'FLUSH']);
    assert.deepEqual(await pool.pickBytes(), Buffer.from('text'));
    await c.sendCommand(['SCRIPT', 'FLUSH']);
    await assert.rejects(pool.pick(), code('BAD_UTF8'));
    assert.deepEqual(await pool.pickManyBytes(2), [Buffer.from('text'), Buffer.from([0xff, 0x01])]);
    await assert.rejects(pool.counts(), code('BAD_UTF8'));
    assert.equal((await pool.countsBytes()).length, 2);
  });

  test(`Leases: the fewest in flight, released once, expired, reclaimed (node-redis ${line})`, async () => {
    const c = await client(line);
    const leases = new Leases(c, fresh(`le-${line}`));
    assert.equal(leases.keys.length, 4);
    assert.ok(leases.keys[1].toString().endsWith(':leases'));
    assert.equal(await leases.acquire(1000), null);
    assert.equal(await leases.seed(['w2', 'w1']), 2);
    const a = await leases.acquire(60000);
    const b = await leases.acquire(60000);
    const d = await leases.acquire(60000);
    assert.deepEqual([a.member, b.member, d.member], ['w1', 'w2', 'w1']);
    assert.deepEqual([a.id, b.id, d.id], [1, 2, 3]);
    assert.ok(a.deadlineMs > Date.now() + 50000);
    assert.deepEqual(await leases.inFlight(), [['w2', 1], ['w1', 2]]);
    assert.equal(await leases.outstanding(), 3);
    assert.equal(await leases.release(a), 'released');
    assert.equal(await leases.release(a), 'already_released_or_expired');
    assert.equal(await leases.release(b.id), 'released');
    const short = await leases.acquire(1);
    await sleep(10);
    assert.equal(await leases.release(short), 'expired');
    const left = await leases.acquire(1);
    await sleep(10);
    const reclaimed = await leases.reclaim();
    assert.deepEqual(reclaimed.map((l) => l.id), [left.id]);
    assert.deepEqual(await leases.reclaim(), []);
    assert.deepEqual((await leases.reclaim({ nowMs: d.deadlineMs })).map((l) => [l.member, l.id]), [['w1', d.id]]);
    assert.equal(await leases.outstanding(), 0);
    assert.equal(await leases.remove('w1'), true);
    assert.equal(await leases.remove('w1'), false);
    await assert.rejects(leases.acquire(0), code('BAD_TTL'));
    await assert.rejects(leases.acquire(2 ** 53 + 2), code('BAD_TTL'));
    await assert.rejects(leases.seed(['']), code('EMPTY_MEMBER'));
  });

  test(`Affinity: a cap or a factor, held items stay, release frees once (node-redis ${line})`, async () => {
    const c = await client(line);
    const aff = new Affinity(c, fresh(`af-${line}`));
    assert.ok(aff.keys[1].toString().endsWith(':loads'));
    assert.deepEqual(await aff.take('job-1', ['n1', 'n2'], { cap: 1 }), { node: 'n1', load: 1, cap: 1, new: true });
    assert.deepEqual(await aff.take('job-1', ['n2', 'n1'], { cap: 1 }), { node: 'n1', load: 1, cap: 1, new: false });
    assert.equal((await aff.take('job-2', ['n1', 'n2'], { cap: 1 })).node, 'n2');
    assert.equal(await aff.take('job-3', ['n1', 'n2'], { cap: 1 }), null);
    assert.equal(await aff.holder('job-2'), 'n2');
    assert.equal(await aff.holder('job-3'), null);
    assert.deepEqual(await aff.loads(), [['n1', 1], ['n2', 1]]);
    assert.equal(await aff.held(), 2);
    assert.equal(await aff.release('job-1'), 'n1');
    assert.equal(await aff.release('job-1'), null);
    // The factor: ceil(1.5 * (held + 1) / 2) = ceil(1.5 * 2 / 2) = 2 for the next take.
    assert.deepEqual(await aff.take('job-4', ['n2', 'n1'], { c: 1.5 }), { node: 'n2', load: 2, cap: 2, new: true });
    await assert.rejects(aff.take('job-5', [], { cap: 1 }), code('OUT_OF_RANGE'));
    await assert.rejects(aff.take('', ['n1'], { cap: 1 }), code('EMPTY_MEMBER'));
    await assert.rejects(aff.take('job-5', ['n1', ''], { cap: 1 }), code('EMPTY_MEMBER'));
    await assert.rejects(aff.take('job-5', ['n1'], { cap: 0 }), code('OUT_OF_RANGE'));
    await assert.rejects(aff.take('job-5', ['n1'], { c: 0.5 }), code('OUT_OF_RANGE'));
    await assert.rejects(aff.take('job-5', ['n1'], { cap: 1, c: 2 }), code('BAD_OPTION'));
    await assert.rejects(aff.take('job-5', ['n1']), code('BAD_OPTION'));
    await assert.rejects(aff.release(''), code('EMPTY_MEMBER'));
  });
}

// The check of redis/tests/redis_least_used_concurrency.rs: every pick returned a member,
// each member's count grew by exactly the picks that returned it, and the spread of the
// counts is 0 (400 picks over 10 members from 5 each: 45 each). What went wrong, if anything.
async function checkPicks(c, key, picks, initial, members) {
  const problems = [];
  if (picks.some((m) => m === null)) problems.push('a pick returned nothing');
  const tally = new Map();
  for (const m of picks) tally.set(m, (tally.get(m) || 0) + 1);
  const counts = new Map(await new LeastUsed(c, key).counts());
  if (counts.size !== members) problems.push(`${counts.size} members`);
  let sum = 0;
  for (const [m, k] of counts) {
    sum += k;
    if (k - initial !== (tally.get(m) || 0)) problems.push(`${m}: count ${k}, picked ${tally.get(m) || 0} times`);
  }
  if (sum !== initial * members + picks.length) problems.push(`counts sum to ${sum}`);
  const spread = Math.max(...counts.values()) - Math.min(...counts.values());
  if (spread !== 0) problems.push(`spread ${spread}`);
  return problems;
}

const MEMBERS = Array.from({ length: 10 }, (_, i) => `proxy-${String(i).padStart(2, '0')}`);

test('400 concurrent picks from 4 clients: every count exact, spread 0 (node-redis 4 and 5)', async () => {
  const key = fresh('race');
  const cs = [await client('v5'), await client('v4'), await client('v5'), await client('v4')];
  await new LeastUsed(cs[0], key).seed(MEMBERS, { initial: 5 });
  const picks = (await Promise.all(cs.map((c) => {
    const pool = new LeastUsed(c, key);
    return Promise.all(Array.from({ length: 100 }, () => pool.pick()));
  }))).flat();
  assert.equal(picks.length, 400);
  assert.deepEqual(await checkPicks(cs[0], key, picks, 5, MEMBERS.length), []);
});

test('the same check fails for a client that is not atomic (ZRANGE, then ZINCRBY)', async () => {
  const key = fresh('racy');
  const cs = [await client('v5'), await client('v4'), await client('v5'), await client('v4')];
  await new LeastUsed(cs[0], key).seed(MEMBERS, { initial: 5 });
  const racyPick = async (c) => {
    const [m] = await c.sendCommand(['ZRANGE', key, '0', '0']);
    await c.sendCommand(['ZINCRBY', key, '1', m]);
    return String(m);
  };
  const picks = (await Promise.all(cs.map((c) => Promise.all(Array.from({ length: 100 }, () => racyPick(c)))))).flat();
  const problems = await checkPicks(cs[0], key, picks, 5, MEMBERS.length);
  assert.ok(problems.some((p) => p.startsWith('spread')), `the racy client passed: ${problems}`);
});
