import type { Element } from '@xmpp/client';
import { uuid7Time } from '../../domain/vocabulary.ts';
import { parseRoomThread } from '../../domain/xmpp.ts';
import type { Delivery } from '../../ports/channel-port.ts';
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
  const since = new Date(Date.parse(uuid7Time(delivery.id)) - CLOCK_SLACK_MS);
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

/** What is posted: a new thread opens with its title. */
function postedText(delivery: Delivery): string {
  return delivery.new_thread && delivery.title.trim() !== '' ? `${delivery.title}\n\n${delivery.text}` : delivery.text;
}
