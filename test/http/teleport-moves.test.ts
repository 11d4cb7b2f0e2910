// Teleport moves the conversation and summon hands over what the agent knows (issue 14), over HTTP on
// memory, embedded PGlite and (with TEST_DATABASE_URL) PostgreSQL storage, with the bundled demo agent:
// console → chat → console, the landing thread showing the source's history up to the cut, the source
// refusing to move or continue a conversation that left, the agent continuing its own session after a
// teleport, summon's first turn seeing the history, and a channel that fails twice delivering once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { memoryChannelPort } from '../../adapters/memory/channel-port.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { ChannelPort } from '../../ports/channel-port.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import type { Storage } from '../../ports/storage.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { serviceKeepingSessions } from '../support/kept-sessions.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
const asleep = (n: number) => (events: readonly WireEvent[]) => events.filter((e) => e.type === 'reflex_asleep').length >= n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * Asks again while the answer is 409 `turn_running`: `reflex_asleep` is a turn's last event, and its turn
 * is released just after it is stored, so a request sent on seeing it may find the turn still held.
 */
async function whenFree<T extends { status: number; json(): any }>(ask: () => Promise<T>): Promise<T> {
  for (let waited = 0; ; waited += 20) {
    const res = await ask();
    if (res.status !== 409 || res.json().code !== 'turn_running' || waited >= 5_000) return res;
    await sleep(20);
  }
}

/** What the demo agent streamed in these events. */
const saidIn = (events: readonly WireEvent[]) => events.filter((e) => e.type === 'message' && typeof e.data.delta === 'string').map((e) => e.data.delta).join('');

/** Alice's requests to a service: POSTs asked again while a just-ended turn is still held, and live sockets from the start. */
function aliceOn(service: TestService) {
  const post = (path: string, body: unknown) => whenFree(() => service.ask({ method: 'POST', path, headers: ALICE, body: JSON.stringify(body) }));
  const live = async (thread: string) => (await connectLive(service.port, { thread, after: '0' })) as LiveClient;
  /** Teleports a console thread to #general and from there to a new console thread with `prompt`; answers the landing run's events. */
  const thereAndBack = async (thread: string, prompt: string) => {
    const chat = (await post(`${P}/${thread}/teleport`, { destination: { channel: 'team-chat', id: 'general' } })).json().thread_id as string;
    const back = await post(`${P}/${chat}/teleport`, { destination: { channel: 'console', id: 'new' }, prompt });
    assert.equal(back.status, 202, back.text);
    const landed = await live(back.json().thread_id);
    const events = await landed.until(asleep(1));
    landed.close();
    return { home: back.json().thread_id as string, events };
  };
  return { post, live, thereAndBack };
}

const WITH_APP = { thread: testId(20_000), message: testId(20_001), conversation: testId(20_002) };
const EMPTY_FORK = { thread: testId(22_000), conversation: testId(22_002) };
const SHARED = { thread: testId(21_000), message: testId(21_001), conversation: testId(21_002) };

const kinds = storageKinds('console_moves');

/** The world's channels, over a platform that refuses the first `failures` posts of each delivery; what it took, by delivery id. */
function flakyChannels(storage: Storage, failures: number) {
  const inner = memoryChannelPort(storage.catalog);
  const attempts = new Map<string, number>();
  const posted: Delivery[] = [];
  const port: ChannelPort = {
    channels: () => inner.channels(),
    places: (channel, inside) => inner.places(channel, inside),
    listen: (handlers) => inner.listen(handlers),
    async deliver(delivery) {
      const n = (attempts.get(delivery.id) ?? 0) + 1;
      attempts.set(delivery.id, n);
      if (n <= failures) throw new Error(`the platform is down (attempt ${n})`);
      // Idempotent by delivery id, as the port asks: a repeat posts nothing more.
      if (!posted.some((p) => p.id === delivery.id)) posted.push(delivery);
    },
  };
  return { port, attempts, posted };
}

for (const kind of kinds) {
  describe(`teleport moves the conversation, summon hands over what it knows: ${kind.name}`, () => {
    let service: TestService;
    let opened: OpenedStorage;
    let channels: ReturnType<typeof flakyChannels>;
    before(async () => {
      opened = await kind.open();
      const world = fixtureWorld();
      // An idle thread of alice's whose ledger references her artifact: what a teleport carries along.
      await opened.storage.importWorld({
        ...world,
        threads: [...world.threads, {
          id: WITH_APP.thread, key: null, channel: 'console', owner: 'alice', members: [], project: 'acme-web', title: 'With an app', fork_of: null, fork_cutoff: null,
          messages: [{ id: WITH_APP.message, role: 'assistant', text: 'Here is the forecast.', artifact_id: F.artifact }],
          conversations: [{ id: WITH_APP.conversation, agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false, pending: [], runs: [] }],
        }, {
          // A fork of it with no message of its own: what it shows is all inherited.
          id: EMPTY_FORK.thread, key: null, channel: 'console', owner: 'alice', members: [], project: 'acme-web', title: 'Empty fork', fork_of: WITH_APP.thread, fork_cutoff: WITH_APP.message,
          messages: [],
          conversations: [{ id: EMPTY_FORK.conversation, agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false, pending: [], runs: [] }],
        }, {
          // Alice's chat thread that bob is a member of.
          id: SHARED.thread, key: null, channel: 'team-chat', owner: 'alice', members: ['bob'], project: 'acme-web', title: 'Shared', fork_of: null, fork_cutoff: null,
          messages: [{ id: SHARED.message, role: 'user', text: 'Alice asked this', artifact_id: null }],
          conversations: [{ id: SHARED.conversation, agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: { channel: 'team-chat', id: 'general/shared' }, turn_running: false, pending: [], runs: [] }],
        }],
      });
      channels = flakyChannels(opened.storage, 2);
      service = await startService({}, { storage: opened.storage, channels: channels.port, deliveryTiming: { intervalMs: 100, retryMs: 50, maxRetryMs: 200 } });
      await service.knowOffers();
    });
    after(async () => {
      await service.close();
      await opened.close();
    });

    const get = (path: string) => service.ask({ path, headers: ALICE });
    const post = (path: string, body: unknown) => aliceOn(service).post(path, body);
    const live = (thread: string) => aliceOn(service).live(thread);
    const texts = async (thread: string): Promise<string[]> => (await get(`${P}/${thread}/messages?limit=200`)).json().items.map((m: { role: string; text: string }) => `${m.role}: ${m.text}`).reverse();
    /** The demo agent's line: which turn of its session this is. */
    const turnOf = (events: readonly WireEvent[]) => {
      const said = events.filter((e) => e.type === 'message' && typeof e.data.delta === 'string').map((e) => e.data.delta).join('');
      return Number(/turn=(\d+)/.exec(said)?.[1]);
    };

    /** A new console thread with two turns of the demo agent, idle again. */
    async function consoleThread(): Promise<string> {
      const key = randomUUID();
      const socket = await live(key);
      const first = await post(`${P}/${key}/directives`, { text: 'First step', model: 'claude:opus', project: 'acme-web' });
      assert.equal(first.status, 202, first.text);
      const thread = first.json().thread_id as string;
      await socket.until(asleep(1));
      assert.equal((await post(`${P}/${thread}/directives`, { text: 'Second step' })).status, 202);
      const events = await socket.until(asleep(2));
      socket.close();
      assert.equal(turnOf(events.slice(events.findIndex((e) => e.type === 'reflex_asleep') + 1)), 2, 'one session, two turns');
      return thread;
    }

    it('console → chat → console: the history moves, the source points at the destination, the agent continues its session', async () => {
      const source = await consoleThread();
      const before = await texts(source);

      const toChat = await post(`${P}/${source}/teleport`, { destination: { channel: 'team-chat', id: 'general' } });
      assert.equal(toChat.status, 202, toChat.text);
      const chat = toChat.json().thread_id as string;
      const chatThread = (await get(`${P}/${chat}`)).json();
      assert.equal(chatThread.channel, 'team-chat');
      assert.equal(chatThread.fork_of, source, 'the landing thread is a fork of the source');
      // The landing thread's ledger: the source's history up to the cut, then its own line; not the source's move line.
      const landed = await texts(chat);
      assert.deepEqual(landed.slice(0, before.length), before);
      assert.match(landed.at(-1)!, /^system: Moved here from console thread/);
      assert.equal(landed.length, before.length + 1);
      const sourceNow = await texts(source);
      assert.match(sourceNow.at(-1)!, new RegExp(`^system: Moved to a new thread in #general on Team chat \\(thread ${chat}\\)`));

      // The source records where the conversation went, and refuses to move or continue it.
      const [moved] = (await get(`${P}/${source}/conversations`)).json();
      assert.equal(moved.moved_to.thread_id, chat);
      assert.match(moved.address.id, /^general\//);
      assert.deepEqual(moved.address, moved.moved_to.address);
      const again = await post(`${P}/${source}/teleport`, { destination: { channel: 'team-chat', id: 'general' } });
      assert.equal(again.status, 409);
      assert.equal(again.json().code, 'conversation_moved');
      assert.match(again.json().detail, new RegExp(`thread ${chat}`));
      const directed = await post(`${P}/${source}/directives`, { text: 'Still here?' });
      assert.equal(directed.status, 409);
      assert.equal(directed.json().code, 'conversation_moved');
      assert.match(directed.json().detail, new RegExp(`moved to team-chat .*thread ${chat}`));
      const summoned = await post(`${P}/${source}/summon`, { route: 'codex', brief: 'x' });
      assert.equal(summoned.status, 409);
      const ops = (await get(`${P}/${source}/operations`)).json();
      assert.match(ops.teleport.reason, /moved to team-chat/);
      assert.equal(ops.summon.reason, ops.teleport.reason);
      assert.equal((await get(`${P}/${chat}/operations`)).json().teleport.reason, null, 'the destination offers the move');

      // Back to the console from where it is: the agent continues the same session (its third turn).
      const socket = await live(source);
      const back = await post(`${P}/${chat}/teleport`, { destination: { channel: 'console', id: 'new' }, prompt: 'Third step' });
      assert.equal(back.status, 202, back.text);
      const home = back.json().thread_id as string;
      const landedSocket = await live(home);
      const events = await landedSocket.until(asleep(1));
      landedSocket.close();
      socket.close();
      assert.equal(turnOf(events), 3, `the agent's own session continued: ${saidIn(events)}`);
      assert.ok(!(await texts(home)).some((t) => t.startsWith('system: The agent could not continue')), 'no brief was needed');
      const homeLedger = await texts(home);
      assert.deepEqual(homeLedger.slice(0, before.length), before, 'forks of forks chain: the first history is still there');
      assert.ok(homeLedger.includes('user: Third step'));
      // The console thread continues it too: a fourth turn of the same session.
      const next = await live(home);
      assert.equal((await post(`${P}/${home}/directives`, { text: 'Fourth step' })).status, 202);
      const fourth = await next.until(asleep(2));
      next.close();
      assert.equal(turnOf(fourth.slice(fourth.findIndex((e) => e.type === 'reflex_asleep') + 1)), 4);
    });

    it("a moved conversation whose agent cannot continue its session starts there from a brief of the history, and the ledger says so", async () => {
      const source = await consoleThread();
      // The agent no longer knows the session (its process restarted, say) and the demo agent offers no session/load.
      const [conversation] = (await get(`${P}/${source}/conversations`)).json();
      await opened.storage.writer.setSession(conversation.id, 'a-session-the-agent-forgot');
      const { home, events } = await aliceOn(service).thereAndBack(source, 'Carry on');
      const said = saidIn(events);
      assert.equal(turnOf(events), 1, 'a new session');
      assert.match(said, /\[demo\] history=\d+ latest="\[system\] Moved here from team-chat/, said);
      assert.match(said, /Working on: Carry on/);
      const ledger = await texts(home);
      assert.ok(ledger.includes("system: The agent could not continue a session that knows this thread: it starts a new one from a brief of the thread's recent history."));
      assert.ok(ledger.includes('user: Second step'), 'the history moved along');
    });

    it("artifact references keep their rules at the destination: an inherited one loads for its owner, one past the cut is unavailable", async () => {
      const res = await post(`${P}/${WITH_APP.thread}/teleport`, { destination: { channel: 'team-chat', id: 'general' } });
      assert.equal(res.status, 202, res.text);
      const landing = res.json().thread_id as string;
      const inherited = await get(`${P}/${landing}/artifacts/${WITH_APP.message}`);
      // Visible and owned: the read goes on to the provider (none in this test: 502), never 404.
      assert.equal(inherited.status, 502, inherited.text);
      const [moveLine] = (await get(`${P}/${WITH_APP.thread}/messages?limit=1`)).json().items;
      const past = await get(`${P}/${landing}/artifacts/${moveLine.id}`);
      assert.equal(past.status, 404);
      assert.equal(past.json().detail, 'Artifact reference unavailable');
      const bob = await service.ask({ path: `${P}/${landing}/artifacts/${WITH_APP.message}`, headers: { authorization: 'Bearer token-bob' } });
      assert.equal(bob.status, 404, 'the landing thread is the mover\'s; bob cannot read it');
    });

    it('a fork with no message of its own moves with what it inherits, and nothing of its parent after its cutoff', async () => {
      const res = await post(`${P}/${EMPTY_FORK.thread}/teleport`, { destination: { channel: 'team-chat', id: 'general' } });
      assert.equal(res.status, 202, res.text);
      const landed = await texts(res.json().thread_id);
      assert.deepEqual(landed.slice(0, -1), ['assistant: Here is the forecast.']);
      assert.match(landed.at(-1)!, /^system: Moved here from console thread "Empty fork"/);
      // The fork's parent moved on meanwhile (an earlier case teleported it): its later lines stay out.
      assert.ok(!landed.some((t) => t.startsWith('system: Moved to')));
    });

    it("a member who moves the owner's conversation lands it in the owner's thread, and follows it as a member; the first message there is the owner's", async () => {
      const BOB = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
      const asBob = (path: string, body?: unknown) => service.ask({ method: body === undefined ? 'GET' : 'POST', path, headers: BOB, body: body === undefined ? undefined : JSON.stringify(body) });
      const prompted = await asBob(`${P}/${SHARED.thread}/teleport`, { destination: { channel: 'console', id: 'new' }, prompt: 'Mine now' });
      assert.equal(prompted.status, 403, prompted.text);
      assert.equal(prompted.json().code, 'not_thread_owner');
      const res = await asBob(`${P}/${SHARED.thread}/teleport`, { destination: { channel: 'console', id: 'new' } });
      assert.equal(res.status, 202, res.text);
      const landing = res.json().thread_id as string;
      assert.equal((await get(`${P}/${landing}`)).status, 200, "alice reads it (her directive below shows it is hers: directives are the owner's)");
      assert.equal((await asBob(`${P}/${landing}`)).status, 200, 'bob follows it as a member');
      assert.ok((await asBob(`${P}/${landing}/messages`)).json().items.some((m: { text: string }) => m.text === 'Alice asked this'));
      const bobDirects = await asBob(`${P}/${landing}/directives`, { text: 'Do as I say' });
      assert.equal(bobDirects.status, 403, 'directives stay the owner\'s');
      const aliceDirects = await post(`${P}/${landing}/directives`, { text: 'Carry on' });
      assert.equal(aliceDirects.status, 202, aliceDirects.text);
    });

    it('new_thread: false lands in a chat thread itself, and is 422 for a room', async () => {
      const source = await consoleThread();
      const room = await post(`${P}/${source}/teleport`, { destination: { channel: 'team-chat', id: 'general' }, new_thread: false });
      assert.equal(room.status, 422, room.text);
      assert.equal((await get(`${P}/${source}/conversations`)).json()[0].moved_to, null, 'nothing moved');
      const res = await post(`${P}/${source}/teleport`, { destination: { channel: 'team-chat', id: 'general/t1' }, new_thread: false });
      assert.equal(res.status, 202, res.text);
      const [conversation] = (await get(`${P}/${res.json().thread_id}/conversations`)).json();
      assert.deepEqual(conversation.address, { channel: 'team-chat', id: 'general/t1' });
    });

    it("summon's first turn starts from the brief and the thread's recent history", async () => {
      const source = await consoleThread();
      const socket = await live(source);
      const res = await post(`${P}/${source}/summon`, { route: 'codex', brief: 'Review what Claude did', hint: 'second opinion' });
      assert.equal(res.status, 202, res.text);
      const events = await socket.until(asleep(3));
      socket.close();
      const said = saidIn(events.slice(events.findLastIndex((e) => e.type === 'run_started')));
      assert.match(said, /Working on: Review what Claude did/);
      assert.match(said, /\[demo\] history=\d+ latest="\[system\] Handed over to codex: second opinion"/);
      assert.match(said, /turn=1/, 'a new agent, a new session');
      const ledger = await texts(source);
      assert.ok(ledger.some((t) => t.startsWith('system: The agent could not continue')), 'the ledger says it started from a brief');
    });

    it('a channel that fails twice, then takes the delivery, receives it exactly once', async () => {
      const source = await consoleThread();
      const res = await post(`${P}/${source}/teleport`, { destination: { channel: 'team-chat', id: 'general' } });
      assert.equal(res.status, 202, res.text);
      const [conversation] = (await get(`${P}/${res.json().thread_id}/conversations`)).json();
      const id = conversation.address.id.slice('general/'.length);
      for (let waited = 0; !channels.posted.some((d) => d.id === id) && waited < 10_000; waited += 50) await sleep(50);
      // Well past the retry period: nothing is asked again once the channel took it.
      await sleep(500);
      assert.equal(channels.attempts.get(id), 3, 'refused twice, taken on the third');
      const posted = channels.posted.filter((d) => d.id === id);
      assert.equal(posted.length, 1);
      assert.equal(posted[0]!.place, 'general');
      assert.deepEqual(posted[0]!.address, conversation.address);
      assert.match(posted[0]!.text, /^Alice moved the conversation here from Console\.\nLast exchange:\nAsked: Second step\n/, 'a notice for people: the platform heads it with the title');
      assert.doesNotMatch(posted[0]!.text, /\[user\]|Context:/, "never the agent's brief");
      assert.deepEqual(await opened.storage.outbox.claimDue('test', 1_000, 10), [], 'nothing is left in the outbox');
    });
  });
}

describe('a moved conversation whose agent process restarted resumes its session (ACP session/resume)', () => {
  let service: TestService;
  before(async () => {
    // The demo agent keeps its sessions in a directory of the test's and offers session/resume, as Claude Code does.
    service = await serviceKeepingSessions();
  });
  after(() => service.close());

  const post = (path: string, body: unknown) => aliceOn(service).post(path, body);
  const live = (thread: string) => aliceOn(service).live(thread);
  const said = saidIn;

  it('kill -9 the agent between the turns: the teleported conversation continues the same session, with no brief', async () => {
    const key = randomUUID();
    const socket = await live(key);
    const thread = (await post(`${P}/${key}/directives`, { text: 'First step', model: 'claude:opus', project: 'acme-web' })).json().thread_id as string;
    const first = said(await socket.until(asleep(1)));
    socket.close();
    assert.match(first, /turn=1/);
    const pid = Number(/pid=(\d+)/.exec(first)?.[1]);
    process.kill(pid, 'SIGKILL');
    for (let waited = 0; waited < 5_000; waited += 50) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await sleep(50);
    }
    const { events } = await aliceOn(service).thereAndBack(thread, 'Second step');
    const text = said(events);
    assert.match(text, /turn=2/, `the session was resumed in a new process: ${text}`);
    assert.notEqual(Number(/pid=(\d+)/.exec(text)?.[1]), pid, 'a new agent process');
    assert.doesNotMatch(text, /\[demo\] history=/, 'a resumed session needs no brief');
  });
});

for (const kind of kinds) {
  describe(`a delivery outlives the instance that stored it: ${kind.name}`, () => {
    it('the channel is down while the move is written and the instance goes away; the next instance over the same data delivers it, once', async () => {
      const opened = await kind.open();
      try {
        const world = fixtureWorld();
        await opened.storage.importWorld({
          ...world,
          threads: [...world.threads, {
            id: WITH_APP.thread, key: null, channel: 'console', owner: 'alice', members: [], project: 'acme-web', title: 'Going away', fork_of: null, fork_cutoff: null,
            messages: [{ id: WITH_APP.message, role: 'user', text: 'Take this along', artifact_id: null }],
            conversations: [{ id: WITH_APP.conversation, agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false, pending: [], runs: [] }],
          }],
        });
        const timing = { deliveryTiming: { intervalMs: 50, retryMs: 20, maxRetryMs: 50 } };
        const down = flakyChannels(opened.storage, Number.POSITIVE_INFINITY);
        const first = await startService({}, { storage: opened.storage, channels: down.port, ...timing });
        await first.knowOffers();
        const res = await aliceOn(first).post(`${P}/${WITH_APP.thread}/teleport`, { destination: { channel: 'team-chat', id: 'general' } });
        assert.equal(res.status, 202, res.text);
        for (let waited = 0; down.attempts.size === 0 && waited < 5_000; waited += 20) await sleep(20);
        assert.equal(down.posted.length, 0);
        await first.close();

        const storage = await opened.reopen();
        const up = flakyChannels(storage, 0);
        const second = await startService({}, { storage, channels: up.port, ...timing });
        try {
          for (let waited = 0; up.posted.length === 0 && waited < 10_000; waited += 20) await sleep(20);
          await sleep(200); // a window in which no second delivery must come
          assert.equal(up.posted.length, 1, 'delivered once by the instance that came next');
          assert.match(up.posted[0]!.text, /Asked: Take this along/);
          const [conversation] = (await second.ask({ path: `${P}/${res.json().thread_id}/conversations`, headers: ALICE })).json();
          assert.deepEqual(up.posted[0]!.address, conversation.address);
        } finally {
          await second.close();
        }
      } finally {
        await opened.close();
      }
    });
  });
}
