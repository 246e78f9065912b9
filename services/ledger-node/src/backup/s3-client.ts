// A small object-storage client over undici (the Simple Storage Service API): path-style URLs
// (`<endpoint>/<bucket>/<key>`, what every compatible store serves), signature version 4 headers (sigv4.ts), an optional CA for a private endpoint, bounded time per call. Errors name the
// operation, the key and the store's own error code, never the credentials.
import { Agent, request } from 'undici';
import { type Credentials, sha256Hex, signRequest, uriEncode } from './sigv4.ts';

export interface S3Options {
  /** `https://host:port` (or http:// for a local store). */
  endpoint: string;
  bucket: string;
  region?: string;
  credentials: Credentials;
  /** PEM CA bundle trusted for the endpoint (besides the system's). */
  ca?: string | Buffer;
  timeoutMs?: number;
  now?: () => Date;
}

export class S3Error extends Error {
  readonly status: number;
  readonly s3Code: string;
  constructor(message: string, status: number, s3Code: string) {
    super(message);
    this.name = 'S3Error';
    this.status = status;
    this.s3Code = s3Code;
  }
}

/** `<Code>` and `<Message>` of the store's XML error body. */
function errorOf(body: string): { code: string; message: string } {
  const code = /<Code>([^<]{1,100})<\/Code>/.exec(body)?.[1] ?? '';
  const message = /<Message>([^<]{1,300})<\/Message>/.exec(body)?.[1] ?? '';
  return { code, message };
}

export class S3Client {
  readonly bucket: string;
  readonly endpoint: URL;
  readonly #region: string;
  readonly #credentials: Credentials;
  readonly #agent: Agent;
  readonly #timeoutMs: number;
  readonly #now: () => Date;

  constructor(options: S3Options) {
    this.endpoint = new URL(options.endpoint);
    if (this.endpoint.protocol !== 'https:' && this.endpoint.protocol !== 'http:')
      throw new RangeError(`S3 endpoint must be http(s)://, got ${this.endpoint.protocol}`);
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(options.bucket))
      throw new RangeError(`not an S3 bucket name: ${options.bucket.slice(0, 80)}`);
    this.bucket = options.bucket;
    this.#region = options.region ?? 'us-east-1';
    this.#credentials = options.credentials;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#now = options.now ?? (() => new Date());
    this.#agent = new Agent({ connections: 8, connect: options.ca ? { ca: options.ca } : {} });
  }

  /** The object's bytes, or undefined when it does not exist. */
  async get(key: string): Promise<Buffer | undefined> {
    const res = await this.#call('GET', key);
    if (res.status === 404) return undefined;
    return res.body;
  }

  async put(key: string, body: Uint8Array, contentType = 'application/octet-stream'): Promise<void> {
    await this.#call('PUT', key, body, { 'content-type': contentType });
  }

  async delete(key: string): Promise<void> {
    await this.#call('DELETE', key);
  }

  /** Creates the bucket; an existing one of ours is fine. */
  async createBucket(): Promise<void> {
    const res = await this.#call('PUT', undefined, undefined, {}, [409]);
    if (res.status === 409 && res.code !== 'BucketAlreadyOwnedByYou' && res.code !== 'BucketAlreadyExists')
      throw new S3Error(`create bucket ${this.bucket}: ${res.code}`, res.status, res.code);
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  async #call(
    method: string,
    key: string | undefined,
    body?: Uint8Array,
    headers: Record<string, string> = {},
    allowed: number[] = [],
  ): Promise<{ status: number; body: Buffer; code: string }> {
    const base = this.endpoint.pathname.replace(/\/$/, '');
    const path = `${base}/${this.bucket}${key === undefined ? '' : `/${uriEncode(key, true)}`}`;
    const url = new URL(path, this.endpoint);
    const payload = body ?? new Uint8Array(0);
    const signed = signRequest({
      method,
      url,
      headers: { ...headers, ...(body ? { 'content-length': String(payload.length) } : {}) },
      payloadHash: sha256Hex(payload),
      region: this.#region,
      credentials: this.#credentials,
      now: this.#now(),
    });
    const what = `${method} s3://${this.bucket}/${key ?? ''}`;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, {
        method: method as 'GET',
        headers: signed,
        body: body ? payload : undefined,
        dispatcher: this.#agent,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
    } catch (err) {
      throw new S3Error(`${what}: ${(err as Error).message}`, 0, 'Unreachable');
    }
    const bytes = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode < 300) return { status: res.statusCode, body: bytes, code: '' };
    const { code, message } = errorOf(bytes.toString('utf8'));
    if ((method === 'GET' && res.statusCode === 404 && code !== 'NoSuchBucket') || allowed.includes(res.statusCode))
      return { status: res.statusCode, body: bytes, code };
    throw new S3Error(`${what}: ${res.statusCode} ${code}${message ? ` (${message})` : ''}`, res.statusCode, code);
  }
}
