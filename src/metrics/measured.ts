import type { FetchUiResource } from '../../ports/mcp-resource.ts';
import type { Emit } from '../../core/runs/emit.ts';
import type { Metrics } from './metrics.ts';

const RUN_ENDS = new Set(['run_finished', 'run_error', 'run_cancelled']);

/** The emitter, counting each run that ends (by the status its row was written with) and its duration. */
export function measuredEmit(emit: Emit, metrics: Metrics): Emit {
  return async (threadId, type, data, key) => {
    const event = await emit(threadId, type, data, key);
    if (RUN_ENDS.has(type)) {
      const run = data.run as { status?: unknown; started_at?: unknown; ended_at?: unknown } | undefined;
      const status = typeof run?.status === 'string' ? run.status : type === 'run_finished' ? 'succeeded' : type === 'run_cancelled' ? 'cancelled' : 'failed';
      const started = typeof run?.started_at === 'string' ? Date.parse(run.started_at) : Number.NaN;
      const ended = typeof run?.ended_at === 'string' ? Date.parse(run.ended_at) : Number.NaN;
      metrics.runEnded(status, Number.isFinite(started) && Number.isFinite(ended) ? (ended - started) / 1000 : null);
    }
    return event;
  };
}

/** The MCP fetch, counted by outcome and timed. */
export function measuredFetch(fetch: FetchUiResource, metrics: Metrics): FetchUiResource {
  return async (endpoint, uri, options) => {
    const started = performance.now();
    try {
      const result = await fetch(endpoint, uri, options);
      metrics.mcpFetch(result.ok ? 'ok' : 'failed', (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      metrics.mcpFetch('failed', (performance.now() - started) / 1000);
      throw error;
    }
  };
}
