/*
 * The console page's API: the typed client (openapi-fetch over the generated types) on this origin,
 * with the session cookie, and the live socket with replay. Browser code.
 */
import { consoleClient } from '../../client/index.ts';
import { refusesCredential, signedOut } from './session.ts';
import type { LiveEventShape } from './timeline.ts';

export const api = consoleClient(location.origin, { credentials: 'same-origin' });
// Whichever read or write first finds the credential refused signs the page out: a stale cookie is
// sent no further (each send would be one more failed credential against this address).
api.use({
  onResponse: async ({ response }) => {
    if (await refusesCredential(response)) signedOut();
  },
});

/** A problem's words, for the page: its detail, else its title, else the status. */
export function problemText(error: unknown, status: number): string {
  const problem = typeof error === 'object' && error !== null ? (error as { detail?: unknown; title?: unknown }) : {};
  if (typeof problem.detail === 'string') return problem.detail;
  if (typeof problem.title === 'string') return problem.title;
  return `HTTP ${status}`;
}

/**
 * A refused form's words: what each field was refused for (`errors` of a 422, e.g. "cron: …"), else as
 * {@link problemText}.
 */
export function formProblemText(error: unknown, status: number): string {
  const errors = typeof error === 'object' && error !== null ? (error as { errors?: unknown }).errors : undefined;
  if (!Array.isArray(errors) || errors.length === 0) return problemText(error, status);
  return errors
    .map((issue: { path?: unknown; message?: unknown }) => `${typeof issue.path === 'string' ? issue.path.replace(/^body\./, '') : 'body'}: ${String(issue.message)}`)
    .join('; ');
}

export interface LiveConnection {
  close(): void;
}

/**
 * Follows a thread's events: replays what is stored after `after()` and then live ones; when the socket
 * drops it comes back after a short wait with `after` = the last event applied, so nothing is lost.
 * Before coming back it asks `GET /api/session`: a browser tells a page nothing of why a handshake
 * failed, so without asking, a stale cookie would be sent again with every try (each one a failed
 * credential). A refused credential signs the page out (see session.ts) and ends the following.
 */
export function followThread(thread: string, after: () => number, onEvent: (event: LiveEventShape) => void, onState: (open: boolean) => void): LiveConnection {
  let socket: WebSocket | null = null;
  let closed = false;
  let wait = 500;
  const later = () => {
    if (!closed) setTimeout(() => void reconnect(), (wait = Math.min(wait * 2, 8_000)));
  };
  const reconnect = async () => {
    if (closed) return;
    const answer = await api.GET('/api/session').catch(() => null);
    if (closed) return;
    if (answer?.response.ok === true) return open();
    // 401 or 429 signed the page out; anything else (unreachable, 503) is tried again later.
    if (answer !== null && (await refusesCredential(answer.response))) return;
    later();
  };
  const open = () => {
    if (closed) return;
    const url = new URL('/api/console/live', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('thread', thread);
    url.searchParams.set('after', String(after()));
    socket = new WebSocket(url);
    socket.onopen = () => {
      wait = 500;
      onState(true);
    };
    socket.onmessage = (message) => {
      try {
        onEvent(JSON.parse(String(message.data)) as LiveEventShape);
      } catch {
        // a frame that is not an event is not ours to show
      }
    };
    socket.onclose = () => {
      onState(false);
      later();
    };
  };
  open();
  return {
    close: () => {
      closed = true;
      socket?.close();
    },
  };
}
