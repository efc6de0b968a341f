// Redis Cluster hash slots (core's keyroute::slot): keySlot, keySlots, groupBySlot,
// hashTag, SLOT_COUNT.
//
// `createSlot(wasm, h, keys)` is bundled by scripts/build.mjs into dist/api.* (see
// helpers.mjs).

export function createSlot(wasm, h, keys) {
  'use strict';

  const { guard, utf8, bytes } = h;
  const { sharedKeys, oneKey, lostKey, withKeys } = keys;

  /** The hash slots of Redis Cluster: core's SLOT_COUNT. */
  const SLOT_COUNT = h.SLOT_COUNT;

  function keySlot(key) {
    const n = oneKey(key);
    if (n < 0) return wasm.rawKeySlotBytes(bytes(key));
    const slot = wasm.rawKeySlotKey(sharedKeys.raw, n);
    return slot < 0 ? lostKey() : slot;
  }

  function keySlots(keys) {
    return withKeys(keys, 'keys', wasm.rawKeySlotsKeys, Uint16Array);
  }

  /**
   * Groups keys by slot, for splitting a multi-key command: [{slot, indexes}] ascending
   * by slot, `indexes` (into `keys`) in input order. The slots are core's (keySlots);
   * the grouping is a counting sort here, which keeps the .wasm small.
   */
  function groupBySlot(keys) {
    const slots = keySlots(keys);
    return guard(() => {
      const count = new Uint32Array(SLOT_COUNT);
      for (let i = 0; i < slots.length; i++) count[slots[i]]++;
      const groups = [];
      const at = new Array(SLOT_COUNT);
      for (let s = 0; s < SLOT_COUNT; s++) {
        if (count[s]) {
          at[s] = groups.length;
          groups.push({ slot: s, indexes: [] });
        }
      }
      for (let i = 0; i < slots.length; i++) groups[at[slots[i]]].indexes.push(i);
      return groups;
    });
  }

  function hashTag(key) {
    const tag = wasm.rawHashTag(bytes(key));
    // Tags are cut at ASCII braces, so a string key's tag is valid UTF-8.
    return typeof key === 'string' ? utf8(tag, 'the tag') : tag;
  }

  return { keySlot, keySlots, groupBySlot, hashTag, SLOT_COUNT };
}
