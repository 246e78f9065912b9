export * from './common.ts';
export * from './ledger-cluster.ts';
export * from './translation-service.ts';
