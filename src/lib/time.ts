/** Times are stored and served as fixed-width UTC ISO strings, so text order is time order. */
export function toUtcIso(value: string): string {
  // Nearly every event time is already in that form: returning it skips a Date.parse and a
  // toISOString (~16 % of a decode).
  if (isCanonicalUtcIso(value)) return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new RangeError(`not a representable time: ${value}`);
  return new Date(ms).toISOString();
}

/** The digit at i (0-9), or a value outside 0-9 (NaN past the end). */
function digit(s: string, i: number): number {
  return s.charCodeAt(i) - 48;
}

function digits(s: string, i: number, n: number): number {
  let v = 0;
  for (let k = i; k < i + n; k++) {
    const d = digit(s, k);
    if (!(d >= 0 && d <= 9)) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * Is s `YYYY-MM-DDTHH:MM:SS.sssZ` (uppercase T and Z) naming a real instant, so that
 * `new Date(Date.parse(s)).toISOString() === s`? Date.parse rolls an impossible day or 24:00 over
 * into the next (Feb 30 -> Mar 2), and toISOString writes years 0-9999 with 4 digits, so the
 * calendar is checked here and the rest is left to Date.
 */
export function isCanonicalUtcIso(s: string): boolean {
  if (s.length !== 24) return false;
  if (
    s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 ||
    s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 46 || s.charCodeAt(23) !== 90
  ) {
    return false;
  }
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  const ms = digits(s, 20, 3);
  if (year < 0 || ms < 0 || month < 1 || month > 12 || day < 1) return false;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return day <= days;
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
