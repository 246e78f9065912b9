// Retry delays for every part that retries: the operator's work queue and watches, the ledger node's broker reads and
// notification deliveries, the translation service's jobs. One rule, so a tuning of one does not drift from the others.

/** The exponent stops growing here: 2^30 × any sensible base is already past every cap. */
const MAX_EXPONENT = 30;

/**
 * The capped exponential delay before retry number `attempt` (0 for the first retry): min(cap, base × 2^attempt).
 * @example exponentialDelay(3, 200, 5000) // 1600
 */
export function exponentialDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(0, attempt), MAX_EXPONENT));
}

/**
 * Full-jitter exponential backoff (the AWS architecture blog's "full jitter"): random(0, exponentialDelay), so many
 * clients that failed together do not retry together.
 * @example fullJitterDelay(3, 200, 5000, Math.random) // somewhere in [0, 1600)
 */
export function fullJitterDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  return Math.floor(random() * exponentialDelay(attempt, baseMs, maxMs));
}
