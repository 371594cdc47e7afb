// A project's counted-run tallies per engine, prompt and country over a range of days, for the signals
// (src/readmodels/endpoints/signals.ts): what each slice's mention rates are summed from.
import { KEY_OF } from '../keys';
import type { ReadStore } from '../read-store';

/**
 * Read from the runs themselves (index runs_recent), not the roll-ups: a slice by country is not in
 * the roll-ups, and one read serves every slice. Grouped in SQL, so a range hands JS a few hundred
 * rows, not one per run.
 */
const IN_RANGE = `WHERE r.project = ${KEY_OF} AND r.completed_at >= ? AND r.completed_at < ? || 'U' AND r.status = 'succeeded'`;

/** A run's country (migration 015: its dims number's; '' when it names none). */
const COUNTRY = "coalesce((SELECT d.country FROM dims d WHERE d.n = r.dims), '')";

/** Per engine x prompt x country: the succeeded runs, and those naming the brand (facts[2], its best position, is not null). */
const RUN_TALLIES = `SELECT json_group_array(json_array(e, p, k, n, b)) FROM (
  SELECT r.facts ->> 0 AS e, r.facts ->> 1 AS p, ${COUNTRY} AS k, count(*) AS n, count(r.facts ->> 2) AS b FROM runs r ${IN_RANGE} GROUP BY 1, 2, 3)`;

/** Per engine x prompt x country x competitor: the succeeded runs naming the competitor (facts[6] lists each once). */
const HIT_TALLIES = `SELECT json_group_array(json_array(e, p, k, c, n)) FROM (
  SELECT r.facts ->> 0 AS e, r.facts ->> 1 AS p, ${COUNTRY} AS k, h.value ->> 0 AS c, count(*) AS n FROM runs r, json_each(r.facts, '$[6]') h ${IN_RANGE}
  GROUP BY 1, 2, 3, 4)`;

export type RunTally = [engineId: string, promptId: string, country: string, runs: number, brandMentioned: number];
export type HitTally = [engineId: string, promptId: string, country: string, competitorId: string, mentioned: number];

/**
 * The project's succeeded runs completed on start..end (inclusive), per engine x prompt x country
 * (runs, brand mentions; country '' when the run names none) and per engine x prompt x country x
 * competitor (mentions), every engine, prompt and
 * competitor named: the counting rule is the caller's.
 */
export function runTallies(store: ReadStore, projectId: string, start: string, end: string): { runs: RunTally[]; hits: HitTally[] } {
  return {
    runs: store.json<RunTally[]>(RUN_TALLIES, projectId, start, end),
    hits: store.json<HitTally[]>(HIT_TALLIES, projectId, start, end),
  };
}
