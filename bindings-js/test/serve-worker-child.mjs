// A Node LoaderWorker in a process of its own, for the suites that kill it mid-load:
//
//   node serve-worker-child.mjs ENDPOINT KIND[,KIND...] [DELAY_MS]
//
// Each load answers `node:<client>:<kind>` after DELAY_MS (0 by default) and prints
// `load <client> <kind>` on stdout as it starts; `ready` once the worker runs.
import { LoaderWorker } from 'keyroute/serve';

const [endpoint, kinds, delay = '0'] = process.argv.slice(2);
const worker = new LoaderWorker(endpoint, kinds.split(','), async (client, kind) => {
  process.stdout.write(`load ${client} ${kind}\n`);
  await new Promise((r) => setTimeout(r, Number(delay)));
  return `node:${client}:${kind}`;
}, { heartbeatMs: 100 });
process.on('SIGTERM', () => worker.stop());
const running = worker.run();
process.stdout.write('ready\n');
await running;
