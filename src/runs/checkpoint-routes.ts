import * as v from 'valibot';
import { UuidParam } from '../console-api/schemas.ts';
import { answer } from '../http/response-schemas.ts';
import { result } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { ThreadCheckpoints } from '../../core/worktrees/checkpoints.ts';

/** GET /threads/{id}/checkpoints: one checkpoint (contract section 11). */
const Checkpoint = v.strictObject({
  run_id: v.nullable(v.string()),
  message_id: v.nullable(v.string()),
  commit: v.string(),
  created_at: v.string(),
  files_changed: v.pipe(v.number(), v.integer()),
});

/** A thread's checkpoints (contract section 11): the worktree's state before its first turn and after each. */
export function checkpointRoutes(checkpoints: ThreadCheckpoints): Route[] {
  return [
    route({
      method: 'GET', path: '/api/console/threads/:id/checkpoints', operationId: 'threadCheckpoints', auth: true, params: v.object({ id: UuidParam }),
      summary: "The checkpoints of the thread's worktree, oldest first: before its first turn (run_id null) and after each turn (owner and members; [] when the project is no repository)",
      responses: {
        200: answer('The checkpoints, oldest first', v.array(Checkpoint)),
        401: 'No valid credential',
        404: 'Thread unavailable',
        409: "The thread's worktree is not as the console left it",
        503: 'git is unavailable, or the repository cannot be used',
      },
      handle: async ({ user, params }) => result(200, await checkpoints(user, params.id)),
    }),
  ];
}
