// Slot maps and resharding plans (core's keyroute::slot::{SlotMap, Plan}): SlotMap and
// ReshardPlan, which run in the cluster module (a .wasm of its own).
//
// `createCluster(h, slot, clusterWasm)` is bundled by scripts/build.mjs into dist/api.*
// (see helpers.mjs): `slot` the slot functions (slot.mjs), `clusterWasm(what)` the
// cluster module's raw exports.

export function createCluster(h, slot, clusterWasm) {
  'use strict';

  const { fail, guard, describe, text, utf8, int, num, list, pack, bytes, weightOf, NONE, INTERNAL, dispose, freed } = h;
  const { keySlot, keySlots, hashTag } = slot;

  function index(n, what = 'a node index') {
    return int(n, what);
  }

  function slotNumber(s, what = 'a slot') {
    return int(s, what);
  }

  // host:port (string) or {host, port}: [host, port (NONE: parse host as host:port)].
  function address(a) {
    if (typeof a === 'string') return [text(a, 'an address'), NONE];
    if (a && typeof a === 'object' && !Array.isArray(a)) return [text(a.host, 'the host of an address'), int(a.port, 'the port of an address')];
    return fail('BAD_TYPE', `an address is "host:port" or {host, port}, not ${describe(a)}`);
  }

  function idOption(o) {
    if (o == null) return '';
    if (typeof o !== 'object') fail('BAD_TYPE', `options must be an object such as {id: "…"}, not ${describe(o)}`);
    return o.id === undefined ? '' : text(o.id, 'the node id');
  }

  // A field of a cluster reply: a RESP2 flat [key, value, …] array, a RESP3 Map, or an
  // object (any of `names`).
  // A key of a RESP2 [key, value, …] array as text; a key String() cannot convert (an
  // object without a prototype, one whose toString throws) matches no field name.
  function keyText(k) {
    try {
      return String(k);
    } catch {
      return undefined;
    }
  }
  function field(x, ...names) {
    if (x instanceof Map) {
      for (const n of names) if (x.has(n)) return x.get(n);
      return undefined;
    }
    if (Array.isArray(x)) {
      for (let i = 0; i + 1 < x.length; i += 2) if (names.includes(keyText(x[i]))) return x[i + 1];
      return undefined;
    }
    if (x && typeof x === 'object') {
      for (const n of names) if (x[n] !== undefined) return x[n];
      return undefined;
    }
    return fail('BAD_TYPE', `a reply entry must be an object, a Map or a [key, value, …] array, not ${describe(x)}`);
  }
  function replyText(v, what) {
    if (v == null) return '';
    if (v instanceof Uint8Array) v = utf8(v, what);
    if (typeof v === 'number') v = String(v);
    return text(v, what);
  }
  function replyNumber(v, what) {
    if (v == null) return NaN;
    if (typeof v === 'string' && /^\d+$/.test(v)) v = Number(v);
    return num(v, what);
  }

  class ReshardPlan {
    #raw;
    constructor(token, raw) {
      if (token !== INTERNAL) fail('BAD_TYPE', 'plans come from SlotMap.plan()');
      this.#raw = raw;
      const m = raw.moves();
      const moves = [];
      for (let i = 0; i < m.length; i += 4) {
        moves.push({ start: m[i], end: m[i + 1], from: m[i + 2] === 0xffffffff ? null : m[i + 2], to: m[i + 3], count: m[i + 1] - m[i] + 1 });
      }
      const t = raw.targets();
      const targets = [];
      for (let i = 1; i < t.length; i += 5) {
        targets.push({ node: t[i], weight: t[i + 1], ideal: t[i + 2], before: t[i + 3], after: t[i + 4] });
      }
      /** The moves, in slot order: {start, end, from (null: unassigned), to, count}. */
      this.moves = moves;
      /** Per weighted master: {node, weight, ideal, before, after}. */
      this.targets = targets;
      /** Total slots that change owner. */
      this.slotsMoved = t[0];
    }
    free() {
      if (this.#raw) this.#raw.free();
      this.#raw = null;
    }
    static [INTERNAL](plan) {
      if (!(plan instanceof ReshardPlan)) fail('BAD_TYPE', `applyPlan takes a ReshardPlan, not ${describe(plan)}`);
      return plan.#raw || freed('ReshardPlan');
    }
  }
  if (dispose) ReshardPlan.prototype[dispose] = ReshardPlan.prototype.free;

  class SlotMap {
    #raw;
    constructor(token, raw) {
      this.#raw = token === INTERNAL ? raw : new (clusterWasm().RawSlotMap)();
    }

    /**
     * A map from a `CLUSTER SHARDS` reply: as `sendCommand(['CLUSTER', 'SHARDS'])`
     * returns it (RESP2 [key, value, …] arrays or RESP3 Maps), or objects {slots, nodes:
     * [{id, port, tlsPort, ip, endpoint, hostname, role, replicationOffset, health}]}.
     * `slots` is flat [start, end, start, end, …] or [[start, end], …].
     */
    static fromShards(reply) {
      const shape = [];
      const slots = [];
      const strings = [];
      const nums = [];
      list(reply, 'the CLUSTER SHARDS reply').forEach((shard, i) => {
        const ranges = list(field(shard, 'slots') ?? [], `shard ${i} slots`).flat();
        const nodes = list(field(shard, 'nodes') ?? [], `shard ${i} nodes`);
        if (ranges.length % 2) fail('BAD_RANGE', `shard ${i} lists ${ranges.length} slot bounds; slots come in start, end pairs`);
        shape.push(ranges.length / 2, nodes.length);
        for (const s of ranges) slots.push(replyNumber(s, `a slot of shard ${i}`));
        nodes.forEach((n, j) => {
          const at = `node ${j} of shard ${i}`;
          for (const k of [['id'], ['ip'], ['endpoint'], ['hostname'], ['role'], ['health']]) strings.push(replyText(field(n, ...k), `the ${k[0]} of ${at}`));
          nums.push(replyNumber(field(n, 'port'), `the port of ${at}`), replyNumber(field(n, 'tls-port', 'tlsPort'), `the tls-port of ${at}`), replyNumber(field(n, 'replication-offset', 'replicationOffset'), `the replication-offset of ${at}`));
        });
      });
      const [data, ends] = pack(strings, 'the reply text');
      return new SlotMap(INTERNAL, guard(() => clusterWasm().RawSlotMap.fromShards(Uint32Array.from(shape), Float64Array.from(slots), data, ends, Float64Array.from(nums))));
    }

    /**
     * A map from a `CLUSTER SLOTS` reply: node-redis's `client.clusterSlots()` ([{from,
     * to, master: {host, port, id}, replicas}]) or the raw reply ([start, end, [host,
     * port, id, {metadata}], …]).
     */
    static fromSlots(reply) {
      const shape = [];
      const slots = [];
      const strings = [];
      const ports = [];
      const node = (n, at) => {
        let endpoint;
        let port;
        let id;
        let meta;
        let ip;
        let hostname;
        if (Array.isArray(n)) {
          [endpoint, port, id, meta] = n;
          if (meta && typeof meta === 'object') {
            ip = field(meta, 'ip');
            hostname = field(meta, 'hostname');
          }
        } else if (n && typeof n === 'object') {
          // node-redis 4+: {host, port, id}; @redis/client 1.x: {ip, port, id}.
          ({ port, id, ip, hostname } = n);
          endpoint = n.host ?? n.endpoint ?? n.ip;
        } else fail('BAD_TYPE', `${at} must be [host, port, id] or {host, port, id}, not ${describe(n)}`);
        strings.push(replyText(endpoint, `the host of ${at}`), replyText(id, `the id of ${at}`), replyText(ip, `the ip of ${at}`), replyText(hostname, `the hostname of ${at}`));
        ports.push(replyNumber(port, `the port of ${at}`));
      };
      list(reply, 'the CLUSTER SLOTS reply').forEach((e, i) => {
        let from;
        let to;
        let master;
        let replicas;
        if (Array.isArray(e)) [from, to, master, ...replicas] = e;
        else if (e && typeof e === 'object') ({ from = e.start, to = e.end, master, replicas = [] } = e);
        else fail('BAD_TYPE', `entry ${i} of CLUSTER SLOTS must be an array or {from, to, master, replicas}, not ${describe(e)}`);
        replicas = list(replicas, `the replicas of entry ${i}`);
        shape.push(replicas.length);
        slots.push(replyNumber(from, `the first slot of entry ${i}`), replyNumber(to, `the last slot of entry ${i}`));
        node(master, `the master of entry ${i}`);
        replicas.forEach((r, j) => node(r, `replica ${j} of entry ${i}`));
      });
      const [data, ends] = pack(strings, 'the reply text');
      return new SlotMap(INTERNAL, guard(() => clusterWasm().RawSlotMap.fromSlots(Uint32Array.from(shape), Float64Array.from(slots), data, ends, Float64Array.from(ports))));
    }

    get #h() {
      return this.#raw || freed('SlotMap');
    }

    /** Adds a master (no slots yet) at "host:port" or {host, port}; returns its index. */
    addMaster(addr, options) {
      const h = this.#h;
      const [host, port] = address(addr);
      return h.addNode(NONE, idOption(options), host, port);
    }

    /** Adds a replica of master index `master`; returns its index. */
    addReplica(master, addr, options) {
      const h = this.#h;
      const [host, port] = address(addr);
      return h.addNode(index(master, 'the master index'), idOption(options), host, port);
    }

    /** Sets a node's health: 'online', 'loading', 'failed' (anything else: 'unknown'). */
    setHealth(node, health) {
      this.#h.setHealth(index(node), text(health, 'the health'));
      return this;
    }

    /** Gives slots start..=end to master `node`. */
    assign(start, end, node) {
      this.#h.assign(slotNumber(start, 'the first slot'), slotNumber(end, 'the last slot'), index(node));
      return this;
    }

    /** Makes slots start..=end unowned. */
    unassign(start, end) {
      this.#h.assign(slotNumber(start, 'the first slot'), slotNumber(end, 'the last slot'), NONE);
      return this;
    }

    /** The index of the master owning `slot`, or null. */
    slotOwner(slot) {
      const i = this.#h.owner(slotNumber(slot));
      return i < 0 ? null : i;
    }

    /** The node serving `slot`, or null. */
    nodeForSlot(slot) {
      const i = this.slotOwner(slot);
      return i === null ? null : this.node(i);
    }

    /** The node serving `key`'s slot, or null. */
    nodeForKey(key) {
      const i = this.#h.ownerOfKey(bytes(key));
      return i < 0 ? null : this.node(i);
    }

    /** key → {key, tag, slot, node}: the whole route of one key. */
    lookup(key) {
      const slot = keySlot(key);
      return { key, tag: hashTag(key), slot, node: this.nodeForSlot(slot) };
    }

    /** The owner index of each key's slot (0xFFFFFFFF: unassigned), in one call. */
    ownersOfKeys(keys) {
      const h = this.#h;
      const slots = keySlots(keys);
      // The owner of each key's slot, from the owners of all slots (0xFFFF: none).
      return guard(() => {
        // owners() holds indexes as 16 bits: a map of 65535 nodes or more asks per slot.
        const table = h.summary()[2] < 0xffff ? h.owners() : null;
        const out = new Uint32Array(slots.length);
        for (let i = 0; i < slots.length; i++) {
          const o = table ? table[slots[i]] : h.owner(BigInt(slots[i]));
          out[i] = o === 0xffff || o < 0 ? 0xffffffff : o;
        }
        return out;
      });
    }

    /** The owner index of all 16384 slots as a Uint16Array (0xFFFF: unassigned). */
    owners() {
      return this.#h.owners();
    }

    /** Slots owned per node, in index order (Uint32Array). */
    slotCounts() {
      return this.#h.slotCounts();
    }

    /** Runs of slots with one owner: [{start, end, owner}] (owner null: unassigned). */
    ranges() {
      const r = this.#h.ranges();
      const out = [];
      for (let i = 0; i < r.length; i += 3) out.push({ start: r[i], end: r[i + 1], owner: r[i + 2] === 0xffffffff ? null : r[i + 2] });
      return out;
    }

    get unassignedCount() {
      return this.#h.summary()[0];
    }
    get isComplete() {
      return this.#h.summary()[1] === 1;
    }
    get size() {
      return this.#h.summary()[2];
    }

    /** One node: {index, id, host, port, address, role, health, name, master, replicas}. */
    node(i) {
      const [id, host, port, role, health, name, addr, master, ...replicas] = this.#h.nodeInfo(index(i));
      return { index: Number(i), id, host, port: Number(port), address: addr, role, health, name, master: master === '' ? null : Number(master), replicas: replicas.map(Number) };
    }

    nodes() {
      const out = [];
      for (let i = 0, n = this.size; i < n; i++) out.push(this.node(i));
      return out;
    }

    /** Index of the node with cluster id `id`, or null. */
    findId(id) {
      const i = this.#h.findId(text(id, 'the node id'));
      return i < 0 ? null : i;
    }

    /**
     * Follows a `MOVED`/`ASK` error message. MOVED updates that one slot (adding a master
     * for an unknown address) and asks for a refresh; ASK never changes the map.
     * Returns {kind, slot, node, added, host, port, refresh}.
     */
    applyRedirect(message, currentHost = '') {
      const [kind, slot, node, added, host, port] = this.#h.applyRedirect(text(message, 'the error message'), text(currentHost, 'the current host'));
      const n = Number(node);
      return { kind, slot: Number(slot), node: n < 0 ? null : n, added: added === '1', host, port: Number(port), refresh: kind === 'moved' };
    }

    /**
     * The fewest slot moves bringing every weighted master within one slot of its share.
     * `weights`: [[nodeIndex or id/name/address, weight], ...], a Map, or {nodeIdOrName:
     * weight} (parseWeights(text) gives the pairs); weight 0 drains a master.
     */
    plan(weights) {
      const h = this.#h;
      let entries;
      if (weights instanceof Map) entries = list(weights.entries(), 'weights');
      else if (Array.isArray(weights)) entries = list(weights, 'weights');
      else if (weights && typeof weights === 'object' && typeof weights[Symbol.iterator] !== 'function') entries = Object.entries(weights);
      else fail('BAD_TYPE', `weights must be [[node, weight], ...], a Map or {node: weight}, not ${describe(weights)}`);
      const all = entries.some((e) => Array.isArray(e) && typeof e[0] === 'string') ? this.nodes() : null;
      const nodes = [];
      const ws = [];
      for (const e of entries) {
        if (!Array.isArray(e)) fail('BAD_TYPE', `a weight entry is [node, weight], not ${describe(e)}`);
        const [k, w] = e;
        let idx = k;
        if (typeof k === 'string') {
          const found = all.find((n) => n.id === k || n.name === k || n.address === k);
          if (!found) fail('UNKNOWN_NODE', `no node ${JSON.stringify(k)} in this slot map (give an index, an id or host:port)`);
          idx = found.index;
        }
        nodes.push(num(idx, 'a node index'));
        ws.push(weightOf(k, w, num));
      }
      return new ReshardPlan(INTERNAL, h.plan(Float64Array.from(nodes), Float64Array.from(ws)));
    }

    /** Applies a plan (all moves); the map is unchanged if the plan is stale. */
    applyPlan(plan) {
      this.#h.applyPlan(ReshardPlan[INTERNAL](plan));
      return this;
    }

    clone() {
      return new SlotMap(INTERNAL, this.#h.clone());
    }

    free() {
      if (this.#raw) this.#raw.free();
      this.#raw = null;
    }
  }
  if (dispose) SlotMap.prototype[dispose] = SlotMap.prototype.free;

  return { SlotMap, ReshardPlan };
}
