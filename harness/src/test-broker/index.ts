export {
  attribute,
  attributeName,
  attributeValue,
  ENTITY_TYPE,
  entityId,
  type SeedOptions,
  seed,
  setAttribute,
  tenantHeaders,
} from './generate.ts';
export type { BrokerRequest, Fault, Reply } from './http.ts';
export { CORE_CONTEXT } from './ngsi-ld.ts';
export {
  type InjectRequest,
  type RequestCounts,
  startTestBroker,
  type TestBroker,
  type TestBrokerOptions,
} from './server.ts';
export type { BrokerApi } from './store.ts';
export { type Api, BrokerWrites } from './writes.ts';
