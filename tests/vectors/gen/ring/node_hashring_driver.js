// Runs the npm `hashring` peer for gen_node_hashring.py.
// stdin: {"servers": [[name, weight], ...], "options": {...HashRing options...},
//         "keys": [...], "replicas_n": n}
// stdout: {"version", "point_count", "points_per_server", "expect", "replicas"}
'use strict';

const HashRing = require('hashring');

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  const req = JSON.parse(input);
  // Servers as an object {"host:port": weight}, in the given order.
  const servers = {};
  for (const [name, weight] of req.servers) servers[name] = weight;
  const ring = new HashRing(servers, 'md5', req.options);

  // Object.keys order must be the order we gave (no integer-like names).
  const order = ring.servers.map((s) => s.string);
  if (JSON.stringify(order) !== JSON.stringify(req.servers.map((s) => s[0]))) {
    throw new Error('server order changed: ' + JSON.stringify(order));
  }

  const perServer = {};
  for (const node of ring.ring) perServer[node.server] = (perServer[node.server] || 0) + 1;

  const expect = req.keys.map((k) => ring.get(k));
  const replicas = req.keys.map((k) => ring.range(k, req.replicas_n, true));
  process.stdout.write(JSON.stringify({
    version: HashRing.version,
    point_count: ring.ring.length,
    size: ring.size,
    points_per_server: perServer,
    expect,
    replicas,
  }));
});
