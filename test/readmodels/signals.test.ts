// The slice statistics of the signals (src/readmodels/endpoints/signals.ts testSlices) against values
// computed independently with statsmodels 0.15: proportions_ztest (pooled, two-sided),
// confint_proportions_2indep(method='newcomb', compare='diff'), multipletests(method='fdr_bh').
// The four tested slices are docs/metrics.md's worked example of "Signals".
import t from 'tap';
import { MIN_RUNS, testSlices } from '../../src/readmodels/endpoints/signals';

/** x1, n1, x2, n2, p, q, Newcombe low, high (statsmodels takes z = 1.959963984540054: intervals to 1e-7). */
const TESTED: Array<[number, number, number, number, number, number, number, number]> = [
  [30, 50, 15, 50, 0.002568831527022717, 0.005137663054045434, 0.10505775198304437, 0.46501046978460947],
  [25, 200, 5, 150, 0.0024326935101848233, 0.005137663054045434, 0.03419905365418496, 0.147987188031323],
  [5, 20, 9, 20, 0.18484397422753407, 0.24645863230337875, -0.4496211015959516, 0.09089196525331966],
  [12, 40, 10, 40, 0.6165237907000114, 0.6165237907000114, -0.14314910819112947, 0.2384154675320701],
];

t.test('p-values, Newcombe intervals and BH q-values of the tested slices are statsmodels\'', (t) => {
  const slices = [
    ...TESTED.map(([x1, n1, x2, n2]) => ({ x1, n1, x2, n2 })),
    { x1: 3, n1: 8, x2: 1, n2: 12 },   // 8 runs now: skipped
    { x1: 9, n1: 9, x2: 0, n2: 40 },   // 9 runs: skipped, however large the change
  ];
  const { tested, skipped } = testSlices(slices);
  t.equal(MIN_RUNS, 10);
  t.equal(skipped, 2, 'slices below 10 runs on either side are skipped');
  t.equal(tested.length, 4, 'the others are tested, and only they count in m');
  tested.forEach((s, i) => {
    const [x1, n1, x2, n2, p, q, low, high] = TESTED[i]!;
    t.equal(s.slice, slices[i], 'in the order given');
    t.ok(Math.abs(s.p - p) <= 1e-12 * p, `${x1}/${n1} vs ${x2}/${n2}: p ${s.p} is ${p}`);
    t.ok(Math.abs(s.q - q) <= 1e-12 * q, `q ${s.q} is ${q}`);
    t.ok(Math.abs(s.low - low) <= 1e-7 && Math.abs(s.high - high) <= 1e-7, `[${s.low}, ${s.high}] is [${low}, ${high}]`);
    t.equal(s.delta, x1 / n1 - x2 / n2);
  });
  t.same(tested.map((s) => s.q <= 0.05), [true, true, false, false], 'signals: the first two');
  t.end();
});

t.test('a slice nobody is named in, in either period, is tested with p = 1', (t) => {
  const { tested } = testSlices([{ x1: 0, n1: 10, x2: 0, n2: 12 }]);
  t.same([tested[0]!.p, tested[0]!.q], [1, 1]);
  t.end();
});
