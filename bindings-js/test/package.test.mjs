// The packed tarball, installed into a fresh project, used from require and import.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pkgDir } from './helpers.mjs';

test('npm pack → install in a temp project → require and import', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'keyroute-pack-'));
  try {
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: pkgDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const [info] = JSON.parse(out);
    const files = info.files.map((f) => f.path).sort();
    // The whitelist: dist + README + package.json, nothing from src/, test/, demo/.
    assert.ok(files.includes('dist/node/keyroute_js_bg.wasm'));
    assert.ok(files.includes('dist/web/keyroute_js_bg.wasm'));
    assert.ok(files.includes('dist/cluster-node/keyroute_cluster_bg.wasm'));
    assert.ok(files.includes('dist/cluster-web/keyroute_cluster_bg.wasm'));
    assert.ok(files.includes('dist/index.d.ts'));
    assert.ok(files.includes('dist/index.d.mts'));
    for (const entry of ['redis', 'serve']) {
      for (const f of ['cjs', 'mjs', 'd.ts', 'd.mts']) assert.ok(files.includes(`dist/${entry}.${f}`), `dist/${entry}.${f}`);
    }
    assert.ok(files.includes('package.json'));
    assert.ok(files.every((f) => f.startsWith('dist/') || f === 'package.json' || f === 'README.md'), files.join(', '));
    const tarball = join(tmp, info.filename);

    const proj = join(tmp, 'proj');
    execFileSync('mkdir', ['-p', proj]);
    writeFileSync(join(proj, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], { cwd: proj, stdio: 'pipe' });
    assert.ok(readdirSync(join(proj, 'node_modules', 'keyroute')).includes('dist'));

    writeFileSync(join(proj, 'cjs.cjs'), `
      const kr = require('keyroute');
      const ring = new kr.Ring({ '127.0.0.1:11211': 600, '127.0.0.1:11212': 400 }, { profile: 'libketama' });
      const out = { owner: ring.get('test'), slot: kr.keySlot('foo{}{bar}'), slots: Array.from(kr.keySlots(['foo', 'bar'])),
        pick: (() => { const p = new kr.Pool(); p.seed(['b', 'a']); return p.pick(); })(), script: kr.LEAST_USED_SCRIPT.length > 0,
        // The cluster module loads on first use in Node.
        cluster: (() => { const m = new kr.SlotMap(); m.addMaster('10.0.0.1:7000'); m.assign(0, 16383, 0); return m.nodeForKey('foo').address; })(),
        spec: kr.parseNodes('a=2,b').map((n) => n.name + ':' + n.weight).join(',') };
      ring.free();
      console.log(JSON.stringify(out));`);
    writeFileSync(join(proj, 'esm.mjs'), `
      import init, { Ring, keySlot, keySlots, Pool, LEAST_USED_SCRIPT, SlotMap, initCluster } from 'keyroute';
      import * as cjsView from 'keyroute';
      await init();
      await initCluster();
      const ring = new Ring({ '127.0.0.1:11211': 600, '127.0.0.1:11212': 400 }, { profile: 'libketama' });
      const p = new Pool(); p.seed(['b', 'a']);
      const m = new SlotMap(); m.addMaster('10.0.0.1:7000'); m.assign(0, 16383, 0);
      const spec = cjsView.parseNodes('a=2,b').map((n) => n.name + ':' + n.weight).join(',');
      console.log(JSON.stringify({ owner: ring.get('test'), slot: keySlot('foo{}{bar}'), slots: Array.from(keySlots(['foo', 'bar'])), pick: p.pick(), script: LEAST_USED_SCRIPT.length > 0, cluster: m.nodeForKey('foo').address, spec }));`);
    // The browser entry is a plain ES module loading the .wasm next to it: check it in Node by initSync.
    writeFileSync(join(proj, 'web.mjs'), `
      import { readFileSync } from 'node:fs';
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const dir = require.resolve('keyroute/package.json').replace(/package\\.json$/, '');
      const web = await import(dir + 'dist/web.mjs');
      web.initSync(readFileSync(dir + 'dist/web/keyroute_js_bg.wasm'));
      const ring = new web.Ring({ '127.0.0.1:11211': 600, '127.0.0.1:11212': 400 }, { profile: 'libketama' });
      const p = new web.Pool(); p.seed(['b', 'a']);
      // SlotMap runs in the cluster module, which a browser fetches only with initCluster.
      let before;
      try { new web.SlotMap(); before = 'made'; } catch (e) { before = e.code; }
      // So does the node-list grammar (parseNodes, parseWeights, Ring.fromSpec).
      let specBefore;
      try { web.parseNodes('a=2,b'); specBefore = 'parsed'; } catch (e) { specBefore = e.code; }
      const handles = web.liveHandles();
      web.initClusterSync(readFileSync(dir + 'dist/cluster-web/keyroute_cluster_bg.wasm'));
      const m = new web.SlotMap(); m.addMaster('10.0.0.1:7000'); m.assign(0, 16383, 0);
      if (web.liveHandles() !== handles + 1) throw new Error('liveHandles does not count the slot map');
      console.log(JSON.stringify({ owner: ring.get('test'), slot: web.keySlot('foo{}{bar}'), slots: Array.from(web.keySlots(['foo', 'bar'])), pick: p.pick(), script: web.LEAST_USED_SCRIPT.length > 0, cluster: before + ' ' + m.nodeForKey('foo').address, spec: specBefore + ' ' + web.parseNodes('a=2,b').map((n) => n.name + ':' + n.weight).join(',') }));`);
    const want = { owner: '127.0.0.1:11211', slot: 8363, slots: [12182, 5061], pick: 'a', script: true, cluster: '10.0.0.1:7000', spec: 'a:2,b:1' };
    for (const f of ['cjs.cjs', 'esm.mjs', 'web.mjs']) {
      const got = JSON.parse(execFileSync(process.execPath, [f], { cwd: proj, encoding: 'utf8' }));
      assert.deepEqual(got, f === 'web.mjs' ? { ...want, cluster: `BUSY ${want.cluster}`, spec: `BUSY ${want.spec}` } : want, f);
    }
    // keyroute/redis and keyroute/serve (Node) load without their peers; the zeromq package,
    // an optional peer dependency, was not installed: a socket asks for it with BAD_CONFIG.
    writeFileSync(join(proj, 'node-only.mjs'), `
      import { LeastUsed } from 'keyroute/redis';
      import { Client, TYPES, decodeHeader, encodeHeader } from 'keyroute/serve';
      let client;
      try { new Client('tcp://127.0.0.1:9'); client = 'made'; } catch (e) { client = e.code; }
      console.log(JSON.stringify({ pool: typeof LeastUsed, ping: TYPES.ping, back: decodeHeader(encodeHeader('ping', { priority: 3 })).priority, client }));`);
    assert.deepEqual(JSON.parse(execFileSync(process.execPath, ['node-only.mjs'], { cwd: proj, encoding: 'utf8' })), { pool: 'function', ping: 1, back: 3, client: 'BAD_CONFIG' });
    assert.equal(readdirSync(join(proj, 'node_modules')).includes('zeromq'), false);
    const pj = JSON.parse(readFileSync(join(proj, 'node_modules', 'keyroute', 'package.json'), 'utf8'));
    assert.equal(pj.exports['.'].node.require.types, './dist/index.d.ts');
    assert.equal(pj.exports['.'].default.types, './dist/index.d.mts');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
