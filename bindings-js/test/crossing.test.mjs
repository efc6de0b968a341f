// Issue 17 ("Crossings"): batch keys go into wasm memory through one reused buffer
// (RawKeys), as strings, bytes or already packed ({data, ends}), and every batch call
// answers exactly what the per-key call answers, through chunks, non-ASCII and binary
// keys, and a batch large enough to grow the wasm memory mid-call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ring, keySlot, keySlots, groupBySlot, SlotMap, ERROR_CODES, LIMITS } from 'keyroute';

function refuses(f, code, message) {
  assert.throws(f, (e) => {
    assert.ok(e instanceof Error, `not an Error: ${e}`);
    assert.equal(e.code, code, e.message);
    assert.ok(code in ERROR_CODES);
    if (message) assert.match(e.message, message);
    return true;
  });
}

const enc = new TextEncoder();
function packed(keys) {
  const parts = keys.map((k) => (typeof k === 'string' ? enc.encode(k) : k));
  const ends = new Uint32Array(parts.length);
  let n = 0;
  parts.forEach((p, i) => {
    n += p.length;
    ends[i] = n;
  });
  const data = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    data.set(p, at);
    at += p.length;
  }
  return { data, ends };
}

// A mixed batch: ASCII runs longer than a chunk (512 keys), then runs with non-ASCII
// strings, bytes, empty keys, hash tags and astral characters mixed in.
function mixed(n, seed = 1) {
  let x = seed;
  const rnd = () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return x;
  };
  const keys = [];
  for (let i = 0; i < n; i++) {
    const r = rnd() % 100;
    if (i < 1500 || r < 60) keys.push(`user:${i}:${rnd()}`);
    else if (r < 70) keys.push(`é${i}ü`);
    else if (r < 75) keys.push(`{tag${i % 7}}😀${i}`);
    else if (r < 85) keys.push(Uint8Array.from({ length: rnd() % 40 }, () => rnd() & 255));
    else if (r < 90) keys.push('');
    else if (r < 95) keys.push(new Uint8Array(0));
    else keys.push(`日本語:${i}`.repeat(1 + (rnd() % 5)));
  }
  return keys;
}

test('getManyIndexes, getMany and keySlots answer as get and keySlot on a large mixed batch, also packed', () => {
  const keys = mixed(5000);
  for (const profile of ['native', 'libketama', 'node-hashring']) {
    const ring = new Ring(['a', 'b', 'c', 'd'], { profile });
    const want = keys.map((k) => ring.names.indexOf(ring.get(k)));
    assert.deepEqual(Array.from(ring.getManyIndexes(keys)), want, profile);
    assert.deepEqual(Array.from(ring.getManyIndexes(packed(keys))), want, `${profile} packed`);
    assert.deepEqual(ring.getMany(new Set(keys)).length, new Set(keys).size);
    assert.deepEqual(ring.getMany(packed(keys)), keys.map((k) => ring.get(k)));
    ring.free();
  }
  const want = keys.map((k) => keySlot(k));
  assert.deepEqual(Array.from(keySlots(keys)), want);
  assert.deepEqual(Array.from(keySlots(packed(keys))), want);
  assert.deepEqual(groupBySlot(packed(keys)), groupBySlot(keys));
});

test('every chunk boundary: batches of 0 to 8200 ASCII keys with one non-ASCII key moving through', () => {
  const ring = new Ring(['a', 'b', 'c']);
  for (const n of [0, 1, 2, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193]) {
    for (const at of [-1, 0, n >> 1, n - 1]) {
      const keys = Array.from({ length: n }, (_, i) => (i === at ? `ключ${i}` : `k${i}`));
      assert.deepEqual(Array.from(keySlots(keys)), keys.map((k) => keySlot(k)), `${n} keys, non-ASCII at ${at}`);
      assert.deepEqual(Array.from(ring.getManyIndexes(keys)), keys.map((k) => ring.names.indexOf(ring.get(k))));
    }
  }
});

test('answers are the caller\'s own copies, and the buffer is reused across calls', () => {
  const a = keySlots(['foo', 'bar']);
  const b = keySlots(['{foo}x', 'baz']);
  assert.deepEqual(Array.from(a), [12182, 5061]);
  assert.deepEqual(Array.from(b), [12182, keySlot('baz')]);
  const ring = new Ring(['a', 'b']);
  const i = ring.getManyIndexes(['x', 'y']);
  const j = ring.getManyIndexes(['y', 'x']);
  assert.deepEqual([i[0], i[1]], [j[1], j[0]]);
  assert.ok(i.buffer !== j.buffer);
});

test('a batch large enough to grow the wasm memory mid-call answers as the per-key calls', () => {
  // 64 MiB of keys, 1 MiB a chunk (some non-ASCII, so the buffer also grows while a
  // chunk's keys are written).
  const n = 1 << 16;
  const keys = Array.from({ length: n }, (_, i) => (i % 4096 === 4095 ? `é${'x'.repeat(1000)}${i}` : `${'k'.repeat(1000)}:${i}`));
  const ring = new Ring(['a', 'b', 'c']);
  const idx = ring.getManyIndexes(keys);
  const slots = keySlots(keys);
  for (let i = 0; i < n; i += 97) {
    assert.equal(ring.names[idx[i]], ring.get(keys[i]));
    assert.equal(slots[i], keySlot(keys[i]));
  }
  assert.equal(slots[n - 1], keySlot(keys[n - 1]));
  // And the next small batch still answers right (views of the grown memory made again).
  assert.deepEqual(Array.from(keySlots(['foo'])), [12182]);
});

test('a chunk with a byte key or a non-string among its strings, and a getter that answers longer the second time', () => {
  const ring = new Ring(['a', 'b', 'c']);
  const keys = Array.from({ length: 5000 }, (_, i) => `k${i}`);
  keys[10] = new TextEncoder().encode('bytes-key');
  keys[4500] = new Uint8Array([0xff, 0x00, 0x41]);
  const want = keys.map((k) => ring.names.indexOf(ring.get(k)));
  assert.deepEqual(Array.from(ring.getManyIndexes(keys)), want);
  assert.deepEqual(Array.from(keySlots(keys)), keys.map((k) => keySlot(k)));
  // A batch of strings reads each key once.
  const plain = Array.from({ length: 5000 }, (_, i) => `k${i}`);
  let plainReads = 0;
  Object.defineProperty(plain, 4100, {
    get() {
      plainReads++;
      return 'k4100';
    },
  });
  assert.deepEqual(Array.from(ring.getManyIndexes(plain)), want.map((w, i) => (i === 10 || i === 4500 ? ring.names.indexOf(ring.get(plain[i])) : w)));
  assert.equal(plainReads, 1, 'a batch of strings reads each key once');
  // From a key that is not a string on, the rest of the batch is measured before it is
  // written: the measuring read gets a short key, the writing read a long one. The buffer
  // grows and the answer is that of the key written.
  const tricky = Array.from({ length: 5000 }, (_, i) => `k${i}`);
  tricky[10] = new TextEncoder().encode('bytes-key');
  let reads = 0;
  const long = 'L'.repeat(100000);
  Object.defineProperty(tricky, 4100, {
    get() {
      reads++;
      return reads === 1 ? 'x' : long;
    },
  });
  const got = ring.getManyIndexes(tricky);
  assert.equal(got[4100], ring.names.indexOf(ring.get(long)));
  assert.equal(got[4099], ring.names.indexOf(ring.get('k4099')));
  assert.equal(got[4101], ring.names.indexOf(ring.get('k4101')));
  assert.equal(reads, 2, 'one read to measure the rest of the batch, one to write it');
  assert.throws(() => ring.getManyIndexes(['a', 5, 'b']), (e) => e.code === 'BAD_TYPE');
  // A bad key in a later chunk, after earlier chunks were looked up: refused with its
  // index in the whole batch, and the next call answers.
  const late = Array.from({ length: 5000 }, (_, i) => `k${i}`);
  late[4500] = 42;
  assert.throws(() => ring.getManyIndexes(late), (e) => e.code === 'BAD_TYPE' && /keys\[4500\]/.test(e.message));
  assert.throws(() => keySlots(late), (e) => e.code === 'BAD_TYPE' && /keys\[4500\]/.test(e.message));
  late[4500] = '\ud800';
  assert.throws(() => keySlots(late), (e) => e.code === 'BAD_UTF8' && /keys\[4500\]/.test(e.message));
  assert.deepEqual(Array.from(keySlots(['foo', 'bar'])), [12182, 5061]);
});

test('a key getter that calls keyroute while a batch is being written gets its own buffer', () => {
  const keys = Array.from({ length: 1200 }, (_, i) => `k${i}`);
  let inner = null;
  Object.defineProperty(keys, 700, {
    get() {
      inner = keySlots(Array.from({ length: 3000 }, (_, i) => `other${i}`));
      return 'k700';
    },
  });
  const got = keySlots(keys);
  assert.deepEqual(Array.from(got), keys.map((k) => keySlot(k)));
  assert.equal(inner[2999], keySlot('other2999'));
});

test('single string keys cross through the shared key buffer: ASCII, non-ASCII, empty, long, inside a batch', () => {
  const ring = new Ring(['a', 'b', 'c']);
  const keys = ['', 'foo', '{foo}bar', 'é', 'ключ', '😀x', 'k'.repeat(5000), 'é'.repeat(30000), 'x'.repeat(70000)];
  for (const k of keys) {
    // As the same key given as bytes, which crosses as a byte array.
    assert.equal(keySlot(k), keySlot(enc.encode(k)), `keySlot of ${k.length} chars`);
    assert.equal(ring.get(k), ring.get(enc.encode(k)), `get of ${k.length} chars`);
  }
  assert.equal(keySlot('foo'), 12182);
  refuses(() => ring.get('a\ud800'), 'BAD_UTF8');
  refuses(() => keySlot('\udc00b'), 'BAD_UTF8');
  // From a batch's key getter: the single call must not write over the batch's keys.
  const batch = Array.from({ length: 1200 }, (_, i) => `k${i}`);
  let inner = null;
  Object.defineProperty(batch, 600, {
    get() {
      inner = [keySlot('foo'), ring.get('bar')];
      return 'k600';
    },
  });
  const slots = keySlots(batch);
  const owners = ring.getManyIndexes(batch);
  for (let i = 0; i < batch.length; i++) {
    assert.equal(slots[i], keySlot(enc.encode(`k${i}`)), `slot ${i}`);
    assert.equal(ring.names[owners[i]], ring.get(enc.encode(`k${i}`)), `owner ${i}`);
  }
  assert.deepEqual(inner, [12182, ring.get(enc.encode('bar'))]);
  ring.free();
});

test('packed keys are checked as every entrance checks its input: the same codes everywhere', () => {
  const ring = new Ring(['a', 'b']);
  const map = new SlotMap();
  map.assign(0, 16383, map.addMaster('10.0.0.1:7000'));
  const calls = [(k) => ring.getManyIndexes(k), (k) => ring.getMany(k), (k) => keySlots(k), (k) => groupBySlot(k), (k) => map.ownersOfKeys(k)];
  const data = enc.encode('foobar');
  for (const call of calls) {
    // Good: trailing bytes past the last offset are ignored; empty keys and no keys.
    assert.equal(call({ data, ends: Uint32Array.of(3, 3, 6) }).length, 3);
    assert.equal(call({ data, ends: Uint32Array.of(3) }).length, 1);
    assert.equal(call({ data: new Uint8Array(0), ends: new Uint32Array(0) }).length, 0);
    // Offsets that decrease or pass the data: OUT_OF_RANGE.
    refuses(() => call({ data, ends: Uint32Array.of(4, 3) }), 'OUT_OF_RANGE', /must not decrease/);
    refuses(() => call({ data, ends: Uint32Array.of(3, 7) }), 'OUT_OF_RANGE', /end of the data/);
    refuses(() => call({ data: new Uint8Array(0), ends: Uint32Array.of(1) }), 'OUT_OF_RANGE');
    // Wrong types: BAD_TYPE.
    refuses(() => call({ data: 'foobar', ends: Uint32Array.of(3) }), 'BAD_TYPE', /data must be a Uint8Array/);
    refuses(() => call({ data, ends: [3, 6] }), 'BAD_TYPE', /ends must be a Uint32Array/);
    refuses(() => call({ data, ends: Int32Array.of(3, 6) }), 'BAD_TYPE', /ends must be a Uint32Array/);
    refuses(() => call({ data: new Uint16Array(3), ends: Uint32Array.of(3) }), 'BAD_TYPE');
    refuses(() => call({ data }), 'BAD_TYPE');
    refuses(() => call({ ends: Uint32Array.of(0) }), 'BAD_TYPE');
    // Sizes before anything is copied: TOO_LARGE.
    refuses(() => call({ data, ends: new Uint32Array(LIMITS.batchKeys + 1) }), 'TOO_LARGE', new RegExp(String(LIMITS.batchKeys)));
  }
  // A refused call changes nothing: the next one answers.
  assert.deepEqual(Array.from(keySlots({ data, ends: Uint32Array.of(3, 6) })), [12182, 5061]);
  assert.equal(map.ownersOfKeys(['foo'])[0], 0);
});

test('string batches above the limits are refused before anything is allocated', () => {
  refuses(() => keySlots(['a'.repeat(1 << 28), 'b'.repeat(1 << 28), 'c'.repeat(1 << 28), 'd'.repeat(1 << 28), 'e']), 'TOO_LARGE', /1 GiB/);
  // Many keys, none large: the batch passes 16 MiB in its first chunk and the rest is
  // measured before its buffer grows (70,000 keys of 16 KiB: 1.07 GiB).
  refuses(() => keySlots(new Array(70000).fill('k'.repeat(1 << 14))), 'TOO_LARGE', /1 GiB/);
  refuses(() => keySlots(['é', '\ud800']), 'BAD_UTF8');
  refuses(() => keySlots(['a', 42]), 'BAD_TYPE', /keys\[1\]/);
});

test('string keys longer together than V8 makes one string are joined a part at a time (no RangeError)', () => {
  // 512 Mi characters in all: within the 1 GiB limit, past V8's longest string (2^29 - 24).
  const pad = 'x'.repeat(2 ** 28 - 3);
  assert.deepEqual(Array.from(keySlots([`{a}${pad}`, `{b}${pad}`, 'c'])), [keySlot('a'), keySlot('b'), keySlot('c')]);
  assert.deepEqual(Array.from(keySlots(['{d}', `{e}${pad}`, '{f}'])), [keySlot('d'), keySlot('e'), keySlot('f')]);
});
