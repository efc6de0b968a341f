// Issue 17 ("Crossings"): a batch's keys are written into wasm memory through views of
// it, and a key getter that calls keyroute may grow that memory (which detaches every
// view) between two writes. A file of its own: node --test runs each file in a fresh
// process, so the memory here is still small and the getter's call must grow it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ring, keySlot, keySlots } from 'keyroute';

test('a getter that grows the wasm memory between two key writes: views are made again', () => {
  // After a byte key a chunk's later keys are read and written one at a time; the getter
  // calls keyroute on the write pass only (the size pass reads the key first), with a
  // batch larger than the memory so far. (Checked to fail without the views made again.)
  const mixed = Array.from({ length: 1200 }, (_, i) => `k${i}`);
  mixed[5] = new TextEncoder().encode('k5');
  const big = Array.from({ length: 1 << 17 }, (_, i) => `${'g'.repeat(200)}${i}`);
  let grown = null;
  let reads = 0;
  Object.defineProperty(mixed, 700, {
    get() {
      if (++reads === 2) grown = keySlots(big);
      return 'k700';
    },
  });
  const ring = new Ring(['a', 'b', 'c']);
  const owners = ring.getManyIndexes(mixed);
  assert.equal(reads, 2, 'one read to size the batch, one to write it');
  for (let i = 0; i < mixed.length; i++) assert.equal(ring.names[owners[i]], ring.get(`k${i}`), `owner ${i}`);
  assert.equal(grown.length, big.length);
  assert.equal(grown[big.length - 1], keySlot(big[big.length - 1]));
  ring.free();
});
