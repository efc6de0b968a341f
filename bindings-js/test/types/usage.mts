// Compiled by types.test.mjs with tsc --noEmit: the .d.ts must accept real usage and
// reject misuse (the @ts-expect-error lines).
import init, { Ring, diff, keySlot, keySlots, groupBySlot, hashTag, sideKey, parseNodes, parseWeights, SlotMap, Pool, LEAST_USED_SCRIPT, SCRIPTS, PROFILES, ERROR_CODES, LIMITS, liveHandles, initCluster, type KeyrouteError, type PackedKeys, type RingDiff, type ErrorCode } from 'keyroute';

const api = await init();
const sameApi: typeof api | null = await initCluster();
const ring: Ring = new api.Ring({ a: 1, b: 2 }, { profile: 'libketama', defaultPort: null });
const owner: string | null = ring.get('key');
const bytesOwner: string | null = ring.get(new Uint8Array([1, 2]));
const replicas: string[] = ring.getN('key', 2);
const many: (string | null)[] = ring.getMany(['a', new Uint8Array(1)]);
const idx: Int32Array = ring.getManyIndexes(new Set(['a']));
const pts = ring.points();
const pos: BigUint64Array = pts.positions;
const own: Uint32Array = pts.owners;
const d: RingDiff = diff(ring, ring.clone().add('c').remove('a').setWeight('b', 3));
const f: number = d.moved[0].startFraction + d.movedFraction;
const slots: Uint16Array = keySlots(['a', 'b']);
const packed: PackedKeys = { data: new TextEncoder().encode('ab'), ends: Uint32Array.of(1, 2) };
const packedSlots: Uint16Array = keySlots(packed);
const packedIdx: Int32Array = ring.getManyIndexes({ data: new Uint8Array(3), ends: Uint32Array.of(3) });
const slot: number = keySlot('foo');
const tag: string = hashTag('{a}b');
const tagBytes: Uint8Array = hashTag(new Uint8Array(2));
const map = new SlotMap();
const m = map.addMaster('127.0.0.1:7000', { id: 'a' });
map.assign(0, 16383, m);
const plan = map.plan([[m, 1]]);
const moved: number = plan.slotsMoved + plan.moves.length;
const node = map.nodeForKey('x');
const port: number | undefined = node?.port;
const pool = new Pool();
pool.seed(['p1', 'p2'], { initial: 0 });
const picked: string | null = pool.pick();
const script: string = LEAST_USED_SCRIPT + SCRIPTS['least-used'].sha1 + PROFILES[0];
try {
  new Ring(['a', 'a']);
} catch (e) {
  const code: ErrorCode = (e as KeyrouteError).code;
  const number: number = ERROR_CODES[code];
  void [code, number];
}
const spec: Ring = Ring.fromSpec('10.0.0.1:11211=2, 10.0.0.2:11211', { profile: 'libketama' });
const fromParsed = new Ring(parseNodes('a=2,b'));
const groups: { slot: number; indexes: number[] }[] = groupBySlot(['{a}1', '{a}2']);
const side: string = sideKey('{p}:pool');
const sideBytes: Uint8Array = sideKey(new Uint8Array([1]));
const shards = SlotMap.fromShards([{ slots: [0, 16383], nodes: [{ id: 'a', port: 7000, ip: '127.0.0.1', endpoint: '127.0.0.1', role: 'master', health: 'online' }] }]);
const fromSlots = SlotMap.fromSlots([{ from: 0, to: 16383, master: { host: '127.0.0.1', port: 7000, id: 'a' }, replicas: [] }]);
map.plan(parseWeights('127.0.0.1:7000=1'));
const big = new Ring(['a'], { vnodes: 160n });
const n: number = liveHandles() + LIMITS.batchKeys + big.vnodes + ring.getN('k', 2n).length;
const ownerAt: string | null = ring.ownerOfHash(0n);
void [packedSlots, packedIdx, spec, fromParsed, groups, side, sideBytes, shards, fromSlots, n, ownerAt];
// @ts-expect-error: keys are strings or bytes
ring.get(42);
// @ts-expect-error: a string is one key, not a list of keys
keySlots('foo');
// @ts-expect-error: packed ends are a Uint32Array
keySlots({ data: new Uint8Array(2), ends: [1, 2] });
// @ts-expect-error: a string is not a node list (Ring.fromSpec reads one)
new Ring('abc');
// @ts-expect-error: members are a list
pool.seed('proxy-1');
// @ts-expect-error: getN needs a count
ring.getN('k');
// @ts-expect-error: plans only come from SlotMap.plan
new (await import('keyroute')).ReshardPlan();
void [owner, bytesOwner, replicas, many, idx, pos, own, f, slots, slot, tag, tagBytes, moved, port, picked, script];
