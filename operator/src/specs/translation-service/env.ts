// The environment of translation pods: the contract with the image. Names are the image's own settings
// (`SettingName`, exported by the translation service with its settings schema), so a misspelt or unknown variable
// fails the type check, and a test fails if the operator sets a variable the image does not read.
import type { SettingName } from '@scriptorium/translation/settings';
import type { TranslationService, TranslationServiceSpec } from '../../api/index.ts';
import { databaseSecretRef } from './database.ts';
import { names } from './meta.ts';

export interface EnvVar {
  name: SettingName;
  value?: string;
  valueFrom?: { secretKeyRef: { name: string; key: string } };
}

const fromSecret = (name: SettingName, ref: { name: string; key: string }): EnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } },
});

/** Where the serve container reads the secrets it takes as files (`<NAME>_FILE`). */
export const SECRETS_DIR = '/var/run/secrets/scriptorium';

interface SecretFile {
  /** The setting that names the file. */
  env: SettingName;
  /** Volume name and the file's directory under SECRETS_DIR. */
  volume: string;
  ref: { name: string; key: string };
}

/**
 * The secrets the serve container reads from mounted files: the OAuth client secret, the billing webhook signing
 * secret and the MFA encryption key (the generated session Secret). One volume each, one key each.
 */
export function secretFiles(ts: TranslationService, spec: TranslationServiceSpec): SecretFile[] {
  const files: SecretFile[] = [
    { env: 'MFA__ENCRYPTION_KEY_FILE', volume: 'mfa-key', ref: { name: names(ts).sessionSecret, key: 'secret' } },
  ];
  if (spec.oauth)
    files.push({ env: 'OAUTH__CLIENT_SECRET_FILE', volume: 'oauth-client', ref: spec.oauth.clientSecretRef });
  if (spec.billing)
    files.push({ env: 'BILLING__WEBHOOK_SECRET_FILE', volume: 'billing-webhook', ref: spec.billing.webhookSecretRef });
  return files;
}

const secretPath = (f: SecretFile) => `${SECRETS_DIR}/${f.volume}/${f.ref.key}`;

/** The volumes and mounts of `secretFiles` (read-only; mode 0440, group-readable through the pod's fsGroup). */
export function secretMounts(ts: TranslationService, spec: TranslationServiceSpec) {
  const files = secretFiles(ts, spec);
  return {
    volumes: files.map((f) => ({
      name: f.volume,
      secret: { secretName: f.ref.name, items: [{ key: f.ref.key, path: f.ref.key }], defaultMode: 0o440 },
    })),
    volumeMounts: files.map((f) => ({ name: f.volume, mountPath: `${SECRETS_DIR}/${f.volume}`, readOnly: true })),
  };
}

/** The Service URL inside the cluster. */
export function serviceUrl(ts: TranslationService): string {
  return `http://${names(ts).service}.${ts.metadata.namespace ?? 'default'}.svc`;
}

/** Where clients reach the API: the Ingress host when there is one, else the in-cluster Service. */
export function publicUrl(ts: TranslationService, spec: TranslationServiceSpec): string {
  if (spec.ingress) return `${spec.ingress.tlsSecretName ? 'https' : 'http'}://${spec.ingress.host}`;
  return serviceUrl(ts);
}

/** Hops the service trusts behind the operator's Ingress: the ingress controller itself. */
export const INGRESS_TRUST_PROXY = '1';

/**
 * TRUST_PROXY of the `serve` container: `spec.trustProxy` when set; else one hop (the ingress controller) when
 * the operator exposes the service through an Ingress; else unset (the image trusts no proxy).
 */
export function trustProxyOf(spec: TranslationServiceSpec): string | undefined {
  return spec.trustProxy ?? (spec.ingress ? INGRESS_TRUST_PROXY : undefined);
}

/** Environment of the `serve` container (the contract with the image: operator/README.md). */
export function serveEnv(ts: TranslationService, spec: TranslationServiceSpec): EnvVar[] {
  const n = names(ts);
  const env: EnvVar[] = [
    { name: 'NODE_ENV', value: 'production' },
    { name: 'HOST', value: '0.0.0.0' },
    { name: 'PORT', value: '3000' },
    fromSecret('DATABASE_URL', databaseSecretRef(ts, spec)),
    fromSecret('WORKER_SECRET', { name: n.workerSecret, key: 'secret' }),
    { name: 'PROVIDER__KIND', value: spec.provider.kind },
  ];
  if (spec.provider.baseUrl) env.push({ name: 'PROVIDER__BASE_URL', value: spec.provider.baseUrl });
  if (spec.provider.models.cheap) env.push({ name: 'PROVIDER__MODELS__CHEAP', value: spec.provider.models.cheap });
  if (spec.provider.models.top) env.push({ name: 'PROVIDER__MODELS__TOP', value: spec.provider.models.top });
  if (spec.provider.apiKeySecretRef) env.push(fromSecret('PROVIDER__API_KEY', spec.provider.apiKeySecretRef));
  if (spec.plans.length > 0) env.push({ name: 'PLANS', value: JSON.stringify(spec.plans) });
  env.push({ name: 'PUBLIC_BASE_URL', value: spec.publicUrl ?? publicUrl(ts, spec) });
  if (spec.oauth) {
    env.push({ name: 'OAUTH__CLIENT_ID', value: spec.oauth.clientId });
    if (spec.oauth.authorizeUrl) env.push({ name: 'OAUTH__AUTHORIZE_URL', value: spec.oauth.authorizeUrl });
    if (spec.oauth.tokenUrl) env.push({ name: 'OAUTH__TOKEN_URL', value: spec.oauth.tokenUrl });
    if (spec.oauth.apiUrl) env.push({ name: 'OAUTH__API_URL', value: spec.oauth.apiUrl });
  }
  for (const f of secretFiles(ts, spec)) env.push({ name: f.env, value: secretPath(f) });
  if (spec.rateLimits.length > 0) env.push({ name: 'RATE_LIMITS', value: JSON.stringify(spec.rateLimits) });
  const trust = trustProxyOf(spec);
  if (trust !== undefined) env.push({ name: 'TRUST_PROXY', value: trust });
  return env;
}

/** Environment of the `migrate` Job: the database and nothing else. */
export function migrateEnv(ts: TranslationService, spec: TranslationServiceSpec): EnvVar[] {
  return [{ name: 'NODE_ENV', value: 'production' }, fromSecret('DATABASE_URL', databaseSecretRef(ts, spec))];
}

/** Environment of the `trigger worker|retention` CronJobs: where to POST, with the worker secret. */
export function triggerEnv(ts: TranslationService): EnvVar[] {
  return [
    { name: 'NODE_ENV', value: 'production' },
    { name: 'TRANSLATION_URL', value: `${serviceUrl(ts)}:80` },
    fromSecret('WORKER_SECRET', { name: names(ts).workerSecret, key: 'secret' }),
  ];
}

/**
 * Every Secret key the spec references (the reconciler checks they exist before rolling out). A CloudNativePG
 * cluster's own Secret is not among them: the reconciler waits for the cluster instead.
 */
export function referencedSecretKeys(
  spec: TranslationServiceSpec,
): Array<{ field: string; name: string; key: string }> {
  const refs: Array<{ field: string; name: string; key: string }> = [];
  if (spec.database.secretRef) refs.push({ field: 'spec.database.secretRef', ...spec.database.secretRef });
  if (spec.provider.apiKeySecretRef)
    refs.push({ field: 'spec.provider.apiKeySecretRef', ...spec.provider.apiKeySecretRef });
  if (spec.oauth) refs.push({ field: 'spec.oauth.clientSecretRef', ...spec.oauth.clientSecretRef });
  if (spec.billing) refs.push({ field: 'spec.billing.webhookSecretRef', ...spec.billing.webhookSecretRef });
  return refs;
}
