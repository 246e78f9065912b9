export {
  cacheDir,
  KUBE_BINARIES,
  type KubeBinary,
  kubeBinary,
  kubeBinDir,
  parseVersions,
  VERSIONS_FILE,
} from './binaries.ts';
export { type CertificateRequest, type ControlPlanePki, certificateConfig, generatePki } from './certs.ts';
export {
  DISABLED_CONTROLLERS,
  startTestControlPlane,
  type TestControlPlane,
  type TestControlPlaneOptions,
} from './control-plane.ts';
export { type KubeconfigInput, renderKubeconfig } from './kubeconfig.ts';
export { type ServiceAccountRef, serviceAccountKubeconfig } from './service-account.ts';
