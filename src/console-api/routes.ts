import { sameOriginWriteGuard } from '../http/guards.ts';
import type { Route } from '../http/route.ts';
import type { Authenticate } from '../identity/authenticate.ts';
import type { SurfaceDefinition } from '../http/surface.ts';

/** The console surface (`/api/console`): the same-origin write guard on every request. */
export function consoleSurface(routes: readonly Route[], authenticate: Authenticate): SurfaceDefinition {
  return {
    name: 'console',
    owns: (path) => path === '/api/console' || path.startsWith('/api/console/'),
    guards: [sameOriginWriteGuard],
    routes,
    authenticate,
    // Every console answer is private to its caller: never cached, errors included.
    headers: { 'cache-control': 'no-store' },
  };
}
