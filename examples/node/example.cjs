// keyroute from CommonJS. Run: npm install && node example.cjs (after `make build-js`).
const { Ring, keySlot, keySlots, hashTag, SlotMap, Pool, LEAST_USED_SCRIPT, LEAST_USED_SHA1 } = require('keyroute');

// A memcached fleet, bit-exact with libketama clients.
const ring = new Ring({ '127.0.0.1:11211': 600, '127.0.0.1:11212': 400 }, { profile: 'libketama' });
console.log('owner of "test":', ring.get('test')); // 127.0.0.1:11211, as libketama says
console.log('owner + replica:', ring.getN('user:42', 2));

// What adding a server moves.
const bigger = ring.clone().add('127.0.0.1:11213', 500);
const d = ring.diff(bigger);
console.log(`adding a server moves ${(d.movedFraction * 100).toFixed(1)}% of keys (ideal ${(d.idealFraction * 100).toFixed(1)}%)`);
ring.free();
bigger.free();

// Redis Cluster slots.
console.log('slot of foo{}{bar}:', keySlot('foo{}{bar}'), '(hash tag', JSON.stringify(hashTag('foo{}{bar}')) + ')');
console.log('slots of a batch:', keySlots(['{user:1}:a', '{user:1}:b', 'other']));
const map = new SlotMap();
const a = map.addMaster('127.0.0.1:7000', { id: 'a' });
const b = map.addMaster('127.0.0.1:7001', { id: 'b' });
map.assign(0, 8191, a).assign(8192, 16383, b);
console.log('foo is served by', map.nodeForKey('foo').address);
map.free();

// Least-used selection: run LEAST_USED_SCRIPT on Redis (EVALSHA), or the same model in memory.
const pool = new Pool();
pool.seed(['proxy-1', 'proxy-2']);
const proxy = pool.pick();
if (proxy === null) throw new Error('empty pool: make no request');
console.log('picked', proxy, '| script sha1', LEAST_USED_SHA1, '|', LEAST_USED_SCRIPT.split('\n')[0]);
pool.free();
