// Guards the committed fixtures: the demo log is what the generator makes (nobody hand-edits
// it), every line is valid against schemas/events, the world has the shape the demo and the
// other tests rely on, and each invalid fixture fails for the reason its README states.
// The classifier here is deliberately local: it checks the fixtures, not src/events.
import t from 'tap';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DEMO_KEYS, DEMO_OPTIONS, generateWorld, type WorldOptions } from '../fixtures/world';
import { DEMO_FILE, demoContent } from '../fixtures/generate';

const ROOT = join(__dirname, '..');
const SCHEMA_DIR = join(ROOT, 'schemas', 'events');
const INVALID_DIR = join(ROOT, 'fixtures', 'invalid');

type Reason = 'unparseable' | 'invalid_envelope' | 'unknown_type' | 'unsupported_schema_version' | 'invalid_payload';
type Verdict = Reason | 'valid';

interface Envelope { event_id: string; type: string; schema_version: number; occurred_at: string; data: Record<string, unknown> }
interface Mention { entity_type: string; competitor_id?: string | null; name: string; position: number; sentiment?: number | null }
interface Citation { url: string; title?: string | null; position?: number | null }
interface Run {
  id: string; run_group_id: string; project_id: string; prompt_id: string; engine_id: string;
  status: string; completed_at: string; mentions: Mention[]; citations: Citation[];
}

// ---------------------------------------------------------------- classifier

function loadValidators(): { envelope: ValidateFunction; byType: Map<string, ValidateFunction> } {
  const ajv = new Ajv2020({ allErrors: false });
  addFormats(ajv);
  const byType = new Map<string, ValidateFunction>();
  let envelope: ValidateFunction | undefined;
  for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.json')).sort()) {
    const validate = ajv.compile(JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8')) as object);
    if (file === 'envelope.json') envelope = validate;
    else byType.set(basename(file, '.json'), validate);
  }
  if (!envelope) throw new Error('schemas/events/envelope.json is missing');
  return { envelope, byType };
}

const validators = loadValidators();

/** The dead-letter reason of one NDJSON line, in the order the spec lists the checks. */
function classify(line: string): Verdict {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return 'unparseable';
  }
  // Like src/events: JSON that is not an object (a quoted string, an array) is not an event at all.
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'unparseable';
  if (!validators.envelope(parsed)) return 'invalid_envelope';
  const event = parsed as Envelope;
  const validateData = validators.byType.get(event.type);
  if (!validateData) return 'unknown_type';
  if (event.schema_version !== 1) return 'unsupported_schema_version';
  return validateData(event.data) ? 'valid' : 'invalid_payload';
}

// ---------------------------------------------------------------- helpers

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const joinLines = (opts: WorldOptions): string => [...generateWorld(opts)].join('\n');
const linesOf = (content: string): string[] => content.split('\n').filter((l) => l.trim() !== '');

function committedDemo(): string {
  return gunzipSync(readFileSync(DEMO_FILE)).toString('utf8');
}

function firstDifference(a: string[], b: string[]): string {
  const i = a.findIndex((line, k) => line !== b[k]);
  return i < 0 ? `line counts ${a.length} vs ${b.length}` : `line ${i + 1} differs`;
}

/** README tables: `| 3 | \`unknown_type\` | ... |` rows under a `## \`file.ndjson\`` heading. */
function expectedVerdicts(readme: string): Map<string, Map<number, Verdict>> {
  const files = new Map<string, Map<number, Verdict>>();
  let current: Map<number, Verdict> | undefined;
  for (const line of readme.split('\n')) {
    const heading = /^## `([\w.-]+\.ndjson)`/.exec(line);
    if (heading) files.set(heading[1], (current = new Map()));
    const row = /^\| (\d+) \| `(\w+)` \|/.exec(line);
    if (row && current) current.set(Number(row[1]), row[2] as Verdict);
  }
  return files;
}

// ---------------------------------------------------------------- (a) determinism

t.test('the generator is deterministic', async (t) => {
  const small: WorldOptions = { ...DEMO_OPTIONS, days: 9, forumPostsPerProject: 10 };
  const first = joinLines(small);
  t.equal(sha256(joinLines(small)), sha256(first), 'same options, same bytes');
  t.not(sha256(joinLines({ ...small, seed: small.seed + 1 })), sha256(first), 'another seed, another log');
  const shifted = joinLines({ ...small, endDay: '2026-11-16' });
  t.not(shifted, first, 'the end day (not the clock) places the history');
  t.notMatch(first, /2026-11-1[6-9]T/, 'nothing happens after the end day');
  t.throws(() => [...generateWorld({ ...small, endDay: 'yesterday' })], /endDay/, 'a bad end day is refused');
});

t.test('stretched options still give valid events', async (t) => {
  // More engines, prompts, segments and competitors than the catalog has, two groups a day,
  // and a history too short for mid-history changes: the generator must stay within the schemas.
  const stretched: WorldOptions = {
    ...DEMO_OPTIONS, seed: 7, accounts: 7, projectsPerAccount: 1, engines: 7, enginesPerProject: 7, promptsPerProject: 30,
    segmentsPerProject: 6, competitorsPerProject: 9, days: 3, forumPostsPerProject: 12, runsPerPromptPerDay: 2, sharedProjects: 3,
  };
  const lines = [...generateWorld(stretched)];
  const bad = lines.map((line, i) => ({ i, verdict: classify(line) })).filter((r) => r.verdict !== 'valid');
  t.same(bad.slice(0, 5), [], `${lines.length} lines, all valid`);
  t.equal(lines.filter((l) => l.includes('"type":"prompt_run.completed"')).length, 7 * 30 * 7 * 3 * 2, 'every prompt on every engine, twice a day');
});

// ---------------------------------------------------------------- (b) committed demo

t.test('the committed demo is valid and regenerates identically', async (t) => {
  const committed = committedDemo();
  const lines = linesOf(committed);
  const bad = lines.map((line, i) => ({ i, verdict: classify(line) })).filter((r) => r.verdict !== 'valid');
  t.same(bad.slice(0, 5), [], `every one of ${lines.length} lines validates against schemas/events`);
  const fresh = demoContent();
  t.ok(sha256(fresh) === sha256(committed), `equals a fresh generation with DEMO_OPTIONS (${firstDifference(linesOf(fresh), lines)}); run npx tsx fixtures/generate.ts`);
  t.ok(committed.endsWith('\n') && !committed.includes('\n\n'), 'one event per line, newline-terminated');
});

// ---------------------------------------------------------------- (c) shape

interface Demo { events: Envelope[]; byType: Map<string, Envelope[]>; runs: Run[] }

let demoCache: Demo | undefined;

/** Parsed once: several tests read the same ~17 MB of JSON. */
function loadDemo(): Demo {
  if (demoCache) return demoCache;
  const events = linesOf(committedDemo()).map((l) => JSON.parse(l) as Envelope);
  const byType = new Map<string, Envelope[]>();
  for (const e of events) byType.set(e.type, [...(byType.get(e.type) ?? []), e]);
  const runs = (byType.get('prompt_run.completed') ?? []).map((e) => e.data as unknown as Run);
  demoCache = { events, byType, runs };
  return demoCache;
}

const data = (demo: Demo, type: string): Record<string, unknown>[] => (demo.byType.get(type) ?? []).map((e) => e.data);
const countBy = <T>(items: T[], key: (x: T) => string): Map<string, number> =>
  items.reduce((m, x) => m.set(key(x), (m.get(key(x)) ?? 0) + 1), new Map<string, number>());

t.test('the demo world has the promised shape', async (t) => {
  const demo = loadDemo();
  t.ok(statSync(DEMO_FILE).size < 5 * 1024 * 1024, 'the gzipped demo is under 5 MB');

  const accounts = data(demo, 'account.upserted');
  const projects = data(demo, 'project.upserted');
  t.equal(accounts.length, 3, '3 accounts');
  t.same([...countBy(projects, (p) => String(p.company_id)).values()].sort(), [1, 1, 2], 'accounts own 2, 1 and 1 projects');
  const grants = data(demo, 'project.access_granted');
  t.equal(grants.length, 1, 'one project is shared');
  const shared = projects.find((p) => p.id === grants[0]?.project_id);
  t.ok(shared && shared.company_id !== grants[0].account_id, 'shared with an account that does not own it');

  const engines = data(demo, 'engine.upserted');
  t.ok(engines.length >= 4 && engines.length <= 5, '4-5 engines');
  const tracked = countBy(data(demo, 'project.engine_tracked'), (e) => String(e.project_id));
  t.same([...tracked.values()], [4, 4, 4, 4], 'each project tracks 4 engines');

  const segments = data(demo, 'segment.upserted');
  const prompts = data(demo, 'prompt.upserted');
  for (const p of projects) {
    const own = new Set(segments.filter((s) => s.project_id === p.id).map((s) => s.id));
    const promptIds = new Set(prompts.filter((q) => q.project_id === p.id).map((q) => q.id));
    t.ok(own.size === 4 && promptIds.size >= 18 && promptIds.size <= 22, `${String(p.name)}: ~20 prompts in 4 segments`);
    const inSegments = prompts.filter((q) => q.project_id === p.id).every((q) => (q.segment_ids as string[]).every((s) => own.has(s)) && (q.segment_ids as string[]).length > 0);
    t.ok(inSegments, `${String(p.name)}: every prompt belongs to the project's segments`);
    const days = new Set(data(demo, 'run_group.started').filter((g) => g.project_id === p.id).map((g) => String(g.started_at).slice(0, 10)));
    t.ok(days.size >= 30, `${String(p.name)}: ${days.size} days of run groups`);
    t.ok(data(demo, 'forum_post.discovered').some((f) => f.project_id === p.id), `${String(p.name)}: forum posts present`);
  }

  const urls = demo.runs.flatMap((r) => r.citations.map((c) => c.url));
  t.ok(urls.some((u) => /^https:\/\/www\.reddit\.com\/r\/\w+\/comments\/\w+\/\w+\/$/.test(u)), 'reddit threads are cited');
  t.ok(urls.some((u) => u.startsWith('https://www.quora.com/')), 'quora questions are cited');
  t.ok(demo.byType.has('forum_post.updated') && demo.byType.has('prompt.deleted') && demo.byType.has('api_key.revoked'), 'mid-history changes happen');
});

t.test('demo runs are realistic enough for the metrics', async (t) => {
  const { runs } = loadDemo();
  const failed = runs.filter((r) => r.status === 'failed');
  t.ok(failed.length > 0 && failed.length < runs.length * 0.06, 'a few runs fail');
  t.ok(failed.every((r) => r.mentions.length === 0 && r.citations.length === 0), 'failed runs carry no mentions or citations');
  t.ok(runs.every((r) => new Set(r.mentions.map((m) => m.position)).size === r.mentions.length && r.mentions.every((m) => m.position <= 8)), 'positions are unique within a run, 1..8');
  t.ok(runs.some((r) => new Set(r.mentions.map((m) => m.name)).size < r.mentions.length), 'some answers name an entity twice');
  t.ok(runs.every((r) => r.citations.length === 0 || (r.citations.length >= 2 && r.citations.length <= 6)), '2-6 citations per answer');

  const ok = runs.filter((r) => r.status === 'succeeded');
  const rate = (rs: Run[]): number => rs.filter((r) => r.mentions.some((m) => m.entity_type === 'brand')).length / rs.length;
  t.ok(rate(ok) > 0.4 && rate(ok) < 0.7, `overall brand mention rate ${rate(ok).toFixed(2)}`);
  const perEngine = [...new Set(ok.map((r) => r.engine_id))].map((e) => rate(ok.filter((r) => r.engine_id === e)));
  t.ok(Math.max(...perEngine) - Math.min(...perEngine) > 0.05, 'engines differ');
  const days = [...new Set(ok.map((r) => r.completed_at.slice(0, 10)))].sort();
  const inDays = (ds: string[]): Run[] => ok.filter((r) => ds.includes(r.completed_at.slice(0, 10)));
  t.ok(rate(inDays(days.slice(-7))) > rate(inDays(days.slice(0, 7))), 'the brand trends upward');

  // Community pages (endpoint 14) need repeat citations inside the current window.
  const lastWeek = inDays(days.slice(-7));
  const projects = new Set(lastWeek.map((r) => r.project_id));
  for (const p of projects) {
    const cited = countBy(lastWeek.filter((r) => r.project_id === p).flatMap((r) => r.citations.map((c) => c.url)), (u) => u);
    const community = [...cited].filter(([u]) => /reddit\.com|quora\.com|stackexchange\.com|ycombinator\.com|\/t\//.test(u));
    t.ok(community.filter(([, n]) => n >= 2).length >= 3 && community.some(([, n]) => n === 1), `project ${p}: community pages cited repeatedly, and some once`);
  }
});

t.test('the demo keys authenticate as documented', async (t) => {
  const demo = loadDemo();
  const issued = new Map(data(demo, 'api_key.issued').map((k) => [String(k.key_sha256), k]));
  const revoked = new Set(data(demo, 'api_key.revoked').map((k) => String(k.key_id)));
  t.equal(DEMO_KEYS.length, issued.size, 'one plaintext per issued key');
  for (const k of DEMO_KEYS) {
    const event = issued.get(sha256(k.key));
    t.ok(event && event.key_id === k.key_id && event.account_id === k.account_id, `${k.key} hashes to its api_key.issued`);
    t.equal(revoked.has(k.key_id), k.revoked, `${k.key} is ${k.revoked ? '' : 'not '}revoked`);
  }
  t.equal(DEMO_KEYS.filter((k) => k.revoked).length, 1, 'exactly one demo key is revoked');
  const listed = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'demo', 'keys.json'), 'utf8')) as unknown;
  t.same(listed, DEMO_KEYS.map(({ account, key, revoked }) => ({ account, key, revoked })), 'fixtures/demo/keys.json (what serve --demo shows) lists them');
});

t.test('ids and times are canonical', async (t) => {
  const { events } = loadDemo();
  const ids = new Set(events.map((e) => e.event_id));
  t.equal(ids.size, events.length, 'event ids are unique');
  const text = events.map((e) => JSON.stringify(e)).join('\n');
  const uuids = text.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi) ?? [];
  t.ok(uuids.length > 0 && uuids.every((u) => u === u.toLowerCase()), 'ids are lowercase');
  const times = text.match(/"\d{4}-\d{2}-\d{2}T[^"]*"/g) ?? [];
  t.ok(times.length > 0 && times.every((s) => /^"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"$/.test(s)), 'times are RFC 3339 UTC with milliseconds');
  const starts = new Map<string, number>();
  const runsAfterStart = events.every((e, i) => {
    if (e.type === 'run_group.started') starts.set(String(e.data.id), i);
    return e.type !== 'prompt_run.completed' || starts.has(String(e.data.run_group_id));
  });
  t.ok(runsAfterStart, 'a run group starts before its runs are logged');
  const outOfOrder = events.findIndex((e, i) => i > 0 && e.occurred_at < events[i - 1].occurred_at);
  t.equal(outOfOrder, -1, 'the log is ordered by occurred_at, like a single partition would be');
});

// ---------------------------------------------------------------- (d) invalid fixtures

t.test('invalid fixtures fail for the reason their README states', async (t) => {
  const expected = expectedVerdicts(readFileSync(join(INVALID_DIR, 'README.md'), 'utf8'));
  const files = readdirSync(INVALID_DIR).filter((f) => f.endsWith('.ndjson')).sort();
  t.same([...expected.keys()].sort(), files, 'the README describes every fixture file');
  for (const file of files) {
    const lines = readFileSync(join(INVALID_DIR, file), 'utf8').split('\n').filter((l) => l !== '');
    const verdicts = expected.get(file) ?? new Map<number, Verdict>();
    t.equal(verdicts.size, lines.length, `${file}: every line has an expected reason`);
    lines.forEach((line, i) => t.equal(classify(line), verdicts.get(i + 1), `${file}:${i + 1}`));
    if (file !== 'mixed.ndjson') {
      const reason = basename(file, '.ndjson');
      t.ok([...verdicts.values()].every((v) => v === reason), `${file}: only ${reason}`);
    }
  }
  const mixed = [...(expected.get('mixed.ndjson') ?? new Map<number, Verdict>()).values()];
  t.same([...new Set(mixed.filter((v) => v !== 'valid'))].sort(),
    ['invalid_envelope', 'invalid_payload', 'unknown_type', 'unparseable', 'unsupported_schema_version'], 'mixed has one bad line of each reason');
});

t.test('unsupported versions carry otherwise valid data', async (t) => {
  const lines = linesOf(readFileSync(join(INVALID_DIR, 'unsupported_schema_version.ndjson'), 'utf8'));
  for (const line of lines) {
    const event = JSON.parse(line) as Envelope;
    t.equal(classify(JSON.stringify({ ...event, schema_version: 1 })), 'valid', `${event.type} v${event.schema_version} is valid as v1`);
  }
});
