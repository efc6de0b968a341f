// The demo's engine/profile switch: keyroute/fleet (its own .wasm) answers which node owns
// a key, its candidates and where 20,000 sample keys go; the node list is read with core's
// grammar (parseNodes, in the cluster module). This file only draws the answers.
import init, { parseNodes, initCluster } from '../dist/web.mjs';
import initFleet, { Router, ENGINES } from '../dist/fleet-web.mjs';

const $ = (id) => document.getElementById(id);
const SAMPLE = Array.from({ length: 20000 }, (_, i) => `key-${i}`);
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#e15759', '#76b7b2', '#edc948', '#9c755f', '#ff9da7', '#2f4b7c'];
let router = null;

function status(text, error = false) {
  const s = $('engine-status');
  s.textContent = text;
  s.classList.toggle('error', error);
  s.dataset.state = error ? 'error' : 'ready';
}

// "name=value, name=value" as an object (values stay text: the library reads them).
function options(text) {
  const out = {};
  for (const part of text.split(',')) {
    const p = part.trim();
    if (!p) continue;
    const eq = p.indexOf('=');
    out[eq < 0 ? p : p.slice(0, eq).trim()] = eq < 0 ? '' : p.slice(eq + 1).trim();
  }
  return out;
}

function rebuild() {
  let next;
  try {
    const nodes = parseNodes($('engine-nodes').value).map((n) => [n.name, n.weight]);
    next = new Router($('engine').value, nodes, options($('engine-options').value));
  } catch (e) {
    status(`${e.code}: ${e.message}`, true);
    return;
  }
  if (router) router.free();
  router = next;
  status('ready');
  drawBalance();
  drawKey();
}

function drawBalance() {
  const names = router.names;
  const weights = router.weights;
  const counts = new Array(names.length).fill(0);
  for (const owner of router.getMany(SAMPLE)) counts[names.indexOf(owner)]++;
  const body = $('engine-balance').querySelector('tbody');
  body.replaceChildren();
  const max = Math.max(...counts, 1);
  names.forEach((name, i) => {
    const tr = document.createElement('tr');
    tr.innerHTML = `<td><span class="swatch" style="background:${PALETTE[i % PALETTE.length]}"></span></td><td></td><td class="num">${weights[i]}</td><td class="num">${counts[i]}</td><td><div class="share" style="width:${(100 * counts[i]) / max}%"></div></td>`;
    tr.children[1].textContent = name;
    body.appendChild(tr);
  });
  const total = weights.reduce((a, b) => a + b, 0);
  const peak = Math.max(...counts.map((c, i) => c / ((SAMPLE.length * weights[i]) / total)));
  $('engine-peak').textContent = `peak-to-mean (weighted) over ${SAMPLE.length} keys: ${peak.toFixed(3)}`;
  $('engine-balance').dataset.counts = JSON.stringify(counts);
  $('engine-balance').dataset.engine = router.engine;
}

function drawKey() {
  const out = $('engine-result');
  try {
    const key = $('engine-key').value;
    const owner = router.get(key);
    const candidates = router.getN(key, 3);
    out.dataset.owner = owner ?? '';
    out.dataset.candidates = JSON.stringify(candidates);
    out.textContent = `owner: ${owner ?? '—'}; candidates in order: ${candidates.join(' → ')}`;
  } catch (e) {
    status(`${e.code}: ${e.message}`, true);
  }
}

await init();
await initCluster();
await initFleet();
for (const name of ENGINES) {
  const o = document.createElement('option');
  o.value = name;
  o.textContent = name;
  $('engine').appendChild(o);
}
$('engine').value = 'maglev';
for (const id of ['engine', 'engine-options', 'engine-nodes']) $(id).addEventListener('change', rebuild);
$('engine-key').addEventListener('input', drawKey);
rebuild();
$('fleet-section').dataset.ready = 'true';
