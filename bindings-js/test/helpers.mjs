// Shared helpers of the node --test suites.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = dirname(fileURLToPath(import.meta.url));
export const pkgDir = resolve(here, '..');
export const repo = resolve(pkgDir, '..');
export const vectorsDir = join(repo, 'tests', 'vectors');

/** Every JSON file of tests/vectors/<kind>/, as [file name, parsed]. */
export function vectors(kind) {
  const dir = join(vectorsDir, kind);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8'))]);
}

export function hex(s) {
  return Uint8Array.from(Buffer.from(s, 'hex'));
}

/** A deterministic PRNG (mulberry32) so failures reproduce. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
