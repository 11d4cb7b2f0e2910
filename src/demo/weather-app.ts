import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The demo's UI resource address. */
export const WEATHER_APP_URI = 'ui://weather/forecast';

/** The MIME type of an MCP Apps UI resource. */
export const MCP_APP_MIME = 'text/html;profile=mcp-app';

/**
 * The resource's `_meta.ui`: the only origin the view may connect to, and no other. Browser tests rely
 * on it: the view's own fetch of an undeclared origin must be blocked by the CSP the host builds from it.
 */
export const WEATHER_APP_UI = {
  csp: { connectDomains: ['https://api.open-meteo.com'], resourceDomains: [] },
  prefersBorder: true,
} as const;

/**
 * The view, as the esbuild entry. It speaks the MCP Apps view side through ext-apps' `App` (which
 * runs `ui/initialize` with `window.parent`) and mirrors its state on `document.body.dataset`, which
 * is what browser tests read. The undeclared fetch is the CSP probe: `blocked` when it throws, and a
 * `securitypolicyviolation` event tells a CSP block from a plain network failure.
 */
const VIEW_SOURCE = `
import { App } from '@modelcontextprotocol/ext-apps/app-with-deps';

const data = document.body.dataset;
const show = (id, text) => { document.getElementById(id).textContent = text; };

document.addEventListener('securitypolicyviolation', (event) => {
  data.cspViolation = event.effectiveDirective || event.violatedDirective;
});

const app = new App({ name: 'weather-card', version: '1.0.0' }, {});
app.ontoolinput = (params) => {
  const city = String((params.arguments || {}).city || '');
  data.city = city;
  show('city', city);
};
app.ontoolresult = (result) => {
  const forecast = result.structuredContent || {};
  const text = (result.content || []).find((item) => item.type === 'text');
  const summary = String(forecast.summary || (text ? text.text : ''));
  data.summary = summary;
  show('summary', summary);
  if (typeof forecast.temperature_c === 'number') {
    data.temperature = String(forecast.temperature_c);
    show('temperature', forecast.temperature_c + ' °C');
  }
  if (forecast.city && !data.city) { data.city = String(forecast.city); show('city', data.city); }
};
app.connect().then(
  () => { data.initialized = 'true'; },
  (error) => { data.initialized = 'false'; data.error = String(error && error.message || error); },
);

fetch('https://example.com/').then(
  () => { data.undeclaredFetch = 'allowed'; },
  () => { data.undeclaredFetch = 'blocked'; },
);
`;

/**
 * Makes script text safe inside an inline `<script>`: `</script` would end the element and `<!--`
 * could switch the HTML parser into its escaped script states. `\x3C` reads as `<` in the string,
 * template and regular-expression literals where minified code can hold such text.
 */
export const escapeInlineScript = (js: string): string => js.replace(/<(?=\/script|!--)/gi, '\\x3C');

/** Bundles the view with ext-apps into one IIFE (esbuild's build API), escaped for inlining. */
export async function buildWeatherAppScript(): Promise<string> {
  const result = await build({
    stdin: { contents: VIEW_SOURCE, resolveDir: fileURLToPath(new URL('.', import.meta.url)), loader: 'js' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error('esbuild produced no output for the weather app');
  return escapeInlineScript(output.text);
}

/** The self-contained weather card: no external resource, the bundled script inline at the end of body. */
export function weatherAppHtml(script: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Forecast</title>
<style>
  body { margin: 0; font: 15px/1.4 system-ui, sans-serif; color: #1b2430; background: #f4f7fb; }
  .card { margin: 12px; padding: 16px 20px; border-radius: 12px; background: #fff; box-shadow: 0 1px 3px #0002; }
  h1 { margin: 0 0 4px; font-size: 18px; }
  .temp { font-size: 32px; font-weight: 600; }
  .muted { color: #5b6776; }
</style>
</head>
<body>
<div class="card">
  <h1 id="city" class="muted">Waiting for a city…</h1>
  <div id="temperature" class="temp"></div>
  <div id="summary" class="muted"></div>
</div>
<script>${script}</script>
</body>
</html>
`;
}
