// The demo page in Debian's Chromium (driven by playwright-core; no browser download).
//   KEYROUTE_SCREENSHOT_DIR=build node --test test-browser/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { Ring, diff } from 'keyroute';
import { Router } from 'keyroute/fleet';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const shotDir = resolve(process.env.KEYROUTE_SCREENSHOT_DIR || join(repo, 'build'));

let server;
let base;
let browser;
let context;
let page;
let userDataDir;
const consoleErrors = [];

// python3 -m http.server on a free port chosen by the OS (port 0), bound to 127.0.0.1.
function startServer() {
  return new Promise((resolveStart, reject) => {
    const p = spawn('python3', ['-u', '-m', 'http.server', '--bind', '127.0.0.1', '--directory', repo, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`http.server did not start: ${out}`)), 15000);
    p.stdout.on('data', (d) => {
      out += d;
      const m = /port (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveStart([p, `http://127.0.0.1:${m[1]}`]);
      }
    });
    p.stderr.on('data', () => {});
    p.on('exit', (code) => reject(new Error(`http.server exited ${code}: ${out}`)));
  });
}

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} missing: scripts/apt-install.sh chromium`);
  [server, base] = await startServer();
  userDataDir = mkdtempSync(join(tmpdir(), 'keyroute-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1600, height: 1300 },
  });
  page = context.pages()[0] || (await context.newPage());
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => consoleErrors.push(String(err)));
  page.on('requestfailed', (req) => consoleErrors.push(`request failed: ${req.url()}`));
  await page.goto(`${base}/bindings-js/demo/`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
});

after(async () => {
  if (context) await context.close();
  if (browser) await browser.close();
  if (server) server.kill();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

async function ringState() {
  return page.evaluate(() => ({
    nodes: JSON.parse(document.getElementById('nodes').dataset.nodes),
    profile: document.getElementById('nodes').dataset.profile,
    drawing: document.getElementById('ring').innerHTML,
    moved: document.getElementById('moved-fraction').dataset.value,
    movedText: document.getElementById('moved-fraction').textContent,
    ideal: document.getElementById('ideal-fraction').dataset.value,
  }));
}

function libraryDiff(profile, oldNodes, newNodes) {
  const a = new Ring(oldNodes, { profile });
  const b = new Ring(newNodes, { profile });
  try {
    return diff(a, b);
  } finally {
    a.free();
    b.free();
  }
}

test('the page draws the ring from the library', async () => {
  const s = await ringState();
  assert.equal(s.profile, 'native');
  assert.equal(s.nodes.length, 4);
  const paths = await page.locator('#ring-arcs path').count();
  assert.equal(paths, 4, 'one arc path per node');
  const owner = await page.locator('#key-owner').textContent();
  const r = new Ring(s.nodes, { profile: s.profile });
  assert.equal(owner, r.get('user:42'));
  r.free();
});

test('adding a node changes the drawing; the moved fraction shown equals diff() in Node', async () => {
  const before = await ringState();
  await page.fill('#add-name', '10.0.0.9:11211');
  await page.fill('#add-weight', '2');
  await page.click('#add-node');
  await page.waitForFunction((n) => JSON.parse(document.getElementById('nodes').dataset.nodes).length === n, before.nodes.length + 1);
  const afterAdd = await ringState();
  assert.notEqual(afterAdd.drawing, before.drawing);
  assert.deepEqual(afterAdd.nodes.at(-1), ['10.0.0.9:11211', 2]);
  const d = libraryDiff(before.profile, before.nodes, afterAdd.nodes);
  assert.equal(Number(afterAdd.moved), d.movedFraction);
  assert.equal(Number(afterAdd.ideal), d.idealFraction);
  assert.equal(afterAdd.movedText, `${(d.movedFraction * 100).toFixed(3)}%`);
  assert.ok(d.movedFraction > 0.2 && d.movedFraction < 0.45, `${d.movedFraction}`);
  assert.ok((await page.locator('#ring-moved path').count()) > 0, 'moved arcs are highlighted');
});

test('profile switch and reweight in a ketama profile agree with diff() too', async () => {
  await page.selectOption('#profile', 'libketama');
  await page.waitForFunction(() => document.getElementById('nodes').dataset.profile === 'libketama');
  const before = await ringState();
  assert.equal(before.moved, '', 'native → libketama hash differently: no diff shown');
  await page.click('#nodes tbody tr:first-child button[data-action="heavier"]');
  await page.waitForFunction((w) => JSON.parse(document.getElementById('nodes').dataset.nodes)[0][1] === w, before.nodes[0][1] + 1);
  const after = await ringState();
  assert.notEqual(after.drawing, before.drawing);
  const d = libraryDiff('libketama', before.nodes, after.nodes);
  assert.equal(Number(after.moved), d.movedFraction);
  await page.click('#nodes tbody tr:last-child button[data-action="remove"]');
  await page.waitForFunction((n) => JSON.parse(document.getElementById('nodes').dataset.nodes).length === n, after.nodes.length - 1);
  const removed = await ringState();
  assert.equal(Number(removed.moved), libraryDiff('libketama', after.nodes, removed.nodes).movedFraction);
});

test('slot lookup shows the slot of the real-Redis vectors', async () => {
  const v = JSON.parse(readFileSync(join(repo, 'tests', 'vectors', 'slot', 'redis_keyslot.json'), 'utf8'));
  const dec = new TextDecoder('utf-8', { fatal: true });
  const usable = [];
  for (const c of v.cases) {
    let s;
    try {
      s = dec.decode(Buffer.from(c.key_hex, 'hex'));
    } catch {
      continue;
    }
    // An <input> cannot hold line breaks or NUL; keep keys it can.
    if (/[\x00-\x1f\x7f]/.test(s)) continue;
    usable.push([s, c.slot]);
  }
  assert.ok(usable.length > 30);
  // The empty-tag cases first, then a spread of the rest.
  const picks = usable.filter(([s]) => s.includes('{')).slice(0, 25).concat(usable.filter((_, i) => i % 97 === 0).slice(0, 25));
  for (const [key, slot] of picks) {
    await page.fill('#slot-key', key);
    await page.waitForFunction((k) => document.querySelector('#slot-result b')?.textContent === JSON.stringify(k), key);
    assert.equal(await page.locator('#slot-number').textContent(), String(slot), `key ${JSON.stringify(key)}`);
  }
  await page.fill('#slot-key', '{user:1000}:cart');
});

test('resharding: add a master, plan, step through the moves', async () => {
  const strip = () => page.evaluate(() => document.getElementById('slots').toDataURL());
  const s0 = await strip();
  await page.click('#add-master');
  await page.click('#plan');
  const summary = await page.locator('#plan-summary').textContent();
  assert.match(summary, /4096 slots/);
  const moves = await page.locator('#plan-moves li').count();
  assert.ok(moves >= 3, `${moves} moves`);
  await page.click('#step');
  await page.click('#step');
  assert.equal(await page.locator('#plan-moves li.done').count(), 2);
  assert.notEqual(await strip(), s0);
});

// Distinct colours and non-background pixels of the ring (its SVG drawn onto a canvas)
// and of the slot strip (its canvas), read back in the page.
async function pixels() {
  return page.evaluate(async () => {
    const count = (data) => {
      const colours = new Set();
      let painted = 0;
      for (let i = 0; i < data.length; i += 4) {
        const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
        if (a > 0 && !(r > 240 && g > 240 && b > 240)) {
          painted++;
          colours.add((r << 16) | (g << 8) | b);
        }
      }
      return { painted, colours: colours.size, total: data.length / 4 };
    };
    const svg = document.getElementById('ring');
    const xml = new XMLSerializer().serializeToString(svg);
    const img = new Image(520, 520);
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(xml)}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = 520;
    c.height = 520;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0, 520, 520);
    const strip = document.getElementById('slots');
    return {
      ring: count(ctx.getImageData(0, 0, 520, 520).data),
      slots: count(strip.getContext('2d').getImageData(0, 0, strip.width, strip.height).data),
    };
  });
}

test('weights 0, -5 and 1.5 show the library\'s error code; the next change clears it', async () => {
  const before = await ringState();
  for (const [weight, code] of [['0', 'ZERO_WEIGHT'], ['-5', 'NEGATIVE_WEIGHT'], ['1.5', 'BAD_WEIGHT']]) {
    await page.fill('#add-name', `bad-${code}`);
    await page.fill('#add-weight', weight);
    await page.click('#add-node');
    await page.waitForFunction((c) => document.getElementById('status').textContent.startsWith(`${c}:`), code);
    assert.equal(await page.getAttribute('#status', 'data-state'), 'error');
    assert.deepEqual((await ringState()).nodes, before.nodes, `weight ${weight} changed nothing`);
  }
  await page.fill('#add-name', '');
  await page.fill('#add-weight', '1');
  await page.click('#nodes tbody tr:last-child button[data-action="heavier"]');
  await page.waitForFunction(() => document.getElementById('status').dataset.state === 'ready');
  assert.equal(await page.textContent('#status'), 'ready');
  await page.click('#nodes tbody tr:last-child button[data-action="lighter"]');
  await page.waitForFunction(() => document.getElementById('status').dataset.state === 'ready');
});

test('a node of weight 200000 (32 million points): the page stays responsive, the ring is summarised, not blank', async () => {
  await page.selectOption('#profile', 'native');
  await page.waitForFunction(() => document.getElementById('nodes').dataset.profile === 'native' && document.body.dataset.busy === 'false');
  const before = await ringState();
  await page.fill('#add-name', 'huge');
  await page.fill('#add-weight', '200000');
  await page.click('#add-node');
  await page.waitForFunction(() => document.body.dataset.busy === 'true');
  // While the worker builds, the page answers at once and the cluster half works.
  const t0 = Date.now();
  assert.equal(await page.evaluate(() => 6 * 7), 42);
  assert.ok(Date.now() - t0 < 2000, `the page took ${Date.now() - t0} ms to answer during the build`);
  await page.fill('#slot-key', 'foo');
  await page.waitForFunction(() => document.getElementById('slot-number')?.textContent === '12182');
  assert.equal(await page.evaluate(() => document.body.dataset.busy), 'true', 'the build was still running (the check above ran during it)');
  assert.match(await page.textContent('#status'), /building the ring/);
  await page.waitForFunction(() => document.body.dataset.busy === 'false', null, { timeout: 240000, polling: 500 });
  assert.equal(await page.getAttribute('#status', 'data-state'), 'ready', await page.textContent('#status'));
  const after = await ringState();
  assert.deepEqual(after.nodes.at(-1), ['huge', 200000]);
  const points = 160 * after.nodes.reduce((sum, [, w]) => sum + w, 0);
  assert.ok(points > 32_000_000);
  assert.equal(await page.getAttribute('#ring', 'data-points'), String(points));
  assert.equal(await page.getAttribute('#ring', 'data-summarised'), 'true');
  // Sampled at 2880 positions: the huge node's arcs (the others own 0.003% of the circle).
  assert.ok((await page.locator('#ring-arcs path[data-node="huge"]').count()) === 1, 'the huge node is drawn');
  assert.ok(after.drawing.length < 1_000_000, `the drawing is ${after.drawing.length} characters`);
  const d = libraryDiff('native', before.nodes, after.nodes);
  assert.equal(Number(after.moved), d.movedFraction);
  assert.ok(d.movedFraction > 0.99);
  const px = await pixels();
  assert.ok(px.ring.painted > 20000 && px.ring.colours > 5, `ring: ${JSON.stringify(px.ring)}`);
  // Back to a small ring.
  await page.click('#nodes tbody tr:last-child button[data-action="remove"]');
  await page.waitForFunction(() => document.body.dataset.busy === 'false' && !JSON.parse(document.getElementById('nodes').dataset.nodes).some(([n]) => n === 'huge'), null, { timeout: 240000, polling: 500 });
  assert.equal(await page.getAttribute('#ring', 'data-summarised'), 'false');
});

test('screenshot: the ring and the slot strip are drawn (pixels read back)', async () => {
  mkdirSync(shotDir, { recursive: true });
  await page.fill('#key', 'user:42');
  await page.waitForFunction(() => document.body.dataset.busy === 'false');
  const px = await pixels();
  // The ring: coloured arcs, ticks, shares, text (thousands of painted pixels, many colours).
  assert.ok(px.ring.painted > 20000, `ring: ${JSON.stringify(px.ring)}`);
  assert.ok(px.ring.colours >= 8, `ring: ${JSON.stringify(px.ring)}`);
  // The slot strip: every slot painted, in one colour per master at least.
  assert.ok(px.slots.painted > px.slots.total / 2, `slots: ${JSON.stringify(px.slots)}`);
  assert.ok(px.slots.colours >= 3, `slots: ${JSON.stringify(px.slots)}`);
  const png = await page.screenshot({ path: join(shotDir, 'keyroute-demo.png'), fullPage: true });
  assert.ok(png.length > 50000, `screenshot of ${png.length} bytes`);
});

test('examples/browser runs', async () => {
  const p = await context.newPage();
  p.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(`examples/browser: ${msg.text()}`);
  });
  p.on('pageerror', (err) => consoleErrors.push(`examples/browser: ${err}`));
  await p.goto(`${base}/examples/browser/`);
  await p.waitForFunction(() => document.getElementById('out').textContent.startsWith('owner:'));
  const r = new Ring({ 'cache-a': 1, 'cache-b': 1, 'cache-c': 2 });
  assert.match(await p.locator('#out').textContent(), new RegExp(`owner:\\s+${r.get('user:42')}`));
  r.free();
  await p.close();
});

// The engine/profile switch (keyroute/fleet's own .wasm in the browser) answers as the
// same module does in Node: owner, candidates and where 20,000 sample keys go.
test('engine switch: maglev, jedis and nginx answer as keyroute/fleet does in Node; a bad option shows its code', async () => {
  await page.waitForSelector('#fleet-section[data-ready="true"]', { timeout: 30000 });
  const sample = Array.from({ length: 20000 }, (_, i) => `key-${i}`);
  const nodes = [['cache-a', 1], ['cache-b', 1], ['cache-c', 2], ['cache-d', 1]];
  for (const [engine, opts, text] of [['maglev', {}, ''], ['jedis', { version: '2', naming: 'named' }, 'version=2, naming=named'], ['nginx', {}, ''], ['rendezvous', {}, '']]) {
    await page.fill('#engine-options', text);
    await page.selectOption('#engine', engine);
    await page.dispatchEvent('#engine-options', 'change');
    await page.waitForFunction((e) => document.getElementById('engine-balance').dataset.engine === e && document.getElementById('engine-status').dataset.state === 'ready', engine);
    await page.fill('#engine-key', 'user:7');
    await page.dispatchEvent('#engine-key', 'input');
    const r = new Router(engine, nodes, opts);
    try {
      const counts = new Array(4).fill(0);
      for (const o of r.getMany(sample)) counts[r.names.indexOf(o)]++;
      assert.deepEqual(JSON.parse(await page.getAttribute('#engine-balance', 'data-counts')), counts, engine);
      assert.equal(await page.getAttribute('#engine-result', 'data-owner'), r.get('user:7'), engine);
      assert.deepEqual(JSON.parse(await page.getAttribute('#engine-result', 'data-candidates')), r.getN('user:7', 3), engine);
    } finally {
      r.free();
    }
  }
  await page.fill('#engine-options', 'table_size=100');
  await page.selectOption('#engine', 'maglev');
  await page.dispatchEvent('#engine-options', 'change');
  await page.waitForFunction(() => document.getElementById('engine-status').textContent.startsWith('BAD_OPTION:'));
  assert.equal(await page.getAttribute('#engine-status', 'data-state'), 'error');
  await page.fill('#engine-options', '');
  await page.dispatchEvent('#engine-options', 'change');
  await page.waitForFunction(() => document.getElementById('engine-status').dataset.state === 'ready');
});

test('no console errors', () => {
  assert.deepEqual(consoleErrors, []);
});
