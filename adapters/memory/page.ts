import type { Page, PageRequest } from '../../domain/model.ts';

/** A keyset page over rows already filtered: newest id first, older than the cursor. */
export function keysetPage<T extends { readonly id: string }>(rows: Iterable<T>, request: PageRequest): Page<T> {
  const sorted = [...rows]
    .filter((row) => request.before === null || row.id < request.before)
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const items = sorted.slice(0, request.limit);
  return { items, next: sorted.length > request.limit ? items.at(-1)!.id : null };
}
