// AWS Signature Version 4 for S3 (header form, path-style URLs): what every S3-compatible store checks. The
// backup needs four calls (PUT, GET, DELETE of an object and a bucket's creation), so the signing is here rather
// than a whole SDK in the node's image (docs/decisions.md). Tested against AWS's published example and a real
// S3-compatible server.
import { createHash, createHmac } from 'node:crypto';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface SignInput {
  method: string;
  url: URL;
  /** Headers to sign, lower-case names (host is added). */
  headers: Record<string, string>;
  /** Hex SHA-256 of the body (`UNSIGNED-PAYLOAD` is allowed by S3 but not used here). */
  payloadHash: string;
  region: string;
  credentials: Credentials;
  now: Date;
  service?: string;
}

/** SHA-256 hex of bytes or text. */
export const sha256Hex = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');

const hmac = (key: Uint8Array | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();

/** RFC 3986 unreserved characters stay, everything else is %XX (upper case), as SigV4 wants. */
export function uriEncode(text: string, keepSlash: boolean): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(c) || (keepSlash && c === '/')) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** `20130524T000000Z` */
export const amzDate = (d: Date): string =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/**
 * The headers to send: the given ones plus host, x-amz-date, x-amz-content-sha256 and Authorization.
 * @example signRequest({method: 'GET', url, headers: {}, payloadHash: sha256Hex(''), region, credentials, now})
 */
export function signRequest(input: SignInput): Record<string, string> {
  const service = input.service ?? 's3';
  const date = amzDate(input.now);
  const day = date.slice(0, 8);
  const headers: Record<string, string> = {
    ...input.headers,
    host: input.url.host,
    'x-amz-content-sha256': input.payloadHash,
    'x-amz-date': date,
  };
  const names = Object.keys(headers)
    .map((n) => n.toLowerCase())
    .sort();
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const canonicalHeaders = names.map((n) => `${n}:${String(lower[n]).trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const query = [...input.url.searchParams.entries()]
    .map(([k, v]) => [uriEncode(k, false), uriEncode(v, false)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  // S3 signs the path encoded once, each segment as RFC 3986 wants (URL leaves some characters such as '$' as
  // they are); the caller sends the path in this same form.
  const path = (input.url.pathname || '/')
    .split('/')
    .map((segment) => uriEncode(decodeURIComponent(segment), false))
    .join('/');
  const canonical = [input.method, path, query, canonicalHeaders, signedHeaders, input.payloadHash].join('\n');
  const scope = `${day}/${input.region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, sha256Hex(canonical)].join('\n');
  const key = hmac(
    hmac(hmac(hmac(`AWS4${input.credentials.secretAccessKey}`, day), input.region), service),
    'aws4_request',
  );
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${input.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}
