// Builders for test events. Ids are readable-but-valid uuids so failures are easy to read.
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import type { SourceEvent } from '../../src/store';

let counter = 0;

/** A valid uuid whose last group spells a small number: id(1) = 00000000-0000-4000-8000-000000000001. */
export function id(n: number, prefix = '00000000'): string {
  return `${prefix}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

export function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

export interface Ev {
  event_id: string;
  type: string;
  schema_version: number;
  occurred_at: string;
  data: Record<string, unknown>;
}

export function ev(type: string, data: Record<string, unknown>, occurred_at = '2026-01-01T00:00:00.000Z', event_id?: string): Ev {
  counter += 1;
  return { event_id: event_id ?? id(counter, 'eeeeeeee'), type, schema_version: 1, occurred_at, data };
}

/** A run re-sent later under a new event, changed: the newer version replaces the stored one. */
export function resent(e: Ev, at: string, change: (data: Record<string, unknown>) => void): Ev {
  const data = structuredClone(e.data);
  change(data);
  return ev(e.type, data, at);
}

export function asSource(events: Array<Ev | string>, source = 'test', start = 1): SourceEvent[] {
  return events.map((e, i) => ({ raw: typeof e === 'string' ? e : JSON.stringify(e), source, position: start + i }));
}

export function writeNdjson(file: string, events: Array<Ev | string>): string {
  fs.writeFileSync(file, events.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join('\n') + '\n');
  return file;
}

/** A tiny world: one account with a key, one project, two engines, two prompts in a segment, one competitor. */
export const W = {
  account: id(1, 'aaaaaaaa'),
  otherAccount: id(2, 'aaaaaaaa'),
  key: 'test-key-one',
  otherKey: 'test-key-two',
  project: id(1, 'bbbbbbbb'),
  otherProject: id(2, 'bbbbbbbb'),
  engineA: id(1, 'cccccccc'),
  engineB: id(2, 'cccccccc'),
  segment: id(1, 'dddddddd'),
  prompt1: id(1, 'ffffffff'),
  prompt2: id(2, 'ffffffff'),
  competitor: id(1, '99999999'),
  group: id(1, '77777777'),
};

export function world(): Ev[] {
  return [
    ev('account.upserted', { account_id: W.account, name: 'Acme' }),
    ev('account.upserted', { account_id: W.otherAccount, name: 'Other' }),
    ev('api_key.issued', { key_id: id(1, '11111111'), account_id: W.account, key_sha256: sha256(W.key), issued_at: '2026-01-01T00:00:00Z' }),
    ev('api_key.issued', { key_id: id(2, '11111111'), account_id: W.otherAccount, key_sha256: sha256(W.otherKey), issued_at: '2026-01-01T00:00:00Z' }),
    ev('project.upserted', { id: W.project, company_id: W.account, name: 'Acme Project', domain: 'acme.com', status: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' }),
    ev('project.upserted', { id: W.otherProject, company_id: W.otherAccount, name: 'Other Project', status: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' }),
    ev('engine.upserted', { id: W.engineA, name: 'ChatGPT', provider: 'openai', model: 'gpt-4o' }),
    ev('engine.upserted', { id: W.engineB, name: 'Perplexity', provider: 'perplexity' }),
    ev('project.engine_tracked', { project_id: W.project, engine_id: W.engineA, at: '2026-01-01T00:00:00Z' }),
    ev('project.engine_tracked', { project_id: W.project, engine_id: W.engineB, at: '2026-01-01T00:00:00Z' }),
    ev('segment.upserted', { id: W.segment, project_id: W.project, name: 'Buyers', active: true }),
    ev('prompt.upserted', { id: W.prompt1, project_id: W.project, text: 'best anvil', segment_ids: [W.segment], active: true }),
    ev('prompt.upserted', { id: W.prompt2, project_id: W.project, text: 'cheap anvil', segment_ids: [], active: true }),
    ev('competitor.upserted', { id: W.competitor, project_id: W.project, name: 'Wile', domain: 'wile.com', aliases: ['Wile E.'] }),
    ev('term.upserted', { id: id(1, '33333333'), project_id: W.project, value: 'Acme', kind: 'brand' }),
    ev('run_group.started', { id: W.group, project_id: W.project, started_at: '2026-01-05T00:00:00Z' }),
  ];
}

export interface RunSpec {
  n: number;
  prompt?: string;
  engine?: string;
  day?: string;
  status?: 'succeeded' | 'failed';
  brand?: number | null;
  sentiment?: number | null;
  competitor?: number | null;
  citations?: string[];
  /** The run's optional dimensions (left out of the event when not given). */
  country?: string;
  persona?: string;
  model?: string;
}

export function run(r: RunSpec): Ev {
  const day = r.day ?? '2026-01-05';
  const mentions: Array<Record<string, unknown>> = [];
  if (r.brand) mentions.push({ entity_type: 'brand', name: 'Acme', position: r.brand, ...(r.sentiment !== undefined ? { sentiment: r.sentiment } : {}) });
  if (r.competitor) mentions.push({ entity_type: 'competitor', competitor_id: W.competitor, name: 'Wile', position: r.competitor });
  return ev('prompt_run.completed', {
    id: id(r.n, '55555555'), run_group_id: W.group, project_id: W.project, prompt_id: r.prompt ?? W.prompt1,
    engine_id: r.engine ?? W.engineA, status: r.status ?? 'succeeded', completed_at: `${day}T12:00:00Z`,
    mentions, citations: (r.citations ?? []).map((url) => ({ url })),
    ...(r.country !== undefined ? { country: r.country } : {}),
    ...(r.persona !== undefined ? { persona: r.persona } : {}),
    ...(r.model !== undefined ? { model: r.model } : {}),
  }, `${day}T12:00:01Z`);
}

/**
 * Five succeeded runs across two months, both engines, both prompts, three countries, two personas and
 * a model, some naming the competitor: the common runs of the slice tables' tests, which add their
 * own runs and corrections to them.
 */
export function sliceRuns(): [a: Ev, b: Ev, c: Ev, d: Ev, e: Ev] {
  return [
    run({ n: 1, brand: 2, sentiment: 0.35, competitor: 3, country: 'US', persona: 'Founder' }),
    run({ n: 2, brand: 7, sentiment: -0.1, country: 'DE', day: '2026-01-31' }),
    run({ n: 3, competitor: 1, day: '2026-02-02', engine: W.engineB, country: 'US' }),
    run({ n: 4, brand: 1, day: '2026-02-03', prompt: W.prompt2, model: 'gpt-x' }),
    run({ n: 7, brand: 4, competitor: 2, day: '2026-02-03', country: 'US', persona: 'CTO' }),
  ];
}

export function uniqueSuffix(): string {
  counter += 1;
  return String(counter);
}
