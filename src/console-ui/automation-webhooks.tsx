/**
 * The automation page's webhooks out (`/api/console/webhooks`): the caller's list (URL, events, threads, whether a
 * receiver's 410 turned it off), a new one (a URL, the events, every thread or one), removing one after a confirm,
 * and per webhook its recent deliveries (automation-webhook-deliveries.tsx). A new webhook's signing secret is shown
 * here once; the page keeps it nowhere else. A refusal is shown beside the button that caused it; URLs are text.
 * Browser code.
 */
import { useSignal } from '@preact/signals';
import { Fragment } from 'preact';
import type { paths } from '../../client/index.ts';
import { api } from './api.ts';
import { useAutomationList } from './automation-list.ts';
import { threadTitle, type AutomationTargets } from './automation-targets.tsx';
import { WebhookDeliveries } from './automation-webhook-deliveries.tsx';
import { ConfirmDelete } from './confirm-delete.tsx';

type Webhook = paths['/api/console/webhooks']['get']['responses'][200]['content']['application/json'][number];
type Created = paths['/api/console/webhooks']['post']['responses'][201]['content']['application/json'];
type EventType = Webhook['events'][number];

/** Every event type a webhook may hear of, in the form's order, with what it means (a Record: a new type is a type error here until it is offered). */
const EVENTS: Readonly<Record<EventType, string>> = {
  run_finished: 'a run finished',
  run_failed: 'a run ended in error',
  approval_requested: 'an approval is asked for',
  question_asked: 'a question is asked',
  queued: 'a directive is queued',
  merged: "a thread's changes are merged",
};

export function WebhooksSection({ targets }: { targets: AutomationTargets }) {
  const { items: webhooks, listError, createError, rowError, busy, create: send, act } = useAutomationList<Webhook>(() => api.GET('/api/console/webhooks'));
  const url = useSignal('');
  const events = useSignal<readonly EventType[]>([]);
  const thread = useSignal('');
  /** The webhook just made, with its URL and secret: shown until dismissed, never again. */
  const created = useSignal<(Created & { readonly url: string }) | null>(null);
  /** The webhooks whose deliveries are shown. */
  const open = useSignal<ReadonlySet<string>>(new Set());

  const toggleEvent = (type: EventType, on: boolean) =>
    (events.value = (Object.keys(EVENTS) as EventType[]).filter((known) => (known === type ? on : events.value.includes(known))));
  const toggleOpen = (id: string) => {
    const next = new Set(open.value);
    if (!next.delete(id)) next.add(id);
    open.value = next;
  };
  const setEnabled = (id: string, enabled: boolean) => {
    if (webhooks.value?.some((webhook) => webhook.id === id && webhook.enabled !== enabled)) {
      webhooks.value = webhooks.value.map((webhook) => (webhook.id === id ? { ...webhook, enabled } : webhook));
    }
  };

  const create = async (event: Event) => {
    event.preventDefault();
    if (busy.value) return;
    created.value = null;
    const body = { url: url.value.trim(), events: [...events.value], thread_ids: thread.value === '' ? null : [thread.value] };
    const data = await send(() => api.POST('/api/console/webhooks', { body }));
    if (data === undefined) return;
    created.value = { ...data, url: body.url };
    url.value = '';
    events.value = [];
    thread.value = '';
  };

  const remove = async (webhook: Webhook) => {
    const removed = await act(webhook.id, () => api.DELETE('/api/console/webhooks/{id}', { params: { path: { id: webhook.id } } }), true);
    if (removed && created.value?.id === webhook.id) created.value = null;
  };

  return (
    <section class="automation-section webhooks" aria-labelledby="webhooks-title">
      <h3 id="webhooks-title">Webhooks</h3>
      <p class="hint">A webhook POSTs the events of your threads to a URL of yours, signed; a delivery that fails is tried again for a day. A receiver that answers 410 turns its webhook off.</p>
      {listError.value !== '' && <p role="alert" class="error">{listError.value}</p>}
      {created.value !== null && (
        <div class="new-webhook new-token" role="status">
          <p>Your new webhook to <code class="url">{created.value.url}</code> signs with the secret:</p>
          <p><code class="secret">{created.value.secret}</code></p>
          <p class="warning">Copy it now: it will not be shown again.</p>
          <p class="hint">Receivers verify each delivery with a Standard Webhooks library: <code>new Webhook(secret).verify(body, headers)</code>.</p>
          <button type="button" onClick={() => (created.value = null)}>Done</button>
        </div>
      )}
      {webhooks.value === null ? <p class="hint">Loading…</p> : webhooks.value.length === 0 ? <p class="empty">You have no webhooks.</p> : (
        <table class="data-table">
          <thead>
            <tr>
              <th scope="col">URL</th><th scope="col">Events</th><th scope="col">Threads</th><th scope="col">State</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          {webhooks.value.map((webhook) => (
            <tbody key={webhook.id} data-webhook-id={webhook.id} data-enabled={String(webhook.enabled)}>
              <tr data-enabled={String(webhook.enabled)}>
                <td class="url"><code>{webhook.url}</code></td>
                <td class="events">{webhook.events.map((type, i) => <Fragment key={type}>{i > 0 && ' '}<code>{type}</code></Fragment>)}</td>
                <td class="threads">
                  {webhook.thread_ids === null ? <span>Every thread you can read</span> : webhook.thread_ids.map((id, i) => (
                    <Fragment key={id}>{i > 0 && ', '}<a href={`#/threads/${id}`}>{threadTitle(targets, id)}</a></Fragment>
                  ))}
                </td>
                <td class="state">{webhook.enabled ? 'enabled' : 'turned off (its receiver answered 410)'}</td>
                <td class="row-actions">
                  <button type="button" aria-expanded={open.value.has(webhook.id)} aria-controls={`webhook-deliveries-${webhook.id}`} onClick={() => toggleOpen(webhook.id)}>Deliveries</button>
                  <ConfirmDelete label={`Delete webhook ${webhook.url}`} onDelete={() => void remove(webhook)} />
                  {(rowError.value[webhook.id] ?? '') !== '' && <span role="alert" class="error">{rowError.value[webhook.id]}</span>}
                </td>
              </tr>
              {open.value.has(webhook.id) && (
                <tr class="deliveries-row">
                  <td colSpan={5}><WebhookDeliveries id={webhook.id} onState={(enabled) => setEnabled(webhook.id, enabled)} /></td>
                </tr>
              )}
            </tbody>
          ))}
        </table>
      )}
      <form class="automation-form new-webhook-form" onSubmit={(event) => void create(event)}>
        <h4>New webhook</h4>
        <div class="fields">
          <label for="webhook-url">URL
            <input id="webhook-url" type="url" required maxLength={2000} placeholder="https://ci.example.com/console-events" value={url.value}
              onInput={(e) => (url.value = (e.target as HTMLInputElement).value)} />
          </label>
          <label for="webhook-thread">Threads
            <select id="webhook-thread" value={thread.value} onChange={(e) => (thread.value = (e.target as HTMLSelectElement).value)}>
              <option value="">Every thread you can read</option>
              {targets.threads.map((option) => <option key={option.id} value={option.id}>{option.title || option.id}</option>)}
            </select>
          </label>
        </div>
        <fieldset class="webhook-events">
          <legend>Events</legend>
          {(Object.entries(EVENTS) as [EventType, string][]).map(([type, meaning]) => (
            <label key={type} for={`webhook-event-${type}`}>
              <input id={`webhook-event-${type}`} type="checkbox" checked={events.value.includes(type)}
                onChange={(e) => toggleEvent(type, (e.target as HTMLInputElement).checked)} />
              <code>{type}</code> <span class="hint">{meaning}</span>
            </label>
          ))}
        </fieldset>
        <div class="actions">
          <button type="submit" disabled={busy.value}>Create webhook</button>
          {createError.value !== '' && <span role="alert" class="error">{createError.value}</span>}
        </div>
      </form>
    </section>
  );
}
