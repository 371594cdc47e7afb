// Date ranges and intervals (issue 15, point 1) over real HTTP on loopback, on the demo data:
// start_date/end_date on every windowed endpoint, interval=day|week|month on the trend and daily
// scores. Checks that the default and the equivalent explicit range give the same bytes, that a
// range is a sum of its days (counts merge exactly), that weeks are ISO weeks and months calendar
// months (with the SQL and the JS grouping agreeing), that ranges are part of the cache key and of
// cursors, and that bad ranges get a 400 naming the parameter.
import t from 'tap';
import { addDays } from '../src/lib/time';
import { periodStart } from '../src/readmodels/formulas';
import { activeKeys, demoDb } from './demo';
import { request, startApi, withKey } from './http';

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
    const cursor = new URL(/<([^>]+)>/.exec(String(page.headers.link))![1]!, api.base).searchParams.get('cursor')!;
    t.equal((await get(`${base}/mentions?start_date=${addDays(we, -2)}&end_date=${we}&limit=5&cursor=${encodeURIComponent(cursor)}`)).status, 200, 'its cursor with the same range');
    const other = await get(`${base}/mentions?start_date=${addDays(we, -9)}&end_date=${we}&limit=5&cursor=${encodeURIComponent(cursor)}`);
    t.equal(other.status, 400, 'a cursor of another range is refused');
    t.match((other.json as { message: string }).message, /^cursor /);
    const forum = (await get(`${base}/forum/metrics?start_date=2020-01-01&end_date=2020-01-31`)).json as { total_opportunities: number };
    t.equal(forum.total_opportunities, 0, 'forum metrics of a range with no posts discovered');
  });

  t.test('bad ranges: 400 naming the parameter', async (t) => {
    const cases: Array<[string, RegExp]> = [
      ['start_date=2026-02-30', /^start_date must be a date YYYY-MM-DD, got "2026-02-30"$/],
      ['end_date=26-01-01', /^end_date must be a date YYYY-MM-DD, got "26-01-01"$/],
      ['start_date=2026-03-02&end_date=2026-03-01', /^start_date must be on or before end_date \(2026-03-01\), got "2026-03-02"$/],
      ['start_date=2025-01-01&end_date=2026-01-02', /^start_date must be at most 365 days before end_date \(2026-01-02: a range of at most 366 days\), got "2025-01-01"$/],
    ];
    for (const [q, message] of cases) {
      const r = await get(`${base}/visibility?${q}`);
      t.equal(r.status, 400, q);
      t.match((r.json as { message: string }).message, message);
    }
    t.equal((await get(`${base}/visibility?start_date=2024-01-01&end_date=2024-12-31`)).status, 200, '366 days (a leap year) is allowed');
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
