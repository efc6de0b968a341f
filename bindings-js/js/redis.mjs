// `keyroute/redis` (Node): least-used pools (LeastUsed), least-concurrency leases (Leases)
// and affinity with a cap (Affinity) on a node-redis client the caller passes in
// (createClient() or createCluster() of npm redis 4+), as keyroute-redis's of the same
// names in Rust (and Python's, and C's over them).
//
// `createRedisApi(wasm, scripts)`: `wasm` the Node module (the cache .wasm, which carries
// core's pool calls and decoders), `scripts` core's SCRIPTS. scripts/build.mjs bundles it
// with helpers.mjs and link.mjs into dist/redis-api.cjs.
//
// Every decision is core's (keyroute::select::{PoolCalls, LeaseCalls, AffinityCalls} and
// their reply decoders, through the .wasm): the keys, each script's arguments and their
// checks, what a reply means. This file sends the calls (link.mjs: EVALSHA, NOSCRIPT) and
// turns the answers into JavaScript values. Every error thrown is an Error with a `code`
// of ERROR_CODES.

import { createHelpers } from './helpers.mjs';
import { createLink } from './link.mjs';

export function createRedisApi(wasm, scripts) {
  'use strict';

  const h = createHelpers(wasm);
  const { fail, guard, describe, text, utf8, int, bool, options, bytes, pack, ERROR_CODES } = h;
  const { Link, items, callOf, walk } = createLink(h, scripts);

  // Core's default bound of one Redis round trip (the smart cache's, CacheSettings).
  const IO_TIMEOUT_MS = wasm.rawCacheDefaults()[8];
  // How many picks pickMany sends at once (keyroute-redis's PICK_BATCH: one pipeline).
  const PICK_BATCH = 512;

  function ioTimeout(o) {
    return guard(() => wasm.rawCheckedMs('ioTimeoutMs', int(o.ioTimeoutMs === undefined ? IO_TIMEOUT_MS : o.ioTimeoutMs, 'ioTimeoutMs'), 1));
  }

  function asBuffer(x, what) {
    const b = bytes(x, what);
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  }

  // Core's decoder of a pool script's reply: [items (Buffers), counts].
  function decode(script, reply) {
    const [tags, nums, data, ends] = walk(reply);
    return items(guard(() => wasm.rawPoolDecode(script, tags, nums, data, ends)));
  }

  const NO_BYTES = Buffer.alloc(0);
  const NO_ENDS = new Uint32Array(0);
  // Core's keys of a pool of `kind` (0 least-used, 1 leases, 2 affinity) at `key`, as Buffers.
  function keysOf(kind, key, what) {
    return items(guard(() => wasm.rawPoolKeys(kind, bytes(key, what))))[0];
  }
  // Core's call `op` (see bindings-js/src/pools.rs) at `key`, as {script, sha1, keys, args}.
  function call(op, key, a) {
    return callOf(guard(() => wasm.rawPoolCall(op, key, a.member || NO_BYTES, a.mode || '', a.data || NO_BYTES, a.ends || NO_ENDS, a.x === undefined ? h.NONE : a.x, a.y === undefined ? h.NONE : a.y, a.c || 0, a.flag || false)));
  }

  // What every handle holds: core's keys of a pool of `kind` at `key` and its link to Redis.
  function handle(kind, client, key, opts, name, what) {
    const o = options(opts, ['ioTimeoutMs'], `the ${name} options`);
    const keys = keysOf(kind, key, what);
    return { keys, link: new Link(client, ioTimeout(o)) };
  }

  // A member (or node) as text: BAD_UTF8 (use the …Bytes variant) when it is not UTF-8.
  function member(b, what = 'a member') {
    return utf8(b, what, '; use the …Bytes variant of this method');
  }

  // [[member, count], ...] of a reply of member → count pairs: flat [member, score, ...]
  // (RESP2's ZRANGE WITHSCORES and HGETALL), [[member, score], ...] or a map (RESP3);
  // `sorted`: in member byte order (as keyroute-redis's).
  function pairs(reply, asText, sorted) {
    let list;
    if (reply instanceof Map) list = [...reply.entries()];
    else if (Array.isArray(reply) && reply.every(Array.isArray)) list = reply;
    else if (Array.isArray(reply) && reply.length % 2 === 0) list = Array.from({ length: reply.length / 2 }, (_, i) => [reply[2 * i], reply[2 * i + 1]]);
    else if (reply !== null && typeof reply === 'object' && !Array.isArray(reply) && !ArrayBuffer.isView(reply)) list = Object.entries(reply);
    else fail('REDIS_PROTOCOL', 'unexpected reply: expected member → count pairs');
    const out = list.map(([m, s]) => {
      const n = Number(Buffer.isBuffer(s) ? s.toString('latin1') : s);
      return [Buffer.isBuffer(m) ? m : Buffer.from(String(m)), Number.isFinite(n) && n > 0 ? Math.floor(n) : 0];
    });
    if (sorted) out.sort((x, y) => Buffer.compare(x[0], y[0]));
    return out.map(([m, n]) => [asText ? member(m) : m, n]);
  }

  // A list of members packed for the .wasm.
  function memberList(list, what) {
    if (typeof list === 'string' || !list || typeof list[Symbol.iterator] !== 'function') fail('BAD_TYPE', `${what} must be a list of strings or Uint8Arrays, not ${describe(list)}`);
    return pack(list, what);
  }

  /**
   * A least-used pool on Redis: a sorted set (member = proxy id, score = assignments) at
   * `key` and its side hash of removed members' counts, driven by core's scripts.
   */
  class LeastUsed {
    #link;
    #keys;

    constructor(client, key, opts) {
      ({ keys: this.#keys, link: this.#link } = handle(0, client, key, opts, 'LeastUsed', 'the pool key'));
    }

    /** The pool key (a sorted set). */
    get key() {
      return this.#keys[0];
    }
    /** The side key (a hash of removed members' counts). */
    get sideKey() {
      return this.#keys[1];
    }

    /**
     * Adds `members` at count `initial` (default 0); members already in the pool keep
     * their counts unless `overwrite`. How many members were new.
     */
    async seed(members, opts) {
      const o = options(opts, ['initial', 'overwrite'], 'the seed options');
      const [data, ends] = memberList(members, 'members');
      const initial = o.initial === undefined ? 0n : int(o.initial, 'initial');
      const overwrite = o.overwrite === undefined ? false : bool(o.overwrite, 'overwrite');
      const c = call(1, this.#keys[0], { data, ends, x: initial, flag: overwrite });
      return decode('seed', await this.#link.eval(c))[1][0];
    }

    async #pick() {
      const [it, c] = decode('least-used', await this.#link.eval(call(0, this.#keys[0], {})));
      return c[0] === 1 ? it[0] : null;
    }

    /**
     * The least-used member (its count incremented, in one atomic script), or null when
     * the pool is empty or missing: then make no request. BAD_UTF8 when the member is not
     * UTF-8 (pickBytes; the pick was counted).
     */
    async pick() {
      const m = await this.#pick();
      return m === null ? null : member(m);
    }
    /** As pick(), as a Buffer. */
    async pickBytes() {
      return this.#pick();
    }

    /**
     * Up to `n` picks (fewer only when the pool is, or becomes, empty), sent 512 at a time
     * (one pipeline). Each pick is atomic; other clients' picks may interleave.
     */
    async pickMany(n) {
      return (await this.#pickMany(n)).map((m) => member(m));
    }
    /** As pickMany(), as Buffers. */
    async pickManyBytes(n) {
      return this.#pickMany(n);
    }

    async #pickMany(n) {
      const count = items(guard(() => wasm.rawPoolCall(10, this.#keys[0], NO_BYTES, '', NO_BYTES, NO_ENDS, int(n, 'pickMany: n'), h.NONE, 0, false)))[1][0];
      const out = [];
      while (out.length < count) {
        const batch = Math.min(PICK_BATCH, count - out.length);
        const picks = await Promise.all(Array.from({ length: batch }, () => this.#pick()));
        for (const m of picks) if (m !== null) out.push(m);
        if (picks.includes(null)) break;
      }
      return out;
    }

    /** Takes `member` out, remembering its count: the count, or null if it was not in the pool. */
    async remove(m) {
      const [, c] = decode('remove', await this.#link.eval(call(2, this.#keys[0], { member: bytes(m, 'the member') })));
      return c[0] === 1 ? c[1] : null;
    }

    /** Puts `member` back: mode 'at_minimum' (default) or 'keep'. Its count afterwards. */
    async restore(m, mode = 'at_minimum') {
      const c = call(3, this.#keys[0], { member: bytes(m, 'the member'), mode: text(mode, 'the restore mode') });
      return decode('restore', await this.#link.eval(c))[1][0];
    }

    /** [[member, count], ...] in pick order (ZRANGE pool 0 -1 WITHSCORES). */
    async counts() {
      return pairs(await this.#link.send(['ZRANGE', this.key, '0', '-1', 'WITHSCORES'], this.key), true, false);
    }
    async countsBytes() {
      return pairs(await this.#link.send(['ZRANGE', this.key, '0', '-1', 'WITHSCORES'], this.key), false, false);
    }
    /** [[member, count], ...] remembered for removed members, in byte order. */
    async removed() {
      return pairs(await this.#link.send(['HGETALL', this.sideKey], this.sideKey), true, true);
    }
    async removedBytes() {
      return pairs(await this.#link.send(['HGETALL', this.sideKey], this.sideKey), false, true);
    }
  }

  const RELEASES = ['already_released_or_expired', 'released', 'expired'];

  // A lease as the decoder gave it: item i and counts [id, deadline] at c[at], c[at + 1].
  function lease(m, id, deadlineMs) {
    return Object.freeze({
      get member() {
        return member(m);
      },
      memberBytes: m,
      id,
      deadlineMs,
    });
  }

  /**
   * Least-concurrency selection on Redis: acquire gives the member with the fewest leases
   * in flight a lease with a deadline, release ends it, reclaim ends the leases abandoned
   * past their deadline. Time is the Redis server's TIME, one clock for every worker.
   */
  class Leases {
    #link;
    #keys;

    constructor(client, key, opts) {
      ({ keys: this.#keys, link: this.#link } = handle(1, client, key, opts, 'Leases', 'the pool key'));
    }

    /** The pool key and its three companions (in-flight, leases, lease-members, lease-seq). */
    get keys() {
      return this.#keys.slice();
    }

    /** Adds `members` with no lease in flight; members already there keep theirs. How many were new. */
    async seed(members) {
      const [data, ends] = memberList(members, 'members');
      return decode('seed', await this.#link.eval(call(4, this.#keys[0], { data, ends })))[1][0];
    }

    /** Takes `member` out (no new lease goes to it; its leases stay valid). Whether it was there. */
    async remove(m) {
      const k = this.#keys[0];
      return (await this.#link.send(['ZREM', k, asBuffer(m, 'the member')], k)) > 0;
    }

    /**
     * A lease of `ttlMs` (1 ms to 2^53 ms, else BAD_TTL) on the member with the fewest
     * leases in flight: {member, memberBytes, id, deadlineMs}, or null when the pool is
     * empty or missing.
     */
    async acquire(ttlMs) {
      const [it, c] = decode('lease-acquire', await this.#link.eval(call(5, this.#keys[0], { x: int(ttlMs, 'ttlMs') })));
      return c[0] === 1 ? lease(it[0], c[1], c[2]) : null;
    }

    /**
     * Ends `lease` (or the lease id), at most once: 'released', 'expired' (past its
     * deadline, not yet reclaimed) or 'already_released_or_expired' (nothing changed).
     */
    async release(l) {
      const id = l !== null && typeof l === 'object' && 'id' in l ? l.id : l;
      return RELEASES[decode('lease-release', await this.#link.eval(call(6, this.#keys[0], { x: int(id, 'the lease id') })))[1][0]];
    }

    /**
     * Ends every lease whose deadline is at or before now (the server's TIME, or `nowMs`)
     * and returns them; each lease is returned by one reclaim, never after its release.
     */
    async reclaim(opts) {
      const o = options(opts, ['nowMs'], 'the reclaim options');
      const now = o.nowMs === undefined || o.nowMs === null ? h.NONE : int(o.nowMs, 'nowMs');
      const out = [];
      for (;;) {
        const [it, c] = decode('lease-reclaim', await this.#link.eval(call(7, this.#keys[0], { y: now })));
        for (let i = 0; i < c[0]; i++) out.push(lease(it[i], c[1 + 2 * i], c[2 + 2 * i]));
        if (c[0] < RECLAIM_BATCH) return out;
      }
    }

    /** [[member, leases in flight], ...] in acquire order. */
    async inFlight() {
      const k = this.#keys[0];
      return pairs(await this.#link.send(['ZRANGE', k, '0', '-1', 'WITHSCORES'], k), true, false);
    }
    async inFlightBytes() {
      const k = this.#keys[0];
      return pairs(await this.#link.send(['ZRANGE', k, '0', '-1', 'WITHSCORES'], k), false, false);
    }
    /** How many leases are in flight. */
    async outstanding() {
      return Number(await this.#link.send(['ZCARD', this.#keys[1]], this.#keys[1]));
    }
  }
  // How many leases one reclaim script call ends at most (core's RECLAIM_BATCH).
  const RECLAIM_BATCH = wasm.rawLimit(5);

  /**
   * Affinity with a cap on Redis: bounded-load consistent hashing shared by every worker.
   * take gives an item to its holder, or to the first of its candidate nodes holding fewer
   * items than the cap, in one atomic script; release frees it.
   */
  class Affinity {
    #link;
    #keys;

    constructor(client, key, opts) {
      ({ keys: this.#keys, link: this.#link } = handle(2, client, key, opts, 'Affinity', 'the affinity key'));
    }

    /** The affinity key (item → node) and its loads key (node → items held). */
    get keys() {
      return this.#keys.slice();
    }

    /**
     * Gives `item` to the node holding it, else to the first of `candidates` (in the
     * item's preference order, e.g. Router.getN(item, n)) under the cap: `{cap: N}` items
     * per node, or `{c: 1.25}` (the bounded-loads factor: ⌈c·(held+1)/n⌉). {node, load,
     * cap, new}, or null when every candidate is at the cap (nothing changed).
     */
    async take(item, candidates, opts) {
      const o = options(opts, ['cap', 'c'], 'the take options');
      if ((o.cap === undefined) === (o.c === undefined)) fail('BAD_OPTION', 'give the cap as {cap: N} (items per node) or {c: factor} (bounded loads), one of them');
      if (o.c !== undefined && typeof o.c !== 'number') fail('BAD_TYPE', `c must be a number, not ${describe(o.c)}`);
      const [data, ends] = memberList(candidates, 'candidates');
      const cap = o.cap === undefined ? h.NONE : int(o.cap, 'cap');
      const [it, c] = decode('affinity-take', await this.#link.eval(call(8, this.#keys[0], { member: bytes(item, 'the item'), data, ends, x: cap, c: o.c })));
      return c[0] === 1 ? { node: member(it[0], 'the node'), load: c[1], cap: c[2], new: c[3] === 1 } : null;
    }

    /** Frees `item` once: the node that held it (its load went down), or null. */
    async release(item) {
      const [it, c] = decode('affinity-release', await this.#link.eval(call(9, this.#keys[0], { member: bytes(item, 'the item') })));
      return c[0] === 1 ? member(it[0], 'the node') : null;
    }

    /** The node holding `item`, or null. */
    async holder(item) {
      const k = this.#keys[0];
      const n = await this.#link.send(['HGET', k, asBuffer(item, 'the item')], k);
      return n === null || n === undefined ? null : member(Buffer.from(n), 'the node');
    }

    /** [[node, items held], ...] of every node holding at least one item, by name. */
    async loads() {
      const k = this.#keys[1];
      return pairs(await this.#link.send(['HGETALL', k], k), true, true);
    }

    /** How many items are held. */
    async held() {
      const k = this.#keys[0];
      return Number(await this.#link.send(['HLEN', k], k));
    }
  }

  return { LeastUsed, Leases, Affinity, ERROR_CODES };
}
