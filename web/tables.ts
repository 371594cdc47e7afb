// The dashboard's tables: built with textContent only (the API's strings never become markup).
import type { Citations, Leads, Rankings, SegmentAnalytics, Signals, Visibility } from './api';
import { change, count, day, delta, fixed, interval, pct, qValue, slice, verdict, type RateChange } from './format';

interface Column<R> {
  head: string;
  cell: (row: R, index: number) => string | Node;
  /** Numbers align right. */
  numeric?: boolean;
  /** Dates stay on one line. */
  date?: boolean;
}

function link(href: string, text: string): Node {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  a.rel = 'noreferrer noopener';
  a.target = '_blank';
  return a;
}

function fill<R>(table: HTMLTableElement, columns: Array<Column<R>>, rows: readonly R[], empty: string): void {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  for (const c of columns) {
    const th = document.createElement('th');
    th.textContent = c.head;
    if (c.numeric) th.className = 'num';
    head.append(th);
  }
  const body = table.createTBody();
  rows.forEach((r, i) => {
    const tr = body.insertRow();
    for (const c of columns) {
      const td = tr.insertCell();
      const v = c.cell(r, i);
      if (typeof v === 'string') td.textContent = v;
      else td.append(v);
      if (c.numeric) td.className = 'num';
      else if (c.date) td.className = 'date';
    }
  });
  if (rows.length === 0) {
    const td = body.insertRow().insertCell();
    td.colSpan = columns.length;
    td.className = 'empty';
    td.textContent = empty;
  }
}

/** A change cell: the text says it all (delta, interval, significant or not); the class colours it. */
function changeCell(c: RateChange | null | undefined): Node {
  const span = document.createElement('span');
  span.textContent = change(c);
  if (c && c.delta !== null) {
    span.className = verdict(c) === 'not significant' ? 'ns' : `sig ${verdict(c)}`;
    span.title = `previous: ${pct(c.previous)} (95 % ${interval(c.previous_ci)})`;
  }
  return span;
}

/** The change column, for a body compared with another period (rows carry `mention_rate_change`). */
function changeColumn<R extends { mention_rate_change?: RateChange | null }>(rows: readonly R[]): Array<Column<R>> {
  return rows.some((r) => r.mention_rate_change !== undefined)
    ? [{ head: 'Change (95 % interval)', cell: (r) => changeCell(r.mention_rate_change), numeric: true }]
    : [];
}

type Ranking = Rankings[number];
type Citation = Citations[number];
type Lead = Leads[number];
type EngineRow = Visibility['engine_breakdown'][number];
type SegmentRow = SegmentAnalytics[number];
type Signal = Signals['signals'][number];

/** The brand's rates over the range (the visibility report), each with its change when compared. */
export function summaryTable(table: HTMLTableElement, v: Visibility): void {
  type Rate = { name: string; rate: number | null; ci: { low: number; high: number } | null; change: RateChange | null | undefined };
  const rows: Rate[] = [
    { name: 'Mention rate', rate: v.mention_rate, ci: v.mention_rate_ci, change: v.mention_rate_change },
    { name: 'Share of voice', rate: v.share_of_voice, ci: v.share_of_voice_ci, change: v.share_of_voice_change },
  ];
  fill<Rate>(table, [
    { head: 'Rate', cell: (r) => r.name },
    { head: 'Value', cell: (r) => pct(r.rate), numeric: true },
    { head: '95 % interval', cell: (r) => interval(r.ci), numeric: true },
    ...(v.comparison ? [{ head: 'Change (95 % interval)', cell: (r: Rate) => changeCell(r.change), numeric: true }] : []),
  ], rows, '');
}

export function enginesTable(table: HTMLTableElement, rows: Visibility['engine_breakdown']): void {
  fill<EngineRow>(table, [
    { head: 'Engine', cell: (r) => r.name },
    { head: 'Runs', cell: (r) => count(r.run_count), numeric: true },
    { head: 'Mention rate', cell: (r) => pct(r.mention_rate), numeric: true },
    { head: '95 % interval', cell: (r) => interval(r.mention_rate_ci), numeric: true },
    ...changeColumn(rows),
    { head: 'Avg. position', cell: (r) => fixed(r.average_rank, 2), numeric: true },
    { head: 'Score', cell: (r) => fixed(r.score, 1), numeric: true },
  ], rows, 'No runs in the range.');
}

export function segmentsTable(table: HTMLTableElement, rows: SegmentAnalytics): void {
  fill<SegmentRow>(table, [
    { head: 'Segment', cell: (r) => r.name },
    { head: 'Prompts', cell: (r) => count(r.prompt_count), numeric: true },
    { head: 'Runs', cell: (r) => count(r.run_count), numeric: true },
    { head: 'Mention rate', cell: (r) => pct(r.mention_rate), numeric: true },
    { head: '95 % interval', cell: (r) => interval(r.mention_rate_ci), numeric: true },
    ...changeColumn(rows),
    { head: 'Share of voice', cell: (r) => pct(r.share_of_voice), numeric: true },
    { head: 'Score', cell: (r) => fixed(r.score, 1), numeric: true },
  ], rows, 'No segments.');
}

/** The signals, in the API's order (ranked by effect). */
export function signalsTable(table: HTMLTableElement, rows: Signals['signals']): void {
  fill<Signal>(table, [
    { head: '#', cell: (_r, i) => String(i + 1), numeric: true },
    { head: 'Entity', cell: (r) => `${r.name} (${r.entity_type})` },
    { head: 'Slice', cell: (r) => slice(r) },
    { head: 'Mention rate, previous → current', cell: (r) => `${pct(r.previous.rate)} → ${pct(r.current.rate)}`, numeric: true },
    { head: 'Change (95 % interval)', cell: (r) => delta(r.delta, r.delta_ci), numeric: true },
    { head: 'q-value', cell: (r) => qValue(r.q_value), numeric: true },
  ], rows, 'No change passed the test in this range.');
}

export function rankingsTable(table: HTMLTableElement, rows: Rankings): void {
  fill<Ranking>(table, [
    { head: 'Rank', cell: (r) => count(r.rank), numeric: true },
    { head: 'Name', cell: (r) => r.name },
    { head: 'Type', cell: (r) => r.entity_type },
    { head: 'Mentions', cell: (r) => count(r.mention_count), numeric: true },
    { head: 'Mention rate', cell: (r) => pct(r.mention_rate), numeric: true },
    { head: '95 % interval', cell: (r) => interval(r.mention_rate_ci), numeric: true },
    ...changeColumn(rows),
    { head: 'Share of voice', cell: (r) => pct(r.share_of_voice), numeric: true },
    { head: 'Avg. position', cell: (r) => fixed(r.average_rank, 2), numeric: true },
    { head: 'Sentiment', cell: (r) => fixed(r.sentiment, 2), numeric: true },
    { head: 'Score', cell: (r) => fixed(r.score, 1), numeric: true },
  ], rows, 'No mentions in the window.');
}

export function citationsTable(table: HTMLTableElement, rows: Citations): void {
  fill<Citation>(table, [
    { head: '#', cell: (_r, i) => String(i + 1), numeric: true },
    { head: 'Page', cell: (r) => link(r.url, r.title ?? r.url) },
    { head: 'Domain', cell: (r) => r.domain },
    { head: 'Citations', cell: (r) => count(r.citation_count), numeric: true },
    { head: 'Prompts', cell: (r) => count(r.prompt_count), numeric: true },
    { head: 'Own domain', cell: (r) => (r.is_own_domain ? 'yes' : 'no') },
    { head: 'Last cited', cell: (r) => day(r.last_cited_at), date: true },
  ], rows, 'No citations in the window.');
}

export function leadsTable(table: HTMLTableElement, rows: Leads): void {
  fill<Lead>(table, [
    { head: 'Thread', cell: (r) => link(r.url, r.title) },
    { head: 'Platform', cell: (r) => r.platform },
    { head: 'Community', cell: (r) => r.community ?? '–' },
    { head: 'Intent', cell: (r) => r.intent ?? '–' },
    { head: 'Relevance', cell: (r) => fixed(r.relevance, 2), numeric: true },
    { head: 'Score', cell: (r) => count(r.score), numeric: true },
    { head: 'Posted', cell: (r) => day(r.posted_at), date: true },
  ], rows, 'No open forum leads.');
}
