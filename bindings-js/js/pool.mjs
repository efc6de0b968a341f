// Least-used selection (core's keyroute::select): Pool (the in-memory model of the pool
// scripts), SCRIPTS (core's Lua scripts) and sideKey.
//
// `createPool(wasm, h, scripts)` is bundled by scripts/build.mjs into dist/api.* (see
// helpers.mjs): `scripts` core's SCRIPTS, which the build writes into the package.

export function createPool(wasm, h, scripts) {
  'use strict';

  const { fail, guard, describe, text, utf8, int, bool, pack, bytes, unpackStrings, unpackBytes, dispose, freed } = h;

  // Core's SCRIPTS, written into the package at build time (scripts/build.mjs): the Lua
  // texts are JavaScript strings rather than bytes of the .wasm.
  const SCRIPTS = {};
  for (const s of scripts) SCRIPTS[s.name] = Object.freeze({ ...s });
  Object.freeze(SCRIPTS);

  function orNull(c) {
    return c < 0 ? null : c;
  }

  function seedOptions(o) {
    if (o == null) o = {};
    if (typeof o !== 'object') fail('BAD_TYPE', `seed options must be an object such as {initial: 0}, not ${describe(o)}`);
    return [o.initial === undefined ? 0n : int(o.initial, 'initial'), o.overwrite === undefined ? false : bool(o.overwrite, 'overwrite')];
  }

  class Pool {
    #raw;
    constructor() {
      this.#raw = new wasm.RawPool();
    }

    get #h() {
      return this.#raw || freed('Pool');
    }

    /**
     * Adds members at count `initial` (default 0); a member already present keeps its
     * count unless `overwrite`. Returns how many members are new.
     */
    seed(members, options) {
      const h = this.#h;
      const [initial, overwrite] = seedOptions(options);
      const [data, ends] = pack(members, 'members');
      return guard(() => h.seedPacked(data, ends, initial, overwrite));
    }

    /**
     * The least-used member (count incremented), or null: then make no request. BAD_UTF8,
     * picking nothing, while the pool holds a member that is not UTF-8 (use pickBytes).
     */
    pick() {
      const b = this.#h.pick(true);
      return b === undefined ? null : utf8(b, 'a member', '; use the …Bytes variant of this method');
    }

    /** As pick(), as bytes. */
    pickBytes() {
      const b = this.#h.pick(false);
      return b === undefined ? null : b;
    }

    /** `n` picks in a row (empty only when the pool is empty); at most LIMITS.picksPerCall. */
    pickMany(n) {
      return this.#picks(n, true, unpackStrings);
    }

    pickManyBytes(n) {
      return this.#picks(n, false, unpackBytes);
    }

    #picks(n, text, unpack) {
      const h = this.#h;
      const b = guard(() => h.pickManyPacked(int(n, 'pickMany: n'), text));
      try {
        return guard(() => unpack(b));
      } finally {
        b.free();
      }
    }

    /** Takes a member out, remembering its count; the count, or null if absent. */
    remove(member) {
      return orNull(this.#h.remove(bytes(member, 'a member')));
    }

    /** Puts a member back: mode 'at_minimum' (default) or 'keep'. Returns its count. */
    restore(member, mode = 'at_minimum') {
      return this.#h.restore(bytes(member, 'a member'), text(mode, 'the restore mode'));
    }

    count(member) {
      return orNull(this.#h.status(bytes(member, 'a member'))[0]);
    }
    removedCount(member) {
      return orNull(this.#h.status(bytes(member, 'a member'))[1]);
    }
    has(member) {
      return this.#h.status(bytes(member, 'a member'))[0] >= 0;
    }
    minCount() {
      return orNull(this.#h.stats()[1]);
    }
    get size() {
      return this.#h.stats()[0];
    }

    /** [[member, count], ...] in pick order (like ZRANGE pool 0 -1 WITHSCORES). */
    counts() {
      return this.#pairs(this.#h.counts(), unpackStrings);
    }
    countsBytes() {
      return this.#pairs(this.#h.counts(), unpackBytes);
    }
    /** [[member, count], ...] remembered for removed members, in byte order. */
    removed() {
      return this.#pairs(this.#h.removed(), unpackStrings);
    }
    removedBytes() {
      return this.#pairs(this.#h.removed(), unpackBytes);
    }

    #pairs(b, unpack) {
      try {
        return guard(() => {
          const m = unpack(b);
          const c = b.counts;
          return m.map((x, i) => [x, c[i]]);
        });
      } finally {
        b.free();
      }
    }

    free() {
      if (this.#raw) this.#raw.free();
      this.#raw = null;
    }
  }
  if (dispose) Pool.prototype[dispose] = Pool.prototype.free;

  /** The side key a least-used pool keeps removed members' counts in (same type as `poolKey`). */
  function sideKey(poolKey) {
    const k = wasm.rawSideKey(bytes(poolKey, 'the pool key'));
    return typeof poolKey === 'string' ? utf8(k, 'the side key') : k;
  }

  return { Pool, SCRIPTS, LEAST_USED_SCRIPT: SCRIPTS['least-used'].text, LEAST_USED_SHA1: SCRIPTS['least-used'].sha1, sideKey };
}
