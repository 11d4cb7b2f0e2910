/*
 * The artifact viewer page's script: browser code, bundled by esbuild for `GET /assets/viewer.js`,
 * never run by Node. It loads the caller's artifact (McpAppView) with the session cookie, shows its
 * title, provider and tool, and hosts its app in the sandbox (app-host.ts). Signed out, it offers a
 * sign-in form; Reload tears the app down and fetches the resource anew; each error status gets a
 * message of its own (artifact-request.ts).
 */
import { loadProviderName, loadView, signIn, type View } from './artifact-request.ts';
import { hostApp, type HostedApp } from './app-host.ts';
import { LogPanel } from './log-panel.ts';

/** The viewer's states, mirrored on `<html data-state>` for styles and tests. */
type State = 'loading' | 'signed-out' | 'unavailable' | 'failed' | 'ready';

const root = document.documentElement;
const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const status = byId<HTMLParagraphElement>('status');
const place = byId<HTMLDivElement>('app');
const heading = byId<HTMLHeadingElement>('title');
const meta = byId<HTMLParagraphElement>('meta');
const reload = byId<HTMLButtonElement>('reload');
const exitFull = byId<HTMLButtonElement>('exit-full');
const form = byId<HTMLFormElement>('sign-in');
const tokenInput = byId<HTMLInputElement>('token');
const signInError = byId<HTMLParagraphElement>('sign-in-error');
const log = new LogPanel(byId<HTMLDetailsElement>('log'), byId<HTMLOListElement>('log-list'), byId('log-summary'));

/** Shows a state; the message is always text (a problem's detail comes from the network). */
function show(state: State, message: string): void {
  root.dataset.state = state;
  status.textContent = message;
  status.hidden = message === '';
  form.hidden = state !== 'signed-out';
  reload.hidden = state === 'loading' || state === 'signed-out';
}

/** Title, provider and tool, as text. */
function describe(view: View, provider: string | null): void {
  const title = typeof view.artifact.title === 'string' && view.artifact.title !== '' ? view.artifact.title : 'Artifact';
  heading.textContent = title;
  document.title = title;
  const tool = typeof view.artifact.tool === 'string' ? view.artifact.tool : null;
  meta.textContent = [provider, tool === null ? null : `tool ${tool}`].filter((part) => part !== null).join(' · ');
}

let hosted: HostedApp | null = null;
let generation = 0;

/** Loads the artifact anew and hosts its app, after tearing down the one shown. */
async function open(artifactId: string): Promise<void> {
  const mine = ++generation;
  const previous = hosted;
  hosted = null;
  show('loading', 'Loading the artifact…');
  await previous?.close();
  log.clear();
  const [loaded, provider] = await Promise.all([loadView(artifactId), loadProviderName(artifactId)]);
  if (mine !== generation) return; // a newer reload took over
  if (loaded.kind === 'sign-in') {
    show('signed-out', loaded.message);
    tokenInput.focus();
    return;
  }
  if (loaded.kind !== 'view') return show(loaded.kind, loaded.message);
  describe(loaded.view, provider);
  const app = await hostApp(loaded.view, place, {
    log,
    ready: () => {
      if (mine === generation) show('ready', '');
    },
    failed: (message) => {
      if (mine === generation) show('failed', message);
    },
    displayModeChanged: (mode) => {
      root.dataset.display = mode;
      exitFull.hidden = mode !== 'fullscreen';
      if (mode === 'fullscreen') exitFull.focus();
    },
  });
  if (mine === generation) hosted = app;
  else await app.close();
}

function main(): void {
  const artifactId = root.getAttribute('data-artifact-id');
  if (artifactId === null || artifactId === '') return show('unavailable', 'This artifact is unavailable.');
  const start = () => open(artifactId).catch(() => show('failed', 'The artifact could not be loaded.'));
  reload.addEventListener('click', () => void start());
  exitFull.addEventListener('click', () => hosted?.setDisplayMode('inline'));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && root.dataset.display === 'fullscreen') hosted?.setDisplayMode('inline');
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    signInError.textContent = '';
    const token = tokenInput.value.trim();
    if (token === '') return;
    void signIn(token).then((refused) => {
      if (refused !== null) {
        signInError.textContent = refused;
        tokenInput.select();
        return;
      }
      tokenInput.value = '';
      void start();
    });
  });
  // The app is asked to tear down before the page goes away (the request leaves synchronously).
  window.addEventListener('pagehide', () => void hosted?.close());
  void start();
}

main();
