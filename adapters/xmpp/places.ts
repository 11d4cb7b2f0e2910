import type { ChannelPlace } from '../../domain/model.ts';
import { parseRoomThread, roomThreadAddress } from '../../domain/xmpp.ts';
import type { XmppConnection, RoomPresence } from './connection.ts';
import { recentThreads } from './archive.ts';
import { discoInfo, discoItems, NS } from './stanzas.ts';

/** A room as disco tells of it: its JID, its name, and the features that decide whether a conversation can land. */
export interface RoomFacts {
  readonly jid: string;
  readonly name: string;
  readonly features: ReadonlySet<string>;
}

/** The MUC service's public rooms (disco#items on its domain). */
export async function publicRooms(connection: XmppConnection): Promise<{ jid: string; name: string | null }[]> {
  const answer = await connection.request(discoItems(connection.account.muc));
  const items = answer.getChild('query', NS.discoItems)?.getChildren('item') ?? [];
  return items.flatMap((item) => (item.attrs.jid === undefined ? [] : [{ jid: item.attrs.jid, name: item.attrs.name ?? null }]));
}

/** A room's name and features (disco#info); a room that does not answer has none (it is barred). */
export async function roomFacts(connection: XmppConnection, jid: string, name: string | null): Promise<RoomFacts> {
  const fallback = name ?? `#${jid.split('@')[0]}`;
  try {
    const query = (await connection.request(discoInfo(jid))).getChild('query', NS.discoInfo);
    const features = new Set((query?.getChildren('feature') ?? []).flatMap((f) => (f.attrs.var === undefined ? [] : [f.attrs.var])));
    const titled = query?.getChild('identity')?.attrs.name;
    return { jid, name: titled !== undefined && titled !== '' && titled !== jid.split('@')[0] ? titled : fallback, features };
  } catch (error) {
    connection.ensureOnline();
    return { jid, name: fallback, features: new Set(['(no answer)']) };
  }
}

/**
 * Why no conversation can land in a room, or null when one can: the bot must be able to post there
 * and to see who writes (real JIDs), since a reply is matched to a console user by its sender. What
 * the bot's own presence says wins over what the room advertises.
 */
export function barredReason(room: RoomFacts, presence: RoomPresence | null): string | null {
  if (room.features.has('(no answer)')) return 'The room does not answer';
  if (presence !== null && presence.refused !== null) return `The bot cannot join this room (${presence.refused})`;
  if (presence !== null) {
    if (presence.role === 'visitor' || presence.role === 'none') return 'The bot cannot post in this room (it has no voice)';
    if (!presence.seesRealJids) return 'The bot cannot see who writes in this room (it is semi-anonymous to the bot)';
    return null;
  }
  if (room.features.has('muc_passwordprotected')) return 'The room is password-protected';
  if (room.features.has('muc_membersonly')) return 'The room is members-only and the bot is not in it';
  if (room.features.has('muc_moderated')) return 'The room is moderated: the bot may not post there';
  if (!room.features.has('muc_nonanonymous')) return 'The bot cannot see who writes in this room (it is semi-anonymous)';
  return null;
}

/** A room as a top-level place: it opens (`inside` is its JID) on its threads. */
export function roomPlace(room: RoomFacts, barred: string | null, threads: readonly ChannelPlace[]): ChannelPlace {
  return { id: room.jid, name: room.name, shared: true, inside: room.jid, barred, children: threads };
}

/** What is known of a thread: its id, and a name for it (a conversation's title, or its first message). */
export interface KnownThread {
  readonly thread: string;
  readonly name: string;
}

/** A room's threads as places, in the order given, each once. */
export function threadPlaces(room: string, barred: string | null, threads: readonly KnownThread[]): ChannelPlace[] {
  const seen = new Map<string, ChannelPlace>();
  for (const { thread, name } of threads) {
    if (seen.has(thread)) continue;
    seen.set(thread, { id: roomThreadAddress(room, thread), name, shared: true, inside: null, barred, children: [] });
  }
  return [...seen.values()];
}

/** The threads of a room: those of its recent archive, then those where conversations live. */
export async function roomThreads(
  connection: XmppConnection,
  room: string,
  living: readonly { address: string; title: string }[],
): Promise<KnownThread[]> {
  const archived = await recentThreads(connection, room);
  const titles = new Map(living.flatMap((l) => {
    const parsed = parseRoomThread(l.address);
    return parsed !== null && parsed.room === room ? [[parsed.thread, l.title] as const] : [];
  }));
  const known: KnownThread[] = archived.map(({ thread, first }) => ({ thread, name: titles.get(thread) ?? threadName(thread, first) }));
  for (const [thread, title] of titles) known.push({ thread, name: title });
  return known;
}

/** A thread's name from its first message: its first line, cut to 80 characters. */
function threadName(thread: string, first: string | null): string {
  const line = (first ?? '').split('\n', 1)[0]!.trim();
  if (line === '') return `Thread ${thread}`;
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
