/**
 * Chat links (`#/links`): the caller's links to chat addresses, and a one-use code to link another. The
 * code is shown here once, with what to send the channel's bot; the page keeps it nowhere else. Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, problemText } from './api.ts';

interface Link { readonly channel: string; readonly address: string; readonly created_at: string | null; readonly source: 'code' | 'world' }
interface LinkCode { readonly channel: string; readonly code: string; readonly expires_at: string; readonly send: string }
interface Channel { readonly id: string; readonly name: string; readonly kind: string }

const time = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

export function ChatLinks() {
  const channels = useSignal<readonly Channel[]>([]);
  const links = useSignal<readonly Link[]>([]);
  const channel = useSignal('');
  const code = useSignal<LinkCode | null>(null);
  const error = useSignal('');
  const busy = useSignal(false);

  const load = async () => {
    const [c, l] = await Promise.all([api.GET('/api/account/link-channels'), api.GET('/api/account/links')]);
    if (c.data === undefined) return void (error.value = problemText(c.error, c.response.status));
    if (l.data === undefined) return void (error.value = problemText(l.error, l.response.status));
    channels.value = c.data;
    links.value = l.data;
    if (channel.value === '') channel.value = c.data[0]?.id ?? '';
  };
  useEffect(() => void load(), []);
  const nameOf = (id: string) => channels.value.find((c) => c.id === id)?.name ?? id;

  const ask = async (event: Event) => {
    event.preventDefault();
    if (channel.value === '' || busy.value) return;
    busy.value = true;
    error.value = '';
    const { data, error: problem, response } = await api.POST('/api/account/links', { body: { channel: channel.value } });
    busy.value = false;
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    code.value = data;
  };
  const remove = async (id: string) => {
    error.value = '';
    const { error: problem, response } = await api.DELETE('/api/account/links/{channel}', { params: { path: { channel: id } } });
    if (!response.ok) error.value = problemText(problem, response.status);
    await load();
  };

  return (
    <section class="chat-links" aria-labelledby="chat-links-title">
      <h2 id="chat-links-title">Chat links</h2>
      <p class="hint">Messages you send on a chat channel reach your threads when the address you send them from is linked to you.</p>
      {error.value !== '' && <p role="alert" class="error">{error.value}</p>}
      {links.value.length === 0 ? <p class="empty">No chat address is linked to you.</p> : (
        <ul class="links">
          {links.value.map((link) => (
            <li key={`${link.channel}:${link.source}`} data-channel={link.channel}>
              <span class="channel">{nameOf(link.channel)}</span> <span class="address">{link.address}</span>
              {link.source === 'world' ? <span class="hint"> (set in the world file)</span> : (
                <button type="button" onClick={() => void remove(link.channel)} aria-label={`Remove the link on ${nameOf(link.channel)}`}>Remove</button>
              )}
            </li>
          ))}
        </ul>
      )}
      {channels.value.length === 0 ? <p class="hint">No chat channel is connected.</p> : (
        <form onSubmit={(event) => void ask(event)}>
          <label for="link-channel">Link an address on</label>
          <select id="link-channel" value={channel.value} onChange={(event) => (channel.value = (event.target as HTMLSelectElement).value)}>
            {channels.value.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
          </select>
          <button type="submit" disabled={busy.value}>Get a link code</button>
        </form>
      )}
      {code.value !== null && (
        <div class="link-code" role="status">
          <p>Send this to the {nameOf(code.value.channel)} bot in a direct message, from the address to link:</p>
          <p><code>{code.value.send}</code></p>
          <p class="hint">The code works once, until {time(code.value.expires_at)}. Then reload this page to see the link.</p>
        </div>
      )}
    </section>
  );
}
