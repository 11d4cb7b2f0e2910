import { sameOriginWriteGuard } from '../http/guards.ts';
import type { Route } from '../http/route.ts';
import type { Authenticate } from '../identity/authenticate.ts';
import type { SurfaceDefinition } from '../http/surface.ts';

/** The account surface (`/api/session`, `/api/account/...`): signing in and out, the caller's chat links; under the same-origin write guard. */
export function accountSurface(routes: readonly Route[], authenticate: Authenticate): SurfaceDefinition {
  return {
    name: 'account',
    owns: (path) => path === '/api/session' || path.startsWith('/api/session/') || path === '/api/account' || path.startsWith('/api/account/'),
    guards: [sameOriginWriteGuard],
    routes,
    authenticate,
  };
}
