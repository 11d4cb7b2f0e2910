import { randomBytes } from 'node:crypto';
import type { Element } from '@xmpp/client';
import type { XmppConnection } from './connection.ts';
import { archivedMessage, archiveQuery, messageFacts, NS, type ArchivePageRequest } from './stanzas.ts';

/** One message of a room's archive, as this adapter reads it. */
export interface ArchivedMessage {
  /** The archive's id (the room's stanza id). */
  readonly id: string;
  readonly thread: string | null;
  readonly originId: string | null;
  readonly body: string | null;
  /** The occupant it came from (`room@muc/nick`). */
  readonly from: string | null;
  /** The message as archived (who sent it, where the room tells it). */
  readonly message: Element;
  /** When the room archived it (ISO 8601), or null when the archive does not say. */
  readonly at: string | null;
}

/** A page of a room's archive, oldest first, and whether it reaches the end it was read towards. */
export interface ArchivePage {
  readonly messages: readonly ArchivedMessage[];
  readonly complete: boolean;
  readonly first: string | null;
  readonly last: string | null;
}

/** Reads one page of a room's archive (XEP-0313): the results arrive as messages before the answer. */
export async function archivePage(
  connection: XmppConnection,
  room: string,
  page: ArchivePageRequest,
): Promise<ArchivePage> {
  // A query is a read: one whose answer never came (seen now and then from Prosody on a busy host) is asked
  // once more, under a new query id, before the caller is told.
  try {
    return await archivePageOnce(connection, room, page);
  } catch (error) {
    if ((error as { name?: unknown } | null)?.name !== 'TimeoutError') throw error;
    return archivePageOnce(connection, room, page);
  }
}

async function archivePageOnce(connection: XmppConnection, room: string, page: ArchivePageRequest): Promise<ArchivePage> {
  const queryId = randomBytes(6).toString('hex');
  const messages: ArchivedMessage[] = [];
  const stop = connection.listen((stanza: Element) => {
    // The bot's own archive (its direct messages) answers from the account itself: no `from`, which only the server can send.
    if (stanza.attrs.from !== room && stanza.attrs.from !== undefined) return;
    const result = archivedMessage(stanza, queryId);
    if (result === null) return;
    const facts = messageFacts(result.message, room);
    const stamp = stanza.getChild('result', NS.mam)?.getChild('forwarded', NS.forward)?.getChild('delay', NS.delay)?.attrs.stamp ?? null;
    const at = stamp === null || Number.isNaN(Date.parse(stamp)) ? null : new Date(stamp).toISOString();
    messages.push({ id: result.id, thread: facts.thread, originId: facts.originId, body: facts.body, from: facts.from, message: result.message, at });
  });
  try {
    const answer = await connection.request(archiveQuery(room, queryId, page));
    const fin = answer.getChild('fin', NS.mam);
    const set = fin?.getChild('set', NS.rsm);
    return { messages, complete: fin?.attrs.complete === 'true', first: set?.getChildText('first') ?? null, last: set?.getChildText('last') ?? null };
  } finally {
    stop();
  }
}

/** At most this many pages are read looking for one origin-id (a bound, not a limit met in practice: the search starts at the delivery's time). */
const SEARCH_PAGES = 20;
const PAGE = 100;

/**
 * Whether the room's archive holds a message with this origin-id, archived at or after `since`
 * (read forward from there, page by page). Throws when the archive cannot be read: a caller that
 * cannot tell must not post.
 */
export async function archiveHoldsOrigin(connection: XmppConnection, room: string, originId: string, since: Date): Promise<boolean> {
  let after: string | null = null;
  for (let pages = 0; pages < SEARCH_PAGES; pages++) {
    const page = await archivePage(connection, room, { max: PAGE, after, start: since });
    if (page.messages.some((message) => message.originId === originId)) return true;
    if (page.complete || page.last === null || page.messages.length === 0) return false;
    after = page.last;
  }
  throw new Error(`the archive of ${room} is too long to search for a delivery since ${since.toISOString()}`);
}

/** The XEP-0201 threads of a room's latest archived messages, oldest first, each with its first body. */
export async function recentThreads(connection: XmppConnection, room: string, max = 200): Promise<{ thread: string; first: string | null }[]> {
  const page = await archivePage(connection, room, { max });
  const threads = new Map<string, string | null>();
  for (const message of page.messages) {
    if (message.thread === null || message.thread === '') continue;
    if (!threads.has(message.thread)) threads.set(message.thread, message.body);
  }
  return [...threads].map(([thread, first]) => ({ thread, first }));
}
