// The dashboard's only way to the API: the typed client generated from the OpenAPI document
// (clients/typescript: openapi-typescript's types, openapi-fetch's calls). The body types below are
// read from the same generated paths, so a schema change that breaks a table breaks the build.
//
// Which query parameters each report takes is read from the served document (/openapi.json) once:
// a report is sent only the view's parameters its operation declares, and an endpoint the service
// does not serve is never called. So the page works against an older service (no dimensions, no
// signals: those controls and panels stay hidden) without a failed request.
import { createClient, type paths, type VisibilityClient } from '../clients/typescript/src/index';
import type { Query } from './state';

type Ok<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer B } } } } } ? B : never;

export type Projects = Ok<'/projects'>;
export type Timeseries = Ok<'/projects/{project_id}/visibility/timeseries'>;
export type Engines = Ok<'/projects/{project_id}/engines'>;
export type Segments = Ok<'/projects/{project_id}/segments'>;
export type Citations = Ok<'/projects/{project_id}/citations'>;
export type Leads = Ok<'/projects/{project_id}/forum/leads'>;
/** A compared body (compare asked for) names its comparison period, and each rate with an interval has its `R_change`. */
export type Rankings = Ok<'/projects/{project_id}/competitor-rankings'>;
export type SegmentAnalytics = Ok<'/projects/{project_id}/segments/analytics'>;
export type Visibility = Ok<'/projects/{project_id}/visibility'>;
/** GET /projects/{id}/signals: the changes between two periods that are statistically real. */
export type Signals = Ok<'/projects/{project_id}/signals'>;
/** GET /projects/{id}/dimensions: the countries, personas, models and surfaces the runs name. */
type DimensionsBody = Ok<'/projects/{project_id}/dimensions'>;

/** The dimensions a filter can pick from, each value with how many runs name it. */
export type Dimension = 'country' | 'persona' | 'model';
export interface Choice { value: string; label: string; run_count?: number }
export type Dimensions = Record<Dimension, Choice[]>;

/** How many citations and forum leads the dashboard shows (the top of each ranked list). */
export const TOP = 10;

export const PATHS = {
  timeseries: '/projects/{project_id}/visibility/timeseries',
  visibility: '/projects/{project_id}/visibility',
  rankings: '/projects/{project_id}/competitor-rankings',
  segmentAnalytics: '/projects/{project_id}/segments/analytics',
  citations: '/projects/{project_id}/citations',
  leads: '/projects/{project_id}/forum/leads',
  signals: '/projects/{project_id}/signals',
  engines: '/projects/{project_id}/engines',
  segments: '/projects/{project_id}/segments',
  dimensions: '/projects/{project_id}/dimensions',
} as const;
type Report = keyof typeof PATHS;

/** A failed call, as the page shows it: the status and the API's message. */
export class CallError extends Error {
  constructor(readonly status: number, message: string) {
    super(`${status}: ${message}`);
  }
}

type Answer = { data?: unknown; error?: unknown; response: Response };

/** The data or a CallError carrying the API's error message ({ error: true, message }). */
function unwrap<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data !== undefined && r.response.ok) return r.data;
  const e = r.error;
  const message = typeof e === 'object' && e !== null && 'message' in e ? String((e as { message: unknown }).message) : r.response.statusText;
  throw new CallError(r.response.status, message);
}

/** Each served GET path and the query parameters its operation declares, from the OpenAPI document. */
export type Declared = Map<string, Set<string>>;

function declaredOf(doc: unknown): Declared {
  const out: Declared = new Map();
  const d = doc as { paths?: Record<string, { get?: { parameters?: unknown[] } }>; components?: { parameters?: Record<string, unknown> } };
  for (const [p, item] of Object.entries(d.paths ?? {})) {
    if (!item.get) continue;
    const names = new Set<string>();
    for (const raw of item.get.parameters ?? []) {
      // A parameter may be written in place or as a $ref to components.parameters.
      const ref = (raw as { $ref?: string }).$ref;
      const param = (ref ? d.components?.parameters?.[ref.split('/').pop()!] : raw) as { in?: string; name?: string } | undefined;
      if (param?.in === 'query' && param.name) names.add(param.name);
    }
    out.set(p, names);
  }
  return out;
}

/** A dimension's values as choices, labelled with their runs. */
function choices<K extends string>(list: ReadonlyArray<Record<K, string> & { run_count: number }>, key: K): Choice[] {
  return list.map((d) => ({ value: d[key], label: `${d[key]} (${d.run_count} runs)`, run_count: d.run_count }));
}

export interface Options {
  engines: Choice[];
  segments: Choice[];
  dimensions: Dimensions;
}

export interface ProjectData {
  timeseries: Timeseries;
  visibility: Visibility;
  rankings: Rankings;
  segments: SegmentAnalytics | null;
  citations: Citations;
  leads: Leads;
  signals: Signals | null;
}

export class Api {
  private readonly client: VisibilityClient;
  private declared: Declared = new Map();

  constructor(origin: string, apiKey: string) {
    this.client = createClient({ baseUrl: origin, apiKey });
  }

  /**
   * One GET with the parameters given. openapi-fetch's GET is generic over the paths of the document
   * the client was generated from; the served document can be newer (a path or parameter this build
   * does not know), and the caller names the body's type: hence the cast.
   */
  private async get<T>(path: string, project: string, query: Query = {}): Promise<T> {
    const get = this.client.GET as unknown as (p: string, init: { params: unknown }) => Promise<Answer>;
    return unwrap(await get(path, { params: { path: { project_id: project }, query } })) as T;
  }

  /** Reads which paths and parameters the service serves (its OpenAPI document, public). */
  async discover(): Promise<void> {
    this.declared = declaredOf(unwrap(await this.client.GET('/openapi.json')));
  }

  /** The query parameters a report's operation declares (none when the service does not serve it). */
  params(report: Report): ReadonlySet<string> {
    return this.declared.get(PATHS[report]) ?? new Set();
  }

  serves(report: Report): boolean {
    return this.declared.has(PATHS[report]);
  }

  /** The view's parameters the report takes, plus the fixed ones (e.g. a limit). */
  private query(report: Report, view: Query, fixed: Query = {}): Query {
    const take = this.params(report);
    const q: Query = {};
    for (const [k, v] of Object.entries(view)) if (take.has(k)) q[k] = v;
    return { ...q, ...fixed };
  }

  async projects(): Promise<Projects> {
    return unwrap(await this.client.GET('/projects'));
  }

  /** What the project's filters can pick from; a list the service does not serve is empty. */
  async options(id: string): Promise<Options> {
    const [engines, segments, dims] = await Promise.all([
      this.get<Engines>(PATHS.engines, id),
      this.get<Segments>(PATHS.segments, id),
      this.serves('dimensions') ? this.get<DimensionsBody>(PATHS.dimensions, id) : Promise.resolve(null),
    ]);
    return {
      engines: engines.map((e) => ({ value: e.id, label: e.name })),
      segments: segments.map((s) => ({ value: s.id, label: s.name })),
      dimensions: {
        country: choices(dims?.countries ?? [], 'country'),
        persona: choices(dims?.personas ?? [], 'persona'),
        model: choices(dims?.models ?? [], 'model'),
      },
    };
  }

  /** The bodies a project's view shows, fetched together, each with the view's parameters it takes. */
  async project(id: string, view: Query): Promise<ProjectData> {
    const top = { limit: String(TOP) };
    // Signals compare two periods by definition: the previous period unless the view names another.
    const signalsView: Query = { ...view, compare: 'previous_period' };
    const [timeseries, visibility, rankings, segments, citations, leads, signals] = await Promise.all([
      this.get<Timeseries>(PATHS.timeseries, id, this.query('timeseries', view)),
      this.get<Visibility>(PATHS.visibility, id, this.query('visibility', view)),
      this.get<Rankings>(PATHS.rankings, id, this.query('rankings', view)),
      this.serves('segmentAnalytics') ? this.get<SegmentAnalytics>(PATHS.segmentAnalytics, id, this.query('segmentAnalytics', view)) : null,
      this.get<Citations>(PATHS.citations, id, this.query('citations', view, top)),
      this.get<Leads>(PATHS.leads, id, this.query('leads', view, top)),
      this.serves('signals') ? this.get<Signals>(PATHS.signals, id, this.query('signals', signalsView)) : null,
    ]);
    return { timeseries, visibility, rankings, segments, citations, leads, signals };
  }
}
