// keyroute demo page: the library computes (rings, shares, diffs, slots, plans); this
// file only draws what it answers.
import init, { PROFILES, SlotMap, keySlot, initCluster } from '../dist/web.mjs';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#e15759', '#76b7b2', '#edc948', '#9c755f', '#ff9da7', '#2f4b7c', '#a05195', '#665191'];
const pct = (x, digits = 2) => `${(x * 100).toFixed(digits)}%`;

const colors = new Map();
function colorOf(name) {
  if (!colors.has(name)) colors.set(name, PALETTE[colors.size % PALETTE.length]);
  return colors.get(name);
}

function el(tag, attrs = {}, parent = null) {
  const e = tag.startsWith('svg:') ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  if (parent) parent.appendChild(e);
  return e;
}

// The status line: 'ready', what is being worked on, or the library's error as
// `CODE: message`. Every action replaces it, so no message outlives its cause.
function setStatus(text, error = false) {
  const s = $('status');
  s.textContent = text;
  s.classList.toggle('error', error);
  s.dataset.state = error ? 'error' : text === 'ready' ? 'ready' : 'busy';
}

// ------------------------------------------------------------------ ring
//
// The ring lives in a Worker (ring-worker.mjs): the page sends the node list, the worker
// builds the ring with the library and answers what to draw, summarised beyond its point
// budget. The page stays responsive while a large ring is built.

const PROFILE_NOTES = {
  native: 'SipHash-1-3, 64-bit points, 160 points per unit of weight: keyroute’s ring for new fleets.',
  libketama: 'RJ’s libketama: MD5, 4 points per digest, 40 digests per server at equal weight (f32/f64 mix).',
  libmemcached: 'libmemcached weighted ketama: servers on port 11211 hash as “host”, others as “host:port” (also twemproxy’s ring, hash: md5, for servers without an alias).',
  uhashring: 'PyPI uhashring (ketama): integer weights, lookup strictly after the key’s hash.',
  'node-hashring': 'npm hashring 3.x: JS-double weights, first node wins ties.',
  hash_ring: 'PyPI hash_ring: 3 points per digest.',
};

const worker = new Worker(new URL('./ring-worker.mjs', import.meta.url), { type: 'module' });
const pending = new Map();
let nextId = 1;
worker.onmessage = (ev) => {
  const p = pending.get(ev.data.id);
  pending.delete(ev.data.id);
  if (p) p(ev.data);
};
worker.onerror = (ev) => setStatus(`INTERNAL: the ring worker failed: ${ev.message}`, true);

// The committed state (what the worker holds once every request is answered).
let profile = 'native';
let nodes = [['10.0.0.1:11211', 1], ['10.0.0.2:11211', 1], ['10.0.0.3:11211', 1], ['10.0.0.4:11211', 1]];
let shown = null; // the last view: {profile, bits, pointCount, size, names, nodes, arcs, ticks}
let keyShown = null;
let lastMoved = null;
let lastChange = '';
let nextNode = 5;

function request(msg) {
  const id = nextId++;
  document.body.dataset.busy = 'true';
  return new Promise((resolve) => {
    pending.set(id, (answer) => {
      if (pending.size === 0) document.body.dataset.busy = 'false';
      resolve(answer);
    });
    worker.postMessage({ id, ...msg });
  });
}

// Asks the worker for (nextProfile, nextNodes); commits them if the library accepts them,
// else shows its error code and keeps the ring as it was.
async function change(description, nextProfile, nextNodes) {
  const points = nextNodes.reduce((s, [, w]) => s + (Number.isFinite(w) ? w : 0), 0);
  setStatus(points > 100000 ? `building the ring for “${description}” (the page stays usable meanwhile)…` : 'working…');
  const answer = await request({ profile: nextProfile, nodes: nextNodes, key: $('key').value, change: description });
  if (!answer.ok) {
    setStatus(`${answer.code}: ${answer.message}`, true);
    return false;
  }
  profile = nextProfile;
  nodes = nextNodes;
  lastChange = description;
  lastMoved = answer.moved;
  if (answer.changed) shown = answer.view;
  keyShown = answer.key;
  setStatus('ready');
  renderRing();
  return true;
}

async function refreshKey() {
  const answer = await request({ profile, nodes, key: $('key').value });
  if (!answer.ok) {
    setStatus(`${answer.code}: ${answer.message}`, true);
    return;
  }
  keyShown = answer.key;
  drawRing();
  renderKey();
}

function point(fraction, r) {
  const a = fraction * 2 * Math.PI - Math.PI / 2;
  return [r * Math.cos(a), r * Math.sin(a)];
}

// An SVG arc from fraction f0 to f1 (clockwise; f1 < f0 wraps) on radius r.
function arcPath(f0, f1, r) {
  let span = f1 - f0;
  if (span <= 0) span += 1;
  if (span >= 1 - 1e-12) {
    const [x0, y0] = point(f0, r);
    const [xm, ym] = point(f0 + 0.5, r);
    return `M${x0.toFixed(2)} ${y0.toFixed(2)}A${r} ${r} 0 1 1 ${xm.toFixed(2)} ${ym.toFixed(2)}A${r} ${r} 0 1 1 ${x0.toFixed(2)} ${y0.toFixed(2)}`;
  }
  const [x0, y0] = point(f0, r);
  const [x1, y1] = point(f0 + span, r);
  return `M${x0.toFixed(2)} ${y0.toFixed(2)}A${r} ${r} 0 ${span > 0.5 ? 1 : 0} 1 ${x1.toFixed(2)} ${y1.toFixed(2)}`;
}

function drawRing() {
  const svg = $('ring');
  svg.replaceChildren();
  const v = shown;
  svg.dataset.points = String(v.pointCount);
  svg.dataset.summarised = String(v.arcs.summarised);
  el('svg:circle', { cx: 0, cy: 0, r: 200, fill: 'none', stroke: '#eef0f5', 'stroke-width': 30 }, svg);
  const byOwner = new Map();
  for (let i = 0; i < v.arcs.owners.length; i++) {
    const o = v.arcs.owners[i];
    byOwner.set(o, (byOwner.get(o) || '') + arcPath(v.arcs.starts[i], v.arcs.ends[i], 200));
  }
  const arcGroup = el('svg:g', { id: 'ring-arcs' }, svg);
  for (const [o, d] of byOwner) {
    el('svg:path', { d, fill: 'none', stroke: colorOf(v.names[o]), 'stroke-width': 30, 'data-node': v.names[o] }, arcGroup);
  }
  // Points: a tick per point, coloured by its node (up to the worker's budget).
  const tickGroup = el('svg:g', { id: 'ring-points' }, svg);
  if (v.ticks) {
    const ticks = new Map();
    for (let i = 0; i < v.ticks.owners.length; i++) {
      const [x0, y0] = point(v.ticks.fractions[i], 218);
      const [x1, y1] = point(v.ticks.fractions[i], 230);
      const o = v.ticks.owners[i];
      ticks.set(o, (ticks.get(o) || '') + `M${x0.toFixed(1)} ${y0.toFixed(1)}L${x1.toFixed(1)} ${y1.toFixed(1)}`);
    }
    for (const [o, d] of ticks) el('svg:path', { d, stroke: colorOf(v.names[o]), 'stroke-width': 1.2, 'stroke-opacity': 0.85 }, tickGroup);
  }

  // Moved arcs of the last change: a band inside the ring, in the new owner's colour.
  const movedGroup = el('svg:g', { id: 'ring-moved' }, svg);
  if (lastMoved) {
    const m = lastMoved.arcs;
    for (let i = 0; i < m.starts.length; i++) {
      const d = arcPath(m.starts[i], m.ends[i], 168);
      el('svg:path', { d, fill: 'none', stroke: '#e4572e', 'stroke-width': 18, 'stroke-opacity': 0.35 }, movedGroup);
      el('svg:path', { d, fill: 'none', stroke: m.to[i] ? colorOf(m.to[i]) : '#999', 'stroke-width': 10 }, movedGroup);
    }
  }

  // Shares: each node's exact fraction of the circle (ring.nodes()), as one donut.
  const shareGroup = el('svg:g', { id: 'ring-shares' }, svg);
  let at = 0;
  for (const n of v.nodes) {
    if (n.share <= 0) continue;
    el('svg:path', { d: arcPath(at, (at + n.share) % 1, 128), fill: 'none', stroke: colorOf(n.name), 'stroke-width': 16, 'data-node': n.name }, shareGroup);
    if (n.share >= 0.04) {
      const [x, y] = point(at + n.share / 2, 148);
      el('svg:text', { x: x.toFixed(1), y: (y + 4).toFixed(1), 'text-anchor': 'middle', 'font-size': 11, fill: '#3a4254', text: pct(n.share, 1) }, shareGroup);
    }
    at += n.share;
  }

  // Centre: profile and the last change's numbers.
  el('svg:text', { x: 0, y: -28, 'text-anchor': 'middle', 'font-size': 22, 'font-weight': 700, fill: '#1d2433', text: v.profile }, svg);
  el('svg:text', { x: 0, y: -4, 'text-anchor': 'middle', 'font-size': 13, fill: '#6b7385', text: `${v.size} nodes · ${v.pointCount.toLocaleString('en')} points · ${v.bits}-bit` }, svg);
  if (lastMoved) {
    el('svg:text', { x: 0, y: 24, 'text-anchor': 'middle', 'font-size': 15, fill: '#e4572e', 'font-weight': 600, text: `moved ${pct(lastMoved.movedFraction)}` }, svg);
    el('svg:text', { x: 0, y: 44, 'text-anchor': 'middle', 'font-size': 13, fill: '#6b7385', text: `ideal ${pct(lastMoved.idealFraction)}` }, svg);
  }

  // The key: a needle at its hash, to its owner's arc.
  if (keyShown && keyShown.owner !== null) {
    const [x0, y0] = point(keyShown.fraction, 140);
    const [x1, y1] = point(keyShown.fraction, 245);
    el('svg:line', { x1: x0, y1: y0, x2: x1, y2: y1, stroke: '#1d2433', 'stroke-width': 2, 'stroke-dasharray': '4 3' }, svg);
    el('svg:circle', { cx: x1, cy: y1, r: 6, fill: colorOf(keyShown.owner), stroke: '#1d2433', 'stroke-width': 2, id: 'key-marker' }, svg);
  }
  const summary = v.arcs.summarised || (lastMoved && lastMoved.arcs.summarised)
    ? ` · ${v.pointCount.toLocaleString('en')} points is more than the page draws one by one: arcs sampled at ${v.arcs.owners.length ? 2880 : 0} positions, ticks left out`
    : '';
  $('ring-caption').textContent = `ticks: points · ring: the arcs each node owns · band: arcs moved by the last change · donut: shares · needle: the key${summary}`;
}

function renderNodes() {
  const tbody = $('nodes').querySelector('tbody');
  tbody.replaceChildren();
  const list = shown.nodes;
  const total = list.reduce((s, n) => s + n.weight, 0);
  for (const n of list) {
    const tr = el('tr', { 'data-node': n.name }, tbody);
    el('span', { class: 'swatch', style: `background:${colorOf(n.name)}` }, el('td', {}, tr));
    el('td', { text: n.name }, tr);
    const w = el('td', { class: 'weight' }, tr);
    const minus = el('button', { type: 'button', title: 'lighter', text: '−', 'data-action': 'lighter' }, w);
    el('span', { text: String(n.weight) }, w);
    const plus = el('button', { type: 'button', title: 'heavier', text: '+', 'data-action': 'heavier' }, w);
    minus.disabled = n.weight <= 1;
    const reweight = (to) => change(`reweight ${n.name}: ${n.weight} → ${to}`, profile, nodes.map(([name, wt]) => [name, name === n.name ? to : wt]));
    minus.onclick = () => reweight(n.weight - 1);
    plus.onclick = () => reweight(n.weight + 1);
    el('td', { class: 'num share', text: pct(n.share) }, tr);
    el('td', { class: 'num', text: pct(n.weight / total) }, tr);
    const rm = el('button', { type: 'button', text: 'remove', 'data-action': 'remove' }, el('td', {}, tr));
    rm.onclick = () => change(`remove ${n.name}`, profile, nodes.filter(([name]) => name !== n.name));
  }
  $('nodes').dataset.nodes = JSON.stringify(list.map((n) => [n.name, n.weight]));
  $('nodes').dataset.profile = shown.profile;
}

function renderChange() {
  $('change-what').textContent = lastChange || 'Add, remove or reweight a node, or switch profile.';
  const mv = $('moved-fraction');
  const id = $('ideal-fraction');
  if (lastMoved) {
    mv.textContent = pct(lastMoved.movedFraction, 3);
    mv.dataset.value = String(lastMoved.movedFraction);
    id.textContent = pct(lastMoved.idealFraction, 3);
    id.dataset.value = String(lastMoved.idealFraction);
    $('moved-bar').style.width = pct(Math.min(1, lastMoved.movedFraction));
    $('ideal-bar').style.width = pct(Math.min(1, lastMoved.idealFraction));
  } else {
    const text = lastChange ? 'n/a' : '—';
    mv.textContent = text;
    id.textContent = text;
    mv.dataset.value = '';
    id.dataset.value = '';
    $('moved-bar').style.width = '0';
    $('ideal-bar').style.width = '0';
    if (lastChange.startsWith('profile')) $('change-what').textContent += ' (different hash: positions are not comparable)';
  }
}

function renderKey() {
  const out = $('key-result');
  out.replaceChildren();
  if (!keyShown || keyShown.owner === null) {
    out.textContent = 'empty ring: no owner';
    return;
  }
  const line1 = el('div', {}, out);
  line1.append('owner ');
  el('span', { class: 'chip', style: `background:${colorOf(keyShown.owner)}`, id: 'key-owner', text: keyShown.owner }, line1);
  const line2 = el('div', {}, out);
  line2.append('replicas (getN 3) ');
  for (const r of keyShown.replicas) el('span', { class: 'chip', style: `background:${colorOf(r)}`, text: r }, line2);
  el('div', { class: 'note', text: `hash ${keyShown.hash} (${pct(keyShown.fraction)} around the circle)` }, out);
}

function renderRing() {
  drawRing();
  renderNodes();
  renderChange();
  renderKey();
}

async function setupRing() {
  const select = $('profile');
  for (const p of PROFILES) el('option', { value: p, text: p }, select);
  select.value = profile;
  $('profile-note').textContent = PROFILE_NOTES[profile];
  const first = await request({ profile, nodes, key: $('key').value });
  if (!first.ok) throw new Error(`${first.code}: ${first.message}`);
  shown = first.view;
  keyShown = first.key;
  select.onchange = async () => {
    const next = select.value;
    const ok = await change(`profile ${profile} → ${next}`, next, nodes);
    if (!ok) select.value = profile;
    $('profile-note').textContent = PROFILE_NOTES[profile] || '';
  };
  $('add-form').onsubmit = (ev) => {
    ev.preventDefault();
    let name = $('add-name').value.trim();
    if (!name) {
      while (nodes.some(([n]) => n === `10.0.0.${nextNode}:11211`)) nextNode++;
      name = `10.0.0.${nextNode}:11211`;
    }
    // The weight goes to the library as typed: 0, -5 or 1.5 come back as its error.
    const raw = $('add-weight').value.trim();
    const weight = raw === '' ? 1 : Number(raw);
    change(`add ${name} (weight ${raw || 1})`, profile, [...nodes, [name, weight]]).then((ok) => {
      if (ok) $('add-name').value = '';
    });
  };
  $('key').oninput = refreshKey;
  renderRing();
}

// ------------------------------------------------------------------ cluster

const STRIP_COLS = 1024;
const ROW_H = 10;
const ROW_GAP = 1;
let map = null;
let weights = [];
let plan = null;
let step = 0;
let timer = null;
let highlight = null;

function clusterColor(i) {
  return PALETTE[(i + 3) % PALETTE.length];
}

function resetCluster() {
  stopPlay();
  if (map) map.free();
  map = new SlotMap();
  const a = map.addMaster('127.0.0.1:7000', { id: 'node-a' });
  const b = map.addMaster('127.0.0.1:7001', { id: 'node-b' });
  const c = map.addMaster('127.0.0.1:7002', { id: 'node-c' });
  // As `redis-cli --cluster create` splits 3 masters.
  map.assign(0, 5460, a).assign(5461, 10922, b).assign(10923, 16383, c);
  weights = [1, 1, 1];
  clearPlan();
  renderCluster();
}

function clearPlan() {
  if (plan) plan.free();
  plan = null;
  step = 0;
  highlight = null;
  $('plan-moves').replaceChildren();
  $('plan-summary').textContent = '';
  $('step').disabled = true;
  $('play').disabled = true;
}

function drawStrip() {
  const canvas = $('slots');
  const ctx = canvas.getContext('2d');
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const owners = map.owners();
  for (let s = 0; s < owners.length; s++) {
    const o = owners[s];
    ctx.fillStyle = o === 0xffff ? '#e3e6ee' : clusterColor(o);
    ctx.fillRect(s % STRIP_COLS, Math.floor(s / STRIP_COLS) * (ROW_H + ROW_GAP), 1, ROW_H);
  }
  const mark = (start, end, color, width) => {
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    for (let s = start; s <= end; ) {
      const row = Math.floor(s / STRIP_COLS);
      const rowEnd = Math.min(end, (row + 1) * STRIP_COLS - 1);
      ctx.strokeRect((s % STRIP_COLS) + 0.5, row * (ROW_H + ROW_GAP) + 0.5, rowEnd - s + 1, ROW_H - 1);
      s = rowEnd + 1;
    }
  };
  if (highlight) mark(highlight.start, highlight.end, '#000', 2);
  const slot = Number($('slot-result').dataset.slot);
  if ($('slot-result').dataset.slot !== '') {
    const x = slot % STRIP_COLS;
    const y = Math.floor(slot / STRIP_COLS) * (ROW_H + ROW_GAP);
    ctx.fillStyle = '#000';
    ctx.fillRect(x - 1, y - 1, 3, ROW_H + 2);
  }
  const legend = $('slot-legend');
  legend.replaceChildren();
  const counts = map.slotCounts();
  map.nodes().forEach((n) => {
    if (n.role !== 'master') return;
    const item = el('span', {}, legend);
    el('span', { class: 'swatch', style: `background:${clusterColor(n.index)}` }, item);
    item.append(` ${n.name} ${n.address} · ${counts[n.index]} slots`);
  });
  el('span', { text: `rows of ${STRIP_COLS} slots, slot 0 top-left` }, legend);
}

function renderMasters() {
  const tbody = $('masters').querySelector('tbody');
  tbody.replaceChildren();
  const counts = map.slotCounts();
  for (const n of map.nodes()) {
    if (n.role !== 'master') continue;
    const tr = el('tr', {}, tbody);
    el('span', { class: 'swatch', style: `background:${clusterColor(n.index)}` }, el('td', {}, tr));
    el('td', { text: `${n.name} (${n.address})` }, tr);
    el('td', { class: 'num', text: String(counts[n.index]) }, tr);
    const input = el('input', { type: 'number', step: 'any', value: String(weights[n.index]), 'aria-label': `weight of ${n.name}` }, el('td', {}, tr));
    // The target weight goes to the library as typed (planning shows its error code).
    input.onchange = () => {
      weights[n.index] = input.value.trim() === '' ? 0 : Number(input.value);
      clearPlan();
      setStatus('ready');
    };
  }
}

function renderLookup() {
  const key = $('slot-key').value;
  const out = $('slot-result');
  const r = map.lookup(key);
  out.dataset.slot = String(r.slot);
  out.replaceChildren();
  const line = el('div', {}, out);
  line.append('key ');
  el('b', { text: JSON.stringify(key) }, line);
  line.append(' ');
  el('span', { class: 'arrow', text: '→' }, line);
  line.append(' hashed part ');
  el('b', { text: JSON.stringify(r.tag) }, line);
  line.append(' ');
  el('span', { class: 'arrow', text: '→' }, line);
  line.append(' slot ');
  el('b', { id: 'slot-number', text: String(r.slot) }, line);
  line.append(' ');
  el('span', { class: 'arrow', text: '→' }, line);
  line.append(' ');
  if (r.node) el('span', { class: 'chip', style: `background:${clusterColor(r.node.index)}`, id: 'slot-node', text: `${r.node.name} ${r.node.address}` }, line);
  else el('b', { id: 'slot-node', text: 'unassigned' }, line);
}

function renderCluster() {
  renderMasters();
  renderLookup();
  drawStrip();
}

function renderPlanList() {
  const list = $('plan-moves');
  list.replaceChildren();
  plan.moves.forEach((m, i) => {
    const from = m.from === null ? 'unassigned' : map.node(m.from).name;
    const li = el('li', { text: `slots ${m.start}–${m.end} (${m.count}): ${from} → ${map.node(m.to).name}` }, list);
    if (i < step) li.classList.add('done');
    if (i === step) li.classList.add('current');
  });
}

function makePlan() {
  clearPlan();
  const pairs = map.nodes().filter((n) => n.role === 'master').map((n) => [n.index, weights[n.index]]);
  try {
    plan = map.plan(pairs);
  } catch (e) {
    setStatus(`${e.code || 'INTERNAL'}: ${e.message}`, true);
    return;
  }
  setStatus('ready');
  const t = plan.targets.map((x) => `${map.node(x.node).name} ${x.before}→${x.after}`).join(', ');
  $('plan-summary').textContent = plan.moves.length === 0
    ? 'Already balanced: nothing to move.'
    : `${plan.moves.length} moves, ${plan.slotsMoved} slots (the minimum): ${t}`;
  $('step').disabled = plan.moves.length === 0;
  $('play').disabled = plan.moves.length === 0;
  highlight = plan.moves[0] || null;
  renderPlanList();
  drawStrip();
}

// One step of the plan: the library moves the slots (as SETSLOT … NODE would), we redraw.
function doStep() {
  if (!plan || step >= plan.moves.length) return false;
  const m = plan.moves[step];
  map.assign(m.start, m.end, m.to);
  step++;
  highlight = plan.moves[step] || m;
  renderPlanList();
  renderMasters();
  renderLookup();
  drawStrip();
  if (step >= plan.moves.length) {
    $('step').disabled = true;
    $('play').disabled = true;
    $('plan-summary').textContent += ' — done.';
    stopPlay();
  }
  return true;
}

function stopPlay() {
  if (timer) clearInterval(timer);
  timer = null;
  $('play').textContent = 'Play';
}

function setupCluster() {
  resetCluster();
  $('slot-key').oninput = () => {
    renderLookup();
    drawStrip();
  };
  $('slot-form').onsubmit = (ev) => ev.preventDefault();
  $('add-master').onclick = () => {
    const n = map.size;
    const i = map.addMaster(`127.0.0.1:${7000 + n}`, { id: `node-${String.fromCharCode(97 + n)}` });
    weights[i] = 1;
    clearPlan();
    renderCluster();
    setStatus('ready');
  };
  $('plan').onclick = makePlan;
  $('step').onclick = () => {
    stopPlay();
    doStep();
  };
  $('play').onclick = () => {
    if (timer) return stopPlay();
    $('play').textContent = 'Pause';
    timer = setInterval(() => {
      if (!doStep()) stopPlay();
    }, 700);
  };
  $('reset-cluster').onclick = resetCluster;
}

// ------------------------------------------------------------------ start

try {
  // The rings' module, then the cluster module (SlotMap) the slot panel uses: a .wasm of
  // its own, fetched in parallel.
  await Promise.all([init(), initCluster()]);
  await setupRing();
  setupCluster();
  setStatus('ready');
  document.body.dataset.ready = 'true';
  // The page exposes what it drew for the browser test; nothing here computes.
  window.keyrouteDemo = { keySlot };
} catch (e) {
  setStatus(`failed to start: ${e.message}`, true);
  throw e;
}
