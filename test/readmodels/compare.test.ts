// Period comparison over real HTTP on loopback: compare=previous_period and
// compare_start_date..compare_end_date on visibility, segment analytics and competitor rankings,
// against the independent oracle (test/helpers/oracle-metrics.ts: bodies and counts from the event
// list) with its own Newcombe interval written here from docs/metrics.md; the 400s of bad
// combinations; and bodies without a comparison unchanged (a compared body minus its added fields is
// the plain body, byte for byte).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { DEMO_OPTIONS, generateWorld, worldKeys, type WorldOptions } from '../../fixtures/world';
import { asSource, run, W, world, type Ev } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { request, startApi, withKey } from '../helpers/http';
import { addDays, canonical, Oracle, wilsonOracle, type RateCounts, type XN } from '../helpers/oracle-metrics';
import { filtered, type Filter } from '../helpers/oracle-groups';
import { ROOT } from '../helpers/paths';

type Json = Record<string, unknown>;
interface Interval { low: number; high: number }

/**
 * docs/metrics.md "Comparing two periods": delta = p1 - p2; Newcombe's hybrid score interval from the
 * Wilson intervals [l1, u1] of p1 and [l2, u2] of p2: low = delta - sqrt((p1 - l1)^2 + (u2 - p2)^2),
 * high = delta + sqrt((u1 - p1)^2 + (p2 - l2)^2); significant when it excludes 0; null (false) when
 * either side has n = 0.
 */
function changeOracle([x1, n1]: XN, [x2, n2]: XN): Json {
  const previous = n2 === 0 ? null : x2 / n2;
  const w2 = wilsonOracle(x2, n2);
  if (n1 === 0 || n2 === 0) return { previous, previous_ci: w2, delta: null, delta_ci: null, significant: false };
  const w1 = wilsonOracle(x1, n1)!;
  const [p1, p2] = [x1 / n1, x2 / n2];
  const delta = p1 - p2;
  const ci: Interval = { low: delta - Math.sqrt((p1 - w1.low) ** 2 + (w2!.high - p2) ** 2), high: delta + Math.sqrt((w1.high - p1) ** 2 + (p2 - w2!.low) ** 2) };
  return { previous, previous_ci: w2, delta, delta_ci: ci, significant: ci.low > 0 || ci.high < 0 };
}

const NONE: XN = [0, 0];

/** The oracle's bodies with the comparison's fields, from its counts of both periods (rows matched by id). */
function visibilityCompared(body: Json, period: Json | null, now: RateCounts, before: RateCounts): Json {
  const competitor = (c: RateCounts, id: string): { rate: XN; share: XN } => ({ rate: [c.competitors.get(id) ?? 0, c.brand[1]], share: [c.competitors.get(id) ?? 0, c.voice] });
  return {
    ...body,
    comparison: period,
    mention_rate_change: changeOracle(now.brand, before.brand),
    share_of_voice_change: changeOracle([now.brand[0], now.voice], [before.brand[0], before.voice]),
    top_competitors: (body.top_competitors as Json[]).map((c) => {
      const [a, b] = [competitor(now, c.competitor_id as string), competitor(before, c.competitor_id as string)];
      return { ...c, mention_rate_change: changeOracle(a.rate, b.rate), share_of_voice_change: changeOracle(a.share, b.share) };
    }),
    prompt_breakdown: (body.prompt_breakdown as Json[]).map((p) => ({
      ...p, mention_rate_change: changeOracle(now.prompts.get(p.prompt_id as string)!, before.prompts.get(p.prompt_id as string) ?? NONE),
    })),
    engine_breakdown: (body.engine_breakdown as Json[]).map((e) => ({
      ...e, mention_rate_change: changeOracle(now.engines.get(e.engine_id as string)!, before.engines.get(e.engine_id as string) ?? NONE),
    })),
  };
}

function rankingsCompared(body: Json[], period: Json | null, now: RateCounts, before: RateCounts): Json[] {
  const counts = (c: RateCounts, id: string | null): { rate: XN; share: XN } => {
    const x = id === null ? c.brand[0] : c.competitors.get(id) ?? 0;
    return { rate: [x, c.brand[1]], share: [x, c.voice] };
  };
  return body.map((r) => {
    const [a, b] = [counts(now, r.competitor_id as string | null), counts(before, r.competitor_id as string | null)];
    return { ...r, mention_rate_change: changeOracle(a.rate, b.rate), share_of_voice_change: changeOracle(a.share, b.share), comparison: period };
  });
}

function segmentsCompared(body: Json[], period: Json | null, now: RateCounts, before: RateCounts): Json[] {
  return body.map((s) => {
    const [a, b] = [now.segments.get(s.segment_id as string)!, before.segments.get(s.segment_id as string)!];
    return {
      ...s, comparison: period,
      mention_rate_change: changeOracle(a.brand, b.brand),
      share_of_voice_change: changeOracle([a.brand[0], a.voice], [b.brand[0], b.voice]),
    };
  });
}

/** A body without the fields a comparison adds: `comparison` and every `*_change`. */
function withoutComparison(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutComparison);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'comparison' && !k.endsWith('_change')).map(([k, x]) => [k, withoutComparison(x)]));
  }
  return v;
}

/** Every `significant` of a body, to show the checks met both answers. */
function significants(v: unknown, out: boolean[] = []): boolean[] {
  if (Array.isArray(v)) for (const x of v) significants(x, out);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === 'significant') out.push(x as boolean);
      else significants(x, out);
    }
  }
  return out;
}

// A world of 420 days across a year end (as test/readmodels/date-ranges.test.ts), with its own seed.
const YEAR_WORLD: WorldOptions = {
  ...DEMO_OPTIONS, seed: 41, accounts: 1, projectsPerAccount: 1, sharedProjects: 0, engines: 3, enginesPerProject: 3,
  promptsPerProject: 4, segmentsPerProject: 2, competitorsPerProject: 3, forumPostsPerProject: 0, runsPerPromptPerDay: 1,
  days: 420, endDay: '2027-02-10',
};

t.test('compared bodies against the oracle, over HTTP, over ranges crossing month and year ends', async (t) => {
  const events = [...generateWorld(YEAR_WORLD)].map((line) => JSON.parse(line) as Ev);
  const { db, projector } = freshDb(t);
  for (let i = 0; i < events.length; i += 1000) projector.applyBatch(asSource(events.slice(i, i + 1000), 'test', 1 + i));
  projector.settle();
  const oracle = new Oracle(events);
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close());
  const key = worldKeys(YEAR_WORLD).find((k) => !k.revoked)!.key;
  const get = async (p: string): Promise<{ json: unknown; text: string }> => {
    const r = await request(api.base + p, withKey(key));
    if (r.status !== 200) throw new Error(`${p}: ${r.status} ${r.text}`);
    return r;
  };
  const project = ((await get('/projects')).json as Array<{ id: string }>)[0]!.id;
  const engines = ((await get(`/projects/${project}/engines`)).json as Array<{ id: string }>).map((e) => e.id).sort();
  const base = `/projects/${project}`;
  const seen: boolean[] = [];

  // [current range (null: the current window), its query, the comparison period, its query, label]
  const cases: Array<[{ start: string; end: string } | null, string, { start: string; end: string }, string, string]> = [
    [{ start: '2026-12-20', end: '2027-01-10' }, 'start_date=2026-12-20&end_date=2027-01-10', { start: '2026-11-15', end: '2026-12-19' },
      'compare_start_date=2026-11-15&compare_end_date=2026-12-19', 'across the year end, against 35 days across a month end'],
    [{ start: '2026-03-05', end: '2026-05-26' }, 'start_date=2026-03-05&end_date=2026-05-26', { start: '2025-12-12', end: '2026-03-04' },
      'compare=previous_period', 'previous_period of 83 ragged days: the 83 days before, across the year end'],
    [{ start: '2026-02-01', end: '2026-02-28' }, 'start_date=2026-02-01&end_date=2026-02-28', { start: '2026-01-04', end: '2026-01-31' },
      'compare=previous_period', 'previous_period of February: 28 days, from 2026-01-04'],
    [{ start: '2026-07-01', end: '2026-07-07' }, 'start_date=2026-07-01', { start: '2026-06-24', end: '2026-06-30' },
      'compare=previous_period', 'start_date alone: previous_period of the window\'s length it makes'],
    [null, '', { start: '2027-01-28', end: '2027-02-03' }, 'compare=previous_period', 'no range: previous_period of the current window'],
    [{ start: '2026-01-01', end: '2026-12-31' }, 'start_date=2026-01-01&end_date=2026-12-31', { start: '2025-01-01', end: '2025-12-31' },
      'compare=previous_period', 'a year against the year before, mostly before the first day of data'],
    [{ start: '2026-04-01', end: '2026-04-30' }, 'start_date=2026-04-01&end_date=2026-04-30', { start: '2024-01-01', end: '2024-01-31' },
      'compare_start_date=2024-01-01&compare_end_date=2024-01-31', 'against a period without runs: every previous null'],
  ];
  for (const [range, q, previous, cq, label] of cases) {
    const period = { start_date: previous.start, end_date: previous.end };
    const sep = q === '' ? '' : '&';
    for (const filter of [null, [engines[0]!, engines[2]!]]) {
      const fq = filter === null ? '' : `&engine_ids=${filter[0]}&engine_ids=${filter[1]}`;
      const what = `${label}${filter === null ? '' : ', engine_ids'}`;
      oracle.range = range;
      const [vis, rankings, segments, now] = [oracle.visibility(project, filter), oracle.competitorRankings(project, filter), oracle.segmentAnalytics(project, filter), oracle.rateCounts(project, filter)];
      oracle.range = previous;
      const before = oracle.rateCounts(project, filter);
      for (const [p, expected] of [
        ['visibility', visibilityCompared(vis, period, now, before)],
        ['competitor-rankings', rankingsCompared(rankings, period, now, before)],
        ['segments/analytics', segmentsCompared(segments, period, now, before)],
      ] as const) {
        const compared = await get(`${base}/${p}?${q}${sep}${cq}${fq}`);
        t.same(canonical(compared.json), canonical(expected), `${p}: ${what}`);
        seen.push(...significants(compared.json));
        const plain = await get(`${base}/${p}?${q}${fq}`);
        t.equal(JSON.stringify(withoutComparison(compared.json)), plain.text, `${p}: ${what}: the compared body minus its added fields is the plain body, byte for byte`);
      }
    }
  }
  oracle.range = null;

  // With the dimension filters: the comparison period is measured with the same filters (the oracle's
  // world is the filtered log: a run the filter leaves out is not in it).
  const dims = (await get(`${base}/dimensions`)).json as { countries: Array<{ country: string }>; personas: Array<{ persona: string }> };
  const segment = ((await get(`${base}/segments`)).json as Array<{ id: string }>)[0]!.id;
  const filters: Array<[string, Filter]> = [
    ['country and persona', { country: [dims.countries[0]!.country], persona: [dims.personas[0]!.persona] }],
    ['segment_ids', { segment_ids: [segment] }],
  ];
  for (const [label, f] of filters) {
    const only = new Oracle(filtered(events, f));
    const fq = Object.entries(f).flatMap(([k, vs]) => (vs as string[]).map((v) => `&${k}=${encodeURIComponent(v)}`)).join('');
    for (const [range, q, previous, cq, what] of [cases[0]!, cases[1]!, cases[4]!]) {
      const period = { start_date: previous.start, end_date: previous.end };
      // No range: the current window of the whole project (a filter never moves it), which the filtered log may not end on.
      only.range = range ?? { start: addDays(previous.end, 1), end: addDays(previous.end, 7) };
      const [vis, rankings, segments, now] = [only.visibility(project), only.competitorRankings(project), only.segmentAnalytics(project), only.rateCounts(project)];
      only.range = previous;
      const before = only.rateCounts(project);
      const sep = q === '' ? '' : '&';
      for (const [p, expected] of [
        ['visibility', visibilityCompared(vis, period, now, before)],
        ['competitor-rankings', rankingsCompared(rankings, period, now, before)],
        ['segments/analytics', segmentsCompared(segments, period, now, before)],
      ] as const) {
        const compared = await get(`${base}/${p}?${q}${sep}${cq}${fq}`);
        t.same(canonical(compared.json), canonical(expected), `${p}: ${what}, ${label}`);
        seen.push(...significants(compared.json));
        t.equal(JSON.stringify(withoutComparison(compared.json)), (await get(`${base}/${p}?${q}${sep}${fq.slice(1)}`)).text, `${p}: ${what}, ${label}: minus its added fields, the plain body`);
      }
    }
  }
  t.ok(seen.includes(true) && seen.includes(false), `both answers of significant were checked (${seen.filter(Boolean).length} of ${seen.length} true)`);
});

t.test('the worked example of docs/metrics.md over HTTP: 56 of 70 runs now, 48 of 80 before', async (t) => {
  // Now: 2026-01-08..14, 70 runs, 56 naming the brand; before: 2026-01-01..07, 80 runs, 48 naming it.
  const runs = [
    ...Array.from({ length: 70 }, (_, i) => run({ n: 1 + i, day: `2026-01-${String(8 + (i % 7)).padStart(2, '0')}`, brand: i < 56 ? 1 : null })),
    ...Array.from({ length: 80 }, (_, i) => run({ n: 101 + i, day: `2026-01-0${1 + (i % 7)}`, brand: i < 48 ? 2 : null })),
  ];
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource([...world(), ...runs]));
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close());
  const r = await request(`${api.base}/projects/${W.project}/visibility?start_date=2026-01-08&end_date=2026-01-14&compare=previous_period`, withKey(W.key));
  const body = r.json as Json;
  t.same(body.comparison, { start_date: '2026-01-01', end_date: '2026-01-07' }, 'previous_period: the 7 days before');
  t.equal(body.mention_rate, 0.8);
  // The numbers docs/metrics.md shows, as the body carries them.
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'metrics.md'), 'utf8').replace(/\s+/g, ' ');
  const shown = /"mention_rate_change": (\{"previous": 0\.6,.*?"significant": true\})/.exec(doc);
  t.ok(shown, 'docs/metrics.md shows the change');
  t.same(body.mention_rate_change, JSON.parse(shown![1]!), 'the body carries exactly what the docs show');
  const c = body.mention_rate_change as { delta_ci: Interval };
  t.same([c.delta_ci.low.toFixed(4), c.delta_ci.high.toFixed(4)], ['0.0524', '0.3339'], 'the hand-worked bounds');
  t.same(canonical(c), canonical(changeOracle([56, 70], [48, 80])), 'and the oracle\'s');
});

t.test('a project without runs: previous_period has nothing to start from; a comparison range still measures', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close());
  const get = async (p: string): Promise<Json> => (await request(`${api.base}/projects/${W.project}/${p}`, withKey(W.key))).json as Json;
  const nothing = { previous: null, previous_ci: null, delta: null, delta_ci: null, significant: false };
  const v = await get('visibility?compare=previous_period');
  t.same([v.window_start, v.comparison, v.mention_rate_change, v.share_of_voice_change], [null, null, nothing, nothing], 'no window: comparison null, every change null');
  const rankings = await get('competitor-rankings?compare=previous_period') as unknown as Json[];
  t.ok(rankings.length > 0 && rankings.every((r) => r.comparison === null), 'the list\'s rows say so too');
  const ranged = await get('visibility?compare_start_date=2026-01-01&compare_end_date=2026-01-31');
  t.same(ranged.comparison, { start_date: '2026-01-01', end_date: '2026-01-31' }, 'an explicit comparison range is named whatever the current window');
});

t.test('bad combinations: 400 naming the parameter, in the error contract', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close());
  const cases: Array<[string, RegExp]> = [
    ['compare=last_year', /^compare must be one of previous_period, got "last_year"$/],
    ['compare_start_date=2026-01-01', /^compare_end_date must be given with compare_start_date, got none$/],
    ['compare_end_date=2026-01-31', /^compare_start_date must be given with compare_end_date, got none$/],
    ['compare=previous_period&compare_start_date=2026-01-01&compare_end_date=2026-01-31',
      /^compare must be left out with compare_start_date and compare_end_date, got "previous_period"$/],
    ['compare_start_date=2026-02-01&compare_end_date=2026-01-31', /^compare_start_date must be on or before compare_end_date \(2026-01-31\), got "2026-02-01"$/],
    ['compare_start_date=2025-01-01&compare_end_date=2026-01-02', /^compare_start_date must be at most 365 days before compare_end_date \(2026-01-02: a period of at most 366 days\), got "2025-01-01"$/],
    ['compare_start_date=2026-02-30&compare_end_date=2026-03-01', /^compare_start_date must be a date YYYY-MM-DD from 1970-01-01 to 8999-12-31, got "2026-02-30"$/],
    ['compare=previous_period&start_date=2026-03-02&end_date=2026-03-01', /^start_date must be on or before end_date/],
  ];
  for (const p of ['visibility', 'competitor-rankings', 'segments/analytics']) {
    for (const [q, message] of cases) {
      const r = await request(`${api.base}/projects/${W.project}/${p}?${q}`, withKey(W.key));
      t.equal(r.status, 400, `${p}?${q}`);
      t.match(r.json, { error: true, message }, `${p}?${q}`);
      t.same(Object.keys(r.json as object), ['error', 'message'], 'the error body is the contract\'s');
      t.equal(r.headers['x-error-code'], 'invalid_parameter');
      t.ok(r.headers['metric-definitions-version'], 'with the definitions\' version');
    }
    const leap = await request(`${api.base}/projects/${W.project}/${p}?compare_start_date=2024-01-01&compare_end_date=2024-12-31`, withKey(W.key));
    t.equal(leap.status, 200, `${p}: a comparison range of 366 days (a leap year) is allowed`);
  }
  const trend = await request(`${api.base}/projects/${W.project}/visibility/timeseries?compare=previous_period`, withKey(W.key));
  t.same([trend.status, trend.headers['x-error-code']], [400, 'unknown_parameter'], 'an endpoint that does not compare refuses the parameter, as any unknown one');
  t.match(trend.json, { message: /^"compare" is not a parameter of timeseries, which takes start_date, end_date, / }, 'and names it with what the endpoint takes');
});

t.test('the comparison dates accept the days start_date and end_date accept', (t) => {
  const read = (name: string): unknown => {
    const { description: _d, name: _n, ...rest } = JSON.parse(fs.readFileSync(path.join(ROOT, 'schemas', 'params', `${name}.json`), 'utf8')) as Json;
    return rest;
  };
  t.same(read('compare_start_date'), read('start_date'), 'compare_start_date: the schema and x-accepts of start_date');
  t.same(read('compare_end_date'), read('end_date'), 'compare_end_date: those of end_date');
  t.end();
});
