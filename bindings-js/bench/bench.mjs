// Side-by-side benchmarks in Node: keyroute (wasm) vs the npm peers, one run.
//   node bench/bench.mjs            (make bench-js)
// Targets (issue 6): .wasm ≤ 60 KB gzipped; Ring.get (libketama) ≥ 5× npm hashring's get
// on unique keys, native ≥ 10×; keySlots on 100k string keys at least as fast per key as
// cluster-key-slot looping.
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ring, keySlot, keySlots } from 'keyroute';

const require = createRequire(import.meta.url);
const HashRing = require('hashring');
const clusterKeySlot = require('cluster-key-slot');
const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '..');
const N = Number(process.env.BENCH_KEYS || 100000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);

const keys = Array.from({ length: N }, (_, i) => `user:${i}:${(i * 2654435761) >>> 0}`);
const servers = Array.from({ length: 10 }, (_, i) => `10.0.0.${i + 1}:11211`);
let sink = 0;

// Each case: a setup (fresh peer / ring per round: unique keys, cold LRU) and a run over
// the N keys. Rounds interleave the cases so that load from other processes hits all of
// them alike; each case keeps its best round, in ns per key.
const cases = {};
function add(id, name, setup, run) {
  cases[id] = { name, setup, run, nsPerKey: Infinity };
}

const wasmBytes = readFileSync(join(pkg, 'dist', 'web', 'keyroute_js_bg.wasm'));
const size = { wasmBytes: wasmBytes.length, gzipBytes: gzipSync(wasmBytes, { level: 9 }).length };

add('hashring', 'npm hashring@3.2.0 get', () => new HashRing(servers), (peer) => {
  for (let i = 0; i < N; i++) sink += peer.get(keys[i]).length;
});
const ringCase = (id, profile, label) => add(id, label, () => new Ring(servers, { profile }), (ring) => {
  for (let i = 0; i < N; i++) sink += ring.get(keys[i]).length;
});
ringCase('libketama', 'libketama', 'keyroute Ring.get libketama');
ringCase('nodeHashring', 'node-hashring', 'keyroute Ring.get node-hashring');
ringCase('native', 'native', 'keyroute Ring.get native');
add('libketamaMany', 'keyroute Ring.getManyIndexes libketama (one call)', () => new Ring(servers, { profile: 'libketama' }), (ring) => {
  sink += ring.getManyIndexes(keys)[N - 1];
});
add('nativeMany', 'keyroute Ring.getManyIndexes native (one call)', () => new Ring(servers), (ring) => {
  sink += ring.getManyIndexes(keys)[N - 1];
});
add('cks', 'cluster-key-slot loop', () => null, () => {
  for (let i = 0; i < N; i++) sink += clusterKeySlot(keys[i]);
});
add('keySlots', 'keyroute keySlots (one call)', () => null, () => {
  sink += keySlots(keys)[N - 1];
});
add('keySlot', 'keyroute keySlot loop', () => null, () => {
  for (let i = 0; i < N; i++) sink += keySlot(keys[i]);
});

for (let r = 0; r < ROUNDS; r++) {
  for (const c of Object.values(cases)) {
    const ctx = c.setup();
    const t0 = process.hrtime.bigint();
    c.run(ctx);
    const ns = Number(process.hrtime.bigint() - t0) / N;
    if (ns < c.nsPerKey) c.nsPerKey = ns;
    if (ctx && typeof ctx.free === 'function') ctx.free();
  }
}
const results = Object.fromEntries(Object.entries(cases).map(([id, c]) => [id, { name: c.name, nsPerKey: c.nsPerKey, opsPerSec: 1e9 / c.nsPerKey }]));

const ratio = (a, b) => results[a].nsPerKey / results[b].nsPerKey;
const ratios = {
  libketamaVsHashring: ratio('hashring', 'libketama'),
  nodeHashringVsHashring: ratio('hashring', 'nodeHashring'),
  nativeVsHashring: ratio('hashring', 'native'),
  keySlotsVsClusterKeySlot: ratio('cks', 'keySlots'),
};

console.log(`keyroute bench: ${N} unique keys, best of ${ROUNDS}, node ${process.version}`);
console.log(`.wasm ${size.wasmBytes} bytes, ${(size.gzipBytes / 1024).toFixed(1)} KiB gzipped (target ≤ 60 KB): ${size.gzipBytes <= 60000 ? 'ok' : 'MISSED'}`);
for (const r of Object.values(results)) console.log(`  ${r.name.padEnd(52)} ${r.nsPerKey.toFixed(1).padStart(8)} ns/key  ${(r.opsPerSec / 1e6).toFixed(2).padStart(7)} M/s`);
console.log(`Ring.get libketama vs hashring.get: ${ratios.libketamaVsHashring.toFixed(1)}× (target ≥ 5×)`);
console.log(`Ring.get node-hashring vs hashring.get (same answers): ${ratios.nodeHashringVsHashring.toFixed(1)}×`);
console.log(`Ring.get native vs hashring.get: ${ratios.nativeVsHashring.toFixed(1)}× (target ≥ 10×)`);
console.log(`keySlots vs cluster-key-slot loop: ${ratios.keySlotsVsClusterKeySlot.toFixed(2)}× (target ≥ 1×)`);
const out = join(pkg, '..', 'build');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'bench-js.json'), JSON.stringify({ keys: N, rounds: ROUNDS, node: process.version, size, results, ratios }, null, 2));
if (sink === 0.5) console.log(sink);
