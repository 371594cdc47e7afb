// Signals over HTTP against an oracle computed here from the event list alone (its own
// counting, z-test, Wilson/Newcombe and Benjamini-Hochberg; nothing of src/): on a generated world
// of two engines, two segments (a prompt in both) and two countries (some runs naming none)
// where one competitor's mention rate on one engine jumps in the second period, the jump is found and
// every signal agrees with the oracle (and over periods that cross a month and overlap, with a
// prompt deleted); on a world without any change there are none; another account's key gets a 404.
import t from 'tap';
import { mulberry32 } from '../../fixtures/random';
import { tmpDb } from '../helpers/db';
import { asSource, ev, id, run as baseRun, W, world, type Ev } from '../helpers/events';
import { request, startApi, withKey } from '../helpers/http';

const SEGMENT2 = id(2, 'dddddddd');
const PROMPT3 = id(3, 'ffffffff');
const RIVAL = id(2, '99999999');
const UNTRACKED = id(9, '99999999');
const ENGINES = [W.engineA, W.engineB];
const PROMPTS = [W.prompt1, W.prompt2, PROMPT3];
const COMPETITORS = [W.competitor, RIVAL];
const PREVIOUS = ['2026-01-01', '2026-01-14'];
const CURRENT = ['2026-01-15', '2026-01-28'];

/** Every day of a..b. */
function days(a: string, b: string): string[] {
  const out: string[] = [];
  for (let d = Date.parse(a); d <= Date.parse(b); d += 86_400_000) out.push(new Date(d).toISOString().slice(0, 10));
  return out;
}

/** The chance a run names an entity ('' the brand), by period, engine and prompt. */
type Chance = (current: boolean, engine: string, prompt: string, entity: string) => number;
const BASE: Record<string, number> = { '': 0.5, [W.competitor]: 0.25, [RIVAL]: 0.35, [UNTRACKED]: 0.3 };
const steady: Chance = (_c, _e, _p, entity) => BASE[entity]!;
/** Wile on Perplexity: 25 % before, 70 % now. */
const planted: Chance = (c, e, p, entity) => (c && e === W.engineB && entity === W.competitor ? 0.7 : steady(c, e, p, entity));

/**
 * The world: prompt1 in Buyers, prompt2 in Buyers and Sellers, prompt3 in none; 2 runs a day per
 * engine x prompt over `from`..`to` (28 days unless told), some failed; `chance`'s current period from `currentFrom`.
 */
function events(seed: number, chance: Chance, from = PREVIOUS[0]!, to = CURRENT[1]!, currentFrom = CURRENT[0]!): Ev[] {
  const r = mulberry32(seed);
  const out: Ev[] = [
    ...world().filter((e) => e.type !== 'prompt.upserted'),
    ev('segment.upserted', { id: SEGMENT2, project_id: W.project, name: 'Sellers', active: true }),
    ev('prompt.upserted', { id: W.prompt1, project_id: W.project, text: 'best anvil', segment_ids: [W.segment], active: true }),
    ev('prompt.upserted', { id: W.prompt2, project_id: W.project, text: 'cheap anvil', segment_ids: [W.segment, SEGMENT2], active: true }),
    ev('prompt.upserted', { id: PROMPT3, project_id: W.project, text: 'anvil repair', segment_ids: [], active: true }),
    ev('competitor.upserted', { id: RIVAL, project_id: W.project, name: 'Roadrunner Inc', domain: 'rr.com', aliases: [] }),
  ];
  let n = 0;
  for (const day of days(from, to)) {
    const current = day >= currentFrom;
    for (const engine of ENGINES) {
      for (const prompt of PROMPTS) {
        for (let k = 0; k < 2; k++) {
          n += 1;
          const failed = r() < 0.05;
          const e = baseRun({ n, engine, prompt, day, status: failed ? 'failed' : 'succeeded' });
          const mentions: Array<Record<string, unknown>> = [];
          if (r() < chance(current, engine, prompt, '')) mentions.push({ entity_type: 'brand', name: 'Acme', position: 1 + Math.floor(r() * 3) });
          for (const c of [...COMPETITORS, UNTRACKED]) {
            if (r() < chance(current, engine, prompt, c)) mentions.push({ entity_type: 'competitor', competitor_id: c, name: 'x', position: 2 });
          }
          e.data.mentions = mentions;
          const where = r();
          if (where < 0.85) e.data.country = where < 0.45 ? 'US' : 'DE'; // the rest name no country
          out.push(e);
        }
      }
    }
  }
  return out;
}

// ---- The oracle: from the events only. ----

/** erfc by the continued fraction / series of Abramowitz-Stegun 7.1.26's refinement: Numerical Recipes' erfcc (|error| < 1.2e-7 relative). */
function erfcc(x: number): number {
  const z = Math.abs(x);
  const u = 1 / (1 + 0.5 * z);
  const ans = u * Math.exp(-z * z - 1.26551223 + u * (1.00002368 + u * (0.37409196 + u * (0.09678418 + u * (-0.18628806 + u * (0.27886807
    + u * (-1.13520398 + u * (1.48851587 + u * (-0.82215223 + u * 0.17087277)))))))));
  return x >= 0 ? ans : 2 - ans;
}

function wilsonOf(k: number, n: number): [number, number] {
  const z = 1.959964;
  const p = k / n;
  const mid = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = ((z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n)));
  return [k === 0 ? 0 : mid - half, k === n ? 1 : mid + half];
}

interface OracleSignal {
  entity: string;
  engine: string | null;
  segment: string | null;
  country: string | null;
  x1: number; n1: number; x2: number; n2: number;
  p: number; q: number; low: number; high: number;
}

/** The slices of `current` against `previous` (a run in both, when they overlap, counts in both); a deleted prompt's runs count in neither. */
function oracle(evs: Ev[], current: readonly string[] = CURRENT, previous: readonly string[] = PREVIOUS): { tested: OracleSignal[]; skipped: number } {
  const segs = new Map<string, string[]>();
  for (const e of evs) if (e.type === 'prompt.upserted') segs.set(String(e.data.id), e.data.segment_ids as string[]);
  for (const e of evs) if (e.type === 'prompt.deleted') segs.delete(String(e.data.id));
  // slice key -> [runs, Map<entity, mentioned>] per period
  const tally = [new Map<string, { runs: number; m: Map<string, number> }>(), new Map<string, { runs: number; m: Map<string, number> }>()];
  for (const e of evs) {
    if (e.type !== 'prompt_run.completed' || e.data.status !== 'succeeded' || !segs.has(String(e.data.prompt_id))) continue;
    const day = String(e.data.completed_at).slice(0, 10);
    for (const [period, [from, to]] of [current, previous].entries()) {
      if (day < from! || day > to!) continue;
      const named = new Set((e.data.mentions as Array<{ entity_type: string; competitor_id?: string }>)
        .map((m) => (m.entity_type === 'brand' ? '' : m.competitor_id!)).filter((x) => x === '' || COMPETITORS.includes(x)));
      const country = e.data.country === undefined ? [null] : [null, String(e.data.country)];
      for (const engine of [null, String(e.data.engine_id)]) {
        for (const segment of [null, ...segs.get(String(e.data.prompt_id))!]) for (const k of country) {
          const key = `${engine}|${segment}|${k}`;
          let c = tally[period]!.get(key);
          if (!c) tally[period]!.set(key, (c = { runs: 0, m: new Map() }));
          c.runs += 1;
          for (const x of named) c.m.set(x, (c.m.get(x) ?? 0) + 1);
        }
      }
    }
  }
  const tested: OracleSignal[] = [];
  let skipped = 0;
  for (const key of new Set([...tally[0]!.keys(), ...tally[1]!.keys()])) {
    const [engine, segment, country] = key.split('|').map((s) => (s === 'null' ? null : s)) as [string | null, string | null, string | null];
    for (const entity of ['', ...COMPETITORS]) {
      const n1 = tally[0]!.get(key)?.runs ?? 0;
      const n2 = tally[1]!.get(key)?.runs ?? 0;
      if (n1 < 10 || n2 < 10) { skipped += 1; continue; }
      const x1 = tally[0]!.get(key)!.m.get(entity) ?? 0;
      const x2 = tally[1]!.get(key)!.m.get(entity) ?? 0;
      const pooled = (x1 + x2) / (n1 + n2);
      const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
      const p = se === 0 ? 1 : erfcc(Math.abs(x1 / n1 - x2 / n2) / se / Math.SQRT2);
      const [l1, u1] = wilsonOf(x1, n1);
      const [l2, u2] = wilsonOf(x2, n2);
      const d = x1 / n1 - x2 / n2;
      tested.push({
        entity, engine, segment, country, x1, n1, x2, n2, p, q: NaN,
        low: d - Math.sqrt((x1 / n1 - l1) ** 2 + (u2 - x2 / n2) ** 2), high: d + Math.sqrt((u1 - x1 / n1) ** 2 + (x2 / n2 - l2) ** 2),
      });
    }
  }
  // Benjamini-Hochberg, step-up: q of the i-th smallest = min over j >= i of p_(j) m / j.
  const sorted = [...tested].sort((a, b) => a.p - b.p);
  let min = 1;
  for (let j = sorted.length; j >= 1; j--) {
    min = Math.min(min, (sorted[j - 1]!.p * sorted.length) / j);
    sorted[j - 1]!.q = min;
  }
  return { tested, skipped };
}

interface Body {
  start_date: string; end_date: string; compare_start_date: string; compare_end_date: string; min_runs: number;
  slices_tested: number; slices_skipped: number; false_discovery_rate: number;
  signals: Array<{
    entity_type: string; competitor_id: string | null; name: string; engine_id: string | null; engine_name: string | null; segment_id: string | null;
    segment_name: string | null; country: string | null; current: { rate: number; mentioned: number; runs: number }; previous: { rate: number; mentioned: number; runs: number };
    delta: number; delta_ci: { low: number; high: number }; p_value: number; q_value: number;
  }>;
}

async function serve(evs: Ev[]): Promise<{ get: (query: string, key?: string) => Promise<{ status: number; json: unknown; body: string }>; close: () => Promise<void> }> {
  const { db, projector } = tmpDb();
  projector.applyBatch(asSource(evs));
  const api = await startApi({ db });
  return {
    get: async (query, key = W.key) => {
      const r = await request(`${api.base}/projects/${W.project}/signals${query}`, withKey(key));
      return { status: r.status, json: r.json, body: r.text };
    },
    close: async () => { await api.close(); db.close(); },
  };
}

const RANGE = `?start_date=${CURRENT[0]}&end_date=${CURRENT[1]}`;
const near = (a: number, b: number, tol: number): boolean => Math.abs(a - b) <= tol;

t.test('a planted jump is found, and every signal is the oracle\'s', async (t) => {
  const evs = events(41, planted);
  const o = oracle(evs);
  const api = await serve(evs);
  t.teardown(api.close);
  const r = await api.get(RANGE);
  t.equal(r.status, 200);
  const b = r.json as Body;
  t.same([b.start_date, b.end_date, b.compare_start_date, b.compare_end_date], [...CURRENT, ...PREVIOUS], 'previous_period: the 14 days before');
  t.same([b.slices_tested, b.slices_skipped, b.min_runs, b.false_discovery_rate], [o.tested.length, o.skipped, 10, 0.05], 'slices tested and skipped');
  t.ok(o.tested.length >= 27 && o.skipped > 0, `brand and 2 competitors x (all, 2 engines) x (all, 2 segments) x (all, 2 countries): ${o.tested.length} tested, ${o.skipped} skipped`);
  t.ok(o.tested.some((s) => s.country !== null), 'slices by country are tested');
  // The oracle's erfc is good to ~1e-7: slices whose q is that close to 5 % are left out of the comparison.
  const expected = o.tested.filter((s) => s.q <= 0.05 - 1e-6);
  const doubtful = o.tested.filter((s) => Math.abs(s.q - 0.05) <= 1e-6);
  const key = (entity: string, engine: string | null, segment: string | null, country: string | null): string => `${entity}|${engine}|${segment}|${country}`;
  const served = new Map(b.signals.map((s) => [key(s.competitor_id ?? '', s.engine_id, s.segment_id, s.country), s]));
  t.ok(served.has(key(W.competitor, W.engineB, null, null)), 'Wile on Perplexity, all segments and countries, is a signal');
  t.ok(served.has(key(W.competitor, W.engineB, null, 'US')), 'and in the US');
  for (const s of expected) {
    const got = served.get(key(s.entity, s.engine, s.segment, s.country));
    if (!t.ok(got, `signal ${key(s.entity, s.engine, s.segment, s.country)} (q ${s.q})`) || !got) continue;
    t.same([got.current.mentioned, got.current.runs, got.previous.mentioned, got.previous.runs], [s.x1, s.n1, s.x2, s.n2], 'counts');
    t.ok(near(got.delta, s.x1 / s.n1 - s.x2 / s.n2, 1e-12), 'delta');
    t.ok(near(got.p_value, s.p, 1e-6 * Math.max(s.p, 1e-12) + 1e-12) && near(got.q_value, s.q, 1e-6 * s.q + 1e-12), `p ${got.p_value} ~ ${s.p}, q ${got.q_value} ~ ${s.q}`);
    t.ok(near(got.delta_ci.low, s.low, 1e-9) && near(got.delta_ci.high, s.high, 1e-9), 'Newcombe interval');
    t.equal(got.entity_type, s.entity === '' ? 'brand' : 'competitor');
  }
  t.equal(b.signals.length - b.signals.filter((s) => doubtful.some((d) => key(d.entity, d.engine, d.segment, d.country) === key(s.competitor_id ?? '', s.engine_id, s.segment_id, s.country))).length,
    expected.length, 'no other signal');
  for (let i = 1; i < b.signals.length; i++) t.ok(Math.abs(b.signals[i - 1]!.delta) >= Math.abs(b.signals[i]!.delta), 'ranked by |delta|');
  const wile = served.get(key(W.competitor, W.engineB, null, null))!;
  t.same([wile.name, wile.engine_name, wile.segment_name], ['Wile', 'Perplexity', null]);

  // limit caps the list, not the test; the same period named explicitly gives the same bytes.
  const one = (await api.get(`${RANGE}&limit=1`)).json as Body;
  t.same([one.signals, one.slices_tested], [b.signals.slice(0, 1), b.slices_tested], 'limit=1: the largest change; slices_tested unchanged');
  t.equal((await api.get(`${RANGE}&compare_start_date=${PREVIOUS[0]}&compare_end_date=${PREVIOUS[1]}`)).body, r.body, 'explicit compare dates');
  t.equal((await api.get(`${RANGE}&compare=previous_period`)).body, r.body, 'compare=previous_period is the default');
  const window = (await api.get('')).json as Body;
  t.same([window.start_date, window.end_date, window.compare_start_date, window.compare_end_date], ['2026-01-22', '2026-01-28', '2026-01-15', '2026-01-21'],
    'no range: the current window (7 days to the latest run) against the 7 days before');
});

t.test('periods that cross a month and overlap, a prompt deleted: every slice is the oracle\'s', async (t) => {
  // Runs over 2025-12-20..2026-02-28, the jump from February on; prompt3 deleted (its runs count in
  // neither period); the periods each cross a month's end and share 2026-01-25..31 (a run of those days is in both).
  const evs = [...events(43, planted, '2025-12-20', '2026-02-28', '2026-02-01'), ev('prompt.deleted', { id: PROMPT3, project_id: W.project }, '2026-03-01T00:00:00.000Z')];
  const [current, previous] = [['2026-01-25', '2026-02-27'], ['2025-12-25', '2026-01-31']];
  const o = oracle(evs, current, previous);
  const api = await serve(evs);
  t.teardown(api.close);
  const r = await api.get(`?start_date=${current[0]}&end_date=${current[1]}&compare_start_date=${previous[0]}&compare_end_date=${previous[1]}`);
  t.equal(r.status, 200);
  const b = r.json as Body;
  t.same([b.start_date, b.end_date, b.compare_start_date, b.compare_end_date], [...current, ...previous], 'the periods asked for');
  t.same([b.slices_tested, b.slices_skipped], [o.tested.length, o.skipped], 'slices tested and skipped');
  const key = (entity: string, engine: string | null, segment: string | null, country: string | null): string => `${entity}|${engine}|${segment}|${country}`;
  const served = new Map(b.signals.map((s) => [key(s.competitor_id ?? '', s.engine_id, s.segment_id, s.country), s]));
  const expected = o.tested.filter((s) => s.q <= 0.05 - 1e-6);
  const doubtful = o.tested.filter((s) => Math.abs(s.q - 0.05) <= 1e-6).map((s) => key(s.entity, s.engine, s.segment, s.country));
  t.ok(expected.length > 0, `${expected.length} signals`);
  for (const s of expected) {
    const got = served.get(key(s.entity, s.engine, s.segment, s.country));
    if (!t.ok(got, `signal ${key(s.entity, s.engine, s.segment, s.country)} (q ${s.q})`) || !got) continue;
    t.same([got.current.mentioned, got.current.runs, got.previous.mentioned, got.previous.runs], [s.x1, s.n1, s.x2, s.n2], 'counts');
    t.ok(near(got.q_value, s.q, 1e-6 * s.q + 1e-12), `q ${got.q_value} ~ ${s.q}`);
  }
  t.equal(b.signals.filter((s) => !doubtful.includes(key(s.competitor_id ?? '', s.engine_id, s.segment_id, s.country))).length, expected.length, 'no other signal');
});

t.test('a world without any change yields no signal', async (t) => {
  const evs = events(7, steady);
  const o = oracle(evs);
  const api = await serve(evs);
  t.teardown(api.close);
  const b = (await api.get(RANGE)).json as Body;
  t.equal(b.slices_tested, o.tested.length);
  t.same(o.tested.filter((s) => s.q <= 0.05), [], 'the oracle finds none');
  t.same(b.signals, [], 'nor does the API');
});

t.test('another account\'s key: 404; compare parameters checked: 400', async (t) => {
  const api = await serve(events(41, planted));
  t.teardown(api.close);
  t.equal((await api.get(RANGE, W.otherKey)).status, 404, 'another account\'s project');
  for (const q of [
    `${RANGE}&compare_start_date=2026-01-01`, `${RANGE}&compare_end_date=2026-01-14`,
    `${RANGE}&compare=previous_period&compare_start_date=2026-01-01&compare_end_date=2026-01-14`,
    `${RANGE}&compare_start_date=2026-01-14&compare_end_date=2026-01-01`, `${RANGE}&compare_start_date=2024-01-01&compare_end_date=2025-01-14`,
    `${RANGE}&compare=last_year`, `${RANGE}&limit=1001`,
  ]) {
    const r = await api.get(q);
    t.equal(r.status, 400, q);
    t.match(r.json, { error: true, message: /^(compare|compare_start_date|compare_end_date|limit) must be / }, `${q}: names the parameter`);
  }
});
