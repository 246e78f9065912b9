// Webhook delivery: a POST of the event as JSON with the signature header (signature.ts), the
// idempotency key (the record id: a receiver that already has it can drop the repeat) and the
// event type. Any 2xx is success; anything else, or no answer in time, is a DeliveryError the
// dispatcher retries with backoff.
import { Agent, request } from 'undici';
import type { TamperEvent } from './event.ts';
import { IDEMPOTENCY_HEADER, SIGNATURE_HEADER, signWebhook } from './signature.ts';
import { DeliveryError, type Sink } from './sink.ts';

export const EVENT_HEADER = 'Scriptorium-Event';

export interface WebhookOptions {
  url: string;
  /** HMAC key; without one the request carries no signature header. Never logged. */
  secret?: string | undefined;
  timeoutMs?: number;
  /** Extra CA for HTTPS receivers (PEM). */
  ca?: Buffer | undefined;
  now?: () => number;
}

/** The sink name of a webhook: its URL without credentials or query (which may carry tokens). */
export function webhookName(url: string): string {
  const u = new URL(url);
  return `webhook:${u.protocol}//${u.host}${u.pathname}`;
}

export function createWebhookSink(options: WebhookOptions): Sink {
  const name = webhookName(options.url);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const now = options.now ?? Date.now;
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    connectTimeout: timeoutMs,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    ...(options.ca ? { connect: { ca: options.ca } } : {}),
  });
  return {
    name,
    async deliver(event: TamperEvent) {
      const body = JSON.stringify(event);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'scriptorium-ledger',
        [IDEMPOTENCY_HEADER]: event.id,
        [EVENT_HEADER]: event.type,
      };
      if (options.secret) headers[SIGNATURE_HEADER] = signWebhook(options.secret, Math.floor(now() / 1000), body);
      let status: number;
      try {
        const res = await request(options.url, { method: 'POST', headers, body, dispatcher: agent });
        status = res.statusCode;
        await res.body.dump();
      } catch (err) {
        throw new DeliveryError(name, (err as Error & { code?: string }).code ?? (err as Error).message);
      }
      if (status < 200 || status >= 300) throw new DeliveryError(name, `answered ${status}`);
    },
    close: () => agent.close(),
  };
}
