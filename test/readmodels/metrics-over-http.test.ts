// Metric values through HTTP on a small world, against figures worked out by hand.
import t from 'tap';
import { request, startApi, withKey } from '../helpers/http';
import { asSource, run, W, world } from '../helpers/events';
import { tmpDb } from '../helpers/db';

interface Report {
  window_start: string; window_end: string; current_score: number | null; mention_rate: number; average_rank: number | null;
  sentiment: number | null; share_of_voice: number | null; prompt_count: number; run_count: number;
  engine_breakdown: Array<{ engine_id: string; run_count: number; mention_rate: number; score: number }>;
}

/**
 * Day 2026-01-05, prompt1 on engine A: brand at 1 (sentiment 0.5), brand at 4 (sentiment -0.1) with the
 * competitor at 2, and no brand. Prompt2 on engine B: brand at 2 (no sentiment) with the competitor at 1.
 */
function events() {
  return [
    ...world(),
    run({ n: 1, engine: W.engineA, brand: 1, sentiment: 0.5 }),
    run({ n: 2, engine: W.engineA, brand: 4, sentiment: -0.1, competitor: 2 }),
    run({ n: 3, engine: W.engineA, brand: null }),
    run({ n: 4, engine: W.engineB, prompt: W.prompt2, brand: 2, competitor: 1 }),
    run({ n: 5, engine: W.engineB, prompt: W.prompt2, status: 'failed' }),
  ];
}

async function visibility(evs: ReturnType<typeof events>, query = ''): Promise<Report> {
  const { db, projector } = tmpDb();
  projector.applyBatch(asSource(evs));
  const api = await startApi({ db });
  try {
    return (await request(`${api.base}/projects/${W.project}/visibility${query}`, withKey(W.key))).json as Report;
  } finally {
    await api.close();
    db.close();
  }
}

t.test('the visibility report over HTTP equals the figures worked out by hand', async (t) => {
  const r = await visibility(events());
  t.equal(r.window_end, '2026-01-05');
  t.equal(r.window_start, '2025-12-30', 'seven days ending with the latest run day');
  t.equal(r.run_count, 4, 'the failed run does not count');
  t.equal(r.prompt_count, 2);
  t.equal(r.mention_rate, 3 / 4, 'brand in runs 1, 2 and 4');
  t.equal(r.average_rank, (1 + 4 + 2) / 3);
  t.equal(r.sentiment, (0.5 - 0.1) / 2, 'run 4 carries no sentiment');
  t.equal(r.current_score, (100 * (1 + 0.25 + 0 + 0.5)) / 4, 'mean reciprocal rank as a percentage');
  t.equal(r.share_of_voice, 3 / (3 + 2), 'brand in 3 runs, the competitor in 2');
  const a = r.engine_breakdown.find((e) => e.engine_id === W.engineA)!;
  t.same([a.run_count, a.mention_rate, a.score], [3, 2 / 3, (100 * 1.25) / 3]);
});

t.test('engine_ids is exact: the filtered report equals the report of a world with only those engines', async (t) => {
  const filtered = await visibility(events(), `?engine_ids=${W.engineA}`);
  const onlyA = await visibility(events().filter((e) => e.type !== 'prompt_run.completed' || e.data.engine_id === W.engineA));
  for (const k of ['current_score', 'mention_rate', 'average_rank', 'sentiment', 'share_of_voice', 'prompt_count', 'run_count', 'window_start', 'window_end'] as const) {
    t.equal(filtered[k], onlyA[k], k);
  }
  t.same(filtered.engine_breakdown, onlyA.engine_breakdown);
  t.equal(filtered.run_count, 3);
});
