import type { TranslationService, TranslationServiceSpecInput } from '../../api/index.ts';

/** A TranslationService as the API server would hand it to the operator (test fixture). */
export function fixture(spec: Partial<TranslationServiceSpecInput> = {}, name = 'web'): TranslationService {
  return {
    apiVersion: 'scriptorium.dev/v1alpha1',
    kind: 'TranslationService',
    metadata: { name, namespace: 'shop', uid: '5f0c1a2e-0000-4000-8000-000000000001', generation: 1 },
    spec: {
      image: 'scriptorium/translation:1.2.0',
      database: { secretRef: { name: 'shop-db-app', key: 'uri' } },
      ...spec,
    },
  };
}

export const fullSpec: Partial<TranslationServiceSpecInput> = {
  replicas: 3,
  provider: {
    kind: 'openai',
    baseUrl: 'http://vllm.models.svc:8000/v1',
    apiKeySecretRef: { name: 'llm', key: 'api-key' },
    models: { cheap: 'small', top: 'large' },
  },
  plans: [{ name: 'pro', tokensPerPeriod: 1_000_000, dailyBudgetCents: 500 }],
  rateLimits: [{ route: '/api/v1/translate', requestsPerMinute: 600 }],
  oauth: { clientId: 'gh-client', clientSecretRef: { name: 'oauth', key: 'secret' } },
  billing: { webhookSecretRef: { name: 'billing', key: 'whsec' } },
  ingress: { host: 'translate.example.com', className: 'nginx', tlsSecretName: 'translate-tls' },
  resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '1Gi' } },
};
