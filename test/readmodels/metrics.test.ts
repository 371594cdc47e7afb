// Metric endpoints (rows 3, 4, 5, 8, 10): every metric field on a small fixture, computed by hand
// in the comments, plus the rules that decide which runs count (window, engine filter, deleted or
// late prompts, one count per entity per run).
import t, { type Test } from 'tap';
import { checkedBody } from '../helpers/readmodels';
import type { ReadArgs } from '../../src/readmodels/args';
import type {
  CompetitorRankings, DailyScores, SegmentAnalytics, VisibilityReport, VisibilityTimeseries,
} from '../../src/readmodels/bodies.gen';
import type { Endpoint } from '../../src/readmodels/endpoint';
import { ReadStore } from '../../src/readmodels/store';
import { endpoint as visibility } from '../../src/readmodels/endpoints/visibility';
import { endpoint as timeseries } from '../../src/readmodels/endpoints/timeseries';
import { endpoint as dailyScores } from '../../src/readmodels/endpoints/daily-scores';
import { endpoint as segmentAnalytics } from '../../src/readmodels/endpoints/segment-analytics';
import { endpoint as competitorRankings } from '../../src/readmodels/endpoints/competitor-rankings';
import { asSource, ev, id, uniqueSuffix, W, world, type Ev } from '../helpers/events';
import { tmpDb } from '../helpers/db';
import { wilsonOracle } from '../helpers/oracle-metrics';
import { readArgs } from '../helpers/readmodels';


const LATER = '2026-01-02T00:00:00.000Z'; // after every world() event, so these upserts win
const X = {
  engineC: id(3, 'cccccccc'),         // 'Bard': first by name, last by id
  roadRunner: id(2, '99999999'),
  coyote: id(3, '99999999'),          // tracked, never mentioned
  gone: id(4, '99999999'),            // deleted: its mentions never count
  admins: id(2, 'dddddddd'),
  zeta: id(3, 'dddddddd'),            // active, no prompts
  old: id(4, 'dddddddd'),             // inactive
  prompt3: id(3, 'ffffffff'),
};

interface M { who: 'brand' | string; position: number; sentiment?: number }
const brand = (position: number, sentiment?: number): M => ({ who: 'brand', position, sentiment });
const comp = (who: string, position: number, sentiment?: number): M => ({ who, position, sentiment });

function runEv(n: number, engine: string, prompt: string, day: string, mentions: M[], status = 'succeeded'): Ev {
  return ev('prompt_run.completed', {
    id: id(n, '55555555'), run_group_id: W.group, project_id: W.project, prompt_id: prompt, engine_id: engine, status,
    completed_at: `${day}T12:00:00Z`, citations: [],
    mentions: mentions.map((m) => ({
      entity_type: m.who === 'brand' ? 'brand' : 'competitor', ...(m.who === 'brand' ? {} : { competitor_id: m.who }),
      name: m.who === 'brand' ? 'Acme' : 'someone', position: m.position, ...(m.sentiment === undefined ? {} : { sentiment: m.sentiment }),
    })),
  }, `${day}T12:00:01Z`);
}

/** Engines A ChatGPT, B Perplexity, C Bard; prompts p1 'best anvil' [Buyers, Admins], p2 'anvil prices' [Admins, Old]. */
function catalog(): Ev[] {
  return [
    ...world(),
    ev('engine.upserted', { id: X.engineC, name: 'Bard', provider: 'google' }, LATER),
    ev('project.engine_tracked', { project_id: W.project, engine_id: X.engineC, at: LATER }, LATER),
    ev('competitor.upserted', { id: X.roadRunner, project_id: W.project, name: 'Road Runner', aliases: [] }, LATER),
    ev('competitor.upserted', { id: X.coyote, project_id: W.project, name: 'Coyote', aliases: [] }, LATER),
    ev('competitor.upserted', { id: X.gone, project_id: W.project, name: 'Gone', aliases: [] }, LATER),
    ev('competitor.deleted', { id: X.gone, project_id: W.project }, '2026-01-02T01:00:00Z'),
    ev('segment.upserted', { id: X.admins, project_id: W.project, name: 'Admins', active: true }, LATER),
    ev('segment.upserted', { id: X.zeta, project_id: W.project, name: 'Zeta', active: true }, LATER),
    ev('segment.upserted', { id: X.old, project_id: W.project, name: 'Old', active: false }, LATER),
    ev('prompt.upserted', { id: W.prompt1, project_id: W.project, text: 'best anvil', segment_ids: [W.segment, X.admins], active: true }, LATER),
    ev('prompt.upserted', { id: W.prompt2, project_id: W.project, text: 'anvil prices', segment_ids: [X.admins, X.old], active: true }, LATER),
  ];
}

const { engineA: A, engineB: B, prompt1: p1, prompt2: p2, competitor: wile } = W;
const C = X.engineC;
/** The runs; the window is 2026-01-04..2026-01-10 (the latest run's day). */
const RUNS: Ev[] = [
  runEv(1, A, p1, '2026-01-10', [brand(1, 0.5), comp(wile, 2)]),
  runEv(2, A, p1, '2026-01-09', [brand(4, -1), brand(2, 0.25)]),         // brand twice: counts once, at 2 with 0.25
  runEv(3, A, p2, '2026-01-10', [comp(wile, 1, -0.5), comp(X.roadRunner, 3)]),
  runEv(4, B, p1, '2026-01-08', [brand(4), comp(X.roadRunner, 1)]),      // no sentiment
  runEv(5, B, p2, '2026-01-10', [brand(1, 1), comp(X.gone, 2)]),         // Gone is deleted: not counted
  runEv(6, B, p2, '2026-01-10', [brand(1, 1)], 'failed'),               // failed: never counts
  runEv(8, C, p2, '2026-01-10', []),
  runEv(7, A, p1, '2026-01-03', [brand(1, 1), comp(wile, 1)]),          // before the 7-day window
  runEv(10, A, p2, '2025-01-11', []),                                   // first day of the 365-day trend
  runEv(9, A, p1, '2025-01-10', [brand(2)]),                            // before the trend, still a daily row
];

function setup(events: Ev[]) {
  const { db, projector } = tmpDb();
  const apply = (more: Ev[]) => projector.applyBatch(asSource(more, `test-${uniqueSuffix()}`));
  apply(events);
  return { store: new ReadStore(db), apply };
}

function args(over: Partial<ReadArgs> = {}): ReadArgs {
  return readArgs({ limit: 30, ...over });
}

function body<T>(tt: Test, e: Endpoint, store: ReadStore, over: Partial<ReadArgs> = {}): T {
  return checkedBody<T>(tt, e, store, args(over));
}

/** The expected interval of k of n, from the oracle's own Wilson (docs/metrics.md); counts are worked out in the comments. */
const ci = wilsonOracle;

/**
 * Bounds of every `*_ci` to 12 significant digits: the oracle and the server arrange the Wilson formula
 * differently, so they may differ in the last bit. Every other field still compares exactly.
 */
function ciTo12<T>(v: T): T {
  if (Array.isArray(v)) return v.map(ciTo12) as T;
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => {
    if (!k.endsWith('_ci') || x === null) return [k, ciTo12(x)];
    const { low, high } = x as { low: number; high: number };
    return [k, { low: Number(low.toPrecision(12)), high: Number(high.toPrecision(12)) }];
  })) as T;
}

const runsOf = (...engines: string[]) => RUNS.filter((r) => engines.includes(r.data.engine_id as string));

t.test('visibility: totals, breakdowns and top competitors', (tt) => {
  const { store } = setup([...catalog(), ...RUNS]);
  const v = body<VisibilityReport>(tt, visibility, store);
  // Counted in the window: runs 1, 2, 3, 4, 5, 8 (6 failed, 7 9 10 outside). Brand in 1 (@1), 2 (@2), 4 (@4), 5 (@1).
  tt.same(ciTo12(v), ciTo12({
    project_id: W.project, window_start: '2026-01-04', window_end: '2026-01-10',
    current_score: (100 * 2.75) / 6,       // rr = 1 + 1/2 + 1/4 + 1 = 2.75 over 6 runs = 45.83...
    mention_rate: 4 / 6, mention_rate_ci: ci(4, 6), average_rank: 8 / 4,
    sentiment: 1.75 / 3,                   // 0.5, 0.25, 1 (run 4 has none)
    share_of_voice: 4 / 8,                 // brand 4 / (4 + Wile 2 + Road Runner 2); Gone is deleted
    share_of_voice_ci: ci(4, 8),
    prompt_count: 2, run_count: 6,
    top_competitors: [
      // Road Runner and Wile tie at 2/6: by name. Road Runner @3, @1; Wile @2, @1.
      { competitor_id: X.roadRunner, name: 'Road Runner', mention_rate: 2 / 6, mention_rate_ci: ci(2, 6), average_rank: 2, share_of_voice: 2 / 8, share_of_voice_ci: ci(2, 8) },
      { competitor_id: wile, name: 'Wile', mention_rate: 2 / 6, mention_rate_ci: ci(2, 6), average_rank: 1.5, share_of_voice: 2 / 8, share_of_voice_ci: ci(2, 8) },
      { competitor_id: X.coyote, name: 'Coyote', mention_rate: 0, mention_rate_ci: ci(0, 6), average_rank: null, share_of_voice: 0, share_of_voice_ci: ci(0, 8) },
    ],
    prompt_breakdown: [
      // 'anvil prices' (p2) sorts before 'best anvil' (p1). p2: runs 3, 5, 8, brand only in 5 @1 (sentiment 1).
      { prompt_id: p2, text: 'anvil prices', run_count: 3, mention_rate: 1 / 3, mention_rate_ci: ci(1, 3), average_rank: 1, sentiment: 1, score: 100 / 3 },
      // p1: runs 1 @1, 2 @2, 4 @4: rr 1.75; sentiments 0.5, 0.25.
      { prompt_id: p1, text: 'best anvil', run_count: 3, mention_rate: 1, mention_rate_ci: ci(3, 3), average_rank: 7 / 3, sentiment: 0.375, score: (100 * 1.75) / 3 },
    ],
    engine_breakdown: [
      { engine_id: C, name: 'Bard', run_count: 1, mention_rate: 0, mention_rate_ci: ci(0, 1), average_rank: null, sentiment: null, score: 0 },
      // ChatGPT: runs 1 @1, 2 @2, 3 none.
      { engine_id: A, name: 'ChatGPT', run_count: 3, mention_rate: 2 / 3, mention_rate_ci: ci(2, 3), average_rank: 1.5, sentiment: 0.375, score: 50 },
      // Perplexity: runs 4 @4 (no sentiment), 5 @1 (1).
      { engine_id: B, name: 'Perplexity', run_count: 2, mention_rate: 1, mention_rate_ci: ci(2, 2), average_rank: 2.5, sentiment: 1, score: 62.5 },
    ],
  }));
  tt.end();
});

t.test('timeseries: one point per day with counted runs, oldest first, 365 days', (tt) => {
  const { store } = setup([...catalog(), ...RUNS]);
  const points = body<VisibilityTimeseries>(tt, timeseries, store);
  tt.same(ciTo12(points), ciTo12([
    // 2025-01-11 is day 1 of the 365 ending 2026-01-10 (run 9 on 2025-01-10 is out). No mentions at all: no share, no interval.
    { date: '2025-01-11', score: 0, mention_rate: 0, mention_rate_ci: ci(0, 1), average_rank: null, sentiment: null, share_of_voice: null,
      share_of_voice_ci: null, run_count: 1,
      engines: [{ engine_id: A, score: 0, mention_rate: 0, mention_rate_ci: ci(0, 1), run_count: 1 }] },
    // Run 7: brand @1 (1), Wile @1: share 1 / 2.
    { date: '2026-01-03', score: 100, mention_rate: 1, mention_rate_ci: ci(1, 1), average_rank: 1, sentiment: 1, share_of_voice: 0.5,
      share_of_voice_ci: ci(1, 2), run_count: 1,
      engines: [{ engine_id: A, score: 100, mention_rate: 1, mention_rate_ci: ci(1, 1), run_count: 1 }] },
    // Run 4: brand @4 without sentiment, Road Runner @1.
    { date: '2026-01-08', score: 25, mention_rate: 1, mention_rate_ci: ci(1, 1), average_rank: 4, sentiment: null, share_of_voice: 0.5,
      share_of_voice_ci: ci(1, 2), run_count: 1,
      engines: [{ engine_id: B, score: 25, mention_rate: 1, mention_rate_ci: ci(1, 1), run_count: 1 }] },
    // Run 2: brand best @2 (0.25), no competitor.
    { date: '2026-01-09', score: 50, mention_rate: 1, mention_rate_ci: ci(1, 1), average_rank: 2, sentiment: 0.25, share_of_voice: 1,
      share_of_voice_ci: ci(1, 1), run_count: 1,
      engines: [{ engine_id: A, score: 50, mention_rate: 1, mention_rate_ci: ci(1, 1), run_count: 1 }] },
    // Runs 1 (@1, 0.5), 3, 5 (@1, 1), 8: rr 2 / 4; share 2 / (2 + Wile 2 + Road Runner 1).
    { date: '2026-01-10', score: 50, mention_rate: 0.5, mention_rate_ci: ci(2, 4), average_rank: 1, sentiment: 0.75, share_of_voice: 0.4,
      share_of_voice_ci: ci(2, 5), run_count: 4,
      engines: [
        { engine_id: C, score: 0, mention_rate: 0, mention_rate_ci: ci(0, 1), run_count: 1 },
        { engine_id: A, score: 50, mention_rate: 0.5, mention_rate_ci: ci(1, 2), run_count: 2 },
        { engine_id: B, score: 100, mention_rate: 1, mention_rate_ci: ci(1, 1), run_count: 1 },
      ] },
  ]));
  tt.end();
});

t.test('daily scores: newest first, prompt_count per day, limit', (tt) => {
  const { store } = setup([...catalog(), ...RUNS]);
  const rows = body<DailyScores>(tt, dailyScores, store);
  tt.same(rows.map((r) => [r.date, r.prompt_count, r.run_count]), [
    ['2026-01-10', 2, 4], ['2026-01-09', 1, 1], ['2026-01-08', 1, 1], ['2026-01-03', 1, 1], ['2025-01-11', 1, 1], ['2025-01-10', 1, 1],
  ]);
  tt.same(ciTo12(rows[0]), ciTo12({
    date: '2026-01-10', score: 50, mention_rate: 0.5, mention_rate_ci: ci(2, 4), average_rank: 1, sentiment: 0.75, share_of_voice: 0.4,
    share_of_voice_ci: ci(2, 5), prompt_count: 2, run_count: 4,
  }));
  // Run 9: brand @2 without sentiment; no competitor, so the brand has all the voice.
  tt.same(ciTo12(rows[5]), ciTo12({
    date: '2025-01-10', score: 50, mention_rate: 1, mention_rate_ci: ci(1, 1), average_rank: 2, sentiment: null, share_of_voice: 1,
    share_of_voice_ci: ci(1, 1), prompt_count: 1, run_count: 1,
  }));
  tt.same(body<DailyScores>(tt, dailyScores, store, { limit: 2 }).map((r) => r.date), ['2026-01-10', '2026-01-09']);
  // The same day gives the same numbers in the trend and in the daily rows.
  const trend = body<VisibilityTimeseries>(tt, timeseries, store).map(({ engines: _engines, ...day }) => day);
  const daily = rows.filter((r) => r.date >= '2025-01-11').reverse().map(({ prompt_count: _count, ...day }) => day);
  tt.same(daily, trend, 'trend and daily agree day by day');
  tt.end();
});

t.test('segment analytics: active segments by name, runs of their prompts', (tt) => {
  const { store } = setup([...catalog(), ...RUNS]);
  tt.same(ciTo12(body<SegmentAnalytics>(tt, segmentAnalytics, store)), ciTo12([
    // Admins holds p1 and p2: every counted run of the window, as in the visibility report.
    { segment_id: X.admins, name: 'Admins', prompt_count: 2, run_count: 6, mention_rate: 4 / 6, mention_rate_ci: ci(4, 6), average_rank: 2,
      sentiment: 1.75 / 3, score: (100 * 2.75) / 6, share_of_voice: 0.5, share_of_voice_ci: ci(4, 8) },
    // Buyers holds p1: runs 1, 2, 4, all mention the brand; competitors in them: Wile (1), Road Runner (4).
    { segment_id: W.segment, name: 'Buyers', prompt_count: 1, run_count: 3, mention_rate: 1, mention_rate_ci: ci(3, 3), average_rank: 7 / 3,
      sentiment: 0.375, score: (100 * 1.75) / 3, share_of_voice: 3 / 5, share_of_voice_ci: ci(3, 5) },
    // No runs: mention_rate 0 but nothing measured, so no interval.
    { segment_id: X.zeta, name: 'Zeta', prompt_count: 0, run_count: 0, mention_rate: 0, mention_rate_ci: null, average_rank: null,
      sentiment: null, score: null, share_of_voice: null, share_of_voice_ci: null },
  ]));
  tt.end();
});

t.test('competitor rankings: brand and tracked competitors by score', (tt) => {
  const { store } = setup([...catalog(), ...RUNS]);
  // Intervals: mention_count of the window's 6 runs; share of voice of the 8 mentions (4 + 2 + 2 + 0).
  tt.same(ciTo12(body<CompetitorRankings>(tt, competitorRankings, store)), ciTo12([
    { rank: 1, entity_type: 'brand', competitor_id: null, name: 'Acme Project', mention_count: 4, mention_rate: 4 / 6, mention_rate_ci: ci(4, 6),
      average_rank: 2, sentiment: 1.75 / 3, share_of_voice: 0.5, share_of_voice_ci: ci(4, 8), score: (100 * 2.75) / 6 },
    // Wile: run 1 @2, run 3 @1 (-0.5): rr 1.5 over the window's 6 runs.
    { rank: 2, entity_type: 'competitor', competitor_id: wile, name: 'Wile', mention_count: 2, mention_rate: 2 / 6, mention_rate_ci: ci(2, 6),
      average_rank: 1.5, sentiment: -0.5, share_of_voice: 0.25, share_of_voice_ci: ci(2, 8), score: (100 * 1.5) / 6 },
    // Road Runner: run 3 @3, run 4 @1, no sentiment: rr 4/3.
    { rank: 3, entity_type: 'competitor', competitor_id: X.roadRunner, name: 'Road Runner', mention_count: 2, mention_rate: 2 / 6,
      mention_rate_ci: ci(2, 6), average_rank: 2, sentiment: null, share_of_voice: 0.25, share_of_voice_ci: ci(2, 8), score: (100 * (1 + 1 / 3)) / 6 },
    { rank: 4, entity_type: 'competitor', competitor_id: X.coyote, name: 'Coyote', mention_count: 0, mention_rate: 0, mention_rate_ci: ci(0, 6),
      average_rank: null, sentiment: null, share_of_voice: 0, share_of_voice_ci: ci(0, 8), score: 0 },
  ]));
  tt.end();
});

t.test('engine filter is exact: {A} equals a database holding only A runs', (tt) => {
  const full = setup([...catalog(), ...RUNS]).store;
  const onlyA = setup([...catalog(), ...runsOf(A)]).store;
  for (const e of [visibility, segmentAnalytics, competitorRankings]) {
    tt.same(body(tt, e, full, { engineIds: [A] }), body(tt, e, onlyA), `${e.name} for {A}`);
  }
  // And by hand: A's window runs are 1 (@1, 0.5), 2 (@2, 0.25), 3 (none).
  const v = body<VisibilityReport>(tt, visibility, full, { engineIds: [A] });
  tt.match(v, { run_count: 3, prompt_count: 2, mention_rate: 2 / 3, average_rank: 1.5, sentiment: 0.375, current_score: 50,
    share_of_voice: 2 / 5 }); // brand 2 / (2 + Wile 2 + Road Runner 1)
  tt.same(v.engine_breakdown.map((e) => e.engine_id), [A]);
  tt.end();
});

t.test('an engine id that tracks nothing matches no runs; the window stays', (tt) => {
  const { store } = setup([...catalog(), ...RUNS]);
  const nobody = [id(99, 'cccccccc')];
  const v = body<VisibilityReport>(tt, visibility, store, { engineIds: nobody });
  tt.match(v, { window_end: '2026-01-10', run_count: 0, prompt_count: 0, mention_rate: 0, current_score: null, average_rank: null,
    sentiment: null, share_of_voice: null, prompt_breakdown: [], engine_breakdown: [] });
  tt.same(v.top_competitors.map((c) => [c.mention_rate, c.share_of_voice]), [[0, null], [0, null], [0, null]]);
  // n = 0 everywhere: no interval, although mention_rate is 0 (not null).
  tt.same([v.mention_rate_ci, v.share_of_voice_ci], [null, null]);
  tt.same(v.top_competitors.map((c) => [c.mention_rate_ci, c.share_of_voice_ci]), [[null, null], [null, null], [null, null]]);
  tt.same(body<SegmentAnalytics>(tt, segmentAnalytics, store, { engineIds: nobody }).map((s) => s.run_count), [0, 0, 0]);
  tt.same(body<CompetitorRankings>(tt, competitorRankings, store, { engineIds: nobody }).map((r) => r.score), [null, null, null, null]);
  tt.end();
});

t.test('the window follows the latest run day', (tt) => {
  const { store, apply } = setup([...catalog(), ...RUNS]);
  apply([runEv(11, A, p1, '2026-01-15', [brand(1)])]);
  const v = body<VisibilityReport>(tt, visibility, store);
  // Window 01-09..01-15: run 4 (01-08) drops out; runs 1, 2, 3, 5, 8, 11 count; brand in 1, 2, 5, 11.
  tt.match(v, { window_start: '2026-01-09', window_end: '2026-01-15', run_count: 6, mention_rate: 4 / 6, average_rank: 5 / 4 });
  tt.same(v.engine_breakdown.find((e) => e.engine_id === B)?.run_count, 1, 'Perplexity keeps only run 5');
  tt.end();
});

t.test('runs of a deleted prompt stop counting', (tt) => {
  const { store, apply } = setup([...catalog(), ...RUNS]);
  apply([ev('prompt.deleted', { id: p2, project_id: W.project }, '2026-01-11T00:00:00Z')]);
  const v = body<VisibilityReport>(tt, visibility, store);
  // Only p1: runs 1, 2, 4, as its breakdown above.
  tt.match(v, { run_count: 3, prompt_count: 1, mention_rate: 1, current_score: (100 * 1.75) / 3 });
  tt.same(v.prompt_breakdown.map((p) => p.prompt_id), [p1]);
  tt.same(body<SegmentAnalytics>(tt, segmentAnalytics, store).map((s) => [s.name, s.prompt_count, s.run_count]),
    [['Admins', 1, 3], ['Buyers', 1, 3], ['Zeta', 0, 0]]);
  tt.end();
});

t.test('a run whose prompt arrives late counts once it arrives', (tt) => {
  const { store, apply } = setup([...catalog(), ...RUNS, runEv(12, A, X.prompt3, '2026-01-10', [brand(2)])]);
  tt.match(body<VisibilityReport>(tt, visibility, store), { run_count: 6, prompt_count: 2 });
  apply([ev('prompt.upserted', { id: X.prompt3, project_id: W.project, text: 'anvil repair', segment_ids: [], active: true }, LATER)]);
  const v = body<VisibilityReport>(tt, visibility, store);
  tt.match(v, { run_count: 7, prompt_count: 3, mention_rate: 5 / 7 });
  tt.same(v.prompt_breakdown.map((p) => p.text), ['anvil prices', 'anvil repair', 'best anvil'], 'by text');
  tt.same(ciTo12(v.prompt_breakdown[1]), ciTo12({
    prompt_id: X.prompt3, text: 'anvil repair', run_count: 1, mention_rate: 1, mention_rate_ci: ci(1, 1), average_rank: 2, sentiment: null, score: 50,
  }));
  tt.end();
});

t.test('two brand mentions in one run count once, at the best position', (tt) => {
  const { store } = setup([...catalog(), runEv(2, A, p1, '2026-01-09', [brand(4, -1), brand(2, 0.25)])]);
  tt.match(body<VisibilityReport>(tt, visibility, store), { run_count: 1, mention_rate: 1, average_rank: 2, sentiment: 0.25, current_score: 50 });
  tt.match(body<CompetitorRankings>(tt, competitorRankings, store)[0], { entity_type: 'brand', mention_count: 1, share_of_voice: 1 });
  tt.end();
});

t.test('a project without runs: zeros, nulls and empty lists', (tt) => {
  const { store } = setup([...catalog(), ev('competitor.upserted', { id: id(5, '99999999'), project_id: W.project, name: 'Acme Project', aliases: [] }, LATER)]);
  const v = body<VisibilityReport>(tt, visibility, store);
  tt.match(v, { window_start: null, window_end: null, current_score: null, mention_rate: 0, run_count: 0, share_of_voice: null });
  tt.same(v.top_competitors.map((c) => c.name), ['Acme Project', 'Coyote', 'Road Runner', 'Wile'], 'zeros included, by name');
  tt.same(body(tt, timeseries, store), []);
  tt.same(body(tt, dailyScores, store), []);
  // All scores null: by name; the brand's id sorts as '' so it precedes the competitor of the same name.
  tt.same(body<CompetitorRankings>(tt, competitorRankings, store).map((r) => [r.rank, r.entity_type, r.name, r.score]), [
    [1, 'brand', 'Acme Project', null], [2, 'competitor', 'Acme Project', null], [3, 'competitor', 'Coyote', null],
    [4, 'competitor', 'Road Runner', null], [5, 'competitor', 'Wile', null],
  ]);
  tt.end();
});
