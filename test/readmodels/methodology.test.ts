// GET /v1/public/methodology and the Metric-Definitions-Version header, over real HTTP.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { METRIC_DEFINITIONS_VERSION, methodology } from '../../src/readmodels/methodology';
import { ENDPOINTS } from '../../src/readmodels';
import { BodySchemas } from '../../src/serve/bodies/bodies';
import { Z95 } from '../../src/store/metrics';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey } from '../helpers/http';

const HEADER = 'metric-definitions-version';

t.test('the methodology document, its schema and the definitions header', async (t) => {
  const demo = await demoDb();
  t.teardown(() => {
    demo.db.close();
    fs.rmSync(path.dirname(demo.file), { recursive: true, force: true });
  });
  const api = await startApi({ db: demo.db });
  t.teardown(() => api.close());
  const key = activeKeys[0]!.key;

  t.test('public, cached bytes with an ETag, matching its schema', async (t) => {
    const r = await request(`${api.base}/methodology`);
    t.equal(r.status, 200, 'no key needed');
    t.match(r.headers['content-type'], /^application\/json/);
    t.equal(r.headers[HEADER], METRIC_DEFINITIONS_VERSION);
    t.match(r.headers.etag, /^"[^"]+"$/);
    t.equal(new BodySchemas().check('methodology', r.json), null, 'matches schemas/api/methodology.json');
    const doc = r.json as ReturnType<typeof methodology>;
    t.equal(doc.version, METRIC_DEFINITIONS_VERSION, 'the body names the header\'s version');
    t.match(doc.version, /^\d{4}-\d{2}-\d{2}$/);
    t.same(doc, JSON.parse(JSON.stringify(methodology(7))), 'the document of the configured 7-day window');
    const again = await request(`${api.base}/methodology`, withKey(key));
    t.equal(again.text, r.text, 'the same bytes with or without a key');
    t.equal(again.headers.etag, r.headers.etag);

    const notModified = await request(`${api.base}/methodology`, { headers: { 'if-none-match': r.headers.etag! } });
    t.equal(notModified.status, 304);
    t.equal(notModified.raw.length, 0);
    t.equal(notModified.headers[HEADER], METRIC_DEFINITIONS_VERSION, 'a 304 carries the header');
  });

  t.test('what it defines', async (t) => {
    const doc = methodology(7);
    const current = doc.windows.find((w) => w.name === 'current')!;
    t.same([current.days, current.inclusive, current.timezone], [7, true, 'UTC']);
    t.equal(methodology(14).windows.find((w) => w.name === 'current')!.days, 14, 'the window the service is configured with');
    t.same(doc.metrics.map((m) => m.name).sort(),
      ['average_rank', 'mention_count', 'mention_rate', 'prompt_count', 'run_count', 'score', 'sentiment', 'share_of_voice']);
    t.equal(doc.rounding.rounded, false, 'values are not rounded');
    t.same([doc.intervals.method, doc.intervals.confidence, doc.intervals.z], ['wilson', 0.95, Z95]);
    t.same(doc.intervals.fields, ['mention_rate_ci', 'share_of_voice_ci']);
    t.same([doc.comparison.method, doc.comparison.confidence, doc.comparison.z], ['newcombe-hybrid-score', 0.95, Z95], 'a difference: Newcombe on the same z');
    t.same(doc.comparison.fields, doc.intervals.fields.map((f) => f.replace(/_ci$/, '_change')), 'a change beside every interval');
    t.same([...doc.comparison.endpoints].sort(), ['competitor-rankings', 'segment-analytics', 'signals', 'visibility'], 'the endpoints that compare');
    t.same([...doc.slices.filter_endpoints].sort(),
      ['citations', 'competitor-rankings', 'daily-scores', 'mentions', 'referrers', 'segment-analytics', 'timeseries', 'visibility', 'warm-leads'], 'the reports the filters apply to');
    const project = (await request(`${api.base}/projects`, withKey(key))).json as Array<{ id: string }>;
    const signals = (await request(`${api.base}/projects/${project[0]!.id}/signals`, withKey(key))).json as { min_runs: number; false_discovery_rate: number };
    t.same([doc.signals.min_runs, doc.signals.false_discovery_rate], [signals.min_runs, signals.false_discovery_rate], 'signals: the minimum runs and the FDR /signals applies');
    const names = new Set(ENDPOINTS.map((e) => e.name));
    for (const o of doc.orderings) t.ok(names.has(o.endpoint), `ordering of ${o.endpoint} names an endpoint`);
    for (const w of doc.windows) for (const e of w.endpoints) t.ok(names.has(e), `window ${w.name}: ${e} is an endpoint`);
    t.same(doc.windows.find((w) => w.name === 'range')!.endpoints.sort(),
      ['citations', 'competitor-rankings', 'daily-scores', 'forum-metrics', 'mentions', 'referrers', 'segment-analytics', 'signals', 'timeseries', 'visibility', 'warm-leads'],
      'start_date/end_date: every windowed endpoint, the feeds with a date, the trend and daily scores');
    t.same([doc.periods.parameter, doc.periods.values, [...doc.periods.endpoints].sort()], ['interval', ['day', 'week', 'month'], ['daily-scores', 'timeseries']]);
    for (const listed of ['projects', 'mentions', 'citations', 'runs', 'forum-leads', 'forum-opportunities', 'competitor-rankings', 'daily-scores']) {
      t.ok(doc.orderings.some((o) => o.endpoint === listed && o.list === '$'), `${listed}: its order is defined`);
    }
  });

  t.test('in the OpenAPI document', async (t) => {
    const r = await request(`${api.base}/openapi.json`);
    t.equal(r.headers[HEADER], METRIC_DEFINITIONS_VERSION);
    const doc = r.json as { paths: Record<string, { get: { responses: Record<string, { headers?: Record<string, unknown>; content?: unknown }> } }>; components: { schemas: Record<string, unknown> } };
    const op = doc.paths['/methodology']!.get;
    t.same(op.responses['200']!.content, { 'application/json': { schema: { $ref: '#/components/schemas/Methodology' } } });
    t.ok(doc.components.schemas.Methodology);
    for (const e of ENDPOINTS) {
      const responses = doc.paths[e.path.replace(/:(\w+)/g, '{$1}')]!.get.responses;
      for (const status of ['200', '304', '400', '401', '404']) {
        t.ok(responses[status]!.headers?.['Metric-Definitions-Version'], `${e.name} ${status} declares the header`);
      }
    }
  });

  t.test('every answer carries the header: 200, 304, 404, 401, 400, 405', async (t) => {
    const projects = await request(`${api.base}/projects`, withKey(key));
    t.equal(projects.status, 200);
    t.equal(projects.headers[HEADER], METRIC_DEFINITIONS_VERSION, '200');
    const project = (projects.json as Array<{ id: string }>)[0]!.id;
    const url = `${api.base}/projects/${project}/visibility`;
    const first = await request(url, withKey(key));
    const hot = await request(url, withKey(key)); // a cache hit: the hot path's answer
    t.equal(hot.headers[HEADER], METRIC_DEFINITIONS_VERSION, '200 from the hot path');
    const notModified = await request(url, withKey(key, { 'if-none-match': first.headers.etag! }));
    t.equal(notModified.status, 304);
    t.equal(notModified.headers[HEADER], METRIC_DEFINITIONS_VERSION, '304');

    const cases: Array<[string, number, Record<string, string>, string]> = [
      [`${api.base}/projects/00000000-0000-4000-8000-000000000000`, 404, withKey(key).headers, 'not_found'],
      [`${api.base}/nope`, 404, withKey(key).headers, 'not_found'],
      [url, 401, {}, 'invalid_api_key'],
      [`${url}?engine_ids=x`, 400, withKey(key).headers, 'invalid_parameter'],
    ];
    for (const [u, status, headers, code] of cases) {
      const r = await request(u, { headers });
      t.equal(r.status, status, u);
      t.equal(r.headers[HEADER], METRIC_DEFINITIONS_VERSION, `${status}: the header`);
      t.equal(r.headers['x-error-code'], code, `${status}: the error's code`);
      t.equal(Object.keys(r.json as object).join(), 'error,message', 'the body is the v1 error body, unchanged');
    }
    const post = await request(url, { method: 'POST', ...withKey(key) });
    t.same([post.status, post.headers[HEADER], post.headers['x-error-code'], post.headers.allow], [405, METRIC_DEFINITIONS_VERSION, 'method_not_allowed', 'GET, HEAD']);
  });
});
