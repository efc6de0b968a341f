// keyroute/fleet's declarations against real usage (tsc --strict; never run).
import init, { Router, ENGINES, ERROR_CODES } from 'keyroute/fleet';
import type { EngineName } from 'keyroute/fleet';

await init();
const names: readonly string[] = ENGINES;
const all: readonly EngineName[] = ENGINES;
const nut = new Router('nutcracker', ['a']);
const engine: EngineName = nut.engine;
// @ts-expect-error not an engine name
const bad: EngineName = 'ketama2';
const code: number = ERROR_CODES.BAD_CONFIG;
const r = new Router('maglev', ['a', ['b', 2], { name: 'c' }], { table_size: 65537 });
const owner: string | null = r.get('user:1');
const many: (string | null)[] = r.getMany(['a', new Uint8Array([1])]);
const top: string[] = r.getN('k', 2);
const i: number = r.getIndex('k');
const j = new Router('jedis', { a: 1, b: 2 }, { version: 2, naming: 'named' });
const cfg = Router.fromConfig('backend app\n', 'app', { file: 'h.cfg', allowDown: false, resolved: { h: 2 }, includes: { 'x.conf': '' } });
const format: 'twemproxy' | 'nginx' | 'haproxy' | null = cfg.format;
const addresses: string[] | null = cfg.addresses;
const changed: Router = r.add('d').add('e', 2).add('f', 3n).remove('a');
// @ts-expect-error a weight is a number or a bigint
r.add('g', '2');
r.free();
void [names, all, engine, bad, code, owner, many, top, i, j, format, addresses, changed];
// @ts-expect-error options are strings, numbers or booleans
new Router('jump', ['a'], { hash: {} });
