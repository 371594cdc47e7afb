import type { Metric, MetricValueWithName, Registry } from 'prom-client';

interface Series {
  route: string;
  status: string;
  /** Observations per bucket (not cumulative); the last is +Inf. */
  counts: Float64Array;
  sum: number;
}

/**
 * A Prometheus histogram of request latency by route and status, recorded in a few nanoseconds:
 * prom-client's Histogram builds and hashes a label object on every observe, which on the hot
 * path cost about as much as the rest of answering a cache hit. Rendered by prom-client's
 * registry like any histogram (`_bucket{le}`, `_sum`, `_count`).
 */
export class LatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Map<number, Series>>();

  constructor(readonly name: string, readonly help: string, private readonly bounds: readonly number[]) {}

  observe(route: string, status: number, seconds: number): void {
    let byStatus = this.series.get(route);
    if (!byStatus) this.series.set(route, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (!s) byStatus.set(status, (s = { route, status: String(status), counts: new Float64Array(this.bounds.length + 1), sum: 0 }));
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++;
    s.counts[i]! += 1;
    s.sum += seconds;
  }

  /** What prom-client's registry asks every metric for when it renders /metrics. */
  get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: MetricValueWithName<string>[] }> {
    const values: MetricValueWithName<string>[] = [];
    for (const byStatus of this.series.values()) {
      for (const s of byStatus.values()) {
        const labels = { route: s.route, status: s.status };
        let cumulative = 0;
        this.bounds.forEach((le, i) => {
          cumulative += s.counts[i]!;
          values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative });
        });
        cumulative += s.counts[this.bounds.length]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cumulative });
        values.push({ metricName: `${this.name}_sum`, labels, value: s.sum });
        values.push({ metricName: `${this.name}_count`, labels, value: cumulative });
      }
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  register(registry: Registry): void {
    // prom-client's registry renders any object with name, help, type, aggregator and get(); its
    // Metric type names its own classes only, hence the cast.
    registry.registerMetric(this as unknown as Metric);
  }
}
