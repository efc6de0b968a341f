// Regressions found by test/hostile.test.mjs (fast-check), each pinned by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as kr from 'keyroute';

const raising = new Proxy({}, {
  get(_, p) {
    if (p === Symbol.toPrimitive || p === 'valueOf' || p === 'toString') throw new Error(`hostile getter ${String(p)}`);
    return undefined;
  },
});

// Found by test/hostile.test.mjs: a RESP2-style [key, value, …] shard whose key String() cannot convert
// (an object without a prototype) escaped as a TypeError without a code.
test('a reply key String() cannot convert is no field name, never an error without a code', () => {
  for (const key of [Object.create(null), raising, { toString() { throw new Error('no'); } }]) {
    for (const f of [
      () => kr.SlotMap.fromShards([[key, 1]]),
      () => kr.SlotMap.fromShards([{ slots: [0, 16383], nodes: [[key, 'x', 'id', 'a', 'port', 7000, 'role', 'master']] }]),
    ]) {
      try {
        f().free();
      } catch (e) {
        assert.ok(typeof e.code === 'string' && e.code in kr.ERROR_CODES, `${e.constructor.name}: ${e.message}`);
      }
    }
  }
});
