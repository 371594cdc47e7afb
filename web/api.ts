// The dashboard's only way to the API: the typed client generated from the OpenAPI document
// (clients/typescript: openapi-typescript's types, openapi-fetch's calls). The body types below are
// read from the same generated paths, so a schema change that breaks a table breaks the build.
import { createClient, type paths, type VisibilityClient } from '../clients/typescript/src/index';

type Ok<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer B } } } } } ? B : never;

export type Projects = Ok<'/projects'>;
export type Timeseries = Ok<'/projects/{project_id}/visibility/timeseries'>;
export type Rankings = Ok<'/projects/{project_id}/competitor-rankings'>;
export type Citations = Ok<'/projects/{project_id}/citations'>;
export type Leads = Ok<'/projects/{project_id}/forum/leads'>;

/** How many citations and forum leads the dashboard shows (the top of each ranked list). */
export const TOP = 10;

/** A failed call, as the page shows it: the status and the API's message. */
export class CallError extends Error {
  constructor(readonly status: number, message: string) {
    super(`${status}: ${message}`);
  }
}

/** The data or a CallError carrying the API's error message ({ error: true, message }). */
function unwrap<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data !== undefined && r.response.ok) return r.data;
  const e = r.error;
  const message = typeof e === 'object' && e !== null && 'message' in e ? String((e as { message: unknown }).message) : r.response.statusText;
  throw new CallError(r.response.status, message);
}

export interface ProjectData {
  timeseries: Timeseries;
  rankings: Rankings;
  citations: Citations;
  leads: Leads;
}

export class Api {
  private readonly client: VisibilityClient;

  constructor(origin: string, apiKey: string) {
    this.client = createClient({ baseUrl: origin, apiKey });
  }

  async projects(): Promise<Projects> {
    return unwrap(await this.client.GET('/projects'));
  }

  /** The four bodies a project's view shows, fetched together. */
  async project(id: string): Promise<ProjectData> {
    const path = { project_id: id };
    const [timeseries, rankings, citations, leads] = await Promise.all([
      this.client.GET('/projects/{project_id}/visibility/timeseries', { params: { path } }).then(unwrap),
      this.client.GET('/projects/{project_id}/competitor-rankings', { params: { path } }).then(unwrap),
      this.client.GET('/projects/{project_id}/citations', { params: { path, query: { limit: TOP } } }).then(unwrap),
      this.client.GET('/projects/{project_id}/forum/leads', { params: { path, query: { limit: TOP } } }).then(unwrap),
    ]);
    return { timeseries, rankings, citations, leads };
  }
}
