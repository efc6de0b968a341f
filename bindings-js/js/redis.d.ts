// Types of `keyroute/redis` (Node only): least-used pools, leases and affinity with a cap
// on Redis through a node-redis client (npm `redis` 4+, standalone or Cluster), driven by
// core's scripts, calls and reply decoders (keyroute::select) through the .wasm: the same
// answers as keyroute-redis's LeastUsed, Leases and Affinity in Rust, Python and C.
//
// Every error thrown is an `Error` (TypeError for BAD_TYPE) whose `code` is one of
// ERROR_CODES: the checks before anything is sent (BAD_POOL_KEY, EMPTY_MEMBER, BAD_COUNT,
// BAD_TTL, OUT_OF_RANGE, TOO_LARGE, ...) and Redis's (REDIS_WRONGTYPE when a key holds
// another type: the script changed nothing, REDIS_TIMEOUT, REDIS_CONNECTION_LOST, ...).

import type { ErrorCode, KeyrouteError } from './index.js';
export type { ErrorCode, KeyrouteError } from './index.js';

/** A key, member, item or node name: a string (UTF-8) or bytes. */
export type Bytes = string | Uint8Array;

/**
 * What the handles need of a node-redis client: `createClient()` (4+) or
 * `createCluster()`, connected. Commands are sent with `sendCommand`.
 */
export type RedisLike = { sendCommand(...args: any[]): Promise<unknown> } & object;

export interface RedisOptions {
  /** The bound of one Redis round trip in ms (core's default, 1000). */
  ioTimeoutMs?: number | bigint;
}

/** How members are put back: at their remembered count, or at the pool's minimum. */
export type RestoreMode = 'keep' | 'at_minimum';

/**
 * A least-used pool on Redis: a sorted set (member = proxy id, score = assignments) and
 * its side hash of removed members' counts. Ties go to the byte-wise smallest member; an
 * empty or missing pool picks null (then make no request).
 */
export class LeastUsed {
  constructor(client: RedisLike, key: Bytes, options?: RedisOptions);
  /** The pool key. */
  readonly key: Buffer;
  /** The side key (`{key}:removed`, or key + `:removed` when it has a hash tag). */
  readonly sideKey: Buffer;
  /** Adds members at `initial` (default 0; members already there keep theirs unless `overwrite`): how many were new. */
  seed(members: Iterable<Bytes>, options?: { initial?: number | bigint; overwrite?: boolean }): Promise<number>;
  /** The least-used member, its count incremented in one atomic script; null when empty. BAD_UTF8 for a member that is not UTF-8. */
  pick(): Promise<string | null>;
  pickBytes(): Promise<Buffer | null>;
  /** Up to `n` picks (fewer only when the pool is or becomes empty), 512 at a time. */
  pickMany(n: number | bigint): Promise<string[]>;
  pickManyBytes(n: number | bigint): Promise<Buffer[]>;
  /** Takes a member out, remembering its count: that count, or null when it was not in the pool. */
  remove(member: Bytes): Promise<number | null>;
  /** Puts a member back (default 'at_minimum'): its count afterwards. */
  restore(member: Bytes, mode?: RestoreMode): Promise<number>;
  /** [[member, count], ...] in pick order. */
  counts(): Promise<Array<[string, number]>>;
  countsBytes(): Promise<Array<[Buffer, number]>>;
  /** [[member, count], ...] remembered for removed members, in byte order. */
  removed(): Promise<Array<[string, number]>>;
  removedBytes(): Promise<Array<[Buffer, number]>>;
}

/** A lease on a member: in flight until released or reclaimed. */
export interface Lease {
  /** The member (BAD_UTF8 when it is not UTF-8: read memberBytes). */
  readonly member: string;
  readonly memberBytes: Buffer;
  /** The lease id, unique within the pool. */
  readonly id: number;
  /** When it expires, ms since the Unix epoch on the Redis server's clock. */
  readonly deadlineMs: number;
}

/** What Leases.release did. */
export type Release = 'released' | 'expired' | 'already_released_or_expired';

/**
 * Least-concurrency selection on Redis: a lease goes to the member with the fewest leases
 * in flight and lasts until released or reclaimed past its deadline. One clock: the Redis
 * server's TIME.
 */
export class Leases {
  constructor(client: RedisLike, key: Bytes, options?: RedisOptions);
  /** The pool key and its three companions (one Cluster slot). */
  readonly keys: Buffer[];
  seed(members: Iterable<Bytes>): Promise<number>;
  remove(member: Bytes): Promise<boolean>;
  /** A lease of `ttlMs` (1 to 2^53 ms, else BAD_TTL), or null when the pool is empty. */
  acquire(ttlMs: number | bigint): Promise<Lease | null>;
  /** Ends a lease (or a lease id) at most once. */
  release(lease: Lease | number | bigint): Promise<Release>;
  /** Ends the leases past their deadline (at the server's TIME, or `nowMs`) and returns them. */
  reclaim(options?: { nowMs?: number | bigint }): Promise<Lease[]>;
  inFlight(): Promise<Array<[string, number]>>;
  inFlightBytes(): Promise<Array<[Buffer, number]>>;
  outstanding(): Promise<number>;
}

/** What Affinity.take gave. */
export interface Taken {
  /** The node holding the item. */
  node: string;
  /** How many items that node holds now. */
  load: number;
  /** The cap of this take. */
  cap: number;
  /** Whether this call placed the item (false: it was held already; nothing changed). */
  new: boolean;
}

/**
 * Affinity with a cap on Redis: bounded-load consistent hashing shared by every worker.
 * An item stays with its holder; a new one goes to the first candidate under the cap.
 */
export class Affinity {
  constructor(client: RedisLike, key: Bytes, options?: RedisOptions);
  /** The affinity key and its loads key (one Cluster slot). */
  readonly keys: Buffer[];
  /**
   * Gives `item` to its holder, else to the first of `candidates` (its preference order,
   * e.g. Router.getN) under the cap: `{cap: N}` items per node or `{c: factor}` (at most
   * ⌈c·(held+1)/n⌉). null when every candidate is at the cap.
   */
  take(item: Bytes, candidates: Iterable<Bytes>, cap: { cap: number | bigint } | { c: number }): Promise<Taken | null>;
  /** Frees `item` once: the node that held it, or null. */
  release(item: Bytes): Promise<string | null>;
  holder(item: Bytes): Promise<string | null>;
  /** [[node, items held], ...] by node name. */
  loads(): Promise<Array<[string, number]>>;
  held(): Promise<number>;
}

/** Every error code, name → stable number. */
export const ERROR_CODES: Readonly<Record<ErrorCode, number>>;
