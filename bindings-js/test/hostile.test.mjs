// Hostile input, randomised (issue 18): fast-check feeds every export of the package,
// every method, getter and static of its classes, random nested values, sizes, numbers at
// the edges (+-2^31, 2^32, 2^53, 2^63, 2^64 as numbers and BigInts, NaN, +-Infinity, -0),
// strings with lone surrogates (invalid UTF-16) and bytes that are not UTF-8.
//
// The callables are enumerated from the module's exports and the classes' prototypes; a
// class without a factory below is still fed through its constructor. Half of the
// examples start from a valid call and replace one argument with a hostile value.
//
// Expected of every call: a value, or an Error whose `.code` is in ERROR_CODES and is not
// INTERNAL; never an Error without a code (a RangeError or TypeError from the engine), a
// WebAssembly trap (RuntimeError), a hang or unbounded memory (RSS may grow by at most
// RSS_BUDGET over the file; the live handles return to where they were once freed). The
// number of examples per callable is printed at the end and written to
// build/hostile-js.txt.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import * as kr from 'keyroute';
import { repo } from './helpers.mjs';

const EXAMPLES = Number(process.env.KEYROUTE_HOSTILE_EXAMPLES || 150);
const HANG_MS = 60_000;
const RSS_BUDGET = 512 * 2 ** 20;
const SEED = Number(process.env.KEYROUTE_HOSTILE_SEED || 18);

const EDGE_NUMBERS = [
  0, -0, 1, -1, 2, 7, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 160,
  2 ** 53, 2 ** 53 + 2, -(2 ** 53), 2 ** 63, -(2 ** 63), 2 ** 64, -(2 ** 64), 1e300, -1e300,
  NaN, Infinity, -Infinity, 0.5, -1.5, Number.MIN_VALUE, Number.EPSILON,
];
const EDGE_BIGINTS = [
  0n, 1n, -1n, 2n ** 31n, 2n ** 32n, 2n ** 53n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 63n,
  2n ** 64n - 1n, 2n ** 64n, -(2n ** 64n), 2n ** 127n, 2n ** 200n,
];
const LONE_SURROGATES = ['\ud800', 'a\udfffb', '\udc00{a}', 'node\ud83d', '\ud800:6379'];
const NOT_UTF8 = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0x61, 0xfe, 0x7b, 0x62, 0x7d], [0xf4, 0x90, 0x80, 0x80]]
  .map((b) => Uint8Array.from(b));
const WORDS = [
  '', 'a', 'b', 'native', 'libketama', 'libmemcached', 'twemproxy', 'uhashring',
  'node-hashring', 'hash_ring', '10.0.0.1:11211', '10.0.0.1:11211=2', 'a:2', 'a=0', '{a}',
  '{', '}', 'keep', 'at_minimum', 'master', 'replica', 'online', 'failed',
  'MOVED 42 10.0.0.1:7001', 'ASK 1 :7000', 'a,b=2,c', 'x'.repeat(5000), 'é', '\0',
  '__proto__', 'constructor', 'toString',
];

/** An iterable whose length claims far more items than it yields. */
const lying = (length) => ({ length, [Symbol.iterator]: function* () { yield 'a'; yield 'b'; } });
/** Throws from every protocol a binding might call. */
const raising = new Proxy({}, {
  get(_, p) {
    if (p === Symbol.toPrimitive || p === Symbol.iterator || p === 'length' || p === 'valueOf' || p === 'toString') {
      throw new Error(`hostile getter ${String(p)}`);
    }
    return undefined;
  },
});
const odd = [
  Symbol('s'), () => 1, new Date(0), /re/, new Map([['a', 1]]), new Set(['a']),
  new Int32Array([1, -1]), new Float64Array([NaN]), new BigUint64Array([2n ** 64n - 1n]),
  new ArrayBuffer(4), new DataView(new ArrayBuffer(2)), Buffer.from('ab'), new String('abc'),
  new Number(3), Object.create(null), lying(2 ** 40), lying(2 ** 53), lying(-1), lying(NaN),
  raising, { length: 3 }, { 0: 'a', length: 1 }, [, , 'a'], Promise.resolve(1), new Error('e'),
];

const scalar = fc.oneof(
  fc.constantFrom(...EDGE_NUMBERS),
  fc.double(),
  fc.integer(),
  fc.constantFrom(...EDGE_BIGINTS),
  fc.bigInt(),
  fc.constantFrom(...WORDS),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(...LONE_SURROGATES),
  fc.uint8Array({ maxLength: 20 }),
  fc.constantFrom(...NOT_UTF8),
  fc.constantFrom(null, undefined, true, false),
  fc.constantFrom(...odd),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 6 }),
    fc.tuple(tie('value'), tie('value')),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('__proto__', 'weight', 'profile', 'vnodes', 'host', 'port', 'initial', 'overwrite')), tie('value'), { maxKeys: 4 }),
    fc.array(fc.string({ maxLength: 8 }), { minLength: 100, maxLength: 400 }),
  ),
}));

// ------------------------------------------------------------------ instances, baselines

const ring = () => new kr.Ring(['a', 'b', 'c']);
function map() {
  const m = new kr.SlotMap();
  const a = m.addMaster('10.0.0.1:7000', { id: 'a' });
  const b = m.addMaster('10.0.0.2:7000', { id: 'b' });
  m.assign(0, 9000, a);
  m.assign(9001, 16383, b);
  return m;
}
function pool() {
  const p = new kr.Pool();
  p.seed(['x', 'y']);
  return p;
}
const FACTORIES = {
  Ring: ring,
  SlotMap: map,
  Pool: pool,
  ReshardPlan: () => map().plan([[0, 1], [1, 1]]),
};
// Valid calls: [args]. Hostile examples replace one argument.
const BASELINES = {
  diff: () => [ring(), new kr.Ring(['a', 'b'])],
  parseNodes: () => ['a,b=2'],
  parseWeights: () => ['a=1,b=0'],
  keySlot: () => ['foo'],
  keySlots: () => [['a', 'b']],
  groupBySlot: () => [['a', '{a}b']],
  hashTag: () => ['{a}b'],
  sideKey: () => ['{p}:pool'],
  Ring: () => [['a', 'b'], { profile: 'native' }],
  'Ring.fromSpec': () => ['a,b=2', { profile: 'libketama' }],
  'Ring#get': () => ['k'],
  'Ring#getN': () => ['k', 2],
  'Ring#getMany': () => [['k', 'j']],
  'Ring#getManyIndexes': () => [['k', 'j']],
  'Ring#hashKey': () => ['k'],
  'Ring#ownerOfHash': () => [5n],
  'Ring#has': () => ['a'],
  'Ring#add': () => ['d', 1],
  'Ring#remove': () => ['a'],
  'Ring#setWeight': () => ['a', 2],
  'Ring#diff': () => [new kr.Ring(['a'])],
  'SlotMap.fromSlots': () => [[[0, 16383, ['10.0.0.1', 7000, 'id1']]]],
  'SlotMap.fromShards': () => [[{ slots: [0, 16383], nodes: [{ id: 'a', port: 7000, ip: '10.0.0.1', endpoint: '10.0.0.1', role: 'master', 'replication-offset': 0, health: 'online' }] }]],
  'SlotMap#addMaster': () => ['10.0.0.9:7000', { id: 'z' }],
  'SlotMap#addReplica': () => [0, '10.0.0.8:7000', { id: 'r' }],
  'SlotMap#setHealth': () => [0, 'failed'],
  'SlotMap#assign': () => [0, 10, 1],
  'SlotMap#unassign': () => [0, 10],
  'SlotMap#slotOwner': () => [5],
  'SlotMap#nodeForSlot': () => [5],
  'SlotMap#nodeForKey': () => ['k'],
  'SlotMap#lookup': () => ['k'],
  'SlotMap#ownersOfKeys': () => [['a', 'b']],
  'SlotMap#node': () => [0],
  'SlotMap#findId': () => ['a'],
  'SlotMap#applyRedirect': () => ['MOVED 1 :7001', '10.0.0.1'],
  'SlotMap#plan': () => [[[0, 1], [1, 2]]],
  'SlotMap#applyPlan': () => [map().plan([[0, 1], [1, 2]])],
  'Pool#seed': () => [['z'], { initial: 1, overwrite: false }],
  'Pool#pickMany': () => [3],
  'Pool#pickManyBytes': () => [3],
  'Pool#remove': () => ['x'],
  'Pool#restore': () => ['x', 'keep'],
  'Pool#count': () => ['x'],
  'Pool#removedCount': () => ['x'],
  'Pool#has': () => ['x'],
};

/** Every callable: [name, kind, class?, property] (kind: fn, ctor, static, method, getter). */
function enumerate() {
  const out = [];
  for (const [name, v] of Object.entries(kr)) {
    if (typeof v !== 'function') continue;
    if (/^[A-Z]/.test(name) && v.prototype) {
      out.push([name, 'ctor', v]);
      for (const p of Object.getOwnPropertyNames(v)) {
        if (['length', 'name', 'prototype'].includes(p)) continue;
        if (typeof v[p] === 'function') out.push([`${name}.${p}`, 'static', v, p]);
      }
      for (const p of Object.getOwnPropertyNames(v.prototype)) {
        if (p === 'constructor') continue;
        const d = Object.getOwnPropertyDescriptor(v.prototype, p);
        if (d.get) out.push([`${name}#${p}`, 'getter', v, p]);
        else if (typeof d.value === 'function') out.push([`${name}#${p}`, 'method', v, p]);
      }
    } else {
      out.push([name, 'fn', v]);
    }
  }
  return out;
}

const counts = new Map();
const outcomes = new Map();
function record(name, outcome) {
  counts.set(name, (counts.get(name) || 0) + 1);
  const o = outcomes.get(name) || new Map();
  o.set(outcome, (o.get(outcome) || 0) + 1);
  outcomes.set(name, o);
}

const show = (x) => {
  try {
    return JSON.stringify(x, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))?.slice(0, 300) ?? String(x);
  } catch {
    return Object.prototype.toString.call(x);
  }
};

function check(name, f, args) {
  const start = performance.now();
  let outcome = 'ok';
  try {
    const r = f(...args);
    if (r && typeof r.free === 'function' && !args.includes(r)) r.free(); // a new handle
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) assert.fail(`${name}(${show(args)}): a WebAssembly trap: ${e.message}`);
    assert.ok(e instanceof Error, `${name}(${show(args)}): threw a non-Error ${String(e)}`);
    assert.ok(typeof e.code === 'string', `${name}(${show(args)}): ${e.constructor.name} without a code: ${e.message}`);
    assert.ok(e.code in kr.ERROR_CODES, `${name}(${show(args)}): unknown code ${e.code}`);
    assert.notEqual(e.code, 'INTERNAL', `${name}(${show(args)}): INTERNAL: ${e.message}`);
    outcome = e.code;
  }
  const ms = performance.now() - start;
  assert.ok(ms < HANG_MS, `${name}(${show(args)}): ${ms.toFixed(0)} ms`);
  record(name, outcome);
}

function target(entry) {
  const [name, kind, v, p] = entry;
  if (kind === 'fn') return [() => v, v.length];
  if (kind === 'ctor') return [() => (...a) => new v(...a), v.length];
  if (kind === 'static') return [() => (...a) => v[p](...a), v[p].length];
  const factory = FACTORIES[name.split('#')[0]];
  if (!factory) return null;
  if (kind === 'getter') return [() => { const o = factory(); return () => o[p]; }, 0];
  // A method returning its own object (chaining) hands back nothing to free.
  return [() => {
    const o = factory();
    return (...a) => {
      const r = o[p](...a);
      return r === o ? undefined : r;
    };
  }, v.prototype[p].length];
}

const rssStart = process.memoryUsage().rss;
const handlesStart = kr.liveHandles();

for (const entry of enumerate()) {
  const name = entry[0];
  const t = target(entry);
  test(`hostile input: ${name}`, { skip: t ? false : 'no factory: its constructor is fed instead' }, () => {
    const [make, arity] = t;
    let f = make();
    let n = 0;
    const base = BASELINES[name];
    const call = fc.oneof(
      fc.array(value, { maxLength: Math.max(arity, 1) + 1 }),
      ...(base ? [fc.tuple(fc.nat(), value).map(([i, v]) => {
        const args = base();
        if (args.length === 0) return [v];
        args[i % args.length] = v;
        return args;
      })] : []),
    );
    fc.assert(fc.property(call, (args) => {
      if (++n % 25 === 0) f = make(); // fresh instance now and then
      check(name, f, args);
    }), { numRuns: EXAMPLES, seed: SEED, endOnFailure: true, includeErrorInReport: true });
  });
}

// A caller's length is never believed: an iterable claiming 2^53 items yields two, and an
// endless one is refused past the stated limit (TOO_LARGE) within bounded time.
const ENDLESS = {
  keySlots: (it) => kr.keySlots(it),
  groupBySlot: (it) => kr.groupBySlot(it),
  'Ring#getMany': (it) => ring().getMany(it),
  'SlotMap#ownersOfKeys': (it) => map().ownersOfKeys(it),
  'Pool#seed': (it) => pool().seed(it),
};
let rssBeforeEndless;
for (const [name, f] of Object.entries(ENDLESS)) {
  test(`lying and endless iterables: ${name}`, () => {
    rssBeforeEndless ??= process.memoryUsage().rss;
    try {
      f(lying(2 ** 53));
    } catch (e) {
      assert.ok(e.code in kr.ERROR_CODES && e.code !== 'INTERNAL', `${name}: ${e.message}`);
    }
    function* endless() {
      for (let i = 0; ; i++) yield `k${i}`;
    }
    const start = performance.now();
    assert.throws(() => f(endless()), (e) => e.code === 'TOO_LARGE');
    const ms = performance.now() - start;
    assert.ok(ms < HANG_MS, `${name}: ${ms.toFixed(0)} ms to refuse an endless iterable`);
    record(`${name} (endless)`, 'TOO_LARGE');
  });
}

// The budget holds for the hostile examples; the endless iterables (2^24 keys read before
// the refusal) are reported, not budgeted: their memory is the keys given.
after(() => {
  globalThis.gc?.();
  const end = process.memoryUsage().rss;
  const grew = (rssBeforeEndless ?? end) - rssStart;
  const lines = [`${'callable'.padEnd(34)} ${'examples'.padStart(8)}  outcomes`];
  for (const name of [...counts.keys()].sort()) {
    const o = [...outcomes.get(name)].sort().map(([k, v]) => `${k}:${v}`).join(' ');
    lines.push(`${name.padEnd(34)} ${String(counts.get(name)).padStart(8)}  ${o}`);
  }
  lines.push(`${counts.size} callables, ${[...counts.values()].reduce((a, b) => a + b, 0)} examples; RSS grew ${(grew / 2 ** 20).toFixed(0)} MiB (then ${((end - rssStart) / 2 ** 20).toFixed(0)} MiB with the endless iterables); live handles ${handlesStart} -> ${kr.liveHandles()}`);
  mkdirSync(join(repo, 'build'), { recursive: true });
  writeFileSync(join(repo, 'build', 'hostile-js.txt'), `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
  assert.ok(grew < RSS_BUDGET, `RSS grew ${(grew / 2 ** 20).toFixed(0)} MiB`);
});

