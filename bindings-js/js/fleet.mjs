// `keyroute/fleet` (Node and browsers): every engine and fleet profile of keyroute::engine
// (jump, guava-jump, rendezvous, maglev; nginx, haproxy, twemproxy, java-hashcode,
// spymemcached, jedis, envoy-ring, envoy-maglev, go-redis, groupcache, dubbo, redis-rb,
// predis, pymemcache; the ketama family) and proxy configurations read as they are
// (Router.fromConfig), through the fleet's own .wasm.
//
// `createFleetApi(wasm)` is plain ES2020 with no import/export other than the one below:
// scripts/build.mjs copies it to dist/fleet-api.mjs (ESM) and dist/fleet-api.cjs
// (CommonJS) verbatim, except for that line. Every answer is core's; this file checks
// argument types (the same codes as the main module) and packs strings.

export function createFleetApi(wasm) {
  'use strict';

  const encoder = new TextEncoder();

  const ERROR_CODES = {};
  {
    const c = wasm.rawErrorCodes();
    for (let i = 0; i < c.length; i += 2) ERROR_CODES[c[i]] = Number(c[i + 1]);
    Object.freeze(ERROR_CODES);
  }

  function fail(code, message) {
    const e = code === 'BAD_TYPE' ? new TypeError(message) : new Error(message);
    e.code = code;
    throw e;
  }
  function guard(f) {
    try {
      return f();
    } catch (e) {
      if (e instanceof Error && typeof e.code === 'string' && e.code in ERROR_CODES) throw e;
      const large = e instanceof RangeError;
      const out = new Error(large ? `the answer is too large for this JavaScript engine (${e.message}); ask for less at a time` : `keyroute failed unexpectedly (${e instanceof Error ? e.message : String(e)}); this is a bug, please report it`);
      out.code = large ? 'TOO_LARGE' : 'INTERNAL';
      out.cause = e;
      throw out;
    }
  }

  function describe(x) {
    if (typeof x === 'string') return `the string ${JSON.stringify(x.length > 40 ? `${x.slice(0, 40)}…` : x)}`;
    if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') return `${typeof x} ${String(x)}`;
    if (x === null) return 'null';
    if (Array.isArray(x)) return 'an array';
    if (ArrayBuffer.isView(x)) return `a ${x.constructor.name}`;
    return typeof x === 'object' ? `an object (${Object.prototype.toString.call(x).slice(8, -1)})` : typeof x;
  }
  const wellFormed = typeof String.prototype.isWellFormed === 'function' ? (s) => s.isWellFormed() : (s) => !/\p{Surrogate}/u.test(s);
  function text(s, what) {
    if (typeof s !== 'string') fail('BAD_TYPE', `${what} must be a string, not ${describe(s)}`);
    if (!wellFormed(s)) fail('BAD_UTF8', `${what} ${describe(s)} holds a lone surrogate (half of a UTF-16 pair), which UTF-8 cannot encode; keyroute refuses it rather than hash U+FFFD`);
    return s;
  }
  const I128 = 2 ** 127;
  function int(x, what, notInteger = 'BAD_TYPE') {
    if (typeof x === 'bigint') {
      if (BigInt.asIntN(128, x) !== x) fail('OUT_OF_RANGE', `${what} ${x} is beyond the range of 128-bit integers`);
      return x;
    }
    if (typeof x !== 'number') fail('BAD_TYPE', `${what} must be an integer (a number), not ${describe(x)}`);
    if (Number.isNaN(x)) fail(notInteger, `${what} is NaN; it must be an integer`);
    if (!(Math.abs(x) < I128)) fail('OUT_OF_RANGE', `${what} ${x} is beyond the range of 128-bit integers`);
    if (!Number.isInteger(x)) fail(notInteger, `${what} ${x} is not an integer`);
    return BigInt(x);
  }
  function num(x, what, notInteger) {
    const b = int(x, what, notInteger);
    const n = Number(b);
    if (BigInt(n) !== b) fail('OUT_OF_RANGE', `${what} ${b} has no exact JavaScript number; keyroute's limits are far below it`);
    return n;
  }
  const KEY_BYTES = 2 ** 29;
  const BATCH = wasm.rawMaxBatch ? wasm.rawMaxBatch() : 2 ** 24;
  function bytes(key, what = 'a key') {
    let b;
    if (typeof key === 'string') {
      if (key.length > KEY_BYTES) fail('TOO_LARGE', `${what} of ${key.length} characters is above the limit of ${KEY_BYTES} bytes`);
      b = encoder.encode(text(key, what));
    } else if (key instanceof Uint8Array) b = key;
    else if (ArrayBuffer.isView(key)) b = new Uint8Array(key.buffer, key.byteOffset, key.byteLength);
    else if (key instanceof ArrayBuffer) b = new Uint8Array(key);
    else fail('BAD_TYPE', `${what} must be a string or a Uint8Array, not ${describe(key)}`);
    if (b.length > KEY_BYTES) fail('TOO_LARGE', `${what} of ${b.length} bytes is above the limit of ${KEY_BYTES} bytes (512 MiB, the largest string Redis holds)`);
    if (b.length > 1 << 24) wasm.rawRoom(b.length);
    return b;
  }
  function list(x, what) {
    if (typeof x === 'string' || x instanceof String) fail('BAD_TYPE', `${what} must be a list (an array or iterable), not ${describe(String(x))}; a string is one value: wrap it in [ ]`);
    if (Array.isArray(x)) {
      if (x.length > BATCH) fail('TOO_LARGE', `${what}: ${x.length} items in one call, above the limit of ${BATCH}; split the batch`);
      return x;
    }
    if (x == null || typeof x !== 'object' || typeof x[Symbol.iterator] !== 'function' || ArrayBuffer.isView(x) || x instanceof ArrayBuffer) {
      fail('BAD_TYPE', `${what} must be a list (an array or iterable), not ${describe(x)}`);
    }
    const out = [];
    for (const item of x) {
      if (out.length === BATCH) fail('TOO_LARGE', `${what}: more than ${BATCH} items in one call; split the batch`);
      out.push(item);
    }
    return out;
  }
  // Packs byte strings into one buffer + end offsets (grows as items arrive).
  function pack(items, what) {
    items = list(items, what);
    const parts = new Array(items.length);
    const ends = new Uint32Array(items.length);
    let total = 0;
    for (let i = 0; i < items.length; i++) {
      parts[i] = bytes(items[i], `${what}[${i}]`);
      total += parts[i].length;
      if (total > 2 ** 30) fail('TOO_LARGE', `the ${what} of one call hold more than ${2 ** 30} bytes (1 GiB); split the batch`);
      ends[i] = total;
    }
    if (total > 1 << 24) wasm.rawRoom(total + ends.length * 8);
    const data = new Uint8Array(total);
    let off = 0;
    for (const p of parts) {
      data.set(p, off);
      off += p.length;
    }
    return [data, ends];
  }

  // nodes: ["a", "b"], [["a", 2], ...], [{name, weight}], {a: 1, b: 2} or a Map.
  function normalizeNodes(nodes) {
    const names = [];
    const weights = [];
    let entries;
    if (nodes instanceof Map) entries = list(nodes.entries(), 'nodes');
    else if (typeof nodes === 'string' || nodes instanceof String) {
      fail('BAD_TYPE', `nodes must be a list of names, [name, weight] pairs or {name, weight} objects, or an object name → weight, not ${describe(String(nodes))}`);
    } else if (nodes != null && typeof nodes === 'object' && typeof nodes[Symbol.iterator] === 'function') entries = list(nodes, 'nodes');
    else if (nodes != null && typeof nodes === 'object') entries = list(Object.entries(nodes), 'nodes');
    else fail('BAD_TYPE', `nodes must be a list of names or an object name → weight, not ${describe(nodes)}`);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      let name;
      let weight = 1;
      if (typeof e === 'string') name = e;
      else if (Array.isArray(e)) [name, weight = 1] = e;
      else if (e && typeof e === 'object' && !ArrayBuffer.isView(e)) ({ name, weight = 1 } = e);
      else fail('BAD_TYPE', `nodes[${i}] must be a name, [name, weight] or {name, weight}, not ${describe(e)}`);
      names.push(text(name, `the name of nodes[${i}]`));
      if (typeof weight !== 'number' && typeof weight !== 'bigint') fail('BAD_TYPE', `node ${JSON.stringify(name)} has weight ${describe(weight)}; weights are integers from 1 to 4294967295`);
      weights.push(num(weight, `node ${JSON.stringify(name)} has weight`, 'BAD_WEIGHT'));
    }
    return [names, weights];
  }

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
  const INTERNAL = Symbol('keyroute.fleet.internal');
  const dispose = typeof Symbol.dispose === 'symbol' ? Symbol.dispose : null;

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
        const [names, weights] = normalizeNodes(nodes);
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
    static fromConfig(config, pool, options = {}) {
      const t = text(config, 'the configuration');
      const p = pool == null ? '' : text(pool, 'the pool');
      if (options == null || typeof options !== 'object') fail('BAD_TYPE', `fromConfig options must be an object, not ${describe(options)}`);
      for (const k of Object.keys(options)) {
        if (!['file', 'allowDown', 'resolved', 'includes'].includes(k)) fail('BAD_OPTION', `unknown fromConfig option ${JSON.stringify(k)}; the options are file, allowDown, resolved, includes`);
      }
      const file = options.file == null ? '' : text(options.file, 'file');
      const allowDown = options.allowDown == null ? false : options.allowDown;
      if (typeof allowDown !== 'boolean') fail('BAD_TYPE', `allowDown must be true or false, not ${describe(allowDown)}`);
      const [rd, re] = pack(textPairs(options.resolved, 'resolved', (k, v) => String(int(v, `resolved[${JSON.stringify(k)}]`))), 'resolved');
      const [id, ie] = pack(textPairs(options.includes, 'includes', (k, v) => text(v, `includes[${JSON.stringify(k)}]`)), 'includes');
      return new Router(INTERNAL, guard(() => wasm.RawRouter.fromConfig(t, p, file, allowDown, rd, re, id, ie)));
    }

    get #h() {
      if (!this.#raw) fail('INVALID_HANDLE', 'this Router was freed (free() or a using block); make a new one');
      return this.#raw;
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
      if (!this.#raw) fail('INVALID_HANDLE', 'this Bounded was freed; make a new one');
      return this.#raw;
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
      const data = batch.data;
      const ends = batch.ends;
      batch.free();
      const from = h.movedFrom();
      const to = h.movedTo();
      const out = [];
      let start = 0;
      for (let i = 0; i < n; i++) {
        out.push({ key: data.slice(start, ends[i]), from: this.#names[from[i]], to: this.#names[to[i]] });
        start = ends[i];
      }
      return out;
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
