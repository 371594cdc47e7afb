// The rules a query's dates follow beyond each value's own schema: a range's ends in order and at
// most a year apart, a range given by one end staying within the days the API accepts, and the
// period it is compared with (given, or the previous one) likewise. Split from params.ts, which
// reads and validates the parameters one by one; these rules look at several together.
import type { QueryArgs } from '../../readmodels/params.gen';
import { addDays } from '../../lib/time';
import { httpError, shown } from './errors';

/** The longest range start_date..end_date may span, both days included (a leap year). */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

/**
 * The days a date parameter accepts (schemas/params/start_date.json and end_date.json: their pattern
 * and x-accepts say the same; test/readmodels/date-ranges.test.ts checks that they agree).
 */
export const FIRST_DAY = '1970-01-01';
export const LAST_DAY = '8999-12-31';

/**
 * Both ends given: start on or before end, at most MAX_RANGE_DAYS days. The 400 names start_date.
 * One end alone: the range is the endpoint's `days` days from or to it (windows.ts requestedWindow),
 * which must stay within the days the parameters accept (a window_end of 9000-01-06 is none the API
 * could be asked for): the 400 names the end given.
 */
function checkRange(start: string | null, end: string | null, days: number): void {
  if (start !== null && end !== null) {
    const span = (Date.parse(end) - Date.parse(start)) / DAY_MS + 1;
    if (span < 1) throw httpError('invalid_parameter', `start_date must be on or before end_date (${end}), got ${shown(start)}`);
    if (span > MAX_RANGE_DAYS) {
      throw httpError('invalid_parameter', `start_date must be at most ${MAX_RANGE_DAYS - 1} days before end_date (${end}: a range of at most ${MAX_RANGE_DAYS} days), got ${shown(start)}`);
    }
  } else if (start !== null && addDays(start, days - 1) > LAST_DAY) {
    throw httpError('invalid_parameter', `start_date must be on or before ${addDays(LAST_DAY, -(days - 1))} without end_date (the range is then the ${days} days from start_date, which must end by ${LAST_DAY}), got ${shown(start)}`);
  } else if (end !== null && addDays(end, -(days - 1)) < FIRST_DAY) {
    throw httpError('invalid_parameter', `end_date must be on or after ${addDays(FIRST_DAY, days - 1)} without start_date (the range is then the ${days} days to end_date, which must begin on or after ${FIRST_DAY}), got ${shown(end)}`);
  }
}

/**
 * The period a range is compared with (docs/metrics.md#signals): compare_start_date and
 * compare_end_date come together, in order, at most MAX_RANGE_DAYS days, and not with
 * compare=previous_period (which names its own). The 400 names the parameter at fault.
 */
function checkCompare(compare: string | null, start: string | null, end: string | null): void {
  if ((start === null) !== (end === null)) {
    const [given, missing] = start === null ? ['compare_end_date', 'compare_start_date'] : ['compare_start_date', 'compare_end_date'];
    throw httpError('invalid_parameter', `${missing} must be given with ${given}, got none`);
  }
  if (start === null || end === null) return;
  if (compare !== null) throw httpError('invalid_parameter', `compare must be left out with compare_start_date and compare_end_date, got ${shown(compare)}`);
  const span = (Date.parse(end) - Date.parse(start)) / DAY_MS + 1;
  if (span < 1) throw httpError('invalid_parameter', `compare_start_date must be on or before compare_end_date (${end}), got ${shown(start)}`);
  if (span > MAX_RANGE_DAYS) {
    throw httpError('invalid_parameter', `compare_start_date must be at most ${MAX_RANGE_DAYS - 1} days before compare_end_date (${end}: a period of at most ${MAX_RANGE_DAYS} days), got ${shown(start)}`);
  }
}

/**
 * compare=previous_period (or an endpoint that compares so unless told: signals) of a range given by
 * one or both ends: the previous period (comparison.ts previousPeriod: as many days, ending the day
 * before) must begin on or after FIRST_DAY, a day the API accepts, else the 400 names the end given.
 * Without either end the range is the current window, which the data places (never before 1970).
 */
function checkPrevious(start: string | null, end: string | null, days: number, asked: boolean): void {
  if (start === null && end === null) return;
  const first = start ?? addDays(end!, -(days - 1));
  const span = start !== null && end !== null ? (Date.parse(end) - Date.parse(start)) / DAY_MS + 1 : days;
  if (addDays(first, -span) >= FIRST_DAY) return;
  const how = asked ? 'with compare=previous_period' : 'without compare_start_date and compare_end_date (the range is compared with its previous period)';
  if (start !== null) {
    throw httpError('invalid_parameter', `start_date must be on or after ${addDays(FIRST_DAY, span)} ${how}: the previous ${span} days must begin on or after ${FIRST_DAY}, got ${shown(start)}`);
  }
  throw httpError('invalid_parameter', `end_date must be on or after ${addDays(FIRST_DAY, 2 * days - 1)} ${how}: the previous ${days} days must begin on or after ${FIRST_DAY}, got ${shown(end!)}`);
}

/**
 * The dates of a validated query, together: its range (`days` long when given by one end), the
 * compared period, and, when the range is compared with its previous period (asked, or the
 * endpoint's default: `comparesByDefault`), that period. Throws the first 400.
 */
export function checkDates(args: QueryArgs, days: number, comparesByDefault: boolean): void {
  checkRange(args.startDate, args.endDate, days);
  checkCompare(args.compare, args.compareStartDate, args.compareEndDate);
  if (args.compareStartDate === null && (args.compare !== null || comparesByDefault)) checkPrevious(args.startDate, args.endDate, days, args.compare !== null);
}
