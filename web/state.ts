// What the dashboard shows, as data: the project, the date range, the trend's interval, the filters
// and the comparison. It lives in the page's URL query (the API's own parameter names), so a view can
// be shared and reloaded. Pure functions (no DOM): the unit test and the browser test use them.

export const FILTERS = ['engine_ids', 'country', 'persona', 'model', 'segment_ids'] as const;
export type Filter = (typeof FILTERS)[number];

export const INTERVALS = ['day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

/** Range presets, in days ending with the range's end (or the latest day with runs). */
export const PRESETS = [7, 30, 90, 365] as const;

export interface View {
  project?: string;
  start_date?: string;
  end_date?: string;
  /** Absent: one point per day, the API's default (so the default view sends what v1 clients send). */
  interval?: Interval;
  /** compare=previous_period: the same number of days ending the day before the range starts. */
  compare: boolean;
  filters: Record<Filter, string[]>;
}

/** The API's query parameters: each value a string, or repeated (form, explode) for a list. */
export type Query = Record<string, string | string[]>;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function emptyFilters(): Record<Filter, string[]> {
  return { engine_ids: [], country: [], persona: [], model: [], segment_ids: [] };
}

/** The view a page URL's query names; what it cannot read is left at its default. */
export function fromQuery(search: string): View {
  const q = new URLSearchParams(search);
  const date = (k: string): string | undefined => {
    const v = q.get(k);
    return v !== null && DAY.test(v) ? v : undefined;
  };
  const interval = q.get('interval');
  const filters = emptyFilters();
  for (const f of FILTERS) filters[f] = [...new Set(q.getAll(f).filter((v) => v !== ''))];
  const view: View = { compare: q.get('compare') === 'previous_period', filters };
  const project = q.get('project');
  if (project) view.project = project;
  const start = date('start_date');
  const end = date('end_date');
  if (start) view.start_date = start;
  if (end) view.end_date = end;
  if ((INTERVALS as readonly string[]).includes(interval ?? '') && interval !== 'day') view.interval = interval as Interval;
  return view;
}

/** The API's parameters for a view (every report takes the ones its operation declares). */
export function apiQuery(view: View): Query {
  const q: Query = {};
  if (view.start_date) q.start_date = view.start_date;
  if (view.end_date) q.end_date = view.end_date;
  if (view.interval) q.interval = view.interval;
  if (view.compare) q.compare = 'previous_period';
  for (const f of FILTERS) if (view.filters[f].length > 0) q[f] = view.filters[f];
  return q;
}

/** A view as the page's URL query: the project first, then the API's parameters in a fixed order. */
export function toQuery(view: View): string {
  const out = new URLSearchParams();
  if (view.project) out.set('project', view.project);
  for (const [k, v] of Object.entries(apiQuery(view))) {
    for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
  }
  return out.toString();
}

/** The first day of an `days`-day range ending with `end` (YYYY-MM-DD, UTC). */
export function rangeStart(end: string, days: number): string {
  const t = Date.parse(`${end}T00:00:00Z`) - (days - 1) * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

/** How a filter is named on the page. */
export const FILTER_LABELS: Record<Filter, string> = {
  engine_ids: 'engine', country: 'country', persona: 'persona', model: 'model', segment_ids: 'segment',
};

/**
 * What a report leaves out of a view: the chosen filters (and the range) its operation does not
 * declare, so the page can say so under the report rather than show it as filtered.
 */
export function ignored(view: View, declared: ReadonlySet<string>): string[] {
  const out: string[] = [];
  if ((view.start_date || view.end_date) && !declared.has('start_date')) out.push('date range');
  for (const f of FILTERS) if (view.filters[f].length > 0 && !declared.has(f)) out.push(FILTER_LABELS[f]);
  return out;
}
