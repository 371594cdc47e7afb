// GET /projects/:project_id/mentions — brand and competitor mentions as the analyser reported them, newest first.
import { uuidFrom } from '../../lib/ids';
import type { Endpoint } from '../endpoint';
import type { ReadArgs } from '../args';
import type { ReadStore } from '../store';
import { fetchCount, keysetPage, type Page } from '../paging';
import type { Mentions } from '../bodies.gen';
import { addDays } from '../../lib/time';
import { countingOf, counts, KEY_OF, requestedWindow } from '../formulas';
import type { PromptRunCompleted } from '../../events';
import { storedMentions } from '../../store/contributions';
import { factsKey } from '../../store';

/**
 * Succeeded runs, newest first, walking the runs_recent index (project, completed_at; the run id
 * orders runs of one instant): not limited to the window, the feed is a log. Rows are read lazily,
 * those that do not count (formulas.ts counts) are passed over, and the walk stops as soon as
 * `limit` mentions are collected.
 */
const RECENT_RUNS = `SELECT a.id, a.completed_at, a.facts, a.event FROM runs a WHERE a.project = ${KEY_OF} AND a.status = 'succeeded'`;
const NEWEST_FIRST = ' ORDER BY a.completed_at DESC, a.id';

/** With start_date / end_date: runs completed on those days (UTC). Binds the first instant and the one after the last day. */
const IN_DAYS = ' AND a.completed_at >= ? AND a.completed_at < ?';

/** The feed's days when the request names a range (the window rule of formulas.ts); null: the whole feed, as in v1. */
function rangeParams(store: ReadStore, args: ReadArgs): string[] | null {
  if (args.startDate === null && args.endDate === null) return null;
  const w = requestedWindow(store, args, args.windowDays)!; // explicit: never null
  return [`${w.start}T00:00:00.000Z`, `${addDays(w.end, 1)}T00:00:00.000Z`];
}

/** Keyset: runs after the previous page's last run in NEWEST_FIRST order, that run included (its later mentions). */
const FROM_RUN = ' AND (a.completed_at < ? OR (a.completed_at = ? AND a.id >= ?))';

interface RunRow { id: string; completed_at: string; facts: string; event: string }
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
  const counting = countingOf(store, args.projectId);
  const engines = args.engineIds === null ? null : new Set(args.engineIds);
  const after = args.cursor ? (args.cursor.after as MentionKey) : null;
  const days = rangeParams(store, args);
  const sql = RECENT_RUNS + (days ? IN_DAYS : '') + (after ? FROM_RUN : '') + NEWEST_FIRST;
  const params = [args.projectId, ...(days ?? []), ...(after ? [String(after[0]), String(after[0]), String(after[1])] : [])];
  const want = fetchCount(args.limit);
  const out: Mention[] = [];
  const keys = new Map<Mention, MentionKey>();
  for (const r of store.iterate<RunRow>(sql, ...params)) {
    const [engineId, promptId] = factsKey(r.facts); // whether it counts, before its event is parsed
    if (!counts(counting, engines, engineId, promptId)) continue;
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
  params: ['engine_ids', 'limit-default-100', 'entity_type', 'start_date', 'end_date', 'cursor'],
  schema: 'mentions',
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): Mentions {
    return readPage(store, args).items;
  },
  page: readPage,
};
