/** The period of a point of the trend and of daily scores. */
export type Period = 'day' | 'week' | 'month';

/** What a read model is asked for, after the HTTP layer has validated and normalized the request. */
export interface ReadArgs {
  accountId: string;
  projectId: string;
  runGroupId: string;
  /** Sorted, de-duplicated; null when the request has no engine_ids (all engines). */
  engineIds: string[] | null;
  /** Rows per page; 0 = no cap (the v1 lists that had no `limit` return everything unless asked). */
  limit: number;
  entityType: 'brand' | 'competitor' | null;
  /** Length of the current window in days (spec: 7). */
  windowDays: number;
  /** start_date / end_date as asked (YYYY-MM-DD, validated, start <= end, at most 366 days); null when absent (windows.ts requestedWindow). */
  startDate: string | null;
  endDate: string | null;
  /** Points per day, ISO week or calendar month (timeseries, daily scores); 'day' when absent. */
  interval: Period;
  /** Where the page starts (a decoded `cursor`, see src/serve/cursor.ts); absent or null: the first page. */
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
