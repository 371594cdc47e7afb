/** Times are stored and served as fixed-width UTC ISO strings, so text order is time order. */
export function toUtcIso(value: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new RangeError(`not a representable time: ${value}`);
  return new Date(ms).toISOString();
}

/** The UTC calendar day (YYYY-MM-DD) of a normalized ISO time. */
export function utcDay(iso: string): string {
  return iso.slice(0, 10);
}

/** day + n days, in UTC, as YYYY-MM-DD. */
export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}
