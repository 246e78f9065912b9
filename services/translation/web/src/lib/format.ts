// Numbers, money and dates as the app shows them (en, the page's language).

const integer = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });

/** `12,345`. */
export const formatInt = (n: number): string => integer.format(n);

/** Money from micro-units of the plan's currency (USD): `$1.23`, `$0.0042` (four places under a cent). */
export function formatMicros(micros: number): string {
  const dollars = micros / 1_000_000;
  const digits = dollars !== 0 && Math.abs(dollars) < 0.01 ? 4 : 2;
  return `$${dollars.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

/** `23 Nov 2026, 14:05` in the browser's time zone; `never` for null. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });
}

/** `23 Nov` for a `YYYY-MM-DD` day (UTC). */
export function formatDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(d.getTime())) return day;
  return d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
}

/** `42 %` of `used` against `limit` (0 when there is no limit). */
export const percent = (used: number, limit: number): number => (limit > 0 ? Math.round((used / limit) * 100) : 0);
