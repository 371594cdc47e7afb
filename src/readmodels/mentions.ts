// GET /projects/:project_id/mentions — brand and competitor mentions as the analyser reported them, newest first.
import type { Endpoint } from './endpoint';
import type { Mentions } from './bodies.gen';
import { COUNTED_RUNS_JOIN, engineFilter } from './metrics';

/**
 * Every mention of a succeeded run whose prompt counts (COUNTED_RUNS_JOIN), not limited to the window:
 * the feed is a log. Walks the run_mentions_recent index (project_id, observed_at DESC, id), so the
 * LIMIT stops the scan early. The entity type parameter is bound twice; null means both types.
 */
const MENTIONS = `SELECT a.id, a.prompt_run_id, a.run_group_id, a.prompt_id, a.engine_id, a.entity_type, a.competitor_id,
    a.name, a.position, a.sentiment, a.snippet, a.observed_at
  FROM run_mentions a ${COUNTED_RUNS_JOIN}
  WHERE a.project_id = ? AND a.run_status = 'succeeded' AND (? IS NULL OR a.entity_type = ?)`;
const NEWEST_FIRST = ' ORDER BY a.observed_at DESC, a.id LIMIT ?';

export const endpoint: Endpoint = {
  name: 'mentions',
  path: '/projects/:project_id/mentions',
  summary: 'Brand and competitor mentions in AI answers, newest first',
  scope: 'project',
  query: { engineIds: true, entityType: true, limit: { default: 100, max: 1000 } },
  schema: 'mentions',
  build(store, args): Mentions {
    const f = engineFilter(args.engineIds);
    return store.all<Mentions[number]>(MENTIONS + f.sql + NEWEST_FIRST,
      args.projectId, args.entityType, args.entityType, ...f.params, args.limit);
  },
};
