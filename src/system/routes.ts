import * as v from 'valibot';
import type { ReadinessProbe } from '../../ports/readiness.ts';
import { answer, Status } from '../http/answers.ts';
import { json, problem } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { SurfaceDefinition } from '../http/surface.ts';

/** Liveness, readiness and the API description, on the console origin only. */
export function systemSurface(ready: ReadinessProbe, description: () => unknown, extra: readonly Route[] = []): SurfaceDefinition {
  const routes: Route[] = [
    ...extra,
    route({
      method: 'GET',
      path: '/healthz',
      summary: 'Liveness: 200 while the process serves',
      operationId: 'healthz',
      responses: { 200: answer('Alive', Status) },
      handle: () => json(200, { status: 'ok' }, { 'cache-control': 'no-store' }),
    }),
    route({
      method: 'GET',
      path: '/readyz',
      summary: 'Readiness: 200 once storage is reachable, else 503',
      operationId: 'readyz',
      responses: { 200: answer('Ready', Status), 503: 'Storage unreachable' },
      handle: async () =>
        (await ready().catch(() => false))
          ? json(200, { status: 'ready' }, { 'cache-control': 'no-store' })
          : problem({ code: 'storage_unavailable' }, { 'cache-control': 'no-store' }),
    }),
    route({
      method: 'GET',
      path: '/api/openapi.json',
      summary: 'This OpenAPI 3.1 description',
      operationId: 'openApi',
      responses: { 200: answer('The description', v.record(v.string(), v.unknown())) },
      handle: () => json(200, description()),
    }),
  ];
  return { name: 'system', owns: () => true, guards: [], routes };
}
