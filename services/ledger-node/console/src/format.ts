// Numbers and times for people: thousands separators, relative times, short hashes.

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export const num = (n: number): string => integer.format(n);

/** "3 seconds ago", "in 2 minutes", "yesterday". */
export function ago(ms: number, now = Date.now()): string {
  const s = Math.round((ms - now) / 1000);
  const abs = Math.abs(s);
  if (abs < 60) return relative.format(s, 'second');
  if (abs < 3600) return relative.format(Math.round(s / 60), 'minute');
  if (abs < 86_400) return relative.format(Math.round(s / 3600), 'hour');
  return relative.format(Math.round(s / 86_400), 'day');
}

export const when = (ms: number): string => new Date(ms).toLocaleString();

/** The first characters of a hash or key, with an ellipsis. */
export const short = (hex: string, n = 10): string => (hex.length > n ? `${hex.slice(0, n)}…` : hex);
