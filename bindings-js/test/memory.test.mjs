// Issue 12: the 7th clone of a 33M-point ring trapped (`RuntimeError: unreachable`) and
// left the module broken. Sizes are now checked before wasm allocates: the clone that
// no longer fits is TOO_LARGE, the ring keeps working, and freeing makes room again.
// (Its own file: node --test runs it in its own process, which returns the ~4 GiB of
// wasm memory when it ends.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ring, liveHandles } from 'keyroute';

test('cloning a 32M-point ring until the wasm memory is full: TOO_LARGE, never a trap', () => {
  const ring = new Ring({ a: 1, b: 1, c: 1, d: 1, big: 200000 });
  assert.equal(ring.pointCount, 32000640);
  const owner = ring.get('user:42');
  const clones = [];
  let refused = null;
  for (let i = 0; i < 16 && !refused; i++) {
    try {
      clones.push(ring.clone());
    } catch (e) {
      refused = e;
    }
  }
  assert.ok(refused, `${clones.length} clones of 32M points fit in 4 GiB?`);
  assert.equal(refused.code, 'TOO_LARGE', refused.message);
  assert.match(refused.message, /copying this ring needs \d+ bytes/);
  assert.ok(clones.length >= 3, `only ${clones.length} clones`);
  // Everything still answers.
  assert.equal(ring.get('user:42'), owner);
  assert.equal(clones.at(-1).get('user:42'), owner);
  // A build that does not fit is refused the same way.
  assert.throws(() => new Ring({ x: 209000 }), { code: 'TOO_LARGE' });
  assert.throws(() => ring.setWeight('a', 2), (e) => ['TOO_LARGE', 'TOO_MANY_POINTS'].includes(e.code));
  assert.equal(ring.get('user:42'), owner);
  for (const c of clones) c.free();
  const again = ring.clone();
  assert.equal(again.get('user:42'), owner);
  again.free();
  assert.ok(liveHandles() >= 1);
  ring.free();
});
