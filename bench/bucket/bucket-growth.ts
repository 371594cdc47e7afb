// npm run bench:bucket [-- --batch-size N --window N --big-batch N --max N]
// Does the cost of applying a prompt_run.completed event depend on how many runs its bucket
// (project, engine, UTC day, prompt) already holds? It should not: a busy day's bucket must cost what an empty one does.
// One project, engine and prompt; every run is dated the same day, so all of them land in ONE
// bucket, streamed through Projector.applyBatch on a fresh database file (openDb fast, as replay).
// At each checkpoint (the bucket holds 10, 100, 1k, 10k, 100k runs) it times:
//   - a window of --window small batches of --batch-size runs (default 9 x 10: live traffic commits
//     small transactions), median microseconds per event; at 10 the window takes the bucket 10 -> 100;
//   - from 1k on, 3 batches of --big-batch runs (default 1,000: replay-sized), median per event.
// Between checkpoints the bucket is filled in batches of 10,000 runs, untimed. Each run carries a
// brand and a competitor mention and 2-3 citations from a pool of 12 URLs, like generated runs; run
// groups hold 10 runs each and are all started before the first run (their cost is not measured).
// Prints a table and the ratio cost@largest / cost@10-100 (target: flat, <= 1.5). Exits non-zero only
// on errors (an event not applied), never on the target.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb, Projector, type SourceEvent } from '../../src/store';
import { numberFlag, parseFlags } from '../lib/bench-flags';
import { fmt, machineLine } from '../lib/machine';

const { values } = parseFlags({
  options: { 'batch-size': { type: 'string' }, window: { type: 'string' }, 'big-batch': { type: 'string' }, max: { type: 'string' } },
});

const positiveInt = (name: keyof typeof values, dflt: number): number => numberFlag(name, values[name], dflt, 'positive integer');

const SMALL = positiveInt('batch-size', 10);
const WINDOW = positiveInt('window', 9);
const BIG = positiveInt('big-batch', 1000);
const BIG_WINDOW = 3;
const UNTIMED_FILL = 10_000;
const MAX = positiveInt('max', 100_000);
const CHECKPOINTS = [10, 100, 1_000, 10_000, 100_000, 1_000_000].filter((n) => n <= MAX);
const GROUP_SIZE = 10;
const TARGET_RATIO = 1.5;

const DAY = Date.UTC(2026, 0, 5);
const SOURCE = 'bench:bucket';

/** A valid uuid whose last group spells n, under a prefix per kind: readable in a debugger. */
function uuid(prefix: string, n: number): string {
  return `${prefix}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

const W = {
  account: uuid('aaaaaaaa', 1), project: uuid('bbbbbbbb', 1), engine: uuid('cccccccc', 1), prompt: uuid('ffffffff', 1),
  competitors: [uuid('99999999', 1), uuid('99999999', 2)],
};
const URLS = Array.from({ length: 12 }, (_, i) => `https://${['acme.com', 'wile.com', 'roadrunner.io', 'review-site.com'][i % 4]}/page-${i}`);
const COMPETITOR_NAMES = ['Wile', 'Coyote'];

let eventSeq = 0;
let position = 0;

function line(type: string, occurredMs: number, data: object): string {
  eventSeq += 1;
  return JSON.stringify({ event_id: uuid('eeeeeeee', eventSeq), type, schema_version: 1, occurred_at: new Date(occurredMs).toISOString(), data });
}

function source(raw: string[]): SourceEvent[] {
  return raw.map((r) => ({ raw: r, source: SOURCE, position: ++position }));
}

/** The minimal world the runs need, valid against schemas/events/*.json. */
function worldEvents(runs: number): string[] {
  const t = DAY - 86_400_000;
  const at = new Date(t).toISOString();
  const events = [
    line('engine.upserted', t, { id: W.engine, name: 'ChatGPT', provider: 'openai', model: 'gpt-4o' }),
    line('account.upserted', t, { account_id: W.account, name: 'Acme' }),
    line('project.upserted', t, { id: W.project, company_id: W.account, name: 'Acme', domain: 'acme.com', status: 'active', created_at: at, updated_at: at }),
    line('project.engine_tracked', t, { project_id: W.project, engine_id: W.engine, at }),
    line('term.upserted', t, { id: uuid('33333333', 1), project_id: W.project, value: 'Acme', kind: 'brand' }),
    line('prompt.upserted', t, { id: W.prompt, project_id: W.project, text: 'best anvil', segment_ids: [], active: true }),
    ...W.competitors.map((id, i) => line('competitor.upserted', t, { id, project_id: W.project, name: COMPETITOR_NAMES[i], domain: `${COMPETITOR_NAMES[i]!.toLowerCase()}.com`, aliases: [] })),
  ];
  for (let g = 0; g * GROUP_SIZE < runs; g++) {
    events.push(line('run_group.started', DAY, { id: uuid('77777777', g), project_id: W.project, trigger: 'scheduled', started_at: new Date(DAY).toISOString() }));
  }
  return events;
}

/** Run n: same bucket as every other run; mentions and citations vary with n, deterministically. */
function runEvent(n: number): string {
  const completed = DAY + (n % 86_000) * 1000;
  const cited = 2 + (n % 2);
  return line('prompt_run.completed', completed + 1000, {
    id: uuid('55555555', n), run_group_id: uuid('77777777', Math.floor(n / GROUP_SIZE)), project_id: W.project,
    prompt_id: W.prompt, engine_id: W.engine, status: 'succeeded', completed_at: new Date(completed).toISOString(),
    response_excerpt: 'Acme and Wile both sell anvils.',
    mentions: [
      { entity_type: 'brand', name: 'Acme', position: 1 + (n % 3), sentiment: ((n % 7) - 3) / 4, snippet: 'Acme anvils are sturdy.' },
      { entity_type: 'competitor', competitor_id: W.competitors[n % 2], name: COMPETITOR_NAMES[n % 2], position: 4 + (n % 2), sentiment: 0.25 },
    ],
    citations: Array.from({ length: cited }, (_, i) => ({ url: URLS[(n + i * 5) % URLS.length], title: `Page ${(n + i * 5) % URLS.length}`, position: i + 1 })),
  });
}

class Bucket {
  runs = 0;
  constructor(private readonly projector: Projector) {}

  /** Applies `count` more runs as one batch; returns its microseconds (the batch is built first, untimed). */
  add(count: number): number {
    const batch = source(Array.from({ length: count }, (_, i) => runEvent(this.runs + i)));
    const us = this.apply(batch, count);
    this.runs += count;
    return us;
  }

  apply(batch: SourceEvent[], expected: number): number {
    const started = process.hrtime.bigint();
    const r = this.projector.applyBatch(batch);
    const us = Number(process.hrtime.bigint() - started) / 1000;
    if (r.applied !== expected || r.deadLettered !== 0) throw new Error(`batch not applied whole: ${JSON.stringify({ ...r, changed: undefined })}`);
    return us;
  }

  fillTo(n: number): void {
    // Untimed, so large batches: with a bucket re-read per batch, filling is what takes the time.
    while (this.runs < n) this.add(Math.min(UNTIMED_FILL, n - this.runs));
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

interface Checkpoint { size: number; small: number; smallRange: string; big: number | null; bigRange: string }

function measure(bucket: Bucket, size: number): Checkpoint {
  bucket.fillTo(size);
  const from = bucket.runs;
  const small = median(Array.from({ length: WINDOW }, () => bucket.add(SMALL) / SMALL));
  const smallRange = `${fmt(from)} -> ${fmt(bucket.runs)}`;
  if (size < BIG) return { size, small, smallRange, big: null, bigRange: '' };
  const bigFrom = bucket.runs;
  const big = median(Array.from({ length: BIG_WINDOW }, () => bucket.add(BIG) / BIG));
  return { size, small, smallRange, big, bigRange: `${fmt(bigFrom)} -> ${fmt(bucket.runs)}` };
}

function report(points: Checkpoint[]): string {
  const first = points[0]!;
  const firstBig = points.find((p) => p.big !== null);
  const rows = points.map((p) => `| ${fmt(p.size)} | ${p.smallRange} | ${fmt(p.small, 1)} | ${fmt(p.small / first.small, 2)} | ${p.big === null ? ' |  | ' : `${p.bigRange} | ${fmt(p.big, 1)} | ${fmt(p.big / firstBig!.big!, 2)}`} |`);
  const last = points[points.length - 1]!;
  const ratio = last.small / first.small;
  const lines = [
    `| bucket holds | ${SMALL}-run batches: bucket during window | us/event (median of ${WINDOW}) | x first | ${fmt(BIG)}-run batches: bucket during window | us/event (median of ${BIG_WINDOW}) | x first |`,
    '|---:|---|---:|---:|---|---:|---:|',
    ...rows,
    '',
    `cost@${fmt(last.size)} / cost@${first.smallRange.replace(' -> ', '-')} (${SMALL}-run batches): ${fmt(ratio, 2)} (target <= ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? 'met' : 'not met'})`,
  ];
  if (firstBig && firstBig !== last && last.big !== null) {
    const bigRatio = last.big / firstBig.big!;
    lines.push(`cost@${fmt(last.size)} / cost@${fmt(firstBig.size)} (${fmt(BIG)}-run batches): ${fmt(bigRatio, 2)} (target <= ${TARGET_RATIO}: ${bigRatio <= TARGET_RATIO ? 'met' : 'not met'})`);
  }
  return lines.join('\n');
}

function main(): void {
  console.log(`machine: ${machineLine()}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-bucket-'));
  const db = openDb(path.join(dir, 'bucket.db'), { fast: true });
  try {
    const projector = new Projector(db);
    const bucket = new Bucket(projector);
    const setup = worldEvents(MAX + WINDOW * SMALL * CHECKPOINTS.length + BIG_WINDOW * BIG * CHECKPOINTS.length);
    for (let i = 0; i < setup.length; i += 1000) {
      const chunk = source(setup.slice(i, i + 1000));
      bucket.apply(chunk, chunk.length);
    }
    const started = performance.now();
    const points = CHECKPOINTS.map((size) => {
      const p = measure(bucket, size);
      console.log(`  bucket at ${fmt(size)}: ${fmt(p.small, 1)} us/event${p.big === null ? '' : `, ${fmt(p.big, 1)} us/event in ${fmt(BIG)}-run batches`} (${fmt((performance.now() - started) / 1000, 1)} s)`);
      return p;
    });
    console.log(`one bucket (project, engine, day ${new Date(DAY).toISOString().slice(0, 10)}, prompt), ${fmt(bucket.runs)} runs applied; fresh file, openDb fast`);
    console.log('');
    console.log(report(points));
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

try {
  main();
} catch (e: unknown) {
  console.error(e);
  process.exit(1);
}
