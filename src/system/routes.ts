import * as v from 'valibot';
import type { ReadinessProbe } from '../../ports/readiness.ts';
import { answer, Ready, Status } from '../http/response-schemas.ts';
import { json, problem } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { SurfaceDefinition } from '../http/surface.ts';
import type { SandboxState } from './agent-sandbox.ts';

/** What readiness is made of: storage reachable, and every agent's first answer in (see `agentsKnown`). */
export interface Readiness {
  readonly storage: ReadinessProbe;
  readonly agentsKnown: () => boolean;
  /** How agents are confined: told in the 200 answer (`agent_sandbox`), so an operator sees an unsandboxed start. */
  readonly agentSandbox?: SandboxState;
}

/** Liveness, readiness and the API description, on the console origin only. */
export function systemSurface(ready: Readiness, description: () => unknown, extra: readonly Route[] = []): SurfaceDefinition {
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
      summary: "Readiness: 200 once storage is reachable and every agent's first probe has answered (or failed), else 503",
      operationId: 'readyz',
      responses: { 200: answer('Ready', Ready), 503: 'Storage unreachable, or the agents not all asked yet' },
      handle: async () => {
        if (!(await ready.storage().catch(() => false))) return problem({ code: 'storage_unavailable' }, { 'cache-control': 'no-store' });
        // A client that waits for readiness then reads /routes must find the agents there.
        if (!ready.agentsKnown()) return problem({ code: 'agents_not_known' }, { 'cache-control': 'no-store' });
        const sandbox = ready.agentSandbox === undefined ? {} : { agent_sandbox: ready.agentSandbox };
        return json(200, { status: 'ready', ...sandbox }, { 'cache-control': 'no-store' });
      },
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
