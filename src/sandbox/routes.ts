import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { buildCsp } from '../../domain/csp.ts';
import { sameOrigin, parseOrigin } from '../../domain/origin.ts';
import { parseSandboxPolicyText, SANDBOX_PAGE_PATH, SANDBOX_SCRIPT_PATH } from '../../domain/sandbox-policy.ts';
import { problem, type Reply } from '../http/reply.ts';
import { route } from '../http/route.ts';
import type { SurfaceDefinition } from '../http/surface.ts';
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

/** The sandbox origin's surface: the proxy page and its script, and nothing else. */
export function sandboxSurface(): SurfaceDefinition {
  // ASCII only (a test checks), so it needs no charset parameter.
  const script = readFileSync(new URL('./proxy.js', import.meta.url));

  const page = route({
    method: 'GET',
    path: SANDBOX_PAGE_PATH,
    summary: 'The MCP app sandbox proxy page (served on the sandbox origin only)',
    query: PolicyQuery,
    responses: { 200: 'The proxy page', 422: 'The policy is too long, invalid, or names this origin as its parent' },
    handle: ({ query, ctx }): Reply => {
      const policy = parseSandboxPolicyText(query.policy);
      if (!policy.ok) return problem({ code: 'validation_failed', errors: policy.error });
      const parent = parseOrigin(policy.value.parentOrigin);
      if (parent !== null && ctx.origin !== null && sameOrigin(parent, ctx.origin)) {
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
        body: proxyPage(policy.value.parentOrigin, buildCsp(policy.value, 'inner')),
      };
    },
  });

  const proxyScript = route({
    method: 'GET',
    path: SANDBOX_SCRIPT_PATH,
    summary: "The sandbox proxy page's script (served on the sandbox origin only)",
    responses: { 200: 'The script' },
    handle: (): Reply => ({ status: 200, headers: { 'content-type': 'text/javascript' }, body: script }),
  });

  return {
    name: 'sandbox',
    owns: () => true,
    guards: [],
    routes: [page, proxyScript],
    headers: { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' },
  };
}
