import { addDays } from '../lib/time';

/** The grains the aggregates are kept at (migrations 007, 009): a day, an ISO week, a calendar month. */
export type Grain = 'day' | 'week' | 'month';
/** The grains kept as roll-ups of days (migrations 007, 009), whose latest period waits while a writer fills it (010, 011). */
export type RolledGrain = Exclude<Grain, 'day'>;
export const ROLLED: readonly RolledGrain[] = ['week', 'month'];

/**
 * The Monday of each day asked: a writer asks for the same few days for every row of a batch, and
 * two Date computations each were ~3 % of a replay's writer. Bounded: ~27 years of days.
 */
const mondays = new Map<string, string>();
const MONDAYS_KEPT = 10_000;

/**
 * The first day of the period a day belongs to: itself, the Monday of its ISO week (ISO 8601 weeks
 * run Monday to Sunday; 2027-01-01, a Friday, is in the week of Monday 2026-12-28), or the 1st of its month.
 */
export function periodStart(day: string, grain: Grain): string {
  if (grain === 'day') return day;
  if (grain === 'month') return `${day.slice(0, 8)}01`;
  let monday = mondays.get(day);
  if (monday === undefined) {
    if (mondays.size >= MONDAYS_KEPT) mondays.clear();
    const weekday = new Date(`${day}T00:00:00Z`).getUTCDay(); // 0 = Sunday
    mondays.set(day, (monday = addDays(day, -((weekday + 6) % 7))));
  }
  return monday;
}

/** The 1st of the month after the month of `day`. */
export function nextMonth(day: string): string {
  const [y, m] = [Number(day.slice(0, 4)), Number(day.slice(5, 7))];
  const year = (n: number): string => String(n).padStart(4, '0');
  return m === 12 ? `${year(y + 1)}-01-01` : `${year(y)}-${String(m + 1).padStart(2, '0')}-01`;
}

/** The last day of the period that starts on `start` (a periodStart). */
export function periodEnd(start: string, grain: Grain): string {
  if (grain === 'day') return start;
  if (grain === 'week') return addDays(start, 6);
  return addDays(nextMonth(start), -1);
}
