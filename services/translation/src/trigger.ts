// `trigger worker|retention`: what the CronJobs run. One POST to the API with the worker secret; the answer's
// body is printed, and the exit code says whether it succeeded.
//
// A CronJob fires every minute, so it often meets the API in the middle of a rolling update: a Service address
// that still points at a pod gone a moment ago (connection refused or reset), or a proxy answering 502/503/504.
// Those are retried a few times with a growing pause; both operations are safe to repeat (the worker claims jobs,
// retention deletes what is past its period). Any other answer, 401 included, is final.

/** Pauses before the second, third and fourth attempt. */
export const TRIGGER_RETRY_DELAYS_MS = [1000, 2000, 4000] as const;
const RETRY_STATUSES = new Set([502, 503, 504]);

export interface TriggerResult {
  ok: boolean;
  status: number;
  body: string;
}

/**
 * POSTs `/api/<which>` on `baseUrl` with the secret, retrying what a rollout causes; `onRetry` hears why (a
 * status or an error code, never the secret).
 */
export async function trigger(
  which: 'worker' | 'retention',
  options: {
    baseUrl: string;
    secret: string;
    timeoutMs: number;
    delaysMs?: readonly number[];
    onRetry?: (reason: string, delayMs: number) => void;
  },
): Promise<TriggerResult> {
  const url = new URL(`/api/${which}`, options.baseUrl);
  const delays = options.delaysMs ?? TRIGGER_RETRY_DELAYS_MS;
  for (let attempt = 0; ; attempt++) {
    let reason: string;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.secret}` },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      const body = await response.text();
      if (!RETRY_STATUSES.has(response.status) || attempt >= delays.length)
        return { ok: response.ok, status: response.status, body };
      reason = `HTTP ${response.status}`;
    } catch (err) {
      // fetch() rejects with a TypeError whose cause is the socket's error (ECONNREFUSED, ECONNRESET, …).
      const cause = (err as { cause?: { code?: unknown } }).cause;
      const code = typeof cause?.code === 'string' ? cause.code : (err as Error).name;
      if (attempt >= delays.length || (err as Error).name === 'TimeoutError') throw err;
      reason = code;
    }
    const delay = delays[attempt] as number;
    options.onRetry?.(reason, delay);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
