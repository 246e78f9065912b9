export {
  chainIdOf,
  GENESIS_FILE,
  genesisConfigMap,
  genesisFileContent,
  genesisTimeMs,
  genesisValidators,
} from './genesis.ts';
export {
  APP_NAME,
  CLUSTER_LABEL,
  childMeta,
  clusterNames,
  clusterPodSelector,
  GENESIS_VALIDATORS_ANNOTATION,
  labels,
  MANAGED_BY,
  MANAGED_SELECTOR,
  ownerReference,
  PUBLIC_KEY_ANNOTATION,
  selectorString,
  VALIDATOR_LABEL,
  validatorNames,
  validatorPodSelector,
} from './meta.ts';
export {
  clientService,
  externalNodeId,
  NODE_PORT,
  PEERS_KEY,
  peerList,
  peerSpec,
  peersConfigMap,
  validatorAddress,
  validatorHost,
  validatorService,
  validatorUrl,
} from './network.ts';
export {
  caSecret,
  KEY_FILE,
  keySecret,
  type Pem,
  randomClusterToken,
  secretValue,
  TOKEN_FILE,
  tlsSecret,
  tokenSecret,
  validatorDnsNames,
} from './secrets.ts';
export { DEFAULT_RESOURCES, PATHS, statefulSetReady, validatorEnv, validatorStatefulSet } from './statefulset.ts';
export { desiredValidatorNames, desiredValidators, quorumOf, validatorIndex, validatorName } from './validators.ts';
