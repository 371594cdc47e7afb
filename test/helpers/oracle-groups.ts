// An independent oracle for the dimension filters and the visibility report's groups: it computes from a
// list of events, never calling src/. Filters are applied to the events themselves (a run that does
// not match leaves the log), so the metric oracle (oracle-metrics.ts) computes the filtered bodies;
// the groups are counted here, run by run, by docs/metrics.md#breakdowns.
import type { Ev } from './events';
import { periodLabel, wilsonOracle } from './oracle-metrics';

export interface Filter { country?: string[]; persona?: string[]; model?: string[]; segment_ids?: string[] }

const byVersion = (a: Ev, b: Ev): number => (a.occurred_at < b.occurred_at ? -1 : a.occurred_at > b.occurred_at ? 1 : a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0);

/** The latest data of each entity of a type, by id (last writer wins), deletions marked. */
function latest(events: readonly Ev[], type: string, deleted?: string): Map<string, Record<string, unknown> & { deleted?: boolean }> {
  const out = new Map<string, Record<string, unknown> & { deleted?: boolean }>();
  for (const e of [...events].sort(byVersion)) {
    if (e.type === type) out.set(String(e.data.id), { ...e.data, deleted: false });
    else if (deleted && e.type === deleted) out.set(String(e.data.id), { ...(out.get(String(e.data.id)) ?? {}), deleted: true });
  }
  return out;
}

/** The events without the runs the filter leaves out (a run naming no value of a filtered dimension is out). */
export function filtered(events: readonly Ev[], f: Filter): Ev[] {
  const prompts = latest(events, 'prompt.upserted', 'prompt.deleted');
  const keep = (d: Record<string, unknown>): boolean => {
    for (const k of ['country', 'persona', 'model'] as const) if (f[k] && !f[k]!.includes(d[k] as string)) return false;
    if (f.segment_ids) {
      const segs = (prompts.get(String(d.prompt_id))?.segment_ids as string[] | undefined) ?? [];
      if (!segs.some((s) => f.segment_ids!.includes(s))) return false;
    }
    return true;
  };
  return events.filter((e) => e.type !== 'prompt_run.completed' || keep(e.data));
}

type Key = 'engine' | 'prompt' | 'segment' | 'country' | 'persona' | 'model' | 'day' | 'week' | 'month';

/** The visibility groups of the project's counted runs of start..end (after `f`), by `keys`. */
export function groupsOracle(events: readonly Ev[], projectId: string, start: string, end: string, keys: Key[], f: Filter = {}): unknown[] {
  const evs = filtered(events, f);
  const runs = latest(evs, 'prompt_run.completed');
  const prompts = latest(evs, 'prompt.upserted', 'prompt.deleted');
  const segments = latest(evs, 'segment.upserted', 'segment.deleted');
  const engines = latest(evs, 'engine.upserted');
  const groups = new Map<string, { values: Array<string | null>; runs: Array<{ position: number; sentiment: number | null } | null> }>();
  for (const r of runs.values()) {
    const day = new Date(String(r.completed_at)).toISOString().slice(0, 10);
    const p = prompts.get(String(r.prompt_id));
    if (r.status !== 'succeeded' || r.project_id !== projectId || day < start || day > end) continue;
    if (!p || p.deleted || p.project_id !== projectId || !engines.has(String(r.engine_id))) continue;
    const mentions = (r.mentions as Array<{ entity_type: string; position: number; sentiment?: number | null }>).filter((m) => m.entity_type === 'brand');
    const best = mentions.reduce<(typeof mentions)[number] | null>((b, m) => (b === null || m.position < b.position ? m : b), null);
    const valuesOf = (k: Key): Array<string | null> => {
      if (k === 'engine') return [String(r.engine_id)];
      if (k === 'prompt') return [String(r.prompt_id)];
      if (k === 'segment') {
        const live = (p.segment_ids as string[]).filter((s, i, all) => all.indexOf(s) === i && segments.get(s)?.active === true && !segments.get(s)?.deleted);
        return live.length ? live : [null];
      }
      if (k === 'day' || k === 'week' || k === 'month') return [periodLabel(day, k)];
      return [(r[k] as string | undefined) ?? null];
    };
    let combos: Array<Array<string | null>> = [[]];
    for (const k of keys) combos = combos.flatMap((c) => valuesOf(k).map((v) => [...c, v]));
    for (const values of combos) {
      const id = JSON.stringify(values);
      if (!groups.has(id)) groups.set(id, { values, runs: [] });
      groups.get(id)!.runs.push(best && { position: best.position, sentiment: best.sentiment ?? null });
    }
  }
  const label = (k: Key, v: string | null): string => {
    if (v === null) return '\uffff';
    if (k === 'engine') return `${String(engines.get(v)!.name)}\u0000${v}`;
    if (k === 'prompt') return `${String(prompts.get(v)!.text)}\u0000${v}`;
    if (k === 'segment') return `${String(segments.get(v)!.name)}\u0000${v}`;
    return v;
  };
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return [...groups.values()]
    .sort((a, b) => keys.reduce((c, k, i) => c || cmp(label(k, a.values[i]!), label(k, b.values[i]!)), 0))
    .map((g) => {
      const row: Record<string, unknown> = {};
      keys.forEach((k, i) => {
        const v = g.values[i]!;
        if (k === 'engine') Object.assign(row, { engine_id: v, engine_name: engines.get(v!)!.name });
        else if (k === 'prompt') Object.assign(row, { prompt_id: v, prompt_text: prompts.get(v!)!.text });
        else if (k === 'segment') Object.assign(row, { segment_id: v, segment_name: v === null ? null : segments.get(v)!.name });
        else if (k === 'day' || k === 'week' || k === 'month') row.period = v;
        else row[k] = v;
      });
      const hit = g.runs.filter((b): b is { position: number; sentiment: number | null } => b !== null);
      const felt = hit.filter((b) => b.sentiment !== null);
      const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
      return {
        ...row, run_count: g.runs.length, mention_count: hit.length, mention_rate: hit.length / g.runs.length,
        mention_rate_ci: wilsonOracle(hit.length, g.runs.length), average_rank: hit.length ? mean(hit.map((b) => b.position)) : null,
        sentiment: felt.length ? mean(felt.map((b) => b.sentiment!)) : null, score: 100 * mean(g.runs.map((b) => (b === null ? 0 : 1 / b.position))),
      };
    });
}
