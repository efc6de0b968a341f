// Types of the npm package `keyroute` (Node: CommonJS and ESM; browsers: ESM).
//
// Keys are strings (hashed as UTF-8) or Uint8Array (raw bytes). "No node" is `null`.
// Every error thrown is an `Error` (TypeError for wrong argument types) with a `code`.

/** Key accepted everywhere: a string (UTF-8) or raw bytes. */
export type Key = string | Uint8Array;

/** Error codes carried by thrown errors in `error.code`. */
export type ErrorCode =
  | 'EMPTY_NODE_NAME' | 'ZERO_WEIGHT' | 'NEGATIVE_WEIGHT' | 'WEIGHT_TOO_LARGE' | 'BAD_WEIGHT'
  | 'DUPLICATE_NODE' | 'UNKNOWN_NODE' | 'UNKNOWN_PROFILE' | 'BAD_VNODES' | 'BAD_POINTS_PER_DIGEST'
  | 'BAD_PORT' | 'TOO_MANY_POINTS' | 'INCOMPATIBLE_RINGS' | 'BAD_NODE_SPEC' | 'RING_ERROR'
  | 'SLOT_MAP' | 'BAD_SLOT' | 'BAD_ADDRESS' | 'PLAN' | 'REDIRECT'
  | 'POOL' | 'BAD_COUNT' | 'BAD_RESTORE_MODE'
  | 'INVALID_ARGUMENT' | 'FREED';

export interface KeyrouteError extends Error {
  code: ErrorCode;
}

/** Ring profiles: `native` (SipHash, 64-bit points) and the bit-exact ketama family. */
export type ProfileName =
  | 'native' | 'libketama' | 'libmemcached' | 'twemproxy' | 'uhashring' | 'node-hashring' | 'hash_ring';

export interface RingOptions {
  /** Default `'native'`. `_` and `-` are interchangeable, case is ignored. */
  profile?: ProfileName | string;
  /** Points per unit of weight (native, default 160) or digests per server at equal weight (ketama, default 40). */
  vnodes?: number;
  /** Port whose `:port` is left out of hashed server strings (npm hashring's `default port`); `null` for none. */
  defaultPort?: number | null;
  /** Points per MD5 digest, 1..4 (3 = npm hashring's `compatibility: 'hash_ring'`). Not for native. */
  pointsPerDigest?: number;
}

/** Node list: names (weight 1), `[name, weight]` pairs, `{name, weight}` objects, an object name → weight, or a Map. */
export type Nodes =
  | ReadonlyArray<string | readonly [string, number] | { name: string; weight?: number }>
  | Readonly<Record<string, number>>
  | ReadonlyMap<string, number>;

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
  readonly profile: ProfileName;
  readonly bits: 32 | 64;
  readonly size: number;
  readonly pointCount: number;
  /** Node names in index order (a copy). */
  readonly names: string[];
  /** The owner of `key`; null on an empty ring. */
  get(key: Key): string | null;
  /** Up to n distinct nodes walking clockwise: the owner, then the replicas. */
  getN(key: Key, n: number): string[];
  /** The owner of each key, crossing into wasm once. */
  getMany(keys: Iterable<Key>): (string | null)[];
  /** The owner index (into `names`) of each key; -1 on an empty ring. */
  getManyIndexes(keys: Iterable<Key>): Int32Array;
  hashKey(key: Key): bigint;
  has(name: string): boolean;
  add(name: string, weight?: number): this;
  remove(name: string): this;
  setWeight(name: string, weight: number): this;
  nodes(): RingNode[];
  shares(): Record<string, number>;
  points(): RingPoints;
  arcs(): RingArcs;
  diff(other: Ring): RingDiff;
  clone(): Ring;
  /** Frees the wasm memory now; a FinalizationRegistry frees it otherwise. Later calls throw FREED. */
  free(): void;
}

export function diff(oldRing: Ring, newRing: Ring): RingDiff;
export const PROFILES: readonly ProfileName[];

/** `crc16_xmodem(hashTag(key)) & 16383`, exactly as Redis Cluster. */
export function keySlot(key: Key): number;
/** The slot of every key, crossing into wasm once. */
export function keySlots(keys: Iterable<Key>): Uint16Array;
/** The hashed part of a key: between the first `{` and the next `}` if non-empty, else the key. */
export function hashTag(key: string): string;
export function hashTag(key: Uint8Array): Uint8Array;
export const SLOT_COUNT: 16384;

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

export class SlotMap {
  constructor();
  addMaster(address: Address, options?: { id?: string }): number;
  addReplica(master: number, address: Address, options?: { id?: string }): number;
  setHealth(node: number, health: string): this;
  assign(start: number, end: number, node: number): this;
  unassign(start: number, end: number): this;
  slotOwner(slot: number): number | null;
  nodeForSlot(slot: number): ClusterNode | null;
  nodeForKey(key: Key): ClusterNode | null;
  lookup<K extends Key>(key: K): { key: K; tag: K; slot: number; node: ClusterNode | null };
  /** Owner index per key; 0xFFFFFFFF for an unassigned slot. */
  ownersOfKeys(keys: Iterable<Key>): Uint32Array;
  /** Owner index of all 16384 slots; 0xFFFF for unassigned. */
  owners(): Uint16Array;
  slotCounts(): Uint32Array;
  ranges(): SlotRange[];
  readonly unassignedCount: number;
  readonly isComplete: boolean;
  readonly size: number;
  node(index: number): ClusterNode;
  nodes(): ClusterNode[];
  findId(id: string): number | null;
  applyRedirect(message: string, currentHost?: string): Redirect;
  /** weights: [[nodeIndex, weight], ...], a Map, or {nodeIdOrNameOrAddress: weight}; weight 0 drains. */
  plan(weights: ReadonlyArray<readonly [number | string, number]> | ReadonlyMap<number | string, number> | Readonly<Record<string, number>>): ReshardPlan;
  applyPlan(plan: ReshardPlan): this;
  clone(): SlotMap;
  free(): void;
}

export interface Script {
  name: string;
  text: string;
  sha1: string;
  numKeys: number;
}
export const SCRIPTS: Readonly<Record<'least-used' | 'seed' | 'remove' | 'restore', Script>>;
/** Picks the lowest score (ties: byte-wise smallest member) and increments it: EVALSHA it with 1 key. */
export const LEAST_USED_SCRIPT: string;
export const LEAST_USED_SHA1: string;

/** The least-used pool in memory, answering as the scripts do on Redis. Counts are assignments. */
export class Pool {
  constructor();
  seed(members: Iterable<Key>, options?: { initial?: number; overwrite?: boolean }): number;
  /** The least-used member, count incremented; null when the pool is empty: make no request. */
  pick(): string | null;
  pickBytes(): Uint8Array | null;
  pickMany(n: number): string[];
  pickManyBytes(n: number): Uint8Array[];
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
  Ring: typeof Ring; diff: typeof diff; PROFILES: typeof PROFILES;
  keySlot: typeof keySlot; keySlots: typeof keySlots; hashTag: typeof hashTag; SLOT_COUNT: typeof SLOT_COUNT;
  SlotMap: typeof SlotMap; ReshardPlan: typeof ReshardPlan; Pool: typeof Pool;
  SCRIPTS: typeof SCRIPTS; LEAST_USED_SCRIPT: typeof LEAST_USED_SCRIPT; LEAST_USED_SHA1: typeof LEAST_USED_SHA1;
};
export type Api = typeof api;

/**
 * Browsers: loads the .wasm (next to the module by default, or from `input`); await it
 * once before using anything else. Node: resolves immediately.
 */
export function init(input?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<Api>;
export function initSync(module: BufferSource | WebAssembly.Module): Api;
export default init;
