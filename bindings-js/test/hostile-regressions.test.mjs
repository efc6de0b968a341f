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

// Found by test/hostile.test.mjs (seed 18): a weight entry whose node is a BigInt index and
// whose weight is a string made the message's JSON.stringify(node) throw a TypeError.
test('a weight given as a string for a node given as a BigInt is BAD_TYPE, with the node in the message', () => {
  const map = new kr.SlotMap();
  map.assign(0, 16383, map.addMaster('10.0.0.1:7000'));
  try {
    for (const [node, weight] of [[0n, 'x'], [2147483648n, 'x'], [0n, {}], [0, '2']]) {
      assert.throws(() => map.plan([[node, weight]]), (e) => e.code === 'BAD_TYPE' && e.message.includes(`node ${String(node)} has weight`), `${node}`);
    }
  } finally {
    map.free();
  }
});
