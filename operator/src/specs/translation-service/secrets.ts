import { randomBytes } from 'node:crypto';
import type { TranslationService } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { childMeta, names } from './meta.ts';

/** 256 random bits, base64url. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The generated worker and session Secrets. The reconciler only creates them when absent and never
 * rewrites them, so a value is never rotated silently. `token` is injected so tests are deterministic.
 */
export function generatedSecrets(ts: TranslationService, token: () => string = randomToken): KubeObject[] {
  const n = names(ts);
  return [n.workerSecret, n.sessionSecret].map((name) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      ...childMeta(ts, name, 'secret'),
      annotations: { 'scriptorium.dev/generated': 'true', 'scriptorium.dev/rotation': 'manual (delete the Secret)' },
    },
    type: 'Opaque',
    data: { secret: Buffer.from(token()).toString('base64') },
  }));
}
