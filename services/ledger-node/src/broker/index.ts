export { type WatcherConfig, watcherConfig } from './config.ts';
export {
  type BrokerApi,
  type BrokerEndpoint,
  type BrokerRole,
  NGSI_LD_CORE_CONTEXT,
  normalizeBrokerUrl,
} from './endpoint.ts';
export { BodyBuffer, type BrokerHttp, type BrokerHttpOptions, createBrokerHttp } from './http-client.ts';
export {
  listingFor,
  parsePage,
  type RawPage,
  type ReadOptions,
  readBroker,
  readBrokerPages,
  readRawPages,
  type UnreadableEntity,
} from './listing.ts';
export { ObservationMemory, observationDigest, type ScopeMemory } from './memory.ts';
export { createWatcherMetrics, type WatcherMetrics } from './metrics.ts';
export { recordsFor } from './notary.ts';
export { entityKey, type ObservedEntity, observeEntity } from './observe.ts';
export { nextPassAt } from './pass-schedule.ts';
export type { WatcherPorts } from './ports.ts';
export { BrokerReadError, type BrokerReadReason } from './read-error.ts';
export {
  buildRecord,
  isObservationRecord,
  type ObservationFields,
  type ObservationRecord,
  type ObservationScope,
  recordId,
} from './record.ts';
export type { BrokerStatus, PassResult, WatcherStatus } from './status.ts';
export {
  allOk,
  asPrimary,
  entityDigest,
  judge,
  type Observation,
  type PrimaryEntity,
  type Verdict,
} from './verdict.ts';
export { Watcher, type WatcherOptions } from './watcher.ts';
