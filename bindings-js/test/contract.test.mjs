// The entrance contract (tests/contract/bad_inputs.json) in JavaScript: every case the
// package can express gives the listed value or an Error whose `code` is the listed one.
// Rust, Python and C run the same file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ring, diff, parseNodes, parseWeights, keySlots, Pool, SlotMap, sideKey, ERROR_CODES } from 'keyroute';
import { repo } from './helpers.mjs';

// Integers beyond 2**53 become bigints (exact), as a JavaScript caller would pass them:
// JSON.parse would round 9007199254740993 to 2**53.
function parse(textOf) {
  const marked = textOf.replace(/([:,[]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1{"$bigint": "$2"}');
  return JSON.parse(marked, (_, v) => (v && typeof v === 'object' && typeof v.$bigint === 'string' ? BigInt(v.$bigint) : v));
}

const table = parse(readFileSync(join(repo, 'tests', 'contract', 'bad_inputs.json'), 'utf8'));

function ringOf(args) {
  const o = args.options || {};
  const options = { profile: args.profile };
  if (o.vnodes !== undefined) options.vnodes = o.vnodes;
  if (o.points_per_digest !== undefined) options.pointsPerDigest = o.points_per_digest;
  if (o.default_port !== undefined) options.defaultPort = o.default_port === 0 ? null : o.default_port;
  return new Ring(args.nodes, options);
}

const ops = {
  parse_nodes: (a) => parseNodes(a.text).map((n) => [n.name, n.weight]),
  parse_weights: (a) => parseWeights(a.text),
  ring: (a) => ringOf(a).names,
  ring_change: (a) => {
    const r = ringOf(a);
    if (a.change === 'add') r.add(a.name, a.weight);
    else if (a.change === 'remove') r.remove(a.name);
    else if (a.change === 'set_weight') r.setWeight(a.name, a.weight);
    else assert.fail(`unknown change ${a.change}`);
    return null;
  },
  ring_get_n: (a) => ringOf(a).getN(a.key, a.n).length,
  diff: (a) => {
    diff(ringOf(a.a), ringOf(a.b));
    return null;
  },
  get_many: (a) => ringOf(a).getMany(a.keys),
  key_slots: (a) => keySlots(a.keys),
  pool_seed: (a) => new Pool().seed(a.members, { initial: a.initial }),
  pool_restore: (a) => new Pool().restore(a.member, a.mode),
  pool_pick_many: (a) => {
    const p = new Pool();
    p.seed(a.members);
    return p.pickMany(a.n).length;
  },
  pool_key: (a) => {
    sideKey(a.key);
    return null;
  },
  slot_map_add_master: (a) => {
    new SlotMap().addMaster({ host: a.host, port: a.port });
    return null;
  },
  slot_map_assign: (a) => {
    const map = new SlotMap();
    const node = map.addMaster('10.0.0.1:7000');
    map.assign(a.start, a.end, node);
    return null;
  },
  redirect: (a) => {
    const r = new SlotMap().applyRedirect(a.text);
    return [r.kind.toUpperCase(), r.slot, r.host, r.port];
  },
  plan: (a) => {
    const map = new SlotMap();
    for (const [addr, ranges] of a.masters) {
      const node = map.addMaster(addr);
      for (const [start, end] of ranges) map.assign(start, end, node);
    }
    map.plan(a.weights);
    return null;
  },
};

test('every case of tests/contract/bad_inputs.json gives its value or code', () => {
  let ran = 0;
  const skipped = [];
  for (const c of table.cases) {
    if (c.skip?.js) {
      skipped.push(c.id);
      continue;
    }
    const op = ops[c.op];
    assert.ok(op, `${c.id}: no JavaScript runner for op ${c.op}`);
    if ('code' in c) {
      assert.ok(c.code in ERROR_CODES, `${c.id}: ${c.code} is not in ERROR_CODES`);
      assert.throws(() => op(c.args), (e) => {
        assert.ok(e instanceof Error, `${c.id}: threw ${e}, not an Error`);
        assert.equal(e.code, c.code, `${c.id}: ${e.message}`);
        assert.ok(e.message.length > 10, `${c.id}: message ${JSON.stringify(e.message)}`);
        return true;
      }, c.id);
    } else {
      assert.ok('ok' in c, `${c.id}: a case has exactly one of code and ok`);
      let got;
      try {
        got = op(c.args);
      } catch (e) {
        assert.fail(`${c.id}: expected ${JSON.stringify(c.ok)}, got ${e.code}: ${e.message}`);
      }
      assert.deepEqual(got, c.ok, c.id);
    }
    ran++;
  }
  console.log(`contract: ${ran} cases ran in JavaScript, ${skipped.length} skipped (${skipped.join(', ') || 'none'})`);
  assert.ok(ran >= 60, `only ${ran} cases ran`);
  assert.equal(ran + skipped.length, table.cases.length);
});

test('ERROR_CODES: every core code, name → number', () => {
  const doc = readFileSync(join(repo, 'docs', 'errors.md'), 'utf8');
  const rows = [...doc.matchAll(/^\|\s*(\d+)\s*\|\s*`([A-Z0-9_]+)`\s*\|/gm)].map((m) => [m[2], Number(m[1])]);
  assert.ok(rows.length >= 50, `read ${rows.length} codes from docs/errors.md`);
  assert.deepEqual(Object.entries(ERROR_CODES), rows);
  assert.ok(Object.isFrozen(ERROR_CODES));
});
