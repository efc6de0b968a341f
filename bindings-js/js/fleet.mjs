// `keyroute/fleet` (Node and browsers): every engine and fleet profile of keyroute::engine
// (jump, guava-jump, rendezvous, maglev; nginx, haproxy, twemproxy, java-hashcode,
// spymemcached, jedis, envoy-ring, envoy-maglev, go-redis, groupcache, dubbo, redis-rb,
// predis, pymemcache; the ketama family) and proxy configurations read as they are
// (Router.fromConfig), through the fleet's own .wasm.
//
// `createFleetApi(wasm)`: scripts/build.mjs bundles it with the helpers (helpers.mjs)
// into dist/fleet-api.mjs (ESM) and dist/fleet-api.cjs (CommonJS). Every answer is core's;
// this file checks argument types (with the helpers every module shares) and packs
// strings.

import { createHelpers } from './helpers.mjs';

export function createFleetApi(wasm) {
  'use strict';

  const { ERROR_CODES, fail, guard, describe, text, int, num, bool, options, pack, bytes, unpackBytes, normalizeNodes, INTERNAL, dispose, freed } = createHelpers(wasm);

  const MAX_OPTIONS = 64;
  // An object name → value (string, integer or boolean) or a Map, as [name, value, ...] text.
  function textPairs(o, what, value) {
    if (o == null) return [];
    if (typeof o !== 'object' || Array.isArray(o)) fail('BAD_TYPE', `${what} must be an object name → value, not ${describe(o)}`);
    const entries = o instanceof Map ? [...o.entries()] : Object.entries(o);
    if (entries.length > MAX_OPTIONS) fail('TOO_LARGE', `${what}: ${entries.length} given, at most ${MAX_OPTIONS}`);
    const out = [];
    for (const [k, v] of entries) out.push(text(k, `a name of ${what}`), value(k, v));
    return out;
  }
  function optionValue(k, v) {
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number' || typeof v === 'bigint') return String(int(v, `option ${JSON.stringify(k)}`));
    if (typeof v === 'string') return text(v, `option ${JSON.stringify(k)}`);
    return fail('BAD_TYPE', `option ${JSON.stringify(k)} must be a string, integer or boolean, not ${describe(v)}`);
  }

  const ENGINES = Object.freeze(wasm.rawEngines());

  /**
   * Any engine or fleet profile by name (one of ENGINES), over `nodes`, with `options`
   * (an object name → string, integer or boolean: {table_size: 65537}, {version: 2}); or
   * the pool of a proxy configuration (Router.fromConfig).
   */
  class Router {
    #raw;
    #names;
    #config;

    constructor(engine, nodes, options) {
      if (engine === INTERNAL) {
        this.#raw = nodes;
      } else {
        const e = text(engine, 'the engine');
        const [names, weights] = normalizeNodes(nodes, '');
        const [data, ends] = pack(names, 'node names');
        const [od, oe] = pack(textPairs(options, 'options', optionValue), 'options');
        this.#raw = guard(() => new wasm.RawRouter(e, data, ends, Float64Array.from(weights), od, oe));
      }
      this.#names = this.#raw.names();
      const info = this.#raw.configInfo();
      this.#config = info.length ? { format: info[0], key: info[1], addresses: info.slice(2) } : null;
    }

    /**
     * The pool `pool` (an nginx upstream, HAProxy backend or twemproxy pool; omitted: the
     * only one) of the configuration `text`, the format detected. Options: `file` (for
     * messages), `allowDown` (nginx down servers), `resolved` ({host: address count}),
     * `includes` ({name: text} for nginx `include`).
     */
    static fromConfig(config, pool, opts) {
      const t = text(config, 'the configuration');
      const p = pool == null ? '' : text(pool, 'the pool');
      const o = options(opts, ['file', 'allowDown', 'resolved', 'includes'], 'the fromConfig options');
      const file = o.file == null ? '' : text(o.file, 'file');
      const allowDown = o.allowDown == null ? false : bool(o.allowDown, 'allowDown');
      const [rd, re] = pack(textPairs(o.resolved, 'resolved', (k, v) => String(int(v, `resolved[${JSON.stringify(k)}]`))), 'resolved');
      const [id, ie] = pack(textPairs(o.includes, 'includes', (k, v) => text(v, `includes[${JSON.stringify(k)}]`)), 'includes');
      return new Router(INTERNAL, guard(() => wasm.RawRouter.fromConfig(t, p, file, allowDown, rd, re, id, ie)));
    }

    get #h() {
      return this.#raw || freed('Router');
    }
    /** The engine or profile name. */
    get engine() {
      return this.#h.engine();
    }
    /** Node names, in list (or configuration) order. */
    get names() {
      this.#h;
      return this.#names.slice();
    }
    /** Node weights, in the order of names. */
    get weights() {
      return Array.from(this.#h.weights());
    }
    get size() {
      this.#h;
      return this.#names.length;
    }
    /** From a configuration: 'twemproxy', 'nginx' or 'haproxy'; else null. */
    get format() {
      this.#h;
      return this.#config ? this.#config.format : null;
    }
    /** From a configuration: what the proxy hashes (nginx's hash expression, HAProxy's balance mode); else null. */
    get key() {
      this.#h;
      return this.#config ? this.#config.key : null;
    }
    /** From a configuration: each node's address as written; else null. */
    get addresses() {
      this.#h;
      return this.#config ? this.#config.addresses.slice() : null;
    }
    /**
     * Adds `name` (weight 1 by default) last, as the engine's peer does at run time: a new
     * build over the new list for most engines, in place for java-hashcode and redis-rb.
     */
    add(name, weight = 1) {
      const h = this.#h;
      const n = text(name, 'a node name');
      if (typeof weight !== 'number' && typeof weight !== 'bigint') fail('BAD_TYPE', `node ${JSON.stringify(n)} has weight ${describe(weight)}; weights are integers from 1 to 4294967295`);
      const w = num(weight, `node ${JSON.stringify(n)} has weight`, 'BAD_WEIGHT');
      guard(() => h.add(n, w));
      this.#names = h.names();
      return this;
    }
    /** Removes the node named `name` (its own name), as the engine's peer does at run time. */
    remove(name) {
      const h = this.#h;
      guard(() => h.remove(text(name, 'a node name')));
      this.#names = h.names();
      return this;
    }
    /** The owner of `key` (a string or Uint8Array), or null without nodes. */
    get(key) {
      const h = this.#h;
      const i = typeof key === 'string' && key.length < 1 << 16 ? h.getStr(text(key, 'the key')) : h.getBytes(bytes(key));
      return i < 0 ? null : this.#names[i];
    }
    /** The owner's index into `names`, -1 without nodes. */
    getIndex(key) {
      return this.#h.getBytes(bytes(key));
    }
    /** Up to `n` distinct candidates, the owner first. */
    getN(key, n) {
      const h = this.#h;
      const idx = guard(() => h.getNBytes(bytes(key), int(n, 'getN: n')));
      return Array.from(idx, (i) => this.#names[i]);
    }
    /** The owner of each key (null without nodes), in one call into wasm. */
    getMany(keys) {
      const h = this.#h;
      const [data, ends] = pack(keys, 'keys');
      const idx = guard(() => h.getManyPacked(data, ends));
      return Array.from(idx, (i) => (i < 0 ? null : this.#names[i]));
    }
    [INTERNAL]() {
      return this.#h;
    }
    /** Frees the wasm memory now (a freed Router refuses every call with INVALID_HANDLE). */
    free() {
      if (this.#raw) this.#raw.free();
      this.#raw = null;
    }
  }
  if (dispose) Router.prototype[dispose] = Router.prototype.free;

  /**
   * Consistent hashing with bounded loads over a Router: no node above ceil(c·m/n) of the
   * m assigned keys (`c` at least 1). The state lives in this object.
   */
  class Bounded {
    #raw;
    #names;

    constructor(router, c) {
      if (!(router instanceof Router)) fail('BAD_TYPE', `router must be a Router of keyroute/fleet, not ${describe(router)}`);
      if (typeof c !== 'number') fail('BAD_TYPE', `c must be a number, not ${describe(c)}`);
      this.#names = router.names;
      this.#raw = guard(() => new wasm.RawBounded(router[INTERNAL](), c));
    }
    get #h() {
      return this.#raw || freed('Bounded');
    }
    /** Assigns `key`: the first of its candidates under the cap (null without nodes). */
    assign(key) {
      const i = this.#h.assign(bytes(key));
      return i < 0 ? null : this.#names[i];
    }
    /** Frees `key`: null when it was not assigned, else the keys moved to keep the cap, as {key: Uint8Array, from, to}. */
    release(key) {
      const h = this.#h;
      const n = h.release(bytes(key));
      if (n < 0) return null;
      const batch = h.movedKeys();
      let keys;
      try {
        keys = unpackBytes(batch);
      } finally {
        batch.free();
      }
      const from = h.movedFrom();
      const to = h.movedTo();
      return keys.map((key, i) => ({ key, from: this.#names[from[i]], to: this.#names[to[i]] }));
    }
    /** The node holding `key`, or null when it is not assigned. */
    ownerOf(key) {
      const i = this.#h.ownerOf(bytes(key));
      return i < 0 ? null : this.#names[i];
    }
    /** Each node's load, as {name: load}. */
    get loads() {
      const l = this.#h.loads();
      return Object.fromEntries(this.#names.map((n, i) => [n, l[i]]));
    }
    get cap() {
      return this.#h.cap();
    }
    get assigned() {
      return this.#h.assigned();
    }
    free() {
      if (this.#raw) this.#raw.free();
      this.#raw = null;
    }
  }
  if (dispose) Bounded.prototype[dispose] = Bounded.prototype.free;

  return {
    Bounded,
    Router,
    ENGINES,
    ERROR_CODES,
  };
}
