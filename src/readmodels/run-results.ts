import type { RunResults } from './bodies.gen';
import type { Endpoint } from './endpoint';

/**
 * The rows of ONE run group, read by index: its prompt runs, then their mentions and citations.
 * A deleted prompt keeps its text (the run happened); a prompt never seen gives null.
 */
const RESULTS = `SELECT r.id AS prompt_run_id, r.prompt_id, p.text AS prompt_text, r.engine_id, r.status, r.completed_at,
    r.response_excerpt, r.brand_position, r.brand_sentiment AS sentiment
  FROM prompt_runs r LEFT JOIN prompts p ON p.id = r.prompt_id
  WHERE r.run_group_id = ?
  ORDER BY r.completed_at, r.id`;

const MENTIONS = `SELECT m.prompt_run_id, m.entity_type, m.competitor_id, m.name, m.position, m.sentiment, m.snippet
  FROM prompt_runs r JOIN run_mentions m ON m.prompt_run_id = r.id
  WHERE r.run_group_id = ?
  ORDER BY m.prompt_run_id, m.idx`;

const CITATIONS = `SELECT c.prompt_run_id, c.url, c.domain, c.title, c.position
  FROM prompt_runs r JOIN run_citations c ON c.prompt_run_id = r.id
  WHERE r.run_group_id = ?
  ORDER BY c.prompt_run_id, c.idx`;

type Result = RunResults[number];
type ResultRow = Omit<Result, 'brand_mentioned' | 'mentions' | 'citations'>;
type Mention = Result['mentions'][number];
type Citation = Result['citations'][number];
type OfRun<T> = T & { prompt_run_id: string };

/** Rows already ordered by run then idx, grouped per run; each item keeps only the schema's fields. */
function byRun<T>(rows: Array<OfRun<T>>, pick: (r: OfRun<T>) => T): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    let list = out.get(r.prompt_run_id);
    if (!list) out.set(r.prompt_run_id, (list = []));
    list.push(pick(r));
  }
  return out;
}

export const endpoint: Endpoint = {
  name: 'run-results',
  path: '/runs/:run_group_id/results',
  summary: 'Every prompt run of a run group with its mentions and citations',
  scope: 'run_group',
  query: {},
  schema: 'run-results',
  build(store, args): RunResults {
    const mentions = byRun<Mention>(store.all(MENTIONS, args.runGroupId), (m) => ({
      entity_type: m.entity_type, competitor_id: m.competitor_id, name: m.name, position: m.position,
      sentiment: m.sentiment, snippet: m.snippet,
    }));
    const citations = byRun<Citation>(store.all(CITATIONS, args.runGroupId), (c) => ({
      url: c.url, domain: c.domain, title: c.title, position: c.position,
    }));
    return store.all<ResultRow>(RESULTS, args.runGroupId).map((r) => ({
      prompt_run_id: r.prompt_run_id, prompt_id: r.prompt_id, prompt_text: r.prompt_text, engine_id: r.engine_id,
      status: r.status, completed_at: r.completed_at, response_excerpt: r.response_excerpt,
      brand_mentioned: r.brand_position !== null, brand_position: r.brand_position, sentiment: r.sentiment,
      mentions: mentions.get(r.prompt_run_id) ?? [], citations: citations.get(r.prompt_run_id) ?? [],
    }));
  },
};
