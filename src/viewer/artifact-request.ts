/*
 * The viewer's calls to the console API, all same-origin with the session cookie: the artifact's view
 * (McpAppView) and overview (McpAppOverview), and sign-in. Each answer becomes something the page can
 * show: a view, a request to sign in, or a message for the status line. Browser code.
 */

/** The parts of McpAppView the viewer uses. */
export interface View {
  readonly artifact: { readonly title?: unknown; readonly tool?: unknown; readonly input?: unknown; readonly output?: unknown };
  readonly resource: { readonly text: string; readonly ui?: { readonly csp?: unknown } };
  readonly sandbox_origin: string;
  readonly sandbox_url: string;
}

/** What a load came to. */
export type Loaded =
  | { readonly kind: 'view'; readonly view: View }
  | { readonly kind: 'sign-in'; readonly message: string }
  | { readonly kind: 'unavailable' | 'failed'; readonly message: string };

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function isView(value: unknown): value is View {
  if (!isRecord(value) || !isRecord(value.artifact) || !isRecord(value.resource)) return false;
  if (typeof value.resource.text !== 'string' || typeof value.sandbox_origin !== 'string') return false;
  // The frame may only ever load a page on the sandbox origin.
  return typeof value.sandbox_url === 'string' && value.sandbox_url.startsWith(`${value.sandbox_origin}/`);
}

const get = (path: string): Promise<Response> =>
  fetch(path, { credentials: 'same-origin', headers: { accept: 'application/json' }, cache: 'no-store' });

/** "in 12 seconds" from a Retry-After header, or "later". */
function retryAfter(response: Response): string {
  const seconds = Number(response.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds > 0 ? `in ${Math.ceil(seconds)} seconds` : 'later';
}

/** The details the console's problems carry (docs/errors.md) that the viewer words differently. */
const INSTALLATION_GONE = 'Artifact installation unavailable';
const NO_SANDBOX = 'Configure a separate artifact sandbox origin';

/** A problem's `detail` (else its `title`), when the body is one. */
const detailOf = (body: unknown): string | null =>
  !isRecord(body) ? null : typeof body.detail === 'string' ? body.detail : typeof body.title === 'string' ? body.title : null;

/** The message for each error status of the artifact read, in words a person can act on. */
function refusal(response: Response, body: unknown): Loaded {
  const detail = detailOf(body);
  switch (response.status) {
    case 401:
      return { kind: 'sign-in', message: 'Sign in to the console to see this artifact.' };
    case 403:
      return { kind: 'failed', message: 'The console refused this request from the page. Open the viewer from the console itself.' };
    case 404:
      return detail === INSTALLATION_GONE
        ? { kind: 'unavailable', message: "This artifact's app is no longer available: its provider installation is disabled, unauthorized or gone." }
        : { kind: 'unavailable', message: 'This artifact is unavailable.' };
    case 429:
      return { kind: 'failed', message: `Too many requests. Try again ${retryAfter(response)}.` };
    case 502:
      return { kind: 'failed', message: `The artifact could not be loaded: ${detail ?? 'its provider did not deliver the app'}` };
    case 503:
      return detail === NO_SANDBOX
        ? { kind: 'failed', message: 'This console has no separate sandbox origin configured, so apps cannot run here.' }
        : { kind: 'failed', message: `The console is unavailable. Try again ${retryAfter(response)}.` };
    case 504:
      return { kind: 'failed', message: "The artifact could not be loaded: its provider did not answer in time." };
    default:
      return { kind: 'failed', message: `The artifact could not be loaded: ${detail ?? `HTTP ${response.status}`}` };
  }
}

/** GET /api/artifacts/{id}: the view, fetched anew (the console fetches the UI resource afresh each time). */
export async function loadView(artifactId: string): Promise<Loaded> {
  let response: Response;
  try {
    response = await get(`/api/artifacts/${encodeURIComponent(artifactId)}`);
  } catch {
    return { kind: 'failed', message: 'The console could not be reached.' };
  }
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) return refusal(response, body);
  return isView(body) ? { kind: 'view', view: body } : { kind: 'failed', message: 'The artifact could not be loaded: unexpected answer.' };
}

/** The overview's provider name, or null when it cannot be had (the view still loads without it). */
export async function loadProviderName(artifactId: string): Promise<string | null> {
  try {
    const response = await get(`/api/artifacts/${encodeURIComponent(artifactId)}/overview`);
    const body: unknown = response.ok ? await response.json() : null;
    return isRecord(body) && typeof body.provider_name === 'string' ? body.provider_name : null;
  } catch {
    return null;
  }
}

/** POST /api/session: null when signed in, else the message to show. */
export async function signIn(token: string): Promise<string | null> {
  let response: Response;
  try {
    response = await fetch('/api/session', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ token }),
    });
  } catch {
    return 'The console could not be reached.';
  }
  if (response.ok) return null;
  if (response.status === 429) return `Too many sign-in attempts. Try again ${retryAfter(response)}.`;
  if (response.status === 401 || response.status === 422) return 'That token was not accepted.';
  return `Sign-in failed: HTTP ${response.status}.`;
}
