// GET /projects/:project_id/mentions — brand and competitor mentions as the analyser reported them, newest first.
import { uuidFrom } from '../../lib/ids';
import type { Endpoint } from '../endpoint';
import type { ReadArgs } from '../args';
import { dimsMatching, factsKey, recentRuns, storedMentions, type ReadStore } from '../store';
import { fetchCount, keysetPage, type Page } from '../paging';
import type { Mentions } from '../bodies.gen';
import { addDays } from '../../lib/time';
import { countingOf, counts } from '../counted-runs';
import { filterOf, filtersDims, requestedWindow } from '../windows';
import type { PromptRunCompleted } from '../../events';

/**
 * The feed walks succeeded runs newest first (store/reads/run-rows.ts recentRuns): not limited to the
 * window, the feed is a log. Rows are read lazily, those that do not count (counted-runs.ts counts)
 * are passed over, and the walk stops as soon as `limit` mentions are collected.
 */

/**
 * The feed's times when the request names a range (the window rule of windows.ts): the first instant
 * of its first day (UTC) and the one after its last; null: the whole feed, as in v1.
 */
function rangeParams(store: ReadStore, args: ReadArgs): [string, string] | null {
  if (args.startDate === null && args.endDate === null) return null;
  const w = requestedWindow(store, args, args.windowDays)!; // explicit: never null
  return [`${w.start}T00:00:00.000Z`, `${addDays(w.end, 1)}T00:00:00.000Z`];
}

type Mention = Mentions[number];

/**
 * A mention's place in the feed, the list's total order: its run's completed_at (newest first), the
 * run id, then its index in the run's answer. The cursor is the last mention's key, so mentions of runs
 * that complete meanwhile (newer) never shift a walk.
 */
type MentionKey = [completedAt: string, runId: string, index: number];

function isAfter(r: { id: string; completed_at: string }, idx: number, after: MentionKey | null): boolean {
  return after === null || r.completed_at !== after[0] || r.id !== after[1] || idx > after[2];
}

/** The first `limit` mentions after the cursor, and one more when there is one (it only says a next page exists). */
function readPage(store: ReadStore, args: ReadArgs): Page<Mention> {
  const filter = filterOf(args);
  const counting = countingOf(store, args.projectId, filter);
  // A filter on the dimensions: the dims numbers it matches (migration 015), decided per run before its event is parsed.
  const dims = filtersDims(filter) ? new Set(dimsMatching(store, args.projectId, filter.country, filter.persona, filter.model)) : null;
  const engines = args.engineIds === null ? null : new Set(args.engineIds);
  const after = args.cursor ? (args.cursor.after as MentionKey) : null;
  const days = rangeParams(store, args);
  const want = fetchCount(args.limit);
  const out: Mention[] = [];
  const keys = new Map<Mention, MentionKey>();
  // From the previous page's last run, that run included (its later mentions).
  for (const r of recentRuns(store, args.projectId, days, after ? [String(after[0]), String(after[1])] : null)) {
    const { engineId, promptId } = factsKey(r.facts); // whether it counts, before its event is parsed
    if (!counts(counting, engines, engineId, promptId) || (dims !== null && (r.dims === null || !dims.has(r.dims)))) continue;
    const run = (JSON.parse(r.event) as { data: PromptRunCompleted }).data;
    storedMentions(run.mentions).forEach((m, idx) => {
      if (out.length === want || (args.entityType && m.entity_type !== args.entityType) || !isAfter(r, idx, after)) return;
      const mention: Mention = {
        // A mention has no id upstream: a stable uuid named after its run and place in the answer.
        id: uuidFrom(`${r.id}/mention/${idx}`), prompt_run_id: r.id, run_group_id: run.run_group_id, prompt_id: run.prompt_id,
        engine_id: run.engine_id, entity_type: m.entity_type, competitor_id: m.competitor_id, name: m.name,
        position: m.position, sentiment: m.sentiment, snippet: m.snippet, observed_at: r.completed_at,
      };
      out.push(mention);
      keys.set(mention, [r.completed_at, r.id, idx]);
    });
    if (out.length === want) break;
  }
  return keysetPage(out, args.limit, (m) => keys.get(m)!);
}

export const endpoint: Endpoint = {
  name: 'mentions',
  path: '/projects/:project_id/mentions',
  summary: 'Brand and competitor mentions in AI answers, newest first',
  scope: 'project',
  params: ['engine_ids', 'limit-default-100', 'entity_type', 'start_date', 'end_date', 'country', 'persona', 'model', 'segment_ids', 'cursor'],
  schema: 'mentions',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): Mentions {
    return readPage(store, args).items;
  },
  page: readPage,
};
