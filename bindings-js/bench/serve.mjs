// Round trips through `keyroute serve`: the Node Client (keyroute/serve) against the Python
// Client (keyroute.serve) on the same service, in alternating rounds, median of each.
//
//   node bench/serve.mjs [rounds] [ms per round]
//
// Needs the release `keyroute` binary (make build-serve; KEYROUTE_BIN) and the serve venv
// (make serve-venv; KEYROUTE_SERVE_PY). Two measures per client: `ping` one at a time
// (a round trip each: latency-bound) and `ping` with 64 in flight (throughput-bound).
// Prints one JSON line.
import { createInterface } from 'node:readline';
import { Client } from 'keyroute/serve';
import { startServe, python } from '../test/serve-helpers.mjs';

const rounds = Number(process.argv[2] || 7);
const ms = Number(process.argv[3] || 1000);
const WINDOW = 64;

const s = await startServe(['--threads', '4']);
const py = python(`
import sys, time
from keyroute.serve import Client
c = Client(sys.argv[1])
ms = int(sys.argv[2]) / 1000
window = int(sys.argv[3])
c.request("ping")
for line in sys.stdin:
    n = 0
    t = time.perf_counter()
    if line.strip() == "one":
        while time.perf_counter() - t < ms:
            c.request("ping")
            n += 1
    else:
        for _ in range(window):
            c.send("ping")
        while time.perf_counter() - t < ms:
            c.recv()
            c.send("ping")
            n += 1
        for _ in range(window):
            c.recv()
    print(round(n / (time.perf_counter() - t)), flush=True)
`, [s.bind, String(ms), String(WINDOW)], { stdio: ['pipe', 'pipe', 'pipe'] });
const answers = createInterface({ input: py.proc.stdout })[Symbol.asyncIterator]();
async function pythonRound(kind) {
  py.proc.stdin.write(`${kind}\n`);
  return Number((await answers.next()).value);
}

const c = new Client(s.bind, { maxInFlight: WINDOW });
await c.request('ping');
async function nodeRound(kind) {
  let n = 0;
  const t = performance.now();
  if (kind === 'one') {
    while (performance.now() - t < ms) {
      await c.request('ping');
      n++;
    }
  } else {
    const lane = async () => {
      while (performance.now() - t < ms) {
        await c.request('ping');
        n++;
      }
    };
    await Promise.all(Array.from({ length: WINDOW }, lane));
  }
  return Math.round(n / ((performance.now() - t) / 1000));
}

const out = { node: { one: [], window: [] }, python: { one: [], window: [] } };
for (let r = 0; r < rounds; r++) {
  for (const kind of ['one', 'window']) {
    // Alternate which goes first, so neither always runs on a warmer machine.
    if (r % 2 === 0) {
      out.node[kind].push(await nodeRound(kind));
      out.python[kind].push(await pythonRound(kind));
    } else {
      out.python[kind].push(await pythonRound(kind));
      out.node[kind].push(await nodeRound(kind));
    }
  }
}
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
const summary = {
  rounds,
  msPerRound: ms,
  window: WINDOW,
  pingsPerSecond: {
    node: { oneAtATime: median(out.node.one), inFlight64: median(out.node.window) },
    python: { oneAtATime: median(out.python.one), inFlight64: median(out.python.window) },
  },
  raw: out,
};
console.log(JSON.stringify(summary));
py.proc.stdin.end();
await c.close();
await s.stop();
