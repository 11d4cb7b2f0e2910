import type { Config } from '../config.ts';
import { servedBundle } from '../http/browser-bundles.ts';
import type { Reply } from '../http/reply.ts';
import { route } from '../http/route.ts';
import type { SurfaceDefinition } from '../http/surface.ts';
import { framedSandbox, pageCsp } from '../http/page-csp.ts';
import { DEMO_LOGIN_TOKEN } from '../open-storage.ts';
import { CONSOLE_CSS, CONSOLE_SCRIPT_PATH, CONSOLE_STYLE_PATH, consolePage } from './page.ts';

const PATHS = new Set(['/', CONSOLE_SCRIPT_PATH, CONSOLE_STYLE_PATH]);

/**
 * The console UI on the console origin: the page at `/`, its script and its stylesheet. The edge's
 * sandbox-origin dispatch runs first, so the sandbox origin never reaches it.
 */
export function consoleUiSurface(config: Config): SurfaceDefinition {
  const page = consolePage(config.demo ? DEMO_LOGIN_TOKEN : null, config.oidc?.name ?? null);
  const script = servedBundle('console');
  const noStore = { 'cache-control': 'no-store' };
  // Artifacts shown inline in a thread are framed from the sandbox origin.
  const csp = pageCsp(framedSandbox(config), false);
  return {
    name: 'ui',
    owns: (path) => PATHS.has(path),
    guards: [],
    routes: [
      route({
        method: 'GET', path: '/', summary: 'The console (HTML): sign in, threads, runs as they happen, approvals', operationId: 'consolePage',
        responses: { 200: { description: 'The console page', mediaType: 'text/html' } },
        handle: (): Reply => ({
          status: 200,
          headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp, 'referrer-policy': 'no-referrer', ...noStore },
          body: page,
        }),
      }),
      route({
        method: 'GET', path: CONSOLE_SCRIPT_PATH, summary: "The console's script (JavaScript)", operationId: 'consoleScript',
        responses: { 200: { description: 'The script', mediaType: 'text/javascript' } },
        handle: async (): Promise<Reply> => ({ status: 200, headers: { 'content-type': 'text/javascript; charset=utf-8', ...noStore }, body: await script() }),
      }),
      route({
        method: 'GET', path: CONSOLE_STYLE_PATH, summary: "The console's stylesheet (CSS)", operationId: 'consoleStyle',
        responses: { 200: { description: 'The stylesheet', mediaType: 'text/css' } },
        handle: (): Reply => ({ status: 200, headers: { 'content-type': 'text/css; charset=utf-8', ...noStore }, body: CONSOLE_CSS }),
      }),
    ],
  };
}
