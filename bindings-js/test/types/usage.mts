// Compiled by types.test.mjs with tsc --noEmit: the .d.ts must accept real usage and
// reject misuse (the @ts-expect-error lines).
import init, { Ring, diff, keySlot, keySlots, hashTag, SlotMap, Pool, LEAST_USED_SCRIPT, SCRIPTS, PROFILES, type KeyrouteError, type RingDiff } from 'keyroute';

const api = await init();
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
  const code: string = (e as KeyrouteError).code;
  void code;
}
// @ts-expect-error: keys are strings or bytes
ring.get(42);
// @ts-expect-error: getN needs a count
ring.getN('k');
// @ts-expect-error: plans only come from SlotMap.plan
new (await import('keyroute')).ReshardPlan();
void [owner, bytesOwner, replicas, many, idx, pos, own, f, slots, slot, tag, tagBytes, moved, port, picked, script];
