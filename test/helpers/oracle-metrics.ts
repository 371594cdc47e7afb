// An independent oracle for endpoints 1-11: it computes each response body straight from a list of
// events, the way docs/metrics.md and the product spec define them, run by run. It shares nothing
// with src/ (no SQL, no aggregate tables, no read models), so a test comparing the server's bodies
// with these catches a bug in either the projection or the read models.
import type { Ev } from './events';

type Json = Record<string, unknown>;

/** RFC 3339 as the API writes it: UTC, milliseconds. */
const iso = (t: string): string => new Date(t).toISOString();
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Adds `n` UTC days to a YYYY-MM-DD day. */
export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/**
 * ISO 8601 week of a day, as "YYYY-Www": the week belongs to the year of its Thursday, and week 1 is
 * the week holding that year's first Thursday (the textbook rule, not the server's Monday arithmetic).
 */
export function isoWeek(day: string): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  const weekday = d.getUTCDay() === 0 ? 7 : d.getUTCDay(); // 1 = Monday .. 7 = Sunday
  const thursday = new Date(d.getTime() + (4 - weekday) * 86_400_000);
  const year = thursday.getUTCFullYear();
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * 86_400_000));
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** A period's label as docs/metrics.md states it: the day; the Monday of its ISO week; the 1st of its month. */
export function periodLabel(day: string, interval: 'day' | 'week' | 'month'): string {
  if (interval === 'month') return `${day.slice(0, 7)}-01`;
  if (interval === 'day') return day;
  let monday = day;
  while (isoWeek(addDays(monday, -1)) === isoWeek(day)) monday = addDays(monday, -1); // walk back while still in the week
  return monday;
}

/** Last writer wins by (occurred_at, event_id): the state of one entity after every event about it. */
interface Versioned<T> {
  value: T | null;   // null once deleted
  firstUpsertAt: string | null;
  lastAt: string;    // occurred_at of the winning event
}

interface Mention { entity_type: 'brand' | 'competitor'; competitor_id?: string | null; name: string; position: number; sentiment?: number | null }
interface Citation { url: string; title?: string | null }
interface Run {
  id: string; project_id: string; prompt_id: string; engine_id: string; status: string; completed_at: string;
  mentions: Mention[]; citations: Citation[];
}

/** Best (lowest) position of the matching mentions of one run, with that mention's sentiment. */
interface Best { position: number; sentiment: number | null }

function best(run: Run, match: (m: Mention) => boolean): Best | null {
  let b: Mention | null = null;
  for (const m of run.mentions) if (match(m) && (b === null || m.position < b.position)) b = m;
  return b && { position: b.position, sentiment: b.sentiment ?? null };
}

/**
 * Wilson 95 % interval of k successes in n, per docs/metrics.md "Confidence intervals", written in the
 * textbook's other arrangement (k and n, not p) so it shares no expression with src/: z = 1.959964;
 * null when n = 0; the bound at 0 of n (n of n) is 0 (1) exactly.
 */
export function wilsonOracle(k: number, n: number): { low: number; high: number } | null {
  if (n === 0) return null;
  const z = 1.959964;
  const root = z * Math.sqrt(z * z + (4 * k * (n - k)) / n);
  const over = 2 * (n + z * z);
  return { low: k === 0 ? 0 : (2 * k + z * z - root) / over, high: k === n ? 1 : (2 * k + z * z + root) / over };
}

/** Figures of one entity over a set of runs, per docs/metrics.md "Formulas". */
interface Figures {
  runs: number; mentioned: number; mention_rate: number; mention_rate_ci: { low: number; high: number } | null;
  average_rank: number | null; sentiment: number | null; score: number | null;
}

function figures(runs: Run[], pick: (r: Run) => Best | null): Figures {
  const bests = runs.map(pick);
  const hit = bests.filter((b): b is Best => b !== null);
  const withSentiment = hit.filter((b) => b.sentiment !== null);
  const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    runs: runs.length,
    mentioned: hit.length,
    mention_rate: runs.length === 0 ? 0 : hit.length / runs.length,
    mention_rate_ci: wilsonOracle(hit.length, runs.length),
    average_rank: hit.length === 0 ? null : mean(hit.map((b) => b.position)),
    sentiment: withSentiment.length === 0 ? null : mean(withSentiment.map((b) => b.sentiment!)),
    // 100 x the mean over runs of 1/position, 0 for a run that does not mention the entity.
    score: runs.length === 0 ? null : 100 * mean(bests.map((b) => (b === null ? 0 : 1 / b.position))),
  };
}

/** x of n. */
export type XN = readonly [x: number, n: number];

/** Oracle.rateCounts. */
export interface RateCounts {
  brand: XN;
  voice: number;
  competitors: Map<string, number>;
  prompts: Map<string, XN>;
  engines: Map<string, XN>;
  segments: Map<string, { brand: XN; voice: number }>;
}

const share = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);

function hostOf(url: string): string {
  return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
}

/** 'acme.com', 'www.Acme.com' or 'https://acme.com/x' as a bare lowercase host. */
function bareDomain(value: string): string {
  return hostOf(/^https?:\/\//i.test(value) ? value : `https://${value}`);
}

export class Oracle {
  private readonly state = new Map<string, Versioned<Json>>();
  private readonly runs = new Map<string, Versioned<Run>>();

  /**
   * start_date..end_date of the requests being checked (docs/metrics.md "Date ranges"): when set, it is
   * the window of every windowed figure; null, the current window of the data.
   */
  range: { start: string; end: string } | null = null;

  constructor(events: readonly Ev[], private readonly windowDays = 7) {
    // Applying in (occurred_at, event_id) order is last-writer-wins whatever the arrival order.
    const ordered = [...events].sort((a, b) => cmp(iso(a.occurred_at), iso(b.occurred_at)) || cmp(a.event_id, b.event_id));
    for (const e of ordered) this.apply(e);
  }

  private put(key: string, value: Json | null, at: string, upsert: boolean): void {
    const prev = this.state.get(key);
    const first = upsert ? (prev?.firstUpsertAt && prev.firstUpsertAt < at ? prev.firstUpsertAt : at) : prev?.firstUpsertAt ?? null;
    this.state.set(key, { value, firstUpsertAt: first, lastAt: at });
  }

  private apply(e: Ev): void {
    const d = e.data;
    const at = iso(e.occurred_at);
    const [kind, verb] = e.type.split('.') as [string, string];
    switch (e.type) {
      case 'prompt_run.completed':
        this.runs.set(d.id as string, { value: { ...(d as unknown as Run), completed_at: iso(d.completed_at as string) }, firstUpsertAt: at, lastAt: at });
        return;
      case 'project.access_granted':
      case 'project.access_revoked':
        this.put(`access:${d.project_id as string}:${d.account_id as string}`, verb === 'access_granted' ? {} : null, at, false);
        return;
      case 'project.engine_tracked':
      case 'project.engine_untracked':
        return; // not used by endpoints 1-11: a run counts when its engine is known, tracked or not
      default:
    }
    // Accounts and keys decide who may ask, which the HTTP layer checks; the rest are entities by id.
    if (!['project', 'prompt', 'segment', 'competitor', 'engine', 'term'].includes(kind)) return;
    if (verb === 'upserted') this.put(`${kind}:${d.id as string}`, d, at, true);
    else if (verb === 'deleted') this.put(`${kind}:${d.id as string}`, null, at, false);
  }

  private live(kind: string): Array<{ v: Json; created: string; updated: string }> {
    const out: Array<{ v: Json; created: string; updated: string }> = [];
    for (const [key, s] of this.state) {
      if (key.startsWith(`${kind}:`) && s.value !== null) out.push({ v: s.value, created: s.firstUpsertAt!, updated: s.lastAt });
    }
    return out;
  }

  private get(kind: string, id: string): Json | null {
    return this.state.get(`${kind}:${id}`)?.value ?? null;
  }

  // ---- 1, 2: projects

  private projectBody(p: Json): Json {
    return {
      id: p.id, company_id: p.company_id, name: p.name, domain: p.domain ?? null, description: p.description ?? null,
      category_summary: p.category_summary ?? null, status: p.status, created_at: iso(p.created_at as string), updated_at: iso(p.updated_at as string),
    };
  }

  private visibleTo(accountId: string, p: Json): boolean {
    return p.company_id === accountId || this.get('access', `${p.id as string}:${accountId}`) !== null;
  }

  projects(accountId: string): Json[] {
    return this.live('project').map((x) => x.v).filter((p) => this.visibleTo(accountId, p))
      .sort((a, b) => cmp(a.name as string, b.name as string) || cmp(a.id as string, b.id as string))
      .map((p) => this.projectBody(p));
  }

  /** The project as the account sees it, or null (the API's 404). */
  project(accountId: string, projectId: string): Json | null {
    const p = this.get('project', projectId);
    return p && this.visibleTo(accountId, p) ? this.projectBody(p) : null;
  }

  // ---- which runs count, and the window

  private prompt(id: string): Json | null {
    return this.get('prompt', id);
  }

  /**
   * Succeeded runs of a known, non-deleted prompt of the run's own project and a known engine
   * (docs/metrics.md "Which runs count": another project's prompt is not the run's prompt).
   */
  private counted(projectId: string): Run[] {
    return [...this.runs.values()].map((s) => s.value!).filter((r) =>
      r.project_id === projectId && r.status === 'succeeded' && this.prompt(r.prompt_id)?.project_id === projectId && this.get('engine', r.engine_id) !== null);
  }

  /** Days D-(n-1)..D, D the day of the project's latest succeeded run; null without one. */
  window(projectId: string, days = this.windowDays): { start: string; end: string } | null {
    if (this.range) return this.range;
    const succeeded = [...this.runs.values()].map((s) => s.value!).filter((r) => r.project_id === projectId && r.status === 'succeeded');
    if (succeeded.length === 0) return null;
    const end = succeeded.map((r) => r.completed_at.slice(0, 10)).sort().at(-1)!;
    return { start: addDays(end, -(days - 1)), end };
  }

  private inWindow(projectId: string, engineIds: string[] | null, days = this.windowDays): Run[] {
    const w = this.window(projectId, days);
    if (!w) return [];
    const only = engineIds && new Set(engineIds.map((e) => e.toLowerCase()));
    return this.counted(projectId).filter((r) => {
      const day = r.completed_at.slice(0, 10);
      return day >= w.start && day <= w.end && (!only || only.has(r.engine_id));
    });
  }

  private trackedCompetitors(projectId: string): Json[] {
    return this.live('competitor').map((x) => x.v).filter((c) => c.project_id === projectId)
      .sort((a, b) => cmp(a.name as string, b.name as string) || cmp(a.id as string, b.id as string));
  }

  private brand = (r: Run): Best | null => best(r, (m) => m.entity_type === 'brand');
  private competitor = (id: string) => (r: Run): Best | null => best(r, (m) => m.entity_type === 'competitor' && m.competitor_id === id);

  /** Runs mentioning the brand + for each tracked competitor the runs mentioning it: the share-of-voice total. */
  private voiceTotal(projectId: string, runs: Run[]): number {
    let total = figures(runs, this.brand).mentioned;
    for (const c of this.trackedCompetitors(projectId)) total += figures(runs, this.competitor(c.id as string)).mentioned;
    return total;
  }

  private engineName(id: string): string {
    return this.get('engine', id)!.name as string;
  }

  // ---- 3: visibility

  visibility(projectId: string, engineIds: string[] | null = null): Json {
    const w = this.window(projectId);
    const runs = this.inWindow(projectId, engineIds);
    const f = figures(runs, this.brand);
    const total = this.voiceTotal(projectId, runs);
    const entry = (rs: Run[]) => {
      const g = figures(rs, this.brand);
      return { run_count: g.runs, mention_rate: g.mention_rate, mention_rate_ci: g.mention_rate_ci, average_rank: g.average_rank, sentiment: g.sentiment, score: g.score };
    };
    const byPrompt = groupBy(runs, (r) => r.prompt_id);
    const byEngine = groupBy(runs, (r) => r.engine_id);
    return {
      project_id: projectId,
      window_start: w?.start ?? null,
      window_end: w?.end ?? null,
      current_score: f.score,
      mention_rate: f.mention_rate,
      mention_rate_ci: f.mention_rate_ci,
      average_rank: f.average_rank,
      sentiment: f.sentiment,
      share_of_voice: share(f.mentioned, total),
      share_of_voice_ci: wilsonOracle(f.mentioned, total),
      prompt_count: byPrompt.size,
      run_count: f.runs,
      top_competitors: this.trackedCompetitors(projectId).map((c) => {
        const g = figures(runs, this.competitor(c.id as string));
        return {
          competitor_id: c.id, name: c.name, mention_rate: g.mention_rate, mention_rate_ci: g.mention_rate_ci, average_rank: g.average_rank,
          share_of_voice: share(g.mentioned, total), share_of_voice_ci: wilsonOracle(g.mentioned, total),
        };
      }).sort((a, b) => b.mention_rate - a.mention_rate || cmp(a.name as string, b.name as string) || cmp(a.competitor_id as string, b.competitor_id as string))
        .slice(0, 10),
      prompt_breakdown: [...byPrompt].map(([id, rs]) => ({ prompt_id: id, text: this.prompt(id)!.text, ...entry(rs) }))
        .sort((a, b) => cmp(a.text as string, b.text as string) || cmp(a.prompt_id, b.prompt_id)),
      engine_breakdown: [...byEngine].map(([id, rs]) => ({ engine_id: id, name: this.engineName(id), ...entry(rs) }))
        .sort((a, b) => cmp(a.name, b.name) || cmp(a.engine_id, b.engine_id)),
    };
  }

  // ---- 4, 5: trend and daily scores

  private day(projectId: string, date: string, runs: Run[]): Json {
    const f = figures(runs, this.brand);
    const total = this.voiceTotal(projectId, runs);
    return {
      date, score: f.score, mention_rate: f.mention_rate, mention_rate_ci: f.mention_rate_ci, average_rank: f.average_rank, sentiment: f.sentiment,
      share_of_voice: share(f.mentioned, total), share_of_voice_ci: wilsonOracle(f.mentioned, total), run_count: f.runs,
    };
  }

  /** Per day, or per ISO week or month (labelled by its first day): the runs of the period, however many days of it the window holds. */
  timeseries(projectId: string, interval: 'day' | 'week' | 'month' = 'day'): Json[] {
    const runs = this.inWindow(projectId, null, 365);
    return [...groupBy(runs, (r) => periodLabel(r.completed_at.slice(0, 10), interval))].sort(([a], [b]) => cmp(a, b)).map(([date, rs]) => ({
      ...this.day(projectId, date, rs),
      engines: [...groupBy(rs, (r) => r.engine_id)].map(([id, ers]) => {
        const g = figures(ers, this.brand);
        return { engine_id: id, name: this.engineName(id), score: g.score, mention_rate: g.mention_rate, mention_rate_ci: g.mention_rate_ci, run_count: g.runs };
      }).sort((a, b) => cmp(a.name, b.name) || cmp(a.engine_id, b.engine_id)).map(({ name: _name, ...e }) => e),
    }));
  }

  /** Daily scores with a range or an interval: the newest `limit` periods of the window (365 days unless `range`). */
  periodScores(projectId: string, interval: 'day' | 'week' | 'month', limit = 30): Json[] {
    return [...groupBy(this.inWindow(projectId, null, 365), (r) => periodLabel(r.completed_at.slice(0, 10), interval))].sort(([a], [b]) => cmp(b, a)).slice(0, limit)
      .map(([date, rs]) => ({ ...this.day(projectId, date, rs), prompt_count: new Set(rs.map((r) => r.prompt_id)).size }));
  }

  dailyScores(projectId: string, limit = 30): Json[] {
    return [...groupBy(this.counted(projectId), (r) => r.completed_at.slice(0, 10))].sort(([a], [b]) => cmp(b, a)).slice(0, limit)
      .map(([date, rs]) => ({ ...this.day(projectId, date, rs), prompt_count: new Set(rs.map((r) => r.prompt_id)).size }));
  }

  // ---- 6, 7, 9: catalog lists

  prompts(projectId: string): Json[] {
    return this.live('prompt').filter((x) => x.v.project_id === projectId)
      .sort((a, b) => cmp(a.v.text as string, b.v.text as string) || cmp(a.v.id as string, b.v.id as string))
      .map(({ v, created, updated }) => ({
        id: v.id, project_id: v.project_id, text: v.text, segment_ids: v.segment_ids, active: v.active, created_at: created, updated_at: updated,
      }));
  }

  private activeSegments(projectId: string) {
    return this.live('segment').filter((x) => x.v.project_id === projectId && x.v.active === true)
      .sort((a, b) => cmp(a.v.name as string, b.v.name as string) || cmp(a.v.id as string, b.v.id as string));
  }

  private promptsOfSegment(projectId: string, segmentId: string): Set<string> {
    return new Set(this.live('prompt').map((x) => x.v)
      .filter((p) => p.project_id === projectId && (p.segment_ids as string[]).includes(segmentId)).map((p) => p.id as string));
  }

  segments(projectId: string): Json[] {
    return this.activeSegments(projectId).map(({ v, created, updated }) => ({
      id: v.id, project_id: v.project_id, name: v.name, description: v.description ?? null,
      prompt_count: this.promptsOfSegment(projectId, v.id as string).size, created_at: created, updated_at: updated,
    }));
  }

  competitors(projectId: string): Json[] {
    return this.trackedCompetitors(projectId).map((c) => {
      const s = this.state.get(`competitor:${c.id as string}`)!;
      return { id: c.id, project_id: c.project_id, name: c.name, domain: c.domain ?? null, aliases: c.aliases, created_at: s.firstUpsertAt, updated_at: s.lastAt };
    });
  }

  // ---- 8: segment analytics

  segmentAnalytics(projectId: string, engineIds: string[] | null = null): Json[] {
    const runs = this.inWindow(projectId, engineIds);
    return this.activeSegments(projectId).map(({ v }) => {
      const members = this.promptsOfSegment(projectId, v.id as string);
      const rs = runs.filter((r) => members.has(r.prompt_id));
      const f = figures(rs, this.brand);
      const total = this.voiceTotal(projectId, rs);
      return {
        segment_id: v.id, name: v.name, prompt_count: new Set(rs.map((r) => r.prompt_id)).size, run_count: f.runs,
        mention_rate: f.mention_rate, mention_rate_ci: f.mention_rate_ci, average_rank: f.average_rank, sentiment: f.sentiment, score: f.score,
        share_of_voice: share(f.mentioned, total), share_of_voice_ci: wilsonOracle(f.mentioned, total),
      };
    });
  }

  // ---- 10: competitor rankings

  competitorRankings(projectId: string, engineIds: string[] | null = null): Json[] {
    const runs = this.inWindow(projectId, engineIds);
    const total = this.voiceTotal(projectId, runs);
    const entry = (type: string, id: string | null, name: string, f: Figures) => ({
      entity_type: type, competitor_id: id, name, mention_count: f.mentioned, mention_rate: f.mention_rate, mention_rate_ci: f.mention_rate_ci,
      average_rank: f.average_rank, sentiment: f.sentiment, share_of_voice: share(f.mentioned, total), share_of_voice_ci: wilsonOracle(f.mentioned, total),
      score: f.score,
    });
    const entries = [
      entry('brand', null, this.get('project', projectId)!.name as string, figures(runs, this.brand)),
      ...this.trackedCompetitors(projectId).map((c) => entry('competitor', c.id as string, c.name as string, figures(runs, this.competitor(c.id as string)))),
    ];
    entries.sort((a, b) => {
      if (a.score !== b.score) {
        if (a.score === null) return 1;
        if (b.score === null) return -1;
        return b.score - a.score;
      }
      return cmp(a.name, b.name) || cmp(a.competitor_id ?? '', b.competitor_id ?? '');
    });
    return entries.map((e, i) => ({ rank: i + 1, ...e }));
  }

  // ---- the counts behind each rate with an interval (x of n), over the window: what a comparison's changes are computed from

  /**
   * For visibility, segment analytics and competitor rankings: the brand's mention rate (mentioning runs
   * of runs) and share of voice (of `voice`, the brand's plus each tracked competitor's mentioning runs);
   * each tracked competitor's mentioning runs (of the brand's runs, and of `voice`); each prompt's and
   * engine's brand mention rate; each active segment's brand counts and voice over its prompts' runs.
   */
  rateCounts(projectId: string, engineIds: string[] | null = null): RateCounts {
    const runs = this.inWindow(projectId, engineIds);
    const xn = (rs: Run[]): XN => [figures(rs, this.brand).mentioned, rs.length];
    return {
      brand: xn(runs),
      voice: this.voiceTotal(projectId, runs),
      competitors: new Map(this.trackedCompetitors(projectId).map((c) => [c.id as string, figures(runs, this.competitor(c.id as string)).mentioned])),
      prompts: new Map([...groupBy(runs, (r) => r.prompt_id)].map(([id, rs]) => [id, xn(rs)])),
      engines: new Map([...groupBy(runs, (r) => r.engine_id)].map(([id, rs]) => [id, xn(rs)])),
      segments: new Map(this.activeSegments(projectId).map(({ v }) => {
        const members = this.promptsOfSegment(projectId, v.id as string);
        const rs = runs.filter((r) => members.has(r.prompt_id));
        return [v.id as string, { brand: xn(rs), voice: this.voiceTotal(projectId, rs) }];
      })),
    };
  }

  // ---- 11: citations

  citations(projectId: string, engineIds: string[] | null = null, limit = 100): Json[] {
    const project = this.get('project', projectId)!;
    const own = [project.domain as string | null | undefined, ...this.live('term').map((x) => x.v)
      .filter((t) => t.project_id === projectId && t.kind === 'domain').map((t) => t.value as string)]
      .filter((d): d is string => !!d).map(bareDomain);
    interface Acc { url: string; runs: Set<string>; prompts: Set<string>; engines: Set<string>; first: string; last: string; title: string | null; titleAt: string }
    const byUrl = new Map<string, Acc>();
    for (const r of this.inWindow(projectId, engineIds)) {
      for (const c of r.citations) {
        let a = byUrl.get(c.url);
        if (!a) byUrl.set(c.url, (a = { url: c.url, runs: new Set(), prompts: new Set(), engines: new Set(), first: r.completed_at, last: r.completed_at, title: null, titleAt: '' }));
        a.runs.add(r.id); // an answer citing a URL twice counts once
        a.prompts.add(r.prompt_id);
        a.engines.add(r.engine_id);
        if (r.completed_at < a.first) a.first = r.completed_at;
        if (r.completed_at > a.last) a.last = r.completed_at;
        // The title of the latest titled citation (the fixture has no two titles at one instant).
        if (c.title && r.completed_at > a.titleAt) {
          a.title = c.title;
          a.titleAt = r.completed_at;
        }
      }
    }
    return [...byUrl.values()].sort((a, b) => b.runs.size - a.runs.size || cmp(a.url, b.url)).slice(0, limit).map((a) => {
      const domain = hostOf(a.url);
      return {
        url: a.url, domain, title: a.title, citation_count: a.runs.size, prompt_count: a.prompts.size, engine_ids: [...a.engines].sort(),
        is_own_domain: own.some((base) => domain === base || domain.endsWith(`.${base}`)), first_cited_at: a.first, last_cited_at: a.last,
      };
    });
  }
}

function groupBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of xs) {
    const list = out.get(key(x));
    if (list) list.push(x);
    else out.set(key(x), [x]);
  }
  return out;
}

/**
 * The oracle averages as the docs word it (100 x mean of 1/position), the server divides sums: the
 * two may differ in the last bit of a float. Twelve significant digits still catch any rounding.
 */
export function canonical(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? v : Number(v.toPrecision(12));
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canonical(x)]));
  return v;
}
