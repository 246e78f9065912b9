// The one place the app talks HTTP: JSON in and out, the session cookie sent along (same origin), an API key when a
// call is made with one, and every non-2xx answer turned into an ApiError carrying the status, the service's
// `{error}` message, Retry-After and any validator issues.

/** A validator issue as the service reports it (translate, review edits). */
export interface Issue {
  itemId?: string;
  code: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  /** Seconds, from Retry-After (429). */
  readonly retryAfter: number | undefined;
  /** Validator issues of a 422. */
  readonly issues: Issue[];

  constructor(status: number, message: string, retryAfter?: number, issues: Issue[] = []) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.retryAfter = retryAfter;
    this.issues = issues;
  }
}

/** Status 0: the request never got an answer (offline, server down). */
export const NETWORK_ERROR = 0;

export interface CallOptions {
  /** Sends `Authorization: Bearer <apiKey>` instead of relying on the session cookie. */
  apiKey?: string;
  signal?: AbortSignal;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function errorFrom(status: number, headers: Headers, body: unknown): ApiError {
  const message = isRecord(body) && typeof body.error === 'string' ? body.error : `HTTP ${status}`;
  const retry = Number(headers.get('retry-after'));
  const issues = isRecord(body) && Array.isArray(body.issues) ? (body.issues as Issue[]) : [];
  return new ApiError(status, message, Number.isFinite(retry) && retry > 0 ? retry : undefined, issues);
}

async function send(method: string, path: string, body: unknown, opts: CallOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  try {
    return await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(NETWORK_ERROR, 'the service did not answer');
  }
}

/**
 * Calls the service and returns the parsed JSON body of a 2xx answer (undefined for an empty one).
 * @example const result = await call<TranslateResult>('POST', '/api/v1/translate', batch, { apiKey });
 */
export async function call<T>(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<T> {
  const res = await send(method, path, body, opts);
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) throw errorFrom(res.status, res.headers, parsed);
  return parsed as T;
}

/** A download: the answer's bytes and the file name its Content-Disposition gives. */
export async function download(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ blob: Blob; fileName: string | undefined }> {
  const res = await send(method, path, body, {});
  if (!res.ok) {
    let parsed: unknown;
    try {
      parsed = await res.json();
    } catch {
      parsed = undefined;
    }
    throw errorFrom(res.status, res.headers, parsed);
  }
  const disposition = res.headers.get('content-disposition') ?? '';
  const fileName = /filename="?([^";]+)"?/i.exec(disposition)?.[1];
  return { blob: await res.blob(), fileName };
}
