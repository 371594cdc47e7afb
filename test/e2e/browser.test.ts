// The API reference (/v1/public/docs) and the reference dashboard (/) in a real browser:
// headless Chromium from Debian's packages, driven by puppeteer-core, against `serve --demo` run as
// users run it. Checks that the reference renders the API's operations, that the dashboard's charts
// are drawn and its tables show the numbers the API answers over HTTP for the chosen key and project,
// that its controls (range, interval, filters, comparison) drive every report and live in
// the URL, that its signals panel lists what /signals answers, that no request fails and nothing is
// logged as an error, that a revoked or unknown key shows an error, and that no request leaves
// 127.0.0.1. Saves the screenshots the README shows (docs/img/). Skips where no Chromium is
// installed (.ci/run installs it).
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
// puppeteer-core is an ES module: loaded with import(), its types with resolution-mode.
import type { Page } from 'puppeteer-core' with { 'resolution-mode': 'import' };
import { DEMO_OPTIONS } from '../../fixtures/world';
import { ENDPOINTS } from '../../src/readmodels';
import { change, count, day, delta, fixed, interval, pct, qValue, share, slice, type RateChange } from '../../web/format';
import { apiQuery, emptyFilters, rangeStart, toQuery, type Query, type View } from '../../web/state';
import { startServe } from '../helpers/processes';
import { ROOT } from '../helpers/paths';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = path.join(ROOT, 'docs', 'img');
const WAIT = { timeout: 60_000 };

interface DemoKey { account: string; key: string; revoked: boolean }
const KEYS = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/demo/keys.json'), 'utf8')) as DemoKey[];
const NORTHWIND = KEYS.find((k) => k.account === 'Northwind Labs' && !k.revoked)!;
const REVOKED = KEYS.find((k) => k.revoked)!;

type Json = Record<string, unknown>;
type Row = Json;

const skip = fs.existsSync(CHROMIUM) ? false
  : `no Chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH to run the browser tests`;

t.test('docs page and dashboard in Chromium', { skip }, async (t) => {
  t.ok(fs.existsSync(path.join(ROOT, 'dist/web/dashboard.js')) && fs.existsSync(path.join(ROOT, 'dist/web/scalar.js')),
    'dist/web/ is built (npm run build)');
  const srv = await startServe(['--demo']);
  t.teardown(async () => {
    srv.child.kill('SIGTERM');
    await srv.exited;
  });
  const origin = new URL(srv.base).origin;
  t.match(srv.stdout(), `dashboard: ${origin}/`, 'serve --demo prints the dashboard URL');
  t.match(srv.stdout(), `API reference: ${srv.base}/docs`, 'and the reference URL');

  const { launch } = await import('puppeteer-core');
  const browser = await launch({
    executablePath: CHROMIUM, headless: true,
    // root in a container: Chromium's sandbox needs user namespaces it may not have.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const requested: string[] = [];
  page.on('request', (r) => void requested.push(r.url()));
  // What went wrong in the page: errors logged (a failed load is logged too), uncaught exceptions,
  // requests that failed or were answered with an error. The dashboard's share is checked below.
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => void problems.push(`uncaught: ${e instanceof Error ? e.message : String(e)}`));
  page.on('requestfailed', (r) => void problems.push(`failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()}: ${r.url()}`);
  });
  let dashboardFrom = 0;
  fs.mkdirSync(SHOTS, { recursive: true });

  await t.test('the API reference renders the served OpenAPI document', async (t) => {
    const res = await page.goto(`${srv.base}/docs`, { waitUntil: 'networkidle0', ...WAIT });
    t.equal(res?.status(), 200);
    const names = ENDPOINTS.map((e) => e.summary);
    // Rendered asynchronously after the document loads: wait until every name is there (or time out,
    // and then the assertion below names the missing ones).
    await page.waitForFunction(`${JSON.stringify(names)}.every((n) => document.body.innerText.includes(n))`, WAIT).catch(() => undefined);
    const text = await inPage<string>(page, 'document.body.innerText');
    const shown = names.filter((n) => text.includes(n));
    t.same(shown, names, 'every endpoint\'s operation summary is on the page');
    // The page shows this run's random port (server URL, curl samples): the screenshot shows the
    // port `npm start` uses instead, so the committed image does not change from run to run.
    await inPage(page, `(() => {
      const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      // Code samples are highlighted token by token: the port can be a text node of its own.
      const port = new RegExp('(?<![0-9])${new URL(origin).port}(?![0-9])', 'g');
      for (let n = w.nextNode(); n; n = w.nextNode()) n.nodeValue = n.nodeValue.replace(port, '8080');
    })()`);
    await page.screenshot({ path: path.join(SHOTS, 'docs.png') });
  });

  await t.test('the dashboard shows the API\'s numbers for the chosen key and project', async (t) => {
    dashboardFrom = problems.length;
    await page.goto(`${origin}/`, { waitUntil: 'networkidle0', ...WAIT });
    await ready(page); // the first working key and its first project, shown at once
    const options = await values(page, '#key option').then((vs) => vs.filter((v) => v !== ''));
    t.same(options.sort(), KEYS.map((k) => k.key).sort(), 'every demo key can be picked');

    const other = KEYS.find((k) => !k.revoked && k.account !== NORTHWIND.account)!;
    await page.select('#key', other.key);
    await ready(page);
    await page.select('#key', NORTHWIND.key);
    await ready(page);
    const projects = await api(origin, NORTHWIND.key, '/projects') as Row[];
    t.ok(projects.length >= 2, 'the key sees two projects');
    const shownProjects = await values(page, '#project option');
    t.same(shownProjects, projects.map((p) => p.id), 'the project list is the API\'s');

    for (const project of [projects[1]!, projects[0]!]) {
      const id = String(project.id);
      await page.select('#project', id);
      await ready(page, id);
      await compareProject(t, page, origin, id, String(project.name));
    }
    await page.screenshot({ path: path.join(SHOTS, 'dashboard.png'), fullPage: true });
  });

  const declared = await declaredParams(srv.base);
  const projects = await api(origin, NORTHWIND.key, '/projects') as Row[];
  const project = String(projects[0]!.id);
  const base = `/projects/${project}`;

  await t.test('the controls drive every report, and the view is in the URL', async (t) => {
    await page.goto(`${origin}/?project=${project}`, { waitUntil: 'networkidle0', ...WAIT });
    await ready(page, project);
    const latest = String((await api(origin, NORTHWIND.key, `${base}/visibility`) as Row).window_end);
    const engines = await api(origin, NORTHWIND.key, `${base}/engines`) as Row[];
    t.same(await values(page, '#engine_ids option'), engines.map((e) => e.id), 'the engine filter offers the project\'s engines');

    // A 30-day range ending with the latest day with runs, per week, two engines.
    const view: View = { project, start_date: rangeStart(latest, 30), end_date: latest, compare: false, filters: emptyFilters() };
    await page.click('button[data-days="30"]');
    await shown(page, view);
    view.interval = 'week';
    await page.select('#interval', 'week');
    await shown(page, view);
    view.filters.engine_ids = engines.slice(0, 2).map((e) => String(e.id));
    await page.select('#engine_ids', ...view.filters.engine_ids);
    await shown(page, view);
    t.equal(await inPage<string>(page, 'location.search'), `?${toQuery(view)}`, 'the URL names the view');
    await compareView(t, page, origin, declared, view, '30 days, per week, two engines');
    t.match(await inPage<string>(page, "document.getElementById('trend-ignored').textContent"),
      declared.get('/projects/{project_id}/visibility/timeseries')!.has('engine_ids') ? '' : /engine/,
      'a report that does not take a filter says so');

    // Reloading (or sharing) the URL shows the same view.
    await page.reload({ waitUntil: 'networkidle0', ...WAIT });
    await shown(page, view);
    t.same(await values(page, '#engine_ids option:checked'), view.filters.engine_ids, 'the reloaded page shows the chosen engines');
    t.equal(await inPage<string>(page, "document.getElementById('start_date').value"), view.start_date, 'and the range');
    await compareView(t, page, origin, declared, view, 'reloaded');

    // Back: the view before the engines were picked.
    await page.goBack({ waitUntil: 'networkidle0', ...WAIT });
    await shown(page, { ...view, filters: emptyFilters() });
    await page.goForward({ waitUntil: 'networkidle0', ...WAIT });
    await shown(page, view);
  });

  // Needs runs that name countries and personas, comparisons, /dimensions and /signals.
  await t.test('a filtered range compared with the previous period, and the signals', async (t) => {
    const dims = '/projects/{project_id}/dimensions';
    const sig = '/projects/{project_id}/signals';
    t.ok(declared.has(dims) && declared.has(sig), 'the service serves /dimensions and /signals');
    t.ok(declared.get('/projects/{project_id}/visibility')?.has('compare') && declared.get('/projects/{project_id}/visibility')?.has('country'),
      'visibility takes compare and country');
    if (!declared.has(dims) || !declared.has(sig)) return;
    await page.goto(`${origin}/?project=${project}`, { waitUntil: 'networkidle0', ...WAIT });
    await ready(page, project);
    const latest = String((await api(origin, NORTHWIND.key, `${base}/visibility`) as Row).window_end);
    const countries = await values(page, '#country option');
    t.ok(countries.length >= 2, 'the country filter offers the countries the runs name');

    // Half the demo's history, picked in the date inputs: the previous period (as many days before)
    // has runs on every day too, so both sides of each comparison are full periods.
    const days = Math.floor(DEMO_OPTIONS.days / 2);
    const view: View = { project, start_date: rangeStart(latest, 7), end_date: latest, compare: false, filters: emptyFilters() };
    await page.click('button[data-days="7"]');
    await shown(page, view);
    view.start_date = rangeStart(latest, days);
    await inPage(page, `(() => {
      const input = document.getElementById('start_date');
      input.value = ${JSON.stringify(view.start_date)};
      input.dispatchEvent(new Event('change'));
    })()`);
    await shown(page, view);
    view.filters.country = [countries[0]!];
    await page.select('#country', countries[0]!);
    await shown(page, view);
    view.compare = true;
    await page.click('#compare');
    await shown(page, view);
    const body = await compareView(t, page, origin, declared, view, `${days} days, ${countries[0]}, compared`);
    t.ok(body.comparison, 'the visibility body names the period compared with');
    t.match(await inPage<string>(page, "document.getElementById('window-note').textContent"),
      `compared with ${(body.comparison as Row).start_date} to ${(body.comparison as Row).end_date}`, 'and the page says it');
    t.same((await cells(page, 'summary-table'))[0]!.length, 4, 'the brand\'s rates have a change column');
    t.match(await inPage<string>(page, "document.getElementById('signals-ignored').textContent"),
      declared.get(sig)!.has('country') ? '' : /country/, 'the signals panel says so where it does not take the country filter');
    await page.screenshot({ path: path.join(SHOTS, 'dashboard-compare.png'), fullPage: true });

    // The signals of the whole project over the range: no filters.
    view.filters = emptyFilters();
    await page.click('#clear-filters');
    await shown(page, view);
    await compareView(t, page, origin, declared, view, `${days} days, compared, no filters`);
    const signals = await api(origin, NORTHWIND.key, withQuery(`${base}/signals`, pick(declared, sig, { ...apiQuery(view), compare: 'previous_period' }))) as Row;
    t.match(await inPage<string>(page, "document.getElementById('signals-note').textContent"),
      `${signals.slices_tested} slices tested, FDR ${share(signals.false_discovery_rate as number)}`, 'the panel states the slices tested and the FDR');
    // The demo's brand mention rate drifts upward: over this range the project has a change that passes.
    t.ok((signals.signals as Row[]).length > 0, 'the panel lists at least one signal (the screenshot shows one)');
    const panel = await page.$('#signals');
    await panel!.screenshot({ path: path.join(SHOTS, 'dashboard-signals.png') });
  });

  t.test('no request of the dashboard failed and nothing was logged as an error', async (t) => {
    t.same(problems.slice(dashboardFrom), [], 'no failed request, error response, console error or uncaught exception');
  });

  await t.test('a revoked key and an unknown key show an error', async (t) => {
    await page.select('#key', REVOKED.key);
    await page.waitForSelector('body[data-state="error"]', WAIT);
    t.match(await errorText(page), /401: Invalid API key/, 'revoked: the API\'s 401 message');
    t.equal(await inPage<boolean>(page, "document.getElementById('views').hidden"), true, 'no stale data stays on screen');

    await page.select('#key', NORTHWIND.key);
    await ready(page);
    await page.type('#custom-key', 'not-a-real-key');
    await page.click('#key-form button');
    await page.waitForSelector('body[data-state="error"]', WAIT);
    t.match(await errorText(page), /401: Invalid API key/, 'unknown key: the same message');
  });

  t.test('no request left 127.0.0.1', async (t) => {
    const outside = requested.filter((u) => !u.startsWith(`${origin}/`) && !/^(data|blob):/.test(u));
    t.same(outside, [], 'every request went to this service');
    t.ok(requested.some((u) => u.endsWith('/docs/scalar.js')) && requested.some((u) => u.endsWith('/dashboard.js')), 'both bundles were served here');
  });
});

async function ready(page: Page, project?: string): Promise<void> {
  const sel = project === undefined ? 'body[data-state="ready"]' : `body[data-state="ready"][data-project="${project}"]`;
  await page.waitForSelector(sel, WAIT);
}

/**
 * Code run in the page, as a string: this file is type-checked for Node (no DOM types), and what
 * runs in the browser is a few expressions.
 */
async function inPage<T>(page: Page, expression: string): Promise<T> {
  return page.evaluate(expression) as Promise<T>;
}

async function values(page: Page, selector: string): Promise<string[]> {
  return inPage(page, `[...document.querySelectorAll(${JSON.stringify(selector)})].map((o) => o.value)`);
}

async function errorText(page: Page): Promise<string> {
  return inPage(page, "(() => { const e = document.getElementById('error'); return e.hidden ? '' : e.textContent; })()");
}

async function api(origin: string, key: string, p: string): Promise<unknown> {
  const res = await fetch(`${origin}/v1/public${p}`, { headers: { 'X-API-Key': key } });
  if (!res.ok) throw new Error(`${p}: ${res.status}`);
  return res.json();
}

/** The query parameters each GET path declares in the served OpenAPI document. */
async function declaredParams(base: string): Promise<Map<string, Set<string>>> {
  const doc = await (await fetch(`${base}/openapi.json`)).json() as { paths: Record<string, { get?: { parameters?: Array<{ in: string; name: string }> } }> };
  return new Map(Object.entries(doc.paths).map(([p, item]) => [p, new Set((item.get?.parameters ?? []).filter((x) => x.in === 'query').map((x) => x.name))]));
}

/** The parameters of `q` the operation at `path` declares. */
function pick(declared: Map<string, Set<string>>, path: string, q: Query): Query {
  const take = declared.get(path) ?? new Set<string>();
  return Object.fromEntries(Object.entries(q).filter(([k]) => take.has(k)));
}

function withQuery(p: string, q: Query): string {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
  const s = out.toString();
  return s ? `${p}?${s}` : p;
}

/** Waits until the page shows `view` (its data loaded for that view, the URL naming it). */
async function shown(page: Page, view: View): Promise<void> {
  const q = JSON.stringify(toQuery(view));
  await page.waitForFunction(`document.body.dataset.state === 'ready' && document.body.dataset.view === ${q} && location.search.slice(1) === ${q}`, WAIT);
}

async function cells(page: Page, table: string): Promise<string[][]> {
  return inPage(page, `[...document.querySelectorAll('#${table} tbody tr')].map((r) => [...r.cells].map((c) => c.textContent))`);
}

/** The page's charts and tables against the API's bodies for the project, fetched over HTTP here. */
async function compareProject(t: Test, page: Page, origin: string, id: string, name: string): Promise<void> {
  const base = `/projects/${id}`;
  const [days, rankings, citations, leads] = await Promise.all([
    api(origin, NORTHWIND.key, `${base}/visibility/timeseries`), api(origin, NORTHWIND.key, `${base}/competitor-rankings`),
    api(origin, NORTHWIND.key, `${base}/citations?limit=10`), api(origin, NORTHWIND.key, `${base}/forum/leads?limit=10`),
  ]) as [Row[], Row[], Row[], Row[]];
  const ci = (v: unknown): { low: number; high: number } | null => v as { low: number; high: number } | null;
  const n = (v: unknown): number | null => v as number | null;

  t.ok(days.length > 0, `${name}: the trend has days`);
  // How many of the canvas's pixels are painted (alpha > 0): a drawn chart, not an empty box.
  const trend = await inPage<{ label: string; width: number; painted: number }>(page, `(() => {
    const canvas = document.getElementById('trend-chart');
    const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] > 0) painted++;
    return { label: canvas.getAttribute('aria-label'), width: canvas.width, painted };
  })()`);
  t.ok(trend.width > 0 && trend.painted > 1000, `${name}: the trend chart is drawn`);
  t.equal(trend.label, `Mention rate per day with its 95 % interval: ${days.length} days, ${days[0]!.date} to ${days[days.length - 1]!.date}`,
    `${name}: the trend covers the API's days`);
  const bars = await inPage<string>(page, "document.getElementById('rankings-chart').getAttribute('aria-label')");
  t.equal(bars, `Share of voice of ${rankings.length} entities: ${rankings.map((r) => r.name).join(', ')}`, `${name}: the rankings chart's bars`);

  t.same(await cells(page, 'rankings-table'), rankings.map((r) => [
    count(n(r.rank)), String(r.name), String(r.entity_type), count(n(r.mention_count)), pct(n(r.mention_rate)), interval(ci(r.mention_rate_ci)),
    pct(n(r.share_of_voice)), fixed(n(r.average_rank), 2), fixed(n(r.sentiment), 2), fixed(n(r.score), 1),
  ]), `${name}: rankings rows are the API's`);
  t.same(await cells(page, 'citations-table'), citations.map((c, i) => [
    String(i + 1), String(c.title ?? c.url), String(c.domain), count(n(c.citation_count)), count(n(c.prompt_count)),
    c.is_own_domain ? 'yes' : 'no', day(c.last_cited_at as string | null),
  ]), `${name}: citation rows are the API's top 10`);
  t.same(await cells(page, 'leads-table'), leads.length === 0 ? [['No open forum leads.']] : leads.map((l) => [
    String(l.title), String(l.platform), String(l.community ?? '–'), String(l.intent ?? '–'), fixed(n(l.relevance), 2), count(n(l.score)),
    day(l.posted_at as string | null),
  ]), `${name}: forum lead rows are the API's`);
  t.ok(citations.length > 0 && rankings.length > 0, `${name}: there were rows to compare`);
}


const changeOf = (r: Row, k = 'mention_rate_change'): string[] => (k in r ? [change(r[k] as RateChange | null)] : []);

/**
 * The page's reports for a view against the API's answers to the same query (each report asked
 * with the view's parameters its operation declares, as the document says). Returns the
 * visibility body.
 */
async function compareView(t: Test, page: Page, origin: string, declared: Map<string, Set<string>>, view: View, name: string): Promise<Row> {
  const q = apiQuery(view);
  const get = (p: string, extra: Query = {}): Promise<unknown> =>
    api(origin, NORTHWIND.key, withQuery(p.replace('{project_id}', view.project!), { ...pick(declared, p, q), ...extra }));
  const [vis, days, rankings, segments, citations] = await Promise.all([
    get('/projects/{project_id}/visibility'), get('/projects/{project_id}/visibility/timeseries'),
    get('/projects/{project_id}/competitor-rankings'), get('/projects/{project_id}/segments/analytics'),
    get('/projects/{project_id}/citations', { limit: '10' }),
  ]) as [Row, Row[], Row[], Row[], Row[]];
  const ci = (v: unknown): { low: number; high: number } | null => v as { low: number; high: number } | null;
  const n = (v: unknown): number | null => v as number | null;
  const unit = view.interval ?? 'day';

  const label = await inPage<string>(page, "document.getElementById('trend-chart').getAttribute('aria-label')");
  t.equal(label, `Mention rate per ${unit} with its 95 % interval: ${days.length} ${unit}s` +
    (days.length > 0 ? `, ${days[0]!.date} to ${days[days.length - 1]!.date}` : ''), `${name}: the trend is the API's`);
  const compared = 'comparison' in vis;
  t.same(await cells(page, 'summary-table'), [
    ['Mention rate', pct(n(vis.mention_rate)), interval(ci(vis.mention_rate_ci)), ...(compared ? [change(vis.mention_rate_change as RateChange)] : [])],
    ['Share of voice', pct(n(vis.share_of_voice)), interval(ci(vis.share_of_voice_ci)), ...(compared ? [change(vis.share_of_voice_change as RateChange)] : [])],
  ], `${name}: the brand's rates are the API's`);
  const engines = vis.engine_breakdown as Row[];
  t.same(await cells(page, 'engines-table'), engines.length === 0 ? [['No runs in the range.']] : engines.map((r) => [
    String(r.name), count(n(r.run_count)), pct(n(r.mention_rate)), interval(ci(r.mention_rate_ci)), ...changeOf(r),
    fixed(n(r.average_rank), 2), fixed(n(r.score), 1),
  ]), `${name}: engine rows are the API's`);
  t.same(await cells(page, 'rankings-table'), rankings.map((r) => [
    count(n(r.rank)), String(r.name), String(r.entity_type), count(n(r.mention_count)), pct(n(r.mention_rate)), interval(ci(r.mention_rate_ci)),
    ...changeOf(r), pct(n(r.share_of_voice)), fixed(n(r.average_rank), 2), fixed(n(r.sentiment), 2), fixed(n(r.score), 1),
  ]), `${name}: rankings rows are the API's`);
  t.same(await cells(page, 'segments-table'), segments.length === 0 ? [['No segments.']] : segments.map((r) => [
    String(r.name), count(n(r.prompt_count)), count(n(r.run_count)), pct(n(r.mention_rate)), interval(ci(r.mention_rate_ci)), ...changeOf(r),
    pct(n(r.share_of_voice)), fixed(n(r.score), 1),
  ]), `${name}: segment rows are the API's`);
  t.same(await cells(page, 'citations-table'), citations.map((c, i) => [
    String(i + 1), String(c.title ?? c.url), String(c.domain), count(n(c.citation_count)), count(n(c.prompt_count)),
    c.is_own_domain ? 'yes' : 'no', day(c.last_cited_at as string | null),
  ]), `${name}: citation rows are the API's top 10`);
  if (compared) {
    t.ok([...engines, ...rankings, ...segments].every((r) => 'mention_rate_change' in r), `${name}: every row carries its change`);
  }

  const signalsPath = '/projects/{project_id}/signals';
  if (declared.has(signalsPath)) {
    const body = await get(signalsPath, { compare: 'previous_period' }) as Row;
    const rows = body.signals as Row[];
    t.same(await cells(page, 'signals-table'), rows.length === 0 ? [['No change passed the test in this range.']] : rows.map((s, i) => {
      const cur = s.current as Row;
      const prev = s.previous as Row;
      return [String(i + 1), `${String(s.name)} (${String(s.entity_type)})`, slice(s as Parameters<typeof slice>[0]),
        `${pct(n(prev.rate))} → ${pct(n(cur.rate))}`, delta(n(s.delta), ci(s.delta_ci)), qValue(n(s.q_value))];
    }), `${name}: the signals panel lists what /signals answers`);
  } else {
    t.equal(await inPage<boolean>(page, "document.getElementById('signals').hidden"), true, `${name}: no signals panel where the service has none`);
  }
  return vis;
}
