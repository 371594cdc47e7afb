// Date ranges and intervals over real HTTP on loopback, on the demo data:
// start_date/end_date on every windowed endpoint, interval=day|week|month on the trend and daily
// scores. Checks that the default and the equivalent explicit range give the same bytes, that a
// range is a sum of its days (counts merge exactly), that weeks are ISO weeks and months calendar
// months (with the SQL and the JS grouping agreeing), that ranges are part of the cache key and of
// cursors, and that bad ranges get a 400 naming the parameter.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { DEMO_OPTIONS, generateWorld, worldKeys, type WorldOptions } from '../../fixtures/world';
import { addDays } from '../../src/lib/time';
import { FIRST_DAY, LAST_DAY } from '../../src/serve/request/date-rules';
import { rangePieces } from '../../src/readmodels/range-pieces';
import { periodStart } from '../../src/store/periods';
import type { Db } from '../../src/store';
import { activeKeys, demoDb } from '../helpers/demo';
import { asSource, ev, id, W, world, type Ev } from '../helpers/events';
import { freshDb } from '../helpers/db';
import { oracleAggregates } from '../helpers/oracle-aggregates';
import { request, startApi, withKey } from '../helpers/http';
import { canonical, isoWeek, Oracle, periodLabel } from '../helpers/oracle-metrics';
import { ROOT } from '../helpers/paths';

interface Point { date: string; run_count: number; mention_rate: number }
interface Visibility { window_start: string | null; window_end: string | null; run_count: number; mention_rate: number }

const WINDOWED = ['visibility', 'segments/analytics', 'competitor-rankings', 'citations', 'referrers', 'warm-leads'];

t.test('periodStart: ISO weeks start on Monday, across a year end; months on the 1st', (t) => {
  t.equal(periodStart('2026-12-31', 'week'), '2026-12-28', 'Thursday 2026-12-31: the week of Monday 2026-12-28 (ISO week 53 of 2026)');
  t.equal(periodStart('2027-01-01', 'week'), '2026-12-28', 'Friday 2027-01-01 is in the same ISO week');
  t.equal(periodStart('2027-01-03', 'week'), '2026-12-28', 'Sunday 2027-01-03 ends it');
  t.equal(periodStart('2027-01-04', 'week'), '2027-01-04', 'Monday 2027-01-04 starts week 1 of 2027');
  t.equal(periodStart('2026-11-24', 'week'), '2026-11-23');
  t.equal(periodStart('2026-02-28', 'month'), '2026-02-01');
  t.equal(periodStart('2026-02-28', 'day'), '2026-02-28');
  t.end();
});

t.test('ranges and intervals over HTTP', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const get = (path: string, headers: Record<string, string> = {}): ReturnType<typeof request> => request(api.base + path, withKey(key, headers));
  const project = ((await get('/projects')).json as Array<{ id: string }>)[0]!.id;
  const base = `/projects/${project}`;
  const v = (await get(`${base}/visibility`)).json as Visibility;
  const [ws, we] = [v.window_start!, v.window_end!];

  t.test('v1 requests and the same window asked explicitly answer the same bytes', async (t) => {
    for (const e of WINDOWED) {
      const plain = await get(`${base}/${e}`);
      t.equal(plain.status, 200, e);
      t.equal((await get(`${base}/${e}?start_date=${ws}&end_date=${we}`)).text, plain.text, `${e}: start_date..end_date = the current window`);
      t.equal((await get(`${base}/${e}?end_date=${we}`)).text, plain.text, `${e}: end_date alone = the window's length ending there`);
      t.equal((await get(`${base}/${e}?start_date=${ws}`)).text, plain.text, `${e}: start_date alone = the window's length starting there`);
    }
    const series = await get(`${base}/visibility/timeseries`);
    t.equal((await get(`${base}/visibility/timeseries?interval=day`)).text, series.text, 'interval=day is the v1 trend');
    t.equal((await get(`${base}/visibility/timeseries?end_date=${we}`)).text, series.text, 'the trend: end_date alone = 365 days ending there');
    t.equal((await get(`${base}/visibility/timeseries?start_date=${addDays(we, -364)}&end_date=${we}`)).text, series.text, 'and the same range explicitly');
  });

  t.test('a range is the sum of its days', async (t) => {
    const end = we;
    const start = addDays(we, -29);
    const r = (await get(`${base}/visibility?start_date=${start}&end_date=${end}`)).json as Visibility;
    t.same([r.window_start, r.window_end], [start, end], 'the range is echoed as the window');
    const days = (await get(`${base}/visibility/timeseries?start_date=${start}&end_date=${end}`)).json as Point[];
    t.ok(days.length >= 20, `${days.length} days with runs`);
    t.ok(days.every((d) => d.date >= start && d.date <= end), 'every point inside the range');
    t.equal(r.run_count, days.reduce((n, d) => n + d.run_count, 0), 'runs: the sum of the days');
    const mentioned = days.reduce((n, d) => n + Math.round(d.mention_rate * d.run_count), 0);
    t.equal(Math.round(r.mention_rate * r.run_count), mentioned, 'mentioning runs: the sum of the days');
    const one = (await get(`${base}/visibility?start_date=${days[3]!.date}&end_date=${days[3]!.date}`)).json as Visibility;
    t.same([one.run_count, one.mention_rate], [days[3]!.run_count, days[3]!.mention_rate], 'a one-day range is that day of the trend');
    const none = (await get(`${base}/visibility?start_date=2020-01-01&end_date=2020-12-31`)).json as Visibility;
    t.same([none.window_start, none.window_end, none.run_count], ['2020-01-01', '2020-12-31', 0], 'a range without runs: zero runs, not an error');
  });

  t.test('interval=week|month: ISO weeks and months, each the sum of its days; SQL and JS agree', async (t) => {
    const start = addDays(we, -120);
    const q = `start_date=${start}&end_date=${we}`;
    const days = (await get(`${base}/visibility/timeseries?${q}`)).json as Point[];
    for (const interval of ['week', 'month'] as const) {
      const points = (await get(`${base}/visibility/timeseries?${q}&interval=${interval}`)).json as Point[];
      t.ok(points.length > 1, `${points.length} ${interval}s`);
      t.same(points.map((p) => p.date), [...new Set(days.map((d) => periodStart(d.date, interval)))], `${interval}s in order, labelled by their first day`);
      if (interval === 'week') t.ok(points.every((p) => new Date(`${p.date}T00:00:00Z`).getUTCDay() === 1), 'every week label is a Monday');
      else t.ok(points.every((p) => p.date.endsWith('-01')), 'every month label is the 1st');
      for (const p of points) {
        const mine = days.filter((d) => periodStart(d.date, interval) === p.date);
        t.equal(p.run_count, mine.reduce((n, d) => n + d.run_count, 0), `${interval} ${p.date}: runs summed`);
        const mentioned = mine.reduce((n, d) => n + Math.round(d.mention_rate * d.run_count), 0);
        t.equal(Math.round(p.mention_rate * p.run_count), mentioned, `${interval} ${p.date}: rate from summed counts`);
      }
      const scores = (await get(`/projects/${project}/scores/daily?${q}&interval=${interval}&limit=365`)).json as Point[];
      t.same(scores.map((s) => [s.date, s.run_count]), [...points].reverse().map((p) => [p.date, p.run_count]),
        `daily scores per ${interval} (grouped in SQL) = the trend's (grouped in JS), newest first`);
    }
  });

  t.test('ranges are part of the cache key, the ETag and the cursor', async (t) => {
    const a = await get(`${base}/citations?start_date=${addDays(we, -2)}&end_date=${we}`);
    const b = await get(`${base}/citations?start_date=${addDays(we, -20)}&end_date=${we}`);
    t.not(a.headers.etag, b.headers.etag, 'two ranges, two ETags');
    t.not(a.text, b.text, 'and two bodies');
    t.equal((await get(`${base}/citations?start_date=${addDays(we, -2)}&end_date=${we}`, { 'if-none-match': a.headers.etag! })).status, 304, 'the same range revalidates');
    const page = await get(`${base}/mentions?start_date=${addDays(we, -2)}&end_date=${we}&limit=5`);
    const mentions = page.json as Array<{ observed_at: string }>;
    t.ok(mentions.length === 5 && mentions.every((m) => m.observed_at.slice(0, 10) >= addDays(we, -2) && m.observed_at.slice(0, 10) <= we), 'mentions of the range only');
    // The Link as given (the client follows it unchanged): it keeps the range, so page 2 is of the same list.
    const next = new URL(/<([^>]+)>/.exec(String(page.headers.link))![1]!, api.base);
    const cursor = next.searchParams.get('cursor')!;
    const page2 = await request(next.toString(), withKey(key));
    t.equal(page2.status, 200, 'the Link followed as given');
    t.ok((page2.json as Array<{ observed_at: string }>).every((m) => m.observed_at.slice(0, 10) >= addDays(we, -2) && m.observed_at.slice(0, 10) <= we), 'page 2: mentions of the range only');
    t.same([next.searchParams.get('start_date'), next.searchParams.get('end_date')], [addDays(we, -2), we], 'the Link names the range');
    const other = await get(`${base}/mentions?start_date=${addDays(we, -9)}&end_date=${we}&limit=5&cursor=${encodeURIComponent(cursor)}`);
    t.equal(other.status, 400, 'a cursor of another range is refused');
    t.match((other.json as { message: string }).message, /^cursor /);
    const forum = (await get(`${base}/forum/metrics?start_date=2020-01-01&end_date=2020-01-31`)).json as { total_opportunities: number };
    t.equal(forum.total_opportunities, 0, 'forum metrics of a range with no posts discovered');
  });

  t.test('bad ranges: 400 naming the parameter', async (t) => {
    const cases: Array<[string, RegExp]> = [
      ['start_date=2026-02-30', /^start_date must be a date YYYY-MM-DD from 1970-01-01 to 8999-12-31, got "2026-02-30"$/],
      ['end_date=26-01-01', /^end_date must be a date YYYY-MM-DD from 1970-01-01 to 8999-12-31, got "26-01-01"$/],
      // Found by the contract fuzzer: a year before 1000 once made a 500 (an unpadded year in a month's arithmetic).
      ['end_date=0503-02-05', /^end_date must be a date YYYY-MM-DD from 1970-01-01 to 8999-12-31, got "0503-02-05"$/],
      ['start_date=1969-12-31', /^start_date must be a date YYYY-MM-DD from 1970-01-01 to 8999-12-31, got "1969-12-31"$/],
      ['start_date=2026-03-02&end_date=2026-03-01', /^start_date must be on or before end_date \(2026-03-01\), got "2026-03-02"$/],
      ['start_date=2025-01-01&end_date=2026-01-02', /^start_date must be at most 365 days before end_date \(2026-01-02: a range of at most 366 days\), got "2025-01-01"$/],
    ];
    for (const [q, message] of cases) {
      const r = await get(`${base}/visibility?${q}`);
      t.equal(r.status, 400, q);
      t.match((r.json as { message: string }).message, message);
    }
    t.equal((await get(`${base}/visibility?start_date=2024-01-01&end_date=2024-12-31`)).status, 200, '366 days (a leap year) is allowed');
    // The ends of the accepted days, with a year-long default range computed from them, by every interval:
    // the range one end makes must stay within 1970-01-01..8999-12-31 too.
    const yearly = (q: string): string[] => ['day', 'week', 'month'].flatMap((i) => [`visibility/timeseries?${q}&interval=${i}`, `scores/daily?${q}&interval=${i}`]);
    const inside = [...yearly('start_date=1970-01-01'), ...yearly('end_date=8999-12-31'), ...yearly('start_date=8999-01-01'), ...yearly('end_date=1970-12-31'),
      'visibility?start_date=1970-01-01', 'visibility?end_date=8999-12-31', 'visibility?start_date=8999-12-25', 'visibility?end_date=1970-01-07', 'mentions?start_date=8999-12-25', 'forum/metrics?end_date=1970-01-07'];
    for (const path of inside) t.equal((await get(`${base}/${path}`)).status, 200, path);
    const last = (await get(`${base}/visibility?start_date=8999-12-25`)).json as Visibility;
    t.same([last.window_start, last.window_end], ['8999-12-25', '8999-12-31'], 'the last window the API accepts');
    const outside: Array<[string, RegExp]> = [
      ...yearly('start_date=8999-12-31').map((p): [string, RegExp] => [p, /^start_date must be on or before 8999-01-01 without end_date \(the range is then the 365 days from start_date, which must end by 8999-12-31\), got "8999-12-31"$/]),
      ...yearly('end_date=1970-01-01').map((p): [string, RegExp] => [p, /^end_date must be on or after 1970-12-31 without start_date \(the range is then the 365 days to end_date, which must begin on or after 1970-01-01\), got "1970-01-01"$/]),
      ['visibility?start_date=8999-12-26', /^start_date must be on or before 8999-12-25 without end_date \(the range is then the 7 days from start_date, which must end by 8999-12-31\), got "8999-12-26"$/],
      ['citations?start_date=8999-12-31', /^start_date must be on or before 8999-12-25 /],
      ['mentions?start_date=8999-12-31', /^start_date must be on or before 8999-12-25 /],
      ['forum/metrics?end_date=1970-01-06', /^end_date must be on or after 1970-01-07 /],
      ['visibility?end_date=1970-01-01', /^end_date must be on or after 1970-01-07 without start_date \(the range is then the 7 days to end_date, which must begin on or after 1970-01-01\), got "1970-01-01"$/],
    ];
    for (const [path, message] of outside) {
      const r = await get(`${base}/${path}`);
      t.equal(r.status, 400, `${path}: its range would leave the accepted days`);
      t.match(r.json, { error: true, message }, path);
      t.equal(r.headers['x-error-code'], 'invalid_parameter');
    }
    // Both ends given: they are the range, whichever ends of the accepted days they are.
    t.equal((await get(`${base}/visibility?start_date=8999-12-31&end_date=8999-12-31`)).status, 200, 'the last accepted day as a range of its own');
    t.equal((await get(`${base}/visibility?start_date=1970-01-01&end_date=1970-01-01`)).status, 200, 'the first one');
    const interval = await get(`${base}/visibility/timeseries?interval=year`);
    t.equal(interval.status, 400);
    t.match((interval.json as { message: string }).message, /^interval must be one of day, week, month, got "year"$/);
  });

  t.test('the OpenAPI document lists the parameters where they apply', async (t) => {
    const doc = (await request(`${api.base}/openapi.json`)).json as { paths: Record<string, { get: { parameters: Array<{ name: string }> } }> };
    const names = (p: string): string[] => doc.paths[`/projects/{project_id}/${p}`]!.get.parameters.map((x) => x.name);
    for (const e of [...WINDOWED, 'mentions', 'forum/metrics']) t.ok(names(e).includes('start_date') && names(e).includes('end_date'), `${e}: start_date, end_date`);
    for (const e of ['visibility/timeseries', 'scores/daily']) t.ok(names(e).includes('interval'), `${e}: interval`);
    t.notOk(names('prompts').includes('start_date'), 'not on lists that have no window');
  });
});

// ---- A world of 420 days across a year end, against the independent oracle (test/helpers/oracle-metrics.ts).

const YEAR_WORLD: WorldOptions = {
  ...DEMO_OPTIONS, seed: 15, accounts: 1, projectsPerAccount: 1, sharedProjects: 0, engines: 3, enginesPerProject: 3,
  promptsPerProject: 4, segmentsPerProject: 2, competitorsPerProject: 3, forumPostsPerProject: 0, runsPerPromptPerDay: 1,
  days: 420, endDay: '2027-02-10',
};

/**
 * The world's log, then corrections that move sums between weeks, months and years: a run of
 * 2026-12-31 re-analysed on 2027-01-05 (another ISO week, month and year), one re-analysed as failed,
 * one re-analysed without mentions. Each keeps its id and arrives later, so it replaces the first version.
 */
function yearWorld(): Ev[] {
  const events = [...generateWorld(YEAR_WORLD)].map((line) => JSON.parse(line) as Ev);
  const runOn = (day: string, nth: number): Ev => events.filter((e) => e.type === 'prompt_run.completed' && String(e.data.completed_at).startsWith(day) && e.data.status === 'succeeded')[nth]!;
  const later = (e: Ev, data: Record<string, unknown>, n: number): Ev => ({
    ...e, event_id: `${e.event_id.slice(0, -4)}f${String(n).padStart(3, '0')}`, occurred_at: '2027-02-11T00:00:00.000Z', data: { ...e.data, ...data },
  });
  return [
    ...events,
    later(runOn('2026-12-31', 0), { completed_at: '2027-01-05T10:00:00.000Z' }, 1),
    later(runOn('2026-06-15', 0), { status: 'failed', mentions: [], citations: [] }, 2),
    later(runOn('2026-03-31', 1), { mentions: [] }, 3),
  ];
}

/** Rows in one query's answer and not the other's, both ways. */
const differ = (db: Db, a: string, b: string): number =>
  (db.prepare(`SELECT count(*) FROM (${a} EXCEPT ${b})`).pluck().get() as number) + (db.prepare(`SELECT count(*) FROM (${b} EXCEPT ${a})`).pluck().get() as number);

const AGGREGATES = ['agg_prompt_week', 'agg_prompt_month', 'agg_competitor_week', 'agg_competitor_month', 'agg_engine_day',
  'agg_cited_week', 'agg_cited_month', 'agg_cited_engine_week', 'agg_cited_engine_month', 'agg_run_group'];

/** Aggregate rows the writer left that the SQL oracle does not count from the runs, and the other way round (the tables are then the oracle's). */
function rollupDrift(db: Db): number {
  for (const table of AGGREGATES) db.exec(`CREATE TEMP TABLE kept_${table} AS SELECT * FROM ${table}`);
  oracleAggregates(db);
  let drift = 0;
  for (const table of AGGREGATES) {
    // Unqualified: the oracle's roll-ups are temporary tables in place of the views (test/helpers/oracle-aggregates.sql).
    drift += differ(db, `SELECT * FROM kept_${table}`, `SELECT * FROM ${table}`);
    db.exec(`DROP TABLE kept_${table}`);
  }
  return drift;
}

t.test('ISO weeks: the oracle\'s textbook rule', (t) => {
  t.equal(isoWeek('2026-12-31'), '2026-W53', '2026 has 53 ISO weeks (it starts on a Thursday)');
  t.equal(isoWeek('2027-01-01'), '2026-W53', '2027-01-01 is in week 53 of 2026');
  t.equal(isoWeek('2027-01-04'), '2027-W01');
  for (let d = '2025-12-01'; d <= '2027-02-28'; d = addDays(d, 1)) {
    if (periodStart(d, 'week') !== periodLabel(d, 'week')) t.fail(`${d}: server ${periodStart(d, 'week')}, oracle ${periodLabel(d, 'week')}`);
  }
  t.end();
});

/** The last day of a day's month (Date.UTC's day 0 of the next month). */
const monthEnd = (day: string): string => new Date(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)), 0)).toISOString().slice(0, 10);

t.test('rangePieces: every day once, in order, each piece inside one period of its grouping', (t) => {
  const ranges: Array<[string, string]> = [['2025-11-16', '2026-11-15'], ['2026-12-20', '2027-01-10'], ['2026-02-01', '2026-02-28'], ['2026-03-05', '2026-11-26'], ['2027-01-01', '2027-01-01'], ['2024-01-01', '2024-12-31']];
  for (const [start, end] of ranges) {
    for (const grouping of ['total', 'day', 'week', 'month'] as const) {
      const days: string[] = [];
      for (const p of rangePieces(start, end, grouping)) {
        for (let d = p.start; d <= p.end; d = addDays(d, 1)) {
          if (periodStart(d, p.grain) !== d) continue; // rows of a week or month table sit on the period's first day
          const last = p.grain === 'day' ? d : p.grain === 'week' ? addDays(d, 6) : monthEnd(d);
          if (grouping !== 'total' && periodStart(d, grouping) !== periodStart(last, grouping)) t.fail(`${start}..${end} by ${grouping}: ${p.grain} ${d} crosses a ${grouping}`);
          for (let x = d; x <= last; x = addDays(x, 1)) days.push(x);
        }
      }
      const expected: string[] = [];
      for (let d = start; d <= end; d = addDays(d, 1)) expected.push(d);
      t.same(days, expected, `${start}..${end} by ${grouping}: ${rangePieces(start, end, grouping).map((p) => `${p.grain} ${p.start}..${p.end}`).join(', ')}`);
    }
  }
  t.equal(rangePieces('2025-11-16', '2026-11-15', 'total').length <= 6, true, 'a year is a handful of queries');
  t.end();
});

t.test('ranges and intervals against the oracle, over HTTP, on 420 days across a year end', async (t) => {
  const events = yearWorld();
  const { db, projector } = freshDb(t);
  for (let i = 0; i < events.length; i += 1000) projector.applyBatch(asSource(events.slice(i, i + 1000), 'test', 1 + i));
  projector.settle();
  t.equal(rollupDrift(db), 0, 'every roll-up = what the oracle counts from the runs, after moves and corrections');
  const oracle = new Oracle(events);
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close());
  const key = worldKeys(YEAR_WORLD).find((k) => !k.revoked)!.key;
  const get = async (path: string): Promise<unknown> => {
    const r = await request(api.base + path, withKey(key));
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  const project = ((await get('/projects')) as Array<{ id: string }>)[0]!.id;
  const engines = ((await get(`/projects/${project}/engines`)) as Array<{ id: string }>).map((e) => e.id).sort();
  const base = `/projects/${project}`;

  const ranges: Array<[string, string, string]> = [
    ['2026-02-11', '2027-02-10', '366 days, to the last day of data'],
    ['2026-12-31', '2026-12-31', 'one day'],
    ['2026-12-20', '2027-01-10', 'across the year end (ISO week 53 of 2026)'],
    ['2026-02-01', '2026-02-28', 'one whole month'],
    ['2026-03-05', '2026-11-26', 'ragged at both ends'],
    ['2025-12-01', '2025-12-31', 'before the first day of data: partly empty'],
  ];
  for (const [start, end, label] of ranges) {
    oracle.range = { start, end };
    const q = `start_date=${start}&end_date=${end}`;
    t.same(canonical(await get(`${base}/visibility?${q}`)), canonical(oracle.visibility(project)), `visibility, ${label}`);
    t.same(canonical(await get(`${base}/visibility?${q}&engine_ids=${engines[0]!}&engine_ids=${engines[2]!}`)), canonical(oracle.visibility(project, [engines[0]!, engines[2]!])), `visibility with engine_ids, ${label}`);
    t.same(canonical(await get(`${base}/segments/analytics?${q}`)), canonical(oracle.segmentAnalytics(project)), `segment analytics, ${label}`);
    t.same(canonical(await get(`${base}/competitor-rankings?${q}`)), canonical(oracle.competitorRankings(project)), `competitor rankings, ${label}`);
    // The cited-URL roll-ups (migration 009): every URL of the range, with and without an engine filter.
    t.same(canonical(await get(`${base}/citations?${q}&limit=1000`)), canonical(oracle.citations(project, null, 1000)), `citations, ${label}`);
    t.same(canonical(await get(`${base}/citations?${q}&limit=1000&engine_ids=${engines[0]!}&engine_ids=${engines[2]!}`)),
      canonical(oracle.citations(project, [engines[0]!, engines[2]!], 1000)), `citations with engine_ids, ${label}`);
    for (const interval of ['day', 'week', 'month'] as const) {
      t.same(canonical(await get(`${base}/visibility/timeseries?${q}&interval=${interval}`)), canonical(oracle.timeseries(project, interval)), `timeseries by ${interval}, ${label}`);
      t.same(canonical(await get(`${base}/scores/daily?${q}&interval=${interval}&limit=365`)), canonical(oracle.periodScores(project, interval, 365)), `daily scores by ${interval}, ${label}`);
    }
  }
  oracle.range = null;
  for (const interval of ['week', 'month'] as const) {
    t.same(canonical(await get(`${base}/visibility/timeseries?interval=${interval}`)), canonical(oracle.timeseries(project, interval)), `timeseries by ${interval}, the default year`);
    t.same(canonical(await get(`${base}/scores/daily?interval=${interval}&limit=10`)), canonical(oracle.periodScores(project, interval, 10)), `the newest 10 ${interval}s of daily scores`);
  }
  const weeks = (await get(`${base}/visibility/timeseries?start_date=2026-12-20&end_date=2027-01-10&interval=week`)) as Array<{ date: string }>;
  t.same(weeks.map((w) => w.date), ['2026-12-14', '2026-12-21', '2026-12-28', '2027-01-04'], 'weeks labelled by their Monday; 2026-12-28 is ISO week 53, holding 2026-12-31 and 2027-01-01');
  t.same(canonical(await get(`${base}/visibility`)), canonical(oracle.visibility(project)), 'no range: the current window, as in v1');
});

/**
 * Citations over a range come from the cited-URL roll-ups (migration 009): whole months and weeks as
 * one row per URL, ragged days as days. One URL cited in each kind of piece, with titles that change
 * over time and tie at one instant across engines, then a run re-analysed away: the title, first and
 * last, prompt and engine sets are those of the citations in the range, by the rules of docs/metrics.md.
 */
t.test('citations merged across month, week and day pieces: title, first/last, prompts, engines, supersedes', async (t) => {
  const url = 'https://docs.example.org/guide';
  const cite = (n: number, at: string, engine: string, prompt: string, title: string | null, occurred = '2026-03-20T00:00:00Z'): Ev => ev('prompt_run.completed', {
    id: id(n, '55555555'), run_group_id: W.group, project_id: W.project, prompt_id: prompt, engine_id: engine, status: 'succeeded',
    completed_at: at, mentions: [], citations: title === null ? [{ url }] : [{ url, title }],
  }, occurred);
  const runs = [
    cite(1, '2026-01-27T09:00:00Z', W.engineA, W.prompt1, 'January'),   // a day of the range's first ragged days
    cite(2, '2026-02-10T10:00:00Z', W.engineB, W.prompt2, 'February'),  // the whole month of February
    cite(3, '2026-03-04T12:00:00Z', W.engineB, W.prompt1, 'Tie by B'),  // the week of Monday 2026-03-02 ...
    cite(4, '2026-03-04T12:00:00Z', W.engineA, W.prompt1, 'Tie by A'),  // ... at the same instant: engine A's bucket is first
    cite(5, '2026-03-10T07:00:00Z', W.engineB, W.prompt1, null),        // the last ragged day: latest, untitled
    cite(6, '2026-03-11T08:00:00Z', W.engineA, W.prompt2, 'After'),     // after the range
  ];
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource(world()));
  projector.applyBatch(asSource(runs, 'test', 100));
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close());
  // fresh: the data just committed (Cache-Control: no-cache), not a body within the staleness bound.
  const citations = async (query: string, fresh = false): Promise<unknown> => {
    const r = await request(`${api.base}/projects/${W.project}/citations?${query}`, withKey(W.key, fresh ? { 'cache-control': 'no-cache' } : {}));
    t.equal(r.status, 200, query);
    return (r.json as Array<Record<string, unknown>>).map(({ url: u, title, citation_count, prompt_count, engine_ids, first_cited_at, last_cited_at }) =>
      ({ url: u, title, citation_count, prompt_count, engine_ids, first_cited_at, last_cited_at }));
  };
  const both = [W.engineA, W.engineB].sort();
  t.same(rangePieces('2026-01-26', '2026-03-10', 'total').map((p) => p.grain), ['day', 'month', 'day', 'week', 'day'], 'the range is days, a month, a day, a week and days');
  t.same(await citations('start_date=2026-01-26&end_date=2026-03-10'), [{
    url, title: 'Tie by A', citation_count: 5, prompt_count: 2, engine_ids: both, first_cited_at: '2026-01-27T09:00:00.000Z', last_cited_at: '2026-03-10T07:00:00.000Z',
  }], 'the whole range: the latest titled citation, its tie going to the first engine');
  t.same(await citations('start_date=2026-01-26&end_date=2026-02-28'), [{
    url, title: 'February', citation_count: 2, prompt_count: 2, engine_ids: both, first_cited_at: '2026-01-27T09:00:00.000Z', last_cited_at: '2026-02-10T10:00:00.000Z',
  }], 'to the end of February');
  t.same(await citations(`start_date=2026-01-26&end_date=2026-03-10&engine_ids=${W.engineB}`), [{
    url, title: 'Tie by B', citation_count: 3, prompt_count: 2, engine_ids: [W.engineB], first_cited_at: '2026-02-10T10:00:00.000Z', last_cited_at: '2026-03-10T07:00:00.000Z',
  }], 'engine B alone: its own citations, its own title');
  // With a filter, ragged days are read from the day rows, one per engine and prompt: the tie is decided there.
  t.same(await citations(`start_date=2026-03-04&end_date=2026-03-10&engine_ids=${W.engineB}&engine_ids=${W.engineA}`), [{
    url, title: 'Tie by A', citation_count: 3, prompt_count: 1, engine_ids: both, first_cited_at: '2026-03-04T12:00:00.000Z', last_cited_at: '2026-03-10T07:00:00.000Z',
  }], 'both engines over ragged days only: the tie goes to the first engine there too');
  // Run 4 re-analysed: it no longer cites the URL. The tie's winner is gone from every piece it was in.
  projector.applyBatch(asSource([ev('prompt_run.completed', { ...runs[3]!.data, citations: [] }, '2026-03-21T00:00:00Z')], 'test', 200));
  t.same(await citations('start_date=2026-01-26&end_date=2026-03-10', true), [{
    url, title: 'Tie by B', citation_count: 4, prompt_count: 2, engine_ids: both, first_cited_at: '2026-01-27T09:00:00.000Z', last_cited_at: '2026-03-10T07:00:00.000Z',
  }], 'after the supersede: engine B\'s title, one citation fewer');
});

t.test('the days a range may cover are the days start_date and end_date accept', (t) => {
  for (const name of ['start_date', 'end_date']) {
    const def = JSON.parse(fs.readFileSync(path.join(ROOT, 'schemas', 'params', `${name}.json`), 'utf8')) as { 'x-accepts': string; schema: { pattern: string } };
    t.match(def['x-accepts'], `from ${FIRST_DAY} to ${LAST_DAY}`, `${name}: x-accepts names them`);
    const pattern = new RegExp(def.schema.pattern);
    t.ok(pattern.test(FIRST_DAY) && pattern.test(LAST_DAY), `${name}: the pattern accepts both`);
    t.notOk(pattern.test(addDays(FIRST_DAY, -1)) || pattern.test(addDays(LAST_DAY, 1)), `${name}: and not the days beyond`);
  }
  t.end();
});
