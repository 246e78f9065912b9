// Public surface of @scriptorium/ledger-node for other parts (operator tests, tools): start a node
// in-process, read its configuration, or run a local multi-process cluster. The wire contract (blocks,
// messages, bodies, peer specs, settings) is @scriptorium/ledger-protocol's.

export { type AppOptions, buildApp } from './api/app.ts';
export { loadBackupConfig, readManifest, runBackupCommand, S3Client } from './backup/index.ts';
export { LocalCluster, type LocalClusterOptions, type LocalNode } from './cluster/local-cluster.ts';
export { loadConfig, type NodeConfig } from './config.ts';
export { ConfigError, NodeError } from './errors.ts';
export { createMetrics, type NodeMetrics } from './metrics.ts';
export { NODE_RUNTIME_ENV, NODE_RUNTIME_FLAGS } from './runtime-flags.ts';
export { type RunningNode, startNode } from './server.ts';
