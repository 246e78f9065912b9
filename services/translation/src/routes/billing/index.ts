// POST /api/billing/webhook — the payment provider's events (registered under /api/billing). The body is read raw:
// the signature covers its exact bytes.

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { handleBillingWebhook } from '../../domain/billing.ts';
import { BillingReceived } from '../../http/schemas.ts';
import { r429, rateLimitHeaders } from '../responses.ts';

export default async function billingRoutes(app: FastifyInstance): Promise<void> {
  // Encapsulated: only this plugin's routes keep JSON bodies as raw bytes.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: 256 * 1024 }, (_request, body, done) =>
    done(null, body),
  );
  const url = `${app.prefix}/webhook`;
  route(
    app,
    {
      method: 'POST',
      url: '/webhook',
      operationId: 'billingWebhook',
      summary: 'The payment provider’s events (Stripe’s signature scheme)',
      description:
        '`Stripe-Signature: t=…,v1=…` — HMAC-SHA256 of `t.` + the raw body, several `v1` accepted, 300 s tolerance; ' +
        'any failure is 400, and so is every request when BILLING__WEBHOOK_SECRET is unset. Idempotent by event id. ' +
        '`customer.subscription.created|updated|deleted`, `invoice.paid` and `invoice.payment_failed` update the ' +
        'organization (bound by the subscription’s `metadata.orgId`, then by customer id): plan (by price id), status ' +
        'and so its quota. Other event types are acknowledged and ignored.',
      tags: ['billing'],
      security: 'providerSignature',
      responses: {
        200: { description: 'received', schema: BillingReceived, headers: rateLimitHeaders },
        400: { description: 'invalid signature or body', schema: z.object({ error: z.string() }) },
        429: r429,
      },
    },
    {
      onRequest: app.rateLimits.hook(
        url,
        [{ name: 'billing:ip', limit: app.rateLimits.perMinute(url, 600), windowMs: 60_000 }],
        (req) => req.ip,
      ),
    },
    async (request) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.headers['stripe-signature'];
      return handleBillingWebhook(app, raw, typeof signature === 'string' ? signature : undefined, request.id);
    },
  );
}
