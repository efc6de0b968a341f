// The key buffer of the main module: single keys and batches of keys cross into wasm
// through one buffer in wasm memory (RawKeys), for Ring's lookups and the slot functions.
//
// `createKeys(wasm, helpers)` is bundled by scripts/build.mjs with the factories that use
// it (see helpers.mjs).
//
export function createKeys(wasm, h) {
  'use strict';

  const { encoder, fail, guard, LIMITS, describe, wellFormed, text, list, tooMany, tooManyBytes, byteKey, tooLargeKey } = h;
  // A string key shorter than this crosses in the shared key buffer (see oneKey).
  const SHORT = 1 << 16;

  // Batch key calls (getManyIndexes, getMany, keySlots) read their keys from one buffer
  // in wasm memory (RawKeys, reused across calls), a chunk of CHUNK keys at a time: a
  // chunk's bytes go straight in at the start of the buffer (TextEncoder.encodeInto on a
  // view of the memory: its string keys are joined, and a chunk that encodes to as many
  // bytes as it has characters is ASCII, so its strings' lengths are its keys' byte
  // lengths), the end offsets beside them, the call writes one answer per key behind the
  // offsets, and those are copied into the answer. The lookups read bytes just written,
  // still in the CPU's caches: against the whole batch written first, then looked up,
  // getManyIndexes of 100k string keys in bench/bench.mjs went from 36.8-40.2 to 34.1-37.6
  // ns/key (three runs each, alternating; chunks of 256 to 4096 keys measured, 1024 best).
  // Keys already packed ({data, ends}) are copied in as they are, in one call. A call
  // that can allocate in wasm (RawKeys.reserve) may grow the memory, which detaches every
  // view of it: views are made again after it.
  const memory = wasm.RawKeys.memory();
  const CHUNK = 1024;
  const keyBuffer = () => ({ raw: new wasm.RawKeys(), n: 0, cap: 0, ptr: 0, words: 0, data: null, ends: null });
  const sharedKeys = keyBuffer();
  // A getter of a key list that calls keyroute while the shared buffer is being filled
  // gets a buffer of its own.
  let packing = false;

  function keyViews(kb) {
    const buf = memory.buffer;
    kb.data = new Uint8Array(buf, kb.ptr, kb.cap);
    kb.ends = new Uint32Array(buf, kb.words, kb.n);
  }
  // Room for kb.n keys and `cap` bytes, keeping what is written.
  function keyRoom(kb, cap) {
    if (cap > LIMITS.batchBytes) tooManyBytes();
    kb.ptr = kb.raw.reserve(kb.n, cap);
    kb.words = kb.raw.words();
    kb.cap = cap;
    keyViews(kb);
  }
  // A single string key (shorter than SHORT) into the start of the shared key buffer,
  // as UTF-8; its length in bytes, to pass with sharedKeys.raw. No allocation per call (a
  // wasm-bindgen string parameter is a malloc, a copy and a free); ASCII characters are
  // copied one by one (cheaper than encodeInto for short keys) and need no well-formedness
  // check. -1 for any other key, or while a batch is filling the buffer (`packing`): the
  // caller then takes another path (the key as bytes).
  function oneKey(key) {
    if (typeof key !== 'string' || key.length >= SHORT || packing) return -1;
    const kb = sharedKeys;
    const n = key.length;
    if (kb.data === null || 3 * n > kb.cap) keyRoom(kb, Math.max(3 * n, 1024));
    else if (kb.data.buffer !== memory.buffer) keyViews(kb); // the memory grew since
    const d = kb.data;
    let i = 0;
    for (; i < n; i++) {
      const c = key.charCodeAt(i);
      if (c > 0x7f) break;
      d[i] = c;
    }
    if (i === n) return n;
    text(key, 'the key');
    return i + encoder.encodeInto(key.slice(i), d.subarray(i)).written;
  }
  function lostKey() {
    fail('INTERNAL', 'the key buffer was shorter than the key written to it; please report this');
  }
  function keyNeed(kb, bytes) {
    if (bytes > LIMITS.batchBytes) tooManyBytes();
    if (bytes > kb.cap) keyRoom(kb, Math.min(Math.max(bytes, kb.cap * 2), LIMITS.batchBytes));
  }

  // Keys already encoded: {data: Uint8Array, ends: Uint32Array}, key i being
  // data[ends[i-1]..ends[i]] (ends[-1] = 0). Recognized on a plain object (not iterable)
  // with `data` or `ends`.
  function isPacked(x) {
    return x !== null && typeof x === 'object' && !Array.isArray(x) && !ArrayBuffer.isView(x) && !(x instanceof String) && typeof x[Symbol.iterator] !== 'function' && ('ends' in x || 'data' in x);
  }
  function packedInto(kb, p, what) {
    const { data, ends } = p;
    if (!(data instanceof Uint8Array)) fail('BAD_TYPE', `${what}.data must be a Uint8Array holding the keys' bytes, not ${describe(data)}`);
    if (!(ends instanceof Uint32Array)) fail('BAD_TYPE', `${what}.ends must be a Uint32Array of each key's end offset in data, not ${describe(ends)}`);
    if (ends.length > LIMITS.batchKeys) tooMany(ends.length, what);
    if (data.length > LIMITS.batchBytes) tooManyBytes();
    kb.n = ends.length;
    keyRoom(kb, data.length);
    kb.data.set(data);
    kb.ends.set(ends);
    return data.length;
  }

  // Batches are sized as their keys are read, up to SIZED bytes: a batch that passes it
  // (or meets a key that is not a string, or one too long to join) has the rest of its
  // string keys measured before it goes on, so that a batch above the limit is refused
  // before the wasm memory grows for it. Measuring every batch first was a second pass
  // over the keys: 3 ns of 41 per key in bench/bench.mjs (getManyIndexes of 100k string
  // keys), as the strings were no longer in the CPU's caches.
  const SIZED = 1 << 24;
  // The longest join of one chunk's keys (V8's strings end below 2^29 characters): a key
  // that would take it past is written on its own.
  const JOINED = 1 << 27;

  // Runs `call(raw keys, count, bytes)` on a list of keys a chunk at a time (see the key
  // buffer above) and returns the answers as a new `Out` (Int32Array or Uint16Array).
  // The loops over the keys are functions of their own (readChunk, restChars): small and
  // always given the same types, V8 optimizes them once and keeps them so. In one
  // function with the rest of this, V8 optimized it in the middle of the first call,
  // before every path had run, and threw the code out again on each new path (three times
  // in a run of bench/bench.mjs, node --trace-deopt; none since).
  function keyChunks(kb, keys, what, call, Out) {
    keys = list(keys, what);
    const n = keys.length;
    // The count is checked (list); the bytes as they are read.
    const out = new Out(n);
    kb.n = Math.min(n, CHUNK);
    keyRoom(kb, Math.max(kb.cap, 32 * kb.n));
    let total = 0;
    let measured = false;
    // Each key is read once below (a getter may answer differently each time), but for
    // the rest of a batch that is measured first: a chunk's strings are concatenated as
    // they are read (readChunk: V8 flattens the string once, in encodeInto), with their
    // end offsets in characters (`chunkEnds`, copied into wasm memory after the reads,
    // since a getter that calls keyroute may grow the memory and detach the views). A
    // chunk that encodes to as many bytes as it has characters is ASCII: its character
    // offsets are its byte offsets. Otherwise its keys are cut back out of the string and
    // written one at a time, and from a key that is not a string (or too long to join) on,
    // the chunk's keys are read and written one at a time. (Keeping each chunk's keys in
    // an array to write again, as before, cost 3 ns per key; joining that array instead
    // of concatenating is 3 times slower on keys V8 has interned, as a Map or an object
    // property makes them: Array.prototype.join then builds a two-byte string.)
    const chunkEnds = new Uint32Array(kb.n);
    for (let i = 0; i < n; i += CHUNK) {
      const m = Math.min(CHUNK, n - i);
      const s = readChunk(keys, i, m, 0, chunkEnds);
      let j = readCount;
      const end = readEnd;
      const odd = readOdd;
      readOdd = undefined;
      if (!measured && (total + end > SIZED || j < m)) {
        measured = true;
        const oddChars = j < m && typeof odd === 'string' ? odd.length : 0;
        if (restChars(keys, i + Math.min(j + 1, m), n, total + end + oddChars) > LIMITS.batchBytes) tooManyBytes();
      }
      // The last chunk's count, or a getter grew the memory.
      if (kb.n !== m || kb.ends.length !== m) {
        kb.n = m;
        keyViews(kb);
      }
      let off = -1;
      if (j === m) {
        keyNeed(kb, end);
        const { read, written } = encoder.encodeInto(s, kb.data.subarray(0, end));
        if (read === s.length && written === read) {
          kb.ends.set(m === chunkEnds.length ? chunkEnds : chunkEnds.subarray(0, m));
          off = end;
        }
      }
      if (off < 0) {
        // The strings read so far, cut out of `s`.
        off = 0;
        for (let q = 0; q < j; q++) off = keyInto(kb, off, s.slice(q ? chunkEnds[q - 1] : 0, chunkEnds[q]), what, i, q);
        if (j < m) {
          off = keyInto(kb, off, odd, what, i, j);
          for (j++; j < m; j++) {
            const k = keys[i + j];
            if (kb.ends.length !== m) keyViews(kb);
            off = keyInto(kb, off, k, what, i, j);
          }
        }
      }
      total += off;
      if (total > LIMITS.batchBytes) tooManyBytes();
      guard(() => call(kb.raw, m, off));
      const at = kb.words + 4 * m;
      out.set(Out === Uint16Array ? new Uint32Array(memory.buffer, at, m) : new Out(memory.buffer, at, m), i);
    }
    return out;
  }
  // `chars` and the characters of the string keys of keys[from..n): the fewest bytes
  // they take.
  function restChars(keys, from, n, chars) {
    for (let i = from; i < n; i++) {
      const k = keys[i];
      if (typeof k === 'string') chars += k.length;
    }
    return chars;
  }
  // Reads keys[i..i + m) while they are strings that fit the join: returns them
  // concatenated, with the end of each (in characters, counted on from `end`) in
  // chunkEnds. How many it read is left in readCount, the last end in readEnd, and the key
  // it stopped at, if any, in readOdd. (A getter that calls keyroute runs a nested
  // readChunk: the two counts are set after the loop, and keyChunks takes readOdd and
  // clears it right after each call, so a nested call leaves nothing behind.)
  let readCount = 0;
  let readEnd = 0;
  let readOdd;
  function readChunk(keys, i, m, end, chunkEnds) {
    let s = '';
    const first = end + JOINED;
    let j = 0;
    for (; j < m; j++) {
      const k = keys[i + j];
      if (typeof k !== 'string' || end + k.length > first) {
        readOdd = k;
        break;
      }
      s += k;
      end += k.length;
      chunkEnds[j] = end;
    }
    readCount = j;
    readEnd = end;
    return s;
  }
  // Key q of the chunk from key `base` on, at byte `off`; returns its end.
  function keyInto(kb, off, k, what, base, q) {
    const i = base + q;
    if (typeof k === 'string') {
      if (!wellFormed(k)) text(k, `${what}[${i}]`);
      keyNeed(kb, off + k.length);
      const { read, written } = encoder.encodeInto(k, kb.data.subarray(off));
      if (read === k.length) off += written;
      else {
        const b = encoder.encode(k);
        if (b.length > LIMITS.keyBytes) tooLargeKey(b.length, `${what}[${i}]`);
        keyNeed(kb, off + b.length);
        kb.data.set(b, off);
        off += b.length;
      }
    } else {
      const b = byteKey(k, `${what}[${i}]`);
      keyNeed(kb, off + b.length);
      kb.data.set(b, off);
      off += b.length;
    }
    kb.ends[q] = off;
    return off;
  }

  // Runs `call(raw keys, count, bytes)` on `keys` and returns its answers as a new
  // `Out` (Int32Array or Uint16Array).
  function withKeys(keys, what, call, Out) {
    const nested = packing;
    const kb = nested ? keyBuffer() : sharedKeys;
    packing = true;
    try {
      if (!isPacked(keys)) return keyChunks(kb, keys, what, call, Out);
      const len = packedInto(kb, keys, what);
      guard(() => call(kb.raw, kb.n, len));
      const at = kb.words + 4 * kb.n;
      if (Out === Uint16Array) return new Uint16Array(new Uint32Array(memory.buffer, at, kb.n));
      return new Out(memory.buffer, at, kb.n).slice();
    } finally {
      packing = nested;
      // Do not hold on to a large buffer (nor to one of a nested call).
      if (nested || kb.cap + 8 * kb.n > 1 << 26) {
        kb.raw.free();
        if (!nested) Object.assign(kb, keyBuffer());
      }
    }
  }

  return { sharedKeys, oneKey, lostKey, withKeys };
}
