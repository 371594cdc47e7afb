// npm run bench:prompt-delete -- [--db FILE] [--rounds N (7)] [--base DIR]
// What a change of what counts costs the writer in a project with a year of daily runs: a prompt
// deleted, restored, moved to another project and back, a competitor deleted and restored, each one
// batch through the Projector, timed around applyBatch (the write transaction, COMMIT included);
// beside it, in the same run, a batch of one ordinary run (the floor of any batch). A build that
// counts a project again a slice a batch (migration 018) is then given batches without events until
// it is done: their number, their time in all and the largest are reported beside.
//
// The database is bench:builds' 365-day world (bench/out/builds-2x365x15x5.db: 2 projects, 5
// engines, 15 prompts, one run per prompt and engine a day), copied (never written) to a temporary
// directory and opened with openDb, which migrates it. Each change is undone by the next (a delete
// by the restore, a move by the move back), so every round starts from the same data. With --base
// DIR (another checkout with its dist built) the same events go through that build's Projector on
// its own copy, rounds alternating between the two builds, so the host's noise falls on both: the
// ratio is the figure. The two copies must end with the same digest (checked).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import * as here from '../../src/store';
import { packageRoot } from '../../src/lib/root';
import { orExit } from '../lib/bench-flags';
import { median } from '../lib/lib';
import { fmt, machineLine } from '../lib/machine';

/** The store API of a build: this one's, or the base's, loaded from its dist. */
type Store = Pick<typeof here, 'openDb' | 'Projector' | 'digest'>;

interface Options { db: string; rounds: number; base: string | null }

function options(): Options {
  return orExit(() => {
    const { values } = parseArgs({ options: { db: { type: 'string' }, rounds: { type: 'string' }, base: { type: 'string' } } });
    const db = values.db ?? path.join(packageRoot(), 'bench', 'out', 'builds-2x365x15x5.db');
    if (!fs.existsSync(db)) throw new Error(`${db} does not exist: npm run bench:builds -- --days 365 makes it`);
    const rounds = Number(values.rounds ?? 7);
    if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer');
    let base: string | null = null;
    if (values.base) {
      base = path.resolve(values.base);
      if (!fs.existsSync(path.join(base, 'dist', 'src', 'store', 'index.js'))) throw new Error(`${base} has no dist/src/store: build it first`);
    }
    return { db, rounds, base };
  });
}

type Data = Record<string, unknown>;
/** A step of a round: its name and the events of its one batch. */
interface Step { name: string; events: (n: number) => Data[] }

/** What the world holds that the steps change: read once from the copy. */
interface World {
  project: string;
  other: string;
  prompt: Data;
  competitor: Data;
  run: Data;
}

function worldOf(db: here.Db): World {
  // The project with the most runs, its prompt with the most runs, its competitor named most.
  const projects = db.prepare(`SELECT p.id FROM projects p ORDER BY (SELECT count(*) FROM runs r JOIN keys k ON k.n = r.project WHERE k.id = p.id) DESC`).pluck().all() as string[];
  const [project, other] = projects as [string, string];
  const prompt = db.prepare('SELECT id, project_id, text, segment_ids, active FROM prompts WHERE project_id = ? AND deleted = 0 ORDER BY id LIMIT 1').get(project) as Data;
  const competitor = db.prepare('SELECT id, project_id, name, domain, aliases FROM competitors WHERE project_id = ? AND deleted = 0 ORDER BY id LIMIT 1').get(project) as Data;
  const event = db.prepare(`SELECT event FROM runs r JOIN keys k ON k.n = r.project WHERE k.id = ? AND r.status = 'succeeded' ORDER BY completed_at DESC LIMIT 1`).pluck().get(project) as string;
  return { project, other, prompt, competitor, run: (JSON.parse(event) as { data: Data }).data };
}

/** Versions later than anything in the world; one second per event. */
const at = (n: number): string => new Date(Date.UTC(2030, 0, 1) + n * 1000).toISOString();
const uuid = (n: number, kind: number): string => `00000000-0000-4000-8${kind.toString(16).padStart(3, '0')}-${n.toString(16).padStart(12, '0')}`;

function event(type: string, n: number, data: Data): Data {
  return { event_id: uuid(n, 1), type, schema_version: 1, occurred_at: at(n), data };
}

function steps(w: World): Step[] {
  const p = w.prompt;
  const promptData = (projectId: unknown): Data => ({ id: p.id, project_id: projectId, text: p.text, segment_ids: JSON.parse(p.segment_ids as string) as string[], active: p.active === 1 });
  const c = w.competitor;
  const competitorData: Data = { id: c.id, project_id: c.project_id, name: c.name, ...(c.domain === null ? {} : { domain: c.domain }), aliases: JSON.parse(c.aliases as string) as string[] };
  return [
    { name: 'one ordinary run (baseline)', events: (n) => [event('prompt_run.completed', n, { ...w.run, id: uuid(n, 2), completed_at: at(n) })] },
    { name: 'prompt.deleted', events: (n) => [event('prompt.deleted', n, { id: p.id, project_id: w.project })] },
    { name: 'prompt restored (prompt.upserted)', events: (n) => [event('prompt.upserted', n, promptData(w.project))] },
    { name: 'prompt moved to another project', events: (n) => [event('prompt.upserted', n, promptData(w.other))] },
    { name: 'prompt moved back', events: (n) => [event('prompt.upserted', n, promptData(w.project))] },
    { name: 'competitor.deleted', events: (n) => [event('competitor.deleted', n, { id: c.id, project_id: w.project })] },
    { name: 'competitor restored', events: (n) => [event('competitor.upserted', n, competitorData)] },
  ];
}

/** After a batch: the later batches a live writer spends counting the project again (migration 018), none in a build without it. */
interface Tail { batches: number; ms: number; maxMs: number }

interface Side { name: string; db: here.Db; projector: here.Projector; store: Store; ms: Map<string, number[]>; tails: Map<string, Tail[]> }

function side(name: string, store: Store, source: string, dir: string): Side {
  const file = path.join(dir, `${name}.db`);
  fs.copyFileSync(source, file);
  const db = store.openDb(file) as here.Db;
  return { name, db, projector: new store.Projector(db) as here.Projector, store, ms: new Map(), tails: new Map() };
}

/** Batches without events until the side's recounts are done (a live writer's next batches do the same slices besides their events). */
function recountTail(s: Side): Tail {
  const tail: Tail = { batches: 0, ms: 0, maxMs: 0 };
  const listed = s.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'recounts'").get() !== undefined
    ? s.db.prepare('SELECT count(*) FROM recounts').pluck() : null;
  while (listed !== null && (listed.get() as number) > 0) {
    const t0 = performance.now();
    s.projector.applyBatch([]);
    const ms = performance.now() - t0;
    tail.batches += 1;
    tail.ms += ms;
    tail.maxMs = Math.max(tail.maxMs, ms);
  }
  return tail;
}

function main(): void {
  const o = options();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prompt-delete-'));
  try {
    const sides: Side[] = [side('this', here, o.db, dir)];
    if (o.base) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the base's modules, by path at run time
      sides.unshift(side('base', require(path.join(o.base, 'dist', 'src', 'store')) as Store, o.db, dir));
    }
    const world = worldOf(sides[0]!.db);
    const runs = sides[0]!.db.prepare('SELECT count(*) FROM runs r JOIN keys k ON k.n = r.project WHERE k.id = ?').pluck().get(world.project) as number;
    const plan = steps(world);
    let n = 0;
    // Round 0 warms each side (prepare, JIT, page cache) and is not counted.
    for (let round = 0; round <= o.rounds; round += 1) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const step of plan) {
        n += 1;
        const batch = step.events(n).map((e, i) => ({ raw: JSON.stringify(e), source: 'bench', position: n * 10 + i }));
        for (const s of order) {
          const t0 = performance.now();
          const r = s.projector.applyBatch(batch);
          const ms = performance.now() - t0;
          if (r.applied !== batch.length) throw new Error(`${s.name}: ${step.name} applied ${r.applied} of ${batch.length}`);
          const tail = recountTail(s);
          if (round > 0) {
            s.ms.set(step.name, [...(s.ms.get(step.name) ?? []), ms]);
            s.tails.set(step.name, [...(s.tails.get(step.name) ?? []), tail]);
          }
        }
      }
    }
    for (const s of sides) s.projector.settle();
    const digests = sides.map((s) => s.store.digest(s.db));
    const same = digests.every((d) => JSON.stringify(d) === JSON.stringify(digests[0]));
    const head = sides.map((s) => `${s.name} p50 (min-max) ms`);
    const lines = [`machine: ${machineLine()}`,
      `database: ${o.db}; project ${world.project} (${fmt(runs)} runs); ${o.rounds} rounds${o.base ? `, alternating with base ${o.base}` : ''}`,
      '', `| batch | ${head.join(' | ')} |${o.base ? ' this / base |' : ''}`, `|---|${head.map(() => '---:|').join('')}${o.base ? '---:|' : ''}`];
    for (const step of plan) {
      const cells = sides.map((s) => {
        const xs = s.ms.get(step.name)!;
        return `${fmt(median(xs), 1)} (${fmt(Math.min(...xs), 1)}-${fmt(Math.max(...xs), 1)})`;
      });
      const ratio = o.base ? ` ${fmt(median(sides[1]!.ms.get(step.name)!) / median(sides[0]!.ms.get(step.name)!), 3)} |` : '';
      lines.push(`| ${step.name} | ${cells.join(' | ')} |${ratio}`);
    }
    const counted = sides.filter((x) => [...x.tails.values()].some((ts) => ts.some((t) => t.batches > 0)));
    for (const x of counted) {
      lines.push('', `${x.name}: the later batches that counted the project again (medians over the rounds)`, '', '| after | batches | writer ms in all | largest batch ms |', '|---|---:|---:|---:|');
      for (const step of plan) {
        const ts = x.tails.get(step.name)!;
        lines.push(`| ${step.name} | ${fmt(median(ts.map((t) => t.batches)))} | ${fmt(median(ts.map((t) => t.ms)), 1)} | ${fmt(median(ts.map((t) => t.maxMs)), 1)} |`);
      }
    }
    if (o.base) lines.push('', `same digest after every round: ${same ? 'yes' : 'NO'}`);
    process.stdout.write(`${lines.join('\n')}\n`);
    for (const s of sides) s.db.close();
    if (!same) process.exitCode = 1;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
