import { problem } from '../http/reply.ts';
import { route } from '../http/route.ts';
import { LIVE_PATH } from './socket.ts';

/** `GET /api/console/live` without an upgrade: 426, so a plain client learns what the path is. */
export const liveHttpRoute = route({
  method: 'GET',
  path: LIVE_PATH,
  summary: "The live socket: upgrade to a websocket (?thread=<row id or key>&after=<seq>) for the thread's wire events",
  operationId: 'liveSocket',
  responses: { 101: 'Switching protocols: from then on each text frame is one LiveEvent (components.schemas.LiveEvent)', 401: 'No valid credential', 403: 'Foreign Origin', 404: 'Thread unavailable', 426: 'Not an upgrade', 429: 'Too many failed credentials from this client, or too many live sockets of the user (Retry-After)' },
  handle: () => problem({ code: 'upgrade_required' }, { upgrade: 'websocket' }),
});
