// The dashboard's view in the URL (web/state.ts) and how it writes changes (web/format.ts): pure
// functions, checked here without a browser. The browser test drives the same through the page.
import t from 'tap';
import { change, delta, points, qValue, share, slice } from '../../web/format';
import { apiQuery, emptyFilters, fromQuery, ignored, rangeStart, toQuery } from '../../web/state';

t.test('a view survives the URL: what is shared is what is shown', async (t) => {
  const search = 'project=p1&start_date=2026-10-17&end_date=2026-11-15&interval=week&compare=previous_period' +
    '&engine_ids=e1&engine_ids=e2&country=DE&country=US&persona=cto&segment_ids=s1';
  const view = fromQuery(`?${search}`);
  t.same(view, {
    project: 'p1', start_date: '2026-10-17', end_date: '2026-11-15', interval: 'week', compare: true,
    filters: { engine_ids: ['e1', 'e2'], country: ['DE', 'US'], persona: ['cto'], model: [], segment_ids: ['s1'] },
  });
  t.equal(toQuery(view), search, 'written back the same, in a fixed order');
  t.same(apiQuery(view), {
    start_date: '2026-10-17', end_date: '2026-11-15', interval: 'week', compare: 'previous_period',
    engine_ids: ['e1', 'e2'], country: ['DE', 'US'], persona: ['cto'], segment_ids: ['s1'],
  }, "the API's parameters (no project, empty filters left out)");
});

t.test('the default view sends nothing: the reports answer as for a v1 client', async (t) => {
  const view = fromQuery('');
  t.same(apiQuery(view), {});
  t.equal(toQuery(view), '');
  t.same(apiQuery(fromQuery('?interval=day&compare=no&start_date=2026-13&country=')), {}, 'defaults and unreadable values are dropped');
  t.same(apiQuery(fromQuery('?country=US&country=US')), { country: ['US'] }, 'a value picked twice is sent once');
});

t.test('presets end with the range end and count it', async (t) => {
  t.equal(rangeStart('2026-11-15', 7), '2026-11-09', 'the current window: 7 days');
  t.equal(rangeStart('2026-03-01', 30), '2026-01-31', 'across a month end');
  t.equal(rangeStart('2024-12-31', 366), '2024-01-01', 'a leap year');
  t.equal(rangeStart('2026-11-15', 1), '2026-11-15');
});

t.test('a report says which choices it leaves out', async (t) => {
  const view = { start_date: '2026-11-01', compare: false, filters: { ...emptyFilters(), engine_ids: ['e1'], country: ['US'] } };
  t.same(ignored(view, new Set(['start_date', 'end_date', 'engine_ids', 'country'])), []);
  t.same(ignored(view, new Set(['start_date', 'end_date', 'interval'])), ['engine', 'country']);
  t.same(ignored(view, new Set(['limit'])), ['date range', 'engine', 'country']);
});

t.test('changes in percentage points, with the interval and the verdict in words', async (t) => {
  t.equal(points(0.042), '+4.2');
  t.equal(points(-0.0081), '−0.8');
  t.equal(points(-0.0004), '0.0', 'no sign on a change that rounds to nothing');
  t.equal(delta(0.042, { low: 0.011, high: 0.073 }), '+4.2 pts [+1.1, +7.3]');
  t.equal(delta(null, null), '–');
  const c = { previous: 0.5, previous_ci: { low: 0.4, high: 0.6 }, delta: 0.042, delta_ci: { low: 0.011, high: 0.073 }, significant: true };
  t.equal(change(c), '+4.2 pts [+1.1, +7.3] ▲ significant');
  t.equal(change({ ...c, delta: -0.05, delta_ci: { low: -0.09, high: -0.01 } }), '−5.0 pts [−9.0, −1.0] ▼ significant');
  t.equal(change({ ...c, delta: 0.01, delta_ci: { low: -0.02, high: 0.04 }, significant: false }), '+1.0 pts [−2.0, +4.0] not significant');
  t.equal(change({ ...c, delta: null, delta_ci: null, significant: false }), '–', 'n = 0 on a side: no change to show');
  t.equal(change(undefined), '–');
});

t.test('signals: q-values, the FDR and the slice, as the panel writes them', async (t) => {
  t.equal(qValue(0.0004), '< 0.001');
  t.equal(qValue(0.0312), '0.031');
  t.equal(share(0.05), '5 %');
  t.equal(share(0.125), '12.5 %');
  t.equal(slice({ engine_name: 'Claude', segment_name: null, country: 'US' }), 'Claude · US');
  t.equal(slice({ engine_name: null, segment_name: null, country: null }), 'all runs');
});
