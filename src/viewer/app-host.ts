/*
 * Hosting one app: frames the sandbox proxy on the sandbox origin, hands it the app's HTML as data,
 * and speaks the MCP Apps host protocol with it through ext-apps' AppBridge. What the viewer offers:
 * tool input and result from the saved artifact; host context (theme, style variables, dimensions,
 * locale, time zone, platform, tool info) and its changes; `ui/open-link` (http and https, opened
 * by this page with `noopener`); display modes inline and fullscreen (laid out over the window,
 * never the browser's Fullscreen API); size changes; log messages to the log panel; teardown.
 * What it refuses, promptly and with a JSON-RPC error: every tool call, resource read and listing
 * (no endpoint executes a tool or reads a caller-chosen resource), `ui/message` and
 * `ui/update-model-context` (a saved artifact has no conversation). Browser code.
 */
import { AppBridge, PostMessageTransport, type McpUiDisplayMode, type McpUiResourceCsp } from '@modelcontextprotocol/ext-apps/app-bridge';
import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/client';
import { isRecord, type View } from './artifact-request.ts';
import { DISPLAY_MODES, hostContext, MAX_HEIGHT_PX, type PageFacts, type Theme } from './host-context.ts';
import { openableLink } from './links.ts';
import type { LogPanel } from './log-panel.ts';

/** How long the sandbox proxy may take to say it is ready before the viewer gives up. */
const PROXY_READY_TIMEOUT_MS = 15_000;
/** How long an app may take to answer `ui/resource-teardown` before its frame is removed anyway. */
const TEARDOWN_TIMEOUT_MS = 1_000;
const HOST_INFO = { name: 'agent-console-viewer', version: '0.2.0' };

export interface HostedApp {
  /** Asks the app to tear down (bounded wait), then removes its frame and closes the channel. */
  close(): Promise<void>;
  /** Switches the display mode from the page (the "exit full window" control). */
  setDisplayMode(mode: McpUiDisplayMode): void;
}

export interface HostCallbacks {
  readonly log: LogPanel;
  /** The app finished `ui/initialize`. */
  ready(): void;
  /** The app cannot run; the message is shown as text. */
  failed(message: string): void;
  /** The display mode changed (the page lays the frame out for it). */
  displayModeChanged(mode: McpUiDisplayMode): void;
}

/** The saved output as a tool result, or null when it is not an MCP `CallToolResult`. */
const toolResult = (output: unknown): CallToolResult | null =>
  isRecord(output) && Array.isArray(output.content) ? (output as CallToolResult) : null;

/** The CSP the console approved: the policy in the sandbox URL (entries it dropped are not in it). */
function approvedCsp(sandboxUrl: string): McpUiResourceCsp | undefined {
  try {
    const policy: unknown = JSON.parse(new URL(sandboxUrl).searchParams.get('policy') ?? 'null');
    return isRecord(policy) && isRecord(policy.csp) ? (policy.csp as McpUiResourceCsp) : undefined;
  } catch {
    return undefined;
  }
}

const refuse = (what: string, why: string) => (): never => {
  throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `${what} is not supported here: ${why}`);
};
const NO_TOOLS = 'the console never runs a tool or reads a resource for a saved artifact';
const NO_CONVERSATION = 'a saved artifact has no conversation';

export async function hostApp(view: View, place: HTMLElement, callbacks: HostCallbacks): Promise<HostedApp> {
  const origin = view.sandbox_origin;
  const title = typeof view.artifact.title === 'string' ? view.artifact.title : 'MCP app';
  const toolName = typeof view.artifact.tool === 'string' ? view.artifact.tool : null;
  const frame = document.createElement('iframe');
  frame.title = title;
  // The proxy needs its own origin (allow-same-origin) to be posted to by origin; the app inside it
  // gets scripts only, since nested sandbox flags can only narrow. No `allow`: no fullscreen, camera…
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin');
  frame.referrerPolicy = 'no-referrer';
  place.appendChild(frame);
  const target = frame.contentWindow!; // the frame's WindowProxy: the same object across its navigations

  // PostMessageTransport checks a message's source window but not its origin: anything from this
  // frame that is not on the sandbox origin is stopped here, before the transport's listener runs.
  const guard = (event: MessageEvent) => {
    if (event.source === target && event.origin !== origin) event.stopImmediatePropagation();
  };
  window.addEventListener('message', guard);
  // ...and it posts with "*": the target here pins every message to the sandbox origin instead.
  const exact = { postMessage: (message: unknown) => target.postMessage(message, origin) } as unknown as Window;

  const darkQuery = window.matchMedia('(prefers-color-scheme: dark)');
  let displayMode: McpUiDisplayMode = 'inline';
  const facts = (): PageFacts => ({
    theme: (darkQuery.matches ? 'dark' : 'light') satisfies Theme,
    displayMode,
    width: displayMode === 'fullscreen' ? window.innerWidth : place.getBoundingClientRect().width,
    windowHeight: window.innerHeight,
    locale: navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    touch: window.matchMedia('(pointer: coarse)').matches,
    hover: window.matchMedia('(hover: hover)').matches,
  });
  const tool = toolName === null ? null : { name: toolName, title };
  const csp = approvedCsp(view.sandbox_url);
  const bridge = new AppBridge(
    null,
    HOST_INFO,
    { openLinks: {}, logging: {}, ...(csp === undefined ? {} : { sandbox: { csp } }) },
    { hostContext: hostContext(facts(), tool) },
  );
  let initialized = false;
  let closed = false;
  /** Sends what changed in the context; before `initialized`, the app gets it all at once then. */
  const refresh = () => {
    if (initialized && !closed) bridge.setHostContext(hostContext(facts(), tool));
  };
  let frameRequested = false;
  const onResize = () => {
    if (frameRequested) return;
    frameRequested = true;
    requestAnimationFrame(() => {
      frameRequested = false;
      refresh();
    });
  };
  darkQuery.addEventListener('change', refresh);
  window.addEventListener('resize', onResize);

  const setDisplayMode = (mode: McpUiDisplayMode) => {
    if (!DISPLAY_MODES.includes(mode) || mode === displayMode) return;
    displayMode = mode;
    callbacks.displayModeChanged(mode);
    refresh();
  };

  bridge.onopenlink = async ({ url }) => {
    const link = openableLink(url);
    if (link === null) return { isError: true };
    // Never this page: a new browsing context with no way back to the viewer.
    window.open(link.href, '_blank', 'noopener,noreferrer');
    return {};
  };
  bridge.onrequestdisplaymode = async ({ mode }) => {
    setDisplayMode(mode);
    return { mode: displayMode };
  };
  bridge.onloggingmessage = (params) => callbacks.log.add(params);
  bridge.onsizechange = ({ width, height }) => {
    if (typeof height === 'number' && Number.isFinite(height) && height >= 0) {
      frame.style.height = `${Math.ceil(Math.min(height, MAX_HEIGHT_PX))}px`;
    }
    // The width an app asks for, within the page's: the frame never overflows the viewer.
    if (typeof width === 'number' && Number.isFinite(width) && width > 0) {
      frame.style.minWidth = `min(${Math.ceil(width)}px, 100%)`;
    }
  };
  bridge.onrequestteardown = () => void close();
  bridge.oncalltool = refuse('tools/call', NO_TOOLS);
  bridge.onreadresource = refuse('resources/read', NO_TOOLS);
  bridge.onlistresources = refuse('resources/list', NO_TOOLS);
  bridge.onlistresourcetemplates = refuse('resources/templates/list', NO_TOOLS);
  bridge.onlistprompts = refuse('prompts/list', NO_TOOLS);
  bridge.onmessage = refuse('ui/message', NO_CONVERSATION);
  bridge.onupdatemodelcontext = refuse('ui/update-model-context', NO_CONVERSATION);

  const transport = new PostMessageTransport(exact, target);
  const timer = setTimeout(() => {
    callbacks.failed('The artifact could not be loaded: the sandbox did not answer.');
    void close();
  }, PROXY_READY_TIMEOUT_MS);
  bridge.onsandboxready = () => {
    clearTimeout(timer);
    const declared = isRecord(view.resource.ui?.csp) ? view.resource.ui.csp : undefined;
    void bridge.sendSandboxResourceReady({ html: view.resource.text, ...(declared === undefined ? {} : { csp: declared }) });
  };
  bridge.oninitialized = () => {
    initialized = true;
    callbacks.ready();
    refresh(); // anything that changed while the app started
    void bridge.sendToolInput({ arguments: isRecord(view.artifact.input) ? view.artifact.input : {} });
    const result = toolResult(view.artifact.output);
    if (result !== null) void bridge.sendToolResult(result);
    else void bridge.sendToolCancelled({ reason: 'The saved result is not an MCP tool result.' });
  };

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    return (closing ??= (async () => {
      clearTimeout(timer);
      if (initialized && !closed) {
        await Promise.race([
          bridge.teardownResource({}).catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, TEARDOWN_TIMEOUT_MS)),
        ]);
      }
      closed = true;
      darkQuery.removeEventListener('change', refresh);
      window.removeEventListener('resize', onResize);
      window.removeEventListener('message', guard);
      await bridge.close().catch(() => undefined);
      frame.remove();
      setDisplayMode('inline');
    })());
  }

  // Listening before the frame loads: the proxy's ready notification must not be missed.
  await bridge.connect(transport);
  frame.src = view.sandbox_url;
  return { close, setDisplayMode: (mode) => { if (!closed) setDisplayMode(mode); } };
}
