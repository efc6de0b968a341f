// Every shared ring vector (tests/vectors/ring/*.json, generated from the real peers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ring } from 'keyroute';
import { vectors } from './helpers.mjs';

const files = vectors('ring');
test('ring vectors exist', () => assert.ok(files.length >= 40, `${files.length} files`));

for (const [name, v] of files) {
  test(`ring vector ${name}`, () => {
    const opts = { profile: v.profile };
    if (v.options?.default_port !== undefined) opts.defaultPort = v.options.default_port;
    if (v.options?.points_per_digest !== undefined) opts.pointsPerDigest = v.options.points_per_digest;
    const ring = new Ring(v.nodes, opts);
    try {
      if (v.point_count != null) assert.equal(ring.pointCount, v.point_count, 'point count');
      const got = ring.getMany(v.keys);
      for (let i = 0; i < v.keys.length; i++) {
        if (got[i] !== v.expect[i]) assert.fail(`key ${JSON.stringify(v.keys[i])}: got ${got[i]}, want ${v.expect[i]}`);
      }
      // Single lookups agree with the batch.
      for (let i = 0; i < Math.min(v.keys.length, 200); i++) assert.equal(ring.get(v.keys[i]), v.expect[i]);
      if (v.replicas) {
        for (let i = 0; i < v.keys.length; i++) {
          assert.deepEqual(ring.getN(v.keys[i], v.replicas.n), v.replicas.expect[i], `replicas of ${v.keys[i]}`);
        }
      }
    } finally {
      ring.free();
    }
  });
}
