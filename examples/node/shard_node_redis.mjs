// Recipe: shard a key space over several Redis (or Valkey) servers with node-redis and a
// keyroute Ring. Every client that builds the same Ring from the same server list sends
// each key to the same server, in any language keyroute has a binding for; adding a
// server moves only the keys it takes over (ring.diff tells how many).
//
//   npm install            # keyroute (../../bindings-js, after `make build-js`) and redis
//   node shard_node_redis.mjs redis://127.0.0.1:6379 redis://127.0.0.1:6380 redis://127.0.0.1:6381
import { createClient } from 'redis';
import { Ring } from 'keyroute';

export class ShardedRedis {
  /**
   * `urls`: one Redis URL per shard. The node names on the ring are the servers'
   * host:port, so that another client (or another language) with the same list routes
   * alike. `ringOptions`: a keyroute profile and options (native by default).
   */
  constructor(urls, ringOptions = {}) {
    this.clients = new Map();
    for (const url of urls) {
      const u = new URL(url);
      this.clients.set(`${u.hostname}:${u.port || 6379}`, createClient({ url }));
    }
    this.ring = new Ring([...this.clients.keys()], ringOptions);
  }

  async connect() {
    await Promise.all([...this.clients.values()].map((c) => c.connect()));
    return this;
  }

  /** The node-redis client that owns `key`. */
  clientFor(key) {
    return this.clients.get(this.ring.get(key));
  }

  get(key) {
    return this.clientFor(key).get(key);
  }

  set(key, value) {
    return this.clientFor(key).set(key, value);
  }

  /** MGET across shards: one MGET per server (keys grouped in one call into wasm), answers in key order. */
  async mGet(keys) {
    const owners = this.ring.getManyIndexes(keys);
    const names = this.ring.names;
    const byNode = new Map();
    owners.forEach((node, i) => {
      if (!byNode.has(node)) byNode.set(node, []);
      byNode.get(node).push(i);
    });
    const out = new Array(keys.length);
    await Promise.all(
      [...byNode].map(async ([node, idx]) => {
        const values = await this.clients.get(names[node]).mGet(idx.map((i) => keys[i]));
        idx.forEach((i, j) => {
          out[i] = values[j];
        });
      }),
    );
    return out;
  }

  async close() {
    await Promise.all([...this.clients.values()].map((c) => c.close()));
    this.ring.free();
  }
}

// Run as a script: write 1,000 keys through the shards, read them back with one MGET per
// server, and show where they went.
if (import.meta.url === `file://${process.argv[1]}`) {
  const urls = process.argv.slice(2);
  if (urls.length === 0) {
    console.error('usage: node shard_node_redis.mjs redis://host:port [redis://host:port ...]');
    process.exit(2);
  }
  const shards = await new ShardedRedis(urls).connect();
  const keys = Array.from({ length: 1000 }, (_, i) => `session:${i}`);
  await Promise.all(keys.map((k) => shards.set(k, `value of ${k}`)));
  const values = await shards.mGet(keys);
  const wrong = values.filter((v, i) => v !== `value of ${keys[i]}`).length;
  const perServer = {};
  for (const [name, client] of shards.clients) perServer[name] = await client.dbSize();
  console.log(JSON.stringify({ keys: keys.length, wrong, perServer, shares: shards.ring.shares() }));
  await shards.close();
  if (wrong) process.exit(1);
}
