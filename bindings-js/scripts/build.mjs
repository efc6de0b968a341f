#!/usr/bin/env node
// Builds the npm package layout under dist/ from the release .wasm of crate keyroute-js.
//
//   node scripts/build.mjs <keyroute_js.wasm> <scripts.json> <keyroute_cache.wasm> <keyroute_fleet.wasm> <keyroute_cluster.wasm>
//
// (`make build-js` runs cargo first: the .wasm, and `cargo run --example scripts`, which
// prints core's SCRIPTS as JSON; then this.) Output:
//   dist/node/   wasm-bindgen --target nodejs (CommonJS, loads the .wasm synchronously)
//   dist/web/    wasm-bindgen --target web    (ES module, `await init()` first)
//   dist/cluster-node/, dist/cluster-web/   wasm-bindgen (nodejs, web) of the cluster
//                module's own .wasm (crate feature `cluster`: slot maps and resharding
//                plans behind SlotMap and ReshardPlan; Node loads it on first use,
//                browsers with `await initCluster()`)
//   dist/api.mjs, dist/api.cjs   the public API (js/api.mjs), as ESM and as CommonJS
//   dist/node.cjs, dist/node.mjs, dist/web.mjs   the entry points of the exports map
//   dist/index.d.ts, index.d.mts the types (js/index.d.ts) for require and for import
//   dist/scripts.cjs, dist/scripts.mjs   core's Lua scripts (texts outside the .wasm)
//   dist/cache/  wasm-bindgen --target nodejs of the smart cache's own .wasm (crate feature
//                `cache`); dist/cache-api.cjs (js/cache.mjs), dist/cache.{cjs,mjs}
//                (the `keyroute/cache` entry, Node only), dist/cache.d.{ts,mts}
//   dist/redis-api.cjs (js/redis.mjs), dist/redis.{cjs,mjs}: keyroute/redis (Node only:
//                LeastUsed, Leases, Affinity over node-redis), dist/redis.d.{ts,mts}
//   dist/serve-api.cjs (js/serve.mjs), dist/serve.{cjs,mjs}: keyroute/serve (Node only:
//                Client, LoaderWorker over zeromq), dist/serve.d.{ts,mts}; both on the
//                cache module's .wasm (core's pool calls and frame codec)
//   dist/fleet-node/, dist/fleet-web/   wasm-bindgen (nodejs, web) of the fleet's own .wasm
//                (crate feature `fleet`: engines, fleet profiles, proxy configurations);
//                dist/fleet-api.{mjs,cjs} (js/fleet.mjs), dist/fleet.{cjs,mjs} (Node) and
//                dist/fleet-web.mjs (browsers: `await init()`), dist/fleet.d.{ts,mts}
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '..');
const dist = join(pkg, 'dist');
const [wasm, scriptsJson, cacheWasm, fleetWasm, clusterWasm] = process.argv.slice(2);
if (![wasm, scriptsJson, cacheWasm, fleetWasm, clusterWasm].every((f) => f && existsSync(f))) {
  console.error(`usage: node scripts/build.mjs <keyroute_js.wasm> <scripts.json> <keyroute_cache.wasm> <keyroute_fleet.wasm> <keyroute_cluster.wasm> (not found: ${wasm}, ${scriptsJson}, ${cacheWasm}, ${fleetWasm}, ${clusterWasm})`);
  process.exit(2);
}
const scripts = JSON.parse(readFileSync(scriptsJson, 'utf8'));
if (!Array.isArray(scripts) || !scripts.some((s) => s.name === 'least-used')) throw new Error(`${scriptsJson} does not hold core's SCRIPTS`);
const bindgen = process.env.WASM_BINDGEN || 'wasm-bindgen';

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
for (const target of ['nodejs', 'web']) {
  const out = join(dist, target === 'nodejs' ? 'node' : 'web');
  execFileSync(bindgen, ['--target', target, '--weak-refs', '--no-typescript', '--remove-name-section', '--remove-producers-section', '--out-dir', out, wasm], {
    stdio: 'inherit',
  });
}
// The smart cache's module, for Node only (keyroute/cache): a .wasm of its own, so that the
// main one (browsers download it) does not grow.
execFileSync(bindgen, ['--target', 'nodejs', '--weak-refs', '--no-typescript', '--remove-name-section', '--remove-producers-section', '--out-dir', join(dist, 'cache'), cacheWasm], {
  stdio: 'inherit',
});
// The fleet's module (keyroute/fleet), for Node and for browsers.
for (const target of ['nodejs', 'web']) {
  execFileSync(bindgen, ['--target', target, '--weak-refs', '--no-typescript', '--remove-name-section', '--remove-producers-section', '--out-dir', join(dist, target === 'nodejs' ? 'fleet-node' : 'fleet-web'), fleetWasm], {
    stdio: 'inherit',
  });
}
// The cluster module (SlotMap, ReshardPlan), for Node and for browsers.
for (const target of ['nodejs', 'web']) {
  execFileSync(bindgen, ['--target', target, '--weak-refs', '--no-typescript', '--remove-name-section', '--remove-producers-section', '--out-dir', join(dist, target === 'nodejs' ? 'cluster-node' : 'cluster-web'), clusterWasm], {
    stdio: 'inherit',
  });
}
// The `target_features` custom section (the wasm features rustc assumed, for tools) is not
// read by any engine: dropped from every module (about 120 bytes gzipped). wasm-bindgen
// already removed the name and producers sections.
for (const file of [join(dist, 'node', 'keyroute_js_bg.wasm'), join(dist, 'web', 'keyroute_js_bg.wasm'), join(dist, 'cache', 'keyroute_cache_bg.wasm'), join(dist, 'fleet-node', 'keyroute_fleet_bg.wasm'), join(dist, 'fleet-web', 'keyroute_fleet_bg.wasm'), join(dist, 'cluster-node', 'keyroute_cluster_bg.wasm'), join(dist, 'cluster-web', 'keyroute_cluster_bg.wasm')]) {
  writeFileSync(file, withoutCustomSection(readFileSync(file), 'target_features'));
}

/** `bytes` (a wasm module) without the custom sections called `name`. */
function withoutCustomSection(bytes, name) {
  const leb = (pos) => {
    let value = 0;
    let shift = 0;
    let byte;
    do {
      byte = bytes[pos.at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  const kept = [bytes.subarray(0, 8)];
  const pos = { at: 8 };
  while (pos.at < bytes.length) {
    const start = pos.at;
    const id = bytes[pos.at++];
    const size = leb(pos);
    const end = pos.at + size;
    let drop = false;
    if (id === 0) {
      const length = leb(pos);
      drop = Buffer.from(bytes.subarray(pos.at, pos.at + length)).toString('utf8') === name;
    }
    if (!drop) kept.push(bytes.subarray(start, end));
    pos.at = end;
  }
  return Buffer.concat(kept);
}

// The nodejs output is CommonJS inside a package that may be "type": "module" for users:
// pin its module type.
writeFileSync(join(dist, 'node', 'package.json'), '{ "type": "commonjs" }\n');
writeFileSync(join(dist, 'cache', 'package.json'), '{ "type": "commonjs" }\n');
writeFileSync(join(dist, 'web', 'package.json'), '{ "type": "module" }\n');
writeFileSync(join(dist, 'fleet-node', 'package.json'), '{ "type": "commonjs" }\n');
writeFileSync(join(dist, 'fleet-web', 'package.json'), '{ "type": "module" }\n');
writeFileSync(join(dist, 'cluster-node', 'package.json'), '{ "type": "commonjs" }\n');
writeFileSync(join(dist, 'cluster-web', 'package.json'), '{ "type": "module" }\n');

// The factories of the public API, each bundled with the modules it imports (the
// helpers every module shares, and for the main API its parts by concept): one file per
// output, ESM and CommonJS, that needs nothing else of js/.
const api = bundle('api.mjs');
const header = '// Generated by scripts/build.mjs from js/api.mjs and the modules it imports; do not edit.\n';
const scriptsText = JSON.stringify(scripts, null, 1);
writeFileSync(join(dist, 'scripts.mjs'), `// Generated by scripts/build.mjs: core's keyroute::script::SCRIPTS.\nexport default ${scriptsText};\n`);
writeFileSync(join(dist, 'scripts.cjs'), `// Generated by scripts/build.mjs: core's keyroute::script::SCRIPTS.\nmodule.exports = ${scriptsText};\n`);
writeFileSync(join(dist, 'api.mjs'), header + api.esm);
writeFileSync(join(dist, 'api.cjs'), header + api.cjs);

// Every entry point exports what the factory returns: its names are read from an instance
// made here (Node, with the module built above), not listed by hand.
const requireHere = createRequire(import.meta.url);
const names = exported(requireHere(join(dist, 'api.cjs')).createApi(requireHere(join(dist, 'node', 'keyroute_js.js')), scripts, () => null));
// Defined by each entry point below, beside the API's names.
const inits = ['init', 'initSync', 'initCluster', 'initClusterSync'];

writeFileSync(
  join(dist, 'node.cjs'),
  `${header}'use strict';
// Node, CommonJS: the wasm module is compiled synchronously on require, the cluster
// module (SlotMap, ReshardPlan) on first use.
const { createApi } = require('./api.cjs');
let clusterModule = null;
function cluster(load) {
  if (clusterModule === null && load) clusterModule = require('./cluster-node/keyroute_cluster.js');
  return clusterModule;
}
const api = createApi(require('./node/keyroute_js.js'), require('./scripts.cjs'), cluster);
/** Nothing to wait for in Node; kept so that code shared with browsers can \`await init()\`. */
api.init = async function init() { return api; };
api.initSync = function initSync() { return api; };
/** Loads the cluster module now rather than on first use (browsers must call it). */
api.initCluster = async function initCluster() { cluster(true); return api; };
api.initClusterSync = function initClusterSync() { cluster(true); return api; };
api.default = api.init;
module.exports = api;
`,
);

writeFileSync(
  join(dist, 'node.mjs'),
  `${header}// Node, ES module: the same instance as require('keyroute').
import api from './node.cjs';
export const { ${[...names, ...inits].join(', ')} } = api;
export default init;
`,
);

writeFileSync(
  join(dist, 'web.mjs'),
  `${header}// Browsers and bundlers, ES module: \`await init()\` once before anything else, and
// \`await initCluster()\` once before SlotMap (its own .wasm, fetched only then).
import initWasm, { initSync as initWasmSync } from './web/keyroute_js.js';
import * as wasm from './web/keyroute_js.js';
import initClusterWasm, { initSync as initClusterWasmSync } from './cluster-web/keyroute_cluster.js';
import * as clusterWasm from './cluster-web/keyroute_cluster.js';
import { createApi } from './api.mjs';
import scripts from './scripts.mjs';

export let ${names.join(', ')};
let api = null;
let clusterReady = false;

function bind() {
  api = createApi(wasm, scripts, () => (clusterReady ? clusterWasm : null));
  ({ ${names.join(', ')} } = api);
  return api;
}

/**
 * Loads the wasm module (by default from keyroute_js_bg.wasm next to this file; pass a
 * URL, Response or BufferSource to load it from elsewhere). Resolves to the API object;
 * the named exports are usable once it has resolved.
 */
export async function init(input) {
  if (api) return api;
  await initWasm(input === undefined ? undefined : { module_or_path: input });
  return api || bind();
}

/** Synchronous init from bytes or a WebAssembly.Module you already have. */
export function initSync(module) {
  if (api) return api;
  initWasmSync({ module });
  return bind();
}

/**
 * Loads the cluster module, which SlotMap and ReshardPlan run in (by default from
 * cluster-web/keyroute_cluster_bg.wasm next to this file; \`keyroute/cluster.wasm\` in the
 * exports map). Resolves to the API object once init() has resolved too (null before).
 */
export async function initCluster(input) {
  if (!clusterReady) {
    await initClusterWasm(input === undefined ? undefined : { module_or_path: input });
    clusterReady = true;
  }
  return api;
}

/** Synchronous initCluster from bytes or a WebAssembly.Module you already have. */
export function initClusterSync(module) {
  if (!clusterReady) {
    initClusterWasmSync({ module });
    clusterReady = true;
  }
  return api;
}

export default init;
`,
);

// The Node-only entries, each a factory over the cache module's .wasm (one instance for
// all of them: Node's require cache): `name` (keyroute/NAME, dist/NAME.{cjs,mjs}), its
// factory's file in js/, what the CommonJS entry says of itself, the lines it needs first,
// and its factory's arguments as source text (`wasm` is the module) and as values (to read
// the names to export from an instance made here).
function nodeEntry(name, file, about, preamble, argsText, argsHere) {
  const built = bundle(file);
  const head = header.replace('api.mjs', file);
  writeFileSync(join(dist, `${name}-api.cjs`), head + built.cjs);
  const wasmHere = requireHere(join(dist, 'cache', 'keyroute_cache.js'));
  const names = exported(requireHere(join(dist, `${name}-api.cjs`))[built.factory](wasmHere, ...argsHere));
  writeFileSync(
    join(dist, `${name}.cjs`),
    `${head}'use strict';
// keyroute/${name} (Node, CommonJS): ${about}
${preamble}const { ${built.factory} } = require('./${name}-api.cjs');
const wasm = require('./cache/keyroute_cache.js');
module.exports = ${built.factory}(wasm, ${argsText});
`,
  );
  writeFileSync(
    join(dist, `${name}.mjs`),
    `${head}// keyroute/${name} (Node, ES module): the same instance as require('keyroute/${name}').
import api from './${name}.cjs';
export const { ${names.join(', ')} } = api;
`,
  );
}

nodeEntry('cache', 'cache.mjs', 'the smart cache over a node-redis client; its .wasm is\n// compiled synchronously on require.',
  "const { randomBytes } = require('node:crypto');\n", "require('./scripts.cjs'), { randomBytes, pid: process.pid }", [scripts, { randomBytes, pid: process.pid }]);
nodeEntry('redis', 'redis.mjs', "least-used pools, leases and affinity over a node-redis\n// client; core's calls and decoders run in the cache module's .wasm.",
  '', "require('./scripts.cjs')", [scripts]);
// keyroute/serve: the zeromq package is an optional peer dependency, required on first use.
nodeEntry('serve', 'serve.mjs', "a client and a loader worker of keyroute serve; the header\n// is core's codec (the cache module's .wasm), the sockets are the zeromq package's.",
  "const { randomBytes } = require('node:crypto');\n", "() => require('zeromq'), { randomBytes }", [() => null, { randomBytes }]);

// keyroute/fleet (Node and browsers): the Router over the fleet's own module.
const fleetApi = bundle('fleet.mjs');
const fleetHeader = header.replace('api.mjs', 'fleet.mjs');
writeFileSync(join(dist, 'fleet-api.mjs'), fleetHeader + fleetApi.esm);
writeFileSync(join(dist, 'fleet-api.cjs'), fleetHeader + fleetApi.cjs);
const fleetNames = exported(requireHere(join(dist, 'fleet-api.cjs')).createFleetApi(requireHere(join(dist, 'fleet-node', 'keyroute_fleet.js'))));
writeFileSync(
  join(dist, 'fleet.cjs'),
  `${fleetHeader}'use strict';
// keyroute/fleet (Node, CommonJS): its .wasm is compiled synchronously on require.
const { createFleetApi } = require('./fleet-api.cjs');
const api = createFleetApi(require('./fleet-node/keyroute_fleet.js'));
api.init = async function init() { return api; };
api.initSync = function initSync() { return api; };
api.default = api.init;
module.exports = api;
`,
);
writeFileSync(
  join(dist, 'fleet.mjs'),
  `${fleetHeader}// keyroute/fleet (Node, ES module): the same instance as require('keyroute/fleet').
import api from './fleet.cjs';
export const { ${fleetNames.join(', ')}, init, initSync } = api;
export default init;
`,
);
writeFileSync(
  join(dist, 'fleet-web.mjs'),
  `${fleetHeader}// keyroute/fleet for browsers and bundlers, ES module: \`await init()\` once first.
import initWasm, { initSync as initWasmSync } from './fleet-web/keyroute_fleet.js';
import * as wasm from './fleet-web/keyroute_fleet.js';
import { createFleetApi } from './fleet-api.mjs';

export let ${fleetNames.join(', ')};
let api = null;

function bind() {
  api = createFleetApi(wasm);
  ({ ${fleetNames.join(', ')} } = api);
  return api;
}

/** Loads the fleet .wasm (by default keyroute_fleet_bg.wasm next to this file). */
export async function init(input) {
  if (api) return api;
  await initWasm(input === undefined ? undefined : { module_or_path: input });
  return api || bind();
}

/** Synchronous init from bytes or a WebAssembly.Module you already have. */
export function initSync(module) {
  if (api) return api;
  initWasmSync({ module });
  return bind();
}

export default init;
`,
);

/**
 * js/`entry` with every module of js/ it imports, as one file without imports: {esm, cjs}.
 * Each module is one factory, `export function createX(...)`, taking what it needs as
 * arguments (the wasm module, the helpers, ...); its imports name only other modules of
 * js/. The modules it imports go first, once each, as plain functions; the entry's factory
 * is the one export (`module.exports` in CommonJS). Fails on anything else (another
 * import or export, two modules declaring one name at the top level), so that every
 * output stays self-contained in Node (CommonJS and ESM) and in browsers.
 */
function bundle(entry) {
  const order = [];
  const seen = new Set();
  const visit = (file, chain) => {
    if (chain.includes(file)) throw new Error(`js/ modules import each other: ${[...chain, file].join(' -> ')}`);
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(join(pkg, 'js', file), 'utf8');
    const imports = [...source.matchAll(/^import \{ (\w+) \} from '\.\/([\w-]+\.mjs)';\n/gm)];
    for (const m of imports) visit(m[2], [...chain, file]);
    let body = source;
    for (const m of imports) body = body.replace(m[0], '');
    const exports = [...body.matchAll(/^export function (\w+)\(/gm)].map((m) => m[1]);
    if (exports.length !== 1 || /^(import|export) /m.test(body.replace(/^export function /m, ''))) {
      throw new Error(`js/${file} must export exactly one factory function and import only modules of js/ ({ name } from './x.mjs')`);
    }
    order.push({ file, body, factory: exports[0] });
  };
  visit(entry, []);
  const declared = new Map();
  for (const { file, body } of order) {
    for (const m of body.matchAll(/^(?:export )?(?:async )?(?:function\*?|class|const|let|var) (\w+)/gm)) {
      if (declared.has(m[1])) throw new Error(`js/${file} and js/${declared.get(m[1])} both declare ${m[1]} at the top level`);
      declared.set(m[1], file);
    }
  }
  const main = order[order.length - 1];
  // Whole-line // comments are left out (js/ is where they are read): what the helpers
  // add to each output is then less than the comments it drops (api.mjs 16.9 -> 13.8 KB
  // gzipped; no js/ file has a template literal across lines, whose lines this could cut).
  const parts = order.map((m) => (m === main ? m.body : m.body.replace(/^export function /m, 'function ')).replace(/^[ \t]*\/\/.*\n/gm, ''));
  const esm = parts.join('\n');
  const cjs = `'use strict';\n${esm.replace(/^export function /m, 'function ')}\nmodule.exports = { ${main.factory} };\n`;
  return { esm, cjs, factory: main.factory };
}

/** The names an API object exports (its own enumerable keys), checked to be identifiers. */
function exported(instance) {
  const keys = Object.keys(instance);
  const bad = keys.filter((k) => !/^[A-Za-z_$][\w$]*$/.test(k));
  if (bad.length || keys.length === 0) throw new Error(`cannot export ${bad.join(', ') || 'nothing'}`);
  return keys;
}

// One declaration file, as CommonJS types (require) and as ES module types (import).
copyFileSync(join(pkg, 'js', 'index.d.ts'), join(dist, 'index.d.ts'));
copyFileSync(join(pkg, 'js', 'index.d.ts'), join(dist, 'index.d.mts'));
copyFileSync(join(pkg, 'js', 'cache.d.ts'), join(dist, 'cache.d.ts'));
copyFileSync(join(pkg, 'js', 'cache.d.ts'), join(dist, 'cache.d.mts'));
copyFileSync(join(pkg, 'js', 'fleet.d.ts'), join(dist, 'fleet.d.ts'));
copyFileSync(join(pkg, 'js', 'fleet.d.ts'), join(dist, 'fleet.d.mts'));
for (const entry of ['redis', 'serve']) {
  copyFileSync(join(pkg, 'js', `${entry}.d.ts`), join(dist, `${entry}.d.ts`));
  copyFileSync(join(pkg, 'js', `${entry}.d.ts`), join(dist, `${entry}.d.mts`));
}
console.log(`built ${dist}`);
