import { parseHostHeader, sameHostAndPort, type Origin } from './origin.ts';
import { SANDBOX_PAGE_PATH, SANDBOX_SCRIPT_PATH } from './sandbox-policy.ts';

/**
 * Where a request belongs:
 * - `sandbox`: the sandbox origin under its configured scheme; only the two sandbox paths answer;
 * - `refused`: the sandbox host and port under another scheme, or a websocket on the sandbox origin;
 * - `console`: anything else; the two sandbox paths are not found there.
 */
export type RequestSurface = 'sandbox' | 'refused' | 'console';

/** What the dispatch needs to know of a request. */
export interface RequestTarget {
  /** The `Host` header, if any. */
  readonly host: string | undefined;
  /** The external scheme: the connection's, or the forwarded one behind a trusted proxy. */
  readonly scheme: 'http' | 'https';
  /** Whether the request asks to upgrade to a websocket. */
  readonly websocket: boolean;
}

/** Decides the surface of a request; this runs before any console or account route. */
export function requestSurface(target: RequestTarget, sandbox: Origin | null): RequestSurface {
  if (sandbox === null || target.host === undefined) return 'console';
  const where = parseHostHeader(target.host, target.scheme);
  if (where === null || !sameHostAndPort(where, sandbox)) return 'console';
  return target.scheme === sandbox.scheme && !target.websocket ? 'sandbox' : 'refused';
}

/** Whether a path is one of the two that exist only on the sandbox origin. */
export function isSandboxPath(path: string): boolean {
  return path === SANDBOX_PAGE_PATH || path === SANDBOX_SCRIPT_PATH;
}
