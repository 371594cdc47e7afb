// The data of `npm run bench:kafka`: a generated world written to an NDJSON file (the log both the
// producer and `visibility-api replay` read), each project's latest run group as the template of the
// live stream, the owner's key of every project, and the read mix the API serves during the stream.
import fs from 'node:fs';
import { DEMO_OPTIONS, generateWorld, worldKeys, type WorldOptions } from '../../fixtures/world';
import { LatestGroups, type GroupTemplate } from '../lib/lib';


export type { GroupTemplate } from '../lib/lib';

export interface ReadRequest {
  method: 'GET'; path: string; headers: Record<string, string>;
  /** The project whose dashboard asks it (the project list too: one of its dashboard's requests). */
  project: string;
}

export interface BenchWorld {
  opts: WorldOptions;
  /** Lines written to the log. */
  events: number;
  bytes: number;
  templates: GroupTemplate[];
  /** The headers of a key that sees the project (its owner's), by project id. */
  headersOf: Record<string, Record<string, string>>;
  reads: ReadRequest[];
}

// A project-day is ~80 prompt runs (20 prompts x 4 engines) and 2 group events; 30 projects by default.
const PROJECTS = 30;
const EVENTS_PER_PROJECT_DAY = 82;
const FIXED_EVENTS = 2_200;

/**
 * A world of about `events` events over `projects` projects (an even number: 2 per account) whose
 * history ends yesterday (UTC): the live runs dated now open today.
 */
export function worldFor(events: number, now = new Date(), projects = PROJECTS): WorldOptions {
  const yesterday = new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
  const days = Math.max(2, Math.ceil((events - FIXED_EVENTS) / (projects * EVENTS_PER_PROJECT_DAY)));
  return { ...DEMO_OPTIONS, seed: 21, accounts: Math.ceil(projects / 2), projectsPerAccount: 2, sharedProjects: 0, days, endDay: yesterday };
}

/**
 * A concentrated stream's world: one project of 1,000 prompts x 8 engines (8,000 runs a run group, one
 * a day) with about `events` events of history ending yesterday: the live stream's groups are all its.
 */
export function concentratedWorldFor(events: number, now = new Date()): WorldOptions {
  const yesterday = new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
  const days = Math.max(2, Math.ceil(events / 8_002));
  return {
    ...DEMO_OPTIONS, seed: 53, accounts: 1, projectsPerAccount: 1, sharedProjects: 0, engines: 8, enginesPerProject: 8, promptsPerProject: 1_000,
    runsPerPromptPerDay: 1, days, endDay: yesterday,
  };
}

interface Seen { owner: Map<string, string>; engine: Map<string, string>; groups: LatestGroups }

/** Keeps what the stream and the read mix need; only run-group and project lines are parsed. */
function observe(line: string, seen: Seen): void {
  const head = line.slice(0, 120);
  if (head.includes('"type":"project.upserted"')) {
    const d = (JSON.parse(line) as { data: { id: string; company_id: string } }).data;
    seen.owner.set(d.id, d.company_id);
  } else if (head.includes('"type":"project.engine_tracked"')) {
    const d = (JSON.parse(line) as { data: { project_id: string; engine_id: string } }).data;
    if (!seen.engine.has(d.project_id)) seen.engine.set(d.project_id, d.engine_id);
  } else {
    seen.groups.observe(line);
  }
}

/** What a dashboard asks of one project: the overview, its trend, rankings, runs, the latest group. */
function readsOf(project: string, group: string, engine: string, headers: Record<string, string>): ReadRequest[] {
  const base = `/v1/public/projects/${project}`;
  const paths = [
    '/v1/public/projects', base, `${base}/visibility`, `${base}/visibility?engine_ids=${engine}`, `${base}/visibility/timeseries`,
    `${base}/competitor-rankings`, `${base}/scores/daily?limit=7`, `${base}/prompts`, `${base}/runs`, `/v1/public/runs/${group}`,
    `${base}/citations?limit=20`, `${base}/mentions?limit=50`,
  ];
  return paths.map((p) => ({ method: 'GET', path: p, headers, project }));
}

/** Writes the log to `file` and returns the world's templates, keys and read mix. */
export async function writeWorld(file: string, opts: WorldOptions): Promise<BenchWorld> {
  const seen: Seen = { owner: new Map(), engine: new Map(), groups: new LatestGroups() };
  const out = fs.createWriteStream(file);
  let events = 0;
  let bytes = 0;
  for (const line of generateWorld(opts)) {
    observe(line, seen);
    events += 1;
    bytes += Buffer.byteLength(line) + 1;
    if (!out.write(line + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  const keys = new Map(worldKeys(opts).filter((k) => !k.revoked).map((k) => [k.account_id, k.key]));
  const templates = [...seen.groups.latest.values()].filter((t) => keys.has(seen.owner.get(t.project_id) ?? '') && t.runs.length > 0)
    .sort((a, b) => (a.project_id < b.project_id ? -1 : 1));
  if (templates.length === 0) throw new Error('the generated world has no run group of a project with a valid key');
  const headersOf: Record<string, Record<string, string>> = {};
  const reads: ReadRequest[] = [];
  for (const t of templates) {
    const headers = { 'x-api-key': keys.get(seen.owner.get(t.project_id)!)!, 'accept-encoding': 'gzip, br' };
    headersOf[t.project_id] = headers;
    reads.push(...readsOf(t.project_id, t.started.id as string, seen.engine.get(t.project_id) ?? '', headers));
  }
  return { opts, events, bytes, templates, headersOf, reads: interleave(reads, 12) };
}

/** Every stride-th request first, so each connection of the load walks all projects and endpoints. */
function interleave<T>(xs: T[], stride: number): T[] {
  const out: T[] = [];
  for (let k = 0; k < stride; k++) for (let i = k; i < xs.length; i += stride) out.push(xs[i]!);
  return out;
}
