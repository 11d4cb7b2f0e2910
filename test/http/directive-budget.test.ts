// Security probe, item A: edits of queued directives were unlimited (300 edits of 100 KB in 8 s, all 200), each
// stored a `queued` event with the whole text, so opening the thread replayed 30 MB; reviews of a thread's
// changes (sent as directives) skipped the directives budget too. Over HTTP with the demo agent (its `[wait]`
// holds a turn until it is cancelled), on memory: the budget is the edge's, the events' compaction is each
// adapter's (the directive queue contract holds it for both).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { WireEvent } from '../../domain/events.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { gitRepository, write } from '../support/git-repo.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB: Record<string, string> = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const P = '/api/console/threads';

/** A service of its own (the budget is per instance), with a repository project for reviews. */
async function serviceWith(env: Record<string, string>): Promise<{ service: TestService; close: () => Promise<void> }> {
  const repo = gitRepository();
  const fixture = fixtureWorld();
  const storage = createMemoryStorage();
  await storage.importWorld({ ...fixture, projects: [...fixture.projects, { name: 'repo-web', directory: null, repo, base: 'main' }] });
  const service = await startService(env, { storage });
  return { service, close: async () => { await service.close(); rmSync(repo, { recursive: true, force: true }); } };
}

/** A new thread of the user's whose first turn holds until cancelled; `project` makes it a worktree thread. */
async function heldThread(service: TestService, headers = ALICE, project: string | null = null): Promise<{ id: string; socket: LiveClient }> {
  const key = randomUUID();
  const socket = (await connectLive(service.port, { thread: key, after: '0' }, { authorization: headers.authorization! })) as LiveClient;
  const first = await service.ask({ method: 'POST', path: `${P}/${key}/directives`, headers, body: JSON.stringify({ text: 'hold [wait]', model: 'claude:opus', project }) });
  assert.equal(first.status, 202, first.text);
  await socket.until((events) => events.some((event) => event.type === 'run_started'));
  return { id: first.json().thread_id as string, socket };
}

const queue = (service: TestService, threadId: string, text: string, headers = ALICE) =>
  service.ask({ method: 'POST', path: `${P}/${threadId}/directives`, headers, body: JSON.stringify({ text, when_busy: 'queue' }) });
const edit = (service: TestService, threadId: string, item: string, text: string, headers = ALICE) =>
  service.ask({ method: 'PATCH', path: `${P}/${threadId}/queue/${item}`, headers, body: JSON.stringify({ text }) });

describe('queue edits and reviews spend the directives budget', () => {
  let opened: Awaited<ReturnType<typeof serviceWith>>;
  let service: TestService;
  const sockets: LiveClient[] = [];
  before(async () => {
    opened = await serviceWith({ DIRECTIVES_PER_MINUTE: '4' });
    service = opened.service;
  });
  after(async () => {
    for (const socket of sockets) socket.close();
    await opened.close();
  });

  it('an edit past the budget is 429 too_many_directives with Retry-After, and changes nothing', async () => {
    // 1: the held turn, 2: the queued item, 3 and 4: two edits; the fifth write of the minute is refused.
    const t = await heldThread(service);
    sockets.push(t.socket);
    const queued = await queue(service, t.id, 'first text');
    assert.equal(queued.status, 202, queued.text);
    const item = queued.json().queued.id as string;
    for (const text of ['second text', 'third text']) assert.equal((await edit(service, t.id, item, text)).status, 200);
    const refused = await edit(service, t.id, item, 'x'.repeat(100_000));
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.headers['content-type'], 'application/problem+json');
    assert.equal(refused.json().code, 'too_many_directives');
    assert.ok(Number(refused.headers['retry-after']) >= 1 && Number(refused.headers['retry-after']) <= 60);
    const now = (await service.ask({ path: `${P}/${t.id}/queue`, headers: ALICE })).json() as { text: string }[];
    assert.deepEqual(now.map((q) => q.text), ['third text'], 'the refused edit wrote nothing');
    // A directive is refused the same way: one budget.
    assert.equal((await queue(service, t.id, 'one more')).status, 429);
    // Another user's budget is their own.
    const bobs = await heldThread(service, BOB);
    sockets.push(bobs.socket);
  });

  it('a review past the budget is 429 too_many_directives, as the directive it sends would be', async () => {
    // Bob has spent 1 (his held turn above): a worktree thread's held turn makes 2, two queued reviews 3 and 4.
    const t = await heldThread(service, BOB, 'repo-web');
    sockets.push(t.socket);
    const row = (await service.ask({ path: `${P}/${t.id}`, headers: BOB })).json() as { worktree: { path: string } };
    write(row.worktree.path, 'src/app.js', 'changed\n');
    const review = () => service.ask({
      method: 'POST', path: `${P}/${t.id}/changes/review`, headers: BOB,
      body: JSON.stringify({ comments: [{ path: 'src/app.js', line: 1, text: 'Look here' }], when_busy: 'queue' }),
    });
    for (let i = 0; i < 2; i++) {
      const sent = await review();
      assert.equal(sent.status, 202, sent.text);
    }
    const refused = await review();
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json().code, 'too_many_directives');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    const waiting = (await service.ask({ path: `${P}/${t.id}/queue`, headers: BOB })).json() as unknown[];
    assert.equal(waiting.length, 2, 'the refused review queued nothing');
  });
});

describe("a thread's replay after many edits of a queued directive", () => {
  let opened: Awaited<ReturnType<typeof serviceWith>>;
  let service: TestService;
  before(async () => {
    opened = await serviceWith({ DIRECTIVES_PER_MINUTE: '100000' });
    service = opened.service;
  });
  after(() => opened.close());

  it('carries the latest text of the item once, not every past version', async () => {
    const t = await heldThread(service);
    const queued = await queue(service, t.id, 'original');
    assert.equal(queued.status, 202, queued.text);
    const item = queued.json().queued.id as string;
    const EDITS = 40;
    const SIZE = 50_000;
    for (let i = 0; i < EDITS; i++) {
      const res = await edit(service, t.id, item, `${i} `.padEnd(SIZE, 'x'));
      assert.equal(res.status, 200, res.text);
    }
    // The socket that watched saw each edit whole as it happened.
    const watched = await t.socket.until((events) => events.filter((event) => event.type === 'queued').length === EDITS + 1);
    assert.ok(watched.filter((event) => event.type === 'queued').slice(1).every((event) => typeof event.data.text === 'string'));
    t.socket.close();

    const replay = (await connectLive(service.port, { thread: t.id, after: '0' }, { authorization: ALICE.authorization! })) as LiveClient;
    const events: WireEvent[] = await replay.until((got) => got.filter((event) => event.type === 'queued').length === EDITS + 1);
    replay.close();
    const queuedEvents = events.filter((event) => event.type === 'queued');
    const withText = queuedEvents.filter((event) => typeof event.data.text === 'string');
    assert.deepEqual(withText.map((event) => event.data.text), [`${EDITS - 1} `.padEnd(SIZE, 'x')], 'only the latest text is replayed');
    const last = queuedEvents.at(-1)!;
    // Each earlier one names the event that replaced it: the chain ends at the one with the text.
    for (const [i, event] of queuedEvents.slice(0, -1).entries()) {
      assert.deepEqual(event.data, { id: item, message_id: last.data.message_id, author: 'alice', position: 1, created_at: last.data.created_at, origin: null, superseded_by: queuedEvents[i + 1]!.seq });
    }
    const bytes = events.reduce((sum, event) => sum + Buffer.byteLength(JSON.stringify(event)), 0);
    // Before, this replay held every version: EDITS x SIZE bytes (2 MB here).
    assert.ok(bytes < 2 * SIZE + EDITS * 400, `the replay is ${bytes} bytes`);
    await service.ask({ method: 'POST', path: `${P}/${t.id}/cancel`, headers: ALICE });
  });
});
