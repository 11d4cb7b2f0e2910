import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { buildCsp } from '../../domain/csp.ts';
import { parseOrigin, sameHostAndPort, type Origin } from '../../domain/origin.ts';
import { parseSandboxPolicyText, SANDBOX_PAGE_PATH, SANDBOX_SCRIPT_PATH } from '../../domain/sandbox-policy.ts';
import { problem, type Reply } from '../http/reply.ts';
import { freezeReply, route } from '../http/route.ts';
import type { SurfaceDefinition } from '../http/surface.ts';
import { answerCache } from '../http/answer-cache.ts';
import { proxyPage } from './proxy-page.ts';

/** Every browser permission the proxy page (and so any frame inside it) is denied. */
export const PERMISSIONS_POLICY = [
  'camera',
  'microphone',
  'geolocation',
  'clipboard-read',
  'clipboard-write',
  'fullscreen',
  'display-capture',
  'payment',
  'usb',
]
  .map((feature) => `${feature}=()`)
  .join(', ');

const PolicyQuery = v.object({ policy: v.string('must be given once') });

/**
 * Proxy pages kept per origin and query text, as sent: 512 of them, each for a query of at most 4,096
 * characters (an app's usual policy is a few hundred, percent-encoded), so the cache stays within a few
 * MiB whatever is asked; a longer query is answered afresh each time.
 */
const PAGE_CACHE_SIZE = 512;
const CACHED_QUERY_LENGTH = 4096;

/** The sandbox origin's surface: the proxy page and its script, and nothing else. */
export function sandboxSurface(): SurfaceDefinition {
  // ASCII only (a test checks), so it needs no charset parameter.
  // One answer, frozen: the edge writes it as it is, its headers merged once.
  const script = freezeReply({ status: 200, headers: { 'content-type': 'text/javascript' }, body: readFileSync(new URL('./proxy.js', import.meta.url)) });

  const page = route({
    method: 'GET',
    path: SANDBOX_PAGE_PATH,
    summary: 'The MCP app sandbox proxy page (served on the sandbox origin only)',
    query: PolicyQuery,
    operationId: 'sandboxProxyPage',
    responses: { 200: { description: 'The proxy page', mediaType: 'text/html' }, 422: 'The policy is too long, invalid, or names this origin as its parent' },
    // The page is a pure function of the query and the origin asked on: one seen before is a lookup
    // (no query parse, no policy parse, no CSP, no page), written as it was the first time.
    memo: {
      key: (ctx) => (ctx.search !== null && ctx.search.length <= CACHED_QUERY_LENGTH ? `${ctx.scheme}://${ctx.host ?? ''} ${ctx.search}` : null),
      keep: (reply) => reply.status === 200,
      cache: answerCache<Reply>(PAGE_CACHE_SIZE),
    },
    handle: ({ query, ctx }): Reply => proxyPageReply(query.policy, ctx.origin),
  });

  const proxyScript = route({
    method: 'GET',
    path: SANDBOX_SCRIPT_PATH,
    summary: "The sandbox proxy page's script (served on the sandbox origin only)",
    operationId: 'sandboxProxyScript',
    responses: { 200: { description: 'The script', mediaType: 'text/javascript' } },
    handle: (): Reply => script,
  });

  return {
    name: 'sandbox',
    owns: () => true,
    guards: [],
    routes: [page, proxyScript],
    headers: { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' },
  };
}

/** The proxy page for a `policy` text asked for on `origin`, or its 422. */
function proxyPageReply(text: string, origin: Origin | null): Reply {
  const policy = parseSandboxPolicyText(text);
  if (!policy.ok) return problem({ code: 'validation_failed', errors: policy.error });
  const parent = parseOrigin(policy.value.parentOrigin);
  // The sandbox itself as the dispatch sees it: the same host, and the same port or 80 and 443 (a
  // TLS-terminating proxy forwards one to the other), whatever the scheme.
  if (parent !== null && origin !== null && sameHostAndPort(parent, origin)) {
    return problem({
      code: 'validation_failed',
      errors: [{ path: 'policy.parentOrigin', message: 'must not be the sandbox origin itself' }],
    });
  }
  return {
    status: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': buildCsp(policy.value, 'proxy'),
      'permissions-policy': PERMISSIONS_POLICY,
      'referrer-policy': 'no-referrer',
    },
    // Bytes, encoded once: a kept page is written as it is.
    body: Buffer.from(proxyPage(policy.value.parentOrigin, buildCsp(policy.value, 'inner')), 'utf8'),
  };
}
