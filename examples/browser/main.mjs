// keyroute as a browser ES module: `await init()` once, then use the API.
// In an app with a bundler: `import init, { Ring, keySlot } from 'keyroute'`.
import init, { Ring, keySlot, hashTag } from '../../bindings-js/dist/web.mjs';

await init();
const ring = new Ring({ 'cache-a': 1, 'cache-b': 1, 'cache-c': 2 });
const input = document.getElementById('key');
const out = document.getElementById('out');
function show() {
  const key = input.value;
  out.textContent = [
    `owner:    ${ring.get(key)}`,
    `replicas: ${ring.getN(key, 2).join(', ')}`,
    `slot:     ${keySlot(key)} (hashed part ${JSON.stringify(hashTag(key))})`,
  ].join('\n');
}
input.addEventListener('input', show);
show();
