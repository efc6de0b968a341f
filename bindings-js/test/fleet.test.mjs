// keyroute/fleet: every case of tests/vectors/fleet/*.json (answers recorded from the real
// nginx, HAProxy, nutcracker, spymemcached, Guava, redis-rb, Predis, pymemcache,
// groupcache, ...), built as tests/vectors/fleet_routes.json says; the entrance checks
// with their codes; the fleet .wasm is separate from the main one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { Router, Bounded, ENGINES, ERROR_CODES } from 'keyroute/fleet';
import { vectorsDir } from './helpers.mjs';

const { routes } = JSON.parse(readFileSync(join(vectorsDir, 'fleet_routes.json'), 'utf8'));
const files = new Map();
const fleet = (f) => {
  if (!files.has(f)) files.set(f, JSON.parse(readFileSync(join(vectorsDir, 'fleet', f), 'utf8')));
  return files.get(f);
};

test('every fleet vector file is routed', () => {
  const names = new Set(routes.map((r) => r.file));
  assert.deepEqual([...names].sort(), readdirSync(join(vectorsDir, 'fleet')).filter((f) => f.endsWith('.json')).sort());
});

function build(route) {
  const v = fleet(route.file);
  if (route.config) {
    const c = route.config;
    return Router.fromConfig(v.config_file, c.pool, { file: route.file, allowDown: c.allow_down, resolved: Object.fromEntries(c.resolved) });
  }
  const r = new Router(route.engine, route.nodes, Object.fromEntries(route.options));
  for (const [op, name, weight] of route.ops ?? []) {
    if (op === 'add') r.add(name, weight);
    else r.remove(name);
  }
  return r;
}

for (const route of routes) {
  test(`fleet vector ${route.file}#${route.case} ${route.engine ?? 'config'}`, () => {
    const r = build(route);
    try {
      const c = fleet(route.file).cases[route.case];
      const mode = route.expect;
      const want = c.expect.map((e) => (mode === 'name' ? e : mode === 'index' ? r.names[e] : r.names[e[mode.index_column]]));
      const got = r.getMany(c.keys);
      for (let i = 0; i < c.keys.length; i++) {
        if (got[i] !== want[i]) assert.fail(`key ${JSON.stringify(c.keys[i])}: got ${got[i]}, want ${want[i]}`);
      }
      for (let i = 0; i < Math.min(c.keys.length, 50); i++) assert.equal(r.get(c.keys[i]), want[i]);
    } finally {
      r.free();
    }
  });
}

const codeOf = (f) => {
  try {
    f();
  } catch (e) {
    assert.ok(e.code in ERROR_CODES, `${e.code}: ${e.message}`);
    return e.code;
  }
  return assert.fail('no error');
};

test('engines by name, candidates, weights', () => {
  assert.ok(ENGINES.includes('maglev') && ENGINES.includes('jedis'));
  // One name, one meaning: the alias builds the same engine, named twemproxy.
  const alias = new Router('nutcracker', ['10.0.0.1:11211', '10.0.0.2:11211']);
  assert.equal(alias.engine, 'twemproxy');
  assert.ok(!ENGINES.includes('nutcracker'));
  alias.free();
  const nodes = ['a', 'b', 'c', 'd'];
  for (const name of ['jump', 'guava-jump', 'rendezvous', 'maglev', 'nginx', 'go-redis', 'native']) {
    const r = new Router(name, nodes);
    assert.equal(r.engine, name);
    assert.deepEqual(r.names, nodes);
    assert.equal(r.format, null);
    const owner = r.get('user:1');
    const c = r.getN('user:1', 10);
    assert.equal(c[0], owner);
    assert.deepEqual([...c].sort(), nodes);
    assert.equal(r.getIndex(new TextEncoder().encode('user:1')), nodes.indexOf(owner));
    r.free();
    assert.equal(codeOf(() => r.get('x')), 'INVALID_HANDLE');
  }
  const m = new Router('maglev', { a: 1, b: 3 }, { table_size: 1009 });
  const counts = { a: 0, b: 0 };
  for (const o of m.getMany(Array.from({ length: 4000 }, (_, i) => `k${i}`))) counts[o]++;
  assert.ok(counts.b > 2 * counts.a, JSON.stringify(counts));
});

test('add and remove: as each peer changes at run time', async () => {
  // Keys spread over the circle (String.hashCode of 'k0', 'k1', ... are neighbours).
  const { createHash } = await import('node:crypto');
  const keys = Array.from({ length: 300 }, (_, i) => createHash('sha1').update(String(i)).digest('hex'));
  // The reference Java ring: BB's removal takes Aa's points (same hashCode) with it.
  const r = new Router('java-hashcode', []);
  assert.equal(r.add('Aa').add('BB').add('cache3').remove('BB'), r);
  assert.deepEqual(r.names, ['Aa', 'cache3']);
  assert.equal(r.size, 2);
  assert.deepEqual([...new Set(r.getMany(keys))], ['cache3']);
  const built = new Router('java-hashcode', ['Aa', 'cache3']);
  assert.ok(built.getMany(keys).includes('Aa'));
  // Elsewhere: what a build over the new list gives, options kept.
  const m = new Router('maglev', { a: 1, b: 2 }, { table_size: 1009 });
  m.add('c', 3).remove('a');
  const want = new Router('maglev', { b: 2, c: 3 }, { table_size: 1009 });
  assert.deepEqual(m.names, ['b', 'c']);
  assert.deepEqual(m.weights, [2, 3]);
  assert.deepEqual(m.getMany(keys), want.getMany(keys));
  for (const engine of ['libketama', 'native', 'jump', 'redis-rb', 'nginx']) {
    const x = new Router(engine, ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80']);
    x.add('10.0.0.4:80').remove('10.0.0.2:80');
    const y = new Router(engine, ['10.0.0.1:80', '10.0.0.3:80', '10.0.0.4:80']);
    assert.deepEqual(x.getMany(keys), y.getMany(keys), engine);
    x.free();
    y.free();
  }
  // node=prefix: names shown before the first '-', changed by their own names.
  const p = new Router('java-hashcode', ['redis-1', 'redis-2'], { node: 'prefix' });
  assert.deepEqual(p.names, ['redis', 'redis']);
  assert.deepEqual([...new Set(p.getMany(keys))], ['redis']);
  p.remove('redis-2');
  assert.deepEqual(p.names, ['redis']);
  assert.equal(codeOf(() => p.remove('redis')), 'UNKNOWN_NODE');
  assert.equal(codeOf(() => m.add('b')), 'DUPLICATE_NODE');
  assert.equal(codeOf(() => r.add('x', 2)), 'BAD_OPTION');
  assert.equal(codeOf(() => m.add('x', 0)), 'ZERO_WEIGHT');
  assert.equal(codeOf(() => m.add('x', 1.5)), 'BAD_WEIGHT');
  assert.equal(codeOf(() => m.add('x', '2')), 'BAD_TYPE');
  assert.equal(codeOf(() => m.add(7)), 'BAD_TYPE');
  assert.equal(codeOf(() => m.remove('\udc80')), 'BAD_UTF8');
  assert.deepEqual(m.names, ['b', 'c']);
  const cfg = Router.fromConfig('backend app\n    balance uri\n    hash-type consistent\n    server w1 10.0.0.1:80\n');
  assert.equal(codeOf(() => cfg.add('w2')), 'UNSUPPORTED_CONFIG');
  assert.deepEqual(cfg.names, ['w1']);
  for (const x of [r, built, m, want, p, cfg]) x.free();
  assert.equal(codeOf(() => m.add('d')), 'INVALID_HANDLE');
});

test('fromConfig: servers, key, addresses, includes', () => {
  const cfg = 'backend app\n    balance uri\n    hash-type consistent\n    server web1 10.0.0.1:80\n    server web2 10.0.0.2:80 weight 2\n';
  const r = Router.fromConfig(cfg, null, { file: 'haproxy.cfg' });
  assert.deepEqual([r.format, r.key, r.engine], ['haproxy', 'uri', 'haproxy']);
  assert.deepEqual(r.names, ['web1', 'web2']);
  assert.deepEqual(r.weights, [1, 2]);
  assert.deepEqual(r.addresses, ['10.0.0.1:80', '10.0.0.2:80']);
  const nginx = 'http {\n upstream u {\n  hash $uri consistent;\n  include more.conf;\n }\n}\n';
  assert.deepEqual(Router.fromConfig(nginx, 'u', { includes: { 'more.conf': 'server 10.0.0.9:80;\n' } }).names, ['10.0.0.9:80']);
});

test('refusals carry their codes', () => {
  const backup = 'backend app\n    balance uri\n    hash-type consistent\n    server s1 10.0.0.1:80 backup\n';
  try {
    Router.fromConfig(backup, 'app', { file: 'h.cfg' });
    assert.fail('accepted');
  } catch (e) {
    assert.equal(e.code, 'UNSUPPORTED_CONFIG');
    assert.match(e.message, /h\.cfg:4:/);
  }
  assert.equal(codeOf(() => Router.fromConfig('http {\n upstream u {\n  hash $uri consistent;\n  include x.conf;\n }\n}\n', 'u')), 'UNSUPPORTED_CONFIG');
  assert.equal(codeOf(() => Router.fromConfig('http { }\n')), 'BAD_CONFIG');
  assert.equal(codeOf(() => new Router('nope', ['a'])), 'UNKNOWN_PROFILE');
  assert.equal(codeOf(() => new Router('maglev', ['a'], { table_size: 100 })), 'BAD_OPTION');
  assert.equal(codeOf(() => new Router('jump', ['a'], { colour: 'red' })), 'BAD_OPTION');
  assert.equal(codeOf(() => new Router('jump', ['a', 'a'])), 'DUPLICATE_NODE');
  assert.equal(codeOf(() => new Router('rendezvous', [['a', 0]])), 'ZERO_WEIGHT');
  assert.equal(codeOf(() => new Router('rendezvous', [['a', 1.5]])), 'BAD_WEIGHT');
  assert.equal(codeOf(() => new Router('rendezvous', [['a', -1]])), 'NEGATIVE_WEIGHT');
  assert.equal(codeOf(() => new Router('jump', 'a,b')), 'BAD_TYPE');
  assert.equal(codeOf(() => new Router('jump', ['a'], { hash: 1.5 })), 'BAD_TYPE');
  assert.equal(codeOf(() => new Router('jump', ['a'], { hash: {} })), 'BAD_TYPE');
  assert.equal(codeOf(() => new Router('jump', ['a\udc80'])), 'BAD_UTF8');
  assert.equal(codeOf(() => new Router('maglev', ['a'], { table_size: 1e300 })), 'OUT_OF_RANGE');
  assert.equal(codeOf(() => new Router('jump', ['a'], Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`o${i}`, 1])))), 'TOO_LARGE');
  assert.equal(codeOf(() => Router.fromConfig(42)), 'BAD_TYPE');
  assert.equal(codeOf(() => Router.fromConfig('x', null, { colour: 1 })), 'BAD_OPTION');
  assert.equal(codeOf(() => Router.fromConfig('x', null, { resolved: { h: -1 } })), 'OUT_OF_RANGE');
  const r = new Router('jump', ['a']);
  assert.equal(codeOf(() => r.get(1)), 'BAD_TYPE');
  assert.equal(codeOf(() => r.get('\udc80')), 'BAD_UTF8');
  assert.equal(codeOf(() => r.getN('k', -1)), 'OUT_OF_RANGE');
  assert.equal(codeOf(() => r.getMany('k')), 'BAD_TYPE');
});

test('require("keyroute/fleet") is the same module as import', () => {
  const req = createRequire(import.meta.url)('keyroute/fleet');
  assert.equal(req.Router, Router);
});

test('Bounded: no node above the cap, releases move keys on, codes', () => {
  const r = new Router('native', ['a', 'b', 'c', 'd']);
  const b = new Bounded(r, 1.25);
  const owners = {};
  for (let i = 0; i < 400; i++) {
    owners[`job-${i}`] = b.assign(`job-${i}`);
    assert.ok(Object.values(b.loads).every((l) => l <= b.cap));
  }
  assert.equal(b.assigned, 400);
  assert.equal(b.cap, 125);
  assert.equal(b.assign('job-7'), owners['job-7']);
  assert.equal(b.ownerOf('job-7'), owners['job-7']);
  for (let i = 0; i < 400; i += 3) {
    const moved = b.release(`job-${i}`);
    assert.ok(Array.isArray(moved));
    for (const m of moved) {
      assert.ok(m.key instanceof Uint8Array && m.from !== m.to);
      assert.equal(b.ownerOf(m.key), m.to);
    }
    assert.ok(Object.values(b.loads).every((l) => l <= b.cap));
  }
  assert.equal(b.release('job-0'), null);
  assert.equal(Object.values(b.loads).reduce((x, y) => x + y, 0), b.assigned);
  assert.equal(codeOf(() => new Bounded(r, 0.5)), 'BAD_OPTION');
  assert.equal(codeOf(() => new Bounded(r, '1.5')), 'BAD_TYPE');
  assert.equal(codeOf(() => new Bounded(['a'], 1.5)), 'BAD_TYPE');
  assert.equal(codeOf(() => b.assign(3)), 'BAD_TYPE');
  b.free();
  assert.equal(codeOf(() => b.assign('x')), 'INVALID_HANDLE');
  r.free();
});
