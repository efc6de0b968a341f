// The public JavaScript API of `keyroute`, written once for every entry point.
//
// `createApi(wasm, scripts, cluster)` wraps the raw wasm-bindgen exports (Rust:
// bindings-js/src) in the camelCase classes users see. `wasm` is the main module (rings,
// slots, least-used); `cluster(load)` returns the cluster module (slot maps and resharding
// plans, a .wasm of its own so that the main one stays small), loading it when `load` is
// true and it can be loaded synchronously (Node), or null when it is not loaded (browsers
// before initCluster()). `scripts` is core's SCRIPTS.
//
// The API is split by concept, as core is: rings (ring.mjs), slots (slot.mjs), slot maps
// and plans (cluster.mjs), least-used pools (pool.mjs), over the key buffer (keys.mjs)
// and the helpers every module shares (helpers.mjs). Each file is a factory function;
// scripts/build.mjs bundles them into dist/api.mjs (ESM) and dist/api.cjs (CommonJS),
// and exports from every entry point exactly what createApi returns.
//
// What these files do, and only this: check the types of what callers pass (strings,
// lists, integers, handles) before anything crosses into wasm, pack batches into one
// buffer, and turn answers into JavaScript values. Every range, grammar and rule is
// core's (Rust), and so is every error code: each error thrown here or there is an
// `Error` (`TypeError` for BAD_TYPE) whose `code` is a name of ERROR_CODES.

import { createHelpers } from './helpers.mjs';
import { createKeys } from './keys.mjs';
import { createRing } from './ring.mjs';
import { createSlot } from './slot.mjs';
import { createCluster } from './cluster.mjs';
import { createPool } from './pool.mjs';

export function createApi(wasm, scripts, cluster) {
  'use strict';

  const h = createHelpers(wasm);
  const keys = createKeys(wasm, h);

  // The cluster module's raw exports (RawSlotMap, the node-list grammar), for SlotMap,
  // ReshardPlan, parseNodes, parseWeights and Ring.fromSpec.
  function clusterWasm(what = 'SlotMap') {
    return h.guard(() => cluster(true)) || h.fail('BUSY', `${what} runs in the cluster module, which is not loaded yet: \`await initCluster()\` once first (browsers; Node loads it on first use)`);
  }

  /** Rings, slot maps, plans and pools alive in wasm memory (free() and GC lower it). */
  function liveHandles() {
    const c = cluster(false);
    return wasm.rawLiveHandles() + (c ? c.rawLiveHandles() : 0);
  }

  const slot = createSlot(wasm, h, keys);
  return {
    ...createRing(wasm, h, keys, clusterWasm),
    ...slot,
    ...createCluster(h, slot, clusterWasm),
    ...createPool(wasm, h, scripts),
    ERROR_CODES: h.ERROR_CODES,
    LIMITS: h.LIMITS,
    liveHandles,
  };
}
