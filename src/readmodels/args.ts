import type { QueryArgs } from './params.gen';

/** The period of a point of the trend and of daily scores (interval). */
export type Period = QueryArgs['interval'];

/**
 * What a read model is asked for, after the HTTP layer has validated and normalized the request: the
 * query (QueryArgs, generated from schemas/params: one field per parameter) and what the path and
 * the service say.
 */
export interface ReadArgs extends QueryArgs {
  accountId: string;
  projectId: string;
  runGroupId: string;
  /** Length of the current window in days (spec: 7); a range of start_date / end_date replaces it (windows.ts requestedWindow). */
  windowDays: number;
  /** Where the page starts (a decoded `cursor`, see src/serve/request/cursor.ts); absent or null: the first page. */
  cursor?: PagePosition | null;
}

/** One component of a list's sort key: the list's order is lexicographic over these. */
export type SortKey = ReadonlyArray<string | number>;

/**
 * Where a page of a list starts (see src/readmodels/paging.ts). Plain data: it crosses to the build
 * threads, and the HTTP layer encodes it into the next page's cursor.
 */
export interface PagePosition {
  /** The sort key of the last item of the previous page: the page holds the items after it. */
  after: SortKey;
  /**
   * Ranked lists only (order moves as events arrive): the data version whose ordered list the walk
   * pages through, and where this page starts in it.
   */
  pinned?: { version: number; offset: number };
}
