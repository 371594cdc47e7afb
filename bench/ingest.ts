// npm run bench:ingest [-- --days N --accounts N]
// Replays a generated log of >= 500,000 events into a fresh SQLite file and prints events per second
// next to the rate of merely parsing and validating the same file, measured in the same run.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEMO_OPTIONS, generateWorld, type WorldOptions } from '../fixtures/world';
import { decodeEvent } from '../src/events';
import { readLines, replayFiles } from '../src/ingest';
import { packageRoot } from '../src/lib/root';
import { digest, openDb, Projector } from '../src/store';
import { fmt, machineLine } from './machine';

const { values } = parseArgs({ options: { accounts: { type: 'string' }, days: { type: 'string' }, 'batch-size': { type: 'string' } } });
const OUT = path.join(packageRoot(), 'bench', 'out');
const world: WorldOptions = {
  ...DEMO_OPTIONS, seed: 7, accounts: Number(values.accounts ?? 25), projectsPerAccount: 2, sharedProjects: 3,
  days: Number(values.days ?? 125),
};
const batchSize = Number(values['batch-size'] ?? 1000);

/** The log is generated once and kept in bench/out (gitignored); same options, same bytes. */
async function ensureLog(): Promise<string> {
  const file = path.join(OUT, `ingest-${world.accounts}x${world.days}.ndjson`);
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(OUT, { recursive: true });
  const tmp = `${file}.tmp`;
  const out = fs.createWriteStream(tmp);
  for (const line of generateWorld(world)) {
    if (!out.write(line + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve) => out.end(resolve));
  fs.renameSync(tmp, file);
  return file;
}

async function parseAndValidate(file: string): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  let events = 0;
  for await (const line of readLines(file)) {
    if (decodeEvent(line).ok) events += 1;
  }
  return { events, seconds: (performance.now() - started) / 1000 };
}

async function replay(file: string): Promise<{ events: number; seconds: number; dbFile: string }> {
  const dbFile = path.join(OUT, 'ingest.db');
  for (const s of ['', '-wal', '-shm']) fs.rmSync(dbFile + s, { force: true });
  const db = openDb(dbFile, { fast: true });
  const started = performance.now();
  const totals = await replayFiles(db, new Projector(db), [file], { batchSize });
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return { events: totals.applied + totals.duplicate + totals.stale + totals.deadLettered, seconds, dbFile };
}

async function main(): Promise<void> {
  console.log(`machine: ${machineLine()}`);
  const file = await ensureLog();
  console.log(`log: ${path.relative(packageRoot(), file)} (${fmt(fs.statSync(file).size / 1024 ** 2)} MiB)`);
  const base = await parseAndValidate(file);
  const full = await replay(file);
  const baseRate = base.events / base.seconds;
  const fullRate = full.events / full.seconds;
  const d = digest(openDb(full.dbFile, { readonly: true }));
  const rows = [
    '| measure | events | seconds | events/s |',
    '|---|---:|---:|---:|',
    `| parse + validate only (baseline) | ${fmt(base.events)} | ${fmt(base.seconds, 1)} | ${fmt(baseRate)} |`,
    `| replay into SQLite (batch ${batchSize}) | ${fmt(full.events)} | ${fmt(full.seconds, 1)} | ${fmt(fullRate)} |`,
    `| ratio replay / baseline | | | ${fmt(fullRate / baseRate, 2)} |`,
  ];
  console.log(rows.join('\n'));
  console.log(`digest ${d}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
