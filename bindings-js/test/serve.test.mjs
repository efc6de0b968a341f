// keyroute/serve against a real `keyroute serve` (started here on free 127.0.0.1 ports, with
// the in-memory store and with a Redis store, stopped at the end): every message type
// round-trips from the Node Client, a Node LoaderWorker serves a Python client and Python
// and Rust workers serve the Node client, deadlines, priority order, a worker killed
// mid-load (the broker gives the load to another), the Client's bounds; and, against a
// stand-in broker (a ROUTER socket), how the LoaderWorker treats what a broker should never
// send (malformed loads, undeclared kinds, more loads than its capacity).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as zmq from 'zeromq';
import { Client, LoaderWorker, LoadFailed, TYPES, REPLY_BIT, FLAG_DATA_ERROR, encodeHeader, decodeHeader } from 'keyroute/serve';
import { here } from './helpers.mjs';
import { startRedis, freePort } from './redis-helpers.mjs';
import { startServe, workersIdle, waitFor, child, rustWorker, python } from './serve-helpers.mjs';

const stops = [];
let redis;

before(async () => {
  redis = await startRedis();
});

after(async () => {
  for (const f of stops.reverse()) await f();
  if (redis) await redis.stop();
});

async function serve(args, opts) {
  const s = await startServe(args, opts);
  stops.push(() => s.stop());
  return s;
}
function client(endpoint, opts) {
  const c = new Client(endpoint, opts);
  stops.push(() => c.close());
  return c;
}
function worker(endpoint, kinds, fn, opts) {
  const w = new LoaderWorker(endpoint, kinds, fn, { heartbeatMs: 100, ...opts });
  const running = w.run();
  stops.push(async () => {
    await w.stop();
    await running;
  });
  return w;
}
function track(proc) {
  stops.push(() => proc.stop());
  return proc;
}
const code = (c) => (e) => {
  assert.equal(e.code, c, e.message);
  return true;
};
// A promise and the function that resolves it: what a held load waits for.
function gate() {
  let open;
  const shut = new Promise((r) => {
    open = r;
  });
  return [shut, open];
}

for (const store of ['memory', 'redis']) {
  test(`every message type round-trips from the Node Client, with a Node LoaderWorker (${store} store)`, async () => {
    const s = await serve([], { redis: store === 'redis' ? redis.url : undefined });
    const loads = [];
    worker(s.workers, ['accounts', 'cards'], (cl, kind) => {
      loads.push([cl, kind]);
      return `node:${cl}:${kind}`;
    });
    await workersIdle(s, 'cards');
    const c = client(s.bind);
    const id = Buffer.from('request-id-00042');
    let r = await c.request('ping', null, null, { sessionId: 'sess-1', priority: 7, requestId: id });
    assert.equal(r.header.msgType, TYPES.ping | REPLY_BIT);
    assert.deepEqual([r.header.requestId, r.header.sessionId.toString(), r.header.priority], [id, 'sess-1', 7]);
    assert.deepEqual([r.header.transportError, r.header.flags, r.payload, r.ok], [0, 0, null, true]);
    const who = `c-${store}`;

    // sessions
    const data = Buffer.from([0, ...Buffer.from('session data'), 0xff]);
    r = await c.request('session.create', { client: who, version: '2.14' }, data);
    assert.equal(r.header.msgType, TYPES['session.create'] | REPLY_BIT);
    assert.equal(r.errorCode, null);
    const { sid, expires_at: exp } = r.body;
    assert.ok(exp > Date.now());
    r = await c.request('session.touch', { sid, version: '2.14' });
    assert.equal(r.body.client, who);
    assert.deepEqual(r.payload, data);
    r = await c.request('session.touch', { sid, version: '3.0' });
    assert.equal(r.errorCode, 'VERSION_MISMATCH');
    assert.equal(r.header.flags, FLAG_DATA_ERROR);
    assert.match(r.errorMessage, /2\.14/);
    // session.update (type 14) replaces the data under the version check; a data request
    // carrying the session id slides it; once destroyed, the session's id is SESSION_EXPIRED.
    r = await c.request('session.update', { sid, version: '2.14' }, Buffer.from('new data'));
    assert.equal(r.header.msgType, TYPES['session.update'] | REPLY_BIT);
    assert.ok(r.body.expires_at > Date.now(), JSON.stringify(r.body));
    assert.equal((await c.request('session.update', { sid, version: '9' }, Buffer.from('x'))).errorCode, 'VERSION_MISMATCH');
    assert.deepEqual((await c.request('session.touch', { sid, version: '2.14' })).payload, Buffer.from('new data'));
    assert.equal((await c.request('cache.get', { client: who, kind: 'none' }, null, { sessionId: sid })).errorCode, 'NOT_FOUND');
    r = await c.request('session.list', { client: who });
    assert.deepEqual(r.body.sessions.map((x) => x.sid), [sid]);
    assert.deepEqual((await c.request('session.destroy', { sid })).body, { destroyed: true });
    assert.deepEqual((await c.request('session.destroy', { sid })).body, { destroyed: false });
    assert.equal((await c.request('session.touch', { sid })).errorCode, 'SESSION_EXPIRED');
    assert.equal((await c.request('cache.get', { client: who, kind: 'none' }, null, { sessionId: sid })).errorCode, 'SESSION_EXPIRED');
    assert.equal((await c.request('session.touch', { sid: 'not-a-sid' })).errorCode, 'BAD_SESSION_ID');

    // cache
    assert.equal((await c.request('cache.get', { client: who, kind: 'prefs' })).errorCode, 'NOT_FOUND');
    r = await c.request('cache.put', { client: who, kind: 'prefs', ttl_ms: 60000 }, 'v1');
    assert.deepEqual([r.header.msgType, r.errorCode], [TYPES['cache.put'] | REPLY_BIT, null]);
    assert.equal((await c.request('cache.get', { client: who, kind: 'prefs' })).payload.toString(), 'v1');
    assert.deepEqual((await c.request('cache.invalidate', { client: who, kind: 'prefs' })).body, { dropped: true });
    assert.equal((await c.request('cache.get', { client: who, kind: 'prefs' })).errorCode, 'NOT_FOUND');
    assert.equal((await c.request('cache.get', { client: who, kind: 'a{b}' })).errorCode, 'BAD_KIND');
    assert.equal((await c.request('cache.get', { client: '', kind: 'k' })).errorCode, 'BAD_CLIENT_ID');
    assert.equal((await c.request('cache.get', { client: who, kind: 'k', extra: 1 })).errorCode, 'BAD_TYPE');

    // product.get: loaded once, then a hit
    r = await c.request('product.get', { client: who, kind: 'cards' });
    assert.deepEqual([r.header.msgType, r.payload.toString()], [TYPES['product.get'] | REPLY_BIT, `node:${who}:cards`]);
    assert.equal((await c.request('product.get', { client: who, kind: 'cards' })).payload.toString(), `node:${who}:cards`);
    assert.equal(loads.length, 1);
    r = await c.request('product.get', { client: who, kind: 'loans' });
    assert.equal(r.transportError, 'NO_LOADER');
    assert.match(r.errorMessage, /loader/);

    // device.bind + app.start: warms the device's client; app.start has no reply
    const warm = `${who}-7`;
    assert.equal((await c.request('device.bind', { device: `ios-${store}`, client: warm })).errorCode, null);
    assert.equal(await c.request('app.start', { device: `ios-${store}` }), null);
    await waitFor(() => loads.length === 3, 'the warm-up loads');
    assert.deepEqual(loads.filter(([x]) => x === warm).map(([, k]) => k).sort(), ['accounts', 'cards']);
    assert.equal((await c.request('product.get', { client: warm, kind: 'accounts' })).payload.toString(), `node:${warm}:accounts`);
    assert.equal(loads.length, 3);

    // a type the service does not know, or one a client may not send: answered
    r = await c.request(99, {});
    assert.deepEqual([r.header.msgType, r.transportError], [99 | REPLY_BIT, 'UNKNOWN_TYPE']);
    r = await c.request('loaded', { fence: 1 }, 'v');
    assert.deepEqual([r.header.msgType, r.transportError], [TYPES.loaded | REPLY_BIT, 'UNKNOWN_TYPE']);
    assert.equal(c.inFlight, 0);
  });
}

test('a Node LoaderWorker serves a Python client; Python and Rust workers serve the Node client', async () => {
  const s = await serve();
  worker(s.workers, ['cards'], (cl, kind) => `node:${cl}:${kind}`);
  const py = track(python(`
import signal, sys
from keyroute.serve import LoaderWorker
w = LoaderWorker(sys.argv[1], ["accounts"], lambda client, kind: f"py:{client}:{kind}".encode(), heartbeat_s=0.1)
signal.signal(signal.SIGTERM, lambda *a: w.stop())
print("ready", flush=True)
w.run()
`, [s.workers]));
  await py.until((l) => l === 'ready', 'the Python worker');
  const rust = track(rustWorker(s.workers, 'loans,fail-x'));
  await workersIdle(s, 'cards');
  await workersIdle(s, 'accounts');
  await workersIdle(s, 'loans');

  // The Python client, with a Node worker behind the service.
  const pyClient = python(`
import sys
from keyroute.serve import Client, encode_header
with Client(sys.argv[1]) as c:
    sid = c.request("session.create", {"client": "c1", "version": "1"}).body["sid"].encode()
    r = c.request("product.get", {"client": "c1", "kind": "cards"}, session_id=sid, priority=3)
    print(r.transport_error, r.error_code, r.payload.decode(), r.header.session_id == sid, flush=True)
print(encode_header(30, b"0123456789abcdef", priority=9, deadline_ms=1500, session_id=b"abc").hex(), flush=True)
`, [s.bind]);
  assert.equal(await pyClient.exited(), 0, pyClient.stderr);
  assert.deepEqual(pyClient.lines, [
    'None None node:c1:cards True',
    encodeHeader('product.get', { requestId: '0123456789abcdef', priority: 9, deadlineMs: 1500, sessionId: 'abc' }).toString('hex'),
  ]);

  // The Node client, with the Python and the Rust workers behind the service.
  const c = client(s.bind);
  assert.equal((await c.request('product.get', { client: 'c1', kind: 'accounts' })).payload.toString(), 'py:c1:accounts');
  assert.equal((await c.request('product.get', { client: 'c1', kind: 'loans' })).payload.toString(), 'rust:c1:loans');
  const r = await c.request('product.get', { client: 'c1', kind: 'fail-x' });
  assert.equal(r.errorCode, 'BACKEND_ERROR');
  assert.match(r.errorMessage, /UPSTREAM_500/);
  assert.equal(rust.lines.filter((l) => l === 'load c1 loans').length, 1);
});

test('deadlines: a load past the deadline, a request expired in the queue, a reply past the client\'s timeout', async () => {
  const s = await serve(['--threads', '1']);
  const [held, release] = gate();
  worker(s.workers, ['slow'], async () => {
    await held;
    return 'late';
  }, { capacity: 2 });
  await workersIdle(s, 'slow', 2);
  const c = client(s.bind);
  // The service's deadline: the load is not there within 300 ms.
  const began = Date.now();
  const r = await c.request('product.get', { client: 'c1', kind: 'slow' }, null, { deadlineMs: 300 });
  assert.equal(r.transportError, 'LOAD_TIMEOUT');
  assert.ok(Date.now() - began < 4000, 'answered at the request\'s deadline, not the default one');
  // One thread, held by a load: a request with a short deadline expires in the queue.
  const holding = c.request('product.get', { client: 'c2', kind: 'slow' }, null, { deadlineMs: 20000 });
  await waitFor(async () => (await s.metrics()).keyroute_serve_threads_busy === 1, 'the thread busy');
  assert.equal((await c.request('cache.get', { client: 'c3', kind: 'k' }, null, { deadlineMs: 100 })).transportError, 'EXPIRED');
  // The client's own timeout: rejected here, and the late reply is dropped.
  await assert.rejects(c.request('cache.get', { client: 'c4', kind: 'k' }, null, { deadlineMs: 20000, timeoutMs: 200 }), code('CACHE_TIMEOUT'));
  assert.equal(c.inFlight, 1);
  release();
  assert.equal((await holding).payload.toString(), 'late');
  await waitFor(() => c.dropped === 1, 'the late reply dropped');
  assert.equal(c.inFlight, 0);
});

test('priority: with the one thread busy, every high-priority request runs before any low one', async () => {
  const s = await serve(['--threads', '1']);
  const [held, release] = gate();
  worker(s.workers, ['hold'], async () => {
    await held;
    return 'held';
  });
  await workersIdle(s, 'hold');
  const c = client(s.bind);
  const order = [];
  const note = (name) => (r) => order.push([name, r.errorCode]);
  const all = [c.request('product.get', { client: 'c', kind: 'hold' }).then(note('held'))];
  await waitFor(async () => (await s.metrics()).keyroute_serve_threads_busy === 1, 'the thread busy');
  for (let i = 0; i < 6; i++) all.push(c.request('cache.get', { client: 'c', kind: `low-${i}` }, null, { priority: 1 }).then(note(`low-${i}`)));
  for (let i = 0; i < 6; i++) all.push(c.request('cache.get', { client: 'c', kind: `high-${i}` }, null, { priority: 9 }).then(note(`high-${i}`)));
  await waitFor(async () => (await s.metrics()).keyroute_serve_queue_depth === 12, '12 queued');
  release();
  await Promise.all(all);
  assert.deepEqual(order.map(([n]) => n), ['held', ...[0, 1, 2, 3, 4, 5].map((i) => `high-${i}`), ...[0, 1, 2, 3, 4, 5].map((i) => `low-${i}`)]);
  assert.ok(order.slice(1).every(([, e]) => e === 'NOT_FOUND'));
});

for (const store of ['memory', 'redis']) {
  test(`a Node worker killed mid-load: the broker drops it and another worker serves the request (${store} store)`, async () => {
    const s = await serve(['--worker-timeout-ms', '500'], { redis: store === 'redis' ? redis.url : undefined });
    const victim = track(child(process.execPath, [join(here, 'serve-worker-child.mjs'), s.workers, 'cards', '60000']));
    await victim.until((l) => l === 'ready', 'the worker');
    await workersIdle(s, 'cards');
    const c = client(s.bind);
    const who = `c-fo-${store}`;
    const pending = c.request('product.get', { client: who, kind: 'cards' }, null, { deadlineMs: 20000 });
    await victim.until((l) => l === `load ${who} cards`, 'the load at the worker');
    await victim.stop('SIGKILL');
    worker(s.workers, ['cards'], (cl, kind) => `backup:${cl}:${kind}`);
    const r = await pending;
    assert.equal(r.payload && r.payload.toString(), `backup:${who}:cards`, `${r.transportError} ${r.errorCode} ${r.errorMessage}`);
    assert.ok((await s.metrics()).keyroute_serve_worker_drops_total >= 1);
  });
}

test('bounds: at most maxInFlight requests wait for replies (BUSY past it), and what cannot be sent is refused', async () => {
  const s = await serve();
  const [held, release] = gate();
  worker(s.workers, ['hold'], async () => {
    await held;
    return 'v';
  }, { capacity: 3 });
  await workersIdle(s, 'hold', 3);
  const c = client(s.bind, { maxInFlight: 3 });
  const waiting = [1, 2, 3].map((i) => c.request('product.get', { client: `c${i}`, kind: 'hold' }));
  assert.equal(c.inFlight, 3);
  await assert.rejects(c.request('ping'), code('BUSY'));
  await assert.rejects(c.request('product.get', { client: 'c4', kind: 'hold' }), code('BUSY'));
  assert.equal(c.inFlight, 3);
  release();
  assert.deepEqual((await Promise.all(waiting)).map((r) => r.payload.toString()), ['v', 'v', 'v']);
  assert.equal((await c.request('ping')).ok, true);

  await assert.rejects(c.request('ping', null, null, { sessionId: 'x'.repeat(256) }), code('TOO_LARGE'));
  await assert.rejects(c.request('ping', null, null, { priority: 256 }), code('OUT_OF_RANGE'));
  await assert.rejects(c.request('ping', null, null, { deadlineMs: -1 }), code('OUT_OF_RANGE'));
  await assert.rejects(c.request('ping', 'a string'), code('BAD_TYPE'));
  await assert.rejects(c.request('no.such.type'), code('BAD_TYPE'));
  await assert.rejects(c.request('ping', null, null, { nope: 1 }), code('BAD_OPTION'));
  assert.throws(() => new Client(s.bind, { maxInFlight: 0 }), code('OUT_OF_RANGE'));
  assert.equal(c.inFlight, 0);

  // Closing rejects what still waits, and refuses what comes after.
  const other = new Client('tcp://127.0.0.1:9', { timeoutMs: 60000 });
  const lost = other.request('ping');
  await other.close();
  await assert.rejects(lost, code('INVALID_HANDLE'));
  await assert.rejects(other.request('ping'), code('INVALID_HANDLE'));
});

test('the codec is core\'s: encodeHeader and decodeHeader round-trip every field, and refuse what core refuses', () => {
  const h = encodeHeader('session.touch', { requestId: Buffer.alloc(16, 7), sessionId: 'abc.def', deadlineMs: 250, priority: 5, flags: 1, transportError: 4 });
  assert.equal(h.length, 29 + 7);
  assert.deepEqual(decodeHeader(h), {
    version: 1, system: 0, msgType: TYPES['session.touch'], transportError: 4, flags: 1, priority: 5, deadlineMs: 250, requestId: Buffer.alloc(16, 7), sessionId: Buffer.from('abc.def'),
  });
  assert.throws(() => decodeHeader(h.subarray(0, 10)), code('OUT_OF_RANGE'));
  assert.throws(() => decodeHeader(encodeHeader('ping', { version: 2 })), code('OUT_OF_RANGE'));
  assert.throws(() => decodeHeader(Buffer.alloc(600, 1)), code('TOO_LARGE'));
  assert.throws(() => encodeHeader('ping', { deadlineMs: 2 ** 32 }), code('OUT_OF_RANGE'));
  assert.throws(() => encodeHeader('ping', { sessionId: Buffer.alloc(256) }), code('TOO_LARGE'));
});

// A stand-in broker: a ROUTER socket the worker connects to.
async function standIn() {
  const router = new zmq.Router({ linger: 0 });
  const endpoint = `tcp://127.0.0.1:${await freePort()}`;
  await router.bind(endpoint);
  stops.push(() => router.close());
  const inbox = [];
  const waiters = [];
  (async () => {
    try {
      for await (const [peer, head, body, payload] of router) {
        inbox.push({ peer, h: decodeHeader(head), body: body && body.length ? JSON.parse(body.toString()) : {}, payload });
        for (const w of waiters.splice(0)) w();
      }
    } catch {
      // closed
    }
  })();
  return {
    endpoint,
    inbox,
    // The next message of `type` (worker.ready heartbeats skipped unless asked for).
    async next(type, ms = 5000) {
      const end = Date.now() + ms;
      for (;;) {
        const i = inbox.findIndex((m) => m.h.msgType === TYPES[type]);
        if (i >= 0) return inbox.splice(i, 1)[0];
        if (Date.now() > end) throw new Error(`no ${type} within ${ms} ms`);
        await new Promise((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
    },
    send(peer, frames) {
      return router.send([peer, ...frames]);
    },
  };
}

test('the LoaderWorker skips malformed loads, refuses undeclared kinds, reports failures with their codes, and bounds what it holds', async () => {
  const b = await standIn();
  const [held, release] = gate();
  const w = worker(b.endpoint, ['cards', 'hold'], async (cl, kind) => {
    if (kind === 'hold') {
      await held;
      return 'held';
    }
    if (cl === 'upstream') throw new LoadFailed('UPSTREAM_500', 'the backend is down');
    if (cl === 'plain') throw new Error('no code');
    if (cl === 'spaced') throw Object.assign(new Error('bad code'), { code: 'NOT A CODE' });
    if (cl === 'number') return 42;
    return Buffer.from(`node:${cl}:${kind}`);
  }, { capacity: 1 });
  const ready = await b.next('worker.ready');
  assert.deepEqual(ready.body, { kinds: ['cards', 'hold'], capacity: 1 });
  await b.next('worker.ready'); // the heartbeat repeats
  const peer = ready.peer;
  const load = (body, id = 1) => b.send(peer, [encodeHeader('load', { requestId: Buffer.alloc(16, id) }), typeof body === 'string' ? body : JSON.stringify(body)]);

  for (const bad of ['not json', '[1, 2]', 'null', { client: 'c', kind: 'cards' }, { client: 'c', kind: 'cards', fence: -1 }, { client: 'c', kind: 'cards', fence: 1.5 }, { client: 'c', kind: 'cards', fence: '7' }, { client: 5, kind: 'cards', fence: 7 }, { client: 'c', kind: 'cards', fence: 2 ** 64 }]) await load(bad);
  await b.send(peer, [encodeHeader('load')]);
  await b.send(peer, [Buffer.from('not a header'), '{}']);
  await load({ client: 'c', kind: 'loans', fence: 7 });
  let m = await b.next('failed');
  assert.deepEqual([m.body.fence, m.body.code], [7, 'UNDECLARED_KIND']);
  await load({ client: 'c', kind: 'cards', fence: 8 });
  m = await b.next('loaded');
  assert.deepEqual([m.body, m.payload.toString()], [{ fence: 8 }, 'node:c:cards']);
  assert.equal(w.loads, 1, 'the load function ran for the good load only');

  for (const [who, fence, want] of [['upstream', 9, 'UPSTREAM_500'], ['plain', 10, 'BACKEND_ERROR'], ['spaced', 11, 'BACKEND_ERROR'], ['number', 12, 'BAD_TYPE']]) {
    await load({ client: who, kind: 'cards', fence });
    m = await b.next('failed');
    assert.deepEqual([m.body.fence, m.body.code], [fence, want], m.body.message);
  }
  assert.equal(m.body.message.includes('42') || m.body.message.includes('number'), true);

  // Capacity 1: one load runs, one more waits, a third is refused at once.
  await load({ client: 'a', kind: 'hold', fence: 20 });
  await load({ client: 'b', kind: 'hold', fence: 21 });
  await load({ client: 'c', kind: 'hold', fence: 22 });
  m = await b.next('failed');
  assert.deepEqual([m.body.fence, m.body.code], [22, 'BUSY']);
  assert.equal(w.running, 1);
  release();
  const done = [await b.next('loaded'), await b.next('loaded')];
  assert.deepEqual(done.map((x) => x.body.fence), [20, 21]);
  assert.equal(b.inbox.filter((x) => x.h.msgType !== TYPES['worker.ready']).length, 0);
});

test('a LoaderWorker or Client refuses bad arguments before connecting', () => {
  assert.throws(() => new LoaderWorker('tcp://127.0.0.1:9', 'cards', () => 'v'), code('BAD_TYPE'));
  assert.throws(() => new LoaderWorker('tcp://127.0.0.1:9', [], () => 'v'), code('BAD_TYPE'));
  assert.throws(() => new LoaderWorker('tcp://127.0.0.1:9', ['cards'], 'v'), code('BAD_TYPE'));
  assert.throws(() => new LoaderWorker('tcp://127.0.0.1:9', ['cards'], () => 'v', { capacity: 0 }), code('OUT_OF_RANGE'));
  assert.throws(() => new Client(5), code('BAD_TYPE'));
  assert.throws(() => new Client('tcp://127.0.0.1:9', { curve: { serverKey: 'short' } }), code('BAD_TYPE'));
});

