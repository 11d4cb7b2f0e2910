import * as v from 'valibot';
import { UuidParam } from '../console-api/schemas.ts';
import { result } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import { answer, Rewound } from '../http/response-schemas.ts';
import type { ThreadRewind } from '../../core/rewinds/rewinds.ts';
import type { PathAccesses } from '../../core/reads/path-access.ts';

/** Rewind to before a run (contract section 11); `access` answers 404 first when a body is refused. */
export function rewindRoutes(rewind: ThreadRewind, access: PathAccesses): Route[] {
  return [
    route({
      method: 'POST', path: '/api/console/threads/:id/rewind',
      summary: "Rewind the thread to before a run: the run and every later one read rewound (kept), the agent's next turn starts a new session from what is left, and a repository thread's worktree goes back to the checkpoint before it (owner only, while nothing runs or waits)",
      auth: true, params: v.object({ id: UuidParam }), body: v.object({ run_id: UuidParam }), operationId: 'rewindThread',
      pathRefusal: ({ user, params }) => access.thread(user, params.id),
      responses: {
        200: answer('Rewound (a retry answers the same)', Rewound),
        401: 'No valid credential',
        403: "Not the thread's owner",
        404: 'Thread unavailable',
        409: 'A turn runs or a directive waits on the thread, no checkpoint before that run is kept, the run was rewound and the thread went on since, or the worktree is not as the console left it',
        422: 'A run that is not one of the thread’s, or a body that is not valid',
        503: 'git or the repository is unavailable',
      },
      handle: async ({ user, params, body }) => result(200, await rewind(user, params.id, body)),
    }),
  ];
}
