// What the translation service's OpenAPI 3.1 document says about itself; the document is built from the route specs
// by the shared HTTP layer (@scriptorium/http).
import { buildOpenApi as buildDocument, ErrorBody, type OpenApiInfo, type RouteSpec } from '@scriptorium/http';

export const API_VERSION = '1.0.0';

export const OPENAPI_INFO: OpenApiInfo = {
  title: 'Scriptorium translation service',
  version: API_VERSION,
  description:
    'Metered translation proxy: translation, quality judging, a public capped playground, GitHub sign-in and the ' +
    'session API (organizations, members, API keys, reviews, MFA, privacy), the billing webhook and operations endpoints.',
  // fastify's answers for a body it will not parse (the error plugin's messages), on every route that takes one.
  bodyResponses: {
    413: { description: 'request body too large', schema: ErrorBody },
    415: { description: 'unsupported content type: send application/json', schema: ErrorBody },
  },
  securitySchemes: {
    apiKey: {
      type: 'http',
      scheme: 'bearer',
      description: 'Authorization: Bearer <API_KEY> (sk_live_…)',
    },
    workerSecret: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <WORKER_SECRET>' },
    session: {
      type: 'apiKey',
      in: 'cookie',
      name: 'session-token',
      description:
        'The session cookie set by GET /auth/github/callback after GitHub sign-in. State-changing requests must come ' +
        'from the service’s own origin (Origin/Referer) or from no browser.',
    },
    providerSignature: {
      type: 'apiKey',
      in: 'header',
      name: 'Stripe-Signature',
      description: 't=<timestamp>,v1=<HMAC-SHA256 of "t." + raw body, hex> (several v1 accepted; 300 s tolerance)',
    },
  },
};

/**
 * The OpenAPI 3.1 document of the service's route specs.
 * @example const doc = buildOpenApi(app.routeSpecs, 'https://translate.example.com');
 */
export function buildOpenApi(specs: RouteSpec[], serverUrl?: string): Record<string, unknown> {
  return buildDocument(specs, { ...OPENAPI_INFO, ...(serverUrl ? { serverUrl } : {}) });
}
