// The reference dashboard (issue 13), served at / by `serve --demo`: pick a key, then a project; it
// shows the visibility trend with its confidence band, competitor rankings, top citations and forum
// leads. Every number comes from the API through the typed client (api.ts).
//
// The page's state is on <body data-state="idle|loading|ready|error"> (and data-project once a
// project is shown): the browser test waits on it.
import type { Chart } from 'chart.js';
import { Api, CallError, type Projects } from './api';
import { rankingsChart, trendChart } from './charts';
import { citationsTable, leadsTable, rankingsTable } from './tables';

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
  summary: el<HTMLElement>('summary'),
  trend: el<HTMLCanvasElement>('trend-chart'),
  rankingsChart: el<HTMLCanvasElement>('rankings-chart'),
  rankings: el<HTMLTableElement>('rankings-table'),
  citations: el<HTMLTableElement>('citations-table'),
  leads: el<HTMLTableElement>('leads-table'),
};

let api: Api | null = null;
let charts: Chart[] = [];
/** Each load gets a number; an answer for an older load (the user picked again meanwhile) is dropped. */
let generation = 0;

function state(s: 'idle' | 'loading' | 'ready' | 'error', project?: string): void {
  document.body.dataset.state = s;
  if (project === undefined) delete document.body.dataset.project;
  else document.body.dataset.project = project;
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
    const projects = await api.projects();
    if (mine !== generation) return;
    fillProjects(projects);
    if (projects.length === 0) {
      ui.views.hidden = true;
      state('ready');
      return;
    }
    await showProject(projects[0]!.id);
  } catch (e) {
    if (mine === generation) showError(e);
  }
}

async function showProject(id: string): Promise<void> {
  if (!api) return;
  const mine = ++generation;
  clearError();
  state('loading');
  ui.project.value = id;
  try {
    const data = await api.project(id);
    if (mine !== generation) return;
    for (const c of charts) c.destroy();
    ui.views.hidden = false; // before drawing: Chart.js sizes a canvas from its visible box
    const last = data.timeseries[data.timeseries.length - 1];
    ui.summary.textContent = last
      ? `${data.timeseries.length} days with runs, ${data.timeseries[0]!.date} to ${last.date}`
      : 'No runs yet.';
    charts = [trendChart(ui.trend, data.timeseries), rankingsChart(ui.rankingsChart, data.rankings)];
    rankingsTable(ui.rankings, data.rankings);
    citationsTable(ui.citations, data.citations);
    leadsTable(ui.leads, data.leads);
    state('ready', id);
  } catch (e) {
    if (mine === generation) showError(e);
  }
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
  ui.project.addEventListener('change', () => void showProject(ui.project.value));
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
