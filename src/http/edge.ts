import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import { isAllowedHost } from '../../domain/allowed-hosts.ts';
import { absoluteTargetHost, parseHostHeader, sameHostAndPort, type HostAndPort, type Origin } from '../../domain/origin.ts';
import { StorageUnavailableError } from '../../ports/storage.ts';
import { ClientAbortedError } from './body.ts';
import { isSandboxPath, requestSurface, type RequestSurface } from '../../domain/sandbox-dispatch.ts';
import { requestOrigin, requestScheme, splitPath, type RequestContext } from './context.ts';
import { requestLine, type RequestLine } from '../logging.ts';
import { answerAndClose } from './raw-reply.ts';
import { BASE_HEADERS, problem, writeBody, writeReply, type Reply } from './reply.ts';
import type { Surface } from './surface.ts';

/** Takes over an accepted websocket upgrade (the live socket router). */
export interface UpgradeHandler {
  readonly owns: (path: string) => boolean;
  /** Answers the upgrade: the handshake, or its own refusals; a rejection is the edge's to answer (`upgradeFailure`). */
  readonly upgrade: (ctx: RequestContext, socket: Duplex, head: Buffer) => void | Promise<void>;
}

/** A handler that answers a path itself, on the console origin only (the bundled demo MCP server). */
export interface Mount {
  readonly path: string;
  readonly handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

/** Everything the edge dispatches between, built by the composition root. */
export interface EdgeOptions {
  readonly log: Logger;
  readonly sandboxOrigin: Origin | null;
  readonly trustProxy: boolean;
  /** Every `Host` answered (config `allowedHosts`; a port of 0 is the port listened on); any other is refused first. */
  readonly allowedHosts: readonly HostAndPort[];
  /** The sandbox origin's surface, tried first. */
  readonly sandbox: Surface;
  /** The console origin's surfaces; the first that owns a path answers it. */
  readonly surfaces: readonly Surface[];
  readonly live?: UpgradeHandler;
  readonly mounts?: readonly Mount[];
  /** True once shutdown began: answers then close their connection. */
  readonly draining: () => boolean;
  /** Told of every answered request (by route pattern) and of each 503 for storage (metrics). */
  readonly observe?: {
    readonly request: (route: string, method: string, status: number, seconds: number) => void;
    readonly storageUnavailable: () => void;
  };
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** '/', which every origin-form target begins with: any other is checked for the host it names. */
const SLASH = 0x2f;

/**
 * A request's context. Its child logger is made on first use: most requests log only their one
 * `request` line, and a pino child (its bindings serialized up front) would cost more than the rest
 * of the edge's work on a small answer.
 */
class EdgeContext implements RequestContext {
  readonly path: string;
  readonly search: string | null;
  readonly origin: Origin | null;
  route: string | null = null;
  #query: URLSearchParams | undefined;
  #log: Logger | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly id: string,
    readonly method: string,
    target: string,
    readonly scheme: 'http' | 'https',
    readonly host: string | undefined,
    origin: Origin | null,
    private readonly root: Logger,
  ) {
    const { path, search } = splitPath(target);
    this.path = path;
    this.search = search;
    this.origin = origin;
  }

  /** Parsed on first use: only routes with a query schema (and the live socket) read it. */
  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.search ?? ''));
  }

  get log(): Logger {
    // Only these three are bound: never headers, never the query (it may carry anything).
    return (this.#log ??= this.root.child({ reqId: this.id, method: this.method, path: this.path }));
  }

}

/** What a request's scheme and `Host` decide: whether it is answered at all, its console origin, the surface of a plain request. */
interface HostFacts {
  readonly allowed: boolean;
  readonly origin: Origin | null;
  readonly surface: RequestSurface;
}

/** Host facts worked out afresh (three regular expressions); `listened` is the port the connection came in on. */
function factsOf(options: EdgeOptions, scheme: 'http' | 'https', host: string | undefined, websocket: boolean, listened: number): HostFacts {
  const where = host === undefined ? null : parseHostHeader(host, scheme);
  return {
    allowed: where !== null && isAllowedHost(where, options.allowedHosts, listened),
    origin: requestOrigin(scheme, host),
    surface: requestSurface({ host, scheme, websocket }, options.sandboxOrigin),
  };
}

/**
 * Host facts are parsed once per scheme and `Host` value, then looked up: a service answers a
 * handful of hosts. Only hosts it answers are kept, so made-up ones (a scan, a rebinding attempt)
 * cost a parse each and never evict the real ones; the map is emptied when full all the same.
 */
const HOST_FACTS_KEPT = 256;

function hostFacts(options: EdgeOptions, memo: Map<string | undefined, HostFacts>, req: IncomingMessage, scheme: 'http' | 'https', websocket = false): HostFacts {
  const host = req.headers.host;
  let facts = memo.get(host);
  if (facts === undefined) {
    facts = factsOf(options, scheme, host, websocket, req.socket.localPort ?? 0);
    if (!facts.allowed) return facts;
    if (memo.size >= HOST_FACTS_KEPT) memo.clear();
    memo.set(host, facts);
  }
  return facts;
}

/**
 * The edge's own refusals, decided by `Host` alone before any mount, route, guard, credential or
 * body: a `Host` that is not a host (400); one the service does not answer (421, which stops DNS
 * rebinding), except the two sandbox paths, which the spec answers 404 on any other origin.
 */
function hostRefusal(ctx: RequestContext, facts: HostFacts): Reply | null {
  // Origins are built from Host: one that is not a host could pass for no origin at all in the checks.
  if (ctx.host !== undefined && ctx.origin === null) return problem({ code: 'invalid_host' });
  // An absolute-form target (`GET http://host/path`) names the host it is for; every decision here is
  // taken on `Host`, so one naming another host is misdirected, never answered as if it named ours.
  const target = ctx.req.url;
  if (target !== undefined && target.charCodeAt(0) !== SLASH) {
    const named = absoluteTargetHost(target);
    if (named === 'invalid') return problem({ code: 'invalid_host', detail: 'The request target does not name a valid host' });
    if (named !== null && (ctx.origin === null || !sameHostAndPort(named, ctx.origin))) {
      return problem({ code: 'host_not_allowed', detail: 'The request target names another host than the Host header' });
    }
  }
  if (facts.allowed) return null;
  return isSandboxPath(ctx.path) ? problem({ code: 'not_found' }) : problem({ code: 'host_not_allowed' });
}

function contextOf(req: IncomingMessage, options: EdgeOptions, facts: HostFacts | null, scheme: 'http' | 'https'): EdgeContext {
  const given = req.headers['x-request-id'];
  // A random UUID (v4) from node's batched entropy: a v7's own random draw per request cost more
  // than routing it, and the log line carries the time anyway.
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  const host = req.headers.host;
  const origin = facts === null ? requestOrigin(scheme, host) : facts.origin;
  return new EdgeContext(req, id, req.method ?? 'GET', req.url ?? '', scheme, host, origin, options.log);
}

/** Which surface answers: the sandbox's on the sandbox origin, else the console surface owning the path. */
function surfaceOf(ctx: RequestContext, where: 'sandbox' | 'console' | 'refused', options: EdgeOptions): Surface | Reply {
  if (where === 'sandbox') return options.sandbox;
  if (where === 'refused' || isSandboxPath(ctx.path)) return problem({ code: 'not_found' });
  return options.surfaces.find((candidate) => candidate.owns(ctx.path)) ?? problem({ code: 'not_found' });
}

/** A thrown error as an answer: a bug becomes a logged 500, never a crash; null when no one is left to answer. */
function failureReply(ctx: RequestContext, error: unknown, options: EdgeOptions): Reply | null {
  if (error instanceof ClientAbortedError) {
    // The client's own doing, and common (a closed tab, a cancelled upload): no one to answer.
    ctx.log.debug({ reason: error.cause instanceof Error ? error.cause.message : 'closed' }, 'client aborted the request');
    return null;
  }
  if (error instanceof StorageUnavailableError) {
    options.observe?.storageUnavailable();
    ctx.log.warn({ err: error.cause ?? error }, 'storage unavailable');
    return problem({ code: 'storage_unavailable' }, { 'retry-after': '5' });
  }
  ctx.log.error({ err: error }, 'request failed');
  return problem({ code: 'internal' });
}

/**
 * A frozen reply (one answer written again and again: the sandbox script, a kept proxy page) with
 * everything the edge adds to it worked out once for its surface: the merged headers as node takes
 * them (a flat list of names and values, `content-length` included) and the body as bytes. A request
 * then adds its id alone.
 */
interface PreparedReply {
  readonly surface: Surface | null;
  readonly status: number;
  readonly head: readonly string[];
  readonly bytes: string | Uint8Array | undefined;
}

/** Every answer's headers in one object: the reply's, its surface's (which win), then the rule for errors. */
function mergedHeaders(reply: Reply, surface: Surface | null): Record<string, string> {
  const headers: Record<string, string> = Object.assign({}, BASE_HEADERS, reply.headers, surface?.headers);
  // An error is never worth caching (and artifact and sandbox answers must not be), whoever wrote it.
  if (reply.status >= 400 && headers['cache-control'] === undefined) headers['cache-control'] = 'no-store';
  return headers;
}

function prepare(reply: Reply, surface: Surface | null): PreparedReply {
  const headers = mergedHeaders(reply, surface);
  const body = reply.body;
  const bytes = body === undefined ? undefined : typeof body === 'object' && 'json' in body ? JSON.stringify(body.json) : body;
  headers['content-length'] = String(bytes === undefined ? 0 : typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength);
  return { surface, status: reply.status, head: Object.entries(headers).flat(), bytes };
}

/** Writes a reply with the request's id (and `Connection: close` while draining). */
function send(res: ServerResponse, ctx: EdgeContext, reply: Reply, surface: Surface | null, draining: boolean, prepared: WeakMap<Reply, PreparedReply>): void {
  if (res.headersSent || res.destroyed) return;
  if (Object.isFrozen(reply)) {
    let ready = prepared.get(reply);
    if (ready === undefined || ready.surface !== surface) prepared.set(reply, (ready = prepare(reply, surface)));
    const head = ready.head.slice();
    head.push('x-request-id', ctx.id);
    if (draining) head.push('connection', 'close');
    res.writeHead(ready.status, head);
    res.end(ready.bytes);
    return;
  }
  const headers = mergedHeaders(reply, surface);
  headers['x-request-id'] = ctx.id;
  if (draining) headers.connection = 'close';
  writeBody(res, reply.status, headers, reply.body);
}

/** The `request` listener of the one `node:http` server. */
export function requestListener(options: EdgeOptions) {
  const memo = { http: new Map<string | undefined, HostFacts>(), https: new Map<string | undefined, HostFacts>() };
  const prepared = new WeakMap<Reply, PreparedReply>();
  const logLine: RequestLine = requestLine(options.log);
  const observe = options.observe;
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const scheme = requestScheme(req, options.trustProxy);
    const facts = hostFacts(options, memo[scheme], req, scheme);
    const ctx = contextOf(req, options, facts, scheme);
    // 'close' comes once per answer: `on` spares the wrapper `once` makes and removes.
    res.on('close', () => {
      const elapsed = performance.now() - started;
      observe?.request(ctx.route ?? 'unmatched', ctx.method, res.statusCode, elapsed / 1000);
      // The one line of a request, with the fields its child logger binds (logging.ts, requestLine).
      logLine(ctx.id, ctx.method, ctx.path, res.statusCode, Math.round(elapsed * 10) / 10, !res.writableFinished);
    });
    const refused = hostRefusal(ctx, facts);
    const where = facts.surface;
    if (refused === null && where === 'console' && options.mounts !== undefined && options.mounts.length > 0) {
      const mount = options.mounts.find((m) => m.path === ctx.path);
      if (mount !== undefined) {
        ctx.route = mount.path;
        mount.handle(req, res).catch((error: unknown) => {
          ctx.log.error({ err: error }, 'mounted handler failed');
          if (!res.headersSent) writeReply(res, problem({ code: 'internal' }));
          else res.destroy();
        });
        return;
      }
    }
    const picked = refused ?? surfaceOf(ctx, where, options);
    if (!('dispatch' in picked)) return send(res, ctx, picked, null, options.draining(), prepared);
    let answered: Reply | Promise<Reply>;
    try {
      answered = picked.dispatch(ctx);
    } catch (error) {
      return sendFailure(res, ctx, error, picked, options, prepared);
    }
    // A route that waited on nothing is answered now, without a turn of the microtask queue.
    if (!(answered instanceof Promise)) return send(res, ctx, answered, picked, options.draining(), prepared);
    answered.then(
      (reply) => send(res, ctx, reply, picked, options.draining(), prepared),
      (error: unknown) => sendFailure(res, ctx, error, picked, options, prepared),
    );
  };
}

/** A thrown or rejected dispatch, answered as `failureReply` says (when anyone is left to answer). */
function sendFailure(res: ServerResponse, ctx: EdgeContext, error: unknown, surface: Surface, options: EdgeOptions, prepared: WeakMap<Reply, PreparedReply>): void {
  const reply = failureReply(ctx, error, options);
  if (reply !== null) send(res, ctx, reply, surface, options.draining(), prepared);
}

/** Refuses an upgrade with a plain HTTP answer, then closes the socket (raw-reply.ts). */
export function refuseUpgrade(socket: Duplex, reply: Reply, requestId?: string): void {
  // No parser reads an upgraded socket: what the client still sends is drained, so its close is seen.
  socket.resume();
  answerAndClose(socket, reply, requestId);
}

/**
 * A rejected upgrade, refused as a failed request is answered: storage down is an outage (503, logged
 * as a warning), not a bug; anything else is a bug, logged and refused 500 without detail.
 */
function upgradeFailure(ctx: RequestContext, error: unknown): Reply {
  if (error instanceof StorageUnavailableError) {
    ctx.log.warn({ err: error.cause ?? error }, 'storage unavailable');
    return problem({ code: 'storage_unavailable' }, { 'retry-after': '5' });
  }
  ctx.log.error({ err: error }, 'live upgrade failed');
  return problem({ code: 'internal' });
}

/** An upgraded socket's `error` listener: one function for all of them, not a closure kept per socket. */
function destroySocket(this: Duplex): void {
  this.destroy();
}

/**
 * The `upgrade` listener: a `Host` not answered is refused as a plain request is; a websocket on the
 * sandbox origin or a sandbox path is refused. Only websocket handshakes reach it: the listener answers
 * any other request with an `Upgrade` header (h2c, a POST) as the plain HTTP request it also is
 * (server.ts, plain-upgrade.ts), and refuses an HTTP/1.1 handshake without `Host` 400 `missing_host`
 * itself, so the 421 here is for a `Host` not answered (or none on HTTP/1.0).
 */
export function upgradeListener(options: EdgeOptions) {
  // Kept apart from the plain requests' facts: a websocket's surface is its own (the sandbox origin refuses one).
  const memo = { http: new Map<string | undefined, HostFacts>(), https: new Map<string | undefined, HostFacts>() };
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', destroySocket);
    const ctx = contextOf(req, options, null, requestScheme(req, options.trustProxy));
    // Looked up as a plain request's are, not worked out afresh: working them out reads the socket's local
    // port, which node then keeps on the socket (an object and a string) for as long as the websocket is open.
    const facts = hostFacts(options, memo[ctx.scheme], req, ctx.scheme, true);
    const refused = hostRefusal(ctx, facts);
    if (refused !== null) {
      ctx.log.info({ status: refused.status }, 'upgrade refused');
      refuseUpgrade(socket, refused, ctx.id);
      return;
    }
    if (facts.surface !== 'console' || isSandboxPath(ctx.path) || options.live === undefined || !options.live.owns(ctx.path)) {
      ctx.log.info({ status: 404 }, 'upgrade refused');
      refuseUpgrade(socket, problem({ code: 'not_found' }), ctx.id);
      return;
    }
    const upgrading = options.live.upgrade(ctx, socket, head);
    if (upgrading instanceof Promise) upgrading.catch((error: unknown) => refuseUpgrade(socket, upgradeFailure(ctx, error)));
  };
}
