// `visibility-api export` as an operator runs it, checked as a user of the files would: an
// independent reader (pyarrow, test/export/read-export.py) computes from the Parquet files alone the
// totals the API states for the same project and days, and they must agree; a second export after
// new events rewrites only the months those events touched.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { exportData, type Manifest } from '../../src/export';
import { Projector, openDb } from '../../src/store';
import { activeKeys, demoDb } from '../helpers/demo';
import { tmpDir } from '../helpers/db';
import { asSource, ev } from '../helpers/events';
import { request, startApi, withKey } from '../helpers/http';
import { cleanEnv, runCli } from '../helpers/processes';
import { ROOT } from '../helpers/paths';
import { pythonJson } from '../helpers/python';
import { parquetFiles } from '../helpers/export';
import { until } from '../helpers/wait';

interface Answer {
  counted_runs: number;
  runs_all: number;
  run_ids_unique: boolean;
  daily_runs: number;
  daily_mentioned: number;
  by_engine: Record<string, [number, number]>;
  by_day: Record<string, [number, number]>;
  mention_ids: string[];
  citations_by_url: Record<string, number>;
  forum_post_ids: string[];
}

const READER = path.join(__dirname, 'read-export.py');
/** The demo's days (35 ending 2026-11-15): the whole of it, and a range across the month end. */
const RANGES: Array<[string, string]> = [['2026-10-12', '2026-11-15'], ['2026-10-25', '2026-11-05']];

/** Every item of a list, following its Link rel="next" pages. */
async function allPages<T>(base: string, first: string, key: string): Promise<T[]> {
  const items: T[] = [];
  let url: string | null = `${base}${first}`;
  while (url !== null) {
    const r = await request(url, withKey(key));
    if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.text}`);
    items.push(...(r.json as T[]));
    const next = /<([^>]+)>;\s*rel="next"/.exec(String(r.headers.link ?? ''));
    url = next ? new URL(next[1]!, base).toString() : null;
  }
  return items;
}

const readExport = (out: string, queries: Array<{ project: string; start: string; end: string }>): Promise<Answer[]> =>
  pythonJson<Answer[]>([READER, out], queries);

t.test('the exported files, read by pyarrow, give the totals the API answers', async (t) => {
  const { db, file } = await demoDb();
  const api = await startApi({ db });
  t.teardown(async () => {
    await api.close();
    db.close();
  });
  const out = path.join(tmpDir('export-'), 'out');
  const r = await runCli(['export', '--db', file, '--out', out], {}, 180_000);
  t.equal(r.code, 0, `exit 0 (${r.stderr.trim()})`);
  t.match(r.stdout, /^export \(full\) of .* partition\(s\) written \([\d,]+ rows/, 'one summary line');
  t.equal(r.stderr, '', 'no progress line when not on a terminal');

  const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')) as Manifest;
  const schema = JSON.parse(fs.readFileSync(path.join(out, 'schema.json'), 'utf8')) as { datasets: Array<{ name: string }> };
  t.same(schema.datasets.map((d) => d.name), ['runs', 'mentions', 'citations', 'daily_visibility', 'forum_posts'], 'schema.json describes the five datasets');
  t.equal(manifest.metric_definitions_version, (await request(`${api.base}/methodology`, withKey(activeKeys[0]!.key))).headers['metric-definitions-version'], 'the metric-definitions version the API states');

  // Every key's projects, each in two ranges (one across the month end).
  const projects = new Map<string, string>();
  for (const k of activeKeys) {
    const list = (await request(`${api.base}/projects`, withKey(k.key))).json as Array<{ id: string }>;
    for (const p of list) projects.set(p.id, k.key);
  }
  t.equal(projects.size, manifest.projects.length, 'the manifest lists every project the keys see');
  for (const p of manifest.projects) {
    const v = (await request(`${api.base}/projects/${p.id}/visibility`, withKey(projects.get(p.id)!))).headers['x-data-version'];
    t.equal(String(p.data_version), v, `project ${p.id.slice(0, 8)}: the manifest's data version is the API's X-Data-Version`);
  }
  const queries = [...projects.keys()].flatMap((project) => RANGES.map(([start, end]) => ({ project, start, end })));
  const answers = await readExport(out, queries);

  for (const [i, q] of queries.entries()) {
    const a = answers[i]!;
    const key = projects.get(q.project)!;
    const label = `${q.project.slice(0, 8)} ${q.start}..${q.end}`;
    const range = `start_date=${q.start}&end_date=${q.end}`;
    t.ok(a.run_ids_unique, `${label}: each run once`);
    const vis = (await request(`${api.base}/projects/${q.project}/visibility?${range}`, withKey(key))).json as {
      run_count: number; mention_rate: number; engine_breakdown: Array<{ engine_id: string; run_count: number; mention_rate: number }>;
    };
    t.equal(a.counted_runs, vis.run_count, `${label}: counted runs = visibility run_count`);
    t.equal(a.daily_runs, vis.run_count, `${label}: daily_visibility's run_count sums to it`);
    t.ok(Math.abs(a.daily_mentioned / a.daily_runs - vis.mention_rate) < 1e-12, `${label}: and its mention rate`);
    t.same(Object.fromEntries(vis.engine_breakdown.filter((e) => e.run_count > 0).map((e) => [e.engine_id, e.run_count])),
      Object.fromEntries(Object.entries(a.by_engine).map(([e, [n]]) => [e, n])), `${label}: runs per engine`);

    const daily = (await request(`${api.base}/projects/${q.project}/scores/daily?${range}&limit=365`, withKey(key))).json as Array<{ date: string; run_count: number; mention_rate: number }>;
    t.same(Object.fromEntries(daily.map((d) => [d.date, d.run_count])), Object.fromEntries(Object.entries(a.by_day).map(([d, [n]]) => [d, n])), `${label}: runs per day = daily scores`);

    const mentions = await allPages<{ id: string }>(api.base, `/projects/${q.project}/mentions?${range}&limit=1000`, key);
    t.same(a.mention_ids, mentions.map((m) => m.id).sort(), `${label}: the mentions (${mentions.length}), id for id`);

    const cited = await allPages<{ url: string; citation_count: number }>(api.base, `/projects/${q.project}/citations?${range}&limit=1000`, key);
    t.same(a.citations_by_url, Object.fromEntries(cited.map((c) => [c.url, c.citation_count])), `${label}: citing runs per URL (${cited.length} URLs)`);

    const posts = await allPages<{ id: string }>(api.base, `/projects/${q.project}/forum/opportunities?limit=1000`, key);
    t.same(a.forum_post_ids, posts.map((p) => p.id).sort(), `${label}: the forum posts`);
  }
});

t.test('a second export writes only the months new events touched, and the same data gives the same bytes', async (t) => {
  const { db, file, projector } = await demoDb();
  t.teardown(() => db.close());
  const dir = tmpDir('export-inc-');
  const out = path.join(dir, 'out');
  const first = await exportData({ db: file, out, projects: null, range: { start: null, end: null }, full: false });
  t.equal(first.mode, 'full', 'the first export is full');
  const before = parquetFiles(out);

  const again = await exportData({ db: file, out, projects: null, range: { start: null, end: null }, full: false });
  t.equal(again.mode, 'incremental', 'the next one is incremental');
  t.equal(again.partitionsWritten, 0, 'nothing changed: nothing written');
  t.same(again.manifest!.datasets, first.manifest!.datasets, 'and the manifest names the same partitions');

  // A late run in October for one project (a counted one: its prompt is live): only that project's October partitions of the run datasets.
  const m = first.manifest!;
  const target = m.projects[0]!.id;
  const sample = db.prepare(`SELECT r.event FROM prompt_runs r JOIN prompts p ON p.id = r.prompt_id AND p.project_id = r.project_id AND p.deleted = 0
    WHERE r.project_id = ? AND r.status = 'succeeded' AND r.day = '2026-10-20' LIMIT 1`).pluck().get(target) as string;
  const late = JSON.parse(sample) as ReturnType<typeof ev>;
  late.data.id = '11111111-2222-4333-8444-555555555555';
  late.data.completed_at = '2026-10-21T09:30:00Z';
  late.event_id = '11111111-2222-4333-8444-666666666666';
  late.occurred_at = '2026-11-15T23:00:00Z';
  projector.applyBatch(asSource([late], 'late'));
  const inc = await exportData({ db: file, out, projects: null, range: { start: null, end: null }, full: false });
  const after = parquetFiles(out);
  const changed = [...after.keys()].filter((f) => !before.get(f)?.equals(after.get(f)!)).sort();
  const enc = encodeURIComponent(target);
  t.same(changed, ['citations', 'daily_visibility', 'mentions', 'runs'].map((d) => `${d}/project_id=${enc}/month=2026-10/part-0.parquet`).filter((f) => after.has(f)),
    'only the touched project\'s October files changed');
  t.ok(changed.includes(`runs/project_id=${enc}/month=2026-10/part-0.parquet`), 'its runs among them');
  t.equal(inc.partitionsWritten, 4, 'four partitions written (the run datasets of one month)');
  const runsOf = (mf: Manifest): number => mf.datasets.find((d) => d.name === 'runs')!.rows;
  t.equal(runsOf(inc.manifest!), runsOf(m) + 1, 'the manifest counts the new run');

  // The same database exported afresh elsewhere: the same bytes as the incremental result.
  const fresh = path.join(dir, 'fresh');
  await exportData({ db: file, out: fresh, projects: null, range: { start: null, end: null }, full: false });
  const freshFiles = parquetFiles(fresh);
  t.same([...freshFiles.keys()].sort(), [...after.keys()].sort(), 'the same partitions');
  t.ok([...freshFiles].every(([f, bytes]) => bytes.equals(after.get(f)!)), 'byte for byte');

  // Another database (the same log replayed again: versions numbered afresh) is not continued from this manifest.
  const other = await demoDb();
  t.teardown(() => other.db.close());
  const switched = await exportData({ db: other.file, out, projects: null, range: { start: null, end: null }, full: false });
  t.equal(switched.mode, 'full', 'an export of another database into the directory writes everything');
  t.not(switched.manifest!.database_id, inc.manifest!.database_id, 'the manifest says which database it read');
});

t.test('a prompt moved to another project: the next export rewrites the project it left, as a fresh export writes it', async (t) => {
  const { db, file, projector } = await demoDb();
  t.teardown(() => db.close());
  const dir = tmpDir('export-move-');
  const out = path.join(dir, 'out');
  const first = await exportData({ db: file, out, projects: null, range: { start: null, end: null }, full: false });
  const [from, to] = first.manifest!.projects.map((p) => p.id);
  // A live prompt of `from` with counted runs: once it belongs to `to`, those runs count no more.
  const prompt = db.prepare(`SELECT p.id, p.text, p.segment_ids, p.active FROM prompts p WHERE p.project_id = ? AND p.deleted = 0
    AND EXISTS (SELECT 1 FROM prompt_runs r WHERE r.project_id = p.project_id AND r.prompt_id = p.id AND r.status = 'succeeded') ORDER BY p.id LIMIT 1`)
    .get(from) as { id: string; text: string; segment_ids: string; active: number };
  projector.applyBatch(asSource([ev('prompt.upserted', {
    id: prompt.id, project_id: to, text: prompt.text, segment_ids: JSON.parse(prompt.segment_ids) as string[], active: prompt.active === 1,
  }, '2026-11-16T00:00:00Z')], 'move'));
  const inc = await exportData({ db: file, out, projects: null, range: { start: null, end: null }, full: false });
  t.equal(inc.mode, 'incremental', 'an incremental export');
  const kept = inc.manifest!.projects.find((p) => p.id === from)!;
  t.not(kept.data_version, first.manifest!.projects.find((p) => p.id === from)!.data_version, 'the project the prompt left has a new data version');
  const fresh = path.join(dir, 'fresh');
  await exportData({ db: file, out: fresh, projects: null, range: { start: null, end: null }, full: false });
  const [after, expected] = [parquetFiles(out), parquetFiles(fresh)];
  t.same([...after.keys()].sort(), [...expected.keys()].sort(), 'the same partitions as a fresh export');
  const stale = [...expected].filter(([f, bytes]) => !bytes.equals(after.get(f)!)).map(([f]) => f);
  t.same(stale, [], 'and the same bytes: no partition of the project it left kept from before the move');
});

t.test('an export reads one snapshot while a writer keeps committing', async (t) => {
  const { db, file } = await demoDb();
  db.close();
  const writer = openDb(file);
  const projector = new Projector(writer);
  t.teardown(() => writer.close());
  const total = (writer.prepare('SELECT count(*) FROM runs').pluck().get() as number);
  let n = 0;
  const out = path.join(tmpDir('export-snap-'), 'out');
  const r = await exportData({
    db: file, out, projects: null, range: { start: null, end: null }, full: false,
    // After each partition, a writer commits a run of a month not written yet (the export holds its snapshot).
    onProgress: () => {
      n += 1;
      const sample = writer.prepare("SELECT event FROM runs WHERE status = 'succeeded' LIMIT 1 OFFSET ?").pluck().get(n) as string;
      const e = JSON.parse(sample) as ReturnType<typeof ev>;
      e.data.id = `aaaaaaaa-0000-4000-8000-${String(n).padStart(12, '0')}`;
      e.event_id = `bbbbbbbb-0000-4000-8000-${String(n).padStart(12, '0')}`;
      projector.applyBatch(asSource([e], 'meanwhile', n));
    },
  });
  t.ok(n > 4, 'the writer committed while the export ran');
  t.equal(writer.prepare('SELECT count(*) FROM runs').pluck().get(), total + n, 'and its runs are in the database');
  t.equal(r.manifest!.datasets.find((d) => d.name === 'runs')!.rows, total, 'the export holds the runs of the moment it started, none of those committed during it');
});

t.test('a stop between months leaves the previous manifest, and the next run completes', async (t) => {
  const { db, file } = await demoDb();
  t.teardown(() => db.close());
  const out = path.join(tmpDir('export-stop-'), 'out');
  const abort = new AbortController();
  const r = await exportData({ db: file, out, projects: null, range: { start: null, end: null }, full: false, signal: abort.signal, onProgress: () => abort.abort() });
  t.ok(r.stopped, 'stopped');
  t.equal(r.partitionsWritten, 4, 'after the month in hand: its four run datasets, streamed together from one read of its runs');
  t.notOk(fs.existsSync(path.join(out, 'manifest.json')), 'no manifest names a half-done export');
  const done = await exportData({ db: file, out, projects: null, range: { start: null, end: null }, full: false });
  t.equal(done.mode, 'full', 'the next run starts over (there was no manifest)');
  t.ok(fs.existsSync(path.join(out, 'manifest.json')), 'and writes the manifest');
});

t.test('--project exports that project only; the CLI refuses what it cannot do in one line', async (t) => {
  const { db, file } = await demoDb();
  t.teardown(() => db.close());
  const ids = (db.prepare('SELECT id FROM projects WHERE deleted = 0 ORDER BY id').pluck().all() as string[]);
  const dir = tmpDir('export-cli-');
  const out = path.join(dir, 'one');
  const r = await runCli(['export', '--db', file, '--out', out, '--project', ids[1]!, '--start-date', '2026-11-01'], {}, 120_000);
  t.equal(r.code, 0, r.stderr);
  const m = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')) as Manifest;
  t.same(m.projects.map((p) => p.id), [ids[1]], 'the manifest names only that project');
  const folders = ['runs', 'mentions', 'citations', 'daily_visibility', 'forum_posts'].flatMap((d) => fs.existsSync(path.join(out, d)) ? fs.readdirSync(path.join(out, d)) : []);
  t.same([...new Set(folders)], [`project_id=${ids[1]}`], 'and the files hold no other project');
  t.ok(m.datasets.every((d) => d.partitions.every((p) => p.month === '2026-11')), 'only months from the start date on');

  const refused = async (args: string[], message: RegExp, what: string, db = file): Promise<void> => {
    const x = await runCli(['export', '--db', db, ...args], {}, 60_000);
    t.equal(x.code, 2, `${what}: exit 2`);
    t.match(x.stderr, message, `${what}: says why`);
    t.equal(x.stderr.trim().split('\n').length, 1, `${what}: in one line`);
  };
  await refused(['--out', out], /holds an export of .*--full/, 'another scope into the same directory');
  await refused(['--out', path.join(dir, 'x'), '--project', '00000000-0000-4000-8000-00000000dead'], /no project 00000000-0000-4000-8000-00000000dead/, 'an unknown project');
  await refused(['--out', path.join(dir, 'x'), '--start-date', '2026-02-30'], /--start-date must be a day/, 'a day that does not exist');
  await refused(['--out', path.join(dir, 'x'), '--start-date', '2026-11-02', '--end-date', '2026-11-01'], /is after --end-date/, 'a start after the end');
  fs.mkdirSync(path.join(dir, 'busy'));
  fs.writeFileSync(path.join(dir, 'busy', 'notes.txt'), 'mine');
  await refused(['--out', path.join(dir, 'busy')], /not empty and holds no manifest\.json/, 'a directory of other files');
  t.equal(fs.readFileSync(path.join(dir, 'busy', 'notes.txt'), 'utf8'), 'mine', 'whose files are left alone');
  await refused(['--out', path.join(dir, 'y')], /missing\.db/, 'a missing database', path.join(dir, 'missing.db'));
});

// The progress line is for a person at a terminal: run under a pseudo-terminal (util-linux `script`), as they would.
t.test('on a terminal the export shows a progress line, erased before the summary', async (t) => {
  const { db, file } = await demoDb();
  t.teardown(() => db.close());
  const out = path.join(tmpDir('export-tty-'), 'out');
  const cmd = [process.execPath, path.join(ROOT, 'bin', 'visibility-api.js'), 'export', '--db', file, '--out', out].map((a) => `'${a}'`).join(' ');
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8', timeout: 120_000, env: cleanEnv() });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /\rexport: [\d,]+ rows, [\d,]+ rows\/s, \d+:\d\d elapsed/, 'a progress line with rows, rate and time');
  const erase = r.stdout.lastIndexOf('\r\x1b[K');
  t.ok(erase >= 0 && r.stdout.indexOf('export (full) of ', erase) > erase, 'erased before the summary line');
});

// SIGTERM as a service manager sends it: the export finishes the partition in hand and exits 0, the
// directory without a manifest (there was none before). The process is frozen (SIGSTOP) as soon as
// it has planned, so the signal lands mid-export however fast the machine is.
t.test('SIGTERM stops an export between partitions, exit 0, no manifest written', async (t) => {
  const { db, file } = await demoDb();
  t.teardown(() => db.close());
  const out = path.join(tmpDir('export-term-'), 'out');
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'visibility-api.js'), 'export', '--db', file, '--out', out], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await until(() => fs.existsSync(path.join(out, 'schema.json')), 60_000, 2);
  child.kill('SIGSTOP');
  const signalled = Date.now();
  child.kill('SIGTERM');
  child.kill('SIGCONT');
  const code = await exited;
  t.equal(code, 0, 'exit 0');
  t.ok(Date.now() - signalled < 10_000, 'within seconds');
  t.match(stdout, /^export interrupted by SIGTERM: \d+ partition\(s\) written .*run the same command again/, 'says it stopped and what to do');
  t.notOk(fs.existsSync(path.join(out, 'manifest.json')), 'no manifest names a half-done export');
  const again = await runCli(['export', '--db', file, '--out', out], {}, 120_000);
  t.equal(again.code, 0, 'the same command again completes');
  t.ok(fs.existsSync(path.join(out, 'manifest.json')), 'and writes the manifest');
});
