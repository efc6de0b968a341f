// Agreement with the real npm hashring@3.2.0 on generated keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Ring } from 'keyroute';
import { rng } from './helpers.mjs';

const require = createRequire(import.meta.url);
const HashRing = require('hashring');
assert.equal(require('hashring/package.json').version, '3.2.0');

function keys(seed, n) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const kind = r();
    if (kind < 0.6) out.push(`key:${Math.floor(r() * 1e12)}`);
    else if (kind < 0.9) out.push(`user/${i}/é${Math.floor(r() * 1000)}`);
    else out.push(`${i}\u{1F600}${r()}`);
  }
  return out;
}

const cases = [
  { name: 'default, equal weights', servers: ['10.0.0.1:11211', '10.0.0.2:11211', '10.0.0.3:11211', '10.0.0.4:11211', '10.0.0.5:11211', '10.0.0.6:11211', '10.0.0.7:11211'], peerOpts: {}, opts: {} },
  { name: 'default, weighted', servers: { '10.0.0.1:11211': 1, '10.0.0.2:11211': 2, '10.0.0.3:11211': 3, '10.0.0.4:11211': 5 }, peerOpts: {}, opts: {} },
  { name: "'default port' 11211", servers: { '10.0.0.1:11211': 2, '10.0.0.2:11212': 1, '10.0.0.3:11211': 1 }, peerOpts: { 'default port': 11211 }, opts: { defaultPort: 11211 } },
  { name: "compatibility 'hash_ring'", servers: ['a:1', 'b:2', 'c:3', 'd:4', 'e:5'], peerOpts: { compatibility: 'hash_ring' }, opts: { pointsPerDigest: 3 } },
  { name: "compatibility 'hash_ring', weighted", servers: { 'a:1': 1, 'b:2': 2, 'c:3': 3 }, peerOpts: { compatibility: 'hash_ring' }, opts: { pointsPerDigest: 3 } },
  { name: 'names without ports', servers: ['cache-a', 'cache-b', 'cache-c'], peerOpts: {}, opts: {} },
];

for (const [ci, c] of cases.entries()) {
  test(`hashring@3.2.0 agreement: ${c.name}`, () => {
    const peer = new HashRing(c.servers, 'md5', { ...c.peerOpts, 'max cache size': 10 });
    const ring = new Ring(c.servers, { profile: 'node-hashring', ...c.opts });
    const ks = keys(100 + ci, 20000);
    const batch = ring.getMany(ks);
    for (let i = 0; i < ks.length; i++) {
      const want = peer.get(ks[i]);
      if (ring.get(ks[i]) !== want || batch[i] !== want) assert.fail(`key ${JSON.stringify(ks[i])}: peer ${want}, keyroute ${ring.get(ks[i])}`);
    }
    for (const k of ks.slice(0, 500)) assert.deepEqual(ring.getN(k, 2), peer.range(k, 2), `range of ${k}`);
    // Changes: add and remove a server on both.
    peer.add('10.9.9.9:11211');
    ring.add('10.9.9.9:11211');
    for (const k of ks.slice(0, 3000)) assert.equal(ring.get(k), peer.get(k), `after add: ${k}`);
    const first = Array.isArray(c.servers) ? c.servers[0] : Object.keys(c.servers)[0];
    peer.remove(first);
    ring.remove(first);
    for (const k of ks.slice(0, 3000)) assert.equal(ring.get(k), peer.get(k), `after remove: ${k}`);
    ring.free();
  });
}
