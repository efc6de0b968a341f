// keyroute from an ES module in Node. Run: npm install && node example.mjs
import { Ring, keySlot, SlotMap } from 'keyroute';

// A new fleet: the native profile (SipHash, 64-bit points, 160 points per unit of weight).
const ring = new Ring(['cache-a', 'cache-b', 'cache-c']);
const keys = Array.from({ length: 5 }, (_, i) => `session:${i}`);
const owned = ring.getMany(keys); // one call into wasm for the batch
console.log(Object.fromEntries(keys.map((k, i) => [k, owned[i]])));
console.log('shares:', ring.shares());
const { positions, owners } = ring.points(); // BigUint64Array, Uint32Array
console.log(`${positions.length} points; first at ${positions[0]} owned by ${ring.names[owners[0]]}`);

// A resharding plan: add a third master, move the fewest slots.
const map = new SlotMap();
const a = map.addMaster('127.0.0.1:7000');
const b = map.addMaster('127.0.0.1:7001');
map.assign(0, 8191, a).assign(8192, 16383, b);
const c = map.addMaster('127.0.0.1:7002');
const plan = map.plan([[a, 1], [b, 1], [c, 1]]);
console.log(`plan: ${plan.moves.length} moves, ${plan.slotsMoved} slots`, plan.moves);
map.applyPlan(plan);
console.log('slot counts after:', Array.from(map.slotCounts()), '| slot of "foo":', keySlot('foo'));
