// A range of days as the fewest roll-up rows that add up to it: whole months, whole ISO weeks, single days.
import { addDays } from '../lib/time';
import type { Period } from './args';
import { nextMonth, pendingPeriods, recountingProject, periodEnd, type Grain, type ReadStore } from './store';

/**
 * A run of consecutive rows of one grain's table (agg_*_day, _week, _month): the rows whose `day`
 * (the period's first day) is in start..end.
 */
export interface Piece {
  grain: Grain;
  start: string;
  end: string;
}

/**
 * Whether the roll-up rows of a week or month of the project are pending (migration 010: a bulk
 * writer has not counted them again yet): a range reads that period's days instead, which sum to the
 * same. Asked in the read's own transaction, so it is the snapshot the rows come from.
 */
export type Stale = (grain: Exclude<Grain, 'day'>, start: string) => boolean;
const NOTHING_STALE: Stale = () => false;
/** Every period read as its days (the runs): a filter on the runs' dimensions, which no roll-up keys by. */
export const EVERY_PERIOD_STALE: Stale = () => true;

export function stalePeriods(store: ReadStore, projectId: string): Stale {
  // Counted again slice by slice (migration 018): no roll-up row of the project is read meanwhile.
  if (recountingProject(store, projectId)) return EVERY_PERIOD_STALE;
  const pending = pendingPeriods(store, projectId);
  if (pending.length === 0) return NOTHING_STALE;
  const periods = new Set(pending);
  return (grain, start) => periods.has(`${grain} ${start}`);
}

const isFirstOfMonth = (day: string): boolean => day.endsWith('-01');
const isMonday = (day: string): boolean => new Date(`${day}T00:00:00Z`).getUTCDay() === 1;

/**
 * The days start..end (inclusive) as whole months, whole ISO weeks and single days, in order, with
 * as few rows to read as the roll-ups allow (migration 007): a year is about 11 month rows, a few
 * week rows and the days of its ragged edges, not 365 day rows. `grouping` keeps every piece inside
 * one period of the answer: 'week' never reads a month row (a month cuts weeks), 'month' never a
 * week that crosses a month's end, 'day' only days; 'total' (one sum over the range) uses them all.
 * Consecutive pieces of one grain are joined: one query each. A `stale` period is read as smaller pieces.
 */
export function rangePieces(start: string, end: string, grouping: Period | 'total', stale: Stale = NOTHING_STALE): Piece[] {
  const pieces: Piece[] = [];
  const push = (grain: Grain, day: string): void => {
    const last = pieces[pieces.length - 1];
    if (last && last.grain === grain) last.end = day;
    else pieces.push({ grain, start: day, end: day });
  };
  const months = grouping === 'total' || grouping === 'month';
  const weeks = grouping !== 'day';
  // A month that starts after `day` within 6 days and fits in the range: the week would cut it.
  const cutsAMonth = (day: string): boolean => {
    const m = nextMonth(day);
    return months && m <= periodEnd(day, 'week') && periodEnd(m, 'month') <= end && !stale('month', m);
  };
  for (let day = start; day <= end;) {
    if (months && isFirstOfMonth(day) && periodEnd(day, 'month') <= end && !stale('month', day)) {
      push('month', day);
      day = nextMonth(day);
    } else if (weeks && isMonday(day) && periodEnd(day, 'week') <= end && !cutsAMonth(day) && !stale('week', day)
      && (grouping !== 'month' || periodEnd(day, 'week').slice(0, 7) === day.slice(0, 7))) {
      push('week', day);
      day = addDays(day, 7);
    } else {
      push('day', day);
      day = addDays(day, 1);
    }
  }
  return pieces;
}
