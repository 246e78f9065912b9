/** Why an upstream call failed. Only the kind is recorded: never the key, the prompt or the text. */
export type UpstreamFailure = 'status' | 'network' | 'timeout' | 'aborted' | 'malformed' | 'missing_items';

/**
 * Any failure of the translation upstream: non-2xx status, network error, timeout, malformed or incomplete reply.
 * The API answers 502 and charges nothing. The message never contains the API key or customer text.
 *
 * @example
 * try { await provider.translate(req, { signal }); } catch (e) { if (e instanceof UpstreamError) reply502(e.reason); }
 */
export class UpstreamError extends Error {
  readonly code = 'upstream_error';
  readonly reason: UpstreamFailure;
  /** HTTP status the upstream answered, when it answered one. */
  readonly upstreamStatus: number | undefined;
  /** Upstream asked us to retry after this many seconds (429/503 `retry-after`), when it said so. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    reason: UpstreamFailure,
    message: string,
    extra: { upstreamStatus?: number; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'UpstreamError';
    this.reason = reason;
    this.upstreamStatus = extra.upstreamStatus;
    this.retryAfterSeconds = extra.retryAfterSeconds;
  }
}
