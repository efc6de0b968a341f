// Compiled by types.test.mjs: keyroute/serve's declarations accept real usage and reject misuse.
import { Client, LoaderWorker, LoadFailed, Reply, TYPES, TRANSPORT_ERRORS, REPLY_BIT, encodeHeader, decodeHeader, type MsgTypeName, type TransportErrorName } from 'keyroute/serve';

const client = new Client('tcp://127.0.0.1:5555', { timeoutMs: 2000, maxInFlight: 100 });
const reply: Reply = await client.request('product.get', { client: 'c-42', kind: 'cards' }, null, { priority: 9, deadlineMs: 500, sessionId: 'sid' });
const value: Buffer | null = reply.payload;
const te: TransportErrorName | null = reply.transportError;
const none: null = await client.request('app.start', { device: 'ios-1' });
const n: 30 = TYPES['product.get'];
const name: 'QUEUE_FULL' = TRANSPORT_ERRORS[1];
const bit: number = REPLY_BIT;
const kind: MsgTypeName = 'session.touch';
const head: Buffer = encodeHeader(kind, { requestId: new Uint8Array(16), priority: 1 });
const id: Buffer = decodeHeader(head).requestId;
await client.close();
const worker = new LoaderWorker('tcp://127.0.0.1:5556', ['accounts', 'cards'], async (c: string, k: string) => {
  if (k === 'cards') throw new LoadFailed('UPSTREAM_500', 'down');
  return `${c}:${k}`;
}, { capacity: 4, heartbeatMs: 500 });
const running: Promise<void> = worker.run();
await worker.stop();
// @ts-expect-error message types are core's names
await client.request('product.gets', {});
// @ts-expect-error a load function returns bytes or a string
new LoaderWorker('tcp://127.0.0.1:5556', ['cards'], () => 42);
// @ts-expect-error kinds are a list
new LoaderWorker('tcp://127.0.0.1:5556', 'cards', () => '');
export { value, te, none, n, name, bit, id, running };
