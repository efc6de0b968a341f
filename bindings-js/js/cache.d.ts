// Types of `keyroute/cache` (Node only): the smart cache on Redis through a node-redis
// client (npm `redis` 4+, standalone or Cluster), and core's parts of it (key names,
// session ids, checks, script calls, reply decoders, XFetch, the poll schedule).
//
// Every error thrown is an `Error` (TypeError for BAD_TYPE) whose `code` is one of
// ERROR_CODES.

import type { ErrorCode, KeyrouteError } from './index.js';
export type { ErrorCode, KeyrouteError } from './index.js';

/** A name (client id, kind, device id, version) or a value: a string (UTF-8) or bytes. */
export type Bytes = string | Uint8Array;

/**
 * What the cache needs of a node-redis client: `createClient()` (4+) or `createCluster()`,
 * connected. Commands are sent with `sendCommand`.
 */
export type RedisLike = { sendCommand(...args: any[]): Promise<unknown> } & object;

/** BACKEND_ERROR: the loader failed here or, cached for the negative TTL, in another instance. */
export interface BackendError extends KeyrouteError {
  code: 'BACKEND_ERROR';
  /** The loader's error `code` (a non-empty string), else its class name, else BACKEND_ERROR. */
  backendCode: string;
  backendMessage: string;
  /** True when another caller's failure was served from the cache. */
  cached: boolean;
  /** The loader's own error (in the caller whose loader failed). */
  cause?: unknown;
}

/** VERSION_MISMATCH from Sessions.touch. */
export interface VersionMismatchError extends KeyrouteError {
  code: 'VERSION_MISMATCH';
  storedVersion: string;
}

export interface SmartCacheOptions {
  /** How long a loader holds a key before someone may take over; renewed every lease/3. Default 2000. */
  leaseMs?: number | bigint;
  /** How long a value is fresh. Default 60000. */
  softTtlMs?: number | bigint;
  /** How long a value is kept (served stale between soft and hard while one caller refreshes). Default 600000. */
  hardTtlMs?: number | bigint;
  /** How long a backend error is cached (0: not at all). Default 1000. */
  negTtlMs?: number | bigint;
  /** Serve a stale value while one caller refreshes it. Default true. */
  serveStale?: boolean;
  /** Serve warm hits with one plain HMGET decided on this host's clock (a host δ behind Redis serves up to δ past the soft TTL, never past the hard TTL); false asks sc-get every time. Default true. */
  fastHits?: boolean;
  /** XFetch β (0: off). Default 1. */
  xfetchBeta?: number;
  /** The largest value a loader may return. Default 1 MiB. */
  maxValueBytes?: number | bigint;
  /** The 16-byte key of the client-id hash (the same on every instance). Default core's. */
  tokenKey?: Bytes;
  /** The longest wait for one Redis reply outside a call's deadline (fills, heartbeats). Default 2000. */
  ioTimeoutMs?: number | bigint;
  /** A connected client for SUBSCRIBE (standalone); default: a duplicate() of the client. */
  subscriber?: RedisLike;
}

export interface CacheStats {
  hits: number;
  refreshes: number;
  leases: number;
  waits: number;
  takeovers: number;
  fencedFills: number;
  backendCalls: number;
  backendErrors: number;
  cachedErrors: number;
  coalesced: number;
}

export interface WarmReport {
  /** The client the device names; null: unknown device, nothing loaded. */
  client: string | null;
  granted: string[];
  skipped: string[];
  failed: [string, KeyrouteError][];
}

/** A loader: the value (a Buffer/Uint8Array or a string, UTF-8) or a Promise of it. */
export type Loader = () => Bytes | Promise<Bytes>;

export class SmartCache {
  constructor(client: RedisLike, options?: SmartCacheOptions);
  /** Loads the scripts and opens the subscriber connection (optional; else on demand). */
  ready(): Promise<this>;
  /** Closes the subscriber connection the cache opened (not your client). */
  close(): Promise<void>;
  readonly config: {
    leaseMs: number; softTtlMs: number; hardTtlMs: number; negTtlMs: number; tombstoneMs: number;
    serveStale: boolean; fastHits: boolean; xfetchBeta: number; maxValueBytes: number; ioTimeoutMs: number; cluster: boolean;
  };
  stats(): CacheStats;
  /** The value: from Redis, or from `loader` called once across every instance. */
  getOrLoad(client: Bytes, kind: Bytes, loader: Loader, options?: { timeoutMs?: number | bigint }): Promise<Buffer>;
  /** Drops a value and fences a load in flight; whether it was there. */
  invalidate(client: Bytes, kind: Bytes): Promise<boolean>;
  /**
   * Stores `value` directly (no loader): bumps the entry's fence in the same call, so a
   * load in flight for the key is discarded and its callers get `value`. Fresh for
   * `ttlMs` and kept as long (default: the soft and hard TTLs).
   */
  put(client: Bytes, kind: Bytes, value: Bytes, options?: { ttlMs?: number | bigint }): Promise<void>;
  warm(device: Bytes, kinds: string[], loader: (client: string, kind: string) => Bytes | Promise<Bytes>): Promise<WarmReport>;
  warmClient(client: string, kinds: string[], loader: (client: string, kind: string) => Bytes | Promise<Bytes>): Promise<WarmReport>;
}

export interface Session {
  id: string;
  client: string;
  data: Buffer;
  version: string;
  /** Ms since the Unix epoch, Redis time. */
  expiresAt: number;
}

export class Sessions {
  constructor(client: RedisLike, options?: { ttlMs?: number | bigint; maxAgeMs?: number | bigint | null; maxDataBytes?: number | bigint; tokenKey?: Bytes; ioTimeoutMs?: number | bigint });
  /** A new session: its id, the session's secret. */
  create(client: Bytes, version: Bytes, data: Bytes): Promise<string>;
  /** Reads and slides a session; SESSION_EXPIRED, VERSION_MISMATCH (with `version`). */
  touch(sid: Bytes, options?: { version?: Bytes | null }): Promise<Session>;
  destroy(sid: Bytes): Promise<boolean>;
  list(client: Bytes): Promise<[string, number][]>;
}

export class Devices {
  constructor(client: RedisLike, options?: { ioTimeoutMs?: number | bigint });
  bind(device: Bytes, client: Bytes, ttlMs: number | bigint): Promise<void>;
  clientOf(device: Bytes): Promise<string | null>;
}

/** Core's PollSchedule: 10 ms doubling to 200 ms, never past the lease or the deadline. */
export class PollSchedule {
  constructor();
  nextWait(leaseRemainingMs: number, deadlineRemainingMs: number): number;
  reset(): void;
  free(): void;
}

export interface KeyOptions { tokenKey?: Bytes }
export function clientToken(clientId: Bytes, options?: KeyOptions): string;
export function clientKeys(clientId: Bytes, options?: KeyOptions): { token: string; tag: string; sessionIndex: string; channel: string };
export function entryKey(clientId: Bytes, kind: string, options?: KeyOptions): string;
export function entryKey(clientId: Bytes, kind: Uint8Array, options?: KeyOptions): Buffer;
export function deviceKey(device: string): string;
export function deviceKey(device: Uint8Array): Buffer;
export function newSessionId(clientId: Bytes, options?: KeyOptions & { random?: Uint8Array }): string;
export function parseSessionId(sid: Bytes): { id: string; token: string; sessionKey: string; indexKey: string };

export function checkClientId(id: Bytes): void;
export function checkKind(kind: Bytes): void;
export function checkDeviceId(device: Bytes): void;
export function checkVersion(version: Bytes): void;
export function checkValueLen(length: number | bigint, max: number | bigint): void;
export function checkedMaxValueLen(max: number | bigint): number;
export function checkWarmCount(count: number | bigint): void;
export function checkedMs(what: string, value: number | bigint, min?: 0 | 1): number;
export function loadError(code: string, message: string): { code: string; message: string };

/** A script call: send it as `EVALSHA sha1 keys.length ...keys ...args` (commandOf). */
export interface CacheCall {
  script: CacheScriptName;
  sha1: string;
  keys: Buffer[];
  args: Buffer[];
}
export type CacheScriptName =
  | 'sc-get' | 'sc-fill' | 'sc-extend' | 'sc-abandon' | 'sc-invalidate' | 'warm-begin'
  | 'sess-create' | 'sess-touch' | 'sess-destroy' | 'sess-list' | 'device-bind'
  | 'sc-read' | 'sc-put' | 'sess-update' | 'sess-guard';
export type Notify = 'PUBLISH' | 'SPUBLISH' | '';
type Ms = number | bigint;
export const cacheCalls: {
  get(entry: Bytes, o: { leaseMs: Ms; owner?: Bytes; xfetchE?: number; allowStale?: boolean; nowMs?: Ms }): CacheCall;
  fill(entry: Bytes, o: { fence: Ms; value: Bytes; softTtlMs: Ms; hardTtlMs: Ms; loadMs?: Ms; notify?: Notify; nowMs?: Ms }): CacheCall;
  extend(entry: Bytes, o: { fence: Ms; leaseMs: Ms; nowMs?: Ms }): CacheCall;
  abandon(entry: Bytes, o: { fence: Ms; code: Bytes; message?: Bytes; negTtlMs: Ms; notify?: Notify; nowMs?: Ms }): CacheCall;
  invalidate(entry: Bytes, o: { tombstoneMs: Ms; notify?: Notify; nowMs?: Ms }): CacheCall;
  put(entry: Bytes, o: { value: Bytes; softTtlMs: Ms; hardTtlMs: Ms; notify?: Notify; nowMs?: Ms }): CacheCall;
  warmBegin(entries: Bytes[], o: { leaseMs: Ms; owner?: Bytes; nowMs?: Ms }): CacheCall;
  sessCreate(sid: Bytes, o: { client: Bytes; version?: Bytes; ttlMs: Ms; maxAgeMs?: Ms; data?: Bytes; nowMs?: Ms }): CacheCall;
  sessTouch(sid: Bytes, o?: { version?: Bytes | null; nowMs?: Ms }): CacheCall;
  sessDestroy(sid: Bytes, o?: { nowMs?: Ms }): CacheCall;
  sessList(clientId: Bytes, o?: KeyOptions & { nowMs?: Ms }): CacheCall;
  deviceBind(device: Bytes, o: { client: Bytes; ttlMs: Ms }): CacheCall;
};
export function commandOf(call: CacheCall, verb?: 'EVALSHA' | 'EVAL'): (string | Buffer)[];

export type GetReply =
  | { kind: 'hit' | 'stale'; value: Buffer; version: number }
  | { kind: 'refresh'; value: Buffer; version: number; fence: number; takeover: boolean }
  | { kind: 'lease'; fence: number; takeover: boolean }
  | { kind: 'wait'; remainingMs: number; fence: number }
  | { kind: 'error'; code: string; message: string; remainingMs: number };
export type FillReply = { kind: 'stored' | 'duplicate'; version: number } | { kind: 'fenced'; current: number };
export type CreateReply = { kind: 'created'; expiresAt: number } | { kind: 'taken' };
export type TouchReply =
  | { kind: 'live'; client: Buffer; data: Buffer; version: Buffer; expiresAt: number }
  | { kind: 'expired' }
  | { kind: 'versionMismatch'; stored: Buffer };
export function decodeReply(script: 'sc-get', reply: unknown): GetReply;
export function decodeReply(script: 'sc-fill', reply: unknown): FillReply;
export function decodeReply(script: 'sess-create', reply: unknown): CreateReply;
export function decodeReply(script: 'sess-touch', reply: unknown): TouchReply;
export function decodeReply(script: 'warm-begin', reply: unknown): (number | null)[];
export function decodeReply(script: 'sess-list', reply: unknown): [string, number][];
export function decodeReply(script: 'sc-put', reply: unknown): { version: number; fence: number };
export function decodeReply(script: 'sc-extend' | 'sc-abandon' | 'sc-invalidate' | 'sess-destroy' | 'device-bind', reply: unknown): boolean;

export function shouldRefresh(nowMs: number, softExpiryMs: number, deltaMs: number, e: number): boolean;
export function xfetchArg(e: number): string;

// BEGIN GENERATED: the smart cache's limits from core (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
/** Core's limits of the smart cache (`keyroute::cache`): bytes, counts and ms. */
export const CACHE_LIMITS: Readonly<{
  /** core's `MAX_CLIENT_ID_LEN` */
  maxClientIdBytes: 512;
  /** core's `MAX_KIND_LEN` */
  maxKindBytes: 128;
  /** core's `MAX_DEVICE_ID_LEN` */
  maxDeviceIdBytes: 256;
  /** core's `MAX_VERSION_LEN` */
  maxVersionBytes: 128;
  /** core's `MAX_WARM_KINDS` */
  maxWarmKinds: 64;
  /** core's `DEFAULT_MAX_VALUE_LEN` */
  defaultMaxValueBytes: 1048576;
  /** core's `MAX_VALUE_LEN_LIMIT` */
  maxValueBytesLimit: 536870912;
  /** core's `MAX_OWNER_LEN` */
  maxOwnerBytes: 256;
  /** core's `MAX_ERROR_CODE_LEN` */
  maxErrorCodeBytes: 64;
  /** core's `MAX_ERROR_MESSAGE_LEN` */
  maxErrorMessageBytes: 1024;
  /** core's `ClientToken::LEN` */
  tokenLength: 26;
  /** core's `SessionId::LEN` */
  sessionIdLength: 53;
  /** core's `MAX_MS` */
  maxMs: 281474976710656;
  /** core's `PollSchedule::FIRST_MS` */
  pollFirstMs: 10;
  /** core's `PollSchedule::MAX_MS` */
  pollMaxMs: 200;
  /** The most times one getOrLoad runs its loader when every fill is fenced (the last fenced value is returned, not stored): core's `MAX_FENCED_LOADS` */
  maxFencedLoads: 3;
}>;
// END GENERATED
/** Core's defaults of SmartCache and Sessions (keyroute::cache::CacheSettings::DEFAULT and SessionSettings::DEFAULT), in ms and bytes. */
export const CACHE_DEFAULTS: Readonly<{
  leaseMs: number; softTtlMs: number; hardTtlMs: number; negTtlMs: number; serveStale: boolean; fastHits: boolean;
  xfetchBeta: number; maxValueBytes: number; ioTimeoutMs: number; timeoutMs: number; sessionTtlMs: number; sessionMaxDataBytes: number;
}>;
export const CACHE_SCRIPTS: Readonly<Record<CacheScriptName, Readonly<{ name: string; text: string; sha1: string; numKeys: number; summary: string }>>>;
export const ERROR_CODES: Readonly<Record<ErrorCode, number>>;
