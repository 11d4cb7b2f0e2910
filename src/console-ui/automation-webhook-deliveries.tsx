/**
 * A webhook's "Deliveries" expander on the automation page (`GET /api/console/webhooks/{id}`): its latest
 * deliveries (event type, status, tries, the last try's error, else the status it was answered, the next try), each with "Send again"
 * (`POST …/deliveries/{delivery}/retry`: the same webhook-id, sent at once). Read again every few seconds while one
 * is pending, as its state moves on the server. A refusal is shown beside the button that caused it; a receiver's
 * error and the event's type are text. Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { paths } from '../../client/index.ts';
import { api, problemText } from './api.ts';

/** A webhook as its owner reads it, with its latest deliveries (newest first). */
export type WebhookDetail = paths['/api/console/webhooks/{id}']['get']['responses'][200]['content']['application/json'];
type Delivery = WebhookDetail['deliveries'][number];

/** How often an open expander with a pending delivery is read again: about as often as the sender looks. */
const PENDING_EVERY_MS = 2_000;

const moment = (iso: string) => new Date(iso).toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });

export function WebhookDeliveries({ id, onState }: { id: string; onState: (enabled: boolean) => void }) {
  const deliveries = useSignal<readonly Delivery[] | null>(null);
  const loadError = useSignal('');
  /** A delivery's refusal, beside its button, by delivery id. */
  const rowError = useSignal<Readonly<Record<string, string>>>({});

  const load = async () => {
    const { data, error, response } = await api.GET('/api/console/webhooks/{id}', { params: { path: { id } } });
    if (data === undefined) return void (loadError.value = problemText(error, response.status));
    loadError.value = '';
    deliveries.value = data.deliveries;
    // A receiver's 410 turns the webhook off while the list shows it: the row says so once this read does.
    onState(data.enabled);
  };
  useEffect(() => void load(), [id]);

  const pending = deliveries.value?.some((delivery) => delivery.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(() => void load(), PENDING_EVERY_MS);
    return () => clearInterval(timer);
  }, [pending, id]);

  const sendAgain = async (delivery: Delivery) => {
    rowError.value = { ...rowError.value, [delivery.id]: '' };
    const { data, error, response } = await api.POST('/api/console/webhooks/{id}/deliveries/{delivery}/retry', { params: { path: { id, delivery: delivery.id } } });
    if (data === undefined) return void (rowError.value = { ...rowError.value, [delivery.id]: problemText(error, response.status) });
    deliveries.value = (deliveries.value ?? []).map((shown) => (shown.id === data.id ? data : shown));
  };

  return (
    <div class="webhook-deliveries" id={`webhook-deliveries-${id}`}>
      {loadError.value !== '' && <p role="alert" class="error">{loadError.value}</p>}
      {deliveries.value === null ? (loadError.value === '' && <p class="hint">Loading…</p>) : deliveries.value.length === 0 ? <p class="empty">Nothing sent yet.</p> : (
        <table class="data-table">
          <thead>
            <tr>
              <th scope="col">Event</th><th scope="col">Status</th><th scope="col">Tries</th><th scope="col">Last try</th>
              <th scope="col">Next try</th><th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {deliveries.value.map((delivery) => (
              <tr key={delivery.id} data-delivery-id={delivery.id} data-status={delivery.status}>
                <td class="type"><code>{delivery.type}</code> <time class="hint" dateTime={delivery.created_at} title={delivery.created_at}>{moment(delivery.created_at)}</time></td>
                <td class="status">{delivery.status}</td>
                <td class="attempts">{delivery.attempts}</td>
                <td class="last">
                  {delivery.last_error !== null ? <span class="last-error">{delivery.last_error}</span>
                    : delivery.last_status !== null ? <span class="last-status">answered {delivery.last_status}</span>
                    : <span class="hint">none</span>}
                </td>
                <td class="next-try">{delivery.next_at === null ? <span class="hint">{delivery.status === 'pending' ? 'now' : 'none'}</span> : <time dateTime={delivery.next_at} title={delivery.next_at}>{moment(delivery.next_at)}</time>}</td>
                <td class="row-actions">
                  <button type="button" onClick={() => void sendAgain(delivery)} aria-label={`Send again delivery ${delivery.id} (${delivery.type})`}>Send again</button>
                  {(rowError.value[delivery.id] ?? '') !== '' && <span role="alert" class="error">{rowError.value[delivery.id]}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <button type="button" class="refresh" onClick={() => void load()}>Refresh</button>
    </div>
  );
}
