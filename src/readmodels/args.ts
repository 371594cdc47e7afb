/** What a read model is asked for, after the HTTP layer has validated and normalized the request. */
export interface ReadArgs {
  accountId: string;
  projectId: string;
  runGroupId: string;
  /** Sorted, de-duplicated; null when the request has no engine_ids (all engines). */
  engineIds: string[] | null;
  limit: number;
  entityType: 'brand' | 'competitor' | null;
  /** Length of the current window in days (spec: 7). */
  windowDays: number;
}
