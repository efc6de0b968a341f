// The smart cache of `keyroute/cache` (Node): core's key names, session ids, checks, script
// calls, reply decoders, XFetch and poll schedule through the cache .wasm, and SmartCache,
// Sessions and Devices running them on a node-redis client the caller passes in.
//
// `createCacheApi(wasm, scripts, node)`: scripts/build.mjs bundles it with the helpers
// every module shares (helpers.mjs) into dist/cache-api.cjs. `node` gives what comes from
// Node: `randomBytes(n)` (node:crypto) and `pid`.
//
// Every decision is core's (Rust, through the .wasm): which keys, which arguments, what a
// reply means, how long to poll, what input is refused with which code. This file does
// the I/O, the way keyroute-redis's cache module (redis/src/cache/smart.rs) does it in
// Rust: the single flight in the process, the heartbeat, the subscription before the
// re-check, the polling, the fill or the abandon. Every error thrown is an Error with a
// `code` of ERROR_CODES.

import { createHelpers } from './helpers.mjs';
import { createLink } from './link.mjs';

export function createCacheApi(wasm, scripts, node) {
  'use strict';

  const h = createHelpers(wasm);
  const { ERROR_CODES, error, fail, guard, describe, wellFormed, text, utf8, NONE, int, bool, options, bytes, pack } = h;
  // node-redis: errors, the calls' EVALSHA with NOSCRIPT handling, replies as core reads them.
  const { Link, connectionError, clock, sleep, items, callOf, walk } = createLink(h, scripts);

  // A name or value as a Buffer (a view of its bytes: a string as UTF-8, lone surrogates
  // refused, or any bytes).
  function buffer(x, what) {
    const b = bytes(x, what);
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  }

  function optionalNow(x) {
    return x === undefined || x === null ? NONE : int(x, 'nowMs');
  }

  function tokenKeyOf(o) {
    if (o === undefined || o === null) return new Uint8Array(0);
    const b = buffer(o, 'tokenKey');
    if (b.length !== 16) fail('BAD_TYPE', `tokenKey must be 16 bytes, not ${b.length}`);
    return b;
  }

  // ---------------------------------------------------------------- limits and checks

  const L = wasm.rawCacheLimits();
  /** Core's limits (keyroute::cache). */
  const CACHE_LIMITS = Object.freeze({
    maxClientIdBytes: L[0],
    maxKindBytes: L[1],
    maxDeviceIdBytes: L[2],
    maxVersionBytes: L[3],
    maxWarmKinds: L[4],
    defaultMaxValueBytes: L[5],
    maxValueBytesLimit: L[6],
    maxOwnerBytes: L[7],
    maxErrorCodeBytes: L[8],
    maxErrorMessageBytes: L[9],
    tokenLength: L[10],
    sessionIdLength: L[11],
    maxMs: L[12],
    pollFirstMs: L[13],
    pollMaxMs: L[14],
    maxFencedLoads: L[15],
  });

  // Names are checked before they are converted when they are longer than any limit.
  function name(x, which, what, max) {
    if (typeof x === 'string' && x.length > max) x = x.slice(0, max + 1);
    const b = buffer(x, what);
    guard(() => wasm.rawCheck(which, b));
    return b;
  }
  const clientBytes = (c) => name(c, 0, 'the client id', CACHE_LIMITS.maxClientIdBytes);
  const kindBytes = (k) => name(k, 1, 'the kind', CACHE_LIMITS.maxKindBytes);
  const deviceBytes = (d) => name(d, 2, 'the device id', CACHE_LIMITS.maxDeviceIdBytes);
  const versionBytes = (v) => name(v, 3, 'the version', CACHE_LIMITS.maxVersionBytes);

  /** Throws BAD_CLIENT_ID unless `id` is 1 to 512 bytes. */
  function checkClientId(id) {
    clientBytes(id);
  }
  /** Throws BAD_KIND unless `kind` is 1 to 128 bytes without '{', '}' or a control byte. */
  function checkKind(kind) {
    kindBytes(kind);
  }
  /** Throws BAD_DEVICE_ID unless `device` is 1 to 256 bytes without '{', '}' or a control byte. */
  function checkDeviceId(device) {
    deviceBytes(device);
  }
  /** Throws BAD_VERSION unless `version` is at most 128 bytes. */
  function checkVersion(version) {
    versionBytes(version);
  }
  /** Throws VALUE_TOO_LARGE when `length` is above `max`. */
  function checkValueLen(length, max) {
    const n = Number(int(length, 'the length'));
    guard(() => wasm.rawCheckValueLen(Math.max(n, 0), Number(checkedMaxValueLen(max))));
  }
  /** `max` if it is a maximum value size keyroute takes (1 to 512 MiB), else TOO_LARGE. */
  function checkedMaxValueLen(max) {
    return guard(() => wasm.rawCheckedMaxValueLen(int(max, 'the maximum value size')));
  }
  /** Throws TOO_LARGE for more kinds than one warm-up takes (64). */
  function checkWarmCount(count) {
    guard(() => wasm.rawCheckWarmCount(Number(int(count, 'the number of kinds'))));
  }
  /** `value` (ms) if it is between `min` and 2^48, else BAD_TTL (`what` names it). */
  function checkedMs(what, value, min = 1) {
    if (min !== 0 && min !== 1) fail('BAD_TYPE', 'min must be 0 or 1');
    return guard(() => wasm.rawCheckedMs(text(what, 'what'), int(value, what), min));
  }
  /** A loader's failure as the scripts cache it: {code (1 to 64 bytes), message (at most 1024 bytes)}. */
  function loadError(code, message) {
    const [c, m] = wasm.rawLoadError(text(code, 'the code'), text(message, 'the message'));
    return { code: c, message: m };
  }

  // ---------------------------------------------------------------- keys and ids

  /** The opaque token T of a client id (keyed SipHash-2-4, 26 base32 characters). */
  function clientToken(clientId, opts) {
    return clientKeys(clientId, opts).token;
  }
  /** {token, tag, sessionIndex, channel}: a client's names. */
  function clientKeys(clientId, opts) {
    const o = options(opts, ['tokenKey'], 'the key options');
    const [token, tag, sessionIndex, channel] = guard(() => wasm.rawClientKeys(clientBytes(clientId), tokenKeyOf(o.tokenKey)));
    return { token, tag, sessionIndex, channel };
  }
  function entryBytes(clientId, kind, tokenKey) {
    return Buffer.from(guard(() => wasm.rawEntryKey(clientBytes(clientId), tokenKey, kindBytes(kind))));
  }
  /** `kr:{c:T}:e:<kind>`: a string for a string kind, bytes for bytes. */
  function entryKey(clientId, kind, opts) {
    const o = options(opts, ['tokenKey'], 'the key options');
    const b = entryBytes(clientId, kind, tokenKeyOf(o.tokenKey));
    return typeof kind === 'string' ? b.toString('utf8') : b;
  }
  /** `kr:{d:<device>}`: a string for a string device, bytes for bytes. */
  function deviceKey(device) {
    const b = Buffer.from(guard(() => wasm.rawDeviceKey(deviceBytes(device))));
    return typeof device === 'string' ? b.toString('utf8') : b;
  }
  /** A new session id `T.R` of a client (R: 16 bytes from node:crypto, or `random`). */
  function newSessionId(clientId, opts) {
    const o = options(opts, ['tokenKey', 'random'], 'the session id options');
    const random = o.random === undefined ? node.randomBytes(16) : o.random;
    if (!(random instanceof Uint8Array)) fail('BAD_TYPE', `random must be 16 bytes in a Uint8Array, not ${describe(random)}`);
    return guard(() => wasm.rawSessionId(clientBytes(clientId), tokenKeyOf(o.tokenKey), random));
  }
  /** {id, token, sessionKey, indexKey} of a session id; BAD_SESSION_ID for anything else. */
  function parseSessionId(sid) {
    const [id, token, sessionKey, indexKey] = guard(() => wasm.rawParseSessionId(sidBytes(sid)));
    return { id, token, sessionKey, indexKey };
  }
  function sidBytes(sid) {
    if (typeof sid === 'string' && sid.length > 64) fail('BAD_SESSION_ID', 'not a session id keyroute gave: it is too long');
    return buffer(sid, 'the session id');
  }

  // ---------------------------------------------------------------- calls

  const CACHE_SCRIPTS = {};
  for (const s of scripts) {
    if (/^(sc-|sess-|warm-|device-)/.test(s.name)) CACHE_SCRIPTS[s.name] = Object.freeze({ ...s });
  }
  Object.freeze(CACHE_SCRIPTS);

  const NOTIFY = { PUBLISH: 0, SPUBLISH: 1, '': 2 };
  function notifyOf(n) {
    if (n === undefined) return 0;
    if (!(n in NOTIFY)) fail('BAD_OPTION', `notify must be 'PUBLISH', 'SPUBLISH' or '' (no wake-up), not ${describe(n)}`);
    return NOTIFY[n];
  }
  function owner(o) {
    return o === undefined ? Buffer.alloc(0) : buffer(o, 'owner');
  }

  /**
   * Core's script calls (keyroute::cache::Call): each gives {script, sha1, keys, args}
   * (Buffers), to send as `EVALSHA sha1 keys.length ...keys ...args` (commandOf).
   * `nowMs` is for tests only (the scripts read Redis TIME without it).
   */
  const cacheCalls = Object.freeze({
    get(entry, o) {
      o = options(o, ['leaseMs', 'owner', 'xfetchE', 'allowStale', 'nowMs'], 'cacheCalls.get');
      const xe = o.xfetchE === undefined ? 0 : o.xfetchE;
      if (typeof xe !== 'number') fail('BAD_TYPE', `xfetchE must be a number, not ${describe(xe)}`);
      return callOf(guard(() => wasm.rawCallGet(buffer(entry, 'the entry key'), int(o.leaseMs, 'leaseMs'), owner(o.owner), xe, o.allowStale === undefined ? true : bool(o.allowStale, 'allowStale'), optionalNow(o.nowMs))));
    },
    fill(entry, o) {
      o = options(o, ['fence', 'value', 'softTtlMs', 'hardTtlMs', 'loadMs', 'notify', 'nowMs'], 'cacheCalls.fill');
      return callOf(guard(() => wasm.rawCallFill(buffer(entry, 'the entry key'), int(o.fence, 'fence'), buffer(o.value, 'the value'), int(o.softTtlMs, 'softTtlMs'), int(o.hardTtlMs, 'hardTtlMs'), int(o.loadMs ?? 0, 'loadMs'), notifyOf(o.notify), optionalNow(o.nowMs))));
    },
    extend(entry, o) {
      o = options(o, ['fence', 'leaseMs', 'nowMs'], 'cacheCalls.extend');
      return callOf(guard(() => wasm.rawCallExtend(buffer(entry, 'the entry key'), int(o.fence, 'fence'), int(o.leaseMs, 'leaseMs'), optionalNow(o.nowMs))));
    },
    abandon(entry, o) {
      o = options(o, ['fence', 'code', 'message', 'negTtlMs', 'notify', 'nowMs'], 'cacheCalls.abandon');
      return callOf(guard(() => wasm.rawCallAbandon(buffer(entry, 'the entry key'), int(o.fence, 'fence'), buffer(o.code, 'code'), buffer(o.message ?? '', 'message'), int(o.negTtlMs, 'negTtlMs'), notifyOf(o.notify), optionalNow(o.nowMs))));
    },
    invalidate(entry, o) {
      o = options(o, ['tombstoneMs', 'notify', 'nowMs'], 'cacheCalls.invalidate');
      return callOf(guard(() => wasm.rawCallInvalidate(buffer(entry, 'the entry key'), int(o.tombstoneMs, 'tombstoneMs'), notifyOf(o.notify), optionalNow(o.nowMs))));
    },
    put(entry, o) {
      o = options(o, ['value', 'softTtlMs', 'hardTtlMs', 'notify', 'nowMs'], 'cacheCalls.put');
      return callOf(guard(() => wasm.rawCallPut(bytes(entry, 'the entry key'), bytes(o.value, 'the value'), int(o.softTtlMs, 'softTtlMs'), int(o.hardTtlMs, 'hardTtlMs'), notifyOf(o.notify), optionalNow(o.nowMs))));
    },
    warmBegin(entries, o) {
      o = options(o, ['leaseMs', 'owner', 'nowMs'], 'cacheCalls.warmBegin');
      const [data, ends] = entryList(entries, 'entries');
      return callOf(guard(() => wasm.rawCallWarmBegin(data, ends, int(o.leaseMs, 'leaseMs'), owner(o.owner), optionalNow(o.nowMs))));
    },
    sessCreate(sid, o) {
      o = options(o, ['client', 'version', 'ttlMs', 'maxAgeMs', 'data', 'nowMs'], 'cacheCalls.sessCreate');
      return callOf(guard(() => wasm.rawCallSessCreate(sidBytes(sid), clientBytes(o.client), versionBytes(o.version ?? ''), int(o.ttlMs, 'ttlMs'), int(o.maxAgeMs ?? 0, 'maxAgeMs'), buffer(o.data ?? '', 'the data'), optionalNow(o.nowMs))));
    },
    sessTouch(sid, o) {
      o = options(o, ['version', 'nowMs'], 'cacheCalls.sessTouch');
      const check = o.version !== undefined && o.version !== null;
      return callOf(guard(() => wasm.rawCallSessTouch(sidBytes(sid), check, check ? versionBytes(o.version) : Buffer.alloc(0), optionalNow(o.nowMs))));
    },
    sessDestroy(sid, o) {
      o = options(o, ['nowMs'], 'cacheCalls.sessDestroy');
      return callOf(guard(() => wasm.rawCallSessDestroy(sidBytes(sid), optionalNow(o.nowMs))));
    },
    sessList(clientId, o) {
      o = options(o, ['tokenKey', 'nowMs'], 'cacheCalls.sessList');
      return callOf(guard(() => wasm.rawCallSessList(clientBytes(clientId), tokenKeyOf(o.tokenKey), optionalNow(o.nowMs))));
    },
    deviceBind(device, o) {
      o = options(o, ['client', 'ttlMs'], 'cacheCalls.deviceBind');
      return callOf(guard(() => wasm.rawCallDeviceBind(deviceBytes(device), clientBytes(o.client), int(o.ttlMs, 'ttlMs'))));
    },
  });

  // The entries of one warm-up: an array, its count checked before anything is converted.
  function entryList(list, what) {
    if (!Array.isArray(list)) fail('BAD_TYPE', `${what} must be an array, not ${describe(list)}`);
    if (list.length > CACHE_LIMITS.maxWarmKinds) guard(() => wasm.rawCheckWarmCount(list.length));
    return pack(list, what);
  }

  /** The command of a call: ['EVALSHA', sha1, numkeys, ...keys, ...args] (or EVAL with the text). */
  function commandOf(call, verb = 'EVALSHA') {
    const head = verb === 'EVAL' ? CACHE_SCRIPTS[call.script].text : call.sha1;
    return [verb, head, String(call.keys.length), ...call.keys, ...call.args];
  }

  // ---------------------------------------------------------------- replies

  const GET_KINDS = [null, 'hit', 'refresh', 'stale', 'lease', 'wait', 'error'];
  // The fields of the warm-hit fast path, as core reads them.
  const PEEK_FIELDS = Object.freeze(wasm.rawPeekFields());

  /**
   * Core's decoder of a script's reply (node-redis gives it as arrays, numbers and
   * Buffers or strings). REDIS_PROTOCOL for any other shape.
   */
  function decodeReply(script, reply) {
    if (!(text(script, 'the script name') in CACHE_SCRIPTS)) fail('BAD_TYPE', `${JSON.stringify(script)} is not a smart-cache script (${Object.keys(CACHE_SCRIPTS).join(', ')})`);
    const [tags, nums, data, ends] = walk(reply);
    const [b, c] = items(guard(() => wasm.rawDecode(script, tags, nums, data, ends)));
    const tag = c[0];
    switch (script) {
      case 'sc-get':
        switch (GET_KINDS[tag]) {
          case 'hit':
          case 'stale':
            return { kind: GET_KINDS[tag], value: b[0], version: c[1] };
          case 'refresh':
            return { kind: 'refresh', value: b[0], version: c[1], fence: c[2], takeover: c[3] === 1 };
          case 'lease':
            return { kind: 'lease', fence: c[1], takeover: c[2] === 1 };
          case 'wait':
            return { kind: 'wait', remainingMs: c[1], fence: c[2] };
          default:
            return { kind: 'error', code: b[0].toString('utf8'), message: b[1].toString('utf8'), remainingMs: c[1] };
        }
      case 'sc-fill':
        return tag === 0 ? { kind: 'fenced', current: c[1] } : { kind: tag === 1 ? 'stored' : 'duplicate', version: c[1] };
      case 'sess-create':
        return tag === 1 ? { kind: 'created', expiresAt: c[1] } : { kind: 'taken' };
      case 'sess-touch':
        if (tag === 0) return { kind: 'expired' };
        if (tag === 2) return { kind: 'versionMismatch', stored: b[0] };
        return { kind: 'live', client: b[0], data: b[1], version: b[2], expiresAt: c[1] };
      case 'warm-begin':
        return Array.from(c.subarray(1), (f) => (f > 0 ? f : null));
      case 'sess-list':
        return b.map((sid, i) => [sid.toString('latin1'), c[i + 1]]);
      case 'sc-put':
        return { version: c[1], fence: c[2] };
      default:
        return tag === 1;
    }
  }

  // ---------------------------------------------------------------- schedules

  /** Waits of 10 ms doubling to 200 ms, never past the lease or the deadline (core's PollSchedule). */
  class PollSchedule {
    #raw = new wasm.RawPollSchedule();
    /** The next wait in ms. */
    nextWait(leaseRemainingMs, deadlineRemainingMs) {
      const n = (x, what) => {
        if (typeof x !== 'number' || Number.isNaN(x)) fail('BAD_TYPE', `${what} must be a number, not ${describe(x)}`);
        return x;
      };
      return this.#raw.nextWait(n(leaseRemainingMs, 'leaseRemainingMs'), n(deadlineRemainingMs, 'deadlineRemainingMs'));
    }
    /** Back to the first step. */
    reset() {
      this.#raw.reset();
    }
    free() {
      if (this.#raw) this.#raw.free();
      this.#raw = null;
    }
  }

  /** XFetch (core's should_refresh): refresh early when now + delta·e ≥ the soft expiry. */
  function shouldRefresh(nowMs, softExpiryMs, deltaMs, e) {
    for (const [x, what] of [[nowMs, 'nowMs'], [softExpiryMs, 'softExpiryMs'], [deltaMs, 'deltaMs'], [e, 'e']]) {
      if (typeof x !== 'number') fail('BAD_TYPE', `${what} must be a number, not ${describe(x)}`);
    }
    return wasm.rawShouldRefresh(nowMs, softExpiryMs, deltaMs, e);
  }
  /** The xfetch_e argument of sc-get as core writes it. */
  function xfetchArg(e) {
    if (typeof e !== 'number') fail('BAD_TYPE', `e must be a number, not ${describe(e)}`);
    return wasm.rawXfetchArg(e);
  }

  // ---------------------------------------------------------------- node-redis

  // Wake-ups: waiters of one client's channel share one subscription of this process
  // (SUBSCRIBE on a dedicated connection; SSUBSCRIBE through the Cluster client).
  class Wakeups {
    #link;
    #sub;
    #own = false;
    #connecting = null;
    #channels = new Map();

    constructor(link, subscriber) {
      this.#link = link;
      this.#sub = link.cluster ? link.client : subscriber || null;
    }

    // The subscriber connection (a duplicate of the client, made once).
    async connection() {
      if (this.#sub) return this.#sub;
      if (!this.#connecting) {
        this.#connecting = (async () => {
          const sub = this.#link.client.duplicate();
          sub.on('error', () => {}); // reconnects are node-redis's; waiters poll meanwhile
          await sub.connect();
          this.#own = true;
          this.#sub = sub;
          return sub;
        })();
        this.#connecting.catch(() => {
          this.#connecting = null;
        });
      }
      return this.#connecting;
    }

    // Subscribes to `channel` (resolved once Redis confirmed it, or failed: then the
    // waiter only polls) and returns a waiter for `entry`.
    async watch(channel, entry, until) {
      let ch = this.#channels.get(channel);
      if (!ch) {
        const waiters = new Set();
        const listener = (message) => {
          for (const w of waiters) w(message);
        };
        ch = { waiters, listener, ready: null };
        this.#channels.set(channel, ch);
        ch.ready = (async () => {
          const sub = await this.connection();
          await (this.#link.cluster ? sub.sSubscribe(channel, listener, true) : sub.subscribe(channel, listener, true));
        })();
        ch.ready.catch(() => {});
      }
      let pending = null;
      let woke = false;
      const onMessage = (m) => {
        if (Buffer.isBuffer(m) ? m.equals(entry) : String(m) === entry.toString('latin1')) {
          woke = true;
          if (pending) pending();
        }
      };
      ch.waiters.add(onMessage);
      const closeIt = () => {
        ch.waiters.delete(onMessage);
        if (ch.waiters.size === 0 && this.#channels.get(channel) === ch) {
          this.#channels.delete(channel);
          ch.ready.then(() => {
            const sub = this.#sub;
            return this.#link.cluster ? sub.sUnsubscribe(channel, ch.listener, true) : sub.unsubscribe(channel, ch.listener, true);
          }).catch(() => {});
        }
      };
      try {
        await Promise.race([ch.ready, sleep(Math.min(500, until - clock()))]);
      } catch {
        // Could not subscribe (connection down): poll only.
      }
      return {
        // Resolves true when a wake-up names the entry, false after `ms`.
        wait(ms) {
          if (woke) {
            woke = false;
            return Promise.resolve(true);
          }
          return new Promise((resolve) => {
            const t = setTimeout(() => {
              pending = null;
              resolve(false);
            }, Math.max(0, ms));
            pending = () => {
              clearTimeout(t);
              pending = null;
              woke = false;
              resolve(true);
            };
          });
        },
        close: closeIt,
      };
    }

    async close() {
      const sub = this.#sub;
      if (this.#own && sub) {
        this.#sub = null;
        this.#own = false;
        try {
          await (typeof sub.close === 'function' ? sub.close() : sub.quit());
        } catch {
          // already closed
        }
      }
    }
  }

  function durationOption(o, key, fallback, min) {
    return checkedMs(key, o[key] === undefined ? fallback : o[key], min);
  }

  function ownerName() {
    const tail = Buffer.from(node.randomBytes(4)).toString('hex');
    return `pid:${node.pid}:${tail}`;
  }

  // The loader's failure: its `code` when it is a non-empty string, else its class name.
  function failureOf(e) {
    let code = 'BACKEND_ERROR';
    if (e instanceof Error) code = typeof e.code === 'string' && e.code !== '' ? e.code : e.name || code;
    else if (e && typeof e === 'object' && typeof e.code === 'string' && e.code !== '') code = e.code;
    let message;
    try {
      message = e instanceof Error ? e.message : String(e);
    } catch {
      message = 'the loader failed (its error could not be shown)';
    }
    return loadError(wellFormed(code) ? code : 'BACKEND_ERROR', wellFormed(message) ? message : message.toWellFormed?.() ?? 'the loader failed');
  }

  function backendError(code, message, cached, cause) {
    return error('BACKEND_ERROR', `the loader failed: ${code}: ${message}${cached ? ' (cached: another caller\'s load failed moments ago)' : ''}`, {
      backendCode: code,
      backendMessage: message,
      cached,
      ...(cause === undefined ? {} : { cause }),
    });
  }

  const CACHE_OPTIONS = ['leaseMs', 'softTtlMs', 'hardTtlMs', 'negTtlMs', 'serveStale', 'fastHits', 'xfetchBeta', 'maxValueBytes', 'tokenKey', 'ioTimeoutMs', 'subscriber'];

  // Core's defaults (keyroute::cache::CacheSettings::DEFAULT), in the order of
  // rawCacheDefaults: the settings, then the I/O timeout and the read timeout.
  const D = wasm.rawCacheDefaults();
  const S = wasm.rawSessionDefaults();
  /** Core's defaults of SmartCache and Sessions (ms and bytes). */
  const CACHE_DEFAULTS = Object.freeze({
    leaseMs: D[0],
    softTtlMs: D[1],
    hardTtlMs: D[2],
    negTtlMs: D[3],
    serveStale: D[4] === 1,
    fastHits: D[5] === 1,
    xfetchBeta: D[6],
    maxValueBytes: D[7],
    ioTimeoutMs: D[8],
    timeoutMs: D[9],
    sessionTtlMs: S[0],
    sessionMaxDataBytes: S[1],
  });

  // How a Redis error reaches a driver of core: 1 timeout, 2 connection, 3 other.
  function faultOf(e) {
    if (e.code === 'REDIS_TIMEOUT') return 1;
    return connectionError(e) ? 2 : 3;
  }
  const NOTHING = new Uint8Array(0);
  const NO_REPLY = [NOTHING, new Float64Array(0), NOTHING, new Uint32Array(0)];

  // A call a driver asked for: items [name, keys..., args...] after `skip` leading counts.
  function stepCall(it, nkeys) {
    const script = it[0].toString('latin1');
    return { script, sha1: CACHE_SCRIPTS[script].sha1, keys: it.slice(1, 1 + nkeys), args: it.slice(1 + nkeys) };
  }

  /**
   * A cache on Redis shared by every process and server: a cold key is loaded by one
   * caller while the others wait for its wake-up. The decisions are core's sans-I/O
   * drivers' (keyroute::cache::GetOrLoad, Fill, Warm: the same as Rust's SmartCache);
   * this class carries out their steps on node-redis.
   */
  class SmartCache {
    #link;
    #wakeups;
    #c;
    #settings;
    #owner = Buffer.from(ownerName());
    #flights = new Map();
    #s = { hits: 0, refreshes: 0, leases: 0, waits: 0, takeovers: 0, fencedFills: 0, backendCalls: 0, backendErrors: 0, cachedErrors: 0, coalesced: 0 };

    constructor(client, opts) {
      const o = options(opts, CACHE_OPTIONS, 'the SmartCache options');
      const beta = o.xfetchBeta === undefined ? CACHE_DEFAULTS.xfetchBeta : o.xfetchBeta;
      if (typeof beta !== 'number' || !(beta >= 0 && beta < Infinity)) fail('BAD_TTL', `xfetchBeta must be a finite number >= 0, not ${describe(beta)}`);
      const c = {
        leaseMs: durationOption(o, 'leaseMs', CACHE_DEFAULTS.leaseMs, 1),
        softTtlMs: durationOption(o, 'softTtlMs', CACHE_DEFAULTS.softTtlMs, 1),
        hardTtlMs: durationOption(o, 'hardTtlMs', CACHE_DEFAULTS.hardTtlMs, 1),
        negTtlMs: durationOption(o, 'negTtlMs', CACHE_DEFAULTS.negTtlMs, 0),
        serveStale: o.serveStale === undefined ? CACHE_DEFAULTS.serveStale : bool(o.serveStale, 'serveStale'),
        fastHits: o.fastHits === undefined ? CACHE_DEFAULTS.fastHits : bool(o.fastHits, 'fastHits'),
        xfetchBeta: beta,
        maxValueBytes: checkedMaxValueLen(o.maxValueBytes === undefined ? CACHE_DEFAULTS.maxValueBytes : o.maxValueBytes),
      };
      // Core's rule for the settings together (the hard TTL at least the soft one, ...).
      this.#settings = Float64Array.from(guard(() => wasm.rawCheckSettings(Float64Array.of(c.leaseMs, c.softTtlMs, c.hardTtlMs, c.negTtlMs, c.serveStale ? 1 : 0, c.fastHits ? 1 : 0, c.xfetchBeta, c.maxValueBytes))));
      this.#c = Object.freeze({
        ...c,
        tombstoneMs: this.#settings[8],
        tokenKey: tokenKeyOf(o.tokenKey),
        ioTimeoutMs: durationOption(o, 'ioTimeoutMs', CACHE_DEFAULTS.ioTimeoutMs, 1),
      });
      this.#link = new Link(client, this.#c.ioTimeoutMs);
      this.#wakeups = new Wakeups(this.#link, o.subscriber);
    }

    /** The settings, checked (ms). */
    get config() {
      const { tokenKey, ...rest } = this.#c;
      return { ...rest, cluster: this.#link.cluster };
    }

    /**
     * Loads the scripts (SCRIPT LOAD; every master of a Cluster) and opens the subscriber
     * connection, so the first stampede pays no set-up. Optional: done on demand otherwise.
     */
    async ready() {
      await this.#link.loadScripts(Object.keys(CACHE_SCRIPTS));
      await this.#wakeups.connection();
      return this;
    }

    /** Closes the subscriber connection this cache opened (never the client you gave). */
    async close() {
      await this.#wakeups.close();
    }

    /** What this cache did so far, in this process. */
    stats() {
      return { ...this.#s };
    }

    /**
     * The value of `kind` for `client` (a Buffer): from Redis if it is there, else from
     * `await loader()` (a Uint8Array or a string), called by one caller across every
     * process sharing the Redis while the others wait, at most `timeoutMs`.
     */
    async getOrLoad(client, kind, loader, opts) {
      const o = options(opts, ['timeoutMs'], 'the getOrLoad options');
      const timeoutMs = checkedMs('timeoutMs', o.timeoutMs === undefined ? CACHE_DEFAULTS.timeoutMs : o.timeoutMs, 1);
      const entry = entryBytes(client, kind, this.#c.tokenKey);
      if (typeof loader !== 'function') fail('BAD_TYPE', `the loader must be a function returning a Uint8Array or a string (or a Promise of one), not ${describe(loader)}`);
      const channel = this.#channelOf(client);
      const started = clock();
      const deadline = started + timeoutMs;
      const id = entry.toString('latin1');
      for (;;) {
        if (clock() >= deadline) throw timeout(entry, started);
        const flight = this.#flights.get(id);
        if (flight) {
          // Another call of this process is asking Redis for this key: share its outcome.
          const outcome = await Promise.race([flight.promise, sleep(deadline - clock()).then(() => null)]);
          if (outcome === null) throw timeout(entry, started);
          if (!outcome.ok && outcome.error.code === 'CACHE_TIMEOUT' && clock() < deadline) continue;
          this.#s.coalesced++;
          if (outcome.ok) return outcome.value;
          throw outcome.error;
        }
        let settle;
        const mine = { promise: new Promise((r) => { settle = r; }), done: false };
        const complete = (outcome) => {
          if (mine.done) return;
          mine.done = true;
          if (this.#flights.get(id) === mine) this.#flights.delete(id);
          settle(outcome);
        };
        this.#flights.set(id, mine);
        try {
          const value = await this.#lead(entry, channel, deadline, started, loader, (v) => complete({ ok: true, value: v }));
          complete({ ok: true, value });
          return value;
        } catch (e) {
          complete({ ok: false, error: e });
          throw e;
        }
      }
    }

    #channelOf(client) {
      return guard(() => wasm.rawClientKeys(clientBytes(client), this.#c.tokenKey))[3];
    }

    // Adds what a driver of core counted (its Counts, in field order).
    #count(raw) {
      const c = guard(() => raw.counts());
      const s = this.#s;
      s.hits += c[0];
      s.refreshes += c[1];
      s.leases += c[2];
      s.takeovers += c[3];
      s.waits += c[4];
      s.fencedFills += c[5];
      s.backendCalls += c[6];
      s.backendErrors += c[7];
      s.cachedErrors += c[8];
    }

    // Runs a call a driver asked for and reports the reply (or the fault) to it; the
    // error when it failed, else null.
    async #run(raw, call, until) {
      let reply;
      try {
        reply = await this.#link.eval(call, until);
      } catch (e) {
        guard(() => raw.report(1, faultOf(e), ...NO_REPLY, NOTHING, '', '', 0));
        return e;
      }
      const [tags, nums, data, ends] = walk(reply);
      guard(() => raw.report(1, 0, tags, nums, data, ends, NOTHING, '', '', 0));
      return null;
    }

    // Runs the loader while the heartbeat's call extends the lease every `everyMs`, and
    // reports what it returned to the driver `raw`. The loader's own error (the cause of
    // a backend error) or the refusal of what it returned, if any.
    async #load(raw, beatCall, everyMs, loader) {
      const started = clock();
      let beating = true;
      const beat = setInterval(() => {
        const keep = (fault, reply) => {
          const [tags, nums, data, ends] = fault === 0 ? walk(reply) : NO_REPLY;
          if (!wasm.rawKeepBeating(fault, tags, nums, data, ends) && beating) clearInterval(beat);
        };
        this.#link.eval(beatCall).then((r) => keep(0, r), (e) => keep(faultOf(e)));
      }, everyMs);
      let value;
      let failure;
      let failed = false;
      try {
        value = await loader();
      } catch (e) {
        failed = true;
        failure = e;
      } finally {
        beating = false;
        clearInterval(beat);
      }
      const loadMs = Math.round(clock() - started);
      if (failed) {
        const f = failureOf(failure);
        guard(() => raw.report(5, 1, ...NO_REPLY, NOTHING, f.code, f.message, loadMs));
        return { cause: failure };
      }
      let buf;
      try {
        if (typeof value === 'string') buf = buffer(value, 'the value the loader returned');
        else if (value instanceof Uint8Array) buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        else fail('BAD_TYPE', `the loader must return a Uint8Array (a Buffer) or a string, not ${describe(value)}; nothing was stored`);
      } catch (e) {
        guard(() => raw.report(5, 3, ...NO_REPLY, NOTHING, e.code, e.message, loadMs));
        return { refused: e };
      }
      guard(() => raw.report(5, 0, ...NO_REPLY, buf, '', '', loadMs));
      return {};
    }

    // The value of a driver's outcome, or its error thrown.
    #outcome(raw, entry, started, lastError, load) {
      const [it, c] = items(guard(() => raw.outcome()));
      switch (c[0]) {
        case 0:
          return it[0];
        case 1:
          throw timeout(entry, started);
        case 2:
          throw lastError || timeout(entry, started);
        case 3: {
          const cached = c[1] === 1;
          throw backendError(it[0].toString('utf8'), it[1].toString('utf8'), cached, cached ? undefined : load.cause);
        }
        default:
          throw load.refused || error('INTERNAL', 'the loader failed');
      }
    }

    // The leader's part of getOrLoad: carries out the steps of core's GetOrLoad driver.
    // `early` serves the other callers of this process before a refresh.
    async #lead(entry, channel, deadline, started, loader, early) {
      const t0 = clock();
      const read = guard(() => wasm.RawDriver.read(entry, this.#owner, this.#settings, this.#link.notify, Math.max(0, deadline - t0)));
      let sub = null;
      let lastError = null;
      let load = {};
      try {
        for (;;) {
          const [it, c] = items(guard(() => read.step(Math.max(0, Math.floor(clock() - t0)), 1 - Math.random())));
          switch (c[0]) {
            case 0: { // peek: HMGET of the fields a warm hit needs
              let reply;
              let ok = true;
              try {
                reply = await this.#link.send(['HMGET', entry, ...PEEK_FIELDS], entry, deadline);
              } catch {
                ok = false;
              }
              const [tags, nums, data, ends] = ok ? walk(reply) : NO_REPLY;
              guard(() => read.report(0, ok ? 1 : 0, tags, nums, data, ends, NOTHING, '', '', Date.now()));
              break;
            }
            case 1: { // run a script call
              const e = await this.#run(read, stepCall(it, c[1]), deadline);
              if (e) lastError = e;
              break;
            }
            case 2: // subscribe first; the driver asks again at once
              sub = await this.#wakeups.watch(channel, entry, deadline);
              read.report(2, 0, ...NO_REPLY, NOTHING, '', '', 0);
              break;
            case 3: // wait for a wake-up, or poll
              read.report(3, (sub ? await sub.wait(c[1]) : (await sleep(c[1]), false)) ? 1 : 0, ...NO_REPLY, NOTHING, '', '', 0);
              break;
            case 4: // sleep (Redis down while waiting, or after a fenced fill)
              await sleep(c[1]);
              read.report(4, 0, ...NO_REPLY, NOTHING, '', '', 0);
              break;
            case 5: { // load under the lease
              if (c[3] === 1) {
                early(it[it.length - 1]);
                if (sub) sub.close();
                sub = null;
              }
              load = await this.#load(read, stepCall(it, c[2]), c[1], loader);
              break;
            }
            default:
              this.#count(read);
              return this.#outcome(read, entry, started, lastError, load);
          }
        }
      } finally {
        if (sub) sub.close();
        read.free();
      }
    }

    // Carries out a fill of core (a warm-up's lease; a RawDriver): {value} or {error}.
    async #fill(fill, loader) {
      let load = {};
      try {
        for (;;) {
          const [it, c] = items(guard(() => fill.step()));
          if (c[0] === 5) load = await this.#load(fill, stepCall(it, c[2]), c[1], loader);
          else if (c[0] === 1) await this.#run(fill, stepCall(it, c[1]));
          else break;
        }
        this.#count(fill);
        try {
          return { value: this.#outcome(fill, Buffer.alloc(0), clock(), null, load) };
        } catch (e) {
          return { error: e };
        }
      } finally {
        fill.free();
      }
    }

    /**
     * Drops the value of `kind` for `client` and bumps its fence: a load in flight is
     * discarded, the next caller loads afresh, waiters are woken. Whether it was there.
     */
    async invalidate(client, kind) {
      const entry = entryBytes(client, kind, this.#c.tokenKey);
      const call = callOf(guard(() => wasm.rawCallInvalidate(entry, BigInt(this.#c.tombstoneMs), this.#link.notify, NONE)));
      return decodeReply('sc-invalidate', await this.#link.eval(call));
    }

    /**
     * Stores `value` for `kind` of `client` directly, without a loader: the entry's fence
     * is bumped in the same atomic call (sc-put), so a load in flight for the key (here or
     * in another process) is discarded and its callers get `value`; waiters are woken.
     * Fresh for `ttlMs` and kept as long (default: the soft and hard TTLs).
     */
    async put(client, kind, value, o) {
      o = options(o, ['ttlMs'], 'SmartCache.put');
      const entry = entryBytes(client, kind, this.#c.tokenKey);
      const v = bytes(value, 'the value');
      checkValueLen(v.length, this.#c.maxValueBytes);
      const ttl = o.ttlMs === undefined || o.ttlMs === null ? null : durationOption(o, 'ttlMs', 0, 1);
      const [soft, hard] = ttl === null ? [this.#c.softTtlMs, this.#c.hardTtlMs] : [ttl, ttl];
      const call = callOf(guard(() => wasm.rawCallPut(entry, v, BigInt(soft), BigInt(hard), this.#link.notify, NONE)));
      decodeReply('sc-put', await this.#link.eval(call));
    }

    /**
     * Warms the kinds of the client bound to `device` (Devices.bind): one script call
     * leases every cold kind, then `loader(client, kind)` runs for each, concurrently.
     * → {client (null: unknown device), granted, skipped, failed: [[kind, error]]}.
     */
    async warm(device, kinds, loader) {
      const list = kindList(kinds);
      const d = deviceBytes(device);
      for (const k of list) kindBytes(k);
      checkLoader(loader);
      const key = Buffer.from(guard(() => wasm.rawDeviceKey(d)));
      const client = await this.#link.send(['GET', key], key);
      if (client === null || client === undefined) return { client: null, granted: [], skipped: list.slice(), failed: [] };
      return this.warmClient(utf8(client, 'the client id bound to the device'), list, loader);
    }

    /** warm() for a client id. */
    async warmClient(client, kinds, loader) {
      const list = kindList(kinds);
      checkLoader(loader);
      const entries = list.map((k) => entryBytes(client, k, this.#c.tokenKey));
      const report = { client, granted: [], skipped: [], failed: [] };
      if (entries.length === 0) return report;
      const [data, ends] = entryList(entries, 'entries');
      const warm = guard(() => new wasm.RawWarm(data, ends, this.#owner, this.#settings, this.#link.notify));
      try {
        const reply = await this.#link.eval(callOf(guard(() => warm.call())));
        const [tags, nums, wdata, wends] = walk(reply);
        const granted = guard(() => warm.plan(tags, nums, wdata, wends));
        const loads = [];
        granted.forEach((g, i) => {
          if (g !== 1) {
            report.skipped.push(list[i]);
            return;
          }
          this.#s.leases++;
          const fill = guard(() => warm.fill(i));
          loads.push(this.#fill(fill, () => loader(client, list[i])).then((r) => [i, r]));
        });
        for (const [i, r] of await Promise.all(loads)) {
          if (r.error) report.failed.push([list[i], r.error]);
          else report.granted.push(list[i]);
        }
      } finally {
        warm.free();
      }
      return report;
    }
  }

  function kindList(kinds) {
    if (!Array.isArray(kinds)) fail('BAD_TYPE', `kinds must be an array of strings, not ${describe(kinds)}`);
    checkWarmCount(kinds.length);
    return kinds.map((k, i) => {
      if (typeof k !== 'string') fail('BAD_TYPE', `kinds[${i}] must be a string, not ${describe(k)}`);
      return k;
    });
  }
  function checkLoader(loader) {
    if (typeof loader !== 'function') fail('BAD_TYPE', `the loader must be a function (client, kind) returning a Uint8Array or a string, not ${describe(loader)}`);
  }

  function timeout(entry, started) {
    return error('CACHE_TIMEOUT', `getOrLoad ${entry.toString('latin1')}: no value after ${Math.round(clock() - started)} ms (another instance may still be loading it)`);
  }

  /** Client sessions any server can read (keyroute_redis::cache::Sessions in JS). */
  class Sessions {
    #link;
    #ttl;
    #maxAge;
    #maxData;
    #key;

    constructor(client, opts) {
      const o = options(opts, ['ttlMs', 'maxAgeMs', 'maxDataBytes', 'tokenKey', 'ioTimeoutMs'], 'the Sessions options');
      this.#ttl = durationOption(o, 'ttlMs', CACHE_DEFAULTS.sessionTtlMs, 1);
      this.#maxAge = o.maxAgeMs === undefined || o.maxAgeMs === null ? 0 : checkedMs('maxAgeMs', o.maxAgeMs, 1);
      this.#maxData = checkedMaxValueLen(o.maxDataBytes === undefined ? CACHE_DEFAULTS.sessionMaxDataBytes : o.maxDataBytes);
      this.#key = tokenKeyOf(o.tokenKey);
      this.#link = new Link(client, durationOption(o, 'ioTimeoutMs', CACHE_DEFAULTS.ioTimeoutMs, 1));
    }

    /** A new session of `client` made by service `version`, holding `data`: its id (the secret). */
    async create(client, version, data) {
      const c = clientBytes(client);
      const v = versionBytes(version);
      const d = buffer(data, 'the session data');
      guard(() => wasm.rawCheckValueLen(d.length, this.#maxData));
      for (let i = 0; i < 4; i++) {
        const sid = guard(() => wasm.rawSessionId(c, this.#key, node.randomBytes(16)));
        const call = callOf(guard(() => wasm.rawCallSessCreate(Buffer.from(sid), c, v, BigInt(this.#ttl), BigInt(this.#maxAge), d, NONE)));
        if (decodeReply('sess-create', await this.#link.eval(call)).kind === 'created') return sid;
      }
      return fail('INTERNAL', 'four random session ids in a row were taken');
    }

    /**
     * Reads session `sid` and slides its expiry: {id, client, data (Buffer), version,
     * expiresAt}. SESSION_EXPIRED when it is gone (log in again); with `version`, a
     * session of another version is VERSION_MISMATCH (`storedVersion`) and is not touched.
     */
    async touch(sid, opts) {
      const o = options(opts, ['version'], 'the touch options');
      const check = o.version !== undefined && o.version !== null;
      const s = sidBytes(sid);
      const call = callOf(guard(() => wasm.rawCallSessTouch(s, check, check ? versionBytes(o.version) : Buffer.alloc(0), NONE)));
      const r = decodeReply('sess-touch', await this.#link.eval(call));
      if (r.kind === 'expired') fail('SESSION_EXPIRED', wasm.rawSessionExpiredMessage());
      if (r.kind === 'versionMismatch') {
        const stored = r.stored.toString('utf8');
        fail('VERSION_MISMATCH', `the session was created by service version ${JSON.stringify(stored)}`, { storedVersion: stored });
      }
      return { id: s.toString('latin1'), client: r.client.toString('utf8'), data: r.data, version: r.version.toString('utf8'), expiresAt: r.expiresAt };
    }

    /** Removes session `sid`; whether it was live. */
    async destroy(sid) {
      const call = callOf(guard(() => wasm.rawCallSessDestroy(sidBytes(sid), NONE)));
      return decodeReply('sess-destroy', await this.#link.eval(call));
    }

    /** The live sessions of `client`: [[sid, expiresAt], ...], soonest first. */
    async list(client) {
      const call = callOf(guard(() => wasm.rawCallSessList(clientBytes(client), this.#key, NONE)));
      return decodeReply('sess-list', await this.#link.eval(call));
    }
  }

  /** Device → client bindings, for warm-up before login. */
  class Devices {
    #link;
    constructor(client, opts) {
      const o = options(opts, ['ioTimeoutMs'], 'the Devices options');
      this.#link = new Link(client, durationOption(o, 'ioTimeoutMs', CACHE_DEFAULTS.ioTimeoutMs, 1));
    }

    /** Binds `device` to `client` for `ttlMs` (replacing any binding). */
    async bind(device, client, ttlMs) {
      const call = callOf(guard(() => wasm.rawCallDeviceBind(deviceBytes(device), clientBytes(client), int(ttlMs, 'ttlMs'))));
      decodeReply('device-bind', await this.#link.eval(call));
    }

    /** The client `device` is bound to, or null. */
    async clientOf(device) {
      const key = Buffer.from(guard(() => wasm.rawDeviceKey(deviceBytes(device))));
      const c = await this.#link.send(['GET', key], key);
      return c === null || c === undefined ? null : utf8(c, 'the client id bound to the device');
    }
  }

  return {
    SmartCache,
    Sessions,
    Devices,
    PollSchedule,
    clientToken,
    clientKeys,
    entryKey,
    deviceKey,
    newSessionId,
    parseSessionId,
    checkClientId,
    checkKind,
    checkDeviceId,
    checkVersion,
    checkValueLen,
    checkedMaxValueLen,
    checkWarmCount,
    checkedMs,
    loadError,
    cacheCalls,
    commandOf,
    decodeReply,
    shouldRefresh,
    xfetchArg,
    CACHE_LIMITS,
    CACHE_DEFAULTS,
    CACHE_SCRIPTS,
    ERROR_CODES,
  };
}
