// GET /projects/:project_id/dimensions — what the runs' dimensions filters can be given.
import type { Dimensions } from '../bodies.gen';
import type { Endpoint } from '../endpoint';
import { countingOf } from '../counted-runs';
import { compareStrings, dimsByNumber, dimsRunCounts } from '../store';

/**
 * The countries, personas, models and surfaces the project's counted runs name, each with its runs.
 * The runs are counted per dims number in SQL from their totals over every day (migration 024), of the counted engines
 * and prompts only (the counting rule, counted-runs.ts), so a dims number's runs add to each value it names.
 */
export const endpoint: Endpoint = {
  name: 'dimensions',
  path: '/projects/:project_id/dimensions',
  summary: 'The countries, personas, models and surfaces the project\'s counted runs name, each with its number of runs',
  scope: 'project',
  params: [],
  schema: 'dimensions',
  // Runs (their dimensions), setup (deleted prompts leave the count), engines (a known engine's runs count).
  dependsOn: ['runs', 'setup', 'engines'],
  build(store, args): Dimensions {
    const counting = countingOf(store, args.projectId);
    const dims = dimsByNumber(store, args.projectId);
    const tallies = [new Map<string, number>(), new Map<string, number>(), new Map<string, number>(), new Map<string, number>()];
    for (const [n, runs] of dimsRunCounts(store, args.projectId, [...counting.engines], [...counting.prompts])) {
      const values = dims.get(n);
      if (!values) continue;
      values.forEach((v, i) => {
        if (v !== null) tallies[i]!.set(v, (tallies[i]!.get(v) ?? 0) + runs);
      });
    }
    const list = <K extends string>(i: number, key: K): Array<Record<K, string> & { run_count: number }> => [...tallies[i]!]
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([v, run_count]) => ({ [key]: v, run_count }) as Record<K, string> & { run_count: number });
    return {
      project_id: args.projectId, countries: list(0, 'country'), personas: list(1, 'persona'), models: list(2, 'model'),
      surfaces: list(3, 'surface') as Dimensions['surfaces'],
    };
  },
};
