// Types of `keyroute/serve` (Node only): a client and a loader worker of `keyroute serve`
// (docs/protocol.md) over the `zeromq` npm package (v6, an optional peer dependency:
// `npm install zeromq@6`). The header is written and read by core's codec
// (keyroute::frame) through the .wasm; the message types, transport errors and header
// constants below are core's (generated).
//
// Every error thrown (or a promise rejected) is an `Error` (TypeError for BAD_TYPE) whose
// `code` is one of ERROR_CODES: BUSY (maxInFlight requests already wait for replies),
// CACHE_TIMEOUT (no reply within the request's timeout), INVALID_HANDLE (closed),
// BAD_CONFIG (zeromq is not installed), and the checks of what is sent (BAD_TYPE,
// OUT_OF_RANGE, TOO_LARGE for a session id over 255 bytes, ...). A transport or data error
// of the service is not thrown: it is a Reply (`transportError`, `errorCode`).

import type { ErrorCode, KeyrouteError } from './index.js';
export type { ErrorCode, KeyrouteError } from './index.js';

// BEGIN GENERATED: message types, transport errors and header constants from core's frame (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
/** A message type of the protocol (core's `MsgType`). */
export type MsgTypeName =
  | 'ping' | 'session.create' | 'session.touch' | 'session.destroy' | 'session.list'
  | 'session.update' | 'cache.get' | 'cache.put' | 'cache.invalidate' | 'product.get'
  | 'app.start' | 'device.bind' | 'worker.ready' | 'load' | 'loaded' | 'failed';
/** A transport error of the protocol (core's `TransportError`). */
export type TransportErrorName =
  | 'QUEUE_FULL' | 'EXPIRED' | 'SHUTTING_DOWN' | 'BAD_HEADER' | 'UNKNOWN_TYPE' | 'NO_LOADER'
  | 'STORE_UNAVAILABLE' | 'LOAD_TIMEOUT' | 'AT_CAP' | 'TOO_MANY_WAITERS' | 'STORE_FULL'
  | 'UNKNOWN_SYSTEM';
/** Message types by name (core's `MsgType`). */
export const TYPES: Readonly<{
  'ping': 1;
  'session.create': 10;
  'session.touch': 11;
  'session.destroy': 12;
  'session.list': 13;
  'session.update': 14;
  'cache.get': 20;
  'cache.put': 21;
  'cache.invalidate': 22;
  'product.get': 30;
  'app.start': 31;
  'device.bind': 32;
  'worker.ready': 100;
  'load': 101;
  'loaded': 102;
  'failed': 103;
}>;
/** Transport errors by number (core's `TransportError`). */
export const TRANSPORT_ERRORS: Readonly<{
  1: 'QUEUE_FULL';
  2: 'EXPIRED';
  3: 'SHUTTING_DOWN';
  4: 'BAD_HEADER';
  5: 'UNKNOWN_TYPE';
  6: 'NO_LOADER';
  7: 'STORE_UNAVAILABLE';
  8: 'LOAD_TIMEOUT';
  9: 'AT_CAP';
  10: 'TOO_MANY_WAITERS';
  11: 'STORE_FULL';
  12: 'UNKNOWN_SYSTEM';
}>;
/** The protocol version core writes and reads. */
export const VERSION: 1;
/** The system byte of `keyroute serve`. */
export const SYSTEM: 0;
/** The bit a reply sets on its request's type. */
export const REPLY_BIT: 32768;
/** Flag bit 0: the reply is a data error (its body is {code, message}). */
export const FLAG_DATA_ERROR: 1;
/** The header's length with an empty session id. */
export const HEADER_FIXED_LEN: 29;
/** The longest header a reader accepts. */
export const MAX_HEADER_LEN: 512;
// END GENERATED

/** Bytes of a session id, request id or payload: a string (UTF-8) or bytes. */
export type Bytes = string | Uint8Array;

/** Every field of a header. */
export interface Header {
  version: number;
  system: number;
  /** The message type's number (| REPLY_BIT in a reply). */
  msgType: number;
  /** 0, or a number of TRANSPORT_ERRORS. */
  transportError: number;
  /** Bit 0 (FLAG_DATA_ERROR): the body is {code, message}. */
  flags: number;
  priority: number;
  deadlineMs: number;
  requestId: Buffer;
  sessionId: Buffer;
}

export interface HeaderOptions {
  /** 16 bytes (cut or zero-padded). */
  requestId?: Bytes;
  priority?: number | bigint;
  deadlineMs?: number | bigint;
  /** At most 255 bytes (TOO_LARGE). */
  sessionId?: Bytes;
  transportError?: number | bigint;
  flags?: number | bigint;
  version?: number | bigint;
  system?: number | bigint;
}

/** The header frame, as core's codec writes it. */
export function encodeHeader(msgType: MsgTypeName | number, options?: HeaderOptions): Buffer;
/** Every field of a header frame, as core's codec reads it (OUT_OF_RANGE, TOO_LARGE). */
export function decodeHeader(frame: Uint8Array): Header;

/** A reply: its header, its JSON body ({} when empty) and its payload, if any. */
export class Reply {
  readonly header: Header;
  readonly body: Record<string, any>;
  readonly payload: Buffer | null;
  /** The transport error's name, or null. */
  readonly transportError: TransportErrorName | null;
  /** The data error's code (flag bit 0), or null. */
  readonly errorCode: string | null;
  /** The data error's message, or what the transport error means, or null. */
  readonly errorMessage: string | null;
  /** Neither a transport error nor a data error. */
  readonly ok: boolean;
}

/** ZeroMQ CURVE keys (Z85): the service's public key and this peer's own pair. */
export interface CurveKeys {
  serverKey: string;
  publicKey: string;
  secretKey: string;
}

export interface ClientOptions {
  /** How long a request waits for its reply, ms (default 10000; a longer deadlineMs + 1000 wins). */
  timeoutMs?: number | bigint;
  /** Requests waiting for replies at once (default 1024; more are refused with BUSY). */
  maxInFlight?: number | bigint;
  /** The largest reply accepted, bytes (default 64 MiB; libzmq drops the connection past it). */
  maxMessageBytes?: number | bigint;
  curve?: CurveKeys;
}

export interface RequestOptions {
  /** 0-255, higher is served first. */
  priority?: number | bigint;
  /** The service's deadline from receipt, ms (0: its --default-deadline-ms). */
  deadlineMs?: number | bigint;
  /** At most 255 bytes; echoed in the reply. */
  sessionId?: Bytes;
  /** 16 bytes, echoed in the reply (default: unique per client). */
  requestId?: Bytes;
  /** How long to wait here for the reply, ms. */
  timeoutMs?: number | bigint;
}

/** A DEALER socket to the service's client endpoint, many requests in flight. */
export class Client {
  constructor(endpoint: string, options?: ClientOptions);
  /** Requests waiting for replies. */
  readonly inFlight: number;
  /** Replies dropped: malformed, or late (after their request's timeout). */
  readonly dropped: number;
  /** Sends a request and resolves to its reply. */
  request(msgType: Exclude<MsgTypeName, 'app.start'> | number, body?: Record<string, unknown> | null, payload?: Bytes | null, options?: RequestOptions): Promise<Reply>;
  /** `app.start` is never answered: resolves to null once sent. */
  request(msgType: 'app.start', body?: Record<string, unknown> | null, payload?: Bytes | null, options?: RequestOptions): Promise<null>;
  /** Closes the socket; requests still waiting are rejected with INVALID_HANDLE. */
  close(): Promise<void>;
}

/** Throw it from a load function to answer `failed` with a code of your own. */
export class LoadFailed extends Error {
  constructor(code: string, message: string);
  code: string;
}

export interface LoaderWorkerOptions {
  /** Loads run at once (default 1). */
  capacity?: number | bigint;
  /** How often worker.ready is repeated, ms (default 500). */
  heartbeatMs?: number | bigint;
  maxMessageBytes?: number | bigint;
  curve?: CurveKeys;
  /** Called with a refusal from the broker, or a send that failed. */
  onError?: (error: KeyrouteError) => void;
}

/** A loader worker: declares its kinds, heartbeats, and answers each `load` with `fn`. */
export class LoaderWorker {
  constructor(endpoint: string, kinds: string[], fn: (client: string, kind: string) => Uint8Array | string | Promise<Uint8Array | string>, options?: LoaderWorkerOptions);
  readonly kinds: string[];
  /** Loads run so far (the load function was called). */
  readonly loads: number;
  /** Loads running now. */
  readonly running: number;
  /** Serves loads until stop(). */
  run(): Promise<void>;
  /** No new loads; resolves once the loads running were answered and the socket closed. */
  stop(): Promise<void>;
}

/** Every error code, name → stable number. */
export const ERROR_CODES: Readonly<Record<ErrorCode, number>>;
