import type { Config } from '../config.ts';
import { browserRequestCheck } from '../http/guards.ts';
import { json } from '../http/reply.ts';
import { route } from '../http/route.ts';
import type { SurfaceDefinition } from '../http/surface.ts';

/** ArtifactConfig: the public viewer routing settings, and nothing else. */
export interface ArtifactConfig {
  readonly viewer_origin: string | null;
  readonly sandbox_origin: string | null;
  readonly path: string;
}

/** The artifact surface (`/api/artifacts`): browser-request check on every route, never cached. */
export function artifactSurface(config: Config): SurfaceDefinition {
  const publicConfig: ArtifactConfig = Object.freeze({
    viewer_origin: config.viewerOrigin,
    sandbox_origin: config.sandboxOrigin,
    path: config.viewerPath,
  });

  const configRoute = route({
    method: 'GET',
    path: '/api/artifacts/config',
    summary: 'Public artifact viewer routing settings (ArtifactConfig)',
    responses: { 200: 'ArtifactConfig', 403: 'Refused by the browser-request check' },
    handle: () => json(200, publicConfig),
  });

  return {
    name: 'artifacts',
    owns: (path) => path.startsWith('/api/artifacts/') || path === '/api/artifacts',
    guards: [browserRequestCheck],
    routes: [configRoute],
    headers: { 'cache-control': 'no-store' },
  };
}
