// npm run bench:builds-ab -- --base DIR [--db FILE] [--iterations N (300)] [--only NAME,NAME] [--text] [--tier] [--cpu]
// A read-model change against a baseline, in one process: the base is another checkout with its dist
// built (e.g. `git worktree add /tmp/base HEAD~1 && cd /tmp/base && ln -s "$OLDPWD/node_modules" . &&
// npx tsc -p .`). Both builds open the same database file and build each request in turn, the order
// swapped every iteration, so the host's noise falls on both: the ratio is the figure, not the ms.
// Times the build (the read transaction around the read model), and checks that both builds give
// the same body bytes (a speed-up must not change a response). With --text it times the body to its
// JSON text instead: the text the store keeps (Endpoint.text) where a side has one, else build() and
// JSON.stringify, what buildReady does before compressing.
//
// The database is bench:builds' 365-day world (bench/out/builds-2x365x15x5.db) unless --db names one;
// --tier: the requests of bench:builds --tier (for a tier's database, bench/out/tier-*.db).
// --cpu: each build's CPU time (the process's user + system) instead of its wall time: on a host
// shared with other busy processes, wall time is mostly waiting for a core (ratios moved 0.8-1.2
// between two runs at a load of 10 on 2 cores), CPU time within a few %.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import * as here from '../../src/readmodels';
import { packageRoot } from '../../src/lib/root';
import { openReader, type Db } from '../../src/store';
import { buildCases, type BuildCase } from './build-cases';
import { orExit } from '../lib/bench-flags';
import { median } from '../lib/lib';
import { fmt, machineLine } from '../lib/machine';

/** The read-model API of a build: this one's, or the base's, loaded from its dist. */
type ReadModels = Pick<typeof here, 'ENDPOINTS' | 'ReadStore'>;

interface Side { name: string; models: ReadModels; db: Db; store: here.ReadStore }

function options(): { base: string; db: string; iterations: number; only: string[] | null; text: boolean; tier: boolean; cpu: boolean } {
  return orExit(() => {
    const { values } = parseArgs({ options: { base: { type: 'string' }, db: { type: 'string' }, iterations: { type: 'string' }, only: { type: 'string' }, text: { type: 'boolean' }, tier: { type: 'boolean' }, cpu: { type: 'boolean' } } });
    if (!values.base) throw new Error('--base DIR is required (a checkout whose dist is built)');
    const base = path.resolve(values.base);
    if (!fs.existsSync(path.join(base, 'dist', 'src', 'readmodels', 'index.js'))) throw new Error(`${base} has no dist/src/readmodels: build it first (npx tsc -p .)`);
    const db = values.db ?? path.join(packageRoot(), 'bench', 'out', 'builds-2x365x15x5.db');
    if (!fs.existsSync(db)) throw new Error(`${db} does not exist: npm run bench:builds -- --days 365 makes it`);
    const iterations = Number(values.iterations ?? 300);
    if (!Number.isInteger(iterations) || iterations < 10) throw new Error('--iterations must be an integer >= 10');
    return { base, db, iterations, only: values.only ? values.only.split(',') : null, text: values.text === true, tier: values.tier === true, cpu: values.cpu === true };
  });
}

function side(name: string, models: ReadModels, dbFile: string): Side {
  const db = openReader(dbFile);
  return { name, models, db, store: new models.ReadStore(db) };
}

/** A side's own endpoint of a request's name (the base's objects, not this build's). */
function endpointOf(s: Side, c: BuildCase): here.Endpoint {
  const e = s.models.ENDPOINTS.find((x) => x.name === c.endpoint.name);
  if (!e) throw new Error(`${s.name} has no endpoint ${c.endpoint.name}`);
  return e;
}

/** Now in ms: wall time, or (--cpu) the process's CPU time. */
const clockOf = (cpu: boolean) => (cpu ? (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; } : (): number => performance.now());

/** One build of a request by one side: ms, and the body (as JSON text when timed to text). */
function buildOn(s: Side, e: here.Endpoint, c: BuildCase, toText: boolean, now: () => number): { ms: number; body: unknown } {
  const t0 = now();
  const body = s.db.transaction(() => (toText ? (e.text?.(s.store, c.args) ?? JSON.stringify(e.build(s.store, c.args))) : e.build(s.store, c.args)))();
  return { ms: now() - t0, body };
}

/** A body as the bytes a client gets. */
const bytesOf = (body: unknown, isText: boolean): string => (isText ? (body as string) : JSON.stringify(body));

function main(): void {
  const o = options();
  // The base's modules, by path at run time: the type is this build's API, which a recent base shares.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const baseModels = require(path.join(o.base, 'dist', 'src', 'readmodels')) as ReadModels;
  const sides = [side('base', baseModels, o.db), side('this', here, o.db)] as const;
  const now = clockOf(o.cpu);
  const timed = `${o.text ? 'to JSON text' : 'build'}${o.cpu ? ' CPU' : ''}`;
  const cases = buildCases(sides[1].db, { onlyRanges: false, tier: o.tier }).filter((c) => !o.only || o.only.some((n) => c.name.includes(n)));
  const lines = [`machine: ${machineLine()}`, `base: ${o.base}; database: ${o.db}; ${o.iterations} builds per side and request, alternating`, '',
    `| request | base ${timed} p50 (ms) | this ${timed} p50 (ms) | this / base | same bytes |`, '|---|---:|---:|---:|---|'];
  let differ = 0;
  for (const c of cases) {
    const endpoints = sides.map((s) => endpointOf(s, c));
    const [a, b] = sides.map((s, k) => bytesOf(buildOn(s, endpoints[k]!, c, o.text, now).body, o.text)); // also: prepare, JIT, page cache
    const same = a === b;
    if (!same) differ++;
    for (let i = 0; i < 10; i++) sides.forEach((s, k) => buildOn(s, endpoints[k]!, c, o.text, now));
    const ms: [number[], number[]] = [[], []];
    for (let i = 0; i < o.iterations; i++) {
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const k of order) ms[k]!.push(buildOn(sides[k]!, endpoints[k]!, c, o.text, now).ms);
    }
    const [base, mine] = [median(ms[0]), median(ms[1])];
    lines.push(`| ${c.name} | ${fmt(base, 2)} | ${fmt(mine, 2)} | ${fmt(mine / base, 2)} | ${same ? 'yes' : '**NO**'} |`);
  }
  console.log(lines.join('\n'));
  for (const s of sides) s.db.close();
  if (differ) {
    console.error(`${differ} request(s) give different bodies in the two builds`);
    process.exit(1);
  }
}

main();
