// Rings (core's keyroute::ring): Ring, diff, PROFILES and the node-list grammar
// (parseNodes, parseWeights, which run in the cluster module).
//
// `createRing(wasm, h, keys, clusterWasm)` is bundled by scripts/build.mjs into
// dist/api.* (see helpers.mjs): `h` the helpers, `keys` the key buffer (keys.mjs),
// `clusterWasm(what)` the cluster module's raw exports.

export function createRing(wasm, h, keys, clusterWasm) {
  'use strict';

  const { fail, guard, describe, text, int, options, pack, bytes, normalizeNodes, weightOf, NONE, INTERNAL, dispose, freed } = h;
  const { sharedKeys, oneKey, lostKey, withKeys } = keys;
  // What to use for a node list in text (see normalizeNodes).
  const NODES_IN_TEXT = '; to read a node list such as "a=2,b", use Ring.fromSpec(text) or parseNodes(text)';

  const PROFILES = Object.freeze(wasm.rawProfiles());
  const RING_OPTIONS = ['profile', 'vnodes', 'pointsPerDigest', 'defaultPort'];

  // (position + add) / 2**bits for each position of a BigUint64Array, as doubles: the
  // same IEEE operations as `(p as f64 + add) / 2^bits` in Rust.
  function fractionsOf(positions, bits, add) {
    const circle = 2 ** bits;
    const out = new Float64Array(positions.length);
    for (let i = 0; i < positions.length; i++) out[i] = (Number(positions[i]) + add) / circle;
    return out;
  }


  function ringOptions(opts) {
    const o = options(opts, RING_OPTIONS, 'the ring options');
    const given = (v, what) => (v === undefined ? NONE : int(v, what));
    return [
      o.profile === undefined ? 'native' : text(o.profile, 'profile'),
      given(o.vnodes, 'vnodes'),
      o.defaultPort === null ? 0n : given(o.defaultPort, 'defaultPort'),
      given(o.pointsPerDigest, 'pointsPerDigest'),
    ];
  }

  /**
   * Parses a node list with core's grammar (`a`, `host:port`, `NAME=WEIGHT`,
   * `NAME WEIGHT`, twemproxy's `host:port:weight [alias]`; commas or lines, `#`
   * comments): [{name, weight, address}] (address: the host:port behind an alias, else
   * null). It runs in the cluster module: browsers `await initCluster()` once first.
   */
  function parseNodes(spec) {
    const source = text(spec, 'the node list');
    const p = guard(() => clusterWasm('parseNodes').rawParseNodes(source));
    const out = [];
    for (let i = 0; i < p.length; i += 3) out.push({ name: p[i], weight: Number(p[i + 1]), address: p[i + 2] === '' ? null : p[i + 2] });
    return out;
  }

  /**
   * Parses target weights for SlotMap.plan (the node-list grammar, weight 0 drains):
   * [[name, weight]]. In the cluster module, as parseNodes.
   */
  function parseWeights(spec) {
    const source = text(spec, 'the weight list');
    const p = guard(() => clusterWasm('parseWeights').rawParseWeights(source));
    const out = [];
    for (let i = 0; i < p.length; i += 2) out.push([p[i], Number(p[i + 1])]);
    return out;
  }

  class Ring {
    #raw;
    #names;

    constructor(nodes = [], options = {}) {
      if (nodes === INTERNAL) {
        this.#raw = options;
        this.#names = options.names();
        return;
      }
      const [profile, vnodes, port, ppd] = ringOptions(options);
      const [names, weights] = normalizeNodes(nodes, NODES_IN_TEXT);
      const [data, ends] = pack(names, 'node names');
      this.#raw = guard(() => new wasm.RawRing(profile, vnodes, port, ppd, data, ends, Float64Array.from(weights)));
      this.#names = this.#raw.names();
    }

    /** A ring from a node list in core's grammar (see parseNodes: browsers `await initCluster()` once first). */
    static fromSpec(spec, options = {}) {
      return new Ring(parseNodes(spec), options);
    }

    get #h() {
      return this.#raw || freed('Ring');
    }
    #info(i) {
      return this.#h.info()[i];
    }

    /** The profile name (`native`, `libketama`, …). */
    get profile() {
      return PROFILES[this.#info(0)];
    }
    /** 32 for the ketama family, 64 for native. */
    get bits() {
      return this.#info(1);
    }
    /** Points per unit of weight (native) or digests per server at equal weights (ketama family). */
    get vnodes() {
      return this.#info(2);
    }
    /** Points per MD5 digest (1 for native). */
    get pointsPerDigest() {
      return this.#info(3);
    }
    /** The port left out of hashed server strings, or null. */
    get defaultPort() {
      return this.#info(4) || null;
    }
    /** Number of points on the circle. */
    get pointCount() {
      return this.#info(5);
    }
    /** Number of nodes. */
    get size() {
      this.#h;
      return this.#names.length;
    }
    /** Node names, in the order they were added (the indexes used by points()). */
    get names() {
      this.#h;
      return this.#names.slice();
    }

    /** The owner of `key`, or null on an empty ring. */
    get(key) {
      const h = this.#h;
      const n = oneKey(key);
      const i = n < 0 ? h.getBytes(bytes(key)) : h.getKey(sharedKeys.raw, n);
      if (i === -2) lostKey();
      return i < 0 ? null : this.#names[i];
    }

    /** Up to `n` distinct nodes clockwise from the key: the owner, then replicas. */
    getN(key, n) {
      const h = this.#h;
      const idx = h.getNBytes(bytes(key), int(n, 'getN: n'));
      const out = new Array(idx.length);
      for (let i = 0; i < idx.length; i++) out[i] = this.#names[idx[i]];
      return out;
    }

    /** The owner of each key (null on an empty ring), in one call into wasm. */
    getMany(keys) {
      const idx = this.getManyIndexes(keys);
      return guard(() => {
        const out = new Array(idx.length);
        for (let i = 0; i < idx.length; i++) out[i] = idx[i] < 0 ? null : this.#names[idx[i]];
        return out;
      });
    }

    /** The owner index (into `names`) of each key, -1 on an empty ring. */
    getManyIndexes(keys) {
      const h = this.#h;
      return withKeys(keys, 'keys', (k, n, len) => h.getManyKeys(k, n, len), Int32Array);
    }

    /** Where `key` hashes on the circle (a bigint below 2**bits). */
    hashKey(key) {
      return this.#h.hashKey(bytes(key));
    }

    /** The node owning circle position `hash` (a bigint or integer below 2**bits), or null on an empty ring. */
    ownerOfHash(hash) {
      const h = this.#h;
      const bits = h.info()[1];
      if (typeof hash === 'number') hash = int(hash, 'the position');
      if (typeof hash !== 'bigint') fail('BAD_TYPE', `a position must be a bigint, not ${describe(hash)}`);
      if (hash < 0n || hash >= 1n << BigInt(bits)) fail('OUT_OF_RANGE', `position ${hash} is outside this ${bits}-bit circle (0 to 2**${bits} - 1)`);
      const i = h.ownerOfHash(hash);
      return i < 0 ? null : this.#names[i];
    }

    has(name) {
      this.#h;
      return this.#names.includes(text(name, 'a node name'));
    }

    // The names are kept in step with the ring's node list (an add appends, a removal
    // takes out the index core reports), not fetched again: a change to a 30,000-node
    // ring fetched 30,000 strings (5 ms).
    add(name, weight = 1) {
      const h = this.#h;
      const n = text(name, 'a node name');
      guard(() => h.add(n, weightOf(name, weight)));
      this.#names.push(n);
      return this;
    }

    remove(name) {
      const h = this.#h;
      this.#names.splice(h.remove(text(name, 'a node name')), 1);
      return this;
    }

    setWeight(name, weight) {
      const h = this.#h;
      guard(() => h.setWeight(text(name, 'a node name'), weightOf(name, weight)));
      return this;
    }

    /** [{name, weight, share}] in index order. */
    nodes() {
      const h = this.#h;
      const w = h.weights();
      const s = h.shares();
      return this.#names.map((name, i) => ({ name, weight: w[i], share: s[i] }));
    }

    /** The exact fraction of the circle each node owns: {name: share}. */
    shares() {
      const s = this.#h.shares();
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
      const h = this.#h;
      return guard(() => {
        const positions = h.positions();
        const bits = h.info()[1];
        return { positions, fractions: fractionsOf(positions, bits, 0), owners: h.owners(), names: this.#names.slice(), bits };
      });
    }

    /** The arcs of the circle (one per distinct point) as parallel typed arrays. */
    arcs() {
      const h = this.#h;
      return guard(() => {
        const b = h.arcBounds();
        const n = b.length / 2;
        const starts = b.subarray(0, n);
        const ends = b.subarray(n);
        const bits = h.info()[1];
        return {
          starts,
          ends,
          startFractions: fractionsOf(starts, bits, 0),
          endFractions: fractionsOf(ends, bits, 1),
          owners: h.arcOwners(),
          names: this.#names.slice(),
          bits,
        };
      });
    }

    /** What moves from this ring to `other`: see `diff`. */
    diff(other) {
      return diff(this, other);
    }

    /** An independent copy. */
    clone() {
      const h = this.#h;
      return new Ring(INTERNAL, h.clone());
    }

    /** Frees the wasm memory now (a FinalizationRegistry does it eventually otherwise); later calls throw INVALID_HANDLE. */
    free() {
      if (this.#raw) this.#raw.free();
      this.#raw = null;
      this.#names = null;
    }

    static [INTERNAL](ring) {
      if (!(ring instanceof Ring)) fail('BAD_TYPE', `diff compares two Rings, not ${describe(ring)}`);
      return ring.#h;
    }
  }
  if (dispose) Ring.prototype[dispose] = Ring.prototype.free;

  /**
   * The arcs whose owner changes from `oldRing` to `newRing`, the fraction of keys that
   * moves, and the least any ring could move for the same change of shares.
   */
  function diff(oldRing, newRing) {
    const a = Ring[INTERNAL](oldRing);
    const b = Ring[INTERNAL](newRing);
    const d = guard(() => wasm.rawDiff(a, b));
    try {
      return guard(() => {
        const [movedFraction, idealFraction] = d.fractions();
        const bounds = d.bounds();
        const names = d.names();
        const n = bounds.length / 2;
        const circle = 2 ** a.info()[1];
        const moved = new Array(n);
        for (let i = 0; i < n; i++) {
          moved[i] = {
            start: bounds[i],
            end: bounds[n + i],
            startFraction: Number(bounds[i]) / circle,
            endFraction: (Number(bounds[n + i]) + 1) / circle,
            from: names[i] === '' ? null : names[i],
            to: names[n + i] === '' ? null : names[n + i],
          };
        }
        return { moved, movedFraction, idealFraction };
      });
    } finally {
      d.free();
    }
  }

  return { Ring, diff, parseNodes, parseWeights, PROFILES };
}
