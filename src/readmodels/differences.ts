// Differences of two rates: the interval of a difference, its p-value, and the false
// discovery rate across many of them. Arithmetic on counts the read models already summed; every
// formula is stated in docs/metrics.md ("Comparing two periods", "Signals").
import { wilson, Z95, type Interval } from './store';

/** A difference of two proportions, current - previous, with its 95 % interval. */
export interface Difference {
  delta: number;
  low: number;
  high: number;
}

/**
 * Newcombe's hybrid score interval (1998, method 10) of p1 - p2 for x1 of n1 and x2 of n2, built on
 * the two Wilson intervals the API already serves (z = Z95):
 *   low  = d - sqrt((p1 - l1)^2 + (u2 - p2)^2)
 *   high = d + sqrt((u1 - p1)^2 + (p2 - l2)^2)
 * It stays inside [-1, 1] and keeps its coverage near 0 and 1, where the Wald interval does not.
 * Null when either side measured nothing (n = 0).
 */
export function newcombe(x1: number, n1: number, x2: number, n2: number): Difference | null {
  const w1 = wilson(x1, n1);
  const w2 = wilson(x2, n2);
  if (!w1 || !w2) return null;
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const delta = p1 - p2;
  return {
    delta,
    low: delta - Math.hypot(p1 - w1.low, w2.high - p2),
    high: delta + Math.hypot(w1.high - p1, p2 - w2.low),
  };
}

/** Whether a difference's interval excludes 0 (what `significant` says of one comparison). */
export const excludesZero = (d: Difference): boolean => d.low > 0 || d.high < 0;

/**
 * Two-sided p-value of the pooled two-proportion z-test (the score test) of p1 = p2:
 *   z = (p1 - p2) / sqrt(p (1 - p) (1/n1 + 1/n2)), p = (x1 + x2) / (n1 + n2), P = erfc(|z| / sqrt 2).
 * 1 when the pooled rate is 0 or 1 (both sides all-or-nothing alike: no evidence of a difference);
 * null when either side measured nothing.
 */
export function twoProportionP(x1: number, n1: number, x2: number, n2: number): number | null {
  if (n1 === 0 || n2 === 0) return null;
  const pooled = (x1 + x2) / (n1 + n2);
  const variance = pooled * (1 - pooled) * (1 / n1 + 1 / n2);
  if (variance === 0) return 1;
  const z = (x1 / n1 - x2 / n2) / Math.sqrt(variance);
  return Math.min(1, erfc(Math.abs(z) / Math.SQRT2));
}

/**
 * Benjamini-Hochberg adjusted p-values (q-values), in the order given: q_(i) = min over j >= i of
 * p_(j) m / j for the p-values sorted ascending, at most 1. Rejecting every q <= alpha controls the
 * false discovery rate at alpha across the m tests (independent or positively dependent tests).
 */
export function benjaminiHochberg(pValues: readonly number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((_, i) => i).sort((a, b) => pValues[a] - pValues[b] || a - b);
  const q = new Array<number>(m);
  let running = 1;
  for (let rank = m; rank >= 1; rank--) {
    const i = order[rank - 1];
    running = Math.min(running, (pValues[i] * m) / rank);
    q[i] = running;
  }
  return q;
}

/** The false discovery rate signals are controlled at. */
export const FALSE_DISCOVERY_RATE = 0.05;

/**
 * erfc(x) for x >= 0 to about 1e-15 relative: 1 - erf(x) from erf's series of positive terms
 * (2/sqrt(pi)) e^-x^2 sum x^(2n+1) 2^n / (1 3 5 ... (2n+1)) below 2, where erfc >= 4.7e-3 so the
 * subtraction costs at most 3 digits; from 2 up, the continued fraction of erfc (modified Lentz).
 */
export function erfc(x: number): number {
  if (x < 2) {
    let term = x;
    let sum = x;
    for (let n = 1; term > sum * 1e-17; n++) {
      term *= (2 * x * x) / (2 * n + 1);
      sum += term;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * Math.exp(-x * x) * sum;
  }
  // erfc(x) = e^-x^2 / sqrt(pi) * 1 / (x + (1/2) / (x + 1 / (x + (3/2) / (x + 2 / (x + ...)))))
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let k = 1; k < 500; k++) {
    const a = k / 2;
    d = x + a * d;
    d = d === 0 ? tiny : 1 / d;
    c = x + a / c;
    if (c === 0) c = tiny;
    const step = c * d;
    f *= step;
    if (Math.abs(step - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
}

/** What a rate's `_change` says (docs/metrics.md "Comparing two periods"). */
export interface RateChange {
  previous: number | null;
  previous_ci: Interval | null;
  delta: number | null;
  delta_ci: Interval | null;
  significant: boolean;
}

/** The change of a rate x1/n1 (now) against x2/n2 (before); deltas null when either side has n = 0. */
export function rateChange(x1: number, n1: number, x2: number, n2: number): RateChange {
  const d = newcombe(x1, n1, x2, n2);
  return {
    previous: n2 === 0 ? null : x2 / n2,
    previous_ci: wilson(x2, n2),
    delta: d && d.delta,
    delta_ci: d && { low: d.low, high: d.high },
    significant: d !== null && excludesZero(d),
  };
}

export { Z95 };
