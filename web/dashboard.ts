// The reference dashboard, served at / by `serve --demo`: pick a key, then a project; it
// shows the brand's visibility, its trend with the confidence band, signals, engines, competitor
// rankings, segments, top citations and forum leads, for the date range, interval, filters and
// comparison chosen in the controls. Every number comes from the API through the typed
// client (api.ts). The view is in the URL query (state.ts): a view can be shared and reloaded.
//
// The page's state is on <body data-state="idle|loading|ready|error"> (and data-project once a
// project is shown, data-view: the URL query of the view shown): the browser test waits on it.
import type { Chart } from 'chart.js';
import { Api, CallError, type ProjectData, type Projects } from './api';
import { rankingsChart, trendChart } from './charts';
import { Controls } from './controls';
import { share } from './format';
import { apiQuery, emptyFilters, FILTERS, fromQuery, ignored, toQuery, type View } from './state';
import { citationsTable, enginesTable, leadsTable, rankingsTable, segmentsTable, signalsTable, summaryTable } from './tables';

interface DemoKey { account: string; key: string; revoked: boolean }

function el<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`#${id} is missing from the page`);
  return e as T;
}

const ui = {
  key: el<HTMLSelectElement>('key'),
  customKey: el<HTMLInputElement>('custom-key'),
  keyForm: el<HTMLFormElement>('key-form'),
  project: el<HTMLSelectElement>('project'),
  error: el<HTMLElement>('error'),
  views: el<HTMLElement>('views'),
  windowNote: el<HTMLElement>('window-note'),
  summaryTable: el<HTMLTableElement>('summary-table'),
  summary: el<HTMLElement>('summary'),
  trendUnit: el<HTMLElement>('trend-unit'),
  trend: el<HTMLCanvasElement>('trend-chart'),
  signals: el<HTMLElement>('signals'),
  signalsNote: el<HTMLElement>('signals-note'),
  signalsTable: el<HTMLTableElement>('signals-table'),
  engines: el<HTMLTableElement>('engines-table'),
  rankingsChart: el<HTMLCanvasElement>('rankings-chart'),
  rankings: el<HTMLTableElement>('rankings-table'),
  segmentsSection: el<HTMLElement>('segments'),
  segments: el<HTMLTableElement>('segments-table'),
  citations: el<HTMLTableElement>('citations-table'),
  leads: el<HTMLTableElement>('leads-table'),
};

let api: Api | null = null;
let charts: Chart[] = [];
/** Each load gets a number; an answer for an older load (the user picked again meanwhile) is dropped. */
let generation = 0;
/** The view shown (or being loaded); the URL query says the same. */
let view: View = fromQuery(location.search);
const controls = new Controls((next) => {
  view = next;
  setUrl('push');
  void showReports();
});

function state(s: 'idle' | 'loading' | 'ready' | 'error', project?: string): void {
  document.body.dataset.state = s;
  if (project === undefined) delete document.body.dataset.project;
  else document.body.dataset.project = project;
  if (s === 'ready' && project !== undefined) document.body.dataset.view = toQuery(view);
  else delete document.body.dataset.view;
}

/** The view into the URL: a new history entry for a user's change, the same one otherwise. */
function setUrl(how: 'push' | 'replace'): void {
  const q = toQuery(view);
  const url = `${location.pathname}${q ? `?${q}` : ''}`;
  if (url === `${location.pathname}${location.search}`) return;
  if (how === 'push') history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}

function showError(e: unknown): void {
  ui.error.textContent = e instanceof CallError
    ? `The API answered ${e.message}${e.status === 401 ? ' (this key is unknown or revoked)' : ''}`
    : `The API could not be reached: ${e instanceof Error ? e.message : String(e)}`;
  ui.error.hidden = false;
  ui.views.hidden = true;
  state('error');
}

function clearError(): void {
  ui.error.hidden = true;
  ui.error.textContent = '';
}

function demoKeys(): DemoKey[] {
  const block = document.getElementById('demo-keys');
  return block?.textContent ? (JSON.parse(block.textContent) as DemoKey[]) : [];
}

function fillKeys(keys: DemoKey[]): void {
  for (const k of keys) {
    const o = new Option(`${k.account}${k.revoked ? ' (revoked)' : ''} · ${k.key}`, k.key);
    ui.key.add(o);
  }
}

function fillProjects(projects: Projects): void {
  ui.project.replaceChildren(...projects.map((p) => new Option(`${p.name} (${p.domain})`, p.id)));
  ui.project.disabled = projects.length === 0;
}

async function useKey(key: string): Promise<void> {
  const mine = ++generation;
  clearError();
  state('loading');
  api = new Api(location.origin, key);
  ui.project.replaceChildren();
  ui.project.disabled = true;
  try {
    await api.discover();
    const projects = await api.projects();
    if (mine !== generation) return;
    fillProjects(projects);
    if (projects.length === 0) {
      ui.views.hidden = true;
      controls.hide();
      state('ready');
      return;
    }
    // The URL's project when this key sees it (a shared view), else the first.
    const named = projects.find((p) => p.id === view.project);
    await showProject(named ? named.id : projects[0]!.id, named !== undefined);
  } catch (e) {
    if (mine !== generation) return;
    controls.hide(); // its lists were the previous key's
    showError(e);
  }
}

/** A project's controls and reports; `keep`: keep the view's filters (they name this project's ids). */
async function showProject(id: string, keep: boolean): Promise<void> {
  if (!api) return;
  if (!keep) view = { ...view, filters: emptyFilters() };
  view = { ...view, project: id };
  setUrl(keep ? 'replace' : 'push');
  ui.project.value = id;
  const a = api;
  await showReports(async (mine) => {
    const options = await a.options(id);
    if (mine !== generation) return;
    // A filter is offered when the main reports take it (the notes under the others say where not).
    const filters = new Set(FILTERS.filter((f) => a.params('visibility').has(f) || a.params('rankings').has(f)));
    controls.offer(options, { filters, compare: a.params('visibility').has('compare') });
  });
}

/** Loads and draws the reports for the view (after `before`, e.g. the project's options). */
async function showReports(before?: (mine: number) => Promise<void>): Promise<void> {
  if (!api || !view.project) return;
  const mine = ++generation;
  const id = view.project;
  clearError();
  state('loading');
  try {
    const [data] = await Promise.all([api.project(id, apiQuery(view)), before?.(mine)]);
    if (mine !== generation) return;
    draw(api, data);
    state('ready', id);
  } catch (e) {
    if (mine === generation) showError(e);
  }
}

/** Under a report: the view's choices it does not take (its operation does not declare them). */
function note(a: Api, report: 'timeseries' | 'rankings' | 'segmentAnalytics' | 'citations' | 'signals', elId: string): void {
  const left = ignored(view, a.params(report));
  const p = el<HTMLElement>(elId);
  p.hidden = left.length === 0;
  p.textContent = left.length === 0 ? '' : `Not applied here (this report does not take it): ${left.join(', ')}.`;
}

function draw(a: Api, data: ProjectData): void {
  for (const c of charts) c.destroy();
  ui.views.hidden = false; // before drawing: Chart.js sizes a canvas from its visible box
  const v = data.visibility;
  controls.show(view, v.window_end);
  ui.windowNote.textContent = (v.window_start ? `${v.window_start} to ${v.window_end}: ${v.run_count} runs of ${v.prompt_count} prompts` : 'No runs in the range')
    + (v.comparison ? `; compared with ${v.comparison.start_date} to ${v.comparison.end_date}.` : '.');
  summaryTable(ui.summaryTable, v);

  const unit = view.interval ?? 'day';
  const points = data.timeseries;
  const last = points[points.length - 1];
  ui.trendUnit.textContent = unit;
  ui.summary.textContent = last ? `${points.length} ${unit}s with runs, ${points[0]!.date} to ${last.date}` : 'No runs yet.';
  charts = [trendChart(ui.trend, points, unit), rankingsChart(ui.rankingsChart, data.rankings)];

  ui.signals.hidden = data.signals === null;
  if (data.signals) {
    const s = data.signals;
    ui.signalsNote.textContent = `${s.slices_tested} slices tested, FDR ${share(s.false_discovery_rate)} (Benjamini–Hochberg): ` +
      `the changes in mention rate from ${s.compare_start_date} – ${s.compare_end_date} to ${s.start_date} – ${s.end_date} ` +
      'that are real, for the brand and each competitor by engine, segment and country; ranked by effect.';
    signalsTable(ui.signalsTable, s.signals);
  }
  enginesTable(ui.engines, v.engine_breakdown);
  rankingsTable(ui.rankings, data.rankings);
  ui.segmentsSection.hidden = data.segments === null;
  if (data.segments) segmentsTable(ui.segments, data.segments);
  citationsTable(ui.citations, data.citations);
  leadsTable(ui.leads, data.leads);
  note(a, 'timeseries', 'trend-ignored');
  note(a, 'rankings', 'rankings-ignored');
  note(a, 'segmentAnalytics', 'segments-ignored');
  note(a, 'citations', 'citations-ignored');
  if (data.signals) note(a, 'signals', 'signals-ignored');
}

function main(): void {
  const keys = demoKeys();
  fillKeys(keys);
  ui.key.addEventListener('change', () => {
    ui.customKey.value = '';
    void useKey(ui.key.value);
  });
  ui.keyForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = ui.customKey.value.trim();
    if (key !== '') void useKey(key);
  });
  ui.project.addEventListener('change', () => void showProject(ui.project.value, false));
  // Back and forward: the URL's view again.
  window.addEventListener('popstate', () => {
    const next = fromQuery(location.search);
    const sameProject = next.project === view.project;
    view = next;
    if (sameProject) void showReports();
    else if (next.project) void showProject(next.project, true);
  });
  // Start with the first key that works, so the page shows data at once.
  const first = keys.find((k) => !k.revoked);
  if (first) {
    ui.key.value = first.key;
    void useKey(first.key);
  } else {
    state('idle');
  }
}

main();
