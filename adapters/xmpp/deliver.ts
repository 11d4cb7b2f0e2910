import type { Element } from '@xmpp/client';
import { uuid7Time } from '../../domain/vocabulary.ts';
import { parseRoomThread } from '../../domain/xmpp.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import { archiveHoldsOrigin } from './archive.ts';
import type { XmppConnection } from './connection.ts';
import { messageFacts, threadMessage } from './stanzas.ts';

/** How far before its id's time a delivery's post is looked for in the archive (clocks of the service and the server differ). */
const CLOCK_SLACK_MS = 10 * 60_000;
/** How long the room's echo of a post is waited for: the room's receipt that it took it. */
const ECHO_MS = 8_000;

/**
 * Posts a delivery in its room thread, at most once: a groupchat message with `<thread>` (the
 * address's thread) and `<origin-id>` (the delivery's id). The room's archive is searched for that
 * origin-id first (a retry after a post whose answer was lost posts nothing), and the post counts
 * only once the room echoes it back. Rejects when the bot is offline, cannot be in the room, or the
 * room did not echo in time; the outbox asks again.
 */
export async function deliverToRoom(connection: XmppConnection, delivery: Delivery): Promise<{ room: string; thread: string }> {
  const target = parseRoomThread(delivery.address.id);
  if (target === null) throw new Error(`the address ${delivery.address.id} names no room thread (room@muc#thread)`);
  const { room, thread } = target;
  connection.ensureOnline();
  const presence = await connection.join(room);
  if (presence.refused !== null) throw new Error(`the bot cannot join ${room} (${presence.refused})`);
  if (presence.role === 'visitor' || presence.role === 'none') throw new Error(`the bot cannot post in ${room} (it has no voice)`);
  const since = postedSince(delivery.id);
  if (await archiveHoldsOrigin(connection, room, delivery.id, since)) return target;

  let stop = () => {};
  const echoed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`${room} did not echo the delivery ${delivery.id} within ${ECHO_MS} ms`));
    }, ECHO_MS);
    const off = connection.listen((stanza: Element) => {
      if (!stanza.is('message') || stanza.attrs.type !== 'groupchat' || !(stanza.attrs.from ?? '').startsWith(`${room}/`)) return;
      if (messageFacts(stanza, room).originId !== delivery.id) return;
      clearTimeout(timer);
      stop();
      resolve();
    });
    stop = () => {
      clearTimeout(timer);
      off();
    };
  });
  echoed.catch(() => {});
  try {
    await connection.send(threadMessage(room, thread, delivery.id, postedText(delivery)));
  } catch (error) {
    stop();
    throw error;
  }
  await echoed;
  return target;
}

/**
 * From when a delivery's post is looked for: its UUIDv7 id's time less the clock slack; an id of
 * another version (a reply derived from the message it answers) carries no time: the last hour.
 */
function postedSince(id: string): Date {
  const timed = id.length === 36 && id[14] === '7';
  return new Date((timed ? Date.parse(uuid7Time(id)) : Date.now() - UNTIMED_SEARCH_MS) - CLOCK_SLACK_MS);
}

/** How far back the post of a delivery whose id carries no time is looked for. */
const UNTIMED_SEARCH_MS = 60 * 60_000;

/** What is posted: a new thread opens with its title. */
function postedText(delivery: Delivery): string {
  return delivery.new_thread && delivery.title.trim() !== '' ? `${delivery.title}\n\n${delivery.text}` : delivery.text;
}
