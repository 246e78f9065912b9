// Webhook signatures, the scheme Stripe uses: the header
//
//   Scriptorium-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
//
// signs the timestamp together with the exact bytes of the body, so a receiver detects both a
// changed body and a replay of an old one (it refuses timestamps outside its tolerance, 300 s by
// default). A receiver may accept several v1 values (one per secret while rotating).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Scriptorium-Signature';
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const DEFAULT_TOLERANCE_SECONDS = 300;

const hmac = (secret: string, timestamp: number, rawBody: string | Buffer) =>
  createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');

/** The header value for a body sent at `timestamp` (unix seconds). @example signWebhook('s', 1700000000, '{}') // 't=1700000000,v1=…' */
export function signWebhook(secret: string, timestamp: number, rawBody: string | Buffer): string {
  return `t=${timestamp},v1=${hmac(secret, timestamp, rawBody)}`;
}

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * What a receiver does: parse the header, refuse a timestamp outside the tolerance, and compare the
 * expected HMAC with each v1 value in constant time.
 */
export function verifyWebhook(
  secret: string,
  header: string | undefined,
  rawBody: string | Buffer,
  nowSeconds: number,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): SignatureCheck {
  if (!header) return { ok: false, reason: 'no signature header' };
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (timestamp === undefined) return { ok: false, reason: 'no timestamp' };
  if (signatures.length === 0) return { ok: false, reason: 'no v1 signature' };
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return { ok: false, reason: 'timestamp outside tolerance' };
  const expected = Buffer.from(hmac(secret, timestamp, rawBody), 'hex');
  let match = false;
  for (const s of signatures) if (timingSafeEqual(expected, Buffer.from(s, 'hex'))) match = true;
  return match ? { ok: true, timestamp } : { ok: false, reason: 'signature mismatch' };
}
