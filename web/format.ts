// How the dashboard writes the API's numbers in its tables. Pure functions (no DOM): the browser
// test formats the API's own answer with them and compares cell by cell.
import type { components } from '../clients/typescript/src/index';

/** A share of runs (0..1) as a percentage with one decimal; a dash for none. */
export function pct(v: number | null | undefined): string {
  return v === null || v === undefined ? '–' : `${(v * 100).toFixed(1)} %`;
}

/** A share as a short percentage: 0.05 -> "5 %", 0.125 -> "12.5 %". */
export function share(v: number): string {
  return `${Number((v * 100).toFixed(1))} %`;
}

/** A 95 % interval of a share, as "low – high"; a dash when the API has none (n = 0). */
export function interval(ci: { low: number; high: number } | null | undefined): string {
  return ci ? `${(ci.low * 100).toFixed(1)}–${(ci.high * 100).toFixed(1)} %` : '–';
}

/** A score, an average position or a sentiment, to `digits` decimals; a dash for none. */
export function fixed(v: number | null | undefined, digits: number): string {
  return v === null || v === undefined ? '–' : v.toFixed(digits);
}

/** A count as the API sends it. */
export function count(v: number | null | undefined): string {
  return v === null || v === undefined ? '–' : String(v);
}

/** The date part of an ISO timestamp. */
export function day(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 10) : '–';
}

/** A difference of two shares (-1..1) in percentage points, signed, one decimal ("+4.2", "−0.8", "0.0"). */
export function points(v: number): string {
  const s = (Math.abs(v) * 100).toFixed(1);
  if (s === '0.0') return s;
  return `${v < 0 ? '−' : '+'}${s}`;
}

/** A difference with its 95 % interval: "+4.2 pts [+1.1, +7.3]"; a dash when the API has none (n = 0 on a side). */
export function delta(d: number | null | undefined, ci: { low: number; high: number } | null | undefined): string {
  if (d === null || d === undefined) return '–';
  return `${points(d)} pts` + (ci ? ` [${points(ci.low)}, ${points(ci.high)}]` : '');
}

/** The `R_change` sibling of a rate when a comparison is asked for (docs/metrics.md), as the generated client types it. */
export type RateChange = components['schemas']['RateChange'];

/** Whether a change is significant, and which way, in words (the page's colour only repeats it). */
export function verdict(c: Pick<RateChange, 'delta' | 'significant'>): 'up' | 'down' | 'not significant' {
  if (!c.significant || c.delta === null) return 'not significant';
  return c.delta > 0 ? 'up' : 'down';
}

/** A change as a table cell shows it: "+4.2 pts [+1.1, +7.3] ▲ significant", "… not significant". */
export function change(c: RateChange | null | undefined): string {
  if (!c || c.delta === null) return '–';
  const v = verdict(c);
  const mark = v === 'up' ? ' ▲ significant' : v === 'down' ? ' ▼ significant' : ' not significant';
  return delta(c.delta, c.delta_ci) + mark;
}

/** A q-value (or p-value): three decimals, "< 0.001" below that. */
export function qValue(q: number | null | undefined): string {
  if (q === null || q === undefined) return '–';
  return q < 0.001 ? '< 0.001' : q.toFixed(3);
}

/** A slice of runs: its engine, segment and country, named; "all runs" for the whole project. */
export function slice(s: { engine_name?: string | null; segment_name?: string | null; country?: string | null }): string {
  const parts = [s.engine_name, s.segment_name, s.country].filter((p): p is string => typeof p === 'string' && p !== '');
  return parts.length > 0 ? parts.join(' · ') : 'all runs';
}
