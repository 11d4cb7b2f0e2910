import * as v from 'valibot';
import { UUID_PATTERN } from '../../domain/vocabulary.ts';
import type { Config } from '../config.ts';
import { servedBundle } from '../http/browser-bundles.ts';
import { problem, type Reply } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import type { SurfaceDefinition } from '../http/surface.ts';
import { framedSandbox, pageCsp } from '../http/page-csp.ts';
import { escapeAttribute } from '../sandbox/proxy-page.ts';

/** Where the viewer page loads its script from (same origin: the page's CSP allows `'self'` only). */
export const VIEWER_SCRIPT_PATH = '/assets/viewer.js';

/**
 * The viewer page: no inline script and no artifact data, only the artifact id as an escaped
 * attribute that the script reads. The app's HTML never enters this document; it reaches the
 * sandbox as postMessage data. The page carries its controls (sign-in form, reload, the exit from
 * full-window display, the log panel) hidden until the script needs them.
 */
export function viewerPage(artifactId: string): string {
  return `<!DOCTYPE html>
<html lang="en" data-artifact-id="${escapeAttribute(artifactId)}" data-state="loading" data-display="inline">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>Artifact</title>
<style>
:root{--bg:#f4f7fb;--fg:#1b2430;--muted:#5b6776;--line:#c9d2dd;--danger:#a4262c;--panel:#fff;--accent:#1f5fbf}
@media (prefers-color-scheme:dark){:root{--bg:#0f1318;--fg:#e9eef4;--muted:#9aa5b2;--line:#3a4450;--danger:#f28b8f;--panel:#161b22;--accent:#8ab4f8}}
body{margin:0;font:15px/1.4 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:960px;margin:0 auto;padding:16px}
header{display:flex;gap:12px;align-items:flex-start;justify-content:space-between;flex-wrap:wrap}
h1{font-size:20px;margin:0}
#meta{margin:2px 0 0;color:var(--muted);font-size:13px}
button{font:inherit;padding:6px 12px;border:1px solid var(--line);border-radius:6px;background:var(--panel);color:var(--fg);cursor:pointer}
button:focus-visible,input:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
#status{margin:24px 0;color:var(--muted)}
html[data-state=failed] #status{color:var(--danger)}
form{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:8px 0 24px}
form label{width:100%;font-weight:600}
form input{font:inherit;padding:6px 8px;border:1px solid var(--line);border-radius:6px;background:var(--panel);color:var(--fg);min-width:16em;flex:1 1 16em}
#sign-in-error{width:100%;margin:0;color:var(--danger)}
#sign-in-error:empty{display:none}
#app{margin-top:12px}
#app iframe{display:block;width:100%;height:320px;border:0;background:transparent}
html[data-display=fullscreen] #app iframe{position:fixed;inset:0;width:100vw;height:100vh!important;min-width:0!important;z-index:10;background:var(--bg)}
#exit-full{position:fixed;top:8px;right:8px;z-index:11}
#log{margin-top:16px;border:1px solid var(--line);border-radius:6px;background:var(--panel);padding:6px 10px}
#log summary{cursor:pointer;color:var(--muted)}
#log ol{margin:6px 0 0;padding:0;list-style:none;max-height:240px;overflow:auto;font:12px/1.5 ui-monospace,monospace}
#log li{white-space:pre-wrap;word-break:break-word}
#log .level{font-weight:600;text-transform:uppercase}
#log li[data-level=error] .level,#log li[data-level=critical] .level,#log li[data-level=alert] .level,#log li[data-level=emergency] .level{color:var(--danger)}
[hidden]{display:none!important}
</style>
<script src="${VIEWER_SCRIPT_PATH}" defer></script>
</head>
<body>
<main>
<header>
<div><h1 id="title">Artifact</h1><p id="meta"></p></div>
<div><button id="reload" type="button" hidden>Reload</button></div>
</header>
<p id="status" role="status" aria-live="polite">Loading the artifact…</p>
<form id="sign-in" hidden>
<label for="token">Sign in with your console access token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
<p id="sign-in-error" role="alert"></p>
</form>
<div id="app"></div>
<button id="exit-full" type="button" hidden>Exit full window</button>
<details id="log" hidden><summary id="log-summary">App log</summary><ol id="log-list" aria-live="polite"></ol></details>
</main>
</body>
</html>
`;
}

/** `GET {viewerPath}/:artifact_id` (the viewer page) and `GET /assets/viewer.js` (its script). */
export function viewerRoutes(config: Config): Route[] {
  const pageHeaders = {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-security-policy': pageCsp(framedSandbox(config), true),
  };
  const script = servedBundle('viewer');

  return [
    route({
      method: 'GET',
      path: `${config.viewerPath}/:artifact_id`,
      summary: "The artifact viewer page: hosts an owned artifact's MCP app in the sandbox (HTML)",
      // Any text: the handler, not the schema, decides, so a malformed id is a 404 rather than a 422.
      // The description still says what an id is (a UUID), as for every id in a path.
      params: v.object({ artifact_id: v.pipe(v.string(), v.metadata({ format: 'uuid' })) }),
      operationId: 'viewerPage',
      responses: { 200: { description: 'The viewer page', mediaType: 'text/html' }, 404: 'The id is not a UUID' },
      handle: ({ params }): Reply => {
        const id = params.artifact_id;
        // A page, not an API: a malformed id is a page that does not exist, not a validation error.
        if (!UUID_PATTERN.test(id)) return problem({ code: 'not_found' }, { 'cache-control': 'no-store' });
        return { status: 200, headers: pageHeaders, body: viewerPage(id.toLowerCase()) };
      },
    }),
    route({
      method: 'GET',
      path: VIEWER_SCRIPT_PATH,
      summary: "The artifact viewer page's script (JavaScript)",
      operationId: 'viewerScript',
      responses: { 200: { description: 'The script', mediaType: 'text/javascript' } },
      handle: async (): Promise<Reply> => ({
        status: 200,
        headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' },
        body: await script(),
      }),
    }),
  ];
}

/**
 * The viewer's surface on the console origin: the viewer path prefix and `/assets/`. The edge's
 * sandbox-origin dispatch runs first, so the sandbox origin never reaches it.
 */
export function viewerSurface(config: Config): SurfaceDefinition {
  const prefix = `${config.viewerPath}/`;
  return {
    name: 'viewer',
    owns: (path) => path.startsWith(prefix) || path === VIEWER_SCRIPT_PATH,
    guards: [],
    routes: viewerRoutes(config),
  };
}
