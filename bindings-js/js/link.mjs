// How the Node modules reach Redis through the caller's node-redis client (4+, standalone
// or Cluster), written once for keyroute/cache (SmartCache, Sessions, Devices) and
// keyroute/redis (LeastUsed, Leases, Affinity): a script call of core sent with EVALSHA
// (SCRIPT LOAD and once more on NOSCRIPT), a bound on each round trip, node-redis errors as
// coded ones, and replies walked into the form core's decoders read through the .wasm.
//
// `createLink(h, scripts)`: `h` the helpers (helpers.mjs) of the module's .wasm, `scripts`
// core's SCRIPTS. scripts/build.mjs bundles it into the outputs whose factory imports it.

export function createLink(h, scripts) {
  'use strict';

  const { error, fail, coded, describe, unpack } = h;

  // Core's scripts by name: the text a NOSCRIPT answer loads.
  const TEXTS = new Map(scripts.map((s) => [s.name, s.text]));
  const SHA1S = new Map(scripts.map((s) => [s.name, s.sha1]));

  // A node-redis error as a coded one (the original is its `cause`). Server errors start
  // with their code word (ERR, WRONGTYPE, NOAUTH, MOVED, ...); everything else the client
  // throws is about the connection (closed, offline, socket closed, reconnecting).
  function redisError(e) {
    if (coded(e)) return e;
    const message = e instanceof Error ? e.message : String(e);
    const name = (e && e.constructor && e.constructor.name) || '';
    let code = 'REDIS_CONNECTION_LOST';
    if (/^WRONGTYPE/.test(message)) code = 'REDIS_WRONGTYPE';
    else if (/^(NOAUTH|WRONGPASS)/.test(message)) code = 'REDIS_AUTH';
    else if (name === 'ErrorReply' || /^[A-Z][A-Z_-]+ /.test(message)) code = 'REDIS_SERVER';
    else if (/timeout/i.test(name) || /timed? ?out/i.test(message)) code = 'REDIS_TIMEOUT';
    else if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH/.test(message)) code = 'REDIS_CONNECT';
    return error(code, `Redis: ${message}`, { cause: e });
  }
  function connectionError(e) {
    return e.code === 'REDIS_CONNECTION_LOST' || e.code === 'REDIS_CONNECT' || e.code === 'REDIS_TIMEOUT';
  }

  // A packed batch from wasm as Buffers (views of one copy) and its counts, freeing it.
  function items(b) {
    try {
      return [unpack(b, (data, start, end) => Buffer.from(data.buffer, data.byteOffset + start, end - start)), b.counts];
    } finally {
      b.free();
    }
  }

  // A script call of core as the .wasm packs it (the script's name, its keys, its
  // arguments; counts [number of keys]): {script, sha1, keys, args} (Buffers).
  function callOf(b) {
    const [it, counts] = items(b);
    const script = it[0].toString('latin1');
    const nk = counts[0];
    return { script, sha1: SHA1S.get(script), keys: it.slice(1, 1 + nk), args: it.slice(1 + nk) };
  }

  // A reply as the preorder walk the wasm decoders read (see bindings-js/src/cache.rs).
  function walk(reply) {
    const tags = [];
    const nums = [];
    const strings = [];
    const visit = (v, depth) => {
      if (v === null || v === undefined) tags.push(0);
      else if (typeof v === 'number' || typeof v === 'bigint') {
        if (Number.isSafeInteger(Number(v)) && BigInt(Number(v)) === BigInt(v)) {
          tags.push(1);
          nums.push(Number(v));
        } else {
          tags.push(2);
          strings.push(Buffer.from(String(v)));
        }
      } else if (typeof v === 'string') {
        tags.push(2);
        strings.push(Buffer.from(v, 'utf8'));
      } else if (v instanceof Uint8Array) {
        tags.push(2);
        strings.push(v);
      } else if (Array.isArray(v) && depth < 8) {
        tags.push(3);
        nums.push(v.length);
        for (const x of v) visit(x, depth + 1);
      } else tags.push(9);
    };
    visit(reply, 0);
    const ends = new Uint32Array(strings.length);
    let off = 0;
    strings.forEach((s, i) => {
      off += s.length;
      ends[i] = off;
    });
    return [Uint8Array.from(tags), Float64Array.from(nums), Buffer.concat(strings, off), ends];
  }

  const clock = () => performance.now();
  const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
  // Bulk strings as Buffers: node-redis 4 (returnBuffers), 5+ (typeMapping, '$' = 36).
  const BINARY = Object.freeze({ returnBuffers: true, typeMapping: { 36: Buffer } });

  // The command of a call: EVALSHA sha1 numkeys ...keys ...args.
  function evalsha(call) {
    return ['EVALSHA', call.sha1, String(call.keys.length), ...call.keys, ...call.args];
  }

  // How commands reach Redis through the caller's node-redis client (4+, standalone or
  // Cluster): EVALSHA, SCRIPT LOAD on NOSCRIPT, and a bound on each round trip.
  class Link {
    constructor(client, ioTimeoutMs) {
      if (client === null || typeof client !== 'object' || typeof client.sendCommand !== 'function') {
        fail('BAD_TYPE', `a connected node-redis client is needed (createClient() or createCluster() of npm redis 4+), not ${describe(client)}`);
      }
      this.client = client;
      this.cluster = Array.isArray(client.masters);
      this.notify = this.cluster ? 1 : 0;
      this.ioTimeoutMs = ioTimeoutMs;
    }

    // One command, routed by `key` on a Cluster, bounded by `until` (a clock() instant).
    send(args, key, until) {
      let p;
      try {
        p = this.cluster ? this.client.sendCommand(key, false, args, BINARY) : this.client.sendCommand(args, BINARY);
      } catch (e) {
        return Promise.reject(redisError(e));
      }
      p = Promise.resolve(p).catch((e) => {
        throw redisError(e);
      });
      const left = (until === undefined ? clock() + this.ioTimeoutMs : until) - clock();
      let timer;
      const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(error('REDIS_TIMEOUT', `Redis did not answer ${String(args[0])} within ${Math.round(Math.max(left, 0))} ms`)), Math.max(left, 0));
      });
      p.catch(() => {}); // an answer after the bound is dropped, an error too
      return Promise.race([p, late]).finally(() => clearTimeout(timer));
    }

    // Runs a call with EVALSHA; on NOSCRIPT loads the script (on the key's node) and retries.
    async eval(call, until) {
      const key = call.keys[0];
      try {
        return await this.send(evalsha(call), key, until);
      } catch (e) {
        if (!(e.code === 'REDIS_SERVER' && /^NOSCRIPT/.test(e.cause && e.cause.message))) throw e;
        await this.send(['SCRIPT', 'LOAD', TEXTS.get(call.script)], key, until);
        return this.send(evalsha(call), key, until);
      }
    }

    // SCRIPT LOAD of the scripts `names` on the server (every master of a Cluster).
    async loadScripts(names) {
      const texts = names.map((n) => TEXTS.get(n));
      const targets = this.cluster ? await Promise.all(this.client.masters.map((m) => this.client.nodeClient(m))) : [this.client];
      const until = clock() + this.ioTimeoutMs;
      for (const t of targets) {
        for (const body of texts) {
          const p = t.sendCommand(['SCRIPT', 'LOAD', body]);
          await Promise.race([p, sleep(until - clock()).then(() => fail('REDIS_TIMEOUT', 'SCRIPT LOAD did not answer in time'))]).catch((e) => {
            throw redisError(e);
          });
        }
      }
    }
  }

  return { Link, redisError, connectionError, clock, sleep, items, callOf, walk };
}
