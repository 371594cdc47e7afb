// node dist/bench/builds/cited-rows.js --db FILE [--scratch FILE] [--iterations N (10)]
// The options for citations, referrers and warm leads over ranges, measured on a tier's database
// (docs/decisions.md, "Cited URLs over a range"). A scratch file gets the candidate read model, made
// from the database's own roll-ups (weeks, months) and runs (days): one row per project, grain,
// period, URL and engine, in integer columns (times as ms, titles and URLs by number, prompts as a
// bitmap of their places). Then, for the busiest project's 365- and 90-day ranges, in one process with
// the reads taken in turn (the host's noise falls on all of them):
// - today: citedUrls (JSON roll-ups decoded, the ragged days from the runs);
// - rows, every column: the same list from the candidate rows, checked to be the same bytes;
// - rows, two passes: the runs per URL first (url, engine, runs), then every column of the 100 URLs a
//   page of citations shows (checked against today's first 100);
// and the rows read by each.
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { openReader } from '../../src/store';
import { ReadStore } from '../../src/readmodels';
import { citedUrls, type CitedUrl } from '../../src/readmodels/endpoints/citations';
import { countingOf, runsOfDays } from '../../src/readmodels/counted-runs';
import { rangePieces, type Piece } from '../../src/readmodels/range-pieces';
import { citeFacts, compareStrings, decodeFacts, type UrlCitations } from '../../src/store/reads';
import { winsOver, EngineCitations } from '../../src/store/contributions';
import type { StoredCitedEngine } from '../../src/store/period-sums';
import { addDays } from '../../src/lib/time';
import { orExit } from '../lib/bench-flags';
import { machineLine } from '../lib/machine';

const GRAIN = { day: 0, week: 1, month: 2 } as const;
const PAGE = 100;
const COLS = 'r.url, engine, runs, first_ms, last_ms, prompts, r.title, title_ms, title_prompt, title_run';

function options(): { db: string; scratch: string; iterations: number } {
  return orExit(() => {
    const { values } = parseArgs({ options: { db: { type: 'string' }, scratch: { type: 'string' }, iterations: { type: 'string' } } });
    if (!values.db || !fs.existsSync(values.db)) throw new Error('--db FILE (a tier database) is required');
    const iterations = Number(values.iterations ?? 10);
    if (!Number.isInteger(iterations) || iterations < 1) throw new Error('--iterations must be a positive integer');
    return { db: values.db, scratch: values.scratch ?? `${values.db}.cited-rows.db`, iterations };
  });
}

const ms = (iso: string): number => {
  const t = Date.parse(iso);
  // Times are kept as decoded (UTC, ms): a number gives the same text back, or the model could not hold them.
  if (new Date(t).toISOString() !== iso) throw new Error(`${iso} is not canonical: ms would not give it back`);
  return t;
};
const iso = (t: number): string => new Date(t).toISOString();

/** The candidate tables, filled from the database's roll-ups and runs for one project. */
function makeScratch(src: string, scratch: string, store: ReadStore, projectId: string, lastDay: string): void {
  fs.rmSync(scratch, { force: true });
  const db = new Database(scratch);
  db.pragma('page_size = 16384'); // as the store's files (db.ts)
  db.pragma('journal_mode = OFF');
  db.exec(`
    CREATE TABLE cited_url (n INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE, domain TEXT NOT NULL);
    CREATE TABLE cited_title (n INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE);
    CREATE TABLE cited_place (place INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);
    CREATE TABLE cited_rows (grain INTEGER NOT NULL, day TEXT NOT NULL, url INTEGER NOT NULL, engine INTEGER NOT NULL,
      runs INTEGER NOT NULL, first_ms INTEGER NOT NULL, last_ms INTEGER NOT NULL, prompts BLOB NOT NULL,
      title INTEGER, title_ms INTEGER, title_prompt INTEGER, title_run TEXT,
      PRIMARY KEY (grain, day, url, engine)) WITHOUT ROWID;
    CREATE INDEX cited_rows_by_url ON cited_rows (url, grain, day);`);
  const urls = new Map<string, number>();
  const titles = new Map<string, number>();
  const places = new Map<string, number>();
  const insUrl = db.prepare('INSERT INTO cited_url VALUES (?, ?, ?)');
  const insTitle = db.prepare('INSERT INTO cited_title VALUES (?, ?)');
  const insPlace = db.prepare('INSERT INTO cited_place VALUES (?, ?)');
  const ins = db.prepare('INSERT INTO cited_rows VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const numberOf = (m: Map<string, number>, key: string, put: (n: number) => void): number => {
    let n = m.get(key);
    if (n === undefined) { m.set(key, (n = m.size)); put(n); }
    return n;
  };
  const place = (id: string): number => numberOf(places, id, (n) => insPlace.run(n, id));
  const urlN = (url: string, domain: string): number => numberOf(urls, url, (n) => insUrl.run(n, url, domain));
  const titleN = (t: string): number => numberOf(titles, t, (n) => insTitle.run(n, t));
  const put = (grain: number, day: string, url: number, e: EngineCitations): void => {
    const qs = [...e.prompts].map(place);
    const bits = Buffer.alloc((Math.max(...qs) >> 3) + 1);
    for (const q of qs) bits[q >> 3]! |= 1 << (q & 7);
    ins.run(grain, day, url, place(e.engineId), e.runs, ms(e.firstAt), ms(e.lastAt), bits,
      e.title === null ? null : titleN(e.title), e.title === null ? null : ms(e.titleAt), e.title === null ? null : place(e.titlePrompt), e.title === null ? null : e.titleRun);
  };
  const source = new Database(src, { readonly: true });
  db.transaction(() => {
    for (const r of source.prepare('SELECT grain, day, ids, urls, cited_engines FROM rollups WHERE project_id = ? ORDER BY grain, day').all(projectId) as
      Array<{ grain: 'week' | 'month'; day: string; ids: string; urls: string; cited_engines: string }>) {
      const ids = JSON.parse(r.ids) as string[];
      const us = JSON.parse(r.urls) as Array<[string, string]>;
      for (const [u, en, runs, qs, firstAt, lastAt, title, titleAt, titleDay, titlePrompt, titleRun] of JSON.parse(r.cited_engines) as StoredCitedEngine[]) {
        const e = new EngineCitations(ids[en]!, firstAt);
        e.runs = runs;
        e.lastAt = lastAt;
        for (const q of qs) e.prompts.add(ids[q]!);
        if (title !== null) e.setTitle(title, titleAt!, titleDay!, ids[titlePrompt!]!, titleRun ?? '');
        put(GRAIN[r.grain], r.day, urlN(...us[u]!), e);
      }
    }
    // Days: every day of the last 400 from the runs, by the rule the roll-ups follow (counted runs).
    const counting = countingOf(store, projectId);
    for (let day = addDays(lastDay, -400); day <= lastDay; day = addDays(day, 1)) {
      const p: Piece = { grain: 'day', start: day, end: day };
      const cited = new Map<string, UrlCitations>();
      for (const run of runsOfDays(store, { projectId, start: day, end: day, engineIds: null, filter: null }, p, counting, decodeFacts)) {
        citeFacts(cited, run.facts.cited, run.facts.engineId, run.completed_at, run.facts.promptId, run.id);
      }
      for (const u of cited.values()) for (const e of u.byEngine.values()) put(GRAIN.day, day, urlN(u.url, u.domain), e);
    }
  })();
  source.close();
  db.exec('VACUUM');
  db.close();
}

interface Acc {
  runs: number;
  engines: number[];
  prompts: Uint8Array;
  firstMs: number;
  lastMs: number;
  title: number | null;
  titleMs: number;
  titlePrompt: number;
  titleRun: string;
  titleEngine: number;
  url: string;
  domain: string;
  titleText: string | null;
}

type Row = [url: number, engine: number, runs: number, firstMs: number, lastMs: number, prompts: Buffer, title: number | null, titleMs: number | null,
  titlePrompt: number | null, titleRun: string | null, urlText: string, domain: string, titleText: string | null];

class Candidate {
  readonly db: Database.Database;
  readonly ids: string[];
  private readonly stmts;
  rowsRead = 0;

  constructor(file: string) {
    this.db = new Database(file, { readonly: true });
    this.db.pragma('cache_size = -32768'); // a reader's (read-store.ts)
    this.ids = (this.db.prepare('SELECT id FROM cited_place ORDER BY place').pluck().all() as string[]);
    const cols = COLS;
    this.stmts = {
      // The URL and title text joined in SQL: a statement per URL from JS costs ~10x a joined row.
      full: this.db.prepare(`SELECT ${cols}, u.url, u.domain, t.title FROM cited_rows r JOIN cited_url u ON u.n = r.url LEFT JOIN cited_title t ON t.n = r.title
        WHERE grain = ? AND day BETWEEN ? AND ?`).raw(true),
      rank: this.db.prepare('SELECT url, runs FROM cited_rows WHERE grain = ? AND day BETWEEN ? AND ?').raw(true),
      // By URL: the planner would rather walk the whole piece by the primary key.
      ofUrl: this.db.prepare(`SELECT ${cols}, u.url, u.domain, t.title FROM cited_rows r INDEXED BY cited_rows_by_url JOIN cited_url u ON u.n = r.url LEFT JOIN cited_title t ON t.n = r.title
        WHERE r.url = ? AND grain = ? AND day BETWEEN ? AND ?`).raw(true),
      url: this.db.prepare('SELECT url FROM cited_url WHERE n = ?').pluck(),
    };
  }

  private add(into: Map<number, Acc>, r: Row): void {
    const [u, e, runs, firstMs, lastMs, bits, title, titleMs, titlePrompt, titleRun, url, domain, titleText] = r;
    let a = into.get(u);
    if (a === undefined) {
      into.set(u, (a = { runs: 0, engines: [], prompts: new Uint8Array(bits.length), firstMs, lastMs, title: null, titleMs: 0, titlePrompt: 0, titleRun: '', titleEngine: 0, url, domain, titleText: null }));
    }
    a.runs += runs;
    if (!a.engines.includes(e)) a.engines.push(e);
    if (bits.length > a.prompts.length) {
      const grown = new Uint8Array(bits.length);
      grown.set(a.prompts);
      a.prompts = grown;
    }
    for (let i = 0; i < bits.length; i += 1) a.prompts[i]! |= bits[i]!;
    if (firstMs < a.firstMs) a.firstMs = firstMs;
    if (lastMs > a.lastMs) a.lastMs = lastMs;
    if (title !== null && (a.title === null || this.titleWins(titleMs!, e, titlePrompt!, titleRun ?? '', a))) {
      a.title = title; a.titleText = titleText; a.titleMs = titleMs!; a.titlePrompt = titlePrompt!; a.titleRun = titleRun ?? ''; a.titleEngine = e;
    }
  }

  /** The title rule (contributions.ts winsOver): the latest, then the first bucket; the day is the time's. */
  private titleWins(t: number, e: number, q: number, run: string, a: Acc): boolean {
    if (t !== a.titleMs) return t > a.titleMs;
    const at = iso(t);
    return winsOver(at, at.slice(0, 10), this.ids[e]!, this.ids[q]!, run, at, at.slice(0, 10), this.ids[a.titleEngine]!, this.ids[a.titlePrompt]!, a.titleRun);
  }

  private cited(a: Acc): CitedUrl {
    let prompts = 0;
    for (const b of a.prompts) for (let x = b; x !== 0; x &= x - 1) prompts += 1;
    return {
      url: a.url, domain: a.domain, title: a.titleText, citation_count: a.runs, prompt_count: prompts,
      engine_ids: a.engines.map((e) => this.ids[e]!).sort(), first_cited_at: iso(a.firstMs), last_cited_at: iso(a.lastMs),
    };
  }

  /** Every URL of the range, every column of its rows read. */
  all(pieces: Piece[]): CitedUrl[] {
    const acc = new Map<number, Acc>();
    for (const p of pieces) {
      for (const r of this.stmts.full.iterate(GRAIN[p.grain], p.start, p.end) as IterableIterator<Row>) { this.add(acc, r); this.rowsRead += 1; }
    }
    return [...acc.values()].map((a) => this.cited(a)).sort((x, y) => y.citation_count - x.citation_count || compareStrings(x.url, y.url));
  }

  /** Every column of one URL over the pieces, read by the URL's index. */
  private urlOver(u: number, pieces: Piece[]): CitedUrl {
    const acc = new Map<number, Acc>();
    for (const p of pieces) {
      for (const r of this.stmts.ofUrl.iterate(u, GRAIN[p.grain], p.start, p.end) as IterableIterator<Row>) {
        this.add(acc, r);
        this.rowsRead += 1;
      }
    }
    return this.cited(acc.get(u)!);
  }

  /** A page of citations in two passes, the first in SQL: the page's URLs (runs summed by SQLite), then every column of those only. */
  pageSql(pieces: Piece[]): CitedUrl[] {
    const where = pieces.map(() => '(grain = ? AND day BETWEEN ? AND ?)').join(' OR ');
    const top = this.db.prepare(`SELECT g.url FROM (SELECT url, sum(runs) AS n FROM cited_rows WHERE ${where} GROUP BY url) g JOIN cited_url u ON u.n = g.url
      ORDER BY g.n DESC, u.url LIMIT ${PAGE}`).pluck().all(...pieces.flatMap((p) => [GRAIN[p.grain], p.start, p.end])) as number[];
    // Every column of the page's URLs, piece by piece by the URL's index (one statement with IN and
    // the pieces OR'ed is planned as a walk of the pieces: ~20x slower).
    return top.map((u) => this.urlOver(u, pieces));
  }

  /** A page of citations in two passes: the runs per URL, then every column of the page's URLs only. */
  page(pieces: Piece[]): CitedUrl[] {
    const runs = new Map<number, number>();
    for (const p of pieces) {
      for (const [u, n] of this.stmts.rank.iterate(GRAIN[p.grain], p.start, p.end) as IterableIterator<[number, number]>) {
        runs.set(u, (runs.get(u) ?? 0) + n);
        this.rowsRead += 1;
      }
    }
    // The page's last count, then the URL text of every URL with at least that many (ties go by URL).
    const counts = [...runs.values()].sort((a, b) => b - a);
    const floor = counts[Math.min(PAGE, counts.length) - 1] ?? 0;
    const candidates = [...runs].filter(([, n]) => n >= floor).map(([u, n]) => ({ u, n, url: this.stmts.url.get(u) as string }))
      .sort((a, b) => b.n - a.n || compareStrings(a.url, b.url)).slice(0, PAGE);
    return candidates.map(({ u }) => this.urlOver(u, pieces));
  }
}

function main(): void {
  const o = options();
  const db = openReader(o.db);
  const store = new ReadStore(db);
  const [projectId, lastDay] = db.prepare(`SELECT k.id, substr(max(r.completed_at), 1, 10) FROM runs r JOIN keys k ON k.n = r.project
    GROUP BY r.project ORDER BY count(*) DESC LIMIT 1`).raw(true).get() as [string, string];
  if (!fs.existsSync(o.scratch)) {
    const t0 = performance.now();
    db.transaction(() => makeScratch(o.db, o.scratch, store, projectId, lastDay))();
    console.log(`made ${o.scratch} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const cand = new Candidate(o.scratch);
  const counts = cand.db.prepare('SELECT grain, count(*) FROM cited_rows GROUP BY grain').raw(true).all() as Array<[number, number]>;
  console.log(`${machineLine()}\nrows: ${counts.map(([g, n]) => `${['day', 'week', 'month'][g]} ${n}`).join(', ')}; URLs ${cand.db.prepare('SELECT count(*) FROM cited_url').pluck().get() as number}; ${(fs.statSync(o.scratch).size / 1e6).toFixed(1)} MB`);
  for (const days of [365, 90]) {
    const start = addDays(lastDay, -(days - 1));
    const args = { projectId, startDate: start, endDate: lastDay, engineIds: null, windowDays: 7 };
    const pieces = rangePieces(start, lastDay, 'total');
    const today = (): CitedUrl[] => db.transaction(() => citedUrls(store, args, null))();
    const reference = JSON.stringify(today());
    if (JSON.stringify(cand.all(pieces)) !== reference) throw new Error(`${days} days: the rows do not give today's list`);
    if (JSON.stringify(cand.pageSql(pieces)) !== JSON.stringify(JSON.parse(reference).slice(0, PAGE))) throw new Error(`${days} days: the SQL pass does not give today's first ${PAGE}`);
    if (JSON.stringify(cand.page(pieces)) !== JSON.stringify(JSON.parse(reference).slice(0, PAGE))) throw new Error(`${days} days: the two passes do not give today's first ${PAGE}`);
    const ways: Array<[string, () => unknown]> = [['today (JSON roll-ups, runs of the ragged days)', today], ['rows, every column', () => cand.all(pieces)], [`rows, two passes (a page of ${PAGE})`, () => cand.page(pieces)],
      [`rows, two passes, the first summed in SQL (a page of ${PAGE})`, () => cand.pageSql(pieces)]];
    const times = ways.map(() => [] as number[]);
    const rows = ways.map(() => 0);
    for (let i = 0; i < o.iterations; i += 1) {
      ways.forEach(([, f], k) => {
        cand.rowsRead = 0;
        const t0 = performance.now();
        f();
        times[k]!.push(performance.now() - t0);
        rows[k] = cand.rowsRead;
      });
    }
    console.log(`${days}-day range (${start}..${lastDay}), same bytes: yes`);
    ways.forEach(([name], k) => {
      const ts = times[k]!.sort((a, b) => a - b);
      console.log(`  ${name}: p50 ${ts[Math.floor(ts.length / 2)]!.toFixed(1)} ms, min ${ts[0]!.toFixed(1)} ms${k === 0 ? '' : `, ${rows[k]} rows read`}`);
    });
  }
}

main();
