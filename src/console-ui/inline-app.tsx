/**
 * An MCP app artifact shown inline in a thread: the thread-scoped read (`GET /threads/{t}/artifacts/{m}`,
 * so the ledger's visibility and the artifact's owner both decide), hosted in the sandbox by the same
 * host code as the viewer page (tool input and result from the saved artifact, host context, links,
 * display modes, a log panel; every tool call and resource read refused). Closing it, or leaving the
 * thread, tears the app down first. Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { hostApp, type HostedApp } from '../viewer/app-host.ts';
import type { View } from '../viewer/artifact-request.ts';
import { LogPanel } from '../viewer/log-panel.ts';
import { api, problemText } from './api.ts';

type State = 'loading' | 'ready' | 'failed';

/** The thread read's refusals in words a person can act on (the viewer page words its own read the same way). */
function refusal(status: number, detail: string): string {
  if (status === 404 && detail === 'Artifact installation unavailable') return "This app is no longer available: its provider installation is disabled, unauthorized or gone.";
  if (status === 404) return 'This artifact is unavailable to you: only its owner can open it.';
  if (status === 503 && detail === 'Configure a separate artifact sandbox origin') return 'This console has no separate sandbox origin configured, so apps cannot run here.';
  return `The app could not be loaded: ${detail}`;
}

export function InlineApp({ threadId, messageId, title, onClose }: { threadId: string; messageId: string; title: string; onClose: () => void }) {
  const state = useSignal<State>('loading');
  const message = useSignal('Loading the app…');
  const display = useSignal<string>('inline');
  const place = useRef<HTMLDivElement>(null);
  const logPanel = useRef<HTMLDetailsElement>(null);
  const logList = useRef<HTMLOListElement>(null);
  const logSummary = useRef<HTMLElement>(null);
  const hosted = useRef<HostedApp | null>(null);

  useEffect(() => {
    let stopped = false;
    const log = new LogPanel(logPanel.current!, logList.current!, logSummary.current!);
    void (async () => {
      const { data, error, response } = await api.GET('/api/console/threads/{thread_id}/artifacts/{message_id}', {
        params: { path: { thread_id: threadId, message_id: messageId } },
      });
      if (stopped) return;
      if (data === undefined) {
        state.value = 'failed';
        message.value = refusal(response.status, problemText(error, response.status));
        return;
      }
      const app = await hostApp(data as unknown as View, place.current!, {
        log,
        ready: () => { if (!stopped) state.value = 'ready'; },
        failed: (text) => {
          if (stopped) return;
          state.value = 'failed';
          message.value = text;
        },
        displayModeChanged: (mode) => { display.value = mode; },
      });
      if (stopped) await app.close();
      else hosted.current = app;
    })();
    return () => {
      stopped = true;
      void hosted.current?.close();
      hosted.current = null;
    };
  }, [threadId, messageId]);

  useEffect(() => {
    if (display.value !== 'fullscreen') return;
    const escape = (event: KeyboardEvent) => { if (event.key === 'Escape') hosted.current?.setDisplayMode('inline'); };
    document.addEventListener('keydown', escape);
    return () => document.removeEventListener('keydown', escape);
  }, [display.value]);

  return (
    <figure class="inline-app" data-state={state.value} data-display={display.value} aria-label={`App: ${title}`}>
      <figcaption>
        <span>{title}</span>
        <button type="button" onClick={onClose}>Close app</button>
      </figcaption>
      {state.value !== 'ready' && <p role="status" class={state.value === 'failed' ? 'error' : 'hint'}>{message.value}</p>}
      <div class="app-frame" ref={place} />
      {display.value === 'fullscreen' && <button type="button" class="exit-full" onClick={() => hosted.current?.setDisplayMode('inline')}>Exit full window</button>}
      <details class="app-log" ref={logPanel} hidden><summary ref={logSummary}>App log</summary><ol ref={logList} aria-live="polite" /></details>
    </figure>
  );
}
