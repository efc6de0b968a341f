// The public JavaScript API of `keyroute`, written once for every entry point.
//
// `createApi(wasm)` wraps the raw wasm-bindgen exports (Rust: bindings-js/src) in the
// camelCase classes users see. It is plain ES2020 with no import/export other than the
// one below: scripts/build.mjs copies it to dist/api.mjs (ESM) and dist/api.cjs
// (CommonJS) verbatim, except for that line.
//
// Conventions kept here, documented in README.md and index.d.ts:
// * keys are strings (hashed as UTF-8) or Uint8Array (raw bytes);
// * batch calls pack every key into one buffer and cross into wasm once;
// * "no node" is `null`; every error thrown is an `Error` with a string `code`.

export function createApi(wasm) {
  'use strict';

  const encoder = new TextEncoder();
  const decoder = new TextDecoder();

  function fail(code, message, Type = Error) {
    const e = new Type(message);
    e.code = code;
    throw e;
  }

  function bytes(key) {
    if (key instanceof Uint8Array) return key;
    if (typeof key === 'string') return encoder.encode(key);
    if (ArrayBuffer.isView(key)) return new Uint8Array(key.buffer, key.byteOffset, key.byteLength);
    if (key instanceof ArrayBuffer) return new Uint8Array(key);
    return fail('INVALID_ARGUMENT', `a key must be a string or a Uint8Array, not ${typeof key}`, TypeError);
  }

  // One growable scratch buffer for packing batches (the wasm call copies out of it).
  let scratch = new Uint8Array(1 << 16);
  function reserve(n, keep) {
    if (scratch.length >= n) return;
    let size = scratch.length;
    while (size < n) size *= 2;
    const next = new Uint8Array(size);
    if (keep) next.set(scratch.subarray(0, keep));
    scratch = next;
  }

  // Packs keys into one byte buffer + end offsets: one boundary crossing per batch.
  function pack(keys) {
    if (!Array.isArray(keys)) {
      if (keys == null || typeof keys[Symbol.iterator] !== 'function') {
        fail('INVALID_ARGUMENT', 'keys must be an array (or iterable) of strings or Uint8Arrays', TypeError);
      }
      keys = Array.from(keys);
    }
    const n = keys.length;
    const ends = new Uint32Array(n);
    let allStrings = true;
    for (let i = 0; i < n; i++) {
      if (typeof keys[i] !== 'string') {
        allStrings = false;
        break;
      }
    }
    if (allStrings) {
      // Fast path: encode all keys at once; if every char took one byte (ASCII), the
      // string lengths are the byte lengths.
      const joined = keys.join('');
      reserve(joined.length * 3 + 1, 0);
      const { written } = encoder.encodeInto(joined, scratch);
      if (written === joined.length) {
        let off = 0;
        for (let i = 0; i < n; i++) {
          off += keys[i].length;
          ends[i] = off;
        }
        return [scratch.subarray(0, written), ends];
      }
    }
    let off = 0;
    for (let i = 0; i < n; i++) {
      const k = keys[i];
      if (typeof k === 'string') {
        reserve(off + k.length * 3 + 1, off);
        off += encoder.encodeInto(k, scratch.subarray(off)).written;
      } else {
        const b = bytes(k);
        reserve(off + b.length + 1, off);
        scratch.set(b, off);
        off += b.length;
      }
      ends[i] = off;
    }
    return [scratch.subarray(0, off), ends];
  }

  function unpackStrings(batch) {
    const data = batch.data;
    const ends = batch.ends;
    const out = new Array(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      out[i] = decoder.decode(data.subarray(start, ends[i]));
      start = ends[i];
    }
    return out;
  }

  function unpackBytes(batch) {
    const data = batch.data;
    const ends = batch.ends;
    const out = new Array(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      out[i] = data.slice(start, ends[i]);
      start = ends[i];
    }
    return out;
  }

  function intOption(value, name, fallback) {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value)) fail('INVALID_ARGUMENT', `${name} must be an integer, not ${value}`, TypeError);
    return value;
  }

  function weightOf(name, w) {
    if (typeof w === 'bigint') w = Number(w);
    if (typeof w !== 'number') fail('BAD_WEIGHT', `node ${JSON.stringify(name)} has weight ${String(w)}; weights must be integers`, TypeError);
    if (!Number.isInteger(w)) fail('BAD_WEIGHT', `node ${JSON.stringify(name)} has weight ${w}; weights must be integers`);
    return w;
  }

  function nodeName(name) {
    if (typeof name !== 'string') fail('INVALID_ARGUMENT', `node names must be strings, not ${typeof name}`, TypeError);
    return name;
  }

  // nodes: ["a", "b"], [["a", 2], ...], [{name, weight}], {a: 1, b: 2} or a Map.
  function normalizeNodes(nodes) {
    const names = [];
    const weights = [];
    if (nodes == null) return [names, weights];
    let entries;
    if (nodes instanceof Map) entries = Array.from(nodes.entries());
    else if (Array.isArray(nodes) || typeof nodes[Symbol.iterator] === 'function') entries = Array.from(nodes);
    else if (typeof nodes === 'object') entries = Object.entries(nodes);
    else fail('INVALID_ARGUMENT', 'nodes must be an array of names or an object name → weight', TypeError);
    for (const e of entries) {
      if (typeof e === 'string') {
        names.push(e);
        weights.push(1);
      } else if (Array.isArray(e)) {
        names.push(nodeName(e[0]));
        weights.push(weightOf(e[0], e[1] === undefined ? 1 : e[1]));
      } else if (e && typeof e === 'object') {
        names.push(nodeName(e.name));
        weights.push(weightOf(e.name, e.weight === undefined ? 1 : e.weight));
      } else {
        fail('INVALID_ARGUMENT', `a node must be a name, [name, weight] or {name, weight}, not ${String(e)}`, TypeError);
      }
    }
    return [names, weights];
  }

  // After free(): every method of the raw handle throws a FREED error.
  const FREED = Symbol('keyroute.freed');
  function freed(what) {
    return new Proxy({}, {
      get(_, prop) {
        if (prop === FREED) return true;
        return () => fail('FREED', `this ${what} was freed`);
      },
    });
  }
  // Frees a raw wasm-bindgen handle once; returns the stand-in that throws FREED.
  function release(raw, what) {
    if (raw && !raw[FREED]) raw.free();
    return raw && raw[FREED] ? raw : freed(what);
  }

  const dispose = typeof Symbol.dispose === 'symbol' ? Symbol.dispose : null;
  const INTERNAL = Symbol('keyroute.internal');

  // ---------------------------------------------------------------- ring

  // (position + add) / 2**bits for each position of a BigUint64Array, as doubles: the
  // same IEEE operations as `(p as f64 + add) / 2^bits` in Rust (computed here, not in
  // wasm, to keep the .wasm small).
  function fractionsOf(positions, bits, add) {
    const circle = 2 ** bits;
    const out = new Float64Array(positions.length);
    for (let i = 0; i < positions.length; i++) out[i] = (Number(positions[i]) + add) / circle;
    return out;
  }

  const PROFILES = Object.freeze(wasm.rawProfiles());

  class Ring {
    #raw;
    #names;

    constructor(nodes = [], options = {}) {
      if (nodes === INTERNAL) {
        this.#raw = options;
        this.#names = options.names();
        return;
      }
      const o = options || {};
      const profile = o.profile === undefined ? 'native' : o.profile;
      if (typeof profile !== 'string') fail('UNKNOWN_PROFILE', 'profile must be a string', TypeError);
      const vnodes = intOption(o.vnodes, 'vnodes', -1);
      const ppd = intOption(o.pointsPerDigest, 'pointsPerDigest', -1);
      const port = o.defaultPort === null ? -2 : intOption(o.defaultPort, 'defaultPort', -1);
      if (port < -2) fail('BAD_PORT', `defaultPort ${port} is not a port number (0..=65535)`);
      const [names, weights] = normalizeNodes(nodes);
      this.#raw = new wasm.RawRing(profile, vnodes, port, ppd, names, Float64Array.from(weights));
      this.#names = this.#raw.names();
    }

    /** The profile name (`native`, `libketama`, …). */
    get profile() {
      return this.#raw.profile();
    }
    /** 32 for the ketama family, 64 for native. */
    get bits() {
      return this.#raw.bits();
    }
    /** Number of nodes. */
    get size() {
      return this.#names.length;
    }
    /** Number of points on the circle. */
    get pointCount() {
      return this.#raw.pointCount();
    }
    /** Node names, in the order they were added (the indexes used by points()). */
    get names() {
      return this.#names.slice();
    }

    /** The owner of `key`, or null on an empty ring. */
    get(key) {
      const i = typeof key === 'string' ? this.#raw.getStr(key) : this.#raw.getBytes(bytes(key));
      return i < 0 ? null : this.#names[i];
    }

    /** Up to `n` distinct nodes clockwise from the key: the owner, then replicas. */
    getN(key, n) {
      if (!Number.isInteger(n) || n < 0) fail('INVALID_ARGUMENT', `n must be a non-negative integer, not ${n}`, TypeError);
      const idx = this.#raw.getNBytes(bytes(key), n);
      const out = new Array(idx.length);
      for (let i = 0; i < idx.length; i++) out[i] = this.#names[idx[i]];
      return out;
    }

    /** The owner of each key (null on an empty ring), in one call into wasm. */
    getMany(keys) {
      const idx = this.getManyIndexes(keys);
      const out = new Array(idx.length);
      for (let i = 0; i < idx.length; i++) out[i] = idx[i] < 0 ? null : this.#names[idx[i]];
      return out;
    }

    /** The owner index (into `names`) of each key, -1 on an empty ring. */
    getManyIndexes(keys) {
      const [data, ends] = pack(keys);
      return this.#raw.getManyPacked(data, ends);
    }

    /** Where `key` hashes on the circle (a bigint below 2**bits). */
    hashKey(key) {
      return this.#raw.hashKey(bytes(key));
    }

    has(name) {
      return this.#names.includes(name);
    }

    add(name, weight = 1) {
      this.#raw.add(nodeName(name), weightOf(name, weight));
      this.#names = this.#raw.names();
      return this;
    }

    remove(name) {
      this.#raw.remove(nodeName(name));
      this.#names = this.#raw.names();
      return this;
    }

    setWeight(name, weight) {
      this.#raw.setWeight(nodeName(name), weightOf(name, weight));
      return this;
    }

    /** [{name, weight, share}] in index order. */
    nodes() {
      const w = this.#raw.weights();
      const s = this.#raw.shares();
      return this.#names.map((name, i) => ({ name, weight: w[i], share: s[i] }));
    }

    /** The exact fraction of the circle each node owns: {name: share}. */
    shares() {
      const s = this.#raw.shares();
      const out = {};
      this.#names.forEach((name, i) => {
        out[name] = s[i];
      });
      return out;
    }

    /**
     * Every point, clockwise: `positions` (BigUint64Array, exact), `fractions`
     * (Float64Array, position / 2**bits, for drawing), `owners` (Uint32Array of indexes
     * into `names`).
     */
    points() {
      const positions = this.#raw.positions();
      const bits = this.#raw.bits();
      return {
        positions,
        fractions: fractionsOf(positions, bits, 0),
        owners: this.#raw.owners(),
        names: this.#names.slice(),
        bits,
      };
    }

    /** The arcs of the circle (one per distinct point) as parallel typed arrays. */
    arcs() {
      const a = this.#raw.arcs();
      try {
        const starts = a.starts;
        const ends = a.ends;
        const bits = this.#raw.bits();
        return {
          starts,
          ends,
          startFractions: fractionsOf(starts, bits, 0),
          endFractions: fractionsOf(ends, bits, 1),
          owners: a.owners,
          names: this.#names.slice(),
          bits,
        };
      } finally {
        a.free();
      }
    }

    /** What moves from this ring to `other`: see `diff`. */
    diff(other) {
      return diff(this, other);
    }

    /** An independent copy. */
    clone() {
      return new Ring(INTERNAL, this.#raw.clone());
    }

    /** Frees the wasm memory now (a FinalizationRegistry does it eventually otherwise). */
    free() {
      this.#raw = release(this.#raw, 'Ring');
    }

    static [INTERNAL](ring) {
      return ring.#raw;
    }
  }
  if (dispose) Ring.prototype[dispose] = Ring.prototype.free;

  /**
   * The arcs whose owner changes from `oldRing` to `newRing`, the fraction of keys that
   * moves, and the least any ring could move for the same change of shares.
   */
  function diff(oldRing, newRing) {
    if (!(oldRing instanceof Ring) || !(newRing instanceof Ring)) fail('INVALID_ARGUMENT', 'diff takes two Rings', TypeError);
    const d = wasm.rawDiff(Ring[INTERNAL](oldRing), Ring[INTERNAL](newRing));
    try {
      const starts = d.starts;
      const ends = d.ends;
      const from = d.from;
      const to = d.to;
      const bits = d.bits;
      const circle = 2 ** bits;
      const moved = new Array(starts.length);
      for (let i = 0; i < starts.length; i++) {
        moved[i] = {
          start: starts[i],
          end: ends[i],
          startFraction: Number(starts[i]) / circle,
          endFraction: (Number(ends[i]) + 1) / circle,
          from: from[i] === '' ? null : from[i],
          to: to[i] === '' ? null : to[i],
        };
      }
      return { moved, movedFraction: d.movedFraction, idealFraction: d.idealFraction };
    } finally {
      d.free();
    }
  }

  // ---------------------------------------------------------------- slots

  const SLOT_COUNT = 16384;

  function keySlot(key) {
    return typeof key === 'string' ? wasm.rawKeySlotStr(key) : wasm.rawKeySlotBytes(bytes(key));
  }

  function keySlots(keys) {
    const [data, ends] = pack(keys);
    return wasm.rawKeySlotsPacked(data, ends);
  }

  function hashTag(key) {
    const tag = wasm.rawHashTag(bytes(key));
    // Tags are cut at ASCII braces, so a string key's tag is valid UTF-8.
    return typeof key === 'string' ? decoder.decode(tag) : tag;
  }

  function formatAddress(address) {
    if (typeof address === 'string') return address;
    if (address && typeof address === 'object' && typeof address.host === 'string') {
      const h = address.host.includes(':') ? `[${address.host}]` : address.host;
      return `${h}:${address.port}`;
    }
    return fail('BAD_ADDRESS', 'an address is "host:port" or {host, port}', TypeError);
  }

  function slotArg(s) {
    if (!Number.isInteger(s) || s < 0 || s >= SLOT_COUNT) fail('BAD_SLOT', `slot ${s} is outside 0..=16383`);
    return s;
  }

  function nodeArg(n) {
    if (!Number.isInteger(n) || n < 0) fail('SLOT_MAP', `node #${n} is not in this slot map`);
    return n;
  }

  class ReshardPlan {
    #raw;
    constructor(token, raw) {
      if (token !== INTERNAL) fail('INVALID_ARGUMENT', 'plans come from SlotMap.plan()', TypeError);
      this.#raw = raw;
      const m = raw.moves();
      const moves = [];
      for (let i = 0; i < m.length; i += 4) {
        moves.push({
          start: m[i],
          end: m[i + 1],
          from: m[i + 2] === 0xffffffff ? null : m[i + 2],
          to: m[i + 3],
          count: m[i + 1] - m[i] + 1,
        });
      }
      const t = raw.targets();
      const targets = [];
      for (let i = 0; i < t.length; i += 5) {
        targets.push({ node: t[i], weight: t[i + 1], ideal: t[i + 2], before: t[i + 3], after: t[i + 4] });
      }
      /** The moves, in slot order: {start, end, from (null: unassigned), to, count}. */
      this.moves = moves;
      /** Per weighted master: {node, weight, ideal, before, after}. */
      this.targets = targets;
      /** Total slots that change owner. */
      this.slotsMoved = raw.slotsMoved();
    }
    free() {
      this.#raw = release(this.#raw, 'ReshardPlan');
    }
    static [INTERNAL](plan) {
      return plan.#raw;
    }
  }
  if (dispose) ReshardPlan.prototype[dispose] = ReshardPlan.prototype.free;

  class SlotMap {
    #raw;
    constructor(token, raw) {
      this.#raw = token === INTERNAL ? raw : new wasm.RawSlotMap();
    }

    /** Adds a master (no slots yet) at "host:port" or {host, port}; returns its index. */
    addMaster(address, { id = '' } = {}) {
      return this.#raw.addMaster(String(id), formatAddress(address));
    }

    /** Adds a replica of master index `master`; returns its index. */
    addReplica(master, address, { id = '' } = {}) {
      return this.#raw.addReplica(nodeArg(master), String(id), formatAddress(address));
    }

    /** Sets a node's health: 'online', 'loading', 'failed' (anything else: 'unknown'). */
    setHealth(node, health) {
      this.#raw.setHealth(nodeArg(node), String(health));
      return this;
    }

    /** Gives slots start..=end to master `node`. */
    assign(start, end, node) {
      this.#raw.assign(slotArg(start), slotArg(end), nodeArg(node));
      return this;
    }

    /** Makes slots start..=end unowned. */
    unassign(start, end) {
      this.#raw.unassign(slotArg(start), slotArg(end));
      return this;
    }

    /** The index of the master owning `slot`, or null. */
    slotOwner(slot) {
      const i = this.#raw.owner(slotArg(slot));
      return i < 0 ? null : i;
    }

    /** The node serving `slot`, or null. */
    nodeForSlot(slot) {
      const i = this.slotOwner(slot);
      return i === null ? null : this.node(i);
    }

    /** The node serving `key`'s slot, or null. */
    nodeForKey(key) {
      const i = this.#raw.ownerOfKey(bytes(key));
      return i < 0 ? null : this.node(i);
    }

    /** key → {key, tag, slot, node}: the whole route of one key. */
    lookup(key) {
      const slot = keySlot(key);
      return { key, tag: hashTag(key), slot, node: this.nodeForSlot(slot) };
    }

    /** The owner index of each key's slot (0xFFFFFFFF: unassigned), in one call. */
    ownersOfKeys(keys) {
      const [data, ends] = pack(keys);
      return this.#raw.ownersOfKeysPacked(data, ends);
    }

    /** The owner index of all 16384 slots as a Uint16Array (0xFFFF: unassigned). */
    owners() {
      return this.#raw.owners();
    }

    /** Slots owned per node, in index order (Uint32Array). */
    slotCounts() {
      return this.#raw.slotCounts();
    }

    /** Runs of slots with one owner: [{start, end, owner}] (owner null: unassigned). */
    ranges() {
      const r = this.#raw.ranges();
      const out = [];
      for (let i = 0; i < r.length; i += 3) out.push({ start: r[i], end: r[i + 1], owner: r[i + 2] === 0xffffffff ? null : r[i + 2] });
      return out;
    }

    get unassignedCount() {
      return this.#raw.unassignedCount();
    }
    get isComplete() {
      return this.#raw.isComplete();
    }
    get size() {
      return this.#raw.nodeCount();
    }

    /** One node: {index, id, host, port, address, role, health, name, master, replicas}. */
    node(i) {
      const [id, host, port, role, health, name] = this.#raw.nodeInfo(nodeArg(i));
      const m = this.#raw.nodeMaster(i);
      return {
        index: i,
        id,
        host,
        port: Number(port),
        address: formatAddress({ host, port }),
        role,
        health,
        name,
        master: m < 0 ? null : m,
        replicas: Array.from(this.#raw.nodeReplicas(i)),
      };
    }

    nodes() {
      const out = [];
      for (let i = 0, n = this.#raw.nodeCount(); i < n; i++) out.push(this.node(i));
      return out;
    }

    /** Index of the node with cluster id `id`, or null. */
    findId(id) {
      const i = this.#raw.findId(String(id));
      return i < 0 ? null : i;
    }

    /**
     * Follows a `MOVED`/`ASK` error message. MOVED updates that one slot (adding a master
     * for an unknown address) and asks for a refresh; ASK never changes the map.
     * Returns {kind, slot, node, added, host, port, refresh}.
     */
    applyRedirect(message, currentHost = '') {
      const [kind, slot, node, added, host, port] = this.#raw.applyRedirect(String(message), String(currentHost));
      const n = Number(node);
      return { kind, slot: Number(slot), node: n < 0 ? null : n, added: added === '1', host, port: Number(port), refresh: kind === 'moved' };
    }

    /**
     * The fewest slot moves bringing every weighted master within one slot of its share.
     * `weights`: [[nodeIndex, weight], ...], a Map, or {nodeIdOrName: weight}.
     */
    plan(weights) {
      const nodes = [];
      const ws = [];
      let entries;
      if (weights instanceof Map) entries = Array.from(weights.entries());
      else if (Array.isArray(weights)) entries = weights;
      else if (weights && typeof weights === 'object') entries = Object.entries(weights);
      else fail('INVALID_ARGUMENT', 'weights must be [[node, weight], ...] or {node: weight}', TypeError);
      const all = entries.some((e) => typeof e[0] === 'string') ? this.nodes() : null;
      for (const [k, w] of entries) {
        let idx = k;
        if (typeof k === 'string') {
          const found = all.find((n) => n.id === k || n.name === k || n.address === k);
          if (!found) fail('SLOT_MAP', `no node ${JSON.stringify(k)} in this slot map`);
          idx = found.index;
        }
        nodes.push(nodeArg(idx));
        ws.push(weightOf(k, w));
      }
      return new ReshardPlan(INTERNAL, this.#raw.plan(Uint32Array.from(nodes), Float64Array.from(ws)));
    }

    /** Applies a plan (all moves); the map is unchanged if the plan is stale. */
    applyPlan(plan) {
      if (!(plan instanceof ReshardPlan)) fail('INVALID_ARGUMENT', 'applyPlan takes a ReshardPlan', TypeError);
      this.#raw.applyPlan(ReshardPlan[INTERNAL](plan));
      return this;
    }

    clone() {
      return new SlotMap(INTERNAL, this.#raw.clone());
    }

    free() {
      this.#raw = release(this.#raw, 'SlotMap');
    }
  }
  if (dispose) SlotMap.prototype[dispose] = SlotMap.prototype.free;

  // ---------------------------------------------------------------- least used

  const SCRIPTS = {};
  {
    const s = wasm.rawScripts();
    for (let i = 0; i < s.length; i += 4) {
      SCRIPTS[s[i]] = Object.freeze({ name: s[i], text: s[i + 1], sha1: s[i + 2], numKeys: Number(s[i + 3]) });
    }
    Object.freeze(SCRIPTS);
  }

  function countOf(c) {
    if (typeof c === 'bigint') c = Number(c);
    if (!Number.isInteger(c) || c < 0) fail('BAD_COUNT', `count ${c} must be a non-negative integer`);
    return c;
  }

  function orNull(c) {
    return c < 0 ? null : c;
  }

  class Pool {
    #raw;
    constructor() {
      this.#raw = new wasm.RawPool();
    }

    /**
     * Adds members at count `initial` (default 0); a member already present keeps its
     * count unless `overwrite`. Returns how many members are new.
     */
    seed(members, { initial = 0, overwrite = false } = {}) {
      const [data, ends] = pack(members);
      return this.#raw.seedPacked(data, ends, countOf(initial), Boolean(overwrite));
    }

    /** The least-used member (count incremented), or null: then make no request. */
    pick() {
      const b = this.#raw.pick();
      return b === undefined ? null : decoder.decode(b);
    }

    /** As pick(), as bytes. */
    pickBytes() {
      const b = this.#raw.pick();
      return b === undefined ? null : b;
    }

    /** `n` picks in a row (empty only when the pool is empty). */
    pickMany(n) {
      const b = this.#raw.pickManyPacked(countOf(n));
      try {
        return unpackStrings(b);
      } finally {
        b.free();
      }
    }

    pickManyBytes(n) {
      const b = this.#raw.pickManyPacked(countOf(n));
      try {
        return unpackBytes(b);
      } finally {
        b.free();
      }
    }

    /** Takes a member out, remembering its count; the count, or null if absent. */
    remove(member) {
      return orNull(this.#raw.remove(bytes(member)));
    }

    /** Puts a member back: mode 'at_minimum' (default) or 'keep'. Returns its count. */
    restore(member, mode = 'at_minimum') {
      return this.#raw.restore(bytes(member), String(mode));
    }

    count(member) {
      return orNull(this.#raw.count(bytes(member)));
    }
    removedCount(member) {
      return orNull(this.#raw.removedCount(bytes(member)));
    }
    has(member) {
      return this.#raw.contains(bytes(member));
    }
    minCount() {
      return orNull(this.#raw.minCount());
    }
    get size() {
      return this.#raw.len();
    }

    /** [[member, count], ...] in pick order (like ZRANGE pool 0 -1 WITHSCORES). */
    counts() {
      return this.#pairs(this.#raw.counts(), unpackStrings);
    }
    countsBytes() {
      return this.#pairs(this.#raw.counts(), unpackBytes);
    }
    /** [[member, count], ...] remembered for removed members, in byte order. */
    removed() {
      return this.#pairs(this.#raw.removed(), unpackStrings);
    }
    removedBytes() {
      return this.#pairs(this.#raw.removed(), unpackBytes);
    }

    #pairs(b, unpack) {
      try {
        const m = unpack(b);
        const c = b.counts;
        return m.map((x, i) => [x, c[i]]);
      } finally {
        b.free();
      }
    }

    free() {
      this.#raw = release(this.#raw, 'Pool');
    }
  }
  if (dispose) Pool.prototype[dispose] = Pool.prototype.free;

  return {
    Ring,
    diff,
    PROFILES,
    keySlot,
    keySlots,
    hashTag,
    SLOT_COUNT,
    SlotMap,
    ReshardPlan,
    Pool,
    SCRIPTS,
    LEAST_USED_SCRIPT: SCRIPTS['least-used'].text,
    LEAST_USED_SHA1: SCRIPTS['least-used'].sha1,
  };
}
