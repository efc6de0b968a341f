// Types of `keyroute/fleet` (Node and browsers): every engine and fleet profile
// (keyroute::engine) and proxy configurations read as they are (keyroute::config), through
// the fleet's own .wasm. In browsers, `await init()` before anything else.
//
// Every error thrown is an `Error` (TypeError for BAD_TYPE) whose `code` is one of
// ERROR_CODES: BAD_CONFIG, UNSUPPORTED_CONFIG (the message names the file, line and
// reason), UNKNOWN_PROFILE, BAD_OPTION, the node errors, and the entrance codes.

import type { ErrorCode } from './index.js';
export type { ErrorCode, KeyrouteError } from './index.js';

// BEGIN GENERATED: engine and profile names from core's registry (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
/** Every engine, fleet profile and ring profile (`ENGINES`), as `Router.engine` names it. */
export type EngineName =
  | 'jump' | 'guava-jump' | 'rendezvous' | 'maglev' | 'nginx' | 'nginx-hash' | 'haproxy'
  | 'haproxy-map' | 'twemproxy' | 'java-hashcode' | 'spymemcached' | 'spymemcached-weighted'
  | 'jedis' | 'envoy-ring' | 'envoy-maglev' | 'go-redis' | 'groupcache' | 'dubbo' | 'redis-rb'
  | 'predis' | 'predis-ketama' | 'pymemcache' | 'native' | 'libketama' | 'libmemcached'
  | 'uhashring' | 'node-hashring' | 'hash_ring';
// END GENERATED

/** A key: a string (hashed as UTF-8) or bytes. */
export type Key = string | Uint8Array;

/** Nodes: names, [name, weight] pairs, {name, weight} objects, an object name → weight, or a Map. */
export type Nodes =
  | Iterable<string | readonly [string, number | bigint] | { name: string; weight?: number | bigint }>
  | Record<string, number | bigint>
  | Map<string, number | bigint>;

/** Engine options: name → string, integer or boolean ({ table_size: 65537 }, { version: 2 }). */
export type EngineOptions = Record<string, string | number | bigint | boolean> | Map<string, string | number | bigint | boolean>;

export interface ConfigOptions {
  /** The file's name, for messages. */
  file?: string;
  /** Accept nginx `down` servers (`hash … consistent` keeps their points). */
  allowDown?: boolean;
  /** How many addresses a hostname resolves to (nginx plain `hash`). */
  resolved?: Record<string, number | bigint>;
  /** nginx `include` name → its text. */
  includes?: Record<string, string>;
}

/** Any engine or fleet profile by name, or the pool of a proxy configuration. */
export class Router {
  /** `engine`: one of ENGINES or an alias (`_` and `-` are interchangeable, case is ignored). */
  constructor(engine: EngineName | string, nodes: Nodes, options?: EngineOptions);
  /** The pool (nginx upstream, HAProxy backend, twemproxy pool; omitted: the only one) of a configuration. */
  static fromConfig(config: string, pool?: string | null, options?: ConfigOptions): Router;
  readonly engine: EngineName;
  readonly names: string[];
  readonly weights: number[];
  readonly size: number;
  /** From a configuration: 'twemproxy' | 'nginx' | 'haproxy'; else null. */
  readonly format: 'twemproxy' | 'nginx' | 'haproxy' | null;
  /** From a configuration: what the proxy hashes; else null. */
  readonly key: string | null;
  /** From a configuration: each node's address as written; else null. */
  readonly addresses: string[] | null;
  get(key: Key): string | null;
  getIndex(key: Key): number;
  getN(key: Key, n: number | bigint): string[];
  getMany(keys: Iterable<Key>): (string | null)[];
  /** Adds a node (weight 1 by default) last, as the engine's peer does at run time: a new build over the new list for most engines, in place for java-hashcode and redis-rb. */
  add(name: string, weight?: number | bigint): this;
  /** Removes the node named `name` (its own name), as the engine's peer does at run time. */
  remove(name: string): this;
  free(): void;
  [Symbol.dispose](): void;
}

/** Consistent hashing with bounded loads over a Router: no node above ceil(c·m/n) of the m assigned keys. */
export class Bounded {
  constructor(router: Router, c: number);
  assign(key: Key): string | null;
  release(key: Key): { key: Uint8Array; from: string; to: string }[] | null;
  ownerOf(key: Key): string | null;
  readonly loads: Record<string, number>;
  readonly cap: number;
  readonly assigned: number;
  free(): void;
  [Symbol.dispose](): void;
}

/** Every engine and profile name. */
export const ENGINES: readonly EngineName[];
export const ERROR_CODES: Readonly<Record<ErrorCode, number>>;
/** Loads the fleet .wasm (browsers); resolves at once in Node. */
export function init(input?: unknown): Promise<unknown>;
export function initSync(module?: unknown): unknown;
export default init;
