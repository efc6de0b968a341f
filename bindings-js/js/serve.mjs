// `keyroute/serve` (Node): a client and a loader worker of `keyroute serve` over the
// `zeromq` npm package (v6), as Python's keyroute.serve (bindings-py/python/keyroute/
// serve.py) and the Rust LoaderWorker (service/src/loader_worker.rs). docs/protocol.md is
// the wire protocol.
//
// `createServeApi(wasm, loadZmq, node)`: `wasm` the Node module (the cache .wasm, which
// carries core's frame codec: keyroute::frame), `loadZmq()` the zeromq module (required on
// first use: it is an optional peer dependency), `node` what comes from Node
// (`randomBytes`). scripts/build.mjs bundles it with helpers.mjs into dist/serve-api.cjs.
//
// The header is written and read by core's codec through the .wasm, and the message types,
// transport errors and header constants are core's tables: no layout or number of the
// protocol is written here. Every error thrown is an Error with a `code` of ERROR_CODES.

import { createHelpers } from './helpers.mjs';

export function createServeApi(wasm, loadZmq, node) {
  'use strict';

  const h = createHelpers(wasm);
  const { ERROR_CODES, error, fail, guard, describe, text, int, options, bytes, unpack } = h;

  // ---------------------------------------------------------------- core's tables

  // Core's tables of the protocol (keyroute::frame), in one batch from the .wasm.
  const TYPES = {};
  // The client types the service never answers (app.start); any other is answered (an
  // unknown type or one a client may not send with UNKNOWN_TYPE).
  const UNANSWERED = new Set();
  const TRANSPORT_ERRORS = {};
  const SUMMARIES = new Map();
  let C;
  {
    const b = wasm.rawFrameTables();
    let names;
    let c;
    try {
      names = unpack(b, (d, s, e) => Buffer.from(d.subarray(s, e)).toString('utf8'));
      c = b.counts;
    } finally {
      b.free();
    }
    const nt = c[0];
    for (let i = 0; i < nt; i++) {
      TYPES[names[i]] = c[1 + 2 * i];
      if ((c[2 + 2 * i] & 3) === 1) UNANSWERED.add(c[1 + 2 * i]);
    }
    const ne = c[1 + 2 * nt];
    for (let i = 0; i < ne; i++) {
      const n = c[2 + 2 * nt + i];
      TRANSPORT_ERRORS[n] = names[nt + 2 * i];
      SUMMARIES.set(n, names[nt + 2 * i + 1]);
    }
    C = c.slice(2 + 2 * nt + ne);
  }
  Object.freeze(TYPES);
  Object.freeze(TRANSPORT_ERRORS);
  /** The protocol version core writes and reads. */
  const VERSION = C[0];
  /** The system byte of `keyroute serve`. */
  const SYSTEM = C[1];
  /** The bit a reply sets on its request's type. */
  const REPLY_BIT = C[2];
  /** Flag bit 0: the reply is a data error (its body is {code, message}). */
  const FLAG_DATA_ERROR = C[3];
  /** The header's length with an empty session id. */
  const HEADER_FIXED_LEN = C[4];
  /** The longest header a reader accepts. */
  const MAX_HEADER_LEN = C[5];
  const T = (name) => TYPES[name];

  // ---------------------------------------------------------------- the header

  const NO_BYTES = Buffer.alloc(0);

  function typeNumber(t) {
    if (typeof t === 'string') {
      if (!(t in TYPES)) fail('BAD_TYPE', `unknown message type ${JSON.stringify(t)}; the types are ${Object.keys(TYPES).join(', ')}`);
      return TYPES[t];
    }
    return Number(int(t, 'the message type'));
  }

  function byteField(x, what) {
    if (x === undefined || x === null) return NO_BYTES;
    return bytes(x, what);
  }

  /**
   * The header frame (a Buffer), as core's codec writes it. `requestId` is padded or cut
   * to 16 bytes; a session id over 255 bytes is TOO_LARGE, a field outside its width
   * OUT_OF_RANGE. Any version, system or type is written as given.
   */
  function encodeHeader(msgType, opts) {
    const o = options(opts, ['requestId', 'priority', 'deadlineMs', 'sessionId', 'transportError', 'flags', 'version', 'system'], 'the header options');
    const n = (x, what, dflt) => (x === undefined ? BigInt(dflt) : int(x, what));
    return Buffer.from(guard(() => wasm.rawFrameEncode(
      n(o.version, 'version', VERSION),
      n(o.system, 'system', SYSTEM),
      BigInt(typeNumber(msgType)),
      n(o.transportError, 'transportError', 0),
      n(o.flags, 'flags', 0),
      n(o.priority, 'priority', 0),
      n(o.deadlineMs, 'deadlineMs', 0),
      byteField(o.requestId, 'the request id'),
      byteField(o.sessionId, 'the session id'),
    )));
  }

  /**
   * Every field of a header frame, as core's codec reads it: {version, system, msgType,
   * transportError, flags, priority, deadlineMs, requestId, sessionId} (the ids as
   * Buffers). OUT_OF_RANGE when it is too short, runs past its session id, or is of
   * another version or system; TOO_LARGE above core's 512 bytes.
   */
  // Where core writes a header's request id and session id (the longest they can be).
  const ids = new Uint8Array(16 + 255);
  function decodeHeader(frame) {
    const c = guard(() => wasm.rawFrameDecode(bytes(frame, 'the header frame'), ids));
    return {
      version: c[0],
      system: c[1],
      msgType: c[2],
      transportError: c[3],
      flags: c[4],
      priority: c[5],
      deadlineMs: c[6],
      requestId: Buffer.from(ids.subarray(0, 16)),
      sessionId: Buffer.from(ids.subarray(16, 16 + c[7])),
    };
  }

  /** A reply: its header, its JSON body ({} when empty) and its payload (a Buffer, or null). */
  class Reply {
    constructor(header, body, payload) {
      this.header = header;
      this.body = body;
      this.payload = payload;
    }
    /** The transport error's name (QUEUE_FULL, NO_LOADER, ...), or null. */
    get transportError() {
      const t = this.header.transportError;
      return t ? TRANSPORT_ERRORS[t] || String(t) : null;
    }
    /** The data error's code (flag bit 0: SESSION_EXPIRED, NOT_FOUND, ...), or null. */
    get errorCode() {
      return this.header.flags & FLAG_DATA_ERROR ? String(this.body.code) : null;
    }
    /** The data error's message, or what the transport error means, or null. */
    get errorMessage() {
      if (this.header.flags & FLAG_DATA_ERROR) return String(this.body.message);
      return this.header.transportError ? SUMMARIES.get(this.header.transportError) || null : null;
    }
    /** Whether it is neither a transport error nor a data error. */
    get ok() {
      return this.header.transportError === 0 && !(this.header.flags & FLAG_DATA_ERROR);
    }
  }

  // ---------------------------------------------------------------- sockets

  let zmqModule = null;
  function zmq() {
    if (zmqModule === null) {
      try {
        zmqModule = loadZmq();
      } catch (e) {
        fail('BAD_CONFIG', `keyroute/serve runs over the zeromq package, which is not installed: npm install zeromq@6 (${e && e.message})`, { cause: e });
      }
    }
    return zmqModule;
  }

  // A duration option in ms: an integer from `min` to 2^31 - 1 (setTimeout's range).
  function ms(x, what, dflt, min = 1) {
    const v = x === undefined ? dflt : Number(int(x, what));
    if (!(v >= min && v <= 0x7fffffff)) fail('OUT_OF_RANGE', `${what} ${v} is outside ${min}..=2147483647 ms`);
    return v;
  }
  function count(x, what, dflt, min, max) {
    const v = x === undefined ? dflt : Number(int(x, what));
    if (!(v >= min && v <= max)) fail('OUT_OF_RANGE', `${what} ${v} is outside ${min}..=${max}`);
    return v;
  }

  // CURVE options of a socket: {serverKey, publicKey, secretKey} (Z85 strings, as
  // zmq.curveKeyPair() makes them).
  function curveOptions(curve) {
    if (curve === undefined || curve === null) return {};
    const c = options(curve, ['serverKey', 'publicKey', 'secretKey'], 'the curve keys');
    for (const k of ['serverKey', 'publicKey', 'secretKey']) {
      if (typeof c[k] !== 'string' || c[k].length !== 40) fail('BAD_TYPE', `curve.${k} must be a Z85 key (40 characters), not ${describe(c[k])}`);
    }
    return { curveServerKey: c.serverKey, curvePublicKey: c.publicKey, curveSecretKey: c.secretKey };
  }

  function jsonBody(body, what) {
    if (body === undefined || body === null) return NO_BYTES;
    if (typeof body !== 'object' || Array.isArray(body) || ArrayBuffer.isView(body)) fail('BAD_TYPE', `${what} must be an object (the JSON body), not ${describe(body)}`);
    return Buffer.from(JSON.stringify(body), 'utf8');
  }

  // A body frame as an object ({} when empty); null when it is not a JSON object.
  function parseBody(frame) {
    if (!frame || frame.length === 0) return {};
    try {
      const v = JSON.parse(frame.toString('utf8'));
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : null;
    } catch {
      return null;
    }
  }

  // Serialised sends on one socket (zeromq allows one send in progress at a time).
  class Sender {
    #sock;
    #chain = Promise.resolve();
    constructor(sock) {
      this.#sock = sock;
    }
    #busy = 0;
    // Queues `frames`; `still()` is asked just before sending (false: skipped). With no
    // send in progress it goes at once.
    send(frames, still = () => true) {
      const p = this.#busy === 0 ? this.#sock.send(frames) : this.#chain.then(() => (still() ? this.#sock.send(frames) : undefined));
      this.#busy++;
      this.#chain = p.catch(() => {}).finally(() => {
        this.#busy--;
      });
      return p;
    }
    // Resolves once everything queued so far was handed to the socket (or failed).
    flushed() {
      return this.#chain;
    }
  }

  const DEFAULT_TIMEOUT_MS = 10000;
  const DEFAULT_MAX_IN_FLIGHT = 1024;
  const MAX_IN_FLIGHT = 1 << 20;
  // The largest message a socket accepts (libzmq drops the connection past it): 4 times
  // the service's default --max-frame.
  const DEFAULT_MAX_MESSAGE_BYTES = 64 << 20;

  /**
   * A DEALER socket to the service's client endpoint, many requests in flight: request()
   * resolves to the Reply matched by its request id (a transport or data error is a
   * Reply too: `reply.transportError`, `reply.errorCode`). At most `maxInFlight`
   * requests wait for replies at once (BUSY past it); each waits at most its timeout
   * (CACHE_TIMEOUT; a reply after it is dropped).
   */
  class Client {
    #sock;
    #sender;
    #pending = new Map();
    #prefix = Buffer.from(node.randomBytes(8));
    #seq = 0n;
    #timeoutMs;
    #maxInFlight;
    #closed = false;
    #dropped = 0;
    #reading;

    constructor(endpoint, opts) {
      const o = options(opts, ['timeoutMs', 'maxInFlight', 'curve', 'maxMessageBytes'], 'the Client options');
      text(endpoint, 'the endpoint');
      this.#timeoutMs = ms(o.timeoutMs, 'timeoutMs', DEFAULT_TIMEOUT_MS);
      this.#maxInFlight = count(o.maxInFlight, 'maxInFlight', DEFAULT_MAX_IN_FLIGHT, 1, MAX_IN_FLIGHT);
      const maxMessageSize = count(o.maxMessageBytes, 'maxMessageBytes', DEFAULT_MAX_MESSAGE_BYTES, 1, 2 ** 31 - 1);
      const { Dealer } = zmq();
      this.#sock = new Dealer({ linger: 0, maxMessageSize, ...curveOptions(o.curve) });
      this.#sock.connect(endpoint);
      this.#sender = new Sender(this.#sock);
      this.#reading = this.#read();
    }

    /** Requests waiting for their replies. */
    get inFlight() {
      return this.#pending.size;
    }
    /** Replies dropped: malformed, or for no request waiting (late, after a timeout). */
    get dropped() {
      return this.#dropped;
    }

    /**
     * Sends a request of type `msgType` (a name of TYPES, or a number) with `body` (a
     * JSON object) and `payload` (bytes or a string), and resolves to its Reply; for
     * `app.start`, which is never answered, to null once it is sent. Options: priority
     * (0-255, higher first), deadlineMs (the service's deadline from receipt; 0 = its
     * default), sessionId, requestId (16 bytes; default: unique per client), timeoutMs
     * (how long to wait here; default the client's, or deadlineMs + 1000 when longer).
     */
    request(msgType, body, payload, opts) {
      try {
        return this.#request(msgType, body, payload, opts);
      } catch (e) {
        return Promise.reject(e);
      }
    }

    #request(msgType, body, payload, opts) {
      const o = options(opts, ['priority', 'deadlineMs', 'sessionId', 'requestId', 'timeoutMs'], 'the request options');
      if (this.#closed) fail('INVALID_HANDLE', 'this Client is closed; make a new one');
      const type = typeNumber(msgType);
      let rid;
      if (o.requestId === undefined) {
        this.#seq += 1n;
        rid = Buffer.alloc(16);
        this.#prefix.copy(rid, 0);
        rid.writeBigUInt64BE(BigInt.asUintN(64, this.#seq), 8);
      } else {
        const given = bytes(o.requestId, 'the request id');
        rid = Buffer.alloc(16);
        Buffer.from(given.buffer, given.byteOffset, Math.min(16, given.byteLength)).copy(rid);
      }
      const answered = !UNANSWERED.has(type);
      const key = rid.toString('latin1');
      if (answered && this.#pending.has(key)) fail('BAD_OPTION', `request id ${rid.toString('hex')} is already waiting for its reply`);
      if (answered && this.#pending.size >= this.#maxInFlight) {
        fail('BUSY', `${this.#pending.size} requests of this Client are waiting for replies (maxInFlight ${this.#maxInFlight}); await some replies first, or raise maxInFlight`);
      }
      const deadlineMs = o.deadlineMs === undefined ? 0 : Number(int(o.deadlineMs, 'deadlineMs'));
      const timeoutMs = o.timeoutMs !== undefined ? ms(o.timeoutMs, 'timeoutMs') : Math.max(this.#timeoutMs, deadlineMs > 0 ? Math.min(deadlineMs + 1000, 0x7fffffff) : 0);
      const head = encodeHeader(type, { requestId: rid, priority: o.priority, deadlineMs, sessionId: o.sessionId });
      const frames = [head, jsonBody(body, 'the body')];
      if (payload !== undefined && payload !== null) frames.push(Buffer.from(bytes(payload, 'the payload')));
      if (!answered) return this.#sender.send(frames).then(() => null, (e) => {
        throw error('INTERNAL', `sending failed: ${e && e.message}`, { cause: e });
      });
      return new Promise((resolve, reject) => {
        const entry = { resolve, reject, timer: null };
        entry.timer = setTimeout(() => {
          if (this.#pending.get(key) === entry) this.#pending.delete(key);
          reject(error('CACHE_TIMEOUT', `no reply to ${describeType(type)} (request id ${rid.toString('hex')}) within ${timeoutMs} ms`));
        }, timeoutMs);
        this.#pending.set(key, entry);
        this.#sender.send(frames, () => this.#pending.get(key) === entry).catch((e) => {
          if (this.#pending.get(key) !== entry) return;
          this.#pending.delete(key);
          clearTimeout(entry.timer);
          reject(this.#closed ? error('INVALID_HANDLE', 'the Client was closed before the request was sent') : error('INTERNAL', `sending failed: ${e && e.message}`, { cause: e }));
        });
      });
    }

    async #read() {
      try {
        for await (const frames of this.#sock) {
          let header;
          try {
            header = decodeHeader(frames[0]);
          } catch {
            this.#dropped++;
            continue;
          }
          const key = header.requestId.toString('latin1');
          const entry = this.#pending.get(key);
          if (!entry) {
            this.#dropped++;
            continue;
          }
          this.#pending.delete(key);
          clearTimeout(entry.timer);
          const body = parseBody(frames[1]);
          if (body === null) entry.reject(error('BAD_TYPE', `the reply to request ${header.requestId.toString('hex')} has a body that is not a JSON object`));
          else entry.resolve(new Reply(header, body, frames.length > 2 ? frames[2] : null));
        }
      } catch {
        // closed
      }
    }

    /** Closes the socket; requests still waiting are rejected (INVALID_HANDLE). */
    async close() {
      if (this.#closed) return;
      this.#closed = true;
      for (const [key, entry] of this.#pending) {
        this.#pending.delete(key);
        clearTimeout(entry.timer);
        entry.reject(error('INVALID_HANDLE', 'the Client was closed while the request waited for its reply'));
      }
      this.#sock.close();
      await this.#reading;
    }
  }
  if (typeof Symbol.asyncDispose === 'symbol') Client.prototype[Symbol.asyncDispose] = Client.prototype.close;

  function describeType(n) {
    const name = Object.keys(TYPES).find((k) => TYPES[k] === n);
    return name || `type ${n}`;
  }

  // ---------------------------------------------------------------- the loader worker

  /** Throw it from a load function to answer `failed` with a code of your own. */
  class LoadFailed extends Error {
    constructor(code, message) {
      super(String(message));
      this.name = 'LoadFailed';
      this.code = text(code, 'the code');
    }
  }

  // A code a worker may send in `failed` (docs/protocol.md: 1-64 printable ASCII bytes
  // without spaces, not starting with `~`); anything else becomes BACKEND_ERROR.
  function workerCode(e) {
    const c = e !== null && typeof e === 'object' && typeof e.code === 'string' ? e.code : '';
    return /^[!-}][!-~]{0,63}$/.test(c) ? c : 'BACKEND_ERROR';
  }
  function messageOf(e) {
    try {
      return e instanceof Error ? e.message : String(e);
    } catch {
      return 'the load function failed';
    }
  }

  // {client, kind, fence} of a `load` body, or null when it is not {client: string, kind:
  // string, fence: integer >= 0} (skipped, as the Python and Rust workers do).
  function loadJob(frame) {
    const b = parseBody(frame);
    if (b === null || typeof b.client !== 'string' || typeof b.kind !== 'string') return null;
    if (!Number.isSafeInteger(b.fence) || b.fence < 0) return null;
    return { client: b.client, kind: b.kind, fence: b.fence };
  }

  /**
   * A loader worker for `kinds` at the broker's worker endpoint: `fn(client, kind)` (may
   * be async) returns the value (a Uint8Array or a string); a throw answers `failed` with
   * its `code` (BACKEND_ERROR when it has none that the protocol takes) and its message.
   * A load of a kind not in `kinds` is answered `failed` with UNDECLARED_KIND without
   * calling `fn`; a malformed one (not JSON, a field missing or of another type) is
   * skipped. `capacity` loads run at once (more that the broker sends wait, up to
   * `capacity` of them; past that they are answered `failed` with BUSY); `worker.ready`
   * is repeated every `heartbeatMs` (the broker drops a worker silent for 3 s by default).
   */
  class LoaderWorker {
    #endpoint;
    #kinds;
    #declared;
    #fn;
    #capacity;
    #heartbeatMs;
    #sockOptions;
    #sock = null;
    #sender = null;
    #running = 0;
    #queue = [];
    #stopping = false;
    #loads = 0;
    #seq = 0n;
    #onError;

    constructor(endpoint, kinds, fn, opts) {
      const o = options(opts, ['capacity', 'heartbeatMs', 'curve', 'maxMessageBytes', 'onError'], 'the LoaderWorker options');
      this.#endpoint = text(endpoint, 'the endpoint');
      if (!Array.isArray(kinds) || kinds.length === 0) fail('BAD_TYPE', `kinds must be a non-empty array of kind names, not ${describe(kinds)}`);
      this.#kinds = kinds.map((k, i) => text(k, `kinds[${i}]`));
      this.#declared = new Set(this.#kinds);
      if (typeof fn !== 'function') fail('BAD_TYPE', `the load function must be a function (client, kind) returning a Uint8Array or a string, not ${describe(fn)}`);
      this.#fn = fn;
      this.#capacity = count(o.capacity, 'capacity', 1, 1, 1 << 20);
      this.#heartbeatMs = ms(o.heartbeatMs, 'heartbeatMs', 500);
      if (o.onError !== undefined && typeof o.onError !== 'function') fail('BAD_TYPE', `onError must be a function, not ${describe(o.onError)}`);
      this.#onError = o.onError || (() => {});
      this.#sockOptions = { linger: 500, maxMessageSize: count(o.maxMessageBytes, 'maxMessageBytes', DEFAULT_MAX_MESSAGE_BYTES, 1, 2 ** 31 - 1), ...curveOptions(o.curve) };
    }

    /** The kinds it declared. */
    get kinds() {
      return this.#kinds.slice();
    }
    /** Loads it ran (the load function was called). */
    get loads() {
      return this.#loads;
    }
    /** Loads running now. */
    get running() {
      return this.#running;
    }

    #header(type) {
      this.#seq += 1n;
      const id = Buffer.alloc(16);
      id.writeBigUInt64BE(BigInt.asUintN(64, this.#seq), 8);
      return encodeHeader(type, { requestId: id });
    }

    #send(type, body, payload) {
      const frames = [this.#header(type), Buffer.from(JSON.stringify(body), 'utf8')];
      if (payload) frames.push(payload);
      this.#sender.send(frames).catch((e) => this.#onError(error('INTERNAL', `sending ${describeType(type)} failed: ${e && e.message}`, { cause: e })));
    }

    /** Serves loads until stop(); resolves once the loads running have been answered. */
    async run() {
      if (this.#sock) fail('BUSY', 'this LoaderWorker is already running');
      const { Dealer } = zmq();
      const sock = new Dealer(this.#sockOptions);
      this.#sock = sock;
      this.#sender = new Sender(sock);
      sock.connect(this.#endpoint);
      const ready = { kinds: this.#kinds, capacity: this.#capacity };
      let beating = false;
      const beat = () => {
        if (beating || this.#stopping) return;
        beating = true;
        const frames = [this.#header(T('worker.ready')), Buffer.from(JSON.stringify(ready), 'utf8')];
        this.#sender.send(frames).catch(() => {}).finally(() => {
          beating = false;
        });
      };
      beat();
      const timer = setInterval(beat, this.#heartbeatMs);
      try {
        for await (const frames of sock) {
          this.#receive(frames);
        }
      } catch {
        // closed by stop()
      } finally {
        clearInterval(timer);
      }
    }

    #receive(frames) {
      let head;
      try {
        head = decodeHeader(frames[0]);
      } catch {
        return;
      }
      if (head.msgType !== T('load') || frames.length < 2) {
        if (head.transportError !== 0 || head.flags & FLAG_DATA_ERROR) {
          const r = new Reply(head, parseBody(frames[1]) || {}, null);
          this.#onError(error('BAD_TYPE', `the broker refused a message of this worker: ${r.transportError || r.errorCode}: ${r.errorMessage}`, { reply: r }));
        }
        return;
      }
      const job = loadJob(frames[1]);
      if (job === null || this.#stopping) return;
      if (!this.#declared.has(job.kind)) {
        this.#send(T('failed'), { fence: job.fence, code: 'UNDECLARED_KIND', message: `this worker did not declare the kind ${JSON.stringify(job.kind)}` });
        return;
      }
      if (this.#running < this.#capacity) this.#start(job);
      else if (this.#queue.length < this.#capacity) this.#queue.push(job);
      else this.#send(T('failed'), { fence: job.fence, code: 'BUSY', message: `this worker already runs its capacity of ${this.#capacity} loads and holds as many waiting` });
    }

    #start(job) {
      this.#running++;
      this.#loads++;
      this.#load(job).finally(() => {
        this.#running--;
        const next = this.#queue.shift();
        if (next) this.#start(next);
        else if (this.#stopping && this.#running === 0 && this.#idle) this.#idle();
      });
    }

    async #load(job) {
      let value;
      try {
        value = await this.#fn(job.client, job.kind);
        if (typeof value === 'string') value = Buffer.from(value, 'utf8');
        else if (value instanceof Uint8Array) value = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        else throw error('BAD_TYPE', `the load function returned ${describe(value)}, not a Uint8Array or a string`);
      } catch (e) {
        this.#send(T('failed'), { fence: job.fence, code: workerCode(e), message: messageOf(e) });
        return;
      }
      this.#send(T('loaded'), { fence: job.fence }, value);
    }

    #idle = null;

    /** Makes run() return: no new loads; the loads running are answered first. */
    async stop() {
      if (this.#stopping) return;
      this.#stopping = true;
      for (const job of this.#queue.splice(0)) {
        this.#send(T('failed'), { fence: job.fence, code: 'SHUTTING_DOWN', message: 'the worker is stopping' });
      }
      if (this.#running > 0) await new Promise((resolve) => { this.#idle = resolve; });
      if (this.#sock) {
        await this.#sender.flushed();
        this.#sock.close();
      }
    }
  }

  return {
    VERSION,
    SYSTEM,
    REPLY_BIT,
    FLAG_DATA_ERROR,
    HEADER_FIXED_LEN,
    MAX_HEADER_LEN,
    TYPES,
    TRANSPORT_ERRORS,
    encodeHeader,
    decodeHeader,
    Reply,
    Client,
    LoaderWorker,
    LoadFailed,
    ERROR_CODES,
  };
}
