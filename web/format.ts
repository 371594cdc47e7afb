// How the dashboard writes the API's numbers in its tables. Pure functions (no DOM): the browser
// test formats the API's own answer with them and compares cell by cell.

/** A share of runs (0..1) as a percentage with one decimal; a dash for none. */
export function pct(v: number | null | undefined): string {
  return v === null || v === undefined ? '–' : `${(v * 100).toFixed(1)} %`;
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
