// What every factory of the package needs, written once: the errors (codes of core's
// ErrorCode), the checks of what callers pass (strings, integers, lists, bytes) before it
// crosses into wasm, packing lists into one buffer and unpacking the answers.
//
// `createHelpers(wasm)` takes any of the package's .wasm modules (main, cluster, cache,
// fleet: each exports rawErrorCodes, rawLimit and rawRoom) and returns the helpers bound to
// it. scripts/build.mjs bundles this file into each output (dist/api.*, cache-api.cjs,
// fleet-api.*) beside the factories that import it; it is plain ES2020 with no import and
// no export other than the one below.

export function createHelpers(wasm) {
  'use strict';

  const encoder = new TextEncoder();
  // fatal: text that is not UTF-8 is BAD_UTF8, never U+FFFD.
  const decoder = new TextDecoder('utf-8', { fatal: true });

  // ---------------------------------------------------------------- errors

  const ERROR_CODES = {};
  {
    const c = wasm.rawErrorCodes();
    for (let i = 0; i < c.length; i += 2) ERROR_CODES[c[i]] = Number(c[i + 1]);
    Object.freeze(ERROR_CODES);
  }

  // An Error (a TypeError for BAD_TYPE) with `code` and the properties of `extra`.
  function error(code, message, extra) {
    const e = code === 'BAD_TYPE' ? new TypeError(message) : new Error(message);
    e.code = code;
    if (extra) Object.assign(e, extra);
    return e;
  }
  function fail(code, message, extra) {
    throw error(code, message, extra);
  }
  // Whether `e` is one of keyroute's errors (a code of ERROR_CODES).
  function coded(e) {
    return e instanceof Error && typeof e.code === 'string' && e.code in ERROR_CODES;
  }
  // An error that did not come from keyroute's checks (a JavaScript allocation that
  // failed, a wasm trap) becomes one with a code: nothing untagged leaves the package.
  function tagged(e) {
    if (coded(e)) return e;
    const text = e instanceof Error ? e.message : String(e);
    // A RangeError here is an allocation JavaScript refused (an array or string too long).
    if (e instanceof RangeError) return error('TOO_LARGE', `the answer is too large for this JavaScript engine (${text}); ask for less at a time`, { cause: e });
    const trap = typeof WebAssembly === 'object' && e instanceof WebAssembly.RuntimeError;
    return error('INTERNAL', `keyroute failed unexpectedly (${text}); this is a bug, please report it${trap ? ' (the WebAssembly module stopped: reload it before using it again)' : ''}`, { cause: e });
  }
  function guard(f) {
    try {
      return f();
    } catch (e) {
      throw tagged(e);
    }
  }

  // ---------------------------------------------------------------- limits

  // Core's limits of one call (keyroute::keys, keyroute::select) and SLOT_COUNT, as
  // rawLimit gives them.
  const L = [0, 1, 2, 3, 4].map((i) => wasm.rawLimit(i));
  const LIMITS = Object.freeze({
    /** Keys (or members, or nodes) in one batch call: core's MAX_KEYS_PER_CALL. */
    batchKeys: L[0],
    /** Bytes of all keys of one batch call: core's MAX_BATCH_BYTES. */
    batchBytes: L[1],
    /** Bytes of one key: core's MAX_KEY_BYTES, the largest string Redis holds. */
    keyBytes: L[2],
    /** Picks in one pickMany call: core's MAX_PICKS_PER_CALL. */
    picksPerCall: L[3],
  });
  // The hash slots of Redis Cluster (core's keyroute::slot::SLOT_COUNT).
  const SLOT_COUNT = L[4];
  // Above this many bytes, the wasm memory is probed before a buffer is handed over
  // (wasm-bindgen's copy would trap where the probe answers TOO_LARGE).
  const PROBE_AT = 1 << 24;

  // ---------------------------------------------------------------- values

  // A value as a message shows it.
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
      fail('BAD_UTF8', `${what} ${describe(s)} holds a lone surrogate (half of a UTF-16 pair), which UTF-8 cannot encode; keyroute refuses it rather than replace it with U+FFFD`);
    }
    return s;
  }

  // Bytes as text: BAD_UTF8 (with `hint`, what to do instead) when they are not UTF-8.
  function utf8(b, what, hint = '') {
    try {
      return decoder.decode(b);
    } catch {
      return fail('BAD_UTF8', `${what} (${b.length} bytes) is not UTF-8 text${hint}`);
    }
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

  function bool(b, what) {
    if (typeof b !== 'boolean') fail('BAD_TYPE', `${what} must be true or false, not ${describe(b)}`);
    return b;
  }

  // An options object (undefined or null: none) whose names are all in `allowed`.
  function options(o, allowed, what) {
    if (o === undefined || o === null) return {};
    if (typeof o !== 'object' || Array.isArray(o)) fail('BAD_TYPE', `${what} must be an object, not ${describe(o)}`);
    for (const k of Object.keys(o)) {
      if (!allowed.includes(k)) fail('BAD_OPTION', `unknown option ${JSON.stringify(k)} of ${what}; the options are ${allowed.join(', ')}`);
    }
    return o;
  }

  // ---------------------------------------------------------------- lists and bytes

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
  function tooManyBytes() {
    fail('TOO_LARGE', `the keys of one call hold more than ${LIMITS.batchBytes} bytes (1 GiB); split the batch`);
  }

  // One key or value as bytes: a string (UTF-8) or bytes (any view, or an ArrayBuffer).
  function bytes(key, what = 'a key') {
    let b;
    if (typeof key === 'string') {
      if (key.length > LIMITS.keyBytes) tooLargeKey(key.length, what, 'characters');
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
  function tooLargeKey(n, what, unit = 'bytes') {
    fail('TOO_LARGE', `${what} of ${n} ${unit} is above the limit of ${LIMITS.keyBytes} bytes (512 MiB, the largest string Redis holds)`);
  }

  // One growable scratch buffer for packing (its bytes are copied out of it).
  let scratch = new Uint8Array(1 << 16);
  function reserve(n, keep) {
    if (n > LIMITS.batchBytes + 4) tooManyBytes();
    if (scratch.length >= n) return;
    let size = scratch.length;
    while (size < n) size *= 2;
    const next = new Uint8Array(Math.min(size, LIMITS.batchBytes + 4));
    if (keep) next.set(scratch.subarray(0, keep));
    scratch = next;
  }

  // Packs a list of keys (strings or bytes) into one byte buffer + end offsets: one
  // boundary crossing per batch. The buffer is the caller's (a copy of the scratch).
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
        return packed(written, ends);
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
    return packed(off, ends);
  }
  function packed(length, ends) {
    if (length + ends.length * 4 > PROBE_AT) wasm.rawRoom(length + ends.length * 8);
    const data = scratch.slice(0, length);
    if (scratch.length > 1 << 26) scratch = new Uint8Array(1 << 16); // do not hold on to a large buffer
    return [data, ends];
  }

  // A packed batch from wasm ({data, ends}) as a list: `each(data, start, end)` per item.
  function unpack(batch, each) {
    const data = batch.data;
    const ends = batch.ends;
    const out = new Array(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      out[i] = each(data, start, ends[i]);
      start = ends[i];
    }
    return out;
  }
  // As strings (`what` names one item in the BAD_UTF8 message, `hint` what to do instead).
  function unpackStrings(batch, what = 'a member', hint = '; use the …Bytes variant of this method') {
    return unpack(batch, (d, s, e) => utf8(d.subarray(s, e), what, hint));
  }
  // As Uint8Arrays of their own.
  function unpackBytes(batch) {
    return unpack(batch, (d, s, e) => d.slice(s, e));
  }

  // ---------------------------------------------------------------- nodes

  // nodes: ["a", "b"], [["a", 2], ...], [{name, weight}], {a: 1, b: 2} or a Map (null:
  // none); [names, weights]. `textHint` is what to use for a node list in text.
  function normalizeNodes(nodes, textHint) {
    const names = [];
    const weights = [];
    if (nodes == null) return [names, weights];
    let entries;
    if (nodes instanceof Map) entries = list(nodes.entries(), 'nodes');
    else if (typeof nodes === 'string' || nodes instanceof String) {
      fail('BAD_TYPE', `nodes must be a list of names, [name, weight] pairs or {name, weight} objects, or an object name → weight, not ${describe(String(nodes))}${textHint}`);
    } else if (typeof nodes === 'object' && typeof nodes[Symbol.iterator] === 'function') entries = list(nodes, 'nodes');
    else if (typeof nodes === 'object') entries = list(Object.entries(nodes), 'nodes');
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

  // A node's weight, checked as an integer (`convert`: int or num); core checks its range.
  function weightOf(name, w, convert = int) {
    // The node may be a name or an index (a number or a BigInt, which JSON cannot write).
    const node = typeof name === 'string' ? JSON.stringify(name) : typeof name === 'number' || typeof name === 'bigint' ? String(name) : describe(name);
    if (typeof w === 'string') fail('BAD_TYPE', `node ${node} has weight ${JSON.stringify(w)}, a string; weights are numbers (write ${/^\s*-?\d+\s*$/.test(w) ? w.trim() : 'an integer'}, without quotes)`);
    if (typeof w !== 'number' && typeof w !== 'bigint') fail('BAD_TYPE', `node ${node} has weight ${describe(w)}; weights are integers from 1 to 4294967295`);
    return convert(w, `node ${node} has weight`, 'BAD_WEIGHT');
  }

  // ---------------------------------------------------------------- handles

  const dispose = typeof Symbol.dispose === 'symbol' ? Symbol.dispose : null;
  const INTERNAL = Symbol('keyroute.internal');
  function freed(what) {
    return fail('INVALID_HANDLE', `this ${what} was freed (free() or a using block); make a new one`);
  }

  return {
    encoder,
    ERROR_CODES,
    error,
    fail,
    coded,
    guard,
    LIMITS,
    SLOT_COUNT,
    PROBE_AT,
    describe,
    wellFormed,
    text,
    utf8,
    NONE,
    int,
    num,
    bool,
    options,
    list,
    tooMany,
    tooManyBytes,
    bytes,
    byteKey,
    tooLargeKey,
    pack,
    unpack,
    unpackStrings,
    unpackBytes,
    normalizeNodes,
    weightOf,
    dispose,
    INTERNAL,
    freed,
  };
}
