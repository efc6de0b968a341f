// Side-by-side benchmarks in Node: keyroute (wasm) vs the npm peers, in one run.
//   node bench/bench.mjs            (make bench-js)
//
// Writes build/bench/js.json (every row: what it measures, wall-clock ns per key of
// keyroute and of the peer, their ratio, whether both give the same answers) and
// build/bench/js.md (the same rows as a Markdown table), and puts that table into
// README.md between its `bench:js` markers: the README is generated from one recorded run
// rather than typed.
//
// Rows: like for like (keyroute's node-hashring profile vs npm hashring: identical
// answers, checked on every key before timing), and keyroute's other profiles vs the same
// peer (another algorithm: labelled so); keySlots/keySlot vs cluster-key-slot (identical
// answers except on empty hash tags, where keyroute follows Redis).
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { Ring, keySlot, keySlots } from 'keyroute';

const require = createRequire(import.meta.url);
const HashRing = require('hashring');
const clusterKeySlot = require('cluster-key-slot');
const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '..');
const N = Number(process.env.BENCH_KEYS || 100000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 7);

const keys = Array.from({ length: N }, (_, i) => `user:${i}:${(i * 2654435761) >>> 0}`);
const servers = Array.from({ length: 10 }, (_, i) => `10.0.0.${i + 1}:11211`);
const peerVersion = require('hashring/package.json').version;
let sink = 0;

// Each case: a setup (fresh peer / ring per round: unique keys, cold LRU) and a run over
// the N keys. Rounds interleave the cases so that load from other processes hits all of
// them alike; each case keeps its best round (wall clock, process.hrtime), in ns per key.
const cases = {};
function add(id, name, setup, run) {
  cases[id] = { name, setup, run, nsPerKey: Infinity, rounds: [] };
}

add('hashring', `npm hashring@${peerVersion} get (loop)`, () => new HashRing(servers), (peer) => {
  for (let i = 0; i < N; i++) sink += peer.get(keys[i]).length;
});
const ringLoop = (id, profile) => add(id, `keyroute Ring.get ${profile} (loop)`, () => new Ring(servers, { profile }), (ring) => {
  for (let i = 0; i < N; i++) sink += ring.get(keys[i]).length;
});
ringLoop('nodeHashring', 'node-hashring');
ringLoop('libketama', 'libketama');
ringLoop('native', 'native');
add('nodeHashringMany', 'keyroute Ring.getManyIndexes node-hashring (one call)', () => new Ring(servers, { profile: 'node-hashring' }), (ring) => {
  sink += ring.getManyIndexes(keys)[N - 1];
});
add('nativeMany', 'keyroute Ring.getManyIndexes native (one call)', () => new Ring(servers), (ring) => {
  sink += ring.getManyIndexes(keys)[N - 1];
});
// The same keys already encoded ({data, ends}: callers that keep keys as bytes).
const packedKeys = (() => {
  const data = new TextEncoder().encode(keys.join(''));
  const ends = new Uint32Array(N);
  let end = 0;
  for (let i = 0; i < N; i++) ends[i] = end += Buffer.byteLength(keys[i]);
  return { data, ends };
})();
add('nativeManyPacked', 'keyroute Ring.getManyIndexes native, packed {data, ends} (one call)', () => new Ring(servers), (ring) => {
  sink += ring.getManyIndexes(packedKeys)[N - 1];
});
add('cks', 'cluster-key-slot (loop)', () => null, () => {
  for (let i = 0; i < N; i++) sink += clusterKeySlot(keys[i]);
});
add('keySlots', 'keyroute keySlots (one call)', () => null, () => {
  sink += keySlots(keys)[N - 1];
});
add('keySlotsPacked', 'keyroute keySlots, packed {data, ends} (one call)', () => null, () => {
  sink += keySlots(packedKeys)[N - 1];
});
add('keySlot', 'keyroute keySlot (loop)', () => null, () => {
  for (let i = 0; i < N; i++) sink += keySlot(keys[i]);
});

// Same answers? Checked on every benchmark key before anything is timed.
function sameRing(profile) {
  const peer = new HashRing(servers);
  const ring = new Ring(servers, { profile });
  const got = ring.getMany(keys);
  const packedGot = ring.getMany(packedKeys);
  ring.free();
  return got.every((owner, i) => owner === peer.get(keys[i]) && packedGot[i] === owner);
}
const same = {
  nodeHashring: sameRing('node-hashring'),
  libketama: sameRing('libketama'),
  native: sameRing('native'),
  slots: Array.from(keySlots(keys)).every((s, i) => s === clusterKeySlot(keys[i])) && keySlots(packedKeys).every((s, i) => s === clusterKeySlot(keys[i])),
};
if (!same.nodeHashring) throw new Error('node-hashring profile and npm hashring disagree: the like-for-like rows would be wrong');

for (let r = 0; r < ROUNDS; r++) {
  for (const c of Object.values(cases)) {
    const ctx = c.setup();
    const t0 = process.hrtime.bigint();
    c.run(ctx);
    const ns = Number(process.hrtime.bigint() - t0) / N;
    c.rounds.push(ns);
    if (ns < c.nsPerKey) c.nsPerKey = ns;
    if (ctx && typeof ctx.free === 'function') ctx.free();
  }
}

const wasmBytes = readFileSync(join(pkg, 'dist', 'web', 'keyroute_js_bg.wasm'));
const budgetBytes = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).config.wasmGzipBudget;
const size = { wasmBytes: wasmBytes.length, gzipBytes: gzipSync(wasmBytes, { level: 9 }).length, budgetBytes };

const side = (id) => ({ name: cases[id].name, nsPerKey: cases[id].nsPerKey, rounds: cases[id].rounds });
function row(id, what, ours, peer, sameAnswers, note) {
  return { id, what, measure: 'wall', keyroute: side(ours), peer: side(peer), ratio: cases[peer].nsPerKey / cases[ours].nsPerKey, sameAnswers, note };
}
const rows = [
  row('ring-like-for-like', 'Ring.get, node-hashring profile vs npm hashring', 'nodeHashring', 'hashring', same.nodeHashring, 'identical answers (checked on every key)'),
  row('ring-batch-like-for-like', 'Ring.getManyIndexes (one call), node-hashring profile vs npm hashring get', 'nodeHashringMany', 'hashring', same.nodeHashring, 'identical answers (checked on every key)'),
  row('ring-libketama', 'Ring.get, libketama profile vs npm hashring', 'libketama', 'hashring', same.libketama, same.libketama
    ? 'another profile (libketama weighting), which answers alike at these equal weights'
    : 'another algorithm: libketama weighting vs npm hashring'),
  row('ring-native', 'Ring.get, native profile vs npm hashring', 'native', 'hashring', same.native, 'another algorithm: the SipHash-1-3 native ring vs npm hashring (MD5)'),
  row('ring-native-batch', 'Ring.getManyIndexes (one call), native profile vs npm hashring get', 'nativeMany', 'hashring', same.native, 'another algorithm (native)'),
  row('ring-native-batch-packed', 'Ring.getManyIndexes (one call, keys packed as {data, ends}), native profile vs npm hashring get', 'nativeManyPacked', 'hashring', same.native, 'another algorithm (native); keys already UTF-8'),
  row('slots-batch', 'keySlots (one call) vs cluster-key-slot', 'keySlots', 'cks', same.slots, 'identical answers on these keys (they have no empty hash tag)'),
  row('slots-batch-packed', 'keySlots (one call, keys packed as {data, ends}) vs cluster-key-slot', 'keySlotsPacked', 'cks', same.slots, 'identical answers on these keys; keys already UTF-8'),
  row('slots-loop', 'keySlot (loop) vs cluster-key-slot', 'keySlot', 'cks', same.slots, 'identical answers on these keys'),
];

// One change to a 30,000-node native ring (issue 17's change target), best of 5 as
// Python's bench measures it: add a new node, set its weight, remove it. Native rings
// change in place here as in Rust (remove renumbers every later node's points).
const changes = [];
for (const vnodes of [1, 160]) {
  const ring = new Ring(Array.from({ length: 30000 }, (_, i) => `node-${i}`), { vnodes });
  const best = { add: Infinity, setWeight: Infinity, remove: Infinity };
  for (let i = 0; i < 5; i++) {
    const name = `extra-${i}`;
    for (const [op, call] of [['add', () => ring.add(name)], ['setWeight', () => ring.setWeight(name, 2)], ['remove', () => ring.remove(name)]]) {
      const t = process.hrtime.bigint();
      call();
      best[op] = Math.min(best[op], Number(process.hrtime.bigint() - t));
    }
  }
  for (const [op, ns] of Object.entries(best)) changes.push({ what: `Ring.${op}, 30k nodes x ${vnodes}`, nsPerCall: ns });
  ring.free();
}

const run = {
  what: 'keyroute (npm, wasm) vs npm peers, side by side in one process',
  measure: 'wall clock (process.hrtime), best of the interleaved rounds, ns per key',
  keys: N,
  rounds: ROUNDS,
  node: process.version,
  cpu: cpus()[0]?.model || 'unknown',
  cpus: cpus().length,
  loadAverage: loadavg(),
  // For the benchmark report (bench/report/report.py): each peer's installed version.
  peerVersions: { hashring: peerVersion, 'cluster-key-slot': require('cluster-key-slot/package.json').version },
  date: new Date().toISOString(),
  size,
  rows,
  changes,
};

const md = [
  `| what (wall clock, best of ${ROUNDS} rounds over ${N} keys) | keyroute ns/key | peer | peer ns/key | keyroute is | same answers |`,
  '|---|---:|---|---:|---:|---|',
  ...rows.map((r) => `| ${r.what} | ${r.keyroute.nsPerKey.toFixed(1)} | ${r.peer.name} | ${r.peer.nsPerKey.toFixed(1)} | ${r.ratio.toFixed(2)}× faster | ${r.sameAnswers ? 'yes' : 'no'}: ${r.note} |`),
  '',
  `One change to a 30,000-node native ring (in place), best of 5: ${changes.map((c) => `${c.what} ${(c.nsPerCall / 1e6).toFixed(2)} ms`).join('; ')}.`,
  '',
  `.wasm: ${size.wasmBytes} bytes, ${size.gzipBytes} gzipped (budget ${size.budgetBytes}). Node ${process.version}, ${run.cpu} × ${run.cpus}, load average ${run.loadAverage[0].toFixed(1)} at the start.`,
].join('\n');

console.log(`keyroute bench: ${N} unique keys, best of ${ROUNDS} interleaved rounds, wall clock, node ${process.version}`);
for (const c of Object.values(cases)) console.log(`  ${c.name.padEnd(58)} ${c.nsPerKey.toFixed(1).padStart(8)} ns/key`);
console.log(md);
const out = join(pkg, '..', 'build', 'bench');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'js.json'), `${JSON.stringify(run, null, 2)}\n`);
writeFileSync(join(out, 'js.md'), `${md}\n`);
console.log(`wrote ${join(out, 'js.json')} and js.md`);

// The README's table is this run's, between its markers.
const readme = join(pkg, 'README.md');
const text = readFileSync(readme, 'utf8');
const start = text.indexOf('<!-- bench:js');
const end = text.indexOf('<!-- /bench:js -->');
if (start >= 0 && end > start) {
  const open = text.indexOf('-->', start) + 3;
  writeFileSync(readme, `${text.slice(0, open)}\n${md}\n${text.slice(end)}`);
  console.log(`updated the table in ${readme}`);
}
if (sink === 0.5) console.log(sink);
