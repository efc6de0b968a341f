// The demo's ring computations, off the page's thread: a ring of 32 million points takes
// the library seconds to build, and the page must stay responsive meanwhile. The worker
// holds the current ring, answers with what the page draws, and summarises what would
// be too much to draw (DRAW_BUDGET).
import init, { Ring, diff } from '../dist/web.mjs';

/** Points, arcs and moved arcs are drawn one by one up to this many; beyond, summarised. */
export const DRAW_BUDGET = 20000;
/** Positions sampled around the circle to summarise a ring beyond the budget. */
const SAMPLES = 2880;

let ring = null;
let ringKey = '';
const ready = init();

const keyOf = (profile, nodes) => JSON.stringify([profile, nodes]);

// Arcs of at most DRAW_BUDGET points as drawn, or else the owner at SAMPLES evenly spaced
// positions (ring.ownerOfHash), runs of one owner merged: {starts, ends, owners} in
// fractions of the circle, owners as indexes into names.
function arcsOf(r) {
  if (r.pointCount <= DRAW_BUDGET) {
    const a = r.arcs();
    return { starts: a.startFractions, ends: a.endFractions.map((x) => x % 1), owners: a.owners, summarised: false };
  }
  const names = r.names;
  const index = new Map(names.map((n, i) => [n, i]));
  const circle = 2n ** BigInt(r.bits);
  const starts = [];
  const ends = [];
  const owners = [];
  for (let s = 0; s < SAMPLES; s++) {
    const at = (circle * BigInt(2 * s + 1)) / BigInt(2 * SAMPLES);
    const o = index.get(r.ownerOfHash(at));
    if (owners.length && owners[owners.length - 1] === o) ends[ends.length - 1] = (s + 1) / SAMPLES;
    else {
      starts.push(s / SAMPLES);
      ends.push((s + 1) / SAMPLES);
      owners.push(o);
    }
  }
  return { starts: Float64Array.from(starts), ends: Float64Array.from(ends), owners: Uint32Array.from(owners), summarised: true };
}

// Moved arcs as drawn, or beyond the budget the SAMPLES buckets any moved arc touches,
// runs merged: {starts, ends, to} (to: a node name or null).
function movedOf(d) {
  if (d.moved.length <= DRAW_BUDGET) {
    return { starts: d.moved.map((m) => m.startFraction), ends: d.moved.map((m) => m.endFraction % 1), to: d.moved.map((m) => m.to), summarised: false };
  }
  const bucket = new Array(SAMPLES).fill(undefined);
  for (const m of d.moved) {
    const a = Math.floor(m.startFraction * SAMPLES);
    let b = Math.floor((m.endFraction - 1e-12) * SAMPLES);
    if (b < a) b += SAMPLES; // wraps
    for (let i = a; i <= b; i++) bucket[i % SAMPLES] = m.to;
  }
  const starts = [];
  const ends = [];
  const to = [];
  for (let s = 0; s < SAMPLES; s++) {
    if (bucket[s] === undefined) continue;
    if (to.length && ends[ends.length - 1] === s / SAMPLES && to[to.length - 1] === bucket[s]) ends[ends.length - 1] = (s + 1) / SAMPLES;
    else {
      starts.push(s / SAMPLES);
      ends.push((s + 1) / SAMPLES);
      to.push(bucket[s]);
    }
  }
  return { starts, ends, to, summarised: true };
}

function keyInfo(key) {
  if (ring.size === 0) return { owner: null, replicas: [], hash: null, fraction: null };
  const hash = ring.hashKey(key);
  return { owner: ring.get(key), replicas: ring.getN(key, 3), hash: String(hash), fraction: Number(hash) / 2 ** ring.bits };
}

function view(withRing) {
  const out = { profile: ring.profile, bits: ring.bits, pointCount: ring.pointCount, size: ring.size, names: ring.names };
  if (withRing) {
    out.nodes = ring.nodes();
    out.arcs = arcsOf(ring);
    if (ring.pointCount <= DRAW_BUDGET) {
      const p = ring.points();
      out.ticks = { fractions: p.fractions, owners: p.owners };
    } else out.ticks = null;
  }
  return out;
}

// {id, profile, nodes, key, change}: makes (profile, nodes) the current ring (diffing it
// against the ring before when `change` says what changed), answers the view and the key.
async function handle(m) {
  await ready;
  const next = keyOf(m.profile, m.nodes);
  let moved = null;
  let changed = false;
  if (next !== ringKey) {
    const built = new Ring(m.nodes, { profile: m.profile });
    if (ring && m.change) {
      try {
        const d = diff(ring, built);
        moved = { movedFraction: d.movedFraction, idealFraction: d.idealFraction, arcs: movedOf(d) };
      } catch (e) {
        if (e.code !== 'INCOMPATIBLE_RINGS') throw e;
      }
    }
    if (ring) ring.free();
    ring = built;
    ringKey = next;
    changed = true;
  }
  return { changed, moved, view: view(changed), key: keyInfo(m.key) };
}

let queue = Promise.resolve();
self.onmessage = (ev) => {
  const m = ev.data;
  queue = queue.then(async () => {
    try {
      self.postMessage({ id: m.id, ok: true, ...(await handle(m)) });
    } catch (e) {
      self.postMessage({ id: m.id, ok: false, code: e.code || 'INTERNAL', message: e.message });
    }
  });
};
