import { sameOriginWriteGuard } from '../http/guards.ts';
import type { Route } from '../http/route.ts';
import type { Authenticate } from '../identity/authenticate.ts';
import type { SurfaceDefinition } from '../http/surface.ts';

/** The admin surface (`/api/admin/...`): users, roles, invites; under the same-origin write guard. */
export function adminSurface(routes: readonly Route[], authenticate: Authenticate): SurfaceDefinition {
  return {
    name: 'admin',
    owns: (path) => path === '/api/admin' || path.startsWith('/api/admin/'),
    guards: [sameOriginWriteGuard],
    routes,
    authenticate,
  };
}
