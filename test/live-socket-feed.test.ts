import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WebSocket } from 'ws';
import { createMemoryStorage } from '../adapters/memory/storage.ts';
import type { WireEvent } from '../domain/events.ts';
import type { EventLog } from '../ports/event-log.ts';
import { CLOSE_TOO_SLOW, SocketFeed } from '../src/live/socket-feed.ts';
import { F, fixtureWorld } from './support/fixture-world.ts';
import { waitFor } from './support/wait-for.ts';

/** A socket that keeps what it is sent; `bufferedAmount` is what a test says the kernel still holds. */
function socket(bufferedAmount = 0, perSend = 0) {
  const sent: number[] = [];
  let closedWith: number | null = null;
  const ws = {
    bufferedAmount,
    send: (text: string) => {
      sent.push((JSON.parse(text) as WireEvent).seq);
      ws.bufferedAmount += perSend;
    },
    close: (code: number) => (closedWith = code),
  };
  /** The client reads everything it was sent. */
  const read = () => (ws.bufferedAmount = 0);
  return { ws: ws as unknown as WebSocket, sent, closed: () => closedWith, read };
}

/** Waits until the socket was sent `count` events (the feed reads the log on a promise chain of its own). */
const sentAll = (sent: number[], count: number) => waitFor(() => sent.length >= count, { what: `${count} events sent` });
/** A deliberate window in which nothing more must be sent or closed. */
const quiet = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("the socket feed: one thread's events to one socket", async () => {
  const storage = createMemoryStorage();
  await storage.importWorld(fixtureWorld());
  const stored: WireEvent[] = [];
  for (let i = 0; i < 10; i++) stored.push(await storage.events.append(F.root, 'message', { i }));
  /** The log, telling when a replay without a cursor has read where it ends. */
  const endNoted = () => {
    let noted = false;
    const log: EventLog = {
      append: (...args) => storage.events.append(...args),
      since: (...args) => storage.events.since(...args),
      lastSeq: async (threadId) => {
        const seq = await storage.events.lastSeq(threadId);
        noted = true;
        return seq;
      },
    };
    return { log, noted: () => noted };
  };

  it('replays after the cursor, then live events, each once and in order', async () => {
    const { ws, sent } = socket();
    const feed = new SocketFeed(ws, F.root, 3, { log: storage.events, maxBuffered: 1024 });
    feed.push(stored[4]!); // published while the replay is still reading: waits behind it
    feed.replay();
    feed.push(stored[9]!);
    await sentAll(sent, 7);
    assert.deepEqual(sent, [4, 5, 6, 7, 8, 9, 10]);
  });

  it('sends a live event that is next in order at once, and one that comes while a gap is read behind it', async () => {
    const { ws, sent } = socket();
    const feed = new SocketFeed(ws, F.root, 2, { log: storage.events, maxBuffered: 1024 });
    feed.push(stored[2]!); // seq 3, next after the cursor, nothing queued: sent before push returns
    assert.deepEqual(sent, [3]);
    feed.push(stored[5]!); // skips ahead: 4 and 5 are read from the log first
    feed.push(stored[6]!); // next after 6, but the gap is still being read: it waits behind it
    assert.deepEqual(sent, [3]);
    await sentAll(sent, 5);
    assert.deepEqual(sent, [3, 4, 5, 6, 7]);
    feed.push(stored[7]!); // the chain is idle again: at once
    assert.deepEqual(sent, [3, 4, 5, 6, 7, 8]);
  });

  it('fills a gap from the log when a live event skips ahead', async () => {
    const { ws, sent } = socket();
    const feed = new SocketFeed(ws, F.root, null, { log: storage.events, maxBuffered: 1024 });
    feed.push(stored[1]!);
    feed.push(stored[5]!);
    feed.push(stored[3]!); // late, already delivered by the gap fill
    await sentAll(sent, 5);
    assert.deepEqual(sent, [2, 3, 4, 5, 6]);
  });

  it('fill after a bus reconnect sends the stored events the bus lost, even when nothing follows them', async () => {
    const { ws, sent } = socket();
    const feed = new SocketFeed(ws, F.root, 0, { log: storage.events, maxBuffered: 1024 });
    feed.replay();
    feed.fill(); // nothing new: nothing sent twice
    await sentAll(sent, 10);
    assert.deepEqual(sent, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const lost = [await storage.events.append(F.root, 'run_finished', {}), await storage.events.append(F.root, 'reflex_asleep', {})];
    feed.fill(); // the bus reconnected: both were published while it was down
    feed.push(lost[1]!); // a late copy: already sent by the fill
    await sentAll(sent, 12);
    assert.deepEqual(sent, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it('a socket without a cursor loses nothing stored after it subscribed, and gets nothing from before', async () => {
    const { ws, sent } = socket();
    const ended = endNoted();
    const feed = new SocketFeed(ws, F.root, null, { log: ended.log, maxBuffered: 1024 });
    feed.replay(); // notes where the log ends
    await waitFor(ended.noted, { what: 'the replay to note where the log ends' });
    const from = (await storage.events.since(F.root, 0, 1000)).length;
    const lost = await storage.events.append(F.root, 'message', { lost: true });
    feed.fill();
    await sentAll(sent, 1);
    assert.deepEqual(sent, [lost.seq], 'the event lost on the bus, nothing older');
    const alsoLost = await storage.events.append(F.root, 'message', {});
    const next = await storage.events.append(F.root, 'message', {});
    feed.push(next); // skips ahead: the gap is filled first
    await sentAll(sent, 3);
    assert.deepEqual(sent, [from + 1, alsoLost.seq, next.seq]);
    // A fresh socket whose first live event skips ahead gets the ones before it too.
    const fresh = socket();
    const freshEnded = endNoted();
    const freshFeed = new SocketFeed(fresh.ws, F.root, null, { log: freshEnded.log, maxBuffered: 1024 });
    freshFeed.replay();
    await waitFor(freshEnded.noted, { what: 'the fresh replay to note where the log ends' });
    await storage.events.append(F.root, 'message', {});
    freshFeed.push(await storage.events.append(F.root, 'message', {}));
    await sentAll(fresh.sent, 2);
    assert.deepEqual(fresh.sent, [next.seq + 1, next.seq + 2]);
  });

  it('replays a log many times the send buffer to a client that reads it, at its pace, all of it in order', async () => {
    const { ws, sent, closed, read } = socket(0, 300);
    // A buffer of 1 KiB, each event 300 bytes in it: the 10 stored events are three buffers' worth.
    const feed = new SocketFeed(ws, F.root, 0, { log: storage.events, maxBuffered: 1024, stallMs: 5_000 });
    feed.replay();
    feed.push(stored[9]!); // live, while the replay waits for room: after it, once
    // The client reads what it was sent every 20 ms, until it has all of it.
    await waitFor(() => (read(), sent.length >= 10), { everyMs: 20, what: 'the whole log replayed' });
    assert.equal(closed(), null, 'a reader that keeps up is never closed');
    assert.deepEqual(sent, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('closes a client that cannot keep up with 1013 and sends it nothing more', async () => {
    const { ws, sent, closed } = socket(2048);
    const feed = new SocketFeed(ws, F.root, 0, { log: storage.events, maxBuffered: 1024, stallMs: 250 });
    feed.replay();
    await quiet(); // well within the stall (250 ms, room for a loaded machine), nothing must close the client yet
    assert.equal(closed(), null, 'a replay waits a moment for room');
    await waitFor(() => closed() !== null, { what: 'the client closed as too slow' });
    assert.equal(closed(), CLOSE_TOO_SLOW);
    assert.deepEqual(sent, []);
    feed.push(stored[0]!);
    await quiet(); // nothing must be sent to a closed client
    assert.deepEqual(sent, []);
  });
});
