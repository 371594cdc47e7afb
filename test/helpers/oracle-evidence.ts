// An independent model of endpoints 12-22 (mentions, referrers, warm leads, engines, terms, runs,
// run groups, run results, forum metrics/leads/opportunities) and of who sees which project.
// It folds a list of events with plain TypeScript, straight from docs/metrics.md, docs/decisions.md and
// the product spec: no SQLite, nothing from src/. Arrival order is ignored on purpose: every fact is
// last-writer-wins by (occurred_at, event_id), so the answer must not depend on it.
import { createHash } from 'node:crypto';
import type { Ev } from './events';

/** docs/decisions.md: a mention's id is a name-based uuid (version 5 layout) of its run id and place in the answer. */
export function mentionId(runId: string, idx: number): string {
  const h = createHash('sha1').update(`${runId}/mention/${idx}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

type Data = Record<string, unknown>;
interface Version { at: string; id: string }

const newer = (a: Version, b: Version | undefined): boolean => !b || a.at > b.at || (a.at === b.at && a.id > b.id);
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The winning event among several versions of one fact. */
class Lww<T> {
  readonly byKey = new Map<string, { v: Version; value: T }>();
  put(key: string, v: Version, value: T): void {
    if (newer(v, this.byKey.get(key)?.v)) this.byKey.set(key, { v, value });
  }
  get(key: string): T | undefined {
    return this.byKey.get(key)?.value;
  }
  at(key: string): Version | undefined {
    return this.byKey.get(key)?.v;
  }
}

interface Mention { entity_type: 'brand' | 'competitor'; competitor_id: string | null; name: string; position: number; sentiment: number | null; snippet: string | null }
interface Citation { url: string; domain: string; title: string | null; position: number | null }
interface Run {
  id: string; run_group_id: string; project_id: string; prompt_id: string; engine_id: string; status: string;
  completed_at: string; response_excerpt: string | null; mentions: Mention[]; citations: Citation[];
}

/** Host of a URL, lower case, without a leading www. (how docs/metrics.md names a domain). */
export function hostOf(url: string): string {
  return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
}

/** A bare domain, a host or a URL as a domain: 'https://www.Wile.com/' -> 'wile.com'. */
function asDomain(value: string): string {
  return hostOf(/^https?:\/\//i.test(value) ? value : `https://${value}`);
}

const under = (host: string, base: string): boolean => host === base || host.endsWith('.' + base);

/** docs/metrics.md, warm leads: reddit, quora, Stack Exchange / Stack Overflow, Hacker News, forum-like hosts, Discourse. */
export function platformOf(host: string): string | null {
  if (under(host, 'reddit.com')) return 'reddit';
  if (under(host, 'quora.com')) return 'quora';
  if (under(host, 'stackexchange.com') || under(host, 'stackoverflow.com')) return 'stackexchange';
  if (under(host, 'news.ycombinator.com')) return 'hackernews';
  if (/^(forum|forums|community|discuss)\./.test(host) || host.includes('discourse')) return 'forum';
  return null;
}

const addDays = (day: string, n: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

export interface Query { limit?: number; engineIds?: string[]; entityType?: 'brand' | 'competitor' }

export class Oracle {
  private readonly keys = new Map<string, string>();          // sha256 -> account
  private readonly revokedKeys = new Set<string>();            // key ids
  private readonly keyIds = new Map<string, string>();         // key id -> sha256
  private readonly projects = new Lww<Data | null>();
  private readonly access = new Lww<boolean>();               // `${project}|${account}`
  private readonly engines = new Lww<Data>();
  private readonly tracking = new Lww<{ tracked: boolean; since: string }>();
  private readonly terms = new Lww<Data | null>();
  private readonly termCreated = new Map<string, string>();
  private readonly prompts = new Lww<Data | null>();
  private readonly competitors = new Lww<Data | null>();
  private readonly started = new Lww<Data>();
  private readonly completed = new Lww<Data>();
  private readonly runs = new Lww<Run>();
  private readonly discovered = new Lww<Data>();
  private readonly fields = new Lww<unknown>();               // `${post}|${field}`

  constructor(events: readonly Ev[], private readonly windowDays = 7) {
    for (const e of events) this.fold(e);
  }

  private fold(e: Ev): void {
    const d = e.data;
    const v: Version = { at: e.occurred_at, id: e.event_id };
    const s = (k: string): string => d[k] as string;
    const opt = <T>(k: string): T | null => (d[k] === undefined ? null : (d[k] as T));
    switch (e.type) {
      case 'api_key.issued': this.keys.set(s('key_sha256'), s('account_id')); this.keyIds.set(s('key_id'), s('key_sha256')); break;
      case 'api_key.revoked': this.revokedKeys.add(s('key_id')); break;
      case 'project.upserted': this.projects.put(s('id'), v, d); break;
      case 'project.deleted': this.projects.put(s('id'), v, null); break;
      case 'project.access_granted': this.access.put(`${s('project_id')}|${s('account_id')}`, v, true); break;
      case 'project.access_revoked': this.access.put(`${s('project_id')}|${s('account_id')}`, v, false); break;
      case 'engine.upserted': this.engines.put(s('id'), v, d); break;
      case 'project.engine_tracked': this.tracking.put(`${s('project_id')}|${s('engine_id')}`, v, { tracked: true, since: s('at') }); break;
      case 'project.engine_untracked': this.tracking.put(`${s('project_id')}|${s('engine_id')}`, v, { tracked: false, since: s('at') }); break;
      case 'term.upserted': {
        this.terms.put(s('id'), v, d);
        const c = this.termCreated.get(s('id'));
        if (!c || e.occurred_at < c) this.termCreated.set(s('id'), e.occurred_at);
        break;
      }
      case 'term.deleted': this.terms.put(s('id'), v, null); break;
      case 'prompt.upserted': this.prompts.put(s('id'), v, d); break;
      case 'prompt.deleted': this.prompts.put(s('id'), v, null); break;
      case 'competitor.upserted': this.competitors.put(s('id'), v, d); break;
      case 'competitor.deleted': this.competitors.put(s('id'), v, null); break;
      case 'run_group.started': this.started.put(s('id'), v, d); break;
      case 'run_group.completed': this.completed.put(s('id'), v, d); break;
      case 'prompt_run.completed':
        this.runs.put(s('id'), v, {
          id: s('id'), run_group_id: s('run_group_id'), project_id: s('project_id'), prompt_id: s('prompt_id'), engine_id: s('engine_id'),
          status: s('status'), completed_at: s('completed_at'), response_excerpt: opt<string>('response_excerpt'),
          mentions: (d.mentions as Data[]).map((m) => ({
            entity_type: m.entity_type as Mention['entity_type'], competitor_id: (m.competitor_id as string | undefined) ?? null,
            name: m.name as string, position: m.position as number, sentiment: (m.sentiment as number | undefined) ?? null,
            snippet: (m.snippet as string | undefined) ?? null,
          })),
          citations: (d.citations as Data[]).map((c) => ({
            url: c.url as string, domain: hostOf(c.url as string), title: (c.title as string | undefined) ?? null,
            position: (c.position as number | undefined) ?? null,
          })),
        });
        break;
      case 'forum_post.discovered':
        this.discovered.put(s('id'), v, d);
        // A field is reported only when the event carries it: an omitted comment_count reports nothing.
        for (const f of ['relevance', 'intent', 'comment_count', 'score']) if (f in d) this.fields.put(`${s('id')}|${f}`, v, d[f]);
        break;
      case 'forum_post.updated':
        for (const f of ['status', 'relevance', 'intent', 'comment_count', 'score']) if (f in d) this.fields.put(`${s('id')}|${f}`, v, d[f]);
        break;
      default: break;
    }
  }

  // ---- Scoping

  accountOf(keySha256: string): string | null {
    const account = this.keys.get(keySha256);
    const keyId = [...this.keyIds].find(([, sha]) => sha === keySha256)?.[0];
    return account && keyId && !this.revokedKeys.has(keyId) ? account : null;
  }

  /** An account sees the projects it owns and those shared with it (last grant or revoke wins), never deleted ones. */
  canSee(account: string, projectId: string): boolean {
    const p = this.projects.get(projectId);
    if (!p) return false;
    return p.company_id === account || this.access.get(`${projectId}|${account}`) === true;
  }

  runGroupProject(groupId: string): string | null {
    return (this.started.get(groupId)?.project_id as string | undefined) ?? null;
  }

  // ---- Runs that count (docs/metrics.md "Which runs count")

  private promptLive(id: string): boolean {
    return !!this.prompts.get(id);
  }

  private counted(r: Run): boolean {
    return r.status === 'succeeded' && this.promptLive(r.prompt_id) && this.engines.get(r.engine_id) !== undefined;
  }

  private allRuns(): Run[] {
    return [...this.runs.byKey.values()].map((x) => x.value);
  }

  /** The current window: windowDays UTC days ending with the day of the project's latest succeeded run. */
  window(projectId: string): { start: string; end: string } | null {
    const days = this.allRuns().filter((r) => r.project_id === projectId && r.status === 'succeeded').map((r) => r.completed_at.slice(0, 10)).sort();
    const end = days[days.length - 1];
    return end ? { start: addDays(end, -(this.windowDays - 1)), end } : null;
  }

  private windowRuns(projectId: string): Run[] {
    const w = this.window(projectId);
    if (!w) return [];
    return this.allRuns().filter((r) => r.project_id === projectId && this.counted(r)
      && r.completed_at.slice(0, 10) >= w.start && r.completed_at.slice(0, 10) <= w.end);
  }

  // ---- 12 mentions: every mention of counted runs, newest run first (equal times: by run id), then answer order

  mentions(projectId: string, q: Query = {}): Data[] {
    const runs = this.allRuns()
      .filter((r) => r.project_id === projectId && this.counted(r) && (!q.engineIds || q.engineIds.includes(r.engine_id)))
      .sort((a, b) => cmp(b.completed_at, a.completed_at) || cmp(a.id, b.id));
    const out: Data[] = [];
    for (const r of runs) {
      r.mentions.forEach((m, idx) => {
        if (q.entityType && m.entity_type !== q.entityType) return;
        out.push({
          id: mentionId(r.id, idx), prompt_run_id: r.id, run_group_id: r.run_group_id, prompt_id: r.prompt_id, engine_id: r.engine_id,
          entity_type: m.entity_type, competitor_id: m.competitor_id, name: m.name, position: m.position,
          sentiment: m.sentiment, snippet: m.snippet, observed_at: r.completed_at,
        });
      });
    }
    return out.slice(0, q.limit ?? 100);
  }

  // ---- Cited URLs over the window (a run counts once per URL), the base of 13 and 14

  private citedUrls(projectId: string): Array<{ url: string; domain: string; title: string | null; count: number; prompts: Set<string>; engines: Set<string>; last: string; titleAt: string }> {
    const byUrl = new Map<string, { url: string; domain: string; title: string | null; count: number; prompts: Set<string>; engines: Set<string>; last: string; titleAt: string }>();
    for (const r of this.windowRuns(projectId)) {
      const urls = new Map<string, string | null>();
      for (const c of r.citations) if (!urls.has(c.url) || urls.get(c.url) === null) urls.set(c.url, c.title);
      for (const [url, title] of urls) {
        let u = byUrl.get(url);
        if (!u) byUrl.set(url, (u = { url, domain: hostOf(url), title: null, count: 0, prompts: new Set(), engines: new Set(), last: '', titleAt: '' }));
        u.count += 1;
        u.prompts.add(r.prompt_id);
        u.engines.add(r.engine_id);
        if (r.completed_at > u.last) u.last = r.completed_at;
        if (title !== null && r.completed_at > u.titleAt) {
          u.title = title;
          u.titleAt = r.completed_at;
        }
      }
    }
    return [...byUrl.values()].sort((a, b) => b.count - a.count || cmp(a.url, b.url));
  }

  private liveDomains(projectId: string): { own: string[]; rivals: string[] } {
    const own: string[] = [];
    const p = this.projects.get(projectId);
    if (p?.domain) own.push(asDomain(p.domain as string));
    for (const [, t] of this.terms.byKey) if (t.value && t.value.project_id === projectId && t.value.kind === 'domain') own.push(asDomain(t.value.value as string));
    const rivals: string[] = [];
    for (const [, c] of this.competitors.byKey) if (c.value && c.value.project_id === projectId && c.value.domain) rivals.push(asDomain(c.value.domain as string));
    return { own, rivals };
  }

  // ---- 13 referrers

  referrers(projectId: string): Data[] {
    const byDomain = new Map<string, { count: number; urls: number; engines: Set<string> }>();
    for (const u of this.citedUrls(projectId)) {
      let d = byDomain.get(u.domain);
      if (!d) byDomain.set(u.domain, (d = { count: 0, urls: 0, engines: new Set() }));
      d.count += u.count;
      d.urls += 1;
      for (const e of u.engines) d.engines.add(e);
    }
    const total = [...byDomain.values()].reduce((n, d) => n + d.count, 0);
    const { own, rivals } = this.liveDomains(projectId);
    return [...byDomain].sort(([a, x], [b, y]) => y.count - x.count || cmp(a, b)).map(([domain, d]) => ({
      domain, citation_count: d.count, url_count: d.urls, share: d.count / total, engine_ids: [...d.engines].sort(),
      is_own_domain: own.some((o) => under(domain, o)), is_competitor_domain: rivals.some((o) => under(domain, o)),
    }));
  }

  // ---- 14 warm leads

  warmLeads(projectId: string): Data[] {
    return this.citedUrls(projectId).filter((u) => u.count >= 2 && platformOf(u.domain) !== null).map((u) => ({
      url: u.url, domain: u.domain, platform: platformOf(u.domain), title: u.title, citation_count: u.count,
      prompt_count: u.prompts.size, engine_ids: [...u.engines].sort(), last_cited_at: u.last,
    }));
  }

  // ---- 15 engines, 16 terms

  trackedEngines(projectId: string): Data[] {
    const out: Data[] = [];
    for (const [key, t] of this.tracking.byKey) {
      const [p, e] = key.split('|') as [string, string];
      const engine = this.engines.get(e);
      if (p !== projectId || !t.value.tracked || !engine) continue;
      out.push({ id: e, name: engine.name, provider: engine.provider, model: (engine.model as string | undefined) ?? null, tracked_since: t.value.since });
    }
    return out.sort((a, b) => cmp(a.name as string, b.name as string) || cmp(a.id as string, b.id as string));
  }

  liveTerms(projectId: string): Data[] {
    const out: Data[] = [];
    for (const [id, t] of this.terms.byKey) {
      if (!t.value || t.value.project_id !== projectId) continue;
      out.push({ id, project_id: projectId, value: t.value.value, kind: t.value.kind, created_at: this.termCreated.get(id) });
    }
    return out.sort((a, b) => cmp(a.value as string, b.value as string) || cmp(a.id as string, b.id as string));
  }

  // ---- 17 runs, 18 run group, 19 results

  private groupRuns(groupId: string): Run[] {
    return this.allRuns().filter((r) => r.run_group_id === groupId).sort((a, b) => cmp(a.completed_at, b.completed_at) || cmp(a.id, b.id));
  }

  runGroup(groupId: string): Data {
    const s = this.started.get(groupId)!;
    const c = this.completed.get(groupId);
    const runs = this.groupRuns(groupId);
    return {
      id: groupId, project_id: s.project_id, status: c ? c.status : 'running', trigger: (s.trigger as string | undefined) ?? null,
      started_at: s.started_at, completed_at: c ? c.completed_at : null, prompt_run_count: runs.length,
      succeeded_count: runs.filter((r) => r.status === 'succeeded').length, failed_count: runs.filter((r) => r.status === 'failed').length,
    };
  }

  runGroups(projectId: string): Data[] {
    return [...this.started.byKey].filter(([, s]) => s.value.project_id === projectId)
      .sort(([a, x], [b, y]) => cmp(y.value.started_at as string, x.value.started_at as string) || cmp(a, b))
      .map(([id]) => this.runGroup(id));
  }

  private brandBest(r: Run): Mention | undefined {
    let best: Mention | undefined;
    for (const m of r.mentions) if (m.entity_type === 'brand' && (!best || m.position < best.position)) best = m;
    return best;
  }

  runGroupWithRuns(groupId: string): Data {
    return {
      ...this.runGroup(groupId),
      prompt_runs: this.groupRuns(groupId).map((r) => {
        const best = this.brandBest(r);
        // mention_count and citation_count: the run's mentions and citations as the answer gave them
        // (the same lists /results shows), duplicates included.
        return {
          id: r.id, prompt_id: r.prompt_id, engine_id: r.engine_id, status: r.status, completed_at: r.completed_at,
          brand_mentioned: best !== undefined, brand_position: best?.position ?? null,
          mention_count: r.mentions.length, citation_count: r.citations.length,
        };
      }),
    };
  }

  /** The text of the run's prompt as it is now: null once deleted (a tombstone keeps no data), or if unknown in the run's project. */
  private promptTextOf(r: Run): string | null {
    const p = this.prompts.get(r.prompt_id);
    return p && p.project_id === r.project_id ? (p.text as string) : null;
  }

  runResults(groupId: string): Data[] {
    return this.groupRuns(groupId).map((r) => {
      const best = this.brandBest(r);
      return {
        prompt_run_id: r.id, prompt_id: r.prompt_id, prompt_text: this.promptTextOf(r), engine_id: r.engine_id,
        status: r.status, completed_at: r.completed_at, response_excerpt: r.response_excerpt, brand_mentioned: best !== undefined,
        brand_position: best?.position ?? null, sentiment: best?.sentiment ?? null, mentions: r.mentions, citations: r.citations,
      };
    });
  }

  // ---- 20-22 forum

  forumOpportunities(projectId: string): Data[] {
    const out: Data[] = [];
    for (const [id, x] of this.discovered.byKey) {
      const d = x.value;
      if (d.project_id !== projectId) continue;
      const f = (name: string): unknown => this.fields.get(`${id}|${name}`);
      const relevance = f('relevance') as number;
      const intent = f('intent') as string;
      out.push({
        id, platform: d.platform, url: d.url, title: d.title, community: d.community ?? null, author: d.author ?? null,
        posted_at: d.posted_at ?? null, discovered_at: d.discovered_at, relevance, intent,
        is_lead: intent === 'high' || relevance >= 0.7, status: (f('status') as string | undefined) ?? 'open',
        matched_terms: d.matched_terms, comment_count: f('comment_count') ?? null, score: f('score') ?? null,
      });
    }
    return out.sort((a, b) => cmp(b.discovered_at as string, a.discovered_at as string) || cmp(a.id as string, b.id as string));
  }

  forumLeads(projectId: string): Data[] {
    return this.forumOpportunities(projectId).filter((p) => p.is_lead && p.status === 'open')
      .sort((a, b) => (b.relevance as number) - (a.relevance as number) || cmp(b.discovered_at as string, a.discovered_at as string) || cmp(a.id as string, b.id as string));
  }

  forumMetrics(projectId: string): Data {
    const posts = this.forumOpportunities(projectId);
    const leads = this.forumLeads(projectId);
    const platforms = [...new Set(posts.map((p) => p.platform as string))].sort();
    return {
      total_opportunities: posts.length,
      open_opportunities: posts.filter((p) => p.status === 'open').length,
      lead_count: leads.length,
      engaged_count: posts.filter((p) => p.status === 'engaged').length,
      dismissed_count: posts.filter((p) => p.status === 'dismissed').length,
      // Summed newest discovered first (the opportunities' order), so the float is the one that order gives.
      average_relevance: posts.length === 0 ? null : posts.reduce((n, p) => n + (p.relevance as number), 0) / posts.length,
      last_discovered_at: posts.map((p) => p.discovered_at as string).sort().pop() ?? null,
      by_platform: platforms.map((platform) => ({
        platform, opportunities: posts.filter((p) => p.platform === platform).length, leads: leads.filter((p) => p.platform === platform).length,
      })),
    };
  }
}
