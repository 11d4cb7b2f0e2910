/*
 * The artifact viewer page's script: browser code, bundled by esbuild for `GET /assets/viewer.js`,
 * never run by Node. It loads the caller's artifact (McpAppView) with the session cookie, frames the
 * sandbox proxy on the sandbox origin, hands it the app's HTML as data, and then hosts the app with
 * the MCP Apps host protocol (ext-apps' AppBridge): the saved input and output go to the app as tool
 * input and tool result. No tool is ever called: the bridge offers none, so `tools/call` (and every
 * other host request it does not handle) is answered with JSON-RPC's "method not found" error.
 */
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** How long the sandbox proxy may take to say it is ready before the viewer gives up. */
const PROXY_READY_TIMEOUT_MS = 15_000;
/** An app cannot grow its frame past this, whatever size it asks for. */
const MAX_HEIGHT_PX = 10_000;
const HOST_INFO = { name: 'agent-console-viewer', version: '0.1.0' };

/** The viewer's states, mirrored on `<html data-state>` for styles and tests. */
type State = 'loading' | 'unavailable' | 'failed' | 'ready';

/** The parts of McpAppView the viewer uses. */
interface View {
  readonly artifact: { readonly title?: unknown; readonly input?: unknown; readonly output?: unknown };
  readonly resource: { readonly text: string; readonly ui?: { readonly csp?: unknown } };
  readonly sandbox_origin: string;
  readonly sandbox_url: string;
}

const root = document.documentElement;
const status = document.getElementById('status')!;
const place = document.getElementById('app')!;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Shows a state; the message is always text (a problem's detail comes from the network). */
function show(state: State, message: string): void {
  root.dataset.state = state;
  status.textContent = message;
  status.hidden = message === '';
}

function isView(value: unknown): value is View {
  if (!isRecord(value) || !isRecord(value.artifact) || !isRecord(value.resource)) return false;
  if (typeof value.resource.text !== 'string' || typeof value.sandbox_origin !== 'string') return false;
  // The frame may only ever load a page on the sandbox origin.
  return typeof value.sandbox_url === 'string' && value.sandbox_url.startsWith(`${value.sandbox_origin}/`);
}

/** Shows a final state and answers null, for `load`. */
const stop = (state: State, message: string): null => (show(state, message), null);

/** GET /api/artifacts/{id} with the session cookie; null once a state other than loading is shown. */
async function load(artifactId: string): Promise<View | null> {
  let response: Response;
  try {
    response = await fetch(`/api/artifacts/${encodeURIComponent(artifactId)}`, {
      credentials: 'same-origin',
      headers: { accept: 'application/json' },
    });
  } catch {
    return stop('failed', 'The console could not be reached.');
  }
  if (response.status === 401) return stop('unavailable', 'Sign in to the console to see this artifact.');
  if (response.status === 404) return stop('unavailable', 'This artifact is unavailable.');
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const detail = isRecord(body) && typeof body.detail === 'string' ? body.detail : `HTTP ${response.status}`;
    return stop('failed', `The artifact could not be loaded: ${detail}`);
  }
  if (!isView(body)) return stop('failed', 'The artifact could not be loaded: unexpected answer.');
  return body;
}

/** The saved output as a tool result, or null when it is not an MCP `CallToolResult`. */
const toolResult = (output: unknown): CallToolResult | null =>
  isRecord(output) && Array.isArray(output.content) ? (output as CallToolResult) : null;

/** Frames the sandbox proxy and hosts the app in it through the MCP Apps host protocol. */
async function run(view: View): Promise<void> {
  const origin = view.sandbox_origin;
  if (typeof view.artifact.title === 'string') document.title = view.artifact.title;
  const frame = document.createElement('iframe');
  frame.title = typeof view.artifact.title === 'string' ? view.artifact.title : 'MCP app';
  // The proxy needs its own origin (allow-same-origin) to be posted to by origin; the app inside it
  // gets scripts only, since nested sandbox flags can only narrow.
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin');
  frame.referrerPolicy = 'no-referrer';
  place.appendChild(frame);
  const target = frame.contentWindow!; // the frame's WindowProxy: the same object across its navigations

  // PostMessageTransport checks a message's source window but not its origin: anything from this
  // frame that is not on the sandbox origin is stopped here, before the transport's listener runs.
  window.addEventListener('message', (event) => {
    if (event.source === target && event.origin !== origin) event.stopImmediatePropagation();
  });
  // ...and it posts with "*": the target here pins every message to the sandbox origin instead.
  const exact = { postMessage: (message: unknown) => target.postMessage(message, origin) } as unknown as Window;

  const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
  const hostContext = {
    theme: dark ? 'dark' : 'light',
    displayMode: 'inline',
    availableDisplayModes: ['inline'],
    platform: 'web',
    locale: navigator.language,
  };
  // No MCP client and no capabilities: the app is offered no tools, resources, links or messages.
  const bridge = new AppBridge(null, HOST_INFO, {}, { hostContext });
  const transport = new PostMessageTransport(exact, target);
  const timer = setTimeout(() => {
    show('failed', 'The artifact could not be loaded: the sandbox did not answer.');
    frame.remove();
    void transport.close();
  }, PROXY_READY_TIMEOUT_MS);
  bridge.onsandboxready = () => {
    clearTimeout(timer);
    const csp = isRecord(view.resource.ui?.csp) ? view.resource.ui.csp : undefined;
    void bridge.sendSandboxResourceReady({ html: view.resource.text, ...(csp === undefined ? {} : { csp }) });
  };
  bridge.oninitialized = () => {
    show('ready', '');
    void bridge.sendToolInput({ arguments: isRecord(view.artifact.input) ? view.artifact.input : {} });
    const result = toolResult(view.artifact.output);
    if (result !== null) void bridge.sendToolResult(result);
    else void bridge.sendToolCancelled({ reason: 'The saved result is not an MCP tool result.' });
  };
  bridge.onsizechange = ({ height }) => {
    if (typeof height === 'number' && Number.isFinite(height) && height >= 0) {
      frame.style.height = `${Math.ceil(Math.min(height, MAX_HEIGHT_PX))}px`;
    }
  };
  // Listening before the frame loads: the proxy's ready notification must not be missed.
  await bridge.connect(transport);
  frame.src = view.sandbox_url;
}

async function main(): Promise<void> {
  const artifactId = root.getAttribute('data-artifact-id');
  if (artifactId === null || artifactId === '') return show('unavailable', 'This artifact is unavailable.');
  show('loading', 'Loading the artifact…');
  const view = await load(artifactId);
  if (view !== null) await run(view);
}

main().catch(() => show('failed', 'The artifact could not be loaded.'));
