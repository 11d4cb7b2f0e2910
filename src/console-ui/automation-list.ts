/**
 * What each section of the automation page keeps alike: its list as last read (null until read), the list's refusal,
 * a create's refusal and whether one is on its way, and each row's refusal by id, shown beside the button that caused
 * it. Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { formProblemText, problemText } from './api.ts';

/** An answer of the typed API client, as the sections read it. */
interface Answer<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

export function useAutomationList<T>(read: () => Promise<Answer<readonly T[]>>) {
  const items = useSignal<readonly T[] | null>(null);
  const listError = useSignal('');
  const createError = useSignal('');
  const rowError = useSignal<Readonly<Record<string, string>>>({});
  const busy = useSignal(false);

  const load = async (): Promise<void> => {
    const { data, error, response } = await read();
    if (data === undefined) return void (listError.value = problemText(error, response.status));
    listError.value = '';
    items.value = data;
  };
  useEffect(() => void load(), []);

  /** Sends a create, one at a time: the answer's data, then the list read again; a refusal shown in `createError` (undefined). */
  const create = async <R>(send: () => Promise<Answer<R>>): Promise<R | undefined> => {
    if (busy.value) return undefined;
    busy.value = true;
    createError.value = '';
    const { data, error, response } = await send();
    busy.value = false;
    if (data === undefined) return void (createError.value = formProblemText(error, response.status));
    await load();
    return data;
  };

  /**
   * A row's action: its refusal shown beside it (false), else the list read again (true). With `goneIsDone`, a 404
   * counts as done: a removal of what was removed elsewhere is what was asked for.
   */
  const act = async (id: string, send: () => Promise<Answer<unknown>>, goneIsDone = false): Promise<boolean> => {
    rowError.value = { ...rowError.value, [id]: '' };
    const { error, response } = await send();
    const done = response.ok || (goneIsDone && response.status === 404);
    if (!done) rowError.value = { ...rowError.value, [id]: problemText(error, response.status) };
    await load();
    return done;
  };

  return { items, listError, createError, rowError, busy, load, create, act };
}
