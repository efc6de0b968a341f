// Core's smart-cache driver as the JavaScript executor runs it (the .wasm's RawDriver, what
// SmartCache.getOrLoad carries out): the trace recorded on a real Redis
// (tests/vectors/cache/driver_trace.json, redis/tests/cache_driver_trace.rs) replays step
// for step, as it does in Rust (core/tests/cache_driver.rs): both executors are driven by
// the same decisions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pkgDir, vectorsDir } from './helpers.mjs';

const require = createRequire(import.meta.url);
const wasm = require(join(pkgDir, 'dist', 'cache', 'keyroute_cache.js'));
const trace = JSON.parse(readFileSync(join(vectorsDir, 'cache', 'driver_trace.json'), 'utf8'));

const hexOf = (b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const bytes = (h) => Buffer.from(h, 'hex');

// A recorded reply as the preorder walk the .wasm reads (tags, nums, data, ends).
function walk(v) {
  const tags = [];
  const nums = [];
  const parts = [];
  const visit = (x) => {
    if ('int' in x) {
      tags.push(1);
      nums.push(x.int);
    } else if ('bytes' in x) {
      tags.push(2);
      parts.push(bytes(x.bytes));
    } else if ('array' in x) {
      tags.push(3);
      nums.push(x.array.length);
      x.array.forEach(visit);
    } else tags.push(0);
  };
  visit(v);
  const ends = new Uint32Array(parts.length);
  let off = 0;
  parts.forEach((p, i) => {
    off += p.length;
    ends[i] = off;
  });
  return [Uint8Array.from(tags), Float64Array.from(nums), Buffer.concat(parts, off), ends];
}
const NOTHING = new Uint8Array(0);
const NONE = [NOTHING, new Float64Array(0), NOTHING, new Uint32Array(0)];

function items(b) {
  const data = b.data;
  const ends = b.ends;
  const counts = b.counts;
  b.free();
  const out = [];
  let start = 0;
  for (const end of ends) {
    out.push(data.subarray(start, end));
    start = end;
  }
  return [out, counts];
}

// A step of the .wasm in the recorder's JSON shape (core/tests/common/driver_trace.rs).
function stepJson(batch) {
  const [it, c] = items(batch);
  switch (c[0]) {
    case 0:
      return { kind: 'peek', key: hexOf(it[0]) };
    case 1:
      return { kind: 'run', script: Buffer.from(it[0]).toString('latin1'), keys: it.slice(1, 1 + c[1]).map(hexOf), args: it.slice(1 + c[1]).map(hexOf) };
    case 2:
      return { kind: 'subscribe' };
    case 3:
      return { kind: 'wait', ms: c[1] };
    case 4:
      return { kind: 'sleep', ms: c[1] };
    case 5:
      return { kind: 'load', every_ms: c[1], beat: it.slice(1 + c[2], it.length - c[3]).map(hexOf), stale: c[3] === 1 ? hexOf(it[it.length - 1]) : null };
    default:
      return { kind: 'done' };
  }
}

const FAULTS = { timeout: 1, connection: 2, other: 3 };

function outcomeJson(raw) {
  let it;
  let c;
  try {
    [it, c] = items(raw.outcome());
  } catch (e) {
    return { failure: e.code === 'VALUE_TOO_LARGE' ? 'input' : 'reply' };
  }
  switch (c[0]) {
    case 0:
      return { value: hexOf(it[0]) };
    case 1:
      return { failure: 'timeout' };
    case 2:
      return { failure: 'io' };
    case 3:
      return { failure: 'backend', code: hexOf(it[0]), message: hexOf(it[1]), cached: c[1] === 1 };
    default:
      return { failure: 'refused' };
  }
}

test('the trace recorded on a real Redis replays step for step through the .wasm', () => {
  assert.ok(trace.reads.length >= 10);
  for (const r of trace.reads) {
    const s = r.settings;
    const settings = Float64Array.of(s[0], s[1], s[2], s[3], s[4] ? 1 : 0, s[5] ? 1 : 0, s[6], s[7]);
    const read = wasm.RawDriver.read(bytes(r.entry), bytes(r.owner), settings, 0, r.deadline_ms);
    let steps = 0;
    r.events.forEach((e, i) => {
      if ('step' in e) {
        steps++;
        assert.deepEqual(stepJson(read.step(e.now, e.u)), e.step, `${r.name}, event ${i}`);
      } else if ('peeked' in e) {
        const ok = e.peeked !== null;
        read.report(0, ok ? 1 : 0, ...(ok ? walk(e.peeked) : NONE), NOTHING, '', '', e.wall);
      } else if ('replied' in e) {
        if ('fault' in e.replied) read.report(1, FAULTS[e.replied.fault], ...NONE, NOTHING, '', '', 0);
        else read.report(1, 0, ...walk(e.replied.value), NOTHING, '', '', 0);
      } else if ('subscribed' in e) read.report(2, 0, ...NONE, NOTHING, '', '', 0);
      else if ('woken' in e) read.report(3, e.woken ? 1 : 0, ...NONE, NOTHING, '', '', 0);
      else if ('slept' in e) read.report(4, 0, ...NONE, NOTHING, '', '', 0);
      else if ('loaded' in e) {
        const l = e.loaded;
        if ('value' in l) read.report(5, 0, ...NONE, bytes(l.value), '', '', e.ms);
        else read.report(5, l.failed[2] ? 1 : 2, ...NONE, NOTHING, l.failed[0], l.failed[1], e.ms);
      } else if ('outcome' in e) {
        assert.deepEqual(outcomeJson(read), e.outcome, `${r.name}: outcome`);
      } else if ('counts' in e) {
        assert.deepEqual(Array.from(read.counts()), e.counts, `${r.name}: counts`);
      }
    });
    read.free();
    assert.ok(steps >= 2, r.name);
  }
});
