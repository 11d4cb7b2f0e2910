// Issue 39, "Steer" (contract section 11): a directive sent with `when_busy: "steer"` goes into the running turn when
// the conversation's agent advertises steering (the demo agent's claude profile does, its codex profile does not), and is
// queued where it does not go: an agent without steering, a turn waiting on an approval, a turn that ended meanwhile.
// Over HTTP with the demo agent (`[await-steer]` holds a turn until a steer arrives and says each steered text in its
// reply; `[steer-late]` answers a steer `promptRequired`, as an agent whose turn just ended), on every storage.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { WireEvent } from '../../domain/events.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { idleThread } from '../support/http.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';

const ofType = (events: readonly WireEvent[], type: string) => events.filter((e) => e.type === type);
/** What the agent said in a run, its deltas joined. */
const said = (events: readonly WireEvent[], run: string) =>
  events.filter((e) => e.type === 'message' && e.data.run_id === run && typeof e.data.delta === 'string').map((e) => e.data.delta).join('');

for (const kind of storageKinds('steer')) {
  describe(`steering a running turn: ${kind.name}`, () => {
    let opened: OpenedStorage;
    let service: TestService;
    const sockets: LiveClient[] = [];
    before(async () => {
      opened = await kind.open();
      await opened.storage.importWorld(fixtureWorld());
      service = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage: opened.storage });
    });
    after(async () => {
      for (const socket of sockets) socket.close();
      await service.close();
      await opened.close();
    });

    const send = (ref: string, body: Record<string, unknown>) =>
      service.ask({ method: 'POST', path: `${P}/${ref}/directives`, headers: ALICE, body: JSON.stringify(body) });
    /** A new thread of alice's on `model` whose first turn says `text`, once the agent is at work on it, with its socket. */
    const started = async (text: string, model: string, atWork: (events: readonly WireEvent[]) => boolean) => {
      const key = randomUUID();
      const socket = (await connectLive(service.port, { thread: key, after: '0' }, { authorization: ALICE.authorization! })) as LiveClient;
      sockets.push(socket);
      const first = await send(key, { text, model });
      assert.equal(first.status, 202, first.text);
      const run = first.json().run_id as string;
      await socket.until((e) => atWork(e) || said(e, run).includes('Working on'));
      return { id: first.json().thread_id as string, run, socket };
    };
    /** The prompt each run of the thread was given, in the order the runs started. */
    const prompts = async (threadId: string, runIds: readonly string[]) => {
      const texts = [];
      for (const run of runIds) {
        const page = (await service.ask({ path: `${P}/${threadId}/runs/${run}/messages`, headers: ALICE })).json();
        // Newest first, as pages are: read oldest first.
        texts.push((page.items as { role: string; content: string }[]).filter((m) => m.role === 'user').map((m) => m.content).reverse());
      }
      return texts;
    };

    it('an agent that steers takes the text into the running turn: 202 steered, the ledger message and `steered` name the run, the reply says it, no second run', async () => {
      const t = await started('hold for a steer [await-steer]', 'claude:opus', () => false);
      const messageId = randomUUID();
      const steered = await send(t.id, { text: 'also mind the tests', when_busy: 'steer', message_id: messageId });
      assert.equal(steered.status, 202, steered.text);
      assert.deepEqual(steered.json(), { thread_id: t.id, key: steered.json().key, conversation_id: steered.json().conversation_id, run_id: t.run, steered: true });
      const events = await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 1);
      const [event] = ofType(events, 'steered');
      assert.equal(event?.data.run_id, t.run);
      assert.deepEqual([(event?.data.message as { role: string }).role, (event?.data.message as { text: string }).text], ['user', 'also mind the tests']);
      assert.match(said(events, t.run), /Steered: also mind the tests\n/);
      assert.deepEqual(ofType(events, 'run_finished').map((e) => e.data.run_id), [t.run]);
      assert.equal(ofType(events, 'run_started').length, 1, 'the steer started no run of its own');
      // The run's model messages hold both the prompt and the steered text; the ledger holds the steered message.
      assert.deepEqual(await prompts(t.id, [t.run]), [['hold for a steer [await-steer]', 'also mind the tests']]);
      const ledger = (await service.ask({ path: `${P}/${t.id}/messages`, headers: ALICE })).json().items as { id: string; role: string; text: string }[];
      assert.ok(ledger.some((m) => m.id === (event?.data.message as { id: string }).id && m.text === 'also mind the tests'));
      // A retry answers the same, and sends nothing again.
      const again = await send(t.id, { text: 'also mind the tests', when_busy: 'steer', message_id: messageId });
      assert.deepEqual([again.status, again.json()], [202, steered.json()]);
      assert.equal(ofType(t.socket.events, 'steered').length, 1);
      assert.equal(ofType(t.socket.events, 'run_started').length, 1);
    });

    it('an agent that does not steer: the text is queued (steered false) and runs next', async () => {
      const t = await started('hold [wait]', 'codex', () => false);
      const answer = await send(t.id, { text: 'then this', when_busy: 'steer' });
      assert.equal(answer.status, 202, answer.text);
      assert.deepEqual([answer.json().steered, answer.json().queued?.position, 'run_id' in answer.json()], [false, 1, false]);
      assert.equal((await service.ask({ method: 'POST', path: `${P}/${t.id}/cancel`, headers: ALICE })).status, 202);
      const events = await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 2);
      const runs = ofType(events, 'run_started').map((e) => e.data.run_id as string);
      assert.deepEqual(await prompts(t.id, runs), [['hold [wait]'], ['then this']]);
      assert.equal(ofType(events, 'steered').length, 0);
    });

    it('a turn waiting on an approval: the text is queued, never steered, and runs after the turn', async () => {
      const t = await started('ask first [approval]', 'claude:opus', (e) => ofType(e, 'approval_requested').length === 1);
      await t.socket.until((e) => ofType(e, 'approval_requested').length === 1);
      const answer = await send(t.id, { text: 'after the approval', when_busy: 'steer' });
      assert.equal(answer.status, 202, answer.text);
      assert.deepEqual([answer.json().steered, answer.json().queued?.position], [false, 1]);
      const pending = (await service.ask({ path: `${P}/${t.id}/pending`, headers: ALICE })).json() as { id: string }[];
      const answered = await service.ask({ method: 'POST', path: `${P}/${t.id}/responses`, headers: ALICE, body: JSON.stringify({ responses: [{ id: pending[0]!.id, option: 'reject' }] }) });
      assert.equal(answered.status, 202, answered.text);
      const events = await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 2);
      const runs = ofType(events, 'run_started').map((e) => e.data.run_id as string);
      assert.deepEqual(await prompts(t.id, runs), [['ask first [approval]'], ['after the approval']]);
      assert.doesNotMatch(said(events, t.run), /Steered:/);
      assert.equal(ofType(events, 'steered').length, 0);
    });

    it('a turn that ended meanwhile (the agent answers promptRequired): the text runs next, once, as queued', async () => {
      const t = await started('about to end [steer-late]', 'claude:opus', () => false);
      const answer = await send(t.id, { text: 'too late to steer', when_busy: 'steer' });
      assert.equal(answer.status, 202, answer.text);
      assert.equal(answer.json().steered, false);
      const events = await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 2);
      const runs = ofType(events, 'run_started').map((e) => e.data.run_id as string);
      assert.deepEqual(await prompts(t.id, runs), [['about to end [steer-late]'], ['too late to steer']]);
      assert.equal(ofType(events, 'steered').length, 0);
      assert.doesNotMatch(said(events, t.run), /Steered:/);
    });

    it('a free thread: steer runs the directive at once, steered false', async () => {
      const t = await started('quick', 'claude:opus', () => false);
      await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 1);
      // The turn's lease is let go just after its last event: wait until the thread reads idle.
      await idleThread(service.port, t.id, ALICE);
      const answer = await send(t.id, { text: 'next', when_busy: 'steer' });
      assert.equal(answer.status, 202, answer.text);
      assert.equal(answer.json().steered, false);
      assert.equal(typeof answer.json().run_id, 'string');
      await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 2);
    });

    it("steers racing the turn's own end: each is 202, and each text is either steered into a run that says it or run once as a turn of its own", async () => {
      // `[slow]`: the agent waits 300 ms after each update. Two steers at each update it sends, until it has begun to say
      // what it took (it takes no more from then on) or its turn ended: the last ones land as the turn ends.
      const t = await started('race [slow]', 'claude:opus', () => false);
      const answers: { text: string; status: number; body: { steered?: boolean; run_id?: string; queued?: unknown } }[] = [];
      const steer = async (text: string) => {
        const res = await send(t.id, { text, when_busy: 'steer' });
        answers.push({ text, status: res.status, body: res.json() });
      };
      const agentSaid = (events: readonly WireEvent[]) => events.filter((e) => e.type !== 'steered' && e.type !== 'queued').length;
      for (let seen = 0, i = 0; i < 40; i++) {
        const events = await t.socket.until((e) => agentSaid(e) > seen);
        seen = agentSaid(events);
        await Promise.all([steer(`steer a${i}`), steer(`steer b${i}`)]);
        if (said(events, t.run).includes('Steered:') || events.some((e) => e.type === 'run_finished')) break;
      }
      assert.deepEqual(answers.filter((a) => a.status !== 202).map((a) => [a.text, a.status, a.body]), [], 'every steer is 202');
      const unsteered = answers.filter((a) => a.body.steered === false);
      const events = await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 1 + unsteered.length, 30_000);
      const runs = ofType(events, 'run_started').map((e) => e.data.run_id as string);
      // Each unsteered text is the prompt of exactly one run, after the first.
      const runPrompts = (await prompts(t.id, runs)).map((texts) => texts[0]);
      assert.deepEqual([...runPrompts.slice(1)].sort(), unsteered.map((a) => a.text).sort());
      // Each steered one has its `steered` event naming the run that said it, and was never run on its own.
      for (const answer of answers.filter((a) => a.body.steered === true)) {
        const event = ofType(events, 'steered').find((e) => (e.data.message as { text: string }).text === answer.text);
        assert.equal(event?.data.run_id, answer.body.run_id, answer.text);
        assert.ok(said(events, answer.body.run_id!).includes(`Steered: ${answer.text}\n`), `${answer.text} is said by its run`);
      }
      assert.equal(ofType(events, 'steered').length, answers.length - unsteered.length);
    });

    it('GET /permissions says which agents steer', async () => {
      const postures = (await service.ask({ path: '/api/console/permissions', headers: ALICE })).json() as { agent: string; steering: boolean }[];
      assert.deepEqual(Object.fromEntries(postures.map((p) => [p.agent, p.steering])), { claude: true, codex: false });
    });
  });
}

// A turn may run on another instance: the steer reaches the instance holding it over the bus, and is answered.
describe('steering a turn that runs on another instance (two instances on one storage and one bus)', () => {
  let a: TestService;
  let b: TestService;
  const sockets: LiveClient[] = [];
  before(async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const bus = createMemoryEventBus();
    a = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage, bus });
    b = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage, bus });
  });
  after(async () => {
    for (const socket of sockets) socket.close();
    await a.close();
    await b.close();
  });
  const send = (service: TestService, ref: string, body: Record<string, unknown>) =>
    service.ask({ method: 'POST', path: `${P}/${ref}/directives`, headers: ALICE, body: JSON.stringify(body) });
  /** A thread whose first turn runs on A, once the agent is at work on it. */
  const onA = async (text: string, atWork: (events: readonly WireEvent[], run: string) => boolean) => {
    const key = randomUUID();
    const socket = (await connectLive(a.port, { thread: key, after: '0' }, { authorization: ALICE.authorization! })) as LiveClient;
    sockets.push(socket);
    const first = await send(a, key, { text, model: 'claude:opus' });
    assert.equal(first.status, 202, first.text);
    const run = first.json().run_id as string;
    await socket.until((e) => atWork(e, run));
    return { id: first.json().thread_id as string, run, socket };
  };

  it('a steer sent to B goes into the turn A runs', async () => {
    const t = await onA('hold for a steer [await-steer]', (e, run) => said(e, run).includes('Working on'));
    const answer = await send(b, t.id, { text: 'from the other instance', when_busy: 'steer' });
    assert.equal(answer.status, 202, answer.text);
    assert.deepEqual([answer.json().steered, answer.json().run_id], [true, t.run]);
    const events = await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 1);
    assert.match(said(events, t.run), /Steered: from the other instance\n/);
    assert.deepEqual(ofType(events, 'steered').map((e) => e.data.run_id), [t.run]);
    assert.equal(ofType(events, 'run_started').length, 1);
  });

  it('a steer sent to B while the turn on A waits on an approval is queued, and runs after it', async () => {
    const t = await onA('ask first [approval]', (e) => ofType(e, 'approval_requested').length === 1);
    const answer = await send(b, t.id, { text: 'queued across', when_busy: 'steer' });
    assert.equal(answer.status, 202, answer.text);
    assert.deepEqual([answer.json().steered, answer.json().queued?.position], [false, 1]);
    assert.equal((await b.ask({ method: 'POST', path: `${P}/${t.id}/cancel`, headers: ALICE })).status, 202);
    const events = await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 2);
    assert.equal(ofType(events, 'steered').length, 0);
    assert.equal(ofType(events, 'dequeued').length, 1);
  });
});
