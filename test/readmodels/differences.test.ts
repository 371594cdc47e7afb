// Differences of two rates (src/readmodels/differences.ts) against values computed
// independently with statsmodels 0.15 / scipy 1.17 (Python): confint_proportions_2indep(method='newcomb',
// compare='diff'), proportions_ztest (pooled), multipletests(method='fdr_bh'), scipy.special.erfc.
// statsmodels takes z = 1.959963984540054 where the API states 1.959964 (docs/metrics.md): the
// intervals agree to ~1e-8, so they are compared to 1e-7; everything else to 1e-12 relative.
import t from 'tap';
import { benjaminiHochberg, erfc, newcombe, rateChange, twoProportionP } from '../../src/readmodels/differences';

/** x1, n1, x2, n2, Newcombe low, high, pooled z-test two-sided p (null: the pooled rate is 0 or 1). */
const CASES: Array<[number, number, number, number, number, number, number | null]> = [
  [56, 70, 48, 80, 0.05243147240236498, 0.33387265403690614, 0.00804508136819656],   // docs/metrics.md's worked example
  [9, 10, 3, 10, 0.1705227239345029, 0.809017973535488, 0.006169899320544151],
  [0, 10, 0, 20, -0.1611251580528194, 0.27753279986288926, null],
  [10, 10, 0, 10, 0.6075093504305241, 1.0, 7.74421643104407e-6],
  [5, 12, 5, 12, -0.34570573789674663, 0.34570573789674663, 1.0],
  [130, 1000, 100, 1000, 0.0020023487152830075, 0.05807048502220285, 0.03548845046647471],
  [1, 400, 0, 380, -0.007717451706701581, 0.014023285075823394, 0.32940907513844764],
  [40, 50, 45, 50, -0.24209715781408725, 0.04343178591209204, 0.16142946236708322],
];

const near = (a: number, b: number, abs: number): boolean => Math.abs(a - b) <= abs;
const rel = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(b), 1e-300);

t.test('newcombe: the hybrid score interval of statsmodels', (tt) => {
  for (const [x1, n1, x2, n2, low, high] of CASES) {
    const d = newcombe(x1, n1, x2, n2)!;
    tt.ok(rel(d.delta, x1 / n1 - x2 / n2), `${x1}/${n1} - ${x2}/${n2}: delta`);
    tt.ok(near(d.low, low, 1e-7) && near(d.high, high, 1e-7), `${x1}/${n1} - ${x2}/${n2}: [${d.low}, ${d.high}] is [${low}, ${high}]`);
    tt.ok(d.low <= d.delta && d.delta <= d.high && d.low >= -1 && d.high <= 1, 'low <= delta <= high inside [-1, 1]');
  }
  tt.equal(newcombe(3, 0, 1, 4), null, 'nothing measured now: no interval');
  tt.equal(newcombe(3, 5, 0, 0), null, 'nothing measured before: no interval');
  tt.end();
});

t.test('twoProportionP: the pooled z-test of statsmodels', (tt) => {
  for (const [x1, n1, x2, n2, , , p] of CASES) {
    const got = twoProportionP(x1, n1, x2, n2);
    if (p === null) tt.equal(got, 1, `${x1}/${n1} vs ${x2}/${n2}: all-or-nothing alike is no evidence (p = 1)`);
    else tt.ok(got !== null && rel(got, p) || near(got ?? NaN, p, 1e-15), `${x1}/${n1} vs ${x2}/${n2}: ${got} is ${p}`);
  }
  tt.equal(twoProportionP(1, 0, 1, 2), null, 'n = 0: no test');
  tt.end();
});

t.test('benjaminiHochberg: the fdr_bh adjusted p-values, in the order given', (tt) => {
  const p = [0.01, 0.04, 0.03, 0.005, 0.2, 0.0001, 0.049, 0.5];
  const expected = [0.02666666666666667, 0.064, 0.06, 0.02, 0.2285714285714286, 0.0008, 0.06533333333333334, 0.5];
  const q = benjaminiHochberg(p);
  tt.equal(q.length, p.length);
  q.forEach((v, i) => tt.ok(rel(v, expected[i]), `q of p=${p[i]}: ${v} is ${expected[i]}`));
  tt.same(q.map((v) => v <= 0.05), [true, false, false, true, false, true, false, false], 'three discoveries at 5 %: raw p < 0.05 would have claimed six');
  tt.same(benjaminiHochberg([]), [], 'no tests, no q-values');
  tt.same(benjaminiHochberg([0.3, 0.3]), [0.3, 0.3], 'ties keep their value');
  tt.end();
});

t.test('erfc: scipy to 1e-13 relative, over both branches', (tt) => {
  const ref: Array<[number, number]> = [
    [0, 1], [0.5, 0.4795001221869535], [1, 0.15729920705028516], [1.99, 0.004888586800383002], [2, 0.004677734981047266], [2.99, 2.3525603080640205e-5],
    [3, 2.2090496998585445e-5], [4, 1.541725790028002e-8], [6, 2.1519736712498913e-17], [10, 2.0884875837625446e-45],
  ];
  for (const [x, v] of ref) tt.ok(Math.abs(erfc(x) - v) <= 1e-13 * v, `erfc(${x}) = ${erfc(x)} is ${v}`);
  tt.end();
});

t.test('rateChange: what a `_change` field says', (tt) => {
  const c = rateChange(56, 70, 48, 80);
  tt.equal(c.previous, 0.6);
  tt.ok(rel(c.delta!, 0.8 - 0.6));
  tt.ok(c.significant, 'the worked example is significant: its interval excludes 0');
  tt.ok(c.previous_ci!.low < 0.6 && c.previous_ci!.high > 0.6, 'the previous rate carries its Wilson interval');
  const same = rateChange(5, 12, 5, 12);
  tt.equal(same.delta, 0);
  tt.notOk(same.significant, 'no change is not significant');
  tt.same(rateChange(5, 12, 0, 0), { previous: null, previous_ci: null, delta: null, delta_ci: null, significant: false }, 'nothing before: nothing to compare');
  tt.end();
});
