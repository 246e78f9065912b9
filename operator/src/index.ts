export * from './api/index.ts';
export { loadConfig } from './config.ts';
export { FINALIZER, TranslationServiceController } from './controllers/translation-service/index.ts';
export { buildCrds, renderCrdFiles } from './crd/index.ts';
export * from './errors.ts';
export { KubeClient } from './kube/index.ts';
export { createMetrics } from './metrics.ts';
export { Operator, type OperatorOptions } from './operator.ts';
export { keysCreateArgs } from './plugin/keys.ts';
