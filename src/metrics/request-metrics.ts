import type { Registry } from 'prom-client';

/**
 * The two per-request metrics, counted the cheap way: prom-client's `Counter.inc` and
 * `Histogram.observe` check and hash their labels on every call (a few hundred ns each, a share of
 * a small answer's cost worth cutting, docs/benchmarks.md). Here a request costs three map lookups by
 * strings the edge already holds (the route pattern, node's method, the status) and a bucket search;
 * the counts are turned into prom-client's exposition data only when scraped, in the order prom-client
 * itself keeps (first seen first), so `/metrics` reads exactly as it did (a test compares them).
 */
export interface RequestMetrics {
  readonly request: (route: string, method: string, status: number, seconds: number) => void;
}

interface Count {
  readonly labels: { readonly route: string; readonly method: string; readonly status: string };
  value: number;
}

interface Timing {
  readonly labels: { readonly route: string; readonly method: string };
  readonly buckets: number[];
  sum: number;
  count: number;
}

/** A metric the registry formats: what prom-client's own metrics answer from `get()`. */
interface Exposed {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get: () => Promise<{ name: string; help: string; type: string; values: unknown[]; aggregator: string }>;
  getForPromString?: () => Promise<{ name: string; help: string; type: string; values: unknown[]; aggregator: string }>;
  reset: () => void;
}

interface BucketValue {
  readonly labels: Record<string, string | number>;
  readonly sharedLabels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly metricName: string;
  readonly exemplar: null | undefined;
}

export function requestMetrics(registry: Registry, names: { readonly counter: { name: string; help: string }; readonly histogram: { name: string; help: string; buckets: readonly number[] } }): RequestMetrics {
  const bounds = [...names.histogram.buckets];
  // route → method → status → count, and route → method → timing; each list in the order first seen.
  let counts = new Map<string, Map<string, Map<number, Count>>>();
  let countList: Count[] = [];
  let timings = new Map<string, Map<string, Timing>>();
  let timingList: Timing[] = [];

  const counter: Exposed = {
    name: names.counter.name,
    help: names.counter.help,
    type: 'counter',
    aggregator: 'sum',
    get: async () => ({ help: counter.help, name: counter.name, type: 'counter', values: countList.map((c) => ({ value: c.value, labels: c.labels })), aggregator: 'sum' }),
    reset: () => {
      counts = new Map();
      countList = [];
    },
  };
  const histogram: Exposed = {
    name: names.histogram.name,
    help: names.histogram.help,
    type: 'histogram',
    aggregator: 'sum',
    // For the text format: the route and method as shared labels, after `le` (as prom-client writes them).
    getForPromString: async () => {
      const bucket = `${histogram.name}_bucket`;
      const values: BucketValue[] = [];
      for (const t of timingList) {
        let acc = 0;
        for (let i = 0; i < bounds.length; i++) {
          acc += t.buckets[i]!;
          values.push({ labels: { le: bounds[i]! }, sharedLabels: t.labels, value: acc, metricName: bucket, exemplar: null });
        }
        values.push({ labels: { le: '+Inf' }, sharedLabels: t.labels, value: t.count, metricName: bucket, exemplar: null });
        values.push({ labels: {}, sharedLabels: t.labels, value: t.sum, metricName: `${histogram.name}_sum`, exemplar: undefined });
        values.push({ labels: {}, sharedLabels: t.labels, value: t.count, metricName: `${histogram.name}_count`, exemplar: undefined });
      }
      return { name: histogram.name, help: histogram.help, type: 'histogram', values, aggregator: 'sum' };
    },
    // For JSON: every label in `labels`, as prom-client's own get() answers.
    get: async () => {
      const data = await histogram.getForPromString!();
      data.values = (data.values as BucketValue[]).map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
      return data;
    },
    reset: () => {
      timings = new Map();
      timingList = [];
    },
  };
  // The registry keeps any object with a name and get(), as it keeps prom-client's own metrics.
  registry.registerMetric(counter as never);
  registry.registerMetric(histogram as never);

  return {
    request: (route, method, status, seconds) => {
      let byMethod = counts.get(route);
      if (byMethod === undefined) counts.set(route, (byMethod = new Map()));
      let byStatus = byMethod.get(method);
      if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
      let count = byStatus.get(status);
      if (count === undefined) {
        byStatus.set(status, (count = { labels: { route, method, status: String(status) }, value: 0 }));
        countList.push(count);
      }
      count.value += 1;

      let timingsOf = timings.get(route);
      if (timingsOf === undefined) timings.set(route, (timingsOf = new Map()));
      let timing = timingsOf.get(method);
      if (timing === undefined) {
        timingsOf.set(method, (timing = { labels: { route, method }, buckets: bounds.map(() => 0), sum: 0, count: 0 }));
        timingList.push(timing);
      }
      // As prom-client's observe: a value past every bound is in +Inf (the count) alone.
      for (let i = 0; i < bounds.length; i++) {
        if (seconds <= bounds[i]!) {
          timing.buckets[i]! += 1;
          break;
        }
      }
      timing.sum += seconds;
      timing.count += 1;
    },
  };
}
