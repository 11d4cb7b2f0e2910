/**
 * Moving a thread's conversation: teleport (a destination browser one level at a time, barred places
 * shown with their reason; every browsable channel linked to the user asked for its own places, since a chat
 * platform knows them only once listed; the shared-history warning) and summon (another agent and model, a brief, a
 * hint). What is offered is what `GET /operations` answers now. Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';

import { api, problemText } from './api.ts';

interface Place { readonly channel: string; readonly id: string; readonly shared: boolean; readonly metadata: { readonly name: string; readonly inside?: string; readonly barred?: string } }
interface OperationsShape {
  readonly source: Place | null;
  readonly teleport: { readonly destinations: readonly Place[]; readonly routes: Readonly<Record<string, readonly { id: string }[]>>; readonly reason: string | null };
  readonly summon: { readonly routes: Readonly<Record<string, readonly { id: string }[]>>; readonly reason: string | null; readonly here: Place | null };
  readonly barred: Readonly<Record<string, string>>;
}

/** `version` changes when a run starts or ends: what is offered is asked again, what was typed stays. */
export function Moves({ threadId, version, onMoved }: { threadId: string; version: number; onMoved: (threadId: string) => void }) {
  const operations = useSignal<OperationsShape | null>(null);
  /** The levels opened so far: each is a list of places; the last is shown. */
  const levels = useSignal<readonly { readonly title: string; readonly places: readonly Place[] }[]>([]);
  const chosen = useSignal<Place | null>(null);
  const newThread = useSignal(true);
  const prompt = useSignal('');
  const route = useSignal('');
  const brief = useSignal('');
  const hint = useSignal('');
  const error = useSignal('');
  const done = useSignal('');

  const load = async () => {
    const [{ data }, { data: linked }] = await Promise.all([
      api.GET('/api/console/threads/{id}/operations', { params: { path: { id: threadId } } }),
      api.GET('/api/console/channels'),
    ]);
    operations.value = (data ?? null) as OperationsShape | null;
    chosen.value = null;
    if (data === undefined) return void (levels.value = []);
    // The top level: the console's suggestion as given, and the first level of every browsable channel linked
    // to the user, asked of the channel itself: a chat platform's places are known only once listed. Barred
    // places show with their reason; a channel that cannot take the conversation shows as one row saying why.
    const browsable = (linked ?? []).filter((channel) => channel.browsable);
    const browsed = await Promise.all(browsable.map(async (channel): Promise<readonly Place[]> => {
      const row = (barred: string): Place => ({ channel: channel.id, id: '', shared: channel.shared, metadata: { name: channel.name, barred } });
      const barred = data.barred[channel.id];
      if (barred !== undefined) return [row(barred)];
      if ((data.teleport.routes[channel.id] ?? []).length === 0) return [row("This conversation's agent is not on this channel")];
      const { data: places, error: problem, response } = await api.GET('/api/console/threads/{id}/channels/{channel}/addresses', { params: { path: { id: threadId, channel: channel.id } } });
      return places ?? [row(problemText(problem, response.status))];
    }));
    levels.value = [{ title: 'Destinations', places: [...data.teleport.destinations.filter((d) => d.channel === 'console'), ...browsed.flat()] }];
  };
  useEffect(() => void load(), [threadId, version]);
  const ops = operations.value;
  if (ops === null) return null;

  const open = async (place: Place) => {
    const { data, error: problem, response } = await api.GET('/api/console/threads/{id}/channels/{channel}/addresses', {
      params: { path: { id: threadId, channel: place.channel }, query: { inside: place.metadata.inside! } },
    });
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    levels.value = [...levels.value, { title: place.metadata.name, places: data }];
  };
  const teleport = async (event: Event) => {
    event.preventDefault();
    const target = chosen.value;
    if (target === null) return;
    error.value = '';
    const body = {
      destination: { channel: target.channel, id: target.id },
      new_thread: newThread.value,
      ...(target.channel === 'console' && prompt.value.trim() !== '' ? { prompt: prompt.value } : {}),
    };
    const { data, error: problem, response } = await api.POST('/api/console/threads/{id}/teleport', { params: { path: { id: threadId } }, body });
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    onMoved(data.thread_id);
  };
  const summon = async (event: Event) => {
    event.preventDefault();
    if (route.value === '' || brief.value.trim() === '') return;
    error.value = '';
    const body = { route: route.value, brief: brief.value, ...(hint.value.trim() === '' ? {} : { hint: hint.value }) };
    const { data, error: problem, response } = await api.POST('/api/console/threads/{id}/summon', { params: { path: { id: threadId } }, body });
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    done.value = `Handed over to ${route.value}.`;
    brief.value = '';
    hint.value = '';
    void load();
  };

  const level = levels.value[levels.value.length - 1];
  const summonRoutes = Object.values(ops.summon.routes).flat();
  const privateToShared = ops.source !== null && !ops.source.shared && chosen.value?.shared === true;
  return (
    <details class="moves">
      <summary>Move this conversation</summary>
      <p role="alert" class="error">{error.value}</p>
      <p role="status" class="note">{done.value}</p>
      <section aria-labelledby="teleport-title">
        <h3 id="teleport-title">Teleport</h3>
        {ops.teleport.reason !== null ? <p class="note">{ops.teleport.reason}</p> : (
          <form onSubmit={teleport}>
            <nav aria-label="Destination path" class="crumbs">
              {levels.value.map((l, i) => (
                <button key={i} type="button" disabled={i === levels.value.length - 1} onClick={() => (levels.value = levels.value.slice(0, i + 1))}>{l.title}</button>
              ))}
            </nav>
            <ul class="places" aria-label={level?.title ?? 'Destinations'}>
              {(level?.places ?? []).map((place) => (
                <li key={`${place.channel}/${place.id}`} data-place={place.id} aria-disabled={place.metadata.barred !== undefined}>
                  <label>
                    <input type="radio" name="destination" disabled={place.metadata.barred !== undefined}
                      checked={chosen.value?.id === place.id && chosen.value.channel === place.channel} onChange={() => (chosen.value = place)} />
                    {place.metadata.name} <span class="meta">{place.channel}{place.shared ? ' · shared' : ''}</span>
                  </label>
                  {place.metadata.barred !== undefined && <span class="barred">{place.metadata.barred}</span>}
                  {place.metadata.inside !== undefined && <button type="button" onClick={() => void open(place)}>Open {place.metadata.name}</button>}
                </li>
              ))}
            </ul>
            {privateToShared && <p class="warning" role="note">This thread's private history will land in a shared place, where everyone there can read it.</p>}
            <label class="inline"><input type="checkbox" checked={newThread.value} onChange={(e) => (newThread.value = (e.target as HTMLInputElement).checked)} /> As a new thread</label>
            {chosen.value?.channel === 'console' && (
              <>
                <label for="teleport-prompt">First message there (optional)</label>
                <input id="teleport-prompt" value={prompt.value} onInput={(e) => (prompt.value = (e.target as HTMLInputElement).value)} />
              </>
            )}
            <button type="submit" disabled={chosen.value === null}>Teleport</button>
          </form>
        )}
      </section>
      <section aria-labelledby="summon-title">
        <h3 id="summon-title">Summon</h3>
        {ops.summon.reason !== null ? <p class="note">{ops.summon.reason}</p> : summonRoutes.length === 0 ? <p class="note">No other agent is on this channel.</p> : (
          <form onSubmit={summon}>
            <label for="summon-route">Agent and model</label>
            <select id="summon-route" value={route.value} onChange={(e) => (route.value = (e.target as HTMLSelectElement).value)}>
              <option value="">Choose…</option>
              {summonRoutes.map((r) => <option key={r.id} value={r.id}>{r.id}</option>)}
            </select>
            <label for="summon-brief">Brief</label>
            <textarea id="summon-brief" rows={2} value={brief.value} onInput={(e) => (brief.value = (e.target as HTMLTextAreaElement).value)} />
            <label for="summon-hint">Hint (optional)</label>
            <input id="summon-hint" value={hint.value} onInput={(e) => (hint.value = (e.target as HTMLInputElement).value)} />
            <button type="submit" disabled={route.value === '' || brief.value.trim() === ''}>Summon</button>
          </form>
        )}
      </section>
    </details>
  );
}
