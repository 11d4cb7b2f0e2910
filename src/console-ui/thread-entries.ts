/*
 * The order a thread is drawn in: its ledger messages and its runs in one list, each run right after the
 * message that started it, so a turn reads as the user's message, what the agent did, then its reply. A
 * queued directive's message is drawn with the queue until its turn comes, then where its turn came. Pure,
 * tested in Node.
 */
import type { LedgerMessageShape, RunView, Timeline } from './timeline.ts';

/** One thing drawn in a thread, top to bottom. */
export type ThreadEntry =
  | { readonly kind: 'message'; readonly message: LedgerMessageShape }
  | { readonly kind: 'run'; readonly run: RunView };

/**
 * A run is drawn while it runs, and after its end when it leaves something to see (tool calls, an error, a
 * rewind that took it back) or, with `everyRun` (the thread's owner), something to do: its card is where a
 * rewind to before it is asked.
 */
const worthDrawing = (run: RunView, everyRun: boolean): boolean =>
  everyRun || run.status === 'running' || run.toolCalls.length > 0 || run.error !== null || run.rewound;

/**
 * The thread's messages and the runs worth drawing, in time order: a run sits right after the ledger
 * message that started it (`startedBy`), before anything later; a run with no message of its own sits at
 * its own time (ids are UUIDv7, so id order is time order). A queued directive's message is left out while
 * it waits (the queue shows it), and once started sits at its run's time, not at the time it was queued,
 * so it follows the turn it waited for. While older pages are not loaded (`complete` false), a run whose
 * place is before the oldest loaded message waits for its page, so it never shows above messages it did
 * not follow.
 */
export function threadEntries(timeline: Timeline, complete: boolean, everyRun = false): readonly ThreadEntry[] {
  const spot = (messageId: string): string => timeline.dequeuedInto[messageId] ?? messageId;
  const place = (run: RunView): string => {
    const message = timeline.startedBy[run.id];
    return message === undefined ? run.id : spot(message);
  };
  const waiting = new Set(timeline.queue.map((item) => item.message_id));
  const oldest = timeline.messages[0]?.id ?? null;
  const runs = timeline.runs.filter((run) => worthDrawing(run, everyRun) && (complete || oldest === null || place(run) >= oldest));
  const entries: ThreadEntry[] = [
    ...timeline.messages.filter((message) => !waiting.has(message.id)).map((message) => ({ kind: 'message' as const, message })),
    ...runs.map((run) => ({ kind: 'run' as const, run })),
  ];
  const key = (entry: ThreadEntry): readonly [string, number, string] =>
    entry.kind === 'message' ? [spot(entry.message.id), 0, entry.message.id] : [place(entry.run), 1, entry.run.id];
  return entries.sort((a, b) => {
    const [placeA, rankA, idA] = key(a);
    const [placeB, rankB, idB] = key(b);
    if (placeA !== placeB) return placeA < placeB ? -1 : 1;
    if (rankA !== rankB) return rankA - rankB;
    return idA < idB ? -1 : idA > idB ? 1 : 0;
  });
}
