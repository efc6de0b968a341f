// The public JavaScript API of `keyroute`, written once for every entry point.
//
// `createApi(wasm, scripts, cluster)` wraps the raw wasm-bindgen exports (Rust:
// bindings-js/src) in the camelCase classes users see. `wasm` is the main module (rings,
// slots, least-used); `cluster(load)` returns the cluster module (slot maps and resharding
// plans, a .wasm of its own so that the main one stays small), loading it when `load` is
// true and it can be loaded synchronously (Node), or null when it is not loaded (browsers
// before initCluster()). It is plain ES2020 with no import/export other than the
// one below: scripts/build.mjs copies it to dist/api.mjs (ESM) and dist/api.cjs
// (CommonJS) verbatim, except for that line.
//
// What this file does, and only this: check the types of what callers pass (strings,
// lists, integers, handles) before anything crosses into wasm, pack batches into one
// buffer, and turn answers into JavaScript values. Every range, grammar and rule is
// core's (Rust), and so is every error code: each error thrown here or there is an
// `Error` (`TypeError` for BAD_TYPE) whose `code` is a name of ERROR_CODES.

export function createApi(wasm, scripts, cluster) {
  'use strict';

  const encoder = new TextEncoder();
  // fatal: a member or tag that is not UTF-8 is BAD_UTF8, never U+FFFD.
  const decoder = new TextDecoder('utf-8', { fatal: true });

  // ---------------------------------------------------------------- errors and limits

  const ERROR_CODES = {};
  {
    const c = wasm.rawErrorCodes();
    for (let i = 0; i < c.length; i += 2) ERROR_CODES[c[i]] = Number(c[i + 1]);
    Object.freeze(ERROR_CODES);
  }

  function fail(code, message) {
    const e = code === 'BAD_TYPE' ? new TypeError(message) : new Error(message);
    e.code = code;
    throw e;
  }

  // An error that did not come from keyroute's checks (a JavaScript allocation that
  // failed, a wasm trap) becomes one with a code: nothing untagged leaves the package.
  function tagged(e) {
    if (e instanceof Error && typeof e.code === 'string' && e.code in ERROR_CODES) return e;
    const text = e instanceof Error ? e.message : String(e);
    // A RangeError here is an allocation JavaScript refused (an array or string too long).
    const large = e instanceof RangeError;
    const out = large
      ? new Error(`the answer is too large for this JavaScript engine (${text}); ask for less at a time`)
      : new Error(`keyroute failed unexpectedly (${text}); this is a bug, please report it${typeof WebAssembly === 'object' && e instanceof WebAssembly.RuntimeError ? ' (the WebAssembly module stopped: reload it before using it again)' : ''}`);
    out.code = large ? 'TOO_LARGE' : 'INTERNAL';
    out.cause = e;
    return out;
  }
  function guard(f) {
    try {
      return f();
    } catch (e) {
      throw tagged(e);
    }
  }

  /** Limits of one call, stated once (also in README.md). */
  const LIMITS = Object.freeze({
    /** Keys (or members, or nodes) in one batch call: core's MAX_PICKS_PER_CALL, 2^24. */
    batchKeys: wasm.rawMaxBatch(),
    /** Bytes of all keys of one batch call: 1 GiB. */
    batchBytes: 2 ** 30,
    /** Bytes of one key: 512 MiB, the largest string Redis holds. */
    keyBytes: 2 ** 29,
    /** Picks in one pickMany call: core's MAX_PICKS_PER_CALL, 2^24. */
    picksPerCall: wasm.rawMaxBatch(),
  });
  // Above this many bytes, the wasm memory is probed before a buffer is handed over
  // (wasm-bindgen's copy would trap where the probe answers TOO_LARGE).
  const PROBE_AT = 1 << 24;

  function describe(x) {
    if (typeof x === 'string') return `the string ${JSON.stringify(x.length > 40 ? `${x.slice(0, 40)}…` : x)}`;
    if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') return `${typeof x} ${String(x)}`;
    if (x === null) return 'null';
    if (Array.isArray(x)) return 'an array';
    if (ArrayBuffer.isView(x)) return `a ${x.constructor.name}`;
    return typeof x === 'object' ? `an object (${Object.prototype.toString.call(x).slice(8, -1)})` : typeof x;
  }

  const wellFormed = typeof String.prototype.isWellFormed === 'function'
    ? (s) => s.isWellFormed()
    : (s) => !/\p{Surrogate}/u.test(s);

  // A string parameter: a string, and one that UTF-8 can hold (no lone surrogate).
  function text(s, what) {
    if (typeof s !== 'string') fail('BAD_TYPE', `${what} must be a string, not ${describe(s)}`);
    if (!wellFormed(s)) {
      fail('BAD_UTF8', `${what} ${describe(s)} holds a lone surrogate (half of a UTF-16 pair), which UTF-8 cannot encode; keyroute refuses it rather than hash U+FFFD`);
    }
    return s;
  }

  // An integer parameter: its type is checked here, then it crosses into wasm exactly, as
  // a 128-bit integer (a bigint), and core checks its range. `notInteger` is the code for
  // a number with a fraction (BAD_WEIGHT for weights).
  const I128 = 2 ** 127;
  const NONE = -(2n ** 127n); // "not given" (i128::MIN); never a value a caller passes
  function int(x, what, notInteger = 'BAD_TYPE') {
    if (typeof x === 'bigint') {
      if (BigInt.asIntN(128, x) !== x || x === NONE) fail('OUT_OF_RANGE', `${what} ${x} is beyond the range of 128-bit integers`);
      return x;
    }
    if (typeof x !== 'number') fail('BAD_TYPE', `${what} must be an integer (a number), not ${describe(x)}`);
    if (Number.isNaN(x)) fail(notInteger, `${what} is NaN; it must be an integer`);
    if (!(Math.abs(x) < I128)) fail('OUT_OF_RANGE', `${what} ${x} is beyond the range of 128-bit integers`);
    if (!Number.isInteger(x)) fail(notInteger, `${what} ${x} is not an integer`);
    return BigInt(x);
  }
  // An integer that crosses inside an array of doubles: as `int`, and exact as a double.
  function num(x, what, notInteger) {
    const b = int(x, what, notInteger);
    const n = Number(b);
    if (BigInt(n) !== b) fail('OUT_OF_RANGE', `${what} ${b} has no exact JavaScript number; keyroute's limits are far below it`);
    return n;
  }

  function weightOf(name, w, convert = int) {
    // The node may be a name or an index (a number or a BigInt, which JSON cannot write).
    const node = typeof name === 'string' ? JSON.stringify(name) : typeof name === 'number' || typeof name === 'bigint' ? String(name) : describe(name);
    if (typeof w === 'string') fail('BAD_TYPE', `node ${node} has weight ${JSON.stringify(w)}, a string; weights are numbers (write ${/^\s*-?\d+\s*$/.test(w) ? w.trim() : 'an integer'}, without quotes)`);
    if (typeof w !== 'number' && typeof w !== 'bigint') fail('BAD_TYPE', `node ${node} has weight ${describe(w)}; weights are integers from 1 to 4294967295`);
    return convert(w, `node ${node} has weight`, 'BAD_WEIGHT');
  }

  function bool(b, what) {
    if (typeof b !== 'boolean') fail('BAD_TYPE', `${what} must be true or false, not ${describe(b)}`);
    return b;
  }

  // One key as bytes: a string (UTF-8) or a Uint8Array (any view, or an ArrayBuffer).
  function bytes(key, what = 'a key') {
    let b;
    if (typeof key === 'string') {
      if (key.length > LIMITS.keyBytes) tooLargeKey(key.length, what);
      b = encoder.encode(text(key, what));
      if (b.length > LIMITS.keyBytes) tooLargeKey(b.length, what);
    } else b = byteKey(key, what);
    if (b.length > PROBE_AT) wasm.rawRoom(b.length);
    return b;
  }
  // A key given as bytes (any view, or an ArrayBuffer), as a Uint8Array.
  function byteKey(key, what) {
    let b;
    if (key instanceof Uint8Array) b = key;
    else if (ArrayBuffer.isView(key)) b = new Uint8Array(key.buffer, key.byteOffset, key.byteLength);
    else if (key instanceof ArrayBuffer) b = new Uint8Array(key);
    else fail('BAD_TYPE', `${what} must be a string or a Uint8Array, not ${describe(key)}`);
    if (b.length > LIMITS.keyBytes) tooLargeKey(b.length, what);
    return b;
  }
  function tooLargeKey(n, what) {
    fail('TOO_LARGE', `${what} of ${n} bytes is above the limit of ${LIMITS.keyBytes} bytes (512 MiB, the largest string Redis holds)`);
  }
  // A string key short enough to cross in the shared key buffer (see oneKey).
  const SHORT = 1 << 16;

  // A list argument: an array or another iterable, never a string or a single key.
  function list(x, what) {
    if (typeof x === 'string' || x instanceof String) {
      fail('BAD_TYPE', `${what} must be a list (an array or iterable), not ${describe(String(x))}; a string is one value: wrap it in [ ]`);
    }
    if (Array.isArray(x)) {
      if (x.length > LIMITS.batchKeys) tooMany(x.length, what);
      return x;
    }
    if (x == null || typeof x !== 'object' || typeof x[Symbol.iterator] !== 'function' || ArrayBuffer.isView(x) || x instanceof ArrayBuffer) {
      fail('BAD_TYPE', `${what} must be a list (an array or iterable), not ${describe(x)}`);
    }
    const out = [];
    for (const item of x) {
      if (out.length === LIMITS.batchKeys) tooMany(`more than ${LIMITS.batchKeys}`, what);
      out.push(item);
    }
    return out;
  }
  function tooMany(n, what) {
    fail('TOO_LARGE', `${what}: ${n} items in one call, above the limit of ${LIMITS.batchKeys}; split the batch`);
  }

  // One growable scratch buffer for packing batches (the wasm call copies out of it).
  let scratch = new Uint8Array(1 << 16);
  function reserve(n, keep) {
    if (n > LIMITS.batchBytes + 4) {
      fail('TOO_LARGE', `the keys of one call hold more than ${LIMITS.batchBytes} bytes (1 GiB); split the batch`);
    }
    if (scratch.length >= n) return;
    let size = scratch.length;
    while (size < n) size *= 2;
    const next = new Uint8Array(Math.min(size, LIMITS.batchBytes + 4));
    if (keep) next.set(scratch.subarray(0, keep));
    scratch = next;
  }

  // Packs keys into one byte buffer + end offsets: one boundary crossing per batch.
  function pack(keys, what = 'keys') {
    keys = list(keys, what);
    const n = keys.length;
    const ends = new Uint32Array(n);
    let chars = 0;
    for (let i = 0; i < n; i++) {
      const k = keys[i];
      if (typeof k !== 'string') {
        chars = -1;
        break;
      }
      chars += k.length;
    }
    if (chars > LIMITS.batchBytes) reserve(chars, 0);
    if (chars >= 0 && chars < 1 << 28) {
      // Fast path: encode all keys at once; if every char took one byte (ASCII: no
      // surrogates either), the string lengths are the byte lengths.
      const joined = keys.join('');
      reserve(joined.length * 3 + 1, 0);
      const { written } = encoder.encodeInto(joined, scratch);
      if (written === joined.length) {
        let off = 0;
        for (let i = 0; i < n; i++) {
          off += keys[i].length;
          ends[i] = off;
        }
        return done(written, ends);
      }
    }
    let off = 0;
    for (let i = 0; i < n; i++) {
      const k = keys[i];
      if (typeof k === 'string') {
        text(k, `${what}[${i}]`);
        reserve(off + k.length * 3 + 1, off);
        off += encoder.encodeInto(k, scratch.subarray(off)).written;
      } else {
        const b = bytes(k, `${what}[${i}]`);
        reserve(off + b.length + 1, off);
        scratch.set(b, off);
        off += b.length;
      }
      ends[i] = off;
    }
    return done(off, ends);
  }
  function done(length, ends) {
    const data = scratch.subarray(0, length);
    if (length + ends.length * 4 > PROBE_AT) wasm.rawRoom(length + ends.length * 8);
    if (scratch.length > 1 << 26) scratch = new Uint8Array(1 << 16); // do not hold on to a large buffer
    return [data, ends];
  }

  // ---------------------------------------------------------------- the key buffer
  //
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
  // as UTF-8; its length in bytes. No allocation per call (a wasm-bindgen string
  // parameter is a malloc, a copy and a free); ASCII characters are copied one by one
  // (cheaper than encodeInto for short keys) and need no well-formedness check. Not
  // while a batch is filling the buffer (`packing`: the caller takes another path).
  function oneKey(key) {
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
  function tooManyBytes() {
    fail('TOO_LARGE', `the keys of one call hold more than ${LIMITS.batchBytes} bytes (1 GiB); split the batch`);
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

  function decode(b) {
    try {
      return decoder.decode(b);
    } catch {
      return fail('BAD_UTF8', `a member of ${b.length} bytes is not UTF-8 text; use the …Bytes variant of this method`);
    }
  }

  function unpackStrings(batch) {
    const data = batch.data;
    const ends = batch.ends;
    const out = new Array(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      out[i] = decode(data.subarray(start, ends[i]));
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

  // ---------------------------------------------------------------- handles

  const dispose = typeof Symbol.dispose === 'symbol' ? Symbol.dispose : null;
  const INTERNAL = Symbol('keyroute.internal');
  function freed(what) {
    return fail('INVALID_HANDLE', `this ${what} was freed (free() or a using block); make a new one`);
  }

  /** Rings, slot maps, plans and pools alive in wasm memory (free() and GC lower it). */
  function liveHandles() {
    const c = cluster(false);
    return wasm.rawLiveHandles() + (c ? c.rawLiveHandles() : 0);
  }

  // The cluster module's raw exports (RawSlotMap, the node-list grammar), for SlotMap,
  // ReshardPlan, parseNodes, parseWeights and Ring.fromSpec.
  function clusterWasm(what = 'SlotMap') {
    return guard(() => cluster(true)) || fail('BUSY', `${what} runs in the cluster module, which is not loaded yet: \`await initCluster()\` once first (browsers; Node loads it on first use)`);
  }

  // ---------------------------------------------------------------- ring

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

  // nodes: ["a", "b"], [["a", 2], ...], [{name, weight}], {a: 1, b: 2} or a Map.
  function normalizeNodes(nodes) {
    const names = [];
    const weights = [];
    if (nodes == null) return [names, weights];
    let entries;
    if (nodes instanceof Map) entries = list(nodes.entries(), 'nodes');
    else if (typeof nodes === 'string' || nodes instanceof String || Array.isArray(nodes) || (typeof nodes === 'object' && typeof nodes[Symbol.iterator] === 'function')) {
      if (typeof nodes === 'string' || nodes instanceof String) {
        fail('BAD_TYPE', `nodes must be a list of names, [name, weight] pairs or {name, weight} objects, or an object name → weight, not ${describe(String(nodes))}; to read a node list such as "a=2,b", use Ring.fromSpec(text) or parseNodes(text)`);
      }
      entries = list(nodes, 'nodes');
    } else if (typeof nodes === 'object') entries = list(Object.entries(nodes), 'nodes');
    else fail('BAD_TYPE', `nodes must be a list of names or an object name → weight, not ${describe(nodes)}`);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      let name;
      let weight = 1;
      if (typeof e === 'string') name = e;
      else if (Array.isArray(e)) [name, weight = 1] = e;
      else if (e && typeof e === 'object' && !ArrayBuffer.isView(e)) ({ name, weight = 1 } = e);
      else fail('BAD_TYPE', `nodes[${i}] must be a name, [name, weight] or {name, weight}, not ${describe(e)}`);
      names.push(text(name, `the name of nodes[${i}]`));
      weights.push(weightOf(name, weight, num));
    }
    return [names, weights];
  }

  function ringOptions(o) {
    if (o == null) o = {};
    if (typeof o !== 'object') fail('BAD_TYPE', `ring options must be an object, not ${describe(o)}`);
    for (const k of Object.keys(o)) {
      if (!RING_OPTIONS.includes(k)) fail('BAD_OPTION', `unknown ring option ${JSON.stringify(k)}; the options are ${RING_OPTIONS.join(', ')}`);
    }
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
      const [names, weights] = normalizeNodes(nodes);
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
      const i = typeof key === 'string' && key.length < SHORT && !packing ? h.getKey(sharedKeys.raw, oneKey(key)) : h.getBytes(bytes(key));
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

  // ---------------------------------------------------------------- slots

  const SLOT_COUNT = 16384;

  function keySlot(key) {
    if (typeof key !== 'string' || key.length >= SHORT || packing) return wasm.rawKeySlotBytes(bytes(key));
    const slot = wasm.rawKeySlotKey(sharedKeys.raw, oneKey(key));
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
    return typeof key === 'string' ? decode(tag) : tag;
  }

  /** The side key a least-used pool keeps removed members' counts in (same type as `poolKey`). */
  function sideKey(poolKey) {
    const k = wasm.rawSideKey(bytes(poolKey, 'the pool key'));
    return typeof poolKey === 'string' ? decode(k) : k;
  }

  function index(n, what = 'a node index') {
    return int(n, what);
  }

  function slotNumber(s, what = 'a slot') {
    return int(s, what);
  }

  // host:port (string) or {host, port}: [host, port (NONE: parse host as host:port)].
  function address(a) {
    if (typeof a === 'string') return [text(a, 'an address'), NONE];
    if (a && typeof a === 'object' && !Array.isArray(a)) return [text(a.host, 'the host of an address'), int(a.port, 'the port of an address')];
    return fail('BAD_TYPE', `an address is "host:port" or {host, port}, not ${describe(a)}`);
  }

  function idOption(o) {
    if (o == null) return '';
    if (typeof o !== 'object') fail('BAD_TYPE', `options must be an object such as {id: "…"}, not ${describe(o)}`);
    return o.id === undefined ? '' : text(o.id, 'the node id');
  }

  // A field of a cluster reply: a RESP2 flat [key, value, …] array, a RESP3 Map, or an
  // object (any of `names`).
  // A key of a RESP2 [key, value, …] array as text; a key String() cannot convert (an
  // object without a prototype, one whose toString throws) matches no field name.
  function keyText(k) {
    try {
      return String(k);
    } catch {
      return undefined;
    }
  }
  function field(x, ...names) {
    if (x instanceof Map) {
      for (const n of names) if (x.has(n)) return x.get(n);
      return undefined;
    }
    if (Array.isArray(x)) {
      for (let i = 0; i + 1 < x.length; i += 2) if (names.includes(keyText(x[i]))) return x[i + 1];
      return undefined;
    }
    if (x && typeof x === 'object') {
      for (const n of names) if (x[n] !== undefined) return x[n];
      return undefined;
    }
    return fail('BAD_TYPE', `a reply entry must be an object, a Map or a [key, value, …] array, not ${describe(x)}`);
  }
  function replyText(v, what) {
    if (v == null) return '';
    if (v instanceof Uint8Array) v = decode(v);
    if (typeof v === 'number') v = String(v);
    return text(v, what);
  }
  function replyNumber(v, what) {
    if (v == null) return NaN;
    if (typeof v === 'string' && /^\d+$/.test(v)) v = Number(v);
    return num(v, what);
  }

  class ReshardPlan {
    #raw;
    constructor(token, raw) {
      if (token !== INTERNAL) fail('BAD_TYPE', 'plans come from SlotMap.plan()');
      this.#raw = raw;
      const m = raw.moves();
      const moves = [];
      for (let i = 0; i < m.length; i += 4) {
        moves.push({ start: m[i], end: m[i + 1], from: m[i + 2] === 0xffffffff ? null : m[i + 2], to: m[i + 3], count: m[i + 1] - m[i] + 1 });
      }
      const t = raw.targets();
      const targets = [];
      for (let i = 1; i < t.length; i += 5) {
        targets.push({ node: t[i], weight: t[i + 1], ideal: t[i + 2], before: t[i + 3], after: t[i + 4] });
      }
      /** The moves, in slot order: {start, end, from (null: unassigned), to, count}. */
      this.moves = moves;
      /** Per weighted master: {node, weight, ideal, before, after}. */
      this.targets = targets;
      /** Total slots that change owner. */
      this.slotsMoved = t[0];
    }
    free() {
      if (this.#raw) this.#raw.free();
      this.#raw = null;
    }
    static [INTERNAL](plan) {
      if (!(plan instanceof ReshardPlan)) fail('BAD_TYPE', `applyPlan takes a ReshardPlan, not ${describe(plan)}`);
      return plan.#raw || freed('ReshardPlan');
    }
  }
  if (dispose) ReshardPlan.prototype[dispose] = ReshardPlan.prototype.free;

  class SlotMap {
    #raw;
    constructor(token, raw) {
      this.#raw = token === INTERNAL ? raw : new (clusterWasm().RawSlotMap)();
    }

    /**
     * A map from a `CLUSTER SHARDS` reply: as `sendCommand(['CLUSTER', 'SHARDS'])`
     * returns it (RESP2 [key, value, …] arrays or RESP3 Maps), or objects {slots, nodes:
     * [{id, port, tlsPort, ip, endpoint, hostname, role, replicationOffset, health}]}.
     * `slots` is flat [start, end, start, end, …] or [[start, end], …].
     */
    static fromShards(reply) {
      const shape = [];
      const slots = [];
      const strings = [];
      const nums = [];
      list(reply, 'the CLUSTER SHARDS reply').forEach((shard, i) => {
        const ranges = list(field(shard, 'slots') ?? [], `shard ${i} slots`).flat();
        const nodes = list(field(shard, 'nodes') ?? [], `shard ${i} nodes`);
        if (ranges.length % 2) fail('BAD_RANGE', `shard ${i} lists ${ranges.length} slot bounds; slots come in start, end pairs`);
        shape.push(ranges.length / 2, nodes.length);
        for (const s of ranges) slots.push(replyNumber(s, `a slot of shard ${i}`));
        nodes.forEach((n, j) => {
          const at = `node ${j} of shard ${i}`;
          for (const k of [['id'], ['ip'], ['endpoint'], ['hostname'], ['role'], ['health']]) strings.push(replyText(field(n, ...k), `the ${k[0]} of ${at}`));
          nums.push(replyNumber(field(n, 'port'), `the port of ${at}`), replyNumber(field(n, 'tls-port', 'tlsPort'), `the tls-port of ${at}`), replyNumber(field(n, 'replication-offset', 'replicationOffset'), `the replication-offset of ${at}`));
        });
      });
      const [data, ends] = pack(strings, 'the reply text');
      return new SlotMap(INTERNAL, guard(() => clusterWasm().RawSlotMap.fromShards(Uint32Array.from(shape), Float64Array.from(slots), data, ends, Float64Array.from(nums))));
    }

    /**
     * A map from a `CLUSTER SLOTS` reply: node-redis's `client.clusterSlots()` ([{from,
     * to, master: {host, port, id}, replicas}]) or the raw reply ([start, end, [host,
     * port, id, {metadata}], …]).
     */
    static fromSlots(reply) {
      const shape = [];
      const slots = [];
      const strings = [];
      const ports = [];
      const node = (n, at) => {
        let endpoint;
        let port;
        let id;
        let meta;
        let ip;
        let hostname;
        if (Array.isArray(n)) {
          [endpoint, port, id, meta] = n;
          if (meta && typeof meta === 'object') {
            ip = field(meta, 'ip');
            hostname = field(meta, 'hostname');
          }
        } else if (n && typeof n === 'object') {
          // node-redis 4+: {host, port, id}; @redis/client 1.x: {ip, port, id}.
          ({ port, id, ip, hostname } = n);
          endpoint = n.host ?? n.endpoint ?? n.ip;
        } else fail('BAD_TYPE', `${at} must be [host, port, id] or {host, port, id}, not ${describe(n)}`);
        strings.push(replyText(endpoint, `the host of ${at}`), replyText(id, `the id of ${at}`), replyText(ip, `the ip of ${at}`), replyText(hostname, `the hostname of ${at}`));
        ports.push(replyNumber(port, `the port of ${at}`));
      };
      list(reply, 'the CLUSTER SLOTS reply').forEach((e, i) => {
        let from;
        let to;
        let master;
        let replicas;
        if (Array.isArray(e)) [from, to, master, ...replicas] = e;
        else if (e && typeof e === 'object') ({ from = e.start, to = e.end, master, replicas = [] } = e);
        else fail('BAD_TYPE', `entry ${i} of CLUSTER SLOTS must be an array or {from, to, master, replicas}, not ${describe(e)}`);
        replicas = list(replicas, `the replicas of entry ${i}`);
        shape.push(replicas.length);
        slots.push(replyNumber(from, `the first slot of entry ${i}`), replyNumber(to, `the last slot of entry ${i}`));
        node(master, `the master of entry ${i}`);
        replicas.forEach((r, j) => node(r, `replica ${j} of entry ${i}`));
      });
      const [data, ends] = pack(strings, 'the reply text');
      return new SlotMap(INTERNAL, guard(() => clusterWasm().RawSlotMap.fromSlots(Uint32Array.from(shape), Float64Array.from(slots), data, ends, Float64Array.from(ports))));
    }

    get #h() {
      return this.#raw || freed('SlotMap');
    }

    /** Adds a master (no slots yet) at "host:port" or {host, port}; returns its index. */
    addMaster(addr, options) {
      const h = this.#h;
      const [host, port] = address(addr);
      return h.addNode(NONE, idOption(options), host, port);
    }

    /** Adds a replica of master index `master`; returns its index. */
    addReplica(master, addr, options) {
      const h = this.#h;
      const [host, port] = address(addr);
      return h.addNode(index(master, 'the master index'), idOption(options), host, port);
    }

    /** Sets a node's health: 'online', 'loading', 'failed' (anything else: 'unknown'). */
    setHealth(node, health) {
      this.#h.setHealth(index(node), text(health, 'the health'));
      return this;
    }

    /** Gives slots start..=end to master `node`. */
    assign(start, end, node) {
      this.#h.assign(slotNumber(start, 'the first slot'), slotNumber(end, 'the last slot'), index(node));
      return this;
    }

    /** Makes slots start..=end unowned. */
    unassign(start, end) {
      this.#h.assign(slotNumber(start, 'the first slot'), slotNumber(end, 'the last slot'), NONE);
      return this;
    }

    /** The index of the master owning `slot`, or null. */
    slotOwner(slot) {
      const i = this.#h.owner(slotNumber(slot));
      return i < 0 ? null : i;
    }

    /** The node serving `slot`, or null. */
    nodeForSlot(slot) {
      const i = this.slotOwner(slot);
      return i === null ? null : this.node(i);
    }

    /** The node serving `key`'s slot, or null. */
    nodeForKey(key) {
      const i = this.#h.ownerOfKey(bytes(key));
      return i < 0 ? null : this.node(i);
    }

    /** key → {key, tag, slot, node}: the whole route of one key. */
    lookup(key) {
      const slot = keySlot(key);
      return { key, tag: hashTag(key), slot, node: this.nodeForSlot(slot) };
    }

    /** The owner index of each key's slot (0xFFFFFFFF: unassigned), in one call. */
    ownersOfKeys(keys) {
      const h = this.#h;
      const slots = keySlots(keys);
      // The owner of each key's slot, from the owners of all slots (0xFFFF: none).
      return guard(() => {
        // owners() holds indexes as 16 bits: a map of 65535 nodes or more asks per slot.
        const table = h.summary()[2] < 0xffff ? h.owners() : null;
        const out = new Uint32Array(slots.length);
        for (let i = 0; i < slots.length; i++) {
          const o = table ? table[slots[i]] : h.owner(BigInt(slots[i]));
          out[i] = o === 0xffff || o < 0 ? 0xffffffff : o;
        }
        return out;
      });
    }

    /** The owner index of all 16384 slots as a Uint16Array (0xFFFF: unassigned). */
    owners() {
      return this.#h.owners();
    }

    /** Slots owned per node, in index order (Uint32Array). */
    slotCounts() {
      return this.#h.slotCounts();
    }

    /** Runs of slots with one owner: [{start, end, owner}] (owner null: unassigned). */
    ranges() {
      const r = this.#h.ranges();
      const out = [];
      for (let i = 0; i < r.length; i += 3) out.push({ start: r[i], end: r[i + 1], owner: r[i + 2] === 0xffffffff ? null : r[i + 2] });
      return out;
    }

    get unassignedCount() {
      return this.#h.summary()[0];
    }
    get isComplete() {
      return this.#h.summary()[1] === 1;
    }
    get size() {
      return this.#h.summary()[2];
    }

    /** One node: {index, id, host, port, address, role, health, name, master, replicas}. */
    node(i) {
      const [id, host, port, role, health, name, addr, master, ...replicas] = this.#h.nodeInfo(index(i));
      return { index: Number(i), id, host, port: Number(port), address: addr, role, health, name, master: master === '' ? null : Number(master), replicas: replicas.map(Number) };
    }

    nodes() {
      const out = [];
      for (let i = 0, n = this.size; i < n; i++) out.push(this.node(i));
      return out;
    }

    /** Index of the node with cluster id `id`, or null. */
    findId(id) {
      const i = this.#h.findId(text(id, 'the node id'));
      return i < 0 ? null : i;
    }

    /**
     * Follows a `MOVED`/`ASK` error message. MOVED updates that one slot (adding a master
     * for an unknown address) and asks for a refresh; ASK never changes the map.
     * Returns {kind, slot, node, added, host, port, refresh}.
     */
    applyRedirect(message, currentHost = '') {
      const [kind, slot, node, added, host, port] = this.#h.applyRedirect(text(message, 'the error message'), text(currentHost, 'the current host'));
      const n = Number(node);
      return { kind, slot: Number(slot), node: n < 0 ? null : n, added: added === '1', host, port: Number(port), refresh: kind === 'moved' };
    }

    /**
     * The fewest slot moves bringing every weighted master within one slot of its share.
     * `weights`: [[nodeIndex or id/name/address, weight], ...], a Map, or {nodeIdOrName:
     * weight} (parseWeights(text) gives the pairs); weight 0 drains a master.
     */
    plan(weights) {
      const h = this.#h;
      let entries;
      if (weights instanceof Map) entries = list(weights.entries(), 'weights');
      else if (Array.isArray(weights)) entries = list(weights, 'weights');
      else if (weights && typeof weights === 'object' && typeof weights[Symbol.iterator] !== 'function') entries = Object.entries(weights);
      else fail('BAD_TYPE', `weights must be [[node, weight], ...], a Map or {node: weight}, not ${describe(weights)}`);
      const all = entries.some((e) => Array.isArray(e) && typeof e[0] === 'string') ? this.nodes() : null;
      const nodes = [];
      const ws = [];
      for (const e of entries) {
        if (!Array.isArray(e)) fail('BAD_TYPE', `a weight entry is [node, weight], not ${describe(e)}`);
        const [k, w] = e;
        let idx = k;
        if (typeof k === 'string') {
          const found = all.find((n) => n.id === k || n.name === k || n.address === k);
          if (!found) fail('UNKNOWN_NODE', `no node ${JSON.stringify(k)} in this slot map (give an index, an id or host:port)`);
          idx = found.index;
        }
        nodes.push(num(idx, 'a node index'));
        ws.push(weightOf(k, w, num));
      }
      return new ReshardPlan(INTERNAL, h.plan(Float64Array.from(nodes), Float64Array.from(ws)));
    }

    /** Applies a plan (all moves); the map is unchanged if the plan is stale. */
    applyPlan(plan) {
      this.#h.applyPlan(ReshardPlan[INTERNAL](plan));
      return this;
    }

    clone() {
      return new SlotMap(INTERNAL, this.#h.clone());
    }

    free() {
      if (this.#raw) this.#raw.free();
      this.#raw = null;
    }
  }
  if (dispose) SlotMap.prototype[dispose] = SlotMap.prototype.free;

  // ---------------------------------------------------------------- least used

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
      return b === undefined ? null : decode(b);
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

  return {
    Ring,
    diff,
    parseNodes,
    parseWeights,
    PROFILES,
    keySlot,
    keySlots,
    groupBySlot,
    hashTag,
    sideKey,
    SLOT_COUNT,
    SlotMap,
    ReshardPlan,
    Pool,
    SCRIPTS,
    LEAST_USED_SCRIPT: SCRIPTS['least-used'].text,
    LEAST_USED_SHA1: SCRIPTS['least-used'].sha1,
    ERROR_CODES,
    LIMITS,
    liveHandles,
  };
}
