// Wilson 95 % intervals: the one function in src/store/metrics.ts against values worked
// out by hand (bc, 40 digits; docs/metrics.md "Confidence intervals"), then every `*_ci` of the five
// metric endpoints over real HTTP against the counts stored in the aggregate tables.
import t, { type Test } from 'tap';
import type { Db } from '../../src/store';
import { mentionRateCi, shareCi, wilson, Z95, zeroSums, type Interval } from '../../src/store/metrics';
import { asSource, run, W, world, type Ev } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { request, startApi, withKey } from '../helpers/http';

/** Hand values: z = 1.959964, bounds (2k + z^2 -/+ z sqrt(z^2 + 4k(n-k)/n)) / (2(n + z^2)), from bc to 40 digits, written to 15. */
const HAND: Array<[k: number, n: number, low: number, high: number]> = [
  [5, 12, 0.193260312434607, 0.680488689157576],   // the worked example of docs/metrics.md
  [0, 10, 0, 0.277532803026058],                   // 0 of n: low is 0, high is z^2 / (n + z^2)
  [10, 10, 0.722467196973942, 1],                  // n of n: the mirror image
  [1, 1, 0.206549311791803, 1],
  [0, 1, 0, 0.793450688208197],
  [1, 2, 0.0945312046392008, 0.905468795360799],
  [8, 18, 0.245595180037967, 0.662835845065731],
  [50, 100, 0.403831529635493, 0.596168470364507],
  [1, 1000, 0.000176546368676537, 0.00564255865992614],
];

const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-14;

t.test('wilson: values worked out by hand', (tt) => {
  tt.equal(Z95, 1.959964, 'z as documented');
  for (const [k, n, low, high] of HAND) {
    const ci = wilson(k, n)!;
    tt.ok(close(ci.low, low) && close(ci.high, high), `${k} of ${n}: [${ci.low}, ${ci.high}] is [${low}, ${high}]`);
  }
  tt.same(wilson(5, 12) && [wilson(5, 12)!.low.toFixed(4), wilson(5, 12)!.high.toFixed(4)], ['0.1933', '0.6805'], 'the documented 4 decimals');
  tt.end();
});

t.test('wilson: the edges are exact, nothing measured is null', (tt) => {
  tt.equal(wilson(0, 0), null, '0 runs: null, not an interval around 0');
  tt.equal(mentionRateCi(zeroSums()), null, 'mention rate of no runs');
  tt.equal(shareCi(0, 0), null, 'share of voice with nobody mentioned');
  for (const n of [1, 2, 3, 7, 12, 100, 365, 10_000, 1_000_000]) {
    tt.equal(wilson(0, n)!.low, 0, `0 of ${n}: low is 0 exactly`);
    tt.equal(wilson(n, n)!.high, 1, `${n} of ${n}: high is 1 exactly`);
  }
  tt.end();
});

t.test('wilson: brackets the rate, inside [0, 1], symmetric, narrows with n', (tt) => {
  let bad = 0;
  for (let n = 1; n <= 300; n += 1) {
    for (let k = 0; k <= n; k += 1) {
      const ci = wilson(k, n)!;
      const mirror = wilson(n - k, n)!;
      const ok = ci.low >= 0 && ci.low <= k / n && k / n <= ci.high && ci.high <= 1 && ci.low < ci.high
        && Math.abs(ci.low - (1 - mirror.high)) <= 1e-12;
      if (!ok) {
        bad += 1;
        if (bad <= 5) tt.fail(`${k} of ${n}: ${JSON.stringify(ci)} (mirror ${JSON.stringify(mirror)})`);
      }
    }
  }
  tt.equal(bad, 0, 'every k of n for n up to 300');
  const widths = [12, 120, 1200].map((n) => wilson(n * 0.4, n)!).map((ci) => ci.high - ci.low);
  tt.ok(widths[0]! > widths[1]! && widths[1]! > widths[2]!, `40 %: narrower with more runs (${widths.join(', ')})`);
  tt.same(mentionRateCi({ ...zeroSums(), runs: 12, mentioned: 5 }), wilson(5, 12), 'mentionRateCi is mentioned of runs');
  tt.end();
});

// ---- Over HTTP: every interval of every metric endpoint, from the stored counts.

const DAYS = ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04', '2026-01-05'];
const ENGINES = [W.engineA, W.engineB];
const PROMPTS = [W.prompt1, W.prompt2];

/** 40 runs spread over days, engines and prompts, with and without brand and competitor; every 7th failed; one quiet early day. */
function events(): Ev[] {
  const runs: Ev[] = [];
  for (let n = 1; n <= 40; n += 1) {
    runs.push(run({
      n, day: DAYS[n % DAYS.length], engine: ENGINES[n % 2], prompt: PROMPTS[Math.floor(n / 2) % 2],
      brand: n % 4 === 0 ? null : (n % 3) + 1, competitor: n % 5 === 0 || n % 3 === 0 ? null : (n % 2) + 1,
      status: n % 7 === 0 ? 'failed' : 'succeeded',
    }));
  }
  // In the trend, before the window, nobody mentioned: share of voice and its interval are null.
  runs.push(run({ n: 41, day: '2025-12-01', brand: null }));
  return [...world(), ...runs];
}

interface Scope { from: string; to: string; engine?: string; prompts?: string[] }

/** Counts straight from the stored runs' events as received (every prompt and engine of this world counts): a competitor once per run that names it. */
function stored(db: Db, s: Scope): { runs: number; brand: number; competitor: number } {
  const where = `r.project_id = ? AND r.day BETWEEN ? AND ? AND r.status = 'succeeded'${s.engine ? ' AND r.engine_id = ?' : ''}${s.prompts ? ' AND r.prompt_id IN (SELECT value FROM json_each(?))' : ''}`;
  const params = [W.project, s.from, s.to, ...(s.engine ? [s.engine] : []), ...(s.prompts ? [JSON.stringify(s.prompts)] : [])];
  const b = db.prepare(`SELECT count(*) AS runs, count(r.brand_position) AS brand FROM prompt_runs r WHERE ${where}`).get(...params) as { runs: number; brand: number };
  const c = db.prepare(`SELECT count(*) FROM (SELECT DISTINCT r.id, m.value ->> 'competitor_id' FROM prompt_runs r, json_each(r.event, '$.data.mentions') m
    WHERE ${where} AND m.value ->> 'entity_type' = 'competitor' AND m.value ->> 'competitor_id' IS NOT NULL)`).pluck().get(...params) as number;
  return { runs: b.runs, brand: b.brand, competitor: c };
}

type Json = Record<string, unknown>;

/** Every `<rate>_ci` in a body brackets its `<rate>`, and is null exactly when the rate's n is 0. */
function bracketsEverywhere(tt: Test, body: unknown, where: string): number {
  let seen = 0;
  const walk = (v: unknown, path: string): void => {
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${path}[${i}]`));
    if (v === null || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v as Json)) {
      if (k.endsWith('_ci')) {
        seen += 1;
        const rate = (v as Json)[k.slice(0, -3)] as number | null | undefined;
        const ci = x as Interval | null;
        if (rate === undefined) tt.fail(`${path}.${k} has no rate beside it`);
        else if (ci !== null && !(rate !== null && ci.low <= rate && rate <= ci.high)) tt.fail(`${path}.${k} ${JSON.stringify(ci)} misses ${rate}`);
      } else walk(x, `${path}.${k}`);
    }
  };
  walk(body, where);
  return seen;
}

t.test('over HTTP: every *_ci brackets its rate and is the Wilson interval of the stored counts', async (tt) => {
  const { db, projector } = freshDb(tt);
  projector.applyBatch(asSource(events()));
  const api = await startApi({ db });
  tt.teardown(() => api.close());
  const get = async (path: string): Promise<unknown> => {
    const r = await request(`${api.base}/projects/${W.project}${path}`, withKey(W.key));
    tt.equal(r.status, 200, path);
    return r.json;
  };
  const win: Scope = { from: '2025-12-30', to: '2026-01-05' };
  const all = stored(db, win);
  const voice = all.brand + all.competitor;
  tt.ok(all.runs > 20 && all.brand > 0 && all.competitor > 0 && all.brand < all.runs, `a world with something to measure: ${JSON.stringify(all)}`);

  // /visibility: totals, the one competitor, per prompt, per engine.
  const v = await get('/visibility') as Json & { top_competitors: Json[]; prompt_breakdown: Json[]; engine_breakdown: Json[] };
  tt.same([v.mention_rate_ci, v.share_of_voice_ci], [wilson(all.brand, all.runs), wilson(all.brand, voice)], 'visibility totals');
  tt.same([v.top_competitors[0]!.mention_rate_ci, v.top_competitors[0]!.share_of_voice_ci],
    [wilson(all.competitor, all.runs), wilson(all.competitor, voice)], 'top competitor: of the window\'s runs, of all mentions');
  for (const p of v.prompt_breakdown) {
    const s = stored(db, { ...win, prompts: [p.prompt_id as string] });
    tt.same(p.mention_rate_ci, wilson(s.brand, s.runs), `prompt ${p.text as string}`);
  }
  for (const e of v.engine_breakdown) {
    const s = stored(db, { ...win, engine: e.engine_id as string });
    tt.same(e.mention_rate_ci, wilson(s.brand, s.runs), `engine ${e.name as string}`);
  }

  // /visibility/timeseries and /scores/daily: per day, and per engine per day.
  const points = await get('/visibility/timeseries') as Array<Json & { engines: Json[] }>;
  const daily = await get('/scores/daily') as Json[];
  tt.equal(points.length, DAYS.length + 1, 'five days and the quiet one');
  for (const [label, rows] of [['timeseries', points], ['daily', daily]] as const) {
    for (const d of rows) {
      const s = stored(db, { from: d.date as string, to: d.date as string });
      tt.same([d.mention_rate_ci, d.share_of_voice_ci], [wilson(s.brand, s.runs), wilson(s.brand, s.brand + s.competitor)], `${label} ${d.date as string}`);
    }
  }
  tt.same(points[0]!.share_of_voice_ci, null, 'a day without any mention has no share of voice, so no interval');
  for (const d of points) {
    for (const e of d.engines) {
      const s = stored(db, { from: d.date as string, to: d.date as string, engine: e.engine_id as string });
      tt.same(e.mention_rate_ci, wilson(s.brand, s.runs), `timeseries ${d.date as string} engine ${e.engine_id as string}`);
    }
  }

  // /segments/analytics: Buyers holds prompt 1.
  const segments = await get('/segments/analytics') as Json[];
  const buyers = stored(db, { ...win, prompts: [W.prompt1] });
  tt.same([segments[0]!.mention_rate_ci, segments[0]!.share_of_voice_ci],
    [wilson(buyers.brand, buyers.runs), wilson(buyers.brand, buyers.brand + buyers.competitor)], 'segment Buyers');

  // /competitor-rankings: the brand and the competitor, both of the window's runs and of all mentions.
  const ranks = await get('/competitor-rankings') as Json[];
  const brandRow = ranks.find((r) => r.entity_type === 'brand')!;
  const compRow = ranks.find((r) => r.entity_type === 'competitor')!;
  tt.same([brandRow.mention_rate_ci, brandRow.share_of_voice_ci], [wilson(all.brand, all.runs), wilson(all.brand, voice)], 'rankings: brand');
  tt.same([compRow.mention_rate_ci, compRow.share_of_voice_ci], [wilson(all.competitor, all.runs), wilson(all.competitor, voice)], 'rankings: competitor');

  let seen = 0;
  for (const [path, body] of [['visibility', v], ['timeseries', points], ['daily', daily], ['segments', segments], ['rankings', ranks]] as const) {
    seen += bracketsEverywhere(tt, body, path);
  }
  tt.ok(seen > 40, `${seen} intervals bracket their rates`);
});
