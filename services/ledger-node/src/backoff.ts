/**
 * Full-jitter exponential backoff (the AWS architecture blog's "full jitter"):
 * random(0, min(cap, base × 2^attempt)). Used by broker reads and notification deliveries.
 * @example backoffDelay(3, 200, 5000, Math.random) // somewhere in [0, 1600)
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  return Math.floor(random() * Math.min(maxMs, baseMs * 2 ** attempt));
}
