import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { SECONDS } from '../../src/metrics/metrics.ts';
import { requestMetrics } from '../../src/metrics/request-metrics.ts';

const COUNTER = { name: 'console_http_requests_total', help: 'HTTP requests answered, by route pattern, method and status' };
const HISTOGRAM = { name: 'console_http_request_duration_seconds', help: 'Time to answer an HTTP request, by route pattern and method', buckets: SECONDS };

/** prom-client's own Counter and Histogram, as the metrics were counted before: the reference. */
function reference() {
  const registry = new Registry();
  const requests = new Counter({ ...COUNTER, labelNames: ['route', 'method', 'status'], registers: [registry] });
  const latency = new Histogram({ ...HISTOGRAM, buckets: [...SECONDS], labelNames: ['route', 'method'], registers: [registry] });
  return {
    registry,
    request: (route: string, method: string, status: number, seconds: number) => {
      requests.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
    },
  };
}

function counted() {
  const registry = new Registry();
  return { registry, ...requestMetrics(registry, { counter: COUNTER, histogram: HISTOGRAM }) };
}

const request = fc.tuple(
  fc.constantFrom('/artifacts/sandbox', '/artifacts/sandbox.js', '/api/console/threads/:id', 'unmatched', 'a "quoted"\\route\nname'),
  fc.constantFrom('GET', 'HEAD', 'POST', 'DELETE'),
  fc.constantFrom(200, 201, 304, 404, 421, 500, 503),
  // On the bounds, between them, past the last one.
  fc.oneof(fc.constantFrom(0, ...SECONDS, 11, 1e6), fc.double({ min: 0, max: 20, noNaN: true })),
);

describe('the request metrics', () => {
  it("expose the very text prom-client's Counter and Histogram expose for the same requests", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(request, { maxLength: 60 }), async (requests) => {
        const mine = counted();
        const theirs = reference();
        for (const [route, method, status, seconds] of requests) {
          mine.request(route, method, status, seconds);
          theirs.request(route, method, status, seconds);
        }
        assert.equal(await mine.registry.metrics(), await theirs.registry.metrics());
        assert.deepEqual(await mine.registry.getMetricsAsJSON(), await theirs.registry.getMetricsAsJSON());
      }),
    );
  });

  it('start again from nothing when the registry is reset, as prom-client does', async () => {
    const mine = counted();
    const theirs = reference();
    for (const side of [mine, theirs]) {
      side.request('/x', 'GET', 200, 0.002);
      side.registry.resetMetrics();
      side.request('/y', 'POST', 201, 0.2);
    }
    assert.equal(await mine.registry.metrics(), await theirs.registry.metrics());
    assert.match(await mine.registry.metrics(), /console_http_requests_total\{route="\/y",method="POST",status="201"\} 1/);
    assert.doesNotMatch(await mine.registry.metrics(), /route="\/x"/);
  });
});
