import type { ChangeKind } from './store';
import type { ReadArgs } from './args';
import type { QueryParamName } from './params.gen';
import type { ReadStore } from './store';
import type { Page, PageContext } from './paging';

/** What the key must be allowed to see before a read model runs. */
export type Scope = 'account' | 'project' | 'run_group';

/** The trend's span: the length of a 'year' range (Endpoint.defaultRange). */
export const YEAR_DAYS = 365;

/** The days one end of a range alone covers on an endpoint (windows.ts requestedWindow). */
export function rangeDays(e: Pick<Endpoint, 'defaultRange'>, windowDays: number): number {
  return e.defaultRange === 'year' ? YEAR_DAYS : windowDays;
}

/**
 * One GET endpoint: its path, what it accepts, the JSON Schema of its 200 body (schemas/api/<schema>.json,
 * the single source of truth for validation, TypeScript types and OpenAPI), and the read model.
 */
export interface Endpoint {
  /** Stable name: cache keys, metric labels, OpenAPI operationId. */
  name: string;
  /** Path under /v1/public in @koa/router syntax, e.g. '/projects/:project_id/visibility'. */
  path: string;
  summary: string;
  scope: Scope;
  /**
   * The query parameters it accepts, in the order the OpenAPI document lists them: file names of
   * schemas/params. Validation, the read-model arguments, the cache key, the cursor's binding, the
   * next page's Link, the OpenAPI parameters and the MCP tool's input all follow from this list
   * (serve/request/params.ts). A list that pages (`page`) lists `cursor`.
   */
  params: readonly QueryParamName[];
  /**
   * With start_date / end_date: the length of the range one end alone (or none) gives. 'year': 365
   * days, the trend's span; absent: the service's current window (7 days).
   */
  defaultRange?: 'year';
  /**
   * Compares the range with its previous period unless compare_start_date/compare_end_date name
   * another (signals): the HTTP layer then checks that period's days as for compare=previous_period.
   */
  comparesByDefault?: true;
  schema: string;
  /**
   * The kinds of change (store/versions.ts ChangeKind) whose data the body reads: 'runs' (runs, run
   * groups, the aggregates), 'forum' (forum posts), 'project' (the project's own row), 'setup' (its
   * prompts, segments, competitors, terms, tracked engines), 'engines' (engine names, and which
   * engines' runs count). A commit of other kinds leaves the body's bytes as they were: the cache keeps
   * it current (serve/bodies/cache.ts) and the change feed does not name it (serve/feed/change-feed.ts). Never fewer
   * than it reads (test/readmodels/depends-on.test.ts checks each against real commits).
   */
  dependsOn: readonly ChangeKind[];
  build(store: ReadStore, args: ReadArgs): unknown;
  /**
   * The body as the JSON text the store keeps ready, byte for byte JSON.stringify(build()), or null
   * when it has none for these args (buildReady then builds it). Only the day-by-day trend has one
   * (store/trend-days.ts): its year is the one body too large to compute on each cold build.
   */
  text?(store: ReadStore, args: ReadArgs): string | null;
  /**
   * Lists that page (long lists in bounded answers): the page args.cursor names (the first without one) and where the next
   * starts. The HTTP layer serves `items` as the body, names the next page in a Link header and accepts
   * `cursor` only where this exists. build() returns the same items.
   */
  page?(store: ReadStore, args: ReadArgs, ctx: PageContext): Page<unknown>;
}
