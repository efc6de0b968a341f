// Types of the npm package `keyroute` (Node: CommonJS and ESM; browsers: ESM).
//
// Keys are strings (hashed as UTF-8; a lone surrogate is BAD_UTF8) or Uint8Array (raw
// bytes). "No node" is `null`. Every error thrown is an `Error` (TypeError for BAD_TYPE)
// whose `code` is one of ERROR_CODES.

/** Key accepted everywhere: a string (UTF-8) or raw bytes. */
export type Key = string | Uint8Array;

/**
 * A list of keys: an array, a Set or any other iterable object — never a string (a
 * string is one key; passing it where a list is meant is BAD_TYPE).
 */
export type Keys = Iterable<Key> & object;

/**
 * Keys already encoded, for the batch calls (`getManyIndexes`, `getMany`, `keySlots`,
 * `groupBySlot`, `ownersOfKeys`): key i is `data.subarray(ends[i - 1] ?? 0, ends[i])`.
 * Offsets must not decrease nor pass `data.length` (else `OUT_OF_RANGE`); bytes after the
 * last offset are ignored. Callers that keep keys as bytes skip the encoding.
 */
export interface PackedKeys {
  data: Uint8Array;
  ends: Uint32Array;
}

/**
 * Error codes carried by thrown errors in `error.code`: the names of core's ErrorCode
 * (docs/errors.md), the same in every language. `ERROR_CODES` maps each to its number.
 */
// BEGIN GENERATED: error codes from core's ErrorCode (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
export type ErrorCode =
  | 'NULL_ARGUMENT' | 'BAD_UTF8' | 'BAD_TYPE' | 'OUT_OF_RANGE' | 'TOO_LARGE'
  | 'BUFFER_TOO_SMALL' | 'INVALID_HANDLE' | 'INTERNAL' | 'EMPTY_NODE_NAME' | 'ZERO_WEIGHT'
  | 'NEGATIVE_WEIGHT' | 'WEIGHT_TOO_LARGE' | 'BAD_WEIGHT' | 'DUPLICATE_NODE' | 'UNKNOWN_NODE'
  | 'UNKNOWN_PROFILE' | 'TOO_MANY_POINTS' | 'BAD_VNODES' | 'BAD_POINTS_PER_DIGEST'
  | 'BAD_OPTION' | 'INCOMPATIBLE_RINGS' | 'BAD_NODE_SPEC' | 'AMBIGUOUS_NODE_SPEC' | 'BAD_PORT'
  | 'BAD_SLOT' | 'BAD_RANGE' | 'BAD_ADDRESS' | 'NOT_A_MASTER' | 'INCONSISTENT_TOPOLOGY'
  | 'TOO_MANY_NODES' | 'NOT_A_REDIRECT' | 'BAD_REDIRECT' | 'BAD_PLAN' | 'STALE_PLAN'
  | 'BAD_POOL_KEY' | 'BAD_COUNT' | 'BAD_RESTORE_MODE' | 'EMPTY_MEMBER' | 'BAD_TTL'
  | 'REDIS_BAD_URL' | 'REDIS_CONNECT' | 'REDIS_AUTH' | 'REDIS_TIMEOUT' | 'REDIS_CONNECTION_LOST'
  | 'REDIS_WRONGTYPE' | 'REDIS_SERVER' | 'REDIS_PROTOCOL' | 'CLUSTER_NO_OWNER'
  | 'CLUSTER_RETRIES_EXHAUSTED' | 'CLUSTER_UNREACHABLE' | 'BUSY' | 'REDIS_READONLY'
  | 'REDIS_TLS' | 'CACHE_TIMEOUT' | 'BACKEND_ERROR' | 'SESSION_EXPIRED' | 'VERSION_MISMATCH'
  | 'NOT_FOUND' | 'VALUE_TOO_LARGE' | 'BAD_CLIENT_ID' | 'BAD_KIND' | 'BAD_DEVICE_ID'
  | 'BAD_SESSION_ID' | 'BAD_VERSION' | 'SESSION_CLIENT_MISMATCH' | 'BAD_CONFIG'
  | 'UNSUPPORTED_CONFIG';
// END GENERATED

/** Every error the package throws: an Error (a TypeError for BAD_TYPE) with a `code`. */
export interface KeyrouteError extends Error {
  code: ErrorCode;
}

/** Error code name → number (core's ErrorCode::number; the C library's status values). */
export const ERROR_CODES: Readonly<Record<ErrorCode, number>>;

// BEGIN GENERATED: limits and constants from core (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
/** The limits of one call, stated once: core's (`keyroute::keys`, `keyroute::select`). */
export const LIMITS: Readonly<{
  /** Keys, members or nodes in one batch call (core's `MAX_KEYS_PER_CALL`, 2^24). */
  batchKeys: 16777216;
  /** Bytes of all keys of one batch call (core's `MAX_BATCH_BYTES`, 1 GiB). */
  batchBytes: 1073741824;
  /** Bytes of one key (core's `MAX_KEY_BYTES`, 512 MiB: the largest string Redis holds). */
  keyBytes: 536870912;
  /** Picks in one pickMany call (core's `MAX_PICKS_PER_CALL`, 2^24). */
  picksPerCall: 16777216;
}>;
// END GENERATED

/** Rings, slot maps, plans and pools alive in wasm memory (free() and garbage collection lower it). */
export function liveHandles(): number;

/**
 * An integer argument: a number (an integer) or a bigint. Its range is core's (for
 * example vnodes 1..=65536); a value beyond ±2^127 is OUT_OF_RANGE, a fraction BAD_TYPE.
 */
export type Int = number | bigint;

// BEGIN GENERATED: engine and profile names from core's registry (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
/** Ring profiles (`PROFILES`): `native` (SipHash, 64-bit points) and the bit-exact ketama family. */
export type ProfileName =
  | 'native' | 'libketama' | 'libmemcached' | 'uhashring' | 'node-hashring' | 'hash_ring';
// END GENERATED

export interface RingOptions {
  /** Default `'native'`. `_` and `-` are interchangeable, case is ignored; `'twemproxy'` is the old name of `'libmemcached'`. */
  profile?: ProfileName | string;
  /** Points per unit of weight (native, default 160) or digests per server at equal weight (ketama, default 40). */
  vnodes?: Int;
  /** Port whose `:port` is left out of hashed server strings (npm hashring's `default port`); `null` for none. Not for native. */
  defaultPort?: Int | null;
  /** Points per MD5 digest, 1..4 (3 = npm hashring's `compatibility: 'hash_ring'`). Not for native. */
  pointsPerDigest?: Int;
}

/**
 * Node list: names (weight 1), `[name, weight]` pairs, `{name, weight}` objects (what
 * parseNodes returns), an object name → weight, or a Map. Never a string: a node list in
 * text goes through `Ring.fromSpec` / `parseNodes`.
 */
export type Nodes =
  | (Iterable<string | readonly [string, Int] | { name: string; weight?: Int }> & object)
  | Readonly<Record<string, Int>>
  | ReadonlyMap<string, Int>;

/** One entry of a parsed node list. */
export interface NodeSpec {
  name: string;
  weight: number;
  /** The host:port behind an alias (twemproxy's `host:port:weight alias`), else null. */
  address: string | null;
}

/**
 * Parses a node list with core's grammar: entries separated by commas or lines, `#`
 * comments; `name`, `host:port`, `[v6]:port`, `NAME=WEIGHT`, `NAME WEIGHT`, twemproxy's
 * `host:port:weight [alias]`. `X:N` where X does not look like a host is refused
 * (AMBIGUOUS_NODE_SPEC). The grammar runs in the cluster module: Node loads it on first
 * use, browsers `await initCluster()` once first (else BUSY).
 */
export function parseNodes(spec: string): NodeSpec[];
/** Parses target weights for `SlotMap.plan` (the same grammar, in the cluster module; weight 0 drains). */
export function parseWeights(spec: string): [string, number][];

export interface RingNode {
  name: string;
  weight: number;
  /** Exact fraction of the circle (and of uniformly hashed keys). */
  share: number;
}

export interface RingPoints {
  /** Sorted positions, exact: below 2**32 for the ketama family, 2**64 for native. */
  positions: BigUint64Array;
  /** `positions[i] / 2**bits`, in [0, 1): for drawing. */
  fractions: Float64Array;
  /** `owners[i]` indexes `names`: the node owning point i. */
  owners: Uint32Array;
  names: string[];
  bits: 32 | 64;
}

export interface RingArcs {
  /** First position of each arc (inclusive). An arc may wrap (start > end). */
  starts: BigUint64Array;
  /** Last position of each arc (inclusive). */
  ends: BigUint64Array;
  startFractions: Float64Array;
  /** Exclusive end as a fraction of the circle (may be below the start: wraps). */
  endFractions: Float64Array;
  owners: Uint32Array;
  names: string[];
  bits: 32 | 64;
}

export interface MovedArc {
  start: bigint;
  end: bigint;
  startFraction: number;
  endFraction: number;
  /** Owner in the old ring (null: it was empty). */
  from: string | null;
  /** Owner in the new ring (null: it is empty). */
  to: string | null;
}

export interface RingDiff {
  /** Moved stretches, clockwise, adjacent ones with the same owners merged. */
  moved: MovedArc[];
  /** Fraction of the key space that changes owner. */
  movedFraction: number;
  /** The least any ring could move for the same change of shares. */
  idealFraction: number;
}

export class Ring {
  constructor(nodes?: Nodes, options?: RingOptions);
  /** A ring from a node list in core's grammar (see parseNodes; browsers `await initCluster()` once first). */
  static fromSpec(spec: string, options?: RingOptions): Ring;
  readonly profile: ProfileName;
  readonly bits: 32 | 64;
  readonly vnodes: number;
  readonly pointsPerDigest: number;
  /** The port left out of hashed server strings, or null. */
  readonly defaultPort: number | null;
  readonly size: number;
  readonly pointCount: number;
  /** Node names in index order (a copy). */
  readonly names: string[];
  /** The owner of `key`; null on an empty ring. */
  get(key: Key): string | null;
  /** Up to n distinct nodes walking clockwise: the owner, then the replicas. */
  getN(key: Key, n: Int): string[];
  /** The owner of each key, crossing into wasm once. */
  getMany(keys: Keys | PackedKeys): (string | null)[];
  /** The owner index (into `names`) of each key; -1 on an empty ring. */
  getManyIndexes(keys: Keys | PackedKeys): Int32Array;
  hashKey(key: Key): bigint;
  /** The node owning circle position `hash` (below 2**bits); null on an empty ring. */
  ownerOfHash(hash: bigint | number): string | null;
  has(name: string): boolean;
  add(name: string, weight?: Int): this;
  remove(name: string): this;
  setWeight(name: string, weight: Int): this;
  nodes(): RingNode[];
  shares(): Record<string, number>;
  points(): RingPoints;
  arcs(): RingArcs;
  diff(other: Ring): RingDiff;
  clone(): Ring;
  /** Frees the wasm memory now; a FinalizationRegistry frees it otherwise. Later calls throw INVALID_HANDLE. */
  free(): void;
}

export function diff(oldRing: Ring, newRing: Ring): RingDiff;
export const PROFILES: readonly ProfileName[];

/** `crc16_xmodem(hashTag(key)) & 16383`, exactly as Redis Cluster. */
export function keySlot(key: Key): number;
/** The slot of every key, crossing into wasm once. */
export function keySlots(keys: Keys | PackedKeys): Uint16Array;
/** Keys grouped by slot (ascending), each group's indexes into `keys` in input order: split a multi-key command along them. */
export function groupBySlot(keys: Keys | PackedKeys): { slot: number; indexes: number[] }[];
/** The side key a least-used pool on Redis keeps removed members' counts in (same type as its input). */
export function sideKey(poolKey: string): string;
export function sideKey(poolKey: Uint8Array): Uint8Array;
/** The hashed part of a key: between the first `{` and the next `}` if non-empty, else the key. */
export function hashTag(key: string): string;
export function hashTag(key: Uint8Array): Uint8Array;
// BEGIN GENERATED: the slot count from core (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
/** The number of hash slots of Redis Cluster (core's `SLOT_COUNT`). */
export const SLOT_COUNT: 16384;
// END GENERATED

export type Address = string | { host: string; port: number };

export interface ClusterNode {
  index: number;
  id: string;
  host: string;
  port: number;
  address: string;
  role: 'master' | 'replica';
  health: 'online' | 'loading' | 'failed' | 'unknown';
  /** The id if known, else the address. */
  name: string;
  master: number | null;
  replicas: number[];
}

export interface SlotRange {
  start: number;
  end: number;
  owner: number | null;
}

export interface Redirect {
  kind: 'moved' | 'ask';
  slot: number;
  node: number | null;
  /** MOVED to an address the map did not know: a master was added. */
  added: boolean;
  host: string;
  port: number;
  /** MOVED: refresh the whole map soon. */
  refresh: boolean;
}

export interface PlanMove {
  start: number;
  end: number;
  /** null: the slots were unassigned. */
  from: number | null;
  to: number;
  count: number;
}

export interface PlanTarget {
  node: number;
  weight: number;
  ideal: number;
  before: number;
  after: number;
}

export class ReshardPlan {
  private constructor();
  readonly moves: PlanMove[];
  readonly targets: PlanTarget[];
  readonly slotsMoved: number;
  free(): void;
}

/** A `CLUSTER SHARDS` reply: RESP2 `[key, value, …]` arrays, RESP3 Maps, or objects. */
export type ShardsReply = Iterable<
  | ReadonlyArray<unknown>
  | ReadonlyMap<string, unknown>
  | { slots: Iterable<Int | string | readonly [Int, Int]>; nodes: Iterable<unknown> }
>;
/** A `CLUSTER SLOTS` reply: node-redis's `clusterSlots()` objects or the raw arrays. */
export type SlotsReply = Iterable<
  | ReadonlyArray<unknown>
  | { from: Int; to: Int; master: { host: string; port: Int; id?: string }; replicas?: Iterable<{ host: string; port: Int; id?: string }> }
>;

/**
 * A Redis Cluster slot map. It runs in the cluster module, a .wasm of its own: Node loads
 * it on first use; browsers `await initCluster()` once first (before: BUSY).
 */
export class SlotMap {
  constructor();
  /** A map from a `CLUSTER SHARDS` reply (e.g. `await client.sendCommand(['CLUSTER', 'SHARDS'])`). */
  static fromShards(reply: ShardsReply): SlotMap;
  /** A map from a `CLUSTER SLOTS` reply (e.g. node-redis `await client.clusterSlots()`). */
  static fromSlots(reply: SlotsReply): SlotMap;
  addMaster(address: Address, options?: { id?: string }): number;
  addReplica(master: Int, address: Address, options?: { id?: string }): number;
  setHealth(node: Int, health: string): this;
  assign(start: Int, end: Int, node: Int): this;
  unassign(start: Int, end: Int): this;
  slotOwner(slot: Int): number | null;
  nodeForSlot(slot: Int): ClusterNode | null;
  nodeForKey(key: Key): ClusterNode | null;
  lookup<K extends Key>(key: K): { key: K; tag: K; slot: number; node: ClusterNode | null };
  /** Owner index per key; 0xFFFFFFFF for an unassigned slot. */
  ownersOfKeys(keys: Keys | PackedKeys): Uint32Array;
  /** Owner index of all 16384 slots; 0xFFFF for unassigned. */
  owners(): Uint16Array;
  slotCounts(): Uint32Array;
  ranges(): SlotRange[];
  readonly unassignedCount: number;
  readonly isComplete: boolean;
  readonly size: number;
  node(index: Int): ClusterNode;
  nodes(): ClusterNode[];
  findId(id: string): number | null;
  applyRedirect(message: string, currentHost?: string): Redirect;
  /** weights: [[nodeIndex, weight], ...], a Map, or {nodeIdOrNameOrAddress: weight}; weight 0 drains. */
  plan(weights: ReadonlyArray<readonly [number | string, Int]> | ReadonlyMap<number | string, Int> | Readonly<Record<string, Int>>): ReshardPlan;
  applyPlan(plan: ReshardPlan): this;
  clone(): SlotMap;
  free(): void;
}

export interface Script {
  name: string;
  text: string;
  sha1: string;
  numKeys: number;
  /** One line on what the script does. */
  summary: string;
}
/** Every Lua script keyroute runs (core's SCRIPTS): EVALSHA them with node-redis. */
export type ScriptName =
  | 'least-used' | 'seed' | 'remove' | 'restore' | 'lease-acquire' | 'lease-release' | 'lease-reclaim'
  | 'sc-get' | 'sc-fill' | 'sc-extend' | 'sc-abandon' | 'sc-invalidate' | 'warm-begin'
  | 'sess-create' | 'sess-touch' | 'sess-destroy' | 'sess-list' | 'device-bind';
export const SCRIPTS: Readonly<Record<ScriptName, Script>>;
/** Picks the lowest score (ties: byte-wise smallest member) and increments it: EVALSHA it with 1 key. */
export const LEAST_USED_SCRIPT: string;
export const LEAST_USED_SHA1: string;

/** The least-used pool in memory, answering as the scripts do on Redis. Counts are assignments. */
export class Pool {
  constructor();
  seed(members: Keys, options?: { initial?: Int; overwrite?: boolean }): number;
  /** The least-used member, count incremented; null when the pool is empty: make no request. */
  pick(): string | null;
  pickBytes(): Uint8Array | null;
  /** `n` picks (at most LIMITS.picksPerCall); a member that is not UTF-8 is BAD_UTF8 (use pickManyBytes). */
  pickMany(n: Int): string[];
  pickManyBytes(n: Int): Uint8Array[];
  remove(member: Key): number | null;
  restore(member: Key, mode?: 'at_minimum' | 'keep'): number;
  count(member: Key): number | null;
  removedCount(member: Key): number | null;
  has(member: Key): boolean;
  minCount(): number | null;
  readonly size: number;
  counts(): [string, number][];
  countsBytes(): [Uint8Array, number][];
  removed(): [string, number][];
  removedBytes(): [Uint8Array, number][];
  free(): void;
}

declare const api: {
  Ring: typeof Ring; diff: typeof diff; parseNodes: typeof parseNodes; parseWeights: typeof parseWeights;
  PROFILES: typeof PROFILES; keySlot: typeof keySlot; keySlots: typeof keySlots; groupBySlot: typeof groupBySlot;
  hashTag: typeof hashTag; sideKey: typeof sideKey; SLOT_COUNT: typeof SLOT_COUNT;
  SlotMap: typeof SlotMap; ReshardPlan: typeof ReshardPlan; Pool: typeof Pool;
  SCRIPTS: typeof SCRIPTS; LEAST_USED_SCRIPT: typeof LEAST_USED_SCRIPT; LEAST_USED_SHA1: typeof LEAST_USED_SHA1;
  ERROR_CODES: typeof ERROR_CODES; LIMITS: typeof LIMITS; liveHandles: typeof liveHandles;
};
export type Api = typeof api;

/**
 * Browsers: loads the .wasm (next to the module by default, or from `input`); await it
 * once before using anything else. Node: resolves immediately.
 */
export function init(input?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<Api>;
export function initSync(module: BufferSource | WebAssembly.Module): Api;
/**
 * Browsers: loads the cluster module, a .wasm of its own that SlotMap and ReshardPlan run
 * in (next to the module by default, `keyroute/cluster.wasm` in the exports map, or from
 * `input`); await it once before using SlotMap (before: BUSY). Resolves to the API object,
 * or null while init() has not resolved. Node: loads it now rather than on first use.
 */
export function initCluster(input?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<Api | null>;
export function initClusterSync(module: BufferSource | WebAssembly.Module): Api | null;
export default init;
