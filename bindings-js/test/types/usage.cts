// CommonJS consumers: require('keyroute') resolves dist/index.d.ts.
import kr = require('keyroute');

const ring = new kr.Ring(['a', 'b']);
const owner: string | null = ring.get('k');
const slots: Uint16Array = kr.keySlots(['a']);
const api: Promise<kr.Api> = kr.default();
void [owner, slots, api];
