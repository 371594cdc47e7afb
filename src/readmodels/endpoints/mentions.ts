// GET /projects/:project_id/mentions — brand and competitor mentions as the analyser reported them, newest first.
import { uuidFrom } from '../../lib/ids';
import type { Endpoint } from '../endpoint';
import type { Mentions } from '../bodies.gen';
import { COUNTED_RUNS_JOIN, engineFilter } from '../formulas';

/**
 * Succeeded runs whose prompt counts (COUNTED_RUNS_JOIN), newest first, walking the
 * prompt_runs_recent index (project_id, completed_at DESC, id): not limited to the window, the feed
 * is a log. Rows are read lazily and the walk stops as soon as `limit` mentions are collected.
 */
const RECENT_RUNS = `SELECT a.id, a.run_group_id, a.prompt_id, a.engine_id, a.completed_at, a.mentions
  FROM prompt_runs a ${COUNTED_RUNS_JOIN}
  WHERE a.project_id = ? AND a.status = 'succeeded'`;
const NEWEST_FIRST = ' ORDER BY a.completed_at DESC, a.id';

interface RunRow { id: string; run_group_id: string; prompt_id: string; engine_id: string; completed_at: string; mentions: string }
type StoredMention = Omit<Mentions[number], 'id' | 'prompt_run_id' | 'run_group_id' | 'prompt_id' | 'engine_id' | 'observed_at'>;

export const endpoint: Endpoint = {
  name: 'mentions',
  path: '/projects/:project_id/mentions',
  summary: 'Brand and competitor mentions in AI answers, newest first',
  scope: 'project',
  query: { engineIds: true, entityType: true, limit: { default: 100, max: 1000 } },
  schema: 'mentions',
  build(store, args): Mentions {
    const f = engineFilter(args.engineIds);
    const out: Mentions = [];
    for (const r of store.iterate<RunRow>(RECENT_RUNS + f.sql + NEWEST_FIRST, args.projectId, ...f.params)) {
      (JSON.parse(r.mentions) as StoredMention[]).forEach((m, idx) => {
        if (out.length >= args.limit || (args.entityType && m.entity_type !== args.entityType)) return;
        out.push({
          // A mention has no id upstream: a stable uuid named after its run and place in the answer.
          id: uuidFrom(`${r.id}/mention/${idx}`), prompt_run_id: r.id, run_group_id: r.run_group_id, prompt_id: r.prompt_id,
          engine_id: r.engine_id, entity_type: m.entity_type, competitor_id: m.competitor_id, name: m.name,
          position: m.position, sentiment: m.sentiment, snippet: m.snippet, observed_at: r.completed_at,
        });
      });
      if (out.length >= args.limit) break;
    }
    return out;
  },
};
