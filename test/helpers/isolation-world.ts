// A seeded world of several accounts for the isolation property test (test/serve/tenant-isolation.test.ts), and an
// oracle that derives who may see what from the event list alone (last writer wins by occurred_at,
// then event_id, as the product spec says), never from the service's SQL.
//
// Every free text of project number n carries the marker `zq<n>zq` (z and q are not hex digits, so
// a marker can never be part of a uuid), so a body that shows another project's text is caught even
// where no uuid gives it away.
import { createHash } from 'node:crypto';
import type { Ev } from './events';
import { mulberry32 } from '../../fixtures/random';
// The documented id of a mention (docs/decisions.md), as the value tests' oracle derives it.
import { mentionId } from './oracle-evidence';

export const UUID_IN_TEXT = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/g;
export const MARKER_IN_TEXT = /zq(\d+)zq/g;

/** Seeded and deterministic: the fixture generator's PRNG (the world itself is this file's own). */
export const rng = mulberry32;

/** A random (version 4 layout) uuid from the seeded generator. */
export function uuidOf(r: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(r() * 16).toString(16));
  hex[12] = '4';
  hex[16] = '89ab'[Math.floor(r() * 4)]!;
  const s = hex.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

export type KeyStatus = 'valid' | 'revoked' | 'unknown';
export interface WorldKey {
  key: string;
  label: string;
  status: KeyStatus;
}

export interface World {
  events: Ev[];
  keys: WorldKey[];
  engines: string[];
  /** Ids by kind: project, run_group, prompt_run, prompt, segment, competitor, term, forum_post, account, api_key, engine, mention. */
  ids: Record<string, string[]>;
}

export interface WorldOptions {
  seed: number;
  /** Adds events of a producer that mixes projects up: runs pointing at another account's run group or prompt. */
  crossRefs?: boolean;
}

const BASE_DAY = Date.UTC(2026, 2, 1); // 2026-03-01
const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Accounts 0..4 own projects; account 5 owns none and only receives shares; account 6 has a valid
 * key and sees nothing. Shares are granted, revoked, revoked then granted again, granted then
 * revoked, some with their events out of order; projects are deleted, re-created, moved to
 * another account, or never created (events that refer to them arrive, the project does not).
 */
export function generateWorld(opts: WorldOptions): World {
  const r = rng(opts.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const newId = (): string => uuidOf(r);
  const events: Ev[] = [];
  let clock = BASE_DAY - 40 * DAY;
  // Every event gets its own later time unless one is given: conflicting events never tie by accident.
  const tick = (): string => iso((clock += 1000));
  const ev = (type: string, data: Record<string, unknown>, at?: string): Ev => {
    const e: Ev = { event_id: newId(), type, schema_version: 1, occurred_at: at ?? tick(), data };
    events.push(e);
    return e;
  };
  const ids: Record<string, string[]> = {};
  const note = (kind: string, id: string): string => {
    (ids[kind] ??= []).push(id);
    return id;
  };

  const engines = Array.from({ length: 4 }, () => note('engine', newId()));
  ['ChatGPT', 'Perplexity', 'Gemini', 'Claude'].forEach((name, i) => ev('engine.upserted', { id: engines[i], name, provider: name.toLowerCase() }));

  const accounts = Array.from({ length: 7 }, () => note('account', newId()));
  accounts.forEach((a, i) => ev('account.upserted', { account_id: a, name: `Account ${i}` }));

  // The whole log is shuffled at the end: arrival order is random, only occurred_at decides.
  // Keys: two per account, the second of accounts 1 and 3 revoked.
  const keys: WorldKey[] = [];
  const issue = (account: number, n: number, at?: string): { keyId: string; key: string } => {
    const keyId = note('api_key', newId());
    const key = `iso-${opts.seed}-a${account}-k${n}`;
    ev('api_key.issued', { key_id: keyId, account_id: accounts[account], key_sha256: sha256(key), label: `key ${n}`, issued_at: at ?? iso(clock) }, at);
    return { keyId, key };
  };
  for (let a = 0; a < accounts.length; a++) {
    for (let n = 0; n < 2; n++) {
      const { keyId, key } = issue(a, n);
      const revoke = n === 1 && (a === 1 || a === 3);
      if (revoke) ev('api_key.revoked', { key_id: keyId, revoked_at: iso(clock) });
      keys.push({ key, label: `account ${a} key ${n}${revoke ? ' (revoked)' : ''}`, status: revoke ? 'revoked' : 'valid' });
    }
  }
  // A key revoked, then issued again under the same key_id: revocation is a fact of its own and stays.
  {
    const { keyId, key } = issue(2, 2);
    ev('api_key.revoked', { key_id: keyId, revoked_at: iso(clock) });
    ev('api_key.issued', { key_id: keyId, account_id: accounts[2], key_sha256: sha256(key), issued_at: tick() });
    keys.push({ key, label: 'account 2 key 2 (revoked, then re-issued)', status: 'revoked' });
  }
  // A key moved from account 0 to account 4: the issue with the later occurred_at wins.
  {
    const keyId = note('api_key', newId());
    const key = `iso-${opts.seed}-moved`;
    ev('api_key.issued', { key_id: keyId, account_id: accounts[4], key_sha256: sha256(key), issued_at: iso(clock) }, iso(clock + 500_000));
    ev('api_key.issued', { key_id: keyId, account_id: accounts[0], key_sha256: sha256(key), issued_at: iso(clock) });
    keys.push({ key, label: 'key moved from account 0 to account 4', status: 'valid' });
  }
  keys.push({ key: `iso-${opts.seed}-never-issued`, label: 'unknown key', status: 'unknown' });

  // Projects: three per account 0..4; number n carries the marker zq<n>zq in every text.
  interface Proj { id: string; n: number; owner: number; groups: string[]; prompts: string[]; segments: string[]; competitors: string[]; posts: string[] }
  const projects: Proj[] = [];
  const upsertProject = (p: Proj, owner: number, at?: string, name?: string): Ev => ev('project.upserted', {
    id: p.id, company_id: accounts[owner], name: name ?? `Project ${String(p.n).padStart(2, '0')} zq${p.n}zq`, domain: `zq${p.n}zq-brand.example`,
    description: `about zq${p.n}zq`, category_summary: null, status: 'active', created_at: iso(BASE_DAY - 60 * DAY), updated_at: iso(BASE_DAY - 50 * DAY),
  }, at);
  for (let owner = 0; owner < 5; owner++) {
    for (let k = 0; k < 3; k++) {
      const p: Proj = { id: note('project', newId()), n: projects.length, owner, groups: [], prompts: [], segments: [], competitors: [], posts: [] };
      projects.push(p);
      upsertProject(p, owner);
    }
  }
  // Two projects with the same name in different accounts: ordering by name, then id.
  upsertProject(projects[4]!, 1, undefined, 'Same Name');
  upsertProject(projects[7]!, 2, undefined, 'Same Name');

  for (const p of projects) fillProject(p);

  function fillProject(p: Proj): void {
    const m = `zq${p.n}zq`;
    const tracked = engines.filter((_, i) => i === p.n % 4 || i === (p.n + 1) % 4 || r() < 0.3);
    for (const e of tracked) ev('project.engine_tracked', { project_id: p.id, engine_id: e, at: iso(BASE_DAY - 30 * DAY) });
    if (tracked.length > 2) ev('project.engine_untracked', { project_id: p.id, engine_id: tracked[2], at: tick() });
    for (let i = 0; i < 2; i++) p.segments.push(note('segment', newId()));
    p.segments.forEach((s, i) => ev('segment.upserted', { id: s, project_id: p.id, name: `Segment ${i} ${m}`, description: `who ${m}`, active: true }));
    const goneSegment = note('segment', newId());
    ev('segment.upserted', { id: goneSegment, project_id: p.id, name: `Old segment ${m}`, active: true });
    ev('segment.deleted', { id: goneSegment, project_id: p.id });
    for (let i = 0; i < 3; i++) {
      const id = note('prompt', newId());
      p.prompts.push(id);
      ev('prompt.upserted', { id, project_id: p.id, text: `prompt ${i} ${m}`, segment_ids: i < 2 ? [p.segments[i]] : [], active: true });
    }
    const gonePrompt = note('prompt', newId());
    ev('prompt.upserted', { id: gonePrompt, project_id: p.id, text: `deleted prompt ${m}`, segment_ids: [p.segments[0]], active: true });
    for (let i = 0; i < 2; i++) {
      const id = note('competitor', newId());
      p.competitors.push(id);
      ev('competitor.upserted', { id, project_id: p.id, name: `Rival ${i} ${m}`, domain: `zq${p.n}zq-rival${i}.example`, aliases: [`R${i} ${m}`] });
    }
    const goneCompetitor = note('competitor', newId());
    ev('competitor.upserted', { id: goneCompetitor, project_id: p.id, name: `Gone rival ${m}`, aliases: [] });
    ev('competitor.deleted', { id: goneCompetitor, project_id: p.id });
    ev('term.upserted', { id: note('term', newId()), project_id: p.id, value: `Brand ${m}`, kind: 'brand' });
    ev('term.upserted', { id: note('term', newId()), project_id: p.id, value: `zq${p.n}zq-brand.example`, kind: 'domain' });
    const goneTerm = note('term', newId());
    ev('term.upserted', { id: goneTerm, project_id: p.id, value: `Old ${m}`, kind: 'brand' });
    ev('term.deleted', { id: goneTerm, project_id: p.id });

    // Three run groups over the first days of March; runs on every tracked engine.
    for (let g = 0; g < 3; g++) {
      const group = note('run_group', newId());
      p.groups.push(group);
      const day = BASE_DAY + (g * 2 + (p.n % 2)) * DAY;
      ev('run_group.started', { id: group, project_id: p.id, trigger: `schedule ${m}`, started_at: iso(day) });
      let k = 0;
      for (const prompt of [...p.prompts, gonePrompt]) {
        for (const engine of tracked.slice(0, 2)) {
          k += 1;
          const failed = r() < 0.1;
          const brand = r() < 0.7 ? 1 + Math.floor(r() * 3) : null;
          const mentions: Array<Record<string, unknown>> = [];
          if (brand) mentions.push({ entity_type: 'brand', name: `Brand ${m}`, position: brand, sentiment: Math.round((r() * 2 - 1) * 100) / 100, snippet: `says ${m}` });
          if (r() < 0.6) mentions.push({ entity_type: 'competitor', competitor_id: pick(p.competitors), name: `Rival ${m}`, position: 1 + Math.floor(r() * 4) });
          if (r() < 0.2) mentions.push({ entity_type: 'competitor', competitor_id: goneCompetitor, name: `Gone rival ${m}`, position: 5 });
          const citations = [
            { url: `https://zq${p.n}zq-brand.example/page${k % 3}`, title: `Our page ${m}`, position: 1 },
            { url: `https://www.reddit.com/r/zq${p.n}zq/comments/thread${k % 2}`, title: `Thread ${m}`, position: 2 },
            // A public page many projects cite: carries no marker, belongs to no one.
            { url: 'https://en.wikipedia.org/wiki/Anvil', position: 3 },
          ];
          ev('prompt_run.completed', {
            id: note('prompt_run', newId()), run_group_id: group, project_id: p.id, prompt_id: prompt, engine_id: engine,
            status: failed ? 'failed' : 'succeeded', completed_at: iso(day + k * 60_000), response_excerpt: `answer ${m}`,
            mentions: failed ? [] : mentions, citations: failed ? [] : citations,
          }, iso(day + k * 60_000 + 1000));
        }
      }
      if (g < 2) ev('run_group.completed', { id: group, project_id: p.id, completed_at: iso(day + DAY / 2), status: g === 0 ? 'completed' : 'partial' });
    }
    ev('prompt.deleted', { id: gonePrompt, project_id: p.id });

    for (let i = 0; i < 4; i++) {
      const id = note('forum_post', newId());
      p.posts.push(id);
      ev('forum_post.discovered', {
        id, project_id: p.id, platform: i % 2 ? 'reddit' : 'quora', url: `https://www.reddit.com/r/zq${p.n}zq/comments/post${i}`, title: `Post ${i} ${m}`,
        community: `zq${p.n}zq-community`, author: `author ${m}`, posted_at: iso(BASE_DAY + i * DAY), discovered_at: iso(BASE_DAY + i * DAY + 3600_000),
        relevance: [0.9, 0.75, 0.4, 0.2][i], intent: ['high', 'medium', 'low', 'high'][i], matched_terms: [`Brand ${m}`], comment_count: i, score: i * 10,
      });
    }
    ev('forum_post.updated', { id: p.posts[3], project_id: p.id, status: 'engaged' });
    ev('forum_post.updated', { id: p.posts[2], status: 'dismissed', relevance: 0.5 });
  }

  // Shares (project number -> account), with the fates a share can have.
  const grant = (n: number, a: number, at?: string): Ev => ev('project.access_granted', { project_id: projects[n]!.id, account_id: accounts[a] }, at);
  const revoke = (n: number, a: number, at?: string): Ev => ev('project.access_revoked', { project_id: projects[n]!.id, account_id: accounts[a] }, at);
  grant(0, 1); // plain share
  grant(0, 5); // to the account that owns nothing
  grant(3, 0); revoke(3, 0); // revoked, not granted again
  grant(6, 0); revoke(6, 0); grant(6, 0); // revoked, then granted again
  grant(9, 2); revoke(9, 2); grant(9, 2); revoke(9, 2); // flapped, revoked last
  grant(12, 5); revoke(12, 5); grant(12, 5); // revoked then granted again, to account 5
  // The revocation is newer than the grant although it was produced first.
  revoke(1, 3, iso(clock + 900_000));
  grant(1, 3);
  // The other way round: a newer grant produced before an older revocation.
  grant(10, 1, iso(clock + 900_000));
  revoke(10, 1);
  // A revocation of a share that never existed; a share with the owner itself.
  revoke(13, 0);
  grant(2, 0);
  // A share of a project that is then deleted: deletion hides it from everyone.
  grant(5, 4);
  ev('project.deleted', { id: projects[5]!.id });
  ev('project.deleted', { id: projects[11]!.id });
  // Deleted, then created again (a newer upsert): visible again, to its owner and its grantee.
  ev('project.deleted', { id: projects[14]!.id });
  upsertProject(projects[14]!, 4);
  grant(14, 2);
  // A delete that is newer than a later-produced upsert: stays deleted.
  ev('project.deleted', { id: projects[8]!.id }, iso(clock + 900_000));
  upsertProject(projects[8]!, 2);
  // Moved from account 3 to account 0; account 3 keeps a share of it, granted before the move.
  grant(10, 3);
  upsertProject(projects[10]!, 0);
  // A share granted to account 1 for a project that account 1 later receives as owner.
  grant(13, 1);
  upsertProject(projects[13]!, 1);

  // A project that is never created: its data arrives, its project.upserted does not.
  const orphan: Proj = { id: note('project', newId()), n: projects.length, owner: 0, groups: [], prompts: [], segments: [], competitors: [], posts: [] };
  fillProject(orphan);
  ev('project.access_granted', { project_id: orphan.id, account_id: accounts[0] });
  // A project that is only ever deleted.
  const tombstone = note('project', newId());
  ev('project.deleted', { id: tombstone });
  // A run group that never started (only its completion arrived), and one whose project was never created.
  ev('run_group.completed', { id: note('run_group', newId()), completed_at: tick(), status: 'completed' });

  if (opts.crossRefs) {
    // A producer that mixes projects up: a run of project 2 (account 0, never shared) filed under a
    // run group of project 3 (account 1), and a run of project 3 that names a prompt of project 6
    // (account 2, not shared with account 1).
    const p2 = projects[2]!;
    const p3 = projects[3]!;
    const p6 = projects[6]!;
    ev('prompt_run.completed', {
      id: note('prompt_run', newId()), run_group_id: p3.groups[0], project_id: p2.id, prompt_id: p2.prompts[0], engine_id: engines[2],
      status: 'succeeded', completed_at: iso(BASE_DAY + 2 * DAY), response_excerpt: 'crossed zq2zq',
      mentions: [{ entity_type: 'brand', name: 'Brand zq2zq', position: 1 }], citations: [{ url: 'https://zq2zq-brand.example/secret' }],
    });
    ev('prompt_run.completed', {
      id: note('prompt_run', newId()), run_group_id: p3.groups[1], project_id: p3.id, prompt_id: p6.prompts[0], engine_id: engines[3],
      status: 'succeeded', completed_at: iso(BASE_DAY + 3 * DAY), response_excerpt: 'crossed zq3zq',
      mentions: [{ entity_type: 'brand', name: 'Brand zq3zq', position: 2 }], citations: [],
    });
    // A prompt of project 9 that lists a segment of project 12, and a mention in project 9 of a competitor of project 12.
    const p9 = projects[9]!;
    const p12 = projects[12]!;
    ev('prompt.upserted', { id: note('prompt', newId()), project_id: p9.id, text: 'mixed zq9zq', segment_ids: [p12.segments[0], p9.segments[0]], active: true });
    ev('prompt_run.completed', {
      id: note('prompt_run', newId()), run_group_id: p9.groups[0], project_id: p9.id, prompt_id: p9.prompts[0], engine_id: engines[1],
      status: 'succeeded', completed_at: iso(BASE_DAY + 2 * DAY + 7), mentions: [{ entity_type: 'competitor', competitor_id: p12.competitors[0], name: 'Rival zq9zq', position: 1 }],
      citations: [],
    });
  }

  // Mention ids as the API shows them, for the "every id of every kind" sweep.
  for (const e of events) {
    if (e.type !== 'prompt_run.completed') continue;
    const mentions = e.data.mentions as unknown[];
    mentions.forEach((_, i) => note('mention', mentionId(e.data.id as string, i)));
  }

  // Applied in a seeded shuffled order: the projector's results must not depend on arrival order.
  for (let i = events.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [events[i], events[j]] = [events[j]!, events[i]!];
  }
  return { events, keys, engines, ids };
}

/**
 * Changes that arrive while the service is serving (and has remembered who sees what): account 0's
 * first key revoked, the share of project 0 with account 1 revoked, project 1 deleted, project 2
 * shared with account 6 (which saw nothing), project 4 moved from account 1 to account 5.
 * Returns the new events and the world as it is after them.
 */
export function liveChanges(world: World): { events: Ev[]; world: World; touched: Set<string> } {
  const r = rng(world.events.length);
  const at = iso(BASE_DAY + 30 * DAY);
  const p = world.ids.project!;
  const a = world.ids.account!;
  const e = (type: string, data: Record<string, unknown>): Ev => ({ event_id: uuidOf(r), type, schema_version: 1, occurred_at: at, data });
  const moved = world.events.filter((x) => x.type === 'project.upserted' && x.data.id === p[4])
    .sort((x, y) => (x.occurred_at < y.occurred_at ? 1 : -1))[0]!;
  const events = [
    e('api_key.revoked', { key_id: world.ids.api_key![0], revoked_at: at }),
    e('project.access_revoked', { project_id: p[0], account_id: a[1] }),
    e('project.deleted', { id: p[1] }),
    e('project.access_granted', { project_id: p[2], account_id: a[6] }),
    e('project.upserted', { ...moved.data, company_id: a[5] }),
  ];
  const keys = world.keys.map((k, i) => (i === 0 ? { ...k, label: `${k.label} (revoked while serving)`, status: 'revoked' as const } : k));
  return { events, world: { ...world, keys, events: [...world.events, ...events] }, touched: new Set([p[0]!, p[1]!, p[2]!, p[4]!]) };
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

// ---------------------------------------------------------------------------------------------
// The oracle: who may see what, from the events alone.

interface Version { at: string; id: string }
const newer = (a: Version, b: Version | undefined): boolean => !b || a.at > b.at || (a.at === b.at && a.id > b.id);
const versionOf = (e: Ev): Version => ({ at: new Date(e.occurred_at).toISOString(), id: e.event_id });

export interface Oracle {
  /** The account of a key's SHA-256, or null for an unknown or revoked key. */
  accountOfKeyHash: Map<string, string | null>;
  /** Projects each account may see. */
  visible: Map<string, Set<string>>;
  /** The project of each started run group. */
  groupProject: Map<string, string>;
  /** Each live project's name (for the order of /projects) and owner. */
  live: Map<string, { name: string; owner: string }>;
  /** uuids that appear in the events of each project: what a body of that project may show. */
  knownTo: Map<string, Set<string>>;
  /** Markers (project numbers) in the texts of each project's events. */
  markersOf: Map<string, Set<string>>;
  /** The project each entity id was created in (its primary owner), for naming a leak. */
  ownerOf: Map<string, string>;
}

/** Folds the events the way the product spec defines them, independent of the order they are in. */
export function oracle(events: readonly Ev[], engines: readonly string[]): Oracle {
  const sorted = [...events].sort((a, b) => (newer(versionOf(a), versionOf(b)) ? 1 : -1));
  const projects = new Map<string, { v: Version; deleted: boolean; owner: string; name: string }>();
  const access = new Map<string, { v: Version; granted: boolean }>();
  const keyIssue = new Map<string, { v: Version; account: string; sha: string }>();
  const keyRevoked = new Set<string>();
  const groups = new Map<string, { v: Version; project: string }>();
  const posts = new Map<string, { v: Version; project: string }>();
  for (const e of sorted) {
    const d = e.data;
    const v = versionOf(e);
    switch (e.type) {
      case 'project.upserted':
        if (newer(v, projects.get(d.id as string)?.v)) projects.set(d.id as string, { v, deleted: false, owner: d.company_id as string, name: d.name as string });
        break;
      case 'project.deleted':
        if (newer(v, projects.get(d.id as string)?.v)) projects.set(d.id as string, { v, deleted: true, owner: '', name: '' });
        break;
      case 'project.access_granted':
      case 'project.access_revoked': {
        const k = `${d.project_id as string}|${d.account_id as string}`;
        if (newer(v, access.get(k)?.v)) access.set(k, { v, granted: e.type === 'project.access_granted' });
        break;
      }
      case 'api_key.issued':
        if (newer(v, keyIssue.get(d.key_id as string)?.v)) keyIssue.set(d.key_id as string, { v, account: d.account_id as string, sha: d.key_sha256 as string });
        break;
      case 'api_key.revoked':
        keyRevoked.add(d.key_id as string);
        break;
      case 'run_group.started':
        if (newer(v, groups.get(d.id as string)?.v)) groups.set(d.id as string, { v, project: d.project_id as string });
        break;
      case 'forum_post.discovered':
        if (newer(v, posts.get(d.id as string)?.v)) posts.set(d.id as string, { v, project: d.project_id as string });
        break;
      default:
        break;
    }
  }
  const accountOfKeyHash = new Map<string, string | null>();
  for (const [keyId, k] of keyIssue) accountOfKeyHash.set(k.sha, keyRevoked.has(keyId) ? null : k.account);
  const live = new Map<string, { name: string; owner: string }>();
  for (const [id, p] of projects) if (!p.deleted) live.set(id, { name: p.name, owner: p.owner });
  const visible = new Map<string, Set<string>>();
  const see = (account: string, project: string): void => {
    if (!live.has(project)) return;
    let s = visible.get(account);
    if (!s) visible.set(account, (s = new Set()));
    s.add(project);
  };
  for (const [id, p] of live) see(p.owner, id);
  for (const [k, a] of access) {
    const [project, account] = k.split('|') as [string, string];
    if (a.granted) see(account, project);
  }
  const groupProject = new Map<string, string>();
  for (const [id, g] of groups) groupProject.set(id, g.project);

  // Which project each event speaks for, and everything it names.
  const knownTo = new Map<string, Set<string>>();
  const markersOf = new Map<string, Set<string>>();
  const ownerOf = new Map<string, string>();
  const add = <T>(m: Map<string, Set<T>>, k: string, v: T): void => {
    let s = m.get(k);
    if (!s) m.set(k, (s = new Set()));
    s.add(v);
  };
  for (const e of events) {
    const d = e.data;
    let project: string | undefined;
    let primary: string | undefined;
    switch (e.type) {
      // Who a project is shared with is shown by no endpoint: grants make no id known to a project.
      case 'project.access_granted': case 'project.access_revoked': continue;
      case 'project.upserted': case 'project.deleted': project = primary = d.id as string; break;
      case 'run_group.completed': project = groupProject.get(d.id as string); break;
      case 'forum_post.updated': project = posts.get(d.id as string)?.project; break;
      default:
        if (typeof d.project_id === 'string') {
          project = d.project_id;
          primary = d.id as string | undefined;
        }
    }
    if (!project) continue;
    if (primary && !ownerOf.has(primary)) ownerOf.set(primary, project);
    walkStrings(d, (s) => {
      for (const u of s.match(UUID_IN_TEXT) ?? []) add(knownTo, project, u.toLowerCase());
      for (const m of s.matchAll(MARKER_IN_TEXT)) add(markersOf, project, m[1]!);
    });
    if (e.type === 'prompt_run.completed') {
      (d.mentions as unknown[]).forEach((_, i) => {
        const mid = mentionId(d.id as string, i);
        add(knownTo, project, mid);
        if (!ownerOf.has(mid)) ownerOf.set(mid, project);
      });
    }
  }
  for (const e of engines) ownerOf.set(e, 'public');
  for (const e of events) if (e.type === 'account.upserted') ownerOf.set(e.data.account_id as string, `account "${e.data.name as string}"`);
  return { accountOfKeyHash, visible, groupProject, live, knownTo, markersOf, ownerOf };
}

/** Calls `fn` with every string in a JSON value (object keys excluded). */
export function walkStrings(v: unknown, fn: (s: string) => void): void {
  if (typeof v === 'string') fn(v);
  else if (Array.isArray(v)) for (const x of v) walkStrings(x, fn);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) walkStrings(x, fn);
}
