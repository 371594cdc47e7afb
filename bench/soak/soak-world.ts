// The data of the soak (bench/soak/soak.ts): a generated world whose history ends yesterday, replayed once
// into a pristine SQLite file (kept in the out folder and copied for each run, since a run writes into
// its copy), each project's latest run group as the template of the live stream, and the request mix.
import fs from 'node:fs';
import path from 'node:path';
import { DEMO_OPTIONS, generateWorld, worldKeys, type WorldOptions } from '../../fixtures/world';
import { replayFiles } from '../../src/ingest';
import { openDb, Projector } from '../../src/store';
import { LatestGroups, type GroupTemplate } from '../lib/lib';

export interface SoakWorldSize { accounts: number; days: number; prompts: number }

/** The world's options: history ends yesterday (UTC), so the live runs dated now open today. */
export function soakWorld(size: SoakWorldSize, now = new Date()): WorldOptions {
  const yesterday = new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
  return {
    ...DEMO_OPTIONS, seed: 31, accounts: size.accounts, projectsPerAccount: 2, sharedProjects: Math.min(5, size.accounts - 1),
    days: size.days, promptsPerProject: size.prompts, endDay: yesterday,
  };
}

export type { GroupTemplate } from '../lib/lib';

/** Writes the log, and keeps each project's latest run group. */
async function writeLogAndTemplates(opts: WorldOptions, log: string, templatesFile: string): Promise<void> {
  const groups = new LatestGroups();
  const tmp = `${log}.tmp`;
  const out = fs.createWriteStream(tmp);
  for (const line of generateWorld(opts)) {
    groups.observe(line);
    if (!out.write(line + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  fs.renameSync(tmp, log);
  fs.writeFileSync(templatesFile, JSON.stringify([...groups.latest.values()].sort((a, b) => (a.project_id < b.project_id ? -1 : 1))));
}

export interface SoakData { baseDb: string; templates: GroupTemplate[]; name: string; events: number }

/** The pristine database and the templates, generated and replayed once per world and day. */
export async function ensureSoakData(outDir: string, opts: WorldOptions, log: (s: string) => void): Promise<SoakData> {
  fs.mkdirSync(outDir, { recursive: true });
  const name = `soak-${opts.accounts}x${opts.days}x${opts.promptsPerProject}-${opts.endDay}`;
  const baseDb = path.join(outDir, `${name}.db`);
  const templatesFile = path.join(outDir, `${name}.templates.json`);
  const countFile = path.join(outDir, `${name}.events`);
  if (!fs.existsSync(baseDb) || !fs.existsSync(templatesFile)) {
    const logFile = path.join(outDir, `${name}.ndjson`);
    log(`generating ${name} ...`);
    await writeLogAndTemplates(opts, logFile, templatesFile);
    log('replaying it into SQLite (once; later runs the same day copy the file) ...');
    const tmp = `${baseDb}.tmp`;
    for (const s of ['', '-wal', '-shm']) fs.rmSync(tmp + s, { force: true });
    const db = openDb(tmp, { fast: true });
    const started = Date.now();
    const totals = await replayFiles(db, new Projector(db), [logFile], { batchSize: 2000 });
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    fs.writeFileSync(countFile, String(totals.applied));
    log(`  ${totals.applied} events in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    fs.renameSync(tmp, baseDb);
    fs.rmSync(logFile, { force: true });
  }
  const templates = JSON.parse(fs.readFileSync(templatesFile, 'utf8')) as GroupTemplate[];
  const events = fs.existsSync(countFile) ? Number(fs.readFileSync(countFile, 'utf8')) : 0;
  return { baseDb, templates, name, events };
}

/** A fresh copy of the pristine database for one run. */
export function copyDb(baseDb: string, file: string): void {
  for (const s of ['', '-wal', '-shm']) fs.rmSync(file + s, { force: true });
  fs.copyFileSync(baseDb, file);
}

export interface MixRequest { method: 'GET'; path: string; headers: Record<string, string> }

export interface SoakMix {
  requests: MixRequest[];
  /** The hot request: one project's /visibility, identity encoding (as bench/serve/serve.ts measures it). */
  hot: MixRequest;
  /** Headers of a key that sees each project (its owner's). */
  headersOf: Map<string, Record<string, string>>;
}

/** Deterministic shuffle (mulberry32), so projects and endpoints interleave on every connection. */
function shuffle<T>(xs: T[], seed: number): T[] {
  let s = seed >>> 0;
  const rnd = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

/**
 * What dashboards ask: per project, the overview (visibility three times, its trend twice, rankings),
 * then every other endpoint once, some with filters and limits; the key of the owning account and of
 * the accounts a project is shared with, in both header forms; mostly compressed, some identity.
 */
export function soakMix(dbFile: string, opts: WorldOptions): SoakMix {
  const db = openDb(dbFile, { readonly: true });
  const keys = new Map(worldKeys(opts).filter((k) => !k.revoked).map((k) => [k.account_id, k.key]));
  const rows = db.prepare(`SELECT p.id, p.company_id,
      (SELECT id FROM run_groups g WHERE g.project_id = p.id ORDER BY started_at DESC LIMIT 1) AS grp,
      (SELECT engine_id FROM project_engines e WHERE e.project_id = p.id ORDER BY engine_id LIMIT 1) AS engine,
      (SELECT group_concat(account_id) FROM project_access a WHERE a.project_id = p.id AND a.granted = 1) AS shared
    FROM projects p WHERE p.deleted = 0 ORDER BY p.id`).all() as Array<{ id: string; company_id: string; grp: string | null; engine: string | null; shared: string | null }>;
  db.close();
  const requests: MixRequest[] = [];
  const headersOf = new Map<string, Record<string, string>>();
  let n = 0;
  for (const p of rows) {
    const accounts = [p.company_id, ...(p.shared ? p.shared.split(',') : [])].filter((a) => keys.has(a));
    if (accounts.length === 0 || !p.grp || !p.engine) continue;
    for (const account of accounts) {
      const key = keys.get(account)!;
      n += 1;
      const headers: Record<string, string> = n % 2 === 0 ? { 'x-api-key': key } : { authorization: `ApiKey ${key}` };
      if (n % 5 !== 0) headers['accept-encoding'] = 'gzip, br';
      if (account === p.company_id) headersOf.set(p.id, headers);
      const base = `/v1/public/projects/${p.id}`;
      const paths = [
        '/v1/public/projects', base, `${base}/visibility`, `${base}/visibility`, `${base}/visibility`, `${base}/visibility?engine_ids=${p.engine}`,
        `${base}/visibility/timeseries`, `${base}/visibility/timeseries`, `${base}/competitor-rankings`, `${base}/scores/daily?limit=7`,
        `${base}/scores/daily`, `${base}/prompts`, `${base}/segments`, `${base}/segments/analytics`, `${base}/competitors`,
        `${base}/citations?limit=20`, `${base}/mentions?limit=50`, `${base}/mentions?entity_type=competitor&limit=10`, `${base}/referrers`,
        `${base}/warm-leads`, `${base}/engines`, `${base}/terms`, `${base}/runs`, `/v1/public/runs/${p.grp}`, `/v1/public/runs/${p.grp}/results`,
        `${base}/forum/metrics`, `${base}/forum/leads`, `${base}/forum/opportunities`,
      ];
      for (const q of paths) requests.push({ method: 'GET', path: q, headers });
    }
  }
  const first = requests.find((r) => r.path.endsWith('/visibility'));
  if (!first) throw new Error('no project to request: is the world empty?');
  const hotHeaders = { ...first.headers };
  delete hotHeaders['accept-encoding'];
  return { requests: shuffle(requests, 7), hot: { method: 'GET', path: first.path, headers: hotHeaders }, headersOf };
}
