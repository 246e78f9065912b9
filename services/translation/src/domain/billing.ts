// The payment provider's webhook, in Stripe's scheme: `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`,
// each v1 an HMAC-SHA256 of `<t>.<raw body>` under the endpoint's signing secret; any v1 may match (secret rotation);
// the timestamp must be within 300 s. Events are idempotent by id: the id is recorded in the same transaction as the
// change it makes, so a redelivery changes nothing.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { badRequest } from '../errors.ts';
import { audit } from './audit.ts';

export const SIGNATURE_TOLERANCE_S = 300;

/**
 * Whether `header` signs `rawBody` with `secret` at a time within the tolerance of `nowMs`.
 * @example verifyStripeSignature(rawBody, request.headers['stripe-signature'], secret, Date.now())
 */
export function verifyStripeSignature(
  rawBody: Buffer,
  header: string | undefined,
  secret: string,
  nowMs: number,
): boolean {
  if (!header || header.length > 4096) return false;
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && value && /^[0-9a-f]{64}$/i.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  if (Math.abs(nowMs / 1000 - timestamp) > SIGNATURE_TOLERANCE_S) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
  let ok = false;
  for (const s of signatures) ok = timingSafeEqual(s, expected) || ok; // compare every one: no early exit
  return ok;
}

const Event = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

const Subscription = z.object({
  id: z.string(),
  customer: z.string(),
  status: z.string().max(64),
  current_period_end: z.number().int().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  items: z
    .object({
      data: z.array(
        z.object({ price: z.object({ id: z.string() }).optional(), current_period_end: z.number().int().optional() }),
      ),
    })
    .optional(),
});
const Invoice = z.object({ customer: z.string() });

export interface WebhookOutcome {
  received: true;
  duplicate: boolean;
  handled: boolean;
}

const SUBSCRIPTION_EVENTS = new Set([
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
]);
const INVOICE_STATUS: Record<string, string> = { 'invoice.paid': 'active', 'invoice.payment_failed': 'past_due' };

/**
 * Verifies and applies one webhook delivery; 400 for a bad signature or body (and for every request when no
 * signing secret is configured). Unknown event types are acknowledged and ignored.
 */
export async function handleBillingWebhook(
  ctx: AppContext,
  rawBody: Buffer,
  signature: string | undefined,
  requestId?: string,
): Promise<WebhookOutcome> {
  const secret = ctx.config.billingWebhookSecret;
  if (!secret || !verifyStripeSignature(rawBody, signature, secret, ctx.now()))
    throw badRequest('invalid webhook signature');
  let parsed: z.infer<typeof Event>;
  try {
    parsed = Event.parse(JSON.parse(rawBody.toString('utf8')));
  } catch {
    throw badRequest('invalid webhook body');
  }
  const object = parsed.data.object;
  return ctx.database.db.transaction(async (tx) => {
    const rows = async <T>(query: ReturnType<typeof sql>) =>
      ((await tx.execute(query)) as unknown as { rows: T[] }).rows;
    let orgId: string | null = null;
    let customer: string | null = null;
    let update: ReturnType<typeof sql> | null = null;
    if (SUBSCRIPTION_EVENTS.has(parsed.type)) {
      const sub = Subscription.safeParse(object);
      if (!sub.success) throw badRequest('invalid subscription object');
      customer = sub.data.customer;
      const byMetadata = sub.data.metadata?.orgId;
      const [org] = await rows<{ id: string }>(
        byMetadata
          ? sql`SELECT id FROM organizations WHERE id = ${byMetadata} FOR UPDATE`
          : sql`SELECT id FROM organizations WHERE external_customer_id = ${customer} FOR UPDATE`,
      );
      orgId = org?.id ?? null;
      const item = sub.data.items?.data[0];
      const periodEnd = sub.data.current_period_end ?? item?.current_period_end;
      const deleted = parsed.type === 'customer.subscription.deleted';
      const [plan] = deleted
        ? [{ id: ctx.config.defaultPlan }]
        : item?.price
          ? await rows<{ id: string }>(sql`SELECT id FROM plans WHERE external_price_id = ${item.price.id}`)
          : [];
      if (orgId) {
        update = sql`UPDATE organizations
             SET external_customer_id = ${customer}, subscription_status = ${deleted ? 'canceled' : sub.data.status},
                 current_period_end = ${periodEnd ? new Date(periodEnd * 1000).toISOString() : null},
                 plan_id = COALESCE(${plan?.id ?? null}, plan_id)
           WHERE id = ${orgId}`;
      }
    } else if (parsed.type in INVOICE_STATUS) {
      const invoice = Invoice.safeParse(object);
      if (!invoice.success) throw badRequest('invalid invoice object');
      customer = invoice.data.customer;
      const [org] = await rows<{ id: string }>(
        sql`SELECT id FROM organizations WHERE external_customer_id = ${customer} FOR UPDATE`,
      );
      orgId = org?.id ?? null;
      if (orgId)
        update = sql`UPDATE organizations SET subscription_status = ${INVOICE_STATUS[parsed.type]!} WHERE id = ${orgId}`;
    }
    const recorded = await rows<{ id: string }>(sql`
      INSERT INTO billing_events (id, type, org_id, customer_ref) VALUES (${parsed.id}, ${parsed.type}, ${orgId}, ${customer})
      ON CONFLICT (id) DO NOTHING RETURNING id`);
    if (recorded.length === 0) return { received: true as const, duplicate: true, handled: false };
    if (!update) return { received: true as const, duplicate: false, handled: false };
    await tx.execute(update);
    await audit(tx, {
      actorUserId: null,
      actorKind: 'system',
      orgId,
      action: parsed.type.startsWith('invoice.') ? 'billing.invoice' : 'billing.subscription',
      target: parsed.id,
      requestId: requestId ?? null,
      meta: { type: parsed.type },
    });
    return { received: true as const, duplicate: false, handled: true };
  });
}
