import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { parseOrigin, formatOrigin, type Origin } from '../../domain/origin.ts';

/** What every handler may know of its request, read once at the edge. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly id: string;
  readonly log: Logger;
  readonly method: string;
  /** The path, without the query. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** The request target's text after `?`, as sent (null when none): a key for answers kept by query. */
  readonly search: string | null;
  /** The external scheme. */
  readonly scheme: 'http' | 'https';
  /** The `Host` header, if any. */
  readonly host: string | undefined;
  /** The console origin of the request (its scheme and `Host`), or null when `Host` is not a valid host. */
  readonly origin: Origin | null;
  /** The pattern of the route that answers (`/api/console/threads/:id`), once a surface matched one: the metrics' label. */
  route: string | null;
}

/** Splits a request target into path and query; an absolute-form target keeps its path. */
export function splitTarget(target: string): { path: string; query: URLSearchParams } {
  const { path, search } = splitPath(target);
  return { path, query: new URLSearchParams(search ?? '') };
}

/** Splits a request target into its path and the text after `?` (null when none), unparsed. */
export function splitPath(target: string): { path: string; search: string | null } {
  let rest = target;
  if (!rest.startsWith('/')) {
    try {
      const url = new URL(rest);
      rest = url.pathname + url.search;
    } catch {
      return { path: '', search: null };
    }
  }
  const mark = rest.indexOf('?');
  return mark === -1 ? { path: rest, search: null } : { path: rest.slice(0, mark), search: rest.slice(mark + 1) };
}

/** The external scheme: the connection's, or under a trusted proxy the first `X-Forwarded-Proto` value. */
export function requestScheme(req: IncomingMessage, trustProxy: boolean): 'http' | 'https' {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-proto'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
    if (first === 'https' || first === 'http') return first;
  }
  return (req.socket as TLSSocket).encrypted ? 'https' : 'http';
}

/** The console origin of a request: its scheme plus its `Host` header. */
export function requestOrigin(scheme: 'http' | 'https', host: string | undefined): Origin | null {
  return host === undefined ? null : parseOrigin(`${scheme}://${host}`);
}

/** The origin as text, for comparisons with an `Origin` header. */
export const originText = (origin: Origin | null): string | null => (origin === null ? null : formatOrigin(origin));

/**
 * The client's address: the connection's peer, or under a trusted proxy the last `X-Forwarded-For`
 * entry (the one the proxy itself appended; earlier ones are whatever the client claimed).
 */
export function clientAddress(ctx: RequestContext, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = ctx.req.headers['x-forwarded-for'];
    const last = (Array.isArray(forwarded) ? forwarded.at(-1) : forwarded)?.split(',').at(-1)?.trim();
    if (last !== undefined && last !== '') return last;
  }
  return ctx.req.socket.remoteAddress ?? 'unknown';
}
