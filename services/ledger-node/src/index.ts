// Public surface of @scriptorium/ledger-node for other parts (operator tests, tools): start a node
// in-process, or read its configuration and runtime flags. Local multi-process clusters are
// @scriptorium/harness's; the wire contract (blocks, messages, bodies, peer specs, settings) is
// @scriptorium/ledger-protocol's.

export { type AppOptions, buildApp } from './api/app.ts';
export { loadBackupConfig, readManifest, runBackupCommand, S3Client } from './backup/index.ts';
export { loadConfig, type NodeConfig } from './config.ts';
export { ConfigError, NodeError } from './errors.ts';
export { createMetrics, type NodeMetrics } from './metrics.ts';
export { NODE_RUNTIME_ENV, NODE_RUNTIME_FLAGS } from './runtime-flags.ts';
export { type RunningNode, startNode } from './server.ts';
