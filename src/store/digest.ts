import { createHash } from 'node:crypto';
import type { Db } from './db';

/**
 * What the read models show of a stored run's event: its excerpt, and its mentions and citations with
 * every field present (null where absent) and in order, but not the citations' domains (made from the
 * URL): a run stored from its event and one migrated from older columns are the same data.
 */
const RUN_DATA = `event ->> '$.data.response_excerpt',
  (SELECT json_group_array(json_array(m.value ->> 'entity_type', m.value ->> 'competitor_id', m.value ->> 'name', m.value -> 'position', m.value -> 'sentiment', m.value ->> 'snippet') ORDER BY m.key)
    FROM json_each(event, '$.data.mentions') m),
  (SELECT json_group_array(json_array(c.value ->> 'url', c.value ->> 'title', c.value -> 'position') ORDER BY c.key) FROM json_each(event, '$.data.citations') c)`;

/** slice_days or slice_hits (migration 022) with the ids and dimension values of their numbers. */
const SLICE = (table: string): string => `${table} s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine JOIN keys q ON q.n = s.prompt
  LEFT JOIN dims d ON d.n = s.dims`;
const SLICE_KEY = 'p.id, s.day, e.id, q.id, d.country, d.persona, d.model, d.surface';
const SLICE_SUMS = 's.position_sum, s.rr_fixed, s.sentiment_fixed, s.sentiment_n';
/** slice_months or slice_month_hits (migration 023) with the ids of their numbers. */
const MONTHS = (table: string): string => `${table} s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine JOIN keys q ON q.n = s.prompt`;
const MONTH_KEY = 'p.id, s.month, e.id, q.id, s.country';
const DIMS_VALUES = 'd.country, d.persona, d.model, d.surface';
/** slice_values or slice_value_months (migration 026) with the ids of their numbers. */
const VALUES = (table: string): string => `${table} s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine`;
const VALUE_KEY = (period: string): string => `p.id, s.dimension, s.${period}, e.id, s.value`;

/**
 * The read-model data, table by table: what a client can see, never versions, positions, dead
 * letters or data_version counters (those depend on batching). Equal data gives an equal digest.
 */
export const DIGEST_TABLES: ReadonlyArray<{ table: string; columns: string; order: string }> = [
  { table: 'accounts', columns: 'id, name', order: 'id' },
  { table: 'api_keys', columns: 'key_id, account_id, key_sha256, label, issued_at, revoked_at', order: 'key_id' },
  { table: 'projects', columns: 'id, company_id, name, domain, description, category_summary, status, created_at, updated_at, deleted', order: 'id' },
  { table: 'project_access', columns: 'project_id, account_id, granted', order: 'project_id, account_id' },
  { table: 'engines', columns: 'id, name, provider, model', order: 'id' },
  { table: 'project_engines', columns: 'project_id, engine_id, tracked, since', order: 'project_id, engine_id' },
  { table: 'terms', columns: 'id, project_id, value, kind, created_at, deleted', order: 'id' },
  { table: 'segments', columns: 'id, project_id, name, description, active, created_at, updated_at, deleted', order: 'id' },
  { table: 'prompts', columns: 'id, project_id, text, segment_ids, active, created_at, updated_at, deleted', order: 'id' },
  { table: 'prompt_segments', columns: '*', order: 'prompt_id, segment_id' },
  { table: 'competitors', columns: 'id, project_id, name, domain, aliases, created_at, updated_at, deleted', order: 'id' },
  { table: 'run_groups', columns: 'id, project_id, trigger, started_at, completed_at, status', order: 'id' },
  // A run's event as the API shows it (its envelope the newest version's, whatever the order of retries): RUN_DATA.
  { table: 'prompt_runs', columns: `id, run_group_id, project_id, prompt_id, engine_id, status, completed_at, day, brand_position, brand_sentiment, mention_count, citation_count, country, persona, model, surface, ${RUN_DATA}`, order: 'id' },
  { table: 'forum_posts', columns: 'id, project_id, platform, url, title, community, author, posted_at, discovered_at, matched_terms', order: 'id' },
  { table: 'forum_post_fields', columns: 'post_id, field, value', order: 'post_id, field' },
  { table: 'agg_prompt_week', columns: '*', order: 'project_id, day, engine_id, prompt_id' },
  { table: 'agg_prompt_month', columns: '*', order: 'project_id, day, engine_id, prompt_id' },
  { table: 'agg_competitor_week', columns: '*', order: 'project_id, day, engine_id, prompt_id, competitor_id' },
  { table: 'agg_competitor_month', columns: '*', order: 'project_id, day, engine_id, prompt_id, competitor_id' },
  { table: 'agg_engine_day', columns: '*', order: 'project_id, day, engine_id' },
  { table: 'agg_cited_week', columns: '*', order: 'project_id, day, url' },
  { table: 'agg_cited_month', columns: '*', order: 'project_id, day, url' },
  { table: 'agg_cited_engine_week', columns: '*', order: 'project_id, day, url, engine_id' },
  { table: 'agg_cited_engine_month', columns: '*', order: 'project_id, day, url, engine_id' },
  { table: 'agg_run_group', columns: '*', order: 'run_group_id, project_id' },
  // By ids and values, not the numbers (keys, dims) the rows are keyed by: those depend on what was seen first.
  { table: SLICE('slice_days'), columns: `${SLICE_KEY}, s.runs, s.brand_runs, ${SLICE_SUMS}`, order: SLICE_KEY },
  { table: `${SLICE('slice_hits')} JOIN keys c ON c.n = s.competitor`, columns: `${SLICE_KEY}, c.id, s.runs, ${SLICE_SUMS}`, order: `${SLICE_KEY}, c.id` },
  { table: MONTHS('slice_months'), columns: `${MONTH_KEY}, s.runs, s.brand_runs, ${SLICE_SUMS}`, order: MONTH_KEY },
  { table: `${MONTHS('slice_month_hits')} JOIN keys c ON c.n = s.competitor`, columns: `${MONTH_KEY}, c.id, s.runs, ${SLICE_SUMS}`, order: `${MONTH_KEY}, c.id` },
  // slice_dims, slice_pairs, slice_pair_dims (migration 024): their runs by ids and dimension values.
  { table: 'slice_dims s JOIN keys p ON p.n = s.project JOIN dims d ON d.n = s.dims', columns: `p.id, ${DIMS_VALUES}, s.runs`, order: `p.id, ${DIMS_VALUES}` },
  { table: MONTHS('slice_pairs'), columns: 'p.id, e.id, q.id, s.runs', order: 'p.id, e.id, q.id' },
  { table: `${MONTHS('slice_pair_dims')} JOIN dims d ON d.n = s.dims`, columns: `p.id, e.id, q.id, ${DIMS_VALUES}, s.runs`, order: `p.id, e.id, q.id, ${DIMS_VALUES}` },
  { table: `range_totals s JOIN keys p ON p.n = s.project JOIN keys e ON e.n = s.engine JOIN keys q ON q.n = s.prompt`,
    columns: `p.id, e.id, q.id, s.day, s.runs, s.brand_runs, ${SLICE_SUMS}`, order: 'p.id, e.id, q.id, s.day' },
  { table: `range_hit_totals s JOIN keys p ON p.n = s.project JOIN keys q ON q.n = s.prompt JOIN keys c ON c.n = s.competitor`,
    columns: `p.id, q.id, c.id, s.day, s.runs, ${SLICE_SUMS}`, order: 'p.id, q.id, c.id, s.day' },
  { table: VALUES('slice_values'), columns: `${VALUE_KEY('day')}, s.runs, s.brand_runs, ${SLICE_SUMS}`, order: VALUE_KEY('day') },
  { table: VALUES('slice_value_months'), columns: `${VALUE_KEY('month')}, s.runs, s.brand_runs, ${SLICE_SUMS}`, order: VALUE_KEY('month') },
];

export function digest(db: Db): string {
  const hash = createHash('sha256');
  for (const t of DIGEST_TABLES) {
    hash.update(`\n#${t.table}\n`);
    const rows = db.prepare(`SELECT ${t.columns} FROM ${t.table} ORDER BY ${t.order}`).raw().iterate() as Iterable<unknown[]>;
    for (const row of rows) hash.update(JSON.stringify(row) + '\n');
  }
  return hash.digest('hex');
}
