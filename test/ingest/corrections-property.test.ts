// Same log, same answers, with applied corrections: random worlds of the generator in which runs are
// sent again later (same id, later occurred_at, changed dimensions, status, mentions, citations,
// excerpt or completion time; at distances from a few events to thousands, across weeks and months;
// some of runs whose prompt is deleted or moved meanwhile), replayed one event per transaction, then
// at random batch sizes, cut into two files at a random line (replayed by one writer, or by two one
// after the other): one digest, and every endpoint's bytes those of the one-event-at-a-time replay.
// Every ISO week and calendar month answers the sum of its days.
// Seeded: the seed is printed; CORRECTIONS_SEED=N replays the same worlds and cuts.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { generateWorld, DEMO_OPTIONS, type WorldOptions } from '../../fixtures/world';
import { mulberry32 } from '../../fixtures/random';
import { replayFiles } from '../../src/ingest';
import { ENDPOINTS, ReadStore, type Endpoint } from '../../src/readmodels';
import { digest, Projector, type Db } from '../../src/store';
import { periodEnd, periodStart } from '../../src/store/periods';
import { addDays } from '../../src/lib/time';
import { freshDb, tmpDir } from '../helpers/db';
import { readArgs } from '../helpers/readmodels';

const seed = Number(process.env.CORRECTIONS_SEED ?? Math.floor(Math.random() * 2 ** 31));
t.comment(`seed ${seed} (CORRECTIONS_SEED=${seed} to repeat)`);
const rng = mulberry32(seed);
const int = (lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
/** Log-uniform over 1..max: small batches as often as large ones. */
const batchSize = (max: number): number => Math.max(1, Math.round(Math.exp(rng() * Math.log(max))));

const TRIALS = 2;
const CUTS = 3;

/** A small world with corrections: two or three projects, six to eight weeks ending on a random day of 2026-2027. */
function randomWorld(): WorldOptions {
  const end = addDays('2026-01-01', int(0, 700));
  return {
    ...DEMO_OPTIONS, seed: int(1, 1e9), accounts: 2, projectsPerAccount: [int(1, 2), 1], sharedProjects: 1, engines: 3,
    enginesPerProject: int(2, 3), promptsPerProject: int(4, 7), segmentsPerProject: 2, competitorsPerProject: 3,
    forumPostsPerProject: 4, days: int(42, 60), endDay: end, corrections: [0.02, 0.05, 0.1][int(0, 2)]!,
  };
}

/** One event per transaction, as a replay applies batches (the trend deferred), then settled. */
function oneByOne(tt: Test, lines: string[]): Db {
  const { db, projector } = freshDb(tt);
  lines.forEach((raw, i) => projector.applyBatch([{ raw, source: 'file:one-by-one', position: i + 1 }], 'bulk'));
  projector.settle();
  return db;
}

const project = (e: Endpoint): boolean => e.scope === 'project';

/**
 * The bodies a client can read: every endpoint with its defaults, for every account, project and a
 * few run groups; every week and month of the history on the ranged reports; the trend by week and month.
 */
function bodies(db: Db): Map<string, string> {
  const store = new ReadStore(db);
  const out = new Map<string, string>();
  const put = (name: string, e: Endpoint, over: Parameters<typeof readArgs>[0]): void => {
    out.set(name, JSON.stringify(store.snapshot(() => e.build(store, readArgs({ runGroupId: '', ...over })))));
  };
  const accounts = db.prepare('SELECT id FROM accounts ORDER BY id').pluck().all() as string[];
  for (const accountId of accounts) for (const e of ENDPOINTS.filter((x) => x.scope === 'account')) put(`${e.name} ${accountId}`, e, { accountId, projectId: '' });
  for (const [projectId, accountId] of db.prepare('SELECT id, company_id FROM projects ORDER BY id').raw().all() as Array<[string, string]>) {
    for (const e of ENDPOINTS.filter(project)) put(`${e.name} ${projectId}`, e, { accountId, projectId });
    const groups = db.prepare('SELECT id FROM run_groups WHERE project_id = ? ORDER BY id').pluck().all(projectId) as string[];
    for (const runGroupId of groups.filter((_, i) => i % 9 === 0)) {
      for (const e of ENDPOINTS.filter((x) => x.scope === 'run_group' || x.path.includes(':run_group_id'))) put(`${e.name} ${runGroupId}`, e, { accountId, projectId, runGroupId });
    }
    const [first, last] = db.prepare('SELECT min(day), max(day) FROM prompt_runs WHERE project_id = ?').raw().get(projectId) as [string, string];
    for (const grain of ['week', 'month'] as const) {
      for (let start = periodStart(first, grain); start <= last; start = addDays(periodEnd(start, grain), 1)) {
        const range = { startDate: start, endDate: periodEnd(start, grain) };
        for (const name of ['visibility', 'competitor-rankings', 'segment-analytics', 'citations', 'referrers', 'mentions']) {
          put(`${name} ${projectId} ${range.startDate}..${range.endDate}`, ENDPOINTS.find((x) => x.name === name)!, { accountId, projectId, ...range });
        }
      }
      put(`timeseries ${projectId} by ${grain}`, ENDPOINTS.find((x) => x.name === 'timeseries')!, { accountId, projectId, interval: grain });
    }
  }
  return out;
}

interface Vis { run_count: number; mention_rate: number }

/** The weeks and months of each project whose ranged visibility is not the sum of its days (or whose trend point is not it). */
function notTheSumOfTheirDays(db: Db): string[] {
  const store = new ReadStore(db);
  const visibility = ENDPOINTS.find((x) => x.name === 'visibility')!;
  const timeseries = ENDPOINTS.find((x) => x.name === 'timeseries')!;
  const wrong: string[] = [];
  for (const [projectId, accountId] of db.prepare('SELECT id, company_id FROM projects ORDER BY id').raw().all() as Array<[string, string]>) {
    const vis = (startDate: string, endDate: string): Vis => store.snapshot(() => visibility.build(store, readArgs({ runGroupId: '', accountId, projectId, startDate, endDate }))) as Vis;
    const [first, last] = db.prepare('SELECT min(day), max(day) FROM prompt_runs WHERE project_id = ?').raw().get(projectId) as [string, string];
    const days = new Map<string, [number, number]>();
    for (let d = periodStart(first, 'month'); d <= periodEnd(last, 'month'); d = addDays(d, 1)) {
      const v = vis(d, d);
      days.set(d, [v.run_count, Math.round(v.mention_rate * v.run_count)]);
    }
    for (const grain of ['week', 'month'] as const) {
      const points = new Map((store.snapshot(() => timeseries.build(store, readArgs({ runGroupId: '', accountId, projectId, interval: grain,
        startDate: periodStart(first, grain), endDate: periodEnd(last, grain) }))) as Array<{ date: string; run_count: number }>).map((p) => [p.date, p.run_count]));
      for (let start = periodStart(first, grain); start <= last; start = addDays(periodEnd(start, grain), 1)) {
        const end = periodEnd(start, grain);
        let runs = 0;
        let mentioned = 0;
        for (let d = start; d <= end; d = addDays(d, 1)) {
          runs += days.get(d)?.[0] ?? 0;
          mentioned += days.get(d)?.[1] ?? 0;
        }
        const v = vis(start, end);
        const point = points.get(start) ?? 0;
        if (v.run_count !== runs || Math.round(v.mention_rate * v.run_count) !== mentioned || point !== runs) {
          wrong.push(`${projectId} ${grain} ${start}: ${v.run_count} runs (${Math.round(v.mention_rate * v.run_count)} mentioning), its days ${runs} (${mentioned}), its trend point ${point}`);
        }
      }
    }
  }
  return wrong;
}

function differences(a: Map<string, string>, b: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of a) if (b.get(k) !== v) out.push(k);
  for (const k of b.keys()) if (!a.has(k)) out.push(k);
  return out;
}

for (let trial = 1; trial <= TRIALS; trial++) {
  t.test(`world ${trial} of ${TRIALS}`, async (t) => {
    const opts = randomWorld();
    const lines = [...generateWorld(opts)];
    const runs = new Map<string, number>();
    for (const line of lines) {
      if (!line.includes('"type":"prompt_run.completed"')) continue;
      const runId = (JSON.parse(line) as { data: { id: string } }).data.id;
      runs.set(runId, (runs.get(runId) ?? 0) + 1);
    }
    const resent = [...runs.values()].filter((n) => n > 1).length;
    t.comment(`${lines.length} events, ${runs.size} runs, ${resent} of them sent again; options ${JSON.stringify(opts)}`);
    t.ok(resent > 0, 'some runs are sent again');

    const one = oneByOne(t, lines);
    const want = digest(one);
    const wantBodies = bodies(one);
    t.same(notTheSumOfTheirDays(one), [], 'one event per transaction: every week and month is the sum of its days');

    const dir = tmpDir('corrections-');
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    for (let cut = 1; cut <= CUTS; cut++) {
      const at = int(1, lines.length - 1);
      const size = batchSize(5000);
      const twoWriters = rng() < 0.5;
      const what = `cut at line ${at} of ${lines.length}, batches of ${size}, ${twoWriters ? 'two writers one after the other' : 'one writer'}`;
      const [a, b] = [path.join(dir, `a${cut}.ndjson`), path.join(dir, `b${cut}.ndjson`)];
      fs.writeFileSync(a, lines.slice(0, at).join('\n') + '\n');
      fs.writeFileSync(b, lines.slice(at).join('\n') + '\n');
      const { db, projector } = freshDb(t);
      if (twoWriters) {
        await replayFiles(db, projector, [a], { batchSize: size });
        await replayFiles(db, new Projector(db), [b], { batchSize: size });
      } else {
        await replayFiles(db, projector, [a, b], { batchSize: size });
      }
      t.equal(digest(db), want, `${what}: the digest of one event per transaction`);
      t.same(differences(wantBodies, bodies(db)), [], `${what}: every body (${wantBodies.size}) the same bytes`);
      t.same(notTheSumOfTheirDays(db), [], `${what}: every week and month is the sum of its days`);
    }
  });
}
