import * as v from 'valibot';
import type { Config } from '../config.ts';
import { answer, ArtifactConfig, McpAppOverview, McpAppView } from '../http/response-schemas.ts';
import { UuidParam } from '../console-api/schemas.ts';
import { browserRequestCheck } from '../http/guards.ts';
import { json, result } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { SurfaceDefinition } from '../http/surface.ts';
import type { Authenticate } from '../identity/authenticate.ts';
import type { ArtifactLoads } from '../../core/artifacts/view.ts';

/** ArtifactConfig: the public viewer routing settings, and nothing else. */
export interface ArtifactConfig {
  readonly viewer_origin: string | null;
  readonly sandbox_origin: string | null;
  readonly path: string;
}

const VIEW_ANSWERS = {
  200: answer('McpAppView (null fields omitted)', McpAppView),
  401: 'No valid credential',
  403: 'Refused by the browser-request check',
  404: 'Artifact, reference, thread or installation unavailable',
  422: 'An id is not a UUID',
  502: 'MCP app resource could not be loaded',
  503: 'Configure a separate artifact sandbox origin',
};

/** The artifact surface (`/api/artifacts`): browser-request check on every route, never cached. */
export function artifactSurface(config: Config, loads: ArtifactLoads, authenticate: Authenticate): SurfaceDefinition {
  const publicConfig: ArtifactConfig = Object.freeze({
    viewer_origin: config.viewerOrigin,
    sandbox_origin: config.sandboxOrigin,
    path: config.viewerPath,
  });

  const routes: Route[] = [
    route({
      method: 'GET',
      path: '/api/artifacts/config',
      summary: 'Public artifact viewer routing settings (ArtifactConfig)',
      operationId: 'artifactConfig',
      responses: { 200: answer('ArtifactConfig', ArtifactConfig), 403: 'Refused by the browser-request check' },
      handle: () => json(200, publicConfig),
    }),
    route({
      method: 'GET',
      path: '/api/artifacts/:artifact_id',
      summary: 'An owned artifact with its UI resource fetched afresh and its sandbox routing (McpAppView)',
      operationId: 'artifactView',
      auth: true,
      params: v.object({ artifact_id: UuidParam }),
      responses: VIEW_ANSWERS,
      handle: async ({ user, params, ctx }) => {
        return result(200, await loads.view(user, params.artifact_id, ctx.origin, ctx.log));
      },
    }),
    route({
      method: 'GET',
      path: '/api/artifacts/:artifact_id/overview',
      summary: "An owned artifact's title and provider name (McpAppOverview), without contacting the provider",
      operationId: 'artifactOverview',
      auth: true,
      params: v.object({ artifact_id: UuidParam }),
      responses: {
        200: answer('McpAppOverview', McpAppOverview),
        401: 'No valid credential',
        403: 'Refused by the browser-request check',
        404: 'Artifact unavailable, or its installation no longer exists',
        422: 'The id is not a UUID',
      },
      handle: async ({ user, params, ctx }) => result(200, await loads.overview(user, params.artifact_id, ctx.origin)),
    }),
  ];

  return {
    name: 'artifacts',
    owns: (path) => path.startsWith('/api/artifacts/') || path === '/api/artifacts',
    guards: [browserRequestCheck],
    routes,
    authenticate,
    headers: { 'cache-control': 'no-store' },
  };
}

/** `GET /api/console/threads/{thread_id}/artifacts/{message_id}`: the artifact a visible ledger reference names. */
export function threadArtifactRoute(loads: ArtifactLoads): Route {
  return route({
    method: 'GET',
    path: '/api/console/threads/:thread_id/artifacts/:message_id',
    summary: "The artifact a message of the thread's ledger references (McpAppView); ownership still required",
    operationId: 'threadArtifactView',
    auth: true,
    guards: [browserRequestCheck],
    params: v.object({ thread_id: UuidParam, message_id: UuidParam }),
    responses: VIEW_ANSWERS,
    handle: async ({ user, params, ctx }) => {
      return result(200, await loads.viewByReference(user, params.thread_id, params.message_id, ctx.origin, ctx.log));
    },
  });
}
