// The test broker as a process (a pod in the end-to-end suite, a terminal by hand):
//   node harness/src/test-broker/main.ts --api ngsi-v2 --port 1026 --entities 300 --attrs 10 \
//     [--host 0.0.0.0] [--tenant NAME] [--service-path /x] [--tls-cert FILE --tls-key FILE] [--tamper-every-ms 30000]
// With --tamper-every-ms it restores its previous tamper and tampers the next entity's first
// attribute on that period, printing one JSON line per change. SIGTERM/SIGINT close it.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { attribute, attributeName, attributeValue, entityId, seed, setAttribute } from './generate.ts';
import { startTestBroker } from './server.ts';

const { values } = parseArgs({
  options: {
    api: { type: 'string', default: 'ngsi-v2' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '1026' },
    entities: { type: 'string', default: '0' },
    attrs: { type: 'string', default: '10' },
    tenant: { type: 'string' },
    'service-path': { type: 'string' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    'tamper-every-ms': { type: 'string', default: '0' },
  },
});

const api = values.api === 'ngsi-ld' ? 'ngsi-ld' : values.api === 'ngsi-v2' ? 'ngsi-v2' : undefined;
if (!api) {
  console.error(`test-broker: --api must be ngsi-v2 or ngsi-ld, not ${values.api}`);
  process.exit(2);
}
const tls =
  values['tls-cert'] && values['tls-key']
    ? { cert: readFileSync(values['tls-cert']), key: readFileSync(values['tls-key']) }
    : undefined;
const broker = await startTestBroker({ api, host: values.host, port: Number(values.port), ...(tls ? { tls } : {}) });
const count = Number(values.entities);
const attrs = Number(values.attrs);
const scope = { tenant: values.tenant, servicePath: values['service-path'] };
if (count > 0) seed(broker, { count, attrs, ...scope });
console.log(JSON.stringify({ event: 'listening', url: broker.url, api, entities: count, attrs }));

const every = Number(values['tamper-every-ms']);
let timer: NodeJS.Timeout | undefined;
if (every > 0 && count > 0) {
  let next = 0;
  let previous: number | undefined;
  const name = attributeName(0);
  timer = setInterval(() => {
    if (previous !== undefined) {
      setAttribute(broker, entityId(previous), name, attribute(api, previous, 0), scope);
      console.log(JSON.stringify({ event: 'restored', entity: entityId(previous), attribute: name }));
    }
    const i = next % count;
    const value = -1000 - ((attributeValue(i, 0) as number) || 0);
    setAttribute(broker, entityId(i), name, attribute(api, i, 0, value), scope);
    console.log(JSON.stringify({ event: 'tampered', entity: entityId(i), attribute: name, value }));
    previous = i;
    next++;
  }, every);
}

const stop = () => {
  if (timer) clearInterval(timer);
  broker.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
