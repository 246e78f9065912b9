// Deterministic test data and scripted changes for a test broker: N entities of K attributes of
// mixed value types (numbers, text, booleans, objects, arrays; an NGSI-LD Relationship), written
// through the broker's own batch API, and tampering as an ordinary attribute update.
import type { TestBroker } from './server.ts';
import type { BrokerApi } from './store.ts';

const NAMES = [
  'temperature',
  'status',
  'active',
  'calibration',
  'readings',
  'humidity',
  'label',
  'enabled',
  'config',
  'site',
];

export const attributeName = (j: number): string => NAMES[j] ?? `attr${j}`;
export const entityId = (i: number): string => `urn:ngsi-ld:Sensor:${String(i).padStart(6, '0')}`;
export const ENTITY_TYPE = 'Sensor';

/** The value of attribute j of entity i (the same on every broker seeded alike). */
export function attributeValue(i: number, j: number): unknown {
  switch (j % 5) {
    case 0:
      return Math.round((i * 0.5 + j) * 100) / 100;
    case 1:
      return `state-${(i + j) % 3}`;
    case 2:
      return (i + j) % 2 === 0;
    case 3:
      return { level: (i + j) % 7, tags: ['a', String(i % 11)] };
    default:
      return [i % 13, j, 'x'];
  }
}

/** Attribute j of entity i in the API's normalized representation. */
export function attribute(api: BrokerApi, i: number, j: number, value = attributeValue(i, j)): Record<string, unknown> {
  if (api === 'ngsi-v2') return { value, type: v2Type(value) };
  if (j === 9) return { type: 'Relationship', object: `urn:ngsi-ld:Site:${siteOf(i, value)}` };
  return { type: 'Property', value };
}

/** The site a Relationship points to: the seeded value's own, or one that changes whenever a given value does. */
function siteOf(i: number, value: unknown): string {
  if (typeof value === 'number') return String(value);
  // A string (a tamper's marker) must move the object too, or the write changes nothing a watcher can see.
  if (typeof value === 'string') return value.replace(/[^A-Za-z0-9-]/g, '-');
  return String(i % 50);
}

function v2Type(value: unknown): string {
  if (typeof value === 'number') return 'Number';
  if (typeof value === 'string') return 'Text';
  if (typeof value === 'boolean') return 'Boolean';
  return 'StructuredValue';
}

export interface SeedOptions {
  count: number;
  attrs: number;
  /** First entity index (default 0). */
  from?: number;
  tenant?: string;
  servicePath?: string;
}

/** Writes `count` entities through the broker's batch endpoint, 1000 per batch (in-process). */
export function seed(broker: TestBroker, options: SeedOptions): void {
  const from = options.from ?? 0;
  const headers = tenantHeaders(broker.api, options.tenant, options.servicePath);
  for (let start = from; start < from + options.count; start += 1000) {
    const entities: Array<Record<string, unknown>> = [];
    for (let i = start; i < Math.min(start + 1000, from + options.count); i++) {
      const e: Record<string, unknown> = { id: entityId(i), type: ENTITY_TYPE };
      for (let j = 0; j < options.attrs; j++) e[attributeName(j)] = attribute(broker.api, i, j);
      entities.push(e);
    }
    const reply =
      broker.api === 'ngsi-v2'
        ? broker.inject({ method: 'POST', path: '/v2/op/update', headers, body: { actionType: 'append', entities } })
        : broker.inject({ method: 'POST', path: '/ngsi-ld/v1/entityOperations/upsert', headers, body: entities });
    if (reply.status >= 300) throw new Error(`seeding failed: ${reply.status} ${reply.body}`);
  }
}

export function tenantHeaders(api: BrokerApi, tenant?: string, servicePath?: string): Record<string, string> {
  const h: Record<string, string> = {};
  if (api === 'ngsi-v2') {
    if (tenant) h['Fiware-Service'] = tenant;
    if (servicePath) h['Fiware-ServicePath'] = servicePath;
  } else if (tenant) h['NGSILD-Tenant'] = tenant;
  return h;
}

/** Overwrites one attribute (in-process), as someone with write access to that broker would. */
export function setAttribute(
  broker: TestBroker,
  id: string,
  name: string,
  attr: Record<string, unknown>,
  tenant?: { tenant?: string; servicePath?: string },
): void {
  const headers = tenantHeaders(broker.api, tenant?.tenant, tenant?.servicePath);
  const path =
    broker.api === 'ngsi-v2'
      ? `/v2/entities/${encodeURIComponent(id)}/attrs?type=${ENTITY_TYPE}`
      : `/ngsi-ld/v1/entities/${encodeURIComponent(id)}/attrs`;
  const reply = broker.inject({ method: 'POST', path, headers, body: { [name]: attr } });
  if (reply.status >= 300) throw new Error(`update failed: ${reply.status} ${reply.body}`);
}
